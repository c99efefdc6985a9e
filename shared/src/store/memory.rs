//! What one function instance remembers between its requests, in one
//! place, held by the `App` (the store only talks to DynamoDB): the events
//! it read (heads and plans: a ready event's plan never changes), the seat
//! maps, free-run summaries and sold-out sections it read (for their cache
//! times, in [`Recent`]), each queue's state (about a second) and the version over which an
//! on-the-spot admission last lost its race here, and the crowd gate's
//! memory of the seats it keeps refusing. A Lambda sandbox keeps one for
//! its life; the dev server and the tests give each function its own.

use std::sync::Arc;

use super::event_reads::{pick_plan_replica, EventCache};
use super::free_runs::SectionRuns;
use super::queue::{pick_queue_copy, QueueCache, QUEUE_CACHE_MS};
use super::seat_map::{MapRead, SEAT_MAP_CACHE_MS};
use crate::crowd::Crowd;
use crate::domain::buyer_limit::BuyerRefusals;
use crate::domain::{Event, EventHead, EventId, Millis, SectionId};
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

/// One instance's memory (cheap to clone: clones share it).
#[derive(Clone, Debug)]
pub struct Memory {
    pub(super) heads: Arc<EventCache<EventHead>>,
    pub(super) events: Arc<EventCache<Event>>,
    /// The copy of each plan this instance reads (see `event_reads`).
    pub(super) plan_replica: u8,
    pub(super) seat_maps: Arc<Recent<MapRead>>,
    /// How long a seat map read is reused ([`SEAT_MAP_CACHE_MS`]).
    pub(super) seat_map_cache_ms: i64,
    pub(super) sold_out: Arc<Recent<HashSet<SectionId>>>,
    /// Each section's summary of its rows' free runs (seat-map time).
    pub(super) runs: Arc<Recent<SectionRuns>>,
    /// Each queue's state as this instance last read it, from its copy,
    /// and where an on-the-spot admission lost its race.
    pub(super) queues: Arc<QueueCache>,
    pub(super) queue_copy: u8,
    /// How long a queue's state is reused ([`QUEUE_CACHE_MS`]).
    pub(super) queue_cache_ms: i64,
    /// The crowd gate: the seats this instance keeps refusing.
    pub crowd: Crowd,
    /// The buyers this instance keeps refusing for their limit.
    pub(super) buyers: Arc<Mutex<BuyerRefusals>>,
}

impl Default for Memory {
    fn default() -> Self {
        Self {
            heads: Arc::default(),
            events: Arc::default(),
            plan_replica: pick_plan_replica(),
            seat_maps: Arc::default(),
            seat_map_cache_ms: SEAT_MAP_CACHE_MS,
            sold_out: Arc::default(),
            runs: Arc::default(),
            queues: Arc::default(),
            queue_copy: pick_queue_copy(),
            queue_cache_ms: QUEUE_CACHE_MS,
            crowd: Crowd::default(),
            buyers: Arc::default(),
        }
    }
}

impl Memory {
    /// Reuses a queue's state for `ms` instead of [`QUEUE_CACHE_MS`]: the
    /// dev server, one process for every function, reads it each time, so
    /// a put or a delete applies to the next request.
    pub fn with_queue_cache_ms(mut self, ms: i64) -> Self {
        self.queue_cache_ms = ms;
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
            queue_cache_ms: self.queue_cache_ms,
            ..Self::default()
        }
    }

    /// Identifies this memory (and its clones) while it lives.
    pub fn id(&self) -> usize {
        Arc::as_ptr(&self.events) as usize
    }
}

/// Events whose recent reads (seat map, sold-out sections, run summaries)
/// an instance keeps, each kind.
const RECENT_EVENTS: usize = 64;

/// What an instance read of an event recently, and when: reused while
/// younger than its kind's time, forgotten all at once past
/// [`RECENT_EVENTS`] events (an instance serves a few events at a time).
#[derive(Debug)]
pub(super) struct Recent<T>(Mutex<HashMap<EventId, (Millis, Arc<T>)>>);

impl<T> Default for Recent<T> {
    fn default() -> Self {
        Self(Mutex::default())
    }
}

impl<T> Recent<T> {
    /// The read of `event` and when it was made, if younger than
    /// `max_age_ms` at `now`.
    pub(super) fn get(
        &self,
        event: &EventId,
        now: Millis,
        max_age_ms: i64,
    ) -> Option<(Millis, Arc<T>)> {
        self.lock()
            .get(event)
            .filter(|(at, _)| now.0 - at.0 < max_age_ms)
            .cloned()
    }

    /// Keeps `value`, read at `at`.
    pub(super) fn put(&self, event: &EventId, at: Millis, value: Arc<T>) {
        let mut recent = self.lock();
        if recent.len() >= RECENT_EVENTS {
            recent.clear();
        }
        recent.insert(event.clone(), (at, value));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<EventId, (Millis, Arc<T>)>> {
        // A poisoned lock only means a request panicked mid-insert; a
        // read kept here is whole or absent either way.
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}
