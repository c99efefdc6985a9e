//! Least privilege, proven: template.yaml's policies read as grants, held
//! against the calls the suite recorded (`local::iam`): nothing sent that a
//! policy does not grant, nothing granted that no test sent.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use local::iam::Call;
use serde_yaml_ng::Value as Yaml;

/// Every call recorded in `dir` (by every test process of the run).
pub fn read_record(dir: &Path) -> BTreeSet<Call> {
    let mut calls = BTreeSet::new();
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap_or_else(|e| panic!("{e}")).path();
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            calls.insert(
                serde_json::from_str(line)
                    .unwrap_or_else(|e| panic!("{}: {e}: {line}", path.display())),
            );
        }
    }
    calls
}

/// One `Allow` statement of a function's policy: actions on a resource,
/// for partition keys matching `leading_keys` (`ORDER#*`) if it has any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub actions: Vec<String>,
    pub resource: String,
    pub leading_keys: Option<Vec<String>>,
    /// The attributes a write may name (`dynamodb:Attributes`), if listed:
    /// names, or under `StringLike` patterns (`o:*`).
    pub attributes: Option<Vec<String>>,
}

impl Grant {
    fn allows(&self, call: &Call) -> bool {
        self.actions.contains(&call.action)
            && self.resource == call.resource
            && match (&self.leading_keys, &call.key_prefix) {
                (None, _) => true,
                (Some(patterns), Some(prefix)) => {
                    patterns.iter().any(|p| pattern_matches(p, prefix))
                }
                (Some(_), None) => false,
            }
            && match (&self.attributes, &call.attributes) {
                (None, _) => true,
                (Some(allowed), Some(named)) => named
                    .iter()
                    .all(|a| allowed.iter().any(|p| pattern_matches(p, a))),
                (Some(_), None) => false,
            }
    }
}

/// `ORDER#*` matches every key starting `ORDER#`, which is what a recorded
/// prefix (up to its first `#`) stands for.
fn pattern_matches(pattern: &str, prefix: &str) -> bool {
    pattern
        .strip_suffix('*')
        .map_or(pattern == prefix, |head| prefix.starts_with(head))
}

/// The actions Lambda's event source mapping takes with a function's role
/// (reading the stream, sending a batch it gave up on to the function's
/// queue): no code sends them, so the proof leaves them to
/// [`event_source_statements`] and its own test.
pub const EVENT_SOURCE_ACTIONS: &[&str] = &[
    "dynamodb:DescribeStream",
    "dynamodb:GetRecords",
    "dynamodb:GetShardIterator",
    "dynamodb:ListStreams",
    "sqs:SendMessage",
];

/// The action a function takes once at start-up (and every few minutes),
/// outside any handler: reading its secrets. The proof leaves it to
/// [`secret_grants`] and its own test.
pub const START_UP_ACTIONS: &[&str] = &["secretsmanager:GetSecretValue"];

