//! A recording at its target on raised quotas: the on-sale on those
//! docs/SCALE.md asks for (issue 44 item 5), the visitor-status polls on
//! those issue 19's goal asks for. The replay that judges whether the
//! design serves its target rate under DynamoDB's limits, every second
//! of it, once the account has the quotas the rate needs.

use super::{
    mix_binding, on_sale_streams, replay_mix, Ceiling, Layout, Replayed, Stream, BELOW_THE_CEILING,
    REPLAY_SEED,
};
use crate::capacity::meter::Limits;
use crate::pricing::Priced;
use crate::{Bound, Goal};
use std::collections::BTreeMap;

/// How long the crowd's peak lasts: the scale model's peak minute, whose
/// load docs/SCALE.md sizes the quotas for. The full bench's replay at the
/// target holds its rate this long, every second of it judged (the smoke
/// pass, which only proves the replay runs, holds it for less).
pub const PEAK_WINDOW_SECONDS: f64 = 60.0;

/// How a replay on raised quotas names itself in its goals.
#[derive(Debug, Clone, Copy, Default)]
pub struct Naming {
    /// What was replayed: `on-sale`, `visitor-status polls`.
    pub what: &'static str,
    /// Where the quotas come from: `as docs/SCALE.md asks`.
    pub quotas_from: &'static str,
    /// Why the rate is a target.
    pub why: &'static str,
}

/// The on-sale's naming: its target, on what docs/SCALE.md asks for.
pub const ON_SALE: Naming = Naming {
    what: "on-sale",
    quotas_from: "as docs/SCALE.md asks",
    why: "issue 44 item 5: the design's target (`onsale_run::TARGET_CLAIMS_PER_SECOND`) served under the meter (modelled)",
};

/// A recording replayed at its target (new keys), on a table whose
/// per-table quotas AWS raised to what the target needs, warmed to them
/// before the crowd.
#[derive(Debug, Clone, Default)]
pub struct AtRequestedQuotas {
    pub naming: Naming,
    /// What the target's units alone ask of the quotas (write, read units
    /// a second, the table and each index apart), rounded up.
    pub need: (f64, f64),
    /// The quotas asked for: `need` with room for the partitions.
    pub quotas: (f64, f64),
    /// The rate replayed, in the recording's unit a second.
    pub units: f64,
    /// How long the rate was held, in simulated seconds.
    pub seconds: f64,
    /// The new keys' ceiling under these limits, and what binds it.
    pub ceiling: Ceiling,
    pub run: Replayed,
}

/// The on-sale's `parts` (made by `attempts` claim attempts; see
/// [`super::on_sale_replays`]) replayed at `target` for `seconds` (the
/// full bench's [`PEAK_WINDOW_SECONDS`]) on the quotas [`with_room`]
/// finds from `need`.
pub fn at_requested_quotas(
    parts: &[Vec<Priced>],
    attempts: f64,
    (target, seconds): (f64, f64),
    need: (f64, f64),
) -> Option<AtRequestedQuotas> {
    if attempts <= 0.0 {
        return None;
    }
    at_quotas(
        &on_sale_streams(parts, attempts),
        (target, seconds),
        need,
        ON_SALE,
    )
}

/// `streams` replayed at `target` for `seconds` on the quotas
/// [`with_room`] finds from `need`; `None` for no recording.
pub fn at_quotas(
    streams: &[Stream],
    (target, seconds): (f64, f64),
    need: (f64, f64),
    naming: Naming,
) -> Option<AtRequestedQuotas> {
    if streams.iter().all(|s| s.requests.is_empty()) {
        return None;
    }
    let (quotas, ceiling) = with_room(streams, need, target);
    let limits = Limits::warmed_to(quotas.0, quotas.1);
    Some(AtRequestedQuotas {
        naming,
        need,
        quotas,
        units: target,
        seconds,
        ceiling,
        run: replay_mix(streams, (target, seconds), Layout::New, limits, REPLAY_SEED),
    })
}

