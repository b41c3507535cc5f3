//! Bounded memory over damaged metadata: the commands that read
//! Statistics.db run under a 256 MiB address-space limit on copies of an
//! sstable of every version family whose Statistics.db is damaged (a
//! partition-count histogram that claims billions of partitions, 8-byte
//! fields set to `0x7fffffff`, runs of random bytes, seeded). A length or
//! count taken from the damaged file that sized an allocation would abort
//! the run (SIGABRT); every run must end with 0, 1 or 3.
//!
//! The `scrub_open` regression inputs (`tests/regressions/scrub_open/`, a
//! Statistics.db and a Data.db each) run the same way as `nb`, `oa` and `da`
//! sstables.

use std::path::{Path, PathBuf};

use sstkit_format::statistics::{MetadataKind, Statistics};
use sstkit_format::Sstable;

use crate::corruption::{run_limited_to, Rng};
use crate::util::{corpus, fixtures, repo, scratch_dir};

/// The address-space limit of every run, in KiB.
const LIMIT_KIB: u64 = 256 << 10;

/// The count `0x7fffffff` the damaged fields get (the `na` case of the
/// campaign that found the unbounded filter allocation).
const HUGE: i64 = 0x7fff_ffff;

/// One sstable to damage: its directory and, for pre-3.0 versions, the
/// table's CQL.
struct Source {
    dir: PathBuf,
    cql: Option<String>,
}

/// The fixtures of the versions sstkit's fixtures cover, and a
/// `legacy_<v>_clust` corpus set of every version family when the corpus is
/// here.
fn sources() -> Vec<Source> {
    let mut v: Vec<Source> = ["nb_clustering_nocompress", "oa_clustering", "da_counters"]
        .iter()
        .map(|c| Source {
            dir: fixtures().join(c),
            cql: None,
        })
        .collect();
    let Some(root) = corpus() else {
        return v;
    };
    for ver in [
        "jb", "ka", "la", "ma", "mb", "mc", "md", "me", "na", "nb", "nc", "oa", "da",
    ] {
        let dir = root.join(format!("cassandra/legacy_{ver}_clust"));
        if !dir.is_dir() {
            continue;
        }
        let cql = format!(
            "CREATE TABLE legacy_tables.legacy_{ver}_clust (pk text, ck text, val text, \
             PRIMARY KEY (pk, ck));"
        );
        v.push(Source {
            dir,
            cql: Some(cql),
        });
    }
    v
}

/// The Statistics.db file of the sstable in `dir`.
fn statistics_file(dir: &Path) -> PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with("Statistics.db"))
        .unwrap_or_else(|| panic!("{}: no Statistics.db", dir.display()))
}

/// Damaged copies of `orig` (Statistics.db of `data`): the first count of
/// the partition-size histogram made huge, two 8-byte fields set to
/// [`HUGE`], and a run of random bytes.
fn damages(data: &Path, orig: &[u8], rng: &mut Rng) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let sst = Sstable::open_path(data).unwrap();
    let st = Statistics::parse_lenient(orig, sst.features()).unwrap();
    // jb has no TOC (one legacy blob): the random damages only.
    if let Some(stats) = st.extent(MetadataKind::Stats) {
        // The histogram's bin count, then (offset:i64, count:i64) pairs.
        let at = stats.offset as usize + 4 + 8;
        let mut b = orig.to_vec();
        b[at..at + 8].copy_from_slice(&HUGE.to_be_bytes());
        out.push((format!("partition-count-huge@{at}"), b));
    }
    for _ in 0..2 {
        let at = rng.below(orig.len() as u64 - 8) as usize;
        let mut b = orig.to_vec();
        b[at..at + 8].copy_from_slice(&HUGE.to_be_bytes());
        out.push((format!("field-huge@{at}"), b));
    }
    let len = 1 + rng.below(32) as usize;
    let at = rng.below((orig.len() - len) as u64) as usize;
    let mut b = orig.to_vec();
    for x in &mut b[at..at + len] {
        *x = rng.next() as u8;
    }
    out.push((format!("bytes-{len}@{at}"), b));
    out
}

