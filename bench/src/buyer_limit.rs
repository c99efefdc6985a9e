//! Buyer limits' cost: the same claims on an event without a limit and on
//! one with a `buyerLimit`, each buyer offered one seat more than the
//! limit, every DynamoDB request recorded and priced. The contract's
//! targets: at most one more strongly consistent read per claim, and at
//! most 2 write units per KB of the buyer's record on top of the claim's.

use crate::capacity::CapacityRecorder;
use crate::kit::{reply_with as send, unique, Row, Timing};
use crate::setup::{create_buyer_orders, create_event_from};
use crate::{Bound, Goal, HOLD_SECONDS};
use crowdcheck::history::{check_counter, micros_of, wall_us, CounterOp, Take, Verdict, Window};
use shared::App;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::Semaphore;

/// Issue 29's price of a limit: at most one more consistent read per claim
/// (the buyer's record) ...
const EXTRA_READS_PER_CLAIM: f64 = 1.0;
/// ... and at most 2 write units per KB of that record (its update,
/// transactional).
const WRITE_UNITS_PER_KB: f64 = 2.0;

/// The scenario's size.
#[derive(Debug, Clone, Copy)]
pub struct BuyerLimitClaims {
    pub buyers: usize,
    pub limit: u32,
    pub in_flight: usize,
}

/// One pass (with or without the limit): what it measured.
#[derive(Debug, Default)]
struct Pass {
    timing: Timing,
    held: usize,
    refused: usize,
    other: BTreeMap<String, usize>,
    /// Requests per claim, by DynamoDB operation.
    requests: BTreeMap<String, f64>,
    /// Strongly consistent reads per claim (what a limit may add one of;
    /// an instance's once-a-second eventually consistent reads of shared
    /// state are not the claim's).
    consistent_reads: f64,
    read_units: f64,
    write_units: f64,
    /// Write units on buyers' records, per claim.
    buyer_write_units: f64,
    /// The largest buyer's record, in bytes.
    largest_record: usize,
    /// Every buyer's history judged against the limit (a limited pass).
    history: Verdict,
}

impl Pass {
    fn claims(&self) -> f64 {
        self.timing.latencies_ms.len().max(1) as f64
    }
}

/// Issue 29's price of a limit, per claim.
fn limit_goals(extra_reads: f64, units_per_kb: f64) -> Vec<Goal> {
    vec![
        Goal::new(
            "buyer limit: extra consistent reads per claim",
            extra_reads,
            Bound::AtMost(EXTRA_READS_PER_CLAIM),
            "issue 29 part 4",
        ),
        Goal::new(
            "buyer limit: write units per KB of the buyer's record per claim",
            units_per_kb,
            Bound::AtMost(WRITE_UNITS_PER_KB),
            "issue 29 part 4",
        ),
    ]
}

/// Both passes, and the row that compares them.
pub(super) async fn buyer_limit_claims(
    app: &App,
    recorder: &CapacityRecorder,
    size: BuyerLimitClaims,
) -> Result<Row, String> {
    let free = pass(app, recorder, size, None).await?;
    let limited = pass(app, recorder, size, Some(size.limit)).await?;
    let extra_reads = limited.consistent_reads - free.consistent_reads;
    let record_kb = limited.largest_record.div_ceil(1024).max(1) as f64;
    let units_per_kb = limited.buyer_write_units / record_kb;
    let per_buyer = size.limit as usize;
    let counts_ok = limited.history.violations.is_empty()
        && free.held == size.buyers * (per_buyer + 1)
        && free.refused == 0
        && limited.held == size.buyers * per_buyer
        && limited.refused == size.buyers
        && free.other.is_empty()
        && limited.other.is_empty();
    let goals = limit_goals(extra_reads, units_per_kb);
    let correctness = format!(
        "no limit: {} held, {:.0} claims/s, {}; limit {}: {} held, {} buyer-limit, {:.0} claims/s, {}; \
         measured per claim: {extra_reads:+.2} consistent reads ({}), {:.2} write units on the buyer's record \
         of {} B = {units_per_kb:.2} per KB ({}); other answers {:?} / {:?}; history: {} buyers' takes judged against the limit, {} violations",
        free.held,
        free.timing.per_second(),
        per_claim(&free),
        size.limit,
        limited.held,
        limited.refused,
        limited.timing.per_second(),
        per_claim(&limited),
        goals[0].judged(),
        limited.buyer_write_units,
        limited.largest_record,
        goals[1].judged(),
        free.other,
        limited.other,
        limited.history.operations,
        limited.history.violations.len(),
    );
    Ok(Row {
        scenario: format!(
            "buyer limit: {} buyers x {} claims each, limit {} vs none ({} in flight)",
            size.buyers,
            per_buyer + 1,
            size.limit,
            size.in_flight
        ),
        ok: counts_ok,
        correctness,
        goals,
        timing: limited.timing,
    })
}

/// A pass's requests and units per claim, as printed.
fn per_claim(pass: &Pass) -> String {
    let requests: Vec<String> = pass
        .requests
        .iter()
        .map(|(op, n)| format!("{n:.2} {op}"))
        .collect();
    format!(
        "{} ({:.2} RU, {:.2} WU) per claim",
        requests.join(" + "),
        pass.read_units,
        pass.write_units
    )
}

