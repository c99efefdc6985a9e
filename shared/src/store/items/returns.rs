//! A seller's listings (API.md, "Returns"): one item per seat, or per
//! general-admission section, of the order that bought it,
//! `RETURN#{orderId}` / `{unit}` (a seat id, or `ga:{section}`), so one
//! strongly consistent Query reads an order's listings and IAM can grant
//! them by their own prefix. Their keys, attribute names, codec and
//! expressions.

use std::collections::HashMap;

use crate::domain::returns::{Listing, ListingWrite, Resale, ReturnStatus, ReturnUnit};
use crate::domain::{EventId, Millis, OrderId, PaymentId};
use crate::store::errors::StoreError;
use crate::store::expression::Expression;
use crate::store::schema::{EVENT_ID, KIND, PK, SK, VERSION};
use crate::store::value::{n, s, Fields, Item};

pub const RETURN_PK_PREFIX: &str = "RETURN#";
pub(in crate::store) const RETURN_ORDER_ID: &str = "orderId";
pub(in crate::store) const UNIT: &str = "unit";
pub(in crate::store) const QUANTITY: &str = "quantity";
pub(in crate::store) const RETURN_STATUS: &str = "returnStatus";
pub(in crate::store) const GENERATION: &str = "generation";
pub(in crate::store) const LISTED_AT: &str = "listedAt";
pub(in crate::store) const CLOSES_AT: &str = "closesAt";
pub(in crate::store) const RESALE_ORDER_ID: &str = "resaleOrderId";
pub(in crate::store) const RESALE_PAYMENT_ID: &str = "resalePaymentId";
pub(in crate::store) const RESOLD_AT: &str = "resoldAt";
/// On the order: it has listings, so get-order reads them.
pub(in crate::store) const HAS_RETURNS: &str = "hasReturns";

/// Every attribute a listing's writes name (IAM's `dynamodb:Attributes`
/// for the function that lists and withdraws).
pub const RETURN_ATTRIBUTES: [&str; 13] = [
    PK,
    SK,
    KIND,
    EVENT_ID,
    RETURN_ORDER_ID,
    UNIT,
    QUANTITY,
    RETURN_STATUS,
    GENERATION,
    LISTED_AT,
    CLOSES_AT,
    VERSION,
    crate::store::schema::CHANGED_AT,
];

/// Every attribute a resale's writes of a listing name (IAM's
/// `dynamodb:Attributes` for the functions that confirm payments): a
/// seat's listing marked resold, a listing of places made fewer, and the
/// record of a resale of places written whole.
pub const RESOLD_ATTRIBUTES: [&str; 16] = [
    PK,
    SK,
    KIND,
    EVENT_ID,
    RETURN_ORDER_ID,
    UNIT,
    QUANTITY,
    RETURN_STATUS,
    GENERATION,
    LISTED_AT,
    CLOSES_AT,
    RESALE_ORDER_ID,
    RESALE_PAYMENT_ID,
    RESOLD_AT,
    VERSION,
    crate::store::schema::CHANGED_AT,
];

/// Every attribute the tick's written revert of a listing names (IAM's
/// `dynamodb:Attributes` for offer-waitlists).
pub const REVERT_ATTRIBUTES: [&str; 6] = [
    PK,
    SK,
    RETURN_STATUS,
    LISTED_AT,
    VERSION,
    crate::store::schema::CHANGED_AT,
];

/// The partition of `order`'s listings.
pub(in crate::store) fn returns_pk(order: &OrderId) -> String {
    format!("{RETURN_PK_PREFIX}{order}")
}

/// `unit`'s listing of `order`.
pub(in crate::store) fn return_key(order: &OrderId, unit: &ReturnUnit) -> Item {
    HashMap::from([
        (PK.into(), s(returns_pk(order))),
        (SK.into(), s(unit.key())),
    ])
}

/// Every listing of `order` (a key condition).
pub(in crate::store) fn listings_of(order: &OrderId) -> Expression {
    Expression::key_condition("#pk = :pk")
        .name("#pk", PK)
        .value(":pk", s(returns_pk(order)))
}

/// A listing as written by `write` at `now` under `generation`, its cutoff
/// `closes_at`: the whole item over the version read (or a new one), its
/// version one more.
pub(in crate::store) fn list(
    event: &EventId,
    order: &OrderId,
    write: &ListingWrite,
    generation: u64,
    closes_at: Millis,
    now: Millis,
) -> Expression {
    let version = write.replaces.map_or(0, |v| v + 1);
    let attributes = vec![
        (KIND.into(), s("return")),
        (EVENT_ID.into(), s(event.as_str())),
        (RETURN_ORDER_ID.into(), s(order.as_str())),
        (UNIT.into(), s(write.unit.key())),
        (QUANTITY.into(), n(write.quantity)),
        (RETURN_STATUS.into(), s(ReturnStatus::Listed.as_str())),
        (GENERATION.into(), n(generation)),
        (LISTED_AT.into(), n(now.0)),
        (CLOSES_AT.into(), n(closes_at.0)),
        (VERSION.into(), n(version)),
    ];
    Expression::set_all(attributes)
        .stamped(now)
        .and(super::as_read(write.replaces.map(version_number)))
}

