//! Unit tests of the pricing rules in `units.rs` (hand-written wire JSON).
use serde_json::json;

use super::*;
use crate::capacity::expressions::tokens;

use crate::capacity::sizes::tests::size;

const SHARD_ATTRS: &str = "pendingShard";

pub(super) fn rec(op: &str, status: u16, request: Value, response: Value) -> Recorded {
    Recorded {
        op: op.into(),
        request,
        status: Some(status),
        response,
        caller: None,
        ended_ms: None,
    }
}

pub(super) fn ok(op: &str, request: Value) -> Recorded {
    rec(op, 200, request, json!({}))
}

pub(super) fn failed(op: &str, error: &str, request: Value) -> Recorded {
    rec(
        op,
        400,
        request,
        json!({"__type": format!("com.amazonaws.dynamodb.v20120810#{error}"), "message": "no"}),
    )
}

/// Prices with a stored-size table and orders' shards (`ORDER#n` is on
/// `PENDING#n`).
pub(super) fn price(
    records: &[Recorded],
    stored: &[(&str, &str, usize)],
) -> Vec<(String, f64, f64)> {
    let sizes = |pk: &str, sk: &str| {
        stored
            .iter()
            .find(|(p, s, _)| *p == pk && *s == sk)
            .map(|(_, _, n)| *n)
    };
    let shard = |index: &str, pk: &str| {
        (index == shared::store::PENDING_INDEX)
            .then(|| pk.strip_prefix("ORDER#").map(|n| format!("PENDING#{n}")))
            .flatten()
    };
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

pub(super) fn row(key: &str, w: f64, r: f64) -> (String, f64, f64) {
    (key.to_owned(), w, r)
}

/// An item of about `bytes` bytes.
pub(super) fn item(pk: &str, sk: &str, bytes: usize, extra: Value) -> Value {
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
        ok(
            "PutItem",
            json!({"Item": item("ORDER#4", "ORDER", 200, json!({SHARD_ATTRS: {"S": "PENDING#4"}}))}),
        ),
        // A failed conditional put costs the same, and indexes nothing.
        failed(
            "PutItem",
            "ConditionalCheckFailedException",
            json!({"Item": order_item(5)}),
        ),
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
fn a_join_writes_the_queue_index_and_an_admission_takes_it_out() {
    // A waiting visitor carries the keys of both queue indexes; its
    // admission removes its shard: one write to each index each time, on
    // the visitor's shard.
    let visitor = item(
        "VISITOR#e#v1",
        "VISITOR",
        250,
        json!({"queueShard": {"S": "QWAIT#e#1#7"}, "queueJoin": {"N": "1712345678901"}, "queueRank": {"S": "0f"}}),
    );
    let admit = json!({"Key": {"PK": {"S": "VISITOR#e#v1"}, "SK": {"S": "VISITOR"}},
        "UpdateExpression": "SET #a = :a REMOVE #shard, #join",
        "ExpressionAttributeNames": {"#a": "admissionId", "#shard": "queueShard", "#join": "queueJoin"},
        "ExpressionAttributeValues": {":a": {"S": "x"}}});
    let records = [
        ok("PutItem", json!({"Item": visitor})),
        ok("UpdateItem", admit),
    ];
    assert_eq!(
        price(&records, &[]),
        [
            row("VISITOR#e#v1", 1.0, 0.0),
            row("QueueByJoin/QWAIT#e#1#7", 1.0, 0.0),
            row("QueueByRank/QWAIT#e#1#7", 1.0, 0.0),
            row("VISITOR#e#v1", 1.0, 0.0),
            row("QueueByJoin/QWAIT#e#1#7", 1.0, 0.0),
            row("QueueByRank/QWAIT#e#1#7", 1.0, 0.0),
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
        ok(
            "UpdateItem",
            update(
                order_key(1),
                "SET #status = :x, #v = #v + :one REMOVE #shard, #pendingExp",
            ),
        ),
        // Only the expiry moves: the entry is rewritten on the same shard.
        ok("UpdateItem", update(order_key(2), "SET #pendingExp = :t")),
        // Moves to another shard: delete on the old, put on the new.
        ok(
            "UpdateItem",
            update(
                order_key(3),
                "SET #shard = if_not_exists(#shard, :s), #pendingExp = :t",
            ),
        ),
        // Not in the index before (no shard known): a put only.
        ok(
            "UpdateItem",
            update(
                json!({"PK": {"S": "PAYMENT#p"}, "SK": {"S": "PAYMENT"}}),
                "set pendingShard = :s",
            ),
        ),
        // Failed: charged, no index change.
        failed(
            "UpdateItem",
            "ConditionalCheckFailedException",
            update(order_key(4), "REMOVE #shard"),
        ),
        ok("DeleteItem", json!({"Key": order_key(5)})),
        ok("DeleteItem", json!({"Key": seat_key.clone()})),
    ];
    assert_eq!(
        price(
            &records,
            &[("EVENT#e", "SEAT#A-1-1", 3000), ("ORDER#1", "ORDER", 1025)]
        ),
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

/// ORDER#3 put into the index on PENDING#6, and an update that takes it
/// out.
fn indexed_order_and_its_retirement() -> (Recorded, Recorded) {
    let keys = json!({SHARD_ATTRS: {"S": "PENDING#6"}, "pendingExpiresAt": {"N": "1"}});
    let retire = json!({"Key": {"PK": {"S": "ORDER#3"}, "SK": {"S": "ORDER"}}, "UpdateExpression": "REMOVE #s, #e",
                        "ExpressionAttributeNames": {"#s": "pendingShard", "#e": "pendingExpiresAt"}});
    let put = json!({"Item": item("ORDER#3", "ORDER", 200, keys)});
    (ok("PutItem", put), ok("UpdateItem", retire))
}

#[test]
fn index_entries_written_while_recording_are_remembered() {
    let (put, retire) = indexed_order_and_its_retirement();
    // The retirement: the put's shard, not the hook's (PENDING#3); then
    // out of the index already, no index write.
    let records = [put, retire.clone(), retire];
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
fn charges_each_keeps_each_records_charges_apart_in_one_ledger() {
    let (put, retire) = indexed_order_and_its_retirement();
    let refused = json!({"Item": item("ORDER#4", "ORDER", 200, json!({}))});
    let records = [
        put,
        failed("PutItem", "ConditionalCheckFailedException", refused),
        retire.clone(),
        retire,
    ];
    let none = |_: &str, _: &str| None;
    let each = charges_each(&records, &Schema::seatclaim(), &none, &|_, _| None);
    let counts: Vec<usize> = each.iter().map(Vec::len).collect();
    // The put and its index entry; the failed put's check; the first
    // update takes the entry out (the ledger remembers it went in), the
    // second has none to take.
    assert_eq!(counts, [2, 1, 2, 1]);
    assert_eq!(
        each.concat(),
        charges(&records, &Schema::seatclaim(), &none, &|_, _| None)
    );
}

#[test]
fn charges_after_carries_the_index_entries_from_one_request_to_the_next() {
    let (put, retire) = indexed_order_and_its_retirement();
    let schema = Schema::seatclaim();
    // Alone, the retirement cannot know the entry it takes out.
    let (alone, _) = charges_after(&retire, &schema, &Known::default());
    assert_eq!(alone.len(), 1, "{alone:?}");
    // After the put (one request at a time, as the meter sees them): the
    // entry taken out is charged, and then it is gone.
    let (_, mut known) = charges_after(&put, &schema, &Known::default());
    let (after, changed) = charges_after(&retire, &schema, &known);
    assert_eq!(after.len(), 2, "{after:?}");
    assert_eq!(
        after[1].target,
        Target::index("PendingByExpiry", "PENDING#6")
    );
    known.absorb(changed);
    let (again, _) = charges_after(&retire, &schema, &known);
    assert_eq!(again.len(), 1, "{again:?}");
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
    assert!(
        !changes("SET #c = list_append(#c, :v) DELETE #c :v").touched(),
        "other attributes"
    );
    assert!(
        !changes("SET #a.x = :v").touched(),
        "a nested path is not the key attribute"
    );
    assert!(changes("ADD #b :n").sk_set);
    assert!(changes("SET status = :v REMOVE #b").removed);
    assert_eq!(
        changes("SET #a = :v").pk_set,
        Some(Some("PENDING#1".into()))
    );
    assert_eq!(
        changes("SET #a = #c").pk_set,
        Some(None),
        "value not on the wire"
    );
}

#[test]
fn transactions_cost_double_and_only_successful_ones_index() {
    let names =
        json!({"#shard": "pendingShard", "#pendingExp": "pendingExpiresAt", "#seats": "seats"});
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
    let cancelled = failed(
        "TransactWriteItems",
        "TransactionCanceledException",
        request,
    );
    assert_eq!(price(&[cancelled], &stored), table_rows);
}

#[test]
fn unpriced_attempts() {
    let put = json!({"Item": order_item(1)});
    let records = [
        failed(
            "PutItem",
            "ProvisionedThroughputExceededException",
            put.clone(),
        ),
        failed("PutItem", "ValidationException", put.clone()),
        rec(
            "PutItem",
            500,
            put.clone(),
            json!({"__type": "InternalServerError"}),
        ),
        Recorded {
            op: "PutItem".into(),
            request: put.clone(),
            status: None,
            response: Value::Null,
            caller: None,
            ended_ms: None,
        },
        ok("Scan", json!({})),
        ok("CreateTable", json!({})),
    ];
    assert_eq!(price(&records, &[]), []);
}

#[test]
fn single_item_reads() {
    let key = json!({"PK": {"S": "ORDER#1"}, "SK": {"S": "ORDER"}});
    let unseen = json!({"PK": {"S": "ORDER#2"}, "SK": {"S": "ORDER"}});
    let found = json!({"Item": item("ORDER#1", "ORDER", 5000, json!({}))});
    let get = |consistent: bool| json!({"Key": key, "ConsistentRead": consistent});
    let records = [
        rec("GetItem", 200, get(true), found.clone()),
        rec("GetItem", 200, get(false), found.clone()),
        rec("GetItem", 200, get(true), json!({})),
        rec("GetItem", 200, json!({"Key": key}), json!({})),
        // A projection returns less than is read: the stored size counts
        // (of an item the records never showed whole).
        rec(
            "GetItem",
            200,
            json!({"Key": unseen, "ConsistentRead": true, "ProjectionExpression": "PK"}),
            json!({"Item": {"PK": {"S": "ORDER#2"}}}),
        ),
        // Transactional: twice a strongly consistent read, per item.
        rec(
            "TransactGetItems",
            200,
            json!({"TransactItems": [{"Get": {"Key": key}}, {"Get": {"Key": {"PK": {"S": "EVENT#e"}, "SK": {"S": "EVENT"}}}}]}),
            json!({"Responses": [found, {}]}),
        ),
        // Cancelled: no responses, the stored size.
        failed(
            "TransactGetItems",
            "TransactionCanceledException",
            json!({"TransactItems": [{"Get": {"Key": unseen}}]}),
        ),
    ];
    assert_eq!(
        price(&records, &[("ORDER#2", "ORDER", 9000)]),
        [
            row("ORDER#1", 0.0, 2.0),
            row("ORDER#1", 0.0, 1.0),
            row("ORDER#1", 0.0, 1.0),
            row("ORDER#1", 0.0, 0.5),
            row("ORDER#2", 0.0, 3.0),
            row("ORDER#1", 0.0, 4.0),
            row("EVENT#e", 0.0, 2.0),
            row("ORDER#2", 0.0, 6.0),
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
    assert_eq!(
        reads,
        [
            row("EVENT#e", 0.0, 1.0),
            row("EVENT#e", 0.0, 2.0),
            row("EVENT#e", 0.0, 1.0)
        ]
    );

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
    let seats: Vec<Value> = (0..10)
        .map(|i| item("EVENT#e", &format!("SEAT#{i}"), 1000, json!({})))
        .collect();
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
        rec(
            "Query",
            200,
            table_query.clone(),
            json!({"Items": seats, "Count": 10}),
        ),
        // Nothing returned: still the minimum.
        rec("Query", 200, table_query, json!({"Items": [], "Count": 0})),
        // An index query: eventually consistent, on the shard.
        rec(
            "Query",
            200,
            index_query,
            json!({"Items": entries, "Count": 3}),
        ),
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
    assert_eq!(
        tokens("#p <> :v AND (x<=:n)"),
        ["#p", "<>", ":v", "AND", "(", "x", "<=", ":n", ")"]
    );
}

#[test]
fn touched_items_lists_written_and_checked_keys() {
    let records = [
        ok("PutItem", json!({"Item": order_item(1)})),
        ok(
            "UpdateItem",
            json!({"Key": {"PK": {"S": "EVENT#e"}, "SK": {"S": "SEAT#1"}}}),
        ),
        ok(
            "TransactWriteItems",
            json!({"TransactItems": [
                {"ConditionCheck": {"Key": {"PK": {"S": "EVENT#e"}, "SK": {"S": "EVENT"}}}},
                {"Put": {"Item": order_item(1)}}
            ]}),
        ),
        ok(
            "GetItem",
            json!({"Key": {"PK": {"S": "ORDER#9"}, "SK": {"S": "ORDER"}}}),
        ),
    ];
    let keys: Vec<(String, String)> = touched_items(&records, &Schema::seatclaim())
        .into_iter()
        .collect();
    let expected = [
        ("EVENT#e", "EVENT"),
        ("EVENT#e", "SEAT#1"),
        ("ORDER#1", "ORDER"),
    ];
    assert_eq!(keys, expected.map(|(p, s)| (p.to_owned(), s.to_owned())));
}
