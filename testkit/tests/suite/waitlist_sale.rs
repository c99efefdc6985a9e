//! The waitlist's opening and the waitlist-only sale against a real
//! DynamoDB Local: a waitlist armed for a sell-out opens when the
//! projector sees nothing available (seats and places, held or sold), and
//! from its opening plus a second only offers take seats: create-order and
//! every claim of more are `409 waitlist-only`, an order opened before
//! keeps and may pay for what it holds, and confirm's late path takes
//! nothing (through the Stripe route too). After the delete the public sale
//! resumes.

use crate::common;

use common::waitlist::opened_ago;
use common::*;
use serde_json::{json, Value};
use shared::domain::{Millis, SeatState};

async fn put(app: &shared::App, event: &str, body: Value) -> (u16, Value) {
    let uri = format!("/events/{event}/waitlist");
    send(app, "PUT", &uri, &[], &body.to_string()).await
}

async fn get(app: &shared::App, event: &str) -> (u16, Value) {
    send(app, "GET", &format!("/events/{event}/waitlist"), &[], "").await
}

async fn project(app: &shared::App) {
    local::streams::project_now(app, &testkit::dynamodb_endpoint())
        .await
        .unwrap();
}

#[tokio::test]
async fn an_armed_waitlist_opens_when_the_map_shows_nothing_available() {
    let app = testkit::fresh_app_streaming(None).await;
    let ev = ga_event(&app, 2, 2, 300).await;
    assert_eq!(put(&app, &ev, json!({"opens": "sold-out"})).await.0, 200);
    let (a, b) = (order(&app, &ev).await, order(&app, &ev).await);
    assert_eq!(claim(&app, &a, "A-1-1").await.0, 200);
    assert_eq!(hold_ga(&app, &b, "FLOOR", json!(2)).await.0, 200);
    project(&app).await;
    let (_, armed) = get(&app, &ev).await;
    assert_eq!(
        (&armed["status"], &armed["unoffered"]),
        (&json!("ARMED"), &json!(1)),
        "a seat is still free: {armed}"
    );
    assert!(armed.get("openedAt").is_none(), "{armed}");
    // The last seat sold: nothing is available, held or sold alike.
    assert_eq!(claim(&app, &b, "A-1-2").await.0, 200);
    let floor = json!([{"sectionId": "FLOOR", "quantity": 2}]);
    assert_eq!(pay(&app, &b, "pi-sellout", &["A-1-2"], floor).await.0, 200);
    let before = shared::world::now();
    project(&app).await;
    let (_, open) = get(&app, &ev).await;
    assert_eq!(open["status"], "OPEN", "{open}");
    let opened_at = open["openedAt"].as_str().unwrap();
    let opened_at = chrono::DateTime::parse_from_rfc3339(opened_at).unwrap();
    assert!(
        opened_at.timestamp_millis() >= before.0,
        "opened when the projector saw it: {open}"
    );
    // Seats coming back do not close it.
    assert_eq!(cancel(&app, &a).await.0, 200);
    project(&app).await;
    assert_eq!(get(&app, &ev).await.1["status"], "OPEN");

    // Armed on an event the map shows sold out already: no write will
    // come for the projector, so the put opens it.
    let sold = event(&app, 1, 300).await;
    let buyer = order(&app, &sold).await;
    assert_eq!(claim(&app, &buyer, "A-1-1").await.0, 200);
    assert_eq!(
        pay(&app, &buyer, "pi-sold", &["A-1-1"], json!([])).await.0,
        200
    );
    project(&app).await;
    let (_, at_once) = put(&app, &sold, json!({"opens": "sold-out"})).await;
    assert_eq!(
        (&at_once["status"], &at_once["unoffered"]),
        (&json!("OPEN"), &json!(0)),
        "{at_once}"
    );
    assert!(at_once.get("openedAt").is_some(), "{at_once}");
}

