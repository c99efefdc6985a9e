//! Faults for the integration tests: a DynamoDB client configured like
//! production's, endpoints that hang or refuse, a store that answers late,
//! and an SDK interceptor that answers chosen attempts with DynamoDB's own
//! throttling and transaction errors (DynamoDB Local never throttles and
//! rarely conflicts).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use aws_sdk_dynamodb::config::interceptors::{
    BeforeDeserializationInterceptorContextMut, BeforeTransmitInterceptorContextMut,
};
use aws_sdk_dynamodb::config::retry::{RetryConfig, RetryPartition};
use aws_sdk_dynamodb::config::{
    BehaviorVersion, ConfigBag, Credentials, Intercept, Region, RuntimeComponents,
    SharedInterceptor,
};
use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::http::{
    http_client_fn, HttpClient, HttpConnector, HttpConnectorFuture, SharedHttpClient,
    SharedHttpConnector,
};
use aws_smithy_runtime_api::client::orchestrator::HttpRequest;
use aws_smithy_runtime_api::http::{Response, StatusCode};
use aws_smithy_types::body::SdkBody;
use aws_smithy_types::config_bag::{Storable, StoreReplace};

/// A client with the settings `Store::connect` gives production: its
/// timeouts ([`shared::store::sdk_timeouts`]) and the standard retry mode
/// with 3 attempts (aws-config's default, which `connect` keeps), pointed
/// at `endpoint` with dummy credentials.
///
/// One difference: each client gets its own retry partition. The retry
/// quota (a token bucket: 500 tokens, 5 per retry, 10 per retry after a
/// timeout) is shared by every client of a process in the same partition;
/// a Lambda sandbox has one client, but a test binary runs many tests at
/// once, and one draining the quota (an outage) would leave the others
/// without retries.
pub fn production_client(
    endpoint: &str,
    interceptors: impl IntoIterator<Item = SharedInterceptor>,
) -> aws_sdk_dynamodb::Client {
    production_client_over(endpoint, shared::store::http_client(), interceptors)
}

/// [`production_client`] over another HTTP client (a [`SlowStore`]'s).
pub fn production_client_over(
    endpoint: &str,
    http: SharedHttpClient,
    interceptors: impl IntoIterator<Item = SharedInterceptor>,
) -> aws_sdk_dynamodb::Client {
    let partition = format!("seatclaim-test-{}", uuid::Uuid::new_v4().simple());
    let mut config = aws_sdk_dynamodb::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new(
            "local",
            "local",
            None,
            None,
            "seatclaim-faults",
        ))
        .endpoint_url(endpoint)
        .http_client(http)
        .timeout_config(shared::store::sdk_timeouts())
        .retry_config(RetryConfig::standard())
        .retry_partition(RetryPartition::new(partition));
    for interceptor in interceptors {
        config.push_interceptor(interceptor);
    }
    aws_sdk_dynamodb::Client::from_conf(config.build())
}

/// A store that answers every request late, by a delay the test sets and
/// changes as it goes (zero: on time): DynamoDB in a brown-out, as the
/// client sees it. The delay is spent before the request is sent, so the
/// SDK's attempt timeout counts it as it would a slow answer. Or only some
/// requests late ([`SlowStore::slow_only`]), before they are sent or after
/// they were answered (a write that landed, its answer lost to the
/// caller's deadline).
#[derive(Debug, Clone, Default)]
pub struct SlowStore {
    delay: Arc<Mutex<Lateness>>,
}

/// Which requests are late, and when.
#[derive(Debug, Clone, Copy, Default)]
struct Lateness {
    before: Duration,
    after: Duration,
    /// `(operation, text)`: only requests of that operation whose body
    /// holds that text (a key prefix); `None`, every request.
    only: Option<(&'static str, &'static str)>,
}

impl Lateness {
    fn of(&self, request: &HttpRequest) -> (Duration, Duration) {
        let Some((operation, text)) = self.only else {
            return (self.before, self.after);
        };
        let target = request.headers().get("x-amz-target").unwrap_or_default();
        let body = request.body().bytes().unwrap_or_default();
        let named = text.is_empty() || body.windows(text.len()).any(|w| w == text.as_bytes());
        if target.ends_with(&format!(".{operation}")) && named {
            (self.before, self.after)
        } else {
            (Duration::ZERO, Duration::ZERO)
        }
    }
}

impl SlowStore {
    /// Every request late by `delay` before it is sent (zero: on time).
    pub fn set_delay(&self, delay: Duration) {
        *self.delay.lock().unwrap_or_else(|p| p.into_inner()) = Lateness {
            before: delay,
            ..Lateness::default()
        };
    }

