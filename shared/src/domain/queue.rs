//! The on-sale queue's rules (DESIGN.md, "The on-sale queue"), pure: the
//! settings an operator may put, the queue's status, the order visitors
//! are served in, the pace of admissions, the wait a visitor is told, and
//! an admission's life. The store keeps the state and the clock is passed
//! in, so every rule is tested here without waiting.

use super::buyer::Buyers;
use super::Millis;

/// put-queue's ranges and defaults.
pub const ADMIT_PER_MINUTE: std::ops::RangeInclusive<u32> = 1..=1_000_000;
pub const ADMISSION_SECONDS: std::ops::RangeInclusive<u32> = 60..=7_200;
pub const DEFAULT_ADMISSION_SECONDS: u32 = 600;
pub const ORDERS_PER_ADMISSION: std::ops::RangeInclusive<u32> = 1..=10;
pub const DEFAULT_ORDERS_PER_ADMISSION: u32 = 1;

/// What an operator put: when the queue opens and how fast it admits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueSettings {
    pub opens_at: Millis,
    pub admit_per_minute: u32,
    pub admission_seconds: u32,
    pub orders_per_admission: u32,
    /// Who may join: anyone, or buyers the seller vouches for, one place
    /// each ([`QueueSettings::with_buyers`]).
    pub buyers: Buyers,
    /// How long after the opening the first admission waits
    /// ([`QueueSettings::with_draw_settle_ms`]; put-queue's function's
    /// `DRAW_SETTLE_MS`, fixed when the queue is put).
    pub draw_settle_ms: u32,
}

impl QueueSettings {
    /// The same settings for `buyers`.
    pub fn with_buyers(self, buyers: Buyers) -> Self {
        Self { buyers, ..self }
    }

    /// The same settings, the first admission `draw_settle_ms` after the
    /// opening.
    pub fn with_draw_settle_ms(self, draw_settle_ms: u32) -> Self {
        Self {
            draw_settle_ms,
            ..self
        }
    }

    /// The settings, or what is out of range (a `400 bad-request`).
    pub fn new(
        opens_at: Millis,
        admit_per_minute: u32,
        admission_seconds: Option<u32>,
        orders_per_admission: Option<u32>,
    ) -> Result<Self, String> {
        let admission_seconds = admission_seconds.unwrap_or(DEFAULT_ADMISSION_SECONDS);
        let orders_per_admission = orders_per_admission.unwrap_or(DEFAULT_ORDERS_PER_ADMISSION);
        let check = |name: &str, value: u32, range: &std::ops::RangeInclusive<u32>| {
            if range.contains(&value) {
                Ok(())
            } else {
                Err(format!(
                    "{name} must be {} to {}",
                    range.start(),
                    range.end()
                ))
            }
        };
        check("admitPerMinute", admit_per_minute, &ADMIT_PER_MINUTE)?;
        check("admissionSeconds", admission_seconds, &ADMISSION_SECONDS)?;
        check(
            "ordersPerAdmission",
            orders_per_admission,
            &ORDERS_PER_ADMISSION,
        )?;
        Ok(Self {
            opens_at,
            admit_per_minute,
            admission_seconds,
            orders_per_admission,
            buyers: Buyers::Anonymous,
            draw_settle_ms: DEFAULT_DRAW_SETTLE_MS,
        })
    }

    /// The least time between two admissions, in microseconds (a pace of
    /// a million a minute is 60 µs apart): rounded up, so no 60 seconds
    /// ever hold more than `admit_per_minute`.
    pub fn spacing_us(&self) -> i64 {
        let spacing = 60_000_000u64.div_ceil(u64::from(self.admit_per_minute.max(1)));
        // At most 60,000,000: it fits.
        i64::try_from(spacing).unwrap_or(i64::MAX)
    }

    /// The opening in microseconds, the pace's unit.
    pub fn opens_us(&self) -> i64 {
        self.opens_at.0 * 1_000
    }

    /// The first admission's earliest slot, µs: `draw_settle_ms` after
    /// the opening, by when the join index shows every drawn visitor.
    pub fn first_admission_us(&self) -> i64 {
        self.opens_us()
            .saturating_add(i64::from(self.draw_settle_ms) * 1_000)
    }

    /// Admissions a second, rounded up.
    pub fn per_second(&self) -> u64 {
        u64::from(self.admit_per_minute).div_ceil(60)
    }

    /// Whether a put may move `opens_at` to `new`: only while the queue has
    /// not opened (`409 queue-open` otherwise); the same value always may.
    pub fn may_move_opening(&self, new: Millis, now: Millis) -> bool {
        new == self.opens_at || now < self.opens_at
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueStatus {
    Scheduled,
    Open,
    Paused,
    SoldOut,
    /// The event sells only through its waitlist: nobody is admitted,
    /// and every visitor keeps its place.
    Waitlist,
}

impl QueueStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Scheduled => "SCHEDULED",
            Self::Open => "OPEN",
            Self::Paused => "PAUSED",
            Self::SoldOut => "SOLD_OUT",
            Self::Waitlist => "WAITLIST",
        }
    }
}

