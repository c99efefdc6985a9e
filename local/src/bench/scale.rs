//! The on-sale's figures as text: its section of docs/BENCHMARKS.md, and
//! docs/SCALE.md, the scale model computed from what the run measured.

use std::fmt::Write as _;

use super::onsale::{OnSale, Projection, PARTITION_READ_UNITS, PARTITION_WRITE_UNITS};

/// Published on-demand prices, us-east-1, checked 2026-11 (sources in
/// docs/SCALE.md). Prices are inputs; every quantity they multiply was
/// measured by the run.
const USD_PER_MILLION_WRITE_UNITS: f64 = 0.625;
const USD_PER_MILLION_READ_UNITS: f64 = 0.125;
const USD_PER_MILLION_LAMBDA_REQUESTS: f64 = 0.20;
const USD_PER_LAMBDA_GB_SECOND_ARM: f64 = 0.000_013_333_4;
const USD_PER_MILLION_HTTP_API_REQUESTS: f64 = 1.00;
const USD_PER_10K_CLOUDFRONT_REQUESTS: f64 = 0.0100;
const USD_PER_GB_CLOUDFRONT_OUT: f64 = 0.085;
/// Seat-map views per buyer: an assumption (the demand model does not say).
const MAP_VIEWS_PER_BUYER: f64 = 10.0;
/// CloudFront's points of presence (AWS publishes "600+"): the most origin
/// requests per second a 1-second cache lets through, per cache key.
const CLOUDFRONT_EDGE_LOCATIONS: f64 = 600.0;
/// How much hotter an on-sale's peak minute is than its ten-minute
/// average, for sizing warm throughput: an assumption, stated as one.
const PEAK_OVER_AVERAGE: f64 = 4.0;
/// The rate of claim attempts the issue sets as the goal.
const TARGET_CLAIMS_PER_SECOND: f64 = 20_000.0;
/// Lambda's default concurrency quota per account and region.
const LAMBDA_DEFAULT_CONCURRENCY: f64 = 1_000.0;
/// A DynamoDB request's latency on AWS, for the concurrency estimate: an
/// assumption (DynamoDB Local under load is far slower), stated as one.
const DYNAMODB_REQUEST_MS: f64 = 10.0;
/// A new on-demand table's own throughput (DynamoDB developer guide,
/// "warm throughput"): 4,000 write units/s.
const NEW_TABLE_WRITE_UNITS: f64 = 4_000.0;

/// The functions' memory in GB, from template.yaml's Globals (256 MB if it
/// cannot be read).
fn lambda_memory_gb() -> f64 {
    let text =
        std::fs::read_to_string(crate::repo_root().join("template.yaml")).unwrap_or_default();
    let doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(&text).unwrap_or_default();
    doc["Globals"]["Function"]["MemorySize"]
        .as_f64()
        .unwrap_or(256.0)
        / 1024.0
}
/// The scale model's crowd: 1,000,000 buyers in 10 minutes.
const CROWD_BUYERS: f64 = 1_000_000.0;
const CROWD_SECONDS: f64 = 600.0;
/// How long one sweep may run: expire-holds' timeout in template.yaml
/// (without one, the minute until the next).
fn sweep_seconds() -> f64 {
    let text =
        std::fs::read_to_string(crate::repo_root().join("template.yaml")).unwrap_or_default();
    serde_yaml_ng::from_str::<serde_yaml_ng::Value>(&text)
        .ok()
        .and_then(|doc| doc["Resources"]["ExpireHoldsFunction"]["Properties"]["Timeout"].as_f64())
        .unwrap_or(60.0)
}

