//! A counter under a cap: a GA section's places, or a buyer's units across
//! its orders. Whatever instants the requests took effect at, the units
//! held never exceed the cap, and a refusal for want of room had the other
//! orders holding too many at some instant within its request.

use super::{Micros, Verdict, Window};
use std::collections::HashMap;

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
    /// `order` was refused `quantity` units in all for want of room
    /// (hold-ga's `sold-out`), told it could set `available` at most: the
    /// other orders held the cap less `available`, more than the cap less
    /// `quantity`, when its read landed.
    Refused {
        window: Window,
        order: String,
        quantity: u64,
        available: u64,
    },
    /// Answered 503 or never answered: the take may have landed, holding
    /// until its `expires` at the latest, or not at all.
    Unknown(Take),
}

impl CounterOp {
    fn window(&self) -> &Window {
        match self {
            CounterOp::Took(take) | CounterOp::Unknown(take) => &take.window,
            CounterOp::Released { window, .. } | CounterOp::Refused { window, .. } => window,
        }
    }

    fn order(&self) -> &str {
        match self {
            CounterOp::Took(take) | CounterOp::Unknown(take) => &take.order,
            CounterOp::Released { order, .. } | CounterOp::Refused { order, .. } => order,
        }
    }

    /// Whether it may have left the order holding fewer than `held` units:
    /// a refusal leaves them as they were, and an unknown answer may have
    /// landed only if it asked for fewer (the cap check needs the least
    /// the order may hold).
    fn may_lower(&self, held: u64) -> bool {
        match self {
            CounterOp::Took(_) | CounterOp::Released { .. } => true,
            CounterOp::Unknown(take) => take.quantity < held,
            CounterOp::Refused { .. } => false,
        }
    }

    /// Whether it surely replaced or ended the order's earlier take, if it
    /// came after: an answered take or release (an unknown may never have
    /// landed).
    fn surely_changes_the_take(&self) -> bool {
        matches!(self, CounterOp::Took(_) | CounterOp::Released { .. })
    }
}

/// Judges one counter's history against `cap`: `name` names it in the
/// violations. Each take counts from the end of its request (the latest
/// it can have landed) until its expiry or the start of a request of its
/// order that may have lowered it (the earliest it can have ended): if
/// even that is over the cap at some instant, no choice of instants keeps
/// it under. Each refusal is then judged by [`unexplained_refusals`].
pub fn check_counter(name: &str, cap: u64, ops: &[CounterOp]) -> Verdict {
    let mut changes: Vec<(Micros, i128)> = Vec::new();
    for span in surely_count(ops) {
        changes.push((span.from, i128::from(span.quantity)));
        changes.push((span.to, -i128::from(span.quantity)));
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
    violations.extend(unexplained_refusals(name, cap, ops));
    Verdict {
        operations: ops.len(),
        violations,
    }
}

/// When an answered take surely counted: from the end of its request (the
/// latest it can have landed) until its expiry or the start of a request
/// of its order that may have lowered it (the earliest it can have ended).
fn surely_count(ops: &[CounterOp]) -> Vec<Span<'_>> {
    let mut spans = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        let CounterOp::Took(take) = op else { continue };
        let to = ops
            .iter()
            .enumerate()
            .filter(|(k, other)| *k != i && other.may_lower(take.quantity))
            .filter(|(_, other)| other.order() == take.order)
            .map(|(_, other)| other.window())
            .filter(|window| window.end > take.window.start)
            .map(|window| window.start)
            .fold(take.expires, Micros::min);
        let from = take.window.end;
        if to > from {
            spans.push(Span {
                order: &take.order,
                quantity: take.quantity,
                from,
                to,
            });
        }
    }
    spans
}

/// When an order's take counted, surely or maybe (see [`surely_count`]
/// and [`may_count`]).
#[derive(Debug)]
struct Span<'a> {
    order: &'a str,
    quantity: u64,
    from: Micros,
    to: Micros,
}

/// When a take (answered or unknown) may have counted: from the start of
/// its request (the earliest it can have landed) until its expiry or the
/// end of a request of its order that surely replaced it and surely came
/// after (the latest it can have ended).
fn may_count(ops: &[CounterOp]) -> Vec<Span<'_>> {
    let mut by_order: HashMap<&str, Vec<&CounterOp>> = HashMap::new();
    for op in ops {
        by_order.entry(op.order()).or_default().push(op);
    }
    let mut spans = Vec::new();
    for op in ops {
        let (CounterOp::Took(take) | CounterOp::Unknown(take)) = op else {
            continue;
        };
        let to = by_order
            .get(take.order.as_str())
            .into_iter()
            .flatten()
            .filter(|other| other.surely_changes_the_take())
            .map(|other| other.window())
            .filter(|window| window.start > take.window.end)
            .map(|window| window.end)
            .fold(take.expires, Micros::min);
        spans.push(Span {
            order: &take.order,
            quantity: take.quantity,
            from: take.window.start,
            to,
        });
    }
    spans
}

