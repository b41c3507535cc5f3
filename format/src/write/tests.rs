//! Rewrites of the Cassandra-written fixtures compared with the originals.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use super::copy::{kept_metadata, source_header};
use super::sink::{CopyCounts, Keep, WriterSink};
use super::*;
use crate::data::ScanReader;
use crate::engine::{self, Selection, Shape, Table};
use crate::statistics::Statistics;
use crate::Sstable;

fn fixture(case: &str) -> Option<PathBuf> {
    let p = crate::test_support::fixture_data(case);
    if p.is_none() {
        eprintln!("fixture {case} absent: skipped");
    }
    p
}

/// Every BIG fixture case.
fn big_cases() -> Vec<String> {
    cases(&["nb_", "oa_"])
}

/// Every fixture case whose name starts with one of `prefixes`.
fn cases(prefixes: &[&str]) -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/cassandra");
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| prefixes.iter().any(|p| n.starts_with(p)))
        .collect();
    v.sort();
    v
}

struct Rewritten {
    _dir: tempfile::TempDir,
    src: Sstable,
    out: Sstable,
    written: Written,
}

fn rewrite(case: &str, compression: Option<Compression>) -> Option<Rewritten> {
    rewrite_with(case, compression, ChunkWork::Auto)
}

fn rewrite_with(
    case: &str,
    compression: Option<Compression>,
    chunk_work: ChunkWork,
) -> Option<Rewritten> {
    let data = fixture(case)?;
    let src = Sstable::open_path(&data).unwrap();
    let (st, header) = source_header(&src).unwrap();
    let (c, chunk) = copy::source_compression(&src).unwrap().unwrap();
    let mut opts = WriterOptions::new(src.version());
    opts.compression = compression.unwrap_or(c);
    opts.chunk_length = chunk;
    // The oracle wrote the fixtures with column_index_size 4 KiB, the wide
    // cases with 1 KiB (their case.json).
    opts.column_index_size = if case.contains("wide") { 1024 } else { 4096 };
    opts.bloom_filter_fp_chance = st.validation.as_ref().unwrap().bloom_filter_fp_chance;
    opts.chunk_work = chunk_work;
    let dir = crate::test_support::scratch(&format!("write-{case}-{chunk_work:?}"));
    let filter = bloom::filter_for(
        bloom::expected_keys(&src, &st),
        opts.bloom_filter_fp_chance,
        &opts.version.features(),
    );
    let mut w =
        SstableWriter::create(dir.path(), 1, &header, kept_metadata(&st), opts, filter).unwrap();
    copy_all(&src, &st, &header, &mut w).unwrap();
    let written = w.finish().unwrap();
    let out = Sstable::open_path(&written.data_path).unwrap();
    Some(Rewritten {
        _dir: dir,
        src,
        out,
        written,
    })
}

/// Every partition of `src` through the engine into `w`.
fn copy_all(
    src: &Sstable,
    st: &Statistics,
    header: &crate::statistics::SerializationHeader,
    w: &mut SstableWriter,
) -> Result<CopyCounts> {
    let t = Table::new(header, src.partitioner(st)?, 0);
    let mut sink = WriterSink::new(Keep::new(w, |_| true));
    let ran = engine::run(
        src,
        &t,
        &Selection::all(),
        &Shape::default(),
        &mut sink,
        &mut |_| {},
    );
    ran.map_err(|e| sink.error(e))?;
    Ok(sink.counts())
}

fn uncompressed_data(sst: &Sstable) -> Vec<u8> {
    let (_, h) = source_header(sst).unwrap();
    let mut r = ScanReader::new(sst, &h).unwrap();
    let len = r.data_len();
    r.read_bytes(crate::data::DataPos(0), len as usize).unwrap()
}

fn first_diff(a: &[u8], b: &[u8]) -> Option<usize> {
    if a == b {
        return None;
    }
    Some(
        a.iter()
            .zip(b)
            .position(|(x, y)| x != y)
            .unwrap_or(a.len().min(b.len())),
    )
}

fn same(case: &str, what: &str, a: &[u8], b: &[u8]) {
    if let Some(i) = first_diff(a, b) {
        let lo = i.saturating_sub(16);
        panic!(
            "{case} {what}: differs at byte {i} (lengths {} vs {}):\n source {:02x?}\n wrote  {:02x?}",
            a.len(),
            b.len(),
            &a[lo..(i + 16).min(a.len())],
            &b[lo..(i + 16).min(b.len())]
        );
    }
}

