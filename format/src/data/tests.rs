//! Unit tests on hand-built bytes (see [`super::testutil`]).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::model::{cell_flags as cf, flags as rf};
use super::testutil::{header, B};
use super::*;
use crate::clustering::BoundKind;
use crate::deletion::DeletionTime;
use crate::error::ErrorKind;
use crate::statistics::header::{DELETION_TIME_EPOCH, TIMESTAMP_EPOCH};
use crate::statistics::SerializationHeader;
use crate::version::{Features, Version};

fn feats(v: &str) -> Features {
    Version::parse(v).unwrap().features()
}

/// A compact, owned description of a fragment, for assertions.
#[derive(Debug, Clone, PartialEq)]
enum F {
    Start(Vec<u8>, u64),
    Static(u64, usize),
    Row(u64, Vec<Option<Vec<u8>>>, usize),
    Marker(u64, BoundKind),
    End(u64),
}

fn summarize(f: &Fragment<'_>) -> F {
    match f {
        Fragment::PartitionStart { key, position, .. } => F::Start(key.to_vec(), position.0),
        Fragment::StaticRow(r) => F::Static(r.position.0, r.cells.len()),
        Fragment::Row(r) => F::Row(
            r.position.0,
            r.clustering
                .values
                .iter()
                .map(|v| v.map(|b| b.to_vec()))
                .collect(),
            r.cells.len(),
        ),
        Fragment::Marker(m) => F::Marker(m.position.0, m.kind()),
        Fragment::PartitionEnd { position } => F::End(position.0),
    }
}

/// Read everything with a given block size; returns the summaries or the error.
fn scan(
    bytes: &[u8],
    h: &SerializationHeader,
    v: &str,
    block: usize,
) -> (Vec<F>, Option<crate::Error>, Vec<Finding>) {
    let opts = ReaderOptions {
        block_size: block,
        ..ReaderOptions::default()
    };
    let mut r = ScanReader::from_bytes(bytes, h, feats(v), opts);
    let mut out = Vec::new();
    let mut err = None;
    loop {
        match r.next_fragment() {
            Ok(Some(f)) => out.push(summarize(&f)),
            Ok(None) => break,
            Err(e) => {
                err = Some(e);
                break;
            }
        }
    }
    // Fused: nothing after an error.
    if err.is_some() {
        assert!(r.failed());
        assert!(matches!(r.next_fragment(), Ok(None)));
    }
    (out, err, r.findings().to_vec())
}

/// Scan with every block size from 1 to the input length (exercises every
/// window-growth path) and check they all agree.
fn scan_all_blocks(bytes: &[u8], h: &SerializationHeader, v: &str) -> Vec<F> {
    let (want, err, _) = scan(bytes, h, v, 1 << 16);
    assert!(err.is_none(), "{err:?}");
    for block in 1..=bytes.len().max(1) {
        let (got, err, _) = scan(bytes, h, v, block);
        assert!(err.is_none(), "block {block}: {err:?}");
        assert_eq!(got, want, "block {block}");
    }
    want
}

