//! The seat routes: get-seat (a read of the seat, then one transaction)
//! and drop-seat (one transaction, no read; an offer's last seat takes a
//! second, its end logged); best-available is in
//! `best_available.rs`.

use lambda_http::http::StatusCode;
use lambda_http::Request;
use serde::Serialize;

use super::access::holder_token;
use super::Reply;
use crate::auth::HoldToken;
use crate::domain::buyer_limit::BuyerSeen;
use crate::domain::crowd::{refusal_on_read, Recalled, SeatSeen};
use crate::domain::{EventId, Millis, OrderId, SeatId};
use crate::error::Error;
use crate::http::{json, path_param};
use crate::memory::ClaimQuestion;
use crate::retry::Rounds;
use crate::store::{Release, Released, SeatClaim, SeatRead};
use crate::App;

// ----- get-seat / drop-seat -------------------------------------------------

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SeatReply<'a> {
    order_id: &'a OrderId,
    seat_id: &'a SeatId,
    status: crate::domain::SeatStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    expires_at: Option<String>,
}

/// `POST /orders/{orderId}/seats/{seatId}`: a read of the seat, then one
/// transaction.
pub async fn get_seat(app: &App, req: &Request) -> Reply {
    let order_id = path_param(req, "orderId", OrderId::parse)?;
    let seat_id = path_param(req, "seatId", SeatId::parse)?;
    let token = holder_token(app, req, &order_id)?;
    let now = crate::world::now();
    let expires_at = get_seat_at(app, &order_id, &token, &seat_id, now).await?;
    Ok(json(
        StatusCode::OK,
        &SeatReply {
            order_id: &order_id,
            seat_id: &seat_id,
            status: crate::domain::SeatStatus::Held,
            expires_at: Some(expires_at.to_rfc3339()),
        },
    ))
}

/// get-seat's claim at `now`, under a crowd (docs/API.md, "Under a
/// crowd"): one question to the instance's memory first
/// ([`crate::memory::ClaimQuestion`]); a seat or a buyer this instance
/// keeps refusing is refused from memory within the contract's bounds,
/// once the reads it names agree. Everything else reads the seat
/// ([`seat_read`]: a refused claim costs its partition a read unit, not
/// write units), and a seat it may claim is claimed by the exact
/// conditional write ([`claim_exactly`]), as is every success.
pub async fn get_seat_at(
    app: &App,
    order: &OrderId,
    token: &HoldToken,
    seat: &SeatId,
    now: Millis,
) -> Result<Millis, Error> {
    let event = token.event_id();
    match app
        .memory
        .before_claim(event, seat, order, token.buyer(), now)
    {
        // Memory names the holder it saw, but the seat may have changed
        // hands since through another instance (a release, then this
        // claimant's claim): its own order says whether it holds the seat
        // now, and the holder's claim is never answered from memory. One
        // read of the claimant's own order; nothing on the seat's partition.
        ClaimQuestion::RefuseUnlessOwn(seen) => {
            if !order_lists(app, order, seat).await? {
                crate::metrics::refused_from_memory("get-seat");
                return Err(refusal(seen));
            }
        }
        ClaimQuestion::RefuseBuyer { counted } => {
            if let Some(refused) =
                buyer_refusal_confirmed(app, order, token, seat, counted, now).await?
            {
                crate::metrics::refused_from_memory("get-seat");
                return Err(refused);
            }
        }
        ClaimQuestion::Claim => {}
    }
    if let Some(seen) = seat_read(app, order, event, seat, now).await? {
        return Err(refusal(seen));
    }
    // Only a claim that would write asks the waitlist: a seat held or sold
    // is refused as such either way (API.md allows either answer first).
    refuse_more_if_waitlist_only(app, event, order, seat, now).await?;
    claim_exactly(app, order, token, seat, app.config.max_seats_per_order, now).await
}

