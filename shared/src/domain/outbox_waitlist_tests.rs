//! Unit tests of `domain::outbox`'s waitlist events.

use super::super::images::{
    EntryImage, ItemChange, ItemImage, OfferImage, OrderImage, WaitlistImage,
};
use super::super::state_events;
use super::super::tests::order;
use crate::domain::buyer::BuyerId;
use crate::domain::waitlist::{EndReason, EntryStatus};
use crate::domain::{EntryId, EventId, Millis, OrderStatus, SeatId};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// The waitlist's events: `(detail-type, entryId, orderId, reason)`.
fn waitlist_events(
    old: Option<ItemImage>,
    new: ItemImage,
) -> Vec<(&'static str, String, String, String)> {
    waitlist_events_at(old, new, Millis(1_000))
}

/// [`waitlist_events`] of a write at `at`.
fn waitlist_events_at(
    old: Option<ItemImage>,
    new: ItemImage,
    at: Millis,
) -> Vec<(&'static str, String, String, String)> {
    let change = ItemChange {
        record_id: "r1".into(),
        at,
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
    use EndReason::{Declined, OfferExpired, Removed};
    use OrderStatus::*;
    let offer = |status, holding: bool, cancelled_as| -> Result<ItemImage, crate::error::Error> {
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
                cancelled_as,
            }),
            ..order(status, 5_000)?
        }))
    };
    let live = || offer(Pending, true, None);
    let one = |kind: &'static str, reason: &str| {
        vec![(kind, "e1".to_owned(), "o1".to_owned(), reason.to_owned())]
    };
    let none = Vec::new;
    let cases = [
        (None, live()?, one("waitlist.offered", "")),
        // The first end of a live offer holding something, once.
        (
            Some(live()?),
            offer(Completed, true, None)?,
            one("waitlist.purchased", ""),
        ),
        (
            Some(live()?),
            offer(Cancelled, true, Some(Declined))?,
            one("waitlist.ended", "declined"),
        ),
        (
            Some(live()?),
            offer(Cancelled, true, Some(Removed))?,
            one("waitlist.ended", "removed"),
        ),
        (
            Some(live()?),
            offer(Cancelled, true, Some(OfferExpired))?,
            one("waitlist.ended", "offer-expired"),
        ),
        (
            Some(live()?),
            offer(Expired, true, None)?,
            one("waitlist.ended", "offer-expired"),
        ),
        (
            Some(live()?),
            offer(RefundDue, true, None)?,
            one("waitlist.ended", "refunded"),
        ),
        (
            Some(live()?),
            offer(Pending, false, None)?,
            one("waitlist.ended", "declined"),
        ),
        // A claim or an extension of a live offer says nothing of its entry.
        (Some(live()?), live()?, none()),
        // After the entry's end, nothing more: a cancel of an emptied or
        // swept offer, a late payment's refund, a sale after the delete.
        (
            Some(offer(Pending, false, None)?),
            offer(Expired, false, None)?,
            none(),
        ),
        (
            Some(offer(Pending, false, None)?),
            offer(Cancelled, false, Some(Declined))?,
            none(),
        ),
        (
            Some(offer(Pending, false, None)?),
            offer(RefundDue, false, None)?,
            none(),
        ),
        (
            Some(offer(Expired, true, None)?),
            offer(Cancelled, true, Some(OfferExpired))?,
            none(),
        ),
        (
            Some(offer(Expired, true, None)?),
            offer(Completed, true, None)?,
            none(),
        ),
        (
            Some(offer(Cancelled, true, Some(Removed))?),
            offer(RefundDue, true, Some(Removed))?,
            none(),
        ),
    ];
    for (old, new, want) in cases {
        assert_eq!(
            waitlist_events(old.clone(), new.clone()),
            want,
            "{old:?} -> {new:?}"
        );
    }
    // The offers above expire at 5,000. Past it, with no write to say so,
    // the offer had run out: the first write after says so, whatever it
    // did (a late payment's refund, a sale after the delete, a cancel).
    let later = [
        (offer(RefundDue, true, None)?, "offer-expired"),
        (offer(Completed, true, None)?, "offer-expired"),
        (offer(Cancelled, true, Some(OfferExpired))?, "offer-expired"),
        (offer(Expired, true, None)?, "offer-expired"),
    ];
    for (new, reason) in later {
        let said = waitlist_events_at(Some(live()?), new.clone(), Millis(5_000));
        assert_eq!(said, one("waitlist.ended", reason), "{new:?}");
    }
    // Before it (at its last live instant), a payment still buys.
    let bought = waitlist_events_at(Some(live()?), offer(Completed, true, None)?, Millis(4_999));
    assert_eq!(bought, one("waitlist.purchased", ""));
    // Beside the order's own events, after them.
    let change = ItemChange {
        record_id: "r2".into(),
        at: Millis(1_000),
        old: None,
        new: Some(live()?),
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
