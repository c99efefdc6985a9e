//! What one function instance remembers between its requests, in one
//! place, held by the `App`. The store only talks to DynamoDB and reports
//! what it saw; the handlers consult this memory around its calls: at most
//! one question before a store call (may it be answered without the store,
//! and on what?) and one report after it.
//!
//! It keeps the events it read (heads and plans: a ready event's plan never
//! changes), the seat maps, free-run summaries and sold-out sections it
//! read (for their cache times, in [`Recent`]), each queue's state (about a
//! second) and the version over which an on-the-spot admission last lost
//! its race here ([`queues`]), each waitlist's state (as long as a queue's,
//! [`waitlists`]), and the crowd gate's memory of the seats and
//! buyers it keeps refusing ([`claims`]). A Lambda sandbox keeps one for its
//! life; the dev server and the tests give each function its own.

mod buyers;
mod claims;
mod crowd;
mod lines;
mod queues;
mod recent;
mod states;
mod waitlists;

use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::domain::{Event, EventHead, EventId, Millis, SectionId};
use crate::store::{
    MapRead, SectionRuns, Store, QUEUE_CACHE_MS, SEAT_MAP_CACHE_MS, SOLD_OUT_CACHE_MS,
};
pub use claims::ClaimQuestion;
pub use lines::{LineRead, ShardRead};
use recent::{EventCache, Recent};

/// Memory's answer before a read: what it kept, young enough to answer
/// with, or the copy of the item this instance reads instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Recall<T> {
    /// Answer with this; the store is not asked.
    Kept(T),
    /// Read copy `copy` from the store, then keep what was read.
    ReadCopy(u8),
}

/// One instance's memory (cheap to clone: clones share it).
#[derive(Clone, Debug)]
pub struct Memory {
    heads: Arc<EventCache<EventHead>>,
    events: Arc<EventCache<Event>>,
    /// The copy of each plan this instance reads (see the store's
    /// `event_reads`).
    plan_copy: u8,
    seat_maps: Arc<Recent<MapRead>>,
    /// How long a seat map read is reused ([`SEAT_MAP_CACHE_MS`]).
    seat_map_cache_ms: i64,
    sold_out: Arc<Recent<HashSet<SectionId>>>,
    /// Each section's summary of its rows' free runs (seat-map time).
    runs: Arc<Recent<SectionRuns>>,
    /// Each queue's state as this instance last read it, from its copy,
    /// and where an on-the-spot admission lost its race.
    queues: Arc<queues::QueueMemory>,
    /// Each waitlist's state as this instance last read it, from its copy.
    waitlists: Arc<states::StateReads<crate::domain::waitlist::Waitlist>>,
    /// Each waitlist's positions as this instance last read them.
    positions: Arc<states::StateReads<waitlists::KeptPositions>>,
    /// The copy number of each queue's and each waitlist's state this
    /// instance reads.
    state_copy: u8,
    /// How long a queue's or a waitlist's state is reused
    /// ([`QUEUE_CACHE_MS`]).
    state_cache_ms: i64,
    /// The crowd gate: the seats this instance keeps refusing.
    crowd: crowd::Crowd,
    /// The buyers this instance keeps refusing for their limit.
    buyers: buyers::BuyerMemory,
    /// Each waitlist's line as this instance's looks last read its heads.
    lines: Arc<lines::LineMemory>,
}

impl Default for Memory {
    fn default() -> Self {
        Self {
            heads: Arc::default(),
            events: Arc::default(),
            plan_copy: Store::pick_plan_copy(),
            seat_maps: Arc::default(),
            seat_map_cache_ms: SEAT_MAP_CACHE_MS,
            sold_out: Arc::default(),
            runs: Arc::default(),
            queues: Arc::default(),
            waitlists: Arc::default(),
            positions: Arc::default(),
            state_copy: Store::pick_state_copy(),
            state_cache_ms: QUEUE_CACHE_MS,
            crowd: crowd::Crowd::default(),
            buyers: buyers::BuyerMemory::default(),
            lines: Arc::default(),
        }
    }
}

