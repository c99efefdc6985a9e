//! Admission tokens (DESIGN.md, "Admission tokens"): ES256 JWTs that let a
//! visitor open orders for a while. Only the function that admits holds
//! the private keys ([`SigningKeys`], `ADMISSION_SIGNING_KEYS`); create-order
//! and the JWKS route get the public ones ([`VerifyKeys`],
//! `ADMISSION_VERIFY_KEYS`), so anyone can verify an admission from the
//! published key set without calling seatclaim.
//!
//! Both variables are JWK Sets (RFC 7517) of P-256 keys with a `kid`; the
//! first signing key signs, and every verify key is accepted (rotation: add
//! the new key first in both, keep the retired one in the verify set until
//! what it signed has expired).

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use p256::elliptic_curve::sec1::{FromEncodedPoint, ToEncodedPoint};
use p256::pkcs8::EncodePrivateKey;
use serde::{Deserialize, Serialize};
use std::fmt;

use crate::domain::{EventId, Millis};
use crate::error::Error;
use crate::reason::Reason;

/// The `iss` of every admission.
pub const ISSUER: &str = "seatclaim";
/// How far in the future an admission's `nbf` may be and still count
/// (another host's clock); `exp` has no leeway at all.
pub const NOT_BEFORE_SKEW_MS: i64 = 5_000;

/// Why a key set was refused (never the key itself).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum KeyError {
    #[error("not a JWK Set: {0}")]
    NotAJwkSet(String),
    #[error("the set has no keys")]
    Empty,
    #[error("key {index}: {reason}")]
    BadKey { index: usize, reason: String },
}

/// One key of a JWK Set as we accept it: EC, P-256, with a `kid`, and
/// where it says so, for ES256 (`alg`) and for signatures (`use`).
#[derive(Deserialize)]
struct JwkIn {
    kty: String,
    crv: String,
    kid: Option<String>,
    alg: Option<String>,
    #[serde(rename = "use")]
    use_: Option<String>,
    x: Option<String>,
    y: Option<String>,
    d: Option<String>,
}

#[derive(Deserialize)]
struct JwkSetIn {
    keys: Vec<JwkIn>,
}

/// A public key as the JWKS publishes it.
#[derive(Serialize, Clone, PartialEq, Eq)]
pub struct PublicJwk {
    pub kty: &'static str,
    pub crv: &'static str,
    pub x: String,
    pub y: String,
    pub kid: String,
    pub alg: &'static str,
    #[serde(rename = "use")]
    pub use_: &'static str,
}

impl PublicJwk {
    fn new(kid: String, x: String, y: String) -> Self {
        Self {
            kty: "EC",
            crv: "P-256",
            x,
            y,
            kid,
            alg: "ES256",
            use_: "sig",
        }
    }
}

/// Each key of the JWK Set `json`, made by `key` from the JWK and its
/// checked `kid`; a refusal names the key's index and why.
fn parse_keys<T>(
    json: &str,
    key: impl Fn(&JwkIn, String) -> Result<T, String>,
) -> Result<Vec<T>, KeyError> {
    let set: JwkSetIn =
        serde_json::from_str(json).map_err(|e| KeyError::NotAJwkSet(shape_error(&e)))?;
    if set.keys.is_empty() {
        return Err(KeyError::Empty);
    }
    let mut seen = Vec::new();
    set.keys
        .iter()
        .enumerate()
        .map(|(index, jwk)| {
            checked_kid(jwk, &mut seen)
                .and_then(|kid| {
                    // The kid is public (the JWKS publishes it): naming it
                    // tells an operator which key to fix.
                    let named = |reason: String| format!("kid {kid}: {reason}");
                    checked_purpose(jwk).map_err(named)?;
                    key(jwk, kid.clone()).map_err(named)
                })
                .map_err(|reason| KeyError::BadKey { index, reason })
        })
        .collect()
}

/// What is wrong with a set that does not parse, and where, never its
/// text: serde_json's own message quotes the values it met, and a signing
/// key set is a secret.
fn shape_error(e: &serde_json::Error) -> String {
    let what = match e.classify() {
        serde_json::error::Category::Io => "unreadable",
        serde_json::error::Category::Syntax => "not JSON",
        serde_json::error::Category::Data => "JSON, but not a set of EC keys",
        serde_json::error::Category::Eof => "cut short",
    };
    format!("{what} (line {}, column {})", e.line(), e.column())
}

/// A 32-byte base64url coordinate or scalar.
fn field(value: Option<&String>, name: &str) -> Result<[u8; 32], String> {
    let raw = value.ok_or_else(|| format!("no {name}"))?;
    let bytes = URL_SAFE_NO_PAD
        .decode(raw)
        .map_err(|_| format!("{name} is not base64url"))?;
    bytes
        .try_into()
        .map_err(|_| format!("{name} is not 32 bytes"))
}