/// Data.db (uncompressed content), Index.db, Summary.db and Filter.db are
/// byte for byte what Cassandra wrote, for every BIG fixture.
#[test]
fn rewrite_matches_cassandra_bytes() {
    let cases = big_cases();
    assert!(!cases.is_empty() || fixture("nb_clustering").is_none());
    for case in cases {
        let Some(r) = rewrite(&case, Some(Compression::None)) else {
            continue;
        };
        same(
            &case,
            "Data.db",
            &uncompressed_data(&r.src),
            &std::fs::read(r.out.path(Component::Data)).unwrap(),
        );
        for c in [Component::Index, Component::Summary, Component::Filter] {
            same(
                &case,
                c.suffix(),
                &r.src.read_component(c).unwrap(),
                &r.out.read_component(c).unwrap(),
            );
        }
        assert!(r.written.partitions > 0, "{case}");
    }
}

/// The BTI fixtures: Data.db (uncompressed content), Partitions.db,
/// Rows.db and Filter.db are byte for byte what Cassandra wrote; for
/// uncompressed ones Statistics.db, CRC.db and Digest.crc32 too.
#[test]
fn da_rewrite_matches_cassandra_bytes() {
    let cases = cases(&["da_"]);
    assert!(!cases.is_empty() || fixture("da_clustering").is_none());
    for case in cases {
        let Some(r) = rewrite(&case, Some(Compression::None)) else {
            continue;
        };
        same(
            &case,
            "Data.db",
            &uncompressed_data(&r.src),
            &std::fs::read(r.out.path(Component::Data)).unwrap(),
        );
        for c in [Component::Partitions, Component::Rows, Component::Filter] {
            same(
                &case,
                c.suffix(),
                &r.src.read_component(c).unwrap(),
                &r.out.read_component(c).unwrap(),
            );
        }
        assert!(r.written.partitions > 0, "{case}");
        let names: Vec<String> = r
            .written
            .files
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().to_string())
            .collect();
        assert!(
            names.iter().all(|n| n.starts_with("da-1-bti-")),
            "{names:?}"
        );
        if r.src.has(Component::CompressionInfo) {
            continue;
        }
        for c in [
            Component::Statistics,
            Component::Data,
            Component::Crc,
            Component::Digest,
            Component::Toc,
        ] {
            same(
                &case,
                c.suffix(),
                &r.src.read_component(c).unwrap(),
                &r.out.read_component(c).unwrap(),
            );
        }
    }
}

/// Statistics.db is byte for byte Cassandra's, uncompressed fixtures
/// (the compression ratio is -1 on both sides).
#[test]
fn statistics_match_cassandra_bytes() {
    for case in big_cases() {
        let Some(r) = rewrite(&case, None) else {
            continue;
        };
        if r.src.has(Component::CompressionInfo) {
            continue;
        }
        same(
            &case,
            "Statistics.db",
            &r.src.read_component(Component::Statistics).unwrap(),
            &r.out.read_component(Component::Statistics).unwrap(),
        );
        for c in [Component::Data, Component::Crc, Component::Digest] {
            same(
                &case,
                c.suffix(),
                &r.src.read_component(c).unwrap(),
                &r.out.read_component(c).unwrap(),
            );
        }
    }
}

/// Compressed fixtures rewritten with their own compressor and chunk
/// length: the chunk table covers the same uncompressed bytes, and
/// Statistics.db equals Cassandra's but for the compression ratio (the
/// compressors' encoders differ: lz4_flex, snap, miniz and the zstd crate
/// produce valid but not identical payloads). Where the payloads happen to
/// be identical (the small `*_deletes_merge_2` sets) the whole sstable is.
#[test]
fn compressed_rewrite_matches_cassandra_but_payloads() {
    for case in big_cases() {
        let Some(r) = rewrite(&case, None) else {
            continue;
        };
        if !r.src.has(Component::CompressionInfo) {
            continue;
        }
        let f = r.src.features();
        let ci = |s: &Sstable| {
            crate::compression::CompressionInfo::parse(
                &s.read_component(Component::CompressionInfo).unwrap(),
                &f,
            )
            .unwrap()
        };
        let (a, b) = (ci(&r.src), ci(&r.out));
        assert_eq!(
            (
                &a.compressor_class,
                a.chunk_length,
                a.data_length,
                a.chunk_offsets.len()
            ),
            (
                &b.compressor_class,
                b.chunk_length,
                b.data_length,
                b.chunk_offsets.len()
            ),
            "{case}"
        );
        same(
            &case,
            "uncompressed Data.db",
            &uncompressed_data(&r.src),
            &uncompressed_data(&r.out),
        );
        let st = |s: &Sstable| {
            let mut st =
                Statistics::parse(&s.read_component(Component::Statistics).unwrap(), f).unwrap();
            let stats = st.stats.as_mut().unwrap();
            stats.compression_ratio = 0.0;
            // NaN (unknown) never equals itself.
            stats.token_space_coverage = stats
                .token_space_coverage
                .map(f64::to_bits)
                .map(|b| b as f64);
            (
                st.validation,
                st.compaction.map(|c| c.cardinality_bytes),
                st.stats,
                st.header,
            )
        };
        assert_eq!(st(&r.src), st(&r.out), "{case}: Statistics.db");
        if case.ends_with("deletes_merge_2") {
            for c in [
                Component::Data,
                Component::CompressionInfo,
                Component::Statistics,
                Component::Digest,
            ] {
                same(
                    &case,
                    c.suffix(),
                    &r.src.read_component(c).unwrap(),
                    &r.out.read_component(c).unwrap(),
                );
            }
        }
    }
}

