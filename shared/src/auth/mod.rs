//! Hold tokens (order routes), visitor tokens (a queue's visitor), entry
//! tokens (a waitlist's entry) and payment signatures (confirm).

mod draw_secret;
mod hold_token;
mod key_list;
mod stripe;

pub use draw_secret::DrawSecrets;
pub use hold_token::{
    HoldKeyError, HoldToken, HoldTokenKeys, IdempotencyScope, MIN_BARE_IDEMPOTENCY_KEY_LEN,
    MIN_HOLD_KEY_BYTES,
};

pub use stripe::{
    StripeSecretError, StripeSecrets, MIN_STRIPE_SECRET_CHARS, STRIPE_SECRET_PREFIX,
    STRIPE_SIGNATURE_HEADER,
};

use std::fmt;

use base64::Engine;
use lambda_http::http::HeaderMap;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::domain::Millis;
use crate::error::Error;
use crate::reason::Reason;

/// Random bytes in a hold token: 256 bits, twice the contract's minimum.
pub const TOKEN_SECRET_BYTES: usize = 32;

/// `TOKEN_SECRET_BYTES` random bytes, or a 500 if the system has none.
pub(crate) fn random_secret(what: &str) -> Result<[u8; TOKEN_SECRET_BYTES], Error> {
    let mut secret = [0u8; TOKEN_SECRET_BYTES];
    getrandom::fill(&mut secret)
        .map_err(|e| Error::Corrupt(format!("no randomness for a {what}: {e}")))?;
    Ok(secret)
}

/// The token of an `Authorization: Bearer <token>` header value.
pub fn bearer_value(header: Option<&str>) -> Option<&str> {
    let (scheme, token) = header?.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then_some(token.trim())
}

/// Declares a bearer secret that is a MAC under `HOLD_TOKEN_KEYS` of one
/// subject of an event (opaque to clients): `{prefix}{64 hex}`. Its
/// subject's item stores the hash of the first one it was given, so it
/// works whatever the keys become.
macro_rules! mac_token {
    ($(#[$doc:meta])* $name:ident, $prefix:literal) => {
        $(#[$doc])*
        pub struct $name(String);

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(concat!(stringify!($name), "(redacted)"))
            }
        }

        impl $name {
            /// The token of 32 secret bytes (a MAC: `HoldTokenKeys`).
            fn of_secret(secret: &[u8; TOKEN_SECRET_BYTES]) -> Self {
                Self(format!("{}{}", $prefix, hex::encode(secret)))
            }
            /// From an `Authorization: Bearer <token>` header value, if
            /// shaped like ours.
            pub fn from_authorization(header: Option<&str>) -> Option<Self> {
                let token = bearer_value(header)?;
                let secret = token.strip_prefix($prefix)?;
                (secret.len() == TOKEN_SECRET_BYTES * 2
                    && secret.bytes().all(|b| b.is_ascii_hexdigit()))
                .then(|| Self(token.to_owned()))
            }
            /// From a request's `Authorization` value: a `401` with
            /// `missing` without one, `malformed` when not shaped like ours.
            pub fn required(
                authorization: Option<&str>,
                missing: Reason,
                malformed: Reason,
            ) -> Result<Self, Error> {
                Self::from_authorization(authorization).ok_or(Error::Unauthorized(
                    match authorization {
                        None => missing,
                        Some(_) => malformed,
                    },
                ))
            }
            pub fn as_str(&self) -> &str {
                &self.0
            }
            pub fn hash(&self) -> String {
                hex::encode(Sha256::digest(self.0.as_bytes()))
            }
            /// Constant-time comparison with a stored hash.
            pub fn matches(&self, stored_hash: &str) -> bool {
                self.hash().as_bytes().ct_eq(stored_hash.as_bytes()).into()
            }
        }
    };
}

mac_token!(
    /// A queue visitor's bearer secret: `vt_{64 hex}`.
    VisitorToken,
    "vt_"
);

mac_token!(
    /// A waitlist entry's bearer secret: `et_{64 hex}`.
    EntryToken,
    "et_"
);

/// Prefix of a Standard Webhooks secret: `whsec_<base64 key>`.
pub const WEBHOOK_SECRET_PREFIX: &str = "whsec_";
/// Shortest key accepted, in bytes (192 bits).
pub const MIN_WEBHOOK_KEY_BYTES: usize = 24;
/// A signature's timestamp may be this far from the server's clock, either
/// way (exactly this far is accepted).
pub const WEBHOOK_TOLERANCE_SECONDS: i64 = 300;
/// The Standard Webhooks headers.
pub const HEADER_WEBHOOK_ID: &str = standardwebhooks::HEADER_WEBHOOK_ID;
pub const HEADER_WEBHOOK_TIMESTAMP: &str = standardwebhooks::HEADER_WEBHOOK_TIMESTAMP;
pub const HEADER_WEBHOOK_SIGNATURE: &str = standardwebhooks::HEADER_WEBHOOK_SIGNATURE;

