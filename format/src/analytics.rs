//! Table analytics: per-partition statistics (sizes, rows, cells, tombstones
//! by kind, TTLs, timestamps) gathered from decoded fragments, and the
//! `EstimatedHistogram` Cassandra's tools summarise them with.
//!
//! The counts follow Cassandra's `sstablepartitions`
//! (`o.a.c/tools/SSTablePartitions.java`, `PartitionStats.addUnfiltered`) so
//! its `--csv` output can be compared line for line:
//!
//! * rows are the clustered rows (the static row is not counted), cells the
//!   simple cells and the elements of complex columns of those rows;
//! * tombstones are row deletions, range tombstone markers (a boundary is
//!   one), complex (collection) deletions, tombstone cells, and TTL'd rows and
//!   cells already expired at `now`; the partition deletion is not among them
//!   (it makes the partition "not live");
//! * an expired row is one whose liveness expires before `now`; an expired
//!   cell is an expiring cell with its own TTL (not the row's) dead at `now`.
//!
//! Timestamps (min/max) cover everything written, static row included.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};

use crate::data::{Cell, ColumnData, Fragment, RangeTombstoneMarker, Row};
use crate::deletion::DeletionTime;

/// Cassandra's `EstimatedHistogram`: buckets whose bounds grow by 1.2x, and
/// percentiles that answer with a bucket's upper bound.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EstimatedHistogram {
    offsets: Vec<u64>,
    /// One more than `offsets`: the last is the overflow bucket.
    buckets: Vec<u64>,
}

impl EstimatedHistogram {
    /// `new EstimatedHistogram(bucket_count, consider_zeroes)`.
    pub fn new(bucket_count: usize, consider_zeroes: bool) -> Self {
        let n = bucket_count + usize::from(consider_zeroes);
        let mut offsets = Vec::with_capacity(n);
        if consider_zeroes {
            offsets.push(0);
        }
        let mut last = 1u64;
        offsets.push(last);
        while offsets.len() < n {
            // Math.round(last * 1.2), at least one more than the last bound.
            let mut next = (last as f64 * 1.2).round() as u64;
            if next == last {
                next += 1;
            }
            offsets.push(next);
            last = next;
        }
        let buckets = vec![0; offsets.len() + 1];
        EstimatedHistogram { offsets, buckets }
    }

    /// The histogram `sstablepartitions` keeps for partition sizes (up to 3.5 TB).
    pub fn for_sizes() -> Self {
        Self::new(155, true)
    }

    /// The histogram `sstablepartitions` keeps for row, cell and tombstone counts.
    pub fn for_counts() -> Self {
        Self::new(118, true)
    }

    /// Count `n` in the first bucket whose bound is `>= n`.
    pub fn add(&mut self, n: u64) {
        let i = match self.offsets.binary_search(&n) {
            Ok(i) | Err(i) => i,
        };
        self.buckets[i] += 1;
    }

    /// Add every count of `other` (same bucket layout) to this one.
    pub fn merge(&mut self, other: &EstimatedHistogram) {
        if other.buckets.len() == self.buckets.len() {
            for (a, b) in self.buckets.iter_mut().zip(&other.buckets) {
                *a += b;
            }
        }
    }

    /// Values counted.
    pub fn count(&self) -> u64 {
        self.buckets.iter().sum()
    }

    /// Values above the largest bound.
    pub fn overflow(&self) -> u64 {
        self.buckets.last().copied().unwrap_or(0)
    }

    /// `percentile(p)` as Cassandra computes it: the bound of the first
    /// bucket where the running count reaches `ceil(count * p)`; 0 when empty;
    /// `None` when a value overflowed (Cassandra throws there).
    pub fn percentile(&self, p: f64) -> Option<u64> {
        if self.overflow() > 0 {
            return None;
        }
        let want = (self.count() as f64 * p).ceil() as u64;
        if want == 0 {
            return Some(0);
        }
        let mut seen = 0;
        for (i, b) in self.buckets[..self.offsets.len()].iter().enumerate() {
            seen += b;
            if seen >= want {
                return Some(self.offsets[i]);
            }
        }
        Some(0)
    }

