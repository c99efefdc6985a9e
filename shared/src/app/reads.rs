//! The reads every route shares, each through the instance's memory: one
//! question before the store call (kept, and young enough?) and one report
//! after it (keep what was read). The store reads; the memory keeps; only
//! here do the two meet for a read.

use std::collections::HashSet;
use std::sync::Arc;

use super::App;
use crate::domain::queue_state::QueueState;
use crate::domain::waitlist::Waitlist;
use crate::domain::waitlist_positions::Positions;
use crate::domain::{Event, EventHead, EventId, EventStatus, Millis, Order, SectionId};
use crate::error::Error;
use crate::memory::Recall;
use crate::store::{MapRead, SectionRuns};

impl App {
    /// A ready event's head, or `None`; kept once read.
    pub async fn event_head(&self, event: &EventId) -> Result<Option<Arc<EventHead>>, Error> {
        if let Some(kept) = self.memory.event_head(event) {
            return Ok(Some(kept));
        }
        let Some(head) = self.store.ready_event_head(event).await? else {
            return Ok(None);
        };
        let head = Arc::new(head);
        self.memory.keep_event_head(event, head.clone());
        Ok(Some(head))
    }

    /// A ready event with its plan (this instance's copy of it), or
    /// `None`; kept once read.
    pub async fn event(&self, event: &EventId) -> Result<Option<Arc<Event>>, Error> {
        let plan_copy = match self.memory.event(event) {
            Recall::Kept(kept) => return Ok(Some(kept)),
            Recall::ReadCopy(copy) => copy,
        };
        let Some(found) = self.store.ready_event(event, plan_copy).await? else {
            return Ok(None);
        };
        let found = Arc::new(found);
        self.memory.keep_event(event, found.clone());
        Ok(Some(found))
    }

    /// An event, ready or still being created, for get-event: a ready one
    /// from memory, else one strongly consistent read (kept if ready).
    pub async fn event_with_status(
        &self,
        event: &EventId,
    ) -> Result<Option<(Arc<Event>, EventStatus)>, Error> {
        let plan_copy = match self.memory.event(event) {
            Recall::Kept(kept) => return Ok(Some((kept, EventStatus::Ready))),
            Recall::ReadCopy(copy) => copy,
        };
        let Some((found, status)) = self.store.event_with_status(event, plan_copy).await? else {
            return Ok(None);
        };
        let found = Arc::new(found);
        if status == EventStatus::Ready {
            self.memory.keep_event(event, found.clone());
        }
        Ok(Some((found, status)))
    }

    /// The projection of every row of `event` and its general-admission
    /// buckets, and when they were read: kept for the seat-map time.
    pub async fn seat_map(&self, event: &Event) -> Result<(Millis, Arc<MapRead>), Error> {
        let now = crate::world::now();
        if let Some(kept) = self.memory.seat_map(&event.event_id, now) {
            return Ok(kept);
        }
        let read = Arc::new(self.store.seat_map_rows(event, false).await?);
        self.memory
            .keep_seat_map(&event.event_id, now, read.clone());
        Ok((now, read))
    }

    /// The run summaries of every seated section of `event`: kept for the
    /// seat-map time.
    pub async fn section_runs(&self, event: &Event) -> Result<Arc<SectionRuns>, Error> {
        let now = crate::world::now();
        if let Some(kept) = self.memory.section_runs(&event.event_id, now) {
            return Ok(kept);
        }
        let runs = Arc::new(self.store.section_runs(event).await?);
        self.memory
            .keep_section_runs(&event.event_id, now, runs.clone());
        Ok(runs)
    }

    /// The sections of `event` the stream has seen sold out for good: kept
    /// for the sold-out time.
    pub async fn sold_out_sections(
        &self,
        event: &EventId,
    ) -> Result<Arc<HashSet<SectionId>>, Error> {
        let now = crate::world::now();
        if let Some(kept) = self.memory.sold_out(event, now) {
            return Ok(kept);
        }
        let sections = Arc::new(self.store.sold_out_sections(event).await?);
        self.memory.keep_sold_out(event, now, sections.clone());
        Ok(sections)
    }

    /// The queue's state at `now` (`None`: no queue, or a generation past
    /// its end, which answers as a removed queue) as this instance last
    /// saw it, if within the queue's cache time; else read from this
    /// instance's copy, and kept.
    pub async fn queue(
        &self,
        event: &EventId,
        now: Millis,
    ) -> Result<Option<Arc<QueueState>>, Error> {
        let state = match self.memory.queue(event, now) {
            Recall::Kept(kept) => kept,
            Recall::ReadCopy(copy) => {
                let state = self.store.queue_copy(event, copy).await?.map(Arc::new);
                self.memory.remember_queue(event, now, state.clone());
                state
            }
        };
        Ok(state.filter(|s| !s.has_ended(now)))
    }

    /// The waitlist's state (`None`: none was ever put) as this instance
    /// last saw it, if within the cache time; else read from this
    /// instance's copy, and kept.
    pub async fn waitlist(
        &self,
        event: &EventId,
        now: Millis,
    ) -> Result<Option<Arc<Waitlist>>, Error> {
        match self.memory.waitlist(event, now) {
            Recall::Kept(kept) => Ok(kept),
            Recall::ReadCopy(copy) => {
                let state = self.store.waitlist_copy(event, copy).await?.map(Arc::new);
                self.memory.remember_waitlist(event, now, state.clone());
                Ok(state)
            }
        }
    }

    /// Generation `generation`'s positions of `event`'s waitlist, from
    /// this instance's copy (a second old at most, as the state's): `None`
    /// until the offerer's tick first keeps them.
    pub async fn positions(
        &self,
        event: &EventId,
        generation: u64,
        now: Millis,
    ) -> Result<Option<Arc<Positions>>, Error> {
        match self.memory.positions(event, generation, now) {
            Recall::Kept(kept) => Ok(kept),
            Recall::ReadCopy(copy) => {
                let read = self
                    .store
                    .read_positions(event, generation, Some(copy))
                    .await?;
                let positions = read.map(|stored| Arc::new(stored.positions));
                self.memory
                    .remember_positions(event, generation, now, positions.clone());
                Ok(positions)
            }
        }
    }

    /// Whether only the waitlist's offers take seats of `event` at `now`
    /// (API.md, "Opening, and the waitlist-only sale"), as this instance
    /// last read the waitlist.
    pub async fn is_waitlist_only(&self, event: &EventId, now: Millis) -> Result<bool, Error> {
        let waitlist = self.waitlist(event, now).await?;
        Ok(waitlist.is_some_and(|w| w.is_waitlist_only(now)))
    }

    /// `409 waitlist-only` if [`App::is_waitlist_only`]: the refusal of
    /// create-order and of every claim of more.
    pub async fn refuse_if_waitlist_only(&self, event: &EventId, now: Millis) -> Result<(), Error> {
        match self.is_waitlist_only(event, now).await? {
            true => Err(Error::WaitlistOnly {
                waitlist: crate::domain::waitlist::entries_path(event),
            }),
            false => Ok(()),
        }
    }

    /// `409 waitlist-only` for a claim of more by `order`: always for an
    /// offer (it holds what it was offered, from the first second of the
    /// waitlist it was made in), else while only offers take seats.
    pub async fn refuse_more_for(&self, order: &Order, now: Millis) -> Result<(), Error> {
        if order.offer.is_some() {
            return Err(Error::WaitlistOnly {
                waitlist: crate::domain::waitlist::entries_path(&order.event_id),
            });
        }
        self.refuse_if_waitlist_only(&order.event_id, now).await
    }
}
