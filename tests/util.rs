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

// The one definition of where the corpus is, shared with the format crate's unit tests.
#[path = "../format/src/test_support/corpus_location.rs"]
mod corpus_location;

/// The corpus root (`SSTKIT_CORPUS`, else `../shared/corpus`), or None, with
/// a note naming the test on stderr, when absent.
pub fn corpus() -> Option<PathBuf> {
    corpus_location::corpus_root()
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

/// A scratch directory under the system temp dir, removed when dropped.
///
/// It is kept (and named on stderr) when dropped during a panic, i.e. a
/// failing test, or when `SSTKIT_KEEP_SCRATCH` is set, so it can be looked
/// at; anything else left in the temp dir after a run is a leak.
pub struct Scratch(tempfile::TempDir);

impl Scratch {
    pub fn path(&self) -> &Path {
        self.0.path()
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        self.0.path()
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        self.0.path()
    }
}

impl AsRef<std::ffi::OsStr> for Scratch {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.path().as_os_str()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if std::thread::panicking() || std::env::var_os("SSTKIT_KEEP_SCRATCH").is_some() {
            self.0.disable_cleanup(true);
            eprintln!("kept scratch dir {}", self.0.path().display());
        }
    }
}

/// A fresh, empty scratch directory `sstkit-<prefix>-<name>-<random>`
/// under the system temp dir (the prefix names the test that left it).
pub fn scratch_dir(prefix: &str, name: &str) -> Scratch {
    let r = tempfile::Builder::new()
        .prefix(&format!("sstkit-{prefix}-{name}-"))
        .tempdir();
    Scratch(r.expect("create scratch dir"))
}

/// Write `cql` (a CREATE TABLE for `--schema`) to `dir/name.cql`.
pub fn schema_file(dir: &Path, name: &str, cql: &str) -> PathBuf {
    let p = dir.join(format!("{name}.cql"));
    std::fs::write(&p, cql).unwrap();
    p
}

/// An input for `sstkit write`: the schema of `ks.NAME (k bigint, c int,
/// v text, PRIMARY KEY (k, c))` and an NDJSON file of `partitions`
/// partitions, partition `k` with `rows(k)` rows whose `v` is `value(k, c)`.
pub fn kcv_input(
    dir: &Path,
    name: &str,
    partitions: u64,
    rows: impl Fn(u64) -> u32,
    mut value: impl FnMut(u64, u32) -> String,
) -> (PathBuf, PathBuf) {
    use std::io::Write as _;
    let schema = schema_file(
        dir,
        name,
        &format!("CREATE TABLE ks.{name} (k bigint, c int, v text, PRIMARY KEY (k, c));"),
    );
    let input = dir.join(format!("{name}.ndjson"));
    let mut f = std::io::BufWriter::new(std::fs::File::create(&input).unwrap());
    for k in 0..partitions {
        let rows: Vec<String> = (0..rows(k))
            .map(|c| {
                format!(
                    r#"{{"type":"clustering-row","key":{{"raw":"0004{c:08x}"}},"columns":{{"v":{{"timestamp":1,"value":"{}"}}}}}}"#,
                    value(k, c)
                )
            })
            .collect();
        writeln!(
            f,
            r#"{{"key":{{"raw":"{k:016x}"}},"clustering_elements":[{}]}}"#,
            rows.join(",")
        )
        .unwrap();
    }
    f.flush().unwrap();
    (schema, input)
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

/// A scratch dir goes away with its guard, contents and all, and stays when
/// its test panics.
#[test]
fn scratch_dir_is_removed_on_drop_and_kept_on_panic() {
    if std::env::var_os("SSTKIT_KEEP_SCRATCH").is_some() {
        eprintln!("skipping: SSTKIT_KEEP_SCRATCH keeps every scratch dir");
        return;
    }
    let s = scratch_dir("util", "drop");
    let path = s.to_path_buf();
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("sstkit-util-drop-"), "{name}");
    std::fs::create_dir(s.join("sub")).unwrap();
    std::fs::write(s.join("sub/f"), b"x").unwrap();
    drop(s);
    assert!(!path.exists(), "{} survived its guard", path.display());

    let kept = std::panic::catch_unwind(|| {
        let s = scratch_dir("util", "panic");
        let p = s.to_path_buf();
        std::panic::panic_any(p);
    });
    let kept = *kept.unwrap_err().downcast::<PathBuf>().unwrap();
    assert!(kept.is_dir(), "{} removed during a panic", kept.display());
    std::fs::remove_dir_all(&kept).unwrap();
}

/// The corpus sstables Scylla's `sstable_3_x_test` wrote with shadowable
/// row deletions, each with that deletion's timestamp as MANIFEST.md gives
/// it; empty when the corpus is absent.
pub fn scylla_shadowable_corpus() -> Vec<(PathBuf, i64)> {
    let Some(root) = corpus() else {
        return Vec::new();
    };
    [
        ("write_shadowable_deletion", 1540230874370065),
        ("write_regular_and_shadowable_deletion", 1540230874370002),
    ]
    .into_iter()
    .map(|(set, ts)| {
        let dir = root
            .join("scylladb")
            .join(format!("3.x-uncompressed-{set}"));
        (dir.join("mc-1-big-Data.db"), ts)
    })
    .filter(|(p, _)| p.exists())
    .collect()
}

/// `dump-data -o ndjson` of `data`, one record per partition, without the
/// per-line sstable path.
pub fn dump_records(data: &Path) -> Vec<serde_json::Value> {
    let p = data.to_str().unwrap();
    let r = sstkit(["dump-data", "-o", "ndjson", p]);
    assert_eq!(r.code, 0, "dump-data {p}: {}", r.stderr);
    r.stdout
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            v.as_object_mut().unwrap().remove("sstable");
            v
        })
        .collect()
}

/// The raw partition keys and timestamps of the shadowable deletions a
/// dump shows apart from the regular ones (Scylla's `row_tombstone`: the
/// shadowable one differs only when it is the newer).
pub fn shadowable_deletions(records: &[serde_json::Value]) -> Vec<(String, i64)> {
    let mut v = Vec::new();
    for p in records {
        let key = p["key"]["raw"].as_str().unwrap_or_default().to_string();
        for e in p["clustering_elements"].as_array().into_iter().flatten() {
            let s = &e["shadowable_tombstone"];
            if e["type"] == "clustering-row" && !s.is_null() && *s != e["tombstone"] {
                v.push((key.clone(), s["timestamp"].as_i64().unwrap()));
            }
        }
    }
    v
}
