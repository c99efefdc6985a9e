//! An instance's memory of each waitlist's state, as last read from this
//! instance's copy: the sale's gate asks it at most once a queue's cache
//! time (a second), so a crowd's reads cost each instance one a second.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::{is_fresh, lock, Memory, Recall};
use crate::domain::waitlist::{Waitlist, WAITLIST_ONLY_AFTER_MS};
use crate::domain::{EventId, Millis};

// The waitlist-only sale starts a second after the opening because every
// instance rereads the state within its cache time: never longer.
const _: () = assert!(crate::store::QUEUE_CACHE_MS <= WAITLIST_ONLY_AFTER_MS);

/// A waitlist's state as read (`None`: none was ever put) and when.
type WaitlistRead = (Millis, Option<Arc<Waitlist>>);

#[derive(Debug, Default)]
pub(super) struct WaitlistMemory {
    reads: Mutex<HashMap<EventId, WaitlistRead>>,
}

impl Memory {
    /// The waitlist's state as this instance last read it (`Kept(None)`:
    /// none), if that was less than the cache time before `now`; else the
    /// copy to read.
    pub fn waitlist(&self, event: &EventId, now: Millis) -> Recall<Option<Arc<Waitlist>>> {
        match lock(&self.waitlists.reads).get(event) {
            Some((read_at, state)) if is_fresh(*read_at, now, self.state_cache_ms) => {
                Recall::Kept(state.clone())
            }
            _ => Recall::ReadCopy(self.state_copy),
        }
    }

    /// Keeps `state` as this instance's view of the waitlist from `now`.
    pub fn remember_waitlist(&self, event: &EventId, now: Millis, state: Option<Arc<Waitlist>>) {
        lock(&self.waitlists.reads).insert(event.clone(), (now, state));
    }
}
