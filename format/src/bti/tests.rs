//! Unit tests of the trie readers: hand-built tries for every node type,
//! generated tries against brute force, the worked examples of the format
//! doc, the fixtures and corpus sets (every key found, absent keys not,
//! enumeration in Data.db order, row-index entries on block starts and
//! separator bounds around the blocks' clusterings), and no-panic
//! properties over random and mutated files.

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use proptest::prelude::*;

use super::comparable::*;
use super::index::{BtiIndex, BtiRowIndex, Found};
use super::node::*;
use super::partitions::*;
use super::rows::*;
use super::walk::*;
use crate::clustering::{BoundKind, ClusteringPrefix};
use crate::compare::compare_clustering;
use crate::component::Component;
use crate::data::{Fragment, ScanReader};
use crate::deletion::DeletionTime;
use crate::lookup::{OwnedClustering, PartitionIndex, RowIndex};
use crate::sstable::Sstable;
use crate::statistics::{SerializationHeader, Statistics};
use crate::token::Partitioner;
use crate::types::{CqlType, Native};

mod real;

// ---------------------------------------------------------------------------
// A trie writer for tests.

/// Append a node of type `t` at the end of `buf`: children are
/// `(transition, absolute position)`, ascending; `pb` the payload flags;
/// `payload` the bytes after the node. Returns the node's position.
fn put_node(buf: &mut Vec<u8>, t: NodeType, children: &[(u8, u64)], pb: u8, payload: &[u8]) -> u64 {
    let pos = buf.len() as u64;
    let d = |c: u64| pos - c;
    let nib = t.nibble() << 4;
    let width = t.pointer_bits() as usize / 8;
    let put = |buf: &mut Vec<u8>, v: u64, w: usize| {
        buf.extend_from_slice(&v.to_be_bytes()[8 - w..]);
    };
    let put12 = |buf: &mut Vec<u8>, vals: &[u64]| {
        for pair in vals.chunks(2) {
            let p0 = pair[0];
            match pair.get(1) {
                Some(&p1) => {
                    buf.push((p0 >> 4) as u8);
                    buf.push((((p0 << 4) | (p1 >> 8)) & 0xFF) as u8);
                    buf.push((p1 & 0xFF) as u8);
                }
                None => {
                    buf.push((p0 >> 4) as u8);
                    buf.push(((p0 << 4) & 0xFF) as u8);
                }
            }
        }
    };
    match t {
        NodeType::PayloadOnly => buf.push(nib | pb),
        NodeType::SingleNoPayload4 => {
            let (tr, c) = children[0];
            assert!(pb == 0 && d(c) < 16);
            buf.push(nib | d(c) as u8);
            buf.push(tr);
        }
        NodeType::SingleNoPayload12 => {
            let (tr, c) = children[0];
            assert!(pb == 0 && d(c) < 4096);
            buf.push(nib | (d(c) >> 8) as u8);
            buf.push(d(c) as u8);
            buf.push(tr);
        }
        NodeType::Single8 | NodeType::Single16 => {
            let (tr, c) = children[0];
            buf.push(nib | pb);
            buf.push(tr);
            put(buf, d(c), width);
        }
        NodeType::Sparse8
        | NodeType::Sparse12
        | NodeType::Sparse16
        | NodeType::Sparse24
        | NodeType::Sparse40 => {
            buf.push(nib | pb);
            buf.push(children.len() as u8);
            buf.extend(children.iter().map(|c| c.0));
            let ds: Vec<u64> = children.iter().map(|c| d(c.1)).collect();
            if t == NodeType::Sparse12 {
                put12(buf, &ds);
            } else {
                for x in ds {
                    put(buf, x, width);
                }
            }
        }
        _ => {
            let first = children[0].0;
            let last = children[children.len() - 1].0;
            buf.push(nib | pb);
            buf.push(first);
            buf.push(last - first);
            let mut ds = Vec::new();
            for tr in first..=last {
                ds.push(children.iter().find(|c| c.0 == tr).map_or(0, |c| d(c.1)));
            }
            if t == NodeType::Dense12 {
                put12(buf, &ds);
            } else {
                for x in ds {
                    put(buf, x, width);
                }
            }
        }
    }
    buf.extend_from_slice(payload);
    pos
}

/// Payload flags and bytes of a no-hash partition payload for `v`.
fn payload(v: i64) -> (u8, Vec<u8>) {
    let n = signed_size(v);
    let mut b = Vec::new();
    write_signed(&mut b, v, n);
    (n as u8, b)
}

/// The node types that can hold `n` children with deltas up to `max`
/// (and a payload when `with_payload`).
fn fitting(n: usize, max: u64, with_payload: bool) -> Vec<NodeType> {
    let fits = |bits: u32| bits >= 64 || max < (1u64 << bits);
    NodeType::ALL
        .iter()
        .copied()
        .filter(|t| match t {
            NodeType::PayloadOnly => n == 0,
            NodeType::SingleNoPayload4 | NodeType::SingleNoPayload12 => {
                n == 1 && !with_payload && fits(t.pointer_bits())
            }
            NodeType::Single8 | NodeType::Single16 => n == 1 && fits(t.pointer_bits()),
            _ => n >= 1 && fits(t.pointer_bits()),
        })
        .collect()
}

