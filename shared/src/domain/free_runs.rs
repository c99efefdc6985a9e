//! What the stream-fed seat map says of a row's free runs, in two numbers
//! (three in a row with wheelchair spaces): the longest run of free seats
//! when the projection was written (and the longest with no wheelchair
//! space, what a request for none may take), and the instant that answer
//! stops holding (the first live hold's expiry: from
//! then on a longer run may be free without any write). best-available
//! refuses from it (docs/API.md, "best-available's bounds") and skips the
//! rows it rules out. Pure.
//!
//! The summaries of an event's rows are spread over small items
//! ([`RunsLayout`]), dealt across its sections: one write of a hot row
//! then costs a single write unit and shares its key with rows of other
//! sections, which a crowd loads less, and a request that must see every
//! row (a refusal with no section asked) reads about one item per kilobyte
//! of summaries.

use super::{hold_is_live, Millis, ProjectedSeat, RowPlan, RowProjection, SectionPlan};

/// A row's summary is written at every this many versions of its
/// projection item even when its runs did not change ([`RowRuns::worth_writing`]).
pub const RUNS_REWRITE_EVERY: i64 = 8;
/// What an item may spend on its rows' summaries and stay under the 1 KB
/// that one write unit pays for: its key and sort key
/// (`RUNS#{ref}#{item}`, `RUNS`) take under 64 bytes.
const RUNS_ITEM_ROW_BYTES: usize = 960;
/// One row's summary value at its largest, by DynamoDB's item-size rules
/// (a map's 3 bytes and 1 per element, one-letter names, numbers of at
/// most 13 digits at 1 byte per two digits and 1 more), rounded up.
pub const RUNS_VALUE_BYTES: usize = 32;
/// What a row's clear run adds to its summary value at its largest (the
/// name `c`, its map element byte and a number of at most 4 digits),
/// rounded up: budgeted only in an event with wheelchair spaces, so every
/// other event keeps its layout.
pub const RUNS_CLEAR_BYTES: usize = 8;
/// The fewest items an event's summaries take (fewer only when it has
/// fewer rows): a small event's rows, which one crowd loads alike, each
/// get a key of their own or share it with a few, for 8 read units a
/// read of them all at most.
pub const RUNS_FEWEST_ITEMS: usize = 16;

/// How an event's row summaries are spread over items: as few items as
/// their bytes allow (at least [`RUNS_FEWEST_ITEMS`]), the rows of every
/// seated section dealt round robin in plan order, so a section's rows,
/// which a crowd loads alike, land on different keys beside other
/// sections' rows. Read units follow the items (each read costs half a
/// unit however small), write units each item's rows. The projector
/// learns a row's item from its seats (written at create-event);
/// best-available computes the same from the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunsLayout {
    items: u32,
}

impl RunsLayout {
    pub fn of(sections: &[SectionPlan]) -> Self {
        let rows = seated_rows(sections);
        // A row's attribute name is `{section}-{row}`.
        let name = rows
            .clone()
            .map(|(s, r)| s.section_id.as_str().len() + 1 + r.row.as_str().len())
            .max()
            .unwrap_or(0);
        let clear = match rows.clone().any(|(_, r)| !r.wheelchair.is_empty()) {
            true => RUNS_CLEAR_BYTES,
            false => 0,
        };
        let per_item = (RUNS_ITEM_ROW_BYTES / (name + RUNS_VALUE_BYTES + clear)).max(1);
        let count = rows.count();
        let items = count
            .div_ceil(per_item)
            .max(count.min(RUNS_FEWEST_ITEMS))
            .max(1);
        Self {
            items: u32::try_from(items).unwrap_or(u32::MAX),
        }
    }

    /// How many items the event's summaries take.
    pub fn items(&self) -> u32 {
        self.items
    }

    /// Every row of `sections`' seated sections, in plan order, with the
    /// item that holds its summary. Each section takes the next of the
    /// event's slots dealt round robin over the items (so no item holds
    /// more than its share, and a section's rows sit on distinct keys
    /// while it has no more rows than there are items), its rows rotated
    /// by the section's place among the seated ones: the `k`th section's
    /// first slot holds its row `k` (modulo its rows). Without the
    /// rotation, sections of a length that divides the items would stack
    /// their front rows, which a crowd loads most, on the same key.
    pub fn place<'a>(
        &self,
        sections: &'a [SectionPlan],
    ) -> impl Iterator<Item = (&'a SectionPlan, &'a RowPlan, u32)> + 'a {
        // `items` is at least 1; the remainder fits in a u32.
        let items = self.items.max(1) as usize;
        let firsts = seated(sections).enumerate().scan(0usize, |next, (k, s)| {
            let first = *next;
            *next += s.rows.len();
            Some((k, s, first))
        });
        firsts.flat_map(move |(k, s, first)| {
            let n = s.rows.len().max(1);
            s.rows.iter().enumerate().map(move |(r, row)| {
                let slot = first + (r + n - k % n) % n;
                (s, row, u32::try_from(slot % items).unwrap_or(0))
            })
        })
    }
}

