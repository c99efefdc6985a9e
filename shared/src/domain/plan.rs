//! An event's plan: create-event's body, checked and expanded into seats in
//! plan order.

use std::collections::HashSet;

use serde::Deserialize;

use super::{EventId, RowId, SeatId, SeatState, SectionId, HOLD_SECONDS_RANGE, MAX_EVENT_NAME_LEN, MAX_EVENT_SEATS, MAX_SECTIONS};
use crate::error::Error;

/// An event's metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub event_id: EventId,
    pub name: String,
    pub hold_seconds: u32,
    pub seat_count: u32,
    /// Section ids in plan order.
    pub sections: Vec<SectionId>,
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

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SectionPlan {
    pub section_id: SectionId,
    pub rows: Vec<RowPlan>,
}

#[derive(Debug, Clone, Deserialize)]
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
        let name = self.name.trim();
        if name.is_empty() || self.name.chars().count() > MAX_EVENT_NAME_LEN {
            return Err(Error::BadRequest(format!(
                "name must be 1-{MAX_EVENT_NAME_LEN} characters"
            )));
        }
        if let Some(h) = self.hold_seconds {
            check_hold_seconds(h)?;
        }
        if self.sections.is_empty() || self.sections.len() > MAX_SECTIONS {
            return Err(Error::BadRequest(format!("an event has 1-{MAX_SECTIONS} sections")));
        }
        let mut total: u64 = 0;
        for section in &self.sections {
            if section.rows.is_empty() {
                return Err(Error::BadRequest(format!(
                    "section {} has no rows",
                    section.section_id
                )));
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
        let p = plan(r#"{"name":"Gala","sections":[{"sectionId":"A","rows":[{"row":"1","count":2},{"row":"2","count":1}]}]}"#)?;
        let ids: Vec<_> = p.seats()?.into_iter().map(|s| s.seat_id.to_string()).collect();
        assert_eq!(ids, ["A-1-1", "A-1-2", "A-2-1"]);
        Ok(())
    }

    #[test]
    fn plan_rejects_colliding_and_repeated_seats() -> TestResult {
        let p = plan(r#"{"name":"G","sections":[{"sectionId":"A","rows":[{"row":"1-2","count":1}]},{"sectionId":"A-1","rows":[{"row":"2","count":1}]}]}"#)?;
        assert!(p.seats().is_err());
        let p = plan(r#"{"name":"G","sections":[{"sectionId":"A","rows":[{"row":"1","count":1},{"row":"1","count":1}]}]}"#)?;
        assert!(p.seats().is_err());
        Ok(())
    }

    #[test]
    fn plan_bounds() -> TestResult {
        let too_many = r#"{"name":"G","sections":[{"sectionId":"A","rows":[{"row":"1","count":20001}]}]}"#;
        assert!(plan(too_many)?.seats().is_err());
        let exactly = r#"{"name":"G","sections":[{"sectionId":"A","rows":[{"row":"1","count":20000}]}]}"#;
        assert_eq!(plan(exactly)?.seats()?.len(), 20_000);
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
        assert!(plan(r#"{"name":"G","sections":[{"sectionId":"A","rows":[{"row":"1","count":-1}]}]}"#).is_err());
        assert!(plan(r#"{"name":"G","sections":[{"sectionId":"A#","rows":[{"row":"1","count":1}]}]}"#).is_err());
        Ok(())
    }

    #[test]
    fn plan_seats_carry_their_plan_order() -> TestResult {
        let p = plan(r#"{"name":"G","sections":[{"sectionId":"B","rows":[{"row":"10","count":2},{"row":"9","count":1}]},{"sectionId":"A","rows":[{"row":"1","count":1}]}]}"#)?;
        let got: Vec<_> = p.seats()?.into_iter().map(|s| (s.seat_id.to_string(), s.ordinal)).collect();
        let want: Vec<(String, u32)> = vec![("B-10-1".into(), 0), ("B-10-2".into(), 1), ("B-9-1".into(), 2), ("A-1-1".into(), 3)];
        assert_eq!(got, want);
        Ok(())
    }
}
