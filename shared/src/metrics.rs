//! Operators' numbers: CloudWatch metrics in Embedded Metric Format (EMF).
//! Handlers count through the `metrics` facade; in a Lambda sandbox
//! [`install`] records them with metrics_cloudwatch_embedded, and
//! [`flush`] writes them to stdout as EMF JSON lines at the end of every
//! invocation, which CloudWatch turns into metrics with no API call and no
//! latency. Elsewhere (the dev server, tests that do not install it) the
//! macros are no-ops.
//!
//! Dimensions are low-cardinality: the function and an outcome or reason
//! from a fixed set (error codes, `won`, `completed`, …), never an order,
//! seat, event or payment id.

use std::sync::{Mutex, OnceLock};

use metrics_cloudwatch_embedded::Collector;

/// The CloudWatch namespace of every metric.
pub const NAMESPACE: &str = "seatclaim";

/// Every API request, by `function` and `outcome` (`ok` or the error code).
pub const REQUESTS: &str = "Requests";
/// Claims (get-seat, best-available, hold-ga), by `function` and `result`:
/// `won`, or the reason it was lost (`seat-held`, `seat-sold`,
/// `not-enough-seats`, `sold-out`, `seat-limit`, …).
pub const CLAIMS: &str = "Claims";
/// Payment confirmations by `outcome`: `completed`, `duplicate` (the same
/// payment again), `refund-due` (a payment that cannot complete, or a
/// further one), `unauthorized`, or another error code.
pub const CONFIRMS: &str = "Confirms";
/// What the sweep did.
pub const ORDERS_EXPIRED: &str = "OrdersExpired";
pub const SEATS_RELEASED: &str = "SeatsReleased";
pub const PLACES_RELEASED: &str = "PlacesReleased";
/// The age of the oldest expired order the sweep found (0 when none): how
/// far the sweep runs behind the expiries.
pub const SWEEP_LAG: &str = "SweepLagMilliseconds";
/// Seat changes folded into the seat map, and those reported as failures.
pub const SEAT_MAP_CHANGES: &str = "SeatMapChanges";
pub const SEAT_MAP_FAILURES: &str = "SeatMapFailures";
/// Claims refused from an instance's memory of a contended seat, or of a
/// seat whose read DynamoDB did not answer, with no write (docs/API.md,
/// "Under a crowd").
pub const REFUSED_FROM_MEMORY: &str = "RefusedFromMemory";
/// Claims refused on get-seat's read of the seat, with no write
/// (docs/API.md, "Under a crowd").
pub const REFUSED_AFTER_READ: &str = "RefusedAfterRead";
/// Events put on the bus, and stream records reported as failures.
pub const EVENTS_PUBLISHED: &str = "EventsPublished";
pub const EVENT_RECORDS_FAILED: &str = "EventRecordsFailed";

/// The on-sale queue: visitors who joined, admissions given, the
/// visitors waiting (over every queue) when the admitter last looked, and
/// whether any queue is paused (1) or none (0) at its latest tick: the
/// alarm watches its maximum.
pub const QUEUE_JOINS: &str = "QueueJoins";
pub const QUEUE_ADMISSIONS: &str = "QueueAdmissions";
pub const QUEUE_WAITING: &str = "QueueWaiting";
pub const QUEUE_PAUSED: &str = "QueuePaused";

/// Requests an instance refused because its secrets are older than it
/// may answer with (`crate::live`), by `function`: the alarm watches it.
pub const SECRETS_STALE: &str = "SecretsStale";

/// The routes whose requests are claims.
const CLAIM_ROUTES: [&str; 3] = ["get-seat", "best-available", "hold-ga"];

static COLLECTOR: OnceLock<&'static Collector> = OnceLock::new();

/// Installs the EMF recorder for this process (the first call wins).
/// Returns whether it is installed.
pub fn install() -> bool {
    if COLLECTOR.get().is_some() {
        return true;
    }
    match metrics_cloudwatch_embedded::Builder::new()
        .cloudwatch_namespace(NAMESPACE)
        .init()
    {
        Ok(collector) => {
            let _ = COLLECTOR.set(collector);
            describe();
            true
        }
        // Another recorder is installed (only a test harness does that).
        Err(e) => {
            tracing::warn!(error = %e, "metrics recorder not installed");
            false
        }
    }
}

/// Units, so CloudWatch shows them.
fn describe() {
    for name in [
        REQUESTS,
        CLAIMS,
        CONFIRMS,
        ORDERS_EXPIRED,
        SEATS_RELEASED,
        PLACES_RELEASED,
        SEAT_MAP_CHANGES,
        SEAT_MAP_FAILURES,
        REFUSED_FROM_MEMORY,
        REFUSED_AFTER_READ,
        EVENTS_PUBLISHED,
        EVENT_RECORDS_FAILED,
        QUEUE_JOINS,
        QUEUE_ADMISSIONS,
    ] {
        metrics::describe_counter!(name, metrics::Unit::Count, "");
    }
    metrics::describe_gauge!(SWEEP_LAG, metrics::Unit::Milliseconds, "");
    metrics::describe_gauge!(QUEUE_WAITING, metrics::Unit::Count, "");
    metrics::describe_gauge!(QUEUE_PAUSED, metrics::Unit::Count, "");
}

