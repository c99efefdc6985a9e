//! A listing of places counts them on its resale item, as a bucket of
//! their own (capacity, sold, free, one hold per offer, a version), so
//! offers can each hold some of one listing: what a listing, more places,
//! a withdrawal and a listing made again write there, against a real
//! DynamoDB Local.

use crate::common;
use crate::returns::{bought, list, taking_returns, withdraw};

use aws_sdk_dynamodb::types::AttributeValue;
use common::*;
use serde_json::json;
use shared::domain::returns::{ListedPlaces, PlacesItemRead};
use shared::domain::{EventId, OrderId, SectionId};

/// The seller's listed places of FLOOR as their item counts them.
async fn floor_item(app: &shared::App, ev: &str, seller: &TestOrder) -> Option<ListedPlaces> {
    let (event, seller) = (
        EventId::parse(ev).unwrap(),
        OrderId::parse(&seller.id).unwrap(),
    );
    let floor = SectionId::parse("FLOOR").unwrap();
    app.store
        .listed_places(&event, &seller, &floor)
        .await
        .unwrap()
}

/// (capacity, sold, free, version, holds) of the item.
fn counts(item: &ListedPlaces) -> (u32, u32, u32, Option<u64>, usize) {
    let p = &item.places;
    (p.capacity, p.sold, p.free, item.version, p.holds.len())
}

/// An offer's hold of one place on the item until `until_ms`, written as
/// an offer's take writes it (free one less, the version one more).
async fn hold_one(app: &shared::App, ev: &str, seller: &TestOrder, until_ms: i64) {
    let key = floor_key(ev, seller);
    let hold = raw_place_hold(1, until_ms);
    app.store
        .client()
        .update_item()
        .table_name(app.store.table_name())
        .set_key(Some(key))
        .update_expression("SET #h = :h ADD #free :minus, #v :one")
        .expression_attribute_names("#h", "hold#offer-1")
        .expression_attribute_names("#free", "free")
        .expression_attribute_names("#v", "v")
        .expression_attribute_values(":h", hold)
        .expression_attribute_values(":minus", AttributeValue::N("-1".into()))
        .expression_attribute_values(":one", AttributeValue::N("1".into()))
        .send()
        .await
        .unwrap();
}

/// Listing places makes their item; more places add to it; a live
/// offer's hold refuses the withdrawal (`409 return-offered`) until it
/// expires; the withdrawal then deletes the item.
#[tokio::test]
async fn a_listing_of_places_counts_them_and_an_offers_hold_keeps_it() {
    let app = fresh_app().await;
    let (ev, seller) = bought(&app).await;
    taking_returns(&app, &ev, 3_600).await;
    let two = json!({"ga": [{"sectionId": "FLOOR", "quantity": 2}]});
    assert_eq!(list(&app, &seller, two).await.0, 200);
    let item = floor_item(&app, &ev, &seller).await.unwrap();
    assert_eq!(counts(&item), (2, 0, 2, Some(1), 0));

    let until = chrono::Utc::now().timestamp_millis() + 1_500;
    hold_one(&app, &ev, &seller, until).await;
    let one = json!({"ga": [{"sectionId": "FLOOR", "quantity": 1}]});
    let (status, more) = list(&app, &seller, one).await;
    assert_eq!(
        (status, &more["returns"][0]["quantity"]),
        (200, &json!(3)),
        "{more}"
    );
    let item = floor_item(&app, &ev, &seller).await.unwrap();
    assert_eq!(
        counts(&item),
        (3, 0, 2, Some(3), 1),
        "the offer's hold stays"
    );

    let (status, body) = withdraw(&app, &seller, "ga/FLOOR").await;
    assert_eq!(
        (status, body["error"].as_str()),
        (409, Some("return-offered"))
    );
    // Let the offer's hold expire.
    let left = until - chrono::Utc::now().timestamp_millis();
    tokio::time::sleep(std::time::Duration::from_millis(left.max(0) as u64 + 100)).await;
    let (status, body) = withdraw(&app, &seller, "ga/FLOOR").await;
    assert_eq!(
        (status, &body["returns"][0]["status"]),
        (200, &json!("WITHDRAWN")),
        "{body}"
    );
    assert!(floor_item(&app, &ev, &seller).await.is_none(), "deleted");
}

