//! Recorded requests replayed through the capacity meter (local/src/
//! capacity's [`Meter`], DynamoDB's documented limits as modelled there)
//! at a crowd's rate on a simulated clock (issue 30, part 2): the
//! on-sale's, the sold-out crowd's, the queue's joins and polls.
//! DynamoDB Local serves a few hundred requests a second, far below any
//! partition's limit, so the limits are met here: the same requests the
//! run sent, each priced from its items' sizes, under the new key layout
//! (and, for the on-sale, re-keyed into the old one). A throttled request
//! is retried as the SDK's standard retry would retry it; one it does not
//! retry, or that runs out of attempts, is the 503 the handler answers.
//! A batch is judged whole here, where DynamoDB serves the entries it can
//! and names the rest unprocessed (as the interceptor's meter does,
//! crowdcheck/src/capacity/batches.rs): judged whole, it can only overstate
//! throttling.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};

use crate::capacity::meter::{Limits, Meter, PartitionId};
use crate::capacity::{Charge, Target};
use crate::kit::Rng;
use crate::pricing::Priced;
use crate::{Bound, Goal};

/// The SDK's standard retry (`RetryConfig::standard()`, what the functions
/// build): 3 attempts, full-jitter back-off from 1 s, doubling, at most
/// 20 s. Its retry token bucket (500 tokens a client, 5 a throttled retry)
/// is not modelled: it can only turn more retries into 503s sooner.
pub const SDK_ATTEMPTS: u32 = 3;
const SDK_INITIAL_BACKOFF_MS: i64 = 1_000;
const SDK_MAX_BACKOFF_MS: i64 = 20_000;

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

/// How long a replay lasts on the simulated clock: a partition's limits
/// are per second, so each recording is offered again, in its recorded
/// order, until this long has been offered (its keys keep their shares of
/// the load, as the projection assumes).
pub const REPLAY_SECONDS: f64 = 10.0;

/// One kind of recorded request in a replay, offered at its own rate: so
/// many of its requests for each unit of the replay's rate (a claim
/// attempt, a join), and a fixed number a second besides (the admitter's
/// ticks, which keep their pace whatever the crowd does).
#[derive(Debug, Clone, Copy)]
pub struct Stream<'a> {
    pub requests: &'a [Priced],
    pub per_unit: f64,
    pub fixed_per_second: f64,
}

impl<'a> Stream<'a> {
    /// `requests`, made by `units` of the replay's rate.
    pub fn recorded(requests: &'a [Priced], units: f64) -> Self {
        Stream {
            requests,
            per_unit: requests.len() as f64 / units.max(1e-9),
            fixed_per_second: 0.0,
        }
    }

    /// `requests`, made over `seconds` whatever the replay's rate.
    pub fn steady(requests: &'a [Priced], seconds: f64) -> Self {
        Stream {
            requests,
            per_unit: 0.0,
            fixed_per_second: requests.len() as f64 / seconds.max(1e-9),
        }
    }

    fn per_second(&self, units_per_second: f64) -> f64 {
        self.per_unit * units_per_second + self.fixed_per_second
    }
}

