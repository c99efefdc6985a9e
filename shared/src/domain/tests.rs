//! The domain's own rules, unit-tested (ids, states, the expiry boundary,
//! the clock guard, extension), and helpers the other domain tests share.

use super::*;

/// Tests use `?` rather than unwrap: a failure reports the error.
type TestResult = Result<(), Box<dyn std::error::Error>>;

#[test]
fn ids_accept_the_contract_charset_and_reject_the_rest() {
    assert!(EventId::parse("gala-2026_v1.0").is_ok());
    assert!(EventId::parse(&"a".repeat(64)).is_ok());
    for bad in ["", "a#b", "a b", "ä", "a/b", "a~b"] {
        assert!(EventId::parse(bad).is_err(), "{bad:?} must be rejected");
    }
    assert!(EventId::parse(&"a".repeat(65)).is_err());
    let err = PaymentId::parse("pi#1").unwrap_err();
    assert!(err.to_string().contains("paymentId"));
}

#[test]
fn ids_validate_when_deserialized() -> TestResult {
    let r: Result<PaymentId, _> = serde_json::from_str("\"pi#1\"");
    assert!(r.is_err());
    let r: PaymentId = serde_json::from_str("\"pi_1\"")?;
    assert_eq!(r.as_str(), "pi_1");
    Ok(())
}

#[test]
fn expiry_boundary_is_exclusive() -> TestResult {
    let t = Millis(1_000);
    assert!(hold_is_live(t, Millis(999)));
    assert!(!hold_is_live(t, Millis(1_000)));
    assert_eq!(
        OrderStatus::Pending.effective(t, Millis(1_000)),
        OrderStatus::Expired
    );
    assert_eq!(
        OrderStatus::Pending.effective(t, Millis(999)),
        OrderStatus::Pending
    );
    assert_eq!(
        OrderStatus::Completed.effective(t, Millis(5_000)),
        OrderStatus::Completed
    );
    // A seat held until t: held a millisecond before, available at t.
    let held = SeatState::Held {
        order: OrderId::parse("o")?,
        expires_at: t,
    };
    assert_eq!(held.visible_status(Millis(999)), SeatStatus::Held);
    assert_eq!(held.visible_status(t), SeatStatus::Available);
    Ok(())
}

#[test]
fn expired_holds_list_as_available() -> TestResult {
    let order = OrderId::parse("o1")?;
    let held = SeatState::Held {
        order: order.clone(),
        expires_at: Millis(10),
    };
    assert_eq!(held.visible_status(Millis(9)), SeatStatus::Held);
    assert_eq!(held.visible_status(Millis(10)), SeatStatus::Available);
    assert_eq!(
        SeatState::Sold { order }.visible_status(Millis(10)),
        SeatStatus::Sold
    );
    Ok(())
}

#[test]
fn times_are_rfc3339_utc_millis() {
    assert_eq!(
        Millis(1_795_300_000_123).to_rfc3339(),
        "2026-11-21T22:26:40.123Z"
    );
}

#[test]
fn order_ids_carry_their_event_ref() -> TestResult {
    let event = EventId::parse("gala-2026")?;
    let id = OrderId::from_random(&event, u128::MAX);
    assert!(id.as_str().len() <= MAX_ID_LEN);
    assert!(
        OrderId::parse(id.as_str()).is_ok(),
        "a generated id passes the contract's id rule"
    );
    assert_eq!(id.event_ref(), Some(EventRef::of(&event)));
    assert_eq!(
        EventRef::of(&event).as_str(),
        "3d2d2b34abc1b57393e6",
        "the sample events name this ref"
    );
    assert_ne!(
        EventRef::of(&EventId::parse("gala-2027")?),
        EventRef::of(&event)
    );
    for foreign in [
        "3f1c2a9e-7b4d-4c8e-9a1f-0d2b6e5c7a81",
        "no-such-order",
        "3d2d2b34abc1b57393e6-XYZ",
    ] {
        assert_eq!(OrderId::parse(foreign)?.event_ref(), None, "{foreign}");
    }
    Ok(())
}

