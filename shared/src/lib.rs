//! seatclaim's shared library: the domain, the DynamoDB store, the HTTP
//! glue and the handlers every Lambda function (and the dev server) calls.

pub mod admission;
pub mod admitter;
mod app;
pub mod auth;
pub mod buyer;
pub mod config;
pub mod dev_secrets;
pub mod domain;
pub mod error;
pub mod handlers;
pub mod http;
pub mod lambda;
pub mod live;
pub mod memory;
pub mod metrics;
pub mod offerer;
pub mod outbox;
pub mod reason;
pub mod refund;
pub mod retry;
pub mod routes;
pub mod secrets;
pub mod store;
pub mod sweep;
pub mod telemetry;
pub mod world;

pub use app::{config_from_env, App};
pub use config::{Config, ConfigError, Needs};
pub use error::Error;
pub use store::Store;
