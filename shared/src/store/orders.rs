//! Orders: create one (plain, or opened under an admission and counted
//! against it, in one transaction), read one, strongly consistent, and
//! after creation extend or cancel one (each one transaction over the
//! order as read, its version, and its holds). What an order holds
//! changes through `holds.rs` (seats), `ga.rs` (places) and `confirm.rs`.

use super::errors::{build_error, sdk_error};
use super::failures::{admitted_order_failure, unavailable_in, AdmittedOrderFailure};
use super::items;
use super::items::order::{expired_order_ttl, order_key, parse_order, StoredOrder};
use super::items::seat::seat_key;
use super::items::visitor::{admission_key, VISITOR_RETENTION_SECONDS};
use super::schema::TOKEN_HASH;
use super::value::{Fields, Item};
use super::{Store, Txn};
use crate::domain::waitlist::EndReason;
use crate::domain::{EventRef, Millis, Order, OrderId, SeatId};
use crate::error::Error;
use crate::reason::Reason;
use aws_sdk_dynamodb::error::SdkError;
use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::{ReturnValuesOnConditionCheckFailure, TransactWriteItem};

/// Whether the order item `old` is `order` (the same token hash): a
/// retried create found its own write.
fn is_same_order(old: &Item, order: &Order) -> bool {
    Fields::new(old).opt_s(TOKEN_HASH) == Some(order.token_hash.as_str())
}

impl Store {
    // ----- orders -------------------------------------------------------

    /// Writes a new PENDING order by `UpdateItem` (IAM holds create-order
    /// to the attributes a new order has): `true`. An order of the same id
    /// that is there already with the same token hash (an id derived from
    /// an `Idempotency-Key`, or the SDK's retry of a write that landed) is
    /// left as it is: `false`.
    pub async fn create_order(&self, order: &Order) -> Result<bool, Error> {
        let update = self
            .client
            .update_item()
            .table_name(&*self.table)
            .set_key(Some(order_key(&order.order_id)))
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
        let update = items::order::create(order)
            .on_update_item(update)
            .send()
            .await;
        match update {
            Ok(_) => Ok(true),
            // The item there is ours (same token hash): the order exists.
            Err(SdkError::ServiceError(ctx))
                if matches!(ctx.err(), UpdateItemError::ConditionalCheckFailedException(c)
                    if c.item().is_some_and(|old| is_same_order(old, order))) =>
            {
                Ok(false)
            }
            Err(e) => Err(sdk_error("UpdateItem", e).into()),
        }
    }

    /// Writes a new PENDING order opened under an admission, and
    /// counts it against the admission's `allowed` orders, in one
    /// transaction. An order of the same id that is there already (a
    /// retry under the same `Idempotency-Key`) is the answer if it is
    /// this one (same token hash), and is not counted again: `false`;
    /// `409 admission-used` once the admission opened all it may.
    pub async fn create_admitted_order(
        &self,
        order: &Order,
        admission_id: &str,
        allowed: u32,
        admission_expires_at: Millis,
    ) -> Result<bool, Error> {
        let ttl = admission_expires_at.0 / 1_000 + VISITOR_RETENTION_SECONDS;
        let items = vec![
            self.txn_update(order_key(&order.order_id), items::order::create(order))?,
            self.txn_update(
                admission_key(admission_id),
                items::visitor::open_under(allowed, ttl),
            )?,
        ];
        match self.transact(items).await? {
            Txn::Committed => Ok(true),
            Txn::Cancelled(reasons) => match admitted_order_failure(&reasons)? {
                AdmittedOrderFailure::Exists(Some(old)) if is_same_order(&old, order) => Ok(false),
                AdmittedOrderFailure::Exists(_) => {
                    Err(Error::Unauthorized(Reason::AdmissionOrderExists))
                }
                AdmittedOrderFailure::AdmissionUsed => Err(Error::AdmissionUsed),
            },
        }
    }

    /// One strongly consistent read of an order.
    pub async fn get_order(&self, order: &OrderId) -> Result<Option<StoredOrder>, Error> {
        Ok(self
            .get_consistent(order_key(order))
            .await?
            .as_ref()
            .map(parse_order)
            .transpose()?)
    }
}

// ----- after creation: extend-order, cancel-order -------------------------

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
        items.extend(self.extend_places(order, expires_at, now)?);
        // Its units count until the new expiry.
        items.extend(self.buyer_order_item(order, now, |id| items::buyer::extend(id, expires_at))?);
        for seat in &order.seats {
            let extend = items::seat::extend_held(&order.order_id, expires_at, now)
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
        offer_end: Option<EndReason>,
    ) -> Result<bool, Error> {
        let order = &stored.order;
        let event = EventRef::of(&order.event_id);
        let record = items::order::cancel(order.status, stored.version, now, offer_end)
            .on_update(self.update(order_key(&order.order_id)))
            .build()
            .map_err(build_error("TransactWriteItems"))?;
        let mut items = vec![TransactWriteItem::builder().update(record).build()];
        let release: &[SeatId] = if live { &order.seats } else { &[] };
        if live {
            items.extend(self.give_back_all(order, now)?);
        }
        // Its units stop counting against its buyer at once.
        items.extend(self.buyer_order_item(order, now, items::buyer::release_order)?);
        // A live offer's end, for the waitlist's counts (one past its
        // expiry had ended by then).
        if offer_end.is_some_and(|reason| reason != EndReason::OfferExpired) {
            items.extend(self.offer_end(order, false, true)?);
        }
        for seat in release {
            items.push(self.release_item(&event, order, seat, now)?);
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
