//! Unit and corpus tests for Statistics.db.
//!
//! * builders: synthetic files per version family (TOC order, CRCs, Scylla
//!   quirks, `oa` padding, truncated pre-release `na`);
//! * corpus: every Statistics.db of a supported version under
//!   `shared/corpus` decodes, each component exactly to its extent;
//! * fixtures: the decoded values agree with Cassandra's `sstablemetadata`
//!   output stored next to each fixture (`tests/metadata_viewer.rs`: it needs the
//!   renderer of `commands`);
//! * proptest: mutated real files and random bytes never panic.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use super::*;
use crate::version::Version;

// ---------------------------------------------------------------- builders

fn f(v: &str) -> Features {
    Version::parse(v).unwrap().features()
}

#[derive(Default)]
struct B(Vec<u8>);

impl B {
    fn i32(&mut self, v: i32) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn i64(&mut self, v: i64) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn f64(&mut self, v: f64) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn u8(&mut self, v: u8) -> &mut Self {
        self.0.push(v);
        self
    }
    fn raw(&mut self, b: &[u8]) -> &mut Self {
        self.0.extend_from_slice(b);
        self
    }
    fn utf(&mut self, s: &str) -> &mut Self {
        self.0.extend_from_slice(&(s.len() as u16).to_be_bytes());
        self.raw(s.as_bytes())
    }
    fn vbytes(&mut self, b: &[u8]) -> &mut Self {
        crate::cur::write_uvint(&mut self.0, b.len() as u64);
        self.raw(b)
    }
    fn hist(&mut self, pairs: &[(i64, i64)]) -> &mut Self {
        self.i32(pairs.len() as i32);
        for &(o, c) in pairs {
            self.i64(o).i64(c);
        }
        self
    }
}

fn validation() -> Vec<u8> {
    let mut b = B::default();
    b.utf("org.apache.cassandra.dht.Murmur3Partitioner")
        .f64(0.01);
    b.0
}

fn compaction(ancestors: Option<&[i32]>) -> Vec<u8> {
    let mut b = B::default();
    if let Some(a) = ancestors {
        b.i32(a.len() as i32);
        for &x in a {
            b.i32(x);
        }
    }
    // HLL: version -2, p=13, sp=25, sparse, 2 entries
    let hll = [0xFF, 0xFF, 0xFF, 0xFE, 13, 25, 1, 2, 7, 3];
    b.i32(hll.len() as i32).raw(&hll);
    b.0
}

/// STATS for `v` with 2 tombstone bins and a one-int clustering.
fn stats(v: &str) -> Vec<u8> {
    let ft = f(v);
    let mut b = B::default();
    b.hist(&[(1, 0), (1, 5), (2, 7)]).hist(&[(1, 0), (1, 1)]);
    b.i64(11).i32(22); // commit log upper bound
    b.i64(100).i64(200); // timestamps
    if !ft.legacy_cells {
        b.i32(1_000);
    }
    b.i32(i32::MAX);
    if !ft.legacy_cells {
        b.i32(0).i32(86_400);
    }
    b.f64(0.5);
    b.i32(2).i32(2);
    if ft.uint_deletion_time {
        b.i64(1_000).i32(3).i64(2_000).i32(4);
    } else {
        b.f64(1_000.0).i64(3).f64(2_000.0).i64(4);
    }
    b.i32(1).i64(0); // level, repaired at
    let improved = |b: &mut B| {
        b.u8(1).vbytes(b"org.apache.cassandra.db.marshal.Int32Type");
        b.u8(1).raw(&[0, 1]).u8(0).i32(-5); // INCL_START size 1, header 0, int
        b.u8(6).raw(&[0, 1]).u8(0).i32(9); // INCL_END
    };
    if !ft.uint_deletion_time {
        b.i32(1).raw(&[0, 4]).i32(-5);
        b.i32(1).raw(&[0, 4]).i32(9);
    } else {
        improved(&mut b);
    }
    b.u8(0);
    if ft.legacy_cells {
        return b.0;
    }
    b.i64(30).i64(10);
    if ft.commit_log_lower_bound {
        b.i64(11).i32(1);
    }
    if ft.commit_log_intervals {
        b.i32(1).i64(11).i32(1).i64(11).i32(22);
    }
    if ft.pending_repair {
        b.u8(0);
    }
    if ft.is_transient {
        b.u8(0);
    }
    if ft.originating_host_id {
        b.u8(1).raw(&[0xAB; 16]);
    }
    if ft.partition_level_deletions_marker {
        b.u8(1);
    }
    if ft.improved_min_max && ft.legacy_min_max {
        improved(&mut b);
    }
    if ft.key_range {
        b.vbytes(&1i32.to_be_bytes()).vbytes(&9i32.to_be_bytes());
    }
    if ft.token_space_coverage {
        b.f64(f64::NAN);
        b.raw(&[0; 8]); // NOTE: oa padding, 4 bytes per tombstone bin
    }
    b.0
}

