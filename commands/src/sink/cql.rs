//! `--output cql`: the CQL rows a node returns for `SELECT JSON *`, one JSON
//! object per line, with Cassandra 5.0's text.
//!
//! ```text
//! {"pk": 5, "ck": 1, "st": "static 5", "m": {"2": "foxtrot", "100": "hundred"}, "s": ["kilo"], "v": "v 5/1"}
//! ```
//!
//! * Only what is live at `--now` ([`sstkit_format::data::live`]): a row is
//!   printed when its row marker or one of its cells is live once the
//!   partition deletion, the range tombstone around it, its own deletion and
//!   TTL expiry are applied; dead, expired and deleted cells print `null`,
//!   collections hold their live elements (after the collection's own
//!   deletion), an empty one is `null`.
//! * Static columns are repeated in every row of their partition; a
//!   partition with live static data and no live row gives one row with
//!   `null` clustering and regular columns (not when clustering bounds were
//!   given: Cassandra returns static content alone only to queries that do
//!   not restrict the clustering columns).
//! * Column order: partition key and clustering columns in key order, then
//!   static, then regular columns, each group sorted by name (Cassandra's
//!   select order for `*`). Names that are not all lower case are quoted
//!   (`"\"Name\""`), as `SELECT JSON` writes them.
//! * Values: `toJSONString` of each type (what `SELECT JSON` prints):
//!   timestamps `"2023-11-14 22:13:20.000Z"`, blobs `"0x…"`, decimals and
//!   varints exact, floats `1.0E10`, `NaN`/`Infinity` as `null`, map keys as
//!   strings, UDTs with every field, empty values as their type writes them
//!   (`""`, `"0x"`); counters are their total.
//!
//! Column names come from the table schema (`--schema`, else `schema.cql`
//! next to the sstable); without one, key columns are named `pk0…`/`ck0…`
//! and the columns are those of the serialization header.
//!
//! The renderer consumes the same fragment stream as the other outputs (one
//! sstable's, or a merged one), so what it prints is what that stream holds.

use std::io::{self, Write};

use sstkit_format::clustering::ClusteringPrefix;
use sstkit_format::cur::Cur;
use sstkit_format::data::live::{live_row, stronger, LiveColumn};
use sstkit_format::data::{Column, RangeTombstoneMarker, Row};
use sstkit_format::deletion::DeletionTime;
use sstkit_format::schema::TableSchema;
use sstkit_format::statistics::{ColumnDef, SerializationHeader};
use sstkit_format::types::{CqlType, Native};
use sstkit_format::value::decode_counter;
use sstkit_format::value::view::CompositeParts;
use sstkit_format::Component;

use super::sstabledump::udt_field_index;
use super::{Sink, Table};
use crate::render::{render, Form};

/// Writer of CQL rows (one JSON object per line).
pub struct CqlWriter<W: Write> {
    w: W,
    now: i64,
    /// Print a partition's static content alone when it has no live row.
    static_only_rows: bool,
    layout: Layout,
    /// `"pk": value, ...` of the current partition.
    key_text: String,
    partition_deletion: DeletionTime,
    /// The range tombstone open at the current position of the stream.
    open_range: DeletionTime,
    /// Rendered live static values of the current partition, by static slot.
    statics: Vec<Option<String>>,
    /// Rendered live regular values of the current row, by regular slot.
    regulars: Vec<Option<String>>,
    rows: u64,
    line: String,
    scratch: Vec<u8>,
}

/// Output order and JSON keys of the columns, built once per table.
struct Layout {
    /// `"name": ` of the partition key columns, with their types.
    pk: Vec<(String, CqlType)>,
    /// `"name": ` of the clustering columns.
    ck: Vec<String>,
    /// `"name": ` of the static columns, in output order.
    statics: Vec<String>,
    /// `"name": ` of the regular columns, in output order.
    regulars: Vec<String>,
    /// Slot in `statics` of each static column, by its index in data order.
    static_slot: Vec<Option<usize>>,
    /// Slot in `regulars` of each regular column, by its index in data order.
    regular_slot: Vec<Option<usize>>,
}

