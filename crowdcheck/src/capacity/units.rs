//! The capacity units each recorded request costs.

use std::collections::BTreeSet;

use serde_json::Value;

use super::expressions::{
    index_key_changes, key_text, partition_of_key_condition, resolve, tokens,
};
pub use super::known::Known;
use super::known::Seen;
pub use super::sizes::item_size;
use super::updates::updated;
use super::{Charge, Recorded, Schema, Target};

const WRITE_UNIT_BYTES: usize = 1024;
const READ_UNIT_BYTES: usize = 4096;

/// Whether `body`'s condition holds only where no item is: it requires
/// `attribute_not_exists(pk)` and has no `OR` that could let an existing
/// item through.
fn creates(body: &Value, pk_attr: &str) -> bool {
    let Some(condition) = body["ConditionExpression"].as_str() else {
        return false;
    };
    let names = &body["ExpressionAttributeNames"];
    let words = tokens(condition);
    let requires_absent = words.windows(4).any(|w| {
        w[0].eq_ignore_ascii_case("attribute_not_exists")
            && w[1] == "("
            && resolve(w[2], names) == pk_attr
            && w[3] == ")"
    });
    requires_absent && !words.iter().any(|w| w.eq_ignore_ascii_case("OR"))
}

/// Writes round the item size up to the next 1 KB; any write costs at
/// least one unit.
fn write_units(size: usize) -> f64 {
    size.div_ceil(WRITE_UNIT_BYTES).max(1) as f64
}

/// Reads round up to the next 4 KB, at least one unit (also for an item
/// not found); eventually consistent reads cost half.
fn read_units(size: usize, consistent: bool) -> f64 {
    let units = size.div_ceil(READ_UNIT_BYTES).max(1) as f64;
    if consistent {
        units
    } else {
        units / 2.0
    }
}

fn error_type(response: &Value) -> &str {
    let full = response["__type"].as_str().unwrap_or_default();
    full.rsplit('#').next().unwrap_or(full)
}

