//! The one-seat stampedes' section of docs/BENCHMARKS.md: the runs in a
//! table, each verdict, and why they differ (the scenario is `crowd.rs`).

use std::collections::BTreeMap;

use crate::capacity::{PARTITION_READ_UNITS, PARTITION_WRITE_UNITS, TRANSACTION_MS};
use crate::crowd::StampedeRun;

/// The runs as docs/BENCHMARKS.md shows them.
pub fn markdown(runs: &[StampedeRun]) -> String {
    use std::fmt::Write as _;
    let mut out = String::from("## Under a crowd: a stampede on one seat within one second\n\n");
    let _ = write!(
        out,
        "The contract's stampede (docs/API.md, \"Under a crowd\"): every request claims one seat, arrivals uniform over one simulated second, \
         round-robin over N function instances of get-seat, each with its own memory of the seats it keeps refusing; an instance serves its \
         requests one at a time at their simulated instants. The second starts half-way through one of the meter's (which counts whole seconds), \
         so it is not aligned to the stampede and its first half, where every instance's first claims fall, meets one second's limit. Every DynamoDB request passes the capacity meter at its simulated instant, which throttles a key past \
         DynamoDB's limits as DynamoDB would ([metering](../crowdcheck/src/capacity/metering.rs): keys sharing partitions, transaction conflicts within {TRANSACTION_MS} ms \
         of the simulated clock refused and charged, on a table warmed to its per-table quota as docs/SCALE.md says), and is recorded \
         ([capacity](../crowdcheck/src/capacity/mod.rs)). The units the seat's key was asked for (offered: throttled attempts at their estimate) \
         and served are the meter's (measured); its busiest second is judged against a partition's {PARTITION_WRITE_UNITS:.0} write or \
         {PARTITION_READ_UNITS:.0} read units, which the seat shares with the keys beside it.\n\n",
    );
    out.push_str("| instances | requests | winners | seat-held | 503 | other | claims written | units offered to the seat's key (write / read) | units served (write / read) | share of a partition asked / served, busiest second | history (wall-clock windows) | ok |\n|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---|---|\n");
    for run in runs {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {:.0} / {:.0} | {:.0} / {:.0} | {:.2} / {:.2} | {} | {} |",
            run.label(),
            run.requests,
            run.winners,
            run.seat_held,
            run.unavailable,
            other_answers(&run.other),
            run.writes,
            run.offered.0,
            run.offered.1,
            run.served.0,
            run.served.1,
            run.busiest_second_offered,
            run.busiest_second,
            run.history.text(),
            if run.ok() { "yes" } else { "**NO**" }
        );
    }
    out.push('\n');
    for run in runs {
        let goals: Vec<String> = run.goals().iter().map(|g| g.judged()).collect();
        let verdict = if goals.is_empty() {
            "no target: it shows where the design's limit is".to_owned()
        } else {
            goals.join("; ")
        };
        let _ = writeln!(
            out,
            "one-seat stampede ({} instances{}): {} × 503, {:.2} of a partition asked of the seat's key in its busiest second ({:.2} served), measured ({verdict})\n",
            run.instances,
            run.buyer_limit
                .map_or(String::new(), |limit| format!(", buyer limit {limit}")),
            run.unavailable,
            run.busiest_second_offered,
            run.busiest_second,
        );
    }
    arithmetic(&mut out, runs);
    out
}

/// Why the runs differ, and the arithmetic behind the limit (modelled from
/// DynamoDB's documented limits and the runs' own counts).
fn arithmetic(out: &mut String, runs: &[StampedeRun]) {
    use std::fmt::Write as _;
    let refusals = shared::domain::crowd::CONTENDED_REFUSALS;
    let _ = writeln!(
        out,
        "Why they differ: get-seat reads the seat (strongly consistent, 1 read unit: a sixth of a transactional write's 2 write units \
         of a partition's {PARTITION_WRITE_UNITS:.0} write or {PARTITION_READ_UNITS:.0} read units a second) before it writes, and \
         refuses on the read; an instance answers from memory after it has itself refused the seat {refusals} times within a second, and \
         answers a claim whose read DynamoDB throttled from what it saw of the seat at most 5 s before (docs/API.md, \"Under a crowd\"). \
         So each instance's first claims cost the seat's key about {refusals} reads, and only the reads that ran before the winner's \
         transaction committed also write. Claims that meet a rival's transaction in flight are refused by DynamoDB and charged all \
         the same (assumed: the guide is silent); a claim that met one reads the seat again, and here all its rounds run at its one \
         simulated instant.\n"
    );
    for run in runs {
        let exact = (refusals as f64) * run.instances as f64;
        let _ = writeln!(
            out,
            "- {} instances (modelled from the counts above): {refusals} exact refusals each ask about {exact:.0} read units of the seat's \
             key, {:.2} of a partition before any write; offered {:.0} write and {:.0} read units ({:.2} of a partition over the run), served {:.2} (the busiest second {:.2}). \
             What a throttled read cannot learn from an earlier refusal of its own instance is a 503: an instance whose first read is \
             throttled. At {} refusals (the contract before issue 44) the same instances would ask {:.2} of a partition before any write.",
            run.instances,
            exact / PARTITION_READ_UNITS,
            run.offered.0,
            run.offered.1,
            run.offered_share(),
            run.served_share(),
            run.busiest_second,
            refusals + 1,
            (refusals + 1) as f64 * run.instances as f64 / PARTITION_READ_UNITS,
        );
    }
    let _ = writeln!(
        out,
        "\nThe on-sale queue (issue 19) is what keeps that many instances off one seat.\n"
    );
}

/// Answers other than a win, `seat-held` or `503`, as "name ×n" (none: "—").
fn other_answers(other: &BTreeMap<String, usize>) -> String {
    if other.is_empty() {
        return "—".into();
    }
    let named: Vec<String> = other.iter().map(|(k, n)| format!("{k} ×{n}")).collect();
    named.join(", ")
}
