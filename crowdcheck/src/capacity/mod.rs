//! What the bench's traffic would cost on real DynamoDB, per partition key.
//!
//! DynamoDB Local answers like DynamoDB but its `ConsumedCapacity` is not
//! faithful, and it has no per-partition limits at all. So the bench
//! records every request's wire JSON ([`CapacityRecorder`], an SDK
//! interceptor) and this module prices each one from item sizes by
//! DynamoDB's published rules ([`charges`]), then sums the price per table
//! or index partition key ([`totals`]): a partition serves at most 1,000
//! write units and 3,000 read units a second, so the hottest key bounds an
//! on-sale.
//!
//! Rules and sources (`units.rs` cites each where it is applied):
//! - item sizes: <https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html>
//! - read and write units per operation, failed conditional writes:
//!   <https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html>
//! - transactions: <https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-capacity-handling>
//! - index writes and index queries: <https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.ThroughputConsiderations>

mod attempt_facts;
mod batches;
mod conflicts;
mod expressions;
mod known;
pub mod meter;
mod metering;
mod recorder;
mod sizes;
mod units;
mod updates;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use conflicts::TRANSACTION_MS;
pub use metering::{at, is_write, CapacityMeter, Metered};
pub use recorder::{as_caller, CapacityRecorder, Recorded};
pub use units::{charges, charges_each, item_size, touched_items};

/// A partition's limits (DynamoDB developer guide, "partitions").
pub const PARTITION_WRITE_UNITS: f64 = 1_000.0;
pub const PARTITION_READ_UNITS: f64 = 3_000.0;

/// A DynamoDB client for a local endpoint that records every request for
/// pricing.
pub fn recording_client(endpoint: &str, recorder: CapacityRecorder) -> aws_sdk_dynamodb::Client {
    aws_sdk_dynamodb::Client::from_conf(local::local_config(endpoint).interceptor(recorder).build())
}

/// [`recording_client`] whose requests also pass through `meter` (the
/// recorder sees a throttled request as the meter answered it). Its
/// retries draw on a retry quota of its own: a throttled crowd must not
/// drain the one the process's other clients share.
pub fn metered_client(
    endpoint: &str,
    recorder: CapacityRecorder,
    meter: CapacityMeter,
) -> aws_sdk_dynamodb::Client {
    let partition = format!("seatclaim-metered-{}", uuid::Uuid::new_v4().simple());
    let config = local::local_config(endpoint)
        .retry_partition(aws_sdk_dynamodb::config::retry::RetryPartition::new(
            partition,
        ))
        .interceptor(recorder)
        .interceptor(meter);
    aws_sdk_dynamodb::Client::from_conf(config.build())
}

/// An item as the SDK returns it, in DynamoDB's wire JSON (what
/// [`item_size`] reads).
pub fn wire_item(
    item: &std::collections::HashMap<String, aws_sdk_dynamodb::types::AttributeValue>,
) -> serde_json::Map<String, serde_json::Value> {
    item.iter()
        .map(|(k, v)| (k.clone(), wire_value(v)))
        .collect()
}

fn wire_value(v: &aws_sdk_dynamodb::types::AttributeValue) -> serde_json::Value {
    use aws_sdk_dynamodb::types::AttributeValue as A;
    use base64::Engine;
    use serde_json::json;
    let b64 =
        |b: &aws_smithy_types::Blob| base64::engine::general_purpose::STANDARD.encode(b.as_ref());
    match v {
        A::S(s) => json!({"S": s}),
        A::N(n) => json!({"N": n}),
        A::B(b) => json!({"B": b64(b)}),
        A::Bool(b) => json!({"BOOL": b}),
        A::Null(n) => json!({"NULL": n}),
        A::L(l) => json!({"L": l.iter().map(wire_value).collect::<Vec<_>>()}),
        A::M(m) => json!({"M": wire_item(m)}),
        A::Ss(v) => json!({"SS": v}),
        A::Ns(v) => json!({"NS": v}),
        A::Bs(v) => json!({"BS": v.iter().map(b64).collect::<Vec<_>>()}),
        // A type newer than this code: sized as nothing.
        _ => json!({"NULL": true}),
    }
}

/// A global secondary index, as far as pricing needs it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexSpec {
    pub name: String,
    pub pk_attr: String,
    pub sk_attr: String,
}