/// What `streams` at `rate` ask of the per-table quotas (write, read
/// units a second, on the table or index that takes the most of each
/// kind), rounded up, and never below the quotas an account has by
/// default.
pub fn quotas_needed(streams: &[Stream], rate: f64) -> (f64, f64) {
    let mut per_table: BTreeMap<Option<&str>, (f64, f64)> = BTreeMap::new();
    for s in streams {
        let each = s.per_second(rate) / s.requests.len().max(1) as f64;
        for c in s.requests.iter().flat_map(|r| &r.charges) {
            let table = per_table.entry(c.target.index.as_deref()).or_default();
            table.0 += c.write_units * each;
            table.1 += c.read_units * each;
        }
    }
    let most = |kind: fn(&(f64, f64)) -> f64| per_table.values().map(kind).fold(0.0, f64::max);
    let default = Limits::DYNAMODB;
    (
        crate::kit::round_up_2sf(most(|t| t.0)).max(default.table_write_quota),
        crate::kit::round_up_2sf(most(|t| t.1)).max(default.table_read_quota),
    )
}

/// Steps of a tenth of the need tried at most (up to 5× it) before the
/// quotas stop rising: past that a key alone binds, which no quota
/// raises.
const MOST_ROOM_STEPS: u32 = 40;

/// The quotas to ask for, and the new keys' ceiling under them: from
/// `need` up, a tenth of it at a time (each rounded up to two significant
/// figures), the first at which `target` is at most [`BELOW_THE_CEILING`]
/// of the ceiling, the room a recording's second-to-second spread in its
/// order needs. A table has as many partitions as its allowance needs, so one
/// warmed to exactly what the crowd writes runs its partitions full on
/// average, and a partition holding a hotter key overflows.
fn with_room(streams: &[Stream], need: (f64, f64), target: f64) -> ((f64, f64), Ceiling) {
    let quotas = |step: u32| {
        let scale = 1.0 + f64::from(step) / 10.0;
        (
            crate::kit::round_up_2sf(need.0 * scale),
            crate::kit::round_up_2sf(need.1 * scale),
        )
    };
    let ceiling = |q: (f64, f64)| mix_binding(streams, Layout::New, Limits::warmed_to(q.0, q.1));
    let mut tried = (quotas(0), ceiling(quotas(0)));
    for step in 1..=MOST_ROOM_STEPS {
        if BELOW_THE_CEILING * tried.1.per_s >= target {
            break;
        }
        let q = quotas(step);
        tried = (q, ceiling(q));
    }
    tried
}

impl AtRequestedQuotas {
    /// At the target nothing answers 503 and nothing throttles (no key
    /// over its partition's limit, no table over its allowance), and the
    /// ceiling under these limits is at least the target.
    pub fn goals(&self, unit: &str) -> Vec<Goal> {
        let Naming {
            what,
            quotas_from,
            why,
        } = self.naming;
        let ceiling = format!(
            "{what}'s ceiling under the capacity meter on those quotas (new keys; binds: {}), {unit}",
            self.ceiling.binding
        );
        let what = format!(
            "{what} replayed through the capacity meter at {:.0} {unit} for {:.0} s (new keys, per-table quotas of {:.0} write and {:.0} read units/s {quotas_from}, warmed to them)",
            self.units, self.seconds, self.quotas.0, self.quotas.1
        );
        vec![
            Goal::new(
                format!("{what}: answers 503"),
                self.run.gave_up as f64,
                Bound::AtMost(0.0),
                why,
            ),
            Goal::new(
                format!("{what}: attempts throttled (a key over its partition's limit or a table over its allowance)"),
                self.run.throttles.values().sum::<u64>() as f64,
                Bound::AtMost(0.0),
                why,
            ),
            Goal::new(ceiling, self.ceiling.per_s, Bound::AtLeast(self.units), why),
        ]
    }
}
