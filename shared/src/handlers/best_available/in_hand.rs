//! The rows a best-available request has in hand: read a few at a time,
//! front rows first, only as far as the choice needs; kept across its
//! rounds. A lost race marks the seats its transaction named as taken (the
//! cancellation reasons say which, and what each held), and before the
//! next choice the request checks the blocks it may choose among that it
//! read before the race, in one consistent request per 100 seats, instead
//! of reading the section again: in a stampede seats are only taken, so
//! what the rows in hand show taken stays taken, and what they show free
//! is all that is left to check.
//!
//! A refusal rests on what the request saw of every row during the
//! request: its reads (the first eventually consistent: it may miss a
//! release of the last second), the seats its lost races saw taken and
//! the seats it checked, while every hold it saw is still live (a lapse
//! since sends it to read again). A seat a rival's transaction was only
//! writing when a race was lost to it is left as it was read (that rival
//! may fail too: taking it as taken sent buyers rows behind a pair left
//! free) and read again by the next check; a refusal never rests on it
//! unchecked. So a refusal may miss a release made while the request ran,
//! never an expiry. Rows it passed over unread
//! (after a lost race that named no seat: those seen without a run of n)
//! are read again before any refusal; long rows are read from the
//! lagging seat map, less the seats the request lost there.

use crate::domain::best_available::{
    blocks_ahead, has_run, spread_candidates, Ask, RowAccess, Rows,
};
use crate::domain::crowd::SeatSeen;
use crate::domain::{hold_is_live, Millis, SeatId, SeatState};
use crate::store::Store;
use std::collections::HashSet;

/// How a request reads rows it has not read yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reading {
    /// Its first read: seat by seat, eventually consistent.
    First,
    /// After a lost race: from the stream-fed seat map, a request per 100
    /// rows (100,000 seats), where seat by seat takes one per ten seats.
    /// The map lags, so a block in such a row is checked before it is
    /// chosen, and a refusal resting on it may miss a release of the last
    /// seconds, as one resting on the run summaries may, never an expiry.
    FromMap,
    /// Again from the front (a hold it saw has lapsed, or rows were passed
    /// over): seat by seat, consistently.
    Again,
}

impl Reading {
    /// Whether `row`'s read is from the seat map: long rows always.
    pub(super) fn reads_map(self, long: bool) -> bool {
        long || self == Self::FromMap
    }
}

/// Rows read in the first round; each later round reads twice as many, up
/// to `rows::MAX_ROWS_READ`.
const FIRST_ROWS_READ: usize = 2;

/// A block the rules picked: in candidate `candidate`, row `row` (by
/// index), from seat index `start`; its seats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Choice {
    pub(super) candidate: usize,
    pub(super) row: usize,
    pub(super) start: usize,
    pub(super) seats: Vec<SeatId>,
}

/// What the request learnt of one seat after reading its row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Learnt {
    Free,
    Taken(SeatSeen),
    /// A rival's transaction was writing it when a claim lost to it.
    InFlight,
}

impl Learnt {
    /// A seat a lost race named, as its transaction saw it (`None`: a
    /// rival in flight).
    fn of_lost(seen: Option<SeatSeen>) -> Self {
        seen.map_or(Self::InFlight, Self::Taken)
    }

    /// A seat as a consistent read shows it at `now`.
    pub(super) fn of_state(state: &SeatState, now: Millis) -> Self {
        match state {
            SeatState::Held { expires_at, .. } if hold_is_live(*expires_at, now) => {
                Self::Taken(SeatSeen::HeldUntil(*expires_at))
            }
            SeatState::Sold { .. } => Self::Taken(SeatSeen::Sold),
            _ => Self::Free,
        }
    }
}

/// The earlier of two hold expiries, if any.
pub(super) fn earliest(a: Option<Millis>, b: Option<Millis>) -> Option<Millis> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// One candidate section's rows read so far (free seats `true`), how
/// many rows its next batch reads, the rows passed over unread (seen
/// without a run of n when last read), and the seats the request saw
/// taken (row, seat index, by what), in races or checks: the seat map may
/// not show them yet, so they stay taken across its reads of the map while
/// what held them lives.
#[derive(Debug, Clone)]
pub(super) struct SectionInHand {
    pub(super) rows: Vec<Vec<bool>>,
    pub(super) batch: usize,
    passed_over: Vec<bool>,
    seen_taken: Vec<(usize, usize, SeatSeen)>,
    /// Per row, whether it was read seat by seat since the last lost race;
    /// blocks in the other rows are checked before they are chosen.
    fresh: Vec<bool>,
    /// Blocks (row, start) checked since the last lost race.
    pub(super) checked: HashSet<(usize, usize)>,
    /// The earliest expiry of a live hold it saw: until then, what it
    /// shows taken is still taken (or was released).
    until: Option<Millis>,
    /// The earliest expiry of a hold the run summaries counted in the
    /// rows they ruled out: those ride along unread through every read,
    /// so a refusal rests on them until then, whatever is read again.
    ruled_out_until: Option<Millis>,
    /// That hold lapsed before a read again: the rows the summaries ruled
    /// out are read too from then on, so a refusal rests on reads alone.
    reads_ruled_out: bool,
    /// Seats a rival's transaction was writing when a race was lost to it
    /// (row, index), left as they were read: the next check reads them.
    pub(super) in_flight: Vec<(usize, usize)>,
}

