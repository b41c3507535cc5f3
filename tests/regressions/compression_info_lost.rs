//! A lost CompressionInfo.db (issue 37, item 3): scrub rebuilds it by
//! walking the compressed Data.db, whose chunks are each followed by the
//! checksum of their bytes, and salvages as it would with the real one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use sstkit_format::chunk_walk::{rebuild, ChunkLengthSource};
use sstkit_format::compression::CompressionInfo;
use sstkit_format::Sstable;

use super::{component, partitions, scrub_skip};
use crate::util::{corpus, repo, scratch_dir, sstkit, Scratch};

/// Every fixture case directory with a compressed sstable.
fn compressed_fixtures() -> Vec<PathBuf> {
    let mut cases = Vec::new();
    for group in ["cassandra", "expiring"] {
        for e in std::fs::read_dir(repo().join("fixtures").join(group))
            .unwrap()
            .flatten()
        {
            let dir = e.path();
            if dir.is_dir() && has_suffix(&dir, "CompressionInfo.db") {
                cases.push(dir);
            }
        }
    }
    cases.sort();
    cases
}

fn has_suffix(dir: &Path, suffix: &str) -> bool {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .any(|e| e.file_name().to_string_lossy().ends_with(suffix))
}

/// A copy of the sstable files of `dir` (every file but the fixtures'
/// expected outputs), with its CompressionInfo.db files deleted when `lose`.
fn copy_of(dir: &Path, lose: bool) -> Scratch {
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    let out = scratch_dir("cinfo", &name);
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        let sstable_file = n.ends_with(".db") || n.ends_with(".txt") || n.contains("Digest");
        if e.path().is_file() && sstable_file && !(lose && n.ends_with("CompressionInfo.db")) {
            std::fs::copy(e.path(), out.join(&n)).unwrap();
        }
    }
    out
}

/// `sstkit validate` of every Data.db scrub wrote into `out`: exit 0.
fn assert_output_valid(case: &str, out: &Path) {
    let data = crate::util::data_files(out);
    assert!(!data.is_empty(), "{case}: no sstable written");
    for d in data {
        let v = sstkit(["validate", d.to_str().unwrap()]);
        assert_eq!(v.code, 0, "{case}: the output is valid: {}", v.stdout);
        assert!(
            d.with_file_name(
                d.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .replace("Data.db", "CompressionInfo.db")
            )
            .exists(),
            "{case}: the output has its own CompressionInfo.db"
        );
    }
}

/// With CompressionInfo.db deleted from any compressed fixture (every
/// version, LZ4, Snappy, Deflate and Zstd, 4 KiB to 16 KiB chunks), scrub
/// rebuilds it, says so, writes every partition of the intact sstable, and
/// the result passes `validate`.
#[test]
fn lost_compression_info_is_rebuilt_for_every_compressed_fixture() {
    let cases = compressed_fixtures();
    assert!(cases.len() >= 80, "{} compressed fixtures", cases.len());
    for dir in cases {
        let case = dir.file_name().unwrap().to_string_lossy().into_owned();
        let intact = partitions(&dir);
        let copy = copy_of(&dir, true);
        let (r, written, out) = scrub_skip(&copy);
        assert_eq!(r.code, 1, "{case}: {}{}", r.stdout, r.stderr);
        let report: Value = serde_json::from_str(&r.stdout).unwrap();
        let text = report.to_string();
        assert!(
            text.contains("missing_component")
                && text.contains("CompressionInfo.db is missing: rebuilt from Data.db"),
            "{case}: the rebuild is a finding: {text}"
        );
        assert_eq!(written, intact, "{case}: every partition written as it was");
        assert_output_valid(&case, out.path());
    }
}

/// The sstables of `dir` that are compressed.
fn compressed_sstables(dir: &Path) -> Vec<PathBuf> {
    crate::util::data_files(dir)
        .into_iter()
        .filter(|d| {
            let n = d.to_string_lossy().replace("Data.db", "CompressionInfo.db");
            Path::new(&n).exists()
        })
        .collect()
}

/// Corpus sets whose Data.db is damaged on purpose: the walk steps over the
/// damage or stops at it (or finds nothing), which `truncated_*` and
/// `damaged_*` test.
const DAMAGED_SETS: [&str; 4] = [
    "3.x-lz4-integrity_check-invalid_checksums",
    "badcompression",
    "compression-premature-eof",
    "corrupt-jb-Keyspace1-Standard3",
];

