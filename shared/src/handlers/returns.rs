//! Returns to the waitlist (API.md, "Returns"): a buyer lists seats and
//! places its completed order bought, to be sold to the waitlist, and
//! withdraws a listing. One function serves the three routes
//! (order-returns); each answers with the order as get-order shows it.

use lambda_http::Request;
use serde::Deserialize;

use super::access::read_own_order;
use super::order_view::{reply_with, waitlist_now, Listings};
use super::reads::order_event;
use super::{GaEntry, Reply};
use crate::domain::returns::{
    places_resale, plan_listings, plan_withdrawal, ListRefusal, Listing, ListingWrite,
    PlacesItemRead, ReturnRequest, ReturnStatus, ReturnUnit, Withdrawal,
};
use crate::domain::waitlist::Waitlist;
use crate::domain::{Event, OrderId, SeatId, SectionId};
use crate::error::Error;
use crate::http::{json_body, path_param};
use crate::reason::Reason;
use crate::retry::{Rounds, CONTESTED_ROUNDS};
use crate::store::StoredOrder;
use crate::App;

/// The most seats and places one listing names: its transaction writes
/// two items a unit (the listing and its resale item) beside the order and
/// the waitlist's check, within DynamoDB's 100.
const MOST_UNITS_PER_LISTING: u32 = (crate::store::MAX_TRANSACTION_ITEMS as u32 - 2) / 2;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ReturnsBody {
    #[serde(default)]
    seats: Vec<SeatId>,
    #[serde(default)]
    ga: Vec<GaEntry>,
}

/// `body` as a request: something named, each seat and section once,
/// each section's quantity at least 1, no more units than an order holds.
fn return_request(body: ReturnsBody, max: u32) -> Result<ReturnRequest, Error> {
    if body.seats.is_empty() && body.ga.is_empty() {
        return Err(Error::BadRequest(
            "name the seats or ga places to return".into(),
        ));
    }
    let mut seats = body.seats.clone();
    seats.sort();
    seats.dedup();
    let mut sections: Vec<&SectionId> = body.ga.iter().map(|g| &g.section_id).collect();
    sections.sort();
    sections.dedup();
    if seats.len() != body.seats.len() || sections.len() != body.ga.len() {
        return Err(Error::BadRequest(
            "each seat and section at most once".into(),
        ));
    }
    let units: u64 =
        body.ga.iter().map(|g| u64::from(g.quantity)).sum::<u64>() + body.seats.len() as u64;
    if body.ga.iter().any(|g| g.quantity == 0) || units > u64::from(max) {
        return Err(Error::BadRequest(format!(
            "each ga quantity at least 1, and {max} seats and places at most"
        )));
    }
    Ok(ReturnRequest {
        seats: body.seats,
        places: body
            .ga
            .into_iter()
            .map(|g| (g.section_id, g.quantity))
            .collect(),
    })
}

/// Every unit of `request` is in `event`'s plan: `404 seat-not-found`, or
/// `404 section-not-found` for a section that is not general admission.
fn in_plan(event: &Event, request: &ReturnRequest) -> Result<(), Error> {
    if !request.seats.iter().all(|seat| event.has_seat(seat)) {
        return Err(Error::SeatNotFound);
    }
    match request
        .places
        .iter()
        .all(|(section, _)| is_ga(event, section))
    {
        true => Ok(()),
        false => Err(Error::SectionNotFound),
    }
}

/// Whether `section` is one of `event`'s general-admission sections.
fn is_ga(event: &Event, section: &SectionId) -> bool {
    event.section(section).is_some_and(|s| s.capacity.is_some())
}