/// §14.1: a TTL'd row (Cassandra-written mc), with the header bases made
/// explicit.
#[test]
fn ttl_row_like_worked_example_14_1() {
    let mut h = header(&["Int32Type"], &[], &[("rc", "Int32Type")]);
    h.min_timestamp = 1_525_385_507_816_568;
    h.min_local_deletion_time = 1_543_905_466;
    h.min_ttl = 1135;
    let bytes = B::new()
        .raw(&[0x00, 0x04, 0, 0, 0, 1])
        .live()
        .u8(rf::HAS_TIMESTAMP | rf::HAS_TTL | rf::HAS_ALL_COLUMNS)
        .raw(&[0x00, 0, 0, 0, 2])
        .sized(|b| {
            b.uv(18)
                .raw(&[0, 0, 0])
                .u8(cf::IS_EXPIRING | cf::USE_ROW_TIMESTAMP | cf::USE_ROW_TTL)
                .raw(&[0, 0, 0, 3])
        })
        .u8(rf::END_OF_PARTITION)
        .build();
    assert_eq!(bytes.len(), 35);
    let mut r = ScanReader::from_bytes(&bytes, &h, feats("mc"), ReaderOptions::default());
    match r.next_fragment().unwrap().unwrap() {
        Fragment::PartitionStart {
            key,
            deletion,
            position,
            ..
        } => {
            assert_eq!(key, &[0, 0, 0, 1]);
            assert!(deletion.is_live());
            assert_eq!(position, DataPos(0));
        }
        f => panic!("{f:?}"),
    }
    match r.next_fragment().unwrap().unwrap() {
        Fragment::Row(row) => {
            assert_eq!(row.position, DataPos(18));
            assert_eq!(row.row_size, 9);
            assert_eq!(row.prev_unfiltered_size, 18);
            assert_eq!(row.size, 16);
            assert_eq!(row.clustering.values, vec![Some(&[0u8, 0, 0, 2][..])]);
            let l = row.liveness.unwrap();
            assert_eq!(l.timestamp, 1_525_385_507_816_568);
            assert_eq!(l.ttl, Some(1135));
            assert_eq!(l.local_expiration_time, Some(1_543_905_466));
            assert!(!l.expired);
            assert_eq!(row.cells.len(), 1);
            let ColumnData::Simple { column, cell } = &row.cells[0] else {
                panic!()
            };
            assert_eq!(column.name(), "rc");
            assert_eq!(column.index, 0);
            assert_eq!(cell.value, &[0, 0, 0, 3]);
            assert_eq!(cell.timestamp, l.timestamp);
            assert_eq!(cell.ttl, Some(1135));
            assert_eq!(cell.local_deletion_time, Some(1_543_905_466));
            assert!(cell.is_expiring() && !cell.is_deleted() && !cell.is_counter());
        }
        f => panic!("{f:?}"),
    }
    assert!(matches!(
        r.next_fragment().unwrap(),
        Some(Fragment::PartitionEnd {
            position: DataPos(34)
        })
    ));
    assert!(r.next_fragment().unwrap().is_none());
    assert!(r.next_fragment().unwrap().is_none());
    assert!(r.findings().is_empty());
}

