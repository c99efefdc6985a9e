//! The waitlist's state: read and written whole, over the version read
//! (put-waitlist, delete-waitlist, the projector's opening at a sell-out),
//! on the main item and every copy in one transaction; the sale's gate
//! reads a copy.

use super::items::queue::QUEUE_COPIES;
use super::items::registry::{list_event, Registry};
use super::items::waitlist::{
    as_read, ended, older_copy, parse_waitlist, waitlist_copy_key, waitlist_item, waitlist_key,
};
use super::Store;
use crate::domain::waitlist::Waitlist;
use crate::domain::{EventId, EventRef};
use crate::error::Error;

pub use super::items::waitlist::{StoredWaitlist, WAITLIST_PK_PREFIX};

impl Store {
    /// The event's waitlist, read strongly consistently (`None`: never put).
    pub async fn read_waitlist(&self, event: &EventId) -> Result<Option<StoredWaitlist>, Error> {
        self.read_waitlist_of(&EventRef::of(event)).await
    }

    /// [`Store::read_waitlist`] by the event's reference (the stream's
    /// records name an event by it; the item names its event).
    pub async fn read_waitlist_of(
        &self,
        event: &EventRef,
    ) -> Result<Option<StoredWaitlist>, Error> {
        let item = self.get_consistent(waitlist_key(event)).await?;
        Ok(item.as_ref().map(parse_waitlist).transpose()?)
    }

    /// [`Store::read_waitlist_of`] from copy `copy`, eventually consistent:
    /// what the projector looks at after each batch, spread over the copies
    /// at half a strongly consistent read's cost (its write is conditioned
    /// on the version it read, so a copy that lags only costs a round).
    pub async fn read_waitlist_copy_of(
        &self,
        event: &EventRef,
        copy: u8,
    ) -> Result<Option<StoredWaitlist>, Error> {
        let item = self.get_item(waitlist_copy_key(event, copy), false).await?;
        Ok(item.as_ref().map(parse_waitlist).transpose()?)
    }

    /// The waitlist's state from copy `copy` (eventually consistent; an
    /// instance reuses it for a queue's cache time). No copy means no
    /// waitlist: every write of the state writes every copy with it.
    pub async fn waitlist_copy(
        &self,
        event: &EventId,
        copy: u8,
    ) -> Result<Option<Waitlist>, Error> {
        let event = EventRef::of(event);
        let read = self.read_waitlist_copy_of(&event, copy).await?;
        Ok(read.map(|stored| stored.waitlist))
    }

    /// Writes `waitlist` over the one read (`previous`: its version, or
    /// `None` if there was none), on the main item and every copy in one
    /// transaction, with the offerer's registry when `listing` says so
    /// (`List`: a put; a delete and an opening leave it): `false` if
    /// another write came first (the caller reads again).
    pub async fn put_waitlist(
        &self,
        event: &EventId,
        waitlist: &Waitlist,
        previous: Option<i64>,
        listing: Listing,
    ) -> Result<bool, Error> {
        let version = previous.map_or(1, |v| v + 1);
        let event_ref = EventRef::of(event);
        let mut items = vec![self.txn_put(
            waitlist_item(waitlist_key(&event_ref), event, waitlist, version),
            as_read(previous),
        )?];
        for copy in 0..QUEUE_COPIES {
            items.push(self.txn_put(
                waitlist_item(
                    waitlist_copy_key(&event_ref, copy),
                    event,
                    waitlist,
                    version,
                ),
                older_copy(version),
            )?);
        }
        if listing == Listing::List {
            let listed = list_event(event, true);
            items.push(self.txn_update(Registry::Waitlists.key(), listed)?);
        }
        self.state_txn(items).await
    }

    /// Takes `event` off the offerer's registry once its waitlist's
    /// generation `generation` is deleted and counted no more, checked on
    /// the main item in the same transaction (a put since lists it again):
    /// `false` if it was not so.
    pub async fn unlist_ended_waitlist(
        &self,
        event: &EventId,
        generation: u64,
    ) -> Result<bool, Error> {
        let items = vec![
            self.txn_update(Registry::Waitlists.key(), list_event(event, false))?,
            self.txn_check(waitlist_key(&EventRef::of(event)), ended(generation))?,
        ];
        self.state_txn(items).await
    }
}

/// What a write of a waitlist's state does to the offerer's registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listing {
    /// Lists the event (a put: every put, so a waitlist put before the
    /// registry existed is listed at its next put).
    List,
    /// Leaves the registry alone: the opening at a sell-out, and a delete
    /// (the offerer keeps the counts of a deleted waitlist for a while,
    /// then takes it off: [`Store::unlist_ended_waitlist`]).
    Keep,
}
