//! The sinks of the data commands: where the engine's fragments go.
//! [`renderer`] picks the renderer of an output format, [`explain`] is
//! `--explain`'s sink, and [`pieces`] renders the work units of a parallel
//! run into pieces written in order.
//!
//! The renderers of Data.db partitions, for `dump-data`, `read` and their
//! `--merge` forms, each consume the decoder's borrowed [`Fragment`]s one at a time
//! and writes straight to the output (no JSON value tree per cell):
//!
//! * [`scylla`] — `--output json` / `ndjson`: the `scylla sstable dump-data`
//!   schema.
//! * [`sstabledump`] — `--output sstabledump` / `sstabledump-lines`: Cassandra
//!   5.0 `sstabledump`'s output byte for byte (through the [`jackson`]
//!   pretty-printer emulation), and `-e` (`--keys-only`).
//! * [`text`] — `--output text`: one row per line like `sstabledump -d`.
//! * [`cql`] — `--output cql`: the live CQL rows, one JSON object per line,
//!   as `SELECT JSON *` prints them (liveness at `--now`).
//!
//! Values are rendered in Cassandra's text forms (`toJSONString`,
//! `getString`, `toCQLString`) straight from the bytes by
//! [`crate::render`], which also holds the Java
//! number, date and address formats. [`crate::plan::select`] resolves
//! the key selection flags (parsing keys, index lookups, token ranges).
//!
//! # `--output json` schema
//!
//! One document, written incrementally (the `scylla sstable` wrapper):
//!
//! ```text
//! { "sstables": { "<Data.db path>": [ $PARTITION, ... ], ... } }
//!
//! $PARTITION := { "key": { "token": String, "raw": HexString, "value": String },
//!                 "tombstone"?: $TOMBSTONE,                 // partition deletion
//!                 "static_row"?: $COLUMNS,
//!                 "clustering_elements"?: [ $CLUSTERING_ROW | $RANGE_TOMBSTONE_CHANGE, ... ] }
//! $TOMBSTONE := { "timestamp": Int64, "deletion_time": "YYYY-MM-DD HH:MM:SSz" }   // {} = none
//! $CLUSTERING_ROW := { "type": "clustering-row",
//!                      "key": { "raw": HexString, "value": String },
//!                      "tombstone"?: $TOMBSTONE,
//!                      "marker"?: { "timestamp": Int64, "ttl"?: "<n>s", "expiry"?: "YYYY-MM-DD HH:MM:SSz" },
//!                      "columns": $COLUMNS }
//! $RANGE_TOMBSTONE_CHANGE := { "type": "range-tombstone-change",
//!                              "key"?: { "raw": HexString, "value": String },   // absent: open-ended
//!                              "weight": -1 | 1,            // -1: before the key's rows, 1: after
//!                              "tombstone": $TOMBSTONE }    // {} closes the range
//! $COLUMNS := { "<column name>": $CELL | $COLLECTION, ... }
//! $CELL := { "is_live": Bool,
//!            "type": "regular" | "frozen-collection" | "counter-shards",
//!            "timestamp": Int64,
//!            "ttl"?: "<n>s", "expiry"?: "YYYY-MM-DD HH:MM:SSz",   // expiring cells
//!            "deletion_time"?: "YYYY-MM-DD HH:MM:SSz",             // dead cells
//!            "value"?: String | [ { "id": String, "value": Int64, "clock": Int64 }, ... ] }
//! $COLLECTION := { "tombstone"?: $TOMBSTONE, "cells": [ { "key": String, "value": $CELL }, ... ] }
//! ```
//!
//! * `raw` is the hex of the key bytes **as stored in the sstable**: the
//!   Cassandra serialization (a single-column partition key is its value's
//!   bytes; a composite key uses `CompositeType` framing — 2-byte length,
//!   bytes, end-of-component byte per component; a clustering key is the
//!   concatenation of Scylla-style 2-byte-length-prefixed components). This
//!   is what `--key-hex` accepts and what Index.db holds; it differs from
//!   Scylla's in-memory compound form for single-column partition keys.
//! * `value` strings are CQL literals for collections, tuples and UDTs and
//!   Cassandra's `getString` form for other types (text unquoted,
//!   timestamps `2023-11-14T22:13:20.000Z`, blobs as hex); composite keys
//!   join components with `:`.
//! * `token` is the partitioner's token as a decimal string.
//! * Range tombstones are emitted as *changes*, as Scylla does: a start bound
//!   is a change to its tombstone, a boundary one change to the new
//!   tombstone, an end bound a change to `{}`. `weight` is -1 for inclusive
//!   starts and exclusive ends, 1 otherwise.
//! * Counter cells: `value` lists the shards (`id` = counter id UUID).
//! * Cells of non-frozen UDTs are a collection whose `key`s are field names.
//!
//! # `--output ndjson`
//!
//! One partition per line in the same schema, with a leading
//! `"sstable": "<Data.db path>"` field.
//!
//! # `--keys-only`
//!
//! json/ndjson: one `{"token","raw","value"}` key object per partition;
//! sstabledump: exactly `sstabledump -e`; text: one `getString` key per line.
//!
//! # `--output sstabledump` with several sstables
//!
//! Cassandra's tool takes one sstable; sstkit prints one sstabledump document
//! (array, or lines) per sstable, one after the other, separated by a
//! newline (a stream of JSON values). `--output text` prints a
//! `== <Data.db path>` heading before each sstable when there are several.
//!
//! [`Fragment`]: sstkit_format::data::Fragment