/// Checks what every key needs: EC, P-256 and a unique, non-empty `kid`.
fn checked_kid(jwk: &JwkIn, seen: &mut Vec<String>) -> Result<String, String> {
    if jwk.kty != "EC" || jwk.crv != "P-256" {
        return Err("only EC keys on P-256 are accepted".into());
    }
    let kid = jwk
        .kid
        .clone()
        .filter(|k| !k.trim().is_empty())
        .ok_or("no kid")?;
    if seen.contains(&kid) {
        return Err(format!("kid {kid} appears twice"));
    }
    seen.push(kid.clone());
    Ok(kid)
}

/// A key's `alg` and `use`, where given, honoured: a key for another
/// algorithm or for encryption is not one to verify ES256 signatures with.
fn checked_purpose(jwk: &JwkIn) -> Result<(), String> {
    if jwk.alg.as_deref().is_some_and(|alg| alg != "ES256") {
        return Err("its alg is not ES256".into());
    }
    if jwk.use_.as_deref().is_some_and(|u| u != "sig") {
        return Err("its use is not sig".into());
    }
    Ok(())
}

/// Whether (x, y) is a point of P-256 (not the identity, on the curve):
/// a mistyped coordinate is refused at start-up, not at every token.
fn on_p256(x: &[u8; 32], y: &[u8; 32]) -> bool {
    let point = p256::EncodedPoint::from_affine_coordinates(x.into(), y.into(), false);
    p256::PublicKey::from_encoded_point(&point).is_some().into()
}

/// Whether a header's `typ` is the media type `want`: compared without
/// regard to case, `application/` allowed before it (RFC 7515, 4.1.9).
fn is_type(typ: Option<&str>, want: &str) -> bool {
    typ.is_some_and(|typ| {
        let lower = typ.to_ascii_lowercase();
        let bare = lower.strip_prefix("application/").unwrap_or(&lower);
        bare == want.to_ascii_lowercase()
    })
}

struct SigningKey {
    kid: String,
    key: EncodingKey,
    public: PublicJwk,
}

/// `ADMISSION_SIGNING_KEYS`: the private keys; the first signs.
pub struct SigningKeys(Vec<SigningKey>);

impl fmt::Debug for SigningKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kids: Vec<&str> = self.0.iter().map(|k| k.kid.as_str()).collect();
        write!(f, "SigningKeys({kids:?}, private keys redacted)")
    }
}

impl Clone for SigningKeys {
    fn clone(&self) -> Self {
        Self(
            self.0
                .iter()
                .map(|k| SigningKey {
                    kid: k.kid.clone(),
                    key: k.key.clone(),
                    public: k.public.clone(),
                })
                .collect(),
        )
    }
}

impl SigningKeys {
    pub fn parse(json: &str) -> Result<Self, KeyError> {
        parse_keys(json, Self::key).map(Self)
    }

    fn key(jwk: &JwkIn, kid: String) -> Result<SigningKey, String> {
        let d = field(jwk.d.as_ref(), "d")?;
        let secret = p256::SecretKey::from_slice(&d).map_err(|_| "d is not a P-256 scalar")?;
        let point = secret.public_key().to_encoded_point(false);
        let (x, y) = match (point.x(), point.y()) {
            (Some(x), Some(y)) => (URL_SAFE_NO_PAD.encode(x), URL_SAFE_NO_PAD.encode(y)),
            _ => return Err("d gives no public point".into()),
        };
        // A set that names its public point must name this key's.
        if jwk.x.as_ref().is_some_and(|given| *given != x)
            || jwk.y.as_ref().is_some_and(|given| *given != y)
        {
            return Err("x and y are not d's public key".into());
        }
        let der = secret
            .to_pkcs8_der()
            .map_err(|_| "d cannot be encoded as PKCS#8")?;
        Ok(SigningKey {
            key: EncodingKey::from_ec_der(der.as_bytes()),
            public: PublicJwk::new(kid.clone(), x, y),
            kid,
        })
    }

    /// The public half of every key: what `ADMISSION_VERIFY_KEYS` holds
    /// (the dev server and the tests derive it so).
    pub fn verify_keys(&self) -> VerifyKeys {
        VerifyKeys::from_public(self.0.iter().map(|k| k.public.clone()).collect())
            .unwrap_or_else(|_| VerifyKeys(Vec::new()))
    }

