//! Hold tokens (order routes) and payment signatures (confirm).

use std::fmt;

use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::domain::{EventId, Millis};
use crate::error::Error;

/// Random bytes in a hold token: 256 bits, twice the contract's minimum.
const TOKEN_SECRET_BYTES: usize = 32;
const TOKEN_SEPARATOR: char = '~';

/// The bearer secret of one order: `{eventId}~{expiresAtMs}~{64 hex}`.
///
/// The event id and expiry ride along in the clear so that get-seat and
/// drop-seat can build the seat's key and the hold's expiry without reading
/// the order first: one round trip. They are trustworthy because the store's
/// transaction condition compares the SHA-256 of the *whole* token with the
/// hash stored on the order; a client that edits them fails that check and
/// nothing is written. Only the hash is ever stored.
#[derive(Clone, PartialEq, Eq)]
pub struct HoldToken {
    raw: String,
    event_id: EventId,
    expires_at: Millis,
}

impl fmt::Debug for HoldToken {
    // Never print the secret, not even in debug output.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HoldToken").field("event_id", &self.event_id).finish_non_exhaustive()
    }
}

impl HoldToken {
    pub fn generate(event_id: &EventId, expires_at: Millis) -> Result<Self, Error> {
        let mut secret = [0u8; TOKEN_SECRET_BYTES];
        getrandom::fill(&mut secret)
            .map_err(|e| Error::Corrupt(format!("no randomness for a hold token: {e}")))?;
        let raw = format!(
            "{event_id}{TOKEN_SEPARATOR}{}{TOKEN_SEPARATOR}{}",
            expires_at.0,
            hex::encode(secret)
        );
        Ok(Self { raw, event_id: event_id.clone(), expires_at })
    }

    /// Parses a presented token; `None` if it is not shaped like ours.
    pub fn parse(raw: &str) -> Option<Self> {
        let mut parts = raw.split(TOKEN_SEPARATOR);
        let (event, expires, secret) = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some()
            || secret.len() != TOKEN_SECRET_BYTES * 2
            || !secret.bytes().all(|b| b.is_ascii_hexdigit())
        {
            return None;
        }
        let event_id = EventId::parse(event).ok()?;
        let expires_at = Millis(expires.parse().ok()?);
        Some(Self { raw: raw.to_owned(), event_id, expires_at })
    }

    /// From an `Authorization: Bearer <token>` header value.
    pub fn from_authorization(header: Option<&str>) -> Option<Self> {
        let value = header?.trim();
        let (scheme, token) = value.split_once(' ')?;
        if !scheme.eq_ignore_ascii_case("bearer") {
            return None;
        }
        Self::parse(token.trim())
    }

    pub fn as_str(&self) -> &str {
        &self.raw
    }
    pub fn event_id(&self) -> &EventId {
        &self.event_id
    }
    pub fn expires_at(&self) -> Millis {
        self.expires_at
    }
    /// What the order stores. A fast hash suffices: the token carries 256
    /// random bits, so there is nothing to brute-force.
    pub fn hash(&self) -> String {
        hex::encode(Sha256::digest(self.raw.as_bytes()))
    }
    /// Constant-time comparison with a stored hash.
    pub fn matches(&self, stored_hash: &str) -> bool {
        self.hash().as_bytes().ct_eq(stored_hash.as_bytes()).into()
    }
}

/// Shortest `CONFIRM_SECRET` accepted: 256 bits of hex or base64.
pub const MIN_CONFIRM_SECRET_LEN: usize = 32;

/// The HMAC key shared with the payment backend.
#[derive(Clone)]
pub struct ConfirmSecret(Vec<u8>);

impl fmt::Debug for ConfirmSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ConfirmSecret(<redacted>)")
    }
}

impl ConfirmSecret {
    pub fn new(secret: &str) -> Option<Self> {
        (secret.len() >= MIN_CONFIRM_SECRET_LEN).then(|| Self(secret.as_bytes().to_vec()))
    }

