//! Unit tests of what the pricing ledger learns of items (`known.rs`):
//! each write at its item's size when touched, before and after.
use serde_json::{json, Value};

use super::tests::{failed, item, ok, price, row};
use super::*;

/// An update that adds 1,005 bytes to the item under `key`.
fn growing(key: &Value) -> Value {
    let seats: Vec<String> = (0..10).map(|i| format!("{i:0>100}")).collect();
    json!({
        "Key": key,
        "UpdateExpression": "ADD #seats :seats",
        "ExpressionAttributeNames": {"#seats": "seats"},
        "ExpressionAttributeValues": {":seats": {"SS": seats}},
    })
}

/// An update that adds a few bytes to the item under `key`.
fn marking(key: &Value) -> Value {
    json!({
        "Key": key,
        "UpdateExpression": "SET #status = :s",
        "ExpressionAttributeNames": {"#status": "status"},
        "ExpressionAttributeValues": {":s": {"S": "paid"}},
    })
}

#[test]
fn an_item_an_update_creates_is_priced_at_what_it_creates() {
    // Orders are created by an UpdateItem under attribute_not_exists: the
    // run's end size (5,000 bytes) stands for neither before nor after.
    let key = json!({"PK": {"S": "ORDER#5"}, "SK": {"S": "ORDER"}});
    let create = |condition: &str| {
        ok(
            "UpdateItem",
            json!({
                "Key": key,
                "UpdateExpression": "SET #status = :s",
                "ConditionExpression": condition,
                "ExpressionAttributeNames": {"#status": "status", "#pk": "PK", "#v": "version"},
                "ExpressionAttributeValues": {":s": {"S": "pending"}, ":v": {"N": "1"}},
            }),
        )
    };
    let end = [("ORDER#5", "ORDER", 5000)];
    let created = [
        create("attribute_not_exists(#pk)"),
        ok("UpdateItem", growing(&key)),
    ];
    let w = |units: f64| row("ORDER#5", units, 0.0);
    assert_eq!(price(&created, &end), [w(1.0), w(2.0)]);
    // An OR lets an existing item through: the end's size stands.
    let upsert = [create("attribute_not_exists(PK) OR #v < :v")];
    assert_eq!(price(&upsert, &end), [w(5.0)]);
}

#[test]
fn a_meter_prices_an_update_at_the_item_it_leaves_and_remembers_it() {
    // One request at a time, as the interceptor's meter sees them.
    let schema = Schema::seatclaim();
    let key = json!({"PK": {"S": "ORDER#4"}, "SK": {"S": "ORDER"}});
    let put = ok(
        "PutItem",
        json!({"Item": item("ORDER#4", "ORDER", 300, json!({}))}),
    );
    let (_, mut known) = charges_after(&put, &schema, &Known::default());
    // 300 bytes before, 1,305 after: 2 units, not the 1 the size last
    // seen would give.
    let (grown, changed) = charges_after(&ok("UpdateItem", growing(&key)), &schema, &known);
    assert_eq!(grown[0].write_units, 2.0, "{grown:?}");
    known.absorb(changed);
    let (marked, _) = charges_after(&ok("UpdateItem", marking(&key)), &schema, &known);
    assert_eq!(marked[0].write_units, 2.0, "{marked:?}");
}

#[test]
fn an_item_is_priced_at_its_size_when_touched_not_at_the_runs_end() {
    // The run ends with the order at 5,000 bytes; along the way it was
    // 300, then 1,300 bytes, then gone.
    let key = json!({"PK": {"S": "ORDER#3"}, "SK": {"S": "ORDER"}});
    // A create, as the store puts new items: nothing was there before.
    let put = json!({
        "Item": item("ORDER#3", "ORDER", 300, json!({})),
        "ConditionExpression": "attribute_not_exists(PK)",
    });
    let (grow, mark) = (growing(&key), marking(&key));
    let records = [
        ok("PutItem", put.clone()),
        // Before 300, after 1,305: the larger.
        ok("UpdateItem", grow),
        ok("UpdateItem", mark.clone()),
        // A failed condition costs the item as it is, and changes nothing.
        failed("UpdateItem", "ConditionalCheckFailedException", mark),
        ok("DeleteItem", json!({"Key": key})),
        // Put again after the delete: only what is sent.
        ok("PutItem", put),
    ];
    let w = |units: f64| row("ORDER#3", units, 0.0);
    assert_eq!(
        price(&records, &[("ORDER#3", "ORDER", 5000)]),
        [w(1.0), w(2.0), w(2.0), w(2.0), w(2.0), w(1.0)]
    );
}
