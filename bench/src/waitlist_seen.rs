//! What the waitlist bench saw once its run was over: which offer holds
//! each freed seat (read from the table), when each offer's transaction
//! ended (from the offerer's recorded requests), the offers judged by the
//! history checker against the line, and the row.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;

use crate::capacity::{Metered, Recorded};
use crate::goals::{Bound, Goal};
use crate::kit::{Row, Timing};
use crate::waitlist_setup::{seat_id, Holder, Unit, WaitlistOffers, Way, WAYS};
use crowdcheck::history::{check_waitlist, MadeOffer, OfferedUnits, WaitEntry};
use shared::domain::{EventId, OrderId, SeatId, SeatState};
use shared::offerer::OffererRun;
use shared::store::SeatRead;
use shared::App;

/// The contract's bounds on an offer's latency (docs/API.md, "Offers",
/// how fast): 2 s at p99, 5 s at most.
pub const OFFER_P99_GOAL_MS: f64 = 2_000.0;
pub const OFFER_MAX_GOAL_MS: f64 = 5_000.0;

/// What a free did: the seats it freed, when (wall-clock ms), the
/// route's status (`0`: an expiry, no route), and the crowd's clicks on
/// those seats (each answer's status and error code).
pub(crate) struct Freed {
    pub way: Way,
    pub seats: Vec<Unit>,
    pub at_ms: i64,
    pub status: u16,
    /// The route's error code, if it answered one.
    pub error: String,
    pub clicks: Vec<(u16, String)>,
}

/// The latency of each freed seat's offer: from its free to the end of
/// the transaction that made the offer holding it. Seats never offered
/// are left out (the caller counts them).
pub(crate) fn latencies_ms<'a>(
    freed: impl Iterator<Item = &'a Freed>,
    offer_of_seat: &HashMap<String, String>,
    landed_ms: &HashMap<String, i64>,
) -> Vec<f64> {
    freed
        .flat_map(|f| f.seats.iter().map(move |s| (f.at_ms, seat_id(s))))
        .filter_map(|(at, seat)| {
            let landed = landed_ms.get(offer_of_seat.get(&seat)?)?;
            Some((landed - at) as f64)
        })
        .collect()
}

/// Where to read what the run left.
pub(crate) struct Seen<'a> {
    pub app: &'a App,
    pub event: &'a EventId,
    pub holders: &'a [Holder],
    pub entries: &'a [WaitEntry],
}

/// What the offerer cost per offer.
pub(crate) struct PerOffer {
    pub requests: f64,
    pub read_units: f64,
    pub write_units: f64,
    /// The read units by the key prefix they were charged to, most first:
    /// where an offer's reads go.
    pub reads_by_prefix: Vec<(String, f64)>,
}

impl PerOffer {
    /// Its read units by key prefix, as text (`MAP# 18.7, WENTRY# 2.9`).
    fn reads_by_prefix_text(&self) -> String {
        let parts = self.reads_by_prefix.iter();
        let parts = parts.map(|(prefix, units)| format!("{prefix} {units:.1}"));
        parts.collect::<Vec<_>>().join(", ")
    }
}

