//! Transaction conflicts, which DynamoDB Local never has (it runs one
//! request at a time): DynamoDB refuses a write to an item that an ongoing
//! `TransactWriteItems` is changing. A transaction with such an item is
//! cancelled, `TransactionConflict` on that item; a plain `PutItem`,
//! `UpdateItem` or `DeleteItem` gets `TransactionConflictException`
//! (<https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling>).
//! Whether a conflict is charged, the guide does not say; the meter
//! charges it as if it ran (the dearer reading). Reads never conflict here: `GetItem` reads what was committed, and
//! seatclaim sends no `TransactGetItems`.
//!
//! Modelled: on a simulated clock (the bench's instants), a transaction is
//! ongoing for [`TRANSACTION_MS`] from the instant the meter let it
//! through, so requests of one simulated instant conflict as requests of
//! one real instant would, whatever order the emulator runs them in. On
//! the wall clock, requests really overlap: a transaction is ongoing from
//! the instant it was let through until it is answered ([`Ongoing::end`]),
//! and a write sent after that answer never meets it.

use std::collections::HashMap;

use serde_json::Value;

use super::expressions::key_text;
use super::Schema;
use local::faults::Fault;

/// How long a transaction is ongoing on the run's clock. Assumed: the
/// guide gives no figure; DynamoDB's transactions paper (USENIX ATC 2023,
/// <https://www.usenix.org/system/files/atc23-idziorek.pdf>) puts a write
/// transaction at about 4× a plain write; a plain write is taken as 5 ms.
pub const TRANSACTION_MS: i64 = 20;

/// An item by its key's values as text: (partition key, sort key).
pub(super) type ItemKey = (String, String);

/// The instant each item's last transaction began.
#[derive(Debug, Default)]
pub(super) struct Ongoing {
    began: HashMap<ItemKey, i64>,
}

impl Ongoing {
    /// A transaction changing `items` began at `at_ms`. Requests of the
    /// run's clock arrive in any order: an item keeps its latest start.
    pub(super) fn begin(&mut self, items: &[ItemKey], at_ms: i64) {
        for item in items {
            let began = self.began.entry(item.clone()).or_insert(at_ms);
            *began = (*began).max(at_ms);
        }
    }

    /// The transaction that began at `at_ms` on `items` was answered: on
    /// the wall clock it is over (a later one on an item stays ongoing).
    pub(super) fn end(&mut self, items: &[ItemKey], at_ms: i64) {
        for item in items {
            if self.began.get(item) == Some(&at_ms) {
                self.began.remove(item);
            }
        }
    }

    /// What DynamoDB answers a write of `items` by `op` at `at_ms`, if it
    /// meets a transaction ongoing then.
    pub(super) fn refusal(&self, op: &str, items: &[ItemKey], at_ms: i64) -> Option<Fault> {
        let ongoing = |item: &ItemKey| {
            self.began
                .get(item)
                .is_some_and(|began| (at_ms - began).abs() < TRANSACTION_MS)
        };
        let conflicts: Vec<bool> = items.iter().map(ongoing).collect();
        conflict_fault(op, &conflicts)
    }
}

/// The error for a write whose items conflict where `conflicts` says
/// (one flag per item, in request order), if any does: a transaction is
/// cancelled naming each conflicting item, a plain write refused whole.
pub(super) fn conflict_fault(op: &str, conflicts: &[bool]) -> Option<Fault> {
    if !conflicts.contains(&true) {
        return None;
    }
    Some(match op {
        "TransactWriteItems" => Fault::TransactionCanceled(
            conflicts
                .iter()
                .map(|&c| if c { "TransactionConflict" } else { "None" })
                .collect(),
        ),
        _ => Fault::TransactionConflict,
    })
}

