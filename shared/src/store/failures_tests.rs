use super::*;
use crate::domain::{EventId, OrderId};
use std::collections::HashMap;

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn reason(code: &str) -> CancellationReason {
    CancellationReason::builder().code(code).build()
}

fn seat_item(status: &str) -> Item {
    HashMap::from([(STATUS.to_owned(), AttributeValue::S(status.to_owned()))])
}

fn token() -> Result<HoldToken, Box<dyn std::error::Error>> {
    Ok(HoldToken::generate(&EventId::parse("e")?, Millis(10_000))?)
}

#[test]
fn cancellation_reasons_are_typed() {
    let got = cancellation(&[
        reason("None"),
        reason("ConditionalCheckFailed"),
        reason("TransactionConflict"),
        reason("ThrottlingError"),
        reason("ProvisionedThroughputExceeded"),
        reason("ValidationError"),
    ]);
    assert_eq!(got[0], None);
    assert_eq!(got[1], Some(ItemFailure::Condition(None)));
    assert_eq!(got[2], Some(ItemFailure::Conflict));
    assert_eq!(
        got[3],
        Some(ItemFailure::Unavailable("ThrottlingError".into()))
    );
    assert_eq!(
        got[4],
        Some(ItemFailure::Unavailable(
            "ProvisionedThroughputExceeded".into()
        ))
    );
    assert_eq!(
        got[5],
        Some(ItemFailure::Rejected("ValidationError".into()))
    );
}

#[test]
fn what_a_refused_claim_saw_of_the_seat() {
    let item = |pairs: &[(&str, AttributeValue)]| -> Item {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect()
    };
    let s = |v: &str| AttributeValue::S(v.to_owned());
    let held = item(&[
        (STATUS, s(SEAT_HELD)),
        (HOLDER, s("o1")),
        (HOLD_EXPIRES_AT, AttributeValue::N("1700".into())),
    ]);
    let sold = item(&[(STATUS, s(SEAT_SOLD)), (HOLDER, s("o2"))]);
    let cases = [
        (
            Some(ItemFailure::Condition(Some(held))),
            Some(("o1", SeatSeen::HeldUntil(Millis(1700)))),
        ),
        (
            Some(ItemFailure::Condition(Some(sold))),
            Some(("o2", SeatSeen::Sold)),
        ),
        // Available (a claim refused for another reason): nothing seen.
        (
            Some(ItemFailure::Condition(Some(seat_item("AVAILABLE")))),
            None,
        ),
        (Some(ItemFailure::Condition(None)), None),
        (Some(ItemFailure::Conflict), None),
        (
            Some(ItemFailure::Unavailable("ThrottlingError".into())),
            None,
        ),
        (None, None),
    ];
    for (failure, want) in cases {
        let got = seat_seen(failure.as_ref());
        let got = got.as_ref().map(|(holder, seen)| (holder.as_str(), *seen));
        assert_eq!(got, want, "{failure:?}");
    }
}

#[test]
fn claim_decisions() -> TestResult {
    let t = token()?;
    let now = Millis(1);
    let claim = |seat, order| {
        claim_error(seat, order, &t, 10, now).map(|e| e.map_or("undecided", |e| e.code()))
    };
    let throttled = || Some(ItemFailure::Unavailable("ThrottlingError".into()));
    // Throttling is never seat-held: on the seat alone nothing is decided
    // (the caller reads the seat); anywhere else a 503.
    assert_eq!(claim(throttled(), None)?, "undecided");
    assert_eq!(claim(None, throttled())?, "store-unavailable");
    assert_eq!(
        claim(throttled(), Some(ItemFailure::Conflict))?,
        "store-unavailable"
    );
    // A conflict on the seat: another transaction was writing it, and
    // may yet fail: nothing is decided (never seat-held on it).
    assert_eq!(claim(Some(ItemFailure::Conflict), None)?, "undecided");
    // The order's own failure still comes first.
    assert_eq!(
        claim(
            Some(ItemFailure::Conflict),
            Some(ItemFailure::Condition(None))
        )?,
        "order-not-found"
    );
    // A conflict on the order alone: retry.
    assert_eq!(
        claim(None, Some(ItemFailure::Conflict))?,
        "store-unavailable"
    );
    assert_eq!(
        claim(Some(ItemFailure::Condition(None)), None)?,
        "seat-not-found"
    );
    assert_eq!(
        claim(Some(ItemFailure::Condition(Some(seat_item("SOLD")))), None)?,
        "seat-sold"
    );
    assert_eq!(
        claim(Some(ItemFailure::Condition(Some(seat_item("HELD")))), None)?,
        "seat-held"
    );
    // The order is missing: that comes first.
    assert_eq!(
        claim(
            Some(ItemFailure::Condition(Some(seat_item("HELD")))),
            Some(ItemFailure::Condition(None))
        )?,
        "order-not-found"
    );
    assert_eq!(claim(None, None)?, "store-unavailable");
    // A reason no retry changes is an internal error, not a 503 to retry forever.
    assert_eq!(
        claim(Some(ItemFailure::Rejected("ValidationError".into())), None)?,
        "internal-error"
    );
    Ok(())
}

