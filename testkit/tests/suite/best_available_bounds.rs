//! best-available's bounds (docs/API.md, "best-available's bounds"): a
//! section the stream-fed run summaries show without a run of n is refused
//! without reading a seat; without a summary a long section is still
//! answered within the stated round trips, and a request that loses every
//! race stops there with a `503` that claimed nothing; a release, once
//! the stream carries it, is seen (no refusal from an old summary).

use crate::common;

use common::*;
use local::faults::{production_client, Fault, FaultInjector};
use local::metrics::RequestCounter;
use local::streams::{project_new, project_now};
use serde_json::json;
use shared::handlers::BEST_AVAILABLE_ROUND_TRIPS;
use testkit::assert_invariants;

/// Holds every `every`th seat of each of `rows` rows of `seats` on `ev`,
/// ten seats an order; returns the holding orders.
async fn hold_every(
    app: &shared::App,
    ev: &str,
    rows: u32,
    seats: u32,
    every: u32,
) -> Vec<TestOrder> {
    let mut holders: Vec<TestOrder> = Vec::new();
    let mut held = 0;
    for row in 1..=rows {
        for number in (every..=seats).step_by(every as usize) {
            if held % 10 == 0 {
                holders.push(order(app, ev).await);
            }
            let holder = holders.last().expect("an order was just opened");
            let (status, body) = claim(app, holder, &format!("A-{row}-{number}")).await;
            assert_eq!(status, 200, "{body}");
            held += 1;
        }
    }
    holders
}

async fn project(app: &shared::App) {
    project_now(app, &testkit::dynamodb_endpoint())
        .await
        .unwrap();
}

/// best-available once, no resend: status, code and Retry-After.
async fn best_once(app: &shared::App, o: &TestOrder, quantity: u32) -> Reply {
    call_full(
        app,
        "POST",
        &format!("/orders/{}/best-available", o.id),
        &[("authorization", &o.auth())],
        &json!({ "quantity": quantity }).to_string(),
    )
    .await
}

fn assert_not_enough_seats(reply: &Reply) {
    assert_eq!(
        (reply.status, reply.code()),
        (409, "not-enough-seats"),
        "{:?}",
        reply.body
    );
}

#[tokio::test]
async fn a_fragmented_section_is_refused_from_the_run_summaries_without_reading_a_seat() {
    let counter = RequestCounter::default();
    let app = testkit::fresh_app_streaming(Some(counter.clone())).await;
    let ev = rows_event(&app, 4, 20).await;
    hold_every(&app, &ev, 4, 20, 5).await;
    project(&app).await;
    let buyer = order(&app, &ev).await;
    let app = app.new_process();
    counter.take();
    let reply = best_once(&app, &buyer, 5).await;
    assert_not_enough_seats(&reply);
    let sent = counter.take();
    assert_eq!(sent.get("Query"), None, "no seat read: {sent:?}");
    assert_eq!(sent.get("TransactWriteItems"), None, "no claim: {sent:?}");
    assert_eq!(
        sent.get("BatchGetItem"),
        Some(&1),
        "one read of the summaries: {sent:?}"
    );
    // Again on the same instance: its copy answers, one read of the order.
    best_once(&app, &buyer, 5).await;
    let sent = counter.take();
    assert_eq!(
        sent.values().sum::<u64>(),
        1,
        "only the order's read: {sent:?}"
    );

    // Runs of 4 are left: the summaries let those rows be read and claimed.
    let reply = best_once(&app, &buyer, 4).await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    assert_invariants(&app, &ev).await;
}

/// Without summaries, a refusal rests on one whole read of the rows
/// (eventually consistent: it misses at most a release of the last
/// second, never an expiry), not on a second, consistent one.
#[tokio::test]
async fn a_refusal_rests_on_one_whole_read_of_the_rows() {
    let counter = RequestCounter::default();
    let app = testkit::fresh_app_counting(Some(counter.clone())).await;
    let ev = rows_event(&app, 4, 20).await;
    hold_every(&app, &ev, 4, 20, 5).await;
    let buyer = order(&app, &ev).await;
    counter.take();
    assert_not_enough_seats(&best_once(&app, &buyer, 5).await);
    let sent = counter.take();
    assert_eq!(
        sent.get("Query"),
        Some(&8),
        "two blocks a row, once: {sent:?}"
    );
}

