//! The meter against DynamoDB's documented arithmetic.

use super::*;

fn write(pk: &str, units: f64) -> Charge {
    Charge {
        target: Target::table(pk),
        op: "PutItem".into(),
        write_units: units,
        read_units: 0.0,
    }
}

fn read(pk: &str, units: f64) -> Charge {
    Charge {
        target: Target::table(pk),
        op: "GetItem".into(),
        write_units: 0.0,
        read_units: units,
    }
}

/// Admits and charges each charge at its instant; the throttles met.
fn run(meter: &mut Meter, at: &[(i64, Charge)]) -> Vec<Option<Throttle>> {
    at.iter()
        .map(|(ms, c)| {
            let write = c.write_units > 0.0;
            let verdict = meter.admit(*ms, std::slice::from_ref(&c.target), write);
            if verdict.is_ok() {
                meter.charge(*ms, std::slice::from_ref(c));
            }
            verdict.err()
        })
        .collect()
}

fn key_range(write: bool) -> Option<Throttle> {
    Some(Throttle::KeyRange { index: None, write })
}

#[test]
fn a_key_takes_a_thousand_write_units_a_second_and_the_next_second_a_thousand_more() {
    let mut meter = Meter::new(Limits::DYNAMODB);
    let mut at: Vec<(i64, Charge)> = (0..1_000).map(|i| (i, write("SEAT#1", 1.0))).collect();
    at.push((999, write("SEAT#1", 1.0)));
    at.push((999, write("SEAT#2", 1.0)));
    at.push((1_000, write("SEAT#1", 1.0)));
    let verdicts = run(&mut meter, &at);
    assert!(verdicts[..1_000].iter().all(Option::is_none));
    assert_eq!(
        verdicts[1_000],
        key_range(true),
        "the 1,001st unit in one second"
    );
    assert_eq!(verdicts[1_001], None, "another key has its own partition");
    assert_eq!(verdicts[1_002], None, "the next second");
}

#[test]
fn reads_and_writes_share_a_partition_as_a_linear_combination() {
    // 500 write units are half a partition-second; 1,500 read units the
    // other half (3,000 a second): the next read is throttled.
    let mut meter = Meter::new(Limits::DYNAMODB);
    let verdicts = run(
        &mut meter,
        &[
            (0, write("K", 500.0)),
            (1, read("K", 1_500.0)),
            (2, read("K", 0.5)),
        ],
    );
    assert_eq!(verdicts, [None, None, key_range(false)]);
}

#[test]
fn an_eventually_consistent_read_of_a_small_item_is_half_a_unit_so_six_thousand_fit() {
    // The pricing halves it (units.rs); the meter takes what it is given.
    let mut meter = Meter::new(Limits::DYNAMODB);
    let at: Vec<(i64, Charge)> = (0..6_001).map(|i| (i / 7, read("MAP", 0.5))).collect();
    let verdicts = run(&mut meter, &at);
    assert_eq!(verdicts.iter().filter(|v| v.is_none()).count(), 6_000);
    assert_eq!(verdicts[6_000], key_range(false));
}

#[test]
fn a_partition_cannot_burst_past_its_maximum_however_long_it_was_idle() {
    let mut meter = Meter::new(Limits::DYNAMODB);
    let verdicts = run(
        &mut meter,
        &[
            (0, write("K", 1.0)),
            (400_000, write("K", 1_000.0)),
            (400_001, write("K", 1.0)),
        ],
    );
    assert_eq!(verdicts, [None, None, key_range(true)]);
}

