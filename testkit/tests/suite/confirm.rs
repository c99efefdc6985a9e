//! confirm against a real DynamoDB Local: Standard Webhooks
//! signatures (rotation, tolerance, replay against another order), a body
//! bound to the order and the seats paid for, payment ids that pay for one
//! order only, refunds, and the clock guard.

use crate::common;

use common::*;
use serde_json::{json, Value};
use shared::auth::ConfirmSecrets;
use shared::domain::{Millis, OrderStatus, SeatState};
use testkit::assert_invariants;

fn seats_of(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn code(reply: &(u16, Value)) -> (u16, Option<&str>) {
    (reply.0, reply.1["error"].as_str())
}

async fn send(
    app: &shared::App,
    path_order: &str,
    body: &str,
    headers: &[(&'static str, String)],
) -> (u16, Value) {
    call(
        app,
        "POST",
        &format!("/orders/{path_order}/confirm"),
        &as_refs(headers),
        body,
    )
    .await
}

#[tokio::test]
async fn the_signature_is_checked_first_with_rotation_and_a_300_s_tolerance() {
    let mut app = fresh_app().await;
    let ev = event(&app, 2, 300).await;
    let o = order(&app, &ev).await;
    assert_eq!(claim(&app, &o, "A-1-1").await.0, 200);
    let body = confirm_body(&o.id, "pi_1", &seats_of(&["A-1-1"]));
    let now = shared::world::now().0 / 1000;

    // Missing, malformed and wrong signatures: 401, before anything else.
    let good = signed(&body);
    let without = |name: &str| {
        good.iter()
            .filter(|(k, _)| *k != name)
            .cloned()
            .collect::<Vec<_>>()
    };
    let with = |name: &'static str, value: &str| {
        let mut h = without(name);
        h.push((name, value.to_owned()));
        h
    };
    let bad_headers = [
        (vec![], "signature-header-missing"),
        (without("webhook-id"), "signature-header-missing"),
        (without("webhook-timestamp"), "signature-header-missing"),
        (without("webhook-signature"), "signature-header-missing"),
        (with("webhook-signature", "v1,AAAA"), "signature-malformed"),
        (with("webhook-signature", "garbage"), "signature-malformed"),
        (with("webhook-signature", "v2,AAAA"), "signature-malformed"),
        (
            with("webhook-timestamp", "not-a-number"),
            "signature-malformed",
        ),
        (with("webhook-id", "msg_other"), "signature-mismatch"),
        // Signed, but stale or from the future beyond the tolerance.
        (signed_at(&body, now - 330), "signature-timestamp"),
        (signed_at(&body, now + 330), "signature-timestamp"),
    ];
    for (headers, reason) in &bad_headers {
        let reply = send(&app, &o.id, &body, headers).await;
        assert_eq!(
            (code(&reply), common::reason(&reply.1)),
            ((401, Some("unauthorized")), *reason),
            "{headers:?}"
        );
    }
    // Signed over the body, then sent re-serialised: the bytes differ.
    let reserialised = serde_json::to_string_pretty(
        &serde_json::from_str::<Value>(&body).expect("the test's body is JSON"),
    )
    .expect("JSON prints");
    let reply = send(&app, &o.id, &reserialised, &signed(&body)).await;
    assert_eq!(
        common::reason(&reply.1),
        "signature-mismatch",
        "{}",
        reply.1
    );
    // Unsigned, even an unknown order or a bad body is 401.
    assert_eq!(
        call(&app, "POST", "/orders/ghost/confirm", &[], &body)
            .await
            .0,
        401
    );
    assert_eq!(
        call(
            &app,
            "POST",
            &format!("/orders/{}/confirm", o.id),
            &[],
            "not json"
        )
        .await
        .0,
        401
    );
    // Another key (a stolen request re-signed by someone else): 401.
    let foreign = ConfirmSecrets::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
    let forged = local::apps::webhook_headers(&foreign, &body).to_vec();
    assert_eq!(send(&app, &o.id, &body, &forged).await.0, 401);
    assert_eq!(
        stored_order(&app, &o.id).await.status,
        OrderStatus::Pending,
        "nothing changed"
    );

    // Rotation: with both keys configured, either one signs.
    app.config.confirm_secrets = Some(
        ConfirmSecrets::parse(&format!(
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw {}",
            local::apps::DEV_CONFIRM_SECRET
        ))
        .unwrap(),
    );
    // Within the tolerance (290 s old) and signed by the older key.
    let old_key_recent = local::apps::webhook_headers_at(&foreign, &body, now - 290).to_vec();
    let (status, reply) = send(&app, &o.id, &body, &old_key_recent).await;
    assert_eq!(status, 200, "{reply}");
    // The same request replayed: the same answer, nothing changes.
    assert_eq!(
        send(&app, &o.id, &body, &old_key_recent).await,
        (200, reply)
    );
}

#[tokio::test]
async fn the_body_is_bound_to_the_order_and_checked() {
    let app = fresh_app().await;
    let ev = event(&app, 12, 300).await;
    let a = order(&app, &ev).await;
    let b = order(&app, &ev).await;
    assert_eq!(claim(&app, &a, "A-1-1").await.0, 200);
    assert_eq!(claim(&app, &b, "A-1-2").await.0, 200);

    // A captured confirm for A, replayed against B: its body names A.
    let for_a = confirm_body(&a.id, "pi_a", &seats_of(&["A-1-1"]));
    let headers = signed(&for_a);
    assert_eq!(
        code(&send(&app, &b.id, &for_a, &headers).await),
        (400, Some("bad-request"))
    );
    assert_eq!(
        stored_order(&app, &b.id).await.status,
        OrderStatus::Pending,
        "nothing changes"
    );

    // Signed but malformed: 400, nothing written.
    let eleven: Vec<String> = (1..=11).map(|n| format!("A-1-{n}")).collect();
    for bad in [
        "not json".to_owned(),
        "{}".to_owned(),
        json!({"orderId": a.id, "seats": ["A-1-1"]}).to_string(),
        json!({"orderId": a.id, "paymentId": "pi#1", "seats": ["A-1-1"]}).to_string(),
        json!({"orderId": a.id, "paymentId": "pi_1", "seats": []}).to_string(),
        json!({"orderId": a.id, "paymentId": "pi_1"}).to_string(),
        json!({"orderId": a.id, "paymentId": "pi_1", "seats": ["A-1-1", "A-1-1"]}).to_string(),
        json!({"orderId": a.id, "paymentId": "pi_1", "seats": eleven}).to_string(),
        json!({"orderId": a.id, "paymentId": "pi_1", "seats": ["A-1-1"], "ga": [{"sectionId": "F", "quantity": -1}]}).to_string(),
        json!({"orderId": a.id, "paymentId": "pi_1", "seats": ["A#1"]}).to_string(),
        json!(["pi_1"]).to_string(),
    ] {
        let reply = send(&app, &a.id, &bad, &signed(&bad)).await;
        assert_eq!(code(&reply), (400, Some("bad-request")), "{bad}: {}", reply.1);
    }
    assert_eq!(stored_order(&app, &a.id).await.status, OrderStatus::Pending);

    // An order that does not exist: 404, whatever its id looks like.
    let ghost = shared::domain::OrderId::from_random(
        &shared::domain::EventId::parse(&ev).unwrap(),
        shared::world::random_u128().unwrap(),
    );
    for id in [ghost.as_str(), "no-such-order"] {
        assert_eq!(
            code(&confirm_seats(&app, id, "pi_g", &seats_of(&["A-1-1"])).await),
            (404, Some("order-not-found")),
            "{id}"
        );
    }
}

#[tokio::test]
async fn exactly_what_was_paid_is_sold_and_the_rest_released() {
    let app = fresh_app().await;
    let ev = event(&app, 12, 300).await;
    let o = order(&app, &ev).await;
    // Paid for one seat; nine more added before the webhook arrived.
    for n in 1..=10 {
        assert_eq!(claim(&app, &o, &format!("A-1-{n}")).await.0, 200);
    }
    let (status, reply) = confirm_seats(&app, &o.id, "pi_1", &seats_of(&["A-1-3"])).await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(
        reply,
        json!({"orderId": o.id, "status": "COMPLETED", "seats": ["A-1-3"], "ga": [], "paymentId": "pi_1"})
    );
    let now = seats(&app, &ev).await;
    let sold: Vec<_> = now
        .iter()
        .filter(|s| matches!(s.state, SeatState::Sold { .. }))
        .map(|s| s.spec.seat_id.to_string())
        .collect();
    assert_eq!(sold, ["A-1-3"]);
    assert_eq!(
        now.iter()
            .filter(|s| s.state == SeatState::Available)
            .count(),
        11,
        "the other nine are free at once"
    );
    let (_, view) = get_order(&app, &o).await;
    assert_eq!(
        (view["status"].as_str(), view["seats"].clone()),
        (Some("COMPLETED"), json!(["A-1-3"]))
    );
    // Replayed: the same reply.
    assert_eq!(
        confirm_seats(&app, &o.id, "pi_1", &seats_of(&["A-1-3"])).await,
        (200, reply)
    );
    assert_invariants(&app, &ev).await;
}

#[tokio::test]
async fn a_payment_id_pays_for_one_order_only() {
    let app = fresh_app().await;
    let ev = event(&app, 4, 300).await;
    let a = order(&app, &ev).await;
    let b = order(&app, &ev).await;
    assert_eq!(claim(&app, &a, "A-1-1").await.0, 200);
    assert_eq!(claim(&app, &b, "A-1-2").await.0, 200);
    assert_eq!(
        confirm_seats(&app, &a.id, "pi_shared", &seats_of(&["A-1-1"]))
            .await
            .0,
        200
    );
    let reply = confirm_seats(&app, &b.id, "pi_shared", &seats_of(&["A-1-2"])).await;
    assert_eq!(code(&reply), (409, Some("payment-reused")), "{}", reply.1);
    assert!(reply.1.get("refund").is_none());
    // Nothing changed for B.
    let stored = stored_order(&app, &b.id).await;
    assert_eq!(
        (stored.status, stored.payment_id),
        (OrderStatus::Pending, None)
    );
    assert!(seats(&app, &ev)
        .await
        .iter()
        .any(|s| s.spec.seat_id.as_str() == "A-1-2" && matches!(s.state, SeatState::Held { .. })));
    // B still pays with its own payment.
    assert_eq!(
        confirm_seats(&app, &b.id, "pi_b", &seats_of(&["A-1-2"]))
            .await
            .0,
        200
    );
    assert_invariants(&app, &ev).await;
}

#[tokio::test]
async fn a_second_payment_for_a_completed_order_is_recorded_for_refund() {
    let app = fresh_app().await;
    let ev = event(&app, 2, 300).await;
    let o = order(&app, &ev).await;
    assert_eq!(claim(&app, &o, "A-1-1").await.0, 200);
    assert_eq!(
        confirm_seats(&app, &o.id, "pi_1", &seats_of(&["A-1-1"]))
            .await
            .0,
        200
    );
    for _ in 0..2 {
        let reply = confirm_seats(&app, &o.id, "pi_2", &seats_of(&["A-1-1"])).await;
        assert_eq!(
            (code(&reply), reply.1["refund"].as_bool()),
            ((409, Some("already-completed")), Some(true)),
            "{}",
            reply.1
        );
    }
    let (_, view) = get_order(&app, &o).await;
    assert_eq!(view["paymentId"], "pi_1", "the completing payment stays");
    assert_eq!(view["refundPaymentIds"], json!(["pi_2"]), "recorded once");
}

#[tokio::test]
async fn a_live_order_paying_for_a_taken_seat_is_refund_due_and_lets_go() {
    let app = fresh_app().await;
    let ev = event(&app, 4, 300).await;
    let o = order(&app, &ev).await;
    let rival = order(&app, &ev).await;
    assert_eq!(claim(&app, &o, "A-1-1").await.0, 200);
    assert_eq!(claim(&app, &rival, "A-1-2").await.0, 200);
    // Paid for A-1-1 and A-1-2, but A-1-2 is the rival's.
    let reply = confirm_seats(&app, &o.id, "pi_1", &seats_of(&["A-1-1", "A-1-2"])).await;
    assert_eq!(
        (code(&reply), reply.1["refund"].as_bool()),
        ((409, Some("seats-unavailable")), Some(true)),
        "{}",
        reply.1
    );
    let stored = stored_order(&app, &o.id).await;
    assert_eq!(
        (
            stored.status,
            stored.payment_id.as_ref().map(|p| p.as_str())
        ),
        (OrderStatus::RefundDue, Some("pi_1"))
    );
    let now = seats(&app, &ev).await;
    assert_eq!(
        now[0].state,
        SeatState::Available,
        "what it held is released"
    );
    assert!(
        matches!(now[1].state, SeatState::Held { .. }),
        "the rival keeps its seat"
    );
    assert!(
        now.iter()
            .all(|s| !matches!(s.state, SeatState::Sold { .. })),
        "all or nothing"
    );
    // Again: the same answer. Another payment: the same answer, recorded.
    assert_eq!(
        code(&confirm_seats(&app, &o.id, "pi_1", &seats_of(&["A-1-1", "A-1-2"])).await),
        (409, Some("seats-unavailable"))
    );
    assert_eq!(
        code(&confirm_seats(&app, &o.id, "pi_9", &seats_of(&["A-1-1"])).await),
        (409, Some("seats-unavailable"))
    );
    let (_, view) = get_order(&app, &o).await;
    assert_eq!(
        (view["status"].as_str(), view["refundPaymentIds"].clone()),
        (Some("REFUND_DUE"), json!(["pi_9"]))
    );
    // A paid seat that does not exist takes the refund path too.
    let other = order(&app, &ev).await;
    assert_eq!(claim(&app, &other, "A-1-3").await.0, 200);
    let reply = confirm_seats(&app, &other.id, "pi_x", &seats_of(&["A-1-3", "Z-9-9"])).await;
    assert_eq!(
        (code(&reply), reply.1["refund"].as_bool()),
        ((409, Some("seats-unavailable")), Some(true)),
        "{}",
        reply.1
    );
    assert_invariants(&app, &ev).await;
}

#[tokio::test]
async fn a_live_order_paying_for_a_free_seat_it_does_not_hold_gets_it() {
    let app = fresh_app().await;
    let ev = event(&app, 3, 300).await;
    let o = order(&app, &ev).await;
    assert_eq!(claim(&app, &o, "A-1-1").await.0, 200);
    let (status, reply) = confirm_seats(&app, &o.id, "pi_1", &seats_of(&["A-1-2"])).await;
    assert_eq!(
        (status, reply["seats"].clone()),
        (200, json!(["A-1-2"])),
        "{reply}"
    );
    let now = seats(&app, &ev).await;
    assert_eq!(
        now[0].state,
        SeatState::Available,
        "the unpaid hold is released"
    );
    assert!(matches!(now[1].state, SeatState::Sold { .. }));
    assert_invariants(&app, &ev).await;
}

#[tokio::test]
async fn a_late_payment_for_a_seat_taken_meanwhile_is_order_expired() {
    let app = fresh_app().await;
    let ev = event(&app, 2, 1).await;
    // Holds of their own length, so a slow machine cannot expire the
    // first before its claim, nor the rival's before the late payment.
    let late = order_expiring_in(&app, &ev, 3).await;
    assert_eq!(claim(&app, &late, "A-1-1").await.0, 200);
    let_expire(&late).await;
    let rival = order_expiring_in(&app, &ev, 60).await;
    assert_eq!(
        claim(&app, &rival, "A-1-1").await.0,
        200,
        "an expired hold is claimable at once"
    );
    let reply = confirm_seats(&app, &late.id, "pi_late", &seats_of(&["A-1-1"])).await;
    assert_eq!(
        (code(&reply), reply.1["refund"].as_bool()),
        ((409, Some("order-expired")), Some(true)),
        "{}",
        reply.1
    );
    assert_eq!(
        stored_order(&app, &late.id).await.status,
        OrderStatus::RefundDue
    );
    assert_invariants(&app, &ev).await;
}

/// The clock guard (DESIGN.md, Clocks): the holder's own operations stop a
/// margin before `expiresAt` (2 s by default, at most a quarter of the
/// hold), while other orders still wait for `expiresAt` itself. Driven with
/// explicit instants, so nothing sleeps.
#[tokio::test]
async fn the_holder_stops_a_guard_margin_before_expiry_and_rivals_wait_for_it() {
    let app = fresh_app().await;
    let ev = event(&app, 4, 8).await; // an 8 s hold: the full 2 s margin
    let o = order(&app, &ev).await;
    let rival = order_expiring_in(&app, &ev, 60).await;
    assert_eq!(claim(&app, &o, "A-1-1").await.0, 200);
    let stored = stored_order(&app, &o.id).await;
    assert_eq!(stored.expires_at.0 - stored.holder_deadline.0, 2000);
    let token = o.hold_token();
    let rival_token = rival.hold_token();
    let seat = |s: &str| shared::domain::SeatId::parse(s).unwrap();
    let in_margin = Millis(stored.expires_at.0 - 1500);
    fn code_of<T>(r: Result<T, shared::Error>) -> Option<&'static str> {
        r.err().map(|e| e.code())
    }

    // Inside the margin: the holder may not claim more...
    assert_eq!(
        code_of(
            shared::handlers::claim_exactly(
                &app,
                &o.order_id(),
                &token,
                &seat("A-1-2"),
                10,
                in_margin
            )
            .await
        ),
        Some("order-not-holdable")
    );
    // ...just before it, it may.
    let before_margin = Millis(stored.holder_deadline.0 - 1);
    assert_eq!(
        code_of(
            shared::handlers::claim_exactly(
                &app,
                &o.order_id(),
                &token,
                &seat("A-1-3"),
                10,
                before_margin
            )
            .await
        ),
        None
    );
    // A rival still sees the hold until expiresAt itself.
    assert_eq!(
        code_of(
            shared::handlers::claim_exactly(
                &app,
                &rival.order_id(),
                &rival_token,
                &seat("A-1-1"),
                10,
                in_margin
            )
            .await
        ),
        Some("seat-held")
    );
    let at_expiry = stored.expires_at;
    assert_eq!(
        code_of(
            shared::handlers::claim_exactly(
                &app,
                &rival.order_id(),
                &rival_token,
                &seat("A-1-1"),
                10,
                Millis(at_expiry.0 + 1)
            )
            .await
        ),
        None
    );
    // Dropping has no margin: letting go is always safe.
    assert_eq!(
        code_of(
            shared::handlers::release_exactly(
                &app,
                &o.order_id(),
                &token,
                &seat("A-1-3"),
                in_margin,
            )
            .await
        ),
        None
    );
    // A 4 s hold has a 1 s margin.
    let short = event(&app, 1, 4).await;
    let s = order(&app, &short).await;
    let s_stored = stored_order(&app, &s.id).await;
    assert_eq!(s_stored.expires_at.0 - s_stored.holder_deadline.0, 1000);
}

/// A confirm inside the guard margin is not the live path: it takes the
/// order's own seats as a late payment would (they are still its own), so
/// a payment that arrives just before expiry still completes.
#[tokio::test]
async fn a_payment_inside_the_guard_margin_still_completes() {
    let app = fresh_app().await;
    // An 8 s hold: the full 2 s margin, room for the claim and the payment
    // inside it however slow the machine.
    let ev = event(&app, 2, 8).await;
    let o = order(&app, &ev).await;
    assert_eq!(claim(&app, &o, "A-1-1").await.0, 200);
    let deadline = stored_order(&app, &o.id).await.holder_deadline;
    // Let the order reach its margin (the one wait here is for a hold's time to pass).
    let wait = deadline.0 - shared::world::now().0 + 100;
    tokio::time::sleep(std::time::Duration::from_millis(wait.max(0) as u64)).await;
    let (status, reply) = claim(&app, &o, "A-1-2").await;
    assert_eq!(
        (status, reply["error"].as_str()),
        (409, Some("order-not-holdable")),
        "{reply}"
    );
    let (status, reply) = confirm_seats(&app, &o.id, "pi_1", &seats_of(&["A-1-1"])).await;
    let answered = shared::world::now();
    assert_eq!(
        (status, reply["status"].as_str()),
        (200, Some("COMPLETED")),
        "{reply}"
    );
    let expires_at = stored_order(&app, &o.id).await.expires_at;
    assert!(
        answered < expires_at,
        "the payment landed inside the margin, before expiry ({answered:?} vs {expires_at:?})"
    );
    assert_invariants(&app, &ev).await;
}

/// At the largest order (`MAX_SEATS_PER_ORDER` = 98), a payment for seats
/// the order holds plus one it does not would need more than DynamoDB's
/// 100 items in one transaction with the releases: the unpaid holds are
/// released right after it instead, and the sale goes through.
#[tokio::test]
async fn the_largest_order_paying_for_part_of_its_seats_fits_the_transaction_limit() {
    let mut app = fresh_app().await;
    app.config.max_seats_per_order = 98;
    let ev = event(&app, 100, 300).await;
    let o = order(&app, &ev).await;
    for n in 1..=98 {
        assert_eq!(claim(&app, &o, &format!("A-1-{n}")).await.0, 200);
    }
    let paid = seats_of(&["A-1-1", "A-1-2", "A-1-3", "A-1-99"]);
    let (status, reply) = confirm_seats(&app, &o.id, "pi_big", &paid).await;
    assert_eq!(status, 200, "{reply}");
    let now = seats(&app, &ev).await;
    assert_eq!(
        now.iter()
            .filter(|s| matches!(s.state, SeatState::Sold { .. }))
            .count(),
        4
    );
    assert_eq!(
        now.iter()
            .filter(|s| s.state == SeatState::Available)
            .count(),
        96,
        "the 95 unpaid holds are released"
    );
    // Paying for all of a 96-seat order: the common path, one transaction
    // of 96 seats, the order and the payment.
    let big = order(&app, &ev).await;
    let all: Vec<String> = (4..=98).chain([100]).map(|n| format!("A-1-{n}")).collect();
    for seat in &all {
        assert_eq!(claim(&app, &big, seat).await.0, 200);
    }
    assert_eq!(all.len(), 96);
    assert_eq!(confirm_seats(&app, &big.id, "pi_all", &all).await.0, 200);
    assert_invariants(&app, &ev).await;
}

/// Places in a general-admission section cannot be had yet (no event has
/// one in this release): a payment naming them is refunded, not lost.
#[tokio::test]
async fn a_payment_for_general_admission_places_is_refund_due() {
    let app = fresh_app().await;
    let ev = event(&app, 2, 300).await;
    let o = order(&app, &ev).await;
    assert_eq!(claim(&app, &o, "A-1-1").await.0, 200);
    let body = json!({"orderId": o.id, "paymentId": "pi_ga", "seats": ["A-1-1"], "ga": [{"sectionId": "FLOOR", "quantity": 2}]}).to_string();
    let reply = send(&app, &o.id, &body, &signed(&body)).await;
    assert_eq!(
        (code(&reply), reply.1["refund"].as_bool()),
        ((409, Some("seats-unavailable")), Some(true)),
        "{}",
        reply.1
    );
    let stored = stored_order(&app, &o.id).await;
    assert_eq!(
        (stored.status, stored.payment_id.map(|p| p.to_string())),
        (OrderStatus::RefundDue, Some("pi_ga".into()))
    );
    assert!(
        seats(&app, &ev)
            .await
            .iter()
            .all(|s| s.state == SeatState::Available),
        "its hold is released"
    );
}