    /// Only the `operation` requests whose body holds `text`: late by
    /// `before` before they are sent and by `after` once answered.
    pub fn slow_only(
        &self,
        operation: &'static str,
        text: &'static str,
        before: Duration,
        after: Duration,
    ) {
        *self.delay.lock().unwrap_or_else(|p| p.into_inner()) = Lateness {
            before,
            after,
            only: Some((operation, text)),
        };
    }

    /// The HTTP client to build a DynamoDB client on
    /// ([`production_client_over`]).
    pub fn http_client(&self) -> SharedHttpClient {
        let (inner, delay) = (shared::store::http_client(), self.delay.clone());
        http_client_fn(move |settings, components| {
            SharedHttpConnector::new(LateConnector {
                inner: inner.http_connector(settings, components),
                delay: delay.clone(),
            })
        })
    }
}

#[derive(Debug)]
struct LateConnector {
    inner: SharedHttpConnector,
    delay: Arc<Mutex<Lateness>>,
}

impl HttpConnector for LateConnector {
    fn call(&self, request: HttpRequest) -> HttpConnectorFuture {
        let lateness = *self.delay.lock().unwrap_or_else(|p| p.into_inner());
        let (before, after) = lateness.of(&request);
        let inner = self.inner.clone();
        HttpConnectorFuture::new(async move {
            tokio::time::sleep(before).await;
            let answer = inner.call(request).await;
            tokio::time::sleep(after).await;
            answer
        })
    }
}

