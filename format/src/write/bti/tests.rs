//! Tests of the BTI index writers: Cassandra's own Partitions.db and Rows.db
//! rebuilt byte for byte from the sstables' data, and generated tries read
//! back with the readers of [`crate::bti`].

use std::path::{Path, PathBuf};

use proptest::prelude::*;

use super::*;
use crate::bti::node::SliceSource;
use crate::bti::partitions::{exact_candidate, for_each_entry, Candidate, PartitionsFooter};
use crate::bti::rows::{row_trie_entries, Flavor, RowsEntry};
use crate::data::{Fragment, ScanReader};
use crate::read::OwnedClustering;
use crate::sstable::Sstable;
use crate::statistics::Statistics;

fn data_file(dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with("-Data.db"))
}

/// Every `da` fixture, and the `da` sets of the corpus that are present.
fn bti_sstables() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join("fixtures/cassandra"))
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    dirs.retain(|d| {
        d.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("da_"))
    });
    dirs.sort();
    if let Some(corpus) = crate::test_support::root() {
        for s in [
            "legacy_da_simple",
            "legacy_da_clust",
            "legacy_da_simple_counter",
            "legacy_da_clust_counter",
        ] {
            dirs.push(corpus.join("cassandra").join(s));
        }
    }
    dirs.iter().filter_map(|d| data_file(d)).collect()
}

/// A partition from a Data.db scan: key, start, partition deletion, its
/// unfiltereds (offset from the start, clustering, deletion open after a
/// marker) and the END_OF_PARTITION offset.
struct Scanned {
    key: Vec<u8>,
    pos: u64,
    deletion: DeletionTime,
    items: Vec<(u64, OwnedClustering, Option<Option<DeletionTime>>)>,
    eop: u64,
}

fn scan(sst: &Sstable) -> (Vec<Scanned>, Partitioner, Vec<crate::types::CqlType>) {
    let b = sst.read_component(Component::Statistics).unwrap();
    let st = Statistics::parse_lenient(&b, sst.features()).unwrap();
    let part = Partitioner::parse(&st.validation.unwrap().partitioner).unwrap();
    let h = st.header.unwrap();
    let mut r = ScanReader::new(sst, &h).unwrap();
    let mut out: Vec<Scanned> = Vec::new();
    while let Some(f) = r.next_fragment().unwrap() {
        match f {
            Fragment::PartitionStart {
                key,
                position,
                deletion,
                ..
            } => out.push(Scanned {
                key: key.to_vec(),
                pos: position.0,
                deletion,
                items: Vec::new(),
                eop: 0,
            }),
            Fragment::StaticRow(_) => {}
            Fragment::Row(row) => {
                let p = out.last_mut().unwrap();
                let at = row.position.0 - p.pos;
                p.items
                    .push((at, OwnedClustering::of(&row.clustering), None));
            }
            Fragment::Marker(m) => {
                let p = out.last_mut().unwrap();
                let at = m.position.0 - p.pos;
                p.items
                    .push((at, OwnedClustering::of(&m.bound), Some(m.open_deletion())));
            }
            Fragment::PartitionEnd { position } => {
                let p = out.last_mut().unwrap();
                p.eop = position.0 - p.pos;
            }
        }
    }
    (out, part, h.clustering_types)
}

/// The block starts of each row-indexed partition, by data position, from
/// the sstable's own Rows.db: the only input not derivable from Data.db
/// (they depend on the index granularity of the writer).
fn block_starts(sst: &Sstable) -> std::collections::HashMap<u64, Vec<u64>> {
    let pb = sst.read_component(Component::Partitions).unwrap();
    let rb = sst.read_component(Component::Rows).unwrap_or_default();
    let footer = PartitionsFooter::decode(&pb, pb.len() as u64).unwrap();
    let mut src = SliceSource::new(&pb, Component::Partitions);
    let mut rows = SliceSource::new(&rb, Component::Rows);
    let mut out = std::collections::HashMap::new();
    for_each_entry(&mut src, footer.root, &mut |e| {
        if let PartitionPosition::Rows(o) = e.payload.position {
            let entry = RowsEntry::read(&mut rows, o, Flavor::Cassandra)?;
            let t = row_trie_entries(&mut rows, entry.root, Flavor::Cassandra)?;
            let starts = t[..t.len() - 1].iter().map(|x| x.payload.offset).collect();
            out.insert(entry.data_position, starts);
        }
        Ok(true)
    })
    .unwrap();
    out
}