/// Why `CONFIRM_SECRET` was refused (the value itself is never shown).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    #[error("it must hold one or more secrets `whsec_<base64 key>` separated by spaces")]
    Format,
    #[error("secret {index} is not `whsec_` followed by base64")]
    NotBase64 { index: usize },
    #[error(
        "secret {index} has a {bytes}-byte key; at least {MIN_WEBHOOK_KEY_BYTES} are required"
    )]
    ShortKey { index: usize, bytes: usize },
}

/// The keys confirm accepts (Standard Webhooks, v1 signatures): one or more,
/// so a key can be rotated without downtime (any one matching is enough).
#[derive(Clone)]
pub struct ConfirmSecrets(Vec<Vec<u8>>);

impl fmt::Debug for ConfirmSecrets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ConfirmSecrets({} x <redacted>)", self.0.len())
    }
}

impl ConfirmSecrets {
    /// Parses `CONFIRM_SECRET`: `whsec_<base64>` entries separated by spaces.
    pub fn parse(value: &str) -> Result<Self, SecretError> {
        let list = key_list::KeyList {
            prefix: WEBHOOK_SECRET_PREFIX,
            min_bytes: MIN_WEBHOOK_KEY_BYTES,
        };
        list.parse(value).map(Self).map_err(|e| match e {
            key_list::KeyListError::Empty => SecretError::Format,
            key_list::KeyListError::NotBase64 { index } => SecretError::NotBase64 { index },
            key_list::KeyListError::Short { index, bytes } => {
                SecretError::ShortKey { index, bytes }
            }
        })
    }

    /// The SHA-256 of each key (hex): what tells a key apart without it.
    pub fn key_fingerprints(&self) -> impl Iterator<Item = String> + '_ {
        self.0.iter().map(|key| hex::encode(Sha256::digest(key)))
    }

    /// The `webhook-signature` value a payment backend holding the first
    /// key sends (tests and the dev server's pay route use it).
    pub fn sign(&self, id: &str, timestamp: i64, body: &[u8]) -> Result<String, Error> {
        let key = self
            .0
            .first()
            .ok_or(Error::Unauthorized(Reason::KeysNotConfigured))?;
        standardwebhooks::Webhook::from_bytes(key.clone())
            .and_then(|w| w.sign(id, timestamp, body))
            .map_err(|e| Error::Corrupt(format!("signing a webhook failed: {e}")))
    }

    /// Checks a request's Standard Webhooks headers against its raw body:
    /// all three there, the timestamp within [`WEBHOOK_TOLERANCE_SECONDS`]
    /// of `now`, and a `v1` signature by any of the keys (compared in
    /// constant time by the `standardwebhooks` crate, which also re-checks
    /// the timestamp against the system clock). Every key is tried, so the
    /// time taken does not tell which one matched. A refusal names the
    /// first rule broken, in that order.
    pub fn verify(&self, headers: &HeaderMap, body: &[u8], now: Millis) -> Result<(), Error> {
        check_signature_headers(headers, now).map_err(Error::Unauthorized)?;
        let mut matched = false;
        for key in &self.0 {
            let ok = standardwebhooks::Webhook::from_bytes(key.clone())
                .and_then(|w| w.verify(body, headers))
                .is_ok();
            matched |= ok;
        }
        if matched {
            Ok(())
        } else {
            Err(Error::Unauthorized(Reason::SignatureMismatch))
        }
    }
}

/// The rules of the three headers that need no key: each there as text,
/// the timestamp fresh, and at least one `v1,<base64 of 32 bytes>` among
/// the signatures (other versions are skipped, as the standard says).
fn check_signature_headers(headers: &HeaderMap, now: Millis) -> Result<(), Reason> {
    let text = |name: &str| -> Result<&str, Reason> {
        let value = headers.get(name).ok_or(Reason::SignatureHeaderMissing)?;
        value.to_str().map_err(|_| Reason::SignatureMalformed)
    };
    let (_, timestamp, signatures) = (
        text(HEADER_WEBHOOK_ID)?,
        text(HEADER_WEBHOOK_TIMESTAMP)?,
        text(HEADER_WEBHOOK_SIGNATURE)?,
    );
    check_timestamp(timestamp, now)?;
    let is_v1 = |entry: &str| {
        entry.split_once(',').is_some_and(|(version, signature)| {
            version == "v1"
                && base64::engine::general_purpose::STANDARD
                    .decode(signature)
                    .is_ok_and(|mac| mac.len() == WEBHOOK_SIGNATURE_BYTES)
        })
    };
    if signatures.split(' ').any(is_v1) {
        Ok(())
    } else {
        Err(Reason::SignatureMalformed)
    }
}

