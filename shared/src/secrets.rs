//! Secrets are never in a function's environment, where anyone allowed
//! `lambda:GetFunctionConfiguration` reads them. In AWS a function is told
//! each secret's ARN (`HOLD_TOKEN_KEYS_SECRET_ARN`, …) and reads the value
//! from Secrets Manager when it starts, then again every
//! [`SECRET_REFRESH`] (a rotation reaches every instance within it; see
//! `crate::lambda`). Its role may read exactly those secrets (template.yaml).
//! `make dev` and the tests set the plain variables, which win; the dev
//! server stands in for Secrets Manager (`local::secrets`) so this code is
//! tested against the SDK's own client.

use std::collections::HashMap;
use std::time::Duration;

use aws_config::BehaviorVersion;
use aws_sdk_secretsmanager::Client;

pub const HOLD_TOKEN_KEYS: &str = "HOLD_TOKEN_KEYS";
pub const CONFIRM_SECRET: &str = "CONFIRM_SECRET";
pub const ADMISSION_SIGNING_KEYS: &str = "ADMISSION_SIGNING_KEYS";
pub const DRAW_SECRET: &str = "DRAW_SECRET";
pub const STRIPE_WEBHOOK_SECRET: &str = "STRIPE_WEBHOOK_SECRET";

/// The variables that hold secrets, each of which a function may instead be
/// given as `{NAME}_SECRET_ARN`.
pub const SECRET_VARIABLES: [&str; 5] = [
    CONFIRM_SECRET,
    ADMISSION_SIGNING_KEYS,
    HOLD_TOKEN_KEYS,
    DRAW_SECRET,
    STRIPE_WEBHOOK_SECRET,
];

/// How long an instance keeps the secrets it read before reading them
/// again: the wait between the steps of a rotation (docs/OPERATIONS.md).
pub const SECRET_REFRESH: Duration = Duration::from_secs(300);

/// The variable naming the ARN of secret variable `name`.
pub fn arn_variable(name: &str) -> String {
    format!("{name}_SECRET_ARN")
}

/// A secret that could not be read. Names the variable and the ARN (which
/// the template shows anyway), never a value.
#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    #[error("{variable}: Secrets Manager did not give secret {arn}")]
    Unavailable {
        variable: &'static str,
        arn: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error("{variable}: secret {arn} has no text value (SecretString)")]
    NotText { variable: &'static str, arn: String },
}

/// Secret values read from Secrets Manager, by variable.
pub type Fetched = HashMap<&'static str, String>;

/// The secret variables `env` names only by ARN (a variable set plainly
/// wins, as under `make dev`): each with its ARN.
pub fn wanted(env: &impl Fn(&str) -> Option<String>) -> Vec<(&'static str, String)> {
    SECRET_VARIABLES
        .into_iter()
        .filter(|name| env(name).is_none_or(|v| v.trim().is_empty()))
        .filter_map(|name| {
            let arn = env(&arn_variable(name)).filter(|v| !v.trim().is_empty())?;
            Some((name, arn))
        })
        .collect()
}

/// Reads what [`wanted`] names from Secrets Manager (the client from the
/// environment: region, credentials, `AWS_ENDPOINT_URL_SECRETS_MANAGER`);
/// nothing, and no client, when it names nothing.
pub async fn fetch(env: &impl Fn(&str) -> Option<String>) -> Result<Fetched, SecretError> {
    let wanted = wanted(env);
    if wanted.is_empty() {
        return Ok(Fetched::new());
    }
    let sdk = aws_config::defaults(BehaviorVersion::latest())
        .http_client(crate::store::http_client())
        .timeout_config(crate::store::sdk_timeouts())
        .load()
        .await;
    fetch_with(&Client::new(&sdk), wanted).await
}

/// Reads each `(variable, arn)` with `client`, all at once: a slow
/// secret costs its own wait, not the sum of every one's.
pub async fn fetch_with(
    client: &Client,
    wanted: Vec<(&'static str, String)>,
) -> Result<Fetched, SecretError> {
    let reads = wanted
        .into_iter()
        .map(|(variable, arn)| read_one(client, variable, arn));
    futures_util::future::join_all(reads)
        .await
        .into_iter()
        .collect()
}

/// One secret's text value.
async fn read_one(
    client: &Client,
    variable: &'static str,
    arn: String,
) -> Result<(&'static str, String), SecretError> {
    let out = client
        .get_secret_value()
        .secret_id(&arn)
        .send()
        .await
        .map_err(|e| SecretError::Unavailable {
            variable,
            arn: arn.clone(),
            source: Box::new(e),
        })?;
    let value = out
        .secret_string()
        .ok_or(SecretError::NotText { variable, arn })?;
    Ok((variable, value.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_variable_wins_and_an_arn_names_the_rest() {
        let env = |k: &str| match k {
            "HOLD_TOKEN_KEYS" => Some("plain".to_owned()),
            "HOLD_TOKEN_KEYS_SECRET_ARN" => Some("arn:h".to_owned()),
            "CONFIRM_SECRET" => Some(" ".to_owned()),
            "CONFIRM_SECRET_SECRET_ARN" => Some("arn:c".to_owned()),
            "ADMISSION_SIGNING_KEYS_SECRET_ARN" => Some(String::new()),
            _ => None,
        };
        assert_eq!(wanted(&env), [("CONFIRM_SECRET", "arn:c".to_owned())]);
        assert!(wanted(&|_: &str| None).is_empty());
    }
}