/// Refusals no instant explains: even if every other order's take counted
/// for as long as it may have, at no instant within the request did they
/// hold more than the cap less the units refused; or the `available` the
/// refusal told is not what the others can have held as it read them.
/// (hold-ga refuses only on consistent reads, or on a section the stream
/// saw sold out for good, and judges the holds as of after its read.)
fn unexplained_refusals(name: &str, cap: u64, ops: &[CounterOp]) -> Vec<String> {
    let refusals: Vec<(Window, &str, u64, u64)> = ops
        .iter()
        .filter_map(|op| match op {
            CounterOp::Refused {
                window,
                order,
                quantity,
                available,
            } => Some((*window, order.as_str(), *quantity, *available)),
            _ => None,
        })
        .collect();
    if refusals.is_empty() {
        return Vec::new();
    }
    let (may, sure) = (may_count(ops), surely_count(ops));
    let mut violations = Vec::new();
    for (window, order, quantity, available) in refusals {
        let others = |spans: &[Span], at: Micros| -> u64 {
            spans
                .iter()
                .filter(|s| s.order != order && s.from <= at && at < s.to)
                .map(|s| s.quantity)
                .sum()
        };
        let explained = instants(&may, window).any(|at| others(&may, at) + quantity > cap);
        let told = cap.checked_sub(available);
        let (least, most) = others_as_read(ops, &may, &sure, window, order);
        let available_explained =
            available < quantity && told.is_some_and(|held| least <= held && held <= most);
        let Window { start, end } = window;
        if !explained {
            violations.push(format!(
                "{name}: {order} refused {quantity} units in [{start}, {end}] with room for them then"
            ));
        } else if !available_explained {
            violations.push(format!(
                "{name}: {order} refused {quantity} units in [{start}, {end}] told {available} available, \
                 while the others held from {least} to {most} of {cap}"
            ));
        }
    }
    violations
}

/// `window`'s start and every instant within it where a span begins or
/// ends: the instants at which what the spans count can differ.
fn instants<'a>(spans: &'a [Span], window: Window) -> impl Iterator<Item = Micros> + 'a {
    let within = move |at: &Micros| *at > window.start && *at <= window.end;
    std::iter::once(window.start).chain(spans.iter().flat_map(|s| [s.from, s.to]).filter(within))
}

/// The least and the most units the orders other than `order` can have
/// held as a read during `window` saw them. The read takes several
/// buckets at instants of its own, so each order is bounded on its own:
/// from the least it surely held at an instant of the window to the most
/// it may have. A request moves all of its buckets one way, so with one
/// request of an order in flight during the window that holds; an order
/// with more may have been seen half before one and half after another,
/// so it is bounded by nothing and everything it may have taken.
fn others_as_read(
    ops: &[CounterOp],
    may: &[Span],
    sure: &[Span],
    window: Window,
    order: &str,
) -> (u64, u64) {
    let mut orders: Vec<&str> = may
        .iter()
        .map(|s| s.order)
        .filter(|o| *o != order)
        .collect();
    orders.sort_unstable();
    orders.dedup();
    let (mut least, mut most) = (0, 0);
    for other in orders {
        let of = |spans: &[Span], at: Micros| -> u64 {
            spans
                .iter()
                .filter(|s| s.order == other && s.from <= at && at < s.to)
                .map(|s| s.quantity)
                .sum()
        };
        let in_flight = ops
            .iter()
            .filter(|op| op.order() == other && !matches!(op, CounterOp::Refused { .. }))
            .filter(|op| op.window().start <= window.end && op.window().end >= window.start)
            .count();
        if in_flight > 1 {
            let overlapping = may
                .iter()
                .filter(|s| s.order == other && s.from <= window.end && s.to > window.start);
            most += overlapping.map(|s| s.quantity).sum::<u64>();
            continue;
        }
        least += instants(sure, window)
            .chain(instants(may, window))
            .map(|at| of(sure, at))
            .min()
            .unwrap_or(0);
        most += instants(sure, window)
            .chain(instants(may, window))
            .map(|at| of(may, at))
            .max()
            .unwrap_or(0);
    }
    (least, most)
}
