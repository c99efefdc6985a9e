//! Who an offer goes to and what it holds (API.md, "The waitlist",
//! offers), pure: free inventory goes to the earliest-joined waiting entry
//! whose request it can fill, from the first of the entry's sections (in
//! plan order) that can fill it; there the block best-available would
//! choose, or with `together: false` the section's best free seats one at
//! a time; in a general-admission section, the places. An entry that
//! cannot be filled keeps its place and the next is tried. The offerer
//! reads the free units and the heads of the indexes they could fill
//! ([`fillable_indexes`]); the store makes the offer in one transaction;
//! this says which.

use super::best_available::{choose_block, Rows};
use std::collections::{HashMap, HashSet};

use super::access::WHEELCHAIR_SYMBOL;
use super::ga::{plan_take, Bucket, HeldPlaces, Take, LISTING_BUCKETS_FROM};
use super::seat_map::{RowMap, SeatMap, SectionMap};
use super::waitlist::EntryRequest;
use super::waitlist_entry::WaitingIndex;
use super::{Event, Millis, OrderId, SeatId, SectionId};

/// What one section has free for an offer, as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Free {
    /// A seated section's rows in plan order: true where the seat is free.
    Rows(Vec<Vec<bool>>),
    /// A general-admission section's free places.
    Places(u32),
}

/// A section and what it has free.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SectionFree {
    pub section: SectionId,
    pub free: Free,
}

/// What an offer holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OfferUnits {
    /// Seats of one section, as `(row index, seat index)` into its
    /// [`Free::Rows`], in row then seat order.
    Seats {
        section: SectionId,
        seats: Vec<(usize, usize)>,
    },
    /// Places of one general-admission section.
    Places { section: SectionId, quantity: u32 },
}

/// What `sections` (the event's, in plan order) can offer `request`: from
/// the first of its sections (any, when it names none) that can fill it,
/// or `None`. Until plans mark wheelchair spaces (API.md's accessible
/// seats) no seat is one, so a request for any is never filled.
pub fn fill(request: &EntryRequest, sections: &[SectionFree]) -> Option<OfferUnits> {
    if request.wheelchair > 0 || request.quantity == 0 {
        return None;
    }
    let asked = |section: &SectionId| {
        request.section_ids.is_empty() || request.section_ids.contains(section)
    };
    sections
        .iter()
        .filter(|s| asked(&s.section))
        .find_map(|s| fill_from(request, s))
}

fn fill_from(request: &EntryRequest, section: &SectionFree) -> Option<OfferUnits> {
    let quantity = request.quantity;
    let n = usize::try_from(quantity).ok()?;
    match &section.free {
        Free::Places(free) => (*free >= quantity).then(|| OfferUnits::Places {
            section: section.section.clone(),
            quantity,
        }),
        Free::Rows(rows) => {
            let seats = if request.together {
                let (row, start) = choose_block(Rows::plain(rows, n))?;
                (start..start + n).map(|seat| (row, seat)).collect()
            } else {
                best_seats(rows, n)?
            };
            Some(OfferUnits::Seats {
                section: section.section.clone(),
                seats,
            })
        }
    }
}

/// The section's `n` best free seats one at a time: the best row first
/// (plan order), and in a row the seat nearest its centre first (ties to
/// the lower number); `None` if it has fewer than `n` free.
fn best_seats(rows: &[Vec<bool>], n: usize) -> Option<Vec<(usize, usize)>> {
    let mut chosen = Vec::with_capacity(n);
    for (r, row) in rows.iter().enumerate() {
        let mut free: Vec<usize> = (0..row.len()).filter(|&i| row[i]).collect();
        // Twice the distance between the seat's centre and the row's.
        free.sort_by_key(|&i| ((2 * i + 1).abs_diff(row.len()), i));
        chosen.extend(free.into_iter().take(n - chosen.len()).map(|i| (r, i)));
        if chosen.len() == n {
            chosen.sort_unstable();
            return Some(chosen);
        }
    }
    None
}

