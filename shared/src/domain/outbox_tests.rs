//! Unit tests of `domain::outbox`.

use super::*;
use crate::domain::ga::{HeldPlaces, PlaceHold};
use crate::domain::returns::{ReturnStatus, ReturnUnit};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// A PENDING-or-else order `o1` of event `ev`, holding nothing (the
/// waitlist's tests use it too).
pub(super) fn order(
    status: OrderStatus,
    expires_at: i64,
) -> Result<OrderImage, crate::error::Error> {
    Ok(OrderImage {
        order_id: OrderId::parse("o1")?,
        event_id: EventId::parse("ev")?,
        status,
        expires_at: Millis(expires_at),
        payment_id: None,
        refund_payment_ids: vec![],
        seats: vec![],
        places: vec![],
        user_id: None,
        buyer_id: None,
        offer: None,
    })
}

fn seat(status: SeatStatus, holder: Option<&str>) -> Result<SeatImage, crate::error::Error> {
    Ok(SeatImage {
        event_id: EventId::parse("ev")?,
        seat_id: SeatId::parse("A-1-1")?,
        status,
        holder: holder.map(OrderId::parse).transpose()?,
        hold_expires_at: holder.map(|_| Millis(9_000)),
        payment_id: (status == SeatStatus::Sold)
            .then(|| PaymentId::parse("pay"))
            .transpose()?,
    })
}

fn bucket(
    sold: u32,
    holds: &[(&str, u32)],
    sale: Option<&str>,
) -> Result<BucketImage, crate::error::Error> {
    Ok(BucketImage {
        event_id: EventId::parse("ev")?,
        section_id: SectionId::parse("FLOOR")?,
        sold,
        holds: holds
            .iter()
            .map(|(o, q)| {
                Ok(PlaceHold {
                    order: OrderId::parse(o)?,
                    quantity: *q,
                    expires_at: Millis(9_000),
                })
            })
            .collect::<Result<_, crate::error::Error>>()?,
        sale: sale
            .map(|o| {
                Ok::<_, crate::error::Error>((OrderId::parse(o)?, Some(PaymentId::parse("pay")?)))
            })
            .transpose()?,
    })
}

fn events(
    old: Option<ItemImage>,
    new: Option<ItemImage>,
) -> Vec<(&'static str, String, Option<u32>)> {
    let change = ItemChange {
        record_id: "r1".into(),
        at: Millis(1_000),
        old,
        new,
    };
    state_events(&change)
        .into_iter()
        .map(|e| {
            (
                e.detail_type.as_str(),
                e.detail.order_id.map(|o| o.to_string()).unwrap_or_default(),
                e.detail.quantity,
            )
        })
        .collect()
}

#[test]
fn order_writes_become_lifecycle_events() -> TestResult {
    use OrderStatus::*;
    let o = |s, e| order(s, e).map(ItemImage::Order);
    assert_eq!(
        events(None, Some(o(Pending, 5)?)),
        vec![("order.created", "o1".into(), None)]
    );
    assert_eq!(
        events(Some(o(Pending, 5)?), Some(o(Pending, 5)?)),
        vec![],
        "a claim only changes its seats"
    );
    assert_eq!(
        events(Some(o(Pending, 5)?), Some(o(Pending, 9)?)),
        vec![("order.extended", "o1".into(), None)]
    );
    for (status, kind) in [
        (Completed, "order.completed"),
        (Expired, "order.expired"),
        (Cancelled, "order.cancelled"),
        (RefundDue, "order.refund_due"),
    ] {
        assert_eq!(
            events(Some(o(Pending, 5)?), Some(o(status, 5)?)),
            vec![(kind, "o1".into(), None)]
        );
    }
    assert_eq!(
        events(Some(o(Expired, 5)?), Some(o(Completed, 5)?)),
        vec![("order.completed", "o1".into(), None)],
        "a late payment"
    );
    assert_eq!(
        events(Some(o(Completed, 5)?), None),
        vec![],
        "a removed item"
    );
    // A further payment for a completed order: money to give back.
    let mut paid_twice = order(Completed, 5)?;
    paid_twice
        .refund_payment_ids
        .push(PaymentId::parse("pay-2")?);
    let change = ItemChange {
        record_id: "r9".into(),
        at: Millis(1_000),
        old: Some(o(Completed, 5)?),
        new: Some(ItemImage::Order(paid_twice)),
    };
    let out = state_events(&change);
    assert_eq!(out.len(), 1);
    assert_eq!(
        (
            out[0].detail_type,
            out[0].detail.payment_id.as_ref().map(PaymentId::as_str)
        ),
        (DetailType::OrderRefundDue, Some("pay-2"))
    );
    assert_eq!(out[0].detail.id, "r9.0");
    Ok(())
}

