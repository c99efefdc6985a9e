//! The store's ceiling (one conditional UpdateItem) and the naive patterns that must oversell.

use crate::kit::Timing;
use aws_sdk_dynamodb::types::AttributeValue;
use aws_sdk_dynamodb::Client;
use shared::App;
use std::collections::HashMap;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::Semaphore;

pub(super) fn table_name(app: &App) -> String {
    app.store.table_name().to_owned()
}

/// The seat item's key, as the store writes it (ids the bench made itself).
pub(super) fn seat_key(event: &str, seat: &str) -> HashMap<String, AttributeValue> {
    match (
        shared::domain::EventId::parse(event),
        shared::domain::SeatId::parse(seat),
    ) {
        (Ok(event), Ok(seat)) => shared::store::seat_item_key(&event, &seat),
        _ => HashMap::new(),
    }
}

/// How a raw or naive claim is issued.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum RawClaim {
    /// One conditional UpdateItem on the seat: the store's ceiling.
    ConditionalUpdate,
    /// GetItem the seat, then an unconditional write if it looked free.
    ReadThenWrite,
    /// Look for another order holding the seat (a claim marker), then
    /// attach the seat to this order: "findFirst, then update".
    CheckThenAttach,
}

/// Claims straight on the client. Returns per-seat "winners" (orders that
/// were told they got the seat).
pub(super) async fn raw_claims(
    client: &Client,
    table: &str,
    event: &str,
    plan: Vec<(usize, String)>,
    in_flight: usize,
    how: RawClaim,
) -> Result<(Timing, HashMap<String, HashSet<usize>>), String> {
    let sem = Arc::new(Semaphore::new(in_flight));
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for (o, seat) in plan {
        let (client, table, event, sem) = (
            client.clone(),
            table.to_owned(),
            event.to_owned(),
            sem.clone(),
        );
        tasks.spawn(async move {
            let _permit = sem.acquire_owned().await;
            let t = Instant::now();
            let order = format!("naive-order-{o}");
            let won = claim(&client, &table, &event, &seat, &order, how).await?;
            Ok::<_, String>((t.elapsed().as_secs_f64() * 1000.0, o, seat, won))
        });
    }
    let mut timing = Timing::default();
    let mut winners: HashMap<String, HashSet<usize>> = HashMap::new();
    while let Some(done) = tasks.join_next().await {
        let (ms, o, seat, won) = done.map_err(|e| e.to_string())??;
        timing.latencies_ms.push(ms);
        if won {
            winners.entry(seat).or_default().insert(o);
        }
    }
    timing.wall = started.elapsed();
    Ok((timing, winners))
}

/// One claim of `seat` for `order`, issued `how`: whether the order was
/// told it got the seat.
async fn claim(
    client: &Client,
    table: &str,
    event: &str,
    seat: &str,
    order: &str,
    how: RawClaim,
) -> Result<bool, String> {
    let now = shared::world::now().0;
    match how {
        RawClaim::ConditionalUpdate => {
            Ok(conditional_update(client, table, event, seat, order, now).await)
        }
        RawClaim::ReadThenWrite => read_then_write(client, table, event, seat, order).await,
        RawClaim::CheckThenAttach => check_then_attach(client, table, event, seat, order).await,
    }
}

/// [`RawClaim::ConditionalUpdate`]: won if the condition held.
async fn conditional_update(
    client: &Client,
    table: &str,
    event: &str,
    seat: &str,
    order: &str,
    now: i64,
) -> bool {
    client
        .update_item()
        .table_name(table)
        .set_key(Some(seat_key(event, seat)))
        .update_expression("SET #status = :held, holderOrderId = :o, holdExpiresAt = :exp")
        .condition_expression("attribute_exists(PK) AND (attribute_not_exists(holderOrderId) OR holdExpiresAt < :now)")
        .expression_attribute_names("#status", "status")
        .expression_attribute_values(":held", AttributeValue::S("HELD".into()))
        .expression_attribute_values(":o", AttributeValue::S(order.to_owned()))
        .expression_attribute_values(":exp", AttributeValue::N((now + 600_000).to_string()))
        .expression_attribute_values(":now", AttributeValue::N(now.to_string()))
        .send()
        .await
        .is_ok()
}

/// [`RawClaim::ReadThenWrite`]: won if the seat looked free when read.
async fn read_then_write(
    client: &Client,
    table: &str,
    event: &str,
    seat: &str,
    order: &str,
) -> Result<bool, String> {
    let current = client
        .get_item()
        .table_name(table)
        .set_key(Some(seat_key(event, seat)))
        .consistent_read(true)
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let free = current
        .item
        .as_ref()
        .is_some_and(|i| !i.contains_key("holderOrderId"));
    if free {
        client
            .update_item()
            .table_name(table)
            .set_key(Some(seat_key(event, seat)))
            .update_expression("SET #status = :held, holderOrderId = :o")
            .expression_attribute_names("#status", "status")
            .expression_attribute_values(":held", AttributeValue::S("HELD".into()))
            .expression_attribute_values(":o", AttributeValue::S(order.to_owned()))
            .send()
            .await
            .map_err(|e| e.to_string())?;
    }
    Ok(free)
}

/// [`RawClaim::CheckThenAttach`]: won if no claim marker was found.
async fn check_then_attach(
    client: &Client,
    table: &str,
    event: &str,
    seat: &str,
    order: &str,
) -> Result<bool, String> {
    let marker = HashMap::from([
        ("PK".to_owned(), AttributeValue::S(format!("NAIVE#{event}"))),
        ("SK".to_owned(), AttributeValue::S(format!("CLAIM#{seat}"))),
    ]);
    let existing = client
        .get_item()
        .table_name(table)
        .set_key(Some(marker.clone()))
        .consistent_read(true)
        .send()
        .await
        .map_err(|e| e.to_string())?;
    let free = existing.item.is_none();
    if free {
        let mut item = marker;
        item.insert("orderId".into(), AttributeValue::S(order.to_owned()));
        client
            .put_item()
            .table_name(table)
            .set_item(Some(item))
            .send()
            .await
            .map_err(|e| e.to_string())?;
    }
    Ok(free)
}

pub(super) fn double_held(winners: &HashMap<String, HashSet<usize>>) -> usize {
    winners.values().filter(|w| w.len() > 1).count()
}
