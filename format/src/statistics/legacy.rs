//! Pre-2.1 (`jb`) Statistics.db: one blob, no table of components.
//!
//! Before `ka` (`Descriptor.Version.hasNewStatsFile`), Statistics.db is a
//! single fixed sequence of fields. Cassandra 2.1+ still read it with
//! `LegacyMetadataSerializer` and split it into VALIDATION, COMPACTION and
//! STATS; this module does the same so every consumer of [`Statistics`]
//! works unchanged. Fields `jb` does not store stay `None`.
//!
//! ```text
//! estimated row size histogram    i32 n + n × (offset:i64, count:i64)      -> STATS
//! estimated column count histogram    (same)                                -> STATS
//! replay position                 segment:i64 position:i32                  -> STATS (upper bound)
//! min timestamp, max timestamp    i64, i64                                  -> STATS
//! max local deletion time         i32                                       -> STATS
//! bloom filter fp chance          f64                                       -> VALIDATION
//! compression ratio               f64                                       -> STATS
//! partitioner                     writeUTF (u16 length + modified UTF-8)    -> VALIDATION
//! ancestors                       i32 n + n × i32                           -> COMPACTION
//! tombstone drop-time histogram   max_bin:i32 n:i32 + n × (f64, i64)        -> STATS
//! sstable level                   i32, only if bytes remain (else 0)        -> STATS
//! min column names                i32 n + n × short-bytes                   -> STATS
//! max column names                i32 n + n × short-bytes                   -> STATS
//! ```
//!
//! There is no cardinality estimator, no `repaired_at`, no min local deletion
//! time, no TTLs and no legacy-counter-shard flag. Bytes after the max column
//! names (Cassandra ignores them) are reported in [`Statistics::problems`].
//!
//! Source: Cassandra 2.1 `o.a.c/io/sstable/metadata/LegacyMetadataSerializer.java`
//! (`deserialize`), Cassandra 2.0 `o.a.c/io/sstable/SSTableMetadata.java`.

use super::stats::{ldt, legacy_values, CommitLogPosition, Histogram, TombstoneHistogram};
use super::{Compaction, Statistics, Stats, Validation};
use crate::component::Component;
use crate::cur::Cur;
use crate::error::{Error, ErrorKind, Result};
use crate::version::Features;

/// Decode a whole legacy Statistics.db (`Features::legacy_stats_file`).
pub(super) fn parse(bytes: &[u8], f: &Features) -> Result<Statistics> {
    let comp = Component::Statistics;
    let mut cur = Cur::new(bytes, comp, 0);
    let estimated_partition_size = Histogram::parse(&mut cur, "estimated row size histogram")?;
    let estimated_cells_count = Histogram::parse(&mut cur, "estimated column count histogram")?;
    let commit_log_upper_bound = CommitLogPosition::parse(&mut cur, "replay position")?;
    let min_timestamp = cur.i64("min timestamp")?;
    let max_timestamp = cur.i64("max timestamp")?;
    let max_local_deletion_time = ldt(cur.u32("max local deletion time")?, f);
    let bloom_filter_fp_chance = cur.f64("bloom filter fp chance")?;
    let compression_ratio = cur.f64("compression ratio")?;
    let partitioner = cur.utf("partitioner")?;
    let ancestors = super::ancestor_list(&mut cur)?;
    let tombstone_drop_time = TombstoneHistogram::parse(&mut cur, f)?;
    // NOTE: Cassandra reads the level only `if (in.available() > 0)`; the
    // column names that follow are read unconditionally.
    let sstable_level = if cur.is_empty() {
        0
    } else {
        cur.i32("sstable level")?
    };
    let legacy_min_clustering = Some(legacy_values(&mut cur, "min column names")?);
    let legacy_max_clustering = Some(legacy_values(&mut cur, "max column names")?);
    let mut problems = Vec::new();
    if !cur.is_empty() {
        problems.push(Error::at(
            ErrorKind::BadValue(format!(
                "{} bytes after the max column names, ignored",
                cur.remaining()
            )),
            comp,
            cur.abs_offset(),
            "legacy statistics",
        ));
    }
    let stats = Stats {
        damaged: Vec::new(),
        estimated_partition_size,
        estimated_cells_count,
        commit_log_upper_bound,
        min_timestamp,
        max_timestamp,
        min_local_deletion_time: None,
        max_local_deletion_time,
        min_ttl: None,
        max_ttl: None,
        compression_ratio,
        tombstone_drop_time,
        sstable_level,
        repaired_at: None,
        legacy_min_clustering,
        legacy_max_clustering,
        covered_clustering: None,
        has_legacy_counter_shards: None,
        total_columns_set: None,
        total_rows: None,
        commit_log_lower_bound: None,
        commit_log_intervals: None,
        pending_repair: None,
        is_transient: None,
        originating_host_id: None,
        has_partition_level_deletions: None,
        first_key: None,
        last_key: None,
        token_space_coverage: None,
        padding: 0,
        truncated_after: None,
    };
    Ok(Statistics {
        file_len: bytes.len() as u64,
        toc_crcs: None,
        components: Vec::new(),
        validation: Some(Validation {
            partitioner,
            bloom_filter_fp_chance,
        }),
        compaction: Some(Compaction {
            ancestors: Some(ancestors),
            cardinality_bytes: None,
            hll: None,
        }),
        stats: Some(stats),
        header: None,
        problems,
    })
}
