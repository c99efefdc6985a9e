//! The line's heads as one look has read them (API.md, "Offers"): each
//! index shard's earliest places, and their entries, read where the
//! instance's memory of the line (`memory::lines`) has none, and again
//! only where they moved (an offer made to one of them, or one found no
//! longer waiting). A look's offers cost a read of the shards their entry
//! waited in, not of every index the free units could fill, whatever the
//! number of indexes and the line's length; the look gives back what it
//! read for the next.
//!
//! A shard is read one place deep. Where the earliest entry is passed
//! over (it cannot take what is free: its own listings are as good as
//! taken for it), the shard it heads is read one place further, at most
//! [`MOST_PASSED`] times a look: the entry behind it may be the earliest
//! the free units fill.

use std::collections::HashMap;

use crate::domain::waitlist::EntryStatus;
use crate::domain::waitlist_entry::{Entry, IndexShard, WaitingIndex};
use crate::domain::{EntryId, EventId, Millis};
use crate::error::Error;
use crate::memory::{LineRead, ShardRead};
use crate::store::{entry_index_shards, index_shards, IndexHead};
use crate::App;

/// The most reads past a passed-over entry one look makes: beyond them,
/// an entry behind more sellers waiting for their own listings' seats
/// waits for the next look.
const MOST_PASSED: u32 = 16;

/// How many heads' entries one read takes (a BatchGetItem's most).
const ENTRIES_PER_READ: usize = 100;

/// A head, earliest first: its entry and the shards it is the last read
/// place of, where more may wait behind it.
pub(super) struct Head {
    pub entry: EntryId,
    pub ends: Vec<IndexShard>,
}

/// What one look has read of the line of waitlist `generation`.
pub(super) struct Heads {
    generation: u64,
    line: LineRead,
    passed: u32,
}

impl Heads {
    /// The line of `event`'s `generation` as this instance remembers it.
    pub fn recalled(app: &App, event: &EventId, generation: u64) -> Self {
        Heads {
            generation,
            line: app.memory.recall_line(event, generation),
            passed: 0,
        }
    }

    /// What this look read, kept for the instance's next look from `now`.
    pub fn remember(self, app: &App, event: &EventId, now: Millis) {
        app.memory
            .remember_line(event, self.generation, now, self.line);
    }

    /// The heads of `indexes`, earliest first, each entry once: the
    /// shards not read yet this look read now, and the entries not read
    /// yet with them.
    pub async fn earliest(
        &mut self,
        app: &App,
        event: &EventId,
        indexes: &[WaitingIndex],
    ) -> Result<Vec<Head>, Error> {
        let wanted = index_shards(indexes);
        let unread: Vec<(IndexShard, Option<String>)> = wanted
            .iter()
            .filter(|s| !self.line.shards.contains_key(s))
            .map(|s| (s.clone(), None))
            .collect();
        self.read(app, event, unread).await?;
        let mut heads: Vec<(&IndexHead, &IndexShard, bool)> = Vec::new();
        for shard in &wanted {
            let Some(read) = self.line.shards.get(shard) else {
                continue;
            };
            let last = read.places.len().saturating_sub(1);
            for (i, place) in read.places.iter().enumerate() {
                heads.push((place, shard, read.more && i == last));
            }
        }
        heads.sort_by(|a, b| a.0.cmp(b.0));
        // Each entry once, at its earliest place (an entry waits in an
        // index per section it names): hundreds of heads, every round.
        let mut earliest: Vec<Head> = Vec::new();
        let mut at: HashMap<&EntryId, usize> = HashMap::new();
        for (place, shard, ends) in heads {
            let ends = ends.then(|| shard.clone());
            match at.get(&place.entry) {
                Some(&i) => earliest[i].ends.extend(ends),
                None => {
                    at.insert(&place.entry, earliest.len());
                    earliest.push(Head {
                        entry: place.entry.clone(),
                        ends: ends.into_iter().collect(),
                    });
                }
            }
        }
        let unknown: Vec<EntryId> = earliest
            .iter()
            .map(|h| h.entry.clone())
            .filter(|id| !self.line.entries.contains_key(id))
            .collect();
        for batch in unknown.chunks(ENTRIES_PER_READ) {
            for entry in app.store.read_entries(event, batch).await? {
                self.line.entries.insert(entry.entry_id.clone(), entry);
            }
        }
        Ok(earliest)
    }

    /// The entry of `head`, as read (`None`: it is gone, as after a
    /// waitlist's delete).
    pub fn entry(&self, head: &Head) -> Option<&Entry> {
        self.line.entries.get(&head.entry)
    }

    /// Whether this look has read past as many passed-over entries as it
    /// may: an entry behind one more waits for the next look.
    pub fn out_of_passes(&self) -> bool {
        self.passed >= MOST_PASSED
    }

    /// `shard` read one place past what this look read of it, if the look
    /// may still read past a passed-over entry: whether it did.
    pub async fn read_past(
        &mut self,
        app: &App,
        event: &EventId,
        shard: &IndexShard,
    ) -> Result<bool, Error> {
        if self.out_of_passes() {
            return Ok(false);
        }
        self.passed += 1;
        let after = self
            .line
            .shards
            .get(shard)
            .and_then(|read| read.places.last())
            .map(|place| place.join_key.clone());
        self.read(app, event, vec![(shard.clone(), after)]).await?;
        Ok(true)
    }

    /// `entry` moved (offered, or found no longer waiting): the shards it
    /// waited in are read again when next wanted, and it with them.
    pub fn forget(&mut self, entry: &Entry) {
        for shard in entry_index_shards(entry) {
            self.line.shards.remove(&shard);
        }
        self.line.entries.remove(&entry.entry_id);
    }

    /// `reads` made, one place of each, appended to what was read of
    /// each shard.
    async fn read(
        &mut self,
        app: &App,
        event: &EventId,
        reads: Vec<(IndexShard, Option<String>)>,
    ) -> Result<(), Error> {
        if reads.is_empty() {
            return Ok(());
        }
        let store = &app.store;
        for (shard, places) in store.shard_heads(event, self.generation, reads, 1).await? {
            let read = self.line.shards.entry(shard).or_insert(ShardRead {
                places: Vec::new(),
                more: true,
            });
            read.more = !places.is_empty();
            read.places.extend(places);
        }
        Ok(())
    }
}

/// Whether `entry` still waits, as read.
pub(super) fn waiting(entry: &Entry) -> bool {
    entry.stored == EntryStatus::Waiting
}
