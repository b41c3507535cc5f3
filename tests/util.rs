//! Helpers shared by the integration tests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// Result of one run of the binary.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Run `sstkit` with `args`.
pub fn sstkit<I, S>(args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    // Text output follows COLUMNS and NO_COLOR: fixed, so results do not
    // depend on the shell the tests run from.
    let out = Command::new(env!("CARGO_BIN_EXE_sstkit"))
        .args(args)
        .current_dir(repo())
        .env("COLUMNS", "80")
        .env_remove("NO_COLOR")
        .output()
        .expect("run sstkit");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `../shared/corpus`, or None (with a message) when absent.
pub fn corpus() -> Option<PathBuf> {
    let p = repo().join("../shared/corpus");
    if p.is_dir() {
        Some(p)
    } else {
        eprintln!("skipping: ../shared/corpus is absent");
        None
    }
}

/// The project fixtures directory of Cassandra-written cases.
pub fn fixtures() -> PathBuf {
    repo().join("fixtures/cassandra")
}

/// Every fixture case directory (sorted).
pub fn fixture_cases() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(fixtures())
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The Data.db files in a directory (sorted).
pub fn data_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.to_string_lossy().ends_with("-Data.db"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// A fresh scratch directory `sstkit-<prefix>-<pid>-<name>` under the
/// system temp dir (removed and recreated).
pub fn scratch_dir(prefix: &str, name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("sstkit-{prefix}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Write `cql` (a CREATE TABLE for `--schema`) to `dir/name.cql`.
pub fn schema_file(dir: &Path, name: &str, cql: &str) -> PathBuf {
    let p = dir.join(format!("{name}.cql"));
    std::fs::write(&p, cql).unwrap();
    p
}

/// `sstkit write -o json --from input --schema schema --output-dir dir
/// --format-version version EXTRA...`.
pub fn write_from(input: &Path, schema: &Path, dir: &Path, version: &str, extra: &[&str]) -> Run {
    let mut args = vec![
        "write",
        "-o",
        "json",
        "--from",
        input.to_str().unwrap(),
        "--schema",
        schema.to_str().unwrap(),
        "--output-dir",
        dir.to_str().unwrap(),
        "--format-version",
        version,
    ];
    args.extend_from_slice(extra);
    sstkit(args)
}
