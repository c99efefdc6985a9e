//! The offerer's tick against a real DynamoDB Local: the registry lists
//! the waitlists it visits; it offers a lapsed hold's seats from the
//! instant the hold expires, with no sweep and no write to announce them,
//! and looks no more than its memory says is due; a join while seats sit
//! free is offered at the next join check; two offerers at once never
//! offer a seat twice; a slow look at one waitlist delays no other's.

use crate::common;

use common::waitlist::*;
use common::*;
use serde_json::json;
use shared::domain::{EventId, Millis};
use shared::offerer::{OfferLook, Offerer};

/// The instant an order's hold lapses, as its reply says.
fn lapse_of(order: &TestOrder) -> Millis {
    let at = chrono::DateTime::parse_from_rfc3339(&order.expires_at).unwrap();
    Millis(at.timestamp_millis())
}

/// One tick of `event` at `now`: the look it took, if one was due.
async fn look(
    offerer: &mut Offerer,
    app: &shared::App,
    event: &str,
    now: Millis,
) -> Option<OfferLook> {
    let event = EventId::parse(event).unwrap();
    offerer.tick(app, &event, now).await.unwrap()
}

/// One tick of `event` at `now`: the offers made, or `None` when no look
/// was due.
async fn tick(offerer: &mut Offerer, app: &shared::App, event: &str, now: Millis) -> Option<u32> {
    look(offerer, app, event, now).await.map(|look| look.made)
}

/// An instant after the opening's holds have all settled on the map (the
/// tick looks once more then): a test's first look from here is its last
/// until something else is due.
fn settled() -> i64 {
    shared::world::now().0 + shared::domain::offer_tick::OPENING_SETTLE_MS
}

/// An event of one row of `seats` whose first `held` seats an order holds
/// (projected onto the map), then a waitlist opened at once: the order.
async fn held_then_open(app: &shared::App, seats: u32, held: u32) -> (String, TestOrder) {
    let (ev, _) = create_event(app, "tk", &plan(&[("A", "1", seats)], Some(300))).await;
    let order = order(app, &ev).await;
    for seat in 1..=held {
        assert_eq!(claim(app, &order, &format!("A-1-{seat}")).await.0, 200);
    }
    local::streams::project_now(app, &testkit::dynamodb_endpoint())
        .await
        .unwrap();
    put_waitlist(app, &ev, json!({"opens": "now", "offerSeconds": 120})).await;
    (ev, order)
}

#[tokio::test]
async fn a_put_lists_the_waitlist_for_the_tick_and_the_tick_unlists_a_deleted_one() {
    let app = fresh_app().await;
    let ev = event(&app, 2, 300).await;
    let listed = |events: Vec<EventId>| events.iter().any(|e| e.as_str() == ev);
    assert!(!listed(app.store.waitlisted_events().await.unwrap()));
    put_waitlist(&app, &ev, json!({"opens": "sold-out"})).await;
    assert!(listed(app.store.waitlisted_events().await.unwrap()));
    // Armed, it is visited but never looked at.
    let mut offerer = Offerer::default();
    assert_eq!(
        tick(&mut offerer, &app, &ev, shared::world::now()).await,
        None
    );
    let (status, _) = send(&app, "DELETE", &format!("/events/{ev}/waitlist"), &[], "").await;
    assert_eq!(status, 200);
    // Deleted before it opened: no offer to count, so the tick's next
    // visit takes it off.
    assert!(listed(app.store.waitlisted_events().await.unwrap()));
    let now = shared::world::now();
    assert_eq!(tick(&mut offerer, &app, &ev, now).await, None);
    assert!(!listed(app.store.waitlisted_events().await.unwrap()));
    // A put after the delete (a new generation) lists it again.
    put_waitlist(&app, &ev, json!({"opens": "now"})).await;
    assert!(listed(app.store.waitlisted_events().await.unwrap()));
    // Open with nobody in its list: no look (no map read) until someone
    // joins, and the next join check offers the first.
    let now = settled();
    assert_eq!(tick(&mut offerer, &app, &ev, Millis(now)).await, None);
    joined(&app, &ev, "user:first", json!({})).await;
    let soon = Millis(now + 1_000);
    assert_eq!(tick(&mut offerer, &app, &ev, soon).await, None);
    let checked = Millis(now + 2_000);
    assert_eq!(tick(&mut offerer, &app, &ev, checked).await, Some(1));
}

