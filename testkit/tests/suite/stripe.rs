//! The Stripe route against a real DynamoDB Local, every request signed by
//! Stripe's own library: a paid Checkout Session sells exactly what its
//! metadata names, as confirm sells its body; a delayed method waits for
//! its success; duplicates, the late path and refunds are confirm's; the
//! signature, the metadata and the configuration are checked first.

use crate::common;

use common::stripe::{
    checkout_event, paid_for, session_id, stripe_send, stripe_signature, stripe_signature_with,
    STRIPE_PATH,
};
use common::*;
use serde_json::{json, Value};
use shared::domain::{OrderStatus, SeatState};
use shared::handlers::{ASYNC_PAYMENT_SUCCEEDED, SESSION_COMPLETED};
use testkit::assert_invariants;

fn outcome(reply: &(u16, Value)) -> (u16, &str) {
    (reply.0, reply.1["outcome"].as_str().unwrap_or(""))
}

#[tokio::test]
async fn a_paid_session_sells_exactly_its_metadata_and_a_resend_changes_nothing() {
    let app = fresh_app().await;
    let ev = ga_event(&app, 3, 10, 300).await;
    let o = order(&app, &ev).await;
    assert_eq!(claim(&app, &o, "A-1-1").await.0, 200);
    assert_eq!(claim(&app, &o, "A-1-2").await.0, 200);
    assert_eq!(hold_ga(&app, &o, "FLOOR", json!(2)).await.0, 200);
    let session = session_id();
    let metadata = paid_for(
        &o.id,
        &["A-1-2", "A-1-1"],
        json!([{"sectionId": "FLOOR", "quantity": 2}]),
    );
    let body = checkout_event(SESSION_COMPLETED, &session, "paid", metadata.clone());
    let reply = stripe_send(&app, &body).await;
    assert_eq!(outcome(&reply), (200, "sold"), "{}", reply.1);
    assert_eq!(
        (
            &reply.1["orderId"],
            &reply.1["paymentId"],
            &reply.1["seats"],
            &reply.1["ga"]
        ),
        (
            &json!(o.id),
            &json!(session),
            &json!(["A-1-1", "A-1-2"]),
            &json!([{"sectionId": "FLOOR", "quantity": 2}])
        ),
        "the session's id is the payment's (66 characters)"
    );
    let (_, view) = get_order(&app, &o).await;
    assert_eq!(
        (view["status"].as_str(), &view["paymentId"]),
        (Some("COMPLETED"), &json!(session))
    );
    let sold = seats(&app, &ev).await;
    assert!(sold[..2]
        .iter()
        .all(|s| matches!(s.state, SeatState::Sold { .. })));
    assert_eq!(sold[2].state, SeatState::Available);
    // Stripe resends (at least once delivery), and the delayed-method
    // event can follow a paid one: the same sale, nothing changes.
    let again = stripe_send(&app, &body).await;
    assert_eq!(
        (outcome(&again), &again.1["seats"]),
        ((200, "sold"), &reply.1["seats"])
    );
    let succeeded = checkout_event(ASYNC_PAYMENT_SUCCEEDED, &session, "paid", metadata);
    assert_eq!(outcome(&stripe_send(&app, &succeeded).await), (200, "sold"));
    assert_eq!(stored_order(&app, &o.id).await.refund_payment_ids, vec![]);
    assert_invariants(&app, &ev).await;
}