    /// `(bucket upper bound, count)` of the non-empty buckets (overflow not included).
    pub fn nonzero(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.offsets
            .iter()
            .zip(&self.buckets)
            .filter(|(_, &c)| c > 0)
            .map(|(&o, &c)| (o, c))
    }
}

/// The percentiles `sstablepartitions` prints.
pub const PERCENTILES: [(&str, f64); 6] = [
    ("p50", 0.5),
    ("p75", 0.75),
    ("p90", 0.90),
    ("p95", 0.95),
    ("p99", 0.99),
    ("p999", 0.999),
];

/// Tombstones of one partition, by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tombstones {
    /// 1 when the partition has a partition-level deletion (not in
    /// [`PartitionStats::tombstone_count`]).
    pub partition: u64,
    /// Row deletions.
    pub row: u64,
    /// Range tombstone markers (bounds and boundaries).
    pub range: u64,
    /// Complex (collection, UDT) deletions.
    pub complex: u64,
    /// Tombstone cells.
    pub cell: u64,
}

/// What one partition holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PartitionStats {
    /// No partition-level deletion.
    pub live: bool,
    /// Start in uncompressed Data.db.
    pub offset: u64,
    /// Uncompressed bytes, header to end-of-partition byte.
    pub size: u64,
    /// Clustered rows (not the static row).
    pub rows: u64,
    /// Cells of those rows (complex elements each count).
    pub cells: u64,
    /// Tombstones by kind.
    pub tombstones: Tombstones,
    /// Rows whose liveness carries a TTL.
    pub ttl_rows: u64,
    /// Cells with a TTL.
    pub ttl_cells: u64,
    /// TTL'd rows expired at `now`.
    pub expired_rows: u64,
    /// Cells with their own TTL (not the row's) dead at `now`.
    pub expired_cells: u64,
    /// Smallest write or deletion timestamp (µs), when anything has one.
    pub min_timestamp: Option<i64>,
    /// Largest write or deletion timestamp (µs).
    pub max_timestamp: Option<i64>,
    /// Smallest and largest local deletion or expiration time (s), when
    /// anything has one.
    pub deletion_times: Option<(i64, i64)>,
}

impl PartitionStats {
    /// A partition starting at `offset` with partition deletion `deletion`.
    pub fn new(offset: u64, deletion: &DeletionTime) -> Self {
        let mut s = PartitionStats {
            live: deletion.is_live(),
            offset,
            ..Default::default()
        };
        if !s.live {
            s.tombstones.partition = 1;
            s.deletion(deletion);
        }
        s
    }

    /// Tombstones as `sstablepartitions` totals them: row, range, complex and
    /// cell tombstones plus expired rows and cells.
    pub fn tombstone_count(&self) -> u64 {
        let t = &self.tombstones;
        t.row + t.range + t.complex + t.cell + self.expired_rows + self.expired_cells
    }

    fn timestamp(&mut self, ts: i64) {
        self.min_timestamp = Some(self.min_timestamp.map_or(ts, |m| m.min(ts)));
        self.max_timestamp = Some(self.max_timestamp.map_or(ts, |m| m.max(ts)));
    }

    fn deletion_time(&mut self, t: Option<i64>) {
        if let Some(t) = t {
            self.deletion_times = Some(
                self.deletion_times
                    .map_or((t, t), |(a, b)| (a.min(t), b.max(t))),
            );
        }
    }

    /// A deletion's timestamp and local deletion time.
    fn deletion(&mut self, d: &DeletionTime) {
        self.timestamp(d.marked_for_delete_at);
        self.deletion_time(Some(d.local_deletion_time));
    }

