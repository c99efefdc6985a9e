//! docs/SCALE.md's on-sale queue: the scale model's crowd in front of the
//! seats. Half the crowd joins in the ten minutes before the opening (as
//! in the queue bench), the other half in the ten after; the operator
//! admits at the crowd's average rate (what the rest of SCALE.md projects
//! the seats to take); each admitted visitor buys, and once the event's
//! supply is admitted everyone still waiting learns SOLD_OUT at its next
//! poll. Visitors poll when visitor-status says
//! ([`shared::domain::queue::poll_after_ms`]). What a join, a poll and an
//! admitter tick cost is the queue run's, recorded (docs/QUEUE.md).

use std::fmt::Write as _;

use shared::admitter::TICK_MS;
use shared::domain::queue::{poll_after_ms, POLL_MAX_MS};
use shared::domain::Millis;

use super::crowd_projection::{CROWD_BUYERS, CROWD_SECONDS, OVERSUBSCRIBED, PEAK_OVER_AVERAGE};
use super::queue_model::{Ceiling, PerRequest, QueueRun};
use super::queue_projection::{polls_between, ADMITTER_MEMORY_GB, API_MEMORY_GB};
use super::scale_model::{
    AWS_REQUEST_MS, LOG_BYTES_PER_INVOCATION, USD_PER_GB_CLOUDWATCH_LOGS,
    USD_PER_LAMBDA_GB_SECOND_ARM, USD_PER_MILLION_HTTP_API_REQUESTS,
    USD_PER_MILLION_LAMBDA_REQUESTS, USD_PER_MILLION_READ_UNITS, USD_PER_MILLION_WRITE_UNITS,
};

/// The share of the crowd that joins before the opening.
const EARLY_SHARE: f64 = 0.5;
/// Visitors of each half followed poll by poll, standing for the rest.
const SAMPLES: usize = 20_000;
/// Spreads the early half's drawn places over their join times, so the
/// draw does not depend on when one joined. It shares no factor with
/// [`SAMPLES`], so every place is drawn once (a test holds it).
const DRAW_STRIDE: usize = 7_919;

/// The crowd at the queue, and what a request of each kind costs.
pub(super) struct QueueAtScale {
    /// Admissions a second: the crowd's average rate.
    pub pace_per_s: f64,
    /// Visitors waiting at the opening (the early half).
    pub early: f64,
    /// Seconds from the opening until the event's supply is admitted.
    pub sell_out_s: f64,
    pub joins_peak_per_s: f64,
    /// In the 30 s after the opening: every early visitor's first poll
    /// after it, spread over those 30 s, on top of the polls of those who
    /// polled already (their steady rate, every early visitor counted: a
    /// bound).
    pub polls_peak_per_s: f64,
    /// The early visitors' first polls after the opening, a second.
    pub first_polls_per_s: f64,
    /// The same crowd polling every two seconds, for comparison.
    pub fixed_polls_per_s: f64,
    pub polls_per_visitor: f64,
    pub join: PerRequest,
    pub poll: PerRequest,
    pub admission: PerRequest,
    pub tick: PerRequest,
    pub join_ceiling: Ceiling,
    pub status_ceiling: Ceiling,
}

/// The queue's place for a visitor: 1 = first admitted.
fn turn_ms(place: f64, pace_per_s: f64, joined_ms: f64) -> f64 {
    (place / pace_per_s * 1_000.0).max(joined_ms)
}

/// Polls a second from `waiting` visitors at `pace_per_s`, the k-th due
/// k / pace seconds from now, each polling when its reply says.
fn polls_per_s(waiting: f64, pace_per_s: f64) -> f64 {
    (1..=waiting as u64)
        .map(|k| {
            let turn = Millis((k as f64 / pace_per_s * 1_000.0) as i64);
            1_000.0 / poll_after_ms(turn, Millis(0)) as f64
        })
        .sum()
}