/// Two partitions with a static row, rows, markers; every block size.
#[test]
fn static_rows_markers_and_prev_sizes() {
    let h = header(
        &["Int32Type", "UTF8Type"],
        &[("s", "UTF8Type")],
        &[("v", "Int32Type")],
    );
    let mut b = B::new().partition(b"k1"); // 2 + 2 + 12 = 16
    let p0 = 0u64;
    let static_at = b.len() as u64;
    b = b
        .u8(rf::EXTENSION_FLAG | rf::HAS_ALL_COLUMNS)
        .u8(rf::EXT_IS_STATIC)
        .sized(|b| {
            b.uv(0).u8(0).uv(5).vbytes(b"hello") // st: flags 0, ts delta 5, "hello"
        });
    let row1 = b.len() as u64;
    b = b
        .u8(rf::HAS_TIMESTAMP | rf::HAS_ALL_COLUMNS)
        .uv(0) // clustering header: both present
        .raw(&[0, 0, 0, 7])
        .vbytes(b"a")
        .sized(|b| {
            b.uv(row1 - p0)
                .uv(1)
                .u8(cf::USE_ROW_TIMESTAMP)
                .raw(&[0, 0, 0, 9])
        });
    let m1 = b.len() as u64;
    b = b
        .u8(rf::IS_MARKER)
        .u8(BoundKind::InclStartBound.ordinal())
        .u16(1)
        .uv(0)
        .raw(&[0, 0, 0, 8])
        .sized(|b| b.uv(m1 - row1).uv(3).uv(4));
    let m2 = b.len() as u64;
    b = b
        .u8(rf::IS_MARKER)
        .u8(BoundKind::InclEndExclStartBoundary.ordinal())
        .u16(1)
        .uv(0)
        .raw(&[0, 0, 0, 9])
        .sized(|b| b.uv(m2 - m1).uv(3).uv(4).uv(6).uv(7));
    let m3 = b.len() as u64;
    b = b
        .u8(rf::IS_MARKER)
        .u8(BoundKind::ExclEndBound.ordinal())
        .u16(0)
        .sized(|b| b.uv(m3 - m2).uv(6).uv(7));
    let end1 = b.len() as u64;
    b = b.u8(rf::END_OF_PARTITION);
    let p1 = b.len() as u64;
    b = b.partition(b"k2");
    let s2 = b.len() as u64;
    // An empty static row: `80 01 <size> 00 <missing bitmap>` (§3.1).
    b = b
        .u8(rf::EXTENSION_FLAG)
        .u8(rf::EXT_IS_STATIC)
        .sized(|b| b.uv(0).uv(0b1));
    let end2 = b.len() as u64;
    let bytes = b.u8(rf::END_OF_PARTITION).build();

    let got = scan_all_blocks(&bytes, &h, "mc");
    assert_eq!(
        got,
        vec![
            F::Start(b"k1".to_vec(), p0),
            F::Static(static_at, 1),
            F::Row(row1, vec![Some(vec![0, 0, 0, 7]), Some(b"a".to_vec())], 1),
            F::Marker(m1, BoundKind::InclStartBound),
            F::Marker(m2, BoundKind::InclEndExclStartBoundary),
            F::Marker(m3, BoundKind::ExclEndBound),
            F::End(end1),
            F::Start(b"k2".to_vec(), p1),
            F::Static(s2, 0),
            F::End(end2),
        ]
    );

    // Values of the static row, the marker deletions.
    let mut r = ScanReader::from_bytes(&bytes, &h, feats("mc"), ReaderOptions::default());
    r.next_fragment().unwrap();
    let Some(Fragment::StaticRow(s)) = r.next_fragment().unwrap() else {
        panic!()
    };
    assert!(s.is_static() && s.liveness.is_none());
    assert_eq!(s.clustering.kind, BoundKind::StaticClustering);
    let ColumnData::Simple { column, cell } = &s.cells[0] else {
        panic!()
    };
    assert_eq!(
        (column.name(), cell.value, cell.timestamp),
        ("s", &b"hello"[..], TIMESTAMP_EPOCH + 5)
    );
    r.next_fragment().unwrap();
    let Some(Fragment::Marker(m)) = r.next_fragment().unwrap() else {
        panic!()
    };
    let d = DeletionTime {
        marked_for_delete_at: TIMESTAMP_EPOCH + 3,
        local_deletion_time: DELETION_TIME_EPOCH + 4,
    };
    assert_eq!(m.deletion, MarkerDeletion::Bound(d));
    assert_eq!((m.open_deletion(), m.close_deletion()), (Some(d), None));
    let Some(Fragment::Marker(m)) = r.next_fragment().unwrap() else {
        panic!()
    };
    let d2 = DeletionTime {
        marked_for_delete_at: TIMESTAMP_EPOCH + 6,
        local_deletion_time: DELETION_TIME_EPOCH + 7,
    };
    assert_eq!(m.deletion, MarkerDeletion::Boundary { end: d, start: d2 });
    assert_eq!((m.close_deletion(), m.open_deletion()), (Some(d), Some(d2)));
    let Some(Fragment::Marker(m)) = r.next_fragment().unwrap() else {
        panic!()
    };
    assert!(m.bound.values.is_empty());
    assert_eq!(m.close_deletion(), Some(d2));
    assert!(r.findings().is_empty());

    // skip_partition from inside the first partition lands on the second.
    let mut r = ScanReader::from_bytes(&bytes, &h, feats("mc"), ReaderOptions::default());
    r.next_fragment().unwrap();
    assert!(r.skip_partition().unwrap());
    assert_eq!(r.position(), DataPos(p1));
    // Between partitions it skips the whole next one.
    assert!(r.skip_partition().unwrap());
    assert!(r.next_fragment().unwrap().is_none());
    assert!(!r.skip_partition().unwrap());

    // seek_partition and PartitionReader read exactly the second partition.
    let mut r = ScanReader::from_bytes(&bytes, &h, feats("mc"), ReaderOptions::default());
    r.seek_partition(DataPos(p1)).unwrap();
    assert_eq!(
        summarize(&r.next_fragment().unwrap().unwrap()),
        F::Start(b"k2".to_vec(), p1)
    );
    let mut pr = PartitionReader::from_bytes(
        &bytes,
        &h,
        feats("mc"),
        DataPos(p0),
        ReaderOptions::default(),
    )
    .unwrap();
    let mut n = 0;
    while let Some(f) = pr.next_fragment().unwrap() {
        n += 1;
        if let Fragment::PartitionEnd { position } = f {
            assert_eq!(position, DataPos(end1));
        }
    }
    assert_eq!(n, 7);
}

