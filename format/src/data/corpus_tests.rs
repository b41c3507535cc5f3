//! Tests against the real sstables of `shared/corpus` (skipped with a note
//! when the corpus is absent) and the Cassandra 5.0 fixtures of
//! `fixtures/cassandra` (skipped when absent).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use super::*;
use crate::sstable::Sstable;
use crate::statistics::{SerializationHeader, Statistics};
use crate::test_support;

mod worked;

/// The corpus root, or None (with a note) when absent.
pub(crate) fn corpus_root() -> Option<PathBuf> {
    test_support::root()
}

/// Row-format versions this decoder handles.
const ROW_VERSIONS: &[&str] = &[
    "ma", "mb", "mc", "md", "me", "ms", "mt", "na", "nb", "nc", "oa", "da",
];

/// Every row-format `*-Data.db` of the corpus, sorted.
fn corpus_data_files() -> Vec<test_support::File> {
    test_support::files(|c| c == "Data.db")
        .into_iter()
        .filter(|f| ROW_VERSIONS.contains(&f.version().as_str()))
        .collect()
}

/// Counts of one decoded Data.db.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Counts {
    pub partitions: u64,
    pub static_rows: u64,
    /// Static rows with at least one column (sstabledump omits empty ones).
    pub nonempty_static_rows: u64,
    pub rows: u64,
    pub markers: u64,
    pub cells: u64,
    pub partition_deletions: u64,
}

/// Open the sstable of `data` and its serialization header.
fn open(data: &Path) -> crate::Result<(Sstable, SerializationHeader)> {
    let sst = Sstable::open_path(data)?;
    let bytes = sst.read_component(crate::component::Component::Statistics)?;
    let st = Statistics::parse_lenient(&bytes, sst.features())?;
    let header = st.header.ok_or_else(|| {
        crate::Error::new(
            crate::ErrorKind::BadValue("no serialization header".into()),
            "header",
        )
    })?;
    Ok((sst, header))
}

/// Decode a whole Data.db, checking the fragment grammar, positions and
/// sizes as it goes. Returns the counts and the reader's findings.
pub(crate) fn decode_all(data: &Path) -> crate::Result<(Counts, Vec<Finding>, u64)> {
    let (sst, header) = open(data)?;
    let mut r = ScanReader::new(&sst, &header)?;
    let mut c = Counts::default();
    let mut in_partition = false;
    let mut expected_pos = 0u64;
    while let Some(f) = r.next_fragment()? {
        // Fragments tile the file: each starts where the previous ended.
        assert_eq!(
            f.position().0,
            expected_pos,
            "{}: fragment position",
            data.display()
        );
        match &f {
            Fragment::PartitionStart { key, deletion, .. } => {
                assert!(!in_partition);
                in_partition = true;
                c.partitions += 1;
                if !deletion.is_live() {
                    c.partition_deletions += 1;
                }
                let dl = deletion.serialized_size(&sst.features()) as u64;
                expected_pos += 2 + key.len() as u64 + dl;
            }
            Fragment::StaticRow(row) | Fragment::Row(row) => {
                assert!(in_partition);
                assert_eq!(row.is_static(), matches!(f, Fragment::StaticRow(_)));
                if row.is_static() {
                    c.static_rows += 1;
                    c.nonempty_static_rows += !row.cells.is_empty() as u64;
                } else {
                    c.rows += 1;
                }
                for cd in &row.cells {
                    c.cells += match cd {
                        ColumnData::Simple { .. } => 1,
                        ColumnData::Complex { cells, .. } => cells.len() as u64,
                    };
                }
                expected_pos += row.size;
            }
            Fragment::Marker(m) => {
                assert!(in_partition);
                c.markers += 1;
                expected_pos += m.size;
            }
            Fragment::PartitionEnd { .. } => {
                assert!(in_partition);
                in_partition = false;
                expected_pos += 1;
            }
        }
    }
    assert!(
        !in_partition,
        "{}: ended inside a partition",
        data.display()
    );
    assert_eq!(
        expected_pos,
        r.data_len(),
        "{}: decoded to the end",
        data.display()
    );
    let (findings, dropped) = r.take_findings();
    assert_eq!(dropped, 0);
    // IO: one sequential pass over Data.db, every byte read once, in
    // read-ahead windows (see `scan_io`).
    let data_len = r.data_len();
    drop(r);
    let io = *sst.io.stats().get(crate::component::Component::Data);
    let file_len = std::fs::metadata(data).map(|m| m.len()).unwrap_or(0);
    if sst.has(crate::component::Component::CompressionInfo) {
        let ci_bytes = sst.read_component(crate::component::Component::CompressionInfo)?;
        let ci = crate::compression::CompressionInfo::parse(&ci_bytes, &sst.features())?;
        // Chunks holding data; a trailing empty chunk (C* 3.0) is never read.
        let n = data_len.div_ceil(ci.chunk_length as u64) as usize;
        let end = ci.chunk_offsets.get(n).copied().unwrap_or(file_len);
        let want = end - ci.chunk_offsets.first().copied().unwrap_or(0);
        assert_eq!(
            io.chunks_decompressed,
            n as u64,
            "{}: chunks",
            data.display()
        );
        let (reads, bytes) = scan_io(want, file_len);
        assert_eq!(io.reads, reads, "{}: read-ahead windows", data.display());
        assert_eq!(
            io.uncompressed_bytes,
            data_len,
            "{}: uncompressed bytes",
            data.display()
        );
        assert_eq!(
            (io.bytes, io.compressed_bytes),
            (bytes, want),
            "{}: compressed bytes",
            data.display()
        );
    } else {
        let (reads, bytes) = scan_io(data_len, file_len);
        assert_eq!(io.bytes, data_len, "{}: bytes read", data.display());
        assert_eq!(bytes, data_len);
        assert_eq!(io.reads, reads, "{}: max_io reads", data.display());
        assert_eq!(io.chunks_decompressed, 0);
    }
    Ok((c, findings, io.chunks_decompressed))
}

