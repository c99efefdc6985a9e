use super::*;
use crate::domain::queue::queue_rank;

const S: i64 = 1_000_000;

fn settings(opens_at_ms: i64, per_minute: u32) -> QueueSettings {
    QueueSettings::new(Millis(opens_at_ms), per_minute, None, None).unwrap()
}

fn ranks(n: u64) -> Vec<QueueRank> {
    (0..n).map(|i| QueueRank(u128::from(i) * 1_000)).collect()
}

#[test]
fn positions_are_within_one_percent_and_a_seconds_pace() {
    for (n, per_second) in [
        (10u64, 1u64),
        (1_000, 1),
        (100_000, 1),
        (100_000, 500),
        (3_000_000, 1),
    ] {
        let all = ranks(n);
        let points = Checkpoints::over(&all, per_second);
        assert!(points.0.len() <= MAX_CHECKPOINTS, "{n}: {}", points.0.len());
        for i in [0, 1, 2, n / 3, (n / 2 + 7).min(n - 1), n - 1] {
            let truth = i + 1;
            let got = points.position(all[i as usize], n);
            let allowed = truth / 100 + per_second;
            assert!(
                got.abs_diff(truth) <= allowed,
                "n {n}, pace {per_second}: {got} for {truth}"
            );
        }
    }
    // Exact at the front, where a visitor watches the count go down.
    let all = ranks(500);
    let points = Checkpoints::over(&all, 1);
    for (i, &rank) in all.iter().take(100).enumerate() {
        assert_eq!(points.position(rank, 500), i as u64 + 1);
    }
}

#[test]
fn a_rank_outside_the_checkpoints_stands_at_either_end() {
    let points = Checkpoints::over(&ranks(10), 1);
    assert_eq!(points.position(QueueRank(0), 10), 1);
    assert_eq!(
        points.position(QueueRank(500), 10),
        2,
        "between the first two"
    );
    assert_eq!(
        points.position(QueueRank(1_000_000), 10),
        11,
        "after everyone known"
    );
    assert_eq!(Checkpoints::default().position(QueueRank(5), 0), 1);
}

/// A head that is the whole queue: visitors ranked 0, 1, … not counted yet.
fn waiting(eligible: &[i64]) -> Head {
    Head {
        visitors: eligible
            .iter()
            .enumerate()
            .map(|(i, &e)| WaitingVisitor {
                rank: QueueRank(i as u128),
                eligible_us: e,
                counted: false,
            })
            .collect(),
        known_to: QueueRank(u128::MAX),
        whole: true,
    }
}

/// `head` once its first `n` are admitted.
fn skip(head: &Head, n: usize) -> Head {
    Head {
        visitors: head.visitors[n..].to_vec(),
        ..head.clone()
    }
}

#[test]
fn a_tick_admits_at_the_pace_in_queue_order() {
    // 60 a minute, opened at 10 s, so admitting from 12 s (the draw's
    // settling); five pre-open joiners; a tick now and then.
    let state = QueueState::new(1, settings(10_000, 60));
    let five = waiting(&[10 * S; 5]);
    let early = plan_tick(&state, &five, Inventory::Available, Millis(11_900));
    assert_eq!((early.status, early.slots.len()), (QueueStatus::Open, 0));
    let plan = plan_tick(&state, &five, Inventory::Available, Millis(12_900));
    assert_eq!(plan.slots, vec![12 * S]);
    let plan = plan_tick(
        &plan.state,
        &skip(&five, 1),
        Inventory::Available,
        Millis(13_400),
    );
    assert_eq!(plan.slots, vec![13 * S]);
    let plan = plan_tick(
        &plan.state,
        &skip(&five, 2),
        Inventory::Available,
        Millis(14_300),
    );
    assert_eq!(plan.slots, vec![14 * S]);
    assert_eq!((plan.state.admitted, plan.state.waiting), (3, 2));
    assert_eq!(plan.state.last_admission_us, Some(14 * S));
    assert_eq!(plan.state.version, state.version + 3);
    let next = plan_tick(
        &plan.state,
        &skip(&five, 3),
        Inventory::Available,
        Millis(15_000),
    );
    assert_eq!(next.slots, vec![15 * S]);
}

