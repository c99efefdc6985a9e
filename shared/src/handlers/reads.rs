//! What several route files read alike, below them all: an order's event,
//! its places by section and in plan order, and general-admission places
//! found in a section's buckets (a random window of them first, so buyers
//! spread over the buckets and one batch read is enough while the section
//! is far from sold out; then all of them, consistently read, before
//! anything is refused).

use super::GaEntry;
use crate::domain::ga::{bucket_count, Bucket};
use crate::domain::{Event, EventId, Order, SectionId};
use crate::error::Error;
use crate::world::random_u64;
use crate::App;

/// The event an order is for, with its plan.
pub(super) async fn order_event(app: &App, order: &Order) -> Result<std::sync::Arc<Event>, Error> {
    (app.event(&order.event_id).await?).ok_or_else(|| no_such_event(order))
}

/// The event in a route's path: `404 event-not-found` unless it exists and
/// is ready (the queue's and the waitlist's operator routes).
pub(super) async fn ready_event(app: &App, req: &lambda_http::Request) -> Result<EventId, Error> {
    let event_id = crate::http::path_param(req, "eventId", EventId::parse)?;
    app.event_head(&event_id)
        .await?
        .ok_or(Error::EventNotFound)?;
    Ok(event_id)
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct EndedReply<'a> {
    event_id: &'a EventId,
    status: &'static str,
}

/// What a delete of an event's queue or waitlist answers: the event and
/// the status it leaves (`REMOVED`, `ENDED`).
pub(super) fn ended_reply(
    event_id: &EventId,
    status: &'static str,
) -> lambda_http::Response<lambda_http::Body> {
    crate::http::json(
        lambda_http::http::StatusCode::OK,
        &EndedReply { event_id, status },
    )
}

/// An order naming no event is corrupt data.
pub(super) fn no_such_event(order: &Order) -> Error {
    Error::Corrupt(format!(
        "order {} names an event that does not exist",
        order.order_id
    ))
}

/// An order's places per general-admission section, in plan order, none
/// with zero.
pub(super) async fn places_by_section(app: &App, order: &Order) -> Result<Vec<GaEntry>, Error> {
    if order.places.is_empty() {
        return Ok(Vec::new());
    }
    let event = order_event(app, order).await?;
    Ok(event
        .ga_sections()
        .map(|(section, _)| GaEntry {
            section_id: section.clone(),
            quantity: order
                .places
                .iter()
                .filter(|p| &p.section == section)
                .map(|p| p.quantity)
                .sum(),
        })
        .filter(|entry| entry.quantity > 0)
        .collect())
}

/// `entries` (sections and quantities) in the order of the event's plan.
pub(super) async fn in_plan_order(
    app: &App,
    order: &Order,
    entries: &[GaEntry],
) -> Result<Vec<GaEntry>, Error> {
    if entries.len() < 2 {
        return Ok(entries.to_vec());
    }
    let event = order_event(app, order).await?;
    let position = |section: &SectionId| {
        event
            .sections
            .iter()
            .position(|s| &s.section_id == section)
            .unwrap_or(usize::MAX)
    };
    let mut sorted = entries.to_vec();
    sorted.sort_by_key(|e| position(&e.section_id));
    Ok(sorted)
}

/// Buckets read first: enough to find places while the section is far from
/// sold out, few enough to be one batch read.
const BUCKETS_SAMPLED: u32 = 8;

/// Plans from the buckets of a section of `capacity` places: `plan` sees
/// the buckets in `must` (those the caller has to see, such as the
/// order's own) and a random window, read consistently if `consistent`;
/// if it finds nothing there, it sees every bucket, read consistently.
/// `Err(buckets)`: no plan fits the whole section as read.
pub(super) async fn plan_from_buckets<T>(
    app: &App,
    event: &EventId,
    section: &SectionId,
    capacity: u32,
    must: &[u32],
    consistent: bool,
    plan: impl Fn(&[Bucket]) -> Option<T>,
) -> Result<Result<T, Vec<Bucket>>, Error> {
    let count = bucket_count(capacity);
    let start = (random_u64() % u64::from(count)) as u32;
    let mut first: Vec<u32> = must.iter().copied().filter(|&b| b < count).collect();
    first.extend(
        (0..BUCKETS_SAMPLED.min(count))
            .map(|i| (start + i) % count)
            .filter(|b| !must.contains(b)),
    );
    let sampled = app
        .store
        .read_buckets(event, section, &first, consistent)
        .await?;
    if let Some(planned) = plan(&sampled) {
        return Ok(Ok(planned));
    }
    if first.len() as u32 == count && consistent {
        return Ok(Err(sampled));
    }
    let all: Vec<u32> = (0..count).map(|i| (start + i) % count).collect();
    let buckets = app.store.read_buckets(event, section, &all, true).await?;
    Ok(plan(&buckets).ok_or(buckets))
}

/// A fresh, unguessable id (128 random bits).
pub(super) fn fresh_id<T>(parse: fn(&str) -> Result<T, Error>) -> Result<T, Error> {
    let random = crate::world::random_u128()
        .ok_or_else(|| Error::Corrupt("no randomness for an id".into()))?;
    parse(&format!("{random:032x}"))
}
