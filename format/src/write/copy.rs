//! Copying an sstable's partitions into a writer: the source's header and
//! kept metadata, its compression settings, and a key filter.

use crate::data::{Fragment, ScanReader};
use crate::error::Result;
use crate::statistics::{SerializationHeader, Statistics};
use crate::Sstable;

use super::{Compression, KeptMetadata, SstableWriter};

/// The metadata a rewrite keeps from its source: partitioner, repair state,
/// level, originating host, commit log intervals, token space coverage.
pub fn kept_metadata(st: &Statistics) -> KeptMetadata {
    let mut k = KeptMetadata::default();
    if let Some(v) = &st.validation {
        k.partitioner = v.partitioner.clone();
    }
    if let Some(s) = &st.stats {
        k.repaired_at = s.repaired_at.unwrap_or(0);
        k.pending_repair = s.pending_repair.flatten();
        k.is_transient = s.is_transient.unwrap_or(false);
        k.level = s.sstable_level;
        k.originating_host_id = s.originating_host_id.flatten();
        k.commit_log_intervals = s.commit_log_intervals.clone().unwrap_or_default();
        if let Some(c) = s.token_space_coverage {
            k.token_space_coverage = c;
        }
    }
    k
}

/// The source's serialization header and statistics.
pub fn source_header(sst: &Sstable) -> Result<(Statistics, SerializationHeader)> {
    let st = sst.statistics()?;
    let h = sst.data_header(&st)?;
    Ok((st, h))
}

/// The source's compression and chunk length (`None` = uncompressed, or a
/// compressor sstkit does not write).
pub fn source_compression(sst: &Sstable) -> Result<Option<(Compression, u32)>> {
    if !sst.data_compressed() {
        return Ok(Some((Compression::None, super::DEFAULT_CHUNK_LENGTH)));
    }
    let ci = sst.compression_info()?;
    let level = ci
        .option("compression_level")
        .and_then(|l| l.parse::<i32>().ok());
    Ok(Compression::from_compressor(&ci.compressor, level).map(|c| (c, ci.chunk_length)))
}

/// Counts of one copy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CopyCounts {
    /// Partitions read from the source.
    pub read: u64,
    /// Partitions written.
    pub written: u64,
}

/// Where each partition of a copy goes.
pub trait Route {
    /// The writer for the partition with key `key`, `None` to leave it out.
    /// Called once per partition, in the source's order.
    fn writer(&mut self, key: &[u8]) -> Result<Option<&mut SstableWriter>>;
}

struct Filtered<'w, F> {
    w: &'w mut SstableWriter,
    keep: F,
}

impl<F: FnMut(&[u8]) -> bool> Route for Filtered<'_, F> {
    fn writer(&mut self, key: &[u8]) -> Result<Option<&mut SstableWriter>> {
        Ok(if (self.keep)(key) {
            Some(&mut *self.w)
        } else {
            None
        })
    }
}

/// Copy every partition of `sst` whose key `keep` accepts into `w`;
/// `progress` is called with the source's uncompressed position after each
/// partition.
pub fn copy_partitions(
    sst: &Sstable,
    header: &SerializationHeader,
    w: &mut SstableWriter,
    keep: impl FnMut(&[u8]) -> bool,
    progress: impl FnMut(u64),
) -> Result<CopyCounts> {
    copy_routed(sst, header, &mut Filtered { w, keep }, progress)
}

/// Copy the partitions of `sst` to the writers `route` picks.
pub fn copy_routed(
    sst: &Sstable,
    header: &SerializationHeader,
    route: &mut dyn Route,
    mut progress: impl FnMut(u64),
) -> Result<CopyCounts> {
    let mut r = ScanReader::new(sst, header)?;
    let mut n = CopyCounts::default();
    let mut current: Option<&mut SstableWriter> = None;
    loop {
        let skip = {
            let Some(f) = r.next_fragment()? else { break };
            if let Fragment::PartitionStart { key, .. } = &f {
                n.read += 1;
                current = route.writer(key)?;
            }
            let skip = current.is_none();
            if let Some(w) = current.as_deref_mut() {
                // A fragment the target cannot hold is the source's to name.
                w.write(&f).map_err(|e| e.in_file(&sst.data_path()))?;
                if matches!(f, Fragment::PartitionEnd { .. }) {
                    n.written += 1;
                }
            }
            let spare = f.into_spare();
            r.recycle(spare);
            skip
        };
        if skip {
            r.skip_partition()?;
        }
        progress(r.position().0);
    }
    Ok(n)
}
