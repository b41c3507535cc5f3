//! The fragment model: what the Data.db decoder yields, borrowed from the
//! reader's window (no copies of keys, clustering values, paths or values).
//!
//! A partition reads as
//!
//! ```text
//! PartitionStart  [StaticRow]  (Row | Marker)*  PartitionEnd
//! ```
//!
//! Every timestamp, TTL and deletion time is already un-delta'd (absolute),
//! see [`crate::data::schema::DeltaBase`]. Positions are uncompressed Data.db
//! offsets ([`DataPos`]).

use std::fmt;

use crate::clustering::{BoundKind, ClusteringPrefix};
use crate::deletion::DeletionTime;

use super::decode::{Pending, Spare};
use super::schema::Column;
use super::DataPos;

/// `LivenessInfo.EXPIRED_LIVENESS_TTL`: a TTL of this value marks an expired
/// row marker (§3.7).
pub const EXPIRED_LIVENESS_TTL: i64 = i32::MAX as i64;

/// Row flag bits (first byte of an unfiltered, §3.3; C\* `UnfilteredSerializer`).
pub mod flags {
    /// Nothing else follows; this byte ends the partition.
    pub const END_OF_PARTITION: u8 = 0x01;
    /// A range tombstone marker; otherwise a row.
    pub const IS_MARKER: u8 = 0x02;
    /// The row has primary-key liveness (a timestamp).
    pub const HAS_TIMESTAMP: u8 = 0x04;
    /// The liveness also has a TTL and a local expiration time.
    pub const HAS_TTL: u8 = 0x08;
    /// A row deletion follows the liveness.
    pub const HAS_DELETION: u8 = 0x10;
    /// Every column of the superset is present (no missing-columns encoding).
    pub const HAS_ALL_COLUMNS: u8 = 0x20;
    /// Every complex column of the row carries a deletion time.
    pub const HAS_COMPLEX_DELETION: u8 = 0x40;
    /// An extended-flags byte follows.
    pub const EXTENSION_FLAG: u8 = 0x80;

    /// Extended flag: static row.
    pub const EXT_IS_STATIC: u8 = 0x01;
    /// Extended flag: the row deletion is shadowable (C\*, deprecated).
    pub const EXT_HAS_SHADOWABLE_DELETION: u8 = 0x02;
    /// Extended flag (Scylla only): a second, shadowable row deletion follows
    /// the regular one (§13.2).
    pub const EXT_HAS_SCYLLA_SHADOWABLE_DELETION: u8 = 0x80;
}

/// Cell flag bits (§3.10; C\* `Cell.Serializer`).
pub mod cell_flags {
    /// Tombstone; the local deletion time is the deletion time.
    pub const IS_DELETED: u8 = 0x01;
    /// TTL'd cell; the local deletion time is the expiration time.
    pub const IS_EXPIRING: u8 = 0x02;
    /// Zero-length value, no value bytes.
    pub const HAS_EMPTY_VALUE: u8 = 0x04;
    /// Timestamp = the row liveness timestamp.
    pub const USE_ROW_TIMESTAMP: u8 = 0x08;
    /// TTL and local deletion time = the row liveness ones.
    pub const USE_ROW_TTL: u8 = 0x10;
}

