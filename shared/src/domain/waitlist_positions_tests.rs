use super::*;

const T: i64 = 1_800_000_000_000;

fn at(ms: i64) -> Millis {
    Millis(T + ms)
}

fn joins(ms: &[i64]) -> Vec<Millis> {
    ms.iter().map(|&m| at(m)).collect()
}

fn left(at_ms: i64, joined_ms: i64) -> Departure {
    Departure {
        offer_expires_at: None,
        at: at(at_ms),
        joined_at: at(joined_ms),
    }
}

/// Positions as of `now`, having read everything stamped in `since`.
fn read(since: Since, now: i64) -> Positions {
    Positions::default().update(&since, at(now))
}

#[test]
fn each_entry_counts_the_waiting_entries_that_joined_in_earlier_seconds() {
    let p = read(
        Since {
            ends: vec![],
            joins: joins(&[0, 1_000, 1_500, 2_000, 5_000]),
            departures: vec![],
        },
        60_000,
    );
    assert_eq!(p.waiting(), 5);
    let cases = [
        (0, 1),
        (1_000, 2),
        // One second's joins are not told apart: the contract allows them.
        (1_500, 2),
        (2_000, 4),
        (5_000, 5),
        // A join after everything read stands behind all of it.
        (9_000, 6),
    ];
    for (joined, want) in cases {
        assert_eq!(p.position(at(joined)), want, "joined at +{joined} ms");
    }
}

#[test]
fn departures_leave_the_count_and_the_positions_behind_them() {
    let p = read(
        Since {
            ends: vec![],
            joins: joins(&[0, 1_000, 2_000, 3_000]),
            departures: vec![left(4_000, 1_000), left(4_500, 0)],
        },
        60_000,
    );
    assert_eq!(p.waiting(), 2);
    assert_eq!(p.position(at(2_000)), 1);
    assert_eq!(p.position(at(3_000)), 2);
}

#[test]
fn what_was_stamped_within_the_settling_time_is_read_again_and_counted_once() {
    let now = 100_000;
    let first = Positions::default().update(
        &Since {
            ends: vec![],
            joins: joins(&[0, now - 1_000]),
            departures: vec![],
        },
        at(now),
    );
    assert_eq!(first.settled_until, at(now - SETTLE_MS));
    assert_eq!(first.settled.len(), 1, "{first:?}");
    assert_eq!(first.recent.len(), 1, "{first:?}");
    assert_eq!(first.waiting(), 2);
    // The next read starts at `settled_until`: the recent join again, and
    // one stamped before it that committed late.
    let later = now + 2 * SETTLE_MS;
    let second = first.update(
        &Since {
            ends: vec![],
            joins: joins(&[now - 1_000, now - 5_000]),
            departures: vec![left(now + 1_000, 0)],
        },
        at(later),
    );
    assert_eq!(second.recent, vec![]);
    assert_eq!(second.waiting(), 2, "{second:?}");
    // The two late joins wait ahead of an entry joined at `now`.
    assert_eq!(second.position(at(now)), 3);
}

#[test]
fn a_departure_settled_before_its_join_cancels_it_out_when_both_are() {
    let now = 100_000;
    let join_at = now - SETTLE_MS + 500; // recent at the first update
    let first = Positions {
        settled_until: at(now - SETTLE_MS - 1_000),
        ..Positions::default()
    }
    .update(
        &Since {
            ends: vec![],
            joins: joins(&[join_at]),
            departures: vec![left(now - SETTLE_MS - 500, join_at)],
        },
        at(now),
    );
    assert_eq!(first.waiting(), 0, "{first:?}");
    assert_eq!(first.settled[0].waiting, -1);
    let second = first.update(
        &Since {
            ends: vec![],
            joins: joins(&[join_at]),
            departures: vec![],
        },
        at(now + SETTLE_MS),
    );
    assert_eq!(second.waiting(), 0);
    assert_eq!(second.settled, vec![], "emptied buckets go");
    assert_eq!(second.position(at(now + 50_000)), 1);
}

#[test]
fn counts_that_go_negative_read_as_none_ahead() {
    let p = read(
        Since {
            ends: vec![],
            joins: vec![],
            departures: vec![left(1_000, 0), left(2_000, 0)],
        },
        60_000,
    );
    assert_eq!(p.waiting(), 0);
    assert_eq!(p.position(at(10_000)), 1);
}

#[test]
fn past_the_cap_neighbours_merge_where_they_are_the_smallest_share() {
    // One entry a second for 3,000 seconds.
    let all: Vec<i64> = (0..3_000).map(|s| s * 1_000).collect();
    let p = read(
        Since {
            ends: vec![],
            joins: joins(&all),
            departures: vec![],
        },
        10_000_000,
    );
    assert_eq!(p.settled.len(), MAX_BUCKETS);
    assert_eq!(p.waiting(), 3_000);
    // The head stays exact; further back, a position is off by at most its
    // bucket's count, and that is a small share of it.
    for s in 0..100 {
        assert_eq!(p.position(at(s * 1_000)), u64::try_from(s + 1).unwrap());
    }
    for s in (0..3_000).step_by(7) {
        let got = p.position(at(s * 1_000));
        let want = u64::try_from(s + 1).unwrap();
        let off = got.abs_diff(want);
        assert!(off * 100 <= want, "second {s}: {got} for {want}");
    }
}

