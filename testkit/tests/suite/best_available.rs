//! best-available on DynamoDB Local: the contract's ranking, its errors,
//! and stampedes that really race (many orders, one section): disjoint
//! adjacent blocks, no false `not-enough-seats`, no stranded seats.

use crate::common;

use std::collections::BTreeSet;

use common::*;
use serde_json::{json, Value};
use shared::domain::SeatStatus;
use testkit::assert_invariants;

/// Each row's free seats (true) in number order, as the table has them now.
async fn free_rows(app: &shared::App, ev: &str, rows: u32, seats: u32) -> Vec<Vec<bool>> {
    let all = common::seats(app, ev).await;
    let now = shared::world::now();
    (0..rows as usize)
        .map(|r| {
            all[r * seats as usize..(r + 1) * seats as usize]
                .iter()
                .map(|s| s.state.visible_status(now) == SeatStatus::Available)
                .collect()
        })
        .collect()
}

/// (row, number) of a seat id `A-{row}-{number}`.
fn place(seat: &Value) -> (u32, u32) {
    let text = seat.as_str().unwrap();
    let mut parts = text.split('-').skip(1).map(|p| p.parse::<u32>().unwrap());
    (parts.next().unwrap(), parts.next().unwrap())
}

#[tokio::test]
async fn the_best_block_is_central_in_the_best_row_and_avoids_orphans() {
    let app = fresh_app().await;
    let ev = rows_event(&app, 2, 10).await;
    let o = order(&app, &ev).await;
    let (status, body) = best(&app, &o, json!({"quantity": 4})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["seats"],
        json!(["A-1-4", "A-1-5", "A-1-6", "A-1-7"]),
        "centred in the first row"
    );
    assert_eq!(body["status"], "HELD");
    assert_eq!(body["expiresAt"].as_str(), Some(o.expires_at.as_str()));
    // Row 1 now has 3 + 3 free: a pair there strands a seat, row 2 does not.
    let (status, body) = best(&app, &o, json!({"quantity": 2, "sectionId": "A"})).await;
    assert_eq!(
        (status, &body["seats"]),
        (200, &json!(["A-2-5", "A-2-6"])),
        "{body}"
    );
    // Three fit row 1 exactly, orphan-free, and row 1 ranks first.
    let (status, body) = best(&app, &o, json!({"quantity": 3})).await;
    assert_eq!(
        (status, &body["seats"]),
        (200, &json!(["A-1-1", "A-1-2", "A-1-3"])),
        "{body}"
    );
    let (_, got) = get_order(&app, &o).await;
    assert_eq!(got["seats"].as_array().unwrap().len(), 9);
    assert_invariants(&app, &ev).await;
}

#[tokio::test]
async fn best_available_refuses_what_the_contract_refuses() {
    let app = fresh_app().await;
    let ev = rows_event(&app, 1, 4).await;
    let o = order(&app, &ev).await;
    for bad in [
        json!({"quantity": 0}),
        json!({"quantity": 11}),
        json!({}),
        json!({"quantity": "2"}),
        json!({"quantity": 1, "sectionId": "a b"}),
    ] {
        let (status, body) = best(&app, &o, bad.clone()).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (400, Some("bad-request")),
            "{bad}: {body}"
        );
    }
    let floor = format!("ba-floor-{}", uuid::Uuid::new_v4().simple());
    let plan = r#"{"name":"Mixed","sections":[{"sectionId":"FLOOR","capacity":10},{"sectionId":"A","rows":[{"row":"1","count":4}]}]}"#;
    assert_eq!(
        call(&app, "PUT", &format!("/events/{floor}"), &[], plan)
            .await
            .0,
        201
    );
    let mixed = order(&app, &floor).await;
    let (status, body) = best(&app, &mixed, json!({"quantity": 1, "sectionId": "FLOOR"})).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("bad-request")),
        "a general-admission section: {body}"
    );
    let (status, body) = best(&app, &mixed, json!({"quantity": 2})).await;
    assert_eq!(
        (status, &body["seats"]),
        (200, &json!(["A-1-1", "A-1-2"])),
        "the first seated section: {body}"
    );
    let (status, body) = best(&app, &o, json!({"quantity": 1, "sectionId": "Z"})).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (404, Some("section-not-found")),
        "{body}"
    );
    let (status, body) = best(&app, &o, json!({"quantity": 5})).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (409, Some("not-enough-seats")),
        "{body}"
    );
    let thief = TestOrder {
        token: order(&app, &ev).await.token,
        ..o.clone()
    };
    assert_eq!(best(&app, &thief, json!({"quantity": 1})).await.0, 401);
    // The order's own holds count as unavailable; the order's room is checked.
    assert_eq!(claim(&app, &o, "A-1-2").await.0, 200);
    let (status, body) = best(&app, &o, json!({"quantity": 2})).await;
    assert_eq!(
        (status, &body["seats"]),
        (200, &json!(["A-1-3", "A-1-4"])),
        "{body}"
    );
    let (status, body) = best(&app, &o, json!({"quantity": 2})).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (409, Some("not-enough-seats")),
        "{body}"
    );
    let mut small = app.clone();
    small.config.max_seats_per_order = 3;
    let (status, body) = best(&small, &o, json!({"quantity": 1})).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (422, Some("seat-limit")),
        "{body}"
    );
    let_holds_expire(0).await;
}