/// `"name": ` as `SELECT JSON` writes a column name: quoted once more when
/// it is not all lower case (`ColumnIdentifier.toCQLString`).
fn json_key(name: &str) -> String {
    let shown = if name.to_lowercase() == name {
        name.to_string()
    } else {
        format!("\"{name}\"")
    };
    let mut s = serde_json::Value::String(shown).to_string();
    s.push_str(": ");
    s
}

impl Layout {
    fn new(h: &SerializationHeader, schema: Option<&TableSchema>) -> Layout {
        let generated;
        let from_header = || TableSchema::from_header(h);
        let s = match schema {
            // A schema whose key does not fit the sstable's is not this table's.
            Some(s)
                if s.clustering.len() == h.clustering_types.len()
                    && s.partition_key.len() == key_types(&h.partition_key_type).len() =>
            {
                s
            }
            _ => {
                generated = from_header();
                &generated
            }
        };
        let pk = s
            .partition_key
            .iter()
            .zip(key_types(&h.partition_key_type))
            .map(|(c, t)| (json_key(&c.name), t))
            .collect();
        let ck = s
            .clustering
            .iter()
            .map(|(c, _)| json_key(&c.name))
            .collect();
        // Rows name their columns by index in data order (simple, then complex).
        let (statics, static_slot) = slots(
            s.static_columns.iter().map(|c| c.name.as_str()),
            &SerializationHeader::data_order(&h.static_columns),
        );
        let (regulars, regular_slot) = slots(
            s.regular_columns.iter().map(|c| c.name.as_str()),
            &SerializationHeader::data_order(&h.regular_columns),
        );
        Layout {
            pk,
            ck,
            statics,
            regulars,
            static_slot,
            regular_slot,
        }
    }
}

/// The types of a partition key's components.
pub(crate) fn key_types(t: &CqlType) -> Vec<CqlType> {
    match t {
        CqlType::Composite(ts) => ts.clone(),
        t => vec![t.clone()],
    }
}

/// The columns `names` sorted by name (their output order), and for each
/// header column (in data order) the slot it fills (none for a column the
/// schema lacks).
fn slots<'n>(
    names: impl Iterator<Item = &'n str>,
    header: &[ColumnDef],
) -> (Vec<String>, Vec<Option<usize>>) {
    let mut names: Vec<&str> = names.collect();
    names.sort_unstable_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    names.dedup();
    let slot = header
        .iter()
        .map(|c| names.iter().position(|n| *n == c.name))
        .collect();
    (names.into_iter().map(json_key).collect(), slot)
}

/// The components of a partition key (`CompositeType` framing: 2-byte
/// length, value, end-of-component byte each); `None` when the bytes do not
/// frame.
pub(crate) fn key_components<'k>(t: &CqlType, key: &'k [u8]) -> Option<Vec<&'k [u8]>> {
    match t {
        CqlType::Composite(ts) => CompositeParts::exactly(key, ts.len()),
        _ => Some(vec![key]),
    }
}

/// Append `toJSONString` of a non-null column value, as `SELECT JSON` does
/// (`Selection.rowToJson` in 5.0: zero-length values included, e.g. `"0x"`
/// for an empty blob).
fn push_value(out: &mut String, ty: &CqlType, b: &[u8]) {
    render(ty, b, Form::Json, out);
}

/// Append a native-protocol length and value (`-1` for null).
fn push_element(buf: &mut Vec<u8>, v: Option<&[u8]>) {
    match v {
        Some(v) => {
            buf.extend_from_slice(&(v.len() as i32).to_be_bytes());
            buf.extend_from_slice(v);
        }
        None => buf.extend_from_slice(&(-1i32).to_be_bytes()),
    }
}

/// Append `toJSONString` of the live data of one column (see [`live_value`]).
fn push_column(out: &mut String, scratch: &mut Vec<u8>, col: &Column, data: &LiveColumn<'_, '_>) {
    let ty = col.def.ty.unreversed();
    if let (true, LiveColumn::Simple { cell, .. }) = (col.counter, data) {
        // The node returns a counter's total (`CounterContext.total`).
        let mut cur = Cur::new(cell.value, Component::Data, 0);
        if let Ok(c) = decode_counter(&mut cur) {
            out.push_str(&c.total.to_string());
            return;
        }
    }
    let b = live_value(scratch, ty, data);
    render(ty, b, Form::Json, out);
}

