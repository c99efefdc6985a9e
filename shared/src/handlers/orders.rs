//! The order routes: create-order, get-order, extend-order and
//! cancel-order (extend and cancel read the order, then one transaction
//! over it as read).

use lambda_http::http::StatusCode;
use lambda_http::Request;
use serde::{Deserialize, Serialize};

use super::access::{issued, read_own_order};
use super::cancel::cancel_as_read;
use super::reads::no_such_event;
use super::Reply;
use crate::auth::{HoldToken, IdempotencyScope, MIN_BARE_IDEMPOTENCY_KEY_LEN, TOKEN_SECRET_BYTES};
use crate::domain::buyer::{BuyerId, Buyers};
use crate::domain::queue::ORDERS_PER_ADMISSION;
use crate::domain::queue_state::QueueState;
use crate::domain::{
    extension, holder_deadline, EventHead, EventId, Extension, Order, OrderBuyer, OrderId,
    OrderStatus, VisitorId, HOLD_SECONDS_RANGE, MAX_USER_ID_LEN,
};
use crate::error::Error;
use crate::http::{json, json_body, path_param};
use crate::reason::Reason;
use crate::retry::{Rounds, ORDER_ROUNDS};
use crate::App;

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
/// the randomness both need is drawn here, at the edge (or, under an
/// admission with an `Idempotency-Key`, derived: `derived`), and the
/// domain builds the order from it (the token is the only copy of its
/// secret).
pub fn open_order(
    event: &EventHead,
    now: crate::domain::Millis,
    guard_ms: u32,
    user_id: Option<String>,
) -> Result<(Order, HoldToken), Error> {
    open_order_from(event, now, guard_ms, user_id, None)
}

fn open_order_from(
    event: &EventHead,
    now: crate::domain::Millis,
    guard_ms: u32,
    user_id: Option<String>,
    derived: Option<(u128, [u8; TOKEN_SECRET_BYTES])>,
) -> Result<(Order, HoldToken), Error> {
    let expires_at = Order::expiry_for(event, now);
    let (random, token) = match derived {
        Some((random, secret)) => (
            random,
            HoldToken::from_secret(&event.event_id, expires_at, secret),
        ),
        None => (
            crate::world::random_u128()
                .ok_or_else(|| Error::Corrupt("no randomness for an order id".into()))?,
            HoldToken::generate(&event.event_id, expires_at)?,
        ),
    };
    let order_id = OrderId::from_random(&event.event_id, random);
    let order = Order::new_pending(event, now, guard_ms, user_id, order_id, token.hash());
    Ok((order, token))
}

/// `POST /events/{eventId}/orders`
pub async fn create_order(app: &App, req: &Request) -> Reply {
    let event_id = path_param(req, "eventId", EventId::parse)?;
    let body: CreateOrderBody = json_body(req, Some(CreateOrderBody::default()))?;
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
    // A malformed Idempotency-Key is a 400, before any 404 or 409.
    crate::http::idempotency_key(req)?;
    let event = app
        .event_head(&event_id)
        .await?
        .ok_or(Error::EventNotFound)?;
    let now = crate::world::now();
    app.refuse_if_waitlist_only(&event_id, now).await?;
    let (order, token) = match app.queue(&event_id, now).await? {
        None => {
            let buyer = order_buyer(app, req, &event, None, now)?;
            open_unqueued_order(app, req, &event, body.user_id, buyer, now).await?
        }
        Some(queue) => {
            let opening = admitted_opening(app, req, &event_id, &queue, now)?;
            let admitted = admitted_buyer(app, &event, &queue, &opening.visitor).await?;
            let buyer = order_buyer(app, req, &event, admitted, now)?;
            open_admitted_order(app, &event, opening, body.user_id, buyer, now).await?
        }
    };
    Ok(json(
        StatusCode::CREATED,
        &CreateOrderReply {
            order_id: &order.order_id,
            hold_token: &issued(app, &order.order_id, &token)?,
            event_id: &order.event_id,
            status: order.effective_status(now),
            expires_at: order.expires_at.to_rfc3339(),
            created_at: order.created_at.to_rfc3339(),
        },
    ))
}

