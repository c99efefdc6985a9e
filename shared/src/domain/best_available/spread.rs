//! The choice after lost races: a request spreads over the best blocks in
//! rank order instead of colliding on one (DESIGN.md, best-available
//! under a crowd).

use super::{best_block, blocks, Rows, Tier};

/// The most blocks a buyer who keeps losing races spreads over: enough
/// for a crowd of this many in one section to win different blocks in one
/// round.
pub const MAX_SPREAD: usize = 64;

/// The most rows a spread covers, from the best row with a block: a
/// loser's read stays a few rows (a Query per ten seats) even where rows
/// hold few blocks (large quantities, a section nearly sold), and no
/// buyer is sent further back than this.
pub const MAX_SPREAD_ROWS: usize = 4;

/// How many blocks a request that lost `losses` races in a row chooses
/// among: 1 (the contract's choice) uncontended, doubling per loss.
pub fn spread_window(losses: u32) -> usize {
    (1usize << losses.min(16)).min(MAX_SPREAD)
}

/// The blocks of row `r` a crowd spreads over, best first by the
/// contract's ranking within a row (nearest the centre, then lower): the
/// row's own best block of tier `within` or better and those of that tier
/// that tile the row from it (starts n apart), so rivals that win
/// different ones at once leave no seat stranded between them.
fn row_tiles(rows: Rows, r: usize, within: Tier) -> Vec<usize> {
    let (free, access) = rows.row(r);
    let n = rows.ask.n;
    let Some(choice) = best_block(free, access, rows.ask, within) else {
        return Vec::new();
    };
    let mut tiles: Vec<usize> = blocks(free, access, rows.ask)
        .filter(|&(start, tier)| start % n == choice % n && tier <= within)
        .map(|(start, _)| start)
        .collect();
    tiles.sort_by_key(|&start| ((2 * start + n).abs_diff(free.len()), start));
    tiles
}

/// The blocks, in the contract's ranking, that a request which lost
/// `losses` races may choose among. With `losses == 0`, exactly the
/// contract's choice. After lost races, the first [`spread_window`] blocks
/// of the rows from the first that shows any block and the next
/// [`MAX_SPREAD_ROWS`] - 1, each row's tiles in turn: those of the best
/// tier any row of that span has. The span is anchored at a block of any
/// tier because a request's rows go stale unevenly (what it checked is
/// fresh, the rest as first read): a stale free seat beside a fresh taken
/// one makes a row look as if its blocks left an orphan, and anchoring at
/// the first orphan-free row sent buyers rows behind a pair left free.
pub fn spread_candidates(rows: Rows, losses: u32) -> Vec<(usize, usize)> {
    if losses == 0 {
        return super::choose_block(rows).into_iter().collect();
    }
    let span = spread_span(rows);
    let within = span.clone().filter_map(|r| rows.best_tier(r)).min();
    let Some(within) = within else {
        return Vec::new();
    };
    span.flat_map(|r| row_tiles(rows, r, within).into_iter().map(move |s| (r, s)))
        .take(spread_window(losses))
        .collect()
}

/// The blocks after lost races a check may read ahead of the window, in
/// rank order: from the first row with a block on, to the section's last
/// row read, each row's tiles (those of the row's best tier). A check
/// that reads them learns of the next rows before a window that moves
/// there needs them.
pub fn blocks_ahead(rows: Rows) -> Vec<(usize, usize)> {
    let first = spread_span(rows).start;
    (first..rows.len())
        .filter_map(|r| Some((r, rows.best_tier(r)?)))
        .flat_map(|(r, within)| row_tiles(rows, r, within).into_iter().map(move |s| (r, s)))
        .collect()
}

/// The rows (of those read) a request that lost races spreads over: from
/// the first with a block, [`MAX_SPREAD_ROWS`] at most; empty without
/// such a row.
fn spread_span(rows: Rows) -> std::ops::Range<usize> {
    match (0..rows.len()).position(|r| rows.has_block(r)) {
        Some(first) => first..rows.len().min(first + MAX_SPREAD_ROWS),
        None => rows.len()..rows.len(),
    }
}

