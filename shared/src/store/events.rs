//! Events and their seats: retry-safe creation that may finish in the
//! background, and seat listing in plan order, one `Query` per seat block
//! (reading events: `event_reads`).

use super::errors::{build_error, conditional, sdk_error, StoreError};
use super::event_reads::PlanRead;
use super::expression::Expression;
use super::failures::{unavailable_in, unexplained, ItemFailure};
use super::fan_out::FanOut;
use super::items;
use super::items::event::{
    encode_plan, event_is_ready, event_key, event_key_of, plan_chunk_key, seats_written_of,
    BUYER_KEY, BUYER_LIMIT, CREATING_SHARD, EVENT_PK_PREFIX, HOLD_SECONDS, NAME, PLAN, PLAN_CHUNKS,
    PLAN_HASH, PLAN_REPLICAS, READY, SEATS_WRITTEN, SEAT_COUNT,
};
use super::items::seat::{
    parse_seat, seat_block_pk, seat_key, NUMBER, ORDINAL, ROW, SEAT_AVAILABLE,
};
use super::schema::{
    CREATED_AT, EVENT_ID, KIND, PENDING_EXPIRES_AT, PENDING_INDEX, PENDING_SHARD, PK, SEAT_ID,
    SECTION_ID, STATUS,
};
use super::sold_out::MapShape;
use super::value::{n, s, Fields, Item};
use super::{Store, Txn};
use crate::domain::{
    Event, EventId, EventRef, EventStatus, Millis, Seat, SeatSpec, SeatState, SectionId,
};
use crate::error::Error;
use aws_sdk_dynamodb::types::{
    AttributeValue, Put, ReturnValuesOnConditionCheckFailure, TransactWriteItem,
};
use std::collections::HashMap;
use std::time::Duration;

/// Conditional seat writes in flight while creating an event.
pub const SEAT_WRITES_IN_FLIGHT: usize = 32;
/// How often (in seats) a creation records how far it got.
pub(super) const SEATS_WRITTEN_EVERY: u32 = 2_000;

/// Seat-block queries in flight for one listing page.
const BLOCK_QUERIES_IN_FLIGHT: usize = 16;

/// A seat as create-event writes it: free, with its place in the seat
/// map and the free-run summaries (`shape`).
fn new_seat_item(
    (event, event_id): (&EventRef, &EventId),
    seat: &SeatSpec,
    shape: &MapShape,
) -> Item {
    let mut item = seat_key(event, &seat.seat_id);
    item.extend([
        (KIND.into(), s("seat")),
        (EVENT_ID.into(), s(event_id.as_str())),
        (SEAT_ID.into(), s(seat.seat_id.as_str())),
        (SECTION_ID.into(), s(seat.section_id.as_str())),
        (ROW.into(), s(seat.row.as_str())),
        (NUMBER.into(), n(seat.number)),
        (ORDINAL.into(), n(seat.ordinal)),
        (STATUS.into(), s(SEAT_AVAILABLE)),
    ]);
    item.extend(shape.seat_attributes(seat));
    item
}

impl Store {
    // ----- creation -----------------------------------------------------

