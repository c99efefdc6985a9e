//! An event's summaries of its rows' free runs (`RUNS#…`, spread over
//! items across its sections by `domain::RunsLayout`): written by the seat-map projector
//! once per batch for every row whose runs changed, read by best-available
//! to refuse, or to skip rows, without reading seats (docs/API.md,
//! "best-available's bounds"; the rule itself is `domain::RowRuns`).
//!
//! A summary is computed from one projection write's whole item and
//! carries that item's version, and of two summaries of one row the later
//! version's stands. A write that leaves the row's runs as they were
//! writes none (`domain::RowRuns::worth_writing` says when it still does).

use super::errors::{is_condition_failure, sdk_error, StoreError};
use super::items;
use super::items::seat::RUNS_ITEM;
use super::items::seat_map::{
    runs_key, NotedRuns, MAP_VERSION, RUNS_CLEAR, RUNS_LONGEST, RUNS_UNTIL, SEAT_MAP_ITEM_SEATS,
};
use super::schema::PK;
use super::seat_map::{row_projection, SeatChange, Written, BATCH_GET_KEYS};
use super::value::{Fields, Item};
use super::Store;
use crate::domain::{Event, EventRef, RowId, RowRuns, RunsLayout, SeatId, SectionId};
use crate::error::Error;
use aws_sdk_dynamodb::types::AttributeValue;
use std::collections::{BTreeMap, HashMap};

/// Every single-part row's runs, by (section, row), as one read found them.
pub type SectionRuns = HashMap<(SectionId, RowId), RowRuns>;

/// One summary item's rows a projector batch changed: the latest write's
/// runs of each, and the stream records behind them (to report as failed
/// if the summary cannot be written).
#[derive(Default)]
struct ItemNotes {
    key: Item,
    rows: BTreeMap<String, (NotedRuns, Vec<String>)>,
}

/// The summaries one projector batch has to write, by summary item: each
/// item written once however many of its rows' writes the batch held.
#[derive(Default)]
pub(super) struct RunsNotes {
    items: BTreeMap<String, ItemNotes>,
}

impl RunsNotes {
    /// Notes the runs of the row `change`'s seat is in, as projection
    /// write `written` left them, if its summary needs writing. The
    /// summary item is the one `change` names, else the one the
    /// projection item kept. Rows of more than one projection item are not
    /// summarised: a run may cross their items, and best-available reads
    /// them.
    pub(super) fn note(
        &mut self,
        change: &SeatChange,
        written: &Written,
        seats: &[u32],
        sequences: Vec<String>,
    ) {
        let Some(shape) = &change.shape else { return };
        let kept = || Fields::new(&written.after).u32(RUNS_ITEM).ok();
        let (Some((row, number)), Some(item)) =
            (change.seat.row_and_number(), shape.runs_item.or_else(kept))
        else {
            return;
        };
        if number > SEAT_MAP_ITEM_SEATS || shape.part_seats >= SEAT_MAP_ITEM_SEATS {
            return;
        }
        let Some(version) = Fields::new(&written.after)
            .opt_i64(MAP_VERSION)
            .ok()
            .flatten()
        else {
            return;
        };
        let now = crate::world::now();
        let runs = |item: &Item| {
            RowRuns::of(
                shape.part_seats,
                &row_projection(item),
                now,
                &shape.wheelchair,
            )
        };
        let (before, after) = (runs(&written.before), runs(&written.after));
        if !RowRuns::worth_writing(before, after, written.changed_every_seat(seats), version) {
            return;
        }
        let key = runs_key(&change.event, item);
        let Some(pk) = Fields::new(&key).opt_s(PK).map(str::to_owned) else {
            return;
        };
        let notes = self.items.entry(pk).or_insert_with(|| ItemNotes {
            key,
            rows: BTreeMap::new(),
        });
        let noted = NotedRuns {
            row: row.to_owned(),
            version,
            runs: after,
        };
        let entry = notes
            .rows
            .entry(row.to_owned())
            .or_insert_with(|| (noted.clone(), Vec::new()));
        if noted.version > entry.0.version {
            entry.0 = noted;
        }
        entry.1.extend(sequences);
    }
}

impl Store {
    /// Writes the summaries `notes` holds, one `UpdateItem` per summary
    /// item; returns the sequence numbers behind those that could not be
    /// written.
    pub(super) async fn write_runs(&self, notes: RunsNotes) -> Vec<String> {
        let mut failed = Vec::new();
        for (_, item) in notes.items {
            let rows: Vec<_> = item.rows.into_values().collect();
            let noted: Vec<NotedRuns> = rows.iter().map(|(n, _)| n.clone()).collect();
            let written = match self.write_item_runs(&item.key, &noted).await {
                // A row's later version is there (a batch delivered
                // again): each row on its own, so the others still land.
                Ok(false) if noted.len() > 1 => {
                    let mut each = Ok(false);
                    for one in &noted {
                        let one = self.write_item_runs(&item.key, std::slice::from_ref(one));
                        if let Err(e) = one.await {
                            each = Err(e);
                        }
                    }
                    each
                }
                other => other,
            };
            if let Err(e) = written {
                tracing::error!(error = %crate::error::chain(&e), "seat map: run summary write failed");
                failed.extend(rows.into_iter().flat_map(|(_, sequences)| sequences));
            }
        }
        failed
    }

