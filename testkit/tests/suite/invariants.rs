//! The contract's invariants under real concurrency: races are many tasks
//! against one DynamoDB Local, winners counted.

use crate::common;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use common::*;
use shared::domain::{OrderStatus, SeatState};
use testkit::assert_invariants;

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
            *codes
                .entry(format!(
                    "{status} {}",
                    body["error"].as_str().unwrap_or("?")
                ))
                .or_default() += 1;
        }
    }
    assert_eq!(winners, 1, "exactly one winner; losers: {codes:?}");
    assert_eq!(
        codes.get("409 seat-held"),
        Some(&(CLAIMERS - 1)),
        "{codes:?}"
    );
    assert_invariants(&app, &ev).await;
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
            assert!(
                claimed.insert(seat.clone()),
                "seat {seat} won by two orders"
            );
        }
    }
    assert_invariants(&app, &ev).await;
}

#[tokio::test]
async fn an_expired_hold_is_claimable_at_once_without_a_sweep() {
    let app = fresh_app().await;
    let ev = event(&app, 1, 1).await;
    // Holds of their own length: a slow machine cannot expire the first
    // before the second meets it, nor the third before the sweep.
    let first = order_expiring_in(&app, &ev, 3).await;
    assert_eq!(claim(&app, &first, "A-1-1").await.0, 200);
    let second = order_expiring_in(&app, &ev, 3).await;
    assert_eq!(claim(&app, &second, "A-1-1").await.1["error"], "seat-held");
    let_expire(&second).await;
    let (status, body) = claim(&app, &second, "A-1-1").await;
    assert_eq!(status, 409, "the second order expired too: {body}");
    let third = order_expiring_in(&app, &ev, 60).await;
    assert_eq!(
        claim(&app, &third, "A-1-1").await.0,
        200,
        "no stale window: no sweep ran"
    );
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
    let long_app = {
        let mut a = app.clone();
        a.config.hold_seconds = 300;
        a
    };
    let ev_long = event(&long_app, 1, 300).await;
    let live = order(&app, &ev_long).await;
    assert_eq!(claim(&app, &live, "A-1-1").await.0, 200);
    let _ = paid;
    let_holds_expire(1).await;
    let summary = sweep(&app).await;
    assert_eq!(
        (
            summary.expired_orders,
            summary.released_seats,
            summary.failed_orders
        ),
        (6, 10, 0)
    );
    assert!(seats(&app, &ev)
        .await
        .iter()
        .all(|s| s.state == SeatState::Available));
    for o in &orders {
        let stored = stored_order(&app, &o.id).await;
        assert_eq!(stored.status, OrderStatus::Expired);
        assert_eq!(
            stored.seats.len(),
            2,
            "an expired order still shows what it held"
        );
    }
    assert_eq!(
        stored_order(&app, &live.id).await.status,
        OrderStatus::Pending,
        "live orders are untouched"
    );
    // Nothing left: a second sweep finds no work.
    let again = sweep(&app).await;
    assert_eq!((again.expired_orders, again.released_seats), (0, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_sweeps_at_once_release_each_seat_once() {
    let app = Arc::new(fresh_app().await);
    let ev = event(&app, 60, 1).await;
    // Holds of 5 s each: both claims land inside the holder's window
    // however slow the machine; then every hold has expired.
    let mut last = None;
    for i in 0..30 {
        let o = order_expiring_in(&app, &ev, 5).await;
        assert_eq!(claim(&app, &o, &format!("A-1-{}", 2 * i + 1)).await.0, 200);
        assert_eq!(claim(&app, &o, &format!("A-1-{}", 2 * i + 2)).await.0, 200);
        last = Some(o);
    }
    let_expire(&last.unwrap()).await;
    let (a, b) = tokio::join!(sweep(&app), sweep(&app));
    assert_eq!(a.expired_orders + b.expired_orders, 30, "{a:?} {b:?}");
    assert_eq!(a.released_seats + b.released_seats, 60, "{a:?} {b:?}");
    assert_eq!(a.failed_orders + b.failed_orders, 0);
    assert!(seats(&app, &ev)
        .await
        .iter()
        .all(|s| s.state == SeatState::Available));
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
    assert_invariants(&app, &ev).await;
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
    assert_invariants(&app, &ev).await;
}

#[tokio::test]
async fn a_late_payment_for_taken_seats_is_recorded_for_refund() {
    let app = fresh_app().await;
    let ev = event(&app, 2, 1).await;
    let late = order_expiring_in(&app, &ev, 3).await;
    assert_eq!(claim(&app, &late, "A-1-1").await.0, 200);
    assert_eq!(claim(&app, &late, "A-1-2").await.0, 200);
    let_expire(&late).await;
    // A hold that outlives the late payment, however slow the machine.
    let newer = order_expiring_in(&app, &ev, 60).await;
    assert_eq!(claim(&app, &newer, "A-1-2").await.0, 200);
    let (status, body) = confirm(&app, &late.id, "pi_late").await;
    assert_eq!(
        (status, body["error"].as_str(), body["refund"].as_bool()),
        (409, Some("order-expired"), Some(true)),
        "{body}"
    );
    // All or nothing: A-1-1 was free but is not sold.
    let seats_now = seats(&app, &ev).await;
    assert!(seats_now
        .iter()
        .all(|s| !matches!(s.state, SeatState::Sold { .. })));
    let (_, view) = get_order(&app, &late).await;
    assert_eq!(
        (view["status"].as_str(), view["paymentId"].as_str()),
        (Some("REFUND_DUE"), Some("pi_late"))
    );
    // The same webhook again: the same answer, still recorded once.
    let (status, again) = confirm(&app, &late.id, "pi_late").await;
    assert_eq!(
        (status, again["error"].as_str(), again["refund"].as_bool()),
        (409, Some("order-expired"), Some(true))
    );
    // The newer order still holds its seat and can buy it.
    assert_eq!(confirm(&app, &newer.id, "pi_newer").await.0, 200);
    assert_invariants(&app, &ev).await;
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
        let payment = if i % 2 == 0 {
            "pi_same".to_owned()
        } else {
            format!("pi_other_{i}")
        };
        tasks.push(tokio::spawn(async move {
            (payment.clone(), confirm(&app, &id, &payment).await)
        }));
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
    assert_eq!(
        winners.len(),
        1,
        "one payment completes the order: {winners:?}"
    );
    let stored = stored_order(&app, &o.id).await;
    assert_eq!(
        stored.payment_id.unwrap().as_str(),
        winners.iter().next().unwrap()
    );
    assert_invariants(&app, &ev).await;
}

/// Confirm, the sweep and a rival claim at the buyer's expiry instant, many
/// rounds: whatever wins, every answer is one of the contract's and the
/// invariants hold after each round — never SOLD to an expired order while
/// another holds a seat, never half sold.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn confirm_racing_the_sweep_at_the_expiry_boundary() {
    // Lanes run side by side, each on its own table: a sweep releases every
    // expired hold in its table, so lanes sharing one would sweep each
    // other's orders at other instants than their own boundary.
    const LANES: usize = 10;
    const ROUNDS_PER_LANE: usize = 5;
    let started = std::time::Instant::now();
    let mut lanes = Vec::new();
    for lane in 0..LANES {
        lanes.push(tokio::spawn(async move {
            let app = Arc::new(fresh_app().await);
            let mut outcomes = Vec::new();
            for round in 0..ROUNDS_PER_LANE {
                outcomes.push(race_at_expiry(&app, lane * ROUNDS_PER_LANE + round).await);
            }
            outcomes
        }));
    }
    let mut mix: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    for lane in lanes {
        for outcome in lane.await.unwrap() {
            *mix.entry(outcome).or_default() += 1;
        }
    }
    assert_eq!(mix.values().sum::<usize>(), LANES * ROUNDS_PER_LANE);
    eprintln!(
        "boundary outcomes over {} rounds in {:.1?}: {mix:#?}",
        LANES * ROUNDS_PER_LANE,
        started.elapsed()
    );
}

/// One round: a buyer holding two seats, and at its expiry instant (give
/// or take a few milliseconds) its payment, a sweep and a live rival's
/// claim of one of its seats, released together. Returns the outcome.
async fn race_at_expiry(app: &Arc<shared::App>, round: usize) -> String {
    // A 3 s hold (its guard 750 ms): the buyer's two claims must land
    // inside 2.25 s, which they do even on a loaded machine.
    let ev = event(app, 2, 60).await;
    let buyer = order_expiring_in(app, &ev, 3).await;
    assert_eq!(claim(app, &buyer, "A-1-1").await.0, 200);
    assert_eq!(claim(app, &buyer, "A-1-2").await.0, 200);
    let rival = order_expiring_in(app, &ev, 60).await;
    let barrier = Arc::new(tokio::sync::Barrier::new(4));
    let confirm_task = {
        let (app, barrier, id) = (app.clone(), barrier.clone(), buyer.id.clone());
        tokio::spawn(async move {
            barrier.wait().await;
            confirm(&app, &id, &format!("pi_race_{round}")).await
        })
    };
    let sweep_task = {
        let (app, barrier) = (app.clone(), barrier.clone());
        tokio::spawn(async move {
            barrier.wait().await;
            sweep(&app).await
        })
    };
    let rival_task = {
        let (app, barrier, rival) = (app.clone(), barrier.clone(), rival.clone());
        tokio::spawn(async move {
            barrier.wait().await;
            claim(&app, &rival, "A-1-2").await
        })
    };
    // Let the hold run out: aim at the boundary, from 12 ms before it to
    // 12 ms after it from round to round.
    let expires: chrono::DateTime<chrono::Utc> = buyer.expires_at.parse().unwrap();
    let offset_ms = (round % 7) as i64 * 4 - 12;
    let wait = (expires - chrono::Utc::now()).num_milliseconds() + offset_ms;
    if wait > 0 {
        tokio::time::sleep(std::time::Duration::from_millis(wait as u64)).await;
    }
    barrier.wait().await;
    let (c_status, c_body) = confirm_task.await.unwrap();
    let mut swept = sweep_task.await.unwrap();
    let (r_status, r_body) = rival_task.await.unwrap();
    if swept.failed_orders > 0 {
        // A release that met confirm's transaction failed, to be retried by
        // the sweep's next run (API.md, "expire-holds"): run it.
        let again = sweep(app).await;
        assert_eq!(again.failed_orders, 0, "{swept:?} then {again:?}");
        swept.released_seats += again.released_seats;
    }
    let rival_outcome = match (r_status, r_body["error"].as_str()) {
        (200, _) => "won",
        (409, Some(code @ ("seat-held" | "seat-sold"))) => code,
        other => panic!("round {round}: the rival's claim answered {other:?}: {r_body}"),
    };
    let stored = stored_order(app, &buyer.id).await;
    let seats_now = seats(app, &ev).await;
    let confirm_outcome = match (c_status, c_body["error"].as_str()) {
        (200, _) => {
            assert_eq!(
                c_body["seats"],
                serde_json::json!(["A-1-1", "A-1-2"]),
                "{c_body}"
            );
            assert_eq!(stored.status, OrderStatus::Completed);
            assert_ne!(
                r_status, 200,
                "round {round}: the rival won a seat the buyer was sold: {r_body}"
            );
            "completed"
        }
        (409, Some("order-expired")) => {
            assert_eq!(c_body["refund"], true, "{c_body}");
            assert_eq!(stored.status, OrderStatus::RefundDue);
            assert_eq!(
                stored.payment_id.as_ref().map(|p| p.as_str()),
                Some(format!("pi_race_{round}").as_str())
            );
            // Only the rival's live hold can have stopped the late sale.
            assert_eq!(
                r_status, 200,
                "round {round}: refund due although no seat was taken"
            );
            assert!(
                seats_now
                    .iter()
                    .all(|s| !matches!(s.state, SeatState::Sold { .. })),
                "all or nothing"
            );
            "refund-due"
        }
        other => panic!("round {round}: confirm answered {other:?}: {c_body}"),
    };
    assert_invariants(app, &ev).await;
    format!(
        "confirm {confirm_outcome}, sweep released {}, rival {rival_outcome}",
        swept.released_seats
    )
}

/// The sweep works from the order item, never from the index's copy: an
/// order that took another seat after the index entry the sweep read
/// (as a lagging GSI would show it) still has every seat released.
#[tokio::test]
async fn the_sweep_releases_what_the_order_item_holds_not_what_the_index_showed() {
    let app = fresh_app().await;
    let ev = event(&app, 3, 60).await;
    let o = order(&app, &ev).await;
    assert_eq!(claim(&app, &o, "A-1-1").await.0, 200);
    let expires_at = stored_order(&app, &o.id).await.expires_at;
    let after = shared::domain::Millis(expires_at.0 + 1);
    // What a sweep at `after` reads from the index...
    let mut found = Vec::new();
    for shard in 0..shared::store::PENDING_SHARDS {
        found.extend(
            app.store
                .expired_orders(shard, after, 100, None)
                .await
                .unwrap()
                .0,
        );
    }
    assert_eq!(found, [o.order_id()]);
    // ...then the order takes another seat (still live now).
    assert_eq!(claim(&app, &o, "A-1-2").await.0, 200);
    let released = shared::sweep::release_order(&app.store, &found[0], after)
        .await
        .unwrap();
    assert_eq!((released.seats, released.expired), (2, true));
    let stored = stored_order(&app, &o.id).await;
    assert_eq!(stored.status, OrderStatus::Expired);
    assert!(
        seats(&app, &ev)
            .await
            .iter()
            .all(|s| s.state == SeatState::Available),
        "no seat stays held by an expired order"
    );
    // An index entry whose order is in fact still live is left alone.
    let live = order(&app, &ev).await;
    assert_eq!(claim(&app, &live, "A-1-3").await.0, 200);
    assert_eq!(
        shared::sweep::release_order(&app.store, &live.order_id(), shared::world::now())
            .await
            .unwrap(),
        shared::sweep::Released::default()
    );
    assert_eq!(
        stored_order(&app, &live.id).await.status,
        OrderStatus::Pending
    );
}
