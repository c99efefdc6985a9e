//! create-event is retry-safe (contract v2): the same plan PUT again, even
//! while the first PUT is still writing, never overwrites a seat that
//! exists, so a seat held or sold in the meantime stays so; and until
//! creation is complete, every reader answers as if the event did not
//! exist. Real races on DynamoDB Local.

mod common;

use std::sync::Arc;

use common::*;
use local::testing::assert_invariants;
use shared::domain::{EventId, SeatState};

/// The reproduction: a 10,000-seat event PUT, and the same PUT
/// again while the first is still writing (here two retries). As soon as
/// the event answers, buyers hold and buy seats, the last ones written
/// included; when the retries finish, every sold seat is still sold and
/// no one else can hold it. Three rounds.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_retried_create_event_never_resells_a_seat() {
    let rows: Vec<(String, u32)> = (1..=100).map(|r| (r.to_string(), 100)).collect();
    let rows: Vec<(&str, &str, u32)> = rows.iter().map(|(r, n)| ("Z", r.as_str(), *n)).collect();
    let body = Arc::new(plan(&rows, Some(300)));
    let mut late_writes = 0;
    for round in 0..3 {
        let mut app = fresh_app().await;
        // Three writers on a busy DynamoDB Local take longer than the
        // production budget: the race here is between writers, not with the
        // sweep (stadium.rs covers that), so no budget runs out.
        app.config.create_event_budget_ms = 600_000;
        let app = Arc::new(app);
        let id = format!("race-{round}");
        let put = |app: Arc<shared::App>, body: Arc<String>, id: String| {
            tokio::spawn(async move { call(&app, "PUT", &format!("/events/{id}"), &[], &body).await })
        };
        let first = put(app.clone(), body.clone(), id.clone());
        // The retries go out once the first is under way (its 500th seat
        // written), as a client's retry a moment later would: before the
        // first's progress checkpoint (every 2,000 seats), so they re-put
        // every seat and are still writing when the buyers come.
        loop {
            let (status, reply) = call(&app, "GET", &format!("/events/{id}/seats?section=Z"), &[], "").await;
            assert_eq!((status, reply["error"].as_str()), (404, Some("event-not-found")), "while creating: {reply}");
            let (status, _) = call(&app, "POST", &format!("/events/{id}/orders"), &[], "{}").await;
            assert_eq!(status, 404, "no order on an event being created");
            if first.is_finished() || raw_seat_exists(&app, &id, "Z-5-100").await {
                break;
            }
            tokio::task::yield_now().await;
        }
        let retries = [put(app.clone(), body.clone(), id.clone()), put(app.clone(), body.clone(), id.clone())];
        // As soon as the event answers, buyers take seats, the last ones included.
        let buyer = loop {
            let (status, reply) = call(&app, "POST", &format!("/events/{id}/orders"), &[], "{}").await;
            if status == 201 {
                local::testing::remember_order(&app, reply["orderId"].as_str().unwrap());
                break TestOrder {
                    id: reply["orderId"].as_str().unwrap().to_owned(),
                    token: reply["holdToken"].as_str().unwrap().to_owned(),
                    expires_at: reply["expiresAt"].as_str().unwrap().to_owned(),
                    created_at: reply["createdAt"].as_str().unwrap().to_owned(),
                };
            }
            assert_eq!(status, 404, "{reply}");
            tokio::task::yield_now().await;
        };
        let bought = ["Z-100-100", "Z-100-99", "Z-1-1", "Z-50-50"];
        for seat in bought {
            assert_eq!(claim(&app, &buyer, seat).await.0, 200, "{seat}");
        }
        let paid: Vec<String> = bought.iter().map(|s| s.to_string()).collect();
        assert_eq!(confirm_seats(&app, &buyer.id, "pi_race", &paid).await.0, 200);
        let holder = order(&app, &id).await;
        assert_eq!(claim(&app, &holder, "Z-99-1").await.0, 200);
        late_writes += retries.iter().filter(|r| !r.is_finished()).count();

        assert_eq!(first.await.unwrap().0, 201);
        for retry in retries {
            let (status, reply) = retry.await.unwrap();
            assert_eq!((status, reply["status"].as_str()), (201, Some("READY")), "a retry answers as the first: {reply}");
        }
        let all = seats(&app, &id).await;
        assert_eq!(all.len(), 10_000);
        for seat in bought {
            let state = &all.iter().find(|s| s.spec.seat_id.as_str() == seat).unwrap().state;
            assert!(matches!(state, SeatState::Sold { .. }), "round {round}: {seat} is {state:?}");
        }
        assert!(matches!(all.iter().find(|s| s.spec.seat_id.as_str() == "Z-99-1").unwrap().state, SeatState::Held { .. }));
        let rival = order(&app, &id).await;
        assert_eq!(claim(&app, &rival, "Z-100-100").await.1["error"], "seat-sold");
        assert_eq!(claim(&app, &rival, "Z-99-1").await.1["error"], "seat-held");
        assert_invariants(&app, &id).await;
    }
    eprintln!("create-event race: 3 rounds, retries still writing after the sales in {late_writes} of 6 retries");
    assert!(late_writes > 0, "the race happened: some retry was still writing after seats were sold");
}

/// Whether `seat`'s item exists, event ready or not (a raw read: no
/// reader of the API may see it yet).
async fn raw_seat_exists(app: &shared::App, event: &str, seat: &str) -> bool {
    let key = shared::store::seat_item_key(&EventId::parse(event).unwrap(), &shared::domain::SeatId::parse(seat).unwrap());
    let out = app.store.client().get_item().table_name(app.store.table_name()).set_key(Some(key)).send().await.unwrap();
    out.item.is_some()
}
