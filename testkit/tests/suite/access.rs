//! Accessible seats in the plan and its read routes (API.md, "Accessible
//! seats"): wheelchair spaces and companion seats travel with the plan to
//! get-event, list-seats and availability, are part of its identity, an
//! unsold wheelchair space leaves an event sold out, and best-available
//! chooses by them.

use serde_json::{json, Value};

use crate::common::waitlist::{joined, offer_free, put_waitlist, status_of};
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

/// best-available by the access rules, through the route: asked for
/// wheelchair spaces, exactly that many, the companion seats beside them
/// first; asked for none, never a space (a `409` when only spaces are
/// left, which get-seat still takes); above quantity a `400`; under a key,
/// another count is another request (`422`).
#[tokio::test]
async fn best_available_chooses_by_the_access_rules() {
    let app = fresh_app().await;
    // Row 1: W W . .   Row 2: . . . C W C . .   Row 3: . C C .   Row 4: . . . .
    let plan = json!({"name": "Access", "holdSeconds": 300, "sections": [{"sectionId": "A",
        "rows": [{"row": "1", "count": 4, "wheelchair": [1, 2]},
                 {"row": "2", "count": 8, "wheelchair": [5], "companion": [4, 6]},
                 {"row": "3", "count": 4, "companion": [2, 3]},
                 {"row": "4", "count": 4}]}]});
    let (id, _) = create_event(&app, "acc", &plan.to_string()).await;
    let first = order(&app, &id).await;
    let (status, refused) = best(&app, &first, json!({"quantity": 2, "wheelchair": 3})).await;
    assert_eq!(
        (status, refused["error"].as_str()),
        (400, Some("bad-request")),
        "{refused}"
    );

    let uri = format!("/orders/{}/best-available", first.id);
    let auth = first.auth();
    let keyed = [
        ("authorization", auth.as_str()),
        ("idempotency-key", "space"),
    ];
    let one = json!({"quantity": 2, "wheelchair": 1}).to_string();
    let (status, block) = send(&app, "POST", &uri, &keyed, &one).await;
    assert_eq!(status, 200, "{block}");
    assert_eq!(
        block["seats"],
        json!(["A-2-4", "A-2-5"]),
        "one space and a companion seat, a row behind a space without one"
    );
    let none = json!({"quantity": 2, "wheelchair": 0}).to_string();
    let (status, reused) = send(&app, "POST", &uri, &keyed, &none).await;
    assert_eq!(
        (status, reused["error"].as_str()),
        (422, Some("idempotency-key-reused"))
    );
    assert_eq!(
        send(&app, "POST", &uri, &keyed, &one).await.1["seats"],
        block["seats"]
    );

    // Pairs asked for no space, one after another, each by the rules:
    let expected = [
        (
            ["A-1-3", "A-1-4"],
            "past the spaces, and beside them is no orphan",
        ),
        (
            ["A-4-1", "A-4-2"],
            "no companion seat, before the rows between",
        ),
        (["A-4-3", "A-4-4"], "the same"),
        (
            ["A-3-1", "A-3-2"],
            "companion seats that strand none, before pairs that do",
        ),
        (["A-3-3", "A-3-4"], "the same"),
        (["A-2-2", "A-2-3"], "a pair that strands a seat"),
        (
            ["A-2-7", "A-2-8"],
            "without a companion seat, before a more central one with",
        ),
    ];
    for (seats, rule) in expected {
        let buyer = order(&app, &id).await;
        let (status, block) = best(&app, &buyer, json!({"quantity": 2})).await;
        assert_eq!(
            (status, &block["seats"]),
            (200, &json!(seats)),
            "{rule}: {block}"
        );
    }
    // Only wheelchair spaces and single seats are left: no pair.
    let third = order(&app, &id).await;
    let (status, none) = best(&app, &third, json!({"quantity": 2})).await;
    assert_eq!(status, 409, "{none}");
    assert_eq!(
        claim(&app, &third, "A-1-1").await.0,
        200,
        "get-seat takes any seat"
    );
    testkit::assert_invariants(&app, &id).await;
}

/// The run summaries know each row's clear run: where only wheelchair
/// spaces break the runs, a request for none is refused from them without
/// reading a seat, while a request for one still reads the rows and is
/// served.
#[tokio::test]
async fn the_summaries_refuse_a_request_for_no_space_where_only_spaces_break_the_runs() {
    let counter = local::metrics::RequestCounter::default();
    let app = testkit::fresh_app_streaming(Some(counter.clone())).await;
    // Four rows of 6, a space at seat 3 and seat 6 held: clear runs of 2.
    let rows: Vec<Value> = (1..=4)
        .map(|r| json!({"row": r.to_string(), "count": 6, "wheelchair": [3]}))
        .collect();
    let plan = json!({"name": "Runs", "holdSeconds": 300,
        "sections": [{"sectionId": "A", "rows": rows}]});
    let (id, _) = create_event(&app, "runs", &plan.to_string()).await;
    let holder = order(&app, &id).await;
    for row in 1..=4 {
        assert_eq!(claim(&app, &holder, &format!("A-{row}-6")).await.0, 200);
    }
    local::streams::project_now(&app, &testkit::dynamodb_endpoint())
        .await
        .unwrap();
    let buyer = order(&app, &id).await;
    let app = app.new_process();
    counter.take();
    let (status, refused) = best(&app, &buyer, json!({"quantity": 3})).await;
    assert_eq!(
        (status, refused["error"].as_str()),
        (409, Some("not-enough-seats"))
    );
    let sent = counter.take();
    assert_eq!(sent.get("Query"), None, "no seat read: {sent:?}");
    let (status, block) = best(&app, &buyer, json!({"quantity": 3, "wheelchair": 1})).await;
    assert_eq!(status, 200, "{block}");
    assert_eq!(block["seats"], json!(["A-1-3", "A-1-4", "A-1-5"]));
    assert!(counter.take().contains_key("Query"), "the rows were read");
    testkit::assert_invariants(&app, &id).await;
}

/// Waitlist offers hold exactly the wheelchair spaces asked for: an entry
/// asking for none gets the seats beside the space, and the entry behind
/// it, asking for one, the space and its companion seat.
#[tokio::test]
async fn a_waitlist_offer_holds_exactly_the_wheelchair_spaces_asked_for() {
    let app = fresh_app().await;
    // Row 1: . . W C
    let plan = json!({"name": "Access", "holdSeconds": 300, "sections": [{"sectionId": "A",
        "rows": [{"row": "1", "count": 4, "wheelchair": [3], "companion": [4]}]}]});
    let (ev, _) = create_event(&app, "acc", &plan.to_string()).await;
    put_waitlist(&app, &ev, json!({"opens": "now", "offerSeconds": 120})).await;
    let none = joined(&app, &ev, "user:1", json!({"quantity": 2})).await;
    let space = joined(&app, &ev, "user:2", json!({"quantity": 2, "wheelchair": 1})).await;
    assert_eq!(offer_free(&app, &ev).await, 2);
    for (entry, seats) in [(none, ["A-1-1", "A-1-2"]), (space, ["A-1-3", "A-1-4"])] {
        let offered = status_of(&app, &ev, &entry).await;
        assert_eq!(offered["offer"]["seats"], json!(seats), "{offered}");
    }
}
