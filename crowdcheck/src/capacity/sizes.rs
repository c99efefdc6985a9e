//! Item sizes, as DynamoDB bills them.

use serde_json::{Map, Value};

/// The size DynamoDB bills an item at, from its wire JSON (attribute name
/// to `{"S": …}`, `{"N": …}`, ...): the sum of attribute name lengths and
/// value sizes, by the published rules
/// (<https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html>).
pub fn item_size(item: &Map<String, Value>) -> usize {
    item.iter()
        .map(|(name, value)| name.len() + value_size(value))
        .sum()
}

fn value_size(value: &Value) -> usize {
    let Some((kind, v)) = value.as_object().and_then(|o| o.iter().next()) else {
        return 0;
    };
    let all = |f: fn(&str) -> usize| {
        v.as_array()
            .map_or(0, |a| a.iter().filter_map(Value::as_str).map(f).sum())
    };
    match kind.as_str() {
        // UTF-8 bytes.
        "S" => v.as_str().map_or(0, str::len),
        "N" => v.as_str().map_or(0, number_size),
        // Raw bytes, not the base64 that carries them.
        "B" => v.as_str().map_or(0, base64_len),
        "BOOL" | "NULL" => 1,
        // 3 bytes of overhead, and 1 per element; a map's elements are
        // name-value pairs, so their names count too.
        "L" => {
            3 + v
                .as_array()
                .map_or(0, |a| a.iter().map(|e| 1 + value_size(e)).sum())
        }
        "M" => {
            3 + v.as_object().map_or(0, |m| {
                m.iter().map(|(k, e)| 1 + k.len() + value_size(e)).sum()
            })
        }
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
    digits
        .trim_start_matches('0')
        .trim_end_matches('0')
        .len()
        .div_ceil(2)
        + 1
}

/// Decoded length of base64 text, padded or not.
fn base64_len(b64: &str) -> usize {
    let symbols = b64.trim().trim_end_matches('=').len();
    symbols * 6 / 8
}

#[cfg(test)]
#[path = "sizes_tests.rs"]
pub(in crate::capacity) mod tests;
