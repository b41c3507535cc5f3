//! The worked examples of the format reference (`shared/docs/sstable-format.md`
//! §14), decoded from the corpus sstables they describe.

use super::*;

/// §14.1: TTL'd row.
#[test]
fn worked_example_14_1_ttl_row() {
    with_fragments(
        "scylladb/3.x-uncompressed-write_ttled_row/mc-1-big-Data.db",
        |h, r| {
            assert_eq!(h.min_timestamp, 1_525_385_507_816_568);
            assert_eq!(h.min_local_deletion_time, 1_543_905_466);
            assert_eq!(h.min_ttl, 1135);
            expect_start(r, &[0, 0, 0, 1], 0);
            let Fragment::Row(row) = next(r) else {
                panic!()
            };
            assert_eq!(row.position, DataPos(18));
            assert_eq!(row.flags.flags, 0x2C);
            assert_eq!(row.clustering.values, vec![Some(&[0u8, 0, 0, 2][..])]);
            assert_eq!(
                (row.row_size, row.prev_unfiltered_size, row.size),
                (9, 18, 16)
            );
            let l = row.liveness.unwrap();
            assert_eq!(l.timestamp, 1_525_385_507_816_568);
            assert_eq!(
                (l.ttl, l.local_expiration_time, l.expired),
                (Some(1135), Some(1_543_905_466), false)
            );
            let c = simple(&row, "rc");
            assert_eq!(c.flags, 0x1A);
            assert_eq!(c.value, &[0, 0, 0, 3]);
            assert_eq!(
                (c.timestamp, c.ttl, c.local_deletion_time),
                (l.timestamp, Some(1135), Some(1_543_905_466))
            );
            drop(row);
            expect_end(r, 34);
        },
    );
}

/// §14.2: static row.
#[test]
fn worked_example_14_2_static_row() {
    with_fragments(
        "scylladb/3.x-uncompressed-write_static_row/mc-1-big-Data.db",
        |h, r| {
            let ts = h.min_timestamp;
            expect_start(r, b"key1", 0);
            let Fragment::StaticRow(row) = next(r) else {
                panic!()
            };
            assert_eq!((row.flags.flags, row.flags.ext), (0xA0, 0x01));
            assert_eq!(
                (row.position, row.row_size, row.prev_unfiltered_size),
                (DataPos(18), 15, 0)
            );
            assert!(row.liveness.is_none() && row.clustering.values.is_empty());
            let st1 = simple(&row, "st1");
            assert_eq!(
                (st1.flags, st1.timestamp, st1.value),
                (0, ts, &[0u8, 0, 4, 0x6F][..])
            );
            let st2 = simple(&row, "st2");
            assert_eq!(
                (st2.flags, st2.timestamp, st2.value),
                (0, ts, &b"hello"[..])
            );
            drop(row);
            expect_end(r, 36);
        },
    );
}

/// §14.3: range tombstone bounds on a clustering prefix.
#[test]
fn worked_example_14_3_range_tombstone() {
    with_fragments(
        "scylladb/3.x-uncompressed-write_simple_range_tombstone/mc-1-big-Data.db",
        |h, r| {
            let d = crate::deletion::DeletionTime {
                marked_for_delete_at: h.min_timestamp,
                local_deletion_time: h.min_local_deletion_time,
            };
            expect_start(r, &[0, 0, 0, 0], 0);
            let Fragment::Marker(m) = next(r) else {
                panic!()
            };
            assert_eq!(m.kind(), crate::clustering::BoundKind::InclStartBound);
            assert_eq!(m.bound.values, vec![Some(&b"aaa"[..])]);
            assert_eq!(
                (m.position, m.marker_size, m.prev_unfiltered_size),
                (DataPos(18), 3, 18)
            );
            assert_eq!(m.deletion, MarkerDeletion::Bound(d));
            assert_eq!(m.open_deletion(), Some(d));
            let Fragment::Marker(m) = next(r) else {
                panic!()
            };
            assert_eq!(m.kind(), crate::clustering::BoundKind::InclEndBound);
            assert_eq!(m.bound.values, vec![Some(&b"aaa"[..])]);
            assert_eq!(
                (m.position, m.marker_size, m.prev_unfiltered_size),
                (DataPos(31), 3, 13)
            );
            assert_eq!(m.close_deletion(), Some(d));
            expect_end(r, 44);
        },
    );
}

