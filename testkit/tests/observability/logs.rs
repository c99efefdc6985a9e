//! Secrets stay out of the logs: a whole flow — good and bad tokens, good
//! and bad signatures, a late payment, a sweep, a verified queue's buyers
//! and its disclosed draw — runs under the production subscriber, captured,
//! at the production level and at TRACE for every crate (the SDK
//! included), and the captured lines are searched for every hold token,
//! every signature, the confirm secret, every buyer token and buyer id,
//! and the draw's seed.

use crate::common;

use std::io::Write;
use std::sync::{Arc, Mutex};

use common::*;
use local::apps::DEV_CONFIRM_SECRET;
use serde_json::Value;
use shared::App;

/// Collects everything the subscriber writes.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Captured {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'w> tracing_subscriber::fmt::MakeWriter<'w> for Captured {
    type Writer = Captured;
    fn make_writer(&'w self) -> Self::Writer {
        self.clone()
    }
}

/// What must never appear in a log line.
#[derive(Default)]
struct Secrets(Vec<(String, String)>);

impl Secrets {
    fn add(&mut self, what: &str, value: &str) {
        self.0.push((what.to_owned(), value.to_owned()));
    }
    /// A confirm's `webhook-signature` value, and the signature alone.
    fn add_signature(&mut self, headers: &[(&'static str, String)]) {
        let (_, value) = headers
            .iter()
            .find(|(k, _)| *k == shared::auth::HEADER_WEBHOOK_SIGNATURE)
            .unwrap();
        self.add("webhook-signature", value);
        self.add("signature", value.trim_start_matches("v1,"));
    }
    fn add_token(&mut self, token: &str) {
        self.add("hold token", token);
        // The random part alone would leak the token just as well.
        let random = token.rsplit('~').next().unwrap();
        assert_eq!(random.len(), 64, "token shape {token}");
        self.add("hold token's random part", random);
    }
}

/// The whole flow; returns every secret it used or was given.
async fn flow(app: &App) -> Secrets {
    let mut secrets = Secrets::default();
    secrets.add("confirm secret", DEV_CONFIRM_SECRET);
    secrets.add(
        "confirm key, base64",
        DEV_CONFIRM_SECRET.trim_start_matches("whsec_"),
    );
    secrets.add("confirm key", "seatclaim-local-dev-key-NOT-FOR-PRODUCTION");

    let event_id = event(app, 3, 60).await;
    let buyer = order(app, &event_id).await;
    let thief = order(app, &event_id).await;
    for o in [&buyer, &thief] {
        secrets.add_token(&o.token);
    }

    assert_eq!(claim(app, &buyer, "A-1-1").await.0, 200);
    assert_eq!(claim(app, &buyer, "A-1-2").await.0, 200);
    assert_eq!(claim(app, &thief, "A-1-1").await.0, 409);
    assert_eq!(drop_seat(app, &buyer, "A-1-2").await.0, 200);
    assert_eq!(get_order(app, &buyer).await.0, 200);
    // The thief's token on the buyer's order, and a forged token.
    let stolen = [("authorization", thief.auth())];
    let stolen: Vec<(&str, &str)> = stolen.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (status, _) = call(
        app,
        "POST",
        &format!("/orders/{}/seats/A-1-3", buyer.id),
        &stolen,
        "",
    )
    .await;
    assert_eq!(status, 401);
    let forged = format!(
        "{}~{}",
        buyer.token.rsplit_once('~').unwrap().0,
        "ab".repeat(32)
    );
    secrets.add("forged hold token", &forged);
    let (status, _) = call(
        app,
        "GET",
        &format!("/orders/{}", buyer.id),
        &[("authorization", &format!("Bearer {forged}"))],
        "",
    )
    .await;
    assert_eq!(status, 401);

    // A good payment, a replay, and one with a wrong signature.
    let body = confirm_body(&buyer.id, "pay-logs-1", &["A-1-1".to_owned()]);
    let headers = signed(&body);
    secrets.add_signature(&headers);
    for _ in 0..2 {
        let (status, reply) = call(
            app,
            "POST",
            &format!("/orders/{}/confirm", buyer.id),
            &as_refs(&headers),
            &body,
        )
        .await;
        assert_eq!(status, 200, "{reply}");
    }
    let wrong = signed(&confirm_body(&thief.id, "pay-other", &["A-1-1".to_owned()]));
    secrets.add_signature(&wrong);
    let (status, _) = call(
        app,
        "POST",
        &format!("/orders/{}/confirm", thief.id),
        &as_refs(&wrong),
        &body,
    )
    .await;
    assert_eq!(status, 401);

    // A hold that expires, is swept, and is paid for late.
    let brief = event(app, 1, 1).await;
    let late = order(app, &brief).await;
    secrets.add_token(&late.token);
    assert_eq!(claim(app, &late, "A-1-1").await.0, 200);
    let_holds_expire(1).await;
    let summary = sweep(app).await;
    assert!(summary.released_seats >= 1, "{summary:?}");
    let late_body = confirm_body(&late.id, "pay-logs-late", &["A-1-1".to_owned()]);
    let late_headers = signed(&late_body);
    secrets.add_signature(&late_headers);
    let (status, reply) = call(
        app,
        "POST",
        &format!("/orders/{}/confirm", late.id),
        &as_refs(&late_headers),
        &late_body,
    )
    .await;
    assert!(status == 200 || status == 409, "{status} {reply}");
    queue_flow(app, &mut secrets).await;
    secrets
}

/// A verified queue: a buyer joins (and joins again, and a bad token is
/// refused), the queue opens, its seed is disclosed and its draw listed.
async fn queue_flow(app: &App, secrets: &mut Secrets) {
    let ev = event(app, 3, 60).await;
    let mut body: Value = serde_json::from_str(&queue::queue_body(queue::HOUR_MS, 60)).unwrap();
    body["buyers"] = "verified".into();
    assert_eq!(queue::put_queue(app, &ev, &body.to_string()).await.0, 200);
    let buyer = "user:logs-7|eu";
    secrets.add("buyer id", buyer);
    let now_s = shared::world::now().0 / 1_000;
    let keys = local::apps::dev_buyer_signing_keys();
    let token = local::apps::dev_buyer_token(&keys, &ev, buyer, now_s, 600).unwrap();
    let expired = local::apps::dev_buyer_token(&keys, &ev, buyer, now_s - 700, 600).unwrap();
    let path = format!("/events/{ev}/queue/visitors");
    for (token, want) in [(&token, 201), (&token, 200), (&expired, 401)] {
        secrets.add("buyer token", token);
        let (status, reply) = call(app, "POST", &path, &[("x-buyer-token", token)], "").await;
        assert_eq!(status, want, "{reply}");
    }
    // Opened ten seconds ago: disclosed at once.
    let (_, opened) = queue::put_queue(app, &ev, &queue::queue_body(-10_000, 60)).await;
    let seed = opened["drawSeed"].as_str().unwrap();
    secrets.add("draw seed", seed);
    let (status, _) = call(app, "GET", &format!("/events/{ev}/queue/draw"), &[], "").await;
    assert_eq!(status, 200);
}

/// Runs the flow under the production subscriber built for `rust_log`
/// and returns the secrets and the captured log.
async fn logged_flow(rust_log: &str) -> (Secrets, String) {
    let app = fresh_app().await;
    let captured = Captured::default();
    let subscriber = shared::telemetry::subscriber(Some(rust_log), captured.clone());
    // A current-thread runtime (see the test attributes): every task of the
    // flow, the SDK's connection tasks included, logs through this default.
    let guard = tracing::subscriber::set_default(subscriber);
    let secrets = flow(&app).await;
    drop(guard);
    (secrets, captured.text())
}

fn assert_clean(secrets: &Secrets, log: &str) {
    for (what, value) in &secrets.0 {
        if let Some(at) = log.find(value.as_str()) {
            let line = log[..at].rsplit('\n').next().unwrap_or_default();
            panic!("the log contains a {what}: …{line}");
        }
    }
}

fn json_lines(log: &str) -> Vec<Value> {
    log.lines()
        .map(|l| {
            serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON log line ({e}): {l}"))
        })
        .collect()
}

/// One test, not two: tracing caches each callsite's interest across every
/// dispatcher alive in the process. Two flows racing on two threads (the
/// test harness runs tests in parallel) can cache the TRACE subscriber's
/// "always" for a callsite the INFO subscriber then skips filtering on, so
/// the INFO capture would hold DEBUG lines production never writes
/// (production has one global subscriber). Run in turn, the second
/// subscriber's registration recomputes every interest.
#[tokio::test(flavor = "current_thread")]
async fn logs_at_info_and_at_trace_hold_no_token_signature_or_secret() {
    let _alone = crate::ONE_AT_A_TIME.lock().await;
    // At the production level.
    let (secrets, log) = logged_flow("info").await;
    let lines = json_lines(&log);
    // The capture works: one line per request, with its route and status.
    let requests: Vec<&Value> = lines
        .iter()
        .filter(|l| l["fields"]["message"] == "request")
        .collect();
    assert!(
        requests.len() >= 15,
        "expected a line per request, got {}:\n{log}",
        requests.len()
    );
    // A refusal's line names the rule, as its body does.
    for reason in ["hold-token-mac", "signature-mismatch"] {
        assert!(
            requests.iter().any(|l| l["fields"]["status"] == 401
                && l["fields"]["code"] == "unauthorized"
                && l["fields"]["reason"] == reason),
            "a 401 line with reason {reason}:\n{log}"
        );
    }
    assert!(requests
        .iter()
        .any(|l| l["fields"]["route"] == "confirm" && l["fields"]["status"] == 200));
    if let Some(verbose) = lines
        .iter()
        .find(|l| l["level"] == "DEBUG" || l["level"] == "TRACE")
    {
        panic!("a line below INFO at the production level: {verbose}");
    }
    assert_clean(&secrets, &log);

    // At TRACE for every crate: the SDK's own trace output is in there,
    // so this searches it too.
    let (secrets, log) = logged_flow("trace").await;
    let lines = json_lines(&log);
    assert!(
        lines.iter().any(|l| l["level"] == "TRACE"),
        "no TRACE lines captured"
    );
    assert!(lines.len() > 200, "only {} lines at TRACE", lines.len());
    assert_clean(&secrets, &log);
}
