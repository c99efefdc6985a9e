//! What best-available and hold-ga record on an order under a client's
//! `Idempotency-Key`: one attribute of the order item per key, written by
//! the claim's own transaction (so it gains no item), read back to answer
//! a resend with the block that landed.

use std::collections::HashMap;

use crate::domain::keyed_block::KeyedBlock;
use crate::domain::{IdempotencyKey, SeatId, SectionId};
use crate::store::errors::StoreError;
use crate::store::value::{n, s, Fields, Item};
use aws_sdk_dynamodb::types::AttributeValue;

/// The order's attribute recording best-available's block under a key:
/// `keyedBlock#{key}` = `{q: quantity, sec?: section, w?: wheelchair
/// spaces, s: seats}`. One per key, written by the claim's own
/// transaction (so it gains no item); `w` only when some were asked for,
/// so records from before accessible seats read as none.
const KEYED_BLOCK_PREFIX: &str = "keyedBlock#";
const KEYED_QUANTITY: &str = "q";
const KEYED_SECTION: &str = "sec";
const KEYED_WHEELCHAIR: &str = "w";
const KEYED_SEATS: &str = "s";

pub(super) fn keyed_block_attribute(key: &IdempotencyKey) -> String {
    format!("{KEYED_BLOCK_PREFIX}{key}")
}

/// Every block an order item records under a key.
pub(super) fn parse_keyed_blocks(
    item: &Item,
) -> Result<HashMap<IdempotencyKey, KeyedBlock>, StoreError> {
    let mut blocks = HashMap::new();
    for (attr, value) in item {
        let Some(key) = attr.strip_prefix(KEYED_BLOCK_PREFIX) else {
            continue;
        };
        let f = Fields::new(item);
        let block = value
            .as_m()
            .ok()
            .and_then(|m| {
                let fields = Fields::new(m);
                // A list, not a set: the block's seats in the order the
                // first reply gave them.
                let seats: Vec<&str> = m
                    .get(KEYED_SEATS)?
                    .as_l()
                    .ok()?
                    .iter()
                    .map(|v| v.as_s().map(String::as_str))
                    .collect::<Result<_, _>>()
                    .ok()?;
                Some(KeyedBlock {
                    quantity: fields.u32(KEYED_QUANTITY).ok()?,
                    section: match fields.opt_s(KEYED_SECTION) {
                        Some(id) => Some(SectionId::parse(id).ok()?),
                        None => None,
                    },
                    wheelchair: match m.contains_key(KEYED_WHEELCHAIR) {
                        true => fields.u32(KEYED_WHEELCHAIR).ok()?,
                        false => 0,
                    },
                    seats: seats
                        .iter()
                        .map(|id| SeatId::parse(id).ok())
                        .collect::<Option<Vec<_>>>()?,
                })
            })
            .ok_or_else(|| f.malformed(attr))?;
        let key = IdempotencyKey::parse(key).map_err(|_| f.malformed(attr))?;
        blocks.insert(key, block);
    }
    Ok(blocks)
}

/// Whether the order item `old` records a block under `key` (a claim whose
/// order condition failed on it lost to its own retry).
pub(in crate::store) fn records_key(old: Option<&Item>, key: &IdempotencyKey) -> bool {
    old.is_some_and(|item| item.contains_key(&keyed_block_attribute(key)))
}

/// The record of `block`, its `seats` in the order the reply gives them.
pub(super) fn keyed_block_value(block: &KeyedBlock, seats: &[&str]) -> AttributeValue {
    let mut record = HashMap::from([
        (KEYED_QUANTITY.to_owned(), n(block.quantity)),
        (
            KEYED_SEATS.to_owned(),
            AttributeValue::L(seats.iter().map(|seat| s(*seat)).collect()),
        ),
    ]);
    if let Some(section) = &block.section {
        record.insert(KEYED_SECTION.to_owned(), s(section.as_str()));
    }
    if block.wheelchair > 0 {
        record.insert(KEYED_WHEELCHAIR.to_owned(), n(block.wheelchair));
    }
    AttributeValue::M(record)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_reads_back_as_written_and_an_old_one_asked_no_space(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let key = IdempotencyKey::parse("retry-1")?;
        for wheelchair in [0, 2] {
            let block = KeyedBlock {
                quantity: 3,
                section: Some(SectionId::parse("A")?),
                wheelchair,
                seats: vec![SeatId::parse("A-1-2")?, SeatId::parse("A-1-3")?],
            };
            let value = keyed_block_value(&block, &["A-1-2", "A-1-3"]);
            let stored = value.as_m().map_err(|_| "a map")?;
            assert_eq!(stored.contains_key(KEYED_WHEELCHAIR), wheelchair > 0);
            let item = Item::from([(keyed_block_attribute(&key), value)]);
            assert_eq!(parse_keyed_blocks(&item)?.get(&key), Some(&block));
        }
        Ok(())
    }
}
