use super::*;

fn w(start: Micros, end: Micros) -> Window {
    Window::new(start, end)
}

fn held(start: Micros, end: Micros, order: &str, expires: Micros) -> SeatOp {
    SeatOp::Held {
        window: w(start, end),
        order: order.into(),
        expires,
    }
}

fn refused(start: Micros, end: Micros, from_memory: bool) -> SeatOp {
    SeatOp::Refused {
        window: w(start, end),
        from_memory,
    }
}

fn released(start: Micros, end: Micros, order: &str) -> SeatOp {
    SeatOp::Released {
        window: w(start, end),
        order: order.into(),
    }
}

fn sold(start: Micros, end: Micros, order: &str) -> SeatOp {
    SeatOp::Sold {
        window: w(start, end),
        order: order.into(),
    }
}

const S: Micros = 1_000_000;

#[test]
fn seat_histories_that_some_instants_explain_are_accepted() {
    let cases: Vec<(&str, Vec<SeatOp>)> = vec![
        (
            "one holder, refusals while it holds",
            vec![
                held(0, 10, "a", 100 * S),
                refused(5, 20, false),
                refused(50 * S, 50 * S + 10, false),
            ],
        ),
        (
            "requests at once: one holds, the others are refused",
            vec![
                refused(0, 30, false),
                held(0, 30, "a", 100 * S),
                refused(0, 30, false),
            ],
        ),
        (
            "a second holder whose request spans the first's expiry",
            vec![held(0, 10, "a", 2 * S), held(S, 3 * S, "b", 9 * S)],
        ),
        (
            "released, then held by another",
            vec![
                held(0, 10, "a", 100 * S),
                released(S, S + 10, "a"),
                held(S + 5, S + 20, "b", 100 * S),
            ],
        ),
        (
            "the holder re-claims, extends and buys",
            vec![
                held(0, 10, "a", 2 * S),
                held(S, S + 10, "a", 3 * S),
                sold(2 * S, 2 * S + 10, "a"),
                refused(50 * S, 50 * S + 10, false),
            ],
        ),
        (
            "the crowd gate refuses from memory 4 s after the hold ended",
            vec![held(0, 10, "a", S), refused(5 * S, 5 * S + 10, true)],
        ),
        (
            "the holder claims again across its expiry, after another held it",
            vec![
                held(0, 10, "a", 100),
                held(101, 102, "b", 500),
                released(103, 104, "b"),
                held(99, 110, "a", 600),
            ],
        ),
        (
            "a late payment sells it after another held it",
            vec![
                held(0, 10, "a", 100),
                held(101, 102, "b", 500),
                released(103, 104, "b"),
                sold(99, 110, "a"),
            ],
        ),
        (
            "a re-claim answered just after the expiry it repeats",
            vec![held(0, 10, "a", 100), held(90, 105, "a", 100)],
        ),
        (
            "a release racing a re-claim of the same order",
            vec![
                held(0, 10, "a", 100),
                released(50, 60, "a"),
                held(55, 70, "a", 100),
                held(80, 90, "b", 500),
            ],
        ),
        (
            "a released hold may end after another's",
            vec![
                held(0, 10, "x", 20),
                held(12, 30, "y", 1000),
                released(15, 100, "y"),
            ],
        ),
        (
            "a claim whose answer was lost explains a refusal",
            vec![
                SeatOp::Unknown {
                    window: w(0, 10),
                    order: "a".into(),
                    expires_by: 100 * S,
                },
                refused(S, S + 10, false),
            ],
        ),
    ];
    for (name, ops) in cases {
        let verdict = check_seat("A-1-1", &ops);
        assert_eq!(verdict.violations, Vec::<String>::new(), "{name}");
        assert_eq!(verdict.operations, ops.len(), "{name}");
    }
}

