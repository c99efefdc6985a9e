//! Where the repository is, for the modules that read its files
//! (template.yaml, the events/ files, the dev server's pages).

use std::path::PathBuf;

/// The repository root (this crate's parent folder), or `SEATCLAIM_ROOT`.
pub fn repo_root() -> PathBuf {
    std::env::var_os("SEATCLAIM_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".."))
}
