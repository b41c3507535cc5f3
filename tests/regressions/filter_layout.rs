//! A Filter.db written in another version's layout: a filter is not
//! self-describing, and the pre-release `legacy_na_*_compact` files of the
//! corpus use the old word layout with the new hash order. Read in their
//! version's layout they reject every key that is there.

use super::{component, fixture_copy, invented, partitions, scrub_skip};
use crate::util::{fixtures, scratch_dir, sstkit};

/// Rewrite the bits of `dir`'s Filter.db (an `na`+ byte layout) in the old
/// layout of big-endian 64-bit words, the hash order unchanged: the
/// `legacy_na_*_compact` quirk.
fn old_word_layout(dir: &std::path::Path) {
    let path = component(dir, "Filter.db");
    let mut b = std::fs::read(&path).unwrap();
    // hash count and word count (two i32), then the words.
    for w in b[8..].chunks_exact_mut(8) {
        w.reverse();
    }
    std::fs::write(&path, b).unwrap();
}

/// Flip bit `bit` of Data.db byte `at` in `dir`.
fn flip(dir: &std::path::Path, at: usize, bit: u8) {
    let path = component(dir, "Data.db");
    let mut b = std::fs::read(&path).unwrap();
    b[at] ^= 1 << bit;
    std::fs::write(&path, b).unwrap();
}

/// Campaign seed 41: `legacy_na_clust_counter_compact` with one bit flipped
/// in its second compressed chunk lost the two partitions after it, though
/// the chunks they lie in pass their checksums. Resynchronising through the
/// index, scrub checked each indexed key against Filter.db read in the
/// version's layout, which rejects them all. The filter is now read in the
/// layout that holds the index's keys.
#[test]
fn filter_in_another_layout_loses_nothing_after_damage() {
    let mut cases = Vec::new();
    // 4 KiB LZ4 chunks: a bit of compressed chunk 10 damages one chunk.
    let fixture = fixture_copy("nb_clustering_lz4_4k", "filter_layout");
    old_word_layout(&fixture);
    cases.push((
        fixtures().join("nb_clustering_lz4_4k"),
        fixture,
        30_500,
        3u8,
    ));
    match crate::util::corpus() {
        Some(c) => {
            let src = c.join("cassandra/legacy_na_clust_counter_compact");
            let dir = scratch_dir("regression", "na_counter_compact");
            for e in std::fs::read_dir(&src).unwrap().flatten() {
                std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
            }
            cases.push((src, dir, 1864, 3));
        }
        None => {
            eprintln!("filter_in_another_layout_loses_nothing_after_damage: corpus case skipped")
        }
    }
    for (src, dir, at, bit) in &cases {
        let name = src.file_name().unwrap().to_string_lossy().into_owned();
        let intact = partitions(src);
        let recoverable = outside_damaged_chunk(src, *at as u64);
        assert!(!recoverable.is_empty(), "{name}");
        flip(dir, *at, *bit);
        let (r, written, _) = scrub_skip(dir);
        assert_eq!(r.code, 1, "{name}: {}", r.stderr);
        let bad = invented(&written, &intact);
        assert!(
            bad.is_empty(),
            "{name}: partitions written altered: {bad:?}"
        );
        let lost: Vec<&String> = recoverable
            .iter()
            .filter(|k| !written.contains_key(k.as_str()))
            .collect();
        assert!(
            lost.is_empty(),
            "{name}: {} of {} partitions outside the damaged chunk not written: {lost:?}",
            lost.len(),
            recoverable.len()
        );
    }
}

/// The raw keys (hex) of the partitions of the compressed sstable `src`
/// that lie wholly outside the chunk holding Data.db byte `at`: those a
/// scrub of that damage must write.
fn outside_damaged_chunk(src: &std::path::Path, at: u64) -> Vec<String> {
    let data = component(src, "Data.db");
    let d = data.to_str().unwrap();
    let r = sstkit(["dump-compression-info", "-o", "json", d]);
    let info: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let info = info["sstables"]
        .as_object()
        .unwrap()
        .values()
        .next()
        .unwrap();
    let offsets: Vec<u64> = info["offsets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o.as_u64().unwrap())
        .collect();
    let chunk = offsets.iter().filter(|o| **o <= at).count() as u64 - 1;
    let len = info["chunk_len"].as_u64().unwrap();
    let (lo, hi) = (chunk * len, (chunk + 1) * len);
    let r = sstkit(["partitions", "-o", "ndjson", d]);
    r.stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|p| p["type"] == "partition")
        .filter(|p| {
            let start = p["offset"].as_u64().unwrap();
            let end = start + p["size"].as_u64().unwrap();
            end <= lo || start >= hi
        })
        .map(|p| p["key"]["raw"].as_str().unwrap().to_string())
        .collect()
}

/// The same filter made `dump-data -k` and `read` say an intact sstable's
/// keys are absent (`legacy_na_*_compact`: "bloom filter says absent").
#[test]
fn filter_in_another_layout_finds_keys() {
    let dir = fixture_copy("nb_clustering_lz4_4k", "filter_layout_read");
    old_word_layout(&dir);
    let intact = partitions(&fixtures().join("nb_clustering_lz4_4k"));
    let d = dir.to_str().unwrap();
    for key in ["sa:11", "us:3", "ap:5"] {
        let r = sstkit(["dump-data", "-o", "ndjson", "-k", key, d]);
        assert_eq!(r.code, 0, "dump-data -k {key}: {}", r.stderr);
        let got = crate::corruption::parse_salvage(&r.stdout);
        assert_eq!(got.len(), 1, "dump-data -k {key}: {}", r.stdout);
        for (k, v) in &got {
            assert_eq!(intact.get(k), Some(v), "dump-data -k {key}");
        }
        let r = sstkit(["read", "-o", "ndjson", "-k", key, d]);
        assert_eq!(r.code, 0, "read -k {key}: {}", r.stderr);
    }
}
