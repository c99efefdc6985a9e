//! The order item (`ORDER#{orderId}`) and its entry in the pending index:
//! its key, its codec and its expressions.

use super::visitor::VISITOR_ID;
use crate::auth::HoldToken;
use crate::domain::ga::HeldPlaces;
use crate::domain::waitlist::EndReason;
use crate::domain::{
    Millis, Order, OrderId, OrderStatus, PaymentId, RefundReason, SeatId, SectionId,
};
use crate::store::expression::Expression;
use crate::store::schema::{
    CREATED_AT, EVENT_ID, EXPIRES_AT, KIND, ORDER_ID, PAYMENT_ID, PENDING_EXPIRES_AT,
    PENDING_SHARD, PK, SEATS, SK, STATUS, TOKEN_HASH, TTL, VERSION,
};
use crate::store::value::{n, s, ss, Item};
use aws_sdk_dynamodb::types::AttributeValue;
use sha2::{Digest, Sha256};
use std::collections::HashMap;

pub const ORDER_PK_PREFIX: &str = "ORDER#";

pub(in crate::store) fn order_key(order: &OrderId) -> Item {
    HashMap::from([
        (PK.into(), s(format!("{ORDER_PK_PREFIX}{order}"))),
        (SK.into(), s("ORDER")),
    ])
}

/// Expired orders are garbage-collected by DynamoDB TTL this long after
/// their expiry (completed and refund-due orders are kept).
pub const EXPIRED_ORDER_RETENTION_SECONDS: i64 = 30 * 24 * 3600;

pub(in crate::store) fn expired_order_ttl(expires_at: Millis) -> i64 {
    expires_at.0 / 1000 + EXPIRED_ORDER_RETENTION_SECONDS
}

/// Pending orders spread over this many index partitions so one event's
/// on-sale does not make a hot partition; the sweep queries each. Sized for
/// the demand model (docs/SCALE.md): at 20,000 claim attempts/s, buyers
/// claiming 2.5 seats each open 8,000 orders/s, and each order writes the
/// index twice (entering and leaving PENDING): 16,000 index writes/s, which
/// 64 shards take at 250 units/s each, a quarter of a partition's 1,000.
/// A multiple of the old 8, so an order keeps `shard mod 8`.
pub const PENDING_SHARDS: u8 = 64;

pub const PENDING_SHARD_PREFIX: &str = "PENDING#";

pub fn pending_shard(order: &OrderId) -> String {
    // Spread by the order id's own randomness (a v4 UUID): stable, no state.
    let h = Sha256::digest(order.as_str().as_bytes());
    shard_key(h[0] % PENDING_SHARDS)
}

pub(in crate::store) fn shard_key(shard: u8) -> String {
    format!("{PENDING_SHARD_PREFIX}{shard}")
}

pub(in crate::store) const EXTRA_PAYMENT_IDS: &str = "refundPaymentIds";

pub(in crate::store) const USER_ID: &str = "userId";

pub(in crate::store) const HOLDER_DEADLINE: &str = "holderDeadline";

pub(in crate::store) const REFUND_REASON: &str = "refundReason";

/// An order's buyer, on an event with a buyer limit, and the limit.
pub(in crate::store) const BUYER_ID: &str = "buyerId";
pub(in crate::store) const BUYER_LIMIT: &str = "buyerLimit";
/// Whose record counts its units (absent on an order from before: the
/// event's plain ref then).
pub(in crate::store) const BUYER_REF: &str = "buyerRef";

