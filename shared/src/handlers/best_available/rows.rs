//! The rows a best-available request has in hand: read a few at a time,
//! front rows first, only as far as the choice needs; kept across its
//! rounds, so a lost race marks the seats its transaction named as taken
//! (the cancellation reasons say which) instead of reading the section
//! again. A refusal rests on a whole read with nothing marked since: the
//! first (eventually consistent: it may miss a release of the last
//! second, never an expiry), or one after lost races, which is consistent
//! (long rows excepted: they are read from the lagging seat map, less the
//! seats the request lost in them): all of the rows when those in hand
//! hold no choice; after a lost race that named no seat, only the rows
//! that had a run of n when last read (seats taken meanwhile only shorten
//! runs; a row freed meanwhile is seen by the full read before any
//! refusal).

use super::{Budget, Candidate};
use crate::domain::best_available::{has_run, spread_choice, spread_is_decided};

use crate::domain::{free_seats, Event, RowPlan, SeatId, SeatStatus, SectionPlan};
use crate::error::Error;
use crate::store::Store;
use crate::world::random_u64;
use crate::App;

/// Rows read in the first round; each later round reads twice as many, up
/// to [`MAX_ROWS_READ`].
const FIRST_ROWS_READ: usize = 2;
const MAX_ROWS_READ: usize = 64;

/// A block the rules picked: in candidate `candidate`, row `row` (by
/// index), from seat index `start`; its seats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Choice {
    candidate: usize,
    row: usize,
    start: usize,
    /// Whether its row is long, read from the seat map.
    long: bool,
    pub(super) seats: Vec<SeatId>,
}

/// One candidate section's rows read so far (free seats `true`), how
/// many rows its next batch reads, the rows passed over unread (seen
/// without a run of n when last read), and the seats of its long rows
/// lost races named (row, seat index): the seat map may not show them yet,
/// so they stay taken across reads.
#[derive(Debug, Clone)]
struct SectionInHand {
    rows: Vec<Vec<bool>>,
    batch: usize,
    passed_over: Vec<bool>,
    lost_in_long_rows: Vec<(usize, usize)>,
}

impl Default for SectionInHand {
    fn default() -> Self {
        Self {
            rows: Vec::new(),
            batch: FIRST_ROWS_READ,
            passed_over: Vec::new(),
            lost_in_long_rows: Vec::new(),
        }
    }
}

impl SectionInHand {
    /// Read again from the front, whole.
    fn again(&self) -> Self {
        Self {
            lost_in_long_rows: self.lost_in_long_rows.clone(),
            ..Self::default()
        }
    }

    /// Read again from the front, passing over the rows in hand without a
    /// run of `n`.
    fn again_without_full_rows(&self, n: usize) -> Self {
        Self {
            passed_over: self.rows.iter().map(|row| !has_run(row, n)).collect(),
            ..self.again()
        }
    }

    /// Rows just read from `first` on, less the seats lost races named in
    /// long rows.
    fn extend(&mut self, first: usize, rows: Vec<Vec<bool>>) {
        self.rows.extend(rows);
        for &(row, seat) in &self.lost_in_long_rows {
            if row >= first {
                if let Some(free) = self.rows.get_mut(row).and_then(|r| r.get_mut(seat)) {
                    *free = false;
                }
            }
        }
    }

    /// Whether row `i` is to be read (rather than passed over as full).
    fn reads(&self, i: usize) -> bool {
        !self.passed_over.get(i).copied().unwrap_or(false)
    }
}

/// What a request has read of its candidate sections.
#[derive(Debug)]
pub(super) struct RowsInHand {
    sections: Vec<SectionInHand>,
    /// Whether seat reads are strongly consistent (after a lost race, whose
    /// rival an eventually consistent read may not show yet); long rows are
    /// read from the seat map either way.
    consistent: bool,
    /// Whether everything in hand was read whole and nothing was marked
    /// since: a refusal may rest on it. The first read may, eventually
    /// consistent as it is: it misses at most a release of the last
    /// second, as the run summaries may miss one of the last five
    /// (docs/API.md), and it frees every expired hold itself.
    exact: bool,
    /// Lost races marked on the rows in hand since they were last read.
    marked: u32,
}

impl RowsInHand {
    pub(super) fn new(candidates: usize) -> Self {
        Self {
            sections: vec![SectionInHand::default(); candidates],
            consistent: false,
            exact: true,
            marked: 0,
        }
    }

    /// Whether a choice that found nothing in hand is the answer: only
    /// after a whole read with nothing marked since.
    pub(super) fn is_exact(&self) -> bool {
        self.exact
    }

    /// Forgets every row read (not the seats lost in long rows): the next
    /// choice reads them again, consistently.
    pub(super) fn read_again(&mut self) {
        for section in &mut self.sections {
            *section = section.again();
        }
        self.consistent = true;
        self.exact = true;
        self.marked = 0;
    }

