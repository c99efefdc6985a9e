//! Counts the DynamoDB requests a client sends, per operation, with an SDK
//! interceptor: every transmitted attempt is one round trip (retries count).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use aws_sdk_dynamodb::config::interceptors::BeforeTransmitInterceptorContextRef;
use aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents};
use aws_smithy_runtime_api::box_error::BoxError;

/// Shared counters; clone it into the client and keep one to read.
#[derive(Debug, Clone, Default)]
pub struct RequestCounter {
    counts: Arc<Mutex<BTreeMap<String, u64>>>,
    /// The kinds of item (`Update`, `Put`, ...) transactions carried: IAM
    /// authorises each item's own action.
    transaction_items: Arc<Mutex<BTreeSet<String>>>,
}

impl RequestCounter {
    /// Requests per operation since the last call, and resets them.
    pub fn take(&self) -> BTreeMap<String, u64> {
        std::mem::take(&mut *self.lock())
    }

    /// Kinds of transaction items sent since the last call, and resets them.
    pub fn take_transaction_items(&self) -> BTreeSet<String> {
        std::mem::take(
            &mut *self
                .transaction_items
                .lock()
                .unwrap_or_else(|p| p.into_inner()),
        )
    }

    /// All requests since the last `take`.
    pub fn total(&self) -> u64 {
        self.lock().values().sum()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, u64>> {
        // A poisoned counter only means a test thread panicked mid-count;
        // the numbers are still the numbers.
        self.counts.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Intercept for RequestCounter {
    fn name(&self) -> &'static str {
        "RequestCounter"
    }

    fn read_before_transmit(
        &self,
        context: &BeforeTransmitInterceptorContextRef<'_>,
        _components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let op = crate::attempt::operation(cfg);
        if op == "TransactWriteItems" {
            let body = context.request().body().bytes().unwrap_or_default();
            let kinds = serde_json::from_slice::<serde_json::Value>(body)
                .ok()
                .and_then(|v| v["TransactItems"].as_array().cloned())
                .unwrap_or_default()
                .into_iter()
                .filter_map(|item| item.as_object().and_then(|o| o.keys().next().cloned()));
            self.transaction_items
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .extend(kinds);
        }
        *self.lock().entry(op).or_default() += 1;
        Ok(())
    }
}
