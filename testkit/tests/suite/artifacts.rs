//! The repository's artifacts agree with the code: template.yaml's table
//! and routes, the documents' links, the module layout (the sample events
//! themselves run in `samples.rs`).

use crate::samples::event_text;

use std::collections::BTreeSet;

use local::table::TableSpec;
use serde_json::Value;
use shared::routes::{route_key, sample_names, Trigger, FUNCTIONS};
use shared::store;

fn template() -> serde_yaml_ng::Value {
    let text = std::fs::read_to_string(local::repo_root().join("template.yaml")).unwrap();
    serde_yaml_ng::from_str(&text).unwrap()
}

#[test]
fn the_table_in_template_yaml_is_the_one_the_store_uses() {
    let spec = TableSpec::from_repo().unwrap();
    assert_eq!(spec.billing_mode, "PAY_PER_REQUEST");
    let keys: Vec<_> = spec
        .key_schema
        .iter()
        .map(|k| (k.attribute_name.as_str(), k.key_type.as_str()))
        .collect();
    assert_eq!(keys, [(store::PK, "HASH"), (store::SK, "RANGE")]);
    let attr_type = |name: &str| {
        spec.attribute_definitions
            .iter()
            .find(|a| a.attribute_name == name)
            .map(|a| a.attribute_type.clone())
    };
    assert_eq!(attr_type(store::PK).as_deref(), Some("S"));
    assert_eq!(attr_type(store::SK).as_deref(), Some("S"));
    assert_eq!(attr_type(store::PENDING_SHARD).as_deref(), Some("S"));
    assert_eq!(
        attr_type(store::PENDING_EXPIRES_AT).as_deref(),
        Some("N"),
        "expiries compare as numbers"
    );
    assert_eq!(spec.global_secondary_indexes.len(), 4);
    let gsi = &spec.global_secondary_indexes[0];
    assert_eq!(gsi.index_name, store::PENDING_INDEX);
    let gsi_keys: Vec<_> = gsi
        .key_schema
        .iter()
        .map(|k| (k.attribute_name.as_str(), k.key_type.as_str()))
        .collect();
    assert_eq!(
        gsi_keys,
        [
            (store::PENDING_SHARD, "HASH"),
            (store::PENDING_EXPIRES_AT, "RANGE")
        ]
    );
    assert_eq!(
        gsi.projection.projection_type,
        store::PENDING_INDEX_PROJECTION
    );
    assert!(
        gsi.projection.non_key_attributes.is_empty(),
        "keys only: a claim does not rewrite the index"
    );
    // The queue's waiting visitors by join time, with their rank.
    let queue = &spec.global_secondary_indexes[1];
    assert_eq!(queue.index_name, store::QUEUE_INDEX);
    let queue_keys: Vec<_> = queue
        .key_schema
        .iter()
        .map(|k| (k.attribute_name.as_str(), k.key_type.as_str()))
        .collect();
    assert_eq!(
        queue_keys,
        [(store::QUEUE_SHARD, "HASH"), (store::QUEUE_JOIN, "RANGE")]
    );
    assert_eq!(attr_type(store::QUEUE_SHARD).as_deref(), Some("S"));
    assert_eq!(
        attr_type(store::QUEUE_JOIN).as_deref(),
        Some("N"),
        "join times compare as numbers"
    );
    assert_eq!(
        (
            queue.projection.projection_type.as_str(),
            queue.projection.non_key_attributes.as_slice()
        ),
        ("INCLUDE", [store::QUEUE_RANK.to_owned()].as_slice())
    );
    // The same visitors by rank, on the same partitions, with their join.
    let by_rank = &spec.global_secondary_indexes[2];
    assert_eq!(by_rank.index_name, store::QUEUE_RANK_INDEX);
    let rank_keys: Vec<_> = by_rank
        .key_schema
        .iter()
        .map(|k| (k.attribute_name.as_str(), k.key_type.as_str()))
        .collect();
    assert_eq!(
        rank_keys,
        [(store::QUEUE_SHARD, "HASH"), (store::QUEUE_RANK, "RANGE")]
    );
    assert_eq!(
        attr_type(store::QUEUE_RANK).as_deref(),
        Some("S"),
        "ranks are fixed-width hex: text order is rank order"
    );
    assert_eq!(
        (
            by_rank.projection.projection_type.as_str(),
            by_rank.projection.non_key_attributes.as_slice()
        ),
        ("INCLUDE", [store::QUEUE_JOIN.to_owned()].as_slice())
    );
    // The drawn visitors by draw key, on the same shards, with their slot.
    let by_draw = &spec.global_secondary_indexes[3];
    assert_eq!(by_draw.index_name, store::QUEUE_DRAW_INDEX);
    let draw_keys: Vec<_> = by_draw
        .key_schema
        .iter()
        .map(|k| (k.attribute_name.as_str(), k.key_type.as_str()))
        .collect();
    assert_eq!(
        draw_keys,
        [(store::DRAW_SHARD, "HASH"), (store::DRAW_KEY, "RANGE")]
    );
    assert_eq!(attr_type(store::DRAW_KEY).as_deref(), Some("S"));
    assert_eq!(
        (
            by_draw.projection.projection_type.as_str(),
            by_draw.projection.non_key_attributes.as_slice()
        ),
        ("INCLUDE", [store::ADMISSION_SLOT_US.to_owned()].as_slice())
    );
    let ttl = spec.time_to_live_specification.as_ref().unwrap();
    assert_eq!(
        (ttl.attribute_name.as_str(), ttl.enabled),
        (store::TTL, true)
    );
}

