//! seatclaim's shared library: the domain, the DynamoDB store, the HTTP
//! glue and the handlers every Lambda function (and the dev server) calls.

pub mod auth;
pub mod config;
pub mod domain;
pub mod error;
pub mod handlers;
pub mod http;
pub mod store;
pub mod sweep;
pub mod telemetry;

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
    let deadline = i64::try_from(event.context.deadline).ok().filter(|d| *d > 0).map(domain::Millis);
    Ok(sweep::release_expired(&app.store, domain::Millis::now(), deadline).await)
}
