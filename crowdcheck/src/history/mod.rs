//! A history checker (issue 30): every request a stampede made, with the
//! instants it started and ended and what it was answered, judged against
//! what each resource promises. A seat is a register claimed under expiry:
//! at most one live holder at any instant, and every refusal explained by
//! some holder. GA places and a buyer's units are counters under a cap:
//! never over it at any instant, and a refusal for want of room explained
//! by the others' units. A section's rows under best-available: a refusal
//! of n adjacent seats explained by no row having them free (`blocks`).
//!
//! Times are microseconds on one clock (the run's wall clock, the one
//! `expiresAt` is told on). A request took effect at some instant within
//! `[start, end]`, unknown to the client; the checker rejects a history
//! only when no choice of those instants explains it, so a rejection is
//! always a real violation (a history it accepts may still hide one in
//! what the client could not see).

mod blocks;
mod counters;
mod holds;
mod place_resales;
mod record;
mod resales;
mod seat_op;
mod seats;
mod waitlist;

pub use blocks::{check_block_refusals, BlockRefusal};
pub use counters::{check_counter, CounterOp, Take};
pub use place_resales::{check_place_resales, PlacesResaleRecord, PlacesSale};
pub use record::{micros_of, places_hold, seat_claim, seconds_after, wall_us};
pub use resales::{check_resales, ResaleRecord, SeatSale};
pub use seat_op::{SeatOp, Taken};
pub use seats::{check_order_refusals, check_seat};
pub use waitlist::{check_waitlist, fits, MadeOffer, OfferedUnits, WaitEntry, JOIN_TIE_US};

/// Microseconds since the Unix epoch.
pub type Micros = i64;

/// How old a view the crowd gate's memory (or best-available's run
/// summaries) may answer from: a refusal it answers may rest on a hold
/// released within this long before the request, never on one expired.
pub const MEMORY_SLACK_US: Micros = shared::domain::crowd::REMEMBERED_FOR_MS * 1_000;

/// How long before its expiry an order stops being holdable: the guard
/// margin the development apps run with (`EXPIRY_GUARD_MS`).
pub const GUARD_US: Micros = shared::config::DEFAULT_EXPIRY_GUARD_MS as Micros * 1_000;

/// When a request was in flight, as its client saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub start: Micros,
    pub end: Micros,
}

impl Window {
    pub fn new(start: Micros, end: Micros) -> Self {
        Self { start, end }
    }
}

/// What a check found: how many operations it judged, and each violation
/// in words (empty: the history is explained).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub operations: usize,
    pub violations: Vec<String>,
}

impl Verdict {
    /// This verdict and `other`'s together.
    pub fn and(mut self, other: Verdict) -> Verdict {
        self.operations += other.operations;
        self.violations.extend(other.violations);
        self
    }
}

#[cfg(test)]
mod counter_tests;
#[cfg(test)]
mod seat_tests;
