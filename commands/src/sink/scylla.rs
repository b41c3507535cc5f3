//! `--output json` / `ndjson`: the `scylla sstable dump-data` schema (see the
//! schema in [`crate::sink`]).
//!
//! Partitions are serialized by hand (no JSON value tree) into one reused
//! buffer, framing included ([`JsonOut::open_item_object`]), which is handed
//! to the output in blocks of [`FLUSH_AT`] bytes: between partitions, and
//! inside a partition once it is sure to be printed. So memory stays flat
//! however large a partition is, for `ndjson` too (a line is streamed), and
//! a `BufWriter` underneath passes the blocks through without copying them.
//!
//! Per-column data (the name as a JSON key, the cell `type`, element types)
//! is computed once per writer (`ColumnCache`); a writer serves one table.
//! The hot path pushes straight into the buffer: integers through `itoa`,
//! values through [`render_json`], the row timestamp (shared by most
//! cells of a row) and deletion times from a one-entry cache.

use std::io;

use sstkit_format::value::CounterView;

use crate::render::fixed::{
    hex_into, json_escape_into, local_date_into, push_i64, uuid_into, Piece,
};
use crate::render::{render, render_json, Form, JsonStr};
use sstkit_format::clustering::{BoundKind, ClusteringPrefix};
use sstkit_format::data::{
    Cell, Column, ColumnVisitor, LazyRow, LivenessInfo, MarkerDeletion, RangeTombstoneMarker, Row,
    RowDeletion,
};
use sstkit_format::deletion::DeletionTime;
use sstkit_format::types::CqlType;

use super::jackson::FLUSH_AT;
use super::sstabledump::udt_field_index;
use super::{static_row_shown, tombstones_of, CellTypes, ColumnCache, Sink, Table};
use crate::output::{ItemMark, JsonOut};
use sstkit_format::engine::Error as EngineError;

/// Writer of the scylla dump-data schema into a [`JsonOut`].
///
/// What it buffers is written out at [`ScyllaWriter::flush`] or, failing
/// that, when the writer is dropped (errors then ignored).
pub struct ScyllaWriter<'a, 'w> {
    json: &'a mut JsonOut<'w>,
    tombstones_only: bool,
    out: Out,
    cols: ColumnCache<ScyllaColumn>,
    /// Where the open partition starts in the buffer and the framing state
    /// before it: a partition `--tombstones-only` drops is taken back.
    part: Option<(usize, ItemMark)>,
    /// `"clustering_elements":[` was opened.
    elements: bool,
    /// The open partition has something to print under `--tombstones-only`.
    content: bool,
    /// The last partition was written.
    written: bool,
    /// The buffer is handed to the output once it holds this many bytes.
    flush_at: usize,
}

/// The output buffer and the one-entry caches of the hot path.
struct Out {
    buf: String,
    /// For values that need escaping after rendering.
    scratch: String,
    /// The last cell / liveness timestamp.
    ts: LastText,
    /// The last deletion / expiry time (`gc_time`).
    gc: LastText,
    /// The text of a `$TOMBSTONE` after its timestamp, by deletion time.
    tomb_tail: (Option<i64>, Piece<48>),
    /// How the clustering values are rendered (the table's, made once).
    ck: Vec<Kind>,
}

impl Out {
    fn new() -> Self {
        Out {
            buf: String::new(),
            scratch: String::new(),
            ts: LastText::new(),
            gc: LastText::new(),
            tomb_tail: (None, Piece::new("")),
            ck: Vec::new(),
        }
    }

    /// A row's `"marker"` entry.
    fn marker(&mut self, l: &LivenessInfo) {
        self.buf.push_str(",\"marker\":{\"timestamp\":");
        self.ts.push(&mut self.buf, l.timestamp, push_i64);
        // Scylla writes the TTL of a live marker only: an expired liveness
        // (a dead marker) shows its timestamp alone.
        if let (Some(ttl), Some(ldt), false) = (l.ttl, l.local_expiration_time, l.expired) {
            self.buf.push_str(",\"ttl\":\"");
            push_i64(&mut self.buf, ttl);
            self.buf.push_str("s\",\"expiry\":\"");
            self.gc.push(&mut self.buf, ldt, gc_time_into);
            self.buf.push('"');
        }
        self.buf.push('}');
    }
}

