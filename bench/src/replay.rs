//! The on-sale's recorded requests replayed through the capacity meter
//! (local/src/capacity's [`Meter`], DynamoDB's documented limits as
//! modelled there) at a crowd's rate on a simulated clock (issue 30,
//! part 2). DynamoDB Local serves a few hundred claims a second, far below
//! any partition's limit, so the limits are met here: the same requests
//! the on-sale sent, each priced from its items' sizes, under the new key
//! layout and re-keyed into the old one. A throttled request is retried
//! as the SDK's standard retry would retry it; one it does not retry, or
//! that runs out of attempts, is the 503 the handler answers.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use crate::capacity::meter::{Limits, Meter};
use crate::capacity::{Charge, Target};
use crate::Rng;

/// The SDK's standard retry (`RetryConfig::standard()`, what the functions
/// build): 3 attempts, full-jitter back-off from 1 s, doubling, at most
/// 20 s. Its retry token bucket (500 tokens a client, 5 a throttled retry)
/// is not modelled: it can only turn more retries into 503s sooner.
pub const SDK_ATTEMPTS: u32 = 3;
const SDK_INITIAL_BACKOFF_MS: i64 = 1_000;
const SDK_MAX_BACKOFF_MS: i64 = 20_000;

/// Whether the SDK retries `op` when it is throttled. A throttled
/// transaction is answered `TransactionCanceledException` with a
/// `ThrottlingError` reason, which the SDK does not classify as a
/// throttle: the store turns it into a 503 at once.
pub fn sdk_retries(op: &str) -> bool {
    op != "TransactWriteItems"
}

/// One recorded request as the replay needs it: whether it writes (the
/// quota it counts against), whether the SDK retries it, and the units it
/// consumed, per key.
#[derive(Debug, Clone)]
pub struct Priced {
    pub write: bool,
    pub retried: bool,
    pub charges: Vec<Charge>,
}

/// The key layout a replay charges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Layout {
    #[default]
    New,
    /// Every seat on its event's key, one counter per GA section, 8 index
    /// shards ([`crate::pricing`]'s `old_layout`).
    Old,
}

impl Layout {
    pub fn name(self) -> &'static str {
        match self {
            Layout::New => "new keys",
            Layout::Old => "old keys",
        }
    }

    fn rekey(self, t: &Target) -> Target {
        match self {
            Layout::New => t.clone(),
            Layout::Old => super::pricing::old_layout(t),
        }
    }
}

/// What one replay saw.
#[derive(Debug, Clone, Default)]
pub struct Replayed {
    pub layout: Layout,
    /// Requests offered a second.
    pub requests_per_second: f64,
    pub requests: u64,
    pub first_try: u64,
    pub after_retries: u64,
    /// Answered 503: not retried, or out of attempts.
    pub gave_up: u64,
    /// Throttled attempts by DynamoDB's reason.
    pub throttles: BTreeMap<String, u64>,
    /// From arrival to the attempt that was served after a throttle, or to
    /// the 503, ms (the round trips themselves not counted).
    pub waited_ms: Vec<f64>,
}

impl Replayed {
    pub fn throttled_share(&self) -> f64 {
        (self.after_retries + self.gave_up) as f64 / self.requests.max(1) as f64
    }

