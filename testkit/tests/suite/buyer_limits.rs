//! Buyer limits on DynamoDB Local: what one buyer holds and owns of an
//! event never passes its `buyerLimit`, checked in each claim's own
//! transaction, across orders, function instances, seats and places,
//! releases, expiries and both confirm paths.

use crate::common;

use common::queue::instance;
use common::{
    buyer_order, buyer_token, call, call_full, claim, create_event, drop_seat, extend, fresh_app,
    get_order, hold_ga, send, TestOrder,
};
use serde_json::{json, Value};
use shared::domain::buyer::BuyerId;
use shared::domain::buyer_limit::{BuyerRef, LimitedBuyer};
use shared::domain::{EventId, EventRef, Millis};
use shared::error::Error;
use shared::App;

const BUYER: &str = "user:42";

/// An event of one row A-1 of `seats` seats (and a general-admission
/// FLOOR of `places`, if any) whose buyers may hold and own `limit`.
async fn limited_event(app: &App, seats: u32, places: u32, limit: u32) -> String {
    let mut sections = vec![json!({"sectionId": "A", "rows": [{"row": "1", "count": seats}]})];
    if places > 0 {
        sections.push(json!({"sectionId": "FLOOR", "capacity": places}));
    }
    let plan =
        json!({"name": "Limited", "holdSeconds": 300, "buyerLimit": limit, "sections": sections});
    let (id, body) = create_event(app, "bl", &plan.to_string()).await;
    assert_eq!(body["buyerLimit"], json!(limit), "{body}");
    id
}

/// Two orders of `event` by [`BUYER`].
async fn two_orders(app: &App, event: &str) -> (TestOrder, TestOrder) {
    (
        buyer_order(app, event, BUYER).await,
        buyer_order(app, event, BUYER).await,
    )
}

/// Whose record counts `buyer` on `event`, as create-order keys it.
async fn buyer_ref(app: &App, event: &str, buyer: &str) -> BuyerRef {
    let head = app
        .event_head(&EventId::parse(event).unwrap())
        .await
        .unwrap()
        .unwrap();
    let buyer = BuyerId::parse(buyer).unwrap();
    let draw = app.config.draw_secrets.as_ref().unwrap();
    shared::buyer::buyer_ref(draw, &head, &buyer).unwrap()
}

/// What `buyer` holds and owns of `event` now, as its record counts it.
async fn counted(app: &App, event: &str, buyer: &str, limit: u32) -> u32 {
    let event_id = EventId::parse(event).unwrap();
    let limited = LimitedBuyer {
        buyer: buyer_ref(app, event, buyer).await,
        limit,
    };
    let count = app
        .store
        .buyer_count(&EventRef::of(&event_id), &limited)
        .await
        .unwrap();
    count.counted(shared::world::now())
}

/// How many of `event`'s seats `orders` hold.
async fn seats_held_by(app: &App, event: &str, orders: &[TestOrder]) -> usize {
    let seats = common::seats(app, event).await;
    seats
        .iter()
        .filter(|s| {
            matches!(&s.state, shared::domain::SeatState::Held { order, .. }
                if orders.iter().any(|o| o.id == order.as_str()))
        })
        .count()
}

fn assert_buyer_limit(reply: &(u16, Value), limit: u32) {
    assert_eq!(reply.0, 409, "{}", reply.1);
    assert_eq!(reply.1["error"], "buyer-limit", "{}", reply.1);
    assert_eq!(reply.1["limit"], json!(limit), "{}", reply.1);
}