#[test]
fn prev_size_mismatch_is_a_finding_and_row_size_mismatch_an_error() {
    let h = header(&[], &[], &[("v", "Int32Type")]);
    let good = |prev: u64| {
        B::new()
            .partition(b"k")
            .u8(rf::HAS_ALL_COLUMNS)
            .sized(|b| b.uv(prev).u8(0).uv(0).raw(&[0, 0, 0, 1]))
            .u8(rf::END_OF_PARTITION)
            .build()
    };
    // Correct prev = 15 (2 + 1 + 12).
    let (_, err, findings) = scan(&good(15), &h, "mc", 4);
    assert!(err.is_none() && findings.is_empty());
    let (frags, err, findings) = scan(&good(14), &h, "mc", 4);
    assert!(err.is_none());
    assert_eq!(frags.len(), 3);
    assert_eq!(
        findings,
        vec![Finding {
            position: DataPos(15),
            partition: DataPos(0),
            kind: FindingKind::PrevUnfilteredSize {
                stored: 14,
                expected: 15
            }
        }]
    );
    // check_prev_sizes off: no findings.
    let bytes = good(14);
    let opts = ReaderOptions {
        check_prev_sizes: false,
        ..ReaderOptions::default()
    };
    let mut r = ScanReader::from_bytes(&bytes, &h, feats("mc"), opts);
    while r.next_fragment().unwrap().is_some() {}
    assert!(r.findings().is_empty());

    // row_size one too large: the body has a byte left over -> error.
    let bytes = B::new()
        .partition(b"k")
        .u8(rf::HAS_ALL_COLUMNS)
        .uv(8)
        .uv(15)
        .u8(0)
        .uv(0)
        .raw(&[0, 0, 0, 1])
        .u8(rf::END_OF_PARTITION)
        .build();
    let (_, err, _) = scan(&bytes, &h, "mc", 3);
    let e = err.unwrap();
    assert!(
        matches!(&e.kind, ErrorKind::BadValue(m) if m.contains("row_size 8")),
        "{e}"
    );
    assert_eq!(e.partition.as_deref(), Some("0x6b"));
    // row_size one too small: the value overruns the body.
    let bytes = B::new()
        .partition(b"k")
        .u8(rf::HAS_ALL_COLUMNS)
        .uv(6)
        .uv(15)
        .u8(0)
        .uv(0)
        .raw(&[0, 0, 0, 1])
        .u8(rf::END_OF_PARTITION)
        .build();
    let (_, err, _) = scan(&bytes, &h, "mc", 3);
    assert!(err.is_some());
}