/// template.yaml, parsed.
pub fn template() -> Yaml {
    let path = local::repo_root().join("template.yaml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("template.yaml: {e}"))
}

/// Each function resource of `doc`: its binary's name and its resource.
pub fn functions(doc: &Yaml) -> Vec<(String, &Yaml)> {
    doc["Resources"]
        .as_mapping()
        .into_iter()
        .flatten()
        .filter(|(_, res)| res["Type"].as_str() == Some("AWS::Serverless::Function"))
        .map(|(_, res)| {
            let binary = res["Metadata"]["BuildProperties"]["Binary"].as_str();
            (binary.unwrap_or_default().to_owned(), res)
        })
        .collect()
}

/// A function's policy statements: its `Policies` (SAM's role) or, when
/// it names a `Role` (`!GetAtt XRole.Arn`), that role's policies.
pub fn statements<'a>(doc: &'a Yaml, function: &'a Yaml) -> Vec<&'a Yaml> {
    let documents: Vec<&Yaml> = match &function["Properties"]["Role"] {
        Yaml::Null => function["Properties"]["Policies"]
            .as_sequence()
            .into_iter()
            .flatten()
            .collect(),
        Yaml::Tagged(t) if t.tag == "GetAtt" => {
            let name = t.value.as_str().and_then(|v| v.strip_suffix(".Arn"));
            let role = &doc["Resources"][name.unwrap_or_else(|| panic!("Role: {t:?}"))];
            assert_eq!(role["Type"].as_str(), Some("AWS::IAM::Role"), "{t:?}");
            role["Properties"]["Policies"]
                .as_sequence()
                .into_iter()
                .flatten()
                .map(|p| &p["PolicyDocument"])
                .collect()
        }
        other => panic!("a function's Role must be !GetAtt of a role here, got {other:?}"),
    };
    documents
        .into_iter()
        .flat_map(|d| d["Statement"].as_sequence().into_iter().flatten())
        .collect()
}

fn strings(v: &Yaml) -> Vec<String> {
    v.as_sequence()
        .into_iter()
        .flatten()
        .filter_map(|a| a.as_str().map(str::to_owned))
        .collect()
}

/// Whether all of `statement`'s actions are among `kind` (a statement
/// never mixes them with others).
fn is_of(statement: &Yaml, kind: &[&str]) -> bool {
    let actions = strings(&statement["Action"]);
    let theirs = actions
        .iter()
        .filter(|a| kind.contains(&a.as_str()))
        .count();
    assert!(
        theirs == 0 || theirs == actions.len(),
        "a statement mixes {kind:?} with other actions: {actions:?}"
    );
    theirs > 0
}

fn is_event_source(statement: &Yaml) -> bool {
    is_of(statement, EVENT_SOURCE_ACTIONS)
}

/// Each function's secrets: the resources of its `GetSecretValue`
/// statements (`!Ref XSecretArn`).
pub fn secret_grants(doc: &Yaml) -> BTreeMap<String, BTreeSet<String>> {
    functions(doc)
        .into_iter()
        .map(|(function, res)| {
            let grants = statements(doc, res)
                .into_iter()
                .filter(|s| is_of(s, START_UP_ACTIONS))
                .map(|s| resource(&function, s))
                .collect();
            (function, grants)
        })
        .collect()
}

/// Each function's statements for its event source: (actions, resource).
pub fn event_source_statements(doc: &Yaml) -> BTreeMap<String, Vec<(Vec<String>, String)>> {
    functions(doc)
        .into_iter()
        .map(|(function, res)| {
            let grants = statements(doc, res)
                .into_iter()
                .filter(|s| is_event_source(s))
                .map(|s| (strings(&s["Action"]), resource(&function, s)))
                .collect();
            (function, grants)
        })
        .collect()
}

/// A tagged value as the template writes it (`!GetAtt SeatsTable.Arn`),
/// as text: how the tests name a resource, a role or an ARN.
pub fn tagged_text(value: &Yaml) -> Option<String> {
    match value {
        Yaml::Tagged(t) => Some(format!("{} {}", t.tag, t.value.as_str().unwrap_or("?"))),
        _ => None,
    }
}

fn resource(function: &str, statement: &Yaml) -> String {
    let resource = &statement["Resource"];
    tagged_text(resource).unwrap_or_else(|| {
        panic!("{function}: a resource must be named by the template (the table, its index, the bus, the stream, a queue), got {resource:?}")
    })
}

/// Every function's statements for its handlers' calls in template.yaml,
/// by its binary's name.
pub fn granted() -> BTreeMap<String, Vec<Grant>> {
    let doc = template();
    let mut out = BTreeMap::new();
    for (function, res) in functions(&doc) {
        let mut grants = Vec::new();
        for statement in statements(&doc, res) {
            assert_eq!(
                statement["Effect"].as_str(),
                Some("Allow"),
                "{function}: only Allow statements"
            );
            if is_event_source(statement) || is_of(statement, START_UP_ACTIONS) {
                continue;
            }
            let condition = &statement["Condition"];
            for (operator, keys) in condition.as_mapping().into_iter().flatten() {
                let keys: Vec<&str> = keys
                    .as_mapping()
                    .into_iter()
                    .flatten()
                    .filter_map(|(k, _)| k.as_str())
                    .collect();
                let mut keys = keys;
                keys.sort_unstable();
                let known = match operator.as_str() {
                    Some("ForAllValues:StringLike") => {
                        keys == ["dynamodb:LeadingKeys"]
                            || keys == ["dynamodb:Attributes", "dynamodb:LeadingKeys"]
                    }
                    Some("ForAllValues:StringEquals") => keys == ["dynamodb:Attributes"],
                    _ => false,
                };
                assert!(
                    known,
                    "{function}: a condition the proof cannot read: {operator:?} {keys:?}"
                );
            }
            let leading_keys = (!condition.is_null())
                .then(|| strings(&condition["ForAllValues:StringLike"]["dynamodb:LeadingKeys"]));
            if let Some(keys) = &leading_keys {
                assert!(
                    !keys.is_empty(),
                    "{function}: a statement with a condition names its LeadingKeys"
                );
            }
            // Names (StringEquals) or patterns (StringLike): a pattern
            // matches as IAM's `*` at the end does, a name only itself.
            let lists: Vec<&Yaml> = ["ForAllValues:StringEquals", "ForAllValues:StringLike"]
                .iter()
                .map(|op| &condition[*op]["dynamodb:Attributes"])
                .filter(|list| !list.is_null())
                .collect();
            assert!(
                lists.len() <= 1,
                "{function}: one attribute list a statement, read one way"
            );
            let attributes = lists.first().copied();
            grants.push(Grant {
                actions: strings(&statement["Action"]),
                resource: resource(&function, statement),
                leading_keys,
                attributes: attributes.map(strings),
            });
        }
        out.insert(function, grants);
    }
    out
}

/// The calls no statement of their function allows.
pub fn ungranted<'a>(
    granted: &BTreeMap<String, Vec<Grant>>,
    calls: impl IntoIterator<Item = &'a Call>,
) -> Vec<&'a Call> {
    calls
        .into_iter()
        .filter(|call| {
            !granted
                .get(&call.function)
                .is_some_and(|grants| grants.iter().any(|g| g.allows(call)))
        })
        .collect()
}

