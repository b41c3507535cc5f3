//! The trie indexes of the BTI formats (Cassandra 5.0 `da`, ScyllaDB
//! `ms`/`mt`): Partitions.db and Rows.db (`shared/docs/sstable-format.md`
//! §12, §13.3).
//!
//! * [`node`]: the 16 trie node types, decoded with bounds checks.
//! * [`walk`]: following a key, ordered enumeration of payloads, floor
//!   search — iterative, with depth and node-count bounds (tries may be
//!   hostile).
//! * [`comparable`]: the byte-comparable (OSS50) forms of partition keys and
//!   clusterings, and the clustering bounds a row-index separator implies.
//! * [`partitions`]: Partitions.db footer, payloads, exact lookup,
//!   enumeration.
//! * [`rows`]: Rows.db entries, row-trie payloads, enumeration, floor.
//! * [`index`]: [`BtiIndex`], the [`crate::lookup::PartitionIndex`] of BTI
//!   sstables, and [`BtiRowIndex`], a row trie as a
//!   [`crate::lookup::RowIndex`], so that [`crate::read::BoundedReader`] reads
//!   BTI partitions the way it reads BIG ones.
//!
//! Reading model: lookups read Partitions.db and Rows.db page by page
//! through the index cache of the sstable's [`crate::io::IoLayer`] (point
//! reads); a dump may as well hold a whole file ([`node::SliceSource`]).

pub mod comparable;
pub mod index;
pub mod node;
pub mod partitions;
pub mod rows;
pub mod walk;

pub use index::{read_footer, BtiIndex, BtiRowIndex, Found, IoSource};
pub use node::{Node, NodeType, SliceSource, TrieSource};
pub use partitions::{
    Candidate, PartitionEntry, PartitionPayload, PartitionPosition, PartitionsFooter,
};
pub use rows::{Flavor, RowPayload, RowTrieEntry, RowsEntry};

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
