//! The configuration tables of docs/API.md and docs/OPERATIONS.md agree
//! with the code's list of settings: every variable a function reads
//! (`shared::config::VARIABLES`) has a row in both, every whole-number
//! setting's row gives the code's default and range, and no row names a
//! variable nothing reads.

use std::collections::BTreeSet;

/// Variables the tables may name that are no function's configuration:
/// the SDK's own, and the dev server's.
const OUTSIDE_THE_FUNCTIONS: [&str; 7] = [
    "AWS_REGION",
    "AWS_ENDPOINT_URL_DYNAMODB",
    "AWS_ENDPOINT_URL_EVENTBRIDGE",
    "AWS_ENDPOINT_URL_SECRETS_MANAGER",
    "PORT",
    "DYNAMODB_LOCAL_PORT",
    "SWEEP_INTERVAL_SECONDS",
];

/// The rows of the table under `## Configuration` in `doc`: each row's
/// first cell's variables (backticked, upper case) and its second cell.
fn configuration_rows(doc: &str) -> Vec<(Vec<String>, String)> {
    let start = doc
        .find("\n## Configuration\n")
        .expect("a '## Configuration' section");
    let section = &doc[start + 1..];
    let end = section[3..].find("\n## ").map_or(section.len(), |e| e + 3);
    section[..end]
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|line| {
            let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
            let names = cells[0]
                .split('`')
                .skip(1)
                .step_by(2)
                .filter(|n| {
                    n.chars()
                        .all(|c| c.is_ascii_uppercase() || "_{}".contains(c))
                })
                .map(str::to_owned)
                .collect();
            (names, cells.get(1).copied().unwrap_or_default().to_owned())
        })
        .collect()
}

#[test]
fn the_configuration_tables_follow_the_codes_settings() {
    let root = local::repo_root();
    for doc in ["docs/API.md", "docs/OPERATIONS.md"] {
        let text = std::fs::read_to_string(root.join(doc)).expect("the doc reads");
        let rows = configuration_rows(&text);
        let named: BTreeSet<&str> = rows
            .iter()
            .flat_map(|(names, _)| names.iter().map(String::as_str))
            .collect();
        for variable in shared::config::VARIABLES {
            assert!(named.contains(variable), "{doc} has no row for {variable}");
        }
        for name in &named {
            assert!(
                shared::config::VARIABLES.contains(name)
                    || OUTSIDE_THE_FUNCTIONS.contains(name)
                    || name.ends_with("_SECRET_ARN"),
                "{doc} names {name}, which nothing reads"
            );
        }
        // QUEUE_SHARDS: a power of two, its default the most.
        let shards = shared::domain::queue_shards::QueueShards::DEFAULT.count();
        let most = shared::domain::queue_shards::QueueShards::MOST;
        let said = format!("{shards} (a power of two, 1–{most}");
        assert!(
            rows.iter()
                .any(|(names, second)| names.iter().any(|n| n == "QUEUE_SHARDS")
                    && second.starts_with(&said)),
            "{doc}: QUEUE_SHARDS is not documented as {said}"
        );
        for (variable, default, least, most) in shared::config::number_settings() {
            let (_, second) = rows
                .iter()
                .find(|(names, _)| names.iter().any(|n| n == variable))
                .expect("a row");
            let said = format!("{default} ({least}–{most})");
            assert!(
                second.starts_with(&said),
                "{doc}: {variable} is documented as {second:?}, the code says {said}"
            );
        }
    }
}