/// An offer's waitlist entry and the entry's buyer (apart from `buyerId`,
/// which comes with a limit).
pub(in crate::store) const WAITLIST_ENTRY_ID: &str = "waitlistEntryId";
pub(in crate::store) const OFFER_BUYER_ID: &str = "offerBuyerId";
/// An offer's waitlist generation (its end's log is the generation's).
pub(in crate::store) const OFFER_GENERATION: &str = "offerGeneration";
/// On a cancelled offer: why its entry ended (`removed`, `declined`,
/// `offer-expired`).
pub(in crate::store) const OFFER_CANCELLED_AS: &str = "offerCancelledAs";
/// On an offer its holder emptied (a drop or hold-ga 0 of its last unit):
/// when, written with its end's log.
pub(in crate::store) const OFFER_EMPTIED_AT: &str = "offerEmptiedAt";
/// On an offer holding listed seats: its resales (`order_resales.rs`).
pub(in crate::store) use resales::{parse_resales, resales_value, OFFER_RESALES};
#[path = "order_resales.rs"]
mod resales;
/// The order sides of claims and releases (`order_holds.rs`).
pub(in crate::store) use holds::{
    add_block, add_seat, change_places, drop_offers_last, drop_seat, Places,
};
#[path = "order_holds.rs"]
mod holds;

/// An order's places are members of its `seats` set too,
/// `{section}#{bucket}#{n}` for n = 1..=its places there: `size(seats)`
/// then counts seats and places together, as the seat limit does, in the
/// one condition get-seat and best-available already have. A `#` never
/// occurs in a seat id.
pub(in crate::store) const PLACE_SEPARATOR: char = '#';

pub(in crate::store) fn place_member(section: &SectionId, bucket: u32, n: u32) -> String {
    format!("{section}{PLACE_SEPARATOR}{bucket}{PLACE_SEPARATOR}{n}")
}

/// What an order holding `seats` and `places` records in its `seats` set
/// (and its buyer's record): the seat ids, and a member per place.
pub(in crate::store) fn held_members(seats: &[SeatId], places: &[HeldPlaces]) -> Vec<String> {
    let places = places
        .iter()
        .flat_map(|held| (1..=held.quantity).map(|k| place_member(&held.section, held.bucket, k)));
    seats
        .iter()
        .map(|seat| seat.as_str().to_owned())
        .chain(places)
        .collect()
}

/// `(section, bucket)` of a place member; `None` for a seat id.
pub(in crate::store) fn parse_place_member(member: &str) -> Option<(SectionId, u32)> {
    let mut parts = member.split(PLACE_SEPARATOR);
    let (section, bucket, n) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || n.parse::<u32>().is_err() {
        return None;
    }
    Some((SectionId::parse(section).ok()?, bucket.parse().ok()?))
}

#[path = "order_codec.rs"]
mod codec;
pub(crate) use codec::parse_order;
pub use codec::StoredOrder;

// ----- expressions ---------------------------------------------------------
// An order item's expressions (`ORDER#…`): the holder's conditions and
// every transition. Names: `#status`, `#version`, `#seats`, `#tokenHash`,
// `#expiresAt`, `#deadline`, …; values: `:pending`, `:seen`, `:version`,
// `:now`, `:one`, ….

/// The order's condition on its holder's claims (get-seat, best-available):
/// the token's hash, PENDING, the expiry the token carries, and outside the
/// guard margin (`holderDeadline`).
const HOLDABLE_BY_HOLDER: &str = concat!(
    "attribute_exists(PK) AND #tokenHash = :tokenHash AND #status = :pending AND #expiresAt = :exp AND ",
    live!("#deadline")
);

/// Completing an order takes it out of the pending index and keeps it (no TTL).
const COMPLETE: &str =
    "SET #status = :completed, #payment = :payment, #seats = :paid, #version = #version + :one \
     REMOVE #shard, #pendingExp, #ttl";

/// `#status` and `#version` with `:one`: every transition bumps the version.
fn transition(text: &str) -> Expression {
    Expression::update(text)
        .name("#status", STATUS)
        .name("#version", VERSION)
        .value(":one", n(1))
}

/// The order as read: its status `seen` and its `version`.
fn as_read(seen: OrderStatus, version: i64) -> Expression {
    Expression::condition("#status = :seen AND #version = :version")
        .name("#status", STATUS)
        .name("#version", VERSION)
        .value(":seen", s(seen.as_str()))
        .value(":version", n(version))
}