/// Every row-format Data.db of the corpus decodes to its end with all sizes
/// consistent; deliberately corrupt sets may fail but never panic.
#[test]
fn corpus_every_data_file_decodes() {
    let files = corpus_data_files();
    if files.is_empty() {
        return;
    }
    let mut ok = 0;
    let mut total = Counts::default();
    let mut corrupt_failed = Vec::new();
    let mut failures = Vec::new();
    for f in &files {
        let set = &f.set;
        let name = f.path.file_name().unwrap().to_string_lossy().into_owned();
        let res = std::panic::catch_unwind(|| decode_all(&f.path));
        let res = match res {
            Ok(r) => r,
            Err(_) => {
                failures.push(format!("{set}/{name}: PANIC"));
                continue;
            }
        };
        match res {
            Ok((c, findings, chunks)) => {
                eprintln!(
                    "{set}/{name}: {} partitions, {} static, {} rows, {} markers, {} cells, {} chunks{}",
                    c.partitions,
                    c.static_rows,
                    c.rows,
                    c.markers,
                    c.cells,
                    chunks,
                    if findings.is_empty() { String::new() } else { format!(", {} findings: {:?}", findings.len(), findings.first()) }
                );
                if !findings.is_empty() && !crate::test_support::is_corrupt_set(set) {
                    failures.push(format!(
                        "{set}/{name}: prev_unfiltered_size findings {findings:?}"
                    ));
                }
                ok += 1;
                total.partitions += c.partitions;
                total.rows += c.rows;
                total.static_rows += c.static_rows;
                total.markers += c.markers;
                total.cells += c.cells;
            }
            Err(e) if crate::test_support::is_corrupt_set(set) => {
                eprintln!("{set}/{name}: (corrupt set) {e}");
                corrupt_failed.push((format!("{set}/{name}"), e));
            }
            Err(e) => failures.push(format!("{set}/{name}: {e}")),
        }
    }
    eprintln!(
        "corpus: {} Data.db, {ok} decoded ({} partitions, {} static rows, {} rows, {} markers, {} cells), {} corrupt-set failures",
        files.len(),
        total.partitions,
        total.static_rows,
        total.rows,
        total.markers,
        total.cells,
        corrupt_failed.len()
    );
    assert!(failures.is_empty(), "failures:\n{}", failures.join("\n"));
    // Damage the decoder must see (the other corrupt sets are damaged in
    // other components, or semantically: duplicate rows, negative LDTs, RT
    // pairing, which a scrub/validate layer checks).
    let failed = |suffix: &str| {
        corrupt_failed
            .iter()
            .find(|(n, _)| n.ends_with(suffix))
            .map(|(_, e)| e)
    };
    let e = failed("3.x-lz4-integrity_check-invalid_checksums/me-1-big-Data.db")
        .expect("bad CRC detected");
    assert!(
        matches!(e.kind, crate::ErrorKind::ChecksumMismatch { .. }),
        "{e}"
    );
    let e = failed("invalid_boundary/mc-33-big-Data.db").expect("STATIC_CLUSTERING bound rejected");
    assert_eq!(e.partition.as_deref(), Some("0x00000000"));
    assert!(failed("compression-premature-eof/mc-1-big-Data.db").is_some());
    assert!(failed("mismatched_timestamp/mc-122-big-Data.db").is_some());
    // A corrupt-set file that stops failing, or starts to, is a change to
    // look at: these are exactly the ones the decoder rejects.
    let mut names: Vec<&str> = corrupt_failed.iter().map(|(n, _)| n.as_str()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "scylladb/3.x-lz4-integrity_check-invalid_checksums/me-1-big-Data.db",
            "scylladb/broken_non_compound_pi_and_range_tombstone/mc-1-big-Data.db",
            "scylladb/broken_non_compound_pi_and_range_tombstone/md-1-big-Data.db",
            "scylladb/compression-premature-eof/mc-1-big-Data.db",
            "scylladb/invalid_boundary/mc-33-big-Data.db",
            "scylladb/mismatched_timestamp/mc-122-big-Data.db",
        ]
    );
}

