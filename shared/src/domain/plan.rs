//! An event's plan: create-event's body, checked and expanded into seats in
//! plan order.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::access;
use super::{
    EventId, RowId, SeatId, SeatState, SectionId, GA_CAPACITY_RANGE, HOLD_SECONDS_RANGE,
    MAX_EVENT_GA_BUCKETS, MAX_EVENT_NAME_LEN, MAX_EVENT_SEATS, MAX_SECTIONS,
};
use crate::error::Error;

/// An event's metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub event_id: EventId,
    pub name: String,
    pub hold_seconds: u32,
    pub seat_count: u32,
    /// The most seats and places one buyer may hold and own together
    /// ([`super::buyer_limit`]); `None`: no limit.
    pub buyer_limit: Option<u32>,
    /// The version of the server key its buyers' refs are keyed with
    /// ([`super::buyer_limit::BuyerRef::keyed`]), fixed at its creation;
    /// `None` without a limit, or for an event created before refs were
    /// keyed (they stay [`super::buyer_limit::BuyerRef::unkeyed`]).
    pub buyer_key: Option<String>,
    /// The seating plan: sections, and their rows, in plan order.
    pub sections: Vec<SectionPlan>,
}

/// What every request may need of an event, without its plan: a small
/// item of its own (docs/API.md, "Under a crowd"), cached per instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventHead {
    pub event_id: EventId,
    pub hold_seconds: u32,
    pub seat_count: u32,
    pub buyer_limit: Option<u32>,
    /// See [`Event::buyer_key`].
    pub buyer_key: Option<String>,
}

/// The version of [`Event::plan_fingerprint`]'s encoding. A new version
/// makes every plan a different plan, so it changes only with a migration.
const PLAN_IDENTITY_VERSION: u32 = 2;

/// What makes a plan the plan it is, in a fixed field order.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PlanIdentity<'a> {
    version: u32,
    name: &'a str,
    hold_seconds: u32,
    // Absent when unset, so a plan without a limit keeps the fingerprint
    // it had before limits existed.
    #[serde(skip_serializing_if = "Option::is_none")]
    buyer_limit: Option<u32>,
    sections: &'a [SectionPlan],
}

impl Event {
    /// Which plan this is: create-event's "same plan" (a retry, which
    /// resumes) and the key of its stored plan chunks. SHA-256 over the
    /// plan's JSON: the name, the effective `holdSeconds` and every field
    /// of every section (rows and counts, or a general-admission
    /// capacity), in plan order, behind a version. JSON is an injective
    /// encoding (strings are quoted and escaped, NUL and control characters
    /// included; every field is named), so two plans that differ in any
    /// field have different fingerprints; the event id is the item's key.
    pub fn plan_fingerprint(&self) -> String {
        let identity = PlanIdentity {
            version: PLAN_IDENTITY_VERSION,
            name: &self.name,
            hold_seconds: self.hold_seconds,
            buyer_limit: self.buyer_limit,
            sections: &self.sections,
        };
        // Plain structs of strings and numbers always serialise.
        let canonical = serde_json::to_vec(&identity).unwrap_or_default();
        hex::encode(Sha256::digest(&canonical))
    }
}

/// Whether an event's seats are all written yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum EventStatus {
    /// Still being written (in the background once create-event answered
    /// 202); every reader but get-event treats it as absent.
    Creating,
    Ready,
}

/// One page of an event's seats in plan order, and where the next starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeatPage {
    pub seats: Vec<SeatSpec>,
    /// The ordinal the next page starts at; `None` on the last page.
    pub next: Option<u32>,
}

impl Event {
    /// The event without its plan.
    pub fn head(&self) -> EventHead {
        EventHead {
            event_id: self.event_id.clone(),
            hold_seconds: self.hold_seconds,
            seat_count: self.seat_count,
            buyer_limit: self.buyer_limit,
            buyer_key: self.buyer_key.clone(),
        }
    }