#[test]
fn seat_ids_split_into_row_and_number() -> TestResult {
    let split = |id: &str| -> Result<Option<(String, u32)>, Error> {
        Ok(SeatId::parse(id)?
            .row_and_number()
            .map(|(r, n)| (r.to_owned(), n)))
    };
    assert_eq!(split("A-1-12")?, Some(("A-1".into(), 12)));
    assert_eq!(split("A-1-2-100000")?, Some(("A-1-2".into(), 100_000)));
    for none in ["A", "A-", "-5", "A-1-x", "A-1-99999999999"] {
        assert_eq!(split(none)?, None, "{none}");
    }
    let e = EventRef::of(&EventId::parse("gala")?);
    assert_eq!(EventRef::from_hex(e.as_str()), Some(e.clone()));
    assert_eq!(EventRef::from_hex(&e.as_str().to_uppercase()), None);
    assert_eq!(EventRef::from_hex("abc"), None);
    Ok(())
}

#[test]
fn the_guard_is_at_most_a_quarter_of_the_hold() {
    assert_eq!(expiry_guard_ms(2000, 420), 2000);
    assert_eq!(
        expiry_guard_ms(2000, 4),
        1000,
        "a 4 s hold has a 1 s margin"
    );
    assert_eq!(expiry_guard_ms(0, 420), 0);
    assert_eq!(expiry_guard_ms(2000, 1), 250);
}

pub(super) fn pending(seats: &[&str], now: Millis) -> Result<Order, Box<dyn std::error::Error>> {
    let event = EventHead {
        event_id: EventId::parse("e")?,
        hold_seconds: 60,
        seat_count: 10,
        buyer_limit: None,
        buyer_key: None,
    };
    let order_id = OrderId::from_random(&event.event_id, 7);
    let mut order = Order::new_pending(&event, now, 2000, None, order_id, "h".into());
    order.seats = seats
        .iter()
        .map(|s| SeatId::parse(s))
        .collect::<Result<_, _>>()?;
    Ok(order)
}

#[test]
fn holder_operations_stop_a_guard_margin_before_expiry() -> TestResult {
    let t0 = Millis(1_000_000);
    let order = pending(&[], t0)?;
    let expires = order.expires_at;
    assert_eq!(order.holder_deadline, Millis(expires.0 - 2000));
    assert!(order.is_holdable(Millis(expires.0 - 2001)));
    assert!(
        !order.is_holdable(Millis(expires.0 - 2000)),
        "the guard boundary is exclusive like expiry"
    );
    assert!(
        order.is_live(Millis(expires.0 - 1)),
        "for everyone else it is live until expiresAt"
    );
    assert!(!order.is_live(expires));
    Ok(())
}

#[test]
fn extension_moves_forward_up_to_the_lifetime_cap() -> TestResult {
    let t0 = Millis(1_000_000);
    let order = pending(&[], t0)?; // created at t0, expires at t0 + 60 s
    let at = |s: u32| t0.plus_seconds(s);
    assert_eq!(extension(&order, 120, 7200, at(10)), Extension::To(at(130)));
    assert_eq!(
        extension(&order, 30, 7200, at(10)),
        Extension::Unchanged,
        "never earlier than now"
    );
    assert_eq!(
        extension(&order, 50, 7200, at(10)),
        Extension::Unchanged,
        "exactly the current expiry: unchanged"
    );
    assert_eq!(
        extension(&order, 7200, 100, at(10)),
        Extension::To(at(100)),
        "capped at createdAt + lifetime"
    );
    let mut capped = order.clone();
    capped.expires_at = at(100);
    assert_eq!(extension(&capped, 1, 100, at(50)), Extension::AtCap);
    capped.expires_at = at(60);
    assert_eq!(
        extension(&capped, 7200, 60, at(50)),
        Extension::AtCap,
        "a hold as long as the lifetime is at its cap"
    );
    Ok(())
}
