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
//! `shards` items, a page of about a third of that on 128 shards (two
//! thirds on 32; a single entry when `limit` is at most the shards).

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

/// The most digits a cursor's count has (docs/openapi.yaml's pattern): a
/// larger count is written as the largest that fits.
const COUNT_DIGITS: u32 = 10;
const MAX_COUNT: u64 = 10u64.pow(COUNT_DIGITS) - 1;

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

/// The key right after `key` (lowercase hex), `None` after the last: its
/// last digit that is not `f` goes up one, the `f`s after it become `0`.
fn successor(key: &str) -> Option<String> {
    let at = key.rfind(|c| c != 'f')?;
    let up = match key.as_bytes()[at] {
        b'9' => 'a',
        digit => char::from(digit + 1),
    };
    Some(format!(
        "{}{up}{}",
        &key[..at],
        "0".repeat(key.len() - at - 1)
    ))
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
            count
                if count.len() <= COUNT_DIGITS as usize
                    && count.bytes().all(|b| b.is_ascii_digit()) =>
            {
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
        // The last position's range ends at the last key.
        let top = position(after).saturating_add(width);
        let to = format!("{top:016x}{}", &LAST_KEY[16..]);
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
    /// filter), or up to the plan's end, at most `limit` of them. `next`
    /// carries the entries up to its key, at most [`MAX_COUNT`]: counted on
    /// from the cursor's, from the first page's, or estimated from what
    /// every shard showed ([`Self::density`]) when the cursor had none. A
    /// count that lies only misleads the pages that follow it: every page
    /// reads within its bound whatever its cursor says.
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
        let density = self.density(&plan.from, &reads);
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
        let count = match (&self.after, self.before) {
            (None, _) => entries.len() as u64,
            (Some(_), 0) => (density * position(&end) as f64).round() as u64,
            (Some(_), before) => before.saturating_add(entries.len() as u64),
        };
        let next = (end != LAST_KEY).then(|| match count.min(MAX_COUNT) {
            0 => end,
            count => format!("{end}.{count}"),
        });
        DrawPage { entries, next }
    }

    /// Entries per position over all shards, as `reads` (one a shard,
    /// from `from`) show it, erring low; 0 when they show nothing. Each
    /// shard was seen up to its last key if its read stopped at its limit,
    /// else to the last key; the entries seen, less two deviations, over
    /// the positions seen, times the shards. Used only where the cursor
    /// has no count: every shard's keys tell the density far better than
    /// the few a small page keeps.
    fn density(&self, from: &str, reads: &[(Vec<DrawnEntry>, bool)]) -> f64 {
        let start = position(from);
        let (mut seen, mut positions) = (0.0, 0.0);
        for (found, more) in reads {
            seen += found.len() as f64;
            let seen_to = match found.last() {
                Some(last) if *more => position(&last.draw_key),
                _ => u64::MAX,
            };
            positions += seen_to.saturating_sub(start) as f64;
        }
        let fewest = (seen - 2.0 * f64::sqrt(seen)).max(0.0);
        if positions == 0.0 {
            return 0.0;
        }
        fewest / positions * reads.len() as f64
    }
}

#[cfg(test)]
#[path = "draw_pages_tests.rs"]
mod tests;