/// Where [`flush`] writes instead of stdout, once a test asks for it.
static CAPTURED: Mutex<Option<Vec<u8>>> = Mutex::new(None);

/// Writes what was counted since the last flush to stdout (one EMF line
/// per set of dimensions); nothing when not installed.
pub fn flush() {
    let Some(collector) = COLLECTOR.get() else {
        return;
    };
    // A poisoned lock only means a panic elsewhere mid-flush.
    let mut captured = CAPTURED.lock().unwrap_or_else(|p| p.into_inner());
    let written = match captured.as_mut() {
        Some(buffer) => collector.flush(buffer),
        None => collector.flush(std::io::stdout().lock()),
    };
    if let Err(e) = written {
        tracing::warn!(error = %e, "metrics not written");
    }
}

/// From now on, [`flush`] keeps the EMF lines for [`take_captured`]
/// instead of printing them (a test's view of the Lambda log).
pub fn capture() {
    let mut captured = CAPTURED.lock().unwrap_or_else(|p| p.into_inner());
    captured.get_or_insert_with(Vec::new);
}

/// The EMF lines flushed since [`capture`] or the last call.
pub fn take_captured() -> Vec<u8> {
    let mut captured = CAPTURED.lock().unwrap_or_else(|p| p.into_inner());
    captured.as_mut().map(std::mem::take).unwrap_or_default()
}

/// One API request's outcome (`ok` or its error code); a claim route's also
/// counts as a claim won or lost.
pub fn request(function: &'static str, outcome: &'static str) {
    metrics::counter!(REQUESTS, "function" => function, "outcome" => outcome).increment(1);
    if CLAIM_ROUTES.contains(&function) {
        let result = if outcome == "ok" { "won" } else { outcome };
        metrics::counter!(CLAIMS, "function" => function, "result" => result).increment(1);
    }
}

/// One confirm's outcome.
pub fn confirm(outcome: &'static str) {
    metrics::counter!(CONFIRMS, "outcome" => outcome).increment(1);
}

/// One sweep run: what it released, and its lag.
pub fn sweep(expired_orders: u64, released_seats: u64, released_places: u64, lag_ms: u64) {
    metrics::counter!(ORDERS_EXPIRED).increment(expired_orders);
    metrics::counter!(SEATS_RELEASED).increment(released_seats);
    metrics::counter!(PLACES_RELEASED).increment(released_places);
    metrics::gauge!(SWEEP_LAG).set(lag_ms as f64);
}

/// A claim refused from memory (no DynamoDB request).
pub fn refused_from_memory(function: &'static str) {
    metrics::counter!(REFUSED_FROM_MEMORY, "function" => function).increment(1);
}

/// A claim refused on a strongly consistent read of the seat, instead of
/// a failed write.
pub fn refused_after_read(function: &'static str) {
    metrics::counter!(REFUSED_AFTER_READ, "function" => function).increment(1);
}

/// One batch of stream records published.
pub fn published(events: usize, failed_records: usize) {
    metrics::counter!(EVENTS_PUBLISHED).increment(events as u64);
    metrics::counter!(EVENT_RECORDS_FAILED).increment(failed_records as u64);
}

/// One batch of seat changes folded into the seat map.
pub fn projected(changes: usize, failed: usize) {
    metrics::counter!(SEAT_MAP_CHANGES).increment(changes as u64);
    metrics::counter!(SEAT_MAP_FAILURES).increment(failed as u64);
}

/// A request refused on secrets past their age.
pub fn secrets_stale(function: &'static str) {
    metrics::counter!(SECRETS_STALE, "function" => function).increment(1);
}

/// A visitor joined a queue (`admitted`: on the spot).
pub fn queue_join(admitted: bool) {
    let outcome = if admitted { "admitted" } else { "waiting" };
    metrics::counter!(QUEUE_JOINS, "outcome" => outcome).increment(1);
}

/// One admitter tick over every queue: admissions given, visitors waiting,
/// and whether any queue is paused.
pub fn queue_tick(admitted: u64, waiting: u64, paused: bool) {
    metrics::counter!(QUEUE_ADMISSIONS).increment(admitted);
    metrics::gauge!(QUEUE_WAITING).set(waiting as f64);
    metrics::gauge!(QUEUE_PAUSED).set(if paused { 1.0 } else { 0.0 });
}
