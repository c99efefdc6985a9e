//! The dev server's events out: what publish-events puts on the bus in
//! AWS, here logged as one JSON line each and kept (the latest
//! [`FEED_CAPACITY`]) for `GET /_dev/events?after=<n>`.
//!
//! The feed also answers EventBridge's `PutEvents` (`POST /` with
//! `X-Amz-Target: AWSEvents.PutEvents`), so the real EventBridge client,
//! and a function run by `sam local invoke` pointed at the dev server with
//! `AWS_ENDPOINT_URL_EVENTBRIDGE`, publish into the same feed.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::io::Write;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use shared::domain::outbox::StateEvent;
use shared::outbox::EventSink;

/// Events the feed keeps (the contract's 10,000).
pub const FEED_CAPACITY: usize = 10_000;

/// Which events a feed refuses (tests of partial failures): by detail-type
/// and detail.
pub type Refusal = Arc<dyn Fn(&str, &Value) -> bool + Send + Sync>;

#[derive(Clone, Default)]
pub struct DevFeed {
    inner: Arc<Mutex<Feed>>,
    /// The table's events as the stream shows their items (eventId -> the
    /// page's catalogue entry): no Scan needed to list them.
    catalog: Arc<Mutex<BTreeMap<String, Value>>>,
    refuse: Option<Refusal>,
    quiet: bool,
}

#[derive(Default)]
struct Feed {
    last: u64,
    events: VecDeque<(u64, String, Value)>,
    /// Ids of the events kept: a redelivered event is accepted, not kept twice.
    ids: HashSet<String>,
}

impl DevFeed {
    /// A feed that logs every event it keeps on stdout.
    pub fn new() -> Self {
        Self::default()
    }

    /// A feed that keeps events without logging them (tests).
    pub fn quiet() -> Self {
        Self {
            quiet: true,
            ..Self::default()
        }
    }

    /// A quiet feed that refuses the events `refuse` picks.
    pub fn refusing(refuse: impl Fn(&str, &Value) -> bool + Send + Sync + 'static) -> Self {
        Self {
            refuse: Some(Arc::new(refuse)),
            ..Self::quiet()
        }
    }

    /// Keeps one event; false if refused.
    pub fn push(&self, detail_type: &str, detail: Value) -> bool {
        if self
            .refuse
            .as_ref()
            .is_some_and(|refuse| refuse(detail_type, &detail))
        {
            return false;
        }
        // A poisoned lock only means a panic elsewhere mid-push; the feed is
        // still a valid list.
        let mut feed = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let id = detail["id"].as_str().unwrap_or_default().to_owned();
        if !id.is_empty() && !feed.ids.insert(id) {
            return true;
        }
        feed.last += 1;
        let seq = feed.last;
        if !self.quiet {
            // A closed stdout (the reader went away) must not stop the feed.
            let line = json!({"seq": seq, "detailType": detail_type, "detail": detail});
            let _ = writeln!(std::io::stdout().lock(), "{line}");
        }
        feed.events.push_back((seq, detail_type.to_owned(), detail));
        if feed.events.len() > FEED_CAPACITY {
            if let Some((_, _, old)) = feed.events.pop_front() {
                if let Some(id) = old["id"].as_str() {
                    feed.ids.remove(id);
                }
            }
        }
        true
    }

    /// `GET /_dev/events?after=<n>`: the kept events with `seq > after`, in
    /// publishing order, and the newest `seq` there is, to ask from next (a
    /// `last` below `after` means the dev server started again).
    pub fn after(&self, after: u64) -> Value {
        let feed = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let events: Vec<Value> = feed
            .events
            .iter()
            .filter(|(seq, _, _)| *seq > after)
            .map(|(seq, detail_type, detail)| json!({"seq": seq, "detailType": detail_type, "detail": detail}))
            .collect();
        json!({"events": events, "last": feed.last})
    }

    /// Notes the events (the table's event items) a batch of stream
    /// records writes, for [`DevFeed::catalog`].
    pub fn note_events(&self, batch: &Value) {
        let mut catalog = self.catalog.lock().unwrap_or_else(|p| p.into_inner());
        for record in batch["Records"].as_array().into_iter().flatten() {
            let data = &record["dynamodb"];
            let is_event = data["Keys"][shared::store::PK]["S"]
                .as_str()
                .is_some_and(|pk| pk.starts_with(shared::store::EVENT_PK_PREFIX))
                && data["Keys"][shared::store::SK]["S"] == shared::store::EVENT_SK;
            let image = &data["NewImage"];
            if let (true, Some(id)) = (is_event, image[shared::store::EVENT_ID]["S"].as_str()) {
                let entry = json!({"eventId": id, "name": image["name"]["S"], "ready": image["ready"]["BOOL"].as_bool().unwrap_or(false)});
                catalog.insert(id.to_owned(), entry);
            }
        }
    }

    /// `GET /_dev/catalog`: the events seen on the stream, by id.
    pub fn catalog(&self) -> Value {
        let catalog = self.catalog.lock().unwrap_or_else(|p| p.into_inner());
        json!({ "events": catalog.values().collect::<Vec<_>>() })
    }

