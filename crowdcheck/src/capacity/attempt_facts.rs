//! What a metered attempt's request shows: a transaction's items, and
//! the ARN a throttle names.

use serde_json::Value;

use super::meter::Throttle;

pub(super) fn transaction_items(request: &Value) -> impl Iterator<Item = &Value> {
    request["TransactItems"].as_array().into_iter().flatten()
}

/// The throttled table's or index's ARN, as `ThrottlingReasons` names it.
pub(super) fn resource(request: &Value, throttle: &Throttle) -> String {
    let table = request["TableName"]
        .as_str()
        .or_else(|| {
            request["RequestItems"]
                .as_object()
                .and_then(|tables| tables.keys().next())
                .map(String::as_str)
        })
        .unwrap_or("unknown");
    let index = throttle.index();
    let arn = format!("arn:aws:dynamodb:us-east-1:000000000000:table/{table}");
    match index {
        Some(index) => format!("{arn}/index/{index}"),
        None => arn,
    }
}
