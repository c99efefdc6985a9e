//! best-available's choice as a pure function of a section's rows (which
//! seats are free for this order), per DESIGN.md: n adjacent seats in one
//! row; blocks that leave no orphan first, best row (plan order) first,
//! then the block whose centre is nearest the row's centre, ties to the
//! lower seat numbers; otherwise the same ranking with orphans allowed.

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

/// The best block of `n` free seats in one row (its 0-based start), among
/// those that leave no orphan if `orphan_free`, else among all: nearest
/// the row's centre, ties to the lower start.
pub fn best_block(free: &[bool], n: usize, orphan_free: bool) -> Option<usize> {
    if n == 0 || n > free.len() {
        return None;
    }
    // run[i]: free seats in a row from i on.
    let mut run = vec![0usize; free.len() + 1];
    for i in (0..free.len()).rev() {
        run[i] = if free[i] { run[i + 1] + 1 } else { 0 };
    }
    // Twice the distance between the block's centre and the row's centre.
    let off_centre = |start: usize| (2 * start + n).abs_diff(free.len());
    (0..=free.len() - n)
        .filter(|&start| run[start] >= n && !(orphan_free && leaves_orphan(free, start, n)))
        .min_by_key(|&start| (off_centre(start), start))
}

/// Whether a row has `n` adjacent free seats at all.
pub fn has_run(free: &[bool], n: usize) -> bool {
    best_block(free, n, false).is_some()
}

/// The whole rule over a section's rows in plan order: `(row index, start)`.
pub fn choose_block(rows: &[Vec<bool>], n: usize) -> Option<(usize, usize)> {
    [true, false].into_iter().find_map(|orphan_free| {
        rows.iter()
            .enumerate()
            .find_map(|(r, free)| best_block(free, n, orphan_free).map(|s| (r, s)))
    })
}

/// How many rows behind the best row that still has a run of `n` free
/// seats (`rows` as they are now) a block held in row `held_row` lies: 0
/// when no better row has one. What API.md's weaker order under a crowd
/// is measured by (any run, whatever its tier: a conservative measure).
pub fn rows_behind_a_free_run(rows: &[Vec<bool>], held_row: usize, n: usize) -> usize {
    rows.iter()
        .take(held_row)
        .position(|free| has_run(free, n))
        .map_or(0, |better| held_row - better)
}

/// Orphans in a row: free seats whose neighbours are both taken (or the
/// row's end), which no request for two or more can ever use.
pub fn orphans(free: &[bool]) -> usize {
    (0..free.len())
        .filter(|&i| free[i] && (i == 0 || !free[i - 1]) && (i + 1 == free.len() || !free[i + 1]))
        .count()
}

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

/// The blocks of one row a crowd spreads over, best first by the
/// contract's ranking within a row (nearest the centre, then lower): the
/// row's own best block of the tier and those that tile the row from it
/// (starts n apart), so rivals that win different ones at once leave no
/// seat stranded between them.
fn row_tiles(free: &[bool], n: usize, orphan_free: bool) -> Vec<usize> {
    let Some(choice) = best_block(free, n, orphan_free) else {
        return Vec::new();
    };
    let mut tiles: Vec<usize> = (0..=free.len() - n)
        .filter(|&start| start % n == choice % n && free[start..start + n].iter().all(|&seat| seat))
        .filter(|&start| !(orphan_free && leaves_orphan(free, start, n)))
        .collect();
    tiles.sort_by_key(|&start| ((2 * start + n).abs_diff(free.len()), start));
    tiles
}

/// The blocks, in the contract's ranking, that a request which lost
/// `losses` races may choose among. With `losses == 0`, exactly the
/// contract's choice. After lost races, the first [`spread_window`] blocks
/// of the rows from the first that shows any run of n and the next
/// [`MAX_SPREAD_ROWS`] - 1, each row's tiles in turn: those that leave no
/// orphan when any row of that span has one, else any. The span is
/// anchored at a run of any tier because a request's rows go stale
/// unevenly (what it checked is fresh, the rest as first read): a stale
/// free seat beside a fresh taken one makes a row look as if its blocks
/// left an orphan, and anchoring at the first orphan-free row sent buyers
/// rows behind a pair left free.
pub fn spread_candidates(rows: &[Vec<bool>], n: usize, losses: u32) -> Vec<(usize, usize)> {
    if losses == 0 {
        return choose_block(rows, n).into_iter().collect();
    }
    let span = spread_span(rows, n);
    let orphan_free = rows[span.clone()]
        .iter()
        .any(|free| best_block(free, n, true).is_some());
    let first = span.start;
    rows[span]
        .iter()
        .enumerate()
        .flat_map(|(i, free)| {
            row_tiles(free, n, orphan_free)
                .into_iter()
                .map(move |s| (first + i, s))
        })
        .take(spread_window(losses))
        .collect()
}

