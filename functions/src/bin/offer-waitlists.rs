//! Lambda entry point of offer-waitlists, run by an EventBridge schedule
//! every minute: ticks every open waitlist for the minute, offering the
//! seats of lapsed holds. What it saw is kept for this instance's next run.
use lambda_runtime::{run, service_fn, Error};
use shared::{handlers, lambda, offerer::Offerer, routes};

#[tokio::main]
async fn main() -> Result<(), Error> {
    let app = lambda::start(&routes::OFFER_WAITLISTS).await?;
    let offerer = tokio::sync::Mutex::new(Offerer::default());
    run(service_fn(|event| {
        handlers::offer_waitlists(&app, &offerer, event)
    }))
    .await
}
