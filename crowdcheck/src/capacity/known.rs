//! What a ledger learns of the table from the requests it prices.

use std::collections::HashMap;

use serde_json::{Map, Value};

/// The index entries the records left: (index, table pk) to the item's
/// index pk, `None` where it left the index.
pub(super) type IndexEntries = HashMap<(String, String), Option<String>>;

/// What the records so far showed of the table: where each item sits in
/// each index, and each item as they left it. A meter that sees every
/// request learns it request by request ([`super::units::charges_after`]), so a delete
/// or an update that takes an item out of an index is charged its index
/// write too, and a write costs its item's size at the time.
#[derive(Debug, Default, Clone)]
pub struct Known {
    pub(super) indexed: IndexEntries,
    /// Each item as the records left it, by (pk, sk).
    pub(super) seen: HashMap<(String, String), Seen>,
}

/// An item as the records left it.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Seen {
    Whole(Map<String, Value>),
    Deleted,
    /// Changed in a way the records do not show (an update that could not
    /// be read): what was known before no longer holds.
    Unknown,
}

impl Known {
    /// Takes in what a later request showed. Only entries in an index,
    /// and items still there, are kept, so the maps stay the size of the
    /// index and the table: a deleted item is then unknown, which prices
    /// the same (under 1 KB) to a meter with nothing else to go on, except
    /// that an update recreating it is not evaluated (a create under
    /// `attribute_not_exists` still is).
    pub fn absorb(&mut self, changes: Known) {
        for (key, entry) in changes.indexed {
            match entry {
                Some(_) => self.indexed.insert(key, entry),
                None => self.indexed.remove(&key),
            };
        }
        for (key, item) in changes.seen {
            match item {
                Seen::Whole(_) => self.seen.insert(key, item),
                Seen::Deleted | Seen::Unknown => self.seen.remove(&key),
            };
        }
    }
}