/// §14.4: the same data as `nb` (legacy deletion) and `oa` (1-byte LIVE),
/// LZ4-compressed.
#[test]
fn worked_example_14_4_nb_vs_oa() {
    for (rel, prev, first_len) in [
        ("cassandra/legacy_nb_simple/nb-1-big-Data.db", 15u64, 15u64),
        ("cassandra/legacy_oa_simple/oa-1-big-Data.db", 4, 4),
    ] {
        with_fragments(rel, |h, r| {
            let mut pos = 0u64;
            for i in 0..5u8 {
                expect_start(r, &[b'0' + i], pos);
                let Fragment::Row(row) = next(r) else {
                    panic!()
                };
                assert_eq!(row.position, DataPos(pos + first_len));
                assert_eq!(row.flags.flags, 0x24);
                assert_eq!(row.prev_unfiltered_size, prev);
                let v = simple(&row, "val");
                assert_eq!((v.flags, v.value), (0x08, &b"foo bar baz"[..]));
                let l = row.liveness.unwrap();
                assert_eq!(v.timestamp, l.timestamp);
                if i == 0 {
                    assert_eq!(row.row_size, 15);
                    assert_eq!(l.timestamp, h.min_timestamp);
                }
                if i == 1 && prev == 15 {
                    // nb: `C1 B5 81`, a 3-byte timestamp delta.
                    assert_eq!(l.timestamp - h.min_timestamp, 0x1B581);
                }
                pos = row.position.0 + row.size;
                drop(row);
                expect_end(r, pos);
                pos += 1;
            }
        });
    }
}

/// §14.5: complex columns with collection tombstones.
#[test]
fn worked_example_14_5_collections() {
    with_fragments(
        "scylladb/3.x-uncompressed-collections/mc-1-big-Data.db",
        |h, r| {
            for _ in 0..5 {
                next(r);
                let Fragment::Row(row) = next(r) else {
                    panic!()
                };
                assert_eq!(row.flags.flags, 0x64);
                let l = row.liveness.unwrap();
                let names: Vec<_> = row.cells.iter().map(|c| c.column().name()).collect();
                assert_eq!(names, ["list_val", "map_val", "set_val"]);
                for cd in &row.cells {
                    let ColumnData::Complex {
                        complex_deletion,
                        cells,
                        column,
                    } = cd
                    else {
                        panic!()
                    };
                    // The overwrite tombstone is at ts - 1.
                    let d = complex_deletion.unwrap();
                    assert_eq!(d.marked_for_delete_at, l.timestamp - 1);
                    assert_eq!(cells.len(), 3);
                    for c in cells {
                        assert_eq!(c.timestamp, l.timestamp);
                        let path = c.path.unwrap();
                        match column.name() {
                            "list_val" => assert_eq!((c.flags, path.len()), (0x08, 16)),
                            "map_val" => assert_eq!((c.flags, path.len()), (0x08, 4)),
                            _ => assert_eq!((c.flags, path.len(), c.value.len()), (0x0C, 4, 0)),
                        }
                    }
                }
                if row.position.0 == 18 {
                    // First partition (pk 5): row size `80 A1`, deletion delta `E7 0B 2D AE`, `76`.
                    assert_eq!(row.row_size, 161);
                    let ColumnData::Complex {
                        complex_deletion,
                        cells,
                        ..
                    } = &row.cells[0]
                    else {
                        panic!()
                    };
                    let d = complex_deletion.unwrap();
                    assert_eq!(d.marked_for_delete_at - h.min_timestamp, 0x070B_2DAE);
                    assert_eq!(d.local_deletion_time - h.min_local_deletion_time, 0x76);
                    assert_eq!(cells[0].value, b"Text 13");
                    let ColumnData::Complex { cells, .. } = &row.cells[1] else {
                        panic!()
                    };
                    assert_eq!(
                        (cells[0].path, cells[0].value),
                        (Some(&[0u8, 0, 0, 0x0D][..]), &b"Text 13"[..])
                    );
                }
                drop(row);
                next(r);
            }
        },
    );
}

