//! The functions' secrets, read at start-up from Secrets Manager by ARN
//! (`shared::secrets`), here against the dev server's stand-in with the
//! SDK's own client: each development secret arrives whole, parses, and is
//! one the start-up check refuses outside local runs; a secret that is not
//! there is an error naming the variable and the ARN, nothing else. Read
//! again as they age (`shared::live`), a Secrets Manager that hangs or fails
//! never stalls a request, and keys past their age are refused.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use shared::config::{ADMISSION_SIGNING_KEYS, CONFIRM_SECRET, HOLD_TOKEN_KEYS};
use shared::live::{Live, Reader, Secrets, Timing, TIMING};
use shared::secrets::{arn_variable, fetch_with, wanted, SecretError};
use shared::{Config, Needs};

#[tokio::test]
async fn a_function_reads_its_secrets_by_arn_and_only_those() {
    let app = testkit::fresh_app().await;
    let feed = local::feed::DevFeed::new();
    let (endpoint, server) = testkit::dev_server(&app, &feed).await;
    let client = local::secrets::client(&endpoint);
    let names = [HOLD_TOKEN_KEYS, ADMISSION_SIGNING_KEYS, CONFIRM_SECRET];
    let env = |k: &str| -> Option<String> {
        if k == "TABLE_NAME" {
            return Some("t".into());
        }
        names
            .iter()
            .find(|name| arn_variable(name) == k)
            .and_then(|name| local::secrets::dev_secret_arn(name))
    };
    let fetched = fetch_with(&client, wanted(&env)).await.unwrap();
    assert_eq!(fetched.len(), 3, "{:?}", fetched.keys());
    assert_eq!(
        fetched[HOLD_TOKEN_KEYS],
        local::apps::DEV_HOLD_TOKEN_KEYS.trim()
    );
    assert_eq!(fetched[CONFIRM_SECRET], local::apps::DEV_CONFIRM_SECRET);
    let needs = Needs {
        confirm_secret: true,
        admission_signing: true,
        hold_token_keys: true,
        ..Needs::STORE
    };
    let config =
        Config::from_lookup(needs, |k| fetched.get(k).cloned().or_else(|| env(k))).unwrap();
    assert_eq!(
        shared::dev_secrets::found_in(&config),
        [CONFIRM_SECRET, HOLD_TOKEN_KEYS, ADMISSION_SIGNING_KEYS],
        "what the stand-in serves is the development secrets, refused in AWS"
    );

    let missing = "arn:aws:secretsmanager:us-east-1:000000000000:secret:seatclaim/none-AAAAAA";
    let err = fetch_with(&client, vec![(HOLD_TOKEN_KEYS, missing.to_owned())])
        .await
        .unwrap_err();
    assert!(matches!(err, SecretError::Unavailable { .. }), "{err:?}");
    let told = shared::error::chain(&err);
    assert!(
        told.contains(HOLD_TOKEN_KEYS) && told.contains(missing),
        "{told}"
    );
    assert!(
        !told.contains(local::apps::DEV_HOLD_TOKEN_KEYS.trim()),
        "{told}"
    );
    server.stop().await;
}

/// A Secrets Manager stand-in that accepts every connection and never
/// answers: the endpoint, and how many connections it holds open.
async fn hanging_secrets_manager() -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let held = Arc::new(AtomicUsize::new(0));
    let count = held.clone();
    tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            open.push(socket); // kept open, never answered
            count.fetch_add(1, Ordering::SeqCst);
        }
    });
    (endpoint, held)
}

/// How a function reads its config again: `names`' ARNs from the Secrets
/// Manager at `endpoint`, as `config_from_env` does; the ARNs the dev
/// server serves while `working` holds, else ARNs it does not know (its
/// "not found", at once).
fn reader(endpoint: &str, working: Arc<AtomicBool>) -> Reader {
    let endpoint = endpoint.to_owned();
    Box::new(move || {
        let endpoint = endpoint.clone();
        let working = working.clone();
        Box::pin(async move {
            // Looked at as the read runs, not as it is made.
            let working = working.load(Ordering::SeqCst);
            let env = move |k: &str| -> Option<String> {
                if k == "TABLE_NAME" {
                    return Some("t".into());
                }
                let name = NAMES.iter().find(|name| arn_variable(name) == k)?;
                match working {
                    true => local::secrets::dev_secret_arn(name),
                    false => Some(format!(
                        "arn:aws:secretsmanager:us-east-1:000000000000:secret:seatclaim/none-{name}"
                    )),
                }
            };
            let client = local::secrets::client(&endpoint);
            let fetched = fetch_with(&client, wanted(&env)).await?;
            Config::from_lookup(THREE, |k| fetched.get(k).cloned().or_else(|| env(k)))
        })
    })
}

