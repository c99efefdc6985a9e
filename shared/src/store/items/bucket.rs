//! A general-admission bucket (`GA#{ref}#{section}#{bucket}`): its key,
//! its codec and its expressions.

use crate::domain::ga::{Bucket, PlaceHold, PlaceSale, Take};
use crate::domain::{EventId, EventRef, Millis, OrderId, PaymentId, SectionId};
use crate::store::errors::StoreError;
use crate::store::expression::Expression;
use crate::store::schema::{PK, SK};
use crate::store::value::{n, s, Fields, Item};
use aws_sdk_dynamodb::types::AttributeValue;
use std::collections::HashMap;

/// A general-admission bucket: `GA#{event ref}#{section}#{bucket}` (see
/// `domain::ga`): its capacity, sold and free counts and its holds.
pub const GA_PK_PREFIX: &str = "GA#";

pub(in crate::store) fn ga_bucket_key(event: &EventRef, section: &SectionId, bucket: u32) -> Item {
    HashMap::from([
        (
            PK.into(),
            s(format!("{GA_PK_PREFIX}{event}#{section}#{bucket}")),
        ),
        (SK.into(), s("GA")),
    ])
}

/// The key of a general-admission bucket, for the test harness's raw
/// writes (the store's writers go through [`Store`]).
pub fn ga_bucket_item_key(
    event: &EventId,
    section: &SectionId,
    bucket: u32,
) -> HashMap<String, AttributeValue> {
    ga_bucket_key(&EventRef::of(event), section, bucket)
}

pub(in crate::store) const CAPACITY: &str = "capacity";

pub(in crate::store) const SOLD: &str = "sold";

pub(in crate::store) const FREE: &str = "free";

/// One attribute per holding order, `hold#{orderId}` = `{q: places, e:
/// expiresAt ms}`: top-level rather than one map, so a bucket never keeps
/// an empty map (DynamoDB Local's stream writes one as `{}`, which no SDK
/// parses).
pub(in crate::store) const HOLD_PREFIX: &str = "hold#";

pub(in crate::store) fn hold_attribute(order: &OrderId) -> String {
    format!("{HOLD_PREFIX}{order}")
}

/// The order and payment of the sale that last wrote a bucket.
pub(in crate::store) const SALE_ORDER_ID: &str = "saleOrderId";

pub(in crate::store) const SALE_PAYMENT_ID: &str = "salePaymentId";

pub(in crate::store) const HOLD_QUANTITY: &str = "q";

pub(in crate::store) const HOLD_EXPIRY: &str = "e";

// ----- codec ---------------------------------------------------------------

/// A general-admission bucket item.
pub(in crate::store) fn parse_bucket(item: &Item) -> Result<Bucket, StoreError> {
    let f = Fields::new(item);
    let index = f
        .str(PK)?
        .rsplit('#')
        .next()
        .and_then(|i| i.parse().ok())
        .ok_or_else(|| f.malformed(PK))?;
    Ok(Bucket {
        index,
        capacity: f.u32(CAPACITY)?,
        sold: f.u32(SOLD)?,
        free: f.u32(FREE)?,
        holds: parse_holds(item)?,
    })
}

/// Every order's hold on a bucket (or on a listing of places, counted as
/// one), by order.
pub(in crate::store) fn parse_holds(item: &Item) -> Result<Vec<PlaceHold>, StoreError> {
    let f = Fields::new(item);
    let mut holds = Vec::new();
    for (name, entry) in item {
        let Some(order) = name.strip_prefix(HOLD_PREFIX) else {
            continue;
        };
        let AttributeValue::M(entry) = entry else {
            return Err(f.malformed(name));
        };
        let e = Fields::new(entry);
        holds.push(PlaceHold {
            order: OrderId::parse(order).map_err(|_| f.malformed(name))?,
            quantity: e.u32(HOLD_QUANTITY).map_err(|_| f.malformed(name))?,
            expires_at: Millis(e.i64(HOLD_EXPIRY).map_err(|_| f.malformed(name))?),
        });
    }
    holds.sort_by(|a, b| a.order.cmp(&b.order));
    Ok(holds)
}

// ----- expressions ---------------------------------------------------------
// A general-admission bucket's expressions (`GA#…`): takes, give-backs,
// extensions and sales. Names: `#free`, `#sold`, `#me` (this order's
// hold entry), `#q`/`#e` (an entry's quantity and expiry), `#x{i}` (an
// expired hold of another order); values: `:delta`, `:need`, `:had`, ….

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
    now: Millis,
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
    .stamped(now)
}

/// A give-back: `order`'s entry lowered from `had` to `keeps` (removed at
/// zero), `free` raised by as much, only while the entry is as recorded
/// (at `now`).
pub(in crate::store) fn give(order: &OrderId, had: u32, keeps: u32, now: Millis) -> Expression {
    let update = if keeps == 0 {
        Expression::update("SET #free = #free + :give REMOVE #me")
    } else {
        Expression::update("SET #free = #free + :give, #me.#q = :keeps").value(":keeps", n(keeps))
    };
    update
        .and(entry_is(order, had))
        .name("#free", FREE)
        .value(":give", n(had - keeps))
        .stamped(now)
}

/// extend-order: `order`'s entry (of `had` places) now expires at
/// `expires_at` (at `now`).
pub(in crate::store) fn extend(
    order: &OrderId,
    had: u32,
    expires_at: Millis,
    now: Millis,
) -> Expression {
    Expression::update("SET #me.#e = :exp")
        .and(entry_is(order, had))
        .name("#e", HOLD_EXPIRY)
        .value(":exp", n(expires_at.0))
        .stamped(now)
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
    now: Millis,
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
    if !condition.has_condition() {
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
        .stamped(now)
}
