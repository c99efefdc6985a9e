//! seatclaim's shared library: the domain, the DynamoDB store, the HTTP
//! glue and the handlers every Lambda function (and the dev server) calls.

pub mod auth;
pub mod config;
pub mod domain;
pub mod error;
pub mod handlers;
pub mod http;
pub mod metrics;
pub mod outbox;
pub mod store;
pub mod sweep;
pub mod telemetry;
pub mod world;

pub use config::{Config, ConfigError, Needs};
pub use error::Error;
pub use store::Store;

/// Everything a handler needs, built once per process (per Lambda sandbox).
#[derive(Clone, Debug)]
pub struct App {
    pub store: Store,
    pub config: Config,
}

impl App {
    /// Reads the configuration and builds the DynamoDB client.
    pub async fn from_env(needs: Needs) -> Result<Self, ConfigError> {
        let config = Config::from_env(needs)?;
        let store = Store::connect(&config.table_name).await;
        Ok(Self { store, config })
    }
}

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
        .map(domain::Millis);
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

/// The project-seat-map handler: a batch of the table's stream records in
/// (Lambda's DynamoDB event), the seat map's projection updated, and the
/// records that could not be written reported as batch item failures (the
/// event source retries from the first of them).
pub async fn project_seat_map(
    app: &App,
    event: lambda_runtime::LambdaEvent<serde_json::Value>,
) -> Result<serde_json::Value, std::convert::Infallible> {
    let reply = project_records(&app.store, &event.payload).await;
    metrics::flush();
    Ok(reply)
}

/// [`project_seat_map`] over a `{"Records": [...]}` document (the local
/// stream follower feeds the same shape).
pub async fn project_records(store: &Store, records: &serde_json::Value) -> serde_json::Value {
    let changes: Vec<_> = records["Records"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(store::seat_change)
        .collect();
    let failed = store.project_seat_changes(&changes).await;
    tracing::info!(
        records = records["Records"].as_array().map_or(0, Vec::len),
        seatChanges = changes.len(),
        failed = failed.len(),
        "seat map projected"
    );
    metrics::projected(changes.len(), failed.len());
    let failures: Vec<_> = failed
        .into_iter()
        .map(|id| serde_json::json!({"itemIdentifier": id}))
        .collect();
    serde_json::json!({"batchItemFailures": failures})
}

/// The publish-events handler: a batch of the table's stream records in
/// (Lambda's DynamoDB event), one event per state change put on the bus,
/// and the records it could not publish reported as batch item failures.
pub async fn publish_events(
    bus: &outbox::EventBridgeBus,
    event: lambda_runtime::LambdaEvent<serde_json::Value>,
) -> Result<serde_json::Value, std::convert::Infallible> {
    let published = outbox::publish_records(bus, &event.payload, crate::world::now()).await;
    metrics::published(published.events, published.failed_records.len());
    metrics::flush();
    tracing::info!(
        records = published.records,
        events = published.events,
        failed = published.failed_records.len(),
        "events published"
    );
    Ok(published.batch_response())
}
