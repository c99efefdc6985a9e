//! `POST /payments/stripe`: Stripe's webhook, taken as Stripe sends it, so
//! a seller paid through Stripe Checkout needs no relay of its own.
//!
//! The `Stripe-Signature` is checked before anything else. A Checkout
//! Session names its order and exactly what was paid for in its
//! `metadata` (`seatclaimOrderId`, and `seatclaimSeats` and `seatclaimGa`
//! as confirm's body has `seats` and `ga`, each a JSON text), checked as confirm checks its body; the session's id
//! is the payment's id. Then the sale is confirm's own (`sale`): the late
//! path, refunds and duplicates alike.
//!
//! Stripe retries anything but a 2xx for days, so every answer that is
//! final is `200` with a receipt saying what became of the payment (sold,
//! not sold and why, waiting for a delayed method, ignored); a busy store
//! keeps its `503` (a retry can finish), and a request this route cannot
//! read keeps its `400` so that Stripe's delivery log shows it.

use std::collections::HashMap;

use lambda_http::http::StatusCode;
use lambda_http::{Body, Request, Response};
use serde::{Deserialize, Serialize};

use super::sale::{counted, settle, Paid, PaidBody, Sale};
use super::{GaEntry, Reply};
use crate::domain::{OrderId, PaymentId, SeatId};
use crate::error::Error;
use crate::http::{json, raw_body};
use crate::reason::Reason;
use crate::App;

/// The event types that can pay for an order.
pub const SESSION_COMPLETED: &str = "checkout.session.completed";
pub const ASYNC_PAYMENT_SUCCEEDED: &str = "checkout.session.async_payment_succeeded";

/// The session's metadata keys, as the seller sets them at creation:
/// prefixed, so another checkout of the same Stripe account (a shop's
/// `orderId`) is never taken for one of ours.
pub const METADATA_ORDER_ID: &str = "seatclaimOrderId";
pub const METADATA_SEATS: &str = "seatclaimSeats";
pub const METADATA_GA: &str = "seatclaimGa";

/// The part of a Stripe event this route reads.
#[derive(Deserialize)]
struct StripeEvent {
    id: String,
    #[serde(rename = "type")]
    kind: String,
    data: EventData,
}

#[derive(Deserialize)]
struct EventData {
    object: serde_json::Value,
}

/// The part of a Checkout Session this route reads.
#[derive(Deserialize)]
struct CheckoutSession {
    id: String,
    #[serde(default)]
    payment_status: Option<String>,
    /// Stripe's metadata is nullable: `null` is no metadata.
    #[serde(default)]
    metadata: Option<HashMap<String, String>>,
}

impl CheckoutSession {
    fn metadata(&self, key: &str) -> Option<&String> {
        self.metadata.as_ref()?.get(key)
    }
}

/// Whether an event of type `kind` can pay for an order. Every other
/// event (a failed delayed payment, an expired session, any other type) is
/// acknowledged and ignored: the order's holds run out as they would.
pub fn pays_for_orders(kind: &str) -> bool {
    matches!(kind, SESSION_COMPLETED | ASYNC_PAYMENT_SUCCEEDED)
}

/// What a paying event's session asks of this route ([`checkout_action`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckoutAction {
    /// Paid: sell what the metadata names.
    Sell,
    /// Completed, but a delayed method (a bank debit) has not paid yet:
    /// `checkout.session.async_payment_succeeded` will say when it has.
    Wait,
    /// Nothing was paid: nothing is sold.
    NothingPaid,
}

/// The rule for a session's `payment_status`: `paid` sells, `unpaid` (or
/// anything else) waits for the delayed payment's success, and
/// `no_payment_required` (a 100% discount, a setup session) paid nothing,
/// so it sells nothing: exactly what was paid is sold, and a free order is
/// the seller's to confirm.
pub fn checkout_action(payment_status: Option<&str>) -> CheckoutAction {
    match payment_status {
        Some("paid") => CheckoutAction::Sell,
        Some("no_payment_required") => CheckoutAction::NothingPaid,
        _ => CheckoutAction::Wait,
    }
}

/// What became of an event, as the receipt says.
#[derive(Serialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
enum Outcome {
    /// The order is completed with this payment (now, or before).
    Sold,
    /// The payment sold nothing: `error` says why, as confirm's 409 would,
    /// and `refund` whether it is recorded on the order for refund.
    NotSold,
    /// Not paid yet.
    Waiting,
    /// Not an order's payment.
    Ignored,
}

/// The `200` reply: what became of the event.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Receipt<'a> {
    event_id: &'a str,
    outcome: Outcome,
    #[serde(skip_serializing_if = "Option::is_none")]
    order_id: Option<&'a OrderId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    payment_id: Option<&'a PaymentId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    seats: Option<&'a [SeatId]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ga: Option<&'a [GaEntry]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'static str>,
    /// On `not-sold`: the rule, where one refused it (`buyer-limit`).
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'static str>,
    /// On `not-sold`: whether the payment is recorded on the order for
    /// refund (as confirm's `refund`).
    #[serde(skip_serializing_if = "Option::is_none")]
    refund: Option<bool>,
    message: String,
}

impl<'a> Receipt<'a> {
    fn new(event_id: &'a str, outcome: Outcome, message: impl Into<String>) -> Self {
        Self {
            event_id,
            outcome,
            order_id: None,
            payment_id: None,
            seats: None,
            ga: None,
            error: None,
            reason: None,
            refund: None,
            message: message.into(),
        }
    }

    fn reply(&self) -> Response<Body> {
        json(StatusCode::OK, self)
    }
}

