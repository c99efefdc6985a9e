//! The seat item (`SEATS#{ref}#{section}-{row}#{block}`, SK
//! `SEAT#{seatId}`): its key, its codec and its expressions.

use crate::domain::{
    EventId, EventRef, Millis, OrderId, PaymentId, RowId, Seat, SeatId, SeatSpec, SeatState,
    SectionId,
};
use crate::store::errors::StoreError;
use crate::store::expression::Expression;
use crate::store::schema::{PAYMENT_ID, PK, SEAT_ID, SECTION_ID, SK, STATUS};
use crate::store::value::{n, s, Fields, Item};
use aws_sdk_dynamodb::types::AttributeValue;
use std::collections::HashMap;

/// The partition key of a seat's block: `SEATS#{event ref}#{section}-{row}#{block}`,
/// block = (number - 1) / [`SEAT_BLOCK_SIZE`]. Computed from the seat id
/// alone, so a claim needs no read. An id no plan produces gets a key of
/// its own where no item exists (the claim then answers seat-not-found).
pub const SEAT_PK_PREFIX: &str = "SEATS#";

pub(in crate::store) const SEAT_SK_PREFIX: &str = "SEAT#";

/// Seats of a row are keyed in blocks of this many consecutive numbers, one
/// partition key per block, so that an on-sale's hottest row spreads over
/// several keys (docs/SCALE.md has the arithmetic; the bench measures it).
pub const SEAT_BLOCK_SIZE: u32 = 10;

pub(in crate::store) fn seat_block_pk(event: &EventRef, seat: &SeatId) -> String {
    match seat.row_and_number().filter(|(_, number)| *number >= 1) {
        Some((row, number)) => format!(
            "{SEAT_PK_PREFIX}{event}#{row}#{}",
            (number - 1) / SEAT_BLOCK_SIZE
        ),
        None => format!("{SEAT_PK_PREFIX}{event}#{seat}#-"),
    }
}

pub(in crate::store) fn seat_key(event: &EventRef, seat: &SeatId) -> Item {
    HashMap::from([
        (PK.into(), s(seat_block_pk(event, seat))),
        (SK.into(), s(format!("{SEAT_SK_PREFIX}{seat}"))),
    ])
}

/// The key of a seat item, for the test harness's raw reads (the store's
/// readers go through [`Store`]).
pub fn seat_item_key(event: &EventId, seat: &SeatId) -> HashMap<String, AttributeValue> {
    seat_key(&EventRef::of(event), seat)
}

pub(in crate::store) const ROW: &str = "row";

pub(in crate::store) const NUMBER: &str = "number";

pub(in crate::store) const ORDINAL: &str = "ordinal";

pub(in crate::store) const HOLDER: &str = "holderOrderId";

pub(in crate::store) const HOLD_EXPIRES_AT: &str = "holdExpiresAt";

pub(in crate::store) const SEAT_AVAILABLE: &str = "AVAILABLE";

pub(in crate::store) const SEAT_HELD: &str = "HELD";

pub(in crate::store) const SEAT_SOLD: &str = "SOLD";

/// On a seat item: how many seats its seat-map part has.
pub(in crate::store) const PART_SEATS: &str = "partSeats";

/// On a seat of a row the run summaries cover: which of its event's
/// summary items holds its row (`domain::RunsLayout`). Seats created while
/// each section had items of its own carry `runsItem` instead, which
/// nothing reads: their rows have no summary, and best-available reads
/// them. The row's seat-map projection item keeps it too, once a change
/// of a seat that names it is projected (`seat_map.rs`): a row created
/// across that deploy has seats of both kinds, and its summary follows
/// every one of them.
pub(in crate::store) const RUNS_ITEM: &str = "eventRunsItem";

/// On a seat of a row the run summaries cover that has wheelchair spaces:
/// their seat numbers (a number set), so the projector, which knows a row
/// only from its seats' images, can summarise the row's clear run
/// (`domain::RowRuns::clear`). Seats of such rows created before it carry
/// none, and their summaries count wheelchair spaces like any seat (a
/// request for none may then read a row for nothing, never miss one).
pub(in crate::store) const ROW_WHEELCHAIR: &str = "rowWheelchair";

// ----- codec ---------------------------------------------------------------

pub(in crate::store) fn parse_seat(item: &Item) -> Result<Seat, StoreError> {
    let f = Fields::new(item);
    let spec = SeatSpec {
        seat_id: f.id(SEAT_ID, SeatId::parse)?,
        section_id: f.id(SECTION_ID, SectionId::parse)?,
        row: f.id(ROW, RowId::parse)?,
        number: f.u32(NUMBER)?,
        ordinal: f.u32(ORDINAL)?,
    };
    let state = match f.str(STATUS)? {
        SEAT_AVAILABLE => SeatState::Available,
        SEAT_HELD => SeatState::Held {
            order: f.id(HOLDER, OrderId::parse)?,
            expires_at: Millis(f.i64(HOLD_EXPIRES_AT)?),
        },
        SEAT_SOLD => SeatState::Sold {
            order: f.id(HOLDER, OrderId::parse)?,
        },
        _ => return Err(f.malformed(STATUS)),
    };
    Ok(Seat { spec, state })
}

// ----- expressions ---------------------------------------------------------
// A seat item's expressions (`SEATS#…`/`SEAT#…`): claims, sales and
// releases. Names: `#status`, `#holder`, `#holdExp`, `#payment`; values:
// `:order`, `:now`, `:sold`, `:held`, `:available`, `:exp`, `:payment`.

