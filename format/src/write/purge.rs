//! What a compaction does to merged data besides merging it (C\*
//! `AbstractCell.purge`, `BTreeRow.purge`, `ComplexColumnData.purge`,
//! `PurgeFunction`, `CompactionController.getPurgeEvaluator`):
//!
//! * an expiring cell that has expired at `now` becomes a tombstone with the
//!   same timestamp and path whose local deletion time is its creation time
//!   (`localDeletionTime - ttl`, as `AbstractCell.purge` writes it);
//! * with a `gc_before` (`now - gc_grace`), every tombstone whose local
//!   deletion time is before it is dropped: cell tombstones (converted ones
//!   included), expired row markers, row, complex, range and partition
//!   deletions; a boundary marker with one purged side becomes the bound of
//!   the other side; a row left empty, and a partition left with nothing,
//!   go too.
//!
//! Purging a tombstone is safe only when no data it shadows can exist
//! outside the compaction. A node checks the sstables and memtables that
//! overlap but are not compacted (`maxPurgeableTimestamp`); here every input
//! is compacted and nothing else is known, so the rule is Cassandra's with
//! no overlapping data outside: purgeable iff `local_deletion_time <
//! gc_before`. Sstables of the table left out of the compaction may hold
//! data a purged tombstone shadowed.
//!
//! [`PurgeSink`] applies a [`Purger`] to the fragments of a merged read
//! on their way to another engine [`Sink`]:
//!
//! ```text
//! MergeInputs::dump ─► PurgeSink (Purger) ─► WriterSink ─► Route ─► SstableWriter(s)
//! ```

use std::borrow::Cow;
use std::io;

use crate::clustering::BoundKind;
use crate::data::model::cell_flags;
use crate::data::{Cell, ColumnData, LivenessInfo, MarkerDeletion, RangeTombstoneMarker, Row};
use crate::deletion::DeletionTime;
use crate::engine::{Sink, Table};

/// Counts of what a [`Purger`] changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PurgeCounts {
    /// Expired cells turned into tombstones.
    pub expired_to_tombstones: u64,
    /// Cell tombstones dropped.
    pub cells: u64,
    /// Row deletions and expired row markers dropped.
    pub rows: u64,
    /// Range tombstone markers dropped or cut to one side.
    pub markers: u64,
    /// Partition deletions dropped.
    pub partitions: u64,
}

/// The compaction's purge rules at one instant (see the module docs).
#[derive(Debug, Clone)]
pub struct Purger {
    /// Seconds since the epoch the expiry is judged at.
    pub now: i64,
    /// Tombstones with a local deletion time before this are dropped
    /// (`None`: nothing is dropped).
    pub gc_before: Option<i64>,
    /// What was changed so far.
    pub counts: PurgeCounts,
}

impl Purger {
    /// Purge rules at `now`; `gc_before = Some(now - gc_grace)` to drop
    /// tombstones.
    pub fn new(now: i64, gc_before: Option<i64>) -> Purger {
        Purger {
            now,
            gc_before,
            counts: PurgeCounts::default(),
        }
    }

    fn purgeable(&self, local_deletion_time: i64) -> bool {
        self.gc_before.is_some_and(|g| local_deletion_time < g)
    }

    fn deletion(&self, d: DeletionTime) -> bool {
        !d.is_live() && self.purgeable(d.local_deletion_time)
    }

    /// A row marker that is dead at `now` and purgeable.
    fn dead_marker(&self, l: &LivenessInfo) -> bool {
        let live = !l.expired && l.local_expiration_time.is_none_or(|t| self.now < t);
        !live && self.purgeable(l.local_expiration_time.unwrap_or(i64::MIN))
    }

    /// An expiring cell that has expired at `now`.
    fn expired(&self, c: &Cell<'_>) -> bool {
        c.is_expiring() && !c.is_deleted() && c.local_deletion_time.is_some_and(|t| self.now >= t)
    }

    /// [`Purger::cell`] would change or drop `c`.
    fn cell_changes(&self, c: &Cell<'_>) -> bool {
        self.expired(c)
            || (c.is_deleted() && self.purgeable(c.local_deletion_time.unwrap_or(i64::MIN)))
    }