/// What the template grants that no recorded call used: each action of
/// each statement, on each of its leading-key patterns.
pub fn unused(granted: &BTreeMap<String, Vec<Grant>>, calls: &BTreeSet<Call>) -> Vec<String> {
    let mut out = Vec::new();
    for (function, grants) in granted {
        for grant in grants {
            let patterns: Vec<Option<&String>> = match &grant.leading_keys {
                Some(p) => p.iter().map(Some).collect(),
                None => vec![None],
            };
            for action in &grant.actions {
                for pattern in &patterns {
                    let used = calls.iter().any(|c| {
                        &c.function == function
                            && &c.action == action
                            && c.resource == grant.resource
                            && pattern.is_none_or(|p| {
                                c.key_prefix
                                    .as_deref()
                                    .is_some_and(|k| pattern_matches(p, k))
                            })
                    });
                    if !used {
                        out.push(format!(
                            "{function}: {action} on {} {}",
                            grant.resource,
                            pattern.map_or("", |p| p.as_str())
                        ));
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use local::iam::TABLE;

    /// An IAM pattern ends in `*` or matches only itself.
    #[test]
    fn attribute_patterns_match_as_iam_does() {
        assert!(pattern_matches("o:*", "o:ord-1"));
        assert!(pattern_matches("o:*", "o:"));
        assert!(!pattern_matches("o:*", "order"));
        assert!(pattern_matches("sold", "sold"));
        assert!(!pattern_matches("sold", "soldOut"));
    }

    #[test]
    fn grants_allow_by_action_resource_and_leading_key() {
        let grant = Grant {
            actions: vec!["dynamodb:GetItem".into()],
            resource: TABLE.into(),
            leading_keys: Some(vec!["ORDER#*".into()]),
            attributes: None,
        };
        let call = |action: &str, prefix: Option<&str>| Call {
            function: "f".into(),
            action: action.into(),
            resource: TABLE.into(),
            key_prefix: prefix.map(str::to_owned),
            attributes: None,
        };
        assert!(grant.allows(&call("dynamodb:GetItem", Some("ORDER#"))));
        assert!(!grant.allows(&call("dynamodb:GetItem", Some("PAYMENT#"))));
        assert!(!grant.allows(&call("dynamodb:GetItem", Some("ORDERS#"))));
        assert!(!grant.allows(&call("dynamodb:PutItem", Some("ORDER#"))));
        assert!(
            !grant.allows(&call("dynamodb:GetItem", None)),
            "a key IAM cannot see is not allowed by a LeadingKeys statement"
        );
        let open = Grant {
            leading_keys: None,
            ..grant
        };
        assert!(open.allows(&call("dynamodb:GetItem", None)));
    }

    #[test]
    fn a_grant_with_an_attribute_list_allows_writes_naming_only_those() {
        let grant = Grant {
            actions: vec!["dynamodb:UpdateItem".into()],
            resource: TABLE.into(),
            leading_keys: Some(vec!["QUEUE#*".into()]),
            attributes: Some(vec!["PK".into(), "SK".into(), "version".into()]),
        };
        let write = |names: Option<&[&str]>| Call {
            function: "f".into(),
            action: "dynamodb:UpdateItem".into(),
            resource: TABLE.into(),
            key_prefix: Some("QUEUE#".into()),
            attributes: names.map(|n| n.iter().map(|a| (*a).to_owned()).collect()),
        };
        assert!(grant.allows(&write(Some(&["PK", "SK", "version"]))));
        assert!(grant.allows(&write(Some(&["PK", "version"]))));
        assert!(!grant.allows(&write(Some(&["PK", "SK", "version", "opensAt"]))));
        assert!(
            !grant.allows(&write(None)),
            "a write that names nothing known"
        );
    }
}
