//! The entry points, one file per route group: plain async functions of
//! the app and a request (or a Lambda event), called by the Lambda binaries
//! and by the local dev server alike. Each orchestrates: it reads what the
//! decision needs, asks the domain, writes through the store, and replies.
//!
//! - `events`: create-event, get-event, list-seats, availability
//! - `orders`: create-order, get-order, extend-order, cancel-order
//! - `seats`: get-seat, drop-seat, best-available
//! - `places`: hold-ga (and finding places, for confirm too)
//! - `confirm`: the payment backend's signed webhook
//! - `scheduled`: expire-holds (the sweep) and admit-visitors (the admitter);
//!   `streams`: project-seat-map, publish-events
//! - `queue`: put-queue, get-queue, delete-queue, and the JWKS
//! - `visitors`: join-queue, visitor-status (they sign admissions)
//! - `access`: who may use an order's routes

use lambda_http::{Body, Response};
use serde::{Deserialize, Serialize};

use crate::domain::SectionId;

mod access;
mod confirm;
mod events;
mod orders;
mod places;
mod queue;
mod scheduled;
mod seats;
mod streams;
mod visitors;
pub use confirm::confirm;
pub use events::{availability, create_event, get_event, list_seats};
pub use orders::{cancel_order, create_order, extend_order, get_order, open_order};
pub use places::hold_ga;
pub use queue::{admission_keys, delete_queue, get_queue, put_queue};
pub use scheduled::{admit_visitors, expire_holds};
pub use seats::{best_available, claim_remembering, drop_seat, get_seat};
pub use streams::{project_records, project_seat_map, publish_events};
pub use visitors::{join_queue, visitor_status};

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
