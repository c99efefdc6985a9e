//! Accessible seats (API.md, "Accessible seats"): a row's wheelchair
//! spaces and companion seats, as its plan lists them. Pure.

use std::collections::HashSet;

use serde::Serialize;

use super::{RowId, SectionId};
use crate::error::Error;

/// What a seat is for, where the plan says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    Wheelchair,
    Companion,
}

/// The seat map's character for a wheelchair space (`access`).
pub const WHEELCHAIR_SYMBOL: char = 'W';
const COMPANION_SYMBOL: char = 'C';
const NEITHER_SYMBOL: char = '.';

/// What each seat of a row of `count` is for, by the plan's lists (seat
/// numbers from 1); `None` for a row with neither (most rows: nothing to
/// build).
pub fn seats_access(
    count: u32,
    wheelchair: &[u32],
    companion: &[u32],
) -> Option<Vec<Option<Access>>> {
    if wheelchair.is_empty() && companion.is_empty() {
        return None;
    }
    let mut seats = vec![None; count as usize];
    for (numbers, access) in [
        (wheelchair, Access::Wheelchair),
        (companion, Access::Companion),
    ] {
        for &number in numbers {
            // Checked at creation: every number is a seat of the row.
            if let Some(at) = number
                .checked_sub(1)
                .and_then(|i| seats.get_mut(i as usize))
            {
                *at = Some(access);
            }
        }
    }
    Some(seats)
}

/// A row's access as the seat map writes it, one character per seat of
/// its `count`: `W` a wheelchair space, `C` a companion seat, `.`
/// neither; `None` for a row with neither.
pub fn access_symbols(count: u32, wheelchair: &[u32], companion: &[u32]) -> Option<String> {
    let symbol = |access| match access {
        Some(Access::Wheelchair) => WHEELCHAIR_SYMBOL,
        Some(Access::Companion) => COMPANION_SYMBOL,
        None => NEITHER_SYMBOL,
    };
    Some(
        seats_access(count, wheelchair, companion)?
            .into_iter()
            .map(symbol)
            .collect(),
    )
}

/// What each seat of a row is for, from its [`access_symbols`].
pub fn seats_of_symbols(symbols: &str) -> Vec<Option<Access>> {
    let access = |symbol| match symbol {
        WHEELCHAIR_SYMBOL => Some(Access::Wheelchair),
        COMPANION_SYMBOL => Some(Access::Companion),
        _ => None,
    };
    symbols.chars().map(access).collect()
}

/// Checks the access lists of row `row` (of `count` seats) of `section`:
/// seat numbers of the row, each once, none in both lists.
pub fn check_row_access(
    (section, row, count): (&SectionId, &RowId, u32),
    wheelchair: &[u32],
    companion: &[u32],
) -> Result<(), Error> {
    let mut seen = HashSet::new();
    for (field, numbers) in [("wheelchair", wheelchair), ("companion", companion)] {
        for &number in numbers {
            if !(1..=count).contains(&number) {
                return Err(Error::BadRequest(format!(
                    "row {row} of section {section}: {field} seat {number} is not a seat of the row (1-{count})"
                )));
            }
            if !seen.insert(number) {
                return Err(Error::BadRequest(format!(
                    "row {row} of section {section}: seat {number} is listed twice (a seat is a wheelchair space, a companion seat or neither)"
                )));
            }
        }
    }
    Ok(())
}
