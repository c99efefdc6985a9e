//! The draw list's cost (docs/API.md, "The draw list"): once the queue
//! scenario's early joiners are drawn and the seed disclosed, the whole
//! list is followed page by page through the handler, a full page at a
//! time, every page's requests recorded and priced by DynamoDB's rules.
//! Its targets: no page reads more than its limit and one item a shard,
//! and the whole list reads at most a fifth more than it returns. What it
//! writes into docs/QUEUE.md is queue_doc.rs's.

use serde_json::Value;
use shared::domain::draw::DISCLOSE_AFTER_MS;
use shared::domain::{EventId, Millis};
use shared::handlers::MAX_DRAW_PAGE;
use shared::store::QUEUE_DRAW_INDEX;
use shared::App;

use super::pricing::price_each;
use crate::capacity::{CapacityRecorder, Recorded};
use crate::goals::{Bound, Goal};
use crate::kit::reply;

/// What following the draw list measured.
#[derive(Debug, Clone, Default)]
pub struct DrawListRun {
    /// The entries listed, and the drawn visitors there are.
    pub entries: u64,
    pub drawn: u64,
    /// Whether the entries came in strictly increasing key order.
    pub in_order: bool,
    /// The last key listed so far.
    last_key: String,
    pub pages: u64,
    pub limit: usize,
    pub shards: usize,
    /// Items the draw index gave, in all and on the page that read most.
    pub items_read: u64,
    pub most_items_a_page: u64,
    /// Read units by DynamoDB's rules (each query's items rounded up to
    /// 4 KB, half a unit each as index reads are eventually consistent).
    pub read_units: f64,
    pub most_units_a_page: f64,
}

/// Items read for the whole list, per entry returned, at most this.
pub const ITEMS_PER_ENTRY_GOAL: f64 = 1.2;

/// Follows `event`'s draw list from its first page to its last, once the
/// seed is disclosed (`opens` + 5 s: waited for, as a buyer would).
pub(super) async fn follow_draw_list(
    app: &App,
    recorder: &CapacityRecorder,
    (event, opens): (&EventId, Millis),
    drawn: u64,
) -> Result<DrawListRun, String> {
    let stored = app
        .store
        .read_queue(event)
        .await
        .map_err(|e| e.to_string())?;
    let state = stored.and_then(|s| s.state).ok_or("the queue is gone")?;
    let wait = opens.0 + DISCLOSE_AFTER_MS + 100 - shared::world::now().0;
    if wait > 0 {
        tokio::time::sleep(std::time::Duration::from_millis(wait as u64)).await;
    }
    let mut run = DrawListRun {
        drawn,
        in_order: true,
        limit: MAX_DRAW_PAGE,
        shards: usize::from(state.shards.count()),
        ..DrawListRun::default()
    };
    let mut after = None::<String>;
    loop {
        let query = after.map(|a| format!("?after={a}")).unwrap_or_default();
        let uri = format!("/events/{event}/queue/draw{query}");
        let (page, records) = recorded(recorder, reply(app, "GET", &uri, None, "")).await?;
        run.count_page(app, &records).await?;
        run.list(&page);
        match page["next"].as_str() {
            Some(next) => after = Some(next.to_owned()),
            None => return Ok(run),
        }
    }
}

/// A page's reply, and the requests it made.
async fn recorded(
    recorder: &CapacityRecorder,
    call: impl std::future::Future<Output = (u16, Value)>,
) -> Result<(Value, Vec<Recorded>), String> {
    recorder.take();
    recorder.set_recording(true);
    let (status, page) = call.await;
    recorder.set_recording(false);
    let records = recorder.take();
    if status != 200 {
        return Err(format!("draw-list: {status} {page}"));
    }
    Ok((page, records))
}

impl DrawListRun {
    /// One page's reads of the draw index, from its recorded requests.
    async fn count_page(&mut self, app: &App, records: &[Recorded]) -> Result<(), String> {
        let reads: Vec<Recorded> = records
            .iter()
            .filter(|r| r.op == "Query" && r.request["IndexName"] == QUEUE_DRAW_INDEX)
            .cloned()
            .collect();
        let mut items = 0;
        for read in &reads {
            items += read.response["Count"]
                .as_u64()
                .ok_or_else(|| format!("a draw-index query without a Count: {}", read.response))?;
        }
        let units: f64 = price_each(app, &reads)
            .await?
            .iter()
            .flat_map(|p| &p.charges)
            .map(|c| c.read_units)
            .sum();
        self.pages += 1;
        self.items_read += items;
        self.most_items_a_page = self.most_items_a_page.max(items);
        self.read_units += units;
        self.most_units_a_page = self.most_units_a_page.max(units);
        Ok(())
    }

    /// One page's entries, counted and checked to follow the last key.
    fn list(&mut self, page: &Value) {
        for entry in page["entries"].as_array().into_iter().flatten() {
            let key = entry["drawKey"].as_str().unwrap_or_default().to_owned();
            self.in_order &= key > self.last_key;
            self.entries += 1;
            self.last_key = key;
        }
    }

    /// Every drawn visitor listed once, in key order.
    pub fn ok(&self) -> bool {
        self.in_order && self.entries == self.drawn
    }

    pub fn items_per_entry(&self) -> f64 {
        self.items_read as f64 / self.entries.max(1) as f64
    }

    pub fn units_per_page(&self) -> f64 {
        self.read_units / self.pages.max(1) as f64
    }

    /// A page reads at most its limit and one item a shard; the list at
    /// most [`ITEMS_PER_ENTRY_GOAL`] items an entry.
    pub fn goals(&self) -> Vec<Goal> {
        vec![
            Goal::new(
                "draw list: items read by the page that read most",
                self.most_items_a_page as f64,
                Bound::AtMost((self.limit + self.shards) as f64),
                "issue 45: a page reads about its limit and one item a shard",
            ),
            Goal::new(
                "draw list: items read per entry listed",
                self.items_per_entry(),
                Bound::AtMost(ITEMS_PER_ENTRY_GOAL),
                "issue 45: the draw list costs what it returns",
            ),
        ]
    }
}