/// Without a summary (nothing projected yet) a fragmented section is read
/// seat by seat for half the bound and the rest from the seat map: the
/// request still answers, within the stated round trips.
#[tokio::test]
async fn without_a_summary_a_long_section_is_still_answered_within_the_bound() {
    let counter = RequestCounter::default();
    let app = testkit::fresh_app_streaming(Some(counter.clone())).await;
    // 25 rows of 20, every fifth seat held, nothing projected yet: reading
    // it all seat by seat would take 50 Queries.
    let ev = rows_event(&app, 25, 20).await;
    hold_every(&app, &ev, 25, 20, 5).await;
    let buyer = order(&app, &ev).await;
    counter.take();
    let reply = best_once(&app, &buyer, 5).await;
    let sent = counter.take();
    let queries = sent.get("Query").copied().unwrap_or(0);
    assert!(
        queries <= BEST_AVAILABLE_ROUND_TRIPS as u64 / 2,
        "seat by seat for half the bound: {sent:?}"
    );
    // The map shows every seat free, so the request chose a block in a
    // row it read there (rows 1 to 12 have no run of 5).
    assert!(
        sent.get("TransactWriteItems").copied().unwrap_or(0) >= 1,
        "the rest of the rows read from the map: {sent:?}"
    );
    assert_within_the_bound(&sent);
    // It lost there, and checked what it had chosen among: the refusal
    // is the truth.
    assert_not_enough_seats(&reply);
    let (_, got) = get_order(&app, &buyer).await;
    assert_eq!(got["seats"], json!([]), "nothing was claimed");

    // Once the stream is projected the summaries answer at once.
    project(&app).await;
    let app = app.new_process();
    counter.take();
    let reply = best_once(&app, &buyer, 5).await;
    assert_not_enough_seats(&reply);
    assert_eq!(counter.take().get("Query"), None);
}

/// The requests `sent` (one best-available's on a fresh app, its order
/// read, event and sold-out reads aside) within the stated round trips:
/// reads of seats and of the map, checks, and sends of the claim, besides
/// the instance's one read of the run summaries.
fn assert_within_the_bound(sent: &std::collections::BTreeMap<String, u64>) {
    let count = |operation: &str| sent.get(operation).copied().unwrap_or(0);
    let spent = count("Query") + count("TransactWriteItems") + count("BatchGetItem") - 1;
    assert!(
        spent <= BEST_AVAILABLE_ROUND_TRIPS as u64,
        "{spent} round trips reading and claiming: {sent:?}"
    );
}

/// An app whose store client injects faults and counts its requests.
async fn counted_app_with_faults() -> (shared::App, FaultInjector, RequestCounter) {
    use aws_sdk_dynamodb::config::SharedInterceptor;
    let (faults, counter) = (FaultInjector::default(), RequestCounter::default());
    let interceptors = [faults.shared(), SharedInterceptor::new(counter.clone())];
    let client = production_client(&testkit::dynamodb_endpoint(), interceptors);
    (testkit::fresh_app_with(client).await, faults, counter)
}

/// A request that loses every race (a rival's transaction in flight on
/// its seats each time) stops at the stated round trips with a `503` that
/// claimed nothing.
#[tokio::test]
async fn a_request_that_loses_every_race_stops_at_the_stated_round_trips() {
    let (app, faults, counter) = counted_app_with_faults().await;
    let ev = rows_event(&app, 1, 10).await;
    let buyer = order(&app, &ev).await;
    let in_flight = vec!["TransactionConflict", "TransactionConflict", "None"];
    faults.fail(
        "TransactWriteItems",
        Fault::TransactionCanceled(in_flight),
        None,
    );
    counter.take();
    let reply = best_once(&app, &buyer, 2).await;
    let sent = counter.take();
    assert_eq!(
        (reply.status, reply.code()),
        (503, "store-unavailable"),
        "{:?}",
        reply.body
    );
    assert!(reply.retry_after.is_some(), "a 503 says when to retry");
    assert_within_the_bound(&sent);
    assert!(
        sent.get("TransactWriteItems").copied().unwrap_or(0) > 10,
        "{sent:?}"
    );
    let (_, got) = get_order(&app, &buyer).await;
    assert_eq!(got["seats"], json!([]), "nothing was claimed");
}

