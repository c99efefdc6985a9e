//! An order's lifecycle after creation: extend-order and cancel-order, each
//! one transaction over the order as read (its version) and its holds.

use super::errors::build_error;
use super::failures::unavailable_in;
use super::items;
use super::items::order::{expired_order_ttl, order_key, StoredOrder};
use super::items::seat::seat_key;
use super::{Store, Txn};
use crate::domain::{EventRef, Millis, SeatId};
use crate::error::Error;
use aws_sdk_dynamodb::types::TransactWriteItem;

impl Store {
    /// extend-order: moves the order's expiry (with its holder deadline,
    /// its key in the pending index and its retention) and the expiry of
    /// every seat it holds to `expires_at`, in one transaction. The order
    /// must be as read (`version`: no seat came or went since), still
    /// outside its guard margin, and never move backwards. `Ok(false)`: it
    /// changed since it was read; read it again.
    pub async fn extend_order(
        &self,
        stored: &StoredOrder,
        expires_at: Millis,
        deadline: Millis,
        now: Millis,
    ) -> Result<bool, Error> {
        let order = &stored.order;
        let event = EventRef::of(&order.event_id);
        let record = items::order::extend(
            stored.version,
            expires_at,
            deadline,
            expired_order_ttl(expires_at),
            now,
        )
        .on_update(self.update(order_key(&order.order_id)))
        .build()
        .map_err(build_error("TransactWriteItems"))?;
        let mut items = vec![TransactWriteItem::builder().update(record).build()];
        items.extend(self.extend_places(order, expires_at)?);
        // Its units count until the new expiry.
        items.extend(self.buyer_order_item(order, now, |id| items::buyer::extend(id, expires_at))?);
        for seat in &order.seats {
            let extend = items::seat::extend_held(&order.order_id, expires_at)
                .on_update(self.update(seat_key(&event, seat)))
                .build()
                .map_err(build_error("TransactWriteItems"))?;
            items.push(TransactWriteItem::builder().update(extend).build());
        }
        self.decided("extend-order", items).await
    }

    /// cancel-order: the order becomes CANCELLED and leaves the pending
    /// index, if it is as read; while its holds count (`live`), its seats
    /// and places are released in the same transaction. `Ok(false)`: it
    /// changed since it was read; read it again.
    pub async fn cancel_order(
        &self,
        stored: &StoredOrder,
        live: bool,
        now: Millis,
    ) -> Result<bool, Error> {
        let order = &stored.order;
        let event = EventRef::of(&order.event_id);
        let record = items::order::cancel(order.status, stored.version)
            .on_update(self.update(order_key(&order.order_id)))
            .build()
            .map_err(build_error("TransactWriteItems"))?;
        let mut items = vec![TransactWriteItem::builder().update(record).build()];
        let release: &[SeatId] = if live { &order.seats } else { &[] };
        if live {
            items.extend(self.give_back_all(order)?);
        }
        // Its units stop counting against its buyer at once.
        items.extend(self.buyer_order_item(order, now, items::buyer::release_order)?);
        for seat in release {
            let free = items::seat::release_held(&order.order_id)
                .on_update(self.update(seat_key(&event, seat)))
                .build()
                .map_err(build_error("TransactWriteItems"))?;
            items.push(TransactWriteItem::builder().update(free).build());
        }
        self.decided("cancel-order", items).await
    }

    /// Runs a transaction over an order as read: committed is `true`; a
    /// failed condition or a conflict means the order moved on (`false`:
    /// read it again); throttling is a 503.
    async fn decided(
        &self,
        operation: &'static str,
        items: Vec<TransactWriteItem>,
    ) -> Result<bool, Error> {
        match self.transact(items).await? {
            Txn::Committed => Ok(true),
            Txn::Cancelled(reasons) => match unavailable_in(operation, &reasons) {
                Some(e) => Err(e),
                None => Ok(false),
            },
        }
    }
}
