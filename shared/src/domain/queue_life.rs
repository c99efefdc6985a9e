//! How long a queue generation lives (docs/API.md, put-queue): it ends
//! [`GENERATION_LIFE_MS`] after it was first put, and opens at most
//! [`MAX_OPENS_AHEAD_MS`] after that. Its visitors' items are kept until a
//! day past its end whatever their join or admission: one place per buyer
//! lasts the generation's whole life, and nothing is written per visitor
//! when it ends. A generation put before ends has none, and its items keep
//! the older join- and admission-based lives.

use super::queue_shards::QueueShards;
use super::Millis;

const DAY_MS: i64 = 24 * 3_600_000;

/// A generation ends this long after it was first put.
pub const GENERATION_LIFE_MS: i64 = 90 * DAY_MS;

/// A generation opens at most this long after it was first put, so it is
/// open for at least the rest of its life (30 days).
pub const MAX_OPENS_AHEAD_MS: i64 = 60 * DAY_MS;

/// A visitor's item outlives its generation's end by this long: its
/// admission (at most 2 hours) and its replies outlast the end.
pub const KEPT_PAST_END_MS: i64 = DAY_MS;

/// When a generation first put at `began` ends.
pub fn generation_end(began: Millis) -> Millis {
    Millis(began.0.saturating_add(GENERATION_LIFE_MS))
}

/// The latest opening of a generation that ends at `ends_at`.
pub fn latest_opening(ends_at: Millis) -> Millis {
    Millis(ends_at.0 - (GENERATION_LIFE_MS - MAX_OPENS_AHEAD_MS))
}

/// Whether a generation that ends at `ends_at` (`None`: put before ends)
/// is over at `now`: it then answers as a removed queue.
pub fn has_ended(ends_at: Option<Millis>, now: Millis) -> bool {
    ends_at.is_some_and(|end| now >= end)
}

/// Until when a visitor's item is kept: a day past its generation's end
/// (`ends_at`); without one, `otherwise` (its admission's or join's rule).
pub fn kept_until(ends_at: Option<Millis>, otherwise: Millis) -> Millis {
    ends_at.map_or(otherwise, |end| {
        Millis(end.0.saturating_add(KEPT_PAST_END_MS))
    })
}

/// What a generation fixes for its visitors' items: the index shards they
/// spread over, and its end, which every one of them outlives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VisitorItems {
    pub shards: QueueShards,
    pub ends_at: Option<Millis>,
}

impl VisitorItems {
    /// The items of a generation put before ends (the tests' and the
    /// bench's seeded ones too).
    pub fn without_end(shards: QueueShards) -> Self {
        Self {
            shards,
            ends_at: None,
        }
    }

    /// See [`kept_until`].
    pub fn kept_until(&self, otherwise: Millis) -> Millis {
        kept_until(self.ends_at, otherwise)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generation_opens_within_60_days_and_ends_90_days_after_its_first_put() {
        let began = Millis(1_800_000_000_000);
        let end = generation_end(began);
        assert_eq!(end.0 - began.0, 90 * DAY_MS);
        assert_eq!(latest_opening(end).0 - began.0, 60 * DAY_MS);
        assert!(!has_ended(Some(end), Millis(end.0 - 1)));
        assert!(has_ended(Some(end), end));
        assert!(!has_ended(None, Millis(i64::MAX)), "no end: never over");
        let items = VisitorItems {
            shards: QueueShards::DEFAULT,
            ends_at: Some(end),
        };
        let joined = Millis(began.0 + 1_000);
        assert_eq!(items.kept_until(joined).0, end.0 + DAY_MS);
        let old = VisitorItems::without_end(QueueShards::DEFAULT);
        assert_eq!(old.kept_until(joined), joined);
    }
}
