//! Lambda entry point of publish-events, fed by the table's DynamoDB
//! stream: every state change out as an EventBridge event on
//! `EVENT_BUS_NAME`; records it could not publish are batch item failures.
use lambda_runtime::{run, service_fn, Error};
use shared::{handlers, outbox::EventBridgeBus, telemetry};

#[tokio::main]
async fn main() -> Result<(), Error> {
    telemetry::init();
    let bus = EventBridgeBus::from_env().await?;
    run(service_fn(|event| handlers::publish_events(&bus, event))).await
}
