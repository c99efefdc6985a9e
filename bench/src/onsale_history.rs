//! The on-sale's history (issue 30, part 3): every buyer's answers, each
//! with the instants its request was in flight on the wall clock, then the
//! sold-out phase's seeded sales and its crowd's get-seat answers, judged
//! by the history checker: every seat as a register claimed under expiry,
//! the GA section as a counter under its capacity. The spread and the
//! one-seat stampedes over many instances judge their claims here too.

use crowdcheck::history::{
    check_counter, check_seat, places_hold, seat_claim, seconds_after, CounterOp, Micros, SeatOp,
    Take, Verdict, Window,
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
            None if answer.0 == 200 => self.unread += 1,
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
        let verdict = self
            .seats
            .iter()
            .map(|(seat, ops)| check_seat(seat, ops))
            .fold(Verdict::default(), Verdict::and);
        HistoryVerdict {
            verdict,
            seats: self.seats.len(),
            unread: self.unread,
            places: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crowdcheck::history::micros_of;

    fn window(start: Micros, end: Micros) -> Window {
        Window::new(start, end)
    }

    /// The buyers' histories judged together, with room for 10 places.
    fn judged(buyers: Vec<BuyerHistory>) -> HistoryVerdict {
        let mut history = OnSaleHistory::default();
        for buyer in buyers {
            history.add(buyer);
        }
        history.judge("FLOOR", 10)
    }

    #[test]
    fn a_refusal_about_the_order_says_nothing_of_the_seat_and_others_are_unread() {
        let mut claims = BuyerHistory::default();
        let limit = serde_json::json!({"error": "seat-limit"});
        let lapsed = serde_json::json!({"error": "order-expired"});
        let bad = serde_json::json!({"error": "bad-request"});
        let at_its_limit = serde_json::json!({"error": "buyer-limit"});
        claims.claim_for("S1-1-1", window(0, 10), "a", (422, &limit), (0, 60));
        claims.claim_for("S1-1-1", window(0, 10), "a", (409, &at_its_limit), (0, 60));
        assert_eq!((claims.seats.len(), claims.unread), (0, 0));
        claims.claim_for("S1-1-1", window(0, 10), "a", (422, &bad), (0, 60));
        // A 409 no claim answers is read as nothing, and counted.
        claims.claim_for("S1-1-1", window(0, 10), "a", (409, &lapsed), (0, 60));
        assert_eq!(claims.unread, 2);
        // A 503 holds until the order's life after its answer at the latest.
        claims.claim_for("S1-1-2", window(0, 10), "a", (503, &bad), (0, 60));
        match &claims.seats[0].1 {
            SeatOp::Unknown { expires_by, .. } => assert_eq!(*expires_by, 10 + 60_000_000),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_seeded_sales_explain_the_crowds_refusals_and_nothing_else() {
        let refused = serde_json::json!({"error": "seat-sold"});
        let mut history = OnSaleHistory::default();
        history.sold(window(0, 10), "seeding", &["S1-1-1".into()], 3);
        let mut crowd = BuyerHistory::default();
        crowd.claim(
            "S1-1-1",
            window(20, 30),
            "c",
            (409, &refused),
            Window::new(1_000, 1_000),
        );
        history.add(crowd);
        let verdict = history.judge("FLOOR", 10);
        assert!(verdict.ok(), "{verdict:?}");
        assert_eq!(verdict.verdict.operations, 3);
        // A refusal on a seat nobody sold or held is not explained.
        let mut stray = BuyerHistory::default();
        stray.claim(
            "S1-1-2",
            window(20, 30),
            "c",
            (409, &refused),
            Window::new(1_000, 1_000),
        );
        history.add(stray);
        assert!(!history.judge("FLOOR", 10).ok());
        // A hold granted on a sold seat overlaps the sale.
        let held = serde_json::json!({"expiresAt": "2026-11-27T12:00:00Z"});
        let mut granted = OnSaleHistory::default();
        granted.sold(window(0, 10), "seeding", &["S1-1-1".into()], 0);
        let mut crowd = BuyerHistory::default();
        crowd.claim(
            "S1-1-1",
            window(20, 30),
            "c",
            (200, &held),
            Window::new(1_000, 1_000),
        );
        granted.add(crowd);
        let verdict = granted.judge("FLOOR", 10);
        assert_eq!(verdict.unread, 0);
        assert!(!verdict.verdict.violations.is_empty(), "{verdict:?}");
        // Places seeded past the capacity are rejected.
        let mut over = OnSaleHistory::default();
        over.sold(window(0, 10), "seeding", &[], 11);
        assert!(!over.judge("FLOOR", 10).verdict.violations.is_empty());
    }

    #[test]
    fn a_seat_sold_to_one_and_then_held_by_another_is_rejected() {
        let mut a = BuyerHistory::default();
        let held = serde_json::json!({"expiresAt": "2026-11-27T12:00:00Z"});
        a.claim(
            "S1-1-1",
            window(0, 10),
            "a",
            (200, &held),
            Window::new(0, 0),
        );
        a.confirmed(window(20, 30), "a", &["S1-1-1".into()], 0, 200);
        let mut b = BuyerHistory::default();
        b.claim(
            "S1-1-1",
            window(40, 50),
            "b",
            (200, &held),
            Window::new(0, 0),
        );
        let verdict = judged(vec![a, b]);
        assert!(!verdict.verdict.violations.is_empty(), "{verdict:?}");
        assert!(!verdict.ok());
    }

    #[test]
    fn places_granted_past_the_capacity_are_rejected_and_a_503_is_not_counted() {
        let granted = serde_json::json!({"expiresAt": "2026-11-27T12:00:00Z"});
        let mut history = OnSaleHistory::default();
        for (i, status) in [200u16, 200, 503].into_iter().enumerate() {
            let mut buyer = BuyerHistory::default();
            let start = i as Micros * 100;
            buyer.places(
                window(start, start + 10),
                &format!("o{i}"),
                3,
                (status, &granted),
                600,
            );
            history.add(buyer);
        }
        assert!(history.judge("FLOOR", 6).ok(), "two grants of 3 fit in 6");
        assert!(!history.judge("FLOOR", 5).ok(), "two grants of 3 exceed 5");
    }

    #[test]
    fn a_sold_out_refusal_needs_the_section_full_and_one_about_the_order_is_no_operation() {
        let granted = serde_json::json!({"expiresAt": "2026-11-27T12:00:00Z"});
        let sold_out = serde_json::json!({"error": "sold-out", "available": 0});
        let expired = serde_json::json!({"error": "order-expired"});
        let refusal = |status, answer: &Value| {
            let mut buyer = BuyerHistory::default();
            buyer.places(window(100, 110), "late", 1, (status, answer), 600);
            buyer
        };
        let full = |cap| {
            let mut history = OnSaleHistory::default();
            let mut first = BuyerHistory::default();
            first.places(window(0, 10), "first", 5, (200, &granted), 600);
            history.add(first);
            history.add(refusal(409, &sold_out));
            history.add(refusal(409, &expired));
            history.judge("FLOOR", cap)
        };
        assert!(full(5).ok(), "{:?}", full(5));
        let room = full(6);
        assert!(!room.ok());
        assert_eq!(room.verdict.violations.len(), 1, "{room:?}");
        assert!(room.verdict.violations[0].contains("late refused 1"));
    }

    #[test]
    fn a_grant_that_does_not_say_until_when_is_unread() {
        let mut buyer = BuyerHistory::default();
        buyer.places(window(0, 1), "o", 1, (200, &serde_json::json!({})), 600);
        let verdict = judged(vec![buyer]);
        assert_eq!(verdict.unread, 1);
        assert!(!verdict.ok());
    }

    const HELD_UNTIL_NOON: &str = "2026-11-27T12:00:00Z";

    fn noon() -> Micros {
        micros_of(HELD_UNTIL_NOON).unwrap_or(0)
    }

    #[test]
    fn a_refusal_explained_only_by_a_claim_that_answered_503_is_accepted() {
        let mut a = BuyerHistory::default();
        a.claim(
            "S1-1-3",
            window(0, 10),
            "a",
            (503, &serde_json::json!({})),
            Window::new(noon(), noon()),
        );
        let mut b = BuyerHistory::default();
        let refused = serde_json::json!({"error": "seat-held"});
        b.claim(
            "S1-1-3",
            window(20, 30),
            "b",
            (409, &refused),
            Window::new(noon(), noon()),
        );
        let verdict = judged(vec![a, b]);
        assert!(verdict.ok(), "{verdict:?}");
    }

    #[test]
    fn a_refusal_from_memory_after_a_release_is_accepted_and_after_an_expiry_is_not() {
        let held = serde_json::json!({"expiresAt": "1970-01-01T00:00:01Z"});
        let refused = serde_json::json!({"error": "seat-held"});
        let later = window(3_000_000, 3_000_010);
        // Two seconds after the hold lapsed: memory never misses an expiry.
        let mut a = BuyerHistory::default();
        a.claim(
            "S1-1-4",
            window(0, 10),
            "a",
            (200, &held),
            Window::new(0, 0),
        );
        let mut b = BuyerHistory::default();
        b.claim("S1-1-4", later, "b", (409, &refused), Window::new(0, 0));
        assert!(!judged(vec![a, b]).ok());
        // Two seconds after the holder let go of a live hold: it may.
        let live = serde_json::json!({"expiresAt": HELD_UNTIL_NOON});
        let mut a = BuyerHistory::default();
        a.claim(
            "S1-1-4",
            window(0, 10),
            "a",
            (200, &live),
            Window::new(0, 0),
        );
        a.seats.push((
            "S1-1-4".into(),
            SeatOp::Released {
                window: window(500_000, 1_000_000),
                order: "a".into(),
            },
        ));
        let mut b = BuyerHistory::default();
        b.claim("S1-1-4", later, "b", (409, &refused), Window::new(0, 0));
        let verdict = judged(vec![a, b]);
        assert!(verdict.ok(), "{verdict:?}");
    }

    #[test]
    fn a_claim_after_a_hold_lapsed_unsold_is_accepted_and_so_is_a_lapsed_orders_refusal() {
        let early = serde_json::json!({"expiresAt": "1970-01-01T00:00:01Z"});
        let later = serde_json::json!({"expiresAt": HELD_UNTIL_NOON});
        let mut a = BuyerHistory::default();
        a.claim(
            "S1-1-5",
            window(0, 10),
            "a",
            (200, &early),
            Window::new(0, 0),
        );
        let lapsed = serde_json::json!({"error": "order-not-holdable"});
        a.claim(
            "S1-1-6",
            window(20, 30),
            "a",
            (409, &lapsed),
            Window::new(0, 0),
        );
        let mut b = BuyerHistory::default();
        b.claim(
            "S1-1-5",
            window(2_000_000, 2_000_010),
            "b",
            (200, &later),
            Window::new(0, 0),
        );
        b.confirmed(
            window(2_000_020, 2_000_030),
            "b",
            &["S1-1-5".into()],
            0,
            200,
        );
        let verdict = judged(vec![a, b]);
        assert!(verdict.ok(), "{verdict:?}");
        // The order's refusal is judged on the seat it named.
        assert_eq!((verdict.seats, verdict.unread), (2, 0));
    }

    #[test]
    fn a_refusal_with_no_holder_anywhere_is_rejected() {
        let mut buyer = BuyerHistory::default();
        let refused = serde_json::json!({"error": "seat-held"});
        buyer.claim(
            "S1-1-2",
            window(0, 10),
            "a",
            (409, &refused),
            Window::new(0, 0),
        );
        assert!(!judged(vec![buyer]).ok());
    }
}