/// An order opened without a queue: a fresh one, or, under an
/// `Idempotency-Key` sent before, the order it opened then, as it is now
/// ([`order_opened_before`]). The key is scoped to the order's buyer where
/// it has one; with none it must be [`MIN_BARE_IDEMPOTENCY_KEY_LEN`]
/// characters at least (`400`), so that nobody can guess another's.
async fn open_unqueued_order(
    app: &App,
    req: &Request,
    event: &EventHead,
    user_id: Option<String>,
    buyer: Option<OrderBuyer>,
    now: crate::domain::Millis,
) -> Result<(Order, HoldToken), Error> {
    let key = crate::http::idempotency_key(req)?;
    let derived = match (&key, &buyer) {
        (None, _) => None,
        (Some(key), Some(buyer)) => Some(derived_order(
            app,
            IdempotencyScope::Buyer(&buyer.buyer_ref),
            key.as_str(),
            event,
        )?),
        (Some(key), None) if key.as_str().len() >= MIN_BARE_IDEMPOTENCY_KEY_LEN => Some(
            derived_order(app, IdempotencyScope::Bare, key.as_str(), event)?,
        ),
        (Some(_), None) => {
            return Err(Error::BadRequest(format!(
                "an Idempotency-Key without a buyer token must be at least \
                 {MIN_BARE_IDEMPOTENCY_KEY_LEN} characters (128 random bits)"
            )))
        }
    };
    let guard = app.config.expiry_guard_ms;
    let (mut order, token) = open_order_from(event, now, guard, user_id, derived)?;
    order.buyer = buyer;
    let token = token.for_buyer(order.limited_buyer());
    if app.store.create_order(&order).await? || key.is_none() {
        return Ok((order, token));
    }
    order_opened_before(app, &order, token).await
}

/// An order opened under an admission: a fresh one, or, under an
/// `Idempotency-Key` sent before, the order it opened then, as it is now
/// ([`order_opened_before`]).
async fn open_admitted_order(
    app: &App,
    event: &EventHead,
    opening: AdmittedOpening,
    user_id: Option<String>,
    buyer: Option<OrderBuyer>,
    now: crate::domain::Millis,
) -> Result<(Order, HoldToken), Error> {
    let derived = match opening.idempotency_key.as_deref() {
        None => None,
        Some(key) => Some(derived_order(
            app,
            IdempotencyScope::Admission(&opening.claims.jti),
            key,
            event,
        )?),
    };
    let guard = app.config.expiry_guard_ms;
    let (mut order, token) = open_order_from(event, now, guard, user_id, derived)?;
    order.visitor_id = Some(opening.visitor);
    order.buyer = buyer;
    let token = token.for_buyer(order.limited_buyer());
    let claims = &opening.claims;
    let created = app
        .store
        .create_admitted_order(&order, &claims.jti, opening.allowed, claims.expires_at())
        .await?;
    if created {
        return Ok((order, token));
    }
    order_opened_before(app, &order, token).await
}

/// The id and token secret of the order an `Idempotency-Key` in `scope`
/// names, derived under the server key
/// ([`crate::auth::HoldTokenKeys::idempotent_order`]).
fn derived_order(
    app: &App,
    scope: IdempotencyScope<'_>,
    key: &str,
    event: &EventHead,
) -> Result<(u128, [u8; TOKEN_SECRET_BYTES]), Error> {
    let keys = app.config.token_keys()?;
    Ok(keys.idempotent_order(scope, key, &event.event_id))
}

