//! The holder's order routes beyond one seat: extend-order and cancel-order
//! (each reads the order, then one transaction over it as read), and
//! best-available (reads the section, then one transaction for n seats).

use lambda_http::http::StatusCode;
use lambda_http::Request;
use serde::{Deserialize, Serialize};

use super::contention::back_off;
use super::places::plan_from_buckets;
use super::{order_event, read_own_order, Reply};
use crate::domain::best_available::{best_block, spread_choice};
use crate::domain::ga::{most_holdable, plan_release, plan_take, HeldPlaces, Take};
use crate::domain::{
    extension, holder_deadline, Event, Extension, Millis, OrderId, OrderStatus, SeatId, SeatStatus,
    SectionId, SectionPlan, HOLD_SECONDS_RANGE,
};
use crate::error::Error;
use crate::http::{json, json_body, path_param, request_deadline, serve};
use crate::store::{BlockClaim, BucketChange};
use crate::world::random_u64;
use crate::App;

/// Reads of the order one request may make: each transaction that fails
/// because the order changed under it (the holder's own claims racing it)
/// is followed by a short jittered pause and a fresh read. With this many
/// in a row the store keeps conflicting, and the client is told to retry
/// (503).
const ORDER_ROUNDS: u32 = 10;

// ----- extend-order ---------------------------------------------------------

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct ExtendBody {
    #[serde(default)]
    seconds: Option<u32>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ExtendReply<'a> {
    order_id: &'a OrderId,
    expires_at: String,
    hold_token: &'a str,
}

/// `POST /orders/{orderId}/extend`: moves the order's and every hold's
/// expiry forward in one transaction, up to the order's lifetime cap, and
/// answers with the token to use from then on (the same secret carrying
/// the new expiry; the old token keeps working).
pub async fn extend_order(app: &App, req: Request) -> Reply {
    Ok(serve(
        "extend-order",
        &req,
        request_deadline(&req, app.config.request_budget_ms),
        async {
            let order_id = path_param(&req, "orderId", OrderId::parse)?;
            let body: ExtendBody = json_body(&req, Some(ExtendBody::default()))?;
            if let Some(seconds) = body.seconds {
                if !HOLD_SECONDS_RANGE.contains(&seconds) {
                    return Err(Error::BadRequest(format!(
                        "seconds must be {} to {}",
                        HOLD_SECONDS_RANGE.start(),
                        HOLD_SECONDS_RANGE.end()
                    )));
                }
            }
            for round in 0..ORDER_ROUNDS {
                let (stored, token) = read_own_order(app, &req, &order_id).await?;
                let order = &stored.order;
                let now = crate::world::now();
                if !order.is_holdable(now) {
                    return Err(Error::OrderNotHoldable);
                }
                let event = order_event(app, order).await?;
                let seconds = body.seconds.unwrap_or(event.hold_seconds);
                let expires_at =
                    match extension(order, seconds, app.config.max_order_lifetime_seconds, now) {
                        Extension::AtCap => return Err(Error::HoldLimit),
                        Extension::Unchanged => order.expires_at,
                        Extension::To(later) => {
                            let deadline = holder_deadline(
                                later,
                                app.config.expiry_guard_ms,
                                event.hold_seconds,
                            );
                            if !app
                                .store
                                .extend_order(&stored, later, deadline, now)
                                .await?
                            {
                                back_off(round + 1).await;
                                continue;
                            }
                            later
                        }
                    };
                let token = token.with_expiry(expires_at);
                return Ok(json(
                    StatusCode::OK,
                    &ExtendReply {
                        order_id: &order_id,
                        expires_at: expires_at.to_rfc3339(),
                        hold_token: token.as_str(),
                    },
                ));
            }
            tracing::warn!(order_id = %order_id, "extend-order: the order kept changing under it");
            Err(Error::StoreUnavailable)
        },
    )
    .await)
}

// ----- cancel-order ---------------------------------------------------------

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CancelReply<'a> {
    order_id: &'a OrderId,
    status: OrderStatus,
}