    /// Every key's public `x` coordinate (base64url): what tells a key
    /// apart without its private part.
    pub fn public_xs(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|k| k.public.x.as_str())
    }

    /// The token for `claims` (an admission's), signed by the first key,
    /// its `kid` in the header and `typ` JWT.
    pub fn sign(&self, claims: &impl Serialize) -> Result<String, Error> {
        self.sign_as(Some("JWT"), claims)
    }

    /// [`Self::sign`] with the header's `typ`, or none (a development
    /// buyer token's is [`crate::buyer::BUYER_TOKEN_TYPE`]).
    pub fn sign_as(&self, typ: Option<&str>, claims: &impl Serialize) -> Result<String, Error> {
        let first = self
            .0
            .first()
            .ok_or_else(|| Error::Corrupt("no signing key".into()))?;
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(first.kid.clone());
        header.typ = typ.map(str::to_owned);
        jsonwebtoken::encode(&header, claims, &first.key)
            .map_err(|e| Error::Corrupt(format!("signing a token failed: {e}")))
    }
}

struct VerifyKey {
    public: PublicJwk,
    key: DecodingKey,
}

/// `ADMISSION_VERIFY_KEYS`: the public keys every admission is checked
/// against, and what the JWKS route publishes.
#[derive(Clone)]
pub struct VerifyKeys(Vec<std::sync::Arc<VerifyKey>>);

impl fmt::Debug for VerifyKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kids: Vec<&str> = self.0.iter().map(|k| k.public.kid.as_str()).collect();
        write!(f, "VerifyKeys({kids:?})")
    }
}

impl VerifyKeys {
    pub fn parse(json: &str) -> Result<Self, KeyError> {
        Self::from_public(parse_keys(json, |jwk, kid| {
            if jwk.d.is_some() {
                return Err("a verify key must not carry its private part (d)".into());
            }
            let x = field(jwk.x.as_ref(), "x")?;
            let y = field(jwk.y.as_ref(), "y")?;
            if !on_p256(&x, &y) {
                return Err("x and y are not a point on P-256".into());
            }
            Ok(PublicJwk::new(
                kid,
                URL_SAFE_NO_PAD.encode(x),
                URL_SAFE_NO_PAD.encode(y),
            ))
        })?)
    }

    fn from_public(keys: Vec<PublicJwk>) -> Result<Self, KeyError> {
        keys.into_iter()
            .enumerate()
            .map(|(index, public)| {
                let key = DecodingKey::from_ec_components(&public.x, &public.y).map_err(|_| {
                    KeyError::BadKey {
                        index,
                        reason: "x and y are not a point on P-256".into(),
                    }
                })?;
                Ok(std::sync::Arc::new(VerifyKey { public, key }))
            })
            .collect::<Result<_, _>>()
            .map(Self)
    }

    /// The JWK Set the JWKS route serves: public parameters only.
    /// Every key's public `x` coordinate (base64url).
    pub fn public_xs(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|k| k.public.x.as_str())
    }

    pub fn jwks(&self) -> serde_json::Value {
        let keys: Vec<&PublicJwk> = self.0.iter().map(|k| &k.public).collect();
        serde_json::json!({ "keys": keys })
    }

    /// The claims of `token` if it is signed with ES256 (no other `alg`,
    /// `none` included) by the key of this set its `kid` names, its header's
    /// `typ` is `typ` where one is asked for, and its `iss` and `aud` are
    /// `issuer` and `audience`, with every claim of `required` present.
    /// The times are the caller's to judge, on its own clock
    /// ([`AdmissionClaims::check_at`], `crate::buyer`): the one verifier
    /// of both kinds of token seatclaim takes.
    pub fn decode<C: serde::de::DeserializeOwned>(
        &self,
        token: &str,
        typ: Option<&str>,
        (issuer, audience): (&str, &str),
        required: &[&str],
    ) -> Result<C, Reason> {
        let header = jsonwebtoken::decode_header(token).map_err(|_| unreadable_header(token))?;
        if header.alg != Algorithm::ES256 {
            return Err(Reason::TokenAlgorithm);
        }
        if typ.is_some_and(|want| !is_type(header.typ.as_deref(), want)) {
            return Err(Reason::TokenType);
        }
        let key = header
            .kid
            .and_then(|kid| self.0.iter().find(|k| k.public.kid == kid))
            .ok_or(Reason::TokenKeyUnknown)?;
        let mut validation = Validation::new(Algorithm::ES256);
        validation.set_audience(&[audience]);
        validation.set_issuer(&[issuer]);
        // Presence is checked below, for every claim `required` names:
        // the verifier's own check knows only some and calls a claim of
        // the wrong type missing.
        validation.set_required_spec_claims::<&str>(&[]);
        // The clock is the caller's (passed in), checked without leeway.
        validation.validate_exp = false;
        validation.validate_nbf = false;
        validation.leeway = 0;
        // Decoded as JSON first, so a missing claim is told apart from a
        // claim of the wrong type.
        let claims = jsonwebtoken::decode::<serde_json::Value>(token, &key.key, &validation)
            .map_err(|e| refusal_of(e.kind()))?
            .claims;
        if required.iter().any(|claim| claims.get(claim).is_none()) {
            return Err(Reason::TokenClaimMissing);
        }
        serde_json::from_value(claims).map_err(|_| Reason::TokenClaimInvalid)
    }

    /// The admission in `token` if it is ours, for `event`, and live at
    /// `now`: [`Self::decode`] with `iss` seatclaim and `aud` the event,
    /// `nbf` not in the future (within [`NOT_BEFORE_SKEW_MS`]) and
    /// `now < exp` (no leeway). Anything else is `401 unauthorized`, its
    /// reason the rule that failed.
    pub fn verify(
        &self,
        token: &str,
        event: &EventId,
        now: Millis,
    ) -> Result<AdmissionClaims, Error> {
        self.decode::<AdmissionClaims>(token, None, (ISSUER, event.as_str()), &ADMISSION_CLAIMS)
            .and_then(|claims| claims.check_at(now).map(|()| claims))
            .map_err(Error::Unauthorized)
    }
}

