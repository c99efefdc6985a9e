//! The item codec: attribute values in, typed domain values out; a missing
//! or mistyped attribute is a `Malformed` error naming the item.

use super::errors::StoreError;
use super::keys::{
    parse_place_member, CAPACITY, CREATED_AT, EVENT_ID, EXPIRES_AT, EXTRA_PAYMENT_IDS, FREE,
    HOLDER, HOLDER_DEADLINE, HOLD_EXPIRES_AT, HOLD_EXPIRY, HOLD_PREFIX, HOLD_QUANTITY,
    HOLD_SECONDS, NAME, NUMBER, ORDER_ID, ORDINAL, PAYMENT_ID, PK, PLACE_SEPARATOR, PLAN,
    PLAN_CHUNKS, PLAN_CHUNK_BYTES, READY, REFUND_REASON, ROW, SEATS, SEATS_WRITTEN, SEAT_AVAILABLE,
    SEAT_COUNT, SEAT_HELD, SEAT_ID, SEAT_SOLD, SECTION_ID, SK, SOLD, STATUS, TOKEN_HASH, USER_ID,
    VERSION, VISITOR_ID,
};
use crate::domain::ga::{Bucket, HeldPlaces, PlaceHold};
use crate::domain::{
    Event, EventHead, EventId, Millis, Order, OrderId, OrderStatus, PaymentId, RefundReason, RowId,
    Seat, SeatId, SeatSpec, SeatState, SectionId, SectionPlan, VisitorId,
};
use crate::error::Error;
use aws_sdk_dynamodb::types::AttributeValue;
use std::collections::HashMap;

pub(super) type Item = HashMap<String, AttributeValue>;

pub(super) fn s(v: impl Into<String>) -> AttributeValue {
    AttributeValue::S(v.into())
}
pub(super) fn n(v: impl ToString) -> AttributeValue {
    AttributeValue::N(v.to_string())
}
pub(super) fn ss(values: &[&str]) -> AttributeValue {
    AttributeValue::Ss(values.iter().map(|v| (*v).to_owned()).collect())
}

/// Typed reads of item attributes; a missing or mistyped attribute is a
/// `Malformed` store error naming the item and the attribute.
pub(super) struct Fields<'a> {
    item: &'a Item,
}

impl<'a> Fields<'a> {
    pub(super) fn new(item: &'a Item) -> Self {
        Self { item }
    }
    pub(super) fn key(&self) -> String {
        let get = |k| {
            self.item
                .get(k)
                .and_then(|v: &AttributeValue| v.as_s().ok())
                .map(String::as_str)
        };
        format!("{}/{}", get(PK).unwrap_or("?"), get(SK).unwrap_or("?"))
    }
    pub(super) fn malformed(&self, attr: &str) -> StoreError {
        StoreError::Malformed {
            key: self.key(),
            problem: format!("{attr} missing or mistyped"),
        }
    }
    pub(super) fn opt_s(&self, attr: &str) -> Option<&'a str> {
        self.item
            .get(attr)
            .and_then(|v| v.as_s().ok())
            .map(String::as_str)
    }
    pub(super) fn str(&self, attr: &str) -> Result<&'a str, StoreError> {
        self.opt_s(attr).ok_or_else(|| self.malformed(attr))
    }
    pub(super) fn opt_i64(&self, attr: &str) -> Result<Option<i64>, StoreError> {
        match self.item.get(attr) {
            None => Ok(None),
            Some(v) => v
                .as_n()
                .ok()
                .and_then(|x| x.parse().ok())
                .map(Some)
                .ok_or_else(|| self.malformed(attr)),
        }
    }
    pub(super) fn i64(&self, attr: &str) -> Result<i64, StoreError> {
        self.opt_i64(attr)?.ok_or_else(|| self.malformed(attr))
    }
    pub(super) fn u32(&self, attr: &str) -> Result<u32, StoreError> {
        u32::try_from(self.i64(attr)?).map_err(|_| self.malformed(attr))
    }
    pub(super) fn string_set(&self, attr: &str) -> Result<Vec<String>, StoreError> {
        match self.item.get(attr) {
            None => Ok(Vec::new()),
            Some(AttributeValue::Ss(v)) => Ok(v.clone()),
            Some(_) => Err(self.malformed(attr)),
        }
    }
    pub(super) fn id<T>(
        &self,
        attr: &str,
        parse: fn(&str) -> Result<T, Error>,
    ) -> Result<T, StoreError> {
        parse(self.str(attr)?).map_err(|_| self.malformed(attr))
    }
}

