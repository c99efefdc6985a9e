//! The order item's codec: an order as stored, read back (its holds,
//! its buyer, whose offer it is, and what best-available recorded under
//! each key). The key, the attribute names and the expressions are
//! `items/order.rs`.

use crate::domain::waitlist::EndReason;
use std::collections::HashMap;

use super::super::keyed_block::parse_keyed_blocks;
use super::super::visitor::VISITOR_ID;
use super::{
    parse_place_member, BUYER_ID, BUYER_LIMIT, BUYER_REF, EXTRA_PAYMENT_IDS, HOLDER_DEADLINE,
    OFFER_BUYER_ID, OFFER_CANCELLED_AS, OFFER_EMPTIED_AT, OFFER_GENERATION, PLACE_SEPARATOR,
    REFUND_REASON, USER_ID, WAITLIST_ENTRY_ID,
};
use crate::domain::buyer::BuyerId;
use crate::domain::buyer_limit::BuyerRef;
use crate::domain::ga::HeldPlaces;
use crate::domain::keyed_block::KeyedBlock;
use crate::domain::{
    EntryId, EventId, IdempotencyKey, Millis, OfferOf, Order, OrderBuyer, OrderId, OrderStatus,
    PaymentId, RefundReason, SeatId, VisitorId,
};
use crate::store::errors::StoreError;
use crate::store::schema::{
    CREATED_AT, EVENT_ID, EXPIRES_AT, ORDER_ID, PAYMENT_ID, SEATS, STATUS, TOKEN_HASH, VERSION,
};
use crate::store::value::{Fields, Item};

/// An order as read, with its optimistic-concurrency version and what
/// best-available recorded under each `Idempotency-Key`.
#[derive(Debug, Clone)]
pub struct StoredOrder {
    pub order: Order,
    pub version: i64,
    pub keyed_blocks: HashMap<IdempotencyKey, KeyedBlock>,
    /// It has listings (returns) to read.
    pub has_returns: bool,
}

/// A string set's members, sorted.
fn sorted_set(f: &Fields, attr: &str) -> Result<Vec<String>, StoreError> {
    let mut v = f.string_set(attr)?;
    v.sort();
    Ok(v)
}

/// The order's seats, and its places counted per bucket: the one set
/// holds both (see `place_member`).
fn parse_holds(f: &Fields) -> Result<(Vec<SeatId>, Vec<HeldPlaces>), StoreError> {
    let (place_members, seat_ids): (Vec<String>, Vec<String>) = sorted_set(f, SEATS)?
        .into_iter()
        .partition(|x| x.contains(PLACE_SEPARATOR));
    let seats = seat_ids
        .iter()
        .map(|x| SeatId::parse(x).map_err(|_| f.malformed(SEATS)))
        .collect::<Result<_, _>>()?;
    let mut places: Vec<HeldPlaces> = Vec::new();
    for member in &place_members {
        let (section, bucket) = parse_place_member(member).ok_or_else(|| f.malformed(SEATS))?;
        match places
            .iter_mut()
            .find(|p| p.section == section && p.bucket == bucket)
        {
            Some(held) => held.quantity += 1,
            None => places.push(HeldPlaces {
                section,
                bucket,
                quantity: 1,
            }),
        }
    }
    Ok((seats, places))
}

pub(crate) fn parse_order(item: &Item) -> Result<StoredOrder, StoreError> {
    let f = Fields::new(item);
    let (seats, places) = parse_holds(&f)?;
    let refund_payment_ids = sorted_set(&f, EXTRA_PAYMENT_IDS)?
        .iter()
        .map(|x| PaymentId::parse(x).map_err(|_| f.malformed(EXTRA_PAYMENT_IDS)))
        .collect::<Result<_, _>>()?;
    let expires_at = Millis(f.i64(EXPIRES_AT)?);
    let event_id = f.id(EVENT_ID, EventId::parse)?;
    let buyer = parse_buyer(&f, &event_id)?;
    let order = Order {
        order_id: f.id(ORDER_ID, OrderId::parse)?,
        event_id,
        status: OrderStatus::parse(f.str(STATUS)?).ok_or_else(|| f.malformed(STATUS))?,
        expires_at,
        holder_deadline: Millis(f.i64(HOLDER_DEADLINE)?),
        created_at: Millis(f.i64(CREATED_AT)?),
        token_hash: f.str(TOKEN_HASH)?.to_owned(),
        seats,
        places,
        payment_id: f
            .opt_s(PAYMENT_ID)
            .map(PaymentId::parse)
            .transpose()
            .map_err(|_| f.malformed(PAYMENT_ID))?,
        refund_payment_ids,
        refund_reason: f
            .opt_s(REFUND_REASON)
            .map(|r| RefundReason::parse(r).ok_or_else(|| f.malformed(REFUND_REASON)))
            .transpose()?,
        user_id: f.opt_s(USER_ID).map(str::to_owned),
        visitor_id: f
            .opt_s(VISITOR_ID)
            .map(VisitorId::parse)
            .transpose()
            .map_err(|_| f.malformed(VISITOR_ID))?,
        buyer,
        offer: parse_offer(&f)?,
    };
    Ok(StoredOrder {
        order,
        version: f.opt_i64(VERSION)?.unwrap_or(0),
        keyed_blocks: parse_keyed_blocks(item)?,
        has_returns: item
            .get(crate::store::items::returns::HAS_RETURNS)
            .and_then(|v| v.as_bool().ok())
            .is_some_and(|marked| *marked),
    })
}

/// Whose offer an order is, if it is one.
fn parse_offer(f: &Fields) -> Result<Option<OfferOf>, StoreError> {
    let Some(entry) = f.opt_s(WAITLIST_ENTRY_ID) else {
        return Ok(None);
    };
    let (resales, place_resales) = super::parse_resales(f)?;
    Ok(Some(OfferOf {
        entry_id: EntryId::parse(entry).map_err(|_| f.malformed(WAITLIST_ENTRY_ID))?,
        buyer_id: BuyerId::parse(f.str(OFFER_BUYER_ID)?)
            .ok_or_else(|| f.malformed(OFFER_BUYER_ID))?,
        cancelled_as: f
            .opt_s(OFFER_CANCELLED_AS)
            .map(|reason| EndReason::parse(reason).ok_or_else(|| f.malformed(OFFER_CANCELLED_AS)))
            .transpose()?,
        generation: f
            .opt_i64(OFFER_GENERATION)?
            .map(|g| u64::try_from(g).map_err(|_| f.malformed(OFFER_GENERATION)))
            .transpose()?,
        resales,
        place_resales,
        emptied_at: f.opt_i64(OFFER_EMPTIED_AT)?.map(Millis),
    }))
}

/// An order's buyer: its id and limit, or neither; its ref as stored, or
/// (an order from before refs were stored) `event`'s plain one.
fn parse_buyer(f: &Fields, event: &EventId) -> Result<Option<OrderBuyer>, StoreError> {
    let Some(id) = f.opt_s(BUYER_ID) else {
        return Ok(None);
    };
    let buyer_id = BuyerId::parse(id).ok_or_else(|| f.malformed(BUYER_ID))?;
    let buyer_ref = match f.opt_s(BUYER_REF) {
        Some(hex) => BuyerRef::from_hex(hex).ok_or_else(|| f.malformed(BUYER_REF))?,
        None => BuyerRef::unkeyed(event, &buyer_id),
    };
    Ok(Some(OrderBuyer {
        buyer_id,
        limit: f.u32(BUYER_LIMIT)?,
        buyer_ref,
    }))
}