/// Why a token's header could not be read: an `alg` the verifier does
/// not know (`none` among them) is still a wrong algorithm.
fn unreadable_header(token: &str) -> Reason {
    let alg = token
        .split('.')
        .next()
        .and_then(|part| URL_SAFE_NO_PAD.decode(part).ok())
        .and_then(|json| serde_json::from_slice::<serde_json::Value>(&json).ok())
        .and_then(|header| {
            header
                .get("alg")
                .and_then(|a| a.as_str().map(str::to_owned))
        });
    match alg {
        Some(alg) if alg != "ES256" => Reason::TokenAlgorithm,
        _ => Reason::TokenMalformed,
    }
}

/// The rule a signed token broke, from the verifier's error (the header's
/// rules are checked before it runs).
fn refusal_of(kind: &jsonwebtoken::errors::ErrorKind) -> Reason {
    use jsonwebtoken::errors::ErrorKind as K;
    match kind {
        K::InvalidSignature => Reason::TokenSignature,
        K::MissingRequiredClaim(_) => Reason::TokenClaimMissing,
        K::InvalidClaimFormat(_) | K::Json(_) => Reason::TokenClaimInvalid,
        K::InvalidIssuer => Reason::TokenIssuer,
        K::InvalidAudience => Reason::TokenAudience,
        K::InvalidSubject => Reason::TokenSubject,
        K::ExpiredSignature => Reason::TokenExpired,
        K::ImmatureSignature => Reason::TokenNotYetValid,
        K::InvalidAlgorithm | K::MissingAlgorithm | K::InvalidAlgorithmName => {
            Reason::TokenAlgorithm
        }
        _ => Reason::TokenMalformed,
    }
}

/// The claims every admission must carry (`orders` and `slot` are
/// optional): a missing one is `token-claim-missing`.
pub const ADMISSION_CLAIMS: [&str; 7] = ["iss", "aud", "sub", "jti", "iat", "nbf", "exp"];

/// An admission's claims (DESIGN.md): `sub` the visitor, `aud` the event,
/// `jti` the admission, times in unix seconds; `nbf` = `iat`.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct AdmissionClaims {
    pub iss: String,
    pub aud: String,
    pub sub: String,
    pub jti: String,
    pub iat: i64,
    pub nbf: i64,
    pub exp: i64,
    /// How many orders it may open (the queue's `ordersPerAdmission` when
    /// it was given: a later put does not change it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub orders: Option<u32>,
    /// The moment of its pace slot, µs since the epoch: drawn visitors'
    /// slots follow their draw keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<i64>,
}

impl AdmissionClaims {
    pub fn expires_at(&self) -> Millis {
        Millis(self.exp.saturating_mul(1_000))
    }

    /// Live at `now` (refused from `now >= exp`) and not before its time.
    pub fn check_at(&self, now: Millis) -> Result<(), Reason> {
        let ahead = |at: i64| at.saturating_mul(1_000) > now.0 + NOT_BEFORE_SKEW_MS;
        if !crate::domain::queue::admission_is_live(self.expires_at(), now) {
            Err(Reason::TokenExpired)
        } else if ahead(self.nbf) || ahead(self.iat) {
            Err(Reason::TokenNotYetValid)
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
#[path = "admission_tests.rs"]
mod tests;
