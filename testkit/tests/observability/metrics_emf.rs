//! CloudWatch metrics: the handlers' counts, captured as the Lambda log
//! would carry them, are valid Embedded Metric Format (the `_aws` metadata,
//! every dimension and metric a top-level member, known units) with
//! low-cardinality dimensions only, and they count what happened: claims
//! won and lost by reason, confirms by outcome, the sweep's releases and
//! lag, the seat map's changes, published events.

use crate::common;

use std::collections::BTreeMap;

use common::*;
use serde_json::{json, Value};

/// The EMF units CloudWatch accepts (the ones `metrics` can name).
const UNITS: [&str; 8] = [
    "Count",
    "Milliseconds",
    "Seconds",
    "Microseconds",
    "Bytes",
    "Percent",
    "Count/Second",
    "None",
];

/// Checks one EMF document against the specification; returns its
/// (metric, dimensions) -> value entries.
fn validate(line: &str) -> Vec<(String, BTreeMap<String, String>, f64)> {
    let doc: Value =
        serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
    let aws = &doc["_aws"];
    assert!(
        aws["Timestamp"]
            .as_u64()
            .is_some_and(|t| t > 1_600_000_000_000),
        "Timestamp in ms: {line}"
    );
    let directives = aws["CloudWatchMetrics"]
        .as_array()
        .unwrap_or_else(|| panic!("CloudWatchMetrics: {line}"));
    assert_eq!(directives.len(), 1, "{line}");
    let directive = &directives[0];
    assert_eq!(directive["Namespace"], shared::metrics::NAMESPACE, "{line}");
    let mut dimensions = BTreeMap::new();
    for set in directive["Dimensions"]
        .as_array()
        .unwrap_or_else(|| panic!("Dimensions: {line}"))
    {
        let set = set
            .as_array()
            .unwrap_or_else(|| panic!("a dimension set is an array: {line}"));
        assert!(set.len() <= 30, "{line}");
        for name in set {
            let name = name
                .as_str()
                .unwrap_or_else(|| panic!("dimension names are strings: {line}"));
            let value = doc[name]
                .as_str()
                .unwrap_or_else(|| panic!("dimension {name} is a top-level string: {line}"));
            dimensions.insert(name.to_owned(), value.to_owned());
        }
    }
    let metrics = directive["Metrics"]
        .as_array()
        .unwrap_or_else(|| panic!("Metrics: {line}"));
    assert!(!metrics.is_empty() && metrics.len() <= 100, "{line}");
    metrics
        .iter()
        .map(|m| {
            let name = m["Name"]
                .as_str()
                .unwrap_or_else(|| panic!("a metric has a Name: {line}"));
            if let Some(unit) = m.get("Unit") {
                assert!(
                    unit.as_str().is_some_and(|u| UNITS.contains(&u)),
                    "unit {unit}: {line}"
                );
            }
            let value = match &doc[name] {
                Value::Number(v) => v.as_f64().unwrap(),
                Value::Array(values) => values.iter().map(|v| v.as_f64().unwrap()).sum(),
                other => panic!("metric {name} is a top-level number, got {other}: {line}"),
            };
            (name.to_owned(), dimensions.clone(), value)
        })
        .collect()
}

/// The captured lines, validated, summed per metric and dimension values.
fn captured() -> BTreeMap<String, f64> {
    let bytes = shared::metrics::take_captured();
    let text = String::from_utf8(bytes).unwrap();
    let mut out = BTreeMap::new();
    for line in text.lines() {
        for (name, dims, value) in validate(line) {
            // Low cardinality: every dimension value is a name from a fixed set.
            for (k, v) in &dims {
                assert!(
                    ["function", "outcome", "result"].contains(&k.as_str()),
                    "dimension {k}: {line}"
                );
                assert!(
                    v.len() <= 30 && v.chars().all(|c| c.is_ascii_lowercase() || c == '-'),
                    "{k}={v} looks like an id: {line}"
                );
            }
            let gauge = [
                shared::metrics::SWEEP_LAG,
                shared::metrics::QUEUE_WAITING,
                shared::metrics::QUEUE_PAUSED,
            ]
            .contains(&name.as_str());
            let key = std::iter::once(name)
                .chain(dims.values().cloned())
                .collect::<Vec<_>>()
                .join(" ");
            // Counters add up over flushes; a gauge is its latest value.
            let entry = out.entry(key).or_insert(0.0);
            *entry = if gauge { value } else { *entry + value };
        }
    }
    out
}

