//! `POST /orders/{orderId}/confirm`: the payment backend's signed webhook.
//!
//! The Standard Webhooks signature is checked before anything else. The
//! body names the order and exactly what was paid for, so a captured
//! request cannot complete another order, nor sell seats added after the
//! payment. The common case (a live order holding exactly what was paid) is
//! one transaction with no read; everything else reads the order and
//! follows [`decide_confirm`].

use std::collections::HashSet;

use lambda_http::http::StatusCode;
use lambda_http::{Body, Request, Response};
use serde::{Deserialize, Serialize};

use super::reads::{in_plan_order, order_event, places_by_section, plan_from_buckets};
use super::{GaEntry, Reply};
use crate::domain::buyer_limit::{confirm_within, BuyerCount};
use crate::domain::ga::{plan_held_sales, plan_late_sale, Bucket, HeldPlaces, PlaceSale};
use crate::domain::{
    decide_confirm, ConfirmDecision, ConfirmRefusal, ConfirmRound, Millis, Order, OrderId,
    OrderStatus, PaymentId, RefundReason, SeatId, SectionId,
};
use crate::error::Error;
use crate::http::{json, json_body, path_param, raw_body};
use crate::reason::Reason;
use crate::retry::{Rounds, CONFIRM_ROUNDS, PLACE_REPLANS};
use crate::store::{ConfirmOutcome, Leftovers, StoredOrder};
use crate::App;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ConfirmBody {
    order_id: OrderId,
    payment_id: PaymentId,
    #[serde(default)]
    seats: Vec<SeatId>,
    #[serde(default)]
    ga: Vec<GaEntry>,
}

/// What a confirm says was paid for, checked.
struct Paid {
    payment: PaymentId,
    /// Sorted as strings, as replies list seats.
    seats: Vec<SeatId>,
    /// Places paid for (quantity ≥ 1 each).
    ga: Vec<GaEntry>,
}

