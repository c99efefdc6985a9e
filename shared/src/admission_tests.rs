use super::*;

/// A private JWK Set of one key, from a fixed scalar (tests only).
fn private_set(kid: &str, d: [u8; 32]) -> String {
    serde_json::json!({"keys": [{"kty": "EC", "crv": "P-256", "kid": kid,
        "d": URL_SAFE_NO_PAD.encode(d)}]})
    .to_string()
}

fn claims(event: &str, exp: i64) -> AdmissionClaims {
    AdmissionClaims {
        iss: ISSUER.into(),
        aud: event.into(),
        sub: "visitor-1".into(),
        jti: "admission-1".into(),
        iat: exp - 600,
        nbf: exp - 600,
        exp,
        orders: Some(1),
        slot: None,
    }
}

fn event(id: &str) -> EventId {
    EventId::parse(id).unwrap()
}

#[test]
fn a_signed_admission_verifies_until_exp_and_not_at_it() {
    let signing = SigningKeys::parse(&private_set("k1", [7; 32])).unwrap();
    let verify = signing.verify_keys();
    let exp = 1_800_000_000;
    let token = signing.sign(&claims("gala", exp)).unwrap();
    let just_before = Millis(exp * 1_000 - 1);
    assert_eq!(
        verify.verify(&token, &event("gala"), just_before).unwrap(),
        claims("gala", exp)
    );
    for (event_id, now, reason) in [
        ("gala", Millis(exp * 1_000), Reason::TokenExpired), // no leeway at exp
        ("other", just_before, Reason::TokenAudience),       // another event's
        (
            "gala",
            Millis((exp - 600) * 1_000 - NOT_BEFORE_SKEW_MS - 1),
            Reason::TokenNotYetValid,
        ),
    ] {
        assert!(
            matches!(
                verify.verify(&token, &event(event_id), now),
                Err(Error::Unauthorized(r)) if r == reason
            ),
            "{event_id} at {now:?}"
        );
    }
}

#[test]
fn only_our_keys_and_es256_count() {
    let ours = SigningKeys::parse(&private_set("k1", [7; 32])).unwrap();
    let theirs = SigningKeys::parse(&private_set("k1", [9; 32])).unwrap();
    let exp = 1_800_000_000;
    let now = Millis((exp - 10) * 1_000);
    let forged = theirs.sign(&claims("gala", exp)).unwrap();
    let reason = |verify: &VerifyKeys, token: &str| {
        verify
            .verify(token, &event("gala"), now)
            .err()
            .and_then(|e| e.reason())
    };
    assert_eq!(
        reason(&ours.verify_keys(), &forged),
        Some(Reason::TokenSignature),
        "same kid, other key"
    );
    let token = ours.sign(&claims("gala", exp)).unwrap();
    // The same claims with an HMAC signature (alg confusion) are refused.
    let mut header = Header::new(Algorithm::HS256);
    header.kid = Some("k1".into());
    let hmac = jsonwebtoken::encode(
        &header,
        &claims("gala", exp),
        &EncodingKey::from_secret(b"k"),
    )
    .unwrap();
    let verify = ours.verify_keys();
    assert_eq!(reason(&verify, &hmac), Some(Reason::TokenAlgorithm));
    // A tampered payload breaks the signature.
    let mut parts: Vec<String> = token.split('.').map(str::to_owned).collect();
    let mut tampered = claims("gala", exp);
    tampered.exp += 3_600;
    parts[1] = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&tampered).unwrap());
    assert_eq!(
        reason(&verify, &parts.join(".")),
        Some(Reason::TokenSignature)
    );
    assert_eq!(reason(&verify, "not.a.token"), Some(Reason::TokenMalformed));
    let other_kid = SigningKeys::parse(&private_set("k2", [7; 32])).unwrap();
    assert_eq!(
        reason(&verify, &other_kid.sign(&claims("gala", exp)).unwrap()),
        Some(Reason::TokenKeyUnknown)
    );
    assert!(verify.verify(&token, &event("gala"), now).is_ok());
}

#[test]
fn rotation_verifies_the_old_and_the_new_key() {
    let old = SigningKeys::parse(&private_set("old", [7; 32])).unwrap();
    let both: serde_json::Value = serde_json::json!({"keys": [
        serde_json::from_str::<serde_json::Value>(&private_set("new", [8; 32])).unwrap()["keys"][0],
        serde_json::from_str::<serde_json::Value>(&private_set("old", [7; 32])).unwrap()["keys"][0],
    ]});
    let rotated = SigningKeys::parse(&both.to_string()).unwrap();
    let verify = rotated.verify_keys();
    let exp = 1_800_000_000;
    let now = Millis((exp - 10) * 1_000);
    for signer in [&old, &rotated] {
        let token = signer.sign(&claims("gala", exp)).unwrap();
        assert!(verify.verify(&token, &event("gala"), now).is_ok());
    }
    let new_token = rotated.sign(&claims("gala", exp)).unwrap();
    let header = jsonwebtoken::decode_header(&new_token).unwrap();
    assert_eq!(header.kid.as_deref(), Some("new"), "the first key signs");
}

