//! Under a crowd (docs/API.md): when one function instance may answer a
//! seat's refusal from what it saw a moment ago instead of asking DynamoDB
//! again, so that a stampede on one seat costs its partition little.
//!
//! get-seat reads a seat, strongly consistent, before it writes it, and
//! refuses on what the read shows ([`refusal_on_read`]): exact (the read
//! is the seat now), and a read unit where a refused conditional write
//! costs write units on the seat's partition. A seat the read shows
//! claimable is claimed by the conditional write.
//!
//! A seat is *contended* for an instance once that instance refused it at
//! least [`CONTENDED_REFUSALS`] times within the last
//! [`CONTENDED_WINDOW_MS`]. Only then may it refuse from memory without
//! the read ([`RefusalMemory::refuse`]), or when DynamoDB did not answer
//! the read (throttled: the crowd is DynamoDB's to see;
//! [`RefusalMemory::recall`]), and either only while (a) what it saw is at
//! most [`REMEMBERED_FOR_MS`] old (so it misses a release by at most that
//! long), (b) a remembered hold has not expired (the one boundary,
//! [`hold_is_live`]: an expired hold is claimable at once, memory or not),
//! and (c) the claimant is not the holder itself (re-claiming one's own
//! seat stays idempotent). A success is always a real conditional write:
//! memory only ever refuses.

use super::{hold_is_live, Millis, SeatState};
use std::collections::{HashMap, VecDeque};

/// Refusals within [`CONTENDED_WINDOW_MS`] that make a seat contended.
/// Two, not more: every exact refusal is a strongly consistent read of the
/// seat (a read unit of its partition's 3,000 a second), so a crowd of N
/// fresh instances costs the seat about N × this many read units in its
/// first second; at 3, a thousand instances would ask for a whole
/// partition (docs/BENCHMARKS.md, "Under a crowd").
pub const CONTENDED_REFUSALS: usize = 2;
/// The window in which [`CONTENDED_REFUSALS`] must fall.
pub const CONTENDED_WINDOW_MS: i64 = 1_000;
/// The oldest exact observation a refusal from memory may rest on: the
/// seat map's lag, the contract's bound on a missed release.
pub const REMEMBERED_FOR_MS: i64 = 5_000;
/// Seats one instance remembers at most; past it, the stale ones go.
pub const REMEMBERED_SEATS: usize = 10_000;

/// What an exact refusal saw of a seat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeatSeen {
    /// Held by another order until this instant (exclusive).
    HeldUntil(Millis),
    /// Sold.
    Sold,
}

/// What an instance may make of a claim whose read of the seat DynamoDB
/// throttled ([`RefusalMemory::recall`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recalled {
    /// Refused, as the seat was seen.
    Refused(SeatSeen),
    /// The claimant was seen holding it: the conditional write decides.
    Holder,
    /// Nothing it may rest on.
    Nothing,
}

/// What one instance remembers of one seat.
#[derive(Debug, Clone)]
struct Remembered {
    /// Its refusals (exact or from memory) within the window, oldest first.
    refusals: VecDeque<Millis>,
    holder: String,
    seen: SeatSeen,
    seen_at: Millis,
}

impl Remembered {
    fn forget_before(&mut self, now: Millis) {
        within_window(&mut self.refusals, now);
    }

    /// Whether what was seen may still answer at `now`: at most
    /// [`REMEMBERED_FOR_MS`] old, and a hold not expired.
    fn may_answer(&self, now: Millis) -> bool {
        let still = match self.seen {
            SeatSeen::HeldUntil(expires_at) => hold_is_live(expires_at, now),
            SeatSeen::Sold => true,
        };
        still && (0..=REMEMBERED_FOR_MS).contains(&(now.0 - self.seen_at.0))
    }
}

