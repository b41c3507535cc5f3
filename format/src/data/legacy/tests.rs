//! Tests of the legacy (`ka`/`la`) decoder: hand-built atoms, every
//! non-corrupt `ka`/`la` Data.db of the corpus whose schema MANIFEST.md
//! gives (decoded to the end, and clean under validate and scrub), exact
//! expectations from the upstream tests, and no panic on arbitrary bytes.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::*;
use crate::data::corpus_tests::corpus_root;
use crate::data::{ReaderOptions, ScanReader};
use crate::sstable::Sstable;
use crate::version::Version;

fn features() -> crate::version::Features {
    Version::parse("ka").unwrap().features()
}

// ------------------------------------------------------------ builders

/// A composite name: `len:u16 bytes eoc` per component.
fn composite(static_: bool, comps: &[(&[u8], u8)]) -> Vec<u8> {
    let mut v = Vec::new();
    if static_ {
        v.extend_from_slice(&[0xFF, 0xFF]);
    }
    for (c, eoc) in comps {
        v.extend_from_slice(&(c.len() as u16).to_be_bytes());
        v.extend_from_slice(c);
        v.push(*eoc);
    }
    v
}

fn short(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u16).to_be_bytes());
    out.extend_from_slice(b);
}

fn partition_start(out: &mut Vec<u8>, key: &[u8]) {
    short(out, key);
    out.extend_from_slice(&i32::MAX.to_be_bytes());
    out.extend_from_slice(&i64::MIN.to_be_bytes());
}

fn cell(out: &mut Vec<u8>, name: &[u8], ts: i64, value: &[u8]) {
    short(out, name);
    out.push(0);
    out.extend_from_slice(&ts.to_be_bytes());
    out.extend_from_slice(&(value.len() as i32).to_be_bytes());
    out.extend_from_slice(value);
}

fn rt(out: &mut Vec<u8>, start: &[u8], end: &[u8], ts: i64, ldt: i32) {
    short(out, start);
    out.push(mask::RANGE_TOMBSTONE);
    short(out, end);
    out.extend_from_slice(&ldt.to_be_bytes());
    out.extend_from_slice(&ts.to_be_bytes());
}

fn schema(cql: &str) -> TableSchema {
    TableSchema::from_cql(cql).unwrap()
}

/// One line per fragment: kind, clustering (hex), and what it carries.
fn summarize(bytes: &[u8], s: &TableSchema) -> Vec<String> {
    let mut r = ScanReader::legacy_from_bytes(bytes, s, features(), ReaderOptions::default());
    let mut out = Vec::new();
    while let Some(f) = r.next_fragment().unwrap() {
        out.push(describe(&f));
    }
    out
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn describe(f: &Fragment<'_>) -> String {
    let ck = |p: &ClusteringPrefix<'_>| {
        p.values
            .iter()
            .map(|v| v.map_or("null".to_string(), hex))
            .collect::<Vec<_>>()
            .join(":")
    };
    match f {
        Fragment::PartitionStart { key, .. } => format!("start {}", hex(key)),
        Fragment::PartitionEnd { .. } => "end".into(),
        Fragment::StaticRow(r) | Fragment::Row(r) => {
            let mut s = format!(
                "{} [{}]",
                if r.is_static() { "static" } else { "row" },
                ck(&r.clustering)
            );
            if let Some(l) = r.liveness {
                s.push_str(&format!(" live@{}", l.timestamp));
            }
            if let Some(d) = r.deletion {
                s.push_str(&format!(" del@{}", d.time.marked_for_delete_at));
            }
            for c in &r.cells {
                match c {
                    ColumnData::Simple { column, cell } => {
                        s.push_str(&format!(" {}={}", column.name(), hex(cell.value)))
                    }
                    ColumnData::Complex {
                        column,
                        complex_deletion,
                        cells,
                    } => {
                        s.push_str(&format!(" {}{{", column.name()));
                        if let Some(d) = complex_deletion {
                            s.push_str(&format!("del@{} ", d.marked_for_delete_at));
                        }
                        for e in cells {
                            s.push_str(&format!(
                                "{}:{} ",
                                hex(e.path.unwrap_or(&[])),
                                hex(e.value)
                            ));
                        }
                        s.push('}');
                    }
                }
            }
            s
        }
        Fragment::Marker(m) => {
            let d = match m.deletion {
                MarkerDeletion::Bound(d) => format!("@{}", d.marked_for_delete_at),
                MarkerDeletion::Boundary { end, start } => {
                    format!(
                        "@{}/@{}",
                        end.marked_for_delete_at, start.marked_for_delete_at
                    )
                }
            };
            format!("marker {} [{}] {d}", m.kind().name(), ck(&m.bound))
        }
    }
}

// ------------------------------------------------------------ unit tests

