use super::*;

/// Tests use `?` rather than unwrap: a failure reports the error.
type TestResult = Result<(), Box<dyn std::error::Error>>;

/// Two 32-byte keys, base64.
const KEY_A: &str = "c2VhdGNsYWltLXRlc3QtaG9sZC1rZXktQS0zMi1ieXQ=";
const KEY_B: &str = "c2VhdGNsYWltLXRlc3QtaG9sZC1rZXktQi0zMi1ieXQ=";

fn order(event: &EventId, n: u128) -> OrderId {
    OrderId::from_random(event, n)
}

#[test]
fn a_token_round_trips_for_its_own_order_only() -> TestResult {
    let keys = HoldTokenKeys::parse(KEY_A)?;
    let event = EventId::parse("gala")?;
    let (mine, yours) = (order(&event, 1), order(&event, 2));
    let token = HoldToken::generate(&event, Millis(1234))?;
    let wire = keys.encode(&mine, &token);
    assert_eq!(keys.decode(&mine, &wire), Some(token.clone()));
    assert_eq!(
        keys.check(&yours, &wire).err(),
        Some(Reason::HoldTokenMac),
        "lifted to another order"
    );
    let other = HoldToken::generate(&event, Millis(1234))?;
    assert_ne!(keys.encode(&mine, &other), wire, "tokens are random");
    assert!(!other.matches(&token.hash()));
    assert!(
        !format!("{token:?}").contains(&hex::encode(token.secret)[..16]),
        "debug output hides the secret"
    );
    Ok(())
}

#[test]
fn an_extended_token_keeps_the_secret_and_both_verify() -> TestResult {
    let keys = HoldTokenKeys::parse(KEY_A)?;
    let event = EventId::parse("gala")?;
    let id = order(&event, 7);
    let token = HoldToken::generate(&event, Millis(1234))?;
    let later = token.with_expiry(Millis(99_000));
    let (old_wire, new_wire) = (keys.encode(&id, &token), keys.encode(&id, &later));
    assert_ne!(old_wire, new_wire);
    assert_eq!(keys.decode(&id, &new_wire), Some(later.clone()));
    assert_eq!(keys.decode(&id, &old_wire), Some(token.clone()));
    assert!(later.matches(&token.hash()), "the stored hash stays");
    Ok(())
}

#[test]
fn a_buyers_token_carries_its_record_and_limit_under_the_mac() -> TestResult {
    let keys = HoldTokenKeys::parse(KEY_A)?;
    let event = EventId::parse("gala")?;
    let id = order(&event, 4);
    let buyer_id = crate::domain::buyer::BuyerId::parse("user:42").ok_or("a buyer id")?;
    let buyer = LimitedBuyer {
        buyer: BuyerRef::unkeyed(&event, &buyer_id),
        limit: 6,
    };
    let plain = HoldToken::generate(&event, Millis(1234))?;
    let token = plain.clone().for_buyer(Some(buyer.clone()));
    let wire = keys.encode(&id, &token);
    let decoded = keys.decode(&id, &wire).ok_or("the buyer's token decodes")?;
    assert_eq!(decoded.buyer(), Some(&buyer));
    assert_eq!(decoded.with_expiry(Millis(9)).buyer(), Some(&buyer));
    assert!(wire.contains(&format!("~6.{}~", buyer.buyer.as_str())));
    // The buyer part is covered: dropping it or raising the limit breaks the MAC.
    let (unsigned, mac) = wire.rsplit_once('~').ok_or("a mac")?;
    let (without, _) = unsigned.rsplit_once('~').ok_or("a buyer part")?;
    assert_eq!(keys.decode(&id, &format!("{without}~{mac}")), None);
    let raised = wire.replace("~6.", "~7.");
    assert_eq!(keys.decode(&id, &raised), None);
    assert_eq!(keys.decode(&id, &keys.encode(&id, &plain)), Some(plain));
    Ok(())
}

#[test]
fn any_change_to_a_part_breaks_the_mac() -> TestResult {
    let keys = HoldTokenKeys::parse(KEY_A)?;
    let event = EventId::parse("gala")?;
    let id = order(&event, 3);
    let wire = keys.encode(&id, &HoldToken::generate(&event, Millis(1234))?);
    let parts: Vec<&str> = wire.split('~').collect();
    let flip = |s: &str| -> String {
        let mut c: Vec<char> = s.chars().collect();
        c[0] = if c[0] == '0' { '1' } else { '0' };
        c.into_iter().collect()
    };
    for i in 0..parts.len() {
        let mut changed = parts.clone();
        let replaced = if i == 0 {
            "gala2".to_owned()
        } else {
            flip(parts[i])
        };
        changed[i] = &replaced;
        let forged = changed.join("~");
        assert_eq!(
            keys.check(&id, &forged).err(),
            Some(Reason::HoldTokenMac),
            "part {i} changed"
        );
    }
    Ok(())
}

#[test]
fn a_rotation_keeps_old_tokens_working_and_signs_with_the_new_key() -> TestResult {
    let event = EventId::parse("gala")?;
    let id = order(&event, 4);
    let token = HoldToken::generate(&event, Millis(1234))?;
    let before = HoldTokenKeys::parse(KEY_A)?;
    let during = HoldTokenKeys::parse(&format!("{KEY_B} {KEY_A}"))?;
    let after = HoldTokenKeys::parse(KEY_B)?;
    let old_wire = before.encode(&id, &token);
    assert_eq!(during.decode(&id, &old_wire), Some(token.clone()));
    let new_wire = during.encode(&id, &token);
    assert_ne!(new_wire, old_wire, "the new key signs");
    assert_eq!(after.decode(&id, &new_wire), Some(token.clone()));
    assert_eq!(
        after.decode(&id, &old_wire),
        None,
        "a removed key verifies nothing"
    );
    Ok(())
}

