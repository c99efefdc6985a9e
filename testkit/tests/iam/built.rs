//! The template CloudFormation deploys, not the one we write: SAM's
//! transform makes each function's role, and only its output shows what
//! those roles hold. make test writes it (scripts/built_template.py,
//! samtranslator offline) and passes its path in
//! `SEATCLAIM_BUILT_TEMPLATE`.

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

/// The text of an ARN as written: a string, or the string of an `Fn::Sub`.
fn arn_text(arn: &Value) -> String {
    match arn {
        Value::String(s) => s.clone(),
        other => match &other["Fn::Sub"] {
            Value::String(s) => s.clone(),
            sub => sub[0].as_str().unwrap_or_default().to_owned(),
        },
    }
}

/// Every statement of every role, policy and managed policy, by resource.
fn statements(doc: &Value) -> Vec<(String, Value)> {
    let mut all = Vec::new();
    for (name, res) in doc["Resources"].as_object().unwrap() {
        let documents: Vec<&Value> = match res["Type"].as_str() {
            Some("AWS::IAM::Role") => {
                for arn in res["Properties"]["ManagedPolicyArns"]
                    .as_array()
                    .into_iter()
                    .flatten()
                {
                    let arn = arn_text(arn);
                    assert!(
                        arn.ends_with(BASIC_EXECUTION),
                        "{name}: managed policy {arn}"
                    );
                }
                let policies = res["Properties"]["Policies"].as_array();
                policies
                    .into_iter()
                    .flatten()
                    .map(|p| &p["PolicyDocument"])
                    .collect()
            }
            Some("AWS::IAM::Policy" | "AWS::IAM::ManagedPolicy") => {
                vec![&res["Properties"]["PolicyDocument"]]
            }
            _ => continue,
        };
        for document in documents {
            for statement in document["Statement"].as_array().into_iter().flatten() {
                all.push((name.clone(), statement.clone()));
            }
        }
    }
    all
}

/// Every role and policy SAM's output holds grants no resource by
/// wildcard, and has no managed policy but the logs one; every function
/// runs under one of those roles, and there is one for each function.
#[test]
#[ignore = "reads the transformed template make test writes (SEATCLAIM_BUILT_TEMPLATE)"]
fn the_built_template_grants_no_resource_by_wildcard() {
    let doc = built_template();
    let all = statements(&doc);
    assert!(all.len() > 50, "{} statements", all.len());
    for (name, statement) in &all {
        assert!(
            statement.get("NotResource").is_none(),
            "{name}: {statement}"
        );
        let resources = match &statement["Resource"] {
            Value::Array(list) => list.clone(),
            one => vec![one.clone()],
        };
        for resource in resources {
            let text = match &resource {
                Value::String(_) | Value::Object(_) => arn_text(&resource),
                other => panic!("{name}: a resource that is not an ARN: {other}"),
            };
            assert!(!text.contains('*'), "{name}: {text} in {statement}");
        }
    }
    let resources = doc["Resources"].as_object().unwrap();
    let functions: Vec<(&String, &Value)> = resources
        .iter()
        .filter(|(_, r)| r["Type"] == "AWS::Lambda::Function")
        .collect();
    assert_eq!(functions.len(), shared::routes::FUNCTIONS.len());
    for (name, function) in functions {
        let role = function["Properties"]["Role"]["Fn::GetAtt"][0].as_str();
        let role = role.unwrap_or_else(|| panic!("{name}: a role from outside the template"));
        assert_eq!(resources[role]["Type"], "AWS::IAM::Role", "{name}: {role}");
    }
}