/// A writer that fails (here: fragments out of order) or is dropped
/// unfinished leaves no file behind; a finished one leaves no temporary.
#[test]
fn failure_leaves_nothing() {
    let Some(data) = fixture("nb_deletes") else {
        return;
    };
    let src = Sstable::open_path(&data).unwrap();
    let (st, header) = source_header(&src).unwrap();
    let dir = crate::test_support::scratch("write-fail");
    let opts = WriterOptions::new(src.version());
    // Generation 1 each time: the failed writer must have left its name free.
    let create = || {
        SstableWriter::create(
            dir.path(),
            1,
            &header,
            kept_metadata(&st),
            opts.clone(),
            None,
        )
        .unwrap()
    };
    let mut w = create();
    let mut r = ScanReader::new(&src, &header).unwrap();
    let f = r.next_fragment().unwrap().unwrap();
    w.write(&f).unwrap();
    let err = w.write(&f).unwrap_err();
    assert!(
        err.to_string().contains("before the previous one ended"),
        "{err}"
    );
    drop(w);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);

    let mut w = create();
    drop(r);
    copy_all(&src, &st, &header, &mut w).unwrap();
    let written = w.finish().unwrap();
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    assert!(
        names.iter().all(|n| n.starts_with("nb-1-big-")),
        "{names:?}"
    );
    assert_eq!(names.len(), written.files.len());
    assert!(written.files.last().unwrap().ends_with("nb-1-big-TOC.txt"));
    // The next sstable takes the next generation; an existing one is never overwritten.
    assert_eq!(next_generation(dir.path()).unwrap(), 2);
    assert!(SstableWriter::create(dir.path(), 1, &header, kept_metadata(&st), opts, None).is_err());
}

/// Data.db's chunks written on the worker thread and in the calling thread
/// give the same sstable, every component byte for byte.
#[test]
fn worker_thread_writes_the_same_sstable() {
    for case in cases(&["nb_", "oa_", "da_"]) {
        for c in [None, Some(Compression::None), Some(Compression::Zstd(None))] {
            let Some(a) = rewrite_with(&case, c.clone(), ChunkWork::Inline) else {
                continue;
            };
            let b = rewrite_with(&case, c.clone(), ChunkWork::Thread).unwrap();
            assert_eq!(a.written.files.len(), b.written.files.len(), "{case}");
            for (fa, fb) in a.written.files.iter().zip(&b.written.files) {
                assert_eq!(fa.file_name(), fb.file_name(), "{case}");
                assert!(
                    std::fs::read(fa).unwrap() == std::fs::read(fb).unwrap(),
                    "{case} {c:?}: {} differs",
                    fa.display()
                );
            }
        }
    }
}

