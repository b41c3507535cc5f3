//! The trie readers on real files: the format doc's worked examples, then
//! the fixtures and corpus sets (every key found, absent keys not,
//! enumeration in Data.db order, row-index entries on block starts, the
//! key encodings against Cassandra's).

use super::*;

#[test]
fn doc_example_legacy_da_simple() {
    let Some(p) = corpus().and_then(|c| data_file(&c.join("legacy_da_simple"))) else {
        eprintln!("corpus legacy_da_simple absent: skipped");
        return;
    };
    let sst = Sstable::open_path(&p).unwrap();
    let b = sst.read_component(Component::Partitions).unwrap();
    let f = PartitionsFooter::decode(&b, b.len() as u64).unwrap();
    assert_eq!(
        (f.key_count, f.first_key.as_slice(), f.last_key.as_slice()),
        (5, &b"0"[..], &b"4"[..])
    );
    let mut src = SliceSource::new(&b, Component::Partitions);
    // Root: SINGLE_NOPAYLOAD_4, transition 0x40, to a DENSE_12 over '0'..'4'.
    let root = read_node(&mut src, f.root).unwrap();
    assert_eq!(&b[f.root as usize..f.root as usize + 2], &[0x1B, 0x40]);
    assert_eq!(root.node_type, NodeType::SingleNoPayload4);
    let dense = read_node(&mut src, root.children()[0].1).unwrap();
    assert_eq!(dense.node_type, NodeType::Dense12);
    let trans: Vec<u8> = dense.children().iter().map(|c| c.0).collect();
    assert_eq!(trans, b"01234");
    // Leaves 08 09 FF (hash 09, ~(-1) = 0) and 08 37 E9 (hash 37, ~(-23) = 22).
    let mut got = Vec::new();
    for_each_entry(&mut src, f.root, &mut |e| {
        got.push((e.prefix, e.payload));
        Ok(true)
    })
    .unwrap();
    assert_eq!(got.len(), 5);
    assert_eq!(
        got[0].1,
        PartitionPayload {
            hash: Some(0x09),
            position: PartitionPosition::Data(0)
        }
    );
    assert_eq!(
        got[1].1,
        PartitionPayload {
            hash: Some(0x37),
            position: PartitionPosition::Data(22)
        }
    );
    for (i, (prefix, p)) in got.iter().enumerate() {
        let key = [b'0' + i as u8];
        assert_eq!(prefix, &[0x40, key[0]]);
        assert_eq!(p.hash, Some(hash_byte(&key)));
    }
}

#[test]
fn doc_example_legacy_da_clust() {
    let Some(p) = corpus().and_then(|c| data_file(&c.join("legacy_da_clust"))) else {
        eprintln!("corpus legacy_da_clust absent: skipped");
        return;
    };
    let sst = Sstable::open_path(&p).unwrap();
    let b = sst.read_component(Component::Rows).unwrap();
    let mut src = SliceSource::new(&b, Component::Rows);
    // Entry at 93: 0001 30 | 00 | 0D (-7: root 96 - 7 = 89) | 0D | 80.
    assert_eq!(&b[93..100], &[0x00, 0x01, 0x30, 0x00, 0x0D, 0x0D, 0x80]);
    let e = RowsEntry::read(&mut src, 93, Flavor::Cassandra).unwrap();
    assert_eq!(
        (
            e.key.as_slice(),
            e.data_position,
            e.root,
            e.block_count,
            e.deletion.is_live(),
            e.len
        ),
        (&b"0"[..], 0, 89, 13, true, 7)
    );
    // Root 21 40 0E 04: SINGLE_8, payload flags 1, transition 0x40, child
    // 89 - 14, payload offset 4.
    let root = read_node(&mut src, 89).unwrap();
    assert_eq!(root.node_type, NodeType::Single8);
    assert_eq!(
        (root.payload_flags, root.children()),
        (1, &[(0x40, 75)][..])
    );
    let t = row_trie_entries(&mut src, e.root, Flavor::Cassandra).unwrap();
    assert_eq!(t.len(), 14, "13 blocks and the end of the partition");
    assert_eq!(
        (t[0].separator.as_slice(), t[0].payload.offset),
        (&[][..], 4)
    );
}

