//! The waitlist's events out, read from DynamoDB Local's real stream and
//! published by publish-events' own code: a whole waitlist's life gives
//! each of its events exactly once (the state's copies repeat nothing),
//! each with its entry, its order where it has one, and its reason.

use crate::common;

use std::collections::BTreeSet;

use common::events::{publish, stream_records};
use common::waitlist::*;
use common::*;
use local::feed::DevFeed;
use serde_json::{json, Value};
use shared::domain::EventId;

#[tokio::test]
async fn a_waitlists_life_says_each_of_its_events_once() {
    let app = testkit::fresh_app_streaming(None).await;
    let ev = event(&app, 3, 300).await;
    put_waitlist(&app, &ev, json!({"opens": "now", "offerSeconds": 120})).await;
    // Settings put again: no event.
    put_waitlist(&app, &ev, json!({"offerSeconds": 180})).await;
    let mut entries = Vec::new();
    for buyer in ["user:a", "user:b", "user:c", "user:d"] {
        entries.push(joined(&app, &ev, buyer, json!({})).await);
    }
    // The fourth leaves while waiting; the first three are offered a seat.
    leave(&app, &ev, &entries[3]).await;
    let made =
        shared::offerer::offer_free(&app, &EventId::parse(&ev).unwrap(), shared::world::now())
            .await
            .unwrap()
            .made;
    assert_eq!(made, 3);
    let order_of = |entry: &Value| {
        let app = app.clone();
        let ev = ev.clone();
        let entry = entry.clone();
        async move {
            let status = status_of(&app, &ev, &entry).await;
            status["offer"]["orderId"].as_str().unwrap().to_owned()
        }
    };
    let bought = order_of(&entries[0]).await;
    assert_eq!(confirm(&app, &bought, "pi_wl_1").await.0, 200);
    leave(&app, &ev, &entries[1]).await;
    let removal = json!({"entryId": entries[2]["entryId"]}).to_string();
    let removals = format!("/events/{ev}/waitlist/removals");
    assert_eq!(send(&app, "POST", &removals, &[], &removal).await.0, 200);
    let deleted = send(&app, "DELETE", &format!("/events/{ev}/waitlist"), &[], "").await;
    assert_eq!(deleted.0, 200);

    let records = stream_records(&app).await;
    let waitlist_events = |feed: DevFeed| -> Vec<(String, Value)> {
        feed.events()
            .into_iter()
            .filter(|(t, _)| t.starts_with("waitlist."))
            .collect()
    };
    let feed = DevFeed::quiet();
    let out = publish(&feed, &records).await;
    assert_eq!(out.failed_records, Vec::<String>::new());
    let events = waitlist_events(feed);
    // The same records again (a redelivery) give the same events, ids
    // included.
    let again = DevFeed::quiet();
    publish(&again, &records).await;
    assert_eq!(waitlist_events(again), events);
    let id = |entry: &Value| entry["entryId"].as_str().unwrap().to_owned();
    let said: Vec<(String, String, String)> = events
        .iter()
        .map(|(t, d)| {
            let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
            (t.clone(), text(&d["entryId"]), text(&d["reason"]))
        })
        .collect();
    let mut want = vec![("waitlist.opened".to_owned(), String::new(), String::new())];
    for entry in &entries {
        want.push(("waitlist.joined".into(), id(entry), String::new()));
    }
    want.push(("waitlist.ended".into(), id(&entries[3]), "left".into()));
    for entry in &entries[..3] {
        want.push(("waitlist.offered".into(), id(entry), String::new()));
    }
    want.push(("waitlist.purchased".into(), id(&entries[0]), String::new()));
    want.push(("waitlist.ended".into(), id(&entries[1]), "declined".into()));
    want.push(("waitlist.ended".into(), id(&entries[2]), "removed".into()));
    want.push(("waitlist.closed".into(), String::new(), String::new()));
    let (mut got, mut expected) = (said.clone(), want);
    got.sort();
    expected.sort();
    assert_eq!(got, expected, "{said:#?}");
    // Distinct ids; the buyer named, never a token; the offer's
    // order and expiry on waitlist.offered.
    let ids: BTreeSet<&str> = events
        .iter()
        .map(|(_, d)| d["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), events.len());
    for (kind, detail) in &events {
        assert_eq!(detail["eventId"], json!(ev), "{detail}");
        if kind != "waitlist.opened" && kind != "waitlist.closed" {
            assert!(
                detail["buyerId"]
                    .as_str()
                    .is_some_and(|b| b.starts_with("user:")),
                "{detail}"
            );
        }
        for entry in &entries {
            let token = entry["entryToken"].as_str().unwrap();
            assert!(!detail.to_string().contains(token), "no token on the bus");
        }
    }
    let offered = events
        .iter()
        .find(|(t, d)| t == "waitlist.offered" && d["entryId"] == entries[0]["entryId"])
        .map(|(_, d)| d)
        .unwrap();
    assert_eq!(
        (
            offered["orderId"].as_str(),
            offered["expiresAt"].is_string()
        ),
        (Some(bought.as_str()), true)
    );
    let closed = events.iter().find(|(t, _)| t == "waitlist.closed").unwrap();
    assert_eq!(closed.1["generation"], json!(1));
}
