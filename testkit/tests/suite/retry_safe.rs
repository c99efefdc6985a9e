//! best-available and hold-ga are safe to send again after a `503` whose
//! transaction landed (its answer lost to the request's deadline): under
//! an `Idempotency-Key` best-available answers with the block the first
//! send got and claims nothing more; hold-ga sets a quantity, so sending it
//! again changes nothing. The lost answers are real: DynamoDB Local's
//! reply to the order's transaction is held back past the request's
//! budget ([`SlowStore`]).

use crate::common;

use std::time::Duration;

use common::*;
use local::faults::SlowStore;
use serde_json::{json, Value};
use shared::store::ORDER_PK_PREFIX;
use shared::App;

/// Transactions on orders answered this late lose their answer to the
/// hurried app's 1.5 s budget, after they landed.
const LATE: Duration = Duration::from_millis(1_700);

/// best-available sent once, with `key` if given.
async fn best_once(app: &App, o: &TestOrder, key: Option<&str>, body: Value) -> Reply {
    let auth = o.auth();
    let mut headers = vec![("authorization", auth.as_str())];
    headers.extend(key.map(|k| ("idempotency-key", k)));
    let uri = format!("/orders/{}/best-available", o.id);
    call_full(app, "POST", &uri, &headers, &body.to_string()).await
}

fn seats_of(reply: &Reply) -> Vec<String> {
    let seats = reply.body["seats"].as_array().expect("seats");
    seats
        .iter()
        .map(|s| s.as_str().unwrap().to_owned())
        .collect()
}

async fn held_by(app: &App, o: &TestOrder) -> Vec<String> {
    let order = stored_order(app, &o.id).await;
    order.seats.iter().map(|s| s.to_string()).collect()
}

fn assert_lost(reply: &Reply) {
    assert_eq!(
        (reply.status, reply.code()),
        (503, "store-unavailable"),
        "{reply:?}"
    );
    assert!(reply.retry_after.is_some(), "{reply:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn best_available_sent_again_under_its_key_answers_the_block_that_landed() {
    let slow = SlowStore::default();
    let (calm, hurried) = calm_and_hurried(&slow).await;
    let ev = rows_event(&calm, 2, 10).await;
    let o = order(&calm, &ev).await;
    let pair = json!({"quantity": 2});

    // The block lands, its answer is lost: 503.
    slow.slow_only("TransactWriteItems", ORDER_PK_PREFIX, Duration::ZERO, LATE);
    assert_lost(&best_once(&hurried, &o, Some("first"), pair.clone()).await);
    slow.set_delay(Duration::ZERO);
    let landed = held_by(&calm, &o).await;
    assert_eq!(landed.len(), 2, "the lost answer's block landed");

    // Sent again under the same key: that block, nothing more claimed.
    let again = best_once(&calm, &o, Some("first"), pair.clone()).await;
    assert_eq!(again.status, 200, "{again:?}");
    assert_eq!(seats_of(&again), landed);
    assert_eq!(held_by(&calm, &o).await, landed);

    // The same key for another request: refused, nothing claimed.
    let other = best_once(&calm, &o, Some("first"), json!({"quantity": 3})).await;
    assert_eq!(
        (other.status, other.code()),
        (422, "idempotency-key-reused")
    );
    let elsewhere = json!({"quantity": 2, "sectionId": "A"});
    let other = best_once(&calm, &o, Some("first"), elsewhere).await;
    assert_eq!(
        (other.status, other.code()),
        (422, "idempotency-key-reused")
    );
    assert_eq!(held_by(&calm, &o).await, landed);

    // Without a key the same lost answer and resend hold a second block:
    // the key is what makes the resend safe.
    let keyless = order(&calm, &ev).await;
    slow.slow_only("TransactWriteItems", ORDER_PK_PREFIX, Duration::ZERO, LATE);
    assert_lost(&best_once(&hurried, &keyless, None, pair.clone()).await);
    slow.set_delay(Duration::ZERO);
    assert_eq!(
        best_once(&calm, &keyless, None, pair.clone()).await.status,
        200
    );
    assert_eq!(held_by(&calm, &keyless).await.len(), 4);

    // A seat of the key's block dropped since: the key's answer no longer
    // holds, so it is refused rather than claimed again.
    assert_eq!(drop_seat(&calm, &o, &landed[0]).await.0, 200);
    let changed = best_once(&calm, &o, Some("first"), pair).await;
    assert_eq!(
        (changed.status, changed.code()),
        (422, "idempotency-key-reused")
    );
    assert_eq!(held_by(&calm, &o).await, landed[1..]);
    testkit::assert_invariants(&calm, &ev).await;
}

/// Sent several times at once under one key (a client retrying before its
/// first answer came): one block is claimed, and every answer names it.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn best_available_sent_at_once_under_one_key_claims_one_block() {
    let app = fresh_app().await;
    let ev = rows_event(&app, 3, 10).await;
    let o = order(&app, &ev).await;
    let mut sends = tokio::task::JoinSet::new();
    for _ in 0..8 {
        let (app, o) = (app.clone(), o.clone());
        sends.spawn(async move { best_once(&app, &o, Some("once"), json!({"quantity": 2})).await });
    }
    let replies = sends.join_all().await;
    let held = held_by(&app, &o).await;
    assert_eq!(held.len(), 2, "one block: {replies:?}");
    for reply in &replies {
        match reply.status {
            200 => assert_eq!(seats_of(reply), held, "{reply:?}"),
            _ => assert_lost(reply),
        }
    }
    assert!(replies.iter().any(|r| r.status == 200));
    testkit::assert_invariants(&app, &ev).await;
}

