//! best-available's choice as a pure function of a section's rows (which
//! seats are free for this order, and what each seat is for), per API.md:
//! `n` adjacent seats in one row with exactly the wheelchair spaces asked
//! for, ranked by tier, then row (plan order), then the block whose centre
//! is nearest the row's centre, ties to the lower seat numbers. A block's
//! tier ([`Tier`]): asked for wheelchair spaces, the most companion seats
//! first; then blocks that leave no orphan (a free wheelchair space
//! counting as a free seat); then, asked for none, blocks without a
//! companion seat. After lost races the choice spreads (`spread.rs`).

mod spread;
pub use spread::{
    blocks_ahead, spread_candidates, spread_choice, spread_is_decided, spread_window, MAX_SPREAD,
    MAX_SPREAD_ROWS,
};

use super::access::Access;
use super::RowPlan;

/// What a request asks for: `n` adjacent seats, exactly `wheelchair` of
/// them wheelchair spaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ask {
    pub n: usize,
    pub wheelchair: usize,
}

impl Ask {
    /// `n` seats, none a wheelchair space.
    pub fn seats(n: usize) -> Self {
        Self { n, wheelchair: 0 }
    }

    /// Whether a row of `count` seats, each for what `access` says, could
    /// hold a block of this ask were every seat free: the plan alone rules
    /// the others out, whatever is sold.
    pub fn fits_plan(&self, count: u32, access: &RowAccess) -> bool {
        match (self.wheelchair, access.0.is_empty()) {
            (0, true) => count as usize >= self.n,
            (_, true) => false,
            _ => blocks(&vec![true; count as usize], access, *self)
                .next()
                .is_some(),
        }
    }
}

/// What each seat of a row is for (0-based); empty for a row with neither
/// wheelchair spaces nor companion seats (most rows).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RowAccess(Vec<Option<Access>>);

/// The access of a row with none: what rows past an access list's end are.
static NO_ACCESS: RowAccess = RowAccess(Vec::new());

impl RowAccess {
    /// From [`super::RowPlan::seats_access`].
    pub fn new(seats: Option<Vec<Option<Access>>>) -> Self {
        Self(seats.unwrap_or_default())
    }

    /// Per row of a section's plan, what its seats are for; empty when no
    /// row has a wheelchair space or a companion seat (most sections).
    pub fn of_rows(rows: &[RowPlan]) -> Vec<RowAccess> {
        let none = |row: &RowPlan| row.wheelchair.is_empty() && row.companion.is_empty();
        if rows.iter().all(none) {
            return Vec::new();
        }
        rows.iter()
            .map(|row| Self::new(row.seats_access()))
            .collect()
    }

    /// Row `r`'s in a section's list ([`RowAccess::of_rows`]): rows past
    /// its end have neither.
    pub fn of_row(access: &[RowAccess], r: usize) -> &RowAccess {
        access.get(r).unwrap_or(&NO_ACCESS)
    }

    /// What seat `seat` (0-based) is for, if anything.
    pub fn at(&self, seat: usize) -> Option<Access> {
        self.0.get(seat).copied().flatten()
    }

    fn is(&self, seat: usize, access: Access) -> bool {
        self.0.get(seat) == Some(&Some(access))
    }

    /// `before[i]`: how many of the first `i` of `len` seats are
    /// `access`; `None` for a row with neither (counting nothing).
    fn before(&self, len: usize, access: Access) -> Option<Vec<usize>> {
        if self.0.is_empty() {
            return None;
        }
        let mut before = vec![0; len + 1];
        for i in 0..len {
            before[i + 1] = before[i] + usize::from(self.is(i, access));
        }
        Some(before)
    }
}

/// How many seats of `start..start + n` a [`RowAccess::before`] counts.
fn count_in(before: &Option<Vec<usize>>, start: usize, n: usize) -> usize {
    before.as_ref().map_or(0, |b| b[start + n] - b[start])
}

/// A section's rows as a request sees them, and what it asks.
#[derive(Debug, Clone, Copy)]
pub struct Rows<'a> {
    /// Per row, in plan order: which seats are free for this order.
    pub free: &'a [Vec<bool>],
    /// Per row: what its seats are for (rows past its end have neither).
    pub access: &'a [RowAccess],
    pub ask: Ask,
}

