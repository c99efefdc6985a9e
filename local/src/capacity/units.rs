//! Item sizes and the capacity units each recorded request costs.

use std::collections::{BTreeSet, HashMap};

use serde_json::{Map, Value};

use super::{Charge, Recorded, Schema, Target};

/// The size DynamoDB bills an item at, from its wire JSON (attribute name
/// to `{"S": …}`, `{"N": …}`, ...): the sum of attribute name lengths and
/// value sizes, by the published rules
/// (<https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html>).
pub fn item_size(item: &Map<String, Value>) -> usize {
    item.iter().map(|(name, value)| name.len() + value_size(value)).sum()
}

fn value_size(value: &Value) -> usize {
    let Some((kind, v)) = value.as_object().and_then(|o| o.iter().next()) else { return 0 };
    let all = |f: fn(&str) -> usize| v.as_array().map_or(0, |a| a.iter().filter_map(Value::as_str).map(f).sum());
    match kind.as_str() {
        // UTF-8 bytes.
        "S" => v.as_str().map_or(0, str::len),
        "N" => v.as_str().map_or(0, number_size),
        // Raw bytes, not the base64 that carries them.
        "B" => v.as_str().map_or(0, base64_len),
        "BOOL" | "NULL" => 1,
        // 3 bytes of overhead, and 1 per element; a map's elements are
        // name-value pairs, so their names count too.
        "L" => 3 + v.as_array().map_or(0, |a| a.iter().map(|e| 1 + value_size(e)).sum()),
        "M" => 3 + v.as_object().map_or(0, |m| m.iter().map(|(k, e)| 1 + k.len() + value_size(e)).sum()),
        // The page says nothing of sets: the sum of their elements, each
        // sized as a scalar of its type.
        "SS" => all(str::len),
        "NS" => all(number_size),
        "BS" => all(base64_len),
        _ => 0,
    }
}

/// "Approximately 1 byte per two significant digits, plus 1 byte", leading
/// and trailing zeros trimmed (sign, point and exponent are not digits).
fn number_size(n: &str) -> usize {
    let mantissa = n.split(['e', 'E']).next().unwrap_or_default();
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    digits.trim_start_matches('0').trim_end_matches('0').len().div_ceil(2) + 1
}

/// Decoded length of base64 text, padded or not.
fn base64_len(b64: &str) -> usize {
    let symbols = b64.trim().trim_end_matches('=').len();
    symbols * 6 / 8
}

const WRITE_UNIT_BYTES: usize = 1024;
const READ_UNIT_BYTES: usize = 4096;

/// Writes round the item size up to the next 1 KB; any write costs at
/// least one unit.
fn write_units(size: usize) -> f64 {
    size.div_ceil(WRITE_UNIT_BYTES).max(1) as f64
}

/// Reads round up to the next 4 KB, at least one unit (also for an item
/// not found); eventually consistent reads cost half.
fn read_units(size: usize, consistent: bool) -> f64 {
    let units = size.div_ceil(READ_UNIT_BYTES).max(1) as f64;
    if consistent { units } else { units / 2.0 }
}

/// The text of a key attribute's value (`{"S": "EVENT#…"}` → `EVENT#…`).
fn key_text(value: &Value) -> Option<String> {
    let (_, v) = value.as_object()?.iter().next()?;
    v.as_str().map(str::to_owned)
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
        (Some(400), "ConditionalCheckFailedException" | "TransactionCanceledException") => Some(Effect::Failed),
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
///   reads every touched item at the end, [`touched_items`]). Writes cost
///   the larger of the item before and after; the wire shows neither for
///   an update, so this one size stands for both (and, for a put, with the
///   item sent).
/// - `index_pk(table pk)`: the index partition key the item had before the
///   write, `None` if it was not in the index. Asked only for successful
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
    index_pk: &dyn Fn(&str) -> Option<String>,
) -> Vec<Charge> {
    let mut ledger = Ledger { schema, item_size, index_pk, indexed: HashMap::new(), op: "", out: Vec::new() };
    for record in records {
        let Some(effect) = outcome(record) else { continue };
        ledger.op = &record.op;
        ledger.price(record, effect);
    }
    ledger.out
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
    request_items.as_object().into_iter().flat_map(|tables| tables.values()).flat_map(array)
}

struct Ledger<'a> {
    schema: &'a Schema,
    item_size: &'a dyn Fn(&str, &str) -> Option<usize>,
    index_pk: &'a dyn Fn(&str) -> Option<String>,
    /// The index pk of each item the records have written so far (`None`:
    /// not in the index), table pk to index pk.
    indexed: HashMap<String, Option<String>>,
    op: &'a str,
    out: Vec<Charge>,
}