#[tokio::test]
async fn a_lapsed_hold_is_offered_from_its_expiry_with_no_sweep_or_write() {
    let app = testkit::fresh_app_streaming(None).await;
    let (ev, order) = held_then_open(&app, 2, 2).await;
    let entry = joined(&app, &ev, "user:1", json!({"quantity": 2})).await;
    let lapse = lapse_of(&order);
    let mut offerer = Offerer::default();
    // The first visit looks: everything is held.
    let now = Millis(settled());
    assert_eq!(tick(&mut offerer, &app, &ev, now).await, Some(0));
    // Nothing is due until the hold lapses, but the refresh: no look.
    assert_eq!(
        tick(&mut offerer, &app, &ev, Millis(now.0 + 1_000)).await,
        None
    );
    let refresh = now.0 + shared::domain::offer_tick::REFRESH_MS;
    assert_eq!(
        tick(&mut offerer, &app, &ev, Millis(refresh - 1)).await,
        None
    );
    assert_eq!(
        tick(&mut offerer, &app, &ev, Millis(refresh)).await,
        Some(0)
    );
    let late = Millis(lapse.0 - 20_000);
    assert_eq!(tick(&mut offerer, &app, &ev, late).await, Some(0));
    let before = Millis(lapse.0 - 1);
    assert_eq!(tick(&mut offerer, &app, &ev, before).await, None);
    assert_eq!(status_of(&app, &ev, &entry).await["status"], "WAITING");
    // At the instant the seats' holds expire (the order's `expiresAt`) the
    // tick offers them: nothing swept, nothing projected.
    let expired = lapse;
    let offering = look(&mut offerer, &app, &ev, expired).await.unwrap();
    assert_eq!(offering.made, 1);
    let offered = status_of(&app, &ev, &entry).await;
    assert_eq!(
        (&offered["status"], &offered["offer"]["seats"]),
        (&json!("OFFERED"), &json!(["A-1-1", "A-1-2"])),
        "{offered}"
    );
    // The offer's own expiry is the next lapse.
    let offer_expiry = offered["offer"]["expiresAt"].as_str().unwrap();
    let offer_expiry = chrono::DateTime::parse_from_rfc3339(offer_expiry).unwrap();
    assert_eq!(
        offering.next_lapse,
        Some(Millis(offer_expiry.timestamp_millis()))
    );
    assert_eq!(
        tick(&mut offerer, &app, &ev, Millis(expired.0 + 1_000)).await,
        None
    );
}

#[tokio::test]
async fn a_join_while_seats_sit_free_is_offered_at_the_next_join_check() {
    let app = testkit::fresh_app_streaming(None).await;
    let (ev, _) = held_then_open(&app, 3, 2).await;
    // One seat free, and the only entry wants two together.
    joined(&app, &ev, "user:pair", json!({"quantity": 2})).await;
    let mut offerer = Offerer::default();
    let now = settled();
    assert_eq!(tick(&mut offerer, &app, &ev, Millis(now)).await, Some(0));
    assert_eq!(
        tick(&mut offerer, &app, &ev, Millis(now + 1_000)).await,
        None
    );
    // Nobody joined since the look: the check reads the list's ends and
    // stops.
    assert_eq!(
        tick(&mut offerer, &app, &ev, Millis(now + 2_000)).await,
        None
    );
    let single = joined(&app, &ev, "user:one", json!({"quantity": 1})).await;
    assert_eq!(
        tick(&mut offerer, &app, &ev, Millis(now + 3_000)).await,
        None
    );
    assert_eq!(
        tick(&mut offerer, &app, &ev, Millis(now + 4_000)).await,
        Some(1)
    );
    let offered = status_of(&app, &ev, &single).await;
    assert_eq!(offered["offer"]["seats"], json!(["A-1-3"]), "{offered}");
}

