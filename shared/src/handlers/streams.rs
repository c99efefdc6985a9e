//! The stream entry points: the table's DynamoDB stream records in,
//! project-seat-map's seat map (a waitlist armed for a sell-out, opened
//! when the map shows one; an open waitlist offered the seats a batch
//! freed) and publish-events' events out.

use std::collections::HashMap;

use super::offers::offer_free;
use super::opening::{open_if_sold_out, Look};
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
    failed.extend(open_sold_out_waitlists(store, batch, &changes).await);
    failed.extend(offer_freed_seats(app, &changes).await);
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

/// After a batch is projected: each event whose seats or places the batch
/// took (a hold or a sale) and whose waitlist is armed for a sell-out is
/// looked at, and its waitlist opened if nothing is available (API.md,
/// "Opening, and the waitlist-only sale"). One read of the waitlist per
/// such event and batch; the map only while it is armed. Returns the
/// sequence numbers of the records of events whose look a retry can finish
/// (throttling, an outage: reported as failed, so the stream delivers them
/// again and the look is taken again).
async fn open_sold_out_waitlists(
    store: &Store,
    batch: &[serde_json::Value],
    changes: &[store::SeatChange],
) -> Vec<String> {
    let mut taking: HashMap<EventRef, Vec<String>> = HashMap::new();
    let seats = changes
        .iter()
        .filter(|change| change.state.is_some())
        .map(|change| (change.event.clone(), change.sequence.clone()));
    for (event, sequence) in seats.chain(batch.iter().filter_map(store::bucket_record)) {
        taking.entry(event).or_default().push(sequence);
    }
    let mut failed = Vec::new();
    for (event, sequences) in taking {
        let look = open_if_sold_out(store, &event, Look::Copy).await;
        failed.extend(retried("the sell-out look", look.map(|_| ()), sequences));
    }
    failed
}

/// After a batch is projected: each event whose seats the batch freed
/// (a drop, a cancel, a decline, a released hold) and whose waitlist is
/// open is offered what is free (API.md, "Offers": frees reach the
/// offerer through this reader of the stream). One read of a copy of the
/// waitlist's state per such event and batch; the offerer's look only
/// while it is open. Returns the sequence numbers of the records whose
/// look a retry can finish, as [`open_sold_out_waitlists`] does.
async fn offer_freed_seats(app: &App, changes: &[store::SeatChange]) -> Vec<String> {
    let mut freeing: HashMap<EventRef, Vec<String>> = HashMap::new();
    for change in changes.iter().filter(|change| change.state.is_none()) {
        let sequences = freeing.entry(change.event.clone()).or_default();
        sequences.push(change.sequence.clone());
    }
    let mut failed = Vec::new();
    for (event, sequences) in freeing {
        let look = offer_if_open(app, &event).await;
        failed.extend(retried("the offerer's look", look, sequences));
    }
    failed
}

/// The offerer's look at `event`, if its waitlist is open (a copy of its
/// state read first, eventually consistent: the look reads the item).
async fn offer_if_open(app: &App, event: &EventRef) -> Result<(), Error> {
    let copy = Store::pick_state_copy();
    let Some(stored) = app.store.read_waitlist_copy_of(event, copy).await? else {
        return Ok(());
    };
    if stored.waitlist.status() == WaitlistStatus::Open {
        offer_free(app, &stored.event_id).await?;
    }
    Ok(())
}

/// The records to report failed after a look of `what` over them: none
/// when it succeeded, or when it failed for a reason of ours (an item it
/// cannot read would fail every delivery alike: logged, and the event's
/// next batch looks); all of them when a retry can finish it (throttling,
/// an outage), so the stream delivers them again.
fn retried(what: &str, look: Result<(), Error>, sequences: Vec<String>) -> Vec<String> {
    match look {
        Ok(()) => Vec::new(),
        Err(e) if e.is_internal() => {
            tracing::error!(error = %crate::error::chain(&e), "waitlist: {what} failed");
            Vec::new()
        }
        Err(e) => {
            tracing::warn!(error = %crate::error::chain(&e), "waitlist: {what} will be taken again");
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
