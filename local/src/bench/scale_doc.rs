//! docs/SCALE.md: a million buyers, four times oversubscribed, projected
//! from what one `make bench` run measured (crowd_projection), against the
//! limits that stop a crowd first, with what to ask AWS for, the route
//! limits the template should carry, and the cost per 1,000 seats and
//! places sold. Published limits and prices are inputs, written once here;
//! every quantity they meet was measured by the run.

use std::fmt::Write as _;

use super::crowd_projection::{
    self, CrowdProjection, CROWD_BUYERS, CROWD_SECONDS, OVERSUBSCRIBED, PEAK_OVER_AVERAGE,
};
use super::onsale::{OnSale, StreamCounts, PARTITION_READ_UNITS, PARTITION_WRITE_UNITS};
use crate::capacity::KeyLoad;

/// Published on-demand prices, us-east-1, checked 2026-11.
const USD_PER_MILLION_WRITE_UNITS: f64 = 0.625;
const USD_PER_MILLION_READ_UNITS: f64 = 0.125;
const USD_PER_MILLION_LAMBDA_REQUESTS: f64 = 0.20;
const USD_PER_LAMBDA_GB_SECOND_ARM: f64 = 0.000_013_333_4;
const USD_PER_MILLION_HTTP_API_REQUESTS: f64 = 1.00;
const USD_PER_MILLION_EVENTBRIDGE_EVENTS: f64 = 1.00;
const USD_PER_GB_CLOUDWATCH_LOGS: f64 = 0.50;
const USD_PER_10K_CLOUDFRONT_REQUESTS: f64 = 0.0100;
const USD_PER_GB_CLOUDFRONT_OUT: f64 = 0.085;

/// Default quotas (AWS service quotas pages, checked 2026-11).
const API_GATEWAY_ACCOUNT_RPS: f64 = 10_000.0;
const LAMBDA_ACCOUNT_CONCURRENCY: f64 = 1_000.0;
/// Lambda adds at most this many instances per function every 10 s.
const LAMBDA_SCALING_PER_10_S: f64 = 1_000.0;
const CLOUDFRONT_DISTRIBUTION_RPS: f64 = 250_000.0;
/// DynamoDB Streams: more than two readers of a shard at once throttle.
const STREAM_READERS_PER_SHARD: f64 = 2.0;
/// A new on-demand table's own throughput (developer guide, "warm
/// throughput").
pub(super) const NEW_TABLE_WRITE_UNITS: f64 = 4_000.0;
/// CloudFront's points of presence (AWS publishes "600+").
const CLOUDFRONT_EDGE_LOCATIONS: f64 = 600.0;

/// Assumptions, stated as such where they are used.
/// A DynamoDB (or EventBridge) request's latency on AWS.
pub(super) const AWS_REQUEST_MS: f64 = 10.0;
/// Seat-map views per buyer.
const MAP_VIEWS_PER_BUYER: f64 = 10.0;
/// Log bytes per invocation: Lambda's START, END and REPORT lines and one
/// EMF metrics document.
const LOG_BYTES_PER_INVOCATION: f64 = 1_000.0;

/// The on-sale's routes with a limit of their own: the function, its
/// template parameter.
pub const ROUTE_LIMITS: &[(&str, &str)] = &[
    ("create-order", "CreateOrderRouteRateLimit"),
    ("get-seat", "GetSeatRouteRateLimit"),
    ("hold-ga", "HoldGaRouteRateLimit"),
    ("confirm", "ConfirmRouteRateLimit"),
    ("best-available", "BestAvailableRouteRateLimit"),
];

pub(super) fn template() -> serde_yaml_ng::Value {
    let text =
        std::fs::read_to_string(crate::repo_root().join("template.yaml")).unwrap_or_default();
    serde_yaml_ng::from_str(&text).unwrap_or_default()
}

/// A template parameter's default, if it has one.
fn parameter_default(doc: &serde_yaml_ng::Value, name: &str) -> Option<f64> {
    doc["Parameters"][name]["Default"].as_f64()
}

