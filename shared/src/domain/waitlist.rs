//! The waitlist's rules (API.md, "The waitlist"), pure: the settings an
//! operator may put and what a put again changes, the waitlist's status and
//! when the sale becomes waitlist-only, what a buyer may ask for when
//! joining, and an entry's status as a reader sees it, computed from what
//! is stored and from its offer's order without a write. The store keeps
//! the state and the clock is passed in, so every rule is tested here.

use std::collections::HashSet;
use std::ops::RangeInclusive;

use super::queue::Inventory;
use super::{Millis, OrderStatus, SectionId};

/// How long an offer holds its seats, in seconds (put-waitlist's
/// `offerSeconds`).
pub const OFFER_SECONDS_RANGE: RangeInclusive<u32> = 60..=3_600;
pub const DEFAULT_OFFER_SECONDS: u32 = 600;
/// The most one entry may ask for, whatever `MAX_SEATS_PER_ORDER` says: a
/// resale of an offer's units (their sellers' orders and records, the
/// offer's own items) must fit one transaction of 100 items.
pub const MAX_ENTRY_QUANTITY: u32 = 32;
/// The most sections one entry may name.
pub const MAX_ENTRY_SECTIONS: usize = 10;
/// From the opening plus this, only offers take seats: each instance
/// rereads the event at most once a second, so by then every one knows.
pub const WAITLIST_ONLY_AFTER_MS: i64 = 1_000;

/// When a waitlist opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opens {
    /// At the first instant the event is seen with nothing available.
    SoldOut,
    /// At the put.
    Now,
}

impl Opens {
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "sold-out" => Some(Self::SoldOut),
            "now" => Some(Self::Now),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Self::SoldOut => "sold-out",
            Self::Now => "now",
        }
    }
}

/// What an operator put.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitlistSettings {
    pub opens: Opens,
    pub offer_seconds: u32,
    pub max_quantity: u32,
    /// Returns are taken until this instant; `None`: no returns.
    pub returns_close_at: Option<Millis>,
}

/// One put's body, read: each field as sent, `None` when left out.
/// `returns_close_at` tells "left out" (`None`) from `null` (`Some(None)`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WaitlistPut {
    pub opens: Option<Opens>,
    pub offer_seconds: Option<u32>,
    pub max_quantity: Option<u32>,
    pub returns_close_at: Option<Option<Millis>>,
}

/// A waitlist's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitlistStatus {
    /// Put to open at a sell-out, not open yet.
    Armed,
    Open,
    /// Deleted.
    Ended,
}

impl WaitlistStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Armed => "ARMED",
            Self::Open => "OPEN",
            Self::Ended => "ENDED",
        }
    }
}

/// A waitlist generation as stored: its settings, when it opened and
/// whether it was deleted. Each put after a delete starts a new
/// generation, with no entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Waitlist {
    pub generation: u64,
    pub settings: WaitlistSettings,
    pub opened_at: Option<Millis>,
    pub ended_at: Option<Millis>,
    /// When a put last closed returns early (ended them, or put their
    /// cutoff in the past) or changed a cutoff that had passed: listings
    /// made before it have reverted for good (`domain::returns`).
    pub returns_reverted_at: Option<Millis>,
}

/// Why a put was refused: a `400` saying what is wrong, or
/// `409 waitlist-open` (`opens` changes only while `ARMED`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PutRefusal {
    Invalid(String),
    Open,
}

/// Where a buyer joins `event`'s waitlist: the join's path, which a
/// `409 waitlist-only` names (its `waitlist` link).
pub fn entries_path(event: &super::EventId) -> String {
    format!("/events/{event}/waitlist/entries")
}

/// The most an entry may ask for under `MAX_SEATS_PER_ORDER`
/// = `max_seats_per_order`, and `maxQuantity`'s default.
pub fn quantity_cap(max_seats_per_order: u32) -> u32 {
    max_seats_per_order.clamp(1, MAX_ENTRY_QUANTITY)
}