/// hold-ga sets a quantity: sent again after its answer was lost, it finds
/// the places already there and changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn hold_ga_sent_again_after_a_lost_answer_holds_the_quantity_once() {
    let slow = SlowStore::default();
    let (calm, hurried) = calm_and_hurried(&slow).await;
    let ev = ga_event(&calm, 4, 50, 600).await;
    let o = order(&calm, &ev).await;
    let uri = format!("/orders/{}/ga/FLOOR", o.id);
    let auth = o.auth();
    let set = |app: &App, quantity: u32| {
        let (app, uri, auth) = (app.clone(), uri.clone(), auth.clone());
        let body = json!({ "quantity": quantity }).to_string();
        async move { call_full(&app, "PUT", &uri, &[("authorization", &auth)], &body).await }
    };
    let places = |app: &App| {
        let (app, id) = (app.clone(), o.id.clone());
        async move {
            let order = stored_order(&app, &id).await;
            order.places.iter().map(|p| p.quantity).sum::<u32>()
        }
    };
    slow.slow_only("TransactWriteItems", ORDER_PK_PREFIX, Duration::ZERO, LATE);
    assert_lost(&set(&hurried, 3).await);
    slow.set_delay(Duration::ZERO);
    assert_eq!(places(&calm).await, 3, "the lost answer's places landed");
    let again = set(&calm, 3).await;
    assert_eq!(
        (again.status, again.body["quantity"].as_u64()),
        (200, Some(3)),
        "{again:?}"
    );
    assert_eq!(places(&calm).await, 3, "sent again, held once");
    testkit::assert_invariants(&calm, &ev).await;
}

/// create-order sent once to an event without a queue, with `headers`.
async fn create_once(app: &App, ev: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    call_full(app, "POST", &format!("/events/{ev}/orders"), headers, body).await
}

/// The id of the order a bare `key` names on `ev`, derived as the app
/// derives it (the tests' apps hold the development keys).
fn bare_key_order(ev: &str, key: &str) -> String {
    let event = shared::domain::EventId::parse(ev).expect("an event id");
    let (random, _) = local::apps::dev_hold_token_keys().idempotent_order(
        shared::auth::IdempotencyScope::Bare,
        key,
        &event,
    );
    shared::domain::OrderId::from_random(&event, random).to_string()
}

/// Without a queue create-order is safe to send again under an
/// `Idempotency-Key`: a lost answer's order is the answer to the resend,
/// with a token that works on it; another body is `422` and tells nothing
/// of it; a key that stands alone must be long enough to be unguessable;
/// and a buyer's key is the buyer's, so another buyer's same key opens
/// another order.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn create_order_sent_again_under_its_key_answers_the_order_that_landed() {
    let slow = SlowStore::default();
    let (calm, hurried) = calm_and_hurried(&slow).await;
    let ev = event(&calm, 4, 300).await;
    let key = "k7Qx2Lm9Pz4Rt8Vw1Ys6Na"; // 22 characters
    let keyed = [("idempotency-key", key)];
    let alice = r#"{"userId": "alice"}"#;

    // The order lands, its answer is lost: 503.
    slow.slow_only("UpdateItem", ORDER_PK_PREFIX, Duration::ZERO, LATE);
    assert_lost(&create_once(&hurried, &ev, &keyed, alice).await);
    slow.set_delay(Duration::ZERO);
    let landed = bare_key_order(&ev, key);
    let stored = stored_order(&calm, &landed).await;
    assert_eq!(
        stored.user_id.as_deref(),
        Some("alice"),
        "the lost answer's order landed"
    );

    // Sent again: that order, 201, and its token works on it.
    let again = create_once(&calm, &ev, &keyed, alice).await;
    assert_eq!(again.status, 201, "{again:?}");
    let o = TestOrder::from_reply(&again.body);
    assert_eq!(o.id, landed, "the resend answers the order that landed");
    local::invariants::remember_order(&calm, &o.id);
    assert_eq!(claim(&calm, &o, "A-1-1").await.0, 200);
    let third = create_once(&calm, &ev, &keyed, alice).await;
    assert_eq!(third.body["orderId"], again.body["orderId"]);

    // Another body under the key: 422, nothing of the first order.
    for other in [r#"{"userId": "mallory"}"#, "{}"] {
        let refused = create_once(&calm, &ev, &keyed, other).await;
        assert_eq!(
            (refused.status, refused.code()),
            (422, "idempotency-key-reused")
        );
        let text = refused.body.to_string();
        assert!(
            !text.contains(o.id.as_str()) && !text.contains("holdToken"),
            "{text}"
        );
    }
    // A bare key one character short: 400, nothing written.
    let short = [("idempotency-key", &key[1..])];
    let refused = create_once(&calm, &ev, &short, alice).await;
    assert_eq!(
        (refused.status, refused.code()),
        (400, "bad-request"),
        "{refused:?}"
    );
    testkit::assert_invariants(&calm, &ev).await;
}

