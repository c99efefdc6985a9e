//! Follows a DynamoDB Local table's stream the way Lambda's event source
//! mapping follows the real one: every shard from its oldest record, in
//! order, in batches of the same JSON shape Lambda delivers
//! (`{"Records": [{"eventID", "eventName", "dynamodb": {"Keys", "OldImage",
//! "NewImage", "SequenceNumber", "ApproximateCreationDateTime"}}]}`),
//! handed to the same handler code.

use std::collections::HashMap;

use aws_sdk_dynamodbstreams::types::{AttributeValue, ShardIteratorType};
use serde_json::{json, Map, Value};
use tokio::sync::Mutex;

/// Records per GetRecords call (the API's maximum).
const RECORDS_PER_CALL: i32 = 1000;

/// One table's stream and how far each shard has been read.
pub struct StreamFollower {
    client: aws_sdk_dynamodbstreams::Client,
    stream_arn: String,
    /// Shard id -> the iterator to continue from (`None`: the shard is closed
    /// and fully read).
    shards: Mutex<HashMap<String, Option<String>>>,
}

/// A DynamoDB Streams client for a local endpoint (dummy credentials).
pub fn local_streams_client(endpoint: &str) -> aws_sdk_dynamodbstreams::Client {
    let region = std::env::var("AWS_REGION").unwrap_or_else(|_| "us-east-1".to_owned());
    let config = aws_sdk_dynamodbstreams::Config::builder()
        .behavior_version(aws_sdk_dynamodbstreams::config::BehaviorVersion::latest())
        .region(aws_sdk_dynamodbstreams::config::Region::new(region))
        .credentials_provider(aws_sdk_dynamodbstreams::config::Credentials::new(
            "local",
            "local",
            None,
            None,
            "seatclaim-local",
        ))
        .endpoint_url(endpoint)
        .http_client(shared::store::http_client())
        .build();
    aws_sdk_dynamodbstreams::Client::from_conf(config)
}

impl StreamFollower {
    /// Follows `table`'s stream (the table must have one) from its start.
    pub async fn attach(
        endpoint: &str,
        dynamodb: &aws_sdk_dynamodb::Client,
        table: &str,
    ) -> Result<Self, String> {
        let described = dynamodb
            .describe_table()
            .table_name(table)
            .send()
            .await
            .map_err(|e| shared::error::chain(&e))?;
        let stream_arn = described
            .table
            .and_then(|t| t.latest_stream_arn)
            .ok_or_else(|| {
                format!("table {table} has no stream (template.yaml StreamSpecification)")
            })?;
        Ok(Self {
            client: local_streams_client(endpoint),
            stream_arn,
            shards: Mutex::new(HashMap::new()),
        })
    }

    /// Reads every record written so far, handing each batch to `apply`.
    /// Returns how many records were read.
    pub async fn catch_up<F, Fut>(&self, mut apply: F) -> Result<usize, String>
    where
        F: FnMut(Value) -> Fut,
        Fut: std::future::Future<Output = ()>,
    {
        let mut shards = self.shards.lock().await;
        let described = self
            .client
            .describe_stream()
            .stream_arn(&self.stream_arn)
            .send()
            .await
            .map_err(|e| shared::error::chain(&e))?;
        for shard in described
            .stream_description
            .map(|d| d.shards.unwrap_or_default())
            .unwrap_or_default()
        {
            let Some(id) = shard.shard_id else { continue };
            if shards.contains_key(&id) {
                continue;
            }
            let iterator = self
                .client
                .get_shard_iterator()
                .stream_arn(&self.stream_arn)
                .shard_id(&id)
                .shard_iterator_type(ShardIteratorType::TrimHorizon)
                .send()
                .await
                .map_err(|e| shared::error::chain(&e))?
                .shard_iterator;
            shards.insert(id, iterator);
        }
        let mut read = 0;
        // Shards in id order: DynamoDB Local's ids sort by creation, so a
        // parent is read before its children.
        let mut ids: Vec<String> = shards.keys().cloned().collect();
        ids.sort();
        for id in ids {
            while let Some(Some(iterator)) = shards.get(&id).cloned() {
                let out = self
                    .client
                    .get_records()
                    .shard_iterator(iterator)
                    .limit(RECORDS_PER_CALL)
                    .send()
                    .await
                    .map_err(|e| shared::error::chain(&e))?;
                let records = out.records.unwrap_or_default();
                shards.insert(id.clone(), out.next_shard_iterator);
                if records.is_empty() {
                    break;
                }
                read += records.len();
                let batch: Vec<Value> = records.iter().map(record_json).collect();
                apply(json!({ "Records": batch })).await;
            }
        }
        Ok(read)
    }
}

