//! The template CloudFormation deploys, not the one we write: SAM's
//! transform makes each function's role, and only its output shows what
//! those roles hold. make test writes it (scripts/built_template.py,
//! samtranslator offline) and passes its path in
//! `SEATCLAIM_BUILT_TEMPLATE`.

use std::collections::BTreeSet;

use serde_json::Value;

/// The one managed policy a role may have: CloudWatch Logs on every log
/// group, the documented `Resource: "*"` (SECURITY.md).
const BASIC_EXECUTION: &str = "/AWSLambdaBasicExecutionRole";

fn built_template() -> Value {
    let path = std::env::var("SEATCLAIM_BUILT_TEMPLATE")
        .expect("SEATCLAIM_BUILT_TEMPLATE: run through make test, which writes it");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap()
}

/// Every string in `value`, at any depth: an ARN written plain, in an
/// `Fn::Sub`, an `Fn::Join`'s parts or either branch of an `Fn::If`.
fn strings(value: &Value) -> Vec<&str> {
    match value {
        Value::String(s) => vec![s.as_str()],
        Value::Array(items) => items.iter().flat_map(strings).collect(),
        Value::Object(fields) => fields.values().flat_map(strings).collect(),
        _ => Vec::new(),
    }
}

/// A list as IAM and CloudFormation allow it: one item, or several.
fn one_or_many(value: &Value) -> Vec<&Value> {
    match value {
        Value::Array(items) => items.iter().collect(),
        Value::Null => Vec::new(),
        one => vec![one],
    }
}

/// The policy documents of one IAM resource; its managed policies checked.
fn documents<'a>(name: &str, res: &'a Value) -> Vec<&'a Value> {
    let properties = &res["Properties"];
    match res["Type"].as_str() {
        Some("AWS::IAM::Role") => {
            for arn in one_or_many(&properties["ManagedPolicyArns"]) {
                let text = strings(arn);
                assert!(
                    text.len() == 1 && text[0].ends_with(BASIC_EXECUTION),
                    "{name}: managed policy {arn}"
                );
            }
            let policies = one_or_many(&properties["Policies"]);
            policies
                .into_iter()
                .map(|p| {
                    let document = &p["PolicyDocument"];
                    assert!(
                        document.is_object(),
                        "{name}: a policy this test cannot read: {p}"
                    );
                    document
                })
                .collect()
        }
        Some("AWS::IAM::Policy" | "AWS::IAM::ManagedPolicy") => vec![&properties["PolicyDocument"]],
        _ => Vec::new(),
    }
}

/// Every role and policy SAM's output holds grants no resource by
/// wildcard, and has no managed policy but the logs one; every function
/// runs under a role of its own among them.
#[test]
#[ignore = "reads the transformed template make test writes (SEATCLAIM_BUILT_TEMPLATE)"]
fn the_built_template_grants_no_resource_by_wildcard() {
    let doc = built_template();
    let resources = doc["Resources"].as_object().unwrap();
    let mut statements = 0;
    for (name, res) in resources {
        for document in documents(name, res) {
            for statement in one_or_many(&document["Statement"]) {
                statements += 1;
                assert!(
                    statement.get("NotResource").is_none(),
                    "{name}: {statement}"
                );
                let resource = &statement["Resource"];
                assert!(!resource.is_null(), "{name}: no Resource in {statement}");
                for text in strings(resource) {
                    assert!(!text.contains('*'), "{name}: {text} in {statement}");
                }
            }
        }
    }
    assert!(statements > 50, "{statements} statements");
    let roles: BTreeSet<&str> = resources
        .iter()
        .filter(|(_, r)| r["Type"] == "AWS::IAM::Role")
        .map(|(name, _)| name.as_str())
        .collect();
    let mut used = BTreeSet::new();
    let functions = resources
        .iter()
        .filter(|(_, r)| r["Type"] == "AWS::Lambda::Function");
    for (name, function) in functions {
        let role = function["Properties"]["Role"]["Fn::GetAtt"][0].as_str();
        let role = role.unwrap_or_else(|| panic!("{name}: a role from outside the template"));
        assert!(roles.contains(role), "{name}: {role} is no role here");
        assert!(used.insert(role), "{name} shares {role}");
    }
    assert_eq!(used.len(), shared::routes::FUNCTIONS.len());
    assert_eq!(used, roles, "a role no function runs under");
}