impl Paid {
    fn from_body(body: ConfirmBody, path_order: &OrderId, max: u32) -> Result<Self, Error> {
        if &body.order_id != path_order {
            return Err(Error::BadRequest(
                "orderId in the body must equal the order in the path".into(),
            ));
        }
        let mut seen = HashSet::new();
        if let Some(seat) = body.seats.iter().find(|seat| !seen.insert(seat.as_str())) {
            return Err(Error::BadRequest(format!("seat {seat} is named twice")));
        }
        let mut sections = HashSet::new();
        if let Some(entry) = body
            .ga
            .iter()
            .find(|entry| !sections.insert(entry.section_id.as_str()))
        {
            return Err(Error::BadRequest(format!(
                "section {} is named twice in ga",
                entry.section_id
            )));
        }
        let places: u64 = body.ga.iter().map(|entry| u64::from(entry.quantity)).sum();
        let total = body.seats.len() as u64 + places;
        if total == 0 {
            return Err(Error::BadRequest(
                "a confirm pays for at least one seat or place".into(),
            ));
        }
        if total > u64::from(max) {
            return Err(Error::BadRequest(format!(
                "a confirm pays for at most {max} seats and places; this one names {total}"
            )));
        }
        let mut seats = body.seats;
        seats.sort();
        Ok(Self {
            payment: body.payment_id,
            seats,
            ga: body
                .ga
                .into_iter()
                .filter(|entry| entry.quantity > 0)
                .collect(),
        })
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ConfirmReply<'a> {
    order_id: &'a OrderId,
    status: OrderStatus,
    seats: &'a [SeatId],
    ga: &'a [GaEntry],
    payment_id: &'a PaymentId,
}

fn completed(
    order: &OrderId,
    seats: &[SeatId],
    ga: &[GaEntry],
    payment: &PaymentId,
) -> Response<Body> {
    json(
        StatusCode::OK,
        &ConfirmReply {
            order_id: order,
            status: OrderStatus::Completed,
            seats,
            ga,
            payment_id: payment,
        },
    )
}

fn refusal(refused: ConfirmRefusal) -> Error {
    match refused {
        ConfirmRefusal::AlreadyCompleted => Error::AlreadyCompleted,
        ConfirmRefusal::Refund(RefundReason::OrderExpired) => Error::OrderExpired,
        ConfirmRefusal::Refund(RefundReason::SeatsUnavailable) => Error::SeatsUnavailable,
        ConfirmRefusal::Refund(RefundReason::OrderExpiredOverLimit) => Error::OrderExpiredOverLimit,
        ConfirmRefusal::Refund(RefundReason::SeatsUnavailableOverLimit) => {
            Error::SeatsUnavailableOverLimit
        }
    }
}

/// `POST /orders/{orderId}/confirm` — called by the payment backend.
pub async fn confirm(app: &App, req: &Request) -> Reply {
    let answer = confirm_payment(app, req).await;
    match &answer {
        // Counted where decided: `refund-due` when the refund was
        // recorded, `duplicate` when it was recorded before.
        Err(
            Error::OrderExpired
            | Error::SeatsUnavailable
            | Error::AlreadyCompleted
            | Error::OrderExpiredOverLimit
            | Error::SeatsUnavailableOverLimit,
        ) => {}
        Err(other) => crate::metrics::confirm(other.code()),
        Ok(_) => {}
    }
    answer
}

/// A completed sale's reply, counted.
fn sold(order: &OrderId, seats: &[SeatId], ga: &[GaEntry], payment: &PaymentId) -> Response<Body> {
    crate::metrics::confirm("completed");
    completed(order, seats, ga, payment)
}

/// confirm's work: the signature, the body, then the common case in one
/// transaction, else a read of the order and [`decide_confirm`].
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
    if paid.ga.is_empty()
        && app
            .store
            .confirm_exact(&order_id, &paid.payment, &paid.seats, crate::world::now())
            .await?
    {
        return Ok(sold(&order_id, &paid.seats, &[], &paid.payment));
    }
    // The order changing spends a round; rivals taking the places it
    // planned on spend a re-plan, each after a jittered pause.
    let mut changes = Rounds::new("confirm", CONFIRM_ROUNDS);
    let mut replans = Rounds::new("confirm's places", PLACE_REPLANS);
    changes.next().await;
    loop {
        let round = if changes.is_last() {
            ConfirmRound::Last
        } else {
            ConfirmRound::Ordinary
        };
        let stored = app
            .store
            .get_order(&order_id)
            .await?
            .ok_or(Error::OrderNotFound)?;
        match confirm_round(app, &stored, &paid, round).await? {
            Next::Done(done) => return done,
            Next::ReadAgain => {
                if changes.next().await.is_none() {
                    return Err(changes.spent());
                }
            }
            Next::PlacesMoved => {
                replans.lost();
                if replans.next().await.is_none() {
                    return Err(replans.spent());
                }
            }
        }
    }
}

/// What one round of confirm ended in.
enum Next {
    /// The answer.
    Done(Result<Response<Body>, Error>),
    /// The order changed since it was read: read it again, decide anew.
    ReadAgain,
    /// A bucket planned on moved: read again and plan anew.
    PlacesMoved,
}

type Step = Result<Next, Error>;

/// What comes after a confirm transaction that did not commit (`None`: it
/// did), the same for every write confirm makes (a taken seat means the
/// order changed, except to [`take_free`], which refunds).
fn not_committed(outcome: ConfirmOutcome) -> Option<Next> {
    match outcome {
        ConfirmOutcome::Committed => None,
        ConfirmOutcome::PaymentReused => Some(Next::Done(Err(Error::PaymentReused))),
        ConfirmOutcome::SeatsTaken | ConfirmOutcome::OrderChanged => Some(Next::ReadAgain),
        ConfirmOutcome::PlacesMoved => Some(Next::PlacesMoved),
    }
}