/// The chunk table rebuilt from Data.db alone is the one CompressionInfo.db
/// holds, for every compressed sstable of the fixtures and of the corpus
/// (Cassandra `jb` to `da`, Scylla `ka` to `me`; Adler-32 before `ma`,
/// CRC32 after), including the writers that end Data.db with an empty chunk.
#[test]
fn rebuilt_chunk_table_is_compression_infos() {
    let mut dirs = compressed_fixtures();
    match corpus() {
        Some(c) => {
            for origin in ["cassandra", "scylladb"] {
                for e in std::fs::read_dir(c.join(origin)).unwrap().flatten() {
                    let name = e.file_name().to_string_lossy().into_owned();
                    if e.path().is_dir() && !DAMAGED_SETS.contains(&name.as_str()) {
                        dirs.push(e.path());
                    }
                }
            }
        }
        None => eprintln!("rebuilt_chunk_table_is_compression_infos: corpus skipped"),
    }
    let mut checked = 0;
    for dir in dirs {
        for data in compressed_sstables(&dir) {
            let what = data.display().to_string();
            let sst = Sstable::open_path(&data).unwrap();
            let b = std::fs::read(component_of(&data, "CompressionInfo.db")).unwrap();
            let ci = CompressionInfo::parse(&b, &sst.features()).unwrap();
            if !sst.has(sstkit_format::Component::Data) {
                // Pruned from the corpus (a licence), only its metadata is left.
                continue;
            }
            let r = rebuild(&sst, None).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(r.broken_at, None, "{what}");
            assert_eq!(r.info.compressor, ci.compressor, "{what}");
            assert_eq!(r.info.data_length, ci.data_length, "{what}");
            assert_eq!(r.info.chunk_offsets, ci.chunk_offsets, "{what}");
            if r.chunk_length_source == ChunkLengthSource::Measured {
                assert_eq!(r.info.chunk_length, ci.chunk_length, "{what}");
            }
            let given = rebuild(&sst, Some(ci.chunk_length)).unwrap();
            assert_eq!(given.info.chunk_offsets, ci.chunk_offsets, "{what}");
            assert_eq!(given.info.chunk_length, ci.chunk_length, "{what}");
            checked += 1;
        }
    }
    assert!(checked >= 80, "{checked} sstables checked");
}

/// The file of the sstable of `data` (a Data.db path) with `suffix`.
fn component_of(data: &Path, suffix: &str) -> PathBuf {
    PathBuf::from(data.to_string_lossy().replace("Data.db", suffix))
}

/// Corpus sets readable without a schema (`ma` and later): scrub with the
/// CompressionInfo.db deleted writes what it writes with it, and nothing
/// else where Data.db is damaged.
#[test]
fn corpus_scrub_with_rebuilt_compression_info_is_scrub_with_it() {
    let Some(c) = corpus() else {
        eprintln!("corpus_scrub_with_rebuilt_compression_info_is_scrub_with_it: skipped");
        return;
    };
    let mut compared = 0;
    for origin in ["cassandra", "scylladb"] {
        for e in std::fs::read_dir(c.join(origin)).unwrap().flatten() {
            let dir = e.path();
            if !dir.is_dir() || compressed_sstables(&dir).is_empty() {
                continue;
            }
            let name = e.file_name().to_string_lossy().into_owned();
            let (with, with_written, _o1) = scrub_skip(&copy_of(&dir, false));
            if with.code == 3 {
                // ka/la need --schema: the chunk table is checked above.
                continue;
            }
            let (lost, lost_written, _o2) = scrub_skip(&copy_of(&dir, true));
            assert_eq!(lost.code, 1, "{name}: {}{}", lost.stdout, lost.stderr);
            // A damaged chunk is stepped over as with the real CompressionInfo.db.
            let stepped = name == "3.x-lz4-integrity_check-invalid_checksums";
            if DAMAGED_SETS.contains(&name.as_str()) && !stepped {
                let bad = super::invented(&lost_written, &with_written);
                assert!(bad.is_empty(), "{name}: partitions invented: {bad:?}");
            } else {
                assert_eq!(lost_written, with_written, "{name}");
                compared += 1;
            }
        }
    }
    assert!(compared >= 60, "{compared} corpus sets compared");
}

