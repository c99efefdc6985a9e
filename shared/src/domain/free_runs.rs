//! What the stream-fed seat map says of a row's free runs, in two numbers:
//! the longest run of free seats when the projection was written, and the
//! instant that answer stops holding (the first live hold's expiry: from
//! then on a longer run may be free without any write). best-available
//! refuses from it (docs/API.md, "best-available's bounds") and skips the
//! rows it rules out. Pure.
//!
//! The summaries of an event's rows are spread over small items
//! ([`RunsLayout`]), dealt across its sections: one write of a hot row
//! then costs a single write unit and shares its key with rows of other
//! sections, which a crowd loads less, and a request that must see every
//! row (a refusal with no section asked) reads about one item per kilobyte
//! of summaries.

use super::{hold_is_live, Millis, ProjectedSeat, RowPlan, RowProjection, SectionPlan};

/// A row's summary is written at every this many versions of its
/// projection item even when its runs did not change ([`RowRuns::worth_writing`]).
pub const RUNS_REWRITE_EVERY: i64 = 8;
/// What an item may spend on its rows' summaries and stay under the 1 KB
/// that one write unit pays for: its key and sort key
/// (`RUNS#{ref}#{item}`, `RUNS`) take under 64 bytes.
const RUNS_ITEM_ROW_BYTES: usize = 960;
/// One row's summary value at its largest, by DynamoDB's item-size rules
/// (a map's 3 bytes and 1 per element, one-letter names, numbers of at
/// most 13 digits at 1 byte per two digits and 1 more), rounded up.
pub const RUNS_VALUE_BYTES: usize = 32;
/// The fewest items an event's summaries take (fewer only when it has
/// fewer rows): a small event's rows, which one crowd loads alike, each
/// get a key of their own or share it with a few, for 8 read units a
/// read of them all at most.
pub const RUNS_FEWEST_ITEMS: usize = 16;

/// How an event's row summaries are spread over items: as few items as
/// their bytes allow (at least [`RUNS_FEWEST_ITEMS`]), the rows of every
/// seated section dealt round robin in plan order, so a section's rows,
/// which a crowd loads alike, land on different keys beside other
/// sections' rows. Read units follow the items (each read costs half a
/// unit however small), write units each item's rows. The projector
/// learns a row's item from its seats (written at create-event);
/// best-available computes the same from the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunsLayout {
    items: u32,
}

impl RunsLayout {
    pub fn of(sections: &[SectionPlan]) -> Self {
        let rows = seated_rows(sections);
        // A row's attribute name is `{section}-{row}`.
        let name = rows
            .clone()
            .map(|(s, r)| s.section_id.as_str().len() + 1 + r.row.as_str().len())
            .max()
            .unwrap_or(0);
        let per_item = (RUNS_ITEM_ROW_BYTES / (name + RUNS_VALUE_BYTES)).max(1);
        let count = rows.count();
        let items = count
            .div_ceil(per_item)
            .max(count.min(RUNS_FEWEST_ITEMS))
            .max(1);
        Self {
            items: u32::try_from(items).unwrap_or(u32::MAX),
        }
    }

    /// How many items the event's summaries take.
    pub fn items(&self) -> u32 {
        self.items
    }

    /// Every row of `sections`' seated sections, in plan order, with the
    /// item that holds its summary. Each section takes the next of the
    /// event's slots dealt round robin over the items (so no item holds
    /// more than its share, and a section's rows sit on distinct keys
    /// while it has no more rows than there are items), its rows rotated
    /// by the section's place among the seated ones: the `k`th section's
    /// first slot holds its row `k` (modulo its rows). Without the
    /// rotation, sections of a length that divides the items would stack
    /// their front rows, which a crowd loads most, on the same key.
    pub fn place<'a>(
        &self,
        sections: &'a [SectionPlan],
    ) -> impl Iterator<Item = (&'a SectionPlan, &'a RowPlan, u32)> + 'a {
        // `items` is at least 1; the remainder fits in a u32.
        let items = self.items.max(1) as usize;
        let firsts = seated(sections).enumerate().scan(0usize, |next, (k, s)| {
            let first = *next;
            *next += s.rows.len();
            Some((k, s, first))
        });
        firsts.flat_map(move |(k, s, first)| {
            let n = s.rows.len().max(1);
            s.rows.iter().enumerate().map(move |(r, row)| {
                let slot = first + (r + n - k % n) % n;
                (s, row, u32::try_from(slot % items).unwrap_or(0))
            })
        })
    }
}