/// Whether the rows read so far (a prefix of the section, in plan order;
/// `rows.access` the whole section's) already decide [`spread_choice`],
/// so no later row can enter it. Uncontended, once a row has a block of
/// the best tier any row could give (`Rows::decisive`: the first such is
/// the choice). After lost races, once the window is full of such blocks
/// of the span, or the span is whole.
pub fn spread_is_decided(rows: Rows, losses: u32) -> bool {
    let decisive = rows.decisive();
    if losses == 0 {
        return (0..rows.len()).any(|r| rows.best_tier(r).is_some_and(|t| t <= decisive));
    }
    let span = spread_span(rows);
    if span.is_empty() {
        return false;
    }
    let best: usize = span
        .clone()
        .map(|r| row_tiles(rows, r, decisive).len())
        .sum();
    best >= spread_window(losses) || span.len() == MAX_SPREAD_ROWS
}

/// The choice of a request that lost `losses` races in a row: the
/// contract's choice when uncontended (`losses == 0`); after that, one of
/// the first `2^losses` (at most [`MAX_SPREAD`], over at most
/// [`MAX_SPREAD_ROWS`] rows) blocks of the contract's tier in rank order,
/// picked by `pick` (any number; reduced to the window). A stampede
/// spreads over the best row's blocks instead of colliding on one, and
/// spills into the next rows only once it outnumbers them: a buyer gets a
/// worse row than the best one it read only after losing races for the
/// better blocks, and never by more than its window.
pub fn spread_choice(rows: Rows, losses: u32, pick: u64) -> Option<(usize, usize)> {
    let candidates = spread_candidates(rows, losses);
    let window = candidates.len().max(1) as u64;
    candidates.get((pick % window) as usize).copied()
}

#[cfg(test)]
mod tests {
    use super::super::tests::row;
    use super::super::{choose_block, orphans};
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn after_lost_races_the_choice_spreads_over_the_best_blocks_in_rank_order() {
        let rows = vec![
            row("SSSSSSSSSS"),
            row("AAAAAAAAAA"),
            row("HAAAH"),
            row("AAAAAAAAAA"),
        ];
        // Uncontended: exactly the contract's choice, whatever the pick.
        for pick in 0..10 {
            assert_eq!(
                spread_choice(Rows::plain(&rows, 2), 0, pick),
                choose_block(Rows::plain(&rows, 2))
            );
        }
        assert_eq!(
            choose_block(Rows::plain(&rows, 2)),
            Some((1, 4)),
            "seats 5-6 of the first row with room"
        );
        let picks = |rows: &[Vec<bool>], n, losses| {
            (0..256)
                .filter_map(|p| spread_choice(Rows::plain(rows, n), losses, p))
                .collect::<BTreeSet<_>>()
        };
        // One loss: the row's two best tiles; two: its four best.
        assert_eq!(picks(&rows, 2, 1), BTreeSet::from([(1, 4), (1, 2)]));
        assert_eq!(
            picks(&rows, 2, 2),
            BTreeSet::from([(1, 2), (1, 4), (1, 6), (1, 0)])
        );
        // Three: all five of the best row, then the next row's best
        // orphan-free tiles (row 3's pairs would strand a seat), then row 4's.
        assert_eq!(
            picks(&rows, 2, 3),
            BTreeSet::from([
                (1, 0),
                (1, 2),
                (1, 4),
                (1, 6),
                (1, 8),
                (3, 4),
                (3, 2),
                (3, 6)
            ])
        );
        // The window stops growing at MAX_SPREAD, and never offers more
        // blocks than the rows have.
        assert_eq!(spread_window(30), MAX_SPREAD);
        assert_eq!(picks(&rows, 2, 30).len(), 10);
        // Tiles that are taken or would strand a seat are left out: with
        // seats 5-6 held, 3-4 and 7-8 are the pairs left that tile.
        let rows = vec![row("AAAAHHAAAA"), row("AAAAAAAAAA")];
        assert_eq!(
            picks(&rows, 2, 2),
            BTreeSet::from([(0, 0), (0, 2), (0, 6), (0, 8)])
        );
        // A row whose only orphan-free pair is off the tiling still gets
        // that pair first (the contract's choice).
        let rows = vec![row("AAAHHAAAAA"), row("AAAAAAAAAA")];
        assert_eq!(picks(&rows, 2, 0), BTreeSet::from([(0, 5)]));
        assert_eq!(picks(&rows, 2, 1), BTreeSet::from([(0, 5), (1, 4)]));
        // Only orphaning blocks left: that tier, best row first.
        let rows = vec![row("SAAAS"), row("HAAAH")];
        assert_eq!(picks(&rows, 2, 0), BTreeSet::from([(0, 1)]));
        assert_eq!(picks(&rows, 2, 3), BTreeSet::from([(0, 1), (1, 1)]));
        assert_eq!(spread_choice(Rows::plain(&rows, 4), 3, 0), None);
        // After a loss the span starts at the first row with any run: a
        // row whose pairs all leave an orphan (here seat 3 beside the
        // held seat 4, as a stale read may show it) is not skipped for
        // rows further back; blocks leaving no orphan come first within
        // the span only.
        let rows = vec![
            row("AAAHHHHHHH"),
            row("HHHHHHHHHH"),
            row("HHHHHHHHHH"),
            row("HHHHHHHHHH"),
            row("AAAAAAAAAA"),
        ];
        assert_eq!(
            picks(&rows, 2, 0),
            BTreeSet::from([(4, 4)]),
            "the contract's tier"
        );
        assert_eq!(picks(&rows, 2, 1), BTreeSet::from([(0, 1)]));
        assert!(
            spread_is_decided(Rows::plain(&rows[..4], 2), 1),
            "the span is whole"
        );
        let rows = vec![row("AAAHHHHHHH"), row("HHAAAAHHHH")];
        assert_eq!(picks(&rows, 2, 1), BTreeSet::from([(1, 2), (1, 4)]));
    }

