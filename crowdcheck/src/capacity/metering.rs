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
//! each throttled item. A batch's entries are judged one by one: those
//! throttled come back as its unprocessed keys or items, and only a batch
//! with none served is answered with the error (`batches.rs`).
//!
//! Sizes: a write is charged the larger of its item before and after, the
//! item as this meter last saw it whole (put, created, read back, or
//! updated by an expression it could read: units.rs, `Known`), else as
//! under 1 KB. Index
//! entries a write moves are charged where the request shows them (a put,
//! an update that sets an index key), and where this meter saw the item's
//! entry written (a delete, a removal of an index key): an item written
//! before the meter was attached leaves the index uncharged. The bench's
//! published figures come from the exact pricing of recorded requests
//! (`charges` with the items read back), not from this meter.
//!
//! Each SDK attempt is metered, retries included, at the same instant of
//! the run's clock when [`at`] froze it: a request throttled once is
//! throttled on each retry within that second, as it would be on a key
//! that stays full.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};

use aws_sdk_dynamodb::config::interceptors::{
    BeforeDeserializationInterceptorContextMut, BeforeTransmitInterceptorContextMut,
    FinalizerInterceptorContextRef,
};
use aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents, SharedInterceptor};
use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_types::body::SdkBody;
use aws_smithy_types::config_bag::{Storable, StoreReplace};
use serde_json::Value;

use super::attempt_facts::{resource, transaction_items};
use super::batches::{entries, is_batch, split, WithUnprocessed};
use super::conflicts::{written_items, Ongoing};
use super::meter::{Limits, Meter, PartitionId, Throttle};
use super::units::{charges_after, Known};
use super::{Charge, Recorded, Schema, Target};
use local::attempt::{body_json, operation};
use local::faults::{defuse, resend_with, Fault};
use shared::domain::Millis;

tokio::task_local! {
    static CLOCK: Millis;
}

/// Runs `work` with the DynamoDB requests of its task metered at `instant`
/// (the interceptor runs inside the request's task).
pub async fn at<F: Future>(instant: Millis, work: F) -> F::Output {
    CLOCK.scope(instant, work).await
}

/// Whether the request's task runs on a simulated clock ([`at`]).
fn simulated() -> bool {
    CLOCK.try_with(|_| ()).is_ok()
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
    /// Attempts (a transaction's items, a batch's entries) that met a limit, by
    /// [`Throttle::limit_met`] (the `ThrottlingReason`, a table's allowance
    /// named apart): answered with its error when enforcing, served anyway
    /// when recording.
    pub throttled: HashMap<String, u64>,
    /// Write and read units charged per key.
    pub units: HashMap<Target, (f64, f64)>,
    /// Write and read units asked of each key, served or throttled, at
    /// what each attempt would have cost (its estimate: a read at the least
    /// it can cost).
    pub offered: HashMap<Target, (f64, f64)>,
    /// Write and read units charged, and asked, per second of the clock
    /// (whole seconds, as the meter counts them), for the keys watched
    /// ([`CapacityMeter::watch`]) only.
    pub served_per_second: HashMap<(Target, i64), (f64, f64)>,
    pub offered_per_second: HashMap<(Target, i64), (f64, f64)>,
    /// Writes that met a transaction in flight on one of their items:
    /// refused with DynamoDB's conflict error when enforcing, served
    /// anyway when recording. Charged as if they ran (assumed: the guide
    /// gives no figure for a conflict's cost; the dearer reading).
    pub conflicts: u64,
}

impl Metered {
    /// `charges` added to the units charged per key, and per second at
    /// `at` for the keys in `watched`.
    fn count(&mut self, charges: &[Charge], at: i64, watched: &HashSet<Target>) {
        add(&mut self.units, charges.iter(), |c| c.target.clone());
        let second = at.div_euclid(1_000);
        let watched_only = charges.iter().filter(|c| watched.contains(&c.target));
        add(&mut self.served_per_second, watched_only, |c| {
            (c.target.clone(), second)
        });
    }

    /// An attempt's estimate at `at` added to the units asked of each key
    /// (and per second, for the keys in `watched`).
    fn offer(&mut self, estimate: &[Charge], at: i64, watched: &HashSet<Target>) {
        add(&mut self.offered, estimate.iter(), |c| c.target.clone());
        let second = at.div_euclid(1_000);
        let watched_only = estimate.iter().filter(|c| watched.contains(&c.target));
        add(&mut self.offered_per_second, watched_only, |c| {
            (c.target.clone(), second)
        });
    }
}

/// `charges` added up under the key each gets.
fn add<'a, K: std::hash::Hash + Eq>(
    sums: &mut HashMap<K, (f64, f64)>,
    charges: impl Iterator<Item = &'a Charge>,
    key: impl Fn(&Charge) -> K,
) {
    for c in charges {
        let units = sums.entry(key(c)).or_default();
        units.0 += c.write_units;
        units.1 += c.read_units;
    }
}

#[derive(Debug)]
struct State {
    meter: Meter,
    /// Each item the meter saw whole, and where each item it saw written
    /// sits in the index.
    known: Known,
    /// When each item's last transaction began.
    ongoing: Ongoing,
    metered: Metered,
    /// Keys whose units are counted per second too.
    watched: HashSet<Target>,
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