// ---------------------------------------------------------------------------
// Fixtures and corpus.

fn open(p: &Path) -> (Sstable, SerializationHeader, Partitioner) {
    let sst = Sstable::open_path(p).unwrap();
    let b = sst.read_component(Component::Statistics).unwrap();
    let st = Statistics::parse_lenient(&b, sst.features()).unwrap();
    let part = Partitioner::parse(&st.validation.unwrap().partitioner).unwrap();
    (sst, st.header.unwrap(), part)
}

/// A partition from a Data.db scan: key, start, and its unfiltereds
/// (offset from the start, clustering), the END_OF_PARTITION offset.
struct Scanned {
    key: Vec<u8>,
    pos: u64,
    items: Vec<(u64, OwnedClustering, Option<Option<DeletionTime>>)>,
    eop: u64,
}

fn scan(sst: &Sstable, h: &SerializationHeader) -> Vec<Scanned> {
    let mut r = ScanReader::new(sst, h).unwrap();
    let mut out: Vec<Scanned> = Vec::new();
    while let Some(f) = r.next_fragment().unwrap() {
        match f {
            Fragment::PartitionStart { key, position, .. } => out.push(Scanned {
                key: key.to_vec(),
                pos: position.0,
                items: Vec::new(),
                eop: 0,
            }),
            Fragment::StaticRow(_) => {}
            Fragment::Row(row) => {
                let p = out.last_mut().unwrap();
                p.items.push((
                    row.position.0 - p.pos,
                    OwnedClustering::of(&row.clustering),
                    None,
                ));
            }
            Fragment::Marker(m) => {
                let p = out.last_mut().unwrap();
                p.items.push((
                    m.position.0 - p.pos,
                    OwnedClustering::of(&m.bound),
                    Some(m.open_deletion()),
                ));
            }
            Fragment::PartitionEnd { position } => {
                let p = out.last_mut().unwrap();
                p.eop = position.0 - p.pos;
            }
        }
    }
    out
}

/// The `da` sstables the trie tests walk: every `da` fixture first, then the
/// corpus's `da` sets when the corpus is present.
struct BtiSstables {
    all: Vec<PathBuf>,
    /// How many of `all` are fixtures (the first ones).
    fixtures: usize,
    /// The corpus is present: thresholds that count its items apply.
    corpus: bool,
}

fn bti_sstables() -> BtiSstables {
    let mut v: Vec<PathBuf> = std::fs::read_dir(fixtures())
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.sort();
    let mut all: Vec<PathBuf> = v
        .iter()
        .filter(|d| {
            d.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("da_"))
        })
        .filter_map(|d| data_file(d))
        .collect();
    let fixtures = all.len();
    let corpus = corpus();
    if let Some(c) = &corpus {
        for s in [
            "legacy_da_simple",
            "legacy_da_clust",
            "legacy_da_simple_counter",
            "legacy_da_clust_counter",
        ] {
            match data_file(&c.join(s)) {
                Some(p) => all.push(p),
                None => eprintln!("corpus set {s} absent: skipped"),
            }
        }
    }
    BtiSstables {
        all,
        fixtures,
        corpus: corpus.is_some(),
    }
}

