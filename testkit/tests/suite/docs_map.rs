//! DESIGN.md's "Where each rule lives" is where a newcomer starts: every
//! file or folder it names exists, and a `file.rs::name` names something
//! that file defines, so a move or a rename that forgets the map fails
//! here, not in a newcomer's first hour.

use std::path::{Path, PathBuf};

const MAP: &str = "## Where each rule lives";

/// The map's rows: the table under its heading, header and rule left out.
fn rows(design: &str) -> Vec<&str> {
    let start = design.find(MAP).expect("DESIGN.md has the map") + MAP.len();
    let section = &design[start..];
    let end = section.find("\n## ").unwrap_or(section.len());
    section[..end]
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| the rule for"))
        .collect()
}

/// The paths a row names, each with the item after `::` if any. A path
/// from the repository root starts with one of its folders (a crate's,
/// `scripts/`); any other with a folder in it is under `shared/src/`; a
/// bare file is beside the path named before it in the row.
fn named(root: &Path, row: &str) -> Vec<(PathBuf, Option<String>)> {
    let mut found = Vec::new();
    let mut beside = root.join("shared/src");
    for span in row.split('`').skip(1).step_by(2) {
        let (path, item) = match span.split_once("::") {
            Some((path, item)) => (path, Some(item.to_owned())),
            None => (span, None),
        };
        let is_path = (path.ends_with(".rs") || path.ends_with('/'))
            && path
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_/.-".contains(c));
        if !is_path {
            continue;
        }
        let first = path.split('/').next().unwrap_or_default();
        let full = if path.contains('/') && root.join(first).is_dir() {
            root.join(path)
        } else if path.trim_end_matches('/').contains('/') {
            root.join("shared/src").join(path)
        } else {
            beside.join(path)
        };
        beside = if path.ends_with('/') {
            full.clone()
        } else {
            full.parent().map_or(beside, Path::to_path_buf)
        };
        found.push((full, item));
    }
    found
}

#[test]
fn every_path_the_design_map_names_exists() {
    let root = local::repo_root();
    let design = std::fs::read_to_string(root.join("docs/DESIGN.md")).unwrap();
    let rows = rows(&design);
    assert!(rows.len() > 20, "{} rows", rows.len());
    let mut checked = 0;
    for row in rows {
        for (path, item) in named(&root, row) {
            checked += 1;
            assert!(
                path.exists(),
                "DESIGN.md's map names {}, which is not there",
                path.display()
            );
            if let Some(item) = item {
                let code = std::fs::read_to_string(&path).unwrap();
                let defined = ["fn ", "struct ", "enum ", "const ", "mod "]
                    .iter()
                    .any(|kind| {
                        let name = format!("{kind}{item}");
                        code.match_indices(&name).any(|(at, _)| {
                            let next = code[at + name.len()..].chars().next();
                            next.is_none_or(|c| !c.is_alphanumeric() && c != '_')
                        })
                    });
                assert!(defined, "{}::{item} is not defined there", path.display());
            }
        }
    }
    assert!(checked > 50, "{checked} paths");
}
