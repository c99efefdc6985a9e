use super::*;

/// A secret shaped as the Dashboard gives one (32 characters after `whsec_`).
const SECRET: &str = "whsec_0123456789abcdefghijklmnopqrstuv";
/// Another, as `stripe listen` gives one (64 hex digits).
const CLI_SECRET: &str = "whsec_5f1e0d4c3b2a19087f6e5d4c3b2a19085f1e0d4c3b2a19087f6e5d4c3b2a1908";
const T: i64 = 1_800_000_000;

/// Headers Stripe's own Node library made for [`SECRET`] at [`T`]
/// (`scripts/stripe_sign.js`, stripe 23.2.0: `generateTestHeaderString`).
const LIBRARY_VECTORS: [(&str, &str); 2] = [
    (
        r#"{"id":"evt_1","object":"event"}"#,
        "t=1800000000,v1=f11ad03c7e85c7f7b14779a85776f361908cf3d45c678c9199825989a5aadb9c",
    ),
    (
        "{}",
        "t=1800000000,v1=23a7cc69eaac72a505584457acff1058731b44f59f9fa815cb006fbe3160fdb8",
    ),
];

fn at(seconds: i64) -> Millis {
    Millis(seconds * 1000 + 250)
}

fn header(value: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    if let Ok(value) = value.parse() {
        headers.insert(STRIPE_SIGNATURE_HEADER, value);
    }
    headers
}

fn secrets(value: &str) -> StripeSecrets {
    match StripeSecrets::parse(value) {
        Ok(secrets) => secrets,
        Err(e) => panic!("test secret refused: {e}"),
    }
}

#[test]
fn stripes_own_library_signs_as_we_do_and_we_accept_it() {
    let ours = secrets(SECRET);
    for (body, signed) in LIBRARY_VECTORS {
        assert_eq!(ours.sign(T, body.as_bytes()), signed, "{body}");
        assert_eq!(ours.verify(&header(signed), body.as_bytes(), at(T)), Ok(()));
    }
}

#[test]
fn the_secret_is_the_literal_string_never_base64_decoded() {
    // Keyed with the base64 decoding of what follows `whsec_`, the MAC
    // differs from the library's: the literal string is the key.
    use base64::Engine;
    let (body, signed) = LIBRARY_VECTORS[0];
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(&SECRET[STRIPE_SECRET_PREFIX.len()..])
        .unwrap_or_default();
    let mut other = HmacSha256::new_from_slice(&decoded).unwrap_or_else(|_| keyed(""));
    feed(&mut other, T, body.as_bytes());
    let other = hex::encode(other.finalize().into_bytes());
    assert!(!signed.ends_with(&other));
    assert!(signed.ends_with(&hex::encode(mac(SECRET, T, body.as_bytes()))));
}

#[test]
fn any_v1_matching_any_secret_is_enough() {
    let body = b"{\"id\":\"evt_2\"}";
    let both = secrets(&format!("{CLI_SECRET} {SECRET}"));
    let by_old = secrets(SECRET).sign(T, body);
    let by_new = secrets(CLI_SECRET).sign(T, body);
    for signed in [&by_old, &by_new] {
        assert_eq!(both.verify(&header(signed), body, at(T)), Ok(()));
    }
    // Stripe sends several v1 during a roll, and v0 (skipped) in test mode.
    let wrong = "0".repeat(64);
    let v0 = format!("v0={}", "1".repeat(64));
    let several = format!("t={T},v1={wrong},{v0},v1={}", &by_old[by_old.len() - 64..]);
    assert_eq!(
        secrets(SECRET).verify(&header(&several), body, at(T)),
        Ok(())
    );
}

#[test]
fn each_broken_rule_names_its_reason() {
    let ours = secrets(SECRET);
    let (body, signed) = LIBRARY_VECTORS[0];
    let body = body.as_bytes();
    let v1 = &signed[signed.len() - 64..];
    let cases: [(HeaderMap, &[u8], i64, Reason); 11] = [
        (HeaderMap::new(), body, T, Reason::SignatureHeaderMissing),
        (header(""), body, T, Reason::SignatureMalformed),
        (
            header(&format!("v1={v1}")),
            body,
            T,
            Reason::SignatureMalformed,
        ),
        (
            header(&format!("t={T}")),
            body,
            T,
            Reason::SignatureMalformed,
        ),
        (
            header(&format!("t={T},v1={}", &v1[..62])),
            body,
            T,
            Reason::SignatureMalformed,
        ),
        (
            header(&format!("t={T},t={T},v1={v1}")),
            body,
            T,
            Reason::SignatureMalformed,
        ),
        (
            header(&format!("t={T}000,v1={v1}")),
            body,
            T,
            Reason::SignatureMalformed,
        ),
        (
            header(&format!("t={T},v0={v1}")),
            body,
            T,
            Reason::SignatureMalformed,
        ),
        (header(signed), body, T + 301, Reason::SignatureTimestamp),
        (
            header(signed),
            b"{\"id\": \"evt_1\",\"object\":\"event\"}",
            T,
            Reason::SignatureMismatch,
        ),
        (header(signed), body, T - 301, Reason::SignatureTimestamp),
    ];
    for (headers, body, now, want) in cases {
        assert_eq!(
            ours.verify(&headers, body, at(now)),
            Err(want),
            "{headers:?}"
        );
    }
    let other = secrets(CLI_SECRET);
    assert_eq!(
        other.verify(&header(signed), body, at(T)),
        Err(Reason::SignatureMismatch)
    );
    // The tolerance is confirm's: 300 s either way, inclusive.
    for edge in [T - 300, T + 300] {
        assert_eq!(
            ours.verify(&header(signed), body, at(edge)),
            Ok(()),
            "{edge}"
        );
    }
}

#[test]
fn secrets_are_checked_without_showing_them() {
    assert_eq!(
        StripeSecrets::parse(" ").err(),
        Some(StripeSecretError::Empty)
    );
    assert_eq!(
        StripeSecrets::parse(&format!("{SECRET} sk_live_0123456789abcdefghijklmnop")).err(),
        Some(StripeSecretError::Prefix { index: 2 })
    );
    assert_eq!(
        StripeSecrets::parse("whsec_short").err(),
        Some(StripeSecretError::Short { index: 1, chars: 5 })
    );
    let refused = StripeSecrets::parse("whsec_0123456789abcdefghijklm").err();
    assert!(refused.is_some_and(|e| !e.to_string().contains("0123456789")));
    assert_eq!(
        format!("{:?}", secrets(SECRET)),
        "StripeSecrets(1 x <redacted>)"
    );
    let printed: Vec<String> = secrets(&format!("{SECRET} {CLI_SECRET}"))
        .key_fingerprints()
        .collect();
    assert_eq!(printed.len(), 2);
    assert!(printed
        .iter()
        .all(|f| f.len() == 64 && !f.contains("0123456789abcdefghij")));
}