/// What a strongly consistent read of a seat says of `claimant`'s claim on
/// it at `now`: refused (by whom, and what was seen), or `None`, when the
/// seat may be claimable and the conditional write decides. The same
/// rules as the write's condition: sold is sold, a hold is another's while
/// `now < expiresAt` (the one boundary), a seat held by the claimant
/// itself is re-claimed.
pub fn refusal_on_read(
    state: &SeatState,
    claimant: &str,
    now: Millis,
) -> Option<(String, SeatSeen)> {
    match state {
        SeatState::Sold { order } => Some((order.to_string(), SeatSeen::Sold)),
        SeatState::Held { order, expires_at }
            if order.as_str() != claimant && hold_is_live(*expires_at, now) =>
        {
            Some((order.to_string(), SeatSeen::HeldUntil(*expires_at)))
        }
        SeatState::Held { .. } | SeatState::Available => None,
    }
}

/// Refusal instants within the window, oldest first, trimmed at `now`.
fn within_window(refusals: &mut VecDeque<Millis>, now: Millis) {
    while refusals
        .front()
        .is_some_and(|t| t.0 <= now.0 - CONTENDED_WINDOW_MS)
    {
        refusals.pop_front();
    }
}

/// One instance's memory of the seats it refused, keyed by the caller's
/// seat key (event and seat).
#[derive(Debug, Default)]
pub struct RefusalMemory {
    seats: HashMap<String, Remembered>,
}

impl RefusalMemory {
    /// The exact path refused `seat` at `now`: it is `seen`, by `holder`.
    pub fn refused_exactly(&mut self, seat: &str, holder: &str, seen: SeatSeen, now: Millis) {
        if self.seats.len() >= REMEMBERED_SEATS && !self.seats.contains_key(seat) {
            self.seats.retain(|_, r| {
                r.refusals
                    .back()
                    .is_some_and(|t| t.0 > now.0 - CONTENDED_WINDOW_MS)
            });
            if self.seats.len() >= REMEMBERED_SEATS {
                self.seats.clear();
            }
        }
        let entry = self
            .seats
            .entry(seat.to_owned())
            .or_insert_with(|| Remembered {
                refusals: VecDeque::new(),
                holder: holder.to_owned(),
                seen,
                seen_at: now,
            });
        entry.holder = holder.to_owned();
        entry.seen = seen;
        entry.seen_at = now;
        entry.refusals.push_back(now);
        entry.forget_before(now);
    }

    /// A refusal of `claimant`'s claim on `seat` at `now` from memory, if
    /// the seat is contended and the rules above allow one; it counts as a
    /// refusal (the crowd is still there). `None`: read the seat.
    pub fn refuse(&mut self, seat: &str, claimant: &str, now: Millis) -> Option<SeatSeen> {
        self.remembered(seat, claimant, now, CONTENDED_REFUSALS)
    }

    /// What to make of `claimant`'s claim on `seat` at `now` when DynamoDB
    /// throttled the claim's read of it: what this instance last saw of
    /// the seat, contended or not, within the same bounds (at most
    /// [`REMEMBERED_FOR_MS`] old, never past a hold's expiry); a claimant
    /// seen holding it is the holder, whose claim is the write's to answer.
    pub fn recall(&mut self, seat: &str, claimant: &str, now: Millis) -> Recalled {
        let seen_holding = self
            .seats
            .get(seat)
            .is_some_and(|entry| entry.holder == claimant && entry.may_answer(now));
        if seen_holding {
            return Recalled::Holder;
        }
        self.remembered(seat, claimant, now, 0)
            .map_or(Recalled::Nothing, Recalled::Refused)
    }

    /// What was seen of `seat`, if `refusals` refusals within the window
    /// and the bounds allow a refusal of `claimant` on it at `now`.
    fn remembered(
        &mut self,
        seat: &str,
        claimant: &str,
        now: Millis,
        refusals: usize,
    ) -> Option<SeatSeen> {
        let entry = self.seats.get_mut(seat)?;
        entry.forget_before(now);
        let allowed =
            entry.refusals.len() >= refusals && entry.may_answer(now) && entry.holder != claimant;
        if !allowed {
            return None;
        }
        entry.refusals.push_back(now);
        Some(entry.seen)
    }

    /// `seat` changed hands through this instance (it claimed or released
    /// it): nothing remembered of it holds any more.
    pub fn forget(&mut self, seat: &str) {
        self.seats.remove(seat);
    }
}

#[cfg(test)]
#[path = "crowd_tests.rs"]
mod tests;