fn key_rows(out: &mut String, p: &Projection, attempts: f64) {
    let _ = writeln!(out, "| layout | key | write units | read units | share of claim attempts' units | write units/s at 20,000 claims/s |");
    let _ = writeln!(out, "|---|---|---:|---:|---:|---:|");
    for k in &p.hottest {
        let key = match &k.target.index {
            Some(index) => format!("{index}: `{}`", k.target.pk),
            None => format!("`{}`", k.target.pk),
        };
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

    /// Dollars per 1,000 seats sold, by service: (DynamoDB, Lambda, API).
    pub fn cost_per_thousand_seats(&self) -> (f64, f64, f64) {
        let per = 1000.0 / (self.sold_seats.max(1) as f64);
        let dynamodb = (self.table_write_units * USD_PER_MILLION_WRITE_UNITS
            + self.table_read_units * USD_PER_MILLION_READ_UNITS)
            / 1e6;
        let (mut requests, mut gb_seconds) = (0.0, 0.0);
        for (count, mean_ms) in self.functions.values() {
            requests += *count as f64;
            // Lambda bills each invocation's duration rounded up to 1 ms.
            gb_seconds += *count as f64 * mean_ms.ceil() / 1000.0 * lambda_memory_gb();
        }
        let lambda = requests * USD_PER_MILLION_LAMBDA_REQUESTS / 1e6
            + gb_seconds * USD_PER_LAMBDA_GB_SECOND_ARM;
        let api = requests * USD_PER_MILLION_HTTP_API_REQUESTS / 1e6;
        (dynamodb * per, lambda * per, api * per)
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
             A claim attempt is a get-seat or a hold-ga. Every DynamoDB request of the on-sale (sweep included) was recorded by an SDK interceptor and priced per partition key by DynamoDB's rules from item sizes (local/src/capacity); the old layout is the same traffic re-keyed (every seat on `EVENT#{{ref}}`, one counter per general-admission section, 8 index shards).\n",
            m.sections * m.rows * m.seats_per_row, m.sections, m.rows, m.seats_per_row, m.ga_capacity, m.buyers, m.in_flight
        );
        let _ = writeln!(
            out,
            "Run: {} claim attempts ({} won, {} refused with 409, {} answered 503) in {:.1} s = **{:.0} claim attempts/s** on DynamoDB Local; {} orders, {} confirmed, {} seats and {} places sold ({} places over capacity); the sweep expired {} orders in {:.2} s. Invariant check afterwards: {} violations. {}\n",
            self.attempts, self.won, self.refused, self.unavailable, self.wall.as_secs_f64(), attempts / self.wall.as_secs_f64().max(1e-9),
            self.orders, self.confirmed, self.sold_seats, self.sold_places, self.oversold_places, self.swept_orders, self.sweep.as_secs_f64(), self.violations,
            if self.ok { "ok" } else { "**FAILED**" }
        );
        for p in [&self.old_keys, &self.new_keys] {
            let _ = writeln!(
                out,
                "projected on-sale ceiling ({}): {:.0} claim attempts/s\n",
                p.layout, p.ceiling
            );
        }
        let (rate, need) = self.sweep_rates();
        let _ = writeln!(
            out,
            "sweep throughput: {rate:.0} expired orders/s (the crowd of {CROWD_BUYERS:.0} buyers in {CROWD_SECONDS:.0} s, {:.0}% of whose orders expire as in this run, needs {need:.0}/s: each once-a-minute sweep releases a minute's expiries within its {:.0} s timeout; {})\n",
            100.0 * self.swept_orders as f64 / self.orders.max(1) as f64,
            sweep_seconds(),
            if rate >= need { "met" } else { "**missed**: the sweep falls behind; expired holds stay claimable at once (promise 3), only their release is late" }
        );
        let _ = writeln!(
            out,
            "The ceiling is the aggregate rate of claim attempts at which the hottest key reaches a partition's {PARTITION_WRITE_UNITS:.0} write units/s (or {PARTITION_READ_UNITS:.0} read units/s): {PARTITION_WRITE_UNITS:.0} × attempts ÷ that key's units. \
             At the new keys' ceiling the hottest key for reads takes **{:.0} read units/s** (limit {PARTITION_READ_UNITS:.0}).\n",
            self.new_keys.reads_at_ceiling
        );
        key_rows(&mut out, &self.old_keys, attempts);
        key_rows(&mut out, &self.new_keys, attempts);
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

    /// The sweep's measured rate (expired orders released a second, its
    /// orders released concurrently) and the rate the crowd needs: its
    /// buyers a second times the share of orders that expired in this run,
    /// a minute's worth within one sweep's 55 s.
    pub fn sweep_rates(&self) -> (f64, f64) {
        let rate = self.swept_orders as f64 / self.sweep.as_secs_f64().max(1e-9);
        let expiring = self.swept_orders as f64 / self.orders.max(1) as f64;
        let need = CROWD_BUYERS / CROWD_SECONDS * expiring * 60.0 / sweep_seconds();
        (rate, need)
    }

    /// docs/SCALE.md: the scale model for 1,000,000 buyers in 10 minutes,
    /// every figure derived from this run's measurements.
    /// docs/SCALE.md; `code` names the commit the run measured.
    pub fn scale_markdown(&self, code: &str) -> String {
        let mut out = String::new();
        let Some(m) = self.model else { return out };
        let attempts = self.attempts_f().max(1.0);
        let buyers_per_s = CROWD_BUYERS / CROWD_SECONDS;
        let attempts_per_buyer = attempts / m.buyers.max(1) as f64;
        let rate = buyers_per_s * attempts_per_buyer;
        let per_attempt = |units: f64| units / attempts;
        let _ = writeln!(out, "# seatclaim at stadium scale\n");
        let _ = writeln!(
            out,
            "Generated by `make bench` from its on-sale run on {code} (docs/BENCHMARKS.md, \"On-sale demand model\"): every number below is a measured quantity of that run scaled to the crowd, or a published price. \
             The crowd: **1,000,000 buyers in 10 minutes** ({buyers_per_s:.0} buyers/s) on the contract's 100,000-seat event, behaving as the demand model says. \
             The run measured {attempts_per_buyer:.2} claim attempts per buyer, so the crowd makes **{rate:.0} claim attempts/s** on average. An on-sale's first minute is far hotter than its average: the partition figures are therefore given per 1,000 claim attempts/s and at the projected ceiling too.\n"
        );
        let _ = writeln!(out, "## Partitions: the hottest keys\n");
        let new_hot = self.new_keys.hottest.first();
        let old_hot = self.old_keys.hottest.first();
        if let (Some(new_hot), Some(old_hot)) = (new_hot, old_hot) {
            let _ = writeln!(
                out,
                "- New keys: the hottest key is `{}` with {:.3} write units per claim attempt: **{:.0} write units/s** at the crowd's average rate, {:.0} per 1,000 attempts/s. A partition takes {PARTITION_WRITE_UNITS:.0}: the ceiling is **{:.0} claim attempts/s**.\n\
                 - Old keys (one key per event): `{}` takes {:.3} write units per attempt, **{:.0} write units/s** at the average rate: throttled {:.0}× over, ceiling {:.0} attempts/s.\n\
                 - Reads: the hottest key for reads takes {:.0} read units/s at the new ceiling (limit {PARTITION_READ_UNITS:.0}).\n",
                new_hot.target.pk, per_attempt(new_hot.write_units), per_attempt(new_hot.write_units) * rate, per_attempt(new_hot.write_units) * 1000.0,
                self.new_keys.ceiling,
                old_hot.target.pk, per_attempt(old_hot.write_units), per_attempt(old_hot.write_units) * rate,
                per_attempt(old_hot.write_units) * rate / PARTITION_WRITE_UNITS, self.old_keys.ceiling,
                self.new_keys.reads_at_ceiling
            );
        }
        let table_w = per_attempt(self.table_write_units) * rate;
        let table_r = per_attempt(self.table_read_units) * rate;
        let _ = writeln!(out, "## Table throughput\n");
        let _ = writeln!(
            out,
            "The whole table takes {:.2} write units and {:.2} read units per claim attempt: **{table_w:.0} write units/s and {table_r:.0} read units/s** at the crowd's average, {:.0} / {:.0} at the projected ceiling. \
             A new on-demand table starts at 4,000 write and 12,000 read units/s and doubles as traffic holds; for an announced on-sale, set the template's `TableWarmWriteUnitsPerSecond`/`TableWarmReadUnitsPerSecond` to the peak you expect (at least {PEAK_OVER_AVERAGE:.0}× the average: **{:.0} write units/s**) a day ahead.\n",
            per_attempt(self.table_write_units), per_attempt(self.table_read_units),
            per_attempt(self.table_write_units) * self.new_keys.ceiling, per_attempt(self.table_read_units) * self.new_keys.ceiling,
            (table_w * PEAK_OVER_AVERAGE).max(NEW_TABLE_WRITE_UNITS)
        );
        let _ = writeln!(
            out,
            "## Lambda concurrency (Little's law: requests/s × mean duration)\n"
        );
        let _ = writeln!(out, "| function | requests per buyer | requests/s | mean ms (measured) | concurrency |\n|---|---:|---:|---:|---:|");
        for (function, (count, mean_ms)) in &self.functions {
            let per_buyer = *count as f64 / m.buyers.max(1) as f64;
            let rps = per_buyer * buyers_per_s;
            let _ = writeln!(
                out,
                "| {function} | {per_buyer:.2} | {rps:.0} | {mean_ms:.1} | {:.0} |",
                rps * mean_ms / 1000.0
            );
        }
        let total: f64 = self
            .functions
            .values()
            .map(|(count, ms)| *count as f64 / m.buyers.max(1) as f64 * buyers_per_s * ms / 1000.0)
            .sum();
        let per_second: f64 = self
            .functions
            .values()
            .map(|(count, _)| *count as f64 / m.buyers.max(1) as f64 * buyers_per_s)
            .sum();
        let quota = if total > LAMBDA_DEFAULT_CONCURRENCY {
            format!(
                "{total:.0} concurrent executions in all: more than the default quota of {LAMBDA_DEFAULT_CONCURRENCY:.0}, so request an increase before the on-sale; at {DYNAMODB_REQUEST_MS:.0} ms per request (a DynamoDB round trip, not the emulator under load) it would be {:.0}",
                per_second * DYNAMODB_REQUEST_MS / 1000.0
            )
        } else {
            format!("{total:.0} concurrent executions in all, inside the default quota of {LAMBDA_DEFAULT_CONCURRENCY:.0}")
        };
        let _ = writeln!(
            out,
            "\nDurations are the handler's time in this run against DynamoDB Local on a shared 2-core machine, so they are upper bounds: {quota}. Confirm keeps its reserved concurrency. \
             Not in the table: availability (behind CloudFront), project-seat-map (one execution per stream shard and ParallelizationFactor, 4), expire-holds (one a minute, 2 reserved).\n"
        );
        let _ = writeln!(out, "## The seat map\n");
        let polls = CROWD_BUYERS / CROWD_SECONDS;
        let _ = writeln!(
            out,
            "`GET /events/{{id}}/availability` is {} bytes raw and **{} bytes gzip** for the 100,000-seat event, {:.1} read units per uncached request (measured), p50 {:.1} ms uncached. \
             Served through CloudFront with the reply's `Cache-Control: public, max-age=1` and Origin Shield (one regional cache in front of the origin), a million buyers refreshing the map ({polls:.0} new buyers/s) cost the origin at most one request per second per cache key (gzip or not: 2), **{:.0} read units/s**, and {:.2} GB/s of gzip from the edges at a million views a second. \
             Without Origin Shield each of ~{CLOUDFRONT_EDGE_LOCATIONS:.0} edge locations may ask once a second: up to {:.0} read units/s. Without a CDN a million requests a second would need {:.0} million read units/s, which no table serves: the CDN is required, not optional. \
             The projection itself costs a write per seat change (records with no change, such as seat creation, are skipped), on keys of one row each.\n",
            self.map_bytes, self.map_gzip_bytes, self.map_read_units, self.map_latency.p50(),
            2.0 * self.map_read_units,
            1e6 * self.map_gzip_bytes as f64 / 1e9,
            CLOUDFRONT_EDGE_LOCATIONS * self.map_read_units,
            self.map_read_units
        );
        let (d, l, a) = self.cost_per_thousand_seats();
        let _ = writeln!(out, "## Cost per 1,000 seats sold (on-demand, us-east-1)\n");
        let _ = writeln!(
            out,
            "| service | what was measured | $ per 1,000 seats sold |\n|---|---|---:|\n\
             | DynamoDB | {:.0} write + {:.0} read units for {} seats sold | {d:.4} |\n\
             | Lambda (arm64, 256 MB) | {} invocations, mean durations above | {l:.4} |\n\
             | API Gateway HTTP API | the same requests | {a:.4} |\n\
             | **total** | | **{:.4}** |\n",
            self.table_write_units,
            self.table_read_units,
            self.sold_seats,
            self.functions.values().map(|(c, _)| c).sum::<u64>(),
            d + l + a
        );
        let buyers_per_thousand = m.buyers as f64 / self.sold_seats.max(1) as f64 * 1000.0;
        let views = buyers_per_thousand * MAP_VIEWS_PER_BUYER;
        let cdn = views * USD_PER_10K_CLOUDFRONT_REQUESTS / 10_000.0
            + views * self.map_gzip_bytes as f64 / 1e9 * USD_PER_GB_CLOUDFRONT_OUT;
        let _ = writeln!(
            out,
            "Seat-map views through CloudFront, assuming {MAP_VIEWS_PER_BUYER:.0} views per buyer ({buyers_per_thousand:.0} buyers per 1,000 seats sold in this run, {} bytes gzip each): **${cdn:.4}** per 1,000 seats sold ($0.0100 per 10,000 HTTPS requests, $0.085 per GB).\n",
            self.map_gzip_bytes
        );
        let _ = writeln!(
            out,
            "Creating the event once adds {:.0} write units (${:.4}) per 100,000 seats. Prices: DynamoDB on-demand $0.625 per million write units and $0.125 per million read units (since November 2024); Lambda arm64 $0.0000133334 per GB-s and $0.20 per million requests; HTTP API $1.00 per million requests (aws.amazon.com/dynamodb/pricing, /lambda/pricing, /api-gateway/pricing).\n",
            self.creation_write_units, self.creation_write_units * USD_PER_MILLION_WRITE_UNITS / 1e6
        );
        let _ = writeln!(out, "## Limits this design still has\n");
        let _ = writeln!(
            out,
            "- A single seat is one item: a partition serves one item at most 1,000 write units/s, so a few hundred buyers a second clicking the *same* seat are refused (409) at DynamoDB's pace. Blocks of ten seats bound a front row's block, not a seat.\n\
             - The ceiling scales with the demand model's skew: a plan whose best row is far hotter than Zipf(1.0) over 50 sections puts more on its first blocks.\n\
             - Event creation writes one conditional put per seat: create-event answers 202 after {:.0} s and the next minute's sweep finishes it, so announce on-sales after the event reads READY. A resumed creation starts from the last checkpoint (every 2,000 seats), re-putting at most that many.\n\
             - The pending index's {} shards carry {:.1} index writes per claim attempt, {:.0}/s per shard at the crowd's average rate.\n\
             - list-seats reads one block per 10 seats (100 queries per 1,000-seat page, strongly consistent): a client view, not a map for a million buyers; that is the availability route's job.\n",
            f64::from(shared::config::DEFAULT_CREATE_EVENT_BUDGET_MS) / 1000.0,
            shared::store::PENDING_SHARDS,
            self.index_write_units / attempts,
            self.index_write_units / attempts * rate / f64::from(shared::store::PENDING_SHARDS)
        );
        out
    }
}
