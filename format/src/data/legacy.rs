//! The pre-3.0 cell-based Data.db (`jb`, `ka`, `la`, `lb`): cells ("atoms")
//! converted to the fragment model of the row format ([`Fragment`]), so that
//! every consumer of [`super::ScanReader`] (dump, validate, scrub) reads both.
//!
//! `jb` (Cassandra 2.0) is read unchanged: `ja` already dropped the partition
//! row size and column count, and the OnDiskAtom serialization is the one of
//! 2.1. Verified on the corpus: every `legacy_jb_*` set decodes to the same
//! logical content as its `legacy_ka_*` twin (`tests/legacy_jb.rs`).
//!
//! Reference: `shared/docs/sstable-format.md` §11 (layout), §10.3
//! (composites), §4.3 (the legacy index entry).
//!
//! # Layout
//!
//! ```text
//! partition := key:short-bytes  deletion:(ldt:i32 mfda:i64)  atom*  0x0000
//! atom      := name:short-bytes (len > 0)  mask:u8  body
//! body      := last:short-bytes ldt:i32 mfda:i64         mask & 0x10 (range tombstone; 0x40 Scylla shadowable)
//!            | ts_of_last_delete:i64 ts:i64 value:int-bytes      mask & 0x04 (counter)
//!            | ttl:i32 expiration:i32 ts:i64 value:int-bytes     mask & 0x02 (expiring)
//!            | ts:i64 value:int-bytes                            otherwise (0x01: tombstone,
//!                                                                 value = 4-byte deletion time)
//! name      := composite | raw bytes (non-compound tables)
//! composite := [0xFFFF (static)] (len:u16 bytes eoc:u8)*
//! ```
//!
//! There is no schema in the sstable: the table schema comes from a CQL
//! file ([`crate::sstable::Sstable::set_table_schema`]); [`legacy_header`]
//! synthesizes a serialization header from it (zero encoding stats) so the
//! rest of the crate keeps keying on [`SerializationHeader`](crate::statistics::SerializationHeader).
//!
//! # Cell names (C\* 2.x comparators)
//!
//! | table | name | clustering | column |
//! |---|---|---|---|
//! | CQL (not compact) | composite `ck_1..ck_n col [element]` | first n components | component n (empty = CQL row marker) |
//! | compact, ≥ 2 clustering columns (dense, compound) | composite `ck_1..ck_n` | all | the one regular column |
//! | compact, 1 clustering column (dense) | raw clustering value | the name | the one regular column |
//! | compact, no clustering column (static compact) | raw column name | none | by name |
//!
//! Static cells (`0xFFFF` prefix, n empty clustering components) go to the
//! static row, which — as in the row format — is produced for every
//! partition when the schema has static columns.
//!
//! # Conversion to rows (C\* 3.0 `LegacyLayout.CellGrouper`, Scylla `mp_row_consumer_k_l`)
//!
//! * Consecutive cells with the same clustering form one row (never more
//!   than one CQL row is held in memory).
//! * The row marker gives the row's liveness (timestamp, TTL, expiration).
//! * A range tombstone whose bounds are the same full clustering is a row
//!   deletion; one whose bounds name a collection column is that column's
//!   complex deletion; any other is a range, converted to bound/boundary
//!   markers.
//! * Legacy range tombstones may overlap or nest (2.x repeats a tombstone at
//!   every column-index block and keeps tombstones of different deletes
//!   apart). The markers describe the deletion in effect at each point, the
//!   newest (largest `markedForDeleteAt`, then local deletion time) of the
//!   open tombstones, as C\* `RangeTombstoneList` and Scylla
//!   `range_tombstone_list` reconcile them: a boundary where it changes, a
//!   bound where it starts or ends. Memory is bounded by the number of
//!   simultaneously open tombstones.
//! * Bounds: a start with end-of-component 0 or -1 is inclusive, 1
//!   exclusive; an end with 1 or 0 is inclusive, -1 exclusive; any other
//!   end-of-component byte is corrupt (Scylla `start_marker_to_bound_kind`,
//!   `end_marker_to_bound_kind`). An empty bound is the partition's start or
//!   end.
//! * Cells of columns the schema does not know (dropped columns) are skipped,
//!   as both readers do. Cells shadowed by a row deletion are kept (C\* 3.0
//!   drops them on upgrade; a dump shows what is stored).
//! * NOTE: non-compound tables. Cassandra 2.x writes the bounds of range
//!   tombstones of a non-compound table as composites (Scylla #2986,
//!   `has_correct_non_compound_range_tombstones`); a bound is read as a
//!   composite when it parses as exactly one framed component.

