//! SCALE.md's limits: the quotas and per-key limits a crowd meets, in the
//! order it meets them, what to ask AWS for, and the route limits the
//! template should carry (held to them by this file's test).

use std::fmt::Write as _;

use super::crowd_projection::{CrowdProjection, PEAK_OVER_AVERAGE};
use super::onsale_run::TARGET_CLAIMS_PER_SECOND;
use super::scale_model::{key_label, FunctionAtPeak, MAP_VIEWS_PER_BUYER, NEW_TABLE_WRITE_UNITS};
use super::scale_queue::QueueAtScale;
use crate::capacity::{PARTITION_READ_UNITS, PARTITION_WRITE_UNITS};
use crate::kit::round_up_2sf;

/// Default quotas (AWS service quotas pages, checked 2026-11).
pub(super) const API_GATEWAY_ACCOUNT_RPS: f64 = 10_000.0;
pub(super) const LAMBDA_ACCOUNT_CONCURRENCY: f64 = 1_000.0;
/// Lambda adds at most this many instances per function every 10 s.
const LAMBDA_SCALING_PER_10_S: f64 = 1_000.0;
pub(super) const CLOUDFRONT_DISTRIBUTION_RPS: f64 = 250_000.0;
/// DynamoDB Streams: more than two readers of a shard at once throttle.
const STREAM_READERS_PER_SHARD: f64 = 2.0;

/// The on-sale's routes with a limit of their own: the function, its
/// template parameter.
pub const ROUTE_LIMITS: &[(&str, &str)] = &[
    ("create-order", "CreateOrderRouteRateLimit"),
    ("get-seat", "GetSeatRouteRateLimit"),
    ("hold-ga", "HoldGaRouteRateLimit"),
    ("confirm", "ConfirmRouteRateLimit"),
    ("best-available", "BestAvailableRouteRateLimit"),
];

/// The queue's routes with a limit of their own. Their limit's job is not
/// to pace the crowd (the queue does) but to stop it before a key fills:
/// each default lies between the crowd's peak and the route's ceiling.
pub const QUEUE_ROUTE_LIMITS: &[(&str, &str)] = &[
    ("join-queue", "JoinQueueRouteRateLimit"),
    ("visitor-status", "VisitorStatusRouteRateLimit"),
];

/// A queue route's peak and ceiling (requests/s).
fn queue_route(queue: &QueueAtScale, function: &str) -> (f64, f64) {
    if function == "join-queue" {
        (queue.joins_peak_per_s, queue.join_ceiling.per_s)
    } else {
        (queue.polls_peak_per_s, queue.status_ceiling.per_s)
    }
}