impl Default for SectionInHand {
    fn default() -> Self {
        Self {
            rows: Vec::new(),
            batch: FIRST_ROWS_READ,
            passed_over: Vec::new(),
            seen_taken: Vec::new(),
            fresh: Vec::new(),
            checked: HashSet::new(),
            until: None,
            ruled_out_until: None,
            reads_ruled_out: false,
            in_flight: Vec::new(),
        }
    }
}

impl SectionInHand {
    /// Read again from the front, whole.
    fn again(&self) -> Self {
        Self {
            seen_taken: self.seen_taken.clone(),
            until: self.ruled_out_until,
            ruled_out_until: self.ruled_out_until,
            reads_ruled_out: self.reads_ruled_out,
            ..Self::default()
        }
    }

    /// Read again from the front, whole, at `now`: once the summaries'
    /// hold has lapsed, the rows they ruled out with the others.
    fn again_at(&self, now: Millis) -> Self {
        let again = self.again();
        match again.ruled_out_until {
            Some(at) if !hold_is_live(at, now) => Self {
                until: None,
                ruled_out_until: None,
                reads_ruled_out: true,
                ..again
            },
            _ => again,
        }
    }

    /// Per row, whether the next read reads it: rows the plan and the
    /// summaries leave (`may`), or every row the plan leaves (`in_plan`)
    /// once the summaries' hold lapsed, less those passed over.
    pub(super) fn to_read(&self, may: &[bool], in_plan: &[bool]) -> Vec<bool> {
        let wanted = |i: usize| may[i] || (self.reads_ruled_out && in_plan[i]);
        (0..may.len()).map(|i| wanted(i) && self.reads(i)).collect()
    }

    /// Read again from the front, passing over the rows in hand without a
    /// run of `n`.
    fn again_without_full_rows(&self, n: usize) -> Self {
        Self {
            passed_over: self.rows.iter().map(|row| !has_run(row, n)).collect(),
            ..self.again()
        }
    }

    /// Rows just read from `first` on (each fresh if read seat by seat),
    /// whose earliest live hold expires at `until`; in those read from the
    /// seat map, less the seats the request saw taken (the map may not
    /// show them yet).
    pub(super) fn extend(
        &mut self,
        first: usize,
        rows: Vec<(Vec<bool>, bool)>,
        until: Option<Millis>,
        now: Millis,
    ) {
        self.fresh.resize(self.rows.len(), false);
        for (row, fresh) in rows {
            self.rows.push(row);
            self.fresh.push(fresh);
        }
        self.until = earliest(self.until, until);
        // A hold seen that has lapsed since frees its seat again.
        self.seen_taken.retain(|&(_, _, seen)| match seen {
            SeatSeen::HeldUntil(at) => hold_is_live(at, now),
            SeatSeen::Sold => true,
        });
        for &(row, seat, seen) in &self.seen_taken {
            if row >= first && !self.fresh.get(row).copied().unwrap_or(true) {
                if let Some(free) = self.rows.get_mut(row).and_then(|r| r.get_mut(seat)) {
                    *free = false;
                    if let SeatSeen::HeldUntil(at) = seen {
                        self.until = earliest(self.until, Some(at));
                    }
                }
            }
        }
    }

    /// A race was lost: everything in hand was read before it.
    fn race_lost(&mut self) {
        self.fresh.iter_mut().for_each(|fresh| *fresh = false);
        self.checked.clear();
    }

    /// Records what the request learnt of seat `seat` of row `row`.
    pub(super) fn learn(&mut self, row: usize, seat: usize, learnt: Learnt) {
        let Some(free) = self.rows.get_mut(row).and_then(|r| r.get_mut(seat)) else {
            return;
        };
        if learnt != Learnt::InFlight {
            *free = learnt == Learnt::Free;
        }
        self.in_flight.retain(|&s| s != (row, seat));
        match learnt {
            Learnt::Taken(SeatSeen::HeldUntil(at)) => self.until = earliest(self.until, Some(at)),
            Learnt::InFlight => self.in_flight.push((row, seat)),
            Learnt::Free | Learnt::Taken(SeatSeen::Sold) => {}
        }
        if learnt != Learnt::InFlight {
            self.seen_taken.retain(|&(r, s, _)| (r, s) != (row, seat));
            if let Learnt::Taken(seen) = learnt {
                self.seen_taken.push((row, seat, seen));
            }
        }
    }

