use super::*;
use crate::domain::ga::PlaceHold;

fn last(at: i64) -> LastLook {
    LastLook {
        version: 3,
        at: Millis(at),
        next_lapse: None,
        more: false,
        frees: 5,
    }
}

#[test]
fn a_look_is_due_only_for_what_no_write_announces() {
    let quiet = last(10_000);
    let lapsing = LastLook {
        next_lapse: Some(Millis(15_000)),
        ..quiet
    };
    let more = LastLook {
        more: true,
        ..quiet
    };
    // (last look, version read, opened at, now, due); joins last checked
    // at 10,000.
    type Case<'a> = (Option<&'a LastLook>, i64, Option<i64>, i64, Due);
    let cases: [Case; 15] = [
        // Never looked, or the waitlist was put or opened since; a copy
        // that lags the last read is no change.
        (None, 3, None, 10_000, Due::Look(Why::Changed)),
        (Some(&quiet), 4, None, 10_001, Due::Look(Why::Changed)),
        (Some(&quiet), 2, None, 10_500, Due::Nothing),
        // Nothing lapses, nothing left: joins are checked every 2 s, and
        // the refresh comes at 30 s.
        (Some(&quiet), 3, None, 10_500, Due::Nothing),
        (Some(&quiet), 3, None, 11_999, Due::Nothing),
        (Some(&quiet), 3, None, 12_000, Due::CheckJoins),
        (Some(&quiet), 3, None, 40_000, Due::Look(Why::Refresh)),
        // A hold is live until its expiry instant, exclusive.
        (Some(&lapsing), 3, None, 14_999, Due::CheckJoins),
        (Some(&lapsing), 3, None, 15_000, Due::Look(Why::Lapsed)),
        // A look that stopped at its bounds goes on at the next tick.
        (Some(&more), 3, None, 10_001, Due::Look(Why::More)),
        // Opened at 8,000: the look at 10,000 came before the opening's
        // holds all showed; one at 14,000 (6 s on) sees them.
        (Some(&quiet), 3, Some(8_000), 11_000, Due::Nothing),
        (Some(&quiet), 3, Some(8_000), 13_999, Due::CheckJoins),
        (
            Some(&quiet),
            3,
            Some(8_000),
            14_000,
            Due::Look(Why::Settled),
        ),
        // A look since the settling: not again (the joins are simply due).
        (Some(&last(14_000)), 3, Some(8_000), 14_500, Due::CheckJoins),
        (Some(&quiet), 3, Some(1_000), 10_500, Due::Nothing),
    ];
    for (last, version, opened_at, now, want) in cases {
        let visit = Visit {
            last,
            version,
            opened_at: opened_at.map(Millis),
            joins_checked: Millis(10_000),
            frees: 5,
            now: Millis(now),
        };
        assert_eq!(due(visit), want, "{visit:?}");
    }
}

#[test]
fn a_batch_that_freed_something_makes_a_look_due() {
    let quiet = last(10_000);
    let more = LastLook {
        more: true,
        ..quiet
    };
    // (last look, frees counted now, due)
    let cases = [
        (&quiet, 5, Due::Nothing),
        (&quiet, 6, Due::Look(Why::Freed)),
        // A count behind the look's (another copy of the world): nothing.
        (&quiet, 4, Due::Nothing),
        (&more, 6, Due::Look(Why::More)),
    ];
    for (last, frees, want) in cases {
        let visit = Visit {
            last: Some(last),
            version: 3,
            opened_at: None,
            joins_checked: Millis(10_000),
            frees,
            now: Millis(10_500),
        };
        assert_eq!(due(visit), want, "{visit:?}");
    }
}

