//! confirm's writes. Each is one `TransactWriteItems` that sells (or
//! records) exactly what was paid, moves the order on, and records the
//! payment id for this order (`PAYMENT#{id}`, so it can never pay for two).
//! The common case is [`Store::confirm_exact`], with no read before it;
//! the others act on an order read by the handler and re-check its
//! `version`, so a decision is never made on stale data.

use aws_sdk_dynamodb::types::{Put, TransactWriteItem};

use super::codec::{n, s, ss, StoredOrder};
use super::errors::build_error;
use super::expressions::{release_held_seat, SEAT_HELD_BY_ORDER_LIVE, SEAT_IS_FREE_FOR_ORDER};
use super::failures::{confirm_outcome, ConfirmOutcome, ConfirmRole};
use super::keys::{
    ga_bucket_key, hold_attribute, order_key, payment_key, place_member, seat_key,
    EXTRA_PAYMENT_IDS, FREE, HOLDER, HOLDER_DEADLINE, HOLD_EXPIRES_AT, HOLD_EXPIRY, HOLD_QUANTITY,
    KIND, MAX_TRANSACTION_ITEMS, ORDER_ID, PAYMENT_ID, PENDING_EXPIRES_AT, PENDING_SHARD,
    REFUND_REASON, SALE_ORDER_ID, SALE_PAYMENT_ID, SEATS, SEAT_HELD, SEAT_SOLD, SOLD, STATUS, TTL,
    VERSION,
};
use super::{Store, Txn};
use crate::domain::ga::{HeldPlaces, PlaceSale};
use crate::domain::{
    EventRef, Millis, Order, OrderId, OrderStatus, PaymentId, RefundReason, SeatId,
};
use crate::error::Error;
use aws_sdk_dynamodb::types::ReturnValuesOnConditionCheckFailure;

/// Completing an order takes it out of the pending index and keeps it (no TTL).
const COMPLETE_ORDER: &str =
    "SET #status = :completed, #payment = :payment, #seats = :paid, #version = #version + :one \
     REMOVE #shard, #pendingExp, #ttl";

/// A transaction being built: its items and what each is for.
struct ConfirmTxn {
    items: Vec<TransactWriteItem>,
    roles: Vec<ConfirmRole>,
}

impl ConfirmTxn {
    fn new() -> Self {
        Self {
            items: Vec::new(),
            roles: Vec::new(),
        }
    }
    fn push(&mut self, role: ConfirmRole, item: TransactWriteItem) {
        self.items.push(item);
        self.roles.push(role);
    }
}

/// What a confirm that does not sell from its holds lets go of: the
/// order's other seats and places. `live`: whether those holds still count
/// (a live order's); then they go back in the confirm's own transaction
/// while it has room, else right after it, each only if still the order's.
pub struct Leftovers<'a> {
    pub seats: &'a [SeatId],
    pub places: &'a [HeldPlaces],
    pub live: bool,
}

impl Leftovers<'_> {
    fn items(&self) -> usize {
        self.seats.len() + self.places.len()
    }
}

impl Store {
    /// The common case, in one round trip: a live order that holds exactly
    /// the paid seats. Sells them, completes the order and records the
    /// payment, or changes nothing. `Ok(false)`: not the common case (or an
    /// id we never issued); the caller reads the order and decides.
    pub async fn confirm_exact(
        &self,
        order: &OrderId,
        payment: &PaymentId,
        paid: &[SeatId],
        now: Millis,
    ) -> Result<bool, Error> {
        let Some(event) = order.event_ref() else {
            return Ok(false);
        };
        if paid.is_empty() {
            return Ok(false);
        }
        let mut txn = ConfirmTxn::new();
        for seat in paid {
            txn.push(
                ConfirmRole::Paid,
                self.sell_held_seat(&event, order, payment, seat, now)?,
            );
        }
        let complete = self
            .complete(order, payment, paid)
            .condition_expression(concat!(
                "attribute_exists(PK) AND #status = :pending AND ",
                live!("#deadline"),
                " AND size(#seats) = :count"
            ))
            .expression_attribute_names("#deadline", HOLDER_DEADLINE)
            .expression_attribute_values(":pending", s(OrderStatus::Pending.as_str()))
            .expression_attribute_values(":now", n(now.0))
            .expression_attribute_values(":count", n(paid.len()))
            .build()
            .map_err(build_error("TransactWriteItems"))?;
        txn.push(
            ConfirmRole::Order,
            TransactWriteItem::builder().update(complete).build(),
        );
        txn.push(ConfirmRole::Payment, self.record_payment(payment, order)?);
        match self.confirm_txn(txn, order).await? {
            ConfirmOutcome::Committed => Ok(true),
            // Throttling was answered above (503); anything else means the
            // order is not in the common state: decide from a read.
            _ => Ok(false),
        }
    }