    pub fn waited_p99_ms(&self) -> f64 {
        let mut w = self.waited_ms.clone();
        w.sort_by(f64::total_cmp);
        w.get(((w.len() as f64 * 0.99) as usize).min(w.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0.0)
    }
}

/// DynamoDB's limits on a table warmed to its per-table quota before the
/// on-sale (on-demand's warm throughput): its allowance starts at the
/// quota instead of a new table's 4,000 write units.
pub fn warmed_table() -> Limits {
    let d = Limits::DYNAMODB;
    Limits {
        first_peak_write_units: d.table_write_quota / 2.0,
        first_peak_read_units: d.table_read_quota / 2.0,
        ..d
    }
}

/// How long the on-sale's replays last on the simulated clock: a
/// partition's limits are per second, so the recording is offered again,
/// in the same order, until this long has been offered (its keys keep
/// their shares of the load, as the projection assumes).
pub const REPLAY_SECONDS: f64 = 10.0;

/// Replays `requests` in order, evenly spaced at `per_second`, for at
/// least `seconds` (from the first again where they run out), each
/// charged under `layout` through a [`Meter`] of `limits`. A throttled
/// attempt the SDK retries is tried again after its back-off (jitter
/// drawn from `seed`) until [`SDK_ATTEMPTS`].
pub fn replay(
    requests: &[Priced],
    (per_second, seconds): (f64, f64),
    layout: Layout,
    limits: Limits,
    seed: u64,
) -> Replayed {
    let charged = rekeyed(requests, layout);
    let spacing_ms = 1_000.0 / per_second.max(1e-9);
    let arrival = |i: usize| (i as f64 * spacing_ms) as i64;
    let offered = if requests.is_empty() {
        0
    } else {
        requests.len().max((seconds * per_second).ceil() as usize)
    };
    // (when, offer, attempt), earliest first; offer i is request i mod len.
    let mut due: BinaryHeap<Reverse<(i64, usize, u32)>> =
        (0..offered).map(|i| Reverse((arrival(i), i, 0))).collect();
    let mut meter = Meter::new(limits);
    let mut rng = Rng(seed | 1);
    let mut out = Replayed {
        layout,
        requests_per_second: per_second,
        requests: offered as u64,
        ..Replayed::default()
    };
    while let Some(Reverse((at, i, attempt))) = due.pop() {
        let request = &requests[i % requests.len()];
        let Err(throttle) = meter.admit(at, &charged[i % requests.len()], request.write) else {
            if attempt == 0 {
                out.first_try += 1;
            } else {
                out.after_retries += 1;
                out.waited_ms.push((at - arrival(i)) as f64);
            }
            continue;
        };
        *out.throttles.entry(throttle.reason()).or_default() += 1;
        if request.retried && attempt + 1 < SDK_ATTEMPTS {
            let ceiling = (SDK_INITIAL_BACKOFF_MS << attempt).min(SDK_MAX_BACKOFF_MS);
            let pause = rng.below(ceiling as u64 + 1) as i64;
            due.push(Reverse((at + pause, i, attempt + 1)));
        } else {
            out.gave_up += 1;
            out.waited_ms.push((at - arrival(i)) as f64);
        }
    }
    out
}

/// Each request's charges with their keys under `layout`.
fn rekeyed(requests: &[Priced], layout: Layout) -> Vec<Vec<Charge>> {
    requests
        .iter()
        .map(|r| {
            r.charges
                .iter()
                .map(|c| Charge {
                    target: layout.rekey(&c.target),
                    ..c.clone()
                })
                .collect()
        })
        .collect()
}

/// Claim attempts a second at which the meter's first limit is reached
/// under `layout`, `attempts` the recorded requests made: per partition
/// key, its write units over 1,000 plus its read units over 3,000; per
/// table (and index), its units over `limits`' allowance (double the
/// first peak), as the meter combines them.
pub fn meter_ceiling(requests: &[Priced], attempts: f64, layout: Layout, limits: Limits) -> f64 {
    let mut keys: BTreeMap<Target, (f64, f64)> = BTreeMap::new();
    let mut tables: BTreeMap<Option<String>, (f64, f64)> = BTreeMap::new();
    for c in requests.iter().flat_map(|r| &r.charges) {
        let target = layout.rekey(&c.target);
        for u in [
            tables.entry(target.index.clone()).or_default(),
            keys.entry(target).or_default(),
        ] {
            u.0 += c.write_units;
            u.1 += c.read_units;
        }
    }
    let per_key = keys
        .values()
        .map(|&(w, r)| w / limits.partition_write_units + r / limits.partition_read_units);
    let per_table = tables.values().map(|&(w, r)| {
        w / (2.0 * limits.first_peak_write_units) + r / (2.0 * limits.first_peak_read_units)
    });
    per_key
        .chain(per_table)
        .filter(|&share| share > 0.0)
        .map(|share| attempts / share)
        .fold(f64::INFINITY, f64::min)
}

/// The share of the new layout's ceiling under the meter the first
/// replays run at: below it nothing should throttle, with room for the
/// second-to-second spread of a shuffled recording.
pub const BELOW_THE_CEILING: f64 = 0.8;

/// Which rate a replay ran at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rate {
    /// [`BELOW_THE_CEILING`] of the new layout's [`meter_ceiling`].
    BelowTheCeiling,
    /// The design's target.
    Target,
}

