//! The development secrets never run in AWS. `make dev`, the tests and the
//! sample events use secrets anyone can read in this repository (local/);
//! a function that finds one of them in its configuration refuses to
//! start, unless it is told it runs locally ([`ALLOW_DEV_SECRETS`]: sam
//! local invoke and the cold-start bench set it, template.yaml never does).
//! Each secret is known here by a fingerprint only.

use crate::config::{Config, ConfigError};

/// SHA-256 of the development `CONFIRM_SECRET`'s key
/// (`local::apps::DEV_CONFIRM_SECRET`).
const CONFIRM_KEY_SHA256: &str = "456bac6b594348cc47ce6aedcc6d725495cf78a959f1df0e8d2d21a84f68c585";
/// SHA-256 of the development `STRIPE_WEBHOOK_SECRET`
/// (`local::apps::DEV_STRIPE_WEBHOOK_SECRET`).
const STRIPE_SECRET_SHA256: &str =
    "9d2e849a87c807c982a6c76992bde01143611290192ccf40a7e8bb62cee261a3";
/// SHA-256 of the development `HOLD_TOKEN_KEYS` key
/// (local/dev-hold-token-keys.txt).
const HOLD_KEY_SHA256: &str = "316ee5c9be87b8a975cf58ac85bea7b38c8ccab752410a4b03c1a59c540e2e7e";
/// SHA-256 of the development `DRAW_SECRET` key (local/dev-draw-secret.txt).
const DRAW_KEY_SHA256: &str = "8d8b14ad5348e274c45b3c95db36b6ae78b7c1ee72b108abd2234f54eaaab707";
/// The development admission key's public `x`
/// (local/dev-admission-signing-keys.json, kid `seatclaim-dev-NOT-SECRET`).
const ADMISSION_KEY_X: &str = "_Dfs7eep1t-bd8MvF5YeE-y4Tjv4IrVRQu8mFERBu0U";

/// The development buyer key's public `x`
/// (local/dev-buyer-signing-keys.json, kid `seatclaim-dev-buyer-NOT-SECRET`):
/// its private half is in the repository, so trusting it trusts anyone.
const BUYER_KEY_X: &str = "CVGXDJol2Q5C93JkbXQmmF8qwSStKpR5blpgmNsTmNc";

/// Set to `1`, a function may start with a development secret (one of
/// the configuration's variables, so it is named with them).
pub use crate::config::ALLOW_DEV_SECRETS;

/// The variables of `config` that hold a development secret.
pub fn found_in(config: &Config) -> Vec<&'static str> {
    let mut found = Vec::new();
    let confirm = config.confirm_secrets.iter();
    if confirm
        .flat_map(|s| s.key_fingerprints())
        .any(|f| f == CONFIRM_KEY_SHA256)
    {
        found.push(crate::config::CONFIRM_SECRET);
    }
    let stripe = config.stripe_secrets.iter();
    if stripe
        .flat_map(|s| s.key_fingerprints())
        .any(|f| f == STRIPE_SECRET_SHA256)
    {
        found.push(crate::config::STRIPE_WEBHOOK_SECRET);
    }
    let hold = config.hold_token_keys.iter();
    if hold
        .flat_map(|k| k.key_fingerprints())
        .any(|f| f == HOLD_KEY_SHA256)
    {
        found.push(crate::config::HOLD_TOKEN_KEYS);
    }
    let draw = config.draw_secrets.iter();
    if draw
        .flat_map(|k| k.key_fingerprints())
        .any(|f| f == DRAW_KEY_SHA256)
    {
        found.push(crate::config::DRAW_SECRET);
    }
    let signing = config.admission_signing.iter();
    if signing
        .flat_map(|k| k.public_xs())
        .any(|x| x == ADMISSION_KEY_X)
    {
        found.push(crate::config::ADMISSION_SIGNING_KEYS);
    }
    let verify = config.admission_verify.iter();
    if verify
        .flat_map(|k| k.public_xs())
        .any(|x| x == ADMISSION_KEY_X)
    {
        found.push("ADMISSION_VERIFY_KEYS");
    }
    let buyer = config.buyer_keys.iter();
    if buyer
        .flat_map(|k| k.keys().public_xs())
        .any(|x| x == BUYER_KEY_X)
    {
        found.push(crate::buyer::BUYER_VERIFY_KEYS);
    }
    found
}

/// A function's start-up check: `Err` naming the first variable that holds
/// a development secret, unless `allowed`.
pub fn refuse(config: &Config, allowed: bool) -> Result<(), ConfigError> {
    match found_in(config).first() {
        Some(name) if !allowed => Err(ConfigError::DevelopmentSecret(name)),
        _ => Ok(()),
    }
}
