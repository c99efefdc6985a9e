//! The draw list's cost on DynamoDB Local (docs/API.md, "The draw list"):
//! followed from page to page it lists every drawn visitor once, in key
//! order, reading about what it returns; a page after a plain key, or
//! after a cursor whose count lies, still starts right after that key.

use crate::common;

use common::draw::{draw_page, drawn_visitors, listed_entries, open_now, seed_of};
use common::event;
use common::queue::{put_queue, queue_body, stored_state};
use crowdcheck::capacity::{recording_client, CapacityRecorder, Recorded};
use serde_json::Value;
use shared::domain::draw_pages::DrawCursor;
use shared::domain::EventId;
use shared::store::QUEUE_DRAW_INDEX;

/// The draw index's items a page's requests read, and how many queries.
fn draw_reads(records: &[Recorded]) -> (u64, usize) {
    let queries: Vec<&Recorded> = records
        .iter()
        .filter(|r| r.op == "Query" && r.request["IndexName"] == QUEUE_DRAW_INDEX)
        .collect();
    let items = queries
        .iter()
        .map(|r| r.response["Count"].as_u64().unwrap())
        .sum();
    (items, queries.len())
}

/// One page as a buyer reads it, with what it read from the index.
async fn recorded_page(
    app: &shared::App,
    recorder: &CapacityRecorder,
    (event, limit, after): (&str, usize, Option<&str>),
) -> (Value, u64) {
    recorder.take();
    recorder.set_recording(true);
    let page = draw_page(app, event, limit, after).await;
    recorder.set_recording(false);
    let (items, _) = draw_reads(&recorder.take());
    (page, items)
}

#[tokio::test]
async fn following_the_draw_list_reads_about_what_it_returns() {
    const DRAWN: usize = 600;
    const LIMIT: usize = 100;
    let recorder = CapacityRecorder::new();
    let client = recording_client(&testkit::dynamodb_endpoint(), recorder.clone());
    let app = testkit::fresh_app_with(client).await;
    let ev = event(&app, 5, 300).await;
    let event_id = EventId::parse(&ev).unwrap();
    let (status, put) = put_queue(&app, &ev, &queue_body(3_600_000, 6_000)).await;
    assert_eq!(status, 200, "{put}");
    let state = stored_state(&app, &event_id).await;
    let seed = seed_of(&app, &event_id, &state);
    let ids = drawn_visitors(&app, &event_id, &state, 0..DRAWN).await;
    let mut every: Vec<String> = ids.iter().map(|id| seed.key(id.as_str()).hex()).collect();
    every.sort();
    open_now(&app, &ev, 6_000).await;
    let shards = usize::from(state.shards.count());

    let (mut listed, mut read, mut after) = (Vec::new(), 0, None::<String>);
    loop {
        let (page, items) = recorded_page(&app, &recorder, (&ev, LIMIT, after.as_deref())).await;
        assert!(
            items as usize <= LIMIT + shards,
            "a page read {items} items, over {LIMIT} + {shards}"
        );
        read += items;
        listed.extend(listed_entries(&page).into_iter().map(|(key, _)| key));
        match page["next"].as_str() {
            Some(next) => after = Some(accepted(next)),
            None => break,
        }
    }
    assert_eq!(listed, every, "every drawn visitor once, in key order");
    // The first page reads a key a shard to learn the density; the others
    // read a range that holds about what they return.
    let bound = DRAWN as u64 * 6 / 5 + shards as u64;
    assert!(
        read <= bound,
        "{read} items read for {DRAWN} entries, over {bound}"
    );

    // After a plain key, or a cursor whose count lies, the pages go on
    // from the next key all the same, each within its bound, each `next`
    // one the route takes back.
    let middle = &every[DRAWN / 2];
    for lie in ["", ".1", ".9999999999"] {
        let mut after = format!("{middle}{lie}");
        let mut keys = Vec::new();
        for _ in 0..3 {
            let (page, items) = recorded_page(&app, &recorder, (&ev, LIMIT, Some(&after))).await;
            assert!(items as usize <= LIMIT * 8, "{items} read after {after}");
            keys.extend(listed_entries(&page).into_iter().map(|(k, _)| k));
            match page["next"].as_str() {
                Some(next) => after = accepted(next),
                None => break,
            }
        }
        let rest = &every[DRAWN / 2 + 1..];
        assert_eq!(keys[..], rest[..keys.len()], "after {middle}{lie}");
        if lie != ".9999999999" {
            assert!(keys.len() >= LIMIT, "after {middle}{lie}: {}", keys.len());
        }
    }
}

/// `next`, checked to be an `after` the route takes.
fn accepted(next: &str) -> String {
    assert!(DrawCursor::parse(next).is_ok(), "{next}");
    next.to_owned()
}
