//! The draw list (docs/API.md, "A draw anyone can check"): once the seed
//! is disclosed, every drawn visitor's key and slot, in key order, paged,
//! and no ids. With it a buyer checks that the order follows the seed.

use futures_util::future::join_all;
use lambda_http::Request;
use serde::Serialize;

use super::generation::{draw_seed, event_queue};
use super::Reply;
use crate::domain::draw::is_disclosed;
use crate::domain::queue_shards::QueueShards;
use crate::error::Error;
use crate::http::{cacheable_json, query_param};
use crate::store::DrawnEntry;
use crate::App;

/// The most entries a page holds, and its default.
pub const MAX_DRAW_PAGE: usize = 1_000;

/// A page may be cached this long (by the CloudFront distribution, or any
/// cache between): a public route reading a page of every index shard,
/// whose answer changes only as slots are given.
pub const DRAW_PAGE_MAX_AGE_SECONDS: u32 = 5;

/// Keys read from each shard for a page of `limit`: the draw spreads keys
/// evenly over the shards, so three times a shard's share (at least a
/// few) nearly always fills the page (the page ends at the shards' lowest
/// last key), and a page of 1,000 reads about 3,000 entries however many
/// shards there are, not 1,000 from each.
fn shard_page(limit: usize, shards: QueueShards) -> usize {
    (3 * limit)
        .div_ceil(usize::from(shards.count()))
        .max(MIN_SHARD_PAGE)
        .min(limit)
}

/// The fewest keys read from a shard for a page.
const MIN_SHARD_PAGE: usize = 8;

/// The page from each shard's read (its keys in order, and whether it
/// has more): every key up to the lowest last key of a shard with more,
/// in key order, at most `limit`; and whether anything may follow. A
/// shard with more always gave a key: its query has a limit and no
/// filter, and a 1 MB page holds at least one item of 400 KB.
fn merged(pages: Vec<(Vec<DrawnEntry>, bool)>, limit: usize) -> (Vec<DrawnEntry>, bool) {
    let known_to = pages
        .iter()
        .filter(|(_, more)| *more)
        .filter_map(|(found, _)| found.last().map(|e| e.draw_key.clone()))
        .min();
    let more = known_to.is_some();
    let mut entries: Vec<DrawnEntry> = pages
        .into_iter()
        .flat_map(|(found, _)| found)
        .filter(|e| known_to.as_ref().is_none_or(|to| e.draw_key <= *to))
        .collect();
    entries.sort_by(|a, b| a.draw_key.cmp(&b.draw_key));
    let cut = entries.len() > limit;
    entries.truncate(limit);
    (entries, more || cut)
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    draw_key: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    slot: Option<i64>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DrawPage {
    generation: u64,
    draw_seed: String,
    entries: Vec<Entry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    next: Option<String>,
}

fn parse_after(raw: &str) -> Result<String, Error> {
    (raw.len() == 64 && raw.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
        .then(|| raw.to_owned())
        .ok_or_else(|| {
            Error::BadRequest("after must be a draw key: 64 lowercase hex digits".into())
        })
}

fn parse_limit(raw: &str) -> Result<usize, Error> {
    raw.parse()
        .ok()
        .filter(|n| (1..=MAX_DRAW_PAGE).contains(n))
        .ok_or_else(|| {
            Error::BadRequest(format!(
                "limit must be a whole number from 1 to {MAX_DRAW_PAGE}"
            ))
        })
}

/// `GET /events/{eventId}/queue/draw?after=<hex key>&limit=<1–1000>`:
/// `404 draw-not-disclosed` before `opensAt` + 5 s. Each shard of the draw
/// index gives its next few keys ([`shard_page`]); the page is every key
/// up to the lowest last key of a shard with more (no key of a shard's
/// unread rest comes before it), at most `limit` of them, and `next` is
/// its last key while anything may follow.
pub async fn draw_list(app: &App, req: &Request) -> Reply {
    let after = query_param(req, "after", parse_after)?;
    let limit = query_param(req, "limit", parse_limit)?.unwrap_or(MAX_DRAW_PAGE);
    let now = crate::world::now();
    let (event_id, state) = event_queue(app, req, now).await?;
    if !is_disclosed(state.settings.opens_at, now) {
        return Err(Error::DrawNotDisclosed);
    }
    // A generation put before draws existed has none, and never discloses.
    let seed = draw_seed(app, &event_id, &state)?.ok_or(Error::DrawNotDisclosed)?;
    let page = i32::try_from(shard_page(limit, state.shards)).unwrap_or(i32::MAX);
    let reads = state.shards.all().map(|shard| {
        app.store
            .drawn_after(&event_id, state.generation, shard, after.as_deref(), page)
    });
    let mut pages = Vec::new();
    for read in join_all(reads).await {
        pages.push(read?);
    }
    let (entries, more) = merged(pages, limit);
    let next = more
        .then(|| entries.last().map(|e| e.draw_key.clone()))
        .flatten();
    Ok(cacheable_json(
        &DrawPage {
            generation: state.generation,
            draw_seed: seed.disclosed(),
            entries: entries
                .into_iter()
                .map(|e| Entry {
                    draw_key: e.draw_key,
                    slot: e.slot_us,
                })
                .collect(),
            next,
        },
        DRAW_PAGE_MAX_AGE_SECONDS,
        false,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(key: u8) -> DrawnEntry {
        DrawnEntry {
            draw_key: format!("{key:064x}"),
            slot_us: None,
        }
    }

    fn keys(entries: &[DrawnEntry]) -> Vec<String> {
        entries
            .iter()
            .map(|e| e.draw_key[62..].to_owned())
            .collect()
    }

    #[test]
    fn a_page_ends_where_a_shard_with_more_has_not_read() {
        let pages = |a_more| {
            vec![
                (vec![entry(1), entry(4), entry(9)], a_more),
                (vec![entry(2), entry(3), entry(12)], false),
                (Vec::new(), false),
            ]
        };
        // Shard 0 may hold keys between 9 and 12: the page stops at 9.
        let (page, more) = merged(pages(true), 10);
        assert_eq!(
            (keys(&page), more),
            (
                vec!["01", "02", "03", "04", "09"]
                    .into_iter()
                    .map(String::from)
                    .collect::<Vec<_>>(),
                true
            )
        );
        // Every shard read to its end: the whole page, nothing follows.
        let (page, more) = merged(pages(false), 10);
        assert_eq!((page.len(), more), (6, false));
        // A limit cuts it, and something follows.
        let (page, more) = merged(pages(false), 4);
        assert_eq!(
            (keys(&page).last().map(String::as_str), more),
            (Some("04"), true)
        );
    }

    #[test]
    fn a_shards_read_is_twice_its_share_within_bounds() {
        assert_eq!(shard_page(1_000, QueueShards::DEFAULT), 24);
        assert_eq!(shard_page(1_000, QueueShards::LEGACY), 94);
        assert_eq!(shard_page(10, QueueShards::DEFAULT), 8);
        assert_eq!(shard_page(3, QueueShards::DEFAULT), 3);
    }
}