impl Seen<'_> {
    /// The row: latencies, what each offer cost, and the counts that
    /// must hold.
    pub async fn row(
        &self,
        size: WaitlistOffers,
        freed: Vec<Freed>,
        records: Vec<Recorded>,
        metered: Metered,
        run: OffererRun,
        setup_took: Duration,
    ) -> Result<(Row, PerOffer), String> {
        let offer_of_seat = self.offer_of_seat().await?;
        let offers = self.offers(&offer_of_seat).await?;
        let landed = landed_ms(&records);
        let latencies = latencies_ms(freed.iter(), &offer_of_seat, &landed);
        let unoffered = size.freed() - latencies.len();
        let early = latencies.iter().filter(|ms| **ms < 0.0).count();
        let verdict = check_waitlist(self.entries, &offers);
        let refused: Vec<String> = freed
            .iter()
            .filter(|f| f.status != 0 && !(200..300).contains(&f.status))
            .map(|f| format!("{} {} {}", f.way.name(), f.status, f.error))
            .collect();
        let unoffered_by_way = counted(freed.iter().flat_map(|f| {
            let not = f
                .seats
                .iter()
                .filter(|s| !offer_of_seat.contains_key(&seat_id(s)));
            not.map(|_| f.way.name().to_owned())
        }));
        let by_way: Vec<String> = WAYS
            .iter()
            .map(|way| {
                let of_way: Vec<&Freed> = freed.iter().filter(|f| f.way == *way).collect();
                let t = Timing {
                    latencies_ms: latencies_ms(of_way.into_iter(), &offer_of_seat, &landed),
                    wall: Duration::ZERO,
                };
                format!(
                    "{} {:.0}/{:.0}/{:.0}",
                    way.name(),
                    t.p50(),
                    t.p99(),
                    t.max()
                )
            })
            .collect();
        let cost = self.per_offer(&records, offers.len()).await?;
        let throttled: u64 = metered.throttled.values().sum();
        let conflicts = metered.conflicts;
        let crowd = Crowd::of(&freed);
        let timing = Timing {
            latencies_ms: latencies,
            wall: Duration::from_millis(u64::try_from(size.spread_ms).unwrap_or(0)),
        };
        let scenario = format!(
            "waitlist offers: {} seats sold out, {} WAITING, {} seats freed over {} s by {} \
             (offerer: the tick, told of frees by the stream's count, metered; latency from the free to the offer's write)",
            size.seats(),
            size.entries,
            size.freed(),
            size.spread_ms / 1_000,
            WAYS.map(Way::name).join(", "),
        );
        let correctness = format!(
            "{} of {} freed seats offered ({unoffered} not, {early} before their free) in {} offers \
             ({} of them by the tick's {} looks; not offered by way: {}); \
             latency p50/p99/max ms by way: {}; history checker: {} violations in {} operations; {} frees answered other than 2xx \
             ({}); {throttled} attempts throttled, {conflicts} refused for a transaction in flight; \
             the crowd's {} clicks on freed seats by {} public orders: {} won, answered {}; \
             per offer: {:.1} store requests, {:.1} read units ({}), {:.1} write units (measured, \
             the offerer's every request: the projector's, with the seat map's projection and \
             the frees' count, and the tick's); setup {:.0} s",
            size.freed() - unoffered,
            size.freed(),
            offers.len(),
            run.offers,
            run.looks,
            listed(&unoffered_by_way),
            by_way.join(", "),
            verdict.violations.len(),
            verdict.operations,
            refused.len(),
            listed(&counted(refused.iter().cloned())),
            crowd.clicks,
            size.crowd_orders,
            crowd.won,
            crowd.answers(),
            cost.requests,
            cost.read_units,
            cost.reads_by_prefix_text(),
            cost.write_units,
            setup_took.as_secs_f64(),
        );
        for v in verdict.violations.iter().take(5) {
            eprintln!("waitlist bench: {v}");
        }
        let goals = vec![
            Goal::new(
                format!(
                    "waitlist offers ({} WAITING): public claims that took a freed seat",
                    size.entries
                ),
                crowd.won as f64,
                Bound::AtMost(0.0),
                "issue 48, item 4: nothing races an offer",
            ),
            Goal::new(
                format!(
                    "waitlist offers ({} WAITING): the crowd's clicks answered 503",
                    size.entries
                ),
                crowd.unavailable as f64,
                Bound::AtMost(0.0),
                "issue 44: every buyer an answer",
            ),
            Goal::new(
                format!(
                    "waitlist offers ({} WAITING): offer latency p99 ms",
                    size.entries
                ),
                timing.p99(),
                Bound::AtMost(OFFER_P99_GOAL_MS),
                "docs/API.md, Offers: how fast",
            ),
            Goal::new(
                format!(
                    "waitlist offers ({} WAITING): offer latency max ms",
                    size.entries
                ),
                timing.max(),
                Bound::AtMost(OFFER_MAX_GOAL_MS),
                "docs/API.md, Offers: how fast",
            ),
        ];
        let row = Row {
            scenario,
            timing,
            correctness,
            ok: unoffered == 0
                && early == 0
                && refused.is_empty()
                && crowd.won == 0
                && verdict.violations.is_empty(),
            goals,
        };
        Ok((row, cost))
    }

    /// The offer holding each freed seat, read strongly: a seat's hold by
    /// an order other than its holder's, or a listed seat's offer.
    async fn offer_of_seat(&self) -> Result<HashMap<String, String>, String> {
        let store = &self.app.store;
        let mut offers = HashMap::new();
        for h in self.holders.iter().filter(|h| h.way != Way::Return) {
            for unit in &h.seats {
                let seat = SeatId::parse(&seat_id(unit)).map_err(|e| e.to_string())?;
                let read = store.seat_state(self.event, &seat).await;
                if let SeatRead::Seen(Some(SeatState::Held { order, .. })) =
                    read.map_err(|e| e.to_string())?
                {
                    if order.as_str() != h.order.id {
                        offers.insert(seat_id(unit), order.to_string());
                    }
                }
            }
        }
        let listed = store.listed_seats(self.event).await;
        for listing in listed.map_err(|e| e.to_string())? {
            if let Some((order, _)) = listing.held {
                offers.insert(listing.seat.to_string(), order.to_string());
            }
        }
        Ok(offers)
    }

    /// Each offer as the checker reads it, from its order.
    async fn offers(&self, of_seat: &HashMap<String, String>) -> Result<Vec<MadeOffer>, String> {
        let ids: BTreeSet<&String> = of_seat.values().collect();
        let mut offers = Vec::with_capacity(ids.len());
        for id in ids {
            let order_id = OrderId::parse(id).map_err(|e| e.to_string())?;
            let read = self.app.store.get_order(&order_id).await;
            let order = read
                .map_err(|e| e.to_string())?
                .ok_or("an offer's order is gone")?;
            let order = order.order;
            let offer = order
                .offer
                .as_ref()
                .ok_or("a freed seat held by no offer")?;
            let units = order
                .seats
                .iter()
                .filter_map(|s| unit_of(s.as_str()))
                .collect();
            let listed = offer
                .resales
                .iter()
                .filter_map(|r| Some((format!("seller {}", r.seller), unit_of(r.seat.as_str())?)));
            offers.push(MadeOffer {
                entry: offer.entry_id.as_str().to_owned(),
                order: id.clone(),
                at: order.created_at.0 * 1_000,
                until: order.expires_at.0 * 1_000,
                units: OfferedUnits::Seats(units),
                listed: listed.collect(),
            });
        }
        Ok(offers)
    }

    /// The offerer's requests, and their units priced, per offer made.
    async fn per_offer(&self, records: &[Recorded], offers: usize) -> Result<PerOffer, String> {
        let charges = crate::pricing::price(self.app, records).await?;
        let per = offers.max(1) as f64;
        let mut by_prefix: BTreeMap<String, f64> = BTreeMap::new();
        for charge in charges.iter().filter(|c| c.read_units > 0.0) {
            let prefix = local::iam::key_prefix(&charge.target.pk);
            *by_prefix.entry(prefix).or_default() += charge.read_units / per;
        }
        let mut reads_by_prefix: Vec<(String, f64)> = by_prefix.into_iter().collect();
        reads_by_prefix.sort_by(|a, b| b.1.total_cmp(&a.1));
        Ok(PerOffer {
            requests: records.len() as f64 / per,
            read_units: charges.iter().map(|c| c.read_units).sum::<f64>() / per,
            write_units: charges.iter().map(|c| c.write_units).sum::<f64>() / per,
            reads_by_prefix,
        })
    }
}

