//! Tests of the bloom-filter writer: Cassandra's own Filter.db rebuilt from
//! the partition keys, sizing as `BloomCalculations` computes it.

use std::path::{Path, PathBuf};

use super::*;
use crate::data::{Fragment, ScanReader};
use crate::filter::BloomFilter;
use crate::index::IndexReader;
use crate::sstable::Sstable;
use crate::statistics::Statistics;
use crate::test_support as corpus;
use crate::version::Version;

fn feats(v: &str) -> Features {
    Version::parse(v).unwrap().features()
}

#[test]
fn spec_follows_the_table() {
    // 0.01: 10 buckets (the first row whose best rate is <= 0.01), then 5
    // hashes (the fewest still <= 0.01 in that row).
    assert_eq!(bloom_spec(13, 0.01), Some((5, 10)));
    assert_eq!(bloom_spec(1000, 0.1), Some((3, 5)));
    assert_eq!(bloom_spec(0, 0.001), Some((7, 15)));
    // At or above the 2-bucket rate: C*'s fixed answer.
    assert_eq!(bloom_spec(5, 0.5), Some((2, 1)));
    // Below the best rate of the table: unreachable.
    assert_eq!(bloom_spec(5, 1e-6), None);
    let f = FilterBuilder::new(13, 0.01, &feats("da")).unwrap();
    // 13 × 10 + 20 = 150 bits: 3 words.
    assert_eq!(
        (f.hash_count(), f.word_count(), f.serialized_size()),
        (5, 3, 32)
    );
    let f = FilterBuilder::new(0, 0.01, &feats("nb")).unwrap();
    assert_eq!(f.word_count(), 1);
    let none = FilterBuilder::new(10, 1.0, &feats("nb")).unwrap();
    assert!(!none.writes_file());
    let mut out = Vec::new();
    none.write_to(&mut out).unwrap();
    assert!(out.is_empty());
    assert!(FilterBuilder::new(10, 0.0, &feats("nb")).is_err());
    assert!(FilterBuilder::new(10, f64::NAN, &feats("nb")).is_err());
    assert!(FilterBuilder::new(u64::MAX / 4, 0.01, &feats("nb")).is_err());
}

#[test]
fn every_layout_reads_back() {
    let keys: Vec<Vec<u8>> = (0..2000u32).map(|i| i.to_be_bytes().to_vec()).collect();
    for v in ["ka", "la", "mc", "nb", "oa", "da"] {
        let mut f = FilterBuilder::new(keys.len() as u64, 0.01, &feats(v)).unwrap();
        keys.iter().for_each(|k| f.add(k));
        let mut b = Vec::new();
        f.write_to(&mut b).unwrap();
        assert_eq!(b.len() as u64, f.serialized_size());
        let r = BloomFilter::parse(&b, &feats(v)).unwrap();
        assert!(keys.iter().all(|k| r.may_contain(k)), "{v}");
        let fp = (10_000..30_000u32)
            .filter(|i| r.may_contain(&i.to_be_bytes()))
            .count();
        // Designed for 1 %: allow up to 2 %.
        assert!(fp < 400, "{v}: {fp} false positives of 20000");
    }
}

/// Partition keys of an sstable, in order: from Index.db, or Data.db for BTI.
fn keys_of(sst: &Sstable, stats: &Statistics) -> Option<Vec<Vec<u8>>> {
    if let Ok(index) = sst.read_component(Component::Index) {
        let keys = IndexReader::new(&index, sst.features())
            .entries()
            .map(|e| e.map(|e| e.key.to_vec()))
            .collect::<Result<Vec<_>>>();
        return keys.ok();
    }
    let h = stats.header.as_ref()?;
    let mut r = ScanReader::new(sst, h).ok()?;
    let mut keys = Vec::new();
    while let Some(f) = r.next_fragment().ok()? {
        if let Fragment::PartitionStart { key, .. } = f {
            keys.push(key.to_vec());
        }
    }
    Some(keys)
}