fn header() -> Vec<u8> {
    let mut b = B::default();
    b.u8(0).u8(0).u8(0);
    b.vbytes(b"org.apache.cassandra.db.marshal.Int32Type");
    b.u8(1).vbytes(b"org.apache.cassandra.db.marshal.Int32Type");
    b.u8(0);
    b.u8(1)
        .vbytes(b"v")
        .vbytes(b"org.apache.cassandra.db.marshal.UTF8Type");
    b.0
}

/// Assemble a file from (type, body) pairs in TOC order `order`.
fn assemble(v: &str, comps: &[(i32, Vec<u8>)], order: &[usize]) -> Vec<u8> {
    let ft = f(v);
    let ck = ft.metadata_checksum;
    let mut out = B::default();
    out.i32(comps.len() as i32);
    if ck {
        let c = crc32fast::hash(&out.0);
        out.i32(c as i32);
    }
    let mut pos = 4 + 8 * comps.len() + if ck { 8 } else { 0 };
    let mut offs = Vec::new();
    for (_, body) in comps {
        offs.push(pos);
        pos += body.len() + if ck { 4 } else { 0 };
    }
    let toc_start = out.0.len();
    for &i in order {
        out.i32(comps[i].0).i32(offs[i] as i32);
    }
    if ck {
        let mut h = crc32fast::Hasher::new();
        h.update(&out.0[..4]);
        h.update(&out.0[toc_start..]);
        out.i32(h.finalize() as i32);
    }
    for (_, body) in comps {
        out.raw(body);
        if ck {
            out.i32(crc32fast::hash(body) as i32);
        }
    }
    out.0
}

fn file(v: &str) -> Vec<u8> {
    let ft = f(v);
    let mut comps = vec![
        (0, validation()),
        (
            1,
            compaction(if ft.legacy_cells { Some(&[3, 4]) } else { None }),
        ),
        (2, stats(v)),
    ];
    if !ft.legacy_cells {
        comps.push((3, header()));
    }
    let order: Vec<usize> = (0..comps.len()).collect();
    assemble(v, &comps, &order)
}

fn assert_clean(st: &Statistics) {
    for c in &st.components {
        assert_eq!(c.consumed, c.len, "{:?} not consumed exactly", c.kind);
        assert!(c.crc_ok());
    }
    assert!(st.problems.is_empty(), "{:?}", st.problems);
}