/// What the crowd's clicks on freed seats got.
struct Crowd {
    clicks: usize,
    /// Claims that took the seat (a public claim racing an offer won).
    won: usize,
    unavailable: usize,
    by_answer: BTreeMap<String, usize>,
}

impl Crowd {
    fn of(freed: &[Freed]) -> Self {
        let clicks: Vec<&(u16, String)> = freed.iter().flat_map(|f| &f.clicks).collect();
        let by_answer = counted(
            clicks
                .iter()
                .map(|(status, code)| format!("{status} {code}")),
        );
        Crowd {
            clicks: clicks.len(),
            won: clicks.iter().filter(|(status, _)| *status == 200).count(),
            unavailable: clicks.iter().filter(|(status, _)| *status == 503).count(),
            by_answer,
        }
    }

    /// Each answer and how often: `409 waitlist-only × 120, …`.
    fn answers(&self) -> String {
        listed(&self.by_answer)
    }
}

/// How often each of `things` comes.
fn counted(things: impl Iterator<Item = String>) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for thing in things {
        *counts.entry(thing).or_default() += 1;
    }
    counts
}

/// `counts` as text: `a × 2, b × 1`, or `none`.
fn listed(counts: &BTreeMap<String, usize>) -> String {
    let each: Vec<String> = counts.iter().map(|(a, n)| format!("{a} × {n}")).collect();
    match each.is_empty() {
        true => "none".to_owned(),
        false => each.join(", "),
    }
}

