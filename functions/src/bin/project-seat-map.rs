//! Lambda entry point of project-seat-map, fed by the table's DynamoDB
//! stream: folds seat changes into the seat map's projection and reports
//! the records it could not write as batch item failures.
use lambda_runtime::{run, service_fn, Error};
use shared::{handlers, lambda, routes};

#[tokio::main]
async fn main() -> Result<(), Error> {
    let app = lambda::start(&routes::PROJECT_SEAT_MAP).await?;
    run(service_fn(|event| handlers::project_seat_map(&app, event))).await
}
