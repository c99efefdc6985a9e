//! The on-sale demand model's vocabulary (issue 9): the event and its
//! buyers, the general-admission section, the Zipf draw of sections and
//! rows, and what the table's stream carried. The on-sale, its sold-out
//! phase and the first-seconds projection share it; it depends on none
//! of them.

use crate::kit::Rng;

/// The demand model's event and buyers.
#[derive(Debug, Clone, Copy)]
pub struct DemandModel {
    pub sections: u32,
    pub rows: u32,
    pub seats_per_row: u32,
    /// Places of the general-admission section `FLOOR` (one buyer in six
    /// goes there, as its share of the capacity).
    pub ga_capacity: u32,
    pub buyers: usize,
    pub in_flight: usize,
    pub hold_seconds: u32,
    /// Requests of the crowd refused once the event is sold out.
    pub sold_out_crowd: usize,
    /// Simulated seconds the replay at the target holds its rate: the
    /// peak minute in the full bench; a couple in the smoke pass, which
    /// proves the replay runs (a minute of 20,000 attempts a second, most
    /// throttled on the smoke's small event, took minutes of CI's debug
    /// build).
    pub peak_seconds: f64,
}

/// The general-admission section of the model.
pub(super) const GA_SECTION: &str = "FLOOR";

/// Zipf(1.0) over ranks 1..=n: the cumulative weights, to sample from.
pub(super) struct Zipf(Vec<f64>);
impl Zipf {
    pub(super) fn new(n: u32) -> Self {
        let mut acc = 0.0;
        Self(
            (1..=n)
                .map(|k| {
                    acc += 1.0 / f64::from(k);
                    acc
                })
                .collect(),
        )
    }
    /// A rank, 1-based.
    pub(super) fn sample(&self, rng: &mut Rng) -> u32 {
        let total = self.0.last().copied().unwrap_or(1.0);
        let x = (rng.next() >> 11) as f64 / (1u64 << 53) as f64 * total;
        self.0.partition_point(|c| *c <= x) as u32 + 1
    }
}

/// What the table's stream carried: all its records, those each of its
/// two functions' filters (template.yaml) let through, and the events the
/// outbox makes of them (one EventBridge entry each).
#[derive(Debug, Clone, Copy, Default)]
pub struct StreamCounts {
    pub records: u64,
    /// project-seat-map's: seat items and general-admission buckets.
    pub seat_map_records: u64,
    /// publish-events': every order change, seat and bucket changes, and
    /// the waitlists' states and entries.
    pub publish_records: u64,
    pub events: u64,
}

impl StreamCounts {
    pub(super) fn count(&mut self, record: &serde_json::Value) {
        self.records += 1;
        let pk = record["dynamodb"]["Keys"][shared::store::PK]["S"]
            .as_str()
            .unwrap_or_default();
        let inventory = pk.starts_with(shared::store::SEAT_PK_PREFIX)
            || pk.starts_with(shared::store::GA_PK_PREFIX);
        if inventory {
            self.seat_map_records += 1;
        }
        let waitlist = pk.starts_with(shared::store::WAITLIST_PK_PREFIX)
            || pk.starts_with(shared::store::ENTRY_PK_PREFIX);
        if pk.starts_with(shared::store::ORDER_PK_PREFIX)
            || (inventory && record["eventName"] == "MODIFY")
            || waitlist
        {
            self.publish_records += 1;
        }
        if let Ok(Some(change)) = shared::store::item_change(record, shared::world::now()) {
            self.events += shared::domain::outbox::state_events(&change).len() as u64;
        }
    }
}
