//! The ranking's access rules (API.md, "Accessible seats"): a table case
//! per rule, and the spread after lost races keeping to them.

use std::collections::BTreeSet;

use super::*;

/// A row: `A` a free seat, `W` a free wheelchair space, `C` a free
/// companion seat, `w` and `c` those taken, anything else a taken seat.
fn seats(s: &str) -> (Vec<bool>, RowAccess) {
    let free = s.chars().map(|c| matches!(c, 'A' | 'W' | 'C')).collect();
    let access = s
        .chars()
        .map(|c| match c {
            'W' | 'w' => Some(Access::Wheelchair),
            'C' | 'c' => Some(Access::Companion),
            _ => None,
        })
        .collect();
    (free, RowAccess::new(Some(access)))
}

/// `free` and `access` asked for `n` seats, `wheelchair` of them spaces.
fn asked<'a>(
    free: &'a [Vec<bool>],
    access: &'a [RowAccess],
    n: usize,
    wheelchair: usize,
) -> Rows<'a> {
    let ask = Ask { n, wheelchair };
    Rows { free, access, ask }
}

fn section(rows: &[&str]) -> (Vec<Vec<bool>>, Vec<RowAccess>) {
    rows.iter().map(|r| seats(r)).unzip()
}

/// [`choose_block`] over rows written as [`seats`], for `n` seats with
/// `wheelchair` wheelchair spaces.
fn choose(rows: &[&str], n: usize, wheelchair: usize) -> Option<(usize, usize)> {
    let (free, access) = section(rows);
    choose_block(asked(&free, &access, n, wheelchair))
}

#[test]
fn the_ranking_by_access_a_case_per_rule() {
    type Case<'a> = (&'a [&'a str], usize, usize, Option<(usize, usize)>, &'a str);
    let cases: &[Case] = &[
        // (rows, n, wheelchair, choice as (row, start), the rule)
        (
            &["AAAAWAAAAA"],
            2,
            0,
            Some((0, 5)),
            "none asked: never a wheelchair space, even at the centre",
        ),
        (
            &["WWWW"],
            1,
            0,
            None,
            "none asked: wheelchair spaces alone are no block",
        ),
        (
            &["WAAA"],
            2,
            0,
            Some((0, 2)),
            "a free wheelchair space beside a block is a free seat, no orphan",
        ),
        (
            &["ACCA", "AAAA"],
            2,
            0,
            Some((1, 0)),
            "none asked: no companion seat first, even a row behind",
        ),
        (
            &["CAACH", "AAA"],
            2,
            0,
            Some((0, 2)),
            "none asked: the orphan tier before the companion seats",
        ),
        (
            &["AWWA"],
            2,
            1,
            Some((0, 0)),
            "exactly one asked: a block with two is no block",
        ),
        (
            &["AWWA"],
            2,
            2,
            Some((0, 1)),
            "all asked: every seat a wheelchair space",
        ),
        (
            &["AWWA"],
            2,
            0,
            None,
            "none asked: every pair holds a wheelchair space",
        ),
        (
            &["AAAA"],
            2,
            1,
            None,
            "one asked: a row without wheelchair spaces has nothing",
        ),
        (
            &["AAWAAA", "AAWCAA"],
            2,
            1,
            Some((1, 2)),
            "spaces asked: the most companion seats first, even a row behind",
        ),
        (
            &["HAWCH", "AAWAAA"],
            2,
            1,
            Some((0, 2)),
            "spaces asked: companion seats before the orphan tier",
        ),
        (
            &["HAWCH", "AAWCAA"],
            2,
            1,
            Some((1, 2)),
            "spaces asked: then the orphan tier",
        ),
        (
            &["AAWCAA", "AAWCAA"],
            2,
            1,
            Some((0, 2)),
            "spaces asked: then the row",
        ),
        (
            &["AwCA", "CWCA"],
            3,
            1,
            Some((1, 0)),
            "a taken wheelchair space is no space",
        ),
    ];
    for &(rows, n, wheelchair, choice, rule) in cases {
        assert_eq!(choose(rows, n, wheelchair), choice, "{rule}: {rows:?}");
    }
}