/// All fragments of one corpus Data.db, rendered with `{:?}` per fragment
/// plus the header (for the worked examples).
fn with_fragments(rel: &str, f: impl FnOnce(&SerializationHeader, &mut ScanReader<'_>)) {
    let Some(root) = corpus_root() else { return };
    let p = root.join(rel);
    if !p.is_file() {
        eprintln!("skipping: {} absent", p.display());
        return;
    }
    let (sst, header) = open(&p).unwrap();
    let mut r = ScanReader::new(&sst, &header).unwrap();
    f(&header, &mut r);
    assert!(
        r.next_fragment().unwrap().is_none(),
        "{rel}: more fragments than expected"
    );
}

fn next<'r>(r: &'r mut ScanReader<'_>) -> Fragment<'r> {
    r.next_fragment().unwrap().expect("a fragment")
}

fn expect_start(r: &mut ScanReader<'_>, key: &[u8], pos: u64) {
    match next(r) {
        Fragment::PartitionStart {
            key: k,
            deletion,
            position,
            ..
        } => {
            assert_eq!(k, key);
            assert!(deletion.is_live());
            assert_eq!(position, DataPos(pos));
        }
        f => panic!("expected partition start, got {f:?}"),
    }
}

fn expect_end(r: &mut ScanReader<'_>, pos: u64) {
    match next(r) {
        Fragment::PartitionEnd { position } => assert_eq!(position, DataPos(pos)),
        f => panic!("expected partition end, got {f:?}"),
    }
}

fn simple<'a>(row: &'a Row<'a>, name: &str) -> &'a Cell<'a> {
    match row.column(name) {
        Some(ColumnData::Simple { cell, .. }) => cell,
        other => panic!("column {name}: {other:?}"),
    }
}

/// Contents stated in `shared/corpus/MANIFEST.md` (and the upstream tests).
#[test]
fn corpus_counts_match_manifest() {
    if corpus_root().is_none() {
        return;
    }
    let root = corpus_root().unwrap();
    // (file, partitions, static rows, rows, markers)
    let mut cases: Vec<(String, u64, u64, u64, u64)> = vec![];
    for v in ["mc", "md", "me"] {
        // ONE partition 'v1' with 13,520 rows.
        cases.push((
            format!("scylladb/large_partition/{v}-3-big-Data.db"),
            1,
            0,
            13_520,
            0,
        ));
        // 130 partitions.
        cases.push((
            format!("scylladb/summary_test/{v}-1-big-Data.db"),
            130,
            0,
            130,
            0,
        ));
        // 10 partitions 0..9.
        cases.push((
            format!("scylladb/partition_skipping/{v}-1-big-Data.db"),
            10,
            0,
            10,
            0,
        ));
        // 2 partitions x 4 rows.
        cases.push((
            format!("scylladb/wrong_counter_shard_order/{v}-2-big-Data.db"),
            2,
            0,
            8,
            0,
        ));
        // RT(0) start, rows (0,0),(0,1), RT end.
        cases.push((
            format!("scylladb/promoted_index_read/{v}-1-big-Data.db"),
            1,
            0,
            2,
            2,
        ));
    }
    for v in ["ma", "mb", "mc", "md", "me", "na", "nb", "nc", "oa"] {
        // 5 partitions x 50 rows; simple tables 5 x 1.
        cases.push((
            format!("cassandra/legacy_{v}_clust/{v}-1-big-Data.db"),
            5,
            0,
            250,
            0,
        ));
        cases.push((
            format!("cassandra/legacy_{v}_clust_counter/{v}-1-big-Data.db"),
            5,
            0,
            250,
            0,
        ));
        cases.push((
            format!("cassandra/legacy_{v}_simple/{v}-1-big-Data.db"),
            5,
            0,
            5,
            0,
        ));
    }
    cases.push((
        "cassandra/legacy_da_clust/da-1-bti-Data.db".into(),
        5,
        0,
        250,
        0,
    ));
    cases.push((
        "cassandra/legacy_da_simple_counter/da-1-bti-Data.db".into(),
        5,
        0,
        5,
        0,
    ));
    let x = "scylladb/3.x-uncompressed-";
    // pk1 st=777, pk2 st=999; 43,691 rows + 43,691 RTs (2 bounds each) per partition.
    cases.push((
        format!("{x}filtering_and_forwarding_range_tombstones/mc-1-big-Data.db"),
        2,
        2,
        87_382,
        174_764,
    ));
    // one partition, 26,215 rows each inside its own RT.
    cases.push((
        format!("{x}slicing_interleaved_rows_and_rts/mc-1-big-Data.db"),
        1,
        1,
        26_215,
        52_430,
    ));
    // ck 0..1023 in 2 partitions with statics.
    cases.push((
        format!("{x}skip_using_index_rows/mc-1-big-Data.db"),
        2,
        2,
        2048,
        0,
    ));
    // pk1 s=1 ck 101..110; pk2 ck 101..110 (no static value, but a static row).
    cases.push((
        format!("{x}filtering_and_forwarding/mc-1-big-Data.db"),
        2,
        2,
        20,
        0,
    ));
    // pk1 ck 101..110; 3 deletes incl. an adjacent pair (boundary at 104):
    // rows 101, 105..108 survive the flush (Scylla's test_uncompressed_range_tombstones_simple_read).
    cases.push((
        format!("{x}range_tombstones_simple/mc-1-big-Data.db"),
        1,
        0,
        5,
        5,
    ));
    cases.push((format!("{x}simple/mc-1-big-Data.db"), 5, 0, 5, 0));
    cases.push((format!("{x}static_row/mc-1-big-Data.db"), 5, 5, 5, 0));
    cases.push((
        format!("{x}empty_clustering_key/mc-1-big-Data.db"),
        10,
        0,
        10,
        0,
    ));
    cases.push((
        format!("{x}random_partitioner/mc-1-big-Data.db"),
        3,
        0,
        3,
        0,
    ));
    for (rel, partitions, statics, rows, markers) in cases {
        let p = root.join(&rel);
        if !p.is_file() {
            eprintln!("skipping: {rel} absent");
            continue;
        }
        let (c, findings, _) = decode_all(&p).unwrap_or_else(|e| panic!("{rel}: {e}"));
        assert!(findings.is_empty(), "{rel}: {findings:?}");
        assert_eq!(
            (c.partitions, c.static_rows, c.rows, c.markers),
            (partitions, statics, rows, markers),
            "{rel}"
        );
    }
}