/// Cut `data` (a compressed Data.db) in the middle of chunk `i` of `ci`.
fn cut_in_chunk(data: &Path, ci: &CompressionInfo, i: usize) {
    let b = std::fs::read(data).unwrap();
    let start = ci.chunk_offsets[i] as usize;
    let end = ci.chunk_offsets.get(i + 1).map_or(b.len(), |o| *o as usize);
    std::fs::write(data, &b[..(start + end) / 2]).unwrap();
}

fn chunk_info(dir: &Path) -> CompressionInfo {
    let data = component(dir, "Data.db");
    let sst = Sstable::open_path(&data).unwrap();
    let b = std::fs::read(component(dir, "CompressionInfo.db")).unwrap();
    CompressionInfo::parse(&b, &sst.features()).unwrap()
}

/// Data.db cut inside a chunk, CompressionInfo.db lost. An operator
/// salvaging a cut file wants every partition the whole chunks hold, not an
/// error: the walk keeps the chunks before the cut, reports the bytes after
/// it as lost, and scrub writes what it writes from the same cut file with
/// its real CompressionInfo.db.
#[test]
fn truncated_data_without_compression_info_keeps_the_whole_chunks() {
    for (case, chunk) in [("nb_clustering", 9), ("da_clustering", 3), ("oa_wide", 2)] {
        let src = crate::util::fixtures().join(case);
        let intact = partitions(&src);
        let with = copy_of(&src, false);
        let ci = chunk_info(&with);
        assert!(
            ci.chunk_count() > chunk + 1,
            "{case}: {} chunks",
            ci.chunk_count()
        );
        cut_in_chunk(&component(&with, "Data.db"), &ci, chunk);
        let lost = copy_of(&with, true);
        let (rw, with_written, _o1) = scrub_skip(&with);
        let (r, written, out) = scrub_skip(&lost);
        assert_eq!(r.code, 1, "{case}: {}", r.stderr);
        assert!(
            r.stdout.contains("not a chunk followed by its checksum"),
            "{case}: the cut is a finding: {}",
            r.stdout
        );
        let bad = super::invented(&written, &intact);
        assert!(
            bad.is_empty(),
            "{case}: altered partitions written: {bad:?}"
        );
        assert_eq!(
            keys(&written),
            keys(&with_written),
            "{case}: as with the real CompressionInfo.db: {}",
            rw.stdout
        );
        if !written.is_empty() {
            assert_output_valid(case, out.path());
        }
    }
}

fn keys(m: &BTreeMap<String, Value>) -> Vec<&String> {
    m.keys().collect()
}

/// A first chunk that is damaged leaves nothing to walk from: a clean error
/// (exit 3) naming Data.db, the offset, and that CompressionInfo.db cannot
/// be rebuilt.
#[test]
fn damaged_first_chunk_without_compression_info_is_a_clean_error() {
    let dir = copy_of(&crate::util::fixtures().join("nb_clustering"), true);
    let data = component(&dir, "Data.db");
    let mut b = std::fs::read(&data).unwrap();
    b[10] ^= 0x40;
    std::fs::write(&data, b).unwrap();
    let (r, written, _o) = scrub_skip(&dir);
    assert_eq!(r.code, 3, "{}{}", r.stdout, r.stderr);
    assert!(written.is_empty());
    for needle in [
        data.file_name().unwrap().to_str().unwrap(),
        "CompressionInfo.db cannot be rebuilt",
        "+0x0",
    ] {
        assert!(r.stderr.contains(needle), "{needle}: {}", r.stderr);
    }
}

/// `--chunk-length`: the right one rebuilds as without it, a wrong one is an
/// error naming the chunk that disagrees (exit 3), one that is not a power
/// of two a usage error (exit 2).
#[test]
fn chunk_length_option() {
    let case = "nb_clustering_lz4_4k";
    let src = crate::util::fixtures().join(case);
    let intact = partitions(&src);
    let dir = copy_of(&src, true);
    let run = |len: &str| {
        let out = scratch_dir("cinfo", "out");
        let r = sstkit([
            "scrub",
            "--mode",
            "skip",
            "-o",
            "json",
            "--chunk-length",
            len,
            "--output-dir",
            out.to_str().unwrap(),
            dir.to_str().unwrap(),
        ]);
        (r, partitions(out.path()))
    };
    let (r, written) = run("4KiB");
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stdout.contains("chunk length 4096 (as given)"),
        "{}",
        r.stdout
    );
    assert_eq!(written, intact);
    let (r, written) = run("16KiB");
    assert_eq!(r.code, 3, "{}", r.stdout);
    assert!(
        r.stderr
            .contains("decompresses to 4096 bytes, the given chunk length is 16384"),
        "{}",
        r.stderr
    );
    assert!(written.is_empty());
    let (r, _) = run("3000");
    assert_eq!(r.code, 2, "{}", r.stderr);
}

