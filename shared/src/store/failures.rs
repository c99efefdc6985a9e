//! Cancelled transactions, decided: DynamoDB's per-item `CancellationReasons`
//! turned into the contract's errors by pure functions (no I/O, unit-tested
//! below). The rules, in one place:
//!
//! - Throttling (or any reason that is neither a condition nor a conflict)
//!   on any item: `503 store-unavailable`. Never a 409 that lies.
//! - The order's own condition first: missing order 404, wrong token 401,
//!   not holdable 409 `order-not-holdable`.
//! - A seat's condition failure: another order has it (`seat-held`, or
//!   `seat-sold` if it is sold).
//! - A `TransactionConflict` on the seat: another transaction was writing
//!   it at that instant, and it may yet fail, so nothing is decided: the
//!   caller reads the seat (get-seat) or chooses again (best-available),
//!   never answers `seat-held` on it. get-seat reads it too when DynamoDB
//!   throttled the seat's item alone (a crowd on its partition).
//! - A `TransactionConflict` on the order alone: 503 (retry).

use aws_sdk_dynamodb::types::{AttributeValue, CancellationReason};

use super::items::seat::{HOLDER, HOLD_EXPIRES_AT, SEAT_HELD, SEAT_SOLD};
use super::{parse_order, Fields, Item, StoreError, StoredOrder, STATUS};
use crate::auth::HoldToken;
use crate::domain::crowd::SeatSeen;
use crate::domain::Millis;
use crate::error::Error;
use crate::reason::Reason;

/// Why one item of a cancelled transaction failed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ItemFailure {
    /// Its condition failed; the item before the transaction (None: absent).
    Condition(Option<Item>),
    /// Another transaction was changing the item at the same time.
    Conflict,
    /// Throttled: nothing was decided about the item (the code, for the log).
    Unavailable(String),
    /// A reason no retry will change (`ValidationError`,
    /// `ItemCollectionSizeLimitExceeded`, an unknown code): a bug or a limit.
    Rejected(String),
}

/// Per-item reasons that mean "throttled, try again".
const THROTTLED_REASONS: &[&str] = &[
    "ThrottlingError",
    "ProvisionedThroughputExceeded",
    "RequestLimitExceeded",
];

/// Per-item outcome of a cancelled `TransactWriteItems`, in request order:
/// `None` for items that did not cause the cancellation.
pub(crate) fn cancellation(reasons: &[CancellationReason]) -> Vec<Option<ItemFailure>> {
    reasons
        .iter()
        .map(|r| match r.code() {
            Some("ConditionalCheckFailed") => Some(ItemFailure::Condition(r.item().cloned())),
            Some("TransactionConflict") => Some(ItemFailure::Conflict),
            Some("None") | None => None,
            Some(code) if THROTTLED_REASONS.contains(&code) => {
                Some(ItemFailure::Unavailable(code.to_owned()))
            }
            Some(code) => Some(ItemFailure::Rejected(code.to_owned())),
        })
        .collect()
}

/// A cancellation with a reason that is not about the data: throttling is
/// a retryable 503 (logged with every item's code); a reason no retry will
/// change is an internal error (500, its codes in the log).
pub(crate) fn unavailable_in(
    operation: &'static str,
    reasons: &[Option<ItemFailure>],
) -> Option<Error> {
    if reasons
        .iter()
        .any(|r| matches!(r, Some(ItemFailure::Rejected(_))))
    {
        return Some(Error::from(StoreError::Rejected {
            op: operation,
            codes: codes(reasons).join(", "),
        }));
    }
    if !reasons
        .iter()
        .any(|r| matches!(r, Some(ItemFailure::Unavailable(_))))
    {
        return None;
    }
    Some(unexplained(operation, reasons))
}

fn codes(reasons: &[Option<ItemFailure>]) -> Vec<&str> {
    reasons
        .iter()
        .map(|r| match r {
            None => "None",
            Some(ItemFailure::Condition(_)) => "ConditionalCheckFailed",
            Some(ItemFailure::Conflict) => "TransactionConflict",
            Some(ItemFailure::Unavailable(code) | ItemFailure::Rejected(code)) => code.as_str(),
        })
        .collect()
}

/// A cancelled write of a queue's or a waitlist's state (put-queue,
/// delete-queue, a joiner admitted on the spot, put-waitlist, an opening):
/// throttling is a 503; a failed condition or a conflict means someone
/// wrote it first, `Ok(())`: read it again.
pub(crate) fn state_write(reasons: &[Option<ItemFailure>]) -> Result<(), Error> {
    match unavailable_in("TransactWriteItems", reasons) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Why an order opened under an admission was not written: its item
/// exists (the retry of an order with an `Idempotency-Key`, the item as it
/// is), or the admission has opened all it may.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum AdmittedOrderFailure {
    Exists(Option<Item>),
    AdmissionUsed,
}

