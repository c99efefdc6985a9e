//! Buyers: people as the seller's own sign-in knows them, named by an
//! opaque id in a short-lived buyer token the seller signs. This module
//! holds the rules of the id, of the token's claims and of a verified
//! queue's one place per buyer; checking the signature is
//! `crate::buyer`'s (the one ES256 verifier, `crate::admission`).

use std::fmt;

use hmac::{Hmac, KeyInit, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use super::{EventId, Millis, VisitorId};
use crate::reason::Reason;

/// Longest buyer id.
pub const MAX_BUYER_ID_LEN: usize = 128;
/// Longest `BUYER_ISSUER`.
pub const MAX_BUYER_ISSUER_LEN: usize = 256;
/// The longest a buyer token may live: `exp` at most this after `iat`.
pub const MAX_BUYER_TOKEN_SECONDS: i64 = 3_600;
/// How far in the future a buyer token's `iat` and `nbf` may be (the
/// seller's clock); `exp` has no leeway.
pub const BUYER_TOKEN_SKEW_MS: i64 = 5_000;

/// A buyer's opaque id: 1–128 characters of `A–Z a–z 0–9 . _ : | -`.
/// It never reaches a log line: its `Debug` is redacted and it has no
/// `Display`; [`BuyerId::as_str`] is for replies, tokens and keys.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct BuyerId(String);

impl fmt::Debug for BuyerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BuyerId(redacted)")
    }
}

impl BuyerId {
    /// The id, if it keeps the rule; `None` otherwise (a token naming such
    /// a buyer is refused as a whole).
    pub fn parse(value: &str) -> Option<Self> {
        let allowed =
            |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '|' | '-');
        (!value.is_empty() && value.len() <= MAX_BUYER_ID_LEN && value.chars().all(allowed))
            .then(|| Self(value.to_owned()))
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A buyer token's claims: all required but `nbf`. `aud` is one string
/// (an array does not deserialize, so it is refused).
#[derive(Serialize, Deserialize, Clone, PartialEq, Eq)]
pub struct BuyerClaims {
    pub iss: String,
    pub aud: String,
    pub sub: String,
    pub iat: i64,
    pub exp: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nbf: Option<i64>,
}

impl BuyerClaims {
    /// The buyer these claims name, if they hold at `now` (their signature,
    /// `iss` and `aud` already checked): `sub` a buyer id, `exp` at most
    /// [`MAX_BUYER_TOKEN_SECONDS`] after `iat`, `iat` and `nbf` not later
    /// than [`BUYER_TOKEN_SKEW_MS`] from now, and `now < exp`.
    /// Otherwise the first rule broken, in that order: lifetime, times,
    /// expiry, `sub`.
    pub fn buyer_at(&self, now: Millis) -> Result<BuyerId, Reason> {
        let ahead = |at: i64| at.saturating_mul(1_000) > now.0 + BUYER_TOKEN_SKEW_MS;
        if self.exp.saturating_sub(self.iat) > MAX_BUYER_TOKEN_SECONDS {
            Err(Reason::TokenLifetime)
        } else if ahead(self.iat) || self.nbf.is_some_and(ahead) {
            Err(Reason::TokenNotYetValid)
        } else if now.0 >= self.exp.saturating_mul(1_000) {
            Err(Reason::TokenExpired)
        } else {
            BuyerId::parse(&self.sub).ok_or(Reason::TokenSubject)
        }
    }
}

/// Who may join a queue: any browser, or buyers the seller vouches for,
/// one place each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Buyers {
    #[default]
    Anonymous,
    Verified,
}

impl Buyers {
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "anonymous" => Some(Self::Anonymous),
            "verified" => Some(Self::Verified),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Anonymous => "anonymous",
            Self::Verified => "verified",
        }
    }
}

/// Domain separation of the one-place-per-buyer visitor id.
const VISITOR_OF_BUYER_LABEL: &str = "seatclaim visitor of a buyer v2";

