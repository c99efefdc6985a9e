//! The functions' secrets, read at start-up from Secrets Manager by ARN
//! (`shared::secrets`), here against the dev server's stand-in with the
//! SDK's own client: each development secret arrives whole, parses, and is
//! one the start-up check refuses outside local runs; a secret that is not
//! there is an error naming the variable and the ARN, nothing else.

use shared::config::{ADMISSION_SIGNING_KEYS, CONFIRM_SECRET, HOLD_TOKEN_KEYS};
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
