//! The [`Meter`] as an SDK interceptor: each attempt admitted, or throttled
//! as DynamoDB would throttle it, on the partitions it lands on; what it
//! consumed charged once answered. On the run's clock: an instant set with
//! [`at`] (the bench's simulated second), else the wall clock.
//!
//! Recording ([`CapacityMeter::recording`]) meters and never throttles: it
//! counts what would have been throttled, and every client of the tests
//! can carry it without changing an answer.
//! Enforcing ([`CapacityMeter::enforcing`]) answers a request past a limit
//! with DynamoDB's error, and the request writes nothing (it is defused,
//! as the fault injector's are): a `ProvisionedThroughputExceededException`
//! or `ThrottlingException` with its `ThrottlingReasons`, or for a
//! transaction `TransactionCanceledException` with `ThrottlingError` on
//! each throttled item. A batch is throttled whole where any of its keys
//! is (DynamoDB would return the rest unprocessed; the store's batches
//! are reads it retries either way).
//!
//! Sizes: a write is charged at the size of the item as this meter last saw
//! it (put, or read back), else as under 1 KB; index entries a write moves
//! are charged where the request shows them. The bench's published figures
//! come from the exact pricing of recorded requests (`charges` with the
//! items read back), not from this meter.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};

use aws_sdk_dynamodb::config::interceptors::{
    BeforeDeserializationInterceptorContextMut, BeforeTransmitInterceptorContextMut,
    FinalizerInterceptorContextRef,
};
use aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents, SharedInterceptor};
use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::orchestrator::Metadata;
use aws_smithy_types::config_bag::{Storable, StoreReplace};
use serde_json::Value;

use super::expressions::key_text;
use super::meter::{Limits, Meter, Throttle};
use super::{charges, item_size, Charge, Recorded, Schema, Target};
use crate::faults::{defuse, Fault};
use shared::domain::Millis;

tokio::task_local! {
    static CLOCK: Millis;
}

/// Runs `work` with the DynamoDB requests of its task metered at `instant`
/// (the interceptor runs inside the request's task).
pub async fn at<F: Future>(instant: Millis, work: F) -> F::Output {
    CLOCK.scope(instant, work).await
}

fn now_ms() -> i64 {
    CLOCK
        .try_with(|m| m.0)
        .unwrap_or_else(|_| shared::world::now().0)
}

/// What the meter saw, for a test or the bench to read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Metered {
    /// Attempts admitted and charged.
    pub served: u64,
    /// Attempts (a transaction's items) that met a limit, by
    /// `ThrottlingReason`: answered with its error when enforcing, served
    /// anyway when recording.
    pub throttled: HashMap<String, u64>,
    /// Write and read units charged per partition.
    pub units: HashMap<Target, (f64, f64)>,
}

#[derive(Debug)]
struct State {
    meter: Meter,
    /// Last size seen per item (pk, sk).
    sizes: HashMap<(String, String), usize>,
    metered: Metered,
}

/// The interceptor; clones share one meter.
#[derive(Debug, Clone)]
pub struct CapacityMeter {
    state: Arc<Mutex<State>>,
    enforcing: bool,
    schema: Arc<Schema>,
}

impl CapacityMeter {
    /// Meters, never throttles.
    pub fn recording() -> Self {
        Self::new(false)
    }

    /// Meters and throttles as DynamoDB would.
    pub fn enforcing() -> Self {
        Self::new(true)
    }

    fn new(enforcing: bool) -> Self {
        CapacityMeter {
            state: Arc::new(Mutex::new(State {
                meter: Meter::new(Limits::DYNAMODB),
                sizes: HashMap::new(),
                metered: Metered::default(),
            })),
            enforcing,
            schema: Arc::new(Schema::seatclaim()),
        }
    }

    pub fn shared(&self) -> SharedInterceptor {
        SharedInterceptor::new(self.clone())
    }

