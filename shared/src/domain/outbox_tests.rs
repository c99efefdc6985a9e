//! Unit tests of `domain::outbox`.

use super::*;
use crate::domain::ga::{HeldPlaces, PlaceHold};

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn order(status: OrderStatus, expires_at: i64) -> Result<OrderImage, crate::error::Error> {
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

/// The waitlist's events: `(detail-type, entryId, orderId, reason)`.
fn waitlist_events(
    old: Option<ItemImage>,
    new: ItemImage,
) -> Vec<(&'static str, String, String, String)> {
    let change = ItemChange {
        record_id: "r1".into(),
        at: Millis(1_000),
        old,
        new: Some(new),
    };
    let text = |v: Option<String>| v.unwrap_or_default();
    state_events(&change)
        .into_iter()
        .filter(|e| e.detail_type.as_str().starts_with("waitlist."))
        .map(|e| {
            let d = e.detail;
            (
                e.detail_type.as_str(),
                text(d.entry_id.map(|id| id.to_string())),
                text(d.order_id.map(|id| id.to_string())),
                text(d.reason.map(str::to_owned)),
            )
        })
        .collect()
}

fn waitlist(generation: u64, opened: bool, ended: bool) -> Result<ItemImage, crate::error::Error> {
    Ok(ItemImage::Waitlist(WaitlistImage {
        event_id: EventId::parse("ev")?,
        generation,
        opened,
        ended,
    }))
}

#[test]
fn a_waitlist_says_when_it_opens_and_closes_and_nothing_else() -> TestResult {
    let cases = [
        (None, waitlist(1, false, false)?, vec![]),
        (None, waitlist(1, true, false)?, vec!["waitlist.opened"]),
        (
            Some(waitlist(1, false, false)?),
            waitlist(1, true, false)?,
            vec!["waitlist.opened"],
        ),
        // A settings put, or the offerer's hand-on: the same state again.
        (
            Some(waitlist(1, true, false)?),
            waitlist(1, true, false)?,
            vec![],
        ),
        (
            Some(waitlist(1, true, false)?),
            waitlist(1, true, true)?,
            vec!["waitlist.closed"],
        ),
        // Closed while armed; a new generation put open.
        (
            Some(waitlist(1, false, false)?),
            waitlist(1, false, true)?,
            vec!["waitlist.closed"],
        ),
        (
            Some(waitlist(1, true, true)?),
            waitlist(2, true, false)?,
            vec!["waitlist.opened"],
        ),
    ];
    for (old, new, want) in cases {
        let kinds: Vec<&str> = waitlist_events(old.clone(), new.clone())
            .into_iter()
            .map(|(kind, ..)| kind)
            .collect();
        assert_eq!(kinds, want, "{old:?} -> {new:?}");
    }
    let change = ItemChange {
        record_id: "r9".into(),
        at: Millis(1_000),
        old: Some(waitlist(3, true, false)?),
        new: Some(waitlist(3, true, true)?),
    };
    let closed = &state_events(&change)[0].detail;
    assert_eq!((closed.generation, &closed.order_id), (Some(3), &None));
    Ok(())
}

#[test]
fn an_entry_says_its_join_and_a_waiting_end_its_offer_the_rest() -> TestResult {
    use EntryStatus::*;
    let entry = |status| -> Result<ItemImage, crate::error::Error> {
        Ok(ItemImage::Entry(EntryImage {
            event_id: EventId::parse("ev")?,
            entry_id: EntryId::parse("e1")?,
            buyer_id: BuyerId::parse("user:1")
                .ok_or(crate::error::Error::BadRequest("buyer".into()))?,
            status,
        }))
    };
    let one = |kind: &'static str, reason: &str| {
        vec![(kind, "e1".to_owned(), String::new(), reason.to_owned())]
    };
    assert_eq!(
        waitlist_events(None, entry(Waiting)?),
        one("waitlist.joined", "")
    );
    assert_eq!(
        waitlist_events(Some(entry(Waiting)?), entry(Ended(EndReason::Left))?),
        one("waitlist.ended", "left")
    );
    assert_eq!(
        waitlist_events(Some(entry(Waiting)?), entry(Ended(EndReason::Removed))?),
        one("waitlist.ended", "removed")
    );
    // Its offer's move says nothing here: the order's creation does.
    assert_eq!(
        waitlist_events(Some(entry(Waiting)?), entry(Offered)?),
        vec![]
    );
    Ok(())
}

#[test]
fn an_offers_order_says_the_offer_and_how_its_entry_ended() -> TestResult {
    use OrderStatus::*;
    let offer = |status, holding: bool, removed| -> Result<ItemImage, crate::error::Error> {
        Ok(ItemImage::Order(OrderImage {
            seats: if holding {
                vec![SeatId::parse("A-1-1")?]
            } else {
                vec![]
            },
            offer: Some(OfferImage {
                entry_id: EntryId::parse("e1")?,
                buyer_id: BuyerId::parse("user:1")
                    .ok_or(crate::error::Error::BadRequest("buyer".into()))?,
                removed,
            }),
            ..order(status, 5_000)?
        }))
    };
    let one = |kind: &'static str, reason: &str| {
        vec![(kind, "e1".to_owned(), "o1".to_owned(), reason.to_owned())]
    };
    let cases = [
        (
            None,
            offer(Pending, true, false)?,
            one("waitlist.offered", ""),
        ),
        (
            Some(offer(Pending, true, false)?),
            offer(Completed, true, false)?,
            one("waitlist.purchased", ""),
        ),
        (
            Some(offer(Pending, true, false)?),
            offer(Cancelled, true, false)?,
            one("waitlist.ended", "declined"),
        ),
        (
            Some(offer(Pending, true, true)?),
            offer(Cancelled, true, true)?,
            one("waitlist.ended", "removed"),
        ),
        (
            Some(offer(Pending, true, false)?),
            offer(Expired, true, false)?,
            one("waitlist.ended", "offer-expired"),
        ),
        (
            Some(offer(Pending, true, false)?),
            offer(RefundDue, true, false)?,
            one("waitlist.ended", "refunded"),
        ),
        // Dropped to nothing: declined then, and nothing more after.
        (
            Some(offer(Pending, true, false)?),
            offer(Pending, false, false)?,
            one("waitlist.ended", "declined"),
        ),
        (
            Some(offer(Pending, false, false)?),
            offer(Expired, false, false)?,
            vec![],
        ),
        (
            Some(offer(Pending, false, false)?),
            offer(Cancelled, false, false)?,
            vec![],
        ),
        // A claim or an extension of a live offer says nothing of its entry.
        (
            Some(offer(Pending, true, false)?),
            offer(Pending, true, false)?,
            vec![],
        ),
    ];
    for (old, new, want) in cases {
        assert_eq!(
            waitlist_events(old.clone(), new.clone()),
            want,
            "{old:?} -> {new:?}"
        );
    }
    // Beside the order's own events, after them.
    let change = ItemChange {
        record_id: "r2".into(),
        at: Millis(1_000),
        old: None,
        new: Some(offer(Pending, true, false)?),
    };
    let kinds: Vec<_> = state_events(&change)
        .iter()
        .map(|e| e.detail_type.as_str())
        .collect();
    assert_eq!(kinds, ["order.created", "waitlist.offered"]);
    let offered = &state_events(&change)[1].detail;
    assert_eq!(
        (
            offered.buyer_id.as_deref(),
            offered.expires_at.is_some(),
            offered.id.as_str()
        ),
        (Some("user:1"), true, "r2.1")
    );
    Ok(())
}
