//! The seat map's rows in parts, for the offerer's memory of the map
//! (API.md, "Offers"): the projector counts, per part, the batches that
//! changed rows of an event with an open waitlist, and the offerer reads
//! again between looks only the rows of the parts whose count moved.
//! Pure.

use std::collections::{BTreeSet, HashMap};

use sha2::{Digest, Sha256};

use super::offer_tick::settled_at;
use super::{Millis, RowId, SeatId, SectionId};

/// How many parts an event's rows fall into: few enough that the
/// counts' item stays one read unit (64 small numbers), many enough that
/// a part of a stadium's 2,000 rows is about 30 of them.
pub const MAP_PARTS: u8 = 64;

/// Which part a row falls into, from its `{sectionId}-{row}` key: a
/// digest, so every process (the projector's and the offerer's, on any
/// build) agrees.
pub fn part_of_row_key(row_key: &str) -> u8 {
    Sha256::digest(row_key.as_bytes())[0] % MAP_PARTS
}

/// The part of `row` of `section`.
pub fn part_of_row(section: &SectionId, row: &RowId) -> u8 {
    part_of_row_key(&SeatId::row_key(section, row))
}

/// The part of `seat`'s row (`None` for an id no plan makes).
pub fn part_of_seat(seat: &SeatId) -> Option<u8> {
    seat.row_and_number().map(|(row, _)| part_of_row_key(row))
}

/// The stream's counts for an event, as one read of them shows: the
/// batches that freed seats or places (a look is due when it moves) and
/// the batches that changed each part's rows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Noted {
    pub frees: u64,
    pub parts: HashMap<u8, u64>,
}

/// How long the offerer keeps a map it read whole before reading it
/// whole again: a safety net for a change no count shows (a batch the
/// projector gave up on, logged).
pub const MAP_KEPT_MS: i64 = 60_000;

/// Whether a map read whole at `read_at` may still be kept at `now`, and
/// brought up to date by the parts whose counts moved: only when it was
/// read once the opening (`opened_at`) had settled (before, a batch may
/// read a copy of the waitlist that does not show it open yet, and count
/// nothing), and for [`MAP_KEPT_MS`].
pub fn map_kept(read_at: Millis, opened_at: Option<Millis>, now: Millis) -> bool {
    let settled = settled_at(opened_at).is_some_and(|at| read_at >= at);
    settled && now.0 - read_at.0 < MAP_KEPT_MS
}

/// The parts whose count in `now` is not what `before` remembered (or
/// that `forgotten` names): their rows may have changed since.
pub fn moved_parts(
    before: &HashMap<u8, u64>,
    forgotten: &BTreeSet<u8>,
    now: &HashMap<u8, u64>,
) -> BTreeSet<u8> {
    let keys = before.keys().chain(now.keys());
    let moved = keys.filter(|part| before.get(part) != now.get(part));
    moved.chain(forgotten).copied().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_and_its_seats_fall_into_one_part_within_range() -> Result<(), crate::error::Error> {
        let (section, row) = (SectionId::parse("A")?, RowId::parse("12")?);
        let part = part_of_row(&section, &row);
        assert!(part < MAP_PARTS);
        let seat = SeatId::compose(&section, &row, 7);
        assert_eq!(part_of_seat(&seat), Some(part));
        assert_eq!(part_of_seat(&SeatId::parse("nodash")?), None);
        Ok(())
    }

    #[test]
    fn parts_spread_rows() {
        let parts: BTreeSet<u8> = (0..200)
            .map(|r| part_of_row_key(&format!("S{}-{}", r / 20, r % 20)))
            .collect();
        // 200 rows into 64 parts: most parts hold some.
        assert!(parts.len() > 48, "{}", parts.len());
    }

    #[test]
    fn a_map_is_kept_from_the_settled_opening_for_a_while() {
        let opened = Millis(100_000);
        let settled = opened.0 + crate::domain::offer_tick::OPENING_SETTLE_MS;
        // (read at, opened at, now, kept)
        let cases = [
            (settled, Some(opened), settled + 1, true),
            (settled, Some(opened), settled + MAP_KEPT_MS - 1, true),
            (settled, Some(opened), settled + MAP_KEPT_MS, false),
            (settled - 1, Some(opened), settled, false),
            (settled, None, settled + 1, false),
        ];
        for (read_at, opened_at, now, kept) in cases {
            let got = map_kept(Millis(read_at), opened_at, Millis(now));
            assert_eq!(got, kept, "{read_at} {opened_at:?} {now}");
        }
    }

    #[test]
    fn moved_parts_are_those_counted_otherwise() {
        type Counts<'a> = &'a [(u8, u64)];
        let map = |pairs: Counts| pairs.iter().copied().collect::<HashMap<u8, u64>>();
        // (remembered, forgotten, read now, moved)
        let cases: &[(Counts, &[u8], Counts, &[u8])] = &[
            (&[], &[], &[], &[]),
            (&[(1, 2)], &[], &[(1, 2)], &[]),
            (&[(1, 2)], &[], &[(1, 3)], &[1]),
            (&[], &[], &[(4, 1)], &[4]),
            (&[(1, 2), (5, 1)], &[], &[(1, 2)], &[5]),
            (&[(1, 2), (3, 3)], &[], &[(1, 9), (3, 3), (7, 1)], &[1, 7]),
            // A part forgotten (a lost offer's row) is read again, counted
            // since or not.
            (&[(1, 2)], &[1, 9], &[(1, 2)], &[1, 9]),
        ];
        for (before, forgotten, now, want) in cases {
            let forgotten = forgotten.iter().copied().collect();
            let moved = moved_parts(&map(before), &forgotten, &map(now));
            assert_eq!(moved.into_iter().collect::<Vec<_>>(), want.to_vec());
        }
    }
}
