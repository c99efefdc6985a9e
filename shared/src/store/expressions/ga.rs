//! A general-admission bucket's expressions (`GA#…`): takes, give-backs,
//! extensions and sales. Names: `#free`, `#sold`, `#me` (this order's
//! hold entry), `#q`/`#e` (an entry's quantity and expiry), `#x{i}` (an
//! expired hold of another order); values: `:delta`, `:need`, `:had`, ….

use super::super::codec::{n, s};
use super::super::keys::{
    hold_attribute, FREE, HOLD_EXPIRY, HOLD_QUANTITY, SALE_ORDER_ID, SALE_PAYMENT_ID, SOLD,
};
use super::Expression;
use crate::domain::ga::{PlaceHold, PlaceSale, Take};
use crate::domain::{Millis, OrderId, PaymentId};
use aws_sdk_dynamodb::types::AttributeValue;
use std::collections::HashMap;

/// The removal of `reclaim` (expired holds of other orders): each only
/// exactly as read (quantity and expiry), so a hold its order extended or
/// changed since is never taken. The conditions and bindings, and the
/// attributes to `REMOVE`.
fn reclaims(reclaim: &[PlaceHold]) -> (Expression, Vec<String>) {
    let mut expression = Expression::default();
    let mut removes = Vec::new();
    for (i, hold) in reclaim.iter().enumerate() {
        expression = expression
            .and(Expression::condition(format!(
                "#x{i}.#q = :xq{i} AND #x{i}.#e = :xe{i}"
            )))
            .name(&format!("#x{i}"), hold_attribute(&hold.order))
            .value(&format!(":xq{i}"), n(hold.quantity))
            .value(&format!(":xe{i}"), n(hold.expires_at.0))
            .name("#q", HOLD_QUANTITY)
            .name("#e", HOLD_EXPIRY);
        removes.push(format!("#x{i}"));
    }
    (expression, removes)
}

/// ` REMOVE a, b` or nothing.
fn remove_clause(removes: &[String]) -> String {
    if removes.is_empty() {
        String::new()
    } else {
        format!(" REMOVE {}", removes.join(", "))
    }
}

/// `order`'s entry as the order records it: `had` places.
fn entry_is(order: &OrderId, had: u32) -> Expression {
    Expression::condition("#me.#q = :had")
        .name("#me", hold_attribute(order))
        .name("#q", HOLD_QUANTITY)
        .value(":had", n(had))
}

/// hold-ga's take: expired holds of others removed (each exactly as read),
/// `order`'s entry raised from `had` to `had + take.places` until
/// `expires_at`, `free` lowered, never below zero.
pub(in crate::store) fn take(
    order: &OrderId,
    take: &Take,
    had: u32,
    expires_at: Millis,
) -> Expression {
    let reclaimed: i64 = take.reclaim.iter().map(|h| i64::from(h.quantity)).sum();
    let (reclaim, removes) = reclaims(&take.reclaim);
    let mine = AttributeValue::M(HashMap::from([
        (HOLD_QUANTITY.to_owned(), n(had + take.places)),
        (HOLD_EXPIRY.to_owned(), n(expires_at.0)),
    ]));
    let entry = if had == 0 {
        Expression::condition("attribute_not_exists(#me)").name("#me", hold_attribute(order))
    } else {
        entry_is(order, had)
    };
    Expression::update(format!(
        "SET #free = #free + :delta, #me = :mine{}",
        remove_clause(&removes)
    ))
    .and(Expression::condition("#free >= :need"))
    .and(entry)
    .and(reclaim)
    .name("#free", FREE)
    .name("#me", hold_attribute(order))
    .value(":delta", n(reclaimed - i64::from(take.places)))
    .value(":need", n(take.free_needed()))
    .value(":mine", mine)
}

/// A give-back: `order`'s entry lowered from `had` to `keeps` (removed at
/// zero), `free` raised by as much, only while the entry is as recorded.
pub(in crate::store) fn give(order: &OrderId, had: u32, keeps: u32) -> Expression {
    let update = if keeps == 0 {
        Expression::update("SET #free = #free + :give REMOVE #me")
    } else {
        Expression::update("SET #free = #free + :give, #me.#q = :keeps").value(":keeps", n(keeps))
    };
    update
        .and(entry_is(order, had))
        .name("#free", FREE)
        .value(":give", n(had - keeps))
}

/// extend-order: `order`'s entry (of `had` places) now expires at
/// `expires_at`.
pub(in crate::store) fn extend(order: &OrderId, had: u32, expires_at: Millis) -> Expression {
    Expression::update("SET #me.#e = :exp")
        .and(entry_is(order, had))
        .name("#e", HOLD_EXPIRY)
        .value(":exp", n(expires_at.0))
}

/// A bucket's side of a sale: `sell` of the order's `held` places there
/// sold and the rest given back, its hold removed, only while the hold is
/// as read and, with `live_at`, unexpired then (a late payment sells places
/// whose expired hold nobody took over); and `take` more sold from the
/// bucket's free places and the expired holds of others it removes, only
/// while they are there. A sale records its order and payment on the
/// bucket (`saleOrderId`, `salePaymentId`), so the bucket's stream record
/// alone says who bought (publish-events).
pub(in crate::store) fn sell(
    order: &OrderId,
    payment: &PaymentId,
    sale: &PlaceSale,
    live_at: Option<Millis>,
) -> Expression {
    let give = i64::from(sale.held - sale.sell);
    let (taken, reclaim_holds) = sale
        .take
        .as_ref()
        .map_or((0, &[][..]), |t| (t.places, t.reclaim.as_slice()));
    let reclaimed: i64 = reclaim_holds.iter().map(|h| i64::from(h.quantity)).sum();
    let delta = give + reclaimed - i64::from(taken);
    let (mut condition, mut removes) = reclaims(reclaim_holds);
    if sale.held > 0 {
        removes.push("#me".into());
        condition = condition.and(entry_is(order, sale.held));
        if let Some(now) = live_at {
            condition = condition
                .and(Expression::condition(live!("#me.#e")))
                .name("#e", HOLD_EXPIRY)
                .value(":now", n(now.0));
        }
    }
    if taken > 0 {
        // The bucket's free places (plus what this very update gives back
        // and reclaims) must cover what it takes.
        condition = condition
            .and(Expression::condition("#free >= :need"))
            .value(":need", n(-delta));
    }
    if condition.condition.is_none() {
        // A sale of nothing held and nothing taken: never planned, but it
        // must not write unconditionally either.
        condition = condition.and(Expression::condition("attribute_exists(PK)"));
    }
    let mut set = "SET #sold = #sold + :sold, #free = #free + :delta".to_owned();
    let mut update = Expression::default();
    if sale.sold() > 0 {
        set.push_str(", #saleOrder = :saleOrder, #salePayment = :salePayment");
        update = update
            .name("#saleOrder", SALE_ORDER_ID)
            .name("#salePayment", SALE_PAYMENT_ID)
            .value(":saleOrder", s(order.as_str()))
            .value(":salePayment", s(payment.as_str()));
    }
    Expression::update(format!("{set}{}", remove_clause(&removes)))
        .and(update)
        .and(condition)
        .name("#sold", SOLD)
        .name("#free", FREE)
        .value(":sold", n(sale.sold()))
        .value(":delta", n(delta))
}
