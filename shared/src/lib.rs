//! seatclaim's shared library: the domain, the DynamoDB store, the HTTP
//! glue and the handlers every Lambda function (and the dev server) calls.

pub mod admission;
pub mod admitter;
pub mod auth;
pub mod buyer;
pub mod config;
pub mod crowd;
pub mod dev_secrets;
pub mod domain;
pub mod error;
pub mod handlers;
pub mod http;
pub mod lambda;
pub mod metrics;
pub mod outbox;
pub mod retry;
pub mod routes;
pub mod secrets;
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
    /// What this instance remembers between requests: the events, seat
    /// maps, sold-out sections and queues it read, and the crowd gate.
    pub memory: store::Memory,
}

impl App {
    /// One function instance: `store`, `config`, and a memory of its own,
    /// empty.
    pub fn new(store: Store, config: Config) -> Self {
        Self {
            store,
            config,
            memory: store::Memory::default(),
        }
    }

    /// This app as a new process would see it: the same table and
    /// settings, nothing remembered.
    pub fn new_process(&self) -> Self {
        Self {
            store: self.store.clone(),
            config: self.config.clone(),
            memory: self.memory.fresh(),
        }
    }

    /// Reads the configuration (its secrets from Secrets Manager where
    /// the environment names them by ARN) and builds the DynamoDB client.
    pub async fn from_env(needs: Needs) -> Result<Self, ConfigError> {
        let config = config_from_env(needs).await?;
        let store = Store::connect(&config.table_name).await;
        Ok(Self::new(store, config))
    }

    /// This instance with `config`: the same store and memory.
    pub fn with_config(&self, config: Config) -> Self {
        Self {
            store: self.store.clone(),
            config,
            memory: self.memory.clone(),
        }
    }
}

/// The configuration from the process environment, each secret it names
/// by ARN read from Secrets Manager ([`secrets`]).
pub async fn config_from_env(needs: Needs) -> Result<Config, ConfigError> {
    let env = |k: &str| std::env::var(k).ok();
    let fetched = secrets::fetch(&env).await?;
    Config::from_lookup(needs, |k| fetched.get(k).cloned().or_else(|| env(k)))
}