/// The crowd's peaks at the queue, joins and status polls a second
/// (modelled from the crowd, not from any run): the loads the queue's
/// replays are judged at.
pub(crate) fn crowd_peaks() -> (f64, f64) {
    let pace = CROWD_BUYERS / CROWD_SECONDS;
    let early = CROWD_BUYERS * EARLY_SHARE;
    let joins = PEAK_OVER_AVERAGE * early / CROWD_SECONDS;
    let polls = early / (POLL_MAX_MS as f64 / 1_000.0) + polls_per_s(early, pace);
    (joins, polls)
}

pub(super) fn project(run: &QueueRun) -> Option<QueueAtScale> {
    run.model?;
    let pace = CROWD_BUYERS / CROWD_SECONDS;
    let early = CROWD_BUYERS * EARLY_SHARE;
    let late = CROWD_BUYERS - early;
    let window_ms = CROWD_SECONDS * 1_000.0;
    // The late half joins evenly after the opening, behind the early one.
    let late_join_ms = |place: f64| (place - early) / late * window_ms;
    let supply = CROWD_BUYERS / OVERSUBSCRIBED;
    let sell_out_ms = turn_ms(supply, pace, late_join_ms(supply).max(0.0));
    let polls = |joined: f64, place: f64, spread: u64| {
        let turn = turn_ms(place, pace, joined);
        let until = if place <= supply { turn } else { sell_out_ms };
        polls_between(joined as i64, turn as i64, until as i64, spread) as f64
    };
    let n = SAMPLES as f64;
    let early_polls: f64 = (0..SAMPLES)
        .map(|i| {
            let joined = -window_ms * (i as f64 + 0.5) / n;
            let place = 1.0 + ((i * DRAW_STRIDE) % SAMPLES) as f64 * early / n;
            // Its instant of the 30 s after the opening, unrelated to its
            // place (a hash of its id), spread evenly over the samples.
            let spread = (i * POLL_MAX_MS as usize / SAMPLES) as u64;
            polls(joined, place, spread)
        })
        .sum();
    let late_polls: f64 = (0..SAMPLES)
        .map(|j| {
            let place = early + 1.0 + j as f64 * late / n;
            polls(late_join_ms(place), place, 0)
        })
        .sum();
    let (joins_peak_per_s, polls_peak_per_s) = crowd_peaks();
    Some(QueueAtScale {
        pace_per_s: pace,
        early,
        sell_out_s: sell_out_ms / 1_000.0,
        joins_peak_per_s,
        polls_peak_per_s,
        first_polls_per_s: early / (POLL_MAX_MS as f64 / 1_000.0),
        fixed_polls_per_s: early / 2.0,
        polls_per_visitor: (early_polls * early / n + late_polls * late / n) / CROWD_BUYERS,
        join: run.join_request,
        poll: run.poll_request,
        admission: run.admission_request,
        tick: run.tick_request,
        join_ceiling: run.join.clone(),
        status_ceiling: run.status.clone(),
    })
}

impl QueueAtScale {
    /// Lambda executions at the peak, at real latency (Little's law).
    pub(super) fn concurrency(&self) -> f64 {
        (self.joins_peak_per_s * self.join.round_trips
            + self.polls_peak_per_s * self.poll.round_trips)
            * AWS_REQUEST_MS
            / 1_000.0
    }

