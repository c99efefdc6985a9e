//! publish-events: the table's stream records out as events (see
//! `domain::outbox` for what each write means). In AWS they go to the
//! EventBridge bus `EVENT_BUS_NAME`; locally `make dev` hands the same
//! batches to a sink that logs them and keeps them for `/_dev/events`.
//!
//! Delivery is at least once: a record with an event that could not be
//! put is reported as a batch item failure, so Lambda delivers it again
//! (its events keep their ids; consumers deduplicate on `id`), and after
//! the event source's retries it lands in the dead-letter queue.

use std::future::Future;

use aws_config::BehaviorVersion;
use aws_sdk_eventbridge::types::PutEventsRequestEntry;
use serde_json::{json, Value};

use crate::config::ConfigError;
use crate::domain::outbox::{state_events, StateEvent};
use crate::domain::Millis;
use crate::store::item_change;

/// Every event's `source`.
pub const EVENT_SOURCE: &str = "seatclaim";
/// Entries per `PutEvents` call (EventBridge's limit).
pub const PUT_EVENTS_MAX_ENTRIES: usize = 10;

/// Where published events go. `put` answers, per event, whether it was
/// accepted.
pub trait EventSink {
    fn put(&self, events: &[StateEvent]) -> impl Future<Output = Vec<bool>> + Send;
}

/// What publishing one batch of stream records did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Published {
    pub records: usize,
    pub events: usize,
    /// Sequence numbers of the records reported as failures.
    pub failed_records: Vec<String>,
}

impl Published {
    /// Lambda's partial batch response (`ReportBatchItemFailures`).
    pub fn batch_response(&self) -> Value {
        let failures: Vec<Value> = self
            .failed_records
            .iter()
            .map(|id| json!({"itemIdentifier": id}))
            .collect();
        json!({"batchItemFailures": failures})
    }
}

