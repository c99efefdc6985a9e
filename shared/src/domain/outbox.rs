//! Events out (API.md, "The sweep and events out"): what one change of
//! one item means to the outside world, as a pure function of the item's
//! old and new images. The table's stream is the outbox: every state
//! change is a write, so it reaches the stream, and nothing is published
//! that was not committed.
//!
//! A transaction's items reach the stream as separate records, possibly
//! interleaved with others, so every event stands alone: it carries its
//! event, order, seat or section and payment ids, decoded from that one
//! item's images. Its `id` is the stream record's id and the event's place
//! among the record's events, so a redelivered record yields the same ids
//! and consumers can deduplicate.

use serde::Serialize;

use super::buyer::BuyerId;
use super::returns::{ReturnStatus, ReturnUnit};
use super::waitlist::{EndReason, EntryStatus};
use super::{
    EntryId, EventId, Millis, OrderId, OrderStatus, PaymentId, SeatId, SeatStatus, SectionId,
};

#[path = "outbox_images.rs"]
mod images;
#[path = "outbox_waitlist.rs"]
mod waitlist;
pub use images::{
    BucketImage, EntryImage, ItemChange, ItemImage, OfferImage, OrderImage, ReturnImage, SeatImage,
    WaitlistImage,
};
use waitlist::{entry_facts, offer_facts, waitlist_facts};

/// The contract's detail-types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DetailType {
    OrderCreated,
    SeatHeld,
    SeatReleased,
    SeatSold,
    GaHeld,
    GaReleased,
    GaSold,
    OrderExtended,
    OrderCompleted,
    OrderExpired,
    OrderCancelled,
    OrderRefundDue,
    WaitlistOpened,
    WaitlistJoined,
    WaitlistOffered,
    WaitlistPurchased,
    WaitlistEnded,
    WaitlistClosed,
    ReturnListed,
    ReturnWithdrawn,
    ReturnReverted,
    SeatResold,
    GaResold,
}

impl DetailType {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OrderCreated => "order.created",
            Self::SeatHeld => "seat.held",
            Self::SeatReleased => "seat.released",
            Self::SeatSold => "seat.sold",
            Self::GaHeld => "ga.held",
            Self::GaReleased => "ga.released",
            Self::GaSold => "ga.sold",
            Self::OrderExtended => "order.extended",
            Self::OrderCompleted => "order.completed",
            Self::OrderExpired => "order.expired",
            Self::OrderCancelled => "order.cancelled",
            Self::OrderRefundDue => "order.refund_due",
            Self::WaitlistOpened => "waitlist.opened",
            Self::WaitlistJoined => "waitlist.joined",
            Self::WaitlistOffered => "waitlist.offered",
            Self::WaitlistPurchased => "waitlist.purchased",
            Self::WaitlistEnded => "waitlist.ended",
            Self::WaitlistClosed => "waitlist.closed",
            Self::ReturnListed => "return.listed",
            Self::ReturnWithdrawn => "return.withdrawn",
            Self::ReturnReverted => "return.reverted",
            Self::SeatResold => "seat.resold",
            Self::GaResold => "ga.resold",
        }
    }
}

/// An event's detail: the contract's fields, and `paymentId` and
/// `expiresAt` where they apply; `order.completed` also says what was
/// bought and by whom (the seller's own bus: ids, never a token).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Detail {
    pub id: String,
    pub event_id: EventId,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order_id: Option<OrderId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seat_id: Option<SeatId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section_id: Option<SectionId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quantity: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payment_id: Option<PaymentId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seats: Option<Vec<SeatId>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ga: Option<Vec<SectionPlaces>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buyer_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry_id: Option<EntryId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generation: Option<u64>,
    /// A resale's seller's order and buyer's order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from_order_id: Option<OrderId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to_order_id: Option<OrderId>,
    pub at: String,
}

/// Places of one general-admission section (confirm's `ga` entries).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SectionPlaces {
    pub section_id: SectionId,
    pub quantity: u32,
}

/// What a completed order bought, and for whom.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Purchase {
    seats: Vec<SeatId>,
    ga: Vec<SectionPlaces>,
    user_id: Option<String>,
    buyer_id: Option<String>,
}

impl Purchase {
    /// `order`'s seats and its places summed per section, in the order the
    /// sections first appear.
    fn of(order: &OrderImage) -> Self {
        let mut ga: Vec<SectionPlaces> = Vec::new();
        for held in order.places.iter().filter(|p| p.quantity > 0) {
            match ga.iter_mut().find(|g| g.section_id == held.section) {
                Some(line) => line.quantity += held.quantity,
                None => ga.push(SectionPlaces {
                    section_id: held.section.clone(),
                    quantity: held.quantity,
                }),
            }
        }
        Self {
            seats: order.seats.clone(),
            ga,
            user_id: order.user_id.clone(),
            buyer_id: order.buyer_id.as_ref().map(|b| b.as_str().to_owned()),
        }
    }
}