    /// Meters and throttles as DynamoDB would, on a new table.
    pub fn enforcing() -> Self {
        Self::new(true)
    }

    /// Meters, never throttles, on a table of `limits`.
    pub fn recording_with(limits: Limits) -> Self {
        let meter = Self::new(false);
        meter.lock().meter = Meter::new(limits);
        meter
    }

    /// Meters and throttles as DynamoDB would, on a table of `limits`
    /// (such as [`Limits::WARMED`]).
    pub fn enforcing_with(limits: Limits) -> Self {
        let meter = Self::new(true);
        meter.lock().meter = Meter::new(limits);
        meter
    }

    fn new(enforcing: bool) -> Self {
        CapacityMeter {
            state: Arc::new(Mutex::new(State {
                meter: Meter::new(Limits::DYNAMODB),
                known: Known::default(),
                ongoing: Ongoing::default(),
                metered: Metered::default(),
                watched: HashSet::new(),
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

    /// Counts what `target` is charged per second from now on
    /// ([`Metered::per_second`]).
    pub fn watch(&self, target: &Target) {
        self.lock().watched.insert(target.clone());
    }

    /// The partition `target`'s load lands on now.
    pub fn partition_of(&self, target: &Target) -> PartitionId {
        self.lock().meter.partition_of(target)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A poisoned lock only means a thread panicked mid-update; the
        // meter's counts are still usable.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// What `request` would cost, priced as if it were answered: a write
    /// at the item's size as last seen (and after, where it can tell), a
    /// read at the least it can cost
    /// (DynamoDB cannot know a read's size before it reads; it is settled
    /// at what it read): its partitions and its estimate.
    fn estimate(&self, op: &str, request: &Value, state: &State) -> Vec<Charge> {
        let record = Recorded {
            op: op.to_owned(),
            request: request.clone(),
            status: Some(200),
            response: Value::Null,
            caller: None,
            ended_ms: None,
        };
        charges_after(&record, &self.schema, &state.known).0
    }

    /// The attempt's verdict at `at`: the error DynamoDB answers it with,
    /// if any, and what was reserved for it (nothing if it met a limit).
    fn decide(&self, op: &str, request: &Value, at: i64) -> Decision {
        let mut state = self.lock();
        if is_batch(op) {
            return self.decide_batch(op, request, at, &mut state);
        }
        let write = is_write(op);
        // A transaction's items are judged one by one (each gets its own
        // cancellation reason), then reserved together.
        let items: Vec<Vec<Charge>> = match op {
            "TransactWriteItems" => transaction_items(request)
                .map(|item| {
                    let one = serde_json::json!({ "TransactItems": [item] });
                    self.estimate(op, &one, &state)
                })
                .collect(),
            _ => vec![self.estimate(op, request, &state)],
        };
        {
            let State {
                metered, watched, ..
            } = &mut *state;
            for estimate in &items {
                metered.offer(estimate, at, watched);
            }
        }
        let verdicts: Vec<Result<(), Throttle>> = items
            .iter()
            .map(|estimate| state.meter.check(at, estimate, write))
            .collect();
        let throttles: Vec<Throttle> = verdicts.iter().filter_map(|v| v.clone().err()).collect();
        let Some(first) = throttles.first().cloned() else {
            let reserved: Vec<Charge> = items.into_iter().flatten().collect();
            state.meter.reserve(at, &reserved);
            return self.unless_conflicting(op, request, (reserved, at), &mut state);
        };
        for t in &throttles {
            *state.metered.throttled.entry(t.limit_met()).or_default() += 1;
        }
        let fault = match op {
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
        };
        Decision::refused(fault)
    }

    /// An attempt within every limit at `at`, `reserved` for it: refused
    /// if it writes an item a transaction ongoing then is changing
    /// (charged all the same), else served; a transaction served is
    /// ongoing from `at`.
    fn unless_conflicting(
        &self,
        op: &str,
        request: &Value,
        (reserved, at): (Vec<Charge>, i64),
        state: &mut State,
    ) -> Decision {
        let items = written_items(op, request, &self.schema);
        if let Some(fault) = state.ongoing.refusal(op, &items, at) {
            state.metered.conflicts += 1;
            if self.enforcing {
                return Decision {
                    fault: Some(fault),
                    ..Decision::served(reserved)
                };
            }
        }
        if op == "TransactWriteItems" {
            state.ongoing.begin(&items, at);
        }
        Decision::served(reserved)
    }

    /// A batch's verdict: its entries judged and reserved one by one, in
    /// order; refused whole only when none could be served.
    fn decide_batch(&self, op: &str, request: &Value, at: i64, state: &mut State) -> Decision {
        let write = is_write(op);
        let (mut served, mut reserved, mut first) = (Vec::new(), Vec::new(), None);
        for one in entries(op, request) {
            let estimate = self.estimate(op, &one, state);
            let State {
                metered, watched, ..
            } = &mut *state;
            metered.offer(&estimate, at, watched);
            match state.meter.check(at, &estimate, write) {
                Ok(()) => {
                    state.meter.reserve(at, &estimate);
                    reserved.extend(estimate);
                    served.push(true);
                }
                Err(throttle) => {
                    *state
                        .metered
                        .throttled
                        .entry(throttle.limit_met())
                        .or_default() += 1;
                    first.get_or_insert(throttle);
                    served.push(false);
                }
            }
        }
        match first {
            None => Decision::served(reserved),
            Some(throttle) if !served.contains(&true) => Decision::refused(Fault::Throttled {
                resource: resource(request, &throttle),
                throttle,
            }),
            Some(_) => Decision {
                partly: Some(split(op, request, &served)),
                ..Decision::served(reserved)
            },
        }
    }

    /// Settles an answered attempt at what it cost, and learns the items
    /// and the index entries it shows.
    fn charge(&self, record: &Recorded, at: i64, reserved: &[Charge]) {
        let mut state = self.lock();
        let (priced, changed) = charges_after(record, &self.schema, &state.known);
        state.known.absorb(changed);
        state.meter.settle(at, reserved, &priced);
        if priced.is_empty() {
            return;
        }
        state.metered.served += 1;
        let State {
            metered, watched, ..
        } = &mut *state;
        metered.count(&priced, at, watched);
    }
}

/// Whether DynamoDB counts `op` against the write quota.
pub fn is_write(op: &str) -> bool {
    matches!(
        op,
        "PutItem" | "UpdateItem" | "DeleteItem" | "BatchWriteItem" | "TransactWriteItems"
    )
}

/// The attempt as sent, whether the meter throttled it, and what it
/// reserved.
#[derive(Debug, Clone)]
struct Attempt {
    record: Recorded,
    at: i64,
    throttled: Option<Fault>,
    reserved: Vec<Charge>,
    /// A batch's entries the meter left unprocessed.
    unprocessed: Option<Value>,
}

impl Storable for Attempt {
    type Storer = StoreReplace<Self>;
}

/// What the meter decided for an attempt: the error it is answered with,
/// or what was reserved for it and, for a batch served in part, the
/// request sent on and the entries the answer must name unprocessed.
struct Decision {
    fault: Option<Fault>,
    reserved: Vec<Charge>,
    partly: Option<(Value, Value)>,
}

impl Decision {
    fn served(reserved: Vec<Charge>) -> Self {
        Decision {
            fault: None,
            reserved,
            partly: None,
        }
    }

    fn refused(fault: Fault) -> Self {
        Decision {
            fault: Some(fault),
            reserved: Vec::new(),
            partly: None,
        }
    }
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
        let op = operation(cfg);
        let mut request = body_json(context.request().body().bytes());
        let at = now_ms();
        // Decided either way: a recording meter counts what would have been
        // throttled, and serves it.
        let decision = self.decide(&op, &request, at);
        let throttled = decision.fault.filter(|_| self.enforcing);
        if throttled.is_some() {
            defuse(context.request_mut());
        }
        let mut unprocessed = None;
        if let Some((sent, left)) = decision.partly.filter(|_| self.enforcing) {
            resend_with(context.request_mut(), sent.to_string());
            (request, unprocessed) = (sent, Some(left));
        }
        cfg.interceptor_state().store_put(Attempt {
            record: Recorded {
                op,
                request,
                status: None,
                response: Value::Null,
                caller: None,
                ended_ms: None,
            },
            at,
            throttled,
            reserved: decision.reserved,
            unprocessed,
        });
        Ok(())
    }

    fn modify_before_deserialization(
        &self,
        context: &mut BeforeDeserializationInterceptorContextMut<'_>,
        _components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let Some(attempt) = cfg.load::<Attempt>() else {
            return Ok(());
        };
        if let Some(fault) = &attempt.throttled {
            *context.response_mut() = fault.response()?;
        } else if let Some(left) = attempt
            .unprocessed
            .as_ref()
            .filter(|_| context.response().status().is_success())
        {
            let response = context.response_mut();
            let answer = std::mem::replace(response.body_mut(), SdkBody::taken());
            *response.body_mut() = WithUnprocessed::body(answer, &attempt.record.op, left.clone());
            // Its length and checksum were DynamoDB Local's answer's.
            response.headers_mut().remove("content-length");
            response.headers_mut().remove("x-amz-crc32");
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
        // A refused attempt keeps what was reserved for it: nothing for a
        // throttle, its estimate for a conflict (counted as charged).
        if attempt.throttled.is_some() {
            let mut state = self.lock();
            let State {
                metered, watched, ..
            } = &mut *state;
            metered.count(&attempt.reserved, attempt.at, watched);
            return Ok(());
        }
        let response = context.response();
        attempt.record.status = response.map(|r| r.status().as_u16());
        attempt.record.response = body_json(response.and_then(|r| r.body().bytes()));
        self.charge(&attempt.record, attempt.at, &attempt.reserved);
        if attempt.record.op == "TransactWriteItems" && !simulated() {
            let items = written_items(&attempt.record.op, &attempt.record.request, &self.schema);
            self.lock().ongoing.end(&items, attempt.at);
        }
        Ok(())
    }
}
