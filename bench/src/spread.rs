//! The spread: many claims over many seats, through the handler and as the same DynamoDB requests bare.

use crate::{
    create_event, create_orders, reply, unique, BenchOrder, Rng, Sizes, Timing, HOLD_SECONDS,
};
use shared::domain::OrderId;
use shared::domain::SeatId;
use shared::domain::SeatState;
use shared::App;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::Semaphore;

/// The spread workload: `claims` claims by `orders` orders over `seats`
/// seats, each order at most 5 claims, random seats (seeded).
pub(super) fn spread_plan(
    orders: usize,
    claims: usize,
    seats: u32,
    seed: u64,
) -> Vec<(usize, String)> {
    let mut rng = Rng(seed);
    let per_order = claims.div_ceil(orders).min(10);
    let mut plan = Vec::with_capacity(claims);
    for o in 0..orders {
        for _ in 0..per_order {
            if plan.len() < claims {
                plan.push((o, format!("A-1-{}", rng.below(u64::from(seats)) + 1)));
            }
        }
    }
    // Interleave orders: shuffle deterministically.
    for i in (1..plan.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        plan.swap(i, j);
    }
    plan
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum ClaimPath {
    Handler,
    Store,
}

/// One spread run's timing and what the table says afterwards.
#[derive(Debug, Default)]
pub(super) struct Spread {
    pub(super) timing: Timing,
    won: usize,
    double: usize,
    mismatched: usize,
}

impl Spread {
    pub(super) fn correctness(&self) -> (String, bool) {
        let text = format!(
            "{} claims won; {} seats held twice, {} order/seat mismatches",
            self.won, self.double, self.mismatched
        );
        (text, self.double == 0 && self.mismatched == 0)
    }

    fn add(&mut self, other: Spread) {
        self.timing.latencies_ms.extend(other.timing.latencies_ms);
        self.timing.wall += other.timing.wall;
        self.won += other.won;
        self.double += other.double;
        self.mismatched += other.mismatched;
    }
}

/// The spread through the handler and bare, in alternating slices (ABBA
/// order, each slice on its own event): DynamoDB Local keeps speeding up as
/// its JIT warms and slowing down as its tables grow, so running one path
/// wholly before the other would bias the handler ÷ bare ratio by which
/// went first. Returns (handler, bare).
pub(super) async fn spread_handler_and_bare(
    app: &App,
    sizes: Sizes,
) -> Result<(Spread, Spread), String> {
    const SLICES: usize = 4;
    let claims = sizes.spread_claims.div_ceil(SLICES);
    // Each slice: a quarter of the orders making a quarter of the claims.
    let sizes = Sizes {
        spread_orders: sizes.spread_orders.div_ceil(SLICES),
        ..sizes
    };
    let (mut handler, mut bare) = (Spread::default(), Spread::default());
    for slice in 0..SLICES {
        let order = if slice % 2 == 0 {
            [ClaimPath::Handler, ClaimPath::Store]
        } else {
            [ClaimPath::Store, ClaimPath::Handler]
        };
        for path in order {
            let run = spread(app, sizes, path, sizes.in_flight, claims).await?;
            match path {
                ClaimPath::Handler => handler.add(run),
                ClaimPath::Store => bare.add(run),
            }
        }
    }
    Ok((handler, bare))
}

/// Runs the spread through the handler or straight through the store.
pub(super) async fn spread(
    app: &App,
    sizes: Sizes,
    path: ClaimPath,
    in_flight: usize,
    claims: usize,
) -> Result<Spread, String> {
    let event = unique("spread");
    create_event(app, &event, sizes.spread_seats, HOLD_SECONDS).await?;
    let orders = Arc::new(create_orders(app, &event, sizes.spread_orders).await?);
    let plan = spread_plan(sizes.spread_orders, claims, sizes.spread_seats, 42);
    let sem = Arc::new(Semaphore::new(in_flight));
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for (o, seat) in plan {
        let (app, orders, sem) = (app.clone(), orders.clone(), sem.clone());
        tasks.spawn(async move {
            let _permit = sem.acquire_owned().await;
            let order = &orders[o];
            let t = Instant::now();
            let won = match path {
                ClaimPath::Handler => {
                    reply(
                        &app,
                        "POST",
                        &format!("/orders/{}/seats/{seat}", order.id),
                        Some(&order.token),
                        "",
                    )
                    .await
                    .0 == 200
                }
                ClaimPath::Store => {
                    let order_id = OrderId::parse(&order.id).map_err(|e| e.to_string())?;
                    let token = local::apps::dev_hold_token_keys()
                        .decode(&order_id, &order.token)
                        .ok_or("bad token")?;
                    let seat = SeatId::parse(&seat).map_err(|e| e.to_string())?;
                    app.store
                        .claim_seat(&order_id, &token, &seat, 10, shared::world::now())
                        .await
                        .is_ok()
                }
            };
            Ok::<_, String>((t.elapsed().as_secs_f64() * 1000.0, won))
        });
    }
    let mut timing = Timing::default();
    let mut won = 0;
    while let Some(done) = tasks.join_next().await {
        let (ms, w) = done.map_err(|e| e.to_string())??;
        timing.latencies_ms.push(ms);
        won += usize::from(w);
    }
    timing.wall = started.elapsed();
    let (double, mismatched) = audit_event(app, &event, &orders).await?;
    Ok(Spread {
        timing,
        won,
        double,
        mismatched,
    })
}

/// From the table: seats held by two orders (seat side vs order side), and
/// seats whose holder does not list them.
pub(super) async fn audit_event(
    app: &App,
    event: &str,
    orders: &[BenchOrder],
) -> Result<(usize, usize), String> {
    let event_id = shared::domain::EventId::parse(event).map_err(|e| e.to_string())?;
    let seats = app
        .store
        .list_all_seats(&event_id, None)
        .await
        .map_err(|e| e.to_string())?
        .ok_or("no event")?;
    let mut listed_by: HashMap<String, Vec<String>> = HashMap::new();
    for o in orders {
        let stored = app
            .store
            .get_order(&OrderId::parse(&o.id).map_err(|e| e.to_string())?)
            .await
            .map_err(|e| e.to_string())?
            .ok_or("order vanished")?;
        for s in stored.order.seats {
            listed_by
                .entry(s.to_string())
                .or_default()
                .push(o.id.clone());
        }
    }
    let double = listed_by.values().filter(|v| v.len() > 1).count();
    let mut mismatched = 0;
    for seat in seats {
        let holder = match &seat.state {
            SeatState::Held { order, .. } | SeatState::Sold { order } => Some(order.to_string()),
            SeatState::Available => None,
        };
        let listed = listed_by
            .get(seat.spec.seat_id.as_str())
            .cloned()
            .unwrap_or_default();
        match holder {
            Some(h) if listed != [h.clone()] => mismatched += 1,
            None if !listed.is_empty() => mismatched += 1,
            _ => {}
        }
    }
    Ok((double, mismatched))
}
