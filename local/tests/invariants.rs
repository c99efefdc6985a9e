//! The contract's invariants under real concurrency: races are many tasks
//! against one DynamoDB Local, winners counted.

mod common;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use common::*;
use shared::domain::{OrderStatus, SeatState};

/// Checks invariants 1, 2 and 4 over an event's table state: every SOLD
/// seat belongs to a COMPLETED order that lists it; a COMPLETED order's
/// seats are all SOLD to it; no seat is held by two live orders.
async fn assert_consistent(app: &shared::App, event: &str, orders: &[TestOrder]) {
    let seats = seats(app, event).await;
    let mut stored = HashMap::new();
    for o in orders {
        stored.insert(o.id.clone(), stored_order(app, &o.id).await);
    }
    let now = shared::domain::Millis::now();
    for seat in &seats {
        if let SeatState::Sold { order } = &seat.state {
            let buyer = &stored[order.as_str()];
            assert_eq!(buyer.status, OrderStatus::Completed, "seat {} SOLD to an order that is not COMPLETED", seat.spec.seat_id);
            assert!(buyer.seats.contains(&seat.spec.seat_id));
        }
    }
    let mut live_claims: HashMap<String, Vec<String>> = HashMap::new();
    for (id, o) in &stored {
        if o.status == OrderStatus::Completed {
            for s in &o.seats {
                let seat = seats.iter().find(|x| &x.spec.seat_id == s).unwrap();
                assert_eq!(seat.state, SeatState::Sold { order: o.order_id.clone() }, "completed order {id} lacks seat {s}");
            }
        }
        if o.is_holdable(now) {
            for s in &o.seats {
                live_claims.entry(s.to_string()).or_default().push(id.clone());
                let seat = seats.iter().find(|x| &x.spec.seat_id == s).unwrap();
                assert!(
                    matches!(&seat.state, SeatState::Held { order, .. } if order == &o.order_id),
                    "live order {id} lists {s} but the seat says {:?}", seat.state
                );
            }
        }
    }
    for (seat, holders) in live_claims {
        assert_eq!(holders.len(), 1, "seat {seat} held by several live orders: {holders:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_concurrent_claims_of_one_seat_have_one_winner() {
    const CLAIMERS: usize = 250;
    let app = Arc::new(fresh_app().await);
    let ev = event(&app, 1, 300).await;
    let mut orders = Vec::new();
    for _ in 0..CLAIMERS {
        orders.push(order(&app, &ev).await);
    }
    let barrier = Arc::new(tokio::sync::Barrier::new(CLAIMERS));
    let mut tasks = Vec::new();
    for o in orders.clone() {
        let (app, barrier) = (app.clone(), barrier.clone());
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            claim(&app, &o, "A-1-1").await
        }));
    }
    let mut winners = 0;
    let mut codes: HashMap<String, usize> = HashMap::new();
    for t in tasks {
        let (status, body) = t.await.unwrap();
        if status == 200 {
            winners += 1;
        } else {
            *codes.entry(format!("{status} {}", body["error"].as_str().unwrap_or("?"))).or_default() += 1;
        }
    }
    assert_eq!(winners, 1, "exactly one winner; losers: {codes:?}");
    assert_eq!(codes.get("409 seat-held"), Some(&(CLAIMERS - 1)), "{codes:?}");
    assert_consistent(&app, &ev, &orders).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_orders_over_few_seats_never_share_one() {
    const ORDERS: usize = 40;
    const SEATS: u32 = 6;
    let app = Arc::new(fresh_app().await);
    let ev = event(&app, SEATS, 300).await;
    let mut orders = Vec::new();
    for _ in 0..ORDERS {
        orders.push(order(&app, &ev).await);
    }
    let barrier = Arc::new(tokio::sync::Barrier::new(ORDERS));
    let mut tasks = Vec::new();
    for (i, o) in orders.clone().into_iter().enumerate() {
        let (app, barrier) = (app.clone(), barrier.clone());
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            let mut won = Vec::new();
            // Each order tries every seat, starting at a different one, and
            // drops some of what it won, so claims and drops interleave.
            for k in 0..SEATS {
                let seat = format!("A-1-{}", (i as u32 + k) % SEATS + 1);
                let (status, body) = claim(&app, &o, &seat).await;
                match status {
                    200 => won.push(seat),
                    409 => assert_eq!(body["error"], "seat-held"),
                    other => panic!("unexpected {other} {body}"),
                }
                if won.len() == 2 {
                    let dropped = won.remove(0);
                    assert_eq!(drop_seat(&app, &o, &dropped).await.0, 200);
                }
            }
            won
        }));
    }
    let mut claimed = HashSet::new();
    for t in tasks {
        for seat in t.await.unwrap() {
            assert!(claimed.insert(seat.clone()), "seat {seat} won by two orders");
        }
    }
    assert_consistent(&app, &ev, &orders).await;
}

