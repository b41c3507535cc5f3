//! `--output sstabledump` / `sstabledump-lines`: what Cassandra 5.0's
//! `sstabledump` (`-l`) prints, byte for byte.
//!
//! The call sequence mirrors `org.apache.cassandra.tools.JsonTransformer`
//! (5.0): every `writeFieldName` / `writeStartObject` / `setCompact` happens
//! in the same order, so the [`JsonGen`] printer emulation produces the same
//! whitespace. Values use `toJSONString` ([`Form::Json`]); partition keys and
//! cell paths `getString` ([`Form::Str`]).
//!
//! Positions (`"position"`), as Cassandra 5.0's scanner reports them, in
//! uncompressed Data.db bytes: a partition's is the offset just past its
//! header *and static row* (5.0 reads the static row with the header); the
//! static row carries the same value; every other row its own start.
//! Range tombstone markers have none.
//!
//! `expired` (TTL'd liveness and cells) is computed against the current
//! time, as Cassandra does: row liveness `expires_at < now`, cells
//! `now >= expires_at`.

use std::io::{self, Write};

use sstkit_format::value::view::CompositeParts;

use crate::render::fixed::{json_escape_into, push_i64, DateStrings, Piece};
use crate::render::{render, render_json, Form};
use sstkit_format::clustering::{BoundKind, ClusteringPrefix};
use sstkit_format::data::{
    Cell, Column, ColumnVisitor, LazyRow, LivenessInfo, MarkerDeletion, RangeTombstoneMarker, Row,
    RowDeletion,
};
use sstkit_format::deletion::DeletionTime;
use sstkit_format::types::{quote_ident, CqlType};

use super::jackson::JsonGen;
use super::{CellTypes, ColumnCache, Table};
use sstkit_format::engine::Error as EngineError;

/// What the writer needs of a column, computed once.
struct SdColumn {
    /// `"name"` as `ColumnIdentifier.toCQLString` spells it, as a JSON string.
    name: String,
    /// The start of a cell object up to its name, pretty (`[0]`) and
    /// minimal: `{ "name" : "b"`, `{"name":"b"` (see [`SstabledumpWriter::cell`]).
    head: [Piece<64>; 2],
    types: CellTypes,
}

impl SdColumn {
    fn of(c: &Column) -> SdColumn {
        let mut name = String::from("\"");
        json_escape_into(&mut name, &quote_ident(c.name()));
        name.push('"');
        SdColumn {
            head: [
                Piece::new(&format!("{{ \"name\" : {name}")),
                Piece::new(&format!("{{\"name\":{name}")),
            ],
            name,
            types: CellTypes::of(c),
        }
    }
}

// Separators of compact objects (the cells, `liveness_info`, cells'
// `deletion_info`), pretty or minimal (`-l`, `$min`). Each arm pushes one
// literal: a constant-length copy rather than a `memcpy` call.

/// `{ "NAME" : ` / `{"NAME":`: an object and its first field name.
macro_rules! first_field {
    ($o:expr, $min:expr, $name:literal) => {
        if $min {
            $o.push_str(concat!("{\"", $name, "\":"))
        } else {
            $o.push_str(concat!("{ \"", $name, "\" : "))
        }
    };
}

/// `, "NAME" : ` / `,"NAME":`: a later field name.
macro_rules! next_field {
    ($o:expr, $min:expr, $name:literal) => {
        if $min {
            $o.push_str(concat!(",\"", $name, "\":"))
        } else {
            $o.push_str(concat!(", \"", $name, "\" : "))
        }
    };
}

/// ` }` / `}`: the end of a compact object.
macro_rules! end_object {
    ($o:expr, $min:expr) => {
        if $min {
            $o.push('}')
        } else {
            $o.push_str(" }")
        }
    };
}

