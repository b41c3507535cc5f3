//! Index.db (BIG format): one entry per partition, in Data.db order.
//!
//! Row format (`ma`+), `shared/docs/sstable-format.md` §4.1; C\*
//! `o.a.c/io/sstable/format/big/RowIndexEntry.java` (`Serializer`):
//!
//! | field | encoding | notes |
//! |---|---|---|
//! | key | short-bytes | serialized partition key |
//! | position | uvint | partition start in (uncompressed) Data.db |
//! | promoted_size | uvint | 0: no promoted index |
//! | promoted | `promoted_size` bytes | [`PromotedIndex`] (§4.1–4.2) |
//!
//! Legacy `ka`/`la` (§4.3; C\* 2.1 `RowIndexEntry.Serializer`, Scylla
//! `sstables/index_reader.hh`):
//!
//! | field | encoding |
//! |---|---|
//! | key | short-bytes |
//! | position | i64 |
//! | promoted_size | i32 |
//! | promoted | `promoted_size` bytes (legacy layout, [`PromotedIndex`]) |
//!
//! [`IndexReader`] walks a byte buffer holding Index.db (or any part of it
//! starting at an entry, e.g. from a Summary.db position) one entry at a
//! time, borrowing keys and promoted indexes from the buffer.

mod promoted;
mod stream;

pub use stream::for_each_entry;
pub(crate) use stream::is_truncation;

pub use promoted::{decode_index_info, IndexInfo, IndexName, PromotedIndex, WIDTH_BASE};

use crate::component::Component;
use crate::cur::Cur;
use crate::error::Result;
use crate::version::Features;

/// One Index.db entry.
#[derive(Debug, Clone)]
pub struct IndexEntry<'a> {
    /// The serialized partition key.
    pub key: &'a [u8],
    /// Partition start in (uncompressed) Data.db.
    pub position: u64,
    /// The promoted index, when the partition has one.
    pub promoted: Option<PromotedIndex<'a>>,
    /// Absolute offset of this entry in Index.db.
    pub offset: u64,
    /// Serialized length of the entry in bytes.
    pub len: u64,
}

/// Streaming decoder over Index.db bytes. After an error it returns
/// `Ok(None)` forever (fused), so a caller that logs and continues cannot loop.
#[derive(Debug, Clone)]
pub struct IndexReader<'a> {
    cur: Cur<'a>,
    features: Features,
    failed: bool,
}

impl<'a> IndexReader<'a> {
    /// A reader over a whole Index.db.
    pub fn new(buf: &'a [u8], features: Features) -> Self {
        Self::at(buf, 0, features)
    }

    /// A reader over bytes whose first byte is at absolute offset `base` of
    /// Index.db (which must be an entry boundary, e.g. a summary position).
    pub fn at(buf: &'a [u8], base: u64, features: Features) -> Self {
        IndexReader {
            cur: Cur::new(buf, Component::Index, base),
            features,
            failed: false,
        }
    }

    /// Absolute offset of the next entry.
    pub fn offset(&self) -> u64 {
        self.cur.abs_offset()
    }

    /// True when every byte was consumed without error.
    pub fn is_done(&self) -> bool {
        !self.failed && self.cur.is_empty()
    }

    /// The next entry; `Ok(None)` at the end of the buffer (or after an error).
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<IndexEntry<'a>>> {
        if self.failed || self.cur.is_empty() {
            return Ok(None);
        }
        match self.decode() {
            Ok(e) => Ok(Some(e)),
            Err(e) => {
                self.failed = true;
                Err(e)
            }
        }
    }

    fn decode(&mut self) -> Result<IndexEntry<'a>> {
        let start = self.cur.abs_offset();
        let key = self.cur.short_bytes("index entry key")?;
        let (position, promoted) = if self.features.legacy_cells {
            let at = self.cur.clone();
            let position = self.cur.i64("index entry position")?;
            if position < 0 {
                return Err(at.bad(
                    "index entry position",
                    format!("negative position {position}"),
                ));
            }
            let at = self.cur.clone();
            let size = self.cur.i32("promoted index size")?;
            if size < 0 {
                return Err(at.bad("promoted index size", format!("negative size {size}")));
            }
            let promoted = if size > 0 {
                let sub = self.cur.split(size as u64, "promoted index")?;
                Some(PromotedIndex::parse_legacy(sub, self.features)?)
            } else {
                None
            };
            (position as u64, promoted)
        } else {
            let position = self.cur.uvint("index entry position")?;
            let size = self.cur.uvint("promoted index size")?;
            let promoted = if size > 0 {
                let sub = self.cur.split(size, "promoted index")?;
                Some(PromotedIndex::parse(sub, self.features)?)
            } else {
                None
            };
            (position, promoted)
        };
        let len = self.cur.abs_offset() - start;
        Ok(IndexEntry {
            key,
            position,
            promoted,
            offset: start,
            len,
        })
    }

    /// An iterator adapter yielding `Result<IndexEntry>` until the end or the
    /// first error (which is yielded once).
    pub fn entries(self) -> Entries<'a> {
        Entries(self)
    }
}