/// A Data.db write that fails on the worker thread (ENOSPC: Data.db is
/// /dev/full) fails the writer and leaves no file behind.
#[test]
fn worker_failure_leaves_nothing() {
    let full = Path::new("/dev/full");
    let Some(data) = fixture("nb_deletes") else {
        return;
    };
    if !full.exists() {
        eprintln!("no /dev/full: skipped");
        return;
    }
    let src = Sstable::open_path(&data).unwrap();
    let (st, header) = source_header(&src).unwrap();
    let dir = crate::test_support::scratch("write-fail-worker");
    let tmp_data = dir.path().join(format!("{TMP}nb-1-big-Data.db"));
    std::os::unix::fs::symlink(full, &tmp_data).unwrap();
    let mut opts = WriterOptions::new(src.version());
    opts.chunk_work = ChunkWork::Thread;
    let mut w =
        SstableWriter::create(dir.path(), 1, &header, kept_metadata(&st), opts, None).unwrap();
    let copied = copy_all(&src, &st, &header, &mut w);
    let err = match copied {
        Err(e) => {
            drop(w);
            e
        }
        Ok(_) => w.finish().expect_err("writing to /dev/full fails"),
    };
    assert!(err.to_string().contains("No space left"), "{err}");
    assert_eq!(err.file.as_deref(), Some(tmp_data.as_path()), "{err}");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

/// The fragments of `src` with a Scylla shadowable deletion on every
/// clustering row (`rows`) or on every static row (`statics`), each a
/// second older than every timestamp of the fixture so the statistics
/// must show it.
fn with_scylla_shadowable(
    src: &Sstable,
    header: &SerializationHeader,
    rows: bool,
    statics: bool,
    mut each: impl FnMut(&Fragment<'_>) -> Result<()>,
) -> Result<()> {
    let mut r = ScanReader::new(src, header).unwrap();
    while let Some(mut f) = r.next_fragment().unwrap() {
        match &mut f {
            Fragment::Row(row) if rows => row.scylla_shadowable_deletion = Some(shadowable()),
            Fragment::StaticRow(row) if statics => {
                row.scylla_shadowable_deletion = Some(shadowable())
            }
            _ => {}
        }
        each(&f)?;
    }
    Ok(())
}

/// The deletion [`with_scylla_shadowable`] adds: older than any write of
/// the fixtures (timestamp 1), deleted at a fixed second.
fn shadowable() -> DeletionTime {
    DeletionTime {
        marked_for_delete_at: 1,
        local_deletion_time: 1_600_000_000,
    }
}

fn scylla_writer(
    dir: &Path,
    version: &str,
    header: &SerializationHeader,
    st: &Statistics,
) -> SstableWriter {
    let opts = WriterOptions::new(Version::parse(version).unwrap());
    SstableWriter::create(dir, 1, header, kept_metadata(st), opts, None).unwrap()
}

/// A Scylla shadowable row deletion written in a version Scylla writes
/// reads back on the same rows, with Scylla.db's ShadowableTombstones
/// feature (without it Scylla refuses the flag) and in the statistics.
#[test]
fn scylla_shadowable_deletion_round_trips() {
    let Some(data) = fixture("nb_clustering") else {
        return;
    };
    let src = Sstable::open_path(&data).unwrap();
    let (st, header) = source_header(&src).unwrap();
    for version in ["mc", "md", "me"] {
        let dir = crate::test_support::scratch(&format!("write-shadowable-{version}"));
        let mut w = scylla_writer(dir.path(), version, &header, &st);
        with_scylla_shadowable(&src, &header, true, false, |f| w.write(f)).unwrap();
        let written = w.finish().unwrap();
        let out = Sstable::open_path(&written.data_path).unwrap();

        let (ost, oh) = source_header(&out).unwrap();
        let mut a = ScanReader::new(&src, &header).unwrap();
        let mut b = ScanReader::new(&out, &oh).unwrap();
        let mut rows = 0;
        while let Some(fa) = a.next_fragment().unwrap() {
            let fb = b.next_fragment().unwrap().expect("as many fragments");
            match (&fa, &fb) {
                (Fragment::Row(ra), Fragment::Row(rb)) => {
                    assert_eq!(rb.scylla_shadowable_deletion, Some(shadowable()));
                    assert_eq!((ra.deletion, ra.liveness), (rb.deletion, rb.liveness));
                    assert_eq!(ra.cells, rb.cells);
                    rows += 1;
                }
                (Fragment::StaticRow(rb), _) | (_, Fragment::StaticRow(rb)) => {
                    assert_eq!(rb.scylla_shadowable_deletion, None)
                }
                _ => {}
            }
        }
        assert!(b.next_fragment().unwrap().is_none());
        assert!(rows > 0);

        let scylla =
            crate::scylla::ScyllaMetadata::parse(&out.read_component(Component::Scylla).unwrap())
                .unwrap();
        let features = scylla.features();
        assert!(features.has(crate::scylla::ScyllaFeature::ShadowableTombstones));
        // Cassandra's last promoted-index block counts the end byte, as this writer does.
        assert!(!features.has(crate::scylla::ScyllaFeature::CorrectLastPiBlockWidth));
        let stats = ost.stats.unwrap();
        assert_eq!(stats.min_timestamp, shadowable().marked_for_delete_at);
    }
}

/// A Scylla shadowable deletion that the output cannot carry (a Cassandra
/// version, or the static row in any version) is refused with the
/// partition's key, and the unfinished sstable leaves no file behind.
#[test]
fn scylla_shadowable_deletion_refused_where_unreadable() {
    let Some(data) = fixture("nb_clustering") else {
        return;
    };
    let src = Sstable::open_path(&data).unwrap();
    let (st, header) = source_header(&src).unwrap();
    for (version, rows, statics) in [
        ("nb", true, false),
        ("oa", true, false),
        ("da", true, false),
        ("ma", true, false),
        ("me", false, true),
    ] {
        let dir = crate::test_support::scratch(&format!("write-shadowable-refused-{version}"));
        let mut w = scylla_writer(dir.path(), version, &header, &st);
        let mut key = Vec::new();
        let err = with_scylla_shadowable(&src, &header, rows, statics, |f| {
            if let Fragment::PartitionStart { key: k, .. } = f {
                key = k.to_vec();
            }
            w.write(f)
        })
        .unwrap_err();
        assert!(matches!(err.kind, ErrorKind::Unsupported(_)), "{err}");
        let hex: String = key.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            err.partition.as_deref(),
            Some(format!("0x{hex}").as_str()),
            "{err}"
        );
        drop(w);
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "{version}"
        );
    }
}

