//! Whose turn it is to be visited in a run of the offerer: the listed
//! waitlists wait in a line, each joining its back at the first tick it is
//! neither waiting nor being visited, and [`VISITS_AT_ONCE`] are visited at
//! a time from its front. A waitlist being visited (a long look) is not
//! queued again until its visit ends, and none is passed over for ever:
//! whatever is not started at one tick keeps its place at the next.

use std::collections::{HashSet, VecDeque};

use crate::domain::EventId;

/// Waitlists visited at once: a look may take a second or two, and one
/// busy waitlist must not hold up the others' ticks.
pub(super) const VISITS_AT_ONCE: usize = 8;

/// The line of waitlists to visit, and those being visited.
#[derive(Debug, Default)]
pub(super) struct Turns {
    waiting: VecDeque<EventId>,
    visiting: HashSet<EventId>,
}

impl Turns {
    /// The registry listed `events` at a tick: those neither waiting nor
    /// being visited join the back of the line, in the registry's order;
    /// those no longer listed leave it.
    pub(super) fn listed(&mut self, events: &[EventId]) {
        let listed: HashSet<&EventId> = events.iter().collect();
        self.waiting.retain(|event| listed.contains(event));
        let queued: HashSet<EventId> = self.waiting.iter().cloned().collect();
        let joining = events
            .iter()
            .filter(|e| !queued.contains(*e) && !self.visiting.contains(*e));
        self.waiting.extend(joining.cloned());
    }

    /// The next waitlist to visit, if a visit may start: it is being
    /// visited from now.
    pub(super) fn start(&mut self) -> Option<EventId> {
        if self.visiting.len() >= VISITS_AT_ONCE {
            return None;
        }
        let event = self.waiting.pop_front()?;
        self.visiting.insert(event.clone());
        Some(event)
    }

    /// `event`'s visit ended.
    pub(super) fn ended(&mut self, event: &EventId) {
        self.visiting.remove(event);
    }

    /// Whether `event` is being visited.
    pub(super) fn visiting(&self, event: &EventId) -> bool {
        self.visiting.contains(event)
    }

    /// How many are being visited.
    pub(super) fn visits(&self) -> usize {
        self.visiting.len()
    }
}

#[cfg(test)]
#[path = "turns_tests.rs"]
mod tests;