#[test]
fn a_table_banks_unused_allowance_for_at_most_three_hundred_seconds() {
    // Seen at 0 with one unit; 400 s later it has banked 300 s of its
    // 4,000 a second (not 400), so one second takes 301 × 4,000 write
    // units (on keys of their own), then throttles. (The quota, a hard
    // limit far below that, is lifted here.)
    let mut meter = Meter::new(Limits {
        table_write_quota: 1e12,
        ..Limits::DYNAMODB
    });
    let mut at = vec![(0, write("K0", 1.0))];
    at.extend((0..1_205).map(|i| (400_000, write(&format!("K{i}"), 1_000.0))));
    let verdicts = run(&mut meter, &at);
    assert!(verdicts[..1_205].iter().all(Option::is_none));
    assert_eq!(verdicts[1_205], key_range(true));
    // The bank is spent: the second after takes its allowance alone,
    // double the 1,204,000 peak.
    assert_eq!(run(&mut meter, &[(401_000, write("K0", 1_000.0))]), [None]);
}

#[test]
fn a_new_table_takes_four_thousand_write_units_then_double_its_peak_up_to_the_quota() {
    let mut meter = Meter::new(Limits::DYNAMODB);
    // 4,000 keys of 1 unit each in second 0: the table's first allowance.
    let second = |s: i64, n: usize| -> Vec<(i64, Charge)> {
        (0..n)
            .map(|i| (s * 1_000, write(&format!("K{s}-{i}"), 1.0)))
            .collect()
    };
    let v = run(&mut meter, &second(0, 4_001));
    assert!(v[..4_000].iter().all(Option::is_none));
    assert_eq!(v[4_000], key_range(true), "past double the first peak");
    // Second 1: double the 4,000 peak.
    let v = run(&mut meter, &second(1, 8_001));
    assert_eq!(v.iter().filter(|v| v.is_none()).count(), 8_000);
    // Doubling again and again reaches the 40,000 quota: a quota throttle.
    for s in 2..4 {
        run(&mut meter, &second(s, 40_000));
    }
    let v = run(&mut meter, &second(4, 40_001));
    assert_eq!(v.iter().filter(|v| v.is_none()).count(), 40_000);
    assert_eq!(
        v[40_000],
        Some(Throttle::AccountLimit {
            index: None,
            write: true
        })
    );
}

#[test]
fn an_index_is_metered_apart_from_its_table() {
    let mut meter = Meter::new(Limits::DYNAMODB);
    let shard = Charge {
        target: Target::index("PendingByExpiry", "PENDING#3"),
        op: "PutItem".into(),
        write_units: 1_000.0,
        read_units: 0.0,
    };
    let verdicts = run(
        &mut meter,
        &[
            (0, shard.clone()),
            (0, write("PENDING#3", 1_000.0)),
            (1, shard),
        ],
    );
    assert_eq!(
        verdicts,
        [
            None,
            None,
            Some(Throttle::KeyRange {
                index: Some("PendingByExpiry".into()),
                write: true
            })
        ]
    );
}

#[test]
fn requests_of_an_earlier_instant_count_in_the_current_second() {
    // Concurrent tasks deliver instants out of order: a late-arriving
    // request of second 0 after second 1 began counts in second 1.
    let mut meter = Meter::new(Limits::DYNAMODB);
    let verdicts = run(
        &mut meter,
        &[
            (1_000, write("K", 1_000.0)),
            (500, write("K", 1.0)),
            (2_000, write("K", 1.0)),
        ],
    );
    assert_eq!(verdicts, [None, key_range(true), None]);
}

#[test]
fn the_reasons_read_as_dynamodb_spells_them() {
    let cases = [
        (
            Throttle::KeyRange {
                index: None,
                write: true,
            },
            "TableWriteKeyRangeThroughputExceeded",
        ),
        (
            Throttle::KeyRange {
                index: Some("QueueByRank".into()),
                write: false,
            },
            "IndexReadKeyRangeThroughputExceeded",
        ),
        (
            Throttle::AccountLimit {
                index: None,
                write: false,
            },
            "TableReadAccountLimitExceeded",
        ),
    ];
    for (throttle, reason) in cases {
        assert_eq!(throttle.reason(), reason);
    }
}
