use super::*;
use crate::error::Error;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// A block of `n` seats of section A's row 1 at `start`.
fn choice(row: usize, start: usize, n: usize) -> Result<Choice, Error> {
    let seat = |i: usize| SeatId::parse(&format!("A-1-{}", start + i + 1));
    Ok(Choice {
        candidate: 0,
        row,
        start,
        seats: (0..n).map(seat).collect::<Result<_, _>>()?,
    })
}

#[test]
fn a_lost_race_marks_the_named_seats_taken_and_sends_what_was_read_before_to_a_check() -> TestResult
{
    let mut in_hand = RowsInHand::new(&[None]);
    in_hand.sections[0].rows = vec![vec![true; 6], vec![true; 6]];
    in_hand.read_again(Millis(0));
    assert!(in_hand.sections[0].rows.is_empty() && in_hand.is_exact(Millis(0)));
    in_hand.sections[0].rows = vec![vec![true; 6], vec![true; 6]];
    let held = Some(SeatSeen::HeldUntil(Millis(500)));
    in_hand.race_lost(&choice(1, 2, 2)?, &[(0, held), (1, Some(SeatSeen::Sold))]);
    let section = &in_hand.sections[0];
    assert_eq!(section.rows[1], [true, true, false, false, true, true]);
    assert_eq!(section.rows[0], [true; 6]);
    // Both rows were read before the race: the window is checked.
    assert!(section.fresh.iter().all(|fresh| !fresh));
    // The window is (0, 2) and (0, 0); the check looks past it.
    let ahead = [(0, 2), (0, 0), (0, 4), (1, 0), (1, 4)];
    assert_eq!(
        section.blocks_to_check((&[], Ask::seats(2)), 1),
        Some(ahead.to_vec())
    );
    // What the race named is known: a refusal may rest on it while
    // the hold it saw lives, not after.
    assert!(in_hand.is_exact(Millis(499)));
    assert!(!in_hand.is_exact(Millis(500)), "a hold seen has lapsed");
    in_hand.read_again(Millis(0));
    assert_eq!(in_hand.sections[0].until, None, "a read starts again");
    Ok(())
}

#[test]
fn a_rival_in_flight_is_left_as_read_until_a_check_sees_what_it_left() -> TestResult {
    let mut in_hand = RowsInHand::new(&[None]);
    in_hand.sections[0].rows = vec![vec![true; 4]];
    // Seat 1 was a rival's in flight, seat 2 held until 9.
    let held = Some(SeatSeen::HeldUntil(Millis(9)));
    in_hand.race_lost(&choice(0, 1, 2)?, &[(0, None), (1, held)]);
    let section = &in_hand.sections[0];
    assert_eq!(section.rows[0], [true, true, false, true]);
    assert_eq!(
        (section.until, &section.in_flight),
        (Some(Millis(9)), &vec![(0, 1)])
    );
    assert!(
        !in_hand.is_exact(Millis(0)),
        "no refusal on a rival in flight"
    );
    // A check that finds it free leaves it free, and a refusal may rest
    // again; one that finds the held seat released frees that too.
    let free = Learnt::of_state(&SeatState::Available, Millis(0));
    in_hand.sections[0].learn(0, 1, free);
    assert!(in_hand.is_exact(Millis(0)));
    in_hand.sections[0].learn(0, 2, free);
    assert_eq!(in_hand.sections[0].rows[0], [true; 4]);
    // A hold the check sees lapsed is free; a live one is taken.
    let order = crate::domain::OrderId::parse("o")?;
    let lapsed = SeatState::Held {
        order,
        expires_at: Millis(5),
    };
    assert_eq!(Learnt::of_state(&lapsed, Millis(5)), Learnt::Free);
    assert_eq!(
        Learnt::of_state(&lapsed, Millis(4)),
        Learnt::Taken(SeatSeen::HeldUntil(Millis(5)))
    );
    Ok(())
}

#[test]
fn only_blocks_read_before_the_last_race_and_not_checked_since_are_checked() {
    let mut section = SectionInHand {
        rows: vec![vec![true; 4]],
        fresh: vec![true],
        ..SectionInHand::default()
    };
    assert_eq!(
        section.blocks_to_check((&[], Ask::seats(2)), 2),
        None,
        "read since"
    );
    section.race_lost();
    section.extend(1, vec![(vec![true; 4], true)], None, Millis(0));
    // Window of 4 over both rows: only row 0's blocks were read before.
    assert_eq!(
        section.blocks_to_check((&[], Ask::seats(2)), 2),
        Some(vec![(0, 0), (0, 2)])
    );
    section.checked.insert((0, 0));
    assert_eq!(
        section.blocks_to_check((&[], Ask::seats(2)), 2),
        Some(vec![(0, 2)])
    );
    section.checked.insert((0, 2));
    assert_eq!(
        section.blocks_to_check((&[], Ask::seats(2)), 2),
        None,
        "all checked"
    );
    // A check reads at most 100 seats: 25 blocks of four, past a
    // window of 2.
    let mut wide = SectionInHand {
        rows: vec![vec![true; 200]],
        ..SectionInHand::default()
    };
    assert_eq!(
        wide.blocks_to_check((&[], Ask::seats(4)), 1)
            .map(|b| b.len()),
        Some(25)
    );
    // A seat in flight is checked with them: one block less.
    wide.learn(0, 0, Learnt::InFlight);
    assert_eq!(
        wide.blocks_to_check((&[], Ask::seats(4)), 1)
            .map(|b| b.len()),
        Some(24)
    );
}

