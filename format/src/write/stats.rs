//! Statistics.db for a written sstable: the metadata C\* `MetadataCollector`
//! gathers while writing, computed the same way from the fragments, and the
//! serializers of its four components (`shared/docs/sstable-format.md` §6;
//! C\* `o.a.c/io/sstable/metadata/MetadataCollector.java`,
//! `StatsMetadata.StatsMetadataSerializer`, `MetadataSerializer`,
//! `o.a.c/db/rows/Rows.collectStats`, `o.a.c/utils/EstimatedHistogram.java`,
//! `o.a.c/utils/streamhist/StreamingTombstoneHistogramBuilder.java`,
//! stream-lib `HyperLogLogPlus`).

use std::cmp::Ordering;
use std::collections::BTreeMap;

use crate::clustering::{BoundKind, ClusteringPrefix};
use crate::compare::{ClusteringComparator, OwnedPrefix, PrefixLike};
use crate::cur::write_uvint;
use crate::data::{Cell, ColumnData, LivenessInfo, RangeTombstoneMarker, Row};
use crate::deletion::DeletionTime;
use crate::statistics::stats::CommitLogPosition;
use crate::statistics::SerializationHeader;
use crate::value::Uuid;
use crate::Features;

use super::out::write_utf;

/// `Cell.NO_DELETION_TIME` (5.0, widened).
const NO_DELETION_TIME: i64 = i64::MAX;

/// `o.a.c/utils/EstimatedHistogram`: buckets growing by 1.2.
#[derive(Debug, Clone)]
pub struct EstimatedHistogram {
    offsets: Vec<i64>,
    buckets: Vec<i64>,
}

impl EstimatedHistogram {
    /// `new EstimatedHistogram(bucket_count)` (no zero bucket).
    pub fn new(bucket_count: usize) -> EstimatedHistogram {
        let mut offsets = Vec::with_capacity(bucket_count);
        let mut last = 1i64;
        offsets.push(last);
        while offsets.len() < bucket_count {
            let mut next = (last as f64 * 1.2).round() as i64;
            if next == last {
                next += 1;
            }
            offsets.push(next);
            last = next;
        }
        EstimatedHistogram {
            buckets: vec![0; offsets.len() + 1],
            offsets,
        }
    }

    /// `add(n)`: the first bucket whose offset is >= n, else the overflow bucket.
    pub fn add(&mut self, n: i64) {
        let i = self.offsets.partition_point(|&o| o < n);
        self.buckets[i] += 1;
    }

    /// `EstimatedHistogramSerializer.serialize`.
    pub fn serialize(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&(self.buckets.len() as i32).to_be_bytes());
        for (i, b) in self.buckets.iter().enumerate() {
            let off = self.offsets[if i == 0 { 0 } else { i - 1 }];
            out.extend_from_slice(&off.to_be_bytes());
            out.extend_from_slice(&b.to_be_bytes());
        }
    }
}

/// `SSTable.TOMBSTONE_HISTOGRAM_BIN_SIZE`.
pub const TOMBSTONE_HISTOGRAM_BIN_SIZE: usize = 100;
/// `SSTable.TOMBSTONE_HISTOGRAM_TTL_ROUND_SECONDS`.
pub const TOMBSTONE_HISTOGRAM_ROUND_SECONDS: i64 = 60;

/// The tombstone drop-time histogram: points rounded up to the minute,
/// at most 100 bins; when more distinct points arrive the two nearest bins
/// merge into their weighted mean (`StreamingTombstoneHistogramBuilder`).
///
/// NOTE: C\* spools up to 100 000 points in a hash table and flushes them in
/// its iteration order; here they are flushed in point order, which gives
/// the same bins whenever the sstable has at most 100 distinct rounded drop
/// times, and the same kind of approximation otherwise.
#[derive(Debug, Clone, Default)]
pub struct TombstoneHistogramBuilder {
    bins: BTreeMap<i64, i64>,
}

impl TombstoneHistogramBuilder {
    /// Count one drop time.
    pub fn update(&mut self, point: i64) {
        let r = TOMBSTONE_HISTOGRAM_ROUND_SECONDS;
        let d = point.rem_euclid(r);
        let p = if d > 0 {
            point.saturating_add(r - d)
        } else {
            point
        };
        *self.bins.entry(p).or_insert(0) += 1;
        if self.bins.len() > TOMBSTONE_HISTOGRAM_BIN_SIZE {
            self.merge_nearest();
        }
    }

