//! What is sold out, for good: nothing sold is ever released (a sale is
//! final; a payment that cannot complete is refunded, its seats never
//! sold), so "every seat of this section is sold" once true stays true.
//! That makes it a signal a refusal may rest on at any age: best-available
//! and hold-ga answer a sold-out section without reading it (docs/API.md,
//! "Under a crowd"), and no hold's expiry can make it wrong (only sold
//! seats and places count, never holds).
//!
//! The stream builds it (project-seat-map): each seat carries how many
//! seats its seat-map part has and how many parts its section has (each
//! general-admission bucket, how many buckets its section has). When a
//! part's projection shows every seat sold, or a bucket's record every
//! place sold, the part joins its section's set of full parts; when that
//! set is whole, the section joins the event's `soldOut` set. Both are
//! set additions, so a record delivered twice adds nothing.

use super::errors::{sdk_error, StoreError};
use super::items;
use super::items::bucket::{CAPACITY, FREE, GA_PK_PREFIX, SOLD};
use super::items::seat::{PART_SEATS, ROW_WHEELCHAIR, RUNS_ITEM};
use super::items::seat_map::{
    section_progress_key, sold_out_key, FULL_PARTS, SEAT_MAP_ITEM_SEATS, SOLD_OUT,
};
use super::schema::{PK, SECTION_ID, SECTION_PARTS};
use super::value::{Fields, Item};
use super::Store;
use crate::domain::{Event, EventId, EventRef, RowId, RunsLayout, SeatSpec, SectionId};
use crate::error::Error;
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue};
use std::collections::{HashMap, HashSet};

/// How long an instance reuses the sold-out sections it read: a section
/// in the set is sold out for good; one not in it may have sold out since.
pub const SOLD_OUT_CACHE_MS: i64 = 1_000;

/// The seat-map parts of an event's sections and their rows' run-summary
/// items, for the attributes each seat is created with.
#[derive(Debug, Default)]
pub(super) struct MapShape {
    /// Per row: its seats, its run-summary item and its wheelchair spaces.
    rows: HashMap<(SectionId, RowId), (u32, u32, Vec<u32>)>,
    section_parts: HashMap<SectionId, u32>,
}

impl MapShape {
    pub(super) fn of(event: &Event) -> Self {
        let mut shape = Self::default();
        for (section, row, item) in RunsLayout::of(&event.sections).place(&event.sections) {
            shape.rows.insert(
                (section.section_id.clone(), row.row.clone()),
                (row.count, item, row.wheelchair.clone()),
            );
            let parts = shape
                .section_parts
                .entry(section.section_id.clone())
                .or_default();
            *parts = parts.saturating_add(row.count.div_ceil(SEAT_MAP_ITEM_SEATS));
        }
        shape
    }

    /// The attributes a seat is created with: its part's seats, its
    /// section's parts and, in a row the run summaries cover, its row's
    /// summary item and wheelchair spaces (if any).
    pub(super) fn seat_attributes(&self, seat: &SeatSpec) -> Vec<(String, AttributeValue)> {
        let none = (0, 0, Vec::new());
        let (count, runs_item, wheelchair) = self
            .rows
            .get(&(seat.section_id.clone(), seat.row.clone()))
            .unwrap_or(&none);
        let (count, runs_item) = (*count, *runs_item);
        let first = (seat.number.saturating_sub(1) / SEAT_MAP_ITEM_SEATS) * SEAT_MAP_ITEM_SEATS;
        let part_seats = count.saturating_sub(first).min(SEAT_MAP_ITEM_SEATS);
        let parts = self
            .section_parts
            .get(&seat.section_id)
            .copied()
            .unwrap_or(0);
        let mut attributes = vec![
            (PART_SEATS.into(), AttributeValue::N(part_seats.to_string())),
            (SECTION_PARTS.into(), AttributeValue::N(parts.to_string())),
        ];
        if count < SEAT_MAP_ITEM_SEATS {
            attributes.push((RUNS_ITEM.into(), AttributeValue::N(runs_item.to_string())));
            if !wheelchair.is_empty() {
                let numbers = wheelchair.iter().map(u32::to_string).collect();
                attributes.push((ROW_WHEELCHAIR.into(), AttributeValue::Ns(numbers)));
            }
        }
        attributes
    }
}