#[tokio::test]
async fn a_release_the_stream_carries_is_seen_and_a_replay_changes_nothing() {
    let counter = RequestCounter::default();
    let app = testkit::fresh_app_streaming(Some(counter.clone())).await;
    let ev = rows_event(&app, 2, 10).await;
    let holders = hold_every(&app, &ev, 2, 10, 5).await;
    project(&app).await;
    let buyer = order(&app, &ev).await;
    assert_eq!(best_once(&app.new_process(), &buyer, 6).await.status, 409);
    // A-1-5 dropped: row 1 has a run of 9 once the stream says so.
    assert_eq!(drop_seat(&app, &holders[0], "A-1-5").await.0, 200);
    project(&app).await;
    let reply = best_once(&app.new_process(), &buyer, 6).await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    let seats = reply.body["seats"].as_array().unwrap();
    assert!(
        seats
            .iter()
            .all(|s| s.as_str().unwrap().starts_with("A-1-")),
        "{seats:?}"
    );
    // The stream read again from its start (as a replayed batch would be)
    // and then the buyer's six: no row has a run of 6, and the summaries
    // say so without a seat read.
    project(&app).await;
    let other = order(&app, &ev).await;
    counter.take();
    let reply = best_once(&app.new_process(), &other, 6).await;
    assert_not_enough_seats(&reply);
    assert_eq!(counter.take().get("Query"), None);
    assert_invariants(&app, &ev).await;
}

/// A lost race costs no read of the rows: the transaction's answer names
/// the seat a rival had and what held it, and the request marks it taken,
/// checks the blocks it may choose next in one request and claims one
/// without it.
#[tokio::test]
async fn a_lost_race_marks_the_named_seat_taken_and_checks_instead_of_reading_again() {
    let (app, faults, counter) = counted_app_with_faults().await;
    let ev = rows_event(&app, 1, 10).await;
    let buyer = order(&app, &ev).await;
    // The first claim of a pair ([seat, seat, order]) loses its second
    // seat, as DynamoDB says when a rival holds it: with the item the
    // condition saw (ReturnValuesOnConditionCheckFailure ALL_OLD).
    let rivals_hold = json!({
        "status": {"S": "HELD"},
        "holderOrderId": {"S": "a-rival"},
        "holdExpiresAt": {"N": "4102444800000"},
    });
    let lost = vec![
        ("None", None),
        ("ConditionalCheckFailed", Some(rivals_hold)),
        ("None", None),
    ];
    faults.fail(
        "TransactWriteItems",
        Fault::TransactionCanceledSeeing(lost),
        Some(1),
    );
    counter.take();
    let reply = best_once(&app, &buyer, 2).await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    let sent = counter.take();
    assert_eq!(sent.get("TransactWriteItems"), Some(&2), "{sent:?}");
    assert_eq!(sent.get("Query"), Some(&1), "one read of the row: {sent:?}");
    // The instance's copy of the run summaries, and one check.
    assert_eq!(sent.get("BatchGetItem"), Some(&2), "{sent:?}");
    // The contract's first choice is the central pair, 5-6; 6 was lost.
    let seats = reply.body["seats"].as_array().unwrap();
    assert!(!seats.contains(&json!("A-1-6")), "{seats:?}");
    assert_eq!(seats.len(), 2);
    assert_invariants(&app, &ev).await;
}

/// The summary items of `ev` that exist among its first `items`, by key:
/// the rows of section A each holds (each read by its key).
async fn summary_items(
    app: &shared::App,
    ev: &str,
    items: u32,
) -> std::collections::BTreeMap<String, usize> {
    use aws_sdk_dynamodb::types::AttributeValue;
    let event = shared::domain::EventId::parse(ev).unwrap();
    let event = shared::domain::EventRef::of(&event);
    let mut found = std::collections::BTreeMap::new();
    for item in 0..items {
        let pk = format!("{}{event}#{item}", shared::store::RUNS_PK_PREFIX);
        let got = app
            .store
            .client()
            .get_item()
            .table_name(app.store.table_name())
            .key("PK", AttributeValue::S(pk.clone()))
            .key("SK", AttributeValue::S("RUNS".into()))
            .send()
            .await
            .unwrap();
        if let Some(item) = got.item {
            found.insert(pk, item.keys().filter(|k| k.starts_with("A-")).count());
        }
    }
    found
}

