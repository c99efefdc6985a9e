//! The dev server's stand-in for Secrets Manager (as it stands in for
//! EventBridge): `GetSecretValue` (`POST /` with `X-Amz-Target:
//! secretsmanager.GetSecretValue`) answers the development secrets under
//! [`DEV_SECRET_ARNS`], so the functions' loading code (`shared::secrets`)
//! runs against the SDK's own client: in the tests, and in `sam local
//! invoke`, whose functions are given ARNs as in AWS.

use crate::apps::{
    DEV_ADMISSION_SIGNING_KEYS, DEV_CONFIRM_SECRET, DEV_DRAW_SECRET, DEV_HOLD_TOKEN_KEYS,
    DEV_STRIPE_WEBHOOK_SECRET,
};
use shared::config::{
    ADMISSION_SIGNING_KEYS, CONFIRM_SECRET, DRAW_SECRET, HOLD_TOKEN_KEYS, STRIPE_WEBHOOK_SECRET,
};

/// Secrets Manager's JSON protocol target for `GetSecretValue`.
pub const GET_SECRET_VALUE_TARGET: &str = "secretsmanager.GetSecretValue";

/// Each secret variable's development ARN (in an account no one has), as
/// the dev server serves it and sam local invoke's functions are given it
/// (local/dev-secret-arns.json, which the scripts read too).
pub const DEV_SECRET_ARNS: &str = include_str!("../dev-secret-arns.json");

/// The development ARN of secret variable `name`.
pub fn dev_secret_arn(name: &str) -> Option<String> {
    let arns: serde_json::Value = serde_json::from_str(DEV_SECRET_ARNS).ok()?;
    arns[name].as_str().map(str::to_owned)
}

/// A development secret's value, by its ARN.
fn dev_secret(arn: &str) -> Option<&'static str> {
    let value = |name| (dev_secret_arn(name).as_deref() == Some(arn)).then_some(());
    if value(HOLD_TOKEN_KEYS).is_some() {
        Some(DEV_HOLD_TOKEN_KEYS.trim())
    } else if value(ADMISSION_SIGNING_KEYS).is_some() {
        Some(DEV_ADMISSION_SIGNING_KEYS.trim())
    } else if value(DRAW_SECRET).is_some() {
        Some(DEV_DRAW_SECRET.trim())
    } else if value(STRIPE_WEBHOOK_SECRET).is_some() {
        Some(DEV_STRIPE_WEBHOOK_SECRET)
    } else {
        value(CONFIRM_SECRET).map(|()| DEV_CONFIRM_SECRET)
    }
}

/// A Secrets Manager client for the dev server at `endpoint` (test
/// credentials, as the DynamoDB Local client's).
pub fn client(endpoint: &str) -> aws_sdk_secretsmanager::Client {
    let config = aws_sdk_secretsmanager::Config::builder()
        .behavior_version(aws_sdk_secretsmanager::config::BehaviorVersion::latest())
        .region(aws_sdk_secretsmanager::config::Region::new("us-east-1"))
        .endpoint_url(endpoint)
        .credentials_provider(aws_sdk_secretsmanager::config::Credentials::new(
            "local", "local", None, None, "local",
        ))
        .http_client(shared::store::http_client())
        .build();
    aws_sdk_secretsmanager::Client::from_conf(config)
}

/// A `GetSecretValue` request body, answered as Secrets Manager would:
/// (HTTP status, body).
pub fn get_secret_value(body: &[u8]) -> (u16, serde_json::Value) {
    let request: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
    let id = request["SecretId"].as_str().unwrap_or_default();
    match dev_secret(id) {
        Some(value) => (
            200,
            serde_json::json!({
                "ARN": id,
                "Name": id.rsplit(':').next().unwrap_or(id),
                "SecretString": value,
                "VersionId": "00000000-0000-0000-0000-000000000000",
                "VersionStages": ["AWSCURRENT"],
                "CreatedDate": 1.7e9,
            }),
        ),
        None => (
            400,
            serde_json::json!({
                "__type": "ResourceNotFoundException",
                "message": "Secrets Manager can't find the specified secret.",
            }),
        ),
    }
}
