//! Unit tests of partition lookup and bounded reads, on the wide fixtures
//! (`fixtures/cassandra/*_wide*`: one partition of ~21 000 rows with ~900
//! promoted-index blocks, small partitions beside it).

use std::cmp::Ordering;
use std::path::{Path, PathBuf};

use super::*;
use crate::compare::compare_clustering;
use crate::data::{Fragment, RangeTombstoneMarker, Row, ScanReader};
use crate::index::IndexReader;
use crate::io::{IoOptions, ReadKind};
use crate::statistics::{SerializationHeader, Statistics};
use crate::token::Partitioner;

fn fixture(case: &str) -> Option<PathBuf> {
    let p = crate::test_support::fixture_data(case);
    if p.is_none() {
        eprintln!("fixture {case} absent: skipped");
    }
    p
}

fn open(p: &Path, opts: IoOptions) -> (Sstable, SerializationHeader, Partitioner) {
    let sst = Sstable::open_path_with(p, opts).unwrap();
    let b = sst.read_component(crate::Component::Statistics).unwrap();
    let st = Statistics::parse_lenient(&b, sst.features()).unwrap();
    let part = Partitioner::parse(&st.validation.unwrap().partitioner).unwrap();
    (sst, st.header.unwrap(), part)
}

/// Every Index.db entry: (key, position, promoted index block count).
fn entries(sst: &Sstable) -> Vec<(Vec<u8>, u64, usize)> {
    let b = sst.read_component(crate::Component::Index).unwrap();
    let mut r = IndexReader::new(&b, sst.features());
    let mut v = Vec::new();
    while let Some(e) = r.next().unwrap() {
        v.push((
            e.key.to_vec(),
            e.position,
            e.promoted.map_or(0, |p| p.block_count),
        ));
    }
    v
}

#[test]
fn big_index_finds_every_key() {
    for case in [
        "nb_wide",
        "oa_wide",
        "nb_wide_desc",
        "nb_clustering",
        "oa_deletes",
    ] {
        let Some(p) = fixture(case) else { continue };
        let (sst, header, part) = open(&p, IoOptions::default());
        let all = entries(&sst);
        let mut idx = BigIndex::open(&sst, part, &header.clustering_fixed_lens()).unwrap();
        for (i, (key, pos, blocks)) in all.iter().enumerate() {
            let h = idx.find(key).unwrap().expect("present");
            assert_eq!(&h.key, key);
            assert_eq!(h.position.0, *pos, "{case}");
            assert_eq!(h.row_index.as_ref().map_or(0, |r| r.block_count()), *blocks);
            if *blocks == 0 {
                assert_eq!(h.end.map(|e| e.0), all.get(i + 1).map(|n| n.1), "{case}");
            }
        }
        // Absent keys: ruled out by the filter, the key range or the index.
        let mut reasons = std::collections::HashSet::new();
        for k in 0..300u32 {
            let key = (0x4000_0000u32 + k).to_be_bytes();
            if all.iter().any(|e| e.0 == key) {
                continue;
            }
            assert!(idx.find(&key).unwrap().is_none());
            reasons.insert(idx.last_absence().unwrap());
        }
        assert!(reasons.contains(&Absence::Filter), "{case}: {reasons:?}");
    }
}

/// Every row of partition `key` through a full scan: (clustering values, position).
fn scan_rows(sst: &Sstable, header: &SerializationHeader, pos: u64) -> Vec<(OwnedClustering, u64)> {
    let mut r = ScanReader::new(sst, header).unwrap();
    r.seek_partition(crate::data::DataPos(pos)).unwrap();
    let mut v = Vec::new();
    loop {
        match r.next_fragment().unwrap().unwrap() {
            Fragment::Row(row) => v.push((OwnedClustering::of(&row.clustering), row.position.0)),
            Fragment::PartitionEnd { .. } => return v,
            _ => {}
        }
    }
}

fn bound(c: &OwnedClustering, n: usize, inclusive: bool) -> ClusteringBound {
    ClusteringBound {
        values: c.values[..n].to_vec(),
        inclusive,
    }
}

