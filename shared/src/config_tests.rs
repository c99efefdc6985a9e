//! Unit tests of `config`.

use super::*;

/// [`VARIABLES`] names every variable the configuration reads, with
/// every part of it needed, and nothing it does not read but the
/// publisher's bus, the log level and the development-secrets switch.
#[test]
fn the_list_of_variables_is_what_the_configuration_reads() {
    let asked = std::sync::Mutex::new(std::collections::BTreeSet::new());
    let all = Needs {
        confirm_secret: true,
        stripe_secret: true,
        admission_signing: true,
        admission_verify: true,
        hold_token_keys: true,
        buyer_keys: true,
        draw_secret: true,
    };
    for needs in [Needs::STORE, all] {
        let _ = Config::from_lookup(needs, |k| {
            asked
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(k.to_owned());
            (k == "TABLE_NAME").then(|| "t".to_owned())
        });
    }
    let asked = asked.into_inner().unwrap_or_else(|p| p.into_inner());
    let listed: std::collections::BTreeSet<String> =
        VARIABLES.iter().map(|v| v.to_string()).collect();
    let elsewhere = [EVENT_BUS_NAME, RUST_LOG, ALLOW_DEV_SECRETS];
    let expected: std::collections::BTreeSet<String> = asked
        .iter()
        .cloned()
        .chain(elsewhere.iter().map(|v| v.to_string()))
        .collect();
    assert_eq!(listed, expected);
    // Each whole-number setting is one of them.
    for (name, ..) in number_settings() {
        assert!(VARIABLES.contains(&name), "{name}");
    }
}

/// Tests use `?` rather than unwrap: a failure reports the error.
type TestResult = Result<(), Box<dyn std::error::Error>>;
use std::collections::HashMap;

fn lookup(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |k| map.get(k).cloned()
}

#[test]
fn defaults_and_required_names() -> TestResult {
    let c = Config::from_lookup(Needs::STORE, lookup(&[("TABLE_NAME", "t")]))?;
    assert_eq!(
        (c.hold_seconds, c.max_seats_per_order, c.expiry_guard_ms),
        (420, 10, 2000)
    );
    assert_eq!(c.max_order_lifetime_seconds, 7200);
    assert_eq!(c.request_budget_ms, 29_000);
    assert_eq!(c.queue_shards, QueueShards::DEFAULT);
    let set = lookup(&[("TABLE_NAME", "t"), ("QUEUE_SHARDS", "32")]);
    let c = Config::from_lookup(Needs::STORE, set)?;
    assert_eq!(c.queue_shards, QueueShards::LEGACY);
    assert!(c.confirm_secrets.is_none());
    let e = Config::from_lookup(Needs::STORE, lookup(&[])).unwrap_err();
    assert!(e.to_string().contains("TABLE_NAME"));
    let e = Config::from_lookup(Needs::CONFIRM, lookup(&[("TABLE_NAME", "t")])).unwrap_err();
    assert!(e.to_string().contains("CONFIRM_SECRET"));
    Ok(())
}

#[test]
fn ranges_are_enforced() {
    for (k, v) in [
        ("HOLD_SECONDS", "0"),
        ("HOLD_SECONDS", "7201"),
        ("MAX_SEATS_PER_ORDER", "99"),
        ("MAX_SEATS_PER_ORDER", "x"),
        ("EXPIRY_GUARD_MS", "60001"),
        ("MAX_ORDER_LIFETIME_SECONDS", "0"),
        ("MAX_ORDER_LIFETIME_SECONDS", "86401"),
        ("REQUEST_BUDGET_MS", "99"),
        ("REQUEST_BUDGET_MS", "29001"),
        ("QUEUE_SHARDS", "0"),
        ("QUEUE_SHARDS", "48"),
        ("QUEUE_SHARDS", "256"),
    ] {
        let e =
            Config::from_lookup(Needs::STORE, lookup(&[("TABLE_NAME", "t"), (k, v)])).unwrap_err();
        assert!(e.to_string().contains(k), "{e}");
    }
    // Blank is unset, as for every secret: missing where needed.
    let blank = [("TABLE_NAME", "t"), ("CONFIRM_SECRET", "  ")];
    let e = Config::from_lookup(Needs::CONFIRM, lookup(&blank)).unwrap_err();
    assert!(matches!(e, ConfigError::Missing("CONFIRM_SECRET")), "{e}");
    let c = Config::from_lookup(Needs::STORE, lookup(&blank));
    assert!(c.is_ok_and(|c| c.confirm_secrets.is_none()));
    let e = Config::from_lookup(
        Needs::STORE,
        lookup(&[("TABLE_NAME", "t"), ("CONFIRM_SECRET", "short")]),
    )
    .unwrap_err();
    assert!(matches!(e, ConfigError::BadSecret(_)));
    assert!(
        e.to_string().contains("CONFIRM_SECRET") && !e.to_string().contains("short"),
        "names the variable, never its value: {e}"
    );
    let c = Config::from_lookup(
        Needs::STORE,
        lookup(&[
            ("TABLE_NAME", "t"),
            ("MAX_SEATS_PER_ORDER", "98"),
            ("EXPIRY_GUARD_MS", "0"),
        ]),
    );
    assert!(c.is_ok());
}

