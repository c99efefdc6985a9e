//! Lambda entry point of expire-holds, run by an EventBridge schedule
//! every minute: sweeps expired holds and returns the summary.
use lambda_runtime::{run, service_fn, Error};
use shared::{telemetry, App, Needs};

#[tokio::main]
async fn main() -> Result<(), Error> {
    telemetry::init();
    let app = App::from_env(Needs::Store).await?;
    run(service_fn(|event| {
        shared::handlers::expire_holds(&app, event)
    }))
    .await
}