/// What every request may need of an event: its item's head fields.
pub(super) fn parse_event_head(item: &Item) -> Result<EventHead, StoreError> {
    let f = Fields::new(item);
    Ok(EventHead {
        event_id: f.id(EVENT_ID, EventId::parse)?,
        hold_seconds: f.u32(HOLD_SECONDS)?,
        seat_count: f.u32(SEAT_COUNT)?,
    })
}

/// A legacy event item (before the small event head): the name and the plan's first chunk on
/// the event item itself, the other chunks next to it.
pub(super) fn is_legacy_event(item: &Item) -> bool {
    item.contains_key(PLAN)
}

/// An event from its item and its plan's chunk items in order: every
/// chunk, the first carrying the name (for a [legacy](is_legacy_event)
/// item, the chunks after the one it carries).
pub(super) fn parse_event(item: &Item, chunks: &[Item]) -> Result<Event, StoreError> {
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
        sections: serde_json::from_str(&plan).map_err(|_| f.malformed(PLAN))?,
    })
}

/// How far an unfinished creation got: every seat before this ordinal
/// exists (0 when the item predates the mark).
pub(super) fn seats_written(item: &Item) -> Result<u32, StoreError> {
    let f = Fields::new(item);
    Ok(f.opt_i64(SEATS_WRITTEN)?
        .and_then(|n| u32::try_from(n).ok())
        .unwrap_or(0))
}

/// How many plan chunks an event item says it has (1: all on the item).
pub(super) fn plan_chunk_count(item: &Item) -> Result<usize, StoreError> {
    let f = Fields::new(item);
    usize::try_from(f.i64(PLAN_CHUNKS)?)
        .ok()
        .filter(|n| *n >= 1)
        .ok_or_else(|| f.malformed(PLAN_CHUNKS))
}