/// Replays `streams` side by side at `units_per_second`, each in order and
/// evenly spaced at its own rate (from its first request again where it
/// runs out), all for as long as the longest: at least `seconds`, and long
/// enough for each stream that scales with the rate to be offered once
/// whole. Each request is charged under `layout` through a
/// [`Meter`] of `limits`; a throttled attempt the SDK retries is tried
/// again after its back-off (jitter drawn from `seed`) until
/// [`SDK_ATTEMPTS`].
pub fn replay_mix(
    streams: &[Stream],
    (units_per_second, seconds): (f64, f64),
    layout: Layout,
    limits: Limits,
    seed: u64,
) -> Replayed {
    let charged: Vec<Vec<Vec<Charge>>> = streams
        .iter()
        .map(|s| rekeyed(s.requests, layout))
        .collect();
    let rates: Vec<f64> = streams
        .iter()
        .map(|s| s.per_second(units_per_second))
        .collect();
    let offered = offers(streams, &rates, seconds);
    let arrival = |s: usize, i: usize| (i as f64 * (1_000.0 / rates[s].max(1e-9))) as i64;
    // (when, stream, offer, attempt), earliest first; offer i of stream s
    // is its request i mod its length.
    let mut due: BinaryHeap<Reverse<(i64, usize, usize, u32)>> = BinaryHeap::new();
    for (s, &n) in offered.iter().enumerate() {
        due.extend((0..n).map(|i| Reverse((arrival(s, i), s, i, 0))));
    }
    let mut meter = Meter::new(limits);
    let mut rng = Rng(seed | 1);
    let mut out = Replayed {
        layout,
        requests_per_second: rates.iter().sum(),
        requests: offered.iter().sum::<usize>() as u64,
        ..Replayed::default()
    };
    while let Some(Reverse((at, s, i, attempt))) = due.pop() {
        let requests = streams[s].requests;
        let request = &requests[i % requests.len()];
        let charges = &charged[s][i % requests.len()];
        let Err(throttle) = meter.admit(at, charges, request.write) else {
            if attempt == 0 {
                out.first_try += 1;
            } else {
                out.after_retries += 1;
                out.waited_ms.push((at - arrival(s, i)) as f64);
            }
            continue;
        };
        *out.throttles.entry(throttle.limit_met()).or_default() += 1;
        if request.retried && attempt + 1 < SDK_ATTEMPTS {
            let ceiling = (SDK_INITIAL_BACKOFF_MS << attempt).min(SDK_MAX_BACKOFF_MS);
            let pause = rng.below(ceiling as u64 + 1) as i64;
            due.push(Reverse((at + pause, s, i, attempt + 1)));
        } else {
            out.gave_up += 1;
            out.waited_ms.push((at - arrival(s, i)) as f64);
        }
    }
    out
}

/// How many requests each stream offers at `rates` (see [`replay_mix`]):
/// its share of the longest span, and a scaling stream at least once
/// whole (the stream that sets the span offers exactly its length).
fn offers(streams: &[Stream], rates: &[f64], seconds: f64) -> Vec<usize> {
    let whole = |s: &Stream, rate: f64| {
        let scaling = s.per_unit > 0.0 && rate > 0.0;
        if scaling {
            s.requests.len()
        } else {
            0
        }
    };
    let longest = streams
        .iter()
        .zip(rates)
        .map(|(s, &rate)| whole(s, rate) as f64 / rate.max(1e-9))
        .fold(seconds, f64::max);
    streams
        .iter()
        .zip(rates)
        .map(|(s, &rate)| {
            if s.requests.is_empty() || rate <= 0.0 {
                return 0;
            }
            let span = ((seconds * rate).ceil() as usize).max((longest * rate).floor() as usize);
            whole(s, rate).max(span)
        })
        .collect()
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

/// The replay's rate (units a second) at which the meter's first limit is
/// reached under `layout`: per partition (the keys the meter places on
/// it together), its write units over 1,000 plus its read units over
/// 3,000; per table (and index), its units over `limits`' allowance
/// (double the first peak), each kind apart on a warm table and combined
/// on a new one, as the meter counts them. A steady stream's share is
/// taken first.
pub fn mix_ceiling(streams: &[Stream], layout: Layout, limits: Limits) -> f64 {
    mix_binding(streams, layout, limits).per_s
}

/// A replay's ceiling and what reaches its limit there.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ceiling {
    pub per_s: f64,
    /// The partition's hottest key (`index: pk` on an index), or the
    /// table (or index) whose allowance fills first.
    pub binding: String,
}

