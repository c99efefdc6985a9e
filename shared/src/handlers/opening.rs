//! A waitlist armed for a sell-out, opened once the event is seen with
//! nothing available (API.md, "Opening, and the waitlist-only sale"):
//! looked at by project-seat-map after each batch that took seats or
//! places, and by put-waitlist right after it arms one (the last sale may
//! have been projected before the put's copies showed it: each side
//! writes its own item and then reads the other's).

use crate::domain::waitlist::Waitlist;
use crate::domain::EventRef;
use crate::error::Error;
use crate::retry::{Rounds, QUEUE_WRITE_ROUNDS};
use crate::store::{Listing, StoredWaitlist};
use crate::Store;

/// Where a look starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Look {
    /// A copy of the state the caller read, eventually consistent: the
    /// projector's, after every batch of an on-sale.
    Copy(StoredWaitlist),
    /// The item itself, strongly consistent: put-waitlist's, over its own
    /// write.
    Item,
}

/// Opens `event`'s waitlist if it is armed for a sell-out and the seat
/// map, read strongly consistently (a batch's own writes must show), shows
/// nothing available now: the waitlist as opened, or `None` if it was not
/// opened here. A round after a lost write reads the item itself.
pub(super) async fn open_if_sold_out(
    store: &Store,
    event: &EventRef,
    first: Look,
) -> Result<Option<Waitlist>, Error> {
    let mut rounds = Rounds::new("waitlist opening", QUEUE_WRITE_ROUNDS);
    let mut copy = match first {
        Look::Copy(read) => Some(read),
        Look::Item => None,
    };
    while rounds.next().await.is_some() {
        let read = match copy.take() {
            Some(read) => Some(read),
            None => store.read_waitlist_of(event).await?,
        };
        let Some(stored) = read else {
            return Ok(None);
        };
        if !stored.waitlist.opens_at_sell_out() {
            return Ok(None);
        }
        let plan_copy = Store::pick_plan_copy();
        let Some(plan) = store.ready_event(&stored.event_id, plan_copy).await? else {
            return Ok(None);
        };
        let read = store.seat_map_rows(&plan, true).await?;
        let now = crate::world::now();
        let map = crate::domain::seat_map(&plan, &read.rows, &read.buckets, now);
        if map.available_but_wheelchair_spaces() > 0 {
            return Ok(None);
        }
        let opened = stored.waitlist.opened(now);
        if store
            .put_waitlist(
                &stored.event_id,
                &opened,
                Some(stored.version),
                Listing::Keep,
            )
            .await?
        {
            tracing::info!(event_id = %stored.event_id, "waitlist opened at a sell-out");
            return Ok(Some(opened));
        }
        // A put or a delete came first: look again.
        rounds.lost();
    }
    Err(rounds.spent())
}