    fn merge_nearest(&mut self) {
        let pts: Vec<(i64, i64)> = self.bins.iter().map(|(&p, &c)| (p, c)).collect();
        let Some(i) = (0..pts.len() - 1).min_by_key(|&i| pts[i + 1].0 - pts[i].0) else {
            return;
        };
        let ((p1, c1), (p2, c2)) = (pts[i], pts[i + 1]);
        self.bins.remove(&p1);
        self.bins.remove(&p2);
        let sum = c1 + c2;
        let p = ((p1 as i128 * c1 as i128 + p2 as i128 * c2 as i128) / sum as i128) as i64;
        *self.bins.entry(p).or_insert(0) += sum;
    }

    /// `TombstoneHistogram.HistogramSerializer` (`oa`: long point, int
    /// value) or the legacy one (double point, long value). The leading
    /// "max bin size" is the number of bins, as 5.0 writes it.
    pub fn serialize(&self, out: &mut Vec<u8>, f: &Features) {
        out.extend_from_slice(&(self.bins.len() as i32).to_be_bytes());
        out.extend_from_slice(&(self.bins.len() as i32).to_be_bytes());
        for (&p, &c) in &self.bins {
            if f.uint_deletion_time {
                out.extend_from_slice(&p.to_be_bytes());
                out.extend_from_slice(&(c.min(i32::MAX as i64) as i32).to_be_bytes());
            } else {
                out.extend_from_slice(&(p as f64).to_be_bytes());
                out.extend_from_slice(&c.to_be_bytes());
            }
        }
    }

    /// Number of bins.
    pub fn len(&self) -> usize {
        self.bins.len()
    }

    /// True without any bin.
    pub fn is_empty(&self) -> bool {
        self.bins.is_empty()
    }
}

