//! A waiting entry's position and the waitlist's count of waiting entries,
//! kept by the offerer's tick against a real DynamoDB Local: the entries
//! that joined in earlier seconds and still wait, counted again as
//! entries leave, are offered, or join late; none before the tick first
//! keeps them; a write over another's version is dropped; a new offerer
//! copies what a stopped one left uncopied; a recount of a span counts
//! who waited as of an instant.

use crate::common;

use common::waitlist::*;
use common::*;
use serde_json::{json, Value};
use shared::domain::waitlist_positions::{Positions, UPDATE_MS};
use shared::domain::{EventId, Millis};
use shared::offerer::Offerer;
use shared::store::PositionsWrite;

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
async fn a_write_over_a_version_another_wrote_first_is_dropped() {
    let app = testkit::fresh_app_streaming(None).await;
    let (ev, _, _) = line_of(&app, 1).await;
    let event = EventId::parse(&ev).unwrap();
    let store = &app.store;
    let first = Positions::default();
    let copied = PositionsWrite::Written { copies: true };
    let written = store.write_positions(&event, 1, &first, None).await;
    assert_eq!(written.unwrap(), copied);
    // A second offerer that read nothing, and one that read version 1
    // after a third wrote version 2: both lose, and write nothing.
    let written = store.write_positions(&event, 1, &first, None).await;
    assert_eq!(written.unwrap(), PositionsWrite::Lost);
    let written = store.write_positions(&event, 1, &first, Some(1)).await;
    assert_eq!(written.unwrap(), copied);
    let late = Positions {
        settled_until: Millis(1),
        ..Positions::default()
    };
    let written = store.write_positions(&event, 1, &late, Some(1)).await;
    assert_eq!(written.unwrap(), PositionsWrite::Lost);
    let kept = app.store.read_positions(&event, 1, None).await.unwrap();
    assert_eq!(kept.map(|k| (k.version, k.positions)), Some((2, first)));
}

#[tokio::test]
async fn a_new_offerer_copies_what_a_stopped_one_left_uncopied() {
    let app = testkit::fresh_app_streaming(None).await;
    let (ev, _, line) = line_of(&app, 3).await;
    let now = shared::world::now();
    tick(&mut Offerer::default(), &app, &ev, now).await;
    // The first offerer stopped between the main item and its copies.
    let event = EventId::parse(&ev).unwrap();
    for key in shared::store::positions_copy_keys(&event, 1) {
        delete_raw_item(&app, key).await;
    }
    assert_eq!(
        status_of(&app, &ev, &line[2]).await["position"],
        Value::Null
    );
    // The next offerer finds nothing new, and copies all the same.
    tick(
        &mut Offerer::default(),
        &app,
        &ev,
        Millis(now.0 + UPDATE_MS),
    )
    .await;
    assert_eq!(status_of(&app, &ev, &line[2]).await["position"], 3);
}

#[tokio::test]
async fn a_recount_counts_who_waited_as_of_the_settled_instant() {
    let app = testkit::fresh_app_streaming(None).await;
    let (ev, _, line) = line_of(&app, 5).await;
    let event = EventId::parse(&ev).unwrap();
    let joined_at = |entry: &Value| {
        let at = chrono::DateTime::parse_from_rfc3339(entry["joinedAt"].as_str().unwrap());
        at.unwrap().timestamp_millis().div_euclid(1_000)
    };
    let statuses = positions(&app, &ev, &line).await;
    assert!(statuses.iter().all(|(s, _)| s == "WAITING"));
    let mut seconds = Vec::new();
    for entry in &line {
        seconds.push(joined_at(&status_of(&app, &ev, entry).await));
    }
    let before = shared::world::now();
    leave(&app, &ev, &line[1]).await;
    let between = Millis(shared::world::now().0 + 1);
    leave(&app, &ev, &line[3]).await;
    let after = Millis(shared::world::now().0 + 1);
    let span = (seconds[0], seconds[4]);
    let waiting = |of: &[usize]| -> std::collections::BTreeMap<i64, i64> {
        of.iter().map(|i| (seconds[*i], 1)).collect()
    };
    let count = |as_of: Millis| app.store.waiting_by_second(&event, 1, span, as_of);
    assert_eq!(count(before).await.unwrap(), waiting(&[0, 1, 2, 3, 4]));
    assert_eq!(count(between).await.unwrap(), waiting(&[0, 2, 3, 4]));
    assert_eq!(count(after).await.unwrap(), waiting(&[0, 2, 4]));
    // A span's ends are whole seconds: the last entry's second is in.
    let inner = app
        .store
        .waiting_by_second(&event, 1, (seconds[4], seconds[4]), after)
        .await
        .unwrap();
    assert_eq!(inner.into_iter().collect::<Vec<_>>(), vec![(seconds[4], 1)]);
}