/// The seller's order for a returns route: its hold token (`401`, `404`),
/// and, when the order has a buyer, an `X-Buyer-Token` naming that buyer.
async fn seller_order(app: &App, req: &Request, id: &OrderId) -> Result<StoredOrder, Error> {
    let (stored, _) = read_own_order(app, req, id).await?;
    let order = &stored.order;
    let buyer = order
        .buyer
        .as_ref()
        .map(|b| &b.buyer_id)
        .or(order.offer.as_ref().map(|o| &o.buyer_id));
    if let Some(buyer) = buyer {
        let keys = app.config.buyer_verify_keys()?;
        if &keys.buyer_of(req, &order.event_id, crate::world::now())? != buyer {
            return Err(Error::BuyerTokenInvalid(Reason::BuyerNotOrders));
        }
    }
    Ok(stored)
}

/// `POST /orders/{orderId}/returns`: lists seats and places the completed
/// order bought and has not listed or resold, while the event's waitlist
/// is open and takes returns; in one transaction with the order and a
/// check of the waitlist.
pub async fn list_returns(app: &App, req: &Request) -> Reply {
    let order_id = path_param(req, "orderId", OrderId::parse)?;
    let body: ReturnsBody = json_body(req, None)?;
    let most = app.config.max_seats_per_order.min(MOST_UNITS_PER_LISTING);
    let request = return_request(body, most)?;
    let mut rounds = Rounds::new("list-returns", CONTESTED_ROUNDS);
    while rounds.next().await.is_some() {
        let mut stored = seller_order(app, req, &order_id).await?;
        let order = &stored.order;
        in_plan(&*order_event(app, order).await?, &request)?;
        let waitlist = waitlist_now(app, &order.event_id).await?;
        let listings = app.store.read_listings(&order_id).await?;
        let now = crate::world::now();
        let (generation, mut writes) =
            plan_listings(order, &listings, &request, waitlist.as_ref(), now).map_err(
                |refusal| match refusal {
                    ListRefusal::Closed => Error::ReturnsClosed,
                    ListRefusal::NotOwned => Error::ReturnNotOwned,
                },
            )?;
        for write in &mut writes {
            plan_places_item(app, order, &listings, write, waitlist.as_ref(), now).await?;
        }
        let closes_at = waitlist
            .as_ref()
            .and_then(|w| w.settings.returns_close_at)
            .ok_or(Error::ReturnsClosed)?;
        let store = &app.store;
        if store
            .list_returns(order, &writes, generation, closes_at, now)
            .await?
        {
            stored.has_returns = true;
            let listings = store.read_listings(&order_id).await?;
            return reply_with(app, &stored, &Listings { listings, waitlist }, now).await;
        }
        // A seat listed again while an offer made before its revert still
        // holds it: refused until that offer ends.
        if any_offered(app, order, &request.seats, now).await? {
            return Err(Error::ReturnOffered);
        }
        rounds.lost();
    }
    Err(rounds.spent())
}

/// How `write`, if it lists places, writes their resale item, from the
/// item as read: `409 return-offered` while a live offer still holds
/// places of an earlier listing of them.
async fn plan_places_item(
    app: &App,
    order: &crate::domain::Order,
    listings: &[Listing],
    write: &mut ListingWrite,
    waitlist: Option<&Waitlist>,
    now: crate::domain::Millis,
) -> Result<(), Error> {
    let ReturnUnit::Places(section) = &write.unit else {
        return Ok(());
    };
    let item = app
        .store
        .listed_places(&order.event_id, &order.order_id, section)
        .await?;
    let listing = listing_of(listings, &write.unit);
    let resale = places_resale(write, listing, item.as_ref(), waitlist, now);
    write.places = Some(resale.ok_or(Error::ReturnOffered)?);
    Ok(())
}