    /// Whether a refusal may rest on what is in hand at `now`.
    fn is_exact(&self, now: Millis) -> bool {
        !self.passed_over.contains(&true)
            && self.in_flight.is_empty()
            && self.until.is_none_or(|at| hold_is_live(at, now))
    }

    /// Whether row `i` is to be read (rather than passed over as full).
    pub(super) fn reads(&self, i: usize) -> bool {
        !self.passed_over.get(i).copied().unwrap_or(false)
    }

    /// The blocks to check before a choice after `losses` lost races:
    /// `None` when every block of the window was read or checked since the
    /// last lost race and no seat is in flight; else the window's blocks
    /// not, then the rows' blocks ahead of it ([`blocks_ahead`]), as
    /// many as one check reads
    /// ([`Store::CHECKED_SEATS`]) besides the seats in flight. Looking
    /// past the window costs nothing more, and a window whose blocks turn
    /// out taken moves onto blocks checked already.
    pub(super) fn blocks_to_check(
        &self,
        (access, ask): (&[RowAccess], Ask),
        losses: u32,
    ) -> Option<Vec<(usize, usize)>> {
        let n = ask.n;
        let rows = Rows {
            free: &self.rows,
            access,
            ask,
        };
        let unchecked = |&(row, start): &(usize, usize)| {
            !self.fresh.get(row).copied().unwrap_or(false) && !self.checked.contains(&(row, start))
        };
        let window = spread_candidates(rows, losses);
        if !window.iter().any(unchecked) && self.in_flight.is_empty() {
            return None;
        }
        let most = Store::CHECKED_SEATS.saturating_sub(self.in_flight.len()) / n;
        let mut blocks: Vec<(usize, usize)> = window.into_iter().filter(unchecked).collect();
        let ahead: Vec<(usize, usize)> = blocks_ahead(rows)
            .into_iter()
            .filter(|block| unchecked(block) && !blocks.contains(block))
            .collect();
        blocks.extend(ahead);
        blocks.truncate(most);
        Some(blocks)
    }
}

/// What a request has read of its candidate sections.
#[derive(Debug)]
pub(super) struct RowsInHand {
    pub(super) sections: Vec<SectionInHand>,
    /// How rows not yet read are read.
    pub(super) reading: Reading,
}

impl RowsInHand {
    /// What a request has read of `candidates` sections, each with the
    /// earliest expiry among the holds that made the run summaries rule out
    /// its rows (a refusal resting on them holds until then).
    pub(super) fn new(candidates: &[Option<Millis>]) -> Self {
        let section = |&until: &Option<Millis>| SectionInHand {
            until,
            ruled_out_until: until,
            ..SectionInHand::default()
        };
        Self {
            sections: candidates.iter().map(section).collect(),
            reading: Reading::First,
        }
    }

    /// Whether a choice that found nothing in hand is the answer at
    /// `now` (the module's doc says when).
    pub(super) fn is_exact(&self, now: Millis) -> bool {
        self.sections.iter().all(|s| s.is_exact(now))
    }

    /// Forgets every row read (not the seats lost in long rows): the next
    /// choice reads them again, consistently, and at `now` the rows the
    /// summaries ruled out too if their hold has lapsed.
    pub(super) fn read_again(&mut self, now: Millis) {
        for section in &mut self.sections {
            *section = section.again_at(now);
        }
        self.reading = Reading::Again;
    }

    /// Forgets every row: the next choice reads again, consistently, only
    /// those that had a run of `n` when read (a choice, never a refusal,
    /// may rest on that: what holds none is read again whole).
    pub(super) fn read_again_where_runs_were(&mut self, n: usize) {
        for section in &mut self.sections {
            *section = section.again_without_full_rows(n);
        }
        self.reading = Reading::Again;
    }

    /// `choice`'s claim lost the seats at positions `lost` of its block,
    /// each as its transaction saw it: those it saw taken are taken in hand
    /// from now on (the block's others, a rival's in flight or not named,
    /// wait for the next check), and every block read before is checked
    /// before it is chosen.
    pub(super) fn race_lost(&mut self, choice: &Choice, lost: &[(usize, Option<SeatSeen>)]) {
        let section = &mut self.sections[choice.candidate];
        // The block's other seats are checked with the rivals in flight:
        // a seat seen taken beside one left as read would make the row look
        // as if a block there left an orphan, and send the next choice
        // rows further back.
        for i in 0..choice.seats.len() {
            let seen = lost
                .iter()
                .find(|(at, _)| *at == i)
                .and_then(|(_, seen)| *seen);
            section.learn(choice.row, choice.start + i, Learnt::of_lost(seen));
        }
        for section in &mut self.sections {
            section.race_lost();
        }
        self.reading = Reading::FromMap;
    }
}

#[cfg(test)]
#[path = "in_hand_tests.rs"]
mod tests;
