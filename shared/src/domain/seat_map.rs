//! The seat map (availability): one character per seat, built from the
//! stream-fed projection of seat states. Pure: the store reads the
//! projection, the handler serves the result.

use std::collections::HashMap;

use serde::Serialize;

use super::access::WHEELCHAIR_SYMBOL;
use super::ga::Bucket;
use super::{hold_is_live, Event, Millis, RowId, SectionId};

/// A seat's state as the projection keeps it. Available seats are simply
/// absent from the projection (every seat starts available).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProjectedSeat {
    Held { expires_at: Millis },
    Sold,
}

impl ProjectedSeat {
    /// The map's character at `now`: a hold past its expiry is `A`, at
    /// once, however late the projection or the sweep.
    pub fn symbol(self, now: Millis) -> char {
        match self {
            Self::Held { expires_at } if hold_is_live(expires_at, now) => 'H',
            Self::Held { .. } => 'A',
            Self::Sold => 'S',
        }
    }
}

/// The projection of one row: seat number to state (available seats absent).
pub type RowProjection = HashMap<u32, ProjectedSeat>;

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct SeatMap {
    pub event_id: String,
    pub as_of: String,
    pub sections: Vec<SectionMap>,
}

/// A seated section's rows, or a general-admission section's counts.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct SectionMap {
    pub section_id: SectionId,
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rows: Option<Vec<RowMap>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capacity: Option<u32>,
    /// Places anyone may take: capacity − sold − live holds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub available: Option<u32>,
}

impl SeatMap {
    /// The seats and places available on the map: what a waitlist with
    /// no entries could not offer to anyone (get-waitlist's `unoffered`).
    pub fn available_units(&self) -> u64 {
        self.available(true)
    }

    /// The seats and places available but its unsold wheelchair spaces,
    /// which a sell-out counts as unavailable (API.md, "Opening").
    pub fn available_but_wheelchair_spaces(&self) -> u64 {
        self.available(false)
    }

    fn available(&self, wheelchair_spaces: bool) -> u64 {
        let counted = |row: &RowMap| {
            let access = row.access.as_deref().map(str::chars);
            let mut access = access.into_iter().flatten();
            let available = row.statuses.chars().filter(|c| {
                let space = access.next() == Some(WHEELCHAIR_SYMBOL);
                *c == 'A' && (wheelchair_spaces || !space)
            });
            available.count() as u64
        };
        let seats = |section: &SectionMap| section.rows.iter().flatten().map(counted).sum::<u64>();
        self.sections
            .iter()
            .map(|section| seats(section) + u64::from(section.available.unwrap_or(0)))
            .sum()
    }
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct RowMap {
    pub row: RowId,
    pub statuses: String,
    /// `W`, `C` or `.` per seat (`RowPlan::access_symbols`); absent on
    /// a row with no accessible seats.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access: Option<String>,
}

/// The map of `event` at `now` from the projection of its rows, keyed by
/// (section, row) (a row with no projection is all available), and the
/// buckets of its general-admission sections (a hold past its expiry is
/// available at once, as a seat's is).
pub fn seat_map(
    event: &Event,
    rows: &HashMap<(SectionId, RowId), RowProjection>,
    buckets: &HashMap<SectionId, Vec<Bucket>>,
    now: Millis,
) -> SeatMap {
    let empty = RowProjection::new();
    let sections = event
        .sections
        .iter()
        .map(|section| match section.capacity {
            Some(capacity) => SectionMap {
                section_id: section.section_id.clone(),
                kind: "ga",
                rows: None,
                capacity: Some(capacity),
                available: Some(
                    buckets
                        .get(&section.section_id)
                        .map_or(capacity, |b| b.iter().map(|b| b.available(now)).sum()),
                ),
            },
            None => SectionMap {
                section_id: section.section_id.clone(),
                kind: "seated",
                rows: Some(
                    section
                        .rows
                        .iter()
                        .map(|row| {
                            let seats = rows
                                .get(&(section.section_id.clone(), row.row.clone()))
                                .unwrap_or(&empty);
                            let statuses = (1..=row.count)
                                .map(|n| seats.get(&n).map_or('A', |s| s.symbol(now)))
                                .collect();
                            RowMap {
                                row: row.row.clone(),
                                statuses,
                                access: row.access_symbols(),
                            }
                        })
                        .collect(),
                ),
                capacity: None,
                available: None,
            },
        })
        .collect();
    SeatMap {
        event_id: event.event_id.to_string(),
        as_of: now.to_rfc3339(),
        sections,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{EventId, RowPlan, SectionPlan};

    #[test]
    fn one_character_per_seat_and_expired_holds_read_available(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let (a, r1, r2) = (
            SectionId::parse("A")?,
            RowId::parse("1")?,
            RowId::parse("2")?,
        );
        let event = Event {
            event_id: EventId::parse("e")?,
            name: "E".into(),
            hold_seconds: 60,
            seat_count: 7,
            buyer_limit: None,
            buyer_key: None,
            sections: vec![SectionPlan {
                section_id: a.clone(),
                rows: vec![
                    RowPlan {
                        wheelchair: vec![4],
                        companion: vec![5],
                        ..RowPlan::plain(r1.clone(), 5)
                    },
                    RowPlan::plain(r2.clone(), 2),
                ],
                capacity: None,
            }],
        };
        let now = Millis(10_000);
        let row1 = RowProjection::from([
            (
                2,
                ProjectedSeat::Held {
                    expires_at: Millis(10_001),
                },
            ),
            (3, ProjectedSeat::Sold),
            (
                5,
                ProjectedSeat::Held {
                    expires_at: Millis(10_000),
                },
            ),
        ]);
        let map = seat_map(
            &event,
            &HashMap::from([((a.clone(), r1), row1)]),
            &HashMap::new(),
            now,
        );
        let rows: Vec<_> = map.sections[0]
            .rows
            .iter()
            .flatten()
            .map(|r| r.statuses.as_str())
            .collect();
        assert_eq!(
            rows,
            ["AHSAA", "AA"],
            "seat 5's hold ended at `now`: available"
        );
        assert_eq!(map.as_of, now.to_rfc3339());
        let json = serde_json::to_value(&map)?;
        assert_eq!(json["sections"][0]["kind"], "seated");
        assert_eq!(
            json["sections"][0]["rows"][1],
            serde_json::json!({"row": "2", "statuses": "AA"}),
            "a row with no accessible seats has no access"
        );
        assert_eq!(json["sections"][0]["rows"][0]["access"], "...WC");
        // Seats 1, 4 (a wheelchair space) and 5 available, and row 2's two.
        assert_eq!(map.available_units(), 5);
        assert_eq!(map.available_but_wheelchair_spaces(), 4);
        Ok(())
    }
}
