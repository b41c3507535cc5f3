//! The STATS component of Statistics.db (`StatsMetadata`), every version.
//!
//! Field order and presence (`shared/docs/sstable-format.md` §6.4; Cassandra
//! `o.a.c/io/sstable/metadata/StatsMetadata.java` `StatsMetadataSerializer`,
//! Scylla `sstables/types.hh` `stats_metadata::describe_type`):
//!
//! | # | field | encoding | present |
//! |---|---|---|---|
//! | 1 | estimated partition size | histogram | all |
//! | 2 | estimated cells per partition | histogram | all |
//! | 3 | commit log upper bound | `i64 i32` | all |
//! | 4, 5 | min / max timestamp | i64 | all |
//! | 6 | min local deletion time | i32 / u32 (`oa`+) | `ma`+ |
//! | 7 | max local deletion time | i32 / u32 (`oa`+) | all |
//! | 8, 9 | min / max TTL | i32 | `ma`+ |
//! | 10 | compression ratio | f64 | all |
//! | 11 | tombstone drop times | streaming histogram, two encodings | all |
//! | 12 | sstable level | i32 | all |
//! | 13 | repaired at | i64 | all |
//! | 14, 15 | legacy min / max clustering | `i32 n` + n × short-bytes | `< oa` |
//! | 14' | improved min/max (`oa` position) | types + slice | `oa`+ |
//! | 16 | has legacy counter shards | bool | all |
//! | 17, 18 | total columns set, total rows | i64 | `ma`+ |
//! | 19 | commit log lower bound | `i64 i32` | `mb`+ |
//! | 20 | commit log intervals | `i32 n` + n × 2 positions | `mc`+ |
//! | 21 | pending repair | flag + 16 bytes | `na`+ |
//! | 22 | is transient | bool | `na`+ |
//! | 23 | originating host id | flag + 16 bytes | `me`, `nb`+ |
//! | 24 | has partition level deletions | bool | `nc`+ |
//! | 25 | improved min/max (`nc` position) | types + slice | `nc` |
//! | 26 | first / last key | vint-bytes | `nc`+ |
//! | 27 | token space coverage | f64 | `oa`+ |

use crate::cur::Cur;
use crate::error::{ErrorKind, Result};
use crate::types::CqlType;
use crate::value::Uuid;
use crate::version::Features;
use crate::Error;

/// `Cell.NO_DELETION_TIME` as Cassandra 5.0 widens it: "no deletion".
pub const NO_DELETION_TIME: i64 = i64::MAX;

/// An `EstimatedHistogram` as stored: `(offset, count)` pairs.
///
/// NOTE: pair 0 repeats `offsets[0]`; pair *i* > 0 carries `offsets[i-1]`, the
/// upper bound of the previous bucket; the last bucket is the overflow bucket
/// (§6.4). Use [`Histogram::buckets`] for `(upper bound, count)` pairs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Histogram {
    /// The stored `(offset, count)` pairs.
    pub pairs: Vec<(i64, i64)>,
}

impl Histogram {
    /// `(bucket upper bound, count)` for every bucket but the overflow bucket,
    /// as `EstimatedHistogram.getBucketOffsets()` / `getBuckets()` pair them.
    pub fn buckets(&self) -> Vec<(i64, i64)> {
        let n = self.pairs.len();
        (0..n.saturating_sub(1))
            .map(|i| (self.pairs[i + 1].0, self.pairs[i].1))
            .collect()
    }

    /// Count in the overflow bucket (values above the largest offset).
    pub fn overflow(&self) -> i64 {
        self.pairs.last().map(|p| p.1).unwrap_or(0)
    }