#[tokio::test]
async fn while_only_offers_take_seats_the_public_sale_is_refused() {
    let app = fresh_app().await;
    let ev = ga_event(&app, 4, 4, 300).await;
    let uri = format!("/events/{ev}/orders");
    let keyed = [("idempotency-key", "order-before-the-opening-0123456789")];
    assert_eq!(send(&app, "POST", &uri, &keyed, "{}").await.0, 201);
    let before = order(&app, &ev).await;
    assert_eq!(claim(&app, &before, "A-1-1").await.0, 200);
    assert_eq!(claim(&app, &before, "A-1-2").await.0, 200);
    assert_eq!(hold_ga(&app, &before, "FLOOR", json!(2)).await.0, 200);
    let payer = order(&app, &ev).await;
    assert_eq!(claim(&app, &payer, "A-1-3").await.0, 200);
    opened_ago(&app, &ev, 2_000).await;

    let link = json!(format!("/events/{ev}/waitlist/entries"));
    let refused = |reply: (u16, Value)| {
        assert_eq!(reply.0, 409, "{}", reply.1);
        assert_eq!(reply.1["error"], "waitlist-only", "{}", reply.1);
        reply.1
    };
    let created = refused(send(&app, "POST", &uri, &[], "{}").await);
    assert_eq!(created["waitlist"], link, "{created}");
    // A resend of a create-order that opened an order before: refused
    // like any other (the order it opened lives on); a malformed key is
    // still a 400 first.
    refused(send(&app, "POST", &uri, &keyed, "{}").await);
    let bad_key = [("idempotency-key", "not a key")];
    assert_eq!(send(&app, "POST", &uri, &bad_key, "{}").await.0, 400);
    // Claims of more: a seat it does not hold, best-available, a raise.
    refused(claim(&app, &before, "A-1-4").await);
    refused(best(&app, &before, json!({"quantity": 1})).await);
    refused(hold_ga(&app, &before, "FLOOR", json!(3)).await);
    // What it holds it keeps: claimed again, dropped, lowered.
    assert_eq!(claim(&app, &before, "A-1-1").await.0, 200);
    assert_eq!(drop_seat(&app, &before, "A-1-2").await.0, 200);
    assert_eq!(hold_ga(&app, &before, "FLOOR", json!(1)).await.0, 200);
    // A seat it dropped is one it no longer holds.
    refused(claim(&app, &before, "A-1-2").await);
    // Paying for exactly what it holds sells; paying for more takes
    // nothing, free seat or not, and is recorded for refund.
    let floor = json!([{"sectionId": "FLOOR", "quantity": 1}]);
    let (status, sold) = pay(&app, &before, "pi-held", &["A-1-1"], floor).await;
    assert_eq!(
        (status, &sold["status"]),
        (200, &json!("COMPLETED")),
        "{sold}"
    );
    let (status, late) = pay(&app, &payer, "pi-more", &["A-1-3", "A-1-4"], json!([])).await;
    assert_eq!(status, 409, "{late}");
    assert_eq!(
        (&late["error"], &late["refund"], &late["reason"]),
        (
            &json!("seats-unavailable"),
            &json!(true),
            &json!("waitlist")
        ),
        "{late}"
    );
    let (_, refunded) = get_order(&app, &payer).await;
    assert_eq!(refunded["status"], "REFUND_DUE", "{refunded}");
    let after = seats(&app, &ev).await;
    let state_of = |id: &str| {
        let seat = after.iter().find(|s| s.spec.seat_id.as_str() == id);
        seat.map(|s| s.state.clone())
    };
    assert_eq!(
        (state_of("A-1-3"), state_of("A-1-4")),
        (Some(SeatState::Available), Some(SeatState::Available)),
        "a free seat is not taken by a payment outside a hold, and the refunded order's hold is let go"
    );
    // The same payment again: the same answer.
    let again = pay(&app, &payer, "pi-more", &["A-1-3", "A-1-4"], json!([])).await;
    assert_eq!((again.0, &again.1["reason"]), (409, &json!("waitlist")));

    // After the delete the public sale resumes (this app rereads the
    // waitlist on every request; an instance in AWS within a second).
    let gone = send(&app, "DELETE", &format!("/events/{ev}/waitlist"), &[], "").await;
    assert_eq!(gone.0, 200);
    assert_eq!(send(&app, "POST", &uri, &[], "{}").await.0, 201);
    assert_eq!(
        claim(&app, &before, "A-1-4").await.1["error"],
        "order-not-holdable"
    );
}

