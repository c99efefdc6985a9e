//! The on-sale's history (issue 30, part 3): every buyer's answers, each
//! with the instants its request was in flight on the wall clock, then the
//! sold-out phase's seeded sales and its crowd's get-seat answers, judged
//! by the history checker: every seat as a register claimed under expiry,
//! the GA section as a counter under its capacity. The spread and the
//! one-seat stampedes over many instances judge their claims here too.

use crowdcheck::history::{
    check_counter, check_order_refusals, check_seat, places_hold, seat_claim, seconds_after,
    CounterOp, Micros, SeatOp, Take, Verdict, Window,
};
use serde_json::Value;
use std::collections::BTreeMap;

/// What one buyer's answers say, in the order it sent its requests.
#[derive(Debug, Default)]
pub(super) struct BuyerHistory {
    seats: Vec<(String, SeatOp)>,
    places: Vec<CounterOp>,
    /// Answers that say nothing the checker can read.
    unread: usize,
}

impl BuyerHistory {
    /// get-seat's answer to `order`'s claim on `seat`, by an order whose
    /// expiry lies within `expiry`. Its refusals may come from the crowd
    /// gate's memory; `order-not-holdable` is judged against the order's
    /// earliest expiry; a 503 may have held the seat until `expiry.end` at
    /// the latest. A refusal for the buyer's limit or the order's size
    /// says nothing about the seat: no operation.
    pub(super) fn claim(
        &mut self,
        seat: &str,
        window: Window,
        order: &str,
        answer: (u16, &Value),
        expiry: Window,
    ) {
        match seat_claim(window, order, answer, true, expiry) {
            Some(op) => self.seats.push((seat.to_owned(), op)),
            None if not_about_the_seat(answer) => {}
            None => self.unread += 1,
        }
    }

    /// [`Self::claim`] by an order created to expire at `expires` that
    /// lives `order_seconds` at most after its claim answered: a claim
    /// holds its seat until its order expires, so a 503 may hold it that
    /// long.
    pub(super) fn claim_for(
        &mut self,
        seat: &str,
        window: Window,
        order: &str,
        answer: (u16, &Value),
        (expires, order_seconds): (Micros, u32),
    ) {
        let expires_by = seconds_after(window.end, order_seconds).max(expires);
        self.claim(
            seat,
            window,
            order,
            answer,
            Window::new(expires, expires_by),
        );
    }

    /// hold-ga's answer to `order` asking for `quantity` places in all,
    /// by an order that lives `order_seconds` at most after its request
    /// answered: a grant holds them until its `expiresAt`, a `sold-out`
    /// refusal needs the others holding too many, and a 503 may hold them
    /// until the order expires. A refusal about the order changes nothing.
    pub(super) fn places(
        &mut self,
        window: Window,
        order: &str,
        quantity: u64,
        answer: (u16, &Value),
        order_seconds: u32,
    ) {
        let expires_by = seconds_after(window.end, order_seconds);
        match places_hold(window, order, quantity, answer, expires_by) {
            Some(op) => self.places.push(op),
            // A grant without its expiry, or a sold-out without its
            // `available`, says less than the contract does.
            None if answer.0 == 200 || answer.1["error"] == "sold-out" => self.unread += 1,
            None => {}
        }
    }

    /// confirm's answer for `order`'s `seats` and `places`: a 200 sold
    /// them for good; after a 503 they may be sold (held for good at the
    /// latest).
    pub(super) fn confirmed(
        &mut self,
        window: Window,
        order: &str,
        seats: &[String],
        places: u64,
        status: u16,
    ) {
        for seat in seats {
            let op = match status {
                200 => SeatOp::Sold {
                    window,
                    order: order.to_owned(),
                },
                503 => SeatOp::Unknown {
                    window,
                    order: order.to_owned(),
                    expires_by: Micros::MAX,
                },
                _ => {
                    self.unread += 1;
                    continue;
                }
            };
            self.seats.push((seat.clone(), op));
        }
        let sold = Take {
            window,
            order: order.to_owned(),
            quantity: places,
            expires: Micros::MAX,
        };
        match (status, places) {
            (_, 0) => {}
            (200, _) => self.places.push(CounterOp::Took(sold)),
            (503, _) => self.places.push(CounterOp::Unknown(sold)),
            _ => self.unread += 1,
        }
    }
}

