//! The on-sale queue under a crowd: visitors join through the real
//! handler (half before the opening, half after), the admitter admits them
//! at the operator's pace on a simulated clock (ticks every 250 ms of it,
//! so the pace needs no waiting), every visitor polls its status once, and
//! a small event runs out and refills in real time for the pause and
//! resume lag. Every request is recorded and priced per key
//! ([`crate::capacity`]): the join and status ceilings and the cost per
//! 1,000 admitted come from them.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use shared::admission::{AdmissionClaims, ISSUER};
use shared::admitter::{Admitter, TICK_MS};
use shared::domain::{EventId, Millis};
use shared::App;
use tokio::sync::Semaphore;

use super::pricing::Priced;
use super::pricing::{flattened, price_each};
use super::queue_draw::follow_draw_list;
use super::queue_model::{
    join_queue, put_queue, QueueModel, QueueRun, JOIN_GOAL_PER_S, STATUS_AT_GOAL, STATUS_GOAL_PER_S,
};
use super::queue_projection::per_request;
use super::replay::{at_quotas, quotas_needed, replays_at, Layout, Rate, Stream, REPLAY_SECONDS};
use crate::capacity::{CapacityRecorder, Recorded};
use crate::kit::{reply, unique, Timing};
use crate::{create_event, HOLD_SECONDS};

/// One visitor as the bench knows it: its join's times are the client's
/// own (when it sent the join, when the answer came), not the server's.
struct Joined {
    id: String,
    token: String,
    sent: Millis,
    answered: Millis,
    early: bool,
}

/// Spearman's rho between two orders of the same items: `served[i]` is
/// the join position of the i-th served.
pub fn spearman(served: &[usize]) -> f64 {
    let n = served.len() as f64;
    if n < 2.0 {
        return 0.0;
    }
    let d2: f64 = served
        .iter()
        .enumerate()
        .map(|(rank, joined)| (rank as f64 - *joined as f64).powi(2))
        .sum();
    1.0 - 6.0 * d2 / (n * (n * n - 1.0))
}

/// The largest time by which a visitor's join had been answered before
/// another's was even sent, the other served ahead of it: 0 when every
/// join the client could order is served in that order (joins in flight
/// together have no order a client could see). `joins` holds each
/// visitor's (sent, answered), in service order.
pub fn largest_inversion(joins: &[(i64, i64)]) -> i64 {
    let mut latest_sent = i64::MIN;
    let mut worst = 0;
    for &(sent, answered) in joins {
        worst = worst.max(latest_sent.saturating_sub(answered));
        latest_sent = latest_sent.max(sent);
    }
    worst
}

/// The admitter, the app it runs as, and the event it admits to.
struct Admitting {
    admitter: Admitter,
    app: App,
    event: EventId,
}

/// The queue under a crowd: joins, admissions at the pace with one status
/// poll each, fairness and pace, ceilings and cost, then pause and resume.
pub(super) async fn queue_bench(
    app: App,
    endpoint: &str,
    recorder: CapacityRecorder,
    model: QueueModel,
) -> Result<QueueRun, String> {
    // Instances keep the queue's state a second, as on AWS.
    let mut app = App::new(app.store.clone(), app.config.clone());
    app.memory = app
        .memory
        .with_state_cache_ms(shared::store::QUEUE_CACHE_MS);
    let mut run = QueueRun {
        model: Some(model),
        ..QueueRun::default()
    };
    let event = unique("queue");
    create_event(&app, &event, 100, HOLD_SECONDS).await?;
    let hour = Millis(shared::world::now().0 + 3_600_000);
    put_queue(&app, &event, hour, model.admit_per_minute).await?;

    let mut admitting = Admitting {
        admitter: Admitter::default(),
        app: local::iam::attributed(&app, "admit-visitors"),
        event: EventId::parse(&event).map_err(|e| e.to_string())?,
    };
    let (visitors, join_records, opens) =
        join_crowd(&app, &event, &recorder, model, &mut run, &mut admitting).await?;
    let (polls, tick_records, ticks) = admit_at_pace(
        &app,
        &event,
        &recorder,
        model,
        &mut run,
        &mut admitting,
        &visitors,
    )
    .await?;
    let order = admission_order(&app, &admitting.event, &visitors, model.in_flight).await?;
    run.admitted = order.len() as u64;
    fairness(&mut run, &visitors, &order, opens);
    pace(&mut run, &order, model.admit_per_minute);
    let early = visitors.iter().filter(|v| v.early).count() as u64;
    run.draw = follow_draw_list(&app, &recorder, (&admitting.event, opens), early).await?;
    price_run(
        &app,
        &mut run,
        visitors.len(),
        &join_records,
        &polls,
        &tick_records,
        ticks,
    )
    .await?;

    // Pause and resume, in real time, on a small event of its own.
    let (pause, resume) = super::queue_pause::pause_and_resume(endpoint, model).await?;
    run.pause_lag_ms = pause;
    run.resume_lag_ms = resume;
    Ok(run)
}