    /// The key that fills first under joins, and under polls (the queue
    /// run's), each with the units/s it takes at the peak.
    pub(super) fn hottest_keys(&self) -> [(&'static str, &Ceiling, f64); 2] {
        [
            (
                "joins",
                &self.join_ceiling,
                self.joins_peak_per_s * self.join_ceiling.units_per_request,
            ),
            (
                "status polls",
                &self.status_ceiling,
                self.polls_peak_per_s * self.status_ceiling.units_per_request,
            ),
        ]
    }

    /// Dollars per buyer of the crowd: its join, its polls, and its share
    /// of the admissions (one per buyer the event serves) and of the
    /// admitter's ticks and runs over the on-sale's twenty minutes (each
    /// tick priced as the run's mean tick).
    pub(super) fn usd_per_buyer(&self) -> f64 {
        let ticks = 2.0 * CROWD_SECONDS * 1_000.0 / TICK_MS as f64 / CROWD_BUYERS;
        let admissions = 1.0 / OVERSUBSCRIBED;
        let units = |f: fn(&PerRequest) -> f64| {
            f(&self.join)
                + self.polls_per_visitor * f(&self.poll)
                + admissions * f(&self.admission)
                + ticks * f(&self.tick)
        };
        let dynamodb = units(|r| r.write_units) * USD_PER_MILLION_WRITE_UNITS / 1e6
            + units(|r| r.read_units) * USD_PER_MILLION_READ_UNITS / 1e6;
        let requests = 1.0 + self.polls_per_visitor;
        let seconds = (self.join.round_trips + self.polls_per_visitor * self.poll.round_trips)
            * AWS_REQUEST_MS
            / 1_000.0;
        let admitter = 2.0 * CROWD_SECONDS * ADMITTER_MEMORY_GB / CROWD_BUYERS;
        let lambda = requests * USD_PER_MILLION_LAMBDA_REQUESTS / 1e6
            + (seconds * API_MEMORY_GB + admitter) * USD_PER_LAMBDA_GB_SECOND_ARM;
        let api = requests * USD_PER_MILLION_HTTP_API_REQUESTS / 1e6;
        let logs = requests * LOG_BYTES_PER_INVOCATION / 1e9 * USD_PER_GB_CLOUDWATCH_LOGS;
        dynamodb + lambda + api + logs
    }

    pub(super) fn section(&self, out: &mut String) {
        let _ = writeln!(out, "## The on-sale queue in front\n");
        let _ = writeln!(
            out,
            "The same crowd through the queue: half joins in the ten minutes before the opening, half in the ten after; the operator admits at the crowd's average rate, **{:.0} visitors/s**, so the seats meet the load projected above; once the first {:.0} buyers (the quarter the event serves, four times oversubscribed) are admitted, everyone still waiting learns `SOLD_OUT` at its next poll. \
             A waiting visitor polls when visitor-status's `pollAfterSeconds` says: before the opening every 30 s and then at its own instant of the 30 s after the opening (unrelated to its draw, so the crowd's first polls after the opening spread over those 30 s instead of landing at once), after it half the time to its turn, every 2 s near it, every 30 s far from it (modelled from `shared::domain::queue`'s schedule). A join, a poll and an admitter tick cost what the queue run recorded ([QUEUE.md](QUEUE.md)); the same run's ceilings say where a key fills.\n",
            self.pace_per_s,
            CROWD_BUYERS / OVERSUBSCRIBED,
        );
        let _ = writeln!(
            out,
            "| measure | value |\n|---|---:|\n\
             | waiting at the opening | {:.0} |\n\
             | sold out, after the opening | {:.0} s |\n\
             | joins at the peak ({PEAK_OVER_AVERAGE:.0}× the average) | {:.0}/s |\n\
             | first polls after the opening (spread over {:.0} s) | {:.0}/s |\n\
             | status polls in those seconds (their peak, bounded) | {:.0}/s |\n\
             | the same crowd polling every 2 s | {:.0}/s |\n\
             | status polls per visitor, the crowd's mean | {:.2} |\n\
             | Lambda executions at the peak, at real latency | {:.0} |\n",
            self.early,
            self.sell_out_s,
            self.joins_peak_per_s,
            POLL_MAX_MS as f64 / 1_000.0,
            self.first_polls_per_s,
            self.polls_peak_per_s,
            self.fixed_polls_per_s,
            self.polls_per_visitor,
            self.concurrency(),
        );
        let _ = writeln!(
            out,
            "The queue's requests are in the limits below: API Gateway's account quota counts them with the buyers', the two queue routes have limits of their own, and their hottest keys are rows of their own. Its cost is a row of the cost table, added to the crowd priced as if it met the seats directly: with the queue in front, the three quarters told `SOLD_OUT` never open orders, so that total is an upper bound.\n"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::{DRAW_STRIDE, SAMPLES};

    #[test]
    fn the_draw_gives_every_sampled_place_once() {
        let places: std::collections::BTreeSet<usize> =
            (0..SAMPLES).map(|i| (i * DRAW_STRIDE) % SAMPLES).collect();
        assert_eq!(places.len(), SAMPLES);
    }
}