/// Partitions.db and Rows.db written from the scan and the block starts.
fn rebuild(sst: &Sstable) -> (Vec<u8>, Vec<u8>, u64) {
    let (parts, partitioner, types) = scan(sst);
    let starts = block_starts(sst);
    let mut pi = PartitionIndexWriter::new(Vec::new(), partitioner);
    let mut ri = RowIndexWriter::new(Vec::new());
    let mut blocks = 0;
    for p in &parts {
        let s = starts.get(&p.pos).cloned().unwrap_or_default();
        for (k, &start) in s.iter().enumerate() {
            let end = s.get(k + 1).copied().unwrap_or(p.eop);
            let inside: Vec<&OwnedClustering> = p
                .items
                .iter()
                .filter(|it| it.0 >= start && it.0 < end)
                .map(|it| &it.1)
                .collect();
            // The deletion open at the block start: the last marker before it.
            let open = p
                .items
                .iter()
                .rev()
                .filter(|it| it.0 < start)
                .find_map(|it| it.2)
                .flatten()
                .unwrap_or(DeletionTime::LIVE);
            let (first, last) = (inside[0], inside[inside.len() - 1]);
            ri.add_block_clusterings(&types, &first.as_prefix(), &last.as_prefix(), start, open)
                .unwrap();
            blocks += 1;
        }
        let at = ri
            .finish_partition(&p.key, p.pos, p.eop, p.deletion)
            .unwrap();
        let pos = at.map_or(PartitionPosition::Data(p.pos), PartitionPosition::Rows);
        pi.add(&p.key, pos).unwrap();
    }
    (pi.finish().unwrap(), ri.finish().unwrap(), blocks)
}

fn first_difference(a: &[u8], b: &[u8]) -> String {
    let i = common_prefix(a, b);
    format!(
        "{} vs {} bytes, first difference at {i}: {:02x?} vs {:02x?}",
        a.len(),
        b.len(),
        &a[i.min(a.len())..(i + 8).min(a.len())],
        &b[i.min(b.len())..(i + 8).min(b.len())]
    )
}

/// Cassandra's own Partitions.db and Rows.db of every `da` sstable are
/// rebuilt byte for byte from Data.db (and the block starts).
#[test]
fn cassandra_indexes_are_rebuilt_byte_for_byte() {
    let ssts = bti_sstables();
    assert!(ssts.len() >= 14, "{ssts:?}");
    let (mut part_bytes, mut row_bytes, mut blocks) = (0, 0, 0);
    let mut failures = Vec::new();
    for p in &ssts {
        let sst = Sstable::open_path(p).unwrap();
        let (pdb, rdb, b) = rebuild(&sst);
        blocks += b;
        let want_p = sst.read_component(Component::Partitions).unwrap();
        let want_r = sst.read_component(Component::Rows).unwrap_or_default();
        if pdb != want_p {
            failures.push(format!(
                "{} Partitions.db: {}",
                p.display(),
                first_difference(&pdb, &want_p)
            ));
        }
        if rdb != want_r {
            failures.push(format!(
                "{} Rows.db: {}",
                p.display(),
                first_difference(&rdb, &want_r)
            ));
        }
        part_bytes += pdb.len();
        row_bytes += rdb.len();
    }
    eprintln!(
        "{} sstables: {part_bytes} bytes of Partitions.db and {row_bytes} bytes of Rows.db \
         ({blocks} row-index blocks) identical",
        ssts.len()
    );
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(row_bytes > 8000 && blocks > 1000, "{row_bytes} {blocks}");
}

