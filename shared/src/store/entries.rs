//! A waitlist's entries: a join (the entry, its buyer's record, its place
//! in the organiser's list and in each index it waits in, in one
//! transaction), the reads of an entry and of a buyer's record, an end
//! (the entry and its index places, in one transaction), a page of the
//! organiser's list, and the heads of the indexes an offer could fill.

use std::collections::HashMap;

use super::errors::sdk_error;
use super::failures::{state_write, ItemFailure};
use super::fan_out::in_order;
use super::items::entry::{
    end_waiting, entry_buyer_key, entry_key, entry_list_pk, entry_shard, index_keys, join_items,
    left_list, list_key, listed_after, named_entry, parse_entry, replaces_record, waiting_index_pk,
    ENTRY_SHARDS,
};
use super::items::positions::departure_item;
use super::schema::SK;
use super::value::Item;
use super::{Store, Txn};
use crate::domain::buyer::BuyerId;
use crate::domain::waitlist::EndReason;
use crate::domain::waitlist_entry::{Entry, IndexShard, WaitingIndex};
use crate::domain::{EntryId, EventId, EventRef, Millis};
use crate::error::Error;
use crate::store::expression::Expression;
use aws_sdk_dynamodb::types::TransactWriteItem;

/// How many index shards an offer's look reads at once.
const HEADS_IN_FLIGHT: usize = 16;

/// The earliest place of one index's shard: the entry, and the join key
/// that orders it among the heads.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct IndexHead {
    pub join_key: String,
    pub entry: EntryId,
}

/// One page of the organiser's list: its entries in join order, and the
/// join key after which the next page starts (`None`: none is left).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryPage {
    pub entries: Vec<Entry>,
    pub next: Option<String>,
}

/// How many of each list shard's latest joins the tick's check reads: a
/// join that commits late lands among them unless this many joined after
/// it in its shard (and then the check sees those).
const NEWEST_JOINS: i32 = 32;

impl Store {
    /// The entry the buyer's record names in `generation`, read strongly
    /// consistently (`None`: the buyer has not joined it).
    pub async fn buyer_entry(
        &self,
        event: &EventId,
        generation: u64,
        buyer: &BuyerId,
    ) -> Result<Option<EntryId>, Error> {
        let item = self
            .get_consistent(entry_buyer_key(event, generation, buyer))
            .await?;
        Ok(item.as_ref().map(named_entry).transpose()?)
    }

    /// An entry: eventually consistent, and strongly consistent when that
    /// finds nothing (a join a moment ago) or `consistent` asks for it.
    pub async fn read_entry(
        &self,
        event: &EventId,
        entry: &EntryId,
        consistent: bool,
    ) -> Result<Option<Entry>, Error> {
        let key = entry_key(&EventRef::of(event), entry);
        let item = self.get_settled(key, consistent).await?;
        Ok(item.as_ref().map(parse_entry).transpose()?)
    }

    /// The entries `ids` names, strongly consistent, in `ids`' order (one
    /// not found is left out): an offer's look at its heads.
    pub async fn read_entries(
        &self,
        event: &EventId,
        ids: &[EntryId],
    ) -> Result<Vec<Entry>, Error> {
        let event_ref = EventRef::of(event);
        let keys = ids.iter().map(|id| entry_key(&event_ref, id)).collect();
        let mut by_id: HashMap<EntryId, Entry> = HashMap::new();
        for item in self.batch_get(keys, true).await? {
            let entry = parse_entry(&item)?;
            by_id.insert(entry.entry_id.clone(), entry);
        }
        Ok(ids.iter().filter_map(|id| by_id.remove(id)).collect())
    }

    /// A new entry, its buyer's record (only over the ended entry
    /// `replacing`, or none), its place in the organiser's list and in
    /// each index it waits in, in one transaction: `false` if the buyer's
    /// record changed since it was read (another join came first).
    pub async fn join_waitlist(
        &self,
        event: &EventId,
        entry: &Entry,
        replacing: Option<&EntryId>,
    ) -> Result<bool, Error> {
        let joined = join_items(event, entry);
        let mut items = vec![self.txn_put(joined.buyer, replaces_record(replacing))?];
        for item in joined.new {
            items.push(self.txn_put(item, Expression::new_item())?);
        }
        match self.transact(items).await? {
            Txn::Committed => Ok(true),
            Txn::Cancelled(reasons) => {
                state_write(&reasons)?;
                match reasons.first() {
                    Some(Some(ItemFailure::Condition(_) | ItemFailure::Conflict)) => Ok(false),
                    // A fresh id that was taken: ours are 128 random bits.
                    _ => Err(Error::Corrupt("a fresh entry id was taken".into())),
                }
            }
        }
    }