/// The order an `Idempotency-Key` opened before, which `order` (the one
/// this request would have opened) found there: as it is now, with the
/// token carrying its expiry, if it was opened with the same body and by
/// the same visitor and buyer; otherwise `422 idempotency-key-reused`,
/// which tells nothing of it.
async fn order_opened_before(
    app: &App,
    order: &Order,
    token: HoldToken,
) -> Result<(Order, HoldToken), Error> {
    let stored = app
        .store
        .get_order(&order.order_id)
        .await?
        .ok_or(Error::OrderNotFound)?
        .order;
    if stored.user_id != order.user_id
        || stored.visitor_id != order.visitor_id
        || stored.buyer != order.buyer
    {
        return Err(Error::IdempotencyKeyReused);
    }
    let token = token.with_expiry(stored.expires_at);
    Ok((stored, token))
}

/// The buyer of a new order of `event`: on an event with a buyer limit,
/// the buyer its admission names (`admitted`, a verified queue's) or else
/// its `X-Buyer-Token`'s (`401 buyer-token-required` without either); a
/// token sent beside an admission naming a buyer must name the same one
/// (`401 buyer-token-invalid`). Without a limit, nobody: the header is
/// ignored.
fn order_buyer(
    app: &App,
    req: &Request,
    event: &EventHead,
    admitted: Option<BuyerId>,
    now: crate::domain::Millis,
) -> Result<Option<OrderBuyer>, Error> {
    let Some(limit) = event.buyer_limit else {
        return Ok(None);
    };
    let keys = app.config.buyer_verify_keys()?;
    let buyer_id = match (admitted, keys.buyer_of(req, &event.event_id, now)) {
        (Some(admitted), Err(Error::BuyerTokenRequired)) => admitted,
        (Some(admitted), Ok(named)) if named == admitted => admitted,
        (Some(_), Ok(_)) => return Err(Error::BuyerTokenInvalid(Reason::BuyerNotAdmitted)),
        (_, Err(e)) => return Err(e),
        (None, Ok(named)) => named,
    };
    let buyer_ref = crate::buyer::buyer_ref(app.config.draw_secrets()?, event, &buyer_id)?;
    Ok(Some(OrderBuyer {
        buyer_id,
        limit,
        buyer_ref,
    }))
}

/// The buyer a verified queue admitted as `visitor`, where the event has
/// a buyer limit to count it under: read from the visitor's item (an
/// admission names no buyer, so no token shows who joined). `None`, with
/// no read, on an event without a limit or under an anonymous queue (its
/// visitors have no buyer: a buyer token names one; `buyers` changes only
/// before anyone joined). An admission of a verified queue whose visitor
/// is not stored is `401`: it must not open an order for whichever buyer a
/// token names.
async fn admitted_buyer(
    app: &App,
    event: &EventHead,
    queue: &QueueState,
    visitor: &VisitorId,
) -> Result<Option<BuyerId>, Error> {
    if event.buyer_limit.is_none() || queue.settings.buyers != Buyers::Verified {
        return Ok(None);
    }
    let stored = app.store.read_visitor(&event.event_id, visitor).await?;
    Ok(Some(stored.and_then(|v| v.buyer).ok_or(
        Error::Unauthorized(Reason::AdmissionVisitorUnknown),
    )?))
}

/// What lets a request open an order while its event has a queue.
struct AdmittedOpening {
    claims: crate::admission::AdmissionClaims,
    visitor: VisitorId,
    /// Orders the admission may open.
    allowed: u32,
    idempotency_key: Option<String>,
}

