//! project-seat-map's work on one batch of seat changes: the projection
//! written (`seat_map.rs`), then what its writes tell the rest: each
//! row's free runs (`free_runs.rs`, one write per summary item) and, after
//! a sale, whether a part is sold out (`sold_out.rs`).

use super::errors::StoreError;
use super::free_runs::RunsNotes;
use super::items::seat_map::seat_map_key;
use super::seat_map::{SeatChange, SEATS_PER_UPDATE};
use super::value::Item;
use super::Store;
use crate::domain::ProjectedSeat;

impl Store {
    /// Folds seat changes (in stream order) into the projection: one
    /// `UpdateItem` per projection item touched, the last change of each
    /// seat winning; then one write per run-summary item whose rows' runs
    /// changed. Returns the sequence numbers of the changes that could not
    /// be written (to report as batch item failures).
    pub async fn project_seat_changes(&self, changes: &[SeatChange]) -> Vec<String> {
        // Per projection item, in first-seen order: seat number -> (state, sequence).
        type Seats<'a> = std::collections::BTreeMap<u32, (Option<ProjectedSeat>, &'a str)>;
        let mut items: Vec<(Item, Seats, &SeatChange)> = Vec::new();
        for change in changes {
            let Some((row, number)) = change.seat.row_and_number() else {
                continue;
            };
            let key = seat_map_key(&change.event, row, number);
            let i = match items.iter().position(|(k, _, _)| *k == key) {
                Some(i) => i,
                None => {
                    items.push((key, Default::default(), change));
                    items.len() - 1
                }
            };
            items[i]
                .1
                .insert(number, (change.state, change.sequence.as_str()));
        }
        let mut failed = Vec::new();
        let mut runs = RunsNotes::default();
        for (key, seats, first) in items {
            let sold = seats
                .values()
                .any(|(state, _)| *state == Some(ProjectedSeat::Sold));
            let seats: Vec<_> = seats.into_iter().collect();
            for part in seats.chunks(SEATS_PER_UPDATE) {
                let sequences = part.iter().map(|(_, (_, seq))| (*seq).to_owned());
                let numbers: Vec<u32> = part.iter().map(|(number, _)| *number).collect();
                let noted = match self.project_part(key.clone(), part).await {
                    Ok(written) => {
                        runs.note(first, &written, &numbers, sequences.clone().collect());
                        self.after_projection(first, &key, &written.after, sold)
                            .await
                    }
                    Err(e) => Err(e),
                };
                if let Err(e) = noted {
                    tracing::error!(error = %crate::error::chain(&e), "seat map: projection write failed");
                    failed.extend(sequences);
                }
            }
        }
        failed.extend(self.write_runs(runs).await);
        failed
    }

    /// After a sale's projection write (`item`, as written at `key`):
    /// whether its part is now sold out. Seats created before their shape
    /// was recorded do not tell.
    async fn after_projection(
        &self,
        change: &SeatChange,
        key: &Item,
        item: &Item,
        sold: bool,
    ) -> Result<(), StoreError> {
        match &change.shape {
            Some(shape) if sold => self.note_if_sold_out(&change.event, key, item, shape).await,
            _ => Ok(()),
        }
    }
}
