//! The API's handlers: plain async functions of the app and a request,
//! called by the Lambda binaries and by the local dev server alike.

use std::convert::Infallible;

use lambda_http::http::StatusCode;
use lambda_http::{Body, Request, Response};
use serde::{Deserialize, Serialize};

use crate::auth::HoldToken;
use crate::domain::{
    Event, EventId, EventRef, Order, OrderId, OrderStatus, PaymentId, SeatId, SectionId,
    MAX_USER_ID_LEN,
};
use crate::error::Error;
use crate::http::{header, json, json_body, path_param, request_deadline, serve};
use crate::store::StoredOrder;
use crate::App;

mod confirm;
mod contention;
mod events;
mod orders;
mod places;
pub use confirm::confirm;
pub use events::{availability, create_event, get_event, list_seats};
pub use orders::{best_available, cancel_order, extend_order, hold_ga};

/// A general-admission entry of a reply: places of one section.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct GaEntry {
    pub section_id: SectionId,
    pub quantity: u32,
}

type Reply = Result<Response<Body>, Infallible>;

// ----- create-order ---------------------------------------------------------

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct CreateOrderBody {
    #[serde(default)]
    user_id: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CreateOrderReply<'a> {
    order_id: &'a OrderId,
    hold_token: &'a str,
    event_id: &'a EventId,
    status: OrderStatus,
    expires_at: String,
    created_at: String,
}

/// A new PENDING order of `event` opened at `now`, and its hold token:
/// the randomness both need is drawn here, at the edge, and the domain
/// builds the order from it (the token is the only copy of its secret).
pub fn open_order(
    event: &Event,
    now: crate::domain::Millis,
    guard_ms: u32,
    user_id: Option<String>,
) -> Result<(Order, HoldToken), Error> {
    let token = HoldToken::generate(&event.event_id, Order::expiry_for(event, now))?;
    let random = crate::world::random_u128()
        .ok_or_else(|| Error::Corrupt("no randomness for an order id".into()))?;
    let order_id = OrderId::from_random(&event.event_id, random);
    let order = Order::new_pending(event, now, guard_ms, user_id, order_id, token.hash());
    Ok((order, token))
}

/// `POST /events/{eventId}/orders`
pub async fn create_order(app: &App, req: Request) -> Reply {
    Ok(serve(
        "create-order",
        &req,
        request_deadline(&req, app.config.request_budget_ms),
        async {
            let event_id = path_param(&req, "eventId", EventId::parse)?;
            let body: CreateOrderBody = json_body(&req, Some(CreateOrderBody::default()))?;
            if let Some(user) = &body.user_id {
                if user.is_empty()
                    || user.chars().count() > MAX_USER_ID_LEN
                    || user.chars().any(char::is_control)
                {
                    return Err(Error::BadRequest(format!(
                        "userId must be 1-{MAX_USER_ID_LEN} characters without control characters"
                    )));
                }
            }
            let event = app
                .store
                .get_event(&event_id)
                .await?
                .ok_or(Error::EventNotFound)?;
            let (order, token) = open_order(
                &event,
                crate::world::now(),
                app.config.expiry_guard_ms,
                body.user_id,
            )?;
            app.store.create_order(&order).await?;
            Ok(json(
                StatusCode::CREATED,
                &CreateOrderReply {
                    order_id: &order.order_id,
                    hold_token: token.as_str(),
                    event_id: &order.event_id,
                    status: OrderStatus::Pending,
                    expires_at: order.expires_at.to_rfc3339(),
                    created_at: order.created_at.to_rfc3339(),
                },
            ))
        },
    )
    .await)
}

// ----- get-order ------------------------------------------------------------

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct OrderReply<'a> {
    order_id: &'a OrderId,
    event_id: &'a EventId,
    status: OrderStatus,
    expires_at: String,
    created_at: String,
    seats: &'a [SeatId],
    ga: &'a [GaEntry],
    #[serde(skip_serializing_if = "Option::is_none")]
    payment_id: Option<&'a PaymentId>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    refund_payment_ids: &'a [PaymentId],
}

/// The event an order is for (an order naming no event is corrupt data).
async fn order_event(app: &App, order: &Order) -> Result<std::sync::Arc<Event>, Error> {
    app.store.get_event(&order.event_id).await?.ok_or_else(|| {
        Error::Corrupt(format!(
            "order {} names an event that does not exist",
            order.order_id
        ))
    })
}

/// An order's places per general-admission section, in plan order, none
/// with zero.
async fn places_by_section(app: &App, order: &Order) -> Result<Vec<GaEntry>, Error> {
    if order.places.is_empty() {
        return Ok(Vec::new());
    }
    let event = order_event(app, order).await?;
    Ok(event
        .ga_sections()
        .map(|(section, _)| GaEntry {
            section_id: section.clone(),
            quantity: order
                .places
                .iter()
                .filter(|p| &p.section == section)
                .map(|p| p.quantity)
                .sum(),
        })
        .filter(|entry| entry.quantity > 0)
        .collect())
}