/// Transactions do every item's work twice, to prepare and to commit
/// (<https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-capacity-handling>).
const TRANSACTIONAL: f64 = 2.0;
const STANDARD: f64 = 1.0;

impl Ledger<'_> {
    fn charge(&mut self, target: Target, write_units: f64, read_units: f64) {
        self.out.push(Charge { target, op: self.op.to_owned(), write_units, read_units });
    }

    fn keys(&self, item: &Value) -> (String, String) {
        let text = |attr: &str| key_text(&item[attr]).unwrap_or_default();
        (text(&self.schema.pk_attr), text(&self.schema.sk_attr))
    }

    fn stored_size(&self, pk: &str, sk: &str) -> usize {
        (self.item_size)(pk, sk).unwrap_or(0)
    }

    /// The item's index pk before the write at hand.
    fn index_pk_before(&self, pk: &str) -> Option<String> {
        self.indexed.get(pk).cloned().unwrap_or_else(|| (self.index_pk)(pk))
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
                    let Some((kind, body)) = item.as_object().and_then(|o| o.iter().next()) else { continue };
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
                self.get(req, Some(&resp["Item"]), consistent, STANDARD);
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
    fn index_write(&mut self, index_pk: String) {
        let name = self.schema.index.name.clone();
        self.charge(Target::index(name, index_pk), write_units(0), 0.0);
    }

    /// A put costs the larger of the item sent and the item stored (for a
    /// failed conditional put of an item that never existed the docs say 1
    /// unit; the sent size is charged, which only differs above 1 KB).
    fn put(&mut self, body: &Value, factor: f64, applied: bool) {
        let item = &body["Item"];
        let sent = item.as_object().map_or(0, item_size);
        self.table_write(item, sent, factor);
        // A new item with both index key attributes is put into the (sparse)
        // index; one lacking either is not indexed
        // (<https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.ThroughputConsiderations.Writes>).
        // Our puts only create items, so no old entry is deleted.
        if !applied {
            return;
        }
        let index = &self.schema.index;
        let shard = key_text(&item[&index.pk_attr]).filter(|_| !item[&index.sk_attr].is_null());
        self.indexed.insert(key_text(&item[&self.schema.pk_attr]).unwrap_or_default(), shard.clone());
        if let Some(shard) = shard {
            self.index_write(shard);
        }
    }

    fn delete(&mut self, body: &Value, factor: f64, applied: bool) {
        let pk = self.table_write(&body["Key"], 0, factor);
        if applied {
            if let Some(old) = self.index_pk_before(&pk) {
                self.index_write(old);
            }
            self.indexed.insert(pk, None);
        }
    }

    /// An update that changes an index key attribute moves the item's
    /// index entry: a delete of the old entry if there was one, a put of
    /// the new one if the item still has both keys (same GSI page).
    fn update(&mut self, body: &Value, factor: f64, applied: bool) {
        let pk = self.table_write(&body["Key"], 0, factor);
        if !applied {
            return;
        }
        let changes = index_key_changes(body, &self.schema.index);
        if !changes.touched() {
            return;
        }
        let old = self.index_pk_before(&pk);
        let new = if changes.removed {
            None
        } else if let Some(set) = changes.pk_set {
            set
        } else {
            old.clone()
        };
        self.indexed.insert(pk, new.clone());
        for shard in old.into_iter().chain(new) {
            self.index_write(shard);
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
            Some(Some(item)) if body["ProjectionExpression"].is_null() => item_size(item),
            Some(Some(item)) => item_size(item).max(self.stored_size(&pk, &sk)),
            Some(None) => 0,
            None => self.stored_size(&pk, &sk),
        };
        self.charge(Target::table(pk), 0.0, factor * read_units(size, consistent));
    }

    /// Each key of a batch is priced as its own GetItem
    /// (<https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html#read-operation-consumption>);
    /// unprocessed keys were not read.
    fn batch_get(&mut self, req: &Value, resp: &Value) {
        let Some(tables) = req["RequestItems"].as_object() else { return };
        for (table, spec) in tables {
            let unprocessed = array(&resp["UnprocessedKeys"][table]["Keys"]);
            let returned = array(&resp["Responses"][table]);
            let consistent = spec["ConsistentRead"] == Value::Bool(true);
            for key in array(&spec["Keys"]).iter().filter(|k| !unprocessed.contains(k)) {
                let wanted = self.keys(key);
                let found = returned.iter().find(|item| self.keys(item) == wanted).cloned().unwrap_or(Value::Null);
                let get = serde_json::json!({ "Key": key, "ProjectionExpression": spec["ProjectionExpression"] });
                self.get(&get, Some(&found), consistent, STANDARD);
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
            Some(name) if name == self.schema.index.name => Some(self.schema.index.pk_attr.as_str()),
            Some(_) => None,
        };
        let pk = partition_of_key_condition(req, pk_attr).unwrap_or_else(|| "?".to_owned());
        let size: usize = array(&resp["Items"]).iter().filter_map(Value::as_object).map(item_size).sum();
        // Index queries are always eventually consistent.
        let consistent = req["ConsistentRead"] == Value::Bool(true);
        let target = Target { index: index.map(str::to_owned), pk };
        self.charge(target, 0.0, read_units(size, consistent));
    }
}

/// Splits a condition or update expression into words (names, `#names`,
/// `:values`, paths, keywords), comparison operators and single
/// punctuation marks.
fn tokens(expr: &str) -> Vec<&str> {
    #[derive(PartialEq)]
    enum Class {
        Word,
        Operator,
        Other,
    }
    let class = |c: char| match c {
        c if c.is_alphanumeric() || "#:_.[]".contains(c) => Class::Word,
        '<' | '>' | '=' => Class::Operator,
        _ => Class::Other,
    };
    let mut out = Vec::new();
    let mut chars = expr.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        if c.is_whitespace() {
            continue;
        }
        let kind = class(c);
        let mut end = start + c.len_utf8();
        while let Some(&(i, next)) = chars.peek() {
            if kind == Class::Other || class(next) != kind || next.is_whitespace() {
                break;
            }
            end = i + next.len_utf8();
            chars.next();
        }
        out.push(&expr[start..end]);
    }
    out
}

