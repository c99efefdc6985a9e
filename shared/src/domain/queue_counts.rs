//! How many visitors a queue has, without holding them: the admitter
//! counts each join once (per index shard, up to a join time that only
//! moves forward) into buckets of ranks, and counts the counted visitors
//! it admits. Positions past the visitors it knows by name come from the
//! buckets, so a tick's work and the state's size do not grow with the
//! queue (DESIGN.md, "The admitter under a flood").

use super::queue::{first_rank_joined_at, joined_at_of, QueueRank, FIRST_LATER_RANK};

/// Early joiners' ranks are counted in this many equal bands of their draw
/// space: the 127 bits of draw keys, or the 64 of a random draw (a queue
/// put before keys, a seeded crowd).
pub const DRAW_BANDS: u32 = 256;
/// Later joiners are counted per second of their join.
pub const JOIN_BAND_MS: i64 = 1_000;
/// At most this many buckets ride on the state (40 bytes each): past it,
/// the two neighbours with the fewest visitors merge.
pub const MAX_BUCKETS: usize = 512;

/// Visitors counted with a rank in `[lower, upper)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bucket {
    pub lower: QueueRank,
    pub upper: QueueRank,
    pub count: u64,
}

/// A queue's counted joins.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JoinCounts {
    /// Per index shard, the join time (ms) up to which (exclusive) every
    /// join has been counted.
    pub counted_to: Vec<i64>,
    /// Sorted, never overlapping.
    pub buckets: Vec<Bucket>,
    /// Counted visitors admitted since the buckets' start.
    pub admitted: u64,
}

/// The band a rank is counted in before any merge.
fn band_of(rank: QueueRank) -> (QueueRank, QueueRank) {
    if let Some(joined) = joined_at_of(rank) {
        let second = joined.div_euclid(JOIN_BAND_MS) * JOIN_BAND_MS;
        return (
            first_rank_joined_at(second),
            first_rank_joined_at(second.saturating_add(JOIN_BAND_MS)),
        );
    }
    // The two draw spaces, never overlapping: 64-bit draws below 2^64,
    // keys' 127 bits above (one below 2^64, odds 2^-63, counts with the
    // 64-bit ones: still in one band, in order).
    let (start, end) = if rank.0 < 1u128 << 64 {
        (0, 1u128 << 64)
    } else {
        (1u128 << 64, FIRST_LATER_RANK.0)
    };
    let width = (end - start).div_ceil(u128::from(DRAW_BANDS));
    let lower = start + (rank.0 - start) / width * width;
    (QueueRank(lower), QueueRank((lower + width).min(end)))
}

impl JoinCounts {
    /// Whether a visitor of `shard` who joined at `joined_ms` is counted.
    pub fn is_counted(&self, shard: usize, joined_ms: i64) -> bool {
        joined_ms < self.counted_to(shard)
    }

    pub fn counted_to(&self, shard: usize) -> i64 {
        self.counted_to.get(shard).copied().unwrap_or(0)
    }

    /// Counts `ranks`, the joins of `shard` from its `counted_to` up to
    /// `to_ms` (exclusive), and moves it there. Each join must come once:
    /// the caller reads only from the mark on.
    pub fn record(&mut self, shard: usize, ranks: impl IntoIterator<Item = QueueRank>, to_ms: i64) {
        if self.counted_to.len() <= shard {
            self.counted_to.resize(shard + 1, 0);
        }
        self.counted_to[shard] = self.counted_to[shard].max(to_ms);
        for rank in ranks {
            self.add(rank);
        }
        self.bound();
    }

    fn add(&mut self, rank: QueueRank) {
        let i = self.buckets.partition_point(|b| b.upper <= rank);
        match self.buckets.get_mut(i) {
            Some(b) if b.lower <= rank => b.count += 1,
            // Bands are whole cells of one grid and merges join whole
            // buckets, so a rank outside every bucket has a band that
            // overlaps none.
            _ => {
                let (lower, upper) = band_of(rank);
                self.buckets.insert(
                    i,
                    Bucket {
                        lower,
                        upper,
                        count: 1,
                    },
                );
            }
        }
    }

    /// Merges neighbours until at most [`MAX_BUCKETS`] remain.
    fn bound(&mut self) {
        while self.buckets.len() > MAX_BUCKETS {
            let Some(i) = (0..self.buckets.len() - 1)
                .min_by_key(|&i| self.buckets[i].count + self.buckets[i + 1].count)
            else {
                return;
            };
            let next = self.buckets.remove(i + 1);
            let b = &mut self.buckets[i];
            b.upper = next.upper;
            b.count += next.count;
        }
    }

    pub fn total(&self) -> u64 {
        self.buckets.iter().map(|b| b.count).sum()
    }

    /// Counted visitors still waiting.
    pub fn waiting(&self) -> u64 {
        self.total().saturating_sub(self.admitted)
    }

    /// Forgets the buckets wholly below `rank`, the first rank still
    /// waiting: every visitor counted in them has been admitted.
    pub fn forget_below(&mut self, rank: QueueRank) {
        let gone = self.buckets.partition_point(|b| b.upper <= rank);
        let count: u64 = self.buckets.drain(..gone).map(|b| b.count).sum();
        self.admitted = self.admitted.saturating_sub(count);
    }

    /// The whole queue is known (`counted_waiting` of its waiting
    /// visitors are counted): whatever drift the count took (a visitor
    /// admitted twice over, an index entry that showed late) ends here.
    pub fn settle(&mut self, counted_waiting: u64) {
        self.admitted = self.total().saturating_sub(counted_waiting);
    }

