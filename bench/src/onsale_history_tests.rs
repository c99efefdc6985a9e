//! The on-sale history's own cases: answers read, histories judged.

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