/// A late payment (the order expired) while only offers take seats takes
/// nothing, though its seats are free: `order-expired`, for the waitlist.
#[tokio::test]
async fn a_late_payment_takes_nothing_while_only_offers_take_seats() {
    let app = fresh_app().await;
    let ev = event(&app, 2, 1).await;
    let late = order(&app, &ev).await;
    assert_eq!(claim(&app, &late, "A-1-1").await.0, 200);
    let_expire(&late).await;
    opened_ago(&app, &ev, 2_000).await;
    let (status, body) = pay(&app, &late, "pi-late", &["A-1-1"], json!([])).await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(
        (&body["error"], &body["refund"], &body["reason"]),
        (&json!("order-expired"), &json!(true), &json!("waitlist"))
    );
    let seat = seats(&app, &ev).await.into_iter().next().unwrap();
    assert!(!matches!(seat.state, SeatState::Sold { .. }), "{seat:?}");
}

/// A queue on the event reads `WAITLIST` while only the waitlist sells:
/// nobody is admitted, its visitors keep their places and are told where
/// the waitlist is, and an admission given before opens no order. After
/// the delete it admits again, from where it stood.
#[tokio::test]
async fn a_queue_admits_nobody_while_only_the_waitlist_sells() {
    use common::queue::{get_queue, join, order_with, put_queue, queue_body, tick};
    let app = fresh_app().await;
    let ev = event(&app, 3, 300).await;
    assert_eq!(put_queue(&app, &ev, &queue_body(-5_000, 60)).await.0, 200);
    let first = join(&app, &ev).await;
    assert_eq!(first.joined["status"], "ADMITTED", "{}", first.joined);
    let second = join(&app, &ev).await;
    opened_ago(&app, &ev, 2_000).await;

    let mut admitter = shared::admitter::Admitter::default();
    let start = shared::world::now();
    let held = tick(&app, &mut admitter, &ev, Millis(start.0 + 2_000)).await;
    assert_eq!((held.status, held.admitted), ("WAITLIST", 0));
    assert_eq!(get_queue(&app, &ev).await.1["status"], "WAITLIST");
    let link = json!(format!("/events/{ev}/waitlist/entries"));
    let (_, waiting) = common::queue::visitor_status(&app, &ev, &second).await;
    assert_eq!(
        (
            &waiting["status"],
            &waiting["position"],
            &waiting["waitlist"]
        ),
        (&json!("WAITING"), &json!(1), &link),
        "{waiting}"
    );
    let third = join(&app, &ev).await;
    assert_eq!(
        (&third.joined["status"], &third.joined["waitlist"]),
        (&json!("WAITING"), &link),
        "{}",
        third.joined
    );
    let admission = first.joined["admissionToken"].as_str().unwrap();
    let (status, refused) = order_with(&app, &ev, admission, None).await;
    assert_eq!((status, &refused["error"]), (409, &json!("waitlist-only")));

    let gone = send(&app, "DELETE", &format!("/events/{ev}/waitlist"), &[], "").await;
    assert_eq!(gone.0, 200);
    let resumed = tick(&app, &mut admitter, &ev, Millis(start.0 + 2_500)).await;
    assert_eq!((resumed.status, resumed.admitted), ("OPEN", 1));
    let (_, admitted) = common::queue::visitor_status(&app, &ev, &second).await;
    assert_eq!(
        admitted["status"], "ADMITTED",
        "the next in line: {admitted}"
    );
    assert!(admitted.get("waitlist").is_none(), "{admitted}");
}