/// One event to publish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateEvent {
    pub detail_type: DetailType,
    pub detail: Detail,
}

/// What an event is about, before ids and times are filled in.
struct Fact {
    kind: DetailType,
    order: Option<OrderId>,
    seat: Option<SeatId>,
    section: Option<SectionId>,
    quantity: Option<u32>,
    payment: Option<PaymentId>,
    expires_at: Option<Millis>,
    purchase: Option<Purchase>,
    entry: Option<EntryId>,
    reason: Option<EndReason>,
    generation: Option<u64>,
    buyer: Option<BuyerId>,
    /// A resale's seller's order and buyer's order.
    resale: Option<(OrderId, OrderId)>,
}

impl Fact {
    /// A fact about `order`.
    fn of(kind: DetailType, order: &OrderId) -> Self {
        Self {
            order: Some(order.clone()),
            ..Self::about(kind)
        }
    }

    /// A fact about no order (a waitlist's, an entry's).
    fn about(kind: DetailType) -> Self {
        Self {
            kind,
            order: None,
            seat: None,
            section: None,
            quantity: None,
            payment: None,
            expires_at: None,
            purchase: None,
            entry: None,
            reason: None,
            generation: None,
            buyer: None,
            resale: None,
        }
    }
}

/// The events one write means, in the order they happened within it.
pub fn state_events(change: &ItemChange) -> Vec<StateEvent> {
    let (event_id, facts) = match (&change.old, &change.new) {
        (old, Some(ItemImage::Order(new))) => {
            let mut facts = order_facts(as_order(old), new);
            facts.extend(offer_facts(as_order(old), new, change.at));
            (&new.event_id, facts)
        }
        (old, Some(ItemImage::Seat(new))) => (&new.event_id, seat_facts(as_seat(old), new)),
        (old, Some(ItemImage::Bucket(new))) => (&new.event_id, bucket_facts(as_bucket(old), new)),
        (old, Some(ItemImage::Waitlist(new))) => {
            (&new.event_id, waitlist_facts(as_waitlist(old), new))
        }
        (old, Some(ItemImage::Entry(new))) => (&new.event_id, entry_facts(as_entry(old), new)),
        (old, Some(ItemImage::Return(new))) => (&new.event_id, return_facts(as_return(old), new)),
        // A removed item (an order's TTL, a test's cleanup) changes no state.
        (_, None) => return Vec::new(),
    };
    facts
        .into_iter()
        .enumerate()
        .map(|(k, fact)| {
            let purchase = fact.purchase;
            let buyer = fact.buyer.map(|b| b.as_str().to_owned());
            let (from_order_id, to_order_id) = fact.resale.unzip();
            StateEvent {
                detail_type: fact.kind,
                detail: Detail {
                    id: format!("{}.{k}", change.record_id),
                    event_id: event_id.clone(),
                    order_id: fact.order,
                    seat_id: fact.seat,
                    section_id: fact.section,
                    quantity: fact.quantity,
                    payment_id: fact.payment,
                    expires_at: fact.expires_at.map(Millis::to_rfc3339),
                    seats: purchase.as_ref().map(|p| p.seats.clone()),
                    ga: purchase.as_ref().map(|p| p.ga.clone()),
                    user_id: purchase.as_ref().and_then(|p| p.user_id.clone()),
                    buyer_id: buyer.or(purchase.and_then(|p| p.buyer_id)),
                    entry_id: fact.entry,
                    reason: fact.reason.map(EndReason::as_str),
                    generation: fact.generation,
                    from_order_id,
                    to_order_id,
                    at: change.at.to_rfc3339(),
                },
            }
        })
        .collect()
}

fn as_order(image: &Option<ItemImage>) -> Option<&OrderImage> {
    match image {
        Some(ItemImage::Order(o)) => Some(o),
        _ => None,
    }
}
fn as_seat(image: &Option<ItemImage>) -> Option<&SeatImage> {
    match image {
        Some(ItemImage::Seat(s)) => Some(s),
        _ => None,
    }
}
fn as_bucket(image: &Option<ItemImage>) -> Option<&BucketImage> {
    match image {
        Some(ItemImage::Bucket(b)) => Some(b),
        _ => None,
    }
}
fn as_waitlist(image: &Option<ItemImage>) -> Option<&WaitlistImage> {
    match image {
        Some(ItemImage::Waitlist(w)) => Some(w),
        _ => None,
    }
}
fn as_entry(image: &Option<ItemImage>) -> Option<&EntryImage> {
    match image {
        Some(ItemImage::Entry(e)) => Some(e),
        _ => None,
    }
}
fn as_return(image: &Option<ItemImage>) -> Option<&ReturnImage> {
    match image {
        Some(ItemImage::Return(r)) => Some(r),
        _ => None,
    }
}

