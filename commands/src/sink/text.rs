//! `--output text`: one line per partition deletion, row and range tombstone
//! marker, in the form of `sstabledump -d` (Cassandra's `Row.toString`):
//!
//! ```text
//! [23]@37 Row[info=[ts=-9223372036854775808] ]: STATIC | [s=static 23 ts=1700000002257455]
//! [23]@37 Row[info=[ts=1700000001698705] ]: 0 | [v1=mike ts=1700000001698705], [v2=549 ts=1700000001698705]
//! [2]@10140 deletedAt=1700000002290353, localDeletion=1795360375
//! [13]@5111 Marker INCL_START_BOUND(0)@1700000002357846/1795360375
//! ```
//!
//! `[key]` is the key's `getString` form, `@n` the uncompressed Data.db
//! position as in the sstabledump JSON. Clusterings are CQL literals, cell
//! values `getString` (frozen collections as hex, counters as their total);
//! timestamps raw. Unlike Cassandra 5.0.9, cells of non-frozen UDTs print
//! their field name and value (Cassandra fails on them). With `--keys-only`,
//! one key per line.

use std::fmt::Write as _;
use std::io::{self, Write};

use crate::render::{render, Form};
use sstkit_format::clustering::ClusteringPrefix;
use sstkit_format::data::{
    Cell, ColumnData, LivenessInfo, MarkerDeletion, RangeTombstoneMarker, Row,
};
use sstkit_format::deletion::DeletionTime;
use sstkit_format::types::CqlType;
use sstkit_format::value::CounterView;

use super::sstabledump::{cell_value_type, udt_field_index};
use super::{static_row_shown, tombstones_of, Sink, Table};

/// Writer of the text form.
pub struct TextWriter<W: Write> {
    w: W,
    tombstones_only: bool,
    key: String,
    line: String,
    /// Something of the current partition was printed.
    wrote: bool,
}

impl<W: Write> TextWriter<W> {
    /// A writer.
    pub fn new(w: W, tombstones_only: bool) -> Self {
        TextWriter {
            w,
            tombstones_only,
            key: String::new(),
            line: String::with_capacity(256),
            wrote: false,
        }
    }

    /// The writer underneath (nothing is buffered here).
    pub fn writer(&mut self) -> &mut W {
        &mut self.w
    }

    fn emit(&mut self, pos: u64) -> io::Result<()> {
        self.wrote = true;
        writeln!(self.w, "[{}]@{pos} {}", self.key, self.line)
    }

    fn row_line(&mut self, t: &Table<'_>, row: &Row<'_>) {
        let s = &mut self.line;
        s.clear();
        s.push_str("Row[info=");
        liveness(s, row.liveness.as_ref());
        if let Some(d) = &row.deletion {
            s.push_str(" del=");
            deletion(s, &d.time);
        }
        s.push_str(" ]: ");
        if row.is_static() {
            s.push_str("STATIC");
        } else {
            clustering(s, t, &row.clustering, Form::Cql);
        }
        s.push_str(" | ");
        for (i, cd) in row.cells.iter().enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            match cd {
                ColumnData::Simple { column, cell } => {
                    cell_str(s, column.name(), column.ty(), column.counter, cell)
                }
                ColumnData::Complex {
                    column,
                    complex_deletion,
                    cells,
                } => {
                    if let Some(d) = complex_deletion {
                        let _ = write!(s, "del({})=", column.name());
                        deletion(s, d);
                    }
                    for c in cells {
                        s.push_str(", ");
                        cell_str(s, column.name(), column.ty(), column.counter, c);
                    }
                }
            }
        }
    }
}

fn liveness(s: &mut String, l: Option<&LivenessInfo>) {
    match l {
        None => s.push_str("[ts=-9223372036854775808]"),
        Some(l) => match (l.ttl, l.local_expiration_time) {
            (Some(ttl), Some(let_)) => {
                let _ = write!(s, "[ts={} ttl={ttl}, let={let_}]", l.timestamp);
            }
            _ => {
                let _ = write!(s, "[ts={}]", l.timestamp);
            }
        },
    }
}

fn deletion(s: &mut String, d: &DeletionTime) {
    let _ = write!(
        s,
        "deletedAt={}, localDeletion={}",
        d.marked_for_delete_at, d.local_deletion_time
    );
}

