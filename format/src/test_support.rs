//! Corpus helpers shared by the decoders' tests: finding the files of the
//! shared corpus (read in place; the tests skip when it is absent), which
//! sets are corrupt on purpose (MANIFEST.md), and the few Statistics.db facts
//! (partitioner, clustering fixed lengths) the tests need, parsed minimally
//! here so they do not depend on the modules under test.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use crate::component::Component;
use crate::cur::Cur;
use crate::descriptor::{parse_file_name, Descriptor};
use crate::token::Partitioner;
use crate::version::{Features, Version};

/// The Data.db of the bundled Cassandra fixture `case`
/// (`fixtures/cassandra/<case>`), or None when it is absent.
pub fn fixture_data(case: &str) -> Option<PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/cassandra")
        .join(case);
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with("-Data.db"))
}

/// A scratch directory `sstkit-<what>-<random>` under the system temp dir,
/// removed when dropped.
pub fn scratch(what: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("sstkit-{what}-"))
        .tempdir()
        .expect("create scratch dir")
}

/// One corpus component file.
#[derive(Debug, Clone)]
pub struct File {
    pub path: PathBuf,
    /// `origin/set`, e.g. `scylladb/large_partition`.
    pub set: String,
    pub desc: Descriptor,
    /// Component suffix as written.
    pub component: String,
}

mod corpus_location;

/// The corpus root (`SSTKIT_CORPUS`, else `../shared/corpus`), or None, with
/// a note naming the test on stderr, when absent.
pub fn root() -> Option<PathBuf> {
    corpus_location::corpus_root()
}