impl Waitlist {
    pub fn status(&self) -> WaitlistStatus {
        match (self.ended_at, self.opened_at) {
            (Some(_), _) => WaitlistStatus::Ended,
            (None, Some(_)) => WaitlistStatus::Open,
            (None, None) => WaitlistStatus::Armed,
        }
    }

    /// Whether it waits for a sell-out to open (armed, to open at one).
    pub fn opens_at_sell_out(&self) -> bool {
        self.status() == WaitlistStatus::Armed && self.settings.opens == Opens::SoldOut
    }

    /// Whether only offers take seats at `now`: from the opening plus
    /// [`WAITLIST_ONLY_AFTER_MS`] until the delete.
    pub fn is_waitlist_only(&self, now: Millis) -> bool {
        match (self.status(), self.opened_at) {
            (WaitlistStatus::Open, Some(opened)) => now.0 >= opened.0 + WAITLIST_ONLY_AFTER_MS,
            _ => false,
        }
    }

    /// Whether a return may be listed at `now`: the waitlist open and
    /// `now` before `returnsCloseAt`.
    pub fn takes_returns(&self, now: Millis) -> bool {
        self.status() == WaitlistStatus::Open
            && self
                .settings
                .returns_close_at
                .is_some_and(|close| now < close)
    }

    /// The same generation, opened at `at` (a sell-out seen), if it was
    /// armed; else unchanged.
    pub fn opened(self, at: Millis) -> Self {
        match self.status() {
            WaitlistStatus::Armed => Self {
                opened_at: Some(at),
                ..self
            },
            _ => self,
        }
    }

    /// The same generation, deleted at `at` (no change if it was already).
    pub fn ended(self, at: Millis) -> Self {
        Self {
            ended_at: self.ended_at.or(Some(at)),
            ..self
        }
    }
}

/// What a queue on the event records as what is left, from what its map
/// shows (`seen`) and the event's waitlist at `now`: only the waitlist
/// sells from its opening plus a second (`WaitlistOnly`: the queue reads
/// `WAITLIST`); and while a waitlist is armed for a sell-out or open, a
/// sell-out is not final, since freed seats go to the waitlist and the
/// queue's visitors keep their places for when it is deleted (nothing
/// available, not all sold).
pub fn queue_inventory(waitlist: Option<&Waitlist>, seen: Inventory, now: Millis) -> Inventory {
    match waitlist.filter(|w| w.status() != WaitlistStatus::Ended) {
        Some(w) if w.is_waitlist_only(now) => Inventory::WaitlistOnly,
        Some(_) if seen == Inventory::AllSold => Inventory::NoneAvailable,
        _ => seen,
    }
}

/// What a put makes of the waitlist `current` (`None`: none was ever put)
/// at `now`, or why it is refused (nothing changes then). A put after a
/// delete, or the first, starts a new generation and must carry `opens`;
/// a put to a live one keeps every field it leaves out, and changes
/// `opens` only while `ARMED` (the value it has already is no change).
pub fn waitlist_after_put(
    current: Option<&Waitlist>,
    put: WaitlistPut,
    max_seats_per_order: u32,
    now: Millis,
) -> Result<Waitlist, PutRefusal> {
    let live = current.filter(|w| w.status() != WaitlistStatus::Ended);
    let cap = quantity_cap(max_seats_per_order);
    check("offerSeconds", put.offer_seconds, &OFFER_SECONDS_RANGE)?;
    check("maxQuantity", put.max_quantity, &(1..=cap))?;
    let Some(old) = live else {
        let opens = put.opens.ok_or_else(|| {
            PutRefusal::Invalid("opens is required on a waitlist's first put".into())
        })?;
        let settings = WaitlistSettings {
            opens,
            offer_seconds: put.offer_seconds.unwrap_or(DEFAULT_OFFER_SECONDS),
            max_quantity: put.max_quantity.unwrap_or(cap),
            returns_close_at: put.returns_close_at.flatten(),
        };
        return Ok(Waitlist {
            generation: current.map_or(1, |w| w.generation + 1),
            settings,
            opened_at: (opens == Opens::Now).then_some(now),
            ended_at: None,
            returns_reverted_at: None,
        });
    };
    let opens = match put.opens {
        Some(opens) if opens != old.settings.opens => {
            if old.status() != WaitlistStatus::Armed {
                return Err(PutRefusal::Open);
            }
            opens
        }
        _ => old.settings.opens,
    };
    let settings = WaitlistSettings {
        opens,
        offer_seconds: put.offer_seconds.unwrap_or(old.settings.offer_seconds),
        max_quantity: put.max_quantity.unwrap_or(old.settings.max_quantity),
        returns_close_at: put
            .returns_close_at
            .unwrap_or(old.settings.returns_close_at),
    };
    let opened_at = match (old.opened_at, opens) {
        (None, Opens::Now) => Some(now),
        (opened, _) => opened,
    };
    Ok(Waitlist {
        settings,
        opened_at,
        returns_reverted_at: reverted_by_put(old, settings.returns_close_at, now),
        ..*old
    })
}

