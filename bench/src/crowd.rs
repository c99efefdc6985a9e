//! Under a crowd (docs/API.md): the contract's one-seat stampede, 10,000
//! get-seat requests for one seat within one second, spread over N
//! function instances (each an [`App`] of its own, with its own memory of
//! the seats it keeps refusing), every DynamoDB request through the
//! capacity meter, which counts the units asked of the seat's key and
//! served.
//!
//! DynamoDB Local cannot take 10,000 transactions in a second, so the
//! second is simulated: request `i` arrives at `t0 + i / requests` s and
//! goes to instance `i mod N`, which (as a Lambda instance does) serves
//! its requests one at a time, in arrival order, at their simulated
//! instants. The stampede's second starts half-way through one of the
//! capacity meter's (which counts whole seconds), so its first half, where
//! every instance's first claims fall, meets a partition's full limit in
//! one of them. What is measured is what the instances send to DynamoDB:
//! the units offered to the seat's key and those served.

use super::onsale_history::{BuyerHistory, HistoryVerdict};
use crate::capacity::{
    self, CapacityMeter, CapacityRecorder, PARTITION_READ_UNITS, PARTITION_WRITE_UNITS,
};
use crate::kit::{claim_answer, unique};
use crate::setup::{create_buyer_orders, create_event_from};
use crate::{create_event, create_orders, Bound, Goal, HOLD_SECONDS};
use aws_sdk_dynamodb::types::AttributeValue;
use crowdcheck::history::{wall_us, Window};
use shared::auth::HoldToken;
use shared::domain::OrderId;
use shared::domain::SeatId;
use shared::domain::{EventId, Millis};
use shared::error::Error;
use shared::handlers::get_seat_at;
use shared::App;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use tokio::sync::Semaphore;

/// The scenario's size: `requests` within one second, for each of
/// `instances` (one run each): the first two must be answered without a
/// 503, the third shows where the design's limit is.
#[derive(Debug, Clone, Copy)]
pub struct OneSeatStampede {
    pub requests: usize,
    pub instances: [usize; 3],
}

/// One run's outcome.
#[derive(Debug, Clone, Default)]
pub struct StampedeRun {
    pub instances: usize,
    pub requests: usize,
    pub winners: usize,
    pub seat_held: usize,
    pub unavailable: usize,
    /// Any other answer, by name (must be none).
    pub other: BTreeMap<String, usize>,
    /// Claims that reached DynamoDB (the rest were refused from memory).
    pub writes: usize,
    /// Attempts DynamoDB Local failed (no answer, or a 5xx): a 503 may
    /// come from the capacity meter's throttling only.
    pub emulator_errors: usize,
    /// Write and read units the capacity meter saw asked of the seat's
    /// key (throttled attempts too, at their estimate) and served.
    pub offered: (f64, f64),
    pub served: (f64, f64),
    /// The share of a partition the seat's key was served in the busiest
    /// second of the capacity meter's (write units over 1,000 plus read
    /// units over 3,000, as DynamoDB combines them).
    pub busiest_second: f64,
    /// The share of a partition asked of the seat's key (throttled or
    /// served) in its busiest second: under 1, nothing had to be throttled.
    pub busiest_second_offered: f64,
    /// The event's buyer limit (each claimant a buyer of its own), if any.
    pub buyer_limit: Option<u32>,
    /// Whether every answer must come without a 503 and the seat's key
    /// stay under a partition's limit (the contract's 100 instances, and
    /// issue 44's 1,000).
    pub must_fit: bool,
    /// Every answer judged by the history checker as the seat's history.
    pub history: HistoryVerdict,
}

impl StampedeRun {
    /// The contract's counts: one winner, every other request `seat-held`
    /// or, where no target holds it to 0, `503` where the meter throttled
    /// the seat's key (and only there: no attempt failed in the emulator).
    pub fn ok(&self) -> bool {
        let throttled_ok = !self.must_fit || self.unavailable == 0;
        self.winners == 1
            && self.seat_held + self.unavailable == self.requests - 1
            && throttled_ok
            && self.emulator_errors == 0
            && self.other.is_empty()
            && self.history.ok()
    }

    /// The share of a partition-second the seat's key was served over the
    /// whole run (which spans two of the meter's seconds).
    pub fn served_share(&self) -> f64 {
        share(self.served.0, self.served.1)
    }

    /// The share of a partition-second asked of the seat's key over the
    /// whole run, throttled or served.
    pub fn offered_share(&self) -> f64 {
        share(self.offered.0, self.offered.1)
    }

