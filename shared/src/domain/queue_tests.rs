use super::*;

const S: i64 = 1_000_000;

#[test]
fn settings_keep_to_their_ranges_and_defaults() {
    let at = Millis(1_000);
    let ok = QueueSettings::new(at, 60, None, None).unwrap();
    assert_eq!((ok.admission_seconds, ok.orders_per_admission), (600, 1));
    for (apm, seconds, orders, field) in [
        (0, None, None, "admitPerMinute"),
        (1_000_001, None, None, "admitPerMinute"),
        (60, Some(59), None, "admissionSeconds"),
        (60, Some(7_201), None, "admissionSeconds"),
        (60, None, Some(0), "ordersPerAdmission"),
        (60, None, Some(11), "ordersPerAdmission"),
    ] {
        let error = QueueSettings::new(at, apm, seconds, orders).unwrap_err();
        assert!(error.starts_with(field), "{error}");
    }
    assert!(QueueSettings::new(at, 1_000_000, Some(7_200), Some(10)).is_ok());
}

#[test]
fn the_spacing_never_lets_a_minute_hold_more_than_the_pace() {
    for (apm, spacing) in [(1, 60 * S), (60, S), (7, 8_571_429), (1_000_000, 60)] {
        let q = QueueSettings::new(Millis(0), apm, None, None).unwrap();
        assert_eq!(q.spacing_us(), spacing, "{apm}/min");
        // Admissions spaced so, starting at 0: those inside a minute.
        let in_a_minute = (60 * S - 1) / q.spacing_us() + 1;
        assert!(in_a_minute <= i64::from(apm), "{apm}/min: {in_a_minute}");
    }
}

#[test]
fn the_opening_moves_only_before_it() {
    let q = QueueSettings::new(Millis(10_000), 60, None, None).unwrap();
    assert!(q.may_move_opening(Millis(20_000), Millis(9_999)));
    assert!(!q.may_move_opening(Millis(20_000), Millis(10_000)));
    assert!(
        q.may_move_opening(Millis(10_000), Millis(50_000)),
        "the same value"
    );
}

#[test]
fn the_first_status_that_applies() {
    use Inventory::*;
    use QueueStatus::*;
    let opens = Millis(10_000);
    for (inventory, now, status) in [
        (AllSold, 9_999, Scheduled),
        (Available, 9_999, Scheduled),
        (AllSold, 10_000, SoldOut),
        (NoneAvailable, 10_000, Paused),
        (Available, 10_000, Open),
    ] {
        assert_eq!(
            queue_status(opens, inventory, Millis(now)),
            status,
            "{inventory:?} at {now}"
        );
    }
    assert_eq!(SoldOut.as_str(), "SOLD_OUT");
}

#[test]
fn early_joiners_come_first_in_the_draws_order_then_later_ones_by_time() {
    let opens = Millis(100_000);
    // Joining ten minutes or a millisecond early: only the draw counts.
    let early = queue_rank(Millis(-500_000), opens, 7);
    let late_but_early = queue_rank(Millis(99_999), opens, 3);
    assert!(late_but_early < early);
    // Every early joiner before every later one, whatever the draws.
    let first_after = queue_rank(Millis(100_000), opens, 0);
    assert!(queue_rank(Millis(0), opens, u64::MAX) < first_after);
    // Later joiners by their join time; the draw breaks ties only.
    assert!(queue_rank(Millis(100_001), opens, 0) > queue_rank(Millis(100_000), opens, u64::MAX));
    assert_ne!(
        queue_rank(Millis(100_000), opens, 1 << 40),
        queue_rank(Millis(100_000), opens, 2 << 40)
    );
}

#[test]
fn drawn_ranks_follow_127_bits_of_the_key_below_every_later_joiner() {
    // Keys equal in their first 64 bits still rank in their order.
    let key = |first: u64, next: u64| (u128::from(first) << 64 | u128::from(next)) >> 1;
    let (a, b) = (key(9, 1 << 20), key(9, 2 << 20));
    assert!(drawn_rank(a) < drawn_rank(b));
    assert!(drawn_rank(key(u64::MAX, u64::MAX)) < FIRST_LATER_RANK);
    let first_after = queue_rank(Millis(0), Millis(0), 0);
    assert!(
        drawn_rank(u128::MAX) < first_after,
        "whatever bits it is given"
    );
}

