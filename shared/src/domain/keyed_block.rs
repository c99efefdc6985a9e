//! best-available under an `Idempotency-Key` (docs/API.md,
//! "best-available"): the order records, in the claim's own transaction,
//! what each key asked for and the block it got, so a retry after a lost
//! reply is answered from the order instead of claiming a second block.

use super::{SeatId, SectionId};

/// What one key asked best-available for, and the block it got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyedBlock {
    pub quantity: u32,
    pub section: Option<SectionId>,
    /// Wheelchair spaces asked for (0: none).
    pub wheelchair: u32,
    pub seats: Vec<SeatId>,
}

/// What a request asks best-available for, as a key stands for it:
/// quantity, section (if named) and wheelchair spaces.
pub type BlockAsked<'a> = (u32, Option<&'a SectionId>, u32);

/// How a best-available request under a key is answered, given what the
/// order recorded under it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyedAnswer {
    /// The key is new on this order: choose and claim, recording it.
    Claim,
    /// A retry of the same request whose block the order still holds
    /// whole: answer with it again, claiming nothing.
    Again(Vec<SeatId>),
    /// The key was used for another request, or its block was changed
    /// since (a seat of it dropped): `422 idempotency-key-reused`.
    Reused,
}

/// The answer to a request for `asked` under a key the order recorded as
/// `kept` (`None`: a new key), the order holding `held` now.
pub fn keyed_answer(kept: Option<&KeyedBlock>, asked: BlockAsked, held: &[SeatId]) -> KeyedAnswer {
    let Some(kept) = kept else {
        return KeyedAnswer::Claim;
    };
    let same_request = (kept.quantity, kept.section.as_ref(), kept.wheelchair) == asked;
    let whole = kept.seats.iter().all(|seat| held.contains(seat));
    match (same_request, whole) {
        (true, true) => KeyedAnswer::Again(kept.seats.clone()),
        _ => KeyedAnswer::Reused,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the order kept, the request, what the order holds, the answer.
    type Case<'a> = (
        Option<&'a KeyedBlock>,
        BlockAsked<'a>,
        &'a [SeatId],
        KeyedAnswer,
    );

    #[test]
    fn a_retry_is_answered_with_its_block_only_while_the_order_holds_it_whole(
    ) -> Result<(), crate::error::Error> {
        let seats = |ids: &[&str]| -> Result<Vec<SeatId>, crate::error::Error> {
            ids.iter().map(|s| SeatId::parse(s)).collect()
        };
        let a = SectionId::parse("A")?;
        let b = SectionId::parse("B")?;
        let kept = KeyedBlock {
            quantity: 2,
            section: Some(a.clone()),
            wheelchair: 1,
            seats: seats(&["A-1-4", "A-1-5"])?,
        };
        let both = seats(&["A-1-4", "A-1-5", "A-2-1"])?;
        let again = KeyedAnswer::Again(kept.seats.clone());
        let cases: [Case; 8] = [
            (None, (2, Some(&a), 1), &both, KeyedAnswer::Claim),
            (Some(&kept), (2, Some(&a), 1), &both, again),
            (Some(&kept), (3, Some(&a), 1), &both, KeyedAnswer::Reused),
            (Some(&kept), (2, Some(&b), 1), &both, KeyedAnswer::Reused),
            (Some(&kept), (2, None, 1), &both, KeyedAnswer::Reused),
            (Some(&kept), (2, Some(&a), 0), &both, KeyedAnswer::Reused),
            (Some(&kept), (2, Some(&a), 2), &both, KeyedAnswer::Reused),
            // A seat of the block was dropped since: not held whole.
            (
                Some(&kept),
                (2, Some(&a), 1),
                &both[1..],
                KeyedAnswer::Reused,
            ),
        ];
        for (i, (kept, asked, held, want)) in cases.into_iter().enumerate() {
            assert_eq!(keyed_answer(kept, asked, held), want, "case {i}");
        }
        Ok(())
    }
}
