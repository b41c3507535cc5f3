//! Output: the one place that knows how JSON and NDJSON are framed.
//!
//! ## JSON (`--output json`)
//! One document, written incrementally: `{"sstables": {"<path>": <payload>, ...}}`,
//! the wrapper `scylla sstable` uses. `<path>` is the sstable's Data.db path.
//! The payload is an array when the command emits items (index entries,
//! partitions), else one object.
//!
//! ## NDJSON (`--output ndjson`)
//! One JSON object per line. Each line is the item (or the whole per-sstable
//! payload for object-shaped commands) with a leading `"sstable": "<path>"`
//! field; a line that is a whole per-sstable payload (or an error) also
//! carries `"sstable_ref"` (see below). New fields may be added; existing
//! ones keep their meaning (see CHANGELOG.md for breaking changes).
//!
//! ## Which sstable (`sstable_ref`)
//! Every record about one sstable names it with the object of
//! [`sstable_ref`]: keyspace, table, index, snapshot, backup (null when the
//! folders do not say), generation, format and version. NDJSON lines of
//! object-shaped payloads carry it as `"sstable_ref"` (item lines, such as
//! partitions or index entries, only their `"sstable"` path: the ref would
//! repeat on every line); the JSON document, whose payloads are keyed by
//! path, ends with `"sstable_refs": {"<path>": {...}}`.

pub mod histogram;
pub mod iostats;

use std::io::{self, Write};

use serde_json::{Map, Value};
use sstkit_format::descriptor::Descriptor;

use crate::cli::OutputFormat;
use crate::term;

/// Streams JSON or NDJSON for a sequence of sstables.
pub struct JsonOut<'w> {
    w: &'w mut dyn Write,
    ndjson: bool,
    text: bool,
    path: String,
    /// NDJSON: `{"sstable":"<path>",`, the start of a line of an object item.
    line_prefix: String,
    /// The current sstable's [`sstable_ref`], when its path names an sstable.
    sref: Option<Value>,
    /// JSON: the [`sstable_ref`] of each sstable so far, for `"sstable_refs"`.
    refs: Map<String, Value>,
    sstables: usize,
    items: usize,
    in_array: bool,
}

/// The framing state before [`JsonOut::open_item_object`], to take the item
/// back with [`JsonOut::cancel_item`].
#[derive(Debug, Clone, Copy)]
pub struct ItemMark {
    items: usize,
    in_array: bool,
}

impl<'w> JsonOut<'w> {
    /// A writer for `fmt` (must be Json or Ndjson).
    pub fn new(w: &'w mut dyn Write, fmt: OutputFormat) -> Self {
        JsonOut {
            w,
            ndjson: fmt == OutputFormat::Ndjson,
            text: fmt == OutputFormat::Text,
            path: String::new(),
            line_prefix: String::new(),
            sref: None,
            refs: Map::new(),
            sstables: 0,
            items: 0,
            in_array: false,
        }
    }

    /// True for text output, which has no JSON framing.
    pub fn is_text(&self) -> bool {
        self.text
    }

    /// Start the payload of one sstable.
    pub fn begin_sstable(&mut self, path: &str) -> io::Result<()> {
        let sref = Descriptor::from_path(std::path::Path::new(path))
            .ok()
            .map(|(d, _)| Value::Object(sstable_ref(&d)));
        self.begin(path, sref)
    }

    /// Start the payload of several sstables read as one (`--merge`),
    /// labelled `label`: no one sstable ref describes it, so it has none.
    pub fn begin_merged(&mut self, label: &str) -> io::Result<()> {
        self.begin(label, None)
    }

    fn begin(&mut self, path: &str, sref: Option<Value>) -> io::Result<()> {
        self.path = path.to_string();
        self.sref = sref;
        self.line_prefix = format!(
            "{{\"sstable\":{},",
            serde_json::to_string(path).map_err(io::Error::from)?
        );
        if let (Some(r), false) = (&self.sref, self.ndjson) {
            self.refs.insert(path.to_string(), r.clone());
        }
        self.items = 0;
        self.in_array = false;
        if !self.ndjson {
            if self.sstables == 0 {
                self.w.write_all(b"{\"sstables\":{")?;
            } else {
                self.w.write_all(b",")?;
            }
            serde_json::to_writer(&mut *self.w, path)?;
            self.w.write_all(b":")?;
        }
        self.sstables += 1;
        Ok(())
    }

