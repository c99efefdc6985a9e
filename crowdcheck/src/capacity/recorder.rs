//! Records each DynamoDB request and its response as wire JSON, with an SDK
//! interceptor, for [`super::charges`] to price.
//!
//! Which hook sees what (aws-smithy-runtime 1.16, tried against DynamoDB
//! Local): the request body is in memory up to `read_before_transmit` and
//! gone afterwards (the orchestrator takes the request to send it). The
//! response body is still a stream in `read_after_transmit` and
//! `read_before_deserialization` (`bytes()` is `None`); the orchestrator
//! reads it into memory just before deserializing a non-streaming
//! operation, so from `read_after_deserialization` on `bytes()` has it.
//! So the request is stashed in the attempt's config bag before transmit
//! and the record is made in `read_after_attempt`, which also runs for an
//! attempt that got no response at all (a timeout, a dropped connection).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use aws_sdk_dynamodb::config::interceptors::{
    BeforeTransmitInterceptorContextRef, FinalizerInterceptorContextRef,
};
use aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents};
use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_types::config_bag::{Storable, StoreReplace};
use local::attempt::{body_json, operation};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One transmitted attempt (SDK retries are attempts of their own: real
/// DynamoDB charges each one it serves).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Recorded {
    /// The operation name (`PutItem`, `TransactWriteItems`, ...).
    pub op: String,
    /// The request body; `Null` if it was not JSON.
    pub request: Value,
    /// `None` when no response arrived (timeout, dropped connection).
    pub status: Option<u16>,
    /// The response body (an error's is `{"__type": …, "message": …}`);
    /// `Null` if there was none or it was not JSON.
    pub response: Value,
    /// The function the request was made for, when the caller said
    /// ([`as_caller`]): how many round trips each function makes.
    #[serde(default)]
    pub caller: Option<String>,
    /// When the attempt ended, in wall-clock milliseconds since the epoch
    /// (`None` where it was not recorded from a client): when a write had
    /// landed at the latest.
    #[serde(default)]
    pub ended_ms: Option<i64>,
}

tokio::task_local! {
    static CALLER: &'static str;
}

/// Runs `work` with the DynamoDB requests it makes in its own task
/// recorded as made for `function`. The SDK runs its interceptors inside
/// the request's task, so a task-local reaches them; requests `work`
/// makes in tasks it spawns (a sweep's releases, a section's row reads)
/// are not tagged: record such work alone instead.
pub async fn as_caller<F: std::future::Future>(function: &'static str, work: F) -> F::Output {
    CALLER.scope(function, work).await
}

/// The interceptor: clone it into the client's config and keep one to
/// switch recording and take the records.
///
/// Recording is off until [`set_recording`](Self::set_recording)`(true)`,
/// so setup traffic (the table, the events) stays out of the measurement.
#[derive(Clone, Debug, Default)]
pub struct CapacityRecorder {
    recording: Arc<AtomicBool>,
    records: Arc<Mutex<Vec<Recorded>>>,
}

/// The request of the attempt under way, from transmit to the attempt's end.
#[derive(Clone, Debug)]
struct Sent {
    op: String,
    request: Value,
    caller: Option<String>,
}

impl Storable for Sent {
    type Storer = StoreReplace<Self>;
}