/// get-seat's transaction at `now` (at most `max` seats per order), each
/// outcome reported to the instance's memory, and sent again (bounded,
/// [`Rounds`]) while the order's expiry or the buyer's record moved under
/// it: the exact answer, never one from memory.
pub async fn claim_exactly(
    app: &App,
    order: &OrderId,
    token: &HoldToken,
    seat: &SeatId,
    max: u32,
    now: Millis,
) -> Result<Millis, Error> {
    let event = token.event_id();
    let mut token = token.clone();
    let (mut stale, mut moved) = (Rounds::stale_token(), Rounds::buyer_moved());
    let mut contested = Rounds::contested();
    loop {
        let report = app.store.claim_seat(order, &token, seat, max, now).await?;
        app.memory.after_claim(event, seat, &report, now);
        match report.claim {
            SeatClaim::Held(expires_at) => return Ok(expires_at),
            SeatClaim::Refused { error, .. } => return Err(error),
            SeatClaim::StaleToken(current) => {
                stale.next().await.ok_or_else(|| stale.spent())?;
                token = current;
            }
            SeatClaim::BuyerMoved => {
                moved.lost();
                moved.next().await.ok_or_else(|| moved.spent())?;
            }
            // A rival's transaction on the seat at this instant, or DynamoDB
            // throttled the seat's item: what the seat is now is read.
            SeatClaim::Contested => {
                contested.lost();
                contested.next().await.ok_or_else(|| contested.spent())?;
                if let Some(seen) = seat_read(app, order, event, seat, now).await? {
                    return Err(refusal(seen));
                }
            }
        }
    }
}

/// What refuses `order`'s claim of `seat` at `now`, on a strongly
/// consistent read of the seat (one read unit; `None`: it may be
/// claimable, the conditional write decides). When DynamoDB throttles the
/// read (a crowd on the seat's partition), what this instance saw of the
/// seat within the contract's bounds ([`crate::memory::Memory::recall_seat`])
/// refuses it, once the claimant's own order shows it does not hold the
/// seat; the holder's claim goes to the write; with nothing to rest on,
/// the `503`. Any other failure of the read (a timeout, an outage) is the
/// `503` at once.
async fn seat_read(
    app: &App,
    order: &OrderId,
    event: &EventId,
    seat: &SeatId,
    now: Millis,
) -> Result<Option<SeatSeen>, Error> {
    let state = match app.store.seat_state(event, seat).await? {
        SeatRead::Seen(state) => state,
        SeatRead::Throttled => {
            return match app.memory.recall_seat(event, seat, order, now) {
                Recalled::Refused(seen) => {
                    // The seat may have changed hands since, to this claimant.
                    if order_lists(app, order, seat).await? {
                        return Ok(None);
                    }
                    crate::metrics::refused_from_memory("get-seat");
                    Ok(Some(seen))
                }
                Recalled::Holder => Ok(None),
                Recalled::Nothing => Err(Error::StoreUnavailable),
            };
        }
    };
    let seen = app
        .memory
        .after_seat_read(event, seat, order, state.as_ref(), now);
    if seen.is_some() {
        crate::metrics::refused_after_read("get-seat");
    }
    Ok(seen)
}

/// A claim by a buyer this instance keeps refusing for its limit (docs/API.md,
/// "Under a crowd"): over the limit on the buyer's record as last read
/// (`counted`), it is refused without touching that record, once the
/// claimant's own order and the seat (two strongly consistent reads, off
/// the record's partition) show that no other refusal comes first and that
/// the order does not hold the seat already. Anything else: `None`, the
/// exact transaction.
async fn buyer_refusal_confirmed(
    app: &App,
    order: &OrderId,
    token: &HoldToken,
    seat: &SeatId,
    counted: u32,
    now: Millis,
) -> Result<Option<Error>, Error> {
    let Some(stored) = app.store.get_order(order).await? else {
        return Ok(None);
    };
    let held = stored.order.seats.len()
        + stored
            .order
            .places
            .iter()
            .map(|p| p.quantity as usize)
            .sum::<usize>();
    let plain = token.matches(&stored.order.token_hash)
        && stored.order.is_holdable(now)
        && held < app.config.max_seats_per_order as usize
        && !stored.order.seats.contains(seat);
    if !plain {
        return Ok(None);
    }
    let state = match app.store.seat_state(token.event_id(), seat).await? {
        SeatRead::Seen(Some(state)) => state,
        SeatRead::Seen(None) => return Ok(None),
        SeatRead::Throttled => return Err(Error::StoreUnavailable),
    };
    // Only this refusal rests on the read: it is not kept for the crowd.
    if let Some((_, seen)) = refusal_on_read(&state, order.as_str(), now) {
        return Ok(Some(refusal(seen)));
    }
    let limit = token.buyer().map_or(0, |b| b.limit);
    Ok(Some(Error::BuyerLimit { limit, counted }))
}

