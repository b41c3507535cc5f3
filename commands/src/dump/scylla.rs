//! `--output json` / `ndjson`: the `scylla sstable dump-data` schema (see the
//! schema in [`crate::dump`]).
//!
//! Each partition is serialized by hand into a reused buffer (no JSON value
//! tree). For `json` the buffer is flushed to the output whenever it grows
//! past 64 KiB, so a huge partition is streamed; `ndjson` needs the whole
//! partition on one line and writes it at the partition's end.

use std::fmt::Write as _;
use std::io::{self, Write};

use sstkit_format::clustering::{BoundKind, ClusteringPrefix};
use sstkit_format::data::{Cell, ColumnData, MarkerDeletion, RangeTombstoneMarker, Row};
use sstkit_format::deletion::DeletionTime;
use sstkit_format::types::CqlType;
use sstkit_format::value::java::{self, render, Form};
use sstkit_format::value::Uuid;

use super::jackson::write_escaped;
use super::sstabledump::{cell_value_type, udt_field_index};
use super::{row_is_empty, tombstones_of, Sink, Table};
use crate::output::JsonOut;

const FLUSH_AT: usize = 64 * 1024;

/// Writer of the scylla dump-data schema into a [`JsonOut`].
pub struct ScyllaWriter<'a, 'w> {
    json: &'a mut JsonOut<'w>,
    ndjson: bool,
    tombstones_only: bool,
    buf: Vec<u8>,
    s: String,
    /// In a partition whose item prefix was written (json streaming).
    streaming: bool,
    /// `"clustering_elements":[` was opened and how many elements it holds.
    elements: Option<usize>,
    /// A partition is open.
    open: bool,
    /// The open partition has something to print under `--tombstones-only`.
    content: bool,
    /// The last partition was written.
    written: bool,
}

