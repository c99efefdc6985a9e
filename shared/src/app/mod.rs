//! The app: what every handler is given, built once per process (per
//! Lambda sandbox): the store, the configuration and the instance's
//! memory; and the reads every route shares, through that memory
//! ([`reads`]).

mod reads;

use crate::config::{Config, ConfigError, Needs};
use crate::memory::Memory;
use crate::secrets;
use crate::store::Store;

/// Everything a handler needs, built once per process (per Lambda sandbox).
#[derive(Clone, Debug)]
pub struct App {
    pub store: Store,
    pub config: Config,
    /// What this instance remembers between requests: the events, seat
    /// maps, sold-out sections and queues it read, and the crowd gate.
    pub memory: Memory,
}

impl App {
    /// One function instance: `store`, `config`, and a memory of its own,
    /// empty.
    pub fn new(store: Store, config: Config) -> Self {
        Self {
            store,
            config,
            memory: Memory::default(),
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