/// The claim condition (invariants 1–3): the seat exists, is not sold, and
/// is unheld, already this order's, or held by a hold that has expired —
/// compared with the writer's clock, so no sweep is needed first.
const FREE_FOR_ORDER: &str = concat!(
    "attribute_exists(PK) AND #status <> :sold AND (attribute_not_exists(#holder) OR #holder = :order OR ",
    expired!("#holdExp"),
    ")"
);

/// best-available's seat condition: like [`FREE_FOR_ORDER`] but not a seat
/// the order holds already (its own holds count as unavailable: a stale
/// read must not turn into a "claim" of a seat it has).
const FREE_FOR_ANOTHER: &str = concat!(
    "attribute_exists(PK) AND #status <> :sold AND (attribute_not_exists(#holder) OR (#holder <> :order AND ",
    expired!("#holdExp"),
    "))"
);

/// Only the holding order's hold can be released (drop-seat, the sweep).
const HELD_BY_ORDER: &str = "#holder = :order AND #status = :held";

/// The paid seats' condition in confirm's common and live paths: still
/// held by the order and unexpired (the order's own condition carries the
/// guard margin).
const HELD_BY_ORDER_LIVE: &str = concat!(
    "#holder = :order AND #status = :held AND ",
    live!("#holdExp")
);

/// Whose claim a seat is free for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::store) enum FreeFor {
    /// get-seat: re-claiming a seat the order holds is idempotent.
    Order,
    /// best-available: a seat the order holds already is not "free".
    Another,
}

/// The names every seat expression uses, and `:order`.
fn seat(order: &OrderId, text: Expression) -> Expression {
    text.name("#status", STATUS)
        .name("#holder", HOLDER)
        .name("#holdExp", HOLD_EXPIRES_AT)
        .value(":order", s(order.as_str()))
}

/// A claim for `order` until `expires_at`, if the seat is free for it.
pub(in crate::store) fn claim(
    order: &OrderId,
    expires_at: Millis,
    free_for: FreeFor,
    now: Millis,
) -> Expression {
    let condition = match free_for {
        FreeFor::Order => FREE_FOR_ORDER,
        FreeFor::Another => FREE_FOR_ANOTHER,
    };
    seat(
        order,
        Expression::update("SET #status = :held, #holder = :order, #holdExp = :exp")
            .and(Expression::condition(condition)),
    )
    .value(":held", s(SEAT_HELD))
    .value(":sold", s(SEAT_SOLD))
    .value(":exp", n(expires_at.0))
    .value(":now", n(now.0))
    .stamped(now)
}

/// A late payment's seat: sold to `order` if it is free for it (unheld,
/// its own, or held by an expired hold), recording the payment.
pub(in crate::store) fn take_paid(order: &OrderId, payment: &PaymentId, now: Millis) -> Expression {
    seat(
        order,
        Expression::update(
            "SET #status = :sold, #holder = :order, #payment = :payment REMOVE #holdExp",
        )
        .and(Expression::condition(FREE_FOR_ORDER)),
    )
    .name("#payment", PAYMENT_ID)
    .value(":payment", s(payment.as_str()))
    .value(":sold", s(SEAT_SOLD))
    .value(":now", n(now.0))
    .stamped(now)
}

/// A seat `order` holds, sold while its hold is live; it records the
/// payment, so its stream record alone says who paid (publish-events).
pub(in crate::store) fn sell_held(order: &OrderId, payment: &PaymentId, now: Millis) -> Expression {
    seat(
        order,
        Expression::update("SET #status = :sold, #payment = :payment REMOVE #holdExp")
            .and(Expression::condition(HELD_BY_ORDER_LIVE)),
    )
    .name("#payment", PAYMENT_ID)
    .value(":payment", s(payment.as_str()))
    .value(":sold", s(SEAT_SOLD))
    .value(":held", s(SEAT_HELD))
    .value(":now", n(now.0))
    .stamped(now)
}

/// A listed seat resold to `order`: still sold to `seller`, now sold to
/// the offer's order, recording its payment (the resale item checked in
/// the same transaction says the offer holds it). Never free between.
pub(in crate::store) fn resell(
    seller: &OrderId,
    order: &OrderId,
    payment: &PaymentId,
    now: Millis,
) -> Expression {
    // Not `seat()`'s names: a sold seat has no hold expiry to name.
    Expression::update("SET #holder = :order, #payment = :payment")
        .and(Expression::condition(
            "#status = :sold AND #holder = :seller",
        ))
        .name("#status", STATUS)
        .name("#holder", HOLDER)
        .name("#payment", PAYMENT_ID)
        .value(":order", s(order.as_str()))
        .value(":payment", s(payment.as_str()))
        .value(":sold", s(SEAT_SOLD))
        .value(":seller", s(seller.as_str()))
        .stamped(now)
}

/// Releases a seat only if `order` still holds it (drop-seat, confirm's
/// unpaid holds, cancel-order, the sweep) at `now`.
pub(in crate::store) fn release_held(order: &OrderId, now: Millis) -> Expression {
    seat(
        order,
        Expression::update("SET #status = :available REMOVE #holder, #holdExp")
            .and(Expression::condition(HELD_BY_ORDER)),
    )
    .value(":held", s(SEAT_HELD))
    .value(":available", s(SEAT_AVAILABLE))
    .stamped(now)
}

/// Moves the expiry of a hold `order` still has (extend-order, at `now`).
pub(in crate::store) fn extend_held(
    order: &OrderId,
    expires_at: Millis,
    now: Millis,
) -> Expression {
    seat(
        order,
        Expression::update("SET #holdExp = :exp").and(Expression::condition(HELD_BY_ORDER)),
    )
    .value(":held", s(SEAT_HELD))
    .value(":exp", n(expires_at.0))
    .stamped(now)
}
