//! `make bench`: seatclaim under load against DynamoDB Local, every scenario
//! in one process run so the figures compare side by side. Each scenario
//! prints its correctness count next to its speed.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use aws_sdk_dynamodb::types::AttributeValue;
use aws_sdk_dynamodb::Client;
use lambda_http::Body;
use shared::auth::HoldToken;
use shared::domain::{Millis, OrderId, SeatId, SeatState};
use shared::App;
use tokio::sync::Semaphore;

use crate::metrics::RequestCounter;
use crate::router::{dispatch, request};

/// Sizes of one run; `smoke()` is the CI pass that only proves it works.
#[derive(Debug, Clone, Copy)]
pub struct Sizes {
    pub stampede: usize,
    pub spread_orders: usize,
    pub spread_claims: usize,
    pub spread_seats: u32,
    pub in_flight: usize,
    pub concurrency_claims: usize,
    pub sweep_expired: usize,
    pub sweep_small_table: u32,
    pub sweep_large_table: u32,
    pub warm_up_orders: usize,
    pub cold_start: ColdStartPass,
}

/// How much of scripts/bench_cold_start.py the last scenario runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColdStartPass {
    /// Every function, 20 cold starts each, the Python comparison and the
    /// warm CPU figures; writes docs/BENCH-COLD-START.md and its JSON.
    Full,
    /// Two cold starts of get-seat, writes nothing: proves the harness
    /// (with whatever build the bench itself is, debug under bench-smoke).
    Smoke,
}

impl Sizes {
    pub fn full() -> Self {
        Self {
            stampede: 1_000,
            spread_orders: 2_000,
            spread_claims: 10_000,
            spread_seats: 1_000,
            in_flight: 64,
            concurrency_claims: 2_000,
            sweep_expired: 100,
            sweep_small_table: 1_000,
            sweep_large_table: 100_000,
            warm_up_orders: 60,
            cold_start: ColdStartPass::Full,
        }
    }
    pub fn smoke() -> Self {
        Self {
            stampede: 100,
            spread_orders: 100,
            spread_claims: 400,
            spread_seats: 60,
            in_flight: 16,
            concurrency_claims: 100,
            sweep_expired: 10,
            sweep_small_table: 100,
            sweep_large_table: 1_000,
            warm_up_orders: 10,
            cold_start: ColdStartPass::Smoke,
        }
    }
}

/// Latencies of one scenario and its wall time.
#[derive(Debug, Clone, Default)]
pub struct Timing {
    pub latencies_ms: Vec<f64>,
    pub wall: Duration,
}

impl Timing {
    fn percentile(&self, p: f64) -> f64 {
        if self.latencies_ms.is_empty() {
            return 0.0;
        }
        let mut v = self.latencies_ms.clone();
        v.sort_by(f64::total_cmp);
        let idx = ((p / 100.0) * (v.len() - 1) as f64).round() as usize;
        v[idx]
    }
    pub fn p50(&self) -> f64 {
        self.percentile(50.0)
    }
    pub fn p99(&self) -> f64 {
        self.percentile(99.0)
    }
    pub fn max(&self) -> f64 {
        self.percentile(100.0)
    }
    pub fn per_second(&self) -> f64 {
        self.latencies_ms.len() as f64 / self.wall.as_secs_f64().max(1e-9)
    }
}

/// One printed row: what ran, how fast, and what it proved.
#[derive(Debug, Clone)]
pub struct Row {
    pub scenario: String,
    pub timing: Timing,
    pub correctness: String,
    pub ok: bool,
}

/// Everything one run measured.
#[derive(Debug, Default)]
pub struct Report {
    pub rows: Vec<Row>,
    pub round_trips: Vec<(String, BTreeMap<String, u64>, String)>,
    pub sweep: Vec<(String, Duration, u64, u64)>,
    pub concurrency: Vec<(usize, f64, f64)>,
    pub stampede_latencies: Vec<f64>,
    pub handler_over_bare: f64,
    /// Requests sent to warm DynamoDB Local up, and how long they took.
    pub warm_up: (usize, Duration),
    pub cold_start: ColdStart,
}