#[test]
fn groups_cells_into_rows_with_marker_and_collection() {
    let s = schema(
        "CREATE TABLE k.t (pk int, ck int, v int, s set<int>, st int static, \
         PRIMARY KEY (pk, ck))",
    );
    let ck1 = 1i32.to_be_bytes();
    let ck2 = 2i32.to_be_bytes();
    let mut b = Vec::new();
    partition_start(&mut b, &7i32.to_be_bytes());
    cell(
        &mut b,
        &composite(true, &[(b"", 0), (b"st", 0)]),
        5,
        &9i32.to_be_bytes(),
    );
    cell(&mut b, &composite(false, &[(&ck1, 0), (b"", 0)]), 10, b"");
    cell(
        &mut b,
        &composite(false, &[(&ck1, 0), (b"s", 0), (&3i32.to_be_bytes(), 0)]),
        10,
        b"",
    );
    cell(
        &mut b,
        &composite(false, &[(&ck1, 0), (b"v", 0)]),
        10,
        &1i32.to_be_bytes(),
    );
    // A collection tombstone for s of row 2, then its cell.
    rt(
        &mut b,
        &composite(false, &[(&ck2, 0), (b"s", 0xFF)]),
        &composite(false, &[(&ck2, 0), (b"s", 1)]),
        11,
        100,
    );
    cell(
        &mut b,
        &composite(false, &[(&ck2, 0), (b"v", 0)]),
        12,
        &2i32.to_be_bytes(),
    );
    b.extend_from_slice(&[0, 0]);
    assert_eq!(
        summarize(&b, &s),
        [
            "start 00000007",
            "static [] st=00000009",
            "row [00000001] live@10 v=00000001 s{00000003: }",
            "row [00000002] v=00000002 s{del@11 }",
            "end",
        ]
    );
}

#[test]
fn row_deletion_and_overlapping_range_tombstones() {
    let s = schema("CREATE TABLE k.t (pk int, a int, b int, v int, PRIMARY KEY (pk, a, b))");
    let a1 = 1i32.to_be_bytes();
    let b1 = 1i32.to_be_bytes();
    let b2 = 2i32.to_be_bytes();
    let mut b = Vec::new();
    partition_start(&mut b, &1i32.to_be_bytes());
    // [a=1] @10, nested [a=1,b=1..b=2] @20: boundary in, boundary out.
    rt(
        &mut b,
        &composite(false, &[(&a1, 0xFF)]),
        &composite(false, &[(&a1, 1)]),
        10,
        1,
    );
    rt(
        &mut b,
        &composite(false, &[(&a1, 0), (&b1, 0xFF)]),
        &composite(false, &[(&a1, 0), (&b2, 1)]),
        20,
        1,
    );
    // Row deletion of (1, 2), then a cell of it.
    rt(
        &mut b,
        &composite(false, &[(&a1, 0), (&b2, 0xFF)]),
        &composite(false, &[(&a1, 0), (&b2, 1)]),
        30,
        1,
    );
    cell(
        &mut b,
        &composite(false, &[(&a1, 0), (&b2, 0), (b"v", 0)]),
        40,
        &5i32.to_be_bytes(),
    );
    // A repetition of the outer tombstone (index block boundary).
    rt(
        &mut b,
        &composite(false, &[(&a1, 0xFF)]),
        &composite(false, &[(&a1, 1)]),
        10,
        1,
    );
    b.extend_from_slice(&[0, 0]);
    assert_eq!(
        summarize(&b, &s),
        [
            "start 00000001",
            "marker INCL_START_BOUND [00000001] @10",
            "marker EXCL_END_INCL_START_BOUNDARY [00000001:00000001] @10/@20",
            "row [00000001:00000002] del@30 v=00000005",
            "marker INCL_END_EXCL_START_BOUNDARY [00000001:00000002] @20/@10",
            "marker INCL_END_BOUND [00000001] @10",
            "end",
        ]
    );
}

#[test]
fn adjacent_tombstones_make_boundaries_or_merge() {
    let s = schema("CREATE TABLE k.t (pk int, c int, v int, PRIMARY KEY (pk, c))");
    let (c1, c2, c3, c4) = (
        1i32.to_be_bytes(),
        2i32.to_be_bytes(),
        3i32.to_be_bytes(),
        4i32.to_be_bytes(),
    );
    let mut b = Vec::new();
    partition_start(&mut b, &1i32.to_be_bytes());
    // [1, 2) @10 then [2, 3] @20: a boundary at 2.
    rt(
        &mut b,
        &composite(false, &[(&c1, 0xFF)]),
        &composite(false, &[(&c2, 0xFF)]),
        10,
        1,
    );
    rt(
        &mut b,
        &composite(false, &[(&c2, 0xFF)]),
        &composite(false, &[(&c3, 1)]),
        20,
        1,
    );
    // (3, 4] @20 right after: the same deletion goes on, no marker at 3.
    rt(
        &mut b,
        &composite(false, &[(&c3, 1)]),
        &composite(false, &[(&c4, 1)]),
        20,
        1,
    );
    // An older tombstone over exactly one clustering inside it: a row
    // deletion (C* LegacyLayout `isRowDeletion`), not a range.
    rt(
        &mut b,
        &composite(false, &[(&c4, 0xFF)]),
        &composite(false, &[(&c4, 1)]),
        5,
        1,
    );
    b.extend_from_slice(&[0, 0]);
    assert_eq!(
        summarize(&b, &s),
        [
            "start 00000001",
            "marker INCL_START_BOUND [00000001] @10",
            "marker EXCL_END_INCL_START_BOUNDARY [00000002] @10/@20",
            "row [00000004] del@5",
            "marker INCL_END_BOUND [00000004] @20",
            "end",
        ]
    );
}