/// A template parameter's default, if it has one.
pub(super) fn parameter_default(doc: &serde_yaml_ng::Value, name: &str) -> Option<f64> {
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

const TABLE_WRITE_QUOTA: &str = "DynamoDB: per-table on-demand quota, write units/s";
const TABLE_READ_QUOTA: &str = "DynamoDB: per-table on-demand quota, read units/s";

/// One limit, what the crowd asks of it at its peak, and what to do.
pub(super) struct Limit {
    name: String,
    need: f64,
    limit: f64,
    unit: &'static str,
    /// What the design's target rate of claim attempts asks of it, where
    /// that sizes a request to AWS beyond the peak (0 elsewhere).
    at_target: f64,
    act: String,
}

impl Limit {
    /// What to ask AWS for: the peak's need, or the target's where more,
    /// rounded up.
    fn request(&self) -> f64 {
        round_up_2sf(self.need.max(self.at_target))
    }

    /// Where [`Limit::request`] comes from.
    fn request_why(&self) -> String {
        if self.at_target > self.need {
            format!(
                "the design's {TARGET_CLAIMS_PER_SECOND:.0} claim attempts/s ask {:.0} with room for the table's partitions (docs/BENCHMARKS.md, the on-sale at its target), more than the peak's {:.0}; rounded up",
                self.at_target, self.need
            )
        } else {
            format!("the peak's {:.0}, rounded up", self.need)
        }
    }
}

/// Every limit the crowd meets at its peak, the most used first;
/// `asked` the per-table quotas the on-sale's replay at the target found
/// it needs (write, read units/s), where it ran.
pub(super) fn limits(
    crowd: &CrowdProjection,
    functions: &[FunctionAtPeak],
    queue: Option<&QueueAtScale>,
    doc: &serde_yaml_ng::Value,
    asked: Option<(f64, f64)>,
) -> Vec<Limit> {
    let mut limits = request_limits(crowd, functions, queue);
    limits.extend(capacity_limits(crowd, queue, doc, asked));
    limits.extend(key_limits(crowd, queue));
    limits.extend(route_limits(functions, queue, doc));
    limits.sort_by(|a, b| (b.need / b.limit.max(1e-9)).total_cmp(&(a.need / a.limit.max(1e-9))));
    limits
}

/// A ten-minute average rate scaled up to the peak minute.
fn peak(x: f64) -> f64 {
    x * PEAK_OVER_AVERAGE
}

/// The account's request and instance quotas: API Gateway's requests/s,
/// Lambda's concurrency, and how fast Lambda adds instances.
fn request_limits(
    crowd: &CrowdProjection,
    functions: &[FunctionAtPeak],
    queue: Option<&QueueAtScale>,
) -> Vec<Limit> {
    let api_rps = crowd
        .phases
        .iter()
        .map(|p| p.requests_per_s.values().sum::<f64>())
        .fold(0.0, f64::max);
    let queue_rps = queue.map_or(0.0, |q| q.joins_peak_per_s + q.polls_peak_per_s);
    let concurrency: f64 = functions
        .iter()
        .map(|f| f.peak_rps * f.real_ms() / 1000.0)
        .sum::<f64>()
        + queue.map_or(0.0, QueueAtScale::concurrency);
    let busiest = functions
        .iter()
        .map(|f| (f.name, f.peak_rps * f.real_ms() / 1000.0))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap_or(("—", 0.0));
    vec![
        Limit {
            name: "API Gateway: requests/s per account and Region, all APIs (the buyers' and the queue's)".into(),
            need: peak(api_rps) + queue_rps,
            limit: API_GATEWAY_ACCOUNT_RPS,
            unit: "requests/s",
            at_target: 0.0,
            act: "ask AWS to raise the account's API Gateway throttle quota".into(),
        },
        Limit {
            name: "Lambda: concurrent executions per account".into(),
            need: concurrency,
            limit: LAMBDA_ACCOUNT_CONCURRENCY,
            unit: "executions",
            at_target: 0.0,
            act: "ask AWS to raise the concurrency quota (Lambda keeps 100 unreserved)".into(),
        },
        Limit {
            name: format!("Lambda: new instances per function per 10 s ({})", busiest.0),
            need: busiest.1,
            limit: LAMBDA_SCALING_PER_10_S,
            unit: "instances",
            at_target: 0.0,
            act: "not a quota: put the on-sale queue in front (it admits at the operator's pace) or pre-warm with provisioned concurrency".into(),
        },
    ]
}

/// The table's warm write throughput and its per-table quotas,
/// CloudFront's requests/s, and the stream's readers per shard.
fn capacity_limits(
    crowd: &CrowdProjection,
    queue: Option<&QueueAtScale>,
    doc: &serde_yaml_ng::Value,
    asked: Option<(f64, f64)>,
) -> Vec<Limit> {
    let busiest = |units: fn(&super::crowd_projection::PhaseFigures) -> f64| {
        crowd.phases.iter().map(units).fold(0.0, f64::max)
    };
    // The table and each index have their own warm throughput and quota:
    // the one nearest its own binds.
    let (table_writes, table_reads) = (
        busiest(|p| p.quota_units_per_s.0),
        busiest(|p| p.quota_units_per_s.1),
    );
    let (target_writes, target_reads) = asked.unwrap_or_else(|| units_at_target(crowd));
    let api_rps = busiest(|p| p.requests_per_s.values().sum::<f64>());
    let queue_rps = queue.map_or(0.0, |q| q.joins_peak_per_s + q.polls_peak_per_s);
    let quota = crowdcheck::capacity::meter::Limits::DYNAMODB;
    vec![
        Limit {
            name: "DynamoDB: the table's warm write throughput (new on-demand table)".into(),
            need: peak(table_writes),
            limit: NEW_TABLE_WRITE_UNITS,
            unit: "write units/s",
            at_target: 0.0,
            act: "set `TableWarmWriteUnitsPerSecond` a day ahead".into(),
        },
        Limit {
            name: TABLE_WRITE_QUOTA.into(),
            need: peak(table_writes),
            limit: quota.table_write_quota,
            unit: "write units/s",
            at_target: target_writes,
            act: "ask AWS to raise the table's on-demand throughput quota".into(),
        },
        Limit {
            name: TABLE_READ_QUOTA.into(),
            need: peak(table_reads),
            limit: quota.table_read_quota,
            unit: "read units/s",
            at_target: target_reads,
            act: "ask AWS to raise the table's on-demand throughput quota".into(),
        },
        Limit {
            name: "CloudFront: requests/s per distribution, with `EnableCloudFront` (every API request and seat-map view then passes it)".into(),
            need: peak(api_rps + MAP_VIEWS_PER_BUYER * crowd.buyers_per_s) + queue_rps,
            limit: CLOUDFRONT_DISTRIBUTION_RPS,
            unit: "requests/s",
            at_target: 0.0,
            act: "ask AWS for a higher per-distribution request rate".into(),
        },
        Limit {
            name: "DynamoDB Streams: readers per shard (the stream's functions)".into(),
            need: stream_readers(doc) as f64,
            limit: STREAM_READERS_PER_SHARD,
            unit: "readers",
            at_target: 0.0,
            act: "no third stream consumer: fan out from EventBridge instead".into(),
        },
    ]
}

/// Write and read units a second on the table or index nearest its quota
/// at the design's target rate of claim attempts: each phase's recorded
/// units per attempt, the dearer phase's.
fn units_at_target(crowd: &CrowdProjection) -> (f64, f64) {
    let per_attempt = |units: fn(&super::crowd_projection::PhaseFigures) -> f64| {
        crowd
            .phases
            .iter()
            .map(|p| units(p) / p.attempts_per_s.max(1e-9))
            .fold(0.0, f64::max)
    };
    (
        TARGET_CLAIMS_PER_SECOND * per_attempt(|p| p.quota_units_per_s.0),
        TARGET_CLAIMS_PER_SECOND * per_attempt(|p| p.quota_units_per_s.1),
    )
}

/// What the crowd's peak minute or the design's target asks of the
/// per-table quotas (write, read units/s, the table and each index
/// apart), whichever is more, rounded up; the default where that is
/// enough. The on-sale's replay at the target starts from these and adds
/// the room its partitions need: that is what docs/SCALE.md asks for.
pub(crate) fn table_quotas_needed(crowd: &CrowdProjection) -> (f64, f64) {
    let limits = capacity_limits(crowd, None, &serde_yaml_ng::Value::Null, None);
    let ask = |name: &str| {
        limits
            .iter()
            .find(|l| l.name == name)
            .map_or(0.0, |l| l.request().max(l.limit))
    };
    (ask(TABLE_WRITE_QUOTA), ask(TABLE_READ_QUOTA))
}

/// The per-key limits: the crowd's hottest keys for writes and for reads,
/// then the queue's hottest keys.
fn key_limits(crowd: &CrowdProjection, queue: Option<&QueueAtScale>) -> Vec<Limit> {
    let mut limits = Vec::new();
    let (hot_write, hot_read) = crowd.hottest(false);
    if let Some(k) = hot_write {
        limits.push(Limit {
            name: format!("DynamoDB: one key's write units/s ({})", key_label(k)),
            need: peak(k.write_units),
            limit: PARTITION_WRITE_UNITS,
            unit: "write units/s",
            at_target: 0.0,
            act: "a key layout change; no quota raises it".into(),
        });
    }
    if let Some(k) = hot_read {
        limits.push(Limit {
            name: format!("DynamoDB: one key's read units/s ({})", key_label(k)),
            need: peak(k.read_units),
            limit: PARTITION_READ_UNITS,
            unit: "read units/s",
            at_target: 0.0,
            act: "a key layout change; no quota raises it".into(),
        });
    }
    if let Some(q) = queue {
        for (under, ceiling, units) in q.hottest_keys() {
            let (limit, unit) = if ceiling.reads {
                (PARTITION_READ_UNITS, "read units/s")
            } else {
                (PARTITION_WRITE_UNITS, "write units/s")
            };
            limits.push(Limit {
                name: format!(
                    "DynamoDB: the queue's hottest key under {under} (`{}`)",
                    ceiling.hottest
                ),
                need: units,
                limit,
                unit,
                at_target: 0.0,
                act: "a key layout change; no quota raises it".into(),
            });
        }
    }
    limits
}

/// The route throttles: each limited route's peak against its template
/// parameter's default (or the API's default), the on-sale's routes first.
fn route_limits(
    functions: &[FunctionAtPeak],
    queue: Option<&QueueAtScale>,
    doc: &serde_yaml_ng::Value,
) -> Vec<Limit> {
    let queue_routes = queue.into_iter().flat_map(|q| {
        QUEUE_ROUTE_LIMITS
            .iter()
            .map(move |(function, parameter)| (*function, *parameter, queue_route(q, function).0))
    });
    let routes = ROUTE_LIMITS.iter().map(|(function, parameter)| {
        let need = functions
            .iter()
            .find(|f| f.name == *function)
            .map_or(0.0, |f| f.peak_rps);
        (*function, *parameter, need)
    });
    routes
        .chain(queue_routes)
        .map(|(function, parameter, need)| {
            let limit = parameter_default(doc, parameter)
                .or_else(|| parameter_default(doc, "ApiThrottleRateLimit"))
                .unwrap_or(0.0);
            Limit {
                name: format!("API Gateway route throttle: {function} (`{parameter}`)"),
                need,
                limit,
                unit: "requests/s",
                at_target: 0.0,
                act: "a template parameter: see the recommended limits".into(),
            }
        })
        .collect()
}

pub(super) fn limits_section(out: &mut String, limits: &[Limit]) {
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
        .filter(|l| l.request() > l.limit && l.act.starts_with("ask AWS"))
        .collect();
    for l in &asks {
        let _ = writeln!(
            out,
            "- {}: at least **{:.0} {}** ({}): {}.",
            l.name,
            l.request(),
            l.unit,
            l.request_why(),
            l.act
        );
    }
    if asks.is_empty() {
        let _ = writeln!(out, "- Nothing above its default at this crowd.");
    }
    let _ = writeln!(out, "- Set by the template, not by AWS: the route limits below, `TableWarmWriteUnitsPerSecond`, confirm's reserved concurrency. docs/OPERATIONS.md walks the requests.\n");
}

pub(super) fn route_limits_section(
    out: &mut String,
    functions: &[FunctionAtPeak],
    queue: Option<&QueueAtScale>,
    doc: &serde_yaml_ng::Value,
) {
    let _ = writeln!(out, "## Recommended route limits\n");
    let _ = writeln!(out, "Each route's peak (its busiest phase × {PEAK_OVER_AVERAGE:.0}), rounded up to two significant figures. The template's defaults are held to these by the test in `bench/src/scale_limits.rs` (each default at least the recommendation and at most twice it, a queue route's at most its ceiling; confirm's reservation at least its need):\n");
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
    for (function, parameter) in QUEUE_ROUTE_LIMITS {
        let Some((need, ceiling)) = queue.map(|q| queue_route(q, function)) else {
            continue;
        };
        let _ = writeln!(
            out,
            "- recommended `{parameter}`: {:.0} requests/s ({function} peaks at {need:.0}/s; template default {}); at most {:.0}, where its first key fills ([QUEUE.md](QUEUE.md)): the queue paces the crowd, this limit only keeps it off a full key",
            round_up_2sf(need),
            parameter_default(doc, parameter).map_or("none".into(), |d| format!("{d:.0}")),
            ceiling.floor(),
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

#[cfg(test)]
mod tests {
    use super::super::scale_model::template;
    use super::*;
    use std::collections::BTreeMap;

    fn scale_text() -> String {
        std::fs::read_to_string(local::repo_root().join("docs/SCALE.md")).unwrap_or_default()
    }

    /// The numbers docs/SCALE.md prints after `prefix` on its lines.
    fn scale_figures(prefix: &str) -> Vec<(String, f64)> {
        scale_text()
            .lines()
            .filter_map(|line| line.strip_prefix(prefix))
            .filter_map(|rest| {
                let (name, rest) = rest.split_once('`')?;
                let number: String = rest
                    .trim_start_matches([':', ' ', '*'])
                    .chars()
                    .take_while(|c| c.is_ascii_digit())
                    .collect();
                Some((name.to_owned(), number.parse().ok()?))
            })
            .collect()
    }

    #[test]
    fn the_templates_route_limits_are_the_ones_scale_md_recommends() {
        let doc = template();
        let recommended: BTreeMap<String, f64> =
            scale_figures("- recommended `").into_iter().collect();
        let routes = doc["Resources"]["SeatclaimApi"]["Properties"]["RouteSettings"].clone();
        let routed = |parameter: &str| {
            routes.as_mapping().into_iter().flatten().any(|(_, r)| {
                match &r["ThrottlingRateLimit"] {
                    serde_yaml_ng::Value::Tagged(t) => {
                        t.tag == "Ref" && t.value.as_str() == Some(parameter)
                    }
                    other => other["Ref"].as_str() == Some(parameter),
                }
            })
        };
        // The buyers' routes: at least their peak, at most twice it. The
        // queue's: at least their peak, at most where a key fills.
        let ceilings: BTreeMap<String, f64> = scale_text()
            .lines()
            .filter_map(|line| {
                let (name, rest) = line.strip_prefix("- recommended `")?.split_once('`')?;
                let (_, ceiling) = rest.split_once("; at most ")?;
                let digits: String = ceiling.chars().take_while(char::is_ascii_digit).collect();
                Some((name.to_owned(), digits.parse().ok()?))
            })
            .collect();
        let all = ROUTE_LIMITS.iter().chain(QUEUE_ROUTE_LIMITS);
        for (function, parameter) in all {
            let want = recommended
                .get(*parameter)
                .unwrap_or_else(|| panic!("docs/SCALE.md recommends no {parameter} ({function})"));
            let default = parameter_default(&doc, parameter)
                .unwrap_or_else(|| panic!("template.yaml has no default for {parameter}"));
            let most = if QUEUE_ROUTE_LIMITS.iter().any(|(f, _)| f == function) {
                *ceilings
                    .get(*parameter)
                    .unwrap_or_else(|| panic!("docs/SCALE.md gives no ceiling for {parameter}"))
            } else {
                2.0 * want
            };
            assert!(
                *want <= default && default <= most,
                "{parameter}: template default {default}, docs/SCALE.md recommends {want} to {most}"
            );
            assert!(
                routed(parameter),
                "no route of SeatclaimApi is limited by {parameter}"
            );
        }
        let need = scale_text()
            .split_once("confirm needs **")
            .and_then(|(_, rest)| rest.split_whitespace().next()?.parse::<f64>().ok())
            .unwrap_or_else(|| panic!("docs/SCALE.md states no concurrency confirm needs"));
        let reserved = parameter_default(&doc, "ConfirmReservedConcurrency").unwrap_or(0.0);
        assert!(
            reserved >= need,
            "confirm reserves {reserved}, needs {need}"
        );
    }

    #[test]
    fn the_table_quotas_asked_for_cover_the_crowds_peak_or_the_target_whichever_asks_more() {
        // 1,000 attempts/s at 10 write units and 1 read unit each: the
        // peak minute asks 40,000 and 4,000; the target 200,000 and 20,000.
        let phase = |writes: f64| super::super::crowd_projection::PhaseFigures {
            attempts_per_s: 1_000.0,
            quota_units_per_s: (writes, 1_000.0),
            ..Default::default()
        };
        let crowd = CrowdProjection {
            phases: vec![phase(10_000.0), phase(2_000.0)],
            ..Default::default()
        };
        // Writes: the target's, rounded up; reads: the default is enough.
        assert_eq!(table_quotas_needed(&crowd), (200_000.0, 40_000.0));
        let null = serde_yaml_ng::Value::Null;
        let mut text = String::new();
        limits_section(&mut text, &capacity_limits(&crowd, None, &null, None));
        assert!(
            text.contains("write units/s: at least **200000 write units/s** (the design's 20000 claim attempts/s ask 200000 with room for the table's partitions (docs/BENCHMARKS.md, the on-sale at its target), more than the peak's 40000; rounded up)"),
            "{text}"
        );
        assert!(!text.contains("read units/s: at least"), "{text}");
        // What the replay at the target found it needs is what is asked.
        let mut text = String::new();
        let asked = Some((260_000.0, 40_000.0));
        limits_section(&mut text, &capacity_limits(&crowd, None, &null, asked));
        assert!(text.contains("at least **260000 write units/s**"), "{text}");
        // A peak hotter than the target sizes the ask: 50,000 attempts/s.
        let crowd = CrowdProjection {
            phases: vec![super::super::crowd_projection::PhaseFigures {
                attempts_per_s: 50_000.0,
                quota_units_per_s: (500_000.0, 1_000.0),
                ..Default::default()
            }],
            ..Default::default()
        };
        assert_eq!(table_quotas_needed(&crowd).0, 2_000_000.0);
    }

    #[test]
    fn the_stream_has_the_templates_two_readers() {
        assert_eq!(stream_readers(&template()), 2);
    }
}
