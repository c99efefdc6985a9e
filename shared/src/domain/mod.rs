//! Pure domain types and rules: ids that validate on parse, seat and order
//! states, expiry, the event layout. Nothing here performs I/O: no clock,
//! no randomness (`crate::world` reads both at the edge), no store, no HTTP.

use std::fmt;

use chrono::{DateTime, SecondsFormat, TimeZone, Utc};
use serde::{Deserialize, Serialize};

use crate::error::Error;

pub mod access;
pub mod best_available;
pub mod buyer;
pub mod buyer_limit;
mod confirm;
pub mod crowd;
pub mod draw;
pub mod draw_pages;
mod free_runs;
pub mod ga;
pub mod keyed_block;
pub mod map_parts;
pub mod offer;
pub mod offer_tick;
pub mod outbox;
mod plan;
pub mod queue;
pub mod queue_counts;
pub mod queue_life;
pub mod queue_shards;
pub mod queue_state;
pub mod returns;
mod seat_map;
pub mod waitlist;
mod waitlist_buckets;
pub mod waitlist_entry;
pub mod waitlist_offer_counts;
pub mod waitlist_positions;

pub use crate::refund::{RefundCause, RefundReason};
pub use confirm::{decide_confirm, ConfirmContext, ConfirmDecision, ConfirmRefusal, ConfirmRound};
pub use free_runs::{free_seats, RowRuns, RunsLayout};
pub use plan::{
    check_hold_seconds, Event, EventHead, EventPlan, EventStatus, RowPlan, Seat, SeatPage,
    SeatSpec, SectionPlan,
};
pub use seat_map::{seat_map, ProjectedSeat, RowMap, RowProjection, SeatMap, SectionMap};

/// Longest id the contract allows (eventId, sectionId, row, orderId).
pub const MAX_ID_LEN: usize = 64;
/// Longest payment id: a payment provider's own id, and Stripe's (a
/// Checkout Session's is the Stripe route's payment id, commonly 66
/// characters) may have up to 255.
pub const MAX_PAYMENT_ID_LEN: usize = 255;
/// A seat id is `{sectionId}-{row}-{number}`: two ids, a number up to
/// 100,000 and two dashes.
pub const MAX_SEAT_ID_LEN: usize = 2 * MAX_ID_LEN + 2 + 6;
/// Most seats one event may have: a stadium.
pub const MAX_EVENT_SEATS: u32 = 100_000;
/// Bounds of an event's hold time.
pub const HOLD_SECONDS_RANGE: std::ops::RangeInclusive<u32> = 1..=7200;
/// An order lives at most a day (`MAX_ORDER_LIFETIME_SECONDS`): the
/// contract fixes only the default (7200); a longer checkout is not a hold
/// but a reservation.
pub const MAX_ORDER_LIFETIME_SECONDS_RANGE: std::ops::RangeInclusive<u32> = 1..=86_400;
/// Bounds of `MAX_SEATS_PER_ORDER`. A confirm sells every seat, completes
/// the order and records the payment in one transaction, and a transaction
/// holds at most 100 items: 98 seats + the order + the payment.
pub const SEATS_PER_ORDER_RANGE: std::ops::RangeInclusive<u32> = 1..=98;
/// Bounds of `EXPIRY_GUARD_MS`.
pub const EXPIRY_GUARD_MS_RANGE: std::ops::RangeInclusive<u32> = 0..=60_000;
/// Hex digits of an [`EventRef`]: 80 bits of SHA-256, so two event ids of
/// one table sharing a ref is not a practical concern (and if it ever
/// happened, create-event's `attribute_not_exists` answers `event-exists`).
pub const EVENT_REF_LEN: usize = 20;
/// Places a general-admission section may have.
pub const GA_CAPACITY_RANGE: std::ops::RangeInclusive<u32> = 1..=100_000;
/// Most general-admission buckets one event may have (five sections of
/// 100,000 places): create-event writes them all inside its budget, and
/// availability reads them all.
pub const MAX_EVENT_GA_BUCKETS: u32 = 5_000;
/// Most sections one event may have (the event item lists them).
pub const MAX_SECTIONS: usize = 1000;
/// Longest event name accepted.
pub const MAX_EVENT_NAME_LEN: usize = 200;
/// Longest free-form `userId` accepted on create-order.
pub const MAX_USER_ID_LEN: usize = 256;

