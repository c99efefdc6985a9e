//! What one function instance remembers between its requests, in one
//! place, held by the `App` (the store only talks to DynamoDB): the events
//! it read (heads and plans: a ready event's plan never changes), the seat
//! maps and sold-out sections it read (for their cache times), each
//! queue's state (about a second) and the version over which an
//! on-the-spot admission last lost its race here, and the crowd gate's
//! memory of the seats it keeps refusing. A Lambda sandbox keeps one for
//! its life; the dev server and the tests give each function its own.

use std::sync::Arc;

use super::event_reads::{pick_plan_replica, EventCache};
use super::queue::{pick_queue_copy, QueueCache, QUEUE_CACHE_MS};
use super::seat_map::{SeatMapCache, SEAT_MAP_CACHE_MS};
use super::sold_out::SoldOutCache;
use crate::crowd::Crowd;
use crate::domain::{Event, EventHead};

/// One instance's memory (cheap to clone: clones share it).
#[derive(Clone, Debug)]
pub struct Memory {
    pub(super) heads: Arc<EventCache<EventHead>>,
    pub(super) events: Arc<EventCache<Event>>,
    /// The copy of each plan this instance reads (see `event_reads`).
    pub(super) plan_replica: u8,
    pub(super) seat_maps: Arc<SeatMapCache>,
    /// How long a seat map read is reused ([`SEAT_MAP_CACHE_MS`]).
    pub(super) seat_map_cache_ms: i64,
    pub(super) sold_out: Arc<SoldOutCache>,
    /// Each queue's state as this instance last read it, from its copy,
    /// and where an on-the-spot admission lost its race.
    pub(super) queues: Arc<QueueCache>,
    pub(super) queue_copy: u8,
    /// How long a queue's state is reused ([`QUEUE_CACHE_MS`]).
    pub(super) queue_cache_ms: i64,
    /// The crowd gate: the seats this instance keeps refusing.
    pub crowd: Crowd,
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
            queues: Arc::default(),
            queue_copy: pick_queue_copy(),
            queue_cache_ms: QUEUE_CACHE_MS,
            crowd: Crowd::default(),
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
