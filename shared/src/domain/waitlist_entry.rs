//! A waitlist's entries (API.md, "Entries"), pure: what a stored entry
//! is, the indexes a waiting entry stands in, what a join does when its
//! buyer has an entry already, what a leave or a removal does, and the
//! organiser's filter by status. The store keeps the entries; every rule
//! is tested here.

use super::buyer::BuyerId;
use super::buyer_limit::LimitedBuyer;
use super::waitlist::{EndReason, EntryRequest, EntryStatus};
use super::{EntryId, Millis, OrderId, SectionId};

/// An entry as stored: who joined, what they asked for, when, the hash of
/// their first entry token, and what is written of its status (WAITING or
/// an end; what is computed at read time is `entry_status_at`'s).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub entry_id: EntryId,
    /// The waitlist generation it joined: a delete ends it.
    pub generation: u64,
    pub buyer: BuyerId,
    pub request: EntryRequest,
    pub joined_at: Millis,
    pub token_hash: String,
    pub stored: EntryStatus,
    /// The order offered to it (stored `OFFERED`, and after).
    pub offer_order: Option<OrderId>,
    /// On an event with a buyer limit: whose record counts its offer (the
    /// buyer's keyed ref, as the join counted it) and the limit. Kept from
    /// the join, so the offerer needs no key to derive it.
    pub limited: Option<LimitedBuyer>,
}

/// One index of waiting entries: those that ask for `quantity` units in
/// `section` (`None`: in any section), `together` or not, with
/// `wheelchair` spaces among them. Whoever offers free units reads the
/// head of each index those units could fill.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WaitingIndex {
    pub section: Option<SectionId>,
    pub quantity: u32,
    pub together: bool,
    pub wheelchair: u32,
}

/// One partition of a waiting index: an index's places are spread over
/// the store's shards by their entries' ids, and whoever reads the index's
/// head reads each shard's.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IndexShard {
    pub index: WaitingIndex,
    pub shard: u8,
}

impl WaitingIndex {
    /// The one index of `section` (`None`: any) where every entry asking
    /// for wheelchair spaces waits, whatever its quantity and `together`:
    /// few ask, so a look reads this index's heads and passes over those
    /// the free units cannot fill, rather than an index per quantity and
    /// count of spaces (dozens a section). Its quantity, 0, no request has.
    pub fn spaces(section: Option<SectionId>) -> Self {
        Self {
            section,
            quantity: 0,
            together: false,
            wheelchair: 1,
        }
    }

    /// The index's name in a key: `{section|*}|{quantity}|{t|f}|{wheelchair}`
    /// (a section id never holds `|` or `*`); `{section|*}|0|f|1` for
    /// [`WaitingIndex::spaces`].
    pub fn label(&self) -> String {
        let section = self.section.as_ref().map_or("*", SectionId::as_str);
        let together = if self.together { "t" } else { "f" };
        format!("{section}|{}|{together}|{}", self.quantity, self.wheelchair)
    }
}

/// The indexes a waiting entry stands in: one per section it names, or
/// the any-section one when it names none. One join writes them all, in
/// its own transaction.
pub fn entry_indexes(request: &EntryRequest) -> Vec<WaitingIndex> {
    let index = |section: Option<SectionId>| match request.wheelchair {
        0 => WaitingIndex {
            section,
            quantity: request.quantity,
            together: request.together,
            wheelchair: 0,
        },
        _ => WaitingIndex::spaces(section),
    };
    match request.section_ids.is_empty() {
        true => vec![index(None)],
        false => request
            .section_ids
            .iter()
            .map(|s| index(Some(s.clone())))
            .collect(),
    }
}

/// Whether an entry is live at a status: WAITING or OFFERED. A buyer has
/// at most one live entry per generation.
pub fn is_live(status: EntryStatus) -> bool {
    matches!(status, EntryStatus::Waiting | EntryStatus::Offered)
}

/// What a join does, given the entry its buyer's record names (its id and
/// its status now, `None`: the buyer has none this generation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JoinAs {
    /// The buyer's live entry answers, as it stands (`200`).
    Existing,
    /// A new entry at the back (`201`), replacing the record's ended one
    /// (`replacing`), written only if the record still names it.
    New { replacing: Option<EntryId> },
}

pub fn join_as(current: Option<(&EntryId, EntryStatus)>) -> JoinAs {
    match current {
        Some((_, status)) if is_live(status) => JoinAs::Existing,
        Some((entry, _)) => JoinAs::New {
            replacing: Some(entry.clone()),
        },
        None => JoinAs::New { replacing: None },
    }
}

/// What a leave (the buyer's) or a removal (the organiser's) does to an
/// entry that reads `status` now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// A waiting entry ends, for `reason`: written, off its indexes.
    End(EndReason),
    /// A live offer is declined: its order cancelled (its seats go on at
    /// once), recording why (a removal's, or a decline).
    Decline,
    /// Nothing to write: it has ended, or its offer completed; the
    /// answer is the entry as it reads, again the same.
    AsItStands,
}

pub fn ending(status: EntryStatus, reason: EndReason) -> Ending {
    match status {
        EntryStatus::Waiting => Ending::End(reason),
        EntryStatus::Offered => Ending::Decline,
        _ => Ending::AsItStands,
    }
}

/// The organiser's list filter: entries of one status.
pub fn parse_status_filter(value: &str) -> Option<fn(EntryStatus) -> bool> {
    Some(match value {
        "WAITING" => |s| s == EntryStatus::Waiting,
        "OFFERED" => |s| s == EntryStatus::Offered,
        "PURCHASED" => |s| s == EntryStatus::Purchased,
        "ENDED" => |s| matches!(s, EntryStatus::Ended(_)),
        _ => return None,
    })
}

/// How many entries one page of the organiser's list holds at most, and
/// by default.
pub const LIST_LIMIT_RANGE: std::ops::RangeInclusive<u32> = 1..=100;
pub const DEFAULT_LIST_LIMIT: u32 = 50;

#[cfg(test)]
#[path = "waitlist_entry_tests.rs"]
mod tests;
