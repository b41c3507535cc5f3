//! Writers of sstable components.
//!
//! * [`bti`]: the BTI trie indexes of `da` sstables (Partitions.db, Rows.db).
//! * [`filter`]: the bloom filter (Filter.db).

pub mod bti;
pub mod filter;
