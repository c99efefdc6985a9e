//! An instance's memory of each waitlist's line as its offerer's looks
//! last read it (API.md, "Offers"): each index shard's earliest places,
//! and their entries. A look starts from it and gives back what it read,
//! so a stream of frees costs a read of the heads that moved, not of every
//! index at every look.
//!
//! Why a kept head can be trusted: a shard's earliest place changes only
//! when its entry leaves WAITING (an offer, a leave, a removal: the offer
//! to it then loses in its transaction, which conditions on the entry
//! waiting, and the look reads the shard again) or when a join lands ahead
//! of it, which a join stamped before the head can do only within the
//! contract's one second of ties. A shard read empty is kept with the
//! list's newest joins as read before it ([`LineRead::ends`]): a look
//! reads them again first, and takes its empties to be empty only if
//! nobody joined since.

use std::collections::HashMap;
use std::sync::Mutex;

use super::Memory;
use crate::domain::waitlist_entry::{Entry, IndexShard};
use crate::domain::{EntryId, EventId, Millis};
use crate::store::IndexHead;

/// Lines kept at most (an instance's memory of a waitlist it no longer
/// visits goes first, when one more is kept).
const LINES_KEPT: usize = 64;

/// One shard's places as read: the earliest first, and whether more may
/// wait behind them (the read came back full).
#[derive(Debug, Clone)]
pub struct ShardRead {
    pub places: Vec<IndexHead>,
    pub more: bool,
}

/// A line's heads as a look read them.
#[derive(Debug, Clone, Default)]
pub struct LineRead {
    pub shards: HashMap<IndexShard, ShardRead>,
    pub entries: HashMap<EntryId, Entry>,
    /// The newest join keys of each shard of the list, read before every
    /// shard here was (`None`: not read; no empty shard is kept then).
    pub ends: Option<Vec<Vec<String>>>,
}

#[derive(Debug, Default)]
pub(super) struct LineMemory {
    lines: Mutex<HashMap<(EventId, u64), (Millis, LineRead)>>,
}

impl Memory {
    /// What this instance remembers of `event`'s line of `generation`:
    /// every shard it read, those it read empty with the list's ends read
    /// before them (a look checks those first).
    pub fn recall_line(&self, event: &EventId, generation: u64) -> LineRead {
        let lines = self.lines.lines.lock().unwrap_or_else(|p| p.into_inner());
        lines
            .get(&(event.clone(), generation))
            .map(|(_, line)| line.clone())
            .unwrap_or_default()
    }

    /// Keeps `line` as this instance's view of `event`'s line of
    /// `generation` from `now`: its shards (those read empty only with the
    /// list's ends they were read after), and the entries they name. Each
    /// with a place may hold more behind its places by the next look (a
    /// join since): a look that passes over its last place reads past it
    /// again.
    pub fn remember_line(&self, event: &EventId, generation: u64, now: Millis, mut line: LineRead) {
        let ends = line.ends.is_some();
        line.shards.retain(|_, s| ends || !s.places.is_empty());
        for shard in line.shards.values_mut() {
            shard.more = !shard.places.is_empty();
        }
        let named: std::collections::HashSet<&EntryId> = line
            .shards
            .values()
            .flat_map(|s| s.places.iter().map(|p| &p.entry))
            .collect();
        let named: std::collections::HashSet<EntryId> = named.into_iter().cloned().collect();
        line.entries.retain(|id, _| named.contains(id));
        let mut lines = self.lines.lines.lock().unwrap_or_else(|p| p.into_inner());
        if lines.len() >= LINES_KEPT && !lines.contains_key(&(event.clone(), generation)) {
            let oldest = lines
                .iter()
                .min_by_key(|(_, (at, _))| *at)
                .map(|(k, _)| k.clone());
            if let Some(oldest) = oldest {
                lines.remove(&oldest);
            }
        }
        lines.insert((event.clone(), generation), (now, line));
    }
}

#[cfg(test)]
#[path = "lines_tests.rs"]
mod tests;
