//! Configuration from the environment, checked once at start-up.

use crate::admission::{KeyError, SigningKeys, VerifyKeys};
use crate::auth::{
    ConfirmSecrets, DrawSecrets, HoldKeyError, HoldTokenKeys, SecretError, StripeSecretError,
    StripeSecrets,
};
use crate::buyer::{BuyerConfigError, BuyerKeys, BUYER_ISSUER, BUYER_VERIFY_KEYS};
use crate::domain::{EXPIRY_GUARD_MS_RANGE, HOLD_SECONDS_RANGE, SEATS_PER_ORDER_RANGE};

/// Start-up errors: each names the variable at fault.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("environment variable {0} is required but not set")]
    Missing(&'static str),
    #[error("environment variable {name} must be {expected}, got {got:?}")]
    Invalid {
        name: &'static str,
        expected: String,
        got: String,
    },
    #[error("environment variable CONFIRM_SECRET is invalid: {0}")]
    BadSecret(#[source] SecretError),
    #[error("environment variable STRIPE_WEBHOOK_SECRET is invalid: {0}")]
    BadStripeSecret(#[source] StripeSecretError),
    #[error(
        "environment variable {0} holds a development secret (anyone can read it in the repository): refused outside make dev and local invokes"
    )]
    DevelopmentSecret(&'static str),
    #[error(transparent)]
    Secret(#[from] crate::secrets::SecretError),
    #[error("environment variable HOLD_TOKEN_KEYS is invalid: {0}")]
    BadHoldKeys(#[source] HoldKeyError),
    #[error("environment variable DRAW_SECRET is invalid: {0}")]
    BadDrawSecret(#[source] HoldKeyError),
    #[error("environment variable {0}")]
    BadBuyerKeys(#[source] BuyerConfigError),
    #[error("environment variable {name} is invalid: {source}")]
    BadKeys {
        name: &'static str,
        #[source]
        source: KeyError,
    },
}

#[derive(Debug, Clone)]
pub struct Config {
    pub table_name: String,
    /// Hold time for events created without `holdSeconds`.
    pub hold_seconds: u32,
    pub max_seats_per_order: u32,
    /// `EXPIRY_GUARD_MS`: the clock-skew margin of the holder's own
    /// operations (capped per event at a quarter of its hold time).
    pub expiry_guard_ms: u32,
    /// Only the confirm function (and the dev server) needs it.
    pub confirm_secrets: Option<ConfirmSecrets>,
    /// `STRIPE_WEBHOOK_SECRET`: the Stripe payment route's signing
    /// secrets (only that function, and the dev server, has them).
    pub stripe_secrets: Option<StripeSecrets>,
    /// `CREATE_EVENT_BUDGET_MS`: how long create-event writes seats before
    /// it answers `202` and leaves the rest to the sweep. The default keeps
    /// the reply inside API Gateway's 29 s integration timeout.
    pub create_event_budget_ms: u32,
    /// `MAX_ORDER_LIFETIME_SECONDS`: extend-order never moves an order's
    /// expiry past `createdAt` plus this.
    pub max_order_lifetime_seconds: u32,
    /// `REQUEST_BUDGET_MS`: the most an API request may take from its
    /// start; then it answers `503 store-unavailable` with `Retry-After`
    /// (see [`crate::http::serve`]). In Lambda the invocation's own
    /// deadline, less a margin for the reply, binds first when it is
    /// sooner. The default keeps every reply inside the HTTP API's 30 s
    /// integration timeout; tests scale it down.
    pub request_budget_ms: u32,
    /// `ADMISSION_SIGNING_KEYS`: only the queue's visitor function
    /// (and the dev server) holds them.
    pub admission_signing: Option<SigningKeys>,
    /// `ADMISSION_VERIFY_KEYS`: create-order and the JWKS route.
    pub admission_verify: Option<VerifyKeys>,
    /// `HOLD_TOKEN_KEYS`: what create-order signs hold tokens with and
    /// every order route verifies them with ([`HoldTokenKeys`]).
    pub hold_token_keys: Option<HoldTokenKeys>,
    /// `BUYER_VERIFY_KEYS` and `BUYER_ISSUER`: what verifies the seller's
    /// buyer tokens (create-order and the queue's visitor routes).
    pub buyer_keys: Option<BuyerKeys>,
    /// `DRAW_SECRET`: what each queue generation's draw seed is derived
    /// from (the queue's routes: the commitment, the draw keys, the
    /// disclosure).
    pub draw_secrets: Option<DrawSecrets>,
    /// `ADMITTER_RUN_SECONDS`: how long one run of the admitter
    /// function ticks. A little over the schedule's minute, so the next
    /// run overlaps it and no second goes without a tick (two admitters at
    /// once are harmless: only one commits each tick).
    pub admitter_run_seconds: u32,
    /// `OFFERER_RUN_SECONDS`: how long one run of the offer-waitlists
    /// function ticks, overlapping the next minute's run as the admitter's
    /// does (two offerers at once are harmless: each offer is one
    /// conditional transaction).
    pub offerer_run_seconds: u32,
    /// `DRAW_SETTLE_MS`: how long after a queue's opening its first
    /// admission waits, fixed in the queue's settings when it is put.
    pub draw_settle_ms: u32,
    /// `QUEUE_SHARDS`: the index shards a queue generation put from now
    /// on spreads its visitors over, fixed in the generation.
    pub queue_shards: QueueShards,
}

impl Config {
    pub fn create_event_budget(&self) -> std::time::Duration {
        std::time::Duration::from_millis(u64::from(self.create_event_budget_ms))
    }
}

/// The variables that hold the secrets (read by `crate::secrets`), named
/// here with every other setting.
pub use crate::secrets::{
    ADMISSION_SIGNING_KEYS, CONFIRM_SECRET, DRAW_SECRET, HOLD_TOKEN_KEYS, STRIPE_WEBHOOK_SECRET,
};

pub const DEFAULT_HOLD_SECONDS: u32 = 420;
pub const DEFAULT_MAX_SEATS_PER_ORDER: u32 = 10;
pub const DEFAULT_EXPIRY_GUARD_MS: u32 = 2000;
pub const DEFAULT_CREATE_EVENT_BUDGET_MS: u32 = 20_000;
pub const DEFAULT_MAX_ORDER_LIFETIME_SECONDS: u32 = 7200;
pub const DEFAULT_ADMITTER_RUN_SECONDS: u32 = 62;
/// As the admitter's: a little over the schedule's minute.
pub const DEFAULT_OFFERER_RUN_SECONDS: u32 = 62;
/// At most 14 minutes: the admitter's and the offerer's function's Lambda
/// timeout must exceed it (the offerer's run takes the same range).
pub const ADMITTER_RUN_SECONDS_RANGE: std::ops::RangeInclusive<u32> = 1..=840;
/// The HTTP API's integration timeout (30 s) less a second for the reply
/// and API Gateway's own hop.
pub const DEFAULT_REQUEST_BUDGET_MS: u32 = 29_000;
pub const REQUEST_BUDGET_MS_RANGE: std::ops::RangeInclusive<u32> = 100..=29_000;
pub use crate::domain::queue::{DEFAULT_DRAW_SETTLE_MS, DRAW_SETTLE_MS_RANGE};
pub use crate::domain::queue_shards::QueueShards;
pub use crate::domain::MAX_ORDER_LIFETIME_SECONDS_RANGE;
/// At most 25 s: create-event's Lambda timeout is 29 s (template.yaml).
pub const CREATE_EVENT_BUDGET_MS_RANGE: std::ops::RangeInclusive<u32> = 0..=25_000;

/// Which secrets and keys a binary requires at start-up (every one needs
/// the table). A set, named by the binaries that need each combination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Needs {
    pub confirm_secret: bool,
    /// The Stripe payment route: it checks Stripe's signatures.
    pub stripe_secret: bool,
    /// The queue's visitor routes: they sign admissions.
    pub admission_signing: bool,
    /// create-order and the JWKS route: they verify admissions.
    pub admission_verify: bool,
    /// The routes that issue or take hold tokens, and the queue's
    /// visitor routes (visitor tokens are MACs under the same keys).
    pub hold_token_keys: bool,
    /// The routes that take buyer tokens.
    pub buyer_keys: bool,
    /// The queue's routes: they commit to, derive from and disclose the
    /// draw's seed; create-event, create-order and join-waitlist: buyers'
    /// refs are keyed under it.
    pub draw_secret: bool,
}

impl Needs {
    /// The table only.
    pub const STORE: Self = Self {
        confirm_secret: false,
        stripe_secret: false,
        admission_signing: false,
        admission_verify: false,
        hold_token_keys: false,
        buyer_keys: false,
        draw_secret: false,
    };
    /// create-event: an event with a buyer limit keeps the `DRAW_SECRET`
    /// key its buyers' refs are keyed with.
    pub const EVENT_CREATION: Self = Self {
        draw_secret: true,
        ..Self::STORE
    };
    /// An order's own routes: they take hold tokens.
    pub const HOLDER: Self = Self {
        hold_token_keys: true,
        ..Self::STORE
    };
    /// create-order: it verifies admissions and buyers, issues hold
    /// tokens and keys its buyers' refs.
    pub const ORDER_OPENING: Self = Self {
        admission_verify: true,
        hold_token_keys: true,
        buyer_keys: true,
        draw_secret: true,
        ..Self::STORE
    };
    pub const CONFIRM: Self = Self {
        confirm_secret: true,
        ..Self::STORE
    };
    /// The Stripe payment route: Stripe's signatures, then confirm's work.
    pub const STRIPE_PAYMENT: Self = Self {
        stripe_secret: true,
        ..Self::STORE
    };
    /// The queue's visitor routes: they sign admissions, derive visitor
    /// tokens and verify buyers.
    pub const VISITORS: Self = Self {
        admission_signing: true,
        hold_token_keys: true,
        buyer_keys: true,
        draw_secret: true,
        ..Self::STORE
    };
    /// offer-waitlists, the waitlist's offerer: an offer's hold token is
    /// derived from its entry under the hold token keys (on an event with a
    /// buyer limit the entry keeps its buyer's keyed ref: no draw secret).
    pub const OFFERER: Self = Self {
        hold_token_keys: true,
        ..Self::STORE
    };
    /// The waitlist's buyer routes: they verify buyers, derive entry
    /// tokens and, on an event with a buyer limit, key its buyers' refs.
    pub const WAITLIST_ENTRIES: Self = Self {
        hold_token_keys: true,
        buyer_keys: true,
        draw_secret: true,
        ..Self::STORE
    };
    /// The returns' routes: the seller's hold token, and its buyer's
    /// token when the order has a buyer.
    pub const RETURNS: Self = Self {
        hold_token_keys: true,
        buyer_keys: true,
        ..Self::STORE
    };
    /// put-queue, get-queue: the draw's commitment and its disclosure.
    pub const QUEUE_READS: Self = Self {
        draw_secret: true,
        ..Self::STORE
    };
    pub const ADMISSION_VERIFY: Self = Self {
        admission_verify: true,
        ..Self::STORE
    };
}

impl Config {
    /// The keys hold, visitor and entry tokens are MACs under; unset in a
    /// function that needs them is a fault of its deployment.
    pub fn token_keys(&self) -> Result<&HoldTokenKeys, crate::error::Error> {
        self.hold_token_keys
            .as_ref()
            .ok_or_else(|| crate::error::Error::Corrupt("HOLD_TOKEN_KEYS is not configured".into()))
    }

    /// The `DRAW_SECRET` keys (draws, and the buyer refs a limited event
    /// counts under), as [`Config::token_keys`].
    pub fn draw_secrets(&self) -> Result<&DrawSecrets, crate::error::Error> {
        self.draw_secrets
            .as_ref()
            .ok_or_else(|| crate::error::Error::Corrupt("DRAW_SECRET is not configured".into()))
    }

    /// The keys buyer tokens are verified with (as [`Config::token_keys`]).
    pub fn buyer_verify_keys(&self) -> Result<&BuyerKeys, crate::error::Error> {
        self.buyer_keys.as_ref().ok_or_else(|| {
            crate::error::Error::Corrupt("BUYER_VERIFY_KEYS is not configured".into())
        })
    }
}

impl Config {
    pub fn from_env(needs: Needs) -> Result<Self, ConfigError> {
        Self::from_lookup(needs, |k| std::env::var(k).ok())
    }

    /// The same rules over any lookup, so they are testable without
    /// touching the process environment.
    pub fn from_lookup(
        needs: Needs,
        get: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let table_name = get(TABLE_NAME)
            .filter(|v| !v.trim().is_empty())
            .ok_or(ConfigError::Missing(TABLE_NAME))?;
        let hold_seconds = number(&get, &SETTING_HOLD_SECONDS)?;
        let max_seats_per_order = number(&get, &SETTING_MAX_SEATS_PER_ORDER)?;
        let expiry_guard_ms = number(&get, &SETTING_EXPIRY_GUARD_MS)?;
        let confirm_secrets = optional(
            &get,
            (CONFIRM_SECRET, needs.confirm_secret),
            ConfirmSecrets::parse,
            ConfigError::BadSecret,
        )?;
        let stripe_secrets = optional(
            &get,
            (STRIPE_WEBHOOK_SECRET, needs.stripe_secret),
            StripeSecrets::parse,
            ConfigError::BadStripeSecret,
        )?;
        let create_event_budget_ms = number(&get, &SETTING_CREATE_EVENT_BUDGET_MS)?;
        let max_order_lifetime_seconds = number(&get, &SETTING_MAX_ORDER_LIFETIME_SECONDS)?;
        let request_budget_ms = number(&get, &SETTING_REQUEST_BUDGET_MS)?;
        let admitter_run_seconds = number(&get, &SETTING_ADMITTER_RUN_SECONDS)?;
        let offerer_run_seconds = number(&get, &SETTING_OFFERER_RUN_SECONDS)?;
        let draw_settle_ms = number(&get, &SETTING_DRAW_SETTLE_MS)?;
        let queue_shards = queue_shards(&get)?;
        let admission_signing = keys(
            &get,
            (ADMISSION_SIGNING_KEYS, needs.admission_signing),
            SigningKeys::parse,
        )?;
        let admission_verify = keys(
            &get,
            (ADMISSION_VERIFY_KEYS, needs.admission_verify),
            VerifyKeys::parse,
        )?;
        let hold_token_keys = optional(
            &get,
            (HOLD_TOKEN_KEYS, needs.hold_token_keys),
            HoldTokenKeys::parse,
            ConfigError::BadHoldKeys,
        )?;
        let buyer_keys = buyer_keys(&get, needs.buyer_keys)?;
        let draw_secrets = optional(
            &get,
            (DRAW_SECRET, needs.draw_secret),
            DrawSecrets::parse,
            ConfigError::BadDrawSecret,
        )?;
        Ok(Self {
            table_name,
            hold_seconds,
            max_seats_per_order,
            expiry_guard_ms,
            confirm_secrets,
            stripe_secrets,
            create_event_budget_ms,
            max_order_lifetime_seconds,
            request_budget_ms,
            admission_signing,
            admission_verify,
            hold_token_keys,
            buyer_keys,
            draw_secrets,
            admitter_run_seconds,
            offerer_run_seconds,
            draw_settle_ms,
            queue_shards,
        })
    }
}

/// `BUYER_VERIFY_KEYS` with `BUYER_ISSUER`: both or neither.
fn buyer_keys(
    get: &impl Fn(&str) -> Option<String>,
    required: bool,
) -> Result<Option<BuyerKeys>, ConfigError> {
    let set = |name| get(name).filter(|v| !v.trim().is_empty());
    match (set(BUYER_VERIFY_KEYS), set(BUYER_ISSUER)) {
        (Some(keys), Some(issuer)) => BuyerKeys::parse(&keys, &issuer)
            .map(Some)
            .map_err(ConfigError::BadBuyerKeys),
        (None, _) if required => Err(ConfigError::Missing(BUYER_VERIFY_KEYS)),
        (_, None) if required => Err(ConfigError::Missing(BUYER_ISSUER)),
        (Some(_), None) => Err(ConfigError::Missing(BUYER_ISSUER)),
        (None, Some(_)) => Err(ConfigError::Missing(BUYER_VERIFY_KEYS)),
        (None, None) => Ok(None),
    }
}

/// A key set from `name`, read as [`optional`] reads it: required or not,
/// and never shown when invalid.
fn keys<T>(
    get: &impl Fn(&str) -> Option<String>,
    (name, required): (&'static str, bool),
    parse: fn(&str) -> Result<T, KeyError>,
) -> Result<Option<T>, ConfigError> {
    optional(get, (name, required), parse, |source| {
        ConfigError::BadKeys { name, source }
    })
}

/// A secret or key set: `None` when unset or blank (`Missing` instead
/// when `required`), else parsed, a failure turned into its error by
/// `bad` (which never carries the value).
fn optional<T, E>(
    get: &impl Fn(&str) -> Option<String>,
    (name, required): (&'static str, bool),
    parse: impl Fn(&str) -> Result<T, E>,
    bad: impl Fn(E) -> ConfigError,
) -> Result<Option<T>, ConfigError> {
    match get(name).filter(|v| !v.trim().is_empty()) {
        Some(raw) => parse(&raw).map(Some).map_err(bad),
        None if required => Err(ConfigError::Missing(name)),
        None => Ok(None),
    }
}

/// A whole-number setting: its variable, its default when unset, and the
/// values it may take.
struct Number(&'static str, u32, std::ops::RangeInclusive<u32>);

/// Every whole-number setting, for the documentation's configuration
/// tables (testkit's `docs_config` holds API.md's and OPERATIONS.md's rows to
/// each default and range).
const NUMBER_SETTINGS: [&Number; 9] = [
    &SETTING_HOLD_SECONDS,
    &SETTING_MAX_SEATS_PER_ORDER,
    &SETTING_EXPIRY_GUARD_MS,
    &SETTING_CREATE_EVENT_BUDGET_MS,
    &SETTING_MAX_ORDER_LIFETIME_SECONDS,
    &SETTING_REQUEST_BUDGET_MS,
    &SETTING_ADMITTER_RUN_SECONDS,
    &SETTING_OFFERER_RUN_SECONDS,
    &SETTING_DRAW_SETTLE_MS,
];

/// Each whole-number setting as (variable, default, least, most).
pub fn number_settings() -> impl Iterator<Item = (&'static str, u32, u32, u32)> {
    NUMBER_SETTINGS
        .iter()
        .map(|Number(name, default, range)| (*name, *default, *range.start(), *range.end()))
}

/// The table every function works on.
pub const TABLE_NAME: &str = "TABLE_NAME";
/// The public JWK Set admissions are checked against.
pub const ADMISSION_VERIFY_KEYS: &str = "ADMISSION_VERIFY_KEYS";
/// The index shards a queue generation put from now on spreads over.
pub const QUEUE_SHARDS: &str = "QUEUE_SHARDS";
/// The variable naming the bus events go out on (publish-events).
pub const EVENT_BUS_NAME: &str = "EVENT_BUS_NAME";
/// The variable that sets the log level (`crate::telemetry`).
pub const RUST_LOG: &str = "RUST_LOG";
/// Set to `1`, a function may start with a development secret
/// (`crate::dev_secrets`).
pub const ALLOW_DEV_SECRETS: &str = "SEATCLAIM_ALLOW_DEV_SECRETS";

/// Every variable a function reads for its configuration: what
/// [`Config::from_lookup`] asks for (held to it by a test here), the
/// publisher's bus and the log level. The documentation's configuration
/// tables must name each (testkit's `docs_config`).
pub const VARIABLES: [&str; 22] = [
    TABLE_NAME,
    SETTING_HOLD_SECONDS.0,
    SETTING_MAX_SEATS_PER_ORDER.0,
    SETTING_EXPIRY_GUARD_MS.0,
    SETTING_MAX_ORDER_LIFETIME_SECONDS.0,
    SETTING_CREATE_EVENT_BUDGET_MS.0,
    SETTING_REQUEST_BUDGET_MS.0,
    SETTING_ADMITTER_RUN_SECONDS.0,
    SETTING_OFFERER_RUN_SECONDS.0,
    SETTING_DRAW_SETTLE_MS.0,
    QUEUE_SHARDS,
    CONFIRM_SECRET,
    STRIPE_WEBHOOK_SECRET,
    ADMISSION_SIGNING_KEYS,
    ADMISSION_VERIFY_KEYS,
    HOLD_TOKEN_KEYS,
    DRAW_SECRET,
    BUYER_VERIFY_KEYS,
    BUYER_ISSUER,
    EVENT_BUS_NAME,
    RUST_LOG,
    ALLOW_DEV_SECRETS,
];

const SETTING_HOLD_SECONDS: Number =
    Number("HOLD_SECONDS", DEFAULT_HOLD_SECONDS, HOLD_SECONDS_RANGE);
const SETTING_MAX_SEATS_PER_ORDER: Number = Number(
    "MAX_SEATS_PER_ORDER",
    DEFAULT_MAX_SEATS_PER_ORDER,
    SEATS_PER_ORDER_RANGE,
);
const SETTING_EXPIRY_GUARD_MS: Number = Number(
    "EXPIRY_GUARD_MS",
    DEFAULT_EXPIRY_GUARD_MS,
    EXPIRY_GUARD_MS_RANGE,
);
const SETTING_CREATE_EVENT_BUDGET_MS: Number = Number(
    "CREATE_EVENT_BUDGET_MS",
    DEFAULT_CREATE_EVENT_BUDGET_MS,
    CREATE_EVENT_BUDGET_MS_RANGE,
);
const SETTING_MAX_ORDER_LIFETIME_SECONDS: Number = Number(
    "MAX_ORDER_LIFETIME_SECONDS",
    DEFAULT_MAX_ORDER_LIFETIME_SECONDS,
    MAX_ORDER_LIFETIME_SECONDS_RANGE,
);
const SETTING_REQUEST_BUDGET_MS: Number = Number(
    "REQUEST_BUDGET_MS",
    DEFAULT_REQUEST_BUDGET_MS,
    REQUEST_BUDGET_MS_RANGE,
);
const SETTING_ADMITTER_RUN_SECONDS: Number = Number(
    "ADMITTER_RUN_SECONDS",
    DEFAULT_ADMITTER_RUN_SECONDS,
    ADMITTER_RUN_SECONDS_RANGE,
);
const SETTING_OFFERER_RUN_SECONDS: Number = Number(
    "OFFERER_RUN_SECONDS",
    DEFAULT_OFFERER_RUN_SECONDS,
    ADMITTER_RUN_SECONDS_RANGE,
);
const SETTING_DRAW_SETTLE_MS: Number = Number(
    "DRAW_SETTLE_MS",
    DEFAULT_DRAW_SETTLE_MS,
    DRAW_SETTLE_MS_RANGE,
);

/// `QUEUE_SHARDS`: a power of two up to 128 (a hash byte spreads evenly
/// over it), [`QueueShards::DEFAULT`] when unset.
fn queue_shards(get: &impl Fn(&str) -> Option<String>) -> Result<QueueShards, ConfigError> {
    const NAME: &str = QUEUE_SHARDS;
    let Some(raw) = get(NAME) else {
        return Ok(QueueShards::DEFAULT);
    };
    raw.trim()
        .parse()
        .ok()
        .and_then(QueueShards::new)
        .ok_or_else(|| ConfigError::Invalid {
            name: NAME,
            expected: format!("a power of two from 1 to {}", QueueShards::MOST),
            got: raw,
        })
}

/// A whole-number setting's value: its default when unset, else its
/// text parsed within its range.
fn number(
    get: &impl Fn(&str) -> Option<String>,
    Number(name, default, range): &Number,
) -> Result<u32, ConfigError> {
    let (name, default) = (*name, *default);
    let Some(raw) = get(name) else {
        return Ok(default);
    };
    raw.trim()
        .parse::<u32>()
        .ok()
        .filter(|n| range.contains(n))
        .ok_or_else(|| ConfigError::Invalid {
            name,
            expected: format!("a whole number from {} to {}", range.start(), range.end()),
            got: raw,
        })
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