#[test]
fn a_merged_bucket_shares_its_count_by_time() {
    let p = Positions {
        settled_until: at(0),
        settled: vec![
            Bucket {
                first: 10,
                last: 19,
                waiting: 100,
            },
            Bucket {
                first: 20,
                last: 20,
                waiting: 3,
            },
        ],
        recent: vec![],
        offers: OfferCounts::default(),
    };
    let cases = [(9, 1), (10, 1), (15, 51), (19, 91), (20, 101), (21, 104)];
    for (s, want) in cases {
        assert_eq!(p.position(Millis(s * 1_000)), want, "second {s}");
    }
}

#[test]
fn an_update_is_due_every_two_seconds_and_after_a_clock_step_back() {
    let cases = [
        (None, 0, true),
        (Some(10_000), 10_000, false),
        (Some(10_000), 11_999, false),
        (Some(10_000), 12_000, true),
        (Some(10_000), 9_000, true),
    ];
    for (last, now, want) in cases {
        assert_eq!(
            update_due(last.map(Millis), Millis(now)),
            want,
            "{last:?} {now}"
        );
    }
}

#[test]
fn a_long_history_compacts_in_a_few_passes_and_keeps_its_count() {
    // 50,000 seconds of one join each: one merge at a time would be some
    // 10^9 comparisons; the batched passes are a few sorts.
    let all: Vec<i64> = (0..50_000).map(|s| s * 1_000).collect();
    let p = read(
        Since {
            ends: vec![],
            joins: joins(&all),
            departures: vec![],
        },
        100_000_000,
    );
    assert_eq!(p.settled.len(), MAX_BUCKETS);
    assert_eq!(p.waiting(), 50_000);
    let spans: i64 = p.settled.iter().map(|b| b.last - b.first + 1).sum();
    assert_eq!(spans, 50_000, "the buckets cover every second once");
}

#[test]
fn a_merged_bucket_the_head_drained_up_to_is_counted_again_second_by_second() {
    // 3,000 seconds of one join each, merged past the cap; then the first
    // 2,900 are offered away: the buckets left near the head were merged
    // when thousands waited ahead of them.
    let all: Vec<i64> = (0..3_000).map(|s| s * 1_000).collect();
    let merged = read(
        Since {
            ends: vec![],
            joins: joins(&all),
            departures: vec![],
        },
        10_000_000,
    );
    assert!(merged.to_recount().is_empty(), "within 1% as merged");
    let offered: Vec<Departure> = (0..2_900).map(|s| left(5_000_000, s * 1_000)).collect();
    let drained = merged.update(
        &Since {
            ends: vec![],
            joins: vec![],
            departures: offered,
        },
        at(10_000_000),
    );
    assert_eq!(drained.waiting(), 100);
    let spans = drained.to_recount();
    assert!(!spans.is_empty(), "{:?}", &drained.settled[..4]);
    // Counted again from the list: each second from the 2,900th on still
    // has its one entry waiting.
    let base = T / 1_000;
    let mut recounted = drained.clone();
    for (first, last) in &spans {
        let seconds: BTreeMap<i64, i64> = (*first..=*last)
            .map(|s| (s, i64::from(s - base >= 2_900)))
            .collect();
        recounted = recounted.recounted(*first, *last, &seconds);
    }
    assert_eq!(recounted.waiting(), 100);
    let (first, last) = spans[0];
    for s in first.max(base + 2_900)..=last {
        let want = u64::try_from(s - base - 2_900 + 1).unwrap();
        assert_eq!(recounted.position(Millis(s * 1_000)), want, "second {s}");
    }
    // A span no bucket has any more changes nothing.
    assert_eq!(recounted.recounted(1, 2, &BTreeMap::new()), recounted);
}

#[test]
fn a_recounted_place_counts_as_the_update_counted_it_in_settled() {
    let as_of = Millis(10_000);
    let cases = [
        // joined, left, counts
        (9_000, None, 1),
        (9_000, Some(12_000), 1),
        (9_000, Some(10_000), 1),
        (9_000, Some(9_500), 0),
        // A join not settled yet is `recent`'s to count.
        (10_000, None, 0),
        (11_000, Some(12_000), 0),
        // A departure settled before its join (a writer's clock behind).
        (11_000, Some(9_999), -1),
    ];
    for (joined, left, want) in cases {
        let got = settled_count(Millis(joined), left.map(Millis), as_of);
        assert_eq!(got, want, "joined {joined}, left {left:?}");
    }
    // And the update agrees: the same moves, settled, give the same sum.
    let p = Positions::default().update(
        &Since {
            ends: vec![],
            joins: vec![Millis(9_000), Millis(9_000), Millis(11_000)],
            departures: vec![Departure {
                offer_expires_at: None,
                at: Millis(9_500),
                joined_at: Millis(9_000),
            }],
        },
        Millis(10_000 + SETTLE_MS),
    );
    let settled: i64 = p.settled.iter().map(|b| b.waiting).sum();
    let recounted = settled_count(Millis(9_000), None, as_of)
        + settled_count(Millis(9_000), Some(Millis(9_500)), as_of)
        + settled_count(Millis(11_000), None, as_of);
    assert_eq!((p.settled_until, settled), (as_of, recounted));
}