    /// Every kept event, oldest first (tests).
    pub fn events(&self) -> Vec<(String, Value)> {
        let feed = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        feed.events
            .iter()
            .map(|(_, t, d)| (t.clone(), d.clone()))
            .collect()
    }

    /// An EventBridge `PutEvents` request body, answered as EventBridge
    /// does: one result per entry, in order, an `ErrorCode` on each one not
    /// put, and how many failed.
    pub fn put_events(&self, body: &[u8]) -> Result<Value, String> {
        let request: Value =
            serde_json::from_slice(body).map_err(|e| format!("PutEvents body: {e}"))?;
        let entries = request["Entries"]
            .as_array()
            .ok_or("PutEvents body has no Entries")?;
        let mut failed = 0;
        let results: Vec<Value> = entries
            .iter()
            .map(|entry| {
                let detail = entry["Detail"].as_str().and_then(|d| serde_json::from_str::<Value>(d).ok());
                let (Some(detail_type), Some(detail)) = (entry["DetailType"].as_str(), detail) else {
                    failed += 1;
                    return json!({"ErrorCode": "MalformedDetail", "ErrorMessage": "DetailType and a JSON Detail are required"});
                };
                if self.push(detail_type, detail) {
                    json!({"EventId": uuid::Uuid::new_v4().to_string()})
                } else {
                    failed += 1;
                    json!({"ErrorCode": "InternalFailure", "ErrorMessage": "refused by the dev feed"})
                }
            })
            .collect();
        Ok(json!({"FailedEntryCount": failed, "Entries": results}))
    }
}

impl EventSink for DevFeed {
    async fn put(&self, events: &[StateEvent]) -> Vec<bool> {
        events
            .iter()
            .map(|e| {
                self.push(
                    e.detail_type.as_str(),
                    serde_json::to_value(&e.detail).unwrap_or(Value::Null),
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_feed_keeps_the_latest_ten_thousand_once_each_in_order() {
        let feed = DevFeed::quiet();
        for i in 0..(FEED_CAPACITY + 5) {
            assert!(feed.push("seat.held", json!({"id": format!("r{i}.0")})));
        }
        assert!(
            feed.push(
                "seat.held",
                json!({"id": format!("r{}.0", FEED_CAPACITY + 4)})
            ),
            "a redelivery is accepted"
        );
        let all = feed.after(0);
        let events = all["events"].as_array().unwrap();
        assert_eq!(events.len(), FEED_CAPACITY);
        assert_eq!(
            (events[0]["seq"].as_u64(), all["last"].as_u64()),
            (Some(6), Some(FEED_CAPACITY as u64 + 5))
        );
        let newest = feed.after(FEED_CAPACITY as u64 + 3);
        assert_eq!(newest["events"].as_array().unwrap().len(), 2);
        assert_eq!(
            feed.after(1_000_000),
            json!({"events": [], "last": FEED_CAPACITY as u64 + 5}),
            "a restarted server's feed"
        );
    }

    #[test]
    fn the_catalogue_lists_the_events_the_stream_shows() {
        let feed = DevFeed::quiet();
        let record = |pk: &str, sk: &str, id: &str, ready: bool| {
            json!({"dynamodb": {"Keys": {"PK": {"S": pk}, "SK": {"S": sk}},
            "NewImage": {"eventId": {"S": id}, "name": {"S": "Gala"}, "ready": {"BOOL": ready}}}})
        };
        feed.note_events(&json!({"Records": [record("EVENT#ab", "EVENT", "gala", false), record("EVENT#ab", "PLAN#0001", "x", true)]}));
        feed.note_events(&json!({"Records": [record("EVENT#ab", "EVENT", "gala", true), record("SEATS#ab#A-1#0", "SEAT#A-1-1", "y", true)]}));
        assert_eq!(
            feed.catalog(),
            json!({"events": [{"eventId": "gala", "name": "Gala", "ready": true}]})
        );
    }

    #[test]
    fn put_events_answers_per_entry_like_eventbridge() {
        let feed = DevFeed::refusing(|t, _| t == "seat.sold");
        let body = json!({"Entries": [
            {"Source": "seatclaim", "DetailType": "seat.held", "Detail": "{\"id\":\"a\"}"},
            {"Source": "seatclaim", "DetailType": "seat.sold", "Detail": "{\"id\":\"b\"}"},
            {"Source": "seatclaim", "DetailType": "seat.held", "Detail": "not json"},
        ]});
        let reply = feed.put_events(body.to_string().as_bytes()).unwrap();
        assert_eq!(reply["FailedEntryCount"], 2);
        let entries = reply["Entries"].as_array().unwrap();
        assert!(entries[0]["EventId"].is_string());
        assert_eq!(
            (
                entries[1]["ErrorCode"].as_str(),
                entries[2]["ErrorCode"].as_str()
            ),
            (Some("InternalFailure"), Some("MalformedDetail"))
        );
        assert_eq!(feed.events().len(), 1);
        assert!(feed.put_events(b"{}").is_err());
    }
}