fn is_id_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')
}

/// Checks the contract's id rule: 1–`max` chars of `[A-Za-z0-9_.-]`. Keeping
/// everything else out keeps key delimiters (`#`) out of user input.
fn validate_id(field: &str, value: &str, max: usize) -> Result<(), Error> {
    if value.is_empty() || value.len() > max || !value.chars().all(is_id_char) {
        return Err(Error::BadRequest(format!(
            "{field} must be 1-{max} characters of A-Z, a-z, 0-9, '_', '.', '-'"
        )));
    }
    Ok(())
}

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $field:literal, $max:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// Parses and validates; the error names the field.
            pub fn parse(value: &str) -> Result<Self, Error> {
                validate_id($field, value, $max)?;
                Ok(Self(value.to_owned()))
            }
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let raw = String::deserialize(d)?;
                Self::parse(&raw).map_err(serde::de::Error::custom)
            }
        }
    };
}

id_type!(/** An event's id, chosen by the organiser. */ EventId, "eventId", MAX_ID_LEN);
id_type!(/** A section of an event's seating plan. */ SectionId, "sectionId", MAX_ID_LEN);
id_type!(/** A row label inside a section. */ RowId, "row", MAX_ID_LEN);
id_type!(/** An order's id (server generated, a UUID). */ OrderId, "orderId", MAX_ID_LEN);
id_type!(/** The payment provider's id of a payment. */ PaymentId, "paymentId", MAX_PAYMENT_ID_LEN);
id_type!(/** `{sectionId}-{row}-{number}`. */ SeatId, "seatId", MAX_SEAT_ID_LEN);
id_type!(/** A visitor of an on-sale queue (server generated). */ VisitorId, "visitorId", MAX_ID_LEN);
id_type!(/** An entry of an event's waitlist (server generated). */ EntryId, "entryId", MAX_ID_LEN);
id_type!(/** A client's `Idempotency-Key` for create-order under an admission. */ IdempotencyKey, "Idempotency-Key", MAX_ID_LEN);

/// A short, fixed-length handle of an event: the first [`EVENT_REF_LEN`]
/// hex digits of SHA-256(eventId). It keys the event's items, and every
/// order id starts with it, so a confirm (which carries only the order id
/// and seat ids) can address the seats without reading the order first.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EventRef(String);

impl EventRef {
    pub fn of(event: &EventId) -> Self {
        use sha2::{Digest, Sha256};
        let digest = hex::encode(Sha256::digest(event.as_str().as_bytes()));
        Self(digest[..EVENT_REF_LEN].to_owned())
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
    /// A ref read back from a key: exactly [`EVENT_REF_LEN`] lowercase hex
    /// digits, or `None`.
    pub fn from_hex(s: &str) -> Option<Self> {
        is_lower_hex(s, EVENT_REF_LEN).then(|| Self(s.to_owned()))
    }
}

fn is_lower_hex(s: &str, len: usize) -> bool {
    s.len() == len
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

impl fmt::Display for EventRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl OrderId {
    /// The id of a new order of `event` from 128 random bits (drawn at the
    /// edge, `world::random_u128`): `{event ref}-{32 hex digits}` (53
    /// characters).
    pub fn from_random(event: &EventId, random: u128) -> Self {
        Self(format!("{}-{random:032x}", EventRef::of(event)))
    }
    /// The event ref this id starts with; `None` for an id we never issued
    /// (no order can exist under it).
    pub fn event_ref(&self) -> Option<EventRef> {
        let (head, tail) = self.0.split_once('-')?;
        (is_lower_hex(head, EVENT_REF_LEN) && is_lower_hex(tail, 32))
            .then(|| EventRef(head.to_owned()))
    }
}

impl SeatId {
    pub fn compose(section: &SectionId, row: &RowId, number: u32) -> Self {
        Self(format!("{}-{number}", Self::row_key(section, row)))
    }
    /// `{sectionId}-{row}`: what a seat id has before its number, and what
    /// [`SeatId::row_and_number`] gives back.
    pub fn row_key(section: &SectionId, row: &RowId) -> String {
        format!("{section}-{row}")
    }
    /// The id split at its last dash: `{sectionId}-{row}` and the seat
    /// number. `None` for an id no plan can produce (no dash, or no number
    /// after it); such a seat does not exist.
    pub fn row_and_number(&self) -> Option<(&str, u32)> {
        let (row, number) = self.0.rsplit_once('-')?;
        let valid =
            !row.is_empty() && !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit());
        valid
            .then(|| number.parse().ok().map(|n| (row, n)))
            .flatten()
    }
}

/// Milliseconds since the Unix epoch: how instants are stored and compared
/// in conditions (numbers compare exactly; strings would need one format).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Millis(pub i64);

impl Millis {
    pub fn plus_seconds(self, seconds: u32) -> Self {
        Self(self.0 + i64::from(seconds) * 1000)
    }
    pub fn to_datetime(self) -> DateTime<Utc> {
        // Every Millis we build comes from a DateTime or from one we stored,
        // all far inside chrono's range; the epoch is a harmless fallback.
        Utc.timestamp_millis_opt(self.0)
            .single()
            .unwrap_or_default()
    }
    /// RFC 3339 UTC with milliseconds, as every time in the API is written.
    pub fn to_rfc3339(self) -> String {
        self.to_datetime()
            .to_rfc3339_opts(SecondsFormat::Millis, true)
    }
}

impl From<DateTime<Utc>> for Millis {
    fn from(t: DateTime<Utc>) -> Self {
        Self(t.timestamp_millis())
    }
}

/// A hold is live until its expiry instant, exclusive: at `expires_at` the
/// seat is claimable by anyone (the store builds its conditions from this
/// rule: `live!` and `expired!` in store/expression.rs).
pub fn hold_is_live(expires_at: Millis, now: Millis) -> bool {
    expires_at > now
}

/// A seat as the public sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SeatStatus {
    Available,
    Held,
    Sold,
}

