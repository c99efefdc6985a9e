//! An item after an update: the `UpdateExpression` a recorded request
//! carries, applied to the item as it was, so a write is priced at the
//! larger of the item before and after it, as DynamoDB bills it
//! (<https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html#write-operation-consumption>),
//! not at the size the item had when the run ended. Read from the
//! expression grammar
//! (<https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.UpdateExpressions.html>):
//! SET (a value, `a + b`, `a - b`, `if_not_exists`, `list_append`),
//! REMOVE, ADD (numbers and sets) and DELETE (sets), on top-level and
//! map-nested attributes. Anything else (list indexes, functions it does
//! not know) is `None`: the caller prices the item as it would without.

use serde_json::{Map, Value};

use super::expressions::{resolve, tokens};

type Item = Map<String, Value>;

/// `item` after the update `body` (an UpdateItem request, or a
/// transaction's `Update`) succeeded; `None` where the expression cannot
/// be read.
pub(super) fn updated(item: &Item, body: &Value) -> Option<Item> {
    let expression = body["UpdateExpression"].as_str()?;
    let (names, values) = (
        &body["ExpressionAttributeNames"],
        &body["ExpressionAttributeValues"],
    );
    let words = tokens(expression);
    let mut after = item.clone();
    let mut section = "";
    for action in actions(&words) {
        let action = match action.first().map(|w| w.to_ascii_uppercase()) {
            Some(k) if ["SET", "REMOVE", "ADD", "DELETE"].contains(&k.as_str()) => {
                section = keyword(&k);
                &action[1..]
            }
            _ => action,
        };
        let operands = Operands {
            before: item,
            names,
            values,
        };
        match (section, action) {
            ("SET", [path, "=", value @ ..]) => {
                let value = operands.evaluate(value)?;
                set(&mut after, &operands.path(path)?, value)?;
            }
            ("REMOVE", [path]) => remove(&mut after, &operands.path(path)?)?,
            ("ADD", [path, value]) => {
                let path = operands.path(path)?;
                let current = get(&after, &path).cloned();
                let added = add(current.as_ref(), &operands.value(value)?)?;
                set(&mut after, &path, added)?;
            }
            ("DELETE", [path, value]) => {
                let path = operands.path(path)?;
                let Some(current) = get(&after, &path).cloned() else {
                    continue;
                };
                match without(&current, &operands.value(value)?)? {
                    Some(left) => set(&mut after, &path, left)?,
                    None => remove(&mut after, &path)?,
                }
            }
            _ => return None,
        }
    }
    Some(after)
}

fn keyword(upper: &str) -> &'static str {
    match upper {
        "SET" => "SET",
        "REMOVE" => "REMOVE",
        "ADD" => "ADD",
        _ => "DELETE",
    }
}

/// The expression's actions: split at commas outside parentheses and
/// before each clause keyword (which stays at the head of its first
/// action).
fn actions<'a>(words: &'a [&'a str]) -> Vec<&'a [&'a str]> {
    let is_keyword =
        |w: &str| ["SET", "REMOVE", "ADD", "DELETE"].contains(&w.to_ascii_uppercase().as_str());
    let (mut out, mut start, mut depth) = (Vec::new(), 0, 0i32);
    for (i, &w) in words.iter().enumerate() {
        match w {
            "(" => depth += 1,
            ")" => depth -= 1,
            "," if depth == 0 => {
                out.push(&words[start..i]);
                start = i + 1;
            }
            w if depth == 0 && i > start && is_keyword(w) => {
                out.push(&words[start..i]);
                start = i;
            }
            _ => {}
        }
    }
    out.push(&words[start..]);
    out.retain(|a| !a.is_empty());
    out
}

/// What an action's operands read: the item as it was before the update
/// (DynamoDB evaluates every operand against it), and the request's
/// placeholders.
struct Operands<'a> {
    before: &'a Item,
    names: &'a Value,
    values: &'a Value,
}