/// An in-memory trie of keys to payload values.
#[derive(Default)]
struct Tree {
    payload: Option<i64>,
    children: BTreeMap<u8, Tree>,
}

impl Tree {
    fn insert(&mut self, key: &[u8], v: i64) {
        match key.split_first() {
            None => self.payload = Some(v),
            Some((b, rest)) => self.children.entry(*b).or_default().insert(rest, v),
        }
    }

    /// Serialize bottom-up; node types are picked by `pick` among those
    /// that fit.
    fn write(&self, buf: &mut Vec<u8>, pick: &mut dyn FnMut(&[NodeType]) -> NodeType) -> u64 {
        let mut kids = Vec::new();
        for (b, t) in &self.children {
            kids.push((*b, t.write(buf, pick)));
        }
        let pos = buf.len() as u64;
        let max = kids.iter().map(|k| pos - k.1).max().unwrap_or(0);
        let (pb, pl) = self.payload.map_or((0, Vec::new()), payload);
        let t = pick(&fitting(kids.len(), max, pb != 0));
        put_node(buf, t, &kids, pb, &pl)
    }
}

fn build(keys: &[(Vec<u8>, i64)], seed: u64) -> (Vec<u8>, u64) {
    let mut tree = Tree::default();
    for (k, v) in keys {
        tree.insert(k, *v);
    }
    let mut buf = Vec::new();
    let mut s = seed;
    let mut pick = |ts: &[NodeType]| {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ts[(s >> 33) as usize % ts.len()]
    };
    let root = tree.write(&mut buf, &mut pick);
    (buf, root)
}

fn value_of<S: TrieSource>(src: &mut S, n: &Node) -> i64 {
    match PartitionPayload::read(src, n).unwrap().unwrap().position {
        PartitionPosition::Rows(v) => v as i64,
        PartitionPosition::Data(v) => !(v as i64),
    }
}

// ---------------------------------------------------------------------------
// Node types.

#[test]
fn every_node_type_decodes_and_walks() {
    for t in NodeType::ALL {
        let mut buf = Vec::new();
        // Leaves under 0x10, 0x12, 0x30 (one leaf for the single types).
        let trans: &[u8] = match t {
            NodeType::PayloadOnly => &[],
            NodeType::SingleNoPayload4
            | NodeType::Single8
            | NodeType::SingleNoPayload12
            | NodeType::Single16 => &[0x30],
            _ => &[0x10, 0x12, 0x30],
        };
        let mut kids = Vec::new();
        for (i, tr) in trans.iter().enumerate() {
            let (pb, pl) = payload(100 + i as i64);
            kids.push((*tr, put_node(&mut buf, NodeType::PayloadOnly, &[], pb, &pl)));
        }
        let (pb, pl) = if t.never_has_payload() {
            (0, Vec::new())
        } else {
            payload(7)
        };
        let root = put_node(&mut buf, t, &kids, pb, &pl);
        let mut src = SliceSource::new(&buf, Component::Partitions);
        let n = read_node(&mut src, root).unwrap();
        assert_eq!(n.node_type, t, "{}", t.name());
        assert_eq!(n.children(), &kids[..], "{}", t.name());
        assert_eq!(n.has_payload(), pb != 0);
        assert_eq!(n.payload_pos, buf.len() as u64 - pl.len() as u64);
        // Enumeration: the root's payload first, then the leaves.
        let got: Vec<(Vec<u8>, i64)> = payloads(&mut src, root, 1000)
            .unwrap()
            .into_iter()
            .map(|(k, n)| {
                let v = value_of(&mut src, &n);
                (k, v)
            })
            .collect();
        let mut want = Vec::new();
        if pb != 0 {
            want.push((vec![], 7));
        }
        for (i, tr) in trans.iter().enumerate() {
            want.push((vec![*tr], 100 + i as i64));
        }
        assert_eq!(got, want, "{}", t.name());
        // Child lookups.
        for (tr, pos) in &kids {
            assert_eq!(n.child(*tr), Some(*pos));
        }
        assert_eq!(n.child(0x11), None);
        if trans.len() == 3 {
            assert_eq!(n.lesser_child(Some(0x11)), Some(kids[0]));
            assert_eq!(n.greater_child(Some(0x11)), Some(kids[1]));
            assert_eq!(n.lesser_child(Some(0x10)), None);
            assert_eq!(n.greater_child(Some(0x30)), None);
            assert_eq!(n.greater_child(None), Some(kids[0]));
        }
    }
}