/// An earlier listing's item that outlived it (an offer held some when
/// it reverted): listed again while that hold is live, `409
/// return-offered`; once it has expired, the item is made again whole,
/// its stale hold removed.
#[tokio::test]
async fn a_listing_made_again_replaces_what_an_earlier_one_left() {
    let app = fresh_app().await;
    let (ev, seller) = bought(&app).await;
    taking_returns(&app, &ev, 3_600).await;
    let two = json!({"ga": [{"sectionId": "FLOOR", "quantity": 2}]});
    assert_eq!(list(&app, &seller, two.clone()).await.0, 200);
    let until = chrono::Utc::now().timestamp_millis() + 1_500;
    hold_one(&app, &ev, &seller, until).await;
    let (status, _) = withdraw(&app, &seller, "ga/FLOOR").await;
    assert_eq!(status, 409, "held");
    // The listing withdrawn by its record alone, as a revert that found
    // the item held leaves it: the record reads WITHDRAWN, the item stays.
    let order = OrderId::parse(&seller.id).unwrap();
    let listings = app.store.read_listings(&order).await.unwrap();
    let stored = app.store.get_order(&order).await.unwrap().unwrap();
    let (unit, version) = (&listings[0].unit, listings[0].version);
    let now = shared::world::now();
    let written = app
        .store
        .withdraw_listing(&stored.order, unit, version, PlacesItemRead::Absent, now)
        .await
        .unwrap();
    assert!(written, "the record withdrawn, no item named");
    assert!(floor_item(&app, &ev, &seller).await.is_some());

    let (status, body) = list(&app, &seller, two.clone()).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (409, Some("return-offered")),
        "{body}"
    );
    let left = until - chrono::Utc::now().timestamp_millis();
    tokio::time::sleep(std::time::Duration::from_millis(left.max(0) as u64 + 100)).await;
    let (status, body) = list(&app, &seller, two).await;
    assert_eq!(status, 200, "{body}");
    let item = floor_item(&app, &ev, &seller).await.unwrap();
    assert_eq!(
        counts(&item),
        (2, 0, 2, Some(3), 0),
        "whole again, the stale hold gone"
    );
}

/// A listing of places whose item was written before places were counted
/// (no counts, no version): withdrawn as it is, and listed again whole.
#[tokio::test]
async fn an_item_from_before_places_were_counted_is_withdrawn_and_made_again() {
    let app = fresh_app().await;
    let (ev, seller) = bought(&app).await;
    taking_returns(&app, &ev, 3_600).await;
    let two = json!({"ga": [{"sectionId": "FLOOR", "quantity": 2}]});
    assert_eq!(list(&app, &seller, two.clone()).await.0, 200);
    uncount(&app, &ev, &seller).await;
    let item = floor_item(&app, &ev, &seller).await.unwrap();
    assert_eq!(counts(&item), (0, 0, 0, None, 0), "as such an item reads");

    let one = json!({"ga": [{"sectionId": "FLOOR", "quantity": 1}]});
    assert_eq!(list(&app, &seller, one).await.0, 200, "more, over it");
    let item = floor_item(&app, &ev, &seller).await.unwrap();
    assert_eq!(counts(&item), (3, 0, 3, Some(1), 0), "counted whole");

    // Withdrawn while uncounted: deleted as it is.
    uncount(&app, &ev, &seller).await;
    let (status, body) = withdraw(&app, &seller, "ga/FLOOR").await;
    assert_eq!(status, 200, "{body}");
    assert!(floor_item(&app, &ev, &seller).await.is_none());
}

/// The seller's FLOOR item as one written before places were counted:
/// no counts, no version.
async fn uncount(app: &shared::App, ev: &str, seller: &TestOrder) {
    let key = floor_key(ev, seller);
    app.store
        .client()
        .update_item()
        .table_name(app.store.table_name())
        .set_key(Some(key))
        .update_expression("REMOVE #c, #s, #f, #v")
        .expression_attribute_names("#c", "capacity")
        .expression_attribute_names("#s", "sold")
        .expression_attribute_names("#f", "free")
        .expression_attribute_names("#v", "v")
        .send()
        .await
        .unwrap();
}

/// The key of the seller's FLOOR item, for raw writes.
fn floor_key(ev: &str, seller: &TestOrder) -> RawItem {
    shared::store::listed_places_item_key(
        &EventId::parse(ev).unwrap(),
        &OrderId::parse(&seller.id).unwrap(),
        &SectionId::parse("FLOOR").unwrap(),
    )
}