/// Scylla's text form of a value: CQL literal for collections, tuples and
/// UDTs, `getString` for the rest.
pub fn scylla_value(ty: &CqlType, b: &[u8], out: &mut String) {
    let mut t = ty;
    while let CqlType::Reversed(i) | CqlType::Frozen(i) = t {
        t = i;
    }
    match t {
        CqlType::Native(_) | CqlType::Composite(_) => render(t, b, Form::Str, out),
        _ => render(t, b, Form::Cql, out),
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
    let sod = secs.rem_euclid(86_400);
    let mut s = String::with_capacity(24);
    java::local_date_into(&mut s, secs.div_euclid(86_400));
    let _ = write!(
        s,
        " {:02}:{:02}:{:02}z",
        sod / 3600,
        sod / 60 % 60,
        sod % 60
    );
    s
}

impl<'a, 'w> ScyllaWriter<'a, 'w> {
    /// A writer for one sstable's partitions (the sstable was begun on `json`).
    pub fn new(json: &'a mut JsonOut<'w>, ndjson: bool, tombstones_only: bool) -> Self {
        ScyllaWriter {
            json,
            ndjson,
            tombstones_only,
            buf: Vec::with_capacity(FLUSH_AT + 4096),
            s: String::new(),
            streaming: false,
            elements: None,
            open: false,
            content: false,
            written: false,
        }
    }

    fn maybe_flush(&mut self) -> io::Result<()> {
        self.content = true;
        if !self.ndjson && self.buf.len() >= FLUSH_AT {
            if !self.streaming {
                // Writes the array separator; the item follows as raw bytes.
                self.json.item_raw(b"")?;
                self.streaming = true;
            }
            self.json.raw().write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    fn str(&mut self, s: &str) {
        self.buf.push(b'"');
        let _ = write_escaped(&mut self.buf, s);
        self.buf.push(b'"');
    }

    fn tombstone(&mut self, d: Option<&DeletionTime>) {
        match d {
            None => self.buf.extend_from_slice(b"{}"),
            Some(d) => {
                let _ = write!(
                    self.buf,
                    "{{\"timestamp\":{},\"deletion_time\":\"{}\"}}",
                    d.marked_for_delete_at,
                    gc_time(d.local_deletion_time)
                );
            }
        }
    }

    fn clustering_key(&mut self, t: &Table<'_>, c: &ClusteringPrefix<'_>) {
        let mut raw = String::new();
        self.s.clear();
        for (i, v) in c.values.iter().enumerate() {
            let Some(v) = v else { continue };
            let _ = write!(raw, "{:04x}", v.len().min(0xffff));
            raw.push_str(&crate::output::hex(v));
            if i > 0 {
                self.s.push(':');
            }
            match t.header.clustering_types.get(i) {
                Some(ty) => scylla_value(ty, v, &mut self.s),
                None => self.s.push_str(&crate::output::hex(v)),
            }
        }
        let value = std::mem::take(&mut self.s);
        let _ = write!(self.buf, "{{\"raw\":\"{raw}\",\"value\":");
        self.str(&value);
        self.buf.push(b'}');
        self.s = value;
    }

    fn element_sep(&mut self) {
        match &mut self.elements {
            None => {
                self.buf.extend_from_slice(b",\"clustering_elements\":[");
                self.elements = Some(1);
            }
            Some(n) => {
                self.buf.push(b',');
                *n += 1;
            }
        }
    }

    fn cell(&mut self, t: &Table<'_>, ty: &CqlType, counter: bool, c: &Cell<'_>) {
        let dead = c.is_deleted();
        let kind = if counter {
            "counter-shards"
        } else if c.path.is_none() && is_frozen_collection(ty) {
            "frozen-collection"
        } else {
            "regular"
        };
        let _ = write!(
            self.buf,
            "{{\"is_live\":{},\"type\":\"{kind}\",\"timestamp\":{}",
            !dead, c.timestamp
        );
        if dead {
            let _ = write!(
                self.buf,
                ",\"deletion_time\":\"{}\"",
                gc_time(c.local_deletion_time.unwrap_or(0))
            );
        } else {
            if c.is_expiring() {
                let _ = write!(
                    self.buf,
                    ",\"ttl\":\"{}s\",\"expiry\":\"{}\"",
                    c.ttl.unwrap_or(0),
                    gc_time(c.local_deletion_time.unwrap_or(0))
                );
            }
            self.buf.extend_from_slice(b",\"value\":");
            if counter {
                counter_shards(&mut self.buf, c.value);
            } else {
                self.s.clear();
                let vt = cell_value_type(ty, c.path);
                scylla_value(&vt, c.value, &mut self.s);
                let v = std::mem::take(&mut self.s);
                self.str(&v);
                self.s = v;
            }
        }
        let _ = t;
        self.buf.push(b'}');
    }

    fn columns(&mut self, t: &Table<'_>, row: &Row<'_>) {
        self.buf.push(b'{');
        for (i, cd) in row.cells.iter().enumerate() {
            if i > 0 {
                self.buf.push(b',');
            }
            let col = cd.column();
            self.str(col.name());
            self.buf.push(b':');
            match cd {
                ColumnData::Simple { column, cell } => {
                    self.cell(t, column.ty(), column.counter, cell)
                }
                ColumnData::Complex {
                    column,
                    complex_deletion,
                    cells,
                } => {
                    self.buf.push(b'{');
                    if let Some(d) = complex_deletion {
                        self.buf.extend_from_slice(b"\"tombstone\":");
                        self.tombstone(Some(d));
                        self.buf.push(b',');
                    }
                    self.buf.extend_from_slice(b"\"cells\":[");
                    let ty = column.ty().unreversed();
                    for (j, c) in cells.iter().enumerate() {
                        if j > 0 {
                            self.buf.push(b',');
                        }
                        self.s.clear();
                        let path = c.path.unwrap_or(&[]);
                        match ty {
                            CqlType::Udt { fields, .. } => {
                                match udt_field_index(path).and_then(|i| fields.get(i)) {
                                    Some((n, _)) => self.s.push_str(n),
                                    None => self.s.push_str(&crate::output::hex(path)),
                                }
                            }
                            _ => match ty.path_type() {
                                Some(pt) => scylla_value(&pt, path, &mut self.s),
                                None => self.s.push_str(&crate::output::hex(path)),
                            },
                        }
                        let k = std::mem::take(&mut self.s);
                        self.buf.extend_from_slice(b"{\"key\":");
                        self.str(&k);
                        self.s = k;
                        self.buf.extend_from_slice(b",\"value\":");
                        self.cell(t, column.ty(), column.counter, c);
                        self.buf.push(b'}');
                    }
                    self.buf.extend_from_slice(b"]}");
                }
            }
        }
        self.buf.push(b'}');
    }

    fn write_row(&mut self, t: &Table<'_>, row: &Row<'_>) -> io::Result<()> {
        self.element_sep();
        self.buf
            .extend_from_slice(b"{\"type\":\"clustering-row\",\"key\":");
        self.clustering_key(t, &row.clustering);
        if let Some(d) = &row.deletion {
            self.buf.extend_from_slice(b",\"tombstone\":");
            self.tombstone(Some(&d.time));
        }
        if let Some(l) = &row.liveness {
            let _ = write!(self.buf, ",\"marker\":{{\"timestamp\":{}", l.timestamp);
            if let (Some(ttl), Some(ldt)) = (l.ttl, l.local_expiration_time) {
                let _ = write!(
                    self.buf,
                    ",\"ttl\":\"{ttl}s\",\"expiry\":\"{}\"",
                    gc_time(ldt)
                );
            }
            self.buf.push(b'}');
        }
        self.buf.extend_from_slice(b",\"columns\":");
        self.columns(t, row);
        self.buf.push(b'}');
        self.maybe_flush()
    }

    fn change(
        &mut self,
        t: &Table<'_>,
        c: &ClusteringPrefix<'_>,
        weight: i8,
        d: Option<&DeletionTime>,
    ) {
        self.element_sep();
        self.buf
            .extend_from_slice(b"{\"type\":\"range-tombstone-change\"");
        if !c.values.is_empty() {
            self.buf.extend_from_slice(b",\"key\":");
            self.clustering_key(t, c);
        }
        let _ = write!(self.buf, ",\"weight\":{weight},\"tombstone\":");
        self.tombstone(d);
        self.buf.push(b'}');
    }
}

/// Counter context shards: `[{"id","value","clock"}]`.
fn counter_shards(buf: &mut Vec<u8>, b: &[u8]) {
    let shards = b
        .get(..2)
        .map(|h| i16::from_be_bytes([h[0], h[1]]).unsigned_abs() as usize)
        .and_then(|h| b.get(2 + 2 * h..))
        .filter(|s| s.len() % 32 == 0);
    let Some(shards) = shards else {
        let _ = write!(buf, "\"0x{}\"", crate::output::hex(b));
        return;
    };
    buf.push(b'[');
    for (i, s) in shards.chunks_exact(32).enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        let id = Uuid(s[..16].try_into().unwrap_or([0; 16]));
        let clock = i64::from_be_bytes(s[16..24].try_into().unwrap_or([0; 8]));
        let count = i64::from_be_bytes(s[24..32].try_into().unwrap_or([0; 8]));
        let _ = write!(
            buf,
            "{{\"id\":\"{id}\",\"value\":{count},\"clock\":{clock}}}"
        );
    }
    buf.push(b']');
}

impl Sink for ScyllaWriter<'_, '_> {
    fn partition_start(
        &mut self,
        t: &Table<'_>,
        key: &[u8],
        deletion: &DeletionTime,
        _header_end: u64,
    ) -> io::Result<()> {
        self.buf.clear();
        self.streaming = false;
        self.elements = None;
        self.open = true;
        self.content = !deletion.is_live();
        self.buf.extend_from_slice(b"{\"key\":");
        self.key_object(t, key);
        if !deletion.is_live() {
            self.buf.extend_from_slice(b",\"tombstone\":");
            self.tombstone(Some(deletion));
        }
        Ok(())
    }

    fn static_row(&mut self, t: &Table<'_>, row: &Row<'_>, _position: u64) -> io::Result<()> {
        let filtered;
        let row = if self.tombstones_only {
            match tombstones_of(row) {
                Some(r) => {
                    filtered = r;
                    &filtered
                }
                None => return Ok(()),
            }
        } else {
            row
        };
        if row_is_empty(row) {
            return Ok(());
        }
        self.buf.extend_from_slice(b",\"static_row\":");
        self.columns(t, row);
        self.maybe_flush()
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
        self.maybe_flush()
    }

    fn partition_end(&mut self, _t: &Table<'_>) -> io::Result<()> {
        if !self.open {
            return Ok(());
        }
        self.open = false;
        self.written = self.content || !self.tombstones_only;
        if !self.written {
            self.buf.clear();
            return Ok(());
        }
        if self.elements.is_some() {
            self.buf.push(b']');
        }
        self.buf.push(b'}');
        if self.streaming {
            self.json.raw().write_all(&self.buf)?;
        } else {
            self.json.item_raw(&self.buf)?;
        }
        self.buf.clear();
        Ok(())
    }

    fn last_partition_written(&self) -> bool {
        self.written
    }

    fn key_only(&mut self, t: &Table<'_>, key: &[u8]) -> io::Result<()> {
        self.buf.clear();
        self.key_object(t, key);
        let b = std::mem::take(&mut self.buf);
        let r = self.json.item_raw(&b);
        self.buf = b;
        r
    }
}

impl ScyllaWriter<'_, '_> {
    /// `{"token","raw","value"}` of a partition key, into the buffer.
    fn key_object(&mut self, t: &Table<'_>, key: &[u8]) {
        let token = t.partitioner.token(key);
        let _ = write!(
            self.buf,
            "{{\"token\":\"{token}\",\"raw\":\"{}\",\"value\":",
            crate::output::hex(key)
        );
        self.s.clear();
        scylla_value(&t.header.partition_key_type, key, &mut self.s);
        let v = std::mem::take(&mut self.s);
        self.str(&v);
        self.s = v;
        self.buf.push(b'}');
    }
}