/// What a row's cells are written against (`JsonTransformer` leaves out a
/// cell's timestamp and TTL when they are the row's).
#[derive(Clone, Copy)]
struct RowCtx {
    is_static: bool,
    /// The row's liveness timestamp.
    live_ts: Option<i64>,
    /// The row's liveness TTL (0 when it does not expire).
    row_ttl: Option<i64>,
}

impl RowCtx {
    fn of(is_static: bool, liveness: Option<&LivenessInfo>) -> RowCtx {
        RowCtx {
            is_static,
            live_ts: liveness.map(|l| l.timestamp),
            row_ttl: liveness.map(|l| l.ttl.unwrap_or(0)),
        }
    }
}

/// A row's cells written through the writer: a [`ColumnVisitor`], fed by
/// a [`LazyRow`] as it is decoded or by a decoded [`Row`]. The visitor's
/// calls cannot fail, so the first error is kept and returned when the row
/// ends (for a lazy row nothing has reached the output by then: see
/// [`JsonGen::mark`]).
struct CellsOut<'w, 't, W: Write> {
    w: &'w mut SstabledumpWriter<W>,
    t: &'w Table<'t>,
    at: RowCtx,
    err: Option<io::Error>,
}

impl<W: Write> CellsOut<'_, '_, W> {
    #[inline(always)]
    fn keep(&mut self, r: io::Result<()>) {
        if let Err(e) = r {
            self.err.get_or_insert(e);
        }
    }
}

impl<'a, W: Write> ColumnVisitor<'a> for CellsOut<'_, '_, W> {
    #[inline(always)]
    fn simple(&mut self, column: &'a Column, cell: &Cell<'a>) {
        let r = self.w.cell(self.t, self.at, column, cell);
        self.keep(r);
    }

    fn complex_start(&mut self, column: &'a Column, deletion: Option<DeletionTime>, _: usize) {
        if let Some(d) = deletion {
            let r = self.w.complex_deletion(self.at, column, &d);
            self.keep(r);
        }
    }

    #[inline(always)]
    fn element(&mut self, column: &'a Column, cell: &Cell<'a>) {
        let r = self.w.cell(self.t, self.at, column, cell);
        self.keep(r);
    }

    fn complex_end(&mut self, _: &'a Column) {}
}

/// Streaming writer of one sstable's sstabledump output (a writer serves
/// one table; see `ColumnCache`).
pub struct SstabledumpWriter<W: Write> {
    g: JsonGen<W>,
    lines: bool,
    buf: String,
    cols: ColumnCache<SdColumn>,
    dates: DateStrings,
    /// `--raw-timestamps`: times as numbers, not dates.
    raw: bool,
}

impl<W: Write> SstabledumpWriter<W> {
    /// A writer; `lines` selects the `-l` form (one compact partition per line).
    pub fn new(w: W, lines: bool) -> Self {
        let g = if lines {
            JsonGen::minimal(w)
        } else {
            JsonGen::pretty(w)
        };
        SstabledumpWriter {
            g,
            lines,
            buf: String::with_capacity(256),
            cols: ColumnCache::new(),
            dates: DateStrings::default(),
            raw: false,
        }
    }

    /// Times as the raw numbers stored (`sstabledump -t`), not dates.
    pub fn raw_timestamps(mut self, raw: bool) -> Self {
        self.raw = raw;
        self
    }

    /// Start the output (the top-level array; nothing for `-l`).
    pub fn begin(&mut self) -> io::Result<()> {
        if !self.lines {
            self.g.start_array()?;
        }
        Ok(())
    }

    /// End the output.
    pub fn finish(mut self) -> io::Result<W> {
        if !self.lines {
            self.g.end_array()?;
        }
        self.g.flush()?;
        self.g.into_inner()
    }

    /// Continue a document whose first partitions another writer rendered
    /// ([`JsonGen::resume`]).
    pub fn resume(&mut self) {
        self.g.resume();
    }

    /// True while no partition was written.
    pub fn at_start(&self) -> bool {
        self.g.at_start()
    }

