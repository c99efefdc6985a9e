//! A counter under a cap: a GA section's places, or a buyer's units across
//! its orders. Whatever instants the requests took effect at, the units
//! held never exceed the cap.

use super::{Micros, Verdict, Window};

/// Units one answer said an order took.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Take {
    pub window: Window,
    pub order: String,
    pub quantity: u64,
    /// When they stop counting: the hold's expiry, `Micros::MAX` once sold.
    pub expires: Micros,
}

/// One request's effect on a counter, as its answer said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CounterOp {
    /// What the order holds from now: it replaces the order's earlier
    /// take (a claim again, a new quantity, a sale).
    Took(Take),
    /// `order` gave back every unit it had taken before (drop, cancel).
    Released { window: Window, order: String },
}

/// Judges one counter's history against `cap`: `name` names it in the
/// violations. Each take counts from the end of its request (the latest
/// it can have landed) until its expiry or the start of its release (the
/// earliest it can have ended): if even that is over the cap at some
/// instant, no choice of instants keeps it under.
pub fn check_counter(name: &str, cap: u64, ops: &[CounterOp]) -> Verdict {
    let mut changes: Vec<(Micros, i128)> = Vec::new();
    for op in ops {
        let CounterOp::Took(take) = op else { continue };
        // The earliest its units can have stopped counting: its expiry,
        // its order's release, or the order's next answer, which replaces
        // them.
        let to = ops
            .iter()
            .filter_map(|op| match op {
                CounterOp::Released { window, order }
                    if *order == take.order && window.end >= take.window.start =>
                {
                    Some(window.start)
                }
                CounterOp::Took(next)
                    if next.order == take.order && next.window.start > take.window.start =>
                {
                    Some(next.window.start)
                }
                _ => None,
            })
            .fold(take.expires, Micros::min);
        let from = take.window.end;
        if to > from {
            changes.push((from, i128::from(take.quantity)));
            changes.push((to, -i128::from(take.quantity)));
        }
    }
    // At one instant, units given back count before units taken.
    changes.sort();
    let mut held: i128 = 0;
    let mut violations = Vec::new();
    for (at, change) in changes {
        held += change;
        if held > i128::from(cap) {
            violations.push(format!(
                "{name}: {held} units held at {at}, over the cap of {cap}"
            ));
            break;
        }
    }
    Verdict {
        operations: ops.len(),
        violations,
    }
}
