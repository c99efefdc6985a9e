//! Local development for seatclaim: DynamoDB Local, the table created from
//! template.yaml, a dev HTTP server that routes to the very handlers the
//! Lambda binaries call, and the stand-ins the test kit (testkit/) and the
//! bench (bench/) share with it: apps on a local table, the fault and
//! request recorders, and the invariants read back from the table. The
//! capacity meter and the history checker are `crowdcheck`'s.

pub mod apps;
pub mod attempt;
pub mod dev_routes;
pub mod dynamodb_local;
pub mod faults;
pub mod feed;
pub mod iam;
pub mod invariants;
pub mod metrics;
pub mod paths;
pub mod payment_backend;
pub mod replies;
pub mod router;
pub mod secrets;
pub mod server;
pub mod streams;
pub mod table;

pub use paths::repo_root;

use aws_sdk_dynamodb::config::{BehaviorVersion, Credentials, Region};

/// A DynamoDB client for a local endpoint: dummy credentials, the region
/// from `AWS_REGION` or us-east-1 (DynamoDB Local accepts any).
pub fn local_client(endpoint: &str) -> aws_sdk_dynamodb::Client {
    local_client_counting(endpoint, None)
}

/// [`local_client`] with a request counter attached.
pub fn local_client_counting(
    endpoint: &str,
    counter: Option<metrics::RequestCounter>,
) -> aws_sdk_dynamodb::Client {
    let config = local_config(endpoint);
    let config = match counter {
        Some(c) => config.interceptor(c),
        None => config,
    };
    aws_sdk_dynamodb::Client::from_conf(config.build())
}

/// The SDK configuration of a client for a local endpoint, to add
/// interceptors to.
pub fn local_config(endpoint: &str) -> aws_sdk_dynamodb::config::Builder {
    let region = std::env::var("AWS_REGION").unwrap_or_else(|_| "us-east-1".to_owned());
    aws_sdk_dynamodb::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new(region))
        .credentials_provider(Credentials::new(
            "local",
            "local",
            None,
            None,
            "seatclaim-local",
        ))
        .endpoint_url(endpoint)
        // The SDK crates link no default HTTP client (see the workspace
        // Cargo.toml): the same client as the Lambda functions.
        .http_client(shared::store::http_client())
        // DynamoDB Local on two busy cores sometimes drops a connection
        // under a 250-way stampede; the SDK's own retry policy absorbs that
        // (every write here is conditional, so a retry is safe).
        .retry_config(aws_sdk_dynamodb::config::retry::RetryConfig::standard().with_max_attempts(6))
}
