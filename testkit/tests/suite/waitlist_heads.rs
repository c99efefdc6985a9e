//! A look's reads of the line (API.md, "Offers"): the heads of the indexes
//! the free units could fill are read once a look, then again only where
//! an offer moved an entry: each offer costs a read of the shards its
//! entry waited in, not of every index, against a real DynamoDB Local.

use crate::common;

use common::waitlist::*;
use common::*;
use local::metrics::RequestCounter;
use serde_json::json;
use shared::domain::offer::{fillable_indexes, free_units, SeatsKnown};

/// Entries waiting, one seat each, any section.
const ENTRIES: u32 = 8;

#[tokio::test]
async fn a_looks_offers_read_only_the_shards_their_entries_waited_in() {
    let counter = RequestCounter::default();
    let app = testkit::fresh_app_counting(Some(counter.clone())).await;
    let plan = plan(&[("A", "1", 8), ("B", "1", 8)], Some(300));
    let (ev, _) = create_event(&app, "hd", &plan).await;
    put_waitlist(&app, &ev, json!({"opens": "now", "maxQuantity": 4})).await;
    for n in 0..ENTRIES {
        joined(&app, &ev, &format!("user:{n}"), json!({})).await;
    }
    // Every index the free seats could fill, as the look first sees them:
    // each of its shards is read once.
    let event_id = shared::domain::EventId::parse(&ev).unwrap();
    let event = app.event(&event_id).await.unwrap().unwrap();
    let now = shared::world::now();
    let read = app.store.seat_map_rows(&event, true).await.unwrap();
    let map = shared::domain::seat_map(&event, &read.rows, &read.buckets, now);
    let (listed, taken) = (Default::default(), Default::default());
    let known = SeatsKnown {
        listed: &listed,
        taken: &taken,
    };
    let free = free_units(&map, &known, &read.buckets, now);
    let shards = shared::store::index_shards(&fillable_indexes(&free, 4)).len() as u64;

    counter.take();
    assert_eq!(offer_free(&app, &ev).await, ENTRIES);
    let queries = counter.take().get("Query").copied().unwrap_or(0);
    // The heads once, then the one shard each offer's entry waited in; the
    // map's rows (a Query a section) besides.
    let bound = shards + u64::from(ENTRIES) + 2;
    assert!(
        queries <= bound,
        "{queries} Queries for {ENTRIES} offers, over {bound} ({shards} index shards)"
    );
}
