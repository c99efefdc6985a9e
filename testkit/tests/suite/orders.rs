//! extend-order and cancel-order on DynamoDB Local: the order and every
//! hold move together, the lifetime cap, every token the order was given,
//! releases at once, idempotence, and late payments for cancelled orders.

use crate::common;

use common::*;
use serde_json::{json, Value};
use shared::domain::Millis;
use testkit::assert_invariants;

fn millis(rfc3339: &Value) -> i64 {
    let text = rfc3339
        .as_str()
        .unwrap_or_else(|| panic!("not a time: {rfc3339}"));
    chrono::DateTime::parse_from_rfc3339(text)
        .unwrap()
        .timestamp_millis()
}

/// The order with the token extend-order answered.
fn with_token(o: &TestOrder, reply: &Value) -> TestOrder {
    TestOrder {
        token: reply["holdToken"].as_str().unwrap().to_owned(),
        expires_at: reply["expiresAt"].as_str().unwrap().to_owned(),
        ..o.clone()
    }
}

#[tokio::test]
async fn an_extended_hold_outlives_its_original_expiry_and_every_token_keeps_working() {
    let app = fresh_app().await;
    let ev = event(&app, 6, 3).await;
    let buyer = order(&app, &ev).await;
    for seat in ["A-1-1", "A-1-2"] {
        assert_eq!(claim(&app, &buyer, seat).await.0, 200);
    }
    let (status, reply) = extend(&app, &buyer, r#"{"seconds": 30}"#).await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["orderId"], buyer.id.as_str());
    let original = millis(&json!(buyer.expires_at));
    let extended = millis(&reply["expiresAt"]);
    assert!(
        extended >= shared::world::now().0 + 25_000 && extended > original,
        "{reply}"
    );
    let renewed = with_token(&buyer, &reply);
    assert_ne!(
        renewed.token, buyer.token,
        "the new token carries the new expiry"
    );

    // Past the original expiry, a rival cannot take the extended holds.
    let_holds_expire(3).await;
    let rival = order(&app, &ev).await;
    for seat in ["A-1-1", "A-1-2"] {
        let (status, body) = claim(&app, &rival, seat).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (409, Some("seat-held")),
            "{seat}: {body}"
        );
    }
    let (status, seats) = call(&app, "GET", &format!("/events/{ev}/seats"), &[], "").await;
    assert_eq!(status, 200);
    assert_eq!(seats["seats"][0]["status"], "HELD", "{seats}");

    // Both tokens work on every route: the old one claims with the new expiry.
    let (status, body) = claim(&app, &buyer, "A-1-3").await;
    assert_eq!(
        (status, millis(&body["expiresAt"])),
        (200, extended),
        "the old token: {body}"
    );
    assert_eq!(claim(&app, &renewed, "A-1-4").await.0, 200);
    assert_eq!(drop_seat(&app, &buyer, "A-1-4").await.0, 200);
    for o in [&buyer, &renewed] {
        let (status, body) = get_order(&app, o).await;
        assert_eq!(
            (status, millis(&body["expiresAt"])),
            (200, extended),
            "{body}"
        );
        assert_eq!(body["seats"], json!(["A-1-1", "A-1-2", "A-1-3"]));
    }
    // Extending with the old token again: nothing earlier, the same secret.
    let (status, again) = extend(&app, &buyer, r#"{"seconds": 1}"#).await;
    assert_eq!(
        (status, millis(&again["expiresAt"])),
        (200, extended),
        "unchanged: {again}"
    );
    assert_eq!(
        again["holdToken"],
        renewed.token.as_str(),
        "the token to use from then on"
    );
    // A token with the secret but another event's id opens nothing.
    let forged = renewed.token.replacen(&ev, "other-event", 1);
    let stranger = TestOrder {
        token: forged,
        ..renewed.clone()
    };
    assert_eq!(get_order(&app, &stranger).await.0, 401);
    assert_eq!(claim(&app, &stranger, "A-1-5").await.0, 401);
    assert_eq!(extend(&app, &stranger, "").await.0, 401);
    assert_invariants(&app, &ev).await;

    // It pays as any live order does.
    let (status, body) = confirm(&app, &buyer.id, "pay-extended").await;
    assert_eq!(
        (status, body["status"].as_str()),
        (200, Some("COMPLETED")),
        "{body}"
    );
    assert_invariants(&app, &ev).await;
}

#[tokio::test]
async fn extension_stops_at_the_lifetime_cap() {
    let mut app = fresh_app().await;
    app.config.max_order_lifetime_seconds = 20;
    let ev = event(&app, 2, 5).await;
    let o = order(&app, &ev).await;
    let created = millis(&json!(o.created_at));
    // No body: the event's hold time (5 s) from now.
    let (status, body) = extend(&app, &o, "").await;
    assert_eq!(status, 200, "{body}");
    assert!(millis(&body["expiresAt"]) <= created + 20_000);
    let (status, body) = extend(&app, &o, r#"{"seconds": 7200}"#).await;
    assert_eq!(
        (status, millis(&body["expiresAt"])),
        (200, created + 20_000),
        "capped: {body}"
    );
    let (status, body) = extend(&app, &o, r#"{"seconds": 60}"#).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (409, Some("hold-limit")),
        "{body}"
    );
    assert_eq!(get_order(&app, &o).await.1["status"], "PENDING");
}

#[tokio::test]
async fn extend_refuses_bad_input_strangers_and_orders_that_are_not_live() {
    let app = fresh_app().await;
    let ev = event(&app, 2, 1).await;
    let o = order(&app, &ev).await;
    for bad in [
        r#"{"seconds": 0}"#,
        r#"{"seconds": 7201}"#,
        r#"{"seconds": "60"}"#,
        r#"{"seconds": -1}"#,
        "[]",
        "{",
    ] {
        let (status, body) = extend(&app, &o, bad).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("bad-request")),
            "{bad}: {body}"
        );
    }
    let other = order(&app, &ev).await;
    let thief = TestOrder {
        token: other.token.clone(),
        ..o.clone()
    };
    assert_eq!(extend(&app, &thief, "{}").await.0, 401);
    let (status, _) = call(&app, "POST", &format!("/orders/{}/extend", o.id), &[], "{}").await;
    assert_eq!(status, 401);
    let ghost = o.ghost();
    assert_eq!(extend(&app, &ghost, "{}").await.0, 404);
    let_holds_expire(1).await;
    let (status, body) = extend(&app, &o, "{}").await;
    assert_eq!(
        (status, body["error"].as_str()),
        (409, Some("order-not-holdable")),
        "{body}"
    );
}