/// `order.completed` says what was bought (seats, and places summed per
/// section) and for whom; no other order event carries those fields.
#[test]
fn a_completed_order_says_what_was_bought_and_by_whom() -> TestResult {
    let held = |section: &str, bucket, quantity| -> Result<HeldPlaces, crate::error::Error> {
        Ok(HeldPlaces {
            section: SectionId::parse(section)?,
            bucket,
            quantity,
        })
    };
    let paid = OrderImage {
        status: OrderStatus::Completed,
        payment_id: Some(PaymentId::parse("pay-1")?),
        seats: vec![SeatId::parse("A-1-1")?, SeatId::parse("A-1-2")?],
        places: vec![
            held("FLOOR", 3, 2)?,
            held("PIT", 0, 1)?,
            held("FLOOR", 7, 1)?,
        ],
        user_id: Some("u-7".into()),
        buyer_id: crate::domain::buyer::BuyerId::parse("user:42"),
        ..order(OrderStatus::Pending, 5)?
    };
    let pending = OrderImage {
        status: OrderStatus::Pending,
        payment_id: None,
        ..paid.clone()
    };
    let change = ItemChange {
        record_id: "r1".into(),
        at: Millis(1_000),
        old: Some(ItemImage::Order(pending.clone())),
        new: Some(ItemImage::Order(paid)),
    };
    let out = state_events(&change);
    assert_eq!(out.len(), 1);
    let detail = serde_json::to_value(&out[0].detail)?;
    assert_eq!(detail["seats"], serde_json::json!(["A-1-1", "A-1-2"]));
    assert_eq!(
        detail["ga"],
        serde_json::json!([{"sectionId": "FLOOR", "quantity": 3},
                           {"sectionId": "PIT", "quantity": 1}])
    );
    assert_eq!(
        (&detail["userId"], &detail["buyerId"]),
        (&serde_json::json!("u-7"), &serde_json::json!("user:42"))
    );
    assert_eq!(detail["paymentId"], "pay-1");
    // Another order event of the same order says none of it.
    let expired = ItemChange {
        old: Some(ItemImage::Order(pending.clone())),
        new: Some(ItemImage::Order(OrderImage {
            status: OrderStatus::Expired,
            ..pending
        })),
        ..change
    };
    let detail = serde_json::to_value(&state_events(&expired)[0].detail)?;
    for field in ["seats", "ga", "userId", "buyerId"] {
        assert!(detail.get(field).is_none(), "{field} in {detail}");
    }
    // Without places, user or buyer: the lists are there, empty, and
    // the ids absent.
    let bare = OrderImage {
        status: OrderStatus::Completed,
        ..order(OrderStatus::Pending, 5)?
    };
    let plain = ItemChange {
        record_id: "r2".into(),
        at: Millis(1_000),
        old: Some(ItemImage::Order(order(OrderStatus::Pending, 5)?)),
        new: Some(ItemImage::Order(bare)),
    };
    let detail = serde_json::to_value(&state_events(&plain)[0].detail)?;
    assert_eq!(
        (&detail["seats"], &detail["ga"]),
        (&serde_json::json!([]), &serde_json::json!([]))
    );
    assert!(detail.get("userId").is_none() && detail.get("buyerId").is_none());
    Ok(())
}

