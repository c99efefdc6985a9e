//! The entry points, one file per route group: plain async functions of
//! the app and a request (or a Lambda event), called by the Lambda binaries
//! and by the local dev server alike. Each orchestrates: it reads what the
//! decision needs, asks the domain, writes through the store, and replies.
//!
//! - `events`: create-event, get-event, list-seats, availability
//! - `orders`: create-order, get-order, extend-order, cancel-order
//! - `seats`: get-seat, drop-seat, best-available
//! - `places`: hold-ga (and finding places, for confirm too)
//! - `confirm`: the payment backend's signed webhook; `stripe`: Stripe's
//!   webhook, for sellers paid through Stripe Checkout
//! - `scheduled`: expire-holds (the sweep), admit-visitors (the admitter)
//!   and offer-waitlists (the offerer's tick);
//!   `streams`: project-seat-map, publish-events
//! - `queue`: put-queue, get-queue, delete-queue, and the JWKS
//! - `visitors`: join-queue, visitor-status (they sign admissions)
//! - `waitlist`: put-waitlist, get-waitlist, delete-waitlist, the
//!   organiser's list of entries and removal
//! - `waitlist_entries`: join, an entry's status, leave (they derive entry
//!   tokens)
//! - `access`: who may use an order's routes; `reads`: what several
//!   route files read alike (an order's event, its places, places found in
//!   a section's buckets); `generation`: what the queue routes share (a
//!   route's queue, its generation's draw secret); `sale`: what a payment
//!   sells (confirm's and Stripe's); `opening`: a waitlist's opening at a
//!   sell-out (the projector's and put-waitlist's); `entries`: a waitlist
//!   entry's status, its reply and its end (the buyer's and the
//!   organiser's); `cancel`: an order's cancel (cancel-order's, an offer's
//!   decline). Route files import only from these seven, never from each
//!   other. The waitlist's offerer (a look, and its tick) is
//!   `crate::offerer`, which the tick's function calls (the stream's
//!   reader only counts the frees it sees, `store::frees`).

use lambda_http::{Body, Response};
use serde::{Deserialize, Serialize};

use crate::domain::SectionId;

mod access;
pub(crate) mod best_available;
mod cancel;
pub(crate) mod confirm;
pub(crate) mod draw;
mod entries;
pub(crate) mod events;
mod generation;
mod opening;
mod order_view;
pub(crate) mod orders;
pub(crate) mod places;
pub(crate) mod queue;
mod reads;
pub(crate) mod returns;
mod sale;
mod scheduled;
pub(crate) mod seats;
mod streams;
pub(crate) mod stripe;
pub(crate) mod visitors;
pub(crate) mod waitlist;
pub(crate) mod waitlist_entries;
// The route handlers are reached through `crate::routes`, by their group;
// these are the entry points and helpers others call by name.
pub use best_available::ROUND_TRIPS as BEST_AVAILABLE_ROUND_TRIPS;
pub use draw::{DRAW_PAGE_MAX_AGE_SECONDS, MAX_DRAW_PAGE};
pub use events::SEAT_MAP_MAX_AGE_SECONDS;
pub use orders::open_order;
pub use scheduled::{admit_visitors, expire_holds, offer_waitlists};
pub use seats::{claim_exactly, get_seat_at, release_exactly};
pub use streams::{project_records, project_seat_map, publish_events};
pub use stripe::{ASYNC_PAYMENT_SUCCEEDED, SESSION_COMPLETED};

/// A general-admission entry of a reply: places of one section.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct GaEntry {
    pub section_id: SectionId,
    pub quantity: u32,
}

/// A route handler's outcome; `crate::routes::answer` turns it into the
/// reply.
type Reply = Result<Response<Body>, crate::error::Error>;