/// An app for a stampede: its requests have no deadline to speak of. On a
/// loaded machine a stampede can outlast the production budget, and a
/// claim cut at the deadline may still land after its `503` (DESIGN.md,
/// deadlines), so a client's retry would take a second block. These tests
/// are of the choice and its races; the deadline has its own tests
/// (faults.rs).
async fn stampede_app() -> shared::App {
    let mut app = fresh_app().await;
    app.config.request_budget_ms = 600_000;
    app
}

/// Fires one order per quantity at once; returns each (quantity, reply).
async fn stampede(app: &shared::App, ev: &str, quantities: &[u32]) -> Vec<(u32, u16, Value)> {
    let mut tasks = tokio::task::JoinSet::new();
    for &n in quantities {
        let (app, ev) = (app.clone(), ev.to_owned());
        tasks.spawn(async move {
            let o = order(&app, &ev).await;
            let (status, body) = best(&app, &o, json!({"quantity": n})).await;
            (n, status, body)
        });
    }
    let mut out = Vec::new();
    while let Some(reply) = tasks.join_next().await {
        out.push(reply.unwrap());
    }
    out
}

#[tokio::test]
async fn a_stampede_of_pairs_and_fours_gets_disjoint_adjacent_blocks_and_no_false_sold_out() {
    let app = stampede_app().await;
    let ev = rows_event(&app, 10, 10).await;
    let quantities: Vec<u32> = (0..48).map(|i| if i % 2 == 0 { 2 } else { 4 }).collect();
    let replies = stampede(&app, &ev, &quantities).await;
    let mut taken = BTreeSet::new();
    let mut refused = Vec::new();
    for (n, status, body) in &replies {
        match status {
            200 => {
                let seats = body["seats"].as_array().unwrap();
                assert_eq!(seats.len(), *n as usize, "{body}");
                let places: Vec<(u32, u32)> = seats.iter().map(place).collect();
                assert!(
                    places
                        .windows(2)
                        .all(|w| w[0].0 == w[1].0 && w[1].1 == w[0].1 + 1),
                    "one row, adjacent: {body}"
                );
                for p in places {
                    assert!(taken.insert(p), "seat {p:?} handed out twice");
                }
            }
            409 => {
                assert_eq!(body["error"], "not-enough-seats", "{body}");
                refused.push(*n);
            }
            other => panic!("unexpected {other}: {body}"),
        }
    }
    // Seats only ever got taken here: a run that exists now existed when a
    // refusal was answered, so it would have been a false sold-out.
    let rows = free_rows(&app, &ev, 10, 10).await;
    for &n in &refused {
        assert!(
            !rows
                .iter()
                .any(|free| shared::domain::best_available::has_run(free, n as usize)),
            "refused {n} while a run of {n} exists: {rows:?}"
        );
    }
    eprintln!(
        "pairs and fours stampede: {} seats held, {} refused",
        taken.len(),
        refused.len()
    );
    assert!(taken.len() >= 50, "only {} of 100 seats held", taken.len());
    let check = assert_invariants(&app, &ev).await;
    assert_eq!(check.live_holds, taken.len());
}

