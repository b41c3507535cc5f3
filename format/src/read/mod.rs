//! Single-partition bounded reads, the way the engines do them: never by
//! scanning.
//!
//! ```text
//! key ─► PartitionIndex::find ──────────────► PartitionHandle ─► BoundedReader::read ─► events
//!        bloom filter ("no": done, 0 reads)     position, deletion,      header + static row,
//!        Summary.db (loaded once)               row index (promoted      then only the blocks
//!        the Index.db page(s) between two       index) of the partition  that can hold the slice
//!        summary samples → the entry
//! ```
//!
//! * [`PartitionIndex`] is the lookup interface: [`BigIndex`] implements it
//!   for BIG sstables (Filter.db, Summary.db, Index.db), [`BtiIndex`] for
//!   the trie-indexed formats (Filter.db, Partitions.db, Rows.db; its row
//!   index is a [`BtiRowIndex`]); [`open_index`] picks the one the sstable
//!   needs.
//! * [`RowIndex`] is a partition's row index: its blocks, decoded one at a
//!   time ([`BigRowIndex`]: the promoted index, through its offsets array).
//! * [`BoundedReader`] binary-searches the row index for the slice's lower
//!   bound, gallops from there for the upper bound, and reads only that
//!   Data.db range; range tombstones are clipped to the slice.
//! * [`ReversedReader`] reads the same slice in reverse clustering order:
//!   the blocks from the last to the first, a group of them at a time, each
//!   decoded forward once and emitted backward (memory bounded by the
//!   group, never by the partition); range tombstone markers are reversed
//!   (`RangeTombstoneMarker::reversed`).
//!
//! Every read goes through the sstable's [`crate::io::IoLayer`]; Index.db
//! pages, parsed promoted-index blocks and the header + static row of indexed
//! partitions are kept in its index cache across lookups.
//!
//! Reference: `shared/docs/sstable-format.md` §4 (Index.db, promoted index),
//! §5 (Summary.db), §7 (compressed chunks), §9 (bloom filter), §10 (key
//! order); C\* `o.a.c/io/sstable/format/big/BigTableReader.java`
//! (`getPosition`), `o.a.c/db/columniterator/AbstractSSTableIterator.java`
//! (`IndexState`); Scylla `sstables/index_reader.hh`,
//! `sstables/mx/reader.cc`.

mod big;
mod bounded;
pub(crate) mod clip;
mod reversed;
mod slices;

pub use crate::bti::{BtiIndex, BtiRowIndex};
pub use crate::lookup::{
    Absence, Ceiling, IndexBlock, OwnedClustering, PartitionHandle, PartitionIndex, RowIndex,
    TokenBound,
};
pub use big::{BigIndex, BigIndexScan, BigRowIndex};
pub(crate) use bounded::{bad, gallop_down, indexed_start, point_reader, seek_indexed, Clip, Ctx};
pub use bounded::{BoundedReader, ReadOptions, ReadPlan, Visitor};
pub use reversed::ReversedReader;
pub use slices::{hull, read_slices, value_slices};

use crate::clustering::{BoundKind, ClusteringPrefix};
use crate::error::{Error, ErrorKind, Result};
use crate::sstable::Sstable;
use crate::types::CqlType;
use crate::value::{parse_components, parse_value_arg};

/// The [`PartitionIndex`] of `sst`: [`BtiIndex`] for trie-indexed (BTI)
/// sstables, [`BigIndex`] otherwise. `header` (the serialization header)
/// gives the clustering types the row indexes are decoded with.
pub fn open_index<'s>(
    sst: &'s Sstable,
    partitioner: crate::token::Partitioner,
    header: &crate::statistics::SerializationHeader,
) -> Result<Box<dyn PartitionIndex + 's>> {
    if sst.features().trie_index {
        Ok(Box::new(BtiIndex::open(
            sst,
            partitioner,
            &header.clustering_types,
        )?))
    } else {
        Ok(Box::new(BigIndex::open(
            sst,
            partitioner,
            &header.clustering_fixed_lens(),
        )?))
    }
}

/// One side of a clustering slice: a (possibly partial) clustering and
/// whether it is included.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusteringBound {
    /// Values of the first clustering columns (a prefix).
    pub values: Vec<Option<Vec<u8>>>,
    /// True for `--from` / `--to`, false for `--after` / `--before`.
    pub inclusive: bool,
}

impl ClusteringBound {
    /// Parse a bound typed by a user: CQL literals (or Cassandra's string
    /// form) of the first clustering columns, several joined as `a:b` (a
    /// literal colon written `\:`, see
    /// [`parse_components`]) or given as a
    /// tuple `(a, b)` when the table has more than one clustering column.
    pub fn parse(types: &[CqlType], text: &str, inclusive: bool) -> Result<ClusteringBound> {
        let bad = |m: String| Error::new(ErrorKind::BadValue(m), "clustering bound");
        if types.is_empty() {
            return Err(bad(
                "the table has no clustering columns: a clustering bound makes no sense".into(),
            ));
        }
        // One column: the whole text is its value; several: see parse_components.
        let values = if types.len() == 1 {
            let v = parse_value_arg(&types[0], text)
                .map_err(|e| bad(format!("not a valid {} value: {}", types[0].cql(), e.kind)))?;
            vec![Some(v)]
        } else {
            parse_components(types, text, true)
                .map_err(|e| {
                    bad(format!(
                        "not a clustering prefix of ({}): {}",
                        types.iter().map(|t| t.cql()).collect::<Vec<_>>().join(", "),
                        e.kind
                    ))
                })?
                .into_iter()
                .map(Some)
                .collect()
        };
        Ok(ClusteringBound { values, inclusive })
    }
}

/// A clustering slice: rows between two optional bounds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Slice {
    /// Lower bound (`None`: from the start of the partition).
    pub start: Option<ClusteringBound>,
    /// Upper bound (`None`: to its end).
    pub end: Option<ClusteringBound>,
}

impl Slice {
    /// The whole partition.
    pub fn all() -> Slice {
        Slice::default()
    }

    /// The lower bound as a prefix (`INCL_START_BOUND` / `EXCL_START_BOUND`).
    pub fn start_prefix(&self) -> Option<ClusteringPrefix<'_>> {
        self.start.as_ref().map(|b| ClusteringPrefix {
            kind: if b.inclusive {
                BoundKind::InclStartBound
            } else {
                BoundKind::ExclStartBound
            },
            values: b.values.iter().map(|v| v.as_deref()).collect(),
        })
    }

    /// True when no clustering can lie between the bounds (the lower one
    /// at or after the upper one, C\* `Slice.isEmpty`): such a slice reads
    /// nothing but the partition header and static row, and no range
    /// tombstone either.
    pub fn is_empty(&self, types: &[CqlType]) -> bool {
        match (self.start_prefix(), self.end_prefix()) {
            (Some(l), Some(u)) => {
                crate::compare::compare_clustering(types, &l, &u) != std::cmp::Ordering::Less
            }
            _ => false,
        }
    }

    /// The upper bound as a prefix (`INCL_END_BOUND` / `EXCL_END_BOUND`).
    pub fn end_prefix(&self) -> Option<ClusteringPrefix<'_>> {
        self.end.as_ref().map(|b| ClusteringPrefix {
            kind: if b.inclusive {
                BoundKind::InclEndBound
            } else {
                BoundKind::ExclEndBound
            },
            values: b.values.iter().map(|v| v.as_deref()).collect(),
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
