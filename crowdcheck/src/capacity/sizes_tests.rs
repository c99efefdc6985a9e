//! Unit tests of item sizes in `sizes.rs` (hand-written wire JSON), and
//! the helper the pricing tests size their items with.
use serde_json::json;

use super::*;

pub(in crate::capacity) fn obj(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

pub(in crate::capacity) fn size(v: Value) -> usize {
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
    assert_eq!(
        size(json!({"n": {"N": "1712345678901"}})),
        1 + 8,
        "13 digits"
    );
    assert_eq!(
        size(json!({"n": {"N": "1000"}})),
        1 + 2,
        "trailing zeros trimmed"
    );
    assert_eq!(
        size(json!({"n": {"N": "-0.0500"}})),
        1 + 2,
        "sign, point and zeros are not digits"
    );
    assert_eq!(
        size(json!({"n": {"N": "1.5E+10"}})),
        1 + 2,
        "the exponent is not digits"
    );
    assert_eq!(size(json!({"n": {"N": "0"}})), 1 + 1);
    // Binary: raw bytes, padded or not ("hello", "hi").
    assert_eq!(size(json!({"b": {"B": "aGVsbG8="}})), 1 + 5);
    assert_eq!(size(json!({"b": {"B": "aGk"}})), 1 + 2);
    assert_eq!(
        size(json!({"ok": {"BOOL": true}, "nil": {"NULL": true}})),
        3 + 4
    );
}

#[test]
fn documents_and_sets() {
    // 1 (name) + 3 (list) + (1 + 2) + (1 + 2): each element costs 1 more.
    assert_eq!(size(json!({"l": {"L": [{"S": "ab"}, {"N": "7"}]}})), 10);
    assert_eq!(
        size(json!({"e": {"L": []}, "f": {"M": {}}})),
        4 + 4,
        "empty: 3 bytes"
    );
    // 1 + 3 + (1 + "k" 1 + "v" 1)
    assert_eq!(size(json!({"m": {"M": {"k": {"S": "v"}}}})), 7);
    // Nested: 1 + 3 + (1 + 1 + (3 + (1 + 1)))
    assert_eq!(
        size(json!({"m": {"M": {"l": {"L": [{"BOOL": false}]}}}})),
        11
    );
    assert_eq!(size(json!({"ss": {"SS": ["a", "bc"]}})), 2 + 3);
    assert_eq!(size(json!({"ns": {"NS": ["1", "22"]}})), 2 + 2 + 2);
    assert_eq!(size(json!({"bs": {"BS": ["aGVsbG8=", "aGk="]}})), 2 + 5 + 2);
}