#[test]
fn every_version_round_trips() {
    for v in [
        "ka", "la", "ma", "mb", "mc", "md", "me", "ms", "mt", "na", "nb", "nc", "oa", "da",
    ] {
        let bytes = file(v);
        let st = Statistics::parse(&bytes, f(v)).unwrap_or_else(|e| panic!("{v}: {e}"));
        assert_clean(&st);
        let ft = f(v);
        let val = st.validation.as_ref().unwrap();
        assert_eq!(
            val.partitioner,
            "org.apache.cassandra.dht.Murmur3Partitioner"
        );
        assert_eq!(val.bloom_filter_fp_chance, 0.01);
        let comp = st.compaction.as_ref().unwrap();
        assert_eq!(comp.ancestors.is_some(), ft.legacy_cells, "{v}");
        assert_eq!(
            comp.cardinality(),
            Some(Cardinality {
                estimate: 2,
                exact: true
            })
        );
        let s = st.stats.as_ref().unwrap();
        assert_eq!(s.estimated_partition_size.buckets(), vec![(1, 0), (2, 5)]);
        assert_eq!(s.estimated_partition_size.overflow(), 7);
        assert_eq!((s.min_timestamp, s.max_timestamp), (100, 200));
        assert_eq!(
            s.max_local_deletion_time,
            if ft.uint_deletion_time {
                i32::MAX as i64
            } else {
                NO_DELETION_TIME
            }
        );
        assert_eq!(s.min_local_deletion_time.is_some(), !ft.legacy_cells);
        let bins: Vec<(i64, i64)> = s
            .tombstone_drop_time
            .bins
            .iter()
            .map(|b| (b.time, b.count))
            .collect();
        assert_eq!(bins, vec![(1_000, 3), (2_000, 4)]);
        assert!(s.tombstone_drop_time.invalid.is_none());
        assert_eq!(s.legacy_min_clustering.is_some(), !ft.uint_deletion_time);
        assert_eq!(s.covered_clustering.is_some(), ft.improved_min_max, "{v}");
        if let Some(c) = &s.covered_clustering {
            assert_eq!(c.start.values, vec![Some((-5i32).to_be_bytes().to_vec())]);
            assert_eq!(c.end.kind, 6);
            assert_eq!(c.position == CoveredPosition::Nc, v == "nc");
        }
        assert_eq!(s.commit_log_intervals.is_some(), ft.commit_log_intervals);
        assert_eq!(
            s.originating_host_id,
            ft.originating_host_id
                .then_some(Some(crate::value::Uuid([0xAB; 16])))
        );
        assert_eq!(s.first_key.is_some(), ft.key_range);
        assert_eq!(s.padding, if ft.uint_deletion_time { 8 } else { 0 });
        assert!(s.token_space_coverage.is_some_and(f64::is_nan) == ft.token_space_coverage);
        assert_eq!(st.header.is_some(), !ft.legacy_cells);
    }
}

#[test]
fn unsorted_toc_and_scylla_ancestors() {
    // Old Scylla: TOC order 3,2,0,1 (§6.1) and an empty ancestors array in mc COMPACTION (§6.3).
    let comps = vec![
        (0, validation()),
        (1, compaction(Some(&[]))),
        (2, stats("mc")),
        (3, header()),
    ];
    let bytes = assemble("mc", &comps, &[3, 2, 0, 1]);
    let st = Statistics::parse(&bytes, f("mc")).unwrap();
    assert_clean(&st);
    assert_eq!(
        st.components.iter().map(|c| c.ordinal).collect::<Vec<_>>(),
        vec![3, 2, 0, 1]
    );
    assert_eq!(st.compaction.unwrap().ancestors, Some(vec![]));
    assert!(st.header.is_some());
}

#[test]
fn crc_mismatch_names_the_offset() {
    let mut bytes = file("nb");
    let st = Statistics::parse(&bytes, f("nb")).unwrap();
    let stats_ext = st.extent(MetadataKind::Stats).unwrap().clone();
    // Flip a byte inside STATS (the min timestamp).
    let at = stats_ext.offset as usize + 60;
    bytes[at] ^= 0x40;
    let e = Statistics::parse(&bytes, f("nb")).unwrap_err();
    assert!(matches!(e.kind, ErrorKind::ChecksumMismatch { .. }), "{e}");
    assert_eq!(e.offset, Some(stats_ext.offset + stats_ext.len));
    let st = Statistics::parse_lenient(&bytes, f("nb")).unwrap();
    assert_eq!(st.problems.len(), 1);
    // TOC CRC.
    let mut bytes = file("oa");
    bytes[13] ^= 1; // inside the first TOC entry's offset
    let e = Statistics::parse_lenient(&bytes, f("oa"));
    assert!(e.is_err() || !e.unwrap().problems.is_empty());
    let mut bytes = file("oa");
    bytes[8] ^= 1; // the TOC's first type ordinal
    let e = Statistics::parse(&bytes, f("oa")).unwrap_err();
    assert!(matches!(e.kind, ErrorKind::ChecksumMismatch { .. }));
    assert_eq!(e.offset, Some(8 + 32));
}