/// A seat-map part's place in its section, from a seat's stream image
/// (`None` for a seat created before these attributes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartShape {
    pub section: SectionId,
    pub part_seats: u32,
    pub section_parts: u32,
    /// The row's run-summary item, when the summaries cover its row (a
    /// row of under 1,000 seats, created since the summaries were split).
    pub runs_item: Option<u32>,
    /// The row's wheelchair spaces (seat numbers), as its seats carry
    /// them ([`ROW_WHEELCHAIR`]).
    pub wheelchair: Vec<u32>,
}

impl PartShape {
    /// From a stream record's `NewImage` (DynamoDB's wire JSON).
    pub(super) fn of_image(image: &serde_json::Value) -> Option<Self> {
        let number = |attr: &str| image[attr]["N"].as_str()?.parse::<u32>().ok();
        Some(Self {
            section: SectionId::parse(image[SECTION_ID]["S"].as_str()?).ok()?,
            part_seats: number(PART_SEATS)?,
            section_parts: number(SECTION_PARTS)?,
            runs_item: number(RUNS_ITEM),
            wheelchair: image[ROW_WHEELCHAIR]["NS"]
                .as_array()
                .map(|numbers| {
                    let number = |n: &serde_json::Value| n.as_str()?.parse().ok();
                    numbers.iter().filter_map(number).collect()
                })
                .unwrap_or_default(),
        })
    }
}

/// A general-admission bucket a stream record shows full: every place
/// sold. Pure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FullBucket {
    pub event: EventRef,
    pub section: SectionId,
    /// The bucket's own key, the member of its section's set.
    pub bucket: String,
    pub section_parts: u32,
    pub sequence: String,
}

/// The event whose general-admission bucket a stream record changed, if
/// it is a bucket's, with the record's sequence number. Pure.
pub fn bucket_record(record: &serde_json::Value) -> Option<(EventRef, String)> {
    let data = &record["dynamodb"];
    let pk = data["Keys"][PK]["S"].as_str()?;
    let event = EventRef::from_hex(pk.strip_prefix(GA_PK_PREFIX)?.split('#').next()?)?;
    let sequence = data["SequenceNumber"].as_str().unwrap_or_default();
    Some((event, sequence.to_owned()))
}

/// Whether a bucket's stream record gave places back: its `free` rose
/// (a drop, a cancel, a decline, a release; a take that reclaimed more
/// expired places than it took too, whose places the map already showed
/// free). Pure.
pub fn bucket_freed(record: &serde_json::Value) -> bool {
    let data = &record["dynamodb"];
    let free = |image: &str| -> Option<i64> { data[image][FREE]["N"].as_str()?.parse().ok() };
    matches!((free("OldImage"), free("NewImage")), (Some(old), Some(new)) if new > old)
}

/// The full bucket a stream record describes, if it is one.
pub fn full_bucket(record: &serde_json::Value) -> Option<FullBucket> {
    let (event, sequence) = bucket_record(record)?;
    let data = &record["dynamodb"];
    let pk = data["Keys"][PK]["S"].as_str()?;
    let image = &data["NewImage"];
    let number = |attr: &str| image[attr]["N"].as_str()?.parse::<u32>().ok();
    let (sold, capacity) = (number(SOLD)?, number(CAPACITY)?);
    if sold < capacity {
        return None;
    }
    Some(FullBucket {
        event,
        section: SectionId::parse(image[SECTION_ID]["S"].as_str()?).ok()?,
        bucket: pk.rsplit('#').next()?.to_owned(),
        section_parts: number(SECTION_PARTS)?,
        sequence,
    })
}

/// Whether a projection item, as written, shows all `part_seats` sold.
pub(super) fn part_is_sold_out(item: &Item, part_seats: u32) -> bool {
    let sold = item
        .iter()
        .filter(|(name, value)| {
            name.strip_prefix('s')
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                && value.as_s().is_ok_and(|v| v == "S")
        })
        .count();
    part_seats > 0 && sold >= part_seats as usize
}

/// Sections with more seat-map parts than this are never tracked: the set
/// of a section's full parts stays far inside DynamoDB's 400 KB item (a
/// part's name is at most ~140 bytes). Such a section is answered by the
/// exact path, as before the signal existed.
pub(super) const MAX_TRACKED_PARTS: u32 = 2_000;

impl Store {
    /// After a projection write (`item`, as written, at `key`) that sold a
    /// seat: if its part is now all sold, notes it.
    pub(super) async fn note_if_sold_out(
        &self,
        event: &EventRef,
        key: &Item,
        item: &Item,
        shape: &PartShape,
    ) -> Result<(), StoreError> {
        if shape.section_parts > MAX_TRACKED_PARTS || !part_is_sold_out(item, shape.part_seats) {
            return Ok(());
        }
        let Some(part) = Fields::new(key).opt_s(PK) else {
            return Ok(());
        };
        // The part's name: its key after the event's (`{row}#{n}`).
        let part = part.splitn(3, '#').nth(2).unwrap_or(part);
        self.note_full_part(event, &shape.section, part, shape.section_parts)
            .await
    }