/// `POST /payments/stripe` — called by Stripe.
pub async fn stripe_payment(app: &App, req: &Request) -> Reply {
    let secrets = app
        .config
        .stripe_secrets
        .as_ref()
        .ok_or(Error::Unauthorized(Reason::KeysNotConfigured))?;
    // The signature before anything else, the body's size included.
    secrets
        .verify(req.headers(), req.body().as_ref(), crate::world::now())
        .map_err(Error::Unauthorized)?;
    let event: StripeEvent = serde_json::from_slice(raw_body(req)?).map_err(|e| {
        Error::BadRequest(format!("not a Stripe event (id, type, data.object): {e}"))
    })?;
    if !pays_for_orders(&event.kind) {
        let why = format!("{} does not pay for an order", event.kind);
        return Ok(Receipt::new(&event.id, Outcome::Ignored, why).reply());
    }
    let session = CheckoutSession::deserialize(&event.data.object)
        .map_err(|e| Error::BadRequest(format!("data.object is not a Checkout Session: {e}")))?;
    let Some(order) = session.metadata(METADATA_ORDER_ID) else {
        let why = "the session's metadata has no seatclaimOrderId: not a seatclaim order";
        return Ok(Receipt::new(&event.id, Outcome::Ignored, why).reply());
    };
    let order_id = OrderId::parse(order).map_err(|e| metadata_error(METADATA_ORDER_ID, e))?;
    match checkout_action(session.payment_status.as_deref()) {
        CheckoutAction::Sell => {}
        CheckoutAction::Wait => {
            let why = "the session is not paid yet (a delayed method): the order sells when its payment succeeds";
            let mut receipt = Receipt::new(&event.id, Outcome::Waiting, why);
            receipt.order_id = Some(&order_id);
            return Ok(receipt.reply());
        }
        CheckoutAction::NothingPaid => {
            let why = "nothing was paid (no_payment_required): nothing is sold";
            return Ok(Receipt::new(&event.id, Outcome::Ignored, why).reply());
        }
    }
    let paid = paid_by(&session, order_id.clone(), app.config.max_seats_per_order)?;
    receipt_of(
        &event.id,
        &order_id,
        &paid.payment,
        counted(settle(app, &order_id, &paid).await),
    )
}

/// What the session paid for: its metadata as confirm's body, checked as
/// confirm checks it; the session's id is the payment's.
fn paid_by(session: &CheckoutSession, order_id: OrderId, max: u32) -> Result<Paid, Error> {
    let payment_id = PaymentId::parse(&session.id)
        .map_err(|e| Error::BadRequest(format!("the session's id is not a payment id: {e}")))?;
    let body = PaidBody {
        order_id: order_id.clone(),
        payment_id,
        seats: metadata_list(session, METADATA_SEATS)?,
        ga: metadata_list(session, METADATA_GA)?,
    };
    Paid::from_body(body, &order_id, max)
        .map_err(|e| Error::BadRequest(format!("the session's metadata: {e}")))
}

/// A metadata value holding a JSON array (none when the key is absent).
fn metadata_list<T: serde::de::DeserializeOwned>(
    session: &CheckoutSession,
    key: &'static str,
) -> Result<Vec<T>, Error> {
    match session.metadata(key) {
        None => Ok(Vec::new()),
        Some(text) => serde_json::from_str(text).map_err(|e| metadata_error(key, e)),
    }
}

fn metadata_error(key: &str, e: impl std::fmt::Display) -> Error {
    Error::BadRequest(format!("the session's metadata.{key} is not valid: {e}"))
}

/// The receipt of a sale, or of a payment that sold nothing for a reason
/// a retry cannot change (confirm's `409`s, and an order this stack does
/// not have: another stack's on the same Stripe account); any other
/// error stays the reply.
fn receipt_of(
    event_id: &str,
    order_id: &OrderId,
    payment: &PaymentId,
    settled: Result<Sale, Error>,
) -> Reply {
    let refused = match settled {
        Ok(sale) => {
            let mut receipt = Receipt::new(event_id, Outcome::Sold, "the order is completed");
            receipt.order_id = Some(&sale.order_id);
            receipt.payment_id = Some(&sale.payment);
            receipt.seats = Some(&sale.seats);
            receipt.ga = Some(&sale.ga);
            return Ok(receipt.reply());
        }
        Err(refused)
            if refused.is_refund()
                || matches!(refused, Error::PaymentReused | Error::OrderNotFound) =>
        {
            refused
        }
        Err(other) => return Err(other),
    };
    let mut receipt = Receipt::new(event_id, Outcome::NotSold, refused.to_string());
    receipt.order_id = Some(order_id);
    receipt.payment_id = Some(payment);
    receipt.error = Some(refused.code());
    receipt.refund = Some(refused.is_refund());
    receipt.reason = refused.reason().map(|reason| reason.code());
    Ok(receipt.reply())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn which_events_sell_wait_or_are_ignored() {
        use CheckoutAction::{NothingPaid, Sell, Wait};
        for kind in [SESSION_COMPLETED, ASYNC_PAYMENT_SUCCEEDED] {
            assert!(pays_for_orders(kind), "{kind}");
        }
        let ignored = [
            "checkout.session.async_payment_failed",
            "checkout.session.expired",
            "payment_intent.succeeded",
            "charge.refunded",
        ];
        for kind in ignored {
            assert!(!pays_for_orders(kind), "{kind}");
        }
        let cases = [
            (Some("paid"), Sell),
            (Some("no_payment_required"), NothingPaid),
            (Some("unpaid"), Wait),
            (None, Wait),
            (Some("PAID"), Wait),
        ];
        for (status, want) in cases {
            assert_eq!(checkout_action(status), want, "{status:?}");
        }
    }
}