/// What the event has left, as the stream-fed map saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inventory {
    /// Something is available.
    Available,
    /// Nothing available, but something is held by a live order (it may
    /// come back).
    NoneAvailable,
    /// Everything is sold: nothing can come back.
    AllSold,
    /// Only the waitlist's offers take seats (its opening plus a second,
    /// until its delete), whatever is left.
    WaitlistOnly,
}

/// The first status that applies: SCHEDULED before `opens_at`, then by
/// what the admitter recorded as left: SOLD_OUT, WAITLIST, PAUSED, OPEN
/// (the tick lets only WAITLIST replace a recorded SOLD_OUT, so a queue
/// whose event only the waitlist sells reads WAITLIST).
pub fn queue_status(opens_at: Millis, inventory: Inventory, now: Millis) -> QueueStatus {
    if now < opens_at {
        QueueStatus::Scheduled
    } else {
        match inventory {
            Inventory::AllSold => QueueStatus::SoldOut,
            Inventory::WaitlistOnly => QueueStatus::Waitlist,
            Inventory::NoneAvailable => QueueStatus::Paused,
            Inventory::Available => QueueStatus::Open,
        }
    }
}

/// How long after the opening the first admission waits, unless
/// `DRAW_SETTLE_MS` says otherwise: the time the join index needs to show
/// every drawn visitor (DynamoDB's global secondary indexes lag their table
/// by a fraction of a second in normal operation), so the drawn are
/// admitted exactly in their keys' order.
pub const DEFAULT_DRAW_SETTLE_MS: u32 = 2_000;
/// `DRAW_SETTLE_MS`'s range: at most a minute (an index that lags longer
/// is an incident; `lateDrawn` counts what it costs).
pub const DRAW_SETTLE_MS_RANGE: std::ops::RangeInclusive<u32> = 0..=60_000;

/// A visitor's place in the queue's order: lower is served first. Those
/// who joined before the queue opened share the first band, in the order
/// of a random draw (a uniformly random order, however early they came);
/// later joiners follow, in the order they joined (the draw only breaks
/// ties within a millisecond).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct QueueRank(pub u128);

/// Bits of the draw kept below a later joiner's join time.
const TIE_BITS: u32 = 32;

/// The band of later joiners: ranks from here on carry their join time.
const LATER_BAND: u128 = 1u128 << 127;
/// The first rank of the later joiners' band: every drawn rank is below.
pub const FIRST_LATER_RANK: QueueRank = QueueRank(LATER_BAND);

/// A drawn visitor's rank: the first 127 bits of its draw key
/// (`DrawKey::rank_bits`), so drawn visitors rank in their keys' order.
/// The draws of a queue put before keys (and of seeded crowds) are 64-bit
/// (`queue_rank`), below every 127-bit one but in practice never beside
/// one: a generation draws one way throughout.
pub fn drawn_rank(key_bits: u128) -> QueueRank {
    QueueRank(key_bits & (LATER_BAND - 1))
}

/// A visitor's rank from a random 64-bit `draw`: an early joiner's when
/// its queue has no draw keys, and every later joiner's tie bits.
pub fn queue_rank(joined_at: Millis, opens_at: Millis, draw: u64) -> QueueRank {
    if joined_at < opens_at {
        QueueRank(u128::from(draw))
    } else {
        let joined = first_rank_joined_at(joined_at.0).0;
        QueueRank(joined | u128::from(draw >> (64 - TIE_BITS)))
    }
}

/// The lowest rank a later joiner who joined at `joined_ms` can have.
pub fn first_rank_joined_at(joined_ms: i64) -> QueueRank {
    let joined = u128::from(u64::try_from(joined_ms).unwrap_or(0));
    QueueRank(LATER_BAND | (joined << TIE_BITS))
}

/// The join time (ms) a later joiner's rank carries; `None` for an early
/// joiner's (a draw).
pub fn joined_at_of(rank: QueueRank) -> Option<i64> {
    (rank.0 >= LATER_BAND).then(|| {
        let joined = (rank.0 & !LATER_BAND) >> TIE_BITS;
        i64::try_from(joined).unwrap_or(i64::MAX)
    })
}

