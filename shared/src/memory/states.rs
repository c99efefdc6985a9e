//! Each event's shared state of one kind (a queue's, a waitlist's) as this
//! instance last read it from its copy, and when: reused for the state
//! cache time, then read again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::{lock, Recall};
use crate::domain::{EventId, Millis};

/// A state as read (`None`: there is none) and when it was read.
type StateRead<T> = (Millis, Option<Arc<T>>);

#[derive(Debug)]
pub(super) struct StateReads<T> {
    reads: Mutex<HashMap<EventId, StateRead<T>>>,
}

impl<T> Default for StateReads<T> {
    fn default() -> Self {
        Self {
            reads: Mutex::default(),
        }
    }
}

impl<T> StateReads<T> {
    /// The state kept for `event`, if it was read less than `cache_ms`
    /// before `now` (and not after it: a clock that stepped back reads
    /// again); else `copy`, the copy to read.
    pub(super) fn recall(
        &self,
        event: &EventId,
        now: Millis,
        cache_ms: i64,
        copy: u8,
    ) -> Recall<Option<Arc<T>>> {
        match lock(&self.reads).get(event) {
            Some((read_at, state)) if now.0 - read_at.0 < cache_ms && now.0 >= read_at.0 => {
                Recall::Kept(state.clone())
            }
            _ => Recall::ReadCopy(copy),
        }
    }

    /// Keeps `state` as this instance's view of `event`'s from `now`.
    pub(super) fn keep(&self, event: &EventId, now: Millis, state: Option<Arc<T>>) {
        lock(&self.reads).insert(event.clone(), (now, state));
    }
}