/// `validate` reports the lost CompressionInfo.db and whether scrub can
/// rebuild it (it walks Data.db as scrub would).
#[test]
fn validate_says_whether_scrub_can_rebuild() {
    for (case, compressor) in [
        ("nb_clustering_zstd", "ZstdCompressor"),
        ("nb_clustering_deflate", "DeflateCompressor"),
        ("nb_clustering_snappy", "SnappyCompressor"),
    ] {
        let dir = copy_of(&crate::util::fixtures().join(case), true);
        let data = component(&dir, "Data.db");
        let r = sstkit(["validate", "-o", "json", data.to_str().unwrap()]);
        assert_eq!(r.code, 1, "{case}: {}", r.stderr);
        let expect = "rebuilds it from Data.db: walking the chunk checksums finds";
        assert!(
            r.stdout.contains("missing_component")
                && r.stdout.contains(expect)
                && r.stdout.contains(compressor),
            "{case}: {}",
            r.stdout
        );
        // A damaged first chunk: nothing to walk from.
        let mut b = std::fs::read(&data).unwrap();
        b[10] ^= 0x40;
        std::fs::write(&data, b).unwrap();
        let r = sstkit(["validate", "-o", "json", data.to_str().unwrap()]);
        assert_eq!(r.code, 1, "{case}: {}", r.stderr);
        assert!(
            r.stdout.contains("scrub cannot rebuild it from Data.db"),
            "{case}: {}",
            r.stdout
        );
    }
}

/// Damage inside chunks of a Data.db whose CompressionInfo.db is lost: the
/// walk steps over it to the next chunk (found by its compressor's header,
/// its checksum and a full chunk's length), so the chunks after it are
/// salvaged too. A damaged chunk loses what the real CompressionInfo.db
/// loses; damage over adjacent chunks (counted as the fewest chunks its
/// bytes can hold) never makes scrub write a partition that differs from
/// the intact sstable.
#[test]
fn damaged_chunks_without_compression_info_are_stepped_over() {
    for (case, chunks, exact) in [
        ("nb_clustering", &[5usize][..], true),
        // Three apart, and the one before the last (shorter) chunk.
        ("nb_clustering", &[3, 9, 12], true),
        ("nb_clustering", &[15], true),
        ("nb_clustering", &[5, 6], false),
        ("da_clustering", &[2], true),
        ("nb_clustering_zstd", &[1], true),
        ("nb_clustering_deflate", &[1], true),
        ("nb_clustering_snappy", &[1], true),
        ("oa_wide", &[1, 2], false),
    ] {
        let src = crate::util::fixtures().join(case);
        let intact = partitions(&src);
        let with = copy_of(&src, false);
        let ci = chunk_info(&with);
        let data = component(&with, "Data.db");
        let mut b = std::fs::read(&data).unwrap();
        for &i in chunks {
            let (s, e) = (
                ci.chunk_offsets[i] as usize,
                ci.chunk_offsets[i + 1] as usize,
            );
            b[(s + e) / 2] ^= 0x10;
        }
        std::fs::write(&data, b).unwrap();
        let lost = copy_of(&with, true);
        let (_, with_written, _o1) = scrub_skip(&with);
        let (r, written, out) = scrub_skip(&lost);
        assert_eq!(r.code, 1, "{case}: {}", r.stderr);
        assert!(
            r.stdout
                .contains("the walk goes on at the next chunk found"),
            "{case}: the damage is a finding: {}",
            r.stdout
        );
        let bad = super::invented(&written, &intact);
        assert!(
            bad.is_empty(),
            "{case}: altered partitions written: {bad:?}"
        );
        if exact {
            assert_eq!(keys(&written), keys(&with_written), "{case}: {}", r.stdout);
        }
        assert!(!written.is_empty(), "{case}");
        assert_output_valid(case, out.path());
    }
}

