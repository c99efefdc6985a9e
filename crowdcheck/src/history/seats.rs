//! A seat as a register claimed under expiry: its holds may follow one
//! another but never overlap, and a refusal needs a holder of the kind it
//! names (held, or sold), or an order that may no longer be holdable.

use super::holds::{holds_of, Hold};
use super::seat_op::{SeatOp, Taken};
use super::{Micros, Verdict, Window, MEMORY_SLACK_US};

/// Judges one seat's history: `seat` names it in the violations.
pub fn check_seat(seat: &str, ops: &[SeatOp]) -> Verdict {
    let holds = holds_of(ops);
    let mut violations = overlaps(seat, &holds);
    violations.extend(overlaps_with_released(seat, &holds));
    for op in ops {
        let unexplained = match op {
            SeatOp::Refused {
                window,
                from_memory,
                taken,
            } => refusal_unexplained(&holds, ops, *window, *from_memory, *taken),
            _ => None,
        };
        violations.extend(unexplained.map(|why| {
            format!(
                "{seat}: refused in [{}, {}] {why}",
                op.window().start,
                op.window().end
            )
        }));
    }
    Verdict {
        operations: ops.len(),
        violations,
    }
}

/// Why a `seat-held` or `seat-sold` refusal has no holder of its kind, if
/// it has none. A refusal from memory may rest on a view up to the
/// memory's age old, which may miss a release or a sale, never an expiry.
fn refusal_unexplained(
    holds: &[Hold],
    ops: &[SeatOp],
    window: Window,
    from_memory: bool,
    taken: Taken,
) -> Option<String> {
    let slack = if from_memory { MEMORY_SLACK_US } else { 0 };
    let explained = match taken {
        Taken::Held => {
            holds.iter().any(|h| h.may_show_held(window, slack))
                || lost(ops, window).any(|expires_by| expires_by > window.start)
        }
        Taken::Sold => {
            holds.iter().any(|h| h.may_show_sold(window, slack))
                || lost(ops, window).any(|expires_by| expires_by == Micros::MAX)
        }
    };
    let said = match taken {
        Taken::Held => "seat-held with no live holder",
        Taken::Sold => "seat-sold with no sale",
    };
    let memory = match from_memory {
        true => format!(
            ", then or released within {} s before",
            MEMORY_SLACK_US / 1_000_000
        ),
        false => String::new(),
    };
    (!explained).then(|| format!("{said}{memory}"))
}

/// The expiries of claims whose answers were lost and that may have
/// landed before `window` ended.
fn lost(ops: &[SeatOp], window: Window) -> impl Iterator<Item = Micros> + '_ {
    ops.iter().filter_map(move |op| match op {
        SeatOp::Unknown {
            window: sent,
            expires_by,
            ..
        } if sent.start <= window.end => Some(*expires_by),
        _ => None,
    })
}

/// Judges every `order-not-holdable` among `ops` against the orders'
/// sales and releases among them: pass every seat's history of a run, as
/// an order may have been sold or given up on another seat. Each is
/// explained if its order had reached its guard margin by the request's
/// end, or a sale or release of it can have landed by then.
pub fn check_order_refusals<'a>(ops: impl IntoIterator<Item = &'a SeatOp>) -> Verdict {
    let ops: Vec<&SeatOp> = ops.into_iter().collect();
    let mut verdict = Verdict::default();
    for op in &ops {
        let SeatOp::OrderRefused {
            window,
            order,
            holdable_until,
        } = op
        else {
            continue;
        };
        verdict.operations += 1;
        if let Some(why) = order_refusal_unexplained(&ops, *window, order, *holdable_until) {
            verdict.violations.push(format!(
                "refused in [{}, {}] {why}",
                window.start, window.end
            ));
        }
    }
    verdict
}

/// Why `order-not-holdable` to `order` is unexplained, if it is: the
/// order had not reached its guard margin by the request's end, and no
/// sale or release of it can have landed by then.
fn order_refusal_unexplained(
    ops: &[&SeatOp],
    window: Window,
    order: &str,
    holdable_until: Micros,
) -> Option<String> {
    let ended_by_another = ops.iter().any(|op| match op {
        SeatOp::Sold {
            window: w,
            order: o,
        }
        | SeatOp::Released {
            window: w,
            order: o,
        } => o == order && w.start <= window.end,
        SeatOp::Unknown {
            window: w,
            order: o,
            expires_by,
        } => o == order && *expires_by == Micros::MAX && w.start <= window.end,
        _ => false,
    });
    (window.end < holdable_until && !ended_by_another).then(|| {
        format!("order-not-holdable to {order}, holdable until {holdable_until} and neither sold nor given up")
    })
}

/// Holds that cannot all have been live one after another. Disjoint holds
/// end in the order they begin, so they are tried in the order of their
/// ends, each beginning as early as its request and the hold before
/// allow: if one cannot begin before its request ended, no choice of
/// instants could have kept it apart from the one before. A hold a
/// release may have ended is left to [`overlaps_with_released`]: its end
/// may fall anywhere in the release, and then no greedy order decides (a
/// rejection must be sure).
fn overlaps(seat: &str, holds: &[Hold]) -> Vec<String> {
    let mut order: Vec<&Hold> = holds.iter().filter(|h| h.released.is_none()).collect();
    order.sort_by_key(|h| h.until);
    let mut free_from = Micros::MIN;
    let mut before: Option<&Hold> = None;
    let mut violations = Vec::new();
    for hold in order {
        let begins = hold.window.start.max(free_from);
        // It must have begun within its request, and before its expiry.
        if begins > hold.window.end || begins >= hold.until {
            violations.push(format!(
                "{seat}: {} was answered held in [{}, {}] while {} held it until {} at the earliest",
                hold.order,
                hold.window.start,
                hold.window.end,
                before.map_or("another order", |b| b.order),
                free_from
            ));
            continue;
        }
        free_from = hold.until;
        before = Some(hold);
    }
    violations
}

/// Pairs of holds of two orders, one of them released, that cannot have
/// followed one another: neither can have ended (at its earliest) before
/// the other's request ended.
fn overlaps_with_released(seat: &str, holds: &[Hold]) -> Vec<String> {
    let mut violations = Vec::new();
    for (i, a) in holds.iter().enumerate() {
        for b in &holds[i + 1..] {
            let one_released = a.released.is_some() || b.released.is_some();
            if one_released
                && a.order != b.order
                && a.earliest_end() > b.window.end
                && b.earliest_end() > a.window.end
            {
                violations.push(format!(
                    "{seat}: {} was answered held in [{}, {}] while {} held it (released in the end)",
                    b.order, b.window.start, b.window.end, a.order
                ));
            }
        }
    }
    violations
}

/// Whether some hold (or a claim whose answer was lost) may have been
/// live at `at`, as a view taken then may show it to a request that
/// began at `asked` (never an expiry before `asked`).
pub(super) fn held_at(holds: &[Hold], ops: &[SeatOp], at: Micros, asked: Micros) -> bool {
    let answered = holds
        .iter()
        .any(|h| h.may_be_live_at(at) && h.until > asked);
    let lost = ops.iter().any(|op| match op {
        SeatOp::Unknown {
            window, expires_by, ..
        } => window.start <= at && *expires_by > at.max(asked),
        _ => false,
    });
    answered || lost
}