#[test]
fn zero_sized_histogram_is_an_error() {
    let mut s = B::default();
    s.i32(0);
    s.raw(&stats("la")[4 + 3 * 16..]);
    let comps = vec![(0, validation()), (1, compaction(Some(&[]))), (2, s.0)];
    let bytes = assemble("la", &comps, &[0, 1, 2]);
    let e = Statistics::parse(&bytes, f("la")).unwrap_err();
    assert!(e.to_string().contains("histogram with size 0"), "{e}");
}

#[test]
fn unsorted_tombstone_histogram_is_kept_but_flagged() {
    let mut s = stats("la");
    // The first bin point is at: 2 hists (52 + 36) + 12 + 16 + 4 + 8 + 8 = 136.
    let p = 52 + 36 + 12 + 16 + 4 + 8 + 8;
    s[p..p + 8].copy_from_slice(&3_000.5f64.to_be_bytes());
    let comps = vec![(0, validation()), (1, compaction(Some(&[]))), (2, s)];
    let st = Statistics::parse(&assemble("la", &comps, &[0, 1, 2]), f("la")).unwrap();
    assert_clean(&st);
    let h = &st.stats.unwrap().tombstone_drop_time;
    assert!(h.invalid.is_some());
    assert_eq!(h.bins[0].raw_point, Some(3_000.5));
    assert_eq!(h.bins[0].time, 3_000);
}

#[test]
fn prerelease_na_without_is_transient() {
    let mut s = stats("na");
    s.truncate(s.len() - 1); // drop is_transient
    let comps = vec![
        (0, validation()),
        (1, compaction(None)),
        (2, s),
        (3, header()),
    ];
    let st = Statistics::parse(&assemble("na", &comps, &[0, 1, 2, 3]), f("na")).unwrap();
    assert_clean(&st);
    let s = st.stats.unwrap();
    assert_eq!(s.is_transient, None);
    assert_eq!(s.truncated_after, Some("pending repair"));
}