#[test]
fn pending_tombstone_that_starts_later_does_not_cover() {
    // Before the first row tombstones wait; a newer one starting later must
    // not swallow an older one starting earlier.
    let s = schema("CREATE TABLE k.t (pk int, c int, v int, PRIMARY KEY (pk, c))");
    let (c1, c2, c5, c9) = (
        1i32.to_be_bytes(),
        2i32.to_be_bytes(),
        5i32.to_be_bytes(),
        9i32.to_be_bytes(),
    );
    let mut b = Vec::new();
    partition_start(&mut b, &1i32.to_be_bytes());
    rt(
        &mut b,
        &composite(false, &[(&c5, 0xFF)]),
        &composite(false, &[(&c9, 1)]),
        20,
        1,
    );
    rt(
        &mut b,
        &composite(false, &[(&c1, 0xFF)]),
        &composite(false, &[(&c2, 1)]),
        10,
        1,
    );
    cell(
        &mut b,
        &composite(false, &[(&c9, 0), (b"v", 0)]),
        30,
        &1i32.to_be_bytes(),
    );
    b.extend_from_slice(&[0, 0]);
    assert_eq!(
        summarize(&b, &s),
        [
            "start 00000001",
            "marker INCL_START_BOUND [00000001] @10",
            "marker INCL_END_BOUND [00000002] @10",
            "marker INCL_START_BOUND [00000005] @20",
            "row [00000009] v=00000001",
            "marker INCL_END_BOUND [00000009] @20",
            "end",
        ]
    );
}

#[test]
fn tombstones_before_the_rows_are_merged_in_order() {
    // Scylla's wrong_range_tombstone_order: every RT first, then the cells.
    let s = schema(
        "CREATE TABLE k.t (p int, a int, b int, r int, PRIMARY KEY (p, a, b)) \
         WITH COMPACT STORAGE",
    );
    let (a0, a1, a2) = (0i32.to_be_bytes(), 1i32.to_be_bytes(), 2i32.to_be_bytes());
    let mut b = Vec::new();
    partition_start(&mut b, &0i32.to_be_bytes());
    rt(
        &mut b,
        &composite(false, &[(&a0, 0xFF)]),
        &composite(false, &[(&a0, 1)]),
        1,
        1,
    );
    rt(
        &mut b,
        &composite(false, &[(&a2, 0xFF)]),
        &composite(false, &[(&a2, 1)]),
        2,
        1,
    );
    cell(
        &mut b,
        &composite(false, &[(&a1, 0)]),
        3,
        &7i32.to_be_bytes(),
    );
    b.extend_from_slice(&[0, 0]);
    assert_eq!(
        summarize(&b, &s),
        [
            "start 00000000",
            "marker INCL_START_BOUND [00000000] @1",
            "marker INCL_END_BOUND [00000000] @1",
            "row [00000001:null] r=00000007",
            "marker INCL_START_BOUND [00000002] @2",
            "marker INCL_END_BOUND [00000002] @2",
            "end",
        ]
    );
}

#[test]
fn compact_layouts() {
    // Static compact: the name is the column name.
    let s = schema("CREATE TABLE k.t (pk text PRIMARY KEY, v text) WITH COMPACT STORAGE");
    let mut b = Vec::new();
    partition_start(&mut b, b"a");
    cell(&mut b, b"v", 1, b"x");
    cell(&mut b, b"dropped", 1, b"y");
    b.extend_from_slice(&[0, 0]);
    assert_eq!(summarize(&b, &s), ["start 61", "row [] v=78", "end"]);
    // Dense, one clustering column: the name is the clustering value.
    let s = schema(
        "CREATE TABLE k.t (pk text, ck text, v text, PRIMARY KEY (pk, ck)) WITH COMPACT STORAGE",
    );
    let mut b = Vec::new();
    partition_start(&mut b, b"a");
    cell(&mut b, b"c1", 1, b"x");
    cell(&mut b, b"c2", 1, b"y");
    b.extend_from_slice(&[0, 0]);
    assert_eq!(
        summarize(&b, &s),
        ["start 61", "row [6331] v=78", "row [6332] v=79", "end"]
    );
}

#[test]
fn errors_name_the_offset_and_partition() {
    let s = schema("CREATE TABLE k.t (pk int, ck int, v int, PRIMARY KEY (pk, ck))");
    let mut b = Vec::new();
    partition_start(&mut b, &1i32.to_be_bytes());
    // An end bound with end-of-component 3.
    rt(
        &mut b,
        &composite(false, &[(b"x", 0xFF)]),
        &composite(false, &[(b"x", 3)]),
        1,
        1,
    );
    b.extend_from_slice(&[0, 0]);
    let mut r = ScanReader::legacy_from_bytes(&b, &s, features(), ReaderOptions::default());
    assert!(r.next_fragment().unwrap().is_some());
    let e = r.next_fragment().unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("Unexpected end composite marker 3"), "{msg}");
    assert!(msg.contains("0x00000001"), "{msg}");
    assert_eq!(e.offset, Some(18));
    // Fused.
    assert!(r.next_fragment().unwrap().is_none());
}