    fn mac(&self) -> Hmac<Sha256> {
        // HMAC accepts keys of any length; `new_from_slice` cannot fail for it.
        <Hmac<Sha256> as KeyInit>::new_from_slice(&self.0)
            .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"))
    }

    /// `sha256=<hex>` for `body`: what the payment backend sends.
    pub fn sign(&self, body: &[u8]) -> String {
        let mut mac = self.mac();
        mac.update(body);
        format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
    }

    /// Checks an `X-Signature: sha256=<hex>` header against the raw body in
    /// constant time (the hmac crate's `verify_slice`).
    pub fn verify(&self, header: Option<&str>, body: &[u8]) -> Result<(), Error> {
        let hex_sig = header
            .and_then(|h| h.trim().strip_prefix("sha256="))
            .ok_or(Error::Unauthorized)?;
        let signature = hex::decode(hex_sig).map_err(|_| Error::Unauthorized)?;
        let mut mac = self.mac();
        mac.update(body);
        mac.verify_slice(&signature).map_err(|_| Error::Unauthorized)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tests use `?` rather than unwrap: a failure reports the error.
    type TestResult = Result<(), Box<dyn std::error::Error>>;

    #[test]
    fn token_round_trips_and_hashes() -> TestResult {
        let event = EventId::parse("gala")?;
        let t = HoldToken::generate(&event, Millis(1234))?;
        let parsed = HoldToken::parse(t.as_str()).ok_or("the token does not parse")?;
        assert_eq!(parsed.event_id(), &event);
        assert_eq!(parsed.expires_at(), Millis(1234));
        assert!(parsed.matches(&t.hash()));
        let other = HoldToken::generate(&event, Millis(1234))?;
        assert_ne!(other.as_str(), t.as_str(), "tokens are random");
        assert!(!other.matches(&t.hash()));
        assert!(!format!("{t:?}").contains(&t.as_str()[10..]), "debug output hides the secret");
        Ok(())
    }

    #[test]
    fn token_parsing_rejects_junk() {
        for bad in ["", "a~1", "a~1~zz", "a#~1~00", &format!("a~x~{}", "0".repeat(64)), &format!("a~1~{}~", "0".repeat(64))] {
            assert!(HoldToken::parse(bad).is_none(), "{bad}");
        }
        let good = format!("a~1~{}", "0".repeat(64));
        assert!(HoldToken::from_authorization(Some(&format!("Bearer {good}"))).is_some());
        assert!(HoldToken::from_authorization(Some(&format!("bearer  {good}"))).is_some());
        assert!(HoldToken::from_authorization(Some(&format!("Basic {good}"))).is_none());
        assert!(HoldToken::from_authorization(None).is_none());
    }

    #[test]
    fn signatures_verify_only_for_the_exact_body_and_key() -> TestResult {
        let s = ConfirmSecret::new("0123456789abcdef0123456789abcdef").ok_or("secret refused")?;
        let body = br#"{"paymentId":"pi_1"}"#;
        let sig = s.sign(body);
        assert!(s.verify(Some(&sig), body).is_ok());
        assert!(s.verify(Some(&sig), br#"{"paymentId":"pi_2"}"#).is_err());
        assert!(s.verify(None, body).is_err());
        assert!(s.verify(Some("sha256=zz"), body).is_err());
        assert!(s.verify(Some(sig.trim_start_matches("sha256=")), body).is_err());
        let other = ConfirmSecret::new("ffffffffffffffffffffffffffffffff").ok_or("secret refused")?;
        assert!(other.verify(Some(&sig), body).is_err());
        assert!(ConfirmSecret::new("short").is_none());
        Ok(())
    }

    #[test]
    fn rfc4231_test_vector() -> TestResult {
        // RFC 4231 test case 2 ("Jefe"), padded key check is not possible with
        // a 4-byte key here, so compare against the raw HMAC instead.
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(b"Jefe").map_err(|_| "HMAC refused the key")?;
        mac.update(b"what do ya want for nothing?");
        assert_eq!(
            hex::encode(mac.finalize().into_bytes()),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        Ok(())
    }
}
