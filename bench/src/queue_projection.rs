//! The queue's ceilings and cost per 1,000 admitted visitors, from the
//! requests [`super::queue`] recorded.

use shared::admitter::TICK_MS;
use shared::domain::queue::{poll_after_ms, poll_before_opening_ms};
use shared::domain::Millis;
use shared::store::QUEUE_COPIES;

use super::queue_model::{Ceiling, PerRequest, QueueRun};
use super::scale_model::{self, AWS_REQUEST_MS};
use crate::capacity::{
    self, Charge, KeyLoad, Recorded, PARTITION_READ_UNITS, PARTITION_WRITE_UNITS,
};

/// The admitter function's memory (template.yaml), for its cost.
pub(super) const ADMITTER_MEMORY_GB: f64 = 0.5;
/// An API function's memory (template.yaml's default).
pub(super) const API_MEMORY_GB: f64 = 0.25;

/// The mean of `n` requests whose DynamoDB calls were `records`, priced
/// as `charges`.
pub(super) fn per_request(charges: &[Charge], records: &[Recorded], n: u64) -> PerRequest {
    let n = n.max(1) as f64;
    PerRequest {
        write_units: charges.iter().map(|c| c.write_units).sum::<f64>() / n,
        read_units: charges.iter().map(|c| c.read_units).sum::<f64>() / n,
        quota_units: {
            let (write, read) = crowdcheck::capacity::units_nearest_quota(charges);
            (write / n, read / n)
        },
        round_trips: records.len() as f64 / n,
    }
}

/// The route's ceiling from its recorded requests (`n` of them), with
/// each instance's copy of the queue's state read once a second: on AWS
/// an instance serves one request at a time, each taking its round trips
/// at [`AWS_REQUEST_MS`], so it reads its copy once per so many requests.
pub(super) fn ceiling(charges: &[Charge], n: usize, records: &[Recorded]) -> Ceiling {
    let n = n.max(1) as f64;
    let is_copy = |c: &Charge| c.target.index.is_none() && is_queue_copy(&c.target.pk);
    let per_request: Vec<KeyLoad> = capacity::totals(
        &charges
            .iter()
            .filter(|c| !is_copy(c))
            .cloned()
            .collect::<Vec<_>>(),
        &|t| t.clone(),
    );
    let copy_read = charges
        .iter()
        .filter(|c| is_copy(c))
        .map(|c| c.read_units)
        .fold(0.0, f64::max);
    let round_trips = records.len() as f64 / n;
    let requests_per_instance_s = 1_000.0 / (round_trips * AWS_REQUEST_MS).max(1.0);
    let copy_units = copy_read / requests_per_instance_s / f64::from(QUEUE_COPIES);
    let mut best = Ceiling {
        per_s: f64::INFINITY,
        ..Ceiling::default()
    };
    let mut consider = |key: String, units: f64, reads: bool| {
        let limit = if reads {
            PARTITION_READ_UNITS
        } else {
            PARTITION_WRITE_UNITS
        };
        let per_s = limit / units.max(1e-12);
        if per_s < best.per_s {
            best = Ceiling {
                per_s,
                hottest: key,
                units_per_request: units,
                reads,
            };
        }
    };
    for load in &per_request {
        let key = describe(&load.target);
        consider(key.clone(), load.write_units / n, false);
        consider(key, load.read_units / n, true);
    }
    if copy_units > 0.0 {
        consider("QUEUE#{ref}#{copy} (each of 8)".into(), copy_units, true);
    }
    best
}

fn is_queue_copy(pk: &str) -> bool {
    pk.strip_prefix(shared::store::QUEUE_PK_PREFIX)
        .is_some_and(|rest| rest.contains('#'))
}

/// A key as the docs show it: the event ref and ids elided.
fn describe(target: &capacity::Target) -> String {
    let prefix = target.pk.split('#').next().unwrap_or_default();
    match &target.index {
        Some(index) => format!(
            "{index}/{}",
            target
                .pk
                .rsplit_once('#')
                .map_or(target.pk.as_str(), |(_, shard)| shard)
        ),
        None => format!("{prefix}#…"),
    }
}

