//! What every scenario uses: a printed row and its timings, a seeded
//! random source, requests through the router, the orders it opens, unique
//! names, and apps on fresh tables. It names no scenario: every scenario
//! and the run itself build on it.

use std::time::Duration;

use lambda_http::Body;
use local::metrics::RequestCounter;
use local::router::{dispatch, request};
use shared::App;

use crate::goals::Goal;

/// The hold time of every scenario's event but two: longer than any
/// scenario runs, so no hold expires while one is measured.
pub const HOLD_SECONDS: u32 = 600;
/// The sweep scenario's hold time: its orders must expire to be swept.
pub const SWEEP_HOLD_SECONDS: u32 = 3;
/// The handler's throughput over its own decision run without HTTP (the
/// same DynamoDB requests): parsing, the token check and the reply cost
/// at most a tenth.
pub const HANDLER_OVER_BARE: f64 = 0.9;
/// The sweep on a table with many more items than expired orders takes at
/// most this much longer: what it reads tracks the expired orders.
pub const SWEEP_LARGE_OVER_SMALL: f64 = 1.5;

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
    pub fn p95(&self) -> f64 {
        self.percentile(95.0)
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
    /// Whether the correctness counts hold (what every run judges).
    pub ok: bool,
    /// Its figures held to bounds (what `make bench` alone fails on).
    pub goals: Vec<Goal>,
}

impl Row {
    /// Several rows printed as one: their lines joined, the first's timing,
    /// every goal, ok when each is.
    pub fn joined(rows: Vec<Row>) -> Row {
        let text = |f: fn(&Row) -> &str| rows.iter().map(f).collect::<Vec<_>>().join("\n");
        Row {
            scenario: text(|r| r.scenario.as_str()),
            correctness: text(|r| r.correctness.as_str()),
            ok: rows.iter().all(|r| r.ok),
            timing: rows.first().map(|r| r.timing.clone()).unwrap_or_default(),
            goals: rows.iter().flat_map(|r| r.goals.clone()).collect(),
        }
    }
}

/// A tiny deterministic PRNG (xorshift64*), so runs are reproducible.
pub(crate) struct Rng(pub(crate) u64);
impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

pub(crate) struct BenchOrder {
    pub(crate) id: String,
    pub(crate) token: String,
    /// Its `expiresAt` as created, in microseconds: the earliest it can
    /// expire (an extension only moves it later).
    pub(crate) expires: crowdcheck::history::Micros,
}

impl BenchOrder {
    /// The order's id and its hold token, decoded with the development keys.
    pub(crate) fn claimant(
        &self,
    ) -> Result<(shared::domain::OrderId, shared::auth::HoldToken), String> {
        let id = shared::domain::OrderId::parse(&self.id).map_err(|e| e.to_string())?;
        let token = local::apps::dev_hold_token_keys()
            .decode(&id, &self.token)
            .ok_or_else(|| format!("order {}: its hold token does not decode", self.id))?;
        Ok((id, token))
    }
}

/// A claim's outcome as get-seat answers it: its status, and its body's
/// `expiresAt` or `error` (what the history checker reads), for the paths
/// that call the handler's decision without HTTP.
pub(crate) fn claim_answer(
    result: &Result<shared::domain::Millis, shared::error::Error>,
) -> (u16, serde_json::Value) {
    match result {
        Ok(expires) => (
            200,
            serde_json::json!({ "expiresAt": expires.to_rfc3339() }),
        ),
        Err(e) => (
            shared::http::status(e).as_u16(),
            serde_json::json!({ "error": e.code() }),
        ),
    }
}

pub(crate) async fn reply(
    app: &App,
    method: &str,
    uri: &str,
    auth: Option<&str>,
    body: &str,
) -> (u16, serde_json::Value) {
    let headers: Vec<(&str, String)> = auth
        .map(|t| vec![("authorization", format!("Bearer {t}"))])
        .unwrap_or_default();
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    reply_with(app, method, uri, &headers, body).await
}

