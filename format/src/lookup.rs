//! The interface between the index formats and the readers: a partition
//! found by key ([`PartitionIndex`], [`PartitionHandle`]) and its row index
//! ([`RowIndex`], [`IndexBlock`]). BIG ([`crate::read::BigIndex`]) and BTI
//! ([`crate::bti::BtiIndex`]) implement it; [`crate::read`] consumes it, so
//! neither index format depends on the readers.

use std::rc::Rc;

pub use crate::clustering::OwnedClustering;
use crate::component::Component;
use crate::data::DataPos;
use crate::deletion::DeletionTime;
use crate::error::Result;
use crate::sstable::Sstable;

/// One block of a partition's row index (a promoted-index `IndexInfo`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexBlock {
    /// First clustering (row or marker bound) in the block.
    pub first: OwnedClustering,
    /// Last clustering in the block.
    pub last: OwnedClustering,
    /// Block start, relative to the partition start.
    pub offset: u64,
    /// Block length (for the last block of C\* sstables it includes the
    /// end-of-partition byte).
    pub width: u64,
    /// The range tombstone open at the end of the block.
    pub end_open_marker: Option<DeletionTime>,
}

/// A partition's row index: blocks decoded one at a time.
pub trait RowIndex: std::fmt::Debug {
    /// Number of blocks.
    fn block_count(&self) -> usize;
    /// Block `i` (through the index cache of `sst`'s IO layer).
    fn block(&mut self, sst: &Sstable, i: usize) -> Result<Rc<IndexBlock>>;
    /// Block `i` for a walk that visits the blocks one after the other
    /// ([`crate::read::ReversedReader`], last to first): implementations may read them
    /// through a small window instead of the index cache, so that a walk
    /// over a huge partition does not fill the cache. Default: `block`.
    fn block_walk(&mut self, sst: &Sstable, i: usize) -> Result<Rc<IndexBlock>> {
        self.block(sst, i)
    }
    /// Where the row index is stored (for errors): its component and the
    /// offset of the partition's entry in it.
    fn location(&self) -> (Component, u64);
    /// Length of the partition header plus static row in Data.db.
    fn header_length(&self) -> u64;
    /// The partition deletion.
    fn deletion(&self) -> DeletionTime;
}

/// Where a partition is and what the index knows about it.
#[derive(Debug)]
pub struct PartitionHandle {
    /// The serialized partition key.
    pub key: Vec<u8>,
    /// Start of the partition in (uncompressed) Data.db.
    pub position: DataPos,
    /// Start of the next partition (or the end of the data), when known:
    /// the partition lies in `[position, end)`.
    pub end: Option<DataPos>,
    /// The partition's row index (promoted index), when it has one.
    pub row_index: Option<Box<dyn RowIndex>>,
}

/// Why a key was not found (for reports).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Absence {
    /// The bloom filter ruled it out (no other read).
    Filter,
    /// Outside the sstable's first..last key (Summary.db; no other read).
    KeyRange,
    /// Not in Index.db (a bloom-filter false positive).
    Index,
    /// Not in Data.db: the sstable has no index, so every partition was read.
    Data,
}

impl Absence {
    /// A short description.
    pub fn describe(&self) -> &'static str {
        match self {
            Absence::Filter => "absent (bloom filter)",
            Absence::KeyRange => "absent (outside the sstable's key range)",
            Absence::Index => "absent (not in the index: a bloom filter false positive)",
            Absence::Data => "absent (not in Data.db, read whole: no index)",
        }
    }
}

/// Partition lookup by key: one implementation per index format.
pub trait PartitionIndex {
    /// Locate the partition with serialized key `key`; `None` when absent.
    fn find(&mut self, key: &[u8]) -> Result<Option<PartitionHandle>>;

    /// Why the last [`PartitionIndex::find`] returned `None`.
    fn last_absence(&self) -> Option<Absence> {
        None
    }
}

/// Where a read by token starts: the first partition whose token is at or
/// after `token` (after it, when `exclusive`), as an index's ceiling
/// search finds it ([`crate::read::BigIndex::ceiling`],
/// [`crate::bti::BtiIndex::ceiling`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenBound {
    /// The token.
    pub token: crate::token::Token,
    /// Partitions of exactly this token are before the bound.
    pub exclusive: bool,
}

impl TokenBound {
    /// Whether a partition of token `t` comes before the bound (so a read
    /// from the bound skips it); `None` when `t` is another partitioner's.
    pub fn is_before(&self, t: &crate::token::Token) -> Option<bool> {
        let o = t.partial_cmp(&self.token)?;
        Some(o.is_lt() || (self.exclusive && o.is_eq()))
    }
}

/// The first partition at or after a [`TokenBound`]: its start in Data.db
/// and its key as the index stores it (for the caller to check against
/// Data.db).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ceiling {
    /// The partition's start in (uncompressed) Data.db.
    pub position: DataPos,
    /// Its serialized key.
    pub key: Vec<u8>,
    /// The key was read from Data.db at `position` (not only from the
    /// index): there is nothing left to check.
    pub in_data: bool,
}
