//! Least privilege, proven from every path: while `SEATCLAIM_IAM_RECORD`
//! names a folder (`make test` sets it), every DynamoDB and EventBridge
//! request a handler sends is recorded there under the function whose
//! handler sent it, with the IAM action it needs and the key prefix it
//! touches. The test kit's IAM proof (`testkit::iam`) then holds
//! template.yaml's policies against the whole suite's record.
//!
//! Attribution: the router gives each handler its function's own instance
//! of the app ([`attributed`]), whose client carries a [`CallRecorder`] for
//! that function; the tests that call the sweep, the projection or the
//! publisher directly do the same. Requests sent outside a handler (table setup, the tests' own raw
//! reads) go through the untagged client and are not recorded.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

use aws_sdk_dynamodb::config::interceptors::BeforeTransmitInterceptorContextRef;
use aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents};
use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::orchestrator::Metadata;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The folder the record is written to; unset, nothing is recorded.
pub const RECORD_ENV: &str = "SEATCLAIM_IAM_RECORD";

/// What a policy statement's `Resource` names, as template.yaml writes it.
pub const TABLE: &str = "!GetAtt SeatsTable.Arn";
pub const INDEX: &str = "!Sub ${SeatsTable.Arn}/index/PendingByExpiry";
/// The queue's index of waiting visitors.
pub const QUEUE_INDEX: &str = "!Sub ${SeatsTable.Arn}/index/QueueByJoin";

/// The policy resource of a query of index `name`, as template.yaml names it.
fn index_resource(name: &str) -> String {
    format!("!Sub ${{SeatsTable.Arn}}/index/{name}")
}
pub const EVENT_BUS: &str = "!GetAtt EventBus.Arn";

/// One request's need: an IAM action on a resource, and the partition
/// key's prefix (`ORDER#`, up to and with its first `#`) where IAM's
/// `dynamodb:LeadingKeys` can restrict it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Call {
    pub function: String,
    pub action: String,
    pub resource: String,
    pub key_prefix: Option<String>,
    /// A write's top-level attribute names as IAM's `dynamodb:Attributes`
    /// may see them, or more (a `Put`'s item; an `Update`'s key, and every
    /// name its update and condition expressions use): held against a
    /// statement's attribute list, a superset errs on the strict side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attributes: Option<BTreeSet<String>>,
}

/// The process's record: what it has seen (written to the folder once each).
struct Record {
    seen: BTreeSet<Call>,
    file: Option<std::fs::File>,
}

static RECORD: OnceLock<Mutex<Record>> = OnceLock::new();

/// Set by [`record_in_process`]: record even without `SEATCLAIM_IAM_RECORD`.
static IN_PROCESS: AtomicBool = AtomicBool::new(false);

/// The record, while requests are being recorded.
fn record() -> Option<&'static Mutex<Record>> {
    static BY_ENV: OnceLock<bool> = OnceLock::new();
    let on = IN_PROCESS.load(Ordering::Relaxed)
        || *BY_ENV.get_or_init(|| std::env::var_os(RECORD_ENV).is_some());
    on.then(|| RECORD.get_or_init(new_record))
}