/// Sum of the shard counts of a counter context (§3.13).
fn counter_total(v: &[u8]) -> i64 {
    let n = i16::from_be_bytes([v[0], v[1]]).unsigned_abs() as usize;
    let shards = &v[2 + 2 * n..];
    assert_eq!(shards.len() % 32, 0);
    shards
        .chunks(32)
        .map(|s| i64::from_be_bytes(s[24..32].try_into().unwrap()))
        .sum()
}

/// Exact values asserted by upstream tests: counters, range tombstones,
/// simple values.
#[test]
fn corpus_values_match_manifest() {
    // wrong_counter_shard_order: each of c1..c5 totals the row's value
    // (Scylla test_wrong_counter_shard_order), rows in file order.
    for v in ["mc", "md", "me"] {
        with_fragments(
            &format!("scylladb/wrong_counter_shard_order/{v}-2-big-Data.db"),
            |_, r| {
                let mut totals = Vec::new();
                while let Some(f) = r.next_fragment().unwrap() {
                    if let Fragment::Row(row) = f {
                        assert_eq!(row.cells.len(), 5);
                        let t: Vec<i64> = row
                            .cells
                            .iter()
                            .map(|cd| {
                                let ColumnData::Simple { cell, .. } = cd else {
                                    panic!()
                                };
                                assert!(cell.is_counter());
                                counter_total(cell.value)
                            })
                            .collect();
                        assert!(t.iter().all(|x| *x == t[0]), "{t:?}");
                        totals.push(t[0]);
                    }
                }
                assert_eq!(
                    totals,
                    [28545, 27967, 28342, 28325, 28386, 28378, 28129, 28260],
                    "{v}"
                );
            },
        );
    }
    // counter_test: ck0 c1 = 13 (11 + 2), c2 = -92; ck1 c1 deleted.
    for v in ["mc", "md", "me"] {
        with_fragments(
            &format!("scylladb/counter_test/{v}-5-big-Data.db"),
            |_, r| {
                next(r);
                let Fragment::Row(row) = next(r) else {
                    panic!()
                };
                assert_eq!(row.clustering.values, vec![Some(&[0u8, 0, 0, 0][..])]);
                assert_eq!(counter_total(simple(&row, "c1").value), 13);
                assert_eq!(counter_total(simple(&row, "c2").value), -92);
                drop(row);
                let Fragment::Row(row) = next(r) else {
                    panic!()
                };
                let c1 = simple(&row, "c1");
                assert!(c1.is_deleted() && !c1.is_counter());
                drop(row);
                next(r);
            },
        );
    }
    // range_tombstones_simple: three deletions with the listed timestamps.
    with_fragments(
        "scylladb/3.x-uncompressed-range_tombstones_simple/mc-1-big-Data.db",
        |_, r| {
            let mut ts = Vec::new();
            while let Some(f) = r.next_fragment().unwrap() {
                if let Fragment::Marker(m) = f {
                    if let Some(d) = m.open_deletion() {
                        ts.push(d.marked_for_delete_at);
                    }
                }
            }
            assert_eq!(
                ts,
                [
                    1_529_519_641_211_958,
                    1_529_519_641_215_380,
                    1_529_519_643_267_068
                ]
            );
        },
    );
    // simple: pk n -> ck 100+n, val 1000+n.
    with_fragments(
        "scylladb/3.x-uncompressed-simple/mc-1-big-Data.db",
        |_, r| {
            let mut seen = 0;
            while let Some(f) = r.next_fragment().unwrap() {
                if let Fragment::Row(row) = f {
                    let ck =
                        i32::from_be_bytes(row.clustering.values[0].unwrap().try_into().unwrap());
                    let v = i32::from_be_bytes(simple(&row, "val").value.try_into().unwrap());
                    assert_eq!(v, ck + 900);
                    seen += 1;
                }
            }
            assert_eq!(seen, 5);
        },
    );
    // 64-column subset encodings: dense rows miss only a few columns.
    with_fragments(
        "scylladb/3.x-uncompressed-large_subset_of_columns_sparse/mc-1-big-Data.db",
        |_, r| {
            while let Some(f) = r.next_fragment().unwrap() {
                if let Fragment::Row(row) = f {
                    assert!(!row.cells.is_empty() && row.cells.len() <= 32);
                    for w in row.cells.windows(2) {
                        assert!(w[0].column().index < w[1].column().index);
                    }
                }
            }
        },
    );
}