#[test]
fn a_join_is_any_key_not_read_before_wherever_it_lands() {
    let keys = |shards: &[&[&str]]| -> Vec<Vec<String>> {
        shards
            .iter()
            .map(|s| s.iter().map(|k| k.to_string()).collect())
            .collect()
    };
    let before = keys(&[&["0005#b", "0003#a"], &[]]);
    let cases = [
        (keys(&[&["0005#b", "0003#a"], &[]]), false),
        // A newer key, in either shard.
        (keys(&[&["0006#c", "0005#b", "0003#a"], &[]]), true),
        (keys(&[&["0005#b", "0003#a"], &["0001#d"]]), true),
        // A join whose write committed late, below the newest key seen.
        (keys(&[&["0005#b", "0004#e", "0003#a"], &[]]), true),
        // The oldest fell out of the read's window: nothing new.
        (keys(&[&["0005#b"], &[]]), false),
    ];
    for (newest, want) in cases {
        assert_eq!(joined_since(Some(&before), &newest), want, "{newest:?}");
    }
    assert!(joined_since(None, &before), "nothing read before");
}

#[test]
fn the_next_lapse_is_the_earliest_live_hold() -> Result<(), crate::error::Error> {
    let section = SectionId::parse("A")?;
    let key = |row: &str| RowId::parse(row).map(|row| (section.clone(), row));
    let rows = HashMap::from([
        (
            key("1")?,
            RowProjection::from([
                (
                    1,
                    ProjectedSeat::Held {
                        expires_at: Millis(9_000),
                    },
                ),
                (
                    2,
                    ProjectedSeat::Held {
                        expires_at: Millis(20_000),
                    },
                ),
                (3, ProjectedSeat::Sold),
            ]),
        ),
        (
            key("2")?,
            RowProjection::from([(
                1,
                ProjectedSeat::Held {
                    expires_at: Millis(12_000),
                },
            )]),
        ),
    ]);
    let none = HashMap::new();
    assert_eq!(next_lapse(&rows, &none, Millis(8_000)), Some(Millis(9_000)));
    // A hold lapsed already is free now, not next.
    assert_eq!(
        next_lapse(&rows, &none, Millis(9_000)),
        Some(Millis(12_000))
    );
    assert_eq!(next_lapse(&rows, &none, Millis(20_000)), None);
    assert_eq!(next_lapse(&HashMap::new(), &none, Millis(0)), None);
    // Places' holds lapse as seats' do.
    let place_hold = |order: &str, expires_at: i64| -> Result<PlaceHold, crate::error::Error> {
        Ok(PlaceHold {
            order: crate::domain::OrderId::parse(order)?,
            quantity: 2,
            expires_at: Millis(expires_at),
        })
    };
    let buckets = HashMap::from([(
        SectionId::parse("GA")?,
        vec![Bucket {
            index: 0,
            capacity: 20,
            sold: 0,
            free: 16,
            holds: vec![place_hold("o1", 10_000)?, place_hold("o2", 30_000)?],
        }],
    )]);
    assert_eq!(
        next_lapse(&rows, &buckets, Millis(9_500)),
        Some(Millis(10_000))
    );
    assert_eq!(
        next_lapse(&rows, &buckets, Millis(20_000)),
        Some(Millis(30_000))
    );
    assert_eq!(next_lapse(&HashMap::new(), &buckets, Millis(30_000)), None);
    Ok(())
}

#[test]
fn a_deleted_waitlist_is_counted_until_its_last_offer_has_ended() {
    let ended = Millis(1_000_000);
    let until = ended.0 + COUNTED_AFTER_DELETE_MS;
    // The longest offer made at the delete runs out within the window,
    // and its end settles in it.
    assert!(COUNTED_AFTER_DELETE_MS >= i64::from(*OFFER_SECONDS_RANGE.end()) * 1_000 + SETTLE_MS);
    let opened = Some(Millis(500_000));
    let cases = [
        (opened, ended.0, true),
        (opened, until - 1, true),
        (opened, until, false),
        (opened, until + 60_000, false),
        // Never opened: no offer, nothing to count.
        (None, ended.0, false),
    ];
    for (opened_at, now, counted) in cases {
        assert_eq!(
            counted_after_delete(opened_at, ended, Millis(now)),
            counted,
            "opened {opened_at:?}, at {now}"
        );
    }
}
