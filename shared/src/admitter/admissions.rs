//! Admissions: a committed tick's slots given to the head's first
//! visitors in queue order, each slot fixed when the tick commits
//! (`QueueState::pending`). A write that fails or comes late is written
//! again, with the same slot, by the next tick of any admitter: slots
//! follow the queue's order exactly, drawn visitors' their draw keys'.

use super::fronts::ShardFront;
use super::Mirror;
use crate::domain::queue::admission_expires_at;
use crate::domain::queue_state::{Admission, Head, PendingAdmission, QueueState, WaitingVisitor};
use crate::domain::{EventId, Millis, VisitorId};
use crate::error::Error;
use crate::store::in_order;

/// Admissions written at once.
const ADMISSIONS_IN_FLIGHT: usize = 64;

/// A slot given this tick: the pending admission, and whether the
/// visitor was counted.
pub(super) struct Assigned {
    pub pending: PendingAdmission,
    pub counted: bool,
}

/// The slots of a tick's plan given to the head's first visitors, in
/// order. The fronts keep them until the state that gives the slots is
/// committed ([`taken`]): a commit that fails leaves nobody out.
pub(super) fn assign(mirror: &Mirror, head: &Head, slots: &[i64]) -> Vec<Assigned> {
    head.visitors
        .iter()
        .zip(slots)
        .filter_map(|(w, &slot_us)| {
            let visitor = find(&mirror.shards, w)?;
            Some(Assigned {
                pending: PendingAdmission {
                    visitor_id: visitor,
                    rank: w.rank,
                    slot_us,
                },
                counted: w.counted,
            })
        })
        .collect()
}

/// The id of the head's visitor `w`, from its shard's front.
fn find(shards: &[ShardFront], w: &WaitingVisitor) -> Option<VisitorId> {
    shards
        .iter()
        .find_map(|front| front.waiting.get(&w.rank))
        .map(|visitor| visitor.visitor_id.clone())
}

/// The committed assignments out of the fronts: they have slots now.
pub(super) fn taken(mirror: &mut Mirror, assigned: &[Assigned]) {
    for a in assigned {
        for front in mirror.shards.iter_mut() {
            front.waiting.remove(&a.pending.rank);
        }
    }
}

/// The pending admissions of `state` written again with their slots,
/// but for those this admitter wrote itself: those whose write failed
/// again stay pending. (One already written is refused by its condition,
/// harmlessly: it was admitted with that slot.)
pub(super) async fn retry_pending(
    app: &App,
    event: &EventId,
    state: &QueueState,
    mirror: &mut Mirror,
    now: Millis,
) -> Vec<PendingAdmission> {
    let todo: Vec<&PendingAdmission> = state
        .pending
        .iter()
        .filter(|p| !mirror.written.contains(&p.rank))
        .collect();
    let writes = todo
        .iter()
        .map(|p| admit_one(app, event, state, &p.visitor_id, p.slot_us, now))
        .collect();
    let results = in_order(ADMISSIONS_IN_FLIGHT, writes).await;
    let mut left = Vec::new();
    for (p, result) in todo.iter().zip(results) {
        match result {
            Ok(_) => {
                mirror.written.insert(p.rank);
            }
            Err(e) => {
                tracing::warn!(event = %event, error = %e, "a pending admission failed again; the next tick retries it");
                left.push((*p).clone());
            }
        }
    }
    left
}

/// Writes the admissions a committed tick assigned, a few at a time: the
/// number given. One whose visitor is no longer waiting (another
/// admitter's run, overlapping this one, admitted it a moment ago, and the
/// index still showed it) leaves its slot empty: every other slot is
/// fixed already, and moving one would break the order. One whose write
/// failed stays pending for the next tick, with its slot.
pub(super) async fn admit(
    app: &App,
    event: &EventId,
    state: &QueueState,
    mirror: &mut Mirror,
    assigned: &[Assigned],
    now: Millis,
) -> u64 {
    let writes = assigned
        .iter()
        .map(|a| {
            let p = &a.pending;
            admit_one(app, event, state, &p.visitor_id, p.slot_us, now)
        })
        .collect();
    let results = in_order(ADMISSIONS_IN_FLIGHT, writes).await;
    let mut given = 0;
    for (a, result) in assigned.iter().zip(results) {
        let rank = a.pending.rank;
        match result {
            Ok(was_waiting) => {
                mirror.written.insert(rank);
                mirror.admitted.insert(rank, now.0);
                if was_waiting {
                    given += 1;
                } else {
                    // Counted and admitted twice over: the count gives it
                    // back at the next commit.
                    mirror.correction -= i64::from(a.counted);
                    mirror.empty_slots += 1;
                }
            }
            Err(e) => {
                tracing::warn!(event = %event, error = %e, "an admission failed; the next tick writes it again with its slot");
            }
        }
    }
    given
}

/// One visitor's admission at `slot` (µs): whether it was still waiting.
async fn admit_one(
    app: &App,
    event: &EventId,
    state: &QueueState,
    visitor: &VisitorId,
    slot: i64,
    now: Millis,
) -> Result<bool, Error> {
    let q = &state.settings;
    let random = crate::world::random_u128()
        .ok_or_else(|| Error::Corrupt("no randomness for an admission id".into()))?;
    let admission = Admission {
        admission_id: format!("{random:032x}"),
        slot_us: slot,
        given_at: now,
        expires_at: admission_expires_at(slot, now, q.admission_seconds),
        orders_allowed: q.orders_per_admission,
    };
    app.store
        .admit_visitor(
            event,
            visitor,
            (state.generation, state.ends_at),
            &admission,
        )
        .await
}

use crate::App;
