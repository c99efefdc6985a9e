//! Holds: claim and release seats, each claim or release one transaction
//! (get-seat reads the seat before it writes: `seat_state`). Orders
//! themselves are `orders.rs`.

use super::buyers::{changed_through, BuyerClaim, BuyerVerdict};
use super::failures::{
    claim_error, extended_since, offers_last, release_error, seat_seen, still_holds,
    unavailable_in, ItemFailure,
};
use super::items;
use super::items::order::order_key;
use super::items::seat::FreeFor;
use super::items::seat::{parse_seat, seat_key};
use super::{Store, StoredOrder, Txn};
use crate::auth::HoldToken;
use crate::domain::buyer_limit::BuyerSeen;
use crate::domain::crowd::SeatSeen;
use crate::domain::{EventId, EventRef, Millis, OrderId, SeatId, SeatState};
use crate::error::Error;
use aws_sdk_dynamodb::types::TransactWriteItem;

impl Store {
    /// get-seat's transaction, once: claims `seat` for the order and
    /// records it on the order (the store reads nothing first but the
    /// buyer's record, on an event with a buyer limit). The seat is claimable if it
    /// exists, is not sold, and is free, held by this order, or held by an
    /// order whose hold expired (`expired!`: no stale window). The order
    /// must match the token's hash, be PENDING, unexpired, and have room
    /// (or hold the seat already: re-claiming is idempotent). A token from
    /// before an extension, or a buyer's record that moved since it was
    /// read, is reported for the caller to go again ([`SeatClaim`]).
    pub async fn claim_seat(
        &self,
        order: &OrderId,
        token: &HoldToken,
        seat: &SeatId,
        max_seats: u32,
        now: Millis,
    ) -> Result<ClaimReport, Error> {
        let claimed = [seat.as_str().to_owned()];
        let buyer = self.buyer_claim(token, order, &claimed, now).await?;
        let mut items = vec![
            self.claim_item(token, order, seat, FreeFor::Order, now)?,
            self.txn_update(
                order_key(order),
                items::order::add_seat(token, seat.as_str(), max_seats, now),
            )?,
        ];
        if let Some(buyer) = &buyer {
            items.push(self.buyer_item(buyer, token, order, token.expires_at(), now)?);
        }
        let report = |claim, buyer| ClaimReport { claim, buyer };
        let Txn::Cancelled(mut reasons) = self.transact(items).await? else {
            let seen = buyer.as_ref().map(BuyerClaim::changed).unwrap_or_default();
            return Ok(report(SeatClaim::Held(token.expires_at()), seen));
        };
        let buyer_failure = buyer.is_some().then(|| reasons.pop().flatten()).flatten();
        let order_failure = reasons.pop().flatten();
        let seat_failure = reasons.pop().flatten();
        if let Some(e) = unavailable_in("get-seat", std::slice::from_ref(&buyer_failure)) {
            return Err(e);
        }
        if let Some(refreshed) = refreshed_token(order_failure.as_ref(), token, now)? {
            return Ok(report(SeatClaim::StaleToken(refreshed), BuyerSeen::Nothing));
        }
        if let (None, None, Some(buyer)) = (&seat_failure, &order_failure, buyer) {
            match buyer.verdict(buyer_failure.as_ref()) {
                BuyerVerdict::Over { limit, counted } => {
                    let refused = SeatClaim::Refused {
                        error: Error::BuyerLimit { limit, counted },
                        seen: None,
                    };
                    return Ok(report(refused, buyer.refused_as_read()));
                }
                BuyerVerdict::Moved => {
                    return Ok(report(SeatClaim::BuyerMoved, BuyerSeen::Nothing))
                }
                BuyerVerdict::NotTheBuyer => {}
            }
        }
        let seen = seat_seen(seat_failure.as_ref());
        let claim = match claim_error(seat_failure, order_failure, token, max_seats, now)? {
            Some(error) => SeatClaim::Refused { error, seen },
            None => SeatClaim::Contested,
        };
        Ok(report(claim, BuyerSeen::Nothing))
    }

    /// A seat's state now (strongly consistent): get-seat's read before
    /// it writes (see [`crate::domain::crowd::refusal_on_read`]), or that
    /// DynamoDB throttled it (any other failure is an error).
    pub async fn seat_state(&self, event: &EventId, seat: &SeatId) -> Result<SeatRead, Error> {
        let item = match self
            .get_consistent(seat_key(&EventRef::of(event), seat))
            .await
        {
            Ok(item) => item,
            Err(e) if e.is_throttled() => {
                tracing::warn!(error = %crate::error::chain(&e), "seat read throttled");
                return Ok(SeatRead::Throttled);
            }
            Err(e) => return Err(e.into()),
        };
        let state = item.as_ref().map(parse_seat).transpose()?;
        Ok(SeatRead::Seen(state.map(|found| found.state)))
    }

    /// A seat's side of a claim for `order` until the token's expiry, if
    /// the seat is free for it.
    pub(super) fn claim_item(
        &self,
        token: &HoldToken,
        order: &OrderId,
        seat: &SeatId,
        free_for: FreeFor,
        now: Millis,
    ) -> Result<TransactWriteItem, Error> {
        self.txn_update(
            seat_key(&EventRef::of(token.event_id()), seat),
            items::seat::claim(order, token.expires_at(), free_for, now),
        )
    }