/// The cancelled transaction of create-order under an admission: item 0 is
/// the order's put, item 1 the admission's count. Throttling or a conflict
/// is a 503 (nothing was decided).
pub(crate) fn admitted_order_failure(
    reasons: &[Option<ItemFailure>],
) -> Result<AdmittedOrderFailure, Error> {
    if let Some(e) = unavailable_in("TransactWriteItems", reasons) {
        return Err(e);
    }
    match (reasons.first(), reasons.get(1)) {
        (Some(Some(ItemFailure::Condition(item))), _) => {
            Ok(AdmittedOrderFailure::Exists(item.clone()))
        }
        (_, Some(Some(ItemFailure::Condition(_)))) => Ok(AdmittedOrderFailure::AdmissionUsed),
        _ => Err(unexplained("TransactWriteItems", reasons)),
    }
}

/// Logs a cancellation's reason codes (the 503's cause) and returns the 503.
pub(crate) fn unexplained(operation: &'static str, reasons: &[Option<ItemFailure>]) -> Error {
    let codes = codes(reasons);
    tracing::warn!(operation, reasons = ?codes, "transaction cancelled: store unavailable");
    Error::StoreUnavailable
}

/// Explains an order item's failed condition on the holder's routes, in the
/// contract's precedence: missing order, wrong token, not holdable.
/// `Ok(None)`: the order was fine on those counts (or did not fail).
pub(crate) fn order_error(
    failure: Option<&ItemFailure>,
    token: &HoldToken,
    now: Millis,
) -> Result<Option<Error>, StoreError> {
    match failure {
        Some(ItemFailure::Condition(None)) => Ok(Some(Error::OrderNotFound)),
        Some(ItemFailure::Condition(Some(item))) => {
            let stored = parse_order(item)?;
            if !token.matches(&stored.order.token_hash) {
                return Ok(Some(Error::Unauthorized(Reason::HoldTokenOtherOrder)));
            }
            if !stored.order.is_holdable(now) {
                return Ok(Some(Error::OrderNotHoldable));
            }
            Ok(None)
        }
        _ => Ok(None),
    }
}

/// The holder's token was right but carried an expiry the order has moved
/// past (extend-order since): the order's own expiry, to retry with. Only
/// when that was the order's one problem; otherwise `None` and the usual
/// decision follows.
pub(crate) fn extended_since(
    failure: Option<&ItemFailure>,
    token: &HoldToken,
    now: Millis,
) -> Result<Option<Millis>, StoreError> {
    let Some(ItemFailure::Condition(Some(item))) = failure else {
        return Ok(None);
    };
    let order = parse_order(item)?.order;
    let stale = token.matches(&order.token_hash)
        && order.is_holdable(now)
        && order.expires_at != token.expires_at();
    Ok(stale.then_some(order.expires_at))
}

/// drop-seat's order, when its one problem was that `seat` is the last
/// unit of a live offer the holder's token opens: the order as it read,
/// for the drop that ends the offer (`items::order::drop_offers_last`).
pub(crate) fn offers_last(
    failure: Option<&ItemFailure>,
    seat: &str,
    token: &HoldToken,
    now: Millis,
) -> Result<Option<StoredOrder>, StoreError> {
    let Some(stored) = holding(failure, seat, token, now)? else {
        return Ok(None);
    };
    let last = stored.order.offer.is_some() && stored.order.units() == 1;
    Ok(last.then_some(stored))
}

/// Whether drop-seat's order, as its failure read it, is the holder's,
/// live and still holding `seat` (a drop may go again).
pub(crate) fn still_holds(
    failure: Option<&ItemFailure>,
    seat: &str,
    token: &HoldToken,
    now: Millis,
) -> Result<bool, StoreError> {
    Ok(holding(failure, seat, token, now)?.is_some())
}

/// The order a failure read, if it is the holder's, live and holding
/// `seat`.
fn holding(
    failure: Option<&ItemFailure>,
    seat: &str,
    token: &HoldToken,
    now: Millis,
) -> Result<Option<StoredOrder>, StoreError> {
    let Some(ItemFailure::Condition(Some(item))) = failure else {
        return Ok(None);
    };
    let stored = parse_order(item)?;
    let order = &stored.order;
    let holds = token.matches(&order.token_hash)
        && order.is_live(now)
        && order.seats.iter().any(|held| held.as_str() == seat);
    Ok(holds.then_some(stored))
}

