//! `make dev`: DynamoDB Local, the table from template.yaml, every route on
//! http://127.0.0.1:$PORT through the Lambda handlers, the sweep
//! every $SWEEP_INTERVAL_SECONDS, and the table's stream followed into the
//! seat map and the events out (`GET /_dev/events?after=<n>`). Ctrl-C
//! stops all of it.

use std::io::Write;
use std::time::Duration;

use local::apps::DEV_CONFIRM_SECRET;
use local::dynamodb_local::{DynamoDbLocal, Storage};
use local::feed::DevFeed;
use local::table::TableSpec;
use shared::{App, Config, Needs, Store};
use tokio::task::JoinHandle;

fn env_u16(name: &'static str, default: u16) -> Result<u16, String> {
    match std::env::var(name) {
        Err(_) => Ok(default),
        Ok(v) => v
            .trim()
            .parse()
            .map_err(|_| format!("{name} must be a port number, got {v:?}")),
    }
}

#[tokio::main]
async fn main() {
    shared::telemetry::init();
    if let Err(e) = run().await {
        eprintln!("seatclaim-dev: {e}");
        std::process::exit(1);
    }
}

/// How often the dev server reads the table's stream.
const STREAM_POLL_MS: u64 = 100;
/// How long the dev server reuses a seat map read.
const DEV_SEAT_MAP_CACHE_MS: i64 = 250;
/// How often the dev server looks for events to finish creating.
const EVENT_FINISH_POLL_SECONDS: u64 = 2;

/// The dev server: its settings, DynamoDB Local and the table, the
/// background tasks, then every route until a stop signal.
async fn run() -> Result<(), String> {
    let port = env_u16("PORT", 3000)?;
    let dynamodb_port = env_u16("DYNAMODB_LOCAL_PORT", 8000)?;
    let sweep_every = sweep_interval()?;
    let config = dev_config()?;

    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .map_err(|e| format!("cannot listen on 127.0.0.1:{port} ({e}); set PORT to a free port"))?;
    let dynamodb = DynamoDbLocal::start(dynamodb_port, "DYNAMODB_LOCAL_PORT", Storage::InMemory)
        .map_err(|e| e.to_string())?;
    let app = dev_app(&dynamodb, config).await?;

    println!(
        "seatclaim dev server listening on http://127.0.0.1:{port} (the live seat map at /; DynamoDB Local on {}, table {}, sweep every {sweep_every}s). Ctrl-C stops.",
        dynamodb.endpoint(),
        app.config.table_name
    );

    let sweeper = spawn_sweeper(&app, sweep_every);
    let admitter = spawn_admitter(&app);
    let offerer = spawn_offerer(&app);
    let finisher = spawn_finisher(&app);
    let (feed, projector) = follow_stream(&dynamodb, &app).await?;
    local::server::run_with_feed(listener, app, Some(feed), stop_signal()).await;
    projector.abort();
    sweeper.abort();
    admitter.abort();
    offerer.abort();
    finisher.abort();
    drop(dynamodb);
    // Whoever read our output may be gone by now.
    let _ = writeln!(std::io::stdout(), "seatclaim dev server stopped");
    Ok(())
}

/// SWEEP_INTERVAL_SECONDS: whole seconds between sweeps, 60 if unset.
fn sweep_interval() -> Result<u64, String> {
    match std::env::var("SWEEP_INTERVAL_SECONDS") {
        Err(_) => Ok(60),
        Ok(v) => v
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|s| *s > 0)
            .ok_or_else(|| {
                format!("SWEEP_INTERVAL_SECONDS must be a whole number of seconds, got {v:?}")
            }),
    }
}

/// The configuration from the environment, with the development table
/// name, confirm secret and admission keys where none are set (and a loud
/// warning for each secret).
fn dev_config() -> Result<Config, String> {
    if std::env::var_os("TABLE_NAME").is_none() {
        std::env::set_var("TABLE_NAME", "seatclaim-local");
    }
    if std::env::var_os("CONFIRM_SECRET").is_none() {
        eprintln!("*** CONFIRM_SECRET is not set: using the DEVELOPMENT DEFAULT {DEV_CONFIRM_SECRET:?}. Never deploy it. ***");
        std::env::set_var("CONFIRM_SECRET", DEV_CONFIRM_SECRET);
    }
    let mut config = Config::from_env(Needs::CONFIRM).map_err(|e| e.to_string())?;
    if config.stripe_secrets.is_none() {
        eprintln!("*** STRIPE_WEBHOOK_SECRET is not set: checking Stripe webhooks with the DEVELOPMENT secret (local::apps::DEV_STRIPE_WEBHOOK_SECRET); `stripe listen` prints the secret to set instead. Never deploy it. ***");
        config.stripe_secrets = Some(local::apps::dev_stripe_secrets());
    }
    if config.admission_signing.is_none() {
        eprintln!("*** ADMISSION_SIGNING_KEYS is not set: signing admissions with the DEVELOPMENT key \"seatclaim-dev-NOT-SECRET\" (local::apps::DEV_ADMISSION_SIGNING_KEYS). Anyone can forge admissions with it. Never deploy it. ***");
        config.admission_signing = Some(local::apps::dev_admission_keys());
    }
    if config.hold_token_keys.is_none() {
        eprintln!("*** HOLD_TOKEN_KEYS is not set: signing hold tokens with the DEVELOPMENT key (local::apps::DEV_HOLD_TOKEN_KEYS). Anyone can mint hold tokens with it. Never deploy it. ***");
        config.hold_token_keys = Some(local::apps::dev_hold_token_keys());
    }
    if config.draw_secrets.is_none() {
        eprintln!("*** DRAW_SECRET is not set: deriving the queues' draws from the DEVELOPMENT secret (local::apps::DEV_DRAW_SECRET). Anyone can compute every draw in advance with it. Never deploy it. ***");
        config.draw_secrets = Some(local::apps::dev_draw_secrets());
    }
    if config.buyer_keys.is_none() {
        eprintln!("*** BUYER_VERIFY_KEYS is not set: trusting buyer tokens signed with the DEVELOPMENT key \"seatclaim-dev-buyer-NOT-SECRET\" (issuer \"seatclaim-dev\"), minted by POST /_dev/buyer-token. Never deploy it. ***");
        config.buyer_keys = Some(local::apps::dev_buyer_keys());
    }
    if config.admission_verify.is_none() {
        config.admission_verify = config.admission_signing.as_ref().map(|k| k.verify_keys());
    }
    Ok(config)
}