    /// Adds `part` to `section`'s full parts and, once all
    /// `section_parts` are there, the section to the event's sold-out set.
    pub(super) async fn note_full_part(
        &self,
        event: &EventRef,
        section: &SectionId,
        part: &str,
        section_parts: u32,
    ) -> Result<(), StoreError> {
        let request = self
            .client
            .update_item()
            .table_name(&*self.table)
            .set_key(Some(section_progress_key(event, section)))
            .return_values(ReturnValue::UpdatedNew);
        let out = items::seat_map::full_part(part)
            .on_update_item(request)
            .send()
            .await
            .map_err(|e| sdk_error("UpdateItem", e))?;
        let full = out
            .attributes()
            .and_then(|a| a.get(FULL_PARTS))
            .and_then(|v| v.as_ss().ok())
            .map_or(0, Vec::len);
        if full < section_parts as usize {
            return Ok(());
        }
        let request = self
            .client
            .update_item()
            .table_name(&*self.table)
            .set_key(Some(sold_out_key(event)));
        items::seat_map::sold_out(section.as_str())
            .on_update_item(request)
            .send()
            .await
            .map_err(|e| sdk_error("UpdateItem", e))?;
        Ok(())
    }

    /// Notes each full bucket; returns the sequence numbers of those that
    /// could not be noted (to report as batch item failures).
    pub async fn note_full_buckets(&self, buckets: &[FullBucket]) -> Vec<String> {
        let mut failed = Vec::new();
        for b in buckets {
            let noted = self
                .note_full_part(&b.event, &b.section, &b.bucket, b.section_parts)
                .await;
            if let Err(e) = noted {
                tracing::error!(error = %crate::error::chain(&e), "sold out: noting a full bucket failed");
                failed.push(b.sequence.clone());
            }
        }
        failed
    }

