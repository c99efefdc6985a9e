//! The spread: many claims over many seats, through the handler and as the
//! handler's own decision without HTTP (the same DynamoDB requests).

use super::onsale_history::{BuyerHistory, HistoryVerdict};
use crate::kit::{claim_answer, reply, unique, BenchOrder, Rng, Timing};
use crate::{create_event, create_orders, Sizes, HOLD_SECONDS};
use crowdcheck::history::{wall_us, Window};
use local::metrics::RequestCounter;
use serde_json::Value;
use shared::auth::HoldToken;
use shared::domain::Millis;
use shared::domain::OrderId;
use shared::domain::SeatId;
use shared::domain::SeatState;
use shared::error::Error;
use shared::App;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::Semaphore;

/// The spread workload: `claims` claims by `orders` orders over `seats`
/// seats, each order at most as many claims as an order may hold seats
/// by default, random seats (seeded).
pub(super) fn spread_plan(
    orders: usize,
    claims: usize,
    seats: u32,
    seed: u64,
) -> Vec<(usize, String)> {
    let mut rng = Rng(seed);
    let most = shared::config::DEFAULT_MAX_SEATS_PER_ORDER as usize;
    let per_order = claims.div_ceil(orders).min(most);
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

/// How far the two paths' requests per claim may differ and still count as
/// the same requests: the crowd gate's choices (refuse from memory, read
/// first, or write) follow which claim answered first, so two runs of one
/// plan differ a little.
pub(super) const SAME_REQUESTS_WITHIN: f64 = 0.05;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum ClaimPath {
    /// The route through the router: request parsing, the token check,
    /// the decision and the JSON reply.
    Handler,
    /// The handler's decision alone ([`shared::handlers::get_seat_at`]:
    /// the crowd gate, the buyer check and the claim), no HTTP.
    Bare,
}

/// One spread run's timing and what the table says afterwards.
#[derive(Debug, Default)]
pub(super) struct Spread {
    pub(super) timing: Timing,
    won: usize,
    double: usize,
    mismatched: usize,
    /// Every claim's answer judged by the history checker, each seat a
    /// register claimed under expiry.
    history: HistoryVerdict,
    /// The claims' DynamoDB requests by operation (when counted).
    pub(super) sent: BTreeMap<String, u64>,
}

impl Spread {
    pub(super) fn correctness(&self) -> (String, bool) {
        let text = format!(
            "{} claims won; {} seats held twice, {} order/seat mismatches; history: {}",
            self.won,
            self.double,
            self.mismatched,
            self.history.text()
        );
        let ok = self.double == 0 && self.mismatched == 0 && self.history.ok();
        (text, ok)
    }

    fn add(&mut self, other: Spread) {
        self.timing.latencies_ms.extend(other.timing.latencies_ms);
        self.timing.wall += other.timing.wall;
        self.won += other.won;
        self.double += other.double;
        self.mismatched += other.mismatched;
        self.history = std::mem::take(&mut self.history).and(other.history);
        for (op, n) in other.sent {
            *self.sent.entry(op).or_default() += n;
        }
    }

    /// DynamoDB requests per claim.
    pub(super) fn requests_per_claim(&self) -> f64 {
        self.sent.values().sum::<u64>() as f64 / self.timing.latencies_ms.len().max(1) as f64
    }

    /// The requests per claim by operation, e.g. "1.00 TransactWriteItems + 0.31 GetItem".
    pub(super) fn mix(&self) -> String {
        let claims = self.timing.latencies_ms.len().max(1) as f64;
        self.sent
            .iter()
            .map(|(op, n)| format!("{:.2} {op}", *n as f64 / claims))
            .collect::<Vec<_>>()
            .join(" + ")
    }
}

/// Whether two paths sent the same requests per claim: each operation's
/// per claim within [`SAME_REQUESTS_WITHIN`] of the handler's requests per
/// claim in all.
pub(super) fn same_requests(handler: &Spread, bare: &Spread) -> bool {
    let total = handler.requests_per_claim();
    let per_claim = |s: &Spread, op: &str| {
        s.sent.get(op).copied().unwrap_or(0) as f64 / s.timing.latencies_ms.len().max(1) as f64
    };
    total > 0.0
        && handler.sent.keys().chain(bare.sent.keys()).all(|op| {
            (per_claim(handler, op) - per_claim(bare, op)).abs() <= SAME_REQUESTS_WITHIN * total
        })
}

/// The spread through the handler and bare, in alternating slices (ABBA
/// order, each slice on its own event): DynamoDB Local keeps speeding up as
/// its JIT warms and slowing down as its tables grow, so running one path
/// wholly before the other would bias the handler ÷ bare ratio by which
/// went first. Each run starts with a fresh instance memory, so neither
/// path inherits the other's crowd gate, and `counter` (the app's client's)
/// counts each run's claims' requests. Returns (handler, bare).
pub(super) async fn spread_handler_and_bare(
    app: &App,
    counter: &RequestCounter,
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
            [ClaimPath::Handler, ClaimPath::Bare]
        } else {
            [ClaimPath::Bare, ClaimPath::Handler]
        };
        for path in order {
            let instance = app.new_process();
            let run = spread(
                &instance,
                sizes,
                path,
                sizes.in_flight,
                claims,
                Some(counter),
            )
            .await?;
            match path {
                ClaimPath::Handler => handler.add(run),
                ClaimPath::Bare => bare.add(run),
            }
        }
    }
    Ok((handler, bare))
}