#[test]
fn nobody_is_admitted_before_the_opening_while_paused_or_sold_out() {
    let state = QueueState::new(1, settings(10_000, 600));
    let before = plan_tick(
        &state,
        &waiting(&[10 * S]),
        Inventory::Available,
        Millis(9_999),
    );
    assert_eq!(
        (before.status, before.slots.len()),
        (QueueStatus::Scheduled, 0)
    );
    assert_eq!(before.state.waiting, 1);
    let paused = plan_tick(
        &state,
        &waiting(&[10 * S]),
        Inventory::NoneAvailable,
        Millis(20_000),
    );
    assert_eq!(
        (paused.status, paused.slots.len()),
        (QueueStatus::Paused, 0)
    );
    let sold = plan_tick(
        &state,
        &waiting(&[10 * S]),
        Inventory::AllSold,
        Millis(20_000),
    );
    assert_eq!((sold.status, sold.slots.len()), (QueueStatus::SoldOut, 0));
    assert_eq!(
        sold.state.waiting, 0,
        "SOLD_OUT visitors are not counted as waiting"
    );
}

#[test]
fn sold_out_is_final_whatever_a_staler_read_of_the_map_says() {
    let state = QueueState::new(1, settings(0, 600));
    let sold = plan_tick(&state, &waiting(&[S]), Inventory::AllSold, Millis(2_000));
    for stale in [Inventory::Available, Inventory::NoneAvailable] {
        let later = plan_tick(&sold.state, &waiting(&[S]), stale, Millis(3_000));
        assert_eq!(
            (later.status, later.slots.len(), later.state.waiting),
            (QueueStatus::SoldOut, 0, 0),
            "{stale:?}"
        );
    }
    // Only a waitlist put afterwards changes it: nobody is admitted while
    // it sells, everybody waits, and its delete resumes admission.
    let held = plan_tick(
        &sold.state,
        &waiting(&[S]),
        Inventory::WaitlistOnly,
        Millis(3_000),
    );
    assert_eq!(
        (held.status, held.slots.len(), held.state.waiting),
        (QueueStatus::Waitlist, 0, 1)
    );
    let resumed = plan_tick(
        &held.state,
        &waiting(&[S]),
        Inventory::Available,
        Millis(4_000),
    );
    assert_eq!(
        (resumed.status, resumed.slots.len()),
        (QueueStatus::Open, 1)
    );
}

#[test]
fn a_resumed_queue_admits_from_the_resumption_not_before() {
    let mut state = QueueState::new(1, settings(0, 60));
    state.inventory = Inventory::NoneAvailable;
    state.last_admission_us = Some(5 * S);
    // Seen back at 31.2 s: admission resumes then, none for the paused time.
    let plan = plan_tick(
        &state,
        &waiting(&[0; 3]),
        Inventory::Available,
        Millis(31_200),
    );
    assert_eq!(plan.slots, vec![31_200_000]);
    assert_eq!(plan.state.resumed_us, 31_200_000);
    let next = plan_tick(
        &plan.state,
        &waiting(&[0; 2]),
        Inventory::Available,
        Millis(32_300),
    );
    assert_eq!(next.slots, vec![32_200_000]);
}

#[test]
fn an_admitter_that_was_away_resumes_the_pace_without_a_burst() {
    let mut state = QueueState::new(1, settings(0, 60));
    state.last_admission_us = Some(5 * S);
    let plan = plan_tick(
        &state,
        &waiting(&[0; 100]),
        Inventory::Available,
        Millis(60_000),
    );
    assert_eq!(
        plan.slots,
        vec![59 * S, 60 * S],
        "a second's catch-up, no more"
    );
}

#[test]
fn a_joiner_with_nobody_ahead_is_admitted_when_the_spacing_allows() {
    let mut state = QueueState::new(1, settings(0, 60));
    assert_eq!(
        state.admits_on_join(Millis(5_000)),
        Some(5 * S),
        "idle: at once"
    );
    let after = state.admitted_on_join(5 * S);
    assert_eq!((after.admitted, after.version), (1, 1));
    assert_eq!(after.admits_on_join(Millis(5_500)), None, "spacing");
    assert_eq!(after.admits_on_join(Millis(6_000)), Some(6 * S));
    state.waiting = 1;
    assert_eq!(state.admits_on_join(Millis(5_000)), None, "someone waits");
    let scheduled = QueueState::new(1, settings(10_000, 60));
    assert_eq!(scheduled.admits_on_join(Millis(9_000)), None);
}

