//! The seat map (`GET /events/{id}/availability`): one character per seat,
//! served from the projection the table's stream feeds (followed here as
//! Lambda's event source would), gzipped when accepted, cacheable for a
//! second; a hold past its expiry reads available at once.

use crate::common;

use std::io::Read;

use common::*;
use lambda_http::Body;
use local::router::{dispatch, request};
use local::streams::project_now;
use serde_json::Value;

/// The map as JSON, with the reply's headers (gunzipped if it was gzipped).
async fn availability(
    app: &shared::App,
    event: &str,
    gzip: bool,
) -> (u16, Value, lambda_http::http::HeaderMap) {
    let headers: &[(&str, &str)] = if gzip {
        &[("accept-encoding", "gzip, br")]
    } else {
        &[]
    };
    let resp = dispatch(
        app,
        request(
            "GET",
            &format!("/events/{event}/availability"),
            headers,
            Body::Empty,
        ),
    )
    .await;
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let bytes: Vec<u8> = resp.body().as_ref().to_vec();
    let text = if headers.get("content-encoding").is_some_and(|v| v == "gzip") {
        let mut out = String::new();
        flate2::read::GzDecoder::new(bytes.as_slice())
            .read_to_string(&mut out)
            .unwrap();
        out
    } else {
        String::from_utf8(bytes).unwrap()
    };
    (
        status,
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}")),
        headers,
    )
}

async fn project(app: &shared::App) -> usize {
    project_now(app, &testkit::dynamodb_endpoint())
        .await
        .unwrap()
}

/// `app` as a new process would see it: no cached event, no cached map.
fn new_process(app: &shared::App) -> shared::App {
    app.new_process()
}

fn statuses(map: &Value) -> Vec<String> {
    map["sections"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| {
            s["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["statuses"].as_str().unwrap().to_owned())
        })
        .collect()
}

#[tokio::test]
async fn the_map_shows_holds_and_sales_from_the_stream() {
    let app = testkit::fresh_app_streaming(None).await;
    let body = plan(&[("A", "1", 5), ("A", "2", 3), ("B", "9", 4)], Some(60));
    assert_eq!(call(&app, "PUT", "/events/map", &[], &body).await.0, 201);
    let read_at = std::time::Instant::now();
    let (status, map, headers) = availability(&app, "map", false).await;
    assert_eq!(status, 200);
    assert_eq!(
        statuses(&map),
        ["AAAAA", "AAA", "AAAA"],
        "a new event is all available"
    );
    assert_eq!(map["eventId"], "map");
    assert!(map["asOf"].as_str().unwrap().ends_with('Z'));
    assert_eq!(
        map["sections"][1],
        serde_json::json!({"sectionId": "B", "kind": "seated", "rows": [{"row": "9", "statuses": "AAAA"}]})
    );
    assert_eq!(headers["cache-control"], "public, max-age=1");
    assert_eq!(headers["content-type"], "application/json");
    assert!(
        headers.get("content-encoding").is_none(),
        "no gzip unless asked"
    );

    let holder = order(&app, "map").await;
    assert_eq!(claim(&app, &holder, "A-1-2").await.0, 200);
    let buyer = order(&app, "map").await;
    assert_eq!(claim(&app, &buyer, "A-1-3").await.0, 200);
    assert_eq!(claim(&app, &buyer, "B-9-4").await.0, 200);
    assert_eq!(confirm(&app, &buyer.id, "pi_map").await.0, 200);
    assert!(project(&app).await > 0, "the stream carried the changes");
    // This process still serves the map it read (cached for a second),
    // when the second has not passed (a loaded machine can take longer to
    // get here); a new one reads the projection.
    let within_the_second = read_at.elapsed() < std::time::Duration::from_millis(900);
    let cached = statuses(&availability(&app, "map", false).await.1);
    if within_the_second {
        assert_eq!(cached, ["AAAAA", "AAA", "AAAA"]);
    }
    let (_, map, headers) = availability(&new_process(&app), "map", true).await;
    assert_eq!(headers["content-encoding"], "gzip");
    assert_eq!(headers["vary"], "Accept-Encoding");
    assert_eq!(statuses(&map), ["AHSAA", "AAA", "AAAS"]);
    // Never reveals who holds what.
    assert!(!map.to_string().contains(&holder.id));

    assert_eq!(drop_seat(&app, &holder, "A-1-2").await.0, 200);
    project(&app).await;
    assert_eq!(
        statuses(&availability(&new_process(&app), "map", false).await.1),
        ["AASAA", "AAA", "AAAS"]
    );

    assert_eq!(
        call(&app, "GET", "/events/nope/availability", &[], "")
            .await
            .1["error"],
        "event-not-found"
    );
    assert_eq!(
        call(&app, "GET", "/events/bad%23id/availability", &[], "")
            .await
            .0,
        400
    );
}

#[tokio::test]
async fn an_expired_hold_reads_available_at_once_without_the_sweep() {
    let app = testkit::fresh_app_streaming(None).await;
    assert_eq!(
        call(
            &app,
            "PUT",
            "/events/lapse",
            &[],
            &plan(&[("A", "1", 3)], Some(60))
        )
        .await
        .0,
        201
    );
    // Long enough that a loaded machine still reads the hold before it lapses.
    let short = order_expiring_in(&app, "lapse", 5).await;
    assert_eq!(claim(&app, &short, "A-1-1").await.0, 200);
    project(&app).await;
    assert_eq!(
        statuses(&availability(&app, "lapse", false).await.1),
        ["HAA"]
    );
    // Only the hold's own expiry passes: no sweep, and nothing projected
    // since; the projection still says H until the expiry it carries.
    let_holds_expire(5).await;
    assert_eq!(
        statuses(&availability(&app, "lapse", false).await.1),
        ["AAA"]
    );
    let rival = order(&app, "lapse").await;
    assert_eq!(
        claim(&app, &rival, "A-1-1").await.0,
        200,
        "and it is claimable"
    );
}

#[tokio::test]
async fn an_event_being_created_has_no_map_yet() {
    let mut app = testkit::fresh_app_streaming(None).await;
    app.config.create_event_budget_ms = 0;
    assert_eq!(
        call(
            &app,
            "PUT",
            "/events/later",
            &[],
            &plan(&[("A", "1", 3)], None)
        )
        .await
        .0,
        202
    );
    assert_eq!(
        call(&app, "GET", "/events/later/availability", &[], "")
            .await
            .1["error"],
        "event-not-found"
    );
}

/// The Lambda entry point takes the stream's event as Lambda delivers it:
/// events/project-seat-map.json (A-1-7 held, then sold) moves the map.
#[tokio::test]
async fn the_stream_event_file_projects_through_the_lambda_handler() {
    let app = testkit::fresh_app_streaming(None).await;
    // The sample's seat A-1-7 of event gala-2026.
    assert_eq!(
        call(
            &app,
            "PUT",
            "/events/gala-2026",
            &[],
            &plan(&[("A", "1", 8)], None)
        )
        .await
        .0,
        201
    );
    let text =
        std::fs::read_to_string(local::repo_root().join("events/project-seat-map.json")).unwrap();
    let event = lambda_runtime::LambdaEvent::new(
        serde_json::from_str(&text).unwrap(),
        lambda_runtime::Context::default(),
    );
    let reply = shared::handlers::project_seat_map(&app, event)
        .await
        .unwrap();
    assert_eq!(reply, serde_json::json!({"batchItemFailures": []}));
    assert_eq!(
        statuses(&availability(&app, "gala-2026", false).await.1),
        ["AAAAAASA"]
    );
}