    #[test]
    fn the_rows_read_decide_the_choice_once_the_window_is_full() {
        let rows = vec![row("AAAAAAAAAA"), row("AAAAAAAAAA")];
        // One orphan-free pair decides an uncontended choice.
        assert!(spread_is_decided(Rows::plain(&rows[..1], 2), 0));
        // Five pairs a row: a window of 8 needs both rows, one of 16 more
        // than they hold.
        assert!(!spread_is_decided(Rows::plain(&rows[..1], 2), 3));
        assert!(spread_is_decided(Rows::plain(&rows, 2), 3));
        assert!(!spread_is_decided(Rows::plain(&rows, 2), 4));
        // A row of orphaning blocks only decides nothing.
        assert!(!spread_is_decided(Rows::plain(&[row("SAAAS")], 2), 0));
        // Fours in rows of four: one block a row, so the rows bound the
        // read and the spread, not the window.
        let fours = vec![row("AAAA"); 10];
        assert!(!spread_is_decided(
            Rows::plain(&fours[..MAX_SPREAD_ROWS - 1], 4),
            6
        ));
        assert!(spread_is_decided(
            Rows::plain(&fours[..MAX_SPREAD_ROWS], 4),
            6
        ));
        let spread: BTreeSet<_> = (0..256)
            .filter_map(|p| spread_choice(Rows::plain(&fours, 4), 6, p))
            .collect();
        assert_eq!(spread, (0..MAX_SPREAD_ROWS).map(|r| (r, 0)).collect());
    }

    #[test]
    fn rivals_winning_different_tiles_at_once_strand_no_seat_and_fill_rows_in_order() {
        // Any set of blocks picked from one read, all won at once, leaves
        // every row orphan-free, and a read never offers a block while its
        // window's worth of orphan-free blocks rank ahead of it.
        for losses in [1, 3, 5] {
            let mut rows = vec![vec![true; 10]; 10];
            let mut state = 7u64;
            while choose_block(Rows::plain(&rows, 2)).is_some() {
                let read = rows.clone();
                let mut won = Vec::new();
                for _ in 0..12 {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let (r, s) = spread_choice(Rows::plain(&read, 2), losses, state >> 33)
                        .unwrap_or_else(|| unreachable!());
                    let ahead: usize = (0..r)
                        .map(|i| row_tiles(Rows::plain(&read, 2), i, Tier::BEST).len())
                        .sum();
                    assert!(
                        ahead < spread_window(losses),
                        "row {r} behind {ahead} better blocks"
                    );
                    if rows[r][s..s + 2].iter().all(|&seat| seat) {
                        rows[r][s..s + 2].iter_mut().for_each(|seat| *seat = false);
                        won.push(r);
                    }
                }
                assert!(!won.is_empty());
                assert!(rows.iter().all(|free| orphans(free) == 0), "{rows:?}");
            }
            assert!(
                rows.iter().all(|r| r.iter().all(|free| !free)),
                "every seat taken, none stranded"
            );
        }
    }
}