    /// Where every answer must come without a 503: 0 × 503, and the
    /// seat's key under a partition's limit. Past that no goal (the row
    /// shows the units offered and served).
    pub fn goals(&self) -> Vec<Goal> {
        if !self.must_fit {
            return Vec::new();
        }
        let what = format!(
            "one-seat stampede, {} instances{}",
            self.instances,
            self.buyer_limit
                .map_or(String::new(), |limit| format!(", buyer limit {limit}"))
        );
        vec![
            Goal::no_503(&what, self.unavailable),
            Goal::new(
                format!("{what}: share of a partition asked of the seat's key, busiest second"),
                self.busiest_second_offered,
                Bound::Below(1.0),
                "a partition's 1,000 write or 3,000 read units/s (DynamoDB's limits)",
            ),
        ]
    }
    /// Its instances, and the event's limit if it has one.
    pub(crate) fn label(&self) -> String {
        match self.buyer_limit {
            Some(limit) => format!("{} (buyer limit {limit})", self.instances),
            None => self.instances.to_string(),
        }
    }
}

/// The runs on one event of three seats, one seat each (A-1-1, A-1-2,
/// A-1-3), by the same orders (an order may hold several seats); then the
/// contract's run again on an event with a buyer limit, each claimant a
/// buyer of its own (every claim also reads its buyer's record).
pub(super) async fn one_seat_stampedes(
    app: &App,
    meter: &CapacityMeter,
    recorder: &CapacityRecorder,
    size: OneSeatStampede,
) -> Result<Vec<StampedeRun>, String> {
    let event = unique("crowd");
    create_event(app, &event, 3, HOLD_SECONDS).await?;
    let orders = create_orders(app, &event, size.requests).await?;
    let mut runs = Vec::new();
    let seats = ["A-1-1", "A-1-2", "A-1-3"];
    for (k, (instances, seat)) in size.instances.into_iter().zip(seats).enumerate() {
        let must_fit = k < 2;
        let at = Metering { meter, recorder };
        let run = priced_run(app, at, &event, &orders, seat, instances, None).await?;
        runs.push(StampedeRun { must_fit, ..run });
    }
    let limited = unique("crowd-limit");
    let plan = serde_json::json!({
        "name": "Benchmark, limited",
        "holdSeconds": HOLD_SECONDS,
        "buyerLimit": LIMITED_RUN_LIMIT,
        "sections": [{"sectionId": "A", "rows": [{"row": "1", "count": 1}]}],
    });
    create_event_from(app, &limited, &plan).await?;
    let orders = create_buyer_orders(app, &limited, size.requests).await?;
    let instances = size.instances[0];
    let run = priced_run(
        app,
        Metering { meter, recorder },
        &limited,
        &orders,
        "A-1-1",
        instances,
        Some(LIMITED_RUN_LIMIT),
    )
    .await?;
    runs.push(StampedeRun {
        must_fit: true,
        ..run
    });
    Ok(runs)
}

/// The limited run's `buyerLimit`.
const LIMITED_RUN_LIMIT: u32 = 2;

/// The largest share of a partition-second `key` took between `before` and
/// `after` (seats share a key by blocks: the runs' seats are on one, in
/// seconds of their own).
fn busiest(
    before: &HashMap<(capacity::Target, i64), (f64, f64)>,
    after: &HashMap<(capacity::Target, i64), (f64, f64)>,
    key: &capacity::Target,
) -> f64 {
    after
        .iter()
        .filter(|((target, _), _)| target == key)
        .map(|(second, &(write, read))| {
            let (w0, r0) = before.get(second).copied().unwrap_or_default();
            share(write - w0, read - r0)
        })
        .fold(0.0, f64::max)
}

/// Write and read units as a share of one partition-second.
fn share(write_units: f64, read_units: f64) -> f64 {
    write_units / PARTITION_WRITE_UNITS + read_units / PARTITION_READ_UNITS
}

/// The capacity meter the runs' requests pass, and their recorder.
#[derive(Clone, Copy)]
struct Metering<'a> {
    meter: &'a CapacityMeter,
    recorder: &'a CapacityRecorder,
}

/// One run of `orders` on `seat` of `event` over `instances`, its requests
/// recorded and metered on the seat's key.
async fn priced_run(
    app: &App,
    Metering { meter, recorder }: Metering<'_>,
    event: &str,
    orders: &[crate::kit::BenchOrder],
    seat: &str,
    instances: usize,
    buyer_limit: Option<u32>,
) -> Result<StampedeRun, String> {
    let mut claimants = Vec::with_capacity(orders.len());
    for o in orders {
        let (id, token) = o.claimant()?;
        claimants.push((id, token, o.expires));
    }
    let claimants = Arc::new(claimants);
    let seat = SeatId::parse(seat).map_err(|e| e.to_string())?;
    let seat_key = seat_partition(event, &seat)?;
    let on_seat = |units: &HashMap<capacity::Target, (f64, f64)>| {
        units.get(&seat_key).copied().unwrap_or_default()
    };
    meter.watch(&seat_key);
    let before = meter.metered();
    recorder.take();
    recorder.set_recording(true);
    let mut run = stampede(app, claimants, &seat, instances).await?;
    recorder.set_recording(false);
    let after = meter.metered();
    let minus = |a: (f64, f64), b: (f64, f64)| (a.0 - b.0, a.1 - b.1);
    run.offered = minus(on_seat(&after.offered), on_seat(&before.offered));
    run.served = minus(on_seat(&after.units), on_seat(&before.units));
    run.busiest_second = busiest(
        &before.served_per_second,
        &after.served_per_second,
        &seat_key,
    );
    run.busiest_second_offered = busiest(
        &before.offered_per_second,
        &after.offered_per_second,
        &seat_key,
    );
    let records = recorder.take();
    run.emulator_errors = records
        .iter()
        .filter(|r| r.status.is_none_or(|status| status >= 500))
        .count();
    // Transactions that reached the table (a throttled one was defused).
    run.writes = records
        .iter()
        .filter(|r| r.op == "TransactWriteItems" && r.request["TransactItems"].is_array())
        .count();
    run.buyer_limit = buyer_limit;
    Ok(run)
}