/// An attribute name as written (`#shard` through ExpressionAttributeNames).
fn resolve<'a>(token: &'a str, names: &'a Value) -> &'a str {
    if token.starts_with('#') { names[token].as_str().unwrap_or(token) } else { token }
}

fn placeholder_text(token: &str, values: &Value) -> Option<String> {
    token.starts_with(':').then(|| key_text(&values[token])).flatten()
}

/// The partition key value of a query: the `:value` compared with `=` to
/// `pk_attr` in the KeyConditionExpression (either side); for an unknown
/// index, the first `=` comparison with a value.
fn partition_of_key_condition(req: &Value, pk_attr: Option<&str>) -> Option<String> {
    let (names, values) = (&req["ExpressionAttributeNames"], &req["ExpressionAttributeValues"]);
    let toks = tokens(req["KeyConditionExpression"].as_str()?);
    let mut first = None;
    for w in toks.windows(3).filter(|w| w[1] == "=") {
        let (attr, value) = if w[2].starts_with(':') { (w[0], w[2]) } else { (w[2], w[0]) };
        let Some(text) = placeholder_text(value, values) else { continue };
        if pk_attr.is_none_or(|pk| resolve(attr, names) == pk) {
            return Some(text);
        }
        first.get_or_insert(text);
    }
    pk_attr.is_none().then_some(first).flatten()
}

/// What an UpdateExpression does to the index's key attributes.
#[derive(Debug, Default, PartialEq)]
struct IndexKeyChanges {
    /// The pk is SET (or ADDed): to this value, if the wire shows it.
    pk_set: Option<Option<String>>,
    sk_set: bool,
    /// The pk or the sk is REMOVEd: the item leaves the index.
    removed: bool,
}

impl IndexKeyChanges {
    fn touched(&self) -> bool {
        self.pk_set.is_some() || self.sk_set || self.removed
    }
}