/// Functions with a DynamoDB stream event source: the stream's readers.
fn stream_readers(doc: &serde_yaml_ng::Value) -> usize {
    doc["Resources"]
        .as_mapping()
        .into_iter()
        .flatten()
        .filter(|(_, r)| {
            r["Properties"]["Events"]
                .as_mapping()
                .into_iter()
                .flatten()
                .any(|(_, e)| e["Type"].as_str() == Some("DynamoDB"))
        })
        .count()
}

/// A function's stream BatchSize in template.yaml (the most records an
/// invocation takes); 100, the event source's default, if it has none.
fn batch_size(doc: &serde_yaml_ng::Value, function: &str) -> f64 {
    doc["Resources"][function]["Properties"]["Events"]
        .as_mapping()
        .into_iter()
        .flatten()
        .find_map(|(_, e)| e["Properties"]["BatchSize"].as_f64())
        .unwrap_or(100.0)
}

/// `x` rounded up to two significant figures (14,004 → 15,000).
pub fn round_up_2sf(x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    let step = 10f64.powi(x.log10().floor() as i32 - 1);
    (x / step).ceil() * step
}

/// One function at the crowd's peak.
struct FunctionAtPeak {
    name: &'static str,
    peak_rps: f64,
    requests_per_buyer: f64,
    round_trips: f64,
    emulator_ms: Option<f64>,
}

impl FunctionAtPeak {
    fn real_ms(&self) -> f64 {
        self.round_trips * AWS_REQUEST_MS
    }
}

fn functions_at_peak(run: &OnSale, crowd: &CrowdProjection) -> Vec<FunctionAtPeak> {
    let busiest = crowd.busiest_requests_per_s();
    crowd
        .requests_per_buyer
        .iter()
        .map(|(name, per_buyer)| FunctionAtPeak {
            name,
            peak_rps: busiest.get(name).copied().unwrap_or(0.0) * PEAK_OVER_AVERAGE,
            requests_per_buyer: *per_buyer,
            round_trips: crowd
                .round_trips_per_buyer
                .get(name)
                .copied()
                .unwrap_or(0.0)
                / per_buyer.max(1e-12),
            emulator_ms: run.functions.get(name).map(|(_, ms)| *ms),
        })
        .collect()
}

/// One limit, what the crowd asks of it at its peak, and what to do.
struct Limit {
    name: String,
    need: f64,
    limit: f64,
    unit: &'static str,
    act: String,
}

impl OnSale {
    /// docs/SCALE.md; `code` names the commit the run measured.
    pub fn scale_markdown(&self, code: &str) -> String {
        let mut out = String::new();
        let Some(m) = self.model else { return out };
        let crowd = crowd_projection::project(&crowd_projection::phases(self));
        let doc = template();
        let functions = functions_at_peak(self, &crowd);
        let _ = writeln!(out, "# seatclaim at stadium scale\n");
        let _ = writeln!(
            out,
            "Generated by `make bench` from its on-sale run on {code} (docs/BENCHMARKS.md, \"On-sale demand model\" and \"Sold out\"): every quantity below is measured by that run and scaled to the crowd, or is a published limit or price, or an assumption stated where it is used. \
             Assumptions: the peak minute carries **{PEAK_OVER_AVERAGE:.0}×** the ten-minute average; a DynamoDB or EventBridge request takes **{AWS_REQUEST_MS:.0} ms** on AWS; a buyer views the seat map {MAP_VIEWS_PER_BUYER:.0} times; an invocation logs {LOG_BYTES_PER_INVOCATION:.0} bytes.\n"
        );
        crowd_section(&mut out, self, &crowd, m.buyers);
        let limits = limits(&crowd, &functions, &doc);
        limits_section(&mut out, &limits);
        route_limits_section(&mut out, &functions, &doc);
        lambda_section(&mut out, &functions);
        keys_section(&mut out, &crowd);
        self.seat_map_section(&mut out);
        self.cost_section(&mut out, &crowd, &functions);
        self.design_limits_section(&mut out);
        out
    }
}