/// Keys `prefix + i` padded with `x` to `len` bytes, in `p`'s order.
fn keys_of(p: &Partitioner, prefix: &str, n: u32, len: usize) -> Vec<Vec<u8>> {
    let mut keys: Vec<Vec<u8>> = (0..n)
        .map(|i| {
            let mut k = format!("{prefix}{i}").into_bytes();
            k.resize(len.max(k.len()), b'x');
            k
        })
        .collect();
    keys.sort_by(|a, b| p.compare_decorated(a, b));
    keys
}

fn murmur_keys(n: u32, len: usize) -> Vec<Vec<u8>> {
    keys_of(&Partitioner::Murmur3, "key-", n, len)
}

/// The position of entry `i` in the generated indexes.
fn generated_position(i: usize) -> PartitionPosition {
    if i.is_multiple_of(3) {
        PartitionPosition::Rows(i as u64 * 7)
    } else {
        PartitionPosition::Data(i as u64 * 1000)
    }
}

/// Multi-page Partitions.db files written by Cassandra's own
/// `PartitionIndexBuilder` (fixtures/bti-index/README.md) are rebuilt byte
/// for byte from the same keys.
#[test]
fn cassandra_multi_page_partition_indexes() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/bti-index");
    let deep = "deep".repeat(75);
    let cases = [
        ("murmur3-0x4", Partitioner::Murmur3, "key-", 0, 4),
        ("murmur3-1x4", Partitioner::Murmur3, "key-", 1, 4),
        ("murmur3-2000x8", Partitioner::Murmur3, "key-", 2000, 8),
        ("murmur3-400x300", Partitioner::Murmur3, "key-", 400, 300),
        (
            "byteordered-1500x320",
            Partitioner::ByteOrdered,
            deep.as_str(),
            1500,
            320,
        ),
    ];
    for (name, p, prefix, n, len) in cases {
        let want = std::fs::read(dir.join(format!("{name}-Partitions.db"))).unwrap();
        let mut w = PartitionIndexWriter::new(Vec::new(), p.clone());
        for (i, k) in keys_of(&p, prefix, n, len).iter().enumerate() {
            w.add(k, generated_position(i)).unwrap();
        }
        let got = w.finish().unwrap();
        assert!(got == want, "{name}: {}", first_difference(&got, &want));
    }
}

/// A multi-page Partitions.db: every key is found at its position by the
/// reader, with its hash byte; absent keys are not.
#[test]
fn large_partition_index_reads_back() {
    for (n, len) in [(0u32, 4usize), (1, 4), (5000, 8), (3000, 300)] {
        let keys = murmur_keys(n, len);
        let mut w = PartitionIndexWriter::new(Vec::new(), Partitioner::Murmur3);
        for (i, k) in keys.iter().enumerate() {
            w.add(k, generated_position(i)).unwrap();
        }
        let b = w.finish().unwrap();
        let f = PartitionsFooter::decode(&b, b.len() as u64).unwrap();
        assert_eq!(f.key_count, n as u64);
        if n > 0 {
            assert_eq!(f.first_key, keys[0]);
            assert_eq!(&f.last_key, keys.last().unwrap());
        }
        if n >= 5000 {
            assert!(b.len() > 3 * PAGE_SIZE as usize, "{}", b.len());
        }
        let mut src = SliceSource::new(&b, Component::Partitions);
        let mut got = Vec::new();
        for_each_entry(&mut src, f.root, &mut |e| {
            got.push(e.payload.position);
            Ok(true)
        })
        .unwrap();
        assert_eq!(got.len(), keys.len());
        for (i, k) in keys.iter().enumerate() {
            let bc = partition_key_bytes(&Partitioner::Murmur3, k).unwrap();
            let want = generated_position(i);
            assert_eq!(got[i], want);
            match exact_candidate(&mut src, f.root, &bc, hash_byte(k), false).unwrap() {
                Candidate::Found { payload, .. } => assert_eq!(payload.position, want),
                c => panic!("key {i} of {n}: {c:?}"),
            }
        }
    }
}