#[tokio::test]
async fn an_expired_hold_is_claimable_at_once_without_a_sweep() {
    let app = fresh_app().await;
    let ev = event(&app, 1, 1).await;
    let first = order(&app, &ev).await;
    assert_eq!(claim(&app, &first, "A-1-1").await.0, 200);
    let second = order(&app, &ev).await;
    assert_eq!(claim(&app, &second, "A-1-1").await.1["error"], "seat-held");
    let_holds_expire(1).await;
    let (status, body) = claim(&app, &second, "A-1-1").await;
    assert_eq!(status, 409, "the second order expired too: {body}");
    let third = order(&app, &ev).await;
    assert_eq!(claim(&app, &third, "A-1-1").await.0, 200, "no stale window: no sweep ran");
    // The sweep later leaves the re-claimed seat alone.
    let summary = sweep(&app).await;
    assert_eq!((summary.expired_orders, summary.released_seats), (2, 0));
    let seat = &seats(&app, &ev).await[0];
    assert!(matches!(&seat.state, SeatState::Held { order, .. } if order.as_str() == third.id));
    assert_eq!(get_order(&app, &first).await.1["status"], "EXPIRED");
}

#[tokio::test]
async fn the_sweep_expires_orders_and_releases_what_they_still_hold() {
    let app = fresh_app().await;
    let ev = event(&app, 10, 1).await;
    let mut orders = Vec::new();
    for i in 0..5 {
        let o = order(&app, &ev).await;
        assert_eq!(claim(&app, &o, &format!("A-1-{}", 2 * i + 1)).await.0, 200);
        assert_eq!(claim(&app, &o, &format!("A-1-{}", 2 * i + 2)).await.0, 200);
        orders.push(o);
    }
    let paid = order(&app, &ev).await; // completes in time: never swept
    let long_app = { let mut a = app.clone(); a.config.hold_seconds = 300; a };
    let ev_long = event(&long_app, 1, 300).await;
    let live = order(&app, &ev_long).await;
    assert_eq!(claim(&app, &live, "A-1-1").await.0, 200);
    let _ = paid;
    let_holds_expire(1).await;
    let summary = sweep(&app).await;
    assert_eq!((summary.expired_orders, summary.released_seats, summary.failed_orders), (6, 10, 0));
    assert!(seats(&app, &ev).await.iter().all(|s| s.state == SeatState::Available));
    for o in &orders {
        let stored = stored_order(&app, &o.id).await;
        assert_eq!(stored.status, OrderStatus::Expired);
        assert_eq!(stored.seats.len(), 2, "an expired order still shows what it held");
    }
    assert_eq!(stored_order(&app, &live.id).await.status, OrderStatus::Pending, "live orders are untouched");
    // Nothing left: a second sweep finds no work.
    let again = sweep(&app).await;
    assert_eq!((again.expired_orders, again.released_seats), (0, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_sweeps_at_once_release_each_seat_once() {
    let app = Arc::new(fresh_app().await);
    let ev = event(&app, 60, 1).await;
    for i in 0..30 {
        let o = order(&app, &ev).await;
        assert_eq!(claim(&app, &o, &format!("A-1-{}", 2 * i + 1)).await.0, 200);
        assert_eq!(claim(&app, &o, &format!("A-1-{}", 2 * i + 2)).await.0, 200);
    }
    let_holds_expire(1).await;
    let (a, b) = tokio::join!(sweep(&app), sweep(&app));
    assert_eq!(a.expired_orders + b.expired_orders, 30, "{a:?} {b:?}");
    assert_eq!(a.released_seats + b.released_seats, 60, "{a:?} {b:?}");
    assert_eq!(a.failed_orders + b.failed_orders, 0);
    assert!(seats(&app, &ev).await.iter().all(|s| s.state == SeatState::Available));
}

#[tokio::test]
async fn a_late_payment_reacquires_free_seats() {
    let app = fresh_app().await;
    let ev = event(&app, 3, 1).await;
    let o = order(&app, &ev).await;
    assert_eq!(claim(&app, &o, "A-1-1").await.0, 200);
    assert_eq!(claim(&app, &o, "A-1-2").await.0, 200);
    let_holds_expire(1).await;
    assert_eq!(sweep(&app).await.expired_orders, 1);
    let (status, body) = confirm(&app, &o.id, "pi_late").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "COMPLETED");
    assert_eq!(body["seats"], serde_json::json!(["A-1-1", "A-1-2"]));
    assert_eq!(get_order(&app, &o).await.1["status"], "COMPLETED");
    assert_consistent(&app, &ev, &[o]).await;
}

#[tokio::test]
async fn a_late_payment_before_the_sweep_reacquires_too() {
    let app = fresh_app().await;
    let ev = event(&app, 1, 1).await;
    let o = order(&app, &ev).await;
    assert_eq!(claim(&app, &o, "A-1-1").await.0, 200);
    let_holds_expire(1).await;
    assert_eq!(confirm(&app, &o.id, "pi_late").await.0, 200);
    // The sweep then has nothing to release and does not expire it.
    let s = sweep(&app).await;
    assert_eq!((s.expired_orders, s.released_seats), (0, 0));
    assert_consistent(&app, &ev, &[o]).await;
}

#[tokio::test]
async fn a_late_payment_for_taken_seats_is_recorded_for_refund() {
    let app = fresh_app().await;
    let ev = event(&app, 2, 1).await;
    let late = order(&app, &ev).await;
    assert_eq!(claim(&app, &late, "A-1-1").await.0, 200);
    assert_eq!(claim(&app, &late, "A-1-2").await.0, 200);
    let_holds_expire(1).await;
    let mut long = app.clone();
    long.config.hold_seconds = 300;
    let newer = order(&app, &ev).await; // same event: its hold is 1 s too
    assert_eq!(claim(&app, &newer, "A-1-2").await.0, 200);
    let (status, body) = confirm(&app, &late.id, "pi_late").await;
    assert_eq!((status, body["error"].as_str(), body["refund"].as_bool()), (409, Some("order-expired"), Some(true)), "{body}");
    // All or nothing: A-1-1 was free but is not sold.
    let seats_now = seats(&app, &ev).await;
    assert!(seats_now.iter().all(|s| !matches!(s.state, SeatState::Sold { .. })));
    let (_, view) = get_order(&app, &late).await;
    assert_eq!((view["status"].as_str(), view["paymentId"].as_str()), (Some("REFUND_DUE"), Some("pi_late")));
    // The same webhook again: the same answer, still recorded once.
    let (status, again) = confirm(&app, &late.id, "pi_late").await;
    assert_eq!((status, again["error"].as_str(), again["refund"].as_bool()), (409, Some("order-expired"), Some(true)));
    // The newer order still holds its seat and can buy it.
    assert_eq!(confirm(&app, &newer.id, "pi_newer").await.0, 200);
    assert_consistent(&app, &ev, &[late, newer]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn duplicate_webhooks_at_once_complete_once() {
    let app = Arc::new(fresh_app().await);
    let ev = event(&app, 3, 300).await;
    let o = order(&app, &ev).await;
    for s in ["A-1-1", "A-1-2", "A-1-3"] {
        assert_eq!(claim(&app, &o, s).await.0, 200);
    }
    let mut tasks = Vec::new();
    for i in 0..20 {
        let (app, id) = (app.clone(), o.id.clone());
        // Half repeat one payment; half are different payments for it.
        let payment = if i % 2 == 0 { "pi_same".to_owned() } else { format!("pi_other_{i}") };
        tasks.push(tokio::spawn(async move { (payment.clone(), confirm(&app, &id, &payment).await) }));
    }
    let mut winners = HashSet::new();
    for t in tasks {
        let (payment, (status, body)) = t.await.unwrap();
        match status {
            200 => {
                winners.insert(payment);
            }
            409 => assert_eq!(body["error"], "already-completed"),
            other => panic!("unexpected {other}: {body}"),
        }
    }
    assert_eq!(winners.len(), 1, "one payment completes the order: {winners:?}");
    let stored = stored_order(&app, &o.id).await;
    assert_eq!(stored.payment_id.unwrap().as_str(), winners.iter().next().unwrap());
    assert_consistent(&app, &ev, &[o]).await;
}

/// Confirm, the sweep and a rival claim all at the expiry instant, many
/// times: whatever wins, the outcome is one of the contract's and the
/// invariants hold — never SOLD to an expired order while another holds it.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn confirm_racing_the_sweep_at_the_expiry_boundary() {
    let app = Arc::new(fresh_app().await);
    let mut outcomes: HashMap<String, usize> = HashMap::new();
    for round in 0..10 {
        let ev = event(&app, 2, 2).await;
        let buyer = order(&app, &ev).await;
        assert_eq!(claim(&app, &buyer, "A-1-1").await.0, 200);
        assert_eq!(claim(&app, &buyer, "A-1-2").await.0, 200);
        // The rivals start a second later, so they are surely live while
        // the buyer's order crosses its expiry.
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        let rival = order(&app, &ev).await;
        let rival2 = order(&app, &ev).await;
        let expires: chrono::DateTime<chrono::Utc> = buyer.expires_at.parse().unwrap();
        // Aim at the boundary, a little either side of it from round to round.
        let offset_ms = (round % 6) as i64 * 4 - 10;
        let wait = (expires - chrono::Utc::now()).num_milliseconds() + offset_ms;
        if wait > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(wait as u64)).await;
        }
        let (c, _, r) = tokio::join!(
            confirm(&app, &buyer.id, "pi_race"),
            sweep(&app),
            async {
                let r = claim(&app, &rival2, "A-1-2").await;
                let _ = claim(&app, &rival, "A-1-2").await;
                r
            },
        );
        let outcome = match (c.0, c.1["error"].as_str()) {
            (200, _) => "completed",
            (409, Some("order-expired")) => {
                assert_eq!(c.1["refund"], true);
                "refund-due"
            }
            other => panic!("confirm answered {other:?}: {}", c.1),
        };
        *outcomes.entry(format!("{outcome}/rival-{}", r.0)).or_default() += 1;
        if outcome == "completed" {
            assert_ne!(r.0, 200, "a rival won a seat the buyer was sold: {}", r.1);
        }
        assert_consistent(&app, &ev, &[buyer, rival, rival2]).await;
    }
    eprintln!("boundary outcomes: {outcomes:?}");
}