/// PENDING and outside the guard margin at `now`.
fn pending_live(now: Millis) -> Expression {
    Expression::condition(concat!("#status = :pending AND ", live!("#deadline")))
        .name("#status", STATUS)
        .name("#deadline", HOLDER_DEADLINE)
        .value(":pending", s(OrderStatus::Pending.as_str()))
        .value(":now", n(now.0))
}

/// The holder's claim condition ([`HOLDABLE_BY_HOLDER`]).
fn holdable_by(token: &HoldToken, now: Millis) -> Expression {
    Expression::condition(HOLDABLE_BY_HOLDER)
        .name("#tokenHash", TOKEN_HASH)
        .name("#status", STATUS)
        .name("#expiresAt", EXPIRES_AT)
        .name("#deadline", HOLDER_DEADLINE)
        .value(":tokenHash", s(token.hash()))
        .value(":pending", s(OrderStatus::Pending.as_str()))
        .value(":exp", n(token.expires_at().0))
        .value(":now", n(now.0))
}

/// A new PENDING order: every attribute it starts with, only where no
/// item is (its id is fresh; the condition only guards against the
/// impossible collision). An `UpdateItem`, so IAM can hold create-order to
/// exactly these attributes (template.yaml).
/// Every attribute create-order's write of a new order may name (its key
/// and each attribute [`create`] sets): what its grant lists
/// (template.yaml, held to this by a test; a test here holds this to
/// [`create`]).
pub const ORDER_CREATE_ATTRIBUTES: [&str; 19] = [
    PK,
    SK,
    KIND,
    ORDER_ID,
    EVENT_ID,
    STATUS,
    EXPIRES_AT,
    HOLDER_DEADLINE,
    TOKEN_HASH,
    VERSION,
    CREATED_AT,
    PENDING_SHARD,
    PENDING_EXPIRES_AT,
    TTL,
    USER_ID,
    VISITOR_ID,
    BUYER_ID,
    BUYER_LIMIT,
    BUYER_REF,
];

pub(in crate::store) fn create(order: &Order) -> Expression {
    Expression::set_all(created(order)).and(Expression::new_item())
}

/// A waitlist's offer: a new PENDING order as [`create`] writes one,
/// holding `order.seats` from the start (the offer's transaction claims
/// them beside it) and naming its entry and buyer. The offerer's grant,
/// not create-order's, writes these.
pub(in crate::store) fn create_offer(order: &Order) -> Expression {
    let mut attributes = created(order);
    let members = held_members(&order.seats, &order.places);
    if !members.is_empty() {
        let members: Vec<&str> = members.iter().map(String::as_str).collect();
        attributes.push((SEATS.into(), ss(&members)));
    }
    if let Some(offer) = &order.offer {
        attributes.push((WAITLIST_ENTRY_ID.into(), s(offer.entry_id.as_str())));
        attributes.push((OFFER_BUYER_ID.into(), s(offer.buyer_id.as_str())));
        if let Some(generation) = offer.generation {
            attributes.push((OFFER_GENERATION.into(), n(generation)));
        }
        if order.holds_listings() {
            let resales = resales_value(&offer.resales, &offer.place_resales);
            attributes.push((OFFER_RESALES.into(), resales));
        }
    }
    Expression::set_all(attributes).and(Expression::new_item())
}