/// The cold-start scenario's outcome.
#[derive(Debug, Default)]
pub enum ColdStart {
    #[default]
    NotRun,
    /// Not run, and why (bench-smoke without the Python tools).
    Skipped(String),
    /// The script's tables (markdown) and whether every invocation succeeded.
    Measured { markdown: String, ok: bool },
}

impl Report {
    pub fn all_ok(&self) -> bool {
        self.rows.iter().all(|r| r.ok) && !matches!(self.cold_start, ColdStart::Measured { ok: false, .. })
    }
}

/// A tiny deterministic PRNG (xorshift64*), so runs are reproducible.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

struct BenchOrder {
    id: String,
    token: String,
}

async fn reply(app: &App, method: &str, uri: &str, auth: Option<&str>, body: &str) -> (u16, serde_json::Value) {
    let headers: Vec<(&str, String)> = auth.map(|t| vec![("authorization", format!("Bearer {t}"))]).unwrap_or_default();
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let body = if body.is_empty() { Body::Empty } else { Body::Text(body.to_owned()) };
    let resp = dispatch(app, request(method, uri, &headers, body)).await;
    let status = resp.status().as_u16();
    let json = serde_json::from_slice(resp.body().as_ref()).unwrap_or(serde_json::Value::Null);
    (status, json)
}

async fn create_event(app: &App, id: &str, seats: u32, hold_seconds: u32) -> Result<(), String> {
    let body = serde_json::json!({
        "name": "Benchmark",
        "holdSeconds": hold_seconds,
        "sections": [{"sectionId": "A", "rows": [{"row": "1", "count": seats}]}],
    });
    match reply(app, "PUT", &format!("/events/{id}"), None, &body.to_string()).await {
        (201, _) => Ok(()),
        (s, b) => Err(format!("create-event {id}: {s} {b}")),
    }
}

async fn create_orders(app: &App, event: &str, n: usize) -> Result<Vec<BenchOrder>, String> {
    let sem = Arc::new(Semaphore::new(32));
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..n {
        let (app, event, sem) = (app.clone(), event.to_owned(), sem.clone());
        tasks.spawn(async move {
            let _permit = sem.acquire_owned().await;
            reply(&app, "POST", &format!("/events/{event}/orders"), None, "{}").await
        });
    }
    let mut orders = Vec::with_capacity(n);
    while let Some(done) = tasks.join_next().await {
        let (status, body) = done.map_err(|e| e.to_string())?;
        if status != 201 {
            return Err(format!("create-order: {status} {body}"));
        }
        orders.push(BenchOrder {
            id: body["orderId"].as_str().unwrap_or_default().to_owned(),
            token: body["holdToken"].as_str().unwrap_or_default().to_owned(),
        });
    }
    Ok(orders)
}

fn unique(prefix: &str) -> String {
    format!("{prefix}-{}", uuid::Uuid::new_v4().simple())
}

/// 1. Stampede through the handler: all orders claim seat A-1-1 at once.
async fn stampede_handler(app: &App, n: usize) -> Result<Row, String> {
    let event = unique("stampede");
    create_event(app, &event, 1, 600).await?;
    let orders = create_orders(app, &event, n).await?;
    let barrier = Arc::new(tokio::sync::Barrier::new(n));
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for o in orders {
        let (app, barrier) = (app.clone(), barrier.clone());
        tasks.spawn(async move {
            barrier.wait().await;
            let t = Instant::now();
            let (status, body) = reply(&app, "POST", &format!("/orders/{}/seats/A-1-1", o.id), Some(&o.token), "").await;
            (t.elapsed().as_secs_f64() * 1000.0, status, body["error"].as_str().unwrap_or("").to_owned())
        });
    }
    let mut timing = Timing::default();
    let mut outcomes: BTreeMap<String, usize> = BTreeMap::new();
    while let Some(done) = tasks.join_next().await {
        let (ms, status, code) = done.map_err(|e| e.to_string())?;
        timing.latencies_ms.push(ms);
        *outcomes.entry(if status == 200 { "won".into() } else { format!("{status} {code}") }).or_default() += 1;
    }
    timing.wall = started.elapsed();
    let winners = outcomes.get("won").copied().unwrap_or(0);
    let held = outcomes.get("409 seat-held").copied().unwrap_or(0);
    Ok(Row {
        scenario: format!("stampede: {n} orders, 1 seat (handler)"),
        ok: winners == 1 && held == n - 1,
        correctness: format!("{winners} winner, {held} seat-held"),
        timing,
    })
}