/// An order item as the store writes it, PENDING until `expires_at`
/// (a 1 s guard), opened by `token`.
fn order_item(token: &HoldToken, expires_at: i64) -> Item {
    use super::super::items::order::HOLDER_DEADLINE;
    use super::super::schema::{CREATED_AT, EVENT_ID, EXPIRES_AT, ORDER_ID, STATUS, TOKEN_HASH};
    let v = |x: &str| AttributeValue::S(x.to_owned());
    let num = |x: i64| AttributeValue::N(x.to_string());
    HashMap::from([
        (ORDER_ID.to_owned(), v("o1")),
        (EVENT_ID.to_owned(), v("e")),
        (STATUS.to_owned(), v("PENDING")),
        (EXPIRES_AT.to_owned(), num(expires_at)),
        (HOLDER_DEADLINE.to_owned(), num(expires_at - 1_000)),
        (CREATED_AT.to_owned(), num(0)),
        (TOKEN_HASH.to_owned(), v(&token.hash())),
    ])
}

#[test]
fn a_token_from_before_an_extension_is_retried_with_the_orders_expiry() -> TestResult {
    let t = token()?; // carries expiry 10,000
    let now = Millis(5_000);
    let failed = |item| Some(ItemFailure::Condition(Some(item)));
    assert_eq!(
        extended_since(failed(order_item(&t, 60_000)).as_ref(), &t, now)?,
        Some(Millis(60_000))
    );
    // The expiry was not the problem (it matches): decided as usual.
    assert_eq!(
        extended_since(failed(order_item(&t, 10_000)).as_ref(), &t, now)?,
        None
    );
    // Another order's token, a missing order, an order past its deadline.
    let other = token()?;
    assert_eq!(
        extended_since(failed(order_item(&other, 60_000)).as_ref(), &t, now)?,
        None
    );
    assert_eq!(
        extended_since(Some(&ItemFailure::Condition(None)), &t, now)?,
        None
    );
    assert_eq!(
        extended_since(failed(order_item(&t, 60_000)).as_ref(), &t, Millis(59_000))?,
        None
    );
    assert_eq!(extended_since(Some(&ItemFailure::Conflict), &t, now)?, None);
    Ok(())
}

#[test]
fn drop_decisions() -> TestResult {
    let t = token()?;
    let drop = |seat, order| release_error(seat, order, &t, Millis(1)).map(|e| e.code());
    assert_eq!(
        drop(
            Some(ItemFailure::Unavailable("ThrottlingError".into())),
            None
        )?,
        "store-unavailable"
    );
    assert_eq!(
        drop(Some(ItemFailure::Condition(None)), None)?,
        "seat-not-found"
    );
    assert_eq!(
        drop(Some(ItemFailure::Condition(Some(seat_item("HELD")))), None)?,
        "seat-not-held"
    );
    assert_eq!(
        drop(None, Some(ItemFailure::Condition(None)))?,
        "order-not-found"
    );
    assert_eq!(
        drop(Some(ItemFailure::Conflict), None)?,
        "store-unavailable"
    );
    Ok(())
}

