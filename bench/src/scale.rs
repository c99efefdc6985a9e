//! The on-sale's figures as text: its section of docs/BENCHMARKS.md, and
//! docs/SCALE.md, the scale model computed from what the run measured.

use std::fmt::Write as _;

use super::crowd_projection::CrowdProjection;
use super::crowd_projection::{CROWD_BUYERS, CROWD_SECONDS};
use super::onsale_run::{OnSale, TARGET_CLAIMS_PER_SECOND};
use super::pricing::Projection;
use super::replay::{Layout, Rate, Replayed, PEAK_WINDOW_SECONDS};
use super::scale_model::{template, AWS_REQUEST_MS, NEW_TABLE_WRITE_UNITS};
use crate::capacity::{PARTITION_READ_UNITS, PARTITION_WRITE_UNITS};
use crate::{Bound, Goal};

/// How long one sweep may run: expire-holds' timeout in template.yaml
/// (without one, the minute until the next).
fn sweep_seconds() -> f64 {
    template()["Resources"]["ExpireHoldsFunction"]["Properties"]["Timeout"]
        .as_f64()
        .unwrap_or(60.0)
}

fn key_rows(out: &mut String, p: &Projection, attempts: f64) {
    let _ = writeln!(out, "| layout | key | write units | read units | share of claim attempts' units | write units/s at {TARGET_CLAIMS_PER_SECOND:.0} claims/s |");
    let _ = writeln!(out, "|---|---|---:|---:|---:|---:|");
    for k in &p.hottest {
        let key = crate::kit::target_label(&k.target);
        let _ = writeln!(
            out,
            "| {} | {key} | {:.0} | {:.1} | {:.2} units/attempt | {:.0} |",
            p.layout,
            k.write_units,
            k.read_units,
            k.write_units / attempts.max(1.0),
            k.write_units / attempts.max(1.0) * TARGET_CLAIMS_PER_SECOND
        );
    }
}

impl OnSale {
    fn attempts_f(&self) -> f64 {
        self.attempts as f64
    }