/// The text of the last value rendered, reused while the value repeats
/// (kept as a [`Piece`]: appended with one fixed-size copy).
struct LastText {
    value: Option<i64>,
    text: Piece<32>,
    /// Where the text is rendered (kept: no allocation per new value).
    scratch: String,
}

impl LastText {
    fn new() -> Self {
        LastText {
            value: None,
            text: Piece::new(""),
            scratch: String::with_capacity(32),
        }
    }

    #[inline(always)]
    fn push(&mut self, out: &mut String, v: i64, render: fn(&mut String, i64)) {
        if self.value != Some(v) {
            self.refresh(v, render);
        }
        self.text.push_to(out);
    }

    fn refresh(&mut self, v: i64, render: fn(&mut String, i64)) {
        self.scratch.clear();
        render(&mut self.scratch, v);
        self.text = Piece::new(&self.scratch);
        self.value = Some(v);
    }
}

/// What the writer needs of a column, computed once.
struct ScyllaColumn {
    /// `"name":`, the column's key in `$COLUMNS`.
    key: String,
    /// The start of a simple cell, up to its timestamp, live and dead:
    /// `"name":{"is_live":true,"type":"regular","timestamp":` (one push).
    simple: [Piece<96>; 2],
    /// The same for the element cells of a complex column (no key).
    element: [Piece<64>; 2],
    counter: bool,
    types: CellTypes,
    /// How the value of a simple cell is rendered.
    value: Kind,
    /// How element values are rendered (`None`: per UDT field).
    element_value: Option<Kind>,
    /// How cell paths (map keys, set elements) are rendered.
    path: Option<Kind>,
}

/// A value renderer chosen once per type ([`JsonStr`] and the form).
#[derive(Clone, Copy)]
struct Kind(JsonStr, Form);

impl Kind {
    fn of(ty: &CqlType) -> Kind {
        let form = scylla_form(ty);
        Kind(JsonStr::of(ty, form), form)
    }
}

/// The start of a cell, up to its timestamp, live (`[0]`) and dead.
fn cell_heads(kind: &str) -> [String; 2] {
    [true, false].map(|live| format!("{{\"is_live\":{live},\"type\":\"{kind}\",\"timestamp\":"))
}

impl ScyllaColumn {
    fn of(c: &Column) -> ScyllaColumn {
        let mut key = String::from("\"");
        json_escape_into(&mut key, c.name());
        key.push_str("\":");
        let kind = if c.counter {
            "counter-shards"
        } else if is_frozen_collection(c.ty()) {
            "frozen-collection"
        } else {
            "regular"
        };
        let simple = cell_heads(kind).map(|h| Piece::new(&format!("{key}{h}")));
        let element = cell_heads(if c.counter {
            "counter-shards"
        } else {
            "regular"
        })
        .map(|h| Piece::new(&h));
        let types = CellTypes::of(c);
        let is_udt = matches!(types.ty, CqlType::Udt { .. });
        ScyllaColumn {
            key,
            simple,
            element,
            counter: c.counter,
            value: Kind::of(&types.ty),
            element_value: (!is_udt).then(|| Kind::of(types.value_type(Some(&[])))),
            path: if is_udt {
                None
            } else {
                types.path.as_ref().map(Kind::of)
            },
            types,
        }
    }
}

/// Writes `{$COLUMNS}` as the decoder hands over the column data
/// ([`ColumnVisitor`]); [`ScyllaWriter::columns`] feeds it a decoded row.
struct CellsOut<'o> {
    out: &'o mut Out,
    cols: &'o mut ColumnCache<ScyllaColumn>,
    is_static: bool,
    /// No column written yet.
    first: bool,
    /// No element of the open complex column written yet.
    first_element: bool,
}

impl<'o> CellsOut<'o> {
    fn new(out: &'o mut Out, cols: &'o mut ColumnCache<ScyllaColumn>, is_static: bool) -> Self {
        out.buf.push('{');
        CellsOut {
            out,
            cols,
            is_static,
            first: true,
            first_element: true,
        }
    }

    #[inline(always)]
    fn column_sep(&mut self) {
        if !self.first {
            self.out.buf.push(',');
        }
        self.first = false;
    }

    fn finish(self) {
        self.out.buf.push('}');
    }
}

