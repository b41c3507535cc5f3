//! The owned pieces of a merged partition stream: cells, rows, markers and
//! the [`Unit`]s sources and the merger pass along.

use crate::clustering::BoundKind;
use crate::compare::OwnedPrefix;
use crate::data::model::{cell_flags, flags};
use crate::data::{
    Cell, ColumnData, DataPos, LivenessInfo, MarkerDeletion, RangeTombstoneMarker, Row, RowDeletion,
};
use crate::deletion::DeletionTime;
use crate::read::OwnedClustering;

use super::{merged_flags, MergedSchema};

/// An owned cell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MCell {
    /// Flags ([`cell_flags`]).
    pub flags: u8,
    /// Write timestamp (µs).
    pub timestamp: i64,
    /// Local deletion (tombstones) or expiration (expiring cells) time.
    pub local_deletion_time: Option<i64>,
    /// TTL of expiring cells.
    pub ttl: Option<i64>,
    /// Cell path of complex columns.
    pub path: Option<Vec<u8>>,
    /// Value bytes.
    pub value: Vec<u8>,
    /// The column is a counter column.
    pub counter_column: bool,
}

impl MCell {
    pub(super) fn of(c: &Cell<'_>) -> MCell {
        MCell {
            flags: c.flags,
            timestamp: c.timestamp,
            local_deletion_time: c.local_deletion_time,
            ttl: c.ttl,
            path: c.path.map(<[u8]>::to_vec),
            value: c.value.to_vec(),
            counter_column: c.counter_column,
        }
    }

    /// Tombstone.
    pub fn is_deleted(&self) -> bool {
        self.flags & cell_flags::IS_DELETED != 0
    }

    /// Expiring (TTL'd) cell.
    pub fn is_expiring(&self) -> bool {
        self.flags & cell_flags::IS_EXPIRING != 0
    }

    /// Live at `now_secs` (seconds): not a tombstone, and not expired.
    pub fn is_live(&self, now_secs: i64) -> bool {
        let expired = self.is_expiring() && self.local_deletion_time.is_some_and(|t| t <= now_secs);
        !self.is_deleted() && !expired
    }

    /// A borrowed view.
    pub fn view(&self) -> Cell<'_> {
        // The row-relative flags no longer apply: every field is explicit.
        Cell {
            flags: self.flags & !(cell_flags::USE_ROW_TIMESTAMP | cell_flags::USE_ROW_TTL),
            timestamp: self.timestamp,
            local_deletion_time: self.local_deletion_time,
            ttl: self.ttl,
            path: self.path.as_deref(),
            value: &self.value,
            counter_column: self.counter_column,
        }
    }
}

/// The owned data of one column of a row; `column` indexes the merged
/// schema's static or regular column set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MColumnData {
    /// A simple column.
    Simple {
        /// Index in the merged column set.
        column: usize,
        /// Its cell.
        cell: MCell,
    },
    /// A complex column.
    Complex {
        /// Index in the merged column set.
        column: usize,
        /// Collection deletion, if any.
        deletion: Option<DeletionTime>,
        /// Element cells in path order.
        cells: Vec<MCell>,
    },
}

impl MColumnData {
    /// The column's index in the merged column set.
    pub fn column(&self) -> usize {
        match self {
            MColumnData::Simple { column, .. } | MColumnData::Complex { column, .. } => *column,
        }
    }
}

/// An owned row (static or clustered).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MRow {
    /// Position in the Data.db of its source (of the first contributing
    /// source after a merge).
    pub position: DataPos,
    /// Its size there.
    pub size: u64,
    /// Index of the source it came from (the first contributing one after
    /// a merge).
    pub source: usize,
    /// Clustering (kind `StaticClustering` for the static row).
    pub clustering: OwnedClustering,
    /// Row marker.
    pub liveness: Option<LivenessInfo>,
    /// Row deletion.
    pub deletion: Option<RowDeletion>,
    /// Scylla's shadowable deletion.
    pub scylla_shadowable_deletion: Option<DeletionTime>,
    /// Present columns, in merged data order.
    pub cells: Vec<MColumnData>,
}

impl MRow {
    /// The static row.
    pub fn is_static(&self) -> bool {
        self.clustering.kind == BoundKind::StaticClustering
    }

    /// No liveness, no deletion, no data (`Row.isEmpty`).
    pub fn is_empty(&self) -> bool {
        self.liveness.is_none() && self.deletion.is_none() && self.cells.is_empty()
    }
}

