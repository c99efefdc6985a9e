//! An HTTP function's Lambda entry point. Its routes, handlers and what it
//! reads at start-up are its entry in `shared::routes`, found by this
//! binary's name (a name without an entry does not build).
use shared::routes::{function, Function};

const FUNCTION: &Function = function(env!("CARGO_BIN_NAME"));

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    shared::lambda::run_http(FUNCTION).await
}