/// The value of the live data of one column of type `ty` (unreversed): a
/// simple cell's value, or a non-frozen collection / UDT serialized from its
/// live elements into `scratch` the way the node does for a result set
/// (`serializeForNativeProtocol`), i.e. as its frozen form.
pub(crate) fn live_value<'v>(
    scratch: &'v mut Vec<u8>,
    ty: &CqlType,
    data: &'v LiveColumn<'_, '_>,
) -> &'v [u8] {
    match data {
        LiveColumn::Simple { cell, .. } => cell.value,
        LiveColumn::Complex { cells, .. } => {
            scratch.clear();
            match ty {
                CqlType::Udt { fields, .. } => {
                    let mut at = cells.iter().peekable();
                    for i in 0..fields.len() {
                        // Elements come in path (field index) order.
                        while at
                            .peek()
                            .is_some_and(|c| c.path.and_then(udt_field_index).is_none_or(|f| f < i))
                        {
                            at.next();
                        }
                        let v = at
                            .next_if(|c| c.path.and_then(udt_field_index) == Some(i))
                            .map(|c| c.value);
                        push_element(scratch, v);
                    }
                }
                _ => {
                    scratch.extend_from_slice(&(cells.len() as i32).to_be_bytes());
                    for c in cells {
                        match ty {
                            CqlType::Set(_) => push_element(scratch, c.path),
                            CqlType::Map(..) => {
                                push_element(scratch, c.path);
                                push_element(scratch, Some(c.value));
                            }
                            _ => push_element(scratch, Some(c.value)),
                        }
                    }
                }
            }
            scratch
        }
    }
}

impl<W: Write> CqlWriter<W> {
    /// A writer of the rows of table `t` (liveness judged at its
    /// `now_secs`), naming columns after `schema` (the table's, when known).
    /// `static_only_rows`: print a partition's live static content alone when
    /// it has no live row (false for reads bounded in the clustering).
    pub fn new(w: W, t: &Table<'_>, schema: Option<&TableSchema>, static_only_rows: bool) -> Self {
        CqlWriter {
            w,
            now: t.now_secs,
            static_only_rows,
            layout: Layout::new(t.header, schema),
            key_text: String::new(),
            partition_deletion: DeletionTime::LIVE,
            open_range: DeletionTime::LIVE,
            statics: Vec::new(),
            regulars: Vec::new(),
            rows: 0,
            line: String::with_capacity(256),
            scratch: Vec::new(),
        }
    }

    /// Write buffered output.
    pub fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }

    /// The writer underneath (nothing is buffered here).
    pub fn writer(&mut self) -> &mut W {
        &mut self.w
    }

    /// Render the live values of `row` into the static or regular slots;
    /// false when nothing of the row is live.
    fn live_values(&mut self, row: &Row<'_>, covering: DeletionTime, is_static: bool) -> bool {
        let Some(live) = live_row(row, covering, self.now) else {
            return false;
        };
        let layout = &self.layout;
        let (slot_of, slots) = if is_static {
            (&layout.static_slot, &mut self.statics)
        } else {
            (&layout.regular_slot, &mut self.regulars)
        };
        for data in &live.columns {
            let col = data.column();
            let Some(&Some(slot)) = slot_of.get(col.index) else {
                continue;
            };
            let mut v = String::new();
            push_column(&mut v, &mut self.scratch, col, data);
            slots[slot] = Some(v);
        }
        true
    }

    /// Write one row: the key, `clustering` (`None`: nulls), the statics and
    /// the regular values.
    fn write_row(
        &mut self,
        t: &Table<'_>,
        clustering: Option<&ClusteringPrefix<'_>>,
    ) -> io::Result<()> {
        let layout = &self.layout;
        let line = &mut self.line;
        line.clear();
        line.push('{');
        line.push_str(&self.key_text);
        let mut sep = !self.key_text.is_empty();
        let mut field = |line: &mut String, key: &str| {
            if sep {
                line.push_str(", ");
            }
            sep = true;
            line.push_str(key);
        };
        for (i, key) in layout.ck.iter().enumerate() {
            field(line, key);
            let v = clustering.and_then(|c| c.values.get(i).copied().flatten());
            match (v, t.header.clustering_types.get(i)) {
                (Some(b), Some(ty)) => push_value(line, ty.unreversed(), b),
                _ => line.push_str("null"),
            }
        }
        for (key, v) in layout.statics.iter().zip(&self.statics) {
            field(line, key);
            line.push_str(v.as_deref().unwrap_or("null"));
        }
        for (key, v) in layout.regulars.iter().zip(&self.regulars) {
            field(line, key);
            line.push_str(v.as_deref().unwrap_or("null"));
        }
        line.push_str("}\n");
        self.rows += 1;
        self.w.write_all(line.as_bytes())
    }
}

