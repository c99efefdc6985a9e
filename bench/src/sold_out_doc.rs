//! The sold-out phase's figures: its crowd replayed through the capacity
//! meter, its goals, and the phase as docs/BENCHMARKS.md shows it (the
//! phase itself: `sold_out.rs`).

use std::fmt::Write as _;

use super::onsale_run::TARGET_CLAIMS_PER_SECOND;
use super::replay::{method, replays, table, Layout, Stream, BELOW_THE_CEILING};
use super::sold_out::{SoldOutPhase, REFUSAL_READ_UNITS, REFUSAL_WRITE_UNITS};
use super::sold_out_crowd::CROWD_INSTANCES;
use super::sold_out_crowd::PER_INSTANCE_RATE;
use crate::capacity::PARTITION_READ_UNITS;
use crate::{Bound, Goal};

/// The unit of the crowd's replays.
const REFUSAL_UNIT: &str = "refused claim attempts/s";

impl SoldOutPhase {
    /// Replays the crowd through the capacity meter, its rate in claim
    /// attempts refused a second: its refusals as recorded, and one
    /// order for each `attempts_per_buyer` of them (a refused buyer makes
    /// one order and tries as often as a selling buyer did, as the crowd's
    /// projection has it).
    pub fn replay(&mut self, attempts_per_buyer: f64) {
        let refusals: u64 = self.functions.values().map(|f| f.requests).sum();
        if refusals == 0 || attempts_per_buyer <= 0.0 {
            // No crowd (`ok` fails the phase), or no buyer who tried:
            // nothing to replay.
            return;
        }
        self.refusals_per_order = attempts_per_buyer;
        let orders = self.orders as f64 * attempts_per_buyer;
        // Each function's refusals span the same time: side by side, as
        // the crowd sends them.
        let mut streams: Vec<Stream> = self
            .refusal_requests
            .iter()
            .filter(|part| !part.is_empty())
            .map(|part| Stream::recorded(part, refusals as f64))
            .collect();
        streams.push(Stream::recorded(&self.order_requests, orders));
        self.replays = replays(&streams, TARGET_CLAIMS_PER_SECOND, &[Layout::New]);
    }

    /// A refusal's cost per request against the contract's, the first
    /// seconds' hottest key under a partition's read units, and the
    /// replays below its ceiling and at the target throttling nothing.
    pub fn goals(&self) -> Vec<Goal> {
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
        goals.extend(self.first_seconds_goal());
        goals.extend(self.replay_goals());
        goals
    }

    fn first_seconds_goal(&self) -> Option<Goal> {
        self.fresh_hottest.as_ref().map(|(key, rate)| {
            Goal::new(
                format!("sold-out crowd's first 10 s (fresh instances): read units/s on `{key}`"),
                *rate,
                Bound::AtMost(PARTITION_READ_UNITS),
                "a partition's read units/s (DynamoDB's limits)",
            )
        })
    }

    /// Below its ceiling and at the design's target (the crowd's peak,
    /// stated apart from the recording), nothing throttles and nothing
    /// answers 503.
    fn replay_goals(&self) -> Vec<Goal> {
        let what = ("sold-out crowd", REFUSAL_UNIT);
        let mut goals = self.replays.below_the_ceiling_goals(what.0, what.1);
        goals.extend(self.replays.at_target_goals(what.0, what.1));
        goals
    }