/// One piece of a partition, as every reader yields it.
///
/// How a row and a marker are held is a type parameter, so one type serves
/// every reader:
///
/// * `Fragment<'a>`: rows decoded in full ([`Row`]), owned; what
///   `ScanReader::next_fragment`, the pre-3.0 reader and the BTI and
///   index-less scans yield.
/// * `Fragment<'a, LazyRow<'a>>`: rows whose columns are decoded as they
///   are consumed ([`LazyRow`]); what `ScanReader::next_lazy` yields.
/// * `Fragment<'a, &'a Row<'a>, &'a RangeTombstoneMarker<'a>>`: rows and
///   markers lent to a visitor, as the bounded and reversed reads
///   (`crate::read`) hand them out.
#[derive(Debug, Clone, PartialEq)]
pub enum Fragment<'a, R = Row<'a>, M = RangeTombstoneMarker<'a>> {
    /// Partition header: key and partition-level deletion.
    PartitionStart {
        /// The partition key as serialized by the key type (single
        /// component: the value bytes; several: `CompositeType` framing).
        key: &'a [u8],
        /// Partition deletion ([`DeletionTime::LIVE`] when none).
        deletion: DeletionTime,
        /// Position of the key-length field (the partition's start).
        position: DataPos,
        /// Where the partition header and its static row end
        /// (sstabledump's partition position), when the reader knows it
        /// already: the bounded and reversed reads do, a scan reaches the
        /// static row only after this fragment.
        header_end: Option<DataPos>,
    },
    /// The static row (first after the header iff the table has static columns).
    StaticRow(R),
    /// A clustered row (or the single row of a table without clustering columns).
    Row(R),
    /// A range tombstone bound or boundary.
    Marker(M),
    /// The END_OF_PARTITION byte (a bounded read: where reading stopped).
    PartitionEnd {
        /// Position of the END_OF_PARTITION byte (the partition's last byte).
        position: DataPos,
    },
}

impl Fragment<'_> {
    /// The fragment's allocations (column list, element lists, clustering
    /// values), emptied and detached from the reader's window: hand them
    /// back with [`ScanReader::recycle`](super::ScanReader::recycle) once the
    /// fragment is done with, and the next rows reuse them instead of
    /// allocating.
    pub fn into_spare(self) -> Spare {
        let mut s = Spare::default();
        s.keep(self);
        s
    }
}

impl<'a, R, M> Fragment<'a, R, M> {
    /// The fragment with its row (static or clustered) passed through `f`;
    /// the other variants are kept as they are.
    fn try_map_rows<R2, E>(
        self,
        f: impl FnOnce(R) -> std::result::Result<R2, E>,
    ) -> std::result::Result<Fragment<'a, R2, M>, E> {
        Ok(match self {
            Fragment::StaticRow(r) => Fragment::StaticRow(f(r)?),
            Fragment::Row(r) => Fragment::Row(f(r)?),
            Fragment::PartitionStart {
                key,
                deletion,
                position,
                header_end,
            } => Fragment::PartitionStart {
                key,
                deletion,
                position,
                header_end,
            },
            Fragment::Marker(m) => Fragment::Marker(m),
            Fragment::PartitionEnd { position } => Fragment::PartitionEnd { position },
        })
    }
}

impl<'a, C> Fragment<'a, Row<'a, C>> {
    /// Uncompressed position where this fragment starts.
    pub fn position(&self) -> DataPos {
        match self {
            Fragment::PartitionStart { position, .. } | Fragment::PartitionEnd { position } => {
                *position
            }
            Fragment::StaticRow(r) | Fragment::Row(r) => r.position,
            Fragment::Marker(m) => m.position,
        }
    }
}

impl<'a> Fragment<'a, LazyRow<'a>> {
    /// The fragment with its row decoded in full (the allocations come from
    /// the reader's spares; an error in the column data fuses the reader).
    pub fn into_decoded(self) -> crate::error::Result<Fragment<'a>> {
        self.try_map_rows(|r| r.into_decoded())
    }
}

impl<'a> From<Fragment<'a>> for Fragment<'a, LazyRow<'a>> {
    /// A decoded fragment in the lazy form (its row's columns already decoded).
    fn from(f: Fragment<'a>) -> Self {
        f.try_map_rows(|r| Ok::<_, std::convert::Infallible>(r.into()))
            .unwrap_or_else(|e| match e {})
    }
}

/// Row liveness (the "row marker", §3.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LivenessInfo {
    /// Write timestamp (µs).
    pub timestamp: i64,
    /// TTL in seconds, when the row marker expires.
    pub ttl: Option<i64>,
    /// Local expiration time (s), when the row marker expires.
    pub local_expiration_time: Option<i64>,
    /// `ttl == EXPIRED_LIVENESS_TTL`: the row marker is dead as of
    /// `local_expiration_time` (materialized views; Scylla dead row markers).
    pub expired: bool,
}

