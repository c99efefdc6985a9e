//! The sold-out crowd's transport: its requests through the warm
//! instances (get-seat's claim on a simulated clock, the others through
//! their handlers), and its get-seat answers in the on-sale's history.

use std::sync::Arc;

use crowdcheck::history::{wall_us, Window};
use serde_json::Value;
use shared::auth::HoldToken;
use shared::domain::{OrderId, SeatId};
use shared::handlers::get_seat_at;
use shared::App;
use tokio::sync::Semaphore;

use super::onsale_history::{BuyerHistory, OnSaleHistory};
use crate::kit::{claim_answer, reply, BenchOrder};

/// Warm function instances the crowd is spread over.
pub const CROWD_INSTANCES: usize = 100;
/// One crowd member's requests: the function and its request.
pub(crate) struct Ask {
    pub(crate) function: &'static str,
    pub(crate) method: &'static str,
    pub(crate) path: String,
    pub(crate) body: String,
    /// The status and error code a sold-out event answers.
    pub(crate) refusal: (u16, &'static [&'static str]),
}

/// How long the crowd's orders live: longer than the phase runs (the
/// model's own hold is shorter), so every refusal is for a live order.
pub(crate) const CROWD_ORDER_SECONDS: u32 = 3_600;

/// get-seat's answers to the crowd in the on-sale's `history`, each a
/// claim on the seat its path names for its order, answered within its
/// window on the wall clock. The stadium is sold out by then (every seat
/// sold to a buyer or to the seeding, for good), so every refusal is
/// explained whenever it came, from the crowd gate's memory or not: the
/// checker catches a hold granted on a sold seat, or a refusal for a seat
/// nobody sold. A claim holds its seat until its order expires, so a 503
/// may hold it for the order's [`CROWD_ORDER_SECONDS`].
pub(super) fn crowd_claims(
    history: &mut OnSaleHistory,
    orders: &[BenchOrder],
    asks: &[(usize, &Ask)],
    answers: &[(u16, Value, Window)],
) {
    let mut crowd = BuyerHistory::default();
    for ((i, ask), (status, body, window)) in asks.iter().zip(answers) {
        let seat = ask.path.rsplit('/').next().unwrap_or_default();
        let order = order_for(orders, *i);
        let (answer, life) = ((*status, body), (order.expires, CROWD_ORDER_SECONDS));
        crowd.claim_for(seat, *window, &order.id, answer, life);
    }
    history.add(crowd);
}

/// The order the crowd's `i`-th ask is made for.
fn order_for(orders: &[BenchOrder], i: usize) -> &BenchOrder {
    &orders[i % orders.len()]
}

/// One request: its slot in the answers, method, path, body, token.
type Work = (usize, &'static str, String, String, String);

/// `asks` (with their index, which picks the order and the instance)
/// through the instances, a bounded number at once; each instance serves
/// its requests in turn, as a Lambda instance does. Each answer's status,
/// body, and when it was in flight on the wall clock.
pub(super) async fn refuse(
    instances: &[App],
    orders: &[BenchOrder],
    asks: &[(usize, &Ask)],
) -> Result<Vec<(u16, Value, Window)>, String> {
    let mut by_instance: Vec<Vec<Work>> = vec![Vec::new(); instances.len()];
    for (slot, (i, ask)) in asks.iter().enumerate() {
        let order = order_for(orders, *i);
        by_instance[i % instances.len()].push((
            slot,
            ask.method,
            ask.path.replace("{o}", &order.id),
            ask.body.clone(),
            order.token.clone(),
        ));
    }
    let in_flight = Arc::new(Semaphore::new(crate::setup::LOCAL_IN_FLIGHT));
    let mut tasks = tokio::task::JoinSet::new();
    for (instance, work) in instances.iter().zip(by_instance) {
        let (instance, in_flight) = (instance.clone(), in_flight.clone());
        tasks.spawn(async move {
            let mut answers = Vec::new();
            for work in work {
                let _permit = in_flight.acquire().await;
                let (slot, start) = (work.0, wall_us());
                let (status, body) = ask(&instance, work).await;
                answers.push((slot, status, body, Window::new(start, wall_us())));
            }
            answers
        });
    }
    let mut answers = vec![(0u16, Value::Null, Window::new(0, 0)); asks.len()];
    while let Some(done) = tasks.join_next().await {
        for (slot, status, body, window) in done.map_err(|e| e.to_string())? {
            answers[slot] = (status, body, window);
        }
    }
    Ok(answers)
}

/// One request through `instance`: get-seat's claim on its simulated
/// clock, any other through its handler. Its status and body (a claim's
/// as get-seat would answer it: its expiry, or its error code).
async fn ask(instance: &App, (slot, method, path, body, token): Work) -> (u16, Value) {
    let Some((order, token, seat, now)) = claim_of_request(&path, &token, slot) else {
        return reply(instance, method, &path, Some(&token), &body).await;
    };
    claim_answer(&get_seat_at(instance, &order, &token, &seat, now).await)
}

/// A function instance's pace under the crowd: one request every 10 ms
/// (a DynamoDB round trip), as in the one-seat stampede.
pub(super) const PER_INSTANCE_RATE: i64 = 100;

/// A get-seat request (`POST /orders/{o}/seats/{s}`) as get-seat's claim
/// and the instant it arrives on a simulated clock: the `slot`-th of the
/// crowd at [`CROWD_INSTANCES`] × [`PER_INSTANCE_RATE`] a second. Whether
/// an instance's seats are contended depends on its pace, which DynamoDB Local cannot
/// give it in real time; the requests it sends are the same.
fn claim_of_request(
    path: &str,
    token: &str,
    slot: usize,
) -> Option<(OrderId, HoldToken, SeatId, shared::domain::Millis)> {
    let rest = path.strip_prefix("/orders/")?;
    let (order, seat) = rest.split_once("/seats/")?;
    static START: std::sync::OnceLock<shared::domain::Millis> = std::sync::OnceLock::new();
    let t0 = *START.get_or_init(shared::world::now);
    let per_ms = CROWD_INSTANCES as i64 * PER_INSTANCE_RATE / 1_000;
    let order = OrderId::parse(order).ok()?;
    let token = local::apps::dev_hold_token_keys().decode(&order, token)?;
    Some((
        order,
        token,
        SeatId::parse(seat).ok()?,
        shared::domain::Millis(t0.0 + slot as i64 / per_ms.max(1)),
    ))
}