/// The blocks after lost races a check may read ahead of the window, in
/// rank order: from the first row with a run of n on, to the section's
/// last row read, each row's tiles (those leaving no orphan if the row has
/// any). A check that reads them learns of the next rows before a window
/// that moves there needs them.
pub fn blocks_ahead(rows: &[Vec<bool>], n: usize) -> Vec<(usize, usize)> {
    let first = spread_span(rows, n).start;
    rows.iter()
        .enumerate()
        .skip(first)
        .flat_map(|(r, free)| {
            let orphan_free = best_block(free, n, true).is_some();
            row_tiles(free, n, orphan_free)
                .into_iter()
                .map(move |s| (r, s))
        })
        .collect()
}

/// The rows (of those read) a request that lost races spreads over: from
/// the first with a run of n, [`MAX_SPREAD_ROWS`] at most; empty without
/// such a row.
fn spread_span(rows: &[Vec<bool>], n: usize) -> std::ops::Range<usize> {
    match rows.iter().position(|free| has_run(free, n)) {
        Some(first) => first..rows.len().min(first + MAX_SPREAD_ROWS),
        None => rows.len()..rows.len(),
    }
}

/// Whether the rows read so far (a prefix of the section, in plan order)
/// already decide [`spread_choice`], so no later row can enter it.
/// Uncontended, once a row has an orphan-free block (the contract's tier
/// one: the first such is the choice). After lost races, once the window
/// is full of orphan-free blocks of the span, or the span is whole.
pub fn spread_is_decided(rows: &[Vec<bool>], n: usize, losses: u32) -> bool {
    if losses == 0 {
        return rows.iter().any(|free| best_block(free, n, true).is_some());
    }
    let span = spread_span(rows, n);
    if span.is_empty() {
        return false;
    }
    let orphan_free: usize = rows[span.clone()]
        .iter()
        .map(|free| row_tiles(free, n, true).len())
        .sum();
    orphan_free >= spread_window(losses) || span.len() == MAX_SPREAD_ROWS
}