/// The two corpus sstables of Scylla's `sstable_3_x_test` with shadowable
/// deletions (`test_shadowable_deletion`,
/// `test_regular_and_shadowable_deletion`), whose Data.db Scylla's writer
/// must reproduce byte for byte: rewritten in their version, Data.db is
/// those bytes.
#[test]
fn scylla_shadowable_corpus_rewrite_is_scyllas_bytes() {
    let Some(root) = crate::test_support::root() else {
        return;
    };
    for set in [
        "3.x-uncompressed-write_shadowable_deletion",
        "3.x-uncompressed-write_regular_and_shadowable_deletion",
    ] {
        let data = root.join("scylladb").join(set).join("mc-1-big-Data.db");
        if !data.exists() {
            eprintln!("{} absent: skipped", data.display());
            continue;
        }
        let src = Sstable::open_path(&data).unwrap();
        let (st, header) = source_header(&src).unwrap();
        let dir = crate::test_support::scratch(&format!("write-{set}"));
        let mut opts = WriterOptions::new(src.version());
        opts.compression = Compression::None;
        let mut w =
            SstableWriter::create(dir.path(), 1, &header, kept_metadata(&st), opts, None).unwrap();
        copy_all(&src, &st, &header, &mut w).unwrap();
        let written = w.finish().unwrap();
        same(
            set,
            "Data.db",
            &std::fs::read(&data).unwrap(),
            &std::fs::read(&written.data_path).unwrap(),
        );
    }
}

/// A partition the route leaves out is read, not written: it is absent
/// from the output, the others are copied.
#[test]
fn left_out_partition_is_read_not_written() {
    let Some(data) = fixture("nb_clustering") else {
        return;
    };
    let src = Sstable::open_path(&data).unwrap();
    let (st, header) = source_header(&src).unwrap();
    let first_key = |sst: &Sstable| match ScanReader::new(sst, &header)
        .unwrap()
        .next_fragment()
        .unwrap()
    {
        Some(crate::data::Fragment::PartitionStart { key, .. }) => key.to_vec(),
        other => panic!("{other:?}"),
    };
    let first = first_key(&src);
    let dir = crate::test_support::scratch("write-left-out");
    let opts = WriterOptions::new(src.version());
    let mut w =
        SstableWriter::create(dir.path(), 1, &header, kept_metadata(&st), opts, None).unwrap();
    let t = Table::new(&header, src.partitioner(&st).unwrap(), 0);
    let mut sink = WriterSink::new(Keep::new(&mut w, |k| k != first.as_slice()));
    engine::run(
        &src,
        &t,
        &Selection::all(),
        &Shape::default(),
        &mut sink,
        &mut |_| {},
    )
    .unwrap();
    let counts = sink.counts();
    let written = w.finish().unwrap();
    assert!(counts.read > 1, "{counts:?}");
    assert_eq!(counts.written, counts.read - 1);
    assert_eq!(written.partitions, counts.written);
    let out = Sstable::open_path(&written.data_path).unwrap();
    assert_ne!(first_key(&out), first);
}