#[tokio::test]
async fn a_stampede_of_pairs_fills_rows_of_ten_without_stranding_a_seat() {
    let app = stampede_app().await;
    let ev = rows_event(&app, 10, 10).await;
    let replies = stampede(&app, &ev, &[2; 56]).await;
    let held = replies
        .iter()
        .filter(|(_, status, _)| *status == 200)
        .count();
    assert!(
        replies
            .iter()
            .all(|(_, status, body)| *status == 200 || body["error"] == "not-enough-seats"),
        "{replies:?}"
    );
    eprintln!("pairs stampede: {held} held");
    assert_eq!(held, 50, "every seat went in pairs");
    // An orphan: a free seat whose neighbours are taken or the row's end.
    let rows = free_rows(&app, &ev, 10, 10).await;
    let orphans: usize = rows
        .iter()
        .map(|free| shared::domain::best_available::orphans(free))
        .sum();
    assert_eq!(orphans, 0, "no seat left alone: {rows:?}");
    assert_invariants(&app, &ev).await;
}

/// best-available serves a crowd whole, front rows first: 40 orders,
/// created first, ask for 2 seats each all at once on 10 rows of 10, three
/// times. Every time all 40 are served (a buyer told to retry, `503`,
/// retries as the contract asks), no seat is stranded, and the crowd fills from the front: a buyer spills past the
/// best row only after losing races for it, so row 1 is full, most of
/// the 80 seats lie in rows 1-8, and no buyer lies `MAX_SPREAD_ROWS` or
/// more rows behind a pair still free (API.md's bound for stampedes where
/// seats are only taken and rows take pairs evenly; the unit tests bound
/// each choice exactly).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_stampede_of_pairs_is_served_whole_front_rows_first() {
    let app = stampede_app().await;
    for round in 0..3 {
        let ev = rows_event(&app, 10, 10).await;
        let mut orders = Vec::new();
        for _ in 0..40 {
            orders.push(order(&app, &ev).await);
        }
        let start = std::sync::Arc::new(tokio::sync::Barrier::new(orders.len()));
        let mut tasks = tokio::task::JoinSet::new();
        for o in orders {
            let (app, start) = (app.clone(), start.clone());
            tasks.spawn(async move {
                start.wait().await;
                best(&app, &o, json!({"quantity": 2})).await
            });
        }
        let mut statuses = std::collections::BTreeMap::new();
        let mut held_rows = Vec::new();
        while let Some(reply) = tasks.join_next().await {
            let (status, body) = reply.unwrap();
            assert_eq!(status, 200, "round {round}: {body}");
            *statuses.entry(status).or_insert(0) += 1;
            held_rows.push(place(&body["seats"][0]).0 as usize - 1);
        }
        let rows = free_rows(&app, &ev, 10, 10).await;
        // API.md's weaker order under a crowd, in such a stampede: no buyer
        // lies MAX_SPREAD_ROWS or more rows behind a pair still free.
        let behind: Vec<usize> = held_rows
            .iter()
            .map(|&r| {
                shared::domain::best_available::rows_behind_a_free_run(
                    shared::domain::best_available::Rows::plain(&rows, 2),
                    r,
                )
            })
            .collect();
        eprintln!(
            "round {round}: {} of 40 behind a free better pair, by at most {} rows",
            behind.iter().filter(|&&b| b > 0).count(),
            behind.iter().max().unwrap_or(&0)
        );
        let picture: Vec<String> = rows
            .iter()
            .map(|r| r.iter().map(|&free| if free { 'A' } else { 'H' }).collect())
            .collect();
        eprintln!("round {round}: {statuses:?} {picture:?}");
        assert!(
            behind
                .iter()
                .all(|&b| b < shared::domain::best_available::MAX_SPREAD_ROWS),
            "round {round}: {behind:?} {held_rows:?}"
        );
        assert_eq!(
            statuses.get(&200),
            Some(&40),
            "round {round}: every buyer served: {statuses:?}"
        );
        let orphans: usize = rows
            .iter()
            .map(|free| shared::domain::best_available::orphans(free))
            .sum();
        assert_eq!(orphans, 0, "round {round}: no seat stranded: {picture:?}");
        assert_eq!(
            picture[0], "HHHHHHHHHH",
            "round {round}: the best row first"
        );
        let front: usize = picture[..8].iter().map(|r| r.matches('H').count()).sum();
        assert!(
            front >= 56,
            "round {round}: {front} of 80 seats in rows 1-8: {picture:?}"
        );
        assert_invariants(&app, &ev).await;
    }
}