    /// Creates an event and its seats, safe to retry and to run twice at
    /// once, writing for at most `budget` (then `Creating`: the sweep
    /// finishes it, see [`crate::sweep::finish_events`]).
    ///
    /// The event item and its whole plan are written first, at once and
    /// only if the id is free ([`Store::claim_event_id`]), with
    /// `ready = false` and in the index's creating shard; then each seat
    /// under `attribute_not_exists` (a retry never overwrites a seat, so a
    /// seat held or sold meanwhile stays so); then `ready = true`. Nothing
    /// reads a not-ready event. The same plan again (same
    /// [`Event::plan_fingerprint`]) resumes an unfinished creation, or finds
    /// it complete and writes nothing; another plan under a taken id is
    /// `event-exists`, and writes nothing either.
    pub async fn create_event(
        &self,
        event: &Event,
        budget: Duration,
    ) -> Result<EventStatus, Error> {
        let started = crate::world::now();
        let deadline =
            Millis(started.0 + i64::try_from(budget.as_millis()).unwrap_or(i64::MAX / 2));
        let fingerprint = event.plan_fingerprint();
        let event_ref = EventRef::of(&event.event_id);
        let primary = plan_chunk_items(&event_ref, event, &fingerprint, 0);
        // The event item is its head: small (docs/API.md, "Under a crowd"),
        // the name and the plan in chunk items of their own.
        let mut item = event_key(&event.event_id);
        item.extend([
            (KIND.into(), s("event")),
            (EVENT_ID.into(), s(event.event_id.as_str())),
            (HOLD_SECONDS.into(), n(event.hold_seconds)),
            (SEAT_COUNT.into(), n(event.seat_count)),
            (PLAN_CHUNKS.into(), n(primary.len())),
            (PLAN_HASH.into(), s(&fingerprint)),
            (READY.into(), AttributeValue::Bool(false)),
            (SEATS_WRITTEN.into(), n(0)),
            (CREATED_AT.into(), n(started.0)),
            // The sweep takes over once this creator's budget is spent.
            (PENDING_SHARD.into(), s(CREATING_SHARD)),
            (PENDING_EXPIRES_AT.into(), n(deadline.0)),
        ]);
        if let Some(limit) = event.buyer_limit {
            item.insert(BUYER_LIMIT.into(), n(limit));
        }
        if let Some(version) = &event.buyer_key {
            item.insert(BUYER_KEY.into(), s(version));
        }
        let mut from = 0;
        if let Some(existing) = self.claim_event_id(item, primary).await? {
            if Fields::new(&existing).opt_s(PLAN_HASH) != Some(fingerprint.as_str()) {
                return Err(Error::EventExists);
            }
            if event_is_ready(&existing) {
                return Ok(EventStatus::Ready);
            }
            from = seats_written_of(&existing)?;
            tracing::info!(event_id = %event.event_id, from, "resuming an unfinished event creation");
        }
        self.complete_event(&event_ref, event, from, deadline).await
    }

    /// Writes the event item with the primary copy of its plan (`chunks`)
    /// only if the id is free: `None` when written, or the event item as it
    /// was. One transaction of the event item and its chunks, so the event
    /// never exists without its whole plan (a sweep can finish a creation
    /// whose creator died) and a refused or concurrent PUT writes no chunk:
    /// the plan of an event that exists never changes.
    async fn claim_event_id(&self, item: Item, chunks: Vec<Item>) -> Result<Option<Item>, Error> {
        let event_item = Put::builder()
            .table_name(&*self.table)
            .set_item(Some(item))
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
        let event_item = Expression::new_item()
            .on_put(event_item)
            .build()
            .map_err(build_error("TransactWriteItems"))?;
        let mut items = vec![TransactWriteItem::builder().put(event_item).build()];
        for chunk in chunks {
            let put = Put::builder()
                .table_name(&*self.table)
                .set_item(Some(chunk))
                .build()
                .map_err(build_error("TransactWriteItems"))?;
            items.push(TransactWriteItem::builder().put(put).build());
        }
        let Txn::Cancelled(reasons) = self.transact(items).await? else {
            return Ok(None);
        };
        match reasons.first() {
            Some(Some(ItemFailure::Condition(existing))) => {
                Ok(Some(existing.clone().unwrap_or_default()))
            }
            // A conflict (another creator of this id at the same instant)
            // or throttling: nothing was written; a retry decides.
            _ => Err(unavailable_in("TransactWriteItems", &reasons)
                .unwrap_or_else(|| unexplained("TransactWriteItems", &reasons))),
        }
    }

    /// Finishes a creation whose event item (with its plan) exists: the
    /// general-admission buckets, the seats from ordinal `from` on (every
    /// seat before it is known to exist) until `deadline`, then `ready`.
    async fn complete_event(
        &self,
        event_ref: &EventRef,
        event: &Event,
        from: u32,
        deadline: Millis,
    ) -> Result<EventStatus, Error> {
        // The plan's other copies and the general-admission buckets first
        // (a thousand per section at most): a resumed creation past the
        // first seat has them all.
        if from == 0 {
            self.write_plan_replicas(event_ref, event).await?;
            self.write_ga_buckets(event).await?;
        }
        let seats = event
            .seat_page(None, Some(from.min(event.seat_count)), u32::MAX)?
            .seats;
        let shape = MapShape::of(event);
        if !self
            .write_seats(&event.event_id, &seats, &shape, deadline)
            .await?
        {
            return Ok(EventStatus::Creating);
        }
        let ready = self
            .client
            .update_item()
            .table_name(&*self.table)
            .set_key(Some(event_key_of(event_ref)));
        items::event::ready(event.seat_count)
            .on_update_item(ready)
            .send()
            .await
            .map_err(|e| sdk_error("UpdateItem", e))?;
        Ok(EventStatus::Ready)
    }

