//! A waitlist's offers of general-admission places against a real
//! DynamoDB Local: places that come free go to the earliest entries they
//! fill as orders already holding them (taken from the section's buckets
//! in the offer's transaction), pay as any order's places, and a decline
//! gives them back; a give-back reaches the offerer through the stream.

use crate::common;

use common::waitlist::*;
use common::*;
use serde_json::json;

/// The places an entry's offer holds, as its status shows them.
fn offered_places(status: &serde_json::Value) -> (&serde_json::Value, &serde_json::Value) {
    (&status["offer"]["seats"], &status["offer"]["ga"])
}

#[tokio::test]
async fn free_places_are_offered_as_orders_holding_them() {
    let app = testkit::fresh_app_streaming(None).await;
    // Seat A-1-1 and the 10 places of FLOOR, all held before the waitlist
    // opens.
    let ev = ga_event(&app, 1, 10, 300).await;
    let (holder, seated) = (order(&app, &ev).await, order(&app, &ev).await);
    assert_eq!(claim(&app, &seated, "A-1-1").await.0, 200);
    assert_eq!(hold_ga(&app, &holder, "FLOOR", json!(10)).await.0, 200);
    put_waitlist(&app, &ev, json!({"opens": "now", "offerSeconds": 120})).await;
    let three = joined(
        &app,
        &ev,
        "user:1",
        json!({"quantity": 3, "sectionIds": ["FLOOR"]}),
    )
    .await;
    let two = joined(&app, &ev, "user:2", json!({"quantity": 2})).await;
    let seat = joined(&app, &ev, "user:3", json!({"sectionIds": ["A"]})).await;

    // Four places come back: three for the first, and the one left does
    // not fill the second, which keeps its place.
    assert_eq!(hold_ga(&app, &holder, "FLOOR", json!(6)).await.0, 200);
    assert_eq!(offer_free(&app, &ev).await, 1);
    let offered = status_of(&app, &ev, &three).await;
    assert_eq!(offered["status"], "OFFERED", "{offered}");
    assert_eq!(
        offered_places(&offered),
        (&json!([]), &json!([{"sectionId": "FLOOR", "quantity": 3}])),
        "{offered}"
    );
    assert_eq!(status_of(&app, &ev, &two).await["status"], "WAITING");
    let order = offered_order(&offered);
    let (status, read) = get_order(&app, &order).await;
    assert_eq!(
        (status, &read["ga"], &read["waitlistEntryId"]),
        (
            200,
            &json!([{"sectionId": "FLOOR", "quantity": 3}]),
            &three["entryId"]
        ),
        "{read}"
    );
    // Raising its places is a claim of more: an offer holds what it was
    // offered.
    let (status, refused) = hold_ga(&app, &order, "FLOOR", json!(4)).await;
    assert_eq!(
        (status, &refused["error"]),
        (409, &json!("waitlist-only")),
        "{refused}"
    );
    let ga = json!([{"sectionId": "FLOOR", "quantity": 3}]);
    let (status, paid) = pay(&app, &order, "pi_places", &[], ga).await;
    assert_eq!(status, 200, "{paid}");
    assert_eq!(status_of(&app, &ev, &three).await["status"], "PURCHASED");

    // One more place back reaches the offerer through the stream (the
    // projector reads it as its event source would, and counts it for the
    // tick): two places, for the entry asking for two anywhere.
    assert_eq!(hold_ga(&app, &holder, "FLOOR", json!(5)).await.0, 200);
    local::streams::project_now(&app, &testkit::dynamodb_endpoint())
        .await
        .unwrap();
    assert_eq!(tick_now(&app, &ev).await, 1);
    let offered = status_of(&app, &ev, &two).await;
    assert_eq!(
        offered_places(&offered),
        (&json!([]), &json!([{"sectionId": "FLOOR", "quantity": 2}])),
        "{offered}"
    );
    // Its decline gives them back; the entry asking for seat A waits on.
    let declined = leave(&app, &ev, &two).await;
    assert_eq!(declined["reason"], "declined", "{declined}");
    assert_eq!(offer_free(&app, &ev).await, 0);
    assert_eq!(status_of(&app, &ev, &seat).await["status"], "WAITING");
    assert_eq!(
        floor_available(&app, &ev).await,
        2,
        "the declined places are free"
    );
}

/// Two offerers at once over a section's places: every place is offered
/// at most once, to the earliest entries.
#[tokio::test]
async fn two_offerers_at_once_never_offer_a_place_twice() {
    let app = fresh_app().await;
    let ev = ga_event(&app, 1, 10, 300).await;
    let (holder, seated) = (order(&app, &ev).await, order(&app, &ev).await);
    assert_eq!(claim(&app, &seated, "A-1-1").await.0, 200);
    assert_eq!(hold_ga(&app, &holder, "FLOOR", json!(10)).await.0, 200);
    put_waitlist(&app, &ev, json!({"opens": "now", "offerSeconds": 120})).await;
    let mut entries = Vec::new();
    for i in 0..6 {
        let ask = json!({"quantity": 2, "sectionIds": ["FLOOR"]});
        entries.push(joined(&app, &ev, &format!("user:{i}"), ask).await);
    }
    assert_eq!(hold_ga(&app, &holder, "FLOOR", json!(3)).await.0, 200);
    let made = offer_free_at_once(&app, &ev, 4).await;
    // A look slowed past its budget (a loaded machine) leaves the rest to
    // the next, as the tick would take it.
    let made = made + offer_free(&app, &ev).await;
    assert_eq!(made, 3, "seven places make three offers of two");
    the_first_offered(&app, &ev, &entries, 3).await;
    assert_eq!(floor_available(&app, &ev).await, 1);
}

/// FLOOR's available places, as availability shows them.
async fn floor_available(app: &shared::App, event: &str) -> serde_json::Value {
    let uri = format!("/events/{event}/availability");
    let (status, map) = call(app, "GET", &uri, &[], "").await;
    assert_eq!(status, 200, "{map}");
    map["sections"][1]["available"].clone()
}