impl<W: Write> Sink for CqlWriter<W> {
    fn partition_start(
        &mut self,
        t: &Table<'_>,
        key: &[u8],
        deletion: &DeletionTime,
        _header_end: u64,
    ) -> io::Result<()> {
        let layout = &self.layout;
        let mut text = String::new();
        let comps = key_components(&t.header.partition_key_type, key);
        for (i, (name, ty)) in layout.pk.iter().enumerate() {
            if i > 0 {
                text.push_str(", ");
            }
            text.push_str(name);
            match &comps {
                Some(c) => push_value(&mut text, ty, c[i]),
                // A key that does not frame as its composite type: its hex.
                None => push_value(&mut text, &CqlType::Native(Native::Blob), key),
            }
        }
        let (n_static, n_regular) = (layout.statics.len(), layout.regulars.len());
        self.key_text = text;
        self.partition_deletion = *deletion;
        self.open_range = DeletionTime::LIVE;
        self.statics.clear();
        self.statics.resize(n_static, None);
        self.regulars.clear();
        self.regulars.resize(n_regular, None);
        self.rows = 0;
        Ok(())
    }

    fn static_row(&mut self, _t: &Table<'_>, row: &Row<'_>, _position: u64) -> io::Result<()> {
        // Range tombstones never cover the static row.
        let covering = self.partition_deletion;
        self.live_values(row, covering, true);
        Ok(())
    }

    fn row(&mut self, t: &Table<'_>, row: &Row<'_>) -> io::Result<()> {
        let covering = stronger(self.partition_deletion, self.open_range);
        for v in &mut self.regulars {
            *v = None;
        }
        if self.live_values(row, covering, false) {
            self.write_row(t, Some(&row.clustering))?;
        }
        Ok(())
    }

    fn marker(&mut self, _t: &Table<'_>, m: &RangeTombstoneMarker<'_>) -> io::Result<()> {
        // In stream order (reversed reads included) a range opens before it closes.
        if m.close_deletion().is_some() {
            self.open_range = DeletionTime::LIVE;
        }
        if let Some(d) = m.open_deletion() {
            self.open_range = d;
        }
        Ok(())
    }

    fn partition_end(&mut self, t: &Table<'_>) -> io::Result<()> {
        let has_clustering = !self.layout.ck.is_empty();
        if self.rows == 0
            && self.static_only_rows
            && has_clustering
            && self.statics.iter().any(Option::is_some)
        {
            for v in &mut self.regulars {
                *v = None;
            }
            self.write_row(t, None)?;
        }
        Ok(())
    }

    fn abort_partition(&mut self, _t: &Table<'_>) -> io::Result<()> {
        Ok(())
    }

    fn last_partition_written(&self) -> bool {
        self.rows > 0
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn column_names_as_select_json_writes_them() {
        assert_eq!(json_key("pk"), "\"pk\": ");
        // Not all lower case: quoted inside the JSON string.
        assert_eq!(json_key("Name"), "\"\\\"Name\\\"\": ");
    }

    #[test]
    fn composite_keys_split_into_their_components() {
        let t = CqlType::Composite(vec![
            CqlType::Native(Native::Text),
            CqlType::Native(Native::Int),
        ]);
        let key = [0, 1, b'a', 0, 0, 4, 0, 0, 0, 7, 0];
        assert_eq!(
            key_components(&t, &key).unwrap(),
            vec![&b"a"[..], &[0, 0, 0, 7][..]]
        );
        // Cut inside a component, or a component too many: not this type.
        assert!(key_components(&t, &key[..6]).is_none());
        assert!(key_components(
            &CqlType::Composite(vec![CqlType::Native(Native::Text)]),
            &key
        )
        .is_none());
        let int = CqlType::Native(Native::Int);
        assert_eq!(key_components(&int, &[1, 2]).unwrap(), vec![&[1, 2][..]]);
    }
}
