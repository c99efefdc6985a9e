//! The waitlist's operator routes against a real DynamoDB Local: a put and
//! what a put again keeps, `opens` only while armed, the refusals that
//! change nothing, get-waitlist's reply, and a delete that ends a
//! generation (again the same `200`) and a put after it that starts the next.

use crate::common;

use common::*;
use serde_json::{json, Value};

fn path(event: &str) -> String {
    format!("/events/{event}/waitlist")
}

async fn put(app: &shared::App, event: &str, body: Value) -> (u16, Value) {
    send(app, "PUT", &path(event), &[], &body.to_string()).await
}

async fn get(app: &shared::App, event: &str) -> (u16, Value) {
    send(app, "GET", &path(event), &[], "").await
}

async fn delete(app: &shared::App, event: &str) -> (u16, Value) {
    send(app, "DELETE", &path(event), &[], "").await
}

#[tokio::test]
async fn a_put_again_keeps_what_it_leaves_out_and_opens_moves_only_while_armed() {
    let app = fresh_app().await;
    let ev = ga_event(&app, 2, 5, 300).await;
    assert_eq!(get(&app, &ev).await.1["error"], "waitlist-not-found");
    let (status, armed) = put(&app, &ev, json!({"opens": "sold-out", "offerSeconds": 300})).await;
    assert_eq!(status, 200, "{armed}");
    // No entry fits anything yet: every free seat and place is unoffered.
    assert_eq!(
        armed,
        json!({"eventId": ev, "status": "ARMED", "opens": "sold-out", "offerSeconds": 300,
               "maxQuantity": 10, "generation": 1, "waiting": 0, "offered": 0,
               "purchased": 0, "unoffered": 7})
    );
    let close = "2030-01-01T00:00:00.000Z";
    let (_, again) = put(
        &app,
        &ev,
        json!({"maxQuantity": 4, "returnsCloseAt": close}),
    )
    .await;
    assert_eq!(
        (
            &again["offerSeconds"],
            &again["maxQuantity"],
            &again["returnsCloseAt"]
        ),
        (&json!(300), &json!(4), &json!(close)),
        "{again}"
    );
    // Armed: opening now opens it at the put.
    let before = shared::world::now();
    let (_, open) = put(&app, &ev, json!({"opens": "now"})).await;
    assert_eq!(
        (&open["status"], &open["generation"]),
        (&json!("OPEN"), &json!(1))
    );
    let opened = chrono::DateTime::parse_from_rfc3339(open["openedAt"].as_str().unwrap())
        .unwrap()
        .timestamp_millis();
    assert!(opened >= before.0, "{open}");
    // Open: the same value is no change, another is 409 and changes nothing.
    assert_eq!(put(&app, &ev, json!({"opens": "now"})).await.1, open);
    let (status, refused) = put(&app, &ev, json!({"opens": "sold-out"})).await;
    assert_eq!(
        (status, refused["error"].as_str()),
        (409, Some("waitlist-open"))
    );
    let (_, ends) = put(&app, &ev, json!({"returnsCloseAt": null})).await;
    assert!(
        ends.get("returnsCloseAt").is_none(),
        "null ends returns: {ends}"
    );
    assert_eq!(get(&app, &ev).await.1, ends);
}

#[tokio::test]
async fn bad_puts_are_400_and_change_nothing() {
    let app = fresh_app().await;
    let ev = event(&app, 1, 300).await;
    let refused = [
        json!({}),
        json!({"opens": "later"}),
        json!({"opens": "now", "offerSeconds": 59}),
        json!({"opens": "now", "offerSeconds": 3601}),
        json!({"opens": "now", "maxQuantity": 0}),
        json!({"opens": "now", "maxQuantity": 11}),
        json!({"opens": "now", "returnsCloseAt": "tomorrow"}),
        json!({"opens": "now", "offerSeconds": "600"}),
    ];
    for body in &refused {
        let (status, reply) = put(&app, &ev, body.clone()).await;
        assert_eq!(
            (status, reply["error"].as_str()),
            (400, Some("bad-request")),
            "{body}: {reply}"
        );
    }
    assert_eq!(get(&app, &ev).await.0, 404, "nothing was written");
    assert_eq!(put(&app, &ev, json!({"opens": "sold-out"})).await.0, 200);
    for body in &refused[2..] {
        assert_eq!(put(&app, &ev, body.clone()).await.0, 400, "{body}");
    }
    let (_, kept) = get(&app, &ev).await;
    assert_eq!(
        (&kept["status"], &kept["offerSeconds"]),
        (&json!("ARMED"), &json!(600))
    );
    let (status, reply) = put(&app, "no-such-event", json!({"opens": "now"})).await;
    assert_eq!(
        (status, reply["error"].as_str()),
        (404, Some("event-not-found"))
    );
}

#[tokio::test]
async fn a_delete_ends_the_generation_and_a_put_after_it_starts_the_next() {
    let app = fresh_app().await;
    let ev = event(&app, 1, 300).await;
    let ended = json!({"eventId": ev, "status": "ENDED"});
    // None to delete: the same 200, and still none.
    assert_eq!(delete(&app, &ev).await, (200, ended.clone()));
    assert_eq!(get(&app, &ev).await.0, 404);
    assert_eq!(
        put(&app, &ev, json!({"opens": "now", "maxQuantity": 2}))
            .await
            .0,
        200
    );
    assert_eq!(delete(&app, &ev).await, (200, ended.clone()));
    assert_eq!(
        delete(&app, &ev).await,
        (200, ended.clone()),
        "again the same"
    );
    let (_, gone) = get(&app, &ev).await;
    assert_eq!(
        (&gone["status"], &gone["generation"]),
        (&json!("ENDED"), &json!(1))
    );
    // A put after it must say when it opens, and starts a new generation
    // with the defaults.
    assert_eq!(put(&app, &ev, json!({"maxQuantity": 3})).await.0, 400);
    let (_, next) = put(&app, &ev, json!({"opens": "sold-out"})).await;
    assert_eq!(
        (
            &next["status"],
            &next["generation"],
            &next["maxQuantity"],
            next.get("openedAt")
        ),
        (&json!("ARMED"), &json!(2), &json!(10), None),
        "{next}"
    );
    assert_eq!(delete(&app, "no-such-event").await.0, 404);
}

/// Puts that race over one waitlist, half changing `offerSeconds` and
/// half `maxQuantity`: each keeps what it leaves out, so none may undo
/// another's field (a lost update would put a default back).
#[tokio::test]
async fn puts_at_once_each_land_whole() {
    let app = fresh_app().await;
    let ev = event(&app, 1, 300).await;
    assert_eq!(put(&app, &ev, json!({"opens": "sold-out"})).await.0, 200);
    let puts = (0..20u32).map(|i| {
        let (app, ev) = (&app, &ev);
        let body = match i % 2 {
            0 => json!({"offerSeconds": 700 + i}),
            _ => json!({"maxQuantity": 1 + i % 9}),
        };
        async move { put(app, ev, body).await }
    });
    let replies = futures_util::future::join_all(puts).await;
    assert!(
        replies.iter().all(|(status, _)| *status == 200),
        "{replies:?}"
    );
    let (_, stored) = get(&app, &ev).await;
    let offer_seconds = stored["offerSeconds"].as_u64().unwrap();
    let max_quantity = stored["maxQuantity"].as_u64().unwrap();
    assert!(
        (700..720).contains(&offer_seconds),
        "no default put back: {stored}"
    );
    assert!(max_quantity < 10, "no default put back: {stored}");
    assert_eq!(stored["generation"], 1);
}