impl<'a> ColumnVisitor<'a> for CellsOut<'_> {
    #[inline(always)]
    fn simple(&mut self, column: &'a Column, cell: &Cell<'a>) {
        self.column_sep();
        let col = self.cols.get(self.is_static, column, ScyllaColumn::of);
        self.out.cell(col, &col.simple, cell);
    }

    fn complex_start(&mut self, column: &'a Column, deletion: Option<DeletionTime>, _: usize) {
        self.column_sep();
        let col = self.cols.get(self.is_static, column, ScyllaColumn::of);
        let out = &mut *self.out;
        out.buf.push_str(&col.key);
        out.buf.push('{');
        if let Some(d) = deletion {
            out.buf.push_str("\"tombstone\":");
            out.tombstone(Some(&d));
            out.buf.push(',');
        }
        out.buf.push_str("\"cells\":[");
        self.first_element = true;
    }

    #[inline(always)]
    fn element(&mut self, column: &'a Column, cell: &Cell<'a>) {
        let col = self.cols.get(self.is_static, column, ScyllaColumn::of);
        let out = &mut *self.out;
        if !self.first_element {
            out.buf.push(',');
        }
        self.first_element = false;
        out.buf.push_str("{\"key\":");
        out.element_key(col, cell.path.unwrap_or(&[]));
        out.buf.push_str(",\"value\":");
        out.cell(col, &col.element, cell);
        out.buf.push('}');
    }

    fn complex_end(&mut self, _: &'a Column) {
        self.out.buf.push_str("]}");
    }
}

/// Scylla's text form of a value: CQL literal for collections, tuples and
/// UDTs, `getString` for the rest.
pub fn scylla_value(ty: &CqlType, b: &[u8], out: &mut String) {
    render(ty, b, scylla_form(ty), out)
}

/// The form [`scylla_value`] uses for `ty`.
fn scylla_form(ty: &CqlType) -> Form {
    let mut t = ty;
    while let CqlType::Reversed(i) | CqlType::Frozen(i) = t {
        t = i;
    }
    match t {
        CqlType::Native(_) | CqlType::Composite(_) => Form::Str,
        _ => Form::Cql,
    }
}

fn is_frozen_collection(ty: &CqlType) -> bool {
    let mut t = ty;
    while let CqlType::Reversed(i) | CqlType::Frozen(i) = t {
        t = i;
    }
    matches!(t, CqlType::List(_) | CqlType::Set(_) | CqlType::Map(..))
}

/// `YYYY-MM-DD HH:MM:SSz` of seconds since the epoch (Scylla's gc_clock format).
pub fn gc_time(secs: i64) -> String {
    let mut s = String::with_capacity(24);
    gc_time_into(&mut s, secs);
    s
}

/// [`gc_time`], appended to `out`.
pub fn gc_time_into(out: &mut String, secs: i64) {
    let sod = secs.rem_euclid(86_400);
    local_date_into(out, secs.div_euclid(86_400));
    let mut b = *b" 00:00:00z";
    for (i, v) in [sod / 3600, sod / 60 % 60, sod % 60]
        .into_iter()
        .enumerate()
    {
        b[1 + 3 * i] = b'0' + (v / 10) as u8;
        b[2 + 3 * i] = b'0' + (v % 10) as u8;
    }
    out.push_str(std::str::from_utf8(&b).unwrap_or_default());
}

impl Out {
    /// `"<text>"`: a value's Scylla text as a JSON string.
    #[inline]
    fn value_string(&mut self, ty: &CqlType, b: &[u8]) {
        self.buf.push('"');
        render_json(ty, b, scylla_form(ty), &mut self.buf, &mut self.scratch);
        self.buf.push('"');
    }

    /// `$TOMBSTONE`. The text after the timestamp is kept for the last
    /// deletion time (rows written in the same second share that; their
    /// timestamps differ). The whole text of the last tombstone is not kept:
    /// copying it back out of the buffer for the next column with the same
    /// deletion costs more than writing the timestamp again.
    fn tombstone(&mut self, d: Option<&DeletionTime>) {
        match d {
            None => self.buf.push_str("{}"),
            Some(d) => {
                self.buf.push_str("{\"timestamp\":");
                push_i64(&mut self.buf, d.marked_for_delete_at);
                if self.tomb_tail.0 != Some(d.local_deletion_time) {
                    self.refresh_tomb_tail(d.local_deletion_time);
                }
                self.tomb_tail.1.push_to(&mut self.buf);
            }
        }
    }