/// The corpus's Scylla sstable with a damaged chunk: the chunk table
/// rebuilt around it is CompressionInfo.db's.
#[test]
fn rebuilt_chunk_table_around_a_damaged_chunk() {
    let Some(c) = corpus() else {
        eprintln!("rebuilt_chunk_table_around_a_damaged_chunk: skipped");
        return;
    };
    let dir = c.join("scylladb/3.x-lz4-integrity_check-invalid_checksums");
    for data in compressed_sstables(&dir) {
        let sst = Sstable::open_path(&data).unwrap();
        let b = std::fs::read(component_of(&data, "CompressionInfo.db")).unwrap();
        let ci = CompressionInfo::parse(&b, &sst.features()).unwrap();
        let r = rebuild(&sst, None).unwrap();
        assert_eq!(r.gaps.len(), 1, "{r:?}");
        assert_eq!(r.info.chunk_offsets, ci.chunk_offsets);
        assert_eq!(r.info.data_length, ci.data_length);
        assert_eq!(r.info.chunk_length, ci.chunk_length);
    }
}

/// TOC.txt replaced by an uncompressed sstable's (it lists CRC.db) and
/// CompressionInfo.db lost with it: neither checksum component is there,
/// which no writer leaves, and Data.db walks as a whole chain of
/// compressed chunks, so it is read as compressed and every partition is
/// written. An uncompressed Data.db that lost its CRC.db is still read as
/// it is.
#[test]
fn foreign_toc_and_lost_compression_info() {
    let foreign = component(
        &crate::util::fixtures().join("nb_clustering_nocompress"),
        "TOC.txt",
    );
    for case in ["nb_counters", "oa_counters", "da_counters", "nb_clustering"] {
        let src = crate::util::fixtures().join(case);
        let intact = partitions(&src);
        let dir = copy_of(&src, true);
        std::fs::copy(&foreign, component(&dir, "TOC.txt")).unwrap();
        let (r, written, out) = scrub_skip(&dir);
        assert_eq!(r.code, 1, "{case}: {}", r.stderr);
        assert!(
            r.stdout
                .contains("but Data.db is a chain of compressed chunks"),
            "{case}: {}",
            r.stdout
        );
        assert_eq!(written, intact, "{case}");
        assert_output_valid(case, out.path());
    }
    let src = crate::util::fixtures().join("nb_clustering_nocompress");
    let intact = partitions(&src);
    let dir = copy_of(&src, false);
    std::fs::remove_file(component(&dir, "CRC.db")).unwrap();
    let (r, written, _out) = scrub_skip(&dir);
    assert!(!r.stdout.contains("rebuilt from Data.db"), "{}", r.stdout);
    assert_eq!(written, intact);
}

/// `na`+ stores a chunk that does not compress well enough uncompressed
/// (a table with `min_compress_ratio`): a payload of one chunk length that
/// no compressor takes is such a chunk, and its bytes are salvaged.
#[test]
fn raw_chunks_are_recognised() {
    let case = "nb_clustering";
    let src = crate::util::fixtures().join(case);
    let intact = partitions(&src);
    let dir = copy_of(&src, false);
    let ci = chunk_info(&dir);
    let data_path = component(&dir, "Data.db");
    let data = std::fs::read(&data_path).unwrap();
    let features = Sstable::open_path(&data_path).unwrap().features();
    // Chunk 4 stored as it is: its uncompressed bytes, then their CRC32.
    let mut raw = Vec::new();
    sstkit_format::chunk::decompress_chunk(&ci, &features, 4, &data, &mut raw).unwrap();
    assert_eq!(raw.len(), ci.chunk_length as usize);
    let (s, e) = (ci.chunk_offsets[4] as usize, ci.chunk_offsets[5] as usize);
    let mut out = data[..s].to_vec();
    out.extend_from_slice(&raw);
    let sum = sstkit_format::digest::ChecksumAlgo::Crc32.checksum(&raw);
    out.extend_from_slice(&sum.to_be_bytes());
    out.extend_from_slice(&data[e..]);
    std::fs::write(&data_path, out).unwrap();
    std::fs::remove_file(component(&dir, "CompressionInfo.db")).unwrap();
    // The digest was of the old bytes.
    std::fs::remove_file(component(&dir, "Digest.crc32")).unwrap();
    let (r, written, out_dir) = scrub_skip(&dir);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stdout.contains("(1 stored uncompressed)"), "{}", r.stdout);
    assert_eq!(written, intact);
    assert_output_valid(case, out_dir.path());
}
