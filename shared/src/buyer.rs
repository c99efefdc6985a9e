//! Buyer tokens (docs/API.md, "Buyers"): ES256 JWTs the seller's sign-in
//! signs, naming a buyer. seatclaim holds only the public keys
//! (`BUYER_VERIFY_KEYS`) and the issuer (`BUYER_ISSUER`), and checks them
//! with the verifier admissions use ([`VerifyKeys::decode`]); the rules of
//! the claims are the domain's ([`BuyerClaims::buyer_at`]). Neither a
//! token nor a buyer id is ever logged.

use std::fmt;

use lambda_http::Request;

use crate::admission::{KeyError, VerifyKeys};
use crate::auth::DrawSecrets;
use crate::domain::buyer::{BuyerClaims, BuyerId, MAX_BUYER_ISSUER_LEN};
use crate::domain::buyer_limit::BuyerRef;
use crate::domain::{EventHead, EventId, Millis};
use crate::error::Error;
use crate::reason::Reason;

/// The header a buyer token rides in (`Authorization` carries hold
/// tokens, visitor tokens and admissions).
pub const BUYER_TOKEN_HEADER: &str = "x-buyer-token";
pub const BUYER_VERIFY_KEYS: &str = "BUYER_VERIFY_KEYS";
pub const BUYER_ISSUER: &str = "BUYER_ISSUER";

/// The `typ` every buyer token's header must carry (RFC 8725, 3.11): a JWT
/// the seller's key signs for any other purpose is not a buyer token.
pub const BUYER_TOKEN_TYPE: &str = "seatclaim-buyer+jwt";

/// The claims every buyer token must carry (`nbf` is optional).
const REQUIRED_CLAIMS: [&str; 5] = ["iss", "aud", "sub", "iat", "exp"];

/// What verifies buyer tokens: the seller's public keys and its issuer.
#[derive(Clone)]
pub struct BuyerKeys {
    keys: VerifyKeys,
    issuer: String,
}

impl fmt::Debug for BuyerKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BuyerKeys({:?})", self.keys)
    }
}

/// Why `BUYER_VERIFY_KEYS` or `BUYER_ISSUER` was refused.
#[derive(Debug, thiserror::Error)]
pub enum BuyerConfigError {
    #[error("{BUYER_VERIFY_KEYS}: {0}")]
    Keys(#[source] KeyError),
    #[error("{BUYER_ISSUER} must be 1 to {MAX_BUYER_ISSUER_LEN} characters")]
    Issuer,
}

impl BuyerKeys {
    /// The two variables' values: a public JWK Set of P-256 keys (a
    /// private part is refused) and an issuer of 1–256 characters.
    pub fn parse(keys: &str, issuer: &str) -> Result<Self, BuyerConfigError> {
        if issuer.is_empty() || issuer.chars().count() > MAX_BUYER_ISSUER_LEN {
            return Err(BuyerConfigError::Issuer);
        }
        Ok(Self {
            keys: VerifyKeys::parse(keys).map_err(BuyerConfigError::Keys)?,
            issuer: issuer.to_owned(),
        })
    }

    /// The keys and issuer as they are (the dev server's own pair).
    pub fn new(keys: VerifyKeys, issuer: &str) -> Self {
        Self {
            keys,
            issuer: issuer.to_owned(),
        }
    }

    pub fn keys(&self) -> &VerifyKeys {
        &self.keys
    }

    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The buyer `token` names for `event` at `now`, or
    /// `401 buyer-token-invalid` naming the rule it broke.
    pub fn verify(&self, token: &str, event: &EventId, now: Millis) -> Result<BuyerId, Error> {
        self.keys
            .decode::<BuyerClaims>(
                token,
                Some(BUYER_TOKEN_TYPE),
                (&self.issuer, event.as_str()),
                &REQUIRED_CLAIMS,
            )
            .and_then(|claims| claims.buyer_at(now))
            .map_err(Error::BuyerTokenInvalid)
    }

    /// The buyer of a request about `event`: its `X-Buyer-Token`, which
    /// must be there (`401 buyer-token-required`) and valid
    /// (`401 buyer-token-invalid`).
    pub fn buyer_of(&self, req: &Request, event: &EventId, now: Millis) -> Result<BuyerId, Error> {
        let Some(raw) = req.headers().get(BUYER_TOKEN_HEADER) else {
            return Err(Error::BuyerTokenRequired);
        };
        // A header that is not text is a token, just not a valid one.
        let token = raw
            .to_str()
            .map_err(|_| Error::BuyerTokenInvalid(Reason::TokenMalformed))?
            .trim();
        if token.is_empty() {
            return Err(Error::BuyerTokenRequired);
        }
        self.verify(token, event, now)
    }
}

/// Whose record counts `buyer` on `event`: its ref under the `DRAW_SECRET`
/// key the event was created with, or the plain ref of an event created
/// before refs were keyed. A key retired while its event lives is a fault
/// (OPERATIONS.md, "The draw secret").
pub fn buyer_ref(
    draw: &DrawSecrets,
    event: &EventHead,
    buyer: &BuyerId,
) -> Result<BuyerRef, Error> {
    let Some(version) = &event.buyer_key else {
        return Ok(BuyerRef::unkeyed(&event.event_id, buyer));
    };
    draw.buyer_ref(version, &event.event_id, buyer)
        .ok_or_else(|| {
            Error::Corrupt(
                "the DRAW_SECRET key this event's buyers are counted under was retired".into(),
            )
        })
}

#[cfg(test)]
#[path = "buyer_tests.rs"]
mod tests;
