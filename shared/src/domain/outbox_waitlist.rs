//! The waitlist's events out (API.md, "Events out", the waitlist's), from
//! the images of the items that say them: the waitlist's main item
//! (`waitlist.opened`, `waitlist.closed`), an entry's (`waitlist.joined`,
//! and the end of a waiting entry), and an offer's order (`waitlist.offered`
//! when it is created, then its entry's purchase or end: an offered
//! entry's end is its order's, written once on the order and never on the
//! entry).

use super::{
    DetailType, EndReason, EntryImage, EntryStatus, Fact, OfferImage, OrderImage, OrderStatus,
    WaitlistImage,
};

/// A waitlist's main item: opened (at a put `now` or at the sell-out; a
/// new generation put open), closed (the delete). A write that changes
/// neither (a settings put, the offerer's hand-on) says nothing.
pub(super) fn waitlist_facts(old: Option<&WaitlistImage>, new: &WaitlistImage) -> Vec<Fact> {
    let same = old.filter(|old| old.generation == new.generation);
    let fact = |kind| Fact {
        generation: Some(new.generation),
        ..Fact::about(kind)
    };
    let mut facts = Vec::new();
    if new.opened && !same.is_some_and(|old| old.opened) {
        facts.push(fact(DetailType::WaitlistOpened));
    }
    if new.ended && !same.is_some_and(|old| old.ended) {
        facts.push(fact(DetailType::WaitlistClosed));
    }
    facts
}

/// An entry: joined (created), or ended while waiting (a leave, a
/// removal). Its move to OFFERED is its order's `waitlist.offered`.
pub(super) fn entry_facts(old: Option<&EntryImage>, new: &EntryImage) -> Vec<Fact> {
    let fact = |kind| Fact {
        entry: Some(new.entry_id.clone()),
        buyer: Some(new.buyer_id.clone()),
        ..Fact::about(kind)
    };
    match (old.map(|o| o.status), new.status) {
        (None, _) => vec![fact(DetailType::WaitlistJoined)],
        (Some(EntryStatus::Waiting), EntryStatus::Ended(reason)) => vec![Fact {
            reason: Some(reason),
            ..fact(DetailType::WaitlistEnded)
        }],
        _ => Vec::new(),
    }
}

/// An offer's order: made (created), purchased (completed), or its entry
/// ended by what became of it: cancelled (`declined`, or `removed` by the
/// organiser), run out (`offer-expired`, when the sweep marks it),
/// refunded, or left holding nothing (`declined`, the moment it is; an
/// order emptied first says nothing more when it is cancelled or runs
/// out).
pub(super) fn offer_facts(old: Option<&OrderImage>, new: &OrderImage) -> Vec<Fact> {
    let Some(offer) = &new.offer else {
        return Vec::new();
    };
    let fact = |kind| Fact {
        entry: Some(offer.entry_id.clone()),
        buyer: Some(offer.buyer_id.clone()),
        ..Fact::of(kind, &new.order_id)
    };
    let ended = |reason| {
        vec![Fact {
            reason: Some(reason),
            ..fact(DetailType::WaitlistEnded)
        }]
    };
    let Some(old) = old else {
        return vec![Fact {
            expires_at: Some(new.expires_at),
            ..fact(DetailType::WaitlistOffered)
        }];
    };
    let held = holds_anything(old);
    match (old.status, new.status) {
        (before, after) if before == after => {
            if after == OrderStatus::Pending && held && !holds_anything(new) {
                ended(EndReason::Declined)
            } else {
                Vec::new()
            }
        }
        (_, OrderStatus::Completed) => vec![fact(DetailType::WaitlistPurchased)],
        (_, OrderStatus::RefundDue) => ended(EndReason::Refunded),
        (_, OrderStatus::Cancelled) if held => ended(cancelled_reason(offer)),
        (_, OrderStatus::Expired) if held => ended(EndReason::OfferExpired),
        _ => Vec::new(),
    }
}

/// Why a cancelled offer's entry ended.
fn cancelled_reason(offer: &OfferImage) -> EndReason {
    if offer.removed {
        EndReason::Removed
    } else {
        EndReason::Declined
    }
}

/// As the entry's status reads it (`handlers/entries.rs`).
fn holds_anything(order: &OrderImage) -> bool {
    !order.seats.is_empty() || !order.places.is_empty()
}