pub mod cql;
pub mod explain;
pub mod jackson;
pub mod pieces;
pub mod renderer;
pub mod scylla;
pub mod sstabledump;
pub mod text;
pub mod values;

use sstkit_format::statistics::SerializationHeader;

/// The engine's table view and sink, which every renderer here implements.
pub use sstkit_format::engine::{Sink, Table};

use std::io;

use sstkit_format::data::{Column, ColumnData, RangeTombstoneMarker, Row};
use sstkit_format::deletion::DeletionTime;
use sstkit_format::types::{CqlType, Native};

/// Per-column data a renderer computes once (the name in its JSON form,
/// element types) instead of once per cell.
///
/// Entries are found by the column's index in the column set of the
/// partition's [`Table`] header. The writer calls [`ColumnCache::table`] at
/// each partition start: when the header's columns differ from those the
/// entries were built for (a writer fed by sstables with different column
/// sets), the entries are dropped.
pub(crate) struct ColumnCache<T> {
    regular: Vec<Option<T>>,
    statics: Vec<Option<T>>,
    /// Name and type string of each column the entries were built for
    /// (statics, then regulars), and how many statics (boxed: writers are
    /// held in enums by value).
    columns: Box<(Vec<(String, String)>, usize)>,
}

impl<T> ColumnCache<T> {
    pub(crate) fn new() -> Self {
        ColumnCache {
            regular: Vec::new(),
            statics: Vec::new(),
            columns: Box::new((Vec::new(), 0)),
        }
    }

    /// Keep the entries when `h` has the columns they were built for, else
    /// drop them.
    pub(crate) fn table(&mut self, h: &SerializationHeader) {
        let defs = || h.static_columns.iter().chain(&h.regular_columns);
        let (known, statics) = &*self.columns;
        let same = *statics == h.static_columns.len()
            && known.len() == h.static_columns.len() + h.regular_columns.len()
            && known
                .iter()
                .zip(defs())
                .all(|(k, d)| k.0 == d.name && k.1 == d.type_string);
        if !same {
            self.regular.clear();
            self.statics.clear();
            *self.columns = (
                defs()
                    .map(|d| (d.name.clone(), d.type_string.clone()))
                    .collect(),
                h.static_columns.len(),
            );
        }
    }

    /// The entry of `c` (a static column when `is_static`), built by `make`
    /// the first time.
    #[inline(always)]
    pub(crate) fn get(
        &mut self,
        is_static: bool,
        c: &Column,
        make: impl FnOnce(&Column) -> T,
    ) -> &T {
        let v = if is_static {
            &mut self.statics
        } else {
            &mut self.regular
        };
        if v.len() <= c.index {
            Self::grow(v, c.index);
        }
        v[c.index].get_or_insert_with(|| make(c))
    }