    pub(super) fn parse(cur: &mut Cur<'_>, what: &'static str) -> Result<Histogram> {
        let at = cur.abs_offset();
        let n = cur.i32(what)?;
        if n <= 0 {
            // NOTE: Cassandra fails on size 0 (negative array size); Scylla
            // rejects it ("Estimated histogram with zero size found"), corpus
            // `scylladb/zero_sized_histogram`.
            return Err(Error::at(
                ErrorKind::BadValue(format!("estimated histogram with size {n}")),
                cur.component(),
                at,
                what,
            ));
        }
        let n = cur.count(n as u64, 16, what)?;
        let mut pairs = Vec::with_capacity(n);
        for _ in 0..n {
            pairs.push((cur.i64(what)?, cur.i64(what)?));
        }
        Ok(Histogram { pairs })
    }
}

/// A commit log position (`CommitLogPosition`, 3.0: `ReplayPosition`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct CommitLogPosition {
    /// Segment id.
    pub segment_id: i64,
    /// Position in the segment.
    pub position: i32,
}

impl CommitLogPosition {
    pub(super) fn parse(cur: &mut Cur<'_>, what: &'static str) -> Result<CommitLogPosition> {
        Ok(CommitLogPosition {
            segment_id: cur.i64(what)?,
            position: cur.i32(what)?,
        })
    }
}

/// How the tombstone drop-time histogram was encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TombstoneEncoding {
    /// `< oa`: `point:f64 count:i64` per bin (`LegacyHistogramSerializer`).
    Legacy,
    /// `oa`+: `point:i64 count:i32` per bin (`HistogramSerializer`).
    UInt,
}

/// One bin of the tombstone drop-time histogram.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TombstoneBin {
    /// Drop time (local deletion time, seconds). For the legacy encoding this
    /// is the stored double cast like Java's `(long) d` (truncating, saturating).
    pub time: i64,
    /// Number of tombstones.
    pub count: i64,
    /// The stored double point (legacy encoding only).
    pub raw_point: Option<f64>,
}

/// The streaming tombstone drop-time histogram.
#[derive(Debug, Clone, PartialEq)]
pub struct TombstoneHistogram {
    /// Encoding found in the file.
    pub encoding: TombstoneEncoding,
    /// Stored max bin size (written "for legacy reasons").
    pub max_bin_size: i32,
    /// Bins in file order.
    pub bins: Vec<TombstoneBin>,
    /// Why the histogram is unusable, if it is. The bins are kept as read.
    ///
    /// NOTE: corpus `scylladb/bad_tombstone_histogram` stores unsorted,
    /// fractional points; Scylla discards such a histogram (empty bins,
    /// default max bin size) instead of failing, and so do we: this is set and
    /// the rest of STATS is decoded normally.
    pub invalid: Option<String>,
}

impl TombstoneHistogram {
    pub(super) fn parse(cur: &mut Cur<'_>, f: &Features) -> Result<TombstoneHistogram> {
        let max_bin_size = cur.i32("tombstone histogram max bin size")?;
        let at = cur.abs_offset();
        let n = cur.i32("tombstone histogram size")?;
        if n < 0 {
            return Err(Error::at(
                ErrorKind::BadValue(format!("negative tombstone histogram size {n}")),
                cur.component(),
                at,
                "tombstone histogram size",
            ));
        }
        let (encoding, width) = if f.uint_deletion_time {
            (TombstoneEncoding::UInt, 12)
        } else {
            (TombstoneEncoding::Legacy, 16)
        };
        let n = cur.count(n as u64, width, "tombstone histogram size")?;
        let mut bins = Vec::with_capacity(n);
        for _ in 0..n {
            bins.push(match encoding {
                TombstoneEncoding::Legacy => {
                    let p = cur.f64("tombstone histogram point")?;
                    let c = cur.i64("tombstone histogram count")?;
                    // `as` from f64 saturates and maps NaN to 0, like Java `(long)`.
                    TombstoneBin {
                        time: p as i64,
                        count: c,
                        raw_point: Some(p),
                    }
                }
                TombstoneEncoding::UInt => {
                    let p = cur.i64("tombstone histogram point")?;
                    let c = cur.i32("tombstone histogram count")?;
                    TombstoneBin {
                        time: p,
                        count: c as i64,
                        raw_point: None,
                    }
                }
            });
        }
        let mut invalid = None;
        for w in bins.windows(2) {
            let (a, b) = (
                w[0].raw_point.unwrap_or(w[0].time as f64),
                w[1].raw_point.unwrap_or(w[1].time as f64),
            );
            if a.partial_cmp(&b) != Some(std::cmp::Ordering::Less) {
                invalid = Some(format!("bin points not strictly increasing ({a} then {b})"));
                break;
            }
        }
        if invalid.is_none() {
            if let Some(b) = bins
                .iter()
                .find(|b| b.raw_point.is_some_and(|p| !p.is_finite()))
            {
                let p = b.raw_point.unwrap_or(f64::NAN);
                invalid = Some(format!("non-finite bin point {p}"));
            }
        }
        Ok(TombstoneHistogram {
            encoding,
            max_bin_size,
            bins,
            invalid,
        })
    }