#[test]
fn missing_columns_small_and_large_supersets() {
    // < 64 columns: bitmap of missing columns.
    let h = header(
        &[],
        &[],
        &[("a", "Int32Type"), ("b", "Int32Type"), ("c", "Int32Type")],
    );
    let bytes = B::new()
        .partition(b"k")
        .u8(0)
        .sized(|b| {
            b.uv(15)
                .uv(0b010)
                .u8(0)
                .uv(0)
                .raw(&[0, 0, 0, 1])
                .u8(0)
                .uv(0)
                .raw(&[0, 0, 0, 3])
        })
        .u8(rf::END_OF_PARTITION)
        .build();
    let mut r = ScanReader::from_bytes(&bytes, &h, feats("mc"), ReaderOptions::default());
    r.next_fragment().unwrap();
    let Some(Fragment::Row(row)) = r.next_fragment().unwrap() else {
        panic!()
    };
    let names: Vec<_> = row.cells.iter().map(|c| c.column().name()).collect();
    assert_eq!(names, ["a", "c"]);
    // Bits beyond the superset are an error.
    let bytes = B::new()
        .partition(b"k")
        .u8(0)
        .sized(|b| b.uv(15).uv(0b1000))
        .u8(1)
        .build();
    assert!(scan(&bytes, &h, "mc", 64).1.is_some());

    // >= 64 columns: delta + listed indexes.
    let names: Vec<String> = (0..70).map(|i| format!("c{i:02}")).collect();
    let cols: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "Int32Type")).collect();
    let h = header(&[], &[], &cols);
    let row_with = |present: &[u64]| {
        let n = 70u64;
        let delta = n - present.len() as u64;
        B::new()
            .partition(b"k")
            .u8(0)
            .sized(|mut b| {
                b = b.uv(15).uv(delta);
                if (present.len() as u64) < n / 2 {
                    for p in present {
                        b = b.uv(*p);
                    }
                } else {
                    for m in (0..n).filter(|i| !present.contains(i)) {
                        b = b.uv(m);
                    }
                }
                for p in present {
                    b = b.u8(0).uv(0).raw(&(*p as u32).to_be_bytes());
                }
                b
            })
            .u8(rf::END_OF_PARTITION)
            .build()
    };
    for present in [
        vec![3u64, 40, 69],
        (0..70).filter(|i| i % 7 != 0).collect::<Vec<_>>(),
        vec![0],
    ] {
        let bytes = row_with(&present);
        let mut r = ScanReader::from_bytes(&bytes, &h, feats("mc"), ReaderOptions::default());
        r.next_fragment().unwrap();
        let Some(Fragment::Row(row)) = r.next_fragment().unwrap() else {
            panic!()
        };
        let got: Vec<u64> = row.cells.iter().map(|c| c.column().index as u64).collect();
        assert_eq!(got, present);
        for c in &row.cells {
            let ColumnData::Simple { column, cell } = c else {
                panic!()
            };
            assert_eq!(cell.value, &(column.index as u32).to_be_bytes());
        }
    }
    // Out-of-order indexes are an error.
    let bytes = B::new()
        .partition(b"k")
        .u8(0)
        .sized(|b| b.uv(15).uv(67).uv(5).uv(4).uv(9))
        .u8(1)
        .build();
    assert!(scan(&bytes, &h, "mc", 64).1.is_some());
}

#[test]
fn complex_columns_and_deletions() {
    let h = header(
        &[],
        &[],
        &[
            ("m", "MapType(Int32Type,UTF8Type)"),
            ("a", "Int32Type"),
            ("s", "SetType(Int32Type)"),
        ],
    );
    // Data order: a, m, s (simple first).
    let sc = crate::data::ColumnSet::new(&h.regular_columns);
    let order: Vec<_> = sc.columns().iter().map(|c| c.name()).collect();
    assert_eq!(order, ["a", "m", "s"]);

    let bytes = B::new()
        .partition(b"k")
        .u8(rf::HAS_TIMESTAMP | rf::HAS_ALL_COLUMNS | rf::HAS_COMPLEX_DELETION | rf::HAS_DELETION)
        .sized(|b| {
            b.uv(15)
                .uv(10) // row timestamp
                .uv(8)
                .uv(9) // row deletion
                .u8(cf::USE_ROW_TIMESTAMP)
                .raw(&[0, 0, 0, 1]) // a
                .uv(9)
                .uv(20) // m: complex deletion
                .uv(2)
                .u8(cf::USE_ROW_TIMESTAMP)
                .vbytes(&[0, 0, 0, 1])
                .vbytes(b"one")
                .u8(cf::IS_DELETED | cf::HAS_EMPTY_VALUE)
                .uv(11)
                .uv(21)
                .vbytes(&[0, 0, 0, 2])
                .uv(0x8000_0000_0000_0000 - TIMESTAMP_EPOCH as u64)
                .uv(0) // s: LIVE complex deletion (mfda i64::MIN)
                .uv(1)
                .u8(cf::USE_ROW_TIMESTAMP | cf::HAS_EMPTY_VALUE)
                .vbytes(&[0, 0, 0, 5])
        })
        .u8(rf::END_OF_PARTITION)
        .build();
    scan_all_blocks(&bytes, &h, "mc");
    let mut r = ScanReader::from_bytes(&bytes, &h, feats("mc"), ReaderOptions::default());
    r.next_fragment().unwrap();
    let Some(Fragment::Row(row)) = r.next_fragment().unwrap() else {
        panic!()
    };
    let del = row.deletion.unwrap();
    assert!(!del.shadowable);
    assert_eq!(del.time.marked_for_delete_at, TIMESTAMP_EPOCH + 8);
    assert_eq!(del.time.local_deletion_time, DELETION_TIME_EPOCH + 9);
    assert_eq!(row.cells.len(), 3);
    let ColumnData::Complex {
        column,
        complex_deletion,
        cells,
    } = &row.cells[1]
    else {
        panic!()
    };
    assert_eq!(column.name(), "m");
    assert!(column.complex);
    assert_eq!(
        complex_deletion.unwrap().marked_for_delete_at,
        TIMESTAMP_EPOCH + 9
    );
    assert_eq!(cells.len(), 2);
    assert_eq!(
        (cells[0].path, cells[0].value),
        (Some(&[0u8, 0, 0, 1][..]), &b"one"[..])
    );
    assert!(cells[1].is_deleted() && cells[1].value.is_empty());
    assert_eq!(cells[1].timestamp, TIMESTAMP_EPOCH + 11);
    assert_eq!(cells[1].local_deletion_time, Some(DELETION_TIME_EPOCH + 21));
    let ColumnData::Complex {
        complex_deletion,
        cells,
        ..
    } = &row.cells[2]
    else {
        panic!()
    };
    assert!(
        complex_deletion.is_none(),
        "LIVE complex deletion reads as None"
    );
    assert_eq!(cells[0].path, Some(&[0u8, 0, 0, 5][..]));
    assert!(row.column("s").is_some() && row.column("zz").is_none());
}

