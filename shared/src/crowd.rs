//! One function instance's memory of the seats it keeps refusing (the
//! rules: [`crate::domain::crowd`]), shared by its concurrent requests.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::domain::crowd::{RefusalMemory, SeatSeen};
use crate::domain::{EventId, Millis, SeatId};

/// Clones share one memory: they are the same instance's.
#[derive(Debug, Default, Clone)]
pub struct Crowd(Arc<Mutex<RefusalMemory>>);

/// The memory's key for a seat: one event's seat.
fn seat_key(event: &EventId, seat: &SeatId) -> String {
    format!("{event}#{seat}")
}

impl Crowd {
    fn memory(&self) -> MutexGuard<'_, RefusalMemory> {
        // A panic while the lock was held cannot leave the memory unsafe
        // to read (at worst a refusal is not remembered): carry on.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// See [`RefusalMemory::refuse`].
    pub fn refuse(
        &self,
        event: &EventId,
        seat: &SeatId,
        claimant: &str,
        now: Millis,
    ) -> Option<SeatSeen> {
        let mut memory = self.memory();
        let seen = memory.refuse(&seat_key(event, seat), claimant, now)?;
        memory.event_refused(event.as_str(), now);
        Some(seen)
    }

    /// See [`RefusalMemory::refused_exactly`].
    pub fn refused_exactly(
        &self,
        event: &EventId,
        seat: &SeatId,
        holder: &str,
        seen: SeatSeen,
        now: Millis,
    ) {
        let mut memory = self.memory();
        memory.refused_exactly(&seat_key(event, seat), holder, seen, now);
        memory.event_refused(event.as_str(), now);
    }

    /// See [`RefusalMemory::crowded`].
    pub fn crowded(&self, event: &EventId, now: Millis) -> bool {
        self.memory().crowded(event.as_str(), now)
    }

    /// See [`RefusalMemory::forget`].
    pub fn forget(&self, event: &EventId, seat: &SeatId) {
        self.memory().forget(&seat_key(event, seat));
    }
}