/// Iterator over the entries of an [`IndexReader`].
#[derive(Debug, Clone)]
pub struct Entries<'a>(IndexReader<'a>);

impl<'a> Iterator for Entries<'a> {
    type Item = Result<IndexEntry<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().transpose()
    }
}

impl std::iter::FusedIterator for Entries<'_> {}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::clustering::BoundKind;
    use crate::cur::write_uvint;
    use crate::deletion::DeletionTime;
    use crate::test_support as corpus;
    use crate::version::Version;
    use proptest::prelude::*;
    use std::cmp::Ordering;

    fn feats(v: &str) -> Features {
        Version::parse(v).unwrap().features()
    }

    /// A row-format entry with `blocks` single-int-clustering blocks.
    fn modern_entry(
        key: &[u8],
        pos: u64,
        blocks: &[(i32, i32, u64, u64)],
        f: &Features,
    ) -> Vec<u8> {
        let mut pi = Vec::new();
        if !blocks.is_empty() {
            write_uvint(&mut pi, 15);
            DeletionTime::LIVE.encode(f, &mut pi);
            write_uvint(&mut pi, blocks.len() as u64);
            let mut infos = Vec::new();
            let mut offsets = Vec::new();
            for &(a, b, off, width) in blocks {
                offsets.push(infos.len() as u32);
                for v in [a, b] {
                    infos.push(4);
                    infos.push(0);
                    infos.extend_from_slice(&v.to_be_bytes());
                }
                write_uvint(&mut infos, off);
                let d = width as i64 - WIDTH_BASE;
                write_uvint(&mut infos, ((d << 1) ^ (d >> 63)) as u64);
                infos.push(0);
            }
            pi.extend_from_slice(&infos);
            for o in offsets {
                pi.extend_from_slice(&o.to_be_bytes());
            }
        }
        let mut out = Vec::new();
        out.extend_from_slice(&(key.len() as u16).to_be_bytes());
        out.extend_from_slice(key);
        write_uvint(&mut out, pos);
        write_uvint(&mut out, pi.len() as u64);
        out.extend_from_slice(&pi);
        out
    }

    #[test]
    fn modern_entries_and_promoted_index() {
        let f = feats("nb");
        let mut buf = modern_entry(b"a", 0, &[], &f);
        buf.extend(modern_entry(
            b"b",
            100,
            &[(1, 5, 15, 70000), (6, 9, 70015, 100)],
            &f,
        ));
        let mut r = IndexReader::new(&buf, f);
        let e = r.next().unwrap().unwrap();
        assert_eq!((e.key, e.position, e.offset), (&b"a"[..], 0, 0));
        assert!(e.promoted.is_none());
        let e = r.next().unwrap().unwrap();
        assert_eq!((e.key, e.position), (&b"b"[..], 100));
        let pi = e.promoted.unwrap();
        assert_eq!(pi.header_length, Some(15));
        assert!(pi.deletion.is_live());
        assert_eq!(pi.block_count, 2);
        let fixed = [Some(4)];
        let blocks = pi.blocks(&fixed).unwrap();
        assert_eq!(blocks[1].offset, 70015);
        assert_eq!(blocks[0].width, 70000);
        assert_eq!(blocks[1].width, 100);
        let first = blocks[1].first_name.as_prefix().unwrap();
        assert_eq!(first.kind, BoundKind::Clustering);
        assert_eq!(first.values, vec![Some(&[0, 0, 0, 6][..])]);
        assert_eq!(pi.block(1, &fixed).unwrap(), blocks[1]);
        assert!(pi.block(2, &fixed).is_err());
        // floor: target clustering 7 -> block 1; target 0 -> none.
        let cmp_to = |t: i32| {
            move |n: &IndexName<'_>| {
                let v = n.as_prefix().unwrap().values[0].unwrap();
                i32::from_be_bytes(v.try_into().unwrap()).cmp(&t)
            }
        };
        assert_eq!(pi.floor_block(&fixed, cmp_to(7)).unwrap(), Some(1));
        assert_eq!(pi.floor_block(&fixed, cmp_to(5)).unwrap(), Some(0));
        assert_eq!(pi.floor_block(&fixed, cmp_to(0)).unwrap(), None);
        assert!(r.next().unwrap().is_none());
        assert!(r.is_done());
        assert_eq!(r.offset(), buf.len() as u64);
    }

    #[test]
    fn oa_promoted_index_uses_one_byte_live() {
        let f = feats("oa");
        let buf = modern_entry(b"k", 7, &[(1, 2, 4, 10), (3, 4, 14, 10)], &f);
        let e = IndexReader::new(&buf, f).next().unwrap().unwrap();
        let pi = e.promoted.unwrap();
        assert!(pi.deletion.is_live());
        assert_eq!(pi.blocks(&[Some(4)]).unwrap().len(), 2);
    }

    #[test]
    fn bad_offsets_array_is_an_error() {
        let f = feats("mc");
        let mut buf = modern_entry(b"k", 7, &[(1, 2, 4, 10), (3, 4, 14, 10)], &f);
        // The last 4 bytes are offsets[1]; point it one byte off.
        let n = buf.len();
        buf[n - 1] += 1;
        let e = IndexReader::new(&buf, f).next().unwrap().unwrap();
        let err = e.promoted.unwrap().blocks(&[Some(4)]).unwrap_err();
        assert!(err.to_string().contains("offsets[1]"), "{err}");
        // offsets[0] != 0 is caught at parse time.
        let mut buf = modern_entry(b"k", 7, &[(1, 2, 4, 10), (3, 4, 14, 10)], &f);
        let n = buf.len();
        buf[n - 5] = 1;
        assert!(IndexReader::new(&buf, f).next().is_err());
    }

    #[test]
    fn legacy_entry() {
        // Layout from legacy_ka_indexed (§4.3): key, i64 position, i32 size,
        // LIVE, i32 count, (short name, short name, i64 offset, i64 width).
        let mut pi = Vec::new();
        DeletionTime::LIVE.encode_legacy(&mut pi);
        pi.extend_from_slice(&1i32.to_be_bytes());
        for name in [&b"first"[..], b"last"] {
            pi.extend_from_slice(&(name.len() as u16).to_be_bytes());
            pi.extend_from_slice(name);
        }
        pi.extend_from_slice(&0i64.to_be_bytes());
        pi.extend_from_slice(&754i64.to_be_bytes());
        let mut buf = vec![0, 4, 0, 0, 0, 1];
        buf.extend_from_slice(&9i64.to_be_bytes());
        buf.extend_from_slice(&(pi.len() as i32).to_be_bytes());
        buf.extend_from_slice(&pi);
        let mut r = IndexReader::new(&buf, feats("ka"));
        let e = r.next().unwrap().unwrap();
        assert_eq!(e.position, 9);
        let pi = e.promoted.unwrap();
        assert!(pi.is_legacy());
        assert_eq!(pi.header_length, None);
        let b = pi.blocks(&[]).unwrap();
        assert_eq!(b[0].first_name.as_legacy(), Some(&b"first"[..]));
        assert_eq!(b[0].width, 754);
        assert_eq!(pi.block(0, &[]).unwrap(), b[0]);
        assert!(r.next().unwrap().is_none());
    }

    #[test]
    fn fused_after_error() {
        let buf = [0, 5, b'a'];
        let mut r = IndexReader::at(&buf, 1000, feats("me"));
        let e = r.next().unwrap_err();
        assert_eq!(e.offset, Some(1002));
        assert!(r.next().unwrap().is_none());
        assert!(!r.is_done());
        assert_eq!(IndexReader::new(&buf, feats("me")).entries().count(), 1);
    }

    proptest! {
        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            for v in ["ka", "mc", "oa"] {
                let mut r = IndexReader::new(&bytes, feats(v));
                let mut n = 0;
                while let Ok(Some(e)) = r.next() {
                    if let Some(pi) = e.promoted {
                        let _ = pi.blocks(&[None, Some(4)]);
                        let _ = pi.block(1, &[None]);
                    }
                    n += 1;
                    prop_assert!(n <= bytes.len());
                }
            }
        }
    }

    /// Truncating a real index at every length errors or stops cleanly.
    #[test]
    fn truncated_real_index_never_panics() {
        let files = corpus::files(|c| c == "Index.db");
        let Some(f) = files.iter().find(|f| f.set.ends_with("legacy_nb_clust")) else {
            return;
        };
        let bytes = f.read();
        for len in (0..bytes.len().min(4000)).chain([bytes.len() - 1]) {
            let mut r = IndexReader::new(&bytes[..len], f.features());
            while let Ok(Some(e)) = r.next() {
                if let Some(pi) = e.promoted {
                    let _ = pi.blocks(&[None]);
                }
            }
        }
    }

    /// Every Index.db of the corpus decodes to its last byte, keys ascend in
    /// partitioner order, positions ascend, and every promoted index's offsets
    /// array matches the positions of its IndexInfo blocks.
    #[test]
    fn corpus_index_files() {
        let files = corpus::files(|c| c == "Index.db");
        if files.is_empty() {
            return;
        }
        let (mut row, mut legacy, mut corrupt_err, mut promoted, mut blocks_total) =
            (0, 0, 0, 0, 0);
        let mut ordered_by = std::collections::BTreeMap::new();
        let mut with_pi_sets = std::collections::BTreeSet::new();
        let mut failures = Vec::new();
        let mut failed = std::collections::BTreeSet::new();
        for f in &files {
            let bytes = f.read();
            let feats = f.features();
            let fixed = f.clustering_fixed().unwrap_or_default();
            let part = f.partitioner();
            if let Some(p) = &part {
                *ordered_by.entry(p.name()).or_insert(0) += 1;
            }
            let mut r = IndexReader::new(&bytes, feats);
            let mut prev: Option<(Vec<u8>, u64)> = None;
            let mut problem: Option<String> = None;
            loop {
                let e = match r.next() {
                    Ok(Some(e)) => e,
                    Ok(None) => break,
                    Err(e) => {
                        problem = Some(e.to_string());
                        break;
                    }
                };
                if let Some((pk, ppos)) = &prev {
                    let ord = part.as_ref().map(|p| p.compare_decorated(pk, e.key));
                    if ord.is_some_and(|o| o != Ordering::Less) || *ppos >= e.position {
                        problem = Some(format!("entry at {} out of order", e.offset));
                        break;
                    }
                }
                if let Some(pi) = &e.promoted {
                    promoted += 1;
                    with_pi_sets.insert(f.set.clone());
                    match pi.blocks(&fixed) {
                        Ok(bs) => {
                            blocks_total += bs.len();
                            if let (Some(h), Some(b0)) = (pi.header_length, bs.first()) {
                                if b0.offset != h {
                                    problem = Some(format!(
                                        "entry at {}: block 0 offset {} != header length {h}",
                                        e.offset, b0.offset
                                    ));
                                }
                            }
                            // NOTE: non-decreasing only: the ka/la files of
                            // scylladb/promoted_index_read have a zero-width
                            // block (a lone range tombstone) followed by a block
                            // at the same offset.
                            if bs.windows(2).any(|w| w[0].offset > w[1].offset) {
                                problem = Some(format!("entry at {}: block offsets", e.offset));
                            }
                            if let Some(last) = bs.len().checked_sub(1) {
                                assert_eq!(pi.block(last, &fixed).as_ref().ok(), bs.last());
                            }
                        }
                        Err(err) => problem = Some(err.to_string()),
                    }
                }
                prev = Some((e.key.to_vec(), e.position));
                if problem.is_some() {
                    break;
                }
            }
            if problem.is_none() && !r.is_done() {
                problem = Some("did not reach the end".into());
            }
            match (problem, f.is_corrupt()) {
                (None, _) if f.features().legacy_cells => legacy += 1,
                (None, _) => row += 1,
                (Some(p), true) => {
                    eprintln!("expected error in corrupt set: {}: {p}", f.path.display());
                    corrupt_err += 1;
                    failed.insert(corpus::short_name(f));
                }
                (Some(p), false) => failures.push(format!("{}: {p}", f.path.display())),
            }
        }
        eprintln!(
            "Index.db: {row} ma..oa + {legacy} ka/la decoded to the end, {corrupt_err} corrupt-set \
             errors, of {} files; {promoted} promoted indexes, {blocks_total} blocks, offsets \
             arrays consistent; key order checked per partitioner {ordered_by:?}",
            files.len()
        );
        assert!(ordered_by.get("RandomPartitioner").is_some_and(|n| *n > 0));
        assert!(failures.is_empty(), "{failures:#?}");
        // The files MANIFEST.md marks corrupt that this check must reject.
        corpus::check_failures(
            "Index.db",
            &files,
            &failed,
            &["empty_index/mc-36-big-Index.db"],
        );
        for want in [
            "cassandra/legacy_nb_clust",
            "cassandra/legacy_oa_clust",
            "scylladb/large_partition",
            "scylladb/3.x-uncompressed-skip_using_index_rows",
        ] {
            assert!(
                with_pi_sets.contains(want),
                "no promoted index checked in {want}"
            );
        }
    }
}