#[tokio::test]
async fn orders_of_a_limited_event_need_a_buyer() {
    let app = fresh_app().await;
    let ev = limited_event(&app, 4, 0, 2).await;
    let uri = format!("/events/{ev}/orders");
    let (status, body) = call(&app, "POST", &uri, &[], "{}").await;
    assert_eq!(
        (status, body["error"].as_str()),
        (401, Some("buyer-token-required"))
    );
    let wrong_event = buyer_token("another-event", BUYER);
    let (status, body) = call(&app, "POST", &uri, &[("x-buyer-token", &wrong_event)], "{}").await;
    assert_eq!(
        (status, body["error"].as_str()),
        (401, Some("buyer-token-invalid"))
    );
    let o = buyer_order(&app, &ev, BUYER).await;
    let (status, body) = get_order(&app, &o).await;
    assert_eq!((status, &body["buyerId"]), (200, &json!(BUYER)), "{body}");
    // An event without a limit ignores the header, and names no buyer.
    let (free, _) = create_event(&app, "nl", &common::plan(&[("A", "1", 2)], Some(300))).await;
    let token = buyer_token(&free, BUYER);
    let free_uri = format!("/events/{free}/orders");
    let (status, body) = call(&app, "POST", &free_uri, &[("x-buyer-token", "junk")], "{}").await;
    assert_eq!(status, 201, "{body}");
    let (status, body) = call(&app, "POST", &free_uri, &[("x-buyer-token", &token)], "{}").await;
    assert_eq!(status, 201, "{body}");
    let (_, read) = get_order(&app, &TestOrder::from_reply(&body)).await;
    assert!(read.get("buyerId").is_none(), "{read}");
}

/// 100 claims at once by one buyer's 10 orders, each order on a function
/// instance of its own, offered 100 seats under a limit of 6: exactly 6
/// held, every other answer `buyer-limit` (or a 503 resent).
#[tokio::test]
async fn concurrent_claims_by_one_buyers_orders_end_at_exactly_the_limit() {
    let app = fresh_app().await;
    let limit = 6;
    // Seat 101 is for another buyer: any six of the first 100 may be held.
    let ev = limited_event(&app, 101, 0, limit).await;
    let counter = local::metrics::RequestCounter::default();
    let mut orders = Vec::new();
    for _ in 0..10 {
        orders.push(buyer_order(&app, &ev, BUYER).await);
    }
    let mut tasks = tokio::task::JoinSet::new();
    for (i, o) in orders.iter().enumerate() {
        let instance = instance(&app, &counter);
        for k in 0..10 {
            let (instance, o) = (instance.clone(), o.clone());
            let seat = format!("A-1-{}", i * 10 + k + 1);
            tasks.spawn(async move { claim(&instance, &o, &seat).await });
        }
    }
    let replies = tasks.join_all().await;
    let held = replies.iter().filter(|(s, _)| *s == 200).count();
    assert_eq!(held, limit as usize, "{replies:?}");
    for reply in replies.iter().filter(|(s, _)| *s != 200) {
        assert_buyer_limit(reply, limit);
        assert!(reply.1["counted"].as_u64().unwrap() <= u64::from(limit));
    }
    assert_eq!(seats_held_by(&app, &ev, &orders).await, limit as usize);
    assert_eq!(counted(&app, &ev, BUYER, limit).await, limit);
    // Another buyer is not counted with this one.
    let other = buyer_order(&app, &ev, "user:43").await;
    let reply = claim(&app, &other, "A-1-101").await;
    assert_eq!(reply.0, 200, "{}", reply.1);
    testkit::assert_invariants(&app, &ev).await;
}

