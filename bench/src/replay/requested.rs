//! The on-sale at its target on the quotas docs/SCALE.md asks for
//! (issue 44 item 5): the replay that judges whether the design serves
//! its target rate under DynamoDB's limits, every second of the peak.

use super::{
    mix_binding, on_sale_streams, replay_mix, Ceiling, Layout, Replayed, Stream, BELOW_THE_CEILING,
    REPLAY_SEED,
};
use crate::capacity::meter::Limits;
use crate::pricing::Priced;
use crate::{Bound, Goal};

/// How long the crowd's peak lasts: the scale model's peak minute, whose
/// load docs/SCALE.md sizes the quotas for. The full bench's replay at the
/// target holds its rate this long, every second of it judged (the smoke
/// pass, which only proves the replay runs, holds it for less).
pub const PEAK_WINDOW_SECONDS: f64 = 60.0;

/// The on-sale replayed at the design's target for the peak window (new
/// keys), on a table whose per-table quotas AWS raised to what
/// docs/SCALE.md asks for, warmed to them before the crowd.
#[derive(Debug, Clone, Default)]
pub struct AtRequestedQuotas {
    /// What the target's units alone ask of the quotas (write, read units
    /// a second, the table and each index apart), rounded up.
    pub need: (f64, f64),
    /// The quotas asked for: `need` with room for the partitions.
    pub quotas: (f64, f64),
    /// The rate replayed, in claim attempts a second.
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
    let streams = on_sale_streams(parts, attempts);
    if attempts <= 0.0 || streams.is_empty() {
        return None;
    }
    let (quotas, ceiling) = with_room(&streams, need, target);
    let limits = Limits::warmed_to(quotas.0, quotas.1);
    Some(AtRequestedQuotas {
        need,
        quotas,
        units: target,
        seconds,
        ceiling,
        run: replay_mix(
            &streams,
            (target, seconds),
            Layout::New,
            limits,
            REPLAY_SEED,
        ),
    })
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
        let what = format!(
            "on-sale replayed through the capacity meter at {:.0} {unit} for {:.0} s of the peak minute (new keys, per-table quotas of {:.0} write and {:.0} read units/s as docs/SCALE.md asks, warmed to them)",
            self.units, self.seconds, self.quotas.0, self.quotas.1
        );
        let why = "issue 44 item 5: the target served under the meter (modelled)";
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
            Goal::new(
                format!(
                    "on-sale's ceiling under the capacity meter on those quotas (new keys; binds: {}), {unit}",
                    self.ceiling.binding
                ),
                self.ceiling.per_s,
                Bound::AtLeast(self.units),
                "the design's target (`onsale_run::TARGET_CLAIMS_PER_SECOND`)",
            ),
        ]
    }
}
