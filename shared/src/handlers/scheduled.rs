//! The scheduled entry points: expire-holds, admit-visitors and
//! offer-waitlists, each run by an EventBridge schedule.

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

/// The admitter function's run, started every minute by its
/// schedule: ticks every queue for `ADMITTER_RUN_SECONDS` (or until shortly
/// before the invocation's deadline), keeping what it read in `admitter`
/// for the next run of this instance.
pub async fn admit_visitors(
    app: &App,
    admitter: &tokio::sync::Mutex<crate::admitter::Admitter>,
    event: lambda_runtime::LambdaEvent<serde_json::Value>,
) -> Result<crate::admitter::AdmitterRun, std::convert::Infallible> {
    let how_long = run_length(app.config.admitter_run_seconds, &event.context);
    let mut admitter = admitter.lock().await;
    let run = erased(admitter.run_for(app, how_long)).await;
    tracing::info!(
        ticks = run.ticks,
        queues = run.queues,
        admitted = run.admitted,
        "admitter run"
    );
    Ok(run)
}

/// The offer-waitlists function's run, started every minute by its
/// schedule: ticks every listed waitlist for `OFFERER_RUN_SECONDS` (or
/// until shortly before the invocation's deadline), offering what lapsed
/// holds and late joins leave free; what it saw is kept in `offerer` for
/// the next run of this instance.
pub async fn offer_waitlists(
    app: &App,
    offerer: &tokio::sync::Mutex<crate::offerer::Offerer>,
    event: lambda_runtime::LambdaEvent<serde_json::Value>,
) -> Result<crate::offerer::OffererRun, std::convert::Infallible> {
    let how_long = run_length(app.config.offerer_run_seconds, &event.context);
    let mut offerer = offerer.lock().await;
    let run = erased(offerer.run_for(app, how_long)).await;
    tracing::info!(
        ticks = run.ticks,
        waitlists = run.waitlists,
        looks = run.looks,
        offers = run.offers,
        "offerer run"
    );
    Ok(run)
}

/// How long a ticking run goes on: `wanted_seconds`, or until
/// [`RUN_DEADLINE_MARGIN_MS`] before the invocation's deadline (epoch
/// milliseconds; none under a test's context).
fn run_length(wanted_seconds: u32, context: &lambda_runtime::Context) -> std::time::Duration {
    let wanted = std::time::Duration::from_secs(u64::from(wanted_seconds));
    let now = u64::try_from(crate::world::now().0).unwrap_or(0);
    let left = context
        .deadline
        .checked_sub(now + RUN_DEADLINE_MARGIN_MS)
        .filter(|_| context.deadline > 0)
        .map_or(wanted, std::time::Duration::from_millis);
    wanted.min(left)
}

/// `run` boxed as a trait object: a tick's future is deep, and a
/// binary's `main` nests it further (its layout query would overflow the
/// compiler's depth limit otherwise).
fn erased<'a, T>(
    run: impl std::future::Future<Output = T> + Send + 'a,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>> {
    Box::pin(run)
}

/// Time a ticking run keeps back from its invocation's deadline.
const RUN_DEADLINE_MARGIN_MS: u64 = 3_000;