fn crowd_section(out: &mut String, run: &OnSale, crowd: &CrowdProjection, buyers: usize) {
    let _ = writeln!(out, "## The crowd\n");
    let _ = writeln!(
        out,
        "**{CROWD_BUYERS:.0} buyers in {:.0} minutes** ({:.0} buyers/s) on the contract's 100,000-seat event with its 20,000-place general-admission section, **{OVERSUBSCRIBED:.0} times oversubscribed**: the first {:.0}% arrive while something is left and behave as the run's {buyers} buyers did (the selling phase); the other {:.0}% arrive after the sell-out, each making an order and trying as often as a selling buyer did ({:.2} claim attempts), each try costing what the sold-out crowd's refusals cost (the sold-out phase, in the model's mix of get-seat, best-available and hold-ga). The phases follow each other: a key's load is one phase's, and the phase whose hottest key fills first sets the ceiling; throughput and cost weight the phases by their share of the buyers.\n",
        CROWD_SECONDS / 60.0,
        crowd.buyers_per_s,
        100.0 / OVERSUBSCRIBED,
        100.0 - 100.0 / OVERSUBSCRIBED,
        run.attempts as f64 / buyers.max(1) as f64,
    );
    let _ = writeln!(out, "| phase | share of buyers | claim attempts/s | write units/s | read units/s | requests/s (average) |\n|---|---:|---:|---:|---:|---|");
    for p in &crowd.phases {
        let requests: Vec<String> = p
            .requests_per_s
            .iter()
            .map(|(f, r)| format!("{f} {r:.0}"))
            .collect();
        let _ = writeln!(
            out,
            "| {} | {:.0}% | {:.0} | {:.0} | {:.0} | {} |",
            p.name,
            100.0 * p.share,
            p.attempts_per_s,
            p.write_units_per_s,
            p.read_units_per_s,
            requests.join(", ")
        );
    }
    let _ = writeln!(
        out,
        "\nWeighted over both phases a buyer costs **{:.2} write units and {:.2} read units**.\n\nprojected on-sale ceiling, both phases (new keys): {:.0} claim attempts/s; (old keys): {:.0}\n",
        crowd.write_units_per_buyer,
        crowd.read_units_per_buyer,
        crowd.ceiling(false),
        crowd.ceiling(true)
    );
}

fn limits(
    crowd: &CrowdProjection,
    functions: &[FunctionAtPeak],
    doc: &serde_yaml_ng::Value,
) -> Vec<Limit> {
    let peak = |x: f64| x * PEAK_OVER_AVERAGE;
    let api_rps = crowd
        .phases
        .iter()
        .map(|p| p.requests_per_s.values().sum::<f64>())
        .fold(0.0, f64::max);
    let concurrency: f64 = functions
        .iter()
        .map(|f| f.peak_rps * f.real_ms() / 1000.0)
        .sum();
    let busiest = functions
        .iter()
        .map(|f| (f.name, f.peak_rps * f.real_ms() / 1000.0))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap_or(("—", 0.0));
    let table_writes = crowd
        .phases
        .iter()
        .map(|p| p.write_units_per_s)
        .fold(0.0, f64::max);
    let (hot_write, hot_read) = crowd.hottest(false);
    let mut limits = vec![
        Limit {
            name: "API Gateway: requests/s per account and Region, all APIs".into(),
            need: peak(api_rps),
            limit: API_GATEWAY_ACCOUNT_RPS,
            unit: "requests/s",
            act: "ask AWS to raise the account's API Gateway throttle quota".into(),
        },
        Limit {
            name: "Lambda: concurrent executions per account".into(),
            need: concurrency,
            limit: LAMBDA_ACCOUNT_CONCURRENCY,
            unit: "executions",
            act: "ask AWS to raise the concurrency quota (Lambda keeps 100 unreserved)".into(),
        },
        Limit {
            name: format!("Lambda: new instances per function per 10 s ({})", busiest.0),
            need: busiest.1,
            limit: LAMBDA_SCALING_PER_10_S,
            unit: "instances",
            act: "not a quota: open the on-sale gradually (the queue, issue 19) or pre-warm with provisioned concurrency".into(),
        },
        Limit {
            name: "DynamoDB: the table's warm write throughput (new on-demand table)".into(),
            need: peak(table_writes),
            limit: NEW_TABLE_WRITE_UNITS,
            unit: "write units/s",
            act: "set `TableWarmWriteUnitsPerSecond` a day ahead".into(),
        },
        Limit {
            name: "CloudFront: requests/s per distribution (seat-map views)".into(),
            need: peak(MAP_VIEWS_PER_BUYER * crowd.buyers_per_s),
            limit: CLOUDFRONT_DISTRIBUTION_RPS,
            unit: "requests/s",
            act: "ask AWS for a higher per-distribution request rate".into(),
        },
        Limit {
            name: "DynamoDB Streams: readers per shard (the stream's functions)".into(),
            need: stream_readers(doc) as f64,
            limit: STREAM_READERS_PER_SHARD,
            unit: "readers",
            act: "no third stream consumer: fan out from EventBridge instead".into(),
        },
    ];
    if let Some(k) = hot_write {
        limits.push(Limit {
            name: format!("DynamoDB: one key's write units/s ({})", key_label(k)),
            need: peak(k.write_units),
            limit: PARTITION_WRITE_UNITS,
            unit: "write units/s",
            act: "a key layout change; no quota raises it".into(),
        });
    }
    if let Some(k) = hot_read {
        limits.push(Limit {
            name: format!("DynamoDB: one key's read units/s ({})", key_label(k)),
            need: peak(k.read_units),
            limit: PARTITION_READ_UNITS,
            unit: "read units/s",
            act: "a key layout change; no quota raises it".into(),
        });
    }
    for (function, parameter) in ROUTE_LIMITS {
        let need = functions
            .iter()
            .find(|f| f.name == *function)
            .map_or(0.0, |f| f.peak_rps);
        let limit = parameter_default(doc, parameter)
            .or_else(|| parameter_default(doc, "ApiThrottleRateLimit"))
            .unwrap_or(0.0);
        limits.push(Limit {
            name: format!("API Gateway route throttle: {function} (`{parameter}`)"),
            need,
            limit,
            unit: "requests/s",
            act: "a template parameter: see the recommended limits".into(),
        });
    }
    limits.sort_by(|a, b| (b.need / b.limit.max(1e-9)).total_cmp(&(a.need / a.limit.max(1e-9))));
    limits
}