/// One pass: an event of `buyers x (limit + 1)` seats, one order per
/// buyer (its `X-Buyer-Token` on a limited event), and every buyer's
/// claims in turn, buyers at once up to `in_flight`.
async fn pass(
    app: &App,
    recorder: &CapacityRecorder,
    size: BuyerLimitClaims,
    limit: Option<u32>,
) -> Result<Pass, String> {
    let each = size.limit as usize + 1;
    let event = unique("limit");
    let mut plan = serde_json::json!({
        "name": "Buyer limit",
        "holdSeconds": HOLD_SECONDS,
        "sections": [{"sectionId": "A", "rows": [{"row": "1", "count": size.buyers * each}]}],
    });
    if let Some(limit) = limit {
        plan["buyerLimit"] = limit.into();
    }
    create_event_from(app, &event, &plan).await?;
    let orders = create_buyer_orders(app, &event, size.buyers)
        .await?
        .into_iter()
        .map(|o| (o.id, o.token))
        .collect();
    measure(app, recorder, orders, each, size.in_flight, limit).await
}

/// One claim's latency (ms), status and error code.
type Claimed = (f64, u16, String);

/// A buyer's `each` claims in turn, of the seats after the first `skip`:
/// the answers, and the buyer's history (what its order holds after each
/// claim answered held).
async fn buyer_claims(
    app: &App,
    id: &str,
    token: &str,
    skip: usize,
    each: usize,
) -> (Vec<Claimed>, Vec<CounterOp>) {
    let auth = format!("Bearer {token}");
    let mut answers = Vec::with_capacity(each);
    let mut history = Vec::new();
    for k in 0..each {
        let uri = format!("/orders/{id}/seats/A-1-{}", skip + k + 1);
        let (t, start) = (Instant::now(), wall_us());
        let (status, body) = send(app, "POST", &uri, &[("authorization", &auth)], "").await;
        let window = Window::new(start, wall_us());
        let code = body["error"].as_str().unwrap_or("").to_owned();
        let expires = body["expiresAt"].as_str().and_then(micros_of);
        match (status, expires) {
            (200, Some(expires)) => history.push(CounterOp::Took(Take {
                window,
                order: id.to_owned(),
                quantity: history.len() as u64 + 1,
                expires,
            })),
            // A hold without its expiry says nothing checkable: another
            // answer, so the row fails rather than the history hiding it.
            (200, None) => {
                answers.push((0.0, status, "no expiresAt".to_owned()));
                continue;
            }
            _ => {}
        }
        answers.push((t.elapsed().as_secs_f64() * 1000.0, status, code));
    }
    (answers, history)
}

/// Every buyer's `each` claims in turn, buyers at once up to `in_flight`,
/// recorded and priced per claim.
async fn measure(
    app: &App,
    recorder: &CapacityRecorder,
    orders: Vec<(String, String)>,
    each: usize,
    in_flight: usize,
    cap: Option<u32>,
) -> Result<Pass, String> {
    recorder.take();
    recorder.set_recording(true);
    let sem = Arc::new(Semaphore::new(in_flight));
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for (i, (id, token)) in orders.into_iter().enumerate() {
        let (app, sem) = (app.clone(), sem.clone());
        tasks.spawn(async move {
            let _permit = sem.acquire_owned().await;
            buyer_claims(&app, &id, &token, i * each, each).await
        });
    }
    let mut out = Pass::default();
    while let Some(done) = tasks.join_next().await {
        let (answers, history) = done.map_err(|e| e.to_string())?;
        if let Some(cap) = cap {
            let verdict = check_counter("a buyer's units", u64::from(cap), &history);
            out.history = std::mem::take(&mut out.history).and(verdict);
        }
        for (ms, status, code) in answers {
            out.timing.latencies_ms.push(ms);
            match (status, code.as_str()) {
                (200, "") => out.held += 1,
                (409, "buyer-limit") => out.refused += 1,
                _ => *out.other.entry(format!("{status} {code}")).or_default() += 1,
            }
        }
    }
    out.timing.wall = started.elapsed();
    recorder.set_recording(false);
    let records = recorder.take();
    let claims = out.claims();
    for record in &records {
        *out.requests.entry(record.op.clone()).or_default() += 1.0 / claims;
        if record.request["ConsistentRead"] == serde_json::Value::Bool(true) {
            out.consistent_reads += 1.0 / claims;
        }
    }
    let charges = super::pricing::price(app, &records).await?;
    let mut buyer_keys = BTreeSet::new();
    for c in &charges {
        out.read_units += c.read_units / claims;
        out.write_units += c.write_units / claims;
        if c.target.index.is_none() && c.target.pk.starts_with(shared::store::BUYER_PK_PREFIX) {
            out.buyer_write_units += c.write_units / claims;
            buyer_keys.insert((c.target.pk.clone(), shared::store::BUYER_SK.to_owned()));
        }
    }
    let sizes = super::pricing::item_sizes(app, &buyer_keys).await?;
    out.largest_record = sizes.values().copied().max().unwrap_or(0);
    Ok(out)
}