/// When `old`'s listings have reverted once a put sets `returnsCloseAt`
/// to `close` at `now`: a cutoff that had passed reverted them then (a
/// later cutoff put since does not bring them back); one ended or put in
/// the past reverts them now; a cutoff still ahead moved elsewhere ahead
/// changes nothing.
fn reverted_by_put(old: &Waitlist, close: Option<Millis>, now: Millis) -> Option<Millis> {
    let was = old.settings.returns_close_at;
    let reverted = match was {
        Some(was) if was <= now => Some(was),
        Some(_) if close.is_none_or(|close| close <= now) => Some(now),
        _ => None,
    };
    match (old.returns_reverted_at, reverted) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// `value`, if given, within `range`; else a `400` naming `name`.
fn check(name: &str, value: Option<u32>, range: &RangeInclusive<u32>) -> Result<(), PutRefusal> {
    match value {
        Some(v) if !range.contains(&v) => Err(PutRefusal::Invalid(format!(
            "{name} must be {} to {}",
            range.start(),
            range.end()
        ))),
        _ => Ok(()),
    }
}

/// What a buyer asks for in joining, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryRequest {
    pub quantity: u32,
    /// The sections it may be offered from; empty: any.
    pub section_ids: Vec<SectionId>,
    /// Seated seats adjacent in one row.
    pub together: bool,
    /// Wheelchair spaces among them.
    pub wheelchair: u32,
}

/// A join's body as sent (each field `None` when left out).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EntryAsk {
    pub quantity: Option<u32>,
    pub section_ids: Option<Vec<SectionId>>,
    pub together: Option<bool>,
    pub wheelchair: Option<u32>,
}

impl EntryRequest {
    /// `ask` checked against the waitlist's `max_quantity`, or a `400`
    /// sentence: `quantity` 1 to `max_quantity` (default 1), 1 to
    /// [`MAX_ENTRY_SECTIONS`] distinct sections if any are named,
    /// `together` (default true), `wheelchair` 0 to `quantity` (default 0).
    /// Whether each section exists is the event's to say.
    pub fn checked(ask: EntryAsk, max_quantity: u32) -> Result<Self, String> {
        let quantity = ask.quantity.unwrap_or(1);
        if !(1..=max_quantity).contains(&quantity) {
            return Err(format!("quantity must be 1 to {max_quantity}"));
        }
        let section_ids = match ask.section_ids {
            None => Vec::new(),
            Some(ids) if ids.is_empty() || ids.len() > MAX_ENTRY_SECTIONS => {
                return Err(format!(
                    "sectionIds must name 1 to {MAX_ENTRY_SECTIONS} sections (leave it out for any)"
                ))
            }
            Some(ids) => {
                let mut seen = HashSet::new();
                if let Some(twice) = ids.iter().find(|id| !seen.insert(id.as_str())) {
                    return Err(format!("section {twice} is named twice in sectionIds"));
                }
                ids
            }
        };
        let wheelchair = ask.wheelchair.unwrap_or(0);
        if wheelchair > quantity {
            return Err(format!("wheelchair must be 0 to quantity ({quantity})"));
        }
        Ok(Self {
            quantity,
            section_ids,
            together: ask.together.unwrap_or(true),
            wheelchair,
        })
    }
}