#[test]
fn seat_histories_no_instants_explain_are_rejected() {
    let cases: Vec<(&str, Vec<SeatOp>, &str)> = vec![
        (
            "two holders, each answered before the other's hold could end",
            vec![held(0, 10, "a", 100 * S), held(5, 20, "b", 100 * S)],
            "was answered held",
        ),
        (
            "a holder answered while another's hold runs",
            vec![
                held(0, 10, "a", 10 * S),
                held(5 * S, 5 * S + 10, "b", 20 * S),
            ],
            "was answered held",
        ),
        (
            "a hold that could only begin at its own expiry",
            vec![held(0, 10, "p", 50), held(0, 100, "x", 50)],
            "was answered held",
        ),
        (
            "sold twice",
            vec![sold(0, 10, "a"), sold(S, S + 10, "b")],
            "was answered held",
        ),
        (
            "a refusal with nobody holding",
            vec![refused(0, 10, false)],
            "no holder",
        ),
        (
            "a refusal after the only hold expired",
            vec![held(0, 10, "a", S), refused(2 * S, 2 * S + 10, false)],
            "no holder",
        ),
        (
            "a refusal from memory 6 s after the hold ended",
            vec![held(0, 10, "a", S), refused(7 * S, 7 * S + 10, true)],
            "or 5 s before",
        ),
        (
            "a refusal after the holder let go",
            vec![
                held(0, 10, "a", 100 * S),
                released(S, S + 10, "a"),
                refused(2 * S, 2 * S + 10, false),
            ],
            "no holder",
        ),
    ];
    for (name, ops, said) in cases {
        let verdict = check_seat("A-1-1", &ops);
        assert_eq!(
            verdict.violations.len(),
            1,
            "{name}: {:?}",
            verdict.violations
        );
        assert!(
            verdict.violations[0].contains(said),
            "{name}: {:?}",
            verdict.violations
        );
    }
}

fn took(start: Micros, end: Micros, order: &str, quantity: u64, expires: Micros) -> CounterOp {
    CounterOp::Took(Take {
        window: w(start, end),
        order: order.into(),
        quantity,
        expires,
    })
}

#[test]
fn a_counter_is_judged_against_its_cap_at_every_instant() {
    let gave_back = CounterOp::Released {
        window: w(S, S + 10),
        order: "a".into(),
    };
    let cases: Vec<(&str, Vec<CounterOp>, bool)> = vec![
        (
            "up to the cap at once",
            vec![took(0, 10, "a", 2, 9 * S), took(0, 10, "b", 3, 9 * S)],
            true,
        ),
        (
            "one over",
            vec![took(0, 10, "a", 3, 9 * S), took(0, 10, "b", 3, 9 * S)],
            false,
        ),
        (
            "one's expiry makes room",
            vec![
                took(0, 10, "a", 3, S),
                took(2 * S, 2 * S + 10, "b", 3, 9 * S),
            ],
            true,
        ),
        (
            "requests spanning the expiry may land after it",
            vec![took(0, 10, "a", 3, S), took(0, 2 * S, "b", 3, 9 * S)],
            true,
        ),
        (
            "a release makes room",
            vec![
                took(0, 10, "a", 4, 9 * S),
                gave_back.clone(),
                took(S + 5, S + 20, "b", 4, 9 * S),
            ],
            true,
        ),
        (
            "a release of another order makes none",
            vec![
                took(0, 10, "b", 4, 9 * S),
                gave_back,
                took(S + 5, S + 20, "c", 4, 9 * S),
            ],
            false,
        ),
        (
            "sold units count for good",
            vec![
                took(0, 10, "a", 5, Micros::MAX),
                took(90 * S, 90 * S + 1, "b", 1, 99 * S),
            ],
            false,
        ),
        (
            "an order's answers may land in either order",
            vec![
                took(0, 100, "a", 1, 9 * S),
                took(10, 20, "a", 5, 9 * S),
                took(200, 210, "b", 4, 9 * S),
            ],
            true,
        ),
        (
            "an order's sale replaces its hold",
            vec![
                took(0, 10, "a", 5, 9 * S),
                took(S, S + 10, "a", 5, Micros::MAX),
            ],
            true,
        ),
        (
            "an order's second answer replaces its first",
            vec![
                took(0, 10, "a", 3, 9 * S),
                took(S, S + 10, "a", 2, 9 * S),
                took(2 * S, 2 * S + 10, "b", 3, 9 * S),
            ],
            true,
        ),
        (
            "a 503 that may have lowered an order's units makes room",
            vec![
                took(0, 10, "a", 3, 9 * S),
                unknown_units(S, S + 10, "a", 2),
                took(2 * S, 2 * S + 10, "b", 3, 9 * S),
            ],
            true,
        ),
        (
            "a 503 asking as many leaves them counted",
            vec![
                took(0, 10, "a", 3, 9 * S),
                unknown_units(S, S + 10, "a", 3),
                took(2 * S, 2 * S + 10, "b", 3, 9 * S),
            ],
            false,
        ),
    ];
    for (name, ops, ok) in cases {
        let verdict = check_counter("FLOOR", 5, &ops);
        assert_eq!(
            verdict.violations.is_empty(),
            ok,
            "{name}: {:?}",
            verdict.violations
        );
    }
}

