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

/// Every function's `Policies` are statements written out: no named
/// policy template or managed policy, which SAM would expand into grants
/// no test here reads (the wildcard check of every role SAM makes is
/// built.rs's, on the template CloudFormation deploys).
#[test]
fn functions_name_no_policy_template_or_managed_policy() {
    let doc = template();
    let mut statements = 0;
    for (name, res) in functions(&doc) {
        for policy in res["Properties"]["Policies"]
            .as_sequence()
            .into_iter()
            .flatten()
        {
            assert!(
                policy.is_mapping(),
                "{name}: a named policy template or managed policy: {policy:?}"
            );
            statements += policy["Statement"].as_sequence().map_or(0, Vec::len);
        }
    }
    assert!(statements > 50, "{statements}");
}