fn clustering(s: &mut String, t: &Table<'_>, c: &ClusteringPrefix<'_>, form: Form) {
    for (i, v) in c.values.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        match (v, t.header.clustering_types.get(i)) {
            (None, _) => s.push_str("null"),
            (Some(v), Some(ty)) => render(ty, v, form, s),
            (Some(v), None) => s.push_str(&crate::output::hex(v)),
        }
    }
}

fn cell_str(s: &mut String, name: &str, ty: &CqlType, counter: bool, c: &Cell<'_>) {
    s.push('[');
    s.push_str(name);
    if let Some(path) = c.path {
        s.push('[');
        match ty.unreversed() {
            CqlType::Udt { fields, .. } => {
                match udt_field_index(path).and_then(|i| fields.get(i)) {
                    Some((n, _)) => s.push_str(n),
                    None => s.push_str(&crate::output::hex(path)),
                }
            }
            u => match u.path_type() {
                Some(pt) => render(&pt, path, Form::Str, s),
                None => s.push_str(&crate::output::hex(path)),
            },
        }
        s.push(']');
    }
    s.push('=');
    if c.is_deleted() {
        s.push_str("<tombstone>");
    } else if counter {
        match CounterView::of(c.value).map(CounterView::total) {
            Some(v) => {
                let _ = write!(s, "{v}");
            }
            None => s.push_str(&crate::output::hex(c.value)),
        }
    } else {
        render(&cell_value_type(ty, c.path), c.value, Form::Str, s);
    }
    let _ = write!(s, " ts={}", c.timestamp);
    if c.is_expiring() {
        let _ = write!(
            s,
            " ttl={} ldt={}",
            c.ttl.unwrap_or(0),
            c.local_deletion_time.unwrap_or(0)
        );
    } else if c.is_deleted() {
        let _ = write!(s, " ldt={}", c.local_deletion_time.unwrap_or(0));
    }
    s.push(']');
}

impl<W: Write> Sink for TextWriter<W> {
    fn partition_start(
        &mut self,
        t: &Table<'_>,
        key: &[u8],
        deletion_time: &DeletionTime,
        header_end: u64,
    ) -> io::Result<()> {
        self.key.clear();
        self.wrote = false;
        render(&t.header.partition_key_type, key, Form::Str, &mut self.key);
        if !deletion_time.is_live() {
            self.line.clear();
            deletion(&mut self.line, deletion_time);
            self.emit(header_end)?;
        }
        Ok(())
    }

    fn static_row(&mut self, t: &Table<'_>, row: &Row<'_>, position: u64) -> io::Result<()> {
        let mut kept = None;
        let Some(row) = static_row_shown(row, self.tombstones_only, &mut kept) else {
            return Ok(());
        };
        self.row_line(t, row);
        self.emit(position)
    }

    fn row(&mut self, t: &Table<'_>, row: &Row<'_>) -> io::Result<()> {
        if self.tombstones_only {
            return match tombstones_of(row) {
                Some(r) => {
                    self.row_line(t, &r);
                    self.emit(r.position.0)
                }
                None => Ok(()),
            };
        }
        self.row_line(t, row);
        self.emit(row.position.0)
    }

    fn marker(&mut self, t: &Table<'_>, m: &RangeTombstoneMarker<'_>) -> io::Result<()> {
        let s = &mut self.line;
        s.clear();
        let _ = write!(s, "Marker {}(", m.bound.kind.name());
        // Bounds print their values with getString, rows as CQL.
        clustering(s, t, &m.bound, Form::Str);
        s.push_str(")@");
        match m.deletion {
            MarkerDeletion::Bound(d) => {
                let _ = write!(s, "{}/{}", d.marked_for_delete_at, d.local_deletion_time);
            }
            MarkerDeletion::Boundary { end, start } => {
                let _ = write!(
                    s,
                    "{}/{}-{}/{}",
                    end.marked_for_delete_at,
                    end.local_deletion_time,
                    start.marked_for_delete_at,
                    start.local_deletion_time
                );
            }
        }
        self.emit(m.position.0)
    }

    fn last_partition_written(&self) -> bool {
        self.wrote || !self.tombstones_only
    }

    fn key_only(&mut self, t: &Table<'_>, key: &[u8]) -> io::Result<()> {
        self.key.clear();
        render(&t.header.partition_key_type, key, Form::Str, &mut self.key);
        writeln!(self.w, "{}", self.key)
    }
}