    /// A row's liveness and deletion.
    fn row_info(&mut self, r: &Row<'_>) {
        if let Some(l) = &r.liveness {
            self.timestamp(l.timestamp);
            self.deletion_time(l.local_expiration_time);
        }
        if let Some(d) = &r.deletion {
            self.deletion(&d.time);
        }
        if let Some(d) = &r.scylla_shadowable_deletion {
            self.deletion(d);
        }
    }

    /// Count one fragment of the partition (`now`: seconds since the epoch,
    /// for expiry). The partition start and end carry nothing to count.
    pub fn add(&mut self, f: &Fragment<'_>, now: i64) {
        match f {
            Fragment::Row(r) => self.add_row(r, now),
            Fragment::StaticRow(r) => self.static_row(r),
            Fragment::Marker(m) => self.add_marker(m),
            Fragment::PartitionStart { .. } | Fragment::PartitionEnd { .. } => {}
        }
    }

    /// The static row: its timestamps only (sstablepartitions counts none of it).
    fn static_row(&mut self, r: &Row<'_>) {
        self.row_info(r);
        for cd in &r.cells {
            match cd {
                ColumnData::Simple { cell, .. } => self.cell_times(cell),
                ColumnData::Complex {
                    complex_deletion,
                    cells,
                    ..
                } => {
                    if let Some(d) = complex_deletion {
                        self.deletion(d);
                    }
                    for c in cells {
                        self.cell_times(c);
                    }
                }
            }
        }
    }

    fn cell_times(&mut self, c: &Cell<'_>) {
        self.timestamp(c.timestamp);
        self.deletion_time(c.local_deletion_time);
    }

    fn add_row(&mut self, r: &Row<'_>, now: i64) {
        self.rows += 1;
        self.row_info(r);
        if r.deletion.is_some() {
            self.tombstones.row += 1;
        }
        // The row's TTL, for telling cells with their own TTL apart.
        let mut row_ttl = None;
        if let Some(l) = &r.liveness {
            if l.ttl.is_some() || l.expired {
                self.ttl_rows += 1;
                row_ttl = l.ttl;
                if l.local_expiration_time.is_some_and(|t| t < now) {
                    self.expired_rows += 1;
                }
            }
        }
        let has_liveness = r.liveness.is_some();
        for cd in &r.cells {
            match cd {
                ColumnData::Simple { cell, .. } => self.add_cell(cell, has_liveness, row_ttl, now),
                ColumnData::Complex {
                    complex_deletion,
                    cells,
                    ..
                } => {
                    if let Some(d) = complex_deletion {
                        self.tombstones.complex += 1;
                        self.deletion(d);
                    }
                    for c in cells {
                        self.add_cell(c, has_liveness, row_ttl, now);
                    }
                }
            }
        }
    }

    fn add_cell(&mut self, c: &Cell<'_>, has_liveness: bool, row_ttl: Option<i64>, now: i64) {
        self.cells += 1;
        self.cell_times(c);
        if c.is_deleted() && !c.is_expiring() {
            self.tombstones.cell += 1;
        }
        if c.is_expiring() {
            self.ttl_cells += 1;
            // Cassandra compares the cell's TTL with the liveness TTL (0 when
            // the row has none) and calls a cell dead once now reaches its
            // expiration time.
            let own_ttl = !has_liveness || c.ttl != Some(row_ttl.unwrap_or(0));
            let dead = c.local_deletion_time.is_some_and(|t| now >= t);
            if own_ttl && dead {
                self.expired_cells += 1;
            }
        }
    }

    fn add_marker(&mut self, m: &RangeTombstoneMarker<'_>) {
        self.tombstones.range += 1;
        if let Some(d) = m.open_deletion() {
            self.deletion(&d);
        }
        if let Some(d) = m.close_deletion() {
            self.deletion(&d);
        }
    }
}

