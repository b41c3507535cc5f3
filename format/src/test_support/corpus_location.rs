//! Where the shared corpus of real sstables is, for every test that reads
//! it: the unit tests of `sstkit-format` (through `test_support`) and the
//! integration tests (through `tests/util.rs`, which includes this file).
//!
//! `SSTKIT_CORPUS` names it when set; empty, or a path that is not a
//! directory, means "absent". Unset, it is `../shared/corpus` beside the
//! workspace root.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The corpus root, or None when it is absent; then a line naming the
/// calling test goes to stderr, uncaptured, so a plain `cargo test` shows
/// which corpus tests skipped.
pub fn corpus_root() -> Option<PathBuf> {
    let (p, origin) = match std::env::var_os("SSTKIT_CORPUS") {
        Some(v) => (PathBuf::from(v), "SSTKIT_CORPUS"),
        None => (workspace_root().join("../shared/corpus"), "default"),
    };
    if !p.as_os_str().is_empty() && p.is_dir() {
        return Some(p);
    }
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a corpus test");
    // Written to the stderr handle, not with eprintln!, which the test harness captures.
    let _ = writeln!(
        std::io::stderr(),
        "corpus absent ({origin}: {:?}): skipped the corpus part of {test}",
        p
    );
    None
}

/// The workspace root: the nearest ancestor of this crate holding Cargo.lock.
fn workspace_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .find(|d| d.join("Cargo.lock").is_file())
        .unwrap_or(manifest)
        .to_path_buf()
}
