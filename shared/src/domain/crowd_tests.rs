use super::*;

const SEAT: &str = "gala#A-1-1";
const T0: Millis = Millis(1_700_000_000_000);

fn at(ms: i64) -> Millis {
    Millis(T0.0 + ms)
}

/// A memory in which `rival` holds SEAT until `expires_at`, refused
/// exactly at each of `refusals` (ms after T0).
fn memory(refusals: &[i64], seen: SeatSeen) -> RefusalMemory {
    let mut m = RefusalMemory::default();
    for &ms in refusals {
        m.refused_exactly(SEAT, "rival", seen, at(ms));
    }
    m
}

#[test]
fn refuses_from_memory_only_within_the_contracts_bounds() {
    let held = SeatSeen::HeldUntil(at(60_000));
    // (exact refusals at, asked at, claimant, seen, refused?, why)
    type Case = (
        &'static [i64],
        i64,
        &'static str,
        SeatSeen,
        bool,
        &'static str,
    );
    let cases: [Case; 12] = [
        (
            &[0, 10],
            30,
            "me",
            held,
            true,
            "two refusals within a second: contended",
        ),
        (&[0], 30, "me", held, false, "one refusal is not a crowd"),
        (
            &[0, 20],
            1_000,
            "me",
            held,
            false,
            "the first refusal left the window",
        ),
        (
            &[0, 999],
            999,
            "me",
            held,
            true,
            "both inside the last second",
        ),
        (
            &[0, 10, 20],
            30,
            "rival",
            held,
            false,
            "the holder's own claim stays exact",
        ),
        (
            &[0, 10, 20],
            30,
            "me",
            SeatSeen::Sold,
            true,
            "a sold seat, contended",
        ),
        (
            &[0, 10, 20],
            30,
            "me",
            SeatSeen::HeldUntil(at(29)),
            false,
            "the hold has expired",
        ),
        (
            &[0, 10, 20],
            30,
            "me",
            SeatSeen::HeldUntil(at(30)),
            false,
            "expired at its expiresAt exactly",
        ),
        (
            &[0, 10, 20],
            30,
            "me",
            SeatSeen::HeldUntil(at(31)),
            true,
            "live 1 ms before its expiry",
        ),
        (
            &[0, 10, 20],
            -1,
            "me",
            held,
            false,
            "a clock that went backwards: exact",
        ),
        (&[], 30, "me", held, false, "nothing remembered"),
        (&[0, 10, 20], 25, "me", held, true, "asked between refusals"),
    ];
    for (refusals, asked, claimant, seen, want, why) in cases {
        let mut m = memory(refusals, seen);
        let got = m.refuse(SEAT, claimant, at(asked));
        assert_eq!(got.is_some(), want, "{why}");
        if want {
            assert_eq!(got, Some(seen), "{why}: answers what it saw");
        }
    }
}

#[test]
fn what_it_saw_may_be_at_most_five_seconds_old() {
    let mut m = memory(&[0, 10, 20], SeatSeen::HeldUntil(at(60_000)));
    // Refusals from memory keep the seat contended, but not the
    // observation fresh: the exact path runs again past 5 s.
    let mut asked = 20;
    while asked + 100 <= 20 + REMEMBERED_FOR_MS {
        asked += 100;
        assert!(m.refuse(SEAT, "me", at(asked)).is_some(), "at {asked} ms");
    }
    assert!(m.refuse(SEAT, "me", at(20 + REMEMBERED_FOR_MS)).is_some());
    assert!(m
        .refuse(SEAT, "me", at(20 + REMEMBERED_FOR_MS + 1))
        .is_none());
    // The exact path refuses again: memory is fresh once more.
    m.refused_exactly(SEAT, "rival", SeatSeen::HeldUntil(at(60_000)), at(5_100));
    assert!(m.refuse(SEAT, "me", at(5_101)).is_some());
}

#[test]
fn an_exact_answer_replaces_what_was_remembered() {
    let mut m = memory(&[0, 10, 20], SeatSeen::HeldUntil(at(60_000)));
    // Sold since, to the same holder: remembered as sold.
    m.refused_exactly(SEAT, "rival", SeatSeen::Sold, at(30));
    assert_eq!(m.refuse(SEAT, "me", at(40)), Some(SeatSeen::Sold));
    // Taken over by "me" (an exact success here): forgotten.
    m.forget(SEAT);
    assert_eq!(m.refuse(SEAT, "other", at(50)), None);
}