/// Each function's triggers in template.yaml: its HttpApi routes as
/// (METHOD, path), and the other event types it has.
fn template_triggers(
    resource: &serde_yaml_ng::Value,
) -> (BTreeSet<(String, String)>, BTreeSet<String>) {
    let mut routes = BTreeSet::new();
    let mut others = BTreeSet::new();
    let events = resource["Properties"]["Events"].as_mapping();
    for (_, event) in events.into_iter().flatten() {
        match event["Type"].as_str().unwrap() {
            "HttpApi" => {
                let p = &event["Properties"];
                routes.insert((
                    p["Method"].as_str().unwrap().to_uppercase(),
                    p["Path"].as_str().unwrap().to_owned(),
                ));
            }
            other => {
                others.insert(other.to_owned());
            }
        }
    }
    (routes, others)
}

/// template.yaml, functions/, events/, the Makefile and the cold-start
/// script agree with `shared::routes`: one `<Name>Function` resource per
/// function, built from its binary, on exactly its triggers; one binary and
/// one sample event each, the HTTP samples on one of the function's routes.
#[test]
fn every_function_in_the_route_table_is_deployed_built_and_sampled() {
    let doc = template();
    let root = local::repo_root();
    let mut deployed = BTreeSet::new();
    for (name, resource) in doc["Resources"].as_mapping().unwrap() {
        if resource["Type"].as_str() == Some("AWS::Serverless::Function") {
            deployed.insert(name.as_str().unwrap().to_owned());
        }
    }
    let mut tabled = BTreeSet::new();
    for function in FUNCTIONS {
        let pascal: String = function
            .name
            .split('-')
            .map(|w| w[..1].to_uppercase() + &w[1..])
            .collect();
        let resource = &doc["Resources"][format!("{pascal}Function").as_str()];
        let what = format!("{} ({pascal}Function)", function.name);
        tabled.insert(format!("{pascal}Function"));
        assert_eq!(
            resource["Properties"]["CodeUri"].as_str(),
            Some("functions"),
            "{what}"
        );
        assert_eq!(
            resource["Metadata"]["BuildMethod"].as_str(),
            Some("rust-cargolambda"),
            "{what}"
        );
        assert_eq!(
            resource["Metadata"]["BuildProperties"]["Binary"].as_str(),
            Some(function.name),
            "{what}: binary = function"
        );
        let (routes, others) = template_triggers(resource);
        let want_routes: BTreeSet<(String, String)> = function
            .routes()
            .iter()
            .map(|r| (r.method.to_owned(), r.path.to_owned()))
            .collect();
        assert_eq!(routes, want_routes, "{what}: its HttpApi routes");
        let want_others: BTreeSet<String> = match function.trigger {
            Trigger::Http(_) => BTreeSet::new(),
            Trigger::Schedule => ["Schedule".to_owned()].into(),
            Trigger::Stream => ["DynamoDB".to_owned()].into(),
        };
        assert_eq!(others, want_others, "{what}: its other triggers");
        assert!(
            root.join("functions/src/bin")
                .join(format!("{}.rs", function.name))
                .is_file(),
            "{what}: functions/src/bin/{}.rs",
            function.name
        );
        if let Trigger::Http(routes) = function.trigger {
            for route in routes {
                let sample: Value = serde_json::from_str(&event_text(route.name)).unwrap();
                assert_eq!(
                    sample["routeKey"].as_str(),
                    Some(route_key(route).as_str()),
                    "events/{}.json: the route it samples",
                    route.name
                );
            }
        } else {
            let sample: Value = serde_json::from_str(&event_text(function.name)).unwrap();
            assert!(
                sample.get("routeKey").is_none(),
                "{what}: not an HTTP sample"
            );
        }
    }
    assert_eq!(
        deployed, tabled,
        "template.yaml's functions vs shared::routes"
    );
    let files = |dir: &str, ext: &str| -> BTreeSet<String> {
        std::fs::read_dir(root.join(dir))
            .unwrap()
            .filter_map(|e| {
                let name = e.unwrap().file_name().to_string_lossy().into_owned();
                name.strip_suffix(ext).map(str::to_owned)
            })
            .collect()
    };
    let names: BTreeSet<String> = FUNCTIONS.iter().map(|f| f.name.to_owned()).collect();
    assert_eq!(
        files("functions/src/bin", ".rs"),
        names,
        "functions/src/bin vs shared::routes"
    );
    let samples: BTreeSet<String> = sample_names().map(|(_, n)| n.to_owned()).collect();
    assert_eq!(
        files("events", ".json"),
        samples,
        "events/ vs shared::routes: one per route, one per other function"
    );
    // The Makefile builds packages of the workspace (the functions crate
    // builds every function) and binaries that exist.
    let makefile = std::fs::read_to_string(root.join("Makefile")).unwrap();
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let members = &manifest[manifest.find("members = [").unwrap()..];
    let members = &members[..members.find(']').unwrap()];
    // Each member's package is named as its folder.
    let packages: Vec<&str> = members.split('"').skip(1).step_by(2).collect();
    assert!(packages.contains(&"functions"), "{packages:?}");
    let words: Vec<&str> = makefile.split_whitespace().collect();
    for pair in words.windows(2) {
        match pair[0] {
            "-p" => assert!(
                packages.contains(&pair[1]),
                "the Makefile builds -p {}: no such package",
                pair[1]
            ),
            "--bin" => assert!(
                names.contains(pair[1]) || pair[1].starts_with("seatclaim-"),
                "the Makefile builds --bin {}: no such function",
                pair[1]
            ),
            _ => {}
        }
    }
    // The cold-start script times every function but those it names, and
    // knows the status each answers.
    let listed = std::process::Command::new("python3")
        .args(["scripts/bench_cold_start.py", "--list"])
        .current_dir(&root)
        .output()
        .unwrap();
    assert!(
        listed.status.success(),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let strings = |key: &str| -> BTreeSet<String> {
        listed[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect()
    };
    let timed = strings("timed");
    assert_eq!(
        timed
            .union(&strings("not_timed"))
            .cloned()
            .collect::<BTreeSet<_>>(),
        names,
        "the cold-start script's functions vs shared::routes"
    );
    for function in timed.iter().chain(&strings("queue")) {
        assert!(
            listed["expected"][function].is_u64(),
            "the cold-start script expects a status of {function}"
        );
        assert!(names.contains(function), "{function}");
    }
}

/// The repository is self-contained: every relative link in README.md and
/// docs/*.md names a file that exists in it, and no tracked text file
/// names a file in the folder beside the repository.
#[test]
fn documents_link_only_to_files_in_the_repository() {
    let root = local::repo_root();
    let mut documents = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            documents.push(path);
        }
    }
    for document in documents {
        let text = std::fs::read_to_string(&document).unwrap();
        let dir = document.parent().unwrap();
        for (i, _) in text.match_indices("](") {
            let target = &text[i + 2..];
            let target = &target[..target.find(')').unwrap()];
            let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let resolved = if file.is_empty() {
                document.clone()
            } else {
                dir.join(file)
            };
            assert!(
                resolved.exists(),
                "{}: the link {target} names no file",
                document.display()
            );
            assert!(
                resolved
                    .canonicalize()
                    .unwrap()
                    .starts_with(root.canonicalize().unwrap()),
                "{}: the link {target} leaves the repository",
                document.display()
            );
            if !anchor.is_empty() {
                let heading_slugs = std::fs::read_to_string(&resolved)
                    .unwrap()
                    .lines()
                    .filter(|l| l.starts_with('#'))
                    .map(|l| slug(l.trim_start_matches('#')))
                    .collect::<BTreeSet<_>>();
                assert!(
                    heading_slugs.contains(anchor),
                    "{}: the link {target} names no heading",
                    document.display()
                );
            }
        }
    }
    let tracked = std::process::Command::new("git")
        .args(["grep", "-l", "-I", "\\.\\./shared", "--", "."])
        .current_dir(&root)
        .output()
        .unwrap();
    let offenders = String::from_utf8_lossy(&tracked.stdout);
    assert!(
        offenders.trim().is_empty(),
        "files pointing outside the repository: {offenders}"
    );
}