    /// What it has metered so far.
    pub fn metered(&self) -> Metered {
        self.lock().metered.clone()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A poisoned lock only means a thread panicked mid-update; the
        // meter's counts are still usable.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The partitions `request` lands on, priced as if it were answered.
    fn targets(&self, op: &str, request: &Value, state: &State) -> Vec<Target> {
        let record = Recorded {
            op: op.to_owned(),
            request: request.clone(),
            status: Some(200),
            response: Value::Null,
            caller: None,
        };
        let size = |pk: &str, sk: &str| state.sizes.get(&(pk.to_owned(), sk.to_owned())).copied();
        let mut targets: Vec<Target> = charges(&[record], &self.schema, &size, &|_, _| None)
            .into_iter()
            .map(|c| c.target)
            .collect();
        targets.dedup();
        targets
    }

    /// The error DynamoDB answers this attempt with, if any.
    fn decide(&self, op: &str, request: &Value, at: i64) -> Option<Fault> {
        let mut state = self.lock();
        let write = is_write(op);
        let verdicts: Vec<Result<(), Throttle>> = match op {
            "TransactWriteItems" => transaction_items(request)
                .map(|item| {
                    let one = serde_json::json!({ "TransactItems": [item] });
                    let targets = self.targets(op, &one, &state);
                    state.meter.admit(at, &targets, true)
                })
                .collect(),
            _ => {
                let targets = self.targets(op, request, &state);
                vec![state.meter.admit(at, &targets, write)]
            }
        };
        let throttles: Vec<&Throttle> = verdicts.iter().filter_map(|v| v.as_ref().err()).collect();
        let first = (*throttles.first()?).clone();
        for t in &throttles {
            *state.metered.throttled.entry(t.reason()).or_default() += 1;
        }
        Some(match op {
            "TransactWriteItems" => Fault::TransactionCanceled(
                verdicts
                    .iter()
                    .map(|v| {
                        if v.is_err() {
                            "ThrottlingError"
                        } else {
                            "None"
                        }
                    })
                    .collect(),
            ),
            _ => Fault::Throttled {
                resource: resource(request, &first),
                throttle: first,
            },
        })
    }

    /// Charges an answered attempt, and learns the sizes it shows.
    fn charge(&self, record: &Recorded, at: i64) {
        let mut state = self.lock();
        learn_sizes(&mut state.sizes, record, &self.schema);
        let priced: Vec<Charge> = {
            let sizes = &state.sizes;
            let size = |pk: &str, sk: &str| sizes.get(&(pk.to_owned(), sk.to_owned())).copied();
            charges(
                std::slice::from_ref(record),
                &self.schema,
                &size,
                &|_, _| None,
            )
        };
        if priced.is_empty() {
            return;
        }
        state.meter.charge(at, &priced);
        state.metered.served += 1;
        for c in priced {
            let units = state.metered.units.entry(c.target).or_default();
            units.0 += c.write_units;
            units.1 += c.read_units;
        }
    }
}

fn is_write(op: &str) -> bool {
    matches!(
        op,
        "PutItem" | "UpdateItem" | "DeleteItem" | "BatchWriteItem" | "TransactWriteItems"
    )
}

fn transaction_items(request: &Value) -> impl Iterator<Item = &Value> {
    request["TransactItems"].as_array().into_iter().flatten()
}

/// The throttled table's or index's ARN, as `ThrottlingReasons` names it.
fn resource(request: &Value, throttle: &Throttle) -> String {
    let table = request["TableName"]
        .as_str()
        .or_else(|| {
            request["RequestItems"]
                .as_object()
                .and_then(|tables| tables.keys().next())
                .map(String::as_str)
        })
        .unwrap_or("unknown");
    let index = match throttle {
        Throttle::KeyRange { index, .. } | Throttle::AccountLimit { index, .. } => index,
    };
    let arn = format!("arn:aws:dynamodb:us-east-1:000000000000:table/{table}");
    match index {
        Some(index) => format!("{arn}/index/{index}"),
        None => arn,
    }
}

/// Items the attempt shows whole (put, or read back), by key.
fn learn_sizes(sizes: &mut HashMap<(String, String), usize>, record: &Recorded, schema: &Schema) {
    let mut learn = |item: &Value| {
        let (Some(object), Some(pk)) = (item.as_object(), key_text(&item[&schema.pk_attr])) else {
            return;
        };
        let sk = key_text(&item[&schema.sk_attr]).unwrap_or_default();
        sizes.insert((pk, sk), item_size(object));
    };
    let (req, resp) = (&record.request, &record.response);
    learn(&req["Item"]);
    for item in transaction_items(req) {
        learn(&item["Put"]["Item"]);
    }
    learn(&resp["Item"]);
    for item in resp["Items"].as_array().into_iter().flatten() {
        learn(item);
    }
    for response in resp["Responses"].as_array().into_iter().flatten() {
        learn(&response["Item"]);
    }
    for items in resp["Responses"]
        .as_object()
        .into_iter()
        .flat_map(|t| t.values())
    {
        for item in items.as_array().into_iter().flatten() {
            learn(item);
        }
    }
}

/// The attempt as sent, and whether the meter throttled it.
#[derive(Debug, Clone)]
struct Attempt {
    record: Recorded,
    at: i64,
    throttled: Option<Fault>,
}

impl Storable for Attempt {
    type Storer = StoreReplace<Self>;
}

fn json(bytes: Option<&[u8]>) -> Value {
    bytes
        .and_then(|b| serde_json::from_slice(b).ok())
        .unwrap_or(Value::Null)
}

impl Intercept for CapacityMeter {
    fn name(&self) -> &'static str {
        "CapacityMeter"
    }

    fn modify_before_transmit(
        &self,
        context: &mut BeforeTransmitInterceptorContextMut<'_>,
        _components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let op = cfg
            .load::<Metadata>()
            .map(|m| m.name().to_owned())
            .unwrap_or_default();
        let request = json(context.request().body().bytes());
        let at = now_ms();
        // Decided either way: a recording meter counts what would have been
        // throttled, and serves it.
        let verdict = self.decide(&op, &request, at);
        let throttled = verdict.filter(|_| self.enforcing);
        if throttled.is_some() {
            defuse(context.request_mut());
        }
        cfg.interceptor_state().store_put(Attempt {
            record: Recorded {
                op,
                request,
                status: None,
                response: Value::Null,
                caller: None,
            },
            at,
            throttled,
        });
        Ok(())
    }

    fn modify_before_deserialization(
        &self,
        context: &mut BeforeDeserializationInterceptorContextMut<'_>,
        _components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        if let Some(fault) = cfg.load::<Attempt>().and_then(|a| a.throttled.clone()) {
            *context.response_mut() = fault.response()?;
        }
        Ok(())
    }

    fn read_after_attempt(
        &self,
        context: &FinalizerInterceptorContextRef<'_>,
        _components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let Some(mut attempt) = cfg.load::<Attempt>().cloned() else {
            return Ok(());
        };
        cfg.interceptor_state().unset::<Attempt>();
        if attempt.throttled.is_some() {
            return Ok(());
        }
        let response = context.response();
        attempt.record.status = response.map(|r| r.status().as_u16());
        attempt.record.response = json(response.and_then(|r| r.body().bytes()));
        self.charge(&attempt.record, attempt.at);
        Ok(())
    }
}