#[tokio::test]
async fn a_delayed_method_waits_then_sells_when_it_succeeds() {
    let app = fresh_app().await;
    let ev = event(&app, 2, 300).await;
    let o = order(&app, &ev).await;
    assert_eq!(claim(&app, &o, "A-1-1").await.0, 200);
    let session = session_id();
    let metadata = paid_for(&o.id, &["A-1-1"], Value::Null);
    let unpaid = checkout_event(SESSION_COMPLETED, &session, "unpaid", metadata.clone());
    let reply = stripe_send(&app, &unpaid).await;
    assert_eq!(
        (outcome(&reply), &reply.1["orderId"]),
        ((200, "waiting"), &json!(o.id))
    );
    assert_eq!(stored_order(&app, &o.id).await.status, OrderStatus::Pending);
    assert!(matches!(
        seats(&app, &ev).await[0].state,
        SeatState::Held { .. }
    ));
    let succeeded = checkout_event(ASYNC_PAYMENT_SUCCEEDED, &session, "paid", metadata);
    assert_eq!(outcome(&stripe_send(&app, &succeeded).await), (200, "sold"));
    assert_eq!(
        stored_order(&app, &o.id).await.status,
        OrderStatus::Completed
    );
    // A failed delayed payment, an expired session, any other event: seen
    // and ignored, the order untouched.
    let other = order(&app, &ev).await;
    assert_eq!(claim(&app, &other, "A-1-2").await.0, 200);
    for kind in [
        "checkout.session.async_payment_failed",
        "checkout.session.expired",
        "charge.refunded",
    ] {
        let body = checkout_event(
            kind,
            &session_id(),
            "unpaid",
            paid_for(&other.id, &["A-1-2"], Value::Null),
        );
        assert_eq!(
            outcome(&stripe_send(&app, &body).await),
            (200, "ignored"),
            "{kind}"
        );
    }
    assert_eq!(
        stored_order(&app, &other.id).await.status,
        OrderStatus::Pending
    );
    assert_invariants(&app, &ev).await;
}

/// A payment after the hold ran out takes the seat if it is still free (as
/// confirm's late path does), else sells nothing and is recorded for
/// refund, with a `200` receipt: Stripe's retries could not change it.
#[tokio::test]
async fn late_payments_take_free_seats_or_are_recorded_for_refund() {
    let app = fresh_app().await;
    let ev = event(&app, 2, 1).await;
    let late = order(&app, &ev).await;
    let lost = order(&app, &ev).await;
    assert_eq!(claim(&app, &late, "A-1-1").await.0, 200);
    assert_eq!(claim(&app, &lost, "A-1-2").await.0, 200);
    let_expire(&lost).await;
    let rival = order_expiring_in(&app, &ev, 300).await;
    assert_eq!(claim(&app, &rival, "A-1-2").await.0, 200);
    let body = checkout_event(
        SESSION_COMPLETED,
        &session_id(),
        "paid",
        paid_for(&late.id, &["A-1-1"], Value::Null),
    );
    assert_eq!(
        outcome(&stripe_send(&app, &body).await),
        (200, "sold"),
        "still free: sold"
    );
    let session = session_id();
    let body = checkout_event(
        SESSION_COMPLETED,
        &session,
        "paid",
        paid_for(&lost.id, &["A-1-2"], Value::Null),
    );
    let reply = stripe_send(&app, &body).await;
    assert_eq!(outcome(&reply), (200, "not-sold"), "{}", reply.1);
    assert_eq!(
        (&reply.1["error"], &reply.1["refund"], &reply.1["paymentId"]),
        (&json!("order-expired"), &json!(true), &json!(session))
    );
    let stored = stored_order(&app, &lost.id).await;
    assert_eq!(
        (stored.status, stored.payment_id.map(|p| p.to_string())),
        (OrderStatus::RefundDue, Some(session))
    );
    assert!(
        matches!(seats(&app, &ev).await[1].state, SeatState::Held { .. }),
        "the rival keeps it"
    );
    assert_invariants(&app, &ev).await;
}