impl SeatStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Available => "AVAILABLE",
            Self::Held => "HELD",
            Self::Sold => "SOLD",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "AVAILABLE" => Some(Self::Available),
            "HELD" => Some(Self::Held),
            "SOLD" => Some(Self::Sold),
            _ => None,
        }
    }
}

/// The seat's status as stored: a hold carries its expiry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SeatState {
    Available,
    Held { order: OrderId, expires_at: Millis },
    Sold { order: OrderId },
}

impl SeatState {
    /// What list-seats shows: a hold past its expiry is `AVAILABLE`.
    pub fn visible_status(&self, now: Millis) -> SeatStatus {
        match self {
            Self::Available => SeatStatus::Available,
            Self::Held { expires_at, .. } if hold_is_live(*expires_at, now) => SeatStatus::Held,
            Self::Held { .. } => SeatStatus::Available,
            Self::Sold { .. } => SeatStatus::Sold,
        }
    }
}

/// An order's lifecycle as stored. `Pending` past its expiry is reported as
/// `Expired` (see [`OrderStatus::effective`]) even before the sweep ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum OrderStatus {
    Pending,
    Completed,
    Expired,
    Cancelled,
    RefundDue,
}

impl OrderStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "PENDING",
            Self::Completed => "COMPLETED",
            Self::Expired => "EXPIRED",
            Self::Cancelled => "CANCELLED",
            Self::RefundDue => "REFUND_DUE",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "PENDING" => Some(Self::Pending),
            "COMPLETED" => Some(Self::Completed),
            "EXPIRED" => Some(Self::Expired),
            "CANCELLED" => Some(Self::Cancelled),
            "REFUND_DUE" => Some(Self::RefundDue),
            _ => None,
        }
    }
    /// The status the API reports at `now`.
    pub fn effective(self, expires_at: Millis, now: Millis) -> Self {
        match self {
            Self::Pending if !hold_is_live(expires_at, now) => Self::Expired,
            other => other,
        }
    }
}

/// The clock-skew guard of an event (see DESIGN.md, Clocks): the holder's
/// own operations treat its order as expired this long before `expiresAt`.
/// `EXPIRY_GUARD_MS`, but never more than a quarter of the hold time.
pub fn expiry_guard_ms(guard_ms: u32, hold_seconds: u32) -> i64 {
    i64::from(guard_ms).min(i64::from(hold_seconds) * 1000 / 4)
}

/// The holder's own deadline for an order expiring at `expires_at`.
pub fn holder_deadline(expires_at: Millis, guard_ms: u32, hold_seconds: u32) -> Millis {
    Millis(expires_at.0 - expiry_guard_ms(guard_ms, hold_seconds))
}