    /// One summary item's rows written, each over a lower version only:
    /// `false` when a row's later version is there (nothing written).
    async fn write_item_runs(&self, key: &Item, rows: &[NotedRuns]) -> Result<bool, StoreError> {
        let request = self
            .client
            .update_item()
            .table_name(&*self.table)
            .set_key(Some(key.clone()));
        match items::seat_map::rows_runs(rows)
            .on_update_item(request)
            .send()
            .await
        {
            Ok(_) => Ok(true),
            Err(e) if is_condition_failure(&e) => Ok(false),
            Err(e) => Err(sdk_error("UpdateItem", e)),
        }
    }

    /// The run summaries of every seated section of `event` (eventually
    /// consistent, one BatchGetItem per 100 summary items; an instance
    /// reuses them for its seat-map time: with the stream's lag, at most
    /// the contract's 5 s old).
    pub async fn section_runs(&self, event: &Event) -> Result<SectionRuns, Error> {
        let event_ref = EventRef::of(&event.event_id);
        let layout = RunsLayout::of(&event.sections);
        let keys: Vec<Item> = (0..layout.items())
            .map(|item| runs_key(&event_ref, item))
            .collect();
        // Each item found, by its number: what `place` names a row's by.
        let numbers: HashMap<&str, u32> = (0..)
            .zip(&keys)
            .filter_map(|(number, key)| Some((Fields::new(key).opt_s(PK)?, number)))
            .collect();
        let mut found: HashMap<u32, Item> = HashMap::new();
        for batch in keys.chunks(BATCH_GET_KEYS) {
            for item in self.batch_get(batch.to_vec(), false).await? {
                let number = Fields::new(&item)
                    .opt_s(PK)
                    .and_then(|pk| numbers.get(pk).copied());
                if let Some(number) = number {
                    found.insert(number, item);
                }
            }
        }
        let mut runs = SectionRuns::new();
        for (section, row, number) in layout.place(&event.sections) {
            let Some(item) = found.get(&number) else {
                continue;
            };
            let name = SeatId::row_key(&section.section_id, &row.row);
            if let Some(summary) = item.get(&name).and_then(row_runs) {
                runs.insert((section.section_id.clone(), row.row.clone()), summary);
            }
        }
        Ok(runs)
    }
}

/// One row's summary as stored; `None` if it is not one.
fn row_runs(value: &AttributeValue) -> Option<RowRuns> {
    let fields = Fields::new(value.as_m().ok()?);
    Some(RowRuns {
        longest: fields.u32(RUNS_LONGEST).ok()?,
        clear: fields
            .opt_i64(RUNS_CLEAR)
            .ok()?
            .map(u32::try_from)
            .transpose()
            .ok()?,
        until: fields.opt_i64(RUNS_UNTIL).ok()?.map(crate::domain::Millis),
    })
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::domain::{EventId, Millis, ProjectedSeat};
    use crate::store::sold_out::PartShape;
    use crate::store::value::s;

    fn gala() -> EventRef {
        EventRef::of(&EventId::parse("gala").unwrap_or_else(|_| unreachable!()))
    }

    /// A hold of seat A-1-3 (a row of ten), its image naming summary item
    /// `named` (`None`: a seat created before the event-wide items), or
    /// without a shape at all.
    pub(in crate::store) fn change(shaped: bool, named: Option<u32>) -> SeatChange {
        let section = SectionId::parse("A").unwrap_or_else(|_| unreachable!());
        SeatChange {
            event: gala(),
            seat: SeatId::parse("A-1-3").unwrap_or_else(|_| unreachable!()),
            state: Some(ProjectedSeat::Held {
                expires_at: Millis(4_102_444_800_000),
            }),
            sequence: "7".into(),
            shape: shaped.then_some(PartShape {
                section,
                part_seats: 10,
                section_parts: 1,
                runs_item: named,
                wheelchair: Vec::new(),
            }),
        }
    }

    /// The row's first projection write (seat 3 held), its item keeping
    /// summary item `kept`.
    fn written(kept: Option<u32>) -> Written {
        let mut after: Item = HashMap::from([
            ("s3".to_owned(), s("H4102444800000")),
            (MAP_VERSION.to_owned(), AttributeValue::N("1".into())),
        ]);
        if let Some(item) = kept {
            after.insert(RUNS_ITEM.into(), AttributeValue::N(item.to_string()));
        }
        Written {
            before: Item::new(),
            after,
        }
    }

    #[test]
    fn a_rows_summary_item_is_the_one_its_change_names_else_the_one_its_map_kept() {
        let pk = |item: u32| {
            Fields::new(&runs_key(&gala(), item))
                .opt_s(PK)
                .map(str::to_owned)
        };
        // (the change has a shape, the item it names, the item the
        // projection item kept: the summary item noted)
        for (shaped, named, kept, noted) in [
            (true, Some(2), None, Some(2)),
            (true, Some(2), Some(2), Some(2)),
            // A seat created before the event-wide items, in a row whose
            // other seats named one: the row's summary still follows it.
            (true, None, Some(5), Some(5)),
            (true, None, None, None),
            (false, None, Some(5), None),
        ] {
            let mut notes = RunsNotes::default();
            notes.note(
                &change(shaped, named),
                &written(kept),
                &[3],
                vec!["7".into()],
            );
            let items: Vec<_> = notes.items.keys().cloned().map(Some).collect();
            let expected: Vec<_> = noted.map(pk).into_iter().collect();
            assert_eq!(items, expected, "{shaped} {named:?} {kept:?}");
            if let Some(notes) = notes.items.values().next() {
                let (runs, sequences) = &notes.rows["A-1"];
                assert_eq!((runs.runs.longest, sequences.len()), (7, 1));
            }
        }
    }
}