/// The admission a create-order presents under a queue: none is
/// `403 queue-required`; one that is not a live admission to this event,
/// signed by one of our keys, is `401`; a malformed `Idempotency-Key` is
/// `400`.
fn admitted_opening(
    app: &App,
    req: &Request,
    event_id: &EventId,
    queue: &QueueState,
    now: crate::domain::Millis,
) -> Result<AdmittedOpening, Error> {
    let Some(presented) = crate::http::bearer(req) else {
        return Err(Error::QueueRequired {
            queue: format!("/events/{event_id}/queue/visitors"),
        });
    };
    let keys = app
        .config
        .admission_verify
        .as_ref()
        .ok_or_else(|| Error::Corrupt("ADMISSION_VERIFY_KEYS is not configured".into()))?;
    let claims = keys.verify(presented, event_id, now)?;
    let visitor =
        VisitorId::parse(&claims.sub).map_err(|_| Error::Unauthorized(Reason::TokenSubject))?;
    let allowed = claims
        .orders
        .unwrap_or(queue.settings.orders_per_admission)
        .clamp(*ORDERS_PER_ADMISSION.start(), *ORDERS_PER_ADMISSION.end());
    let idempotency_key = crate::http::idempotency_key(req)?.map(|key| key.as_str().to_owned());
    Ok(AdmittedOpening {
        claims,
        visitor,
        allowed,
        idempotency_key,
    })
}

// ----- get-order ------------------------------------------------------------

/// `GET /orders/{orderId}`
pub async fn get_order(app: &App, req: &Request) -> Reply {
    let order_id = path_param(req, "orderId", OrderId::parse)?;
    let (stored, _) = read_own_order(app, req, &order_id).await?;
    super::order_view::order_reply(app, &stored, crate::world::now()).await
}

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
pub async fn extend_order(app: &App, req: &Request) -> Reply {
    let order_id = path_param(req, "orderId", OrderId::parse)?;
    let body: ExtendBody = json_body(req, Some(ExtendBody::default()))?;
    if let Some(seconds) = body.seconds {
        if !HOLD_SECONDS_RANGE.contains(&seconds) {
            return Err(Error::BadRequest(format!(
                "seconds must be {} to {}",
                HOLD_SECONDS_RANGE.start(),
                HOLD_SECONDS_RANGE.end()
            )));
        }
    }
    let mut rounds = Rounds::new("extend-order", ORDER_ROUNDS);
    while rounds.next().await.is_some() {
        let (stored, token) = read_own_order(app, req, &order_id).await?;
        let order = &stored.order;
        let now = crate::world::now();
        if !order.is_holdable(now) {
            return Err(Error::OrderNotHoldable);
        }
        // An offer's lifetime cap is its expiry (API.md, "Offers").
        if order.offer.is_some() {
            return Err(Error::HoldLimit);
        }
        let event = (app.event_head(&order.event_id).await?).ok_or_else(|| no_such_event(order))?;
        let seconds = body.seconds.unwrap_or(event.hold_seconds);
        let expires_at = match extension(order, seconds, app.config.max_order_lifetime_seconds, now)
        {
            Extension::AtCap => return Err(Error::HoldLimit),
            Extension::Unchanged => order.expires_at,
            Extension::To(later) => {
                let deadline =
                    holder_deadline(later, app.config.expiry_guard_ms, event.hold_seconds);
                if !app
                    .store
                    .extend_order(&stored, later, deadline, now)
                    .await?
                {
                    rounds.lost();
                    continue;
                }
                later
            }
        };
        let token = issued(app, &order_id, &token.with_expiry(expires_at))?;
        return Ok(json(
            StatusCode::OK,
            &ExtendReply {
                order_id: &order_id,
                expires_at: expires_at.to_rfc3339(),
                hold_token: &token,
            },
        ));
    }
    Err(rounds.spent())
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
pub async fn cancel_order(app: &App, req: &Request) -> Reply {
    let order_id = path_param(req, "orderId", OrderId::parse)?;
    let cancelled = || {
        json(
            StatusCode::OK,
            &CancelReply {
                order_id: &order_id,
                status: OrderStatus::Cancelled,
            },
        )
    };
    let mut rounds = Rounds::new("cancel-order", ORDER_ROUNDS);
    while rounds.next().await.is_some() {
        let (stored, _) = read_own_order(app, req, &order_id).await?;
        match cancel_as_read(app, &stored, false).await? {
            Some(OrderStatus::Cancelled) => return Ok(cancelled()),
            Some(_) => return Err(Error::OrderNotCancellable),
            None => rounds.lost(),
        }
    }
    Err(rounds.spent())
}
