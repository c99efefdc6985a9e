//! Lambda entry point of create-order: configuration and the DynamoDB client are
//! built once per sandbox; each request goes to the shared handler.
use lambda_http::{run, service_fn, Error};
use shared::{handlers, telemetry, App, Needs};

#[tokio::main]
async fn main() -> Result<(), Error> {
    telemetry::init();
    let app = App::from_env(Needs::StoreAndVerifyKeys).await?;
    run(service_fn(|req| handlers::create_order(&app, req))).await
}
