//! Finding general-admission places for hold-ga and confirm: a random
//! window of the section's buckets first (buyers spread over the buckets,
//! and one batch read is enough while the section is far from sold out),
//! then all of them, consistently read, before anything is refused.

use crate::domain::ga::{bucket_count, Bucket};
use crate::domain::{EventId, SectionId};
use crate::error::Error;
use crate::App;

use crate::world::random_u64;

/// Buckets read first: enough to find places while the section is far from
/// sold out, few enough to be one batch read.
const BUCKETS_SAMPLED: u32 = 8;

/// Plans from the buckets of a section of `capacity` places: `plan` sees
/// the buckets in `must` (those the caller has to see, such as the
/// order's own) and a random window, read consistently if `consistent`;
/// if it finds nothing there, it sees every bucket, read consistently.
/// `Err(buckets)`: no plan fits the whole section as read.
pub(super) async fn plan_from_buckets<T>(
    app: &App,
    event: &EventId,
    section: &SectionId,
    capacity: u32,
    must: &[u32],
    consistent: bool,
    plan: impl Fn(&[Bucket]) -> Option<T>,
) -> Result<Result<T, Vec<Bucket>>, Error> {
    let count = bucket_count(capacity);
    let start = (random_u64() % u64::from(count)) as u32;
    let mut first: Vec<u32> = must.iter().copied().filter(|&b| b < count).collect();
    first.extend(
        (0..BUCKETS_SAMPLED.min(count))
            .map(|i| (start + i) % count)
            .filter(|b| !must.contains(b)),
    );
    let sampled = app
        .store
        .read_buckets(event, section, &first, consistent)
        .await?;
    if let Some(planned) = plan(&sampled) {
        return Ok(Ok(planned));
    }
    if first.len() as u32 == count && consistent {
        return Ok(Err(sampled));
    }
    let all: Vec<u32> = (0..count).map(|i| (start + i) % count).collect();
    let buckets = app.store.read_buckets(event, section, &all, true).await?;
    Ok(plan(&buckets).ok_or(buckets))
}
