//! The admitter's counts of a queue's joins as the main queue item keeps
//! them: one binary attribute, big-endian. Per shard the join time counted
//! to (8 bytes each, after a 2-byte count), the counted visitors admitted
//! (8), then per bucket its lower and upper rank (16 each) and its count
//! (8). About 20 KB at [`MAX_BUCKETS`](crate::domain::queue_counts::MAX_BUCKETS).

use crate::domain::queue::QueueRank;
use crate::domain::queue_counts::{Bucket, JoinCounts};

pub(in crate::store) fn encode(counts: &JoinCounts) -> Vec<u8> {
    let mut bytes =
        Vec::with_capacity(10 + counts.counted_to.len() * 8 + counts.buckets.len() * 40);
    // One mark per shard: at most QueueShards::MOST (128), far below u16::MAX.
    let shards = u16::try_from(counts.counted_to.len()).unwrap_or(u16::MAX);
    bytes.extend_from_slice(&shards.to_be_bytes());
    for to in counts.counted_to.iter().take(usize::from(shards)) {
        bytes.extend_from_slice(&to.to_be_bytes());
    }
    bytes.extend_from_slice(&counts.admitted.to_be_bytes());
    for b in &counts.buckets {
        bytes.extend_from_slice(&b.lower.0.to_be_bytes());
        bytes.extend_from_slice(&b.upper.0.to_be_bytes());
        bytes.extend_from_slice(&b.count.to_be_bytes());
    }
    bytes
}

/// Reads big-endian fields off the front of a byte slice.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, rest) = self.0.split_at_checked(N)?;
        self.0 = rest;
        head.try_into().ok()
    }
    fn u64(&mut self) -> Option<u64> {
        self.take().map(u64::from_be_bytes)
    }
    fn rank(&mut self) -> Option<QueueRank> {
        self.take().map(|b| QueueRank(u128::from_be_bytes(b)))
    }
}

pub(in crate::store) fn decode(bytes: &[u8]) -> Option<JoinCounts> {
    let mut r = Reader(bytes);
    let shards = u16::from_be_bytes(r.take()?);
    let counted_to = (0..shards)
        .map(|_| r.take().map(i64::from_be_bytes))
        .collect::<Option<Vec<_>>>()?;
    let admitted = r.u64()?;
    let mut buckets = Vec::new();
    while !r.0.is_empty() {
        buckets.push(Bucket {
            lower: r.rank()?,
            upper: r.rank()?,
            count: r.u64()?,
        });
    }
    // Sorted and apart, as the counts keep them: their lookups rely on it.
    let ordered = buckets.iter().all(|b| b.lower < b.upper)
        && buckets.windows(2).all(|w| w[0].upper <= w[1].lower);
    ordered.then_some(JoinCounts {
        counted_to,
        buckets,
        admitted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_round_trip_and_a_torn_value_is_refused() {
        let counts = JoinCounts {
            counted_to: vec![5, -1, i64::MAX],
            buckets: vec![
                Bucket {
                    lower: QueueRank(0),
                    upper: QueueRank(1 << 56),
                    count: 7,
                },
                Bucket {
                    lower: QueueRank(u128::MAX - 1),
                    upper: QueueRank(u128::MAX),
                    count: u64::MAX,
                },
            ],
            admitted: 3,
        };
        let bytes = encode(&counts);
        assert_eq!(decode(&bytes), Some(counts.clone()));
        assert_eq!(
            decode(&encode(&JoinCounts::default())),
            Some(JoinCounts::default())
        );
        assert_eq!(decode(&bytes[..bytes.len() - 1]), None);
        assert_eq!(decode(&[0]), None);
        let mut crossed = counts.clone();
        crossed.buckets.reverse();
        assert_eq!(decode(&encode(&crossed)), None, "out of order");
    }
}
