//! A waitlist's offers on an event with a buyer limit, against a real
//! DynamoDB Local: an offer counts toward its buyer's limit in its own
//! transaction (the buyer's record holds it, and a payment sells it); an
//! entry whose offer would take its buyer over the limit ends
//! (`buyer-limit`) and the next is served.

use crate::common;

use common::waitlist::*;
use common::*;
use serde_json::json;
use shared::domain::buyer::BuyerId;
use shared::domain::buyer_limit::LimitedBuyer;
use shared::domain::{EventId, EventRef, Millis};

const LIMIT: u32 = 2;

/// A limited event of one row of 4 seats whose first `held` seats
/// `holder` holds through an ordinary order, then an open waitlist.
async fn limited_event(app: &shared::App, holder: &str, held: u32) -> (String, TestOrder) {
    let plan = json!({"name": "L", "buyerLimit": LIMIT, "holdSeconds": 300,
        "sections": [{"sectionId": "A", "rows": [{"row": "1", "count": 4}]}]});
    let (ev, _) = create_event(app, "lim", &plan.to_string()).await;
    let order = buyer_order(app, &ev, holder).await;
    for seat in 1..=held {
        assert_eq!(claim(app, &order, &format!("A-1-{seat}")).await.0, 200);
    }
    put_waitlist(app, &ev, json!({"opens": "now", "offerSeconds": 120})).await;
    (ev, order)
}

/// The waitlist of `event` as if opened a minute from now: open to joins,
/// and the public sale not waitlist-only yet (it starts a second after the
/// opening), so a buyer can still claim after joining.
async fn opening_soon(app: &shared::App, event: &str) {
    opened_ago(app, event, -60_000).await;
}

/// What `buyer`'s record of `event` counts at `at` (held and sold).
async fn counted_at(app: &shared::App, event: &str, buyer: &str, at: Millis) -> u32 {
    let id = EventId::parse(event).unwrap();
    let head = app.event_head(&id).await.unwrap().unwrap();
    let buyer = BuyerId::parse(buyer).unwrap();
    let draw = app.config.draw_secrets().unwrap();
    let limited = LimitedBuyer {
        buyer: shared::buyer::buyer_ref(draw, &head, &buyer).unwrap(),
        limit: LIMIT,
    };
    let record = app.store.buyer_count(&EventRef::of(&id), &limited).await;
    record.unwrap().counted(at)
}

/// What `buyer`'s record of `event` counts now.
async fn counted(app: &shared::App, event: &str, buyer: &str) -> u32 {
    counted_at(app, event, buyer, shared::world::now()).await
}

#[tokio::test]
async fn an_entry_over_its_buyers_limit_ends_and_the_next_is_offered() {
    let app = fresh_app().await;
    let (ev, holder) = limited_event(&app, "user:1", 1).await;
    opening_soon(&app, &ev).await;
    // user:1 joins for one more within its limit, then claims it itself:
    // an offer would now take it over.
    let over = joined(&app, &ev, "user:1", json!({})).await;
    assert_eq!(claim(&app, &holder, "A-1-2").await.0, 200);
    let next = joined(&app, &ev, "user:2", json!({"quantity": 2})).await;
    assert_eq!(offer_free(&app, &ev).await, 1);
    let ended = status_of(&app, &ev, &over).await;
    assert_eq!(
        (&ended["status"], &ended["reason"]),
        (&json!("ENDED"), &json!("buyer-limit")),
        "{ended}"
    );
    let offered = status_of(&app, &ev, &next).await;
    assert_eq!(offered["status"], "OFFERED", "{offered}");
    assert_eq!(counted(&app, &ev, "user:2").await, 2, "the offer counts");
    assert_eq!(counted(&app, &ev, "user:1").await, 2);
}

#[tokio::test]
async fn an_offer_within_the_limit_is_counted_and_a_drop_gives_it_back() {
    let app = fresh_app().await;
    let (ev, _) = limited_event(&app, "user:1", 1).await;
    let entry = joined(&app, &ev, "user:1", json!({})).await;
    assert_eq!(offer_free(&app, &ev).await, 1);
    let offered = status_of(&app, &ev, &entry).await;
    assert_eq!(offered["status"], "OFFERED", "{offered}");
    assert_eq!(
        counted(&app, &ev, "user:1").await,
        2,
        "its hold and the offer"
    );
    // The offer's token names the buyer: a drop releases its count.
    let order = offered_order(&offered);
    let seat = offered["offer"]["seats"][0].as_str().unwrap().to_owned();
    assert_eq!(drop_seat(&app, &order, &seat).await.0, 200);
    assert_eq!(counted(&app, &ev, "user:1").await, 1);
}

#[tokio::test]
async fn a_declined_offer_gives_its_count_back() {
    let app = fresh_app().await;
    let (ev, _) = limited_event(&app, "user:1", 0).await;
    let entry = joined(&app, &ev, "user:1", json!({"quantity": 2})).await;
    assert_eq!(offer_free(&app, &ev).await, 1);
    assert_eq!(counted(&app, &ev, "user:1").await, 2);
    let declined = leave(&app, &ev, &entry).await;
    assert_eq!(declined["reason"], "declined", "{declined}");
    assert_eq!(counted(&app, &ev, "user:1").await, 0);
}

#[tokio::test]
async fn a_paid_offer_sells_under_the_limit() {
    let app = fresh_app().await;
    let (ev, _) = limited_event(&app, "user:1", 0).await;
    let entry = joined(&app, &ev, "user:3", json!({"quantity": 2})).await;
    assert_eq!(offer_free(&app, &ev).await, 1);
    let offered = status_of(&app, &ev, &entry).await;
    let order = offered_order(&offered);
    let (status, paid) = confirm(&app, &order.id, "pi_limited_offer").await;
    assert_eq!(
        (status, &paid["status"]),
        (200, &json!("COMPLETED")),
        "{paid}"
    );
    assert_eq!(status_of(&app, &ev, &entry).await["status"], "PURCHASED");
    // Past the offer's expiry only what was sold counts.
    let expired = chrono::DateTime::parse_from_rfc3339(&order.expires_at).unwrap();
    let after = Millis(expired.timestamp_millis() + 1);
    assert_eq!(
        counted_at(&app, &ev, "user:3", after).await,
        2,
        "sold for good"
    );
}
