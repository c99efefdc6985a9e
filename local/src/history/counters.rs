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
    for (i, op) in ops.iter().enumerate() {
        let CounterOp::Took(take) = op else { continue };
        // The earliest its units can have stopped counting: its expiry, or
        // any other request of its order that may have landed after it (a
        // release, or an answer that replaces them), at that request's
        // start.
        let to = ops
            .iter()
            .enumerate()
            .filter(|(k, _)| *k != i)
            .map(|(_, op)| match op {
                CounterOp::Released { window, order } => (window, order),
                CounterOp::Took(other) => (&other.window, &other.order),
            })
            .filter(|(window, order)| **order == take.order && window.end > take.window.start)
            .map(|(window, _)| window.start)
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
