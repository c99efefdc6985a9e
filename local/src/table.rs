//! Creates the table in DynamoDB Local from template.yaml's `SeatsTable`:
//! one definition of keys and indexes, for AWS and for local runs alike.

use std::path::Path;

use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, GlobalSecondaryIndex, KeySchemaElement, KeyType, Projection,
    ProjectionType, ScalarAttributeType, TimeToLiveSpecification,
};
use aws_sdk_dynamodb::Client;
use serde::Deserialize;

/// The logical id of the table in template.yaml.
pub const TABLE_RESOURCE: &str = "SeatsTable";

#[derive(Debug, thiserror::Error)]
pub enum TableError {
    #[error("reading {0}: {1}")]
    Read(String, #[source] std::io::Error),
    #[error("template.yaml is not valid YAML: {0}")]
    Yaml(#[from] serde_yaml_ng::Error),
    #[error(
        "template.yaml: Resources.{TABLE_RESOURCE}.Properties is missing or not as expected: {0}"
    )]
    Shape(String),
    #[error("creating the table: {0}")]
    Create(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// The parts of `AWS::DynamoDB::Table` Properties that define the table.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct TableSpec {
    pub billing_mode: String,
    pub attribute_definitions: Vec<AttributeSpec>,
    pub key_schema: Vec<KeySpec>,
    #[serde(default)]
    pub global_secondary_indexes: Vec<IndexSpec>,
    #[serde(default)]
    pub time_to_live_specification: Option<TtlSpec>,
    #[serde(default)]
    pub stream_specification: Option<StreamSpec>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct StreamSpec {
    pub stream_view_type: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct AttributeSpec {
    pub attribute_name: String,
    pub attribute_type: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct KeySpec {
    pub attribute_name: String,
    pub key_type: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct IndexSpec {
    pub index_name: String,
    pub key_schema: Vec<KeySpec>,
    pub projection: ProjectionSpec,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ProjectionSpec {
    pub projection_type: String,
    #[serde(default)]
    pub non_key_attributes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct TtlSpec {
    pub attribute_name: String,
    pub enabled: bool,
}

impl TableSpec {
    /// Reads `Resources.SeatsTable.Properties` from a SAM template.
    pub fn from_template(path: &Path) -> Result<Self, TableError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| TableError::Read(path.display().to_string(), e))?;
        Self::from_template_text(&text)
    }

    pub fn from_template_text(text: &str) -> Result<Self, TableError> {
        let doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(text)?;
        let props = doc
            .get("Resources")
            .and_then(|r| r.get(TABLE_RESOURCE))
            .and_then(|t| t.get("Properties"))
            .ok_or_else(|| TableError::Shape("not found".into()))?;
        serde_yaml_ng::from_value(props.clone()).map_err(|e| TableError::Shape(e.to_string()))
    }

    /// The same table without its stream. DynamoDB Local slows every table
    /// down, by three to four times, once a stream-enabled table holds some
    /// thousands of records (measured: conditional puts on a second table
    /// fell from ~500/s to ~130/s after 12,000 records on the first), so the
    /// tests and bench scenarios that do not read the stream go without.
    pub fn without_stream(mut self) -> Self {
        self.stream_specification = None;
        self
    }

    /// The repository's own template.yaml.
    pub fn from_repo() -> Result<Self, TableError> {
        Self::from_template(&crate::paths::repo_root().join("template.yaml"))
    }

    /// Creates the table (named `name`) and its TTL setting.
    pub async fn create(&self, client: &Client, name: &str) -> Result<(), TableError> {
        let err = |e: Box<dyn std::error::Error + Send + Sync>| TableError::Create(e);
        let billing = BillingMode::from(self.billing_mode.as_str());
        let mut req = client.create_table().table_name(name).billing_mode(billing);
        for a in &self.attribute_definitions {
            req = req.attribute_definitions(
                AttributeDefinition::builder()
                    .attribute_name(&a.attribute_name)
                    .attribute_type(ScalarAttributeType::from(a.attribute_type.as_str()))
                    .build()
                    .map_err(|e| err(e.into()))?,
            );
        }
        for k in &self.key_schema {
            req = req.key_schema(key(k).map_err(|e| err(e.into()))?);
        }
        for gsi in &self.global_secondary_indexes {
            req = req.global_secondary_indexes(gsi.index().map_err(|e| err(e.into()))?);
        }
        if let Some(stream) = self.stream().map_err(err)? {
            req = req.stream_specification(stream);
        }
        req.send().await.map_err(|e| err(e.into()))?;
        if let Some(ttl) = &self.time_to_live_specification {
            client
                .update_time_to_live()
                .table_name(name)
                .time_to_live_specification(
                    TimeToLiveSpecification::builder()
                        .attribute_name(&ttl.attribute_name)
                        .enabled(ttl.enabled)
                        .build()
                        .map_err(|e| err(e.into()))?,
                )
                .send()
                .await
                .map_err(|e| err(e.into()))?;
        }
        Ok(())
    }

    /// The template's stream, as the SDK names it (`None`: no stream).
    fn stream(
        &self,
    ) -> Result<
        Option<aws_sdk_dynamodb::types::StreamSpecification>,
        Box<dyn std::error::Error + Send + Sync>,
    > {
        let Some(stream) = &self.stream_specification else {
            return Ok(None);
        };
        let view = aws_sdk_dynamodb::types::StreamViewType::from(stream.stream_view_type.as_str());
        let spec = aws_sdk_dynamodb::types::StreamSpecification::builder()
            .stream_enabled(true)
            .stream_view_type(view)
            .build()?;
        Ok(Some(spec))
    }

    /// Turns the template's stream on for table `name`, made without it
    /// ([`Self::without_stream`]): a scenario seeds a large table first
    /// (records it would never read slow DynamoDB Local down), then
    /// follows what comes after.
    pub async fn enable_stream(&self, client: &Client, name: &str) -> Result<(), TableError> {
        let err = |e: Box<dyn std::error::Error + Send + Sync>| TableError::Create(e);
        let stream = self
            .stream()
            .map_err(err)?
            .ok_or_else(|| TableError::Shape("template.yaml's table has no stream".into()))?;
        let update = client
            .update_table()
            .table_name(name)
            .stream_specification(stream);
        update.send().await.map_err(|e| err(e.into()))?;
        Ok(())
    }

    /// Creates the table unless a table of that name exists already.
    pub async fn ensure(&self, client: &Client, name: &str) -> Result<bool, TableError> {
        let existing = client
            .list_tables()
            .send()
            .await
            .map_err(|e| TableError::Create(e.into()))?;
        if existing.table_names().iter().any(|t| t == name) {
            return Ok(false);
        }
        self.create(client, name).await?;
        Ok(true)
    }
}

impl IndexSpec {
    /// The index as CreateTable takes it.
    fn index(&self) -> Result<GlobalSecondaryIndex, aws_sdk_dynamodb::error::BuildError> {
        let projection = Projection::builder()
            .projection_type(ProjectionType::from(
                self.projection.projection_type.as_str(),
            ))
            .set_non_key_attributes(
                (!self.projection.non_key_attributes.is_empty())
                    .then(|| self.projection.non_key_attributes.clone()),
            )
            .build();
        let mut index = GlobalSecondaryIndex::builder()
            .index_name(&self.index_name)
            .projection(projection);
        for k in &self.key_schema {
            index = index.key_schema(key(k)?);
        }
        index.build()
    }
}

fn key(k: &KeySpec) -> Result<KeySchemaElement, aws_sdk_dynamodb::error::BuildError> {
    KeySchemaElement::builder()
        .attribute_name(&k.attribute_name)
        .key_type(KeyType::from(k.key_type.as_str()))
        .build()
}