    /// `,"deletion_time":"…"}` of a new deletion time.
    #[cold]
    fn refresh_tomb_tail(&mut self, local_deletion_time: i64) {
        let mut s = std::mem::take(&mut self.scratch);
        s.clear();
        s.push_str(",\"deletion_time\":\"");
        gc_time_into(&mut s, local_deletion_time);
        s.push_str("\"}");
        self.tomb_tail = (Some(local_deletion_time), Piece::new(&s));
        self.scratch = s;
    }

    fn clustering_key(&mut self, t: &Table<'_>, c: &ClusteringPrefix<'_>) {
        self.buf.push_str("{\"raw\":\"");
        for v in c.values.iter().flatten() {
            let len = v.len().min(0xffff) as u16;
            hex_into(&mut self.buf, &len.to_be_bytes());
            hex_into(&mut self.buf, v);
        }
        self.buf.push_str("\",\"value\":\"");
        // The values joined by `:` (escaping each piece escapes the whole).
        for (i, v) in c.values.iter().enumerate() {
            let Some(v) = v else { continue };
            if i > 0 {
                self.buf.push(':');
            }
            if self.ck.len() != t.header.clustering_types.len() {
                self.ck = t.header.clustering_types.iter().map(Kind::of).collect();
            }
            match (t.header.clustering_types.get(i), self.ck.get(i)) {
                (Some(ty), Some(k)) => k.0.render(ty, v, k.1, &mut self.buf, &mut self.scratch),
                _ => hex_into(&mut self.buf, v),
            }
        }
        self.buf.push_str("\"}");
    }

    /// `{"token","raw","value"}` of a partition key, without the braces.
    fn key_fields(&mut self, t: &Table<'_>, key: &[u8]) {
        let token = t.partitioner.token(key);
        self.buf.push_str("\"token\":\"");
        {
            use std::fmt::Write as _;
            let _ = write!(self.buf, "{token}");
        }
        self.buf.push_str("\",\"raw\":\"");
        hex_into(&mut self.buf, key);
        self.buf.push_str("\",\"value\":");
        self.value_string(&t.header.partition_key_type, key);
    }

    /// One cell; `heads` are its start up to the timestamp, live and dead
    /// ([`ScyllaColumn`]).
    #[inline(always)]
    fn cell<const N: usize>(&mut self, col: &ScyllaColumn, heads: &[Piece<N>; 2], c: &Cell<'_>) {
        let dead = c.is_deleted();
        heads[usize::from(dead)].push_to(&mut self.buf);
        self.ts.push(&mut self.buf, c.timestamp, push_i64);
        if dead {
            self.buf.push_str(",\"deletion_time\":\"");
            self.gc.push(
                &mut self.buf,
                c.local_deletion_time.unwrap_or(0),
                gc_time_into,
            );
            self.buf.push_str("\"}");
            return;
        }
        if c.is_expiring() {
            self.buf.push_str(",\"ttl\":\"");
            push_i64(&mut self.buf, c.ttl.unwrap_or(0));
            self.buf.push_str("s\",\"expiry\":\"");
            self.gc.push(
                &mut self.buf,
                c.local_deletion_time.unwrap_or(0),
                gc_time_into,
            );
            self.buf.push('"');
        }
        if col.counter {
            self.buf.push_str(",\"value\":");
            counter_shards(&mut self.buf, c.value);
            self.buf.push('}');
            return;
        }
        // The quotes around the value go with the literals next to them
        // (one append fewer each, per cell).
        self.buf.push_str(",\"value\":\"");
        let kind = if c.path.is_none() {
            Some(col.value)
        } else {
            col.element_value
        };
        let ty = col.types.value_type(c.path);
        match kind {
            Some(k) => {
                k.0.render(ty, c.value, k.1, &mut self.buf, &mut self.scratch)
            }
            None => render_json(
                ty,
                c.value,
                scylla_form(ty),
                &mut self.buf,
                &mut self.scratch,
            ),
        }
        self.buf.push_str("\"}");
    }