/// A queue beside a waitlist armed for a sell-out: the event sold out is
/// not final for the queue (what comes free goes to the waitlist), so it
/// pauses instead of telling its visitors `SOLD_OUT`, and reads `WAITLIST`
/// once the waitlist sells.
#[tokio::test]
async fn beside_a_waitlist_a_queues_sell_out_is_a_pause() {
    use common::queue::{admitted_order, join, put_queue, queue_body, tick};
    let streaming = testkit::fresh_app_streaming(None).await;
    // The admitter reads the seat map fresh at every tick here.
    let app = shared::App {
        memory: streaming.memory.clone().with_seat_map_cache_ms(0),
        ..streaming.clone()
    };
    let ev = event(&app, 1, 300).await;
    assert_eq!(put_queue(&app, &ev, &queue_body(-5_000, 60)).await.0, 200);
    assert_eq!(put(&app, &ev, json!({"opens": "sold-out"})).await.0, 200);
    let first = join(&app, &ev).await;
    let second = join(&app, &ev).await;
    let buyer = admitted_order(&app, &ev, &first.joined).await;
    assert_eq!(claim(&app, &buyer, "A-1-1").await.0, 200);
    assert_eq!(
        pay(&app, &buyer, "pi-all", &["A-1-1"], json!([])).await.0,
        200
    );
    project(&app).await;
    let (_, open) = get(&app, &ev).await;
    assert_eq!(open["status"], "OPEN", "the projector opened it: {open}");
    let opened_at = common::queue::millis(&open["openedAt"]);

    // The ticks' instants are the test's, from the opening on.
    let mut admitter = shared::admitter::Admitter::default();
    // Within the opening's first second: everything sold, yet paused.
    let paused = tick(&app, &mut admitter, &ev, opened_at).await;
    assert_eq!((paused.status, paused.admitted), ("PAUSED", 0));
    let (_, waiting) = common::queue::visitor_status(&app, &ev, &second).await;
    assert_eq!(waiting["status"], "WAITING", "{waiting}");
    // From the opening plus a second: WAITLIST.
    let held = tick(&app, &mut admitter, &ev, Millis(opened_at.0 + 2_000)).await;
    assert_eq!((held.status, held.admitted), ("WAITLIST", 0));
    let (_, waiting) = common::queue::visitor_status(&app, &ev, &second).await;
    assert_eq!(
        (&waiting["status"], &waiting["position"]),
        (&json!("WAITING"), &json!(1)),
        "{waiting}"
    );
}

/// The Stripe route sells through confirm's path, so the waitlist-only
/// sale holds there too: a late session takes nothing, and its receipt
/// says why.
#[tokio::test]
async fn a_late_stripe_payment_takes_nothing_while_only_offers_take_seats() {
    use common::stripe::{checkout_event, paid_for, session_id, stripe_send};
    let app = fresh_app().await;
    let ev = event(&app, 1, 1).await;
    let late = order(&app, &ev).await;
    assert_eq!(claim(&app, &late, "A-1-1").await.0, 200);
    let_expire(&late).await;
    opened_ago(&app, &ev, 2_000).await;
    let paid = paid_for(&late.id, &["A-1-1"], Value::Null);
    let body = checkout_event(
        shared::handlers::SESSION_COMPLETED,
        &session_id(),
        "paid",
        paid,
    );
    let (status, receipt) = stripe_send(&app, &body).await;
    assert_eq!(status, 200, "{receipt}");
    assert_eq!(
        (
            &receipt["outcome"],
            &receipt["error"],
            &receipt["reason"],
            &receipt["refund"]
        ),
        (
            &json!("not-sold"),
            &json!("order-expired"),
            &json!("waitlist"),
            &json!(true)
        ),
        "{receipt}"
    );
    let seat = seats(&app, &ev).await.into_iter().next().unwrap();
    assert!(!matches!(seat.state, SeatState::Sold { .. }), "{seat:?}");
}
