//! Who an offer goes to and what it holds (API.md, "The waitlist",
//! offers), pure: free inventory goes to the earliest-joined waiting entry
//! whose request it can fill, from the first of the entry's sections (in
//! plan order) that can fill it; there the block best-available would
//! choose (with the wheelchair spaces asked for, exactly), or with
//! `together: false` the section's best free seats one at a time (the
//! spaces asked for first); in a general-admission section, the places. An entry that
//! cannot be filled keeps its place and the next is tried. The offerer
//! reads the free units and the heads of the indexes they could fill
//! ([`fillable_indexes`]); the store makes the offer in one transaction;
//! this says which.

use super::best_available::{choose_block, Ask, RowAccess, Rows};
use std::collections::{HashMap, HashSet};

use super::access::{seats_of_symbols, Access};
use super::ga::{plan_take, Bucket, HeldPlaces, Take, LISTING_BUCKETS_FROM};
use super::seat_map::{RowMap, SeatMap, SectionMap};
use super::waitlist::EntryRequest;
use super::waitlist_entry::WaitingIndex;
use super::{Event, Millis, OrderId, SeatId, SectionId};

/// What one section has free for an offer, as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Free {
    /// A seated section's rows in plan order: true where the seat is
    /// free; and what each seat is for.
    Rows {
        free: Vec<Vec<bool>>,
        access: Vec<RowAccess>,
    },
    /// A general-admission section's free places.
    Places(u32),
}