#[tokio::test]
async fn handlers_emit_valid_emf_counting_claims_confirms_the_sweep_and_events() {
    let _alone = crate::ONE_AT_A_TIME.lock().await;
    assert!(shared::metrics::install());
    shared::metrics::capture();
    let app = testkit::fresh_app_streaming(None).await;
    let ev = event(&app, 3, 60).await;
    let winner = order(&app, &ev).await;
    let loser = order(&app, &ev).await;
    assert_eq!(claim(&app, &winner, "A-1-1").await.0, 200);
    for _ in 0..3 {
        assert_eq!(claim(&app, &loser, "A-1-1").await.1["error"], "seat-held");
    }
    assert_eq!(
        claim(&app, &loser, "A-1-9").await.1["error"],
        "seat-not-found"
    );
    assert_eq!(
        best(&app, &loser, json!({"quantity": 3})).await.1["error"],
        "not-enough-seats"
    );
    // Confirms: completed, the same again, a payment for a seat another holds, a bad signature.
    assert_eq!(confirm(&app, &winner.id, "pay-1").await.0, 200);
    assert_eq!(confirm(&app, &winner.id, "pay-1").await.0, 200);
    assert_eq!(claim(&app, &loser, "A-1-2").await.0, 200);
    let (status, body) = confirm_seats(&app, &loser.id, "pay-2", &["A-1-1".to_owned()]).await;
    assert_eq!((status, &body["refund"]), (409, &json!(true)), "{body}");
    let unsigned = confirm_body(&winner.id, "pay-3", &["A-1-1".to_owned()]);
    assert_eq!(
        call(
            &app,
            "POST",
            &format!("/orders/{}/confirm", winner.id),
            &[],
            &unsigned
        )
        .await
        .0,
        401
    );
    // The sweep: one order left holding a seat, expired.
    let short = event(&app, 1, 1).await;
    let idle = order(&app, &short).await;
    assert_eq!(claim(&app, &idle, "A-1-1").await.0, 200);
    let_holds_expire(1).await;
    let scheduled: Value = serde_json::from_str(
        &std::fs::read_to_string(local::repo_root().join("events/expire-holds.json")).unwrap(),
    )
    .unwrap();
    let summary = shared::handlers::expire_holds(
        &local::iam::attributed(&app, "expire-holds"),
        lambda_runtime::LambdaEvent::new(scheduled, lambda_runtime::Context::default()),
    )
    .await
    .unwrap();
    assert_eq!(
        (summary.expired_orders, summary.released_seats),
        (1, 1),
        "{summary:?}"
    );
    let lag = summary.lag_ms.expect("it found an expired order");
    // Events out, as publish-events counts them.
    let feed = local::feed::DevFeed::quiet();
    let follower = local::streams::StreamFollower::attach(
        &testkit::dynamodb_endpoint(),
        app.store.client(),
        app.store.table_name(),
    )
    .await
    .unwrap();
    let projector = local::iam::attributed(&app, "project-seat-map");
    let (feed_ref, projector) = (&feed, &projector);
    follower
        .catch_up(|batch| async move {
            shared::handlers::project_records(projector, &batch).await;
            let published =
                shared::outbox::publish_records(feed_ref, &batch, shared::world::now()).await;
            shared::metrics::published(published.events, published.failed_records.len());
        })
        .await
        .unwrap();
    // A queue: one joiner admitted on the spot, two waiting, then an
    // admitter tick admits one more.
    let queued = event(&app, 3, 60).await;
    let (status, _) =
        common::queue::put_queue(&app, &queued, &common::queue::queue_body(-5_000, 60)).await;
    assert_eq!(status, 200);
    let first_join = shared::world::now();
    for _ in 0..3 {
        common::queue::join(&app, &queued).await;
    }
    // A second and a half after the first join: one more admission is due
    // (one a second), not two.
    let admitter = local::iam::attributed(&app, "admit-visitors");
    let later = shared::domain::Millis(first_join.0 + 1_500);
    shared::admitter::Admitter::default()
        .tick_all(&admitter, later)
        .await
        .unwrap();
    // An instance whose secrets are past their age, and cannot read them.
    let failing: shared::live::Reader =
        Box::new(|| Box::pin(async { Err(shared::ConfigError::Missing("HOLD_TOKEN_KEYS")) }));
    // Keys good for no time at all: stale from the start.
    let timing = shared::live::Timing {
        max_age: std::time::Duration::ZERO,
        ..shared::live::TIMING
    };
    let stale = shared::live::Live::new(
        "get-order",
        app.clone(),
        Some(failing),
        timing,
        std::time::Instant::now(),
    );
    let req = local::router::request("GET", &format!("/orders/{}", winner.id), &[], "");
    let reply =
        shared::lambda::answer_live(shared::routes::function("get-order"), &stale, req).await;
    assert_eq!(reply.status(), 503);
    shared::metrics::flush();

    let m = captured();
    let get = |key: &str| m.get(key).copied().unwrap_or(0.0);
    assert_eq!(get("Claims get-seat won"), 3.0, "{m:#?}");
    assert_eq!(get("Claims get-seat seat-held"), 3.0, "{m:#?}");
    assert_eq!(get("Claims get-seat seat-not-found"), 1.0, "{m:#?}");
    assert_eq!(get("Claims best-available not-enough-seats"), 1.0, "{m:#?}");
    assert_eq!(get("SecretsStale get-order"), 1.0, "{m:#?}");
    assert_eq!(get("Requests get-order secrets-unavailable"), 1.0, "{m:#?}");
    assert_eq!(get("Confirms completed"), 1.0, "{m:#?}");
    assert_eq!(get("Confirms duplicate"), 1.0, "{m:#?}");
    assert_eq!(get("Confirms refund-due"), 1.0, "{m:#?}");
    assert_eq!(get("Confirms unauthorized"), 1.0, "{m:#?}");
    assert_eq!(get("Requests confirm ok"), 2.0, "{m:#?}");
    assert_eq!(get("Requests confirm unauthorized"), 1.0, "{m:#?}");
    assert_eq!(
        (get("OrdersExpired"), get("SeatsReleased")),
        (1.0, 1.0),
        "{m:#?}"
    );
    assert_eq!(get("SweepLagMilliseconds"), lag as f64, "{m:#?}");
    assert!(lag < 60_000, "found within a minute of expiring: {lag}");
    assert_eq!(get("EventsPublished"), feed.events().len() as f64, "{m:#?}");
    assert!(get("EventsPublished") >= 10.0, "{m:#?}");
    assert_eq!(get("EventRecordsFailed"), 0.0, "{m:#?}");
    // Seat changes: holds of A-1-1 (2 orders over time: winner, then sold), A-1-2, and the short event's seat.
    assert!(get("SeatMapChanges") >= 5.0, "{m:#?}");
    assert_eq!(get("SeatMapFailures"), 0.0, "{m:#?}");
    assert_eq!(
        (get("QueueJoins admitted"), get("QueueJoins waiting")),
        (1.0, 2.0),
        "{m:#?}"
    );
    assert_eq!(get("QueueAdmissions"), 1.0, "{m:#?}");
    assert_eq!(
        (get("QueueWaiting"), get("QueuePaused")),
        (1.0, 0.0),
        "{m:#?}"
    );
    // Flushed, nothing is counted twice (a gauge repeats its last value).
    shared::metrics::flush();
    assert_eq!(
        captured().keys().collect::<Vec<_>>(),
        ["QueuePaused", "QueueWaiting", "SweepLagMilliseconds"]
    );
}
