//! Ceilings end to end: a route's requests a second are bound by whatever
//! binds first, not by its hottest DynamoDB key alone. Each binding is
//! named with its number and its source; the ceiling is their minimum.

use std::fmt::Write as _;

use super::scale_limits::{
    API_GATEWAY_ACCOUNT_RPS, CLOUDFRONT_DISTRIBUTION_RPS, LAMBDA_ACCOUNT_CONCURRENCY,
};
use super::scale_model::AWS_REQUEST_MS;
use crowdcheck::capacity::meter::Limits;

/// One thing that bounds a route's requests a second.
#[derive(Debug, Clone, PartialEq)]
pub struct Binding {
    pub what: String,
    pub per_s: f64,
    /// Measured, modelled, a quota or a template default, and where from.
    pub source: String,
}

/// What one unit of a ceiling (a request of a route, a claim attempt of
/// the on-sale) costs, as the run recorded it.
#[derive(Debug, Clone, Copy, Default)]
pub struct RouteCost {
    /// Write and read units on the table or index nearest its quota
    /// (`crowdcheck::capacity::units_nearest_quota`: each has its own).
    pub quota_units: (f64, f64),
    /// DynamoDB round trips, summed over every function a unit calls.
    pub round_trips: f64,
    /// API requests a unit makes (1 for a route's own request).
    pub api_requests: f64,
}

/// A route's throttle: its template parameter, its default (requests/s),
/// and that route's requests per unit.
pub type Throttle<'a> = (&'a str, f64, f64);

/// Every binding of a ceiling whose hottest key fills at `key_ceiling`
/// units/s, under `throttles`, each unit costing `cost`.
pub fn bindings(key_ceiling: f64, throttles: &[Throttle<'_>], cost: RouteCost) -> Vec<Binding> {
    let mut out = vec![Binding {
        what: "DynamoDB key ceiling (its hottest key at a partition's limit)".into(),
        per_s: key_ceiling,
        source: "modelled from the run's recorded requests and item sizes".into(),
    }];
    out.extend(table_quota(cost));
    out.extend(lambda(cost));
    for &(parameter, limit, per_unit) in throttles.iter().filter(|t| t.2 > 0.0) {
        out.push(Binding {
            what: format!("a route's throttle (`{parameter}`)"),
            per_s: limit / per_unit,
            source: format!(
                "template.yaml's default, {limit:.0} requests/s, at {per_unit:.2} of that route's requests each"
            ),
        });
    }
    let requests = cost.api_requests.max(1e-9);
    out.push(Binding {
        what: "API Gateway requests/s per account and Region".into(),
        per_s: API_GATEWAY_ACCOUNT_RPS / requests,
        source: format!(
            "a default quota, {API_GATEWAY_ACCOUNT_RPS:.0} requests/s shared with every other route, at {:.2} API requests each",
            cost.api_requests
        ),
    });
    out.push(Binding {
        what: "CloudFront requests/s per distribution, with `EnableCloudFront` (default false)"
            .into(),
        per_s: CLOUDFRONT_DISTRIBUTION_RPS / requests,
        source: format!(
            "a default quota, {CLOUDFRONT_DISTRIBUTION_RPS:.0} requests/s, at {:.2} API requests each",
            cost.api_requests
        ),
    });
    out
}

/// The per-table on-demand quota over the units each costs.
fn table_quota(cost: RouteCost) -> Option<Binding> {
    let quota = Limits::DYNAMODB;
    let (write_units, read_units) = cost.quota_units;
    let per_s = [
        (write_units, quota.table_write_quota),
        (read_units, quota.table_read_quota),
    ]
    .iter()
    .filter(|(units, _)| *units > 0.0)
    .map(|(units, quota)| quota / units)
    .fold(f64::INFINITY, f64::min);
    per_s.is_finite().then(|| Binding {
        what: "DynamoDB per-table on-demand quota (40,000 write and 40,000 read units/s, the table and each index apart)".into(),
        per_s,
        source: format!(
            "a default quota (crowdcheck::capacity::meter::Limits) over the run's {write_units:.2} write and {read_units:.2} read units each on the table or index nearest it"
        ),
    })
}

/// Lambda's concurrency over the function time each takes.
fn lambda(cost: RouteCost) -> Option<Binding> {
    let duration_s = cost.round_trips * AWS_REQUEST_MS / 1_000.0;
    (duration_s > 0.0).then(|| Binding {
        what: format!(
            "Lambda concurrency ({LAMBDA_ACCOUNT_CONCURRENCY:.0} per account) at {:.0} ms of function time each",
            duration_s * 1_000.0
        ),
        per_s: LAMBDA_ACCOUNT_CONCURRENCY / duration_s,
        source: format!(
            "a default quota; the time modelled: the run's {:.2} round trips at {AWS_REQUEST_MS:.0} ms (assumed)",
            cost.round_trips
        ),
    })
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

    fn per_s(all: &[Binding], prefix: &str) -> f64 {
        all.iter()
            .find(|b| b.what.starts_with(prefix))
            .map_or(f64::NAN, |b| b.per_s)
    }

    #[test]
    fn the_ceiling_is_whatever_binds_first_and_every_binding_is_named() {
        let cost = RouteCost {
            quota_units: (2.0, 0.5),
            round_trips: 2.0,
            api_requests: 1.0,
        };
        let all = bindings(
            2_400_000.0,
            &[("VisitorStatusRouteRateLimit", 50_000.0, 1.0)],
            cost,
        );
        // 40,000 / 2 write units; 1,000 instances / 20 ms; the route; the
        // account; CloudFront.
        assert_eq!(per_s(&all, "DynamoDB per-table"), 20_000.0);
        assert!((per_s(&all, "Lambda concurrency") - 50_000.0).abs() < 1e-6);
        assert_eq!(per_s(&all, "a route's throttle"), 50_000.0);
        let first = ceiling(&all).unwrap();
        assert_eq!(first.what, "API Gateway requests/s per account and Region");
        assert_eq!(first.per_s, 10_000.0);
        let text = markdown("visitor-status", "polls/s", &all);
        assert!(text.starts_with("**visitor-status, end to end: 10000 polls/s**"));
    }

    #[test]
    fn quotas_in_requests_bind_a_unit_by_the_requests_it_makes() {
        // A claim attempt making 2 API requests, 0.5 of them get-seat's.
        let cost = RouteCost {
            quota_units: (8.0, 0.0),
            round_trips: 1.0,
            api_requests: 2.0,
        };
        let all = bindings(1e9, &[("GetSeatRouteRateLimit", 18_000.0, 0.5)], cost);
        assert_eq!(per_s(&all, "API Gateway"), 5_000.0);
        assert_eq!(per_s(&all, "a route's throttle"), 36_000.0);
        assert_eq!(per_s(&all, "DynamoDB per-table"), 5_000.0);
    }

    #[test]
    fn a_route_without_writes_or_a_throttle_has_no_such_binding() {
        let cost = RouteCost {
            quota_units: (0.0, 1.0),
            round_trips: 1.0,
            api_requests: 1.0,
        };
        let all = bindings(5.0, &[], cost);
        assert!(!all.iter().any(|b| b.what.contains("throttle")));
        assert_eq!(ceiling(&all).unwrap().per_s, 5.0);
    }
}
