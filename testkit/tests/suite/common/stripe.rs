//! Stripe's webhooks as Stripe sends them: a Checkout Session event shaped
//! as Stripe's API has it, signed by Stripe's own Node library
//! (`scripts/stripe_sign.js`), never by our code.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{json, Value};
use shared::App;

/// The Stripe route's path.
pub const STRIPE_PATH: &str = "/payments/stripe";

/// A Checkout Session id as Stripe makes them: `cs_test_` and 58 more
/// characters, 66 in all (longer than the 64 of the contract's other ids).
pub fn session_id() -> String {
    let random = shared::world::random_u128().expect("randomness");
    format!("cs_test_a1{:032x}{}", random, "b".repeat(24))
}

/// `kind`'s event for a Checkout Session with `payment_status` and
/// `metadata`, with the fields Stripe sends besides those read.
pub fn checkout_event(kind: &str, session: &str, payment_status: &str, metadata: Value) -> String {
    let now = shared::world::now().0 / 1000;
    json!({
        "id": format!("evt_{}", &session[8..32]),
        "object": "event",
        "api_version": "2026-11-17.clover",
        "created": now,
        "livemode": false,
        "pending_webhooks": 1,
        "request": {"id": null, "idempotency_key": null},
        "type": kind,
        "data": {"object": {
            "id": session,
            "object": "checkout.session",
            "amount_subtotal": 9000,
            "amount_total": 9000,
            "currency": "eur",
            "client_reference_id": null,
            "customer_details": {"email": "fan@example.com", "name": "A Fan"},
            "livemode": false,
            "metadata": metadata,
            "mode": "payment",
            "payment_intent": "pi_3Qtest0000000000000000",
            "payment_status": payment_status,
            "status": "complete",
            "url": null,
        }},
    })
    .to_string()
}

/// The `Stripe-Signature` Stripe's library makes for `body` at `timestamp`
/// (unix seconds) with `secret`.
pub fn stripe_signature_with(secret: &str, body: &str, timestamp: i64) -> String {
    let script = local::repo_root().join("scripts/stripe_sign.js");
    let mut child = Command::new("node")
        .arg(script)
        .env("STRIPE_SIGN_SECRET", secret)
        .env("STRIPE_SIGN_TIMESTAMP", timestamp.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node runs (make node-deps installs stripe)");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(body.as_bytes())
        .expect("write the payload");
    let out = child.wait_with_output().expect("node ends");
    assert!(
        out.status.success(),
        "Stripe's signer failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("a header is text")
}

/// [`stripe_signature_with`] with the development secret, now.
pub fn stripe_signature(body: &str) -> String {
    let now = shared::world::now().0 / 1000;
    stripe_signature_with(local::apps::DEV_STRIPE_WEBHOOK_SECRET.trim(), body, now)
}

/// `body` sent to the Stripe route, signed now by Stripe's library; sent
/// again after a `503` as Stripe would.
pub async fn stripe_send(app: &App, body: &str) -> (u16, Value) {
    let signature = stripe_signature(body);
    let headers = [("stripe-signature", signature.as_str())];
    super::send(app, "POST", STRIPE_PATH, &headers, body).await
}

/// Metadata naming `order` and what was paid, as a seller sets it.
pub fn paid_for(order: &str, seats: &[&str], ga: Value) -> Value {
    let mut metadata =
        json!({"seatclaimOrderId": order, "seatclaimSeats": json!(seats).to_string()});
    if !ga.is_null() {
        metadata["seatclaimGa"] = ga.to_string().into();
    }
    metadata
}
