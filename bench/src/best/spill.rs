//! best-available under a crowd (API.md's weaker order: in such
//! stampedes, under four rows behind), with wheelchair requests in the
//! crowd (API.md, "Accessible seats"): a pair asking for a space gets one
//! space, a pair asking for none never gets one, and no buyer hears `503`.

use super::{
    create_orders, create_section_of, free_seats, read_back_unknown, section_rows, spawn_buyers,
    tally, Ask, BestAvailableStampede, BlockVerdict,
};
use crate::kit::{Row, Timing};
use crate::scale_model::past_aws_deadline;
use crate::Goal;
use shared::domain::access::seats_access;
use shared::domain::best_available::{self, rows_behind_a_free_run, RowAccess, Rows};
use shared::App;
use std::time::Instant;

/// The section of API.md's weaker order under a crowd.
const SPILL: BestAvailableStampede = BestAvailableStampede {
    rows: 10,
    seats_per_row: 10,
    buyers: 40,
    in_flight: 40,
};

/// The rows (from 1) with wheelchair spaces: at both ends, each with a
/// companion seat beside it.
const ACCESS_ROWS: [u32; 2] = [5, 10];

/// One buyer in this many asks for a wheelchair space among its pair: 4
/// of 40, one for each space.
const SPACE_EVERY: usize = 10;

/// What the crowd asks, in turn.
fn asks() -> Vec<Ask> {
    (0..SPACE_EVERY)
        .map(|i| (2, u32::from(i == SPACE_EVERY - 1)))
        .collect()
}

/// Row `r`'s (from 1) wheelchair spaces and companion seats.
fn row_access(r: u32) -> (Vec<u32>, Vec<u32>) {
    let last = SPILL.seats_per_row;
    match ACCESS_ROWS.contains(&r) {
        true => (vec![1, last], vec![2, last - 1]),
        false => (Vec::new(), Vec::new()),
    }
}

/// The plan's rows, access included.
fn plan_rows() -> Vec<serde_json::Value> {
    (1..=SPILL.rows)
        .map(|r| {
            let (wheelchair, companion) = row_access(r);
            serde_json::json!({"row": r.to_string(), "count": SPILL.seats_per_row,
                "wheelchair": wheelchair, "companion": companion})
        })
        .collect()
}

/// What each seat of each row is for, as best-available sees it.
fn section_access() -> Vec<RowAccess> {
    (1..=SPILL.rows)
        .map(|r| {
            let (wheelchair, companion) = row_access(r);
            RowAccess::new(seats_access(SPILL.seats_per_row, &wheelchair, &companion))
        })
        .collect()
}

/// What one stampede's answers came to, beyond the history checker's.
#[derive(Default)]
struct Counts {
    /// Per pair asking for no space and served: how many rows behind a
    /// pair still free at the end it was placed.
    behind: Vec<usize>,
    served: usize,
    retry: usize,
    wrong: usize,
    /// Blocks held with other than the wheelchair spaces asked for.
    wrong_spaces: usize,
    /// Pairs asking for a space served.
    spaces_served: usize,
    /// Refusals, right or wrong (a wrong one is in `wrong` too).
    refused: usize,
}

