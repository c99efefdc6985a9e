//! What one on-sale run measured ([`OnSale`]), and the rate of claim
//! attempts it is judged against: what the run, its projections and its
//! documents all share, so none of them reaches up into another.

use super::demand::{DemandModel, StreamCounts};
use super::onsale_history::HistoryVerdict;
use super::pricing::Projection;
use crate::capacity;
use crate::kit::Timing;
use std::collections::BTreeMap;
use std::time::Duration;

/// The rate of claim attempts the issue sets as the goal.
pub(crate) const TARGET_CLAIMS_PER_SECOND: f64 = 20_000.0;

/// What one on-sale run measured.
#[derive(Debug, Clone, Default)]
pub struct OnSale {
    pub model: Option<DemandModel>,
    pub creation: Duration,
    pub creation_answer: u16,
    pub creation_write_units: f64,
    pub attempts: u64,
    pub won: u64,
    pub refused: u64,
    pub unavailable: u64,
    pub orders: u64,
    pub confirmed: u64,
    pub sold_seats: u64,
    /// General-admission places sold, and places over capacity (sold plus
    /// live holds, from the buckets; must be 0).
    pub sold_places: u64,
    pub oversold_places: u64,
    pub wall: Duration,
    pub sweep: Duration,
    pub swept_orders: u64,
    /// Requests through each function and their mean handler time (ms).
    pub functions: BTreeMap<&'static str, (u64, f64)>,
    pub table_write_units: f64,
    pub table_read_units: f64,
    /// Write units on the pending index (all shards).
    pub index_write_units: f64,
    pub new_keys: Projection,
    pub old_keys: Projection,
    /// Invariant violations the table check found after the run.
    pub violations: usize,
    /// The buyers' answers, the sold-out phase's seeded sales and its
    /// crowd's get-seat answers, judged by the history checker.
    pub history: HistoryVerdict,
    /// The recorded requests replayed through the capacity meter.
    pub replays: crate::replay::Replays,
    /// The selling phase's recorded requests, priced, by the part of
    /// production that sent them (the buyers, the sweep, the projection):
    /// what the replays replay, side by side.
    pub priced_parts: Vec<Vec<super::pricing::Priced>>,
    /// The seat map of the sold-through event: reply bytes raw and gzip,
    /// read units per uncached request, and uncached request latencies.
    pub map_bytes: usize,
    pub map_gzip_bytes: usize,
    pub map_read_units: f64,
    pub map_latency: Timing,
    /// Stream records the projection read, and how long catching up took.
    pub stream_records: usize,
    pub projection: Duration,
    /// The sold-out phase, after the buyers.
    pub sold_out: Option<super::sold_out::SoldOutPhase>,
    /// Every priced request of the selling phase (buyers, sweep,
    /// projection), for the crowd's projection.
    pub charges: Vec<capacity::Charge>,
    /// DynamoDB requests made for each function in the selling phase.
    pub round_trips: BTreeMap<String, u64>,
    /// The sweep's units, all its expired orders together.
    pub sweep_write_units: f64,
    pub sweep_read_units: f64,
    /// The stream the selling phase left.
    pub stream: StreamCounts,
    pub ok: bool,
}