/// A listing withdrawn at `now`, over the version read (which read
/// `LISTED`).
pub(in crate::store) fn withdraw(read: u64, now: Millis) -> Expression {
    Expression::update("SET #status = :withdrawn, #version = :next")
        .and(super::as_read(Some(version_number(read))))
        .name("#status", RETURN_STATUS)
        .value(":withdrawn", s(ReturnStatus::Withdrawn.as_str()))
        .value(":next", n(read + 1))
        .stamped(now)
}

/// A listed seat resold at `now` to `order`, paid by `payment` (its
/// resale item, checked in the same transaction, says `order`'s offer
/// holds it).
pub(in crate::store) fn resell(order: &OrderId, payment: &PaymentId, now: Millis) -> Expression {
    Expression::update(
        "SET #status = :resold, #resaleOrder = :order, #resalePayment = :payment, \
         #resoldAt = :now ADD #version :one",
    )
    .and(Expression::condition("#status = :listed"))
    .name("#status", RETURN_STATUS)
    .name("#resaleOrder", RESALE_ORDER_ID)
    .name("#resalePayment", RESALE_PAYMENT_ID)
    .name("#resoldAt", RESOLD_AT)
    .name("#version", VERSION)
    .value(":resold", s(ReturnStatus::Resold.as_str()))
    .value(":listed", s(ReturnStatus::Listed.as_str()))
    .value(":order", s(order.as_str()))
    .value(":payment", s(payment.as_str()))
    .value(":now", n(now.0))
    .value(":one", n(1))
    .stamped(now)
}

/// A listing of places `sold` fewer at `now`: that many of them were
/// resold (each resale is a record of its own, [`resold_places`]), the
/// rest stays `LISTED`.
pub(in crate::store) fn resell_places(sold: u32, now: Millis) -> Expression {
    Expression::update("ADD #quantity :fewer, #version :one")
        .and(Expression::condition(
            "#status = :listed AND #quantity >= :sold",
        ))
        .name("#quantity", QUANTITY)
        .name("#status", RETURN_STATUS)
        .name("#version", VERSION)
        .value(":fewer", n(-i64::from(sold)))
        .value(":sold", n(sold))
        .value(":listed", s(ReturnStatus::Listed.as_str()))
        .value(":one", n(1))
        .stamped(now)
}

/// The key of the record of `seller`'s places of `unit` resold to `buyer`
/// (`ga:{section}#{buyer}`, beside the listing): one per resale.
pub(in crate::store) fn resale_record_key(
    seller: &OrderId,
    unit: &ReturnUnit,
    buyer: &OrderId,
) -> Item {
    HashMap::from([
        (PK.into(), s(returns_pk(seller))),
        (SK.into(), s(format!("{}#{buyer}", unit.key()))),
    ])
}

/// What a resale of listed places records: `quantity` of `listing`'s
/// places (its seller's of `unit`, listed under `generation` at
/// `listed_at`) resold to `buyer`, paid by `payment`, at `now`; written
/// whole, once.
pub(in crate::store) struct PlacesResold<'a> {
    pub event: &'a EventId,
    pub seller: &'a OrderId,
    pub unit: &'a ReturnUnit,
    pub quantity: u32,
    pub generation: u64,
    pub listed_at: Millis,
    pub buyer: &'a OrderId,
    pub payment: &'a PaymentId,
}

/// The record of a resale of listed places, a `RESOLD` listing of its
/// own (the listing splits: API.md), written at `now` if it is new. Its
/// `closesAt` is when it was resold (no cutoff applies to it).
pub(in crate::store) fn resold_places(resold: &PlacesResold<'_>, now: Millis) -> Expression {
    let attributes = vec![
        (KIND.into(), s("return")),
        (EVENT_ID.into(), s(resold.event.as_str())),
        (RETURN_ORDER_ID.into(), s(resold.seller.as_str())),
        (UNIT.into(), s(resold.unit.key())),
        (QUANTITY.into(), n(resold.quantity)),
        (RETURN_STATUS.into(), s(ReturnStatus::Resold.as_str())),
        (GENERATION.into(), n(resold.generation)),
        (LISTED_AT.into(), n(resold.listed_at.0)),
        (CLOSES_AT.into(), n(now.0)),
        (RESALE_ORDER_ID.into(), s(resold.buyer.as_str())),
        (RESALE_PAYMENT_ID.into(), s(resold.payment.as_str())),
        (RESOLD_AT.into(), n(now.0)),
        (VERSION.into(), n(0)),
    ];
    Expression::set_all(attributes)
        .stamped(now)
        .and(Expression::new_item())
}