    #[cold]
    fn grow(v: &mut Vec<Option<T>>, index: usize) {
        v.resize_with(index + 1, || None);
    }
}

/// The types of a column's cells, computed once per column: what
/// [`sstabledump::cell_value_type`] and [`CqlType::path_type`] give per cell,
/// without cloning a type per cell.
pub(crate) struct CellTypes {
    /// The column type without `ReversedType`.
    pub ty: CqlType,
    /// List/map value and set (empty) element type of complex cells.
    pub elem: Option<CqlType>,
    /// Type of the cell paths of complex cells.
    pub path: Option<CqlType>,
}

static BLOB: CqlType = CqlType::Native(Native::Blob);

impl CellTypes {
    pub(crate) fn of(c: &Column) -> CellTypes {
        let ty = c.ty().unreversed().clone();
        CellTypes {
            elem: ty.cell_value_type(),
            path: ty.path_type(),
            ty,
        }
    }

    /// The type of a cell's value (see [`sstabledump::cell_value_type`]).
    #[inline]
    pub fn value_type(&self, path: Option<&[u8]>) -> &CqlType {
        match (&self.ty, path) {
            (CqlType::Udt { fields, .. }, Some(p)) => {
                match sstabledump::udt_field_index(p).and_then(|i| fields.get(i)) {
                    Some((_, t)) => t,
                    None => &BLOB,
                }
            }
            (u, Some(_)) => self.elem.as_ref().unwrap_or(u),
            (u, None) => u,
        }
    }
}

/// Cassandra's `Row.isEmpty()`: no liveness, no deletion, no column data.
pub fn row_is_empty(r: &Row<'_>) -> bool {
    r.liveness.is_none() && r.deletion.is_none() && r.cells.is_empty()
}

/// The static row as printed: with `tombstones_only` its deletions only
/// (kept in `kept`); `None` when nothing is left to print (Cassandra omits
/// an empty static row).
pub fn static_row_shown<'r, 'a>(
    row: &'r Row<'a>,
    tombstones_only: bool,
    kept: &'r mut Option<Row<'a>>,
) -> Option<&'r Row<'a>> {
    let row = if tombstones_only {
        &*kept.insert(tombstones_of(row)?)
    } else {
        row
    };
    (!row_is_empty(row)).then_some(row)
}

/// `--tombstones-only` view of a row: its deletion, complex-column deletions
/// and tombstone cells, without liveness and live cells; `None` when the row
/// holds no deletion at all.
pub fn tombstones_of<'a>(r: &Row<'a>) -> Option<Row<'a>> {
    // Most rows of most tables have nothing to keep: find out without
    // allocating.
    let has_tombstone = |cd: &ColumnData<'_>| match cd {
        ColumnData::Simple { cell, .. } => cell.is_deleted(),
        ColumnData::Complex {
            complex_deletion,
            cells,
            ..
        } => complex_deletion.is_some() || cells.iter().any(|c| c.is_deleted()),
    };
    if r.deletion.is_none() && !r.cells.iter().any(has_tombstone) {
        return None;
    }
    let mut cells = Vec::new();
    for cd in &r.cells {
        match cd {
            ColumnData::Simple { cell, .. } => {
                if cell.is_deleted() {
                    cells.push(cd.clone());
                }
            }
            ColumnData::Complex {
                column,
                complex_deletion,
                cells: cs,
            } => {
                let dead: Vec<_> = cs.iter().filter(|c| c.is_deleted()).copied().collect();
                if complex_deletion.is_some() || !dead.is_empty() {
                    cells.push(ColumnData::Complex {
                        column,
                        complex_deletion: *complex_deletion,
                        cells: dead,
                    });
                }
            }
        }
    }
    // Field by field: `..r.clone()` would clone the cells too.
    Some(Row {
        position: r.position,
        size: r.size,
        clustering: r.clustering.clone(),
        flags: r.flags,
        row_size: r.row_size,
        prev_unfiltered_size: r.prev_unfiltered_size,
        liveness: None,
        deletion: r.deletion,
        scylla_shadowable_deletion: r.scylla_shadowable_deletion,
        cells,
    })
}

