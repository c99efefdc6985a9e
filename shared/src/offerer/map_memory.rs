//! What the offerer remembers of an event's seat map between looks: the
//! rows as it last read them, with its own offers' holds written in. A
//! look reads again, strongly consistent, only the rows of the parts the
//! stream counted changes in since (`domain::map_parts`), and the whole
//! map when it has none it may keep. (Read whole at every look, the map
//! was about four fifths of an offer's read units on the waitlist bench.)

use std::collections::{HashMap, HashSet};

use crate::domain::map_parts::{map_kept, moved_parts, part_of_row, part_of_seat, Noted};
use crate::domain::{Event, Millis, ProjectedSeat, RowId, RowProjection, SeatId, SectionId};
use crate::error::Error;
use crate::store::MapRead;
use crate::App;

type Rows = HashMap<(SectionId, RowId), RowProjection>;

/// One event's map as the offerer keeps it.
#[derive(Debug)]
pub(super) struct MapMemory {
    rows: Rows,
    /// Each part's count as read before its rows were.
    parts: HashMap<u8, u64>,
    /// When it was last read whole.
    read_at: Millis,
}

/// The map of `event` for a look at `now`: the one kept in `memory`, its
/// moved parts read again, if it may be kept; read whole otherwise.
/// `noted`: the stream's counts read before (`None`: a look with no
/// memory, which reads the map whole and keeps nothing).
pub(super) async fn map_for_look(
    app: &App,
    event: &Event,
    opened_at: Option<Millis>,
    memory: &mut Option<Box<MapMemory>>,
    noted: Option<&Noted>,
    now: Millis,
) -> Result<MapRead, Error> {
    let buckets = app.store.event_buckets(event, true).await?;
    let kept = memory
        .take()
        .filter(|m| map_kept(m.read_at, opened_at, now));
    let Some(noted) = noted else {
        let rows = app.store.read_seat_map(event, true).await?;
        return Ok(MapRead { rows, buckets });
    };
    let kept = match kept {
        Some(mut kept) => {
            let moved = moved_parts(&kept.parts, &noted.parts);
            if !moved.is_empty() {
                let in_moved = |s: &SectionId, r: &RowId| moved.contains(&part_of_row(s, r));
                let fresh = app.store.read_seat_map_of(event, in_moved, true).await?;
                kept.rows.retain(|(s, r), _| !in_moved(s, r));
                kept.rows.extend(fresh);
            }
            kept.parts.clone_from(&noted.parts);
            kept
        }
        None => Box::new(MapMemory {
            rows: app.store.read_seat_map(event, true).await?,
            parts: noted.parts.clone(),
            read_at: now,
        }),
    };
    let rows = kept.rows.clone();
    *memory = Some(kept);
    Ok(MapRead { rows, buckets })
}

impl MapMemory {
    /// After a look of `event` that saw `taken` taken: those its own
    /// offers hold (`held`, until when) are written in as the projection
    /// will show them; for any other (a lost offer's) its part's count is
    /// forgotten (one no read shows), so the next look reads its rows
    /// again.
    pub(super) fn after_look(
        &mut self,
        event: &Event,
        taken: &HashSet<SeatId>,
        held: &HashMap<SeatId, Millis>,
    ) {
        let rows_by_key: HashMap<String, (SectionId, RowId)> = event
            .sections
            .iter()
            .flat_map(|section| {
                section.rows.iter().map(|row| {
                    let id = (section.section_id.clone(), row.row.clone());
                    (SeatId::row_key(&id.0, &id.1), id)
                })
            })
            .collect();
        for seat in taken {
            let row = seat.row_and_number();
            let known = row.and_then(|(key, number)| Some((rows_by_key.get(key)?, number)));
            match (held.get(seat), known) {
                (Some(&expires_at), Some((row, number))) => {
                    let projection = self.rows.entry(row.clone()).or_default();
                    projection.insert(number, ProjectedSeat::Held { expires_at });
                }
                _ => {
                    if let Some(part) = part_of_seat(seat) {
                        self.parts.insert(part, u64::MAX);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::map_parts::moved_parts;

    #[test]
    fn a_look_writes_in_its_own_offers_and_forgets_lost_parts(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let plan = r#"{"name":"P","sections":[{"sectionId":"A","rows":[
            {"row":"1","count":4},{"row":"2","count":4}]}]}"#;
        let event = Event {
            event_id: crate::domain::EventId::parse("ev")?,
            name: "P".into(),
            hold_seconds: 60,
            seat_count: 8,
            buyer_limit: None,
            buyer_key: None,
            sections: serde_json::from_str::<crate::domain::EventPlan>(plan)?.sections,
        };
        let (a, one, two) = (
            SectionId::parse("A")?,
            RowId::parse("1")?,
            RowId::parse("2")?,
        );
        let counts = HashMap::from([(part_of_row(&a, &one), 3), (part_of_row(&a, &two), 5)]);
        let mut memory = MapMemory {
            rows: Rows::new(),
            parts: counts.clone(),
            read_at: Millis(0),
        };
        let (mine, lost) = (SeatId::parse("A-1-2")?, SeatId::parse("A-2-4")?);
        let taken = HashSet::from([mine.clone(), lost.clone()]);
        let held = HashMap::from([(mine, Millis(90_000))]);
        memory.after_look(&event, &taken, &held);
        let row = memory.rows.get(&(a.clone(), one.clone()));
        let want = ProjectedSeat::Held {
            expires_at: Millis(90_000),
        };
        assert_eq!(row.and_then(|r| r.get(&2)), Some(&want), "its offer, held");
        assert!(!memory.rows.contains_key(&(a.clone(), two.clone())));
        // The lost seat's part reads as moved at the next look, whatever
        // the stream counts; the offer's own does not.
        let moved = moved_parts(&memory.parts, &counts);
        assert!(moved.contains(&part_of_row(&a, &two)), "{moved:?}");
        if part_of_row(&a, &one) != part_of_row(&a, &two) {
            assert!(!moved.contains(&part_of_row(&a, &one)), "{moved:?}");
        }
        Ok(())
    }
}
