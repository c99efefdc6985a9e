//! Reading a best-available request's rows: a few at a time, front rows
//! first, only as far as the choice needs (seat by seat, a Query per ten,
//! or from the seat map when long); after a lost race, checking the blocks
//! it may choose that it read before the race (`in_hand.rs` keeps what it
//! read and says what a refusal may rest on).

use super::in_hand::{earliest, Choice, Learnt, Reading, RowsInHand, SectionInHand};
use super::{Budget, Candidate, Spend};
use crate::domain::best_available::{spread_choice, spread_is_decided, Ask};
use crate::domain::{
    free_seats, hold_is_live, Event, Millis, ProjectedSeat, RowPlan, RowProjection, SeatId,
    SeatState, SeatStatus, SectionPlan,
};
use crate::error::Error;
use crate::store::Store;
use crate::world::random_u64;
use crate::App;

/// The most rows one batch reads (each batch reads twice as many as the
/// last).
const MAX_ROWS_READ: usize = 64;

/// Reads `seats` (row, index) of `section` again, consistently, in one
/// request, and records what it saw.
async fn check(
    app: &App,
    event: &Event,
    section: &SectionPlan,
    read: &mut SectionInHand,
    seats: Vec<(usize, usize)>,
    budget: &mut Budget,
) -> Result<(), Error> {
    budget.spend(Spend::Check, 1)?;
    let ids: Vec<SeatId> = seats
        .iter()
        .map(|&(row, i)| seat_at(section, row, i))
        .collect();
    let states = app.store.check_seats(&event.event_id, &ids).await?;
    let now = crate::world::now();
    for ((row, i), state) in seats.into_iter().zip(&states) {
        read.learn(row, i, Learnt::of_state(state, now));
    }
    Ok(())
}

/// Checks the blocks of `n` seats of `window` (row, first index) read
/// before a lost race, with the seats rivals were writing then first:
/// what they left decides which blocks are whole.
async fn check_window(
    app: &App,
    event: &Event,
    section: &SectionPlan,
    read: &mut SectionInHand,
    (window, n): (&[(usize, usize)], usize),
    budget: &mut Budget,
) -> Result<(), Error> {
    read.checked.extend(window.iter().copied());
    let mut seats: Vec<(usize, usize)> = read
        .in_flight
        .iter()
        .copied()
        .take(Store::CHECKED_SEATS)
        .collect();
    let blocks = window
        .iter()
        .flat_map(|&(row, start)| (start..start + n).map(move |i| (row, i)));
    seats.extend(blocks.filter(|seat| !read.in_flight.contains(seat)));
    check(app, event, section, read, seats, budget).await
}

