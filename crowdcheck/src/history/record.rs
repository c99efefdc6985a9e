//! Recording a history: the clock the instants are read on, and how the
//! checker reads an answer.

use serde_json::Value;
use std::time::{SystemTime, UNIX_EPOCH};

use super::{CounterOp, Micros, SeatOp, Take, Taken, Window, GUARD_US};

/// Now on the wall clock, the one `expiresAt` is told on.
pub fn wall_us() -> Micros {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .ok()
        .and_then(|since| Micros::try_from(since.as_micros()).ok())
        .unwrap_or(0)
}

/// `seconds` after `at`: how long an order may still hold what a request
/// answered at `at` with a 503 may have taken.
pub fn seconds_after(at: Micros, seconds: u32) -> Micros {
    at.saturating_add(Micros::from(seconds) * 1_000_000)
}

/// An RFC 3339 instant in microseconds.
pub fn micros_of(rfc3339: &str) -> Option<Micros> {
    chrono::DateTime::parse_from_rfc3339(rfc3339)
        .ok()
        .map(|t| t.timestamp_micros())
}

/// get-seat's answer to `order`'s claim, in flight during `window`, as the
/// checker reads it: `200` held until its `expiresAt`; `409 seat-held` or
/// `seat-sold` refused (`from_memory` where the instance may answer from
/// its crowd gate's memory); `409 order-not-holdable` judged against the
/// order's expiry, which its client knows lies within `expiry` (from its
/// create reply's `expiresAt`, or a bound on it); `503` unknown, holding
/// until `expiry.end` at the latest. `None` for any other answer: it says
/// nothing the seat's history can judge.
pub fn seat_claim(
    window: Window,
    order: &str,
    (status, body): (u16, &Value),
    from_memory: bool,
    expiry: Window,
) -> Option<SeatOp> {
    let refused = |taken| SeatOp::Refused {
        window,
        from_memory,
        taken,
    };
    match (status, body["error"].as_str()) {
        (200, _) => Some(SeatOp::Held {
            window,
            order: order.to_owned(),
            expires: body["expiresAt"].as_str().and_then(micros_of)?,
        }),
        (409, Some("seat-held")) => Some(refused(Taken::Held)),
        (409, Some("seat-sold")) => Some(refused(Taken::Sold)),
        (409, Some("order-not-holdable")) => Some(SeatOp::OrderRefused {
            window,
            order: order.to_owned(),
            holdable_until: expiry.start.saturating_sub(GUARD_US),
        }),
        (503, _) => Some(SeatOp::Unknown {
            window,
            order: order.to_owned(),
            expires_by: expiry.end,
        }),
        _ => None,
    }
}

/// hold-ga's answer to `order` asking for `quantity` places in all, in
/// flight during `window`, as the checker reads it: `200` took them until
/// its `expiresAt`; `409 sold-out` refused them for want of room, with the
/// `available` it told; a `5xx` unknown, holding until `expires_by` at the
/// latest. `None` for any other answer (a refusal about the order says
/// nothing of the section), or a `sold-out` without `available`.
pub fn places_hold(
    window: Window,
    order: &str,
    quantity: u64,
    (status, body): (u16, &Value),
    expires_by: Micros,
) -> Option<CounterOp> {
    let take = |expires| Take {
        window,
        order: order.to_owned(),
        quantity,
        expires,
    };
    match (status, body["error"].as_str()) {
        (200, _) => Some(CounterOp::Took(take(
            body["expiresAt"].as_str().and_then(micros_of)?,
        ))),
        (409, Some("sold-out")) => Some(CounterOp::Refused {
            window,
            order: order.to_owned(),
            quantity,
            available: body["available"].as_u64()?,
        }),
        (500..=599, _) => Some(CounterOp::Unknown(take(expires_by))),
        _ => None,
    }
}
