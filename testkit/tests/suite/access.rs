//! Accessible seats in the plan and its read routes (API.md, "Accessible
//! seats"): wheelchair spaces and companion seats travel with the plan to
//! get-event, list-seats and availability, are part of its identity, and
//! an unsold wheelchair space leaves an event sold out.

use serde_json::{json, Value};

use crate::common::waitlist::put_waitlist;
use crate::common::*;

fn plan(wheelchair: &[u32]) -> String {
    json!({"name": "Access", "holdSeconds": 60, "sections": [{"sectionId": "A", "rows": [
        {"row": "1", "count": 6, "wheelchair": wheelchair, "companion": [4]},
        {"row": "2", "count": 3}]}]})
    .to_string()
}

async fn get(app: &shared::App, uri: &str) -> Value {
    let (status, body) = send(app, "GET", uri, &[], "").await;
    assert_eq!(status, 200, "{uri}: {body}");
    body
}

#[tokio::test]
async fn access_travels_with_the_plan_to_every_read_route() {
    let app = fresh_app().await;
    let (id, _) = create_event(&app, "acc", &plan(&[5, 6])).await;
    let event = get(&app, &format!("/events/{id}")).await;
    let rows = &event["sections"][0]["rows"];
    assert_eq!(
        rows,
        &json!([{"row": "1", "count": 6, "wheelchair": [5, 6], "companion": [4]},
                {"row": "2", "count": 3}]),
        "echoed as sent; a row without access lists none"
    );
    let seats = get(&app, &format!("/events/{id}/seats")).await;
    let access: Vec<Value> = seats["seats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["access"].clone())
        .collect();
    let (w, c, none) = (json!("wheelchair"), json!("companion"), Value::Null);
    assert_eq!(
        access,
        [
            none.clone(),
            none.clone(),
            none.clone(),
            c,
            w.clone(),
            w,
            none.clone(),
            none.clone(),
            none
        ],
        "{seats}"
    );
    let map = get(&app, &format!("/events/{id}/availability")).await;
    let rows = &map["sections"][0]["rows"];
    assert_eq!(
        (&rows[0]["access"], &rows[1].get("access")),
        (&json!("...CWW"), &None),
        "{map}"
    );
    // The same plan again is the same event; other access is another plan.
    let uri = format!("/events/{id}");
    assert_eq!(call(&app, "PUT", &uri, &[], &plan(&[5, 6])).await.0, 201);
    let (status, refused) = call(&app, "PUT", &uri, &[], &plan(&[6, 5])).await;
    assert_eq!(
        (status, refused["error"].as_str()),
        (409, Some("event-exists")),
        "{refused}"
    );
    assert_eq!(
        get(&app, &uri).await["sections"][0]["rows"][0]["wheelchair"],
        json!([5, 6])
    );
}

#[tokio::test]
async fn lists_that_name_no_seat_or_one_twice_are_refused_and_write_nothing() {
    let app = fresh_app().await;
    for wheelchair in [&[7][..], &[0], &[4], &[5, 5]] {
        let uri = format!("/events/acc-bad-{}", uuid::Uuid::new_v4().simple());
        let (status, body) = call(&app, "PUT", &uri, &[], &plan(wheelchair)).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("bad-request")),
            "{wheelchair:?}: {body}"
        );
        let (status, _) = call(&app, "GET", &uri, &[], "").await;
        assert_eq!(status, 404, "{wheelchair:?}: nothing written");
    }
}

/// A put-waitlist that opens at a sell-out opens at once on an event
/// whose only available seat is a wheelchair space (API.md: unsold
/// wheelchair spaces count as unavailable), and not while another seat
/// is available.
#[tokio::test]
async fn an_unsold_wheelchair_space_leaves_an_event_sold_out() {
    let app = testkit::fresh_app_streaming(None).await;
    let plan = json!({"name": "Access", "holdSeconds": 300, "sections": [{"sectionId": "A",
        "rows": [{"row": "1", "count": 3, "wheelchair": [3]}]}]});
    let (id, _) = create_event(&app, "acc", &plan.to_string()).await;
    let follower = follow_stream(&app).await;
    let buyer = order(&app, &id).await;
    assert_eq!(claim(&app, &buyer, "A-1-1").await.0, 200);
    local::streams::project_new(&follower, &app).await.unwrap();
    let armed = put_waitlist(&app, &id, json!({"opens": "sold-out"})).await;
    assert_eq!(armed["status"], "ARMED", "seat 2 is available: {armed}");
    assert_eq!(claim(&app, &buyer, "A-1-2").await.0, 200);
    local::streams::project_new(&follower, &app).await.unwrap();
    let open = put_waitlist(&app, &id, json!({"maxQuantity": 2})).await;
    assert_eq!(
        open["status"], "OPEN",
        "only the wheelchair space is left: {open}"
    );
}

/// best-available never chooses a wheelchair space for a buyer who did
/// not ask for one, and refuses `wheelchair` ≥ 1 for now (0 to quantity
/// by the contract: above quantity is a 400 as well).
#[tokio::test]
async fn best_available_leaves_wheelchair_spaces_to_the_map() {
    let app = fresh_app().await;
    let plan = json!({"name": "Access", "holdSeconds": 300, "sections": [{"sectionId": "A",
        "rows": [{"row": "1", "count": 4, "wheelchair": [1, 2]}]}]});
    let (id, _) = create_event(&app, "acc", &plan.to_string()).await;
    let first = order(&app, &id).await;
    for body in [
        json!({"quantity": 2, "wheelchair": 1}),
        json!({"quantity": 1, "wheelchair": 2}),
    ] {
        let (status, refused) = best(&app, &first, body.clone()).await;
        assert_eq!(
            (status, refused["error"].as_str()),
            (400, Some("bad-request")),
            "{body}: {refused}"
        );
    }
    let (status, block) = best(&app, &first, json!({"quantity": 2, "wheelchair": 0})).await;
    assert_eq!(status, 200, "{block}");
    assert_eq!(
        block["seats"],
        json!(["A-1-3", "A-1-4"]),
        "the block past the wheelchair spaces"
    );
    // Only wheelchair spaces are left: none for best-available, both on the map.
    let second = order(&app, &id).await;
    let (status, none) = best(&app, &second, json!({"quantity": 1})).await;
    assert_eq!(status, 409, "{none}");
    assert_eq!(
        claim(&app, &second, "A-1-1").await.0,
        200,
        "get-seat takes any seat"
    );
}