/// Every attribute a new PENDING order starts with.
fn created(order: &Order) -> Vec<(String, AttributeValue)> {
    let mut attributes: Vec<(String, AttributeValue)> = vec![
        (KIND.into(), s("order")),
        (ORDER_ID.into(), s(order.order_id.as_str())),
        (EVENT_ID.into(), s(order.event_id.as_str())),
        (STATUS.into(), s(OrderStatus::Pending.as_str())),
        (EXPIRES_AT.into(), n(order.expires_at.0)),
        (HOLDER_DEADLINE.into(), n(order.holder_deadline.0)),
        (TOKEN_HASH.into(), s(&order.token_hash)),
        (VERSION.into(), n(0)),
        (CREATED_AT.into(), n(order.created_at.0)),
        (PENDING_SHARD.into(), s(pending_shard(&order.order_id))),
        (PENDING_EXPIRES_AT.into(), n(order.expires_at.0)),
        (TTL.into(), n(expired_order_ttl(order.expires_at))),
    ];
    if let Some(user) = &order.user_id {
        attributes.push((USER_ID.into(), s(user)));
    }
    if let Some(visitor) = &order.visitor_id {
        attributes.push((VISITOR_ID.into(), s(visitor.as_str())));
    }
    if let Some(buyer) = &order.buyer {
        attributes.push((BUYER_ID.into(), s(buyer.buyer_id.as_str())));
        attributes.push((BUYER_LIMIT.into(), n(buyer.limit)));
        attributes.push((BUYER_REF.into(), s(buyer.buyer_ref.as_str())));
    }
    attributes
}

/// extend-order: the order's expiry (and the holder's deadline, the index
/// key and the TTL) moved to `expires_at`, if it is as read, outside its
/// guard margin, and the move is forward.
pub(in crate::store) fn extend(
    version: i64,
    expires_at: Millis,
    deadline: Millis,
    ttl: i64,
    now: Millis,
) -> Expression {
    transition(
        "SET #expiresAt = :exp, #deadline = :deadline, #pendingExp = :exp, #ttl = :ttl, #version = #version + :one",
    )
    .and(pending_live(now))
    .and(Expression::condition("#version = :version AND #expiresAt < :exp"))
    .name("#expiresAt", EXPIRES_AT)
    .name("#pendingExp", PENDING_EXPIRES_AT)
    .name("#ttl", TTL)
    .value(":exp", n(expires_at.0))
    .value(":deadline", n(deadline.0))
    .value(":ttl", n(ttl))
    .value(":version", n(version))
    .stamped(now)
}

/// cancel-order: CANCELLED and out of the pending index, if as read (at
/// `now`); an offer's cancel records why its entry ended (`offer_end`),
/// in the same write.
pub(in crate::store) fn cancel(
    seen: OrderStatus,
    version: i64,
    now: Millis,
    offer_end: Option<EndReason>,
) -> Expression {
    let end = if offer_end.is_some() {
        ", #offerEnd = :offerEnd"
    } else {
        ""
    };
    let text = format!(
        "SET #status = :cancelled, #version = #version + :one{end} REMOVE #shard, #pendingExp"
    );
    let cancelled = match offer_end {
        Some(reason) => transition(&text)
            .name("#offerEnd", OFFER_CANCELLED_AS)
            .value(":offerEnd", s(reason.as_str())),
        None => transition(&text),
    };
    cancelled
        .and(as_read(seen, version))
        .name("#shard", PENDING_SHARD)
        .name("#pendingExp", PENDING_EXPIRES_AT)
        .value(":cancelled", s(OrderStatus::Cancelled.as_str()))
        .stamped(now)
}

/// The sweep: a PENDING order as read becomes EXPIRED and leaves the
/// pending index, only if it has expired at `now`.
pub(in crate::store) fn expire(version: i64, now: Millis) -> Expression {
    transition("SET #status = :expired, #version = #version + :one REMOVE #shard, #pendingExp")
        .and(as_read(OrderStatus::Pending, version))
        .and(Expression::condition(expired!("#expiresAt")))
        .name("#shard", PENDING_SHARD)
        .name("#pendingExp", PENDING_EXPIRES_AT)
        .name("#expiresAt", EXPIRES_AT)
        .value(":expired", s(OrderStatus::Expired.as_str()))
        .value(":now", n(now.0))
        .stamped(now)
}

/// The sweep: an order no longer PENDING, as read, leaves the pending
/// index with its status kept (if it is still in it).
pub(in crate::store) fn leave_index(seen: OrderStatus, version: i64) -> Expression {
    Expression::update("SET #version = #version + :one REMOVE #shard, #pendingExp")
        .and(as_read(seen, version))
        .and(Expression::condition("attribute_exists(#shard)"))
        .name("#shard", PENDING_SHARD)
        .name("#pendingExp", PENDING_EXPIRES_AT)
        .value(":one", n(1))
}