fn limits_section(out: &mut String, limits: &[Limit]) {
    let _ = writeln!(out, "## What binds first\n");
    let _ = writeln!(out, "Each limit against what the crowd asks of it at its peak minute, most used first. Over 100% binds: the crowd meets it before the next.\n\n| limit | the crowd's peak | the limit (default) | used | what to do |\n|---|---:|---:|---:|---|");
    for l in limits {
        let _ = writeln!(
            out,
            "| {} | {:.0} {} | {:.0} | {}{:.0}%{} | {} |",
            l.name,
            l.need,
            l.unit,
            l.limit,
            if l.need > l.limit { "**" } else { "" },
            100.0 * l.need / l.limit.max(1e-9),
            if l.need > l.limit { "**" } else { "" },
            l.act
        );
    }
    let _ = writeln!(out, "\n### What to ask AWS for before an on-sale\n");
    let asks: Vec<&Limit> = limits
        .iter()
        .filter(|l| l.need > l.limit && l.act.starts_with("ask AWS"))
        .collect();
    for l in &asks {
        let _ = writeln!(
            out,
            "- {}: at least **{:.0} {}** (the peak's {:.0}, rounded up): {}.",
            l.name,
            round_up_2sf(l.need),
            l.unit,
            l.need,
            l.act
        );
    }
    if asks.is_empty() {
        let _ = writeln!(out, "- Nothing above its default at this crowd.");
    }
    let _ = writeln!(out, "- Set by the template, not by AWS: the route limits below, `TableWarmWriteUnitsPerSecond`, confirm's reserved concurrency. docs/OPERATIONS.md walks the requests.\n");
}