#[test]
fn truncated_input_is_an_error_not_a_panic() {
    let s = schema("CREATE TABLE k.t (pk int, ck int, v int, PRIMARY KEY (pk, ck))");
    let mut b = Vec::new();
    partition_start(&mut b, &1i32.to_be_bytes());
    cell(
        &mut b,
        &composite(false, &[(&1i32.to_be_bytes(), 0), (b"v", 0)]),
        1,
        &[1, 2, 3, 4],
    );
    b.extend_from_slice(&[0, 0]);
    for n in 0..b.len() {
        let mut r =
            ScanReader::legacy_from_bytes(&b[..n], &s, features(), ReaderOptions::default());
        let mut ended = false;
        loop {
            match r.next_fragment() {
                Ok(Some(Fragment::PartitionEnd { .. })) => ended = true,
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(_) => break,
            }
        }
        assert!(
            !ended || n == b.len(),
            "prefix {n} decoded a whole partition"
        );
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]
    /// Arbitrary bytes never panic and the reader always stops.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512),
                                   which in 0usize..4) {
        let cql = [
            "CREATE TABLE k.t (pk int, ck int, v int, s set<int>, st int static, PRIMARY KEY (pk, ck))",
            "CREATE TABLE k.t (pk int, a int, b int, r int, PRIMARY KEY (pk, a, b)) WITH COMPACT STORAGE",
            "CREATE TABLE k.t (pk int, ck int, v counter, PRIMARY KEY (pk, ck)) WITH COMPACT STORAGE",
            "CREATE TABLE k.t (pk text PRIMARY KEY, v text) WITH COMPACT STORAGE",
        ][which];
        let s = schema(cql);
        let mut r = ScanReader::legacy_from_bytes(&bytes, &s, features(), ReaderOptions::default());
        let mut n = 0;
        while let Ok(Some(_)) = r.next_fragment() {
            n += 1;
            proptest::prop_assert!(n < 100_000);
        }
    }
}

/// A valid partition with every kind of atom (static, marker, collection,
/// expiring, tombstone, counter-free range tombstones) to mutate.
fn rich_partition() -> (Vec<u8>, TableSchema) {
    let s = schema(
        "CREATE TABLE k.t (pk int, a int, b int, v int, s set<int>, st int static, \
         PRIMARY KEY (pk, a, b))",
    );
    let (a1, b1, b2) = (1i32.to_be_bytes(), 1i32.to_be_bytes(), 2i32.to_be_bytes());
    let mut b = Vec::new();
    partition_start(&mut b, &7i32.to_be_bytes());
    cell(
        &mut b,
        &composite(true, &[(b"", 0), (b"", 0), (b"st", 0)]),
        5,
        &9i32.to_be_bytes(),
    );
    rt(
        &mut b,
        &composite(false, &[(&a1, 0xFF)]),
        &composite(false, &[(&a1, 1)]),
        3,
        1,
    );
    cell(
        &mut b,
        &composite(false, &[(&a1, 0), (&b1, 0), (b"", 0)]),
        10,
        b"",
    );
    rt(
        &mut b,
        &composite(false, &[(&a1, 0), (&b1, 0), (b"s", 0xFF)]),
        &composite(false, &[(&a1, 0), (&b1, 0), (b"s", 1)]),
        9,
        1,
    );
    cell(
        &mut b,
        &composite(
            false,
            &[(&a1, 0), (&b1, 0), (b"s", 0), (&5i32.to_be_bytes(), 0)],
        ),
        10,
        b"",
    );
    // An expiring cell and a tombstone.
    short(&mut b, &composite(false, &[(&a1, 0), (&b1, 0), (b"v", 0)]));
    b.push(mask::EXPIRATION);
    b.extend_from_slice(&60i32.to_be_bytes());
    b.extend_from_slice(&1_500_000_000i32.to_be_bytes());
    b.extend_from_slice(&10i64.to_be_bytes());
    b.extend_from_slice(&4i32.to_be_bytes());
    b.extend_from_slice(&3i32.to_be_bytes());
    short(&mut b, &composite(false, &[(&a1, 0), (&b2, 0), (b"v", 0)]));
    b.push(mask::DELETION);
    b.extend_from_slice(&11i64.to_be_bytes());
    b.extend_from_slice(&4i32.to_be_bytes());
    b.extend_from_slice(&1_500_000_000i32.to_be_bytes());
    b.extend_from_slice(&[0, 0]);
    (b, s)
}

#[test]
fn rich_partition_decodes() {
    let (b, s) = rich_partition();
    assert_eq!(
        summarize(&b, &s),
        [
            "start 00000007",
            "static [] st=00000009",
            "marker INCL_START_BOUND [00000001] @3",
            "row [00000001:00000001] live@10 v=00000003 s{del@9 00000005: }",
            "row [00000001:00000002] v=",
            "marker INCL_END_BOUND [00000001] @3",
            "end",
        ]
    );
}

/// A row's cells as [`describe`] writes them, from a visit.
#[derive(Default)]
struct CellText(String);

impl<'a> crate::data::ColumnVisitor<'a> for CellText {
    fn simple(&mut self, column: &'a crate::data::Column, cell: &crate::data::Cell<'a>) {
        self.0
            .push_str(&format!(" {}={}", column.name(), hex(cell.value)));
    }
    fn complex_start(
        &mut self,
        column: &'a crate::data::Column,
        deletion: Option<crate::deletion::DeletionTime>,
        _count: usize,
    ) {
        self.0.push_str(&format!(" {}{{", column.name()));
        if let Some(d) = deletion {
            self.0.push_str(&format!("del@{} ", d.marked_for_delete_at));
        }
    }
    fn element(&mut self, _: &'a crate::data::Column, e: &crate::data::Cell<'a>) {
        self.0
            .push_str(&format!("{}:{} ", hex(e.path.unwrap_or(&[])), hex(e.value)));
    }
    fn complex_end(&mut self, _: &'a crate::data::Column) {
        self.0.push('}');
    }
}

