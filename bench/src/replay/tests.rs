use super::*;
use crate::pricing::sdk_retries;

/// `requests` in order, evenly spaced at `per_second`: one stream.
fn replay(
    requests: &[Priced],
    pace: (f64, f64),
    layout: Layout,
    limits: Limits,
    seed: u64,
) -> Replayed {
    let one = Stream {
        requests,
        per_unit: 1.0,
        fixed_per_second: 0.0,
    };
    replay_mix(&[one], pace, layout, limits, seed)
}

/// `parts` replayed below the ceiling alone, under both layouts: what the
/// tests that judge only that run need, without the target's run (60,000
/// attempts a second for ten seconds, unoptimised, took most of their time).
fn below_the_ceiling(parts: &[Vec<Priced>], attempts: f64) -> Replays {
    replays_at(
        &on_sale_streams(parts, attempts),
        &[],
        &[Layout::New, Layout::Old],
    )
}

/// Claim attempts a second at which the meter's first limit is reached,
/// `attempts` the recorded requests made: one stream.
fn meter_ceiling(requests: &[Priced], attempts: f64, layout: Layout, limits: Limits) -> f64 {
    mix_ceiling(&[Stream::recorded(requests, attempts)], layout, limits)
}

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
    let spread = replay(&requests, (3_000.0, 0.0), Layout::New, Limits::WARMED, 7);
    assert_eq!((spread.first_try, spread.gave_up), (3_000, 0));
    assert!(spread.throttles.is_empty());
    // The old layout puts every seat on its event's key: 1,000 a second.
    let one = replay(&requests, (3_000.0, 0.0), Layout::Old, Limits::WARMED, 7);
    assert_eq!(one.first_try, 1_000, "{one:?}");
    assert!(one.throttles["TableWriteKeyRangeThroughputExceeded"] >= 2_000);
    assert_eq!(one.first_try + one.after_retries + one.gave_up, 3_000);
    assert!(one.throttled_share() > 0.6);
}

#[test]
fn a_throttled_request_is_retried_after_the_backoff_and_a_transaction_is_not() {
    // Two 1,000-unit writes at once on one key: the second is throttled.
    let plain = vec![write_on("K", 1_000.0), write_on("K", 1_000.0)];
    let run = replay(&plain, (1_000_000.0, 0.0), Layout::New, Limits::WARMED, 3);
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
    let run = replay(&tx, (1_000_000.0, 0.0), Layout::New, Limits::WARMED, 3);
    assert_eq!((run.first_try, run.after_retries, run.gave_up), (1, 0, 1));
    assert_eq!(run.throttles.values().sum::<u64>(), 1);
}

#[test]
fn a_short_recording_is_offered_again_until_the_seconds_are_filled() {
    // 100 four-unit writes on one key, offered at 500 a second for 4
    // seconds: 2,000 offers; the key takes 250 a second.
    let requests: Vec<Priced> = (0..100).map(|_| write_on("K", 4.0)).collect();
    let run = replay(&requests, (500.0, 4.0), Layout::New, Limits::WARMED, 9);
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
    let warmed = replay(&requests, (10_000.0, 0.0), Layout::New, Limits::WARMED, 5);
    assert_eq!(warmed.first_try, 10_000);
}

#[test]
fn the_meter_ceiling_combines_reads_and_writes_per_key_and_per_table() {
    // One attempt: 500 write and 1,500 read units on one key: half a
    // partition each, so one attempt a second fills it.
    let mut both = write_on("K", 500.0);
    both.charges[0].read_units = 1_500.0;
    let ceiling = meter_ceiling(&[both.clone()], 1.0, Layout::New, Limits::WARMED);
    assert!((ceiling - 1.0).abs() < 1e-9, "{ceiling}");
    // Spread over 1,000 keys, the table's allowance binds, each kind
    // apart on a warm table: 1,500 read units of its 40,000 is 3/80.
    let spread: Vec<Priced> = (0..1_000)
        .map(|i| {
            let mut p = write_on(&format!("K{i}"), 0.5);
            p.charges[0].read_units = 1.5;
            p
        })
        .collect();
    let ceiling = meter_ceiling(&spread, 1.0, Layout::New, Limits::WARMED);
    assert!((ceiling - 80.0 / 3.0).abs() < 1e-6, "{ceiling}");
}

