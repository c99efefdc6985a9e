//! Stampedes judged by the history checker (`local::history`, issue 30):
//! every request's start, end and answer on the wall clock `expiresAt` is
//! told on, explained as a seat claimed under expiry, or not.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::common::*;
use local::history::{check_seat, Micros, SeatOp, Window};
use shared::App;

const SEAT: &str = "A-1-1";

fn wall_us() -> Micros {
    let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    i64::try_from(since.as_micros()).unwrap()
}

fn micros_of(rfc3339: &str) -> Micros {
    chrono::DateTime::parse_from_rfc3339(rfc3339)
        .unwrap()
        .timestamp_micros()
}

/// `o`'s claim of the seat, timed, as the checker reads its answer. The
/// crowd gate's refusals do not say they came from its memory, so every
/// refusal is judged with its slack.
async fn timed_claim(app: &App, o: &TestOrder) -> SeatOp {
    let start = wall_us();
    let (status, body) = claim(app, o, SEAT).await;
    let window = Window::new(start, wall_us());
    match (status, body["error"].as_str()) {
        (200, _) => SeatOp::Held {
            window,
            order: o.id.clone(),
            expires: micros_of(body["expiresAt"].as_str().unwrap()),
        },
        (409, Some("seat-held")) => SeatOp::Refused {
            window,
            from_memory: true,
        },
        (503, _) => SeatOp::Unknown {
            window,
            order: o.id.clone(),
            expires_by: micros_of(&o.expires_at),
        },
        _ => panic!("unexpected {status} {body}"),
    }
}

/// Every one of `orders` claims the seat at once.
async fn wave(app: &Arc<App>, orders: &[TestOrder]) -> Vec<SeatOp> {
    let barrier = Arc::new(tokio::sync::Barrier::new(orders.len()));
    let tasks: Vec<_> = orders
        .iter()
        .cloned()
        .map(|o| {
            let (app, barrier) = (app.clone(), barrier.clone());
            tokio::spawn(async move {
                barrier.wait().await;
                timed_claim(&app, &o).await
            })
        })
        .collect();
    let mut ops = Vec::new();
    for task in tasks {
        ops.push(task.await.unwrap());
    }
    ops
}

/// The one order a wave's answers say holds the seat.
fn winner<'a>(ops: &[SeatOp], orders: &'a [TestOrder]) -> &'a TestOrder {
    let held: Vec<&String> = ops
        .iter()
        .filter_map(|op| match op {
            SeatOp::Held { order, .. } => Some(order),
            _ => None,
        })
        .collect();
    assert_eq!(held.len(), 1, "one winner a wave: {ops:?}");
    orders.iter().find(|o| &o.id == held[0]).unwrap()
}

/// Thirty orders at once on one seat; the winner drops it and the other
/// twenty-nine try again at once, through another instance; that wave's
/// winner lets its hold expire (no sweep) and thirty fresh orders try.
/// One winner a wave, and every answer, with its request's instants, is
/// explained by one holder at a time.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_one_seat_stampede_with_a_drop_and_an_expiry_is_linearizable() {
    const CROWD: usize = 30;
    let app = Arc::new(fresh_app().await);
    let ev = event(&app, 1, 6).await;
    let mut first = Vec::new();
    for _ in 0..CROWD {
        first.push(order(&app, &ev).await);
    }
    let mut history = wave(&app, &first).await;
    let dropper = winner(&history, &first).clone();
    let start = wall_us();
    assert_eq!(drop_seat(&app, &dropper, SEAT).await.0, 200);
    history.push(SeatOp::Released {
        window: Window::new(start, wall_us()),
        order: dropper.id.clone(),
    });
    let rest: Vec<TestOrder> = first.into_iter().filter(|o| o.id != dropper.id).collect();
    // Through another instance: this one's crowd gate refuses the seat
    // from memory for a few seconds after seeing it held (the checker
    // allows that), and the wave is to find one winner.
    let other = Arc::new(App {
        memory: app.memory.fresh(),
        ..(*app).clone()
    });
    let second = wave(&other, &rest).await;
    let expiring = winner(&second, &rest).clone();
    history.extend(second);
    let_expire(&expiring).await;
    let mut fresh = Vec::new();
    for _ in 0..CROWD {
        fresh.push(order(&app, &ev).await);
    }
    let third = wave(&app, &fresh).await;
    winner(&third, &fresh);
    history.extend(third);

    let verdict = check_seat(SEAT, &history);
    assert_eq!(
        (verdict.operations, verdict.violations),
        (3 * CROWD, Vec::<String>::new())
    );
}
