//! Secrets are in no function's environment (where anyone allowed
//! `lambda:GetFunctionConfiguration` reads them): each function is given
//! its secrets' ARNs, and its role reads exactly those secrets, exactly the
//! ones its start-up needs (`shared::secrets`). What it reads through them
//! is tested against the dev server's stand-in (suite/secrets.rs) and, in
//! `sam local invoke`, by the real binaries (scripts/sam_local_invoke_test.py).

use std::collections::{BTreeMap, BTreeSet};

use serde_yaml_ng::Value as Yaml;
use shared::secrets::{arn_variable, SECRET_VARIABLES};
use testkit::iam::{functions, secret_grants, tagged_text, template};

fn text(v: &Yaml) -> String {
    tagged_text(v)
        .or_else(|| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("{v:?}"))
}

/// Every `Environment` of the template: (whose, its variables).
fn environments(doc: &Yaml) -> Vec<(String, &Yaml)> {
    let mut all = vec![(
        "Globals".to_owned(),
        &doc["Globals"]["Function"]["Environment"]["Variables"],
    )];
    for (function, res) in functions(doc) {
        all.push((function, &res["Properties"]["Environment"]["Variables"]));
    }
    all
}

#[test]
fn no_secret_and_no_noecho_parameter_sits_in_an_environment() {
    let doc = template();
    let no_echo: Vec<String> = doc["Parameters"]
        .as_mapping()
        .into_iter()
        .flatten()
        .filter(|(_, p)| p["NoEcho"].as_bool() == Some(true))
        .filter_map(|(name, _)| name.as_str().map(str::to_owned))
        .collect();
    for (whose, variables) in environments(&doc) {
        for (name, value) in variables.as_mapping().into_iter().flatten() {
            let (name, value) = (name.as_str().unwrap_or_default(), text(value));
            assert!(
                !SECRET_VARIABLES.contains(&name),
                "{whose}: {name} is a secret: give its ARN ({})",
                arn_variable(name)
            );
            assert!(
                !value.contains("resolve:secretsmanager"),
                "{whose}: {name} places a Secrets Manager value in the environment"
            );
            for p in &no_echo {
                assert!(
                    value != format!("!Ref {p}") && !value.contains(&format!("${{{p}}}")),
                    "{whose}: {name} places the NoEcho parameter {p} in the environment"
                );
            }
        }
    }
}

#[test]
fn each_function_reads_exactly_the_secrets_its_start_up_needs() {
    let doc = template();
    let grants = secret_grants(&doc);
    let mut readers = BTreeMap::new();
    for (function, res) in functions(&doc) {
        let variables = &res["Properties"]["Environment"]["Variables"];
        let mut given = BTreeSet::new();
        let mut refs = BTreeSet::new();
        for name in SECRET_VARIABLES {
            let arn = &variables[arn_variable(name).as_str()];
            if arn.is_null() {
                continue;
            }
            given.insert(name);
            let arn = text(arn);
            assert!(
                arn.starts_with("!Ref "),
                "{function}: {name}'s ARN is a parameter: {arn}"
            );
            let parameter = &doc["Parameters"][arn.trim_start_matches("!Ref ")];
            let pattern = parameter["AllowedPattern"].as_str().unwrap_or_default();
            // A required secret has no default; an optional one defaults to
            // empty, and then its function is not deployed at all.
            let required = parameter["Default"].is_null() && pattern.starts_with("^arn:aws");
            let optional = parameter["Default"].as_str() == Some("")
                && pattern.starts_with("^(arn:aws")
                && pattern.ends_with(")?$")
                && optional_when_given(&doc, &res["Condition"], &arn);
            assert!(
                required || optional,
                "{function}: {arn} is a secret's ARN, with no default, or optional with its function"
            );
            refs.insert(arn);
        }
        let needs = shared::routes::FUNCTIONS
            .iter()
            .find(|f| f.name == function)
            .and_then(|f| f.needs)
            .unwrap_or(shared::Needs::STORE);
        let needed: BTreeSet<&str> = [
            (needs.hold_token_keys, shared::config::HOLD_TOKEN_KEYS),
            (needs.confirm_secret, shared::config::CONFIRM_SECRET),
            (needs.stripe_secret, shared::config::STRIPE_WEBHOOK_SECRET),
            (
                needs.admission_signing,
                shared::config::ADMISSION_SIGNING_KEYS,
            ),
            (needs.draw_secret, shared::config::DRAW_SECRET),
        ]
        .into_iter()
        .filter_map(|(needed, name)| needed.then_some(name))
        .collect();
        assert_eq!(
            given, needed,
            "{function}: the secrets it is given are those it needs"
        );
        assert_eq!(
            grants[&function], refs,
            "{function}: it may read exactly those"
        );
        if !needed.is_empty() {
            readers.insert(function, needed);
        }
    }
    assert_eq!(readers.len(), 17, "{readers:?}");
}

/// Whether `condition` names a condition that holds exactly when the
/// parameter `arn` refers to is not empty: `!Not [!Equals [!Ref P, ""]]`.
fn optional_when_given(doc: &Yaml, condition: &Yaml, arn: &str) -> bool {
    let Some(name) = condition.as_str() else {
        return false;
    };
    // The one argument of a tagged function (`!Not [x]`), or its list.
    let call = |value: &Yaml, tag: &str| match value {
        Yaml::Tagged(t) if t.tag == tag => t.value.as_sequence().cloned(),
        _ => None,
    };
    let parameter = arn.trim_start_matches("!Ref ");
    let Some(not) = call(&doc["Conditions"][name], "!Not") else {
        return false;
    };
    let [equals] = not.as_slice() else {
        return false;
    };
    let Some(equals) = call(equals, "!Equals") else {
        return false;
    };
    let [reference, empty] = equals.as_slice() else {
        return false;
    };
    text(reference) == format!("!Ref {parameter}") && empty.as_str() == Some("")
}

/// The local invokes (samconfig.toml) name the development secrets' ARNs,
/// which the dev server alone serves.
#[test]
fn local_invokes_name_the_development_secrets() {
    let samconfig = std::fs::read_to_string(local::repo_root().join("samconfig.toml")).unwrap();
    let overrides: Vec<&str> = samconfig
        .lines()
        .filter(|l| l.starts_with("parameter_overrides"))
        .collect();
    assert_eq!(overrides.len(), 3, "local invoke, start-api, start-lambda");
    for line in overrides {
        for (parameter, name) in [
            ("ConfirmSecretArn", shared::config::CONFIRM_SECRET),
            (
                "AdmissionSigningKeysSecretArn",
                shared::config::ADMISSION_SIGNING_KEYS,
            ),
            ("HoldTokenKeysSecretArn", shared::config::HOLD_TOKEN_KEYS),
            ("DrawSecretArn", shared::config::DRAW_SECRET),
            (
                "StripeWebhookSecretArn",
                shared::config::STRIPE_WEBHOOK_SECRET,
            ),
        ] {
            let arn = local::secrets::dev_secret_arn(name).unwrap();
            assert!(line.contains(&format!("{parameter}={arn}")), "{line}");
        }
    }
}