    /// [`Purger::row`] would change or drop `r`.
    fn row_changes(&self, r: &Row<'_>) -> bool {
        r.liveness.as_ref().is_some_and(|l| self.dead_marker(l))
            || r.deletion.is_some_and(|d| self.deletion(d.time))
            || (is_empty(r) && !r.is_static())
            || r.cells.iter().any(|cd| match cd {
                ColumnData::Simple { cell, .. } => self.cell_changes(cell),
                ColumnData::Complex {
                    complex_deletion,
                    cells,
                    ..
                } => {
                    complex_deletion.is_some_and(|d| self.deletion(d))
                        || (complex_deletion.is_none() && cells.is_empty())
                        || cells.iter().any(|c| self.cell_changes(c))
                }
            })
    }

    /// The partition deletion to keep.
    pub fn partition_deletion(&mut self, d: DeletionTime) -> DeletionTime {
        if self.deletion(d) {
            self.counts.partitions += 1;
            DeletionTime::LIVE
        } else {
            d
        }
    }

    /// `AbstractCell.purge`.
    fn cell<'a>(&mut self, mut c: Cell<'a>) -> Option<Cell<'a>> {
        let expired = self.expired(&c);
        if !(c.is_deleted() || expired) {
            return Some(c);
        }
        let ldt = c.local_deletion_time.unwrap_or(i64::MIN);
        if self.purgeable(ldt) {
            self.counts.cells += 1;
            return None;
        }
        if expired {
            self.counts.expired_to_tombstones += 1;
            c.local_deletion_time = Some(ldt - c.ttl.unwrap_or(0));
            c.ttl = None;
            c.flags = (c.flags & !cell_flags::IS_EXPIRING)
                | cell_flags::IS_DELETED
                | cell_flags::HAS_EMPTY_VALUE;
            c.value = &[];
            // The tombstone is purged in turn (`.purge(purger, nowInSec)`).
            if c.local_deletion_time.is_some_and(|t| self.purgeable(t)) {
                self.counts.cells += 1;
                return None;
            }
        }
        Some(c)
    }

    /// `BTreeRow.purge`: `None` when nothing is left of a clustered row (a
    /// static row is kept, possibly empty). A row nothing applies to is
    /// returned as it is, not copied.
    pub fn row<'r, 'a>(&mut self, r: &'r Row<'a>) -> Option<Cow<'r, Row<'a>>> {
        if !self.row_changes(r) {
            return Some(Cow::Borrowed(r));
        }
        let mut r = r.clone();
        if r.liveness.as_ref().is_some_and(|l| self.dead_marker(l)) {
            r.liveness = None;
            self.counts.rows += 1;
        }
        if r.deletion.is_some_and(|d| self.deletion(d.time)) {
            r.deletion = None;
            self.counts.rows += 1;
        }
        let cells = std::mem::take(&mut r.cells);
        for cd in cells {
            match cd {
                ColumnData::Simple { column, cell } => {
                    if let Some(cell) = self.cell(cell) {
                        r.cells.push(ColumnData::Simple { column, cell });
                    }
                }
                ColumnData::Complex {
                    column,
                    complex_deletion,
                    cells,
                } => {
                    let complex_deletion = complex_deletion.filter(|d| !self.deletion(*d));
                    let cells: Vec<Cell<'a>> =
                        cells.into_iter().filter_map(|c| self.cell(c)).collect();
                    if complex_deletion.is_some() || !cells.is_empty() {
                        r.cells.push(ColumnData::Complex {
                            column,
                            complex_deletion,
                            cells,
                        });
                    }
                }
            }
        }
        if is_empty(&r) && !r.is_static() {
            return None;
        }
        Some(Cow::Owned(r))
    }

    /// A range tombstone marker: dropped when its deletions are purged, a
    /// boundary with one purged side cut to the other side's bound.
    pub fn marker<'r, 'a>(
        &mut self,
        m: &'r RangeTombstoneMarker<'a>,
    ) -> Option<Cow<'r, RangeTombstoneMarker<'a>>> {
        match m.deletion {
            MarkerDeletion::Bound(d) => {
                if self.deletion(d) {
                    self.counts.markers += 1;
                    return None;
                }
                Some(Cow::Borrowed(m))
            }
            MarkerDeletion::Boundary { end, start } => {
                let (pe, ps) = (self.deletion(end), self.deletion(start));
                // ExclEnd/InclStart or InclEnd/ExclStart.
                let (end_kind, start_kind) = if m.bound.kind == BoundKind::ExclEndInclStartBoundary
                {
                    (BoundKind::ExclEndBound, BoundKind::InclStartBound)
                } else {
                    (BoundKind::InclEndBound, BoundKind::ExclStartBound)
                };
                let (kind, kept) = match (pe, ps) {
                    (true, true) => {
                        self.counts.markers += 1;
                        return None;
                    }
                    (true, false) => (start_kind, start),
                    (false, true) => (end_kind, end),
                    (false, false) => return Some(Cow::Borrowed(m)),
                };
                self.counts.markers += 1;
                let mut m = m.clone();
                m.bound.kind = kind;
                m.deletion = MarkerDeletion::Bound(kept);
                Some(Cow::Owned(m))
            }
        }
    }
}

