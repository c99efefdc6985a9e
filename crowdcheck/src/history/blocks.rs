//! best-available's refusal: `not-enough-seats` for n says that no row of
//! the section had n adjacent seats free when the request read it, so at
//! some instant within the request every row's free runs were shorter
//! than n even counting every hold that may have been live then.
//!
//! A refusal may come from the instance's stream-fed run summaries, which
//! can be `stale_by` old: it is explained by an instant from that long
//! before its request to its end. Such a view may miss a release, never
//! an expiry: at an instant before the request, a hold that expired
//! before the request began does not count.

use super::holds::{holds_of, Hold};
use super::seats::held_at;
use super::{Micros, SeatOp, Verdict, Window};
use std::collections::HashMap;

/// One `not-enough-seats` answer: when it was in flight and the seats it
/// asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockRefusal {
    pub window: Window,
    pub quantity: usize,
}

/// Judges `refusals` on a section of `rows` (each row's seat ids in seat
/// order) whose seats' histories are `seats`; a seat without a history
/// was free throughout. `section` names it in the violations.
pub fn check_block_refusals(
    section: &str,
    rows: &[Vec<String>],
    seats: &HashMap<String, Vec<SeatOp>>,
    refusals: &[BlockRefusal],
    stale_by: Micros,
) -> Verdict {
    let holders = Holders::of(seats);
    let (starts, changes) = (holders.starts(), holders.changes());
    // Which seats may be held changes only at `changes`, so whether every
    // row lacks n is worked out once per span between them (a crowd of
    // refusals shares a few).
    // Before the request, which holds count depends on the request's
    // start too (one that expired before it does not), so the span the
    // start falls in is part of the key there.
    let mut known: HashMap<(usize, usize, usize), bool> = HashMap::new();
    let mut no_row_has = |n: usize, at: Micros, asked: Micros| {
        let span_of = |instant: Micros| changes.partition_point(|change| *change <= instant);
        let asked_span = if at < asked { span_of(asked) } else { 0 };
        *known
            .entry((span_of(at), asked_span, n))
            .or_insert_with(|| {
                rows.iter().all(|row| {
                    let free = row.iter().map(|seat| !holders.may_be_held(seat, at, asked));
                    longest_free_run(free) < n
                })
            })
    };
    let mut violations = Vec::new();
    for refusal in refusals {
        let Window { start, end } = refusal.window;
        let from = start.saturating_sub(stale_by);
        // A seat may only become held at a request's start: the first
        // instant that may explain it and every start after it are the
        // instants to try, the latest first (where seats are only taken,
        // it has the most held, so a crowd's refusal is explained at once).
        let within = &starts
            [starts.partition_point(|at| *at <= from)..starts.partition_point(|at| *at <= end)];
        let mut instants = within.iter().rev().copied().chain([from]);
        if !instants.any(|at| no_row_has(refusal.quantity, at, start)) {
            violations.push(format!(
                "{section}: {} adjacent seats refused in [{start}, {end}] while a row had them free",
                refusal.quantity
            ));
        }
    }
    Verdict {
        operations: refusals.len(),
        violations,
    }
}

/// Each seat's holds as its answers show them.
struct Holders<'a> {
    holds: HashMap<&'a str, (Vec<Hold<'a>>, &'a [SeatOp])>,
}

impl<'a> Holders<'a> {
    fn of(seats: &'a HashMap<String, Vec<SeatOp>>) -> Self {
        let holds = seats
            .iter()
            .map(|(seat, ops)| (seat.as_str(), (holds_of(ops), ops.as_slice())))
            .collect();
        Holders { holds }
    }

    /// Whether a view of `seat` taken at `at` may have shown it held to a
    /// request that began at `asked`.
    fn may_be_held(&self, seat: &str, at: Micros, asked: Micros) -> bool {
        self.holds
            .get(seat)
            .is_some_and(|(holds, ops)| held_at(holds, ops, at, asked))
    }

    /// Every instant a seat may have become held at (a request's start),
    /// in order.
    fn starts(&self) -> Vec<Micros> {
        let ops = self.holds.values().flat_map(|(_, ops)| ops.iter());
        sorted(ops.map(|op| op.window().start).collect())
    }

    /// Every instant at which the seats that may be held change, in order:
    /// a start, the latest a hold (or a claim whose answer was lost) can
    /// have ended, or a hold's expiry.
    fn changes(&self) -> Vec<Micros> {
        let ends = self.holds.values().flat_map(|(holds, ops)| {
            let lost = ops.iter().filter_map(|op| match op {
                SeatOp::Unknown { expires_by, .. } => Some(*expires_by),
                _ => None,
            });
            let ends = holds.iter().flat_map(|h| [h.latest_end(), h.until]);
            ends.chain(lost)
        });
        sorted(ends.chain(self.starts()).collect())
    }
}

