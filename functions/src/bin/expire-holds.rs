//! Lambda entry point of expire-holds, run by an EventBridge schedule
//! every minute: sweeps expired holds and returns the summary.
use lambda_runtime::{run, service_fn, Error};
use shared::{handlers, lambda, routes};

#[tokio::main]
async fn main() -> Result<(), Error> {
    let app = lambda::start(&routes::EXPIRE_HOLDS).await?;
    run(service_fn(|event| handlers::expire_holds(&app, event))).await
}
