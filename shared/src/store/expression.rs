//! Every expression the store sends — conditions, updates, key
//! conditions — is an [`Expression`] that carries its own names
//! (`#status`) and values (`:now`), so no caller binds a placeholder by
//! hand and no placeholder is bound twice differently. Each is written in
//! the module of the item it writes (`items/`).
//!
//! The one expiry boundary lives here too ([`live!`], [`expired!`]).

use aws_sdk_dynamodb::operation::put_item::builders::PutItemFluentBuilder;
use aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder;
use aws_sdk_dynamodb::operation::update_item::builders::UpdateItemFluentBuilder;
use aws_sdk_dynamodb::types::builders::{
    ConditionCheckBuilder, DeleteBuilder, PutBuilder, UpdateBuilder,
};
use aws_sdk_dynamodb::types::AttributeValue;
use std::collections::HashMap;

/// The one expiry boundary (docs/API.md, Clocks; the domain's
/// [`crate::domain::hold_is_live`]): a hold or an order with expiry `t` is
/// live while `now < t` and expired from `now >= t`. Every condition that
/// compares an expiry (or a deadline) with `:now` is written with
/// `live!` or `expired!`, so the store cannot drift from the domain; the
/// tests below check both against the domain at the exact millisecond and
/// that no store file compares with `:now` by hand.
macro_rules! live {
    ($expiry:literal) => {
        concat!($expiry, " > :now")
    };
}
/// See [`live!`]: the complement, `now >= expiry`.
macro_rules! expired {
    ($expiry:literal) => {
        concat!($expiry, " <= :now")
    };
}

/// An expression with its bindings, set on a request in one call: an
/// update and its condition, a condition alone (a put), or a query's key
/// condition.
#[derive(Debug, Default, Clone)]
pub(super) struct Expression {
    update: Option<String>,
    condition: Option<String>,
    key_condition: Option<String>,
    names: HashMap<String, String>,
    values: HashMap<String, AttributeValue>,
}

impl Expression {
    /// Whether it carries a condition yet.
    pub(super) fn has_condition(&self) -> bool {
        self.condition.is_some()
    }

    pub(super) fn update(text: impl Into<String>) -> Self {
        Self {
            update: Some(text.into()),
            ..Self::default()
        }
    }
    pub(super) fn condition(text: impl Into<String>) -> Self {
        Self {
            condition: Some(text.into()),
            ..Self::default()
        }
    }
    pub(super) fn key_condition(text: impl Into<String>) -> Self {
        Self {
            key_condition: Some(text.into()),
            ..Self::default()
        }
    }
    /// `SET` each of `attributes` to its value (names `#a{i}`, values
    /// `:a{i}`): a whole item written by `UpdateItem`, which IAM can hold
    /// to a list of attributes (`dynamodb:Attributes`) where a `PutItem`
    /// would replace anything it names.
    pub(super) fn set_all(attributes: Vec<(String, AttributeValue)>) -> Self {
        let mut out = Self::default();
        let mut clauses = Vec::with_capacity(attributes.len());
        for (i, (name, value)) in attributes.into_iter().enumerate() {
            clauses.push(format!("#a{i} = :a{i}"));
            out = out
                .name(&format!("#a{i}"), name)
                .value(&format!(":a{i}"), value);
        }
        out.update = Some(format!("SET {}", clauses.join(", ")));
        out
    }
    /// A put's condition that it creates the item: never overwrites one.
    pub(super) fn new_item() -> Self {
        Self::condition("attribute_not_exists(PK)")
    }
    /// Binds the name placeholder `#x` to attribute `attribute`.
    pub(super) fn name(mut self, placeholder: &str, attribute: impl Into<String>) -> Self {
        self.names.insert(placeholder.to_owned(), attribute.into());
        self
    }
    /// Binds the value placeholder `:x` to `value`.
    pub(super) fn value(mut self, placeholder: &str, value: AttributeValue) -> Self {
        self.values.insert(placeholder.to_owned(), value);
        self
    }
    /// This update with the item's `changedAt` set to `now` as well (in
    /// its `SET` clause, or one of its own): every write of an order, seat
    /// or bucket that the events out tell is stamped so (`store::stream`).
    pub(super) fn stamped(self, now: crate::domain::Millis) -> Self {
        self.also_set("#changedAt = :changedAt")
            .name("#changedAt", super::schema::CHANGED_AT)
            .value(":changedAt", AttributeValue::N(now.0.to_string()))
    }