/// Hashes the values a [`Quantiles`] counts with splitmix64's finalizer:
/// SipHash, the default, costs more than the rest of counting a partition,
/// and a bijection in which every input bit moves every output bit still
/// spreads values alike in their low bits (sizes in multiples of a block).
#[derive(Debug, Clone, Copy, Default)]
struct ValueHasher(u64);

/// A seed of its own for each map's [`ValueHasher`], drawn as std's
/// `RandomState` draws its keys: sizes written to collide under one seed
/// (a crafted sstable) do not collide under another, and merging one map
/// into another never inserts in the receiving map's own hash order (which
/// makes open addressing quadratic).
#[derive(Debug, Clone)]
struct ValueHashing(u64);

impl Default for ValueHashing {
    fn default() -> Self {
        ValueHashing(std::collections::hash_map::RandomState::new().hash_one(0u64))
    }
}

impl BuildHasher for ValueHashing {
    type Hasher = ValueHasher;

    fn build_hasher(&self) -> ValueHasher {
        ValueHasher(self.0)
    }
}

impl Hasher for ValueHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(b));
        }
    }

    fn write_u64(&mut self, v: u64) {
        let mut z = self.0 ^ v;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        self.0 = z ^ (z >> 31);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Distinct values a [`Quantiles`] keeps exactly; past them it keeps the
/// values to [`COARSE_BITS`] significant bits.
pub const MAX_DISTINCT: usize = 1 << 18;

/// Significant bits of a value once a [`Quantiles`] is coarse: a relative
/// error under 2^-10 (0.1%), and at most 64 × 2^10 keys.
pub const COARSE_BITS: u32 = 10;

/// Percentiles of a stream of values, exact in bounded memory: each distinct
/// value is counted, so the percentiles are values that occurred. A single
/// pass cannot give exact percentiles of any stream in less than linear
/// memory, so past [`MAX_DISTINCT`] distinct values (a few MiB) the values
/// are kept to [`COARSE_BITS`] significant bits and [`Quantiles::exact`]
/// says false; values below 2^11 stay exact either way.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Quantiles {
    counts: HashMap<u64, u64, ValueHashing>,
    coarse: bool,
    n: u64,
}

impl Quantiles {
    fn key(&self, v: u64) -> u64 {
        if !self.coarse {
            return v;
        }
        let bits = 64 - v.leading_zeros();
        match bits.checked_sub(COARSE_BITS + 1) {
            Some(shift) if shift > 0 => (v >> shift) << shift,
            _ => v,
        }
    }

    /// Count `v` once.
    pub fn add(&mut self, v: u64) {
        self.add_n(v, 1);
    }

    fn add_n(&mut self, v: u64, n: u64) {
        let k = self.key(v);
        *self.counts.entry(k).or_insert(0) += n;
        self.n += n;
        if !self.coarse && self.counts.len() > MAX_DISTINCT {
            self.coarsen();
        }
    }

    fn coarsen(&mut self) {
        self.coarse = true;
        let old = std::mem::take(&mut self.counts);
        for (v, c) in old {
            let k = self.key(v);
            *self.counts.entry(k).or_insert(0) += c;
        }
    }

    /// Add every value of `o`.
    pub fn merge(&mut self, o: &Quantiles) {
        if o.coarse && !self.coarse {
            self.coarsen();
        }
        for (&v, &c) in &o.counts {
            self.add_n(v, c);
        }
    }

    /// True while every value is counted as it is.
    pub fn exact(&self) -> bool {
        !self.coarse
    }

    /// Values counted.
    pub fn count(&self) -> u64 {
        self.n
    }

    /// The nearest-rank percentile of each of `qs` (0..=1): the smallest
    /// value that at least `ceil(q × count)` values do not exceed; None
    /// when nothing was counted.
    pub fn percentiles(&self, qs: &[f64]) -> Vec<Option<u64>> {
        let mut sorted: Vec<(u64, u64)> = self.counts.iter().map(|(&v, &c)| (v, c)).collect();
        sorted.sort_unstable();
        qs.iter()
            .map(|&q| {
                if self.n == 0 {
                    return None;
                }
                let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
                let mut seen = 0;
                sorted.iter().find_map(|&(v, c)| {
                    seen += c;
                    (seen >= rank).then_some(v)
                })
            })
            .collect()
    }
}