    /// See [`JsonGen::hold_output`].
    pub fn hold_output(&mut self, buffer: Vec<u8>) {
        self.g.hold_output(buffer);
    }

    /// See [`JsonGen::take_buffered`].
    pub fn take_buffered(&mut self) -> Vec<u8> {
        self.g.take_buffered()
    }

    /// The underlying writer (what is buffered is written out first).
    pub fn writer(&mut self) -> io::Result<&mut W> {
        self.g.get_mut()
    }

    /// `serializePartitionKey`: the key as an array of component strings.
    pub fn key(&mut self, t: &Table<'_>, key: &[u8]) -> io::Result<()> {
        self.g.object_compact = true;
        self.g.array_compact = true;
        self.g.start_array()?;
        for_each_key_string(t, key, &mut self.buf, |s| self.g.string(s))?;
        self.g.end_array()?;
        self.g.object_compact = false;
        self.g.array_compact = false;
        Ok(())
    }

    /// Open a partition: `"table kind"`, `"partition"` and the start of `"rows"`.
    pub fn partition_start(
        &mut self,
        t: &Table<'_>,
        key: &[u8],
        deletion: &DeletionTime,
        position: u64,
    ) -> io::Result<()> {
        self.cols.table(t.header);
        self.g.start_object()?;
        self.g.string_field("table kind", "REGULAR")?;
        self.g.field("partition")?;
        self.g.start_object()?;
        self.g.field("key")?;
        self.key(t, key)?;
        self.g.number_field("position", position as i64)?;
        if !deletion.is_live() {
            self.deletion(deletion)?;
        }
        self.g.end_object()?;
        self.g.field("rows")?;
        self.g.start_array()
    }

    /// Close a partition.
    pub fn partition_end(&mut self) -> io::Result<()> {
        self.g.end_array()?;
        self.g.end_object()
    }

    fn micros(&mut self, v: i64) -> io::Result<()> {
        micros(&mut self.g, &mut self.dates, self.raw, v)
    }

    fn secs(&mut self, v: i64) -> io::Result<()> {
        secs(&mut self.g, &mut self.dates, self.raw, v)
    }

    fn deletion(&mut self, d: &DeletionTime) -> io::Result<()> {
        self.g.field("deletion_info")?;
        self.g.object_compact = true;
        self.g.start_object()?;
        self.g.field("marked_deleted")?;
        self.micros(d.marked_for_delete_at)?;
        self.g.field("local_delete_time")?;
        self.secs(d.local_deletion_time)?;
        self.g.end_object()?;
        self.g.object_compact = false;
        Ok(())
    }

    fn clustering(&mut self, t: &Table<'_>, c: &ClusteringPrefix<'_>) -> io::Result<()> {
        if c.values.is_empty() {
            return Ok(());
        }
        self.g.field("clustering")?;
        self.g.object_compact = true;
        self.g.start_array()?;
        self.g.array_compact = true;
        for (i, ty) in t.header.clustering_types.iter().enumerate() {
            match c.values.get(i) {
                None => self.g.string("*")?,
                Some(None) => self.g.raw_value("null")?,
                Some(Some(v)) => self.g.raw_value_with(|o| render(ty, v, Form::Json, o))?,
            }
        }
        self.g.end_array()?;
        self.g.object_compact = false;
        self.g.array_compact = false;
        Ok(())
    }

    /// A row (`serializeRow`); `position` as described in the module docs.
    pub fn row(&mut self, t: &Table<'_>, row: &Row<'_>, position: u64) -> io::Result<()> {
        let at = RowCtx::of(row.is_static(), row.liveness.as_ref());
        self.row_head(
            t,
            at,
            &row.clustering,
            row.liveness.as_ref(),
            row.deletion.as_ref(),
            position,
        )?;
        let mut v = CellsOut {
            w: self,
            t,
            at,
            err: None,
        };
        row.visit_columns(&mut v);
        match v.err {
            Some(e) => Err(e),
            None => self.row_end(),
        }
    }