    /// A holdable order holding every paid seat and place: sells them,
    /// releases the rest it holds (`release` seats; the places `sales` do
    /// not sell), completes it, all in one transaction.
    pub async fn sell_held(
        &self,
        stored: &StoredOrder,
        payment: &PaymentId,
        paid: &[SeatId],
        release: &[SeatId],
        sales: &[PlaceSale],
        now: Millis,
    ) -> Result<ConfirmOutcome, Error> {
        let order = &stored.order;
        let event = EventRef::of(&order.event_id);
        let mut txn = ConfirmTxn::new();
        for seat in paid {
            txn.push(
                ConfirmRole::Paid,
                self.sell_held_seat(&event, &order.order_id, payment, seat, now)?,
            );
        }
        self.push_releases(&mut txn, &event, &order.order_id, release)?;
        let mut sold_members = Vec::new();
        for sale in sales {
            txn.push(
                ConfirmRole::Places,
                self.sell_places(&event, &order.order_id, payment, sale, Some(now))?,
            );
            sold_members
                .extend((1..=sale.sold()).map(|k| place_member(&sale.section, sale.bucket, k)));
        }
        let mut recorded: Vec<&str> = paid.iter().map(SeatId::as_str).collect();
        recorded.extend(sold_members.iter().map(String::as_str));
        let complete = self
            .complete_with(&order.order_id, payment, &recorded)
            .condition_expression(concat!(
                "#status = :pending AND #version = :version AND ",
                live!("#deadline")
            ))
            .expression_attribute_names("#deadline", HOLDER_DEADLINE)
            .expression_attribute_values(":pending", s(OrderStatus::Pending.as_str()))
            .expression_attribute_values(":version", n(stored.version))
            .expression_attribute_values(":now", n(now.0))
            .build()
            .map_err(build_error("TransactWriteItems"))?;
        txn.push(
            ConfirmRole::Order,
            TransactWriteItem::builder().update(complete).build(),
        );
        txn.push(
            ConfirmRole::Payment,
            self.record_payment(payment, &order.order_id)?,
        );
        self.confirm_txn(txn, &order.order_id).await
    }

    /// Takes every paid seat that is free for this order (unheld, its own,
    /// or held by an expired hold, compared with `now`), completes the
    /// order if it is still as read, and releases `release` and gives back
    /// `give_back` (holds that still count) in the same transaction.
    /// Paid places are `sales` planned from the buckets as just read: the
    /// order's own entries (expired or not: places nobody took over) and
    /// places anyone may take; each bucket's condition holds it to what
    /// was read.
    #[allow(clippy::too_many_arguments)]
    pub async fn take_free(
        &self,
        stored: &StoredOrder,
        payment: &PaymentId,
        paid: &[SeatId],
        sales: &[PlaceSale],
        leftovers: Leftovers<'_>,
        now: Millis,
    ) -> Result<ConfirmOutcome, Error> {
        let order = &stored.order;
        let event = EventRef::of(&order.event_id);
        let mut txn = ConfirmTxn::new();
        for seat in paid {
            let take = self
                .update(seat_key(&event, seat))
                .update_expression(
                    "SET #status = :sold, #holder = :order, #payment = :payment REMOVE #holdExp",
                )
                .condition_expression(SEAT_IS_FREE_FOR_ORDER)
                .expression_attribute_names("#payment", PAYMENT_ID)
                .expression_attribute_values(":payment", s(payment.as_str()))
                .expression_attribute_names("#status", STATUS)
                .expression_attribute_names("#holder", HOLDER)
                .expression_attribute_names("#holdExp", HOLD_EXPIRES_AT)
                .expression_attribute_values(":sold", s(SEAT_SOLD))
                .expression_attribute_values(":order", s(order.order_id.as_str()))
                .expression_attribute_values(":now", n(now.0))
                .build()
                .map_err(build_error("TransactWriteItems"))?;
            txn.push(
                ConfirmRole::Paid,
                TransactWriteItem::builder().update(take).build(),
            );
        }
        let mut sold_members = Vec::new();
        for sale in sales.iter().filter(|sale| sale.sold() > 0) {
            txn.push(
                ConfirmRole::Places,
                self.sell_places(&event, &order.order_id, payment, sale, None)?,
            );
            sold_members
                .extend((1..=sale.sold()).map(|k| place_member(&sale.section, sale.bucket, k)));
        }
        let mut recorded: Vec<&str> = paid.iter().map(SeatId::as_str).collect();
        recorded.extend(sold_members.iter().map(String::as_str));
        let complete = self
            .complete_with(&order.order_id, payment, &recorded)
            .condition_expression("#status = :seen AND #version = :version")
            .expression_attribute_values(":seen", s(order.status.as_str()))
            .expression_attribute_values(":version", n(stored.version))
            .build()
            .map_err(build_error("TransactWriteItems"))?;
        txn.push(
            ConfirmRole::Order,
            TransactWriteItem::builder().update(complete).build(),
        );
        txn.push(
            ConfirmRole::Payment,
            self.record_payment(payment, &order.order_id)?,
        );
        self.commit_letting_go(txn, order, leftovers).await
    }

