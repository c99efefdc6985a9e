//! The queue's shared state and what follows from it, pure: what one
//! admitter tick does (who is admitted, when, and what the queue then
//! tells), what a visitor is told, and whether a joiner with nobody ahead
//! is admitted on the spot. The store keeps [`QueueState`] on one item (and
//! its copies); the admitter writes it a few times a second, never once
//! per visitor.

use super::queue::{
    admission_times, estimated_admission_at, joined_at_of, poll_after_ms, queue_status, Inventory,
    QueueRank, QueueSettings, QueueStatus,
};
use super::queue_counts::JoinCounts;
use super::queue_life::VisitorItems;
use super::queue_shards::QueueShards;
use super::Millis;

/// At most this many position checkpoints ride on the state (about 24
/// bytes each): enough for 1% steps over ten million visitors.
pub const MAX_CHECKPOINTS: usize = 2_000;
/// A tick never admits slots older than this before `now`: an admitter
/// that was away does not release a burst of a whole minute's slots at
/// once, it resumes the pace from a second ago.
pub const CATCH_UP_US: i64 = 1_000_000;

/// Where waiting visitors stand: `(rank, ahead)` pairs, sorted, `ahead`
/// being how many waiting visitors rank before `rank`. Dense at the
/// front, then about 1% (or one second's pace) apart, so a position read
/// from them is within the contract's "1% + one second's pace".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Checkpoints(pub Vec<(QueueRank, u64)>);

impl Checkpoints {
    /// Checkpoints over `ranks` (sorted, the waiting visitors in queue
    /// order) for a queue admitting `per_second` visitors a second.
    pub fn over(ranks: &[QueueRank], per_second: u64) -> Self {
        let n = ranks.len() as u64;
        let mut points = Vec::new();
        let mut i = 0u64;
        while i < n {
            points.push((ranks[i as usize], i));
            i += 1.max(i / 100).max(per_second);
        }
        if let Some(&last) = ranks.last() {
            if points.last().map(|p| p.1) != Some(n - 1) {
                points.push((last, n - 1));
            }
        }
        Self(points).bounded()
    }

    /// The head's checkpoints, then the counted visitors' past it (where
    /// they add to the head's count: the head also knows the joiners of
    /// the last moments, not counted yet).
    fn with_counts(self, counts: &JoinCounts, after: QueueRank) -> Self {
        let mut points = self.0;
        // Past the head, a count's point that says fewer ahead than the
        // head knows is behind it (the head also holds joins not counted
        // yet): left out, so the points only ever rise.
        let known = points.last().map_or(0, |p| p.1 + 1);
        points.extend(
            counts
                .points_after(after)
                .into_iter()
                .filter(|p| p.1 >= known),
        );
        Self(points).bounded()
    }

    /// Past the cap, every k-th point (the last always): coarser, bounded.
    fn bounded(self) -> Self {
        let mut points = self.0;
        if points.len() > MAX_CHECKPOINTS {
            let step = points.len().div_ceil(MAX_CHECKPOINTS - 1);
            let last = points[points.len() - 1];
            points = points.into_iter().step_by(step).collect();
            if points.last() != Some(&last) {
                points.push(last);
            }
        }
        Self(points)
    }

    /// The position (1 = next) of the visitor ranked `rank` among `waiting`
    /// visitors: exact at a checkpoint, interpolated between two, and
    /// behind everyone known when it ranks after the last.
    pub fn position(&self, rank: QueueRank, waiting: u64) -> u64 {
        let after = self.0.partition_point(|(r, _)| *r <= rank);
        let ahead = match (after.checked_sub(1).map(|i| self.0[i]), self.0.get(after)) {
            (None, _) => 0,
            (Some((r, ahead)), _) if r == rank => ahead,
            (Some((r, ahead)), Some(&(next, next_ahead))) => {
                let fraction = (rank.0 - r.0) as f64 / (next.0 - r.0) as f64;
                let between = next_ahead.saturating_sub(ahead + 1) as f64;
                ahead + 1 + (fraction * between) as u64
            }
            (Some((_, ahead)), None) => (ahead + 1).max(waiting),
        };
        ahead + 1
    }
}

