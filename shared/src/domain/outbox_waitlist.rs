//! The waitlist's events out (API.md, "Events out", the waitlist's), from
//! the images of the items that say them: the waitlist's main item
//! (`waitlist.opened`, `waitlist.closed`), an entry's (`waitlist.joined`,
//! and the end of a waiting entry), and an offer's order (`waitlist.offered`
//! when it is created, then its entry's purchase or end: an offered
//! entry's end is its order's, and only the first is said).

use super::{
    DetailType, EndReason, EntryImage, EntryStatus, Fact, OrderImage, OrderStatus, WaitlistImage,
};
use crate::domain::{hold_is_live, Millis};

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

/// An offer's order: made (created), then the first write at `at` that
/// takes it from a pending offer holding something (the entry's one end):
/// completed (`waitlist.purchased`), refunded, cancelled (why, as the
/// cancel recorded: `declined`, `removed`, or `offer-expired` for one past
/// its expiry), marked expired (`offer-expired`, when the sweep marks it),
/// or left holding nothing (`declined`). An offer whose expiry had passed
/// before that write had run out then, with no write to say so: the first
/// write after says `offer-expired`, whatever it did (a late payment's
/// refund, say). Whatever happens to the order after the end says nothing
/// more of the entry: `order.*` says it.
pub(super) fn offer_facts(old: Option<&OrderImage>, new: &OrderImage, at: Millis) -> Vec<Fact> {
    let Some(offer) = &new.offer else {
        return Vec::new();
    };
    let fact = |kind| Fact {
        entry: Some(offer.entry_id.clone()),
        buyer: Some(offer.buyer_id.clone()),
        ..Fact::of(kind, &new.order_id)
    };
    let Some(old) = old else {
        return vec![Fact {
            expires_at: Some(new.expires_at),
            ..fact(DetailType::WaitlistOffered)
        }];
    };
    if old.status != OrderStatus::Pending || !holds_anything(old) {
        return Vec::new();
    }
    let ran_out = !hold_is_live(old.expires_at, at);
    let reason = match new.status {
        // A claim of its own seats, or a drop that leaves some.
        OrderStatus::Pending if holds_anything(new) => return Vec::new(),
        _ if ran_out => EndReason::OfferExpired,
        OrderStatus::Pending => EndReason::Declined,
        OrderStatus::Completed => return vec![fact(DetailType::WaitlistPurchased)],
        OrderStatus::RefundDue => EndReason::Refunded,
        OrderStatus::Cancelled => offer.cancelled_as.unwrap_or(EndReason::Declined),
        OrderStatus::Expired => EndReason::OfferExpired,
    };
    vec![Fact {
        reason: Some(reason),
        ..fact(DetailType::WaitlistEnded)
    }]
}

/// As the entry's status reads it (`handlers/entries.rs`).
fn holds_anything(order: &OrderImage) -> bool {
    !order.seats.is_empty() || !order.places.is_empty()
}

#[cfg(test)]
#[path = "outbox_waitlist_tests.rs"]
mod tests;