use std::cmp::Ordering;
use std::collections::VecDeque;

use crate::clustering::{BoundKind, ClusteringPrefix};
use crate::compare::{ClusteringComparator, PrefixLike};
use crate::component::Component;
use crate::deletion::DeletionTime;
use crate::error::{Error, ErrorKind, Result};
use crate::schema::TableSchema;
pub use crate::schema::{legacy_header, HIDDEN_VALUE_COLUMN};

use super::model::{
    cell_flags, flags, Cell, ColumnData, Fragment, LivenessInfo, MarkerDeletion,
    RangeTombstoneMarker, Row, RowDeletion, RowFlags,
};
use super::schema::DataSchema;
use super::source::DataSource;
use super::DataPos;

/// Atom mask bits (C\* 2.x `ColumnSerializer`, Scylla `column_mask`).
mod mask {
    pub const DELETION: u8 = 0x01;
    pub const EXPIRATION: u8 = 0x02;
    pub const COUNTER: u8 = 0x04;
    pub const COUNTER_UPDATE: u8 = 0x08;
    pub const RANGE_TOMBSTONE: u8 = 0x10;
    /// Scylla only: shadowable row tombstone (serialized like a range tombstone).
    pub const SHADOWABLE: u8 = 0x40;
}

/// How cell names are laid out for a table (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Names are composites (`CompositeType` comparator).
    pub compound: bool,
    /// No column-name component: the name is the clustering, the column is
    /// the table's single regular column.
    pub dense: bool,
    /// Number of clustering columns.
    pub clustering_len: usize,
}

impl Layout {
    /// The layout of table `s` (C\* 2.x `CFMetaData.isCompound`/`isDense`).
    pub fn of(s: &TableSchema) -> Layout {
        let n = s.clustering.len();
        Layout {
            compound: !s.compact_storage || n > 1,
            dense: s.compact_storage && n > 0,
            clustering_len: n,
        }
    }
}

// ------------------------------------------------------------ composites

/// A cell name or bound split into components.
struct Split<'a> {
    is_static: bool,
    comps: Vec<&'a [u8]>,
    /// End-of-component byte of the last component (0 when none).
    last_eoc: u8,
}

/// Split a composite (§10.3): optional `0xFFFF` static marker, then
/// `len:u16 bytes eoc:u8` per component. `None` when the framing is broken.
fn split_composite(name: &[u8]) -> std::result::Result<Split<'_>, String> {
    let (is_static, mut rest) = match name {
        [0xFF, 0xFF, rest @ ..] => (true, rest),
        _ => (false, name),
    };
    let mut comps = Vec::new();
    let mut last_eoc = 0;
    while !rest.is_empty() {
        let [a, b, tail @ ..] = rest else {
            return Err(format!(
                "composite component length cut short ({} byte left)",
                rest.len()
            ));
        };
        let len = u16::from_be_bytes([*a, *b]) as usize;
        if tail.len() < len + 1 {
            return Err(format!(
                "composite component of {len} bytes overruns the name ({} left)",
                tail.len()
            ));
        }
        let (v, t) = tail.split_at(len);
        comps.push(v);
        last_eoc = t.first().copied().unwrap_or(0);
        rest = t.get(1..).unwrap_or(&[]);
    }
    Ok(Split {
        is_static,
        comps,
        last_eoc,
    })
}

/// Split a name the way the table's comparator reads it.
fn split_name(name: &[u8], compound: bool) -> std::result::Result<Split<'_>, String> {
    if compound {
        split_composite(name)
    } else {
        Ok(Split {
            is_static: false,
            comps: vec![name],
            last_eoc: 0,
        })
    }
}

// ------------------------------------------------------------ owned model

#[derive(Debug, Clone, PartialEq)]
struct OCell {
    flags: u8,
    timestamp: i64,
    local_deletion_time: Option<i64>,
    ttl: Option<i64>,
    path: Option<Vec<u8>>,
    value: Vec<u8>,
    counter: bool,
}