    /// A clustered row written as its columns are decoded (the same output
    /// as [`SstabledumpWriter::row`]). On a decoding error what was written
    /// of the row is taken back and the error returned.
    pub fn lazy_row(&mut self, t: &Table<'_>, row: LazyRow<'_>) -> Result<(), EngineError> {
        let mark = self.g.mark();
        let at = RowCtx::of(row.is_static(), row.liveness.as_ref());
        let head = self.row_head(
            t,
            at,
            &row.clustering,
            row.liveness.as_ref(),
            row.deletion.as_ref(),
            row.position.0,
        );
        let mut v = CellsOut {
            w: self,
            t,
            at,
            err: head.err(),
        };
        let decoded = row.visit(&mut v);
        let written = match v.err.take() {
            Some(e) => Err(e),
            None => self.row_end(),
        };
        match (decoded, written) {
            (Ok(()), Ok(())) => Ok(self.g.release(mark)?),
            (Err(e), _) => {
                self.g.rewind(mark);
                Err(e.into())
            }
            (_, Err(e)) => {
                self.g.rewind(mark);
                Err(e.into())
            }
        }
    }

    /// A row up to the start of its `"cells"` array.
    fn row_head(
        &mut self,
        t: &Table<'_>,
        at: RowCtx,
        clustering: &ClusteringPrefix<'_>,
        liveness: Option<&LivenessInfo>,
        deletion: Option<&RowDeletion>,
        position: u64,
    ) -> io::Result<()> {
        self.g.start_object()?;
        self.g.field("type")?;
        // Literal JSON strings (nothing to escape): constant-length copies.
        if at.is_static {
            self.g.raw_value("\"static_block\"")?;
        } else {
            self.g.raw_value("\"row\"")?;
        }
        self.g.number_field("position", position as i64)?;
        if !at.is_static {
            self.clustering(t, clustering)?;
        }
        if let Some(l) = liveness {
            self.g.object_compact = false;
            self.g.field("liveness_info")?;
            // A compact object, written in one go (see `cell`).
            let min = self.lines;
            let o = self.g.value_out();
            first_field!(o, min, "tstamp");
            quoted_time(o, &mut self.dates, self.raw, true, l.timestamp);
            if let (Some(ttl), Some(ldt)) = (l.ttl, l.local_expiration_time) {
                next_field!(o, min, "ttl");
                push_i64(o, ttl);
                next_field!(o, min, "expires_at");
                quoted_time(o, &mut self.dates, self.raw, false, ldt);
                next_field!(o, min, "expired");
                o.push_str(if ldt < t.now_secs { "true" } else { "false" });
            }
            end_object!(o, min);
            self.g.object_compact = false;
        }
        if let Some(d) = deletion {
            self.deletion(&d.time)?;
        }
        self.g.field("cells")?;
        self.g.start_array()
    }

    /// The end of a row's `"cells"` array and of the row.
    fn row_end(&mut self) -> io::Result<()> {
        self.g.end_array()?;
        self.g.end_object()
    }

    /// A complex column's collection-level deletion:
    /// `{ "name" : …, "deletion_info" : { … } }`, all compact, written in
    /// one go (see `cell`).
    fn complex_deletion(
        &mut self,
        at: RowCtx,
        column: &Column,
        d: &DeletionTime,
    ) -> io::Result<()> {
        let min = self.lines;
        let info = self.cols.get(at.is_static, column, SdColumn::of);
        let o = self.g.value_out();
        info.head[usize::from(self.lines)].push_to(o);
        next_field!(o, min, "deletion_info");
        compact_deletion(o, min, &mut self.dates, self.raw, d);
        end_object!(o, min);
        self.g.object_compact = false;
        self.g.maybe_flush()
    }

