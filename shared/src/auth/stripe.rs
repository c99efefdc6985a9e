//! Stripe's webhook signatures (the Stripe payment route): the
//! `Stripe-Signature` header, `t=<unix seconds>,v1=<hex>[,v1=<hex>…]`,
//! where each `v1` is HMAC-SHA256 over `{t}.{raw body}` keyed with the
//! endpoint's signing secret **as the literal string Stripe shows**
//! (`whsec_…`, never base64-decoded: Stripe's own libraries key the MAC
//! with the whole string). Other schemes (`v0`) are skipped, as Stripe's
//! libraries skip them.

use std::fmt;

use hmac::{Hmac, KeyInit, Mac};
use lambda_http::http::HeaderMap;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::check_timestamp;
use crate::domain::Millis;
use crate::reason::Reason;

/// The header Stripe signs its webhooks in.
pub const STRIPE_SIGNATURE_HEADER: &str = "stripe-signature";
/// What every Stripe signing secret starts with.
pub const STRIPE_SECRET_PREFIX: &str = "whsec_";
/// The fewest characters after the prefix a secret may have: Stripe's
/// Dashboard gives 32, its CLI (`stripe listen`) 64; anything shorter is a
/// value copied wrong.
pub const MIN_STRIPE_SECRET_CHARS: usize = 24;
/// Bytes of a `v1` signature (HMAC-SHA256), 64 hex digits.
const STRIPE_SIGNATURE_BYTES: usize = 32;

/// Why `STRIPE_WEBHOOK_SECRET` was refused (the value itself is never shown).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StripeSecretError {
    #[error("it must hold one or more Stripe signing secrets `whsec_…` separated by spaces")]
    Empty,
    #[error("secret {index} does not start with `whsec_`: copy the endpoint's signing secret as Stripe shows it")]
    Prefix { index: usize },
    #[error("secret {index} has {chars} characters after `whsec_`; Stripe's have at least {MIN_STRIPE_SECRET_CHARS}")]
    Short { index: usize, chars: usize },
}

/// The signing secrets the Stripe route accepts: one or more, so a secret
/// Stripe rolls (it keeps the old one valid for up to 24 hours) can be
/// added before the old one is removed. Any one matching is enough.
#[derive(Clone)]
pub struct StripeSecrets(Vec<String>);

impl fmt::Debug for StripeSecrets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StripeSecrets({} x <redacted>)", self.0.len())
    }
}

type HmacSha256 = Hmac<Sha256>;

impl StripeSecrets {
    /// Parses `STRIPE_WEBHOOK_SECRET`: `whsec_…` entries separated by spaces.
    pub fn parse(value: &str) -> Result<Self, StripeSecretError> {
        let mut secrets = Vec::new();
        for (i, entry) in value.split_whitespace().enumerate() {
            let index = i + 1;
            let rest = entry
                .strip_prefix(STRIPE_SECRET_PREFIX)
                .ok_or(StripeSecretError::Prefix { index })?;
            let chars = rest.chars().count();
            if chars < MIN_STRIPE_SECRET_CHARS {
                return Err(StripeSecretError::Short { index, chars });
            }
            secrets.push(entry.to_owned());
        }
        match secrets.is_empty() {
            true => Err(StripeSecretError::Empty),
            false => Ok(Self(secrets)),
        }
    }

    /// The SHA-256 of each secret (hex): what tells one apart without it.
    pub fn key_fingerprints(&self) -> impl Iterator<Item = String> + '_ {
        self.0
            .iter()
            .map(|s| hex::encode(Sha256::digest(s.as_bytes())))
    }

    /// The `Stripe-Signature` value Stripe would send for `body` at
    /// `timestamp`, signed with the first secret (the dev server's and the
    /// tests' own use; the suite checks it against Stripe's library).
    pub fn sign(&self, timestamp: i64, body: &[u8]) -> String {
        let signature = self.0.first().map(|s| mac(s, timestamp, body));
        format!(
            "t={timestamp},v1={}",
            hex::encode(signature.unwrap_or_default())
        )
    }

    /// Checks a request's `Stripe-Signature` against its raw body: the
    /// header there, a timestamp within the tolerance of `now` (either
    /// way, as confirm's), and a `v1` that any secret's MAC matches in
    /// constant time. One MAC per secret, whatever the header holds (a
    /// header of many `v1` costs comparisons, not hashes of the body);
    /// every secret's MAC is compared with every `v1`, so the time taken
    /// does not tell which matched. A refusal names the first rule broken,
    /// in that order.
    pub fn verify(&self, headers: &HeaderMap, body: &[u8], now: Millis) -> Result<(), Reason> {
        let header = headers
            .get(STRIPE_SIGNATURE_HEADER)
            .ok_or(Reason::SignatureHeaderMissing)?
            .to_str()
            .map_err(|_| Reason::SignatureMalformed)?;
        let parsed = SignatureHeader::parse(header)?;
        check_timestamp(parsed.timestamp, now)?;
        let timestamp = parsed
            .timestamp
            .parse::<i64>()
            .map_err(|_| Reason::SignatureMalformed)?;
        let mut matched = false;
        for secret in &self.0 {
            let expected = mac(secret, timestamp, body);
            for signature in &parsed.v1 {
                matched |= bool::from(expected.as_slice().ct_eq(signature));
            }
        }
        match matched {
            true => Ok(()),
            false => Err(Reason::SignatureMismatch),
        }
    }
}

/// A MAC keyed with a secret's literal bytes (HMAC takes a key of any length).
fn keyed(secret: &str) -> HmacSha256 {
    match HmacSha256::new_from_slice(secret.as_bytes()) {
        Ok(mac) => mac,
        // HMAC accepts every key length; this arm cannot be reached.
        Err(_) => unreachable!("HMAC-SHA256 takes keys of any length"),
    }
}

/// `{t}.{body}` into the MAC.
fn feed(mac: &mut HmacSha256, timestamp: i64, body: &[u8]) {
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
}

fn mac(secret: &str, timestamp: i64, body: &[u8]) -> Vec<u8> {
    let mut mac = keyed(secret);
    feed(&mut mac, timestamp, body);
    mac.finalize().into_bytes().to_vec()
}

/// A `Stripe-Signature` value, read: its one `t` and its `v1` MACs.
struct SignatureHeader<'a> {
    timestamp: &'a str,
    v1: Vec<Vec<u8>>,
}

impl<'a> SignatureHeader<'a> {
    /// `signature-malformed` unless it has exactly one `t` and at least one
    /// `v1` of 64 hex digits (other `v1` values and other schemes skipped).
    fn parse(header: &'a str) -> Result<Self, Reason> {
        let mut timestamp = None;
        let mut v1 = Vec::new();
        for item in header.split(',') {
            let Some((key, value)) = item.trim().split_once('=') else {
                continue;
            };
            match key {
                "t" if timestamp.is_some() => return Err(Reason::SignatureMalformed),
                "t" => timestamp = Some(value),
                "v1" => v1.extend(
                    hex::decode(value)
                        .ok()
                        .filter(|mac| mac.len() == STRIPE_SIGNATURE_BYTES),
                ),
                _ => {}
            }
        }
        match (timestamp, v1.is_empty()) {
            (Some(timestamp), false) => Ok(Self { timestamp, v1 }),
            _ => Err(Reason::SignatureMalformed),
        }
    }
}

#[cfg(test)]
#[path = "stripe_tests.rs"]
mod tests;
