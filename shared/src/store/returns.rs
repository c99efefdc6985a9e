//! Returns' store calls (API.md, "Returns"): an order's listings read in
//! one strongly consistent Query; a listing in one transaction with the
//! seller's order (completed, marked as having listings) and a check that
//! the waitlist is the open generation still taking returns; a withdrawal
//! over the version read.

use super::items::order::order_key;
use super::items::returns::{listings_of, mark_order, parse_listing, return_key};
use super::items::waitlist::{taking_returns, waitlist_key};
use super::Store;
use crate::domain::returns::{Listing, ListingWrite, ReturnUnit};
use crate::domain::{EventRef, Millis, Order, OrderId};
use crate::error::Error;

impl Store {
    /// Every listing of `order`, strongly consistent.
    pub async fn read_listings(&self, order: &OrderId) -> Result<Vec<Listing>, Error> {
        self.query_every_page(listings_of(order), true, parse_listing)
            .await
    }

    /// Writes `writes` (each over the version its plan read) for `order`
    /// under the waitlist's `generation` at `now`, their cutoff
    /// `closes_at`, in one transaction: `false` if anything moved since
    /// the read (a listing, the order, the waitlist).
    pub async fn list_returns(
        &self,
        order: &Order,
        writes: &[ListingWrite],
        generation: u64,
        closes_at: Millis,
        now: Millis,
    ) -> Result<bool, Error> {
        let (id, event) = (&order.order_id, &order.event_id);
        let mut items = vec![
            self.txn_update(order_key(id), mark_order())?,
            self.txn_check(
                waitlist_key(&EventRef::of(event)),
                taking_returns(generation, now),
            )?,
        ];
        for write in writes {
            let listed = super::items::returns::list(event, id, write, generation, closes_at, now);
            items.push(self.txn_update(return_key(id, &write.unit), listed)?);
        }
        self.state_txn(items).await
    }

    /// Withdraws `unit`'s listing of `order` at `now`, over `version` (the
    /// one read, which read `LISTED`): `false` if it moved since.
    pub async fn withdraw_listing(
        &self,
        order: &OrderId,
        unit: &ReturnUnit,
        version: u64,
        now: Millis,
    ) -> Result<bool, Error> {
        let withdrawn = super::items::returns::withdraw(version, now);
        self.update_if(return_key(order, unit), withdrawn).await
    }
}
