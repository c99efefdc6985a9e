//! The on-sale queue's state: one item per event's queue
//! (`QUEUE#{ref}`), written by put-queue, delete-queue, the admitter a few
//! times a second and a joiner admitted on the spot, each conditional on
//! the version it read; [`QUEUE_COPIES`] copies of it that every other
//! reader reads (one each, cached about a second), so a crowd's reads
//! spread over several keys; and the list of events with a queue, which
//! the admitter visits.
use aws_sdk_dynamodb::types::{AttributeValue, TransactWriteItem};

use super::errors::{sdk_error, StoreError};
use super::expression::Expression;
use super::items;
use super::items::queue::{
    queue_copy_key, queue_key, ADMISSION_SECONDS, ADMITTED, ADMIT_PER_MINUTE, BUYERS, CHECKPOINTS,
    DRAW_SECRET_VERSION, DRAW_SETTLE_MS, ENDS_AT, GENERATION, INVENTORY, JOIN_COUNTS,
    LAST_ADMISSION_US, LAST_DRAWN, LATE_DRAWN, OPENS_AT, ORDERS_PER_ADMISSION, PENDING,
    PENDING_RANK, PENDING_SLOT, PENDING_VISITOR, QUEUE_COPIES, REMOVED, RESUMED_US, SHARDS,
    WAITING,
};
use super::items::registry::{list_event, Registry};
use super::schema::{EVENT_ID, KIND, VERSION};
use super::value::{n, s, Fields, Item};
use super::{Store, Txn};
use crate::domain::buyer::Buyers;
use crate::domain::queue::{
    Inventory, QueueRank, QueueSettings, DEFAULT_DRAW_SETTLE_MS, DRAW_SETTLE_MS_RANGE,
};
use crate::domain::queue_counts::JoinCounts;
use crate::domain::queue_shards::QueueShards;
use crate::domain::queue_state::{Checkpoints, PendingAdmission, QueueState};
use crate::domain::{EventId, EventRef, Millis, VisitorId};
use crate::error::Error;

/// How long an instance reuses its read of a queue's state: the contract
/// lets a visitor's reply lag the queue by a second.
pub const QUEUE_CACHE_MS: i64 = 1_000;

/// A queue's item as read: its state, or a tombstone that remembers the
/// generation and version a removed queue reached.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredQueue {
    pub generation: u64,
    pub version: i64,
    /// `None` when the queue was removed.
    pub state: Option<QueueState>,
}

fn inventory_str(inventory: Inventory) -> &'static str {
    match inventory {
        Inventory::Available => "AVAILABLE",
        Inventory::NoneAvailable => "NONE_AVAILABLE",
        Inventory::AllSold => "ALL_SOLD",
        Inventory::WaitlistOnly => "WAITLIST_ONLY",
    }
}

/// Checkpoints as bytes: per point the rank (16 bytes) and how many are
/// ahead (8 bytes), big-endian.
fn encode_checkpoints(points: &Checkpoints) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(points.0.len() * 24);
    for (rank, ahead) in &points.0 {
        bytes.extend_from_slice(&rank.0.to_be_bytes());
        bytes.extend_from_slice(&ahead.to_be_bytes());
    }
    bytes
}

