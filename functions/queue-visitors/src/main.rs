//! Lambda entry point of queue-visitors (join-queue and visitor-status, which sign admissions): configuration and the DynamoDB
//! client are built once per sandbox; each request goes to the shared handler.
use lambda_http::{run, service_fn, Error};
use shared::{handlers, telemetry, App, Needs};

#[tokio::main]
async fn main() -> Result<(), Error> {
    telemetry::init();
    let app = App::from_env(Needs::StoreAndSigningKeys).await?;
    run(service_fn(|req| handlers::queue_visitors(&app, req))).await
}
