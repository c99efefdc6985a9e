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

/// Admits each charge at its instant (reserving it, its actual cost);
/// the throttles met.
fn run(meter: &mut Meter, at: &[(i64, Charge)]) -> Vec<Option<Throttle>> {
    at.iter()
        .map(|(ms, c)| {
            let write = c.write_units > 0.0;
            meter.admit(*ms, std::slice::from_ref(c), write).err()
        })
        .collect()
}

fn key_range(write: bool) -> Option<Throttle> {
    Some(Throttle::KeyRange { index: None, write })
}

fn allowance(write: bool) -> Option<Throttle> {
    Some(Throttle::TableAllowance { index: None, write })
}

/// DynamoDB's limits with partitions so large that only the table's
/// allowance and quota bind (one partition holds every key).
fn tables_only() -> Limits {
    Limits {
        partition_write_units: 1e12,
        partition_read_units: 1e12,
        ..Limits::DYNAMODB
    }
}

/// Two keys `{prefix}{i}` on one slot of a new table, and one on another.
fn neighbours_and_stranger(meter: &mut Meter, prefix: &str) -> (String, String, String) {
    let keys: Vec<String> = (0..100).map(|i| format!("{prefix}{i}")).collect();
    let slot = |meter: &mut Meter, k: &str| meter.partition_of(&Target::table(k));
    let first = slot(meter, &keys[0]);
    let twin = keys[1..].iter().find(|k| slot(meter, k) == first);
    let other = keys[1..].iter().find(|k| slot(meter, k) != first);
    match (twin, other) {
        (Some(twin), Some(other)) => (keys[0].clone(), twin.clone(), other.clone()),
        _ => panic!("a hundred keys over four partitions fill more than one and share one"),
    }
}

#[test]
fn a_key_takes_a_thousand_write_units_a_second_and_the_next_second_a_thousand_more() {
    let mut meter = Meter::new(Limits::DYNAMODB);
    let (seat, _, stranger) = neighbours_and_stranger(&mut meter, "SEAT#");
    let mut at: Vec<(i64, Charge)> = (0..1_000).map(|i| (i, write(&seat, 1.0))).collect();
    at.push((999, write(&seat, 1.0)));
    at.push((999, write(&stranger, 1.0)));
    at.push((1_000, write(&seat, 1.0)));
    let verdicts = run(&mut meter, &at);
    assert!(verdicts[..1_000].iter().all(Option::is_none));
    assert_eq!(
        verdicts[1_000],
        key_range(true),
        "the 1,001st unit in one second"
    );
    assert_eq!(verdicts[1_001], None, "a key on another partition");
    assert_eq!(verdicts[1_002], None, "the next second");
}