    /// drop-seat's transaction, once: releases a seat this order holds and
    /// removes it from the order (and from its buyer's record), in one
    /// round trip. An offer's last unit is refused there, and reported
    /// with the order as read ([`Release::OffersLast`]): sent again with
    /// that order as `last`, the drop records the offer emptied and logs
    /// its end for the waitlist's counts in the same transaction.
    pub async fn release_seat(
        &self,
        order: &OrderId,
        token: &HoldToken,
        seat: &SeatId,
        released: Released,
        last: Option<&StoredOrder>,
        now: Millis,
    ) -> Result<Release, Error> {
        let event = EventRef::of(token.event_id());
        let hold = match released {
            Released::Seat => self.txn_update(
                seat_key(&event, seat),
                items::seat::release_held(order, now),
            )?,
            Released::Resale => self.txn_update(
                items::resale::resale_key(&event, seat),
                items::resale::let_go(order, now),
            )?,
        };
        let order_side = match last {
            None => items::order::drop_seat(token, seat.as_str(), now),
            Some(stored) => {
                items::order::drop_offers_last(token, seat.as_str(), stored.version, now)
            }
        };
        let mut items = vec![hold, self.txn_update(order_key(order), order_side)?];
        // The seat stops counting against the buyer in the same write.
        let buyer = self.buyer_release_item(token, order, &[seat.as_str()])?;
        let with_buyer = buyer.is_some();
        items.extend(buyer);
        // Its key is new (the stamp and the entry): no condition to fail.
        let end = last.map(|stored| self.offer_end(&stored.order, false, true));
        let end = end.transpose()?.flatten();
        let with_end = end.is_some();
        items.extend(end);
        let Txn::Cancelled(mut reasons) = self.transact(items).await? else {
            return Ok(Release::Released(changed_through(token)));
        };
        let end_failure = with_end.then(|| reasons.pop().flatten()).flatten();
        let buyer_failure = with_buyer.then(|| reasons.pop().flatten()).flatten();
        let order_failure = reasons.pop().flatten();
        let seat_failure = reasons.pop().flatten();
        if let Some(e) = unavailable_in("drop-seat", &[buyer_failure.clone(), end_failure]) {
            return Err(e);
        }
        if seat_failure.is_none() && order_failure.is_none() && buyer_failure.is_some() {
            return Ok(Release::Again);
        }
        if seat_failure.is_none() {
            let failure = order_failure.as_ref();
            if let Some(stored) = offers_last(failure, seat.as_str(), token, now)? {
                return Ok(Release::OffersLast(Box::new(stored)));
            }
            // The order moved since the last drop read it: go again.
            if last.is_some() && still_holds(failure, seat.as_str(), token, now)? {
                return Ok(Release::Again);
            }
        }
        Err(release_error(seat_failure, order_failure, token, now)?)
    }
}

/// How drop-seat's transaction ended.
#[derive(Debug)]
pub enum Release {
    /// Let go of: the buyer's record as the write saw it.
    Released(BuyerSeen),
    /// The buyer's record was busy with another of its writes, or the
    /// order moved since the drop of an offer's last unit read it: go
    /// again.
    Again,
    /// The seat is the last unit of the live offer read here: go again
    /// with it as `last`.
    OffersLast(Box<StoredOrder>),
}

/// Which hold of a seat drop-seat lets go of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Released {
    /// The seat's own hold.
    Seat,
    /// An offer's hold of a listed seat, on its resale item.
    Resale,
}

/// How one claim transaction ended.
#[derive(Debug)]
pub enum SeatClaim {
    /// Held until this instant.
    Held(Millis),
    /// Refused: the answer, and what the claim saw of the seat (its
    /// holder, and sold or held until when), if it saw it.
    Refused {
        error: Error,
        seen: Option<(String, SeatSeen)>,
    },
    /// The token carried an expiry the order has moved past (extend-order
    /// since): go again with this one, the order's own. Each follows an
    /// extension meanwhile, so a caller bounds them
    /// ([`crate::retry::Rounds::stale_token`]).
    StaleToken(HoldToken),
    /// The buyer's record moved since it was read (another of the buyer's
    /// writes landed first): go again
    /// ([`crate::retry::Rounds::buyer_moved`]).
    BuyerMoved,
    /// Another transaction was writing the seat at the same instant
    /// (`TransactionConflict` on it), or DynamoDB throttled the seat's
    /// item alone: nothing was decided, and a rival's transaction may yet
    /// fail. Read the seat to learn who has it
    /// ([`crate::retry::Rounds::contested`]).
    Contested,
}

/// A strongly consistent read of a seat, as the store saw it.
#[derive(Debug, Clone, PartialEq)]
pub enum SeatRead {
    /// The seat as it is (`None`: no such seat).
    Seen(Option<SeatState>),
    /// DynamoDB throttled the read (after the SDK's retries): nothing was
    /// learnt of the seat.
    Throttled,
}

/// A claim's transaction as the store saw it: how it ended, and what it
/// saw of its buyer's record (for the instance's memory).
#[derive(Debug)]
pub struct ClaimReport {
    pub claim: SeatClaim,
    pub buyer: BuyerSeen,
}

/// A holder's claim failed only because its token carried an expiry the
/// order has moved past (extend-order since): the token with the order's
/// own expiry, to retry with. Each retry follows an extension that happened
/// meanwhile, so the retries are bounded
/// ([`crate::retry::STALE_TOKEN_RETRIES`] in a row, then 503).
pub(super) fn refreshed_token(
    failure: Option<&ItemFailure>,
    token: &HoldToken,
    now: Millis,
) -> Result<Option<HoldToken>, Error> {
    Ok(extended_since(failure, token, now)?.map(|current| token.with_expiry(current)))
}
