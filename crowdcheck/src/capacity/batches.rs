//! A batch under the enforcing meter, as DynamoDB answers one: its entries
//! are throttled one by one, and those it could not serve come back in
//! the answer as `UnprocessedKeys` (BatchGetItem) or `UnprocessedItems`
//! (BatchWriteItem) with a 200; only a batch none of whose entries could
//! be served is refused whole, with the throttling error
//! (<https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchGetItem.html>,
//! <https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchWriteItem.html>).
//! So the meter sends DynamoDB Local only the entries it served, and adds
//! the others to the answer's unprocessed ones.

use std::pin::Pin;
use std::task::{ready, Context, Poll};

use aws_smithy_types::body::SdkBody;
use bytes::{Bytes, BytesMut};
use http_body::{Body, Frame};
use serde_json::{json, Map, Value};

/// Whether `op` is a batch the meter splits.
pub(super) fn is_batch(op: &str) -> bool {
    matches!(op, "BatchGetItem" | "BatchWriteItem")
}

/// Where the answer to `op` names what it left.
fn unprocessed_field(op: &str) -> &'static str {
    match op {
        "BatchGetItem" => "UnprocessedKeys",
        _ => "UnprocessedItems",
    }
}

/// A table's entries in a batch: BatchGetItem's keys sit under `Keys`
/// beside how to read them, BatchWriteItem's requests are the list itself.
fn table_entries<'a>(op: &str, spec: &'a Value) -> &'a [Value] {
    let list = if op == "BatchGetItem" {
        &spec["Keys"]
    } else {
        spec
    };
    list.as_array().map_or(&[], Vec::as_slice)
}

/// `spec` with only `entries`.
fn with_entries(op: &str, spec: &Value, entries: Vec<Value>) -> Value {
    if op == "BatchGetItem" {
        let mut spec = spec.clone();
        spec["Keys"] = Value::Array(entries);
        spec
    } else {
        Value::Array(entries)
    }
}

fn tables(request: &Value) -> impl Iterator<Item = (&String, &Value)> {
    request["RequestItems"].as_object().into_iter().flatten()
}

/// Each entry of the batch `request` as a batch of its own, in order: what
/// the meter prices and judges one by one.
pub(super) fn entries(op: &str, request: &Value) -> Vec<Value> {
    let mut each = Vec::new();
    for (table, spec) in tables(request) {
        for entry in table_entries(op, spec) {
            let one = with_entries(op, spec, vec![entry.clone()]);
            each.push(json!({ "RequestItems": { table.clone(): one } }));
        }
    }
    each
}

/// `request` split by `served` (a flag per entry, in [`entries`]' order):
/// the request DynamoDB Local is sent, and the unprocessed entries the
/// answer must add (`{"UnprocessedKeys": {...}}` or `{"UnprocessedItems":
/// {...}}`).
pub(super) fn split(op: &str, request: &Value, served: &[bool]) -> (Value, Value) {
    let mut flags = served.iter().copied();
    let (mut sent, mut left) = (Map::new(), Map::new());
    for (table, spec) in tables(request) {
        let (mut keep, mut leave) = (Vec::new(), Vec::new());
        for entry in table_entries(op, spec) {
            match flags.next().unwrap_or(true) {
                true => keep.push(entry.clone()),
                false => leave.push(entry.clone()),
            }
        }
        if !keep.is_empty() {
            sent.insert(table.clone(), with_entries(op, spec, keep));
        }
        if !leave.is_empty() {
            left.insert(table.clone(), with_entries(op, spec, leave));
        }
    }
    let mut sent_request = request.clone();
    sent_request["RequestItems"] = Value::Object(sent);
    (sent_request, json!({ unprocessed_field(op): left }))
}

/// `answer` with `left`'s entries added to those it names unprocessed.
pub(super) fn with_unprocessed(op: &str, answer: &Value, left: &Value) -> Value {
    let field = unprocessed_field(op);
    let mut answer = answer.clone();
    if !answer[field].is_object() {
        answer[field] = json!({});
    }
    for (table, spec) in left[field].as_object().into_iter().flatten() {
        let already = table_entries(op, &answer[field][table]).to_vec();
        let both = already
            .into_iter()
            .chain(table_entries(op, spec).iter().cloned())
            .collect();
        answer[field][table] = with_entries(op, spec, both);
    }
    answer
}

