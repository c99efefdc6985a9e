//! The holder's order routes that read the order first: extend-order and
//! cancel-order (each then one transaction over the order as read).

use lambda_http::http::StatusCode;
use lambda_http::Request;
use serde::{Deserialize, Serialize};

use super::{read_own_order, Reply};
use crate::domain::{extension, holder_deadline, Extension, Millis, OrderId, OrderStatus, HOLD_SECONDS_RANGE};
use crate::error::Error;
use crate::http::{json, json_body, path_param, serve};
use crate::App;

/// Reads of the order one request may make: each transaction that fails
/// because the order changed under it is followed by a fresh read. A
/// holder racing its own requests settles in two; more means the store
/// keeps conflicting, and the client is told to retry (503).
const ORDER_ROUNDS: usize = 4;

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
    Ok(serve("extend-order", &req, async {
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
        for _ in 0..ORDER_ROUNDS {
            let (stored, token) = read_own_order(app, &req, &order_id).await?;
            let order = &stored.order;
            let now = Millis::now();
            if !order.is_holdable(now) {
                return Err(Error::OrderNotHoldable);
            }
            let event = app.store.get_event(&order.event_id).await?.ok_or_else(|| {
                Error::Corrupt(format!("order {} names an event that does not exist", order.order_id))
            })?;
            let seconds = body.seconds.unwrap_or(event.hold_seconds);
            let expires_at = match extension(order, seconds, app.config.max_order_lifetime_seconds, now) {
                Extension::AtCap => return Err(Error::HoldLimit),
                Extension::Unchanged => order.expires_at,
                Extension::To(later) => {
                    let deadline = holder_deadline(later, app.config.expiry_guard_ms, event.hold_seconds);
                    if !app.store.extend_order(&stored, later, deadline, now).await? {
                        continue;
                    }
                    later
                }
            };
            let token = token.with_expiry(expires_at);
            return Ok(json(
                StatusCode::OK,
                &ExtendReply { order_id: &order_id, expires_at: expires_at.to_rfc3339(), hold_token: token.as_str() },
            ));
        }
        tracing::warn!(order_id = %order_id, "extend-order: the order kept changing under it");
        Err(Error::StoreUnavailable)
    })
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
    Ok(serve("cancel-order", &req, async {
        let order_id = path_param(&req, "orderId", OrderId::parse)?;
        let cancelled = || json(StatusCode::OK, &CancelReply { order_id: &order_id, status: OrderStatus::Cancelled });
        for _ in 0..ORDER_ROUNDS {
            let (stored, _) = read_own_order(app, &req, &order_id).await?;
            let order = &stored.order;
            match order.status {
                OrderStatus::Completed | OrderStatus::RefundDue => return Err(Error::OrderNotCancellable),
                OrderStatus::Cancelled => return Ok(cancelled()),
                OrderStatus::Pending | OrderStatus::Expired => {}
            }
            let live = order.is_live(Millis::now());
            let in_txn = if live { order.seats.as_slice() } else { &[] };
            if !app.store.cancel_order(&stored, in_txn).await? {
                continue;
            }
            if !live {
                app.store.release_leftover_holds(order, &order.seats).await;
            }
            return Ok(cancelled());
        }
        tracing::warn!(order_id = %order_id, "cancel-order: the order kept changing under it");
        Err(Error::StoreUnavailable)
    })
    .await)
}
