//! The stream consumers' roles: SAM gives a function with a DynamoDB event
//! and no role of its own AWSLambdaDynamoDBExecutionRole, which reads every
//! stream in the account (`Resource: "*"`). Each consumer here has its own
//! role: its event source reads this table's stream only and sends a batch
//! it gave up on to the function's own queue; its code's statements are
//! proven with every other function's (proof.rs).

use std::collections::BTreeSet;

use serde_yaml_ng::Value as Yaml;
use testkit::iam::{event_source_statements, functions, tagged_text, template};

const STREAM: &str = "!GetAtt SeatsTable.StreamArn";
const STREAM_ACTIONS: [&str; 4] = [
    "dynamodb:DescribeStream",
    "dynamodb:GetRecords",
    "dynamodb:GetShardIterator",
    "dynamodb:ListStreams",
];

fn tagged(v: &Yaml) -> String {
    tagged_text(v).unwrap_or_else(|| panic!("expected a !GetAtt, got {v:?}"))
}

#[test]
fn stream_consumers_read_only_the_tables_stream_and_send_only_to_their_own_queue() {
    let doc = template();
    let sources = event_source_statements(&doc);
    let mut consumers = Vec::new();
    for (function, res) in functions(&doc) {
        let streams: Vec<&Yaml> = res["Properties"]["Events"]
            .as_mapping()
            .into_iter()
            .flatten()
            .map(|(_, event)| event)
            .filter(|event| event["Type"].as_str() == Some("DynamoDB"))
            .collect();
        let granted: BTreeSet<(Vec<String>, String)> = sources[&function].iter().cloned().collect();
        if streams.is_empty() {
            assert!(granted.is_empty(), "{function}: {granted:?}");
            continue;
        }
        assert!(
            !res["Properties"]["Role"].is_null() && res["Properties"]["Policies"].is_null(),
            "{function}: a stream consumer with SAM's role reads every stream in the account"
        );
        let mut expected = BTreeSet::new();
        for event in streams {
            assert_eq!(tagged(&event["Properties"]["Stream"]), STREAM, "{function}");
            expected.insert((
                STREAM_ACTIONS.iter().map(|a| (*a).to_owned()).collect(),
                STREAM.to_owned(),
            ));
            let queue = &event["Properties"]["DestinationConfig"]["OnFailure"]["Destination"];
            expected.insert((vec!["sqs:SendMessage".to_owned()], tagged(queue)));
        }
        assert_eq!(granted, expected, "{function}");
        let role = tagged(&res["Properties"]["Role"]);
        let role = &doc["Resources"][role.trim_start_matches("!GetAtt ").trim_end_matches(".Arn")];
        let managed: Vec<String> = role["Properties"]["ManagedPolicyArns"]
            .as_sequence()
            .into_iter()
            .flatten()
            .map(tagged)
            .collect();
        assert_eq!(
            managed,
            ["!Sub arn:${AWS::Partition}:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"],
            "{function}: its logs, nothing more"
        );
        consumers.push(function);
    }
    assert_eq!(consumers, ["project-seat-map", "publish-events"]);
}

/// The managed policy every function's role has (SAM adds it to the roles
/// it makes; the template's own roles name it): CloudWatch Logs on every
/// log group, the one `Resource: "*"` the stack grants. A residual IAM
/// cannot narrow without a role per function written out (SECURITY.md).
const BASIC_EXECUTION: &str = "AWSLambdaBasicExecutionRole";

/// No statement of any role or function policy in template.yaml grants
/// `Resource: "*"`, and the only managed policy any role has is
/// [`BASIC_EXECUTION`]: every other grant names its table, index, stream,
/// bus, queue or secret.
#[test]
fn no_grant_covers_every_resource_but_the_logs_policy() {
    let doc = template();
    let mut statements: Vec<(String, &Yaml)> = Vec::new();
    for (name, res) in doc["Resources"].as_mapping().unwrap() {
        let name = name.as_str().unwrap().to_owned();
        let policies: Vec<&Yaml> = match res["Type"].as_str() {
            Some("AWS::IAM::Role") => {
                for arn in res["Properties"]["ManagedPolicyArns"]
                    .as_sequence()
                    .into_iter()
                    .flatten()
                {
                    let arn = tagged_text(arn).unwrap_or_else(|| arn.as_str().unwrap_or("").into());
                    assert!(
                        arn.ends_with(&format!("/{BASIC_EXECUTION}")),
                        "{name}: {arn}"
                    );
                }
                res["Properties"]["Policies"]
                    .as_sequence()
                    .into_iter()
                    .flatten()
                    .map(|p| &p["PolicyDocument"])
                    .collect()
            }
            Some("AWS::IAM::Policy" | "AWS::IAM::ManagedPolicy") => {
                vec![&res["Properties"]["PolicyDocument"]]
            }
            Some("AWS::Serverless::Function") => {
                let policies = &res["Properties"]["Policies"];
                for p in policies.as_sequence().into_iter().flatten() {
                    assert!(
                        p.is_mapping(),
                        "{name}: a named policy template or managed policy: {p:?}"
                    );
                }
                policies.as_sequence().into_iter().flatten().collect()
            }
            _ => continue,
        };
        for document in policies {
            for s in document["Statement"].as_sequence().into_iter().flatten() {
                statements.push((name.clone(), s));
            }
        }
    }
    assert!(statements.len() > 50, "{}", statements.len());
    for (name, statement) in statements {
        let resources: Vec<&Yaml> = match &statement["Resource"] {
            Yaml::Sequence(list) => list.iter().collect(),
            one => vec![one],
        };
        for resource in resources {
            assert!(
                resource.as_str().is_none_or(|r| !r.contains('*')),
                "{name}: {statement:?}"
            );
        }
    }
}