/// Bytes of a `v1` signature (HMAC-SHA256).
const WEBHOOK_SIGNATURE_BYTES: usize = 32;

/// `webhook-timestamp` is unix seconds, digits only
/// (`signature-malformed` otherwise), at most the tolerance away from
/// `now` either way (`signature-timestamp` otherwise).
pub fn check_timestamp(raw: &str, now: Millis) -> Result<(), Reason> {
    if raw.is_empty() || raw.len() > 12 || !raw.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Reason::SignatureMalformed);
    }
    let seconds = raw.parse::<i64>().map_err(|_| Reason::SignatureMalformed)?;
    if (now.0.div_euclid(1000) - seconds).abs() <= WEBHOOK_TOLERANCE_SECONDS {
        Ok(())
    } else {
        Err(Reason::SignatureTimestamp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tests use `?` rather than unwrap: a failure reports the error.
    type TestResult = Result<(), Box<dyn std::error::Error>>;

    const KEY_A: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"; // the spec's example key
    const KEY_B: &str = "whsec_c2VhdGNsYWltLWxvY2FsLWRldi1rZXktTk9ULUZPUi1QUk9EVUNUSU9O";

    fn signed(
        secrets: &ConfirmSecrets,
        id: &str,
        ts: i64,
        body: &[u8],
    ) -> Result<HeaderMap, Box<dyn std::error::Error>> {
        let mut h = HeaderMap::new();
        h.insert(HEADER_WEBHOOK_ID, id.parse()?);
        h.insert(HEADER_WEBHOOK_TIMESTAMP, ts.to_string().parse()?);
        h.insert(
            HEADER_WEBHOOK_SIGNATURE,
            secrets.sign(id, ts, body)?.parse()?,
        );
        Ok(h)
    }

    #[test]
    fn the_standard_webhooks_example_verifies() -> TestResult {
        // The specification's published example: key, id, timestamp, body and signature.
        let secrets = ConfirmSecrets::parse(KEY_A)?;
        let body = br#"{"test": 2432232314}"#;
        let sig = secrets.sign("msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body)?;
        assert_eq!(sig, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
        Ok(())
    }

    #[test]
    fn any_configured_key_may_sign_for_rotation() -> TestResult {
        let now = crate::world::now();
        let body = b"{}";
        let old = signed(&ConfirmSecrets::parse(KEY_A)?, "m", now.0 / 1000, body)?;
        let new = signed(&ConfirmSecrets::parse(KEY_B)?, "m", now.0 / 1000, body)?;
        let both = ConfirmSecrets::parse(&format!("{KEY_B} {KEY_A}"))?;
        assert!(both.verify(&old, body, now).is_ok());
        assert!(both.verify(&new, body, now).is_ok());
        // Several signatures in one header: any valid one is enough.
        let mut multi = new.clone();
        let joined = format!("v1,AAAA {}", new[HEADER_WEBHOOK_SIGNATURE].to_str()?);
        multi.insert(HEADER_WEBHOOK_SIGNATURE, joined.parse()?);
        assert!(both.verify(&multi, body, now).is_ok());
        Ok(())
    }

    #[test]
    fn the_tolerance_is_300_seconds_either_way_inclusive() {
        let now = Millis(1_800_000_000_500);
        let at = |offset: i64| (1_800_000_000 + offset).to_string();
        for fresh in [0, -300, 300] {
            assert_eq!(check_timestamp(&at(fresh), now), Ok(()), "{fresh}");
        }
        for stale in [-301, 301] {
            assert_eq!(
                check_timestamp(&at(stale), now),
                Err(Reason::SignatureTimestamp),
                "{stale}"
            );
        }
        for junk in ["", "-1", "1e9", " 1800000000", "18000000000000000"] {
            assert_eq!(
                check_timestamp(junk, now),
                Err(Reason::SignatureMalformed),
                "{junk:?}"
            );
        }
    }

    /// Each broken rule of a signature is `401 unauthorized` naming it:
    /// a missing header, a timestamp that is not seconds or is stale, a
    /// signature header with no `v1` MAC, and one that does not match (a
    /// wrong key, a body changed after signing, another id).
    #[test]
    fn every_broken_signature_rule_is_named() -> TestResult {
        let secrets = ConfirmSecrets::parse(KEY_B)?;
        let now = crate::world::now();
        let ts = now.0 / 1000;
        let body = br#"{"orderId":"o","paymentId":"pi_1","seats":["A-1-1"]}"#;
        let headers = signed(&secrets, "msg_1", ts, body)?;
        let reason = |h: &HeaderMap, body: &[u8], keys: &ConfirmSecrets| {
            keys.verify(h, body, now).err().and_then(|e| e.reason())
        };
        assert!(secrets.verify(&headers, body, now).is_ok());
        let with =
            |name: &'static str, value: &str| -> Result<HeaderMap, Box<dyn std::error::Error>> {
                let mut h = headers.clone();
                h.insert(name, value.parse()?);
                Ok(h)
            };
        let signature = headers[HEADER_WEBHOOK_SIGNATURE].to_str()?.to_owned();
        let unprefixed = signature.trim_start_matches("v1,").to_owned();
        let cases: Vec<(&str, HeaderMap, &[u8], Reason)> = vec![
            (
                "stale",
                with(HEADER_WEBHOOK_TIMESTAMP, &(ts - 301).to_string())?,
                body,
                Reason::SignatureTimestamp,
            ),
            (
                "ms timestamp",
                with(HEADER_WEBHOOK_TIMESTAMP, &now.0.to_string())?,
                body,
                Reason::SignatureMalformed,
            ),
            (
                "ISO timestamp",
                with(HEADER_WEBHOOK_TIMESTAMP, "2026-12-05T00:00:00Z")?,
                body,
                Reason::SignatureMalformed,
            ),
            (
                "no v1, prefix",
                with(HEADER_WEBHOOK_SIGNATURE, &unprefixed)?,
                body,
                Reason::SignatureMalformed,
            ),
            (
                "hex signature",
                with(HEADER_WEBHOOK_SIGNATURE, &format!("v1,{}", "ab".repeat(32)))?,
                body,
                Reason::SignatureMalformed,
            ),
            (
                "re-serialised body",
                headers.clone(),
                br#"{"orderId": "o", "paymentId": "pi_1", "seats": ["A-1-1"]}"#,
                Reason::SignatureMismatch,
            ),
            (
                "another id",
                with(HEADER_WEBHOOK_ID, "msg_2")?,
                body,
                Reason::SignatureMismatch,
            ),
            (
                "another fresh timestamp",
                with(HEADER_WEBHOOK_TIMESTAMP, &(ts - 1).to_string())?,
                body,
                Reason::SignatureMismatch,
            ),
            (
                "another order's body",
                headers.clone(),
                br#"{"orderId":"p","paymentId":"pi_1","seats":["A-1-1"]}"#,
                Reason::SignatureMismatch,
            ),
        ];
        for (why, h, sent, expected) in cases {
            assert_eq!(reason(&h, sent, &secrets), Some(expected), "{why}");
        }
        for missing in [
            HEADER_WEBHOOK_ID,
            HEADER_WEBHOOK_TIMESTAMP,
            HEADER_WEBHOOK_SIGNATURE,
        ] {
            let mut h = headers.clone();
            h.remove(missing);
            assert_eq!(
                reason(&h, body, &secrets),
                Some(Reason::SignatureHeaderMissing),
                "without {missing}"
            );
        }
        let wrong_key = ConfirmSecrets::parse(KEY_A)?;
        assert_eq!(
            reason(&headers, body, &wrong_key),
            Some(Reason::SignatureMismatch)
        );
        Ok(())
    }

    #[test]
    fn secrets_must_be_whsec_base64_of_24_bytes_or_more() {
        assert!(ConfirmSecrets::parse(KEY_B).is_ok());
        assert_eq!(
            ConfirmSecrets::parse("  ").unwrap_err(),
            SecretError::Format
        );
        assert_eq!(
            ConfirmSecrets::parse("plain-text-secret-of-some-length").unwrap_err(),
            SecretError::NotBase64 { index: 1 }
        );
        assert_eq!(
            ConfirmSecrets::parse(&format!("{KEY_B} whsec_!!")).unwrap_err(),
            SecretError::NotBase64 { index: 2 }
        );
        // 18 bytes of key.
        assert_eq!(
            ConfirmSecrets::parse("whsec_MDEyMzQ1Njc4OWFiY2RlZmdo").unwrap_err(),
            SecretError::ShortKey {
                index: 1,
                bytes: 18
            }
        );
        assert!(
            !format!("{:?}", ConfirmSecrets::parse(KEY_B)).contains("c2Vh"),
            "debug output hides keys"
        );
    }
}