/// `skip_partition` and `seek_partition` agree with a full scan: on a
/// compressed multi-partition file, skipping every other partition reads the
/// others identically, and seeking to a recorded partition position works.
#[test]
fn corpus_skip_and_seek() {
    let Some(root) = corpus_root() else { return };
    for rel in [
        "cassandra/legacy_nb_clust/nb-1-big-Data.db",
        "scylladb/3.x-uncompressed-skip_using_index_rows/mc-1-big-Data.db",
        "cassandra/legacy_oa_clust_counter/oa-1-big-Data.db",
    ] {
        let p = root.join(rel);
        if !p.is_file() {
            continue;
        }
        let (sst, header) = open(&p).unwrap();
        // Full scan: per partition (start, row count).
        let mut full = Vec::new();
        let mut r = ScanReader::new(&sst, &header).unwrap();
        while let Some(f) = r.next_fragment().unwrap() {
            match f {
                Fragment::PartitionStart { position, .. } => full.push((position, 0u64)),
                Fragment::Row(_) => full.last_mut().unwrap().1 += 1,
                _ => {}
            }
        }
        // Skip odd partitions.
        let mut r = ScanReader::new(&sst, &header).unwrap();
        let mut got = Vec::new();
        for i in 0.. {
            if i % 2 == 1 {
                if !r.skip_partition().unwrap() {
                    break;
                }
                continue;
            }
            let Some(Fragment::PartitionStart { position, .. }) = r.next_fragment().unwrap() else {
                break;
            };
            let mut rows = 0;
            loop {
                match r.next_fragment().unwrap().unwrap() {
                    Fragment::Row(_) => rows += 1,
                    Fragment::PartitionEnd { .. } => break,
                    _ => {}
                }
            }
            got.push((position, rows));
        }
        let want: Vec<_> = full.iter().step_by(2).copied().collect();
        assert_eq!(got, want, "{rel}");
        // Seek to the last partition, and read one partition with PartitionReader.
        let (last, rows) = *full.last().unwrap();
        let mut r = ScanReader::new(&sst, &header).unwrap();
        r.seek_partition(last).unwrap();
        assert!(
            matches!(r.next_fragment().unwrap(), Some(Fragment::PartitionStart { position, .. }) if position == last)
        );
        let mut pr = PartitionReader::new(&sst, &header, last).unwrap();
        let mut n = 0;
        while let Some(f) = pr.next_fragment().unwrap() {
            n += matches!(f, Fragment::Row(_)) as u64;
        }
        assert_eq!(n, rows, "{rel}");
    }
}

/// The Cassandra 5.0 fixtures: counts equal those of the `sstabledump.json`
/// Cassandra wrote for the same sstable.
#[test]
fn fixtures_counts_match_sstabledump() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/cassandra");
    let Ok(rd) = std::fs::read_dir(&dir) else {
        eprintln!("skipping: no fixtures at {}", dir.display());
        return;
    };
    let mut cases: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    let mut checked = 0;
    for case in &cases {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let Some(data) = std::fs::read_dir(case)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.to_string_lossy().ends_with("-Data.db"))
        else {
            continue;
        };
        // Counts from sstabledump.json; cases without one (same table, other
        // compression) carry the generator's summary of it in case.json.
        let summary = case_dump_counts(case);
        let want = match load_dump(case) {
            Some(dump) => {
                let w = dump_counts(&dump);
                if let Some(s) = summary {
                    assert_eq!(s, w, "{name}: case.json dump summary vs sstabledump.json");
                }
                w
            }
            None => match summary {
                Some(s) => s,
                None => {
                    eprintln!("skipping {name}: no sstabledump.json nor case.json counts");
                    continue;
                }
            },
        };
        let (c, findings, _) = decode_all(&data).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(findings.is_empty(), "{name}: {findings:?}");
        let got = (
            c.partitions,
            c.nonempty_static_rows,
            c.rows,
            c.markers,
            c.partition_deletions,
        );
        assert_eq!(
            got, want,
            "{name}: (partitions, non-empty static rows, rows, markers, partition deletions)"
        );
        checked += 1;
    }
    eprintln!("fixtures: {checked} cases match sstabledump.json");
}