/// A heading's anchor as GitHub makes it: lower case, spaces to hyphens,
/// punctuation other than hyphens and underscores dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The README's "Repository" list is the tree: every path it names exists,
/// and it names every top-level folder the repository tracks and every
/// module of `shared`.
#[test]
fn the_readmes_repository_list_names_the_tree() {
    let root = local::repo_root();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let section = &readme[readme
        .find("\n## Repository\n")
        .expect("a Repository section")..];
    let block = &section[section.find("```\n").unwrap() + 4..];
    let block = &block[..block.find("```").unwrap()];
    let mut listed = BTreeSet::new();
    let mut parent = String::new();
    for line in block.lines() {
        let path = line.split_whitespace().next().unwrap_or_default();
        if path.is_empty() || !(path.contains('.') || path.ends_with('/')) {
            continue; // a description carried over to the next line
        }
        let full = if line.starts_with(' ') {
            format!("{parent}{path}")
        } else {
            parent = path.to_owned();
            path.to_owned()
        };
        let on_disk = full.replace("<name>.rs", "");
        assert!(
            root.join(&on_disk).exists(),
            "README.md lists {full}, which is not in the tree"
        );
        listed.insert(full.trim_end_matches('/').to_owned());
    }
    let tracked = std::process::Command::new("git")
        .args(["ls-files"])
        .current_dir(&root)
        .output()
        .unwrap();
    let folders: BTreeSet<String> = String::from_utf8_lossy(&tracked.stdout)
        .lines()
        .filter_map(|f| f.split_once('/').map(|(top, _)| top.to_owned()))
        .collect();
    for folder in folders {
        assert!(
            listed
                .iter()
                .any(|l| l == &folder || l.starts_with(&format!("{folder}/"))),
            "README.md's Repository list leaves out {folder}/"
        );
    }
    let lib = std::fs::read_to_string(root.join("shared/src/lib.rs")).unwrap();
    for module in lib.lines().filter_map(|l| l.strip_prefix("pub mod ")) {
        let module = module.trim_end_matches(';');
        assert!(
            listed.contains(&format!("shared/src/{module}.rs"))
                || listed.contains(&format!("shared/src/{module}")),
            "README.md's Repository list leaves out shared/src/{module}"
        );
    }
}

