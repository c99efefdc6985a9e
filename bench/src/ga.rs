//! General admission's stampede: buyers of 1–4 places at once on one
//! section, through the handler (places/s, latency, oversell: must be 0),
//! next to the naive single counter it replaces (read the count, write it
//! back plus q): the harness must see that one oversell.

use crate::kit::{reply, unique, Row, Timing};
use crate::{create_orders, table_name, HOLD_SECONDS};
use aws_sdk_dynamodb::types::AttributeValue;
use crowdcheck::history::{
    check_counter, places_hold, seconds_after, wall_us, CounterOp, Take, Verdict, Window,
};
use shared::domain::ga::bucket_count;
use shared::App;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::Semaphore;

/// The section and the crowd.
#[derive(Debug, Clone, Copy)]
pub struct GaStampede {
    pub capacity: u32,
    pub buyers: usize,
    pub in_flight: usize,
}

/// Places each buyer wants, in turn.
const QUANTITIES: [u32; 4] = [2, 1, 4, 3];

/// The one section the stampede's event has.
const SECTION: &str = "FLOOR";

pub(super) async fn ga_stampede(app: &App, size: GaStampede) -> Result<Row, String> {
    let event = unique("ga");
    let plan = serde_json::json!({"name": "GA", "holdSeconds": HOLD_SECONDS, "sections": [{"sectionId": SECTION, "capacity": size.capacity}]});
    match reply(
        app,
        "PUT",
        &format!("/events/{event}"),
        None,
        &plan.to_string(),
    )
    .await
    {
        (201, _) => {}
        (s, b) => return Err(format!("create-event {event}: {s} {b}")),
    }
    let orders = create_orders(app, &event, size.buyers).await?;
    let sem = Arc::new(Semaphore::new(size.in_flight));
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for (i, o) in orders.into_iter().enumerate() {
        let (app, sem) = (app.clone(), sem.clone());
        let q = QUANTITIES[i % QUANTITIES.len()];
        tasks.spawn(async move {
            let _permit = sem.acquire_owned().await;
            let (t, start) = (Instant::now(), wall_us());
            let body = serde_json::json!({"quantity": q}).to_string();
            let (status, reply) = reply(
                &app,
                "PUT",
                &format!("/orders/{}/ga/{SECTION}", o.id),
                Some(&o.token),
                &body,
            )
            .await;
            let window = Window::new(start, wall_us());
            let ms = t.elapsed().as_secs_f64() * 1000.0;
            (ms, q, status, reply, window, o.id)
        });
    }
    let mut timing = Timing::default();
    let (mut granted, mut sold_out, mut retry, mut other) = (0u32, 0usize, 0usize, 0usize);
    let mut history = Vec::new();
    let lifetime_s = app.config.max_order_lifetime_seconds;
    while let Some(done) = tasks.join_next().await {
        let (ms, q, status, body, window, order) = done.map_err(|e| e.to_string())?;
        timing.latencies_ms.push(ms);
        // A 503 may hold its places until its order expires, at the latest.
        let expires_by = seconds_after(window.end, lifetime_s);
        match places_hold(window, &order, u64::from(q), (status, &body), expires_by) {
            Some(op) => {
                match &op {
                    CounterOp::Took(_) => granted += q,
                    CounterOp::Refused { .. } => sold_out += 1,
                    // Only a 503 is an answer the contract gives.
                    CounterOp::Unknown(_) => {
                        retry += usize::from(status == 503);
                        other += usize::from(status != 503);
                    }
                    CounterOp::Released { .. } => {}
                }
                history.push(op);
            }
            // A grant that does not say until when, or a refusal the
            // stampede cannot cause: answers the contract does not give.
            None => other += 1,
        }
    }
    timing.wall = started.elapsed();
    // Invariant 8 from the buckets themselves.
    let section = shared::domain::SectionId::parse(SECTION).map_err(|e| e.to_string())?;
    let event_id = shared::domain::EventId::parse(&event).map_err(|e| e.to_string())?;
    let indexes: Vec<u32> = (0..bucket_count(size.capacity)).collect();
    let buckets = app
        .store
        .read_buckets(&event_id, &section, &indexes, true)
        .await
        .map_err(|e| e.to_string())?;
    let now = shared::world::now();
    let held: u32 = buckets.iter().map(|b| b.sold + b.live_held(now)).sum();
    let over = held.saturating_sub(size.capacity) + granted.saturating_sub(size.capacity);
    let verdict = check_counter(SECTION, u64::from(size.capacity), &history);
    let scenario = format!(
        "GA stampede: {} buyers of 1-4 places, capacity {}, {} in flight (handler, metered)",
        size.buyers, size.capacity, size.in_flight
    );
    let goals = vec![crate::Goal::no_503(&scenario, retry)];
    Ok(Row {
        scenario,
        correctness: format!(
            "{granted} of {} places held ({:.0} places/s), {over} oversold, {sold_out} sold-out, {retry} × 503 ({}); {}",
            size.capacity,
            f64::from(granted) / timing.wall.as_secs_f64().max(1e-9),
            crate::scale_model::past_aws_deadline(&timing),
            history_text(&verdict, "answers")
        ),
        ok: over == 0 && held == granted && other == 0 && verdict.violations.is_empty(),
        timing,
        goals,
    })
}