    /// Writes the copies of the plan after the primary, each chunk where
    /// absent (a chunk's content is fixed by the plan's fingerprint in its
    /// key, so one that exists is already right).
    async fn write_plan_replicas(&self, event_ref: &EventRef, event: &Event) -> Result<(), Error> {
        let fingerprint = event.plan_fingerprint();
        for replica in 1..PLAN_REPLICAS {
            for item in plan_chunk_items(event_ref, event, &fingerprint, replica) {
                let put = self
                    .client
                    .put_item()
                    .table_name(&*self.table)
                    .set_item(Some(item));
                conditional(
                    Expression::new_item().on_put_item(put).send().await,
                    "PutItem",
                )?;
            }
        }
        Ok(())
    }

    /// Writes each seat that does not exist yet (`attribute_not_exists`), a
    /// bounded number at once, starting no write after `deadline`. A seat
    /// that exists is left as it is. As the seats known to exist grow
    /// without a gap, the event item's `seatsWritten` follows (every
    /// [`SEATS_WRITTEN_EVERY`] seats, and when time runs out), so a resumed
    /// creation starts there instead of from the first seat. True when
    /// every seat exists.
    /// Each seat carries its event's id, so a stream record of it stands
    /// alone (publish-events).
    async fn write_seats(
        &self,
        event_id: &EventId,
        seats: &[SeatSpec],
        shape: &MapShape,
        deadline: Millis,
    ) -> Result<bool, Error> {
        let event = &EventRef::of(event_id);
        let Some(first) = seats.first().map(|seat| seat.ordinal) else {
            return Ok(true);
        };
        let mut pending = seats.iter().peekable();
        let mut fan = FanOut::new(SEAT_WRITES_IN_FLIGHT, "PutItem");
        let mut out_of_time = false;
        // Seats done out of order, and the first ordinal not known to exist.
        let (mut done, mut written, mut recorded) =
            (std::collections::BTreeSet::new(), first, first);
        let write = |seat: &SeatSpec| {
            let put = self.put_new(new_seat_item((event, event_id), seat, shape));
            let ordinal = seat.ordinal;
            async move { put.await.map(|_| ordinal) }
        };
        loop {
            let next_seat = || {
                if out_of_time || pending.peek().is_none() {
                    return None;
                }
                if crate::world::now() >= deadline {
                    out_of_time = true;
                    return None;
                }
                pending.next().map(write)
            };
            let Some(result) = fan.next(next_seat).await else {
                let finished = !out_of_time && pending.peek().is_none();
                if !finished && written > recorded {
                    self.record_seats_written(event, written).await?;
                }
                return Ok(finished);
            };
            // Written, or there already: either way the seat exists.
            done.insert(result??);
            while done.remove(&written) {
                written += 1;
            }
            if written - recorded >= SEATS_WRITTEN_EVERY {
                self.record_seats_written(event, written).await?;
                recorded = written;
            }
        }
    }

    /// Raises the event item's `seatsWritten` to `written` (never lowers it:
    /// two creators at once each only move it forward).
    async fn record_seats_written(&self, event: &EventRef, written: u32) -> Result<(), Error> {
        let update = self
            .client
            .update_item()
            .table_name(&*self.table)
            .set_key(Some(event_key_of(event)));
        let update = items::event::seats_written(written).on_update_item(update);
        conditional(update.send().await, "UpdateItem").map(|_| ())
    }

    /// Events whose creator ran out of time (or died) before they were
    /// ready: one index query on the creating shard.
    pub async fn unfinished_events(&self, now: Millis) -> Result<Vec<EventRef>, Error> {
        let query = self
            .client
            .query()
            .table_name(&*self.table)
            .index_name(PENDING_INDEX);
        let out = items::event::due_in_shard(CREATING_SHARD.to_owned(), now)
            .on_query(query)
            .send()
            .await
            .map_err(|e| sdk_error("Query", e))?;
        out.items
            .unwrap_or_default()
            .iter()
            .map(|item| {
                let f = Fields::new(item);
                f.str(PK)?
                    .strip_prefix(EVENT_PK_PREFIX)
                    .and_then(EventRef::from_hex)
                    .ok_or_else(|| f.malformed(PK).into())
            })
            .collect()
    }

