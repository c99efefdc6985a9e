use super::*;
use crate::domain::{RowId, RowPlan, SectionId};

fn section(id: &str, rows: usize, row_len: usize) -> SectionPlan {
    SectionPlan {
        section_id: SectionId::parse(id).unwrap_or_else(|_| unreachable!()),
        rows: (0..rows)
            .map(|i| {
                let row =
                    RowId::parse(&format!("{i:0>row_len$}")).unwrap_or_else(|_| unreachable!());
                RowPlan::plain(row, 50)
            })
            .collect(),
        capacity: None,
    }
}

/// `sections` with a wheelchair space at seat 1 of the first row.
fn with_space(mut sections: Vec<SectionPlan>) -> Vec<SectionPlan> {
    sections[0].rows[0].wheelchair = vec![1];
    sections
}

/// An event of `sections` sections `S1…` of `rows` rows.
fn event(sections: usize, rows: usize) -> Vec<SectionPlan> {
    (1..=sections)
        .map(|k| section(&format!("S{k}"), rows, rows.to_string().len()))
        .collect()
}

#[test]
fn summaries_spread_over_items_that_stay_under_a_kilobyte() {
    let long_id = "s".repeat(crate::domain::MAX_ID_LEN);
    let ga = SectionPlan {
        rows: Vec::new(),
        capacity: Some(100),
        ..section("FLOOR", 0, 1)
    };
    // (what, the event's sections, items expected)
    let cases = [
        ("one row", vec![section("A", 1, 1)], 1),
        ("under sixteen rows, one each", vec![section("A", 9, 1)], 9),
        ("a small event still spreads", event(2, 20), 16),
        ("a general-admission section has none", vec![ga], 1),
        // 2,000 rows of `S50-40`: 25 to a kilobyte.
        ("the bench's stadium", event(50, 40), 80),
        (
            "longest ids, 5 rows an item",
            vec![section(&long_id, 2_000, 64)],
            400,
        ),
        // A wheelchair space anywhere: every row's clear run budgeted,
        // 20 rows to a kilobyte.
        (
            "the stadium with a wheelchair space",
            with_space(event(50, 40)),
            100,
        ),
    ];
    for (what, sections, items) in cases {
        let layout = RunsLayout::of(&sections);
        assert_eq!(layout.items(), items, "{what}");
        // No item's worst-case bytes over the kilobyte.
        let mut per_item = vec![0usize; items as usize];
        let mut name = 0;
        for (s, r, item) in layout.place(&sections) {
            per_item[item as usize] += 1;
            name = name.max(s.section_id.as_str().len() + 1 + r.row.as_str().len());
        }
        let most = per_item.iter().copied().max().unwrap_or(0);
        let key = "PK".len() + "RUNS#".len() + 20 + 1 + 5 + "SK".len() + "RUNS".len();
        let spaces = sections
            .iter()
            .flat_map(|s| &s.rows)
            .any(|r| !r.wheelchair.is_empty());
        let value = RUNS_VALUE_BYTES + if spaces { RUNS_CLEAR_BYTES } else { 0 };
        assert!(key + most * (name + value) <= 1024, "{what}: {most} rows");
    }
}

#[test]
fn a_sections_rows_take_keys_of_their_own_beside_other_sections() {
    let sections = event(50, 40);
    let placed: Vec<_> = RunsLayout::of(&sections).place(&sections).collect();
    assert_eq!(placed.len(), 2_000);
    // The first (a crowd's favourite) section's 40 rows: 40 keys.
    let first: std::collections::HashSet<u32> =
        placed.iter().take(40).map(|(_, _, item)| *item).collect();
    assert_eq!(first.len(), 40);
    // And an item holds rows of as many sections as it holds rows.
    let of_item_0: Vec<_> = placed.iter().filter(|(_, _, item)| *item == 0).collect();
    let sections_of_0: std::collections::HashSet<_> = of_item_0
        .iter()
        .map(|(s, _, _)| s.section_id.as_str())
        .collect();
    assert_eq!(of_item_0.len(), 25);
    assert_eq!(sections_of_0.len(), 25);
    // Front rows, which a crowd loads most, are not stacked: no item
    // holds the same row of more than two sections, and the 50
    // sections' first rows take 25 items or more.
    let mut ranks: std::collections::HashMap<(u32, &str), usize> = Default::default();
    for (_, r, item) in &placed {
        *ranks.entry((*item, r.row.as_str())).or_default() += 1;
    }
    let most = ranks.values().copied().max().unwrap_or(0);
    assert!(most <= 2, "{most} sections' same row on one item");
    let fronts: std::collections::HashSet<u32> = placed
        .iter()
        .filter(|(_, r, _)| r.row.as_str() == "00")
        .map(|(_, _, item)| *item)
        .collect();
    assert!(fronts.len() >= 25, "{} items", fronts.len());
}

fn held(ms: i64) -> ProjectedSeat {
    ProjectedSeat::Held {
        expires_at: Millis(ms),
    }
}

