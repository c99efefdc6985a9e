//! The on-sale queue's vocabulary: the bench's crowd at the queue, what
//! one run measured and the contract's goals for it, and the two requests
//! that set a queue up and join it. The queue scenario (queue.rs), its
//! pause and resume (queue_pause.rs), its projection (queue_projection.rs),
//! docs/QUEUE.md (queue_doc.rs) and SCALE.md's queue (scale_queue.rs) share
//! it; it depends on none of them.

use shared::domain::Millis;
use shared::App;

use crate::kit::{reply, Row, Timing};
use crate::queue_draw::DrawListRun;
use crate::replay::{Naming, Rate, Replays};
use crate::{Bound, Goal};

/// The contract's goals (issue 19).
pub const JOIN_GOAL_PER_S: f64 = 20_000.0;
pub const STATUS_GOAL_PER_S: f64 = 200_000.0;
/// The polls at their goal, on the quotas it asks for: a poll's read is an
/// item of its own, so the table's read quota, not a key, binds them, and
/// an account asks AWS for more ahead (as for the on-sale's target).
pub const STATUS_AT_GOAL: Naming = Naming {
    what: "visitor-status polls",
    quotas_from: "as issue 19's goal asks, with room",
    why: "issue 19's goal, served under the meter (modelled) on the read quota it asks for",
};
/// The queue follows the seat map, which may lag the table by 5 seconds
/// (docs/API.md): it pauses and resumes within them.
pub const PAUSE_LAG_GOAL_MS: f64 = 5_000.0;
/// Later joiners are served in join order, within a second (docs/API.md).
pub const INVERSION_BOUND_MS: i64 = 1_000;

/// The bench's crowd at the queue.
#[derive(Debug, Clone, Copy)]
pub struct QueueModel {
    /// Visitors who join, half before the opening and half after.
    pub visitors: usize,
    pub in_flight: usize,
    pub admit_per_minute: u32,
    /// Seats of the small event that runs out and refills.
    pub pause_seats: u32,
}

/// What one run measured.
#[derive(Debug, Clone, Default)]
pub struct QueueRun {
    pub model: Option<QueueModel>,
    pub joins_per_s: f64,
    pub polls_per_s: f64,
    /// Spearman's rho between early joiners' join order and their
    /// admission order.
    pub rho: f64,
    /// The largest inversion among later joiners, on the client's clock:
    /// how long a visitor's join had been answered before another's was
    /// sent that was admitted ahead of it.
    pub inversion_ms: i64,
    pub admitted: u64,
    pub early_first: bool,
    pub measured_per_minute: f64,
    pub pace_error: f64,
    /// Every join's latency, and the joins' wall time.
    pub join_timing: Timing,
    pub mean_wait_s: f64,
    /// Status polls per visitor, as visitor-status schedules them.
    pub polls_per_visitor: f64,
    pub pause_lag_ms: Option<i64>,
    pub resume_lag_ms: Option<i64>,
    pub join: Ceiling,
    pub status: Ceiling,
    /// A join's, a status poll's, an admission's (the admitter's write on
    /// the visitor) and an admitter tick's mean cost (the rest of its
    /// work: reading the joins, the state and what is left, writing the
    /// state).
    pub join_request: PerRequest,
    pub poll_request: PerRequest,
    pub admission_request: PerRequest,
    pub tick_request: PerRequest,
    /// Dollars per 1,000 admitted visitors, by part.
    pub cost: Vec<(&'static str, f64)>,
    /// The joins, and the polls, replayed through the capacity meter
    /// beside the admitter's ticks.
    pub join_replays: Replays,
    pub status_replays: Replays,
    /// The whole draw list followed once the seed was disclosed.
    pub draw: DrawListRun,
}

/// A route's projected ceiling from its recorded requests.
#[derive(Debug, Clone, Default)]
pub struct Ceiling {
    /// Requests a second before any key reaches a partition's limit.
    pub per_s: f64,
    /// The key that reaches it first, and its units per request.
    pub hottest: String,
    pub units_per_request: f64,
    pub reads: bool,
}

/// One kind of request's mean cost, from its recorded requests: what
/// docs/SCALE.md multiplies by the crowd's.
#[derive(Debug, Clone, Copy, Default)]
pub struct PerRequest {
    pub write_units: f64,
    pub read_units: f64,
    /// The same on the table or index nearest its quota
    /// (`crowdcheck::capacity::units_nearest_quota`).
    pub quota_units: (f64, f64),
    /// DynamoDB round trips (each at
    /// [`AWS_REQUEST_MS`](crate::scale_model::AWS_REQUEST_MS) on AWS).
    pub round_trips: f64,
}

impl QueueRun {
    /// The bench table's row: the joins' speed, and what the run proved.
    pub fn row(&self) -> Row {
        let visitors = self.model.map_or(0, |m| m.visitors);
        Row {
            scenario: format!("on-sale queue: {visitors} visitors join, half before the opening, admitted at the pace"),
            timing: self.join_timing.clone(),
            correctness: format!(
                "{} of {visitors} admitted once each; early before late: {}; rho {:+.3}; inversion {} ms; pace error {:.2}%; pause {} ms, resume {} ms; draw list {} of {}, in key order: {} (docs/QUEUE.md)",
                self.admitted,
                if self.early_first { "yes" } else { "NO" },
                self.rho,
                self.inversion_ms,
                self.pace_error * 100.0,
                self.pause_lag_ms.map_or("never".into(), |ms| ms.to_string()),
                self.resume_lag_ms.map_or("never".into(), |ms| ms.to_string()),
                self.draw.entries,
                self.draw.drawn,
                if self.draw.in_order { "yes" } else { "NO" },
            ),
            ok: self.ok(),
            // Published with QUEUE.md's figures, judged with the run's.
            goals: Vec::new(),
        }
    }

