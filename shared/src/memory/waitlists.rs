//! An instance's memory of each waitlist's state and positions, as last
//! read from this instance's copy: the sale's gate and the entries'
//! statuses ask it at most once a queue's cache time (a second), so a
//! crowd's reads cost each instance one a second.

use std::sync::Arc;

use super::{Memory, Recall};
use crate::domain::waitlist::{Waitlist, WAITLIST_ONLY_AFTER_MS};
use crate::domain::waitlist_positions::Positions;
use crate::domain::{EventId, Millis};

// The waitlist-only sale starts a second after the opening because every
// instance rereads the state within its cache time: never longer.
const _: () = assert!(crate::store::QUEUE_CACHE_MS <= WAITLIST_ONLY_AFTER_MS);

impl Memory {
    /// The waitlist's state as this instance last read it (`Kept(None)`:
    /// none), if that was less than the cache time before `now`; else the
    /// copy to read.
    pub fn waitlist(&self, event: &EventId, now: Millis) -> Recall<Option<Arc<Waitlist>>> {
        let (cache_ms, copy) = (self.state_cache_ms, self.state_copy);
        self.waitlists.recall(event, now, cache_ms, copy)
    }

    /// Keeps `state` as this instance's view of the waitlist from `now`.
    pub fn remember_waitlist(&self, event: &EventId, now: Millis, state: Option<Arc<Waitlist>>) {
        self.waitlists.keep(event, now, state);
    }
}

/// A waitlist generation's positions as this instance last read them from
/// its copy (`None`: none kept yet).
#[derive(Debug)]
pub struct KeptPositions {
    generation: u64,
    positions: Option<Arc<Positions>>,
}

impl Memory {
    /// Generation `generation`'s positions of `event` as this instance last
    /// read them, if that was less than the state cache time before `now`;
    /// else the copy to read. A reader of another generation reads again.
    pub fn positions(
        &self,
        event: &EventId,
        generation: u64,
        now: Millis,
    ) -> Recall<Option<Arc<Positions>>> {
        let (cache_ms, copy) = (self.state_cache_ms, self.state_copy);
        match self.positions.recall(event, now, cache_ms, copy) {
            Recall::Kept(Some(kept)) if kept.generation == generation => {
                Recall::Kept(kept.positions.clone())
            }
            _ => Recall::ReadCopy(copy),
        }
    }

    /// Keeps `positions` of `generation` as this instance's view from `now`.
    pub fn remember_positions(
        &self,
        event: &EventId,
        generation: u64,
        now: Millis,
        positions: Option<Arc<Positions>>,
    ) {
        let kept = KeptPositions {
            generation,
            positions,
        };
        self.positions.keep(event, now, Some(Arc::new(kept)));
    }
}