#[test]
fn below_the_meter_ceiling_a_steady_recording_throttles_nothing() {
    // 200 keys, each written in turn: at the meter's ceiling times
    // BELOW_THE_CEILING, every request is served first try.
    let requests: Vec<Priced> = (0..2_000)
        .map(|i| write_on(&format!("K{}", i % 200), 2.0))
        .collect();
    let replays = on_sale_replays(&[requests], 2_000.0, 60_000.0);
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

#[test]
fn a_recording_is_replayed_in_its_order_so_a_key_loaded_first_throttles() {
    // 3,000 requests: K's 1,500 first, then 1,500 keys once each. On
    // average K takes half a unit per attempt (ceiling 2,000/s), but in
    // order its 1,500 arrive within the first second at 0.8 of it.
    let first: Vec<Priced> = (0..3_000)
        .map(|i| match i < 1_500 {
            true => write_on("K", 1.0),
            false => write_on(&format!("L{i}"), 1.0),
        })
        .collect();
    let ordered = below_the_ceiling(std::slice::from_ref(&first), 3_000.0);
    // Less a little: some of the other keys share K's partition.
    let ceiling = ordered.ceiling;
    assert!((1_900.0..=2_000.0).contains(&ceiling), "{ceiling}");
    let (_, run) = ordered
        .find(Rate::BelowTheCeiling, Layout::New)
        .expect("a run below the ceiling");
    assert!(run.first_try < run.requests, "{run:?}");
    // The same requests spread through the recording: nothing throttles.
    let (k, rest) = first.split_at(1_500);
    let spread: Vec<Priced> = k
        .iter()
        .zip(rest)
        .flat_map(|(a, b)| [a.clone(), b.clone()])
        .collect();
    let even = below_the_ceiling(&[spread], 3_000.0);
    let (_, run) = even
        .find(Rate::BelowTheCeiling, Layout::New)
        .expect("a run below the ceiling");
    assert_eq!(run.first_try, run.requests, "{:?}", run.throttles);
}

#[test]
fn the_on_sales_parts_are_replayed_side_by_side_over_the_same_span() {
    // The projection's 100 writes follow 1,000 claims: side by side, at
    // 1,000 claims a second both take the first second, not one after
    // the other.
    let claims: Vec<Priced> = (0..1_000).map(|i| write_on(&seat(i), 1.0)).collect();
    let projection: Vec<Priced> = (0..100).map(|_| write_on("RUNS#0", 9.0)).collect();
    let parts = [claims, Vec::new(), projection];
    let streams = on_sale_streams(&parts, 1_000.0);
    assert_eq!(streams.len(), 2, "the empty part is left out");
    let run = replay_mix(&streams, (1_000.0, 1.0), Layout::New, Limits::WARMED, 1);
    assert_eq!(run.requests, 1_100);
    // RUNS#0's 900 units a second fit its partition: within one second.
    assert_eq!(run.first_try, 1_100, "{:?}", run.throttles);
    // Twice as fast, 1,800 units a second of RUNS#0: throttled.
    let fast = replay_mix(&streams, (2_000.0, 1.0), Layout::New, Limits::WARMED, 1);
    assert!(fast.first_try < fast.requests, "{fast:?}");
}

#[test]
fn a_steady_stream_takes_its_share_first_and_is_offered_for_the_whole_replay() {
    // One one-unit write on K per unit of the rate; besides, 500 write
    // units a second on K whatever the rate: K fills at 500 units/s.
    let scaling: Vec<Priced> = (0..100).map(|_| write_on("K", 1.0)).collect();
    let ticks: Vec<Priced> = (0..10).map(|_| write_on("K", 50.0)).collect();
    let streams = [
        Stream::recorded(&scaling, 100.0),
        Stream::steady(&ticks, 1.0),
    ];
    let ceiling = mix_ceiling(&streams, Layout::New, Limits::WARMED);
    assert!((ceiling - 500.0).abs() < 1e-6, "{ceiling}");
    // At 400 a second for 2 s: 800 scaling offers, and the steady stream's
    // 10 a second for those 2 s, all served first try.
    let below = replay_mix(&streams, (400.0, 2.0), Layout::New, Limits::WARMED, 1);
    assert_eq!(below.requests, 820);
    assert_eq!(below.first_try, 820, "{:?}", below.throttles);
    // At 600 a second K is over its 1,000.
    let over = replay_mix(&streams, (600.0, 2.0), Layout::New, Limits::WARMED, 1);
    assert!(over.first_try < over.requests, "{over:?}");
    assert!(over.throttles["TableWriteKeyRangeThroughputExceeded"] > 0);
}

#[test]
fn the_goal_below_the_ceiling_fails_when_anything_throttled() {
    let requests: Vec<Priced> = (0..1_000).map(|i| write_on(&seat(i % 10), 1.0)).collect();
    let mut replays = below_the_ceiling(&[requests], 1_000.0);
    let goals = replays.below_the_ceiling_goals("a test", "claims/s");
    assert_eq!(goals.len(), 2, "{goals:?}");
    assert!(goals.iter().all(Goal::met), "{goals:?}");
    // One request answered 503 fails both: it was throttled, and it was
    // a 503.
    for (_, _, run) in &mut replays.runs {
        run.gave_up += 1;
    }
    let goals = replays.below_the_ceiling_goals("a test", "claims/s");
    let met: Vec<bool> = goals.iter().map(Goal::met).collect();
    assert_eq!(met, [false, false], "{goals:?}");
    assert!(
        goals[1].figure.ends_with("answers 503"),
        "{}",
        goals[1].figure
    );
    assert!(Replays::default()
        .below_the_ceiling_goals("nothing", "claims/s")
        .is_empty());
}

#[test]
fn a_key_the_steady_streams_fill_alone_leaves_no_room_and_fails_the_goal() {
    // The ticks alone write 1,100 units a second on T.
    let scaling: Vec<Priced> = (0..100).map(|i| write_on(&format!("K{i}"), 1.0)).collect();
    let ticks: Vec<Priced> = (0..10).map(|_| write_on("T", 110.0)).collect();
    let streams = [
        Stream::recorded(&scaling, 100.0),
        Stream::steady(&ticks, 1.0),
    ];
    assert_eq!(mix_ceiling(&streams, Layout::New, Limits::WARMED), 0.0);
    let replays = replays(&streams, 1_000.0, &[Layout::New]);
    let goals = replays.below_the_ceiling_goals("ticks", "units/s");
    assert!(
        !goals.is_empty() && !goals.iter().all(Goal::met),
        "{goals:?}"
    );
}

#[test]
fn every_stream_is_offered_for_the_longest_span() {
    // A long recording at a low rate sets the span (10 s); the other
    // scaling stream and the steady one are offered for all of it.
    let long: Vec<Priced> = (0..1_000)
        .map(|i| write_on(&format!("L{i}"), 1.0))
        .collect();
    let short: Vec<Priced> = (0..10).map(|i| write_on(&format!("S{i}"), 1.0)).collect();
    let ticks: Vec<Priced> = (0..4).map(|i| write_on(&format!("T{i}"), 1.0)).collect();
    let streams = [
        Stream::recorded(&long, 100.0),
        Stream::recorded(&short, 20.0),
        Stream::steady(&ticks, 1.0),
    ];
    // 10 units a second: 100 long, 5 short and 4 steady requests a second;
    // the short recording is whole after 2 s and offered again.
    let run = replay_mix(&streams, (10.0, 1.0), Layout::New, Limits::WARMED, 1);
    assert_eq!(run.requests, 1_000 + 50 + 40);
}

/// One transaction (not retried: a throttle is a 503) writing 4 units on
/// each of 100 keys, request `r`'s keys following `r - 1`'s: 200 of them
/// touch 20,000 keys once each. One claim attempt each.
fn wide_transactions() -> Vec<Priced> {
    (0..200)
        .map(|r| Priced {
            write: true,
            retried: false,
            charges: (0..100)
                .map(|k| Charge {
                    target: Target::table(seat(r * 100 + k)),
                    op: "TransactWriteItems".into(),
                    write_units: 4.0,
                    read_units: 0.0,
                })
                .collect(),
        })
        .collect()
}

#[test]
fn at_the_target_the_quotas_rise_until_the_meter_has_room_and_nothing_throttles() {
    // 200 attempts/s at 400 write units each: 80,000 write units a second,
    // twice the default quota, no key above 4 units a second.
    let requests = wide_transactions();
    let default = Limits::warmed_to(40_000.0, 40_000.0);
    let streams = [Stream::recorded(&requests, 200.0)];
    let flooded = replay_mix(
        &streams,
        (200.0, PEAK_WINDOW_SECONDS),
        Layout::New,
        default,
        1,
    );
    assert!(flooded.gave_up > 0, "{flooded:?}");
    let at_default = mix_binding(&streams, Layout::New, default);
    // 40,000 write units a second over 400 an attempt.
    assert!((at_default.per_s - 100.0).abs() < 1e-6, "{at_default:?}");
    assert_eq!(at_default.binding, "the write allowance of the table");

    // From the default up: the target at most 80% of the ceiling asks
    // 100,000 write units a second at least.
    let raised = at_requested_quotas(
        std::slice::from_ref(&requests),
        200.0,
        (200.0, PEAK_WINDOW_SECONDS),
        (40_000.0, 40_000.0),
    )
    .expect("a recording");
    assert_eq!(raised.need, (40_000.0, 40_000.0));
    assert!(raised.quotas.0 >= 100_000.0, "{:?}", raised.quotas);
    assert!(
        BELOW_THE_CEILING * raised.ceiling.per_s >= 200.0,
        "{:?}",
        raised.ceiling
    );
    assert!(raised.run.requests >= 200 * 60, "{}", raised.run.requests);
    assert_eq!(
        raised.run.first_try, raised.run.requests,
        "{:?}",
        raised.run.throttles
    );
    assert!(raised.goals("claims/s").iter().all(Goal::met));

    // The same goals on the default quota's run all fail.
    let throttled = AtRequestedQuotas {
        ceiling: at_default,
        run: flooded,
        ..raised
    };
    let met: Vec<bool> = throttled.goals("claims/s").iter().map(Goal::met).collect();
    assert_eq!(met, [false, false, false]);
    assert!(at_requested_quotas(&[], 200.0, (200.0, 2.0), (40_000.0, 40_000.0)).is_none());
}

#[test]
fn a_stated_load_is_replayed_and_judged_apart_from_the_ceiling() {
    // Ten keys of 1 unit a request: the ceiling is 10,000 a second.
    let requests: Vec<Priced> = (0..1_000).map(|i| write_on(&seat(i % 10), 1.0)).collect();
    let streams = [Stream::recorded(&requests, 1_000.0)];
    let rates = [(Rate::Peak, 2_000.0), (Rate::Target, 60_000.0)];
    let replays = replays_at(&streams, &rates, &[Layout::New]);
    let ran: Vec<(Rate, f64)> = replays.runs.iter().map(|(r, u, _)| (*r, *u)).collect();
    let below = BELOW_THE_CEILING * replays.ceiling;
    assert_eq!(
        ran,
        [
            (Rate::BelowTheCeiling, below),
            (Rate::Peak, 2_000.0),
            (Rate::Target, 60_000.0)
        ]
    );
    let judged = |rate| replays.served_goals(rate, ("a test", "claims/s"), "a stated load");
    // Well under the ceiling the peak is served; six times over it the
    // target is not, and both its goals say so.
    assert!(judged(Rate::Peak).iter().all(Goal::met));
    let target = judged(Rate::Target);
    assert_eq!(target.len(), 2);
    assert!(target.iter().all(|goal| !goal.met()), "{target:?}");
}

/// A poll: half a read unit on a visitor's own item, a quarter on an
/// index; `n` of them over as many keys.
fn polls(n: usize) -> Vec<Priced> {
    (0..n)
        .map(|i| Priced {
            write: false,
            retried: true,
            charges: vec![
                Charge {
                    target: Target::table(format!("VISITOR#ab#{i}")),
                    op: "GetItem".into(),
                    write_units: 0.0,
                    read_units: 0.5,
                },
                Charge {
                    target: Target::index("I", format!("I#{}", i % 64)),
                    op: "Query".into(),
                    write_units: 0.0,
                    read_units: 0.25,
                },
            ],
        })
        .collect()
}

#[test]
fn a_rate_past_the_default_read_quota_is_served_on_what_it_asks_for() {
    // 200,000 polls a second read 100,000 units a second on the table,
    // 50,000 on the index: the table's ask, each counted apart.
    let requests = polls(20_000);
    let ticks = vec![write_on("QUEUE#ab", 1.0); 4];
    let streams = [
        Stream::recorded(&requests, 20_000.0),
        Stream::steady(&ticks, 1.0),
    ];
    let need = quotas_needed(&streams, 200_000.0);
    assert_eq!(need, (40_000.0, 100_000.0), "the default floors the writes");
    assert!(mix_ceiling(&streams, Layout::New, Limits::WARMED) < 200_000.0);
    let naming = Naming {
        what: "polls",
        quotas_from: "as the goal asks",
        why: "a test",
    };
    let at = at_quotas(&streams, (200_000.0, 2.0), need, naming).expect("a recording");
    assert!(at.quotas.1 >= 100_000.0, "{:?}", at.quotas);
    assert_eq!(at.run.gave_up, 0, "{:?}", at.run.throttles);
    let goals = at.goals("polls/s");
    assert!(goals.iter().all(Goal::met), "{goals:?}");
    assert!(
        goals[0].figure.starts_with("polls replayed"),
        "{}",
        goals[0].figure
    );
    assert!(at_quotas(&[], (1.0, 1.0), need, naming).is_none());
}