/// A hold counts until its `expiresAt` to the millisecond (a claim at
/// exactly that instant does not count it), and an extension moves that
/// instant.
#[tokio::test]
async fn a_hold_counts_until_its_expiry_and_an_extension_moves_it() {
    let app = fresh_app().await;
    let ev = limited_event(&app, 6, 0, 1).await;
    // a expires in 8 s, b (the event's 300 s) outlives it: b's claims at
    // a's expiry are within b's own hold.
    let a = short_order(&app, &ev, 8, 1).await;
    let b = buyer_order(&app, &ev, BUYER).await;
    assert_eq!(claim(&app, &a, "A-1-1").await.0, 200);
    let at = a.hold_token().expires_at();
    let b_token = b.hold_token();
    let seat = shared::domain::SeatId::parse("A-1-2").unwrap();
    let claim_at = |now: i64| {
        let (app, b, b_token, seat) = (app.clone(), b.clone(), b_token.clone(), seat.clone());
        async move {
            shared::handlers::claim_exactly(&app, &b.order_id(), &b_token, &seat, 10, Millis(now))
                .await
        }
    };
    let refused = claim_at(at.0 - 1).await;
    assert!(
        matches!(
            refused,
            Err(Error::BuyerLimit {
                limit: 1,
                counted: 1
            })
        ),
        "{refused:?}"
    );
    // Extended, a's seat counts until its new expiry.
    let (status, body) = extend(&app, &a, r#"{"seconds": 60}"#).await;
    assert_eq!(status, 200, "{body}");
    let extended = chrono::DateTime::parse_from_rfc3339(body["expiresAt"].as_str().unwrap())
        .unwrap()
        .timestamp_millis();
    assert!(extended > at.0 + 30_000, "{body}");
    for now in [at.0, extended - 1] {
        let refused = claim_at(now).await;
        assert!(
            matches!(refused, Err(Error::BuyerLimit { .. })),
            "{refused:?}"
        );
    }
    // At exactly the new expiry it counts no more.
    let held = claim_at(extended).await;
    assert!(held.is_ok(), "{held:?}");
}

/// drop-seat and cancel-order free their units at once; a re-claim of a
/// held seat is never refused for the limit.
#[tokio::test]
async fn drop_and_cancel_free_units_at_once() {
    let app = fresh_app().await;
    let ev = limited_event(&app, 6, 0, 2).await;
    let (a, b) = two_orders(&app, &ev).await;
    assert_eq!(claim(&app, &a, "A-1-1").await.0, 200);
    assert_eq!(claim(&app, &a, "A-1-2").await.0, 200);
    assert_buyer_limit(&claim(&app, &b, "A-1-3").await, 2);
    assert_eq!(claim(&app, &a, "A-1-2").await.0, 200, "a re-claim");
    assert_eq!(drop_seat(&app, &a, "A-1-2").await.0, 200);
    assert_eq!(claim(&app, &b, "A-1-3").await.0, 200);
    assert_buyer_limit(&claim(&app, &b, "A-1-4").await, 2);
    assert_eq!(common::cancel(&app, &a).await.0, 200);
    assert_eq!(claim(&app, &b, "A-1-4").await.0, 200);
    assert_eq!(counted(&app, &ev, BUYER, 2).await, 2);
    testkit::assert_invariants(&app, &ev).await;
}

/// Seats and general-admission places count together; hold-ga and
/// best-available are all or nothing.
#[tokio::test]
async fn seats_and_places_count_together_all_or_nothing() {
    let app = fresh_app().await;
    let ev = limited_event(&app, 10, 50, 4).await;
    let (a, b) = two_orders(&app, &ev).await;
    assert_eq!(claim(&app, &a, "A-1-1").await.0, 200);
    let (status, body) = common::best(&app, &a, json!({"quantity": 2})).await;
    assert_eq!(status, 200, "{body}");
    let refused = hold_ga(&app, &b, "FLOOR", json!(2)).await;
    assert_buyer_limit(&refused, 4);
    assert_eq!(refused.1["counted"], json!(3));
    assert_eq!(hold_ga(&app, &b, "FLOOR", json!(1)).await.0, 200);
    assert_buyer_limit(&common::best(&app, &b, json!({"quantity": 2})).await, 4);
    assert_buyer_limit(&claim(&app, &b, "A-1-9").await, 4);
    // Giving places back frees them.
    assert_eq!(hold_ga(&app, &b, "FLOOR", json!(0)).await.0, 200);
    assert_eq!(claim(&app, &b, "A-1-9").await.0, 200);
    assert_eq!(counted(&app, &ev, BUYER, 4).await, 4);
    assert_eq!(seats_held_by(&app, &ev, &[a, b]).await, 4);
    testkit::assert_invariants(&app, &ev).await;
}

/// Both confirm paths: a payment for exactly what a live order holds
/// completes (and counts for good); a payment that would take units the
/// order does not hold past the limit takes none and is refunded with
/// `reason: buyer-limit`.
#[tokio::test]
async fn confirm_sells_within_the_limit_and_refunds_past_it() {
    let app = fresh_app().await;
    let ev = limited_event(&app, 10, 0, 3).await;
    let (a, b) = two_orders(&app, &ev).await;
    assert_eq!(claim(&app, &a, "A-1-1").await.0, 200);
    assert_eq!(claim(&app, &a, "A-1-2").await.0, 200);
    assert_eq!(claim(&app, &b, "A-1-3").await.0, 200);
    // b pays for its seat and one it does not hold: 2 + 2 > 3.
    let paid = ["A-1-3".to_owned(), "A-1-4".to_owned()];
    let (status, body) = common::confirm_seats(&app, &b.id, "pi_over", &paid).await;
    assert_eq!(
        (
            status,
            body["error"].as_str(),
            body["reason"].as_str(),
            body["refund"].as_bool()
        ),
        (
            409,
            Some("seats-unavailable"),
            Some("buyer-limit"),
            Some(true)
        ),
        "{body}"
    );
    let free = common::seats(&app, &ev).await;
    assert!(free
        .iter()
        .any(|s| s.spec.seat_id.as_str() == "A-1-4"
            && s.state == shared::domain::SeatState::Available));
    // a pays for exactly what it holds: sold, and counted for good.
    let held = ["A-1-1".to_owned(), "A-1-2".to_owned()];
    let (status, body) = common::confirm_seats(&app, &a.id, "pi_a", &held).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(counted(&app, &ev, BUYER, 3).await, 2);
    let c = buyer_order(&app, &ev, BUYER).await;
    assert_eq!(claim(&app, &c, "A-1-5").await.0, 200);
    assert_buyer_limit(&claim(&app, &c, "A-1-6").await, 3);
    testkit::assert_invariants(&app, &ev).await;
}

/// A late payment re-taking expired seats: only within the limit.
#[tokio::test]
async fn a_late_payment_past_the_limit_takes_nothing() {
    let app = fresh_app().await;
    let ev = limited_event(&app, 10, 0, 2).await;
    let late = short_order(&app, &ev, 1, 2).await;
    assert_eq!(claim(&app, &late, "A-1-1").await.0, 200);
    common::let_expire(&late).await;
    let other = buyer_order(&app, &ev, BUYER).await;
    assert_eq!(claim(&app, &other, "A-1-2").await.0, 200);
    assert_eq!(claim(&app, &other, "A-1-3").await.0, 200);
    let paid = ["A-1-1".to_owned()];
    let (status, body) = common::confirm_seats(&app, &late.id, "pi_late", &paid).await;
    assert_eq!(
        (status, body["error"].as_str(), body["reason"].as_str()),
        (409, Some("order-expired"), Some("buyer-limit")),
        "{body}"
    );
    // Within the limit, the same late payment completes.
    assert_eq!(drop_seat(&app, &other, "A-1-3").await.0, 200);
    let late2 = short_order(&app, &ev, 1, 2).await;
    assert_eq!(claim(&app, &late2, "A-1-4").await.0, 200);
    common::let_expire(&late2).await;
    let paid = ["A-1-4".to_owned()];
    let (status, body) = common::confirm_seats(&app, &late2.id, "pi_late2", &paid).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(counted(&app, &ev, BUYER, 2).await, 2);
    testkit::assert_invariants(&app, &ev).await;
}

/// An order of `BUYER` expiring `seconds` from now, written as
/// create-order writes it (the event's hold is longer).
async fn short_order(app: &App, event: &str, seconds: u32, limit: u32) -> TestOrder {
    let head = shared::domain::EventHead {
        hold_seconds: seconds,
        buyer_limit: Some(limit),
        ..app
            .event_head(&EventId::parse(event).unwrap())
            .await
            .unwrap()
            .unwrap()
            .as_ref()
            .clone()
    };
    let now = shared::world::now();
    let (mut order, token) =
        shared::handlers::open_order(&head, now, app.config.expiry_guard_ms, None).unwrap();
    order.buyer = Some(shared::domain::OrderBuyer {
        buyer_id: BuyerId::parse(BUYER).unwrap(),
        limit,
        buyer_ref: buyer_ref(app, event, BUYER).await,
    });
    app.store.create_order(&order).await.unwrap();
    local::invariants::remember_order(app, order.order_id.as_str());
    let token = token.for_buyer(order.limited_buyer());
    TestOrder {
        id: order.order_id.to_string(),
        token: local::apps::dev_hold_token_keys().encode(&order.order_id, &token),
        expires_at: order.expires_at.to_rfc3339(),
        created_at: order.created_at.to_rfc3339(),
    }
}

/// A buyer at its limit who keeps clicking is refused from the instance's
/// memory after three refusals within a second, without touching its
/// record (no transaction); the order and the seat are still read, so a
/// sold seat is still `seat-sold` and a held seat's re-claim still `200`.
#[tokio::test]
async fn a_buyer_clicking_at_its_limit_is_refused_from_memory() {
    let app = fresh_app().await;
    let ev = limited_event(&app, 10, 0, 1).await;
    let (a, b) = two_orders(&app, &ev).await;
    assert_eq!(claim(&app, &a, "A-1-1").await.0, 200);
    let rival = buyer_order(&app, &ev, "user:99").await;
    assert_eq!(claim(&app, &rival, "A-1-9").await.0, 200);
    let counter = local::metrics::RequestCounter::default();
    let clicker = instance(&app, &counter);
    for seat in ["A-1-2", "A-1-3", "A-1-4"] {
        assert_buyer_limit(&claim(&clicker, &b, seat).await, 1);
    }
    counter.take();
    for seat in ["A-1-5", "A-1-6", "A-1-7"] {
        assert_buyer_limit(&claim(&clicker, &b, seat).await, 1);
    }
    let sent = counter.take();
    assert_eq!(
        sent.get("TransactWriteItems"),
        None,
        "refused from memory: {sent:?}"
    );
    assert_eq!(
        sent.get("GetItem"),
        Some(&6),
        "the order and the seat, each time: {sent:?}"
    );
    // Another refusal comes first even so.
    let (status, body) = claim(&clicker, &b, "A-1-9").await;
    assert_eq!(
        (status, body["error"].as_str()),
        (409, Some("seat-held")),
        "{body}"
    );
    // The buyer moves its hold to b through another instance: b's claim of
    // its own seat is never refused from memory.
    assert_eq!(drop_seat(&app, &a, "A-1-1").await.0, 200);
    assert_eq!(claim(&app, &b, "A-1-8").await.0, 200);
    assert_eq!(claim(&clicker, &b, "A-1-8").await.0, 200);
}

/// A first claim over the limit (no record yet) is refused by the
/// transaction's check, and writes nothing.
#[tokio::test]
async fn a_first_claim_over_the_limit_writes_nothing() {
    let app = fresh_app().await;
    let ev = limited_event(&app, 10, 20, 2).await;
    let o = buyer_order(&app, &ev, BUYER).await;
    let refused = common::best(&app, &o, json!({"quantity": 3})).await;
    assert_buyer_limit(&refused, 2);
    assert_eq!(refused.1["counted"], json!(0));
    assert_buyer_limit(&hold_ga(&app, &o, "FLOOR", json!(3)).await, 2);
    assert_eq!(seats_held_by(&app, &ev, std::slice::from_ref(&o)).await, 0);
    assert_eq!(counted(&app, &ev, BUYER, 2).await, 0);
    assert_eq!(hold_ga(&app, &o, "FLOOR", json!(2)).await.0, 200);
    assert_eq!(counted(&app, &ev, BUYER, 2).await, 2);
}

/// Throttles and transaction conflicts on the buyer's record: a 503 with
/// `Retry-After` or a retried success, never over the limit, never a lost
/// count.
#[tokio::test]
async fn faults_on_the_buyers_record_never_break_the_limit() {
    use local::faults::Fault;
    let faults = local::faults::FaultInjector::default();
    let app = testkit::fresh_app_with(local::faults::production_client(
        &testkit::dynamodb_endpoint(),
        [faults.shared()],
    ))
    .await;
    let ev = limited_event(&app, 20, 0, 2).await;
    let (a, b) = two_orders(&app, &ev).await;
    let uri = |o: &TestOrder, seat: &str| format!("/orders/{}/seats/{seat}", o.id);
    // A conflict on the record (item 3: seat, order, buyer) is another of
    // the buyer's writes: read again, and the claim lands.
    faults.reset();
    faults.fail(
        "TransactWriteItems",
        Fault::TransactionCanceled(vec!["None", "None", "TransactionConflict"]),
        Some(2),
    );
    let auth = a.auth();
    let reply = call_full(
        &app,
        "POST",
        &uri(&a, "A-1-1"),
        &[("authorization", &auth)],
        "",
    )
    .await;
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(faults.injected("TransactWriteItems"), 2);
    // The record's read throttled for good: 503, nothing written.
    faults.reset();
    faults.fail("GetItem", Fault::Throttling, None);
    let reply = call_full(
        &app,
        "POST",
        &uri(&a, "A-1-2"),
        &[("authorization", &auth)],
        "",
    )
    .await;
    assert_eq!(
        (reply.status, reply.code()),
        (503, "store-unavailable"),
        "{reply:?}"
    );
    assert!(reply.retry_after.is_some());
    // The record throttled inside the transaction: 503 too.
    faults.reset();
    faults.fail(
        "TransactWriteItems",
        Fault::TransactionCanceled(vec!["None", "None", "ThrottlingError"]),
        None,
    );
    let reply = call_full(
        &app,
        "POST",
        &uri(&a, "A-1-2"),
        &[("authorization", &auth)],
        "",
    )
    .await;
    assert_eq!(
        (reply.status, reply.code()),
        (503, "store-unavailable"),
        "{reply:?}"
    );
    faults.reset();
    assert_eq!(counted(&app, &ev, BUYER, 2).await, 1);
    // Faults at random under a race of both orders: never over, never lost.
    faults.fail(
        "TransactWriteItems",
        Fault::TransactionCanceled(vec!["None", "None", "TransactionConflict"]),
        Some(10),
    );
    faults.fail("GetItem", Fault::ProvisionedThroughputExceeded, Some(10));
    let mut tasks = tokio::task::JoinSet::new();
    for k in 2..=19 {
        let (app, o) = (app.clone(), if k % 2 == 0 { a.clone() } else { b.clone() });
        tasks.spawn(async move {
            send(
                &app,
                "POST",
                &format!("/orders/{}/seats/A-1-{k}", o.id),
                &[("authorization", &o.auth())],
                "",
            )
            .await
        });
    }
    let replies = tasks.join_all().await;
    faults.reset();
    assert_eq!(
        replies.iter().filter(|(s, _)| *s == 200).count(),
        1,
        "{replies:?}"
    );
    assert_eq!(seats_held_by(&app, &ev, &[a, b]).await, 2);
    assert_eq!(counted(&app, &ev, BUYER, 2).await, 2);
    testkit::assert_invariants(&app, &ev).await;
}

/// Slow calls on the buyer's record, past the request's budget: a record
/// read answered late is a 503 with `Retry-After` at the deadline and
/// nothing written; a claim whose transaction landed but whose answer came
/// too late is a 503 too, and the retry finds the seat already its own
/// (200, counted once). A crowd of such claims ends within the limit,
/// every held seat counted.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn slow_calls_on_the_buyers_record_are_503_and_never_miscount() {
    use local::faults::SlowStore;
    use shared::store::BUYER_PK_PREFIX;
    use std::time::Duration;
    let slow = SlowStore::default();
    // `calm` keeps the default budget for everything on time; `hurried`
    // answers at 1.5 s, before the slow calls' 1.7 s.
    let (calm, hurried) = common::calm_and_hurried(&slow).await;
    let late = Duration::from_millis(1_700);
    let ev = limited_event(&calm, 20, 0, 2).await;
    let (a, b) = two_orders(&calm, &ev).await;
    let claim_full = |app: &App, o: &TestOrder, seat: &str| {
        let (app, uri, auth) = (
            app.clone(),
            format!("/orders/{}/seats/{seat}", o.id),
            o.auth(),
        );
        async move { call_full(&app, "POST", &uri, &[("authorization", &auth)], "").await }
    };
    let assert_503 = |reply: &common::Reply| {
        assert_eq!(
            (reply.status, reply.code()),
            (503, "store-unavailable"),
            "{reply:?}"
        );
        assert!(reply.retry_after.is_some(), "{reply:?}");
    };
    // The record's read, later than the budget: nothing written.
    slow.slow_only("GetItem", BUYER_PK_PREFIX, late, Duration::ZERO);
    assert_503(&claim_full(&hurried, &a, "A-1-1").await);
    slow.set_delay(Duration::ZERO);
    assert_eq!(seats_held_by(&calm, &ev, &[a.clone(), b.clone()]).await, 0);
    assert_eq!(counted(&calm, &ev, BUYER, 2).await, 0);
    // The claim's transaction lands, its answer too late: 503, then the
    // retry is a re-claim, answered 200, and the seat counts once.
    slow.slow_only("TransactWriteItems", BUYER_PK_PREFIX, Duration::ZERO, late);
    assert_503(&claim_full(&hurried, &a, "A-1-1").await);
    slow.set_delay(Duration::ZERO);
    assert_eq!(counted(&calm, &ev, BUYER, 2).await, 1);
    assert_eq!(claim(&calm, &a, "A-1-1").await.0, 200);
    assert_eq!(counted(&calm, &ev, BUYER, 2).await, 1);
    // Both orders claim at once, every answer lost to the deadline: one
    // claim lands (the record reaches the limit), none past it.
    slow.slow_only("TransactWriteItems", BUYER_PK_PREFIX, Duration::ZERO, late);
    let seats: Vec<String> = (2..=9).map(|k| format!("A-1-{k}")).collect();
    let crowd = |app: &App| {
        let mut tasks = tokio::task::JoinSet::new();
        for (k, seat) in seats.iter().enumerate() {
            let o = if k % 2 == 0 { &a } else { &b };
            tasks.spawn(claim_full(app, o, seat));
        }
        tasks.join_all()
    };
    let lost = crowd(&hurried).await;
    slow.set_delay(Duration::ZERO);
    let statuses: Vec<u16> = lost.iter().map(|r| r.status).collect();
    eprintln!("answers lost to the deadline: {statuses:?}");
    lost.iter().for_each(assert_503);
    assert_eq!(counted(&calm, &ev, BUYER, 2).await, 2, "one landed");
    // Sent again on time: the one that landed is a re-claim, the rest
    // `buyer-limit`.
    let again = crowd(&calm).await;
    for reply in again.iter().filter(|r| r.status != 200) {
        assert_eq!(reply.code(), "buyer-limit", "{reply:?}");
    }
    assert_eq!(again.iter().filter(|r| r.status == 200).count(), 1);
    let held = seats_held_by(&calm, &ev, &[a.clone(), b.clone()]).await;
    assert_eq!((held, counted(&calm, &ev, BUYER, 2).await), (2, 2));
    testkit::assert_invariants(&calm, &ev).await;
}