/// A TCP endpoint that accepts connections and never answers: a store that
/// hangs. The sockets stay open (held by the task) until it is dropped, so
/// the client sees neither a reset nor an end of stream, only silence.
#[derive(Debug)]
pub struct SilentListener {
    addr: SocketAddr,
    accepted: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl SilentListener {
    pub async fn start() -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        let task = tokio::spawn(async move {
            let mut held = Vec::new();
            // Ends only when the task is aborted (drop) or accept fails.
            while let Ok((socket, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                held.push(socket);
            }
        });
        Ok(Self {
            addr,
            accepted,
            task,
        })
    }

    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Connections accepted so far (each attempt after a timeout opens one).
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

impl Drop for SilentListener {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// An endpoint on a port nothing listens on: connections are refused.
pub fn refusing_endpoint() -> std::io::Result<String> {
    // Bound, then closed: the kernel hands ephemeral ports out in turn, so
    // the one just released is not given to another socket at once.
    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    Ok(format!("http://127.0.0.1:{port}"))
}

/// An error DynamoDB answers with, as it puts it on the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// `ThrottlingException` (control-plane and on-demand throttling).
    Throttling,
    /// `ProvisionedThroughputExceededException` (a hot partition).
    ProvisionedThroughputExceeded,
    /// `TransactionConflictException`: a plain write met a transaction on
    /// its item.
    TransactionConflict,
    /// `TransactionCanceledException` with one reason code per item of the
    /// transaction, in request order (`"None"` for items that did not fail).
    TransactionCanceled(Vec<&'static str>),
    /// The same, each reason with the item its failed condition saw, in
    /// DynamoDB's wire format, as `ReturnValuesOnConditionCheckFailure`
    /// `ALL_OLD` returns it (`None`: no item).
    TransactionCanceledSeeing(Vec<(&'static str, Option<serde_json::Value>)>),
    /// What the capacity meter answers a request past a limit with: the
    /// exception its kind calls for, with DynamoDB's `ThrottlingReasons`.
    Throttled {
        throttle: Throttle,
        /// The throttled table's or index's ARN.
        resource: String,
    },
}

impl Fault {
    /// Status and body as DynamoDB sends them (awsJson 1.0: the error type
    /// in `__type`, 400 for all three).
    fn response_body(&self) -> String {
        match self {
            Fault::Throttling => serde_json::json!({
                "__type": "com.amazon.coral.availability#ThrottlingException",
                "message": "Rate of requests exceeds the allowed throughput.",
            }),
            Fault::ProvisionedThroughputExceeded => serde_json::json!({
                "__type": "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
                "message": "The level of configured provisioned throughput for the table was exceeded. \
                            Consider increasing your provisioning level with the UpdateTable API.",
            }),
            Fault::TransactionConflict => serde_json::json!({
                "__type": "com.amazonaws.dynamodb.v20120810#TransactionConflictException",
                "message": "Transaction is ongoing for the item",
            }),
            Fault::Throttled { throttle, resource } => {
                let (kind, message) = match throttle {
                    Throttle::KeyRange { .. } | Throttle::TableAllowance { .. } => (
                        "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
                        "Throughput exceeds the current capacity for one or more partitions. Reduce your request rate.",
                    ),
                    Throttle::AccountLimit { .. } => (
                        "com.amazon.coral.availability#ThrottlingException",
                        "Throughput exceeds the current throughput limit for your table.",
                    ),
                };
                serde_json::json!({
                    "__type": kind,
                    "message": message,
                    "ThrottlingReasons": [{"reason": throttle.reason(), "resource": resource}],
                })
            }
            Fault::TransactionCanceled(codes) => {
                cancelled(codes.iter().map(|code| (*code, None)).collect())
            }
            Fault::TransactionCanceledSeeing(reasons) => cancelled(reasons.clone()),
        }
        .to_string()
    }
}

/// A `TransactionCanceledException` body: one reason per item, in request
/// order, each with the item its condition saw if any.
fn cancelled(reasons: Vec<(&'static str, Option<serde_json::Value>)>) -> serde_json::Value {
    let codes: Vec<&str> = reasons.iter().map(|(code, _)| *code).collect();
    let reasons: Vec<serde_json::Value> = reasons
        .into_iter()
        .map(|(code, item)| {
            let mut reason = match code {
                "TransactionConflict" => {
                    serde_json::json!({"Code": code, "Message": "Transaction is ongoing for the item"})
                }
                _ => serde_json::json!({"Code": code}),
            };
            if let Some(item) = item {
                reason["Item"] = item;
            }
            reason
        })
        .collect();
    serde_json::json!({
        "__type": "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
        "Message": format!(
            "Transaction cancelled, please refer cancellation reasons for specific reasons [{}]",
            codes.join(", ")
        ),
        "CancellationReasons": reasons,
    })
}

/// Marks an attempt whose response is to be replaced (per operation
/// invocation: the config bag's interceptor state is not shared between
/// concurrent requests).
#[derive(Debug, Clone)]
struct Injected(Fault);

impl Storable for Injected {
    type Storer = StoreReplace<Self>;
}

#[derive(Debug)]
struct Plan {
    operation: &'static str,
    fault: Fault,
    /// Attempts still to fail; `None`: every attempt.
    remaining: Option<u32>,
    /// Attempts to let through untouched before failing any.
    skip: u32,
}

#[derive(Debug, Default)]
struct State {
    plans: Vec<Plan>,
    attempts: BTreeMap<String, u64>,
    injected: BTreeMap<String, u64>,
}

/// Makes chosen attempts of chosen operations fail as DynamoDB would, and
/// counts every attempt per operation (retries included).
///
/// An injected attempt never reaches DynamoDB Local's data: before it is
/// sent, it is turned into a harmless `ListTables`, and its response is then
/// replaced by the fault's. That is what DynamoDB does too — a throttled or
/// cancelled request has written nothing — so the table shows exactly what
/// the service did next (retry, give up, write something else).
#[derive(Debug, Clone, Default)]
pub struct FaultInjector {
    state: Arc<Mutex<State>>,
}

impl FaultInjector {
    /// Fails the next `times` attempts of `operation` (e.g.
    /// `"TransactWriteItems"`) with `fault`; `None`: every attempt from now.
    pub fn fail(&self, operation: &'static str, fault: Fault, times: Option<u32>) {
        self.fail_after(operation, 0, fault, times);
    }

    /// [`FaultInjector::fail`], after letting the next `skip` attempts of
    /// `operation` through (to reach a request's second transaction).
    pub fn fail_after(&self, operation: &'static str, skip: u32, fault: Fault, times: Option<u32>) {
        self.lock().plans.push(Plan {
            operation,
            fault,
            remaining: times,
            skip,
        });
    }

    /// Stops injecting and resets the counts.
    pub fn reset(&self) {
        *self.lock() = State::default();
    }

    /// Attempts sent per operation (injected ones included).
    pub fn attempts(&self, operation: &str) -> u64 {
        self.lock().attempts.get(operation).copied().unwrap_or(0)
    }

    /// Attempts answered with a fault, per operation.
    pub fn injected(&self, operation: &str) -> u64 {
        self.lock().injected.get(operation).copied().unwrap_or(0)
    }

    pub fn shared(&self) -> SharedInterceptor {
        SharedInterceptor::new(self.clone())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A poisoned lock only means a test thread panicked mid-update; the
        // plans and counts are still usable.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Counts the attempt and takes the fault planned for it, if any.
    fn next_fault(&self, operation: &str) -> Option<Fault> {
        let mut state = self.lock();
        *state.attempts.entry(operation.to_owned()).or_default() += 1;
        let plan = state
            .plans
            .iter_mut()
            .find(|p| p.operation == operation && p.remaining != Some(0))?;
        if plan.skip > 0 {
            plan.skip -= 1;
            return None;
        }
        if let Some(n) = plan.remaining.as_mut() {
            *n -= 1;
        }
        let fault = plan.fault.clone();
        *state.injected.entry(operation.to_owned()).or_default() += 1;
        Some(fault)
    }
}

impl Intercept for FaultInjector {
    fn name(&self) -> &'static str {
        "FaultInjector"
    }

    fn modify_before_transmit(
        &self,
        context: &mut BeforeTransmitInterceptorContextMut<'_>,
        _components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let fault = self.next_fault(&crate::attempt::operation(cfg));
        if fault.is_some() {
            defuse(context.request_mut());
        }
        // Set or cleared on every attempt, so a retry after an injected
        // attempt gets the real response.
        cfg.interceptor_state().store_or_unset(fault.map(Injected));
        Ok(())
    }

    fn modify_before_deserialization(
        &self,
        context: &mut BeforeDeserializationInterceptorContextMut<'_>,
        _components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let Some(Injected(fault)) = cfg.load::<Injected>().cloned() else {
            return Ok(());
        };
        *context.response_mut() = fault.response()?;
        Ok(())
    }
}

/// Turns an attempt into a read-only call DynamoDB Local answers without
/// touching any table item: a fault's attempt must write nothing.
pub fn defuse(request: &mut HttpRequest) {
    request
        .headers_mut()
        .insert("x-amz-target", "DynamoDB_20120810.ListTables");
    resend_with(request, r#"{"Limit":1}"#.to_owned());
}

/// The attempt with `body` in place of the one the SDK built (DynamoDB
/// Local does not check the signature over it).
pub fn resend_with(request: &mut HttpRequest, body: String) {
    request
        .headers_mut()
        .insert("content-length", body.len().to_string());
    *request.body_mut() = SdkBody::from(body);
}

impl Fault {
    /// The whole response DynamoDB sends with this error.
    pub fn response(&self) -> Result<Response<SdkBody>, BoxError> {
        let mut response = Response::new(
            StatusCode::try_from(400)?,
            SdkBody::from(self.response_body()),
        );
        response
            .headers_mut()
            .insert("content-type", "application/x-amz-json-1.0");
        response.headers_mut().insert(
            "x-amzn-requestid",
            "SEATCLAIMFAULTINJECTED0000000000000000000000000000",
        );
        Ok(response)
    }
}

/// Which limit a request met.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Throttle {
    /// A partition (the key's, shared with the keys beside it): DynamoDB
    /// answers `ProvisionedThroughputExceededException`.
    KeyRange { index: Option<String>, write: bool },
    /// An on-demand table (or index) past double its previous peak, its
    /// partitions not yet split: DynamoDB answers as for a partition
    /// (no documented reason names this limit), but it is the table's
    /// allowance, not a key, that ran out.
    TableAllowance { index: Option<String>, write: bool },
    /// The per-table quota: `ThrottlingException`.
    AccountLimit { index: Option<String>, write: bool },
}

impl Throttle {
    /// The `ThrottlingReason.reason` DynamoDB gives:
    /// `{Table|Index}{Read|Write}{KeyRangeThroughputExceeded|AccountLimitExceeded}`
    /// (a table's allowance reads as a key range's).
    pub fn reason(&self) -> String {
        let limit = match self {
            Throttle::KeyRange { .. } | Throttle::TableAllowance { .. } => {
                "KeyRangeThroughputExceeded"
            }
            Throttle::AccountLimit { .. } => "AccountLimitExceeded",
        };
        format!("{}{limit}", self.resource_and_kind())
    }

    /// Which limit it was, for a count that tells them apart: the reason,
    /// except that a table's allowance is named as one
    /// (`{Table|Index}{Read|Write}AllowanceExceeded`: over double its
    /// previous peak).
    pub fn limit_met(&self) -> String {
        match self {
            Throttle::TableAllowance { .. } => {
                format!("{}AllowanceExceeded", self.resource_and_kind())
            }
            _ => self.reason(),
        }
    }

    /// The table or index it met.
    pub fn index(&self) -> &Option<String> {
        match self {
            Throttle::KeyRange { index, .. }
            | Throttle::TableAllowance { index, .. }
            | Throttle::AccountLimit { index, .. } => index,
        }
    }

    fn resource_and_kind(&self) -> String {
        let write = match self {
            Throttle::KeyRange { write, .. }
            | Throttle::TableAllowance { write, .. }
            | Throttle::AccountLimit { write, .. } => *write,
        };
        format!(
            "{}{}",
            if self.index().is_some() {
                "Index"
            } else {
                "Table"
            },
            if write { "Write" } else { "Read" }
        )
    }
}