/// [`mix_ceiling`], naming what binds.
pub fn mix_binding(streams: &[Stream], layout: Layout, limits: Limits) -> Ceiling {
    // Per partition and per table, as shares of its limit: (for each unit
    // of the rate, steady).
    let mut placing = Meter::new(limits);
    let mut partitions: HashMap<PartitionId, (f64, f64)> = HashMap::new();
    // Each key's own share, to name a partition by its hottest key.
    let mut keys: HashMap<Target, f64> = HashMap::new();
    // A table's allowance: its kinds apart when warm (keyed by whether
    // writes), combined when new (keyed as writes).
    let mut tables: BTreeMap<(Option<String>, bool), (f64, f64)> = BTreeMap::new();
    for s in streams {
        let n = s.requests.len().max(1) as f64;
        let (per_unit, steady) = (s.per_unit / n, s.fixed_per_second / n);
        for c in s.requests.iter().flat_map(|r| &r.charges) {
            let target = layout.rekey(&c.target);
            let of_key = c.write_units / limits.partition_write_units
                + c.read_units / limits.partition_read_units;
            let writes = c.write_units / (2.0 * limits.first_peak_write_units);
            let reads = c.read_units / (2.0 * limits.first_peak_read_units);
            let of_table = match limits.warm {
                true => vec![(true, writes), (false, reads)],
                false => vec![(true, writes + reads)],
            };
            let partition = partitions.entry(placing.partition_of(&target)).or_default();
            partition.0 += of_key * per_unit;
            partition.1 += of_key * steady;
            *keys.entry(target.clone()).or_default() += of_key * (per_unit + steady);
            for (kind, share) in of_table {
                let load = tables.entry((target.index.clone(), kind)).or_default();
                load.0 += share * per_unit;
                load.1 += share * steady;
            }
        }
    }
    // A partition the steady streams fill alone has no room at any rate.
    let room = |&(per_unit, steady): &(f64, f64)| {
        if steady >= 1.0 {
            0.0
        } else {
            (1.0 - steady) / per_unit
        }
    };
    let partition = partitions
        .iter()
        .map(|(id, load)| (room(load), id))
        .min_by(|a, b| a.0.total_cmp(&b.0));
    let table = tables
        .iter()
        .map(|(id, load)| (room(load), id))
        .min_by(|a, b| a.0.total_cmp(&b.0));
    match (partition, table) {
        (Some((per_s, id)), table) if table.is_none_or(|t| per_s <= t.0) => Ceiling {
            per_s,
            binding: hottest_on(&keys, id, &mut placing),
        },
        (_, Some((per_s, (index, write)))) => Ceiling {
            per_s,
            binding: format!(
                "the {} allowance of {}",
                if *write { "write" } else { "read" },
                index.as_deref().unwrap_or("the table")
            ),
        },
        _ => Ceiling {
            per_s: f64::INFINITY,
            binding: String::new(),
        },
    }
}

/// The key with the largest share of `keys` on partition `id`.
fn hottest_on(keys: &HashMap<Target, f64>, id: &PartitionId, placing: &mut Meter) -> String {
    let hottest = keys
        .iter()
        .filter(|(target, _)| placing.partition_of(target) == *id)
        .max_by(|a, b| a.1.total_cmp(b.1).then_with(|| b.0.pk.cmp(&a.0.pk)));
    hottest.map_or_else(String::new, |(target, _)| crate::kit::target_label(target))
}

/// The share of the new layout's ceiling under the meter the first
/// replays run at: below it nothing should throttle, with room for the
/// second-to-second spread of a recording in its order.
pub const BELOW_THE_CEILING: f64 = 0.8;

/// Which rate a replay ran at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rate {
    /// [`BELOW_THE_CEILING`] of the new layout's [`mix_ceiling`].
    BelowTheCeiling,
    /// The design's target.
    Target,
    /// The crowd's peak as docs/SCALE.md models it: a load stated apart
    /// from the recording, the one the product says it takes.
    Peak,
}

/// One recording's replays: the new layout's ceiling under the meter, and
/// each layout at each [`Rate`] (in the recording's unit: claim attempts,
/// joins, polls a second).
#[derive(Debug, Clone, Default)]
pub struct Replays {
    pub ceiling: f64,
    pub runs: Vec<(Rate, f64, Replayed)>,
    /// The recording at its target on raised quotas: the on-sale's on
    /// those docs/SCALE.md asks for, the polls' on those their goal asks.
    pub at_requested: Option<AtRequestedQuotas>,
}

impl Replays {
    pub fn find(&self, rate: Rate, layout: Layout) -> Option<(f64, &Replayed)> {
        self.runs
            .iter()
            .find(|(r, _, run)| *r == rate && run.layout == layout)
            .map(|(_, units, run)| (*units, run))
    }

    /// The goals every replay has: below the new keys' ceiling under the
    /// meter, nothing throttles and no request is answered 503 (issue 44
    /// item 7: a 503 limit on every replay). `what` was replayed, at so
    /// many `unit`; none when it was not.
    pub fn below_the_ceiling_goals(&self, what: &str, unit: &str) -> Vec<Goal> {
        let why = "`replay::BELOW_THE_CEILING` of the new keys' ceiling under the meter (modelled): below it, nothing should throttle";
        self.served_goals(Rate::BelowTheCeiling, (what, unit), why)
    }