    /// One NDJSON line: `v` after the sstable's path, and its ref when `named`.
    fn line(&mut self, v: &Value, named: bool) -> io::Result<()> {
        let mut m = Map::new();
        m.insert("sstable".into(), Value::String(self.path.clone()));
        if let (Some(r), true) = (&self.sref, named) {
            m.insert("sstable_ref".into(), r.clone());
        }
        match v {
            Value::Object(o) => {
                for (k, x) in o {
                    m.insert(k.clone(), x.clone());
                }
            }
            other => {
                m.insert("value".into(), other.clone());
            }
        }
        serde_json::to_writer(&mut *self.w, &Value::Object(m))?;
        self.w.write_all(b"\n")
    }

    /// One element of an array-shaped payload.
    pub fn item(&mut self, v: &Value) -> io::Result<()> {
        if self.ndjson {
            return self.line(v, false);
        }
        self.w
            .write_all(if self.items == 0 { b"[" } else { b"," })?;
        self.in_array = true;
        self.items += 1;
        serde_json::to_writer(&mut *self.w, v)?;
        Ok(())
    }

    /// The element of an array-shaped payload that sums up the sstable (a
    /// validation summary): in NDJSON, its line also carries `"sstable_ref"`.
    pub fn summary_item(&mut self, v: &Value) -> io::Result<()> {
        if self.ndjson {
            return self.line(v, true);
        }
        self.item(v)
    }

    /// Write raw, already-serialized JSON as one array element (hot paths that
    /// serialize without building a `Value`). For NDJSON, `raw` must be an
    /// object and the sstable path is spliced in as its first field.
    pub fn item_raw(&mut self, raw: &[u8]) -> io::Result<()> {
        if self.ndjson {
            self.w.write_all(b"{\"sstable\":")?;
            serde_json::to_writer(&mut *self.w, &self.path)?;
            let rest = raw.strip_prefix(b"{").unwrap_or(raw);
            if rest != b"}" {
                self.w.write_all(b",")?;
            }
            self.w.write_all(rest)?;
            return self.w.write_all(b"\n");
        }
        self.w
            .write_all(if self.items == 0 { b"[" } else { b"," })?;
        self.in_array = true;
        self.items += 1;
        self.w.write_all(raw)
    }

    /// Open one object element of an array-shaped payload in `out` instead
    /// of writing it: append the framing up to and including the object's
    /// `{` (NDJSON: `{"sstable":"<path>",`, so the object must have at least
    /// one field). The caller appends the object's fields, then
    /// [`JsonOut::close_item_object`], and writes `out` to [`JsonOut::raw`]
    /// (in order with whatever else is written). This lets a renderer batch
    /// many items, or stream a large one, in its own buffer.
    pub fn open_item_object(&mut self, out: &mut String) -> ItemMark {
        let mark = ItemMark {
            items: self.items,
            in_array: self.in_array,
        };
        if self.ndjson {
            out.push_str(&self.line_prefix);
        } else {
            out.push_str(if self.items == 0 { "[{" } else { ",{" });
            self.in_array = true;
            self.items += 1;
        }
        mark
    }

    /// Close an item opened with [`JsonOut::open_item_object`].
    pub fn close_item_object(&self, out: &mut String) {
        out.push_str(if self.ndjson { "}\n" } else { "}" });
    }

    /// Take back an item opened with [`JsonOut::open_item_object`] whose
    /// bytes the caller dropped.
    pub fn cancel_item(&mut self, mark: ItemMark) {
        self.items = mark.items;
        self.in_array = mark.in_array;
    }

    /// The whole payload of an object-shaped command.
    pub fn object(&mut self, v: &Value) -> io::Result<()> {
        if self.ndjson {
            return self.line(v, true);
        }
        self.items += 1;
        serde_json::to_writer(&mut *self.w, v)?;
        Ok(())
    }