/// The queue as the admitter last wrote it (with what the operator put).
#[derive(Debug, Clone, PartialEq)]
pub struct QueueState {
    /// A queue deleted and put again is a new generation: its visitors
    /// are new, the old ones are gone.
    pub generation: u64,
    pub settings: QueueSettings,
    /// What the event had left when the admitter last looked.
    pub inventory: Inventory,
    /// The latest admission's slot, µs.
    pub last_admission_us: Option<i64>,
    /// The earliest instant admission may happen: the opening, or the end
    /// of the latest pause, µs.
    pub resumed_us: i64,
    pub admitted: u64,
    /// Visitors waiting (SOLD_OUT ones excluded) when the admitter looked.
    pub waiting: u64,
    pub checkpoints: Checkpoints,
    /// The joins counted so far (the admitter's; copies carry none).
    pub counts: JoinCounts,
    /// Every write of the state bumps it: the admitter's and the joiners'
    /// writes are conditional on the version they read.
    pub version: i64,
    /// The version of `DRAW_SECRET` this generation's draw seed is derived
    /// under, fixed when the generation is put (empty on a queue put before
    /// draws: the current key's).
    pub draw_secret: String,
    /// The index shards this generation's visitors spread over, fixed
    /// when the generation is put ([`QueueShards`]).
    pub shards: QueueShards,
    /// Admissions given slots by a committed tick and not yet known to be
    /// written: the next tick writes them again with the same slots, so a
    /// failed or late admission keeps its place in the pace.
    pub pending: Vec<PendingAdmission>,
    /// The highest drawn rank given a slot so far.
    pub last_drawn: Option<QueueRank>,
    /// When the generation ends, fixed when it is first put
    /// ([`super::queue_life`]); `None` on one put before ends.
    pub ends_at: Option<Millis>,
    /// Drawn visitors the admitter first saw after someone ranked behind
    /// them had a slot (the join index lagged past the settings' `draw_settle_ms`).
    pub late_drawn: u64,
}

/// Most admissions `pending` holds (about 85 bytes each on the queue's
/// item, beside its checkpoints and counts, well inside DynamoDB's 400 KB
/// item): a tick plans no more slots than fit. At 60,000 admissions a
/// minute a tick gives about 250.
pub const MAX_PENDING: usize = 2_000;

/// A slot given to a visitor by a committed tick.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingAdmission {
    pub visitor_id: super::VisitorId,
    pub rank: QueueRank,
    pub slot_us: i64,
}

impl QueueState {
    /// A new queue (generation `generation`), empty, assumed to have
    /// something to sell until the admitter looks.
    pub fn new(generation: u64, settings: QueueSettings) -> Self {
        Self {
            generation,
            settings,
            inventory: Inventory::Available,
            last_admission_us: None,
            resumed_us: settings.first_admission_us(),
            admitted: 0,
            waiting: 0,
            checkpoints: Checkpoints::default(),
            counts: JoinCounts::default(),
            version: 0,
            draw_secret: String::new(),
            shards: QueueShards::DEFAULT,
            pending: Vec::new(),
            last_drawn: None,
            late_drawn: 0,
            ends_at: None,
        }
    }

    /// Whether the generation is over at `now` (it then answers as a
    /// removed queue).
    pub fn has_ended(&self, now: Millis) -> bool {
        super::queue_life::has_ended(self.ends_at, now)
    }

    /// What the generation fixes for its visitors' items.
    pub fn visitor_items(&self) -> VisitorItems {
        VisitorItems {
            shards: self.shards,
            ends_at: self.ends_at,
        }
    }

    pub fn status(&self, now: Millis) -> QueueStatus {
        queue_status(self.settings.opens_at, self.inventory, now)
    }