/// A row deletion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowDeletion {
    /// The deletion time.
    pub time: DeletionTime,
    /// C\* extended flag 0x02: the deletion is shadowable (deprecated; never
    /// written by modern Cassandra).
    pub shadowable: bool,
}

/// Row flags as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RowFlags {
    /// The flags byte ([`flags`]).
    pub flags: u8,
    /// The extended flags byte, 0 when absent.
    pub ext: u8,
}

impl RowFlags {
    /// True when `bit` ([`flags`]) is set in the first byte.
    pub fn has(&self, bit: u8) -> bool {
        self.flags & bit != 0
    }

    /// True when `bit` ([`flags`] `EXT_*`) is set in the extended byte.
    pub fn has_ext(&self, bit: u8) -> bool {
        self.ext & bit != 0
    }

    /// True for the static row.
    pub fn is_static(&self) -> bool {
        self.has(flags::EXTENSION_FLAG) && self.has_ext(flags::EXT_IS_STATIC)
    }
}

/// A row (static or clustered): its head, and its column data as `C`.
///
/// `C` is how far the columns are decoded: `Vec<ColumnData>` (the default,
/// a decoded row) or [`Pending`] (a [`LazyRow`], decoded as it is
/// consumed). [`Row::visit`] and [`Row::into_decoded`] work on both.
#[derive(Debug, Clone, PartialEq)]
pub struct Row<'a, C = Vec<ColumnData<'a>>> {
    /// Uncompressed position of the row's flags byte.
    pub position: DataPos,
    /// Total bytes of the unfiltered, flags to last cell byte.
    pub size: u64,
    /// Clustering values; kind [`BoundKind::StaticClustering`] (no values)
    /// for the static row, [`BoundKind::Clustering`] otherwise.
    pub clustering: ClusteringPrefix<'a>,
    /// Flags as stored.
    pub flags: RowFlags,
    /// `row_size` as stored (bytes after its vint; equals what was consumed).
    pub row_size: u64,
    /// `prev_unfiltered_size` as stored (checked against the real distance
    /// only when the reader's `check_prev_sizes` option is on).
    pub prev_unfiltered_size: u64,
    /// Primary-key liveness (row marker), if any.
    pub liveness: Option<LivenessInfo>,
    /// Row deletion, if any.
    pub deletion: Option<RowDeletion>,
    /// Scylla's shadowable row tombstone (extended flag 0x80), if any.
    pub scylla_shadowable_deletion: Option<DeletionTime>,
    /// The column data. Decoded: the present columns, in data order.
    ///
    /// One `Vec` per row (and one per complex column); cells and values
    /// themselves are borrowed. A caller that hands the fragment back
    /// ([`Fragment::into_spare`], `ScanReader::recycle`) has the next rows
    /// reuse these vectors instead of allocating.
    pub cells: C,
}

/// A row whose head is decoded (everything but the column data) and whose
/// columns are decoded as they are consumed: by a
/// [`ColumnVisitor`](super::ColumnVisitor) ([`Row::visit`], no intermediate
/// vectors) or into a decoded [`Row`] ([`Row::into_decoded`]). Errors in the
/// column data surface then.
pub type LazyRow<'a> = Row<'a, Pending<'a>>;

impl<'a, C> Row<'a, C> {
    /// True for the static row.
    pub fn is_static(&self) -> bool {
        self.flags.is_static()
    }

