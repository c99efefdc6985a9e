//! The line's heads as one look has read them (API.md, "Offers"): each
//! index shard's earliest places, and their entries, read where the
//! instance's memory of the line (`memory::lines`) has none, and again
//! only where they moved (an offer made to one of them, or one found no
//! longer waiting). A look's offers cost a read of the shards their entry
//! waited in, not of every index the free units could fill, whatever the
//! number of indexes and the line's length; the look gives back what it
//! read for the next.
//!
//! A shard is read [`DEPTH`] places at a time: a Query of a few small
//! places costs a read unit like a Query of one, and a look's next offer
//! from that shard then needs no read. An entry's place is read when the
//! look comes to it, with the next unread ones, a BatchGetItem's worth.
//! An offer made takes its entry's places off what the look read; a lost
//! one, or an entry found no longer waiting, has its shards read again.
//! Where the last place read of a shard is passed over (its entry cannot
//! take what is free: its own listings are as good as taken for it), the
//! shard is read further, at most [`MOST_PASSED`] times a look: the entry
//! behind it may be the earliest the free units fill.

use std::collections::HashMap;

use crate::domain::offer_tick::joined_since;
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

/// Places read of a shard at a time: eight places of about a hundred
/// bytes are one read unit, as one is.
const DEPTH: u32 = 8;

/// A head, earliest first: its entry and the shards it is the last read
/// place of, where more may wait behind it.
pub(super) struct Head {
    pub entry: EntryId,
    pub ends: Vec<IndexShard>,
}

/// The list's newest joins of waitlist `generation`, read strongly
/// consistent before a look's reads (the tick's, when it knew a look was
/// due): the look need not read them again.
pub(super) struct NewestJoins {
    pub generation: u64,
    pub ends: Vec<Vec<String>>,
}

/// What one look has read of the line of waitlist `generation`.
pub(super) struct Heads {
    generation: u64,
    line: LineRead,
    passed: u32,
}

impl Heads {
    /// The line of `event`'s `generation` as this instance remembers it,
    /// its shards read empty kept only if nobody joined since: the list's
    /// newest joins are read first (strongly consistent; `read`, if the
    /// caller read them for this generation), and the shards this look
    /// reads empty are kept with them.
    pub async fn recalled(
        app: &App,
        event: &EventId,
        generation: u64,
        read: Option<NewestJoins>,
    ) -> Result<Self, Error> {
        let mut line = app.memory.recall_line(event, generation);
        let ends = match read.filter(|r| r.generation == generation) {
            Some(read) => read.ends,
            None => app.store.newest_joins(event, generation, true).await?,
        };
        let joined = (line.ends.as_deref()).is_none_or(|seen| joined_since(Some(seen), &ends));
        if joined {
            line.shards.retain(|_, s| !s.places.is_empty());
        }
        line.ends = Some(ends);
        Ok(Heads {
            generation,
            line,
            passed: 0,
        })
    }

    /// What this look read, kept for the instance's next look from `now`.
    pub fn remember(self, app: &App, event: &EventId, now: Millis) {
        app.memory
            .remember_line(event, self.generation, now, self.line);
    }

    /// The heads of `indexes`, earliest first, each entry once: the
    /// shards not read yet this look read now (their entries are read as
    /// the look comes to them, [`Heads::entry`]).
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
        Ok(earliest)
    }

    /// The entry of `heads[at]`, read with the next unread ones if this
    /// look has not read it (`None`: it is gone, as after a waitlist's
    /// delete, or `at` is past the heads).
    pub async fn entry(
        &mut self,
        app: &App,
        event: &EventId,
        heads: &[Head],
        at: usize,
    ) -> Result<Option<&Entry>, Error> {
        let Some(head) = heads.get(at) else {
            return Ok(None);
        };
        if !self.line.entries.contains_key(&head.entry) {
            let unread = heads[at..].iter().map(|h| &h.entry);
            let unread: Vec<EntryId> = unread
                .filter(|id| !self.line.entries.contains_key(*id))
                .take(ENTRIES_PER_READ)
                .cloned()
                .collect();
            for entry in app.store.read_entries(event, &unread).await? {
                self.line.entries.insert(entry.entry_id.clone(), entry);
            }
        }
        Ok(self.line.entries.get(&head.entry))
    }

    /// Whether this look has read past as many passed-over entries as it
    /// may: an entry behind one more waits for the next look.
    pub fn out_of_passes(&self) -> bool {
        self.passed >= MOST_PASSED
    }

    /// `shard` read past what this look read of it, if the look may still
    /// read past a passed-over entry: whether it did.
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

    /// `entry` left the line by this look's write (offered, or ended at
    /// its buyer's limit): its places are taken off what was read, and a
    /// shard left with none read is read again when next wanted.
    pub fn left(&mut self, entry: &Entry) {
        for shard in entry_index_shards(entry) {
            let Some(read) = self.line.shards.get_mut(&shard) else {
                continue;
            };
            read.places.retain(|place| place.entry != entry.entry_id);
            if read.places.is_empty() && read.more {
                self.line.shards.remove(&shard);
            }
        }
        self.line.entries.remove(&entry.entry_id);
    }

    /// `entry` may have moved another way (an offer to it lost, or it was
    /// found no longer waiting): the shards it waited in are read again
    /// when next wanted, and it with them.
    pub fn forget(&mut self, entry: &Entry) {
        for shard in entry_index_shards(entry) {
            self.line.shards.remove(&shard);
        }
        self.line.entries.remove(&entry.entry_id);
    }

    /// `reads` made, [`DEPTH`] places of each, appended to what was read
    /// of each shard.
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
        let depth = usize::try_from(DEPTH).unwrap_or(usize::MAX);
        for (shard, places) in store
            .shard_heads(event, self.generation, reads, DEPTH)
            .await?
        {
            let read = self.line.shards.entry(shard).or_insert(ShardRead {
                places: Vec::new(),
                more: true,
            });
            read.more = places.len() >= depth;
            read.places.extend(places);
        }
        Ok(())
    }
}

/// Whether `entry` still waits, as read.
pub(super) fn waiting(entry: &Entry) -> bool {
    entry.stored == EntryStatus::Waiting
}
