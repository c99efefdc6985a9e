//! A seat-map projection item's expression (`MAP#…`): one `UpdateItem`
//! per part of a row, from the seat stream.

use super::Expression;
use aws_sdk_dynamodb::types::AttributeValue;

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