#[test]
fn bad_tocs_are_errors() {
    let good = file("mc");
    for bad in [
        vec![0, 0, 0, 0],
        vec![0, 0, 0, 1, 0, 0, 0, 0],
        vec![0x7F, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        {
            let mut b = good.clone();
            b[8..12].copy_from_slice(&(good.len() as i32 + 1).to_be_bytes());
            b
        },
        {
            let mut b = good.clone();
            b[8..12].copy_from_slice(&2i32.to_be_bytes());
            b
        },
    ] {
        assert!(Statistics::parse(&bad, f("mc")).is_err());
    }
}

#[test]
fn header_deletion_time_base_by_version() {
    // delta 0x7000_0000 (beyond 2038 once the epoch is added)
    let mut b = B::default();
    b.u8(0);
    crate::cur::write_uvint(&mut b.0, 0x7000_0000);
    b.u8(0).vbytes(b"Int32Type").u8(0).u8(0).u8(0);
    let legacy = SerializationHeader::parse(&mut Cur::new(&b.0, Component::Statistics, 0)).unwrap();
    let oa =
        SerializationHeader::parse_versioned(&mut Cur::new(&b.0, Component::Statistics, 0), true)
            .unwrap();
    assert_eq!(
        legacy.min_local_deletion_time,
        (1_442_880_000i32).wrapping_add(0x7000_0000) as i64
    );
    assert_eq!(oa.min_local_deletion_time, 1_442_880_000 + 0x7000_0000);
}

// ------------------------------------------------------------- jb (legacy)

/// A `jb` Statistics.db blob (LegacyMetadataSerializer order); `level` and
/// `names` control the optional tail.
fn jb_blob(level: bool, names: bool) -> Vec<u8> {
    let mut b = B::default();
    b.hist(&[(1, 0), (1, 5), (2, 0)]).hist(&[(1, 0), (1, 5)]);
    b.i64(1441109157835).i32(151050); // replay position
    b.i64(100).i64(200).i32(i32::MAX); // timestamps, max ldt
    b.f64(0.01).f64(0.25); // fp chance, compression ratio
    b.utf("org.apache.cassandra.dht.ByteOrderedPartitioner");
    b.i32(2).i32(3).i32(4); // ancestors
    b.i32(100).i32(1).f64(1_000.0).i64(7); // tombstone histogram
    if level {
        b.i32(2);
    }
    if names {
        b.i32(1).raw(&[0, 0]);
        b.i32(1).raw(&[0, 3]).raw(b"val");
    }
    b.0
}

#[test]
fn jb_legacy_blob_maps_onto_the_components() {
    let st = Statistics::parse(&jb_blob(true, true), f("jb")).unwrap();
    assert!(st.components.is_empty() && st.toc_crcs.is_none() && st.header.is_none());
    assert!(st.problems.is_empty());
    let v = st.validation.as_ref().unwrap();
    assert_eq!(
        v.partitioner,
        "org.apache.cassandra.dht.ByteOrderedPartitioner"
    );
    assert_eq!(v.bloom_filter_fp_chance, 0.01);
    let c = st.compaction.as_ref().unwrap();
    assert_eq!(c.ancestors.as_deref(), Some(&[3, 4][..]));
    assert!(c.cardinality_bytes.is_none() && c.hll.is_none() && c.cardinality().is_none());
    let s = st.stats.as_ref().unwrap();
    assert_eq!(s.estimated_partition_size.pairs.len(), 3);
    assert_eq!(s.commit_log_upper_bound.position, 151050);
    assert_eq!((s.min_timestamp, s.max_timestamp), (100, 200));
    assert_eq!(s.max_local_deletion_time, NO_DELETION_TIME);
    assert_eq!(s.compression_ratio, 0.25);
    assert_eq!(s.tombstone_drop_time.bins.len(), 1);
    assert_eq!(s.sstable_level, 2);
    assert_eq!(s.legacy_min_clustering, Some(vec![vec![]]));
    assert_eq!(s.legacy_max_clustering, Some(vec![b"val".to_vec()]));
    assert_eq!(s.repaired_at, None);
    assert_eq!(s.has_legacy_counter_shards, None);
    assert!(s.min_local_deletion_time.is_none() && s.min_ttl.is_none());
    // The same bytes are not a `ka` file (a 3-entry "TOC" pointing nowhere).
    assert!(Statistics::parse(&jb_blob(true, true), f("ka")).is_err());
}

#[test]
fn jb_legacy_blob_tail_and_bounds() {
    // Bytes after the max column names: kept as a problem, not fatal.
    let mut b = jb_blob(true, true);
    b.extend_from_slice(&[0, 0]);
    let st = Statistics::parse(&b, f("jb")).unwrap();
    assert_eq!(st.problems.len(), 1, "{:?}", st.problems);
    // Cassandra reads the column names unconditionally: without them the
    // file is short, as it is at every truncation.
    assert!(Statistics::parse(&jb_blob(false, false), f("jb")).is_err());
    let full = jb_blob(true, true);
    for cut in 0..full.len() {
        assert!(
            Statistics::parse(&full[..cut], f("jb")).is_err(),
            "cut {cut}"
        );
    }
    // Huge counts fail on the bounds check, without allocating.
    for at in [0usize, 52] {
        let mut b = full.clone();
        b[at..at + 4].copy_from_slice(&i32::MAX.to_be_bytes());
        assert!(Statistics::parse(&b, f("jb")).is_err(), "at {at}");
    }
}

// ------------------------------------------------------------------ corpus

/// The corpus root, or None when it is absent.
pub(super) fn corpus_dir() -> Option<PathBuf> {
    crate::test_support::root()
}

fn find_files(dir: &Path, suffix: &str, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            find_files(&p, suffix, out);
        } else if p
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.ends_with(suffix))
        {
            out.push(p);
        }
    }
}

