//! The event item (`EVENT#{ref}`, SK `EVENT`: its head, small, read by
//! every request) and its plan's chunks (`PLAN#{ref}#{replica}`, the plan
//! in JSON, in copies): their keys, their codec and their expressions.

use crate::domain::{Event, EventHead, EventId, EventRef, Millis, SectionPlan};
use crate::store::errors::StoreError;
use crate::store::expression::Expression;
use crate::store::schema::{EVENT_ID, PENDING_EXPIRES_AT, PENDING_SHARD, PK, SK};
use crate::store::value::{n, s, Fields, Item};
use aws_sdk_dynamodb::types::AttributeValue;
use std::collections::HashMap;

pub const EVENT_PK_PREFIX: &str = "EVENT#";

pub const EVENT_SK: &str = "EVENT";

pub(in crate::store) fn event_pk(event: &EventRef) -> AttributeValue {
    s(format!("{EVENT_PK_PREFIX}{event}"))
}

pub(in crate::store) fn event_key_of(event: &EventRef) -> Item {
    HashMap::from([(PK.into(), event_pk(event)), (SK.into(), s(EVENT_SK))])
}

pub(in crate::store) fn event_key(event: &EventId) -> Item {
    event_key_of(&EventRef::of(event))
}

/// The key of an event's item (its head), for the test harness's raw
/// reads.
pub fn event_item_key(event: &EventId) -> HashMap<String, AttributeValue> {
    event_key(event)
}

pub const PLAN_PK_PREFIX: &str = "PLAN#";

/// Chunk `chunk` of copy `replica` of a plan: `PLAN#{ref}#{replica}`, under
/// the plan's fingerprint (so another plan's chunks are other items).
pub(in crate::store) fn plan_chunk_key(
    event: &EventRef,
    fingerprint: &str,
    chunk: usize,
    replica: u8,
) -> Item {
    HashMap::from([
        (PK.into(), s(format!("{PLAN_PK_PREFIX}{event}#{replica}"))),
        (SK.into(), s(format!("PLAN#{fingerprint}#{chunk:04}"))),
    ])
}

/// Where legacy events (the plan's first chunk on the event item) keep their plan's chunks after the
/// first (the first is on the event item): next to the event item.
pub(in crate::store) fn legacy_plan_chunk_key(
    event: &EventRef,
    fingerprint: &str,
    chunk: usize,
) -> Item {
    HashMap::from([
        (PK.into(), event_pk(event)),
        (SK.into(), s(format!("PLAN#{fingerprint}#{chunk:04}"))),
    ])
}

/// The seating plan is stored as JSON in chunks of at most this many bytes,
/// items of their own, well inside DynamoDB's 400 KB item limit.
pub(in crate::store) const PLAN_CHUNK_BYTES: usize = 300_000;

/// Copies of each plan, each under a partition key of its own: a fresh
/// function instance reads one (its own pick), so the instances an
/// on-sale's first seconds start spread their plan reads over this many
/// keys (docs/SCALE.md has the arithmetic; the bench measures it).
pub const PLAN_REPLICAS: u8 = 4;

pub(in crate::store) const NAME: &str = "name";

pub(in crate::store) const HOLD_SECONDS: &str = "holdSeconds";

pub(in crate::store) const SEAT_COUNT: &str = "seatCount";

/// Absent on an event without a buyer limit.
pub(in crate::store) const BUYER_LIMIT: &str = "buyerLimit";

/// The version of the `DRAW_SECRET` key its buyers' refs are keyed with;
/// absent without a limit, and on an event created before refs were keyed.
pub(in crate::store) const BUYER_KEY: &str = "buyerKey";

pub(in crate::store) const PLAN_HASH: &str = "planHash";

pub(in crate::store) const READY: &str = "ready";

pub(in crate::store) const PLAN: &str = "plan";

pub(in crate::store) const PLAN_CHUNKS: &str = "planChunks";

/// On an event being created: every seat before this ordinal exists.
pub(in crate::store) const SEATS_WRITTEN: &str = "seatsWritten";