/// Publishes the events of a `{"Records": [...]}` batch, in record order,
/// [`PUT_EVENTS_MAX_ENTRIES`] at a time. A record is reported as failed
/// when it cannot be decoded or any of its events was not accepted; the
/// others are not (their events are out).
pub async fn publish_records(sink: &impl EventSink, batch: &Value, now: Millis) -> Published {
    let records = batch["Records"].as_array().map_or(&[][..], Vec::as_slice);
    let mut published = Published {
        records: records.len(),
        ..Published::default()
    };
    // Every event with the index of its record.
    let mut events: Vec<(usize, StateEvent)> = Vec::new();
    let mut failed = vec![false; records.len()];
    for (i, record) in records.iter().enumerate() {
        match item_change(record, now) {
            Ok(Some(change)) => events.extend(state_events(&change).into_iter().map(|e| (i, e))),
            Ok(None) => {}
            Err(e) => {
                tracing::error!(error = %e, "a stream record could not be decoded; reported as a failure");
                failed[i] = true;
            }
        }
    }
    for chunk in events.chunks(PUT_EVENTS_MAX_ENTRIES) {
        let batch: Vec<StateEvent> = chunk.iter().map(|(_, e)| e.clone()).collect();
        let accepted = sink.put(&batch).await;
        for (k, (record, _)) in chunk.iter().enumerate() {
            if accepted.get(k).copied().unwrap_or(false) {
                published.events += 1;
            } else {
                failed[*record] = true;
            }
        }
    }
    published.failed_records = records
        .iter()
        .zip(&failed)
        .filter(|(_, failed)| **failed)
        .map(|(record, _)| {
            record["dynamodb"]["SequenceNumber"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    published
}

/// An event's EventBridge `Detail`: its detail as JSON.
pub fn detail_json(event: &StateEvent) -> String {
    // Serialising a struct of strings and numbers cannot fail.
    serde_json::to_string(&event.detail).unwrap_or_default()
}

/// The bus `EVENT_BUS_NAME`, through EventBridge's `PutEvents`.
pub struct EventBridgeBus {
    client: aws_sdk_eventbridge::Client,
    bus: String,
}

impl EventBridgeBus {
    /// Reads `EVENT_BUS_NAME` (a clear start-up error without it) and builds
    /// the client with the store's timeouts.
    pub async fn from_env() -> Result<Self, ConfigError> {
        let bus = std::env::var(crate::config::EVENT_BUS_NAME)
            .ok()
            .filter(|b| !b.is_empty())
            .ok_or(ConfigError::Missing(crate::config::EVENT_BUS_NAME))?;
        let sdk = aws_config::defaults(BehaviorVersion::latest())
            .http_client(crate::store::http_client())
            .timeout_config(crate::store::sdk_timeouts())
            .load()
            .await;
        Ok(Self::new(aws_sdk_eventbridge::Client::new(&sdk), &bus))
    }

    pub fn new(client: aws_sdk_eventbridge::Client, bus: &str) -> Self {
        Self {
            client,
            bus: bus.to_owned(),
        }
    }
}

impl EventSink for EventBridgeBus {
    async fn put(&self, events: &[StateEvent]) -> Vec<bool> {
        let entries = events
            .iter()
            .map(|e| {
                PutEventsRequestEntry::builder()
                    .event_bus_name(&self.bus)
                    .source(EVENT_SOURCE)
                    .detail_type(e.detail_type.as_str())
                    .detail(detail_json(e))
                    .build()
            })
            .collect();
        match self
            .client
            .put_events()
            .set_entries(Some(entries))
            .send()
            .await
        {
            // One result per entry, in order; an entry with an error code
            // was not put.
            Ok(out) => {
                let results = out.entries.unwrap_or_default();
                (0..events.len())
                    .map(|k| results.get(k).is_some_and(|r| r.error_code.is_none()))
                    .collect()
            }
            Err(e) => {
                tracing::warn!(error = %crate::error::chain(&e), events = events.len(), "PutEvents failed; the records are retried");
                vec![false; events.len()]
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// A sink that refuses the events of chosen seats.
    struct Refusing {
        refuse: &'static [&'static str],
        calls: Mutex<Vec<usize>>,
    }

    impl EventSink for Refusing {
        async fn put(&self, events: &[StateEvent]) -> Vec<bool> {
            self.calls
                .lock()
                .map(|mut c| c.push(events.len()))
                .unwrap_or_default();
            events
                .iter()
                .map(|e| {
                    !e.detail
                        .seat_id
                        .as_ref()
                        .is_some_and(|s| self.refuse.contains(&s.as_str()))
                })
                .collect()
        }
    }

    fn seat_record(seq: u32, seat: &str) -> Value {
        let image = |status: &str| {
            let mut i = json!({
                "PK": {"S": "SEATS#0123456789abcdef#A-1#0"}, "SK": {"S": format!("SEAT#{seat}")},
                "eventId": {"S": "ev"}, "seatId": {"S": seat}, "sectionId": {"S": "A"}, "row": {"S": "1"},
                "number": {"N": "1"}, "ordinal": {"N": "0"}, "status": {"S": status},
            });
            if status == "HELD" {
                i["holderOrderId"] = json!({"S": "o1"});
                i["holdExpiresAt"] = json!({"N": "5000"});
            }
            i
        };
        json!({"eventID": format!("id-{seq}"), "eventName": "MODIFY", "dynamodb": {
            "Keys": {"PK": {"S": "SEATS#0123456789abcdef#A-1#0"}},
            "OldImage": image("AVAILABLE"), "NewImage": image("HELD"), "SequenceNumber": seq.to_string(),
        }})
    }

    #[tokio::test]
    async fn exactly_the_records_with_a_refused_or_undecodable_event_are_reported() {
        let mut records: Vec<Value> = (1..=23)
            .map(|i| seat_record(i, &format!("A-1-{i}")))
            .collect();
        records.push(json!({"eventID": "broken", "dynamodb": {"Keys": {"PK": {"S": "ORDER#x"}}, "NewImage": {"status": {"S": "?"}}, "SequenceNumber": "99"}}));
        records.push(json!({"eventID": "map", "dynamodb": {"Keys": {"PK": {"S": "MAP#x"}}, "SequenceNumber": "100"}}));
        let sink = Refusing {
            refuse: &["A-1-4", "A-1-17"],
            calls: Mutex::default(),
        };
        let out = publish_records(&sink, &json!({ "Records": records }), Millis(0)).await;
        assert_eq!(out.failed_records, vec!["4", "17", "99"]);
        assert_eq!((out.records, out.events), (25, 21));
        let calls = sink.calls.lock().map(|c| c.clone()).unwrap_or_default();
        assert_eq!(calls, vec![10, 10, 3], "at most 10 entries per PutEvents");
        assert_eq!(
            out.batch_response(),
            json!({"batchItemFailures": [{"itemIdentifier": "4"}, {"itemIdentifier": "17"}, {"itemIdentifier": "99"}]})
        );
    }
}
