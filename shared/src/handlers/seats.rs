//! The seat routes: get-seat and drop-seat (one transaction each, no
//! read), and best-available (reads the section, then one transaction for
//! n seats).

use lambda_http::http::StatusCode;
use lambda_http::Request;
use serde::{Deserialize, Serialize};

use super::access::{holder_token, read_own_order};
use super::Reply;
use crate::auth::HoldToken;
use crate::domain::best_available::{spread_choice, spread_is_decided};
use crate::domain::crowd::{refusal_on_read, SeatSeen};
use crate::domain::{Event, Millis, OrderId, SeatId, SeatStatus, SectionId, SectionPlan};
use crate::error::Error;
use crate::http::{json, json_body, path_param};
use crate::retry::{Rounds, CLAIM_ATTEMPTS};
use crate::store::{BlockClaim, ClaimRefusal};
use crate::world::random_u64;
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
    match app
        .store
        .claim_seat_seeing(order, token, seat, max, now)
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
        .release_seat(&order_id, &token, &seat_id, crate::world::now())
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

// ----- best-available -------------------------------------------------------

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct BestAvailableBody {
    quantity: u32,
    #[serde(default)]
    section_id: Option<SectionId>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct BestAvailableReply<'a> {
    order_id: &'a OrderId,
    seats: &'a [SeatId],
    status: SeatStatus,
    expires_at: String,
}

/// Rows read in the first round (each row a Query per block of ten seats);
/// each later round reads twice as many, up to [`MAX_ROWS_READ`].
const FIRST_ROWS_READ: usize = 2;
const MAX_ROWS_READ: usize = 64;

/// `POST /orders/{orderId}/best-available`: n adjacent seats in one row,
/// chosen by the contract's rules (domain::best_available) from a cheap
/// read of the section, claimed in one transaction with get-seat's
/// conditions. A lost race reads again, consistently; `not-enough-seats`
/// only after a consistent read found no run of n.
pub async fn best_available(app: &App, req: &Request) -> Reply {
    let order_id = path_param(req, "orderId", OrderId::parse)?;
    let body: BestAvailableBody = json_body(req, None)?;
    let max = app.config.max_seats_per_order;
    if !(1..=max).contains(&body.quantity) {
        return Err(Error::BadRequest(format!("quantity must be 1 to {max}")));
    }
    // One consistent read of the order first: who asks, and whether it
    // may hold, come before any reading of the section.
    let (stored, token) = read_own_order(app, req, &order_id).await?;
    if !stored.order.is_holdable(crate::world::now()) {
        return Err(Error::OrderNotHoldable);
    }
    // The order's own expiry (a token from before an extension carries
    // an older one).
    let token = token.with_expiry(stored.order.expires_at);
    let event = app
        .store
        .get_event(&app.memory, token.event_id())
        .await?
        .ok_or(Error::OrderNotFound)?;
    let sections: Vec<&SectionPlan> = match &body.section_id {
        Some(id) => match event.section(id).ok_or(Error::SectionNotFound)? {
            ga if ga.is_ga() => {
                return Err(Error::BadRequest(format!(
                    "section {id} is general admission: hold places with hold-ga"
                )))
            }
            seated => vec![seated],
        },
        None => event.sections.iter().filter(|s| !s.is_ga()).collect(),
    };
    // Sections the stream saw sold out for good need no reading.
    let sold_out = app
        .store
        .sold_out_sections(&app.memory, &event.event_id)
        .await?;
    let sections: Vec<&SectionPlan> = sections
        .into_iter()
        .filter(|s| !sold_out.contains(&s.section_id))
        .collect();
    if sections.is_empty() {
        return Err(Error::NotEnoughSeats {
            quantity: body.quantity,
        });
    }
    let n = body.quantity as usize;
    let mut rounds = Rounds::new("best-available", CLAIM_ATTEMPTS);
    let mut consistent = false;
    while rounds.next().await.is_some() {
        let read = Read {
            consistent,
            losses: rounds.losses(),
        };
        let now = crate::world::now();
        let Some(seats) = choose_seats(app, &event, &sections, n, read, now).await? else {
            if consistent {
                return Err(Error::NotEnoughSeats {
                    quantity: body.quantity,
                });
            }
            // What an eventually consistent read missed, a consistent one sees.
            consistent = true;
            continue;
        };
        match app
            .store
            .claim_block(&order_id, &token, &seats, max, now)
            .await?
        {
            BlockClaim::Held(expires_at) => {
                return Ok(json(
                    StatusCode::OK,
                    &BestAvailableReply {
                        order_id: &order_id,
                        seats: &seats,
                        status: SeatStatus::Held,
                        expires_at: expires_at.to_rfc3339(),
                    },
                ))
            }
            BlockClaim::Taken => {
                consistent = true;
                rounds.lost();
            }
        }
    }
    Err(rounds.spent())
}

/// The seats the rules pick: in the first section (of `sections`, in plan
/// order) with a run of n, by [`spread_choice`]: the contract's choice when
/// uncontended (`losses == 0`), after lost races one of the best blocks
/// in rank order. Rows are read a few at a time, until the rows in hand
/// decide the choice (later rows cannot enter its window).
async fn choose_seats(
    app: &App,
    event: &Event,
    sections: &[&SectionPlan],
    n: usize,
    read: Read,
    now: Millis,
) -> Result<Option<Vec<SeatId>>, Error> {
    for section in sections {
        let mut rows: Vec<Vec<bool>> = Vec::with_capacity(section.rows.len());
        // The front rows first, then twice as many each time: a choice in
        // the best rows costs a Query or two, a full section a few rounds.
        let mut batch = FIRST_ROWS_READ;
        while rows.len() < section.rows.len() {
            let next = &section.rows[rows.len()..(rows.len() + batch).min(section.rows.len())];
            let states = app
                .store
                .read_rows(&event.event_id, &section.section_id, next, read.consistent)
                .await?;
            rows.extend(states.iter().map(|row| {
                row.iter()
                    .map(|state| state.visible_status(now) == SeatStatus::Available)
                    .collect()
            }));
            if spread_is_decided(&rows, n, read.losses) {
                break;
            }
            batch = batch.saturating_mul(2).min(MAX_ROWS_READ);
        }
        if let Some((r, start)) = spread_choice(&rows, n, read.losses, random_u64()) {
            return Ok(Some(block(section, r, start, n)));
        }
    }
    Ok(None)
}

/// How choose_seats reads: consistently once a race was lost or an
/// eventually consistent read found nothing, and how many races were lost.
#[derive(Debug, Clone, Copy)]
struct Read {
    consistent: bool,
    losses: u32,
}

fn block(section: &SectionPlan, row: usize, start: usize, n: usize) -> Vec<SeatId> {
    let row = &section.rows[row].row;
    (start..start + n)
        .map(|i| SeatId::compose(&section.section_id, row, i as u32 + 1))
        .collect()
}
