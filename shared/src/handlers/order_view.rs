//! An order as get-order answers it, and the routes that answer with it
//! (the returns' routes): its holds or purchase, its buyer and offer, and
//! a seller's listings with their status at read time.

use lambda_http::http::StatusCode;
use serde::Serialize;

use super::reads::places_by_section;
use super::{GaEntry, Reply};
use crate::domain::returns::{Listing, ReturnUnit};
use crate::domain::waitlist::Waitlist;
use crate::domain::{
    EntryId, EventId, Millis, OrderId, OrderStatus, PaymentId, SeatId, SectionId, VisitorId,
};
use crate::error::Error;
use crate::http::json;
use crate::store::StoredOrder;
use crate::App;

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
    /// The queue visitor whose admission opened it.
    #[serde(skip_serializing_if = "Option::is_none")]
    visitor_id: Option<&'a VisitorId>,
    /// Its buyer: on an event with a buyer limit, and on a waitlist's offer.
    #[serde(skip_serializing_if = "Option::is_none")]
    buyer_id: Option<&'a str>,
    /// The waitlist entry it was offered to, if it is an offer.
    #[serde(skip_serializing_if = "Option::is_none")]
    waitlist_entry_id: Option<&'a EntryId>,
    /// A seller's listings, once it has any.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    returns: &'a [ReturnReply<'a>],
}

/// One listing as get-order shows it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ReturnReply<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    seat_id: Option<&'a SeatId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    section_id: Option<&'a SectionId>,
    #[serde(skip_serializing_if = "Option::is_none")]
    quantity: Option<u32>,
    status: &'static str,
    /// Its resale, once resold: the seller's record of the sale.
    #[serde(skip_serializing_if = "Option::is_none")]
    resale: Option<ResaleReply<'a>>,
}

/// A resale as a seller's get-order shows it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ResaleReply<'a> {
    order_id: &'a OrderId,
    payment_id: &'a PaymentId,
    at: String,
}

impl<'a> ReturnReply<'a> {
    fn of(listing: &'a Listing, waitlist: Option<&Waitlist>, now: Millis) -> Self {
        let (seat_id, section_id, quantity) = match &listing.unit {
            ReturnUnit::Seat(seat) => (Some(seat), None, None),
            ReturnUnit::Places(section) => (None, Some(section), Some(listing.quantity)),
        };
        ReturnReply {
            seat_id,
            section_id,
            quantity,
            status: listing.status_at(waitlist, now).as_str(),
            resale: listing.resale.as_ref().map(|r| ResaleReply {
                order_id: &r.order_id,
                payment_id: &r.payment_id,
                at: r.at.to_rfc3339(),
            }),
        }
    }
}

/// `stored` as get-order answers it at `now`, with its listings (read, if
/// it has any, strongly consistently) as they read against the waitlist's
/// item (read strongly too: a listing that has read reverted never reads
/// listed again on another instance).
pub(super) async fn order_reply(app: &App, stored: &StoredOrder, now: Millis) -> Reply {
    if !stored.has_returns {
        return reply_with(app, stored, &Listings::default(), now).await;
    }
    let read = Listings {
        listings: app.store.read_listings(&stored.order.order_id).await?,
        waitlist: waitlist_now(app, &stored.order.event_id).await?,
    };
    reply_with(app, stored, &read, now).await
}

/// A seller's listings, and the waitlist they are read against.
#[derive(Default)]
pub(super) struct Listings {
    pub listings: Vec<Listing>,
    pub waitlist: Option<Waitlist>,
}

/// The event's waitlist, read strongly consistently (`None`: none).
pub(super) async fn waitlist_now(app: &App, event: &EventId) -> Result<Option<Waitlist>, Error> {
    Ok(app
        .store
        .read_waitlist(event)
        .await?
        .map(|stored| stored.waitlist))
}

/// `stored` as get-order answers it at `now`, with its listings as `read`.
pub(super) async fn reply_with(
    app: &App,
    stored: &StoredOrder,
    read: &Listings,
    now: Millis,
) -> Reply {
    let order = &stored.order;
    let ga = places_by_section(app, order).await?;
    let waitlist = read.waitlist.as_ref();
    // A listing of places all resold lists nothing: its resales say it.
    let returns: Vec<ReturnReply> = read
        .listings
        .iter()
        .filter(|listing| listing.quantity > 0)
        .map(|listing| ReturnReply::of(listing, waitlist, now))
        .collect();
    Ok(json(
        StatusCode::OK,
        &OrderReply {
            order_id: &order.order_id,
            event_id: &order.event_id,
            status: order.effective_status(now),
            expires_at: order.expires_at.to_rfc3339(),
            created_at: order.created_at.to_rfc3339(),
            seats: &order.seats,
            ga: &ga,
            payment_id: order.payment_id.as_ref(),
            refund_payment_ids: &order.refund_payment_ids,
            visitor_id: order.visitor_id.as_ref(),
            buyer_id: order
                .buyer
                .as_ref()
                .map(|b| b.buyer_id.as_str())
                .or(order.offer.as_ref().map(|o| o.buyer_id.as_str())),
            waitlist_entry_id: order.offer.as_ref().map(|o| &o.entry_id),
            returns: &returns,
        },
    ))
}