/// A listing: listed (a new listing, one listed again, after a withdrawal
/// or a revert computed at read time, or more places added: each writes
/// `listedAt`; `quantity` is the listing's after the write), withdrawn, a
/// revert written, or resold (the seller's payout record: `seat.resold`
/// from its order to the buyer's, with the buyer's payment). A revert
/// computed as it is read writes nothing, so it says nothing.
fn return_facts(old: Option<&ReturnImage>, new: &ReturnImage) -> Vec<Fact> {
    let was_listed = old.is_some_and(|o| o.status == ReturnStatus::Listed);
    if let (true, ReturnUnit::Seat(seat), Some(resale)) = (was_listed, &new.unit, &new.resale) {
        return vec![Fact {
            seat: Some(seat.clone()),
            payment: Some(resale.payment_id.clone()),
            resale: Some((new.order_id.clone(), resale.order_id.clone())),
            ..Fact::about(DetailType::SeatResold)
        }];
    }
    if let (None, ReturnUnit::Places(section), Some(resale)) = (old, &new.unit, &new.resale) {
        // A resale of listed places is a record of its own, written once:
        // the seller's payout, and the buyer's places sold.
        let places = |kind| Fact {
            section: Some(section.clone()),
            quantity: Some(new.quantity),
            payment: Some(resale.payment_id.clone()),
            ..Fact::about(kind)
        };
        return vec![
            Fact {
                resale: Some((new.order_id.clone(), resale.order_id.clone())),
                ..places(DetailType::GaResold)
            },
            Fact {
                order: Some(resale.order_id.clone()),
                ..places(DetailType::GaSold)
            },
        ];
    }
    if matches!(new.unit, ReturnUnit::Places(_)) && new.quantity == 0 {
        // A listing of places all resold: its resales said it.
        return Vec::new();
    }
    let kind = match (old.map(|o| (o.status, o.listed_at)), new.status) {
        (Some((ReturnStatus::Listed, at)), ReturnStatus::Listed) if at == new.listed_at => {
            return Vec::new()
        }
        (_, ReturnStatus::Listed) => DetailType::ReturnListed,
        (Some((ReturnStatus::Listed, _)), ReturnStatus::Withdrawn) => DetailType::ReturnWithdrawn,
        (Some((ReturnStatus::Listed, _)), ReturnStatus::Reverted) => DetailType::ReturnReverted,
        _ => return Vec::new(),
    };
    let (seat, section, quantity) = match &new.unit {
        ReturnUnit::Seat(seat) => (Some(seat.clone()), None, None),
        ReturnUnit::Places(section) => (None, Some(section.clone()), Some(new.quantity)),
    };
    vec![Fact {
        seat,
        section,
        quantity,
        ..Fact::of(kind, &new.order_id)
    }]
}

/// An order: created, moved to another status, extended, or a further
/// payment recorded for refund (each is `order.refund_due` with that
/// payment, since each is money to give back). Claims and drops only
/// change its seat list: the seats' own records say those.
fn order_facts(old: Option<&OrderImage>, new: &OrderImage) -> Vec<Fact> {
    let with_payment = |kind| Fact {
        payment: new.payment_id.clone(),
        ..Fact::of(kind, &new.order_id)
    };
    let Some(old) = old else {
        return vec![Fact {
            expires_at: Some(new.expires_at),
            ..Fact::of(DetailType::OrderCreated, &new.order_id)
        }];
    };
    let mut facts = Vec::new();
    if old.status != new.status {
        facts.push(match new.status {
            OrderStatus::Completed => Fact {
                purchase: Some(Purchase::of(new)),
                ..with_payment(DetailType::OrderCompleted)
            },
            OrderStatus::RefundDue => with_payment(DetailType::OrderRefundDue),
            OrderStatus::Expired => Fact::of(DetailType::OrderExpired, &new.order_id),
            OrderStatus::Cancelled => Fact::of(DetailType::OrderCancelled, &new.order_id),
            // Orders never go back to PENDING.
            OrderStatus::Pending => return facts,
        });
    } else if new.status == OrderStatus::Pending && new.expires_at > old.expires_at {
        facts.push(Fact {
            expires_at: Some(new.expires_at),
            ..Fact::of(DetailType::OrderExtended, &new.order_id)
        });
    }
    for payment in new
        .refund_payment_ids
        .iter()
        .filter(|p| !old.refund_payment_ids.contains(p))
    {
        facts.push(Fact {
            payment: Some(payment.clone()),
            ..Fact::of(DetailType::OrderRefundDue, &new.order_id)
        });
    }
    facts
}