    /// The on-sale's section of docs/BENCHMARKS.md.
    pub fn markdown(&self) -> String {
        let budget_s = f64::from(shared::config::DEFAULT_CREATE_EVENT_BUDGET_MS) / 1000.0;
        let mut out = String::new();
        let Some(m) = self.model else { return out };
        let attempts = self.attempts_f();
        let _ = writeln!(out, "## On-sale demand model: old keys vs new keys\n");
        let _ = writeln!(
            out,
            "{} seats ({} sections × {} rows × {}) and a general-admission section of {} places; {} buyers, {} in flight: each creates an order; five in six claim 1-4 seats (section and row by Zipf(1.0) over plan rank, seat uniform in the row), one in six holds 1-4 places (hold-ga); each confirms what it got with probability 0.7; the rest expire and the sweep releases them. \
             A claim attempt is a get-seat or a hold-ga. Every DynamoDB request of the on-sale (sweep included) was recorded by an SDK interceptor and priced per partition key by DynamoDB's rules from item sizes (crowdcheck/src/capacity); the old layout is the same traffic re-keyed (every seat on `EVENT#{{ref}}`, one counter per general-admission section, 8 index shards).\n",
            m.sections * m.rows * m.seats_per_row, m.sections, m.rows, m.seats_per_row, m.ga_capacity, m.buyers, m.in_flight
        );
        let _ = writeln!(
            out,
            "Run: {} claim attempts ({} won, {} refused with 409, {} answered 503) in {:.1} s = **{:.0} claim attempts/s** on DynamoDB Local; {} orders, {} confirmed, {} seats and {} places sold ({} places over capacity); the sweep expired {} orders in {:.2} s. Invariant check afterwards: {} violations. History checker (every buyer's answer with the instants its request was in flight, then the sold-out phase's seeded sales and its crowd's get-seat answers; each seat a register claimed under expiry, the GA section a counter under its capacity): {}. {}\n",
            self.attempts, self.won, self.refused, self.unavailable, self.wall.as_secs_f64(), attempts / self.wall.as_secs_f64().max(1e-9),
            self.orders, self.confirmed, self.sold_seats, self.sold_places, self.oversold_places, self.swept_orders, self.sweep.as_secs_f64(), self.violations,
            self.history.text(),
            if self.ok { "ok" } else { "**FAILED**" }
        );
        // The headline: a million buyers four times oversubscribed, both
        // phases (docs/SCALE.md has the per-phase keys).
        let crowd = super::crowd_projection::project(&super::crowd_projection::phases(self));
        for (p, old) in [(&self.old_keys, true), (&self.new_keys, false)] {
            let verdict = if old {
                String::new()
            } else {
                format!(" ({})", self.ceiling_goal().judged())
            };
            let _ = writeln!(
                out,
                "projected on-sale DynamoDB key ceiling ({}): {:.0} claim attempts/s{verdict}\n\n(modelled from the recorded requests: a million buyers four times oversubscribed, the lower of the selling and sold-out phases' ceilings; the selling phase alone: {:.0})\n",
                p.layout,
                crowd.ceiling(old),
                p.ceiling
            );
        }
        let (rate, need) = self.sweep_rates();
        let (trips, in_flight, real_rate) = self.aws_sweep_rate();
        let goal = self.sweep_goal();
        let _ = writeln!(
            out,
            "sweep throughput, measured on DynamoDB Local: {rate:.0} expired orders/s, bound by the emulator, which shares the machine's cores with the bench (no target). \
             The crowd of {CROWD_BUYERS:.0} buyers in {CROWD_SECONDS:.0} s needs {need:.0}/s ({:.0}% of the selling phase's orders expire, as in this run, and all of the sold-out phase's, the refused buyers', each once-a-minute sweep releasing a minute's expiries within its {:.0} s timeout). \
             Modelled on AWS, at {AWS_REQUEST_MS:.0} ms a round trip (an assumption) and the {trips:.2} round trips per expired order the run made, its {in_flight:.0} orders in flight release **{real_rate:.0} expired orders/s** ({}{})\n",
            100.0 * self.swept_orders as f64 / self.orders.max(1) as f64,
            sweep_seconds(),
            goal.judged(),
            if goal.met() { "" } else { ": the sweep falls behind; expired holds stay claimable at once (promise 3), only their release is late" },
        );
        let _ = writeln!(
            out,
            "The ceiling is the aggregate rate of claim attempts at which the hottest key reaches a partition's {PARTITION_WRITE_UNITS:.0} write units/s (or {PARTITION_READ_UNITS:.0} read units/s): {PARTITION_WRITE_UNITS:.0} × attempts ÷ that key's units. \
             At the new keys' ceiling the hottest key for reads takes **{:.0} read units/s** (limit {PARTITION_READ_UNITS:.0}).\n",
            self.new_keys.reads_at_ceiling
        );
        key_rows(&mut out, &self.old_keys, attempts);
        key_rows(&mut out, &self.new_keys, attempts);
        out.push_str(&super::replay::markdown(&self.replays));
        out.push('\n');
        for goal in self.replay_goals() {
            let (value, judged) = (goal.value_text(), goal.judged());
            let _ = writeln!(out, "- {} = {value} ({judged})", goal.figure);
        }
        self.at_target_markdown(&mut out, &crowd);
        let _ = writeln!(
            out,
            "\nSeat map of this event after the on-sale ({} stream records folded into the projection in {:.1} s): **{} bytes** raw, **{} bytes** gzip; **{:.1} read units** per uncached request (the event, then one eventually consistent read per row of up to 1,000 seats, 100 per BatchGetItem); uncached request p50 **{:.1} ms**, p99 {:.1} ms ({} requests, each in a fresh process). A process reuses a map it read for a second, and CloudFront for another.\n",
            self.stream_records, self.projection.as_secs_f64(), self.map_bytes, self.map_gzip_bytes, self.map_read_units,
            self.map_latency.p50(), self.map_latency.p99(), self.map_latency.latencies_ms.len()
        );
        let _ = writeln!(
            out,
            "\n{}-seat creation: answered **{}** and was complete after **{:.1} s** on DynamoDB Local (a table with its stream), writing {:.0} write units (a conditional put per seat, the plan, the event item). \
             Projected on AWS, where the table's write rate bounds it: **{:.1} s** at a new on-demand table's {NEW_TABLE_WRITE_UNITS:.0} write units/s (one creator keeps up if a put takes under {:.1} ms: {} in flight); inside create-event's {:.0} s budget (a 201, no 202) with **{:.0} write units/s** of warm throughput.\n",
            m.sections * m.rows * m.seats_per_row, self.creation_answer, self.creation.as_secs_f64(), self.creation_write_units,
            self.creation_write_units / NEW_TABLE_WRITE_UNITS,
            1000.0 * shared::store::SEAT_WRITES_IN_FLIGHT as f64 / NEW_TABLE_WRITE_UNITS,
            shared::store::SEAT_WRITES_IN_FLIGHT,
            budget_s,
            (self.creation_write_units / budget_s).max(NEW_TABLE_WRITE_UNITS)
        );
        if let Some(phase) = &self.sold_out {
            out.push_str(&phase.markdown());
        }
        out
    }

