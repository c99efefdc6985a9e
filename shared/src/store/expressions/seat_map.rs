//! A seat-map projection item's expression (`MAP#…`): one `UpdateItem`
//! per part of a row, from the seat stream; and what the stream saw sold
//! out (`SOLDOUT#…`), added to sets, so a record seen twice adds nothing.

use super::Expression;
use crate::store::keys::{FULL_PARTS, SOLD_OUT};
use aws_sdk_dynamodb::types::AttributeValue;

/// One more sold-out part (a seat-map part or a bucket) of a section.
pub(in crate::store) fn full_part(part: &str) -> Expression {
    Expression::update("ADD #parts :part")
        .name("#parts", FULL_PARTS)
        .value(":part", AttributeValue::Ss(vec![part.to_owned()]))
}

/// One more sold-out section of an event.
pub(in crate::store) fn sold_out(section: &str) -> Expression {
    Expression::update("ADD #soldOut :section")
        .name("#soldOut", SOLD_OUT)
        .value(":section", AttributeValue::Ss(vec![section.to_owned()]))
}

/// `SET` each seat attribute with a value (held or sold), `REMOVE` each
/// without (available again). Names `#s{i}`, values `:s{i}`.
pub(in crate::store) fn project(seats: Vec<(String, Option<AttributeValue>)>) -> Expression {
    let (mut set, mut remove) = (Vec::new(), Vec::new());
    let mut bindings = Expression::default();
    for (i, (attribute, value)) in seats.into_iter().enumerate() {
        let name = format!("#s{i}");
        bindings = bindings.name(&name, attribute);
        match value {
            None => remove.push(name),
            Some(value) => {
                bindings = bindings.value(&format!(":s{i}"), value);
                set.push(format!("{name} = :s{i}"));
            }
        }
    }
    let mut text = Vec::new();
    if !set.is_empty() {
        text.push(format!("SET {}", set.join(", ")));
    }
    if !remove.is_empty() {
        text.push(format!("REMOVE {}", remove.join(", ")));
    }
    Expression::update(text.join(" ")).and(bindings)
}