/// Why an entry ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndReason {
    Left,
    Declined,
    OfferExpired,
    Refunded,
    Closed,
    Removed,
    BuyerLimit,
}

impl EndReason {
    const ALL: [EndReason; 7] = [
        EndReason::Left,
        EndReason::Declined,
        EndReason::OfferExpired,
        EndReason::Refunded,
        EndReason::Closed,
        EndReason::Removed,
        EndReason::BuyerLimit,
    ];

    /// The reason `text` names (its `as_str`).
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == text)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Left => "left",
            Self::Declined => "declined",
            Self::OfferExpired => "offer-expired",
            Self::Refunded => "refunded",
            Self::Closed => "closed",
            Self::Removed => "removed",
            Self::BuyerLimit => "buyer-limit",
        }
    }
}

/// An entry's status as a reader sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryStatus {
    Waiting,
    Offered,
    Purchased,
    Ended(EndReason),
}

impl EntryStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Waiting => "WAITING",
            Self::Offered => "OFFERED",
            Self::Purchased => "PURCHASED",
            Self::Ended(_) => "ENDED",
        }
    }
    pub fn reason(self) -> Option<EndReason> {
        match self {
            Self::Ended(reason) => Some(reason),
            _ => None,
        }
    }
}

/// What a reader knows of an offer's order: its status, expiry and
/// whether it lists any seat or place (what drops and `hold-ga 0` take
/// off; an expiry leaves the list as it was).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OfferOrder {
    pub status: OrderStatus,
    pub expires_at: Millis,
    pub holds_anything: bool,
    /// Why a cancel ended it, as the cancel recorded.
    pub cancelled_as: Option<EndReason>,
}

/// Why a cancel of an offer's order ends its entry, as the cancel records
/// it (the first end stands: a later write never changes it): an offer
/// left holding nothing was declined already, and one past its expiry had
/// run out (a removal that comes later too); a live one is the organiser's
/// removal, or a decline.
pub fn offer_cancel_reason(removal: bool, holds_anything: bool, live: bool) -> EndReason {
    if !holds_anything {
        EndReason::Declined
    } else if !live {
        EndReason::OfferExpired
    } else if removal {
        EndReason::Removed
    } else {
        EndReason::Declined
    }
}

/// An entry's status at `now`, computed where no write is needed: what is
/// stored (`stored`: WAITING, OFFERED, PURCHASED or an end), its offer's
/// order as read, and whether its waitlist generation was deleted. An
/// offer left holding nothing reads `declined` (for good: its running out
/// later does not change the reason), one that ran out `offer-expired`,
/// one whose payment could not complete it `refunded`, a completed one
/// `PURCHASED`; a waiting entry of a deleted waitlist `closed`. A live
/// offer outlives the delete (it may still be paid).
pub fn entry_status_at(
    stored: EntryStatus,
    offer: Option<OfferOrder>,
    waitlist_ended: bool,
    now: Millis,
) -> EntryStatus {
    match (stored, offer) {
        (EntryStatus::Waiting, _) if waitlist_ended => EntryStatus::Ended(EndReason::Closed),
        (EntryStatus::Offered, Some(order)) => match order.status {
            OrderStatus::Completed => EntryStatus::Purchased,
            OrderStatus::RefundDue => EntryStatus::Ended(EndReason::Refunded),
            OrderStatus::Cancelled => {
                EntryStatus::Ended(order.cancelled_as.unwrap_or(EndReason::Declined))
            }
            OrderStatus::Pending | OrderStatus::Expired if !order.holds_anything => {
                EntryStatus::Ended(EndReason::Declined)
            }
            OrderStatus::Expired => EntryStatus::Ended(EndReason::OfferExpired),
            OrderStatus::Pending if order.expires_at <= now => {
                EntryStatus::Ended(EndReason::OfferExpired)
            }
            OrderStatus::Pending => EntryStatus::Offered,
        },
        // An offer whose order is gone (past its retention) ran out.
        (EntryStatus::Offered, None) => EntryStatus::Ended(EndReason::OfferExpired),
        (stored, _) => stored,
    }
}

#[cfg(test)]
#[path = "waitlist_tests.rs"]
mod tests;