#[test]
fn seats_seen_taken_stay_taken_across_reads_of_the_map() -> TestResult {
    let mut in_hand = RowsInHand::new(&[None]);
    in_hand.sections[0].rows = vec![vec![true; 6], vec![true; 200]];
    in_hand.race_lost(&choice(1, 3, 2)?, &[(1, Some(SeatSeen::Sold))]);
    in_hand.race_lost(&choice(0, 3, 1)?, &[(0, Some(SeatSeen::Sold))]);
    in_hand.read_again(Millis(0));
    // The map read again still shows every seat free.
    let rows = vec![(vec![true; 6], true), (vec![true; 200], false)];
    in_hand.sections[0].extend(0, rows, None, Millis(0));
    let rows = &in_hand.sections[0].rows;
    assert!(!rows[1][4], "the long row's lost seat stays taken");
    assert!(rows[0][3], "a short row's consistent read is the truth");
    assert_eq!(rows[1].iter().filter(|f| !**f).count(), 1);
    // Read from the map too, the short row keeps its seat taken.
    in_hand.read_again_where_runs_were(2);
    let sold = SeatSeen::Sold;
    assert_eq!(
        in_hand.sections[0].seen_taken,
        vec![(1, 4, sold), (0, 3, sold)]
    );
    let rows = vec![(vec![true; 6], false)];
    in_hand.sections[0].extend(0, rows, None, Millis(0));
    assert!(!in_hand.sections[0].rows[0][3]);
    // A hold seen lapses: the map read after it shows the seat free.
    let mut section = SectionInHand::default();
    let held = Learnt::Taken(SeatSeen::HeldUntil(Millis(10)));
    section.extend(0, vec![(vec![true; 4], false)], None, Millis(0));
    section.learn(0, 1, held);
    let map_rows = || vec![(vec![true; 4], false)];
    let mut before = section.again();
    before.extend(0, map_rows(), None, Millis(9));
    assert!(!before.rows[0][1] && before.until == Some(Millis(10)));
    let mut after = section.again();
    after.extend(0, map_rows(), None, Millis(10));
    assert!(after.rows[0][1] && after.until.is_none(), "never an expiry");
    Ok(())
}

#[test]
fn after_a_lost_race_only_rows_that_had_a_run_are_read_and_no_refusal_rests_on_it() {
    let mut in_hand = RowsInHand::new(&[None]);
    // Row 0 has no pair left, row 1 has one.
    in_hand.sections[0].rows = vec![
        vec![true, false, true, false],
        vec![false, true, true, false],
    ];
    in_hand.read_again_where_runs_were(2);
    let section = &in_hand.sections[0];
    assert!(section.rows.is_empty());
    assert!(!section.reads(0) && section.reads(1) && section.reads(2));
    assert!(
        !in_hand.is_exact(Millis(0)),
        "a row passed over: no refusal on it"
    );
    // Every row with a run: read whole, and a refusal may rest on it.
    in_hand.sections[0].rows = vec![vec![true; 4]];
    in_hand.read_again_where_runs_were(2);
    assert!(in_hand.is_exact(Millis(0)));
    in_hand.read_again(Millis(0));
    assert!(in_hand.sections[0].reads(0) && in_hand.is_exact(Millis(0)));
}

#[test]
fn a_refusal_after_reading_again_rests_on_the_summaries_until_their_hold_lapses() {
    // The summaries ruled row 1 out on a hold that expires at 50.
    let may = [true, false];
    let mut in_hand = RowsInHand::new(&[Some(Millis(50))]);
    in_hand.sections[0].rows = vec![vec![false; 4]];
    in_hand.sections[0].learn(0, 1, Learnt::Taken(SeatSeen::HeldUntil(Millis(30))));
    in_hand.read_again(Millis(40));
    assert_eq!(
        in_hand.sections[0].to_read(&may, &[true, true]),
        [true, false]
    );
    in_hand.sections[0].rows = vec![vec![false; 4]; 2];
    assert!(
        in_hand.is_exact(Millis(49)),
        "the hold read lapsed, read again"
    );
    assert!(!in_hand.is_exact(Millis(50)), "the summaries' hold lapsed");
    // Read again once it has: row 1 is read too, and a refusal rests
    // on the reads alone.
    in_hand.read_again(Millis(50));
    assert_eq!(
        in_hand.sections[0].to_read(&may, &[true, true]),
        [true, true]
    );
    in_hand.sections[0].rows = vec![vec![false; 4]; 2];
    assert!(in_hand.is_exact(Millis(60)));
    in_hand.read_again(Millis(70));
    assert_eq!(
        in_hand.sections[0].to_read(&may, &[true, true]),
        [true, true],
        "for good"
    );
    // A row whose plan cannot hold the block is never read.
    assert_eq!(
        in_hand.sections[0].to_read(&may, &[true, false]),
        [true, false]
    );
}