/// The `dump` object of case.json, as dump_counts' tuple.
fn case_dump_counts(case: &Path) -> Option<(u64, u64, u64, u64, u64)> {
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(case.join("case.json")).ok()?).ok()?;
    let d = v.get("dump")?;
    let n = |k: &str| d.get(k).and_then(serde_json::Value::as_u64);
    Some((
        n("partitions")?,
        n("static_rows")?,
        n("rows")?,
        n("range_tombstone_markers")?,
        n("partition_deletions")?,
    ))
}

fn load_dump(case: &Path) -> Option<serde_json::Value> {
    use std::io::Read;
    let plain = case.join("sstabledump.json");
    if let Ok(b) = std::fs::read(&plain) {
        return serde_json::from_slice(&b).ok();
    }
    let gz = std::fs::read(case.join("sstabledump.json.gz")).ok()?;
    let mut s = Vec::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_end(&mut s)
        .ok()?;
    serde_json::from_slice(&s).ok()
}

/// (partitions, static rows, rows, markers, partition deletions) of an
/// sstabledump document.
fn dump_counts(v: &serde_json::Value) -> (u64, u64, u64, u64, u64) {
    let parts = v.as_array().expect("sstabledump: an array of partitions");
    let (mut s, mut r, mut m, mut d) = (0, 0, 0, 0);
    for p in parts {
        if p["partition"].get("deletion_info").is_some() {
            d += 1;
        }
        for u in p["rows"].as_array().map(Vec::as_slice).unwrap_or(&[]) {
            match u["type"].as_str() {
                Some("row") => r += 1,
                Some("static_block") => s += 1,
                Some("range_tombstone_bound" | "range_tombstone_boundary") => m += 1,
                other => panic!("unknown sstabledump type {other:?}"),
            }
        }
    }
    (parts.len() as u64, s, r, m, d)
}

/// One fuzz input: name, uncompressed Data.db bytes, header, features.
type FuzzInput = (
    String,
    Vec<u8>,
    SerializationHeader,
    crate::version::Features,
);

/// Uncompressed Data.db bytes and headers of a few varied corpus files
/// (compressed ones are decompressed through the reader's source).
fn fuzz_inputs() -> &'static [FuzzInput] {
    static INPUTS: std::sync::OnceLock<Vec<FuzzInput>> = std::sync::OnceLock::new();
    INPUTS.get_or_init(|| {
        let Some(root) = corpus_root() else {
            return Vec::new();
        };
        let x = "scylladb/3.x-uncompressed-";
        let rels = [
            format!("{x}collections/mc-1-big-Data.db"),
            format!("{x}write_dead_row_marker/mc-1-big-Data.db"),
            format!("{x}range_tombstones_simple/mc-1-big-Data.db"),
            format!("{x}large_subset_of_columns_dense/mc-1-big-Data.db"),
            format!("{x}large_subset_of_columns_sparse/mc-1-big-Data.db"),
            format!("{x}compound_static_row/mc-1-big-Data.db"),
            format!("{x}write_counter_table/mc-1-big-Data.db"),
            "cassandra/legacy_oa_clust/oa-1-big-Data.db".to_string(),
            "cassandra/legacy_nb_simple_counter/nb-1-big-Data.db".to_string(),
            "scylladb/wrong_range_tombstone_order/me-1-big-Data.db".to_string(),
        ];
        let mut out = Vec::new();
        for rel in rels {
            let p = root.join(&rel);
            let Ok((sst, header)) = open(&p) else {
                continue;
            };
            let mut src = DataSource::open(&sst).unwrap();
            src.fill(src.data_len()).unwrap();
            let bytes = src.window().to_vec();
            assert_eq!(bytes.len() as u64, src.data_len(), "{rel}");
            out.push((rel, bytes, header, sst.features()));
        }
        out
    })
}

