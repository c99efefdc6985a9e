//! What a metered attempt's request and answer show: a transaction's
//! items, the sizes of the items they show whole, and the ARN a throttle
//! names.

use std::collections::HashMap;

use serde_json::Value;

use super::expressions::key_text;
use super::meter::Throttle;
use super::{item_size, Recorded, Schema};

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

/// Items the attempt shows whole (put, or read back), by key.
pub(super) fn learn_sizes(
    sizes: &mut HashMap<(String, String), usize>,
    record: &Recorded,
    schema: &Schema,
) {
    let mut learn = |item: &Value| {
        let (Some(object), Some(pk)) = (item.as_object(), key_text(&item[&schema.pk_attr])) else {
            return;
        };
        let sk = key_text(&item[&schema.sk_attr]).unwrap_or_default();
        sizes.insert((pk, sk), item_size(object));
    };
    let (req, resp) = (&record.request, &record.response);
    learn(&req["Item"]);
    for item in transaction_items(req) {
        learn(&item["Put"]["Item"]);
    }
    learn(&resp["Item"]);
    // An index's items, or a projection, are not the table's whole items.
    let projected = req["IndexName"].is_string() || req["ProjectionExpression"].is_string();
    for item in resp["Items"].as_array().into_iter().flatten() {
        if !projected {
            learn(item);
        }
    }
    for response in resp["Responses"].as_array().into_iter().flatten() {
        learn(&response["Item"]);
    }
    for items in resp["Responses"]
        .as_object()
        .into_iter()
        .flat_map(|t| t.values())
    {
        for item in items.as_array().into_iter().flatten() {
            learn(item);
        }
    }
}
