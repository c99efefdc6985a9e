//! Returns' store calls (API.md, "Returns"): an order's listings read in
//! one strongly consistent Query; a listing in one transaction with the
//! seller's order (completed, marked as having listings), each seat's
//! resale item (what the offerer reads) and a check that the waitlist is
//! the open generation still taking returns (on the copy of its state the
//! order's id picks: every write of the state writes every copy, and the
//! listings of a return rush spread over them); a withdrawal over the
//! version read, with its resale item while no live offer holds it.

use super::items::order::order_key;
use super::items::resale::{
    list, list_places, listed_at, listed_seats_of, parse_listed_places, parse_listed_seat,
    parse_listed_unit, parse_on_offer, parse_seat_item, places_as_read, resale_key, unheld,
    unit_resale_key, OnOffer,
};
use super::items::returns::{listings_of, mark_order, parse_listing, return_key};
use super::items::waitlist::{copy_for, taking_returns, waitlist_copy_key};
use super::Store;
use crate::domain::returns::{
    ListedPlaces, ListedSeat, ListedUnit, Listing, ListingWrite, PlacesItemRead, PlacesResale,
    ReturnUnit, Seller,
};
use crate::domain::{EventId, EventRef, Millis, Order, OrderId, SeatId, SectionId};
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
                waitlist_copy_key(&EventRef::of(event), copy_for(id.as_str())),
                taking_returns(generation, now),
            )?,
        ];
        let seller = Seller::of(order);
        for write in writes {
            let listed = super::items::returns::list(event, id, write, generation, closes_at, now);
            items.push(self.txn_update(return_key(id, &write.unit), listed)?);
            // What the offerer offers a unit from, and the tick reverts.
            let resale = match &write.unit {
                ReturnUnit::Seat(seat) => list(&seller, seat, generation, now),
                ReturnUnit::Places(section) => {
                    // Unplanned, as a new item: a listing over one that
                    // exists is refused by its condition, never written.
                    let new = PlacesResale::New {
                        quantity: write.quantity,
                    };
                    let resale = write.places.as_ref().unwrap_or(&new);
                    list_places(&seller, section, resale, generation, now)
                }
            };
            let key = unit_resale_key(&EventRef::of(event), id, &write.unit);
            items.push(self.txn_update(key, resale)?);
        }
        self.state_txn(items).await
    }

    /// Every listing of `event`, seats and places, with the offers holding
    /// them, strongly consistent, in one Query: what the offerer may
    /// offer.
    pub async fn listings_on_offer(
        &self,
        event: &EventId,
    ) -> Result<(Vec<ListedSeat>, Vec<ListedPlaces>), Error> {
        let key = listed_seats_of(&EventRef::of(event));
        let items = self.query_every_page(key, true, parse_on_offer).await?;
        let (mut seats, mut places) = (Vec::new(), Vec::new());
        for item in items {
            match item {
                OnOffer::Seat(seat) => seats.push(seat),
                OnOffer::Places(listed) => places.push(listed),
            }
        }
        Ok((seats, places))
    }

    /// Every seat of `event` listed for resale, with the offer holding
    /// each, strongly consistent: what the offerer may offer.
    pub async fn listed_seats(&self, event: &EventId) -> Result<Vec<ListedSeat>, Error> {
        let key = listed_seats_of(&EventRef::of(event));
        let items = self.query_every_page(key, true, parse_seat_item).await?;
        Ok(items.into_iter().flatten().collect())
    }

    /// Every listing of `event` as its resale item has it, strongly
    /// consistent: what the tick reverts at the cutoff.
    pub async fn listed_units(&self, event: &EventId) -> Result<Vec<ListedUnit>, Error> {
        let key = listed_seats_of(&EventRef::of(event));
        self.query_every_page(key, true, parse_listed_unit).await
    }

    /// Writes `listed`'s revert at `now`: its listing `REVERTED` and its
    /// resale item gone, in one transaction, while it is the listing made
    /// then, still `LISTED` and unheld (`false`: it moved; the next
    /// round's read says what it is now).
    pub async fn revert_listing(
        &self,
        event: &EventId,
        listed: &ListedUnit,
        now: Millis,
    ) -> Result<bool, Error> {
        let revert = super::items::returns::revert(listed.listed_at, now);
        let resale = unit_resale_key(&EventRef::of(event), &listed.seller, &listed.unit);
        let as_read = match (&listed.unit, listed.version) {
            (ReturnUnit::Places(_), Some(version)) => places_as_read(PlacesItemRead::At(version)),
            _ => unheld(now),
        };
        let items = vec![
            self.txn_update(return_key(&listed.seller, &listed.unit), revert)?,
            self.txn_delete_if(resale, listed_at(listed.listed_at).and(as_read))?,
        ];
        self.state_txn(items).await
    }

    /// `seat`'s resale item, strongly consistent (`None`: not listed).
    pub async fn listed_seat(
        &self,
        event: &EventId,
        seat: &SeatId,
    ) -> Result<Option<ListedSeat>, Error> {
        let key = resale_key(&EventRef::of(event), seat);
        let item = self.get_item(key, true).await?;
        Ok(item.as_ref().map(parse_listed_seat).transpose()?)
    }

    /// `seller`'s listed places of `section` as their resale item counts
    /// them, strongly consistent (`None`: no item).
    pub async fn listed_places(
        &self,
        event: &EventId,
        seller: &OrderId,
        section: &SectionId,
    ) -> Result<Option<ListedPlaces>, Error> {
        let unit = ReturnUnit::Places(section.clone());
        let key = unit_resale_key(&EventRef::of(event), seller, &unit);
        let item = self.get_item(key, true).await?;
        Ok(item.as_ref().map(parse_listed_places).transpose()?)
    }

    /// Withdraws `unit`'s listing of `order` at `now`, over `version` (the
    /// one read, which read `LISTED`), and for places over their resale
    /// item as read (`places_item`): `false` if anything moved since.
    pub async fn withdraw_listing(
        &self,
        order: &Order,
        unit: &ReturnUnit,
        version: u64,
        places_item: PlacesItemRead,
        now: Millis,
    ) -> Result<bool, Error> {
        let withdrawn = super::items::returns::withdraw(version, now);
        let key = return_key(&order.order_id, unit);
        // With its resale item, while no live offer holds it.
        let resale = unit_resale_key(&EventRef::of(&order.event_id), &order.order_id, unit);
        let mut items = vec![self.txn_update(key, withdrawn)?];
        items.push(match unit {
            ReturnUnit::Seat(_) => self.txn_delete_if(resale, unheld(now))?,
            ReturnUnit::Places(_) if places_item == PlacesItemRead::Absent => {
                return self.state_txn(items).await
            }
            ReturnUnit::Places(_) => self.txn_delete_if(resale, places_as_read(places_item))?,
        });
        self.state_txn(items).await
    }
}
