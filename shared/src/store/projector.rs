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
        // Per projection item, in first-seen order: seat number -> (state,
        // sequence), and the change that tells most of the part's shape.
        type Seats<'a> = std::collections::BTreeMap<u32, (Option<ProjectedSeat>, &'a str)>;
        let mut items: Vec<(Item, Seats, &SeatChange)> = Vec::new();
        for change in changes {
            let Some((row, number)) = change.seat.row_and_number() else {
                continue;
            };
            let key = seat_map_key(&change.event, row, number);
            let i = match items.iter().position(|(k, _, _)| *k == key) {
                Some(i) => {
                    if tells_more(change, items[i].2) {
                        items[i].2 = change;
                    }
                    i
                }
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
        for (key, seats, shaped) in items {
            let sold = seats
                .values()
                .any(|(state, _)| *state == Some(ProjectedSeat::Sold));
            let seats: Vec<_> = seats.into_iter().collect();
            for part in seats.chunks(SEATS_PER_UPDATE) {
                let sequences = part.iter().map(|(_, (_, seq))| (*seq).to_owned());
                let numbers: Vec<u32> = part.iter().map(|(number, _)| *number).collect();
                let runs_item = shaped.shape.as_ref().and_then(|shape| shape.runs_item);
                let noted = match self.project_part(key.clone(), part, runs_item).await {
                    Ok(written) => {
                        runs.note(shaped, &written, &numbers, sequences.clone().collect());
                        self.after_projection(shaped, &key, &written.after, sold)
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

/// Whether `change` tells more of its part's shape than `known` (changes
/// to one projection item): a shape over none, and one naming the row's
/// summary item over one that does not (a row created across the deploy
/// that added it has seats of both kinds). Pure.
fn tells_more(change: &SeatChange, known: &SeatChange) -> bool {
    let rank = |c: &SeatChange| match &c.shape {
        None => 0,
        Some(shape) if shape.runs_item.is_none() => 1,
        Some(_) => 2,
    };
    rank(change) > rank(known)
}

#[cfg(test)]
mod tests {
    use super::super::free_runs::tests::change;
    use super::*;

    #[test]
    fn a_parts_shape_comes_from_the_change_that_tells_most_of_it() {
        let (none, unnamed, named) = (
            change(false, None),
            change(true, None),
            change(true, Some(2)),
        );
        for (change, known, more) in [
            (&named, &unnamed, true),
            (&named, &none, true),
            (&unnamed, &none, true),
            (&unnamed, &named, false),
            (&none, &unnamed, false),
            (&named, &named, false),
        ] {
            assert_eq!(tells_more(change, known), more);
        }
    }
}