#[test]
fn twelve_bit_arrays_pack_pairs() {
    // AB CD EF -> ABC, DEF; odd count: last entry in a 2-byte word.
    let b = [0xAB, 0xCD, 0xEF, 0x12, 0x30];
    let mut buf = vec![0xA0, 0x40, 0x02];
    buf.extend_from_slice(&b);
    // A DENSE_12 at position 0x1000 (deltas backwards).
    let mut file = vec![0u8; 0x1000];
    file.extend_from_slice(&buf);
    let n = Node::decode(&file[0x1000..], 0x1000, Component::Rows).unwrap();
    let want = [
        (0x40, 0x1000 - 0xABC),
        (0x41, 0x1000 - 0xDEF),
        (0x42, 0x1000 - 0x123),
    ];
    assert_eq!(n.children(), &want[..]);
    assert_eq!(n.payload_pos, 0x1000 + 3 + 5);
    // SPARSE_12 with three children: 2 + 3 + ceil(4.5) bytes.
    let mut file = vec![0u8; 0x1000];
    file.extend_from_slice(&[0x60, 3, 1, 2, 3, 0xAB, 0xCD, 0xEF, 0x12, 0x30]);
    let n = Node::decode(&file[0x1000..], 0x1000, Component::Rows).unwrap();
    assert_eq!(n.payload_pos, 0x1000 + 10);
    assert_eq!(n.children()[2], (3, 0x1000 - 0x123));
}

#[test]
fn malformed_nodes_are_errors() {
    // Pointer past the start of the file.
    assert!(Node::decode(&[0x20, 0x40, 0x09], 5, Component::Partitions).is_err());
    // Zero delta (a self loop).
    assert!(Node::decode(&[0x20, 0x40, 0x00], 5, Component::Partitions).is_err());
    // Sparse transitions out of order.
    assert!(Node::decode(&[0x50, 2, 0x41, 0x40, 1, 2], 9, Component::Partitions).is_err());
    // Dense range past 0xff.
    assert!(Node::decode(&[0xB0, 0xF0, 0x20], 9, Component::Partitions).is_err());
    // Truncated.
    assert!(Node::decode(&[0x50, 4, 1], 9, Component::Partitions).is_err());
    assert!(Node::decode(&[], 9, Component::Partitions).is_err());
    // Dense delta 0 = no child, not an error.
    let n = Node::decode(&[0xB0, 0x40, 0x01, 0, 0, 0, 3], 9, Component::Partitions).unwrap();
    assert_eq!(n.children(), &[(0x41, 6)]);
}

#[test]
fn signed_sizes() {
    for v in [
        0i64,
        1,
        127,
        128,
        -1,
        -128,
        -129,
        1 << 40,
        i64::MIN,
        i64::MAX,
    ] {
        let n = signed_size(v);
        let mut b = Vec::new();
        write_signed(&mut b, v, n);
        assert_eq!(read_signed(&b), v, "{v}");
        if n > 1 {
            let mut s = Vec::new();
            write_signed(&mut s, v, n - 1);
            assert_ne!(read_signed(&s), v, "{v} fits in fewer bytes");
        }
    }
    assert_eq!(read_signed(&[0xFF]), -1);
    assert_eq!(read_signed(&[0xE9]), -23);
}

// ---------------------------------------------------------------------------
// Generated tries against brute force.