/// Runs the spread through the handler or as its decision alone; with a
/// counter, [`Spread::sent`] holds the claims' requests (not the setup's
/// or the audit's).
pub(super) async fn spread(
    app: &App,
    sizes: Sizes,
    path: ClaimPath,
    in_flight: usize,
    claims: usize,
    counter: Option<&RequestCounter>,
) -> Result<Spread, String> {
    let event = unique("spread");
    create_event(app, &event, sizes.spread_seats, HOLD_SECONDS).await?;
    let orders = Arc::new(create_orders(app, &event, sizes.spread_orders).await?);
    let plan = spread_plan(sizes.spread_orders, claims, sizes.spread_seats, 42);
    let decoded = orders
        .iter()
        .map(BenchOrder::claimant)
        .collect::<Result<Vec<_>, String>>()?;
    let decoded = Arc::new(decoded);
    if let Some(c) = counter {
        c.take();
    }
    let (timing, won, history) =
        run_claims(app, path, orders.clone(), decoded, plan, in_flight).await?;
    let sent = counter.map(RequestCounter::take).unwrap_or_default();
    let (double, mismatched) = audit_event(app, &event, &orders).await?;
    Ok(Spread {
        timing,
        won,
        double,
        mismatched,
        history,
        sent,
    })
}

/// The plan's claims along `path`, `in_flight` at a time: each one's
/// latency, the claims won, and every answer judged by the history
/// checker (each with the instants it was in flight on the wall clock).
async fn run_claims(
    app: &App,
    path: ClaimPath,
    orders: Arc<Vec<BenchOrder>>,
    decoded: Arc<Vec<(OrderId, HoldToken)>>,
    plan: Vec<(usize, String)>,
    in_flight: usize,
) -> Result<(Timing, usize, HistoryVerdict), String> {
    let sem = Arc::new(Semaphore::new(in_flight));
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for (o, seat) in plan {
        let (app, orders, decoded, sem) =
            (app.clone(), orders.clone(), decoded.clone(), sem.clone());
        tasks.spawn(async move {
            let _permit = sem.acquire_owned().await;
            let (t, start) = (Instant::now(), wall_us());
            let answered = claim(&app, path, &orders[o], &decoded[o], &seat).await;
            let (ms, end) = (t.elapsed().as_secs_f64() * 1000.0, wall_us());
            (ms, o, seat, Window::new(start, end), answered)
        });
    }
    let (mut timing, mut claimed) = (Timing::default(), Vec::new());
    while let Some(done) = tasks.join_next().await {
        let (ms, o, seat, window, answered) = done.map_err(|e| e.to_string())?;
        timing.latencies_ms.push(ms);
        claimed.push((o, seat, window, answered));
    }
    timing.wall = started.elapsed();
    // Read and judged once every claim is timed.
    let (mut won, mut answers) = (0, BuyerHistory::default());
    for (o, seat, window, answered) in claimed {
        let (status, body) = answered.reply();
        won += usize::from(status == 200);
        let answer = (status, &body);
        let life = (orders[o].expires, HOLD_SECONDS);
        answers.claim_for(&seat, window, &orders[o].id, answer, life);
    }
    Ok((timing, won, answers.judge_seats()))
}

/// A claim's answer: the handler's reply, or the decision's outcome (read
/// as get-seat would answer it once the claim is timed).
enum Answered {
    Reply(u16, Value),
    Decided(Result<Millis, Error>),
}

impl Answered {
    fn reply(self) -> (u16, Value) {
        match self {
            Answered::Reply(status, body) => (status, body),
            Answered::Decided(result) => claim_answer(&result),
        }
    }
}

/// One claim of `seat` by `order` along `path`. The bare path gets the
/// order's token decoded and the seat parsed beforehand, so the handler
/// alone pays for reading them from the request.
async fn claim(
    app: &App,
    path: ClaimPath,
    order: &BenchOrder,
    decoded: &(OrderId, HoldToken),
    seat: &str,
) -> Answered {
    match path {
        ClaimPath::Handler => {
            let uri = format!("/orders/{}/seats/{seat}", order.id);
            let (status, body) = reply(app, "POST", &uri, Some(&order.token), "").await;
            Answered::Reply(status, body)
        }
        ClaimPath::Bare => {
            let seat = match SeatId::parse(seat) {
                Ok(seat) => seat,
                Err(e) => return Answered::Decided(Err(e)),
            };
            let (id, token) = decoded;
            let now = shared::world::now();
            Answered::Decided(shared::handlers::get_seat_at(app, id, token, &seat, now).await)
        }
    }
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