    pub fn section(&self, id: &SectionId) -> Option<&SectionPlan> {
        self.sections
            .iter()
            .find(|section| &section.section_id == id)
    }

    /// Whether the plan has `seat`.
    pub fn has_seat(&self, seat: &SeatId) -> bool {
        self.seat_place(seat).is_some()
    }

    /// The section and row of `seat`, and its number, if the plan has it.
    pub fn seat_place(&self, seat: &SeatId) -> Option<(&SectionId, &RowId, u32)> {
        let (row_key, number) = seat.row_and_number()?;
        self.sections.iter().find_map(|section| {
            let mut rows = section.rows.iter();
            let row = rows.find(|row| {
                SeatId::row_key(&section.section_id, &row.row) == row_key
                    && (1..=row.count).contains(&number)
            })?;
            Some((&section.section_id, &row.row, number))
        })
    }

    /// The places of every general-admission section together.
    pub fn ga_capacity(&self) -> u32 {
        self.sections
            .iter()
            .filter_map(|section| section.capacity)
            .fold(0u32, u32::saturating_add)
    }

    /// The general-admission sections, in plan order.
    pub fn ga_sections(&self) -> impl Iterator<Item = (&SectionId, u32)> {
        self.sections.iter().filter_map(|section| {
            section
                .capacity
                .map(|capacity| (&section.section_id, capacity))
        })
    }

    /// Every row with the ordinal of its first seat, in plan order.
    fn rows(&self) -> impl Iterator<Item = (&SectionPlan, &RowPlan, u32)> {
        let mut first = 0u32;
        self.sections
            .iter()
            .flat_map(|section| section.rows.iter().map(move |row| (section, row)))
            .map(move |(section, row)| {
                let at = first;
                // The plan was checked on creation: at most MAX_EVENT_SEATS seats.
                first = first.saturating_add(row.count);
                (section, row, at)
            })
    }

    /// The ordinals `[start, end)` of one section's seats, or of all seats.
    fn span(&self, section: Option<&SectionId>) -> Result<(u32, u32), Error> {
        let Some(id) = section else {
            return Ok((0, self.seat_count));
        };
        let mut rows = self.rows().filter(|(s, _, _)| &s.section_id == id);
        let (_, row, start) = rows.next().ok_or(Error::SectionNotFound)?;
        let end = rows
            .last()
            .map_or(start + row.count, |(_, r, at)| at + r.count);
        Ok((start, end))
    }

    /// Up to `limit` seats in plan order (of one section, if given),
    /// starting at ordinal `from` (the section's or the event's first seat
    /// by default). A `from` outside the span is a bad cursor.
    pub fn seat_page(
        &self,
        section: Option<&SectionId>,
        from: Option<u32>,
        limit: u32,
    ) -> Result<SeatPage, Error> {
        // A general-admission section lists no seats (and takes no cursor).
        if let Some(ga) = section
            .and_then(|id| self.section(id))
            .filter(|s| s.is_ga())
        {
            if from.is_some() {
                return Err(Error::BadRequest(format!(
                    "section {} has no seats to page through",
                    ga.section_id
                )));
            }
            return Ok(SeatPage {
                seats: Vec::new(),
                next: None,
            });
        }
        let (start, end) = self.span(section)?;
        let from = from.unwrap_or(start);
        if !(start..=end).contains(&from) {
            return Err(Error::BadRequest(
                "cursor is not a cursor of this listing".into(),
            ));
        }
        let until = from.saturating_add(limit).min(end);
        let mut seats = Vec::with_capacity((until - from) as usize);
        for (section, row, at) in self.rows() {
            if at >= until {
                break;
            }
            let row_end = at + row.count;
            if row_end <= from {
                continue;
            }
            for ordinal in from.max(at)..row_end.min(until) {
                let number = ordinal - at + 1;
                seats.push(SeatSpec {
                    seat_id: SeatId::compose(&section.section_id, &row.row, number),
                    section_id: section.section_id.clone(),
                    row: row.row.clone(),
                    number,
                    ordinal,
                });
            }
        }
        Ok(SeatPage {
            seats,
            next: (until < end).then_some(until),
        })
    }
}

