//! Stampedes judged by the history checker (`crowdcheck::history`, issue 30):
//! every request's start, end and answer on the wall clock `expiresAt` is
//! told on, explained as a seat claimed under expiry, or not.

use std::sync::Arc;
use std::time::Duration;

use crate::common::*;
use crowdcheck::history::{
    check_order_refusals, check_seat, micros_of, seat_claim, wall_us, SeatOp, Window,
};
use shared::App;

const SEAT: &str = "A-1-1";

/// `o`'s claim of the seat, timed, as the checker reads its answer. A
/// refusal may come from the crowd gate's memory only where `instance`
/// has seen the seat refused before (its replies do not say).
async fn timed_claim(instance: &App, o: &TestOrder, from_memory: bool) -> SeatOp {
    let start = wall_us();
    let (status, body) = claim(instance, o, SEAT).await;
    let window = Window::new(start, wall_us());
    let expires = micros_of(&o.expires_at).unwrap();
    let expiry = Window::new(expires, expires);
    seat_claim(window, &o.id, (status, &body), from_memory, expiry)
        .unwrap_or_else(|| panic!("unexpected {status} {body}"))
}

/// Every one of `orders` claims the seat at once: through `app` itself
/// (one instance: its crowd gate answers from memory once contended), or
/// each through an instance of its own (every refusal exact).
async fn wave(app: &Arc<App>, orders: &[TestOrder], one_instance: bool) -> Vec<SeatOp> {
    let barrier = Arc::new(tokio::sync::Barrier::new(orders.len()));
    let tasks: Vec<_> = orders
        .iter()
        .cloned()
        .map(|o| {
            let instance = if one_instance {
                app.clone()
            } else {
                Arc::new(App {
                    memory: app.memory.fresh(),
                    ..(**app).clone()
                })
            };
            let barrier = barrier.clone();
            tokio::spawn(async move {
                barrier.wait().await;
                timed_claim(&instance, &o, one_instance).await
            })
        })
        .collect();
    let mut ops = Vec::new();
    for task in tasks {
        ops.push(task.await.unwrap());
    }
    ops
}

/// The orders the answers say held the seat.
fn holders(ops: &[SeatOp]) -> Vec<&str> {
    ops.iter()
        .filter_map(|op| match op {
            SeatOp::Held { order, .. } => Some(order.as_str()),
            _ => None,
        })
        .collect()
}

/// The one order of `orders` a wave's answers say holds the seat.
fn winner<'a>(ops: &[SeatOp], orders: &'a [TestOrder]) -> &'a TestOrder {
    let held = holders(ops);
    assert_eq!(held.len(), 1, "one winner a wave: {ops:?}");
    orders.iter().find(|o| o.id == held[0]).unwrap()
}

/// Thirty orders at once on one seat through one instance; the winner
/// drops it and the other twenty-nine try again at once, each through an
/// instance of its own; that wave's winner keeps the seat until its hold
/// expires (no sweep), and thirty fresh orders, each on its own instance,
/// start claiming just before that instant and keep on until one wins.
/// Exactly one winner a wave, and every answer, with its request's
/// instants, explained by one holder at a time: refusals from instances
/// with no memory must each meet a live holder.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_one_seat_stampede_with_a_drop_and_an_expiry_is_linearizable() {
    const CROWD: usize = 30;
    let app = Arc::new(fresh_app().await);
    // Holds of 10 s: the second wave reuses the first's orders.
    let ev = event(&app, 1, 10).await;
    let mut first = Vec::new();
    for _ in 0..CROWD {
        first.push(order(&app, &ev).await);
    }
    let mut history = wave(&app, &first, true).await;
    let dropper = winner(&history, &first).clone();
    let start = wall_us();
    assert_eq!(drop_seat(&app, &dropper, SEAT).await.0, 200);
    history.push(SeatOp::Released {
        window: Window::new(start, wall_us()),
        order: dropper.id.clone(),
    });
    let rest: Vec<TestOrder> = first.into_iter().filter(|o| o.id != dropper.id).collect();
    let second = wave(&app, &rest, false).await;
    let expiring = winner(&second, &rest).clone();
    history.extend(second);

    // Orders that outlive the event's short hold: the holder's own claims
    // stop EXPIRY_GUARD_MS before its order's expiry, which for an order
    // made a moment after the expiring one would fall before that expiry.
    let mut fresh = Vec::new();
    for _ in 0..CROWD {
        fresh.push(order_expiring_in(&app, &ev, 60).await);
    }
    // Sleep to 1.5 s before the hold expires, so the wave spans it
    // (some of its claims are answered before, even on a busy machine).
    let expires_us = micros_of(&expiring.expires_at).unwrap();
    let early = u64::try_from(expires_us - 1_500_000 - wall_us()).unwrap_or(0);
    tokio::time::sleep(Duration::from_micros(early)).await;
    let mut third = wave(&app, &fresh, false).await;
    for o in fresh.iter().cycle().take(20 * CROWD) {
        if !holders(&third).is_empty() {
            break;
        }
        let instance = App {
            memory: app.memory.fresh(),
            ..(*app).clone()
        };
        third.push(timed_claim(&instance, o, false).await);
    }
    winner(&third, &fresh);
    let before_expiry = third.iter().filter(|op| match op {
        SeatOp::Refused { window, .. } => window.end < expires_us,
        _ => false,
    });
    assert!(
        before_expiry.count() > 0,
        "the wave began before the expiry"
    );
    let operations = history.len() + third.len();
    history.extend(third);

    let verdict = check_seat(SEAT, &history);
    assert_eq!(
        (verdict.operations, verdict.violations),
        (operations, Vec::<String>::new())
    );
    let orders = check_order_refusals(&history);
    assert_eq!(orders.violations, Vec::<String>::new());
}