fn refused_units(start: Micros, end: Micros, order: &str, quantity: u64) -> CounterOp {
    CounterOp::Refused {
        window: w(start, end),
        order: order.into(),
        quantity,
    }
}

fn unknown_units(start: Micros, end: Micros, order: &str, quantity: u64) -> CounterOp {
    CounterOp::Unknown(Take {
        window: w(start, end),
        order: order.into(),
        quantity,
        expires: 9 * S,
    })
}

#[test]
fn a_refusal_for_want_of_room_needs_the_others_holding_too_many() {
    let cases: Vec<(&str, Vec<CounterOp>, bool)> = vec![
        (
            "the others hold every unit",
            vec![took(0, 10, "a", 5, 9 * S), refused_units(S, S + 10, "b", 1)],
            true,
        ),
        (
            "room for the units refused",
            vec![took(0, 10, "a", 3, 9 * S), refused_units(S, S + 10, "b", 2)],
            false,
        ),
        (
            "a take in flight during the refusal may explain it",
            vec![
                took(S, S + 100, "a", 5, 9 * S),
                refused_units(S + 50, S + 60, "b", 1),
            ],
            true,
        ),
        (
            "a take sent after the refusal answered does not",
            vec![
                took(2 * S, 2 * S + 10, "a", 5, 9 * S),
                refused_units(S, S + 10, "b", 1),
            ],
            false,
        ),
        (
            "an order's own units do not explain its refusal",
            vec![took(0, 10, "b", 3, 9 * S), refused_units(S, S + 10, "b", 4)],
            false,
        ),
        (
            "the others' units and the ones asked for over the cap",
            vec![
                took(0, 10, "a", 2, 9 * S),
                took(0, 10, "b", 3, 9 * S),
                refused_units(S, S + 10, "b", 4),
            ],
            true,
        ),
        (
            "a take answered 503 may explain it",
            vec![
                unknown_units(0, 10, "a", 5),
                refused_units(S, S + 10, "b", 1),
            ],
            true,
        ),
        (
            "units expired before the refusal do not",
            vec![
                took(0, 10, "a", 5, S),
                refused_units(2 * S, 2 * S + 10, "b", 1),
            ],
            false,
        ),
        (
            "units surely given back before it do not",
            vec![
                took(0, 10, "a", 5, 9 * S),
                CounterOp::Released {
                    window: w(S, S + 10),
                    order: "a".into(),
                },
                refused_units(2 * S, 2 * S + 10, "b", 1),
            ],
            false,
        ),
        (
            "units whose release may have landed after it do",
            vec![
                took(0, 10, "a", 5, 9 * S),
                CounterOp::Released {
                    window: w(S, 3 * S),
                    order: "a".into(),
                },
                refused_units(2 * S, 2 * S + 10, "b", 1),
            ],
            true,
        ),
        (
            "a take answered 503 counts toward no cap",
            vec![took(0, 10, "a", 3, 9 * S), unknown_units(0, 10, "b", 3)],
            true,
        ),
    ];
    for (name, ops, ok) in cases {
        let verdict = check_counter("FLOOR", 5, &ops);
        assert_eq!(
            verdict.violations.is_empty(),
            ok,
            "{name}: {:?}",
            verdict.violations
        );
        if !ok {
            assert!(
                verdict.violations[0].contains("refused"),
                "{name}: {:?}",
                verdict.violations
            );
        }
    }
}