/// One decision on a freshly read order ([`decide_confirm`]), carried out.
async fn confirm_round(app: &App, stored: &StoredOrder, paid: &Paid, round: ConfirmRound) -> Step {
    let order = &stored.order;
    let now = crate::world::now();
    let payment = &paid.payment;
    let paid_places: Vec<(SectionId, u32)> = paid
        .ga
        .iter()
        .map(|entry| (entry.section_id.clone(), entry.quantity))
        .collect();
    // Every paid section's places out of what the order holds (the rest of
    // its places given back); `None` if it holds fewer than paid for.
    let held_sales = plan_held_sales(&order.places, &paid_places);
    let places_held = held_sales.is_some();
    match decide_confirm(order, payment, &paid.seats, places_held, now, round) {
        ConfirmDecision::AlreadyCompleted => {
            crate::metrics::confirm("duplicate");
            let ga = places_by_section(app, order).await?;
            let reply = completed(&order.order_id, &order.seats, &ga, payment);
            Ok(Next::Done(Ok(reply)))
        }
        ConfirmDecision::Refused(refused) => {
            crate::metrics::confirm("duplicate");
            Ok(Next::Done(Err(refusal(refused))))
        }
        ConfirmDecision::RecordForRefund { refused } => {
            record_refund(app, stored, payment, refused).await
        }
        ConfirmDecision::SellHeld { release } => {
            let sales = held_sales.unwrap_or_default();
            let outcome = app
                .store
                .sell_held(stored, payment, &paid.seats, &release, &sales, now)
                .await?;
            if let Some(next) = not_committed(outcome) {
                return Ok(next);
            }
            sold_in_plan_order(app, order, paid).await
        }
        ConfirmDecision::TakeFree {
            release,
            holds_are_live,
            on_failure,
        } => {
            let leftovers = (release.as_slice(), holds_are_live);
            take_free(app, stored, paid, held_sales, leftovers, on_failure, now).await
        }
    }
}

/// A payment its holds do not cover (late, or for seats or places it does
/// not hold): every paid seat and place that can still be had is taken
/// and sold, else the order is refunded. The order's other holds go back:
/// `leftovers` (its other seats, and whether its holds still count).
async fn take_free(
    app: &App,
    stored: &StoredOrder,
    paid: &Paid,
    held_sales: Option<Vec<PlaceSale>>,
    (release, holds_are_live): (&[SeatId], bool),
    on_failure: RefundReason,
    now: Millis,
) -> Step {
    let order = &stored.order;
    let payment = &paid.payment;
    let Some(sales) = paid_place_sales(app, order, paid, held_sales, now).await? else {
        return refund(app, stored, payment, on_failure, holds_are_live).await;
    };
    let unsold = unsold_places(order, &sales);
    // Holds let go of only after the transaction count until then.
    let kept = match holds_are_live || order.expires_at <= now {
        true => 0,
        false => release.len() + unsold.iter().map(|p| p.quantity as usize).sum::<usize>(),
    };
    let sold = paid.seats.len() + sales.iter().map(|s| s.sold() as usize).sum::<usize>();
    let buyer = match buyer_limit_check(app, order, sold + kept, now).await? {
        LimitCheck::NoBuyer => None,
        LimitCheck::Within(count) => Some(count),
        LimitCheck::Over => {
            let reason = on_failure.over_limit();
            return refund(app, stored, payment, reason, holds_are_live).await;
        }
    };
    let leftovers = Leftovers {
        seats: release,
        places: &unsold,
        live: holds_are_live,
    };
    let outcome = app
        .store
        .take_free(
            stored,
            payment,
            &paid.seats,
            &sales,
            leftovers,
            buyer.as_ref(),
            now,
        )
        .await?;
    if outcome == ConfirmOutcome::SeatsTaken {
        return refund(app, stored, payment, on_failure, holds_are_live).await;
    }
    if let Some(next) = not_committed(outcome) {
        return Ok(next);
    }
    tracing::info!(order_id = %order.order_id, "payment outside a live hold: seats and places taken and sold");
    sold_in_plan_order(app, order, paid).await
}

/// The paid places' sales: when the payment pays for no places, the
/// order's places all given back (`held_sales`, none sold); else from the
/// buckets as they are now, the order's own entries nobody took over,
/// then places anyone may take. `None`: they cannot all be had.
async fn paid_place_sales(
    app: &App,
    order: &Order,
    paid: &Paid,
    held_sales: Option<Vec<PlaceSale>>,
    now: Millis,
) -> Result<Option<Vec<PlaceSale>>, Error> {
    if paid.ga.is_empty() {
        return Ok(Some(held_sales.unwrap_or_default()));
    }
    late_place_sales(app, order, &paid.ga, now).await
}

/// Whether a confirm of `order` may take `units` it may not hold.
enum LimitCheck {
    NoBuyer,
    /// Within the limit, on the buyer's record as read.
    Within(BuyerCount),
    Over,
}

