//! The draw list (docs/API.md, "A draw anyone can check"): once the seed
//! is disclosed, every drawn visitor's key and slot, in key order, paged,
//! and no ids. With it a buyer checks that the order follows the seed.

use futures_util::future::join_all;
use lambda_http::Request;
use serde::Serialize;

use super::generation::{draw_seed, event_queue};
use super::Reply;
use crate::domain::draw::is_disclosed;
use crate::error::Error;
use crate::http::{cacheable_json, query_param};
use crate::store::QUEUE_SHARDS;
use crate::App;

/// The most entries a page holds, and its default.
pub const MAX_DRAW_PAGE: usize = 1_000;

/// A page may be cached this long (by the CloudFront distribution, or any
/// cache between): a public route reading up to 32 index pages, whose
/// answer changes only as slots are given.
const DRAW_PAGE_MAX_AGE_SECONDS: u32 = 5;

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
/// index gives its next `limit` keys; the page is the first `limit` of
/// them all (no key of a shard's unread rest comes before the page's last,
/// since that shard gave `limit` keys below it), and `next` is its last
/// key while anything may follow.
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
    let page = i32::try_from(limit).unwrap_or(i32::MAX);
    let reads = (0..QUEUE_SHARDS).map(|shard| {
        app.store
            .drawn_after(&event_id, state.generation, shard, after.as_deref(), page)
    });
    let mut entries = Vec::new();
    let mut more = false;
    for read in join_all(reads).await {
        let (found, shard_more) = read?;
        more |= shard_more;
        entries.extend(found);
    }
    entries.sort_by(|a, b| a.draw_key.cmp(&b.draw_key));
    more |= entries.len() > limit;
    entries.truncate(limit);
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
