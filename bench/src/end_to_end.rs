//! Ceilings end to end: a route's requests a second are bound by whatever
//! binds first, not by its hottest DynamoDB key alone. Each binding is
//! named with its number and its source; the ceiling is their minimum.

use std::fmt::Write as _;

use super::scale_limits::{
    API_GATEWAY_ACCOUNT_RPS, CLOUDFRONT_DISTRIBUTION_RPS, LAMBDA_ACCOUNT_CONCURRENCY,
};
use super::scale_model::AWS_REQUEST_MS;
use local::capacity::meter::Limits;

/// One thing that bounds a route's requests a second.
#[derive(Debug, Clone, PartialEq)]
pub struct Binding {
    pub what: String,
    pub per_s: f64,
    /// Measured, modelled, a quota or a template default, and where from.
    pub source: String,
}

/// What one request of a route costs, as the run recorded it.
#[derive(Debug, Clone, Copy, Default)]
pub struct RouteCost {
    pub write_units: f64,
    pub read_units: f64,
    pub round_trips: f64,
}

/// Every binding of a route whose hottest key fills at `key_ceiling`
/// requests/s, whose route throttle is `route_limit` (None: the route has
/// none), each request costing `cost`.
pub fn bindings(
    key_ceiling: f64,
    route_limit: Option<(&str, f64)>,
    cost: RouteCost,
) -> Vec<Binding> {
    let quota = Limits::DYNAMODB;
    let duration_s = cost.round_trips * AWS_REQUEST_MS / 1_000.0;
    let mut out = vec![Binding {
        what: "DynamoDB key ceiling (its hottest key at a partition's limit)".into(),
        per_s: key_ceiling,
        source: "modelled from the run's recorded requests and item sizes".into(),
    }];
    let table_ceiling = [
        (cost.write_units, quota.table_write_quota),
        (cost.read_units, quota.table_read_quota),
    ]
    .iter()
    .filter(|(units, _)| *units > 0.0)
    .map(|(units, quota)| quota / units)
    .fold(f64::INFINITY, f64::min);
    if table_ceiling.is_finite() {
        out.push(Binding {
            what: "DynamoDB per-table on-demand quota (40,000 write and 40,000 read units/s)"
                .into(),
            per_s: table_ceiling,
            source:
                "a default quota (local::capacity::meter::Limits) over the run's units per request"
                    .into(),
        });
    }
    if duration_s > 0.0 {
        out.push(Binding {
            what: format!(
                "Lambda concurrency ({LAMBDA_ACCOUNT_CONCURRENCY:.0} per account) at {:.0} ms a request",
                duration_s * 1_000.0
            ),
            per_s: LAMBDA_ACCOUNT_CONCURRENCY / duration_s,
            source: format!(
                "a default quota; the duration modelled: the run's {:.2} round trips at {AWS_REQUEST_MS:.0} ms (assumed)",
                cost.round_trips
            ),
        });
    }
    if let Some((parameter, limit)) = route_limit {
        out.push(Binding {
            what: format!("the route's throttle (`{parameter}`)"),
            per_s: limit,
            source: "template.yaml's default".into(),
        });
    }
    out.push(Binding {
        what: "API Gateway requests/s per account and Region".into(),
        per_s: API_GATEWAY_ACCOUNT_RPS,
        source: "a default quota, shared with every other route".into(),
    });
    out.push(Binding {
        what: "CloudFront requests/s per distribution (all API traffic passes it)".into(),
        per_s: CLOUDFRONT_DISTRIBUTION_RPS,
        source: "a default quota, shared with every other route".into(),
    });
    out
}

/// The binding that binds first.
pub fn ceiling(bindings: &[Binding]) -> Option<&Binding> {
    bindings.iter().min_by(|a, b| a.per_s.total_cmp(&b.per_s))
}

/// A route's end-to-end ceiling as a markdown paragraph and list.
pub fn markdown(route: &str, unit: &str, bindings: &[Binding]) -> String {
    let mut out = String::new();
    if let Some(first) = ceiling(bindings) {
        let _ = writeln!(
            out,
            "**{route}, end to end: {:.0} {unit}**, bound by {}. Everything that binds it:\n",
            first.per_s, first.what
        );
    }
    for b in bindings {
        let _ = writeln!(out, "- {}: {:.0} {unit} ({})", b.what, b.per_s, b.source);
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ceiling_is_whatever_binds_first_and_every_binding_is_named() {
        let cost = RouteCost {
            write_units: 2.0,
            read_units: 0.5,
            round_trips: 2.0,
        };
        let all = bindings(
            2_400_000.0,
            Some(("VisitorStatusRouteRateLimit", 50_000.0)),
            cost,
        );
        let named: Vec<(&str, f64)> = all.iter().map(|b| (b.what.as_str(), b.per_s)).collect();
        // 40,000 / 2 write units; 1,000 instances / 20 ms; the route; the
        // account; CloudFront.
        assert!(named.contains(&(
            "DynamoDB per-table on-demand quota (40,000 write and 40,000 read units/s)",
            20_000.0
        )));
        assert!(named
            .iter()
            .any(|(what, per_s)| what.starts_with("Lambda concurrency")
                && (*per_s - 50_000.0).abs() < 1e-6));
        assert!(named.contains(&(
            "the route's throttle (`VisitorStatusRouteRateLimit`)",
            50_000.0
        )));
        let first = ceiling(&all).unwrap();
        assert_eq!(first.what, "API Gateway requests/s per account and Region");
        assert_eq!(first.per_s, 10_000.0);
        let text = markdown("visitor-status", "polls/s", &all);
        assert!(text.starts_with("**visitor-status, end to end: 10000 polls/s**"));
    }

    #[test]
    fn a_route_without_writes_or_a_throttle_has_no_such_binding() {
        let cost = RouteCost {
            write_units: 0.0,
            read_units: 1.0,
            round_trips: 1.0,
        };
        let all = bindings(5.0, None, cost);
        assert!(!all.iter().any(|b| b.what.contains("throttle")));
        assert_eq!(ceiling(&all).unwrap().per_s, 5.0);
    }
}