/// 1b. The same stampede through the dev server's HTTP path.
async fn stampede_http(app: &App, n: usize) -> Result<Row, String> {
    use http_body_util::{BodyExt, Empty};
    use hyper_util::client::legacy::Client as HttpClient;
    use hyper_util::rt::TokioExecutor;

    let event = unique("stampede-http");
    create_event(app, &event, 1, 600).await?;
    let orders = create_orders(app, &event, n).await?;
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await.map_err(|e| e.to_string())?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(crate::server::run(listener, app.clone(), async {
        let _ = stop_rx.await;
    }));
    let client: HttpClient<_, Empty<bytes::Bytes>> = HttpClient::builder(TokioExecutor::new()).build_http();
    let barrier = Arc::new(tokio::sync::Barrier::new(n));
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for o in orders {
        let (client, barrier) = (client.clone(), barrier.clone());
        tasks.spawn(async move {
            let req = hyper::Request::post(format!("http://127.0.0.1:{port}/orders/{}/seats/A-1-1", o.id))
                .header("authorization", format!("Bearer {}", o.token))
                .body(Empty::new())
                .map_err(|e| e.to_string())?;
            barrier.wait().await;
            let t = Instant::now();
            let resp = client.request(req).await.map_err(|e| e.to_string())?;
            let status = resp.status().as_u16();
            let body = resp.into_body().collect().await.map_err(|e| e.to_string())?.to_bytes();
            let code = serde_json::from_slice::<serde_json::Value>(&body)
                .ok()
                .and_then(|v| v["error"].as_str().map(str::to_owned))
                .unwrap_or_default();
            Ok::<_, String>((t.elapsed().as_secs_f64() * 1000.0, status, code))
        });
    }
    let mut timing = Timing::default();
    let mut outcomes: BTreeMap<String, usize> = BTreeMap::new();
    while let Some(done) = tasks.join_next().await {
        let (ms, status, code) = done.map_err(|e| e.to_string())??;
        timing.latencies_ms.push(ms);
        *outcomes.entry(if status == 200 { "won".into() } else { format!("{status} {code}") }).or_default() += 1;
    }
    timing.wall = started.elapsed();
    let _ = stop_tx.send(());
    let _ = server.await;
    let winners = outcomes.get("won").copied().unwrap_or(0);
    let held = outcomes.get("409 seat-held").copied().unwrap_or(0);
    Ok(Row {
        scenario: format!("stampede: {n} orders, 1 seat (HTTP, dev server)"),
        ok: winners == 1 && held == n - 1,
        correctness: format!("{winners} winner, {held} seat-held; {outcomes:?}"),
        timing,
    })
}