/// (what, seats in the row, its taken seats, the runs expected).
type Case = (&'static str, u32, Vec<(u32, ProjectedSeat)>, RowRuns);

#[test]
fn runs_of_a_row_table() {
    let t = Millis(1_000);
    let cases: Vec<Case> = vec![
        (
            "an untouched row",
            10,
            vec![],
            RowRuns {
                longest: 10,
                clear: None,
                until: None,
            },
        ),
        (
            "every tenth held",
            50,
            (1..=5)
                .map(|i| (i * 10, held(9_000 + i64::from(i))))
                .collect(),
            RowRuns {
                longest: 9,
                clear: None,
                until: Some(Millis(9_001)),
            },
        ),
        (
            "sold seats never expire",
            6,
            vec![(3, ProjectedSeat::Sold)],
            RowRuns {
                longest: 3,
                clear: None,
                until: None,
            },
        ),
        (
            "a hold expired by then is free",
            6,
            vec![(3, held(1_000)), (5, held(2_000))],
            RowRuns {
                longest: 4,
                clear: None,
                until: Some(Millis(2_000)),
            },
        ),
        (
            "all taken",
            2,
            vec![(1, ProjectedSeat::Sold), (2, held(5_000))],
            RowRuns {
                longest: 0,
                clear: None,
                until: Some(Millis(5_000)),
            },
        ),
        (
            "seats past the row's end are ignored",
            3,
            vec![(4, ProjectedSeat::Sold)],
            RowRuns {
                longest: 3,
                clear: None,
                until: None,
            },
        ),
    ];
    for (what, seats, taken, want) in cases {
        let taken: RowProjection = taken.into_iter().collect();
        assert_eq!(RowRuns::of(seats, &taken, t, &[]), want, "{what}");
    }
}

#[test]
fn a_summary_is_written_only_when_it_would_change_table() {
    let runs = |longest, until: Option<i64>| RowRuns {
        longest,
        clear: None,
        until: until.map(Millis),
    };
    // (what, before, after, every seat changed, version, written)
    let cases = [
        (
            "a seat outside the longest run",
            runs(9, Some(5)),
            runs(9, Some(5)),
            true,
            3,
            false,
        ),
        (
            "the longest run shortened",
            runs(9, None),
            runs(4, Some(5)),
            true,
            3,
            true,
        ),
        (
            "a released seat lengthens it",
            runs(4, None),
            runs(9, None),
            true,
            3,
            true,
        ),
        (
            "a first hold: until appears",
            runs(9, None),
            runs(9, Some(5)),
            true,
            3,
            true,
        ),
        (
            "an earlier hold: until moves",
            runs(9, Some(7)),
            runs(9, Some(5)),
            true,
            3,
            true,
        ),
        (
            "delivered again: nothing changed",
            runs(9, None),
            runs(9, None),
            false,
            3,
            true,
        ),
        (
            "delivered again with newer seats",
            runs(9, None),
            runs(9, None),
            false,
            4,
            true,
        ),
        (
            "every eighth version",
            runs(9, None),
            runs(9, None),
            true,
            16,
            true,
        ),
    ];
    for (what, before, after, changed, version, written) in cases {
        assert_eq!(
            RowRuns::worth_writing(before, after, changed, version),
            written,
            "{what}"
        );
    }
}

#[test]
fn a_summary_tells_until_its_first_live_hold_expires() {
    let runs = RowRuns {
        longest: 9,
        clear: None,
        until: Some(Millis(5_000)),
    };
    let cases = [
        ("before the expiry", 4_999, 10, false),
        ("before, and a shorter run", 4_999, 9, true),
        ("at the expiry the hold is free", 5_000, 10, true),
        ("after it", 6_000, 10, true),
    ];
    for (what, now, n, fits) in cases {
        assert_eq!(
            RowRuns::may_fit(Some(&runs), n, 0, Millis(now)),
            fits,
            "{what}"
        );
    }
    assert!(
        RowRuns::may_fit(None, 50, 0, Millis(0)),
        "no summary: maybe"
    );
    let forever = RowRuns {
        longest: 2,
        clear: None,
        until: None,
    };
    assert!(!RowRuns::may_fit(Some(&forever), 3, 0, Millis(i64::MAX)));
}

#[test]
fn a_rows_clear_run_leaves_out_its_wheelchair_spaces() {
    let t = Millis(1_000);
    let free = RowProjection::new();
    let runs = |taken: &RowProjection, wheelchair: &[u32]| RowRuns::of(10, taken, t, wheelchair);
    // Seats 1-4 and 6-10 on either side of the space at 5.
    assert_eq!(runs(&free, &[5]).clear, Some(5));
    assert_eq!(runs(&free, &[5]).longest, 10);
    assert_eq!(
        runs(&free, &[]).clear,
        None,
        "a row without spaces has none"
    );
    assert_eq!(runs(&free, &[1, 10]).clear, Some(8));
    let taken: RowProjection = [(7, ProjectedSeat::Sold)].into_iter().collect();
    assert_eq!(runs(&taken, &[5]).clear, Some(4), "seats 1-4");
    assert_eq!(
        runs(&taken, &[5]).longest,
        6,
        "seats 1-6, the space among them"
    );
    // Asked for no space, only the clear run counts; asked for one, the longest.
    let summary = runs(&taken, &[5]);
    assert!(!RowRuns::may_fit(Some(&summary), 5, 0, t));
    assert!(RowRuns::may_fit(Some(&summary), 5, 1, t));
    assert!(!RowRuns::may_fit(Some(&summary), 7, 1, t));
}