/// The commands run on a damaged copy in `dir` (their outputs under `out`).
fn commands(dir: &Path, out: &Path, schema: Option<&Path>) -> Vec<Vec<String>> {
    let d = dir.to_string_lossy().into_owned();
    let o = |n: &str| out.join(n).to_string_lossy().into_owned();
    let mut v: Vec<Vec<String>> = vec![
        vec![
            "scrub".into(),
            "--mode".into(),
            "skip".into(),
            "--output-dir".into(),
            o("scrub"),
        ],
        vec!["validate".into()],
        vec!["info".into()],
        vec!["dump-statistics".into()],
        vec!["partitions".into()],
        vec!["dump-data".into()],
        vec!["rewrite".into(), "--output-dir".into(), o("rewrite")],
    ];
    for a in &mut v {
        a.extend(["-o".into(), "json".into()]);
        if let Some(s) = schema {
            a.extend(["--schema".into(), s.to_string_lossy().into_owned()]);
            // Pre-3.0 versions are rewritten as a version sstkit writes.
            if a[0] == "rewrite" {
                a.extend(["--format-version".into(), "oa".into()]);
            }
        }
        a.push(d.clone());
    }
    v
}

/// Run every command on the sstable in `dir`: each must end with 0, 1 or 3
/// under the limit; failures are described in `bad`.
fn run_all(what: &str, dir: &Path, schema: Option<&Path>, bad: &mut Vec<String>) -> usize {
    let out = scratch_dir("bounded", "out");
    let mut n = 0;
    for args in commands(dir, out.path(), schema) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        n += 1;
        match run_limited_to(LIMIT_KIB, &args) {
            Ok(r) if matches!(r.code, 0 | 1 | 3) => {}
            Ok(r) => bad.push(format!(
                "{what}: sstkit {} exited {}: {}",
                args[0],
                r.code,
                r.stderr.lines().take(3).collect::<Vec<_>>().join(" | ")
            )),
            Err(e) => bad.push(format!("{what}: sstkit {}: {e}", args[0])),
        }
    }
    n
}

/// Copy the sstable files of `src` into `dst` (writable).
fn copy_sstable(src: &Path, dst: &Path) {
    for e in std::fs::read_dir(src).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.ends_with(".db") || name.ends_with(".txt") || name.contains("Digest") {
            std::fs::copy(e.path(), dst.join(&name)).unwrap();
        }
    }
}

#[test]
fn damaged_statistics_of_every_version_under_256_mib() {
    let mut rng = Rng(std::env::var("SSTKIT_CORRUPTION_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_0256));
    let mut bad = Vec::new();
    let (mut runs, mut families) = (0, 0);
    for src in sources() {
        let stats = statistics_file(&src.dir);
        let orig = std::fs::read(&stats).unwrap();
        let data = PathBuf::from(stats.to_string_lossy().replace("Statistics.db", "Data.db"));
        let name = src.dir.file_name().unwrap().to_string_lossy().into_owned();
        families += 1;
        for (damage, bytes) in damages(&data, &orig, &mut rng) {
            let copy = scratch_dir("bounded", &name);
            copy_sstable(&src.dir, copy.path());
            std::fs::write(copy.join(stats.file_name().unwrap()), &bytes).unwrap();
            let schema = src
                .cql
                .as_ref()
                .map(|c| crate::util::schema_file(copy.path(), "schema", c));
            runs += run_all(
                &format!("{name} {damage}"),
                copy.path(),
                schema.as_deref(),
                &mut bad,
            );
        }
    }
    eprintln!("bounded memory: {runs} runs over {families} sstables");
    assert!(
        bad.is_empty(),
        "{} failures:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn scrub_open_regressions_under_256_mib() {
    let root = repo().join("tests/regressions/scrub_open");
    let mut bad = Vec::new();
    let mut n = 0;
    for f in std::fs::read_dir(&root).unwrap().flatten() {
        let bytes = std::fs::read(f.path()).unwrap();
        let (stats, data) = sstkit_format::validate::fuzz::split(&bytes);
        let name = f.file_name().to_string_lossy().into_owned();
        for (v, format) in [("nb", "big"), ("oa", "big"), ("da", "bti")] {
            let dir = scratch_dir("bounded", &name);
            let p = |c: &str| dir.join(format!("{v}-1-{format}-{c}"));
            std::fs::write(p("Statistics.db"), stats).unwrap();
            std::fs::write(p("Data.db"), data).unwrap();
            std::fs::write(p("TOC.txt"), "Data.db\nStatistics.db\nTOC.txt\n").unwrap();
            n += run_all(&format!("{name} as {v}"), dir.path(), None, &mut bad);
        }
    }
    assert!(n > 0, "no inputs under {}", root.display());
    assert!(
        bad.is_empty(),
        "{} failures:\n{}",
        bad.len(),
        bad.join("\n")
    );
}