/// The seat's partition key as the recorder names it.
fn seat_partition(event: &str, seat: &SeatId) -> Result<capacity::Target, String> {
    let event = EventId::parse(event).map_err(|e| e.to_string())?;
    let key = shared::store::seat_item_key(&event, seat);
    match key.get(shared::store::PK) {
        Some(AttributeValue::S(pk)) => Ok(capacity::Target::table(pk.clone())),
        _ => Err("a seat key without a string partition key".into()),
    }
}

/// An order of the stampede, its hold token and its `expiresAt` as created.
type Claimant = (OrderId, HoldToken, crowdcheck::history::Micros);

/// The whole second of the meter's in which the last run started (ms).
static LAST_SECOND: AtomicI64 = AtomicI64::new(0);

/// How far into a meter's second the stampede's second starts.
const STAMPEDE_OFFSET_MS: i64 = 500;

/// One simulated second of `claimants` claiming `seat` through
/// `instances` fresh instances of `app`.
async fn stampede(
    app: &App,
    claimants: Arc<Vec<Claimant>>,
    seat: &SeatId,
    instances: usize,
) -> Result<StampedeRun, String> {
    let requests = claimants.len();
    // The second starts half-way through one of the capacity meter's
    // (which counts whole seconds): it spans two of them, and its first
    // half, where every instance's first claims fall, meets a partition's
    // limit in one. Two runs never share a meter's second.
    let next = (shared::world::now().0.div_euclid(1_000) + 1) * 1_000;
    let last = LAST_SECOND.fetch_max(next, Ordering::SeqCst);
    let whole = next.max(last + 2_000);
    LAST_SECOND.fetch_max(whole, Ordering::SeqCst);
    let t0 = Millis(whole + STAMPEDE_OFFSET_MS);
    let arrival = move |i: usize| Millis(t0.0 + (i as i64 * 1_000) / requests.max(1) as i64);
    // Instances run concurrently; DynamoDB Local takes so many at once.
    let in_flight = Arc::new(Semaphore::new(crate::setup::LOCAL_IN_FLIGHT));
    let mut tasks = tokio::task::JoinSet::new();
    for k in 0..instances {
        let instance = app.new_process();
        let (claimants, seat, in_flight) = (claimants.clone(), seat.clone(), in_flight.clone());
        tasks.spawn(async move {
            let mut answers = Vec::new();
            for i in (k..requests).step_by(instances) {
                let (order, token, _) = &claimants[i];
                let _permit = in_flight.acquire().await;
                // The claim's DynamoDB requests metered at its instant.
                let start = wall_us();
                let claim = get_seat_at(&instance, order, token, &seat, arrival(i));
                let answer = crowdcheck::capacity::at(arrival(i), claim).await;
                answers.push((i, Window::new(start, wall_us()), answer));
            }
            answers
        });
    }
    let mut run = StampedeRun {
        instances,
        requests,
        ..StampedeRun::default()
    };
    let mut answers = Vec::with_capacity(requests);
    while let Some(done) = tasks.join_next().await {
        answers.extend(done.map_err(|e| e.to_string())?);
    }
    tally(&mut run, &claimants, seat, answers);
    Ok(run)
}

/// The run's answers counted, and judged by the history checker as the
/// seat's history. Each answer's window is on the wall clock while its
/// claim ran at a simulated instant: a hold lasts until its order expires
/// (`HOLD_SECONDS` after the orders were opened, before the runs), which
/// must outlast the runs (it does by minutes): then every refusal's holder
/// is live on both clocks.
fn tally(
    run: &mut StampedeRun,
    claimants: &[Claimant],
    seat: &SeatId,
    answers: Vec<(usize, Window, Result<Millis, Error>)>,
) {
    let mut history = BuyerHistory::default();
    for (i, window, answer) in answers {
        let (status, body) = claim_answer(&answer);
        let order = claimants[i].0.as_str();
        let life = (claimants[i].2, HOLD_SECONDS);
        history.claim_for(seat.as_str(), window, order, (status, &body), life);
        match answer {
            Ok(_) => run.winners += 1,
            Err(Error::SeatHeld) => run.seat_held += 1,
            Err(Error::StoreUnavailable) => run.unavailable += 1,
            Err(other) => *run.other.entry(other.to_string()).or_default() += 1,
        }
    }
    run.history = history.judge_seats();
}
