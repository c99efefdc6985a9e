//! Orders and holds: create and read orders, claim and release seats, each
//! claim or release one transaction with no read before it.

use super::codec::{n, parse_order, s, ss, Fields, StoredOrder};
use super::errors::{build_error, sdk_error};
use super::expressions::{release_held_seat, HOLDER_ORDER_IS_HOLDABLE, SEAT_IS_FREE_FOR_ORDER};
use super::failures::{claim_error, extended_since, release_error, ItemFailure};
use super::keys::{
    expired_order_ttl, order_key, pending_shard, seat_key, CREATED_AT, EVENT_ID, EXPIRES_AT,
    HOLDER, HOLDER_DEADLINE, HOLD_EXPIRES_AT, KIND, ORDER_ID, PENDING_EXPIRES_AT, PENDING_SHARD,
    SEATS, SEAT_HELD, SEAT_SOLD, STATUS, TOKEN_HASH, TTL, USER_ID, VERSION,
};
use super::{Store, Txn};
use crate::auth::HoldToken;
use crate::domain::{EventRef, Millis, Order, OrderId, OrderStatus, SeatId};
use crate::error::Error;
use aws_sdk_dynamodb::error::SdkError;
use aws_sdk_dynamodb::types::{ReturnValuesOnConditionCheckFailure, TransactWriteItem, Update};

impl Store {
    // ----- orders -------------------------------------------------------