/// Joins: half early, then the queue opens now, then half late. The
/// visitors, the joins' records, and when the queue opened.
async fn join_crowd(
    app: &App,
    event: &str,
    recorder: &CapacityRecorder,
    model: QueueModel,
    run: &mut QueueRun,
    admitting: &mut Admitting,
) -> Result<(Vec<Joined>, Vec<Recorded>, Millis), String> {
    recorder.take();
    recorder.set_recording(true);
    let started = Instant::now();
    let mut visitors = joins(
        app,
        event,
        model.visitors / 2,
        model.in_flight,
        true,
        &mut run.join_timing,
    )
    .await?;
    recorder.set_recording(false);
    let early_joins = recorder.take();
    // The admitter counts the early ones before the opening (as it does
    // every 250 ms on AWS), so no late joiner is admitted on the spot.
    admitting
        .admitter
        .tick(&admitting.app, &admitting.event, shared::world::now())
        .await
        .map_err(|e| e.to_string())?;
    let opens = shared::world::now();
    put_queue(app, event, opens, model.admit_per_minute).await?;
    // New instances for the late joins: an instance that read the queue's
    // state before the opening moved keeps it up to a second (each join's
    // rank depends on it), and a real opening does not move.
    let late_app = app.new_process();
    recorder.set_recording(true);
    let late = joins(
        &late_app,
        event,
        model.visitors - model.visitors / 2,
        model.in_flight,
        false,
        &mut run.join_timing,
    )
    .await?;
    recorder.set_recording(false);
    run.join_timing.wall = started.elapsed();
    run.joins_per_s = run.join_timing.per_second();
    visitors.extend(late);
    let join_records: Vec<Recorded> = early_joins.into_iter().chain(recorder.take()).collect();
    Ok((visitors, join_records, opens))
}

/// Admissions at the pace on a simulated clock; every status polled
/// once when half are admitted. The polls' records, the ticks' records,
/// and how many ticks it took.
async fn admit_at_pace(
    app: &App,
    event: &str,
    recorder: &CapacityRecorder,
    model: QueueModel,
    run: &mut QueueRun,
    admitting: &mut Admitting,
    visitors: &[Joined],
) -> Result<(Vec<Recorded>, Vec<Recorded>, u64), String> {
    let mut now = shared::world::now();
    let mut polls: Vec<Recorded> = Vec::new();
    let mut ticks = 0u64;
    let mut tick_records = Vec::new();
    let mut admitted = 0u64;
    let limit =
        4 * model.visitors as u64 * 60_000 / u64::from(model.admit_per_minute) / TICK_MS + 100;
    recorder.set_recording(true);
    while admitted < model.visitors as u64 && ticks < limit {
        now = Millis(now.0 + TICK_MS as i64);
        let summary = admitting
            .admitter
            .tick(&admitting.app, &admitting.event, now)
            .await
            .map_err(|e| e.to_string())?;
        admitted += summary.admitted;
        ticks += 1;
        if polls.is_empty() && admitted * 2 >= model.visitors as u64 {
            // Every status once, recorded apart from the ticks.
            tick_records.extend(recorder.take());
            let polled = Instant::now();
            poll_all(app, event, visitors, model.in_flight).await?;
            run.polls_per_s = visitors.len() as f64 / polled.elapsed().as_secs_f64();
            polls = recorder.take();
        }
    }
    recorder.set_recording(false);
    tick_records.extend(recorder.take());
    Ok((polls, tick_records, ticks))
}

