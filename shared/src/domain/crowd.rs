//! Under a crowd (docs/API.md): when one function instance may answer a
//! seat's refusal from what it saw a moment ago instead of writing to the
//! seat again, so that a stampede on one seat costs its partition little.
//!
//! A seat is *contended* for an instance once that instance refused it at
//! least [`CONTENDED_REFUSALS`] times within the last
//! [`CONTENDED_WINDOW_MS`]. Only then may it refuse from memory, and only
//! while (a) what it saw is at most [`REMEMBERED_FOR_MS`] old (so it misses
//! a release by at most that long), (b) a remembered hold has not expired
//! (the one boundary, [`hold_is_live`]: an expired hold is claimable at
//! once, memory or not), and (c) the claimant is not the holder itself
//! (re-claiming one's own seat stays idempotent). A success is always a
//! real conditional write: memory only ever refuses.
//!
//! An instance that keeps refusing claims on one *event* (a sold-out show,
//! a crowd over a few rows: [`CONTENDED_REFUSALS`] refusals of its seats
//! within [`CONTENDED_WINDOW_MS`]) is *crowded*: it reads a seat, strongly
//! consistent, before writing it, and refuses on what the read shows
//! ([`refusal_on_read`]). That refusal is exact (the read is the seat now),
//! and costs a read unit where a failed conditional write costs write
//! units on the seat's partition; a seat the read shows claimable is
//! claimed by the same conditional write as ever.

use super::{hold_is_live, Millis, SeatState};
use std::collections::{HashMap, VecDeque};

/// Refusals within [`CONTENDED_WINDOW_MS`] that make a seat contended.
pub const CONTENDED_REFUSALS: usize = 3;
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
/// seat key (event and seat), and of the events whose claims it refused.
#[derive(Debug, Default)]
pub struct RefusalMemory {
    seats: HashMap<String, Remembered>,
    events: HashMap<String, VecDeque<Millis>>,
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
    /// the rules above allow one; it counts as a refusal (the crowd is
    /// still there). `None`: take the exact path.
    pub fn refuse(&mut self, seat: &str, claimant: &str, now: Millis) -> Option<SeatSeen> {
        let entry = self.seats.get_mut(seat)?;
        entry.forget_before(now);
        let age = now.0 - entry.seen_at.0;
        let still = match entry.seen {
            SeatSeen::HeldUntil(expires_at) => hold_is_live(expires_at, now),
            SeatSeen::Sold => true,
        };
        let allowed = entry.refusals.len() >= CONTENDED_REFUSALS
            && (0..=REMEMBERED_FOR_MS).contains(&age)
            && still
            && entry.holder != claimant;
        if !allowed {
            return None;
        }
        entry.refusals.push_back(now);
        Some(entry.seen)
    }

    /// A claim on a seat of `event` was refused at `now` (exactly, after a
    /// read, or from memory).
    pub fn event_refused(&mut self, event: &str, now: Millis) {
        if self.events.len() >= REMEMBERED_SEATS && !self.events.contains_key(event) {
            self.events.retain(|_, refusals| {
                within_window(refusals, now);
                !refusals.is_empty()
            });
            if self.events.len() >= REMEMBERED_SEATS {
                self.events.clear();
            }
        }
        let refusals = self.events.entry(event.to_owned()).or_default();
        refusals.push_back(now);
        within_window(refusals, now);
    }

    /// Whether this instance is crowded on `event` at `now`: claims are
    /// then read before they are written.
    pub fn crowded(&mut self, event: &str, now: Millis) -> bool {
        self.events.get_mut(event).is_some_and(|refusals| {
            within_window(refusals, now);
            refusals.len() >= CONTENDED_REFUSALS
        })
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