#[test]
fn confirm_decisions() -> TestResult {
    let order = OrderId::from_random(&EventId::parse("e")?, 42);
    let other = HashMap::from([(
        super::super::schema::ORDER_ID.to_owned(),
        AttributeValue::S("someone-else".into()),
    )]);
    let cond = |item: Option<Item>| Some(ItemFailure::Condition(item));
    let outcome =
        |items: Vec<(ConfirmRole, Option<ItemFailure>)>| confirm_outcome(&items, order.as_str());
    use ConfirmRole::*;
    assert_eq!(
        outcome(vec![
            (Paid, None),
            (Order, None),
            (Payment, cond(Some(other.clone())))
        ])?,
        ConfirmOutcome::PaymentReused
    );
    assert_eq!(
        outcome(vec![
            (Paid, cond(None)),
            (Order, cond(None)),
            (Payment, cond(Some(other)))
        ])?,
        ConfirmOutcome::PaymentReused,
        "nothing changes for a reused payment"
    );
    assert_eq!(
        outcome(vec![(Paid, cond(None)), (Order, None), (Payment, None)])?,
        ConfirmOutcome::SeatsTaken
    );
    assert_eq!(
        outcome(vec![
            (Paid, cond(None)),
            (Order, cond(None)),
            (Payment, None)
        ])?,
        ConfirmOutcome::OrderChanged
    );
    assert_eq!(
        outcome(vec![
            (Paid, None),
            (Release, cond(None)),
            (Order, None),
            (Payment, None)
        ])?,
        ConfirmOutcome::OrderChanged
    );
    assert_eq!(
        outcome(vec![(Places, cond(None)), (Order, None), (Payment, None)])?,
        ConfirmOutcome::PlacesMoved,
        "a bucket moved: plan again"
    );
    assert_eq!(
        outcome(vec![
            (Paid, cond(None)),
            (Places, cond(None)),
            (Order, None),
            (Payment, None)
        ])?,
        ConfirmOutcome::SeatsTaken,
        "a taken seat decides"
    );
    assert_eq!(
        outcome(vec![
            (
                Paid,
                Some(ItemFailure::Unavailable("ThrottlingError".into()))
            ),
            (Order, cond(None)),
            (Payment, None)
        ])
        .map_err(|e| e.code()),
        Err("store-unavailable")
    );
    assert_eq!(
        outcome(vec![
            (Paid, Some(ItemFailure::Conflict)),
            (Order, None),
            (Payment, None)
        ])
        .map_err(|e| e.code()),
        Err("store-unavailable")
    );
    Ok(())
}

#[test]
fn a_lost_block_names_the_seats_a_rival_has_or_is_taking() {
    let held_item = |expires: &str| {
        let mut item = seat_item("HELD");
        item.insert(HOLDER.to_owned(), AttributeValue::S("o".into()));
        item.insert(
            HOLD_EXPIRES_AT.to_owned(),
            AttributeValue::N(expires.into()),
        );
        Some(ItemFailure::Condition(Some(item)))
    };
    let sold = {
        let mut item = seat_item("SOLD");
        item.insert(HOLDER.to_owned(), AttributeValue::S("o".into()));
        Some(ItemFailure::Condition(Some(item)))
    };
    let until = Some(SeatSeen::HeldUntil(Millis(900)));
    type Lost = Vec<(usize, Option<SeatSeen>)>;
    let cases: [(Vec<Option<ItemFailure>>, Lost); 5] = [
        (vec![None, held_item("900"), None, None], vec![(1, until)]),
        // A rival in flight: taken, but nothing seen of it.
        (
            vec![Some(ItemFailure::Conflict), None, sold.clone(), None],
            vec![(0, None), (2, Some(SeatSeen::Sold))],
        ),
        // A seat item it could not read is named, unseen.
        (vec![held_item("x"), None], vec![(0, None)]),
        // The order's item (last) is not a seat.
        (vec![None, None, held_item("900")], vec![]),
        (vec![None, None, None], vec![]),
    ];
    for (reasons, lost) in cases {
        assert_eq!(lost_seats(&reasons, reasons.len() - 1), lost, "{reasons:?}");
    }
}

