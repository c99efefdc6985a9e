//! The integration tests' kit: a fresh table per test on this process's
//! DynamoDB Local, the
//! invariants asserted, a dev server as an EventBridge stand-in, and the
//! IAM proof's reading of template.yaml. Test support: a failure here
//! panics with its reason, as a failed assertion would.

pub mod iam;

use aws_sdk_dynamodb::Client;
use local::apps::app_on;
use local::invariants::{check_invariants, TableCheck};
use local::table::TableSpec;
use shared::App;

/// The endpoint of this process's DynamoDB Local (started on first call).
pub use local::dynamodb_local::process_endpoint as dynamodb_endpoint;

/// An app on a new, empty table made from template.yaml (without its
/// stream, see [`TableSpec::without_stream`]), with the contract's default
/// settings and [`DEV_CONFIRM_SECRET`].
pub async fn fresh_app() -> App {
    fresh_app_counting(None).await
}

/// [`fresh_app`] whose DynamoDB client counts its requests.
pub async fn fresh_app_counting(counter: Option<local::metrics::RequestCounter>) -> App {
    fresh_app_with(suite_client(counter)).await
}

/// [`fresh_app_counting`] on a table with template.yaml's stream, for the
/// tests that follow it ([`local::streams`]).
pub async fn fresh_app_streaming(counter: Option<local::metrics::RequestCounter>) -> App {
    fresh_table(suite_client(counter), true).await
}

/// The suite's client: counting its requests if asked, and metered by
/// DynamoDB's limits in recording mode (it counts what DynamoDB would
/// throttle and changes no answer; throttling.rs enforces them).
fn suite_client(counter: Option<local::metrics::RequestCounter>) -> Client {
    let config = local::local_config(&dynamodb_endpoint())
        .interceptor(crowdcheck::capacity::CapacityMeter::recording());
    let config = match counter {
        Some(c) => config.interceptor(c),
        None => config,
    };
    Client::from_conf(config.build())
}

/// [`fresh_app_with`] on a table with template.yaml's stream.
pub async fn fresh_app_streaming_with(client: Client) -> App {
    fresh_table(client, true).await
}

/// An app on a new, empty table created through `client` (which may point
/// at another DynamoDB Local, or carry interceptors).
pub async fn fresh_app_with(client: Client) -> App {
    fresh_table(client, false).await
}

async fn fresh_table(client: Client, stream: bool) -> App {
    let table = format!("seatclaim-test-{}", uuid::Uuid::new_v4().simple());
    let spec = TableSpec::from_repo().unwrap_or_else(|e| panic!("{e}"));
    let spec = if stream { spec } else { spec.without_stream() };
    // The table is made through `client` without its timeouts: a test's
    // client may carry production's (3 s an attempt), which are for the
    // requests under test, not for its set-up on a loaded machine.
    let setup = Client::from_conf(
        client
            .config()
            .to_builder()
            .timeout_config(aws_sdk_dynamodb::config::timeout::TimeoutConfig::disabled())
            .retry_config(
                aws_sdk_dynamodb::config::retry::RetryConfig::standard().with_max_attempts(6),
            )
            .build(),
    );
    spec.create(&setup, &table)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    app_on(client, &table)
}

/// [`check_invariants`], panicking with every violation found.
pub async fn assert_invariants(app: &App, event: &str) -> TableCheck {
    let check = check_invariants(app, event).await;
    assert!(
        check.violations.is_empty(),
        "invariants violated for event {event}:\n{}",
        check.violations.join("\n")
    );
    check
}

/// A dev server on a free port serving `app` and the dev routes over
/// `feed` (EventBridge's and Secrets Manager's stand-ins among them): its
/// endpoint (`http://127.0.0.1:{port}`). Stop it with [`DevServer::stop`].
pub async fn dev_server(app: &App, feed: &local::feed::DevFeed) -> (String, DevServer) {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .unwrap_or_else(|e| panic!("binding a port: {e}"));
    let port = listener
        .local_addr()
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("the bound port: {e}"));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(local::server::run_with_feed(
        listener,
        app.clone(),
        Some(feed.clone()),
        async {
            let _ = stopped.await;
        },
    ));
    (format!("http://127.0.0.1:{port}"), DevServer { stop, task })
}

/// A dev server ([`dev_server`]) and an EventBridge client pointed at it
/// (counting its requests if asked): what it puts lands in `feed`,
/// answered as EventBridge answers.
pub async fn bus_on_dev_server(
    app: &App,
    feed: &local::feed::DevFeed,
    counter: Option<local::metrics::RequestCounter>,
) -> (shared::outbox::EventBridgeBus, DevServer) {
    let (endpoint, server) = dev_server(app, feed).await;
    let config = aws_sdk_eventbridge::Config::builder()
        .behavior_version(aws_sdk_eventbridge::config::BehaviorVersion::latest())
        .region(aws_sdk_eventbridge::config::Region::new("us-east-1"))
        .credentials_provider(aws_sdk_eventbridge::config::Credentials::new(
            "local",
            "local",
            None,
            None,
            "seatclaim-local",
        ))
        .endpoint_url(endpoint)
        .http_client(shared::store::http_client());
    let config = match counter {
        Some(c) => config.interceptor(c),
        None => config,
    };
    let config = if local::iam::recording() {
        config.interceptor(local::iam::CallRecorder {
            function: "publish-events",
        })
    } else {
        config
    };
    let bus = shared::outbox::EventBridgeBus::new(
        aws_sdk_eventbridge::Client::from_conf(config.build()),
        "seatclaim-local",
    );
    (bus, server)
}

/// A dev server started by [`dev_server`].
pub struct DevServer {
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

impl DevServer {
    pub async fn stop(self) {
        let _ = self.stop.send(());
        let _ = self.task.await;
    }
}