#[test]
fn seat_writes_become_held_released_and_sold() -> TestResult {
    use SeatStatus::*;
    let s = |st, h| seat(st, h).map(ItemImage::Seat);
    assert_eq!(
        events(None, Some(s(Available, None)?)),
        vec![],
        "created with its event"
    );
    assert_eq!(
        events(Some(s(Available, None)?), Some(s(Held, Some("o1"))?)),
        vec![("seat.held", "o1".into(), None)]
    );
    assert_eq!(
        events(Some(s(Held, Some("o1"))?), Some(s(Held, Some("o1"))?)),
        vec![],
        "an extension is the order's event"
    );
    assert_eq!(
        events(Some(s(Held, Some("o1"))?), Some(s(Available, None)?)),
        vec![("seat.released", "o1".into(), None)]
    );
    assert_eq!(
        events(Some(s(Held, Some("old"))?), Some(s(Held, Some("o1"))?)),
        vec![
            ("seat.released", "old".into(), None),
            ("seat.held", "o1".into(), None)
        ],
        "an expired hold taken over"
    );
    assert_eq!(
        events(Some(s(Held, Some("o1"))?), Some(s(Sold, Some("o1"))?)),
        vec![("seat.sold", "o1".into(), None)]
    );
    assert_eq!(
        events(Some(s(Held, Some("old"))?), Some(s(Sold, Some("o1"))?)),
        vec![
            ("seat.released", "old".into(), None),
            ("seat.sold", "o1".into(), None)
        ],
        "a late payment takes an expired hold"
    );
    assert_eq!(
        events(Some(s(Sold, Some("o1"))?), Some(s(Sold, Some("o1"))?)),
        vec![]
    );
    let change = ItemChange {
        record_id: "r".into(),
        at: Millis(0),
        old: Some(s(Held, Some("o1"))?),
        new: Some(s(Sold, Some("o1"))?),
    };
    let sold = &state_events(&change)[0].detail;
    assert_eq!(
        (
            sold.seat_id.as_ref().map(SeatId::as_str),
            sold.payment_id.as_ref().map(PaymentId::as_str)
        ),
        (Some("A-1-1"), Some("pay"))
    );
    Ok(())
}

#[test]
fn bucket_writes_become_place_events_per_order() -> TestResult {
    let b = |sold, holds: &[(&str, u32)], sale| bucket(sold, holds, sale).map(ItemImage::Bucket);
    assert_eq!(events(None, Some(b(0, &[], None)?)), vec![]);
    assert_eq!(
        events(Some(b(0, &[], None)?), Some(b(0, &[("o1", 3)], None)?)),
        vec![("ga.held", "o1".into(), Some(3))]
    );
    assert_eq!(
        events(
            Some(b(0, &[("o1", 3)], None)?),
            Some(b(0, &[("o1", 1)], None)?)
        ),
        vec![("ga.released", "o1".into(), Some(2))]
    );
    assert_eq!(
        events(
            Some(b(0, &[("old", 2)], None)?),
            Some(b(0, &[("o1", 1)], None)?)
        ),
        vec![
            ("ga.released", "old".into(), Some(2)),
            ("ga.held", "o1".into(), Some(1))
        ],
        "an expired hold reclaimed"
    );
    assert_eq!(
        events(
            Some(b(1, &[("o1", 3)], Some("x"))?),
            Some(b(3, &[], Some("o1"))?)
        ),
        vec![
            ("ga.released", "o1".into(), Some(1)),
            ("ga.sold", "o1".into(), Some(2))
        ],
        "2 of 3 sold, the surplus given back"
    );
    assert_eq!(
        events(
            Some(b(0, &[("o1", 1), ("old", 2)], None)?),
            Some(b(3, &[], Some("o1"))?)
        ),
        vec![
            ("ga.released", "old".into(), Some(2)),
            ("ga.sold", "o1".into(), Some(3))
        ],
        "a late sale of its own place and a reclaimed one"
    );
    assert_eq!(
        events(
            Some(b(3, &[("o1", 2)], Some("x"))?),
            Some(b(3, &[("o1", 2)], Some("x"))?)
        ),
        vec![],
        "an extension"
    );
    Ok(())
}

