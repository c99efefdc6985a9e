//! The seat map's projection items (`MAP#…`, one per part of a row), the
//! event's summaries of its rows' free runs (`RUNS#…`) and what the stream
//! saw sold out (`SOLDOUT#…`): their keys, attribute names and expressions.

use crate::domain::{EventRef, RowRuns, SectionId};
use crate::store::expression::Expression;
use crate::store::schema::{PK, SK};
use crate::store::value::{s, Item};
use aws_sdk_dynamodb::types::AttributeValue;
use std::collections::HashMap;

/// Seats per seat-map projection item: a row's map is one item up to this
/// many seats (a few KB), more items for longer rows.
pub(in crate::store) const SEAT_MAP_ITEM_SEATS: u32 = 1000;

/// The seat-map projection item holding seat `number` of the row
/// `{section}-{row}` (see `seat_map.rs`).
pub(in crate::store) fn seat_map_key(event: &EventRef, row: &str, number: u32) -> Item {
    let chunk = number.saturating_sub(1) / SEAT_MAP_ITEM_SEATS;
    HashMap::from([
        (PK.into(), s(format!("MAP#{event}#{row}#{chunk}"))),
        (SK.into(), s("MAP")),
    ])
}

/// A projection item's version: one more at every write, so the summary
/// of its runs written from one write never replaces a later one's.
pub(in crate::store) const MAP_VERSION: &str = "version";

/// An event's summaries of its rows' free runs, spread over items
/// (`domain::RunsLayout`): `RUNS#{ref}#{item}`, SK `RUNS`, one attribute
/// per row the item holds, named by the row's key (`{section}-{row}`): a
/// map of the projection item's `v`ersion, the `l`ongest free run and,
/// while a hold counted is live, `u`ntil its expiry (see `free_runs.rs`).
/// Each item stays under the kilobyte one write unit pays for, and
/// batched reads cover an event. (Events created before the summaries
/// were dealt across sections wrote `RUNS#{ref}#{section}#{item}`; their
/// seats do not name an item of this layout, so nothing writes those any
/// more, and nothing reads them.)
pub const RUNS_PK_PREFIX: &str = "RUNS#";

pub(in crate::store) fn runs_key(event: &EventRef, item: u32) -> Item {
    HashMap::from([
        (PK.into(), s(format!("{RUNS_PK_PREFIX}{event}#{item}"))),
        (SK.into(), s("RUNS")),
    ])
}

pub(in crate::store) const RUNS_VERSION: &str = "v";
pub(in crate::store) const RUNS_LONGEST: &str = "l";
pub(in crate::store) const RUNS_UNTIL: &str = "u";
/// The clear run (`domain::RowRuns::clear`), only in rows with wheelchair
/// spaces.
pub(in crate::store) const RUNS_CLEAR: &str = "c";

/// What the stream has seen sold out, for good (nothing sold is ever
/// released): `SOLDOUT#{ref}`, SK `EVENT` with `soldOut` (the set of its
/// sections every seat or place of which is sold), and SK
/// `SECTION#{section}` with `fullParts` (the set of the section's seat-map
/// parts, or general-admission buckets, that are sold out). See
/// `sold_out.rs`.
pub const SOLD_OUT_PK_PREFIX: &str = "SOLDOUT#";

pub(in crate::store) fn sold_out_key(event: &EventRef) -> Item {
    HashMap::from([
        (PK.into(), s(format!("{SOLD_OUT_PK_PREFIX}{event}"))),
        (SK.into(), s("EVENT")),
    ])
}

pub(in crate::store) fn section_progress_key(event: &EventRef, section: &SectionId) -> Item {
    HashMap::from([
        (PK.into(), s(format!("{SOLD_OUT_PK_PREFIX}{event}"))),
        (SK.into(), s(format!("SECTION#{section}"))),
    ])
}

pub(in crate::store) const SOLD_OUT: &str = "soldOut";

pub(in crate::store) const FULL_PARTS: &str = "fullParts";

// ----- expressions ---------------------------------------------------------
// A seat-map projection item's expression (`MAP#…`): one `UpdateItem`
// per part of a row, from the seat stream; and what the stream saw sold
// out (`SOLDOUT#…`), added to sets, so a record seen twice adds nothing.

/// One more sold-out part (a seat-map part or a bucket) of a section.
pub(in crate::store) fn full_part(part: &str) -> Expression {
    Expression::update("ADD #parts :part")
        .name("#parts", FULL_PARTS)
        .value(":part", AttributeValue::Ss(vec![part.to_owned()]))
}

/// One more sold-out section of an event.
pub(in crate::store) fn sold_out(section: &str) -> Expression {
    Expression::update("ADD #soldOut :section")
        .name("#soldOut", SOLD_OUT)
        .value(":section", AttributeValue::Ss(vec![section.to_owned()]))
}

/// One row's runs as a projection write left them: the row's attribute
/// name, the projection item's version after the write, and the runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::store) struct NotedRuns {
    pub row: String,
    pub version: i64,
    pub runs: RowRuns,
}

/// Rows' runs as projection item versions showed them, each row unless a
/// later version's is there already (then the whole write is refused).
/// Names `#r{i}`, values `:r{i}` and `:v{i}`.
pub(in crate::store) fn rows_runs(rows: &[NotedRuns]) -> Expression {
    let number = |n: i64| AttributeValue::N(n.to_string());
    let (mut set, mut newer) = (Vec::new(), Vec::new());
    let mut bindings = Expression::default().name("#v", RUNS_VERSION);
    for (i, noted) in rows.iter().enumerate() {
        let mut summary = HashMap::from([
            (RUNS_VERSION.to_owned(), number(noted.version)),
            (
                RUNS_LONGEST.to_owned(),
                number(i64::from(noted.runs.longest)),
            ),
        ]);
        if let Some(until) = noted.runs.until {
            summary.insert(RUNS_UNTIL.to_owned(), number(until.0));
        }
        if let Some(clear) = noted.runs.clear {
            summary.insert(RUNS_CLEAR.to_owned(), number(i64::from(clear)));
        }
        bindings = bindings
            .name(&format!("#r{i}"), &noted.row)
            .value(&format!(":r{i}"), AttributeValue::M(summary))
            .value(&format!(":v{i}"), number(noted.version));
        set.push(format!("#r{i} = :r{i}"));
        newer.push(format!("(attribute_not_exists(#r{i}) OR #r{i}.#v < :v{i})"));
    }
    Expression::update(format!("SET {}", set.join(", ")))
        .and(Expression::condition(newer.join(" AND ")))
        .and(bindings)
}

/// `SET` each seat attribute with a value (held or sold), `REMOVE` each
/// without (available again), and one more version. Names `#s{i}`, values
/// `:s{i}`.
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
    let mut text = vec!["ADD #version :one".to_owned()];
    bindings = bindings
        .name("#version", MAP_VERSION)
        .value(":one", AttributeValue::N("1".into()));
    if !set.is_empty() {
        text.push(format!("SET {}", set.join(", ")));
    }
    if !remove.is_empty() {
        text.push(format!("REMOVE {}", remove.join(", ")));
    }
    Expression::update(text.join(" ")).and(bindings)
}