    /// The `"key"` of an element cell: the UDT field name, or the path's text.
    fn element_key(&mut self, col: &ScyllaColumn, path: &[u8]) {
        self.buf.push('"');
        match (&col.types.ty, &col.types.path) {
            (CqlType::Udt { fields, .. }, _) => {
                match udt_field_index(path).and_then(|i| fields.get(i)) {
                    Some((n, _)) => json_escape_into(&mut self.buf, n),
                    None => hex_into(&mut self.buf, path),
                }
            }
            (_, Some(pt)) => match col.path {
                Some(k) => k.0.render(pt, path, k.1, &mut self.buf, &mut self.scratch),
                None => render_json(pt, path, scylla_form(pt), &mut self.buf, &mut self.scratch),
            },
            (_, None) => hex_into(&mut self.buf, path),
        }
        self.buf.push('"');
    }
}

impl<'a, 'w> ScyllaWriter<'a, 'w> {
    /// A writer for one sstable's partitions (the sstable was begun on
    /// `json`). `ndjson` is `json`'s format, which decides the framing
    /// ([`JsonOut::open_item_object`]); kept for the callers' sake.
    pub fn new(json: &'a mut JsonOut<'w>, ndjson: bool, tombstones_only: bool) -> Self {
        let _ = ndjson;
        ScyllaWriter {
            json,
            tombstones_only,
            out: Out::new(),
            cols: ColumnCache::new(),
            part: None,
            elements: false,
            content: false,
            flush_at: FLUSH_AT,
            written: false,
        }
    }

    /// Continue an sstable's payload whose first partitions another
    /// writer rendered ([`JsonOut::resume`]).
    pub fn resume(&mut self) {
        self.json.resume();
    }

    /// True while the next partition is framed as the first.
    pub fn at_start(&self) -> bool {
        self.json.at_start()
    }

    /// Write `bytes` after what is buffered.
    pub fn write_through(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.flush()?;
        self.json.raw().write_all(bytes)
    }

    /// Write out what is buffered (everything before the open partition,
    /// and the open partition when it is sure to be printed).
    pub fn flush(&mut self) -> io::Result<()> {
        let end = self.flushable();
        if end > 0 {
            self.json.raw().write_all(&self.out.buf.as_bytes()[..end])?;
            self.out.buf.drain(..end);
            if let Some((start, _)) = &mut self.part {
                *start = start.saturating_sub(end);
            }
        }
        Ok(())
    }

    /// How much of the buffer [`ScyllaWriter::flush`] writes.
    fn flushable(&self) -> usize {
        match self.part {
            Some((start, _)) if !self.committed() => start,
            _ => self.out.buf.len(),
        }
    }

    /// Render into `buffer` (when nothing is buffered) and keep everything
    /// there until [`ScyllaWriter::take_buffered`]: a piece rendered on
    /// another thread is handed over whole, not copied out block by block.
    pub fn hold_output(&mut self, buffer: Vec<u8>) {
        self.flush_at = usize::MAX;
        if self.out.buf.is_empty() {
            let mut b = buffer;
            b.clear();
            // An empty buffer is valid UTF-8.
            self.out.buf = String::from_utf8(b).unwrap_or_default();
        }
    }

    /// What [`ScyllaWriter::flush`] would write, taken out of the buffer.
    pub fn take_buffered(&mut self) -> Vec<u8> {
        let end = self.flushable();
        let rest = self.out.buf.split_off(end);
        if let Some((start, _)) = &mut self.part {
            *start = start.saturating_sub(end);
        }
        std::mem::replace(&mut self.out.buf, rest).into_bytes()
    }

    /// The open partition will be printed whatever comes next.
    fn committed(&self) -> bool {
        self.content || !self.tombstones_only
    }

    /// Something was written: the partition has content; flush a full buffer.
    fn wrote(&mut self) -> io::Result<()> {
        self.content = true;
        if self.out.buf.len() >= self.flush_at {
            self.flush()?;
        }
        Ok(())
    }

    fn element_sep(&mut self) {
        if self.elements {
            self.out.buf.push(',');
        } else {
            self.out.buf.push_str(",\"clustering_elements\":[");
            self.elements = true;
        }
    }