/// The visitor a buyer is in `generation` of `event`'s verified queue: the
/// same for every join, so the join is one conditional write on that
/// visitor's own key and a second join finds it. It is 32 hex digits, as
/// a random visitor id is: a MAC under the generation's server `key` (its
/// `DRAW_SECRET` key, which it keeps for life), so nobody who knows a
/// buyer id can tell from visitor-status whether that buyer joined.
pub fn visitor_of_buyer(
    key: &[u8],
    event: &EventId,
    generation: u64,
    buyer: &BuyerId,
) -> Option<VisitorId> {
    // HMAC takes a key of any length: `new_from_slice` cannot fail.
    let mut mac = Hmac::<Sha256>::new_from_slice(key).ok()?;
    for part in [
        VISITOR_OF_BUYER_LABEL,
        event.as_str(),
        &generation.to_string(),
        buyer.as_str(),
    ] {
        mac.update(part.as_bytes());
        mac.update(&[0]);
    }
    VisitorId::parse(&hex::encode(&mac.finalize().into_bytes()[..16])).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims() -> BuyerClaims {
        BuyerClaims {
            iss: "shop".into(),
            aud: "gala".into(),
            sub: "user:42|eu".into(),
            iat: 1_000,
            exp: 1_000 + MAX_BUYER_TOKEN_SECONDS,
            nbf: None,
        }
    }

    #[test]
    fn buyer_ids_keep_the_rule() {
        for good in ["a", "user:42|eu", "A.b_c-d", &"x".repeat(128)] {
            assert!(BuyerId::parse(good).is_some(), "{good}");
        }
        for bad in ["", "a@b.com", "a b", "a#b", "é", &"x".repeat(129)] {
            assert!(BuyerId::parse(bad).is_none(), "{bad}");
        }
        let id = BuyerId::parse("user:42").map(|b| format!("{b:?}"));
        assert_eq!(id.as_deref(), Some("BuyerId(redacted)"));
    }

    #[test]
    fn claims_hold_inside_their_times_only() {
        let at = |s: i64| Millis(s * 1_000);
        let c = claims();
        let later = BuyerClaims {
            nbf: Some(1_010),
            ..claims()
        };
        let longer = BuyerClaims {
            exp: c.exp + 1,
            ..claims()
        };
        let email = BuyerClaims {
            sub: "a@b.com".into(),
            ..claims()
        };
        let expired_and_long = BuyerClaims {
            exp: c.exp + 1,
            ..claims()
        };
        // (claims, now, the reason refused or None for accepted, why)
        let table: [(&BuyerClaims, Millis, Option<Reason>, &str); 10] = [
            (&c, at(1_000), None, "at iat"),
            (&c, Millis(c.exp * 1_000 - 1), None, "just before exp"),
            (
                &c,
                at(c.exp),
                Some(Reason::TokenExpired),
                "refused from exp on",
            ),
            (&c, Millis(995_000), None, "iat within 5 s ahead"),
            (
                &c,
                Millis(994_999),
                Some(Reason::TokenNotYetValid),
                "iat further ahead",
            ),
            (
                &longer,
                at(1_000),
                Some(Reason::TokenLifetime),
                "over an hour",
            ),
            (
                &later,
                at(1_004),
                Some(Reason::TokenNotYetValid),
                "before nbf",
            ),
            (&later, at(1_005), None, "nbf within 5 s ahead"),
            (
                &email,
                at(1_000),
                Some(Reason::TokenSubject),
                "sub not an id",
            ),
            (
                &expired_and_long,
                at(c.exp + 2),
                Some(Reason::TokenLifetime),
                "lifetime first",
            ),
        ];
        for (claims, now, refused, why) in table {
            assert_eq!(claims.buyer_at(now).err(), refused, "{why}");
        }
    }

    #[test]
    fn a_buyer_is_one_visitor_per_generation() -> Result<(), Box<dyn std::error::Error>> {
        let (gala, other) = (EventId::parse("gala")?, EventId::parse("other")?);
        let buyer = BuyerId::parse("user:42").ok_or("id")?;
        let key = b"a server key of thirty-two bytes";
        let one = visitor_of_buyer(key, &gala, 1, &buyer);
        assert_eq!(one, visitor_of_buyer(key, &gala, 1, &buyer));
        assert_ne!(one, visitor_of_buyer(key, &gala, 2, &buyer));
        assert_ne!(one, visitor_of_buyer(key, &other, 1, &buyer));
        assert_ne!(one, visitor_of_buyer(b"another key", &gala, 1, &buyer));
        let someone = BuyerId::parse("user:43").ok_or("id")?;
        assert_ne!(one, visitor_of_buyer(key, &gala, 1, &someone));
        assert_eq!(one.map(|v| v.as_str().len()), Some(32));
        assert!(Buyers::parse("verified") == Some(Buyers::Verified));
        assert!(Buyers::parse("Verified").is_none());
        Ok(())
    }
}