#[test]
fn the_development_secrets_are_known_to_the_start_up_check() {
    let app = local::apps::app_on(local::local_client("http://127.0.0.1:9"), "t");
    assert_eq!(
        shared::dev_secrets::found_in(&app.config),
        [
            "CONFIRM_SECRET",
            "STRIPE_WEBHOOK_SECRET",
            "HOLD_TOKEN_KEYS",
            "DRAW_SECRET",
            "ADMISSION_SIGNING_KEYS",
            "ADMISSION_VERIFY_KEYS",
            "BUYER_VERIFY_KEYS"
        ]
    );
    let refused = shared::dev_secrets::refuse(&app.config, false).unwrap_err();
    assert!(refused.to_string().contains("CONFIRM_SECRET"), "{refused}");
    assert!(shared::dev_secrets::refuse(&app.config, true).is_ok());
    // Nothing in template.yaml lets a deployed function start with them,
    // and it holds no secret's value at all: its functions are given the
    // secrets' ARNs (tests/iam/secrets.rs), so the start-up check above is
    // where a development secret put in a deployed secret is refused.
    let text = std::fs::read_to_string(local::repo_root().join("template.yaml")).unwrap();
    assert!(!text.contains(shared::dev_secrets::ALLOW_DEV_SECRETS));
    assert!(!text.contains(local::apps::DEV_CONFIRM_SECRET));
    assert!(!text.contains(local::apps::DEV_STRIPE_WEBHOOK_SECRET));
    assert!(!text.contains(local::apps::DEV_HOLD_TOKEN_KEYS.trim()));
}

