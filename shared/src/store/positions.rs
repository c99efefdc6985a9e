//! A waitlist's positions: what the offerer's tick reads to keep them (the
//! joins and departures stamped since they were settled, from each shard
//! of the list and of the departures), its write of them over the version
//! it read, then the copies, and a reader's read of a copy.

use super::errors::{is_condition_failure, sdk_error};
use super::fan_out::in_order;
use super::items::entry::{entry_list_pk, ENTRY_SHARDS};
use super::items::positions::{
    as_read, departure_pk, older_copy, parse_departure, parse_positions, positions_item,
    positions_key, stamp_of, stamped_from,
};
use super::items::queue::QUEUE_COPIES;
use super::Store;
use crate::domain::waitlist_positions::{Positions, Since};
use crate::domain::{EventId, EventRef, Millis};
use crate::error::Error;

/// A log's partitions read at once: each shard of the list and of the
/// departures.
const LOG_READS_IN_FLIGHT: usize = 8;

/// The positions as read, and the version they were written at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredPositions {
    pub positions: Positions,
    pub version: i64,
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

    /// Every join and departure of the generation stamped at or after
    /// `from`, from each shard of the list and of the departures, every
    /// page (eventually consistent: what is read here is read again at the
    /// next update until it has settled, long after it is replicated).
    pub async fn stamped_since(
        &self,
        event: &EventId,
        generation: u64,
        from: Millis,
    ) -> Result<Since, Error> {
        let event_ref = EventRef::of(event);
        let lists = (0..ENTRY_SHARDS).map(|shard| entry_list_pk(&event_ref, generation, shard));
        let departures = (0..ENTRY_SHARDS).map(|shard| departure_pk(&event_ref, generation, shard));
        let reads = lists
            .chain(departures)
            .map(|pk| self.query_every_page(stamped_from(pk, from), false))
            .collect();
        let mut since = Since::default();
        for (i, read) in in_order(LOG_READS_IN_FLIGHT, reads)
            .await
            .into_iter()
            .enumerate()
        {
            let items = read?;
            if i < usize::from(ENTRY_SHARDS) {
                let joins: Result<Vec<_>, _> = items.iter().map(stamp_of).collect();
                since.joins.extend(joins?);
            } else {
                let departures: Result<Vec<_>, _> = items.iter().map(parse_departure).collect();
                since.departures.extend(departures?);
            }
        }
        Ok(since)
    }

    /// The tick's write of `positions` over the version it read
    /// (`previous`; `None`: none yet): `false` if another tick wrote them
    /// first. Then every copy still older (one left behind is written again
    /// at the next update).
    pub async fn write_positions(
        &self,
        event: &EventId,
        generation: u64,
        positions: &Positions,
        previous: Option<i64>,
    ) -> Result<bool, Error> {
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
            Err(e) if is_condition_failure(&e) => return Ok(false),
            Err(e) => return Err(sdk_error("PutItem", e).into()),
        }
        let copies = (0..QUEUE_COPIES).map(|copy| {
            let key = positions_key(&event_ref, generation, Some(copy));
            let put = self
                .client
                .put_item()
                .table_name(&*self.table)
                .set_item(Some(positions_item(key, positions, version)));
            older_copy(version).on_put_item(put).send()
        });
        for result in futures_util::future::join_all(copies).await {
            if let Err(e) = result {
                if !is_condition_failure(&e) {
                    tracing::warn!(error = %crate::error::chain(&e), "a copy of a waitlist's positions was not updated");
                }
            }
        }
        Ok(true)
    }
}
