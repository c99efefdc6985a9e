//! The table's stream as publish-events reads it: its records so far,
//! and their events published in the event source's batches.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use shared::outbox::{publish_records, EventSink, Published};

use super::follow_stream;

/// Every record of the app's table's stream so far, oldest first.
pub async fn stream_records(app: &shared::App) -> Vec<Value> {
    let follower = follow_stream(app).await;
    let records = Arc::new(Mutex::new(Vec::new()));
    follower
        .catch_up(|batch| {
            let records = records.clone();
            async move {
                records
                    .lock()
                    .unwrap()
                    .extend(batch["Records"].as_array().cloned().unwrap_or_default())
            }
        })
        .await
        .unwrap();
    let records = records.lock().unwrap().clone();
    records
}

/// Publishes `records` into `sink` in batches of 100, as the event source
/// mapping delivers them; the failed records' sequence numbers.
pub async fn publish(sink: &impl EventSink, records: &[Value]) -> Published {
    let mut all = Published::default();
    for batch in records.chunks(100) {
        let out = publish_records(sink, &json!({ "Records": batch }), shared::world::now()).await;
        all.records += out.records;
        all.events += out.events;
        all.failed_records.extend(out.failed_records);
    }
    all
}
