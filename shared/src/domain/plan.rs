//! An event's plan: create-event's body, checked and expanded into seats in
//! plan order.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

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
    /// The seating plan: sections, and their rows, in plan order.
    pub sections: Vec<SectionPlan>,
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
    pub fn section(&self, id: &SectionId) -> Option<&SectionPlan> {
        self.sections
            .iter()
            .find(|section| &section.section_id == id)
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
                (Some(_), true) => continue,
                (None, true) => {
                    return Err(Error::BadRequest(format!(
                        "section {} has no rows (or a capacity, for general admission)",
                        section.section_id
                    )))
                }
                (None, false) => {}
            }
            for row in &section.rows {
                if row.count == 0 {
                    return Err(Error::BadRequest(format!(
                        "row {} of section {} must have a count of at least 1",
                        row.row, section.section_id
                    )));
                }
                total += u64::from(row.count);
            }
        }
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
        if total > u64::from(MAX_EVENT_SEATS) {
            return Err(Error::BadRequest(format!(
                "an event has at most {MAX_EVENT_SEATS} seats; this plan has {total}"
            )));
        }
        let mut seats = Vec::with_capacity(total as usize);
        let mut ids = HashSet::with_capacity(total as usize);
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
mod tests {
    use super::*;

    type TestResult = Result<(), Box<dyn std::error::Error>>;

    fn plan(json: &str) -> Result<EventPlan, serde_json::Error> {
        serde_json::from_str(json)
    }

    #[test]
    fn plan_expands_into_seat_ids_in_order() -> TestResult {
        let p = plan(
            r#"{"name":"Gala","sections":[{"sectionId":"A","rows":[{"row":"1","count":2},{"row":"2","count":1}]}]}"#,
        )?;
        let ids: Vec<_> = p
            .seats()?
            .into_iter()
            .map(|s| s.seat_id.to_string())
            .collect();
        assert_eq!(ids, ["A-1-1", "A-1-2", "A-2-1"]);
        Ok(())
    }

    #[test]
    fn plan_rejects_colliding_and_repeated_seats() -> TestResult {
        let p = plan(
            r#"{"name":"G","sections":[{"sectionId":"A","rows":[{"row":"1-2","count":1}]},{"sectionId":"A-1","rows":[{"row":"2","count":1}]}]}"#,
        )?;
        assert!(p.seats().is_err());
        let p = plan(
            r#"{"name":"G","sections":[{"sectionId":"A","rows":[{"row":"1","count":1},{"row":"1","count":1}]}]}"#,
        )?;
        assert!(p.seats().is_err());
        Ok(())
    }

    #[test]
    fn plan_bounds() -> TestResult {
        let too_many = r#"{"name":"G","sections":[{"sectionId":"A","rows":[{"row":"1","count":100000}, {"row":"2","count":1}]}]}"#;
        assert!(plan(too_many)?.seats().is_err());
        let exactly = r#"{"name":"G","sections":[{"sectionId":"A","rows":[{"row":"1","count":60000}, {"row":"2","count":40000}]}]}"#;
        assert_eq!(plan(exactly)?.seats()?.len(), 100_000);
        for bad in [
            r#"{"name":"","sections":[{"sectionId":"A","rows":[{"row":"1","count":1}]}]}"#,
            r#"{"name":"G","sections":[]}"#,
            r#"{"name":"G","sections":[{"sectionId":"A","rows":[]}]}"#,
            r#"{"name":"G","sections":[{"sectionId":"A","rows":[{"row":"1","count":0}]}]}"#,
            r#"{"name":"G","holdSeconds":0,"sections":[{"sectionId":"A","rows":[{"row":"1","count":1}]}]}"#,
            r#"{"name":"G","holdSeconds":7201,"sections":[{"sectionId":"A","rows":[{"row":"1","count":1}]}]}"#,
        ] {
            assert!(plan(bad)?.seats().is_err(), "{bad}");
        }
        // Wrong types never reach the rules: serde refuses them.
        assert!(plan(
            r#"{"name":"G","sections":[{"sectionId":"A","rows":[{"row":"1","count":-1}]}]}"#
        )
        .is_err());
        assert!(plan(
            r#"{"name":"G","sections":[{"sectionId":"A#","rows":[{"row":"1","count":1}]}]}"#
        )
        .is_err());
        Ok(())
    }