/// The request headers the page's scripts (web/*.js) set:
/// `headers["name"]`, `headers.name = ...` and `headers = { "name": ... }`.
fn headers_the_page_sends() -> BTreeSet<String> {
    let web = local::repo_root().join("web");
    let mut js = String::new();
    for entry in std::fs::read_dir(&web).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "js") {
            js.push_str(&std::fs::read_to_string(path).unwrap());
        }
    }
    let mut names = BTreeSet::new();
    for (i, _) in js.match_indices("headers") {
        let rest = &js[i + "headers".len()..];
        let name = if let Some(r) = rest.strip_prefix("[\"") {
            r.split('"').next()
        } else if let Some(r) = rest.strip_prefix('.') {
            r.split(" =")
                .next()
                .filter(|n| !n.contains(['(', ')', ' ', ';']))
        } else if let Some(r) = rest.strip_prefix(" = { \"") {
            r.split('"').next()
        } else {
            None
        };
        names.extend(name.map(str::to_lowercase));
    }
    names
}

#[test]
fn cors_allows_every_header_the_page_sends() {
    let sent = headers_the_page_sends();
    assert!(sent.contains("idempotency-key"), "{sent:?}");
    let cors = &template()["Resources"]["SeatclaimApi"]["Properties"]["CorsConfiguration"];
    let allowed: BTreeSet<String> = cors["AllowHeaders"]
        .as_sequence()
        .unwrap()
        .iter()
        .filter_map(|h| h.as_str().map(str::to_lowercase))
        .collect();
    let missing: Vec<_> = sent.difference(&allowed).collect();
    assert!(missing.is_empty(), "the API's CORS refuses {missing:?}");
}

/// The function names quoted in `text` where `before` stands right before
/// the opening quote and `after` right after the closing one (a digit for
/// `after` means any digit).
fn names_quoted(text: &str, before: &str, after: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let opening = format!("{before}\"");
    for (at, _) in text.match_indices(&opening) {
        let rest = &text[at + opening.len()..];
        let Some(end) = rest.find('"') else { continue };
        let (name, tail) = (&rest[..end], &rest[end + 1..]);
        let shaped = is_function_shaped(name);
        let followed = match after {
            "digit" => {
                tail.chars().nth(2).is_some_and(|c| c.is_ascii_digit()) && tail.starts_with(", ")
            }
            after => tail.starts_with(after),
        };
        if shaped && followed {
            found.insert(name.to_owned());
        }
    }
    found
}

