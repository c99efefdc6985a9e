//! Attribute values: an item as the SDK sends and returns it, the values
//! the store writes (`s`, `n`, `ss`), and typed reads of an item's
//! attributes ([`Fields`]), where a missing or mistyped attribute is a
//! `Malformed` error naming the item.

use super::errors::StoreError;
use super::schema::{PK, SK};
use crate::error::Error;
use aws_sdk_dynamodb::types::AttributeValue;
use std::collections::HashMap;

pub(in crate::store) type Item = HashMap<String, AttributeValue>;

pub(in crate::store) fn s(v: impl Into<String>) -> AttributeValue {
    AttributeValue::S(v.into())
}

pub(in crate::store) fn n(v: impl ToString) -> AttributeValue {
    AttributeValue::N(v.to_string())
}

pub(in crate::store) fn ss(values: &[&str]) -> AttributeValue {
    AttributeValue::Ss(values.iter().map(|v| (*v).to_owned()).collect())
}

/// Typed reads of item attributes; a missing or mistyped attribute is a
/// `Malformed` store error naming the item and the attribute.
pub(in crate::store) struct Fields<'a> {
    item: &'a Item,
}

impl<'a> Fields<'a> {
    pub(in crate::store) fn new(item: &'a Item) -> Self {
        Self { item }
    }
    pub(in crate::store) fn key(&self) -> String {
        let get = |k| {
            self.item
                .get(k)
                .and_then(|v: &AttributeValue| v.as_s().ok())
                .map(String::as_str)
        };
        format!("{}/{}", get(PK).unwrap_or("?"), get(SK).unwrap_or("?"))
    }
    pub(in crate::store) fn malformed(&self, attr: &str) -> StoreError {
        StoreError::Malformed {
            key: self.key(),
            problem: format!("{attr} missing or mistyped"),
        }
    }
    pub(in crate::store) fn opt_s(&self, attr: &str) -> Option<&'a str> {
        self.item
            .get(attr)
            .and_then(|v| v.as_s().ok())
            .map(String::as_str)
    }
    /// A map attribute, if present (`Err`: present but not a map).
    pub(in crate::store) fn opt_map(&self, attr: &str) -> Result<Option<&'a Item>, StoreError> {
        self.item
            .get(attr)
            .map(|v| v.as_m().map_err(|_| self.malformed(attr)))
            .transpose()
    }
    pub(in crate::store) fn str(&self, attr: &str) -> Result<&'a str, StoreError> {
        self.opt_s(attr).ok_or_else(|| self.malformed(attr))
    }
    pub(in crate::store) fn opt_i64(&self, attr: &str) -> Result<Option<i64>, StoreError> {
        match self.item.get(attr) {
            None => Ok(None),
            Some(v) => v
                .as_n()
                .ok()
                .and_then(|x| x.parse().ok())
                .map(Some)
                .ok_or_else(|| self.malformed(attr)),
        }
    }
    pub(in crate::store) fn i64(&self, attr: &str) -> Result<i64, StoreError> {
        self.opt_i64(attr)?.ok_or_else(|| self.malformed(attr))
    }
    pub(in crate::store) fn u32(&self, attr: &str) -> Result<u32, StoreError> {
        u32::try_from(self.i64(attr)?).map_err(|_| self.malformed(attr))
    }
    pub(in crate::store) fn string_set(&self, attr: &str) -> Result<Vec<String>, StoreError> {
        match self.item.get(attr) {
            None => Ok(Vec::new()),
            Some(AttributeValue::Ss(v)) => Ok(v.clone()),
            Some(_) => Err(self.malformed(attr)),
        }
    }
    pub(in crate::store) fn id<T>(
        &self,
        attr: &str,
        parse: fn(&str) -> Result<T, Error>,
    ) -> Result<T, StoreError> {
        parse(self.str(attr)?).map_err(|_| self.malformed(attr))
    }
}