/// Whether DynamoDB would charge the attempt, and if so whether it took
/// effect. Failed conditions are charged
/// (<https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html#write-operation-consumption>:
/// a failed conditional write still consumes write units). A cancelled
/// transaction is charged in full too: the transaction page
/// (<https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-capacity-handling>)
/// does not say what one costs, and failed conditional writes cost too.
/// Everything else (throttling, validation, 5xx, no response) is not
/// charged: DynamoDB did no work we can price, or we cannot tell.
fn outcome(r: &Recorded) -> Option<Effect> {
    match (r.status, error_type(&r.response)) {
        (Some(200), _) => Some(Effect::Applied),
        (Some(400), "ConditionalCheckFailedException" | "TransactionCanceledException") => {
            Some(Effect::Failed)
        }
        _ => None,
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Effect {
    Applied,
    Failed,
}

/// Prices each charged record, per item touched, in record order.
///
/// - `item_size(pk, sk)`: the item's size in bytes where known (the bench
///   reads every touched item at the end, [`touched_items`]), for items no
///   earlier record showed whole. An item a record put, read back whole,
///   or deleted is priced from then on at its size at the time: writes
///   cost the larger of the item before and after, and an update's after
///   is its expression applied to the item as the records left it. Where
///   the records never showed the item, `item_size`'s one size stands for
///   both (and, for a put, with the item sent).
/// - `index_pk(index, table pk)`: the partition key the item had in that
///   index before the write, `None` if it was not in the index. Asked only for successful
///   updates that set or remove an index key attribute, and deletes, of
///   items no earlier record wrote: for the others the records tell (a
///   pending order put while recording carries its shard).
///
/// Priced: PutItem, UpdateItem, DeleteItem, BatchWriteItem,
/// TransactWriteItems, GetItem, BatchGetItem, TransactGetItems, Query.
/// Other operations (Scan, table management) are not priced: the
/// measured traffic has none. All records are taken to be on one table.
pub fn charges(
    records: &[Recorded],
    schema: &Schema,
    item_size: &dyn Fn(&str, &str) -> Option<usize>,
    index_pk: &dyn Fn(&str, &str) -> Option<String>,
) -> Vec<Charge> {
    charges_each(records, schema, item_size, index_pk).concat()
}

/// [`charges`], one list per record (empty for a record that cost
/// nothing), priced in order as one ledger: what an item's index entry
/// costs depends on the records before it.
pub fn charges_each(
    records: &[Recorded],
    schema: &Schema,
    item_size: &dyn Fn(&str, &str) -> Option<usize>,
    index_pk: &dyn Fn(&str, &str) -> Option<String>,
) -> Vec<Vec<Charge>> {
    priced_in_order(records, schema, (item_size, index_pk), &Known::default()).0
}

/// [`charges`] of `record` after the requests that left `known` (nothing
/// else is known of an item's size or index entry), and what it changed.
pub fn charges_after(record: &Recorded, schema: &Schema, known: &Known) -> (Vec<Charge>, Known) {
    let (each, changed) = priced_in_order(
        std::slice::from_ref(record),
        schema,
        (&|_, _| None, &|_, _| None),
        known,
    );
    (each.concat(), changed)
}

/// What a ledger asks of items no record has shown: their size, and
/// their partition key in an index (see [`charges`]).
type Oracles<'a> = (
    &'a dyn Fn(&str, &str) -> Option<usize>,
    &'a dyn Fn(&str, &str) -> Option<String>,
);

fn priced_in_order(
    records: &[Recorded],
    schema: &Schema,
    (item_size, index_pk): Oracles,
    base: &Known,
) -> (Vec<Vec<Charge>>, Known) {
    let mut ledger = Ledger {
        schema,
        item_size,
        index_pk,
        base,
        known: Known::default(),
        op: "",
        out: Vec::new(),
    };
    let mut each = Vec::with_capacity(records.len());
    for record in records {
        if let Some(effect) = outcome(record) {
            ledger.op = &record.op;
            ledger.price(record, effect);
        }
        each.push(std::mem::take(&mut ledger.out));
    }
    (each, ledger.known)
}

/// The table keys (pk, sk) of every item the records write or check, for
/// the bench to read back and answer `charges`' size oracle.
pub fn touched_items(records: &[Recorded], schema: &Schema) -> BTreeSet<(String, String)> {
    let mut keys = BTreeSet::new();
    let mut add = |item: &Value| {
        if let Some(pk) = key_text(&item[&schema.pk_attr]) {
            keys.insert((pk, key_text(&item[&schema.sk_attr]).unwrap_or_default()));
        }
    };
    for r in records {
        let req = &r.request;
        match r.op.as_str() {
            "PutItem" => add(&req["Item"]),
            "UpdateItem" | "DeleteItem" => add(&req["Key"]),
            "TransactWriteItems" => {
                for item in array(&req["TransactItems"]) {
                    for (kind, body) in item.as_object().into_iter().flatten() {
                        add(&body[if kind == "Put" { "Item" } else { "Key" }]);
                    }
                }
            }
            "BatchWriteItem" => {
                for entry in batch_entries(&req["RequestItems"]) {
                    add(&entry["PutRequest"]["Item"]);
                    add(&entry["DeleteRequest"]["Key"]);
                }
            }
            _ => {}
        }
    }
    keys
}

fn array(v: &Value) -> &[Value] {
    v.as_array().map_or(&[], Vec::as_slice)
}

fn batch_entries(request_items: &Value) -> impl Iterator<Item = &Value> {
    request_items
        .as_object()
        .into_iter()
        .flat_map(|tables| tables.values())
        .flat_map(array)
}

struct Ledger<'a> {
    schema: &'a Schema,
    item_size: &'a dyn Fn(&str, &str) -> Option<usize>,
    index_pk: &'a dyn Fn(&str, &str) -> Option<String>,
    /// What earlier requests showed, and what these records show: read
    /// in that order, these first.
    base: &'a Known,
    known: Known,
    op: &'a str,
    out: Vec<Charge>,
}

/// Transactions do every item's work twice, to prepare and to commit
/// (<https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-capacity-handling>).
const TRANSACTIONAL: f64 = 2.0;
const STANDARD: f64 = 1.0;