/// get-waitlist's counts against the entries' own statuses.
async fn counts_and_statuses(
    app: &shared::App,
    event: &str,
    line: &[Value],
) -> ((u64, u64, u64), (u64, u64, u64)) {
    let (status, body) = send(app, "GET", &format!("/events/{event}/waitlist"), &[], "").await;
    assert_eq!(status, 200, "{body}");
    let count = |field: &str| body[field].as_u64().unwrap();
    let counted = (count("waiting"), count("offered"), count("purchased"));
    let mut seen = (0, 0, 0);
    for (status, _) in positions(app, event, line).await {
        match status.as_str() {
            "WAITING" => seen.0 += 1,
            "OFFERED" => seen.1 += 1,
            "PURCHASED" => seen.2 += 1,
            _ => {}
        }
    }
    (counted, seen)
}

#[tokio::test]
async fn offers_and_purchases_are_counted_as_the_entries_read() {
    let app = testkit::fresh_app_streaming(None).await;
    let (ev, holder, line) = line_of(&app, 6).await;
    let mut offerer = Offerer::default();
    let now = shared::world::now();
    tick(&mut offerer, &app, &ev, now).await;
    assert_eq!(counts_and_statuses(&app, &ev, &line).await.0, (6, 0, 0));
    // The holder cancels: its 4 seats are offered to the first 4.
    assert_eq!(cancel(&app, &holder).await.0, 200);
    local::streams::project_now(&app, &testkit::dynamodb_endpoint())
        .await
        .unwrap();
    tick(&mut offerer, &app, &ev, Millis(now.0 + UPDATE_MS)).await;
    let (counted, seen) = counts_and_statuses(&app, &ev, &line).await;
    assert_eq!((counted, seen), ((2, 4, 0), (2, 4, 0)));
    // One pays, one declines, one is cancelled with cancel-order: the
    // freed seats go to the two still waiting.
    let offer = |i: usize| {
        let (app, ev, entry) = (app.clone(), ev.clone(), line[i].clone());
        async move { offered_order(&status_of(&app, &ev, &entry).await) }
    };
    let paid = offer(0).await;
    assert_eq!(confirm(&app, &paid.id, "pi_counted").await.0, 200);
    assert_eq!(leave(&app, &ev, &line[1]).await["reason"], "declined");
    assert_eq!(cancel(&app, &offer(2).await).await.0, 200);
    local::streams::project_now(&app, &testkit::dynamodb_endpoint())
        .await
        .unwrap();
    tick(&mut offerer, &app, &ev, Millis(now.0 + 2 * UPDATE_MS)).await;
    tick(&mut offerer, &app, &ev, Millis(now.0 + 3 * UPDATE_MS)).await;
    let (counted, seen) = counts_and_statuses(&app, &ev, &line).await;
    assert_eq!(counted, seen, "counted as the entries read");
    assert_eq!(
        seen,
        (0, 3, 1),
        "one bought; the fourth's and two new offers live"
    );
}