#[test]
fn a_visitor_is_told_its_admission_its_place_or_the_end() {
    let mut state = QueueState::new(1, settings(10_000, 60));
    state.checkpoints = Checkpoints::over(&ranks(10), 1);
    state.waiting = 10;
    state.last_admission_us = Some(20 * S);
    let rank = QueueRank(3_000);
    // Before the opening: nothing but the opening, whatever its rank.
    for rank in [rank, QueueRank(9_000), QueueRank(u128::from(u64::MAX))] {
        assert_eq!(
            visitor_view(rank, None, &state, Millis(9_000)),
            VisitorView::BeforeOpening {
                opens_at: Millis(10_000)
            }
        );
    }
    // 4th in line, the last admission at 20 s, one a second: at 24 s.
    assert_eq!(
        visitor_view(rank, None, &state, Millis(20_500)),
        VisitorView::Waiting {
            position: Some(4),
            estimated_at: Some(Millis(24_000)),
            poll_after_ms: 2_000,
        }
    );
    // Never in the past, even when the admitter is late.
    assert_eq!(
        visitor_view(rank, None, &state, Millis(90_000)),
        VisitorView::Waiting {
            position: Some(4),
            estimated_at: Some(Millis(90_000 + 3_000)),
            poll_after_ms: 2_000,
        }
    );
    // Open, nobody admitted yet, under a 30 s settling time: the 4th in
    // line is told the settling time's end plus three spacings.
    let mut settling = state.clone();
    settling.settings = settling.settings.with_draw_settle_ms(30_000);
    settling.last_admission_us = None;
    assert_eq!(
        visitor_view(rank, None, &settling, Millis(11_000)),
        VisitorView::Waiting {
            position: Some(4),
            estimated_at: Some(Millis(40_000 + 3_000)),
            poll_after_ms: 16_000,
        }
    );
    let admission = Admission {
        admission_id: "a".into(),
        slot_us: 20 * S,
        given_at: Millis(20_000),
        expires_at: Millis(620_000),
        orders_allowed: 1,
    };
    assert_eq!(
        visitor_view(rank, Some(&admission), &state, Millis(619_999)),
        VisitorView::Admitted(&admission)
    );
    assert_eq!(
        visitor_view(rank, Some(&admission), &state, Millis(620_000)),
        VisitorView::Expired
    );
    state.inventory = Inventory::AllSold;
    assert_eq!(
        visitor_view(rank, None, &state, Millis(20_500)),
        VisitorView::SoldOut
    );
}

#[test]
fn a_put_moves_the_opening_either_way_before_it_and_keeps_the_rest() {
    let mut state = QueueState::new(1, settings(3_600_000, 60));
    state.waiting = 7;
    // Moved earlier (to now): admission may start then (once the draw
    // settles), not an hour later.
    let earlier = state.put(settings(1_000, 600));
    assert_eq!((earlier.resumed_us, earlier.waiting), (3_000 * 1_000, 7));
    assert_eq!(
        (earlier.settings.admit_per_minute, earlier.version),
        (600, 1)
    );
    let q = plan_tick(
        &earlier,
        &waiting(&[0]),
        Inventory::Available,
        Millis(3_500),
    );
    assert_eq!(q.slots.len(), 1, "open since 1 s, admitting since 3 s");
    // A new pace alone keeps a resumption (the end of a pause) as it was.
    let mut paused = earlier.clone();
    paused.resumed_us = 9_000_000;
    assert_eq!(paused.put(settings(1_000, 120)).resumed_us, 9_000_000);
}

#[test]
fn an_open_queue_keeps_its_settling_time() {
    let old = settings(10_000, 60).with_draw_settle_ms(2_000);
    let asked = settings(10_000, 120).with_draw_settle_ms(500);
    let settle_after =
        |now: i64| settings_after_put(Some(&old), asked, Millis(now)).map(|s| s.draw_settle_ms);
    // Before the opening a put sets it; from the opening on it stays.
    let table = [
        (9_999, Some(500)),
        (10_000, Some(2_000)),
        (50_000, Some(2_000)),
    ];
    for (now, want) in table {
        assert_eq!(settle_after(now), want, "at {now}");
    }
    assert_eq!(old.first_admission_us(), 12_000_000);
    assert_eq!(asked.first_admission_us(), 10_500_000);
    // A put before the opening that changes only the settling time moves
    // where admission may start, either way.
    let state = QueueState::new(1, old);
    assert_eq!(state.resumed_us, 12_000_000);
    assert_eq!(state.put(asked).resumed_us, 10_500_000);
    assert_eq!(state.put(asked).put(old).resumed_us, 12_000_000);
}