#[test]
fn bounded_rows_equal_the_filtered_scan() {
    for case in ["nb_wide", "nb_wide_desc"] {
        let Some(p) = fixture(case) else { continue };
        for opts in [
            IoOptions::default(),
            IoOptions {
                index_cache_bytes: 0,
                unit: 512,
                ..IoOptions::default()
            },
        ] {
            let (sst, header, part) = open(&p, opts);
            let types = header.clustering_types.clone();
            let (key, pos, _) = entries(&sst).into_iter().max_by_key(|e| e.2).unwrap();
            let rows = scan_rows(&sst, &header, pos);
            let mut idx = BigIndex::open(&sst, part, &header.clustering_fixed_lens()).unwrap();
            let mut reader = BoundedReader::new(&sst, &header).unwrap();
            // Deterministic pseudo-random slices.
            let mut x = 0x2545_f491_4f6c_dd1du64;
            for _ in 0..60 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let a = (x % rows.len() as u64) as usize;
                let b = (a + (x >> 32) as usize % 40).min(rows.len() - 1);
                let n = 1 + (x >> 40) as usize % 2;
                let slice = Slice {
                    start: Some(bound(&rows[a].0, n, x & 1 == 0)),
                    end: Some(bound(&rows[b].0, n, x & 2 == 0)),
                };
                let lo = slice.start_prefix();
                let hi = slice.end_prefix();
                let want: Vec<u64> = rows
                    .iter()
                    .filter(|(c, _)| {
                        let c = c.as_prefix();
                        lo.as_ref()
                            .is_none_or(|l| compare_clustering(&types, &c, l) == Ordering::Greater)
                            && hi
                                .as_ref()
                                .is_none_or(|u| compare_clustering(&types, &c, u) == Ordering::Less)
                    })
                    .map(|r| r.1)
                    .collect();
                let mut h = idx.find(&key).unwrap().unwrap();
                let mut got = Vec::new();
                let mut visit =
                    |e: Fragment<'_, &Row<'_>, &RangeTombstoneMarker<'_>>| -> Result<()> {
                        if let Fragment::Row(r) = e {
                            got.push(r.position.0);
                        }
                        Ok(())
                    };
                let plan = reader
                    .read(&mut h, &slice, &ReadOptions::default(), &mut visit)
                    .unwrap();
                assert_eq!(got, want, "{case} rows {a}..{b}: {plan:?}");
                // The planned range holds every row returned.
                if let (Some((s, e)), Some(f), Some(l)) = (plan.data, got.first(), got.last()) {
                    assert!(s.0 <= *f && *l < e.0, "{plan:?}");
                }
            }
        }
    }
}

#[test]
fn naive_and_indexed_reads_agree_and_cost_differently() {
    let Some(p) = fixture("nb_wide_desc") else {
        return;
    };
    let (sst, header, part) = open(&p, IoOptions::default());
    let (key, pos, _) = entries(&sst).into_iter().max_by_key(|e| e.2).unwrap();
    let rows = scan_rows(&sst, &header, pos);
    let mid = &rows[rows.len() / 2].0;
    let slice = Slice {
        start: Some(bound(mid, 2, true)),
        end: Some(bound(mid, 2, true)),
    };
    let mut idx = BigIndex::open(&sst, part, &header.clustering_fixed_lens()).unwrap();
    let mut reader = BoundedReader::new(&sst, &header).unwrap();
    let mut run = |naive: bool| {
        sst.io.begin_operation();
        let before = sst.io.stats();
        let mut h = idx.find(&key).unwrap().unwrap();
        let mut got = Vec::new();
        let mut visit = |e: Fragment<'_, &Row<'_>, &RangeTombstoneMarker<'_>>| -> Result<()> {
            if let Fragment::Row(r) = e {
                got.push(r.position.0);
            }
            Ok(())
        };
        let opts = ReadOptions {
            naive,
            ..ReadOptions::default()
        };
        reader.read(&mut h, &slice, &opts, &mut visit).unwrap();
        let d = *sst.io.stats().since(&before).get(crate::Component::Data);
        (got, d)
    };
    let (a, da) = run(false);
    let (b, db) = run(true);
    assert_eq!(a, b);
    assert_eq!(a.len(), 1);
    assert!(db.bytes > 20 * da.bytes, "{da:?} vs {db:?}");
    // The row index path never reads ahead.
    let _ = ReadKind::Point;
}

#[test]
fn clustering_bounds_parse() {
    let types = vec![
        CqlType::parse("Int32Type").unwrap(),
        CqlType::parse("UTF8Type").unwrap(),
    ];
    let b = ClusteringBound::parse(&types, "5:a\\:b", true).unwrap();
    assert_eq!(
        b.values,
        vec![Some(5i32.to_be_bytes().to_vec()), Some(b"a:b".to_vec())]
    );
    assert_eq!(
        ClusteringBound::parse(&types, "-7", false)
            .unwrap()
            .values
            .len(),
        1
    );
    // The text component takes the colons: the only reading as (int, text).
    assert_eq!(
        ClusteringBound::parse(&types, "1:a:b", true)
            .unwrap()
            .values,
        vec![Some(1i32.to_be_bytes().to_vec()), Some(b"a:b".to_vec())]
    );
    let ints = vec![types[0].clone(), types[0].clone()];
    assert!(ClusteringBound::parse(&ints, "1:2:3", true).is_err());
    assert!(ClusteringBound::parse(&types, "x", true).is_err());
    assert!(ClusteringBound::parse(&[], "1", true).is_err());
    // One clustering column: no splitting on ':'.
    let one = vec![CqlType::parse("UTF8Type").unwrap()];
    let b = ClusteringBound::parse(&one, "a:b", true).unwrap();
    assert_eq!(b.values, vec![Some(b"a:b".to_vec())]);
    let s = Slice {
        start: Some(b.clone()),
        end: Some(ClusteringBound {
            inclusive: false,
            ..b
        }),
    };
    assert_eq!(
        s.start_prefix().unwrap().kind,
        crate::clustering::BoundKind::InclStartBound
    );
    assert_eq!(
        s.end_prefix().unwrap().kind,
        crate::clustering::BoundKind::ExclEndBound
    );
    assert!(Slice::all().start_prefix().is_none());
}