/// Ticks twice, an update apart from `now` on: the counts then include
/// every end written before.
async fn counted_from(offerer: &mut Offerer, app: &shared::App, event: &str, now: Millis) {
    local::streams::project_now(app, &testkit::dynamodb_endpoint())
        .await
        .unwrap();
    tick(offerer, app, event, Millis(now.0 + UPDATE_MS)).await;
    tick(offerer, app, event, Millis(now.0 + 2 * UPDATE_MS)).await;
}

#[tokio::test]
async fn an_offer_emptied_by_a_drop_and_a_payment_after_the_delete_are_counted() {
    let app = testkit::fresh_app_streaming(None).await;
    let (ev, holder, line) = line_of(&app, 3).await;
    let mut offerer = Offerer::default();
    let now = shared::world::now();
    tick(&mut offerer, &app, &ev, now).await;
    assert_eq!(cancel(&app, &holder).await.0, 200);
    counted_from(&mut offerer, &app, &ev, now).await;
    assert_eq!(counts_and_statuses(&app, &ev, &line).await.0, (0, 3, 0));
    let offer = |i: usize| {
        let (app, ev, entry) = (app.clone(), ev.clone(), line[i].clone());
        async move { status_of(&app, &ev, &entry).await }
    };
    // The first lets go of its one seat: the drop ends its offer.
    let first = offer(0).await;
    let seat = first["offer"]["seats"][0].as_str().unwrap().to_owned();
    let emptied = offered_order(&first);
    assert_eq!(drop_seat(&app, &emptied, &seat).await.0, 200);
    assert_eq!(offer(0).await["reason"], "declined");
    // Its cancel afterwards ends nothing more.
    assert_eq!(cancel(&app, &emptied).await.0, 200);
    // Deleted: the third's offer is still paid.
    let (status, _) = send(&app, "DELETE", &format!("/events/{ev}/waitlist"), &[], "").await;
    assert_eq!(status, 200);
    let paid = offered_order(&offer(2).await);
    assert_eq!(confirm(&app, &paid.id, "pi_after_delete").await.0, 200);
    let later = Millis(now.0 + 2 * UPDATE_MS);
    counted_from(&mut offerer, &app, &ev, later).await;
    let (counted, seen) = counts_and_statuses(&app, &ev, &line).await;
    assert_eq!(counted, seen, "counted as the entries read");
    assert_eq!(
        seen,
        (0, 1, 1),
        "the second's offer live, the third's bought"
    );
}

#[tokio::test]
async fn an_offer_emptied_by_hold_ga_0_is_counted_as_ended() {
    let app = testkit::fresh_app_streaming(None).await;
    let ev = ga_event(&app, 1, 4, 300).await;
    let holder = order(&app, &ev).await;
    assert_eq!(claim(&app, &holder, "A-1-1").await.0, 200);
    assert_eq!(hold_ga(&app, &holder, "FLOOR", json!(4)).await.0, 200);
    put_waitlist(&app, &ev, json!({"opens": "now", "offerSeconds": 120})).await;
    let ask = json!({"quantity": 2, "sectionIds": ["FLOOR"]});
    let mut line = Vec::new();
    for buyer in ["user:1", "user:2"] {
        line.push(joined(&app, &ev, buyer, ask.clone()).await);
    }
    let mut offerer = Offerer::default();
    let now = shared::world::now();
    tick(&mut offerer, &app, &ev, now).await;
    assert_eq!(hold_ga(&app, &holder, "FLOOR", json!(0)).await.0, 200);
    counted_from(&mut offerer, &app, &ev, now).await;
    assert_eq!(counts_and_statuses(&app, &ev, &line).await.0, (0, 2, 0));
    let first = offered_order(&status_of(&app, &ev, &line[0]).await);
    assert_eq!(hold_ga(&app, &first, "FLOOR", json!(0)).await.0, 200);
    assert_eq!(status_of(&app, &ev, &line[0]).await["reason"], "declined");
    counted_from(&mut offerer, &app, &ev, Millis(now.0 + 2 * UPDATE_MS)).await;
    let (counted, seen) = counts_and_statuses(&app, &ev, &line).await;
    assert_eq!((counted, seen), ((0, 1, 0), (0, 1, 0)));
}