    /// A payment that cannot complete its order: the order becomes
    /// REFUND_DUE with the payment id and the reason, if still as read, and
    /// lets go of its `leftovers`. The pending-index keys stay, so the sweep
    /// also releases whatever holds remain once the order's expiry passes.
    pub async fn mark_refund_due(
        &self,
        stored: &StoredOrder,
        payment: &PaymentId,
        reason: RefundReason,
        leftovers: Leftovers<'_>,
    ) -> Result<ConfirmOutcome, Error> {
        let order = &stored.order;
        let mut txn = ConfirmTxn::new();
        let refund = self
            .update(order_key(&order.order_id))
            .update_expression("SET #status = :refund, #payment = :payment, #reason = :reason, #version = #version + :one REMOVE #ttl")
            .condition_expression("#status = :seen AND #version = :version")
            .expression_attribute_names("#status", STATUS)
            .expression_attribute_names("#payment", PAYMENT_ID)
            .expression_attribute_names("#reason", REFUND_REASON)
            .expression_attribute_names("#version", VERSION)
            .expression_attribute_names("#ttl", TTL)
            .expression_attribute_values(":refund", s(OrderStatus::RefundDue.as_str()))
            .expression_attribute_values(":payment", s(payment.as_str()))
            .expression_attribute_values(":reason", s(reason.as_str()))
            .expression_attribute_values(":one", n(1))
            .expression_attribute_values(":seen", s(order.status.as_str()))
            .expression_attribute_values(":version", n(stored.version))
            .build()
            .map_err(build_error("TransactWriteItems"))?;
        txn.push(
            ConfirmRole::Order,
            TransactWriteItem::builder().update(refund).build(),
        );
        txn.push(
            ConfirmRole::Payment,
            self.record_payment(payment, &order.order_id)?,
        );
        self.commit_letting_go(txn, order, leftovers).await
    }

    /// Commits `txn`, letting go of `leftovers` in it when they still count
    /// and fit in one transaction (DynamoDB's limit: 100 items), else right
    /// after it commits, each only if still the order's.
    async fn commit_letting_go(
        &self,
        mut txn: ConfirmTxn,
        order: &Order,
        leftovers: Leftovers<'_>,
    ) -> Result<ConfirmOutcome, Error> {
        let in_txn = leftovers.live && txn.items.len() + leftovers.items() <= MAX_TRANSACTION_ITEMS;
        if in_txn {
            let event = EventRef::of(&order.event_id);
            self.push_releases(&mut txn, &event, &order.order_id, leftovers.seats)?;
            for item in self.give_back_items(order, leftovers.places)? {
                txn.push(ConfirmRole::Release, item);
            }
        }
        let outcome = self.confirm_txn(txn, &order.order_id).await?;
        if outcome == ConfirmOutcome::Committed && !in_txn {
            self.release_leftover_holds(order, leftovers.seats).await;
            self.release_places(&Order {
                places: leftovers.places.to_vec(),
                ..order.clone()
            })
            .await;
        }
        Ok(outcome)
    }

    /// A further payment for an order that is COMPLETED or REFUND_DUE: kept
    /// in `refundPaymentIds` (and recorded for this order), so no payment
    /// is ever lost.
    pub async fn record_refund_payment(
        &self,
        stored: &StoredOrder,
        payment: &PaymentId,
    ) -> Result<ConfirmOutcome, Error> {
        let order = &stored.order;
        let mut txn = ConfirmTxn::new();
        let record = self
            .update(order_key(&order.order_id))
            .update_expression("ADD #extra :payment")
            .condition_expression("#status = :seen")
            .expression_attribute_names("#extra", EXTRA_PAYMENT_IDS)
            .expression_attribute_names("#status", STATUS)
            .expression_attribute_values(":payment", ss(&[payment.as_str()]))
            .expression_attribute_values(":seen", s(order.status.as_str()))
            .build()
            .map_err(build_error("TransactWriteItems"))?;
        txn.push(
            ConfirmRole::Order,
            TransactWriteItem::builder().update(record).build(),
        );
        txn.push(
            ConfirmRole::Payment,
            self.record_payment(payment, &order.order_id)?,
        );
        self.confirm_txn(txn, &order.order_id).await
    }

