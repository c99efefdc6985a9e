//! The Lambda entry point of every HTTP function: its binary names the
//! function ([`crate::routes::function`]) and calls [`run_http`], which
//! builds the configuration and the clients once per sandbox and sends
//! each request to its route's handler.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Instant;

use lambda_http::request::RequestContext;
use lambda_http::{service_fn, Body, Request, RequestExt, Response};

use crate::error::Error;
use crate::http::{request_deadline, serve};
use crate::live::{Live, Reader, Secrets, TIMING};
use crate::routes::{answer, route_of, Function};
use crate::{telemetry, App};

/// A function's start: the log subscriber, then its configuration and
/// clients, built from what its entry says it needs.
pub async fn start(function: &Function) -> Result<App, lambda_runtime::Error> {
    telemetry::init();
    let needs = function
        .needs
        .ok_or("this function reads no configuration of the store")?;
    let app = App::from_env(needs).await?;
    refuse_dev_secrets(&app.config)?;
    Ok(app)
}

fn refuse_dev_secrets(config: &crate::Config) -> Result<(), crate::ConfigError> {
    let local = std::env::var(crate::dev_secrets::ALLOW_DEV_SECRETS).is_ok_and(|v| v == "1");
    crate::dev_secrets::refuse(config, local)
}

/// Runs an HTTP function in Lambda until the sandbox ends.
pub async fn run_http(function: &'static Function) -> Result<(), lambda_http::Error> {
    let env = |k: &str| std::env::var(k).ok();
    let from_secrets = !crate::secrets::wanted(&env).is_empty();
    let read = from_secrets.then(|| reader(function));
    let live = Live::new(
        function.name,
        start(function).await?,
        read,
        TIMING,
        Instant::now(),
    );
    lambda_http::run(service_fn(move |req: Request| {
        let live = live.clone();
        async move { Ok::<_, Infallible>(answer_live(function, &live, req).await) }
    }))
    .await
}

/// A request to `function` with the app `live` holds now: answered by its
/// route, or `503 secrets-unavailable` while its secrets are past their age.
pub async fn answer_live(
    function: &'static Function,
    live: &Arc<Live>,
    req: Request,
) -> Response<Body> {
    let (app, secrets) = live.current().await;
    match secrets {
        Secrets::Current => answer_as(function, &app, req).await,
        Secrets::Stale => refuse(function, &app, &req, Error::SecretsUnavailable).await,
    }
}

/// How `function` reads its configuration again: the environment, its
/// secrets from Secrets Manager, and the same refusal of the development
/// secrets as at start-up.
fn reader(function: &'static Function) -> Reader {
    let needs = function.needs.unwrap_or(crate::Needs::STORE);
    Box::new(move || {
        Box::pin(async move {
            let config = crate::config_from_env(needs).await?;
            refuse_dev_secrets(&config)?;
            Ok(config)
        })
    })
}

/// `err` as `function`'s reply, through the wrapper every route shares.
async fn refuse(function: &Function, app: &App, req: &Request, err: Error) -> Response<Body> {
    let deadline = request_deadline(req, app.config.request_budget_ms);
    serve(function.name, req, deadline, async { Err(err) }).await
}

/// A request to `function`, answered by its route
/// ([`crate::routes::route_of`]: API Gateway's `routeKey`, else the method
/// and path).
pub async fn answer_as(function: &'static Function, app: &App, req: Request) -> Response<Body> {
    let chosen = route_of(
        function,
        route_key(&req),
        req.method().as_str(),
        req.uri().path(),
    );
    match chosen {
        Ok(route) => answer(route, app, req).await,
        Err(err) => refuse(function, app, &req, err).await,
    }
}

/// The route API Gateway matched, as it names it in the request's context.
fn route_key(req: &Request) -> Option<&str> {
    match req.request_context_ref()? {
        RequestContext::ApiGatewayV2(context) => context.route_key.as_deref(),
        // Only HTTP APIs call these functions (lambda_http is built with
        // `apigw_http` alone); any other source is routed by its path.
        #[allow(unreachable_patterns)]
        _ => None,
    }
}