/// One read of the order's buyer's record, and the limit's rule for a
/// confirm ([`confirm_within`]).
async fn buyer_limit_check(
    app: &App,
    order: &Order,
    units: usize,
    now: Millis,
) -> Result<LimitCheck, Error> {
    let Some(limited) = order.limited_buyer() else {
        return Ok(LimitCheck::NoBuyer);
    };
    let event = crate::domain::EventRef::of(&order.event_id);
    let count = app.store.buyer_count(&event, &limited).await?;
    let units = u32::try_from(units).unwrap_or(u32::MAX);
    Ok(
        match confirm_within(&count, &order.order_id, units, limited.limit, now) {
            true => LimitCheck::Within(count),
            false => LimitCheck::Over,
        },
    )
}

/// The answer to a sale: what was paid, places in the plan's order.
async fn sold_in_plan_order(app: &App, order: &Order, paid: &Paid) -> Step {
    let ga = in_plan_order(app, order, &paid.ga).await?;
    Ok(Next::Done(Ok(sold(
        &order.order_id,
        &paid.seats,
        &ga,
        &paid.payment,
    ))))
}

/// A further payment for a finished order, recorded for refund.
async fn record_refund(
    app: &App,
    stored: &StoredOrder,
    payment: &PaymentId,
    refused: ConfirmRefusal,
) -> Step {
    let outcome = app
        .store
        .record_refund_payment(stored, payment, crate::world::now())
        .await?;
    if let Some(next) = not_committed(outcome) {
        return Ok(next);
    }
    tracing::warn!(order_id = %stored.order.order_id, payment_id = %payment, "another payment for a finished order: recorded for refund");
    crate::metrics::confirm("refund-due");
    Ok(Next::Done(Err(refusal(refused))))
}

/// The order becomes REFUND_DUE with this payment, and lets go of what it
/// still holds (only a PENDING order holds anything).
async fn refund(
    app: &App,
    stored: &StoredOrder,
    payment: &PaymentId,
    reason: RefundReason,
    holds_are_live: bool,
) -> Step {
    let order = &stored.order;
    let pending = order.status == OrderStatus::Pending;
    let leftovers = Leftovers {
        seats: if pending { order.seats.as_slice() } else { &[] },
        places: if pending {
            order.places.as_slice()
        } else {
            &[]
        },
        live: holds_are_live,
    };
    let outcome = app
        .store
        .mark_refund_due(stored, payment, reason, leftovers, crate::world::now())
        .await?;
    if let Some(next) = not_committed(outcome) {
        return Ok(next);
    }
    crate::metrics::confirm("refund-due");
    tracing::warn!(order_id = %order.order_id, payment_id = %payment, reason = reason.as_str(), "payment cannot complete its order: refund due");
    Ok(Next::Done(Err(refusal(ConfirmRefusal::Refund(reason)))))
}

/// Every paid section's places for a payment the order's holds do not
/// cover (late, or more than it holds), planned from its buckets read
/// consistently: the buckets the order records places in, and others (see
/// `plan_from_buckets`). `None` if a paid section cannot give them, or is
/// no general-admission section of the event (money arrived: refunded).
async fn late_place_sales(
    app: &App,
    order: &Order,
    paid: &[GaEntry],
    now: Millis,
) -> Result<Option<Vec<PlaceSale>>, Error> {
    let event = order_event(app, order).await?;
    let mut sales = Vec::new();
    for entry in paid {
        let section = &entry.section_id;
        let Some(capacity) = event.section(section).and_then(|s| s.capacity) else {
            return Ok(None);
        };
        let own: Vec<u32> = order
            .places
            .iter()
            .filter(|p| &p.section == section)
            .map(|p| p.bucket)
            .collect();
        let plan = |buckets: &[Bucket]| {
            plan_late_sale(buckets, section, &order.order_id, entry.quantity, now)
        };
        match plan_from_buckets(app, &order.event_id, section, capacity, &own, true, plan).await? {
            Ok(planned) => sales.extend(planned),
            Err(_) => return Ok(None),
        }
    }
    Ok(Some(sales))
}

/// The order's places no sale in `sales` took (whole buckets it did not
/// sell from), to give back after a late sale.
fn unsold_places(order: &Order, sales: &[PlaceSale]) -> Vec<HeldPlaces> {
    order
        .places
        .iter()
        .filter(|held| {
            !sales.iter().any(|sale| {
                sale.sold() > 0 && sale.section == held.section && sale.bucket == held.bucket
            })
        })
        .cloned()
        .collect()
}