/// A served batch's answer body, read whole and sent on with the meter's
/// unprocessed entries added: the interceptor sees the answer before its
/// body has arrived.
pub(super) struct WithUnprocessed {
    inner: SdkBody,
    read: BytesMut,
    op: String,
    left: Value,
    /// DynamoDB's answers carry no trailers; any the body has go on after
    /// its data.
    trailers: Option<Frame<Bytes>>,
    data_sent: bool,
}

impl WithUnprocessed {
    pub(super) fn body(inner: SdkBody, op: &str, left: Value) -> SdkBody {
        SdkBody::from_body_1_x(WithUnprocessed {
            inner,
            read: BytesMut::new(),
            op: op.to_owned(),
            left,
            trailers: None,
            data_sent: false,
        })
    }
}

impl Body for WithUnprocessed {
    type Data = Bytes;
    type Error = aws_smithy_types::body::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        loop {
            if self.data_sent {
                return Poll::Ready(self.trailers.take().map(Ok));
            }
            match ready!(Pin::new(&mut self.inner).poll_frame(cx)) {
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) => self.read.extend_from_slice(&data),
                    Err(trailers) => self.trailers = Some(trailers),
                },
                Some(Err(e)) => return Poll::Ready(Some(Err(e))),
                None => {
                    self.data_sent = true;
                    // A served batch's answer that is not JSON cannot say
                    // what the meter left: an error, never entries
                    // silently dropped.
                    let answer: Value = match serde_json::from_slice(&self.read) {
                        Ok(answer) => answer,
                        Err(e) => {
                            let e = format!("capacity meter: a batch's answer is not JSON: {e}");
                            return Poll::Ready(Some(Err(e.into())));
                        }
                    };
                    let whole = with_unprocessed(&self.op, &answer, &self.left).to_string();
                    return Poll::Ready(Some(Ok(Frame::data(Bytes::from(whole)))));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(pk: &str) -> Value {
        json!({"PK": {"S": pk}, "SK": {"S": "X"}})
    }

    #[test]
    fn a_get_batch_is_split_by_entry_and_its_unprocessed_keys_added_to_the_answer() {
        let request = json!({"RequestItems": {"t": {"Keys": [key("A"), key("B"), key("C")], "ConsistentRead": true}},
                             "ReturnConsumedCapacity": "TOTAL"});
        let each = entries("BatchGetItem", &request);
        assert_eq!(each.len(), 3);
        assert_eq!(
            each[1],
            json!({"RequestItems": {"t": {"Keys": [key("B")], "ConsistentRead": true}}})
        );
        let (sent, left) = split("BatchGetItem", &request, &[true, false, true]);
        assert_eq!(
            sent,
            json!({"RequestItems": {"t": {"Keys": [key("A"), key("C")], "ConsistentRead": true}},
                   "ReturnConsumedCapacity": "TOTAL"})
        );
        let answer = json!({"Responses": {"t": []}, "UnprocessedKeys": {"t": {"Keys": [key("C")], "ConsistentRead": true}}});
        let told = with_unprocessed("BatchGetItem", &answer, &left);
        assert_eq!(
            told["UnprocessedKeys"],
            json!({"t": {"Keys": [key("C"), key("B")], "ConsistentRead": true}})
        );
        assert_eq!(told["Responses"], answer["Responses"]);
    }

    #[test]
    fn a_write_batch_is_split_by_entry_and_its_unprocessed_items_added_to_the_answer() {
        let put = |pk| json!({"PutRequest": {"Item": key(pk)}});
        let delete = json!({"DeleteRequest": {"Key": key("D")}});
        let request = json!({"RequestItems": {"t": [put("A"), delete.clone()], "u": [put("B")]}});
        assert_eq!(
            entries("BatchWriteItem", &request)[1],
            json!({"RequestItems": {"t": [delete.clone()]}})
        );
        let (sent, left) = split("BatchWriteItem", &request, &[true, false, false]);
        assert_eq!(sent, json!({"RequestItems": {"t": [put("A")]}}));
        let told = with_unprocessed("BatchWriteItem", &json!({"UnprocessedItems": {}}), &left);
        assert_eq!(
            told,
            json!({"UnprocessedItems": {"t": [delete], "u": [put("B")]}})
        );
    }
}