#[test]
fn every_key_is_found_and_absent_keys_are_not() {
    let set = bti_sstables();
    assert!(set.fixtures >= 13, "{:?}", set.all);
    let ssts = set.all;
    let (mut found, mut absent, mut rows_parts) = (0, 0, 0);
    for p in &ssts {
        let (sst, h, part) = open(p);
        let parts = scan(&sst, &h);
        let keys: HashSet<Vec<u8>> = parts.iter().map(|x| x.key.clone()).collect();
        let mut idx = BtiIndex::open(&sst, part.clone(), &h.clustering_types).unwrap();
        assert_eq!(
            idx.footer().key_count,
            parts.len() as u64,
            "{}",
            p.display()
        );
        for (i, x) in parts.iter().enumerate() {
            let f = idx.lookup(&x.key).unwrap();
            let f = f.unwrap_or_else(|| panic!("{} key {:02x?} not found", p.display(), x.key));
            assert_eq!(f.data_position(), x.pos, "{}", p.display());
            match &f {
                Found::Data { next, .. } => {
                    assert_eq!(*next, parts.get(i + 1).map(|n| n.pos), "{}", p.display())
                }
                Found::Rows(e) => {
                    rows_parts += 1;
                    assert_eq!(e.key, x.key);
                }
            }
            found += 1;
            // Absent neighbours: longer, shorter, changed.
            let mut cands = vec![
                [x.key.as_slice(), &[0]].concat(),
                x.key[..x.key.len().saturating_sub(1)].to_vec(),
            ];
            let mut c = x.key.clone();
            if let Some(l) = c.last_mut() {
                *l ^= 0x55;
            }
            cands.push(c);
            for k in cands {
                if keys.contains(&k) {
                    continue;
                }
                assert_eq!(
                    idx.lookup(&k).unwrap(),
                    None,
                    "{} key {k:02x?}",
                    p.display()
                );
                assert!(idx.last_absence().is_some());
                absent += 1;
            }
        }
    }
    eprintln!("{} sstables: {found} keys found ({rows_parts} through Rows.db), {absent} absent keys rejected", ssts.len());
    assert!(found > 700 && absent > 1500, "{found} {absent}");
}

#[test]
fn hash_collisions_are_rejected_by_the_key() {
    // Keys that pass the trie walk and the hash byte but are not in the
    // sstable must come back absent, not as another partition.
    let Some(p) = data_file(&fixtures().join("da_all_types")) else {
        return;
    };
    let (sst, h, part) = open(&p);
    let parts = scan(&sst, &h);
    let keys: HashSet<Vec<u8>> = parts.iter().map(|x| x.key.clone()).collect();
    let b = sst.read_component(Component::Partitions).unwrap();
    let footer = PartitionsFooter::decode(&b, b.len() as u64).unwrap();
    let mut src = SliceSource::new(&b, Component::Partitions);
    let mut idx = BtiIndex::open(&sst, part.clone(), &h.clustering_types).unwrap();
    let mut collisions = 0;
    for i in 0u32..200_000 {
        let k = i.to_be_bytes().to_vec();
        if keys.contains(&k) {
            continue;
        }
        let bc = partition_key_bytes(&part, &k).unwrap();
        if let Candidate::Found { .. } =
            exact_candidate(&mut src, footer.root, &bc, hash_byte(&k), false).unwrap()
        {
            collisions += 1;
            // The filter may already say no; without it the key check does.
            assert_eq!(idx.lookup(&k).unwrap(), None);
        }
        if collisions >= 20 {
            break;
        }
    }
    assert!(collisions >= 20, "only {collisions} trie+hash collisions");
}

#[test]
fn enumeration_is_in_data_order() {
    for p in bti_sstables().all {
        let (sst, h, _) = open(&p);
        let parts = scan(&sst, &h);
        let pb = sst.read_component(Component::Partitions).unwrap();
        let rb = sst.read_component(Component::Rows).unwrap();
        let footer = PartitionsFooter::decode(&pb, pb.len() as u64).unwrap();
        let mut src = SliceSource::new(&pb, Component::Partitions);
        let mut rows = SliceSource::new(&rb, Component::Rows);
        let mut got = Vec::new();
        for_each_entry(&mut src, footer.root, &mut |e| {
            got.push(match e.payload.position {
                PartitionPosition::Data(d) => d,
                PartitionPosition::Rows(o) => {
                    RowsEntry::read(&mut rows, o, Flavor::Cassandra)
                        .unwrap()
                        .data_position
                }
            });
            Ok(true)
        })
        .unwrap();
        let want: Vec<u64> = parts.iter().map(|x| x.pos).collect();
        assert_eq!(got, want, "{}", p.display());
    }
}