/// What extend-order does with a holdable order (DESIGN.md, extend-order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extension {
    /// The order expires at its lifetime cap already: `409 hold-limit`.
    AtCap,
    /// `now + seconds` is not later than the current expiry: `200`, as is.
    Unchanged,
    /// The new expiry: `min(now + seconds, createdAt + lifetime)`.
    To(Millis),
}

/// extend-order's rule: the new expiry is `now + seconds`, capped at the
/// order's lifetime, and never earlier than the current one.
pub fn extension(order: &Order, seconds: u32, max_lifetime_seconds: u32, now: Millis) -> Extension {
    let cap = order.created_at.plus_seconds(max_lifetime_seconds);
    if order.expires_at >= cap {
        return Extension::AtCap;
    }
    let target = now.plus_seconds(seconds).min(cap);
    if target <= order.expires_at {
        Extension::Unchanged
    } else {
        Extension::To(target)
    }
}

/// An order as stored (the token only as its hash).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Order {
    pub order_id: OrderId,
    pub event_id: EventId,
    pub status: OrderStatus,
    pub expires_at: Millis,
    /// `expires_at` minus the event's guard: the holder's own deadline.
    pub holder_deadline: Millis,
    pub created_at: Millis,
    pub token_hash: String,
    pub seats: Vec<SeatId>,
    /// General-admission places it holds (or bought), per bucket.
    pub places: Vec<ga::HeldPlaces>,
    pub payment_id: Option<PaymentId>,
    /// Further payments recorded for refund (kept, never dropped).
    pub refund_payment_ids: Vec<PaymentId>,
    /// Set when the order became REFUND_DUE.
    pub refund_reason: Option<RefundReason>,
    pub user_id: Option<String>,
    /// The queue visitor whose admission opened it.
    pub visitor_id: Option<VisitorId>,
    /// Its buyer, on an event with a `buyerLimit` (and the limit).
    pub buyer: Option<OrderBuyer>,
    /// The waitlist entry it was offered to, if it is an offer.
    pub offer: Option<OfferOf>,
}

/// Whose offer an order is: the waitlist entry and its buyer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OfferOf {
    pub entry_id: EntryId,
    pub buyer_id: buyer::BuyerId,
    /// Why a cancel ended its entry (`removed`, `declined`,
    /// `offer-expired`), recorded by the cancel's one write.
    pub cancelled_as: Option<waitlist::EndReason>,
    /// The waitlist generation it was made in (`None`: an offer made
    /// before it was recorded): where its end is logged for the counts.
    pub generation: Option<u64>,
    /// The listed seats it holds for resale, each still sold to its
    /// seller until the offer's payment moves it (API.md, "Returns").
    pub resales: Vec<returns::ResaleHold>,
    /// The listed places it holds for resale, likewise.
    pub place_resales: Vec<returns::PlacesResaleHold>,
    /// When its holder let go of the last unit it held (a drop, hold-ga
    /// 0): the write that emptied it logged its end for the counts, and
    /// its entry reads `declined` from then, for good.
    pub emptied_at: Option<Millis>,
}

impl Order {
    /// Its offer's entry and generation, if it is an offer whose generation
    /// is known: what logs its end.
    pub fn offer_entry(&self) -> Option<(&EntryId, u64)> {
        let offer = self.offer.as_ref()?;
        Some((&offer.entry_id, offer.generation?))
    }

    /// The resale of `seat` it holds, if it holds it for resale.
    pub fn resale_of(&self, seat: &SeatId) -> Option<&returns::ResaleHold> {
        let offer = self.offer.as_ref()?;
        offer.resales.iter().find(|r| &r.seat == seat)
    }

    /// Whose listing its places of `section` recorded under `bucket` are,
    /// if they are listed places it holds for resale.
    pub fn place_resale_of(
        &self,
        section: &SectionId,
        bucket: u32,
    ) -> Option<&returns::PlacesResaleHold> {
        let offer = self.offer.as_ref()?;
        let of = |r: &&returns::PlacesResaleHold| &r.section == section && r.bucket == bucket;
        offer.place_resales.iter().find(of)
    }

    /// Whether it is an offer its holder emptied: it holds nothing, or a
    /// drop or hold-ga 0 recorded letting go of its last unit (an offer
    /// claims nothing it was not offered, so it stays so).
    pub fn offer_emptied(&self) -> bool {
        self.offer.as_ref().is_some_and(|o| {
            o.emptied_at.is_some() || (self.seats.is_empty() && self.places.is_empty())
        })
    }

