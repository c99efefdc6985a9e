//! Each section's summary of its rows' free runs (`RUNS#…`): written by the
//! seat-map projector from each projection write, read by best-available
//! to refuse, or to skip rows, without reading seats (docs/API.md,
//! "best-available's bounds"; the rule itself is `domain::RowRuns`).
//!
//! A summary is computed from one projection write's whole item and
//! carries that item's version: two projector batches racing on a row
//! write their summaries in either order, and only the later version's
//! stands, so a summary never shows a row as it was before a write the
//! projection already holds.

use super::errors::{is_condition_failure, sdk_error, StoreError};
use super::items;
use super::items::seat_map::{
    runs_key, MAP_VERSION, RUNS_LONGEST, RUNS_UNTIL, SEAT_MAP_ITEM_SEATS,
};
use super::schema::PK;
use super::seat_map::{row_projection, SeatChange, BATCH_GET_KEYS};
use super::sold_out::PartShape;
use super::value::{Fields, Item};
use super::Store;
use crate::domain::{Event, EventRef, Millis, RowId, RowRuns, SeatId, SectionId};
use crate::error::Error;
use aws_sdk_dynamodb::types::AttributeValue;
use std::collections::HashMap;

/// Every single-part row's runs, by (section, row), as one read found them.
pub type SectionRuns = HashMap<(SectionId, RowId), RowRuns>;

impl Store {
    /// Writes the runs of the row `change`'s seat is in, as the projection
    /// item `item` (just written) shows them, unless a later write's are
    /// there. Rows of more than one projection item are not summarised:
    /// a run may cross their items, and best-available reads them.
    pub(super) async fn note_row_runs(
        &self,
        change: &SeatChange,
        shape: &PartShape,
        item: &Item,
    ) -> Result<(), StoreError> {
        let Some((row, number)) = change.seat.row_and_number() else {
            return Ok(());
        };
        if number > SEAT_MAP_ITEM_SEATS || shape.part_seats >= SEAT_MAP_ITEM_SEATS {
            return Ok(());
        }
        let Some(version) = item
            .get(MAP_VERSION)
            .and_then(|v| v.as_n().ok())
            .and_then(|n| n.parse::<i64>().ok())
        else {
            return Ok(());
        };
        let runs = RowRuns::of(shape.part_seats, &row_projection(item), crate::world::now());
        let request = self
            .client
            .update_item()
            .table_name(&*self.table)
            .set_key(Some(runs_key(&change.event, &shape.section)));
        match items::seat_map::row_runs(row, version, runs)
            .on_update_item(request)
            .send()
            .await
        {
            Ok(_) => Ok(()),
            // A later write's summary is there already.
            Err(e) if is_condition_failure(&e) => Ok(()),
            Err(e) => Err(sdk_error("UpdateItem", e)),
        }
    }

    /// The run summaries of every seated section of `event` (eventually
    /// consistent, one BatchGetItem per 100 sections; an instance reuses
    /// them for its seat-map time: with the stream's lag, at most the
    /// contract's 5 s old).
    pub async fn section_runs(&self, event: &Event) -> Result<SectionRuns, Error> {
        let event_ref = EventRef::of(&event.event_id);
        let seated: Vec<_> = event.sections.iter().filter(|s| !s.is_ga()).collect();
        let mut found = Vec::new();
        for batch in seated.chunks(BATCH_GET_KEYS) {
            let keys = batch
                .iter()
                .map(|s| runs_key(&event_ref, &s.section_id))
                .collect();
            found.extend(self.batch_get(keys, false).await?);
        }
        let mut runs = SectionRuns::new();
        for section in seated {
            let key = runs_key(&event_ref, &section.section_id);
            let Some(item) = found.iter().find(|item| item.get(PK) == key.get(PK)) else {
                continue;
            };
            for row in &section.rows {
                let name = SeatId::row_key(&section.section_id, &row.row);
                if let Some(summary) = item.get(&name).and_then(row_runs) {
                    runs.insert((section.section_id.clone(), row.row.clone()), summary);
                }
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
        until: fields.opt_i64(RUNS_UNTIL).ok()?.map(Millis),
    })
}
