//! `POST /orders/{orderId}/confirm`: the payment backend's signed webhook.
//!
//! The Standard Webhooks signature is checked before anything else; the
//! body names the order and exactly what was paid for, and the sale is
//! `sale`'s, as the Stripe route's is.

use lambda_http::http::StatusCode;
use lambda_http::{Body, Request, Response};
use serde::Serialize;

use super::sale::{counted, settle, Paid, Sale};
use super::{GaEntry, Reply};
use crate::domain::{OrderId, OrderStatus, PaymentId, SeatId};
use crate::error::Error;
use crate::http::{json, json_body, path_param, raw_body};
use crate::reason::Reason;
use crate::App;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ConfirmReply<'a> {
    order_id: &'a OrderId,
    status: OrderStatus,
    seats: &'a [SeatId],
    ga: &'a [GaEntry],
    payment_id: &'a PaymentId,
}

/// A sale as confirm answers it.
fn completed(sale: &Sale) -> Response<Body> {
    json(
        StatusCode::OK,
        &ConfirmReply {
            order_id: &sale.order_id,
            status: OrderStatus::Completed,
            seats: &sale.seats,
            ga: &sale.ga,
            payment_id: &sale.payment,
        },
    )
}

/// `POST /orders/{orderId}/confirm` — called by the payment backend.
pub async fn confirm(app: &App, req: &Request) -> Reply {
    counted(confirm_payment(app, req).await)
}

/// confirm's work: the signature, the body, then the sale.
async fn confirm_payment(app: &App, req: &Request) -> Result<Response<Body>, Error> {
    let secrets = app
        .config
        .confirm_secrets
        .as_ref()
        .ok_or(Error::Unauthorized(Reason::KeysNotConfigured))?;
    // The signature is checked before anything else, the body's size
    // included (API Gateway caps it at 10 MB).
    secrets.verify(req.headers(), req.body().as_ref(), crate::world::now())?;
    raw_body(req)?;
    let order_id = path_param(req, "orderId", OrderId::parse)?;
    let paid = Paid::from_body(
        json_body(req, None)?,
        &order_id,
        app.config.max_seats_per_order,
    )?;
    Ok(completed(&settle(app, &order_id, &paid).await?))
}