/// The first of `waiting` (earliest-joined first) that `sections` can
/// fill, with what its offer holds: the entries before it cannot be
/// filled and keep their places.
pub fn choose_offer<'a, T>(
    waiting: impl IntoIterator<Item = (T, &'a EntryRequest)>,
    sections: &[SectionFree],
) -> Option<(T, OfferUnits)> {
    waiting
        .into_iter()
        .find_map(|(entry, request)| fill(request, sections).map(|units| (entry, units)))
}

/// The seats an offer may take beyond what the map shows free: those
/// listed for resale and free to offer, and those `taken` since the map
/// was projected.
pub struct SeatsKnown<'a> {
    pub listed: &'a HashSet<SeatId>,
    pub taken: &'a HashSet<SeatId>,
}

/// What `map` shows free in its seated sections, and the seats `known`
/// listed, less those known taken, and what `buckets` (the
/// general-admission sections' buckets, as the look last knows them) let
/// anyone take at `now`, in plan order: what an offer draws from. A
/// general-admission section whose buckets were not read offers nothing.
pub fn free_units(
    map: &SeatMap,
    known: &SeatsKnown,
    buckets: &HashMap<SectionId, Vec<Bucket>>,
    now: Millis,
) -> Vec<SectionFree> {
    map.sections
        .iter()
        .map(|section| {
            let free = match &section.rows {
                Some(rows) => Free::Rows(
                    rows.iter()
                        .map(|row| free_row(section, row, known))
                        .collect(),
                ),
                None => Free::Places(
                    buckets
                        .get(&section.section_id)
                        .map_or(0, |read| read.iter().map(|b| b.available(now)).sum()),
                ),
            };
            SectionFree {
                section: section.section_id.clone(),
                free,
            }
        })
        .collect()
}

/// One row of `section`'s map: true where its seat is available or
/// listed, and not known taken. A wheelchair space is never free to
/// offer: only an entry asking for one may have it, as best-available
/// gives it only to a buyer asking (API.md, "Accessible seats"), and
/// such entries wait for now.
fn free_row(section: &SectionMap, row: &RowMap, known: &SeatsKnown) -> Vec<bool> {
    let seat = |number: usize| {
        let number = u32::try_from(number + 1).unwrap_or(u32::MAX);
        SeatId::compose(&section.section_id, &row.row, number)
    };
    let mut access = row.access.as_deref().map(str::chars).into_iter().flatten();
    let statuses = row.statuses.chars().enumerate();
    let (listed, taken) = (known.listed, known.taken);
    statuses
        .map(|(i, c)| {
            if access.next() == Some(WHEELCHAIR_SYMBOL) {
                return false;
            }
            if listed.is_empty() && taken.is_empty() {
                return c == 'A';
            }
            let id = seat(i);
            (c == 'A' || listed.contains(&id)) && !taken.contains(&id)
        })
        .collect()
}

/// What an offer holds, as its write takes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Offered {
    Seats(Vec<SeatId>),
    /// Places of one section, taken from its buckets as planned.
    Places(SectionTakes),
}

/// A section's places taken from its buckets (`domain::ga::plan_take`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SectionTakes {
    pub section: SectionId,
    pub takes: Vec<Take>,
}

impl Offered {
    /// The seats it holds.
    pub fn seats(&self) -> &[SeatId] {
        match self {
            Offered::Seats(seats) => seats,
            Offered::Places(_) => &[],
        }
    }
    /// The places it holds, per bucket, as an order records them.
    pub fn places(&self) -> Vec<HeldPlaces> {
        match self {
            Offered::Seats(_) => Vec::new(),
            Offered::Places(taken) => taken
                .takes
                .iter()
                .map(|take| HeldPlaces {
                    section: taken.section.clone(),
                    bucket: take.bucket,
                    quantity: take.places,
                })
                .collect(),
        }
    }
}

