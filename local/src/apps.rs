//! An app as the dev server, the tests and the bench make it: on a table
//! of a local DynamoDB, with the contract's default settings and the
//! development secrets and keys (never deployed: template.yaml takes its
//! own), and a payment backend's signature over a confirm.

use aws_sdk_dynamodb::Client;
use lambda_http::Body;
use shared::admission::SigningKeys;
use shared::auth::{ConfirmSecrets, DrawSecrets, HoldTokenKeys, StripeSecrets};
use shared::buyer::BuyerKeys;
use shared::domain::buyer::BuyerClaims;
use shared::{App, Config, Store};

/// The Standard Webhooks secret of `make dev` when `CONFIRM_SECRET` is
/// unset, of the tests and of the sample events: its key reads
/// "seatclaim-local-dev-key-NOT-FOR-PRODUCTION". Never deploy it:
/// template.yaml takes a parameter.
pub const DEV_CONFIRM_SECRET: &str =
    "whsec_c2VhdGNsYWltLWxvY2FsLWRldi1rZXktTk9ULUZPUi1QUk9EVUNUSU9O";

/// Stripe's signing secret as `make dev`, the tests and the sample events
/// have it when `STRIPE_WEBHOOK_SECRET` is unset (shaped as Stripe gives
/// one; anyone can sign "Stripe" webhooks with it). Never deploy it:
/// template.yaml reads the secret from Secrets Manager. It lives in
/// local/dev-stripe-webhook-secret.txt, which the scripts read too.
pub const DEV_STRIPE_WEBHOOK_SECRET: &str = include_str!("../dev-stripe-webhook-secret.txt");

/// The development Stripe secret, parsed.
pub fn dev_stripe_secrets() -> StripeSecrets {
    // A constant known to parse (every Stripe test signs with it).
    StripeSecrets::parse(DEV_STRIPE_WEBHOOK_SECRET)
        .unwrap_or_else(|e| panic!("the development Stripe secret: {e}"))
}

/// The admission signing key of `make dev` when `ADMISSION_SIGNING_KEYS`
/// is unset, of the tests and of the sample events: a P-256 key whose
/// `kid` says what it is. Anyone can sign admissions with it. Never
/// deploy it: template.yaml reads the keys from Secrets Manager. It lives
/// in local/dev-admission-signing-keys.json, which the scripts read too.
pub const DEV_ADMISSION_SIGNING_KEYS: &str = include_str!("../dev-admission-signing-keys.json");

/// The development admission keys, parsed.
pub fn dev_admission_keys() -> SigningKeys {
    // A constant known to parse (the tests' every admission uses it).
    SigningKeys::parse(DEV_ADMISSION_SIGNING_KEYS)
        .unwrap_or_else(|e| panic!("the development admission key: {e}"))
}

/// The seller's buyer-token key under `make dev` when `BUYER_VERIFY_KEYS`
/// is unset, and of the tests: a P-256 key whose `kid` says what it is.
/// The dev server signs buyer tokens with it (`POST /_dev/buyer-token`),
/// standing in for a seller's sign-in. Anyone can sign buyer tokens with
/// it: a function that finds its public half in `BUYER_VERIFY_KEYS`
/// refuses to start outside local runs. It lives in
/// local/dev-buyer-signing-keys.json, which the scripts read too.
pub const DEV_BUYER_SIGNING_KEYS: &str = include_str!("../dev-buyer-signing-keys.json");

/// The issuer of the development buyer tokens.
pub const DEV_BUYER_ISSUER: &str = "seatclaim-dev";

/// The longest a development buyer token lives (and its default): the
/// contract's most.
pub const DEV_BUYER_TOKEN_SECONDS: i64 = shared::domain::buyer::MAX_BUYER_TOKEN_SECONDS;

/// The development buyer key (private), parsed.
pub fn dev_buyer_signing_keys() -> SigningKeys {
    // A constant known to parse (every buyer test signs with it).
    SigningKeys::parse(DEV_BUYER_SIGNING_KEYS)
        .unwrap_or_else(|e| panic!("the development buyer key: {e}"))
}

/// What verifies the development buyer tokens.
pub fn dev_buyer_keys() -> BuyerKeys {
    BuyerKeys::new(dev_buyer_signing_keys().verify_keys(), DEV_BUYER_ISSUER)
}

/// A development buyer token naming `buyer` for `event`, issued at
/// `now_s` (unix seconds) for `seconds`: what the seller's sign-in would
/// sign.
pub fn dev_buyer_token(
    keys: &SigningKeys,
    event: &str,
    buyer: &str,
    now_s: i64,
    seconds: i64,
) -> Result<String, shared::Error> {
    keys.sign_as(
        Some(shared::buyer::BUYER_TOKEN_TYPE),
        &BuyerClaims {
            iss: DEV_BUYER_ISSUER.into(),
            aud: event.into(),
            sub: buyer.into(),
            iat: now_s,
            exp: now_s + seconds,
            nbf: None,
        },
    )
}

/// The draw secret of `make dev` when `DRAW_SECRET` is unset, of the
/// tests and of the sample events: its bytes read
/// "seatclaim-dev-draw-secret-NOT-SECRET!!". Anyone can compute every draw
/// of a queue under it in advance. Never deploy it: template.yaml reads
/// the secret from Secrets Manager. It lives in local/dev-draw-secret.txt,
/// which the scripts read too.
pub const DEV_DRAW_SECRET: &str = include_str!("../dev-draw-secret.txt");