/// The summaries are spread over at least 16 items, rows dealt round
/// robin; a projector batch writes each item once, and a write that leaves
/// a row's runs as they were writes no summary.
#[tokio::test]
async fn a_batch_writes_each_summary_item_once_and_only_when_runs_change() {
    let counter = RequestCounter::default();
    let app = testkit::fresh_app_streaming(Some(counter.clone())).await;
    // 17 rows: 16 summary items, rows 1 and 17 in the first, every other
    // row alone.
    let ev = rows_event(&app, 17, 10).await;
    let holders = hold_every(&app, &ev, 17, 10, 5).await;
    // One stream followed throughout: each catch-up projects what is new.
    let follower = follow_stream(&app).await;
    let project = || project_new(&follower, &app);
    counter.take();
    project().await.unwrap();
    let updates = counter.take().get("UpdateItem").copied();
    assert_eq!(
        updates,
        Some(17 + 16),
        "a projection write per row, a summary write per item"
    );
    // A 17th item would be one too many.
    let items = summary_items(&app, &ev, 17).await;
    let mut rows: Vec<usize> = items.values().copied().collect();
    rows.sort_unstable();
    assert_eq!(rows, [vec![1; 15], vec![2]].concat(), "{items:?}");

    // A-1-1 joins A-1-5 and A-1-10 under a later order (a later expiry,
    // so the first still bounds the summary): row 1's longest run is
    // still 4 (6-9), so the summary is left as it is and still tells.
    // (The last order: the others hold ten seats, an order's most.)
    let later = holders.last().unwrap();
    assert_eq!(claim(&app, later, "A-1-1").await.0, 200);
    counter.take();
    project().await.unwrap();
    assert_eq!(
        counter.take().get("UpdateItem"),
        Some(&1),
        "the projection write only"
    );
    let buyer = order(&app, &ev).await;
    counter.take();
    let reply = best_once(&app.new_process(), &buyer, 5).await;
    assert_not_enough_seats(&reply);
    assert_eq!(
        counter.take().get("Query"),
        None,
        "refused from the summaries"
    );

    // A-1-10 dropped: row 1's longest run grows to 5 (6-10), and that one
    // write changes its summary.
    assert_eq!(drop_seat(&app, &holders[0], "A-1-10").await.0, 200);
    counter.take();
    project().await.unwrap();
    assert_eq!(counter.take().get("UpdateItem"), Some(&2));
    let reply = best_once(&app.new_process(), &buyer, 5).await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    assert_invariants(&app, &ev).await;
}

/// A row whose seats were created across the deploy that dealt summaries
/// over the event (a create resumed from its saved progress): seat A-1-10
/// carries the old `runsItem` and names no summary item. Its release,
/// projected alone, still updates the row's summary from the item its
/// projection item kept: no refusal from a summary the release outdated.
#[tokio::test]
async fn a_release_of_a_seat_that_names_no_summary_item_still_updates_its_rows() {
    use aws_sdk_dynamodb::types::AttributeValue;
    let app = testkit::fresh_app_streaming(None).await;
    let ev = rows_event(&app, 2, 10).await;
    let seat = shared::domain::SeatId::parse("A-1-10").unwrap();
    let event = shared::domain::EventId::parse(&ev).unwrap();
    // As the earlier deploy wrote it (the attribute names are its format).
    app.store
        .client()
        .update_item()
        .table_name(app.store.table_name())
        .set_key(Some(shared::store::seat_item_key(&event, &seat)))
        .update_expression("REMOVE #event SET #section = :item")
        .expression_attribute_names("#event", "eventRunsItem")
        .expression_attribute_names("#section", "runsItem")
        .expression_attribute_values(":item", AttributeValue::N("0".into()))
        .send()
        .await
        .unwrap();
    let follower = follow_stream(&app).await;
    let project = || project_new(&follower, &app);
    project().await.unwrap();
    // A-1-5 and A-1-10 held in one batch: row 1's longest run is 4.
    let holders = hold_every(&app, &ev, 2, 10, 5).await;
    project().await.unwrap();
    let buyer = order(&app, &ev).await;
    assert_not_enough_seats(&best_once(&app.new_process(), &buyer, 5).await);
    // A-1-10 released, and projected in a batch of its own: 6-10 is free.
    assert_eq!(drop_seat(&app, &holders[0], "A-1-10").await.0, 200);
    project().await.unwrap();
    let reply = best_once(&app.new_process(), &buyer, 5).await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    assert_invariants(&app, &ev).await;
}

