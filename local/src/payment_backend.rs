//! What a payment backend does to tell seatclaim a payment arrived: signs
//! the confirm body the Standard Webhooks way with a `CONFIRM_SECRET`. The
//! dev server's `/_dev/pay`, the benchmarks and the tests sign with it.

use shared::auth::{
    ConfirmSecrets, HEADER_WEBHOOK_ID, HEADER_WEBHOOK_SIGNATURE, HEADER_WEBHOOK_TIMESTAMP,
};
use shared::Error;

/// The three Standard Webhooks headers (`webhook-id`, `webhook-timestamp`,
/// `webhook-signature`) for `body`, signed with the first of `secrets` at
/// `timestamp` (unix seconds) under a new message id.
pub fn webhook_headers_at(
    secrets: &ConfirmSecrets,
    body: &str,
    timestamp: i64,
) -> Result<[(&'static str, String); 3], Error> {
    let id = format!("msg_{}", uuid::Uuid::new_v4().simple());
    let signature = secrets.sign(&id, timestamp, body.as_bytes())?;
    Ok([
        (HEADER_WEBHOOK_ID, id),
        (HEADER_WEBHOOK_TIMESTAMP, timestamp.to_string()),
        (HEADER_WEBHOOK_SIGNATURE, signature),
    ])
}

/// [`webhook_headers_at`], signed now.
pub fn webhook_headers(
    secrets: &ConfirmSecrets,
    body: &str,
) -> Result<[(&'static str, String); 3], Error> {
    webhook_headers_at(secrets, body, shared::world::now().0 / 1000)
}