/// `order_item` as an offer to an entry, holding `seats`.
fn offer_item(token: &HoldToken, expires_at: i64, seats: &[&str]) -> Item {
    use super::super::items::order::{OFFER_BUYER_ID, WAITLIST_ENTRY_ID};
    use super::super::schema::SEATS;
    let mut item = order_item(token, expires_at);
    let v = |x: &str| AttributeValue::S(x.to_owned());
    item.insert(
        WAITLIST_ENTRY_ID.to_owned(),
        v("6f9619ff-8b86-d011-b42d-00cf4fc964ff"),
    );
    item.insert(OFFER_BUYER_ID.to_owned(), v("user:1"));
    if !seats.is_empty() {
        let seats = seats.iter().map(|s| (*s).to_owned()).collect();
        item.insert(SEATS.to_owned(), AttributeValue::Ss(seats));
    }
    item
}

#[test]
fn an_offers_claim_of_a_seat_it_was_not_offered_is_waitlist_only() -> TestResult {
    let t = token()?;
    let failed = |item| Some(ItemFailure::Condition(Some(item)));
    let claim = |seat, order| {
        claim_error(seat, order, &t, 10, Millis(1)).map(|e| e.map_or("undecided", |e| e.code()))
    };
    let offer = || failed(offer_item(&t, 60_000, &["A-1-1"]));
    assert_eq!(claim(None, offer())?, "waitlist-only");
    // Another's hold on the seat too: a claim of more all the same.
    assert_eq!(
        claim(
            Some(ItemFailure::Condition(Some(seat_item("HELD")))),
            offer()
        )?,
        "waitlist-only"
    );
    // An order that is no offer, refused the same way, is full.
    assert_eq!(claim(None, failed(order_item(&t, 60_000)))?, "seat-limit");
    // The token and the expiry come first, offer or not.
    let other = token()?;
    assert_eq!(
        claim(None, failed(offer_item(&other, 60_000, &["A-1-1"])))?,
        "unauthorized"
    );
    assert_eq!(
        claim(None, failed(offer_item(&t, 500, &["A-1-1"])))?,
        "order-not-holdable"
    );
    Ok(())
}

#[test]
fn a_drop_of_an_offers_last_seat_goes_again_as_its_end() -> TestResult {
    let t = token()?;
    let now = Millis(1);
    let failed = |item| Some(ItemFailure::Condition(Some(item)));
    let last = |order: Option<ItemFailure>, seat| {
        offers_last(order.as_ref(), seat, &t, now).map(|o| o.map(|o| o.order.order_id))
    };
    let one = failed(offer_item(&t, 60_000, &["A-1-1"]));
    assert_eq!(last(one.clone(), "A-1-1")?, Some(OrderId::parse("o1")?));
    // Not the seat it holds, more than one, no offer, another's token,
    // run out, or no order: decided as any drop.
    assert_eq!(last(one, "A-1-2")?, None);
    let two = failed(offer_item(&t, 60_000, &["A-1-1", "A-1-2"]));
    assert_eq!(last(two.clone(), "A-1-1")?, None);
    assert!(still_holds(two.as_ref(), "A-1-1", &t, now)?);
    let mut plain = order_item(&t, 60_000);
    plain.insert(
        super::super::schema::SEATS.to_owned(),
        AttributeValue::Ss(vec!["A-1-1".to_owned()]),
    );
    assert_eq!(last(failed(plain), "A-1-1")?, None);
    let other = token()?;
    let theirs = failed(offer_item(&other, 60_000, &["A-1-1"]));
    assert_eq!(last(theirs.clone(), "A-1-1")?, None);
    assert!(!still_holds(theirs.as_ref(), "A-1-1", &t, now)?);
    assert_eq!(last(failed(offer_item(&t, 0, &["A-1-1"])), "A-1-1")?, None);
    assert_eq!(last(Some(ItemFailure::Condition(None)), "A-1-1")?, None);
    Ok(())
}