/// The seats the rules pick: in the first candidate section with a block
/// for `ask`, by [`spread_choice`]: the contract's choice when uncontended
/// (`losses == 0`), after lost races one of the best blocks in rank order.
/// Rows are read a few at a time, until the rows in hand decide the choice
/// (later rows cannot enter its window); rows the summaries ruled out are
/// counted as full without reading. After a lost race, the window's blocks
/// read before it are checked first, while the budget leaves room for a
/// check and a claim (else the choice is made on the rows in hand).
pub(super) async fn choose_seats(
    app: &App,
    event: &Event,
    candidates: &[Candidate<'_>],
    ask: Ask,
    losses: u32,
    in_hand: &mut RowsInHand,
    budget: &mut Budget,
) -> Result<Option<Choice>, Error> {
    let (reading, n) = (in_hand.reading, ask.n);
    let sections = candidates.iter().zip(&mut in_hand.sections);
    for (candidate, (c, read)) in sections.enumerate() {
        let section = c.section;
        // Rows to read: those the plan and the summaries leave and the
        // last read did not see full (the rest ride along as full, unread).
        let to_read = read.to_read(&c.rows, &c.in_plan);
        loop {
            read_until_decided(app, event, c, &to_read, read, ask, losses, reading, budget).await?;
            let blocks = match (losses, budget.for_reads()) {
                (0, _) | (_, 0) => None,
                _ => read.blocks_to_check((&c.access, ask), losses),
            };
            let Some(window) = blocks else {
                break;
            };
            check_window(app, event, section, read, (&window, n), budget).await?;
        }
        if let Some((row, start)) = spread_choice(c.seen(&read.rows, ask), losses, random_u64()) {
            return Ok(Some(Choice {
                candidate,
                row,
                start,
                seats: (start..start + n)
                    .map(|i| seat_at(section, row, i))
                    .collect(),
            }));
        }
    }
    Ok(None)
}

/// Reads `section`'s rows on from those in hand, the front rows first,
/// then twice as many each time (a choice in the best rows costs a Query
/// or two, a full section a few rounds), until they decide the choice.
#[allow(clippy::too_many_arguments)]
async fn read_until_decided(
    app: &App,
    event: &Event,
    candidate: &Candidate<'_>,
    to_read: &[bool],
    read: &mut SectionInHand,
    ask: Ask,
    losses: u32,
    reading: Reading,
    budget: &mut Budget,
) -> Result<(), Error> {
    let section = candidate.section;
    let decided = |read: &SectionInHand| spread_is_decided(candidate.seen(&read.rows, ask), losses);
    while read.rows.len() < section.rows.len() && !decided(read) {
        // A batch the budget cannot pay for and still claim is cut to
        // what it can (a row at least: if not even that, the spend
        // below ends the request).
        let start = read.rows.len();
        let (reading, affordable) = batch_reading(section, to_read, start, reading, budget);
        // From the map, the rest of the section is one request.
        let batch = match reading {
            Reading::FromMap => section.rows.len(),
            _ => read.batch,
        };
        let end = next_batch_end(to_read, start, batch.min(affordable.max(1)));
        let batch = read_batch(app, event, section, to_read, start..end, reading, budget);
        let (rows, until) = batch.await?;
        read.extend(start, rows, until, crate::world::now());
        read.batch = read.batch.saturating_mul(2).min(MAX_ROWS_READ);
    }
    Ok(())
}

/// Rows `range` of `section`, each as its seats' freedom and whether it
/// was read seat by seat: those `to_read` marks read (seat by seat, or
/// from the seat map when long or `reading` says so), the others full,
/// unread; and the earliest expiry of a live hold among them.
/// Judged as of after the read: a hold that lapsed while the rows were
/// read frees its seats, so a refusal is true at an instant of its
/// request.
async fn read_batch(
    app: &App,
    event: &Event,
    section: &SectionPlan,
    to_read: &[bool],
    range: std::ops::Range<usize>,
    reading: Reading,
    budget: &mut Budget,
) -> Result<(Vec<(Vec<bool>, bool)>, Option<Millis>), Error> {
    let rows = &section.rows[range.clone()];
    let reads = &to_read[range];
    let wanted = rows.iter().zip(reads).filter(|(_, &r)| r);
    let wanted: Vec<RowPlan> = wanted.map(|(row, _)| row.clone()).collect();
    budget.spend(Spend::Read, read_cost(&wanted, reading))?;
    let from_map = |row: &RowPlan| reading.reads_map(is_long(row));
    let (long, short): (Vec<RowPlan>, Vec<RowPlan>) = wanted.into_iter().partition(from_map);
    let consistent = reading != Reading::First;
    let read = RowsRead::of(app, event, section, (&long, &short), consistent).await?;
    Ok(read.free_in(rows, reads, &from_map, crate::world::now()))
}

/// A batch's rows as read: the short ones seat by seat, the long ones
/// from the seat map's projection, each in the batch's order.
struct RowsRead {
    states: Vec<Vec<SeatState>>,
    maps: Vec<RowProjection>,
}

impl RowsRead {
    async fn of(
        app: &App,
        event: &Event,
        section: &SectionPlan,
        (long, short): (&[RowPlan], &[RowPlan]),
        consistent: bool,
    ) -> Result<Self, Error> {
        let (event_id, section_id) = (&event.event_id, &section.section_id);
        let states = match short.is_empty() {
            true => Vec::new(),
            false => {
                app.store
                    .read_rows(event_id, section_id, short, consistent)
                    .await?
            }
        };
        let maps = match long.is_empty() {
            true => Vec::new(),
            false => app.store.read_row_maps(event_id, section_id, long).await?,
        };
        Ok(Self { states, maps })
    }

    /// Per row of `rows` (read where `reads`), which seats are free at
    /// `now` and whether it was read seat by seat; and the earliest
    /// expiry of a live hold seen.
    fn free_in(
        self,
        rows: &[RowPlan],
        reads: &[bool],
        from_map: &dyn Fn(&RowPlan) -> bool,
        now: Millis,
    ) -> (Vec<(Vec<bool>, bool)>, Option<Millis>) {
        let (mut states, mut maps) = (self.states.into_iter(), self.maps.into_iter());
        let mut until = None;
        let mut live = |at: Millis| {
            if hold_is_live(at, now) {
                until = earliest(until, Some(at));
            }
        };
        let mut free = |row: &RowPlan, reads: bool| match (reads, from_map(row)) {
            (false, _) => vec![false; row.count as usize],
            (true, true) => {
                let map = maps.next().unwrap_or_default();
                for seat in map.values() {
                    if let ProjectedSeat::Held { expires_at } = seat {
                        live(*expires_at);
                    }
                }
                free_seats(row.count, &map, now)
            }
            (true, false) => states
                .next()
                .unwrap_or_default()
                .iter()
                .map(|state| {
                    if let SeatState::Held { expires_at, .. } = state {
                        live(*expires_at);
                    }
                    state.visible_status(now) == SeatStatus::Available
                })
                .collect(),
        };
        let rows = rows
            .iter()
            .zip(reads)
            .map(|(row, &r)| (free(row, r), !from_map(row)))
            .collect();
        (rows, until)
    }
}

/// Rows of more seats than this are read from the seat map's projection
/// (a request per 100 of its items of 1,000 seats) instead of seat by seat
/// (a request per ten): read seat by seat, a row of a few hundred would
/// spend the request's whole bound. The map lags the table by the stream
/// (about a second): a seat a rival took meanwhile is named by the
/// claim's transaction and marked taken, and a refusal may miss a release
/// of the last seconds, as the run summaries' may (docs/API.md), never an
/// expiry.
pub const LONG_ROW_SEATS: u32 = 100;

fn is_long(row: &RowPlan) -> bool {
    row.count > LONG_ROW_SEATS
}

/// The requests reading `rows` takes: the seat map's for those read there
/// (long rows, and every row `reading` from the map), a Query per block of
/// seats for the others.
fn read_cost(rows: &[RowPlan], reading: Reading) -> usize {
    let from_map = |row: &RowPlan| reading.reads_map(is_long(row));
    let (long, short): (Vec<RowPlan>, Vec<RowPlan>) = rows.iter().cloned().partition(from_map);
    let map = match long.is_empty() {
        true => 0,
        false => Store::map_read_round_trips(&long),
    };
    map + Store::row_read_round_trips(&short)
}

/// The requests a request's reads may spend before the rows it has not
/// read are read from the seat map (a request per 100 rows): half its
/// bound, so a section of up to 2,000 rows is read whole with room left
/// for a crowd's lost races (each a claim and a check). Read seat by seat,
/// 20 rows of 20 took 40 of the 48, and a stampede's last buyers lost the
/// rest to races and heard `503` with seats still free.
const SEAT_READ_REQUESTS: usize = super::ROUND_TRIPS / 2;

/// How a batch of rows from row `start` on is read, and how many of them
/// the budget pays for: as `reading` says while the request's reads stay
/// within [`SEAT_READ_REQUESTS`], else from the seat map.
fn batch_reading(
    section: &SectionPlan,
    to_read: &[bool],
    start: usize,
    reading: Reading,
    budget: &Budget,
) -> (Reading, usize) {
    let left = budget.for_reads();
    let within = left.min(SEAT_READ_REQUESTS.saturating_sub(budget.spent_on(Spend::Read)));
    match rows_affordable(section, to_read, start, reading, within) {
        0 => {
            let from_map = Reading::FromMap;
            (
                from_map,
                rows_affordable(section, to_read, start, from_map, left),
            )
        }
        rows => (reading, rows),
    }
}

/// How many of the rows to read from row `start` on, in order, `requests`
/// pay for (rows from the map share their batched reads).
fn rows_affordable(
    section: &SectionPlan,
    to_read: &[bool],
    start: usize,
    reading: Reading,
    requests: usize,
) -> usize {
    let (mut map_items, mut queries, mut rows) = (0, 0, 0);
    let wanted = section.rows.iter().zip(to_read).skip(start);
    for (row, _) in wanted.filter(|(_, &r)| r) {
        match reading.reads_map(is_long(row)) {
            true => map_items += Store::map_items(row),
            false => queries += Store::row_read_round_trips(std::slice::from_ref(row)),
        }
        if Store::map_requests(map_items) + queries > requests {
            break;
        }
        rows += 1;
    }
    rows
}

/// Where a batch of `batch` rows to read, from row `start`, ends: past
/// `batch` rows that may fit (rows ruled out ride along unread).
fn next_batch_end(may: &[bool], start: usize, batch: usize) -> usize {
    let mut wanted = 0;
    let mut end = start;
    while end < may.len() && (wanted < batch || !may[end]) {
        wanted += usize::from(may[end]);
        end += 1;
    }
    end
}

/// Seat `index` (from 0) of row `row` of `section`.
fn seat_at(section: &SectionPlan, row: usize, index: usize) -> SeatId {
    SeatId::compose(
        &section.section_id,
        &section.rows[row].row,
        index as u32 + 1,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_reads_rows_that_may_fit_and_carries_those_ruled_out() {
        let cases: [(&[bool], usize, usize, usize); 5] = [
            (&[true, true, true], 0, 2, 2),
            (&[false, true, false, true, true], 0, 2, 4),
            (&[false, false, false], 0, 2, 3),
            (&[true, false, false], 0, 1, 3),
            (&[true, true, false, true], 2, 8, 4),
        ];
        for (may, start, batch, end) in cases {
            assert_eq!(
                next_batch_end(may, start, batch),
                end,
                "{may:?} from {start}"
            );
        }
    }
}