/// Every buyer's history, by seat and for the GA section.
#[derive(Debug, Default)]
pub(super) struct OnSaleHistory {
    seats: BTreeMap<String, Vec<SeatOp>>,
    places: Vec<CounterOp>,
    pub(super) unread: usize,
}

/// What the checker found: the operations judged, the seats they touched,
/// answers it could not read, and the violations.
#[derive(Debug, Default, Clone)]
pub struct HistoryVerdict {
    pub verdict: Verdict,
    pub seats: usize,
    pub unread: usize,
    /// Whether a GA section was judged beside the seats.
    pub places: bool,
}

impl HistoryVerdict {
    pub fn ok(&self) -> bool {
        self.unread == 0 && self.verdict.violations.is_empty() && self.verdict.operations > 0
    }

    /// Two verdicts together (a scenario's runs on events of their own).
    pub fn and(self, other: HistoryVerdict) -> HistoryVerdict {
        HistoryVerdict {
            verdict: self.verdict.and(other.verdict),
            seats: self.seats + other.seats,
            unread: self.unread + other.unread,
            places: self.places || other.places,
        }
    }

    pub fn text(&self) -> String {
        format!(
            "{} answers judged over {} seat{}{}, {} unread, {} violations{}",
            self.verdict.operations,
            self.seats,
            if self.seats == 1 { "" } else { "s" },
            if self.places {
                " and the GA section"
            } else {
                ""
            },
            self.unread,
            self.verdict.violations.len(),
            self.verdict
                .violations
                .first()
                .map_or(String::new(), |v| format!(" (the first: {v})"))
        )
    }
}

/// A claim's refusal that is not about the seat and that the seat's
/// history cannot judge: the buyer's limit reached (`409 buyer-limit`),
/// or the order's seats (`422 seat-limit`). Every other refusal is read
/// (`seat-held`, `seat-sold`, `order-not-holdable`) or left unread.
fn not_about_the_seat((status, body): (u16, &Value)) -> bool {
    matches!(
        (status, body["error"].as_str()),
        (409, Some("buyer-limit")) | (422, Some("seat-limit"))
    )
}

impl BuyerHistory {
    /// These answers judged on their own, every seat's history (a
    /// stampede's: no GA section).
    pub(super) fn judge_seats(self) -> HistoryVerdict {
        let mut history = OnSaleHistory::default();
        history.add(self);
        history.judge_seats()
    }
}

impl OnSaleHistory {
    /// `seats` and `places` sold for good to `order` during `window` (the
    /// sold-out phase's seeding).
    pub(super) fn sold(&mut self, window: Window, order: &str, seats: &[String], places: u64) {
        let mut seeding = BuyerHistory::default();
        seeding.confirmed(window, order, seats, places, 200);
        self.add(seeding);
    }

    pub(super) fn add(&mut self, buyer: BuyerHistory) {
        for (seat, op) in buyer.seats {
            self.seats.entry(seat).or_default().push(op);
        }
        self.places.extend(buyer.places);
        self.unread += buyer.unread;
    }

    /// Every seat's history and the GA section's against `ga_capacity`.
    pub(super) fn judge(&self, ga_section: &str, ga_capacity: u64) -> HistoryVerdict {
        let places = check_counter(ga_section, ga_capacity, &self.places);
        let seats = self.judge_seats();
        HistoryVerdict {
            verdict: seats.verdict.and(places),
            places: true,
            ..seats
        }
    }

    /// Every seat's history (a stampede's: no GA section).
    pub(super) fn judge_seats(&self) -> HistoryVerdict {
        let seats = self
            .seats
            .iter()
            .map(|(seat, ops)| check_seat(seat, ops))
            .fold(Verdict::default(), Verdict::and);
        // An order may be sold or given up on one seat and refused on another.
        let verdict = seats.and(check_order_refusals(self.seats.values().flatten()));
        HistoryVerdict {
            verdict,
            seats: self.seats.len(),
            unread: self.unread,
            places: false,
        }
    }
}

#[cfg(test)]
#[path = "onsale_history_tests.rs"]
mod tests;