/// The choice before access existed (at 8c789f1^), kept as an oracle:
/// the first tier (no orphan, then any) with a block, its first row, there
/// the block nearest the centre, ties to the lower start.
fn choice_before_access(rows: &[Vec<bool>], n: usize) -> Option<(usize, usize)> {
    let best = |free: &[bool], orphan_free: bool| {
        (0..=free.len().checked_sub(n)?)
            .filter(|&s| free[s..s + n].iter().all(|&f| f))
            .filter(|&s| !(orphan_free && leaves_orphan(free, s, n)))
            .min_by_key(|&s| ((2 * s + n).abs_diff(free.len()), s))
    };
    [true, false].into_iter().find_map(|orphan_free| {
        let mut rows = rows.iter().enumerate();
        rows.find_map(|(r, free)| best(free, orphan_free).map(|s| (r, s)))
    })
}

#[test]
fn with_neither_the_ranking_is_the_one_before_access() {
    // Random sections of 5 rows of 8, with no access list and with one
    // of `.`s alike: the choice the contract made before access.
    let mut state = 11u64;
    for _ in 0..300 {
        let free: Vec<Vec<bool>> = (0..5)
            .map(|_| {
                (0..8)
                    .map(|_| {
                        state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                        !(state >> 33).is_multiple_of(3)
                    })
                    .collect()
            })
            .collect();
        let none = vec![RowAccess::new(Some(vec![None; 8])); 5];
        for n in 1..=4 {
            let before = choice_before_access(&free, n);
            assert_eq!(choose_block(Rows::plain(&free, n)), before, "{free:?} {n}");
            assert_eq!(
                choose_block(asked(&free, &none, n, 0)),
                before,
                "{free:?} {n}"
            );
        }
    }
}

#[test]
fn the_spread_after_lost_races_keeps_to_blocks_the_request_may_take() {
    let (free, access) = section(&["AAAAWAAAAA", "AWAAAAAAWA", "AAAAAAAAAA"]);
    let picks = |wheelchair| {
        let rows = asked(&free, &access, 2, wheelchair);
        (0..256)
            .filter_map(|p| spread_choice(rows, 4, p))
            .collect::<BTreeSet<_>>()
    };
    let spaces = |&(r, s): &(usize, usize)| {
        (s..s + 2)
            .filter(|&i| access[r].is(i, Access::Wheelchair))
            .count()
    };
    let none = picks(0);
    assert!(none.len() > 8, "the window spreads: {none:?}");
    assert!(none.iter().all(|block| spaces(block) == 0), "{none:?}");
    let one = picks(1);
    assert_eq!(
        one,
        BTreeSet::from([(0, 4), (1, 0), (1, 8)]),
        "the tiles of blocks with exactly one space, of the best tier there"
    );
}

#[test]
fn a_read_is_decided_by_a_block_of_the_best_tier_any_row_could_give() {
    // (the section's rows, how many are read, wheelchair spaces asked,
    // decided)
    let cases: [(&[&str], usize, usize, bool); 6] = [
        (&["ACCA", "AAAA"], 1, 0, false), // a later row may have no companion seat
        (&["ACCA", "AAAA"], 2, 0, true),
        (&["AWAA", "AAWC"], 1, 1, false), // row 2's plan has a space beside a companion seat
        (&["AWAA", "AAWC"], 2, 1, true),
        (&["AWAA", "AAWA"], 1, 1, true), // no space has one beside it: no orphan decides
        (&["HWAA", "AAWA"], 1, 1, false), // only a block that strands a seat so far
    ];
    for (rows, read, wheelchair, decided) in cases {
        let (free, access) = section(rows);
        let seen = asked(&free[..read], &access, 2, wheelchair);
        assert_eq!(spread_is_decided(seen, 0), decided, "{rows:?}, {read} read");
    }
    // Measured against blocks the request may take.
    let (free, access) = section(&["AAAA", "AWAA"]);
    let one = asked(&free, &access, 2, 1);
    assert_eq!(rows_behind_a_free_run(one, 1), 0);
    assert_eq!(rows_behind_a_free_run(Rows::plain(&free, 2), 1), 1);
}