/// Percentiles (exact, and estimated as Cassandra's tools estimate them)
/// and exact extremes of many partitions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// Exact percentiles of size, rows, cells, tombstones.
    pub exact: [Quantiles; 4],
    /// Uncompressed partition sizes.
    pub size: EstimatedHistogram,
    /// Row counts.
    pub rows: EstimatedHistogram,
    /// Cell counts.
    pub cells: EstimatedHistogram,
    /// Tombstone counts ([`PartitionStats::tombstone_count`]).
    pub tombstones: EstimatedHistogram,
    /// Exact `[min, max]` of size, rows, cells, tombstones (None before the first partition).
    pub extremes: Option<[(u64, u64); 4]>,
    /// Partitions counted.
    pub count: u64,
}

impl Default for Summary {
    fn default() -> Self {
        Summary {
            exact: Default::default(),
            size: EstimatedHistogram::for_sizes(),
            rows: EstimatedHistogram::for_counts(),
            cells: EstimatedHistogram::for_counts(),
            tombstones: EstimatedHistogram::for_counts(),
            extremes: None,
            count: 0,
        }
    }
}

impl Summary {
    /// Count one partition.
    pub fn add(&mut self, p: &PartitionStats) {
        let v = [p.size, p.rows, p.cells, p.tombstone_count()];
        self.size.add(v[0]);
        self.rows.add(v[1]);
        self.cells.add(v[2]);
        self.tombstones.add(v[3]);
        for (q, x) in self.exact.iter_mut().zip(v) {
            q.add(x);
        }
        self.count += 1;
        let e = self.extremes.get_or_insert([(u64::MAX, 0); 4]);
        for (slot, x) in e.iter_mut().zip(v) {
            slot.0 = slot.0.min(x);
            slot.1 = slot.1.max(x);
        }
    }

    /// Add another summary's partitions: the summary is the one adding each
    /// of them would have made, so partitions can be counted apart (a
    /// summary per thread) and merged.
    pub fn merge(&mut self, o: &Summary) {
        self.size.merge(&o.size);
        self.rows.merge(&o.rows);
        self.cells.merge(&o.cells);
        self.tombstones.merge(&o.tombstones);
        for (q, x) in self.exact.iter_mut().zip(&o.exact) {
            q.merge(x);
        }
        self.count += o.count;
        if let Some(oe) = o.extremes {
            let e = self.extremes.get_or_insert([(u64::MAX, 0); 4]);
            for (slot, x) in e.iter_mut().zip(oe) {
                slot.0 = slot.0.min(x.0);
                slot.1 = slot.1.max(x.1);
            }
        }
    }
}

/// The Statistics.db facts that decide whether an sstable can be dropped whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lifetimes {
    /// Oldest write or deletion timestamp.
    pub min_timestamp: i64,
    /// Newest write or deletion timestamp.
    pub max_timestamp: i64,
    /// Latest local deletion (or expiry) time, seconds.
    pub max_local_deletion_time: i64,
}

/// `SSTableExpiredBlockers.checkForExpiredSSTableBlockers`: for each sstable
/// (index into `ssts`, all of one table), the fully expired sstables it keeps
/// from being dropped. An sstable is expired when its max local deletion
/// time is before `gc_before`; another sstable blocks it when its oldest
/// timestamp is not newer than the expired one's newest and it is not past
/// `gc_before` itself. Blockers come in input order, each with the expired
/// sstables it blocks in input order.
pub fn expired_blockers(ssts: &[Lifetimes], gc_before: i64) -> Vec<(usize, Vec<usize>)> {
    let mut out: Vec<(usize, Vec<usize>)> = Vec::new();
    for (i, s) in ssts.iter().enumerate() {
        if s.max_local_deletion_time >= gc_before {
            continue;
        }
        for (j, b) in ssts.iter().enumerate() {
            if j != i && b.min_timestamp <= s.max_timestamp && b.max_local_deletion_time > gc_before
            {
                match out.iter_mut().find(|e| e.0 == j) {
                    Some(e) => e.1.push(i),
                    None => out.push((j, vec![i])),
                }
            }
        }
    }
    out.sort_by_key(|e| e.0);
    out
}