/// Ceilings and cost, from what was recorded: `n` visitors' joins and
/// polls, and `ticks` ticks of the admitter.
async fn price_run(
    app: &App,
    run: &mut QueueRun,
    n: usize,
    join_records: &[Recorded],
    polls: &[Recorded],
    tick_records: &[Recorded],
    ticks: u64,
) -> Result<(), String> {
    let joined = price_each(app, join_records).await?;
    let polled = price_each(app, polls).await?;
    let ticked = price_each(app, tick_records).await?;
    replay(run, n as f64, (&joined, &polled), (&ticked, ticks));
    let (join_charges, poll_charges) = (flattened(&joined), flattened(&polled));
    run.join = super::queue_projection::ceiling(&join_charges, n, join_records);
    run.status = super::queue_projection::ceiling(&poll_charges, n, polls);
    let tick_charges = flattened(&ticked);
    let n = n as u64;
    run.join_request = per_request(&join_charges, join_records, n);
    run.poll_request = per_request(&poll_charges, polls, n);
    // An admission is the admitter's one UpdateItem (Store::admit_visitor).
    let is_admission = |op: &str| op == "UpdateItem";
    let (admission_charges, other_charges): (Vec<_>, Vec<_>) = tick_charges
        .iter()
        .cloned()
        .partition(|c| is_admission(&c.op));
    let (admission_records, other_records): (Vec<_>, Vec<_>) = tick_records
        .iter()
        .cloned()
        .partition(|r| is_admission(&r.op));
    run.admission_request = per_request(&admission_charges, &admission_records, run.admitted);
    run.tick_request = per_request(&other_charges, &other_records, ticks);
    run.cost =
        super::queue_projection::cost(run, &join_charges, &poll_charges, &tick_charges, ticks);
    Ok(())
}

/// The joins and the polls (`n` of each), each replayed through the
/// capacity meter beside the admitter's `ticks` ticks at their own pace
/// (one every [`TICK_MS`], whatever the crowd), at the crowd's peak
/// (docs/SCALE.md's model) and at the contract's goals: the joins' on an
/// account's default quotas, the polls' on the read quota theirs asks for
/// (no key layout brings a read an item per poll under the default).
fn replay(
    run: &mut QueueRun,
    n: f64,
    (joined, polled): (&[Priced], &[Priced]),
    (ticked, ticks): (&[Priced], u64),
) {
    let ticking = Stream::steady(ticked, ticks as f64 * TICK_MS as f64 / 1_000.0);
    let (joins_peak, polls_peak) = crate::scale_queue::crowd_peaks();
    run.join_replays = replays_at(
        &[Stream::recorded(joined, n), ticking],
        &[(Rate::Peak, joins_peak), (Rate::Target, JOIN_GOAL_PER_S)],
        &[Layout::New],
    );
    let polls = [Stream::recorded(polled, n), ticking];
    run.status_replays = replays_at(&polls, &[(Rate::Peak, polls_peak)], &[Layout::New]);
    let need = quotas_needed(&polls, STATUS_GOAL_PER_S);
    let goal = (STATUS_GOAL_PER_S, REPLAY_SECONDS);
    run.status_replays.at_requested = at_quotas(&polls, goal, need, STATUS_AT_GOAL);
}

