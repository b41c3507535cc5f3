//! What a node returns of the fragments at a given time ("now"): which row
//! markers, cells and collection elements are live once the deletions that
//! cover them and TTL expiry are applied.
//!
//! These are the rules of Cassandra's read path (`Row.purge` with
//! `PURGE_ALL`, `Cell.isLive`, `LivenessInfo.isLive`, `DeletionTime.deletes`)
//! for the data of one stream of fragments: a reader of one sstable, or a
//! merged stream. A row is returned by a `SELECT` when it has a live row
//! marker or at least one live cell ([`live_row`] gives `None` otherwise).
//!
//! Times: `now` is in seconds since the epoch, like every local deletion and
//! expiration time of the fragments.

use crate::deletion::DeletionTime;

use super::model::{Cell, ColumnData, LivenessInfo, Row};
use super::schema::Column;

/// True when deletion `d` deletes data written at `timestamp`
/// (`DeletionTime.deletes`: at or before the deletion's timestamp).
#[inline]
pub fn deletes(d: &DeletionTime, timestamp: i64) -> bool {
    !d.is_live() && timestamp <= d.marked_for_delete_at
}

/// The deletion that wins of `a` and `b` (`DeletionTime.supersedes`: the
/// higher timestamp, then the higher local deletion time).
#[inline]
pub fn stronger(a: DeletionTime, b: DeletionTime) -> DeletionTime {
    if a.is_live() {
        return b;
    }
    if b.is_live() {
        return a;
    }
    if (b.marked_for_delete_at, b.local_deletion_time)
        > (a.marked_for_delete_at, a.local_deletion_time)
    {
        b
    } else {
        a
    }
}

/// True when the row marker is live at `now` (`LivenessInfo.isLive`): not
/// the expired-liveness marker, and not past its expiration time when it
/// has a TTL.
#[inline]
pub fn marker_is_live(l: &LivenessInfo, now: i64) -> bool {
    if l.expired {
        return false;
    }
    match (l.ttl, l.local_expiration_time) {
        (Some(_), Some(t)) => now < t,
        _ => true,
    }
}

/// True when the cell is live at `now` (`Cell.isLive`): not a tombstone, and
/// an expiring cell only before its expiration time.
#[inline]
pub fn cell_is_live(c: &Cell<'_>, now: i64) -> bool {
    if c.is_deleted() {
        return false;
    }
    if c.is_expiring() {
        return c.local_deletion_time.is_none_or(|t| now < t);
    }
    true
}

/// The live data of one present column of a row.
#[derive(Debug, Clone, PartialEq)]
pub enum LiveColumn<'r, 'a> {
    /// A simple column and its live cell.
    Simple {
        /// The column.
        column: &'a Column,
        /// Its cell.
        cell: &'r Cell<'a>,
    },
    /// A complex column (non-frozen collection or UDT) and its live elements,
    /// in path order (never empty).
    Complex {
        /// The column.
        column: &'a Column,
        /// The live element cells.
        cells: Vec<&'r Cell<'a>>,
    },
}

impl<'a> LiveColumn<'_, 'a> {
    /// The column.
    pub fn column(&self) -> &'a Column {
        match self {
            LiveColumn::Simple { column, .. } | LiveColumn::Complex { column, .. } => column,
        }
    }
}

/// What is live of a row.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveRow<'r, 'a> {
    /// The row marker (primary-key liveness, written by INSERT) is live.
    pub marker: bool,
    /// The columns with live data, in the row's data order.
    pub columns: Vec<LiveColumn<'r, 'a>>,
}