    /// The target replayed on the quotas docs/SCALE.md asks for (judged),
    /// beside the end-to-end figure at AWS's default quotas (printed, not
    /// judged: quotas are what an operator asks AWS for ahead).
    fn at_target_markdown(&self, out: &mut String, crowd: &CrowdProjection) {
        let Some(at) = &self.replays.at_requested else {
            return;
        };
        let unit = super::replay::ON_SALE_UNIT;
        let row = super::replay::Replays {
            runs: vec![(Rate::Target, at.units, at.run.clone())],
            ..Default::default()
        };
        let _ = writeln!(
            out,
            "\n**The target on the quotas docs/SCALE.md asks for.** The same recording, each part in its recorded order, replayed at **{:.0} {unit}** for {:.0} s (of the crowd's peak minute, {PEAK_WINDOW_SECONDS:.0} s) on a table whose per-table quotas are raised to **{:.0} write and {:.0} read units/s** (the table and each index apart) and warmed to them: what SCALE.md's \"What to ask AWS for\" lists, the larger of what the crowd's peak and this target ask. Under these limits the new keys' ceiling is **{:.0} {unit}** (modelled), where {} reaches its limit first.\n\n{}",
            at.units, at.seconds, at.quotas.0, at.quotas.1, at.ceiling.per_s, at.ceiling.binding,
            super::replay::table(&row, unit)
        );
        for goal in at.goals(unit) {
            let (value, judged) = (goal.value_text(), goal.judged());
            let _ = writeln!(out, "- {} = {value} ({judged})", goal.figure);
        }
        if let Some(default) = super::end_to_end::ceiling(&super::scale_doc::claim_bindings(crowd))
        {
            let _ = writeln!(
                out,
                "\nAt AWS's default quotas the on-sale's end to end is **{:.0} {unit}** (modelled), bound by {} (docs/SCALE.md): printed, not judged.",
                default.per_s, default.what
            );
        }
    }

    /// The sweep modelled on AWS: the run's round trips per expired order,
    /// the orders it keeps in flight, and the rate they give at
    /// [`AWS_REQUEST_MS`] a round trip.
    fn aws_sweep_rate(&self) -> (f64, f64, f64) {
        let trips = self.round_trips.get("expire-holds").copied().unwrap_or(0) as f64
            / self.swept_orders.max(1) as f64;
        let in_flight = (shared::sweep::SHARD_LANES * shared::sweep::ORDERS_IN_FLIGHT) as f64;
        (
            trips,
            in_flight,
            in_flight * 1000.0 / (trips * AWS_REQUEST_MS).max(1e-9),
        )
    }

    /// The sweep keeps up with the crowd's expiries on AWS, modelled from
    /// the run's round trips. The rate measured on DynamoDB Local is the
    /// emulator's, on the bench's own cores: printed beside it, no target
    /// (no machine this runs on could meet a stadium's rate).
    fn sweep_goal(&self) -> Goal {
        Goal::new(
            "sweep modelled on AWS, expired orders/s",
            self.aws_sweep_rate().2,
            Bound::AtLeast(self.sweep_rates().1),
            "the crowd model's expiries (`sweep_rates`)",
        )
    }

    /// Every goal of the on-sale: the sweep keeps up, each phase's DynamoDB
    /// key ceiling is above the crowd's claim attempts in that phase (the
    /// new keys), and the sold-out refusals cost what they may.
    pub fn goals(&self) -> Vec<Goal> {
        if self.model.is_none() {
            return Vec::new();
        }
        let refusals = self.sold_out.iter().flat_map(|phase| phase.goals());
        let at_target = self
            .replays
            .at_requested
            .iter()
            .flat_map(|r| r.goals(super::replay::ON_SALE_UNIT));
        [self.sweep_goal(), self.ceiling_goal()]
            .into_iter()
            .chain(self.replay_goals())
            .chain(at_target)
            .chain(refusals)
            .collect()
    }

    /// Replayed through the capacity meter below the new layout's ceiling
    /// under that meter, the new layout throttles nothing and answers no
    /// 503.
    pub fn replay_goals(&self) -> Vec<Goal> {
        self.replays
            .below_the_ceiling_goals("on-sale", super::replay::ON_SALE_UNIT)
    }

    /// The old layout, replayed at the same rates, throttles: what the new
    /// keys were for.
    pub fn old_keys_throttle(&self) -> bool {
        let old: Vec<&Replayed> = self
            .replays
            .runs
            .iter()
            .map(|(_, _, run)| run)
            .filter(|run| run.layout == Layout::Old)
            .collect();
        !old.is_empty() && old.iter().all(|run| run.throttled_share() > 0.0)
    }

    /// The on-sale's DynamoDB key ceiling (new keys, the lower of its
    /// phases') against the claim attempts a second the design is for.
    pub fn ceiling_goal(&self) -> Goal {
        let crowd = super::crowd_projection::project(&super::crowd_projection::phases(self));
        Goal::new(
            "on-sale DynamoDB key ceiling, both phases (new keys), claim attempts/s",
            crowd.ceiling(false),
            Bound::AtLeast(TARGET_CLAIMS_PER_SECOND),
            "`scale::TARGET_CLAIMS_PER_SECOND`",
        )
    }

    /// The sweep's measured rate (expired orders released a second, its
    /// orders released concurrently) and the rate the crowd needs: its
    /// buyers a second times the share of orders that expire in the busier
    /// phase (the sold-out phase's refused buyers' orders all expire), a
    /// minute's worth within one sweep's 55 s.
    pub fn sweep_rates(&self) -> (f64, f64) {
        let rate = self.swept_orders as f64 / self.sweep.as_secs_f64().max(1e-9);
        let selling = self.swept_orders as f64 / self.orders.max(1) as f64;
        let expiring = if self.sold_out.is_some() {
            1.0
        } else {
            selling
        };
        let need = CROWD_BUYERS / CROWD_SECONDS * expiring * 60.0 / sweep_seconds();
        (rate, need)
    }
}