/// No liveness, no deletion, no data (`Row.isEmpty`).
fn is_empty(r: &Row<'_>) -> bool {
    r.liveness.is_none() && r.deletion.is_none() && r.cells.is_empty()
}

/// An engine [`Sink`] that purges what passes through it ([`Purger`]) and
/// hands what is left to `S`. A partition is started in `S` only once
/// something of it is kept (a partition deletion, a non-empty static row,
/// a row or a marker): a partition left with nothing is not passed on.
pub struct PurgeSink<S> {
    inner: S,
    purger: Purger,
    /// The current partition's key, deletion (purged) and header end, until
    /// it is started in `inner`.
    key: Vec<u8>,
    deletion: DeletionTime,
    header_end: u64,
    started: bool,
}

impl<S: Sink> PurgeSink<S> {
    /// Purge with `purger` into `inner`.
    pub fn new(inner: S, purger: Purger) -> Self {
        PurgeSink {
            inner,
            purger,
            key: Vec::new(),
            deletion: DeletionTime::LIVE,
            header_end: 0,
            started: false,
        }
    }

    /// What was purged so far.
    pub fn counts(&self) -> PurgeCounts {
        self.purger.counts
    }

    /// The sink purged partitions go to.
    pub fn inner_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// The sink purged partitions went to.
    pub fn into_inner(self) -> S {
        self.inner
    }

    /// Start the held partition in `inner`, once.
    fn begin(&mut self, t: &Table<'_>) -> io::Result<()> {
        if !self.started {
            self.started = true;
            self.inner
                .partition_start(t, &self.key, &self.deletion, self.header_end)?;
        }
        Ok(())
    }
}