fn is_sold(item: &Item) -> bool {
    Fields::new(item).opt_s(STATUS) == Some(SEAT_SOLD)
}

/// What a seat's failed claim condition saw, for the crowd's memory
/// ([`crate::domain::crowd`]): the seat's holder, and sold or held until
/// when. `None` for anything else (absent, a conflict, not held).
pub(crate) fn seat_seen(failure: Option<&ItemFailure>) -> Option<(String, SeatSeen)> {
    let Some(ItemFailure::Condition(Some(old))) = failure else {
        return None;
    };
    let fields = Fields::new(old);
    let holder = fields.opt_s(HOLDER)?.to_owned();
    if is_sold(old) {
        return Some((holder, SeatSeen::Sold));
    }
    if fields.opt_s(STATUS) != Some(SEAT_HELD) {
        return None;
    }
    let expires_at = fields.opt_i64(HOLD_EXPIRES_AT).ok().flatten()?;
    Some((holder, SeatSeen::HeldUntil(Millis(expires_at))))
}

/// get-seat's cancelled transaction `[seat, order]`, decided.
pub(crate) fn claim_error(
    seat: Option<ItemFailure>,
    order: Option<ItemFailure>,
    token: &HoldToken,
    max_seats: u32,
    now: Millis,
) -> Result<Option<Error>, StoreError> {
    // DynamoDB throttled the seat alone: nothing was decided about it, and
    // the caller reads it, as after a conflict (a crowd on its partition).
    if matches!(seat, Some(ItemFailure::Unavailable(_))) && order.is_none() {
        return Ok(None);
    }
    let reasons = [seat, order];
    if let Some(e) = unavailable_in("get-seat", &reasons) {
        return Ok(Some(e));
    }
    let [seat, order] = reasons;
    if let Some(e) = order_error(order.as_ref(), token, now)? {
        return Ok(Some(e));
    }
    // The holder's offer, holdable: its one refusal left is a claim of a
    // seat it was not offered.
    if let Some(ItemFailure::Condition(Some(item))) = &order {
        let read = parse_order(item)?.order;
        if read.offer.is_some() {
            let waitlist = crate::domain::waitlist::entries_path(&read.event_id);
            return Ok(Some(Error::WaitlistOnly { waitlist }));
        }
    }
    Ok(Some(match (&seat, &order) {
        (Some(ItemFailure::Condition(None)), _) => Error::SeatNotFound,
        (Some(ItemFailure::Condition(Some(old))), _) if is_sold(old) => Error::SeatSold,
        // Held by a live order.
        (Some(ItemFailure::Condition(_)), _) => Error::SeatHeld,
        // Another transaction on the seat at this instant: undecided.
        (Some(ItemFailure::Conflict), _) => return Ok(None),
        // Only the order's condition failed and it was not about the token,
        // status or expiry: the order is full.
        (None, Some(ItemFailure::Condition(_))) => Error::SeatLimit { max: max_seats },
        // A conflict on the order alone (or no reason at all).
        _ => unexplained("get-seat", &[seat, order]),
    }))
}

/// best-available's cancelled transaction `[seat, ..., order]`, decided:
/// an error for the client, or `Ok(None)` when only seats failed (a rival
/// has one of them: choose again).
pub(crate) fn block_claim_error(
    mut reasons: Vec<Option<ItemFailure>>,
    token: &HoldToken,
    max_seats: u32,
    now: Millis,
) -> Result<Option<Error>, StoreError> {
    if let Some(e) = unavailable_in("best-available", &reasons) {
        return Ok(Some(e));
    }
    let order = reasons.pop().flatten();
    if let Some(e) = order_error(order.as_ref(), token, now)? {
        return Ok(Some(e));
    }
    Ok(match order {
        // Not the token, status or expiry: no room for n more seats.
        Some(ItemFailure::Condition(_)) => Some(Error::SeatLimit { max: max_seats }),
        Some(_) => Some(unexplained("best-available", &[order])),
        None if reasons.iter().any(Option::is_some) => None,
        None => Some(unexplained("best-available", &reasons)),
    })
}

/// Which of a block claim's first `seats` items a rival has or is taking
/// (their condition failed, or another transaction was writing them), by
/// position, each with what the transaction saw of it (`None`: a rival
/// in flight, or an item it could not read): what a lost race teaches the
/// chooser without a read.
pub(crate) fn lost_seats(
    reasons: &[Option<ItemFailure>],
    seats: usize,
) -> Vec<(usize, Option<SeatSeen>)> {
    reasons
        .iter()
        .take(seats)
        .enumerate()
        .filter(|(_, r)| matches!(r, Some(ItemFailure::Condition(_) | ItemFailure::Conflict)))
        .map(|(i, r)| (i, seat_seen(r.as_ref()).map(|(_, seen)| seen)))
        .collect()
}