#[test]
fn an_open_queue_keeps_its_opening() {
    let old = settings(10_000, 60);
    assert!(settings_after_put(Some(&old), settings(20_000, 60), Millis(9_000)).is_some());
    assert!(settings_after_put(Some(&old), settings(20_000, 60), Millis(10_000)).is_none());
    assert!(settings_after_put(Some(&old), settings(10_000, 120), Millis(50_000)).is_some());
    assert!(settings_after_put(None, settings(0, 60), Millis(50_000)).is_some());
    // Pre-open joiners rank ahead of every later joiner.
    assert!(
        queue_rank(Millis(9_999), Millis(10_000), u64::MAX)
            < queue_rank(Millis(10_000), Millis(10_000), 0)
    );
}

#[test]
fn a_read_missing_a_bucket_is_not_everything_sold() {
    use crate::domain::ga::Bucket;
    use crate::domain::seat_map::{SeatMap, SectionMap};
    use crate::domain::SectionId;
    let floor = SectionId::parse("FLOOR").unwrap();
    let map = SeatMap {
        event_id: "ev".into(),
        as_of: String::new(),
        sections: vec![SectionMap {
            section_id: floor.clone(),
            kind: "ga",
            rows: None,
            capacity: Some(200),
            available: Some(0),
        }],
    };
    let bucket = |index, sold| Bucket {
        index,
        capacity: 100,
        sold,
        free: 100 - sold,
        holds: Vec::new(),
    };
    let read = |buckets: Vec<Bucket>| {
        let all = std::collections::HashMap::from([(floor.clone(), buckets)]);
        inventory_of(&map, &all)
    };
    for (buckets, want) in [
        (vec![], Inventory::NoneAvailable),
        (vec![bucket(0, 100)], Inventory::NoneAvailable),
        (
            vec![bucket(0, 100), bucket(1, 90)],
            Inventory::NoneAvailable,
        ),
        (vec![bucket(0, 100), bucket(1, 100)], Inventory::AllSold),
    ] {
        assert_eq!(read(buckets.clone()), want, "{buckets:?}");
    }
}

#[test]
fn a_visitor_asks_again_sooner_as_its_turn_nears() {
    use crate::domain::queue::{poll_after_ms, POLL_MAX_MS, POLL_MIN_MS};
    // (turn in, ms) → asks again in
    for (turn_in, after) in [
        (-5_000, POLL_MIN_MS),
        (0, POLL_MIN_MS),
        (3_999, POLL_MIN_MS),
        (10_000, 5_000),
        (59_998, 29_999),
        (60_000, POLL_MAX_MS),
        (3_600_000, POLL_MAX_MS),
        (i64::MAX - 1_000, POLL_MAX_MS),
    ] {
        assert_eq!(
            poll_after_ms(Millis(1_000 + turn_in), Millis(1_000)),
            after,
            "{turn_in}"
        );
    }
}