/// Whether `name` is shaped like a function's name: lower-case words
/// joined by hyphens.
fn is_function_shaped(name: &str) -> bool {
    !name.is_empty()
        && name
            .split('-')
            .all(|w| !w.is_empty() && w.chars().all(|c| c.is_ascii_lowercase()))
}

/// Every list of functions outside the route table agrees with it, so a new
/// route or function cannot be skipped without a failure: SAM's local run
/// invokes every events/ file (one per route, one per other function), the
/// suite runs every one, and the cold-start bench's own lists name only
/// functions (its list of what it times is the binaries', held to the table
/// above), timing a function of several routes on one of its own.
#[test]
fn every_list_of_functions_agrees_with_the_route_table() {
    let read = |path: &str| std::fs::read_to_string(local::repo_root().join(path)).unwrap();
    let names: BTreeSet<String> = FUNCTIONS.iter().map(|f| f.name.to_owned()).collect();
    let samples: BTreeSet<String> = sample_names().map(|(_, n)| n.to_owned()).collect();

    // ("get-seat", 200, ...) in a stage, check("create-event", 201, ...) alone.
    let sam = read("scripts/sam_local_invoke_test.py");
    let invoked = names_quoted(&sam, "(", "digit");
    assert_eq!(
        invoked, samples,
        "sam_local_invoke_test.py's stages against every route and function"
    );

    let mut ran = BTreeSet::new();
    for entry in std::fs::read_dir(local::repo_root().join("testkit/tests/suite")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            ran.extend(names_quoted(&text, "run_event(&app, ", ","));
            ran.extend(names_quoted(&text, "run_event(app, ", ","));
            ran.extend(names_quoted(&text, "event_text(", ")"));
            for (at, _) in text.match_indices("\"events/") {
                let rest = &text[at + "\"events/".len()..];
                let name = rest.split(".json\"").next().unwrap_or_default();
                if is_function_shaped(name) {
                    ran.insert(name.to_owned());
                }
            }
        }
    }
    let unrun: Vec<&String> = samples.difference(&ran).collect();
    assert!(
        unrun.is_empty(),
        "events/ files no suite test runs: {unrun:?}"
    );

    let cold = read("scripts/bench_cold_start.py");
    let timed = cold
        .lines()
        .find(|l| l.starts_with("TIMED_ROUTE = "))
        .expect("bench_cold_start.py's TIMED_ROUTE");
    let pairs: Vec<&str> = timed.split('"').skip(1).step_by(2).collect();
    for pair in pairs.chunks(2) {
        assert!(
            sample_names().any(|(f, n)| [f.name, n] == pair),
            "TIMED_ROUTE: {pair:?} is a route of its function"
        );
    }
    for function in FUNCTIONS.iter().filter(|f| f.routes().len() > 1) {
        assert!(
            pairs.chunks(2).any(|p| p[0] == function.name),
            "TIMED_ROUTE names a route of {}",
            function.name
        );
    }
    for list in ["NOT_TIMED = ", "QUEUE_FUNCTIONS = ", "CREATED = "] {
        let line = cold
            .lines()
            .find(|l| l.starts_with(list))
            .unwrap_or_else(|| panic!("bench_cold_start.py has no {list}"));
        let quoted: BTreeSet<String> = line
            .split('"')
            .skip(1)
            .step_by(2)
            .filter(|s| is_function_shaped(s))
            .map(str::to_owned)
            .collect();
        assert!(!quoted.is_empty(), "{line}");
        let strangers: Vec<&String> = quoted.difference(&names).collect();
        assert!(
            strangers.is_empty(),
            "bench_cold_start.py's {list}names {strangers:?}"
        );
    }
}