impl<'a> Rows<'a> {
    /// Rows of seats that are for no one in particular, asked for `n`.
    pub fn plain(free: &'a [Vec<bool>], n: usize) -> Self {
        Self {
            free,
            access: &[],
            ask: Ask::seats(n),
        }
    }

    fn len(&self) -> usize {
        self.free.len()
    }

    /// Row `r`: its seats' freedom and access.
    fn row(&self, r: usize) -> (&'a [bool], &'a RowAccess) {
        (&self.free[r], RowAccess::of_row(self.access, r))
    }

    /// The best tier of row `r`'s blocks, if it has any.
    fn best_tier(&self, r: usize) -> Option<Tier> {
        let (free, access) = self.row(r);
        blocks(free, access, self.ask).map(|(_, tier)| tier).min()
    }

    /// Row `r`'s best block of tier `within` or better ([`best_block`]).
    fn best_block(&self, r: usize, within: Tier) -> Option<usize> {
        let (free, access) = self.row(r);
        best_block(free, access, self.ask, within)
    }

    /// The tier whose block decides an uncontended read
    /// ([`spread_is_decided`]): [`Tier::BEST`], but asked for wheelchair
    /// spaces, as many companion seats as any row's plan could put in such
    /// a block (seats only ever fill, so no read finds more): where no
    /// space has a companion seat beside it, the first block that leaves
    /// no orphan decides.
    fn decisive(&self) -> Tier {
        if self.ask.wheelchair == 0 {
            return Tier::BEST;
        }
        let short = |access: &RowAccess| {
            let all = vec![true; access.0.len()];
            let best = blocks(&all, access, self.ask).map(|(_, t)| t.companions_short);
            best.min()
        };
        let planned = self.access.iter().filter_map(short).min();
        Tier {
            companions_short: planned.unwrap_or(0),
            ..Tier::BEST
        }
    }

    /// Whether row `r` has a block the request may take at all.
    pub fn has_block(&self, r: usize) -> bool {
        let (free, access) = self.row(r);
        blocks(free, access, self.ask).next().is_some()
    }
}

/// Where a block ranks before its row: lower is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Tier {
    /// Asked for wheelchair spaces: how many companion seats short of the
    /// most its other seats could be.
    companions_short: usize,
    /// It leaves a free seat alone beside it.
    orphan: bool,
    /// Asked for none: it holds a companion seat.
    companion: bool,
}

impl Tier {
    /// The best a block can be: what decides an uncontended choice.
    pub const BEST: Tier = Tier {
        companions_short: 0,
        orphan: false,
        companion: false,
    };
}

/// A block of `n` seats starting at 0-based `start` in `free` (a row: true
/// where the seat is available to this order) leaves an orphan if a seat
/// just outside it is free and its other neighbour is taken or the row's end.
fn leaves_orphan(free: &[bool], start: usize, n: usize) -> bool {
    let left = start
        .checked_sub(1)
        .is_some_and(|l| free[l] && (l == 0 || !free[l - 1]));
    let right = start + n;
    let right = right < free.len() && free[right] && (right + 1 == free.len() || !free[right + 1]);
    left || right
}

/// Every block `ask` may take in a row (all its seats free, exactly the
/// wheelchair spaces asked for): its 0-based start and tier, in order.
fn blocks<'a>(
    free: &'a [bool],
    access: &'a RowAccess,
    ask: Ask,
) -> impl Iterator<Item = (usize, Tier)> + 'a {
    let n = ask.n;
    let len = if n == 0 || n > free.len() {
        0
    } else {
        free.len()
    };
    // run[i]: free seats in the row from i on.
    let mut run = vec![0usize; len + 1];
    for i in (0..len).rev() {
        run[i] = if free[i] { run[i + 1] + 1 } else { 0 };
    }
    let spaces = access.before(len, Access::Wheelchair);
    let companions = access.before(len, Access::Companion);
    let starts = 0..(len + 1).saturating_sub(n.max(1));
    starts.filter_map(move |start| {
        let wheelchair = count_in(&spaces, start, n);
        if run[start] < n || wheelchair != ask.wheelchair {
            return None;
        }
        let companion = count_in(&companions, start, n);
        let tier = Tier {
            companions_short: match ask.wheelchair {
                0 => 0,
                _ => n - wheelchair - companion,
            },
            orphan: leaves_orphan(free, start, n),
            companion: ask.wheelchair == 0 && companion > 0,
        };
        Some((start, tier))
    })
}

