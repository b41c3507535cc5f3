//! A Data.db that ends before the partitions its index lists.
//!
//! A scan of Data.db cannot tell a file cut exactly at a partition boundary
//! (or to nothing) from a complete one: it simply finds no more partitions.
//! The index can: its last partition must start before Data.db ends. The
//! dump and read commands treat such a file as unreadable input (exit 3),
//! `scrub` reports it as a finding (exit 1).

use sstkit_format::data::DataSource;
use sstkit_format::read::open_index;
use sstkit_format::statistics::Statistics;
use sstkit_format::summary::Summary;
use sstkit_format::{Component, Error, ErrorKind, Sstable};

use crate::render::KeyCtx;

/// The error for a Data.db (uncompressed length) that ends at or before
/// the position the index gives for the sstable's last partition, or that is
/// empty while Statistics.db counts partitions; `None` when Data.db covers
/// the index, or when the index cannot tell (missing or unreadable: the
/// commands that need it report that themselves).
pub fn data_shorter_than_index(sst: &Sstable, st: &Statistics) -> Option<Error> {
    let data = DataSource::open(sst).ok()?;
    let len = data.data_len();
    let at = |msg: String| {
        Error::at(ErrorKind::BadValue(msg), Component::Data, len, "partition")
            .in_file(&sst.data_path())
    };
    let counted: i64 = st.stats.as_ref().map_or(0, |s| {
        s.estimated_partition_size
            .pairs
            .iter()
            .fold(0i64, |a, p| a.saturating_add(p.1))
    });
    if len == 0 && counted > 0 {
        return Some(at(format!(
            "Data.db is empty, but Statistics.db counts {counted} partitions: the file is truncated"
        )));
    }
    // Reading a compressed Data.db past its end already fails: its chunks
    // are listed in CompressionInfo.db.
    if sst.has(Component::CompressionInfo) {
        return None;
    }
    let last_key = last_indexed_key(sst, st)?;
    let partitioner = sst.partitioner(st).ok()?;
    let header = sst.data_header(st).ok()?;
    let handle = open_index(sst, partitioner, &header)
        .ok()?
        .find(&last_key)
        .ok()??;
    let pos = handle.position.0;
    if pos < len {
        return None;
    }
    let key = KeyCtx::from_statistics(st).key_text(&last_key);
    Some(
        at(format!(
            "Data.db ends at {len}, but the index lists its last partition at {pos}: \
             the file is truncated"
        ))
        .in_partition(key),
    )
}

/// The sstable's last partition key, as its index records it.
fn last_indexed_key(sst: &Sstable, st: &Statistics) -> Option<Vec<u8>> {
    if sst.features().trie_index {
        return sstkit_format::bti::read_footer(&sst.io)
            .ok()
            .map(|f| f.last_key);
    }
    let from_summary = sst
        .read_component(Component::Summary)
        .ok()
        .and_then(|b| Summary::parse(&b, &sst.features()).ok())
        .map(|s| s.last_key);
    from_summary.or_else(|| st.stats.as_ref().and_then(|s| s.last_key.clone()))
}
