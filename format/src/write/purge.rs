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

use crate::clustering::BoundKind;
use crate::data::model::cell_flags;
use crate::data::MarkerDeletion;
use crate::deletion::DeletionTime;
use crate::merge::{MCell, MColumnData, MMarker, MRow};

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
    fn cell(&mut self, mut c: MCell) -> Option<MCell> {
        let expired = c.is_expiring()
            && !c.is_deleted()
            && c.local_deletion_time.is_some_and(|t| self.now >= t);
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
            c.value.clear();
            // The tombstone is purged in turn (`.purge(purger, nowInSec)`).
            if c.local_deletion_time.is_some_and(|t| self.purgeable(t)) {
                self.counts.cells += 1;
                return None;
            }
        }
        Some(c)
    }

    /// `BTreeRow.purge`: `None` when nothing is left of a clustered row (a
    /// static row is kept, possibly empty).
    pub fn row(&mut self, mut r: MRow) -> Option<MRow> {
        if let Some(l) = r.liveness {
            let live = !l.expired && l.local_expiration_time.is_none_or(|t| self.now < t);
            if !live && self.purgeable(l.local_expiration_time.unwrap_or(i64::MIN)) {
                r.liveness = None;
                self.counts.rows += 1;
            }
        }
        if r.deletion.is_some_and(|d| self.deletion(d.time)) {
            r.deletion = None;
            self.counts.rows += 1;
        }
        let cells = std::mem::take(&mut r.cells);
        for cd in cells {
            match cd {
                MColumnData::Simple { column, cell } => {
                    if let Some(cell) = self.cell(cell) {
                        r.cells.push(MColumnData::Simple { column, cell });
                    }
                }
                MColumnData::Complex {
                    column,
                    deletion,
                    cells,
                } => {
                    let deletion = deletion.filter(|d| !self.deletion(*d));
                    let cells: Vec<MCell> =
                        cells.into_iter().filter_map(|c| self.cell(c)).collect();
                    if deletion.is_some() || !cells.is_empty() {
                        r.cells.push(MColumnData::Complex {
                            column,
                            deletion,
                            cells,
                        });
                    }
                }
            }
        }
        if r.is_empty() && !r.is_static() {
            return None;
        }
        Some(r)
    }

    /// A range tombstone marker: dropped when its deletions are purged, a
    /// boundary with one purged side cut to the other side's bound.
    pub fn marker(&mut self, mut m: MMarker) -> Option<MMarker> {
        match m.deletion {
            MarkerDeletion::Bound(d) => {
                if self.deletion(d) {
                    self.counts.markers += 1;
                    return None;
                }
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
                match (pe, ps) {
                    (true, true) => {
                        self.counts.markers += 1;
                        return None;
                    }
                    (true, false) => {
                        self.counts.markers += 1;
                        m.bound.kind = start_kind;
                        m.deletion = MarkerDeletion::Bound(start);
                    }
                    (false, true) => {
                        self.counts.markers += 1;
                        m.bound.kind = end_kind;
                        m.deletion = MarkerDeletion::Bound(end);
                    }
                    (false, false) => {}
                }
            }
        }
        Some(m)
    }
}
