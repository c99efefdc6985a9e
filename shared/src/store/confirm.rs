//! confirm's writes. Each is one `TransactWriteItems` that sells (or
//! records) exactly what was paid, moves the order on, and records the
//! payment id for this order (`PAYMENT#{id}`, so it can never pay for two).
//! The common case is [`Store::confirm_exact`], with no read before it;
//! the others act on an order read by the handler and re-check its
//! `version`, so a decision is never made on stale data.

use aws_sdk_dynamodb::types::{Put, TransactWriteItem};

use super::errors::build_error;
use super::failures::{confirm_outcome, ConfirmOutcome, ConfirmRole};
use super::items;
use super::items::bucket::ga_bucket_key;
use super::items::order::Completion;
use super::items::order::{held_members, order_key, place_member, StoredOrder};
use super::items::payment::payment_key;
use super::items::resale::places_write;
use super::items::seat::seat_key;
use super::schema::{KIND, MAX_TRANSACTION_ITEMS, ORDER_ID, PAYMENT_ID};
use super::value::s;
use super::{Store, Txn};
use crate::domain::buyer_limit::BuyerCount;
use crate::domain::ga::{HeldPlaces, PlaceSale};
use crate::domain::{
    EventRef, Millis, Order, OrderId, OrderStatus, PaymentId, RefundReason, SeatId,
};
use crate::error::Error;
use aws_sdk_dynamodb::types::ReturnValuesOnConditionCheckFailure;

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
    /// What they are in the order's `seats` set (and its buyer's record).
    fn members(&self) -> Vec<String> {
        held_members(self.seats, self.places)
    }
}

/// What a confirm that does not sell from a live order's holds does to its
/// buyer's record.
pub(super) enum BuyerChange<'a> {
    /// Sells `units`, checked against the record as `read`.
    Sell {
        units: usize,
        read: Option<&'a BuyerCount>,
    },
    /// Sells nothing (a refund): the order's holds stop counting.
    Release,
}

