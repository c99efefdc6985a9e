//! No module reaches up to an item its crate root declares itself
//! (issue 46): what several modules share lives in a module below the
//! root, and the root's re-exports are its face. Read from the files as
//! the module test reads them (`modules.rs`).

use std::collections::BTreeSet;
use std::path::Path;

use super::modules::{faces, module_files, named_paths};

/// The names a crate root's own file declares (structs, enums, functions,
/// constants, statics, types, traits; methods too, which no path reaches).
fn root_items(code: &str) -> BTreeSet<String> {
    let keywords = [
        "struct ", "enum ", "fn ", "const ", "static ", "type ", "trait ",
    ];
    let mut names = BTreeSet::new();
    for line in code.lines() {
        let mut line = line.trim();
        if let Some(visible) = line.strip_prefix("pub(") {
            line = visible.split_once(") ").map_or(line, |(_, rest)| rest);
        }
        for prefix in ["pub ", "const fn ", "async ", "unsafe "] {
            line = match (prefix, line.strip_prefix(prefix)) {
                ("const fn ", Some(rest)) => &line[line.len() - rest.len() - "fn ".len()..],
                (_, Some(rest)) => rest,
                (_, None) => line,
            };
        }
        for keyword in keywords {
            if let Some(rest) = line.strip_prefix(keyword) {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                names.insert(name);
            }
        }
    }
    names
}

/// Paths by which a module below the crate root reaches an item the root
/// declares itself (`crate::Report`, or `super::Report` from a top-level
/// module): an upward import. What several modules share lives in a
/// module of its own, below the root; the root's re-exports are its face.
fn upward_imports(src: &Path) -> Vec<(String, String)> {
    let files = module_files(src);
    let modules: BTreeSet<String> = files.keys().cloned().collect();
    let faces = faces(&files, &modules);
    let own = root_items(files.get("").map_or("", String::as_str));
    let mut found = Vec::new();
    for (module, code) in files.iter().filter(|(m, _)| !m.is_empty()) {
        for path in named_paths(module, code, &modules) {
            let top_level = !module.contains("::");
            let rest = match path.strip_prefix("crate::") {
                Some(rest) => rest,
                None if top_level => match path.strip_prefix("super::") {
                    Some(rest) => rest,
                    None => continue,
                },
                None => continue,
            };
            let name = rest.split("::").next().unwrap_or("");
            let reexported = faces.get("").is_some_and(|f| f.contains_key(name));
            if own.contains(name) && !modules.contains(name) && !reexported {
                found.push((module.clone(), path));
            }
        }
    }
    found
}

#[test]
fn the_upward_import_reader_finds_an_item_of_the_root_named_below_it() {
    let dir = std::env::temp_dir().join(format!("upward-{}", uuid::Uuid::new_v4().simple()));
    let write = |file: &str, text: &str| {
        let path = dir.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "lib.rs",
        "mod a;\nmod b;\npub use b::Shared;\npub struct Report;\nfn run() {}\n\
         pub const fn limit() -> u32 { 1 }\npub(in crate::a) static NAME: &str = \"x\";\n",
    );
    write(
        "a.rs",
        "use crate::Shared;\nfn f(_: crate::Report) -> u32 { crate::limit() }\n\
         fn g() -> &'static str { crate::NAME }\n",
    );
    write("b.rs", "pub struct Shared;\nfn g() { super::run() }\n");
    let found = upward_imports(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(
        found,
        [
            ("a".to_owned(), "crate::Report".to_owned()),
            ("a".to_owned(), "crate::limit".to_owned()),
            ("a".to_owned(), "crate::NAME".to_owned()),
            ("b".to_owned(), "super::run".to_owned()),
        ]
    );
}

/// No module of any crate reaches up to an item its crate root declares
/// (issue 46: the bench's contention filled the root's `Report`).
#[test]
fn no_crate_imports_upward() {
    for krate in ["shared", "local", "crowdcheck", "bench", "testkit"] {
        let src = local::repo_root().join(krate).join("src");
        let found = upward_imports(&src);
        assert!(
            found.is_empty(),
            "{krate}: reached up to the root: {found:#?}"
        );
    }
}