/// The spread workload: `claims` claims by `orders` orders over `seats`
/// seats, each order at most 5 claims, random seats (seeded).
fn spread_plan(orders: usize, claims: usize, seats: u32, seed: u64) -> Vec<(usize, String)> {
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
enum ClaimPath {
    Handler,
    Store,
}

/// One spread run's timing and what the table says afterwards.
#[derive(Debug, Default)]
struct Spread {
    timing: Timing,
    won: usize,
    double: usize,
    mismatched: usize,
}

impl Spread {
    fn correctness(&self) -> (String, bool) {
        let text = format!("{} claims won; {} seats held twice, {} order/seat mismatches", self.won, self.double, self.mismatched);
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
async fn spread_handler_and_bare(app: &App, sizes: Sizes) -> Result<(Spread, Spread), String> {
    const SLICES: usize = 4;
    let claims = sizes.spread_claims.div_ceil(SLICES);
    // Each slice: a quarter of the orders making a quarter of the claims.
    let sizes = Sizes { spread_orders: sizes.spread_orders.div_ceil(SLICES), ..sizes };
    let (mut handler, mut bare) = (Spread::default(), Spread::default());
    for slice in 0..SLICES {
        let order = if slice % 2 == 0 { [ClaimPath::Handler, ClaimPath::Store] } else { [ClaimPath::Store, ClaimPath::Handler] };
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
async fn spread(app: &App, sizes: Sizes, path: ClaimPath, in_flight: usize, claims: usize) -> Result<Spread, String> {
    let event = unique("spread");
    create_event(app, &event, sizes.spread_seats, 600).await?;
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
                    reply(&app, "POST", &format!("/orders/{}/seats/{seat}", order.id), Some(&order.token), "").await.0 == 200
                }
                ClaimPath::Store => {
                    let token = HoldToken::parse(&order.token).ok_or("bad token")?;
                    let order_id = OrderId::parse(&order.id).map_err(|e| e.to_string())?;
                    let seat = SeatId::parse(&seat).map_err(|e| e.to_string())?;
                    app.store.claim_seat(&order_id, &token, &seat, 10, Millis::now()).await.is_ok()
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
    Ok(Spread { timing, won, double, mismatched })
}

/// From the table: seats held by two orders (seat side vs order side), and
/// seats whose holder does not list them.
async fn audit_event(app: &App, event: &str, orders: &[BenchOrder]) -> Result<(usize, usize), String> {
    let event_id = shared::domain::EventId::parse(event).map_err(|e| e.to_string())?;
    let seats = app.store.list_seats(&event_id, None).await.map_err(|e| e.to_string())?.ok_or("no event")?;
    let mut listed_by: HashMap<String, Vec<String>> = HashMap::new();
    for o in orders {
        let stored = app
            .store
            .get_order(&OrderId::parse(&o.id).map_err(|e| e.to_string())?)
            .await
            .map_err(|e| e.to_string())?
            .ok_or("order vanished")?;
        for s in stored.order.seats {
            listed_by.entry(s.to_string()).or_default().push(o.id.clone());
        }
    }
    let double = listed_by.values().filter(|v| v.len() > 1).count();
    let mut mismatched = 0;
    for seat in seats {
        let holder = match &seat.state {
            SeatState::Held { order, .. } | SeatState::Sold { order } => Some(order.to_string()),
            SeatState::Available => None,
        };
        let listed = listed_by.get(seat.spec.seat_id.as_str()).cloned().unwrap_or_default();
        match holder {
            Some(h) if listed != [h.clone()] => mismatched += 1,
            None if !listed.is_empty() => mismatched += 1,
            _ => {}
        }
    }
    Ok((double, mismatched))
}

fn table_name(app: &App) -> String {
    app.store.table_name().to_owned()
}

/// The seat item's key, as the store writes it (ids the bench made itself).
fn seat_key(event: &str, seat: &str) -> HashMap<String, AttributeValue> {
    match (shared::domain::EventId::parse(event), shared::domain::SeatId::parse(seat)) {
        (Ok(event), Ok(seat)) => shared::store::seat_item_key(&event, &seat),
        _ => HashMap::new(),
    }
}

/// How a raw or naive claim is issued.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum RawClaim {
    /// One conditional UpdateItem on the seat: the store's ceiling.
    ConditionalUpdate,
    /// GetItem the seat, then an unconditional write if it looked free.
    ReadThenWrite,
    /// Look for another order holding the seat (a claim marker), then
    /// attach the seat to this order: "findFirst, then update".
    CheckThenAttach,
}

/// Claims straight on the client. Returns per-seat "winners" (orders that
/// were told they got the seat).
async fn raw_claims(
    client: &Client,
    table: &str,
    event: &str,
    plan: Vec<(usize, String)>,
    in_flight: usize,
    how: RawClaim,
) -> Result<(Timing, HashMap<String, HashSet<usize>>), String> {
    let sem = Arc::new(Semaphore::new(in_flight));
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for (o, seat) in plan {
        let (client, table, event, sem) = (client.clone(), table.to_owned(), event.to_owned(), sem.clone());
        tasks.spawn(async move {
            let _permit = sem.acquire_owned().await;
            let t = Instant::now();
            let order = format!("naive-order-{o}");
            let now = Millis::now().0;
            let won = match how {
                RawClaim::ConditionalUpdate => client
                    .update_item()
                    .table_name(&table)
                    .set_key(Some(seat_key(&event, &seat)))
                    .update_expression("SET #status = :held, holderOrderId = :o, holdExpiresAt = :exp")
                    .condition_expression("attribute_exists(PK) AND (attribute_not_exists(holderOrderId) OR holdExpiresAt < :now)")
                    .expression_attribute_names("#status", "status")
                    .expression_attribute_values(":held", AttributeValue::S("HELD".into()))
                    .expression_attribute_values(":o", AttributeValue::S(order.clone()))
                    .expression_attribute_values(":exp", AttributeValue::N((now + 600_000).to_string()))
                    .expression_attribute_values(":now", AttributeValue::N(now.to_string()))
                    .send()
                    .await
                    .is_ok(),
                RawClaim::ReadThenWrite => {
                    let current = client
                        .get_item()
                        .table_name(&table)
                        .set_key(Some(seat_key(&event, &seat)))
                        .consistent_read(true)
                        .send()
                        .await
                        .map_err(|e| e.to_string())?;
                    let free = current.item.as_ref().is_some_and(|i| !i.contains_key("holderOrderId"));
                    if free {
                        client
                            .update_item()
                            .table_name(&table)
                            .set_key(Some(seat_key(&event, &seat)))
                            .update_expression("SET #status = :held, holderOrderId = :o")
                            .expression_attribute_names("#status", "status")
                            .expression_attribute_values(":held", AttributeValue::S("HELD".into()))
                            .expression_attribute_values(":o", AttributeValue::S(order.clone()))
                            .send()
                            .await
                            .map_err(|e| e.to_string())?;
                    }
                    free
                }
                RawClaim::CheckThenAttach => {
                    let marker = HashMap::from([
                        ("PK".to_owned(), AttributeValue::S(format!("NAIVE#{event}"))),
                        ("SK".to_owned(), AttributeValue::S(format!("CLAIM#{seat}"))),
                    ]);
                    let existing = client
                        .get_item()
                        .table_name(&table)
                        .set_key(Some(marker.clone()))
                        .consistent_read(true)
                        .send()
                        .await
                        .map_err(|e| e.to_string())?;
                    let free = existing.item.is_none();
                    if free {
                        let mut item = marker;
                        item.insert("orderId".into(), AttributeValue::S(order.clone()));
                        client.put_item().table_name(&table).set_item(Some(item)).send().await.map_err(|e| e.to_string())?;
                    }
                    free
                }
            };
            Ok::<_, String>((t.elapsed().as_secs_f64() * 1000.0, o, seat, won))
        });
    }
    let mut timing = Timing::default();
    let mut winners: HashMap<String, HashSet<usize>> = HashMap::new();
    while let Some(done) = tasks.join_next().await {
        let (ms, o, seat, won) = done.map_err(|e| e.to_string())??;
        timing.latencies_ms.push(ms);
        if won {
            winners.entry(seat).or_default().insert(o);
        }
    }
    timing.wall = started.elapsed();
    Ok((timing, winners))
}

fn double_held(winners: &HashMap<String, HashSet<usize>>) -> usize {
    winners.values().filter(|w| w.len() > 1).count()
}

/// 5. Round trips per operation.
async fn round_trips(app: &App, counter: &RequestCounter) -> Result<Vec<(String, BTreeMap<String, u64>, String)>, String> {
    let event = unique("trips");
    create_event(app, &event, 20, 600).await?;
    counter.take();
    let mut rows = Vec::new();
    let mut record = |name: &str, limit: &str, counts: BTreeMap<String, u64>| rows.push((name.to_owned(), counts, limit.to_owned()));
    let (_, order) = reply(app, "POST", &format!("/events/{event}/orders"), None, "{}").await;
    record("create-order", "2 (event read + put)", counter.take());
    let (id, token) = (order["orderId"].as_str().unwrap_or_default().to_owned(), order["holdToken"].as_str().unwrap_or_default().to_owned());
    reply(app, "POST", &format!("/orders/{id}/seats/A-1-1"), Some(&token), "").await;
    record("get-seat", "1", counter.take());
    reply(app, "DELETE", &format!("/orders/{id}/seats/A-1-1"), Some(&token), "").await;
    record("drop-seat", "1", counter.take());
    reply(app, "GET", &format!("/orders/{id}"), Some(&token), "").await;
    record("get-order", "1", counter.take());
    reply(app, "GET", &format!("/events/{event}/seats"), None, "").await;
    record("list-seats (20 seats)", "event read + 1 query per page", counter.take());
    for seats in [1u32, 10] {
        let (_, o) = reply(app, "POST", &format!("/events/{event}/orders"), None, "{}").await;
        let (oid, tok) = (o["orderId"].as_str().unwrap_or_default().to_owned(), o["holdToken"].as_str().unwrap_or_default().to_owned());
        let first = if seats == 1 { 2 } else { 3 };
        for n in first..first + seats {
            reply(app, "POST", &format!("/orders/{oid}/seats/A-1-{n}"), Some(&tok), "").await;
        }
        counter.take();
        let paid: Vec<String> = (first..first + seats).map(|n| format!("A-1-{n}")).collect();
        let body = serde_json::json!({"orderId": oid, "paymentId": format!("pi_bench_{seats}"), "seats": paid}).to_string();
        let secrets = app.config.confirm_secrets.as_ref().ok_or("no secret")?;
        let headers = crate::testing::webhook_headers(secrets, &body);
        let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let resp = dispatch(app, request("POST", &format!("/orders/{oid}/confirm"), &headers, Body::Text(body))).await;
        if resp.status() != 200 {
            return Err(format!("confirm in round-trip count: {}", resp.status()));
        }
        record(&format!("confirm ({seats} seat{})", if seats == 1 { "" } else { "s" }), "1 (one transaction, no read)", counter.take());
    }
    Ok(rows)
}

/// 6. Sweep time with `expired` expired orders among `others` other items.
async fn sweep_scaling(app: &App, expired: usize, others: u32, counter: &RequestCounter) -> Result<(Duration, u64, u64), String> {
    // The other items: seats of big events (20,000 per event at most).
    let mut left = others;
    while left > 0 {
        let n = left.min(shared::domain::MAX_EVENT_SEATS);
        create_event(app, &unique("filler"), n, 600).await?;
        left -= n;
    }
    let event = unique("sweep");
    create_event(app, &event, expired as u32, 1).await?;
    let orders = create_orders(app, &event, expired).await?;
    for (i, o) in orders.iter().enumerate() {
        let (status, body) = reply(app, "POST", &format!("/orders/{}/seats/A-1-{}", o.id, i + 1), Some(&o.token), "").await;
        if status != 200 {
            return Err(format!("sweep setup claim: {status} {body}"));
        }
    }
    // Let the 1-second holds expire: the only sleep, and it is the point.
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    counter.take();
    let started = Instant::now();
    let summary = shared::sweep::release_expired(&app.store, Millis::now(), None).await;
    let took = started.elapsed();
    let queries = counter.take().get("Query").copied().unwrap_or(0);
    if summary.expired_orders != expired as u64 || summary.released_seats != expired as u64 {
        return Err(format!("sweep released the wrong amount: {summary:?}"));
    }
    Ok((took, summary.expired_orders, queries))
}

/// Runs every scenario on fresh tables of one DynamoDB Local.
/// Throwaway traffic on a scratch table before anything is measured:
/// DynamoDB Local is a JVM, and its first few hundred requests (class
/// loading, JIT) are several times slower than the rest, which would land
/// on the first scenario, the handler stampede. Every operation the
/// scenarios use: create-event, create-order, claims (TransactWriteItems),
/// drops, get-order, list-seats. Returns the number of requests sent.
async fn warm_up(app: &App, orders: usize) -> Result<usize, String> {
    const CLAIMS_PER_ORDER: usize = 3;
    let event = unique("warm-up");
    let seats = (orders * CLAIMS_PER_ORDER) as u32;
    create_event(app, &event, seats, 600).await?;
    let created = create_orders(app, &event, orders).await?;
    let sem = Arc::new(Semaphore::new(16));
    let mut tasks = tokio::task::JoinSet::new();
    for (i, order) in created.into_iter().enumerate() {
        let (app, event, sem) = (app.clone(), event.clone(), sem.clone());
        tasks.spawn(async move {
            let _permit = sem.acquire_owned().await;
            let auth = Some(order.token.as_str());
            for k in 0..CLAIMS_PER_ORDER {
                let seat = format!("A-1-{}", i * CLAIMS_PER_ORDER + k + 1);
                reply(&app, "POST", &format!("/orders/{}/seats/{seat}", order.id), auth, "").await;
            }
            let seat = format!("A-1-{}", i * CLAIMS_PER_ORDER + 1);
            reply(&app, "DELETE", &format!("/orders/{}/seats/{seat}", order.id), auth, "").await;
            reply(&app, "GET", &format!("/orders/{}", order.id), auth, "").await;
            reply(&app, "GET", &format!("/events/{event}/seats?section=A"), None, "").await;
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.map_err(|e| e.to_string())?;
    }
    // Statuses don't matter here; only the traffic does.
    Ok(1 + orders * (1 + CLAIMS_PER_ORDER + 3))
}

/// The last scenario: scripts/bench_cold_start.py, which runs every
/// function's binary under the Lambda Runtime Interface Emulator. It sets
/// up through a dev server this process serves on a fresh table of the
/// same (warm) DynamoDB Local, and measures the function binaries next to
/// this benchmark's own executable (so `--release` measures release).
async fn cold_start(app: App, endpoint: &str, pass: ColdStartPass) -> Result<ColdStart, String> {
    let root = crate::repo_root();
    let python = root.join(".tools/venv/bin/python");
    if !python.exists() {
        let why = format!("{} is missing (`make python-tools` installs it with the SAM CLI, which ships the emulator)", python.display());
        return match pass {
            ColdStartPass::Smoke => Ok(ColdStart::Skipped(why)),
            ColdStartPass::Full => Err(format!("cold start: {why}")),
        };
    }
    let exe = std::env::current_exe().map_err(|e| format!("cold start: this executable's path: {e}"))?;
    let bin_dir = exe.parent().ok_or("cold start: this executable has no folder")?.to_owned();
    let fragment = std::env::temp_dir().join(format!("{}.md", unique("seatclaim-cold-start")));

    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await.map_err(|e| e.to_string())?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let table = app.config.table_name.clone();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(crate::server::run(listener, app, async {
        let _ = stop_rx.await;
    }));
    let mut command = tokio::process::Command::new(&python);
    command
        .current_dir(&root)
        .arg("scripts/bench_cold_start.py")
        .arg("--server")
        .arg(format!("http://127.0.0.1:{port}"))
        .args(["--ddb-endpoint", endpoint, "--table", &table])
        .arg("--bin-dir")
        .arg(&bin_dir)
        .arg("--fragment")
        .arg(&fragment);
    if pass == ColdStartPass::Smoke {
        command.args(["--smoke", "--only", "get-seat", "--runs", "2", "--warm", "0"]);
    }
    // The script's progress goes to stderr as it runs; its exit status says
    // whether every invocation answered (a missed target is in the tables).
    let status = command.status().await.map_err(|e| format!("cold start: {}: {e}", python.display()));
    let _ = stop_tx.send(());
    let _ = server.await;
    let status = status?;
    let markdown = std::fs::read_to_string(&fragment);
    let _ = std::fs::remove_file(&fragment);
    match markdown {
        Ok(markdown) => Ok(ColdStart::Measured { markdown, ok: status.success() }),
        Err(e) => Err(format!("cold start: scripts/bench_cold_start.py ({status}) wrote no tables: {e}")),
    }
}

pub async fn run(endpoint: &str, sizes: Sizes, mut progress: impl FnMut(&str)) -> Result<Report, String> {
    let mut report = Report::default();
    let counter = RequestCounter::default();
    let new_app = |counter: Option<RequestCounter>| async move {
        let client = crate::local_client_counting(endpoint, counter);
        let table = unique("bench");
        crate::table::TableSpec::from_repo()
            .map_err(|e| e.to_string())?
            .create(&client, &table)
            .await
            .map_err(|e| e.to_string())?;
        Ok::<_, String>(App {
            store: shared::Store::new(client, &table),
            config: shared::Config {
                table_name: table,
                hold_seconds: 420,
                max_seats_per_order: 10,
                expiry_guard_ms: shared::config::DEFAULT_EXPIRY_GUARD_MS,
                confirm_secrets: Some(crate::testing::dev_confirm_secrets()),
            },
        })
    };
    progress("warming DynamoDB Local up (scratch table, not measured)");
    let scratch = new_app(None).await?;
    let started = Instant::now();
    let sent = warm_up(&scratch, sizes.warm_up_orders).await?;
    report.warm_up = (sent, started.elapsed());
    let _ = scratch.store.client().delete_table().table_name(table_name(&scratch)).send().await;

    let app = new_app(None).await?;

    progress("stampede (handler)");
    let row = stampede_handler(&app, sizes.stampede).await?;
    report.stampede_latencies = row.timing.latencies_ms.clone();
    report.rows.push(row);
    progress("stampede (HTTP)");
    report.rows.push(stampede_http(&app, sizes.stampede).await?);

    progress("spread (handler and bare store requests, alternating)");
    let (handler, bare) = spread_handler_and_bare(&app, sizes).await?;
    report.handler_over_bare = handler.timing.per_second() / bare.timing.per_second().max(1e-9);
    let (correctness, ok) = handler.correctness();
    report.rows.push(Row {
        scenario: format!("spread: {} orders, {} claims, {} seats, {} in flight (handler)", sizes.spread_orders, sizes.spread_claims, sizes.spread_seats, sizes.in_flight),
        timing: handler.timing,
        correctness,
        ok,
    });
    let (correctness, ok) = bare.correctness();
    report.rows.push(Row {
        scenario: "spread, the same DynamoDB requests bare (store, no handler)".into(),
        timing: bare.timing,
        correctness: format!("{correctness}; handler/bare throughput {:.2}", report.handler_over_bare),
        ok,
    });

    let table = table_name(&app);
    let client = app.store.client().clone();
    for (how, label) in [
        (RawClaim::ConditionalUpdate, "raw: one conditional UpdateItem per claim (store ceiling)"),
        (RawClaim::ReadThenWrite, "naive: GetItem then unconditional write"),
        (RawClaim::CheckThenAttach, "naive: check other orders, then attach"),
    ] {
        progress(label);
        let event = unique("raw");
        create_event(&app, &event, 1, 600).await?;
        let stampede_plan: Vec<_> = (0..sizes.stampede).map(|o| (o, "A-1-1".to_owned())).collect();
        let (st, st_winners) = raw_claims(&client, &table, &event, stampede_plan, sizes.stampede, how).await?;
        let st_won: usize = st_winners.values().map(HashSet::len).sum();
        let event = unique("raw");
        create_event(&app, &event, sizes.spread_seats, 600).await?;
        let plan = spread_plan(sizes.spread_orders, sizes.spread_claims, sizes.spread_seats, 42);
        let (sp, sp_winners) = raw_claims(&client, &table, &event, plan, sizes.in_flight, how).await?;
        let naive = how != RawClaim::ConditionalUpdate;
        let doubles = double_held(&sp_winners);
        // The naive patterns must show oversells (proof that the harness can
        // see one); where they show up, stampede or spread, is up to timing.
        let ok = if naive { st_won > 1 || doubles > 0 } else { st_won == 1 && doubles == 0 };
        report.rows.push(Row {
            scenario: format!("{label} — stampede"),
            timing: st,
            correctness: format!("{st_won} 'winners' of 1 seat{}", if naive { " (must be > 1: the harness sees oversells)" } else { "" }),
            ok,
        });
        report.rows.push(Row {
            scenario: format!("{label} — spread"),
            timing: sp,
            correctness: format!("{doubles} seats held twice"),
            ok,
        });
    }

    progress("throughput vs concurrency");
    for in_flight in [1usize, 8, 32, 64, 128] {
        let run = spread(&app, sizes, ClaimPath::Handler, in_flight, sizes.concurrency_claims).await?;
        if !run.correctness().1 {
            return Err(format!("double hold at concurrency {in_flight}"));
        }
        report.concurrency.push((in_flight, run.timing.per_second(), run.timing.p99()));
    }

    progress("round trips");
    let counting = new_app(Some(counter.clone())).await?;
    report.round_trips = round_trips(&counting, &counter).await?;

    progress("sweep scaling");
    for others in [sizes.sweep_small_table, sizes.sweep_large_table] {
        let app = new_app(Some(counter.clone())).await?;
        let (took, expired, queries) = sweep_scaling(&app, sizes.sweep_expired, others, &counter).await?;
        report.sweep.push((format!("{} expired among {others} other items", sizes.sweep_expired), took, expired, queries));
    }

    progress("cold start under the Lambda Runtime Interface Emulator (scripts/bench_cold_start.py)");
    report.cold_start = cold_start(new_app(None).await?, endpoint, sizes.cold_start).await?;
    Ok(report)
}