    /// Releases holds of an order that no longer counts (expired, or past
    /// its guard margin and now completed or refund-due), each only if this
    /// order still holds it; failures are logged, the holds have expired
    /// or will within the guard margin, and the sweep retries refund-due
    /// orders. Returns how many it released.
    pub async fn release_leftover_holds(&self, order: &Order, seats: &[SeatId]) -> u64 {
        let event = EventRef::of(&order.event_id);
        let mut released = 0;
        for seat in seats {
            match self
                .release_expired_hold(&event, seat, &order.order_id)
                .await
            {
                Ok(true) => released += 1,
                Ok(false) => {}
                Err(e) => {
                    tracing::warn!(order_id = %order.order_id, error = %crate::error::chain(&e), "a leftover hold was not released; it expires on its own")
                }
            }
        }
        released
    }

    /// A seat the order holds, sold; it records the payment, so its stream
    /// record alone says who paid (publish-events).
    fn sell_held_seat(
        &self,
        event: &EventRef,
        order: &OrderId,
        payment: &PaymentId,
        seat: &SeatId,
        now: Millis,
    ) -> Result<TransactWriteItem, Error> {
        let sell = self
            .update(seat_key(event, seat))
            .update_expression("SET #status = :sold, #payment = :payment REMOVE #holdExp")
            .expression_attribute_names("#payment", PAYMENT_ID)
            .expression_attribute_values(":payment", s(payment.as_str()))
            .condition_expression(SEAT_HELD_BY_ORDER_LIVE)
            .expression_attribute_names("#status", STATUS)
            .expression_attribute_names("#holder", HOLDER)
            .expression_attribute_names("#holdExp", HOLD_EXPIRES_AT)
            .expression_attribute_values(":sold", s(SEAT_SOLD))
            .expression_attribute_values(":held", s(SEAT_HELD))
            .expression_attribute_values(":order", s(order.as_str()))
            .expression_attribute_values(":now", n(now.0))
            .build()
            .map_err(build_error("TransactWriteItems"))?;
        Ok(TransactWriteItem::builder().update(sell).build())
    }

    fn push_releases(
        &self,
        txn: &mut ConfirmTxn,
        event: &EventRef,
        order: &OrderId,
        seats: &[SeatId],
    ) -> Result<(), Error> {
        for seat in seats {
            let release = release_held_seat(order)
                .on_update(self.update(seat_key(event, seat)))
                .build()
                .map_err(build_error("TransactWriteItems"))?;
            txn.push(
                ConfirmRole::Release,
                TransactWriteItem::builder().update(release).build(),
            );
        }
        Ok(())
    }