    /// Finishes an unfinished event's creation until `deadline`.
    pub async fn finish_event(
        &self,
        event: &EventRef,
        deadline: Millis,
    ) -> Result<EventStatus, Error> {
        let Some(item) = self.get_consistent(event_key_of(event)).await? else {
            return Err(StoreError::Malformed {
                key: event.to_string(),
                problem: "indexed as creating, but gone".into(),
            }
            .into());
        };
        if event_is_ready(&item) {
            return Ok(EventStatus::Ready);
        }
        let found = self.read_plan(event, &item, PlanRead::Primary).await?;
        self.complete_event(event, &found, seats_written_of(&item)?, deadline)
            .await
    }

    // ----- seats --------------------------------------------------------

    /// The states of one page of seats (strongly consistent): one `Query`
    /// per seat block the page touches, a bounded number at once.
    pub async fn read_seats(
        &self,
        event: &EventId,
        specs: Vec<SeatSpec>,
        consistent: bool,
    ) -> Result<Vec<Seat>, Error> {
        let event_ref = EventRef::of(event);
        let mut blocks: Vec<String> = specs
            .iter()
            .map(|spec| seat_block_pk(&event_ref, &spec.seat_id))
            .collect();
        blocks.dedup();
        let mut states: HashMap<String, SeatState> = HashMap::with_capacity(specs.len());
        let mut blocks = blocks.into_iter();
        let mut fan = FanOut::new(BLOCK_QUERIES_IN_FLIGHT, "Query");
        let query = |block| {
            let store = self.clone();
            async move { store.query_block(block, consistent).await }
        };
        while let Some(found) = fan.next(|| blocks.next().map(query)).await {
            states.extend(found??);
        }
        specs
            .into_iter()
            .map(|spec| match states.remove(spec.seat_id.as_str()) {
                Some(state) => Ok(Seat { spec, state }),
                None => Err(StoreError::Malformed {
                    key: spec.seat_id.to_string(),
                    problem: "seat item missing".into(),
                }
                .into()),
            })
            .collect()
    }

    async fn query_block(
        &self,
        block: String,
        consistent: bool,
    ) -> Result<Vec<(String, SeatState)>, Error> {
        let seat = |item: &Item| {
            let seat = parse_seat(item)?;
            Ok((seat.spec.seat_id.to_string(), seat.state))
        };
        self.query_every_page(items::event::partition(&block), consistent, seat)
            .await
    }

    /// One page of `event`'s seats (one section's, if given) in plan
    /// order, and where the next page starts.
    pub async fn list_seats(
        &self,
        event: &Event,
        section: Option<&SectionId>,
        from: Option<u32>,
        limit: u32,
    ) -> Result<(Vec<Seat>, Option<u32>), Error> {
        let page = event.seat_page(section, from, limit)?;
        let seats = self.read_seats(&event.event_id, page.seats, true).await?;
        Ok((seats, page.next))
    }
}

impl Store {
    /// Every seat of an event (of one section, if given), page by page:
    /// for the sweep-free checks of tests and the bench, not for requests.
    /// `None` if the event does not exist or is still being created.
    pub async fn list_all_seats(
        &self,
        event: &EventId,
        section: Option<&SectionId>,
    ) -> Result<Option<Vec<Seat>>, Error> {
        // The primary copy of the plan: the checks read the table as it is.
        let Some(found) = self.ready_event(event, 0).await? else {
            return Ok(None);
        };
        let mut all = Vec::new();
        let mut from = None;
        loop {
            let (seats, next) = self.list_seats(&found, section, from, 1000).await?;
            all.extend(seats);
            match next {
                Some(n) => from = Some(n),
                None => return Ok(Some(all)),
            }
        }
    }
}

/// Copy `replica` of `event`'s plan as items: its chunks in order, the
/// first carrying the event's name.
fn plan_chunk_items(
    event_ref: &EventRef,
    event: &Event,
    fingerprint: &str,
    replica: u8,
) -> Vec<Item> {
    encode_plan(&event.sections)
        .iter()
        .enumerate()
        .map(|(i, chunk)| {
            let mut item = plan_chunk_key(event_ref, fingerprint, i, replica);
            item.insert(PLAN.into(), s(chunk));
            if i == 0 {
                item.insert(NAME.into(), s(&event.name));
            }
            item
        })
        .collect()
}