fn route_limits_section(
    out: &mut String,
    functions: &[FunctionAtPeak],
    doc: &serde_yaml_ng::Value,
) {
    let _ = writeln!(out, "## Recommended route limits\n");
    let _ = writeln!(out, "Each route's peak (its busiest phase × {PEAK_OVER_AVERAGE:.0}), rounded up to two significant figures. The template's defaults are held to these by the tests in `local/src/bench/scale_doc.rs` (each default at least the recommendation and at most twice it; confirm's reservation at least its need):\n");
    for (function, parameter) in ROUTE_LIMITS {
        let need = functions
            .iter()
            .find(|f| f.name == *function)
            .map_or(0.0, |f| f.peak_rps);
        let _ = writeln!(
            out,
            "- recommended `{parameter}`: {:.0} requests/s ({function} peaks at {need:.0}/s; template default {})",
            round_up_2sf(need),
            parameter_default(doc, parameter).map_or("none".into(), |d| format!("{d:.0}"))
        );
    }
    if let Some(confirm) = functions.iter().find(|f| f.name == "confirm") {
        let need = confirm.peak_rps * confirm.real_ms() / 1000.0;
        let _ = writeln!(
            out,
            "- confirm needs **{need:.0} concurrent executions** at its peak ({:.0}/s × {:.0} ms at real latency); `ConfirmReservedConcurrency` is {}, its ceiling as well as its reservation.\n",
            confirm.peak_rps,
            confirm.real_ms(),
            parameter_default(doc, "ConfirmReservedConcurrency").map_or("unset".into(), |d| format!("{d:.0}"))
        );
    }
}

fn lambda_section(out: &mut String, functions: &[FunctionAtPeak]) {
    let _ = writeln!(out, "## Lambda at real latency, beside the emulator\n");
    let _ = writeln!(out, "A function's time is almost all DynamoDB round trips, counted per function in the run. At real latency a request takes its round trips × {AWS_REQUEST_MS:.0} ms (an assumption); the emulator's measured means (DynamoDB Local under the run's load, on 2 shared cores) are shown beside it and are far slower. Concurrency by Little's law: requests/s × duration.\n\n| function | requests per buyer | peak requests/s | DynamoDB round trips per request (measured) | mean ms on DynamoDB Local (measured) | ms at real latency | concurrency at real latency | at emulator durations |\n|---|---:|---:|---:|---:|---:|---:|---:|");
    let (mut real, mut emulated) = (0.0, 0.0);
    for f in functions {
        let at_emulator = f.emulator_ms.map(|ms| f.peak_rps * ms / 1000.0);
        real += f.peak_rps * f.real_ms() / 1000.0;
        emulated += at_emulator.unwrap_or(0.0);
        let _ = writeln!(
            out,
            "| {} | {:.2} | {:.0} | {:.2} | {} | {:.0} | {:.0} | {} |",
            f.name,
            f.requests_per_buyer,
            f.peak_rps,
            f.round_trips,
            f.emulator_ms
                .map_or("— (sold-out phase only)".into(), |ms| format!("{ms:.1}")),
            f.real_ms(),
            f.peak_rps * f.real_ms() / 1000.0,
            at_emulator.map_or("—".into(), |c| format!("{c:.0}"))
        );
    }
    let _ = writeln!(out, "| **all** | | | | | | **{real:.0}** | {emulated:.0} |\n\nNot in the table: availability (behind CloudFront, about one origin request a second per event), the stream's two functions (priced below), expire-holds (one a minute).\n");
}

/// A key as the tables show it: an index's with the index's name.
fn key_label(k: &KeyLoad) -> String {
    match &k.target.index {
        Some(index) => format!("{index}: `{}`", k.target.pk),
        None => format!("`{}`", k.target.pk),
    }
}

fn keys_section(out: &mut String, crowd: &CrowdProjection) {
    let _ = writeln!(out, "## The hottest keys, table and index, per phase\n");
    let _ = writeln!(out, "At the crowd's average rate; the old layout is the same recorded traffic re-keyed (every seat on `EVENT#{{ref}}`, one counter per general-admission section, 8 index shards). A partition takes {PARTITION_WRITE_UNITS:.0} write and {PARTITION_READ_UNITS:.0} read units/s.\n\n| phase | layout | for | key | write units/s | read units/s | ceiling (claim attempts/s) |\n|---|---|---|---|---:|---:|---:|");
    for p in &crowd.phases {
        for l in [&p.new_keys, &p.old_keys] {
            for (label, keys) in [("writes", &l.hottest_writes), ("reads", &l.hottest_reads)] {
                for k in keys {
                    let key = key_label(k);
                    let _ = writeln!(
                        out,
                        "| {} | {} | {label} | {key} | {:.1} | {:.1} | {:.0} |",
                        p.name, l.layout, k.write_units, k.read_units, l.ceiling
                    );
                }
            }
        }
    }
    let _ = writeln!(out);
}