#[test]
fn out_of_order_input_is_an_error() {
    let keys = murmur_keys(3, 4);
    let mut w = PartitionIndexWriter::new(Vec::new(), Partitioner::Murmur3);
    w.add(&keys[1], PartitionPosition::Data(0)).unwrap();
    w.add(&keys[0], PartitionPosition::Data(10)).unwrap();
    // The trie sees a key when its successor is known.
    let e = w.add(&keys[2], PartitionPosition::Data(20)).unwrap_err();
    assert!(e.to_string().contains("out of order"), "{e}");
    let mut w = PartitionIndexWriter::new(Vec::new(), Partitioner::Murmur3);
    w.add(&keys[0], PartitionPosition::Data(0)).unwrap();
    w.add(&keys[0], PartitionPosition::Data(10)).unwrap();
    assert!(w.finish().is_err());

    let mut r = RowIndexWriter::new(Vec::new());
    r.add_block(
        &[0x40, 0x50, 0x38],
        &[0x40, 0x60, 0x38],
        0,
        DeletionTime::LIVE,
    )
    .unwrap();
    let e = r
        .add_block(
            &[0x40, 0x55, 0x38],
            &[0x40, 0x70, 0x38],
            10,
            DeletionTime::LIVE,
        )
        .unwrap_err();
    assert!(e.to_string().contains("not after"), "{e}");
}

#[test]
fn separators_and_nudges() {
    assert_eq!(separator_gt(&[1, 2, 3], &[1, 5, 0]), Some(vec![1, 3]));
    assert_eq!(separator_gt(&[1, 2], &[1, 2, 7]), Some(vec![1, 2, 0]));
    assert_eq!(separator_gt(&[1, 5], &[1, 2]), None);
    assert_eq!(separator_gt(&[1, 5], &[1, 5]), None);
    assert_eq!(nudge(&[1, 2, 3], 1), vec![1, 3]);
    assert_eq!(nudge(&[1, 0xFF, 0xFF, 4], 1), vec![1, 0xFF, 0xFF, 5]);
    assert_eq!(nudge(&[1, 0xFF], 1), vec![1, 0xFF, 0]);
}

#[test]
fn twelve_bit_packing() {
    let mut b = Vec::new();
    put_12bit(&mut b, &[0xABC, 0x123, 0x456]);
    assert_eq!(b, [0xAB, 0xC1, 0x23, 0x45, 0x60]);
}

proptest! {
    /// Any sorted key set: the reader enumerates exactly the keys' prefixes
    /// and payloads, in order, and finds each key.
    #[test]
    fn generated_row_tries_read_back(
        mut keys in proptest::collection::btree_set(
            proptest::collection::vec(0u8..=255, 1..40), 2..400),
        wide in any::<bool>(),
    ) {
        // Wide rows push offsets past one byte and branches past a page.
        let scale = if wide { 100_000 } else { 3 };
        let keys: Vec<Vec<u8>> = std::mem::take(&mut keys).into_iter().collect();
        let mut r = RowIndexWriter::new(Vec::new());
        // Pad past a page start so positions are not page-aligned.
        r.out.put(&[0u8; 100]).unwrap();
        // Blocks of one clustering each: the key escaped and terminated, as a clustering is.
        let enc: Vec<Vec<u8>> = keys
            .iter()
            .map(|k| {
                let mut e = Vec::new();
                crate::bti::comparable::escape(&mut e, k);
                e.push(0x38);
                e
            })
            .collect();
        let mut seps = Vec::new();
        for (i, k) in enc.iter().enumerate() {
            let open = if i % 5 == 1 {
                DeletionTime { marked_for_delete_at: i as i64, local_deletion_time: 7 }
            } else {
                DeletionTime::LIVE
            };
            seps.push(if i == 0 { Vec::new() } else { separator_gt(&enc[i - 1], k).unwrap() });
            r.add_block(k, k, i as u64 * scale, open).unwrap();
        }
        let end = keys.len() as u64 * scale;
        let at = r.finish_partition(b"pk", 5, end, DeletionTime::LIVE).unwrap().unwrap();
        let b = r.finish().unwrap();
        let mut src = SliceSource::new(&b, Component::Rows);
        let e = RowsEntry::read(&mut src, at, Flavor::Cassandra).unwrap();
        prop_assert_eq!(e.block_count, keys.len() as u64);
        prop_assert_eq!(e.data_position, 5);
        let t = row_trie_entries(&mut src, e.root, Flavor::Cassandra).unwrap();
        prop_assert_eq!(t.len(), keys.len() + 1);
        for (i, x) in t[..keys.len()].iter().enumerate() {
            prop_assert_eq!(&x.separator, &seps[i]);
            prop_assert_eq!(x.payload.offset, i as u64 * scale);
            prop_assert_eq!(x.payload.open.is_some(), i % 5 == 1);
        }
        prop_assert_eq!(t[keys.len()].payload.offset, end);
        prop_assert!(t[keys.len()].separator > enc[keys.len() - 1]);
    }
}

