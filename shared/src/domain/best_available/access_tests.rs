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

#[test]
fn with_neither_the_ranking_is_the_one_before_access() {
    // The same rows with and without an access list of `.`s: the tiers
    // only ever differ where a seat is for someone.
    let rows = ["AAHAAAAHAA", "HAAAHAAAAH", "AAAAAAAAAA"];
    let (free, _) = section(&rows);
    let none: Vec<RowAccess> = rows
        .iter()
        .map(|r| RowAccess::new(Some(vec![None; r.len()])))
        .collect();
    for n in 1..=4 {
        let listed = asked(&free, &none, n, 0);
        assert_eq!(choose_block(listed), choose_block(Rows::plain(&free, n)));
        for losses in 1..4 {
            assert_eq!(
                spread_candidates(listed, losses),
                spread_candidates(Rows::plain(&free, n), losses)
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
fn a_read_is_decided_by_a_block_of_the_best_tier_only() {
    let decided = |rows: &[&str], wheelchair| {
        let (free, access) = section(rows);
        spread_is_decided(asked(&free, &access, 2, wheelchair), 0)
    };
    assert!(
        !decided(&["ACCA"], 0),
        "a later row may have a block without a companion seat"
    );
    assert!(decided(&["ACCA", "AAAA"], 0));
    assert!(
        !decided(&["AWAA"], 1),
        "a later row may have a companion seat beside a space"
    );
    assert!(decided(&["AAWCAA"], 1));
    // Measured against blocks the request may take.
    let (free, access) = section(&["AAAA", "AWAA"]);
    let one = asked(&free, &access, 2, 1);
    assert_eq!(rows_behind_a_free_run(one, 1), 0);
    assert_eq!(rows_behind_a_free_run(Rows::plain(&free, 2), 1), 1);
}