impl Operands<'_> {
    /// An attribute path, its names resolved; `None` for a list index.
    fn path(&self, word: &str) -> Option<Vec<String>> {
        if word.contains('[') || word.starts_with(':') {
            return None;
        }
        Some(
            word.split('.')
                .map(|part| resolve(part, self.names).to_owned())
                .collect(),
        )
    }

    /// One operand: a `:value`, or the value at a path (which must exist).
    fn value(&self, word: &str) -> Option<Value> {
        if word.starts_with(':') {
            return self.values.get(word).cloned();
        }
        get(self.before, &self.path(word)?).cloned()
    }

    /// A SET's value: an operand, a sum or difference of two, or a
    /// function of them.
    fn evaluate(&self, words: &[&str]) -> Option<Value> {
        match words {
            [one] => self.value(one),
            [a, "+", b] => number(&self.value(a)?, &self.value(b)?, 1),
            [a, "-", b] => number(&self.value(a)?, &self.value(b)?, -1),
            [f, "(", a, ",", b, ")"] if f.eq_ignore_ascii_case("if_not_exists") => {
                let path = self.path(a)?;
                get(self.before, &path).cloned().or_else(|| self.value(b))
            }
            [f, "(", a, ",", b, ")"] if f.eq_ignore_ascii_case("list_append") => {
                let (a, b) = (self.value(a)?, self.value(b)?);
                let mut list = a["L"].as_array()?.clone();
                list.extend(b["L"].as_array()?.iter().cloned());
                Some(serde_json::json!({ "L": list }))
            }
            _ => None,
        }
    }
}

fn get<'a>(item: &'a Item, path: &[String]) -> Option<&'a Value> {
    let (first, rest) = path.split_first()?;
    rest.iter()
        .try_fold(item.get(first)?, |value, name| value["M"].get(name))
}

/// Sets the value at `path`; a nested path's parent map must exist.
fn set(item: &mut Item, path: &[String], value: Value) -> Option<()> {
    let (last, parents) = path.split_last()?;
    parent(item, parents)?.insert(last.clone(), value);
    Some(())
}

fn remove(item: &mut Item, path: &[String]) -> Option<()> {
    let (last, parents) = path.split_last()?;
    if let Some(map) = parent(item, parents) {
        map.remove(last);
    }
    Some(())
}

/// The map that holds an attribute under `parents` (the item itself for
/// a top-level one).
fn parent<'a>(item: &'a mut Item, parents: &[String]) -> Option<&'a mut Item> {
    parents.iter().try_fold(item, |map, name| {
        map.get_mut(name)?.get_mut("M")?.as_object_mut()
    })
}

/// `a + sign × b`, two numbers: integers exactly (`None` past i128),
/// others as floats (their size only approximately: a float's text may
/// carry more digits than DynamoDB's decimal would).
fn number(a: &Value, b: &Value, sign: i128) -> Option<Value> {
    let (a, b) = (a["N"].as_str()?, b["N"].as_str()?);
    let sum = match (a.parse::<i128>(), b.parse::<i128>()) {
        (Ok(a), Ok(b)) => a.checked_add(sign.checked_mul(b)?)?.to_string(),
        _ => (a.parse::<f64>().ok()? + sign as f64 * b.parse::<f64>().ok()?).to_string(),
    };
    Some(serde_json::json!({ "N": sum }))
}

/// ADD: a number added to the current one (0 if none), or a set's
/// elements joined to the current set.
fn add(current: Option<&Value>, added: &Value) -> Option<Value> {
    if added.get("N").is_some() {
        let zero = serde_json::json!({ "N": "0" });
        return number(current.unwrap_or(&zero), added, 1);
    }
    let (kind, elements) = set_elements(added)?;
    let mut joined: Vec<Value> = match current {
        Some(current) => set_elements(current).filter(|(k, _)| *k == kind)?.1.clone(),
        None => Vec::new(),
    };
    for e in elements {
        if !joined.contains(e) {
            joined.push(e.clone());
        }
    }
    Some(Value::Object(Map::from_iter([(
        kind.to_owned(),
        Value::Array(joined),
    )])))
}

/// DELETE: a set less `taken`'s elements; `None` inside when nothing is
/// left (DynamoDB removes an empty set).
fn without(current: &Value, taken: &Value) -> Option<Option<Value>> {
    let (kind, elements) = set_elements(current)?;
    let (_, taken) = set_elements(taken)?;
    let left: Vec<Value> = elements
        .iter()
        .filter(|e| !taken.contains(e))
        .cloned()
        .collect();
    Some(
        (!left.is_empty())
            .then(|| Value::Object(Map::from_iter([(kind.to_owned(), Value::Array(left))]))),
    )
}

fn set_elements(value: &Value) -> Option<(&'static str, &Vec<Value>)> {
    ["SS", "NS", "BS"]
        .into_iter()
        .find_map(|kind| Some((kind, value.get(kind)?.as_array()?)))
}

#[cfg(test)]
#[path = "updates_tests.rs"]
mod tests;