impl Memory {
    /// Reuses a queue's or a waitlist's state for `ms` instead of
    /// [`QUEUE_CACHE_MS`]: the dev server, one process for every function,
    /// reads it each time, so a put or a delete applies to the next
    /// request.
    pub fn with_state_cache_ms(mut self, ms: i64) -> Self {
        self.state_cache_ms = ms;
        self
    }

    /// Reuses a seat map read for `ms` instead of [`SEAT_MAP_CACHE_MS`]:
    /// the dev server, whose one process serves every viewer, keeps it
    /// shorter so a change shows within its page's one-second refresh.
    pub fn with_seat_map_cache_ms(mut self, ms: i64) -> Self {
        self.seat_map_cache_ms = ms;
        self
    }

    /// What another instance would start with: the same settings, nothing
    /// remembered, copies of its own pick.
    pub fn fresh(&self) -> Self {
        Self {
            seat_map_cache_ms: self.seat_map_cache_ms,
            state_cache_ms: self.state_cache_ms,
            ..Self::default()
        }
    }

    /// Identifies this memory (and its clones) while it lives.
    pub fn id(&self) -> usize {
        Arc::as_ptr(&self.events) as usize
    }

    // ----- events: a ready event never changes ------------------------------

    /// A ready event's head, if this instance read it.
    pub fn event_head(&self, event: &EventId) -> Option<Arc<EventHead>> {
        self.heads.get(event)
    }

    /// Keeps a ready event's head.
    pub fn keep_event_head(&self, event: &EventId, head: Arc<EventHead>) {
        self.heads.put(event, head);
    }

    /// A ready event with its plan, if this instance read it; else the
    /// copy of the plan to read.
    pub fn event(&self, event: &EventId) -> Recall<Arc<Event>> {
        match self.events.get(event) {
            Some(kept) => Recall::Kept(kept),
            None => Recall::ReadCopy(self.plan_copy),
        }
    }

    /// Keeps a ready event with its plan.
    pub fn keep_event(&self, event: &EventId, found: Arc<Event>) {
        self.events.put(event, found);
    }

    // ----- the stream-fed reads, each reused for its kind's time ------------

    /// The seat map this instance read of `event`, and when, if younger
    /// than the seat-map time.
    pub fn seat_map(&self, event: &EventId, now: Millis) -> Option<(Millis, Arc<MapRead>)> {
        self.seat_maps.get(event, now, self.seat_map_cache_ms)
    }

    /// Keeps a seat map read at `at`.
    pub fn keep_seat_map(&self, event: &EventId, at: Millis, read: Arc<MapRead>) {
        self.seat_maps.put(event, at, read);
    }

    /// The run summaries this instance read of `event`, if younger than the
    /// seat-map time: with the stream's lag, at most the contract's 5 s old.
    pub fn section_runs(&self, event: &EventId, now: Millis) -> Option<Arc<SectionRuns>> {
        let (_, runs) = self.runs.get(event, now, self.seat_map_cache_ms)?;
        Some(runs)
    }

    /// Keeps run summaries read at `at`.
    pub fn keep_section_runs(&self, event: &EventId, at: Millis, runs: Arc<SectionRuns>) {
        self.runs.put(event, at, runs);
    }

    /// The sections this instance last read as sold out for good, if that
    /// read is younger than [`SOLD_OUT_CACHE_MS`].
    pub fn sold_out(&self, event: &EventId, now: Millis) -> Option<Arc<HashSet<SectionId>>> {
        let (_, sections) = self.sold_out.get(event, now, SOLD_OUT_CACHE_MS)?;
        Some(sections)
    }

    /// Keeps the sold-out sections read at `at`.
    pub fn keep_sold_out(&self, event: &EventId, at: Millis, sections: Arc<HashSet<SectionId>>) {
        self.sold_out.put(event, at, sections);
    }
}

/// Locks one of the memory's parts. A panic while the lock was held cannot
/// leave a part unsafe to read: at worst a read or a refusal is not kept,
/// and everything kept is whole or absent.
fn lock<T>(part: &Mutex<T>) -> MutexGuard<'_, T> {
    part.lock().unwrap_or_else(PoisonError::into_inner)
}