/// `EstimatedHistogram.mean()` of a stored histogram: the count-weighted mean
/// of the bucket bounds, rounded up; `None` when a value overflowed (Cassandra
/// throws there) and 0 when empty.
pub fn stored_histogram_mean(h: &crate::statistics::stats::Histogram) -> Option<i64> {
    if h.overflow() > 0 {
        return None;
    }
    let (mut n, mut sum) = (0i64, 0i64);
    for (bound, count) in h.buckets() {
        n = n.saturating_add(count);
        sum = sum.saturating_add(count.saturating_mul(bound));
    }
    if n == 0 {
        return Some(0);
    }
    Some((sum as f64 / n as f64).ceil() as i64)
}

/// `EstimatedHistogram.percentile(p)` of a stored histogram (see
/// [`EstimatedHistogram::percentile`]).
pub fn stored_histogram_percentile(h: &crate::statistics::stats::Histogram, p: f64) -> Option<i64> {
    if h.overflow() > 0 {
        return None;
    }
    let buckets = h.buckets();
    let count: i64 = buckets.iter().map(|b| b.1).sum();
    let want = (count as f64 * p).ceil() as i64;
    if want <= 0 {
        return Some(0);
    }
    let mut seen = 0i64;
    for (bound, c) in buckets {
        seen = seen.saturating_add(c);
        if seen >= want {
            return Some(bound);
        }
    }
    Some(0)
}

/// `TombstoneHistogram.sum(gcBefore)`: the tombstones whose drop time is at
/// or before `gc_before`, interpolated inside the bin it falls in as
/// Cassandra's streaming histogram does.
pub fn droppable_tombstones(
    h: &crate::statistics::stats::TombstoneHistogram,
    gc_before: i64,
) -> f64 {
    let mut sum = 0.0;
    for (i, bin) in h.bins.iter().enumerate() {
        if bin.time > gc_before {
            if i == 0 {
                return 0.0;
            }
            let prev = &h.bins[i - 1];
            let weight = (gc_before - prev.time) as f64 / (bin.time - prev.time) as f64;
            let mb = prev.count as f64 + (bin.count - prev.count) as f64 * weight;
            sum -= prev.count as f64;
            sum += (prev.count as f64 + mb) * weight / 2.0;
            sum += prev.count as f64 / 2.0;
            return sum;
        }
        sum += bin.count as f64;
    }
    sum
}

/// `StatsMetadata.getEstimatedDroppableTombstoneRatio(gcBefore)`: droppable
/// tombstones over the estimated cell count (mean cells per partition times
/// partitions); 0 without cells, `None` when the cell histogram overflowed.
pub fn droppable_tombstone_ratio(
    s: &crate::statistics::stats::Stats,
    gc_before: i64,
) -> Option<f64> {
    let h = &s.estimated_cells_count;
    let count: i64 = h.buckets().iter().map(|b| b.1).sum::<i64>() + h.overflow();
    let cells = stored_histogram_mean(h)?.saturating_mul(count);
    if cells <= 0 {
        return Some(0.0);
    }
    Some(droppable_tombstones(&s.tombstone_drop_time, gc_before) / cells as f64)
}