    /// Forgets every row: the next choice reads again, consistently, only
    /// those that had a run of `n` when read (a choice, never a refusal,
    /// may rest on that: what holds none is read again whole).
    pub(super) fn read_again_where_runs_were(&mut self, n: usize) {
        for section in &mut self.sections {
            *section = section.again_without_full_rows(n);
        }
        self.consistent = true;
        self.exact = !self.sections.iter().any(|s| s.passed_over.contains(&true));
        self.marked = 0;
    }

    /// Lost races marked on the rows in hand since they were last read.
    pub(super) fn marked(&self) -> u32 {
        self.marked
    }

    /// A rival has (or is taking) the seats at positions `lost` of
    /// `choice`'s block: they are taken in hand from now on.
    pub(super) fn mark_taken(&mut self, choice: &Choice, lost: &[usize]) {
        let section = &mut self.sections[choice.candidate];
        for &i in lost {
            if let Some(free) = section.rows[choice.row].get_mut(choice.start + i) {
                *free = false;
            }
            if choice.long {
                section
                    .lost_in_long_rows
                    .push((choice.row, choice.start + i));
            }
        }
        self.exact = false;
        self.marked += 1;
    }
}

/// The seats the rules pick: in the first candidate section with a run of
/// n, by [`spread_choice`]: the contract's choice when uncontended
/// (`losses == 0`), after lost races one of the best blocks in rank order.
/// Rows are read a few at a time, until the rows in hand decide the choice
/// (later rows cannot enter its window); rows the summaries ruled out are
/// counted as full without reading.
pub(super) async fn choose_seats(
    app: &App,
    event: &Event,
    candidates: &[Candidate<'_>],
    n: usize,
    losses: u32,
    in_hand: &mut RowsInHand,
    budget: &mut Budget,
) -> Result<Option<Choice>, Error> {
    let consistent = in_hand.consistent;
    for (candidate, (Candidate { section, rows: may }, read)) in
        candidates.iter().zip(&mut in_hand.sections).enumerate()
    {
        // The front rows first, then twice as many each time: a choice in
        // the best rows costs a Query or two, a full section a few rounds.
        // Rows to read: those the summaries leave and the last read did not
        // see full (the rest ride along as full, unread).
        let to_read: Vec<bool> = (0..may.len()).map(|i| may[i] && read.reads(i)).collect();
        while read.rows.len() < section.rows.len() && !spread_is_decided(&read.rows, n, losses) {
            // A batch the budget cannot pay for and still claim is cut to
            // what it can (a row at least: if not even that, the spend
            // below ends the request).
            let start = read.rows.len();
            let affordable = rows_affordable(section, &to_read, start, budget.for_reads());
            let end = next_batch_end(&to_read, start, read.batch.min(affordable.max(1)));
            let batch = read_batch(
                app,
                event,
                section,
                &to_read,
                start..end,
                consistent,
                budget,
            );
            read.extend(start, batch.await?);
            read.batch = read.batch.saturating_mul(2).min(MAX_ROWS_READ);
        }
        if let Some((row, start)) = spread_choice(&read.rows, n, losses, random_u64()) {
            let seats = block(section, row, start, n);
            return Ok(Some(Choice {
                candidate,
                row,
                start,
                long: is_long(&section.rows[row]),
                seats,
            }));
        }
    }
    Ok(None)
}

/// Rows `range` of `section`, each as its seats' freedom: those `to_read`
/// marks read (seat by seat, or from the seat map when long), the others
/// full, unread. Judged as of after the read: a hold that lapsed while the
/// rows were read frees its seats, so a refusal is true at an instant of
/// its request.
async fn read_batch(
    app: &App,
    event: &Event,
    section: &SectionPlan,
    to_read: &[bool],
    range: std::ops::Range<usize>,
    consistent: bool,
    budget: &mut Budget,
) -> Result<Vec<Vec<bool>>, Error> {
    let rows = &section.rows[range.clone()];
    let reads = &to_read[range];
    let wanted = rows.iter().zip(reads).filter(|(_, &r)| r);
    let wanted: Vec<RowPlan> = wanted.map(|(row, _)| row.clone()).collect();
    budget.spend(read_cost(&wanted))?;
    let (long, short): (Vec<RowPlan>, Vec<RowPlan>) = wanted.into_iter().partition(is_long);
    let (event_id, section_id) = (&event.event_id, &section.section_id);
    let mut states = match short.is_empty() {
        true => Vec::new(),
        false => {
            app.store
                .read_rows(event_id, section_id, &short, consistent)
                .await?
        }
    }
    .into_iter();
    let mut maps = match long.is_empty() {
        true => Vec::new(),
        false => app.store.read_row_maps(event_id, section_id, &long).await?,
    }
    .into_iter();
    let now = crate::world::now();
    let mut free = |row: &RowPlan, reads: bool| match (reads, is_long(row)) {
        (false, _) => vec![false; row.count as usize],
        (true, true) => free_seats(row.count, &maps.next().unwrap_or_default(), now),
        (true, false) => states
            .next()
            .unwrap_or_default()
            .iter()
            .map(|state| state.visible_status(now) == SeatStatus::Available)
            .collect(),
    };
    Ok(rows
        .iter()
        .zip(reads)
        .map(|(row, &r)| free(row, r))
        .collect())
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

/// The requests reading `rows` takes: the seat map's for long rows,
/// a Query per block of seats for the others.
fn read_cost(rows: &[RowPlan]) -> usize {
    let (long, short): (Vec<RowPlan>, Vec<RowPlan>) = rows.iter().cloned().partition(is_long);
    let map = match long.is_empty() {
        true => 0,
        false => Store::map_read_round_trips(&long),
    };
    map + Store::row_read_round_trips(&short)
}

/// How many of the rows to read from row `start` on, in order, `requests`
/// pay for.
fn rows_affordable(
    section: &SectionPlan,
    to_read: &[bool],
    start: usize,
    requests: usize,
) -> usize {
    let mut left = requests;
    let mut rows = 0;
    for (row, _) in section
        .rows
        .iter()
        .zip(to_read)
        .skip(start)
        .filter(|(_, &r)| r)
    {
        let cost = read_cost(std::slice::from_ref(row));
        if cost > left {
            break;
        }
        left -= cost;
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

fn block(section: &SectionPlan, row: usize, start: usize, n: usize) -> Vec<SeatId> {
    let row = &section.rows[row].row;
    (start..start + n)
        .map(|i| SeatId::compose(&section.section_id, row, i as u32 + 1))
        .collect()
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

    #[test]
    fn a_lost_race_marks_the_named_seats_taken_and_spoils_a_refusal() {
        let mut in_hand = RowsInHand::new(1);
        in_hand.sections[0].rows = vec![vec![true; 6], vec![true; 6]];
        in_hand.read_again();
        assert!(in_hand.sections[0].rows.is_empty() && in_hand.is_exact());
        in_hand.sections[0].rows = vec![vec![true; 6], vec![true; 6]];
        let choice = Choice {
            candidate: 0,
            row: 1,
            start: 2,
            long: false,
            seats: vec![],
        };
        in_hand.mark_taken(&choice, &[0, 1]);
        assert_eq!(
            in_hand.sections[0].rows[1],
            [true, true, false, false, true, true]
        );
        assert_eq!(in_hand.sections[0].rows[0], [true; 6]);
        assert!(!in_hand.is_exact(), "a refusal needs a read after a mark");
        assert_eq!(in_hand.marked(), 1);
        in_hand.read_again();
        assert_eq!(in_hand.marked(), 0, "a read starts the count again");
    }

    #[test]
    fn seats_lost_in_a_long_row_stay_taken_across_reads_of_the_map() {
        let mut in_hand = RowsInHand::new(1);
        in_hand.sections[0].rows = vec![vec![true; 6], vec![true; 200]];
        let choice = |row, long| Choice {
            candidate: 0,
            row,
            start: 3,
            long,
            seats: vec![],
        };
        in_hand.mark_taken(&choice(1, true), &[1]);
        in_hand.mark_taken(&choice(0, false), &[0]);
        in_hand.read_again();
        // The map read again still shows every seat free.
        in_hand.sections[0].extend(0, vec![vec![true; 6], vec![true; 200]]);
        let rows = &in_hand.sections[0].rows;
        assert!(!rows[1][4], "the long row's lost seat stays taken");
        assert!(rows[0][3], "a short row's consistent read is the truth");
        assert_eq!(rows[1].iter().filter(|f| !**f).count(), 1);
        in_hand.read_again_where_runs_were(2);
        assert_eq!(in_hand.sections[0].lost_in_long_rows, vec![(1, 4)]);
    }

    #[test]
    fn after_a_lost_race_only_rows_that_had_a_run_are_read_and_no_refusal_rests_on_it() {
        let mut in_hand = RowsInHand::new(1);
        // Row 0 has no pair left, row 1 has one.
        in_hand.sections[0].rows = vec![
            vec![true, false, true, false],
            vec![false, true, true, false],
        ];
        in_hand.read_again_where_runs_were(2);
        let section = &in_hand.sections[0];
        assert!(section.rows.is_empty());
        assert!(!section.reads(0) && section.reads(1) && section.reads(2));
        assert!(!in_hand.is_exact(), "a row passed over: no refusal on it");
        // Every row with a run: read whole, and a refusal may rest on it.
        in_hand.sections[0].rows = vec![vec![true; 4]];
        in_hand.read_again_where_runs_were(2);
        assert!(in_hand.is_exact());
        in_hand.read_again();
        assert!(in_hand.sections[0].reads(0) && in_hand.is_exact());
    }
}
