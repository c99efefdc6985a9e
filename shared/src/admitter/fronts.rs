//! The front of each shard of a queue, read from the `QueueByRank` index
//! and kept between ticks, and the head they make together: every waiting
//! visitor ranked before the first rank some shard has not read, in queue
//! order. Each front holds at most a page, so the admitter's memory
//! follows the pace, never the queue's length.

use std::collections::{BTreeMap, HashMap};

use futures_util::future::join_all;

use super::SETTLE_MS;
use crate::domain::queue::{first_rank_joined_at, joined_at_of, QueueRank, QueueSettings};
use crate::domain::queue_counts::JoinCounts;
use crate::domain::queue_shards::QueueShards;
use crate::domain::queue_state::{Head, QueueState, WaitingVisitor, CATCH_UP_US};
use crate::domain::{EventId, Millis};
use crate::error::Error;
use crate::store::IndexedVisitor;
use crate::App;

/// A front is never kept shorter than this: at a slow pace a page of
/// twice this (a few KB) covers many seconds of admissions.
const MIN_FRONT: usize = 16;

/// The front of one shard of the queue, as read from the rank index.
#[derive(Debug, Default)]
pub(super) struct ShardFront {
    pub(super) waiting: BTreeMap<QueueRank, IndexedVisitor>,
    /// The last rank read, and whether the index had more past it (or
    /// the front let some go).
    read_to: Option<QueueRank>,
    more: bool,
}

/// Every shard's front, none read yet.
pub(super) fn empty_fronts(shards: QueueShards) -> Vec<ShardFront> {
    shards.all().map(|_| ShardFront::default()).collect()
}

/// Visitors each shard's front should hold at this pace: the most a tick
/// admits (a late one catches up on a second's slots), spread over the
/// `shards`, twice over. A front is read again when it holds fewer, a
/// page of twice as many.
fn front_size(settings: &QueueSettings, shards: QueueShards) -> usize {
    let tick_ms = super::TICK_MS + (CATCH_UP_US / 1_000).unsigned_abs();
    let most = (settings.per_second() * tick_ms).div_ceil(1_000);
    let per_shard = 2 * most.div_ceil(u64::from(shards.count()));
    usize::try_from(per_shard).map_or(usize::MAX, |n| n.max(MIN_FRONT))
}

/// Where a shard is read from this tick, if at all: from the first while
/// the early joiners' entries may still be showing (just after the
/// opening), and on every read while the shard's reads are among the drawn
/// (an entry the index shows late sorts among ranks already read, where a
/// read past the last would never see it); otherwise a little back from
/// its last read when the index had nothing past it (a later joiner's
/// entry may show late), and past its last read when its front runs short.
fn read_from(front: &ShardFront, settling: bool, size: usize) -> Option<Option<QueueRank>> {
    let Some(last) = front.read_to.filter(|_| !settling) else {
        return Some(None);
    };
    match joined_at_of(last) {
        None => (!front.more || front.waiting.len() < size).then_some(None),
        Some(joined) if !front.more => Some(Some(QueueRank(
            first_rank_joined_at(joined - SETTLE_MS).0.saturating_sub(1),
        ))),
        Some(_) => (front.waiting.len() < size).then_some(Some(last)),
    }
}

impl ShardFront {
    /// Takes in a page read from the index: `more` if it had more past
    /// it. Visitors admitted here lately (the index may still show them)
    /// stay out, and the front keeps at most `limit`: past that the
    /// highest ranks go, to be read again when the front runs short.
    fn absorb(
        &mut self,
        found: Vec<IndexedVisitor>,
        more: bool,
        admitted: &HashMap<QueueRank, i64>,
        limit: usize,
    ) {
        // A full page that ends before the last read (a read from a little
        // back) knows up to its end only.
        self.read_to = match found.last() {
            Some(last) if more => Some(last.rank),
            Some(last) => self.read_to.max(Some(last.rank)),
            None => self.read_to,
        };
        self.more = more;
        for visitor in found {
            if !admitted.contains_key(&visitor.rank) {
                self.waiting.insert(visitor.rank, visitor);
            }
        }
        if let Some(&cut) = self.waiting.keys().nth(limit) {
            self.waiting.split_off(&cut);
            self.more = true;
            self.read_to = self.waiting.keys().next_back().copied();
        }
    }
}

/// Reads the fronts that need it and returns the queue's head.
pub(super) async fn read_fronts(
    app: &App,
    event: &EventId,
    mirror: &mut super::Mirror,
    state: &QueueState,
    now: Millis,
) -> Result<Head, Error> {
    // Every front is read from the first until the first admission (the
    // queue's settling time) and for at least SETTLE_MS: drawn entries
    // that show up until then take their place in key order.
    let settle_ms = SETTLE_MS.max(i64::from(state.settings.draw_settle_ms));
    let settling = now.0 < state.settings.opens_at.0 + settle_ms;
    let size = front_size(&state.settings, state.shards);
    let limit = 2 * size;
    let generation = mirror.generation;
    // The mirror holds a front per shard of the generation (`catch_up`).
    let reads = state.shards.all().filter_map(|shard| {
        let from = read_from(mirror.shards.get(usize::from(shard))?, settling, size)?;
        let page = i32::try_from(limit).unwrap_or(i32::MAX);
        Some(async move {
            let read = app
                .store
                .waiting_ranked_after(event, generation, shard, from, page)
                .await;
            (usize::from(shard), read)
        })
    });
    for (shard, read) in join_all(reads).await {
        let (found, more) = read?;
        let front = &mut mirror.shards[shard];
        if settling {
            *front = ShardFront::default();
        }
        front.absorb(found, more, &mirror.admitted, limit);
    }
    Ok(head_of(
        &mirror.shards,
        &state.counts,
        state.settings.opens_us(),
        size,
    ))
}

/// The head across the shards' fronts, at most `size` from each.
fn head_of(shards: &[ShardFront], counts: &JoinCounts, opens_us: i64, size: usize) -> Head {
    // Known up to the lowest last read of a shard with more past it, or of
    // a front longer than the part taken from it.
    let mut known_to = QueueRank(u128::MAX);
    let mut whole = true;
    for front in shards {
        if front.more {
            whole = false;
            if let Some(read_to) = front.read_to {
                known_to = known_to.min(QueueRank(read_to.0.saturating_add(1)));
            }
        }
        if let Some(rank) = front.waiting.keys().nth(size) {
            whole = false;
            known_to = known_to.min(*rank);
        }
    }
    let mut visitors: Vec<WaitingVisitor> = shards
        .iter()
        .enumerate()
        .flat_map(|(shard, front)| {
            front
                .waiting
                .range(..known_to)
                .map(move |(rank, v)| WaitingVisitor {
                    rank: *rank,
                    eligible_us: (v.joined_ms * 1_000).max(opens_us),
                    counted: counts.is_counted(shard, v.joined_ms),
                })
        })
        .collect();
    visitors.sort_by_key(|v| v.rank);
    Head {
        visitors,
        known_to,
        whole,
    }
}

#[cfg(test)]
#[path = "fronts_tests.rs"]
mod tests;