/// What an offer of `units` of `event` holds: its seats, or its places
/// taken from `buckets` (the section's, as the look knows them, its
/// listings' among them from `ga::LISTING_BUCKETS_FROM`) for the
/// order `me` at `now`. `None`: a section or row the plan does not have,
/// or buckets that no longer hold the places.
pub fn offered(
    event: &Event,
    units: &OfferUnits,
    buckets: &HashMap<SectionId, Vec<Bucket>>,
    me: &OrderId,
    now: Millis,
) -> Option<Offered> {
    let (section, seats) = match units {
        OfferUnits::Places { section, quantity } => {
            // Listed places first, in the order the look numbered them
            // (the oldest listing first): a seller's return is resold
            // before the section's own free places are offered.
            let (mut listed, own): (Vec<Bucket>, Vec<Bucket>) = buckets
                .get(section)?
                .iter()
                .cloned()
                .partition(|b| b.index >= LISTING_BUCKETS_FROM);
            listed.sort_by_key(|b| b.index);
            listed.extend(spread_for(&own, me));
            let takes = plan_take(&listed, me, *quantity, now)?;
            return Some(Offered::Places(SectionTakes {
                section: section.clone(),
                takes,
            }));
        }
        OfferUnits::Seats { section, seats } => (section, seats),
    };
    let rows = &event.section(section)?.rows;
    let seats = seats
        .iter()
        .map(|&(row, seat)| {
            let row = rows.get(row)?;
            let number = u32::try_from(seat + 1).ok()?;
            (number <= row.count).then(|| SeatId::compose(section, &row.row, number))
        })
        .collect::<Option<_>>()?;
    Some(Offered::Seats(seats))
}

/// `buckets` in the order `me` takes from them: turned to start at a
/// bucket its id picks, so offers (and hold-ga's buyers, who shuffle)
/// spread over a section's buckets rather than all take from its first.
fn spread_for(buckets: &[Bucket], me: &OrderId) -> Vec<Bucket> {
    let pick = me.as_str().bytes().fold(0usize, |h, b| {
        h.wrapping_mul(31).wrapping_add(usize::from(b))
    });
    let start = pick.checked_rem(buckets.len()).unwrap_or(0);
    let (before, after) = buckets.split_at(start);
    after.iter().chain(before).cloned().collect()
}

/// The indexes of waiting entries that `sections` could fill, each once:
/// in each section with something free, every quantity up to what it
/// could hold (adjacent in one row: its longest free run; apart: all its
/// free seats; general admission: its free places, `together` or not, as
/// places are never apart), at most `max_quantity`, in that section's
/// index and in the any-section one. Every entry of such an index can be
/// filled (the index is what it asks for), so its head is the earliest
/// that can, and the earliest of the heads is the entry an offer goes to:
/// the offerer reads one item per index and shard, however long the line.
/// Until plans mark wheelchair spaces no index asking for one is fillable.
pub fn fillable_indexes(sections: &[SectionFree], max_quantity: u32) -> Vec<WaitingIndex> {
    let mut indexes = Vec::new();
    for section in sections {
        let (together, apart) = capacity(&section.free);
        for (together_asked, most) in [(true, together), (false, apart)] {
            for quantity in 1..=most.min(max_quantity) {
                for within in [Some(section.section.clone()), None] {
                    let index = WaitingIndex {
                        section: within,
                        quantity,
                        together: together_asked,
                        wheelchair: 0,
                    };
                    if !indexes.contains(&index) {
                        indexes.push(index);
                    }
                }
            }
        }
    }
    indexes
}

/// The most one request can be given from `free`: adjacent in one row,
/// and apart.
fn capacity(free: &Free) -> (u32, u32) {
    match free {
        Free::Places(places) => (*places, *places),
        Free::Rows(rows) => {
            let longest = rows.iter().map(|row| longest_run(row)).max().unwrap_or(0);
            let all = rows.iter().flatten().filter(|free| **free).count();
            let to_u32 = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
            (to_u32(longest), to_u32(all))
        }
    }
}

fn longest_run(row: &[bool]) -> usize {
    row.split(|free| !free)
        .map(<[bool]>::len)
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
#[path = "offer_tests.rs"]
mod tests;