    /// The state after a put of `settings` over it (allowed: see
    /// [`settings_after_put`]): the new settings at once, counts and
    /// admissions kept, and a first admission that moved (an opening or a
    /// settling time changed, only possible before the opening) is where
    /// admission may start.
    pub fn put(&self, settings: QueueSettings) -> Self {
        let resumed_us = if settings.first_admission_us() == self.settings.first_admission_us() {
            self.resumed_us
        } else {
            settings.first_admission_us()
        };
        Self {
            settings,
            resumed_us,
            version: self.version + 1,
            ..self.clone()
        }
    }

    /// The earliest slot the next admission may take.
    fn next_allowed_us(&self) -> i64 {
        let spacing = self.settings.spacing_us();
        self.last_admission_us
            .map_or(self.resumed_us, |t| (t + spacing).max(self.resumed_us))
    }

    /// The slot of a visitor joining at `now` if it is admitted at once:
    /// the queue is open, nobody waits, and the spacing since the last
    /// admission allows it.
    pub fn admits_on_join(&self, now: Millis) -> Option<i64> {
        let now_us = now.0 * 1_000;
        (self.status(now) == QueueStatus::Open
            && self.waiting == 0
            && self.next_allowed_us() <= now_us)
            .then_some(now_us)
    }

    /// The state after the on-the-spot admission at `slot_us`.
    pub fn admitted_on_join(&self, slot_us: i64) -> Self {
        Self {
            last_admission_us: Some(slot_us),
            admitted: self.admitted + 1,
            version: self.version + 1,
            ..self.clone()
        }
    }
}

/// A waiting visitor as the admitter sees it, in queue order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitingVisitor {
    pub rank: QueueRank,
    /// When it could first be admitted: its join, or the opening (µs).
    pub eligible_us: i64,
    /// Whether the state's counts hold it ([`JoinCounts::is_counted`]).
    pub counted: bool,
}

/// The front of the queue as the admitter knows it: every waiting visitor
/// ranked before `known_to`, in queue order (before the opening it reads
/// none: nobody is admitted yet, and the counts place everyone).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Head {
    pub visitors: Vec<WaitingVisitor>,
    pub known_to: QueueRank,
    /// Whether `visitors` is everyone waiting: the index showed nobody else.
    pub whole: bool,
}

/// What one admitter tick does.
#[derive(Debug, Clone, PartialEq)]
pub struct TickPlan {
    /// The new state (the store writes it if nobody else wrote first).
    pub state: QueueState,
    pub status: QueueStatus,
    /// The slots (µs) of the first `slots.len()` waiting visitors, who are
    /// admitted now.
    pub slots: Vec<i64>,
}

/// One tick at `now`: `state` with this tick's joins counted, `head` the
/// front of the queue, `inventory` what the event has left. A queue whose
/// inventory comes back resumes now; a paused, sold-out or scheduled queue
/// admits nobody.
pub fn plan_tick(state: &QueueState, head: &Head, inventory: Inventory, now: Millis) -> TickPlan {
    let waiting = &head.visitors;
    let now_us = now.0 * 1_000;
    // A sold seat never comes back, so SOLD_OUT is final: an admitter whose
    // seat-map read is older than the one that saw the sell-out must not
    // reopen the queue and admit visitors already told SOLD_OUT. Only a
    // waitlist put afterwards changes that: the queue reads WAITLIST.
    let inventory = if state.inventory == Inventory::AllSold && inventory != Inventory::WaitlistOnly
    {
        Inventory::AllSold
    } else {
        inventory
    };
    let status = queue_status(state.settings.opens_at, inventory, now);
    let mut resumed_us = state.resumed_us.max(state.settings.first_admission_us());
    if state.inventory != Inventory::Available && inventory == Inventory::Available {
        resumed_us = resumed_us.max(now_us);
    }
    let slots = if status == QueueStatus::Open {
        // Slots wait in `pending` until written: never more than its bound.
        let room = MAX_PENDING.saturating_sub(state.pending.len());
        let eligible: Vec<i64> = waiting.iter().take(room).map(|w| w.eligible_us).collect();
        admission_times(
            state.last_admission_us,
            state.settings.spacing_us(),
            resumed_us.max(now_us - CATCH_UP_US),
            &eligible,
            now_us,
        )
    } else {
        Vec::new()
    };
    let (admitted, left) = waiting.split_at(slots.len());
    let counts = counts_after(&state.counts, head, admitted, left);
    let (waiting, checkpoints) = if status == QueueStatus::SoldOut {
        (0, Checkpoints::default())
    } else {
        standing(&counts, head, left, state.settings.per_second())
    };
    let (last_drawn, late) = drawn_order(state.last_drawn, admitted);
    let next = QueueState {
        inventory,
        last_drawn,
        late_drawn: state.late_drawn + late,
        last_admission_us: slots.last().copied().or(state.last_admission_us),
        resumed_us,
        admitted: state.admitted + slots.len() as u64,
        waiting,
        checkpoints,
        counts,
        version: state.version + 1,
        ..state.clone()
    };
    TickPlan {
        state: next,
        status,
        slots,
    }
}