/// Decode to the end or the first error; never panics, always terminates
/// (each call consumes at least one byte or ends).
fn decode_mutated(
    bytes: &[u8],
    h: &SerializationHeader,
    f: crate::version::Features,
    block_size: usize,
) -> (u64, bool) {
    let opts = ReaderOptions {
        max_unfiltered_size: 1 << 20,
        block_size,
        ..ReaderOptions::default()
    };
    let mut r = ScanReader::from_bytes(bytes, h, f, opts);
    let mut n = 0u64;
    loop {
        match r.next_fragment() {
            Ok(Some(_)) => n += 1,
            Ok(None) => return (n, r.failed()),
            Err(_) => {
                assert!(r.next_fragment().unwrap().is_none(), "fused after an error");
                return (n, true);
            }
        }
        assert!(n <= bytes.len() as u64 + 1, "more fragments than bytes");
    }
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        // 2048 cases by default; PROPTEST_CASES overrides.
        #![proptest_config(ProptestConfig {
            cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2048),
            ..ProptestConfig::default()
        })]

        /// Truncated real files: Err or Ok, never a panic.
        #[test]
        fn truncations_never_panic(which in 0usize..64, cut in 0.0f64..1.0, block in 1usize..5000) {
            let inputs = fuzz_inputs();
            if inputs.is_empty() { return Ok(()); }
            let (_, bytes, h, f) = &inputs[which % inputs.len()];
            let n = (bytes.len() as f64 * cut) as usize;
            decode_mutated(&bytes[..n], h, *f, block);
        }

        /// Real files with random byte flips: Err or Ok, never a panic.
        #[test]
        fn byte_flips_never_panic(which in 0usize..64,
                                  flips in proptest::collection::vec((0.0f64..1.0, 1u8..=255), 1..8),
                                  block in 1usize..5000) {
            let inputs = fuzz_inputs();
            if inputs.is_empty() { return Ok(()); }
            let (_, bytes, h, f) = &inputs[which % inputs.len()];
            let mut b = bytes.clone();
            for (at, x) in flips {
                let i = ((b.len() as f64) * at) as usize;
                if let Some(v) = b.get_mut(i) { *v ^= x; }
            }
            decode_mutated(&b, h, *f, block);
        }
    }
}

/// Every truncation of a small file either decodes (cut at a partition
/// boundary) or fails with an error located inside the file.
#[test]
fn every_truncation_of_a_small_file() {
    for (rel, bytes, h, f) in fuzz_inputs().iter().take(3) {
        let mut clean = 0;
        for n in 0..bytes.len() {
            let (_, failed) = decode_mutated(&bytes[..n], h, *f, 4096);
            clean += !failed as usize;
        }
        // Clean cuts: the empty prefix and each partition end (partition count).
        let (c, _, _) = decode_all(&corpus_root().unwrap().join(rel)).unwrap();
        assert_eq!(clean as u64, c.partitions, "{rel}");
    }
}

/// A flipped byte in a compressed chunk is a CRC32 mismatch located at the
/// chunk's uncompressed start; the chunk index is derivable from it.
#[test]
fn corrupt_compressed_chunk_reports_checksum_and_chunk() {
    let Some(root) = corpus_root() else { return };
    let set = root.join("cassandra/legacy_nb_clust");
    if !set.is_dir() {
        return;
    }
    let scratch = crate::test_support::scratch("data-test");
    let tmp = scratch.path();
    for e in std::fs::read_dir(&set).unwrap().flatten() {
        std::fs::copy(e.path(), tmp.join(e.file_name())).unwrap();
    }
    let data = tmp.join("nb-1-big-Data.db");
    let sst = Sstable::open_path(&data).unwrap();
    let ci_bytes = sst
        .read_component(crate::component::Component::CompressionInfo)
        .unwrap();
    let ci = crate::compression::CompressionInfo::parse(&ci_bytes, &sst.features()).unwrap();
    drop(sst);
    // Flip a byte in the middle of chunk 3.
    let mut b = std::fs::read(&data).unwrap();
    let at = (ci.chunk_offsets[3] + 10) as usize;
    b[at] ^= 0x40;
    std::fs::write(&data, &b).unwrap();
    let (sst, header) = open(&data).unwrap();
    let mut r = ScanReader::new(&sst, &header).unwrap();
    let err = loop {
        match r.next_fragment() {
            Ok(Some(_)) => {}
            Ok(None) => panic!("corruption not detected"),
            Err(e) => break e,
        }
    };
    assert!(
        matches!(
            err.kind,
            crate::ErrorKind::ChecksumMismatch { algo: "crc32", .. }
        ),
        "{err}"
    );
    let off = err.offset.unwrap();
    assert_eq!(off, 3 * ci.chunk_length as u64);
    assert_eq!(r.chunk_of(off), Some(3));
    assert!(err.file.is_some() && err.partition.is_some(), "{err}");
    assert!(r.next_fragment().unwrap().is_none());
    let stats = sst.io.stats();
    assert_eq!(
        stats
            .get(crate::component::Component::Data)
            .chunks_decompressed,
        3
    );
    drop(r);
    drop(sst);
}

/// Reads and bytes of a sequential scan of Data.db `[0, want)` with the
/// default IO options: read-ahead windows of `read_ahead` bytes from 0
/// (clipped at the end of the file), each read in `max_io` pieces.
fn scan_io(want: u64, file_len: u64) -> (u64, u64) {
    let o = crate::io::IoOptions::default();
    let (mut reads, mut bytes, mut s) = (0, 0, 0);
    while s < want {
        let e = (s + o.read_ahead).min(file_len);
        reads += (e - s).div_ceil(o.max_io);
        bytes += e - s;
        s = e;
    }
    (reads, bytes)
}