fn decode_checkpoints(bytes: &[u8]) -> Option<Checkpoints> {
    if !bytes.len().is_multiple_of(24) {
        return None;
    }
    let points = bytes
        .chunks_exact(24)
        .map(|c| {
            let rank = u128::from_be_bytes(c[..16].try_into().ok()?);
            let ahead = u64::from_be_bytes(c[16..].try_into().ok()?);
            Some((QueueRank(rank), ahead))
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Checkpoints(points))
}

/// The item of `state` at `key` (the main item or a copy).
fn state_item(key: Item, event: &EventId, state: &QueueState) -> Item {
    let q = &state.settings;
    let mut item = key;
    item.extend([
        (KIND.into(), s("queue")),
        (EVENT_ID.into(), s(event.as_str())),
        (GENERATION.into(), n(state.generation)),
        (VERSION.into(), n(state.version)),
        (OPENS_AT.into(), n(q.opens_at.0)),
        (ADMIT_PER_MINUTE.into(), n(q.admit_per_minute)),
        (ADMISSION_SECONDS.into(), n(q.admission_seconds)),
        (ORDERS_PER_ADMISSION.into(), n(q.orders_per_admission)),
        (BUYERS.into(), s(q.buyers.as_str())),
        (DRAW_SETTLE_MS.into(), n(q.draw_settle_ms)),
        (DRAW_SECRET_VERSION.into(), s(&state.draw_secret)),
        (SHARDS.into(), n(state.shards.count())),
        (LATE_DRAWN.into(), n(state.late_drawn)),
        (INVENTORY.into(), s(inventory_str(state.inventory))),
        (RESUMED_US.into(), n(state.resumed_us)),
        (ADMITTED.into(), n(state.admitted)),
        (WAITING.into(), n(state.waiting)),
        (
            CHECKPOINTS.into(),
            AttributeValue::B(encode_checkpoints(&state.checkpoints).into()),
        ),
    ]);
    if let Some(last) = state.last_admission_us {
        item.insert(LAST_ADMISSION_US.into(), n(last));
    }
    if let Some(rank) = state.last_drawn {
        item.insert(LAST_DRAWN.into(), s(format!("{:032x}", rank.0)));
    }
    if let Some(end) = state.ends_at {
        item.insert(ENDS_AT.into(), n(end.0));
    }
    item
}

/// The main item of `state`: the state, the admitter's counts and its
/// pending admissions.
fn main_item(event: &EventId, state: &QueueState) -> Item {
    let mut item = state_item(queue_key(&EventRef::of(event)), event, state);
    item.insert(
        JOIN_COUNTS.into(),
        AttributeValue::B(super::queue_counts::encode(&state.counts).into()),
    );
    if !state.pending.is_empty() {
        item.insert(
            PENDING.into(),
            AttributeValue::L(state.pending.iter().map(pending_value).collect()),
        );
    }
    item
}

/// A pending admission as the main item keeps it: `{v, r, s}`.
fn pending_value(p: &PendingAdmission) -> AttributeValue {
    AttributeValue::M(
        [
            (PENDING_VISITOR.to_owned(), s(p.visitor_id.as_str())),
            (PENDING_RANK.to_owned(), s(format!("{:032x}", p.rank.0))),
            (PENDING_SLOT.to_owned(), n(p.slot_us)),
        ]
        .into(),
    )
}

/// A rank as the queue's item writes it: 32 hex digits.
fn rank_of(hex: &str) -> Option<QueueRank> {
    u128::from_str_radix(hex, 16).ok().map(QueueRank)
}

fn parse_pending(item: &Item) -> Result<Vec<PendingAdmission>, StoreError> {
    let f = Fields::new(item);
    let Some(value) = item.get(PENDING) else {
        return Ok(Vec::new());
    };
    let AttributeValue::L(list) = value else {
        return Err(f.malformed(PENDING));
    };
    list.iter()
        .map(|entry| {
            let AttributeValue::M(map) = entry else {
                return Err(f.malformed(PENDING));
            };
            let e = Fields::new(map);
            Ok(PendingAdmission {
                visitor_id: e.id(PENDING_VISITOR, VisitorId::parse)?,
                rank: rank_of(e.str(PENDING_RANK)?).ok_or_else(|| f.malformed(PENDING))?,
                slot_us: e.i64(PENDING_SLOT)?,
            })
        })
        .collect()
}

/// A tombstone at `key`: the queue was removed at this generation and
/// version (a later put starts the next generation).
fn removed_item(key: Item, event: &EventId, generation: u64, version: i64) -> Item {
    let mut item = key;
    item.extend([
        (KIND.into(), s("queue")),
        (EVENT_ID.into(), s(event.as_str())),
        (GENERATION.into(), n(generation)),
        (VERSION.into(), n(version)),
        (REMOVED.into(), AttributeValue::Bool(true)),
    ]);
    item
}

/// The settings a queue was put with.
fn parse_settings(f: &Fields) -> Result<QueueSettings, StoreError> {
    let settings = QueueSettings::new(
        Millis(f.i64(OPENS_AT)?),
        f.u32(ADMIT_PER_MINUTE)?,
        Some(f.u32(ADMISSION_SECONDS)?),
        Some(f.u32(ORDERS_PER_ADMISSION)?),
    )
    .map_err(|_| f.malformed(ADMIT_PER_MINUTE))?;
    // A queue put before buyers existed is anonymous.
    let buyers = match f.opt_s(BUYERS) {
        Some(buyers) => Buyers::parse(buyers).ok_or_else(|| f.malformed(BUYERS))?,
        None => Buyers::Anonymous,
    };
    let draw_settle_ms = match f.opt_i64(DRAW_SETTLE_MS)? {
        Some(ms) => u32::try_from(ms)
            .ok()
            .filter(|ms| DRAW_SETTLE_MS_RANGE.contains(ms))
            .ok_or_else(|| f.malformed(DRAW_SETTLE_MS))?,
        None => DEFAULT_DRAW_SETTLE_MS,
    };
    Ok(settings
        .with_buyers(buyers)
        .with_draw_settle_ms(draw_settle_ms))
}

/// The generation's shard count: absent on a queue put before it was
/// stored, whose visitors were written on [`QueueShards::LEGACY`].
fn parse_shards(f: &Fields) -> Result<QueueShards, StoreError> {
    match f.opt_i64(SHARDS)? {
        Some(count) => u32::try_from(count)
            .ok()
            .and_then(QueueShards::new)
            .ok_or_else(|| f.malformed(SHARDS)),
        None => Ok(QueueShards::LEGACY),
    }
}

fn parse_stored(item: &Item) -> Result<StoredQueue, StoreError> {
    let f = Fields::new(item);
    let generation = u64::try_from(f.i64(GENERATION)?).map_err(|_| f.malformed(GENERATION))?;
    let version = f.i64(VERSION)?;
    if matches!(item.get(REMOVED), Some(AttributeValue::Bool(true))) {
        return Ok(StoredQueue {
            generation,
            version,
            state: None,
        });
    }
    let settings = parse_settings(&f)?;
    let inventory = match f.str(INVENTORY)? {
        "AVAILABLE" => Inventory::Available,
        "NONE_AVAILABLE" => Inventory::NoneAvailable,
        "ALL_SOLD" => Inventory::AllSold,
        "WAITLIST_ONLY" => Inventory::WaitlistOnly,
        _ => return Err(f.malformed(INVENTORY)),
    };
    let checkpoints = match item.get(CHECKPOINTS) {
        Some(AttributeValue::B(bytes)) => decode_checkpoints(bytes.as_ref()),
        _ => None,
    }
    .ok_or_else(|| f.malformed(CHECKPOINTS))?;
    let count = |attr| u64::try_from(f.i64(attr)?).map_err(|_| f.malformed(attr));
    let counts = match item.get(JOIN_COUNTS) {
        Some(AttributeValue::B(bytes)) => super::queue_counts::decode(bytes.as_ref()),
        Some(_) => None,
        None => Some(JoinCounts::default()),
    }
    .ok_or_else(|| f.malformed(JOIN_COUNTS))?;
    Ok(StoredQueue {
        generation,
        version,
        state: Some(QueueState {
            generation,
            settings,
            inventory,
            last_admission_us: f.opt_i64(LAST_ADMISSION_US)?,
            resumed_us: f.i64(RESUMED_US)?,
            admitted: count(ADMITTED)?,
            waiting: count(WAITING)?,
            checkpoints,
            counts,
            version,
            draw_secret: f.opt_s(DRAW_SECRET_VERSION).unwrap_or_default().to_owned(),
            shards: parse_shards(&f)?,
            pending: parse_pending(item)?,
            last_drawn: f
                .opt_s(LAST_DRAWN)
                .map(|hex| rank_of(hex).ok_or_else(|| f.malformed(LAST_DRAWN)))
                .transpose()?,
            late_drawn: f
                .opt_i64(LATE_DRAWN)?
                .map_or(0, |n| n.max(0).unsigned_abs()),
            ends_at: f.opt_i64(ENDS_AT)?.map(Millis),
        }),
    })
}

impl Store {
    /// The queue's item, strongly consistent: what put-queue, delete-queue
    /// and the admitter decide from.
    pub async fn read_queue(&self, event: &EventId) -> Result<Option<StoredQueue>, Error> {
        let item = self.get_consistent(queue_key(&EventRef::of(event))).await?;
        Ok(item.as_ref().map(parse_stored).transpose()?)
    }

    /// Picks the copy number of each queue's and each waitlist's state a
    /// new instance reads.
    pub fn pick_state_copy() -> u8 {
        crate::world::random_u128().map_or(0, |r| (r % u128::from(QUEUE_COPIES)) as u8)
    }

    /// The queue's state from copy `copy` (eventually consistent; an
    /// instance reuses it for [`QUEUE_CACHE_MS`]). No copy means no queue:
    /// put-queue writes every copy with the main item, in one transaction
    /// (a copy not yet visible a few milliseconds after a put reads as no
    /// queue until the next read, within the second the contract allows).
    pub async fn queue_copy(&self, event: &EventId, copy: u8) -> Result<Option<QueueState>, Error> {
        let key = queue_copy_key(&EventRef::of(event), copy);
        let stored = match self.get_item(key, false).await? {
            Some(item) => Some(parse_stored(&item)?),
            None => None,
        };
        Ok(stored.and_then(|q| q.state))
    }

    /// Writes `state` (put-queue) over the queue as read (`previous`: its
    /// version, or `None` if there was no item), on the main item and every
    /// copy in one transaction, and lists the event among those with a
    /// queue. `false` if another write came first (the caller reads again).
    pub async fn put_queue(
        &self,
        event: &EventId,
        state: &QueueState,
        previous: Option<i64>,
    ) -> Result<bool, Error> {
        let event_ref = EventRef::of(event);
        let mut items =
            vec![self.txn_put(main_item(event, state), items::queue::as_read(previous))?];
        for copy in 0..QUEUE_COPIES {
            items.push(self.txn_put(
                state_item(queue_copy_key(&event_ref, copy), event, state),
                items::queue::older_copy(state.version),
            )?);
        }
        items.push(self.txn_update(Registry::Queues.key(), list_event(event, true))?);
        self.state_txn(items).await
    }

    /// Removes the queue (delete-queue): a tombstone at the next version
    /// on the main item and every copy, and off the admitter's list.
    pub async fn remove_queue(&self, event: &EventId, stored: &StoredQueue) -> Result<bool, Error> {
        let event_ref = EventRef::of(event);
        let version = stored.version + 1;
        let mut items = vec![self.txn_put(
            removed_item(queue_key(&event_ref), event, stored.generation, version),
            items::queue::as_read(Some(stored.version)),
        )?];
        for copy in 0..QUEUE_COPIES {
            items.push(self.txn_put(
                removed_item(
                    queue_copy_key(&event_ref, copy),
                    event,
                    stored.generation,
                    version,
                ),
                items::queue::older_copy(version),
            )?);
        }
        items.push(self.txn_update(Registry::Queues.key(), list_event(event, false))?);
        self.state_txn(items).await
    }

    /// A state item's write with its copies (a queue's, a waitlist's):
    /// `false` if the main item's condition failed, someone wrote first. A
    /// copy's condition cannot fail while the main one holds (copies are
    /// never newer than the main item).
    pub(super) async fn state_txn(&self, items: Vec<TransactWriteItem>) -> Result<bool, Error> {
        match self.transact(items).await? {
            Txn::Committed => Ok(true),
            Txn::Cancelled(reasons) => match super::failures::state_write(&reasons) {
                Ok(()) => Ok(false),
                Err(e) => Err(e),
            },
        }
    }

    /// The admitter's write of a tick's `state` over the version it read:
    /// `None` if anyone wrote the queue since. Then the copies, each only
    /// if older: `Some(false)` if one was left behind (the admitter copies
    /// again at its next tick).
    pub async fn commit_queue_state(
        &self,
        event: &EventId,
        state: &QueueState,
        previous: i64,
    ) -> Result<Option<bool>, Error> {
        let put = self
            .client
            .put_item()
            .table_name(&*self.table)
            .set_item(Some(main_item(event, state)));
        match items::queue::as_read(Some(previous))
            .on_put_item(put)
            .send()
            .await
        {
            Ok(_) => {}
            Err(e) if super::errors::is_condition_failure(&e) => return Ok(None),
            Err(e) => return Err(sdk_error("PutItem", e).into()),
        }
        Ok(Some(self.copy_queue_state(event, state).await))
    }

    /// Writes `state` on every copy still older than it: whether every
    /// copy now has it (or a newer one).
    pub async fn copy_queue_state(&self, event: &EventId, state: &QueueState) -> bool {
        let event_ref = EventRef::of(event);
        let copies = (0..QUEUE_COPIES)
            .map(|copy| state_item(queue_copy_key(&event_ref, copy), event, state))
            .collect();
        self.put_copies(copies, state.version, "queue state").await
    }

    /// A joiner admitted on the spot: the queue's `after` state over the
    /// `before` it read, and the visitor's item, in one transaction.
    /// `false` if the queue changed since (the visitor then joins the
    /// queue as anyone else).
    pub(super) async fn admit_with(
        &self,
        event: &EventId,
        after: &QueueState,
        before_version: i64,
        visitor: Item,
    ) -> Result<bool, Error> {
        let items = vec![
            self.txn_update(
                queue_key(&EventRef::of(event)),
                items::queue::admitted_on_join(after, before_version),
            )?,
            self.txn_put(visitor, Expression::new_item())?,
        ];
        self.state_txn(items).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_round_trips_through_its_item() -> Result<(), Box<dyn std::error::Error>> {
        let event = EventId::parse("gala")?;
        let settings = QueueSettings::new(Millis(1_000), 60, Some(120), Some(2))?;
        let mut state = QueueState::new(3, settings);
        state.version = 7;
        state.last_admission_us = Some(5_000_000);
        state.checkpoints = Checkpoints(vec![(QueueRank(1), 0), (QueueRank(u128::MAX), 9)]);
        state.inventory = Inventory::NoneAvailable;
        state.waiting = 10;
        state.counts.record(2, [QueueRank(9)], 1_000);
        state.draw_secret = "0123456789abcdef".into();
        state.last_drawn = Some(QueueRank(u128::from(u64::MAX)));
        state.late_drawn = 2;
        state.shards = QueueShards::new(64).ok_or("64 shards")?;
        state.pending = vec![PendingAdmission {
            visitor_id: VisitorId::parse("v-1")?,
            rank: QueueRank(42),
            slot_us: 6_000_000,
        }];
        state.settings = state
            .settings
            .with_buyers(crate::domain::buyer::Buyers::Verified)
            .with_draw_settle_ms(750);
        let item = main_item(&event, &state);
        let stored = parse_stored(&item)?;
        assert_eq!((stored.generation, stored.version), (3, 7));
        assert_eq!(stored.state, Some(state));
        let gone = parse_stored(&removed_item(
            queue_key(&EventRef::of(&event)),
            &event,
            3,
            8,
        ));
        assert_eq!(gone?.state, None);
        assert!(decode_checkpoints(&[0; 23]).is_none());
        Ok(())
    }

    #[test]
    fn a_generations_shard_count_is_on_every_copy_and_legacy_when_absent(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let event = EventId::parse("gala")?;
        let settings = QueueSettings::new(Millis(1_000), 60, None, None)?;
        let state = QueueState::new(1, settings);
        assert_eq!(state.shards, QueueShards::DEFAULT);
        let copy = state_item(queue_copy_key(&EventRef::of(&event), 3), &event, &state);
        assert_eq!(copy.get(SHARDS), Some(&n(128)));
        assert_eq!(
            parse_stored(&copy)?.state.map(|s| s.shards),
            Some(QueueShards::DEFAULT)
        );
        // A queue put before the count was stored was written on 32.
        let mut legacy = main_item(&event, &state);
        legacy.remove(SHARDS);
        let parsed = parse_stored(&legacy)?.state.ok_or("a queue")?;
        assert_eq!(parsed.shards, QueueShards::LEGACY);
        for bad in [n(0), n(3), n(256), n(-32), s("128")] {
            let mut item = main_item(&event, &state);
            item.insert(SHARDS.into(), bad.clone());
            assert!(parse_stored(&item).is_err(), "{bad:?}");
        }
        Ok(())
    }

    #[test]
    fn every_inventory_is_read_back_as_written() -> Result<(), Box<dyn std::error::Error>> {
        let event = EventId::parse("gala")?;
        let settings = QueueSettings::new(Millis(1_000), 60, None, None)?;
        for inventory in [
            Inventory::Available,
            Inventory::NoneAvailable,
            Inventory::AllSold,
            Inventory::WaitlistOnly,
        ] {
            let state = QueueState {
                inventory,
                ..QueueState::new(1, settings)
            };
            let read = parse_stored(&main_item(&event, &state))?
                .state
                .ok_or("a queue")?;
            assert_eq!(read.inventory, inventory);
        }
        Ok(())
    }
}
