//! The module layout, read from the files: the domain performs no I/O, and
//! no module of `shared`, at any depth, depends on itself through others.
//!
//! A module's dependencies are the modules its code names: `use` paths
//! (trees expanded) and paths written inline, from `crate::`, `super::`,
//! `self::` or a child module's name, each resolved to the deepest module
//! it reaches (through a module's re-exports: `crate::App` is `app`'s).
//! Re-exports (`pub use`) and `mod` declarations are a module's face, not
//! its dependencies, and test code (`*tests.rs`, `#[cfg(test)]` to the end
//! of a file) is left out. A cycle is one among siblings at any depth (see
//! [`sibling_graph`]): a module's own file is the core its parts build on.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Module path (`""` the crate root, `store::holds`) -> its file's text.
pub(super) type Files = BTreeMap<String, String>;
/// Module path -> the modules its code names.
type Graph = BTreeMap<String, BTreeSet<String>>;

/// Every non-test source file under `src`, by module path.
pub(super) fn module_files(src: &Path) -> Files {
    let mut files = Files::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let name = path.file_name().unwrap().to_str().unwrap().to_owned();
            if !name.ends_with(".rs") || name.ends_with("tests.rs") {
                continue;
            }
            let relative = path.strip_prefix(src).unwrap().with_extension("");
            let mut parts: Vec<String> = relative
                .iter()
                .map(|p| p.to_str().unwrap().to_owned())
                .collect();
            if matches!(
                parts.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                parts.pop();
            }
            if parts.first().map(String::as_str) == Some("bin") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            files.insert(parts.join("::"), code_of(&text));
        }
    }
    files
}

/// A file's code: no comments, no test module at its end, and no
/// visibility paths (`pub(in crate::store)` names no dependency).
fn code_of(text: &str) -> String {
    let text = match text.find("#[cfg(test)]") {
        Some(at) => &text[..at],
        None => text,
    };
    let mut code = text
        .lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n");
    while let Some(at) = code.find("pub(in ") {
        let end = code[at..].find(')').map_or(code.len(), |e| at + e + 1);
        code.replace_range(at..end, "pub");
    }
    code
}

fn join(base: &str, segment: &str) -> String {
    match base {
        "" => segment.to_owned(),
        _ => format!("{base}::{segment}"),
    }
}

fn parent(module: &str) -> String {
    module.rsplit_once("::").map_or("", |(p, _)| p).to_owned()
}

/// `a::{b::C, d as e}` -> `a::b::C`, `a::d=e` (nested trees too; a
/// rename kept after `=`).
fn expand_tree(tree: &str) -> Vec<String> {
    let tree: String = tree
        .split_whitespace()
        .map(|word| if word == "as" { "=" } else { word })
        .collect();
    let Some(open) = tree.find('{') else {
        return vec![tree];
    };
    let (prefix, rest) = (&tree[..open], &tree[open + 1..tree.len() - 1]);
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in rest.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&rest[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&rest[start..]);
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .flat_map(expand_tree)
        .map(|p| format!("{prefix}{p}"))
        .collect()
}

/// The paths a module's code names: its private `use` trees expanded, and
/// every inline path that starts from `crate`, `super`, `self` or one of
/// its child modules.
pub(super) fn named_paths(module: &str, code: &str, modules: &BTreeSet<String>) -> Vec<String> {
    let mut paths = Vec::new();
    let mut rest = code;
    let mut others = String::new();
    while let Some(at) = rest.find("use ") {
        let before = &rest[..at];
        let starts_statement = before
            .trim_end_matches([' ', '\t'])
            .ends_with(['\n', ';', '{', '}'])
            || before.trim().is_empty();
        let Some(end) = rest[at..].find(';') else {
            break;
        };
        others.push_str(before);
        let statement = &rest[at + 4..at + end];
        let public = before.trim_end().ends_with("pub") || before.trim_end().ends_with(')');
        if starts_statement || public {
            if !public {
                let named = expand_tree(statement);
                paths.extend(
                    named
                        .iter()
                        .map(|p| p.split('=').next().unwrap_or(p).to_owned()),
                );
            }
        } else {
            others.push_str(&rest[at..at + end]);
        }
        rest = &rest[at + end + 1..];
    }
    others.push_str(rest);
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let chars: Vec<char> = others.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if !is_ident(chars[i]) || (i > 0 && (is_ident(chars[i - 1]) || chars[i - 1] == ':')) {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && (is_ident(chars[i]) || chars[i] == ':') {
            i += 1;
        }
        let path: String = chars[start..i].iter().collect();
        let first = path.split("::").next().unwrap_or("");
        let child = modules.contains(&join(module, first));
        if path.contains("::") && (matches!(first, "crate" | "super" | "self") || child) {
            paths.push(path);
        }
    }
    paths
}