/// The highest drawn rank once `admitted` have slots, and how many of
/// them are late: drawn, yet ranked before a drawn visitor who had a slot
/// already.
fn drawn_order(last: Option<QueueRank>, admitted: &[WaitingVisitor]) -> (Option<QueueRank>, u64) {
    let mut highest = last;
    let mut late = 0;
    for w in admitted.iter().filter(|w| joined_at_of(w.rank).is_none()) {
        if last.is_some_and(|l| w.rank < l) {
            late += 1;
        }
        highest = highest.max(Some(w.rank));
    }
    (highest, late)
}

/// How many wait and where they stand: the head's `left` exactly, the
/// rest from the counts.
fn standing(
    counts: &JoinCounts,
    head: &Head,
    left: &[WaitingVisitor],
    per_second: u64,
) -> (u64, Checkpoints) {
    // The head's visitors not counted yet (joins of the last moments).
    let uncounted = left.iter().filter(|w| !w.counted).count() as u64;
    let ranks: Vec<QueueRank> = left.iter().map(|w| w.rank).collect();
    let last_known = left.last().map_or(head.known_to, |w| w.rank);
    let points = Checkpoints::over(&ranks, per_second).with_counts(counts, last_known);
    (counts.waiting() + uncounted, points)
}

/// The counts after admitting `admitted` from `head`, `left` waiting: the
/// counted ones admitted are counted out, the buckets wholly ahead of the
/// first still waiting are forgotten, and a head that is the whole queue
/// settles the count.
fn counts_after(
    counts: &JoinCounts,
    head: &Head,
    admitted: &[WaitingVisitor],
    left: &[WaitingVisitor],
) -> JoinCounts {
    let mut counts = counts.clone();
    counts.admitted += admitted.iter().filter(|w| w.counted).count() as u64;
    if head.whole {
        counts.settle(left.iter().filter(|w| w.counted).count() as u64);
    }
    counts.forget_below(left.first().map_or(head.known_to, |w| w.rank));
    counts
}

/// An admission as the visitor's item keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Admission {
    /// The `jti`.
    pub admission_id: String,
    /// Its slot in the pace, µs: the admission's time.
    pub slot_us: i64,
    /// When it was given (the token's `iat`).
    pub given_at: Millis,
    /// The token's `exp` (whole seconds).
    pub expires_at: Millis,
    /// Orders it may open: the queue's `ordersPerAdmission` when given.
    pub orders_allowed: u32,
}

/// A visitor of a queue as its item keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Visitor {
    pub visitor_id: super::VisitorId,
    /// The queue generation it joined (a queue put again is a new one).
    pub generation: u64,
    pub joined_at: Millis,
    pub rank: QueueRank,
    /// The hash of its visitor token.
    pub token_hash: String,
    pub admission: Option<Admission>,
    /// The buyer whose one place it is, in a verified queue.
    pub buyer: Option<super::buyer::BuyerId>,
    /// A drawn visitor's draw key (it joined before the opening).
    pub draw_key: Option<super::draw::DrawKey>,
}