/// When a confirm may complete an order.
#[derive(Debug, Clone, Copy)]
pub(in crate::store) enum Completion {
    /// The common case, with no read before it: PENDING, outside the guard
    /// margin, holding exactly `count` seats (those paid for), and no
    /// buyer (whose record the sale must change: a read finds it).
    Exact { count: usize, now: Millis },
    /// As read (`version`), PENDING and outside the guard margin.
    AsReadLive { version: i64, now: Millis },
    /// As read (`seen`, `version`), whatever its status.
    AsRead { seen: OrderStatus, version: i64 },
}

/// confirm: COMPLETED with `payment` at `now`, recording `members` (seats
/// and sold places) as what it bought, out of the pending index, no TTL.
pub(in crate::store) fn complete(
    payment: &PaymentId,
    members: &[&str],
    when: Completion,
    now: Millis,
) -> Expression {
    let update = transition(COMPLETE)
        .stamped(now)
        .name("#payment", PAYMENT_ID)
        .name("#seats", SEATS)
        .name("#shard", PENDING_SHARD)
        .name("#pendingExp", PENDING_EXPIRES_AT)
        .name("#ttl", TTL)
        .value(":completed", s(OrderStatus::Completed.as_str()))
        .value(":payment", s(payment.as_str()))
        .value(":paid", ss(members));
    match when {
        Completion::Exact { count, now } => update
            .and(Expression::condition("attribute_exists(PK)"))
            .and(pending_live(now))
            // A limited order counts in its buyer's record, and an offer
            // logs its end: both are read and completed on the other path.
            .and(Expression::condition(
                "size(#seats) = :count AND attribute_not_exists(#buyer) AND attribute_not_exists(#offer)",
            ))
            .name("#buyer", BUYER_ID)
            .name("#offer", WAITLIST_ENTRY_ID)
            .value(":count", n(count)),
        Completion::AsReadLive { version, now } => update
            .and(pending_live(now))
            .and(Expression::condition("#version = :version"))
            .value(":version", n(version)),
        Completion::AsRead { seen, version } => update.and(as_read(seen, version)),
    }
}

/// confirm: a payment that cannot complete the order makes it REFUND_DUE
/// (with the payment and the reason, no TTL), if as read. The index keys
/// stay: the sweep releases what holds remain once it expires.
pub(in crate::store) fn refund_due(
    payment: &PaymentId,
    reason: RefundReason,
    seen: OrderStatus,
    version: i64,
    now: Millis,
) -> Expression {
    transition(
        "SET #status = :refund, #payment = :payment, #reason = :reason, #version = #version + :one REMOVE #ttl",
    )
    .and(as_read(seen, version))
    .name("#payment", PAYMENT_ID)
    .name("#reason", REFUND_REASON)
    .name("#ttl", TTL)
    .value(":refund", s(OrderStatus::RefundDue.as_str()))
    .value(":payment", s(payment.as_str()))
    .value(":reason", s(reason.as_str()))
    .stamped(now)
}

/// confirm: a further payment for a COMPLETED or REFUND_DUE order, kept
/// in `refundPaymentIds`, if its status is still `seen` (at `now`).
pub(in crate::store) fn add_refund_payment(
    payment: &PaymentId,
    seen: OrderStatus,
    now: Millis,
) -> Expression {
    Expression::update("ADD #extra :payment")
        .and(Expression::condition("#status = :seen"))
        .name("#extra", EXTRA_PAYMENT_IDS)
        .name("#status", STATUS)
        .value(":payment", ss(&[payment.as_str()]))
        .value(":seen", s(seen.as_str()))
        .stamped(now)
}

#[cfg(test)]
#[path = "order_tests.rs"]
mod tests;
