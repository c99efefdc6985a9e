//! A function binary refuses to start with a development secret (one that
//! anyone can read in local/), unless told it runs locally. Run as
//! Lambda would start it, without the runtime API: what stops it first is
//! the check, or, when allowed, the runtime's missing variables.

use std::process::{Command, Output};

/// The development hold token key: `make dev`'s, the tests'.
const DEV_HOLD_TOKEN_KEYS: &str = include_str!("../../local/dev-hold-token-keys.txt");
/// A key of the same shape that is nobody's development key.
const OTHER_KEY: &str = "c2VhdGNsYWltLXRlc3QtaG9sZC1rZXktQS0zMi1ieXQ=";

fn start_get_seat(hold_keys: &str, allow: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_get-seat"));
    command
        .env_clear()
        .env("TABLE_NAME", "seatclaim-test")
        .env("AWS_REGION", "us-east-1")
        .env("HOLD_TOKEN_KEYS", hold_keys.trim());
    if let Some(allow) = allow {
        command.env("SEATCLAIM_ALLOW_DEV_SECRETS", allow);
    }
    command.output().expect("the get-seat binary runs")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn a_function_refuses_to_start_with_a_development_secret() {
    let refused = start_get_seat(DEV_HOLD_TOKEN_KEYS, None);
    let text = stderr(&refused);
    assert!(!refused.status.success());
    assert!(
        text.contains("DevelopmentSecret") && text.contains("HOLD_TOKEN_KEYS"),
        "{text}"
    );
    assert!(
        !text.contains(DEV_HOLD_TOKEN_KEYS.trim()),
        "the key is echoed: {text}"
    );
    // Anything but "1" allows nothing.
    let still = start_get_seat(DEV_HOLD_TOKEN_KEYS, Some("yes"));
    assert!(
        stderr(&still).contains("DevelopmentSecret"),
        "{}",
        stderr(&still)
    );
}

#[test]
fn a_local_invoke_or_another_key_gets_past_the_check() {
    for output in [
        start_get_seat(DEV_HOLD_TOKEN_KEYS, Some("1")),
        start_get_seat(OTHER_KEY, None),
    ] {
        let text = stderr(&output);
        // No runtime API here: it stops there, past the check.
        assert!(!output.status.success());
        assert!(!text.contains("DevelopmentSecret"), "{text}");
        assert!(text.contains("Missing AWS_LAMBDA_"), "{text}");
    }
}
