//! hold-ga: an order's places in a general-admission section, set to a
//! quantity in one transaction (places found as `reads` finds them).

use lambda_http::http::StatusCode;
use lambda_http::Request;
use serde::{Deserialize, Serialize};

use super::access::read_own_order;
use super::reads::{order_event, plan_from_buckets};
use super::Reply;
use crate::domain::ga::{most_holdable, plan_release, plan_take, HeldPlaces, Take};
use crate::domain::{Event, Millis, Order, OrderId, SectionId};
use crate::error::Error;
use crate::http::{json, json_body, path_param};
use crate::retry::{Rounds, CLAIM_ATTEMPTS};
use crate::store::{BucketChange, PlacesChange};
use crate::App;

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
pub async fn hold_ga(app: &App, req: &Request) -> Reply {
    let order_id = path_param(req, "orderId", OrderId::parse)?;
    let section_id = path_param(req, "sectionId", SectionId::parse)?;
    let body: HoldGaBody = json_body(req, None)?;
    let max = app.config.max_seats_per_order;
    if body.quantity > max {
        return Err(Error::BadRequest(format!("quantity must be 0 to {max}")));
    }
    let mut rounds = Rounds::new("hold-ga", CLAIM_ATTEMPTS);
    while rounds.next().await.is_some() {
        let (stored, token) = read_own_order(app, req, &order_id).await?;
        let order = &stored.order;
        let event = order_event(app, order).await?;
        let capacity = ga_capacity(&event, &section_id)?;
        let now = crate::world::now();
        if !order.is_holdable(now) {
            return Err(Error::OrderNotHoldable);
        }
        let here = held_here_within_limit(order, &section_id, body.quantity, max)?;
        let current: u32 = here.iter().map(|p| p.quantity).sum();
        let reply = |quantity, expires_at: Millis| {
            json(
                StatusCode::OK,
                &HoldGaReply {
                    order_id: &order_id,
                    section_id: &section_id,
                    quantity,
                    expires_at: expires_at.to_rfc3339(),
                },
            )
        };
        if body.quantity == current {
            return Ok(reply(current, order.expires_at));
        }
        let changes: Vec<BucketChange> = if body.quantity < current {
            plan_release(&here, current - body.quantity)
                .into_iter()
                .map(|(bucket, had, keeps)| BucketChange::Give { bucket, had, keeps })
                .collect()
        } else {
            // Lowering is giving back; raising is a claim of more.
            app.refuse_more_for(order, now).await?;
            let wanted = (&section_id, capacity, body.quantity - current);
            let takes = more_places(app, order, wanted, rounds.losses() > 0).await?;
            takes.into_iter().map(BucketChange::Take).collect()
        };
        let report = app
            .store
            .change_places(&stored, &token, &section_id, &changes, now)
            .await?;
        app.memory.learn_buyer(&report.buyer, now);
        match report.change {
            PlacesChange::Changed => return Ok(reply(body.quantity, order.expires_at)),
            PlacesChange::Refused(refused) => return Err(refused),
            PlacesChange::Moved => rounds.lost(),
        }
    }
    Err(rounds.spent())
}

/// The capacity of `section_id`, a general-admission section of `event`.
fn ga_capacity(event: &Event, section_id: &SectionId) -> Result<u32, Error> {
    let section = event.section(section_id).ok_or(Error::SectionNotFound)?;
    section.capacity.ok_or_else(|| {
        Error::BadRequest(format!(
            "section {section_id} is seated: hold its seats with get-seat or best-available"
        ))
    })
}

/// The order's places in `section_id`, if holding `quantity` there keeps
/// it within `max` seats and places in all.
fn held_here_within_limit(
    order: &Order,
    section_id: &SectionId,
    quantity: u32,
    max: u32,
) -> Result<Vec<HeldPlaces>, Error> {
    let (here, elsewhere): (Vec<&HeldPlaces>, Vec<&HeldPlaces>) =
        order.places.iter().partition(|p| p.section == *section_id);
    let elsewhere: u32 = elsewhere.iter().map(|p| p.quantity).sum();
    if order.seats.len() as u64 + u64::from(elsewhere) + u64::from(quantity) > u64::from(max) {
        return Err(Error::SeatLimit { max });
    }
    Ok(here.into_iter().cloned().collect())
}

/// The takes that give `order` `wanted` more places of its section, or
/// the clear no: the section sold out for good (the stream saw every
/// place sold: no bucket needs reading to say so), or how many it could
/// hold at most.
async fn more_places(
    app: &App,
    order: &Order,
    (section_id, capacity, wanted): (&SectionId, u32, u32),
    consistent: bool,
) -> Result<Vec<Take>, Error> {
    if app
        .sold_out_sections(&order.event_id)
        .await?
        .contains(section_id)
    {
        return Err(Error::SoldOut { available: 0 });
    }
    places_to_take(app, section_id, capacity, order, wanted, consistent)
        .await?
        .map_err(|available| Error::SoldOut { available })
}

/// Where `wanted` more places come from (see [`plan_from_buckets`]).
/// `Err(k)`: the section cannot give that many; `k` is the most this order
/// could hold.
async fn places_to_take(
    app: &App,
    section: &SectionId,
    capacity: u32,
    order: &Order,
    wanted: u32,
    consistent: bool,
) -> Result<Result<Vec<Take>, u32>, Error> {
    let me = &order.order_id;
    // Judged as of after the read: a hold that lapsed while the buckets
    // were read frees its places, so a refusal is true at an instant of its
    // request. (A reclaim is conditioned on the hold as read, not on the
    // clock, so a later instant never takes a place it should not.) A
    // refusal's `available` is judged at the same instant as the refusal.
    let judged_at = std::sync::atomic::AtomicI64::new(crate::world::now().0);
    let at = || Millis(judged_at.load(std::sync::atomic::Ordering::Relaxed));
    let planned = plan_from_buckets(
        app,
        &order.event_id,
        section,
        capacity,
        &[],
        consistent,
        |buckets| {
            let now = crate::world::now();
            judged_at.store(now.0, std::sync::atomic::Ordering::Relaxed);
            plan_take(buckets, me, wanted, now)
        },
    )
    .await?;
    Ok(planned.map_err(|buckets| most_holdable(&buckets, me, at())))
}