#[test]
fn the_templates_queue_shards_are_the_counts_the_code_takes() {
    use shared::config::QueueShards;
    let template = template();
    let parameter = &template["Parameters"]["QueueShards"];
    let default = parameter["Default"].as_str().unwrap();
    assert_eq!(default, QueueShards::DEFAULT.count().to_string());
    let allowed: Vec<u32> = parameter["AllowedValues"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().parse().unwrap())
        .collect();
    let valid: Vec<u32> = (0..=256)
        .filter(|&n| QueueShards::new(n).is_some())
        .collect();
    assert_eq!(allowed, valid, "every count the code takes, and only those");
    let admin = &template["Resources"]["QueueAdminFunction"]["Properties"];
    let variable = &admin["Environment"]["Variables"]["QUEUE_SHARDS"];
    let refers = match variable {
        serde_yaml_ng::Value::Tagged(t) => {
            t.tag == "Ref" && t.value.as_str() == Some("QueueShards")
        }
        _ => false,
    };
    assert!(refers, "queue-admin's QUEUE_SHARDS: {variable:?}");
}

/// CloudFront (`EnableCloudFront`) caches the replies that say they may be
/// cached, for as long as they say, and nothing else: the seat map for
/// its second with no query string in its key, the draw list's pages for
/// their five seconds keyed on the page (`after`, `limit`); every other
/// route passes through uncached.
#[test]
fn cloudfront_caches_what_the_replies_allow_for_as_long() {
    use serde_yaml_ng::Value as Yaml;
    let doc = template();
    let config = &doc["Resources"]["ApiDistribution"]["Properties"]["DistributionConfig"];
    let policy = |behavior: &Yaml| -> Yaml {
        let Yaml::Tagged(tagged) = &behavior["CachePolicyId"] else {
            panic!("a policy of this template: {behavior:?}");
        };
        let name = tagged.value.as_str().unwrap();
        doc["Resources"][name]["Properties"]["CachePolicyConfig"].clone()
    };
    let cached: Vec<(String, u64, Vec<String>)> = config["CacheBehaviors"]
        .as_sequence()
        .unwrap()
        .iter()
        .filter(|b| b["TargetOriginId"].as_str() == Some("api"))
        .map(|b| {
            let p = policy(b);
            let queries = &p["ParametersInCacheKeyAndForwardedToOrigin"]["QueryStringsConfig"];
            let keyed: Vec<String> = queries["QueryStrings"]
                .as_sequence()
                .into_iter()
                .flatten()
                .map(|q| q.as_str().unwrap().to_owned())
                .collect();
            assert_eq!(p["MinTTL"].as_u64(), Some(0));
            assert_eq!(p["DefaultTTL"], p["MaxTTL"]);
            let pattern = b["PathPattern"].as_str().unwrap().to_owned();
            (pattern, p["MaxTTL"].as_u64().unwrap(), keyed)
        })
        .collect();
    let route_pattern = |name: &str| {
        let (_, route) = shared::routes::routes()
            .find(|(_, r)| r.name == name)
            .unwrap();
        route
            .path
            .split('/')
            .map(|part| if part.starts_with('{') { "*" } else { part })
            .collect::<Vec<_>>()
            .join("/")
    };
    assert_eq!(
        cached,
        [
            (
                route_pattern("availability"),
                u64::from(shared::handlers::SEAT_MAP_MAX_AGE_SECONDS),
                vec![]
            ),
            (
                route_pattern("draw-list"),
                u64::from(shared::handlers::DRAW_PAGE_MAX_AGE_SECONDS),
                vec!["after".to_owned(), "limit".to_owned()]
            ),
        ]
    );
    // No error reply outlives its moment: every code CloudFront caches by
    // default is cached for 0 s.
    let errors: Vec<(u64, u64)> = config["CustomErrorResponses"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["ErrorCode"].as_u64().unwrap(),
                e["ErrorCachingMinTTL"].as_u64().unwrap(),
            )
        })
        .collect();
    let cached_by_default = [400, 403, 404, 405, 414, 416, 500, 501, 502, 503, 504];
    assert_eq!(errors, cached_by_default.map(|code| (code, 0)));
    // Everything else: AWS's managed CachingDisabled.
    assert_eq!(
        config["DefaultCacheBehavior"]["CachePolicyId"].as_str(),
        Some("4135ea2d-6df8-44a3-9df3-4b5a84be39ad")
    );
}