    /// A bucket's side of a sale: `sell` of the order's `held` places there
    /// sold and the rest given back, its hold removed, only while the hold
    /// is as read and, with `live_at`, unexpired then (a late payment sells
    /// places whose expired hold nobody took over); and `take` more sold
    /// from the bucket's free places and the expired holds of others it
    /// removes, only while they are there.
    /// A sale also records its order and payment on the bucket
    /// (`saleOrderId`, `salePaymentId`), so the bucket's stream record
    /// alone says who bought (publish-events); a give-back does not.
    fn sell_places(
        &self,
        event: &EventRef,
        order: &OrderId,
        payment: &PaymentId,
        sale: &PlaceSale,
        live_at: Option<Millis>,
    ) -> Result<TransactWriteItem, Error> {
        let give = i64::from(sale.held - sale.sell);
        let (taken, reclaim) = sale
            .take
            .as_ref()
            .map_or((0, &[][..]), |t| (t.places, t.reclaim.as_slice()));
        let reclaimed: i64 = reclaim.iter().map(|h| i64::from(h.quantity)).sum();
        let delta = give + reclaimed - i64::from(taken);
        let update = self
            .update(ga_bucket_key(event, &sale.section, sale.bucket))
            .expression_attribute_names("#sold", SOLD)
            .expression_attribute_names("#free", FREE)
            .expression_attribute_values(":sold", n(sale.sold()))
            .expression_attribute_values(":delta", n(delta));
        let (mut update, mut condition, mut removes) = super::ga::bind_reclaims(update, reclaim);
        if sale.held > 0 {
            removes.push("#me".into());
            condition.push("#me.#q = :held".into());
            update = update
                .expression_attribute_names("#me", hold_attribute(order))
                .expression_attribute_names("#q", HOLD_QUANTITY)
                .expression_attribute_values(":held", n(sale.held));
            if let Some(now) = live_at {
                condition.push(live!("#me.#e").into());
                update = update
                    .expression_attribute_names("#e", HOLD_EXPIRY)
                    .expression_attribute_values(":now", n(now.0));
            }
        }
        if taken > 0 {
            // The bucket's free places (plus what this very update gives
            // back and reclaims) must cover what it takes.
            condition.push("#free >= :need".into());
            update = update.expression_attribute_values(":need", n(-delta));
        }
        if condition.is_empty() {
            // A sale of nothing held and nothing taken: never planned, but
            // it must not write unconditionally either.
            condition.push("attribute_exists(PK)".into());
        }
        let mut set = "SET #sold = #sold + :sold, #free = #free + :delta".to_owned();
        if sale.sold() > 0 {
            set.push_str(", #saleOrder = :saleOrder, #salePayment = :salePayment");
            update = update
                .expression_attribute_names("#saleOrder", SALE_ORDER_ID)
                .expression_attribute_names("#salePayment", SALE_PAYMENT_ID)
                .expression_attribute_values(":saleOrder", s(order.as_str()))
                .expression_attribute_values(":salePayment", s(payment.as_str()));
        }
        let remove = if removes.is_empty() {
            String::new()
        } else {
            format!(" REMOVE {}", removes.join(", "))
        };
        let update = update
            .update_expression(format!("{set}{remove}"))
            .condition_expression(condition.join(" AND "))
            .build()
            .map_err(build_error("TransactWriteItems"))?;
        Ok(TransactWriteItem::builder().update(update).build())
    }

    /// The order's completion; the caller adds the condition.
    fn complete(
        &self,
        order: &OrderId,
        payment: &PaymentId,
        paid: &[SeatId],
    ) -> aws_sdk_dynamodb::types::builders::UpdateBuilder {
        let paid: Vec<&str> = paid.iter().map(SeatId::as_str).collect();
        self.complete_with(order, payment, &paid)
    }

    /// [`Store::complete`] recording `members` (seats and sold places) as
    /// what the order bought.
    fn complete_with(
        &self,
        order: &OrderId,
        payment: &PaymentId,
        paid: &[&str],
    ) -> aws_sdk_dynamodb::types::builders::UpdateBuilder {
        self.update(order_key(order))
            .update_expression(COMPLETE_ORDER)
            .expression_attribute_names("#status", STATUS)
            .expression_attribute_names("#payment", PAYMENT_ID)
            .expression_attribute_names("#seats", SEATS)
            .expression_attribute_names("#version", VERSION)
            .expression_attribute_names("#shard", PENDING_SHARD)
            .expression_attribute_names("#pendingExp", PENDING_EXPIRES_AT)
            .expression_attribute_names("#ttl", TTL)
            .expression_attribute_values(":completed", s(OrderStatus::Completed.as_str()))
            .expression_attribute_values(":payment", s(payment.as_str()))
            .expression_attribute_values(":paid", ss(paid))
            .expression_attribute_values(":one", n(1))
    }

    /// `PAYMENT#{id}` names the order it paid for; it may be written again
    /// for the same order, never for another.
    fn record_payment(
        &self,
        payment: &PaymentId,
        order: &OrderId,
    ) -> Result<TransactWriteItem, Error> {
        let mut item = payment_key(payment);
        item.extend([
            (KIND.into(), s("payment")),
            (PAYMENT_ID.into(), s(payment.as_str())),
            (ORDER_ID.into(), s(order.as_str())),
        ]);
        let put = Put::builder()
            .table_name(&*self.table)
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(PK) OR #orderId = :order")
            .expression_attribute_names("#orderId", ORDER_ID)
            .expression_attribute_values(":order", s(order.as_str()))
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
            .build()
            .map_err(build_error("TransactWriteItems"))?;
        Ok(TransactWriteItem::builder().put(put).build())
    }

    async fn confirm_txn(&self, txn: ConfirmTxn, order: &OrderId) -> Result<ConfirmOutcome, Error> {
        match self.transact(txn.items).await? {
            Txn::Committed => Ok(ConfirmOutcome::Committed),
            Txn::Cancelled(reasons) => {
                let items: Vec<_> = txn.roles.into_iter().zip(reasons).collect();
                confirm_outcome(&items, order.as_str())
            }
        }
    }
}