    /// Serialized size as Cassandra's `serializedSize` computes it (16 bytes
    /// per bin for both encodings; see [`Stats::oa_padding`]).
    fn declared_size(&self) -> u64 {
        8 + 16 * self.bins.len() as u64
    }

    fn actual_size(&self) -> u64 {
        let w = match self.encoding {
            TombstoneEncoding::Legacy => 16,
            TombstoneEncoding::UInt => 12,
        };
        8 + w * self.bins.len() as u64
    }
}

/// One clustering bound (`ClusteringBound.Serializer`): kind + values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusteringBound {
    /// `ClusteringPrefix.Kind` ordinal (§3.5): 1 INCL_START, 6 INCL_END, …
    pub kind: u8,
    /// Values; `None` = null, `Some(empty)` = empty value.
    pub values: Vec<Option<Vec<u8>>>,
}

impl ClusteringBound {
    /// Decode `kind:u8 size:u16 values` with the clustering `types` (§3.5).
    pub fn parse(cur: &mut Cur<'_>, types: &[CqlType]) -> Result<ClusteringBound> {
        let kind = cur.u8("clustering bound kind")?;
        if kind > 7 || kind == 3 || kind == 4 {
            return Err(cur.bad(
                "clustering bound kind",
                format!("kind {kind} is not a bound"),
            ));
        }
        let at = cur.abs_offset();
        let size = cur.u16("clustering bound size")? as usize;
        if size > types.len() {
            return Err(Error::at(
                ErrorKind::BadValue(format!(
                    "bound of {size} values but {} clustering types",
                    types.len()
                )),
                cur.component(),
                at,
                "clustering bound size",
            ));
        }
        let values = parse_clustering_values(cur, &types[..size])?;
        Ok(ClusteringBound { kind, values })
    }

    /// True for start kinds (1 INCL_START, 7 EXCL_START, boundaries excluded).
    pub fn is_start(&self) -> bool {
        matches!(self.kind, 1 | 7)
    }

    /// True for inclusive kinds (INCL_START 1, INCL_END 6).
    pub fn is_inclusive(&self) -> bool {
        matches!(self.kind, 1 | 6)
    }
}

/// Decode clustering values without a size (`serializeValuesWithoutSize`):
/// blocks of 32 with a uvint header of 2 bits per value (§3.5).
pub fn parse_clustering_values(
    cur: &mut Cur<'_>,
    types: &[CqlType],
) -> Result<Vec<Option<Vec<u8>>>> {
    let mut out = Vec::with_capacity(types.len());
    for chunk in types.chunks(32) {
        let header = cur.uvint("clustering block header")?;
        for (i, ty) in chunk.iter().enumerate() {
            let empty = header & (1u64 << (2 * i)) != 0;
            let null = header & (1u64 << (2 * i + 1)) != 0;
            if null {
                out.push(None);
            } else if empty {
                out.push(Some(Vec::new()));
            } else {
                let v = match ty.fixed_len() {
                    Some(n) => cur.bytes(n, "clustering value")?,
                    None => cur.vint_bytes("clustering value")?,
                };
                out.push(Some(v.to_vec()));
            }
        }
    }
    Ok(out)
}