    /// A cell of a row whose liveness `at` describes.
    #[inline(always)]
    fn cell(
        &mut self,
        t: &Table<'_>,
        at: RowCtx,
        column: &Column,
        cell: &Cell<'_>,
    ) -> io::Result<()> {
        // `self.g` and `self.buf` are used directly below: `info` borrows
        // `self.cols` for the whole cell.
        let info = self.cols.get(at.is_static, column, SdColumn::of);
        let g = &mut self.g;
        let raw = self.raw;
        let live_ts = at.live_ts;
        if !cell.is_deleted() {
            // A live cell is one compact object: `JsonTransformer` sets the
            // object indenter compact right after `writeStartObject` and
            // nothing in it resets that (a tombstone's `deletion_info`
            // does, hence the general path below). So its text is fixed
            // separators around the values, written here in one go after
            // the generator's array separator — what the generator would
            // write call by call (`start_object`, `field`, ... `end_object`).
            let min = self.lines;
            let mut has_path = false;
            let o = g.value_out();
            info.head[usize::from(self.lines)].push_to(o);
            if let (Some(path), Some(path_ty)) = (cell.path, &info.types.path) {
                // A one-string compact array: `[ "…" ]` / `["…"]`.
                if min {
                    o.push_str(",\"path\":[\"");
                } else {
                    o.push_str(", \"path\" : [ \"");
                }
                match &info.types.ty {
                    CqlType::Udt { fields, .. } => {
                        match udt_field_index(path).and_then(|i| fields.get(i)) {
                            Some((fname, _)) => json_escape_into(o, fname),
                            None => render_json(path_ty, path, Form::Str, o, &mut self.buf),
                        }
                    }
                    _ => render_json(path_ty, path, Form::Str, o, &mut self.buf),
                }
                if min {
                    o.push_str("\"]");
                } else {
                    o.push_str("\" ]");
                }
                has_path = true;
            }
            next_field!(o, min, "value");
            render(info.types.value_type(cell.path), cell.value, Form::Json, o);
            let quoted_time = |o: &mut String, dates: &mut DateStrings, micros: bool, v: i64| {
                quoted_time(o, dates, raw, micros, v)
            };
            if live_ts != Some(cell.timestamp) {
                next_field!(o, min, "tstamp");
                quoted_time(o, &mut self.dates, true, cell.timestamp);
            }
            if cell.is_expiring() {
                let row_ttl = at.row_ttl;
                let ttl = cell.ttl.unwrap_or(0);
                if row_ttl != Some(ttl) {
                    let ldt = cell.local_deletion_time.unwrap_or(i64::MAX);
                    next_field!(o, min, "ttl");
                    push_i64(o, ttl);
                    next_field!(o, min, "expires_at");
                    quoted_time(o, &mut self.dates, false, ldt);
                    next_field!(o, min, "expired");
                    // !cell.isLive(now): live while now < expiration.
                    o.push_str(if t.now_secs >= ldt { "true" } else { "false" });
                }
            }
            end_object!(o, min);
            // The indenter flags as the calls would leave them.
            g.object_compact = false;
            if has_path {
                g.array_compact = false;
            }
            return g.maybe_flush();
        }
        g.start_object()?;
        g.object_compact = true;
        g.field("name")?;
        g.raw_value(&info.name)?;
        if let (Some(path), Some(path_ty)) = (cell.path, &info.types.path) {
            g.field("path")?;
            g.array_compact = true;
            g.start_array()?;
            let o = g.value_out();
            o.push('"');
            match &info.types.ty {
                CqlType::Udt { fields, .. } => {
                    match udt_field_index(path).and_then(|i| fields.get(i)) {
                        Some((fname, _)) => json_escape_into(o, fname),
                        None => render_json(path_ty, path, Form::Str, o, &mut self.buf),
                    }
                }
                _ => render_json(path_ty, path, Form::Str, o, &mut self.buf),
            }
            o.push('"');
            g.end_array()?;
            g.array_compact = false;
        }
        if cell.is_deleted() {
            g.field("deletion_info")?;
            g.object_compact = true;
            g.start_object()?;
            g.field("local_delete_time")?;
            secs(
                g,
                &mut self.dates,
                self.raw,
                cell.local_deletion_time.unwrap_or(i64::MAX),
            )?;
            g.end_object()?;
            g.object_compact = false;
        } else {
            g.field("value")?;
            let value_ty = info.types.value_type(cell.path);
            render(value_ty, cell.value, Form::Json, g.value_out());
        }
        if live_ts != Some(cell.timestamp) {
            g.field("tstamp")?;
            micros(g, &mut self.dates, self.raw, cell.timestamp)?;
        }
        if cell.is_expiring() {
            let row_ttl = at.row_ttl;
            let ttl = cell.ttl.unwrap_or(0);
            if row_ttl != Some(ttl) {
                let ldt = cell.local_deletion_time.unwrap_or(i64::MAX);
                g.number_field("ttl", ttl)?;
                g.field("expires_at")?;
                secs(g, &mut self.dates, self.raw, ldt)?;
                g.field("expired")?;
                // !cell.isLive(now): live while now < expiration.
                g.boolean(t.now_secs >= ldt)?;
            }
        }
        g.end_object()?;
        g.object_compact = false;
        Ok(())
    }

