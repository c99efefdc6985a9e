//! Buyer limits: at no instant does one buyer hold (in orders whose
//! `expiresAt` has not passed) and own together more than the event's
//! `buyerLimit` seats and places. The store keeps one record per buyer and
//! event; this module holds the rules a claim, a release and a confirm
//! apply to what they read of it. Nothing here reads a clock: `now` is
//! passed in.

use std::collections::BTreeSet;
use std::ops::RangeInclusive;

use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};

use super::buyer::BuyerId;
use super::crowd::{CONTENDED_WINDOW_MS, REMEMBERED_FOR_MS, REMEMBERED_SEATS};
use super::{EventId, Millis, OrderId};
use crate::error::Error;

/// Refusals of one buyer for its limit within [`CONTENDED_WINDOW_MS`]
/// after which an instance refuses it from memory. Three, where a seat
/// takes two (`crowd::CONTENDED_REFUSALS`): a buyer's record is one buyer's
/// key, which no crowd of fresh instances reads at once.
pub const LIMITED_REFUSALS: usize = 3;

/// The limits an event may set.
pub const BUYER_LIMIT_RANGE: RangeInclusive<u32> = 1..=50;

/// Hex digits of a [`BuyerRef`]: 128 bits of SHA-256.
const BUYER_REF_LEN: usize = 32;

/// create-event's check of `buyerLimit`.
pub fn check_limit(limit: u32) -> Result<(), Error> {
    if BUYER_LIMIT_RANGE.contains(&limit) {
        return Ok(());
    }
    Err(Error::BadRequest(format!(
        "buyerLimit must be {} to {} (or absent for no limit)",
        BUYER_LIMIT_RANGE.start(),
        BUYER_LIMIT_RANGE.end()
    )))
}

/// The buyer's part of its record's key, so no buyer id is ever a key
/// (keys reach metrics and logs of the table) and a hold token can carry
/// it in the clear: a MAC of the event and the buyer id under a server
/// key the event was created with ([`Self::keyed`]), so nobody without
/// the key can tell from a key which buyer it counts; an event created
/// before keeps the plain hash its records already have ([`Self::unkeyed`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BuyerRef(String);

impl BuyerRef {
    /// The ref of a buyer of an event created before refs were keyed: a
    /// SHA-256 anyone can compute from the two ids.
    pub fn unkeyed(event: &EventId, buyer: &BuyerId) -> Self {
        let mut hash = Sha256::new();
        hash.update(b"seatclaim buyer record v1\0");
        hash.update(event.as_str().as_bytes());
        hash.update([0]);
        hash.update(buyer.as_str().as_bytes());
        Self(hex::encode(hash.finalize())[..BUYER_REF_LEN].to_owned())
    }

    /// The ref under `key` (the server key fixed when the event was
    /// created): HMAC-SHA-256, its own label, of the event and the buyer.
    pub fn keyed(key: &[u8], event: &EventId, buyer: &BuyerId) -> Self {
        // HMAC takes a key of any length: `new_from_slice` cannot fail.
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(key) else {
            return Self::unkeyed(event, buyer);
        };
        mac.update(b"seatclaim buyer record v2\0");
        mac.update(event.as_str().as_bytes());
        mac.update(&[0]);
        mac.update(buyer.as_str().as_bytes());
        Self(hex::encode(mac.finalize().into_bytes())[..BUYER_REF_LEN].to_owned())
    }
    /// A ref as a token carries it: exactly 32 lowercase hex digits.
    pub fn from_hex(text: &str) -> Option<Self> {
        let hex = text.len() == BUYER_REF_LEN
            && text
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        hex.then(|| Self(text.to_owned()))
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// An order's buyer as the limit counts it: whose record, and the event's
/// limit (part of the plan's identity, so it never changes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitedBuyer {
    pub buyer: BuyerRef,
    pub limit: u32,
}

/// One order's live units as the buyer's record has them: the members of
/// the order's `seats` set (seat ids and place members alike) and the
/// order's expiry, until which they count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderUnits {
    pub order: String,
    pub members: BTreeSet<String>,
    pub expires_at: Millis,
}

impl OrderUnits {
    fn live(&self, now: Millis) -> bool {
        now < self.expires_at
    }
}

/// A buyer's record as read: `version` 0 when there is none yet.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BuyerCount {
    pub version: u64,
    pub sold: u32,
    pub orders: Vec<OrderUnits>,
}

impl BuyerCount {
    /// What the buyer holds and owns at `now`: every sold unit, and every
    /// member of an order whose expiry has not passed (to the millisecond).
    pub fn counted(&self, now: Millis) -> u32 {
        let held: usize = self
            .orders
            .iter()
            .filter(|o| o.live(now))
            .map(|o| o.members.len())
            .sum();
        self.sold
            .saturating_add(u32::try_from(held).unwrap_or(u32::MAX))
    }

    /// `order`'s entry while it counts.
    pub fn live_order(&self, order: &OrderId, now: Millis) -> Option<&OrderUnits> {
        self.orders
            .iter()
            .find(|o| o.order == order.as_str() && o.live(now))
    }

    /// Entries that count nothing (their order expired, or let go of all
    /// it held): a write of the record drops them, so it stays small.
    pub fn stale(&self, now: Millis) -> impl Iterator<Item = &str> {
        self.orders
            .iter()
            .filter(move |o| !o.live(now) || o.members.is_empty())
            .map(|o| o.order.as_str())
    }
}