#[test]
fn hold_token_keys_are_required_where_needed_and_never_echoed() {
    let e = Config::from_lookup(Needs::HOLDER, lookup(&[("TABLE_NAME", "t")])).unwrap_err();
    assert!(e.to_string().contains(HOLD_TOKEN_KEYS), "{e}");
    let bad = "not-a-key-set-but-a-secret-text";
    let e = Config::from_lookup(
        Needs::STORE,
        lookup(&[("TABLE_NAME", "t"), (HOLD_TOKEN_KEYS, bad)]),
    )
    .unwrap_err();
    assert!(matches!(e, ConfigError::BadHoldKeys(_)));
    assert!(
        e.to_string().contains(HOLD_TOKEN_KEYS) && !e.to_string().contains("secret-text"),
        "names the variable, never its value: {e}"
    );
    let key = "c2VhdGNsYWltLXRlc3QtaG9sZC1rZXktQS0zMi1ieXQ=";
    let c = Config::from_lookup(
        Needs::HOLDER,
        lookup(&[("TABLE_NAME", "t"), (HOLD_TOKEN_KEYS, key)]),
    );
    assert!(c.is_ok_and(|c| c.hold_token_keys.is_some()));
}

#[test]
fn buyer_keys_come_as_a_pair_and_are_required_where_needed() {
    let public = r#"{"keys":[{"kty":"EC","crv":"P-256","kid":"k","x":"CVGXDJol2Q5C93JkbXQmmF8qwSStKpR5blpgmNsTmNc","y":"vUoDwTRXrkQKGNVsad8fjDwje-i2LfzDUx0qIG8scRY"}]}"#;
    let hold = (
        HOLD_TOKEN_KEYS,
        "c2VhdGNsYWltLXRlc3QtaG9sZC1rZXktQS0zMi1ieXQ=",
    );
    let e = Config::from_lookup(
        Needs::STORE,
        lookup(&[("TABLE_NAME", "t"), (BUYER_VERIFY_KEYS, public)]),
    )
    .unwrap_err();
    assert!(e.to_string().contains(BUYER_ISSUER), "{e}");
    let c = Config::from_lookup(
        Needs::STORE,
        lookup(&[
            ("TABLE_NAME", "t"),
            (BUYER_VERIFY_KEYS, public),
            (BUYER_ISSUER, "shop"),
        ]),
    );
    assert!(c.is_ok_and(|c| c.buyer_keys.is_some()));
    let needs = Needs {
        buyer_keys: true,
        ..Needs::STORE
    };
    let e = Config::from_lookup(needs, lookup(&[("TABLE_NAME", "t"), hold])).unwrap_err();
    assert!(e.to_string().contains(BUYER_VERIFY_KEYS), "{e}");
    let private = public.replace(
        r#""kid":"k","#,
        r#""kid":"k","d":"ePTEbCR_euD9Eu72fGkkIWZVWwJtDO0iFQH4_YdAbto","#,
    );
    let e = Config::from_lookup(
        Needs::STORE,
        lookup(&[
            ("TABLE_NAME", "t"),
            (BUYER_VERIFY_KEYS, &private),
            (BUYER_ISSUER, "shop"),
        ]),
    )
    .unwrap_err();
    assert!(
        e.to_string().contains(BUYER_VERIFY_KEYS) && !e.to_string().contains("ePTEb"),
        "{e}"
    );
}

/// Stripe's signing secret: required by its route, refused when it is not
/// shaped as Stripe gives one, named and never shown.
#[test]
fn the_stripe_secret_is_required_by_its_route_and_never_shown() {
    let e = Config::from_lookup(Needs::STRIPE_PAYMENT, lookup(&[("TABLE_NAME", "t")]));
    assert!(matches!(
        e,
        Err(ConfigError::Missing("STRIPE_WEBHOOK_SECRET"))
    ));
    let short = [
        ("TABLE_NAME", "t"),
        ("STRIPE_WEBHOOK_SECRET", "whsec_tooShort"),
    ];
    match Config::from_lookup(Needs::STRIPE_PAYMENT, lookup(&short)) {
        Err(e @ ConfigError::BadStripeSecret(_)) => {
            assert!(e.to_string().contains("STRIPE_WEBHOOK_SECRET"), "{e}");
            assert!(!e.to_string().contains("tooShort"), "{e}");
        }
        other => panic!("a short secret is refused: {:?}", other.err()),
    }
    let good = [
        ("TABLE_NAME", "t"),
        (
            "STRIPE_WEBHOOK_SECRET",
            "whsec_0123456789abcdefghijklmnopqrstuv",
        ),
    ];
    let c = Config::from_lookup(Needs::STRIPE_PAYMENT, lookup(&good));
    assert!(c.is_ok_and(|c| c.stripe_secrets.is_some() && c.confirm_secrets.is_none()));
}
