//! The replays as the pages print them: how they were run, said once, and
//! a row per run.

use std::fmt::Write as _;

use super::{Replays, BELOW_THE_CEILING, REPLAY_SECONDS, SDK_ATTEMPTS, SDK_INITIAL_BACKOFF_MS};
use crate::capacity::meter::Limits;

/// How every replay runs: the meter, the table, the clock and the SDK's
/// retry (modelled, all of it).
pub fn method() -> String {
    let limits = Limits::WARMED;
    format!(
        "Replayed through the capacity meter (modelled: crowdcheck/src/capacity's model of DynamoDB's documented limits, a partition's {:.0} write and {:.0} read units a second as a linear combination, shared by the keys a hash places on it (as many partitions as the allowance needs; a key hot for 300 s split off), a table's allowance of double its previous peak with nothing banked (on demand keeps no burst credit), each kind apart once warm, the per-table quota; transaction conflicts are not replayed (a replay keeps no timing for them); the table warmed to {:.0} write and {:.0} read units before the crowd) on a simulated clock. \
         Each part of a recording (the on-sale's buyers, its sweep and its stream projection; the sold-out crowd's get-seat, hold-ga and best-available refusals and its orders; the queue's joins or polls and its admitter's ticks) is replayed in its recorded order, side by side with the others as production runs them, evenly spaced at its rate, and offered again until {REPLAY_SECONDS:.0} s have passed. Each request is priced from its items' sizes when it was sent, as the recording shows them (an item the recording never shows whole, at its size when the run ended). The order is kept because the load moves as a crowd goes (the first claims find their seats free and write; later ones are refused). The recorded gaps between requests are not kept (assumed): the bench's buyers run a fixed number at a time at DynamoDB Local's pace, so those gaps measure this machine, not a crowd. \
         A throttled request is retried as the SDK's standard retry does ({SDK_ATTEMPTS} attempts, full-jitter back-off from {:.0} s; its retry token bucket not modelled), except a transaction, which the SDK does not retry: the 503 the handler answers, as is a request out of attempts.",
        limits.partition_write_units,
        limits.partition_read_units,
        2.0 * limits.first_peak_write_units,
        2.0 * limits.first_peak_read_units,
        SDK_INITIAL_BACKOFF_MS as f64 / 1_000.0,
    )
}

/// The unit of the on-sale's replays.
pub const ON_SALE_UNIT: &str = "claim attempts/s";

/// The on-sale's replays as SCALE.md prints them.
pub fn markdown(replays: &Replays) -> String {
    format!(
        "\nThe on-sale's recorded requests (its buyers', its sweep's and its stream projection's, side by side) are replayed under both layouts. {} \
         The new keys' ceiling under this meter is **{:.0} {ON_SALE_UNIT}** (modelled); the rates are {BELOW_THE_CEILING} of it and the target:\n{}",
        method(),
        replays.ceiling,
        table(replays, ON_SALE_UNIT)
    )
}

/// One row per replay, its rate in `unit`.
pub fn table(replays: &Replays, unit: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "| layout | {unit} | requests | served first try | served after retries | 503 | throttled attempts by reason | wait p99 (throttled) |");
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|");
    for (_, units, r) in &replays.runs {
        let reasons: Vec<String> = r
            .throttles
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        let _ = writeln!(
            out,
            "| {} | {units:.0} | {} | {} | {} | {} | {} | {:.0} ms |",
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
