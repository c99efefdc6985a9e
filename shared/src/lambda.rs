//! The Lambda entry point of every HTTP function: its binary names the
//! function ([`crate::routes::function`]) and calls [`run_http`], which
//! builds the configuration and the clients once per sandbox and sends
//! each request to its route's handler.

use std::convert::Infallible;

use lambda_http::{service_fn, Body, Request, Response};

use crate::error::Error;
use crate::http::{request_deadline, serve};
use crate::routes::{answer, Function};
use crate::{telemetry, App};

/// A function's start: the log subscriber, then its configuration and
/// clients, built from what its entry says it needs.
pub async fn start(function: &Function) -> Result<App, lambda_runtime::Error> {
    telemetry::init();
    let needs = function
        .needs
        .ok_or("this function reads no configuration of the store")?;
    let app = App::from_env(needs).await?;
    let local = std::env::var(crate::dev_secrets::ALLOW_DEV_SECRETS).is_ok_and(|v| v == "1");
    crate::dev_secrets::refuse(&app.config, local)?;
    Ok(app)
}

/// Runs an HTTP function in Lambda until the sandbox ends.
pub async fn run_http(function: &'static Function) -> Result<(), lambda_http::Error> {
    let app = start(function).await?;
    let app = &app;
    lambda_http::run(service_fn(move |req: Request| async move {
        Ok::<_, Infallible>(answer_as(function, app, req).await)
    }))
    .await
}

/// A request to `function`, answered by its route. API Gateway sends a
/// function only its own routes, so the method picks among them (the path
/// may carry a stage's prefix).
pub async fn answer_as(function: &'static Function, app: &App, req: Request) -> Response<Body> {
    let routes = function.routes();
    let route = match routes {
        [only] => Some(only),
        _ => routes
            .iter()
            .find(|r| r.method.eq_ignore_ascii_case(req.method().as_str())),
    };
    match route {
        Some(route) => answer(route, app, req).await,
        None => {
            let err = Error::MethodNotAllowed {
                method: req.method().to_string(),
                allow: routes
                    .iter()
                    .map(|r| r.method)
                    .collect::<Vec<_>>()
                    .join(", "),
            };
            let deadline = request_deadline(&req, app.config.request_budget_ms);
            serve(function.name, &req, deadline, async { Err(err) }).await
        }
    }
}