/// The status polls of a visitor who joined at `joined` (ms; the queue
/// opens at 0) and whose turn is estimated at `turn`, polling when each
/// reply says until its wait ends at `until` (its admission, or the
/// sell-out): before the opening toward its own instant of the 30 s after
/// it (`spread`, [`poll_before_opening_ms`]), then [`poll_after_ms`]; each
/// poll while it waits, and the one that finds the wait over. None if it
/// ended as it joined.
pub(super) fn polls_between(joined: i64, turn: i64, until: i64, spread: u64) -> u64 {
    let (mut now, mut polls) = (joined, 0);
    while now < until {
        now += if now < 0 {
            poll_before_opening_ms(Millis(0), Millis(now), spread)
        } else {
            poll_after_ms(Millis(turn), Millis(now))
        };
        polls += 1;
    }
    polls
}

/// Dollars per 1,000 admitted visitors: each visitor joins once, polls
/// as visitor-status tells it to while it waits (the run's mean count),
/// and is admitted; the admitter ticks four times a second for as long as
/// it takes at the pace.
pub(super) fn cost(
    run: &QueueRun,
    joins: &[Charge],
    polls: &[Charge],
    ticks: &[Charge],
    tick_count: u64,
) -> Vec<(&'static str, f64)> {
    let Some(model) = run.model else {
        return Vec::new();
    };
    let visitors = model.visitors as f64;
    let units = |charges: &[Charge]| {
        let (w, r) = charges.iter().fold((0.0, 0.0), |(w, r), c| {
            (w + c.write_units, r + c.read_units)
        });
        (w, r)
    };
    let polls_per_visitor = run.polls_per_visitor;
    let (jw, jr) = units(joins);
    let (pw, pr) = units(polls);
    let (tw, tr) = units(ticks);
    let per_visitor_w = jw / visitors + pw / visitors * polls_per_visitor + tw / visitors;
    let per_visitor_r = jr / visitors + pr / visitors * polls_per_visitor + tr / visitors;
    let dynamodb = 1_000.0
        * (per_visitor_w * scale_model::USD_PER_MILLION_WRITE_UNITS
            + per_visitor_r * scale_model::USD_PER_MILLION_READ_UNITS)
        / 1e6;
    let requests = 1.0 + polls_per_visitor;
    let api_seconds = requests * 2.0 * AWS_REQUEST_MS / 1_000.0;
    let lambda = 1_000.0
        * (requests * scale_model::USD_PER_MILLION_LAMBDA_REQUESTS / 1e6
            + api_seconds * API_MEMORY_GB * scale_model::USD_PER_LAMBDA_GB_SECOND_ARM);
    let queue_seconds = tick_count as f64 * TICK_MS as f64 / 1_000.0;
    let admitter =
        1_000.0 * queue_seconds * ADMITTER_MEMORY_GB * scale_model::USD_PER_LAMBDA_GB_SECOND_ARM
            / visitors;
    let http = 1_000.0 * requests * scale_model::USD_PER_MILLION_HTTP_API_REQUESTS / 1e6;
    let logs = 1_000.0 * requests * scale_model::LOG_BYTES_PER_INVOCATION / 1e9
        * scale_model::USD_PER_GB_CLOUDWATCH_LOGS;
    vec![
        ("DynamoDB", dynamodb),
        ("Lambda (joins and polls)", lambda),
        ("Lambda (the admitter)", admitter),
        ("HTTP API", http),
        ("CloudWatch Logs", logs),
    ]
}

#[cfg(test)]
mod tests {
    use super::polls_between;

    /// A visitor admitted when its estimate said, `wait` ms after it joined.
    fn polls_while_waiting(wait: i64) -> u64 {
        polls_between(0, wait, wait, 0)
    }

    #[test]
    fn a_visitor_polls_often_only_near_its_turn() {
        // (wait, ms) → polls: every 2 s near the turn, every 30 s far off.
        for (wait, polls) in [
            (0, 0),
            (1_500, 1),
            (4_000, 2),
            (10_000, 4),
            (600_000, 24),
            (3_600_000, 124),
        ] {
            assert_eq!(polls_while_waiting(wait), polls, "{wait} ms");
        }
    }

    #[test]
    fn a_sell_out_ends_a_far_wait_at_the_next_poll() {
        // Its turn an hour off, sold out after 100 s: polls every 30 s,
        // and the fourth (at 120 s) finds the sell-out.
        assert_eq!(polls_between(0, 3_600_000, 100_000, 0), 4);
        // Joined after the sell-out: the join's reply says so.
        assert_eq!(polls_between(200_000, 3_600_000, 100_000, 0), 0);
    }
}
