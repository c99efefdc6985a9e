use super::*;

fn last(at: i64) -> LastLook {
    LastLook {
        version: 3,
        at: Millis(at),
        next_lapse: None,
        more: false,
        free_left: false,
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
    let free = LastLook {
        free_left: true,
        ..quiet
    };
    let checked = Millis(10_000);
    let cases: [(Option<&LastLook>, i64, i64, Due); 12] = [
        // Never looked, or the waitlist was put or opened since.
        (None, 3, 10_000, Due::Look(Why::Changed)),
        (Some(&quiet), 4, 10_001, Due::Look(Why::Changed)),
        // Nothing lapses, nothing left, nothing free: nothing until the
        // refresh.
        (Some(&quiet), 3, 10_500, Due::Nothing),
        (Some(&quiet), 3, 39_999, Due::Nothing),
        (Some(&quiet), 3, 40_000, Due::Look(Why::Refresh)),
        // A hold is live until its expiry instant, exclusive.
        (Some(&lapsing), 3, 14_999, Due::Nothing),
        (Some(&lapsing), 3, 15_000, Due::Look(Why::Lapsed)),
        // A look that stopped at its bounds goes on at the next tick.
        (Some(&more), 3, 10_001, Due::Look(Why::More)),
        // Free seats nobody fits: joins are checked every two seconds.
        (Some(&free), 3, 11_999, Due::Nothing),
        (Some(&free), 3, 12_000, Due::CheckJoins),
        (Some(&quiet), 3, 12_000, Due::Nothing),
        (Some(&free), 3, 40_000, Due::Look(Why::Refresh)),
    ];
    for (last, version, now, want) in cases {
        assert_eq!(
            due(last, version, checked, Millis(now)),
            want,
            "{last:?} at version {version}, {now}"
        );
    }
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
    assert_eq!(next_lapse(&rows, Millis(8_000)), Some(Millis(9_000)));
    // A hold lapsed already is free now, not next.
    assert_eq!(next_lapse(&rows, Millis(9_000)), Some(Millis(12_000)));
    assert_eq!(next_lapse(&rows, Millis(20_000)), None);
    assert_eq!(next_lapse(&HashMap::new(), Millis(0)), None);
    Ok(())
}