/// What a claim of `members` for one order does to its buyer's record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LimitDecision {
    /// Within the limit: the order's entry becomes `members` (what it held
    /// and what it claims).
    Within { members: BTreeSet<String> },
    /// Over the limit: nothing is taken. `counted` is what the buyer held
    /// and owned as read.
    Over { counted: u32 },
}

/// A claim by `order` of `claimed` (seat ids or place members) at `now`:
/// members the order's live entry holds already take no new unit (a
/// re-claim is never refused); the rest must fit under `limit` with
/// everything the buyer holds and owns.
pub fn decide_claim(
    count: &BuyerCount,
    order: &OrderId,
    claimed: &[String],
    limit: u32,
    now: Millis,
) -> LimitDecision {
    let mut members = count
        .live_order(order, now)
        .map(|o| o.members.clone())
        .unwrap_or_default();
    let before = members.len();
    members.extend(claimed.iter().cloned());
    let new = u32::try_from(members.len() - before).unwrap_or(u32::MAX);
    let counted = count.counted(now);
    if new > 0 && counted.saturating_add(new) > limit {
        return LimitDecision::Over { counted };
    }
    LimitDecision::Within { members }
}

/// Whether a confirm by `order` may take `paid` units (the seats and places
/// it pays for, held or not): the buyer's count less the order's own live
/// units plus what is paid stays within `limit`.
pub fn confirm_within(
    count: &BuyerCount,
    order: &OrderId,
    paid: u32,
    limit: u32,
    now: Millis,
) -> bool {
    let own = count
        .live_order(order, now)
        .map_or(0, |o| u32::try_from(o.members.len()).unwrap_or(u32::MAX));
    count.counted(now).saturating_sub(own).saturating_add(paid) <= limit
}

/// One instance's memory of buyers it refused for the limit (docs/API.md,
/// "Under a crowd"): a buyer refused [`LIMITED_REFUSALS`] times within
/// [`CONTENDED_WINDOW_MS`] by this instance is refused from its record as
/// last read, while that read is at most [`REMEMBERED_FOR_MS`] old, so a
/// buyer who keeps clicking at its limit does not make its own record a
/// hot key. The remembered record is counted at the moment of each claim,
/// so no expiry is ever missed, and a re-claim is never refused; a release
/// or sale elsewhere may be missed for those 5 seconds.
#[derive(Debug, Default)]
pub struct BuyerRefusals {
    buyers: std::collections::HashMap<BuyerRef, Remembered>,
}

#[derive(Debug)]
struct Remembered {
    count: BuyerCount,
    read_at: Millis,
    refusals: Vec<Millis>,
}

impl BuyerRefusals {
    /// A refusal on `count` as read at `now`.
    pub fn refused(&mut self, buyer: &BuyerRef, count: BuyerCount, now: Millis) {
        if self.buyers.len() >= REMEMBERED_SEATS && !self.buyers.contains_key(buyer) {
            self.buyers.clear();
        }
        let entry = self.buyers.entry(buyer.clone()).or_insert(Remembered {
            count: BuyerCount::default(),
            read_at: now,
            refusals: Vec::new(),
        });
        entry.count = count;
        entry.read_at = now;
        entry.note(now);
    }

    /// `Some(counted)`: refuse this claim from memory (the buyer is
    /// contended here, the read fresh, and the claim over the limit on it).
    pub fn refuse(
        &mut self,
        buyer: &LimitedBuyer,
        order: &OrderId,
        claimed: &[String],
        now: Millis,
    ) -> Option<u32> {
        let entry = self.buyers.get_mut(&buyer.buyer)?;
        if now.0 - entry.read_at.0 >= REMEMBERED_FOR_MS || !entry.contended(now) {
            return None;
        }
        match decide_claim(&entry.count, order, claimed, buyer.limit, now) {
            LimitDecision::Over { counted } => {
                entry.note(now);
                Some(counted)
            }
            LimitDecision::Within { .. } => None,
        }
    }

    /// The buyer's record changed through this instance: forget it.
    pub fn forget(&mut self, buyer: &BuyerRef) {
        self.buyers.remove(buyer);
    }

    /// What a write taught this instance of a buyer's record, at `now`.
    pub fn learn(&mut self, seen: &BuyerSeen, now: Millis) {
        match seen {
            BuyerSeen::Nothing => {}
            BuyerSeen::Changed(buyer) => self.forget(buyer),
            BuyerSeen::RefusedAsRead(buyer, count) => self.refused(buyer, count.clone(), now),
        }
    }
}

/// What a claim, a release or a change of places saw of its buyer's
/// record, reported by the store for the instance's memory
/// ([`BuyerRefusals::learn`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum BuyerSeen {
    /// Nothing to learn: no limited buyer, or the write did not decide.
    #[default]
    Nothing,
    /// The record changed through this instance: what was kept is old.
    Changed(BuyerRef),
    /// The claim was refused for the limit on the record as read.
    RefusedAsRead(BuyerRef, BuyerCount),
}

impl Remembered {
    fn note(&mut self, now: Millis) {
        self.refusals
            .retain(|at| now.0 - at.0 < CONTENDED_WINDOW_MS);
        self.refusals.push(now);
    }
    fn contended(&self, now: Millis) -> bool {
        let recent = self
            .refusals
            .iter()
            .filter(|at| now.0 - at.0 < CONTENDED_WINDOW_MS)
            .count();
        recent >= LIMITED_REFUSALS
    }
}

#[cfg(test)]
#[path = "buyer_limit_tests.rs"]
mod tests;