/// Records what a [`ColumnVisitor`] is handed, as the `cells` of a [`Row`].
#[derive(Default)]
struct Recorder<'a> {
    cells: Vec<ColumnData<'a>>,
    open: Option<(&'a Column, Option<crate::deletion::DeletionTime>, usize)>,
    elements: Vec<Cell<'a>>,
}

impl<'a> ColumnVisitor<'a> for Recorder<'a> {
    fn simple(&mut self, column: &'a Column, cell: &Cell<'a>) {
        assert!(self.open.is_none(), "simple cell inside a complex column");
        self.cells.push(ColumnData::Simple {
            column,
            cell: *cell,
        });
    }
    fn complex_start(
        &mut self,
        column: &'a Column,
        deletion: Option<crate::deletion::DeletionTime>,
        count: usize,
    ) {
        assert!(self.open.is_none(), "nested complex column");
        self.open = Some((column, deletion, count));
    }
    fn element(&mut self, column: &'a Column, cell: &Cell<'a>) {
        let (c, ..) = self.open.expect("element outside a complex column");
        assert!(std::ptr::eq(c, column));
        self.elements.push(*cell);
    }
    fn complex_end(&mut self, column: &'a Column) {
        let (c, complex_deletion, count) = self.open.take().expect("end of no complex column");
        assert!(std::ptr::eq(c, column));
        assert_eq!(self.elements.len(), count, "cells announced vs handed over");
        self.cells.push(ColumnData::Complex {
            column,
            complex_deletion,
            cells: std::mem::take(&mut self.elements),
        });
    }
}

/// `next_lazy` + `Row::visit` of a lazy row hands over exactly what `next_fragment`
/// decodes, row for row, on every row-format Data.db of the corpus and the
/// fixtures; on the corrupt sets both stop with the same error.
#[test]
fn corpus_lazy_rows_equal_decoded_rows() {
    let mut files: Vec<PathBuf> = corpus_data_files().into_iter().map(|f| f.path).collect();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/cassandra");
    if let Ok(cases) = std::fs::read_dir(&fixtures) {
        for case in cases.flatten() {
            for f in std::fs::read_dir(case.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                if f.file_name().to_string_lossy().ends_with("-Data.db") {
                    files.push(f.path());
                }
            }
        }
    }
    if files.is_empty() {
        return;
    }
    let (mut rows, mut errors) = (0u64, 0u64);
    for f in &files {
        let Ok((sst, header)) = open(f) else { continue };
        let (Ok(mut a), Ok(mut b)) = (
            ScanReader::new(&sst, &header),
            ScanReader::new(&sst, &header),
        ) else {
            continue;
        };
        loop {
            let want = a.next_fragment();
            let got = b.next_lazy().and_then(|l| {
                // A row is visited (not decoded whole) and rebuilt from what
                // the visitor was handed.
                let visited = |r: LazyRow<'_>| -> crate::Result<String> {
                    let head = (r.position, r.size, r.clustering.clone(), r.flags);
                    let head2 = (r.row_size, r.prev_unfiltered_size, r.liveness, r.deletion);
                    let shadow = r.scylla_shadowable_deletion;
                    let is_static = r.is_static();
                    let mut rec = Recorder::default();
                    r.visit(&mut rec)?;
                    let row = Row {
                        position: head.0,
                        size: head.1,
                        clustering: head.2,
                        flags: head.3,
                        row_size: head2.0,
                        prev_unfiltered_size: head2.1,
                        liveness: head2.2,
                        deletion: head2.3,
                        scylla_shadowable_deletion: shadow,
                        cells: rec.cells,
                    };
                    let f: Fragment<'_> = if is_static {
                        Fragment::StaticRow(row)
                    } else {
                        Fragment::Row(row)
                    };
                    Ok(format!("{f:?}"))
                };
                match l {
                    Some(Fragment::Row(r) | Fragment::StaticRow(r)) => visited(r).map(Some),
                    Some(o) => Ok(Some(format!("{:?}", o.into_decoded()?))),
                    None => Ok(None),
                }
            });
            match (want, got) {
                (Ok(Some(w)), Ok(Some(g))) => {
                    rows += matches!(w, Fragment::Row(_) | Fragment::StaticRow(_)) as u64;
                    assert_eq!(format!("{w:?}"), g, "{}", f.display());
                }
                (Ok(None), Ok(None)) => break,
                (Err(w), Err(g)) => {
                    assert_eq!(w.to_string(), g.to_string(), "{}", f.display());
                    errors += 1;
                    break;
                }
                (w, g) => panic!(
                    "{}: next_fragment {:?} but next_lazy {:?}",
                    f.display(),
                    w.map(|o| o.map(|f| format!("{f:?}"))),
                    g
                ),
            }
        }
    }
    eprintln!(
        "lazy rows: {} files, {rows} rows alike, {errors} alike errors",
        files.len()
    );
    assert!(rows > 0);
}
