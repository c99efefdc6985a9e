//! Orders: create one (plain, or opened under an admission and counted
//! against it, in one transaction) and read one, strongly consistent. What
//! an order holds changes through `holds.rs` (seats), `ga.rs` (places),
//! `lifecycle.rs` (extend, cancel) and `confirm.rs`.

use super::errors::sdk_error;
use super::failures::{admitted_order_failure, AdmittedOrderFailure};
use super::items;
use super::items::order::{order_key, parse_order, StoredOrder};
use super::items::visitor::{admission_key, VISITOR_RETENTION_SECONDS};
use super::schema::TOKEN_HASH;
use super::value::{Fields, Item};
use super::{Store, Txn};
use crate::domain::{Millis, Order, OrderId};
use crate::error::Error;
use aws_sdk_dynamodb::error::SdkError;
use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::ReturnValuesOnConditionCheckFailure;

/// Whether the order item `old` is `order` (the same token hash): a
/// retried create found its own write.
fn is_same_order(old: &Item, order: &Order) -> bool {
    Fields::new(old).opt_s(TOKEN_HASH) == Some(order.token_hash.as_str())
}

impl Store {
    // ----- orders -------------------------------------------------------

    /// Writes a new PENDING order (its id is fresh; the condition only
    /// guards against the impossible collision), by `UpdateItem`: IAM holds
    /// create-order to the attributes a new order has.
    pub async fn create_order(&self, order: &Order) -> Result<(), Error> {
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
            Ok(_) => Ok(()),
            // The SDK retried a write whose first attempt had landed: the
            // item there is ours (same token hash), so the order exists as
            // asked.
            Err(SdkError::ServiceError(ctx))
                if matches!(ctx.err(), UpdateItemError::ConditionalCheckFailedException(c)
                    if c.item().is_some_and(|old| is_same_order(old, order))) =>
            {
                Ok(())
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
                AdmittedOrderFailure::Exists(_) => Err(Error::Unauthorized),
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