    /// `{$COLUMNS}` of a decoded row.
    fn columns(&mut self, row: &Row<'_>) {
        let mut v = CellsOut::new(&mut self.out, &mut self.cols, row.is_static());
        row.visit_columns(&mut v);
        v.finish();
    }

    /// A clustering row up to its `"columns":`.
    fn row_head(
        &mut self,
        t: &Table<'_>,
        clustering: &ClusteringPrefix<'_>,
        deletion: Option<&RowDeletion>,
        scylla_shadowable: Option<&DeletionTime>,
        liveness: Option<&LivenessInfo>,
    ) {
        self.element_sep();
        let out = &mut self.out;
        out.buf.push_str("{\"type\":\"clustering-row\",\"key\":");
        out.clustering_key(t, clustering);
        if let Some((regular, shadowable)) = row_tombstone(deletion, scylla_shadowable, liveness) {
            out.buf.push_str(",\"tombstone\":");
            out.tombstone(regular.as_ref());
            out.buf.push_str(",\"shadowable_tombstone\":");
            out.tombstone(Some(&shadowable));
        }
        if let Some(l) = liveness {
            out.marker(l);
        }
        out.buf.push_str(",\"columns\":");
    }

    fn write_row(&mut self, t: &Table<'_>, row: &Row<'_>) -> io::Result<()> {
        self.row_head(
            t,
            &row.clustering,
            row.deletion.as_ref(),
            row.scylla_shadowable_deletion.as_ref(),
            row.liveness.as_ref(),
        );
        self.columns(row);
        self.out.buf.push('}');
        self.wrote()
    }

    fn change(
        &mut self,
        t: &Table<'_>,
        c: &ClusteringPrefix<'_>,
        weight: i8,
        d: Option<&DeletionTime>,
    ) {
        self.element_sep();
        let out = &mut self.out;
        out.buf.push_str("{\"type\":\"range-tombstone-change\"");
        if !c.values.is_empty() {
            out.buf.push_str(",\"key\":");
            out.clustering_key(t, c);
        }
        out.buf.push_str(if weight < 0 {
            ",\"weight\":-1,\"tombstone\":"
        } else {
            ",\"weight\":1,\"tombstone\":"
        });
        out.tombstone(d);
        out.buf.push('}');
    }
}

impl Drop for ScyllaWriter<'_, '_> {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

/// Counter context shards: `[{"id","value","clock"}]`.
fn counter_shards(buf: &mut String, b: &[u8]) {
    let Some(counter) = CounterView::of(b) else {
        buf.push_str("\"0x");
        hex_into(buf, b);
        buf.push('"');
        return;
    };
    buf.push('[');
    for (i, s) in counter.shards().enumerate() {
        if i > 0 {
            buf.push(',');
        }
        buf.push_str("{\"id\":\"");
        uuid_into(buf, &s.counter_id.0);
        buf.push_str("\",\"value\":");
        push_i64(buf, s.count);
        buf.push_str(",\"clock\":");
        push_i64(buf, s.clock);
        buf.push('}');
    }
    buf.push(']');
}

/// A row's deletions as Scylla holds them (its `row_tombstone`): the
/// regular one, and the shadowable one, which is never older than the
/// regular (a regular deletion alone is both). A live row marker newer
/// than a Scylla shadowable deletion shadows it (`maybe_shadow`, applied
/// as Scylla's reader applies it): the regular one is left in its place.
/// `None` when the row has neither: `scylla sstable dump-data` then writes
/// no tombstone keys.
fn row_tombstone(
    deletion: Option<&RowDeletion>,
    scylla_shadowable: Option<&DeletionTime>,
    marker: Option<&LivenessInfo>,
) -> Option<(Option<DeletionTime>, DeletionTime)> {
    let regular = deletion
        .filter(|d| !d.shadowable)
        .map(|d| d.time)
        .filter(|d| !d.is_live());
    // Cassandra's deprecated shadowable flag makes the row's one deletion shadowable.
    let cassandra = deletion.filter(|d| d.shadowable).map(|d| d.time);
    let scylla = scylla_shadowable.copied().filter(|d| !d.is_live());
    let newest = [regular, cassandra, scylla]
        .into_iter()
        .flatten()
        .filter(|d| !d.is_live())
        .max_by_key(|d| (d.marked_for_delete_at, d.local_deletion_time))?;
    let shadowed = scylla.is_some()
        && marker.is_some_and(|m| !m.expired && m.timestamp > newest.marked_for_delete_at);
    if shadowed {
        return regular.map(|r| (Some(r), r));
    }
    Some((regular, newest))
}

impl Sink for ScyllaWriter<'_, '_> {
    fn rows_resume(&mut self) -> io::Result<()> {
        // What the partition's start rendered is written out (the caller
        // skips it), and the next element comes after a separator.
        self.flush()?;
        self.elements = true;
        Ok(())
    }
    fn partition_start(
        &mut self,
        t: &Table<'_>,
        key: &[u8],
        deletion: &DeletionTime,
        _header_end: u64,
    ) -> io::Result<()> {
        self.cols.table(t.header);
        let start = self.out.buf.len();
        let mark = self.json.open_item_object(&mut self.out.buf);
        self.part = Some((start, mark));
        self.elements = false;
        self.content = !deletion.is_live();
        self.out.buf.push_str("\"key\":{");
        self.out.key_fields(t, key);
        self.out.buf.push('}');
        if !deletion.is_live() {
            self.out.buf.push_str(",\"tombstone\":");
            self.out.tombstone(Some(deletion));
        }
        Ok(())
    }

