//! Returned general-admission places judged from their history (issue
//! 48, "The history checker judges the waitlist", for places): every sale
//! of places as the client saw it (the order they went to, how many, from
//! whose listing if it was a resale, and when confirm answered), and every
//! resale the sellers' records show (a `RESOLD` element per resale). Two
//! rules, per section:
//!
//! - every place has one owner at every instant: in answer order, a
//!   resale takes places only from an order that owns at least that many
//!   then (bought, or bought on resale, less what it has resold), so no
//!   place is sold twice;
//! - each resale is recorded once, by the seller it was from, with its
//!   quantity, and every record is a resale that happened.
//!
//! Pure: the suite builds the history from what its requests answered.

use std::collections::BTreeMap;

use super::{Micros, Verdict};

/// A sale of places as the client saw it: confirm's `200` for `order`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlacesSale {
    pub section: String,
    pub order: String,
    pub quantity: u32,
    /// The seller's order, for a resale.
    pub from: Option<String>,
    /// When confirm answered.
    pub at: Micros,
}

/// A resale of places as a seller's record shows it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct PlacesResaleRecord {
    pub section: String,
    pub from: String,
    pub to: String,
    pub quantity: u32,
}

/// `sales` and the sellers' `records` judged by the two rules.
pub fn check_place_resales(sales: &[PlacesSale], records: &[PlacesResaleRecord]) -> Verdict {
    let mut violations = Vec::new();
    let mut ordered: Vec<&PlacesSale> = sales.iter().collect();
    ordered.sort_by_key(|s| s.at);
    // Places owned, per (section, order).
    let mut owned: BTreeMap<(&str, &str), u32> = BTreeMap::new();
    let mut happened = Vec::new();
    for sale in ordered {
        let section = sale.section.as_str();
        if let Some(from) = sale.from.as_deref() {
            let had = owned.entry((section, from)).or_default();
            if *had < sale.quantity {
                violations.push(format!(
                    "{} places of {section} resold from {from} to {} while it owned {had}",
                    sale.quantity, sale.order
                ));
            }
            *had = had.saturating_sub(sale.quantity);
            happened.push(PlacesResaleRecord {
                section: section.to_owned(),
                from: from.to_owned(),
                to: sale.order.clone(),
                quantity: sale.quantity,
            });
        }
        *owned.entry((section, sale.order.as_str())).or_default() += sale.quantity;
    }
    violations.extend(super::resales::records_match(records, happened));
    Verdict {
        operations: sales.len() + records.len(),
        violations,
    }
}

#[cfg(test)]
#[path = "place_resales_tests.rs"]
mod tests;
