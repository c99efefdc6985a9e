//! Who may use an order's routes: the hold token, checked against the
//! order (read first) or against the order id alone (routes that write
//! without reading).

use lambda_http::Request;

use crate::auth::HoldToken;
use crate::domain::{EventRef, Order, OrderId};
use crate::error::Error;
use crate::http::header;
use crate::store::StoredOrder;
use crate::App;

pub(super) fn bearer(req: &Request) -> Option<HoldToken> {
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
pub(super) async fn read_own_order(
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

/// The hold token of an order route that writes without reading the order
/// first. Without a well-formed one, or with one of another event than the
/// order id names, there is nothing to write, so the order is read only to
/// tell `404` from `401`.
pub(super) async fn order_token(
    app: &App,
    req: &Request,
    order_id: &OrderId,
) -> Result<HoldToken, Error> {
    let event_ref = order_id.event_ref();
    match bearer(req) {
        Some(token) if event_ref.is_some_and(|r| r == EventRef::of(token.event_id())) => Ok(token),
        _ => match app.store.get_order(order_id).await? {
            None => Err(Error::OrderNotFound),
            Some(_) => Err(Error::Unauthorized),
        },
    }
}