#[test]
fn scylla_shadowable_expired_liveness_and_negative_deltas() {
    let mut h = header(&[], &[], &[("c", "CounterColumnType")]);
    h.min_timestamp = 1_000_000;
    let bytes = B::new()
        .partition(b"k")
        .u8(rf::EXTENSION_FLAG | rf::HAS_TIMESTAMP | rf::HAS_TTL | rf::HAS_ALL_COLUMNS)
        .u8(rf::EXT_HAS_SCYLLA_SHADOWABLE_DELETION)
        .sized(|b| {
            b.uv(15)
                .uv((-5i64) as u64) // negative timestamp delta: 9-byte vint
                .uv(i32::MAX as u64) // ttl: EXPIRED_LIVENESS_TTL
                .uv(0)
                .uv(1)
                .uv(2) // scylla shadowable deletion
                .u8(0)
                .uv(0)
                .vbytes(&[0, 1, 0x80, 0])
        })
        .u8(rf::END_OF_PARTITION)
        .build();
    let mut r = ScanReader::from_bytes(&bytes, &h, feats("mc"), ReaderOptions::default());
    r.next_fragment().unwrap();
    let Some(Fragment::Row(row)) = r.next_fragment().unwrap() else {
        panic!()
    };
    let l = row.liveness.unwrap();
    assert_eq!(l.timestamp, 999_995);
    assert!(l.expired);
    assert!(row.deletion.is_none());
    let s = row.scylla_shadowable_deletion.unwrap();
    assert_eq!(s.marked_for_delete_at, 1_000_001);
    assert_eq!(s.local_deletion_time, DELETION_TIME_EPOCH + 2);
    let ColumnData::Simple { cell, .. } = &row.cells[0] else {
        panic!()
    };
    assert!(cell.is_counter());
    assert_eq!(cell.value, &[0, 1, 0x80, 0]);
}