/// One seat of an event's plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeatSpec {
    pub seat_id: SeatId,
    pub section_id: SectionId,
    pub row: RowId,
    pub number: u32,
    /// Position in plan order (0-based): sections and rows as the plan
    /// lists them, seats by number. list-seats sorts by it.
    pub ordinal: u32,
}

/// A seat with its state, as read for list-seats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seat {
    pub spec: SeatSpec,
    pub state: SeatState,
}

/// create-event's body, as sent.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventPlan {
    pub name: String,
    #[serde(default)]
    pub hold_seconds: Option<u32>,
    /// 1–50; absent or `null`: no limit.
    #[serde(default)]
    pub buyer_limit: Option<u32>,
    pub sections: Vec<SectionPlan>,
}

/// A section: reserved seating (`rows`) or general admission (`capacity`
/// places, no seat ids), never both.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SectionPlan {
    pub section_id: SectionId,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rows: Vec<RowPlan>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<u32>,
}

impl SectionPlan {
    /// General admission: places, not seats.
    pub fn is_ga(&self) -> bool {
        self.capacity.is_some()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RowPlan {
    pub row: RowId,
    pub count: u32,
    /// The numbers of its wheelchair spaces and companion seats, as sent
    /// (`super::access`). Absent when empty, so a plan without them keeps
    /// the fingerprint it had before they existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wheelchair: Vec<u32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub companion: Vec<u32>,
}

impl RowPlan {
    /// A row of `count` seats with no accessible seats.
    pub fn plain(row: RowId, count: u32) -> Self {
        Self {
            row,
            count,
            wheelchair: Vec::new(),
            companion: Vec::new(),
        }
    }

    /// Its access as the seat map writes it ([`access::access_symbols`]).
    pub fn access_symbols(&self) -> Option<String> {
        access::access_symbols(self.count, &self.wheelchair, &self.companion)
    }

    /// What each of its seats is for ([`access::seats_access`]).
    pub fn seats_access(&self) -> Option<Vec<Option<access::Access>>> {
        access::seats_access(self.count, &self.wheelchair, &self.companion)
    }
}

impl EventPlan {
    /// Checks the plan and expands it into its seats, in plan order.
    /// Rejects what would make two seats share an id: a repeated section,
    /// a repeated row in a section, or ids that collide through the dashes
    /// (section `A` row `1-2` and section `A-1` row `2` both give `A-1-2-n`).
    pub fn seats(&self) -> Result<Vec<SeatSpec>, Error> {
        check_event_name(&self.name)?;
        if let Some(h) = self.hold_seconds {
            check_hold_seconds(h)?;
        }
        if let Some(limit) = self.buyer_limit {
            super::buyer_limit::check_limit(limit)?;
        }
        if self.sections.is_empty() || self.sections.len() > MAX_SECTIONS {
            return Err(Error::BadRequest(format!(
                "an event has 1-{MAX_SECTIONS} sections"
            )));
        }
        let mut total: u64 = 0;
        let mut section_ids = HashSet::with_capacity(self.sections.len());
        for section in &self.sections {
            if !section_ids.insert(&section.section_id) {
                return Err(Error::BadRequest(format!(
                    "section {} occurs twice",
                    section.section_id
                )));
            }
            total += section_seats(section)?;
        }
        self.check_ga_buckets()?;
        if total > u64::from(MAX_EVENT_SEATS) {
            return Err(Error::BadRequest(format!(
                "an event has at most {MAX_EVENT_SEATS} seats; this plan has {total}"
            )));
        }
        self.compose_seats(total as usize)
    }

    /// The general-admission sections' buckets, within the event's.
    fn check_ga_buckets(&self) -> Result<(), Error> {
        let buckets: u64 = self
            .sections
            .iter()
            .filter_map(|s| s.capacity)
            .map(|c| u64::from(super::ga::bucket_count(c)))
            .sum();
        if buckets > u64::from(MAX_EVENT_GA_BUCKETS) {
            return Err(Error::BadRequest(format!(
                "an event's general-admission sections have at most {} places together in this release ({MAX_EVENT_GA_BUCKETS} buckets); this plan needs {buckets} buckets",
                u64::from(MAX_EVENT_GA_BUCKETS) * u64::from(super::ga::bucket_places(super::GA_CAPACITY_RANGE.end().to_owned()))
            )));
        }
        Ok(())
    }

    /// Every seat of the plan's `total`, in plan order, each id once.
    fn compose_seats(&self, total: usize) -> Result<Vec<SeatSpec>, Error> {
        let mut seats = Vec::with_capacity(total);
        let mut ids = HashSet::with_capacity(total);
        for section in &self.sections {
            for row in &section.rows {
                for number in 1..=row.count {
                    let seat_id = SeatId::compose(&section.section_id, &row.row, number);
                    if !ids.insert(seat_id.clone()) {
                        return Err(Error::BadRequest(format!(
                            "seat id {seat_id} occurs twice: sections and rows must be unique and must not collide through '-'"
                        )));
                    }
                    seats.push(SeatSpec {
                        seat_id,
                        section_id: section.section_id.clone(),
                        row: row.row.clone(),
                        number,
                        // At most MAX_EVENT_SEATS seats: fits in u32.
                        ordinal: seats.len() as u32,
                    });
                }
            }
        }
        Ok(seats)
    }
}

/// How many seats `section` has: seated with rows of at least a seat
/// each (0 for general admission, whose capacity is checked here).
fn section_seats(section: &SectionPlan) -> Result<u64, Error> {
    match (section.capacity, section.rows.is_empty()) {
        (Some(_), false) => {
            return Err(Error::BadRequest(format!(
                "section {} has both rows and a capacity: a section is seated or general admission",
                section.section_id
            )))
        }
        (Some(capacity), true) if !GA_CAPACITY_RANGE.contains(&capacity) => {
            return Err(Error::BadRequest(format!(
                "section {} must have a capacity of {} to {} places",
                section.section_id,
                GA_CAPACITY_RANGE.start(),
                GA_CAPACITY_RANGE.end()
            )))
        }
        (Some(_), true) => return Ok(0),
        (None, true) => {
            return Err(Error::BadRequest(format!(
                "section {} has no rows (or a capacity, for general admission)",
                section.section_id
            )))
        }
        (None, false) => {}
    }
    let mut seats = 0;
    for row in &section.rows {
        if row.count == 0 {
            return Err(Error::BadRequest(format!(
                "row {} of section {} must have a count of at least 1",
                row.row, section.section_id
            )));
        }
        let at = (&section.section_id, &row.row, row.count);
        access::check_row_access(at, &row.wheelchair, &row.companion)?;
        seats += u64::from(row.count);
    }
    Ok(seats)
}

/// An event's name: 1-200 characters, not only white space, and no
/// control characters (U+0000-U+001F, U+007F), which no page shows and a
/// log or a CSV export would carry as they are.
pub fn check_event_name(name: &str) -> Result<(), Error> {
    if name.trim().is_empty() || name.chars().count() > MAX_EVENT_NAME_LEN {
        return Err(Error::BadRequest(format!(
            "name must be 1-{MAX_EVENT_NAME_LEN} characters, not only spaces"
        )));
    }
    if name.chars().any(|c| c < ' ' || c == '\u{7f}') {
        return Err(Error::BadRequest(
            "name must not contain control characters (U+0000-U+001F, U+007F)".into(),
        ));
    }
    Ok(())
}

pub fn check_hold_seconds(h: u32) -> Result<(), Error> {
    if HOLD_SECONDS_RANGE.contains(&h) {
        Ok(())
    } else {
        Err(Error::BadRequest(format!(
            "holdSeconds must be between {} and {}",
            HOLD_SECONDS_RANGE.start(),
            HOLD_SECONDS_RANGE.end()
        )))
    }
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