/// confirm's last round lets go of the order's other holds only after its
/// transaction: until they are let go of they still count (when letting go
/// fails, until the order's expiry), and then they stop counting.
#[tokio::test]
async fn confirms_last_round_counts_its_other_holds_until_it_lets_go() {
    for letting_go_fails in [false, true] {
        last_round_confirm(letting_go_fails).await;
    }
}

async fn last_round_confirm(letting_go_fails: bool) {
    use local::faults::Fault;
    let faults = local::faults::FaultInjector::default();
    let app = testkit::fresh_app_with(local::faults::production_client(
        &testkit::dynamodb_endpoint(),
        [faults.shared()],
    ))
    .await;
    let ev = limited_event(&app, 10, 0, 4).await;
    let o = buyer_order(&app, &ev, BUYER).await;
    for seat in ["A-1-1", "A-1-2", "A-1-3", "A-1-4"] {
        assert_eq!(claim(&app, &o, seat).await.0, 200);
    }
    // The no-read attempt and three ordinary rounds refused: the fourth,
    // the last, pays A-1-1 and lets the three others go after it.
    faults.reset();
    faults.fail(
        "TransactWriteItems",
        Fault::TransactionCanceled(vec!["ConditionalCheckFailed"; 7]),
        Some(4),
    );
    if letting_go_fails {
        faults.fail("UpdateItem", Fault::Throttling, None);
    }
    let paid = ["A-1-1".to_owned()];
    let body = common::confirm_body(&o.id, "pi_last", &paid);
    let headers = common::signed(&body);
    let uri = format!("/orders/{}/confirm", o.id);
    let (status, reply) = call(&app, "POST", &uri, &common::as_refs(&headers), &body).await;
    assert_eq!(
        (status, reply["status"].as_str()),
        (200, Some("COMPLETED")),
        "{reply}"
    );
    assert_eq!(faults.injected("TransactWriteItems"), 4);
    faults.reset();
    let other = buyer_order(&app, &ev, BUYER).await;
    if letting_go_fails {
        // Still held by the completed order: still counted.
        assert_eq!(seats_held_by(&app, &ev, std::slice::from_ref(&o)).await, 3);
        assert_eq!(counted(&app, &ev, BUYER, 4).await, 4);
        assert_buyer_limit(&claim(&app, &other, "A-1-5").await, 4);
        return;
    }
    assert_eq!(
        counted(&app, &ev, BUYER, 4).await,
        1,
        "the others were let go of"
    );
    for seat in ["A-1-2", "A-1-3", "A-1-4"] {
        assert_eq!(claim(&app, &other, seat).await.0, 200);
    }
    assert_buyer_limit(&claim(&app, &other, "A-1-5").await, 4);
    testkit::assert_invariants(&app, &ev).await;
}

