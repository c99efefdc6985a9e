//! best-available's candidate sections: the seated sections asked for,
//! less those sold out for good, each with the rows its plan and its run
//! summaries leave for the block asked (docs/API.md, "best-available's
//! bounds").

use super::Error;
use crate::domain::best_available::{Ask, RowAccess, Rows};
use crate::domain::{Event, Millis, RowRuns, SectionId, SectionPlan};
use crate::store::SectionRuns;
use crate::App;

/// A section to read, and which of its rows (by index) may hold a block.
pub(super) struct Candidate<'a> {
    pub(super) section: &'a SectionPlan,
    /// Per row: whether its plan and its summary leave room for the block.
    pub(super) rows: Vec<bool>,
    /// Per row: whether its plan does (a read of the rows the summaries
    /// ruled out still passes over the others).
    pub(super) in_plan: Vec<bool>,
    /// What its rows' seats are for ([`RowAccess::of_rows`]).
    pub(super) access: Vec<RowAccess>,
    /// Until when the summaries that ruled rows out hold: the earliest
    /// expiry of a hold they counted.
    pub(super) until: Option<Millis>,
}

impl Candidate<'_> {
    /// Its rows as `free` shows them, for `ask`.
    pub(super) fn seen<'r>(&'r self, free: &'r [Vec<bool>], ask: Ask) -> Rows<'r> {
        Rows {
            free,
            access: &self.access,
            ask,
        }
    }
}

/// The seated sections asked for (one, or all in plan order), less those
/// the stream saw sold out and those whose every row the run summaries
/// rule out; each with the rows they leave.
pub(super) async fn candidate_rows<'a>(
    app: &App,
    event: &'a Event,
    section_id: Option<&SectionId>,
    ask: Ask,
) -> Result<Vec<Candidate<'a>>, Error> {
    let sections: Vec<&SectionPlan> = match section_id {
        Some(id) => match event.section(id).ok_or(Error::SectionNotFound)? {
            ga if ga.is_ga() => {
                return Err(Error::BadRequest(format!(
                    "section {id} is general admission: hold places with hold-ga"
                )))
            }
            seated => vec![seated],
        },
        None => event.sections.iter().filter(|s| !s.is_ga()).collect(),
    };
    // Sections the stream saw sold out for good need no reading.
    let sold_out = app.sold_out_sections(&event.event_id).await?;
    let sections: Vec<&SectionPlan> = sections
        .into_iter()
        .filter(|s| !sold_out.contains(&s.section_id))
        .collect();
    if sections.is_empty() {
        return Ok(Vec::new());
    }
    let runs = app.section_runs(event).await?;
    let now = crate::world::now();
    Ok(sections
        .into_iter()
        .map(|section| candidate(section, &runs, ask, now))
        .filter(|c| c.rows.iter().any(|&fits| fits))
        .collect())
}

/// `section` as a candidate: per row whether its plan can hold the block
/// at all (the wheelchair spaces asked for, none if none) and whether its
/// summary leaves room for a run of n too; and the earliest expiry among
/// the holds of the rows the summaries rule out.
fn candidate<'a>(
    section: &'a SectionPlan,
    runs: &SectionRuns,
    ask: Ask,
    now: Millis,
) -> Candidate<'a> {
    let access = RowAccess::of_rows(&section.rows);
    let n = u32::try_from(ask.n).unwrap_or(u32::MAX);
    let wheelchair = u32::try_from(ask.wheelchair).unwrap_or(u32::MAX);
    let mut until: Option<Millis> = None;
    let (mut rows, mut in_plan) = (Vec::new(), Vec::new());
    for (r, row) in section.rows.iter().enumerate() {
        let fits_plan = ask.fits_plan(row.count, RowAccess::of_row(&access, r));
        let summary = runs.get(&(section.section_id.clone(), row.row.clone()));
        let fits = RowRuns::may_fit(summary, n, wheelchair, now);
        if let (true, false, Some(at)) = (fits_plan, fits, summary.and_then(|runs| runs.until)) {
            until = Some(until.map_or(at, |u| u.min(at)));
        }
        rows.push(fits_plan && fits);
        in_plan.push(fits_plan);
    }
    Candidate {
        section,
        rows,
        in_plan,
        access,
        until,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_the_plan_or_the_summaries_rule_out_and_until_when(
    ) -> Result<(), Box<dyn std::error::Error>> {
        use crate::domain::{RowId, RowPlan};
        let row =
            |id: &str| -> Result<RowPlan, Error> { Ok(RowPlan::plain(RowId::parse(id)?, 10)) };
        let section = SectionPlan {
            section_id: SectionId::parse("A")?,
            rows: vec![row("1")?, row("2")?, row("3")?],
            capacity: None,
        };
        let summary = |longest, until| RowRuns {
            longest,
            clear: None,
            until,
        };
        let key =
            |id: &str| -> Result<_, Error> { Ok((section.section_id.clone(), RowId::parse(id)?)) };
        let runs = SectionRuns::from([
            (key("1")?, summary(1, Some(Millis(50)))),
            (key("2")?, summary(1, Some(Millis(30)))),
            (key("3")?, summary(9, Some(Millis(10)))),
        ]);
        // Rows 1 and 2 rule out a pair until their first holds expire;
        // row 3 fits, and its hold bounds nothing.
        let pair = Ask::seats(2);
        let c = candidate(&section, &runs, pair, Millis(0));
        assert_eq!(c.rows, [false, false, true]);
        assert_eq!(c.until, Some(Millis(30)));
        // Without a summary a row is read, and bounds nothing either.
        let c = candidate(&section, &SectionRuns::new(), pair, Millis(0));
        assert_eq!((c.rows, c.until), (vec![true; 3], None));
        // Asked for a wheelchair space, only row 2's plan has one: the
        // others are out for good, and their holds bound nothing.
        let mut section = section;
        section.rows[1].wheelchair = vec![5];
        let one = Ask {
            n: 2,
            wheelchair: 1,
        };
        let c = candidate(&section, &runs, one, Millis(0));
        assert_eq!(c.in_plan, [false, true, false]);
        assert_eq!((c.rows, c.until), (vec![false; 3], Some(Millis(30))));
        let c = candidate(&section, &SectionRuns::new(), one, Millis(0));
        assert_eq!((c.rows, c.until), (vec![false, true, false], None));
        // Asked for none, a row of wheelchair spaces only is out too.
        section.rows[2].wheelchair = (1..=10).collect();
        let c = candidate(&section, &SectionRuns::new(), pair, Millis(0));
        assert_eq!(c.in_plan, [true, true, false]);
        Ok(())
    }
}