/// A listing reverted to its owner, written by the tick at `now`: still
/// `LISTED`, and the listing made at `listed_at` (one made again since is
/// not this one's to revert).
pub(in crate::store) fn revert(listed_at: Millis, now: Millis) -> Expression {
    Expression::update("SET #status = :reverted ADD #version :one")
        .and(Expression::condition(
            "#status = :listed AND #listedAt = :listedAt",
        ))
        .name("#status", RETURN_STATUS)
        .name("#listedAt", LISTED_AT)
        .name("#version", VERSION)
        .value(":reverted", s(ReturnStatus::Reverted.as_str()))
        .value(":listed", s(ReturnStatus::Listed.as_str()))
        .value(":listedAt", n(listed_at.0))
        .value(":one", n(1))
        .stamped(now)
}

/// A version as the item stores it (versions count writes: far below
/// `i64::MAX`).
fn version_number(version: u64) -> i64 {
    i64::try_from(version).unwrap_or(i64::MAX)
}

/// The seller's order marked as having listings (it exists: the
/// listing's plan read it `COMPLETED`, which is final).
pub(in crate::store) fn mark_order() -> Expression {
    Expression::update("SET #hasReturns = :true")
        .and(Expression::condition("attribute_exists(PK)"))
        .name("#hasReturns", HAS_RETURNS)
        .value(":true", aws_sdk_dynamodb::types::AttributeValue::Bool(true))
}

pub(in crate::store) fn parse_listing(item: &Item) -> Result<Listing, StoreError> {
    let f = Fields::new(item);
    let number = |attr: &str| u64::try_from(f.i64(attr)?).map_err(|_| f.malformed(attr));
    Ok(Listing {
        unit: ReturnUnit::from_key(f.str(UNIT)?).ok_or_else(|| f.malformed(UNIT))?,
        quantity: f.u32(QUANTITY)?,
        status: ReturnStatus::parse(f.str(RETURN_STATUS)?)
            .ok_or_else(|| f.malformed(RETURN_STATUS))?,
        generation: number(GENERATION)?,
        listed_at: Millis(f.i64(LISTED_AT)?),
        closes_at: Millis(f.i64(CLOSES_AT)?),
        version: number(VERSION)?,
        resale: parse_resale(&f)?,
    })
}

/// A listing's resale, once resold.
fn parse_resale(f: &Fields) -> Result<Option<Resale>, StoreError> {
    let Some(order) = f.opt_s(RESALE_ORDER_ID) else {
        return Ok(None);
    };
    Ok(Some(Resale {
        order_id: OrderId::parse(order).map_err(|_| f.malformed(RESALE_ORDER_ID))?,
        payment_id: PaymentId::parse(f.str(RESALE_PAYMENT_ID)?)
            .map_err(|_| f.malformed(RESALE_PAYMENT_ID))?,
        at: Millis(f.i64(RESOLD_AT)?),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the writes name is exactly what IAM's grant lists.
    #[test]
    fn a_listings_writes_name_exactly_its_declared_attributes() -> Result<(), crate::error::Error> {
        let (event, order) = (EventId::parse("e")?, OrderId::parse("o")?);
        let write = ListingWrite {
            unit: ReturnUnit::Seat(crate::domain::SeatId::parse("A-1-1")?),
            quantity: 1,
            replaces: Some(2),
            places: None,
        };
        let mut named = list(&event, &order, &write, 1, Millis(9), Millis(1)).attribute_names();
        named.extend(withdraw(3, Millis(2)).attribute_names());
        named.extend([PK.to_owned(), SK.to_owned()]);
        assert_eq!(named, crate::store::items::declared(&RETURN_ATTRIBUTES));
        let payment = PaymentId::parse("pay")?;
        let mut resold = resell(&order, &payment, Millis(3)).attribute_names();
        resold.extend(resell_places(2, Millis(3)).attribute_names());
        let unit = ReturnUnit::Places(crate::domain::SectionId::parse("F")?);
        let record = PlacesResold {
            event: &event,
            seller: &order,
            unit: &unit,
            quantity: 2,
            generation: 1,
            listed_at: Millis(1),
            buyer: &order,
            payment: &payment,
        };
        resold.extend(resold_places(&record, Millis(3)).attribute_names());
        resold.extend([PK.to_owned(), SK.to_owned()]);
        assert_eq!(resold, crate::store::items::declared(&RESOLD_ATTRIBUTES));
        let mut reverted = revert(Millis(1), Millis(3)).attribute_names();
        reverted.extend([PK.to_owned(), SK.to_owned()]);
        assert_eq!(reverted, crate::store::items::declared(&REVERT_ATTRIBUTES));
        Ok(())
    }
}