/// §14.6: deleted cell, deleted row, static + TTL'd row.
#[test]
fn worked_example_14_6_deletions() {
    with_fragments(
        "scylladb/3.x-uncompressed-write_deleted_column/mc-1-big-Data.db",
        |h, r| {
            expect_start(r, &[0, 0, 0, 1], 0);
            let Fragment::Row(row) = next(r) else {
                panic!()
            };
            assert_eq!(
                (row.flags.flags, row.row_size, row.prev_unfiltered_size),
                (0x20, 4, 18)
            );
            assert!(row.liveness.is_none() && row.deletion.is_none());
            let c = simple(&row, "rc");
            assert_eq!(c.flags, 0x05);
            assert!(c.is_deleted() && c.value.is_empty());
            assert_eq!(
                (c.timestamp, c.local_deletion_time),
                (h.min_timestamp, Some(h.min_local_deletion_time))
            );
            // MANIFEST: dead cell ldt 1543905926, ts 1525385507816568.
            assert_eq!(
                (c.timestamp, c.local_deletion_time),
                (1_525_385_507_816_568, Some(1_543_905_926))
            );
            drop(row);
            expect_end(r, 24);
        },
    );
    with_fragments(
        "scylladb/3.x-uncompressed-write_deleted_row/mc-1-big-Data.db",
        |h, r| {
            expect_start(r, &[0, 0, 0, 1], 0);
            let Fragment::Row(row) = next(r) else {
                panic!()
            };
            assert_eq!(
                (row.flags.flags, row.row_size, row.prev_unfiltered_size),
                (0x30, 3, 18)
            );
            assert_eq!(row.clustering.values, vec![Some(&[0u8, 0, 0, 2][..])]);
            assert!(row.cells.is_empty());
            let d = row.deletion.unwrap();
            assert!(!d.shadowable);
            assert_eq!(d.time.marked_for_delete_at, h.min_timestamp);
            assert_eq!(d.time.local_deletion_time, h.min_local_deletion_time);
            drop(row);
            expect_end(r, 28);
        },
    );
    with_fragments(
        "scylladb/3.x-uncompressed-write_dead_row_marker/mc-1-big-Data.db",
        |h, r| {
            expect_start(r, &[0, 0, 0, 1], 0);
            let Fragment::StaticRow(s) = next(r) else {
                panic!()
            };
            assert_eq!((s.row_size, s.prev_unfiltered_size, s.size), (7, 0, 10));
            assert_eq!(simple(&s, "st").value, &[0, 0, 4, 0x6F]);
            drop(s);
            let Fragment::Row(row) = next(r) else {
                panic!()
            };
            assert_eq!(
                (row.position, row.flags.flags, row.row_size),
                (DataPos(28), 0x2C, 9)
            );
            assert_eq!(row.prev_unfiltered_size, 0x1C);
            // MANIFEST: TTL 90, ts 1543494402386839, expiry 1543494402 (+ ttl).
            let l = row.liveness.unwrap();
            assert_eq!((l.timestamp, l.ttl), (1_543_494_402_386_839, Some(90)));
            assert_eq!(l.local_expiration_time, Some(h.min_local_deletion_time));
            let c = simple(&row, "rc");
            assert_eq!((c.flags, c.value), (0x08, &[0u8, 0, 0x1E, 0x61][..]));
            assert!(c.ttl.is_none());
            drop(row);
            expect_end(r, 44);
        },
    );
}