/// `sections`' seated sections, in plan order: the only ones with rows
/// to summarise.
fn seated(sections: &[SectionPlan]) -> impl Iterator<Item = &SectionPlan> + Clone {
    sections.iter().filter(|s| !s.is_ga())
}

/// The rows of `sections`' seated sections, in plan order.
fn seated_rows(sections: &[SectionPlan]) -> impl Iterator<Item = (&SectionPlan, &RowPlan)> + Clone {
    seated(sections).flat_map(|s| s.rows.iter().map(move |r| (s, r)))
}

/// Per seat of a row of `seats` seats whose projection is `taken`, in
/// number order, whether it is free at `as_of`: a hold expired by then is.
pub fn free_seats(seats: u32, taken: &RowProjection, as_of: Millis) -> Vec<bool> {
    (1..=seats)
        .map(|number| match taken.get(&number) {
            None => true,
            Some(ProjectedSeat::Sold) => false,
            Some(ProjectedSeat::Held { expires_at }) => !hold_is_live(*expires_at, as_of),
        })
        .collect()
}

/// A row's free runs as its projection showed them at `as_of`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowRuns {
    /// The longest run of seats free at `as_of` (a hold expired by then
    /// counts as free).
    pub longest: u32,
    /// In a row with wheelchair spaces: the longest such run with no
    /// wheelchair space in it, all a request for none may take; `None` in
    /// a row without (the longest is).
    pub clear: Option<u32>,
    /// The earliest expiry of a hold live at `as_of`; `None` when no hold
    /// was live (only a write to the row can lengthen its runs).
    pub until: Option<Millis>,
}

impl RowRuns {
    /// The runs of a row of `seats` seats whose projection is `taken`
    /// (seat number to state; free seats absent) and whose wheelchair
    /// spaces are `wheelchair` (seat numbers), at `as_of`.
    pub fn of(seats: u32, taken: &RowProjection, as_of: Millis, wheelchair: &[u32]) -> Self {
        let (mut longest, mut run) = (0u32, 0u32);
        let (mut clear, mut clear_run) = (0u32, 0u32);
        for (number, free) in (1..).zip(free_seats(seats, taken, as_of)) {
            run = if free { run + 1 } else { 0 };
            longest = longest.max(run);
            let space = wheelchair.contains(&number);
            clear_run = if free && !space { clear_run + 1 } else { 0 };
            clear = clear.max(clear_run);
        }
        let until = taken
            .iter()
            .filter(|(number, _)| **number <= seats)
            .filter_map(|(_, state)| match state {
                ProjectedSeat::Held { expires_at } if hold_is_live(*expires_at, as_of) => {
                    Some(*expires_at)
                }
                _ => None,
            })
            .min();
        let clear = (!wheelchair.is_empty()).then_some(clear);
        Self {
            longest,
            clear,
            until,
        }
    }

    /// The longest free run at `now`, while this summary still tells it
    /// (`None` once a hold it counted may have expired).
    pub fn longest_at(&self, now: Millis) -> Option<u32> {
        match self.until {
            Some(until) if !hold_is_live(until, now) => None,
            _ => Some(self.longest),
        }
    }

    /// Whether a projection write's runs (`after`, with `before` those of
    /// the item just before it, both at the write's instant) need writing
    /// to the summary. A write that leaves the runs as they were leaves a
    /// summary of the item before it true: it still tells until the first
    /// hold it counted expires, and no hold begins without a write. But the
    /// summary of the item before it may never have landed (its write
    /// failed), so a write is made anyway when one of its seats was as it
    /// sets it already (a batch delivered again after such a failure:
    /// Lambda redelivers the records, merged with newer ones), and at
    /// every [`RUNS_REWRITE_EVERY`]th version of the item, which bounds how
    /// long a summary lost any other way (retries spent) can stay wrong.
    pub fn worth_writing(
        before: Self,
        after: Self,
        every_seat_changed: bool,
        version: i64,
    ) -> bool {
        before != after || !every_seat_changed || version % RUNS_REWRITE_EVERY == 0
    }

    /// Whether the row may hold a block of `n` with `wheelchair`
    /// wheelchair spaces at `now`: false only when the summary still tells
    /// and the run such a block needs is shorter (asked for none, the
    /// clear run where the row has one).
    pub fn may_fit(summary: Option<&Self>, n: u32, wheelchair: u32, now: Millis) -> bool {
        let run = |runs: &Self| {
            let longest = runs.longest_at(now)?;
            Some(match (wheelchair, runs.clear) {
                (0, Some(clear)) => clear,
                _ => longest,
            })
        };
        summary.and_then(run).is_none_or(|longest| longest >= n)
    }
}

#[cfg(test)]
#[path = "free_runs_tests.rs"]
mod tests;