/// `n` visitors join, `in_flight` at a time; each join's latency goes to
/// `timing`.
async fn joins(
    app: &App,
    event: &str,
    n: usize,
    in_flight: usize,
    early: bool,
    timing: &mut Timing,
) -> Result<Vec<Joined>, String> {
    let sem = Arc::new(Semaphore::new(in_flight));
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..n {
        let (app, event, sem) = (app.clone(), event.to_owned(), sem.clone());
        tasks.spawn(async move {
            let _permit = sem.acquire_owned().await;
            let (sent, clock) = (shared::world::now(), Instant::now());
            let answer = join_queue(&app, &event).await;
            (answer, sent, shared::world::now(), clock.elapsed())
        });
    }
    let mut joined = Vec::with_capacity(n);
    while let Some(done) = tasks.join_next().await {
        let ((status, body), sent, answered, took) = done.map_err(|e| e.to_string())?;
        timing.latencies_ms.push(took.as_secs_f64() * 1_000.0);
        if status != 201 || body["status"] != "WAITING" {
            return Err(format!("join-queue: {status} {body}"));
        }
        joined.push(Joined {
            id: body["visitorId"].as_str().unwrap_or_default().to_owned(),
            token: body["visitorToken"].as_str().unwrap_or_default().to_owned(),
            sent,
            answered,
            early,
        });
    }
    Ok(joined)
}