/// The development draw secret, parsed.
pub fn dev_draw_secrets() -> DrawSecrets {
    // A constant known to parse (every queue test's draw uses it).
    DrawSecrets::parse(DEV_DRAW_SECRET)
        .unwrap_or_else(|e| panic!("the development draw secret: {e}"))
}

/// The hold token key of `make dev` when `HOLD_TOKEN_KEYS` is unset, of
/// the tests and of the sample events: its bytes read
/// "seatclaim-dev-hold-key-NOT-SECRET!!". Anyone can mint hold tokens
/// with it. Never deploy it: template.yaml reads the keys from Secrets
/// Manager. It lives in local/dev-hold-token-keys.txt, which the scripts
/// read too.
pub const DEV_HOLD_TOKEN_KEYS: &str = include_str!("../dev-hold-token-keys.txt");

/// The development hold token key, parsed.
pub fn dev_hold_token_keys() -> HoldTokenKeys {
    // A constant known to parse (every test's order uses it).
    HoldTokenKeys::parse(DEV_HOLD_TOKEN_KEYS)
        .unwrap_or_else(|e| panic!("the development hold token key: {e}"))
}

/// The development secrets, parsed.
pub fn dev_confirm_secrets() -> ConfirmSecrets {
    // A constant known to parse (unit-tested in shared::auth).
    ConfirmSecrets::parse(DEV_CONFIRM_SECRET)
        .unwrap_or_else(|e| panic!("the development secret: {e}"))
}

/// The Standard Webhooks headers a payment backend holding `secrets`
/// sends with `body`, signed now (see [`crate::payment_backend`]); panics
/// if it cannot sign, as a test that cannot sign cannot run.
pub fn webhook_headers(secrets: &ConfirmSecrets, body: &str) -> [(&'static str, String); 3] {
    crate::payment_backend::webhook_headers(secrets, body)
        .unwrap_or_else(|e| panic!("signing: {e}"))
}

/// [`webhook_headers`] with a chosen timestamp (unix seconds).
pub fn webhook_headers_at(
    secrets: &ConfirmSecrets,
    body: &str,
    timestamp: i64,
) -> [(&'static str, String); 3] {
    crate::payment_backend::webhook_headers_at(secrets, body, timestamp)
        .unwrap_or_else(|e| panic!("signing: {e}"))
}

/// An app on an existing table (or none: requests then fail as the store
/// fails), with the contract's default settings and [`DEV_CONFIRM_SECRET`].
pub fn app_on(client: Client, table: &str) -> App {
    let config = Config {
        table_name: table.to_owned(),
        hold_seconds: shared::config::DEFAULT_HOLD_SECONDS,
        max_seats_per_order: shared::config::DEFAULT_MAX_SEATS_PER_ORDER,
        expiry_guard_ms: shared::config::DEFAULT_EXPIRY_GUARD_MS,
        confirm_secrets: Some(dev_confirm_secrets()),
        stripe_secrets: Some(dev_stripe_secrets()),
        create_event_budget_ms: shared::config::DEFAULT_CREATE_EVENT_BUDGET_MS,
        max_order_lifetime_seconds: shared::config::DEFAULT_MAX_ORDER_LIFETIME_SECONDS,
        request_budget_ms: shared::config::DEFAULT_REQUEST_BUDGET_MS,
        admission_verify: Some(dev_admission_keys().verify_keys()),
        admission_signing: Some(dev_admission_keys()),
        hold_token_keys: Some(dev_hold_token_keys()),
        buyer_keys: Some(dev_buyer_keys()),
        draw_secrets: Some(dev_draw_secrets()),
        admitter_run_seconds: shared::config::DEFAULT_ADMITTER_RUN_SECONDS,
        offerer_run_seconds: shared::config::DEFAULT_OFFERER_RUN_SECONDS,
        draw_settle_ms: shared::config::DEFAULT_DRAW_SETTLE_MS,
        queue_shards: shared::config::QueueShards::DEFAULT,
    };
    // Every request reads the queue's state, as the dev server does: a
    // test's put or delete applies to its next request, whatever function
    // serves it (an instance on AWS reuses its read for up to a second).
    let mut app = App::new(Store::new(client, table), config);
    app.memory = app.memory.with_state_cache_ms(0);
    app
}

/// Finishes `event`, whose create-event answered `202` (its writes ran past
/// the budget, as on a loaded machine), as the sweep would: tests and the
/// bench make big events this way, so their verdict never depends on the
/// machine's load. The creator stops a margin before its budget ends, and
/// the sweep takes an event over only once that budget has ended: it is
/// tried each second until it has, at most [`FINISH_TRIES`] times.
pub async fn finish_creation(app: &App, event: &str) -> Result<(), String> {
    for _ in 0..FINISH_TRIES {
        let mut summary = shared::sweep::SweepSummary::default();
        shared::sweep::finish_events(&app.store, shared::world::now(), None, &mut summary).await;
        if is_ready(app, event).await {
            return Ok(());
        }
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    }
    Err(format!(
        "create-event {event}: 202, and the sweep did not finish it in {FINISH_TRIES} tries"
    ))
}

/// How many times [`finish_creation`] runs the sweep's finishing step.
pub const FINISH_TRIES: u32 = 30;

/// Whether get-event answers `event` as `READY`.
async fn is_ready(app: &App, event: &str) -> bool {
    let uri = format!("/events/{event}");
    let got = crate::router::dispatch(app, crate::router::request("GET", &uri, &[], Body::Empty));
    let got = got.await;
    let body: serde_json::Value = serde_json::from_slice(got.body().as_ref()).unwrap_or_default();
    got.status() == 200 && body["status"] == "READY"
}