    /// How many seats and places it holds.
    pub fn units(&self) -> u32 {
        let seats = u32::try_from(self.seats.len()).unwrap_or(u32::MAX);
        self.places
            .iter()
            .fold(seats, |units, p| units.saturating_add(p.quantity))
    }

    /// Whether it holds listed units for resale.
    pub fn holds_listings(&self) -> bool {
        self.offer
            .as_ref()
            .is_some_and(|o| !o.resales.is_empty() || !o.place_resales.is_empty())
    }
}

/// An order's buyer on an event with a buyer limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderBuyer {
    pub buyer_id: buyer::BuyerId,
    pub limit: u32,
    /// Whose record counts its units: fixed when the order is opened,
    /// under the event's key ([`buyer_limit::BuyerRef`]).
    pub buyer_ref: buyer_limit::BuyerRef,
}

impl OrderBuyer {
    /// Whose record counts the order's units, and under which limit.
    pub fn limited(&self) -> buyer_limit::LimitedBuyer {
        buyer_limit::LimitedBuyer {
            buyer: self.buyer_ref.clone(),
            limit: self.limit,
        }
    }
}

impl Order {
    /// A new PENDING order of `event` opened at `now`, holding nothing yet.
    /// Its id and its hold token's hash come from the edge (both need
    /// randomness); the token must be for [`Order::expiry_for`]`(event, now)`.
    pub fn new_pending(
        event: &EventHead,
        now: Millis,
        guard_ms: u32,
        user_id: Option<String>,
        order_id: OrderId,
        token_hash: String,
    ) -> Self {
        let expires_at = Self::expiry_for(event, now);
        Order {
            order_id,
            event_id: event.event_id.clone(),
            status: OrderStatus::Pending,
            expires_at,
            holder_deadline: holder_deadline(expires_at, guard_ms, event.hold_seconds),
            created_at: now,
            token_hash,
            seats: Vec::new(),
            places: Vec::new(),
            payment_id: None,
            refund_payment_ids: Vec::new(),
            refund_reason: None,
            user_id,
            visitor_id: None,
            buyer: None,
            offer: None,
        }
    }

    /// A waitlist's offer of `holds` to `offer`'s entry: a PENDING order
    /// that holds them from `now` for `offer_seconds`, its guard margin as
    /// an order of that lifetime has it.
    #[allow(clippy::too_many_arguments)] // an order's every starting field
    pub fn new_offer(
        event: &EventId,
        now: Millis,
        offer_seconds: u32,
        guard_ms: u32,
        order_id: OrderId,
        token_hash: String,
        holds: &offer::Offered,
        offer: OfferOf,
    ) -> Self {
        let expires_at = now.plus_seconds(offer_seconds);
        Order {
            order_id,
            event_id: event.clone(),
            status: OrderStatus::Pending,
            expires_at,
            holder_deadline: holder_deadline(expires_at, guard_ms, offer_seconds),
            created_at: now,
            token_hash,
            seats: holds.seats().to_vec(),
            places: holds.places(),
            payment_id: None,
            refund_payment_ids: Vec::new(),
            refund_reason: None,
            user_id: None,
            visitor_id: None,
            buyer: None,
            offer: Some(offer),
        }
    }

    /// The record counting this order's units, if it has a buyer.
    pub fn limited_buyer(&self) -> Option<buyer_limit::LimitedBuyer> {
        self.buyer.as_ref().map(OrderBuyer::limited)
    }

    /// When an order of `event` opened at `now` expires.
    pub fn expiry_for(event: &EventHead, now: Millis) -> Millis {
        now.plus_seconds(event.hold_seconds)
    }

    pub fn effective_status(&self, now: Millis) -> OrderStatus {
        self.status.effective(self.expires_at, now)
    }
    /// A live PENDING order: one whose holds count (for everyone else).
    pub fn is_live(&self, now: Millis) -> bool {
        self.effective_status(now) == OrderStatus::Pending
    }
    /// A PENDING order its holder may still act on: live and outside the
    /// guard margin of its expiry.
    pub fn is_holdable(&self, now: Millis) -> bool {
        self.status == OrderStatus::Pending && hold_is_live(self.holder_deadline, now)
    }
}

#[cfg(test)]
pub(super) mod tests;
