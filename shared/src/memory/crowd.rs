//! One function instance's memory of the seats it keeps refusing (the
//! rules: [`crate::domain::crowd`]), shared by its concurrent requests.

use std::sync::{Arc, Mutex};

use super::lock;

use crate::domain::crowd::{RefusalMemory, SeatSeen};
use crate::domain::{EventId, Millis, SeatId};

/// Clones share one memory: they are the same instance's.
#[derive(Debug, Default, Clone)]
pub(super) struct Crowd(Arc<Mutex<RefusalMemory>>);

/// The memory's key for a seat: one event's seat.
fn seat_key(event: &EventId, seat: &SeatId) -> String {
    format!("{event}#{seat}")
}

impl Crowd {
    /// See [`RefusalMemory::refuse`].
    pub(super) fn refuse(
        &self,
        event: &EventId,
        seat: &SeatId,
        claimant: &str,
        now: Millis,
    ) -> Option<SeatSeen> {
        let mut memory = lock(&self.0);
        let seen = memory.refuse(&seat_key(event, seat), claimant, now)?;
        memory.event_refused(event.as_str(), now);
        Some(seen)
    }

    /// See [`RefusalMemory::refused_exactly`].
    pub(super) fn refused_exactly(
        &self,
        event: &EventId,
        seat: &SeatId,
        holder: &str,
        seen: SeatSeen,
        now: Millis,
    ) {
        let mut memory = lock(&self.0);
        memory.refused_exactly(&seat_key(event, seat), holder, seen, now);
        memory.event_refused(event.as_str(), now);
    }

    /// See [`RefusalMemory::crowded`].
    pub(super) fn crowded(&self, event: &EventId, now: Millis) -> bool {
        lock(&self.0).crowded(event.as_str(), now)
    }

    /// See [`RefusalMemory::forget`].
    pub(super) fn forget(&self, event: &EventId, seat: &SeatId) {
        lock(&self.0).forget(&seat_key(event, seat));
    }
}