impl OnSale {
    fn seat_map_section(&self, out: &mut String) {
        let _ = writeln!(out, "## The seat map\n");
        let _ = writeln!(
            out,
            "`GET /events/{{id}}/availability` is {} bytes raw and **{} bytes gzip** for the 100,000-seat event, {:.1} read units per uncached request (measured), p50 {:.1} ms uncached. \
             Through CloudFront (`EnableCloudFront`) with the reply's `Cache-Control: public, max-age=1` and Origin Shield, the crowd costs the origin at most one request per second per cache key (gzip or not: 2), **{:.0} read units/s**. \
             Without Origin Shield each of ~{CLOUDFRONT_EDGE_LOCATIONS:.0} edge locations may ask once a second: up to {:.0} read units/s. Without a CDN, {MAP_VIEWS_PER_BUYER:.0} views per buyer at the peak would need {:.0} read units/s: the CDN is required, not optional.\n",
            self.map_bytes,
            self.map_gzip_bytes,
            self.map_read_units,
            self.map_latency.p50(),
            2.0 * self.map_read_units,
            CLOUDFRONT_EDGE_LOCATIONS * self.map_read_units,
            MAP_VIEWS_PER_BUYER * CROWD_BUYERS / CROWD_SECONDS * PEAK_OVER_AVERAGE * self.map_read_units
        );
    }