/// What a completing confirm sells: the paid seats, and the places of
/// `sales` (their buckets checked live at `live_at`, if given), written
/// at `now`.
struct Sold<'a> {
    paid: &'a [SeatId],
    sales: &'a [PlaceSale],
    /// The order whose held places `sales` sell, when they are held (an
    /// offer's listed places are sold on their listing's resale item).
    holder: Option<&'a Order>,
    live_at: Option<Millis>,
    now: Millis,
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
        let when = Completion::Exact {
            count: paid.len(),
            now,
        };
        let sold = Sold {
            paid,
            sales: &[],
            holder: None,
            live_at: None,
            now,
        };
        self.push_completion(&mut txn, &event, order, payment, sold, when)?;
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
            match order.resale_of(seat) {
                Some(resale) => self.push_resale(&mut txn, &event, order, resale, payment, now)?,
                None => txn.push(
                    ConfirmRole::Paid,
                    self.sell_held_seat(&event, &order.order_id, payment, seat, now)?,
                ),
            }
        }
        self.push_place_resales(&mut txn, order, sales, payment, now)?;
        self.push_sellers(&mut txn, &event, order, paid, sales)?;
        self.push_releases(&mut txn, &event, order, release, now)?;
        let when = Completion::AsReadLive {
            version: stored.version,
            now,
        };
        let sold = Sold {
            paid,
            sales,
            holder: Some(order),
            live_at: Some(now),
            now,
        };
        let units = self.push_completion(&mut txn, &event, &order.order_id, payment, sold, when)?;
        // Exactly what a live order holds, or less: always within the limit.
        let sale = BuyerChange::Sell { units, read: None };
        if let Some(item) = self.buyer_confirm_item(order, sale, &[], now)? {
            txn.push(ConfirmRole::Buyer, item);
        }
        if let Some(item) = self.offer_end(order, true, true)? {
            txn.push(ConfirmRole::OfferEnd, item);
        }
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
        buyer: Option<&BuyerCount>,
        now: Millis,
    ) -> Result<ConfirmOutcome, Error> {
        let order = &stored.order;
        let event = EventRef::of(&order.event_id);
        let mut txn = ConfirmTxn::new();
        for seat in paid {
            txn.push(
                ConfirmRole::Paid,
                self.txn_update(
                    seat_key(&event, seat),
                    items::seat::take_paid(&order.order_id, payment, now),
                )?,
            );
        }
        let selling: Vec<PlaceSale> = sales.iter().filter(|s| s.sold() > 0).cloned().collect();
        let when = Completion::AsRead {
            seen: order.status,
            version: stored.version,
        };
        let sold = Sold {
            paid,
            sales: &selling,
            holder: None,
            live_at: None,
            now,
        };
        let units = self.push_completion(&mut txn, &event, &order.order_id, payment, sold, when)?;
        // An offer completed by a late payment is its entry's purchase;
        // its offer counted as live only if it still was.
        let live = order.status == OrderStatus::Pending && order.expires_at > now;
        if let Some(item) = self.offer_end(order, true, live)? {
            txn.push(ConfirmRole::OfferEnd, item);
        }
        // Units it may not hold: the sale stands only on the buyer's record
        // as the handler read and checked it.
        let sale = BuyerChange::Sell { units, read: buyer };
        self.commit_letting_go(txn, order, leftovers, sale, now)
            .await
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
        now: Millis,
    ) -> Result<ConfirmOutcome, Error> {
        let order = &stored.order;
        let mut txn = ConfirmTxn::new();
        let refund = items::order::refund_due(payment, reason, order.status, stored.version, now);
        txn.push(
            ConfirmRole::Order,
            self.txn_update(order_key(&order.order_id), refund)?,
        );
        txn.push(
            ConfirmRole::Payment,
            self.record_payment(payment, &order.order_id)?,
        );
        // A live offer refunded ends its entry (`refunded`).
        if order.status == OrderStatus::Pending && order.expires_at > now {
            if let Some(item) = self.offer_end(order, false, true)? {
                txn.push(ConfirmRole::OfferEnd, item);
            }
        }
        self.commit_letting_go(txn, order, leftovers, BuyerChange::Release, now)
            .await
    }

    /// Commits `txn`, letting go of `leftovers` in it when they still count
    /// and fit in one transaction (DynamoDB's limit: 100 items), else right
    /// after it commits, each only if still the order's.
    /// The order's buyer's record changes in the same transaction: what it
    /// lets go of after the transaction keeps counting until then, and is
    /// taken out of the record after it.
    async fn commit_letting_go(
        &self,
        mut txn: ConfirmTxn,
        order: &Order,
        leftovers: Leftovers<'_>,
        buyer: BuyerChange<'_>,
        now: Millis,
    ) -> Result<ConfirmOutcome, Error> {
        // One more item for the buyer's record (an offer's end is in `txn`).
        let room = MAX_TRANSACTION_ITEMS - 1;
        let in_txn = leftovers.live && txn.items.len() + leftovers.items() <= room;
        let kept = match (in_txn, order.expires_at > now) {
            (false, true) => leftovers.members(),
            _ => Vec::new(),
        };
        if let Some(item) = self.buyer_confirm_item(order, buyer, &kept, now)? {
            txn.push(ConfirmRole::Buyer, item);
        }
        if in_txn {
            let event = EventRef::of(&order.event_id);
            self.push_releases(&mut txn, &event, order, leftovers.seats, now)?;
            for item in self.give_back_items(order, leftovers.places, now)? {
                txn.push(ConfirmRole::Release, item);
            }
        }
        let outcome = self.confirm_txn(txn, &order.order_id).await?;
        if outcome == ConfirmOutcome::Committed && !in_txn {
            self.release_leftover_holds(order, leftovers.seats, now)
                .await;
            self.release_places(
                &Order {
                    places: leftovers.places.to_vec(),
                    ..order.clone()
                },
                now,
            )
            .await;
            self.release_buyer_members(order, &kept).await;
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
        now: Millis,
    ) -> Result<ConfirmOutcome, Error> {
        let order = &stored.order;
        let mut txn = ConfirmTxn::new();
        let record = items::order::add_refund_payment(payment, order.status, now);
        txn.push(
            ConfirmRole::Order,
            self.txn_update(order_key(&order.order_id), record)?,
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
    pub async fn release_leftover_holds(
        &self,
        order: &Order,
        seats: &[SeatId],
        now: Millis,
    ) -> u64 {
        let event = EventRef::of(&order.event_id);
        let mut released = 0;
        for seat in seats {
            let outcome = match order.resale_of(seat) {
                Some(_) => {
                    let key = items::resale::resale_key(&event, seat);
                    let let_go = items::resale::let_go(&order.order_id, now);
                    self.update_if(key, let_go).await
                }
                None => {
                    self.release_expired_hold(&event, seat, &order.order_id, now)
                        .await
                }
            };
            match outcome {
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
        self.txn_update(
            seat_key(event, seat),
            items::seat::sell_held(order, payment, now),
        )
    }

    /// `order`'s holds of `seats` let go of (a listed seat's on its
    /// resale item: the seat stays its seller's).
    fn push_releases(
        &self,
        txn: &mut ConfirmTxn,
        event: &EventRef,
        order: &Order,
        seats: &[SeatId],
        now: Millis,
    ) -> Result<(), Error> {
        for seat in seats {
            txn.push(
                ConfirmRole::Release,
                self.release_item(event, order, seat, now)?,
            );
        }
        Ok(())
    }

    /// `order`'s hold of `seat` let go of, if it still holds it: a seat's
    /// own hold, or a listed seat's on its resale item (the seat stays its
    /// seller's). Every release of an order's seats goes through here.
    pub(super) fn release_item(
        &self,
        event: &EventRef,
        order: &Order,
        seat: &SeatId,
        now: Millis,
    ) -> Result<TransactWriteItem, Error> {
        let id = &order.order_id;
        match order.resale_of(seat) {
            Some(_) => self.txn_update(
                items::resale::resale_key(event, seat),
                items::resale::let_go(id, now),
            ),
            None => self.txn_update(seat_key(event, seat), items::seat::release_held(id, now)),
        }
    }

    /// What every confirm that completes its order ends with: each sale's
    /// bucket, the order completed with every unit it sold recorded on it
    /// (`when`: as the order must be), and the payment's record. The paid
    /// seats' own items are the caller's (held ones sold, free ones taken).
    /// Returns how many units it sold, for the buyer's record.
    fn push_completion(
        &self,
        txn: &mut ConfirmTxn,
        event: &EventRef,
        order: &OrderId,
        payment: &PaymentId,
        sold: Sold<'_>,
        when: Completion,
    ) -> Result<usize, Error> {
        let mut recorded: Vec<String> = sold.paid.iter().map(|s| s.as_str().to_owned()).collect();
        for sale in sold.sales {
            let write = items::bucket::sell(order, payment, sale, sold.live_at, sold.now);
            let (key, write) = match sold.holder {
                Some(holder) => places_write(event, holder, &sale.section, sale.bucket, write),
                None => (ga_bucket_key(event, &sale.section, sale.bucket), write),
            };
            txn.push(ConfirmRole::Places, self.txn_update(key, write)?);
            recorded.extend((1..=sale.sold()).map(|k| place_member(&sale.section, sale.bucket, k)));
        }
        let members: Vec<&str> = recorded.iter().map(String::as_str).collect();
        let completed = items::order::complete(payment, &members, when, sold.now);
        txn.push(
            ConfirmRole::Order,
            self.txn_update(order_key(order), completed)?,
        );
        txn.push(ConfirmRole::Payment, self.record_payment(payment, order)?);
        Ok(recorded.len())
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
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
        let put = items::payment::for_order_only(order)
            .on_put(put)
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

#[path = "confirm_resales.rs"]
mod resales;
