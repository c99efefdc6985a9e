//! The event routes: create-event, get-event, list-seats, availability.

use std::collections::HashMap;

use base64::Engine;
use lambda_http::http::StatusCode;
use lambda_http::Request;
use serde::Serialize;

use super::Reply;
use crate::auth::DrawSecrets;
use crate::domain::access::Access;
use crate::domain::{
    Event, EventId, EventPlan, EventStatus, RowId, RowPlan, SeatId, SeatSpec, SeatStatus, SectionId,
};
use crate::error::Error;
use crate::http::{accepts_gzip, cacheable_json, header, json, json_body, path_param, query_param};
use crate::App;

/// Seats per list-seats page: the default and the most.
pub const MAX_SEATS_PAGE: u32 = 1000;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EventReply<'a> {
    event_id: &'a EventId,
    name: &'a str,
    hold_seconds: u32,
    seat_count: u32,
    ga_capacity: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    buyer_limit: Option<u32>,
    status: EventStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    sections: Option<Vec<SectionView<'a>>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SectionView<'a> {
    section_id: &'a SectionId,
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    rows: Option<&'a [RowPlan]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    capacity: Option<u32>,
}

impl<'a> EventReply<'a> {
    fn of(event: &'a Event, status: EventStatus) -> Self {
        Self {
            event_id: &event.event_id,
            name: &event.name,
            hold_seconds: event.hold_seconds,
            seat_count: event.seat_count,
            ga_capacity: event.ga_capacity(),
            buyer_limit: event.buyer_limit,
            status,
            sections: None,
        }
    }
    fn with_sections(mut self, event: &'a Event) -> Self {
        let sections = event.sections.iter().map(|s| match s.capacity {
            Some(capacity) => SectionView {
                section_id: &s.section_id,
                kind: "ga",
                rows: None,
                capacity: Some(capacity),
            },
            None => SectionView {
                section_id: &s.section_id,
                kind: "seated",
                rows: Some(&s.rows),
                capacity: None,
            },
        });
        self.sections = Some(sections.collect());
        self
    }
}

/// The key a new event's buyer refs are keyed with, where it has a buyer
/// limit: the current `DRAW_SECRET` key's version, kept for the event's
/// life (a retry of the same plan keeps the one stored first).
fn buyer_key(app: &App, limit: Option<u32>) -> Result<Option<String>, Error> {
    limit
        .map(|_| app.config.draw_secrets().map(DrawSecrets::current_version))
        .transpose()
}

/// `PUT /events/{eventId}`: `201` once every seat is written, `202` with
/// `"status": "CREATING"` when the write budget ran out first (the sweep
/// finishes it).
pub async fn create_event(app: &App, req: &Request) -> Reply {
    let event_id = path_param(req, "eventId", EventId::parse)?;
    let plan: EventPlan = json_body(req, None)?;
    // Every check happens before the first write: bad input never
    // leaves a partial event behind.
    let seats = plan.seats()?;
    let event = Event {
        event_id,
        name: plan.name.clone(),
        hold_seconds: plan.hold_seconds.unwrap_or(app.config.hold_seconds),
        // `seats()` caps the count at MAX_EVENT_SEATS, far inside u32.
        seat_count: seats.len() as u32,
        buyer_limit: plan.buyer_limit,
        buyer_key: buyer_key(app, plan.buyer_limit)?,
        sections: plan.sections,
    };
    let status = app
        .store
        .create_event(&event, app.config.create_event_budget())
        .await?;
    let code = match status {
        EventStatus::Ready => StatusCode::CREATED,
        EventStatus::Creating => StatusCode::ACCEPTED,
    };
    Ok(json(code, &EventReply::of(&event, status)))
}

/// `GET /events/{eventId}`: the event, its status and its sections.
pub async fn get_event(app: &App, req: &Request) -> Reply {
    let event_id = path_param(req, "eventId", EventId::parse)?;
    let (event, status) = app
        .event_with_status(&event_id)
        .await?
        .ok_or(Error::EventNotFound)?;
    Ok(json(
        StatusCode::OK,
        &EventReply::of(&event, status).with_sections(&event),
    ))
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SeatView {
    seat_id: SeatId,
    section_id: SectionId,
    row: RowId,
    number: u32,
    status: SeatStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    access: Option<Access>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SeatsReply<'a> {
    event_id: &'a EventId,
    seats: Vec<SeatView>,
    #[serde(skip_serializing_if = "Option::is_none")]
    next_cursor: Option<String>,
}

const CURSOR_PREFIX: &str = "seat:";

/// The opaque `nextCursor` of a page that ends before `ordinal`.
fn encode_cursor(ordinal: u32) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{CURSOR_PREFIX}{ordinal}"))
}

