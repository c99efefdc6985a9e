//! The sweep's store calls: the pending index by expiry, conditional
//! releases, retiring swept orders.

use super::errors::{conditional, sdk_error, StoreError};
use super::items;
use super::items::order::{order_key, shard_key, StoredOrder, ORDER_PK_PREFIX};
use super::items::seat::seat_key;
use super::schema::{PENDING_INDEX, PK};
use super::value::{Fields, Item};
use super::Store;
use crate::domain::{EventRef, Millis, OrderId, OrderStatus, SeatId};
use crate::error::Error;

/// Where the next page of a query starts (opaque outside the store).
#[derive(Debug, Clone)]
pub struct PageCursor(Item);

impl Store {
    // ----- the sweep ---------------------------------------------------------

    /// Orders in one shard of the pending index whose expiry has passed:
    /// one `Query` per page, reading only expired entries (no Scan). The
    /// index projects keys only; the sweep reads each order item itself.
    pub async fn expired_orders(
        &self,
        shard: u8,
        now: Millis,
        limit: i32,
        start: Option<PageCursor>,
    ) -> Result<(Vec<OrderId>, Option<PageCursor>), Error> {
        let query = self
            .client
            .query()
            .table_name(&*self.table)
            .index_name(PENDING_INDEX);
        let out = items::event::due_in_shard(shard_key(shard), now)
            .on_query(query)
            .limit(limit)
            .set_exclusive_start_key(start.map(|c| c.0))
            .send()
            .await
            .map_err(|e| sdk_error("Query", e))?;
        let next = out.last_evaluated_key.map(PageCursor);
        let orders = out
            .items
            .unwrap_or_default()
            .iter()
            .map(|item| {
                let f = Fields::new(item);
                f.str(PK)?
                    .strip_prefix(ORDER_PK_PREFIX)
                    .and_then(|id| OrderId::parse(id).ok())
                    .ok_or_else(|| f.malformed(PK))
            })
            .collect::<Result<_, StoreError>>()?;
        Ok((orders, next))
    }

    /// Releases `seat` only if it is still HELD by `order` (a seat already
    /// re-claimed or sold is left alone). True if this call released it.
    pub async fn release_expired_hold(
        &self,
        event: &EventRef,
        seat: &SeatId,
        order: &OrderId,
        now: Millis,
    ) -> Result<bool, Error> {
        let request = self
            .client
            .update_item()
            .table_name(&*self.table)
            .set_key(Some(seat_key(event, seat)));
        let result = items::seat::release_held(order, now)
            .on_update_item(request)
            .send()
            .await;
        conditional(result, "UpdateItem")
    }

    /// Takes a swept order out of the pending index, if it is still as
    /// read (`version`): a PENDING one becomes EXPIRED (only if expired),
    /// another keeps its status. True if this call made the change (a
    /// concurrent sweep or confirm may have got there first).
    pub async fn retire_expired_order(
        &self,
        stored: &StoredOrder,
        now: Millis,
    ) -> Result<bool, Error> {
        let order = &stored.order;
        let request = self
            .client
            .update_item()
            .table_name(&*self.table)
            .set_key(Some(order_key(&order.order_id)));
        let retire = if order.status == OrderStatus::Pending {
            items::order::expire(stored.version, now)
        } else {
            items::order::leave_index(order.status, stored.version)
        };
        let request = retire.on_update_item(request);
        conditional(request.send().await, "UpdateItem")
    }
}
