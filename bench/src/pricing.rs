//! The on-sale's recorded requests priced and projected: the units each
//! costs by DynamoDB's rules, the old layout replayed on the same traffic,
//! and the ceiling each layout's hottest key allows.

use std::collections::BTreeSet;

use aws_sdk_dynamodb::types::{AttributeValue, KeysAndAttributes};

use crate::capacity::{self, KeyLoad, Schema, Target, PARTITION_READ_UNITS, PARTITION_WRITE_UNITS};
use crate::table_name;
use shared::store::{EVENT_PK_PREFIX, GA_PK_PREFIX, PENDING_SHARD_PREFIX, SEAT_PK_PREFIX};
use shared::App;
use std::collections::HashMap;

/// The pending-index shards of the old design.
const OLD_PENDING_SHARDS: u32 = 8;

/// The old layout: every seat of an event on the event's key, 8 shards.
pub(super) fn old_layout(t: &Target) -> Target {
    if t.index.is_some() {
        let shard =
            t.pk.strip_prefix(PENDING_SHARD_PREFIX)
                .and_then(|n| n.parse::<u32>().ok());
        return match shard {
            // The new shard count is a multiple of 8: an order's old shard
            // is its new one mod 8.
            Some(n) => Target {
                index: t.index.clone(),
                pk: format!("{PENDING_SHARD_PREFIX}{}", n % OLD_PENDING_SHARDS),
            },
            None => t.clone(),
        };
    }
    if let Some(rest) = t.pk.strip_prefix(GA_PK_PREFIX) {
        // The design general admission replaces: one counter per section.
        let counter = rest
            .rsplit_once('#')
            .map_or(rest, |(section, _bucket)| section);
        return Target::table(format!("{GA_PK_PREFIX}{counter}"));
    }
    match t
        .pk
        .strip_prefix(SEAT_PK_PREFIX)
        .and_then(|rest| rest.split('#').next())
    {
        Some(event) => Target::table(format!("{EVENT_PK_PREFIX}{event}")),
        None => t.clone(),
    }
}

/// Where the model's load lands under one key layout.
#[derive(Debug, Clone, Default)]
pub struct Projection {
    pub layout: &'static str,
    /// Hottest keys by write units, a few.
    pub hottest: Vec<KeyLoad>,
    /// The hottest key for reads.
    pub hottest_read: Option<KeyLoad>,
    /// Claim attempts/s at which the hottest key reaches a partition's
    /// write (or read) limit.
    pub ceiling: f64,
    /// Read units/s on the hottest-read key at that rate.
    pub reads_at_ceiling: f64,
}

pub(super) fn project(layout: &'static str, loads: Vec<KeyLoad>, attempts: f64) -> Projection {
    let hottest_read = loads
        .iter()
        .max_by(|a, b| a.read_units.total_cmp(&b.read_units))
        .cloned();
    let write_ceiling = loads.first().map_or(f64::INFINITY, |k| {
        PARTITION_WRITE_UNITS * attempts / k.write_units.max(1e-9)
    });
    let read_ceiling = hottest_read.as_ref().map_or(f64::INFINITY, |k| {
        PARTITION_READ_UNITS * attempts / k.read_units.max(1e-9)
    });
    let ceiling = write_ceiling.min(read_ceiling);
    let reads_at_ceiling = hottest_read
        .as_ref()
        .map_or(0.0, |k| k.read_units / attempts.max(1.0) * ceiling);
    Projection {
        layout,
        hottest: loads.into_iter().take(5).collect(),
        hottest_read,
        ceiling,
        reads_at_ceiling,
    }
}

/// Prices `records` in one ledger: each item at its size when touched,
/// as the records show it; an item they never show whole at its size
/// read back from the table at the end.
pub(super) async fn price(
    app: &App,
    records: &[capacity::Recorded],
) -> Result<Vec<capacity::Charge>, String> {
    Ok(flattened(&price_each(app, records).await?))
}

