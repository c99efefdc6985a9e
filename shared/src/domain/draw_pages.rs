//! The draw list's pages (docs/API.md, "The draw list"): what a page reads
//! from each shard of the draw index, and what it answers. Pure.
//!
//! Draw keys are HMAC outputs, uniform over the key space, so the entries
//! up to a key are about proportional to its position. A page's cursor
//! carries its key and how many entries come up to it; the next page then
//! reads one key range expected to hold nine tenths of a page, from every
//! shard at once, and almost nothing read is left out of the answer. A
//! page without a count (the first, or one after a plain key) reads each
//! shard's next `limit / shards` keys (rounded up): at most `limit` +
//! `shards` items, a page of about two thirds of that.

use super::queue_shards::QueueShards;

/// One entry of the draw list: a drawn visitor's key (64 lowercase hex
/// digits) and its slot once it has one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DrawnEntry {
    pub draw_key: String,
    pub slot_us: Option<i64>,
}

/// The key every other key comes before.
const LAST_KEY: &str = "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff";

/// The part of a page its key range is sized to: a range holding more
/// than `limit` entries is cut at `limit` and its rest read again.
const RANGE_FILL: f64 = 0.9;

/// Where a page starts: after `after` (from the first key when `None`),
/// with `before` entries at or before it (0 when not known).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DrawCursor {
    after: Option<String>,
    before: u64,
}

/// What a page reads: every shard's keys from `from` to `to` (both
/// included), at most `per_shard` of each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PagePlan {
    pub from: String,
    pub to: String,
    pub per_shard: usize,
}

/// A page: its entries in key order and the cursor of the next, absent
/// when nothing follows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DrawPage {
    pub entries: Vec<DrawnEntry>,
    pub next: Option<String>,
}

fn is_key(raw: &str) -> bool {
    raw.len() == 64 && raw.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// A key's position: its first 64 bits.
fn position(key: &str) -> u64 {
    key.get(..16)
        .and_then(|high| u64::from_str_radix(high, 16).ok())
        .unwrap_or(0)
}

/// The key right after `key`, `None` after the last.
fn successor(key: &str) -> Option<String> {
    let mut digits: Vec<u8> = key.bytes().collect();
    for digit in digits.iter_mut().rev() {
        match *digit {
            b'f' => *digit = b'0',
            b'9' => {
                *digit = b'a';
                return String::from_utf8(digits).ok();
            }
            d => {
                *digit = d + 1;
                return String::from_utf8(digits).ok();
            }
        }
    }
    None
}

impl DrawCursor {
    /// The start of the list.
    pub const FIRST: DrawCursor = DrawCursor {
        after: None,
        before: 0,
    };

    /// A page's `after`: a `next` (`{key}.{count}`) or a plain draw key.
    pub fn parse(raw: &str) -> Result<Self, &'static str> {
        let (key, count) = raw.split_once('.').unwrap_or((raw, ""));
        let before = match count {
            "" if !raw.ends_with('.') => Some(0),
            count if count.len() <= 10 && count.bytes().all(|b| b.is_ascii_digit()) => {
                count.parse().ok()
            }
            _ => None,
        };
        match before {
            Some(before) if is_key(key) => Ok(DrawCursor {
                after: Some(key.to_owned()),
                before,
            }),
            _ => Err("after must be a page's next, or a draw key: 64 lowercase hex digits"),
        }
    }

    /// What the page from here reads (`None`: nothing follows the last
    /// key). With a count, one range sized to [`RANGE_FILL`] of `limit`
    /// by the density so far (a count of a few is trusted less: the
    /// range is sized to two deviations above it), each shard read up to
    /// three deviations past its share; without, each shard's next
    /// `limit / shards` keys.
    pub fn plan(&self, limit: usize, shards: QueueShards) -> Option<PagePlan> {
        let from = match &self.after {
            Some(after) => successor(after)?,
            None => "0".repeat(64),
        };
        let shards = usize::from(shards.count()).max(1);
        let Some(after) = self.after.as_deref().filter(|_| self.before > 0) else {
            return Some(PagePlan {
                from,
                to: LAST_KEY.to_owned(),
                per_shard: limit.div_ceil(shards).max(1),
            });
        };
        let before = self.before as f64;
        let spacing = position(after) as f64 / (before + 2.0 * before.sqrt() + 1.0);
        // Float to integer casts saturate: a huge width ends at the last key.
        let width = ((RANGE_FILL * limit as f64 * spacing) as u64).max(1);
        let top = position(after).saturating_add(width);
        let to = if top == u64::MAX {
            LAST_KEY.to_owned()
        } else {
            format!("{top:016x}{}", &LAST_KEY[16..])
        };
        let share = limit as f64 / shards as f64;
        let per_shard = (share + 3.0 * share.sqrt() + 2.0).ceil() as usize;
        Some(PagePlan {
            from,
            to,
            per_shard,
        })
    }

    /// The page from `reads`, each shard's keys in order as `plan` read
    /// them and whether it had more: every key up to the lowest last key
    /// of a shard with more (no key of a shard's unread rest comes before
    /// it; a shard with more gave a key, as its read has a limit and no
    /// filter), or up to the plan's end, at most `limit` of them.
    pub fn page(
        &self,
        plan: &PagePlan,
        reads: Vec<(Vec<DrawnEntry>, bool)>,
        limit: usize,
    ) -> DrawPage {
        let cut_at = reads
            .iter()
            .filter(|(_, more)| *more)
            .filter_map(|(found, _)| found.last().map(|e| e.draw_key.clone()))
            .min();
        let mut end = cut_at.unwrap_or_else(|| plan.to.clone());
        let mut entries: Vec<DrawnEntry> = reads
            .into_iter()
            .flat_map(|(found, _)| found)
            .filter(|e| e.draw_key <= end)
            .collect();
        entries.sort_by(|a, b| a.draw_key.cmp(&b.draw_key));
        if entries.len() > limit {
            entries.truncate(limit);
            if let Some(last) = entries.last() {
                end.clone_from(&last.draw_key);
            }
        }
        let next = (end != LAST_KEY).then(|| match self.count_to(&end, entries.len()) {
            0 => end,
            count => format!("{end}.{count}"),
        });
        DrawPage { entries, next }
    }

    /// The entries up to `end`, this page's `found` among them: counted
    /// on from the cursor's, or estimated from this page's density when
    /// the cursor had none (0, not known, when it cannot be: a page that
    /// found nothing, or within one position). A count that lies only
    /// misleads the pages that follow it: every page reads within its
    /// bound whatever its cursor says.
    fn count_to(&self, end: &str, found: usize) -> u64 {
        let found = found as u64;
        match &self.after {
            None => found,
            Some(_) if self.before > 0 => self.before.saturating_add(found),
            Some(after) => {
                let (start, end) = (position(after), position(end));
                if end <= start {
                    return 0;
                }
                let scale = end as f64 / (end - start) as f64;
                (found as f64 * scale).round() as u64
            }
        }
    }
}

#[cfg(test)]
#[path = "draw_pages_tests.rs"]
mod tests;