fn decode_cursor(cursor: &str) -> Result<u32, Error> {
    let bad = || Error::BadRequest("cursor must be a nextCursor from a previous page".into());
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .map_err(|_| bad())?;
    let text = std::str::from_utf8(&raw).map_err(|_| bad())?;
    text.strip_prefix(CURSOR_PREFIX)
        .and_then(|n| n.parse().ok())
        .ok_or_else(bad)
}

fn parse_limit(raw: &str) -> Result<u32, Error> {
    raw.parse()
        .ok()
        .filter(|n| (1..=MAX_SEATS_PAGE).contains(n))
        .ok_or_else(|| {
            Error::BadRequest(format!(
                "limit must be a whole number from 1 to {MAX_SEATS_PAGE}"
            ))
        })
}

/// `GET /events/{eventId}/seats[?section=S&limit=N&cursor=C]`: one page of
/// seats in plan order; never reveals holders.
pub async fn list_seats(app: &App, req: &Request) -> Reply {
    let event_id = path_param(req, "eventId", EventId::parse)?;
    let section = query_param(req, "section", SectionId::parse)?;
    let limit = query_param(req, "limit", parse_limit)?.unwrap_or(MAX_SEATS_PAGE);
    let from = query_param(req, "cursor", decode_cursor)?;
    let event = app.event(&event_id).await?.ok_or(Error::EventNotFound)?;
    let (seats, next) = app
        .store
        .list_seats(&event, section.as_ref(), from, limit)
        .await?;
    let now = crate::world::now();
    let mut access = RowsAccess::new(&event);
    let seats = seats
        .into_iter()
        .map(|seat| SeatView {
            status: seat.state.visible_status(now),
            access: access.of(&seat.spec),
            seat_id: seat.spec.seat_id,
            section_id: seat.spec.section_id,
            row: seat.spec.row,
            number: seat.spec.number,
        })
        .collect();
    Ok(json(
        StatusCode::OK,
        &SeatsReply {
            event_id: &event_id,
            seats,
            next_cursor: next.map(encode_cursor),
        },
    ))
}

/// The access of a page's seats, each row's worked out once.
struct RowsAccess<'a> {
    event: &'a Event,
    rows: HashMap<(SectionId, RowId), Option<Vec<Option<Access>>>>,
}

impl<'a> RowsAccess<'a> {
    fn new(event: &'a Event) -> Self {
        Self {
            event,
            rows: HashMap::new(),
        }
    }

    fn of(&mut self, seat: &SeatSpec) -> Option<Access> {
        let event = self.event;
        let key = (seat.section_id.clone(), seat.row.clone());
        let seats = self.rows.entry(key).or_insert_with(|| {
            let section = event.section(&seat.section_id)?;
            let row = section.rows.iter().find(|row| row.row == seat.row)?;
            row.seats_access()
        });
        let at = usize::try_from(seat.number.checked_sub(1)?).ok()?;
        *seats.as_ref()?.get(at)?
    }
}

/// How long a client or CDN may reuse a seat map (the contract's 1 s).
pub const SEAT_MAP_MAX_AGE_SECONDS: u32 = 1;

/// `GET /events/{eventId}/availability`: the seat map, one character per
/// seat, from the stream-fed projection (cached per process for a second),
/// gzipped when accepted.
pub async fn availability(app: &App, req: &Request) -> Reply {
    let event_id = path_param(req, "eventId", EventId::parse)?;
    let event = app.event(&event_id).await?.ok_or(Error::EventNotFound)?;
    let (read_at, read) = app.seat_map(&event).await?;
    let mut map = crate::domain::seat_map(&event, &read.rows, &read.buckets, crate::world::now());
    map.as_of = read_at.to_rfc3339();
    Ok(cacheable_json(
        &map,
        SEAT_MAP_MAX_AGE_SECONDS,
        accepts_gzip(header(req, "accept-encoding")),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_garbage_is_a_bad_request() {
        for n in [0, 1, 999, 99_999] {
            assert_eq!(decode_cursor(&encode_cursor(n)).ok(), Some(n));
        }
        for bad in ["", "!!", "c2VhdDp4", "bm9wZToxMA", "seat:10"] {
            assert!(
                matches!(decode_cursor(bad), Err(Error::BadRequest(_))),
                "{bad}"
            );
        }
        assert!(
            parse_limit("0").is_err() && parse_limit("1001").is_err() && parse_limit("x").is_err()
        );
        assert_eq!(parse_limit("1000").ok(), Some(1000));
    }
}