fn index_key_changes(body: &Value, index: &super::IndexSpec) -> IndexKeyChanges {
    let (names, values) = (&body["ExpressionAttributeNames"], &body["ExpressionAttributeValues"]);
    let mut changes = IndexKeyChanges::default();
    let Some(expr) = body["UpdateExpression"].as_str() else { return changes };
    let mut clause = String::new();
    let mut action: Vec<&str> = Vec::new();
    let mut depth = 0usize;
    let mut apply = |clause: &str, action: &mut Vec<&str>| {
        let Some(path) = action.first().map(|t| resolve(t, names)) else { return };
        let (is_pk, is_sk) = (path == index.pk_attr, path == index.sk_attr);
        match clause {
            "SET" | "ADD" if is_pk => {
                // `= :v`, `= if_not_exists(#a, :v)`, or ADD's `:v`.
                let value = action[1..].iter().find_map(|t| placeholder_text(t, values));
                changes.pk_set = Some(value);
            }
            "SET" | "ADD" if is_sk => changes.sk_set = true,
            "REMOVE" if is_pk || is_sk => changes.removed = true,
            _ => {}
        }
        action.clear();
    };
    for token in tokens(expr) {
        let upper = token.to_ascii_uppercase();
        match token {
            _ if depth == 0 && ["SET", "REMOVE", "ADD", "DELETE"].contains(&upper.as_str()) => {
                apply(&clause, &mut action);
                clause = upper;
            }
            "," if depth == 0 => apply(&clause, &mut action),
            _ => {
                depth = match token {
                    "(" => depth + 1,
                    ")" => depth.saturating_sub(1),
                    _ => depth,
                };
                action.push(token);
            }
        }
    }
    apply(&clause, &mut action);
    changes
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    fn size(v: Value) -> usize {
        item_size(&obj(v))
    }

    #[test]
    fn scalar_sizes_are_name_plus_value() {
        // 2 + 8
        assert_eq!(size(json!({"PK": {"S": "EVENT#ab"}})), 10);
        // UTF-8 bytes of name and value: "név" is 4, "é" is 2.
        assert_eq!(size(json!({"név": {"S": "é"}})), 6);
        // Numbers: ceil(significant digits / 2) + 1.
        assert_eq!(size(json!({"n": {"N": "123"}})), 1 + 3);
        assert_eq!(size(json!({"n": {"N": "1712345678901"}})), 1 + 8, "13 digits");
        assert_eq!(size(json!({"n": {"N": "1000"}})), 1 + 2, "trailing zeros trimmed");
        assert_eq!(size(json!({"n": {"N": "-0.0500"}})), 1 + 2, "sign, point and zeros are not digits");
        assert_eq!(size(json!({"n": {"N": "1.5E+10"}})), 1 + 2, "the exponent is not digits");
        assert_eq!(size(json!({"n": {"N": "0"}})), 1 + 1);
        // Binary: raw bytes, padded or not ("hello", "hi").
        assert_eq!(size(json!({"b": {"B": "aGVsbG8="}})), 1 + 5);
        assert_eq!(size(json!({"b": {"B": "aGk"}})), 1 + 2);
        assert_eq!(size(json!({"ok": {"BOOL": true}, "nil": {"NULL": true}})), 3 + 4);
    }

    #[test]
    fn documents_and_sets() {
        // 1 (name) + 3 (list) + (1 + 2) + (1 + 2): each element costs 1 more.
        assert_eq!(size(json!({"l": {"L": [{"S": "ab"}, {"N": "7"}]}})), 10);
        assert_eq!(size(json!({"e": {"L": []}, "f": {"M": {}}})), 4 + 4, "empty: 3 bytes");
        // 1 + 3 + (1 + "k" 1 + "v" 1)
        assert_eq!(size(json!({"m": {"M": {"k": {"S": "v"}}}})), 7);
        // Nested: 1 + 3 + (1 + 1 + (3 + (1 + 1)))
        assert_eq!(size(json!({"m": {"M": {"l": {"L": [{"BOOL": false}]}}}})), 11);
        assert_eq!(size(json!({"ss": {"SS": ["a", "bc"]}})), 2 + 3);
        assert_eq!(size(json!({"ns": {"NS": ["1", "22"]}})), 2 + 2 + 2);
        assert_eq!(size(json!({"bs": {"BS": ["aGVsbG8=", "aGk="]}})), 2 + 5 + 2);
    }

    const SHARD_ATTRS: &str = "pendingShard";

    fn rec(op: &str, status: u16, request: Value, response: Value) -> Recorded {
        Recorded { op: op.into(), request, status: Some(status), response }
    }

    fn ok(op: &str, request: Value) -> Recorded {
        rec(op, 200, request, json!({}))
    }

    fn failed(op: &str, error: &str, request: Value) -> Recorded {
        rec(op, 400, request, json!({"__type": format!("com.amazonaws.dynamodb.v20120810#{error}"), "message": "no"}))
    }

    /// Prices with a stored-size table and orders' shards (`ORDER#n` is on
    /// `PENDING#n`).
    fn price(records: &[Recorded], stored: &[(&str, &str, usize)]) -> Vec<(String, f64, f64)> {
        let sizes = |pk: &str, sk: &str| stored.iter().find(|(p, s, _)| *p == pk && *s == sk).map(|(_, _, n)| *n);
        let shard = |pk: &str| pk.strip_prefix("ORDER#").map(|n| format!("PENDING#{n}"));
        charges(records, &Schema::seatclaim(), &sizes, &shard)
            .into_iter()
            .map(|c| {
                let key = match c.target.index {
                    Some(index) => format!("{index}/{}", c.target.pk),
                    None => c.target.pk,
                };
                (key, c.write_units, c.read_units)
            })
            .collect()
    }

    fn row(key: &str, w: f64, r: f64) -> (String, f64, f64) {
        (key.to_owned(), w, r)
    }

    /// An item of about `bytes` bytes.
    fn item(pk: &str, sk: &str, bytes: usize, extra: Value) -> Value {
        let mut item = json!({"PK": {"S": pk}, "SK": {"S": sk}});
        let pad = bytes.saturating_sub(size(item.clone()) + 3);
        item["pad"] = json!({"S": "x".repeat(pad)});
        for (k, v) in extra.as_object().cloned().unwrap_or_default() {
            item[k] = v;
        }
        item
    }

    fn order_item(n: u32) -> Value {
        let keys = json!({SHARD_ATTRS: {"S": format!("PENDING#{n}")}, "pendingExpiresAt": {"N": "1712345678901"}});
        item(&format!("ORDER#{n}"), "ORDER", 300, keys)
    }

    #[test]
    fn puts_cost_the_larger_size_and_index_new_pending_orders() {
        let seat = item("EVENT#e", "SEAT#A-1-1", 1500, json!({}));
        assert_eq!(size(seat.clone()), 1500);
        let records = [
            ok("PutItem", json!({"Item": seat.clone()})),
            ok("PutItem", json!({"Item": seat.clone()})),
            ok("PutItem", json!({"Item": order_item(3)})),
            // Only one of the two index keys: not in the sparse index.
            ok("PutItem", json!({"Item": item("ORDER#4", "ORDER", 200, json!({SHARD_ATTRS: {"S": "PENDING#4"}}))})),
            // A failed conditional put costs the same, and indexes nothing.
            failed("PutItem", "ConditionalCheckFailedException", json!({"Item": order_item(5)})),
        ];
        // The first seat is stored bigger than sent: the larger counts.
        let priced = price(&records[..1], &[("EVENT#e", "SEAT#A-1-1", 2500)]);
        assert_eq!(priced, [row("EVENT#e", 3.0, 0.0)]);
        assert_eq!(
            price(&records[1..], &[]),
            [
                row("EVENT#e", 2.0, 0.0),
                row("ORDER#3", 1.0, 0.0),
                row("PendingByExpiry/PENDING#3", 1.0, 0.0),
                row("ORDER#4", 1.0, 0.0),
                row("ORDER#5", 1.0, 0.0),
            ]
        );
    }

    #[test]
    fn updates_and_deletes_cost_the_stored_size_and_move_index_entries() {
        let seat_key = json!({"PK": {"S": "EVENT#e"}, "SK": {"S": "SEAT#A-1-1"}});
        let order_key = |n: u32| json!({"PK": {"S": format!("ORDER#{n}")}, "SK": {"S": "ORDER"}});
        let names = json!({"#status": "status", "#shard": "pendingShard", "#pendingExp": "pendingExpiresAt", "#v": "version"});
        let update = |key: Value, expr: &str| {
            json!({"Key": key, "UpdateExpression": expr, "ExpressionAttributeNames": names,
                   "ExpressionAttributeValues": {":s": {"S": "PENDING#7"}, ":x": {"S": "EXPIRED"}, ":one": {"N": "1"}, ":t": {"N": "5"}}})
        };
        let records = [
            // Unknown size: the 1-byte minimum, 1 unit.
            ok("UpdateItem", update(seat_key.clone(), "SET #status = :x")),
            // The sweep retiring an order: the entry on its shard goes.
            ok("UpdateItem", update(order_key(1), "SET #status = :x, #v = #v + :one REMOVE #shard, #pendingExp")),
            // Only the expiry moves: the entry is rewritten on the same shard.
            ok("UpdateItem", update(order_key(2), "SET #pendingExp = :t")),
            // Moves to another shard: delete on the old, put on the new.
            ok("UpdateItem", update(order_key(3), "SET #shard = if_not_exists(#shard, :s), #pendingExp = :t")),
            // Not in the index before (no shard known): a put only.
            ok("UpdateItem", update(json!({"PK": {"S": "PAYMENT#p"}, "SK": {"S": "PAYMENT"}}), "set pendingShard = :s")),
            // Failed: charged, no index change.
            failed("UpdateItem", "ConditionalCheckFailedException", update(order_key(4), "REMOVE #shard")),
            ok("DeleteItem", json!({"Key": order_key(5)})),
            ok("DeleteItem", json!({"Key": seat_key.clone()})),
        ];
        assert_eq!(
            price(&records, &[("EVENT#e", "SEAT#A-1-1", 3000), ("ORDER#1", "ORDER", 1025)]),
            [
                row("EVENT#e", 3.0, 0.0),
                row("ORDER#1", 2.0, 0.0),
                row("PendingByExpiry/PENDING#1", 1.0, 0.0),
                row("ORDER#2", 1.0, 0.0),
                row("PendingByExpiry/PENDING#2", 1.0, 0.0),
                row("PendingByExpiry/PENDING#2", 1.0, 0.0),
                row("ORDER#3", 1.0, 0.0),
                row("PendingByExpiry/PENDING#3", 1.0, 0.0),
                row("PendingByExpiry/PENDING#7", 1.0, 0.0),
                row("PAYMENT#p", 1.0, 0.0),
                row("PendingByExpiry/PENDING#7", 1.0, 0.0),
                row("ORDER#4", 1.0, 0.0),
                row("ORDER#5", 1.0, 0.0),
                row("PendingByExpiry/PENDING#5", 1.0, 0.0),
                row("EVENT#e", 3.0, 0.0),
            ]
        );
    }

    #[test]
    fn index_entries_written_while_recording_are_remembered() {
        let keys = json!({SHARD_ATTRS: {"S": "PENDING#6"}, "pendingExpiresAt": {"N": "1"}});
        let retire = json!({"Key": {"PK": {"S": "ORDER#3"}, "SK": {"S": "ORDER"}}, "UpdateExpression": "REMOVE #s, #e",
                            "ExpressionAttributeNames": {"#s": "pendingShard", "#e": "pendingExpiresAt"}});
        let records = [
            ok("PutItem", json!({"Item": item("ORDER#3", "ORDER", 200, keys)})),
            // The put's shard, not the hook's (PENDING#3).
            ok("UpdateItem", retire.clone()),
            // Out of the index already: no index write.
            ok("UpdateItem", retire),
        ];
        assert_eq!(
            price(&records, &[]),
            [
                row("ORDER#3", 1.0, 0.0),
                row("PendingByExpiry/PENDING#6", 1.0, 0.0),
                row("ORDER#3", 1.0, 0.0),
                row("PendingByExpiry/PENDING#6", 1.0, 0.0),
                row("ORDER#3", 1.0, 0.0),
            ]
        );
    }

    #[test]
    fn update_expressions_are_read_through_names() {
        let index = super::super::IndexSpec::pending_by_expiry();
        let changes = |expr: &str| {
            index_key_changes(
                &json!({"UpdateExpression": expr, "ExpressionAttributeNames": {"#a": "pendingShard", "#b": "pendingExpiresAt", "#c": "seats"},
                        "ExpressionAttributeValues": {":v": {"S": "PENDING#1"}, ":n": {"N": "2"}}}),
                &index,
            )
        };
        assert!(!changes("ADD #c :v SET status = :v").touched());
        assert!(!changes("SET #c = list_append(#c, :v) DELETE #c :v").touched(), "other attributes");
        assert!(!changes("SET #a.x = :v").touched(), "a nested path is not the key attribute");
        assert!(changes("ADD #b :n").sk_set);
        assert!(changes("SET status = :v REMOVE #b").removed);
        assert_eq!(changes("SET #a = :v").pk_set, Some(Some("PENDING#1".into())));
        assert_eq!(changes("SET #a = #c").pk_set, Some(None), "value not on the wire");
    }

    #[test]
    fn transactions_cost_double_and_only_successful_ones_index() {
        let names = json!({"#shard": "pendingShard", "#pendingExp": "pendingExpiresAt", "#seats": "seats"});
        let items = json!([
            {"Put": {"Item": order_item(6)}},
            {"Update": {"Key": {"PK": {"S": "EVENT#e"}, "SK": {"S": "SEAT#A-1-1"}}, "UpdateExpression": "SET #seats = :v",
                        "ExpressionAttributeNames": names, "ExpressionAttributeValues": {":v": {"S": "x"}}}},
            {"Update": {"Key": {"PK": {"S": "ORDER#8"}, "SK": {"S": "ORDER"}}, "UpdateExpression": "REMOVE #shard, #pendingExp",
                        "ExpressionAttributeNames": names}},
            {"ConditionCheck": {"Key": {"PK": {"S": "EVENT#e"}, "SK": {"S": "EVENT"}}, "ConditionExpression": "attribute_exists(PK)"}},
            {"Delete": {"Key": {"PK": {"S": "PAYMENT#p"}, "SK": {"S": "PAYMENT"}}}}
        ]);
        let request = json!({"TransactItems": items});
        let table_rows = [
            row("ORDER#6", 2.0, 0.0),
            row("EVENT#e", 4.0, 0.0),
            row("ORDER#8", 2.0, 0.0),
            row("EVENT#e", 2.0, 0.0),
            row("PAYMENT#p", 2.0, 0.0),
        ];
        let stored = [("EVENT#e", "SEAT#A-1-1", 1100)];
        let committed = price(&[ok("TransactWriteItems", request.clone())], &stored);
        let mut expected = table_rows.to_vec();
        expected.insert(1, row("PendingByExpiry/PENDING#6", 1.0, 0.0));
        expected.insert(4, row("PendingByExpiry/PENDING#8", 1.0, 0.0));
        assert_eq!(committed, expected, "index writes are standard writes");
        // Cancelled: every item charged in full, nothing indexed.
        let cancelled = failed("TransactWriteItems", "TransactionCanceledException", request);
        assert_eq!(price(&[cancelled], &stored), table_rows);
    }

    #[test]
    fn unpriced_attempts() {
        let put = json!({"Item": order_item(1)});
        let records = [
            failed("PutItem", "ProvisionedThroughputExceededException", put.clone()),
            failed("PutItem", "ValidationException", put.clone()),
            rec("PutItem", 500, put.clone(), json!({"__type": "InternalServerError"})),
            Recorded { op: "PutItem".into(), request: put.clone(), status: None, response: Value::Null },
            ok("Scan", json!({})),
            ok("CreateTable", json!({})),
        ];
        assert_eq!(price(&records, &[]), []);
    }

    #[test]
    fn single_item_reads() {
        let key = json!({"PK": {"S": "ORDER#1"}, "SK": {"S": "ORDER"}});
        let found = json!({"Item": item("ORDER#1", "ORDER", 5000, json!({}))});
        let get = |consistent: bool| json!({"Key": key, "ConsistentRead": consistent});
        let records = [
            rec("GetItem", 200, get(true), found.clone()),
            rec("GetItem", 200, get(false), found.clone()),
            rec("GetItem", 200, get(true), json!({})),
            rec("GetItem", 200, json!({"Key": key}), json!({})),
            // A projection returns less than is read: the stored size counts.
            rec("GetItem", 200, json!({"Key": key, "ConsistentRead": true, "ProjectionExpression": "PK"}), json!({"Item": {"PK": {"S": "ORDER#1"}}})),
            // Transactional: twice a strongly consistent read, per item.
            rec(
                "TransactGetItems",
                200,
                json!({"TransactItems": [{"Get": {"Key": key}}, {"Get": {"Key": {"PK": {"S": "EVENT#e"}, "SK": {"S": "EVENT"}}}}]}),
                json!({"Responses": [found, {}]}),
            ),
            // Cancelled: no responses, the stored size.
            failed("TransactGetItems", "TransactionCanceledException", json!({"TransactItems": [{"Get": {"Key": key}}]})),
        ];
        assert_eq!(
            price(&records, &[("ORDER#1", "ORDER", 9000)]),
            [
                row("ORDER#1", 0.0, 2.0),
                row("ORDER#1", 0.0, 1.0),
                row("ORDER#1", 0.0, 1.0),
                row("ORDER#1", 0.0, 0.5),
                row("ORDER#1", 0.0, 3.0),
                row("ORDER#1", 0.0, 4.0),
                row("EVENT#e", 0.0, 2.0),
                row("ORDER#1", 0.0, 6.0),
            ]
        );
    }

    #[test]
    fn batch_reads_and_writes_price_each_item() {
        let key = |sk: &str| json!({"PK": {"S": "EVENT#e"}, "SK": {"S": sk}});
        // The docs' example: 1.5 KB and 6.5 KB cost 4 KB + 8 KB, not 8 KB.
        let request = json!({"RequestItems": {"t": {"Keys": [key("S1"), key("S2"), key("S3"), key("S4")], "ConsistentRead": true}}});
        let response = json!({
            "Responses": {"t": [item("EVENT#e", "S2", 6656, json!({})), item("EVENT#e", "S1", 1536, json!({}))]},
            "UnprocessedKeys": {"t": {"Keys": [key("S4")]}}
        });
        let reads = price(&[rec("BatchGetItem", 200, request, response)], &[]);
        // S3 was not found: the minimum.
        assert_eq!(reads, [row("EVENT#e", 0.0, 1.0), row("EVENT#e", 0.0, 2.0), row("EVENT#e", 0.0, 1.0)]);

        let put = json!({"PutRequest": {"Item": item("EVENT#e", "S1", 500, json!({}))}});
        let put_big = json!({"PutRequest": {"Item": item("EVENT#e", "S2", 3584, json!({}))}});
        let delete = json!({"DeleteRequest": {"Key": key("S3")}});
        let request = json!({"RequestItems": {"t": [put, put_big, delete.clone()]}});
        let response = json!({"UnprocessedItems": {"t": [delete]}});
        let writes = price(&[rec("BatchWriteItem", 200, request, response)], &[]);
        assert_eq!(writes, [row("EVENT#e", 1.0, 0.0), row("EVENT#e", 4.0, 0.0)]);
    }

    #[test]
    fn queries_cost_the_summed_items_on_the_key_conditions_partition() {
        let seats: Vec<Value> = (0..10).map(|i| item("EVENT#e", &format!("SEAT#{i}"), 1000, json!({}))).collect();
        let table_query = json!({
            "KeyConditionExpression": "PK = :pk AND begins_with(SK, :prefix)", "ConsistentRead": true,
            "ExpressionAttributeValues": {":pk": {"S": "EVENT#e"}, ":prefix": {"S": "SEAT#"}}
        });
        let index_query = json!({
            "IndexName": "PendingByExpiry", "KeyConditionExpression": "#shard = :shard AND #pendingExp < :now",
            "ExpressionAttributeNames": {"#shard": "pendingShard", "#pendingExp": "pendingExpiresAt"},
            "ExpressionAttributeValues": {":shard": {"S": "PENDING#3"}, ":now": {"N": "1712345678901"}}
        });
        let reversed = json!({
            "KeyConditionExpression": "(SK = :sk) AND :pk=#p", "ExpressionAttributeNames": {"#p": "PK"},
            "ExpressionAttributeValues": {":pk": {"S": "ORDER#1"}, ":sk": {"S": "ORDER"}}
        });
        let entries: Vec<Value> = (0..3).map(|_| order_item(3)).collect();
        let records = [
            // 10,000 bytes: 3 units, strongly consistent.
            rec("Query", 200, table_query.clone(), json!({"Items": seats, "Count": 10})),
            // Nothing returned: still the minimum.
            rec("Query", 200, table_query, json!({"Items": [], "Count": 0})),
            // An index query: eventually consistent, on the shard.
            rec("Query", 200, index_query, json!({"Items": entries, "Count": 3})),
            rec("Query", 200, reversed, json!({"Items": []})),
        ];
        assert_eq!(
            price(&records, &[]),
            [
                row("EVENT#e", 0.0, 3.0),
                row("EVENT#e", 0.0, 1.0),
                row("PendingByExpiry/PENDING#3", 0.0, 0.5),
                row("ORDER#1", 0.0, 0.5),
            ]
        );
    }

    #[test]
    fn expression_tokens() {
        assert_eq!(
            tokens("SET #a=#a+:one, b[0].c = :v REMOVE #x"),
            ["SET", "#a", "=", "#a", "+", ":one", ",", "b[0].c", "=", ":v", "REMOVE", "#x"]
        );
        assert_eq!(tokens("#p <> :v AND (x<=:n)"), ["#p", "<>", ":v", "AND", "(", "x", "<=", ":n", ")"]);
    }

    #[test]
    fn touched_items_lists_written_and_checked_keys() {
        let records = [
            ok("PutItem", json!({"Item": order_item(1)})),
            ok("UpdateItem", json!({"Key": {"PK": {"S": "EVENT#e"}, "SK": {"S": "SEAT#1"}}})),
            ok("TransactWriteItems", json!({"TransactItems": [
                {"ConditionCheck": {"Key": {"PK": {"S": "EVENT#e"}, "SK": {"S": "EVENT"}}}},
                {"Put": {"Item": order_item(1)}}
            ]})),
            ok("GetItem", json!({"Key": {"PK": {"S": "ORDER#9"}, "SK": {"S": "ORDER"}}})),
        ];
        let keys: Vec<(String, String)> = touched_items(&records, &Schema::seatclaim()).into_iter().collect();
        let expected = [("EVENT#e", "EVENT"), ("EVENT#e", "SEAT#1"), ("ORDER#1", "ORDER")];
        assert_eq!(keys, expected.map(|(p, s)| (p.to_owned(), s.to_owned())));
    }
}