    /// The pause and resume lags within the seat map's 5 s, each route's
    /// DynamoDB key ceiling above its goal (these four in this order:
    /// queue_doc.rs names them by place), then each route's replay below its
    /// ceiling under the meter throttling nothing.
    pub fn goals(&self) -> Vec<Goal> {
        if self.model.is_none() {
            return Vec::new();
        }
        let lag = |what: &str, ms: Option<i64>| {
            Goal::seen(
                format!("queue {what} lag (ms)"),
                ms.map(|ms| ms as f64),
                Bound::AtMost(PAUSE_LAG_GOAL_MS),
                "docs/API.md: the seat map's 5 s",
            )
        };
        let ceiling = |what: &str, ceiling: &Ceiling, goal: f64| {
            Goal::new(
                format!("projected {what} DynamoDB key bound (not end to end), requests/s"),
                ceiling.per_s,
                Bound::AtLeast(goal),
                "issue 19's goal",
            )
        };
        [
            lag("pause", self.pause_lag_ms),
            lag("resume", self.resume_lag_ms),
            ceiling("queue join", &self.join, JOIN_GOAL_PER_S),
            ceiling("visitor-status", &self.status, STATUS_GOAL_PER_S),
        ]
        .into_iter()
        .chain(self.replay_goals())
        .chain(self.draw.goals())
        .collect()
    }

    /// Each route's replay, named, with the unit of its rate.
    pub fn replays(&self) -> [(&'static str, &'static str, &Replays); 2] {
        [
            ("queue joins", "joins/s", &self.join_replays),
            ("visitor-status polls", "polls/s", &self.status_replays),
        ]
    }

    /// Each route's replay throttles nothing and answers no 503: below its
    /// ceiling under the meter, and at loads stated apart from the
    /// recording (issue 44 item 7): the crowd's peak docs/SCALE.md models,
    /// and issue 19's goal.
    pub fn replay_goals(&self) -> Vec<Goal> {
        let peak = "the crowd's peak at the queue as docs/SCALE.md models it (`scale_queue::crowd_peaks`), served under the meter (modelled)";
        let goal = "issue 19's goal, served under the meter (modelled) at the quotas an account has by default";
        self.replays()
            .into_iter()
            .flat_map(|(what, unit, replays)| {
                let mut goals = replays.below_the_ceiling_goals(what, unit);
                goals.extend(replays.served_goals(Rate::Peak, (what, unit), peak));
                goals.extend(replays.served_goals(Rate::Target, (what, unit), goal));
                goals.extend(replays.at_requested.iter().flat_map(|at| at.goals(unit)));
                goals
            })
            .collect()
    }