/// The best block of `ask` in one row (its 0-based start) among those of
/// tier `within` or better: nearest the row's centre, ties to the lower
/// start.
pub fn best_block(free: &[bool], access: &RowAccess, ask: Ask, within: Tier) -> Option<usize> {
    // Twice the distance between the block's centre and the row's centre.
    let off_centre = |start: usize| (2 * start + ask.n).abs_diff(free.len());
    blocks(free, access, ask)
        .filter(|&(_, tier)| tier <= within)
        .map(|(start, _)| start)
        .min_by_key(|&start| (off_centre(start), start))
}

/// Whether a row has `n` adjacent free seats at all, whatever they are for.
pub fn has_run(free: &[bool], n: usize) -> bool {
    n > 0 && free.split(|&seat| !seat).any(|run| run.len() >= n)
}

/// The whole rule over a section's rows in plan order: `(row index,
/// start)`.
pub fn choose_block(rows: Rows) -> Option<(usize, usize)> {
    let tier = (0..rows.len()).filter_map(|r| rows.best_tier(r)).min()?;
    (0..rows.len()).find_map(|r| rows.best_block(r, tier).map(|s| (r, s)))
}

/// How many rows behind the best row that still has a block the request
/// may take (`rows` as they are now) a block held in row `held_row` lies:
/// 0 when no better row has one. What API.md's weaker order under a crowd
/// is measured by (any block, whatever its tier: a conservative measure).
pub fn rows_behind_a_free_run(rows: Rows, held_row: usize) -> usize {
    (0..held_row.min(rows.len()))
        .position(|r| rows.has_block(r))
        .map_or(0, |better| held_row - better)
}

/// Orphans in a row: free seats whose neighbours are both taken (or the
/// row's end), which no request for two or more can ever use.
pub fn orphans(free: &[bool]) -> usize {
    (0..free.len())
        .filter(|&i| free[i] && (i == 0 || !free[i - 1]) && (i + 1 == free.len() || !free[i + 1]))
        .count()
}

#[cfg(test)]
mod access_tests;

#[cfg(test)]
mod tests {
    use super::*;

    /// Any tier: every block a request may take.
    const ANY: Tier = Tier {
        companions_short: usize::MAX,
        orphan: true,
        companion: true,
    };

    /// [`best_block`] of `n` in a row for no one in particular, of the
    /// best tier or of any.
    fn best(free: &[bool], n: usize, orphan_free: bool) -> Option<usize> {
        let within = if orphan_free { Tier::BEST } else { ANY };
        best_block(free, &NO_ACCESS, Ask::seats(n), within)
    }

    #[test]
    fn how_far_behind_a_free_run_a_held_block_lies() {
        let rows = [row("HHHH"), row("HAAH"), row("HHHH"), row("AAHH")];
        let cases = [
            // (held row, n, rows behind)
            (0, 2, 0), // nothing better than the first row
            (1, 2, 0), // the best row with a run is its own
            (3, 2, 2), // row 1 still has a pair: two rows behind it
            (3, 3, 0), // no better row has three
            (2, 1, 1),
        ];
        for (held, n, behind) in cases {
            assert_eq!(
                rows_behind_a_free_run(Rows::plain(&rows, n), held),
                behind,
                "row {held}, n {n}"
            );
        }
    }

    /// `A` free, anything else taken.
    pub(super) fn row(s: &str) -> Vec<bool> {
        s.chars().map(|c| c == 'A').collect()
    }