/// drop-seat's cancelled transaction `[seat, order]`, decided.
pub(crate) fn release_error(
    seat: Option<ItemFailure>,
    order: Option<ItemFailure>,
    token: &HoldToken,
    now: Millis,
) -> Result<Error, StoreError> {
    let reasons = [seat, order];
    if let Some(e) = unavailable_in("drop-seat", &reasons) {
        return Ok(e);
    }
    let [seat, order] = reasons;
    // drop-seat has no guard margin: only a missing order or a wrong token
    // come before the seat (a not-holdable order fails its own condition
    // and is reported as such below).
    match order_error(order.as_ref(), token, Millis(i64::MIN))? {
        Some(Error::OrderNotHoldable) | None => {}
        Some(e) => return Ok(e),
    }
    if let Some(ItemFailure::Condition(Some(item))) = &order {
        if !parse_order(item)?.order.is_live(now) {
            return Ok(Error::OrderNotHoldable);
        }
    }
    Ok(match (&seat, &order) {
        (Some(ItemFailure::Condition(None)), _) => Error::SeatNotFound,
        (Some(ItemFailure::Condition(_)), _) | (_, Some(ItemFailure::Condition(_))) => {
            Error::SeatNotHeld
        }
        _ => unexplained("drop-seat", &[seat, order]),
    })
}

/// What an item of a confirm transaction is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ConfirmRole {
    /// A seat paid for, sold by this transaction.
    Paid,
    /// A seat the order held but did not pay for, released.
    Release,
    /// A general-admission bucket whose places are sold (held, or taken
    /// as read); see [`ConfirmOutcome::PlacesMoved`].
    Places,
    Order,
    Payment,
    /// The buyer's record, as a confirm taking units it did not hold read
    /// it (a failed condition: another of the buyer's writes landed; read
    /// and decide again, as when a bucket moved: the order did not change).
    Buyer,
    /// A waitlist offer's end, logged for the counts: a new item whose key
    /// is the write's instant and the entry, which no condition refuses.
    OfferEnd,
}

/// How a confirm transaction ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfirmOutcome {
    Committed,
    /// The payment id is recorded for another order: nothing changed.
    PaymentReused,
    /// A paid seat cannot be had by this order.
    SeatsTaken,
    /// The order (or a seat it held) changed since it was read: read it
    /// again and decide anew.
    OrderChanged,
    /// A general-admission bucket moved since it was read (a rival took
    /// its free places or a reclaimable hold): read again and plan anew,
    /// since other places may still be free.
    PlacesMoved,
}

/// A cancelled confirm transaction, decided from its items' roles.
pub(crate) fn confirm_outcome(
    items: &[(ConfirmRole, Option<ItemFailure>)],
    order: &str,
) -> Result<ConfirmOutcome, Error> {
    let reasons: Vec<Option<ItemFailure>> = items.iter().map(|(_, r)| r.clone()).collect();
    if let Some(e) = unavailable_in("confirm", &reasons) {
        return Err(e);
    }
    let failed = |role: ConfirmRole, f: fn(&ItemFailure) -> bool| {
        items
            .iter()
            .any(|(r, failure)| *r == role && failure.as_ref().is_some_and(f))
    };
    let condition = |f: &ItemFailure| matches!(f, ItemFailure::Condition(_));
    let payment_elsewhere = items.iter().any(|(r, failure)| {
        *r == ConfirmRole::Payment
            && matches!(failure, Some(ItemFailure::Condition(Some(item)))
                if item.get(super::schema::ORDER_ID).and_then(|v: &AttributeValue| v.as_s().ok()).map(String::as_str) != Some(order))
    });
    Ok(if payment_elsewhere {
        ConfirmOutcome::PaymentReused
    } else if failed(ConfirmRole::Order, condition) || failed(ConfirmRole::Release, condition) {
        ConfirmOutcome::OrderChanged
    } else if failed(ConfirmRole::Paid, condition) {
        // A paid seat is another order's: no re-plan brings it back.
        ConfirmOutcome::SeatsTaken
    } else if failed(ConfirmRole::Places, condition) || failed(ConfirmRole::Buyer, condition) {
        ConfirmOutcome::PlacesMoved
    } else {
        // Only conflicts: another transaction is on these items right now;
        // nothing was decided, so the payment backend simply retries.
        return Err(unexplained("confirm", &reasons));
    })
}

#[cfg(test)]
#[path = "failures_tests.rs"]
mod tests;