#[test]
fn row_indexes_agree_with_block_starts() {
    let (mut checked, mut blocks, mut opens) = (0, 0, 0);
    // The counts after the fixtures, which have their own threshold.
    let mut of_fixtures = (0, 0, 0);
    let set = bti_sstables();
    for (n, p) in set.all.iter().enumerate() {
        if n == set.fixtures {
            of_fixtures = (checked, blocks, opens);
        }
        let (sst, h, part) = open(p);
        let types = &h.clustering_types;
        let parts = scan(&sst, &h);
        let mut idx = BtiIndex::open(&sst, part.clone(), types).unwrap();
        let flavor = Flavor::Cassandra;
        for x in &parts {
            let Some(Found::Rows(e)) = idx.lookup(&x.key).unwrap() else {
                continue;
            };
            let mut ri = BtiRowIndex::load(&sst, e, Rc::from(types.as_slice()), flavor).unwrap();
            let t = ri.entries().to_vec();
            checked += 1;
            assert_eq!(
                t.len() as u64,
                ri.entry().block_count + 1,
                "{}",
                p.display()
            );
            // Block starts are unfiltered starts; the last entry is the EOP byte.
            let starts: Vec<u64> = x.items.iter().map(|i| i.0).collect();
            assert_eq!(t[0].payload.offset, starts[0]);
            assert_eq!(t[t.len() - 1].payload.offset, x.eop, "{}", p.display());
            for (i, w) in t.windows(2).enumerate() {
                blocks += 1;
                let (s, e) = (w[0].payload.offset, w[1].payload.offset);
                assert!(starts.contains(&s), "{} block {i} at {s}", p.display());
                let inside: Vec<&OwnedClustering> = x
                    .items
                    .iter()
                    .filter(|it| it.0 >= s && it.0 < e)
                    .map(|it| &it.1)
                    .collect();
                assert!(!inside.is_empty());
                let b = ri.block(&sst, i).unwrap();
                assert_eq!(b.offset, s);
                let (first, last) = (inside[0].as_prefix(), inside[inside.len() - 1].as_prefix());
                assert_ne!(
                    compare_clustering(types, &first, &b.first.as_prefix()),
                    Ordering::Less,
                    "{} block {i}: first {first:?} < floor {:?}",
                    p.display(),
                    b.first
                );
                assert_ne!(
                    compare_clustering(types, &last, &b.last.as_prefix()),
                    Ordering::Greater,
                    "{} block {i}: last {last:?} > ceiling {:?}",
                    p.display(),
                    b.last
                );
                // The trie floor of each clustering in the block is this block.
                for c in &inside {
                    if c.kind == BoundKind::Clustering {
                        assert_eq!(ri.floor_block(&sst, &c.as_prefix()).unwrap(), Some(i));
                    }
                }
            }
            // Open markers: the deletion open at each block start.
            for (k, te) in t.iter().enumerate() {
                let open = x
                    .items
                    .iter()
                    .rev()
                    .filter(|it| it.0 < te.payload.offset)
                    .find_map(|it| it.2)
                    .flatten();
                assert_eq!(te.payload.open, open, "{} entry {k}", p.display());
                if open.is_some() {
                    opens += 1;
                }
            }
        }
    }
    if set.fixtures == set.all.len() {
        of_fixtures = (checked, blocks, opens);
    }
    eprintln!("{checked} row indexes, {blocks} blocks checked, {opens} open markers");
    let (fc, fb, fo) = of_fixtures;
    assert!(fc >= 9 && fb > 1100 && fo > 0, "fixtures: {fc} {fb} {fo}");
    if set.corpus {
        let (cc, cb) = (checked - fc, blocks - fb);
        assert!(cc >= 10 && cb >= 100, "corpus: {cc} {cb}");
    }
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

/// Cassandra's own byte-comparable forms (`asComparableBytes`, OSS50) of
/// generated values of every key type, nested and reversed ones included
/// (`fixtures/bti-index/comparable-oss50.tsv`, made by
/// `GenComparable.java`): sstkit encodes each value to the same bytes.
#[test]
fn encodings_match_cassandra() {
    let p =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/bti-index/comparable-oss50.tsv");
    let text = std::fs::read_to_string(&p).unwrap();
    let mut n = 0;
    let mut types_seen = HashSet::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let t = CqlType::parse(f[0]).unwrap();
        let v = unhex(f[1]);
        let mut out = Vec::new();
        let got = encode_value(&mut out, &t, &v);
        let want = match f[2] {
            "null" => Some(false),
            _ => Some(true),
        };
        assert_eq!(got, want, "{} {}", f[0], f[1]);
        if f[2] != "null" {
            assert_eq!(hex(&out), f[2], "{} {}", f[0], f[1]);
        }
        types_seen.insert(f[0]);
        n += 1;
    }
    assert!(
        n > 1000 && types_seen.len() > 40,
        "{n} values, {} types",
        types_seen.len()
    );
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// True for a float/double value that is a NaN with the sign bit set (the
/// byte-comparable form puts it first, `Float.compare` last).
fn negative_nan(t: &CqlType, v: &[u8]) -> bool {
    let c = ClusteringPrefix {
        kind: BoundKind::Clustering,
        values: vec![Some(v)],
    };
    has_negative_nan(std::slice::from_ref(t), &c)
}

/// Every pair of same-typed values of the Cassandra vectors: the encodings
/// (as one-component clusterings: markers and terminator) order like
/// `compare_value`.
#[test]
fn encodings_order_like_compare_for_every_type() {
    use crate::compare::compare_value;
    let p =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/bti-index/comparable-oss50.tsv");
    let text = std::fs::read_to_string(&p).unwrap();
    let mut by_type: BTreeMap<&str, Vec<Vec<u8>>> = BTreeMap::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        by_type.entry(f[0]).or_default().push(unhex(f[1]));
    }
    let mut pairs = 0;
    for (name, values) in &by_type {
        let t = CqlType::parse(name).unwrap();
        // Durations have no order (they are never keys); C* encodes their bytes.
        if matches!(t.unreversed(), CqlType::Native(Native::Duration)) {
            continue;
        }
        let values: Vec<&Vec<u8>> = values.iter().filter(|v| !negative_nan(&t, v)).collect();
        let enc = |v: &[u8]| {
            let mut b = Vec::new();
            encode_component(&mut b, &t, v).unwrap();
            b.push(TERMINATOR);
            b
        };
        for a in &values {
            for b in &values {
                let (ea, eb) = (enc(a), enc(b));
                assert_eq!(
                    ea.cmp(&eb),
                    compare_value(&t, a, b),
                    "{name}: {a:02x?} vs {b:02x?}"
                );
                pairs += 1;
            }
        }
    }
    assert!(pairs > 10_000, "{pairs}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// varint, decimal and timeuuid values of random bytes: the encodings
    /// order like `compare_value`.
    #[test]
    fn numeric_encodings_order_like_compare(
        which in 0usize..3,
        a in prop::collection::vec(prop::sample::select(vec![0u8, 1, 9, 0x7F, 0x80, 0xFF, 0x63, 0x64]), 1..24),
        b in prop::collection::vec(prop::sample::select(vec![0u8, 1, 9, 0x7F, 0x80, 0xFF, 0x63, 0x64]), 1..24),
        sa in -40i32..40, sb in -40i32..40,
    ) {
        use crate::compare::compare_value;
        let (t, va, vb) = match which {
            0 => (Native::Varint, a, b),
            1 => {
                let mk = |s: i32, v: Vec<u8>| [s.to_be_bytes().to_vec(), v].concat();
                (Native::Decimal, mk(sa, a), mk(sb, b))
            }
            _ => {
                let mk = |v: Vec<u8>| {
                    let mut u: Vec<u8> = v.iter().cycle().take(16).copied().collect();
                    u[6] = (u[6] & 0x0F) | 0x10;
                    u
                };
                (Native::Timeuuid, mk(a), mk(b))
            }
        };
        for t in [CqlType::Native(t), CqlType::Reversed(Box::new(CqlType::Native(t)))] {
            let enc = |v: &[u8]| {
                let mut b = Vec::new();
                encode_component(&mut b, &t, v).unwrap();
                b.push(TERMINATOR);
                b
            };
            prop_assert_eq!(enc(&va).cmp(&enc(&vb)), compare_value(&t, &va, &vb), "{:?} {:02x?} {:02x?}", t, va, vb);
        }
    }
}
