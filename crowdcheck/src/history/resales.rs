//! Returned seats judged from their history (issue 48, "The history
//! checker judges the waitlist"): every sale of a seat as the client saw
//! it (the order it went to, from whom if it was a resale, and when
//! confirm answered), and every resale the sellers' records show. Two
//! rules:
//!
//! - a seat has exactly one owner at every instant: its sales in answer
//!   order are one first sale, then resales each from the owner before;
//! - each resale is recorded once, by the seller it was from, and every
//!   record is a resale that happened.
//!
//! Pure: the suite builds the history from what its requests answered.

use std::collections::BTreeMap;

use super::{Micros, Verdict};

/// A seat's sale as the client saw it: confirm's `200` for `order`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeatSale {
    pub seat: String,
    pub order: String,
    /// The seller's order, for a resale.
    pub from: Option<String>,
    /// When confirm answered.
    pub at: Micros,
}

/// A resale as a seller's record shows it (a `RESOLD` listing).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ResaleRecord {
    pub seat: String,
    pub from: String,
    pub to: String,
}

/// `sales` and the sellers' `records` judged by the two rules.
pub fn check_resales(sales: &[SeatSale], records: &[ResaleRecord]) -> Verdict {
    let mut violations = Vec::new();
    let mut by_seat: BTreeMap<&str, Vec<&SeatSale>> = BTreeMap::new();
    for sale in sales {
        by_seat.entry(sale.seat.as_str()).or_default().push(sale);
    }
    let mut happened = Vec::new();
    for (seat, mut chain) in by_seat {
        chain.sort_by_key(|s| s.at);
        let mut owner: Option<&str> = None;
        for sale in chain {
            match (owner, sale.from.as_deref()) {
                (None, None) => {}
                (Some(current), Some(from)) if current == from => {
                    happened.push(ResaleRecord {
                        seat: seat.to_owned(),
                        from: from.to_owned(),
                        to: sale.order.clone(),
                    });
                }
                (current, from) => violations.push(format!(
                    "seat {seat} sold to {} from {from:?} while {current:?} owned it",
                    sale.order
                )),
            }
            owner = Some(&sale.order);
        }
    }
    violations.extend(records_match(records, happened));
    Verdict {
        operations: sales.len() + records.len(),
        violations,
    }
}

/// What is wrong with the sellers' `records` of resales, given the
/// resales that `happened`: one recorded twice, or records that are not
/// exactly those.
pub(super) fn records_match<T: Ord + Clone + std::fmt::Debug>(
    records: &[T],
    mut happened: Vec<T>,
) -> Vec<String> {
    let mut violations = Vec::new();
    let mut recorded = records.to_vec();
    recorded.sort();
    for pair in recorded.windows(2) {
        if pair[0] == pair[1] {
            violations.push(format!("resale {:?} recorded twice", pair[0]));
        }
    }
    happened.sort();
    recorded.dedup();
    if recorded != happened {
        violations.push(format!(
            "the sellers' records {recorded:?} are not the resales that happened {happened:?}"
        ));
    }
    violations
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sale(seat: &str, order: &str, from: Option<&str>, at: Micros) -> SeatSale {
        SeatSale {
            seat: seat.into(),
            order: order.into(),
            from: from.map(str::to_owned),
            at,
        }
    }

    fn record(seat: &str, from: &str, to: &str) -> ResaleRecord {
        ResaleRecord {
            seat: seat.into(),
            from: from.into(),
            to: to.into(),
        }
    }

    #[test]
    fn a_chain_of_resales_each_recorded_once_passes() {
        let sales = [
            sale("A-1-1", "a", None, 1),
            sale("A-1-1", "b", Some("a"), 2),
            sale("A-1-1", "c", Some("b"), 3),
        ];
        let records = [record("A-1-1", "a", "b"), record("A-1-1", "b", "c")];
        assert_eq!(
            check_resales(&sales, &records).violations,
            Vec::<String>::new()
        );
    }

    #[test]
    fn two_owners_a_resale_from_a_non_owner_and_a_bad_record_are_caught() {
        let twice = [sale("A-1-1", "a", None, 1), sale("A-1-1", "b", None, 2)];
        assert_eq!(check_resales(&twice, &[]).violations.len(), 1);
        let stranger = [
            sale("A-1-1", "a", None, 1),
            sale("A-1-1", "c", Some("b"), 2),
        ];
        assert_eq!(check_resales(&stranger, &[]).violations.len(), 1);
        let sold_on = [
            sale("A-1-1", "a", None, 1),
            sale("A-1-1", "b", Some("a"), 2),
        ];
        let doubled = [record("A-1-1", "a", "b"), record("A-1-1", "a", "b")];
        assert!(!check_resales(&sold_on, &doubled).violations.is_empty());
        assert_eq!(
            check_resales(&sold_on, &[]).violations.len(),
            1,
            "unrecorded"
        );
        let invented = [record("A-1-1", "a", "b"), record("A-1-1", "b", "z")];
        assert_eq!(check_resales(&sold_on, &invented).violations.len(), 1);
    }
}