    #[test]
    fn the_centre_of_an_empty_row() {
        assert_eq!(
            best(&row("AAAAAAAAAA"), 2, true),
            Some(4),
            "seats 5-6 of 10"
        );
        assert_eq!(
            best(&row("AAAAAAAAAA"), 4, true),
            Some(3),
            "seats 4-7 of 10"
        );
        // 9 seats, 2 wanted: starts 3 and 4 are equally off centre; the lower wins.
        assert_eq!(best(&row("AAAAAAAAA"), 2, false), Some(3));
        assert_eq!(
            best(&row("AAAA"), 4, true),
            Some(0),
            "a whole row leaves nothing"
        );
        assert_eq!(best(&row("AAA"), 4, false), None);
        assert_eq!(best(&row("AAA"), 0, false), None);
    }

    #[test]
    fn orphans_are_avoided_while_a_block_without_one_exists() {
        // Seats 5-6 taken: 2 more go to 3-4 (not 2-3, which strands seat 1
        // and seat 4), and ties between 3-4 and 7-8 go to the lower.
        let r = row("AAAAHHAAAA");
        assert_eq!(best(&r, 2, true), Some(2));
        assert!(
            leaves_orphan(&r, 1, 2),
            "seats 2-3 strand seat 1 (row end) and seat 4"
        );
        assert!(!leaves_orphan(&r, 2, 2));
        // Three free between taken seats: any 2 strand one, so only the
        // orphans-allowed tier finds them.
        let r = row("SAAAS");
        assert_eq!(best(&r, 2, true), None);
        assert_eq!(
            best(&r, 2, false),
            Some(1),
            "nearest the centre, then lower"
        );
        // A seat next to the block whose other neighbour is free is no orphan.
        assert!(!leaves_orphan(&row("AAAAAA"), 2, 2));
        assert!(
            leaves_orphan(&row("AAAAAA"), 1, 2),
            "seat 1 would be alone at the row's end"
        );
    }

    #[test]
    fn rows_in_plan_order_orphan_free_first() {
        // Row 1 can take 2 only by stranding a seat; row 2 can without.
        // In a row of 4, the centre pair strands both ends: an end pair.
        let rows = vec![row("HAAAH"), row("AAAA")];
        assert_eq!(choose_block(Rows::plain(&rows, 2)), Some((1, 0)));
        // Only orphaning choices anywhere: the best row's.
        let rows = vec![row("SSSSS"), row("HAAAH"), row("SAAAS")];
        assert_eq!(choose_block(Rows::plain(&rows, 2)), Some((1, 1)));
        assert_eq!(choose_block(Rows::plain(&rows, 4)), None);
        assert!(has_run(&rows[1], 3) && !has_run(&rows[1], 4));
    }

    #[test]
    fn pairs_in_rows_of_ten_never_strand_a_seat() {
        // Fill 10 rows of 10 pair by pair, as a stampede of pairs would:
        // every choice is orphan-free, to the last seat.
        let mut rows = vec![vec![true; 10]; 10];
        while let Some((r, s)) = choose_block(Rows::plain(&rows, 2)) {
            assert_eq!(
                best(&rows[r], 2, true),
                Some(s),
                "an orphan-free block was chosen"
            );
            rows[r][s..s + 2].iter_mut().for_each(|seat| *seat = false);
        }
        assert!(
            rows.iter().all(|r| r.iter().all(|free| !free)),
            "every seat taken, none stranded"
        );
        assert_eq!(orphans(&row("AHAHHAAHA")), 3, "seats 1, 3 and 9");
        assert_eq!(orphans(&row("A")), 1);
        assert_eq!(orphans(&row("AAHAA")), 0);
    }

    #[test]
    fn the_centre_rule_can_split_a_row_into_odd_runs() {
        // The contract's ranking puts 4 of 10 at seats 4-7 (centred, no
        // orphan), leaving 3 and 3: a later pair there must strand a seat.
        // So mixed even quantities do not guarantee zero orphans; the
        // stampede test asserts that for pairs, and disjointness and
        // adjacency for mixed quantities.
        let mut r = row("AAAAAAAAAA");
        assert_eq!(best(&r, 4, true), Some(3));
        r[3..7].iter_mut().for_each(|seat| *seat = false);
        assert_eq!(best(&r, 2, true), None);
        assert_eq!(best(&r, 2, false), Some(1));
    }
}
