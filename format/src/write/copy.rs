//! What a copy of an sstable takes from its source: its header, the
//! metadata kept, its compression settings. The partitions go through the
//! engine into a [`WriterSink`](super::sink::WriterSink).

use crate::error::Result;
use crate::statistics::{SerializationHeader, Statistics};
use crate::Sstable;

use super::{Compression, KeptMetadata};

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