/// Pre-3.0 rows come from `next_lazy` decoded already: decoding them whole
/// gives what `next_fragment` gives, and visiting them hands over the same
/// cells.
#[test]
fn lazy_reads_of_legacy_rows_equal_decoded_reads() {
    let (b, s) = rich_partition();
    let want = summarize(&b, &s);
    let mut r = ScanReader::legacy_from_bytes(&b, &s, features(), ReaderOptions::default());
    let mut whole = Vec::new();
    while let Some(f) = r.next_lazy().unwrap() {
        whole.push(describe(&f.into_decoded().unwrap()));
    }
    assert_eq!(whole, want);
    let mut r = ScanReader::legacy_from_bytes(&b, &s, features(), ReaderOptions::default());
    let mut visited = 0;
    for line in &want {
        match r.next_lazy().unwrap().unwrap() {
            Fragment::Row(row) | Fragment::StaticRow(row) => {
                let mut t = CellText::default();
                row.visit(&mut t).unwrap();
                assert!(line.ends_with(&t.0), "{line:?} but visited {:?}", t.0);
                visited += 1;
            }
            other => assert_eq!(&describe(&other.into_decoded().unwrap()), line),
        }
    }
    assert!(r.next_lazy().unwrap().is_none());
    assert_eq!(visited, 3);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1024))]
    /// A real partition with a few bytes changed, cut or both: never a
    /// panic, always a stop.
    #[test]
    fn mutated_partitions_never_panic(
        edits in proptest::collection::vec((0usize..400, proptest::prelude::any::<u8>()), 1..4),
        cut in 0usize..400,
    ) {
        let (mut b, s) = rich_partition();
        for (i, v) in edits {
            let n = b.len();
            b[i % n] = v;
        }
        b.truncate(b.len() - cut % b.len());
        let mut r = ScanReader::legacy_from_bytes(&b, &s, features(), ReaderOptions::default());
        let mut n = 0;
        while let Ok(Some(_)) = r.next_fragment() {
            n += 1;
            proptest::prop_assert!(n < 10_000);
        }
    }
}

// ------------------------------------------------------------ corpus