/// The times at which the next visitors are admitted, in queue order.
///
/// `last` is the latest admission's time, `resumed` the earliest instant
/// admission may happen (the opening, or the end of the latest pause),
/// and `eligible` the waiting visitors in queue order, each with the
/// instant it could first be admitted (its join, or the opening). All in
/// microseconds. A visitor is admitted at the latest of: the spacing after
/// the admission before it, `resumed`, and its own eligibility; visitors
/// whose time has not come by `now` wait. So consecutive admissions are
/// never closer than `spacing`, and the queue never idles while someone
/// eligible waits. A paused queue admits nobody: the caller does not ask
/// while paused, and passes the pause's end as `resumed` after it. Times
/// before `now` are slots a late caller catches up on: they keep the
/// spacing, and each admission's life starts when it is given
/// ([`admission_expires_at`]), not at its slot.
pub fn admission_times(
    last: Option<i64>,
    spacing: i64,
    resumed: i64,
    eligible: &[i64],
    now: i64,
) -> Vec<i64> {
    let mut next_allowed = last.map_or(resumed, |t| (t + spacing).max(resumed));
    let mut times = Vec::new();
    for &ready in eligible {
        let at = next_allowed.max(ready);
        if at > now {
            break;
        }
        times.push(at);
        next_allowed = at + spacing;
    }
    times
}

/// When a visitor `position` places from the front (1 = next) should be
/// admitted, if the queue keeps its pace from now (a paused queue is
/// assumed to resume now): never in the past.
pub fn estimated_admission_at(last: Option<i64>, spacing: i64, position: u64, now: i64) -> i64 {
    let next = last.map_or(now, |t| (t + spacing).max(now));
    let ahead = i64::try_from(position.saturating_sub(1)).unwrap_or(i64::MAX);
    next.saturating_add(ahead.saturating_mul(spacing))
}

/// The soonest a waiting visitor is asked to poll again (ms): its turn is
/// near, and its reply may lag the queue by a second.
pub const POLL_MIN_MS: i64 = 2_000;
/// The longest: an estimate can come true sooner than it said (a faster
/// pace set by the operator), so nobody waits on it for long.
pub const POLL_MAX_MS: i64 = 30_000;

/// When a visitor whose turn is estimated at `turn_at` should ask again,
/// ms from `now`: half the time left, between [`POLL_MIN_MS`] and
/// [`POLL_MAX_MS`]. A crowd then polls in proportion to the pace, not to
/// its size: the visitors near the front every two seconds, the rest
/// twice a minute (docs/SCALE.md projects the load).
pub fn poll_after_ms(turn_at: Millis, now: Millis) -> i64 {
    (turn_at.0.saturating_sub(now.0) / 2).clamp(POLL_MIN_MS, POLL_MAX_MS)
}

/// When a visitor should ask again before the opening, ms from `now`:
/// at its own instant of the 30 s after the opening (`spread`, drawn
/// independently of its draw key, picks it), coming closer at most
/// [`POLL_MAX_MS`] at a time and never sooner than [`POLL_MIN_MS`]. The
/// crowd's first polls after the opening spread evenly over those 30 s
/// instead of landing at once (docs/SCALE.md projects the peak), and
/// nothing in it depends on where the draw places the visitor.
pub fn poll_before_opening_ms(opens_at: Millis, now: Millis, spread: u64) -> i64 {
    let offset = i64::try_from(spread % POLL_MAX_MS.unsigned_abs()).unwrap_or(0);
    let target = opens_at.0.saturating_add(offset);
    target.saturating_sub(now.0).clamp(POLL_MIN_MS, POLL_MAX_MS)
}

/// Domain separation of a visitor's poll spread.
const POLL_SPREAD_LABEL: &str = "seatclaim poll spread v1";

/// The spread of `visitor`'s polls before the opening
/// ([`poll_before_opening_ms`]): from its id's hash, so the same on every
/// poll, and unrelated to its draw key (a MAC under the secret seed).
pub fn poll_spread(visitor: &super::VisitorId) -> u64 {
    use sha2::{Digest, Sha256};
    let hash = Sha256::digest(format!("{POLL_SPREAD_LABEL}\n{}", visitor.as_str()));
    let mut first = [0u8; 8];
    first.copy_from_slice(&hash[..8]);
    u64::from_be_bytes(first)
}

/// An admission's expiry, whole seconds (the token's `exp`): the later of
/// its slot and the moment it is given, rounded up to the second, plus
/// `admission_seconds`, so a visitor always has at least that long.
pub fn admission_expires_at(slot_us: i64, given_at: Millis, admission_seconds: u32) -> Millis {
    let start_ms =
        (slot_us.div_euclid(1_000) + i64::from(slot_us.rem_euclid(1_000) > 0)).max(given_at.0);
    let second = start_ms.div_euclid(1_000) + i64::from(start_ms.rem_euclid(1_000) > 0);
    Millis((second + i64::from(admission_seconds)) * 1_000)
}

/// Whether an admission still lets its visitor open orders: refused from
/// `now >= exp`, no leeway.
pub fn admission_is_live(expires_at: Millis, now: Millis) -> bool {
    now < expires_at
}

#[cfg(test)]
#[path = "queue_tests.rs"]
mod tests;