#[tokio::test]
async fn two_tickers_at_a_lapse_never_offer_a_seat_twice() {
    let app = testkit::fresh_app_streaming(None).await;
    let (ev, order) = held_then_open(&app, 4, 4).await;
    let mut entries = Vec::new();
    for i in 0..6 {
        entries.push(joined(&app, &ev, &format!("user:{i}"), json!({})).await);
    }
    let expired = lapse_of(&order);
    // Each has looked once already (everything held): what starts their
    // looks at the lapse is the lapse.
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..2 {
        let mut offerer = Offerer::default();
        let before = Millis(expired.0 - 10_000);
        assert_eq!(tick(&mut offerer, &app, &ev, before).await, Some(0));
        let (app, ev) = (app.clone(), ev.clone());
        tasks.spawn(async move { tick(&mut offerer, &app, &ev, expired).await.unwrap_or(0) });
    }
    let made: u32 = tasks.join_all().await.into_iter().sum();
    assert_eq!(made, 4, "one offer per lapsed seat");
    let mut seats = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let status = status_of(&app, &ev, entry).await;
        let expected = if i < 4 { "OFFERED" } else { "WAITING" };
        assert_eq!(status["status"], expected, "entry {i}: {status}");
        seats.extend(
            status["offer"]["seats"]
                .as_array()
                .cloned()
                .unwrap_or_default(),
        );
    }
    seats.sort_by_key(|s| s.to_string());
    seats.dedup();
    assert_eq!(seats.len(), 4, "{seats:?}");
}

/// The projector makes no offers: a batch that freed seats is counted
/// for the tick (`store::frees`), whose next visit looks for the count
/// alone and goes on at its bounds until every seat is offered. One
/// offerer per waitlist: the projector's looks and the tick's used to
/// read the same free seats and lose to each other's writes.
#[tokio::test]
async fn a_batch_that_frees_seats_is_offered_by_the_tick() {
    let app = testkit::fresh_app_streaming(None).await;
    let rows: Vec<(String, u32)> = (1..=4).map(|r| (r.to_string(), 10)).collect();
    let rows: Vec<(&str, &str, u32)> = rows.iter().map(|(r, n)| ("A", r.as_str(), *n)).collect();
    let (ev, _) = create_event(&app, "tb", &plan(&rows, Some(300))).await;
    let mut orders = Vec::new();
    for row in 1..=4 {
        let holder = order(&app, &ev).await;
        for seat in 1..=10 {
            let seat = format!("A-{row}-{seat}");
            assert_eq!(claim(&app, &holder, &seat).await.0, 200);
        }
        orders.push(holder);
    }
    let follower = follow_stream(&app).await;
    local::streams::project_new(&follower, &app).await.unwrap();
    put_waitlist(&app, &ev, json!({"opens": "now"})).await;
    let wanting = shared::offerer::OFFERS_PER_LOOK + 2;
    let mut entries = Vec::new();
    for i in 0..wanting {
        entries.push(joined(&app, &ev, &format!("user:{i}"), json!({})).await);
    }
    // The tick has looked (everything held), and nothing is due for it.
    let mut offerer = Offerer::default();
    let now = settled();
    assert_eq!(tick(&mut offerer, &app, &ev, Millis(now)).await, Some(0));
    for holder in &orders {
        assert_eq!(cancel(&app, holder).await.0, 200);
    }
    let id = EventId::parse(&ev).unwrap();
    let version = |app: &shared::App| {
        let id = id.clone();
        let app = app.clone();
        async move { app.store.read_waitlist(&id).await.unwrap().unwrap().version }
    };
    let before = version(&app).await;
    let frees = || {
        let (app, id) = (app.clone(), id.clone());
        async move {
            let event = shared::domain::EventRef::of(&id);
            app.store.frees_noted(&event).await.unwrap()
        }
    };
    let counted = frees().await;
    // The projector frees the seats, all in one batch, and counts it.
    let records = std::sync::Mutex::new(Vec::new());
    follower
        .catch_up(|batch| {
            let mut records = records.lock().unwrap();
            records.extend(batch["Records"].as_array().cloned().unwrap_or_default());
            async {}
        })
        .await
        .unwrap();
    let batch = json!({"Records": records.into_inner().unwrap()});
    let projector = local::iam::attributed(&app, "project-seat-map");
    let reply = shared::handlers::project_records(&projector, &batch).await;
    assert_eq!(reply["batchItemFailures"], json!([]), "{reply}");
    let offered = |entries: &[serde_json::Value]| {
        let (app, ev) = (app.clone(), ev.clone());
        let entries = entries.to_vec();
        async move {
            let mut offered = 0;
            for entry in &entries {
                if status_of(&app, &ev, entry).await["status"] == "OFFERED" {
                    offered += 1;
                }
            }
            offered
        }
    };
    assert_eq!(offered(&entries).await, 0, "the projector offers nothing");
    let noted = frees().await;
    assert_eq!(noted.frees, counted.frees + 1, "the batch is counted once");
    // Counted in the parts of the rows it freed: the tick's memory of the
    // map reads those again (and needs no other).
    let freed_parts: std::collections::BTreeSet<u8> = (1..=4)
        .map(|r| {
            let section = shared::domain::SectionId::parse("A").unwrap();
            let row = shared::domain::RowId::parse(&r.to_string()).unwrap();
            shared::domain::map_parts::part_of_row(&section, &row)
        })
        .collect();
    let moved =
        shared::domain::map_parts::moved_parts(&counted.parts, &Default::default(), &noted.parts);
    assert_eq!(moved, freed_parts, "the freed rows' parts, once each");
    assert_eq!(version(&app).await, before, "the state is not written");
    // The tick's next visit looks for the count alone, and its looks go
    // on (each at its bounds, on a slow table) until every entry has a
    // seat; the offers' own holds are projected between visits.
    let first = tick(&mut offerer, &app, &ev, Millis(now + 500)).await;
    assert!(
        first.is_some_and(|made| made > 0),
        "the count makes a look due: {first:?}"
    );
    let mut at = now + 500;
    let mut visits = 1;
    let mut so_far = offered(&entries).await;
    while so_far < wanting {
        local::streams::project_new(&follower, &app).await.unwrap();
        at += 500;
        visits += 1;
        let made = tick(&mut offerer, &app, &ev, Millis(at)).await;
        assert!(made.is_some(), "visit {visits}: a look while there is more");
        so_far = offered(&entries).await;
        assert!(visits < 20, "the tick must get through: {so_far}");
    }
    assert_eq!(so_far, wanting, "every entry got a seat");
}