/// `409 waitlist-only` for a claim of a seat `order` does not hold while
/// only offers take seats: an order opened before keeps what it holds and
/// may claim it again, nothing more. One read of the order, and only then.
async fn refuse_more_if_waitlist_only(
    app: &App,
    event: &EventId,
    order: &OrderId,
    seat: &SeatId,
    now: Millis,
) -> Result<(), Error> {
    let Err(refused) = app.refuse_if_waitlist_only(event, now).await else {
        return Ok(());
    };
    match order_lists(app, order, seat).await? {
        true => Ok(()),
        false => Err(refused),
    }
}

/// Whether `order` lists `seat` now (a strongly consistent read: a claim
/// writes the seat and the order in one transaction).
async fn order_lists(app: &App, order: &OrderId, seat: &SeatId) -> Result<bool, Error> {
    let stored = app.store.get_order(order).await?;
    Ok(stored.is_some_and(|stored| stored.order.seats.contains(seat)))
}

/// The answer to a claim refused on what was seen of the seat.
fn refusal(seen: SeatSeen) -> Error {
    match seen {
        SeatSeen::Sold => Error::SeatSold,
        SeatSeen::HeldUntil(_) => Error::SeatHeld,
    }
}

/// `DELETE /orders/{orderId}/seats/{seatId}`: one transaction, no read.
pub async fn drop_seat(app: &App, req: &Request) -> Reply {
    let order_id = path_param(req, "orderId", OrderId::parse)?;
    let seat_id = path_param(req, "seatId", SeatId::parse)?;
    let token = holder_token(app, req, &order_id)?;
    let now = crate::world::now();
    let status = match release_exactly(app, &order_id, &token, &seat_id, now).await {
        Err(Error::SeatNotHeld) => release_resale(app, &order_id, &token, &seat_id, now).await?,
        released => released.map(|()| crate::domain::SeatStatus::Available)?,
    };
    Ok(json(
        StatusCode::OK,
        &SeatReply {
            order_id: &order_id,
            seat_id: &seat_id,
            status,
            expires_at: None,
        },
    ))
}

/// drop-seat of a seat the order does not hold as a seat's own hold: if
/// it holds it as a listed seat (an offer's resale), that hold is let go
/// of and the seat, still sold to its seller, is offered on (`SOLD`);
/// else `409 seat-not-held` as before. Only such a drop reads the order.
async fn release_resale(
    app: &App,
    order: &OrderId,
    token: &HoldToken,
    seat: &SeatId,
    now: Millis,
) -> Result<crate::domain::SeatStatus, Error> {
    let stored = app.store.get_order(order).await?;
    if stored.is_none_or(|s| s.order.resale_of(seat).is_none()) {
        return Err(Error::SeatNotHeld);
    }
    release(app, order, token, seat, Released::Resale, now).await?;
    Ok(crate::domain::SeatStatus::Sold)
}

/// drop-seat's transaction at `now`, reported to the instance's memory
/// (released through this instance: it remembers no holder of the seat
/// now), and sent again (bounded) while the buyer's record was busy with
/// another of its writes.
pub async fn release_exactly(
    app: &App,
    order: &OrderId,
    token: &HoldToken,
    seat: &SeatId,
    now: Millis,
) -> Result<(), Error> {
    let buyer = release(app, order, token, seat, Released::Seat, now).await?;
    app.memory
        .after_release(token.event_id(), seat, &buyer, now);
    Ok(())
}

/// drop-seat's transaction at `now`, sent again (bounded) while the
/// buyer's record was busy with another of its writes, and at once as
/// the offer's end when the seat is an offer's last unit: the buyer's
/// record as the write saw it.
async fn release(
    app: &App,
    order: &OrderId,
    token: &HoldToken,
    seat: &SeatId,
    released: Released,
    now: Millis,
) -> Result<BuyerSeen, Error> {
    let mut rounds = Rounds::buyer_moved();
    let mut last = None;
    loop {
        let release = app
            .store
            .release_seat(order, token, seat, released, last.as_ref(), now);
        match release.await? {
            Release::Released(buyer) => return Ok(buyer),
            // It knows more now: no back-off.
            Release::OffersLast(stored) => last = Some(*stored),
            Release::Again => {
                last = None;
                rounds.lost();
            }
        }
        rounds.next().await.ok_or_else(|| rounds.spent())?;
    }
}