    /// Ends a waiting entry for `reason` at `at` and all that leaving
    /// WAITING writes ([`Store::leaving_waiting`]), in one transaction:
    /// `false` if it was no longer waiting.
    pub async fn end_entry(
        &self,
        event: &EventId,
        entry: &Entry,
        reason: EndReason,
        at: Millis,
    ) -> Result<bool, Error> {
        let event_ref = EventRef::of(event);
        let mut items = vec![self.txn_update(
            entry_key(&event_ref, &entry.entry_id),
            end_waiting(reason, at),
        )?];
        items.extend(self.leaving_waiting(&event_ref, entry, at, None)?);
        self.state_txn(items).await
    }

    /// What every move of `entry` out of WAITING at `at` writes besides
    /// the entry, in its transaction: its places in the indexes it waited
    /// in deleted, and the positions' inputs (its departure put, naming the
    /// expiry of an offer that `offer_expires`, and its list place marked).
    /// One place, so no way out forgets one.
    pub(super) fn leaving_waiting(
        &self,
        event: &EventRef,
        entry: &Entry,
        at: Millis,
        offer_expires: Option<Millis>,
    ) -> Result<Vec<TransactWriteItem>, Error> {
        let departure = departure_item(event, entry, at, offer_expires);
        let mut items = vec![
            self.txn_put(departure, Expression::new_item())?,
            self.txn_update(list_key(event, entry), left_list(at))?,
        ];
        for key in index_keys(event, entry) {
            items.push(self.txn_delete(key)?);
        }
        Ok(items)
    }

    /// Up to `limit` entries of `generation` in join order, from after
    /// join key `after`: each shard of the list read from there, merged,
    /// and the entries read strongly consistently (each is written with
    /// its list place, so every place listed has its entry).
    pub async fn entry_page(
        &self,
        event: &EventId,
        generation: u64,
        after: Option<&str>,
        limit: usize,
    ) -> Result<EntryPage, Error> {
        let event_ref = EventRef::of(event);
        // One more than a page from each shard: the first `limit` of the
        // merge are the page, and one past them says there is more (a
        // shard's own "more" would say so on a page that ends it exactly).
        let mut keyed: Vec<(String, EntryId)> = Vec::new();
        for shard in 0..ENTRY_SHARDS {
            let pk = entry_list_pk(&event_ref, generation, shard);
            keyed.extend(self.list_shard(pk, after, limit + 1).await?);
        }
        keyed.sort();
        let more = keyed.len() > limit;
        keyed.truncate(limit);
        let keys = keyed
            .iter()
            .map(|(_, id)| entry_key(&event_ref, id))
            .collect();
        let mut by_id: HashMap<EntryId, Entry> = HashMap::new();
        for item in self.batch_get(keys, true).await? {
            let entry = parse_entry(&item)?;
            by_id.insert(entry.entry_id.clone(), entry);
        }
        let next = more
            .then(|| keyed.last().map(|(key, _)| key.clone()))
            .flatten();
        let entries = keyed
            .into_iter()
            .map(|(_, id)| {
                by_id
                    .remove(&id)
                    .ok_or_else(|| Error::Corrupt(format!("a listed entry {id} is not there")))
            })
            .collect::<Result<_, _>>()?;
        Ok(EntryPage { entries, next })
    }

    /// The heads of `indexes` of `generation`: each shard's `depth`
    /// earliest places, read strongly consistently (a place is written in
    /// its join's transaction, so every join answered before shows),
    /// earliest first, each entry once (an entry waits in an index per
    /// section it names). One Query of `depth` items per index and shard,
    /// whatever the line's length; an index with no one waiting has no
    /// head.
    pub async fn waiting_heads(
        &self,
        event: &EventId,
        generation: u64,
        indexes: &[WaitingIndex],
        depth: u32,
    ) -> Result<Vec<IndexHead>, Error> {
        let reads = index_shards(indexes)
            .into_iter()
            .map(|s| (s, None))
            .collect();
        let read = self.shard_heads(event, generation, reads, depth).await?;
        let mut heads: Vec<IndexHead> = read.into_iter().flat_map(|(_, heads)| heads).collect();
        heads.sort();
        heads.dedup_by(|later, first| later.entry == first.entry);
        Ok(heads)
    }