/// best-available under a crowd: `rounds` stampedes of 40 pairs at once
/// on 10 rows of 10 (4 of the pairs asking for a wheelchair space), and
/// how often and how far a pair asking for none was placed behind a pair
/// still free when its stampede was over.
pub(crate) async fn spill_stampedes(app: &App, rounds: usize) -> Result<Row, String> {
    let (mut timing, mut counts) = (Timing::default(), Counts::default());
    let mut history = BlockVerdict::default();
    let rows = section_rows(SPILL)?;
    let access = section_access();
    let started = Instant::now();
    for _ in 0..rounds {
        let event = create_section_of(app, plan_rows()).await?;
        let orders = create_orders(app, &event, SPILL.buyers).await?;
        let tasks = spawn_buyers(app, orders, SPILL.in_flight, &asks());
        let mut outcome = tally(tasks, &mut timing).await?;
        read_back_unknown(app, &event, &outcome.unknown, &mut outcome.histories).await?;
        let free = free_seats(app, &event, SPILL.seats_per_row).await?;
        for (row, k, numbers) in &outcome.held {
            let spaces = numbers
                .iter()
                .filter(|&&n| row_access(*row as u32 + 1).0.contains(&n))
                .count();
            counts.wrong_spaces += usize::from(spaces != *k as usize);
            counts.spaces_served += usize::from(*k > 0);
            let ask = best_available::Ask::seats(numbers.len());
            if *k == 0 {
                let seen = Rows {
                    free: &free,
                    access: &access,
                    ask,
                };
                counts.behind.push(rows_behind_a_free_run(seen, *row));
            }
        }
        // A refusal is wrong when a block of its ask is still free: seats
        // were only ever taken, so it was free throughout.
        let still_free = |&&(n, k): &&Ask| {
            let ask = best_available::Ask {
                n: n as usize,
                wheelchair: k as usize,
            };
            best_available::choose_block(Rows {
                free: &free,
                access: &access,
                ask,
            })
            .is_some()
        };
        counts.wrong += outcome.refused.iter().filter(still_free).count();
        counts.refused += outcome.refused.len();
        counts.served += outcome.held.len();
        counts.retry += outcome.retry;
        counts.wrong += outcome.overlaps + outcome.not_adjacent + outcome.other;
        // Refusals are judged above, on the plan's spaces: the checker
        // would count a run through a wheelchair space as room for any
        // pair.
        outcome.refusals.clear();
        history = history.and(outcome.judged(&rows));
    }
    timing.wall = started.elapsed();
    Ok(spill_row(rounds, counts, history, timing))
}

fn spill_row(rounds: usize, c: Counts, history: BlockVerdict, timing: Timing) -> Row {
    let placed_behind: Vec<usize> = c.behind.iter().copied().filter(|&b| b > 0).collect();
    let farthest = placed_behind.iter().copied().max().unwrap_or(0);
    let buyers = rounds * SPILL.buyers;
    let scenario = format!(
        "best-available under a crowd: {rounds} stampedes of {} pairs at once on {} × {}, 1 in {SPACE_EVERY} asking for a wheelchair space (rows {} have them at both ends, a companion seat beside each) (handler, metered)",
        SPILL.buyers,
        SPILL.rows,
        SPILL.seats_per_row,
        ACCESS_ROWS.map(|r| r.to_string()).join(" and ")
    );
    let goals = vec![Goal::no_503(&scenario, c.retry)];
    let pairs = c.behind.len();
    Row {
        correctness: format!(
            "{} of {buyers} served ({} of them asking for a space), {} refused (one with a block of its ask still free counts as wrong), {} × 503 (a 503 is not sent again here: it may have landed; {}), {} wrong answers, {} blocks with other than the wheelchair spaces asked for; measured: {} of the {pairs} pairs asking for none ({:.1}%) placed behind a pair still free at the end, {:.2} rows behind on average among them, at most {farthest} (API.md: under {} in such stampedes); {}",
            c.served,
            c.spaces_served,
            c.refused,
            c.retry,
            past_aws_deadline(&timing),
            c.wrong,
            c.wrong_spaces,
            placed_behind.len(),
            100.0 * placed_behind.len() as f64 / pairs.max(1) as f64,
            placed_behind.iter().sum::<usize>() as f64 / placed_behind.len().max(1) as f64,
            best_available::MAX_SPREAD_ROWS,
            history.text(),
        ),
        ok: c.wrong == 0
            && c.wrong_spaces == 0
            && farthest < best_available::MAX_SPREAD_ROWS
            && c.served + c.retry + c.refused == buyers
            && history.ok(),
        scenario,
        timing,
        goals,
    }
}