#[test]
fn admissions_keep_the_pace_and_never_idle_while_someone_waits() {
    let spacing = S; // 60 a minute
                     // Opening at 10 s with four waiting: one a second from the opening.
    assert_eq!(
        admission_times(None, spacing, 10 * S, &[10 * S; 4], 12 * S + 500),
        vec![10 * S, 11 * S, 12 * S]
    );
    // Catching up after a late run: the spacing holds between the times
    // given, and nothing is admitted in the future.
    assert_eq!(
        admission_times(Some(12 * S), spacing, 10 * S, &[10 * S; 9], 15 * S),
        vec![13 * S, 14 * S, 15 * S]
    );
    // Nobody ahead after an idle spell: admitted on joining, or as soon as
    // the spacing since the last admission allows.
    assert_eq!(
        admission_times(Some(12 * S), spacing, 10 * S, &[40 * S], 40 * S),
        vec![40 * S]
    );
    assert_eq!(
        admission_times(Some(12 * S), spacing, 10 * S, &[12 * S + 300_000], 20 * S),
        vec![13 * S]
    );
    // A visitor not yet eligible holds back those behind it only until it is.
    assert_eq!(
        admission_times(Some(12 * S), spacing, 10 * S, &[30 * S, 30 * S], 31 * S),
        vec![30 * S, 31 * S]
    );
    // After a pause, nothing before the resumption.
    assert_eq!(
        admission_times(Some(12 * S), spacing, 50 * S, &[20 * S; 2], 51 * S),
        vec![50 * S, 51 * S]
    );
    assert!(admission_times(Some(12 * S), spacing, 50 * S, &[20 * S], 49 * S).is_empty());
    assert!(admission_times(None, spacing, 10 * S, &[], 99 * S).is_empty());
}

#[test]
fn a_fast_pace_admits_many_a_second_and_never_closer_than_its_spacing() {
    let q = QueueSettings::new(Millis(0), 1_000_000, None, None).unwrap();
    let times = admission_times(None, q.spacing_us(), 0, &[0; 20_000], S - 1);
    assert_eq!(times.len(), 16_667, "a million a minute for a second");
    assert!(times.windows(2).all(|w| w[1] - w[0] >= q.spacing_us()));
}

#[test]
fn the_estimate_keeps_the_pace_from_now_and_is_never_in_the_past() {
    let spacing = 2 * S;
    assert_eq!(
        estimated_admission_at(Some(10 * S), spacing, 1, 11 * S),
        12 * S
    );
    assert_eq!(
        estimated_admission_at(Some(10 * S), spacing, 3, 11 * S),
        16 * S
    );
    // A queue idle (or paused) for long: from now.
    assert_eq!(
        estimated_admission_at(Some(10 * S), spacing, 1, 100 * S),
        100 * S
    );
    assert_eq!(estimated_admission_at(None, spacing, 2, 100 * S), 102 * S);
    assert!(estimated_admission_at(None, spacing, u64::MAX, 0) > 0);
}

#[test]
fn an_admission_lives_whole_seconds_and_ends_at_its_expiry() {
    // Given at its slot: rounded up, never less than the full time.
    let expires = admission_expires_at(12 * S + 1, Millis(12_000), 600);
    assert_eq!(expires, Millis(613_000));
    assert_eq!(
        admission_expires_at(12 * S, Millis(12_000), 600),
        Millis(612_000)
    );
    assert!(admission_is_live(expires, Millis(612_999)));
    assert!(!admission_is_live(expires, Millis(613_000)), "no leeway");
    // Worked out late: its life starts when it is given, not at its slot.
    assert_eq!(
        admission_expires_at(12 * S, Millis(700_500), 600),
        Millis(1_301_000)
    );
}

#[test]
fn early_joiners_are_served_in_an_order_unrelated_to_when_they_joined() {
    // 2,000 joiners a second apart before the opening, each with its draw;
    // Spearman's rho between join order and service order is near 0,
    // where serving by join time would make it 1.
    let opens = Millis(10_000_000);
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut ranks: Vec<(QueueRank, usize)> = (0..2_000)
        .map(|i| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (queue_rank(Millis(i as i64 * 1_000), opens, state), i)
        })
        .collect();
    ranks.sort();
    let n = ranks.len() as f64;
    let d2: f64 = ranks
        .iter()
        .enumerate()
        .map(|(served, (_, joined))| (served as f64 - *joined as f64).powi(2))
        .sum();
    let rho = 1.0 - 6.0 * d2 / (n * (n * n - 1.0));
    assert!(rho.abs() < 0.1, "rho {rho}");
}

#[test]
fn before_the_opening_a_visitor_comes_back_at_its_own_instant_of_the_first_30_s() {
    let opens = Millis(100_000);
    // An hour ahead: twice a minute.
    assert_eq!(poll_before_opening_ms(opens, Millis(-3_500_000), 7), 30_000);
    // Closing in: at its instant (opening + 7 s), never sooner than 2 s.
    assert_eq!(poll_before_opening_ms(opens, Millis(90_000), 7_000), 17_000);
    assert_eq!(poll_before_opening_ms(opens, Millis(106_500), 7_000), 2_000);
    // The instants cover the 30 s evenly: a thousand spreads, a bucket of
    // 3 s each, none far from a tenth.
    let mut buckets = [0u32; 10];
    for i in 0..1_000u64 {
        let spread = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let lands = 99_000 + poll_before_opening_ms(opens, Millis(99_000), spread) - 100_000;
        buckets[usize::try_from(lands / 3_000).unwrap_or(0).min(9)] += 1;
    }
    assert!(
        buckets.iter().all(|&n| (60..=140).contains(&n)),
        "{buckets:?}"
    );
}
