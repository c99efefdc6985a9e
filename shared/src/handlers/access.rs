//! Who may use an order's routes: the hold token, its MAC checked in
//! memory for the order in the path before any request to the store, then
//! its secret against the order (read first) or by the write's condition
//! (routes that write without reading).

use lambda_http::Request;

use crate::auth::{HoldToken, HoldTokenKeys};
use crate::domain::{EventRef, Order, OrderId};
use crate::error::Error;
use crate::http::header;
use crate::reason::Reason;
use crate::store::StoredOrder;
use crate::App;

/// The keys of hold tokens; without them no token verifies.
fn keys(app: &App) -> Result<&HoldTokenKeys, Error> {
    app.config
        .hold_token_keys
        .as_ref()
        .ok_or(Error::Unauthorized(Reason::KeysNotConfigured))
}

/// The hold token of a request on `order_id`'s routes, or `401` without a
/// request to the store: a token whose MAC does not verify for this order
/// was not issued for it, whether or not the order exists. (The MAC
/// covers the token's clear event id, which builds seat keys; it must be
/// the event the order id names.)
pub(super) fn holder_token(
    app: &App,
    req: &Request,
    order_id: &OrderId,
) -> Result<HoldToken, Error> {
    keys(app)?
        .from_authorization(order_id, header(req, "authorization"))
        .and_then(|token| {
            (order_id.event_ref() == Some(EventRef::of(token.event_id())))
                .then_some(token)
                .ok_or(Reason::HoldTokenMac)
        })
        .map_err(Error::Unauthorized)
}

/// The wire form of `token` for `order_id`: what create-order and
/// extend-order hand out.
pub(super) fn issued(app: &App, order_id: &OrderId, token: &HoldToken) -> Result<String, Error> {
    let keys = app.config.token_keys()?;
    Ok(keys.encode(order_id, token))
}

/// Whether `token` is one of the tokens `order` was given: its secret's
/// hash, and the order's event.
fn token_opens(token: &HoldToken, order: &Order) -> bool {
    token.event_id() == &order.event_id && token.matches(&order.token_hash)
}

/// Reads an order for one of its holder's routes: `401` (unread) unless
/// the request carries a token issued for it, `404` if there is none,
/// `401` unless the token's secret is the order's.
pub(super) async fn read_own_order(
    app: &App,
    req: &Request,
    order_id: &OrderId,
) -> Result<(StoredOrder, HoldToken), Error> {
    let token = holder_token(app, req, order_id)?;
    let stored = app
        .store
        .get_order(order_id)
        .await?
        .ok_or(Error::OrderNotFound)?;
    if token_opens(&token, &stored.order) {
        Ok((stored, token))
    } else {
        Err(Error::Unauthorized(Reason::HoldTokenOtherOrder))
    }
}
