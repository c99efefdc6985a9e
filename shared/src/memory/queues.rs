//! An instance's memory of each queue: its state as last read from this
//! instance's copy (or as this instance last wrote it), and the version
//! over which an on-the-spot admission last lost its race here.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::states::StateReads;
use super::{lock, Memory, Recall};
use crate::domain::queue_state::QueueState;
use crate::domain::{EventId, Millis};

/// Each queue's last read here, and the version at which an on-the-spot
/// admission last lost its race here.
#[derive(Debug, Default)]
pub(super) struct QueueMemory {
    reads: StateReads<QueueState>,
    spot_refused_at: Mutex<HashMap<EventId, i64>>,
}

impl Memory {
    /// The queue's state as this instance last saw it (`Kept(None)`: no
    /// queue), if that was less than the queue's cache time before `now`;
    /// else the copy of the queue's state to read.
    pub fn queue(&self, event: &EventId, now: Millis) -> Recall<Option<Arc<QueueState>>> {
        let (cache_ms, copy) = (self.state_cache_ms, self.state_copy);
        self.queues.reads.recall(event, now, cache_ms, copy)
    }

    /// Keeps `state` as this instance's view of the queue from `now`: what
    /// it just read, or what it just wrote (so its own next request sees
    /// its own change at once).
    pub fn remember_queue(&self, event: &EventId, now: Millis, state: Option<Arc<QueueState>>) {
        self.queues.reads.keep(event, now, state);
    }

    /// Whether a joiner on this instance may try an on-the-spot admission
    /// over `version`: not if one already lost its race over that version
    /// here. A copy lags the main item (a joiner admitted on the spot
    /// writes only the main item), so without this every join in a
    /// crowd's first second would be a failed write on the queue's one
    /// key; with it, each instance fails at most once per version.
    pub fn may_admit_on_join(&self, event: &EventId, version: i64) -> bool {
        lock(&self.queues.spot_refused_at).get(event) != Some(&version)
    }

    /// Remembers that an on-the-spot admission over `version` lost its race.
    pub fn refuse_admit_on_join(&self, event: &EventId, version: i64) {
        lock(&self.queues.spot_refused_at).insert(event.clone(), version);
    }
}