/// Every visitor asks its status once, `in_flight` at a time, each of
/// those its own instance, as on AWS, where an instance serves one request
/// at a time: each keeps its copy of the queue's state a second, and they
/// spread over the copies as production's do (one process serving them
/// all would read its one copy each time its second ran out, once for
/// every request then in flight).
async fn poll_all(
    app: &App,
    event: &str,
    visitors: &[Joined],
    in_flight: usize,
) -> Result<(), String> {
    let instances = in_flight.max(1);
    let mut tasks = tokio::task::JoinSet::new();
    for first in 0..instances {
        let instance = app.new_process();
        let polls: Vec<(String, String)> = visitors
            .iter()
            .skip(first)
            .step_by(instances)
            .map(|v| {
                (
                    format!("/events/{event}/queue/visitors/{}", v.id),
                    v.token.clone(),
                )
            })
            .collect();
        tasks.spawn(async move {
            for (uri, token) in polls {
                let (status, body) = reply(&instance, "GET", &uri, Some(&token), "").await;
                if status != 200 {
                    return Err(format!("visitor-status: {status} {body}"));
                }
            }
            Ok(())
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.map_err(|e| e.to_string())??;
    }
    Ok(())
}

/// The visitors in the order they were admitted, with each one's slot, as
/// the clients see them: every visitor asks its status once more and reads
/// the `slot` claim of the admission token it is given (checked against the
/// admission keys), not the store.
async fn admission_order(
    app: &App,
    event: &EventId,
    visitors: &[Joined],
    in_flight: usize,
) -> Result<Vec<(usize, Millis)>, String> {
    let sem = Arc::new(Semaphore::new(in_flight));
    let mut tasks = tokio::task::JoinSet::new();
    for (i, v) in visitors.iter().enumerate() {
        let (app, sem) = (app.clone(), sem.clone());
        let uri = format!("/events/{event}/queue/visitors/{}", v.id);
        let token = v.token.clone();
        tasks.spawn(async move {
            let _permit = sem.acquire_owned().await;
            (i, reply(&app, "GET", &uri, Some(&token), "").await)
        });
    }
    let keys = app
        .config
        .admission_verify
        .as_ref()
        .ok_or("the bench's app has no admission keys")?;
    let mut admitted = Vec::new();
    while let Some(done) = tasks.join_next().await {
        let (i, (status, body)) = done.map_err(|e| e.to_string())?;
        let Some(token) = body["admissionToken"].as_str() else {
            continue; // not admitted: counted against the run by the caller
        };
        let claims: AdmissionClaims = keys
            .decode(
                token,
                None,
                (ISSUER, event.as_str()),
                &shared::admission::ADMISSION_CLAIMS,
            )
            .map_err(|reason| {
                format!(
                    "visitor-status {status}: an admission token the keys refuse ({})",
                    reason.code()
                )
            })?;
        let slot_us = claims.slot.ok_or("an admission token without its slot")?;
        admitted.push((slot_us, i));
    }
    admitted.sort();
    Ok(admitted
        .into_iter()
        .map(|(slot_us, i)| (i, Millis(slot_us.div_euclid(1_000))))
        .collect())
}

fn fairness(run: &mut QueueRun, visitors: &[Joined], order: &[(usize, Millis)], opens: Millis) {
    // Early joiners: the order the client sent their joins in against
    // service order.
    let mut early: Vec<usize> = (0..visitors.len()).filter(|&i| visitors[i].early).collect();
    early.sort_by_key(|&i| (visitors[i].sent, i));
    let join_position: HashMap<usize, usize> =
        early.iter().enumerate().map(|(p, &i)| (i, p)).collect();
    let served: Vec<usize> = order
        .iter()
        .filter_map(|(i, _)| join_position.get(i).copied())
        .collect();
    run.rho = spearman(&served);
    let first_late = order
        .iter()
        .position(|(i, _)| !visitors[*i].early)
        .unwrap_or(order.len());
    run.early_first = order[first_late..].iter().all(|(i, _)| !visitors[*i].early);
    let late: Vec<(i64, i64)> = order
        .iter()
        .filter(|(i, _)| !visitors[*i].early)
        .map(|(i, _)| (visitors[*i].sent.0, visitors[*i].answered.0))
        .collect();
    run.inversion_ms = largest_inversion(&late);
    let waits: Vec<f64> = order
        .iter()
        .map(|(i, at)| (at.0 - visitors[*i].answered.0.max(opens.0)).max(0) as f64 / 1_000.0)
        .collect();
    run.mean_wait_s = waits.iter().sum::<f64>() / waits.len().max(1) as f64;
    let polls: u64 = waits
        .iter()
        .map(|w| {
            let wait = (w * 1_000.0) as i64;
            super::queue_projection::polls_between(0, wait, wait, 0)
        })
        .sum();
    run.polls_per_visitor = polls as f64 / waits.len().max(1) as f64;
}

/// The pace from the first to the last admission, against the operator's.
fn pace(run: &mut QueueRun, order: &[(usize, Millis)], per_minute: u32) {
    let (Some(first), Some(last)) = (order.first(), order.last()) else {
        return;
    };
    let minutes = (last.1 .0 - first.1 .0) as f64 / 60_000.0;
    // n admissions span n - 1 spacings.
    run.measured_per_minute = (order.len() as f64 - 1.0) / minutes.max(1e-9);
    run.pace_error = (run.measured_per_minute / f64::from(per_minute) - 1.0).abs();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spearman_is_one_for_the_same_order_and_minus_one_reversed() {
        assert!((spearman(&[0, 1, 2, 3]) - 1.0).abs() < 1e-12);
        assert!((spearman(&[3, 2, 1, 0]) + 1.0).abs() < 1e-12);
        assert!(spearman(&[1, 3, 0, 2]).abs() < 0.5);
        assert_eq!(spearman(&[0]), 0.0);
    }

    #[test]
    fn the_largest_inversion_is_how_long_an_answered_join_waited_behind_a_later_sent_one() {
        // Joins that ran one after another, served in their order: none.
        assert_eq!(largest_inversion(&[(1, 2), (3, 4), (5, 6)]), 0);
        // The third, sent at 9, served ahead of one answered at 7: 2 ms.
        assert_eq!(largest_inversion(&[(1, 2), (9, 10), (5, 7)]), 2);
        // In flight together (each sent before the other was answered):
        // no order a client saw, so none broken.
        assert_eq!(largest_inversion(&[(5, 20), (1, 15)]), 0);
        // Served behind the latest-sent of all that went ahead of it.
        assert_eq!(largest_inversion(&[(30, 31), (10, 11), (0, 1)]), 29);
        assert_eq!(largest_inversion(&[]), 0);
    }
}