/// A request through the router with these headers: its status and body.
pub(crate) async fn reply_with(
    app: &App,
    method: &str,
    uri: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, serde_json::Value) {
    let body = if body.is_empty() {
        Body::Empty
    } else {
        Body::Text(body.to_owned())
    };
    let resp = dispatch(app, request(method, uri, headers, body)).await;
    let status = resp.status().as_u16();
    let json = serde_json::from_slice(resp.body().as_ref()).unwrap_or(serde_json::Value::Null);
    (status, json)
}

pub(crate) fn unique(prefix: &str) -> String {
    format!("{prefix}-{}", uuid::Uuid::new_v4().simple())
}

/// TableSpec::without_stream).
pub(crate) async fn new_app(
    endpoint: &str,
    counter: Option<RequestCounter>,
    recorder: Option<crate::capacity::CapacityRecorder>,
    stream: bool,
) -> Result<App, String> {
    let client = match recorder {
        Some(r) => crate::capacity::recording_client(endpoint, r),
        None => local::local_client_counting(endpoint, counter),
    };
    app_with_client(client, stream).await
}

/// The wall-clock budget the bench's handlers answer within: 116 s, four
/// times `DEFAULT_REQUEST_BUDGET_MS` (a choice, not derived; the config
/// loader would refuse it, so it is set on the bench's apps directly).
/// DynamoDB Local on 2 cores is far slower a round trip than DynamoDB, so
/// under 29 s a crowd's slowest requests ran out of the emulator's time,
/// not of anything the design spends; BENCHMARKS.md prints the reason with
/// the figures it rests on (`render_header`). Every `503` is still
/// counted, a request past its bound of store requests still answers
/// `503`, and each crowd's row says how many answers took longer than an
/// API function has in AWS (`scale_model::past_aws_deadline`). The
/// deadline mechanism is tested in `make test`.
pub const EMULATOR_REQUEST_BUDGET_MS: u32 = 4 * shared::config::DEFAULT_REQUEST_BUDGET_MS;

/// A fresh table through `client`, and an app on it, answering within
/// [`EMULATOR_REQUEST_BUDGET_MS`].
pub(crate) async fn app_with_client(
    client: aws_sdk_dynamodb::Client,
    stream: bool,
) -> Result<App, String> {
    let spec = local::table::TableSpec::from_repo().map_err(|e| e.to_string())?;
    let spec = if stream { spec } else { spec.without_stream() };
    let table = unique("bench");
    spec.create(&client, &table)
        .await
        .map_err(|e| e.to_string())?;
    Ok(app_on_table(client, &table))
}

/// An app through `client` on `table`, made already (another instance on
/// the same table), answering within [`EMULATOR_REQUEST_BUDGET_MS`].
pub(crate) fn app_on_table(client: aws_sdk_dynamodb::Client, table: &str) -> App {
    // An instance keeps a queue's state a second, as on AWS.
    let mut app = local::apps::app_on(client, table);
    app.config.request_budget_ms = EMULATOR_REQUEST_BUDGET_MS;
    app.memory = app
        .memory
        .fresh()
        .with_state_cache_ms(shared::store::QUEUE_CACHE_MS);
    app
}

/// `x` rounded up to two significant figures (14,004 → 15,000).
pub fn round_up_2sf(x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    let step = 10f64.powi(x.log10().floor() as i32 - 1);
    (x / step).ceil() * step
}

/// A key as the pages name it: `index: pk` on an index.
pub(crate) fn target_label(target: &crate::capacity::Target) -> String {
    match &target.index {
        Some(index) => format!("{index}: `{}`", target.pk),
        None => format!("`{}`", target.pk),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_round_up_to_two_significant_figures() {
        assert_eq!(round_up_2sf(14_004.0), 15_000.0);
        assert_eq!(round_up_2sf(14_000.0), 14_000.0);
        assert_eq!(round_up_2sf(1_077.0), 1_100.0);
        assert_eq!(round_up_2sf(76.2), 77.0);
        assert_eq!(round_up_2sf(0.0), 0.0);
    }
}
