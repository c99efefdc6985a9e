//! The seat checker's table tests: histories to accept and to reject.

use super::*;

pub(super) fn w(start: Micros, end: Micros) -> Window {
    Window::new(start, end)
}

/// A second.
pub(super) const S: Micros = 1_000_000;

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
        taken: Taken::Held,
    }
}

fn refused_as_sold(start: Micros, end: Micros, from_memory: bool) -> SeatOp {
    SeatOp::Refused {
        window: w(start, end),
        from_memory,
        taken: Taken::Sold,
    }
}

fn order_refused(start: Micros, end: Micros, order: &str, holdable_until: Micros) -> SeatOp {
    SeatOp::OrderRefused {
        window: w(start, end),
        order: order.into(),
        holdable_until,
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
                refused_as_sold(50 * S, 50 * S + 10, false),
            ],
        ),
        (
            "the crowd gate refuses from memory 4 s after the holder let go",
            vec![
                held(0, 10, "a", 100 * S),
                released(S, S + 10, "a"),
                refused(5 * S, 5 * S + 10, true),
            ],
        ),
        (
            "refused as sold after the sale, and from memory after its refund",
            vec![
                held(0, 10, "a", 100 * S),
                sold(S, S + 10, "a"),
                refused_as_sold(S + 5, S + 20, false),
                released(2 * S, 2 * S + 10, "a"),
                refused_as_sold(5 * S, 5 * S + 10, true),
            ],
        ),
        (
            "refused as held while the payment was in flight",
            vec![
                held(0, 10, "a", 100 * S),
                sold(S, S + 10, "a"),
                refused(S + 5, S + 20, false),
            ],
        ),
        (
            "order-not-holdable once its margin came, or once it was sold",
            vec![
                order_refused(5 * S, 5 * S + 10, "a", 5 * S),
                held(0, 10, "b", 100 * S),
                sold(S, S + 10, "b"),
                order_refused(S + 5, S + 20, "b", 100 * S),
            ],
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
        let seat = check_seat("A-1-1", &ops);
        let orders = check_order_refusals(&ops);
        assert_eq!(seat.violations, Vec::<String>::new(), "{name}");
        assert_eq!(orders.violations, Vec::<String>::new(), "{name}");
        assert_eq!(seat.operations, ops.len(), "{name}");
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
            "no live holder",
        ),
        (
            "a refusal after the only hold expired",
            vec![held(0, 10, "a", S), refused(2 * S, 2 * S + 10, false)],
            "no live holder",
        ),
        (
            "a refusal from memory 6 s after the holder let go",
            vec![
                held(0, 10, "a", 100 * S),
                released(S, S + 10, "a"),
                refused(7 * S, 7 * S + 10, true),
            ],
            "released within 5 s before",
        ),
        (
            "a refusal from memory after the hold expired (memory never misses an expiry)",
            vec![held(0, 10, "a", S), refused(2 * S, 2 * S + 10, true)],
            "released within 5 s before",
        ),
        (
            "two holders at once, one of them released later",
            vec![
                held(0, 10, "a", 100 * S),
                held(S, S + 10, "b", 100 * S),
                released(2 * S, 2 * S + 10, "a"),
            ],
            "released in the end",
        ),
        (
            "refused as sold while it was only held",
            vec![held(0, 10, "a", 100 * S), refused_as_sold(S, S + 10, false)],
            "seat-sold with no sale",
        ),
        (
            "refused as held long after the sale",
            vec![
                held(0, 10, "a", 100 * S),
                sold(S, S + 10, "a"),
                refused(2 * S, 2 * S + 10, false),
            ],
            "seat-held with no live holder",
        ),
        (
            "order-not-holdable to a live order neither sold nor given up",
            vec![
                held(0, 10, "b", 100 * S),
                order_refused(S, S + 10, "b", 100 * S),
            ],
            "order-not-holdable to b",
        ),
        (
            "a refusal after the holder let go",
            vec![
                held(0, 10, "a", 100 * S),
                released(S, S + 10, "a"),
                refused(2 * S, 2 * S + 10, false),
            ],
            "no live holder",
        ),
    ];
    for (name, ops, said) in cases {
        let verdict = check_seat("A-1-1", &ops).and(check_order_refusals(&ops));
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

#[test]
fn an_order_sold_on_another_seat_explains_its_refusal_on_this_one() {
    // The order bought A-1-1, then claimed A-1-2 before its deadline.
    let bought = [held(0, 10, "a", 100 * S), sold(S, S + 10, "a")];
    let refused = vec![order_refused(2 * S, 2 * S + 10, "a", 100 * S)];
    assert!(!check_order_refusals(&refused).violations.is_empty());
    let every_seat = bought.iter().chain(&refused);
    let verdict = check_order_refusals(every_seat);
    assert_eq!(verdict.operations, 1);
    assert_eq!(verdict.violations, Vec::<String>::new());
}