/// A counter's history as a row says it.
fn history_text(verdict: &Verdict, what: &str) -> String {
    format!(
        "history: {} {what} judged, {} violations {}",
        verdict.operations,
        verdict.violations.len(),
        verdict.violations.first().map_or("", String::as_str)
    )
}

/// The design GA replaces: one counter per section, read then written back
/// plus q when it looked like there was room.
pub(super) async fn ga_naive_counter(app: &App, size: GaStampede) -> Result<Row, String> {
    let client = app.store.client().clone();
    let table = table_name(app);
    let key = HashMap::from([
        ("PK".to_owned(), AttributeValue::S(unique("naive-ga"))),
        ("SK".to_owned(), AttributeValue::S("GA".into())),
    ]);
    let mut item = key.clone();
    item.insert("held".into(), AttributeValue::N("0".into()));
    client
        .put_item()
        .table_name(&table)
        .set_item(Some(item))
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let sem = Arc::new(Semaphore::new(size.in_flight));
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..size.buyers {
        let (client, table, key, sem) = (client.clone(), table.clone(), key.clone(), sem.clone());
        let q = QUANTITIES[i % QUANTITIES.len()];
        let capacity = size.capacity;
        tasks.spawn(async move {
            let _permit = sem.acquire_owned().await;
            let (t, start) = (Instant::now(), wall_us());
            let read = client
                .get_item()
                .table_name(&table)
                .set_key(Some(key.clone()))
                .consistent_read(true)
                .send()
                .await;
            let held: u32 = read
                .ok()
                .and_then(|r| r.item)
                .and_then(|i| {
                    i.get("held")
                        .and_then(|v| v.as_n().ok())
                        .and_then(|n| n.parse().ok())
                })
                .unwrap_or(u32::MAX);
            let granted = if held.saturating_add(q) <= capacity {
                let mut item = key;
                item.insert("held".into(), AttributeValue::N((held + q).to_string()));
                match client
                    .put_item()
                    .table_name(&table)
                    .set_item(Some(item))
                    .send()
                    .await
                {
                    Ok(_) => q,
                    Err(_) => 0,
                }
            } else {
                0
            };
            let window = Window::new(start, wall_us());
            (
                t.elapsed().as_secs_f64() * 1000.0,
                granted,
                Take {
                    window,
                    order: format!("buyer-{i}"),
                    quantity: u64::from(granted),
                    expires: i64::MAX,
                },
            )
        });
    }
    let mut timing = Timing::default();
    let mut granted = 0u32;
    let mut history = Vec::new();
    while let Some(done) = tasks.join_next().await {
        let (ms, q, take) = done.map_err(|e| e.to_string())?;
        timing.latencies_ms.push(ms);
        granted += q;
        if q > 0 {
            history.push(CounterOp::Took(take));
        }
    }
    timing.wall = started.elapsed();
    let over = granted.saturating_sub(size.capacity);
    let verdict = check_counter("naive", u64::from(size.capacity), &history);
    Ok(Row {
        scenario: format!("naive GA: one counter, read then write (capacity {}, {} buyers)", size.capacity, size.buyers),
        correctness: format!(
            "{granted} places 'held' of {}: {over} oversold (must be > 0: the harness sees oversells); {} (must be > 0: the checker sees them)",
            size.capacity,
            history_text(&verdict, "grants")
        ),
        ok: over > 0 && !verdict.violations.is_empty(),
        timing,
        goals: Vec::new(),
    })
}