#[derive(Debug, Clone, PartialEq)]
struct OCol {
    /// Index in the static or regular set (data order).
    index: usize,
    complex_deletion: Option<DeletionTime>,
    cells: Vec<OCell>,
}

#[derive(Debug, Clone, PartialEq)]
struct ORow {
    is_static: bool,
    position: u64,
    end: u64,
    clustering: Values,
    liveness: Option<LivenessInfo>,
    deletion: Option<DeletionTime>,
    cols: Vec<OCol>,
}

impl ORow {
    fn new(is_static: bool, position: u64, clustering: Values) -> ORow {
        ORow {
            is_static,
            position,
            end: position,
            clustering,
            liveness: None,
            deletion: None,
            cols: Vec::new(),
        }
    }

    fn col(&mut self, index: usize) -> &mut OCol {
        // Cells of one column are consecutive; look from the back.
        let found = self.cols.iter().rposition(|c| c.index == index);
        let i = match found {
            Some(i) => i,
            None => {
                self.cols.push(OCol {
                    index,
                    complex_deletion: None,
                    cells: Vec::new(),
                });
                self.cols.len() - 1
            }
        };
        &mut self.cols[i]
    }
}

/// Owned clustering values (`None` = null: the missing components of a
/// compact table's prefix row).
type Values = Vec<Option<Vec<u8>>>;

/// An owned clustering bound (values and kind).
#[derive(Debug, Clone, PartialEq)]
struct OBound {
    kind: BoundKind,
    values: Values,
}

impl PrefixLike for OBound {
    fn kind(&self) -> BoundKind {
        self.kind
    }
    fn size(&self) -> usize {
        self.values.len()
    }
    fn value(&self, i: usize) -> Option<&[u8]> {
        self.values.get(i).and_then(|v| v.as_deref())
    }
}

#[derive(Debug, Clone, PartialEq)]
struct OMarker {
    position: u64,
    size: u64,
    bound: OBound,
    deletion: MarkerDeletion,
}

#[derive(Debug, Clone, PartialEq)]
enum OFrag {
    Start {
        key: Vec<u8>,
        deletion: DeletionTime,
        position: u64,
    },
    Row(ORow),
    Marker(OMarker),
    End {
        position: u64,
    },
}

/// A range tombstone whose start has not been reached yet.
#[derive(Debug, Clone)]
struct PendingRt {
    start: OBound,
    end: OBound,
    deletion: DeletionTime,
    /// Position and size of its atom.
    position: u64,
    size: u64,
}

/// A range tombstone that is open at the current position.
#[derive(Debug, Clone)]
struct OpenRt {
    end: OBound,
    deletion: DeletionTime,
}

/// `DeletionTime.supersedes`: larger timestamp, then larger local deletion time.
fn newer(a: &DeletionTime, b: &DeletionTime) -> bool {
    (a.marked_for_delete_at, a.local_deletion_time)
        > (b.marked_for_delete_at, b.local_deletion_time)
}

// ------------------------------------------------------------ atoms

/// What a name decodes to for a cell.
enum CellTarget {
    /// The CQL row marker of the row.
    Marker,
    /// A column (static or regular set, index) with an optional element path.
    Column {
        is_static: bool,
        index: usize,
        path: Option<Vec<u8>>,
    },
    /// A column the schema does not know (dropped): skipped.
    Unknown,
}

/// A decoded atom, owned.
enum Atom {
    End,
    Cell {
        is_static: bool,
        clustering: Values,
        target: CellTarget,
        cell: OCell,
    },
    Tombstone {
        start: LBound,
        end: LBound,
        deletion: DeletionTime,
    },
}

/// A decoded range tombstone bound.
#[derive(Debug, Clone)]
struct LBound {
    is_static: bool,
    bound: OBound,
    /// The collection column the tombstone is confined to (its name), if any.
    collection: Option<Vec<u8>>,
}

