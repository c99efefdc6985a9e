//! The two shapes an instance keeps reads in: [`EventCache`], for what
//! never changes once read (a ready event's head and plan), and
//! [`Recent`], for the stream-fed reads reused for a time.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::lock;

use crate::domain::{EventId, Millis};

/// Ready events (or their heads) kept per process: a Lambda sandbox
/// serves few events.
const CACHED_EVENTS: usize = 256;

/// Events whose recent reads (seat map, sold-out sections, run summaries)
/// an instance keeps, each kind.
const RECENT_EVENTS: usize = 64;

/// Ready events' heads or whole events, by id.
#[derive(Debug)]
pub(super) struct EventCache<T>(Mutex<HashMap<EventId, Arc<T>>>);

impl<T> Default for EventCache<T> {
    fn default() -> Self {
        Self(Mutex::default())
    }
}

impl<T> EventCache<T> {
    pub(super) fn get(&self, id: &EventId) -> Option<Arc<T>> {
        lock(&self.0).get(id).cloned()
    }

    /// Keeps `value`, forgetting everything past [`CACHED_EVENTS`].
    pub(super) fn put(&self, id: &EventId, value: Arc<T>) {
        let mut map = lock(&self.0);
        if map.len() >= CACHED_EVENTS {
            map.clear();
        }
        map.insert(id.clone(), value);
    }
}

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
        lock(&self.0)
            .get(event)
            .filter(|(at, _)| now.0 - at.0 < max_age_ms)
            .cloned()
    }

    /// Keeps `value`, read at `at`.
    pub(super) fn put(&self, event: &EventId, at: Millis, value: Arc<T>) {
        let mut recent = lock(&self.0);
        if recent.len() >= RECENT_EVENTS {
            recent.clear();
        }
        recent.insert(event.clone(), (at, value));
    }
}