impl<S: Sink> Sink for PurgeSink<S> {
    fn takes_partition(&mut self, t: &Table<'_>, key: &[u8]) -> io::Result<bool> {
        self.inner.takes_partition(t, key)
    }
    fn partition_start(
        &mut self,
        t: &Table<'_>,
        key: &[u8],
        deletion: &DeletionTime,
        header_end: u64,
    ) -> io::Result<()> {
        self.key.clear();
        self.key.extend_from_slice(key);
        self.deletion = self.purger.partition_deletion(*deletion);
        self.header_end = header_end;
        self.started = false;
        if !self.deletion.is_live() {
            self.begin(t)?;
        }
        Ok(())
    }
    fn static_row(&mut self, t: &Table<'_>, row: &Row<'_>, position: u64) -> io::Result<()> {
        // An empty static row is not written.
        let Some(r) = self.purger.row(row).filter(|r| !is_empty(r)) else {
            return Ok(());
        };
        self.begin(t)?;
        self.inner.static_row(t, &r, position)
    }
    fn row(&mut self, t: &Table<'_>, row: &Row<'_>) -> io::Result<()> {
        let Some(r) = self.purger.row(row) else {
            return Ok(());
        };
        self.begin(t)?;
        self.inner.row(t, &r)
    }
    fn marker(&mut self, t: &Table<'_>, m: &RangeTombstoneMarker<'_>) -> io::Result<()> {
        let Some(m) = self.purger.marker(m) else {
            return Ok(());
        };
        self.begin(t)?;
        self.inner.marker(t, &m)
    }
    fn partition_end(&mut self, t: &Table<'_>) -> io::Result<()> {
        if self.started {
            self.inner.partition_end(t)?;
        }
        Ok(())
    }
    fn abort_partition(&mut self, t: &Table<'_>) -> io::Result<()> {
        if self.started {
            self.inner.abort_partition(t)?;
        }
        Ok(())
    }
    fn last_partition_written(&self) -> bool {
        self.started && self.inner.last_partition_written()
    }
    fn key_only(&mut self, t: &Table<'_>, key: &[u8]) -> io::Result<()> {
        self.inner.key_only(t, key)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::clustering::ClusteringPrefix;
    use crate::data::model::flags;
    use crate::data::{DataPos, RowDeletion, RowFlags};
    use crate::statistics::SerializationHeader;
    use crate::token::Partitioner;
    use crate::types::CqlType;

    /// What reaches the sink behind the purge.
    #[derive(Default)]
    struct Record(Vec<String>);

    impl Sink for Record {
        fn partition_start(
            &mut self,
            _t: &Table<'_>,
            key: &[u8],
            deletion: &DeletionTime,
            _header_end: u64,
        ) -> io::Result<()> {
            self.0
                .push(format!("start {key:?} live={}", deletion.is_live()));
            Ok(())
        }
        fn static_row(&mut self, _t: &Table<'_>, _row: &Row<'_>, _p: u64) -> io::Result<()> {
            self.0.push("static".into());
            Ok(())
        }
        fn row(&mut self, _t: &Table<'_>, row: &Row<'_>) -> io::Result<()> {
            self.0
                .push(format!("row deleted={}", row.deletion.is_some()));
            Ok(())
        }
        fn partition_end(&mut self, _t: &Table<'_>) -> io::Result<()> {
            self.0.push("end".into());
            Ok(())
        }
    }

    fn header() -> SerializationHeader {
        let int = CqlType::parse("org.apache.cassandra.db.marshal.Int32Type").unwrap();
        SerializationHeader {
            min_timestamp: 0,
            min_local_deletion_time: 0,
            min_ttl: 0,
            raw_deltas: (0, 0, 0),
            partition_key_type: int.clone(),
            partition_key_type_string: "org.apache.cassandra.db.marshal.Int32Type".into(),
            clustering_types: vec![int],
            clustering_type_strings: vec!["org.apache.cassandra.db.marshal.Int32Type".into()],
            static_columns: Vec::new(),
            regular_columns: Vec::new(),
        }
    }

    fn deleted_at(local_deletion_time: i64) -> DeletionTime {
        DeletionTime {
            marked_for_delete_at: 1,
            local_deletion_time,
        }
    }

    fn row(
        kind: BoundKind,
        liveness: Option<LivenessInfo>,
        deletion: Option<DeletionTime>,
    ) -> Row<'static> {
        let (values, ext): (Vec<Option<&'static [u8]>>, u8) = match kind {
            BoundKind::StaticClustering => (Vec::new(), flags::EXT_IS_STATIC),
            _ => (vec![Some(&[0, 0, 0, 1])], 0),
        };
        Row {
            position: DataPos(0),
            size: 0,
            clustering: ClusteringPrefix { kind, values },
            flags: RowFlags {
                flags: if ext != 0 { flags::EXTENSION_FLAG } else { 0 },
                ext,
            },
            row_size: 0,
            prev_unfiltered_size: 0,
            liveness,
            deletion: deletion.map(|time| RowDeletion {
                time,
                shadowable: false,
            }),
            scylla_shadowable_deletion: None,
            cells: Vec::new(),
        }
    }

    /// A partition the purge leaves nothing of never reaches the sink; one
    /// with a purged deletion and a live row starts live, at its row.
    #[test]
    fn purge_sink_starts_a_partition_only_for_what_is_kept() {
        let h = header();
        let t = Table::new(&h, Partitioner::Murmur3, 100);
        let mut sink = PurgeSink::new(Record::default(), Purger::new(100, Some(50)));
        let live = LivenessInfo {
            timestamp: 1,
            ttl: None,
            local_expiration_time: None,
            expired: false,
        };
        // Everything purged: a partition deletion, an empty static row, a row deletion.
        sink.partition_start(&t, b"a", &deleted_at(10), 0).unwrap();
        sink.static_row(&t, &row(BoundKind::StaticClustering, None, None), 0)
            .unwrap();
        let gone = row(BoundKind::Clustering, None, Some(deleted_at(20)));
        sink.row(&t, &gone).unwrap();
        sink.partition_end(&t).unwrap();
        assert!(!sink.last_partition_written());
        // A purged deletion over a live row.
        sink.partition_start(&t, b"b", &deleted_at(10), 0).unwrap();
        sink.row(&t, &row(BoundKind::Clustering, Some(live), None))
            .unwrap();
        sink.partition_end(&t).unwrap();
        assert!(sink.last_partition_written());
        // A deletion too recent to purge, alone.
        sink.partition_start(&t, b"c", &deleted_at(60), 0).unwrap();
        sink.partition_end(&t).unwrap();
        let counts = sink.counts();
        assert_eq!((counts.partitions, counts.rows), (2, 1));
        assert_eq!(
            sink.into_inner().0,
            [
                "start [98] live=true",
                "row deleted=false",
                "end",
                "start [99] live=false",
                "end"
            ]
        );
    }
}