fn keys_strategy() -> impl Strategy<Value = Vec<Vec<u8>>> {
    prop::collection::vec(
        prop::collection::vec(
            prop::sample::select(vec![0u8, 1, 0x40, 0x41, 0xFE, 0xFF]),
            0..6,
        ),
        1..24,
    )
    .prop_map(|mut v| {
        v.sort();
        v.dedup();
        v
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn generated_tries_match_brute_force(
        keys in keys_strategy(),
        probes in prop::collection::vec(
            prop::collection::vec(prop::sample::select(vec![0u8, 1, 2, 0x40, 0x41, 0x42, 0xFE, 0xFF]), 0..7),
            1..16),
        seed in any::<u64>(),
    ) {
        let kv: Vec<(Vec<u8>, i64)> = keys.iter().cloned().enumerate().map(|(i, k)| (k, i as i64)).collect();
        let (buf, root) = build(&kv, seed);
        let mut src = SliceSource::new(&buf, Component::Partitions);
        let max = buf.len() as u64;
        // In order.
        let got: Vec<(Vec<u8>, i64)> = payloads(&mut src, root, max).unwrap().into_iter()
            .map(|(k, n)| { let v = value_of(&mut src, &n); (k, v) }).collect();
        prop_assert_eq!(&got, &kv);
        // Reverse order.
        let mut rev = Vec::new();
        for_each_payload(&mut src, root, &[], Order::Reverse, max, &mut |s, k, n| {
            rev.push((k.to_vec(), value_of(s, n)));
            Ok(true)
        }).unwrap();
        rev.reverse();
        prop_assert_eq!(&rev, &kv);
        // Exact follow of each key.
        for (k, v) in &kv {
            let f = follow(&mut src, root, k).unwrap();
            prop_assert!(f.exhausted(k));
            prop_assert_eq!(value_of(&mut src, &f.node), *v);
            // The successor.
            let next = f.greater.as_ref().map(|(p, pos)| {
                let (_, n) = first_payload(&mut src, *pos, p, Order::Forward, max).unwrap().unwrap();
                value_of(&mut src, &n)
            });
            let want = kv.iter().find(|(x, _)| x > k).map(|x| x.1);
            prop_assert_eq!(next, want);
        }
        // Floor of arbitrary probes.
        for p in probes.iter().chain(keys.iter()) {
            let got = floor(&mut src, root, p, max).unwrap().map(|(k, n)| (k, value_of(&mut src, &n)));
            let want = kv.iter().rev().find(|(k, _)| k <= p).cloned();
            prop_assert_eq!(got, want, "probe {:02x?}", p);
        }
    }
}

// ---------------------------------------------------------------------------
// Hostile input: nothing panics, walks stay bounded.

#[test]
fn shared_subtrees_are_bounded() {
    // A chain of dense nodes each pointing twice at the node below: 2^40
    // paths in a few hundred bytes.
    let mut buf = Vec::new();
    let (pb, pl) = payload(1);
    let mut below = put_node(&mut buf, NodeType::PayloadOnly, &[], pb, &pl);
    for _ in 0..40 {
        below = put_node(
            &mut buf,
            NodeType::Sparse16,
            &[(1, below), (2, below)],
            0,
            &[],
        );
    }
    let mut src = SliceSource::new(&buf, Component::Partitions);
    let max = buf.len() as u64;
    let e = payloads(&mut src, below, max).unwrap_err();
    assert!(e.to_string().contains("not a tree"), "{e}");
    // Lookups are bounded by the key length anyway.
    let f = follow(&mut src, below, &[1; 100]).unwrap();
    assert_eq!(f.matched, 40);
    let _ = floor(&mut src, below, &[2; 41], max);
}

fn exercise(part: &[u8], rows: &[u8], key: &[u8]) {
    let mut ps = SliceSource::new(part, Component::Partitions);
    let len = part.len() as u64;
    if let Ok(f) = PartitionsFooter::decode(part, len) {
        let _ = for_each_entry(&mut ps, f.root, &mut |_| Ok(true));
        let _ = exact_candidate(&mut ps, f.root, key, 0, true);
        let _ = floor(&mut ps, f.root, key, len);
    }
    for root in [len.saturating_sub(1), len / 2, 0] {
        let _ = payloads(&mut ps, root, len);
        let _ = exact_candidate(&mut ps, root, key, 0, true);
    }
    let mut rs = SliceSource::new(rows, Component::Rows);
    let rlen = rows.len() as u64;
    for off in [0, rlen / 3, rlen / 2, rlen.saturating_sub(12)] {
        for fl in [Flavor::Cassandra, Flavor::Scylla] {
            if let Ok(e) = RowsEntry::read(&mut rs, off, fl) {
                let _ = row_trie_entries(&mut rs, e.root, fl);
                let _ = row_trie_floor(&mut rs, e.root, key, fl);
            }
        }
    }
    for root in [rlen.saturating_sub(1), rlen / 2] {
        let _ = row_trie_entries(&mut rs, root, Flavor::Cassandra);
        let _ = row_trie_floor(&mut rs, root, key, Flavor::Cassandra);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_bytes_never_panic(
        part in prop::collection::vec(any::<u8>(), 0..400),
        rows in prop::collection::vec(any::<u8>(), 0..400),
        key in prop::collection::vec(any::<u8>(), 0..12),
    ) {
        exercise(&part, &rows, &key);
    }

    #[test]
    fn separator_decoding_never_panics(
        sep in prop::collection::vec(any::<u8>(), 0..40),
    ) {
        for types in sample_types() {
            let _ = separator_bounds(&types, &sep);
            let _ = decode_prefix(&types, &sep);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn mutated_files_never_panic(
        which in 0usize..4,
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        key in prop::collection::vec(any::<u8>(), 0..12),
    ) {
        let files = real_tries();
        if files.is_empty() {
            return Ok(());
        }
        let (mut part, mut rows) = files[which % files.len()].clone();
        for (i, b) in &flips {
            if !part.is_empty() {
                let j = i.index(part.len());
                part[j] ^= b | 1;
            }
            if !rows.is_empty() {
                let j = i.index(rows.len());
                rows[j] ^= b | 1;
            }
        }
        exercise(&part, &rows, &key);
    }
}

/// Partitions.db and Rows.db of the fixtures with row indexes.
fn real_tries() -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut v = Vec::new();
    for c in ["da_wide", "da_wide_desc", "da_deletes", "da_clustering"] {
        let Some(p) = data_file(&fixtures().join(c)) else {
            continue;
        };
        let Ok(sst) = Sstable::open_path(&p) else {
            continue;
        };
        let part = sst
            .read_component(Component::Partitions)
            .unwrap_or_default();
        let rows = sst.read_component(Component::Rows).unwrap_or_default();
        v.push((part, rows));
    }
    v
}

// ---------------------------------------------------------------------------
// Byte-comparable encodings.

fn esc(b: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    escape(&mut v, b);
    v
}

#[test]
fn escaping_examples() {
    // ByteSource.AbstractEscaper's documented examples.
    assert_eq!(esc(b"A\0\0B"), [0x41, 0x00, 0xFE, 0xFF, 0x42, 0x00]);
    assert_eq!(esc(b"A\0B\0"), [0x41, 0x00, 0xFF, 0x42, 0x00, 0xFE]);
    assert_eq!(esc(b"A\0"), [0x41, 0x00, 0xFE]);
    assert_eq!(esc(b"AB"), [0x41, 0x42, 0x00]);
    assert_eq!(esc(b"A\0B"), [0x41, 0x00, 0xFF, 0x42, 0x00]);
    assert_eq!(esc(b""), [0x00]);
    for s in [&b"A\0\0B"[..], b"A\0B\0", b"A\0", b"", b"\0\0\0", b"xyz"] {
        let mut e = esc(s);
        e.push(0x38);
        assert_eq!(unescape(&e), Some((s.to_vec(), e.len() - 1)), "{s:?}");
        // Cut short: truncated.
        assert_eq!(unescape(&e[..e.len() - 1]), None);
    }
}

#[test]
fn varlen_signed_examples() {
    // ByteSource.VariableLengthInteger's documented examples.
    let cases: &[(i64, &[u8])] = &[
        (0, &[0x80]),
        (1, &[0x81]),
        (-1, &[0x7F]),
        (63, &[0xBF]),
        (64, &[0xC0, 0x40]),
        (-64, &[0x40]),
        (-65, &[0x3F, 0xBF]),
        ((1 << 20) - 1, &[0xEF, 0xFF, 0xFF]),
        (1 << 20, &[0xF0, 0x10, 0x00, 0x00]),
        (-(1 << 20), &[0x10, 0x00, 0x00]),
        (
            i64::MAX,
            &[0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],
        ),
        (
            i64::MIN,
            &[0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00],
        ),
    ];
    for (v, want) in cases {
        let mut b = Vec::new();
        encode_varlen_signed(&mut b, *v);
        assert_eq!(&b[..], *want, "{v}");
        assert_eq!(decode_varlen_signed(&b), Some((*v, b.len())), "{v}");
    }
}

#[test]
fn varint_examples() {
    // IntegerType (OSS50): short numbers as variable-length signed longs,
    // 7+ bytes in full form (sign byte, length - 7, bytes).
    let enc = |v: &[u8]| {
        let mut b = Vec::new();
        encode_varint(&mut b, v);
        b
    };
    assert_eq!(enc(&[0xFF]), [0x7F]);
    assert_eq!(enc(&[0x00]), [0x80]);
    assert_eq!(enc(&[0x01]), [0x81]);
    assert_eq!(enc(&[0x00, 0xFF]), [0xC0, 0xFF]);
    assert_eq!(
        enc(&[1, 0, 0, 0, 0, 0, 0, 0]),
        [0xFF, 0x01, 0x01, 0, 0, 0, 0, 0, 0, 0]
    );
    assert_eq!(
        enc(&[0xFE, 0, 0, 0, 0, 0, 0, 0]),
        [0x00, 0xFE, 0xFE, 0, 0, 0, 0, 0, 0, 0]
    );
}

#[test]
fn fixed_type_examples() {
    let one = |t: Native, v: &[u8]| {
        let mut b = Vec::new();
        encode_component(&mut b, &CqlType::Native(t), v).unwrap();
        b[1..].to_vec()
    };
    // ByteComparable.md tables.
    assert_eq!(one(Native::Int, &[0, 0, 0, 1]), [0x80, 0, 0, 1]);
    assert_eq!(one(Native::Smallint, &[0xFF, 0xFF]), [0x7F, 0xFF]);
    assert_eq!(one(Native::Tinyint, &[0]), [0x80]);
    assert_eq!(one(Native::Float, &[0x3F, 0x80, 0, 0]), [0xBF, 0x80, 0, 0]);
    assert_eq!(
        one(Native::Float, &[0x80, 0, 0, 0]),
        [0x7F, 0xFF, 0xFF, 0xFF]
    );
    assert_eq!(
        one(Native::Float, &[0xBF, 0x80, 0, 0]),
        [0x40, 0x7F, 0xFF, 0xFF]
    );
    assert_eq!(
        one(Native::Double, &[0xFF, 0xF0, 0, 0, 0, 0, 0, 0]),
        [0x00, 0x0F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
    );
    let uuid = |s: &str| -> Vec<u8> {
        let h: String = s.chars().filter(|c| *c != '-').collect();
        (0..16)
            .map(|i| u8::from_str_radix(&h[2 * i..2 * i + 2], 16).unwrap())
            .collect()
    };
    assert_eq!(
        one(Native::Uuid, &uuid("cc520882-9507-44fb-8fc9-b349ecdee658")),
        uuid("4cc52088295074fb8fc9b349ecdee658")
    );
    assert_eq!(
        one(Native::Uuid, &uuid("2a92d750-d8dc-11e6-a2de-cf8ecd4cf053")),
        uuid("11e6d8dc2a92d750a2decf8ecd4cf053")
    );
    // Reversed: every bit inverted; empty values get markers.
    let rev = CqlType::Reversed(Box::new(CqlType::Native(Native::Int)));
    let mut b = Vec::new();
    encode_component(&mut b, &rev, &[0, 0, 0, 1]).unwrap();
    assert_eq!(b, [0x40, 0x7F, 0xFF, 0xFF, 0xFE]);
    b.clear();
    encode_component(&mut b, &rev, &[]).unwrap();
    assert_eq!(b, [NEXT_COMPONENT_EMPTY_REVERSED]);
    b.clear();
    encode_component(&mut b, &CqlType::Native(Native::Int), &[]).unwrap();
    assert_eq!(b, [NEXT_COMPONENT_EMPTY]);
    b.clear();
    encode_component(&mut b, &CqlType::Native(Native::Text), &[]).unwrap();
    assert_eq!(b, [NEXT_COMPONENT, 0x00]);
    // Decimal zero (any scale) is one byte.
    b.clear();
    encode_component(&mut b, &CqlType::Native(Native::Decimal), &[0; 5]).unwrap();
    assert_eq!(b, [NEXT_COMPONENT, 0x80]);
    // Unsupported (counters are never keys): nothing.
    assert!(encode_component(&mut b, &CqlType::Native(Native::Counter), &[0; 8]).is_none());
}

#[test]
fn partition_key_encodings() {
    // §12.3 and §12.4 (legacy_da_simple: ByteOrdered key "0").
    assert_eq!(
        partition_key_bytes(&Partitioner::ByteOrdered, b"0").unwrap(),
        [0x40, 0x30, 0x00, 0x40, 0x30, 0x00, 0x38]
    );
    let k = [0, 0, 0, 0];
    let mut want = vec![0x40];
    want.extend_from_slice(&((-3485513579396041028i64 as u64) ^ (1 << 63)).to_be_bytes());
    want.extend_from_slice(&[0x40, 0, 0xFE, 0xFE, 0xFE, 0xFE, 0x38]);
    assert_eq!(
        partition_key_bytes(&Partitioner::Murmur3, &k).unwrap(),
        want
    );
    assert!(partition_key_bytes(&Partitioner::Local(String::new()), &k).is_none());
    // Random: token as a varint (never fails).
    let r = partition_key_bytes(&Partitioner::Random, b"key1").unwrap();
    assert_eq!(r[0], 0x40);
    assert_eq!(*r.last().unwrap(), 0x38);
    assert_eq!(
        partition_key_bytes(&Partitioner::Random, b"").unwrap(),
        [0x40, 0x7F, 0x40, 0x00, 0x38]
    );
    // The hash byte is the low byte of murmur3's h2 (§10.1 vectors).
    assert_eq!(
        hash_byte(b"key1"),
        (-5370656463727122039i64 as u64 & 0xFF) as u8
    );
}

fn sample_types() -> Vec<Vec<CqlType>> {
    let n = |x| CqlType::Native(x);
    let r = |x| CqlType::Reversed(Box::new(CqlType::Native(x)));
    vec![
        vec![n(Native::Int), n(Native::Text)],
        vec![r(Native::Int), n(Native::Text)],
        vec![n(Native::Bigint), r(Native::Text), n(Native::Uuid)],
        vec![n(Native::Text)],
        vec![
            r(Native::Bigint),
            n(Native::Double),
            n(Native::Boolean),
            n(Native::Timestamp),
        ],
        vec![n(Native::Smallint), n(Native::Blob), r(Native::Float)],
        vec![n(Native::Date), n(Native::Time), n(Native::Tinyint)],
        vec![n(Native::Int), n(Native::Decimal), n(Native::Int)],
    ]
}

/// A random value of the `i`-th supported native type.
fn value_for(t: &CqlType, seed: &[u8]) -> Option<Vec<u8>> {
    let base = match t {
        CqlType::Reversed(x) => &**x,
        x => x,
    };
    let CqlType::Native(n) = base else {
        return None;
    };
    let take = |k: usize| -> Vec<u8> { (0..k).map(|i| *seed.get(i).unwrap_or(&0)).collect() };
    Some(match n {
        Native::Int | Native::Float | Native::Date => take(4),
        Native::Bigint | Native::Double | Native::Timestamp | Native::Time => take(8),
        Native::Smallint => take(2),
        Native::Tinyint => take(1),
        Native::Boolean => vec![seed.first().copied().unwrap_or(0) & 1],
        Native::Uuid => {
            let mut u = take(16);
            u[6] = (u[6] & 0x0F)
                | if seed.len().is_multiple_of(2) {
                    0x10
                } else {
                    0x40
                };
            u
        }
        Native::Text | Native::Blob => seed.iter().copied().take(5).collect(),
        Native::Decimal => take(5),
        _ => return None,
    })
}

fn clustering_strategy() -> impl Strategy<Value = (usize, Vec<(u8, Vec<u8>)>)> {
    (
        0usize..8,
        prop::collection::vec(
            (
                0u8..10,
                prop::collection::vec(
                    prop::sample::select(vec![0u8, 1, 0x7F, 0x80, 0xFF, 0x41]),
                    0..17,
                ),
            ),
            0..4,
        ),
    )
}

/// A clustering prefix of the sample types `ti`: `parts` gives per
/// component a selector (0 null, 1 empty, else a value) and seed bytes.
fn make(types: &[CqlType], parts: &[(u8, Vec<u8>)]) -> Vec<Option<Vec<u8>>> {
    types
        .iter()
        .zip(parts)
        .map(|(t, (sel, seed))| match sel {
            0 => None,
            1 if !matches!(t.unreversed(), CqlType::Native(Native::Text | Native::Blob)) => {
                Some(Vec::new())
            }
            _ => value_for(t, seed),
        })
        .collect()
}

/// True when a `float` / `double` component of `p` is a NaN with the sign bit set.
fn has_negative_nan(types: &[CqlType], p: &ClusteringPrefix<'_>) -> bool {
    types
        .iter()
        .zip(&p.values)
        .any(|(t, v)| match (t.unreversed(), v) {
            (CqlType::Native(Native::Double), Some(b)) if b.len() == 8 => {
                f64::from_be_bytes((*b).try_into().unwrap()).is_nan() && b[0] & 0x80 != 0
            }
            (CqlType::Native(Native::Float), Some(b)) if b.len() == 4 => {
                f32::from_be_bytes((*b).try_into().unwrap()).is_nan() && b[0] & 0x80 != 0
            }
            _ => false,
        })
}

fn prefix(kind: BoundKind, v: &[Option<Vec<u8>>]) -> ClusteringPrefix<'_> {
    ClusteringPrefix {
        kind,
        values: v.iter().map(|x| x.as_deref()).collect(),
    }
}

const KINDS: [BoundKind; 5] = [
    BoundKind::Clustering,
    BoundKind::InclStartBound,
    BoundKind::ExclEndBound,
    BoundKind::InclEndBound,
    BoundKind::ExclStartBound,
];

/// ByteSource.separatorGt: the common prefix, then `prev`'s next byte + 1.
fn separator_gt(prev: &[u8], next: &[u8]) -> Vec<u8> {
    let mut s = Vec::new();
    for (i, &c) in next.iter().enumerate() {
        match prev.get(i) {
            Some(&p) if p == c => s.push(c),
            Some(&p) => {
                s.push(p + 1);
                return s;
            }
            None => {
                s.push(0);
                return s;
            }
        }
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    /// Encodings order like `compare_clustering` and decode back.
    #[test]
    fn clustering_encodings_order_and_roundtrip(
        (ti, a) in clustering_strategy(),
        (_, b) in clustering_strategy(),
        ka in 0usize..5, kb in 0usize..5,
    ) {
        let types = &sample_types()[ti];
        let supported_all = types.iter().all(supported);
        let (va, vb) = (make(types, &a), make(types, &b));
        // A row clustering has every component.
        let kind = |k: usize, v: &[Option<Vec<u8>>]| match KINDS[k] {
            BoundKind::Clustering if v.len() != types.len() => BoundKind::InclStartBound,
            x => x,
        };
        let (ka, kb) = (kind(ka, &va), kind(kb, &vb));
        let (pa, pb) = (prefix(ka, &va), prefix(kb, &vb));
        // The byte-comparable form orders a NaN with the sign bit set first,
        // `Double.compare` last (see `separator_bounds`): not comparable.
        if has_negative_nan(types, &pa) || has_negative_nan(types, &pb) {
            return Ok(());
        }
        let (ea, eb) = (clustering_bytes(types, &pa), clustering_bytes(types, &pb));
        let need = |v: &[Option<Vec<u8>>]| types.iter().zip(v).all(|(t, x)| x.is_none() || supported(t));
        if !need(&va) || !need(&vb) {
            prop_assume!(!supported_all);
            return Ok(());
        }
        let (ea, eb) = (ea.unwrap(), eb.unwrap());
        let c = compare_clustering(types, &pa, &pb);
        let same_values = va == vb;
        if !(same_values && c == Ordering::Equal) {
            prop_assert_eq!(ea.cmp(&eb), c, "{:?} vs {:?}", pa, pb);
        }
        // Decoding stops before a type it does not decode (decimal here).
        let d = decode_prefix(types, &ea);
        prop_assert!(va.starts_with(&d.values), "{:?} vs {:?}", d.values, va);
        if d.values.len() == va.len() {
            prop_assert_eq!(d.terminator, Some(kind_terminator(ka)));
        } else {
            prop_assert!(matches!(types[d.values.len()].unreversed(), CqlType::Native(Native::Decimal)));
        }
    }

    /// The bounds of a separator between two clusterings hold them.
    #[test]
    fn separator_bounds_hold(
        (ti, a) in clustering_strategy(),
        (_, b) in clustering_strategy(),
        (_, x) in clustering_strategy(),
        kx in 0usize..5,
        cut in 0usize..40,
    ) {
        let types = &sample_types()[ti];
        let (va, vb, vx) = (make(types, &a), make(types, &b), make(types, &x));
        let kind = |k: BoundKind, v: &[Option<Vec<u8>>]| match k {
            BoundKind::Clustering if v.len() != types.len() => BoundKind::InclStartBound,
            x => x,
        };
        let pa = prefix(kind(BoundKind::Clustering, &va), &va);
        let pb = prefix(kind(BoundKind::Clustering, &vb), &vb);
        let px = prefix(kind(KINDS[kx], &vx), &vx);
        let (Some(ea), Some(eb), Some(ex)) = (
            clustering_bytes(types, &pa),
            clustering_bytes(types, &pb),
            clustering_bytes(types, &px),
        ) else {
            return Ok(());
        };
        let (lo, hi, elo, ehi) = match ea.cmp(&eb) {
            Ordering::Less => (&pa, &pb, &ea, &eb),
            Ordering::Greater => (&pb, &pa, &eb, &ea),
            Ordering::Equal => return Ok(()),
        };
        // A real separator, and an arbitrary cut of an encoding.
        let mut seps = vec![separator_gt(elo, ehi)];
        seps.push(ex[..cut.min(ex.len())].to_vec());
        for sep in seps {
            let (f, c) = separator_bounds(types, &sep);
            let (f, c) = (f.as_prefix(), c.as_prefix());
            for (p, e) in [(lo, elo), (hi, ehi), (&px, &ex)] {
                // A NaN with the sign bit set sorts first in the
                // byte-comparable form and last for `Double.compare`: no
                // bound holds it in both orders (Java arithmetic never
                // makes one; see `separator_bounds`).
                if has_negative_nan(types, p) {
                    continue;
                }
                if e[..] >= sep[..] {
                    prop_assert!(compare_clustering(types, p, &f) != Ordering::Less,
                        "{:?} >= sep {:02x?} but < floor {:?}", p, sep, f);
                }
                if e[..] <= sep[..] {
                    prop_assert!(compare_clustering(types, p, &c) != Ordering::Greater,
                        "{:?} <= sep {:02x?} but > ceiling {:?}", p, sep, c);
                }
            }
        }
    }
}

#[test]
fn separator_bounds_examples() {
    let n = |x| CqlType::Native(x);
    let types = vec![n(Native::Int), n(Native::Text)];
    let int = |v: i32| Some(v.to_be_bytes().to_vec());
    // A whole int: floor INCL_START(5000), ceiling EXCL_END(5000).
    let (f, c) = separator_bounds(&types, &[0x40, 0x80, 0, 0x13, 0x88]);
    assert_eq!(
        f,
        OwnedClustering {
            kind: BoundKind::InclStartBound,
            values: vec![int(5000)]
        }
    );
    assert_eq!(
        c,
        OwnedClustering {
            kind: BoundKind::ExclEndBound,
            values: vec![int(5000)]
        }
    );
    // Then a cut text ("m"): tightened with it.
    let (f, c) = separator_bounds(&types, &[0x40, 0x80, 0, 0, 0x0b, 0x40, 0x6d]);
    assert_eq!(f.values, vec![int(11), Some(b"m".to_vec())]);
    assert_eq!(c.kind, BoundKind::ExclEndBound);
    // The final entry's nudged marker (0x41 after the int): not an empty
    // value of a text column, so only the int bounds.
    let (f, c) = separator_bounds(&types, &[0x40, 0x80, 0, 0, 0x0b, 0x41]);
    assert_eq!(f.values, vec![int(11)]);
    assert_eq!(
        c,
        OwnedClustering {
            kind: BoundKind::InclEndBound,
            values: vec![int(11)]
        }
    );
    // Empty separator (block 0): everything.
    let (f, c) = separator_bounds(&types, &[]);
    assert_eq!((f.values.len(), c.kind), (0, BoundKind::InclEndBound));
}

// ---------------------------------------------------------------------------
// The doc's worked examples.

fn data_file(dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with("-Data.db"))
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/cassandra")
}

/// The corpus's Cassandra sets, or None when the corpus is absent.
fn corpus() -> Option<PathBuf> {
    crate::test_support::root().map(|r| r.join("cassandra"))
}
