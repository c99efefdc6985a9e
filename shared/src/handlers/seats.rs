//! The seat routes: get-seat and drop-seat (one transaction each, no
//! read); best-available is in `best_available.rs`.

use lambda_http::http::StatusCode;
use lambda_http::Request;
use serde::Serialize;

use super::access::holder_token;
use super::Reply;
use crate::auth::HoldToken;
use crate::domain::crowd::{refusal_on_read, SeatSeen};
use crate::domain::{Millis, OrderId, SeatId};
use crate::error::Error;
use crate::http::{json, path_param};
use crate::store::ClaimRefusal;
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

/// `POST /orders/{orderId}/seats/{seatId}`: one transaction, no read.
pub async fn get_seat(app: &App, req: &Request) -> Reply {
    let order_id = path_param(req, "orderId", OrderId::parse)?;
    let seat_id = path_param(req, "seatId", SeatId::parse)?;
    let token = holder_token(app, req, &order_id)?;
    let now = crate::world::now();
    let expires_at = claim_remembering(app, &order_id, &token, &seat_id, now).await?;
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
/// crowd"): a seat this instance keeps refusing is refused from memory
/// within the contract's bounds ([`crate::domain::crowd`]); everything
/// else, and every success, is the exact conditional write.
pub async fn claim_remembering(
    app: &App,
    order: &OrderId,
    token: &HoldToken,
    seat: &SeatId,
    now: Millis,
) -> Result<Millis, Error> {
    let event = token.event_id();
    if let Some(seen) = app.memory.crowd.refuse(event, seat, order.as_str(), now) {
        // Memory names the holder it saw, but the seat may have changed
        // hands since through another instance (a release, then this
        // claimant's claim): its own order says whether it holds the seat
        // now, and the holder's claim is never answered from memory. One
        // read of the claimant's own order; nothing on the seat's partition.
        if !order_lists(app, order, seat).await? {
            crate::metrics::refused_from_memory("get-seat");
            return Err(refusal(seen));
        }
    }
    // Crowded on this event: a read (one read unit) before the write (a
    // failed one costs write units on the seat's partition).
    if app.memory.crowd.crowded(event, now) {
        let read = app.store.seat_state(event, seat).await?;
        if let Some((holder, seen)) =
            read.and_then(|state| refusal_on_read(&state, order.as_str(), now))
        {
            app.memory
                .crowd
                .refused_exactly(event, seat, &holder, seen, now);
            crate::metrics::refused_after_read("get-seat");
            return Err(refusal(seen));
        }
    }
    let max = app.config.max_seats_per_order;
    if let Some(refused) = buyer_refusal_from_memory(app, order, token, seat, now).await? {
        crate::metrics::refused_from_memory("get-seat");
        return Err(refused);
    }
    match app
        .store
        .claim_seat_seeing(&app.memory, order, token, seat, max, now)
        .await
    {
        Ok(expires_at) => {
            app.memory.crowd.forget(event, seat);
            Ok(expires_at)
        }
        Err(ClaimRefusal { error, seen }) => {
            if let (Error::SeatHeld | Error::SeatSold, Some((holder, seen))) = (&error, seen) {
                app.memory
                    .crowd
                    .refused_exactly(event, seat, &holder, seen, now);
            }
            Err(error)
        }
    }
}

/// A claim by a buyer this instance keeps refusing for its limit (docs/API.md,
/// "Under a crowd"): over the limit on the buyer's record as last read,
/// it is refused without touching that record, once the claimant's own
/// order and the seat (two strongly consistent reads, off the record's
/// partition) show that no other refusal comes first and that the order
/// does not hold the seat already. Anything else: `None`, the exact
/// transaction.
async fn buyer_refusal_from_memory(
    app: &App,
    order: &OrderId,
    token: &HoldToken,
    seat: &SeatId,
    now: Millis,
) -> Result<Option<Error>, Error> {
    let claimed = [seat.as_str().to_owned()];
    let Some(counted) = app.memory.buyer_refusal(token, order, &claimed, now) else {
        return Ok(None);
    };
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
    let Some(state) = app.store.seat_state(token.event_id(), seat).await? else {
        return Ok(None);
    };
    if let Some((_, seen)) = refusal_on_read(&state, order.as_str(), now) {
        return Ok(Some(refusal(seen)));
    }
    let limit = token.buyer().map_or(0, |b| b.limit);
    Ok(Some(Error::BuyerLimit { limit, counted }))
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
    app.store
        .release_seat(
            &app.memory,
            &order_id,
            &token,
            &seat_id,
            crate::world::now(),
        )
        .await?;
    // Released through this instance: it remembers no holder now.
    app.memory.crowd.forget(token.event_id(), &seat_id);
    Ok(json(
        StatusCode::OK,
        &SeatReply {
            order_id: &order_id,
            seat_id: &seat_id,
            status: crate::domain::SeatStatus::Available,
            expires_at: None,
        },
    ))
}
