//! One request's effect on one seat, as its answer said: what the seat
//! checker (`seats`) and the holds it reads (`holds`) are made of.

use super::{Micros, Window};

/// What a refusal said of the seat: `409 seat-held` or `409 seat-sold`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Taken {
    Held,
    Sold,
}

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
    /// `order` let it go (drop-seat, cancel-order, a refund).
    Released { window: Window, order: String },
    /// Refused because another order held it, or bought it (`taken`);
    /// `from_memory` when the crowd gate may have answered from what it
    /// saw lately.
    Refused {
        window: Window,
        from_memory: bool,
        taken: Taken,
    },
    /// `409 order-not-holdable` to `order`, whose holds stop being
    /// holdable at `holdable_until` at the earliest (its first known
    /// expiry less the guard margin): it needs the order expired, sold or
    /// given up by the request's end.
    OrderRefused {
        window: Window,
        order: String,
        holdable_until: Micros,
    },
    /// Answered 503 or never answered: the claim by `order` may have
    /// landed, holding until `expires_by` at the latest; `Micros::MAX`
    /// for a payment whose answer was lost (it may have sold the seat).
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
            | SeatOp::OrderRefused { window, .. }
            | SeatOp::Unknown { window, .. } => *window,
        }
    }
}