#[test]
fn junk_and_unsigned_tokens_are_refused() -> TestResult {
    let keys = HoldTokenKeys::parse(KEY_A)?;
    let event = EventId::parse("a")?;
    let id = order(&event, 5);
    let zeros = "0".repeat(64);
    for bad in [
        String::new(),
        "a~1".into(),
        format!("a~1~{zeros}"),
        format!("a~1~{zeros}~{zeros}"),
        format!("a~1~{zeros}~{zeros}~"),
        format!("a~x~{zeros}~{zeros}"),
    ] {
        assert_eq!(keys.decode(&id, &bad), None, "{bad}");
    }
    let good = keys.encode(&id, &HoldToken::from_secret(&event, Millis(1), [0; 32]));
    assert!(keys
        .from_authorization(&id, Some(&format!("Bearer {good}")))
        .is_ok());
    assert!(keys
        .from_authorization(&id, Some(&format!("bearer  {good}")))
        .is_ok());
    assert_eq!(
        keys.from_authorization(&id, Some(&format!("Basic {good}")))
            .err(),
        Some(Reason::HoldTokenMalformed)
    );
    assert_eq!(
        keys.from_authorization(&id, None).err(),
        Some(Reason::HoldTokenMissing)
    );
    // Which rule: the shape before the MAC (a well-shaped token of zeros
    // is refused by its MAC).
    for (raw, reason) in [
        (String::new(), Reason::HoldTokenMalformed),
        ("a~1".into(), Reason::HoldTokenMalformed),
        (format!("a~x~{zeros}~{zeros}"), Reason::HoldTokenMalformed),
        (format!("a~1~{zeros}~{zeros}~"), Reason::HoldTokenMalformed),
        (format!("a~1~{zeros}~{zeros}"), Reason::HoldTokenMac),
    ] {
        assert_eq!(keys.check(&id, &raw).err(), Some(reason), "{raw}");
    }
    Ok(())
}

#[test]
fn key_sets_are_checked_without_echoing_them() {
    let short = "c2hvcnQ="; // "short"
    for (value, want) in [
        ("", HoldKeyError::Format),
        ("  ", HoldKeyError::Format),
        ("not*base64", HoldKeyError::NotBase64 { index: 1 }),
        (short, HoldKeyError::ShortKey { index: 1, bytes: 5 }),
    ] {
        let error = HoldTokenKeys::parse(value).map(|_| ()).unwrap_err();
        assert_eq!(error, want, "{value:?}");
        assert!(value.trim().is_empty() || !error.to_string().contains(value.trim()));
    }
    let with_second_bad = format!("{KEY_A} {short}");
    assert_eq!(
        HoldTokenKeys::parse(&with_second_bad)
            .map(|_| ())
            .unwrap_err(),
        HoldKeyError::ShortKey { index: 2, bytes: 5 }
    );
}

#[test]
fn idempotent_orders_depend_on_the_server_key() -> TestResult {
    use IdempotencyScope::{Admission, Bare, Buyer};
    let event = EventId::parse("gala")?;
    let a = HoldTokenKeys::parse(KEY_A)?;
    let b = HoldTokenKeys::parse(KEY_B)?;
    let first = a.idempotent_order(Admission("jti-1"), "key-1", &event);
    assert_eq!(
        first,
        a.idempotent_order(Admission("jti-1"), "key-1", &event),
        "a retry finds it"
    );
    assert_ne!(
        first,
        a.idempotent_order(Admission("jti-1"), "key-2", &event)
    );
    assert_ne!(
        first,
        a.idempotent_order(Admission("jti-2"), "key-1", &event)
    );
    assert_ne!(
        first,
        a.idempotent_order(Admission("jti-1"), "key-1", &EventId::parse("gala2")?)
    );
    assert_ne!(
        first,
        b.idempotent_order(Admission("jti-1"), "key-1", &event),
        "keyed"
    );
    // The separator keeps ("a", "bk") and ("ab", "k") apart.
    assert_ne!(
        a.idempotent_order(Admission("a"), "bk", &event),
        a.idempotent_order(Admission("ab"), "k", &event)
    );
    // One key in three scopes names three orders: two buyers', and the
    // bare key's (nobody can replay another buyer's key, nor one whose
    // admission holder wrote the same characters).
    let buyer = |n: u8| BuyerRef::from_hex(&hex::encode([n; 16])).ok_or("a ref");
    let (mine, yours) = (buyer(1)?, buyer(2)?);
    let scoped = [
        a.idempotent_order(Buyer(&mine), "key-1", &event),
        a.idempotent_order(Buyer(&yours), "key-1", &event),
        a.idempotent_order(Bare, "key-1", &event),
        a.idempotent_order(Admission(mine.as_str()), "key-1", &event),
    ];
    for (i, one) in scoped.iter().enumerate() {
        for other in &scoped[i + 1..] {
            assert_ne!(one, other);
        }
    }
    assert_eq!(a.idempotent_order(Bare, "key-1", &event), scoped[2]);
    // The id's bytes are not the secret's.
    assert_ne!(first.0.to_le_bytes(), first.1[..16]);
    // Not the unkeyed derivation of before: plain SHA-256 of public parts.
    let mut unkeyed = Sha256::new();
    for part in [
        "seatclaim hold token under an admission v1",
        "jti-1",
        "key-1",
        "gala",
    ] {
        unkeyed.update(part.as_bytes());
        unkeyed.update([0u8]);
    }
    let unkeyed: [u8; 32] = unkeyed.finalize().into();
    assert_ne!(first.1, unkeyed);
    Ok(())
}