    /// Checkpoints past `after`: at each bucket's upper end, how many
    /// counted visitors wait ahead of it.
    pub fn points_after(&self, after: QueueRank) -> Vec<(QueueRank, u64)> {
        let mut below = 0u64;
        let mut points = Vec::new();
        for b in &self.buckets {
            // The first bucket past `after` starts with a point of its
            // own: its first visitors are not all told they are next.
            if points.is_empty() && b.lower >= after {
                points.push((b.lower, below.saturating_sub(self.admitted)));
            }
            below += b.count;
            if b.upper > after {
                points.push((b.upper, below.saturating_sub(self.admitted)));
            }
        }
        points
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::queue::{drawn_rank, queue_rank};
    use crate::domain::Millis;

    const OPENS: Millis = Millis(100_000);

    fn draw(i: u64) -> QueueRank {
        // Spread like a draw, reproducibly.
        queue_rank(Millis(0), OPENS, i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
    }

    #[test]
    fn every_join_counts_once_in_its_band() {
        let mut counts = JoinCounts::default();
        counts.record(3, (0..1_000).map(draw), 50_000);
        assert_eq!((counts.total(), counts.waiting()), (1_000, 1_000));
        assert_eq!(counts.buckets.len(), DRAW_BANDS as usize);
        assert!(counts.is_counted(3, 49_999) && !counts.is_counted(3, 50_000));
        assert!(!counts.is_counted(0, 0), "another shard counted nothing");
        // A shard's mark never goes back.
        counts.record(3, [], 10);
        assert_eq!(counts.counted_to(3), 50_000);
        // Later joiners: one bucket per second of their join.
        let later = |ms| queue_rank(Millis(ms), OPENS, 7);
        counts.record(0, [later(100_000), later(100_999), later(101_000)], 102_000);
        assert_eq!(counts.buckets.len(), DRAW_BANDS as usize + 2);
        let last = counts.buckets[counts.buckets.len() - 1];
        assert_eq!((last.lower, last.count), (first_rank_joined_at(101_000), 1));
        assert!(counts.buckets.windows(2).all(|w| w[0].upper <= w[1].lower));
    }

    #[test]
    fn the_buckets_stay_bounded_and_keep_every_visitor() {
        let mut counts = JoinCounts::default();
        // A crowd in the first ten seconds, then one joiner a second.
        let ranks = (0..1_000)
            .map(|i| queue_rank(Millis(OPENS.0 + i * 10), OPENS, 1))
            .chain((10..3_000).map(|s| queue_rank(Millis(OPENS.0 + s * 1_000), OPENS, 1)));
        counts.record(0, ranks.clone(), i64::MAX);
        assert_eq!(counts.buckets.len(), MAX_BUCKETS);
        assert_eq!(counts.total(), 3_990);
        assert!(counts.buckets.windows(2).all(|w| w[0].upper <= w[1].lower));
        // The emptiest merged: the crowd's seconds keep a bucket each.
        let first = counts.buckets[0];
        assert_eq!(
            (first.lower, first.upper, first.count),
            (
                first_rank_joined_at(OPENS.0),
                first_rank_joined_at(OPENS.0 + 1_000),
                100
            )
        );
        // A rank inside a merged bucket lands in it.
        let late = queue_rank(Millis(OPENS.0 + 2_999_000), OPENS, 1);
        counts.record(0, [late], i64::MAX);
        assert_eq!((counts.buckets.len(), counts.total()), (MAX_BUCKETS, 3_991));
    }

    /// A draw key's rank, spread like one, reproducibly.
    fn keyed(i: u64) -> QueueRank {
        let spread = u128::from(i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        drawn_rank(spread << 64 | spread)
    }

    #[test]
    fn keys_count_in_bands_of_their_own_beside_random_draws() {
        let mut counts = JoinCounts::default();
        counts.record(0, (1..=1_000).map(keyed), 1);
        // 256 equal bands of the keys' space, above the 64-bit draws'.
        assert_eq!(counts.buckets.len(), DRAW_BANDS as usize);
        let width = ((1u128 << 127) - (1u128 << 64)) / u128::from(DRAW_BANDS);
        for bucket in &counts.buckets {
            assert!(bucket.lower.0 >= 1u128 << 64);
            assert_eq!(bucket.upper.0 - bucket.lower.0, width);
        }
        counts.record(0, (0..1_000).map(draw), 2);
        assert_eq!(counts.total(), 2_000);
        assert_eq!(counts.buckets.len(), 2 * DRAW_BANDS as usize);
        assert!(counts.buckets.windows(2).all(|w| w[0].upper <= w[1].lower));
        assert!(counts.buckets.iter().all(|b| b.upper <= FIRST_LATER_RANK));
    }

    #[test]
    fn positions_past_the_known_come_from_the_buckets() {
        for spread in [draw, keyed] {
            positions_come_from_the_buckets(spread);
        }
    }

    fn positions_come_from_the_buckets(spread: fn(u64) -> QueueRank) {
        let mut counts = JoinCounts::default();
        let ranks: Vec<QueueRank> = (0..100_000).map(spread).collect();
        counts.record(0, ranks.iter().copied(), 1);
        counts.admitted = 30_000;
        let mut sorted = ranks.clone();
        sorted.sort();
        let points = counts.points_after(sorted[30_000]);
        // Every point is exact at its bucket's end.
        for (rank, ahead) in &points {
            let truth = sorted.partition_point(|r| r < rank) as u64 - 30_000;
            assert_eq!(*ahead, truth);
        }
        // The first 30,000 were admitted: forgetting their buckets keeps
        // every position.
        counts.forget_below(sorted[30_000]);
        assert_eq!(counts.waiting(), 70_000);
        assert_eq!(counts.points_after(sorted[30_000]), points);
        counts.settle(69_990);
        assert_eq!(counts.waiting(), 69_990);
    }
}
