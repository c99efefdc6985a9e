//! The draw's helpers: what a buyer computes, a queue opened at once, the
//! whole draw list followed page by page, and drawn visitors written
//! straight to the table.

use hmac::{Hmac, KeyInit, Mac};
use serde_json::Value;
use sha2::Sha256;
use shared::domain::draw::DrawSeed;
use shared::domain::queue::drawn_rank;
use shared::domain::queue_state::{QueueState, Visitor};
use shared::domain::{EventId, Millis, VisitorId};
use shared::App;

use super::call;
use super::queue::{put_queue, queue_body};

/// What a buyer computes: HMAC-SHA-256 under the seed over its draw id.
pub fn draw_key(seed: &[u8], draw_id: &str) -> Vec<u8> {
    let mut mac = Hmac::<Sha256>::new_from_slice(seed).unwrap();
    mac.update(draw_id.as_bytes());
    mac.finalize().into_bytes().to_vec()
}

/// Opens the queue now, put as it was, with its opening ten seconds ago:
/// the seed is disclosed at once (a queue may open early while SCHEDULED).
pub async fn open_now(app: &App, event: &str, per_minute: u32) -> Value {
    let (status, put) = put_queue(app, event, &queue_body(-10_000, per_minute)).await;
    assert_eq!(status, 200, "{put}");
    put
}

/// One page of `event`'s draw list, `limit` long, after `after`.
pub async fn draw_page(app: &App, event: &str, limit: usize, after: Option<&str>) -> Value {
    let after = after.map(|a| format!("&after={a}")).unwrap_or_default();
    let path = format!("/events/{event}/queue/draw?limit={limit}{after}");
    let (status, page) = call(app, "GET", &path, &[], "").await;
    assert_eq!(status, 200, "{page}");
    let entries = page["entries"].as_array().unwrap();
    assert!(entries.len() <= limit);
    page
}

/// The whole draw list of `event`, `limit` a page: (key, slot) in order.
pub async fn draw_list(app: &App, event: &str, limit: usize) -> Vec<(String, i64)> {
    let mut listed = Vec::new();
    let mut after = None;
    loop {
        let page = draw_page(app, event, limit, after.as_deref()).await;
        listed.extend(listed_entries(&page));
        match page["next"].as_str() {
            Some(next) => after = Some(next.to_owned()),
            None => return listed,
        }
    }
}

/// A page's entries: (key, slot or -1).
pub fn listed_entries(page: &Value) -> Vec<(String, i64)> {
    page["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let slot = e["slot"].as_i64().unwrap_or(-1);
            (e["drawKey"].as_str().unwrap().to_owned(), slot)
        })
        .collect()
}

/// The queue's seed, as join-queue derives it.
pub fn seed_of(app: &App, event: &EventId, state: &QueueState) -> DrawSeed {
    app.config
        .draw_secrets
        .as_ref()
        .unwrap()
        .seed(&state.draw_secret, event, state.generation)
        .unwrap()
}

/// A visitor who joined a minute before the opening, ranked by its draw
/// key under the queue's seed (as join-queue ranks it), written straight
/// to the table.
pub async fn drawn_visitor(app: &App, event: &EventId, state: &QueueState, i: usize) -> VisitorId {
    let visitor_id = VisitorId::parse(&format!("drawn-{i:05}")).unwrap();
    drawn_visitor_named(app, event, state, visitor_id).await
}

pub async fn drawn_visitor_named(
    app: &App,
    event: &EventId,
    state: &QueueState,
    visitor_id: VisitorId,
) -> VisitorId {
    let seed = seed_of(app, event, state);
    let joined_at = Millis(state.settings.opens_at.0 - 60_000);
    let key = seed.key(visitor_id.as_str());
    let rank = drawn_rank(key.rank_bits());
    let visitor = Visitor {
        visitor_id: visitor_id.clone(),
        generation: state.generation,
        joined_at,
        rank,
        token_hash: "seeded".into(),
        admission: None,
        buyer: None,
        draw_key: Some(key),
    };
    assert!(app
        .store
        .join_queue(event, &visitor, state.visitor_items())
        .await
        .unwrap());
    visitor_id
}

pub async fn drawn_visitors(
    app: &App,
    event: &EventId,
    state: &QueueState,
    ids: std::ops::Range<usize>,
) -> Vec<VisitorId> {
    let mut all = Vec::new();
    let ids: Vec<usize> = ids.collect();
    for chunk in ids.chunks(50) {
        let writes = chunk.iter().map(|&i| drawn_visitor(app, event, state, i));
        all.extend(futures_util::future::join_all(writes).await);
    }
    all
}