/// A run of the tick over two waitlists, one of whose looks is slow (its
/// offer's transaction sent 2 s late, within the SDK's 3 s an attempt,
/// in a run of 2 s): the other is visited at the
/// run's next ticks meanwhile, and a seat freed there while the slow look
/// runs is offered before it ends (a tick used to wait for every visit
/// it started, so the free waited for the slow look).
#[tokio::test]
async fn a_slow_look_at_one_waitlist_delays_no_other() {
    use local::faults::{production_client_over, FaultInjector, SlowStore};
    use std::time::Duration;
    let (slow, sent) = (SlowStore::default(), FaultInjector::default());
    let endpoint = testkit::dynamodb_endpoint();
    let client = production_client_over(&endpoint, slow.http_client(), [sent.shared()]);
    let app = testkit::fresh_app_streaming_with(client).await;
    // Slow: a free seat and an entry for it. Other: its one seat held.
    let (slow_event, _) = held_then_open(&app, 1, 0).await;
    let (other, holder) = held_then_open(&app, 1, 1).await;
    joined(&app, &slow_event, "user:slow", json!({})).await;
    let waiting = joined(&app, &other, "user:other", json!({})).await;
    let slow_ref = shared::domain::EventRef::of(&EventId::parse(&slow_event).unwrap());
    let slow_ref: &'static str = Box::leak(slow_ref.as_str().to_owned().into_boxed_str());
    let late = Duration::from_millis(2_000);
    slow.slow_only("TransactWriteItems", slow_ref, late, Duration::ZERO);
    let writes_before = sent.attempts("TransactWriteItems");
    let run = {
        let app = app.clone();
        tokio::spawn(async move {
            Offerer::default()
                .run_for(&app, Duration::from_secs(2))
                .await
        })
    };
    // Once the slow offer is on its way, the other's seat is freed and
    // the projector counts it.
    until_sent(&sent, "TransactWriteItems", writes_before).await;
    assert_eq!(drop_seat(&app, &holder, "A-1-1").await.0, 200);
    local::streams::project_now(&app, &endpoint).await.unwrap();
    let run = run.await.unwrap();
    assert_eq!(run.offers, 2, "{run:?}");
    assert_eq!(status_of(&app, &other, &waiting).await["status"], "OFFERED");
}