/// What visitor-status tells a visitor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VisitorView<'a> {
    /// Waiting before the opening: nothing it is told may depend on its
    /// draw, so nothing but the opening ([`super::queue::poll_before_opening_ms`]).
    BeforeOpening {
        opens_at: Millis,
    },
    /// Waiting after the opening, with its position (1 = next) and when
    /// it should be admitted (ms, never in the past), and when to ask
    /// again ([`super::queue::poll_after_ms`]).
    Waiting {
        position: Option<u64>,
        estimated_at: Option<Millis>,
        poll_after_ms: i64,
    },
    Admitted(&'a Admission),
    Expired,
    SoldOut,
}

/// A visitor's status at `now`: its admission if it has one, else where
/// it stands in `state`'s queue.
pub fn visitor_view<'a>(
    rank: QueueRank,
    admission: Option<&'a Admission>,
    state: &QueueState,
    now: Millis,
) -> VisitorView<'a> {
    if let Some(admission) = admission {
        return if super::queue::admission_is_live(admission.expires_at, now) {
            VisitorView::Admitted(admission)
        } else {
            VisitorView::Expired
        };
    }
    let position = state.checkpoints.position(rank, state.waiting);
    let spacing = state.settings.spacing_us();
    match state.status(now) {
        // Its place is drawn at the opening, and nothing it is told before
        // may depend on it (docs/API.md, "A draw anyone can check").
        QueueStatus::Scheduled => VisitorView::BeforeOpening {
            opens_at: state.settings.opens_at,
        },
        QueueStatus::SoldOut => VisitorView::SoldOut,
        QueueStatus::Open | QueueStatus::Paused | QueueStatus::Waitlist => {
            // Nobody is admitted before the queue's settling time is over.
            let from_us = (now.0 * 1_000).max(state.settings.first_admission_us());
            let at_us = estimated_admission_at(state.last_admission_us, spacing, position, from_us);
            let estimated_at = Millis(at_us.div_euclid(1_000).max(now.0));
            VisitorView::Waiting {
                position: Some(position),
                estimated_at: Some(estimated_at),
                poll_after_ms: poll_after_ms(estimated_at, now),
            }
        }
    }
}

/// What an event has left, from its seat map at some instant and its
/// general-admission buckets: something available; nothing, but something
/// held (it may come back); or everything sold (nothing ever comes back).
pub fn inventory_of(
    map: &super::SeatMap,
    buckets: &std::collections::HashMap<super::SectionId, Vec<super::ga::Bucket>>,
) -> Inventory {
    let rows = || map.sections.iter().flat_map(|s| s.rows.iter().flatten());
    let any_seat = rows().any(|r| r.statuses.contains('A'));
    let any_place = map.sections.iter().any(|s| s.available.unwrap_or(0) > 0);
    if any_seat || any_place {
        return Inventory::Available;
    }
    let seats_sold = rows().all(|r| r.statuses.bytes().all(|b| b == b'S'));
    let places_sold = map
        .sections
        .iter()
        .filter(|s| s.capacity.is_some())
        .all(|s| {
            // Every bucket read, not just those the read found: SOLD_OUT is
            // final, so a read missing a bucket must not end the queue.
            buckets.get(&s.section_id).is_some_and(|all| {
                let read: u64 = all.iter().map(|b| u64::from(b.capacity)).sum();
                read >= u64::from(s.capacity.unwrap_or(0))
                    && all.iter().all(|b| b.sold >= b.capacity)
            })
        });
    if seats_sold && places_sold {
        Inventory::AllSold
    } else {
        Inventory::NoneAvailable
    }
}

/// The settings a put leaves: `new`, except that an open queue keeps its
/// opening (`None` if the put tried to move it: `409 queue-open`).
pub fn settings_after_put(
    old: Option<&QueueSettings>,
    new: QueueSettings,
    now: Millis,
) -> Option<QueueSettings> {
    match old {
        Some(old) if !old.may_move_opening(new.opens_at, now) => None,
        // Open already: the first admission's instant is history, and the
        // drawn visitors' slots were given from it.
        Some(old) if now >= old.opens_at => Some(new.with_draw_settle_ms(old.draw_settle_ms)),
        _ => Some(new),
    }
}

#[cfg(test)]
#[path = "queue_state_tests.rs"]
mod tests;
