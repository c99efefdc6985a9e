use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde_json::{json, Value};

use super::*;
use crate::admission::SigningKeys;

const NOW_S: i64 = 1_800_000_000;

fn signing(kid: &str, d: u8) -> SigningKeys {
    let set = json!({"keys": [{"kty": "EC", "crv": "P-256", "kid": kid,
        "d": URL_SAFE_NO_PAD.encode([d; 32])}]});
    SigningKeys::parse(&set.to_string()).unwrap()
}

fn keys() -> BuyerKeys {
    BuyerKeys::new(signing("seller-1", 9).verify_keys(), "https://shop.example")
}

fn claims() -> Value {
    json!({"iss": "https://shop.example", "aud": "gala", "sub": "user:42",
           "iat": NOW_S - 10, "exp": NOW_S + 600})
}

fn with(mut claims: Value, key: &str, value: Value) -> Value {
    claims[key] = value;
    claims
}

fn without(mut claims: Value, key: &str) -> Value {
    claims.as_object_mut().unwrap().remove(key);
    claims
}

fn verify(token: &str) -> Result<String, Error> {
    let event = EventId::parse("gala").unwrap();
    keys()
        .verify(token, &event, Millis(NOW_S * 1_000))
        .map(|b| b.as_str().to_owned())
}

/// A token with a header and claims of our choosing and no valid signature.
fn unsigned(header: Value, claims: &Value) -> String {
    let part = |v: &Value| URL_SAFE_NO_PAD.encode(v.to_string());
    format!("{}.{}.", part(&header), part(claims))
}

#[test]
fn a_sellers_token_names_its_buyer() {
    let token = signing("seller-1", 9)
        .sign_as(Some(BUYER_TOKEN_TYPE), &claims())
        .unwrap();
    assert_eq!(verify(&token).ok().as_deref(), Some("user:42"));
    let later = with(claims(), "nbf", json!(NOW_S + 5));
    let token = signing("seller-1", 9)
        .sign_as(Some(BUYER_TOKEN_TYPE), &later)
        .unwrap();
    assert!(verify(&token).is_ok(), "nbf within the 5 s leeway");
}

/// The header's `typ` is a media type: case does not matter, and
/// `application/` may come before it.
#[test]
fn the_buyer_token_type_is_matched_as_a_media_type() {
    let seller = signing("seller-1", 9);
    for typ in [
        "seatclaim-buyer+jwt",
        "SeatClaim-Buyer+JWT",
        "application/seatclaim-buyer+jwt",
    ] {
        let token = seller.sign_as(Some(typ), &claims()).unwrap();
        assert!(verify(&token).is_ok(), "{typ}");
    }
    let token = seller
        .sign_as(Some("text/seatclaim-buyer+jwt"), &claims())
        .unwrap();
    assert!(verify(&token).is_err());
}

