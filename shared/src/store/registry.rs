//! The registries' reads: the events a scheduled function visits.

use super::items::registry::{Registry, EVENTS};
use super::value::Fields;
use super::Store;
use crate::domain::EventId;
use crate::error::Error;

impl Store {
    /// The events with a queue (the admitter visits each).
    pub async fn queued_events(&self) -> Result<Vec<EventId>, Error> {
        self.listed_events(Registry::Queues).await
    }

    /// The events with a waitlist not deleted, or deleted and still
    /// counted (the offerer visits each).
    pub async fn waitlisted_events(&self) -> Result<Vec<EventId>, Error> {
        self.listed_events(Registry::Waitlists).await
    }

    /// The events `registry` lists, read strongly consistently.
    async fn listed_events(&self, registry: Registry) -> Result<Vec<EventId>, Error> {
        let Some(item) = self.get_consistent(registry.key()).await? else {
            return Ok(Vec::new());
        };
        let ids = match item.get(EVENTS) {
            Some(_) => Fields::new(&item).string_set(EVENTS)?,
            None => Vec::new(),
        };
        Ok(ids
            .iter()
            .filter_map(|id| EventId::parse(id).ok())
            .collect())
    }
}