impl Ledger<'_> {
    fn charge(&mut self, target: Target, write_units: f64, read_units: f64) {
        self.out.push(Charge {
            target,
            op: self.op.to_owned(),
            write_units,
            read_units,
        });
    }

    fn keys(&self, item: &Value) -> (String, String) {
        let text = |attr: &str| key_text(&item[attr]).unwrap_or_default();
        (text(&self.schema.pk_attr), text(&self.schema.sk_attr))
    }

    /// The item's size before the record at hand: as the records so far
    /// left it, else `item_size`'s.
    fn stored_size(&self, pk: &str, sk: &str) -> usize {
        match self.seen(&(pk.to_owned(), sk.to_owned())) {
            Seen::Whole(item) => item_size(item),
            Seen::Deleted => 0,
            Seen::Unknown => (self.item_size)(pk, sk).unwrap_or(0),
        }
    }

    /// Learns the item under `key` as the record left it.
    fn learn(&mut self, key: (String, String), item: Seen) {
        self.known.seen.insert(key, item);
    }

    /// A write that applied under `attribute_not_exists` of the partition
    /// key (and no `OR`) created its item: there was none before it,
    /// whatever the ledger knew. How the store creates orders, visitors
    /// and every other item it makes.
    fn note_created(&mut self, key: &Value, body: &Value, applied: bool) {
        if applied && creates(body, &self.schema.pk_attr) {
            self.learn(self.keys(key), Seen::Deleted);
        }
    }

    /// The item under `key` as the records left it ([`Seen::Unknown`] if
    /// they never showed it).
    fn seen(&self, key: &(String, String)) -> &Seen {
        let known = self.known.seen.get(key);
        known
            .or_else(|| self.base.seen.get(key))
            .unwrap_or(&Seen::Unknown)
    }

    /// The item's pk in `index` before the write at hand.
    fn index_pk_before(&self, index: &str, pk: &str) -> Option<String> {
        let key = (index.to_owned(), pk.to_owned());
        let known = self.known.indexed.get(&key);
        known
            .or_else(|| self.base.indexed.get(&key))
            .cloned()
            .unwrap_or_else(|| (self.index_pk)(index, pk))
    }

    fn price(&mut self, r: &Recorded, effect: Effect) {
        let (req, resp) = (&r.request, &r.response);
        let applied = effect == Effect::Applied;
        match r.op.as_str() {
            "PutItem" => self.put(req, STANDARD, applied),
            "UpdateItem" => self.update(req, STANDARD, applied),
            "DeleteItem" => self.delete(req, STANDARD, applied),
            "BatchWriteItem" => self.batch_write(req, resp),
            "TransactWriteItems" => {
                for item in array(&req["TransactItems"]) {
                    let Some((kind, body)) = item.as_object().and_then(|o| o.iter().next()) else {
                        continue;
                    };
                    // A cancelled transaction wrote nothing: no index entry moves.
                    match kind.as_str() {
                        "Put" => self.put(body, TRANSACTIONAL, applied),
                        "Update" => self.update(body, TRANSACTIONAL, applied),
                        "Delete" => self.delete(body, TRANSACTIONAL, applied),
                        // Priced as a write, not a read: the transaction page
                        // says only "two underlying reads or writes of every
                        // item"; a published measurement of ConsumedCapacity
                        // (martinhicks.dev, "What a conditional DynamoDB
                        // transaction actually costs") found 2 write units
                        // for a ConditionCheck of a small item, no reads.
                        "ConditionCheck" => {
                            self.table_write(&body["Key"], 0, TRANSACTIONAL);
                        }
                        _ => {}
                    }
                }
            }
            "GetItem" => {
                let consistent = req["ConsistentRead"] == Value::Bool(true);
                // No body to read (not JSON): the stored size, nothing
                // learned.
                let returned = resp.is_object().then(|| &resp["Item"]);
                self.get(req, returned, consistent, STANDARD);
            }
            "TransactGetItems" => {
                // Always serializable; a cancelled one has no responses and
                // is priced from the stored sizes.
                let answered = resp["Responses"].is_array();
                for (i, item) in array(&req["TransactItems"]).iter().enumerate() {
                    let returned = answered.then(|| &resp["Responses"][i]["Item"]);
                    self.get(&item["Get"], returned, true, TRANSACTIONAL);
                }
            }
            "BatchGetItem" => self.batch_get(req, resp),
            "Query" => self.query(req, resp),
            _ => {}
        }
    }

    /// One table write of the larger of `sent` bytes and the stored item
    /// (<https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html#write-operation-consumption>:
    /// puts and updates cost the larger of before and after, deletes the
    /// deleted item, a failed conditional write the item's size, and at
    /// least 1 unit).
    fn table_write(&mut self, key: &Value, sent: usize, factor: f64) -> String {
        let (pk, sk) = self.keys(key);
        let size = sent.max(self.stored_size(&pk, &sk));
        self.charge(Target::table(pk.clone()), factor * write_units(size), 0.0);
        pk
    }

    /// One index write: keys-only entries are far below 1 KB. A
    /// transaction's index writes are priced as standard writes: the docs
    /// double the transaction's table items only, and the index is updated
    /// after the commit ("propagated ... after the transaction completes").
    fn index_write(&mut self, index: &str, index_pk: String) {
        self.charge(Target::index(index, index_pk), write_units(0), 0.0);
    }

    /// A put costs the larger of the item sent and the item stored (for a
    /// failed conditional put of an item that never existed the docs say 1
    /// unit; the sent size is charged, which only differs above 1 KB).
    fn put(&mut self, body: &Value, factor: f64, applied: bool) {
        let item = &body["Item"];
        self.note_created(item, body, applied);
        let sent = item.as_object().map_or(0, item_size);
        self.table_write(item, sent, factor);
        if applied {
            let whole = item.as_object().cloned().map_or(Seen::Unknown, Seen::Whole);
            self.learn(self.keys(item), whole);
        }
        // A new item with both index key attributes is put into the (sparse)
        // index; one lacking either is not indexed
        // (<https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.ThroughputConsiderations.Writes>).
        // Our puts only create items, so no old entry is deleted.
        if !applied {
            return;
        }
        let schema = self.schema;
        let pk = key_text(&item[&schema.pk_attr]).unwrap_or_default();
        for index in &schema.indexes {
            let shard = key_text(&item[&index.pk_attr]).filter(|_| !item[&index.sk_attr].is_null());
            self.known
                .indexed
                .insert((index.name.clone(), pk.clone()), shard.clone());
            if let Some(shard) = shard {
                self.index_write(&index.name, shard);
            }
        }
    }

    fn delete(&mut self, body: &Value, factor: f64, applied: bool) {
        let pk = self.table_write(&body["Key"], 0, factor);
        if !applied {
            return;
        }
        self.learn(self.keys(&body["Key"]), Seen::Deleted);
        let schema = self.schema;
        for index in &schema.indexes {
            if let Some(old) = self.index_pk_before(&index.name, &pk) {
                self.index_write(&index.name, old);
            }
            self.known
                .indexed
                .insert((index.name.clone(), pk.clone()), None);
        }
    }

    /// An update that changes an index key attribute moves the item's
    /// index entry: a delete of the old entry if there was one, a put of
    /// the new one if the item still has both keys (same GSI page).
    ///
    /// It costs the larger of the item before and after: after is the
    /// expression applied to the item as the records left it, when they
    /// showed it whole ([`updated`]); otherwise `item_size` stands for both.
    fn update(&mut self, body: &Value, factor: f64, applied: bool) {
        self.note_created(&body["Key"], body, applied);
        let key = self.keys(&body["Key"]);
        let after = match (self.seen(&key), applied) {
            (Seen::Whole(before), true) => updated(before, body),
            // An update of an item that is not there creates it with its
            // key.
            (Seen::Deleted, true) => body["Key"].as_object().and_then(|key| updated(key, body)),
            _ => None,
        };
        let sent = after.as_ref().map_or(0, item_size);
        let pk = self.table_write(&body["Key"], sent, factor);
        if !applied {
            return;
        }
        self.learn(key, after.map_or(Seen::Unknown, Seen::Whole));
        let schema = self.schema;
        for index in &schema.indexes {
            let changes = index_key_changes(body, index);
            if !changes.touched() {
                continue;
            }
            let old = self.index_pk_before(&index.name, &pk);
            let new = if changes.removed {
                None
            } else if let Some(set) = changes.pk_set {
                set
            } else {
                old.clone()
            };
            self.known
                .indexed
                .insert((index.name.clone(), pk.clone()), new.clone());
            for shard in old.into_iter().chain(new) {
                self.index_write(&index.name, shard);
            }
        }
    }

    fn batch_write(&mut self, req: &Value, resp: &Value) {
        let unprocessed: Vec<&Value> = batch_entries(&resp["UnprocessedItems"]).collect();
        for entry in batch_entries(&req["RequestItems"]) {
            if unprocessed.contains(&entry) {
                continue;
            }
            if entry.get("PutRequest").is_some() {
                self.put(&entry["PutRequest"], STANDARD, true);
            } else if entry.get("DeleteRequest").is_some() {
                self.delete(&entry["DeleteRequest"], STANDARD, true);
            }
        }
    }

    /// A single-item read. `returned` is the item in the response, `None`
    /// if the response has none to show (a cancelled transaction): the
    /// stored size stands in then, and when a projection returned only part
    /// of the item (the whole item is read). An item not found costs the
    /// minimum.
    fn get(&mut self, body: &Value, returned: Option<&Value>, consistent: bool, factor: f64) {
        let (pk, sk) = self.keys(&body["Key"]);
        let size = match returned.map(Value::as_object) {
            Some(Some(item)) if body["ProjectionExpression"].is_null() => {
                self.learn((pk.clone(), sk.clone()), Seen::Whole(item.clone()));
                item_size(item)
            }
            Some(Some(item)) => item_size(item).max(self.stored_size(&pk, &sk)),
            Some(None) => {
                self.learn((pk.clone(), sk.clone()), Seen::Deleted);
                0
            }
            None => self.stored_size(&pk, &sk),
        };
        self.charge(
            Target::table(pk),
            0.0,
            factor * read_units(size, consistent),
        );
    }

    /// Each key of a batch is priced as its own GetItem
    /// (<https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html#read-operation-consumption>);
    /// unprocessed keys were not read.
    fn batch_get(&mut self, req: &Value, resp: &Value) {
        let Some(tables) = req["RequestItems"].as_object() else {
            return;
        };
        for (table, spec) in tables {
            let unprocessed = array(&resp["UnprocessedKeys"][table]["Keys"]);
            let returned = array(&resp["Responses"][table]);
            let consistent = spec["ConsistentRead"] == Value::Bool(true);
            for key in array(&spec["Keys"])
                .iter()
                .filter(|k| !unprocessed.contains(k))
            {
                let wanted = self.keys(key);
                let found = returned
                    .iter()
                    .find(|item| self.keys(item) == wanted)
                    .cloned()
                    .unwrap_or(Value::Null);
                // No body to read (not JSON): the stored size, nothing
                // learned.
                let found = resp.is_object().then_some(&found);
                let get = serde_json::json!({ "Key": key, "ProjectionExpression": spec["ProjectionExpression"] });
                self.get(&get, found, consistent, STANDARD);
            }
        }
    }

    /// A query costs the summed size of the items it returns, rounded up to
    /// 4 KB once, at least one unit; an index query sums index entries
    /// (read-write-operations.html, GSI.html#GSI.ThroughputConsiderations.Reads).
    /// Its partition is the value the key condition compares the partition
    /// key attribute with (`PK = :pk`, `#shard = :shard`); `?` if none is
    /// found.
    /// DynamoDB charges what it *evaluates*: with a FilterExpression that
    /// is more than it returns. The measured traffic uses no filter, so
    /// returned = evaluated (list-seats' section filter would undercount).
    /// A ProjectionExpression or `Select: COUNT` would undercount likewise.
    fn query(&mut self, req: &Value, resp: &Value) {
        let index = req["IndexName"].as_str();
        let pk_attr = match index {
            None => Some(self.schema.pk_attr.as_str()),
            Some(name) => self
                .schema
                .indexes
                .iter()
                .find(|i| i.name == name)
                .map(|i| i.pk_attr.as_str()),
        };
        let pk = partition_of_key_condition(req, pk_attr).unwrap_or_else(|| "?".to_owned());
        let items = array(&resp["Items"]).iter().filter_map(Value::as_object);
        let size: usize = items.clone().map(item_size).sum();
        // A table query without a projection shows its items whole.
        if index.is_none() && req["ProjectionExpression"].is_null() {
            for item in items {
                let key = self.keys(&Value::Object(item.clone()));
                self.learn(key, Seen::Whole(item.clone()));
            }
        }
        // Index queries are always eventually consistent.
        let consistent = req["ConsistentRead"] == Value::Bool(true);
        let target = Target {
            index: index.map(str::to_owned),
            pk,
        };
        self.charge(target, 0.0, read_units(size, consistent));
    }
}

#[cfg(test)]
#[path = "units_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "units_known_tests.rs"]
mod known_tests;
