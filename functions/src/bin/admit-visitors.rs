//! Lambda entry point of admit-visitors, run by an EventBridge schedule
//! every minute: ticks every on-sale queue for the minute. What it read of
//! the queues is kept for this instance's next run.
use lambda_runtime::{run, service_fn, Error};
use shared::{admitter::Admitter, handlers, lambda, routes};

#[tokio::main]
async fn main() -> Result<(), Error> {
    let app = lambda::start(&routes::ADMIT_VISITORS).await?;
    let admitter = tokio::sync::Mutex::new(Admitter::default());
    run(service_fn(|event| {
        handlers::admit_visitors(&app, &admitter, event)
    }))
    .await
}
