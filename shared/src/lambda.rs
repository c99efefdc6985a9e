//! The Lambda entry point of every HTTP function: its binary names the
//! function ([`crate::routes::function`]) and calls [`run_http`], which
//! builds the configuration and the clients once per sandbox and sends
//! each request to its route's handler.

use std::convert::Infallible;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use lambda_http::request::RequestContext;
use lambda_http::{service_fn, Body, Request, RequestExt, Response};

use crate::http::{request_deadline, serve};
use crate::routes::{answer, route_of, Function};
use crate::secrets::SECRET_REFRESH;
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
    let live = Live::new(start(function).await?, function);
    let live = &live;
    lambda_http::run(service_fn(move |req: Request| async move {
        let app = live.current().await;
        Ok::<_, Infallible>(answer_as(function, &app, req).await)
    }))
    .await
}

/// An instance's app, its secrets read again once they are
/// [`SECRET_REFRESH`] old (only when it has secrets from Secrets Manager):
/// a rotated key reaches every instance within that time. A failed read
/// keeps what it has, and is tried again a little later.
struct Live {
    function: &'static Function,
    app: RwLock<(Instant, Arc<App>)>,
    from_secrets: bool,
}

/// After a failed read of the secrets, the wait before the next try.
const SECRET_RETRY: Duration = Duration::from_secs(30);

impl Live {
    fn new(app: App, function: &'static Function) -> Self {
        let env = |k: &str| std::env::var(k).ok();
        Self {
            function,
            from_secrets: !crate::secrets::wanted(&env).is_empty(),
            app: RwLock::new((Instant::now(), Arc::new(app))),
        }
    }

    async fn current(&self) -> Arc<App> {
        let (read_at, app) = self.get();
        if !self.from_secrets || read_at.elapsed() < SECRET_REFRESH {
            return app;
        }
        let needs = self.function.needs.unwrap_or(crate::Needs::STORE);
        let fresh = match crate::config_from_env(needs).await {
            Ok(config) => refuse_dev_secrets(&config).map(|()| config),
            Err(e) => Err(e),
        };
        let (at, app) = match fresh {
            Ok(config) => (Instant::now(), Arc::new(app.with_config(config))),
            Err(e) => {
                tracing::warn!(error = %crate::error::chain(&e), "reading the secrets again failed: kept the ones read before");
                // As if read SECRET_RETRY before it would be due (a fresh
                // sandbox's clock may not reach that far back: then due
                // in a whole SECRET_REFRESH).
                let now = Instant::now();
                let retry = now
                    .checked_sub(SECRET_REFRESH - SECRET_RETRY)
                    .unwrap_or(now);
                (retry, app)
            }
        };
        *self.app.write().unwrap_or_else(|p| p.into_inner()) = (at, app.clone());
        app
    }

    fn get(&self) -> (Instant, Arc<App>) {
        // A poisoned lock only means a request panicked mid-swap; the pair
        // in it is whole either way.
        let guard = self.app.read().unwrap_or_else(|p| p.into_inner());
        (guard.0, guard.1.clone())
    }
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
        Err(err) => {
            let deadline = request_deadline(&req, app.config.request_budget_ms);
            serve(function.name, &req, deadline, async { Err(err) }).await
        }
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
