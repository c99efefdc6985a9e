//! Lambda entry point of get-queue (the queue's state): configuration and the DynamoDB
//! client are built once per sandbox; each request goes to the shared handler.
use lambda_http::{run, service_fn, Error};
use shared::{handlers, telemetry, App, Needs};

#[tokio::main]
async fn main() -> Result<(), Error> {
    telemetry::init();
    let app = App::from_env(Needs::Store).await?;
    run(service_fn(|req| handlers::get_queue(&app, req))).await
}