/// `entries` (sections and quantities) in the order of the event's plan.
async fn in_plan_order(
    app: &App,
    order: &Order,
    entries: &[GaEntry],
) -> Result<Vec<GaEntry>, Error> {
    if entries.len() < 2 {
        return Ok(entries.to_vec());
    }
    let event = order_event(app, order).await?;
    let position = |section: &SectionId| {
        event
            .sections
            .iter()
            .position(|s| &s.section_id == section)
            .unwrap_or(usize::MAX)
    };
    let mut sorted = entries.to_vec();
    sorted.sort_by_key(|e| position(&e.section_id));
    Ok(sorted)
}

fn bearer(req: &Request) -> Option<HoldToken> {
    HoldToken::from_authorization(header(req, "authorization"))
}

/// Whether `token` is one of the tokens `order` was given: its secret's
/// hash, and the event its order id names (the token's clear event id
/// builds seat keys, so it must be the order's own).
fn token_opens(token: &HoldToken, order: &Order) -> bool {
    token.event_id() == &order.event_id && token.matches(&order.token_hash)
}

/// Reads an order for one of its holder's routes: `404` if there is none,
/// `401` unless the request carries one of its tokens.
async fn read_own_order(
    app: &App,
    req: &Request,
    order_id: &OrderId,
) -> Result<(StoredOrder, HoldToken), Error> {
    let stored = app
        .store
        .get_order(order_id)
        .await?
        .ok_or(Error::OrderNotFound)?;
    match bearer(req) {
        Some(token) if token_opens(&token, &stored.order) => Ok((stored, token)),
        _ => Err(Error::Unauthorized),
    }
}

/// `GET /orders/{orderId}`
pub async fn get_order(app: &App, req: Request) -> Reply {
    Ok(serve(
        "get-order",
        &req,
        request_deadline(&req, app.config.request_budget_ms),
        async {
            let order_id = path_param(&req, "orderId", OrderId::parse)?;
            let (stored, _) = read_own_order(app, &req, &order_id).await?;
            let order = &stored.order;
            let ga = places_by_section(app, order).await?;
            Ok(json(
                StatusCode::OK,
                &OrderReply {
                    order_id: &order.order_id,
                    event_id: &order.event_id,
                    status: order.effective_status(crate::world::now()),
                    expires_at: order.expires_at.to_rfc3339(),
                    created_at: order.created_at.to_rfc3339(),
                    seats: &order.seats,
                    ga: &ga,
                    payment_id: order.payment_id.as_ref(),
                    refund_payment_ids: &order.refund_payment_ids,
                },
            ))
        },
    )
    .await)
}

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

/// The hold token of an order route that writes without reading the order
/// first. Without a well-formed one, or with one of another event than the
/// order id names, there is nothing to write, so the order is read only to
/// tell `404` from `401`.
async fn order_token(app: &App, req: &Request, order_id: &OrderId) -> Result<HoldToken, Error> {
    let event_ref = order_id.event_ref();
    match bearer(req) {
        Some(token) if event_ref.is_some_and(|r| r == EventRef::of(token.event_id())) => Ok(token),
        _ => match app.store.get_order(order_id).await? {
            None => Err(Error::OrderNotFound),
            Some(_) => Err(Error::Unauthorized),
        },
    }
}

/// `POST /orders/{orderId}/seats/{seatId}`: one transaction, no read.
pub async fn get_seat(app: &App, req: Request) -> Reply {
    Ok(serve(
        "get-seat",
        &req,
        request_deadline(&req, app.config.request_budget_ms),
        async {
            let order_id = path_param(&req, "orderId", OrderId::parse)?;
            let seat_id = path_param(&req, "seatId", SeatId::parse)?;
            let token = order_token(app, &req, &order_id).await?;
            let expires_at = app
                .store
                .claim_seat(
                    &order_id,
                    &token,
                    &seat_id,
                    app.config.max_seats_per_order,
                    crate::world::now(),
                )
                .await?;
            Ok(json(
                StatusCode::OK,
                &SeatReply {
                    order_id: &order_id,
                    seat_id: &seat_id,
                    status: crate::domain::SeatStatus::Held,
                    expires_at: Some(expires_at.to_rfc3339()),
                },
            ))
        },
    )
    .await)
}

/// `DELETE /orders/{orderId}/seats/{seatId}`: one transaction, no read.
pub async fn drop_seat(app: &App, req: Request) -> Reply {
    Ok(serve(
        "drop-seat",
        &req,
        request_deadline(&req, app.config.request_budget_ms),
        async {
            let order_id = path_param(&req, "orderId", OrderId::parse)?;
            let seat_id = path_param(&req, "seatId", SeatId::parse)?;
            let token = order_token(app, &req, &order_id).await?;
            app.store
                .release_seat(&order_id, &token, &seat_id, crate::world::now())
                .await?;
            Ok(json(
                StatusCode::OK,
                &SeatReply {
                    order_id: &order_id,
                    seat_id: &seat_id,
                    status: crate::domain::SeatStatus::Available,
                    expires_at: None,
                },
            ))
        },
    )
    .await)
}
