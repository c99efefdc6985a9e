//! The on-sale's recorded requests replayed through DynamoDB's limits
//! (local/src/capacity's [`Meter`]) at a crowd's rate on a simulated clock
//! (issue 30, part 2). DynamoDB Local serves a few hundred claims a
//! second, far below any partition's limit, so the limits are met here:
//! the same requests the on-sale sent, in its order, each priced from its
//! items' sizes, under the new key layout and re-keyed into the old one.
//! A throttled request is retried as the SDK's standard retry would; one
//! that runs out of attempts is the 503 the handler answers.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use crate::capacity::meter::{Limits, Meter};
use crate::capacity::{Charge, Target};
use crate::Rng;

/// The SDK's standard retry (`RetryConfig::standard()`, what the functions
/// build): 3 attempts, full-jitter back-off from 1 s, doubling, at most
/// 20 s.
pub const SDK_ATTEMPTS: u32 = 3;
const SDK_INITIAL_BACKOFF_MS: i64 = 1_000;
const SDK_MAX_BACKOFF_MS: i64 = 20_000;

/// One recorded request as the replay needs it: whether it writes (the
/// quota it counts against) and the units it consumed, per key.
#[derive(Debug, Clone)]
pub struct Priced {
    pub write: bool,
    pub charges: Vec<Charge>,
}

