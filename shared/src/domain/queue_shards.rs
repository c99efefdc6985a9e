//! How many partitions of each queue index a generation's waiting
//! visitors spread over. Fixed when the generation is put and stored with
//! it: a visitor's shard is computed once, at its join, from the count
//! the queue's state carries, and every reader of the index reads that
//! many shards. A reader that read fewer than were written would strand
//! visitors (never counted, never admitted), so the count never changes
//! within a generation; a new generation takes the current setting.

/// A generation's shard count: a power of two up to [`QueueShards::MOST`],
/// so a hash byte modulo it is uniform (it divides 256).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueShards(u8);

impl QueueShards {
    /// What a generation put before the count was stored was written
    /// with (its item has no count).
    pub const LEGACY: QueueShards = QueueShards(32);
    /// A new generation's count unless `QUEUE_SHARDS` says otherwise:
    /// issue 19's 20,000 joins a second put about 160 on each shard, so
    /// the shards that share one of a table's partitions (a hash places
    /// them) stay under its limit (docs/QUEUE.md replays it).
    pub const DEFAULT: QueueShards = QueueShards(Self::MOST);
    /// The most a hash byte spreads evenly over.
    pub const MOST: u8 = 128;

    /// `count` if it is a power of two from 1 to [`Self::MOST`].
    pub fn new(count: u32) -> Option<Self> {
        u8::try_from(count)
            .ok()
            .filter(|c| c.is_power_of_two() && *c <= Self::MOST)
            .map(Self)
    }

    pub fn count(self) -> u8 {
        self.0
    }

    /// Every shard, in order.
    pub fn all(self) -> std::ops::Range<u8> {
        0..self.0
    }

    /// The shard of a visitor whose id hashes to `byte` (the id's own
    /// randomness, uniform).
    pub fn of_hash_byte(self, byte: u8) -> u8 {
        byte % self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_powers_of_two_up_to_128_are_counts() {
        for (count, valid) in [
            (0, false),
            (1, true),
            (3, false),
            (32, true),
            (64, true),
            (100, false),
            (128, true),
            (200, false),
            (256, false),
            (u32::MAX, false),
        ] {
            assert_eq!(QueueShards::new(count).is_some(), valid, "{count}");
        }
        assert_eq!(QueueShards::new(32), Some(QueueShards::LEGACY));
        assert_eq!(QueueShards::new(128), Some(QueueShards::DEFAULT));
    }

    #[test]
    fn every_shard_takes_an_equal_share_of_the_hash() {
        for shards in [QueueShards::LEGACY, QueueShards::DEFAULT] {
            let mut taken = vec![0u32; usize::from(shards.count())];
            for byte in 0..=u8::MAX {
                taken[usize::from(shards.of_hash_byte(byte))] += 1;
            }
            let even = 256 / u32::from(shards.count());
            assert!(taken.iter().all(|&t| t == even), "{shards:?}: {taken:?}");
            assert_eq!(shards.all().len(), usize::from(shards.count()));
        }
    }
}