    /// The same head with the column data `f` makes of this row's.
    #[inline(always)]
    pub(crate) fn try_map_cells<D, E>(
        self,
        f: impl FnOnce(C) -> Result<D, E>,
    ) -> Result<Row<'a, D>, E> {
        let Row {
            position,
            size,
            clustering,
            flags,
            row_size,
            prev_unfiltered_size,
            liveness,
            deletion,
            scylla_shadowable_deletion,
            cells,
        } = self;
        Ok(Row {
            position,
            size,
            clustering,
            flags,
            row_size,
            prev_unfiltered_size,
            liveness,
            deletion,
            scylla_shadowable_deletion,
            cells: f(cells)?,
        })
    }

    /// [`Row::try_map_cells`] for a conversion that cannot fail.
    #[inline(always)]
    pub(crate) fn map_cells<D>(self, f: impl FnOnce(C) -> D) -> Row<'a, D> {
        match self.try_map_cells(|c| Ok::<D, std::convert::Infallible>(f(c))) {
            Ok(r) => r,
            Err(never) => match never {},
        }
    }
}

impl<'a> Row<'a> {
    /// Hand the decoded columns to `v`, in order, with the calls
    /// [`LazyRow`]'s [`Row::visit`] makes while decoding: a writer that
    /// implements [`ColumnVisitor`](super::ColumnVisitor) serves both.
    pub fn visit_columns<V: super::ColumnVisitor<'a>>(&self, v: &mut V) {
        visit_decoded(&self.cells, v)
    }

    /// [`Row::visit_columns`], consuming the row (the same call as a
    /// [`LazyRow`]'s; a decoded row cannot fail).
    pub fn visit<V: super::ColumnVisitor<'a>>(self, v: &mut V) -> crate::error::Result<()> {
        self.visit_columns(v);
        Ok(())
    }

    /// The row itself (the same call as a [`LazyRow`]'s).
    pub fn into_decoded(self) -> crate::error::Result<Row<'a>> {
        Ok(self)
    }

    /// The data of the column named `name`, if present in this row.
    pub fn column(&self, name: &str) -> Option<&ColumnData<'a>> {
        self.cells.iter().find(|c| c.column().name() == name)
    }
}

/// Hand decoded column data to `v` as [`LazyRow`]'s [`Row::visit`] would.
pub(crate) fn visit_decoded<'a, V: super::ColumnVisitor<'a>>(cells: &[ColumnData<'a>], v: &mut V) {
    for cd in cells {
        match cd {
            ColumnData::Simple { column, cell } => v.simple(column, cell),
            ColumnData::Complex {
                column,
                complex_deletion,
                cells,
            } => {
                v.complex_start(column, *complex_deletion, cells.len());
                for c in cells {
                    v.element(column, c);
                }
                v.complex_end(column);
            }
        }
    }
}

/// The data of one present column of a row.
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnData<'a> {
    /// A simple (single-cell) column.
    Simple {
        /// The column (name, type, index in data order).
        column: &'a Column,
        /// Its cell.
        cell: Cell<'a>,
    },
    /// A complex column: a non-frozen collection or UDT.
    Complex {
        /// The column (name, type, index in data order).
        column: &'a Column,
        /// Collection-level deletion ("overwrite" tombstone), if any. A stored
        /// deletion with `marked_for_delete_at == i64::MIN` (LIVE written
        /// because the row has HAS_COMPLEX_DELETION) reads as `None` (§3.8).
        complex_deletion: Option<DeletionTime>,
        /// The element cells, each with a path, in path order.
        cells: Vec<Cell<'a>>,
    },
}

impl<'a> ColumnData<'a> {
    /// The column this data belongs to.
    pub fn column(&self) -> &'a Column {
        match self {
            ColumnData::Simple { column, .. } | ColumnData::Complex { column, .. } => column,
        }
    }
}

/// One cell (§3.10), with absolute timestamp, TTL and deletion time.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Cell<'a> {
    /// Flags as stored ([`cell_flags`]).
    pub flags: u8,
    /// Write timestamp (µs), the row's when USE_ROW_TIMESTAMP.
    pub timestamp: i64,
    /// Local deletion time (tombstones) or expiration time (expiring cells),
    /// `None` otherwise.
    pub local_deletion_time: Option<i64>,
    /// TTL in seconds for expiring cells.
    pub ttl: Option<i64>,
    /// Cell path (complex columns): list timeuuid, set element, map key,
    /// UDT field index (2-byte big-endian).
    pub path: Option<&'a [u8]>,
    /// Raw value bytes (empty when HAS_EMPTY_VALUE).
    pub value: &'a [u8],
    /// The column is a counter column.
    pub counter_column: bool,
}

