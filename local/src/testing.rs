//! The integration-test harness: one DynamoDB Local per test process,
//! started on a free port on first use, and a fresh table per test.

use std::sync::OnceLock;

use shared::auth::ConfirmSecret;
use shared::{App, Config, Store};

use crate::dynamodb_local::{free_port, DynamoDbLocal, Storage};
use crate::table::TableSpec;

/// The HMAC secret of `make dev` when `CONFIRM_SECRET` is unset, and of
/// the sample events. Never deploy it: template.yaml takes a parameter.
pub const DEV_CONFIRM_SECRET: &str = "seatclaim-local-development-secret-do-not-deploy";

static DYNAMODB: OnceLock<Result<DynamoDbLocal, String>> = OnceLock::new();

/// The endpoint of this process's DynamoDB Local (started on first call).
/// Panics with the reason if it cannot start: tests cannot run without it.
pub fn dynamodb_endpoint() -> String {
    let local = DYNAMODB.get_or_init(|| {
        let port = free_port().map_err(|e| e.to_string())?;
        DynamoDbLocal::start(port, "the test harness's free port", Storage::InMemory).map_err(|e| e.to_string())
    });
    match local {
        Ok(local) => local.endpoint(),
        Err(e) => panic!("DynamoDB Local did not start: {e}"),
    }
}

/// An app on a new, empty table made from template.yaml, with the
/// contract's default settings and [`DEV_CONFIRM_SECRET`].
pub async fn fresh_app() -> App {
    fresh_app_counting(None).await
}

/// [`fresh_app`] whose DynamoDB client counts its requests.
pub async fn fresh_app_counting(counter: Option<crate::metrics::RequestCounter>) -> App {
    let client = crate::local_client_counting(&dynamodb_endpoint(), counter);
    let table = format!("seatclaim-test-{}", uuid::Uuid::new_v4().simple());
    let spec = TableSpec::from_repo().unwrap_or_else(|e| panic!("{e}"));
    spec.create(&client, &table).await.unwrap_or_else(|e| panic!("{e}"));
    let config = Config {
        table_name: table.clone(),
        hold_seconds: shared::config::DEFAULT_HOLD_SECONDS,
        max_seats_per_order: shared::config::DEFAULT_MAX_SEATS_PER_ORDER,
        confirm_secret: ConfirmSecret::new(DEV_CONFIRM_SECRET),
    };
    App { store: Store::new(client, &table), config }
}