/// The seating plan as JSON, cut into chunks of at most
/// [`PLAN_CHUNK_BYTES`] (at character boundaries; ids are ASCII anyway).
pub(super) fn encode_plan(sections: &[SectionPlan]) -> Vec<String> {
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

pub(super) fn event_is_ready(item: &Item) -> bool {
    matches!(item.get(READY), Some(AttributeValue::Bool(true)))
}

pub(super) fn parse_seat(item: &Item) -> Result<Seat, StoreError> {
    let f = Fields::new(item);
    let spec = SeatSpec {
        seat_id: f.id(SEAT_ID, SeatId::parse)?,
        section_id: f.id(SECTION_ID, SectionId::parse)?,
        row: f.id(ROW, RowId::parse)?,
        number: f.u32(NUMBER)?,
        ordinal: f.u32(ORDINAL)?,
    };
    let state = match f.str(STATUS)? {
        SEAT_AVAILABLE => SeatState::Available,
        SEAT_HELD => SeatState::Held {
            order: f.id(HOLDER, OrderId::parse)?,
            expires_at: Millis(f.i64(HOLD_EXPIRES_AT)?),
        },
        SEAT_SOLD => SeatState::Sold {
            order: f.id(HOLDER, OrderId::parse)?,
        },
        _ => return Err(f.malformed(STATUS)),
    };
    Ok(Seat { spec, state })
}

/// An order as read, with its optimistic-concurrency version.
#[derive(Debug, Clone)]
pub struct StoredOrder {
    pub order: Order,
    pub version: i64,
}

pub(crate) fn parse_order(item: &Item) -> Result<StoredOrder, StoreError> {
    let f = Fields::new(item);
    let ids = |attr| -> Result<Vec<String>, StoreError> {
        let mut v = f.string_set(attr)?;
        v.sort();
        Ok(v)
    };
    // The set holds seats and place members (see `place_member`).
    let (place_members, seat_ids): (Vec<String>, Vec<String>) = ids(SEATS)?
        .into_iter()
        .partition(|x| x.contains(PLACE_SEPARATOR));
    let seats = seat_ids
        .iter()
        .map(|x| SeatId::parse(x).map_err(|_| f.malformed(SEATS)))
        .collect::<Result<_, _>>()?;
    let mut places: Vec<HeldPlaces> = Vec::new();
    for member in &place_members {
        let (section, bucket) = parse_place_member(member).ok_or_else(|| f.malformed(SEATS))?;
        match places
            .iter_mut()
            .find(|p| p.section == section && p.bucket == bucket)
        {
            Some(held) => held.quantity += 1,
            None => places.push(HeldPlaces {
                section,
                bucket,
                quantity: 1,
            }),
        }
    }
    let refund_payment_ids = ids(EXTRA_PAYMENT_IDS)?
        .iter()
        .map(|x| PaymentId::parse(x).map_err(|_| f.malformed(EXTRA_PAYMENT_IDS)))
        .collect::<Result<_, _>>()?;
    let expires_at = Millis(f.i64(EXPIRES_AT)?);
    let order = Order {
        order_id: f.id(ORDER_ID, OrderId::parse)?,
        event_id: f.id(EVENT_ID, EventId::parse)?,
        status: OrderStatus::parse(f.str(STATUS)?).ok_or_else(|| f.malformed(STATUS))?,
        expires_at,
        holder_deadline: Millis(f.i64(HOLDER_DEADLINE)?),
        created_at: Millis(f.i64(CREATED_AT)?),
        token_hash: f.str(TOKEN_HASH)?.to_owned(),
        seats,
        places,
        payment_id: f
            .opt_s(PAYMENT_ID)
            .map(PaymentId::parse)
            .transpose()
            .map_err(|_| f.malformed(PAYMENT_ID))?,
        refund_payment_ids,
        refund_reason: f
            .opt_s(REFUND_REASON)
            .map(|r| RefundReason::parse(r).ok_or_else(|| f.malformed(REFUND_REASON)))
            .transpose()?,
        user_id: f.opt_s(USER_ID).map(str::to_owned),
        visitor_id: f
            .opt_s(VISITOR_ID)
            .map(VisitorId::parse)
            .transpose()
            .map_err(|_| f.malformed(VISITOR_ID))?,
    };
    Ok(StoredOrder {
        order,
        version: f.opt_i64(VERSION)?.unwrap_or(0),
    })
}

/// A general-admission bucket item.
pub(super) fn parse_bucket(item: &Item) -> Result<Bucket, StoreError> {
    let f = Fields::new(item);
    let index = f
        .str(PK)?
        .rsplit('#')
        .next()
        .and_then(|i| i.parse().ok())
        .ok_or_else(|| f.malformed(PK))?;
    let mut holds = Vec::new();
    for (name, entry) in item {
        let Some(order) = name.strip_prefix(HOLD_PREFIX) else {
            continue;
        };
        let AttributeValue::M(entry) = entry else {
            return Err(f.malformed(name));
        };
        let e = Fields::new(entry);
        holds.push(PlaceHold {
            order: OrderId::parse(order).map_err(|_| f.malformed(name))?,
            quantity: e.u32(HOLD_QUANTITY).map_err(|_| f.malformed(name))?,
            expires_at: Millis(e.i64(HOLD_EXPIRY).map_err(|_| f.malformed(name))?),
        });
    }
    holds.sort_by(|a, b| a.order.cmp(&b.order));
    Ok(Bucket {
        index,
        capacity: f.u32(CAPACITY)?,
        sold: f.u32(SOLD)?,
        free: f.u32(FREE)?,
        holds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::RowPlan;

    #[test]
    fn plans_round_trip_through_chunks() -> Result<(), Box<dyn std::error::Error>> {
        // 100,000 one-seat rows with long ids: megabytes of plan, many chunks.
        let rows = (0..100_000).map(|i| RowPlan {
            row: RowId::parse(&format!("{i:0>60}")).unwrap_or_else(|_| unreachable!()),
            count: 1,
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