/// A seat: held, released, sold. A hold taken over from an expired one is
/// the old holder's release and then the new hold; a hold whose expiry
/// moved (extend-order) is the order's `order.extended`.
fn seat_facts(old: Option<&SeatImage>, new: &SeatImage) -> Vec<Fact> {
    let seat_fact = |kind, order: &OrderId| Fact {
        seat: Some(new.seat_id.clone()),
        ..Fact::of(kind, order)
    };
    let old_holder = old
        .filter(|o| o.status == SeatStatus::Held)
        .and_then(|o| o.holder.as_ref());
    let was_sold = old.is_some_and(|o| o.status == SeatStatus::Sold);
    let sold_to = old
        .filter(|o| o.status == SeatStatus::Sold)
        .and_then(|o| o.holder.as_ref());
    let mut facts = Vec::new();
    match (new.status, new.holder.as_ref()) {
        // A resale: sold on from its seller's order to the buyer's.
        (SeatStatus::Sold, Some(buyer)) if sold_to.is_some_and(|seller| seller != buyer) => {
            facts.push(Fact {
                payment: new.payment_id.clone(),
                ..seat_fact(DetailType::SeatSold, buyer)
            });
        }
        (SeatStatus::Available, _) => {
            facts.extend(old_holder.map(|h| seat_fact(DetailType::SeatReleased, h)))
        }
        (SeatStatus::Held, Some(holder)) if old_holder != Some(holder) => {
            facts.extend(old_holder.map(|h| seat_fact(DetailType::SeatReleased, h)));
            facts.push(Fact {
                expires_at: new.hold_expires_at,
                ..seat_fact(DetailType::SeatHeld, holder)
            });
        }
        (SeatStatus::Sold, Some(buyer)) if !was_sold => {
            facts.extend(
                old_holder
                    .filter(|h| *h != buyer)
                    .map(|h| seat_fact(DetailType::SeatReleased, h)),
            );
            facts.push(Fact {
                payment: new.payment_id.clone(),
                ..seat_fact(DetailType::SeatSold, buyer)
            });
        }
        _ => {}
    }
    facts
}

/// A bucket: per order, places held (more), released (fewer: given back,
/// cancelled, swept, or reclaimed by another order once expired), and the
/// sale that wrote this image, if any: its buyer's surplus given back,
/// then the places sold (its own and any it took). Releases come first, as
/// a taker's write reclaims before it holds.
fn bucket_facts(old: Option<&BucketImage>, new: &BucketImage) -> Vec<Fact> {
    let place_fact = |kind, order: &OrderId, quantity: u32| Fact {
        section: Some(new.section_id.clone()),
        quantity: Some(quantity),
        ..Fact::of(kind, order)
    };
    let held = |image: Option<&BucketImage>, order: &OrderId| {
        image
            .and_then(|b| b.holds.iter().find(|h| &h.order == order))
            .map_or(0, |h| h.quantity)
    };
    let sold_now = new.sold.saturating_sub(old.map_or(0, |o| o.sold));
    let buyer = new.sale.as_ref().filter(|_| sold_now > 0);
    let mut orders: Vec<&OrderId> = old
        .iter()
        .flat_map(|o| o.holds.iter())
        .chain(new.holds.iter())
        .map(|h| &h.order)
        .collect();
    orders.sort();
    orders.dedup();
    let (mut released, mut taken) = (Vec::new(), Vec::new());
    for order in orders
        .into_iter()
        .filter(|o| buyer.is_none_or(|(b, _)| b != *o))
    {
        let (before, after) = (held(old, order), held(Some(new), order));
        if after < before {
            released.push(place_fact(DetailType::GaReleased, order, before - after));
        } else if after > before {
            let expires_at = new
                .holds
                .iter()
                .find(|h| &h.order == order)
                .map(|h| h.expires_at);
            taken.push(Fact {
                expires_at,
                ..place_fact(DetailType::GaHeld, order, after - before)
            });
        }
    }
    if let Some((order, payment)) = buyer {
        let had = held(old, order);
        let surplus = had - had.min(sold_now);
        if surplus > 0 {
            released.push(place_fact(DetailType::GaReleased, order, surplus));
        }
        taken.push(Fact {
            payment: payment.clone(),
            ..place_fact(DetailType::GaSold, order, sold_now)
        });
    }
    released.extend(taken);
    released
}

#[cfg(test)]
#[path = "outbox_tests.rs"]
mod tests;
