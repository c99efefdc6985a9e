//! The sold-out phase as docs/BENCHMARKS.md shows it, and its goals
//! (the phase itself: `sold_out.rs`).

use super::sold_out::{
    SoldOutPhase, CROWD_INSTANCES, PER_INSTANCE_RATE, REFUSAL_READ_UNITS, REFUSAL_WRITE_UNITS,
};
use crate::capacity::PARTITION_READ_UNITS;
use crate::{Bound, Goal};

impl SoldOutPhase {
    /// A refusal's cost per request, against the contract's, and the
    /// first seconds' hottest key under a partition's read units.
    pub fn goals(&self) -> Vec<Goal> {
        let first_seconds = self.fresh_hottest.as_ref().map(|(key, rate)| {
            Goal::new(
                format!("sold-out crowd's first 10 s (fresh instances): read units/s on `{key}`"),
                *rate,
                Bound::AtMost(PARTITION_READ_UNITS),
                "a partition's read units/s (DynamoDB's limits)",
            )
        });
        let mut goals = vec![
            Goal::new(
                "sold-out refusal: read units per request",
                self.refusal_read_units(),
                Bound::AtMost(REFUSAL_READ_UNITS),
                "`sold_out::REFUSAL_READ_UNITS`",
            ),
            Goal::new(
                "sold-out refusal: write units per request",
                self.refusal_write_units(),
                Bound::AtMost(REFUSAL_WRITE_UNITS),
                "`sold_out::REFUSAL_WRITE_UNITS`",
            ),
        ];
        goals.extend(first_seconds);
        goals
    }

    /// The phase as docs/BENCHMARKS.md shows it.
    pub fn markdown(&self) -> String {
        use std::fmt::Write as _;
        let mut out = String::from("### Sold out\n\n");
        let _ = writeln!(
            out,
            "After the buyers, the rest of the event was **seeded as sold** ({} seats and {} places still free, sold at once through the store's seeding calls, which use a late payment's own expressions, in {:.1} s), and the stream projected: it saw {} of {} sections sold out. \
             Then a crowd in the model's mix was refused through {CROWD_INSTANCES} warm function instances (each had served one request of each function), every DynamoDB request recorded and priced. \
             get-seat's requests arrive on a simulated clock at {PER_INSTANCE_RATE} a second per instance (a request every 10 ms, a DynamoDB round trip: whether an instance is crowded depends on its pace, which DynamoDB Local cannot give it in real time), through get-seat's claim; the others through their handlers in real time:\n",
            self.seeded_seats,
            self.seeded_places,
            self.seeding.as_secs_f64(),
            self.sold_out_sections,
            self.sections
        );
        out.push_str("| function | requests | refused as sold out | other answers | read units per request | write units per request |\n|---|---:|---:|---|---:|---:|\n");
        for (function, f) in &self.functions {
            let other: Vec<String> = f.other.iter().map(|(k, n)| format!("{k} ×{n}")).collect();
            let _ = writeln!(
                out,
                "| {function} | {} | {} | {} | {:.2} | {:.2} |",
                f.requests,
                f.refused,
                if other.is_empty() {
                    "—".into()
                } else {
                    other.join(", ")
                },
                f.reads_per_request(),
                f.writes_per_request()
            );
        }
        let goals = self.goals();
        let (reads, writes) = (&goals[0], &goals[1]);
        let _ = writeln!(
            out,
            "\nsold-out refusal cost, measured: {:.2} read units per request ({}), {:.2} write units per request ({})\n",
            reads.value,
            reads.judged(),
            writes.value,
            writes.judged()
        );
        for (label, load) in [
            ("writes", &self.hottest_write),
            ("reads", &self.hottest_read),
        ] {
            if let Some(l) = load {
                let _ = writeln!(
                    out,
                    "Hottest key of the crowd for {label}: `{}` ({:.1} write units, {:.1} read units over the whole crowd).\n",
                    l.target.pk, l.write_units, l.read_units
                );
            }
        }
        out.push_str("### An on-sale's first seconds: fresh instances\n\nRead units one fresh instance of each function spends on its first request (its own order's key left out):\n\n| function | read units |\n|---|---:|\n");
        for (function, units) in &self.fresh {
            let _ = writeln!(out, "| {function} | {units:.1} |");
        }
        if let (Some((key, rate)), Some(goal)) = (&self.fresh_hottest, goals.get(2)) {
            let _ = writeln!(
                out,
                "\nprojected first 10 s (1,000 fresh instances per function), modelled from the read units measured above: hottest key `{key}` at {rate:.0} read units/s ({})\n",
                goal.judged()
            );
        }
        out
    }
}