/// The module `path`, named in `module`, reaches: the deepest module it
/// names, or where a module it names re-exports the next name from.
fn resolve(module: &str, path: &str, modules: &BTreeSet<String>, faces: &Faces) -> Option<String> {
    let mut segments = path.split("::").filter(|s| !s.is_empty()).peekable();
    let mut at = module.to_owned();
    while let Some(&segment) = segments.peek() {
        match segment {
            "crate" => at = String::new(),
            "self" => {}
            "super" => at = parent(&at),
            _ => break,
        }
        segments.next();
    }
    for segment in segments {
        let next = join(&at, segment);
        if modules.contains(&next) {
            at = next;
            continue;
        }
        if let Some(target) = faces.get(&at).and_then(|names| names.get(segment)) {
            at = target.clone();
        }
        break;
    }
    (!at.is_empty()).then_some(at)
}

/// Each module's re-exports at any visibility: name -> the module it
/// comes from (`pub use app::{App, config_from_env}` in the root: `App` and
/// `config_from_env` from `app`; `pub(crate) use super::x::X as Y` in `a::b`:
/// `Y` from `a::x`).
pub(super) type Faces = BTreeMap<String, BTreeMap<String, String>>;

/// The trees of every re-export in `code` (`pub use`, `pub(crate) use`,
/// `pub(super) use`), wherever its statement starts: after a `;`, a `}`
/// or nothing.
fn reexported_trees(code: &str) -> Vec<&str> {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    code.match_indices("pub")
        .filter(|(at, _)| !code[..*at].ends_with(is_ident))
        .filter_map(|(at, _)| {
            let rest = code[at + "pub".len()..].trim_start();
            let rest = match rest.strip_prefix('(') {
                Some(scoped) => &scoped[scoped.find(')')? + 1..],
                None => rest,
            };
            let tree = rest.trim_start().strip_prefix("use ")?;
            Some(&tree[..tree.find(';')?])
        })
        .collect()
}

/// The module `from` (a re-export's path less its last name) is, seen
/// from `module`: anchored at `crate`, `self` or `super`s, else a child.
fn module_named(module: &str, from: &str) -> String {
    let mut at = module.to_owned();
    let mut rest = Vec::new();
    for segment in from.split("::") {
        match segment {
            "crate" if rest.is_empty() => at = String::new(),
            "self" if rest.is_empty() => {}
            "super" if rest.is_empty() => at = parent(&at),
            _ => rest.push(segment),
        }
    }
    rest.iter().fold(at, |at, segment| join(&at, segment))
}

pub(super) fn faces(files: &Files, modules: &BTreeSet<String>) -> Faces {
    let mut faces = Faces::new();
    for (module, code) in files {
        for tree in reexported_trees(code) {
            for path in expand_tree(tree) {
                let (path, alias) = match path.split_once('=') {
                    Some((path, alias)) => (path, Some(alias)),
                    None => (path.as_str(), None),
                };
                let Some((from, name)) = path.rsplit_once("::") else {
                    continue;
                };
                let name = alias.unwrap_or(name);
                let from = module_named(module, from);
                if modules.contains(&from) {
                    faces
                        .entry(module.clone())
                        .or_default()
                        .insert(name.to_owned(), from);
                }
            }
        }
    }
    faces
}

