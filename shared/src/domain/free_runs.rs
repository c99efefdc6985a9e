//! What the stream-fed seat map says of a row's free runs, in two numbers:
//! the longest run of free seats when the projection was written, and the
//! instant that answer stops holding (the first live hold's expiry: from
//! then on a longer run may be free without any write). best-available
//! refuses from it (docs/API.md, "best-available's bounds") and skips the
//! rows it rules out. Pure.

use super::{hold_is_live, Millis, ProjectedSeat, RowProjection};

/// A row's free runs as its projection showed them at `as_of`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowRuns {
    /// The longest run of seats free at `as_of` (a hold expired by then
    /// counts as free).
    pub longest: u32,
    /// The earliest expiry of a hold live at `as_of`; `None` when no hold
    /// was live (only a write to the row can lengthen its runs).
    pub until: Option<Millis>,
}

impl RowRuns {
    /// The runs of a row of `seats` seats whose projection is `taken`
    /// (seat number to state; free seats absent), at `as_of`.
    pub fn of(seats: u32, taken: &RowProjection, as_of: Millis) -> Self {
        let (mut longest, mut run) = (0u32, 0u32);
        let mut until: Option<Millis> = None;
        for number in 1..=seats {
            let blocked = match taken.get(&number) {
                None => false,
                Some(ProjectedSeat::Sold) => true,
                Some(ProjectedSeat::Held { expires_at }) => {
                    let live = hold_is_live(*expires_at, as_of);
                    if live {
                        until = Some(until.map_or(*expires_at, |u| u.min(*expires_at)));
                    }
                    live
                }
            };
            run = if blocked { 0 } else { run + 1 };
            longest = longest.max(run);
        }
        Self { longest, until }
    }

    /// The longest free run at `now`, while this summary still tells it
    /// (`None` once a hold it counted may have expired).
    pub fn longest_at(&self, now: Millis) -> Option<u32> {
        match self.until {
            Some(until) if !hold_is_live(until, now) => None,
            _ => Some(self.longest),
        }
    }

    /// Whether the row may hold a run of `n` at `now`: false only when the
    /// summary still tells and its longest run is shorter.
    pub fn may_fit(summary: Option<&Self>, n: u32, now: Millis) -> bool {
        summary
            .and_then(|runs| runs.longest_at(now))
            .is_none_or(|longest| longest >= n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(ms: i64) -> ProjectedSeat {
        ProjectedSeat::Held {
            expires_at: Millis(ms),
        }
    }

    /// (what, seats in the row, its taken seats, the runs expected).
    type Case = (&'static str, u32, Vec<(u32, ProjectedSeat)>, RowRuns);

    #[test]
    fn runs_of_a_row_table() {
        let t = Millis(1_000);
        let cases: Vec<Case> = vec![
            (
                "an untouched row",
                10,
                vec![],
                RowRuns {
                    longest: 10,
                    until: None,
                },
            ),
            (
                "every tenth held",
                50,
                (1..=5)
                    .map(|i| (i * 10, held(9_000 + i64::from(i))))
                    .collect(),
                RowRuns {
                    longest: 9,
                    until: Some(Millis(9_001)),
                },
            ),
            (
                "sold seats never expire",
                6,
                vec![(3, ProjectedSeat::Sold)],
                RowRuns {
                    longest: 3,
                    until: None,
                },
            ),
            (
                "a hold expired by then is free",
                6,
                vec![(3, held(1_000)), (5, held(2_000))],
                RowRuns {
                    longest: 4,
                    until: Some(Millis(2_000)),
                },
            ),
            (
                "all taken",
                2,
                vec![(1, ProjectedSeat::Sold), (2, held(5_000))],
                RowRuns {
                    longest: 0,
                    until: Some(Millis(5_000)),
                },
            ),
            (
                "seats past the row's end are ignored",
                3,
                vec![(4, ProjectedSeat::Sold)],
                RowRuns {
                    longest: 3,
                    until: None,
                },
            ),
        ];
        for (what, seats, taken, want) in cases {
            let taken: RowProjection = taken.into_iter().collect();
            assert_eq!(RowRuns::of(seats, &taken, t), want, "{what}");
        }
    }

    #[test]
    fn a_summary_tells_until_its_first_live_hold_expires() {
        let runs = RowRuns {
            longest: 9,
            until: Some(Millis(5_000)),
        };
        let cases = [
            ("before the expiry", 4_999, 10, false),
            ("before, and a shorter run", 4_999, 9, true),
            ("at the expiry the hold is free", 5_000, 10, true),
            ("after it", 6_000, 10, true),
        ];
        for (what, now, n, fits) in cases {
            assert_eq!(
                RowRuns::may_fit(Some(&runs), n, Millis(now)),
                fits,
                "{what}"
            );
        }
        assert!(RowRuns::may_fit(None, 50, Millis(0)), "no summary: maybe");
        let forever = RowRuns {
            longest: 2,
            until: None,
        };
        assert!(!RowRuns::may_fit(Some(&forever), 3, Millis(i64::MAX)));
    }
}
