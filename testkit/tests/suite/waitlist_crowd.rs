//! Nothing races an offer (API.md, "Opening, and the waitlist-only
//! sale"), against a real DynamoDB Local and its stream: a crowd of
//! public orders opened before the waitlist opened clicks the seats a
//! holder frees while three offerers offer them (each projects the
//! stream, which counts the frees, then looks), each party on its own
//! instance. Past the opening's
//! first second no public claim takes a freed seat, every freed seat goes
//! to one waiting entry, and nothing is sold or held twice.

use crate::common;

use common::waitlist::*;
use common::*;
use serde_json::{json, Value};

/// Seats of the event, all held by one holder before the waitlist opens.
const SEATS: u32 = 10;
/// Public orders clicking, each on its own instance.
const CROWD: usize = 12;
/// Rounds of clicks each public order makes over every seat.
const ROUNDS: usize = 3;

/// The stream projected so far (the projector counts the frees for the
/// tick; it makes no offers).
async fn project(app: &shared::App) {
    local::streams::project_now(app, &testkit::dynamodb_endpoint())
        .await
        .unwrap();
}

#[tokio::test]
async fn a_crowd_clicking_freed_seats_takes_none_while_offers_take_them_all() {
    let app = testkit::fresh_app_streaming(None).await;
    let ev = event(&app, SEATS, 300).await;
    let holder = order(&app, &ev).await;
    let seats: Vec<String> = (1..=SEATS).map(|n| format!("A-1-{n}")).collect();
    for seat in &seats {
        assert_eq!(claim(&app, &holder, seat).await.0, 200);
    }
    let mut crowd = Vec::new();
    for _ in 0..CROWD {
        crowd.push(order(&app, &ev).await);
    }
    project(&app).await;
    opened_ago(&app, &ev, 2_000).await;
    let mut entries = Vec::new();
    for n in 0..SEATS {
        entries.push(joined(&app, &ev, &format!("user:{n}"), json!({})).await);
    }

    let mut tasks = tokio::task::JoinSet::new();
    {
        let (app, holder, seats) = (app.new_process(), holder.clone(), seats.clone());
        tasks.spawn(async move {
            let mut answers = Vec::new();
            for seat in &seats {
                answers.push(drop_seat(&app, &holder, seat).await);
            }
            [("drop", answers), ("best", Vec::new())]
        });
    }
    for public in &crowd {
        let (app, public, seats) = (app.new_process(), public.clone(), seats.clone());
        tasks.spawn(async move {
            let (mut answers, mut best_answers) = (Vec::new(), Vec::new());
            for _ in 0..ROUNDS {
                for seat in &seats {
                    answers.push(claim(&app, &public, seat).await);
                }
                best_answers.push(best(&app, &public, json!({"quantity": 1})).await);
            }
            [("public", answers), ("best", best_answers)]
        });
    }
    for _ in 0..3 {
        let (app, ev) = (app.new_process(), ev.clone());
        tasks.spawn(async move {
            let mut made = Vec::new();
            for _ in 0..ROUNDS {
                // The frees reach the map through the projector, as in
                // AWS; then this offerer looks, as the tick would.
                project(&app).await;
                made.push((0, json!(offer_free(&app, &ev).await)));
            }
            [("offers", made), ("best", Vec::new())]
        });
    }
    let finished: Vec<_> = tasks.join_all().await.into_iter().flatten().collect();

    let answers = |kind: &str| -> Vec<(u16, Value)> {
        let of_kind = finished.iter().filter(|(k, _)| *k == kind);
        of_kind.flat_map(|(_, a)| a.iter().cloned()).collect()
    };
    assert!(
        answers("drop").iter().all(|(s, _)| *s == 200),
        "{:?}",
        answers("drop")
    );
    let public = answers("public");
    let taken: Vec<_> = public.iter().filter(|(s, _)| *s == 200).collect();
    assert_eq!(
        taken,
        Vec::<&(u16, Value)>::new(),
        "no public claim takes a freed seat"
    );
    // Each click gets a clear no: the seat is someone's (the holder's, an
    // offer's), or only the waitlist sells it; best-available always the
    // latter.
    let clear = ["waitlist-only", "seat-held", "seat-sold"];
    assert!(
        public
            .iter()
            .all(|(s, b)| *s == 409 && clear.iter().any(|e| b["error"] == *e)),
        "{public:?}"
    );
    // best-available's: only the waitlist sells, or (read from the run
    // summaries, before the waitlist: true either way) nothing is free.
    let best = answers("best");
    assert_eq!(best.len(), CROWD * ROUNDS);
    let clear = ["waitlist-only", "not-enough-seats"];
    assert!(
        best.iter()
            .all(|(s, b)| *s == 409 && clear.iter().any(|e| b["error"] == *e)),
        "{best:?}"
    );
    // The gate spoke: a freed seat was free to the eye, and only the
    // waitlist sold it.
    let mut told = public.iter().chain(&best);
    assert!(
        told.any(|(_, b)| b["error"] == "waitlist-only"),
        "{public:?}"
    );
    // What the racing looks left (a seat freed after the last of them)
    // the next look offers; then each entry holds one seat, each seat once.
    project(&app).await;
    offer_free(&app, &ev).await;
    let mut offered = Vec::new();
    for entry in &entries {
        let status = status_of(&app, &ev, entry).await;
        assert_eq!(status["status"], "OFFERED", "{status}");
        offered.extend(status["offer"]["seats"].as_array().unwrap().iter().cloned());
    }
    offered.sort_by_key(|s| s.as_str().map(str::to_owned));
    offered.dedup();
    assert_eq!(offered.len(), seats.len(), "{offered:?}");
    let check = local::invariants::check_invariants(&app, &ev).await;
    assert_eq!(check.violations, Vec::<String>::new());
}