/// A [`Sink`] in front of another that notes which columns hold values that
/// do not decode with their type (printed as hex by the writers): for
/// pre-3.0 sstables read with a user's schema, where a wrong type in the
/// CREATE TABLE would otherwise go unnoticed.
pub struct TypeCheck<'s> {
    inner: &'s mut dyn Sink,
    /// `name type` of each column with an undecodable value, in first-seen order.
    pub failed: Vec<String>,
}

impl<'s> TypeCheck<'s> {
    /// Check the rows going to `inner`.
    pub fn new(inner: &'s mut dyn Sink) -> Self {
        TypeCheck {
            inner,
            failed: Vec::new(),
        }
    }

    fn check(&mut self, r: &Row<'_>) {
        for cd in &r.cells {
            let col = cd.column();
            if col.counter {
                continue;
            }
            let ty = &col.def.ty;
            let cells: &[sstkit_format::data::Cell<'_>] = match cd {
                ColumnData::Simple { cell, .. } => std::slice::from_ref(cell),
                ColumnData::Complex { cells, .. } => cells,
            };
            let bad = cells.iter().any(|c| {
                !c.is_deleted()
                    && !c.value.is_empty()
                    && sstkit_format::value::decode(
                        &sstabledump::cell_value_type(ty, c.path),
                        c.value,
                    )
                    .is_err()
            });
            let name = format!("{} ({})", col.def.name, ty.cql());
            if bad && !self.failed.contains(&name) {
                self.failed.push(name);
            }
        }
    }
}

/// The stderr message naming the columns (`failed`, from [`TypeCheck`])
/// whose values did not decode with the schema's type, if any not named
/// before: one schema serves every sstable of a command, so each column is
/// named once per run.
pub fn type_warning(label: &str, failed: &[String]) -> Option<String> {
    static NAMED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut named = NAMED.lock().unwrap_or_else(|e| e.into_inner());
    let new: Vec<String> = failed
        .iter()
        .filter(|f| !named.contains(f))
        .cloned()
        .collect();
    named.extend(new.iter().cloned());
    let failed = new;
    (!failed.is_empty()).then(|| {
        format!(
            "sstkit: warning: {label}: values of {} do not decode with the schema's type \
             and are printed as hex; check the CREATE TABLE given with --schema or in \
             schema.cql",
            failed.join(", ")
        )
    })
}

impl Sink for TypeCheck<'_> {
    fn partition_start(
        &mut self,
        t: &Table<'_>,
        key: &[u8],
        deletion: &DeletionTime,
        header_end: u64,
    ) -> io::Result<()> {
        self.inner.partition_start(t, key, deletion, header_end)
    }
    fn static_row(&mut self, t: &Table<'_>, row: &Row<'_>, position: u64) -> io::Result<()> {
        self.check(row);
        self.inner.static_row(t, row, position)
    }
    fn rows_resume(&mut self) -> io::Result<()> {
        self.inner.rows_resume()
    }
    fn row(&mut self, t: &Table<'_>, row: &Row<'_>) -> io::Result<()> {
        self.check(row);
        self.inner.row(t, row)
    }
    fn marker(&mut self, t: &Table<'_>, m: &RangeTombstoneMarker<'_>) -> io::Result<()> {
        self.inner.marker(t, m)
    }
    fn partition_end(&mut self, t: &Table<'_>) -> io::Result<()> {
        self.inner.partition_end(t)
    }
    fn abort_partition(&mut self, t: &Table<'_>) -> io::Result<()> {
        self.inner.abort_partition(t)
    }
    fn last_partition_written(&self) -> bool {
        self.inner.last_partition_written()
    }
    fn key_only(&mut self, t: &Table<'_>, key: &[u8]) -> io::Result<()> {
        self.inner.key_only(t, key)
    }
}