#[test]
fn past_the_head_the_counts_tell_how_many_wait_and_where() {
    // 1,000 early joiners counted, spread over the draw; the admitter
    // knows the first ten by name.
    let mut state = QueueState::new(1, settings(10_000, 60));
    let ranks: Vec<QueueRank> = (0..1_000u128).map(|i| QueueRank(i << 54)).collect();
    state.counts.record(0, ranks.iter().copied(), 5_000);
    let counted = |rank| WaitingVisitor {
        rank,
        eligible_us: 10 * S,
        counted: true,
    };
    let head = Head {
        visitors: ranks[..10].iter().copied().map(counted).collect(),
        known_to: ranks[10],
        whole: false,
    };
    let plan = plan_tick(&state, &head, Inventory::Available, Millis(12_000));
    assert_eq!(plan.slots.len(), 1);
    assert_eq!((plan.state.waiting, plan.state.counts.admitted), (999, 1));
    // Far past the head, from the counts: within 1% and a second's pace.
    for i in [10usize, 11, 500, 777, 999] {
        let position = plan.state.checkpoints.position(ranks[i], 999);
        assert!(
            position.abs_diff(i as u64) <= i as u64 / 100 + 1,
            "{i}: {position}"
        );
    }
    // A visitor of the head not counted yet still waits.
    let mut fresh = head.clone();
    fresh.visitors.push(WaitingVisitor {
        counted: false,
        ..counted(QueueRank(ranks[9].0 + 1))
    });
    let plan = plan_tick(&state, &fresh, Inventory::Available, Millis(12_000));
    assert_eq!(plan.state.waiting, 1_000);

    // A head that is the whole queue sets a drifted count right, and the
    // buckets ahead of it go.
    let whole = Head {
        visitors: ranks[997..].iter().copied().map(counted).collect(),
        known_to: QueueRank(u128::MAX),
        whole: true,
    };
    let plan = plan_tick(&state, &whole, Inventory::Available, Millis(9_000));
    assert_eq!(
        (plan.status, plan.state.waiting),
        (QueueStatus::Scheduled, 3)
    );
    assert_eq!(plan.state.counts.total(), 4, "the last band only");
}

#[test]
fn before_the_opening_the_first_band_is_not_all_told_it_is_next() {
    // No head before the opening: every point comes from the counts.
    let mut state = QueueState::new(1, settings(10_000, 60));
    let ranks: Vec<QueueRank> = (0..1_000u128).map(|i| QueueRank(i << 54)).collect();
    state.counts.record(0, ranks.iter().copied(), 5_000);
    let plan = plan_tick(
        &state,
        &Head::default(),
        Inventory::Available,
        Millis(9_000),
    );
    let points = &plan.state.checkpoints;
    assert_eq!(points.position(ranks[0], 1_000), 1);
    // The first band's last visitor is fourth, not first.
    assert_eq!(points.position(ranks[3], 1_000), 4);
    assert_eq!(points.position(ranks[999], 1_000), 1_000);
}

#[test]
fn a_drawn_visitor_given_a_slot_behind_a_later_key_is_counted_late() {
    let state = QueueState::new(1, settings(10_000, 600));
    let drawn = |rank: u128| WaitingVisitor {
        rank: QueueRank(rank),
        eligible_us: 10 * S,
        counted: true,
    };
    let head = |ranks: &[u128]| Head {
        visitors: ranks.iter().copied().map(drawn).collect(),
        known_to: QueueRank(u128::MAX),
        whole: true,
    };
    let first = plan_tick(&state, &head(&[5, 9]), Inventory::Available, Millis(12_100));
    assert_eq!((first.slots.len(), first.state.late_drawn), (2, 0));
    assert_eq!(first.state.last_drawn, Some(QueueRank(9)));
    // Rank 7 shows up only now: it goes next, and it came late; rank 12
    // after it does not.
    let next = plan_tick(
        &first.state,
        &head(&[7, 12]),
        Inventory::Available,
        Millis(12_400),
    );
    assert_eq!((next.slots.len(), next.state.late_drawn), (2, 1));
    assert_eq!(next.state.last_drawn, Some(QueueRank(12)));
    // A later joiner is never late.
    let later = queue_rank(Millis(10_500), Millis(10_000), 0).0;
    let after = plan_tick(
        &next.state,
        &head(&[later]),
        Inventory::Available,
        Millis(12_700),
    );
    assert_eq!((after.slots.len(), after.state.late_drawn), (1, 1));
}

#[test]
fn a_tick_plans_no_more_slots_than_pending_can_hold() {
    let mut state = QueueState::new(1, settings(10_000, 1_000_000));
    let many = waiting(&vec![10 * S; 3_000]);
    let plan = plan_tick(&state, &many, Inventory::Available, Millis(15_000));
    assert_eq!(plan.slots.len(), MAX_PENDING);
    state.pending = (0..MAX_PENDING - 5)
        .map(|i| PendingAdmission {
            visitor_id: crate::domain::VisitorId::parse(&format!("v{i}")).unwrap(),
            rank: QueueRank(i as u128),
            slot_us: 12 * S + i as i64,
        })
        .collect();
    let plan = plan_tick(&state, &many, Inventory::Available, Millis(15_000));
    assert_eq!(plan.slots.len(), 5);
}