    fn event_of(json: &str) -> Result<Event, Box<dyn std::error::Error>> {
        let p = plan(json)?;
        Ok(Event {
            event_id: EventId::parse("e")?,
            name: p.name.clone(),
            hold_seconds: 60,
            seat_count: p.seats()?.len() as u32,
            sections: p.sections,
        })
    }

    #[test]
    fn seat_pages_walk_the_plan_in_order() -> TestResult {
        let event = event_of(
            r#"{"name":"G","sections":[{"sectionId":"B","rows":[{"row":"10","count":3},{"row":"9","count":2}]},{"sectionId":"A","rows":[{"row":"1","count":2}]}]}"#,
        )?;
        let all: Vec<_> = event
            .seat_page(None, None, 1000)?
            .seats
            .into_iter()
            .map(|s| s.seat_id.to_string())
            .collect();
        assert_eq!(
            all,
            ["B-10-1", "B-10-2", "B-10-3", "B-9-1", "B-9-2", "A-1-1", "A-1-2"]
        );
        // Pages of 2 cover the same seats once each, with the right ordinals.
        let (mut seen, mut from) = (Vec::new(), None);
        loop {
            let page = event.seat_page(None, from, 2)?;
            assert!(page.seats.len() <= 2);
            seen.extend(
                page.seats
                    .iter()
                    .map(|s| (s.seat_id.to_string(), s.ordinal)),
            );
            match page.next {
                Some(next) => from = Some(next),
                None => break,
            }
        }
        let want: Vec<_> = all.iter().cloned().zip(0u32..).collect();
        assert_eq!(seen, want);
        // One section: its span only; the cursor must fall inside it.
        let b = SectionId::parse("B")?;
        let page = event.seat_page(Some(&b), Some(3), 10)?;
        assert_eq!(
            page.seats
                .iter()
                .map(|s| s.seat_id.to_string())
                .collect::<Vec<_>>(),
            ["B-9-1", "B-9-2"]
        );
        assert_eq!(page.next, None);
        let a = SectionId::parse("A")?;
        assert_eq!(event.seat_page(Some(&a), None, 1)?.seats[0].ordinal, 5);
        assert!(
            event.seat_page(Some(&a), Some(2), 1).is_err(),
            "a cursor of another section"
        );
        assert!(event.seat_page(None, Some(8), 1).is_err(), "past the end");
        assert_eq!(
            event.seat_page(None, Some(7), 1)?.seats,
            vec![],
            "at the end: an empty last page"
        );
        assert!(matches!(
            event.seat_page(Some(&SectionId::parse("Z")?), None, 1),
            Err(Error::SectionNotFound)
        ));
        Ok(())
    }