/// Where the improved min/max was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CoveredPosition {
    /// `nc`: after has_partition_level_deletions (legacy min/max also present).
    Nc,
    /// `oa`+: in place of the legacy min/max.
    Oa,
}

/// The improved min/max (`coveredClustering` with its clustering types).
#[derive(Debug, Clone, PartialEq)]
pub struct CoveredClustering {
    /// Where it was stored.
    pub position: CoveredPosition,
    /// Type strings as stored.
    pub type_strings: Vec<String>,
    /// Parsed clustering types.
    pub types: Vec<CqlType>,
    /// Start bound.
    pub start: ClusteringBound,
    /// End bound.
    pub end: ClusteringBound,
}

fn parse_covered(cur: &mut Cur<'_>, position: CoveredPosition) -> Result<CoveredClustering> {
    let n = cur.uvint("covered clustering type count")?;
    let n = cur.count(n, 1, "covered clustering type count")?;
    let mut type_strings = Vec::with_capacity(n);
    let mut types = Vec::with_capacity(n);
    for _ in 0..n {
        let at = cur.abs_offset();
        let s = String::from_utf8_lossy(cur.vint_bytes("covered clustering type")?).into_owned();
        let t = CqlType::parse(&s).map_err(|e| Error {
            offset: Some(at),
            component: Some(cur.component()),
            ..e
        })?;
        type_strings.push(s);
        types.push(t);
    }
    let start = ClusteringBound::parse(cur, &types)?;
    let end = ClusteringBound::parse(cur, &types)?;
    Ok(CoveredClustering {
        position,
        type_strings,
        types,
        start,
        end,
    })
}

/// The decoded STATS component. `Option` fields are `None` when the version
/// does not have them.
#[derive(Debug, Clone, PartialEq)]
pub struct Stats {
    /// Fields that did not decode and read as empty ([`Stats::parse_salvage`]).
    pub damaged: Vec<Error>,
    /// Estimated partition size histogram (bytes).
    pub estimated_partition_size: Histogram,
    /// Estimated cells (columns) per partition histogram.
    pub estimated_cells_count: Histogram,
    /// Commit log upper bound (replay position in `ka`/`la`).
    pub commit_log_upper_bound: CommitLogPosition,
    /// Minimum timestamp (µs by convention).
    pub min_timestamp: i64,
    /// Maximum timestamp.
    pub max_timestamp: i64,
    /// Minimum local deletion time (s), widened as Cassandra 5.0 does:
    /// [`NO_DELETION_TIME`] when none (`0x7FFFFFFF` `< oa`, `0xFFFFFFFF` `oa`+);
    /// `None` for `ka`/`la`.
    pub min_local_deletion_time: Option<i64>,
    /// Maximum local deletion time, widened likewise.
    pub max_local_deletion_time: i64,
    /// Minimum TTL (`ma`+).
    pub min_ttl: Option<i32>,
    /// Maximum TTL (`ma`+).
    pub max_ttl: Option<i32>,
    /// Compression ratio (`-1.0` uncompressed; NaN in some Scylla files).
    pub compression_ratio: f64,
    /// Tombstone drop-time histogram.
    pub tombstone_drop_time: TombstoneHistogram,
    /// LCS level.
    pub sstable_level: i32,
    /// Repaired-at (ms since epoch, 0 = unrepaired).
    pub repaired_at: Option<i64>,
    /// Legacy min clustering values (raw, `< oa`); unreliable before `md`
    /// ([`Features::accurate_min_max`]).
    pub legacy_min_clustering: Option<Vec<Vec<u8>>>,
    /// Legacy max clustering values.
    pub legacy_max_clustering: Option<Vec<Vec<u8>>>,
    /// Improved min/max (`nc`+).
    pub covered_clustering: Option<CoveredClustering>,
    /// Has legacy counter shards (`None` for `jb`, which does not track it).
    pub has_legacy_counter_shards: Option<bool>,
    /// Total columns set (`ma`+).
    pub total_columns_set: Option<i64>,
    /// Total rows (`ma`+).
    pub total_rows: Option<i64>,
    /// Commit log lower bound (`mb`+).
    pub commit_log_lower_bound: Option<CommitLogPosition>,
    /// Commit log intervals (`mc`+).
    pub commit_log_intervals: Option<Vec<(CommitLogPosition, CommitLogPosition)>>,
    /// Pending repair session (`na`+): `Some(None)` = none.
    pub pending_repair: Option<Option<Uuid>>,
    /// Is transient (`na`+).
    pub is_transient: Option<bool>,
    /// Originating host id (`me`, `nb`+): `Some(None)` = not recorded.
    pub originating_host_id: Option<Option<Uuid>>,
    /// Has partition-level deletions (`nc`+).
    pub has_partition_level_deletions: Option<bool>,
    /// First partition key, raw (`nc`+).
    pub first_key: Option<Vec<u8>>,
    /// Last partition key, raw (`nc`+).
    pub last_key: Option<Vec<u8>>,
    /// Token space coverage (`oa`+; NaN when unknown).
    pub token_space_coverage: Option<f64>,
    /// Zero bytes after the last field that Cassandra 5.0 writes in `oa`+
    /// when the tombstone histogram is not empty (see `Stats::oa_padding`).
    pub padding: u64,
    /// Fields missing at the end of the component (see [`Stats::parse`]).
    pub truncated_after: Option<&'static str>,
}

