//! A seat as a register claimed under expiry: its holds may follow one
//! another but never overlap, and a refusal needs a holder.

use super::{Micros, Verdict, Window, MEMORY_SLACK_US};

/// One request's effect on one seat, as its answer said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SeatOp {
    /// Answered held by `order` until `expires`.
    Held {
        window: Window,
        order: String,
        expires: Micros,
    },
    /// Answered sold to `order` (its payment confirmed): held for good.
    Sold { window: Window, order: String },
    /// `order` let it go (drop-seat, cancel-order).
    Released { window: Window, order: String },
    /// Refused because another order held it; `from_memory` when the
    /// crowd gate answered from what it saw lately.
    Refused { window: Window, from_memory: bool },
    /// Answered 503 or never answered: the claim by `order` may have
    /// landed, holding until `expires_by` at the latest.
    Unknown {
        window: Window,
        order: String,
        expires_by: Micros,
    },
}

impl SeatOp {
    pub(super) fn window(&self) -> Window {
        match self {
            SeatOp::Held { window, .. }
            | SeatOp::Sold { window, .. }
            | SeatOp::Released { window, .. }
            | SeatOp::Refused { window, .. }
            | SeatOp::Unknown { window, .. } => *window,
        }
    }
}

/// One order's hold: from the first answer that it held, until its last
/// answered expiry (for good once sold), or a release of its order.
#[derive(Debug)]
pub(super) struct Hold<'a> {
    order: &'a str,
    window: Window,
    until: Micros,
    /// The latest end of a release that may have ended it.
    released_by: Option<Micros>,
}

impl Hold<'_> {
    /// The latest it can have ended.
    pub(super) fn latest_end(&self) -> Micros {
        self.released_by
            .map_or(self.until, |end| self.until.min(end))
    }
}

/// Judges one seat's history: `seat` names it in the violations.
pub fn check_seat(seat: &str, ops: &[SeatOp]) -> Verdict {
    let holds = holds_of(ops);
    let mut violations = overlaps(seat, &holds);
    for op in ops {
        if let SeatOp::Refused {
            window,
            from_memory,
        } = op
        {
            let since = window.start - if *from_memory { MEMORY_SLACK_US } else { 0 };
            if !held_between(&holds, ops, since, window.end) {
                violations.push(format!(
                    "{seat}: refused in [{}, {}] with no holder then{}",
                    window.start,
                    window.end,
                    if *from_memory { " or 5 s before" } else { "" }
                ));
            }
        }
    }
    Verdict {
        operations: ops.len(),
        violations,
    }
}

/// The holds the answers show, in the order their requests began.
pub(super) fn holds_of(ops: &[SeatOp]) -> Vec<Hold<'_>> {
    let mut sorted: Vec<&SeatOp> = ops.iter().collect();
    sorted.sort_by_key(|op| op.window().start);
    let mut holds: Vec<Hold> = Vec::new();
    for op in &sorted {
        let (window, order, until) = match op {
            SeatOp::Held {
                window,
                order,
                expires,
            } => (*window, order.as_str(), *expires),
            SeatOp::Sold { window, order } => (*window, order.as_str(), Micros::MAX),
            _ => continue,
        };
        // The same order again, answered before its hold's expiry, or
        // promising nothing past it (a re-claim answers the hold's own
        // expiry, and may land up to the guard before it): the same hold,
        // its expiry moved (an extension, a sale). One that may have
        // landed after the expiry and promises more is a hold of its own
        // (another order may have held the seat in between).
        let same = holds.iter_mut().rev().find(|h| {
            h.order == order
                && (window.end < h.until || (window.start < h.until && until <= h.until))
        });
        match same {
            Some(hold) => hold.until = hold.until.max(until),
            None => holds.push(Hold {
                order,
                window,
                until,
                released_by: None,
            }),
        }
    }
    // A release may have ended any hold of its order that may have begun
    // before the release landed.
    for op in sorted {
        if let SeatOp::Released { window, order } = op {
            for hold in holds.iter_mut() {
                if hold.order == order && hold.window.start < window.end {
                    hold.released_by =
                        Some(hold.released_by.map_or(window.end, |e| e.max(window.end)));
                }
            }
        }
    }
    holds
}

/// Holds that cannot all have been live one after another. Disjoint holds
/// end in the order they begin, so they are tried in the order of their
/// ends, each beginning as early as its request and the hold before
/// allow: if one cannot begin before its request ended, no choice of
/// instants could have kept it apart from the one before. A hold a
/// release may have ended is left out: its end may fall anywhere in the
/// release, and then no greedy order decides (a rejection must be sure).
fn overlaps(seat: &str, holds: &[Hold]) -> Vec<String> {
    let mut order: Vec<&Hold> = holds.iter().filter(|h| h.released_by.is_none()).collect();
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

/// Whether some hold (or a claim whose answer was lost) may have been live
/// at an instant in `[from, to]`.
fn held_between(holds: &[Hold], ops: &[SeatOp], from: Micros, to: Micros) -> bool {
    let answered = holds
        .iter()
        .any(|h| h.window.start <= to && h.latest_end() > from);
    let lost = ops.iter().any(|op| match op {
        SeatOp::Unknown {
            window, expires_by, ..
        } => window.start <= to && *expires_by > from,
        _ => false,
    });
    answered || lost
}

/// Whether some hold (or a claim whose answer was lost) may have been live
/// at `at`.
pub(super) fn held_at(holds: &[Hold], ops: &[SeatOp], at: Micros) -> bool {
    held_between(holds, ops, at, at)
}
