//! The cron entry point: expire-holds, run by an EventBridge schedule.

use crate::{metrics, sweep, App};

/// The expire-holds handler: an EventBridge scheduled event in, the sweep's
/// summary out. It honours the invocation's deadline (epoch milliseconds in
/// the Lambda context) and never fails the invocation: failures are counted
/// and logged, and the next run retries them.
pub async fn expire_holds(
    app: &App,
    event: lambda_runtime::LambdaEvent<serde_json::Value>,
) -> Result<sweep::SweepSummary, std::convert::Infallible> {
    let deadline = i64::try_from(event.context.deadline)
        .ok()
        .filter(|d| *d > 0)
        .map(crate::domain::Millis);
    let summary = sweep::run(&app.store, crate::world::now(), deadline).await;
    metrics::sweep(
        summary.expired_orders,
        summary.released_seats,
        summary.released_places,
        summary.lag_ms.unwrap_or(0),
    );
    metrics::flush();
    Ok(summary)
}
