//! Where the repository is, for the modules that read its files
//! (template.yaml, the events/ files, the dev server's pages).

use std::path::{Path, PathBuf};

/// The repository root: `SEATCLAIM_ROOT` when set, else found at run time
/// (the parent of the package cargo runs this for, or the nearest folder
/// up from the working one that holds the workspace), else the checkout
/// this crate was compiled in. Found at run time because two checkouts
/// sharing a `CARGO_TARGET_DIR` share this crate's build: cargo reused the
/// one compiled for a clone, and a test in another checkout read the
/// clone's template.yaml.
pub fn repo_root() -> PathBuf {
    if let Some(root) = std::env::var_os("SEATCLAIM_ROOT") {
        return PathBuf::from(root);
    }
    let run_by_cargo = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .and_then(|package| package.parent().map(Path::to_path_buf));
    let working = std::env::current_dir().ok();
    let up_from_working = working
        .iter()
        .flat_map(|dir| dir.ancestors())
        .map(Path::to_path_buf);
    run_by_cargo
        .into_iter()
        .chain(up_from_working)
        .find(|dir| is_repo_root(dir))
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".."))
}

/// Whether `dir` holds this repository's workspace.
fn is_repo_root(dir: &Path) -> bool {
    dir.join("template.yaml").is_file() && dir.join("local").join("Cargo.toml").is_file()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_found_at_run_time_holds_the_template() {
        let root = repo_root();
        assert!(is_repo_root(&root), "{}", root.display());
        assert!(!is_repo_root(&root.join("local")));
    }
}
