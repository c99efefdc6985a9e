//! Update expressions as seatclaim's store writes them, applied to
//! hand-written wire items.

use serde_json::{json, Value};

use super::*;

fn item(v: Value) -> Item {
    v.as_object().cloned().unwrap_or_default()
}

fn update(expression: &str, names: Value, values: Value) -> Value {
    json!({
        "UpdateExpression": expression,
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": values,
    })
}

#[test]
fn set_adds_and_subtracts_and_remove_drops() {
    let before = item(json!({"free": {"N": "10"}, "me": {"S": "x"}, "ttl": {"N": "5"}}));
    let body = update(
        "SET #free = #free + :delta, #sold = #free - :sold REMOVE #ttl",
        json!({"#free": "free", "#sold": "sold", "#ttl": "ttl"}),
        json!({":delta": {"N": "-3"}, ":sold": {"N": "4"}}),
    );
    let after = updated(&before, &body);
    // Every operand reads the item as it was: `#sold` is 10 - 4, not 7 - 4.
    let want = item(json!({"free": {"N": "7"}, "me": {"S": "x"}, "sold": {"N": "6"}}));
    assert_eq!(after, Some(want));
}

#[test]
fn add_counts_from_zero_and_joins_sets() {
    let before = item(json!({"seats": {"SS": ["A-1"]}}));
    let body = update(
        "ADD #seats :seat, #version :one SET #k = :k",
        json!({"#seats": "seats", "#version": "version", "#k": "keyedBlock"}),
        json!({":seat": {"SS": ["A-1", "A-2"]}, ":one": {"N": "1"}, ":k": {"S": "b"}}),
    );
    let want = item(json!({
        "seats": {"SS": ["A-1", "A-2"]},
        "version": {"N": "1"},
        "keyedBlock": {"S": "b"},
    }));
    assert_eq!(updated(&before, &body), Some(want));
}

#[test]
fn a_nested_attribute_is_set_inside_its_map() {
    let before = item(json!({"me": {"M": {"q": {"N": "2"}}}}));
    let body = update(
        "SET #me.#q = :keeps, #me.#e = :exp",
        json!({"#me": "me", "#q": "q", "#e": "e"}),
        json!({":keeps": {"N": "1"}, ":exp": {"N": "99"}}),
    );
    let want = item(json!({"me": {"M": {"q": {"N": "1"}, "e": {"N": "99"}}}}));
    assert_eq!(updated(&before, &body), Some(want));
    // No parent map: DynamoDB refuses the update; it cannot be read here.
    assert_eq!(updated(&Item::new(), &body), None);
}

#[test]
fn if_not_exists_keeps_what_is_there() {
    let body = update(
        "SET #a = if_not_exists(#a, :zero)",
        json!({"#a": "a"}),
        json!({":zero": {"N": "0"}}),
    );
    let kept = item(json!({"a": {"N": "12"}}));
    assert_eq!(updated(&kept, &body), Some(kept.clone()));
    assert_eq!(
        updated(&Item::new(), &body),
        Some(item(json!({"a": {"N": "0"}})))
    );
}

#[test]
fn list_append_joins_two_lists() {
    let before = item(json!({"l": {"L": [{"N": "1"}]}}));
    let body = update(
        "SET #l = list_append(#l, :more)",
        json!({"#l": "l"}),
        json!({":more": {"L": [{"N": "2"}]}}),
    );
    let want = item(json!({"l": {"L": [{"N": "1"}, {"N": "2"}]}}));
    assert_eq!(updated(&before, &body), Some(want));
}

#[test]
fn delete_takes_elements_and_an_emptied_set_goes() {
    let before = item(json!({"parts": {"SS": ["1", "2"]}}));
    let take = |values: Value| update("DELETE #p :v", json!({"#p": "parts"}), values);
    let one = take(json!({":v": {"SS": ["1"]}}));
    assert_eq!(
        updated(&before, &one),
        Some(item(json!({"parts": {"SS": ["2"]}})))
    );
    let both = take(json!({":v": {"SS": ["1", "2"]}}));
    assert_eq!(updated(&before, &both), Some(Item::new()));
}

#[test]
fn what_it_cannot_read_is_none() {
    let before = item(json!({"l": {"L": [{"N": "1"}]}}));
    let indexed = update(
        "SET #l[0] = :v",
        json!({"#l": "l"}),
        json!({":v": {"N": "2"}}),
    );
    assert_eq!(updated(&before, &indexed), None);
    let unknown = update("SET #l = size(#l)", json!({"#l": "l"}), json!({}));
    assert_eq!(updated(&before, &unknown), None);
    assert_eq!(updated(&before, &json!({})), None);
}