#[test]
fn the_jwks_publishes_public_parameters_only() {
    let signing = SigningKeys::parse(&private_set("k1", [7; 32])).unwrap();
    let jwks = signing.verify_keys().jwks();
    let key = &jwks["keys"][0];
    for (field, value) in [
        ("kty", "EC"),
        ("crv", "P-256"),
        ("kid", "k1"),
        ("alg", "ES256"),
        ("use", "sig"),
    ] {
        assert_eq!(key[field], value, "{field}");
    }
    assert!(key.get("d").is_none());
    // What it publishes parses back as a verify set.
    let reparsed = VerifyKeys::parse(&jwks.to_string()).unwrap();
    assert_eq!(reparsed.jwks(), jwks);
    assert!(!format!("{signing:?}").contains(&URL_SAFE_NO_PAD.encode([7u8; 32])));
}

#[test]
fn bad_key_sets_are_refused_by_index_and_reason() {
    let with_d = private_set("k1", [7; 32]);
    for (json, want) in [
        ("nope", "not a JWK Set"),
        (r#"{"keys": []}"#, "has no keys"),
        (
            r#"{"keys": [{"kty": "RSA", "crv": "P-256", "kid": "a"}]}"#,
            "key 0: only EC",
        ),
        (
            r#"{"keys": [{"kty": "EC", "crv": "P-256", "d": "AAAA"}]}"#,
            "key 0: no kid",
        ),
        (
            r#"{"keys": [{"kty": "EC", "crv": "P-256", "kid": "a", "d": "AAAA"}]}"#,
            "key 0: kid a: d is not 32 bytes",
        ),
    ] {
        let error = SigningKeys::parse(json).unwrap_err().to_string();
        assert!(error.contains(want), "{json}: {error}");
    }
    let error = VerifyKeys::parse(&with_d).unwrap_err().to_string();
    assert!(error.contains("private part"), "{error}");
    let mut mismatched: serde_json::Value = serde_json::from_str(&with_d).unwrap();
    mismatched["keys"][0]["x"] = URL_SAFE_NO_PAD.encode([1u8; 32]).into();
    let error = SigningKeys::parse(&mismatched.to_string())
        .unwrap_err()
        .to_string();
    assert!(error.contains("not d's public key"), "{error}");
}

/// A public key whose point is mistyped, or meant for another algorithm or
/// for encryption, fails the start with a message naming its kid; the set
/// the JWKS route publishes (with `alg` and `use`) parses.
#[test]
fn verify_keys_are_checked_points_for_es256_signatures() {
    let signing = SigningKeys::parse(&private_set("k1", [7; 32])).unwrap();
    let good: serde_json::Value = signing.verify_keys().jwks()["keys"][0].clone();
    let set = |key: &serde_json::Value| serde_json::json!({ "keys": [key] }).to_string();
    assert!(VerifyKeys::parse(&set(&good)).is_ok());
    let mut bare = good.clone();
    for field in ["alg", "use"] {
        bare.as_object_mut().unwrap().remove(field);
    }
    assert!(
        VerifyKeys::parse(&set(&bare)).is_ok(),
        "alg and use may be absent"
    );
    let with = |field: &str, value: serde_json::Value| {
        let mut key = good.clone();
        key[field] = value;
        key
    };
    let mut y = URL_SAFE_NO_PAD.decode(good["y"].as_str().unwrap()).unwrap();
    y[31] ^= 1;
    for (key, want) in [
        (
            with("y", URL_SAFE_NO_PAD.encode(&y).into()),
            "key 0: kid k1: x and y are not a point on P-256",
        ),
        (
            with("x", URL_SAFE_NO_PAD.encode([0u8; 32]).into()),
            "kid k1: x and y are not a point",
        ),
        (with("alg", "RS256".into()), "kid k1: its alg is not ES256"),
        (with("alg", "ES384".into()), "kid k1: its alg is not ES256"),
        (with("use", "enc".into()), "kid k1: its use is not sig"),
    ] {
        let error = VerifyKeys::parse(&set(&key)).unwrap_err().to_string();
        assert!(error.contains(want), "{key}: {error}");
    }
}

#[test]
fn a_set_that_does_not_parse_is_reported_without_its_text() {
    for (text, secret) in [
        (r#"{"keys": "secret-text-here"}"#, "secret-text-here"),
        (
            r#"{"keys": [{"kty": "EC", "crv": "P-256", "kid": "k", "d": 98765432}]}"#,
            "98765432",
        ),
        (r#"{"keys": [{"d": "secret-scalar", "#, "secret-scalar"),
        ("secret-not-json", "secret-not-json"),
    ] {
        for error in [
            SigningKeys::parse(text).map(|_| ()).unwrap_err(),
            VerifyKeys::parse(text).map(|_| ()).unwrap_err(),
        ] {
            let message = error.to_string();
            assert!(matches!(error, KeyError::NotAJwkSet(_)), "{message}");
            assert!(!message.contains(secret), "echoed: {message}");
        }
    }
}