const NAMES: &[&str] = &[HOLD_TOKEN_KEYS, ADMISSION_SIGNING_KEYS, CONFIRM_SECRET];
const THREE: Needs = Needs {
    confirm_secret: true,
    admission_signing: true,
    hold_token_keys: true,
    ..Needs::STORE
};

/// Timing for a test: a read due at once, keys good for `max_age`.
fn due_now(max_age: Duration) -> Timing {
    Timing {
        refresh: Duration::ZERO,
        max_age,
        ..TIMING
    }
}

/// A due read against a Secrets Manager that never answers: the request
/// that starts it waits about a second at most and goes on with the keys
/// it has, a request while it is out does not wait, and every secret is
/// asked for at once (three connections, not one after another).
#[tokio::test]
async fn a_hanging_secrets_manager_never_stalls_a_request() {
    let app = testkit::fresh_app().await;
    let (endpoint, held) = hanging_secrets_manager().await;
    let read = reader(&endpoint, Arc::new(AtomicBool::new(true)));
    let timing = due_now(Duration::from_secs(3_600));
    let live = Live::new("get-order", app.clone(), Some(read), timing, Instant::now());
    let before = live.current_app();
    // The request that starts the read waits for it at most the wait; one
    // while it is out does not wait at all.
    for bound in [TIMING.wait * 5, TIMING.wait / 2] {
        let (now, secrets) = tokio::time::timeout(bound, live.current())
            .await
            .expect("a request never waits on Secrets Manager for long");
        assert_eq!(secrets, Secrets::Current);
        assert!(Arc::ptr_eq(&now, &before), "the keys it had");
    }
    assert_eq!(
        held.load(Ordering::SeqCst),
        NAMES.len(),
        "all at once, one read"
    );
}

/// A read that fails at once (Secrets Manager's own "not found") keeps the
/// keys while they are within their age; past it every request tries
/// again and is `503 secrets-unavailable` with `Retry-After`, until a read
/// succeeds, which the same instance then answers with.
#[tokio::test]
async fn failing_reads_keep_the_keys_until_their_age_then_refuse_until_one_succeeds() {
    let app = testkit::fresh_app().await;
    let feed = local::feed::DevFeed::new();
    let (endpoint, server) = testkit::dev_server(&app, &feed).await;
    let working = Arc::new(AtomicBool::new(false));
    let max_age = Duration::from_secs(2);
    let live = Live::new(
        "get-order",
        app.clone(),
        Some(reader(&endpoint, working.clone())),
        due_now(max_age),
        Instant::now(),
    );
    let before = live.current_app();
    let (now, secrets) = live.current().await;
    assert_eq!(
        secrets,
        Secrets::Current,
        "a failed read, within the age: kept"
    );
    assert!(Arc::ptr_eq(&now, &before));

    // Let the keys age past their limit (as a test lets a hold expire).
    tokio::time::sleep(max_age + Duration::from_millis(50)).await;
    let function = shared::routes::function("get-order");
    for _ in 0..2 {
        // A wait apart: a stale instance tries again no more often.
        tokio::time::sleep(TIMING.wait).await;
        let req =
            local::router::request("GET", "/orders/o-1", &[("authorization", "Bearer x")], "");
        let reply = shared::lambda::answer_live(function, &live, req).await;
        assert_eq!(reply.status(), 503);
        assert_eq!(reply.headers()["retry-after"], "1");
        let (_, body) = crate::common::read(reply);
        assert_eq!(body["error"], "secrets-unavailable", "{body}");
    }

    // Secrets Manager answers again: the next request's read brings the
    // keys back on this same instance, without waiting for a retry time.
    working.store(true, Ordering::SeqCst);
    tokio::time::sleep(TIMING.wait).await;
    let (now, secrets) = live.current().await;
    assert_eq!(secrets, Secrets::Current, "read again within the wait");
    assert!(!Arc::ptr_eq(&now, &before), "the keys just read");
    server.stop().await;
}

/// A read that panics counts as failed: the next due read starts, rather
/// than every later request finding the dead one "under way".
#[tokio::test]
async fn a_read_that_panics_does_not_block_the_next() {
    let app = testkit::fresh_app().await;
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let config = app.config.clone();
    let read: Reader = Box::new(move || {
        let first = counted.fetch_add(1, Ordering::SeqCst) == 0;
        let config = config.clone();
        Box::pin(async move {
            assert!(!first, "the first read panics");
            Ok(config)
        })
    });
    let timing = Timing {
        retry: Duration::ZERO,
        ..due_now(Duration::from_secs(3_600))
    };
    let live = Live::new("get-order", app.clone(), Some(read), timing, Instant::now());
    let before = live.current_app();
    assert_eq!(live.current().await.1, Secrets::Current);
    let (now, _) = live.current().await;
    assert_eq!(calls.load(Ordering::SeqCst), 2, "a second read started");
    assert!(!Arc::ptr_eq(&now, &before), "and its keys were taken");
}