/// The items a write changes or checks, in request order: each of a
/// transaction's actions, or a plain write's one item. None for a read or
/// a batch (a batch write never conflicts: it is not refused for one).
pub(super) fn written_items(op: &str, request: &Value, schema: &Schema) -> Vec<ItemKey> {
    let key_of = |item: &Value| -> Option<ItemKey> {
        let pk = key_text(&item[&schema.pk_attr])?;
        Some((pk, key_text(&item[&schema.sk_attr]).unwrap_or_default()))
    };
    let action_key = |action: &Value| {
        ["Put", "Update", "Delete", "ConditionCheck"]
            .iter()
            .find_map(|kind| {
                let body = &action[*kind];
                key_of(if *kind == "Put" {
                    &body["Item"]
                } else {
                    &body["Key"]
                })
            })
    };
    match op {
        "TransactWriteItems" => request["TransactItems"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(action_key)
            .collect(),
        "PutItem" => key_of(&request["Item"]).into_iter().collect(),
        "UpdateItem" | "DeleteItem" => key_of(&request["Key"]).into_iter().collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key(pk: &str, sk: &str) -> ItemKey {
        (pk.to_owned(), sk.to_owned())
    }

    #[test]
    fn a_write_meeting_a_transaction_in_flight_is_refused_as_dynamodb_refuses_it() {
        let schema = Schema::seatclaim();
        let claim = json!({"TransactItems": [
            {"Update": {"Key": {"PK": {"S": "SEATS#e#A-1"}, "SK": {"S": "A-1-1"}}}},
            {"ConditionCheck": {"Key": {"PK": {"S": "ORDER#1"}, "SK": {"S": "ORDER"}}}},
        ]});
        let items = written_items("TransactWriteItems", &claim, &schema);
        assert_eq!(
            items,
            [key("SEATS#e#A-1", "A-1-1"), key("ORDER#1", "ORDER")]
        );
        let mut ongoing = Ongoing::default();
        assert_eq!(ongoing.refusal("TransactWriteItems", &items, 100), None);
        ongoing.begin(&items, 100);
        // Another order's claim of the same seat while it runs (either
        // side of its instant: the emulator runs them in any order).
        let rival = vec![key("SEATS#e#A-1", "A-1-1"), key("ORDER#2", "ORDER")];
        for at in [100, 100 + TRANSACTION_MS - 1, 100 - TRANSACTION_MS + 1] {
            assert_eq!(
                ongoing.refusal("TransactWriteItems", &rival, at),
                Some(Fault::TransactionCanceled(vec![
                    "TransactionConflict",
                    "None"
                ])),
                "at {at}"
            );
        }
        // A plain write of the order: refused whole.
        let put = json!({"Item": {"PK": {"S": "ORDER#1"}, "SK": {"S": "ORDER"}}});
        let plain = written_items("PutItem", &put, &schema);
        assert_eq!(
            ongoing.refusal("PutItem", &plain, 101),
            Some(Fault::TransactionConflict)
        );
        // Reads and other items pass; once it is over, nothing conflicts.
        assert!(written_items("GetItem", &put, &schema).is_empty());
        let other = [key("ORDER#3", "ORDER")];
        assert_eq!(ongoing.refusal("TransactWriteItems", &other, 101), None);
        let after = 100 + TRANSACTION_MS;
        assert_eq!(ongoing.refusal("TransactWriteItems", &rival, after), None);
    }

    #[test]
    fn on_the_wall_clock_a_transaction_answered_is_over() {
        let items = [key("EVENT#e", "HEAD"), key("PLAN#e#0", "PLAN")];
        let mut ongoing = Ongoing::default();
        ongoing.begin(&items, 100);
        ongoing.begin(&items[1..], 105);
        ongoing.end(&items, 100);
        // The head's transaction was answered: the next write of it, a
        // millisecond later, does not meet it; the plan's later one is
        // still ongoing.
        assert_eq!(ongoing.refusal("UpdateItem", &items[..1], 101), None);
        assert_eq!(
            ongoing.refusal("UpdateItem", &items[1..], 106),
            Some(Fault::TransactionConflict)
        );
        ongoing.end(&items[1..], 105);
        assert_eq!(ongoing.refusal("UpdateItem", &items[1..], 106), None);
    }
}
