//! Reading DynamoDB's expressions as the recorded requests carry them:
//! tokens, `#name` and `:value` placeholders, the partition a key condition
//! names, and which index keys an update changes.

use serde_json::Value;

/// The text of a key attribute's value (`{"S": "EVENT#…"}` → `EVENT#…`).
pub(super) fn key_text(value: &Value) -> Option<String> {
    let (_, v) = value.as_object()?.iter().next()?;
    v.as_str().map(str::to_owned)
}

/// Splits a condition or update expression into words (names, `#names`,
/// `:values`, paths, keywords), comparison operators and single
/// punctuation marks.
pub(super) fn tokens(expr: &str) -> Vec<&str> {
    #[derive(PartialEq)]
    enum Class {
        Word,
        Operator,
        Other,
    }
    let class = |c: char| match c {
        c if c.is_alphanumeric() || "#:_.[]".contains(c) => Class::Word,
        '<' | '>' | '=' => Class::Operator,
        _ => Class::Other,
    };
    let mut out = Vec::new();
    let mut chars = expr.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        if c.is_whitespace() {
            continue;
        }
        let kind = class(c);
        let mut end = start + c.len_utf8();
        while let Some(&(i, next)) = chars.peek() {
            if kind == Class::Other || class(next) != kind || next.is_whitespace() {
                break;
            }
            end = i + next.len_utf8();
            chars.next();
        }
        out.push(&expr[start..end]);
    }
    out
}

/// An attribute name as written (`#shard` through ExpressionAttributeNames).
pub(super) fn resolve<'a>(token: &'a str, names: &'a Value) -> &'a str {
    if token.starts_with('#') {
        names[token].as_str().unwrap_or(token)
    } else {
        token
    }
}

pub(super) fn placeholder_text(token: &str, values: &Value) -> Option<String> {
    token
        .starts_with(':')
        .then(|| key_text(&values[token]))
        .flatten()
}

/// The partition key value of a query: the `:value` compared with `=` to
/// `pk_attr` in the KeyConditionExpression (either side); for an unknown
/// index, the first `=` comparison with a value.
pub(super) fn partition_of_key_condition(req: &Value, pk_attr: Option<&str>) -> Option<String> {
    let (names, values) = (
        &req["ExpressionAttributeNames"],
        &req["ExpressionAttributeValues"],
    );
    let toks = tokens(req["KeyConditionExpression"].as_str()?);
    let mut first = None;
    for w in toks.windows(3).filter(|w| w[1] == "=") {
        let (attr, value) = if w[2].starts_with(':') {
            (w[0], w[2])
        } else {
            (w[2], w[0])
        };
        let Some(text) = placeholder_text(value, values) else {
            continue;
        };
        if pk_attr.is_none_or(|pk| resolve(attr, names) == pk) {
            return Some(text);
        }
        first.get_or_insert(text);
    }
    pk_attr.is_none().then_some(first).flatten()
}

/// What an UpdateExpression does to the index's key attributes.
#[derive(Debug, Default, PartialEq)]
pub(super) struct IndexKeyChanges {
    /// The pk is SET (or ADDed): to this value, if the wire shows it.
    pub(super) pk_set: Option<Option<String>>,
    pub(super) sk_set: bool,
    /// The pk or the sk is REMOVEd: the item leaves the index.
    pub(super) removed: bool,
}

impl IndexKeyChanges {
    pub(super) fn touched(&self) -> bool {
        self.pk_set.is_some() || self.sk_set || self.removed
    }
}

pub(super) fn index_key_changes(body: &Value, index: &super::IndexSpec) -> IndexKeyChanges {
    let (names, values) = (
        &body["ExpressionAttributeNames"],
        &body["ExpressionAttributeValues"],
    );
    let mut changes = IndexKeyChanges::default();
    let Some(expr) = body["UpdateExpression"].as_str() else {
        return changes;
    };
    let mut clause = String::new();
    let mut action: Vec<&str> = Vec::new();
    let mut depth = 0usize;
    let mut apply = |clause: &str, action: &mut Vec<&str>| {
        let Some(path) = action.first().map(|t| resolve(t, names)) else {
            return;
        };
        let (is_pk, is_sk) = (path == index.pk_attr, path == index.sk_attr);
        match clause {
            "SET" | "ADD" if is_pk => {
                // `= :v`, `= if_not_exists(#a, :v)`, or ADD's `:v`.
                let value = action[1..].iter().find_map(|t| placeholder_text(t, values));
                changes.pk_set = Some(value);
            }
            "SET" | "ADD" if is_sk => changes.sk_set = true,
            "REMOVE" if is_pk || is_sk => changes.removed = true,
            _ => {}
        }
        action.clear();
    };
    for token in tokens(expr) {
        let upper = token.to_ascii_uppercase();
        match token {
            _ if depth == 0 && ["SET", "REMOVE", "ADD", "DELETE"].contains(&upper.as_str()) => {
                apply(&clause, &mut action);
                clause = upper;
            }
            "," if depth == 0 => apply(&clause, &mut action),
            _ => {
                depth = match token {
                    "(" => depth + 1,
                    ")" => depth.saturating_sub(1),
                    _ => depth,
                };
                action.push(token);
            }
        }
    }
    apply(&clause, &mut action);
    changes
}
