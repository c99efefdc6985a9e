//! Counts by second, as the waitlist's positions and its offer counts keep
//! them: a bucket spans seconds and carries a signed count.

use std::collections::BTreeMap;

use super::Millis;

/// A signed count over the seconds `first..=last` (Unix seconds): the
/// WAITING entries that joined then (a departure can be counted before
/// its join), or the live offers expiring then (an end before its offer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bucket {
    pub first: i64,
    pub last: i64,
    pub waiting: i64,
}

/// The Unix second of `at`.
pub(super) fn second(at: Millis) -> i64 {
    at.0.div_euclid(1_000)
}

/// Per-second sums of `moves` (`(second, delta)`: a join +1 at its second,
/// a departure -1 at its join's second; an offer +1 at its expiry's, its
/// end -1 there), the zero sums left out.
pub(super) fn tally<'a>(moves: impl Iterator<Item = (i64, i64)> + 'a) -> BTreeMap<i64, i64> {
    let mut seconds = BTreeMap::new();
    for (at, delta) in moves {
        *seconds.entry(at).or_insert(0) += delta;
    }
    seconds.retain(|_, n| *n != 0);
    seconds
}

/// Adds `delta` at second `at`: into the bucket spanning it, or a new one.
pub(super) fn add(buckets: &mut Vec<Bucket>, at: i64, delta: i64) {
    let i = buckets.partition_point(|b| b.last < at);
    match buckets.get_mut(i) {
        Some(b) if b.first <= at => b.waiting += delta,
        _ => buckets.insert(
            i,
            Bucket {
                first: at,
                last: at,
                waiting: delta,
            },
        ),
    }
}

/// `seconds`' sums as buckets of one second each, in order.
pub(super) fn by_second(seconds: BTreeMap<i64, i64>) -> Vec<Bucket> {
    seconds
        .into_iter()
        .map(|(at, waiting)| Bucket {
            first: at,
            last: at,
            waiting,
        })
        .collect()
}
