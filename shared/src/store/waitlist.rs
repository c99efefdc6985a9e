//! The waitlist's state: read and written whole, over the version read
//! (put-waitlist, delete-waitlist).

use super::errors::conditional;
use super::items::waitlist::{as_read, parse_waitlist, waitlist_item, waitlist_key};
use super::Store;
use crate::domain::waitlist::Waitlist;
use crate::domain::{EventId, EventRef};
use crate::error::Error;

pub use super::items::waitlist::{StoredWaitlist, WAITLIST_PK_PREFIX};

impl Store {
    /// The event's waitlist, read strongly consistently (`None`: never put).
    pub async fn read_waitlist(&self, event: &EventId) -> Result<Option<StoredWaitlist>, Error> {
        let item = self
            .get_consistent(waitlist_key(&EventRef::of(event)))
            .await?;
        Ok(item.as_ref().map(parse_waitlist).transpose()?)
    }

    /// Writes `waitlist` over the one read (`previous`: its version, or
    /// `None` if there was none): `false` if another write came first (the
    /// caller reads again).
    pub async fn put_waitlist(
        &self,
        event: &EventId,
        waitlist: &Waitlist,
        previous: Option<i64>,
    ) -> Result<bool, Error> {
        let version = previous.map_or(1, |v| v + 1);
        let put = self
            .client
            .put_item()
            .table_name(&*self.table)
            .set_item(Some(waitlist_item(event, waitlist, version)));
        conditional(as_read(previous).on_put_item(put).send().await, "PutItem")
    }
}