/// A record kept in memory, and in a file of its own in the folder
/// `SEATCLAIM_IAM_RECORD` names, if it names one.
fn new_record() -> Mutex<Record> {
    let file = std::env::var_os(RECORD_ENV).map(PathBuf::from).map(|dir| {
        std::fs::create_dir_all(&dir)
            .unwrap_or_else(|e| panic!("{RECORD_ENV}={}: {e}", dir.display()));
        let path = dir.join(format!(
            "{}-{}.jsonl",
            std::process::id(),
            uuid::Uuid::new_v4().simple()
        ));
        std::fs::File::create(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    });
    Mutex::new(Record {
        seen: BTreeSet::new(),
        file,
    })
}

/// Records this process's handler requests from now on, in memory (and in
/// the folder, if set), whether or not `SEATCLAIM_IAM_RECORD` is set: for
/// a test that checks its own calls. Function instances made before it
/// ([`attributed`]) are not recorded, so call it before making the app.
pub fn record_in_process() {
    IN_PROCESS.store(true, Ordering::Relaxed);
}

/// What this process recorded so far.
pub fn recorded() -> BTreeSet<Call> {
    record()
        .map(|r| r.lock().unwrap_or_else(|p| p.into_inner()).seen.clone())
        .unwrap_or_default()
}

fn remember(calls: Vec<Call>) {
    let Some(record) = record() else { return };
    // A poisoned record only means a test thread panicked mid-insert.
    let mut record = record.lock().unwrap_or_else(|p| p.into_inner());
    for call in calls {
        if record.seen.insert(call.clone()) {
            if let Some(file) = record.file.as_mut() {
                let line = serde_json::to_string(&call).unwrap_or_default();
                writeln!(file, "{line}").unwrap_or_else(|e| panic!("writing the IAM record: {e}"));
            }
        }
    }
}

/// Whether requests are being recorded.
pub fn recording() -> bool {
    record().is_some()
}

/// One function's instance of an app: its store (its client recorded as
/// the function's while requests are being recorded) and its memory.
type Instance = (shared::Store, shared::memory::Memory);

/// Each app's function instances, by the app's memory and the function,
/// each with the app's memory (kept alive so its id is not reused).
type Instances = BTreeMap<(usize, &'static str), (shared::memory::Memory, Instance)>;

/// The instance of `function` that serves `app`'s requests: the same table
/// and settings, a memory of its own (as its own Lambda instance has, so it
/// reads what a cold instance of it would, and keeps its own crowd gate),
/// and, while requests are being recorded, a client whose requests are
/// recorded as `function`'s. Made on first use, then kept for the life of
/// `app`'s memory.
pub fn attributed(app: &shared::App, function: &'static str) -> shared::App {
    static INSTANCES: OnceLock<Mutex<Instances>> = OnceLock::new();
    let mut instances = INSTANCES
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let (_, (store, memory)) = instances
        .entry((app.memory.id(), function))
        .or_insert_with(|| {
            let client = app.store.client();
            let client = if recording() {
                aws_sdk_dynamodb::Client::from_conf(
                    client
                        .config()
                        .to_builder()
                        .interceptor(CallRecorder { function })
                        .build(),
                )
            } else {
                client.clone()
            };
            (
                app.memory.clone(),
                (app.store.with_client(client), app.memory.fresh()),
            )
        });
    shared::App {
        store: store.clone(),
        config: app.config.clone(),
        memory: memory.clone(),
    }
}

/// The interceptor that records a function's requests (DynamoDB's and
/// EventBridge's: both are JSON over HTTP, read from the request body).
#[derive(Debug, Clone, Copy)]
pub struct CallRecorder {
    pub function: &'static str,
}

impl Intercept for CallRecorder {
    fn name(&self) -> &'static str {
        "CallRecorder"
    }

    // After serialisation, before any attempt: the request as the handler
    // made it (the fault injector rewrites an attempt it fails into a
    // harmless one just before transmitting it).
    fn read_after_serialization(
        &self,
        context: &BeforeTransmitInterceptorContextRef<'_>,
        _components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let Some(metadata) = cfg.load::<Metadata>() else {
            return Ok(());
        };
        let body: Value =
            serde_json::from_slice(context.request().body().bytes().unwrap_or_default())
                .unwrap_or(Value::Null);
        remember(calls_of(
            self.function,
            metadata.service(),
            metadata.name(),
            &body,
        ));
        Ok(())
    }
}

/// The IAM needs of one request body: per item for batches and
/// transactions (IAM authorises a transaction's `Update` item as
/// `dynamodb:UpdateItem`, and so on), with each item's partition key.
pub fn calls_of(function: &str, service: &str, operation: &str, body: &Value) -> Vec<Call> {
    let call = |action: String, resource: &str, key: Option<&Value>| {
        one_call(function, action, resource, key)
    };
    let write = |action: &str, request: &Value| write_call(function, action, request);
    if !service.to_ascii_lowercase().contains("dynamodb") {
        return vec![Call {
            function: function.to_owned(),
            action: format!("events:{operation}"),
            resource: EVENT_BUS.into(),
            key_prefix: None,
            attributes: None,
        }];
    }
    match operation {
        "TransactWriteItems" | "TransactGetItems" => items(&body["TransactItems"])
            .map(|item| {
                let (kind, inner) = item
                    .as_object()
                    .and_then(|o| o.iter().next())
                    .map_or(("?", &Value::Null), |(k, v)| (k.as_str(), v));
                match kind {
                    "Put" | "Update" => write(&format!("{kind}Item"), inner),
                    _ => call(format!("dynamodb:{kind}Item"), TABLE, Some(&inner["Key"])),
                }
            })
            .collect(),
        "BatchGetItem" => object_values(&body["RequestItems"])
            .flat_map(|table| {
                items(&table["Keys"])
                    .map(|key| call("dynamodb:BatchGetItem".into(), TABLE, Some(key)))
                    .collect::<Vec<_>>()
            })
            .collect(),
        "Query" if body["IndexName"].is_string() => {
            let index = index_resource(body["IndexName"].as_str().unwrap_or_default());
            vec![call("dynamodb:Query".into(), &index, None)]
        }
        "Query" => {
            let key = query_partition_value(body).map(|pk| serde_json::json!({"PK": {"S": pk}}));
            vec![call("dynamodb:Query".into(), TABLE, key.as_ref())]
        }
        "PutItem" | "UpdateItem" => vec![write(operation, body)],
        _ if body["Key"].is_object() => vec![call(
            format!("dynamodb:{operation}"),
            TABLE,
            Some(&body["Key"]),
        )],
        _ => vec![call(format!("dynamodb:{operation}"), TABLE, None)],
    }
}

/// One call of `function`: `action` on `resource`, under the key prefix
/// of `key`'s partition key, if any.
fn one_call(function: &str, action: String, resource: &str, key: Option<&Value>) -> Call {
    Call {
        function: function.to_owned(),
        action,
        resource: resource.to_owned(),
        key_prefix: key.and_then(|k| k["PK"]["S"].as_str()).map(key_prefix),
        attributes: None,
    }
}

/// A write, with the attributes it names.
fn write_call(function: &str, action: &str, request: &Value) -> Call {
    let key = match action {
        "PutItem" => &request["Item"],
        _ => &request["Key"],
    };
    Call {
        attributes: Some(written_attributes(request)),
        ..one_call(function, format!("dynamodb:{action}"), TABLE, Some(key))
    }
}

fn items(v: &Value) -> impl Iterator<Item = &Value> {
    v.as_array().into_iter().flatten()
}

fn object_values(v: &Value) -> impl Iterator<Item = &Value> {
    v.as_object().into_iter().flat_map(|o| o.values())
}

/// Words of an expression that are not attribute names.
const EXPRESSION_WORDS: &[&str] = &[
    "SET",
    "REMOVE",
    "ADD",
    "DELETE",
    "AND",
    "OR",
    "NOT",
    "BETWEEN",
    "IN",
    "attribute_exists",
    "attribute_not_exists",
    "attribute_type",
    "begins_with",
    "contains",
    "size",
    "if_not_exists",
    "list_append",
];

/// The attribute names a `Put` (its item's) or an `Update` (its key's, and
/// every name its expressions use: bound to a `#` placeholder or written
/// bare) request names.
fn written_attributes(request: &Value) -> BTreeSet<String> {
    let mut names: BTreeSet<String> = request["Item"]
        .as_object()
        .into_iter()
        .chain(request["Key"].as_object())
        .flat_map(|o| o.keys().cloned())
        .collect();
    names.extend(
        request["ExpressionAttributeNames"]
            .as_object()
            .into_iter()
            .flat_map(|o| o.values().filter_map(|v| v.as_str().map(str::to_owned))),
    );
    for field in ["UpdateExpression", "ConditionExpression"] {
        let text = request[field].as_str().unwrap_or_default();
        // Each word with the character before it: `#name` and `:value`
        // are placeholders, numbers and the grammar's words are not names.
        let mut words: Vec<(char, String)> = Vec::new();
        let mut previous = ' ';
        for c in text.chars() {
            if c.is_ascii_alphanumeric() || c == '_' {
                match words.last_mut() {
                    Some((_, word)) if previous.is_ascii_alphanumeric() || previous == '_' => {
                        word.push(c)
                    }
                    _ => words.push((previous, c.to_string())),
                }
            }
            previous = c;
        }
        names.extend(
            words
                .into_iter()
                .filter(|(before, word)| {
                    !matches!(before, '#' | ':')
                        && !word.starts_with(|c: char| c.is_ascii_digit())
                        && !EXPRESSION_WORDS.contains(&word.as_str())
                })
                .map(|(_, word)| word),
        );
    }
    names
}

/// `ORDER#` of `ORDER#abc`: what IAM's `LeadingKeys` patterns match on
/// (and how the bench tells where units go).
pub fn key_prefix(pk: &str) -> String {
    pk.find('#').map_or(pk, |i| &pk[..=i]).to_owned()
}

/// The partition key value of a table query: the first clause of its key
/// condition, `PK = :v` (or a name bound to `PK`).
fn query_partition_value(body: &Value) -> Option<String> {
    let condition = body["KeyConditionExpression"].as_str()?;
    let first = condition.split(" AND ").next()?;
    let (name, placeholder) = first.split_once('=')?;
    let name = name.trim();
    let attribute = if name.starts_with('#') {
        body["ExpressionAttributeNames"][name].as_str()?
    } else {
        name
    };
    (attribute == "PK").then_some(())?;
    body["ExpressionAttributeValues"][placeholder.trim()]["S"]
        .as_str()
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn requests_are_read_per_item_with_their_key_prefix() {
        let txn = json!({"TransactItems": [
            {"Update": {"Key": {"PK": {"S": "ORDER#o1"}, "SK": {"S": "ORDER"}}}},
            {"Put": {"Item": {"PK": {"S": "PAYMENT#p"}, "SK": {"S": "PAYMENT"}}}},
            {"ConditionCheck": {"Key": {"PK": {"S": "SEATS#e#A-1#0"}}}}
        ]});
        let got: Vec<(String, Option<String>)> =
            calls_of("confirm", "DynamoDB", "TransactWriteItems", &txn)
                .into_iter()
                .map(|c| (c.action, c.key_prefix))
                .collect();
        assert_eq!(
            got,
            [
                ("dynamodb:UpdateItem".to_owned(), Some("ORDER#".to_owned())),
                ("dynamodb:PutItem".into(), Some("PAYMENT#".into())),
                ("dynamodb:ConditionCheckItem".into(), Some("SEATS#".into()))
            ]
        );
        let query = json!({"KeyConditionExpression": "#pk = :pk AND SK > :s", "ExpressionAttributeNames": {"#pk": "PK"}, "ExpressionAttributeValues": {":pk": {"S": "MAP#e#A-1#0"}}});
        assert_eq!(
            calls_of("f", "DynamoDB", "Query", &query)[0]
                .key_prefix
                .as_deref(),
            Some("MAP#")
        );
        let index =
            json!({"IndexName": "PendingByExpiry", "KeyConditionExpression": "#shard = :shard"});
        assert_eq!(
            calls_of("f", "DynamoDB", "Query", &index)[0].resource,
            INDEX
        );
        let queue =
            json!({"IndexName": "QueueByJoin", "KeyConditionExpression": "#shard = :shard"});
        assert_eq!(
            calls_of("f", "DynamoDB", "Query", &queue)[0].resource,
            QUEUE_INDEX
        );
        let update = json!({
            "Key": {"PK": {"S": "ORDER#o"}, "SK": {"S": "ORDER"}},
            "UpdateExpression": "SET #a0 = :a0, #a1 = :a1 REMOVE seats",
            "ConditionExpression": "attribute_not_exists(PK) AND #v.#n < :v",
            "ExpressionAttributeNames": {"#a0": "status", "#a1": "ttl", "#v": "version", "#n": "n"}
        });
        let written = calls_of("f", "DynamoDB", "UpdateItem", &update).remove(0);
        assert_eq!(
            written.attributes.unwrap().into_iter().collect::<Vec<_>>(),
            ["PK", "SK", "n", "seats", "status", "ttl", "version"]
        );
        let put = json!({"Item": {"PK": {"S": "VISITOR#v"}, "SK": {"S": "VISITOR"}, "x": {"N": "1"}}, "ConditionExpression": "attribute_not_exists(PK)"});
        assert_eq!(
            calls_of("f", "DynamoDB", "PutItem", &put)[0]
                .attributes
                .as_ref()
                .map(BTreeSet::len),
            Some(3)
        );
        let batch = json!({"RequestItems": {"t": {"Keys": [{"PK": {"S": "GA#e#F#1"}}, {"PK": {"S": "GA#e#F#2"}}]}}});
        assert_eq!(calls_of("f", "DynamoDB", "BatchGetItem", &batch).len(), 2);
        assert_eq!(
            calls_of("p", "EventBridge", "PutEvents", &json!({}))[0].action,
            "events:PutEvents"
        );
    }
}