impl CapacityRecorder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Records attempts transmitted from now on (`true`) or none (`false`).
    pub fn set_recording(&self, on: bool) {
        self.recording.store(on, Ordering::SeqCst);
    }

    /// The records since the last call, oldest first, and forgets them.
    pub fn take(&self) -> Vec<Recorded> {
        std::mem::take(&mut *self.lock())
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Recorded>> {
        // A poisoned lock only means a thread panicked while pushing; the
        // records are still the records.
        self.records.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Intercept for CapacityRecorder {
    fn name(&self) -> &'static str {
        "CapacityRecorder"
    }

    fn read_before_transmit(
        &self,
        context: &BeforeTransmitInterceptorContextRef<'_>,
        _components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let sent = self.recording.load(Ordering::SeqCst).then(|| Sent {
            op: operation(cfg),
            request: body_json(context.request().body().bytes()),
            caller: CALLER.try_with(|f| (*f).to_owned()).ok(),
        });
        // Unset when not recording, so a retry never reuses an earlier
        // attempt's request.
        cfg.interceptor_state().store_or_unset(sent);
        Ok(())
    }

    fn read_after_attempt(
        &self,
        context: &FinalizerInterceptorContextRef<'_>,
        _components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let Some(Sent {
            op,
            request,
            caller,
        }) = cfg.load::<Sent>().cloned()
        else {
            return Ok(());
        };
        cfg.interceptor_state().unset::<Sent>();
        let response = context.response();
        self.lock().push(Recorded {
            op,
            request,
            status: response.map(|r| r.status().as_u16()),
            response: body_json(response.and_then(|r| r.body().bytes())),
            caller,
            ended_ms: Some(wall_ms()),
        });
        Ok(())
    }
}

/// The wall clock now, in milliseconds since the epoch (never a test's
/// clock: a record says when its attempt really ended).
fn wall_ms() -> i64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    since.map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use aws_sdk_dynamodb::config::SharedInterceptor;
    use aws_sdk_dynamodb::types::AttributeValue;

    use super::super::{charges, Schema, Target};
    use super::*;

    fn s(v: &str) -> AttributeValue {
        AttributeValue::S(v.to_owned())
    }

    /// Against DynamoDB Local: the recorder sees requests and responses
    /// whole, including a Query's items and an error's type.
    #[tokio::test]
    async fn records_requests_and_response_bodies() {
        let recorder = CapacityRecorder::new();
        let endpoint = local::dynamodb_local::process_endpoint();
        let client =
            local::faults::production_client(&endpoint, [SharedInterceptor::new(recorder.clone())]);
        let table = format!("seatclaim-capacity-{}", uuid::Uuid::new_v4().simple());
        let spec = local::table::TableSpec::from_repo().unwrap_or_else(|e| panic!("{e}"));
        spec.create(&client, &table)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(recorder.take().is_empty(), "off until switched on");

        recorder.set_recording(true);
        for sk in ["SEAT#A-1-1", "SEAT#A-1-2"] {
            let put = client
                .put_item()
                .table_name(&table)
                .item("PK", s("EVENT#cap"))
                .item("SK", s(sk))
                .item("status", s("AVAILABLE"));
            put.send().await.unwrap_or_else(|e| panic!("put: {e:?}"));
        }
        let again = client
            .put_item()
            .table_name(&table)
            .item("PK", s("EVENT#cap"))
            .item("SK", s("SEAT#A-1-1"))
            .condition_expression("attribute_not_exists(PK)")
            .send()
            .await;
        assert!(again.is_err(), "the seat exists");
        let query = client
            .query()
            .table_name(&table)
            .key_condition_expression("#pk = :pk AND begins_with(SK, :seat)")
            .expression_attribute_names("#pk", "PK")
            .expression_attribute_values(":pk", s("EVENT#cap"))
            .expression_attribute_values(":seat", s("SEAT#"))
            .consistent_read(true)
            .send()
            .await
            .unwrap_or_else(|e| panic!("query: {e:?}"));
        assert_eq!(query.count, 2);
        recorder.set_recording(false);
        let _ = client
            .get_item()
            .table_name(&table)
            .key("PK", s("EVENT#cap"))
            .key("SK", s("EVENT"))
            .send()
            .await;

        let records = recorder.take();
        let ops: Vec<&str> = records.iter().map(|r| r.op.as_str()).collect();
        assert_eq!(
            ops,
            ["PutItem", "PutItem", "PutItem", "Query"],
            "nothing after recording stopped"
        );
        assert!(recorder.take().is_empty(), "take empties");

        let failed = &records[2];
        assert_eq!(failed.status, Some(400));
        assert_eq!(
            failed.request["ConditionExpression"],
            "attribute_not_exists(PK)"
        );
        let error = failed.response["__type"].as_str().unwrap_or_default();
        assert!(
            error.ends_with("#ConditionalCheckFailedException"),
            "{}",
            failed.response
        );

        let recorded = &records[3];
        assert_eq!(recorded.status, Some(200));
        assert_eq!(
            recorded.request["ExpressionAttributeValues"][":pk"]["S"],
            "EVENT#cap"
        );
        let items = recorded.response["Items"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert_eq!(
            items.len(),
            2,
            "the response carries its items: {}",
            recorded.response
        );
        assert_eq!(items[1]["SK"]["S"], "SEAT#A-1-2");

        let priced = charges(
            &records[3..],
            &Schema::seatclaim(),
            &|_, _| None,
            &|_, _| None,
        );
        assert_eq!(priced.len(), 1);
        assert_eq!(
            (&priced[0].target, priced[0].read_units),
            (&Target::table("EVENT#cap"), 1.0)
        );
    }
}