/// best-available in `section`, once, no resend.
async fn best_in(app: &shared::App, o: &TestOrder, quantity: u32, section: &str) -> Reply {
    call_full(
        app,
        "POST",
        &format!("/orders/{}/best-available", o.id),
        &[("authorization", &o.auth())],
        &json!({ "quantity": quantity, "sectionId": section }).to_string(),
    )
    .await
}

/// Rows of 1,000 seats and more are served within the bound: read from the
/// seat map (a BatchGetItem per 100,000 seats), never seat by seat; a seat
/// the map does not show taken yet costs one lost race, named by the
/// transaction, and stays taken across the request's reads; a long row the
/// map shows without a run is refused without a seat read.
#[tokio::test]
async fn long_rows_are_read_from_the_seat_map_within_the_bound() {
    let counter = RequestCounter::default();
    let app = testkit::fresh_app_streaming(Some(counter.clone())).await;
    // Row L-2 takes two map items.
    let rows = [("L", "1", 1_000), ("L", "2", 1_100), ("B", "1", 101)];
    let ev = create_big_event(&app, "long", &plan(&rows, Some(300))).await;
    let first = order(&app, &ev).await;
    counter.take();
    let reply = best_in(&app, &first, 4, "L").await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    let sent = counter.take();
    assert_eq!(sent.get("Query"), None, "no seat read: {sent:?}");
    assert!(sent.values().sum::<u64>() <= 1 + BEST_AVAILABLE_ROUND_TRIPS as u64);
    let seats = reply.body["seats"].clone();
    assert_eq!(seats, json!(["L-1-499", "L-1-500", "L-1-501", "L-1-502"]));

    // The map has not seen that claim: the next buyer's first choice is
    // the same block, lost, and the next one held, without a seat read.
    let second = order(&app, &ev).await;
    counter.take();
    let reply = best_in(&app, &second, 4, "L").await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    let sent = counter.take();
    assert_eq!(sent.get("TransactWriteItems"), Some(&2), "{sent:?}");
    assert_eq!(sent.get("Query"), None, "{sent:?}");
    let taken: Vec<_> = seats.as_array().unwrap().iter().collect();
    let got = reply.body["seats"].as_array().unwrap();
    assert!(got.iter().all(|s| !taken.contains(&s)), "{got:?}");

    // Once projected, a choice costs one claim.
    project(&app).await;
    let third = order(&app, &ev).await;
    counter.take();
    assert_eq!(best_in(&app, &third, 4, "L").await.status, 200);
    assert_eq!(counter.take().get("TransactWriteItems"), Some(&1));

    // Section B's one row of 101 seats with every other seat held: no
    // pair, and the answer is a refusal without a seat read.
    let mut holders: Vec<TestOrder> = Vec::new();
    for number in (2..=100).step_by(2) {
        if holders.len() * 10 < number / 2 {
            holders.push(order(&app, &ev).await);
        }
        let holder = holders.last().unwrap();
        assert_eq!(claim(&app, holder, &format!("B-1-{number}")).await.0, 200);
    }
    project(&app).await;
    counter.take();
    let reply = best_in(&app.new_process(), &third, 2, "B").await;
    assert_not_enough_seats(&reply);
    assert_eq!(counter.take().get("Query"), None);
    assert_invariants(&app, &ev).await;
}