impl Stats {
    /// The clustering range the sstable's rows and range tombstones cover,
    /// as Cassandra 5.0 reads it from this component: the covered slice
    /// (`nc`, `oa`+), else for `md`..`nb` (`hasAccurateMinMax`) the legacy
    /// min/max clustering values as an inclusive start and end. Those are
    /// truncated at the shortest range tombstone bound, so an open-ended
    /// range leaves the side unbounded (CASSANDRA-14861); before `md` they
    /// ignore range tombstones and are not used (`None`).
    pub fn covered_range(
        &self,
        f: Features,
    ) -> Option<(
        crate::clustering::OwnedClustering,
        crate::clustering::OwnedClustering,
    )> {
        use crate::clustering::{BoundKind, OwnedClustering};
        if let Some(c) = &self.covered_clustering {
            let own = |b: &ClusteringBound| {
                Some(OwnedClustering {
                    kind: BoundKind::from_ordinal(b.kind)?,
                    values: b.values.clone(),
                })
            };
            return Some((own(&c.start)?, own(&c.end)?));
        }
        if !f.accurate_min_max {
            return None;
        }
        let bound = |kind, v: &Vec<Vec<u8>>| OwnedClustering {
            kind,
            values: v.iter().cloned().map(Some).collect(),
        };
        Some((
            bound(
                BoundKind::InclStartBound,
                self.legacy_min_clustering.as_ref()?,
            ),
            bound(
                BoundKind::InclEndBound,
                self.legacy_max_clustering.as_ref()?,
            ),
        ))
    }
}

pub(super) fn ldt(raw: u32, f: &Features) -> i64 {
    if f.uint_deletion_time {
        if raw == u32::MAX {
            NO_DELETION_TIME
        } else {
            raw as i64
        }
    } else if raw as i32 == i32::MAX {
        NO_DELETION_TIME
    } else {
        raw as i32 as i64
    }
}

impl Stats {
    /// Decode STATS from a cursor over exactly its bytes (CRC excluded).
    ///
    /// NOTE: C\*'s `legacy_na_*_compact` test files (a 2017 pre-release 4.0)
    /// end before `is_transient` (§16). When the component ends exactly at a
    /// field boundary among the trailing optional fields (`na`+), the missing
    /// fields are left `None` and [`Stats::truncated_after`] names the last
    /// field read, instead of failing.
    pub fn parse(cur: &mut Cur<'_>, f: &Features) -> Result<Stats> {
        Self::parse_with(cur, f, false)
    }