impl Cell<'_> {
    /// Tombstone.
    pub fn is_deleted(&self) -> bool {
        self.flags & cell_flags::IS_DELETED != 0
    }

    /// Expiring (TTL'd) cell.
    pub fn is_expiring(&self) -> bool {
        self.flags & cell_flags::IS_EXPIRING != 0
    }

    /// A live counter cell (C\* `isCounterCell`: counter column, not a tombstone).
    /// Its value is a counter context (§3.13).
    pub fn is_counter(&self) -> bool {
        self.counter_column && !self.is_deleted()
    }

    /// The value is empty (HAS_EMPTY_VALUE).
    pub fn has_empty_value(&self) -> bool {
        self.flags & cell_flags::HAS_EMPTY_VALUE != 0
    }
}

impl fmt::Debug for Cell<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct Hex<'b>(&'b [u8]);
        impl fmt::Debug for Hex<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("0x")?;
                for b in self.0 {
                    write!(f, "{b:02x}")?;
                }
                Ok(())
            }
        }
        let mut d = f.debug_struct("Cell");
        d.field("flags", &format_args!("{:#04x}", self.flags))
            .field("timestamp", &self.timestamp);
        if let Some(l) = self.local_deletion_time {
            d.field("local_deletion_time", &l);
        }
        if let Some(t) = self.ttl {
            d.field("ttl", &t);
        }
        if let Some(p) = self.path {
            d.field("path", &Hex(p));
        }
        d.field("value", &Hex(self.value)).finish()
    }
}

/// The deletion(s) of a range tombstone marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkerDeletion {
    /// A bound: opens (start kinds) or closes (end kinds) this deletion.
    Bound(DeletionTime),
    /// A boundary: closes `end` and opens `start` at the same clustering.
    Boundary {
        /// Deletion of the range that ends here (stored first).
        end: DeletionTime,
        /// Deletion of the range that starts here.
        start: DeletionTime,
    },
}

/// A range tombstone marker (§3.9).
#[derive(Debug, Clone, PartialEq)]
pub struct RangeTombstoneMarker<'a> {
    /// Uncompressed position of the marker's flags byte.
    pub position: DataPos,
    /// Total bytes of the unfiltered.
    pub size: u64,
    /// The flags byte (0x02).
    pub flags: u8,
    /// Bound kind and clustering prefix (may be shorter than the clustering).
    pub bound: ClusteringPrefix<'a>,
    /// `marker_size` as stored.
    pub marker_size: u64,
    /// `prev_unfiltered_size` as stored.
    pub prev_unfiltered_size: u64,
    /// The deletion time(s).
    pub deletion: MarkerDeletion,
}

impl RangeTombstoneMarker<'_> {
    /// The bound kind.
    pub fn kind(&self) -> BoundKind {
        self.bound.kind
    }

    /// The deletion this marker closes (end bounds and boundaries).
    pub fn close_deletion(&self) -> Option<DeletionTime> {
        match self.deletion {
            MarkerDeletion::Boundary { end, .. } => Some(end),
            MarkerDeletion::Bound(d) if self.bound.kind.is_end() => Some(d),
            MarkerDeletion::Bound(_) => None,
        }
    }

    /// The deletion this marker opens (start bounds and boundaries).
    pub fn open_deletion(&self) -> Option<DeletionTime> {
        match self.deletion {
            MarkerDeletion::Boundary { start, .. } => Some(start),
            MarkerDeletion::Bound(d) if self.bound.kind.is_start() => Some(d),
            MarkerDeletion::Bound(_) => None,
        }
    }
}
