//! The partition starts the index knows (Index.db for BIG, Partitions.db
//! and Rows.db for BTI), for scrub's resynchronisation.
//!
//! An index that decodes to its end, with positions strictly increasing,
//! inside Data.db and starting at 0, and (BIG) keys in partitioner order, is
//! *trusted*: scrub then resynchronises only at its positions, as
//! Cassandra's scrub does, and never scans bytes for a partition start. An
//! index that fails any of this still supplies its positions as hints.

use std::cmp::Ordering;
use std::ops::Range;

use crate::bti::index::flavor_of;
use crate::bti::partitions::{for_each_entry, PartitionPosition};
use crate::bti::{read_footer, IoSource, RowsEntry};
use crate::component::Component;
use crate::index::IndexReader;
use crate::sstable::Sstable;
use crate::token::Partitioner;

/// What the index says identifies the partition at a position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeyRef {
    /// The key is in Index.db (or Rows.db) bytes at this offset.
    Big(u64),
    /// The whole key, from a Rows.db entry (kept in `Starts::keys`).
    Owned(usize),
    /// A BTI leaf without row index: only the key's filter hash byte.
    Hash(u8),
    /// Nothing to check the key against.
    None,
}

/// Known partition starts, sorted by Data.db position.
pub(super) struct Starts {
    /// Index.db bytes (BIG), for keys.
    index: Vec<u8>,
    features: crate::version::Features,
    entries: Vec<(u64, KeyRef)>,
    keys: Vec<Vec<u8>>,
    /// See the module docs.
    pub(super) trusted: bool,
}

impl Starts {
    /// Read the index of `sst`, or `None` when it has none or it cannot be
    /// read at all.
    pub(super) fn read(sst: &Sstable, partitioner: &Partitioner, data_len: u64) -> Option<Starts> {
        if sst.features().trie_index {
            Self::read_bti(sst, data_len)
        } else {
            Self::read_big(sst, partitioner, data_len)
        }
    }

    fn read_big(sst: &Sstable, partitioner: &Partitioner, data_len: u64) -> Option<Starts> {
        if !sst.has(Component::Index) {
            return None;
        }
        let index = sst.read_component(Component::Index).ok()?;
        let mut entries = Vec::new();
        let mut r = IndexReader::new(&index, sst.features());
        let mut trusted = true;
        let mut last: Option<&[u8]> = None;
        loop {
            match r.next() {
                Ok(Some(e)) => {
                    if let Some(l) = last {
                        trusted &= partitioner.compare_decorated(l, e.key) == Ordering::Less;
                    }
                    last = Some(e.key);
                    entries.push((e.position, KeyRef::Big(e.offset)));
                }
                Ok(None) => break,
                Err(_) => {
                    trusted = false;
                    break;
                }
            }
        }
        let mut s = Starts {
            features: sst.features(),
            index,
            entries,
            keys: Vec::new(),
            trusted,
        };
        s.finish(data_len);
        Some(s)
    }

    fn read_bti(sst: &Sstable, data_len: u64) -> Option<Starts> {
        if !sst.has(Component::Partitions) {
            return None;
        }
        let footer = read_footer(&sst.io).ok()?;
        let mut src = IoSource::new(&sst.io, Component::Partitions).ok()?;
        let mut rows = if sst.has(Component::Rows) {
            IoSource::new(&sst.io, Component::Rows).ok()
        } else {
            None
        };
        let flavor = flavor_of(sst);
        let mut entries = Vec::new();
        let mut keys = Vec::new();
        let mut trusted = true;
        let walked = for_each_entry(&mut src, footer.root, &mut |e| {
            match e.payload.position {
                PartitionPosition::Data(p) => {
                    let k = e.payload.hash.map_or(KeyRef::None, KeyRef::Hash);
                    entries.push((p, k));
                }
                PartitionPosition::Rows(off) => {
                    match rows
                        .as_mut()
                        .and_then(|r| RowsEntry::read(r, off, flavor).ok())
                    {
                        Some(re) => {
                            keys.push(re.key);
                            entries.push((re.data_position, KeyRef::Owned(keys.len() - 1)));
                        }
                        None => trusted = false,
                    }
                }
            }
            Ok(true)
        });
        trusted &= walked.is_ok();
        let mut s = Starts {
            index: Vec::new(),
            features: sst.features(),
            entries,
            keys,
            trusted,
        };
        s.finish(data_len);
        Some(s)
    }

    /// Check the positions (index order = key order = Data.db order), then
    /// sort them for lookups.
    fn finish(&mut self, data_len: u64) {
        let increasing = self.entries.windows(2).all(|w| w[0].0 < w[1].0);
        let inside = self.entries.iter().all(|e| e.0 < data_len);
        let from_zero = self.entries.first().is_none_or(|e| e.0 == 0);
        self.trusted &= increasing && inside && from_zero && data_len > 0;
        self.entries.sort_unstable_by_key(|e| e.0);
        self.entries.dedup_by_key(|e| e.0);
    }

    /// The first known start `>= from`.
    pub(super) fn next_at_or_after(&self, from: u64) -> Option<u64> {
        let i = self.entries.partition_point(|e| e.0 < from);
        self.entries.get(i).map(|e| e.0)
    }

    /// True when a partition is known to start at `pos`.
    pub(super) fn is_start(&self, pos: u64) -> bool {
        self.entries.binary_search_by_key(&pos, |e| e.0).is_ok()
    }

    /// The key the index gives for the partition at `pos`, when it stores it.
    fn key_at(&self, pos: u64) -> Option<Vec<u8>> {
        let i = self.entries.binary_search_by_key(&pos, |e| e.0).ok()?;
        match self.entries[i].1 {
            KeyRef::Big(off) => {
                let b = self.index.get(usize::try_from(off).ok()?..)?;
                IndexReader::at(b, off, self.features)
                    .next()
                    .ok()
                    .flatten()
                    .map(|e| e.key.to_vec())
            }
            KeyRef::Owned(k) => self.keys.get(k).cloned(),
            KeyRef::Hash(_) | KeyRef::None => None,
        }
    }

    /// False when the index stores something about the partition at `pos`
    /// that `key` contradicts.
    pub(super) fn key_agrees(&self, pos: u64, key: &[u8]) -> bool {
        let Ok(i) = self.entries.binary_search_by_key(&pos, |e| e.0) else {
            return true;
        };
        match self.entries[i].1 {
            KeyRef::Hash(h) => crate::bti::comparable::hash_byte(key) == h,
            KeyRef::None => true,
            _ => self.key_at(pos).is_none_or(|k| k == key),
        }
    }

    /// Keys of the indexed partitions starting in `range` (at most `max`).
    pub(super) fn keys_in(&self, range: &Range<u64>, max: usize) -> Vec<Vec<u8>> {
        let i = self.entries.partition_point(|e| e.0 < range.start);
        self.entries[i..]
            .iter()
            .take_while(|e| e.0 < range.end)
            .take(max)
            .filter_map(|e| self.key_at(e.0))
            .collect()
    }
}
