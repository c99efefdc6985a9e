//! The one-seat stampedes' section of docs/BENCHMARKS.md: the runs in a
//! table, each verdict, and why they differ (the scenario is `crowd.rs`).

use std::collections::BTreeMap;

use crate::capacity::{PARTITION_WRITE_UNITS, TRANSACTION_MS};
use crate::crowd::StampedeRun;

/// The runs as docs/BENCHMARKS.md shows them.
pub fn markdown(runs: &[StampedeRun]) -> String {
    use std::fmt::Write as _;
    let mut out = String::from("## Under a crowd: a stampede on one seat within one second\n\n");
    let _ = write!(
        out,
        "The contract's stampede (docs/API.md, \"Under a crowd\"): every request claims one seat, arrivals uniform over one simulated second, \
         round-robin over N function instances of get-seat, each with its own memory of the seats it keeps refusing; an instance serves its \
         requests one at a time at their simulated instants. Every DynamoDB request passes the capacity meter at its simulated instant, which throttles a key past \
         DynamoDB's limits as DynamoDB would ([metering](../crowdcheck/src/capacity/metering.rs): keys sharing partitions, transaction conflicts within {TRANSACTION_MS} ms \
         of the simulated clock refused and charged, on a table warmed to its per-table quota as docs/SCALE.md says), and is recorded and priced \
         ([capacity](../crowdcheck/src/capacity/mod.rs)); the seat key's write units in that second (served requests only) are its write units per second \
         (measured), against a partition's {PARTITION_WRITE_UNITS:.0}, which the seat shares with the keys beside it.\n\n",
    );
    out.push_str("| instances | requests | winners | seat-held | 503 | other | claims written | write units/s on the seat's key | history (wall-clock windows) | ok |\n|---:|---:|---:|---:|---:|---|---:|---:|---|---|\n");
    for run in runs {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {:.0} | {} | {} |",
            run.label(),
            run.requests,
            run.winners,
            run.seat_held,
            run.unavailable,
            other_answers(&run.other),
            run.writes,
            run.seat_key_write_units,
            run.history.text(),
            if run.ok() { "yes" } else { "**NO**" }
        );
    }
    out.push('\n');
    for run in runs {
        let fits = run.seat_key_write_units < PARTITION_WRITE_UNITS;
        let verdict = match (run.goal(), fits) {
            (Some(goal), _) => goal.judged(),
            (None, _) if run.unavailable == 0 => {
                format!("under a partition's {PARTITION_WRITE_UNITS:.0}")
            }
            (None, _) => format!(
                "the seat's partition full at its {PARTITION_WRITE_UNITS:.0}, conflicts charged: the capacity meter throttled the rest as DynamoDB would, measured as 503"
            ),
        };
        let _ = writeln!(
            out,
            "one-seat stampede ({} instances{}): {:.0} write units/s on the seat's key, {} × 503 ({verdict})\n",
            run.instances,
            run.buyer_limit
                .map_or(String::new(), |limit| format!(", buyer limit {limit}")),
            run.seat_key_write_units,
            run.unavailable
        );
    }
    let _ = writeln!(
        out,
        "Why they differ: an instance answers from memory only after it has itself refused the seat {} times within a second, \
         and claims that meet a rival's transaction in flight are refused by DynamoDB and charged all the same (assumed: the guide is silent). \
         Past some number of instances the seat's partition fills within the stampede's first second, and the rest of that second is throttled \
         (503, honest): a throttled claim learns nothing, so few instances reach their memory's refusals within the second. Making a throttled \
         claim learn whether the seat is taken is issue 44, item 1, still open. A claim that met a rival in flight reads the seat and, \
         if it is still free, claims again; here all its rounds run at its one simulated instant, so a rival that failed meets it every round \
         (a 503 after 3, where the real clock would have moved on). The on-sale queue (issue 19) is what keeps that many instances \
         off one seat.\n",
        shared::domain::crowd::CONTENDED_REFUSALS,
    );
    out
}

/// Answers other than a win, `seat-held` or `503`, as "name ×n" (none: "—").
fn other_answers(other: &BTreeMap<String, usize>) -> String {
    if other.is_empty() {
        return "—".into();
    }
    let named: Vec<String> = other.iter().map(|(k, n)| format!("{k} ×{n}")).collect();
    named.join(", ")
}