/// What rebuilding one Filter.db gave.
#[derive(Debug, PartialEq)]
enum Outcome {
    Identical,
    /// Identical in the old word layout with the new hash order, which a
    /// few corpus files use against their version (see
    /// [`BloomFilter::with_layout`]).
    Quirk,
    /// Cassandra sized it for another key count (an estimate).
    OtherSize,
}

/// Build the Filter.db of the sstable at `data` from its keys, the fp
/// chance of its Statistics.db and the exact key count; compare.
fn rebuild(data: &Path) -> Option<Outcome> {
    let sst = Sstable::open_path(data).ok()?;
    let want = sst.read_component(Component::Filter).ok()?;
    let stats = Statistics::parse_lenient(
        &sst.read_component(Component::Statistics).ok()?,
        sst.features(),
    )
    .ok()?;
    let fp = stats.validation.as_ref()?.bloom_filter_fp_chance;
    let keys = keys_of(&sst, &stats)?;
    let feats = sst.features();
    let build = |feats: &Features| {
        let mut f = FilterBuilder::new(keys.len() as u64, fp, feats).unwrap();
        keys.iter().for_each(|k| f.add(k));
        let mut got = Vec::new();
        f.write_to(&mut got).unwrap();
        let read = BloomFilter::parse(&got, feats).unwrap();
        assert!(
            keys.iter().all(|k| read.may_contain(k)),
            "{}",
            data.display()
        );
        (f, got)
    };
    let (f, got) = build(&feats);
    if got == want {
        return Some(Outcome::Identical);
    }
    let mut quirk = feats;
    (quirk.old_bf_format, quirk.old_bf_hash_order) = (true, false);
    if build(&quirk).1 == want {
        return Some(Outcome::Quirk);
    }
    let theirs = BloomFilter::parse(&want, &feats).unwrap();
    // Same size and hash count: the bits must agree.
    assert!(
        theirs.word_count() != f.word_count() || theirs.hash_count() != f.hash_count(),
        "{}: same shape ({} words, {} hashes), other bits",
        data.display(),
        f.word_count(),
        f.hash_count()
    );
    Some(Outcome::OtherSize)
}

fn data_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.retain(|p| p.to_string_lossy().ends_with("-Data.db"));
    v.sort();
    v
}

/// Every fixture's Filter.db (nb, oa, da, all flushed) is rebuilt byte for
/// byte with the exact key count, which is what a flush sizes it for.
#[test]
fn fixture_filters_are_rebuilt_byte_for_byte() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/cassandra");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    dirs.sort();
    let mut n = 0;
    for d in dirs.iter().filter(|d| d.is_dir()) {
        for data in data_files(d) {
            let out = rebuild(&data);
            assert_eq!(out, Some(Outcome::Identical), "{}", data.display());
            n += 1;
        }
    }
    assert!(n >= 40, "{n} fixture sstables");
}

/// Corpus sstables with a Filter.db: identical when Cassandra sized the
/// filter for the exact key count (flushes); compactions size it for an
/// estimate, and then every key is still present.
#[test]
fn corpus_filters() {
    let files = corpus::files(|c| c == "Filter.db");
    let (mut same, mut quirks, mut other, mut skipped) = (0, 0, 0, 0);
    for f in files
        .iter()
        .filter(|f| !f.is_corrupt() && !f.desc.version.is_scylla_only())
    {
        let Some(data) = f.sibling("Data.db") else {
            skipped += 1;
            continue;
        };
        match rebuild(&data) {
            Some(Outcome::Identical) => same += 1,
            Some(Outcome::Quirk) => {
                let name = f.set.rsplit('/').next().unwrap_or("");
                assert!(
                    name == "bloom-filter-la"
                        || (name.starts_with("legacy_na_") && name.ends_with("_compact")),
                    "{}",
                    f.path.display()
                );
                quirks += 1;
            }
            Some(Outcome::OtherSize) => {
                eprintln!("sized for another key count: {}", f.path.display());
                other += 1
            }
            None => skipped += 1,
        }
    }
    eprintln!(
        "corpus Filter.db: {same} identical, {quirks} identical in the quirk layout, {other} sized for another key count, {skipped} skipped"
    );
    if !files.is_empty() {
        assert!(same > other, "{same} identical, {other} not");
    }
}