impl Free {
    /// Rows whose seats are for no one in particular.
    pub fn rows(free: Vec<Vec<bool>>) -> Self {
        Self::Rows {
            free,
            access: Vec::new(),
        }
    }
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
/// or `None`.
pub fn fill(request: &EntryRequest, sections: &[SectionFree]) -> Option<OfferUnits> {
    if request.quantity == 0 {
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
    let ask = Ask {
        n: usize::try_from(quantity).ok()?,
        wheelchair: usize::try_from(request.wheelchair).ok()?,
    };
    match &section.free {
        // Places have no wheelchair spaces.
        Free::Places(free) => {
            (*free >= quantity && ask.wheelchair == 0).then(|| OfferUnits::Places {
                section: section.section.clone(),
                quantity,
            })
        }
        Free::Rows { free, access } => {
            let rows = Rows { free, access, ask };
            let seats = if request.together {
                let (row, start) = choose_block(rows)?;
                (start..start + ask.n).map(|seat| (row, seat)).collect()
            } else {
                best_seats(rows)?
            };
            Some(OfferUnits::Seats {
                section: section.section.clone(),
                seats,
            })
        }
    }
}

/// The section's best free seats one at a time for `rows.ask`, in row then
/// seat order: the wheelchair spaces asked for, then the other seats (none
/// a wheelchair space), asked for no space companion seats last; each the
/// best row first (plan order), and in a row the seat nearest its centre
/// (ties to the lower number). `None` if there are not enough.
fn best_seats(rows: Rows) -> Option<Vec<(usize, usize)>> {
    let Ask { n, wheelchair } = rows.ask;
    let others = n.checked_sub(wheelchair)?;
    let is = |r: usize, i: usize, access| RowAccess::of_row(rows.access, r).at(i) == Some(access);
    let space = |r, i| is(r, i, Access::Wheelchair);
    let mut chosen = best_of(rows.free, wheelchair, space, |_, _| false)?;
    let other = |r, i| !space(r, i);
    let companion_last = |r, i| wheelchair == 0 && is(r, i, Access::Companion);
    chosen.extend(best_of(rows.free, others, other, companion_last)?);
    chosen.sort_unstable();
    Some(chosen)
}

/// The `n` best of `rows`' free seats that `wanted` takes: those `later`
/// marks after the rest, then the best row first, and in a row the seat
/// nearest its centre (ties to the lower number); `None` if fewer.
fn best_of(
    rows: &[Vec<bool>],
    n: usize,
    wanted: impl Fn(usize, usize) -> bool,
    later: impl Fn(usize, usize) -> bool,
) -> Option<Vec<(usize, usize)>> {
    let mut seats: Vec<(bool, usize, usize, usize)> = Vec::new();
    for (r, row) in rows.iter().enumerate() {
        for i in (0..row.len()).filter(|&i| row[i] && wanted(r, i)) {
            // Twice the distance between the seat's centre and the row's.
            seats.push((later(r, i), r, (2 * i + 1).abs_diff(row.len()), i));
        }
    }
    if seats.len() < n {
        return None;
    }
    seats.sort_unstable();
    Some(
        seats
            .into_iter()
            .take(n)
            .map(|(_, r, _, i)| (r, i))
            .collect(),
    )
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
                Some(rows) => Free::Rows {
                    free: rows
                        .iter()
                        .map(|row| free_row(section, row, known))
                        .collect(),
                    access: rows_access(rows),
                },
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

/// What the seats of `rows` are for, by their `access`; empty when no
/// row has any (most sections).
fn rows_access(rows: &[RowMap]) -> Vec<RowAccess> {
    if rows.iter().all(|row| row.access.is_none()) {
        return Vec::new();
    }
    let access = |row: &RowMap| RowAccess::new(row.access.as_deref().map(seats_of_symbols));
    rows.iter().map(access).collect()
}

/// One row of `section`'s map: true where its seat is available or
/// listed, and not known taken. A free wheelchair space is free here; the
/// choice gives it only to an entry asking for one, as best-available
/// does (API.md, "Accessible seats").
fn free_row(section: &SectionMap, row: &RowMap, known: &SeatsKnown) -> Vec<bool> {
    let seat = |number: usize| {
        let number = u32::try_from(number + 1).unwrap_or(u32::MAX);
        SeatId::compose(&section.section_id, &row.row, number)
    };
    let statuses = row.statuses.chars().enumerate();
    let (listed, taken) = (known.listed, known.taken);
    statuses
        .map(|(i, c)| {
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
/// in each section, every request for no wheelchair space it could fill
/// ([`fillable`]), and where it has a free space the index of entries
/// asking for spaces ([`WaitingIndex::spaces`]: the look passes over those
/// it cannot fill), each in that section's index and in the any-section
/// one. Every entry of the others can be filled (the index is what it
/// asks for), so its head is the earliest that can, and the earliest of
/// the heads is the entry an offer goes to: the offerer reads one item per
/// index and shard, however long the line.
pub fn fillable_indexes(sections: &[SectionFree], max_quantity: u32) -> Vec<WaitingIndex> {
    let mut indexes = Vec::new();
    let mut seen = HashSet::new();
    for section in sections {
        let (plain, spaces) = fillable(&section.free, max_quantity);
        for within in [Some(section.section.clone()), None] {
            let each = plain.iter().map(|&(quantity, together)| WaitingIndex {
                section: within.clone(),
                quantity,
                together,
                wheelchair: 0,
            });
            let spaces = spaces.then(|| WaitingIndex::spaces(within.clone()));
            for index in each.chain(spaces) {
                if seen.insert(index.label()) {
                    indexes.push(index);
                }
            }
        }
    }
    indexes
}

/// The requests for no wheelchair space `free` could fill, as (quantity,
/// together), quantities up to `max_quantity`: up to its longest run
/// without a space together, up to its free seats but spaces apart
/// (places fill either way); and whether it has a free wheelchair space.
fn fillable(free: &Free, max_quantity: u32) -> (Vec<(u32, bool)>, bool) {
    let (free, access) = match free {
        Free::Places(places) => {
            let most = (*places).min(max_quantity);
            let both = (1..=most).flat_map(|q| [(q, true), (q, false)]);
            return (both.collect(), false);
        }
        Free::Rows { free, access } => (free, access),
    };
    let space = |r: usize, i: usize| RowAccess::of_row(access, r).at(i) == Some(Access::Wheelchair);
    let (mut spaces, mut others) = (0, 0);
    for (r, row) in free.iter().enumerate() {
        for i in (0..row.len()).filter(|&i| row[i]) {
            match space(r, i) {
                true => spaces += 1,
                false => others += 1,
            }
        }
    }
    let clear = (0..free.len())
        .map(|r| longest_run(&free[r], |i| !space(r, i)))
        .max()
        .unwrap_or(0);
    let to_u32 = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    let (clear, others) = (to_u32(clear), to_u32(others));
    let plain = (1..=max_quantity).flat_map(|q| {
        let fits = [(q <= clear, true), (q <= others, false)];
        fits.into_iter()
            .filter(|&(fits, _)| fits)
            .map(move |(_, together)| (q, together))
    });
    (plain.collect(), spaces > 0)
}

/// The longest run of free seats of `row` that `counts` takes.
fn longest_run(row: &[bool], counts: impl Fn(usize) -> bool) -> usize {
    let (mut longest, mut run) = (0, 0);
    for (i, &free) in row.iter().enumerate() {
        run = if free && counts(i) { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    longest
}

#[cfg(test)]
#[path = "offer_tests.rs"]
mod tests;