/// The state of the legacy decoder (owned by the reader, see
/// `reader::Inner`).
#[derive(Debug)]
pub(crate) struct LegacyState {
    layout: Layout,
    cmp: ClusteringComparator,
    queue: VecDeque<OFrag>,
    /// The fragment handed out last (what the borrowed [`Fragment`] views).
    current: Option<OFrag>,
    /// The static row being grouped, until the first clustered atom.
    static_row: Option<ORow>,
    /// The clustered row being grouped.
    row: Option<ORow>,
    open: Vec<OpenRt>,
    /// Range tombstones read but not yet reached, by start.
    pending: Vec<PendingRt>,
    /// A clustered row of the partition was started.
    first_row_seen: bool,
    /// The deletion the emitted markers have open.
    active: Option<DeletionTime>,
    /// The last row emitted (ordering of repeated tombstones).
    last_row: Option<OBound>,
    in_partition: bool,
    /// Reading a fragment ([`LegacyState::begin_fragment`]): atoms up to
    /// this position, then the partition end, no end marker.
    fragment_end: Option<u64>,
}

/// Where the reader goes after an atom or partition.
pub(crate) enum Step {
    /// A fragment is ready ([`LegacyState::view`]).
    Ready,
    /// The data ended between partitions.
    Done,
}

impl LegacyState {
    pub(crate) fn new(layout: Layout, schema: &DataSchema) -> LegacyState {
        LegacyState {
            layout,
            cmp: ClusteringComparator::new(schema.clustering_types.clone()),
            queue: VecDeque::new(),
            current: None,
            static_row: None,
            row: None,
            open: Vec::new(),
            pending: Vec::new(),
            first_row_seen: false,
            active: None,
            last_row: None,
            in_partition: false,
            fragment_end: None,
        }
    }

    /// Forget the partition being read (seek).
    pub(crate) fn reset(&mut self) {
        self.queue.clear();
        self.current = None;
        self.static_row = None;
        self.row = None;
        self.open.clear();
        self.pending.clear();
        self.first_row_seen = false;
        self.active = None;
        self.last_row = None;
        self.in_partition = false;
        self.fragment_end = None;
    }

    /// Read the atoms in `[start, end)` as the rest of the partition `key`
    /// (the caller seeks the source to `start`): a partition start with no
    /// deletion, the atoms, and a partition end at `end` — no end-of-partition
    /// marker. This is how C\* 2.1 scrub recovers range tombstones written
    /// after the end marker (CASSANDRA-10791: `Scrubber`,
    /// `SSTableIdentityIterator.createFragmentIterator`).
    pub(crate) fn begin_fragment(&mut self, key: &[u8], start: u64, end: u64, schema: &DataSchema) {
        self.reset();
        self.in_partition = true;
        self.fragment_end = Some(end);
        self.static_row = if schema.has_static_row() {
            Some(ORow::new(true, start, Vec::new()))
        } else {
            None
        };
        self.queue.push_back(OFrag::Start {
            key: key.to_vec(),
            deletion: DeletionTime::LIVE,
            position: start,
        });
    }

