//! The draw list (docs/API.md, "A draw anyone can check"): once the seed
//! is disclosed, every drawn visitor's key and slot, in key order, paged,
//! and no ids. With it a buyer checks that the order follows the seed.

use futures_util::future::join_all;
use lambda_http::Request;
use serde::Serialize;

use super::generation::{draw_seed, event_queue};
use super::Reply;
use crate::domain::draw::is_disclosed;
use crate::domain::draw_pages::{DrawCursor, DrawPage};
use crate::domain::queue_state::QueueState;
use crate::domain::EventId;
use crate::error::Error;
use crate::http::{cacheable_json, query_param};
use crate::App;

/// The most entries a page holds, and its default.
pub const MAX_DRAW_PAGE: usize = 1_000;

/// A page may be cached this long (by the CloudFront distribution, or any
/// cache between): a public route reading a page of every index shard,
/// whose answer changes only as slots are given.
pub const DRAW_PAGE_MAX_AGE_SECONDS: u32 = 5;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    draw_key: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    slot: Option<i64>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DrawListReply {
    generation: u64,
    draw_seed: String,
    entries: Vec<Entry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    next: Option<String>,
}

fn parse_after(raw: &str) -> Result<DrawCursor, Error> {
    DrawCursor::parse(raw).map_err(|why| Error::BadRequest(why.into()))
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

/// The page from `cursor`: every shard of the draw index read at once, as
/// the cursor's plan says.
async fn read_page(
    app: &App,
    (event_id, state): (&EventId, &QueueState),
    cursor: &DrawCursor,
    limit: usize,
) -> Result<DrawPage, Error> {
    let Some(plan) = cursor.plan(limit, state.shards) else {
        return Ok(DrawPage {
            entries: Vec::new(),
            next: None,
        });
    };
    let per_shard = i32::try_from(plan.per_shard).unwrap_or(i32::MAX);
    let reads = state.shards.all().map(|shard| {
        app.store.drawn_between(
            event_id,
            state.generation,
            shard,
            (&plan.from, &plan.to),
            per_shard,
        )
    });
    let mut found = Vec::new();
    for read in join_all(reads).await {
        found.push(read?);
    }
    Ok(cursor.page(&plan, found, limit))
}

/// `GET /events/{eventId}/queue/draw?after=<cursor>&limit=<1–1000>`:
/// `404 draw-not-disclosed` before `opensAt` + 5 s; the page is what the
/// shards show up to where every one has been read ([`DrawCursor::page`]).
pub async fn draw_list(app: &App, req: &Request) -> Reply {
    let cursor = query_param(req, "after", parse_after)?.unwrap_or(DrawCursor::FIRST);
    let limit = query_param(req, "limit", parse_limit)?.unwrap_or(MAX_DRAW_PAGE);
    let now = crate::world::now();
    let (event_id, state) = event_queue(app, req, now).await?;
    if !is_disclosed(state.settings.opens_at, now) {
        return Err(Error::DrawNotDisclosed);
    }
    // A generation put before draws existed has none, and never discloses.
    let seed = draw_seed(app, &event_id, &state)?.ok_or(Error::DrawNotDisclosed)?;
    let page = read_page(app, (&event_id, &state), &cursor, limit).await?;
    Ok(cacheable_json(
        &DrawListReply {
            generation: state.generation,
            draw_seed: seed.disclosed(),
            entries: page
                .entries
                .into_iter()
                .map(|e| Entry {
                    draw_key: e.draw_key,
                    slot: e.slot_us,
                })
                .collect(),
            next: page.next,
        },
        DRAW_PAGE_MAX_AGE_SECONDS,
        false,
    ))
}
