//! The counter checker's table tests: caps and refusals for want of room.

use super::seat_tests::{w, S};
use super::*;

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

/// `sold-out` for `quantity` units, told `available`.
fn refused_units(
    start: Micros,
    end: Micros,
    order: &str,
    (quantity, available): (u64, u64),
) -> CounterOp {
    CounterOp::Refused {
        window: w(start, end),
        order: order.into(),
        quantity,
        available,
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
            vec![
                took(0, 10, "a", 5, 9 * S),
                refused_units(S, S + 10, "b", (1, 0)),
            ],
            true,
        ),
        (
            "room for the units refused",
            vec![
                took(0, 10, "a", 3, 9 * S),
                refused_units(S, S + 10, "b", (2, 1)),
            ],
            false,
        ),
        (
            "a take in flight during the refusal may explain it",
            vec![
                took(S, S + 100, "a", 5, 9 * S),
                refused_units(S + 50, S + 60, "b", (1, 0)),
            ],
            true,
        ),
        (
            "a take sent after the refusal answered does not",
            vec![
                took(2 * S, 2 * S + 10, "a", 5, 9 * S),
                refused_units(S, S + 10, "b", (1, 0)),
            ],
            false,
        ),
        (
            "an order's own units do not explain its refusal",
            vec![
                took(0, 10, "b", 3, 9 * S),
                refused_units(S, S + 10, "b", (4, 3)),
            ],
            false,
        ),
        (
            "the others' units and the ones asked for over the cap",
            vec![
                took(0, 10, "a", 2, 9 * S),
                took(0, 10, "b", 3, 9 * S),
                refused_units(S, S + 10, "b", (4, 3)),
            ],
            true,
        ),
        (
            "a take answered 503 may explain it",
            vec![
                unknown_units(0, 10, "a", 5),
                refused_units(S, S + 10, "b", (1, 0)),
            ],
            true,
        ),
        (
            "units expired before the refusal do not",
            vec![
                took(0, 10, "a", 5, S),
                refused_units(2 * S, 2 * S + 10, "b", (1, 0)),
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
                refused_units(2 * S, 2 * S + 10, "b", (1, 0)),
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
                refused_units(2 * S, 2 * S + 10, "b", (1, 0)),
            ],
            true,
        ),
        (
            "told fewer available than the others left (they held 2 at most)",
            vec![
                took(0, 10, "a", 2, 9 * S),
                took(0, 10, "c", 1, 9 * S),
                refused_units(S, S + 10, "b", (3, 1)),
            ],
            false,
        ),
        (
            "told more available than the others surely left (they held 3)",
            vec![
                took(0, 10, "a", 3, 9 * S),
                refused_units(S, S + 10, "b", (4, 3)),
            ],
            false,
        ),
        (
            "told as many available as it asked for",
            vec![
                took(0, 10, "a", 5, 9 * S),
                refused_units(S, S + 10, "b", (1, 1)),
            ],
            false,
        ),
        (
            "a take in flight may leave either figure available",
            vec![
                took(S, S + 100, "a", 3, 9 * S),
                took(0, 10, "c", 1, 9 * S),
                refused_units(S + 50, S + 60, "b", (4, 1)),
                refused_units(S + 50, S + 60, "b", (5, 4)),
            ],
            true,
        ),
        (
            "an order with two requests in flight may be read half way",
            vec![
                took(0, 10, "a", 2, 9 * S),
                took(S, S + 100, "a", 4, 9 * S),
                took(S + 20, S + 100, "a", 1, 9 * S),
                refused_units(S + 50, S + 60, "b", (5, 0)),
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