    fn cost_section(
        &self,
        out: &mut String,
        crowd: &CrowdProjection,
        functions: &[FunctionAtPeak],
    ) {
        let Some(m) = self.model else { return };
        let memory_gb = template()["Globals"]["Function"]["MemorySize"]
            .as_f64()
            .unwrap_or(256.0)
            / 1024.0;
        let buyers = m.buyers.max(1) as f64;
        let doc = template();
        // Per buyer, both phases weighted.
        let selling_share = 1.0 / OVERSUBSCRIBED;
        let refused_share = 1.0 - selling_share;
        let swept = self.swept_orders.max(1) as f64;
        // A refused buyer's order expires too: the sweep retires it (priced
        // as the run's expired orders, which also released holds: an upper
        // bound) and the stream carries it twice, made and expired (its
        // expiry changes the order item once more, like its creation).
        let (refused_stream, refused_orders) = self
            .sold_out
            .as_ref()
            .map_or((StreamCounts::default(), 1.0), |p| {
                (p.order_stream, p.orders.max(1) as f64)
            });
        let per_refused = |n: u64| refused_share * 2.0 * n as f64 / refused_orders;
        let per_selling = |n: u64| selling_share * n as f64 / buyers;
        let sweep_write = (selling_share * self.swept_orders as f64 / buyers + refused_share)
            * self.sweep_write_units
            / swept;
        let sweep_read = (selling_share * self.swept_orders as f64 / buyers + refused_share)
            * self.sweep_read_units
            / swept;
        let dynamodb = (crowd.write_units_per_buyer + sweep_write) * USD_PER_MILLION_WRITE_UNITS
            / 1e6
            + (crowd.read_units_per_buyer + sweep_read) * USD_PER_MILLION_READ_UNITS / 1e6;
        let invocations: f64 = functions.iter().map(|f| f.requests_per_buyer).sum();
        let gb_seconds: f64 = functions
            .iter()
            .map(|f| f.requests_per_buyer * f.real_ms().ceil() / 1000.0 * memory_gb)
            .sum();
        let lambda = invocations * USD_PER_MILLION_LAMBDA_REQUESTS / 1e6
            + gb_seconds * USD_PER_LAMBDA_GB_SECOND_ARM;
        let api = invocations * USD_PER_MILLION_HTTP_API_REQUESTS / 1e6;
        let events = per_selling(self.stream.events) + per_refused(refused_stream.events);
        let eventbridge = events * USD_PER_MILLION_EVENTBRIDGE_EVENTS / 1e6;
        // The stream's functions and the sweep: invocations at full batches
        // (the template's BatchSize), time in round trips (the projection's
        // and the sweep's, measured) and PutEvents calls.
        let put_events = events / shared::outbox::PUT_EVENTS_MAX_ENTRIES as f64;
        let projector_trips = per_selling(
            self.round_trips
                .get("project-seat-map")
                .copied()
                .unwrap_or(0),
        );
        let sweep_trips = (selling_share * self.swept_orders as f64 / buyers + refused_share)
            * self.round_trips.get("expire-holds").copied().unwrap_or(0) as f64
            / swept;
        let publish_records =
            per_selling(self.stream.publish_records) + per_refused(refused_stream.publish_records);
        let background_invocations = publish_records / batch_size(&doc, "PublishEventsFunction")
            + per_selling(self.stream.seat_map_records)
                / batch_size(&doc, "ProjectSeatMapFunction");
        let background_seconds =
            (projector_trips + sweep_trips + put_events) * AWS_REQUEST_MS / 1000.0;
        let background = background_invocations * USD_PER_MILLION_LAMBDA_REQUESTS / 1e6
            + background_seconds * memory_gb * USD_PER_LAMBDA_GB_SECOND_ARM;
        let logs = (invocations + background_invocations) * LOG_BYTES_PER_INVOCATION / 1e9
            * USD_PER_GB_CLOUDWATCH_LOGS;
        // What the crowd sells: the whole event, no more. The whole
        // crowd's cost is divided by it.
        let capacity = f64::from(m.sections * m.rows * m.seats_per_row + m.ga_capacity);
        let per_thousand = 1000.0 * CROWD_BUYERS / capacity.max(1.0);
        let selling_items = (self.sold_seats + self.sold_places) as f64 / buyers;
        let rows = [
            ("DynamoDB", format!("{:.2} write + {:.2} read units per buyer, both phases weighted, and the sweep's {sweep_write:.2} + {sweep_read:.2} (every refused buyer's order expires)", crowd.write_units_per_buyer, crowd.read_units_per_buyer), dynamodb),
            ("Lambda (arm64, API functions)", format!("{invocations:.2} invocations per buyer at real latency, {:.0} MB", memory_gb * 1024.0), lambda),
            ("API Gateway HTTP API", format!("{invocations:.2} requests per buyer"), api),
            ("EventBridge (publish-events)", format!("{events:.2} events per buyer: {} from the selling run's {} stream records, and a refused buyer's order made and expired ({:.1} events each)", self.stream.events, self.stream.records, 2.0 * refused_stream.events as f64 / refused_orders), eventbridge),
            ("Lambda (the stream's two functions, the sweep)", format!("{background_invocations:.3} invocations per buyer at full batches; {projector_trips:.2} projection and {sweep_trips:.2} sweep round trips and {put_events:.2} PutEvents calls per buyer"), background),
            ("CloudWatch Logs", format!("{LOG_BYTES_PER_INVOCATION:.0} bytes per invocation (assumed)"), logs),
        ];
        let _ = writeln!(
            out,
            "## Cost per 1,000 seats and places sold (on-demand, us-east-1)\n"
        );
        let _ = writeln!(
            out,
            "The crowd sells the whole event, {capacity:.0} seats and places, and no more: 1,000 sold carry the cost of {per_thousand:.0} buyers, refused ones included. \
             (The run's selling buyers got {selling_items:.2} each: {} seats and {} places for {} buyers. At that rate the first quarter of a million would want {:.0}, more than the event holds; the model's buyers are eagerer than four times oversubscribed, so the cost per buyer, weighted as above, is if anything high.)\n\n| service | what was measured | $ per 1,000 seats and places sold |\n|---|---|---:|",
            self.sold_seats,
            self.sold_places,
            m.buyers,
            selling_items * CROWD_BUYERS / OVERSUBSCRIBED
        );
        let mut total = 0.0;
        for (service, what, usd_per_buyer) in rows {
            total += usd_per_buyer * per_thousand;
            let _ = writeln!(
                out,
                "| {service} | {what} | {:.4} |",
                usd_per_buyer * per_thousand
            );
        }
        let _ = writeln!(out, "| **total** | | **{total:.4}** |\n");
        let views = per_thousand * MAP_VIEWS_PER_BUYER;
        let cdn = views * USD_PER_10K_CLOUDFRONT_REQUESTS / 10_000.0
            + views * self.map_gzip_bytes as f64 / 1e9 * USD_PER_GB_CLOUDFRONT_OUT;
        let _ = writeln!(
            out,
            "Seat-map views through CloudFront ({MAP_VIEWS_PER_BUYER:.0} per buyer, {} bytes gzip each): **${cdn:.4}** more per 1,000 sold. CloudWatch's custom metrics (EMF) bill per metric per month, not per request: not in the table. \
             Creating the event once adds {:.0} write units (${:.4}) per 100,000 seats. \
             Prices: DynamoDB on-demand ${USD_PER_MILLION_WRITE_UNITS} per million write units and ${USD_PER_MILLION_READ_UNITS} per million read units; Lambda arm64 ${USD_PER_LAMBDA_GB_SECOND_ARM} per GB-s and ${USD_PER_MILLION_LAMBDA_REQUESTS:.2} per million requests; HTTP API ${USD_PER_MILLION_HTTP_API_REQUESTS:.2} per million requests; EventBridge ${USD_PER_MILLION_EVENTBRIDGE_EVENTS:.2} per million custom events; CloudWatch Logs ${USD_PER_GB_CLOUDWATCH_LOGS:.2} per GB ingested; CloudFront ${USD_PER_10K_CLOUDFRONT_REQUESTS} per 10,000 HTTPS requests and ${USD_PER_GB_CLOUDFRONT_OUT} per GB (aws.amazon.com/dynamodb/pricing, /lambda/pricing, /api-gateway/pricing, /eventbridge/pricing, /cloudwatch/pricing, /cloudfront/pricing).\n",
            self.map_gzip_bytes,
            self.creation_write_units,
            self.creation_write_units * USD_PER_MILLION_WRITE_UNITS / 1e6
        );
    }

