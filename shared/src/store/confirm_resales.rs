//! confirm's writes of a resale (API.md, "Returns"): what an offer's
//! payment writes beside the sale for the listed seats and places it
//! holds: the seat moved or the places sold on their listing, each
//! seller's listing resold, and each limited seller's record made
//! smaller.

use super::ConfirmTxn;
use crate::domain::buyer_limit::BuyerRef;
use crate::domain::ga::PlaceSale;
use crate::domain::returns::{ResaleHold, ReturnUnit};
use crate::domain::{EventRef, Millis, Order, PaymentId, SeatId};
use crate::error::Error;
use crate::store::failures::ConfirmRole;
use crate::store::items;
use crate::store::items::seat::seat_key;
use crate::store::Store;

impl Store {
    /// A listed seat `order` holds, resold to it in the sale's transaction:
    /// the seat moves from its seller's order to this one, the seller's
    /// listing reads `RESOLD` with the resale, and the resale item (which
    /// must still say this offer holds it) goes.
    pub(super) fn push_resale(
        &self,
        txn: &mut ConfirmTxn,
        event: &EventRef,
        order: &Order,
        resale: &ResaleHold,
        payment: &PaymentId,
        now: Millis,
    ) -> Result<(), Error> {
        let (id, seat) = (&order.order_id, &resale.seat);
        let moved = items::seat::resell(&resale.seller, id, payment, now);
        txn.push(
            ConfirmRole::Paid,
            self.txn_update(seat_key(event, seat), moved)?,
        );
        let held = items::resale::held_by(id);
        let resale_item = items::resale::resale_key(event, seat);
        txn.push(ConfirmRole::Paid, self.txn_delete_if(resale_item, held)?);
        let unit = ReturnUnit::Seat(seat.clone());
        let listing = items::returns::return_key(&resale.seller, &unit);
        let resold = items::returns::resell(id, payment, now);
        txn.push(ConfirmRole::Paid, self.txn_update(listing, resold)?);
        Ok(())
    }

    /// The listed places `order` (an offer) holds that `sales` sell,
    /// resold in the sale's transaction: each seller's listing that many
    /// fewer, and a record of the resale of its own (`RESOLD`, with the
    /// resale's order, payment and time). Their resale item sells them as
    /// a bucket does (`push_completion`).
    pub(super) fn push_place_resales(
        &self,
        txn: &mut ConfirmTxn,
        order: &Order,
        sales: &[PlaceSale],
        payment: &PaymentId,
        now: Millis,
    ) -> Result<(), Error> {
        for sale in sales.iter().filter(|sale| sale.sell > 0) {
            let Some(resale) = order.place_resale_of(&sale.section, sale.bucket) else {
                continue;
            };
            let unit = ReturnUnit::Places(sale.section.clone());
            let listing = items::returns::return_key(&resale.seller, &unit);
            let fewer = items::returns::resell_places(sale.sell, now);
            txn.push(ConfirmRole::Paid, self.txn_update(listing, fewer)?);
            let record = items::returns::PlacesResold {
                event: &order.event_id,
                seller: &resale.seller,
                unit: &unit,
                quantity: sale.sell,
                generation: resale.generation,
                listed_at: resale.listed_at,
                buyer: &order.order_id,
                payment,
            };
            let key = items::returns::resale_record_key(&resale.seller, &unit, &order.order_id);
            let written = items::returns::resold_places(&record, now);
            txn.push(ConfirmRole::Paid, self.txn_update(key, written)?);
        }
        Ok(())
    }

    /// Each limited seller's record, the `paid` seats and the places of
    /// `sales` it sold on resale taken out of its count (the buyer's
    /// record counts them now).
    pub(super) fn push_sellers(
        &self,
        txn: &mut ConfirmTxn,
        event: &EventRef,
        order: &Order,
        paid: &[SeatId],
        sales: &[PlaceSale],
    ) -> Result<(), Error> {
        let mut sellers: Vec<(&BuyerRef, u32)> = Vec::new();
        let seats = paid.iter().filter_map(|seat| order.resale_of(seat));
        let seats = seats.filter_map(|r| Some((r.seller_ref.as_ref()?, 1)));
        let places = sales.iter().filter_map(|sale| {
            let resale = order.place_resale_of(&sale.section, sale.bucket)?;
            Some((resale.seller_ref.as_ref()?, sale.sell))
        });
        for (seller, sold) in seats.chain(places).filter(|(_, sold)| *sold > 0) {
            match sellers.iter_mut().find(|(s, _)| *s == seller) {
                Some((_, units)) => *units += sold,
                None => sellers.push((seller, sold)),
            }
        }
        for (seller, units) in sellers {
            let record = items::buyer::record_key(event, seller);
            let update = items::buyer::resold_away(units);
            txn.push(ConfirmRole::Buyer, self.txn_update(record, update)?);
        }
        Ok(())
    }
}
