use super::*;

fn write_on(pk: &str, units: f64) -> Priced {
    Priced {
        write: true,
        retried: true,
        charges: vec![Charge {
            target: Target::table(pk),
            op: "PutItem".into(),
            write_units: units,
            read_units: 0.0,
        }],
    }
}

fn seat(n: usize) -> String {
    format!("{}ab12#S1-1-{n}", shared::store::SEAT_PK_PREFIX)
}

#[test]
fn seats_spread_over_keys_are_served_where_the_old_layout_throttles() {
    // 3,000 one-unit writes a second for a second, over 100 seats.
    let requests: Vec<Priced> = (0..3_000).map(|i| write_on(&seat(i % 100), 1.0)).collect();
    let spread = replay(&requests, (3_000.0, 0.0), Layout::New, warmed_table(), 7);
    assert_eq!((spread.first_try, spread.gave_up), (3_000, 0));
    assert!(spread.throttles.is_empty());
    // The old layout puts every seat on its event's key: 1,000 a second.
    let one = replay(&requests, (3_000.0, 0.0), Layout::Old, warmed_table(), 7);
    assert_eq!(one.first_try, 1_000, "{one:?}");
    assert!(one.throttles["TableWriteKeyRangeThroughputExceeded"] >= 2_000);
    assert_eq!(one.first_try + one.after_retries + one.gave_up, 3_000);
    assert!(one.throttled_share() > 0.6);
}

#[test]
fn a_throttled_request_is_retried_after_the_backoff_and_a_transaction_is_not() {
    // Two 1,000-unit writes at once on one key: the second is throttled.
    let plain = vec![write_on("K", 1_000.0), write_on("K", 1_000.0)];
    let run = replay(&plain, (1_000_000.0, 0.0), Layout::New, warmed_table(), 3);
    assert_eq!(run.first_try, 1);
    assert_eq!(run.after_retries + run.gave_up, 1);
    let attempts: u64 = run.throttles.values().sum();
    assert!(
        attempts >= 1 && attempts <= u64::from(SDK_ATTEMPTS) - 1 + 1,
        "{attempts}"
    );
    // As a transaction, it is throttled once and answered 503.
    let tx: Vec<Priced> = plain
        .into_iter()
        .map(|p| Priced {
            retried: sdk_retries("TransactWriteItems"),
            ..p
        })
        .collect();
    let run = replay(&tx, (1_000_000.0, 0.0), Layout::New, warmed_table(), 3);
    assert_eq!((run.first_try, run.after_retries, run.gave_up), (1, 0, 1));
    assert_eq!(run.throttles.values().sum::<u64>(), 1);
}

#[test]
fn a_short_recording_is_offered_again_until_the_seconds_are_filled() {
    // 100 four-unit writes on one key, offered at 500 a second for 4
    // seconds: 2,000 offers; the key takes 250 a second.
    let requests: Vec<Priced> = (0..100).map(|_| write_on("K", 4.0)).collect();
    let run = replay(&requests, (500.0, 4.0), Layout::New, warmed_table(), 9);
    assert_eq!(run.requests, 2_000);
    assert_eq!(run.first_try + run.after_retries + run.gave_up, 2_000);
    // The first second's 250 are served at once; nothing is served past
    // 250 a second over the offers' 4 s and the retries' 3 more.
    assert!(run.first_try >= 250, "{}", run.first_try);
    assert!(run.first_try + run.after_retries <= 250 * 7);
    assert!(run.gave_up > 0);
}

#[test]
fn a_new_table_throttles_past_double_its_first_peak_and_a_warmed_one_does_not() {
    // 10,000 one-unit writes in a second over 10,000 keys: past a new
    // table's 4,000, within a warmed table's 40,000.
    let requests: Vec<Priced> = (0..10_000)
        .map(|i| write_on(&format!("K{i}"), 1.0))
        .collect();
    let new = replay(&requests, (10_000.0, 0.0), Layout::New, Limits::DYNAMODB, 5);
    assert!(new.first_try < 10_000, "{:?}", new.throttles);
    let warmed = replay(&requests, (10_000.0, 0.0), Layout::New, warmed_table(), 5);
    assert_eq!(warmed.first_try, 10_000);
}

#[test]
fn the_meter_ceiling_combines_reads_and_writes_per_key_and_per_table() {
    // One attempt: 500 write and 1,500 read units on one key: half a
    // partition each, so one attempt a second fills it.
    let mut both = write_on("K", 500.0);
    both.charges[0].read_units = 1_500.0;
    let ceiling = meter_ceiling(&[both.clone()], 1.0, Layout::New, warmed_table());
    assert!((ceiling - 1.0).abs() < 1e-9, "{ceiling}");
    // Spread over 1,000 keys, the table's combined allowance binds:
    // 500 + 1,500 read units over 40,000 each is 1/20.
    let spread: Vec<Priced> = (0..1_000)
        .map(|i| {
            let mut p = write_on(&format!("K{i}"), 0.5);
            p.charges[0].read_units = 1.5;
            p
        })
        .collect();
    let ceiling = meter_ceiling(&spread, 1.0, Layout::New, warmed_table());
    assert!((ceiling - 20.0).abs() < 1e-6, "{ceiling}");
}

#[test]
fn below_the_meter_ceiling_a_steady_recording_throttles_nothing() {
    // 200 keys, each written in turn: at the meter's ceiling times
    // BELOW_THE_CEILING, every request is served first try.
    let requests: Vec<Priced> = (0..2_000)
        .map(|i| write_on(&format!("K{}", i % 200), 2.0))
        .collect();
    let replays = on_sale_replays(&requests, 2_000.0, 60_000.0);
    let (claims, run) = replays
        .find(Rate::BelowTheCeiling, Layout::New)
        .expect("a run below the ceiling");
    assert!(claims > 0.0);
    assert_eq!(run.first_try, run.requests, "{:?}", run.throttles);
    let (_, flooded) = replays
        .find(Rate::Target, Layout::New)
        .expect("a run at the target");
    assert!(flooded.throttled_share() > 0.5);
}