/// The on-sale's replays: the new layout's ceiling under the meter, and
/// each layout at each [`Rate`] (claim attempts a second).
#[derive(Debug, Clone, Default)]
pub struct Replays {
    pub ceiling: f64,
    pub runs: Vec<(Rate, f64, Replayed)>,
}

impl Replays {
    pub fn find(&self, rate: Rate, layout: Layout) -> Option<(f64, &Replayed)> {
        self.runs
            .iter()
            .find(|(r, _, run)| *r == rate && run.layout == layout)
            .map(|(_, claims, run)| (*claims, run))
    }
}

/// Replays the on-sale's `requests` (recorded in order: the buyers, then
/// the sweep, then the stream's projection) shuffled, as production runs
/// them side by side, at each [`Rate`] under each layout; `attempts` the
/// recorded claim attempts, `target` the design's rate.
pub fn on_sale_replays(requests: &[Priced], attempts: f64, target: f64) -> Replays {
    let limits = warmed_table();
    let ceiling = meter_ceiling(requests, attempts, Layout::New, limits);
    let mut shuffled = requests.to_vec();
    let mut rng = Rng(0x5_4FF1E);
    for i in (1..shuffled.len()).rev() {
        shuffled.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let per_attempt = requests.len() as f64 / attempts.max(1.0);
    let mut runs = Vec::new();
    if !ceiling.is_finite() || attempts <= 0.0 {
        return Replays { ceiling, runs };
    }
    for (rate, claims) in [
        (Rate::BelowTheCeiling, BELOW_THE_CEILING * ceiling),
        (Rate::Target, target),
    ] {
        for layout in [Layout::New, Layout::Old] {
            let pace = (claims * per_attempt, REPLAY_SECONDS);
            let run = replay(&shuffled, pace, layout, limits, 0x0C_5A1E);
            runs.push((rate, claims, run));
        }
    }
    Replays { ceiling, runs }
}

/// The replays as the on-sale's page prints them: one row each.
pub fn markdown(replays: &Replays) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let limits = warmed_table();
    let _ = writeln!(
        out,
        "\nThe on-sale's recorded requests replayed through the capacity meter (modelled: local/src/capacity's model of DynamoDB's documented limits, a partition's {:.0} write and {:.0} read units a second as a linear combination, a table's allowance of double its previous peak with up to 300 s of unused allowance banked, the per-table quota; the table warmed to {:.0} write and {:.0} read units before the on-sale) on a simulated clock. \
         The recording (its buyers, then the sweep, then the stream's projection) is shuffled, as production runs them side by side, evenly spaced at each rate, and offered again until {REPLAY_SECONDS:.0} s have passed; each request is priced from its items' sizes. \
         A throttled request is retried as the SDK's standard retry does ({SDK_ATTEMPTS} attempts, full-jitter back-off from {:.0} s; its retry token bucket not modelled), except a transaction, which the SDK does not retry: the 503 the handler answers, as is a request out of attempts. \
         The new keys' ceiling under this meter is **{:.0} claim attempts/s** (modelled); the rates are {BELOW_THE_CEILING} of it and the target:\n",
        limits.partition_write_units,
        limits.partition_read_units,
        2.0 * limits.first_peak_write_units,
        2.0 * limits.first_peak_read_units,
        SDK_INITIAL_BACKOFF_MS as f64 / 1_000.0,
        replays.ceiling,
    );
    let _ = writeln!(out, "| layout | claim attempts/s | requests | served first try | served after retries | 503 | throttled attempts by reason | wait p99 (throttled) |");
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|");
    for (_, claims, r) in &replays.runs {
        let reasons: Vec<String> = r
            .throttles
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        let _ = writeln!(
            out,
            "| {} | {claims:.0} | {} | {} | {} | {} | {} | {:.0} ms |",
            r.layout.name(),
            r.requests,
            r.first_try,
            r.after_retries,
            r.gave_up,
            if reasons.is_empty() {
                "none".to_owned()
            } else {
                reasons.join(", ")
            },
            r.waited_p99_ms()
        );
    }
    out
}

#[cfg(test)]
mod tests;
