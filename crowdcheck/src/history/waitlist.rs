//! The waitlist judged from its history (issue 48, "The history checker
//! judges the waitlist"): who waited for what, and every offer made, each
//! with the instants the client saw. Three rules:
//!
//! - an entry has at most one offer;
//! - no seat is in two offers' holds at once (an offer holds its units
//!   from its instant until it ended: its expiry, a decline, or never, once
//!   paid for);
//! - an offer goes to the earliest-joined waiting entry its units could
//!   fill: an entry that joined more than a second before the one offered,
//!   still waiting at the offer's instant, whose request the offer's own
//!   units fill, was passed over (unless they hold a seat its own buyer
//!   listed for return: never offered to it). (The units were free when
//!   the offer read them, so they could have been its.)
//!
//! Pure: the suite builds the history from what its requests answered.

use std::collections::{BTreeMap, HashMap};

use super::{Micros, Verdict};

/// Joins less than this apart may be served in either order (API.md,
/// "Offers": the index keys a join by its instant, stamped before its
/// write commits).
pub const JOIN_TIE_US: Micros = 1_000_000;

/// A waiting entry's request and life, as the client saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitEntry {
    pub entry: String,
    /// Its buyer's id.
    pub buyer: String,
    pub joined_at: Micros,
    pub quantity: u32,
    /// Empty: any section.
    pub sections: Vec<String>,
    pub together: bool,
    /// When it stopped waiting other than by an offer (a leave, a
    /// removal), if it did.
    pub left_at: Option<Micros>,
}

/// What an offer held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OfferedUnits {
    /// Seats as `(section, row, number)`.
    Seats(Vec<(String, String, u32)>),
    /// Places of one general-admission section.
    Places { section: String, quantity: u32 },
}

/// An offer as the client saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MadeOffer {
    pub entry: String,
    pub order: String,
    /// Its instant (the order's `createdAt`).
    pub at: Micros,
    /// When its hold ended: its expiry, its decline, or `Micros::MAX`
    /// once paid for (the seats are then the buyer's for good).
    pub until: Micros,
    pub units: OfferedUnits,
    /// Its listed seats and whose listing each is (resales): a seller is
    /// never offered its own.
    pub listed: Vec<(String, (String, String, u32))>,
}

/// `entries` and `offers` judged by the three rules.
pub fn check_waitlist(entries: &[WaitEntry], offers: &[MadeOffer]) -> Verdict {
    let mut violations = Vec::new();
    let by_id: HashMap<&str, &WaitEntry> = entries.iter().map(|e| (e.entry.as_str(), e)).collect();
    let mut offered: HashMap<&str, &MadeOffer> = HashMap::new();
    for offer in offers {
        if offered.insert(offer.entry.as_str(), offer).is_some() {
            violations.push(format!("entry {} has two offers", offer.entry));
        }
        if !by_id.contains_key(offer.entry.as_str()) {
            violations.push(format!("offer {} to an entry nobody joined", offer.order));
        }
    }
    violations.extend(seats_in_two_holds(offers));
    for offer in offers {
        let Some(chosen) = by_id.get(offer.entry.as_str()) else {
            continue;
        };
        let waiting = |e: &WaitEntry| {
            e.joined_at <= offer.at
                && e.left_at.is_none_or(|left| left > offer.at)
                && offered
                    .get(e.entry.as_str())
                    .is_none_or(|o| o.at > offer.at)
        };
        for passed in entries
            .iter()
            .filter(|e| e.joined_at + JOIN_TIE_US < chosen.joined_at)
            .filter(|e| waiting(e) && fits(e, &units_for(offer, &e.buyer)))
        {
            violations.push(format!(
                "offer {} to {} passed over {}, waiting since earlier, which its units fill",
                offer.order, offer.entry, passed.entry
            ));
        }
    }
    Verdict {
        operations: entries.len() + offers.len(),
        violations,
    }
}

/// What of `offer`'s units `buyer` could have been offered: all but the
/// seats it listed itself.
fn units_for(offer: &MadeOffer, buyer: &str) -> OfferedUnits {
    let own = |seat: &(String, String, u32)| {
        offer
            .listed
            .iter()
            .any(|(seller, listed)| seller == buyer && listed == seat)
    };
    match &offer.units {
        OfferedUnits::Seats(seats) => {
            OfferedUnits::Seats(seats.iter().filter(|s| !own(s)).cloned().collect())
        }
        places => places.clone(),
    }
}

/// Each seat in two offers whose holds overlap.
fn seats_in_two_holds(offers: &[MadeOffer]) -> Vec<String> {
    let mut holds: BTreeMap<(String, String, u32), Vec<&MadeOffer>> = BTreeMap::new();
    for offer in offers {
        if let OfferedUnits::Seats(seats) = &offer.units {
            for seat in seats {
                holds.entry(seat.clone()).or_default().push(offer);
            }
        }
    }
    let mut violations = Vec::new();
    for ((section, row, number), mut held) in holds {
        held.sort_by_key(|o| o.at);
        for pair in held.windows(2) {
            if pair[1].at < pair[0].until {
                violations.push(format!(
                    "seat {section}-{row}-{number} in offers {} and {} at once",
                    pair[0].order, pair[1].order
                ));
            }
        }
    }
    violations
}

/// Whether `units` fill `entry`'s request: its quantity in a section it
/// accepts, adjacent in one row when it asks `together` (places are never
/// apart).
pub fn fits(entry: &WaitEntry, units: &OfferedUnits) -> bool {
    let accepts =
        |section: &str| entry.sections.is_empty() || entry.sections.iter().any(|s| s == section);
    let wanted = entry.quantity;
    match units {
        OfferedUnits::Places { section, quantity } => accepts(section) && wanted <= *quantity,
        OfferedUnits::Seats(seats) => {
            let mut rows: BTreeMap<(&str, &str), Vec<u32>> = BTreeMap::new();
            for (section, row, number) in seats.iter().filter(|(s, _, _)| accepts(s)) {
                rows.entry((section, row)).or_default().push(*number);
            }
            let mut per_section: BTreeMap<&str, u32> = BTreeMap::new();
            for ((section, _), numbers) in &rows {
                *per_section.entry(section).or_default() += numbers.len() as u32;
            }
            if entry.together {
                rows.values_mut()
                    .any(|numbers| longest_run(numbers) >= wanted)
            } else {
                per_section.values().any(|&n| n >= wanted)
            }
        }
    }
}

/// The longest run of consecutive numbers among `numbers`.
fn longest_run(numbers: &mut [u32]) -> u32 {
    numbers.sort_unstable();
    let (mut best, mut run) = (0, 0);
    let mut last: Option<u32> = None;
    for &n in numbers.iter() {
        run = match last {
            Some(prev) if n == prev + 1 => run + 1,
            Some(prev) if n == prev => run,
            _ => 1,
        };
        best = best.max(run);
        last = Some(n);
    }
    best
}

#[cfg(test)]
#[path = "waitlist_tests.rs"]
mod tests;