    fn static_row(&mut self, _t: &Table<'_>, row: &Row<'_>, _position: u64) -> io::Result<()> {
        let mut kept = None;
        let Some(row) = static_row_shown(row, self.tombstones_only, &mut kept) else {
            return Ok(());
        };
        self.out.buf.push_str(",\"static_row\":");
        self.columns(row);
        self.wrote()
    }

    fn row(&mut self, t: &Table<'_>, row: &Row<'_>) -> io::Result<()> {
        if self.tombstones_only {
            return match tombstones_of(row) {
                Some(r) => self.write_row(t, &r),
                None => Ok(()),
            };
        }
        self.write_row(t, row)
    }

    fn takes_lazy_rows(&self) -> bool {
        !self.tombstones_only
    }

    fn lazy_row(&mut self, t: &Table<'_>, row: LazyRow<'_>) -> Result<(), EngineError> {
        let (start, elements) = (self.out.buf.len(), self.elements);
        self.row_head(
            t,
            &row.clustering,
            row.deletion.as_ref(),
            row.scylla_shadowable_deletion.as_ref(),
            row.liveness.as_ref(),
        );
        let mut v = CellsOut::new(&mut self.out, &mut self.cols, false);
        if let Err(e) = row.visit(&mut v) {
            // Take the row back: the output stays what it was before it.
            self.out.buf.truncate(start);
            self.elements = elements;
            return Err(e.into());
        }
        v.finish();
        self.out.buf.push('}');
        Ok(self.wrote()?)
    }

    fn marker(&mut self, t: &Table<'_>, m: &RangeTombstoneMarker<'_>) -> io::Result<()> {
        let k = m.bound.kind;
        match m.deletion {
            MarkerDeletion::Bound(d) => match k {
                BoundKind::InclStartBound => self.change(t, &m.bound, -1, Some(&d)),
                BoundKind::ExclStartBound => self.change(t, &m.bound, 1, Some(&d)),
                BoundKind::InclEndBound => self.change(t, &m.bound, 1, None),
                _ => self.change(t, &m.bound, -1, None),
            },
            MarkerDeletion::Boundary { start, .. } => {
                let w = if k == BoundKind::ExclEndInclStartBoundary {
                    -1
                } else {
                    1
                };
                self.change(t, &m.bound, w, Some(&start));
            }
        }
        self.wrote()
    }

    fn partition_end(&mut self, _t: &Table<'_>) -> io::Result<()> {
        let Some((start, mark)) = self.part.take() else {
            return Ok(());
        };
        self.written = self.committed();
        if !self.written {
            // Dropped by --tombstones-only: take the partition back.
            self.out.buf.truncate(start);
            self.json.cancel_item(mark);
            return Ok(());
        }
        if self.elements {
            self.out.buf.push(']');
        }
        self.json.close_item_object(&mut self.out.buf);
        if self.out.buf.len() >= self.flush_at {
            self.flush()?;
        }
        Ok(())
    }

    fn last_partition_written(&self) -> bool {
        self.written
    }