    /// Like [`Stats::parse`], but a histogram of size 0 or less (which
    /// Cassandra and Scylla refuse) reads as empty and is listed in
    /// [`Stats::damaged`], so the fields after it are still read.
    pub fn parse_salvage(cur: &mut Cur<'_>, f: &Features) -> Result<Stats> {
        Self::parse_with(cur, f, true)
    }

    fn parse_with(cur: &mut Cur<'_>, f: &Features, salvage: bool) -> Result<Stats> {
        let mut damaged = Vec::new();
        let mut histogram = |cur: &mut Cur<'_>, what: &'static str| {
            match Histogram::parse(cur, what) {
                // Only the size was read: the next field starts right after it.
                Err(e) if salvage && matches!(e.kind, ErrorKind::BadValue(_)) => {
                    damaged.push(e);
                    Ok(Histogram { pairs: Vec::new() })
                }
                r => r,
            }
        };
        let estimated_partition_size = histogram(cur, "estimated partition size histogram")?;
        let estimated_cells_count = histogram(cur, "estimated cell count histogram")?;
        let commit_log_upper_bound = CommitLogPosition::parse(cur, "commit log upper bound")?;
        let min_timestamp = cur.i64("min timestamp")?;
        let max_timestamp = cur.i64("max timestamp")?;
        let legacy = f.legacy_cells;
        let min_local_deletion_time = if legacy {
            None
        } else {
            Some(ldt(cur.u32("min local deletion time")?, f))
        };
        let max_local_deletion_time = ldt(cur.u32("max local deletion time")?, f);
        let (min_ttl, max_ttl) = if legacy {
            (None, None)
        } else {
            (Some(cur.i32("min ttl")?), Some(cur.i32("max ttl")?))
        };
        let compression_ratio = cur.f64("compression ratio")?;
        let tombstone_drop_time = TombstoneHistogram::parse(cur, f)?;
        let sstable_level = cur.i32("sstable level")?;
        let repaired_at = Some(cur.i64("repaired at")?);
        let mut s = Stats {
            damaged,
            estimated_partition_size,
            estimated_cells_count,
            commit_log_upper_bound,
            min_timestamp,
            max_timestamp,
            min_local_deletion_time,
            max_local_deletion_time,
            min_ttl,
            max_ttl,
            compression_ratio,
            tombstone_drop_time,
            sstable_level,
            repaired_at,
            legacy_min_clustering: None,
            legacy_max_clustering: None,
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
        // `ka`/`la` have legacy min/max too ("column names"); `oa`+ do not.
        if !f.uint_deletion_time {
            s.legacy_min_clustering = Some(legacy_values(cur, "legacy min clustering")?);
            s.legacy_max_clustering = Some(legacy_values(cur, "legacy max clustering")?);
        } else if f.improved_min_max {
            s.covered_clustering = Some(parse_covered(cur, CoveredPosition::Oa)?);
        }
        s.has_legacy_counter_shards = Some(cur.bool("has legacy counter shards")?);
        if legacy {
            // `lb` (2.2.7+) ends with the commit log lower bound.
            if f.commit_log_lower_bound {
                s.commit_log_lower_bound =
                    Some(CommitLogPosition::parse(cur, "commit log lower bound")?);
            }
            return Ok(s);
        }
        s.total_columns_set = Some(cur.i64("total columns set")?);
        s.total_rows = Some(cur.i64("total rows")?);
        if f.commit_log_lower_bound {
            s.commit_log_lower_bound =
                Some(CommitLogPosition::parse(cur, "commit log lower bound")?);
        }
        if f.commit_log_intervals {
            let at = cur.abs_offset();
            let n = cur.i32("commit log interval count")?;
            if n < 0 {
                return Err(Error::at(
                    ErrorKind::BadValue(format!("negative commit log interval count {n}")),
                    cur.component(),
                    at,
                    "commit log interval count",
                ));
            }
            let n = cur.count(n as u64, 24, "commit log interval count")?;
            let mut v = Vec::with_capacity(n);
            for _ in 0..n {
                v.push((
                    CommitLogPosition::parse(cur, "commit log interval start")?,
                    CommitLogPosition::parse(cur, "commit log interval end")?,
                ));
            }
            s.commit_log_intervals = Some(v);
        }
        let mut last = "commit log intervals";
        if f.pending_repair {
            if cur.is_empty() {
                s.truncated_after = Some(last);
                return Ok(s);
            }
            s.pending_repair = Some(uuid_opt(cur, "pending repair")?);
            last = "pending repair";
        }
        if f.is_transient {
            if cur.is_empty() {
                s.truncated_after = Some(last);
                return Ok(s);
            }
            s.is_transient = Some(cur.bool("is transient")?);
            last = "is transient";
        }
        if f.originating_host_id {
            if cur.is_empty() && f.pending_repair {
                s.truncated_after = Some(last);
                return Ok(s);
            }
            s.originating_host_id = Some(uuid_opt(cur, "originating host id")?);
        }
        if f.partition_level_deletions_marker {
            s.has_partition_level_deletions = Some(cur.bool("has partition level deletions")?);
        }
        if f.improved_min_max && f.legacy_min_max {
            s.covered_clustering = Some(parse_covered(cur, CoveredPosition::Nc)?);
        }
        if f.key_range {
            s.first_key = Some(cur.vint_bytes("first key")?.to_vec());
            s.last_key = Some(cur.vint_bytes("last key")?.to_vec());
        }
        if f.token_space_coverage {
            s.token_space_coverage = Some(cur.f64("token space coverage")?);
        }
        if f.uint_deletion_time {
            s.oa_padding(cur)?;
        }
        Ok(s)
    }

    /// NOTE: (not in the doc) Cassandra 5.0 sizes the `oa` tombstone histogram
    /// with 16 bytes per bin (`HistogramSerializer.serializedSize`) but writes
    /// 12 (`i64 point, i32 count`), and `MetadataSerializer` writes the whole
    /// pre-sized buffer: STATS ends with 4 zero bytes per bin. Verified on the
    /// Cassandra 5.0.9 fixtures (`oa_deletes`: 4 bins, 16 zero bytes). Consume
    /// exactly that padding when it is there and all zero.
    fn oa_padding(&mut self, cur: &mut Cur<'_>) -> Result<()> {
        let pad = self.tombstone_drop_time.declared_size() - self.tombstone_drop_time.actual_size();
        if pad > 0 && cur.remaining() as u64 >= pad {
            let save = cur.clone();
            let b = cur.bytes_len(pad, "oa stats padding")?;
            if b.iter().all(|&x| x == 0) {
                self.padding = pad;
            } else {
                *cur = save;
            }
        }
        Ok(())
    }
}

pub(super) fn legacy_values(cur: &mut Cur<'_>, what: &'static str) -> Result<Vec<Vec<u8>>> {
    let at = cur.abs_offset();
    let n = cur.i32(what)?;
    if n < 0 {
        return Err(Error::at(
            ErrorKind::BadValue(format!("negative count {n}")),
            cur.component(),
            at,
            what,
        ));
    }
    let n = cur.count(n as u64, 2, what)?;
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        v.push(cur.short_bytes(what)?.to_vec());
    }
    Ok(v)
}

fn uuid_opt(cur: &mut Cur<'_>, what: &'static str) -> Result<Option<Uuid>> {
    if cur.u8(what)? == 0 {
        return Ok(None);
    }
    let b = cur.bytes(16, what)?;
    let mut a = [0u8; 16];
    a.copy_from_slice(b);
    Ok(Some(Uuid(a)))
}