    /// The same goals at the design's target, a load stated apart from
    /// the ceiling the recording gives (issue 44 item 7): for a crowd the
    /// default quotas serve there.
    pub fn at_target_goals(&self, what: &str, unit: &str) -> Vec<Goal> {
        let why = "the design's target (`onsale_run::TARGET_CLAIMS_PER_SECOND`), served under the meter (modelled)";
        self.served_goals(Rate::Target, (what, unit), why)
    }

    /// The new keys' run at `rate`: nothing throttled, no 503; `why`
    /// says where the rate comes from.
    pub fn served_goals(&self, rate: Rate, (what, unit): (&str, &str), why: &str) -> Vec<Goal> {
        let Some((units, run)) = self.find(rate, Layout::New) else {
            return Vec::new();
        };
        let what =
            format!("{what} replayed through the capacity meter at {units:.0} {unit} (new keys)");
        vec![
            Goal::new(
                format!("{what}: share of requests throttled"),
                run.throttled_share(),
                Bound::AtMost(0.0),
                why,
            ),
            Goal::new(
                format!("{what}: answers 503"),
                run.gave_up as f64,
                Bound::AtMost(0.0),
                why,
            ),
        ]
    }
}

/// Replays the on-sale's `parts` (the buyers', the sweep's and the
/// stream projection's requests, each in recorded order) side by side
/// under both layouts; `attempts` the recorded claim attempts, `target`
/// the design's rate.
pub fn on_sale_replays(parts: &[Vec<Priced>], attempts: f64, target: f64) -> Replays {
    if attempts <= 0.0 {
        return Replays::default();
    }
    replays(
        &on_sale_streams(parts, attempts),
        target,
        &[Layout::New, Layout::Old],
    )
}

/// The on-sale's parts as streams that scale with the claim attempts:
/// each spans the same time at any rate, so the projection's writes keep
/// pace with the claims they follow.
pub(crate) fn on_sale_streams(parts: &[Vec<Priced>], attempts: f64) -> Vec<Stream<'_>> {
    parts
        .iter()
        .filter(|part| !part.is_empty())
        .map(|part| Stream::recorded(part, attempts))
        .collect()
}

/// Replays `streams` side by side, each in its recorded order, at each
/// [`Rate`] under each of `layouts`, for [`REPLAY_SECONDS`] on a table
/// warmed to its quota; `target` the design's rate in the streams' unit.
/// The order is kept (issue 44 item 6): a recording's load moves as it
/// goes (the first claims find their seats free and write; later ones
/// are refused), and a shuffle would spread that evenly.
pub fn replays(streams: &[Stream], target: f64, layouts: &[Layout]) -> Replays {
    replays_at(streams, &[(Rate::Target, target)], layouts)
}

/// [`replays`] at [`BELOW_THE_CEILING`] and at each of `rates` (in the
/// streams' unit).
pub fn replays_at(streams: &[Stream], rates: &[(Rate, f64)], layouts: &[Layout]) -> Replays {
    let limits = Limits::WARMED;
    let ceiling = mix_ceiling(streams, Layout::New, limits);
    let mut runs = Vec::new();
    if !ceiling.is_finite() {
        return Replays {
            ceiling,
            runs,
            at_requested: None,
        };
    }
    let below = (Rate::BelowTheCeiling, BELOW_THE_CEILING * ceiling);
    for &(rate, units) in std::iter::once(&below).chain(rates) {
        for &layout in layouts {
            let pace = (units, REPLAY_SECONDS);
            let run = replay_mix(streams, pace, layout, limits, REPLAY_SEED);
            runs.push((rate, units, run));
        }
    }
    Replays {
        ceiling,
        runs,
        at_requested: None,
    }
}

/// The back-off jitter's seed: every replay draws the same.
const REPLAY_SEED: u64 = 0x0C_5A1E;

mod doc;
pub use doc::{markdown, method, table, ON_SALE_UNIT};
mod requested;
pub use requested::{
    at_quotas, at_requested_quotas, quotas_needed, AtRequestedQuotas, Naming, PEAK_WINDOW_SECONDS,
};

#[cfg(test)]
mod tests;