    /// The sections of `event` the stream has seen sold out (eventually
    /// consistent; an instance reuses it for [`SOLD_OUT_CACHE_MS`]).
    pub async fn sold_out_sections(&self, event: &EventId) -> Result<HashSet<SectionId>, Error> {
        let item = self
            .get_item(sold_out_key(&EventRef::of(event)), false)
            .await?;
        let members = match &item {
            Some(item) => Fields::new(item).string_set(SOLD_OUT)?,
            None => Vec::new(),
        };
        Ok(members
            .iter()
            .filter_map(|id| SectionId::parse(id).ok())
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{RowPlan, SectionPlan};

    #[test]
    fn each_seat_knows_its_part_and_its_sections_parts() -> Result<(), Box<dyn std::error::Error>> {
        let row = |id: &str, count| -> Result<RowPlan, Box<dyn std::error::Error>> {
            Ok(RowPlan::plain(RowId::parse(id)?, count))
        };
        let spaces = RowPlan {
            wheelchair: vec![2, 7],
            ..row("3", 10)?
        };
        let event = Event {
            event_id: EventId::parse("e")?,
            name: "E".into(),
            hold_seconds: 60,
            seat_count: 2_560,
            buyer_limit: None,
            buyer_key: None,
            sections: vec![SectionPlan {
                section_id: SectionId::parse("A")?,
                rows: vec![row("1", 2_500)?, row("2", 50)?, spaces],
                capacity: None,
            }],
        };
        let shape = MapShape::of(&event);
        let seat = |row: &str, number| -> Result<SeatSpec, Box<dyn std::error::Error>> {
            Ok(SeatSpec {
                seat_id: crate::domain::SeatId::parse(&format!("A-{row}-{number}"))?,
                section_id: SectionId::parse("A")?,
                row: RowId::parse(row)?,
                number,
                ordinal: 0,
            })
        };
        let n = |v: &AttributeValue| v.as_n().map(String::as_str).unwrap_or("").to_owned();
        // (row, number, seats in its part, parts in the section: 3 + 1 + 1,
        // its run-summary item: none for a row of 1,000 seats or more)
        for (row, number, part, parts, runs) in [
            ("1", 1, "1000", "5", None),
            ("1", 1_000, "1000", "5", None),
            ("1", 2_001, "500", "5", None),
            ("1", 2_500, "500", "5", None),
            ("2", 7, "50", "5", Some("1")),
        ] {
            let attrs: HashMap<_, _> = shape
                .seat_attributes(&seat(row, number)?)
                .into_iter()
                .collect();
            assert_eq!(
                (
                    n(&attrs[PART_SEATS]),
                    n(&attrs[SECTION_PARTS]),
                    attrs.get(RUNS_ITEM).map(n)
                ),
                (part.into(), parts.into(), runs.map(str::to_owned)),
                "{row}-{number}"
            );
            assert!(!attrs.contains_key(ROW_WHEELCHAIR), "{row}: no spaces");
        }
        // A row with wheelchair spaces: each seat names them, and the
        // projector reads them back from its image.
        let attrs: HashMap<_, _> = shape.seat_attributes(&seat("3", 4)?).into_iter().collect();
        let spaces = attrs.get(ROW_WHEELCHAIR).and_then(|v| v.as_ns().ok());
        assert_eq!(spaces, Some(&vec!["2".to_owned(), "7".to_owned()]));
        let image = serde_json::json!({
            SECTION_ID: {"S": "A"}, PART_SEATS: {"N": "10"}, SECTION_PARTS: {"N": "4"},
            RUNS_ITEM: {"N": "2"}, ROW_WHEELCHAIR: {"NS": ["7", "2"]}});
        let part = PartShape::of_image(&image).ok_or("a shape")?;
        assert_eq!(part.wheelchair, [7, 2]);
        Ok(())
    }

    #[test]
    fn a_part_is_sold_out_when_every_seat_shows_sold() {
        let item = |values: &[(&str, &str)]| -> Item {
            values
                .iter()
                .map(|(k, v)| ((*k).to_owned(), AttributeValue::S((*v).to_owned())))
                .chain([("PK".to_owned(), AttributeValue::S("MAP#x".into()))])
                .collect()
        };
        assert!(part_is_sold_out(&item(&[("s1", "S"), ("s2", "S")]), 2));
        assert!(
            !part_is_sold_out(&item(&[("s1", "S"), ("s2", "H1700000000000")]), 2),
            "a hold is not a sale"
        );
        assert!(
            !part_is_sold_out(&item(&[("s1", "S")]), 2),
            "a seat still available"
        );
        assert!(
            !part_is_sold_out(&item(&[("sx", "S"), ("s1", "S")]), 2),
            "only seat attributes count"
        );
        assert!(
            !part_is_sold_out(&item(&[]), 0),
            "a part without seats proves nothing"
        );
    }

    #[test]
    fn a_bucket_record_is_full_only_when_every_place_is_sold() -> Result<(), &'static str> {
        let record = |sold: u32, parts: Option<u32>| {
            let mut image = serde_json::json!({
                "sectionId": {"S": "FLOOR"}, "capacity": {"N": "20"}, "sold": {"N": sold.to_string()},
            });
            if let Some(parts) = parts {
                image["sectionParts"] = serde_json::json!({"N": parts.to_string()});
            }
            serde_json::json!({"dynamodb": {
                "Keys": {"PK": {"S": "GA#0123456789abcdef0123#FLOOR#7"}},
                "NewImage": image, "SequenceNumber": "42",
            }})
        };
        let full = full_bucket(&record(20, Some(1_000))).ok_or("a full bucket")?;
        assert_eq!(
            (
                full.section.as_str(),
                full.bucket.as_str(),
                full.section_parts
            ),
            ("FLOOR", "7", 1_000)
        );
        assert_eq!(full.sequence, "42");
        assert!(
            full_bucket(&record(19, Some(1_000))).is_none(),
            "one place left"
        );
        assert!(
            full_bucket(&record(20, None)).is_none(),
            "a bucket from before the attribute"
        );
        Ok(())
    }

    #[test]
    fn a_bucket_record_frees_places_only_when_its_free_rose() {
        let record = |old: Option<u32>, new: u32| {
            let mut data = serde_json::json!({"NewImage": {"free": {"N": new.to_string()}}});
            if let Some(old) = old {
                data["OldImage"] = serde_json::json!({"free": {"N": old.to_string()}});
            }
            serde_json::json!({ "dynamodb": data })
        };
        assert!(bucket_freed(&record(Some(3), 5)), "given back");
        assert!(!bucket_freed(&record(Some(5), 3)), "taken");
        assert!(!bucket_freed(&record(Some(5), 5)), "sold from a hold");
        assert!(!bucket_freed(&record(None, 20)), "written with the event");
    }
}