    fn key_only(&mut self, t: &Table<'_>, key: &[u8]) -> io::Result<()> {
        self.json.open_item_object(&mut self.out.buf);
        self.out.key_fields(t, key);
        self.json.close_item_object(&mut self.out.buf);
        if self.out.buf.len() >= self.flush_at {
            self.flush()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dt(ts: i64, ldt: i64) -> DeletionTime {
        DeletionTime {
            marked_for_delete_at: ts,
            local_deletion_time: ldt,
        }
    }

    fn deletion(time: DeletionTime, shadowable: bool) -> RowDeletion {
        RowDeletion { time, shadowable }
    }

    fn marker_json(l: &LivenessInfo) -> String {
        let mut out = Out::new();
        out.marker(l);
        out.buf
    }

    /// A live marker shows its TTL and expiry; a dead one (an expired
    /// liveness) its timestamp alone, as Scylla's `write(row_marker)`.
    #[test]
    fn markers_are_scyllas() {
        let live = LivenessInfo {
            timestamp: 5,
            ttl: None,
            local_expiration_time: None,
            expired: false,
        };
        assert_eq!(marker_json(&live), r#","marker":{"timestamp":5}"#);
        let expiring = LivenessInfo {
            ttl: Some(60),
            local_expiration_time: Some(1_700_000_000),
            ..live
        };
        assert_eq!(
            marker_json(&expiring),
            r#","marker":{"timestamp":5,"ttl":"60s","expiry":"2023-11-14 22:13:20z"}"#
        );
        let dead = LivenessInfo {
            ttl: Some(i64::from(i32::MAX)),
            expired: true,
            ..expiring
        };
        assert_eq!(marker_json(&dead), r#","marker":{"timestamp":5}"#);
    }

    /// Scylla's `row_tombstone`: a regular deletion is both tombstones; the
    /// shadowable one is the newer of the two; a shadowable deletion alone
    /// leaves the regular one empty.
    #[test]
    fn row_tombstones_are_scyllas() {
        let (old, new) = (dt(10, 100), dt(20, 50));
        assert_eq!(row_tombstone(None, None, None), None);
        let regular = deletion(old, false);
        assert_eq!(
            row_tombstone(Some(&regular), None, None),
            Some((Some(old), old))
        );
        assert_eq!(
            row_tombstone(Some(&regular), Some(&new), None),
            Some((Some(old), new))
        );
        let newer = deletion(new, false);
        assert_eq!(
            row_tombstone(Some(&newer), Some(&old), None),
            Some((Some(new), new))
        );
        assert_eq!(row_tombstone(None, Some(&new), None), Some((None, new)));
        let cassandra = deletion(old, true);
        assert_eq!(
            row_tombstone(Some(&cassandra), None, None),
            Some((None, old))
        );
        // The same timestamp: the later deletion time wins, as Scylla orders tombstones.
        assert_eq!(
            row_tombstone(Some(&regular), Some(&dt(10, 200)), None),
            Some((Some(old), dt(10, 200)))
        );
        // A live marker newer than a Scylla shadowable deletion shadows it:
        // the regular deletion stands in its place, or none is left.
        let live = |ts| LivenessInfo {
            timestamp: ts,
            ttl: None,
            local_expiration_time: None,
            expired: false,
        };
        assert_eq!(row_tombstone(None, Some(&new), Some(&live(21))), None);
        assert_eq!(
            row_tombstone(Some(&regular), Some(&new), Some(&live(21))),
            Some((Some(old), old))
        );
        // Not newer, or dead (an expired liveness): the shadowable one stays.
        assert_eq!(
            row_tombstone(None, Some(&new), Some(&live(20))),
            Some((None, new))
        );
        let dead = LivenessInfo {
            expired: true,
            ttl: Some(i64::from(i32::MAX)),
            local_expiration_time: Some(30),
            ..live(21)
        };
        assert_eq!(
            row_tombstone(None, Some(&new), Some(&dead)),
            Some((None, new))
        );
        // Only Scylla's shadowable deletion is shadowed (its reader applies
        // the marker to that one): Cassandra's flag keeps its deletion.
        assert_eq!(
            row_tombstone(Some(&cassandra), None, Some(&live(21))),
            Some((None, old))
        );
    }
}