/// Who uses whom among the modules of the crate whose sources are `src`.
fn module_graph(src: &Path) -> Graph {
    let files = module_files(src);
    let modules: BTreeSet<String> = files.keys().cloned().collect();
    let faces = faces(&files, &modules);
    files
        .iter()
        .map(|(module, code)| {
            let uses = named_paths(module, code, &modules)
                .iter()
                .filter_map(|path| resolve(module, path, &modules, &faces))
                .filter(|target| target != module)
                .collect();
            (module.clone(), uses)
        })
        .collect()
}

/// A path from `from` back to itself through `graph`, if there is one.
fn cycle_through(graph: &Graph, from: &str) -> Option<Vec<String>> {
    let mut came_from: BTreeMap<String, String> = BTreeMap::new();
    let mut stack = vec![from.to_owned()];
    while let Some(module) = stack.pop() {
        for next in graph.get(&module).into_iter().flatten() {
            if next == from {
                let mut path = vec![from.to_owned(), module.clone()];
                let mut at = module.clone();
                while let Some(previous) = came_from.get(&at) {
                    path.push(previous.clone());
                    at = previous.clone();
                }
                path.reverse();
                return Some(path);
            }
            if next != &module && !came_from.contains_key(next) && next != from {
                came_from.insert(next.clone(), module.clone());
                stack.push(next.clone());
            }
        }
    }
    None
}

/// `module`'s ancestor just below `level` (`module` itself if it is
/// `level`'s child).
fn child_of_on_path(level: &str, module: &str) -> String {
    let rest = match level {
        "" => module,
        _ => &module[level.len() + 2..],
    };
    join(level, rest.split("::").next().unwrap_or(rest))
}

fn is_within(module: &str, ancestor: &str) -> bool {
    ancestor.is_empty() || module == ancestor || module.starts_with(&format!("{ancestor}::"))
}

/// The uses between siblings: a use from anywhere inside one module to
/// anywhere inside another is a use between the two children of their
/// nearest common ancestor that contain them. A module's own file is its
/// core, which its parts build on and which may call its parts: uses
/// between a module and its ancestors are not between siblings.
fn sibling_graph(graph: &Graph) -> Graph {
    let mut siblings = Graph::new();
    for (from, uses) in graph {
        for to in uses {
            if is_within(from, to) || is_within(to, from) {
                continue;
            }
            let mut level = parent(from);
            while !is_within(to, &level) {
                level = parent(&level);
            }
            siblings
                .entry(child_of_on_path(&level, from))
                .or_default()
                .insert(child_of_on_path(&level, to));
        }
    }
    siblings
}

/// Every module of the crate at `src` that depends on itself through its
/// siblings, at any depth, with one path back.
fn cycles(src: &Path) -> Vec<Vec<String>> {
    let graph = sibling_graph(&module_graph(src));
    graph
        .keys()
        .filter_map(|module| cycle_through(&graph, module))
        .collect()
}