/// The signature comes first, by Stripe's rules: a request Stripe did not
/// sign, signed with another secret, stale, or altered after signing is
/// `401` naming the rule, and changes nothing.
#[tokio::test]
async fn the_signature_is_checked_before_anything_else() {
    let app = fresh_app().await;
    let ev = event(&app, 1, 300).await;
    let o = order(&app, &ev).await;
    assert_eq!(claim(&app, &o, "A-1-1").await.0, 200);
    let body = checkout_event(
        SESSION_COMPLETED,
        &session_id(),
        "paid",
        paid_for(&o.id, &["A-1-1"], Value::Null),
    );
    let now = shared::world::now().0 / 1000;
    let other = "whsec_anotherEndpointsSecretEntirely000";
    let altered = body.replace("\"livemode\":false", "\"livemode\":true");
    assert_ne!(altered, body);
    let cases = [
        (None, body.as_str(), "signature-header-missing"),
        (Some("t=1,v1=zz".to_owned()), &body, "signature-malformed"),
        (
            Some(stripe_signature_with(other, &body, now)),
            &body,
            "signature-mismatch",
        ),
        (
            Some(stripe_signature_with(
                local::apps::DEV_STRIPE_WEBHOOK_SECRET,
                &body,
                now - 301,
            )),
            &body,
            "signature-timestamp",
        ),
        (
            Some(stripe_signature(&body)),
            &altered,
            "signature-mismatch",
        ),
    ];
    for (signature, sent, want) in cases {
        let headers: Vec<(&str, &str)> = signature
            .iter()
            .map(|s| ("stripe-signature", s.as_str()))
            .collect();
        let (status, reply) = call(&app, "POST", STRIPE_PATH, &headers, sent).await;
        assert_eq!((status, reason(&reply)), (401, want), "{reply}");
        assert!(
            !reply.to_string().contains("whsec_"),
            "never echoes a secret"
        );
    }
    assert_eq!(stored_order(&app, &o.id).await.status, OrderStatus::Pending);
}

/// The metadata is checked as confirm checks its body: a bad one is `400`
/// (Stripe shows the failure) and sells nothing; a session with no
/// `seatclaimOrderId` is someone else's checkout, acknowledged and ignored.
#[tokio::test]
async fn the_metadata_is_checked_as_confirms_body() {
    let app = fresh_app().await;
    let ev = event(&app, 2, 300).await;
    let o = order(&app, &ev).await;
    assert_eq!(claim(&app, &o, "A-1-1").await.0, 200);
    let with = |metadata: Value| checkout_event(SESSION_COMPLETED, &session_id(), "paid", metadata);
    let bad = [
        json!({"seatclaimOrderId": o.id, "seatclaimSeats": "[\"A-1-1\",\"A-1-1\"]"}),
        json!({"seatclaimOrderId": o.id, "seatclaimSeats": "A-1-1"}),
        json!({"seatclaimOrderId": o.id, "seatclaimSeats": "[]"}),
        json!({"seatclaimOrderId": o.id}),
        json!({"seatclaimOrderId": o.id, "seatclaimSeats": "[\"A-1-1\"]", "seatclaimGa": "[{\"sectionId\":\"FLOOR\"}]"}),
        json!({"seatclaimOrderId": "not an id", "seatclaimSeats": "[\"A-1-1\"]"}),
    ];
    for metadata in bad {
        let (status, reply) = stripe_send(&app, &with(metadata.clone())).await;
        assert_eq!(
            (status, reply["error"].as_str()),
            (400, Some("bad-request")),
            "{metadata}: {reply}"
        );
        assert!(
            reply["message"].as_str().unwrap_or("").contains("metadata"),
            "{reply}"
        );
    }
    // Another checkout of the same Stripe account: its metadata is none of
    // ours (a shop's own orderId included), or null.
    for metadata in [json!({"product": "t-shirt", "orderId": o.id}), Value::Null] {
        let (status, reply) = stripe_send(&app, &with(metadata)).await;
        assert_eq!(
            (status, reply["outcome"].as_str()),
            (200, Some("ignored")),
            "{reply}"
        );
    }
    // An order this stack does not have (another stack's on the same
    // account): sold nothing, said once, not retried for days.
    let ghost = o.ghost();
    let reply = stripe_send(&app, &with(paid_for(&ghost.id, &["A-1-1"], Value::Null))).await;
    assert_eq!(
        (
            reply.0,
            &reply.1["outcome"],
            &reply.1["error"],
            &reply.1["refund"]
        ),
        (
            200,
            &json!("not-sold"),
            &json!("order-not-found"),
            &json!(false)
        )
    );
    // A 100% discount paid nothing: nothing is sold.
    let free = checkout_event(
        SESSION_COMPLETED,
        &session_id(),
        "no_payment_required",
        paid_for(&o.id, &["A-1-1"], Value::Null),
    );
    assert_eq!(outcome(&stripe_send(&app, &free).await), (200, "ignored"));
    let (status, reply) = stripe_send(&app, "{\"id\": \"evt_1\"}").await;
    assert_eq!(
        (status, reply["error"].as_str()),
        (400, Some("bad-request")),
        "{reply}"
    );
    assert_eq!(stored_order(&app, &o.id).await.status, OrderStatus::Pending);
}

