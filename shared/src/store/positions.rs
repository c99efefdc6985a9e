//! A waitlist's positions: what the offerer's tick reads to keep them (the
//! joins and departures stamped since they were settled, from each shard
//! of the list and of the departures; a span of the list counted again),
//! its write of them over the version it read, then the copies, and a
//! reader's read of a copy.

use std::collections::BTreeMap;

use super::errors::{is_condition_failure, sdk_error};
use super::fan_out::in_order;
use super::items::entry::{entry_list_pk, ENTRY_SHARDS, LEFT_AT};
use super::items::positions::{
    as_read, departure_pk, offer_end_pk, parse_departure, parse_offer_end, parse_positions,
    positions_item, positions_key, stamp_of, stamped_from, stamped_within,
};
use super::items::queue::QUEUE_COPIES;
use super::value::{Fields, Item};
use super::Store;
use crate::domain::waitlist_positions::{settled_count, Positions, Since};
use crate::domain::{EventId, EventRef, Millis};
use crate::error::Error;

/// The positions as read, and the version they were written at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredPositions {
    pub positions: Positions,
    pub version: i64,
}

/// How the tick's write of the positions went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PositionsWrite {
    /// Another tick wrote them first: nothing written.
    Lost,
    /// Written; `copies`: every copy has them now (else the writer copies
    /// again at its next update).
    Written { copies: bool },
}

impl Store {
    /// The positions of `event`'s generation `generation`: the main item,
    /// strongly consistent (`copy: None`, the tick's read before its
    /// write), or copy `copy`, eventually consistent (a reader's). `None`:
    /// none kept yet.
    pub async fn read_positions(
        &self,
        event: &EventId,
        generation: u64,
        copy: Option<u8>,
    ) -> Result<Option<StoredPositions>, Error> {
        let key = positions_key(&EventRef::of(event), generation, copy);
        let item = self.get_item(key, copy.is_none()).await?;
        let read = item.as_ref().map(parse_positions).transpose()?;
        Ok(read.map(|(positions, version)| StoredPositions { positions, version }))
    }

    /// Every join, departure and offer's end of the generation stamped at
    /// or after `from`, from each shard of the list, the departures and the
    /// ends, every page (eventually consistent: what is read here is read again at the
    /// next update until it has settled, long after it is replicated).
    pub async fn stamped_since(
        &self,
        event: &EventId,
        generation: u64,
        from: Millis,
    ) -> Result<Since, Error> {
        let event_ref = EventRef::of(event);
        let shards = || 0..ENTRY_SHARDS;
        let joins = shards()
            .map(|shard| entry_list_pk(&event_ref, generation, shard))
            .map(|pk| self.query_every_page(stamped_from(pk, from), false, stamp_of))
            .collect();
        let departures = shards()
            .map(|shard| departure_pk(&event_ref, generation, shard))
            .map(|pk| self.query_every_page(stamped_from(pk, from), false, parse_departure))
            .collect();
        let ends = shards()
            .map(|shard| offer_end_pk(&event_ref, generation, shard))
            .map(|pk| self.query_every_page(stamped_from(pk, from), false, parse_offer_end))
            .collect();
        let shards_at_once = usize::from(ENTRY_SHARDS);
        let (joins, departures, ends) = futures_util::future::join3(
            in_order(shards_at_once, joins),
            in_order(shards_at_once, departures),
            in_order(shards_at_once, ends),
        )
        .await;
        let mut since = Since::default();
        for read in joins {
            since.joins.extend(read?);
        }
        for read in departures {
            since.departures.extend(read?);
        }
        for read in ends {
            since.ends.extend(read?);
        }
        Ok(since)
    }

    /// The generation's entries that joined within the seconds
    /// `first..=last`, by join second, counted as the positions' `settled`
    /// counts them as of `as_of` (`domain::waitlist_positions::
    /// settled_count`: a list place is marked when its entry leaves),
    /// strongly consistent: a merged bucket of the positions counted again.
    pub async fn waiting_by_second(
        &self,
        event: &EventId,
        generation: u64,
        (first, last): (i64, i64),
        as_of: Millis,
    ) -> Result<BTreeMap<i64, i64>, Error> {
        let event_ref = EventRef::of(event);
        let settled = |item: &Item| {
            let left = Fields::new(item).opt_i64(LEFT_AT)?.map(Millis);
            let joined = stamp_of(item)?;
            Ok((joined, settled_count(joined, left, as_of)))
        };
        let reads = (0..ENTRY_SHARDS)
            .map(|shard| entry_list_pk(&event_ref, generation, shard))
            .map(|pk| self.query_every_page(stamped_within(pk, first, last), true, settled))
            .collect();
        let mut seconds = BTreeMap::new();
        for read in in_order(usize::from(ENTRY_SHARDS), reads).await {
            for (joined, count) in read? {
                *seconds.entry(joined.0.div_euclid(1_000)).or_insert(0) += count;
            }
        }
        seconds.retain(|_, count| *count != 0);
        Ok(seconds)
    }

    /// The tick's write of `positions` over the version it read
    /// (`previous`; `None`: none yet), then every copy still older.
    pub async fn write_positions(
        &self,
        event: &EventId,
        generation: u64,
        positions: &Positions,
        previous: Option<i64>,
    ) -> Result<PositionsWrite, Error> {
        let event_ref = EventRef::of(event);
        let version = previous.map_or(1, |v| v + 1);
        let main = positions_item(
            positions_key(&event_ref, generation, None),
            positions,
            version,
        );
        let put = self
            .client
            .put_item()
            .table_name(&*self.table)
            .set_item(Some(main));
        match as_read(previous).on_put_item(put).send().await {
            Ok(_) => {}
            Err(e) if is_condition_failure(&e) => return Ok(PositionsWrite::Lost),
            Err(e) => return Err(sdk_error("PutItem", e).into()),
        }
        let copies = self
            .copy_positions(event, generation, positions, version)
            .await;
        Ok(PositionsWrite::Written { copies })
    }

    /// Writes `positions` (at `version`) on every copy still older: whether
    /// every copy has them now.
    pub async fn copy_positions(
        &self,
        event: &EventId,
        generation: u64,
        positions: &Positions,
        version: i64,
    ) -> bool {
        let event_ref = EventRef::of(event);
        let copies = (0..QUEUE_COPIES)
            .map(|copy| {
                let key = positions_key(&event_ref, generation, Some(copy));
                positions_item(key, positions, version)
            })
            .collect();
        self.put_copies(copies, version, "waitlist positions").await
    }
}