impl IndexSpec {
    /// Pending orders by expiry (template.yaml), sharded, projecting keys
    /// only.
    pub fn pending_by_expiry() -> Self {
        Self {
            name: shared::store::PENDING_INDEX.to_owned(),
            pk_attr: shared::store::PENDING_SHARD.to_owned(),
            sk_attr: shared::store::PENDING_EXPIRES_AT.to_owned(),
        }
    }
    /// A queue's waiting visitors by join time (template.yaml),
    /// sharded, projecting their rank: an entry well under 1 KB.
    pub fn queue_by_join() -> Self {
        Self {
            name: shared::store::QUEUE_INDEX.to_owned(),
            pk_attr: shared::store::QUEUE_SHARD.to_owned(),
            sk_attr: shared::store::QUEUE_JOIN.to_owned(),
        }
    }
    /// The same visitors by rank (template.yaml), on the same shards,
    /// projecting their join time: the admitter reads each shard's front.
    pub fn queue_by_rank() -> Self {
        Self {
            name: shared::store::QUEUE_RANK_INDEX.to_owned(),
            pk_attr: shared::store::QUEUE_SHARD.to_owned(),
            sk_attr: shared::store::QUEUE_RANK.to_owned(),
        }
    }
}

/// The table's key attributes and its indexes: enough to tell which
/// partition a request lands on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Schema {
    pub pk_attr: String,
    pub sk_attr: String,
    pub indexes: Vec<IndexSpec>,
}

impl Schema {
    /// seatclaim's table: `PK`, `SK`, [`IndexSpec::pending_by_expiry`],
    /// [`IndexSpec::queue_by_join`] and [`IndexSpec::queue_by_rank`].
    pub fn seatclaim() -> Self {
        Self {
            pk_attr: shared::store::PK.to_owned(),
            sk_attr: shared::store::SK.to_owned(),
            indexes: vec![
                IndexSpec::pending_by_expiry(),
                IndexSpec::queue_by_join(),
                IndexSpec::queue_by_rank(),
            ],
        }
    }
}

/// One partition: of the table (`index: None`) or of an index.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Target {
    pub index: Option<String>,
    /// The partition key value as text (`EVENT#…`, `ORDER#…`, or an index
    /// shard such as `PENDING#3`).
    pub pk: String,
}

impl Target {
    pub fn table(pk: impl Into<String>) -> Self {
        Self {
            index: None,
            pk: pk.into(),
        }
    }
    pub fn index(index: impl Into<String>, pk: impl Into<String>) -> Self {
        Self {
            index: Some(index.into()),
            pk: pk.into(),
        }
    }
}

/// What one item access of one request costs on one partition.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Charge {
    pub target: Target,
    /// The DynamoDB operation of the request (`TransactWriteItems`, ...).
    pub op: String,
    pub write_units: f64,
    pub read_units: f64,
}

/// The summed load of one partition.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KeyLoad {
    pub target: Target,
    pub write_units: f64,
    pub read_units: f64,
    /// Charges summed here: one per item a request touched on this key (a
    /// transaction's items, a batch's keys and an index write count one
    /// each).
    pub requests: u64,
}

/// Sums `charges` per partition, hottest for writes first (then reads,
/// then by key). `map` re-keys each target first, so the same traffic can
/// be priced under another key layout (e.g. every `SEATS#ref#…` onto
/// `EVENT#ref`); pass `&|t| t.clone()` to keep the keys as recorded.
pub fn totals(charges: &[Charge], map: &dyn Fn(&Target) -> Target) -> Vec<KeyLoad> {
    let mut by_target: BTreeMap<Target, KeyLoad> = BTreeMap::new();
    for charge in charges {
        let target = map(&charge.target);
        let load = by_target.entry(target.clone()).or_insert_with(|| KeyLoad {
            target,
            write_units: 0.0,
            read_units: 0.0,
            requests: 0,
        });
        load.write_units += charge.write_units;
        load.read_units += charge.read_units;
        load.requests += 1;
    }
    let mut loads: Vec<KeyLoad> = by_target.into_values().collect();
    loads.sort_by(|a, b| {
        b.write_units
            .total_cmp(&a.write_units)
            .then(b.read_units.total_cmp(&a.read_units))
            .then_with(|| a.target.cmp(&b.target))
    });
    loads
}