#[cfg(test)]
mod tests {
    #[test]
    fn quantiles_are_values_that_occurred() {
        let mut q = super::Quantiles::default();
        assert_eq!(q.percentiles(&[0.5]), [None]);
        for v in [5, 1, 3, 2, 4, 100] {
            q.add(v);
        }
        assert_eq!(
            q.percentiles(&[0.0, 0.5, 0.8, 0.99, 1.0]),
            [Some(1), Some(3), Some(5), Some(100), Some(100)]
        );
        assert!(q.exact());
        let mut r = super::Quantiles::default();
        r.add(3);
        r.merge(&q);
        assert_eq!(r.count(), 7);
        assert_eq!(r.percentiles(&[0.5]), [Some(3)]);
    }

    #[test]
    fn quantiles_past_the_distinct_limit_stay_within_a_thousandth() {
        let mut q = super::Quantiles::default();
        let n = super::MAX_DISTINCT as u64 * 2;
        for i in 0..n {
            q.add(1_000_000 + i * 7);
        }
        assert!(!q.exact());
        assert!(q.counts.len() <= 64 << super::COARSE_BITS);
        let exact = 1_000_000 + (n / 2 - 1) * 7;
        let got = q.percentiles(&[0.5])[0].unwrap();
        assert!(
            got <= exact && ((exact - got) as f64) < exact as f64 * 1e-3,
            "{got} {exact}"
        );
        // Small values stay exact however many others there are.
        q.add(17);
        assert_eq!(q.percentiles(&[0.0])[0], Some(17));
    }

    use super::*;

    /// Partitions whose metrics are small, repeated, large, and (sizes)
    /// past the estimated histogram's last bucket, from a fixed seed.
    fn partitions(n: usize, mut seed: u64) -> Vec<PartitionStats> {
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        (0..n)
            .map(|i| {
                let r = next();
                let size = match r % 7 {
                    0 => r >> 20,
                    1 if i % 1000 == 0 => u64::MAX - (r & 0xff),
                    2 | 3 => 4096 * (r >> 54),
                    _ => 30 + r % 50,
                };
                PartitionStats {
                    size,
                    rows: (r >> 8) % 5,
                    cells: if r & 1 == 0 { (r >> 16) % 100_000 } else { 3 },
                    tombstones: Tombstones {
                        row: (r >> 24) % 3,
                        cell: (r >> 32) % 200,
                        ..Default::default()
                    },
                    expired_cells: u64::from(r % 11 == 0),
                    ..Default::default()
                }
            })
            .collect()
    }

    /// What the `partitions` command prints of a summary.
    fn printed(s: &Summary) -> impl std::fmt::Debug + PartialEq {
        let mut qs: Vec<f64> = PERCENTILES.iter().map(|p| p.1).collect();
        qs.extend([0.0, 0.001, 0.25, 1.0]);
        let hists = [&s.size, &s.rows, &s.cells, &s.tombstones];
        let metrics: Vec<_> = (0..4)
            .map(|i| {
                let h = hists[i];
                (
                    s.exact[i].percentiles(&qs),
                    s.exact[i].exact(),
                    s.exact[i].count(),
                    qs.iter().map(|&q| h.percentile(q)).collect::<Vec<_>>(),
                    h.nonzero().collect::<Vec<_>>(),
                    (h.count(), h.overflow()),
                )
            })
            .collect();
        (s.count, s.extremes, metrics)
    }

    /// Cut `ps` at `cuts`, summarise each piece apart and merge them in order.
    fn merged(ps: &[PartitionStats], cuts: &[usize]) -> Summary {
        let mut all = Summary::default();
        let mut start = 0;
        for &end in cuts.iter().chain([&ps.len()]) {
            let mut piece = Summary::default();
            for p in &ps[start..end] {
                piece.add(p);
            }
            all.merge(&piece);
            start = end;
        }
        all
    }