    /// The phase as docs/BENCHMARKS.md shows it.
    pub fn markdown(&self) -> String {
        let mut out = String::from("### Sold out\n\n");
        let _ = writeln!(
            out,
            "After the buyers, the rest of the event was **seeded as sold** ({} seats and {} places still free, sold at once through the store's seeding calls, which use a late payment's own expressions, in {:.1} s), and the stream projected: it saw {} of {} sections sold out. \
             Then a crowd in the model's mix was refused through {CROWD_INSTANCES} warm function instances (each had served one request of each function), every DynamoDB request recorded and priced. \
             get-seat's requests arrive on a simulated clock at {PER_INSTANCE_RATE} a second per instance (a request every 10 ms, a DynamoDB round trip: whether an instance's seats are contended depends on its pace, which DynamoDB Local cannot give it in real time), through get-seat's claim; the others through their handlers in real time:\n",
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
        out.push_str(&self.replay_markdown());
        out.push_str("### An on-sale's first seconds: fresh instances\n\nRead units one fresh instance of each function spends on its first request (its own order's key left out):\n\n| function | read units |\n|---|---:|\n");
        for (function, units) in &self.fresh {
            let _ = writeln!(out, "| {function} | {units:.1} |");
        }
        if let (Some((key, rate)), Some(goal)) = (&self.fresh_hottest, self.first_seconds_goal()) {
            let _ = writeln!(
                out,
                "\nprojected first 10 s (1,000 fresh instances per function), modelled from the read units measured above: hottest key `{key}` at {rate:.0} read units/s ({})\n",
                goal.judged()
            );
        }
        out
    }

    /// The crowd's replay: its ceiling under the meter, a row per rate.
    fn replay_markdown(&self) -> String {
        let mut out = format!(
            "The crowd's recorded requests are replayed: its refusals, and an order for each {:.2} of them, as a refused buyer makes one and tries as often as a selling buyer did. {} \
             The new keys' ceiling under this meter is **{:.0} {REFUSAL_UNIT}** (modelled); the rates are {BELOW_THE_CEILING} of it and the target, `scale::TARGET_CLAIMS_PER_SECOND`:\n\n",
            self.refusals_per_order,
            method(),
            self.replays.ceiling,
        );
        out.push_str(&table(&self.replays, REFUSAL_UNIT));
        out.push('\n');
        for goal in self.replay_goals() {
            let (value, judged) = (goal.value_text(), goal.judged());
            let _ = writeln!(out, "- {} = {value} ({judged})", goal.figure);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::super::pricing::Priced;
    use super::super::sold_out::FunctionCost;
    use super::*;
    use crate::capacity::{Charge, Target};

    fn on(pk: &str, write_units: f64, read_units: f64) -> Priced {
        Priced {
            write: write_units > 0.0,
            retried: true,
            charges: vec![Charge {
                target: Target::table(pk),
                op: "GetItem".into(),
                write_units,
                read_units,
            }],
        }
    }

    #[test]
    fn the_crowd_is_replayed_with_an_order_for_each_buyers_tries() {
        // 1,000 refusals, each a read unit on one key: 3,000 a second
        // fill it. 10 orders, one each 2 refusals, on keys of their own
        // on partitions apart from the event's.
        let mut placing =
            crate::capacity::meter::Meter::new(crate::capacity::meter::Limits::WARMED);
        let event = placing.partition_of(&Target::table("EVENT#x"));
        let apart: Vec<String> = (0..)
            .map(|i| format!("ORDER#{i}"))
            .filter(|pk| placing.partition_of(&Target::table(pk)) != event)
            .take(10)
            .collect();
        let mut phase = SoldOutPhase {
            refusal_requests: vec![(0..1_000).map(|_| on("EVENT#x", 0.0, 1.0)).collect()],
            order_requests: apart.iter().map(|pk| on(pk, 1.0, 0.0)).collect(),
            orders: 10,
            ..SoldOutPhase::default()
        };
        phase.functions.insert(
            "get-seat",
            FunctionCost {
                requests: 1_000,
                refused: 1_000,
                ..FunctionCost::default()
            },
        );
        phase.replay(2.0);
        assert!(
            (phase.replays.ceiling - 3_000.0).abs() < 1e-6,
            "{}",
            phase.replays.ceiling
        );
        // Met below the ceiling; at the target, 20,000 refusals a second
        // on one key of 3,000 read units, missed.
        let goals = phase.replay_goals();
        let met: Vec<bool> = goals.iter().map(Goal::met).collect();
        assert_eq!(met, [true, true, false, false], "{goals:?}");
        // Below the ceiling: 2,400 refusals a second, and 1,200 orders.
        let (_, below) = phase
            .replays
            .find(crate::replay::Rate::BelowTheCeiling, Layout::New)
            .expect("a run below the ceiling");
        let seconds = crate::replay::REPLAY_SECONDS;
        assert!((below.requests_per_second - 3_600.0).abs() < 1e-6);
        let offered = 3_600.0 * seconds;
        assert!(
            (below.requests as f64 - offered).abs() <= 1.0,
            "{}",
            below.requests
        );
        assert!(phase
            .goals()
            .iter()
            .any(|g| g.figure.contains("sold-out crowd replayed")));
    }
}