    /// The counts: every visitor admitted once, in order, at the pace, and
    /// the queue paused and resumed at all (how fast: [`Self::goals`]).
    pub fn ok(&self) -> bool {
        let Some(model) = self.model else {
            return false;
        };
        self.admitted == model.visitors as u64
            && self.early_first
            && self.rho.abs() < rho_bound(model.visitors / 2)
            && self.inversion_ms <= INVERSION_BOUND_MS
            && self.pace_error <= 0.01
            && self.pause_lag_ms.is_some()
            && self.resume_lag_ms.is_some()
            && self.draw.ok()
    }
}

/// |rho| of a random order of `n` stays under this but once in ~10,000
/// runs (four standard deviations, 1/sqrt(n - 1)).
fn rho_bound(n: usize) -> f64 {
    4.0 / ((n.max(2) - 1) as f64).sqrt()
}

pub(super) async fn put_queue(
    app: &App,
    event: &str,
    opens_at: Millis,
    per_minute: u32,
) -> Result<(), String> {
    let body = serde_json::json!({"opensAt": opens_at.to_rfc3339(), "admitPerMinute": per_minute});
    match reply(
        app,
        "PUT",
        &format!("/events/{event}/queue"),
        None,
        &body.to_string(),
    )
    .await
    {
        (200, _) => Ok(()),
        (s, b) => Err(format!("put-queue: {s} {b}")),
    }
}

/// One visitor joins `event`'s queue: join-queue's status and reply.
pub(super) async fn join_queue(app: &App, event: &str) -> (u16, serde_json::Value) {
    reply(
        app,
        "POST",
        &format!("/events/{event}/queue/visitors"),
        None,
        "",
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_replays_are_judged_at_the_crowds_peak_and_the_goal_not_only_below_the_ceiling() {
        use crate::replay::{Layout, Replayed};
        let served = Replayed {
            layout: Layout::New,
            requests: 10,
            first_try: 10,
            ..Replayed::default()
        };
        let replays = Replays {
            ceiling: 1_000.0,
            runs: [
                (Rate::BelowTheCeiling, 800.0),
                (Rate::Peak, 500.0),
                (Rate::Target, 20_000.0),
            ]
            .into_iter()
            .map(|(rate, units)| (rate, units, served.clone()))
            .collect(),
            at_requested: None,
        };
        let mut run = QueueRun {
            join_replays: replays.clone(),
            status_replays: replays,
            ..QueueRun::default()
        };
        let goals = run.replay_goals();
        // Three rates, two goals each, two routes.
        assert_eq!(goals.len(), 12, "{goals:?}");
        assert!(goals.iter().all(Goal::met));
        let at = |units: &str| goals.iter().filter(|g| g.figure.contains(units)).count();
        assert_eq!((at(" at 500 "), at(" at 20000 ")), (4, 4), "{goals:?}");
        // The goal's run answering 503 fails its goals, whatever the others.
        run.join_replays.runs[2].2.gave_up = 1;
        let missed = |run: &QueueRun| -> Vec<String> {
            let goals = run.replay_goals().into_iter();
            goals.filter(|g| !g.met()).map(|g| g.figure).collect()
        };
        let missed_now = missed(&run);
        assert_eq!(missed_now.len(), 2, "{missed_now:?}");
        assert!(missed_now
            .iter()
            .all(|f| f.starts_with("queue joins") && f.contains(" at 20000 ")));
        // The polls' goal on the quotas it asks for is judged too: its
        // run answering 503 fails the run.
        run.join_replays.runs[2].2.gave_up = 0;
        run.status_replays.runs.truncate(2);
        run.status_replays.at_requested = Some(crate::replay::AtRequestedQuotas {
            naming: STATUS_AT_GOAL,
            units: STATUS_GOAL_PER_S,
            run: Replayed {
                gave_up: 3,
                ..served.clone()
            },
            ceiling: crate::replay::Ceiling {
                per_s: 300_000.0,
                binding: "a key".into(),
            },
            ..Default::default()
        });
        let missed_now = missed(&run);
        assert_eq!(missed_now.len(), 1, "{missed_now:?}");
        let only = &missed_now[0];
        assert!(only.starts_with("visitor-status polls replayed") && only.contains("503"));
    }

    #[test]
    fn the_rho_bound_shrinks_with_the_crowd() {
        assert!(rho_bound(200) > rho_bound(10_000));
        assert!((rho_bound(10_001) - 0.04).abs() < 1e-9);
    }
}