/// `DELETE /orders/{orderId}`: a PENDING (live or past its expiry) or
/// EXPIRED order becomes CANCELLED and lets go of everything at once: a
/// live order's holds in the same transaction; an expired one's holds,
/// which others may have taken meanwhile, each only if still its own, right
/// after. Cancelling again answers the same.
pub async fn cancel_order(app: &App, req: Request) -> Reply {
    Ok(serve(
        "cancel-order",
        &req,
        request_deadline(&req, app.config.request_budget_ms),
        async {
            let order_id = path_param(&req, "orderId", OrderId::parse)?;
            let cancelled = || {
                json(
                    StatusCode::OK,
                    &CancelReply {
                        order_id: &order_id,
                        status: OrderStatus::Cancelled,
                    },
                )
            };
            for round in 0..ORDER_ROUNDS {
                let (stored, _) = read_own_order(app, &req, &order_id).await?;
                let order = &stored.order;
                match order.status {
                    OrderStatus::Completed | OrderStatus::RefundDue => {
                        return Err(Error::OrderNotCancellable)
                    }
                    OrderStatus::Cancelled => return Ok(cancelled()),
                    OrderStatus::Pending | OrderStatus::Expired => {}
                }
                let live = order.is_live(crate::world::now());
                if !app.store.cancel_order(&stored, live).await? {
                    back_off(round + 1).await;
                    continue;
                }
                if !live {
                    app.store.release_leftover_holds(order, &order.seats).await;
                    app.store.release_places(order).await;
                }
                return Ok(cancelled());
            }
            tracing::warn!(order_id = %order_id, "cancel-order: the order kept changing under it");
            Err(Error::StoreUnavailable)
        },
    )
    .await)
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

/// Choices best-available may make for one request. Each lost race (a
/// rival took a chosen seat between the read and the claim) costs one;
/// with this many lost in a row the section is in a stampede, and the
/// client is told to retry (503), never that there are no seats.
const BEST_AVAILABLE_ATTEMPTS: u32 = 20;
/// Rows read in the first round (each row a Query per block of ten seats);
/// each later round reads twice as many, up to [`MAX_ROWS_READ`].
const FIRST_ROWS_READ: usize = 2;
const MAX_ROWS_READ: usize = 64;

/// `POST /orders/{orderId}/best-available`: n adjacent seats in one row,
/// chosen by the contract's rules (domain::best_available) from a cheap
/// read of the section, claimed in one transaction with get-seat's
/// conditions. A lost race reads again, consistently; `not-enough-seats`
/// only after a consistent read found no run of n.
pub async fn best_available(app: &App, req: Request) -> Reply {
    Ok(serve("best-available", &req, request_deadline(&req, app.config.request_budget_ms), async {
        let order_id = path_param(&req, "orderId", OrderId::parse)?;
        let body: BestAvailableBody = json_body(&req, None)?;
        let max = app.config.max_seats_per_order;
        if !(1..=max).contains(&body.quantity) {
            return Err(Error::BadRequest(format!("quantity must be 1 to {max}")));
        }
        // One consistent read of the order first: who asks, and whether it
        // may hold, come before any reading of the section.
        let (stored, token) = read_own_order(app, &req, &order_id).await?;
        if !stored.order.is_holdable(crate::world::now()) {
            return Err(Error::OrderNotHoldable);
        }
        // The order's own expiry (a token from before an extension carries
        // an older one).
        let token = token.with_expiry(stored.order.expires_at);
        let event = app.store.get_event(token.event_id()).await?.ok_or(Error::OrderNotFound)?;
        let sections: Vec<&SectionPlan> = match &body.section_id {
            Some(id) => match event.section(id).ok_or(Error::SectionNotFound)? {
                ga if ga.is_ga() => {
                    return Err(Error::BadRequest(format!("section {id} is general admission: hold places with hold-ga")))
                }
                seated => vec![seated],
            },
            None => event.sections.iter().filter(|s| !s.is_ga()).collect(),
        };
        let n = body.quantity as usize;
        let mut read = Read::default();
        for _ in 0..BEST_AVAILABLE_ATTEMPTS {
            let now = crate::world::now();
            let Some(seats) = choose_seats(app, &event, &sections, n, read, now).await? else {
                if read.consistent {
                    return Err(Error::NotEnoughSeats { quantity: body.quantity });
                }
                // What an eventually consistent read missed, a consistent one sees.
                read.consistent = true;
                continue;
            };
            match app.store.claim_block(&order_id, &token, &seats, max, now).await? {
                BlockClaim::Held(expires_at) => {
                    return Ok(json(
                        StatusCode::OK,
                        &BestAvailableReply { order_id: &order_id, seats: &seats, status: SeatStatus::Held, expires_at: expires_at.to_rfc3339() },
                    ))
                }
                BlockClaim::Taken => {
                    read.consistent = true;
                    read.losses += 1;
                    back_off(read.losses).await;
                }
            }
        }
        tracing::warn!(order_id = %order_id, quantity = body.quantity, "best-available: every choice was taken by a rival first");
        Err(Error::StoreUnavailable)
    })
    .await)
}

/// The seats the rules pick: in the first section (of `sections`, in plan
/// order) with a run of n, by [`spread_choice`]: the contract's choice when
/// uncontended (`losses == 0`), after lost races one of the best row's
/// blocks. Rows are read a few at a time; once a row with an orphan-free
/// block is in hand, later rows cannot change the choice.
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
            if rows.iter().any(|free| best_block(free, n, true).is_some()) {
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
#[derive(Debug, Clone, Copy, Default)]
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

// ----- hold-ga --------------------------------------------------------------

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct HoldGaBody {
    quantity: u32,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct HoldGaReply<'a> {
    order_id: &'a OrderId,
    section_id: &'a SectionId,
    quantity: u32,
    expires_at: String,
}

/// `PUT /orders/{orderId}/ga/{sectionId}`: *sets* the places the order
/// holds in a general-admission section. Raising takes places from a
/// random window of the section's buckets (free ones, then expired holds
/// of other orders: no sweep needed), all of them if the window has too
/// few; lowering gives places back and never fails for lack of any. One
/// transaction: the order as read and every bucket it touches.
pub async fn hold_ga(app: &App, req: Request) -> Reply {
    Ok(serve("hold-ga", &req, request_deadline(&req, app.config.request_budget_ms), async {
        let order_id = path_param(&req, "orderId", OrderId::parse)?;
        let section_id = path_param(&req, "sectionId", SectionId::parse)?;
        let body: HoldGaBody = json_body(&req, None)?;
        let max = app.config.max_seats_per_order;
        if body.quantity > max {
            return Err(Error::BadRequest(format!("quantity must be 0 to {max}")));
        }
        let mut losses = 0;
        for _ in 0..BEST_AVAILABLE_ATTEMPTS {
            let (stored, token) = read_own_order(app, &req, &order_id).await?;
            let order = &stored.order;
            let event = order_event(app, order).await?;
            let section = event.section(&section_id).ok_or(Error::SectionNotFound)?;
            let Some(capacity) = section.capacity else {
                return Err(Error::BadRequest(format!(
                    "section {section_id} is seated: hold its seats with get-seat or best-available"
                )));
            };
            let now = crate::world::now();
            if !order.is_holdable(now) {
                return Err(Error::OrderNotHoldable);
            }
            let here: Vec<HeldPlaces> = order.places.iter().filter(|p| p.section == section_id).cloned().collect();
            let current: u32 = here.iter().map(|p| p.quantity).sum();
            let elsewhere: u32 = order.places.iter().map(|p| p.quantity).sum::<u32>() - current;
            if order.seats.len() as u64 + u64::from(elsewhere) + u64::from(body.quantity) > u64::from(max) {
                return Err(Error::SeatLimit { max });
            }
            let reply = |quantity, expires_at: Millis| {
                json(StatusCode::OK, &HoldGaReply { order_id: &order_id, section_id: &section_id, quantity, expires_at: expires_at.to_rfc3339() })
            };
            let changes: Vec<BucketChange> = if body.quantity == current {
                return Ok(reply(current, order.expires_at));
            } else if body.quantity < current {
                plan_release(&here, current - body.quantity)
                    .into_iter()
                    .map(|(bucket, had, keeps)| BucketChange::Give { bucket, had, keeps })
                    .collect()
            } else {
                let wanted = body.quantity - current;
                match places_to_take(app, &section_id, capacity, order, wanted, losses > 0, now).await? {
                    Ok(takes) => takes.into_iter().map(BucketChange::Take).collect(),
                    Err(available) => return Err(Error::SoldOut { available }),
                }
            };
            if app.store.change_places(&stored, &token, &section_id, &changes, now).await? {
                return Ok(reply(body.quantity, order.expires_at));
            }
            losses += 1;
            back_off(losses).await;
        }
        tracing::warn!(order_id = %order_id, section_id = %section_id, "hold-ga: every try lost to a rival or a change of the order");
        Err(Error::StoreUnavailable)
    })
    .await)
}

/// Where `wanted` more places come from (see [`plan_from_buckets`]).
/// `Err(k)`: the section cannot give that many; `k` is the most this order
/// could hold.
async fn places_to_take(
    app: &App,
    section: &SectionId,
    capacity: u32,
    order: &crate::domain::Order,
    wanted: u32,
    consistent: bool,
    now: Millis,
) -> Result<Result<Vec<Take>, u32>, Error> {
    let me = &order.order_id;
    let planned = plan_from_buckets(
        app,
        &order.event_id,
        section,
        capacity,
        &[],
        consistent,
        |buckets| plan_take(buckets, me, wanted, now),
    )
    .await?;
    Ok(planned.map_err(|buckets| most_holdable(&buckets, me, now)))
}