/// An owned range tombstone marker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MMarker {
    /// Position in its source's Data.db.
    pub position: DataPos,
    /// Index of its source (the first contributing one after a merge).
    pub source: usize,
    /// Bound kind and values.
    pub bound: OwnedClustering,
    /// Deletion(s).
    pub deletion: MarkerDeletion,
}

impl MMarker {
    pub(super) fn open(&self) -> DeletionTime {
        match self.deletion {
            MarkerDeletion::Boundary { start, .. } => start,
            MarkerDeletion::Bound(d) if self.bound.kind.is_start() => d,
            MarkerDeletion::Bound(_) => DeletionTime::LIVE,
        }
    }
}

/// One owned piece of a partition stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unit {
    /// Partition header.
    Start {
        /// Serialized partition key.
        key: Vec<u8>,
        /// Partition deletion.
        deletion: DeletionTime,
        /// Position of the partition in its source.
        position: DataPos,
        /// Where its header ends there (0 when unknown).
        header_end: DataPos,
    },
    /// Static row (boxed, as the other big variants: units move through
    /// the merge by value, and most are [`Unit::Held`]).
    Static(Box<MRow>),
    /// Clustered row.
    Row(Box<MRow>),
    /// Range tombstone marker.
    Marker(Box<MMarker>),
    /// A clustered row still in its source's reader ([`HeldRow`]).
    Held(HeldRow),
    /// Partition end.
    End,
}

/// A clustered row left in its source's reader, only its clustering copied
/// out: the source decodes it again when it is needed, owned
/// ([`UnitSource::materialize`](super::UnitSource::materialize)) to be reconciled, or borrowed
/// ([`UnitSource::held_row`](super::UnitSource::held_row)) when it is output as it is stored. Valid
/// until the source's next [`UnitSource::next_unit`](super::UnitSource::next_unit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldRow {
    /// Clustering (kind `Clustering`).
    pub clustering: OwnedPrefix,
    /// The row has a row marker or a deletion, so it is not empty whatever
    /// its cells.
    pub marked: bool,
}

impl MRow {
    /// A borrowed [`Row`] for the renderers, its columns resolved in
    /// `schema`; flags rebuilt from what the row holds.
    pub fn view<'s>(&'s self, schema: &'s MergedSchema) -> Row<'s> {
        let st = self.is_static();
        let complex_deletion = self.cells.iter().any(|c| {
            matches!(
                c,
                MColumnData::Complex {
                    deletion: Some(_),
                    ..
                }
            )
        });
        let row_flags = merged_flags(
            st,
            self.liveness,
            self.deletion,
            self.scylla_shadowable_deletion,
            complex_deletion,
        );
        let cells = self
            .cells
            .iter()
            .filter_map(|cd| {
                let column = schema.column(st, cd.column())?;
                Some(match cd {
                    MColumnData::Simple { cell, .. } => ColumnData::Simple {
                        column,
                        cell: cell.view(),
                    },
                    MColumnData::Complex {
                        deletion, cells, ..
                    } => ColumnData::Complex {
                        column,
                        complex_deletion: *deletion,
                        cells: cells.iter().map(MCell::view).collect(),
                    },
                })
            })
            .collect();
        Row {
            position: self.position,
            size: self.size,
            clustering: self.clustering.as_prefix(),
            flags: row_flags,
            row_size: 0,
            prev_unfiltered_size: 0,
            liveness: self.liveness,
            deletion: self.deletion,
            scylla_shadowable_deletion: self.scylla_shadowable_deletion,
            cells,
        }
    }
}

impl MMarker {
    /// A borrowed [`RangeTombstoneMarker`] for the renderers.
    pub fn view(&self) -> RangeTombstoneMarker<'_> {
        RangeTombstoneMarker {
            position: self.position,
            size: 0,
            flags: flags::IS_MARKER,
            bound: self.bound.as_prefix(),
            marker_size: 0,
            prev_unfiltered_size: 0,
            deletion: self.deletion,
        }
    }

    /// The marker as a reversed stream carries it (see
    /// [`RangeTombstoneMarker::reversed`]).
    pub fn reversed(&self) -> MMarker {
        let r = self.view().reversed();
        MMarker {
            position: self.position,
            source: self.source,
            bound: OwnedClustering::of(&r.bound),
            deletion: r.deletion,
        }
    }
}