fn sorted(mut instants: Vec<Micros>) -> Vec<Micros> {
    instants.sort_unstable();
    instants.dedup();
    instants
}

/// The most adjacent `true`s.
fn longest_free_run(free: impl Iterator<Item = bool>) -> usize {
    let (mut run, mut longest) = (0, 0);
    for is_free in free {
        run = if is_free { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    longest
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Micros = 1_000_000;
    /// How old the summaries a refusal read may be, in these tests.
    const STALE: Micros = S;

    /// One row of four seats, `A-1-1` to `A-1-4`.
    fn row() -> Vec<Vec<String>> {
        vec![(1..=4).map(|n| format!("A-1-{n}")).collect()]
    }

    fn held(seats: &[u32], start: Micros, end: Micros, expires: Micros) -> Vec<(String, SeatOp)> {
        seats
            .iter()
            .map(|n| {
                let op = SeatOp::Held {
                    window: Window::new(start, end),
                    order: "a".into(),
                    expires,
                };
                (format!("A-1-{n}"), op)
            })
            .collect()
    }

    /// `held`'s seats, and a release of each by its order at `at`.
    fn released_after(held: Vec<(String, SeatOp)>, at: Micros) -> Vec<(String, SeatOp)> {
        let releases: Vec<(String, SeatOp)> = held
            .iter()
            .map(|(seat, _)| {
                let op = SeatOp::Released {
                    window: Window::new(at, at + 10),
                    order: "a".into(),
                };
                (seat.clone(), op)
            })
            .collect();
        held.into_iter().chain(releases).collect()
    }

    fn judged(ops: Vec<(String, SeatOp)>, start: Micros, end: Micros, quantity: usize) -> bool {
        let mut seats: HashMap<String, Vec<SeatOp>> = HashMap::new();
        for (seat, op) in ops {
            seats.entry(seat).or_default().push(op);
        }
        let refusal = BlockRefusal {
            window: Window::new(start, end),
            quantity,
        };
        check_block_refusals("A", &row(), &seats, &[refusal], STALE)
            .violations
            .is_empty()
    }

    #[test]
    fn a_refusal_needs_every_row_without_a_free_run_at_some_instant() {
        // Name, the seats' answers, the refusal's start, its quantity, and
        // whether it is explained.
        type Case = (&'static str, Vec<(String, SeatOp)>, Micros, usize, bool);
        let cases: Vec<Case> = vec![
            (
                "the middle held: no pair of three",
                held(&[2], 0, 10, 9 * S),
                S,
                3,
                true,
            ),
            (
                "the middle held: a pair is free",
                held(&[2], 0, 10, 9 * S),
                S,
                2,
                false,
            ),
            ("nothing held", Vec::new(), S, 2, false),
            (
                "the hold in flight within the refusal",
                held(&[2, 3], S - 5, S + 5, 9 * S),
                S,
                2,
                true,
            ),
            (
                "the hold sent after it answered",
                held(&[2, 3], 2 * S, 2 * S + 5, 9 * S),
                S,
                2,
                false,
            ),
            (
                "the hold expired long before it",
                held(&[2, 3], 0, 10, S / 2),
                2 * S,
                2,
                false,
            ),
            (
                "the hold expired within the summaries' age (a view never misses an expiry)",
                held(&[2, 3], 0, 10, S / 2),
                S,
                2,
                false,
            ),
            (
                "the hold released within the summaries' age",
                released_after(held(&[2, 3], 0, 10, 9 * S), S / 2),
                S,
                2,
                true,
            ),
            (
                "the hold released before the summaries' age",
                released_after(held(&[2, 3], 0, 10, 9 * S), S / 2),
                2 * S,
                2,
                false,
            ),
        ];
        for (name, ops, at, quantity, ok) in cases {
            assert_eq!(judged(ops, at, at + 10, quantity), ok, "{name}");
        }
    }

    #[test]
    fn refusals_at_one_instant_are_each_judged_for_their_own_quantity() {
        let mut seats: HashMap<String, Vec<SeatOp>> = HashMap::new();
        for (seat, op) in held(&[2], 0, 10, 9 * S) {
            seats.entry(seat).or_default().push(op);
        }
        let refused = |quantity| BlockRefusal {
            window: Window::new(S, S + 10),
            quantity,
        };
        let verdict = check_block_refusals("A", &row(), &seats, &[refused(3), refused(2)], STALE);
        assert_eq!(verdict.operations, 2);
        assert_eq!(verdict.violations.len(), 1, "{:?}", verdict.violations);
        assert!(verdict.violations[0].contains("2 adjacent seats"));
    }

    #[test]
    fn a_claim_answered_503_may_explain_a_refusal() {
        let lost = SeatOp::Unknown {
            window: Window::new(0, 10),
            order: "b".into(),
            expires_by: 9 * S,
        };
        assert!(judged(vec![("A-1-2".into(), lost)], S, S + 10, 3));
    }
}