/// The index shard of events still being created: the sweep finishes them.
pub(in crate::store) const CREATING_SHARD: &str = "CREATING";

// ----- codec ---------------------------------------------------------------

/// What every request may need of an event: its item's head fields.
pub(in crate::store) fn parse_event_head(item: &Item) -> Result<EventHead, StoreError> {
    let f = Fields::new(item);
    Ok(EventHead {
        event_id: f.id(EVENT_ID, EventId::parse)?,
        hold_seconds: f.u32(HOLD_SECONDS)?,
        seat_count: f.u32(SEAT_COUNT)?,
        buyer_limit: f
            .opt_i64(BUYER_LIMIT)?
            .map(|limit| u32::try_from(limit).map_err(|_| f.malformed(BUYER_LIMIT)))
            .transpose()?,
        buyer_key: f.opt_s(BUYER_KEY).map(str::to_owned),
    })
}

/// A legacy event item (before the small event head): the name and the plan's first chunk on
/// the event item itself, the other chunks next to it.
pub(in crate::store) fn is_legacy_event(item: &Item) -> bool {
    item.contains_key(PLAN)
}

/// An event from its item and its plan's chunk items in order: every
/// chunk, the first carrying the name (for a [legacy](is_legacy_event)
/// item, the chunks after the one it carries).
pub(in crate::store) fn parse_event(item: &Item, chunks: &[Item]) -> Result<Event, StoreError> {
    let f = Fields::new(item);
    let legacy = is_legacy_event(item);
    let named = if legacy {
        item
    } else {
        chunks.first().ok_or_else(|| f.malformed(PLAN))?
    };
    let mut plan = String::new();
    for chunk in legacy.then_some(item).into_iter().chain(chunks) {
        plan.push_str(Fields::new(chunk).str(PLAN)?);
    }
    let head = parse_event_head(item)?;
    Ok(Event {
        event_id: head.event_id,
        name: Fields::new(named).str(NAME)?.to_owned(),
        hold_seconds: head.hold_seconds,
        seat_count: head.seat_count,
        buyer_limit: head.buyer_limit,
        buyer_key: head.buyer_key,
        sections: serde_json::from_str(&plan).map_err(|_| f.malformed(PLAN))?,
    })
}

/// How far an unfinished creation got: every seat before this ordinal
/// exists (0 when the item predates the mark).
pub(in crate::store) fn seats_written_of(item: &Item) -> Result<u32, StoreError> {
    let f = Fields::new(item);
    Ok(f.opt_i64(SEATS_WRITTEN)?
        .and_then(|n| u32::try_from(n).ok())
        .unwrap_or(0))
}

/// How many plan chunks an event item says it has (1: all on the item).
pub(in crate::store) fn plan_chunk_count(item: &Item) -> Result<usize, StoreError> {
    let f = Fields::new(item);
    usize::try_from(f.i64(PLAN_CHUNKS)?)
        .ok()
        .filter(|n| *n >= 1)
        .ok_or_else(|| f.malformed(PLAN_CHUNKS))
}

/// The seating plan as JSON, cut into chunks of at most
/// [`PLAN_CHUNK_BYTES`] (at character boundaries; ids are ASCII anyway).
pub(in crate::store) fn encode_plan(sections: &[SectionPlan]) -> Vec<String> {
    // Serialising plain structs of strings and numbers cannot fail.
    let json = serde_json::to_string(sections).unwrap_or_default();
    let mut chunks = Vec::new();
    let mut rest = json.as_str();
    while !rest.is_empty() {
        let mut cut = rest.len().min(PLAN_CHUNK_BYTES);
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        let (head, tail) = rest.split_at(cut);
        chunks.push(head.to_owned());
        rest = tail;
    }
    chunks
}

pub(in crate::store) fn event_is_ready(item: &Item) -> bool {
    matches!(item.get(READY), Some(AttributeValue::Bool(true)))
}

// ----- expressions ---------------------------------------------------------
// Event-side expressions: create-event's progress on the event item, the
// pending index's key condition (swept orders and unfinished events
// share it), and reading a partition by key.