/// `sections`' seated sections, in plan order: the only ones with rows
/// to summarise.
fn seated(sections: &[SectionPlan]) -> impl Iterator<Item = &SectionPlan> + Clone {
    sections.iter().filter(|s| !s.is_ga())
}

/// The rows of `sections`' seated sections, in plan order.
fn seated_rows(sections: &[SectionPlan]) -> impl Iterator<Item = (&SectionPlan, &RowPlan)> + Clone {
    seated(sections).flat_map(|s| s.rows.iter().map(move |r| (s, r)))
}

/// Per seat of a row of `seats` seats whose projection is `taken`, in
/// number order, whether it is free at `as_of`: a hold expired by then is.
pub fn free_seats(seats: u32, taken: &RowProjection, as_of: Millis) -> Vec<bool> {
    (1..=seats)
        .map(|number| match taken.get(&number) {
            None => true,
            Some(ProjectedSeat::Sold) => false,
            Some(ProjectedSeat::Held { expires_at }) => !hold_is_live(*expires_at, as_of),
        })
        .collect()
}

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
        for free in free_seats(seats, taken, as_of) {
            run = if free { run + 1 } else { 0 };
            longest = longest.max(run);
        }
        let until = taken
            .iter()
            .filter(|(number, _)| **number <= seats)
            .filter_map(|(_, state)| match state {
                ProjectedSeat::Held { expires_at } if hold_is_live(*expires_at, as_of) => {
                    Some(*expires_at)
                }
                _ => None,
            })
            .min();
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

    /// Whether a projection write's runs (`after`, with `before` those of
    /// the item just before it, both at the write's instant) need writing
    /// to the summary. A write that leaves the runs as they were leaves a
    /// summary of the item before it true: it still tells until the first
    /// hold it counted expires, and no hold begins without a write. But the
    /// summary of the item before it may never have landed (its write
    /// failed), so a write is made anyway when one of its seats was as it
    /// sets it already (a batch delivered again after such a failure:
    /// Lambda redelivers the records, merged with newer ones), and at
    /// every [`RUNS_REWRITE_EVERY`]th version of the item, which bounds how
    /// long a summary lost any other way (retries spent) can stay wrong.
    pub fn worth_writing(
        before: Self,
        after: Self,
        every_seat_changed: bool,
        version: i64,
    ) -> bool {
        before != after || !every_seat_changed || version % RUNS_REWRITE_EVERY == 0
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
    use crate::domain::{RowId, RowPlan, SectionId};

    fn section(id: &str, rows: usize, row_len: usize) -> SectionPlan {
        SectionPlan {
            section_id: SectionId::parse(id).unwrap_or_else(|_| unreachable!()),
            rows: (0..rows)
                .map(|i| {
                    let row =
                        RowId::parse(&format!("{i:0>row_len$}")).unwrap_or_else(|_| unreachable!());
                    RowPlan::plain(row, 50)
                })
                .collect(),
            capacity: None,
        }
    }

    /// An event of `sections` sections `S1…` of `rows` rows.
    fn event(sections: usize, rows: usize) -> Vec<SectionPlan> {
        (1..=sections)
            .map(|k| section(&format!("S{k}"), rows, rows.to_string().len()))
            .collect()
    }

    #[test]
    fn summaries_spread_over_items_that_stay_under_a_kilobyte() {
        let long_id = "s".repeat(crate::domain::MAX_ID_LEN);
        let ga = SectionPlan {
            rows: Vec::new(),
            capacity: Some(100),
            ..section("FLOOR", 0, 1)
        };
        // (what, the event's sections, items expected)
        let cases = [
            ("one row", vec![section("A", 1, 1)], 1),
            ("under sixteen rows, one each", vec![section("A", 9, 1)], 9),
            ("a small event still spreads", event(2, 20), 16),
            ("a general-admission section has none", vec![ga], 1),
            // 2,000 rows of `S50-40`: 25 to a kilobyte.
            ("the bench's stadium", event(50, 40), 80),
            (
                "longest ids, 5 rows an item",
                vec![section(&long_id, 2_000, 64)],
                400,
            ),
        ];
        for (what, sections, items) in cases {
            let layout = RunsLayout::of(&sections);
            assert_eq!(layout.items(), items, "{what}");
            // No item's worst-case bytes over the kilobyte.
            let mut per_item = vec![0usize; items as usize];
            let mut name = 0;
            for (s, r, item) in layout.place(&sections) {
                per_item[item as usize] += 1;
                name = name.max(s.section_id.as_str().len() + 1 + r.row.as_str().len());
            }
            let most = per_item.iter().copied().max().unwrap_or(0);
            let key = "PK".len() + "RUNS#".len() + 20 + 1 + 5 + "SK".len() + "RUNS".len();
            assert!(
                key + most * (name + RUNS_VALUE_BYTES) <= 1024,
                "{what}: {most} rows"
            );
        }
    }

    #[test]
    fn a_sections_rows_take_keys_of_their_own_beside_other_sections() {
        let sections = event(50, 40);
        let placed: Vec<_> = RunsLayout::of(&sections).place(&sections).collect();
        assert_eq!(placed.len(), 2_000);
        // The first (a crowd's favourite) section's 40 rows: 40 keys.
        let first: std::collections::HashSet<u32> =
            placed.iter().take(40).map(|(_, _, item)| *item).collect();
        assert_eq!(first.len(), 40);
        // And an item holds rows of as many sections as it holds rows.
        let of_item_0: Vec<_> = placed.iter().filter(|(_, _, item)| *item == 0).collect();
        let sections_of_0: std::collections::HashSet<_> = of_item_0
            .iter()
            .map(|(s, _, _)| s.section_id.as_str())
            .collect();
        assert_eq!(of_item_0.len(), 25);
        assert_eq!(sections_of_0.len(), 25);
        // Front rows, which a crowd loads most, are not stacked: no item
        // holds the same row of more than two sections, and the 50
        // sections' first rows take 25 items or more.
        let mut ranks: std::collections::HashMap<(u32, &str), usize> = Default::default();
        for (_, r, item) in &placed {
            *ranks.entry((*item, r.row.as_str())).or_default() += 1;
        }
        let most = ranks.values().copied().max().unwrap_or(0);
        assert!(most <= 2, "{most} sections' same row on one item");
        let fronts: std::collections::HashSet<u32> = placed
            .iter()
            .filter(|(_, r, _)| r.row.as_str() == "00")
            .map(|(_, _, item)| *item)
            .collect();
        assert!(fronts.len() >= 25, "{} items", fronts.len());
    }

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
    fn a_summary_is_written_only_when_it_would_change_table() {
        let runs = |longest, until: Option<i64>| RowRuns {
            longest,
            until: until.map(Millis),
        };
        // (what, before, after, every seat changed, version, written)
        let cases = [
            (
                "a seat outside the longest run",
                runs(9, Some(5)),
                runs(9, Some(5)),
                true,
                3,
                false,
            ),
            (
                "the longest run shortened",
                runs(9, None),
                runs(4, Some(5)),
                true,
                3,
                true,
            ),
            (
                "a released seat lengthens it",
                runs(4, None),
                runs(9, None),
                true,
                3,
                true,
            ),
            (
                "a first hold: until appears",
                runs(9, None),
                runs(9, Some(5)),
                true,
                3,
                true,
            ),
            (
                "an earlier hold: until moves",
                runs(9, Some(7)),
                runs(9, Some(5)),
                true,
                3,
                true,
            ),
            (
                "delivered again: nothing changed",
                runs(9, None),
                runs(9, None),
                false,
                3,
                true,
            ),
            (
                "delivered again with newer seats",
                runs(9, None),
                runs(9, None),
                false,
                4,
                true,
            ),
            (
                "every eighth version",
                runs(9, None),
                runs(9, None),
                true,
                16,
                true,
            ),
        ];
        for (what, before, after, changed, version, written) in cases {
            assert_eq!(
                RowRuns::worth_writing(before, after, changed, version),
                written,
                "{what}"
            );
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