/// The choice of a request that lost `losses` races in a row: the
/// contract's choice when uncontended (`losses == 0`); after that, one of
/// the first `2^losses` (at most [`MAX_SPREAD`], over at most
/// [`MAX_SPREAD_ROWS`] rows) blocks of the contract's tier in rank order,
/// picked by `pick` (any number; reduced to the window). A stampede spreads over the best row's blocks instead of
/// colliding on one, and spills into the next rows only once it outnumbers
/// them: a buyer gets a worse row than the best one it read only after
/// losing races for the better blocks, and never by more than its window.
pub fn spread_choice(
    rows: &[Vec<bool>],
    n: usize,
    losses: u32,
    pick: u64,
) -> Option<(usize, usize)> {
    let candidates = spread_candidates(rows, n, losses);
    let window = candidates.len().max(1) as u64;
    candidates.get((pick % window) as usize).copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

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
                rows_behind_a_free_run(&rows, held, n),
                behind,
                "row {held}, n {n}"
            );
        }
    }

    /// `A` free, anything else taken.
    fn row(s: &str) -> Vec<bool> {
        s.chars().map(|c| c == 'A').collect()
    }

    #[test]
    fn the_centre_of_an_empty_row() {
        assert_eq!(
            best_block(&row("AAAAAAAAAA"), 2, true),
            Some(4),
            "seats 5-6 of 10"
        );
        assert_eq!(
            best_block(&row("AAAAAAAAAA"), 4, true),
            Some(3),
            "seats 4-7 of 10"
        );
        // 9 seats, 2 wanted: starts 3 and 4 are equally off centre; the lower wins.
        assert_eq!(best_block(&row("AAAAAAAAA"), 2, false), Some(3));
        assert_eq!(
            best_block(&row("AAAA"), 4, true),
            Some(0),
            "a whole row leaves nothing"
        );
        assert_eq!(best_block(&row("AAA"), 4, false), None);
        assert_eq!(best_block(&row("AAA"), 0, false), None);
    }

    #[test]
    fn orphans_are_avoided_while_a_block_without_one_exists() {
        // Seats 5-6 taken: 2 more go to 3-4 (not 2-3, which strands seat 1
        // and seat 4), and ties between 3-4 and 7-8 go to the lower.
        let r = row("AAAAHHAAAA");
        assert_eq!(best_block(&r, 2, true), Some(2));
        assert!(
            leaves_orphan(&r, 1, 2),
            "seats 2-3 strand seat 1 (row end) and seat 4"
        );
        assert!(!leaves_orphan(&r, 2, 2));
        // Three free between taken seats: any 2 strand one, so only the
        // orphans-allowed tier finds them.
        let r = row("SAAAS");
        assert_eq!(best_block(&r, 2, true), None);
        assert_eq!(
            best_block(&r, 2, false),
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
        assert_eq!(choose_block(&rows, 2), Some((1, 0)));
        // Only orphaning choices anywhere: the best row's.
        let rows = vec![row("SSSSS"), row("HAAAH"), row("SAAAS")];
        assert_eq!(choose_block(&rows, 2), Some((1, 1)));
        assert_eq!(choose_block(&rows, 4), None);
        assert!(has_run(&rows[1], 3) && !has_run(&rows[1], 4));
    }

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
            assert_eq!(spread_choice(&rows, 2, 0, pick), choose_block(&rows, 2));
        }
        assert_eq!(
            choose_block(&rows, 2),
            Some((1, 4)),
            "seats 5-6 of the first row with room"
        );
        let picks = |rows: &[Vec<bool>], n, losses| {
            (0..256)
                .filter_map(|p| spread_choice(rows, n, losses, p))
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
        assert_eq!(spread_choice(&rows, 4, 3, 0), None);
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
        assert!(spread_is_decided(&rows[..4], 2, 1), "the span is whole");
        let rows = vec![row("AAAHHHHHHH"), row("HHAAAAHHHH")];
        assert_eq!(picks(&rows, 2, 1), BTreeSet::from([(1, 2), (1, 4)]));
    }

    #[test]
    fn the_rows_read_decide_the_choice_once_the_window_is_full() {
        let rows = vec![row("AAAAAAAAAA"), row("AAAAAAAAAA")];
        // One orphan-free pair decides an uncontended choice.
        assert!(spread_is_decided(&rows[..1], 2, 0));
        // Five pairs a row: a window of 8 needs both rows, one of 16 more
        // than they hold.
        assert!(!spread_is_decided(&rows[..1], 2, 3));
        assert!(spread_is_decided(&rows, 2, 3));
        assert!(!spread_is_decided(&rows, 2, 4));
        // A row of orphaning blocks only decides nothing.
        assert!(!spread_is_decided(&[row("SAAAS")], 2, 0));
        // Fours in rows of four: one block a row, so the rows bound the
        // read and the spread, not the window.
        let fours = vec![row("AAAA"); 10];
        assert!(!spread_is_decided(&fours[..MAX_SPREAD_ROWS - 1], 4, 6));
        assert!(spread_is_decided(&fours[..MAX_SPREAD_ROWS], 4, 6));
        let spread: BTreeSet<_> = (0..256)
            .filter_map(|p| spread_choice(&fours, 4, 6, p))
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
            while choose_block(&rows, 2).is_some() {
                let read = rows.clone();
                let mut won = Vec::new();
                for _ in 0..12 {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let (r, s) = spread_choice(&read, 2, losses, state >> 33)
                        .unwrap_or_else(|| unreachable!());
                    let ahead: usize = read[..r]
                        .iter()
                        .map(|free| row_tiles(free, 2, true).len())
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

    #[test]
    fn pairs_in_rows_of_ten_never_strand_a_seat() {
        // Fill 10 rows of 10 pair by pair, as a stampede of pairs would:
        // every choice is orphan-free, to the last seat.
        let mut rows = vec![vec![true; 10]; 10];
        while let Some((r, s)) = choose_block(&rows, 2) {
            assert_eq!(
                best_block(&rows[r], 2, true),
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
        assert_eq!(best_block(&r, 4, true), Some(3));
        r[3..7].iter_mut().for_each(|seat| *seat = false);
        assert_eq!(best_block(&r, 2, true), None);
        assert_eq!(best_block(&r, 2, false), Some(1));
    }
}