#[test]
fn a_listing_says_listed_withdrawn_or_reverted_once() -> TestResult {
    let listed_at = |status, quantity, at| -> Result<ItemImage, crate::error::Error> {
        Ok(ItemImage::Return(ReturnImage {
            event_id: EventId::parse("ev")?,
            order_id: OrderId::parse("o1")?,
            unit: ReturnUnit::Places(SectionId::parse("F")?),
            quantity,
            status,
            listed_at: Millis(at),
            resale: None,
        }))
    };
    let listing = |status, quantity| listed_at(status, quantity, 1);
    let said = |old: Option<ItemImage>, new: ItemImage| {
        let change = ItemChange {
            record_id: "r".into(),
            at: Millis(5),
            old,
            new: Some(new),
        };
        state_events(&change)
            .into_iter()
            .map(|e| (e.detail_type.as_str(), e.detail.quantity))
            .collect::<Vec<_>>()
    };
    use ReturnStatus::*;
    let cases = [
        (None, listing(Listed, 2)?, vec![("return.listed", Some(2))]),
        // More places added: the listing's quantity now.
        (
            Some(listing(Listed, 2)?),
            listed_at(Listed, 3, 2)?,
            vec![("return.listed", Some(3))],
        ),
        // Listed again after a revert computed as read (stored LISTED).
        (
            Some(listing(Listed, 2)?),
            listed_at(Listed, 2, 2)?,
            vec![("return.listed", Some(2))],
        ),
        (
            Some(listing(Withdrawn, 2)?),
            listing(Listed, 1)?,
            vec![("return.listed", Some(1))],
        ),
        (
            Some(listing(Listed, 2)?),
            listing(Withdrawn, 2)?,
            vec![("return.withdrawn", Some(2))],
        ),
        (
            Some(listing(Listed, 2)?),
            listing(Reverted, 2)?,
            vec![("return.reverted", Some(2))],
        ),
        // Nothing changed that an event says.
        (Some(listing(Listed, 2)?), listing(Listed, 2)?, vec![]),
        (Some(listing(Withdrawn, 2)?), listing(Withdrawn, 2)?, vec![]),
    ];
    for (old, new, want) in cases {
        assert_eq!(said(old.clone(), new.clone()), want, "{old:?} -> {new:?}");
    }
    Ok(())
}

#[test]
fn a_resale_says_seat_resold_and_the_buyers_seat_sold() -> TestResult {
    let image = |status, resale| -> Result<ItemImage, crate::error::Error> {
        Ok(ItemImage::Return(ReturnImage {
            event_id: EventId::parse("ev")?,
            order_id: OrderId::parse("seller")?,
            unit: ReturnUnit::Seat(SeatId::parse("A-1-1")?),
            quantity: 1,
            status,
            listed_at: Millis(1),
            resale,
        }))
    };
    let resale = crate::domain::returns::Resale {
        order_id: OrderId::parse("buyer")?,
        payment_id: PaymentId::parse("pay")?,
        at: Millis(4),
    };
    let change = |old, new| ItemChange {
        record_id: "r".into(),
        at: Millis(5),
        old: Some(old),
        new: Some(new),
    };
    let listed = image(ReturnStatus::Listed, None)?;
    let events = state_events(&change(listed, image(ReturnStatus::Resold, Some(resale))?));
    let [event] = events.as_slice() else {
        return Err(format!("one event, not {events:?}").into());
    };
    assert_eq!(event.detail_type.as_str(), "seat.resold");
    assert_eq!(
        event.detail.from_order_id.as_ref().map(OrderId::as_str),
        Some("seller")
    );
    assert_eq!(
        event.detail.to_order_id.as_ref().map(OrderId::as_str),
        Some("buyer")
    );
    assert_eq!(
        event.detail.payment_id.as_ref().map(PaymentId::as_str),
        Some("pay")
    );
    // The seat sold on: the buyer's seat.sold, and no release between.
    let sold_on = change(
        ItemImage::Seat(seat(SeatStatus::Sold, Some("seller"))?),
        ItemImage::Seat(seat(SeatStatus::Sold, Some("buyer"))?),
    );
    let said: Vec<_> = state_events(&sold_on)
        .into_iter()
        .map(|e| (e.detail_type.as_str(), e.detail.order_id))
        .collect();
    assert_eq!(said, [("seat.sold", Some(OrderId::parse("buyer")?))]);
    // Sold to the same order again: nothing.
    let same = change(
        ItemImage::Seat(seat(SeatStatus::Sold, Some("buyer"))?),
        ItemImage::Seat(seat(SeatStatus::Sold, Some("buyer"))?),
    );
    assert!(state_events(&same).is_empty());
    Ok(())
}