    fn design_limits_section(&self, out: &mut String) {
        let attempts = (self.attempts as f64).max(1.0);
        let rate = CROWD_BUYERS / CROWD_SECONDS * attempts
            / self.model.map_or(1, |m| m.buyers).max(1) as f64;
        let _ = writeln!(out, "## Limits this design still has\n");
        let _ = writeln!(
            out,
            "- A single seat is one item: a partition serves one item at most 1,000 write units/s. Within \"Under a crowd\" an instance answers a contended seat from memory, so about 166 instances can stampede one seat in its first second (docs/BENCHMARKS.md); more need the queue in front.\n\
             - The ceiling scales with the demand model's skew: a plan whose best row is far hotter than Zipf(1.0) over 50 sections puts more on its first blocks.\n\
             - Event creation writes one conditional put per seat: create-event answers 202 after {:.0} s and the next minute's sweep finishes it, so announce on-sales after the event reads READY.\n\
             - The pending index's {} shards carry {:.1} index writes per claim attempt, {:.0}/s per shard at the selling phase's average rate.\n\
             - list-seats reads one block per 10 seats: a client view, not a map for a million buyers; that is the availability route's job.\n",
            f64::from(shared::config::DEFAULT_CREATE_EVENT_BUDGET_MS) / 1000.0,
            shared::store::PENDING_SHARDS,
            self.index_write_units / attempts,
            self.index_write_units / attempts * rate / f64::from(shared::store::PENDING_SHARDS)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_round_up_to_two_significant_figures() {
        assert_eq!(round_up_2sf(14_004.0), 15_000.0);
        assert_eq!(round_up_2sf(14_000.0), 14_000.0);
        assert_eq!(round_up_2sf(1_077.0), 1_100.0);
        assert_eq!(round_up_2sf(76.2), 77.0);
        assert_eq!(round_up_2sf(0.0), 0.0);
    }

    #[test]
    fn the_stream_has_the_templates_two_readers() {
        let doc = template();
        assert_eq!(stream_readers(&doc), 2);
        assert_eq!(batch_size(&doc, "PublishEventsFunction"), 100.0);
        assert_eq!(batch_size(&doc, "ProjectSeatMapFunction"), 1000.0);
    }
}