    /// A range tombstone marker (`serializeTombstone`).
    pub fn marker(&mut self, t: &Table<'_>, m: &RangeTombstoneMarker<'_>) -> io::Result<()> {
        self.g.start_object()?;
        self.g.field("type")?;
        match m.deletion {
            MarkerDeletion::Bound(d) => {
                self.g.string("range_tombstone_bound")?;
                let kind = m.bound.kind;
                self.bound(t, kind.is_start(), is_inclusive(kind), &m.bound, &d)?;
            }
            MarkerDeletion::Boundary { end, start } => {
                self.g.string("range_tombstone_boundary")?;
                // openBound(false) then closeBound(false).
                let open_incl = m.bound.kind == BoundKind::ExclEndInclStartBoundary;
                self.bound(t, true, open_incl, &m.bound, &start)?;
                self.bound(t, false, !open_incl, &m.bound, &end)?;
            }
        }
        self.g.end_object()?;
        self.g.object_compact = false;
        Ok(())
    }

    fn bound(
        &mut self,
        t: &Table<'_>,
        start: bool,
        inclusive: bool,
        c: &ClusteringPrefix<'_>,
        d: &DeletionTime,
    ) -> io::Result<()> {
        self.g.field(if start { "start" } else { "end" })?;
        self.g.start_object()?;
        self.g
            .string_field("type", if inclusive { "inclusive" } else { "exclusive" })?;
        self.clustering(t, c)?;
        self.deletion(d)?;
        self.g.end_object()
    }
}

/// A time as the JSON string `dateString` prints (µs when `micros`, else
/// seconds; the raw number with `--raw-timestamps`).
fn quoted_time(o: &mut String, dates: &mut DateStrings, raw: bool, micros: bool, v: i64) {
    o.push('"');
    match (raw, micros) {
        (true, _) => push_i64(o, v),
        (false, true) => dates.micros_into(o, v),
        (false, false) => dates.secs_into(o, v),
    }
    o.push('"');
}

/// A `deletion_info` object of a compact object (see
/// [`SstabledumpWriter::cell`]): `{ "marked_deleted" : …, "local_delete_time" : … }`.
fn compact_deletion(
    o: &mut String,
    min: bool,
    dates: &mut DateStrings,
    raw: bool,
    d: &DeletionTime,
) {
    first_field!(o, min, "marked_deleted");
    quoted_time(o, dates, raw, true, d.marked_for_delete_at);
    next_field!(o, min, "local_delete_time");
    quoted_time(o, dates, raw, false, d.local_deletion_time);
    end_object!(o, min);
}

/// A timestamp in µs as `dateString` prints it (nothing to escape).
fn micros<W: Write>(
    g: &mut JsonGen<W>,
    dates: &mut DateStrings,
    raw: bool,
    v: i64,
) -> io::Result<()> {
    if raw {
        g.string_with(|o| push_i64(o, v))
    } else {
        g.string_with(|o| dates.micros_into(o, v))
    }
}

/// A time in seconds as `dateString` prints it (nothing to escape).
fn secs<W: Write>(
    g: &mut JsonGen<W>,
    dates: &mut DateStrings,
    raw: bool,
    v: i64,
) -> io::Result<()> {
    if raw {
        g.string_with(|o| push_i64(o, v))
    } else {
        g.string_with(|o| dates.secs_into(o, v))
    }
}

fn is_inclusive(k: BoundKind) -> bool {
    matches!(k, BoundKind::InclStartBound | BoundKind::InclEndBound)
}

/// The index of a non-frozen UDT field from its cell path (a big-endian short).
pub fn udt_field_index(path: &[u8]) -> Option<usize> {
    let b: [u8; 2] = path.try_into().ok()?;
    usize::try_from(i16::from_be_bytes(b)).ok()
}

/// The type of a cell's value: the column type for simple cells, the element
/// (list/map value, set: empty, UDT field) type for complex ones.
pub fn cell_value_type(ty: &CqlType, path: Option<&[u8]>) -> CqlType {
    let u = ty.unreversed();
    match (u, path) {
        (CqlType::Udt { fields, .. }, Some(p)) => {
            match udt_field_index(p).and_then(|i| fields.get(i)) {
                Some((_, t)) => t.clone(),
                None => CqlType::Native(sstkit_format::types::Native::Blob),
            }
        }
        (_, Some(_)) => u.cell_value_type().unwrap_or_else(|| u.clone()),
        (_, None) => u.clone(),
    }
}

/// Call `f` with each `getString` component of a partition key, as
/// `serializePartitionKey` splits it: `CompositeType` keys component by
/// component (stopping at a non-zero end-of-component byte), others whole.
pub fn for_each_key_string(
    t: &Table<'_>,
    key: &[u8],
    buf: &mut String,
    mut f: impl FnMut(&str) -> io::Result<()>,
) -> io::Result<()> {
    match &t.header.partition_key_type {
        CqlType::Composite(types) => {
            for ((v, _), ty) in CompositeParts::of(key).zip(types) {
                buf.clear();
                render(ty, v, Form::Str, buf);
                f(buf)?;
            }
            Ok(())
        }
        ty => {
            buf.clear();
            render(ty, key, Form::Str, buf);
            f(buf)
        }
    }
}

/// Writer of `sstabledump -e` (partition keys only).
pub struct KeysWriter<W: Write> {
    g: SstabledumpWriter<W>,
}

impl<W: Write> KeysWriter<W> {
    /// A keys writer (`-e` is always the pretty form).
    pub fn new(w: W) -> Self {
        KeysWriter {
            g: SstabledumpWriter::new(w, false),
        }
    }

    /// Start the array.
    pub fn begin(&mut self) -> io::Result<()> {
        self.g.begin()
    }

    /// One key.
    pub fn key(&mut self, t: &Table<'_>, key: &[u8]) -> io::Result<()> {
        self.g.key(t, key)
    }

    /// Close the array.
    pub fn finish(self) -> io::Result<W> {
        self.g.finish()
    }

    /// The writer underneath (see [`SstabledumpWriter::writer`]).
    pub fn writer(&mut self) -> io::Result<&mut W> {
        self.g.writer()
    }

    /// See [`SstabledumpWriter::resume`].
    pub fn resume(&mut self) {
        self.g.resume();
    }

    /// True while no key was written.
    pub fn at_start(&self) -> bool {
        self.g.at_start()
    }
}