/// C\* `MurmurHash.hash2_64` (MurmurHash64A; tail bytes sign-extended as
/// Java's `(long) byte` does), the hash the cardinality sketch is fed.
pub fn hash2_64(key: &[u8], seed: u64) -> i64 {
    const M: u64 = 0xc6a4a7935bd1e995;
    const R: u32 = 47;
    let len = key.len();
    let mut h: u64 = (seed & 0xffff_ffff) ^ M.wrapping_mul(len as u64);
    let n = len / 8;
    for i in 0..n {
        let mut b = [0u8; 8];
        b.copy_from_slice(&key[i * 8..i * 8 + 8]);
        let mut k = u64::from_le_bytes(b);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = &key[n * 8..];
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate().rev() {
            h ^= ((b as i8 as i64) << (8 * i)) as u64;
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h as i64
}

/// stream-lib `HyperLogLogPlus(13, 25)` as Cassandra feeds it: sparse until
/// more than `0.75 × 2^13` distinct sparse indexes, then 2^13 registers.
#[derive(Debug, Clone, Default)]
pub struct Hll {
    /// Sparse index → smallest encoding seen (stream-lib keeps the minimum).
    sparse: BTreeMap<u32, i32>,
    registers: Option<Vec<u8>>,
}

const HLL_P: u32 = 13;
const HLL_SP: u32 = 25;

impl Hll {
    fn run_length(x: i64) -> u32 {
        ((x << HLL_P) | (1i64 << (HLL_P - 1))).leading_zeros() + 1
    }

    /// `HyperLogLogPlus.encodeHash`.
    fn encode(x: i64) -> i32 {
        let idx = ((x as u64) >> (64 - HLL_SP)) as i32;
        let zero_test = idx << ((32 - HLL_SP) + HLL_P);
        if zero_test == 0 {
            let invrl = (Self::run_length(x) as i32) ^ 63;
            (((idx << 6) | invrl) << 1) | 1
        } else {
            idx << 1
        }
    }

    fn sparse_index(k: i32) -> u32 {
        if k & 1 == 1 {
            (k as u32) >> 7
        } else {
            (k as u32) >> 1
        }
    }

    fn decode_run_length(k: i32) -> u32 {
        if k & 1 == 1 {
            (((k as u32) >> 1) & 63) ^ 63
        } else {
            ((k as u32) << (HLL_P + (31 - HLL_SP))).leading_zeros() + 1
        }
    }

    /// `offerHashed`.
    pub fn offer(&mut self, x: i64) {
        if let Some(r) = &mut self.registers {
            let idx = ((x as u64) >> (64 - HLL_P)) as usize;
            let rl = Self::run_length(x) as u8;
            r[idx] = r[idx].max(rl);
            return;
        }
        let k = Self::encode(x);
        let e = self.sparse.entry(Self::sparse_index(k)).or_insert(k);
        *e = (*e).min(k);
        if self.sparse.len() > (1usize << HLL_P) * 3 / 4 {
            let mut r = vec![0u8; 1 << HLL_P];
            for &k in self.sparse.values() {
                let idx = (Self::sparse_index(k) >> (HLL_SP - HLL_P)) as usize;
                r[idx] = r[idx].max(Self::decode_run_length(k) as u8);
            }
            self.registers = Some(r);
            self.sparse.clear();
        }
    }

    /// `getBytes`.
    pub fn bytes(&self) -> Vec<u8> {
        fn varint(out: &mut Vec<u8>, mut v: u32) {
            while v & !0x7F != 0 {
                out.push(((v & 0x7F) | 0x80) as u8);
                v >>= 7;
            }
            out.push(v as u8);
        }
        let mut out = Vec::new();
        out.extend_from_slice(&(-2i32).to_be_bytes());
        varint(&mut out, HLL_P);
        varint(&mut out, HLL_SP);
        match &self.registers {
            Some(r) => {
                varint(&mut out, 0);
                // RegisterSet: 5-bit registers, six per int word.
                let words = (r.len() / 6) + 1;
                let mut w = vec![0u32; words];
                for (j, &v) in r.iter().enumerate() {
                    w[j / 6] |= (v as u32) << (5 * (j % 6));
                }
                varint(&mut out, (words * 4) as u32);
                for x in w {
                    out.extend_from_slice(&x.to_be_bytes());
                }
            }
            None => {
                varint(&mut out, 1);
                varint(&mut out, self.sparse.len() as u32);
                let mut prev = 0i32;
                for &k in self.sparse.values() {
                    varint(&mut out, k.wrapping_sub(prev) as u32);
                    prev = k;
                }
            }
        }
        out
    }
}

/// A bound of the covered clustering slice: kind ordinal and values.
type CoveredBound = (u8, Vec<Option<Vec<u8>>>);

/// Metadata of the source kept as is in the written sstable.
#[derive(Debug, Clone, PartialEq)]
pub struct KeptMetadata {
    /// Partitioner class.
    pub partitioner: String,
    /// `repaired_at` (ms; 0 = unrepaired).
    pub repaired_at: i64,
    /// Pending repair session.
    pub pending_repair: Option<Uuid>,
    /// Transient replica data.
    pub is_transient: bool,
    /// SSTable level (LCS).
    pub level: i32,
    /// Host that wrote the data.
    pub originating_host_id: Option<Uuid>,
    /// Commit log intervals the data covers.
    pub commit_log_intervals: Vec<(CommitLogPosition, CommitLogPosition)>,
    /// Token space coverage (`oa`), NaN when unknown.
    pub token_space_coverage: f64,
}

impl Default for KeptMetadata {
    fn default() -> Self {
        KeptMetadata {
            partitioner: "org.apache.cassandra.dht.Murmur3Partitioner".into(),
            repaired_at: 0,
            pending_repair: None,
            is_transient: false,
            level: 0,
            originating_host_id: None,
            commit_log_intervals: Vec::new(),
            token_space_coverage: f64::NAN,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct MinMax {
    min: i64,
    max: i64,
    set: bool,
}

impl MinMax {
    fn new() -> MinMax {
        MinMax {
            min: 0,
            max: 0,
            set: false,
        }
    }
    fn update(&mut self, v: i64) {
        if self.set {
            self.min = self.min.min(v);
            self.max = self.max.max(v);
        } else {
            self.min = v;
            self.max = v;
            self.set = true;
        }
    }
    fn get(&self, default_min: i64, default_max: i64) -> (i64, i64) {
        if self.set {
            (self.min, self.max)
        } else {
            (default_min, default_max)
        }
    }
}

/// Collects what Statistics.db says about the data, fragment by fragment.
#[derive(Debug, Clone)]
pub struct Collector {
    comparator: ClusteringComparator,
    partition_size: EstimatedHistogram,
    cell_count: EstimatedHistogram,
    partition_cells: i64,
    timestamps: MinMax,
    ldts: MinMax,
    ttls: MinMax,
    tombstones: TombstoneHistogramBuilder,
    hll: Hll,
    /// `None` = `ClusteringBound.MAX_START` (nothing seen yet).
    min_clustering: Option<OwnedPrefix>,
    /// `None` = `ClusteringBound.MIN_END`.
    max_clustering: Option<OwnedPrefix>,
    has_legacy_counter_shards: bool,
    has_partition_level_deletions: bool,
    total_columns_set: i64,
    total_rows: i64,
    /// First and last partition keys.
    pub first_key: Option<Vec<u8>>,
    /// Last partition key.
    pub last_key: Vec<u8>,
}

impl Collector {
    /// A collector for a table with these clustering types.
    pub fn new(header: &SerializationHeader) -> Collector {
        Collector {
            comparator: ClusteringComparator::new(header.clustering_types.clone()),
            partition_size: EstimatedHistogram::new(155),
            cell_count: EstimatedHistogram::new(118),
            partition_cells: 0,
            timestamps: MinMax::new(),
            ldts: MinMax::new(),
            ttls: MinMax::new(),
            tombstones: TombstoneHistogramBuilder::default(),
            hll: Hll::default(),
            min_clustering: None,
            max_clustering: None,
            has_legacy_counter_shards: false,
            has_partition_level_deletions: false,
            total_columns_set: 0,
            total_rows: 0,
            first_key: None,
            last_key: Vec::new(),
        }
    }

    fn ldt(&mut self, v: i64) {
        self.ldts.update(v);
        if v != NO_DELETION_TIME {
            self.tombstones.update(v);
        }
    }

    fn deletion(&mut self, d: &DeletionTime) {
        if !d.is_live() {
            self.timestamps.update(d.marked_for_delete_at);
            self.ldt(d.local_deletion_time);
        }
    }

    fn liveness(&mut self, l: &LivenessInfo) {
        self.timestamps.update(l.timestamp);
        self.ttls.update(l.ttl.unwrap_or(0));
        self.ldt(l.local_expiration_time.unwrap_or(NO_DELETION_TIME));
    }

    fn cell(&mut self, c: &Cell<'_>) {
        self.partition_cells += 1;
        self.timestamps.update(c.timestamp);
        self.ttls.update(if c.is_expiring() && !c.is_deleted() {
            c.ttl.unwrap_or(0)
        } else {
            0
        });
        self.ldt(if c.is_deleted() || c.is_expiring() {
            c.local_deletion_time.unwrap_or(NO_DELETION_TIME)
        } else {
            NO_DELETION_TIME
        });
        if c.is_counter() && has_legacy_shards(c.value) {
            self.has_legacy_counter_shards = true;
        }
    }

    /// A partition starts (`updatePartitionDeletion`).
    pub fn partition_start(&mut self, key: &[u8], deletion: &DeletionTime) {
        if !deletion.is_live() {
            self.has_partition_level_deletions = true;
        }
        self.deletion(deletion);
        if self.first_key.is_none() {
            self.first_key = Some(key.to_vec());
        }
        self.last_key.clear();
        self.last_key.extend_from_slice(key);
    }

    /// A row (static or not) was written (`Rows.collectStats`).
    pub fn row(&mut self, row: &Row<'_>) {
        let is_static = row.is_static();
        if is_static && row.liveness.is_none() && row.deletion.is_none() && row.cells.is_empty() {
            return;
        }
        if !is_static {
            self.clustering(&row.clustering);
        }
        if let Some(l) = &row.liveness {
            self.liveness(l);
        }
        if let Some(d) = &row.deletion {
            self.deletion(&d.time);
        }
        // Scylla's collector counts the shadowable deletion as a tombstone too
        // (`write_row_body`).
        if let Some(d) = &row.scylla_shadowable_deletion {
            self.deletion(d);
        }
        let mut columns = 0i64;
        for cd in &row.cells {
            match cd {
                ColumnData::Simple { cell, .. } => {
                    self.cell(cell);
                    columns += 1;
                }
                ColumnData::Complex {
                    complex_deletion,
                    cells,
                    ..
                } => {
                    if let Some(d) = complex_deletion {
                        self.deletion(d);
                    }
                    for c in cells {
                        self.cell(c);
                    }
                    if !cells.is_empty() {
                        columns += 1;
                    }
                }
            }
        }
        self.total_columns_set += columns;
        self.total_rows += 1;
    }

    /// A range tombstone marker was written.
    pub fn marker(&mut self, m: &RangeTombstoneMarker<'_>) {
        self.bound(&m.bound);
        match m.deletion {
            crate::data::MarkerDeletion::Bound(d) => self.deletion(&d),
            crate::data::MarkerDeletion::Boundary { end, start } => {
                self.deletion(&end);
                self.deletion(&start);
            }
        }
    }

    /// A partition ended: `size` bytes in Data.db (uncompressed).
    pub fn partition_end(&mut self, key: &[u8], size: u64) {
        self.partition_size.add(size as i64);
        self.hll.offer(hash2_64(key, 0));
        self.cell_count.add(self.partition_cells);
        self.partition_cells = 0;
    }

    fn gt_max(&self, p: &impl PrefixLike) -> bool {
        match &self.max_clustering {
            None => true,
            Some(m) => self.comparator.compare_any(p, m) == Ordering::Greater,
        }
    }

    fn lt_min(&self, p: &impl PrefixLike) -> bool {
        match &self.min_clustering {
            None => true,
            Some(m) => self.comparator.compare_any(p, m) == Ordering::Less,
        }
    }

    /// `updateClusteringValues`.
    fn clustering(&mut self, c: &ClusteringPrefix<'_>) {
        if self.gt_max(c) {
            self.max_clustering = Some(OwnedPrefix::of(c));
            if self.min_clustering.is_none() {
                self.min_clustering = Some(OwnedPrefix::of(c));
            }
        } else if self.lt_min(c) {
            self.min_clustering = Some(OwnedPrefix::of(c));
        }
    }

    /// `updateClusteringValuesByBoundOrBoundary`.
    fn bound(&mut self, b: &ClusteringPrefix<'_>) {
        if b.kind.is_boundary() {
            return;
        }
        if self.gt_max(b) {
            if b.kind.is_end() {
                self.max_clustering = Some(OwnedPrefix::of(b));
            } else if self.min_clustering.is_none() {
                self.min_clustering = Some(OwnedPrefix::of(b));
            }
        } else if self.lt_min(b) {
            if b.kind.is_start() {
                self.min_clustering = Some(OwnedPrefix::of(b));
            } else if self.max_clustering.is_none() {
                self.max_clustering = Some(OwnedPrefix::of(b));
            }
        }
    }

    /// The covered slice: (kind, values) of its start and end bounds.
    fn covered(&self) -> (CoveredBound, CoveredBound) {
        fn values(p: &OwnedPrefix) -> Vec<Option<Vec<u8>>> {
            (0..p.size())
                .map(|i| p.value(i).map(|v| v.to_vec()))
                .collect()
        }
        let start = match &self.min_clustering {
            None => (BoundKind::ExclStartBound.ordinal(), Vec::new()),
            Some(p) if p.kind() == BoundKind::Clustering => {
                (BoundKind::InclStartBound.ordinal(), values(p))
            }
            Some(p) => (p.kind().ordinal(), values(p)),
        };
        let end = match &self.max_clustering {
            None => (BoundKind::ExclEndBound.ordinal(), Vec::new()),
            Some(p) if p.kind() == BoundKind::Clustering => {
                (BoundKind::InclEndBound.ordinal(), values(p))
            }
            Some(p) => (p.kind().ordinal(), values(p)),
        };
        (start, end)
    }

    /// Serialize the whole Statistics.db for `features`.
    #[allow(clippy::too_many_arguments)]
    pub fn statistics_db(
        &self,
        f: &Features,
        header: &SerializationHeader,
        kept: &KeptMetadata,
        fp_chance: f64,
        compression_ratio: f64,
    ) -> Vec<u8> {
        let fixed = header.clustering_fixed_lens();
        let mut validation = Vec::new();
        write_utf(&mut validation, &kept.partitioner);
        validation.extend_from_slice(&fp_chance.to_be_bytes());

        let mut compaction = Vec::new();
        let card = self.hll.bytes();
        compaction.extend_from_slice(&(card.len() as i32).to_be_bytes());
        compaction.extend_from_slice(&card);

        let mut s = Vec::new();
        self.partition_size.serialize(&mut s);
        self.cell_count.serialize(&mut s);
        let upper = kept
            .commit_log_intervals
            .iter()
            .map(|i| i.1)
            .max()
            .unwrap_or(CommitLogPosition {
                segment_id: -1,
                position: 0,
            });
        let lower = kept
            .commit_log_intervals
            .iter()
            .map(|i| i.0)
            .min()
            .unwrap_or(CommitLogPosition {
                segment_id: -1,
                position: 0,
            });
        put_clp(&mut s, &upper);
        let (min_ts, max_ts) = self.timestamps.get(i64::MIN, i64::MAX);
        s.extend_from_slice(&min_ts.to_be_bytes());
        s.extend_from_slice(&max_ts.to_be_bytes());
        let (min_ldt, max_ldt) = self.ldts.get(NO_DELETION_TIME, NO_DELETION_TIME);
        for v in [min_ldt, max_ldt] {
            s.extend_from_slice(&stats_ldt(v, f).to_be_bytes());
        }
        let (min_ttl, max_ttl) = self.ttls.get(0, 0);
        s.extend_from_slice(&(min_ttl as i32).to_be_bytes());
        s.extend_from_slice(&(max_ttl as i32).to_be_bytes());
        s.extend_from_slice(&compression_ratio.to_be_bytes());
        self.tombstones.serialize(&mut s, f);
        s.extend_from_slice(&kept.level.to_be_bytes());
        s.extend_from_slice(&kept.repaired_at.to_be_bytes());
        let (start, end) = self.covered();
        if f.legacy_min_max {
            for b in [&start, &end] {
                let n = b.1.iter().take_while(|v| v.is_some()).count();
                s.extend_from_slice(&(n as i32).to_be_bytes());
                for v in b.1.iter().take(n).flatten() {
                    s.extend_from_slice(&(v.len() as u16).to_be_bytes());
                    s.extend_from_slice(v);
                }
            }
        }
        let covered = |s: &mut Vec<u8>| {
            write_uvint(s, header.clustering_type_strings.len() as u64);
            for t in &header.clustering_type_strings {
                write_uvint(s, t.len() as u64);
                s.extend_from_slice(t.as_bytes());
            }
            for (kind, vals) in [&start, &end] {
                s.push(*kind);
                s.extend_from_slice(&(vals.len() as u16).to_be_bytes());
                if !vals.is_empty() {
                    let v: Vec<Option<&[u8]>> = vals.iter().map(|v| v.as_deref()).collect();
                    crate::clustering::encode_values(s, &fixed, &v);
                }
            }
        };
        if f.uint_deletion_time && f.improved_min_max {
            covered(&mut s);
        }
        s.push(self.has_legacy_counter_shards as u8);
        s.extend_from_slice(&self.total_columns_set.to_be_bytes());
        s.extend_from_slice(&self.total_rows.to_be_bytes());
        if f.commit_log_lower_bound {
            put_clp(&mut s, &lower);
        }
        if f.commit_log_intervals {
            s.extend_from_slice(&(kept.commit_log_intervals.len() as i32).to_be_bytes());
            for (a, b) in &kept.commit_log_intervals {
                put_clp(&mut s, a);
                put_clp(&mut s, b);
            }
        }
        let put_uuid = |s: &mut Vec<u8>, u: &Option<Uuid>| match u {
            Some(u) => {
                s.push(1);
                s.extend_from_slice(&u.0);
            }
            None => s.push(0),
        };
        if f.pending_repair {
            put_uuid(&mut s, &kept.pending_repair);
        }
        if f.is_transient {
            s.push(kept.is_transient as u8);
        }
        if f.originating_host_id {
            put_uuid(&mut s, &kept.originating_host_id);
        }
        if f.partition_level_deletions_marker {
            s.push(self.has_partition_level_deletions as u8);
        }
        if f.improved_min_max && f.legacy_min_max {
            covered(&mut s);
        }
        if f.key_range {
            for k in [self.first_key.as_deref().unwrap_or(&[]), &self.last_key] {
                write_uvint(&mut s, k.len() as u64);
                s.extend_from_slice(k);
            }
        }
        if f.token_space_coverage {
            s.extend_from_slice(&kept.token_space_coverage.to_be_bytes());
        }
        if f.uint_deletion_time {
            // C* sizes the `oa` histogram at 16 bytes a bin but writes 12.
            s.resize(s.len() + 4 * self.tombstones.len(), 0);
        }

        let mut h = Vec::new();
        serialize_header(&mut h, header);

        assemble(f, [validation, compaction, s, h])
    }
}

/// `MetadataSerializer.serialize`: TOC then components, with CRCs (`na`+).
fn assemble(f: &Features, parts: [Vec<u8>; 4]) -> Vec<u8> {
    let crcs = f.metadata_checksum;
    let mut out = Vec::new();
    out.extend_from_slice(&4i32.to_be_bytes());
    if crcs {
        out.extend_from_slice(&crc32fast::hash(&out).to_be_bytes());
    }
    let toc_len = 8 * 4 + if crcs { 4 } else { 0 };
    let mut offset = out.len() + toc_len;
    let mut toc_hasher = crc32fast::Hasher::new();
    toc_hasher.update(&4i32.to_be_bytes());
    for (i, p) in parts.iter().enumerate() {
        let e = [(i as i32).to_be_bytes(), (offset as i32).to_be_bytes()].concat();
        toc_hasher.update(&e);
        out.extend_from_slice(&e);
        offset += p.len() + if crcs { 4 } else { 0 };
    }
    if crcs {
        out.extend_from_slice(&toc_hasher.finalize().to_be_bytes());
    }
    for p in parts {
        out.extend_from_slice(&p);
        if crcs {
            out.extend_from_slice(&crc32fast::hash(&p).to_be_bytes());
        }
    }
    out
}

fn put_clp(s: &mut Vec<u8>, p: &CommitLogPosition) {
    s.extend_from_slice(&p.segment_id.to_be_bytes());
    s.extend_from_slice(&p.position.to_be_bytes());
}

/// A local deletion time as the stats store it (`oa`: unsigned, else signed;
/// "none" is all ones resp. `i32::MAX`).
fn stats_ldt(v: i64, f: &Features) -> u32 {
    if f.uint_deletion_time {
        if v == NO_DELETION_TIME {
            u32::MAX
        } else {
            v.clamp(0, u32::MAX as i64 - 1) as u32
        }
    } else if v == NO_DELETION_TIME {
        i32::MAX as u32
    } else {
        v.clamp(i32::MIN as i64, i32::MAX as i64 - 1) as i32 as u32
    }
}

/// `SerializationHeader.Component` (§6.5), deltas as the header stores them.
pub fn serialize_header(out: &mut Vec<u8>, h: &SerializationHeader) {
    write_uvint(out, h.raw_deltas.0);
    write_uvint(out, h.raw_deltas.1);
    write_uvint(out, h.raw_deltas.2);
    let vbytes = |out: &mut Vec<u8>, b: &[u8]| {
        write_uvint(out, b.len() as u64);
        out.extend_from_slice(b);
    };
    vbytes(out, h.partition_key_type_string.as_bytes());
    write_uvint(out, h.clustering_type_strings.len() as u64);
    for t in &h.clustering_type_strings {
        vbytes(out, t.as_bytes());
    }
    for cols in [&h.static_columns, &h.regular_columns] {
        write_uvint(out, cols.len() as u64);
        for c in cols {
            vbytes(out, &c.name_bytes);
            vbytes(out, c.type_string.as_bytes());
        }
    }
}

/// `CounterContext.hasLegacyShards`: a negative header entry is a local
/// (pre-2.1) shard.
fn has_legacy_shards(ctx: &[u8]) -> bool {
    if ctx.len() < 2 {
        return false;
    }
    let n = i16::from_be_bytes([ctx[0], ctx[1]]).unsigned_abs() as usize;
    (0..n).any(|i| {
        let at = 2 + 2 * i;
        ctx.get(at..at + 2)
            .is_some_and(|b| i16::from_be_bytes([b[0], b[1]]) >= 0)
    })
}