/// The table from template.yaml on DynamoDB Local, and the app on it.
async fn dev_app(dynamodb: &DynamoDbLocal, config: Config) -> Result<App, String> {
    let client = local::local_client(&dynamodb.endpoint());
    TableSpec::from_repo()
        .map_err(|e| e.to_string())?
        .ensure(&client, &config.table_name)
        .await
        .map_err(|e| e.to_string())?;
    // One process serves every viewer of the seat-map page: a short seat-map
    // cache keeps what they see within the page's one-second refresh.
    let mut app = App::new(Store::new(client, &config.table_name), config);
    app.memory = app
        .memory
        .with_seat_map_cache_ms(DEV_SEAT_MAP_CACHE_MS)
        .with_state_cache_ms(0);
    Ok(app)
}

/// The sweep, every `every` seconds (the first one after a full interval).
fn spawn_sweeper(app: &App, every: u64) -> JoinHandle<()> {
    let app = app.clone();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(every));
        tick.tick().await;
        loop {
            tick.tick().await;
            shared::sweep::run(&app.store, shared::world::now(), None).await;
        }
    })
}

/// The on-sale queues' admitter, ticking as the admitter function does.
fn spawn_admitter(app: &App) -> JoinHandle<()> {
    let app = app.clone();
    tokio::spawn(async move {
        shared::admitter::Admitter::default()
            .run_for(&app, Duration::from_secs(u64::from(u32::MAX)))
            .await;
    })
}

/// The waitlists' offerer, ticking as the offer-waitlists function does:
/// lapsed holds and late joins are offered within a second or two.
fn spawn_offerer(app: &App) -> JoinHandle<()> {
    let app = app.clone();
    tokio::spawn(async move {
        shared::offerer::Offerer::default()
            .run_for(&app, Duration::from_secs(u64::from(u32::MAX)))
            .await;
    })
}

/// An event create-event left unfinished (202) is picked up within
/// seconds here, rather than at the next minute's sweep as on AWS.
fn spawn_finisher(app: &App) -> JoinHandle<()> {
    let app = app.clone();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(EVENT_FINISH_POLL_SECONDS));
        loop {
            tick.tick().await;
            let mut summary = shared::sweep::SweepSummary::default();
            shared::sweep::finish_events(&app.store, shared::world::now(), None, &mut summary)
                .await;
        }
    })
}

/// The table's stream, followed as Lambda's event sources would: seat
/// changes reach the seat map's projection within a poll, and every
/// state change goes out through publish-events' own code, into the
/// dev feed (a JSON line each, and GET /_dev/events). The feed, and the
/// task that follows the stream.
async fn follow_stream(
    dynamodb: &DynamoDbLocal,
    app: &App,
) -> Result<(DevFeed, JoinHandle<()>), String> {
    let follower = local::streams::StreamFollower::attach(
        &dynamodb.endpoint(),
        app.store.client(),
        &app.config.table_name,
    )
    .await?;
    let feed = DevFeed::new();
    let projector = {
        let (app, feed) = (app.clone(), feed.clone());
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(STREAM_POLL_MS));
            loop {
                tick.tick().await;
                let (app, feed) = (&app, &feed);
                if let Err(e) = follower
                    .catch_up(|batch| async move {
                        shared::handlers::project_records(app, &batch).await;
                        shared::outbox::publish_records(feed, &batch, shared::world::now()).await;
                        feed.note_events(&batch);
                    })
                    .await
                {
                    tracing::warn!(error = %e, "reading the table's stream failed; retrying");
                }
            }
        })
    };
    Ok((feed, projector))
}

/// Ctrl-C (SIGINT) or SIGTERM.
async fn stop_signal() {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(s) => s,
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
            return;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}
