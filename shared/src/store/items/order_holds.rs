//! An order's side of each claim and release: get-seat's and
//! best-available's seats added, drop-seat's removed (an offer's last one
//! ending it), hold-ga's places added or removed.

use super::super::keyed_block::{keyed_block_attribute, keyed_block_value};
use super::{holdable_by, pending_live, OFFER_EMPTIED_AT, WAITLIST_ENTRY_ID};
use crate::auth::HoldToken;
use crate::domain::keyed_block::KeyedBlock;
use crate::domain::{IdempotencyKey, Millis, OrderStatus};
use crate::store::expression::Expression;
use crate::store::schema::{EXPIRES_AT, SEATS, STATUS, TOKEN_HASH, VERSION};
use crate::store::value::{n, s, ss};

/// get-seat's order side: `seat` added, if the holder may claim and the
/// order has room for it (or holds it already: re-claiming is idempotent).
/// An offer claims nothing it was not offered (`409 waitlist-only`, as its
/// best-available and hold-ga raise are refused before they write).
pub(in crate::store) fn add_seat(
    token: &HoldToken,
    seat: &str,
    max_seats: u32,
    now: Millis,
) -> Expression {
    Expression::update("ADD #seats :seat, #version :one")
        .and(holdable_by(token, now))
        .and(Expression::condition(
            "(attribute_not_exists(#seats) OR size(#seats) < :max OR contains(#seats, :seatId))",
        ))
        .and(Expression::condition(
            "(attribute_not_exists(#offer) OR contains(#seats, :seatId))",
        ))
        .name("#offer", WAITLIST_ENTRY_ID)
        .name("#seats", SEATS)
        .name("#version", VERSION)
        .value(":one", n(1))
        .value(":seat", ss(&[seat]))
        .value(":seatId", s(seat))
        .value(":max", n(max_seats))
}

/// best-available's order side: a block of `seats` added, if the holder may
/// claim and the order holds at most `room` seats now.
pub(in crate::store) fn add_block(
    token: &HoldToken,
    seats: &[&str],
    room: i64,
    keyed: Option<(&IdempotencyKey, &KeyedBlock)>,
    now: Millis,
) -> Expression {
    let update = match keyed {
        None => "ADD #seats :seats, #version :one",
        Some(_) => "ADD #seats :seats, #version :one SET #keyedBlock = :keyedBlock",
    };
    let added = Expression::update(update)
        .and(holdable_by(token, now))
        .and(Expression::condition(
            "(attribute_not_exists(#seats) OR size(#seats) <= :room)",
        ))
        .name("#seats", SEATS)
        .name("#version", VERSION)
        .value(":one", n(1))
        .value(":seats", ss(seats))
        .value(":room", n(room));
    let Some((key, block)) = keyed else {
        return added;
    };
    // The key's record, set once: a retry that lost the race to its own
    // first send fails here, and is answered from the record.
    added
        .and(Expression::condition("attribute_not_exists(#keyedBlock)"))
        .name("#keyedBlock", keyed_block_attribute(key))
        .value(":keyedBlock", keyed_block_value(block, seats))
}

/// drop-seat's order side: `seat` removed, if the holder's order is
/// PENDING, unexpired, and has it, and is no offer it is the last unit of
/// (that drop ends the offer: [`drop_offers_last`]). (Not the guard
/// margin: letting go is always allowed while the order lives.)
pub(in crate::store) fn drop_seat(token: &HoldToken, seat: &str, now: Millis) -> Expression {
    Expression::update("DELETE #seats :seat ADD #version :one")
        .and(dropping(token, seat, now))
        .and(Expression::condition(
            "(attribute_not_exists(#offer) OR size(#seats) > :one)",
        ))
        .name("#offer", WAITLIST_ENTRY_ID)
}

/// drop-seat of an offer's last unit, `seat`, on the order as read
/// (`version`): recorded emptied at `now`, its end logged beside it.
pub(in crate::store) fn drop_offers_last(
    token: &HoldToken,
    seat: &str,
    version: i64,
    now: Millis,
) -> Expression {
    Expression::update("DELETE #seats :seat SET #emptied = :emptiedAt ADD #version :one")
        .and(dropping(token, seat, now))
        .and(Expression::condition("#version = :version"))
        .name("#emptied", OFFER_EMPTIED_AT)
        .value(":emptiedAt", n(now.0))
        .value(":version", n(version))
}

/// What any drop of `seat` asks of the order (the holder's, PENDING,
/// unexpired and holding it), with the names and values its update uses.
fn dropping(token: &HoldToken, seat: &str, now: Millis) -> Expression {
    Expression::condition(concat!(
        "attribute_exists(PK) AND #tokenHash = :tokenHash AND #status = :pending AND ",
        live!("#expiresAt"),
        " AND contains(#seats, :seatId)"
    ))
    .name("#seats", SEATS)
    .name("#version", VERSION)
    .name("#tokenHash", TOKEN_HASH)
    .name("#status", STATUS)
    .name("#expiresAt", EXPIRES_AT)
    .value(":seat", ss(&[seat]))
    .value(":seatId", s(seat))
    .value(":one", n(1))
    .value(":tokenHash", s(token.hash()))
    .value(":pending", s(OrderStatus::Pending.as_str()))
    .value(":now", n(now.0))
}

/// Whether hold-ga adds place members to the order or removes them, or
/// removes an offer's last ones (which ends the offer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::store) enum Places {
    Add,
    Remove,
    Empty,
}

/// hold-ga's order side: `members` added or removed, if the order is as
/// read (`version`) and its holder may still change it. An offer's last
/// places given back (`Places::Empty`) record it emptied at `now`.
pub(in crate::store) fn change_places(
    token: &HoldToken,
    change: Places,
    members: &[&str],
    version: i64,
    now: Millis,
) -> Expression {
    let update = match change {
        Places::Add => "ADD #seats :places, #version :one",
        Places::Remove => "DELETE #seats :places ADD #version :one",
        Places::Empty => "DELETE #seats :places SET #emptied = :emptiedAt ADD #version :one",
    };
    let update = match change {
        Places::Empty => Expression::update(update)
            .name("#emptied", OFFER_EMPTIED_AT)
            .value(":emptiedAt", n(now.0)),
        Places::Add | Places::Remove => Expression::update(update),
    };
    update
        .and(Expression::condition(
            "#tokenHash = :tokenHash AND #version = :version",
        ))
        .and(pending_live(now))
        .name("#seats", SEATS)
        .name("#version", VERSION)
        .name("#tokenHash", TOKEN_HASH)
        .value(":places", ss(members))
        .value(":one", n(1))
        .value(":version", n(version))
        .value(":tokenHash", s(token.hash()))
}