    /// Each of `reads`' index shard's `depth` earliest places after a join
    /// key (`None`: from its start), read strongly consistently (a place
    /// is written in its join's transaction): one Query of `depth` items
    /// a shard, whatever the line's length.
    pub async fn shard_heads(
        &self,
        event: &EventId,
        generation: u64,
        reads: Vec<(IndexShard, Option<String>)>,
        depth: u32,
    ) -> Result<Vec<(IndexShard, Vec<IndexHead>)>, Error> {
        let depth = usize::try_from(depth.max(1)).unwrap_or(1);
        let event_ref = EventRef::of(event);
        let queries = reads
            .iter()
            .map(|(s, after)| {
                let pk = waiting_index_pk(&event_ref, generation, &s.index, s.shard);
                self.list_shard(pk, after.as_deref(), depth)
            })
            .collect();
        let mut heads = Vec::with_capacity(reads.len());
        for ((shard, _), read) in reads.iter().zip(in_order(HEADS_IN_FLIGHT, queries).await) {
            let places = read?.into_iter();
            let places = places.map(|(join_key, entry)| IndexHead { join_key, entry });
            heads.push((shard.clone(), places.collect()));
        }
        Ok(heads)
    }

    /// The latest [`NEWEST_JOINS`] join keys of each shard of the
    /// generation's list, newest first, the shards read at once: the
    /// offerer compares them with an earlier reading to learn that someone
    /// joined, a join whose write committed after a later-stamped one's
    /// included, at about one read unit a shard. The tick's check reads
    /// them eventually consistent (a join shows within a second or so); a
    /// look, `consistent` (a join answered shows).
    pub async fn newest_joins(
        &self,
        event: &EventId,
        generation: u64,
        consistent: bool,
    ) -> Result<Vec<Vec<String>>, Error> {
        let event_ref = EventRef::of(event);
        let reads = (0..ENTRY_SHARDS).map(|shard| {
            let query = self
                .client
                .query()
                .table_name(&*self.table)
                .consistent_read(consistent)
                .scan_index_forward(false)
                .limit(NEWEST_JOINS);
            let pk = entry_list_pk(&event_ref, generation, shard);
            async move {
                let page = listed_after(pk, None)
                    .on_query(query)
                    .send()
                    .await
                    .map_err(|e| sdk_error("Query", e))?;
                let keys = page.items().iter().map(join_key_of);
                Ok::<_, Error>(keys.collect::<Result<Vec<_>, _>>()?)
            }
        });
        let reads = in_order(usize::from(ENTRY_SHARDS), reads.collect()).await;
        reads.into_iter().collect()
    }

    /// Up to `limit` places of one shard of the list or of an index after
    /// `after`, strongly consistent (a join answered shows).
    async fn list_shard(
        &self,
        pk: String,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<(String, EntryId)>, Error> {
        let query = self
            .client
            .query()
            .table_name(&*self.table)
            .consistent_read(true)
            .limit(i32::try_from(limit).unwrap_or(i32::MAX));
        let page = listed_after(pk, after)
            .on_query(query)
            .send()
            .await
            .map_err(|e| sdk_error("Query", e))?;
        let found = page
            .items()
            .iter()
            .map(|item| Ok((join_key_of(item)?, named_entry(item)?)))
            .collect::<Result<Vec<_>, super::StoreError>>()?;
        Ok(found)
    }
}

/// Every shard of `indexes`.
pub fn index_shards(indexes: &[WaitingIndex]) -> Vec<IndexShard> {
    let mut shards = Vec::with_capacity(indexes.len() * usize::from(ENTRY_SHARDS));
    for index in indexes {
        shards.extend((0..ENTRY_SHARDS).map(|shard| IndexShard {
            index: index.clone(),
            shard,
        }));
    }
    shards
}

/// The index shards `entry` has its places in, while it waits.
pub fn entry_index_shards(entry: &Entry) -> Vec<IndexShard> {
    let shard = entry_shard(&entry.entry_id);
    let indexes = crate::domain::waitlist_entry::entry_indexes(&entry.request);
    let at = |index| IndexShard { index, shard };
    indexes.into_iter().map(at).collect()
}

/// A list place's join key (its sort key).
fn join_key_of(item: &Item) -> Result<String, super::StoreError> {
    super::value::Fields::new(item).str(SK).map(str::to_owned)
}
