//! A waiting entry's position and the waitlist's count of waiting entries,
//! kept by the offerer's tick against a real DynamoDB Local: the entries
//! that joined in earlier seconds and still wait, counted again as
//! entries leave, are offered, or join late; none before the tick first
//! keeps them; two offerers at once keep one count.

use crate::common;

use common::waitlist::*;
use common::*;
use serde_json::{json, Value};
use shared::domain::waitlist_positions::UPDATE_MS;
use shared::domain::{EventId, Millis};
use shared::offerer::Offerer;

/// An event of one row of 4 seats, all held by an order (so no offer can
/// be made until the test frees them), with an open waitlist and `n`
/// entries that joined a second apart from a minute ago, in order.
async fn line_of(app: &shared::App, n: usize) -> (String, TestOrder, Vec<Value>) {
    let (ev, _) = create_event(app, "ps", &plan(&[("A", "1", 4)], Some(300))).await;
    let holder = order(app, &ev).await;
    for seat in 1..=4 {
        assert_eq!(claim(app, &holder, &format!("A-1-{seat}")).await.0, 200);
    }
    local::streams::project_now(app, &testkit::dynamodb_endpoint())
        .await
        .unwrap();
    put_waitlist(app, &ev, json!({"opens": "now", "offerSeconds": 120})).await;
    let start = shared::world::now().0 - 60_000;
    let mut line = Vec::new();
    for i in 0..n {
        let at = Millis(start + 1_000 * i64::try_from(i).unwrap());
        line.push(seeded_entry(app, &ev, &format!("p{i}"), at).await);
    }
    (ev, holder, line)
}

async fn tick(offerer: &mut Offerer, app: &shared::App, event: &str, now: Millis) {
    let event = EventId::parse(event).unwrap();
    offerer.tick(app, &event, now).await.unwrap();
}

async fn waiting(app: &shared::App, event: &str) -> u64 {
    let (status, body) = send(app, "GET", &format!("/events/{event}/waitlist"), &[], "").await;
    assert_eq!(status, 200, "{body}");
    body["waiting"].as_u64().unwrap()
}

/// Each entry's status: (status, position).
async fn positions(app: &shared::App, event: &str, line: &[Value]) -> Vec<(String, Option<u64>)> {
    let mut all = Vec::new();
    for entry in line {
        let reply = status_of(app, event, entry).await;
        let status = reply["status"].as_str().unwrap().to_owned();
        all.push((status, reply["position"].as_u64()));
    }
    all
}

fn waiting_at(position: u64) -> (String, Option<u64>) {
    ("WAITING".to_owned(), Some(position))
}

#[tokio::test]
async fn positions_count_the_entries_still_waiting_ahead() {
    let app = testkit::fresh_app_streaming(None).await;
    let (ev, _, line) = line_of(&app, 6).await;
    // Until the tick first keeps them: no position, and none counted.
    let before = positions(&app, &ev, &line).await;
    assert!(
        before.iter().all(|(s, p)| s == "WAITING" && p.is_none()),
        "{before:?}"
    );
    assert_eq!(waiting(&app, &ev).await, 0);

    let mut offerer = Offerer::default();
    let now = shared::world::now();
    tick(&mut offerer, &app, &ev, now).await;
    let want: Vec<_> = (1..=6).map(waiting_at).collect();
    assert_eq!(positions(&app, &ev, &line).await, want);
    assert_eq!(waiting(&app, &ev).await, 6);

    // Two leave; one joins through the route (behind everyone).
    leave(&app, &ev, &line[1]).await;
    leave(&app, &ev, &line[3]).await;
    let late = joined(&app, &ev, "late", json!({})).await;
    // Within the two seconds, the positions kept stand.
    tick(&mut offerer, &app, &ev, Millis(now.0 + UPDATE_MS - 1)).await;
    assert_eq!(waiting(&app, &ev).await, 6);
    tick(&mut offerer, &app, &ev, Millis(now.0 + UPDATE_MS)).await;
    let mut all = line.clone();
    all.push(late);
    let ended = ("ENDED".to_owned(), None);
    let want = vec![
        waiting_at(1),
        ended.clone(),
        waiting_at(2),
        ended,
        waiting_at(3),
        waiting_at(4),
        waiting_at(5),
    ];
    assert_eq!(positions(&app, &ev, &all).await, want);
    assert_eq!(waiting(&app, &ev).await, 5);

    // The organiser's list shows the same positions.
    let (status, page) = list(&app, &ev, "?status=WAITING").await;
    assert_eq!(status, 200, "{page}");
    let listed: Vec<_> = page["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["position"].as_u64())
        .collect();
    assert_eq!(listed, (1..=5).map(Some).collect::<Vec<_>>());
}

#[tokio::test]
async fn offers_move_the_line_up() {
    let app = testkit::fresh_app_streaming(None).await;
    let (ev, holder, line) = line_of(&app, 7).await;
    let mut offerer = Offerer::default();
    let now = shared::world::now();
    tick(&mut offerer, &app, &ev, now).await;
    assert_eq!(waiting(&app, &ev).await, 7);
    // The holder cancels: its 4 seats go to the first 4 entries.
    assert_eq!(cancel(&app, &holder).await.0, 200);
    local::streams::project_now(&app, &testkit::dynamodb_endpoint())
        .await
        .unwrap();
    tick(&mut offerer, &app, &ev, Millis(now.0 + UPDATE_MS)).await;
    let got = positions(&app, &ev, &line).await;
    let offered = ("OFFERED".to_owned(), None);
    let mut want = vec![offered; 4];
    want.extend((1..=3).map(waiting_at));
    assert_eq!(got, want);
    assert_eq!(waiting(&app, &ev).await, 3);
}

#[tokio::test]
async fn two_offerers_at_once_keep_one_count() {
    let app = testkit::fresh_app_streaming(None).await;
    let (ev, _, line) = line_of(&app, 5).await;
    let now = shared::world::now();
    let (mut first, mut second) = (Offerer::default(), Offerer::default());
    let event = EventId::parse(&ev).unwrap();
    let (a, b) = tokio::join!(
        first.tick(&app, &event, now),
        second.tick(&app, &event, now)
    );
    a.unwrap();
    b.unwrap();
    leave(&app, &ev, &line[0]).await;
    for offerer in [&mut first, &mut second] {
        tick(offerer, &app, &ev, Millis(now.0 + UPDATE_MS)).await;
    }
    assert_eq!(waiting(&app, &ev).await, 4);
    let want: Vec<_> = std::iter::once(("ENDED".to_owned(), None))
        .chain((1..=4).map(waiting_at))
        .collect();
    assert_eq!(positions(&app, &ev, &line).await, want);
}
