//! A waitlist's offer, written in one transaction (API.md, "Offers"): the
//! new order already holding its seats, each seat's claim, the entry's
//! move from WAITING to OFFERED, and its places in the indexes it waited
//! in. No seat is in two offers and no entry has two: any of them moved
//! since the offerer's look cancels the whole, and it looks again.

use super::failures::unavailable_in;
use super::items;
use super::items::entry::{entry_key, index_keys, offer_made};
use super::items::order::{create_offer, order_key};
use super::items::seat::{seat_key, FreeFor};
use super::{Store, Txn};
use crate::domain::waitlist_entry::Entry;
use crate::domain::{EventRef, Millis, Order};
use crate::error::Error;

/// How an offer's transaction ended, short of a fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OfferWrite {
    Made,
    /// A seat was taken, or the entry moved (left, removed, offered by
    /// another offerer), since the look: look again.
    Lost,
}

impl Store {
    /// Offers `order` (a new PENDING order of `entry`'s buyer holding its
    /// seats) to the waiting `entry` at `now`, in one transaction.
    pub async fn make_offer(
        &self,
        entry: &Entry,
        order: &Order,
        now: Millis,
    ) -> Result<OfferWrite, Error> {
        let event = EventRef::of(&order.event_id);
        let mut writes = vec![
            self.txn_update(order_key(&order.order_id), create_offer(order))?,
            self.txn_update(
                entry_key(&event, &entry.entry_id),
                offer_made(&order.order_id, now),
            )?,
        ];
        for place in index_keys(&event, entry) {
            writes.push(self.txn_delete(place)?);
        }
        for seat in &order.seats {
            let claim =
                items::seat::claim(&order.order_id, order.expires_at, FreeFor::Another, now);
            writes.push(self.txn_update(seat_key(&event, seat), claim)?);
        }
        match self.transact(writes).await? {
            Txn::Committed => Ok(OfferWrite::Made),
            Txn::Cancelled(reasons) => match unavailable_in("offer", &reasons) {
                Some(e) => Err(e),
                None => Ok(OfferWrite::Lost),
            },
        }
    }
}