/// Every charge of `requests`, in order.
pub(super) fn flattened(requests: &[Priced]) -> Vec<capacity::Charge> {
    requests.iter().flat_map(|p| p.charges.clone()).collect()
}

/// Each of `records` priced (as [`price`] prices them, in one ledger),
/// with whether it writes: what the replay offers, in recorded order.
/// Records that cost nothing are left out.
pub(super) async fn price_each(
    app: &App,
    records: &[capacity::Recorded],
) -> Result<Vec<Priced>, String> {
    Ok(price_parts(app, &[records]).await?.concat())
}

/// [`price_each`] of the parts of one run that production sends side by
/// side (the buyers, the sweep, the projection), priced in one ledger in
/// the order given and kept apart, each in its recorded order.
pub(super) async fn price_parts(
    app: &App,
    parts: &[&[capacity::Recorded]],
) -> Result<Vec<Vec<Priced>>, String> {
    let records: Vec<capacity::Recorded> = parts.concat();
    let schema = Schema::seatclaim();
    let keys = capacity::touched_items(&records, &schema);
    let sizes = item_sizes(app, &keys).await?;
    let size = |pk: &str, sk: &str| sizes.get(&(pk.to_owned(), sk.to_owned())).copied();
    let mut each = capacity::charges_each(&records, &schema, &size, &|_, _| None).into_iter();
    let mut records = records.iter();
    Ok(parts
        .iter()
        .map(|part| {
            let priced = records.by_ref().zip(each.by_ref()).take(part.len());
            priced
                .filter(|(_, charges)| !charges.is_empty())
                .map(|(r, charges)| Priced {
                    write: capacity::is_write(&r.op),
                    retried: sdk_retries(&r.op),
                    charges,
                })
                .collect()
        })
        .collect())
}

pub(super) async fn item_sizes(
    app: &App,
    keys: &BTreeSet<(String, String)>,
) -> Result<HashMap<(String, String), usize>, String> {
    let table = table_name(app);
    let mut sizes = HashMap::new();
    let keys: Vec<_> = keys.iter().collect();
    for chunk in keys.chunks(100) {
        let mut wanted = KeysAndAttributes::builder();
        for (pk, sk) in chunk {
            wanted = wanted.keys(HashMap::from([
                (shared::store::PK.to_owned(), AttributeValue::S(pk.clone())),
                (shared::store::SK.to_owned(), AttributeValue::S(sk.clone())),
            ]));
        }
        let mut request = Some(HashMap::from([(
            table.clone(),
            wanted.build().map_err(|e| e.to_string())?,
        )]));
        while let Some(items) = request.take().filter(|r| !r.is_empty()) {
            let out = app
                .store
                .client()
                .batch_get_item()
                .set_request_items(Some(items))
                .send()
                .await
                .map_err(|e| e.to_string())?;
            for item in out
                .responses
                .unwrap_or_default()
                .remove(&table)
                .unwrap_or_default()
            {
                let key = |k: &str| {
                    item.get(k)
                        .and_then(|v| v.as_s().ok())
                        .cloned()
                        .unwrap_or_default()
                };
                sizes.insert(
                    (key(shared::store::PK), key(shared::store::SK)),
                    capacity::item_size(&capacity::wire_item(&item)),
                );
            }
            request = out.unprocessed_keys;
        }
    }
    Ok(sizes)
}

/// Whether the SDK retries `op` when it is throttled. A throttled
/// transaction is answered `TransactionCanceledException` with a
/// `ThrottlingError` reason, which the SDK does not classify as a
/// throttle: the store turns it into a 503 at once.
pub fn sdk_retries(op: &str) -> bool {
    op != "TransactWriteItems"
}

/// One recorded request as the replay needs it: whether it writes (the
/// quota it counts against), whether the SDK retries it, and the units it
/// consumed, per key.
#[derive(Debug, Clone)]
pub struct Priced {
    pub write: bool,
    pub retried: bool,
    pub charges: Vec<capacity::Charge>,
}