    #[test]
    fn merged_summaries_are_the_summary_of_all_their_partitions() {
        let ps = partitions(20_000, 0x9e37_79b9_7f4a_7c15);
        let mut one = Summary::default();
        for p in &ps {
            one.add(p);
        }
        assert!(one.size.overflow() > 0 && one.extremes.is_some());
        for cuts in [
            &[][..],
            &[0, 0, 1, 2, 1000, 1000, 7777, 19_999],
            &[5000, 10_000, 15_000],
            &[20_000],
        ] {
            let m = merged(&ps, cuts);
            assert_eq!(printed(&m), printed(&one), "cut at {cuts:?}");
            assert_eq!(m, one, "cut at {cuts:?}");
        }
        // Nothing merged into nothing.
        assert_eq!(merged(&[], &[0, 0]), Summary::default());
    }

    /// Past the distinct values kept exactly, a piece can be coarse alone,
    /// or become coarse only once merged, as adding one by one does.
    #[test]
    fn merged_summaries_turn_coarse_where_their_partitions_would() {
        let n = MAX_DISTINCT * 2 + 1000;
        let ps: Vec<PartitionStats> = partitions(n, 7)
            .into_iter()
            .enumerate()
            .map(|(i, p)| PartitionStats {
                size: i as u64 * 4097 + p.size % 1000,
                ..p
            })
            .collect();
        let mut one = Summary::default();
        for p in &ps {
            one.add(p);
        }
        assert!(!one.exact[0].exact() && one.exact[1].exact());
        let d = MAX_DISTINCT;
        // Pieces exact alone and coarse once merged; then a coarse piece
        // merged into an exact summary, and exact ones into a coarse one.
        for cuts in [&[d / 2, d, d + d / 2][..], &[100, d + 200, d + 300]] {
            let m = merged(&ps, cuts);
            assert_eq!(printed(&m), printed(&one), "cut at {cuts:?}");
            assert_eq!(m, one, "cut at {cuts:?}");
        }
    }

    #[test]
    fn offsets_grow_as_cassandras() {
        let h = EstimatedHistogram::new(10, true);
        // EstimatedHistogram.newOffsets(10, true)
        assert_eq!(h.offsets, vec![0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12]);
        let h = EstimatedHistogram::for_sizes();
        assert_eq!(h.offsets.len(), 156);
        // The comment in SSTablePartitions: "EH of 155 can track a max value of 3520571548412".
        assert_eq!(*h.offsets.last().unwrap(), 3_520_571_548_412);
        assert_eq!(
            *EstimatedHistogram::for_counts().offsets.last().unwrap(),
            4_139_110_981
        );
    }

    #[test]
    fn an_older_live_sstable_blocks_an_expired_one() {
        let l = |min, max, ldt| Lifetimes {
            min_timestamp: min,
            max_timestamp: max,
            max_local_deletion_time: ldt,
        };
        let ssts = [
            l(100, 200, 50),       // expired at 60
            l(150, 300, i64::MAX), // live, older data than 0's newest: blocks 0
            l(250, 400, i64::MAX), // live but newer than 0: no block
            l(10, 20, 40),         // expired, blocked by nothing live older than 20
            l(5, 500, 60),         // at gc_before exactly: neither expired nor blocking
        ];
        assert_eq!(expired_blockers(&ssts, 60), vec![(1, vec![0])]);
        // Later, sstable 4 is expired too and 1 blocks both.
        assert_eq!(
            expired_blockers(&ssts, 61),
            vec![(1, vec![0, 4]), (2, vec![4])]
        );
    }

    #[test]
    fn percentiles_answer_bucket_bounds() {
        let mut h = EstimatedHistogram::for_sizes();
        assert_eq!(h.percentile(0.5), Some(0));
        for v in [1, 9, 9, 100, 1000] {
            h.add(v);
        }
        // ceil(5 * .5) = 3rd value: 9 lands in the bucket bounded by 10.
        assert_eq!(h.percentile(0.5), Some(10));
        assert_eq!(h.percentile(0.2), Some(1));
        assert!(h.percentile(0.999).unwrap() >= 1000);
        h.add(u64::MAX);
        assert_eq!(h.percentile(0.5), None);
    }
}