    #[test]
    fn general_admission_sections_have_a_capacity_and_no_seats() -> TestResult {
        let json = r#"{"name":"G","sections":[{"sectionId":"A","rows":[{"row":"1","count":2}]},{"sectionId":"FLOOR","capacity":5000}]}"#;
        let p = plan(json)?;
        assert_eq!(p.seats()?.len(), 2, "places are not seats");
        let event = event_of(json)?;
        assert_eq!(event.ga_capacity(), 5000);
        let floor = SectionId::parse("FLOOR")?;
        assert!(event.section(&floor).is_some_and(SectionPlan::is_ga));
        assert_eq!(
            event.seat_page(Some(&floor), None, 10)?,
            SeatPage {
                seats: vec![],
                next: None
            }
        );
        assert!(event.seat_page(Some(&floor), Some(0), 10).is_err());
        assert_eq!(event.seat_page(None, None, 10)?.seats.len(), 2);
        // Serialised as given: the plan round-trips.
        assert_eq!(
            serde_json::from_str::<Vec<SectionPlan>>(&serde_json::to_string(&event.sections)?)?,
            event.sections
        );
        for bad in [
            r#"{"name":"G","sections":[{"sectionId":"F","capacity":0}]}"#,
            r#"{"name":"G","sections":[{"sectionId":"F","capacity":100001}]}"#,
            r#"{"name":"G","sections":[{"sectionId":"F","capacity":5,"rows":[{"row":"1","count":1}]}]}"#,
            r#"{"name":"G","sections":[{"sectionId":"F","capacity":5},{"sectionId":"F","capacity":5}]}"#,
            r#"{"name":"G","sections":[{"sectionId":"F"}]}"#,
        ] {
            assert!(plan(bad)?.seats().is_err(), "{bad}");
        }
        assert!(plan(r#"{"name":"G","sections":[{"sectionId":"F","capacity":-1}]}"#).is_err());
        assert!(
            plan(r#"{"name":"G","sections":[{"sectionId":"F","capacity":100000}]}"#)?
                .seats()?
                .is_empty()
        );
        // Five sections of 100,000 places fit; a sixth is too many buckets.
        let sections = |n: usize| {
            (0..n)
                .map(|i| format!(r#"{{"sectionId":"F{i}","capacity":100000}}"#))
                .collect::<Vec<_>>()
                .join(",")
        };
        assert!(
            plan(&format!(r#"{{"name":"G","sections":[{}]}}"#, sections(5)))?
                .seats()
                .is_ok()
        );
        assert!(
            plan(&format!(r#"{{"name":"G","sections":[{}]}}"#, sections(6)))?
                .seats()
                .is_err()
        );
        Ok(())
    }

    #[test]
    fn plan_seats_carry_their_plan_order() -> TestResult {
        let p = plan(
            r#"{"name":"G","sections":[{"sectionId":"B","rows":[{"row":"10","count":2},{"row":"9","count":1}]},{"sectionId":"A","rows":[{"row":"1","count":1}]}]}"#,
        )?;
        let got: Vec<_> = p
            .seats()?
            .into_iter()
            .map(|s| (s.seat_id.to_string(), s.ordinal))
            .collect();
        let want: Vec<(String, u32)> = vec![
            ("B-10-1".into(), 0),
            ("B-10-2".into(), 1),
            ("B-9-1".into(), 2),
            ("A-1-1".into(), 3),
        ];
        assert_eq!(got, want);
        Ok(())
    }

    fn effective_event(json: &str) -> Result<Event, Box<dyn std::error::Error>> {
        let p = plan(json)?;
        let seats = p.seats()?;
        Ok(Event {
            event_id: EventId::parse("e")?,
            name: p.name,
            hold_seconds: p.hold_seconds.unwrap_or(420),
            seat_count: seats.len() as u32,
            sections: p.sections,
        })
    }

    #[test]
    fn plans_that_differ_in_any_one_field_have_different_fingerprints() -> TestResult {
        let base = r#"{"name":"Gala","holdSeconds":420,"sections":[{"sectionId":"A","rows":[{"row":"1","count":20},{"row":"2","count":5}]},{"sectionId":"FLOOR","capacity":100}]}"#;
        let variants = [
            (
                "name",
                r#"{"name":"Gala ","holdSeconds":420,"sections":[{"sectionId":"A","rows":[{"row":"1","count":20},{"row":"2","count":5}]},{"sectionId":"FLOOR","capacity":100}]}"#,
            ),
            (
                "holdSeconds",
                r#"{"name":"Gala","holdSeconds":421,"sections":[{"sectionId":"A","rows":[{"row":"1","count":20},{"row":"2","count":5}]},{"sectionId":"FLOOR","capacity":100}]}"#,
            ),
            (
                "sectionId",
                r#"{"name":"Gala","holdSeconds":420,"sections":[{"sectionId":"B","rows":[{"row":"1","count":20},{"row":"2","count":5}]},{"sectionId":"FLOOR","capacity":100}]}"#,
            ),
            (
                "row",
                r#"{"name":"Gala","holdSeconds":420,"sections":[{"sectionId":"A","rows":[{"row":"1","count":20},{"row":"3","count":5}]},{"sectionId":"FLOOR","capacity":100}]}"#,
            ),
            (
                "count",
                r#"{"name":"Gala","holdSeconds":420,"sections":[{"sectionId":"A","rows":[{"row":"1","count":20},{"row":"2","count":6}]},{"sectionId":"FLOOR","capacity":100}]}"#,
            ),
            (
                "capacity",
                r#"{"name":"Gala","holdSeconds":420,"sections":[{"sectionId":"A","rows":[{"row":"1","count":20},{"row":"2","count":5}]},{"sectionId":"FLOOR","capacity":5}]}"#,
            ),
            (
                "row order",
                r#"{"name":"Gala","holdSeconds":420,"sections":[{"sectionId":"A","rows":[{"row":"2","count":5},{"row":"1","count":20}]},{"sectionId":"FLOOR","capacity":100}]}"#,
            ),
            (
                "section order",
                r#"{"name":"Gala","holdSeconds":420,"sections":[{"sectionId":"FLOOR","capacity":100},{"sectionId":"A","rows":[{"row":"1","count":20},{"row":"2","count":5}]}]}"#,
            ),
            (
                "a row more",
                r#"{"name":"Gala","holdSeconds":420,"sections":[{"sectionId":"A","rows":[{"row":"1","count":20},{"row":"2","count":5},{"row":"3","count":1}]},{"sectionId":"FLOOR","capacity":100}]}"#,
            ),
            (
                "seated, not GA",
                r#"{"name":"Gala","holdSeconds":420,"sections":[{"sectionId":"A","rows":[{"row":"1","count":20},{"row":"2","count":5}]},{"sectionId":"FLOOR","rows":[{"row":"1","count":100}]}]}"#,
            ),
        ];
        let fingerprint = effective_event(base)?.plan_fingerprint();
        assert_eq!(
            effective_event(base)?.plan_fingerprint(),
            fingerprint,
            "the same plan, the same fingerprint"
        );
        assert_eq!(fingerprint.len(), 64);
        for (field, other) in variants {
            assert_ne!(
                effective_event(other)?.plan_fingerprint(),
                fingerprint,
                "{field}"
            );
        }
        // A default holdSeconds is the effective one: the same plan as the explicit 420.
        let implicit = r#"{"name":"Gala","sections":[{"sectionId":"A","rows":[{"row":"1","count":20},{"row":"2","count":5}]},{"sectionId":"FLOOR","capacity":100}]}"#;
        assert_eq!(effective_event(implicit)?.plan_fingerprint(), fingerprint);
        Ok(())
    }

    #[test]
    fn the_fingerprint_encoding_is_injective_where_separators_were_not() -> TestResult {
        // Fields that run into each other: the name's end moved into a
        // section id, or a separator byte inside a name.
        let mut a = effective_event(
            r#"{"name":"ab","sections":[{"sectionId":"c","rows":[{"row":"1","count":1}]}]}"#,
        )?;
        let mut b = effective_event(
            r#"{"name":"a","sections":[{"sectionId":"bc","rows":[{"row":"1","count":1}]}]}"#,
        )?;
        assert_ne!(a.plan_fingerprint(), b.plan_fingerprint());
        // Names the API refuses still encode apart (the encoding does not
        // lean on validation): NUL and a quote inside a name.
        a.name = "x\u{0}S".into();
        b.name = "x".into();
        b.sections[0].section_id = SectionId::parse("S")?;
        assert_ne!(a.plan_fingerprint(), b.plan_fingerprint());
        a.name = "x\",\"holdSeconds\":1".into();
        assert_ne!(a.plan_fingerprint(), b.plan_fingerprint());
        Ok(())
    }

    #[test]
    fn names_are_one_to_two_hundred_characters_without_control_characters() -> TestResult {
        for good in [
            "G",
            "Gala – Früh",
            &"é".repeat(200),
            " padded ",
            "tab\u{80}ok",
        ] {
            assert!(check_event_name(good).is_ok(), "{good:?}");
        }
        for bad in [
            "",
            "   ",
            &"a".repeat(201),
            "a\u{0}b",
            "line\nbreak",
            "tab\tname",
            "del\u{7f}",
            "\u{1f}",
        ] {
            let err = check_event_name(bad)
                .err()
                .ok_or(format!("{bad:?} accepted"))?;
            assert_eq!(err.code(), "bad-request", "{bad:?}");
        }
        assert!(plan(r#"{"name":"bad\u0007bell","sections":[{"sectionId":"A","rows":[{"row":"1","count":1}]}]}"#)?.seats().is_err());
        Ok(())
    }
}