/// Whether a live offer holds any of `seats` of `order`'s event at `now`,
/// as their resale items read.
async fn any_offered(
    app: &App,
    order: &crate::domain::Order,
    seats: &[SeatId],
    now: crate::domain::Millis,
) -> Result<bool, Error> {
    for seat in seats {
        let listed = app.store.listed_seat(&order.event_id, seat).await?;
        if listed.is_some_and(|l| l.held_at(now).is_some()) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// `DELETE /orders/{orderId}/returns/{seatId}`: withdraws a seat's listing.
pub async fn withdraw_seat(app: &App, req: &Request) -> Reply {
    let seat = path_param(req, "seatId", SeatId::parse)?;
    withdraw(app, req, ReturnUnit::Seat(seat)).await
}

/// `DELETE /orders/{orderId}/returns/ga/{sectionId}`: withdraws a
/// section's listed places.
pub async fn withdraw_places(app: &App, req: &Request) -> Reply {
    let section = path_param(req, "sectionId", SectionId::parse)?;
    withdraw(app, req, ReturnUnit::Places(section)).await
}

/// Withdraws `unit`'s listing if it reads `LISTED` (`WITHDRAWN`, owned as
/// before); a listing resold is `409 return-not-owned`; anything else
/// answers the order as it stands (again the same).
async fn withdraw(app: &App, req: &Request, unit: ReturnUnit) -> Reply {
    let order_id = path_param(req, "orderId", OrderId::parse)?;
    let mut rounds = Rounds::new("withdraw-return", CONTESTED_ROUNDS);
    while rounds.next().await.is_some() {
        let stored = seller_order(app, req, &order_id).await?;
        let event = order_event(app, &stored.order).await?;
        let known = match &unit {
            ReturnUnit::Seat(seat) => event.has_seat(seat),
            ReturnUnit::Places(section) => is_ga(&event, section),
        };
        if !known {
            return Err(match unit {
                ReturnUnit::Seat(_) => Error::SeatNotFound,
                ReturnUnit::Places(_) => Error::SectionNotFound,
            });
        }
        let waitlist = waitlist_now(app, &stored.order.event_id).await?;
        let listings = app.store.read_listings(&order_id).await?;
        let now = crate::world::now();
        let listing = listing_of(&listings, &unit);
        let (offered, places_item) = offered_now(app, &stored.order, &unit, now).await?;
        match plan_withdrawal(listing, offered, waitlist.as_ref(), now) {
            Withdrawal::Withdraw { version } => {
                if !app
                    .store
                    .withdraw_listing(&stored.order, &unit, version, places_item, now)
                    .await?
                {
                    rounds.lost();
                    continue;
                }
                let listings = app.store.read_listings(&order_id).await?;
                return reply_with(app, &stored, &Listings { listings, waitlist }, now).await;
            }
            Withdrawal::Unchanged => {
                return reply_with(app, &stored, &Listings { listings, waitlist }, now).await
            }
            Withdrawal::Resold => return Err(Error::ReturnNotOwned),
            Withdrawal::Offered => return Err(Error::ReturnOffered),
        }
    }
    Err(rounds.spent())
}

/// Whether a live offer holds `order`'s listing of `unit` (or some of
/// its places) at `now`, as its resale item reads; and for places, the
/// item as read, which the withdrawal is conditioned on.
async fn offered_now(
    app: &App,
    order: &crate::domain::Order,
    unit: &ReturnUnit,
    now: crate::domain::Millis,
) -> Result<(bool, PlacesItemRead), Error> {
    let (event, id) = (&order.event_id, &order.order_id);
    match unit {
        ReturnUnit::Seat(seat) => {
            let listed = app.store.listed_seat(event, seat).await?;
            let held = listed.is_some_and(|l| &l.seller.order_id == id && l.held_at(now).is_some());
            Ok((held, PlacesItemRead::Absent))
        }
        ReturnUnit::Places(section) => {
            let item = app.store.listed_places(event, id, section).await?;
            let held = item.as_ref().is_some_and(|i| i.held_until(now).is_some());
            let read = item.map_or(PlacesItemRead::Absent, |i| i.as_read());
            Ok((held, read))
        }
    }
}

/// `unit`'s listing among `listings` (a section's own, not its resales).
fn listing_of<'a>(listings: &'a [Listing], unit: &ReturnUnit) -> Option<&'a Listing> {
    let own = |l: &&Listing| {
        &l.unit == unit && (matches!(unit, ReturnUnit::Seat(_)) || l.status != ReturnStatus::Resold)
    };
    listings.iter().find(own)
}