#[test]
fn oa_partition_deletion_and_unsigned_ldt() {
    let h = header(&[], &[], &[("v", "Int32Type")]);
    // LIVE is one byte in oa; a real deletion is mfda:i64 ldt:u32.
    let bytes = B::new()
        .short_bytes(b"k")
        .u8(0x80)
        .u8(rf::HAS_ALL_COLUMNS)
        .sized(|b| {
            b.uv(4)
                .u8(cf::IS_DELETED | cf::HAS_EMPTY_VALUE)
                .uv(0)
                .uv(2_800_000_000)
        })
        .u8(rf::END_OF_PARTITION)
        .short_bytes(b"l")
        .i64(77)
        .raw(&0xF000_0000u32.to_be_bytes())
        .u8(rf::END_OF_PARTITION)
        .build();
    let mut r = ScanReader::from_bytes(&bytes, &h, feats("oa"), ReaderOptions::default());
    let Some(Fragment::PartitionStart { deletion, .. }) = r.next_fragment().unwrap() else {
        panic!()
    };
    assert!(deletion.is_live());
    let Some(Fragment::Row(row)) = r.next_fragment().unwrap() else {
        panic!()
    };
    assert_eq!(row.prev_unfiltered_size, 4);
    let ColumnData::Simple { cell, .. } = &row.cells[0] else {
        panic!()
    };
    // 1442880000 + 2.8e9 > u32? no: 4242880000 < 2^32, past 2038: unsigned.
    assert_eq!(
        cell.local_deletion_time,
        Some(DELETION_TIME_EPOCH + 2_800_000_000)
    );
    assert!(r.next_fragment().unwrap().is_some());
    let Some(Fragment::PartitionStart { deletion, key, .. }) = r.next_fragment().unwrap() else {
        panic!()
    };
    assert_eq!(key, b"l");
    assert_eq!(deletion.marked_for_delete_at, 77);
    assert_eq!(deletion.local_deletion_time, 0xF000_0000);
    assert!(r.findings().is_empty());
    // The same LIVE byte under a legacy version is a truncated deletion.
    let (_, err, _) = scan(&bytes[..4], &h, "nb", 64);
    assert!(err.is_some());
}

#[test]
fn structural_errors() {
    let h = header(&[], &[("s", "Int32Type")], &[("v", "Int32Type")]);
    // Static columns in the header, but the partition has no static row.
    let bytes = B::new().partition(b"k").u8(rf::END_OF_PARTITION).build();
    assert!(scan(&bytes, &h, "mc", 64)
        .1
        .unwrap()
        .to_string()
        .contains("static row"));
    // A static row without static columns.
    let h2 = header(&[], &[], &[("v", "Int32Type")]);
    let bytes = B::new()
        .partition(b"k")
        .u8(rf::EXTENSION_FLAG | rf::HAS_ALL_COLUMNS)
        .u8(rf::EXT_IS_STATIC)
        .sized(|b| b.uv(0))
        .u8(1)
        .build();
    assert!(scan(&bytes, &h2, "mc", 64).1.is_some());
    // Truncated inside a partition.
    let bytes = B::new().partition(b"k").build();
    let e = scan(&bytes, &h2, "mc", 64).1.unwrap();
    assert!(matches!(e.kind, ErrorKind::UnexpectedEof { .. }), "{e}");
    assert_eq!(e.offset, Some(15));
    // Invalid marker kind (STATIC_CLUSTERING).
    let bytes = B::new()
        .partition(b"k")
        .u8(rf::IS_MARKER)
        .u8(3)
        .u16(0)
        .sized(|b| b.uv(0).uv(0).uv(0))
        .u8(1)
        .build();
    assert!(scan(&bytes, &h2, "mc", 64).1.is_some());
    // A row size beyond the end of the data.
    let bytes = B::new()
        .partition(b"k")
        .u8(rf::HAS_ALL_COLUMNS)
        .uv(1000)
        .uv(15)
        .build();
    let e = scan(&bytes, &h2, "mc", 8).1.unwrap();
    assert!(matches!(e.kind, ErrorKind::LengthOutOfRange { .. }), "{e}");
    // An unfiltered over the window limit.
    let h3 = header(&[], &[], &[("v", "BytesType")]);
    let big = vec![7u8; 70_000];
    let bytes = B::new()
        .partition(b"k")
        .u8(rf::HAS_ALL_COLUMNS)
        .sized(|b| b.uv(15).u8(0).uv(0).vbytes(&big))
        .u8(1)
        .build();
    let opts = ReaderOptions {
        max_unfiltered_size: 1,
        block_size: 4096,
        ..ReaderOptions::default()
    };
    let mut r = ScanReader::from_bytes(&bytes, &h3, feats("mc"), opts);
    r.next_fragment().unwrap();
    assert!(r.next_fragment().is_err());
    assert!(r.next_fragment().unwrap().is_none());
    // seek_partition clears the error.
    r.seek_partition(DataPos(0)).unwrap();
    assert!(r.next_fragment().unwrap().is_some());
}
