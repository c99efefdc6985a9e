//! The holds a seat's answers show: one order's hold from the first answer
//! that it held until its last answered expiry (for good once sold), or a
//! release of its order.

use super::seat_op::SeatOp;
use super::{Micros, Window};

/// One order's hold on one seat.
#[derive(Debug)]
pub(super) struct Hold<'a> {
    pub(super) order: &'a str,
    /// The request that began it.
    pub(super) window: Window,
    /// Its last answered expiry; `Micros::MAX` once sold.
    pub(super) until: Micros,
    /// The releases of its order that may have ended it: the earliest
    /// start and the latest end among them.
    pub(super) released: Option<Window>,
    /// The first sale of it: it may have been sold from this window's
    /// start and surely was by its end.
    pub(super) sold: Option<Window>,
}

impl Hold<'_> {
    /// The latest it can have ended.
    pub(super) fn latest_end(&self) -> Micros {
        self.released.map_or(self.until, |r| self.until.min(r.end))
    }

    /// The earliest it can have ended: at its expiry, or as soon as a
    /// release of its order can have landed (never before it began).
    pub(super) fn earliest_end(&self) -> Micros {
        self.released.map_or(self.until, |r| {
            self.until.min(r.start.max(self.window.start))
        })
    }

    /// Whether it may have been live at `at`.
    pub(super) fn may_be_live_at(&self, at: Micros) -> bool {
        self.window.start <= at && self.latest_end() > at
    }

    /// Whether a view of the seat up to `slack` old may have shown it
    /// held (not sold) to a request in flight during `window`. A view may
    /// miss a release or a sale of the last `slack`, never an expiry: the
    /// hold must not have expired when the request began.
    pub(super) fn may_show_held(&self, window: Window, slack: Micros) -> bool {
        let seen_from = window.start.saturating_sub(slack);
        self.window.start <= window.end
            && self.until > window.start
            && self.latest_end() > seen_from
            && self.sold.is_none_or(|sale| sale.end > seen_from)
    }

    /// Whether such a view may have shown it sold: the sale may have
    /// landed before the request ended, and no refund surely came before
    /// the view.
    pub(super) fn may_show_sold(&self, window: Window, slack: Micros) -> bool {
        let seen_from = window.start.saturating_sub(slack);
        self.sold.is_some_and(|sale| sale.start <= window.end) && self.latest_end() > seen_from
    }
}

/// The holds the answers show, in the order their requests began.
pub(super) fn holds_of(ops: &[SeatOp]) -> Vec<Hold<'_>> {
    let mut sorted: Vec<&SeatOp> = ops.iter().collect();
    sorted.sort_by_key(|op| op.window().start);
    let mut holds: Vec<Hold> = Vec::new();
    for op in &sorted {
        let (window, order, until, sale) = match op {
            SeatOp::Held {
                window,
                order,
                expires,
            } => (*window, order.as_str(), *expires, None),
            SeatOp::Sold { window, order } => (*window, order.as_str(), Micros::MAX, Some(*window)),
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
            Some(hold) => {
                hold.until = hold.until.max(until);
                hold.sold = hold.sold.or(sale);
            }
            None => holds.push(Hold {
                order,
                window,
                until,
                released: None,
                sold: sale,
            }),
        }
    }
    // A release may have ended any hold of its order that may have begun
    // before the release landed.
    for op in sorted {
        if let SeatOp::Released { window, order } = op {
            for hold in holds.iter_mut() {
                if hold.order == order && hold.window.start < window.end {
                    hold.released = Some(hold.released.map_or(*window, |r| {
                        Window::new(r.start.min(window.start), r.end.max(window.end))
                    }));
                }
            }
        }
    }
    holds
}