    /// This update setting `action` as well (in its `SET` clause, or one
    /// of its own); the caller binds its names and values.
    pub(super) fn also_set(mut self, action: &str) -> Self {
        let text = self.update.take().unwrap_or_default();
        self.update = Some(match text.find("SET ") {
            Some(at) => format!("{}SET {action}, {}", &text[..at], &text[at + 4..]),
            None => format!("SET {action} {text}"),
        });
        self
    }

    /// This expression under `other`'s condition too (`AND`), with
    /// `other`'s bindings. A placeholder both bind must mean the same thing.
    pub(super) fn and(mut self, other: Expression) -> Self {
        debug_assert!(other.update.is_none() && other.key_condition.is_none());
        self.condition = match (self.condition.take(), other.condition) {
            (Some(a), Some(b)) => Some(format!("{a} AND {b}")),
            (a, b) => a.or(b),
        };
        for (k, v) in other.names {
            debug_assert!(
                self.names.get(&k).is_none_or(|old| *old == v),
                "{k} bound twice"
            );
            self.names.insert(k, v);
        }
        for (k, v) in other.values {
            debug_assert!(
                self.values.get(&k).is_none_or(|old| *old == v),
                "{k} bound twice"
            );
            self.values.insert(k, v);
        }
        self
    }

    /// The attribute names it binds (what IAM's `dynamodb:Attributes`
    /// sees of an update, besides the key).
    #[cfg(test)]
    pub(super) fn attribute_names(&self) -> std::collections::BTreeSet<String> {
        self.names.values().cloned().collect()
    }

    fn names(&mut self) -> Option<HashMap<String, String>> {
        // DynamoDB rejects an empty map: none at all when nothing is bound.
        (!self.names.is_empty()).then(|| std::mem::take(&mut self.names))
    }
    fn values(&mut self) -> Option<HashMap<String, AttributeValue>> {
        (!self.values.is_empty()).then(|| std::mem::take(&mut self.values))
    }

    /// On a transaction's `Update` item.
    pub(super) fn on_update(mut self, b: UpdateBuilder) -> UpdateBuilder {
        let (names, values) = (self.names(), self.values());
        b.set_update_expression(self.update)
            .set_condition_expression(self.condition)
            .set_expression_attribute_names(names)
            .set_expression_attribute_values(values)
    }
    /// On an `UpdateItem` request.
    pub(super) fn on_update_item(mut self, b: UpdateItemFluentBuilder) -> UpdateItemFluentBuilder {
        let (names, values) = (self.names(), self.values());
        b.set_update_expression(self.update)
            .set_condition_expression(self.condition)
            .set_expression_attribute_names(names)
            .set_expression_attribute_values(values)
    }
    /// On a transaction's `ConditionCheck` item (a condition alone).
    pub(super) fn on_condition_check(mut self, b: ConditionCheckBuilder) -> ConditionCheckBuilder {
        debug_assert!(self.update.is_none());
        let (names, values) = (self.names(), self.values());
        b.set_condition_expression(self.condition)
            .set_expression_attribute_names(names)
            .set_expression_attribute_values(values)
    }
    /// On a transaction's `Put` item.
    pub(super) fn on_put(mut self, b: PutBuilder) -> PutBuilder {
        debug_assert!(self.update.is_none());
        let (names, values) = (self.names(), self.values());
        b.set_condition_expression(self.condition)
            .set_expression_attribute_names(names)
            .set_expression_attribute_values(values)
    }
    /// On a transaction's `Delete` item (a condition alone).
    pub(super) fn on_delete(mut self, b: DeleteBuilder) -> DeleteBuilder {
        debug_assert!(self.update.is_none());
        let (names, values) = (self.names(), self.values());
        b.set_condition_expression(self.condition)
            .set_expression_attribute_names(names)
            .set_expression_attribute_values(values)
    }
    /// On a `PutItem` request.
    pub(super) fn on_put_item(mut self, b: PutItemFluentBuilder) -> PutItemFluentBuilder {
        debug_assert!(self.update.is_none());
        let (names, values) = (self.names(), self.values());
        b.set_condition_expression(self.condition)
            .set_expression_attribute_names(names)
            .set_expression_attribute_values(values)
    }
    /// On a `Query` request (its key condition).
    pub(super) fn on_query(mut self, b: QueryFluentBuilder) -> QueryFluentBuilder {
        let (names, values) = (self.names(), self.values());
        b.set_key_condition_expression(self.key_condition)
            .set_expression_attribute_names(names)
            .set_expression_attribute_values(values)
    }
}

#[cfg(test)]
#[path = "expression_tests.rs"]
mod tests;