    /// Writes a new PENDING order (its id is fresh; the condition only
    /// guards against the impossible collision).
    pub async fn create_order(&self, order: &Order) -> Result<(), Error> {
        let mut item = order_key(&order.order_id);
        item.extend([
            (KIND.into(), s("order")),
            (ORDER_ID.into(), s(order.order_id.as_str())),
            (EVENT_ID.into(), s(order.event_id.as_str())),
            (STATUS.into(), s(OrderStatus::Pending.as_str())),
            (EXPIRES_AT.into(), n(order.expires_at.0)),
            (HOLDER_DEADLINE.into(), n(order.holder_deadline.0)),
            (TOKEN_HASH.into(), s(&order.token_hash)),
            (VERSION.into(), n(0)),
            (CREATED_AT.into(), n(order.created_at.0)),
            (PENDING_SHARD.into(), s(pending_shard(&order.order_id))),
            (PENDING_EXPIRES_AT.into(), n(order.expires_at.0)),
            (TTL.into(), n(expired_order_ttl(order.expires_at))),
        ]);
        if let Some(user) = &order.user_id {
            item.insert(USER_ID.into(), s(user));
        }
        let put = self
            .client
            .put_item()
            .table_name(&*self.table)
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(PK)")
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
            .send()
            .await;
        match put {
            Ok(_) => Ok(()),
            // The SDK retried a put whose first attempt had landed: the item
            // there is ours (same token hash), so the order exists as asked.
            Err(SdkError::ServiceError(ctx))
                if matches!(ctx.err(), aws_sdk_dynamodb::operation::put_item::PutItemError::ConditionalCheckFailedException(c)
                    if c.item().is_some_and(|old| Fields::new(old).opt_s(TOKEN_HASH) == Some(order.token_hash.as_str()))) =>
            {
                Ok(())
            }
            Err(e) => Err(sdk_error("PutItem", e).into()),
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

    /// get-seat: claims `seat` for the order and records it on the order in
    /// one transaction, with no read before it. The seat is claimable if it
    /// exists, is not sold, and is free, held by this order, or held by an
    /// order whose hold expired (`expired!`: no stale window).
    /// The order must match the token's hash, be PENDING, unexpired, and
    /// have room (or hold the seat already: re-claiming is idempotent).
    /// Returns the hold's expiry. A token from before an extension costs
    /// one more round trip (see [`HoldToken`]).
    pub async fn claim_seat(
        &self,
        order: &OrderId,
        token: &HoldToken,
        seat: &SeatId,
        max_seats: u32,
        now: Millis,
    ) -> Result<Millis, Error> {
        let mut token = token.clone();
        let mut stale_retries = 0;
        loop {
            let items = vec![
                TransactWriteItem::builder().update(self.claim_update(&token, order, seat, SEAT_IS_FREE_FOR_ORDER, now)?).build(),
                TransactWriteItem::builder()
                    .update(
                        self.holder_order_update(order, &token, now, "AND (attribute_not_exists(#seats) OR size(#seats) < :max OR contains(#seats, :seatId))")
                            .update_expression("ADD #seats :seat, #version :one")
                            .expression_attribute_names("#seats", SEATS)
                            .expression_attribute_values(":seat", ss(&[seat.as_str()]))
                            .expression_attribute_values(":seatId", s(seat.as_str()))
                            .expression_attribute_values(":max", n(max_seats))
                            .build()
                            .map_err(build_error("TransactWriteItems"))?,
                    )
                    .build(),
            ];
            let Txn::Cancelled(mut reasons) = self.transact(items).await? else {
                return Ok(token.expires_at());
            };
            let order_failure = reasons.pop().flatten();
            let seat_failure = reasons.pop().flatten();
            if refresh_stale_token(
                order_failure.as_ref(),
                &mut token,
                &mut stale_retries,
                order,
                now,
            )? {
                continue;
            }
            return Err(claim_error(
                seat_failure,
                order_failure,
                &token,
                max_seats,
                now,
            )?);
        }
    }

    /// A seat's side of a claim for `order` until the token's expiry, under
    /// `condition` ([`SEAT_IS_FREE_FOR_ORDER`] or, for best-available,
    /// [`SEAT_IS_FREE_FOR_ANOTHER`]).
    pub(super) fn claim_update(
        &self,
        token: &HoldToken,
        order: &OrderId,
        seat: &SeatId,
        condition: &str,
        now: Millis,
    ) -> Result<Update, Error> {
        Ok(self
            .update(seat_key(&EventRef::of(token.event_id()), seat))
            .update_expression("SET #status = :held, #holder = :order, #holdExp = :exp")
            .condition_expression(condition)
            .expression_attribute_names("#status", STATUS)
            .expression_attribute_names("#holder", HOLDER)
            .expression_attribute_names("#holdExp", HOLD_EXPIRES_AT)
            .expression_attribute_values(":held", s(SEAT_HELD))
            .expression_attribute_values(":sold", s(SEAT_SOLD))
            .expression_attribute_values(":order", s(order.as_str()))
            .expression_attribute_values(":exp", n(token.expires_at().0))
            .expression_attribute_values(":now", n(now.0))
            .build()
            .map_err(build_error("TransactWriteItems"))?)
    }

    /// The order's side of a holder's transaction: the token's hash, PENDING,
    /// the token's expiry, and outside the guard margin (the holder's
    /// deadline, not expiresAt), then `extra` (starting with `AND`). The
    /// caller adds its update expression and the bindings `extra` needs.
    pub(super) fn holder_order_update(
        &self,
        order: &OrderId,
        token: &HoldToken,
        now: Millis,
        extra: &str,
    ) -> aws_sdk_dynamodb::types::builders::UpdateBuilder {
        self.update(order_key(order))
            .condition_expression(format!("{HOLDER_ORDER_IS_HOLDABLE} {extra}"))
            .expression_attribute_names("#deadline", HOLDER_DEADLINE)
            .expression_attribute_names("#version", VERSION)
            .expression_attribute_names("#tokenHash", TOKEN_HASH)
            .expression_attribute_names("#status", STATUS)
            .expression_attribute_names("#expiresAt", EXPIRES_AT)
            .expression_attribute_values(":one", n(1))
            .expression_attribute_values(":tokenHash", s(token.hash()))
            .expression_attribute_values(":pending", s(OrderStatus::Pending.as_str()))
            .expression_attribute_values(":exp", n(token.expires_at().0))
            .expression_attribute_values(":now", n(now.0))
    }

    /// drop-seat: releases a seat this order holds and removes it from the
    /// order, in one transaction and one round trip.
    pub async fn release_seat(
        &self,
        order: &OrderId,
        token: &HoldToken,
        seat: &SeatId,
        now: Millis,
    ) -> Result<(), Error> {
        let release = release_held_seat(order)
            .on_update(self.update(seat_key(&EventRef::of(token.event_id()), seat)))
            .build()
            .map_err(build_error("TransactWriteItems"))?;
        let record = self
            .update(order_key(order))
            .update_expression("DELETE #seats :seat ADD #version :one")
            .condition_expression(concat!(
                "attribute_exists(PK) AND #tokenHash = :tokenHash AND #status = :pending AND ",
                live!("#expiresAt"),
                " AND contains(#seats, :seatId)"
            ))
            .expression_attribute_names("#seats", SEATS)
            .expression_attribute_names("#version", VERSION)
            .expression_attribute_names("#tokenHash", TOKEN_HASH)
            .expression_attribute_names("#status", STATUS)
            .expression_attribute_names("#expiresAt", EXPIRES_AT)
            .expression_attribute_values(":seat", ss(&[seat.as_str()]))
            .expression_attribute_values(":seatId", s(seat.as_str()))
            .expression_attribute_values(":one", n(1))
            .expression_attribute_values(":tokenHash", s(token.hash()))
            .expression_attribute_values(":pending", s(OrderStatus::Pending.as_str()))
            .expression_attribute_values(":now", n(now.0))
            .build()
            .map_err(build_error("TransactWriteItems"))?;
        let items = vec![
            TransactWriteItem::builder().update(release).build(),
            TransactWriteItem::builder().update(record).build(),
        ];
        let Txn::Cancelled(mut reasons) = self.transact(items).await? else {
            return Ok(());
        };
        let order_failure = reasons.pop().flatten();
        let seat_failure = reasons.pop().flatten();
        Err(release_error(seat_failure, order_failure, token, now)?)
    }
}

/// A holder's claim failed only because its token carried an expiry the
/// order has moved past (extend-order since): `Ok(true)`, with `token` now
/// carrying the order's own expiry, to retry. Bounded: each retry follows
/// an extension that happened meanwhile; after
/// [`crate::retry::STALE_TOKEN_RETRIES`] in a
/// row, 503.
pub(super) fn refresh_stale_token(
    failure: Option<&ItemFailure>,
    token: &mut HoldToken,
    retries: &mut u32,
    order: &OrderId,
    now: Millis,
) -> Result<bool, Error> {
    let Some(current) = extended_since(failure, token, now)? else {
        return Ok(false);
    };
    if *retries == crate::retry::STALE_TOKEN_RETRIES {
        tracing::warn!(order_id = %order, "claim: the order's expiry kept moving under it");
        return Err(Error::StoreUnavailable);
    }
    *retries += 1;
    *token = token.with_expiry(current);
    Ok(true)
}
