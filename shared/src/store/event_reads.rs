//! Reading events: the small head every request may need, the plan only
//! where it is needed (an instance keeps both once the event is ready, in
//! its memory: a ready event never changes, so neither is ever stale).
//!
//! Under a crowd (docs/API.md), an on-sale's first seconds start a
//! thousand fresh instances per function: each reads the head (under 1 KB,
//! eventually consistent, half a read unit) and, where it needs the plan,
//! one of [`PLAN_REPLICAS`] copies of it, its own pick, also eventually
//! consistent. An eventually consistent read may not see an item written
//! a moment ago: where it finds nothing (or an event not yet ready), the
//! strongly consistent read decides.

use super::errors::StoreError;
use super::items::event::{
    event_is_ready, event_key_of, legacy_plan_chunk_key, parse_event, parse_event_head,
    plan_chunk_count, plan_chunk_key, PLAN_HASH, PLAN_REPLICAS,
};
use super::value::{Fields, Item};
use super::Store;
use crate::domain::{Event, EventHead, EventId, EventRef, EventStatus};
use crate::error::Error;

/// How a plan's chunks are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PlanRead {
    /// The copy written with the event item, strongly consistent: for an
    /// event still being created, whose other copies may not exist yet.
    Primary,
    /// This instance's copy, eventually consistent (a miss falls back to
    /// the primary): for a ready event.
    Replica(u8),
}

impl Store {
    /// Picks the plan copy a new instance reads.
    pub fn pick_plan_copy() -> u8 {
        crate::world::random_u128().map_or(0, |r| (r % u128::from(PLAN_REPLICAS)) as u8)
    }

    /// A ready event's head, or `None`.
    pub async fn ready_event_head(&self, event: &EventId) -> Result<Option<EventHead>, Error> {
        match self.ready_head_item(event).await? {
            Some(item) => Ok(Some(parse_event_head(&item)?)),
            None => Ok(None),
        }
    }

    /// A ready event with its plan, read from copy `plan_copy`, or `None`.
    pub async fn ready_event(
        &self,
        event: &EventId,
        plan_copy: u8,
    ) -> Result<Option<Event>, Error> {
        let Some(item) = self.ready_head_item(event).await? else {
            return Ok(None);
        };
        let how = PlanRead::Replica(plan_copy);
        Ok(Some(
            self.read_plan(&EventRef::of(event), &item, how).await?,
        ))
    }

    /// An event, ready (its plan from copy `plan_copy`) or still being
    /// created, for get-event: one strongly consistent read of its item.
    pub async fn event_with_status(
        &self,
        event: &EventId,
        plan_copy: u8,
    ) -> Result<Option<(Event, EventStatus)>, Error> {
        let event_ref = EventRef::of(event);
        let item = match self.get_consistent(event_key_of(&event_ref)).await? {
            Some(item) if names(&item, event)? => item,
            _ => return Ok(None),
        };
        let (how, status) = match event_is_ready(&item) {
            true => (PlanRead::Replica(plan_copy), EventStatus::Ready),
            false => (PlanRead::Primary, EventStatus::Creating),
        };
        let found = self.read_plan(&event_ref, &item, how).await?;
        Ok(Some((found, status)))
    }

    /// The event item of `event` if it is ready: eventually consistent
    /// first, strongly consistent where that finds no ready event.
    async fn ready_head_item(&self, event: &EventId) -> Result<Option<Item>, Error> {
        let key = event_key_of(&EventRef::of(event));
        if let Some(item) = self.get_item(key.clone(), false).await? {
            if event_is_ready(&item) && names(&item, event)? {
                return Ok(Some(item));
            }
        }
        match self.get_consistent(key).await? {
            Some(item) if event_is_ready(&item) && names(&item, event)? => Ok(Some(item)),
            _ => Ok(None),
        }
    }

    /// An event from its item and its plan's chunks, read by key (at most
    /// a few: bodies are capped at 1 MiB). The primary copy is written with
    /// the event item and the others before it is ready, so they are there;
    /// an eventually consistent read that misses one asks the primary.
    pub(super) async fn read_plan(
        &self,
        event: &EventRef,
        item: &Item,
        how: PlanRead,
    ) -> Result<Event, Error> {
        let count = plan_chunk_count(item)?;
        let fingerprint = Fields::new(item).str(PLAN_HASH)?.to_owned();
        let legacy = super::items::event::is_legacy_event(item);
        let mut chunks = Vec::with_capacity(count);
        for chunk in usize::from(legacy)..count {
            let found = match (legacy, how) {
                (true, _) => {
                    self.get_consistent(legacy_plan_chunk_key(event, &fingerprint, chunk))
                        .await?
                }
                (false, PlanRead::Replica(replica)) => {
                    let copy = plan_chunk_key(event, &fingerprint, chunk, replica);
                    match self.get_item(copy, false).await? {
                        Some(found) => Some(found),
                        None => {
                            self.get_consistent(plan_chunk_key(event, &fingerprint, chunk, 0))
                                .await?
                        }
                    }
                }
                (false, PlanRead::Primary) => {
                    self.get_consistent(plan_chunk_key(event, &fingerprint, chunk, 0))
                        .await?
                }
            };
            chunks.push(found.ok_or_else(|| StoreError::Malformed {
                key: event.to_string(),
                problem: format!("plan chunk {chunk} missing"),
            })?);
        }
        Ok(parse_event(item, &chunks)?)
    }
}

/// Whether an event item is `event`'s (an event ref is a hash of the id:
/// two ids could share one).
fn names(item: &Item, event: &EventId) -> Result<bool, StoreError> {
    Ok(&parse_event_head(item)?.event_id == event)
}