/// The event is ready: every seat written (`count`); it leaves the
/// pending index's creating shard.
pub(in crate::store) fn ready(count: u32) -> Expression {
    Expression::update("SET #ready = :true, #written = :count REMOVE #shard, #resumeAt")
        .name("#ready", READY)
        .name("#written", SEATS_WRITTEN)
        .name("#shard", PENDING_SHARD)
        .name("#resumeAt", PENDING_EXPIRES_AT)
        .value(":true", AttributeValue::Bool(true))
        .value(":count", n(count))
}

/// `seatsWritten` raised to `written`, never lowered: two creators at once
/// each only move it forward.
pub(in crate::store) fn seats_written(written: u32) -> Expression {
    Expression::update("SET #written = :written")
        .and(Expression::condition("#written < :written"))
        .name("#written", SEATS_WRITTEN)
        .value(":written", n(written))
}

/// The pending index's entries in `shard` that are due at `now` (their
/// expiry, or an unfinished event's resume time, has passed).
pub(in crate::store) fn due_in_shard(shard: String, now: Millis) -> Expression {
    Expression::key_condition(concat!("#shard = :shard AND ", expired!("#due")))
        .name("#shard", PENDING_SHARD)
        .name("#due", PENDING_EXPIRES_AT)
        .value(":shard", s(shard))
        .value(":now", n(now.0))
}

/// Every item of partition `pk`.
pub(in crate::store) fn partition(pk: &str) -> Expression {
    Expression::key_condition("PK = :pk").value(":pk", s(pk))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{RowId, RowPlan, SectionId};
    use crate::store::schema::EVENT_ID;

    #[test]
    fn plans_round_trip_through_chunks() -> Result<(), Box<dyn std::error::Error>> {
        // 100,000 one-seat rows with long ids: megabytes of plan, many chunks.
        let rows = (0..100_000).map(|i| {
            let row = RowId::parse(&format!("{i:0>60}")).unwrap_or_else(|_| unreachable!());
            RowPlan::plain(row, 1)
        });
        let sections = vec![SectionPlan {
            section_id: SectionId::parse("A")?,
            rows: rows.collect(),
            capacity: None,
        }];
        let chunks = encode_plan(&sections);
        assert!(chunks.len() > 1 && chunks.iter().all(|c| c.len() <= PLAN_CHUNK_BYTES));
        let item_of = |chunk: &String| HashMap::from([(PLAN.to_owned(), s(chunk))]);
        let event = HashMap::from([
            (EVENT_ID.to_owned(), s("e")),
            (HOLD_SECONDS.to_owned(), n(60)),
            (SEAT_COUNT.to_owned(), n(100_000)),
            (PLAN_CHUNKS.to_owned(), n(chunks.len())),
        ]);
        let mut chunk_items: Vec<_> = chunks.iter().map(item_of).collect();
        chunk_items[0].insert(NAME.to_owned(), s("E"));
        let parsed = parse_event(&event, &chunk_items)?;
        assert_eq!(
            (parsed.sections, parsed.name.as_str()),
            (sections.clone(), "E")
        );
        assert_eq!(plan_chunk_count(&event)?, chunks.len());
        assert!(
            parse_event(&event, &chunk_items[1..]).is_err(),
            "a missing chunk is noticed"
        );
        // A legacy event item carries its name and first chunk.
        let mut legacy = event.clone();
        legacy.extend([
            (NAME.to_owned(), s("Old")),
            (PLAN.to_owned(), s(&chunks[0])),
        ]);
        let later: Vec<_> = chunks[1..].iter().map(item_of).collect();
        assert!(is_legacy_event(&legacy) && !is_legacy_event(&event));
        let parsed = parse_event(&legacy, &later)?;
        assert_eq!((parsed.sections, parsed.name.as_str()), (sections, "Old"));
        assert_eq!(parse_event_head(&legacy)?, parse_event_head(&event)?);
        Ok(())
    }
}
