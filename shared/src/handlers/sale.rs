//! What a payment sells: the one path from "this order was paid for
//! exactly this" to a sale or a refund due, shared by confirm (the payment
//! backend's signed webhook) and the Stripe route.
//!
//! What was paid for is checked first ([`Paid::from_body`]), so a captured
//! payment cannot complete another order, nor sell seats added after it.
//! The common case (a live order holding exactly what was paid) is one
//! transaction with no read; everything else reads the order and follows
//! [`decide_confirm`].

use std::collections::HashSet;

use serde::Deserialize;

use super::reads::{in_plan_order, order_event, places_by_section, plan_from_buckets};
use super::GaEntry;
use crate::domain::buyer_limit::{confirm_within, BuyerCount};
use crate::domain::ga::{plan_held_sales, plan_late_sale, Bucket, HeldPlaces, PlaceSale};
use crate::domain::{
    decide_confirm, ConfirmContext, ConfirmDecision, ConfirmRefusal, ConfirmRound, Millis, Order,
    OrderId, OrderStatus, PaymentId, RefundCause, RefundReason, SeatId, SectionId,
};
use crate::error::Error;
use crate::retry::{Rounds, CONFIRM_ROUNDS, PLACE_REPLANS};
use crate::store::{ConfirmOutcome, Leftovers, StoredOrder};
use crate::App;

/// What a payment's body names (confirm's JSON body; the Stripe route
/// reads the same fields from the session's metadata).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct PaidBody {
    pub order_id: OrderId,
    pub payment_id: PaymentId,
    #[serde(default)]
    pub seats: Vec<SeatId>,
    #[serde(default)]
    pub ga: Vec<GaEntry>,
}

/// What a payment says was paid for, checked.
pub(super) struct Paid {
    pub payment: PaymentId,
    /// Sorted as strings, as replies list seats.
    seats: Vec<SeatId>,
    /// Places paid for (quantity ≥ 1 each).
    ga: Vec<GaEntry>,
}

impl Paid {
    /// `body` checked as confirm checks its body: naming `path_order`,
    /// no seat or section twice, at least one and at most `max` seats and
    /// places in all.
    pub(super) fn from_body(body: PaidBody, path_order: &OrderId, max: u32) -> Result<Self, Error> {
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

/// A completed sale: the order, and what the payment bought (places in the
/// plan's order), as confirm's reply lists them.
pub(super) struct Sale {
    pub order_id: OrderId,
    pub seats: Vec<SeatId>,
    pub ga: Vec<GaEntry>,
    pub payment: PaymentId,
}

impl Sale {
    fn of(order: &OrderId, seats: &[SeatId], ga: &[GaEntry], payment: &PaymentId) -> Self {
        Self {
            order_id: order.clone(),
            seats: seats.to_vec(),
            ga: ga.to_vec(),
            payment: payment.clone(),
        }
    }
}

/// A completed sale, counted.
fn sold(order: &OrderId, seats: &[SeatId], ga: &[GaEntry], payment: &PaymentId) -> Sale {
    crate::metrics::confirm("completed");
    Sale::of(order, seats, ga, payment)
}

/// A payment's answer, counted as confirm counts it: a refund where it
/// was decided (`refund-due` when recorded, `duplicate` when recorded
/// before), any other error by its code.
pub(super) fn counted<T>(answer: Result<T, Error>) -> Result<T, Error> {
    if let Err(error) = &answer {
        if !error.is_refund() {
            crate::metrics::confirm(error.code());
        }
    }
    answer
}

/// Sells what `paid` says was paid for `order_id`: the common case in one
/// transaction, else a read of the order and [`decide_confirm`], round
/// after round while the order changes under it.
pub(super) async fn settle(app: &App, order_id: &OrderId, paid: &Paid) -> Result<Sale, Error> {
    if paid.ga.is_empty()
        && app
            .store
            .confirm_exact(order_id, &paid.payment, &paid.seats, crate::world::now())
            .await?
    {
        return Ok(sold(order_id, &paid.seats, &[], &paid.payment));
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
            .get_order(order_id)
            .await?
            .ok_or(Error::OrderNotFound)?;
        match confirm_round(app, &stored, paid, round).await? {
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

fn refusal(refused: ConfirmRefusal) -> Error {
    match refused {
        ConfirmRefusal::AlreadyCompleted => Error::AlreadyCompleted,
        ConfirmRefusal::Refund(reason) => Error::Refund(reason),
    }
}

/// What one round of confirm ended in.
enum Next {
    /// The answer.
    Done(Result<Sale, Error>),
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
    let mut context = ConfirmContext {
        now,
        round,
        waitlist_only: false,
    };
    let mut decision = decide_confirm(order, payment, &paid.seats, places_held, context);
    // The waitlist changes only a decision to take free seats: read only then.
    if matches!(decision, ConfirmDecision::TakeFree { .. }) {
        context.waitlist_only = app.is_waitlist_only(&order.event_id, now).await?;
        decision = decide_confirm(order, payment, &paid.seats, places_held, context);
    }
    if matches!(decision, ConfirmDecision::SellHeld { .. })
        && !resales_stand(app, order, &paid.seats, now).await?
    {
        // A listing it holds has reverted to its seller: nothing to sell.
        decision = ConfirmDecision::Refund {
            reason: RefundReason::SeatsUnavailableWaitlist,
            holds_are_live: true,
        };
    }
    match decision {
        ConfirmDecision::AlreadyCompleted => {
            crate::metrics::confirm("duplicate");
            let ga = places_by_section(app, order).await?;
            let sale = Sale::of(&order.order_id, &order.seats, &ga, payment);
            Ok(Next::Done(Ok(sale)))
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
        ConfirmDecision::Refund {
            reason,
            holds_are_live,
        } => refund(app, stored, payment, reason, holds_are_live).await,
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

/// Whether every listed seat among `paid` and every listing of places
/// that `order` (an offer) holds still reads listed at `now`, the waitlist read strongly (a put that
/// closed returns, a delete or the cutoff reverts them; the sale's own
/// transaction checks the same). True, with no read, for an order holding
/// none.
async fn resales_stand(
    app: &App,
    order: &Order,
    paid: &[SeatId],
    now: Millis,
) -> Result<bool, Error> {
    let resales: Vec<_> = paid
        .iter()
        .filter_map(|seat| order.resale_of(seat))
        .collect();
    // The listings of places it still holds some of (a lowered hold-ga
    // gave the others back).
    let place_resales: Vec<_> = order
        .places
        .iter()
        .filter_map(|held| order.place_resale_of(&held.section, held.bucket))
        .collect();
    if resales.is_empty() && place_resales.is_empty() {
        return Ok(true);
    }
    let waitlist = app.store.read_waitlist(&order.event_id).await?;
    let waitlist = waitlist.map(|stored| stored.waitlist);
    let seats = resales
        .iter()
        .all(|r| r.still_listed(waitlist.as_ref(), now));
    let places = place_resales
        .iter()
        .all(|r| r.still_listed(waitlist.as_ref(), now));
    Ok(seats && places)
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
            let reason = on_failure.because_of(RefundCause::BuyerLimit);
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