    /// Continue an sstable's payload whose first items another writer
    /// framed: the next item comes after a separator.
    pub fn resume(&mut self) {
        if self.items == 0 {
            self.items = 1;
            self.in_array = true;
        }
    }

    /// True while the current sstable's payload has no item and the next
    /// one is framed as the first (JSON; NDJSON lines are all alike).
    pub fn at_start(&self) -> bool {
        !self.ndjson && self.items == 0
    }

    /// Close the payload of the current sstable. An array-shaped payload with
    /// no items is written as `[]`.
    pub fn end_sstable(&mut self, array: bool, error: Option<&str>) -> io::Result<()> {
        if self.ndjson {
            // Typed, so a consumer reading records can filter it out.
            if let Some(e) = error {
                self.line(&serde_json::json!({ "type": "error", "error": e }), true)?;
            }
            return Ok(());
        }
        if self.in_array {
            self.w.write_all(b"]")?;
        } else if self.items == 0 {
            match error {
                // Nothing was written for this sstable: say why in its place.
                Some(e) => serde_json::to_writer(&mut *self.w, &serde_json::json!({ "error": e }))?,
                None => self.w.write_all(if array { b"[]" } else { b"null" })?,
            }
        }
        Ok(())
    }

    /// Close the document.
    pub fn finish(&mut self) -> io::Result<()> {
        if !self.ndjson && !self.text {
            if self.sstables == 0 {
                self.w.write_all(b"{\"sstables\":{")?;
            }
            self.w.write_all(b"}")?;
            if !self.refs.is_empty() {
                self.w.write_all(b",\"sstable_refs\":")?;
                serde_json::to_writer(&mut *self.w, &self.refs)?;
            }
            self.w.write_all(b"}\n")?;
        }
        self.w.flush()
    }
}

/// Which sstable a record is about, the same fields in every command:
/// keyspace, table, secondary index, snapshot and backup from the data
/// directory layout (null when unknown), generation, format and version from
/// the file name.
pub fn sstable_ref(d: &Descriptor) -> Map<String, Value> {
    let loc = d.location();
    let opt = |s: Option<String>| s.map_or(Value::Null, Value::String);
    let mut m = Map::new();
    m.insert("keyspace".into(), opt(loc.keyspace));
    m.insert("table".into(), opt(loc.table));
    m.insert("index".into(), opt(loc.index));
    m.insert("snapshot".into(), opt(loc.snapshot));
    m.insert("backup".into(), opt(loc.backup));
    m.insert("generation".into(), Value::String(d.generation.to_string()));
    m.insert("format".into(), Value::String(d.format.name().into()));
    m.insert("version".into(), Value::String(d.version.to_string()));
    m
}

const HEX_DIGITS: &[u8; 16] = b"0123456789abcdef";

/// Hex of bytes, lowercase.
pub fn hex(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len() * 2);
    for x in b {
        s.push(HEX_DIGITS[(x >> 4) as usize] as char);
        s.push(HEX_DIGITS[(x & 15) as usize] as char);
    }
    s
}

/// [`hex`] onto the end of `out`.
pub fn hex_into(b: &[u8], out: &mut Vec<u8>) {
    out.reserve(b.len() * 2);
    for x in b {
        out.extend_from_slice(&[HEX_DIGITS[(x >> 4) as usize], HEX_DIGITS[(x & 15) as usize]]);
    }
}

/// A comfy-table with the project's text style, laid out for stdout: at
/// most the terminal width (cells wrap), coloured only at a terminal (see
/// [`crate::term`]).
pub fn table(header: &[&str]) -> comfy_table::Table {
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::UTF8_BORDERS_ONLY);
    term::fit_table(&mut t, term::Stream::Stdout);
    if !header.is_empty() {
        t.set_header(header.iter().copied());
    }
    t
}