#[test]
fn keys_on_one_partition_share_its_thousand_until_a_hot_one_is_split_off() {
    let mut meter = Meter::new(Limits::DYNAMODB);
    let (seat, neighbour, _) = neighbours_and_stranger(&mut meter, "SEAT#");
    // The seat takes 600 and its neighbour 400: the partition is full.
    let v = run(
        &mut meter,
        &[
            (0, write(&seat, 600.0)),
            (1, write(&neighbour, 400.0)),
            (2, write(&neighbour, 1.0)),
        ],
    );
    assert_eq!(
        v,
        [None, None, key_range(true)],
        "a key of its own would take it"
    );
    // The seat runs at 600 a second: after SPLIT_FOR_HEAT_S seconds of
    // it, it is split off, and its neighbour has the partition to itself.
    for second in 1..=SPLIT_FOR_HEAT_S + 1 {
        assert_eq!(
            run(&mut meter, &[(second * 1_000, write(&seat, 600.0))]),
            [None]
        );
    }
    let later = (SPLIT_FOR_HEAT_S + 2) * 1_000;
    assert!(matches!(
        meter.partition_of(&Target::table(&seat)),
        PartitionId::Own(_)
    ));
    let v = run(
        &mut meter,
        &[
            (later, write(&seat, 600.0)),
            (later, write(&neighbour, 1_000.0)),
        ],
    );
    assert_eq!(v, [None, None]);
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
fn an_on_demand_table_banks_nothing_however_long_it_was_idle() {
    // Burst capacity keeps unused provisioned capacity; on demand there is
    // none: seen at 0, idle 400 s, it takes its 4,000 and no more.
    let mut meter = Meter::new(tables_only());
    let mut at = vec![(0, write("K0", 1.0))];
    at.extend((0..5).map(|i| (400_000, write(&format!("K{i}"), 1_000.0))));
    let v = run(&mut meter, &at);
    assert_eq!(v, [None, None, None, None, None, allowance(true)]);
}

/// Distinct keys of one unit each, all in `second`.
fn spread_second(second: i64, n: usize) -> Vec<(i64, Charge)> {
    (0..n)
        .map(|i| (second * 1_000, write(&format!("K{second}-{i}"), 1.0)))
        .collect()
}

#[test]
fn a_new_table_takes_four_thousand_write_units_and_double_a_peak_thirty_minutes_on() {
    // Partitions too large to bind, to see the allowance alone.
    let mut meter = Meter::new(tables_only());
    let v = run(&mut meter, &spread_second(0, 4_001));
    assert!(v[..4_000].iter().all(Option::is_none));
    assert_eq!(v[4_000], allowance(true), "past double the first peak");
    // The next second: the 4,000 peak is not usable yet.
    let v = run(&mut meter, &spread_second(1, 4_001));
    assert_eq!(v.iter().filter(|v| v.is_none()).count(), 4_000);
    // 30 minutes after it, double the 4,000.
    let v = run(&mut meter, &spread_second(1_801, 8_001));
    assert_eq!(v.iter().filter(|v| v.is_none()).count(), 8_000);
    assert_eq!(v[8_000], allowance(true));
}

#[test]
fn a_warm_tables_allowance_is_per_kind_and_a_new_tables_combined() {
    // Warmed to 40,000 writes and 40,000 reads a second: both at once.
    let warm = Limits {
        first_peak_write_units: 20_000.0,
        first_peak_read_units: 20_000.0,
        warm: true,
        ..tables_only()
    };
    let mut meter = Meter::new(warm);
    let v = run(
        &mut meter,
        &[(0, write("W", 40_000.0)), (1, read("R", 39_999.0))],
    );
    assert_eq!(v, [None, None]);
    // New: 2,000 writes are half its 4,000, so 6,000 reads fill the rest.
    let mut meter = Meter::new(tables_only());
    let v = run(
        &mut meter,
        &[
            (0, write("W", 2_000.0)),
            (1, read("R", 6_000.0)),
            (2, read("R", 1.0)),
        ],
    );
    assert_eq!(v, [None, None, allowance(false)]);
}

#[test]
fn the_per_table_quota_is_hard_and_counted_per_kind() {
    // A table whose peak allows far more: the 40,000 quota binds.
    let mut meter = Meter::new(Limits {
        first_peak_write_units: 1e9,
        first_peak_read_units: 1e9,
        ..tables_only()
    });
    let v = run(&mut meter, &spread_second(0, 40_001));
    assert_eq!(v.iter().filter(|v| v.is_none()).count(), 40_000);
    let quota = |write| Some(Throttle::AccountLimit { index: None, write });
    assert_eq!(v[40_000], quota(true));
    // Reads have their own 40,000: the writes' full quota refuses none.
    assert_eq!(run(&mut meter, &[(500, read("R", 1.0))]), [None]);
}

#[test]
fn what_was_in_flight_when_a_key_filled_is_paid_back_the_next_second() {
    let mut meter = Meter::new(Limits::DYNAMODB);
    let (a, b) = (write("K", 1_000.0), write("K", 500.0));
    // Both checked before either was reserved: in flight together.
    assert!(meter.check(0, std::slice::from_ref(&a), true).is_ok());
    assert!(meter.check(0, std::slice::from_ref(&b), true).is_ok());
    meter.reserve(0, &[a, b]);
    // The next second starts 500 down: 500 more, then throttled.
    let v = run(
        &mut meter,
        &[(1_000, write("K", 500.0)), (1_001, write("K", 1.0))],
    );
    assert_eq!(v, [None, key_range(true)]);
}

#[test]
fn a_request_is_settled_at_what_it_cost() {
    // Estimated at 1,000, it cost 400: 600 more fit in the second.
    let mut meter = Meter::new(Limits::DYNAMODB);
    let estimate = [write("K", 1_000.0)];
    assert!(meter.admit(0, &estimate, true).is_ok());
    meter.settle(0, &estimate, &[write("K", 400.0)]);
    let v = run(&mut meter, &[(1, write("K", 600.0)), (2, write("K", 1.0))]);
    assert_eq!(v, [None, key_range(true)]);
}

#[test]
fn a_key_only_estimated_is_refunded_and_a_key_only_charged_is_paid() {
    // Estimated on K, it turned out to touch J instead.
    let mut meter = Meter::new(Limits::DYNAMODB);
    let estimate = [write("K", 1_000.0)];
    assert!(meter.admit(0, &estimate, true).is_ok());
    meter.settle(0, &estimate, &[write("J", 400.0)]);
    let v = run(
        &mut meter,
        &[
            (1, write("K", 1_000.0)),
            (2, write("J", 600.0)),
            (3, write("J", 1.0)),
        ],
    );
    assert_eq!(v, [None, None, key_range(true)]);
}

#[test]
fn a_request_answered_after_its_second_closed_is_paid_once() {
    // Reserved in second 0, filling the key; a request of second 1 has
    // paid the excess back (the key starts second 1 empty). Settled at
    // exactly its estimate, it changes nothing: second 1 still has its
    // whole partition, less the 1 unit used.
    let mut meter = Meter::new(Limits::DYNAMODB);
    let estimate = [write("K", 1_000.0)];
    assert!(meter.admit(999, &estimate, true).is_ok());
    assert_eq!(run(&mut meter, &[(1_000, write("K", 1.0))]), [None]);
    meter.settle(999, &estimate, &estimate);
    let v = run(
        &mut meter,
        &[(1_001, write("K", 999.0)), (1_002, write("K", 1.0))],
    );
    assert_eq!(v, [None, key_range(true)]);
}

#[test]
fn a_request_settled_after_its_key_split_is_paid_where_it_was_counted() {
    // `K` runs hot until the request that lands on its shared partition
    // in second SPLIT_FOR_HEAT_S splits it off. Settled at its estimate
    // after the split, it stays counted on the shared partition: the
    // key's own partition starts the second empty.
    let mut meter = Meter::new(Limits {
        first_peak_write_units: 1_000.0,
        ..Limits::DYNAMODB
    });
    let hot = |second: i64| (second * 1_000, write("K", 600.0));
    let heat: Vec<_> = (0..SPLIT_FOR_HEAT_S).map(hot).collect();
    assert!(run(&mut meter, &heat).iter().all(Option::is_none));
    let shared = meter.partition_of(&Target::table("K"));
    let last = SPLIT_FOR_HEAT_S * 1_000;
    let estimate = [write("K", 600.0)];
    assert!(meter.admit(last, &estimate, true).is_ok());
    assert_ne!(meter.partition_of(&Target::table("K")), shared);
    meter.settle(last, &estimate, &estimate);
    let v = run(
        &mut meter,
        &[
            (last + 1, write("K", 999.0)),
            (last + 2, write("K", 1.0)),
            (last + 3, write("K", 1.0)),
        ],
    );
    assert_eq!(v, [None, None, key_range(true)]);
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
        (
            Throttle::TableAllowance {
                index: None,
                write: true,
            },
            "TableWriteKeyRangeThroughputExceeded",
        ),
    ];
    for (throttle, reason) in cases {
        assert_eq!(throttle.reason(), reason);
    }
    // Counted apart: a table's allowance is not a hot key.
    let table = Throttle::TableAllowance {
        index: Some("QueueByRank".into()),
        write: false,
    };
    assert_eq!(table.limit_met(), "IndexReadAllowanceExceeded");
    let key = Throttle::KeyRange {
        index: None,
        write: true,
    };
    assert_eq!(key.limit_met(), key.reason());
}
