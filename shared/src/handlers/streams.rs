//! The stream entry points: the table's DynamoDB stream records in,
//! project-seat-map's seat map (a waitlist armed for a sell-out, opened
//! when the map shows one; an open waitlist's offerer told of the seats
//! a batch freed) and publish-events' events out.

use std::collections::{BTreeSet, HashMap};

use super::opening::{open_if_sold_out, Look};
use crate::domain::map_parts::part_of_seat;
use crate::domain::waitlist::WaitlistStatus;
use crate::domain::EventRef;
use crate::error::Error;
use crate::{metrics, outbox, store, App, Store};

/// The project-seat-map handler: a batch of the table's stream records in
/// (Lambda's DynamoDB event), the seat map's projection updated, and the
/// records that could not be written reported as batch item failures (the
/// event source retries from the first of them).
pub async fn project_seat_map(
    app: &App,
    event: lambda_runtime::LambdaEvent<serde_json::Value>,
) -> Result<serde_json::Value, std::convert::Infallible> {
    let reply = project_records(app, &event.payload).await;
    metrics::flush();
    Ok(reply)
}

/// [`project_seat_map`] over a `{"Records": [...]}` document (the local
/// stream follower feeds the same shape).
pub async fn project_records(app: &App, records: &serde_json::Value) -> serde_json::Value {
    let store = &app.store;
    let batch = records["Records"].as_array().map_or(&[][..], Vec::as_slice);
    let changes: Vec<_> = batch.iter().filter_map(store::seat_change).collect();
    let full: Vec<_> = batch.iter().filter_map(store::full_bucket).collect();
    let mut failed = store.project_seat_changes(&changes).await;
    failed.extend(store.note_full_buckets(&full).await);
    failed.extend(look_at_waitlists(app, batch, &changes).await);
    tracing::info!(
        records = batch.len(),
        seatChanges = changes.len(),
        failed = failed.len(),
        "seat map projected"
    );
    metrics::projected(changes.len(), failed.len());
    let failures: Vec<_> = failed
        .into_iter()
        .map(|id| serde_json::json!({"itemIdentifier": id}))
        .collect();
    serde_json::json!({"batchItemFailures": failures})
}

/// What a batch did to one event's seats and places, for its waitlist.
#[derive(Default)]
struct BatchOfEvent {
    /// It held or sold seats, or changed places: a sell-out may show.
    took: bool,
    /// It freed seats: an open waitlist may offer them.
    freed: bool,
    /// The parts (`domain::map_parts`) of the rows it changed.
    parts: BTreeSet<u8>,
    /// Its records' sequence numbers (reported failed for a retry).
    sequences: Vec<String>,
}

/// After a batch is projected, each event whose seats or places it
/// changed has a copy of its waitlist's state read, once (eventually
/// consistent, a copy picked at random: every batch of an on-sale looks,
/// and the main item would be its hottest key). An armed waitlist is
/// opened at a sell-out (API.md, "Opening, and the waitlist-only sale")
/// when the batch took something; for an open one the batch is counted
/// for the offerer's tick (API.md, "Offers": frees reach the offerer through this reader
/// of the stream). Returns the sequence numbers of the records of events
/// whose look a retry can finish (throttling, an outage: reported as
/// failed, so the stream delivers them again and the look is taken again).
async fn look_at_waitlists(
    app: &App,
    batch: &[serde_json::Value],
    changes: &[store::SeatChange],
) -> Vec<String> {
    let mut events: HashMap<EventRef, BatchOfEvent> = HashMap::new();
    for change in changes {
        let of_event = events.entry(change.event.clone()).or_default();
        match change.state {
            Some(_) => of_event.took = true,
            None => of_event.freed = true,
        }
        of_event.parts.extend(part_of_seat(&change.seat));
        of_event.sequences.push(change.sequence.clone());
    }
    for record in batch {
        let Some((event, sequence)) = store::bucket_record(record) else {
            continue;
        };
        let of_event = events.entry(event).or_default();
        of_event.took = true;
        of_event.freed |= store::bucket_freed(record);
        of_event.sequences.push(sequence);
    }
    // A seat listed for resale, or let go of by its offer, is offered on.
    for record in batch {
        let Some((event, sequence)) = store::resale_offerable(record) else {
            continue;
        };
        let of_event = events.entry(event).or_default();
        of_event.freed = true;
        of_event.sequences.push(sequence);
    }
    let mut failed = Vec::new();
    for (event, of_event) in events {
        let look = look_at_waitlist(app, &event, &of_event).await;
        failed.extend(retried(look, of_event.sequences));
    }
    failed
}

/// One event's look after a batch: its waitlist's copy read once, then the
/// sell-out look (armed, and the batch took something; the map only
/// then), or (open) one more batch counted for the offerer's tick: as
/// freeing seats if it did, and in the parts of the rows it changed.
async fn look_at_waitlist(
    app: &App,
    event: &EventRef,
    of_event: &BatchOfEvent,
) -> Result<(), Error> {
    let copy = Store::pick_state_copy();
    let Some(stored) = app.store.read_waitlist_copy_of(event, copy).await? else {
        return Ok(());
    };
    if of_event.took && stored.waitlist.opens_at_sell_out() {
        open_if_sold_out(&app.store, event, Look::Copy(stored)).await?;
    } else if stored.waitlist.status() == WaitlistStatus::Open {
        // The tick offers them: one offerer per waitlist (`store::frees`);
        // it keeps the map, and reads again the parts changed.
        let (freed, parts) = (of_event.freed, &of_event.parts);
        app.store.note_changes(event, freed, parts).await?;
    }
    Ok(())
}

/// The records to report failed after a waitlist's look over them: none
/// when it succeeded, or when it failed for a reason of ours (an item it
/// cannot read would fail every delivery alike: logged, and the event's
/// next batch looks); all of them when a retry can finish it (throttling,
/// an outage), so the stream delivers them again.
fn retried(look: Result<(), Error>, sequences: Vec<String>) -> Vec<String> {
    match look {
        Ok(()) => Vec::new(),
        Err(e) if e.is_internal() => {
            tracing::error!(error = %crate::error::chain(&e), "waitlist: the look after a batch failed");
            Vec::new()
        }
        Err(e) => {
            tracing::warn!(error = %crate::error::chain(&e), "waitlist: the look after a batch will be taken again");
            sequences
        }
    }
}

/// The publish-events handler: a batch of the table's stream records in
/// (Lambda's DynamoDB event), one event per state change put on the bus,
/// and the records it could not publish reported as batch item failures.
pub async fn publish_events(
    bus: &outbox::EventBridgeBus,
    event: lambda_runtime::LambdaEvent<serde_json::Value>,
) -> Result<serde_json::Value, std::convert::Infallible> {
    let published = outbox::publish_records(bus, &event.payload, crate::world::now()).await;
    metrics::published(published.events, published.failed_records.len());
    metrics::flush();
    tracing::info!(
        records = published.records,
        events = published.events,
        failed = published.failed_records.len(),
        "events published"
    );
    Ok(published.batch_response())
}