    /// The fragment handed out last, borrowed.
    pub(crate) fn view<'a>(&'a self, schema: &'a DataSchema) -> Option<Fragment<'a>> {
        Some(match self.current.as_ref()? {
            OFrag::Start {
                key,
                deletion,
                position,
            } => Fragment::PartitionStart {
                key,
                deletion: *deletion,
                position: DataPos(*position),
                header_end: None,
            },
            OFrag::End { position } => Fragment::PartitionEnd {
                position: DataPos(*position),
            },
            OFrag::Marker(m) => Fragment::Marker(RangeTombstoneMarker {
                position: DataPos(m.position),
                size: m.size,
                flags: flags::IS_MARKER,
                bound: ClusteringPrefix {
                    kind: m.bound.kind,
                    values: m.bound.values.iter().map(|v| v.as_deref()).collect(),
                },
                marker_size: m.size,
                prev_unfiltered_size: 0,
                deletion: m.deletion,
            }),
            OFrag::Row(r) => {
                let set = if r.is_static {
                    &schema.static_columns
                } else {
                    &schema.regular_columns
                };
                let mut cells = Vec::with_capacity(r.cols.len());
                let mut has_complex_deletion = false;
                for c in &r.cols {
                    let Some(column) = set.get(c.index) else {
                        continue;
                    };
                    let cell = |o: &'a OCell| Cell {
                        flags: o.flags,
                        timestamp: o.timestamp,
                        local_deletion_time: o.local_deletion_time,
                        ttl: o.ttl,
                        path: o.path.as_deref(),
                        value: &o.value,
                        counter_column: o.counter,
                    };
                    if column.complex {
                        has_complex_deletion |= c.complex_deletion.is_some();
                        cells.push(ColumnData::Complex {
                            column,
                            complex_deletion: c.complex_deletion,
                            cells: c.cells.iter().map(cell).collect(),
                        });
                    } else if let Some(o) = c.cells.last() {
                        cells.push(ColumnData::Simple {
                            column,
                            cell: cell(o),
                        });
                    }
                }
                let mut f = 0u8;
                let mut ext = 0u8;
                if let Some(l) = &r.liveness {
                    f |= flags::HAS_TIMESTAMP;
                    if l.ttl.is_some() {
                        f |= flags::HAS_TTL;
                    }
                }
                if r.deletion.is_some() {
                    f |= flags::HAS_DELETION;
                }
                if has_complex_deletion {
                    f |= flags::HAS_COMPLEX_DELETION;
                }
                if cells.len() == set.len() {
                    f |= flags::HAS_ALL_COLUMNS;
                }
                if r.is_static {
                    f |= flags::EXTENSION_FLAG;
                    ext |= flags::EXT_IS_STATIC;
                }
                let size = r.end - r.position;
                let row = Row {
                    position: DataPos(r.position),
                    size,
                    clustering: ClusteringPrefix {
                        kind: if r.is_static {
                            BoundKind::StaticClustering
                        } else {
                            BoundKind::Clustering
                        },
                        values: r.clustering.iter().map(|v| v.as_deref()).collect(),
                    },
                    flags: RowFlags { flags: f, ext },
                    row_size: size,
                    prev_unfiltered_size: 0,
                    liveness: r.liveness,
                    deletion: r.deletion.map(|time| RowDeletion {
                        time,
                        shadowable: false,
                    }),
                    scylla_shadowable_deletion: None,
                    cells,
                };
                if r.is_static {
                    Fragment::StaticRow(row)
                } else {
                    Fragment::Row(row)
                }
            }
        })
    }

    /// True between a partition start and its end.
    pub(crate) fn in_partition(&self) -> bool {
        self.in_partition
    }

    /// True when the fragment handed out last ended a partition.
    pub(crate) fn current_is_end(&self) -> bool {
        matches!(self.current, Some(OFrag::End { .. }))
    }

    /// Decode until a fragment is ready and hand it out ([`Self::view`]).
    /// `key` receives the partition key (error context).
    pub(crate) fn advance(
        &mut self,
        src: &mut DataSource<'_>,
        schema: &DataSchema,
        key: &mut Vec<u8>,
    ) -> Result<Step> {
        self.current = None;
        if !self.fill(src, schema, key)? {
            return Ok(Step::Done);
        }
        let f = self.queue.pop_front();
        if let Some(OFrag::End { .. }) = f {
            self.in_partition = false;
        }
        self.current = f;
        Ok(Step::Ready)
    }

    /// Position of the fragment [`Self::advance`] hands out next (decoding
    /// it if needed); `None` at the end of the data.
    pub(crate) fn peek(
        &mut self,
        src: &mut DataSource<'_>,
        schema: &DataSchema,
        key: &mut Vec<u8>,
    ) -> Result<Option<u64>> {
        if !self.fill(src, schema, key)? {
            return Ok(None);
        }
        Ok(self.queue.front().map(|f| match f {
            OFrag::Start { position, .. } | OFrag::End { position } => *position,
            OFrag::Row(r) => r.position,
            OFrag::Marker(m) => m.position,
        }))
    }

    /// Decode until a fragment is queued; false at the end of the data.
    fn fill(
        &mut self,
        src: &mut DataSource<'_>,
        schema: &DataSchema,
        key: &mut Vec<u8>,
    ) -> Result<bool> {
        loop {
            if !self.queue.is_empty() {
                return Ok(true);
            }
            if !self.in_partition {
                if src.at_end() {
                    return Ok(false);
                }
                let position = src.position().0;
                let (k, deletion) = measured(src, |c| {
                    let k = c.short_bytes("partition key")?;
                    if k.is_empty() {
                        // C\* 2.x never writes one ("Key may not be empty");
                        // in the legacy layout 16 zero bytes would otherwise
                        // read as a whole (empty) partition.
                        return Err(Error::at(
                            ErrorKind::BadValue("empty partition key".into()),
                            Component::Data,
                            position,
                            "partition key",
                        ));
                    }
                    let d = DeletionTime::decode_legacy(c)?;
                    Ok((k.to_vec(), d))
                })?;
                key.clear();
                key.extend_from_slice(&k);
                self.in_partition = true;
                self.open.clear();
                self.pending.clear();
                self.first_row_seen = false;
                self.active = None;
                self.last_row = None;
                self.row = None;
                self.static_row = if schema.has_static_row() {
                    Some(ORow::new(true, src.position().0, Vec::new()))
                } else {
                    None
                };
                self.queue.push_back(OFrag::Start {
                    key: k,
                    deletion,
                    position,
                });
                continue;
            }
            if let Some(e) = self.fragment_end {
                if src.position().0 >= e {
                    self.fragment_end = None;
                    self.flush_static();
                    self.flush_row();
                    self.process_until(None, e);
                    self.queue.push_back(OFrag::End { position: e });
                    continue;
                }
            }
            self.atom(src, schema)?;
        }
    }

    /// Read one atom and turn it into queued fragments.
    fn atom(&mut self, src: &mut DataSource<'_>, schema: &DataSchema) -> Result<()> {
        let position = src.position().0;
        if src.at_end() {
            return Err(Error::at(
                ErrorKind::UnexpectedEof { need: 2, have: 0 },
                Component::Data,
                position,
                "cell name length (Data.db ends inside a partition)",
            ));
        }
        let layout = self.layout;
        let atom = measured(src, |c| read_atom(c, &layout, schema))?;
        let end = src.position().0;
        if let Some(e) = self.fragment_end {
            if end > e || matches!(atom, Atom::End) {
                return Err(Error::at(
                    ErrorKind::BadValue(format!(
                        "fragment atom at {position:#x} does not end before {e:#x}"
                    )),
                    Component::Data,
                    position,
                    "cell",
                ));
            }
        }
        match atom {
            Atom::End => {
                self.flush_static();
                self.flush_row();
                self.process_until(None, position);
                self.queue.push_back(OFrag::End { position });
            }
            Atom::Cell {
                is_static: true,
                target,
                cell,
                ..
            } => {
                let Some(row) = self.static_row.as_mut() else {
                    return Err(Error::at(
                        ErrorKind::BadValue(if schema.has_static_row() {
                            "static cell after the clustered cells of the partition".into()
                        } else {
                            "static cell, but the schema has no static column".into()
                        }),
                        Component::Data,
                        position,
                        "cell name",
                    ));
                };
                row.end = end;
                add_cell(row, target, cell);
            }
            Atom::Cell {
                clustering,
                target,
                cell,
                ..
            } => {
                self.flush_static();
                let row = self.row_at(clustering, position);
                row.end = end;
                add_cell(row, target, cell);
            }
            Atom::Tombstone {
                start,
                end: stop,
                deletion,
            } => self.tombstone(start, stop, deletion, position, end, schema)?,
        }
        Ok(())
    }

    fn tombstone(
        &mut self,
        start: LBound,
        stop: LBound,
        deletion: DeletionTime,
        position: u64,
        end: u64,
        schema: &DataSchema,
    ) -> Result<()> {
        let n = self.layout.clustering_len;
        // A collection tombstone: the complex deletion of one column.
        if let Some(name) = &start.collection {
            let is_static = start.is_static;
            let set = if is_static {
                &schema.static_columns
            } else {
                &schema.regular_columns
            };
            let Some(column) = set
                .columns()
                .iter()
                .find(|c| c.def.name_bytes == *name && c.complex)
            else {
                return Ok(()); // dropped (or re-added as another type)
            };
            let index = column.index;
            let row = if is_static {
                match self.static_row.as_mut() {
                    Some(r) => r,
                    None => {
                        return Err(Error::at(
                            ErrorKind::BadValue(
                                "static collection tombstone after the clustered cells".into(),
                            ),
                            Component::Data,
                            position,
                            "range tombstone",
                        ))
                    }
                }
            } else {
                self.flush_static();
                self.row_at(start.bound.values.clone(), position)
            };
            row.end = end;
            let col = row.col(index);
            if col.complex_deletion.is_none_or(|d| newer(&deletion, &d)) {
                col.complex_deletion = Some(deletion);
            }
            return Ok(());
        }
        self.flush_static();
        // A row deletion: both bounds the same full clustering.
        if stop.collection.is_none()
            && start.bound.values.len() == n
            && stop.bound.values.len() == n
            && start.bound.values == stop.bound.values
            && start.bound.kind == BoundKind::InclStartBound
            && stop.bound.kind == BoundKind::InclEndBound
        {
            let row = self.row_at(start.bound.values, position);
            row.end = end;
            if row.deletion.is_none_or(|d| newer(&deletion, &d)) {
                row.deletion = Some(deletion);
            }
            return Ok(());
        }
        // A range. 2.x repeats the open tombstones at the start of every
        // column-index block, even inside a row: one already covered by a
        // tombstone at least as new, to at least as far, changes nothing
        // (and must not split the row being grouped).
        if self.covered(&start.bound, &stop.bound, &deletion) {
            return Ok(());
        }
        // Any other tombstone that starts before the row being grouped (or
        // the last one emitted) takes effect after it.
        let mut s = start.bound;
        self.flush_row();
        if let Some(last) = &self.last_row {
            if self.cmp.compare_any(&s, last) != Ordering::Greater {
                s = OBound {
                    kind: BoundKind::ExclStartBound,
                    values: last.values.clone(),
                };
            }
        }
        if self.cmp.compare_any(&stop.bound, &s) == Ordering::Less {
            return Ok(()); // empty (or entirely before the current position)
        }
        let at = self
            .pending
            .partition_point(|p| self.cmp.compare_any(&p.start, &s) != Ordering::Greater);
        self.pending.insert(
            at,
            PendingRt {
                start: s.clone(),
                end: stop.bound,
                deletion,
                position,
                size: end - position,
            },
        );
        // NOTE: before the first row of a partition, tombstones only
        // accumulate: some writers (Scylla, wrong_range_tombstone_order)
        // put every range tombstone of a partition before its cells. Scylla
        // `mp_row_consumer_k_l` buffers them the same way (#1203).
        if self.first_row_seen {
            self.process_until(Some(&s), position);
        }
        Ok(())
    }

    /// The row with clustering `clustering`: the one being grouped, or a new
    /// one (the previous one flushed, the tombstone events before it
    /// processed).
    fn row_at(&mut self, clustering: Values, position: u64) -> &mut ORow {
        let same = self
            .row
            .as_ref()
            .is_some_and(|r| r.clustering == clustering);
        if !same {
            self.flush_row();
            let at = OBound {
                kind: BoundKind::Clustering,
                values: clustering.clone(),
            };
            self.process_until(Some(&at), position);
            self.first_row_seen = true;
        }
        self.row
            .get_or_insert_with(|| ORow::new(false, position, clustering))
    }

    /// True when an open or pending tombstone at least as new as `deletion`
    /// reaches at least to `end`.
    /// (Open ones started before the current position; a pending one must
    /// start at or before `start`.)
    fn covered(&self, start: &OBound, end: &OBound, deletion: &DeletionTime) -> bool {
        let reaches = |e: &OBound, d: &DeletionTime| {
            !newer(deletion, d) && self.cmp.compare_any(e, end) != Ordering::Less
        };
        self.open.iter().any(|o| reaches(&o.end, &o.deletion))
            || self.pending.iter().any(|p| {
                self.cmp.compare_any(&p.start, start) != Ordering::Greater
                    && reaches(&p.end, &p.deletion)
            })
    }

    /// The newest open deletion.
    fn effective(&self) -> Option<DeletionTime> {
        let mut best: Option<DeletionTime> = None;
        for o in &self.open {
            if best.is_none_or(|b| newer(&o.deletion, &b)) {
                best = Some(o.deletion);
            }
        }
        best
    }

    /// Process the tombstone events (starts of pending tombstones, ends of
    /// open ones) that come before `at` (all when `None`), in clustering
    /// order, queueing a marker wherever the deletion in effect changes: a
    /// bound where it starts or ends, a boundary where it changes.
    fn process_until(&mut self, at: Option<&OBound>, position: u64) {
        loop {
            // The open tombstone that ends first.
            let mut first_end: Option<usize> = None;
            for (i, o) in self.open.iter().enumerate() {
                if first_end.is_none_or(|f| {
                    self.cmp.compare_any(&o.end, &self.open[f].end) == Ordering::Less
                }) {
                    first_end = Some(i);
                }
            }
            let end_pos = first_end.map(|i| self.open[i].end.clone());
            let start_pos = self.pending.first().map(|p| p.start.clone());
            // The next event position.
            let p = match (&end_pos, &start_pos) {
                (None, None) => return,
                (Some(e), None) => e.clone(),
                (None, Some(s)) => s.clone(),
                (Some(e), Some(s)) => {
                    if self.cmp.compare_any(s, e) == Ordering::Less {
                        s.clone()
                    } else {
                        e.clone()
                    }
                }
            };
            if let Some(at) = at {
                if self.cmp.compare_any(&p, at) != Ordering::Less {
                    return;
                }
            }
            // Everything at `p`: ends (ExclEnd equals InclStart, InclEnd
            // equals ExclStart: the boundary pairs) and starts.
            let mut ended: Option<BoundKind> = None;
            let mut started: Option<(BoundKind, u64, u64)> = None;
            let mut i = 0;
            while i < self.open.len() {
                if self.cmp.compare_any(&self.open[i].end, &p) == Ordering::Equal {
                    ended = Some(self.open[i].end.kind);
                    self.open.swap_remove(i);
                } else {
                    i += 1;
                }
            }
            while self
                .pending
                .first()
                .is_some_and(|q| self.cmp.compare_any(&q.start, &p) == Ordering::Equal)
            {
                let q = self.pending.remove(0);
                started.get_or_insert((q.start.kind, q.position, q.size));
                self.open.push(OpenRt {
                    end: q.end,
                    deletion: q.deletion,
                });
            }
            let now = self.effective();
            if now == self.active {
                continue;
            }
            let (mpos, msize) = match started {
                Some((_, mp, ms)) if ended.is_none() => (mp, ms),
                _ => (position, 0),
            };
            let (kind, deletion) = match (self.active, now) {
                (None, Some(new)) => (
                    started.map_or(BoundKind::InclStartBound, |s| s.0),
                    MarkerDeletion::Bound(new),
                ),
                (Some(old), None) => (
                    ended.unwrap_or(BoundKind::InclEndBound),
                    MarkerDeletion::Bound(old),
                ),
                (Some(old), Some(new)) => {
                    let excl_end_incl_start = match (ended, started) {
                        (Some(k), _) => k == BoundKind::ExclEndBound,
                        (None, Some((k, ..))) => k == BoundKind::InclStartBound,
                        (None, None) => true,
                    };
                    (
                        if excl_end_incl_start {
                            BoundKind::ExclEndInclStartBoundary
                        } else {
                            BoundKind::InclEndExclStartBoundary
                        },
                        MarkerDeletion::Boundary {
                            end: old,
                            start: new,
                        },
                    )
                }
                (None, None) => continue,
            };
            self.active = now;
            self.queue.push_back(OFrag::Marker(OMarker {
                position: mpos,
                size: msize,
                bound: OBound {
                    kind,
                    values: p.values,
                },
                deletion,
            }));
        }
    }

    fn flush_static(&mut self) {
        if let Some(mut r) = self.static_row.take() {
            finish_row(&mut r);
            self.queue.push_back(OFrag::Row(r));
        }
    }

    fn flush_row(&mut self) {
        if let Some(mut r) = self.row.take() {
            finish_row(&mut r);
            self.last_row = Some(OBound {
                kind: BoundKind::Clustering,
                values: r.clustering.clone(),
            });
            self.queue.push_back(OFrag::Row(r));
        }
    }
}

/// Columns in data order (legacy cells come in column-name order).
fn finish_row(r: &mut ORow) {
    r.cols.sort_by_key(|c| c.index);
}

fn add_cell(row: &mut ORow, target: CellTarget, cell: OCell) {
    match target {
        CellTarget::Unknown => {}
        CellTarget::Marker => {
            if cell.flags & cell_flags::IS_DELETED == 0 {
                row.liveness = Some(LivenessInfo {
                    timestamp: cell.timestamp,
                    ttl: cell.ttl,
                    local_expiration_time: cell.local_deletion_time,
                    expired: false,
                });
            }
        }
        CellTarget::Column { index, path, .. } => {
            let mut cell = cell;
            cell.path = path;
            row.col(index).cells.push(cell);
        }
    }
}

mod atoms;

use atoms::{measured, read_atom};

#[cfg(test)]
mod tests;