/// Without `STRIPE_WEBHOOK_SECRET` the route cannot tell Stripe's requests
/// from anyone's: every request is refused.
#[tokio::test]
async fn without_its_secret_the_route_refuses_everything() {
    let mut app = fresh_app().await;
    app.config.stripe_secrets = None;
    let body = checkout_event(SESSION_COMPLETED, &session_id(), "paid", json!({}));
    let signature = stripe_signature(&body);
    let (status, reply) = call(
        &app,
        "POST",
        STRIPE_PATH,
        &[("stripe-signature", &signature)],
        &body,
    )
    .await;
    assert_eq!((status, reason(&reply)), (401, "keys-not-configured"));
}

/// A cancelled buyer's order paid through Stripe takes the late path with
/// the buyer's limit: its seat and places are taken again and sold, and
/// counted on the buyer's record, so the limit still binds after.
#[tokio::test]
async fn a_late_payment_counts_against_the_buyers_limit() {
    let app = fresh_app().await;
    let plan = json!({"name": "Limited", "holdSeconds": 300, "buyerLimit": 4, "sections": [
        {"sectionId": "A", "rows": [{"row": "1", "count": 4}]},
        {"sectionId": "FLOOR", "capacity": 10}]});
    let (ev, _) = create_event(&app, "sl", &plan.to_string()).await;
    let o = buyer_order(&app, &ev, "fan-1").await;
    assert_eq!(claim(&app, &o, "A-1-1").await.0, 200);
    assert_eq!(hold_ga(&app, &o, "FLOOR", json!(2)).await.0, 200);
    assert_eq!(cancel(&app, &o).await.0, 200);
    let metadata = paid_for(
        &o.id,
        &["A-1-1"],
        json!([{"sectionId": "FLOOR", "quantity": 2}]),
    );
    let body = checkout_event(SESSION_COMPLETED, &session_id(), "paid", metadata);
    let reply = stripe_send(&app, &body).await;
    assert_eq!(outcome(&reply), (200, "sold"), "{}", reply.1);
    assert_eq!(
        stored_order(&app, &o.id).await.status,
        OrderStatus::Completed
    );
    // Three counted: one more is within the limit, a second is not.
    let next = buyer_order(&app, &ev, "fan-1").await;
    assert_eq!(claim(&app, &next, "A-1-2").await.0, 200);
    let (status, refused) = claim(&app, &next, "A-1-3").await;
    assert_eq!(
        (status, reason(&refused)),
        (409, "buyer-limit"),
        "{refused}"
    );
    // Past the limit, a late payment takes nothing: recorded for refund,
    // the rule named in the receipt.
    let over = buyer_order(&app, &ev, "fan-1").await;
    assert_eq!(cancel(&app, &over).await.0, 200);
    let metadata = paid_for(
        &over.id,
        &[],
        json!([{"sectionId": "FLOOR", "quantity": 1}]),
    );
    let body = checkout_event(SESSION_COMPLETED, &session_id(), "paid", metadata);
    let reply = stripe_send(&app, &body).await;
    assert_eq!(
        (
            outcome(&reply),
            &reply.1["error"],
            &reply.1["reason"],
            &reply.1["refund"]
        ),
        (
            (200, "not-sold"),
            &json!("order-expired"),
            &json!("buyer-limit"),
            &json!(true)
        ),
        "{}",
        reply.1
    );
    assert_invariants(&app, &ev).await;
}