#[test]
fn seats_are_remembered_apart_and_the_memory_is_bounded() {
    let mut m = RefusalMemory::default();
    for i in 0..REMEMBERED_SEATS + 10 {
        let seat = format!("s{i}");
        for ms in [0, 1, 2] {
            m.refused_exactly(&seat, "rival", SeatSeen::Sold, at(ms));
        }
    }
    assert!(m.seats.len() <= REMEMBERED_SEATS);
    // A contended seat; another seat is not contended by it.
    let mut m = memory(&[0, 10, 20], SeatSeen::Sold);
    assert!(m.refuse("gala#A-1-2", "me", at(30)).is_none());
    assert!(m.refuse(SEAT, "me", at(30)).is_some());
}

#[test]
fn a_read_refuses_exactly_what_the_write_would() {
    use crate::domain::{OrderId, SeatState};
    let order = |id: &str| OrderId::parse(id).unwrap_or_else(|e| panic!("{e}"));
    let held_until = |ms: i64| SeatState::Held {
        order: order("rival"),
        expires_at: at(ms),
    };
    // (state, claimant, asked at, refused as, why)
    let cases: [(SeatState, &str, i64, Option<SeatSeen>, &str); 7] = [
        (
            SeatState::Available,
            "me",
            0,
            None,
            "free: the write claims it",
        ),
        (
            SeatState::Sold {
                order: order("rival"),
            },
            "me",
            0,
            Some(SeatSeen::Sold),
            "sold to another",
        ),
        (
            SeatState::Sold { order: order("me") },
            "me",
            0,
            Some(SeatSeen::Sold),
            "sold, even to the claimant: the write refuses it too",
        ),
        (
            held_until(500),
            "me",
            0,
            Some(SeatSeen::HeldUntil(at(500))),
            "held by another, live",
        ),
        (
            held_until(500),
            "me",
            499,
            Some(SeatSeen::HeldUntil(at(500))),
            "a millisecond before its expiry",
        ),
        (
            held_until(500),
            "me",
            500,
            None,
            "at expiresAt the hold is over",
        ),
        (
            held_until(500),
            "rival",
            0,
            None,
            "the holder re-claims its own seat",
        ),
    ];
    for (state, claimant, asked, refused, why) in cases {
        let got = refusal_on_read(&state, claimant, at(asked));
        assert_eq!(got.map(|(_, seen)| seen), refused, "{why}");
        if let Some((holder, _)) = refusal_on_read(&state, claimant, at(asked)) {
            assert_ne!(holder, "", "{why}: the holder is named");
        }
    }
}

#[test]
fn a_throttled_read_falls_back_on_what_was_seen_within_the_same_bounds() {
    let held = SeatSeen::HeldUntil(at(60_000));
    let refused = Recalled::Refused(held);
    // (refused exactly at, asked at, claimant, what it recalls, why)
    type Case<'a> = (&'a [i64], i64, &'a str, Recalled, &'a str);
    let cases: [Case; 9] = [
        (&[0], 10, "buyer", refused, "one exact refusal is enough"),
        (&[], 10, "buyer", Recalled::Nothing, "nothing seen: a 503"),
        (&[0], 5_000, "buyer", refused, "five seconds old"),
        (&[0], 5_001, "buyer", Recalled::Nothing, "older than 5 s"),
        (&[0], 10, "rival", Recalled::Holder, "the holder: the write"),
        (
            &[0],
            5_001,
            "rival",
            Recalled::Nothing,
            "the holder, too old",
        ),
        (&[59_000], 59_999, "buyer", refused, "before expiresAt"),
        (
            &[59_000],
            60_000,
            "buyer",
            Recalled::Nothing,
            "at expiresAt",
        ),
        (
            &[59_000],
            60_000,
            "rival",
            Recalled::Nothing,
            "expired holder",
        ),
    ];
    for (refusals, asked, claimant, recalled, why) in cases {
        let mut m = memory(refusals, held);
        assert_eq!(m.recall(SEAT, claimant, at(asked)), recalled, "{why}");
        let other = m.recall("gala#A-1-2", claimant, at(asked));
        assert_eq!(other, Recalled::Nothing, "{why}: per seat");
    }
    // A recall counts as a refusal: with the exact one, the seat is
    // contended.
    let mut m = memory(&[0], held);
    let one = m.refuse(SEAT, "buyer", at(10));
    assert_eq!(one, None, "one refusal: not contended");
    assert_eq!(m.recall(SEAT, "buyer", at(20)), refused);
    let two = m.refuse(SEAT, "buyer", at(30));
    assert_eq!(two, Some(held), "two within a second");
}