#[test]
fn the_module_reader_sees_uses_at_every_depth_and_finds_a_cycle() {
    let dir = std::env::temp_dir().join(format!("seatclaim-modules-{}", std::process::id()));
    let write = |path: &str, text: &str| {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "lib.rs",
        "mod a;\nmod b;\nmod c;\nmod d;\npub use b::Thing;\n",
    );
    // c shows a::y's Y under another name, to the crate only.
    write(
        "c.rs",
        "pub struct S;\nimpl S {}\npub(crate) use crate::a::y::Y as Why;\n",
    );
    write(
        "a/mod.rs",
        "mod x;\nmod y;\npub use x::X;\npub(super) use self::y::{Y as AY};\n",
    );
    // a::x names a::y through super, inside a use tree.
    write("a/x.rs", "use super::{y::Y, Other};\npub struct X;\n");
    // a::y names a::x inline; b names a::y through the crate.
    write("a/y.rs", "fn f() { let _ = super::x::X; }\npub struct Y;\n");
    write(
        "b.rs",
        "use crate::a::y::Y;\n// use crate::a::x::X; (a comment)\npub struct Thing;\n#[cfg(test)]\nmod tests { use crate::a::x::X; }\n",
    );
    // d names a::y only through re-exports under other names.
    write(
        "d.rs",
        "use crate::c::Why;\nfn f() { let _ = super::a::AY; }\n",
    );
    let graph_of = |dir: &Path| module_graph(dir);
    let graph = graph_of(&dir);
    let set = |names: &[&str]| names.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
    assert_eq!(graph["a::x"], set(&["a", "a::y"]));
    assert_eq!(graph["a::y"], set(&["a::x"]));
    assert_eq!(graph["b"], set(&["a::y"]));
    assert_eq!(graph["d"], set(&["a::y"]), "through renamed re-exports");
    assert_eq!(
        graph["c"],
        set(&[]),
        "a crate-visible re-export is not a use"
    );
    assert_eq!(graph["a"], set(&[]), "a re-export is not a use");
    assert_eq!(graph[""], set(&[]));
    let found = cycles(&dir);
    assert!(
        found
            .iter()
            .any(|c| c.first().map(String::as_str) == Some("a::x") && c.contains(&"a::y".into())),
        "{found:?}"
    );
    // A part may build on its module's core, and the core call its parts.
    write("a/mod.rs", "mod x;\nmod y;\nuse x::X;\npub struct Other;\n");
    assert!(graph_of(&dir)["a"].contains("a::x"));
    assert_eq!(cycles(&dir).len(), 2, "{:?}", cycles(&dir));
    // Break it: a::y no longer names a::x.
    write("a/y.rs", "pub struct Y;\n");
    assert!(cycles(&dir).is_empty(), "{:?}", cycles(&dir));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The domain performs no I/O (no clock, no randomness, no store, no HTTP,
/// no runtime), and no module of the shared crate, at any depth, depends
/// on itself: who uses whom stays readable from the files.
#[test]
fn the_domain_is_pure_and_shared_has_no_module_cycle() {
    let src = local::repo_root().join("shared/src");
    let forbidden = [
        "crate::auth",
        "crate::store",
        "crate::handlers",
        "crate::memory",
        "crate::http",
        "crate::world",
        "aws_sdk",
        "lambda_",
        "tokio",
        "getrandom",
        "Utc::now",
        "new_v4",
    ];
    let files = module_files(&src);
    let domain: Vec<_> = files
        .iter()
        .filter(|(module, _)| module.as_str() == "domain" || module.starts_with("domain::"))
        .collect();
    assert!(domain.len() > 10, "the domain's files are read");
    for (module, code) in domain {
        for word in forbidden {
            assert!(
                !code.contains(word),
                "{module} uses {word}: the domain does no I/O"
            );
        }
    }
    let graph = module_graph(&src);
    assert!(
        graph["store::holds"].contains("store")
            && graph["handlers::seats"].contains("memory::claims")
            && graph["memory"].contains("store")
            && graph["handlers::seats"].contains("app"),
        "the graph sees the crate's uses at every depth: {graph:?}"
    );
    // The store remembers nothing: no store module names the memory.
    for (module, uses) in &graph {
        if module == "store" || module.starts_with("store::") {
            assert!(
                !uses
                    .iter()
                    .any(|u| u == "memory" || u.starts_with("memory::")),
                "{module} uses the memory"
            );
        }
    }
    let found = cycles(&src);
    assert!(
        found.is_empty(),
        "modules that depend on themselves: {found:#?}"
    );
}

/// No crate of the workspace has a module that depends on itself through
/// its siblings, at any depth (the bench's were from splitting a file
/// without moving down what both halves shared).
#[test]
fn no_crate_has_a_module_cycle() {
    // functions/ is binaries only, a few lines each (src/bin/).
    for krate in ["shared", "local", "crowdcheck", "bench", "testkit"] {
        let src = local::repo_root().join(krate).join("src");
        assert!(!module_files(&src).is_empty(), "{krate}'s files are read");
        let found = cycles(&src);
        assert!(
            found.is_empty(),
            "{krate}: modules that depend on themselves: {found:#?}"
        );
    }
}