/// Every corpus file whose component suffix satisfies `pred`, of a
/// version sstkit knows, sorted by path.
pub fn files(pred: impl Fn(&str) -> bool) -> Vec<File> {
    let Some(root) = root() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for origin in ["cassandra", "scylladb"] {
        let Ok(sets) = std::fs::read_dir(root.join(origin)) else {
            continue;
        };
        for set in sets.flatten() {
            let Ok(rd) = std::fs::read_dir(set.path()) else {
                continue;
            };
            for f in rd.flatten() {
                let name = f.file_name().to_string_lossy().into_owned();
                let Ok(p) = parse_file_name(&set.path(), &name) else {
                    continue;
                };
                if !pred(&p.component) {
                    continue;
                }
                out.push(File {
                    path: f.path(),
                    set: format!("{origin}/{}", set.file_name().to_string_lossy()),
                    desc: p.descriptor,
                    component: p.component,
                });
            }
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// Sets that are deliberately corrupt somewhere (INDEX.tsv / MANIFEST.md):
/// a decoder may return an error for them, never panic.
pub fn is_corrupt_set(set: &str) -> bool {
    let name = set.rsplit('/').next().unwrap_or(set);
    [
        "broken_",
        "bad",
        "corrupt-",
        "invalid",
        "integrity_check",
        "empty_index",
    ]
    .iter()
    .any(|p| name.starts_with(p) || name.contains(p))
        || matches!(
            name,
            "mismatched_timestamp"
                | "zero_sized_histogram"
                | "compression-premature-eof"
                | "incompatible_serialized_type"
                | "wrongrange"
                | "static_column"
                | "static_with_clustering"
                // Partial by design: empty Data.db/Index.db.
                | "bigsummary"
        )
}

impl File {
    pub fn version(&self) -> Version {
        self.desc.version
    }
    pub fn features(&self) -> Features {
        self.desc.version.features()
    }
    /// The row-format BIG versions the brief asks for (ma..oa, Scylla mc..me).
    pub fn is_row_big(&self) -> bool {
        let v = self.version();
        v.as_str() >= "ma" && v.as_str() <= "oa" && !v.is_scylla_only()
    }
    pub fn is_corrupt(&self) -> bool {
        is_corrupt_set(&self.set)
    }
    pub fn read(&self) -> Vec<u8> {
        std::fs::read(&self.path).unwrap()
    }
    pub fn sibling(&self, suffix: &str) -> Option<PathBuf> {
        let p = self.desc.path_of(suffix);
        p.is_file().then_some(p)
    }
    pub fn read_sibling(&self, suffix: &str) -> Option<Vec<u8>> {
        std::fs::read(self.sibling(suffix)?).ok()
    }
    /// Statistics component offset by type (0 VALIDATION, 3 HEADER).
    fn stats_component<'a>(&self, stats: &'a [u8], ty: i32) -> Option<Cur<'a>> {
        let mut c = Cur::new(stats, Component::Statistics, 0);
        let n = c.i32("n").ok()?;
        if self.features().metadata_checksum {
            c.skip(4, "crc").ok()?;
        }
        for _ in 0..n {
            let (t, off) = (c.i32("t").ok()?, c.i32("o").ok()?);
            if t == ty {
                let mut s = Cur::new(stats, Component::Statistics, 0);
                s.seek(off as usize, "o").ok()?;
                return Some(s);
            }
        }
        None
    }
    /// The partitioner from Statistics.db VALIDATION.
    pub fn partitioner(&self) -> Option<Partitioner> {
        let stats = self.read_sibling("Statistics.db")?;
        let mut c = self.stats_component(&stats, 0)?;
        Partitioner::parse(&c.utf("p").ok()?).ok()
    }
    /// Fixed lengths of the clustering columns from the serialization header.
    pub fn clustering_fixed(&self) -> Option<Vec<Option<usize>>> {
        let stats = self.read_sibling("Statistics.db")?;
        let mut c = self.stats_component(&stats, 3)?;
        for _ in 0..3 {
            c.uvint("stats").ok()?;
        }
        c.vint_bytes("pk").ok()?;
        let n = c.uvint("n").ok()?;
        let mut out = Vec::new();
        for _ in 0..n {
            let t = String::from_utf8_lossy(c.vint_bytes("t").ok()?).into_owned();
            out.push(fixed_len_of(&t));
        }
        Some(out)
    }
}

/// Fixed length of a marshal type string (§3.12), enough for the corpus.
pub fn fixed_len_of(t: &str) -> Option<usize> {
    let t = t
        .trim()
        .trim_start_matches("org.apache.cassandra.db.marshal.");
    if let Some(inner) = t
        .strip_prefix("ReversedType(")
        .and_then(|s| s.strip_suffix(')'))
    {
        return fixed_len_of(inner);
    }
    match t {
        "BooleanType" => Some(1),
        "Int32Type" | "FloatType" => Some(4),
        "LongType" | "DoubleType" | "TimestampType" | "DateType" => Some(8),
        "UUIDType" | "TimeUUIDType" | "LexicalUUIDType" => Some(16),
        "EmptyType" => Some(0),
        _ => None,
    }
}

/// `origin/set` and file shortened to `set/file` (the names [`check_failures`] takes).
pub fn short_name(f: &File) -> String {
    let set = f.set.rsplit('/').next().unwrap_or(&f.set);
    let file = f.path.file_name().map(|n| n.to_string_lossy().into_owned());
    format!("{set}/{}", file.unwrap_or_default())
}

/// A corpus test's detections against MANIFEST.md: `failed` (short names,
/// see [`short_name`]) must be exactly the files of `must_fail` that are
/// present in `files`. A file that stops failing is a lost detection; a
/// corrupt-set file that starts failing is a change to look at; both fail
/// the test. Every `must_fail` entry must belong to a corrupt set.
pub fn check_failures(
    what: &str,
    files: &[File],
    failed: &std::collections::BTreeSet<String>,
    must_fail: &[&str],
) {
    use std::collections::BTreeSet;
    let present: BTreeSet<String> = files.iter().map(short_name).collect();
    for m in must_fail {
        let set = m.split('/').next().unwrap_or(m);
        assert!(is_corrupt_set(set), "{what}: {m} is not in a corrupt set");
    }
    let want: BTreeSet<String> = must_fail
        .iter()
        .filter(|m| present.contains(**m))
        .map(|m| m.to_string())
        .collect();
    let lost: Vec<&String> = want.difference(failed).collect();
    let new: Vec<&String> = failed.difference(&want).collect();
    assert!(
        lost.is_empty() && new.is_empty(),
        "{what}: corrupt files no longer detected: {lost:?}; corrupt files failing that \
         MANIFEST.md does not say should: {new:?}"
    );
}