#[tokio::test]
async fn extend_racing_the_orders_own_claims_moves_every_hold() {
    let app = fresh_app().await;
    let ev = event(&app, 10, 30).await;
    let o = order(&app, &ev).await;
    let mut tasks = tokio::task::JoinSet::new();
    for n in 1..=8 {
        let (app, o) = (app.clone(), o.clone());
        tasks.spawn(async move { claim(&app, &o, &format!("A-1-{n}")).await.0 });
    }
    for _ in 0..3 {
        let (app, o) = (app.clone(), o.clone());
        tasks.spawn(async move { extend(&app, &o, r#"{"seconds": 600}"#).await.0 });
    }
    while let Some(status) = tasks.join_next().await {
        assert_eq!(status.unwrap(), 200);
    }
    let stored = stored_order(&app, &o.id).await;
    assert_eq!(stored.seats.len(), 8);
    // Every hold carries the order's (extended) expiry: the invariant check
    // compares each live hold's expiry with its order's.
    let check = assert_invariants(&app, &ev).await;
    assert_eq!(check.live_holds, 8);
    assert!(stored.expires_at.0 > shared::world::now().0 + 500_000);
}

#[tokio::test]
async fn cancel_releases_everything_at_once_and_is_idempotent() {
    let app = fresh_app().await;
    let ev = event(&app, 4, 60).await;
    let o = order(&app, &ev).await;
    for seat in ["A-1-1", "A-1-2"] {
        assert_eq!(claim(&app, &o, seat).await.0, 200);
    }
    for _ in 0..2 {
        let (status, body) = cancel(&app, &o).await;
        assert_eq!(
            body,
            json!({"orderId": o.id, "status": "CANCELLED"}),
            "{status}"
        );
        assert_eq!(status, 200);
    }
    // Free at once, with no sweep.
    let rival = order(&app, &ev).await;
    for seat in ["A-1-1", "A-1-2"] {
        assert_eq!(claim(&app, &rival, seat).await.0, 200, "{seat}");
    }
    let (status, body) = get_order(&app, &o).await;
    assert_eq!(
        (status, &body["status"], &body["seats"]),
        (200, &json!("CANCELLED"), &json!(["A-1-1", "A-1-2"])),
        "{body}"
    );
    let (status, body) = claim(&app, &o, "A-1-3").await;
    assert_eq!(
        (status, body["error"].as_str()),
        (409, Some("order-not-holdable")),
        "{body}"
    );
    assert_eq!(extend(&app, &o, "").await.1["error"], "order-not-holdable");
    // Out of the pending index: the sweep has nothing to do with it.
    let summary = sweep(&app).await;
    assert_eq!(summary.expired_orders, 0, "{summary:?}");
    assert_invariants(&app, &ev).await;

    // Strangers and ghosts.
    let thief = TestOrder {
        token: rival.token.clone(),
        ..o.clone()
    };
    assert_eq!(cancel(&app, &thief).await.0, 401);
    let ghost = o.ghost();
    assert_eq!(cancel(&app, &ghost).await.0, 404);
}

#[tokio::test]
async fn cancelling_an_expired_order_leaves_what_others_took() {
    let app = fresh_app().await;
    let ev = event(&app, 3, 1).await;
    let o = order(&app, &ev).await;
    for seat in ["A-1-1", "A-1-2"] {
        assert_eq!(claim(&app, &o, seat).await.0, 200);
    }
    let_holds_expire(1).await;
    let rival = order_expiring_in(&app, &ev, 60).await;
    assert_eq!(claim(&app, &rival, "A-1-1").await.0, 200);
    let (status, body) = cancel(&app, &o).await;
    assert_eq!(
        (status, body["status"].as_str()),
        (200, Some("CANCELLED")),
        "{body}"
    );
    let states: Vec<_> = seats(&app, &ev)
        .await
        .into_iter()
        .map(|s| s.state)
        .collect();
    assert!(
        matches!(&states[0], shared::domain::SeatState::Held { order, .. } if order.as_str() == rival.id),
        "{states:?}"
    );
    assert_eq!(
        states[1],
        shared::domain::SeatState::Available,
        "its own expired hold released"
    );
    assert_invariants(&app, &ev).await;
}

#[tokio::test]
async fn completed_orders_are_not_cancellable_and_late_payments_for_cancelled_ones_retake_or_refund(
) {
    let app = fresh_app().await;
    let ev = event(&app, 3, 60).await;
    let paid = order(&app, &ev).await;
    assert_eq!(claim(&app, &paid, "A-1-1").await.0, 200);
    assert_eq!(confirm(&app, &paid.id, "pay-1").await.0, 200);
    let (status, body) = cancel(&app, &paid).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (409, Some("order-not-cancellable")),
        "{body}"
    );

    // Cancelled, then paid while its seat is still free: it completes.
    let lucky = order(&app, &ev).await;
    assert_eq!(claim(&app, &lucky, "A-1-2").await.0, 200);
    assert_eq!(cancel(&app, &lucky).await.0, 200);
    let (status, body) = confirm_seats(&app, &lucky.id, "pay-2", &["A-1-2".to_owned()]).await;
    assert_eq!(
        (status, body["status"].as_str()),
        (200, Some("COMPLETED")),
        "{body}"
    );

    // Cancelled, its seat taken, then paid: refund due, and not cancellable.
    let late = order(&app, &ev).await;
    assert_eq!(claim(&app, &late, "A-1-3").await.0, 200);
    assert_eq!(cancel(&app, &late).await.0, 200);
    let rival = order(&app, &ev).await;
    assert_eq!(claim(&app, &rival, "A-1-3").await.0, 200);
    let (status, body) = confirm_seats(&app, &late.id, "pay-3", &["A-1-3".to_owned()]).await;
    assert_eq!(
        (status, body["error"].as_str(), &body["refund"]),
        (409, Some("order-expired"), &json!(true)),
        "{body}"
    );
    assert_eq!(get_order(&app, &late).await.1["status"], "REFUND_DUE");
    assert_eq!(
        cancel(&app, &late).await.1["error"],
        "order-not-cancellable"
    );
    assert_invariants(&app, &ev).await;
}

#[tokio::test]
async fn cancel_racing_confirm_ends_in_one_consistent_state() {
    let app = fresh_app().await;
    let ev = event(&app, 20, 60).await;
    for round in 0..10 {
        let o = order(&app, &ev).await;
        let seat = format!("A-1-{}", round + 1);
        assert_eq!(claim(&app, &o, &seat).await.0, 200);
        let (payment, paid) = (format!("pay-race-{round}"), [seat.clone()]);
        let (a, b) = tokio::join!(
            cancel(&app, &o),
            confirm_seats(&app, &o.id, &payment, &paid)
        );
        // Whichever came first, the payment completes the order (a
        // cancelled order's free seat is re-taken) and cancel then refuses.
        assert_eq!(b.0, 200, "confirm: {}", b.1);
        assert!(
            a.0 == 200 || a.1["error"] == "order-not-cancellable",
            "cancel: {:?}",
            a
        );
        assert_eq!(get_order(&app, &o).await.1["status"], "COMPLETED");
    }
    let check = assert_invariants(&app, &ev).await;
    assert_eq!(check.sold, 10);
}

/// One expiry boundary (Clocks): with the clock injected at the exact
/// millisecond, a seat held until `t` is another order's to claim at `t`
/// (not a millisecond before), and the sweep expires its order at `t`.
#[tokio::test]
async fn a_seat_is_claimable_and_its_order_sweepable_at_exactly_its_expiry() {
    let app = fresh_app().await;
    let ev = event(&app, 2, 60).await;
    let holder = order(&app, &ev).await;
    assert_eq!(claim(&app, &holder, "A-1-1").await.0, 200);
    let t = stored_order(&app, &holder.id).await.expires_at;
    // A rival whose own order outlives t by far (so its guard margin is no factor).
    let rival = order_expiring_in(&app, &ev, 3_600).await;
    let token = rival.hold_token();
    let seat = shared::domain::SeatId::parse("A-1-1").unwrap();
    let max = app.config.max_seats_per_order;
    let before = shared::handlers::claim_exactly(
        &app,
        &rival.order_id(),
        &token,
        &seat,
        max,
        Millis(t.0 - 1),
    )
    .await;
    assert!(
        matches!(before, Err(shared::error::Error::SeatHeld)),
        "live a millisecond before: {before:?}"
    );
    let at = shared::handlers::claim_exactly(&app, &rival.order_id(), &token, &seat, max, t).await;
    assert!(at.is_ok(), "claimable at expiresAt: {at:?}");

    // The sweep: not a millisecond before t, at t.
    let late = order(&app, &ev).await;
    assert_eq!(claim(&app, &late, "A-1-2").await.0, 200);
    let t = stored_order(&app, &late.id).await.expires_at;
    let sweeper = local::iam::attributed(&app, "expire-holds");
    let early = shared::sweep::release_expired(&sweeper.store, Millis(t.0 - 1), None).await;
    assert_eq!(
        stored_order(&app, &late.id).await.status,
        shared::domain::OrderStatus::Pending,
        "{early:?}"
    );
    let swept = shared::sweep::release_expired(&sweeper.store, t, None).await;
    assert_eq!(
        stored_order(&app, &late.id).await.status,
        shared::domain::OrderStatus::Expired,
        "{swept:?}"
    );
    assert!(swept.released_seats >= 1, "{swept:?}");
}