/// Every non-corrupt `ka`/`la` set of the corpus whose schema MANIFEST.md
/// gives: `(origin/set, file name filter, CREATE TABLE)`.
pub(crate) const CORPUS_SCHEMAS: &[(&str, &str, &str)] = &[
    ("cassandra/bloom-filter-ka", "", "CREATE TABLE foo.atable (pk int PRIMARY KEY, val int)"),
    ("cassandra/bloom-filter-la", "", "CREATE TABLE foo.atable (pk int PRIMARY KEY, val int)"),
    ("cassandra/legacy_ka_14766", "", "CREATE TABLE t.t (pk int, ck int, value text, PRIMARY KEY (pk, ck))"),
    ("cassandra/legacy_ka_14803", "", "CREATE TABLE t.t (k int, c int, v1 blob, v2 blob, PRIMARY KEY (k, c))"),
    ("cassandra/legacy_ka_14873", "", "CREATE TABLE t.t (pkc int, cc int, sc int static, rc text, PRIMARY KEY (pkc, cc)) WITH CLUSTERING ORDER BY (cc DESC)"),
    ("cassandra/legacy_ka_14912", "", "CREATE TABLE t.t (k int PRIMARY KEY, v1 set<text>, v2 text)"),
    ("cassandra/legacy_ka_15081", "", "CREATE TABLE t.t (id int PRIMARY KEY, payload text)"),
    ("cassandra/legacy_ka_clust", "", "CREATE TABLE t.t (pk text, ck text, val text, PRIMARY KEY (pk, ck))"),
    ("cassandra/legacy_ka_clust_compact", "", "CREATE TABLE t.t (pk text, ck text, val text, PRIMARY KEY (pk, ck)) WITH COMPACT STORAGE"),
    ("cassandra/legacy_ka_clust_counter", "", "CREATE TABLE t.t (pk text, ck text, val counter, PRIMARY KEY (pk, ck))"),
    ("cassandra/legacy_ka_clust_counter_compact", "", "CREATE TABLE t.t (pk text, ck text, val counter, PRIMARY KEY (pk, ck)) WITH COMPACT STORAGE"),
    ("cassandra/legacy_ka_compacted_multi_block_rt", "", "CREATE TABLE t.t (k int, c1 int, c2 int, v1 blob, v2 blob, PRIMARY KEY (k, c1, c2))"),
    // The MANIFEST says `k int`; the stored keys are text (`key11`).
    ("cassandra/legacy_ka_cql_created_dense_table_with_bytes", "", "CREATE TABLE t.t (k text, v text, PRIMARY KEY (k, v)) WITH COMPACT STORAGE"),
    ("cassandra/legacy_ka_cql_created_dense_table_with_int", "", "CREATE TABLE t.t (k text, v text, PRIMARY KEY (k, v)) WITH COMPACT STORAGE"),
    ("cassandra/legacy_ka_flushed_multi_block_rt", "", "CREATE TABLE t.t (k int, c1 int, c2 int, v1 blob, v2 blob, PRIMARY KEY (k, c1, c2))"),
    ("cassandra/legacy_ka_indexed", "", "CREATE TABLE t.t (p int, c int, v1 int, v2 int, PRIMARY KEY (p, c))"),
    ("cassandra/legacy_ka_indexed_static", "", "CREATE TABLE t.t (p int, c int, v1 int, v2 int, s1 int static, s2 int static, PRIMARY KEY (p, c))"),
    ("cassandra/legacy_ka_repeated_rt", "", "CREATE TABLE t.t (k1 int, c1 int, c2 int, val1 text, val2 text, val3 text, PRIMARY KEY (k1, c1, c2))"),
    ("cassandra/legacy_ka_simple", "", "CREATE TABLE t.t (pk text PRIMARY KEY, val text)"),
    ("cassandra/legacy_ka_simple_compact", "", "CREATE TABLE t.t (pk text PRIMARY KEY, val text) WITH COMPACT STORAGE"),
    ("cassandra/legacy_ka_simple_counter", "", "CREATE TABLE t.t (pk text PRIMARY KEY, val counter)"),
    ("cassandra/legacy_ka_simple_counter_compact", "", "CREATE TABLE t.t (pk text PRIMARY KEY, val counter) WITH COMPACT STORAGE"),
    ("cassandra/legacy_ka_with_illegal_cell_names", "", "CREATE TABLE t.t (pk int, c1 text, c2 text, v1 text, PRIMARY KEY (pk, c1, c2))"),
    ("cassandra/legacy_ka_with_illegal_cell_names_2", "", "CREATE TABLE t.t (pk int, c1 text, c2 text, v1 text, PRIMARY KEY (pk, c1, c2))"),
    ("cassandra/legacy_ka_with_illegal_cell_names_indexed", "", "CREATE TABLE t.t (a text, b text, z text, c text, PRIMARY KEY (a, b, z))"),
    ("cassandra/legacy_la_clust", "", "CREATE TABLE t.t (pk text, ck text, val text, PRIMARY KEY (pk, ck))"),
    ("cassandra/legacy_la_clust_compact", "", "CREATE TABLE t.t (pk text, ck text, val text, PRIMARY KEY (pk, ck)) WITH COMPACT STORAGE"),
    ("cassandra/legacy_la_clust_counter", "", "CREATE TABLE t.t (pk text, ck text, val counter, PRIMARY KEY (pk, ck))"),
    ("cassandra/legacy_la_clust_counter_compact", "", "CREATE TABLE t.t (pk text, ck text, val counter, PRIMARY KEY (pk, ck)) WITH COMPACT STORAGE"),
    ("cassandra/legacy_la_simple", "", "CREATE TABLE t.t (pk text PRIMARY KEY, val text)"),
    ("cassandra/legacy_la_simple_compact", "", "CREATE TABLE t.t (pk text PRIMARY KEY, val text) WITH COMPACT STORAGE"),
    ("cassandra/legacy_la_simple_counter", "", "CREATE TABLE t.t (pk text PRIMARY KEY, val counter)"),
    ("cassandra/legacy_la_simple_counter_compact", "", "CREATE TABLE t.t (pk text PRIMARY KEY, val counter) WITH COMPACT STORAGE"),
    ("cassandra/migration-2.1-system-compactions_in_progress", "", "CREATE TABLE system.compactions_in_progress (id uuid PRIMARY KEY, columnfamily_name text, inputs set<int>, keyspace_name text)"),
    ("scylladb/bad_tombstone_histogram", "", "CREATE TABLE tests.tombstone_histogram_test (id text PRIMARY KEY, value int)"),
    ("scylladb/broken_non_compound_pi_and_range_tombstone", "", "CREATE TABLE ks.test (pk int, ck int, v int, PRIMARY KEY (pk, ck)) WITH COMPACT STORAGE"),
    ("scylladb/broken_ranges", "", "CREATE TABLE system.peers (peer inet PRIMARY KEY, data_center text, host_id uuid, preferred_ip inet, rack text, release_version text, rpc_address inet, schema_version uuid, tokens set<text>)"),
    ("scylladb/buffer_overflow", "", "CREATE TABLE test_ks.test_tab (pk int, ck1 int, ck2 int, data text, PRIMARY KEY (pk, ck1, ck2))"),
    ("scylladb/compact_dense", "", "CREATE TABLE tests.t (ks blob, cl1 blob, cl2 blob, cl3 blob, PRIMARY KEY (ks, cl1, cl2)) WITH COMPACT STORAGE"),
    ("scylladb/compact_simple_dense", "", "CREATE TABLE tests.t (ks blob, cl1 blob, cl2 blob, PRIMARY KEY (ks, cl1)) WITH COMPACT STORAGE"),
    ("scylladb/compact_sparse", "", "CREATE TABLE tests.t (ks blob PRIMARY KEY, cl1 blob, cl2 blob) WITH COMPACT STORAGE"),
    ("scylladb/complex", "", COMPLEX),
    ("scylladb/composite", "", "CREATE TABLE tests.composite (name blob, col1 blob, PRIMARY KEY ((name, col1)))"),
    ("scylladb/compressed", "", "CREATE TABLE ks.uncompressed (name text PRIMARY KEY, col1 text, col2 int)"),
    ("scylladb/counter_test", "", "CREATE TABLE ks.counter_test (pk int, ck int, c1 counter, c2 counter, PRIMARY KEY (pk, ck))"),
    ("scylladb/deleted_cell", "", "CREATE TABLE ks.uncompressed (name text PRIMARY KEY, col1 text, col2 int)"),
    ("scylladb/large_partition", "", "CREATE TABLE try1.data (t1 text, t2 text, t3 text, PRIMARY KEY (t1, t2))"),
    ("scylladb/list_pk", "", "CREATE TABLE tests.list_pk (ss frozen<list<blob>> PRIMARY KEY, ns text)"),
    ("scylladb/map_pk", "", "CREATE TABLE tests.map_pk (ss frozen<map<blob, blob>> PRIMARY KEY, ns text)"),
    ("scylladb/multi_schema_test", "", "CREATE TABLE test.test_multi_schema (a int PRIMARY KEY, b int, c int, d set<int>, e int)"),
    ("scylladb/partition_skipping", "", "CREATE TABLE ks.test_skipping_partitions (pk int PRIMARY KEY, v int)"),
    ("scylladb/promoted_index_read", "", "CREATE TABLE ks.promoted_index_read (pk int, ck1 int, ck2 int, v int, PRIMARY KEY (pk, ck1, ck2))"),
    ("scylladb/set_pk", "", "CREATE TABLE tests.set_pk (ss frozen<set<blob>> PRIMARY KEY, ns text)"),
    ("scylladb/sliced_mutation_reads", "", "CREATE TABLE ks.sliced_mutation_reads_test (pk int, ck int, v1 int, v2 set<int>, PRIMARY KEY (pk, ck))"),
    ("scylladb/summary_test", "", "CREATE TABLE test.summary_test (a int PRIMARY KEY)"),
    ("scylladb/tombstone_overlap", "tab-", "CREATE TABLE try1.tab (pk text, ck1 text, ck2 text, data text, PRIMARY KEY (pk, ck1, ck2))"),
    ("scylladb/tombstone_overlap", "tab2-", "CREATE TABLE try1.tab2 (pk text, ck1 text, ck2 text, ck3 text, data text, PRIMARY KEY (pk, ck1, ck2, ck3))"),
    ("scylladb/ttl", "", "CREATE TABLE ks.uncompressed (name text PRIMARY KEY, col1 text, col2 int)"),
    ("scylladb/uncompressed", "", "CREATE TABLE ks.uncompressed (name text PRIMARY KEY, col1 text, col2 int)"),
    ("scylladb/unknown_component", "", "CREATE TABLE ks.uncompressed (name text PRIMARY KEY, col1 text, col2 int)"),
    ("scylladb/wrong_counter_shard_order", "", "CREATE TABLE scylla_bench.test_counters (pk bigint, ck bigint, c1 counter, c2 counter, c3 counter, c4 counter, c5 counter, PRIMARY KEY (pk, ck))"),
    ("scylladb/wrong_range_tombstone_order", "", "CREATE TABLE ks.wrong_range_tombstone_order (p int, a int, b int, c int, r int, PRIMARY KEY (p, a, b, c)) WITH COMPACT STORAGE"),
];

