//! A plan bound to one sstable: its Statistics.db read once
//! ([`sstkit_format::engine::bind`]) for the header and partitioner, and
//! a Data.db shorter than its index caught before any partition is read.

use sstkit_format::engine::Bound;
use sstkit_format::Sstable;

use crate::CmdResult;

/// Bind `sst`. `walks_index`: the read walks the partition index itself
/// (a reversed dump of a BIG sstable), which finds a truncated Data.db at
/// its first partition past the end, without the extra index read.
pub fn sstable(sst: &Sstable, walks_index: bool) -> CmdResult<Bound> {
    let bound = sstkit_format::engine::bind(sst)?;
    // A Data.db cut at a partition boundary reads as a shorter table.
    if !walks_index || sst.features().trie_index {
        if let Some(e) = crate::truncation::data_shorter_than_index(sst, &bound.statistics) {
            return Err(e.into());
        }
    }
    Ok(bound)
}
