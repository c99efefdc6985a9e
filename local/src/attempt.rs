//! What the SDK interceptors here (faults, the capacity recorder and meter,
//! the request counter) read of an attempt: its operation, and a body as
//! JSON.

use aws_sdk_dynamodb::config::ConfigBag;
use aws_smithy_runtime_api::client::orchestrator::Metadata;
use serde_json::Value;

/// The attempt's DynamoDB operation (`PutItem`, `TransactWriteItems`, ...),
/// `unknown` when the SDK gave none.
pub fn operation(cfg: &ConfigBag) -> String {
    cfg.load::<Metadata>()
        .map_or_else(|| "unknown".into(), |m| m.name().to_owned())
}

/// A request's or response's body as JSON; `Null` if there is none in
/// memory or it is not JSON.
pub fn body_json(bytes: Option<&[u8]>) -> Value {
    bytes
        .and_then(|b| serde_json::from_slice(b).ok())
        .unwrap_or(Value::Null)
}