/// What one replay saw.
#[derive(Debug, Clone, Default)]
pub struct Replayed {
    pub layout: &'static str,
    /// The rate the replay offered (requests a second; the on-sale's
    /// replays state it in claim attempts a second).
    pub per_second: f64,
    pub requests: u64,
    pub first_try: u64,
    pub after_retries: u64,
    /// Out of attempts: answered 503.
    pub gave_up: u64,
    /// Throttled attempts by DynamoDB's reason.
    pub throttles: BTreeMap<String, u64>,
    /// From arrival to the attempt that was served or the last one
    /// refused, ms (the round trips themselves not counted).
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

/// Each request's charges with their keys under `rekey`.
fn rekeyed(requests: &[Priced], rekey: &dyn Fn(&Target) -> Target) -> Vec<Vec<Charge>> {
    requests
        .iter()
        .map(|r| {
            r.charges
                .iter()
                .map(|c| Charge {
                    target: rekey(&c.target),
                    ..c.clone()
                })
                .collect()
        })
        .collect()
}

/// How long the on-sale's replays last on the simulated clock: a
/// partition's limits are per second, so a recording that a fast rate
/// offers within a second is offered again, in order, until this long
/// (the keys keep their shares of the load, as the projection assumes).
pub const REPLAY_SECONDS: f64 = 10.0;

/// Replays `requests` in order, evenly spaced at `per_second`, for at
/// least `seconds` (from the first again where they run out), each
/// charged under `layout` through a [`Meter`] of `limits`. A throttled
/// attempt is tried again after the SDK's back-off (jitter drawn from
/// `seed`) until [`SDK_ATTEMPTS`].
pub fn replay(
    requests: &[Priced],
    (per_second, seconds): (f64, f64),
    layout: (&'static str, &dyn Fn(&Target) -> Target),
    limits: Limits,
    seed: u64,
) -> Replayed {
    let (name, rekey) = layout;
    let charged = rekeyed(requests, rekey);
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
        layout: name,
        per_second,
        requests: offered as u64,
        ..Replayed::default()
    };
    while let Some(Reverse((at, i, attempt))) = due.pop() {
        let waited = (at - arrival(i)) as f64;
        let request = i % requests.len();
        match meter.admit(at, &charged[request], requests[request].write) {
            Ok(()) if attempt == 0 => out.first_try += 1,
            Ok(()) => {
                out.after_retries += 1;
                out.waited_ms.push(waited);
            }
            Err(throttle) => {
                *out.throttles.entry(throttle.reason()).or_default() += 1;
                if attempt + 1 < SDK_ATTEMPTS {
                    let ceiling = (SDK_INITIAL_BACKOFF_MS << attempt).min(SDK_MAX_BACKOFF_MS);
                    let pause = rng.below(ceiling as u64 + 1) as i64;
                    due.push(Reverse((at + pause, i, attempt + 1)));
                } else {
                    out.gave_up += 1;
                    out.waited_ms.push(waited);
                }
            }
        }
    }
    out
}

/// The replays as the on-sale's page prints them: one row each.
pub fn markdown(runs: &[Replayed]) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nThe on-sale's recorded requests replayed through DynamoDB's limits (modelled: local/src/capacity's meter, a partition's {:.0} write and {:.0} read units a second, 300 s of burst credit, the per-table quota; the table warmed to its quota before the on-sale), evenly spaced at each rate on a simulated clock, in recorded order and again from the first until {REPLAY_SECONDS:.0} s have been offered, each priced from its items' sizes; a throttled request retried as the SDK's standard retry does ({SDK_ATTEMPTS} attempts, full-jitter back-off from 1 s), one out of attempts the 503 the handler answers. The rates are the new keys' DynamoDB ceiling (key or quota, whichever binds) times {BELOW_THE_CEILING}, and the target:\n",
        Limits::DYNAMODB.partition_write_units,
        Limits::DYNAMODB.partition_read_units,
    );
    let _ = writeln!(out, "| layout | claim attempts/s | requests | served first try | served after retries | 503 (out of attempts) | throttled attempts by reason | wait p99 (retried) |");
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|");
    for r in runs {
        let reasons: Vec<String> = r
            .throttles
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        let _ = writeln!(
            out,
            "| {} | {:.0} | {} | {} | {} | {} | {} | {:.0} ms |",
            r.layout,
            r.per_second,
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

/// The share of the new layout's DynamoDB ceiling the first replays run
/// at: below it, the projection says nothing throttles.
pub const BELOW_THE_CEILING: f64 = 0.9;

/// Claim attempts a second at which some table's (or index's) units reach
/// the per-table on-demand quota, `attempts` the recorded requests made.
pub fn quota_ceiling(requests: &[Priced], attempts: f64) -> f64 {
    let mut units: BTreeMap<Option<String>, (f64, f64)> = BTreeMap::new();
    for c in requests.iter().flat_map(|r| &r.charges) {
        let u = units.entry(c.target.index.clone()).or_default();
        u.0 += c.write_units;
        u.1 += c.read_units;
    }
    let quota = Limits::DYNAMODB;
    units
        .values()
        .flat_map(|&(w, r)| [(w, quota.table_write_quota), (r, quota.table_read_quota)])
        .filter(|&(u, _)| u > 0.0)
        .map(|(u, q)| q * attempts / u)
        .fold(f64::INFINITY, f64::min)
}

/// The on-sale's replays: both layouts at [`BELOW_THE_CEILING`] of the new
/// layout's ceiling (`key_ceiling`, or the quota's if lower), and at
/// `target` claim attempts a second; `attempts` the recorded ones.
pub fn on_sale_replays(
    requests: &[Priced],
    attempts: f64,
    key_ceiling: f64,
    target: f64,
    old_layout: &dyn Fn(&Target) -> Target,
) -> Vec<Replayed> {
    let ceiling = key_ceiling.min(quota_ceiling(requests, attempts));
    let per_attempt = requests.len() as f64 / attempts.max(1.0);
    let mut out = Vec::new();
    for claims_per_second in [BELOW_THE_CEILING * ceiling, target] {
        let rate = claims_per_second * per_attempt;
        let new: &dyn Fn(&Target) -> Target = &|t| t.clone();
        for layout in [("new keys", new), ("old keys", old_layout)] {
            let pace = (rate, REPLAY_SECONDS);
            let mut run = replay(requests, pace, layout, warmed_table(), 0x0C_5A1E);
            run.per_second = claims_per_second;
            out.push(run);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_on(pk: &str, units: f64) -> Priced {
        Priced {
            write: true,
            charges: vec![Charge {
                target: Target::table(pk),
                op: "PutItem".into(),
                write_units: units,
                read_units: 0.0,
            }],
        }
    }

    fn same_key(_: &Target) -> Target {
        Target::table("EVENT#one")
    }

    #[test]
    fn requests_spread_over_keys_are_served_where_one_key_throttles() {
        // 3,000 one-unit writes a second for a second, over 100 keys.
        let requests: Vec<Priced> = (0..3_000)
            .map(|i| write_on(&format!("SEAT#{}", i % 100), 1.0))
            .collect();
        let spread = replay(
            &requests,
            (3_000.0, 0.0),
            ("new", &|t| t.clone()),
            warmed_table(),
            7,
        );
        assert_eq!((spread.first_try, spread.gave_up), (3_000, 0));
        assert!(spread.throttles.is_empty());
        // The same writes on one key: 1,000 a second is a partition's limit.
        let one = replay(
            &requests,
            (3_000.0, 0.0),
            ("old", &same_key),
            warmed_table(),
            7,
        );
        assert_eq!(one.first_try, 1_000, "{one:?}");
        assert!(one.throttles["TableWriteKeyRangeThroughputExceeded"] >= 2_000);
        assert_eq!(one.first_try + one.after_retries + one.gave_up, 3_000);
        assert!(one.throttled_share() > 0.6);
    }

    #[test]
    fn a_throttled_request_is_retried_after_the_backoff_and_then_given_up() {
        // 2,000 units at once on one key: the first is served, the second
        // is throttled for its second and served after a retry (the next
        // second has room), and none are given up.
        let requests = vec![write_on("K", 1_000.0), write_on("K", 1_000.0)];
        let run = replay(
            &requests,
            (1_000_000.0, 0.0),
            ("one", &|t| t.clone()),
            warmed_table(),
            3,
        );
        assert_eq!(run.first_try, 1);
        assert_eq!(run.after_retries + run.gave_up, 1);
        assert!(run
            .waited_ms
            .iter()
            .all(|&w| w <= (SDK_INITIAL_BACKOFF_MS * 3) as f64));
    }

    #[test]
    fn a_short_recording_is_offered_again_until_the_seconds_are_filled() {
        // 100 four-unit writes on one key, offered at 500 a second for 4
        // seconds: 2,000 offers; the key takes 250 a second.
        let requests: Vec<Priced> = (0..100).map(|_| write_on("K", 4.0)).collect();
        let run = replay(
            &requests,
            (500.0, 4.0),
            ("one", &|t| t.clone()),
            warmed_table(),
            9,
        );
        assert_eq!(run.requests, 2_000);
        assert_eq!(run.first_try + run.after_retries + run.gave_up, 2_000);
        // The first second's 250 are served at once; nothing is served
        // past 250 a second over the offers' 4 s and the retries' 3 more.
        assert!(run.first_try >= 250, "{}", run.first_try);
        assert!(run.first_try + run.after_retries <= 250 * 7);
        assert!(run.gave_up > 0);
    }

    #[test]
    fn a_new_table_throttles_past_double_its_first_peak_and_a_warmed_one_does_not() {
        // 10,000 one-unit writes in a second over 10,000 keys: past a new
        // table's 4,000, within a warmed table's 40,000.
        let requests: Vec<Priced> = (0..10_000)
            .map(|i| write_on(&format!("K{i}"), 1.0))
            .collect();
        let new = replay(
            &requests,
            (10_000.0, 0.0),
            ("new", &|t| t.clone()),
            Limits::DYNAMODB,
            5,
        );
        assert!(new.first_try < 10_000, "{:?}", new.throttles);
        let warmed = replay(
            &requests,
            (10_000.0, 0.0),
            ("new", &|t| t.clone()),
            warmed_table(),
            5,
        );
        assert_eq!(warmed.first_try, 10_000);
    }
}