/// On an event with a buyer limit the key is scoped to the buyer token's
/// buyer: a short key is enough, the buyer's resend finds its order, and
/// another buyer sending the same key opens an order of its own.
#[tokio::test]
async fn a_buyers_idempotency_key_is_the_buyers_own() {
    let app = fresh_app().await;
    let plan = json!({"name": "Limited", "holdSeconds": 300, "buyerLimit": 4,
        "sections": [{"sectionId": "A", "rows": [{"row": "1", "count": 4}]}]});
    let (ev, _) = create_event(&app, "ik", &plan.to_string()).await;
    let open = |buyer: &str| {
        let token = buyer_token(&ev, buyer);
        let (app, ev) = (app.clone(), ev.clone());
        async move {
            let headers = [("idempotency-key", "k1"), ("x-buyer-token", token.as_str())];
            create_once(&app, &ev, &headers, "{}").await
        }
    };
    let first = open("user:1").await;
    assert_eq!(first.status, 201, "{first:?}");
    let again = open("user:1").await;
    assert_eq!(again.body["orderId"], first.body["orderId"]);
    let other = open("user:2").await;
    assert_eq!(other.status, 201, "{other:?}");
    assert_ne!(other.body["orderId"], first.body["orderId"]);
    for reply in [&first, &other] {
        local::invariants::remember_order(&app, reply.body["orderId"].as_str().unwrap());
    }
    testkit::assert_invariants(&app, &ev).await;
}

/// An order id under an admission is derived from the admission and the
/// `Idempotency-Key`: the same order found again is the answer (not
/// counted twice), but an order of that id with another token (a 128-bit
/// collision, or an item written by something else) is never handed out:
/// `401` naming `admission-order-exists`, and nothing is counted.
#[tokio::test]
async fn an_admitted_orders_id_held_by_another_order_is_refused_by_name() {
    let app = fresh_app().await;
    let ev = event(&app, 1, 300).await;
    let head = shared::domain::EventHead {
        event_id: shared::domain::EventId::parse(&ev).unwrap(),
        hold_seconds: 300,
        seat_count: 1,
        buyer_limit: None,
        buyer_key: None,
    };
    let now = shared::world::now();
    let guard = app.config.expiry_guard_ms;
    let (order, _) = shared::handlers::open_order(&head, now, guard, None).unwrap();
    let expires = now.plus_seconds(600);
    let store = &app.store;
    assert!(store
        .create_admitted_order(&order, "adm-1", 2, expires)
        .await
        .unwrap());
    assert!(
        !store
            .create_admitted_order(&order, "adm-1", 2, expires)
            .await
            .unwrap(),
        "the same order again: found, not written or counted again"
    );
    let mut other = order.clone();
    other.token_hash = "0".repeat(64);
    let refused = store
        .create_admitted_order(&other, "adm-1", 2, expires)
        .await;
    match refused {
        Err(e) => assert_eq!(e.reason().map(|r| r.code()), Some("admission-order-exists")),
        Ok(landed) => panic!("another order's id was handed out ({landed})"),
    }
    // The admission counted one order: a second, new one still opens.
    let (second, _) = shared::handlers::open_order(&head, now, guard, None).unwrap();
    assert!(store
        .create_admitted_order(&second, "adm-1", 2, expires)
        .await
        .unwrap());
    let (third, _) = shared::handlers::open_order(&head, now, guard, None).unwrap();
    let used = store
        .create_admitted_order(&third, "adm-1", 2, expires)
        .await;
    assert!(
        matches!(used, Err(shared::Error::AdmissionUsed)),
        "{:?}",
        used.err()
    );
}
