//! The contention scenarios: the stampede on one seat, the spread over
//! many (through the handler and as its decision without HTTP), the raw
//! and naive writes they are compared with, and throughput against the
//! claims in flight.

use std::collections::HashSet;

use local::metrics::RequestCounter;
use shared::App;

use crate::goals::{Bound, Goal};
use crate::kit::{new_app, unique, Row};
use crate::kit::{HANDLER_OVER_BARE, HOLD_SECONDS};
use crate::raw::{double_held, raw_claims, table_name, RawClaim};
use crate::report::Report;
use crate::setup::create_event;
use crate::sizes::Sizes;
use crate::spread::{same_requests, spread, spread_handler_and_bare, spread_plan, ClaimPath};
use crate::stampede::{stampede_handler, stampede_http};

/// The stampede on one seat (handler and HTTP), and the spread over many
/// (handler and its decision without HTTP, alternating, on a table of
/// their own whose requests are counted).
pub(super) async fn contention(
    endpoint: &str,
    app: &App,
    sizes: Sizes,
    report: &mut Report,
    progress: &mut impl FnMut(&str),
) -> Result<(), String> {
    progress("stampede (handler)");
    let row = stampede_handler(app, sizes.stampede).await?;
    report.stampede_latencies = row.timing.latencies_ms.clone();
    report.rows.push(row);
    progress("stampede (HTTP)");
    report.rows.push(stampede_http(app, sizes.stampede).await?);

    progress("spread (handler and its decision without HTTP, alternating)");
    let counter = RequestCounter::default();
    let counting = new_app(endpoint, Some(counter.clone()), None, false).await?;
    let (handler, bare) = spread_handler_and_bare(&counting, &counter, sizes).await?;
    report.handler_over_bare = handler.timing.per_second() / bare.timing.per_second().max(1e-9);
    report.goals.push(Goal::new(
        "handler ÷ bare throughput",
        report.handler_over_bare,
        Bound::AtLeast(HANDLER_OVER_BARE),
        "`bench::HANDLER_OVER_BARE`",
    ));
    // The ratio compares like with like only if both sent the same requests.
    let same = same_requests(&handler, &bare);
    let (correctness, ok) = handler.correctness();
    report.rows.push(Row {
        scenario: format!(
            "spread: {} orders, {} claims, {} seats, {} in flight (handler)",
            sizes.spread_orders, sizes.spread_claims, sizes.spread_seats, sizes.in_flight
        ),
        correctness: format!("{correctness}; requests per claim {}", handler.mix()),
        timing: handler.timing,
        ok: ok && same,
        goals: Vec::new(),
    });
    let (correctness, ok) = bare.correctness();
    report.rows.push(Row {
        scenario: "spread, the handler's decision without HTTP (`get_seat_at`)".into(),
        correctness: format!(
            "{correctness}; requests per claim {} ({} the handler's, within {:.0}%); handler/bare throughput {:.2}",
            bare.mix(),
            if same { "the same as" } else { "**NOT** the same as" },
            crate::spread::SAME_REQUESTS_WITHIN * 100.0,
            report.handler_over_bare
        ),
        timing: bare.timing,
        ok: ok && same,
        goals: Vec::new(),
    });
    Ok(())
}

/// The store's ceiling (one conditional UpdateItem per claim) and the
/// naive patterns it replaces, each as a stampede and a spread.
pub(super) async fn raw_and_naive(
    app: &App,
    sizes: Sizes,
    report: &mut Report,
    progress: &mut impl FnMut(&str),
) -> Result<(), String> {
    let table = table_name(app);
    let client = app.store.client().clone();
    for (how, label) in [
        (
            RawClaim::ConditionalUpdate,
            "raw: one conditional UpdateItem per claim (store ceiling)",
        ),
        (
            RawClaim::ReadThenWrite,
            "naive: GetItem then unconditional write",
        ),
        (
            RawClaim::CheckThenAttach,
            "naive: check other orders, then attach",
        ),
    ] {
        progress(label);
        let event = unique("raw");
        create_event(app, &event, 1, HOLD_SECONDS).await?;
        let stampede_plan: Vec<_> = (0..sizes.stampede)
            .map(|o| (o, "A-1-1".to_owned()))
            .collect();
        let (st, st_winners) =
            raw_claims(&client, &table, &event, stampede_plan, sizes.stampede, how).await?;
        let st_won: usize = st_winners.values().map(HashSet::len).sum();
        let event = unique("raw");
        create_event(app, &event, sizes.spread_seats, HOLD_SECONDS).await?;
        let plan = spread_plan(
            sizes.spread_orders,
            sizes.spread_claims,
            sizes.spread_seats,
            42,
        );
        let (sp, sp_winners) =
            raw_claims(&client, &table, &event, plan, sizes.in_flight, how).await?;
        let naive = how != RawClaim::ConditionalUpdate;
        let doubles = double_held(&sp_winners);
        // The naive patterns must show oversells (proof that the harness can
        // see one); where they show up, stampede or spread, is up to timing.
        let ok = if naive {
            st_won > 1 || doubles > 0
        } else {
            st_won == 1 && doubles == 0
        };
        report.rows.push(Row {
            scenario: format!("{label} — stampede"),
            timing: st,
            correctness: format!(
                "{st_won} 'winners' of 1 seat{}",
                if naive {
                    " (must be > 1: the harness sees oversells)"
                } else {
                    ""
                }
            ),
            ok,
            goals: Vec::new(),
        });
        report.rows.push(Row {
            scenario: format!("{label} — spread"),
            timing: sp,
            correctness: format!("{doubles} seats held twice"),
            ok,
            goals: Vec::new(),
        });
    }
    Ok(())
}

/// Throughput and p99 of the spread at each number of claims in flight.
pub(super) async fn concurrency(app: &App, sizes: Sizes) -> Result<Vec<(usize, f64, f64)>, String> {
    let mut figures = Vec::new();
    for in_flight in [1usize, 8, 32, 64, 128] {
        let run = spread(
            app,
            sizes,
            ClaimPath::Handler,
            in_flight,
            sizes.concurrency_claims,
            None,
        )
        .await?;
        let (correctness, ok) = run.correctness();
        if !ok {
            return Err(format!("at concurrency {in_flight}: {correctness}"));
        }
        figures.push((in_flight, run.timing.per_second(), run.timing.p99()));
    }
    Ok(figures)
}