/// True when `path` is in a set the corpus marks as deliberately corrupt
/// (MANIFEST.md): its Statistics.db may fail, never panic.
fn corrupt_set(path: &Path) -> bool {
    let set = path
        .parent()
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str());
    crate::test_support::is_corrupt_set(set.unwrap_or(""))
}

fn version_of(path: &Path) -> Option<Version> {
    crate::descriptor::Descriptor::from_path(path)
        .ok()
        .map(|d| d.0.version)
}

#[test]
fn corpus_statistics_decode_to_the_end() {
    let Some(dir) = corpus_dir() else { return };
    let mut files = Vec::new();
    find_files(&dir, "Statistics.db", &mut files);
    let (mut ok, mut failed_corrupt, mut skipped) = (0, 0, 0);
    let mut rejected: Vec<String> = Vec::new();
    let mut by_version = std::collections::BTreeMap::<String, usize>::new();
    let mut failures = Vec::new();
    let mut quirks: [Vec<String>; 6] = Default::default();
    for p in &files {
        let Some(v) = version_of(p) else {
            skipped += 1;
            continue;
        };
        let bytes = std::fs::read(p).unwrap();
        match Statistics::parse(&bytes, v.features()) {
            Ok(st) => {
                let mut bad = Vec::new();
                for c in &st.components {
                    if c.consumed != c.len {
                        bad.push(format!("{:?} consumed {} of {}", c.kind, c.consumed, c.len));
                    }
                    if v.features().metadata_checksum && c.stored_crc.is_none() {
                        bad.push(format!("{:?} has no crc", c.kind));
                    }
                }
                if st.validation.is_none() || st.stats.is_none() || st.compaction.is_none() {
                    bad.push("missing component".into());
                }
                if !v.features().legacy_cells && st.header.is_none() {
                    bad.push("missing header".into());
                }
                if let Some(Err(e)) = st.compaction.as_ref().and_then(|c| c.hll.as_ref()) {
                    bad.push(format!("hll: {e}"));
                }
                let s = st.stats.as_ref();
                let quirk = [
                    s.is_some_and(|s| s.truncated_after.is_some()),
                    s.is_some_and(|s| s.padding > 0),
                    !v.features().legacy_cells
                        && st
                            .compaction
                            .as_ref()
                            .is_some_and(|c| c.ancestors.is_some()),
                    s.is_some_and(|s| s.tombstone_drop_time.invalid.is_some()),
                    st.compaction
                        .as_ref()
                        .and_then(|c| c.cardinality())
                        .is_some_and(|c| !c.exact),
                    st.components.windows(2).any(|w| w[0].offset > w[1].offset),
                ];
                for (i, q) in quirk.iter().enumerate() {
                    if *q {
                        quirks[i].push(p.strip_prefix(&dir).unwrap_or(p).display().to_string());
                    }
                }
                if bad.is_empty() {
                    ok += 1;
                    *by_version.entry(v.to_string()).or_default() += 1;
                } else {
                    failures.push(format!("{}: {}", p.display(), bad.join("; ")));
                }
            }
            Err(e) if corrupt_set(p) => {
                eprintln!("corrupt set, error as allowed: {}: {e}", p.display());
                failed_corrupt += 1;
                let set = p.parent().and_then(|d| d.file_name());
                let file = p.file_name();
                if let (Some(set), Some(file)) = (set, file) {
                    rejected.push(format!(
                        "{}/{}",
                        set.to_string_lossy(),
                        file.to_string_lossy()
                    ));
                }
            }
            Err(e) => failures.push(format!("{}: {e}", p.display())),
        }
    }
    eprintln!("statistics corpus: {ok} ok {by_version:?}, {failed_corrupt} corrupt failed, {skipped} unsupported versions");
    // MANIFEST.md: the one Statistics.db corrupt on purpose (a histogram of
    // size 0); the other corrupt sets are damaged elsewhere.
    assert_eq!(rejected, ["zero_sized_histogram/la-5-big-Statistics.db"]);
    let names = [
        "truncated STATS",
        "oa padding",
        "Scylla ancestors",
        "invalid tombstone histogram",
        "inexact HLL",
        "unsorted TOC",
    ];
    for (n, q) in names.iter().zip(&quirks) {
        eprintln!(
            "  {n}: {} {:?}",
            q.len(),
            q.iter().take(4).collect::<Vec<_>>()
        );
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(ok > 200, "only {ok} files decoded");
}

#[test]
fn corpus_known_quirks() {
    let Some(dir) = corpus_dir().map(|c| c.join("scylladb")) else {
        return;
    };
    let read = |rel: &str| std::fs::read(dir.join(rel)).ok();
    if let Some(b) = read("bad_tombstone_histogram/la-1-big-Statistics.db") {
        let st = Statistics::parse(&b, f("la")).unwrap();
        let s = st.stats.unwrap();
        assert!(s.tombstone_drop_time.invalid.is_some());
        assert_eq!(s.tombstone_drop_time.bins.len(), 100);
        assert_eq!(
            st.components.iter().map(|c| c.ordinal).collect::<Vec<_>>(),
            vec![2, 1, 0]
        );
    }
    if let Some(b) = read("zero_sized_histogram/la-5-big-Statistics.db") {
        let e = Statistics::parse(&b, f("la")).unwrap_err();
        assert_eq!(e.offset, Some(0x71));
    }
}

// --------------------------------------------------------------- proptest

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    fn samples() -> Vec<(Vec<u8>, Features)> {
        let mut v: Vec<(Vec<u8>, Features)> = ["la", "mc", "me", "nb", "nc", "oa"]
            .iter()
            .map(|x| (file(x), f(x)))
            .collect();
        v.push((jb_blob(true, true), f("jb")));
        let mut files = Vec::new();
        if let Some(dir) = corpus_dir() {
            find_files(&dir, "Statistics.db", &mut files);
        }
        for p in files.iter().step_by(9) {
            if let (Some(ver), Ok(b)) = (version_of(p), std::fs::read(p)) {
                v.push((b, ver.features()));
            }
        }
        v
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        #[test]
        fn mutated_files_never_panic(
            pick in any::<prop::sample::Index>(),
            muts in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
            cut in any::<prop::sample::Index>(),
            truncate in any::<bool>(),
        ) {
            thread_local!(static S: Vec<(Vec<u8>, Features)> = samples());
            S.with(|s| {
                let (b, ft) = &s[pick.index(s.len())];
                let mut b = b.clone();
                for (i, x) in &muts {
                    let i = i.index(b.len());
                    b[i] = *x;
                }
                if truncate {
                    b.truncate(cut.index(b.len() + 1));
                }
                let _ = Statistics::parse(&b, *ft);
                let _ = Statistics::parse_lenient(&b, *ft);
            });
        }

        #[test]
        fn random_bytes_never_panic(b in prop::collection::vec(any::<u8>(), 0..600), v in 0usize..6) {
            let ver = ["ka", "la", "mc", "me", "nc", "oa"][v];
            let _ = Statistics::parse_lenient(&b, f(ver));
        }
    }
}

#[test]
fn a_cut_file_is_called_truncated_with_both_sizes() {
    let bytes = file("nb");
    let st = Statistics::parse(&bytes, f("nb")).unwrap();
    let last = st.components.iter().map(|c| c.offset).max().unwrap();
    let half = &bytes[..(last as usize - 1)];
    let e = Statistics::parse_lenient(half, f("nb")).unwrap_err();
    assert_eq!(
        e.kind,
        ErrorKind::Truncated {
            expected: last + 1,
            actual: half.len() as u64
        },
        "{e}"
    );
    assert!(e.to_string().contains("truncated"), "{e}");
}