/// A stream record as Lambda's DynamoDB event carries it.
fn record_json(record: &aws_sdk_dynamodbstreams::types::Record) -> Value {
    let data = record.dynamodb.as_ref();
    let image = |m: Option<&HashMap<String, AttributeValue>>| {
        m.map_or(Value::Null, |m| Value::Object(wire_item(m)))
    };
    json!({
        "eventID": record.event_id,
        "eventName": record.event_name.as_ref().map(|n| n.as_str()),
        "eventSource": "aws:dynamodb",
        "dynamodb": {
            "ApproximateCreationDateTime": data.and_then(|d| d.approximate_creation_date_time).map(|t| t.as_secs_f64()),
            "Keys": image(data.and_then(|d| d.keys.as_ref())),
            "OldImage": image(data.and_then(|d| d.old_image.as_ref())),
            "NewImage": image(data.and_then(|d| d.new_image.as_ref())),
            "SequenceNumber": data.and_then(|d| d.sequence_number.clone()),
        },
    })
}

fn wire_item(item: &HashMap<String, AttributeValue>) -> Map<String, Value> {
    item.iter()
        .map(|(k, v)| (k.clone(), wire_value(v)))
        .collect()
}

fn wire_value(v: &AttributeValue) -> Value {
    use base64::Engine;
    let b64 =
        |b: &aws_smithy_types::Blob| base64::engine::general_purpose::STANDARD.encode(b.as_ref());
    match v {
        AttributeValue::S(s) => json!({"S": s}),
        AttributeValue::N(n) => json!({"N": n}),
        AttributeValue::B(b) => json!({"B": b64(b)}),
        AttributeValue::Bool(b) => json!({"BOOL": b}),
        AttributeValue::Null(n) => json!({"NULL": n}),
        AttributeValue::L(l) => json!({"L": l.iter().map(wire_value).collect::<Vec<_>>()}),
        AttributeValue::M(m) => json!({"M": wire_item(m)}),
        AttributeValue::Ss(v) => json!({"SS": v}),
        AttributeValue::Ns(v) => json!({"NS": v}),
        AttributeValue::Bs(v) => json!({"BS": v.iter().map(b64).collect::<Vec<_>>()}),
        // A type newer than this code: nothing our handlers read.
        _ => json!({"NULL": true}),
    }
}

/// Catches the seat map's projection up with everything written to `app`'s
/// table so far (tests and the bench: deterministic, no waiting).
pub async fn project_now(app: &shared::App, endpoint: &str) -> Result<usize, String> {
    let follower =
        StreamFollower::attach(endpoint, app.store.client(), app.store.table_name()).await?;
    project_new(&follower, app).await
}

/// Projects what `follower` has not read yet, as project-seat-map would:
/// a test that counts the projector's writes follows one stream, where
/// [`project_now`] reads it again from its start.
pub async fn project_new(follower: &StreamFollower, app: &shared::App) -> Result<usize, String> {
    let projector = &crate::iam::attributed(app, "project-seat-map");
    follower
        .catch_up(|batch| async move {
            shared::handlers::project_records(projector, &batch).await;
        })
        .await
}
