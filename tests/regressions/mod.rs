//! Regressions of the corruption campaigns: each test is made from the
//! case that showed the bug, on a damaged copy of a project fixture (the
//! fuzz inputs beside this file are replayed by `validate_scrub`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::corruption::parse_salvage;
use crate::util::{data_files, fixtures, scratch_dir, sstkit, Run, Scratch};

// Damaged Statistics.db of every version: every command under a 256 MiB address-space limit.
mod bounded_memory;

// Every component cut short is an error, a ka Summary.db that loses only its tail too.
mod truncation;

// Metadata that disagrees with Data.db: scrub writes no partition it cannot vouch for.
mod scrub_metadata;

// A serialization header with damaged type names, repaired from --schema.
mod scrub_schema;

// A lost CompressionInfo.db is rebuilt from Data.db's chunks by scrub.
mod compression_info_lost;

// A Filter.db in another version's layout neither loses partitions nor hides keys.
mod filter_layout;

/// A writable copy of the sstable files of fixture `case`.
pub(crate) fn fixture_copy(case: &str, tag: &str) -> Scratch {
    let dir = scratch_dir("regression", tag);
    for e in std::fs::read_dir(fixtures().join(case)).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.contains("-big-") || name.contains("-bti-") {
            std::fs::copy(e.path(), dir.join(&name)).unwrap();
        }
    }
    dir
}

/// A writable copy of every file of the sstable directory `src`.
pub(crate) fn copy_of(src: &Path, tag: &str) -> Scratch {
    let dir = scratch_dir("regression", tag);
    for e in std::fs::read_dir(src).unwrap().flatten() {
        std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
    }
    dir
}

/// The one file of `dir` whose name ends with `suffix`.
pub(crate) fn component(dir: &Path, suffix: &str) -> PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with(suffix))
        .unwrap_or_else(|| panic!("{}: no {suffix}", dir.display()))
}

/// Every partition of the sstables in `dir`, by key (dump-data NDJSON).
pub(crate) fn partitions(dir: &Path) -> BTreeMap<String, Value> {
    let mut all = BTreeMap::new();
    for d in data_files(dir) {
        let r = sstkit(["dump-data", "-o", "ndjson", d.to_str().unwrap()]);
        assert_eq!(r.code, 0, "dump-data {}: {}", d.display(), r.stderr);
        all.extend(parse_salvage(&r.stdout));
    }
    all
}

/// `scrub --mode skip` of `dir` into a fresh directory: the run, the
/// partitions written, and the directory (removed when dropped).
pub(crate) fn scrub_skip(dir: &Path) -> (Run, BTreeMap<String, Value>, Scratch) {
    scrub_skip_with(dir, &[])
}

/// [`scrub_skip`] with more arguments (`extra`).
pub(crate) fn scrub_skip_with(
    dir: &Path,
    extra: &[&str],
) -> (Run, BTreeMap<String, Value>, Scratch) {
    let out = scratch_dir("regression", "out");
    let mut args = vec!["scrub", "--mode", "skip", "-o", "json", "--output-dir"];
    args.push(out.to_str().unwrap());
    args.extend_from_slice(extra);
    args.push(dir.to_str().unwrap());
    let r = sstkit(args);
    let written = partitions(out.path());
    (r, written, out)
}

/// The partitions of `written` that differ from (or are absent in) `intact`.
pub(crate) fn invented(
    written: &BTreeMap<String, Value>,
    intact: &BTreeMap<String, Value>,
) -> Vec<String> {
    written
        .iter()
        .filter(|(k, v)| intact.get(*k) != Some(*v))
        .map(|(k, _)| k.clone())
        .collect()
}