/// Keys of 50 KB sharing 49 KB: a trie 50,000 nodes deep is written in
/// bounded recursion (this runs on a test thread's small stack) and reads
/// back.
#[test]
fn very_deep_tries() {
    let p = Partitioner::ByteOrdered;
    let shared = vec![b'k'; 49_000];
    let keys: Vec<Vec<u8>> = (0..4u8)
        .map(|i| [shared.as_slice(), &[b'a' + i], &vec![i; 1000]].concat())
        .collect();
    let mut w = PartitionIndexWriter::new(Vec::new(), p.clone());
    for (i, k) in keys.iter().enumerate() {
        w.add(k, generated_position(i)).unwrap();
    }
    let b = w.finish().unwrap();
    let f = PartitionsFooter::decode(&b, b.len() as u64).unwrap();
    let mut src = SliceSource::new(&b, Component::Partitions);
    for (i, k) in keys.iter().enumerate() {
        let bc = partition_key_bytes(&p, k).unwrap();
        match exact_candidate(&mut src, f.root, &bc, hash_byte(k), false).unwrap() {
            Candidate::Found { payload, .. } => assert_eq!(payload.position, generated_position(i)),
            c => panic!("key {i}: {c:?}"),
        }
    }
    // The same depth in a row trie: separators 49 KB long.
    let mut r = RowIndexWriter::new(Vec::new());
    for (i, k) in keys.iter().enumerate() {
        let c = [k.as_slice(), &[0x38]].concat();
        r.add_block(&c, &c, i as u64 * 10, DeletionTime::LIVE)
            .unwrap();
    }
    let at = r
        .finish_partition(b"pk", 0, 40, DeletionTime::LIVE)
        .unwrap()
        .unwrap();
    let b = r.finish().unwrap();
    let mut src = SliceSource::new(&b, Component::Rows);
    let e = RowsEntry::read(&mut src, at, Flavor::Cassandra).unwrap();
    let t = row_trie_entries(&mut src, e.root, Flavor::Cassandra).unwrap();
    let offsets: Vec<u64> = t.iter().map(|x| x.payload.offset).collect();
    assert_eq!(offsets, [0, 10, 20, 30, 40]);
}

#[test]
fn unsupported_clustering_types_are_named() {
    use crate::clustering::{BoundKind, ClusteringPrefix};
    use crate::types::{CqlType, Native};
    // Counters cannot be clustering columns: no byte-comparable form.
    let types = [
        CqlType::Native(Native::Int),
        CqlType::Native(Native::Counter),
    ];
    let c = ClusteringPrefix {
        kind: BoundKind::Clustering,
        values: vec![Some(&[0, 0, 0, 1][..]), Some(&[127, 0, 0, 1][..])],
    };
    let mut r = RowIndexWriter::new(Vec::new());
    let e = r
        .add_block_clusterings(&types, &c, &c, 0, DeletionTime::LIVE)
        .unwrap_err();
    assert!(e.to_string().contains("counter"), "{e}");
    let ok = [CqlType::Native(Native::Int), CqlType::Native(Native::Text)];
    r.add_block_clusterings(&ok, &c, &c, 0, DeletionTime::LIVE)
        .unwrap();
    assert_eq!(r.block_count(), 1);
}