/// A limited event keeps the `DRAW_SECRET` key it was created with: its
/// buyers' records are keyed under it (a `BUYER#` key is not the plain
/// hash anyone computes from the ids), a rotation leaves its counts whole
/// (the limit still holds across orders opened before and after it), and
/// an event created after the rotation takes the new key. An event
/// created before keyed refs (no key on its item) keeps the plain ref.
#[tokio::test]
async fn buyer_records_are_keyed_by_the_events_own_key_through_a_rotation() {
    use shared::auth::DrawSecrets;
    let app = fresh_app().await;
    let old = app.config.draw_secrets.clone().unwrap();
    let ev = limited_event(&app, 10, 0, 2).await;
    let event_id = EventId::parse(&ev).unwrap();
    let head = app.event_head(&event_id).await.unwrap().unwrap();
    assert_eq!(head.buyer_key, Some(old.current_version()));
    let buyer = BuyerId::parse(BUYER).unwrap();
    let keyed = buyer_ref(&app, &ev, BUYER).await;
    assert_ne!(
        keyed,
        BuyerRef::unkeyed(&event_id, &buyer),
        "not the plain hash"
    );
    let first = buyer_order(&app, &ev, BUYER).await;
    assert_eq!(claim(&app, &first, "A-1-1").await.0, 200);
    assert_eq!(claim(&app, &first, "A-1-2").await.0, 200);
    // A new key first, the old one kept: the event's orders still count
    // on the record the old key named.
    let mut rotated = app.clone();
    let new_key = "c2VhdGNsYWltLXRlc3Qtcm90YXRlZC1kcmF3LWtleS0zMmI=";
    rotated.config.draw_secrets = Some(
        DrawSecrets::parse(&format!(
            "{new_key} {}",
            local::apps::DEV_DRAW_SECRET.trim()
        ))
        .unwrap(),
    );
    assert_ne!(
        rotated
            .config
            .draw_secrets
            .as_ref()
            .unwrap()
            .current_version(),
        old.current_version()
    );
    let second = buyer_order(&rotated, &ev, BUYER).await;
    assert_buyer_limit(&claim(&rotated, &second, "A-1-3").await, 2);
    assert_eq!(counted(&rotated, &ev, BUYER, 2).await, 2);
    // An event created now takes the new key.
    let newer = limited_event(&rotated, 5, 0, 2).await;
    let newer_head = rotated
        .event_head(&EventId::parse(&newer).unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        newer_head.buyer_key,
        Some(
            rotated
                .config
                .draw_secrets
                .as_ref()
                .unwrap()
                .current_version()
        )
    );
    // An event from before keyed refs: its item names no key.
    let legacy = limited_event(&app, 5, 0, 2).await;
    let legacy_id = EventId::parse(&legacy).unwrap();
    app.store
        .client()
        .update_item()
        .table_name(app.store.table_name())
        .set_key(Some(shared::store::event_item_key(&legacy_id)))
        .update_expression("REMOVE buyerKey")
        .send()
        .await
        .unwrap();
    let fresh = app.new_process();
    let order = buyer_order(&fresh, &legacy, BUYER).await;
    let stored = fresh
        .store
        .get_order(&shared::domain::OrderId::parse(&order.id).unwrap())
        .await
        .unwrap()
        .unwrap()
        .order;
    assert_eq!(
        stored.buyer.unwrap().buyer_ref,
        BuyerRef::unkeyed(&legacy_id, &buyer),
        "today's ref, as its records have it"
    );
}