/// `scylladb/complex` (sstable_mutation_test.cc `complex_schema`).
const COMPLEX: &str = "CREATE TABLE tests.complex_schema (key blob, clust1 blob, clust2 blob, \
    reg_set set<blob>, reg_list list<blob>, reg_map map<blob, blob>, reg_fset frozen<set<blob>>, \
    reg blob, static_obj blob static, static_collection set<blob> static, \
    PRIMARY KEY (key, clust1, clust2))";

/// The `ka`/`la` Data.db files of a corpus set matching `filter`.
fn legacy_files(root: &Path, set: &str, filter: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root.join(set))
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| {
                    let n = p.file_name().unwrap().to_string_lossy().into_owned();
                    n.ends_with("Data.db")
                        && (n.starts_with("ka-")
                            || n.starts_with("la-")
                            || n.contains("-ka-")
                            || n.contains("-la-"))
                        && n.contains(filter)
                        && !(filter == "tab-" && n.contains("tab2-"))
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Decode `path` to the end with `cql`: (partitions, rows, markers).
pub(crate) fn decode_all(path: &Path, cql: &str) -> crate::error::Result<(u64, u64, u64)> {
    let mut sst = Sstable::open_path(path)?;
    sst.set_table_schema(Arc::new(schema(cql)));
    let st_bytes = sst.read_component(crate::component::Component::Statistics)?;
    let st = crate::statistics::Statistics::parse_lenient(&st_bytes, sst.features())?;
    let header = sst.data_header(&st)?;
    let mut r = ScanReader::new(&sst, &header)?;
    let (mut p, mut rows, mut m) = (0, 0, 0);
    while let Some(f) = r.next_fragment()? {
        match f {
            Fragment::PartitionStart { .. } => p += 1,
            Fragment::Row(_) => rows += 1,
            Fragment::Marker(_) => m += 1,
            _ => {}
        }
    }
    assert_eq!(
        r.position().0,
        r.data_len(),
        "{}: stopped early",
        path.display()
    );
    Ok((p, rows, m))
}

/// `validate` and `scrub` of `path` read with `cql`: the problems found.
fn check_all(path: &Path, cql: &str) -> Vec<String> {
    let mut sst = Sstable::open_path(path).unwrap();
    sst.set_table_schema(Arc::new(schema(cql)));
    let mut out = Vec::new();
    // The structure only: some sets lack a Summary.db their TOC lists, or
    // carry a damaged CRC.db, by design upstream (shared/corpus/MANIFEST.md).
    let opts = crate::validate::Options {
        checksums: None,
        ..crate::validate::Options::default()
    };
    let missing = crate::validate::ProblemClass::MissingComponent;
    match crate::validate::validate(&sst, &opts, &mut |_, _| {}) {
        Ok(r) if r.problems.errors() == r.problems.count(missing) => {}
        Ok(r) => out.push(format!("validate: {:?}", r.problems)),
        Err(e) => out.push(format!("validate: {e}")),
    }
    match crate::scrub::scrub(
        &sst,
        &crate::scrub::Options::default(),
        None,
        &mut |_, _| {},
    ) {
        Ok(r) => {
            // Scrub checks CRC.db and never salvages a chunk that fails it:
            // on those sets the checksum findings and the loss they cause
            // are expected, nothing else.
            use crate::validate::ProblemClass as C;
            let checksum_loss = [C::BadChunk, C::Checksum, C::DataLost];
            let other = r
                .problems
                .counts
                .iter()
                .filter(|(c, _)| !checksum_loss.contains(c))
                .count();
            let bad_crc = r.problems.count(C::BadChunk) > 0;
            if other > 0 || (!bad_crc && !r.valid()) {
                out.push(format!("scrub: {:?}", r.problems));
            }
        }
        Err(e) => out.push(format!("scrub: {e}")),
    }
    out
}

#[test]
fn every_legacy_corpus_sstable_with_a_schema_decodes_to_the_end() {
    let Some(root) = corpus_root() else { return };
    let mut n = 0;
    let mut failures = Vec::new();
    for (set, filter, cql) in CORPUS_SCHEMAS {
        for f in legacy_files(&root, set, filter) {
            n += 1;
            if let Err(e) = decode_all(&f, cql) {
                failures.push(format!("{}: {e}", f.display()));
            }
            // And validate / scrub find nothing wrong.
            for p in check_all(&f, cql) {
                failures.push(format!(
                    "{}: {}",
                    f.display(),
                    p.chars().take(600).collect::<String>()
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {n} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!("{n} ka/la Data.db decoded to the end");
    assert!(n >= 77, "only {n} files found");
}

fn fragments_of(path: &Path, cql: &str) -> Vec<String> {
    let mut sst = Sstable::open_path(path).unwrap();
    sst.set_table_schema(Arc::new(schema(cql)));
    let st_bytes = sst
        .read_component(crate::component::Component::Statistics)
        .unwrap();
    let st = crate::statistics::Statistics::parse_lenient(&st_bytes, sst.features()).unwrap();
    let header = sst.data_header(&st).unwrap();
    let mut r = ScanReader::new(&sst, &header).unwrap();
    let mut out = Vec::new();
    while let Some(f) = r.next_fragment().unwrap() {
        out.push(describe(&f));
    }
    out
}

/// `scylladb/tombstone_overlap` (sstable_mutation_test.cc
/// `tombstone_in_tombstone`, `range_tombstone_reading`,
/// `tombstone_in_tombstone2`): overlapping, nested and split tombstones come
/// out as the non-overlapping deletion in effect, with exactly the bounds
/// Scylla's test asserts.
#[test]
fn tombstone_overlap_matches_scylla() {
    let Some(root) = corpus_root() else { return };
    let tab = CORPUS_SCHEMAS.iter().find(|c| c.1 == "tab-").unwrap().2;
    let tab2 = CORPUS_SCHEMAS.iter().find(|c| c.1 == "tab2-").unwrap().2;
    let dir = root.join("scylladb/tombstone_overlap");
    // aaa = 616161, bbb = 626262, ccc = 636363.
    assert_eq!(
        fragments_of(&dir.join("try1-tab-ka-1-Data.db"), tab),
        [
            "start 706b",
            "marker INCL_START_BOUND [616161] @1459334681228103",
            "marker EXCL_END_BOUND [616161:626262] @1459334681228103",
            "row [616161:626262] del@1459334681244989",
            "marker EXCL_START_BOUND [616161:626262] @1459334681228103",
            "marker INCL_END_BOUND [616161] @1459334681228103",
            "end",
        ]
    );
    assert_eq!(
        fragments_of(&dir.join("try1-tab-ka-4-Data.db"), tab),
        [
            "start 706b",
            "marker INCL_START_BOUND [616161] @1459334681228103",
            "marker INCL_END_BOUND [616161] @1459334681228103",
            "end",
        ]
    );
    assert_eq!(
        fragments_of(&dir.join("try1-tab2-ka-3-Data.db"), tab2),
        [
            "start 706b",
            "marker INCL_START_BOUND [616161] @1459438519943668",
            "marker EXCL_END_INCL_START_BOUNDARY [616161:626262] @1459438519943668/@1459438519950348",
            "marker EXCL_END_BOUND [616161:626262:636363] @1459438519950348",
            "row [616161:626262:636363] del@1459438519958850",
            "marker EXCL_START_BOUND [616161:626262:636363] @1459438519950348",
            "marker INCL_END_EXCL_START_BOUNDARY [616161:626262] @1459438519950348/@1459438519943668",
            "marker INCL_END_BOUND [616161] @1459438519943668",
            "end",
        ]
    );
}