/// A seat id as `(section, row, number)`.
fn unit_of(seat: &str) -> Option<Unit> {
    let mut parts = seat.rsplitn(3, '-');
    let number = parts.next()?.parse().ok()?;
    let row = parts.next()?.to_owned();
    Some((parts.next()?.to_owned(), row, number))
}

/// When each order was first written by a transaction that succeeded,
/// as the offerer's client saw it end: an offer's order is new in the
/// transaction that makes the offer.
fn landed_ms(records: &[Recorded]) -> HashMap<String, i64> {
    let mut landed: HashMap<String, i64> = HashMap::new();
    let succeeded = records
        .iter()
        .filter(|r| r.op == "TransactWriteItems" && r.status == Some(200));
    for r in succeeded {
        let Some(ended) = r.ended_ms else { continue };
        let items = r.request["TransactItems"].as_array().into_iter().flatten();
        for item in items.filter_map(|i| i.as_object()?.values().next()) {
            let key = item.get("Key").or_else(|| item.get("Item"));
            let pk = key.and_then(|k| k[shared::store::PK]["S"].as_str());
            if let Some(order) = pk.and_then(|pk| pk.strip_prefix(shared::store::ORDER_PK_PREFIX)) {
                let at = landed.entry(order.to_owned()).or_insert(ended);
                *at = (*at).min(ended);
            }
        }
    }
    landed
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_seat_id_splits_into_its_section_row_and_number() {
        assert_eq!(unit_of("W1-12-7"), Some(("W1".into(), "12".into(), 7)));
        assert_eq!(unit_of("W1-12"), None);
    }

    fn txn(status: u16, ended: i64, pk: &str) -> Recorded {
        Recorded {
            op: "TransactWriteItems".into(),
            request: json!({"TransactItems": [
                {"Update": {"Key": {"PK": {"S": "SEAT#e"}}}},
                {"Put": {"Item": {"PK": {"S": pk}}}},
            ]}),
            status: Some(status),
            response: json!({}),
            caller: None,
            ended_ms: Some(ended),
        }
    }

    #[test]
    fn an_order_lands_with_its_first_transaction_that_succeeded() {
        let records = [
            txn(400, 10, "ORDER#a"),
            txn(200, 30, "ORDER#a"),
            txn(200, 50, "ORDER#a"),
            txn(200, 40, "ORDER#b"),
        ];
        let landed = landed_ms(&records);
        assert_eq!(landed.get("a"), Some(&30));
        assert_eq!(landed.get("b"), Some(&40));
        assert_eq!(landed.len(), 2);
    }
}