/// Each broken rule is `401 buyer-token-invalid` with its own reason:
/// the seller's engineer learns which rule, never a value.
#[test]
fn every_broken_rule_is_buyer_token_invalid_naming_the_rule() {
    use Reason as R;
    let seller = signing("seller-1", 9);
    let typed = |claims: &Value| seller.sign_as(Some(BUYER_TOKEN_TYPE), claims).unwrap();
    let refused = [
        (
            "another key",
            R::TokenSignature,
            signing("seller-1", 8)
                .sign_as(Some(BUYER_TOKEN_TYPE), &claims())
                .unwrap(),
        ),
        (
            "an unknown kid",
            R::TokenKeyUnknown,
            signing("seller-2", 9)
                .sign_as(Some(BUYER_TOKEN_TYPE), &claims())
                .unwrap(),
        ),
        (
            "no kid",
            R::TokenKeyUnknown,
            unsigned(json!({"alg": "ES256", "typ": BUYER_TOKEN_TYPE}), &claims()),
        ),
        (
            "another issuer",
            R::TokenIssuer,
            typed(&with(claims(), "iss", json!("x"))),
        ),
        (
            "another event",
            R::TokenAudience,
            typed(&with(claims(), "aud", json!("other"))),
        ),
        (
            "aud as an array",
            R::TokenClaimInvalid,
            typed(&with(claims(), "aud", json!(["gala"]))),
        ),
        (
            "exp as text",
            R::TokenClaimInvalid,
            typed(&with(claims(), "exp", json!("soon"))),
        ),
        (
            "no iat",
            R::TokenClaimMissing,
            typed(&without(claims(), "iat")),
        ),
        (
            "no sub",
            R::TokenClaimMissing,
            typed(&without(claims(), "sub")),
        ),
        (
            "an email as sub",
            R::TokenSubject,
            typed(&with(claims(), "sub", json!("a@b.example"))),
        ),
        (
            "over an hour",
            R::TokenLifetime,
            typed(&with(claims(), "exp", json!(NOW_S - 10 + 3_601))),
        ),
        (
            "expired",
            R::TokenExpired,
            typed(&with(claims(), "exp", json!(NOW_S))),
        ),
        (
            "nbf ahead",
            R::TokenNotYetValid,
            typed(&with(claims(), "nbf", json!(NOW_S + 6))),
        ),
        (
            "alg none",
            R::TokenAlgorithm,
            unsigned(json!({"alg": "none", "kid": "seller-1"}), &claims()),
        ),
        (
            "alg HS256",
            R::TokenAlgorithm,
            unsigned(json!({"alg": "HS256", "kid": "seller-1"}), &claims()),
        ),
        ("not a JWT", R::TokenMalformed, "x.y.z".to_owned()),
        (
            "no typ",
            R::TokenType,
            seller.sign_as(None, &claims()).unwrap(),
        ),
        // Any JWT the seller's key signs with the right claims, but not
        // typed as a buyer token: an ID token, an admission-like JWT.
        ("typ JWT", R::TokenType, seller.sign(&claims()).unwrap()),
        (
            "typ of another kind",
            R::TokenType,
            seller
                .sign_as(Some("seatclaim-admission+jwt"), &claims())
                .unwrap(),
        ),
    ];
    for (why, reason, token) in refused {
        let refusal = verify(&token);
        let body = refusal.as_ref().err().map(|e| e.body().to_string());
        assert!(
            matches!(refusal, Err(Error::BuyerTokenInvalid(r)) if r == reason),
            "{why} must be refused as {}: {body:?}",
            reason.code(),
        );
        let body = body.unwrap_or_default();
        let signature = token.rsplit('.').next().unwrap_or_default();
        assert!(
            !body.contains(&token) && (signature.is_empty() || !body.contains(signature)),
            "{why}: the token is not echoed: {body}"
        );
    }
}

#[test]
fn configuration_refuses_private_keys_and_bad_issuers() {
    let private = json!({"keys": [{"kty": "EC", "crv": "P-256", "kid": "k",
        "d": URL_SAFE_NO_PAD.encode([9; 32])}]})
    .to_string();
    assert!(matches!(
        BuyerKeys::parse(&private, "shop"),
        Err(BuyerConfigError::Keys(_))
    ));
    let public = keys().keys().jwks().to_string();
    assert!(BuyerKeys::parse(&public, "shop").is_ok());
    assert!(matches!(
        BuyerKeys::parse(&public, ""),
        Err(BuyerConfigError::Issuer)
    ));
    assert!(BuyerKeys::parse(&public, &"i".repeat(257)).is_err());
    assert!(BuyerKeys::parse(&public, &"i".repeat(256)).is_ok());
}

/// Whose record counts a buyer: the plain ref for an event with no key,
/// the keyed one under the event's key, and a fault once that key left
/// the set (never a silent switch to another record).
#[test]
fn a_buyers_ref_follows_the_events_key() {
    let event = EventId::parse("gala").unwrap();
    let buyer = BuyerId::parse("user:42").unwrap();
    let old =
        DrawSecrets::parse(&base64::engine::general_purpose::STANDARD.encode([1u8; 32])).unwrap();
    let head = |key: Option<String>| EventHead {
        event_id: event.clone(),
        hold_seconds: 60,
        seat_count: 1,
        buyer_limit: Some(2),
        buyer_key: key,
    };
    let plain = buyer_ref(&old, &head(None), &buyer).unwrap();
    assert_eq!(plain, BuyerRef::unkeyed(&event, &buyer));
    let keyed = buyer_ref(&old, &head(Some(old.current_version())), &buyer).unwrap();
    assert_ne!(keyed, plain);
    let rotated = DrawSecrets::parse(&format!(
        "{} {}",
        base64::engine::general_purpose::STANDARD.encode([2u8; 32]),
        base64::engine::general_purpose::STANDARD.encode([1u8; 32])
    ))
    .unwrap();
    let kept = buyer_ref(&rotated, &head(Some(old.current_version())), &buyer).unwrap();
    assert_eq!(kept, keyed, "a rotation keeps the event's key");
    let retired =
        DrawSecrets::parse(&base64::engine::general_purpose::STANDARD.encode([2u8; 32])).unwrap();
    assert!(matches!(
        buyer_ref(&retired, &head(Some(old.current_version())), &buyer),
        Err(Error::Corrupt(_))
    ));
}