/// The row deletion that applies to `row`'s own data: none when it is
/// shadowable and the row marker is newer (`Row.Deletion.isShadowedBy`).
fn row_deletion(row: &Row<'_>) -> DeletionTime {
    let marker_ts = row.liveness.map(|l| l.timestamp);
    let shadowed = |d: &DeletionTime| marker_ts.is_some_and(|ts| ts > d.marked_for_delete_at);
    let mut d = DeletionTime::LIVE;
    if let Some(rd) = row.deletion {
        if !(rd.shadowable && shadowed(&rd.time)) {
            d = rd.time;
        }
    }
    if let Some(sd) = row.scylla_shadowable_deletion {
        if !shadowed(&sd) {
            d = stronger(d, sd);
        }
    }
    d
}

/// The live data of `row` at `now`, or `None` when nothing of it is live
/// (the row is not returned by a `SELECT`).
///
/// `covering` is the deletion that covers the row from outside it: the
/// partition deletion, or the range tombstone open around the row when that
/// is [`stronger`] (static rows: the partition deletion only). The row's own
/// deletion, each complex column's deletion and expiry are applied here.
pub fn live_row<'r, 'a>(
    row: &'r Row<'a>,
    covering: DeletionTime,
    now: i64,
) -> Option<LiveRow<'r, 'a>> {
    let active = stronger(covering, row_deletion(row));
    let marker = row
        .liveness
        .is_some_and(|l| marker_is_live(&l, now) && !deletes(&active, l.timestamp));
    let live = |c: &Cell<'_>, d: &DeletionTime| cell_is_live(c, now) && !deletes(d, c.timestamp);
    let mut columns = Vec::new();
    for cd in &row.cells {
        match cd {
            ColumnData::Simple { column, cell } => {
                if live(cell, &active) {
                    columns.push(LiveColumn::Simple { column, cell });
                }
            }
            ColumnData::Complex {
                column,
                complex_deletion,
                cells,
            } => {
                let d = stronger(active, complex_deletion.unwrap_or(DeletionTime::LIVE));
                let cells: Vec<&Cell<'a>> = cells.iter().filter(|c| live(c, &d)).collect();
                if !cells.is_empty() {
                    columns.push(LiveColumn::Complex { column, cells });
                }
            }
        }
    }
    (marker || !columns.is_empty()).then_some(LiveRow { marker, columns })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::clustering::{BoundKind, ClusteringPrefix};
    use crate::data::model::{cell_flags, RowDeletion, RowFlags};
    use crate::data::DataPos;
    use crate::statistics::ColumnDef;
    use crate::types::CqlType;

    fn del(ts: i64, ldt: i64) -> DeletionTime {
        DeletionTime {
            marked_for_delete_at: ts,
            local_deletion_time: ldt,
        }
    }

    fn col(name: &str, ty: &str, index: usize) -> Column {
        let ty = CqlType::parse(ty).unwrap();
        Column {
            index,
            complex: ty.is_multi_cell(),
            counter: false,
            fixed_len: None,
            def: ColumnDef {
                name: name.into(),
                name_bytes: name.as_bytes().to_vec(),
                type_string: String::new(),
                ty,
            },
        }
    }

    fn cell(flags: u8, ts: i64, ldt: Option<i64>, path: Option<&'static [u8]>) -> Cell<'static> {
        Cell {
            flags,
            timestamp: ts,
            local_deletion_time: ldt,
            ttl: ldt.map(|_| 10),
            path,
            value: b"v",
            counter_column: false,
        }
    }

    fn row<'a>(liveness: Option<LivenessInfo>, cells: Vec<ColumnData<'a>>) -> Row<'a> {
        Row {
            position: DataPos(0),
            size: 0,
            clustering: ClusteringPrefix {
                kind: BoundKind::Clustering,
                values: vec![],
            },
            flags: RowFlags::default(),
            row_size: 0,
            prev_unfiltered_size: 0,
            liveness,
            deletion: None,
            scylla_shadowable_deletion: None,
            cells,
        }
    }

    fn marker(ts: i64) -> Option<LivenessInfo> {
        Some(LivenessInfo {
            timestamp: ts,
            ttl: None,
            local_expiration_time: None,
            expired: false,
        })
    }

    #[test]
    fn deletions_cover_data_at_or_before_their_timestamp() {
        let d = del(10, 100);
        assert!(deletes(&d, 10));
        assert!(deletes(&d, 9));
        assert!(!deletes(&d, 11));
        assert!(!deletes(&DeletionTime::LIVE, i64::MIN));
        assert_eq!(stronger(del(5, 1), del(4, 9)), del(5, 1));
        assert_eq!(stronger(del(5, 1), del(5, 2)), del(5, 2));
        assert_eq!(stronger(DeletionTime::LIVE, del(1, 1)), del(1, 1));
    }

    #[test]
    fn expiry_is_judged_at_now() {
        let c = cell(cell_flags::IS_EXPIRING, 1, Some(1000), None);
        assert!(cell_is_live(&c, 999));
        assert!(!cell_is_live(&c, 1000));
        assert!(!cell_is_live(
            &cell(cell_flags::IS_DELETED, 1, Some(5), None),
            0
        ));
        let l = LivenessInfo {
            timestamp: 1,
            ttl: Some(10),
            local_expiration_time: Some(1000),
            expired: false,
        };
        assert!(marker_is_live(&l, 999));
        assert!(!marker_is_live(&l, 1000));
        assert!(!marker_is_live(&LivenessInfo { expired: true, ..l }, 0));
    }

    #[test]
    fn row_marker_or_one_live_cell_makes_a_row() {
        let v = col("v", "org.apache.cassandra.db.marshal.Int32Type", 0);
        // UPDATE-only row: no marker, one live cell.
        let r = row(
            None,
            vec![ColumnData::Simple {
                column: &v,
                cell: cell(0, 5, None, None),
            }],
        );
        let l = live_row(&r, DeletionTime::LIVE, 0).unwrap();
        assert!(!l.marker);
        assert_eq!(l.columns.len(), 1);
        // A partition deletion at the cell's timestamp hides it.
        assert!(live_row(&r, del(5, 1), 0).is_none());
        // Only a tombstone cell: nothing live.
        let r = row(
            None,
            vec![ColumnData::Simple {
                column: &v,
                cell: cell(cell_flags::IS_DELETED, 5, Some(1), None),
            }],
        );
        assert!(live_row(&r, DeletionTime::LIVE, 0).is_none());
        // Marker only (INSERT of the key alone).
        let r = row(marker(3), vec![]);
        assert!(live_row(&r, DeletionTime::LIVE, 0).unwrap().marker);
        assert!(live_row(&r, del(3, 1), 0).is_none());
    }

    #[test]
    fn row_and_complex_deletions_apply_to_their_data() {
        let s = col(
            "s",
            "org.apache.cassandra.db.marshal.SetType(org.apache.cassandra.db.marshal.Int32Type)",
            0,
        );
        let mut r = row(
            marker(20),
            vec![ColumnData::Complex {
                column: &s,
                complex_deletion: Some(del(10, 1)),
                cells: vec![
                    cell(0, 10, None, Some(b"\0\0\0\x01")),
                    cell(0, 11, None, Some(b"\0\0\0\x02")),
                ],
            }],
        );
        let l = live_row(&r, DeletionTime::LIVE, 0).unwrap();
        match &l.columns[0] {
            LiveColumn::Complex { cells, .. } => {
                assert_eq!(cells.len(), 1);
                assert_eq!(cells[0].timestamp, 11);
            }
            other => panic!("{other:?}"),
        }
        // A row deletion newer than everything: nothing left.
        r.deletion = Some(RowDeletion {
            time: del(30, 1),
            shadowable: false,
        });
        assert!(live_row(&r, DeletionTime::LIVE, 0).is_none());
        // The same deletion, shadowable, is shadowed by a newer marker.
        r.deletion = Some(RowDeletion {
            time: del(15, 1),
            shadowable: true,
        });
        let l = live_row(&r, DeletionTime::LIVE, 0).unwrap();
        assert!(l.marker);
    }
}