/// Two-column key/value table, the names coloured as keys.
pub fn kv_table(rows: &[(String, String)]) -> comfy_table::Table {
    let mut t = table(&[]);
    for (k, v) in rows {
        t.add_row(vec![
            term::cell(k.clone(), term::Style::Key),
            comfy_table::Cell::new(v),
        ]);
    }
    // Names stay whole when they take at most half the width; values wrap.
    let names = rows
        .iter()
        .map(|(k, _)| k.chars().count())
        .max()
        .unwrap_or(0);
    if names <= term::width(term::Stream::Stdout) / 2 {
        if let Some(c) = t.column_mut(0) {
            c.set_constraint(comfy_table::ColumnConstraint::ContentWidth);
        }
    }
    t
}

/// Hex strings longer than this (64 bytes) are summarised in text tables.
const LONG_HEX: usize = 128;

/// The text form of a long binary field: its size and a hash (SHA-1,
/// abbreviated), not kilobytes of hex. `None` when `s` is not long hex.
pub fn binary_summary(s: &str) -> Option<String> {
    if s.len() <= LONG_HEX
        || !s.len().is_multiple_of(2)
        || !s.bytes().all(|b| b.is_ascii_hexdigit())
    {
        return None;
    }
    let bytes = sstkit_format::value::literal::unhex(s)?;
    let digest = sha1_smol::Sha1::from(&bytes).digest().to_string();
    Some(format!("<{} bytes, sha1 {}>", bytes.len(), &digest[..16]))
}

impl JsonOut<'_> {
    /// The underlying writer (for text output).
    pub fn raw(&mut self) -> &mut dyn Write {
        &mut *self.w
    }
}

/// Render a JSON value as a two-column text table of dotted paths and
/// values (for object-shaped payloads). Arrays of scalars are joined on one
/// line; arrays of objects get one row group per element (`path[i].field`).
pub fn json_text_table(v: &Value) -> comfy_table::Table {
    fn scalar(v: &Value) -> String {
        match v {
            Value::String(s) => binary_summary(s).unwrap_or_else(|| s.clone()),
            Value::Null => "-".to_string(),
            other => other.to_string(),
        }
    }
    fn walk(path: &str, v: &Value, rows: &mut Vec<(String, String)>) {
        match v {
            Value::Object(m) => {
                if m.is_empty() {
                    rows.push((path.to_string(), "{}".to_string()));
                }
                for (k, x) in m {
                    let p = if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}.{k}")
                    };
                    walk(&p, x, rows);
                }
            }
            Value::Array(a) if a.iter().all(|x| !x.is_object() && !x.is_array()) => {
                if let Some(b) = byte_array(a) {
                    rows.push((
                        path.to_string(),
                        binary_summary(&hex(&b)).unwrap_or_default(),
                    ));
                    return;
                }
                let items: Vec<String> = a.iter().map(scalar).collect();
                rows.push((path.to_string(), format!("[{}]", items.join(", "))));
            }
            // A histogram ({offset, value} buckets): one wrapped row, not two per bucket.
            Value::Array(a) if !a.is_empty() && a.iter().all(is_bucket) => {
                let pairs: Vec<String> = a
                    .iter()
                    .map(|b| format!("{}:{}", scalar(&b["offset"]), scalar(&b["value"])))
                    .collect();
                rows.push((format!("{path} (offset:value)"), pairs.join(", ")));
            }
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    walk(&format!("{path}[{i}]"), x, rows);
                }
            }
            other => rows.push((path.to_string(), scalar(other))),
        }
    }
    fn is_bucket(v: &Value) -> bool {
        v.as_object().is_some_and(|o| {
            o.len() == 2
                && o.get("offset").is_some_and(Value::is_number)
                && o.get("value").is_some_and(Value::is_number)
        })
    }
    // A long array of bytes (a HyperLogLog, a bitmap): the bytes, to summarise.
    fn byte_array(a: &[Value]) -> Option<Vec<u8>> {
        if a.len() * 2 <= LONG_HEX {
            return None;
        }
        a.iter()
            .map(|x| x.as_u64().and_then(|n| u8::try_from(n).ok()))
            .collect()
    }
    let mut rows = Vec::new();
    walk("", v, &mut rows);
    kv_table(&rows)
}
