//! What the offerer remembers of an event's seat map between looks: the
//! rows as it last read them, with its own offers' holds written in. A
//! look reads again, strongly consistent, only the rows of the parts the
//! stream counted changes in since (`domain::map_parts`), and the whole
//! map when it has none it may keep: the map read whole was most of an
//! offer's read units (DESIGN.md, "The map between looks").

use std::collections::{BTreeSet, HashMap, HashSet};

use crate::domain::map_parts::{map_kept, moved_parts, part_of_row, part_of_seat, Noted};
use crate::domain::{Event, Millis, ProjectedSeat, RowId, SeatId, SectionId};
use crate::error::Error;
use crate::store::{MapRead, Rows};
use crate::App;

/// One event's map as the offerer keeps it.
#[derive(Debug)]
pub(super) struct MapMemory {
    rows: Rows,
    /// Each part's count as read before its rows were.
    parts: HashMap<u8, u64>,
    /// Parts to read again whatever their counts say: a lost offer found
    /// a seat of theirs taken that the memory shows free.
    forgotten: BTreeSet<u8>,
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
    // Taken first: a read that fails leaves nothing kept.
    let kept = memory
        .take()
        .filter(|m| map_kept(m.read_at, opened_at, now));
    let buckets = app.store.event_buckets(event, true).await?;
    let Some(noted) = noted else {
        let rows = app.store.read_seat_map(event, true).await?;
        return Ok(MapRead { rows, buckets });
    };
    let kept = match kept {
        Some(mut kept) => {
            let moved = moved_parts(&kept.parts, &kept.forgotten, &noted.parts);
            if !moved.is_empty() {
                let in_moved = |s: &SectionId, r: &RowId| moved.contains(&part_of_row(s, r));
                let fresh = app.store.read_seat_map_of(event, in_moved, true).await?;
                kept.rows.retain(|(s, r), _| !in_moved(s, r));
                kept.rows.extend(fresh);
            }
            kept.parts.clone_from(&noted.parts);
            kept.forgotten.clear();
            kept
        }
        None => Box::new(MapMemory {
            rows: app.store.read_seat_map(event, true).await?,
            parts: noted.parts.clone(),
            forgotten: BTreeSet::new(),
            read_at: now,
        }),
    };
    let rows = kept.rows.clone();
    *memory = Some(kept);
    Ok(MapRead { rows, buckets })
}

/// What the look of `event` that ended `ok` (or not) leaves in `memory`:
/// after a failed one nothing (what its offers took is unknown, so the
/// next reads the map whole); after one that saw `taken` taken, those
/// its own offers hold (`held`, until when) written in as the projection
/// will show them, and for any other (a lost offer's) its part
/// forgotten, so the next look reads its rows again.
pub(super) fn after_look(
    memory: &mut Option<Box<MapMemory>>,
    ok: bool,
    event: &Event,
    taken: &HashSet<SeatId>,
    held: &HashMap<SeatId, Millis>,
) {
    let Some(kept) = memory.as_mut().filter(|_| ok) else {
        *memory = None;
        return;
    };
    for seat in taken {
        match (held.get(seat), event.seat_place(seat)) {
            (Some(&expires_at), Some((section, row, number))) => {
                let projection = kept.rows.entry((section.clone(), row.clone()));
                let held = ProjectedSeat::Held { expires_at };
                projection.or_default().insert(number, held);
            }
            _ => kept.forgotten.extend(part_of_seat(seat)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let mut memory = Some(Box::new(MapMemory {
            rows: Rows::new(),
            parts: counts.clone(),
            forgotten: BTreeSet::new(),
            read_at: Millis(0),
        }));
        let (mine, lost) = (SeatId::parse("A-1-2")?, SeatId::parse("A-2-4")?);
        let taken = HashSet::from([mine.clone(), lost.clone()]);
        let held = HashMap::from([(mine, Millis(90_000))]);
        after_look(&mut memory, true, &event, &taken, &held);
        let kept = memory.as_ref().ok_or("kept after a look that ended well")?;
        let row = kept.rows.get(&(a.clone(), one.clone()));
        let want = ProjectedSeat::Held {
            expires_at: Millis(90_000),
        };
        assert_eq!(row.and_then(|r| r.get(&2)), Some(&want), "its offer, held");
        assert!(!kept.rows.contains_key(&(a.clone(), two.clone())));
        // The lost seat's part is read again at the next look, whatever
        // the stream counts; the offer's own is not.
        let moved = moved_parts(&kept.parts, &kept.forgotten, &counts);
        assert_eq!(moved, BTreeSet::from([part_of_row(&a, &two)]));
        // A look that failed leaves nothing to keep.
        after_look(&mut memory, false, &event, &taken, &held);
        assert!(memory.is_none());
        Ok(())
    }
}
