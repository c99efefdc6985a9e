//! One function instance's memory of the seats it keeps refusing (the
//! rules: [`crate::domain::crowd`]), shared by its concurrent requests.

use std::sync::{Arc, Mutex};

use super::lock;

use crate::domain::crowd::{Recalled, RefusalMemory, SeatSeen};
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
        lock(&self.0).refuse(&seat_key(event, seat), claimant, now)
    }

    /// See [`RefusalMemory::recall`].
    pub(super) fn recall(
        &self,
        event: &EventId,
        seat: &SeatId,
        claimant: &str,
        now: Millis,
    ) -> Recalled {
        lock(&self.0).recall(&seat_key(event, seat), claimant, now)
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
        lock(&self.0).refused_exactly(&seat_key(event, seat), holder, seen, now);
    }

    /// See [`RefusalMemory::forget`].
    pub(super) fn forget(&self, event: &EventId, seat: &SeatId) {
        lock(&self.0).forget(&seat_key(event, seat));
    }
}