/// The write and read units `charges` put on the table or on one of its
/// indexes, whichever takes the most, per kind: the per-table on-demand
/// quota holds for the table and for each global secondary index apart
/// (<https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html>),
/// as the meter counts it, so an index's writes never add to the table's.
pub fn units_nearest_quota(charges: &[Charge]) -> (f64, f64) {
    let mut by_table: BTreeMap<Option<&str>, (f64, f64)> = BTreeMap::new();
    for c in charges {
        let units = by_table.entry(c.target.index.as_deref()).or_default();
        units.0 += c.write_units;
        units.1 += c.read_units;
    }
    by_table
        .values()
        .fold((0.0, 0.0), |(w, r), units| (w.max(units.0), r.max(units.1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_index_counts_against_a_quota_of_its_own() {
        let charges = [
            charge(Target::table("ORDER#1"), 2.0, 1.0),
            charge(Target::table("SEATS#e#A"), 2.0, 0.0),
            charge(Target::index("PendingByExpiry", "PENDING#3"), 1.0, 0.0),
            charge(Target::index("QueueByRank", "QUEUE#1"), 0.0, 3.0),
        ];
        // Not 5 write units on one quota: the table's 4, its indexes' 1.
        assert_eq!(units_nearest_quota(&charges), (4.0, 3.0));
    }

    fn charge(target: Target, write_units: f64, read_units: f64) -> Charge {
        Charge {
            target,
            op: "Test".into(),
            write_units,
            read_units,
        }
    }

    #[test]
    fn sdk_items_size_like_their_wire_json() {
        use aws_sdk_dynamodb::types::AttributeValue as A;
        let item = std::collections::HashMap::from([
            ("PK".to_owned(), A::S("SEATS#r#A-1#0".into())),
            ("number".to_owned(), A::N("12".into())),
            (
                "seats".to_owned(),
                A::Ss(vec!["A-1-1".into(), "A-1-2".into()]),
            ),
        ]);
        let wire = serde_json::json!({"PK": {"S": "SEATS#r#A-1#0"}, "number": {"N": "12"}, "seats": {"SS": ["A-1-1", "A-1-2"]}});
        assert_eq!(
            item_size(&wire_item(&item)),
            item_size(wire.as_object().unwrap())
        );
        assert_eq!(item_size(&wire_item(&item)), 2 + 13 + 6 + 2 + 5 + 10);
    }

    #[test]
    fn totals_sum_per_key_hottest_write_first() {
        let charges = [
            charge(Target::table("EVENT#a"), 2.0, 0.0),
            charge(Target::table("ORDER#1"), 1.0, 1.0),
            charge(Target::table("EVENT#a"), 2.0, 0.5),
            charge(Target::index("PendingByExpiry", "PENDING#3"), 1.0, 0.0),
            charge(Target::table("EVENT#b"), 0.0, 4.0),
        ];
        let loads = totals(&charges, &|t| t.clone());
        let rows: Vec<(&str, f64, f64, u64)> = loads
            .iter()
            .map(|l| {
                (
                    l.target.pk.as_str(),
                    l.write_units,
                    l.read_units,
                    l.requests,
                )
            })
            .collect();
        assert_eq!(
            rows,
            [
                ("EVENT#a", 4.0, 0.5, 2),
                ("ORDER#1", 1.0, 1.0, 1),
                ("PENDING#3", 1.0, 0.0, 1),
                ("EVENT#b", 0.0, 4.0, 1),
            ]
        );
        assert_eq!(loads[2].target.index.as_deref(), Some("PendingByExpiry"));
    }

    #[test]
    fn totals_rekey_through_the_map() {
        // An older layout kept every seat in the event's partition: the same
        // traffic, re-keyed, lands on one key.
        let charges = [
            charge(Target::table("SEATS#r#A"), 2.0, 0.0),
            charge(Target::table("SEATS#r#B"), 2.0, 0.0),
            charge(Target::table("EVENT#r"), 1.0, 1.0),
            charge(Target::table("ORDER#9"), 1.0, 0.0),
        ];
        let old_layout = |t: &Target| match t
            .pk
            .strip_prefix("SEATS#")
            .and_then(|rest| rest.split('#').next())
        {
            Some(event) if t.index.is_none() => Target::table(format!("EVENT#{event}")),
            _ => t.clone(),
        };
        let loads = totals(&charges, &old_layout);
        assert_eq!(loads.len(), 2);
        assert_eq!(
            (
                loads[0].target.pk.as_str(),
                loads[0].write_units,
                loads[0].requests
            ),
            ("EVENT#r", 5.0, 3)
        );
    }
}
