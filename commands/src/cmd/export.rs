//! `sstkit export SSTABLE... -o parquet|arrow|csv --output-file FILE`: the
//! CQL row view of the data for engines that read Parquet, Arrow or CSV.
//!
//! ```text
//! sstkit export --merge -o parquet --output-file t.parquet /data/ks/t-1234/
//! sstkit export -o arrow --output-file - nb-1-big-Data.db | python -c 'import pyarrow as pa, sys; ...'
//! sstkit export -o csv --output-file t.csv --now 1700000000 nb-1-big-Data.db
//! sstkit export --merge -o parquet --partition-by token-range:8 --output-file out/ /data/ks/t-1234/
//! ```
//!
//! The rows are those `dump-data -o cql` prints ([`crate::dump::cql`]: what
//! `SELECT *` returns at `--now`), read through the same drivers (one
//! sstable's scan, or the merged stream of [`sstkit_format::engine::merged`]). Columns:
//! partition key, clustering, static, then regular columns by name (the
//! order of `SELECT *`). Types map as [`arrow_type`](crate::arrow::arrow_type) says.
//!
//! Memory: rows are collected in batches of [`BATCH_ROWS`] and handed to the
//! writer, which holds at most one row group. Each output file is written
//! under a temporary name in its directory and renamed once complete.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{Schema, SchemaRef};
use sstkit_format::clustering::ClusteringPrefix;
use sstkit_format::cur::Cur;
use sstkit_format::data::live::{live_row, stronger};
use sstkit_format::data::{ColumnData, RangeTombstoneMarker, Row};
use sstkit_format::deletion::DeletionTime;
use sstkit_format::engine::MergeInputs;
use sstkit_format::statistics::SerializationHeader;
use sstkit_format::token::Token;
use sstkit_format::types::{CqlType, Native};
use sstkit_format::value::{decode, decode_counter, Value};
use sstkit_format::Component;

use crate::arrow::{arrow_field, base, build_array, some_value, Decimals};
use crate::cli::{ExportArgs, ExportCompression, ExportFormat};
use crate::dump::cql::{key_components, key_types, live_value};
use crate::dump::select;
use crate::dump::{Sink, Table};
use crate::plan::DumpPlan;
use crate::render::{render, Form};
use crate::{CmdError, CmdResult, Outcome};

/// Rows per batch handed to a writer.
pub const BATCH_ROWS: usize = 8192;

/// One output column.
#[derive(Debug, Clone)]
struct OutCol {
    name: String,
    /// The type its values decode as (counters: bigint, their total).
    ty: CqlType,
}

/// The output columns of a table, in `SELECT *` order.
#[derive(Clone)]
struct Plan {
    cols: Vec<OutCol>,
    n_ck: usize,
    /// Names of the static columns (output order), then of the regulars.
    statics: Vec<String>,
    regulars: Vec<String>,
    /// `--with-metadata`: the static then regular slots (statics first,
    /// regulars after them) with `writetime(c)` and `ttl(c)` columns.
    meta: Vec<usize>,
}

impl Plan {
    /// The columns of the table whose (union) header is `h`, named after
    /// `schema` when it is this table's.
    fn new(
        h: &SerializationHeader,
        schema: Option<&sstkit_format::schema::TableSchema>,
        with_metadata: bool,
    ) -> Plan {
        let pk_types = key_types(&h.partition_key_type);
        let fits = schema.filter(|s| {
            s.clustering.len() == h.clustering_types.len()
                && s.partition_key.len() == pk_types.len()
        });
        let mut cols = Vec::new();
        for (i, t) in pk_types.iter().enumerate() {
            let name = fits
                .and_then(|s| s.partition_key.get(i))
                .map_or_else(|| format!("pk{i}"), |c| c.name.clone());
            cols.push(OutCol {
                name,
                ty: t.unreversed().clone(),
            });
        }
        for (i, t) in h.clustering_types.iter().enumerate() {
            let name = fits
                .and_then(|s| s.clustering.get(i))
                .map_or_else(|| format!("ck{i}"), |c| c.0.name.clone());
            cols.push(OutCol {
                name,
                ty: t.unreversed().clone(),
            });
        }
        let group = |cols: &mut Vec<OutCol>, defs: &[sstkit_format::statistics::ColumnDef]| {
            let mut v: Vec<OutCol> = defs
                .iter()
                .map(|c| OutCol {
                    name: c.name.clone(),
                    ty: if c.ty.is_counter() {
                        CqlType::Native(Native::Bigint)
                    } else {
                        c.ty.unreversed().clone()
                    },
                })
                .collect();
            v.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
            v.dedup_by(|a, b| a.name == b.name);
            let names = v.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
            cols.extend(v);
            names
        };
        let n_ck = h.clustering_types.len();
        let statics = group(&mut cols, &h.static_columns);
        let first_value = cols.len() - statics.len();
        let regulars = group(&mut cols, &h.regular_columns);
        let mut meta = Vec::new();
        if with_metadata {
            // CQL has writetime() and ttl() of simple (frozen included), non-counter columns.
            let simple: Vec<(usize, OutCol)> = cols[first_value..]
                .iter()
                .cloned()
                .enumerate()
                .filter(|(_, c)| {
                    let def = h
                        .static_columns
                        .iter()
                        .chain(&h.regular_columns)
                        .find(|d| d.name == c.name);
                    def.is_some_and(|d| !d.ty.is_multi_cell() && !d.ty.is_counter())
                })
                .collect();
            for (slot, c) in simple {
                meta.push(slot);
                cols.push(OutCol {
                    name: format!("writetime({})", c.name),
                    ty: CqlType::Native(Native::Bigint),
                });
                cols.push(OutCol {
                    name: format!("ttl({})", c.name),
                    ty: CqlType::Native(Native::Int),
                });
            }
        }
        Plan {
            cols,
            n_ck,
            statics,
            regulars,
            meta,
        }
    }

    /// The columns of the `--tombstones` stream: kind, the partition key
    /// columns, the clustering range (CQL text of each bound, and whether it
    /// is inclusive), the column of a cell or collection deletion, and the
    /// deletion time.
    fn tombstones(data: &Plan, n_pk: usize) -> Plan {
        let text = || CqlType::Native(Native::Text);
        let boolean = || CqlType::Native(Native::Boolean);
        let col = |name: &str, ty: CqlType| OutCol {
            name: name.into(),
            ty,
        };
        let mut cols = vec![col("kind", text())];
        cols.extend(data.cols[..n_pk].iter().cloned());
        cols.extend([
            col("start", text()),
            col("start_inclusive", boolean()),
            col("end", text()),
            col("end_inclusive", boolean()),
            col("column", text()),
            col("marked_for_delete_at", CqlType::Native(Native::Bigint)),
            col("local_deletion_time", CqlType::Native(Native::Timestamp)),
        ]);
        Plan {
            cols,
            n_ck: 0,
            statics: vec![],
            regulars: vec![],
            meta: vec![],
        }
    }

    fn schema(&self, d: Decimals) -> SchemaRef {
        Arc::new(Schema::new(
            self.cols
                .iter()
                .map(|c| arrow_field(&c.name, &c.ty, d))
                .collect::<Vec<_>>(),
        ))
    }
}

/// The values of one column of a batch: serialized values in one buffer.
#[derive(Default)]
struct ColBuf {
    data: Vec<u8>,
    spans: Vec<Option<(usize, usize)>>,
}

impl ColBuf {
    fn push(&mut self, v: Option<&[u8]>) {
        self.spans.push(v.map(|b| {
            self.data.extend_from_slice(b);
            (self.data.len() - b.len(), b.len())
        }));
    }
    fn get(&self, i: usize) -> Option<&[u8]> {
        self.spans[i].map(|(s, n)| &self.data[s..s + n])
    }
    fn clear(&mut self) {
        self.data.clear();
        self.spans.clear();
    }
}

/// Where batches go.
enum Writer<'a> {
    Parquet(parquet::arrow::ArrowWriter<BufWriter<File>>),
    IpcFile(arrow_ipc::writer::FileWriter<BufWriter<File>>),
    IpcStream(arrow_ipc::writer::StreamWriter<&'a mut dyn Write>),
    Csv(Box<dyn Write + 'a>),
    /// Each batch to a caller ([`stream`]).
    Batches(&'a mut dyn FnMut(RecordBatch) -> CmdResult<()>),
}

fn arrow_err(e: impl std::fmt::Display) -> CmdError {
    CmdError::Output(io::Error::other(e.to_string()))
}

/// One output (a file or stdout) and the rows not yet written to it.
struct Part<'a> {
    writer: Option<Writer<'a>>,
    cols: Vec<ColBuf>,
    rows: usize,
    /// The temporary file and its final name (none for stdout).
    tmp: Option<(PathBuf, PathBuf)>,
    /// The columns written (by position) and their schema, when not all.
    proj: Option<(Vec<usize>, SchemaRef)>,
}

/// Output settings.
struct Settings {
    format: ExportFormat,
    row_group_rows: usize,
    row_group_bytes: Option<u64>,
    compression: ExportCompression,
}

impl<'a> Part<'a> {
    /// A file output at `path`, written as `path`'s temporary sibling.
    /// A path that is not a regular file (`/dev/null`, a named pipe) is
    /// written as it is: renaming the temporary file over it would replace
    /// the device or pipe with a file.
    fn file(
        path: &Path,
        schema: &SchemaRef,
        s: &Settings,
        meta: Vec<(String, String)>,
    ) -> CmdResult<Part<'a>> {
        let special = std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir());
        if special {
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(|e| {
                    CmdError::Output(io::Error::new(e.kind(), format!("{}: {e}", path.display())))
                })?;
            let writer = Self::writer(BufWriter::with_capacity(1 << 20, f), schema, s, meta)?;
            return Ok(Part::new(writer, schema, None));
        }
        let tmp =
            sstkit_format::write::pending::file_tmp(path, std::process::id()).ok_or_else(|| {
                CmdError::Usage(format!("--output-file {}: not a file name", path.display()))
            })?;
        // A killed export (SIGKILL, power loss) could not remove its
        // temporary file: the next export of the same file does, saying so.
        let removed = sstkit_format::write::pending::remove_file_leftovers(path).map_err(|e| {
            CmdError::Output(io::Error::new(
                e.kind(),
                format!("cannot remove the leftover of an interrupted export: {e}"),
            ))
        })?;
        for p in removed {
            eprintln!(
                "sstkit: removed {}, left by an interrupted sstkit export",
                p.display()
            );
        }
        let f = sstkit_format::write::pending::create(&tmp).map_err(|e| {
            CmdError::Output(io::Error::new(e.kind(), format!("{}: {e}", tmp.display())))
        })?;
        let writer = Self::writer(BufWriter::with_capacity(1 << 20, f), schema, s, meta)?;
        Ok(Part::new(writer, schema, Some((tmp, path.to_path_buf()))))
    }

    /// The writer of `s.format` over `w`.
    fn writer(
        w: BufWriter<File>,
        schema: &SchemaRef,
        s: &Settings,
        meta: Vec<(String, String)>,
    ) -> CmdResult<Writer<'a>> {
        Ok(match s.format {
            ExportFormat::Parquet => {
                use parquet::basic::{Compression, ZstdLevel};
                use parquet::file::metadata::KeyValue;
                use parquet::file::properties::{EnabledStatistics, WriterProperties};
                let c = match s.compression {
                    ExportCompression::Zstd => Compression::ZSTD(ZstdLevel::default()),
                    ExportCompression::Snappy => Compression::SNAPPY,
                    ExportCompression::Lz4 => Compression::LZ4_RAW,
                    ExportCompression::None => Compression::UNCOMPRESSED,
                };
                let props = WriterProperties::builder()
                    .set_compression(c)
                    .set_statistics_enabled(EnabledStatistics::Page)
                    .set_max_row_group_row_count(Some(s.row_group_rows.max(1)))
                    .set_max_row_group_bytes(
                        s.row_group_bytes
                            .map(|b| usize::try_from(b.max(1)).unwrap_or(usize::MAX)),
                    )
                    .set_created_by(format!("sstkit {}", env!("CARGO_PKG_VERSION")))
                    .set_key_value_metadata(Some(
                        meta.into_iter().map(|(k, v)| KeyValue::new(k, v)).collect(),
                    ))
                    .build();
                Writer::Parquet(
                    parquet::arrow::ArrowWriter::try_new(w, schema.clone(), Some(props))
                        .map_err(arrow_err)?,
                )
            }
            ExportFormat::Arrow => Writer::IpcFile(
                arrow_ipc::writer::FileWriter::try_new(w, schema).map_err(arrow_err)?,
            ),
            ExportFormat::Csv => Writer::Csv(Box::new(w)),
        })
    }

    fn new(writer: Writer<'a>, schema: &SchemaRef, tmp: Option<(PathBuf, PathBuf)>) -> Part<'a> {
        Part {
            writer: Some(writer),
            cols: schema.fields().iter().map(|_| ColBuf::default()).collect(),
            rows: 0,
            tmp,
            proj: None,
        }
    }

    /// Write the collected rows.
    fn flush_rows(&mut self, plan: &Plan, schema: &SchemaRef, d: Decimals) -> CmdResult<()> {
        if self.rows == 0 {
            return Ok(());
        }
        match self.writer.as_mut() {
            Some(Writer::Csv(w)) => write_csv_rows(w, plan, &self.cols, self.rows)?,
            Some(w) => {
                let batch = match &self.proj {
                    Some((keep, schema)) => {
                        to_batch(plan, schema, &self.cols, Some(keep), self.rows, d)?
                    }
                    None => to_batch(plan, schema, &self.cols, None, self.rows, d)?,
                };
                match w {
                    Writer::Parquet(pw) => pw.write(&batch).map_err(arrow_err)?,
                    Writer::IpcFile(fw) => fw.write(&batch).map_err(arrow_err)?,
                    Writer::IpcStream(sw) => sw.write(&batch).map_err(arrow_err)?,
                    Writer::Batches(f) => f(batch)?,
                    Writer::Csv(_) => {}
                }
            }
            None => {}
        }
        for c in &mut self.cols {
            c.clear();
        }
        self.rows = 0;
        Ok(())
    }

    /// Close the writer and give the file its final name.
    fn finish(&mut self) -> CmdResult<()> {
        match self.writer.take() {
            Some(Writer::Parquet(w)) => {
                let mut inner = w.into_inner().map_err(arrow_err)?;
                inner.flush()?;
            }
            Some(Writer::IpcFile(mut w)) => {
                w.finish().map_err(arrow_err)?;
                w.into_inner().map_err(arrow_err)?.flush()?;
            }
            Some(Writer::IpcStream(mut w)) => {
                w.finish().map_err(arrow_err)?;
                w.get_mut().flush()?;
            }
            Some(Writer::Csv(mut w)) => w.flush()?,
            Some(Writer::Batches(_)) | None => {}
        }
        if let Some((tmp, path)) = self.tmp.take() {
            use sstkit_format::write::pending;
            pending::rename(&tmp, &path).map_err(|e| {
                pending::remove(&tmp);
                CmdError::Output(io::Error::new(e.kind(), format!("{}: {e}", path.display())))
            })?;
            pending::keep(&path);
        }
        Ok(())
    }
}

impl Drop for Part<'_> {
    /// An output not finished (an error) leaves no file behind.
    fn drop(&mut self) {
        if let Some((tmp, _)) = self.tmp.take() {
            self.writer = None;
            sstkit_format::write::pending::remove(&tmp);
        }
    }
}

/// Decode one collected value of column `c`.
fn decode_col(c: &OutCol, b: &[u8]) -> CmdResult<Value> {
    decode(&c.ty, b).map_err(|e| {
        CmdError::from(sstkit_format::Error::new(
            sstkit_format::ErrorKind::BadValue(format!("column {}: {}", c.name, e.kind)),
            "export value",
        ))
    })
}

/// The collected rows as a record batch of the columns `keep` (all when
/// `None`), whose schema is `schema`.
fn to_batch(
    plan: &Plan,
    schema: &SchemaRef,
    cols: &[ColBuf],
    keep: Option<&[usize]>,
    rows: usize,
    d: Decimals,
) -> CmdResult<RecordBatch> {
    let mut arrays = Vec::with_capacity(cols.len());
    let all: Vec<usize>;
    let keep = match keep {
        Some(k) => k,
        None => {
            all = (0..cols.len()).collect();
            &all
        }
    };
    for &i in keep {
        let (Some(c), Some(buf)) = (plan.cols.get(i), cols.get(i)) else {
            continue;
        };
        let mut vals = Vec::with_capacity(rows);
        for i in 0..rows {
            vals.push(match buf.get(i) {
                Some(b) => Some(decode_col(c, b)?),
                None => None,
            });
        }
        let refs: Vec<Option<&Value>> = vals
            .iter()
            .map(|v| v.as_ref().and_then(some_value))
            .collect();
        let a = build_array(&c.ty, &refs, d)
            .map_err(|e| CmdError::Usage(format!("export: column {}: {e}", c.name)))?;
        arrays.push(a);
    }
    RecordBatch::try_new(schema.clone(), arrays).map_err(arrow_err)
}

/// The CSV header line of `plan`'s columns (with its CRLF).
fn csv_header(plan: &Plan) -> String {
    let mut s = String::new();
    for (i, c) in plan.cols.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        csv_field(&mut s, &c.name);
    }
    s.push_str("\r\n");
    s
}

/// A clustering prefix as CQL text: its components as cqlsh prints them,
/// separated by `, ` (empty for an unbounded bound).
fn clustering_text(t: &Table<'_>, c: &ClusteringPrefix<'_>) -> String {
    let mut s = String::new();
    for (i, v) in c.values.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        match (v, t.header.clustering_types.get(i)) {
            (Some(b), Some(ty)) => render(ty.unreversed(), b, Form::Cqlsh, &mut s),
            _ => s.push_str("null"),
        }
    }
    s
}

/// One CSV field (RFC 4180: quoted when it holds a comma, quote or line break).
fn csv_field(out: &mut String, v: &str) {
    if v.contains([',', '"', '\n', '\r']) {
        out.push('"');
        out.push_str(&v.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(v);
    }
}

/// A value as `cqlsh COPY TO` writes it: the CQL literal cqlsh prints,
/// without the quotes around a top-level text, timestamp, date, time or inet.
fn cqlsh_text(ty: &CqlType, b: &[u8], out: &mut String) {
    let mut s = String::new();
    render(ty, b, Form::Cqlsh, &mut s);
    if matches!(base(ty), CqlType::Native(Native::Boolean)) {
        s = if s == "true" {
            "True".into()
        } else if s == "false" {
            "False".into()
        } else {
            s
        };
    }
    match s.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')) {
        Some(inner) if matches!(base(ty), CqlType::Native(_)) => {
            out.push_str(&inner.replace("''", "'"))
        }
        _ => out.push_str(&s),
    }
}

fn write_csv_rows(
    w: &mut Box<dyn Write + '_>,
    plan: &Plan,
    cols: &[ColBuf],
    rows: usize,
) -> CmdResult<()> {
    let mut line = String::new();
    let mut v = String::new();
    for i in 0..rows {
        line.clear();
        for (j, (c, buf)) in plan.cols.iter().zip(cols).enumerate() {
            if j > 0 {
                line.push(',');
            }
            if let Some(b) = buf.get(i) {
                v.clear();
                cqlsh_text(&c.ty, b, &mut v);
                csv_field(&mut line, &v);
            }
        }
        line.push_str("\r\n");
        w.write_all(line.as_bytes())?;
    }
    Ok(())
}

/// For one header (by address): the output slot of each static and each
/// regular column, by its index in data order.
type Slots = (usize, Vec<Option<usize>>, Vec<Option<usize>>);

/// The sink that collects live rows into the outputs.
struct ExportSink<'a> {
    plan: Plan,
    schema: SchemaRef,
    decimals: Decimals,
    parts: Vec<Part<'a>>,
    /// `--partition-by token-range:N`: N (outputs by Murmur3 token range).
    ranges: Option<u64>,
    /// The output of the current partition.
    cur: usize,
    now: i64,
    /// Values of the current partition key components.
    key: Vec<Vec<u8>>,
    partition_deletion: DeletionTime,
    open_range: DeletionTime,
    statics: Vec<Option<Vec<u8>>>,
    regulars: Vec<Option<Vec<u8>>>,
    /// Write time and remaining TTL of each static, then regular, slot.
    times: Vec<Option<(i64, Option<i32>)>>,
    rows_in_partition: u64,
    /// Per header (by address) the slot of each static / regular column in data order.
    slots: Option<Slots>,
    scratch: Vec<u8>,
    /// A failure while writing a batch (the Sink methods return io errors).
    error: Option<CmdError>,
    /// Rows written.
    rows: u64,
    /// `--tombstones`: the stream's columns, schema and output.
    tombs: Option<(Plan, SchemaRef, Part<'a>)>,
    /// The open range tombstone's start bound (CQL text, inclusive).
    open_bound: Option<(String, bool)>,
    /// Rows per batch handed to a writer.
    batch_rows: usize,
}

/// One record of the `--tombstones` stream.
struct Tomb<'t> {
    kind: &'t str,
    start: Option<(&'t str, bool)>,
    end: Option<(&'t str, bool)>,
    column: Option<&'t str>,
    deletion: DeletionTime,
}

/// The output (of `n`) holding token `t`: `n` equal slices of the Murmur3
/// ring, the first starting after `i64::MIN`.
pub fn range_of(t: i64, n: u64) -> usize {
    // Range i is (MIN + floor(i * 2^64 / n), MIN + floor((i + 1) * 2^64 / n)]:
    // the largest i with i < off * n / 2^64.
    let off = (i128::from(t) - i128::from(i64::MIN)) as u128;
    let up = (off * u128::from(n) + (1u128 << 64) - 1) >> 64;
    up.saturating_sub(1) as usize
}

/// `(START,END]` of output `i` of `n` (Murmur3 tokens).
pub fn range_bounds(i: u64, n: u64) -> (i64, i64) {
    let at = |k: u64| -> i64 {
        if k >= n {
            return i64::MAX;
        }
        let off = ((u128::from(k) << 64) / u128::from(n)) as i128;
        (i128::from(i64::MIN) + off) as i64
    };
    (at(i), at(i + 1))
}

impl ExportSink<'_> {
    /// Add a record to the `--tombstones` stream.
    fn tomb(&mut self, t: Tomb<'_>) -> io::Result<()> {
        let Some((plan, schema, part)) = &mut self.tombs else {
            return Ok(());
        };
        let mut c = part.cols.iter_mut();
        let mut put = |v: Option<&[u8]>| {
            if let Some(b) = c.next() {
                b.push(v);
            }
        };
        put(Some(t.kind.as_bytes()));
        for k in &self.key {
            put(Some(k));
        }
        for b in [t.start, t.end] {
            put(b.map(|b| b.0.as_bytes()));
            put(b.map(|b| if b.1 { &[1u8][..] } else { &[0u8][..] }));
        }
        put(t.column.map(str::as_bytes));
        put(Some(&t.deletion.marked_for_delete_at.to_be_bytes()));
        put(Some(
            &(t.deletion.local_deletion_time.saturating_mul(1000)).to_be_bytes(),
        ));
        part.rows += 1;
        if part.rows >= self.batch_rows {
            if let Err(e) = part.flush_rows(plan, schema, self.decimals) {
                let msg = e.to_string();
                self.error = Some(e);
                return Err(io::Error::other(msg));
            }
        }
        Ok(())
    }

    /// The deletions inside `row` (its own, its collections', its tombstone cells).
    fn row_tombstones(&mut self, t: &Table<'_>, row: &Row<'_>, is_static: bool) -> io::Result<()> {
        if self.tombs.is_none() {
            return Ok(());
        }
        let ck = if is_static {
            None
        } else {
            Some(clustering_text(t, &row.clustering))
        };
        let at = ck.as_deref().map(|c| (c, true));
        if let Some(d) = row.deletion {
            self.tomb(Tomb {
                kind: "row",
                start: at,
                end: at,
                column: None,
                deletion: d.time,
            })?;
        }
        for cd in &row.cells {
            let (column, complex, cells) = match cd {
                ColumnData::Simple { column, cell } => (column, None, std::slice::from_ref(cell)),
                ColumnData::Complex {
                    column,
                    complex_deletion,
                    cells,
                } => (column, *complex_deletion, &cells[..]),
            };
            let name = column.def.name.as_str();
            if let Some(d) = complex {
                self.tomb(Tomb {
                    kind: "collection",
                    start: at,
                    end: at,
                    column: Some(name),
                    deletion: d,
                })?;
            }
            for c in cells.iter().filter(|c| c.is_deleted()) {
                self.tomb(Tomb {
                    kind: "cell",
                    start: at,
                    end: at,
                    column: Some(name),
                    deletion: DeletionTime {
                        marked_for_delete_at: c.timestamp,
                        local_deletion_time: c.local_deletion_time.unwrap_or(i64::MAX),
                    },
                })?;
            }
        }
        Ok(())
    }

    /// Forget the regular values (and their times) of the last row.
    fn clear_regulars(&mut self) {
        for v in &mut self.regulars {
            *v = None;
        }
        let ns = self.plan.statics.len();
        for t in self.times.iter_mut().skip(ns) {
            *t = None;
        }
    }

    fn slots_for(&mut self, h: &SerializationHeader) {
        let id = h as *const SerializationHeader as usize;
        if self.slots.as_ref().is_some_and(|s| s.0 == id) {
            return;
        }
        let slot = |names: &[String], defs: &[sstkit_format::statistics::ColumnDef]| {
            SerializationHeader::data_order(defs)
                .iter()
                .map(|c| names.iter().position(|n| *n == c.name))
                .collect::<Vec<_>>()
        };
        let s = slot(&self.plan.statics, &h.static_columns);
        let r = slot(&self.plan.regulars, &h.regular_columns);
        self.slots = Some((id, s, r));
    }

    /// Collect the live values of `row`; false when nothing of it is live.
    fn live_values(&mut self, row: &Row<'_>, covering: DeletionTime, is_static: bool) -> bool {
        let Some(live) = live_row(row, covering, self.now) else {
            return false;
        };
        let Some((_, sslot, rslot)) = &self.slots else {
            return false;
        };
        let (slot_of, out, base) = if is_static {
            (sslot, &mut self.statics, 0)
        } else {
            (rslot, &mut self.regulars, self.plan.statics.len())
        };
        for data in &live.columns {
            let col = data.column();
            let Some(&Some(slot)) = slot_of.get(col.index) else {
                continue;
            };
            if col.counter {
                if let LiveColumn::Simple { cell, .. } = data {
                    let mut cur = Cur::new(cell.value, Component::Data, 0);
                    if let Ok(c) = decode_counter(&mut cur) {
                        out[slot] = Some(c.total.to_be_bytes().to_vec());
                    }
                }
                continue;
            }
            let b = live_value(&mut self.scratch, col.def.ty.unreversed(), data);
            out[slot] = Some(b.to_vec());
            if let LiveColumn::Simple { cell, .. } = data {
                // ttl() is what remains at `now` (`localDeletionTime - nowInSec`).
                let ttl = cell
                    .is_expiring()
                    .then(|| cell.local_deletion_time.map(|l| (l - self.now) as i32))
                    .flatten();
                if let Some(t) = self.times.get_mut(base + slot) {
                    *t = Some((cell.timestamp, ttl));
                }
            }
        }
        true
    }

    fn emit(&mut self, t: &Table<'_>, clustering: Option<&ClusteringPrefix<'_>>) -> io::Result<()> {
        let part = &mut self.parts[self.cur];
        let mut c = part.cols.iter_mut();
        for k in &self.key {
            if let Some(b) = c.next() {
                b.push(Some(k));
            }
        }
        for i in 0..self.plan.n_ck {
            let v = clustering.and_then(|c| c.values.get(i).copied().flatten());
            if let Some(b) = c.next() {
                b.push(v);
            }
        }
        let _ = t;
        for v in self.statics.iter().chain(&self.regulars) {
            if let Some(b) = c.next() {
                b.push(v.as_deref());
            }
        }
        for &slot in &self.plan.meta {
            let t = self.times.get(slot).copied().flatten();
            if let Some(b) = c.next() {
                b.push(t.map(|t| t.0.to_be_bytes()).as_ref().map(|b| &b[..]));
            }
            if let Some(b) = c.next() {
                b.push(
                    t.and_then(|t| t.1)
                        .map(i32::to_be_bytes)
                        .as_ref()
                        .map(|b| &b[..]),
                );
            }
        }
        part.rows += 1;
        self.rows += 1;
        self.rows_in_partition += 1;
        if part.rows >= self.batch_rows {
            if let Err(e) = part.flush_rows(&self.plan, &self.schema, self.decimals) {
                let msg = e.to_string();
                self.error = Some(e);
                return Err(io::Error::other(msg));
            }
        }
        Ok(())
    }
}

use sstkit_format::data::live::LiveColumn;

impl Sink for ExportSink<'_> {
    fn partition_start(
        &mut self,
        t: &Table<'_>,
        key: &[u8],
        deletion: &DeletionTime,
        _header_end: u64,
    ) -> io::Result<()> {
        self.slots_for(t.header);
        self.key = match key_components(&t.header.partition_key_type, key) {
            Some(c) => c.into_iter().map(<[u8]>::to_vec).collect(),
            None => {
                return Err(io::Error::other(format!(
                    "partition key 0x{} does not frame as its type",
                    crate::output::hex(key)
                )))
            }
        };
        if let Some(n) = self.ranges {
            self.cur = match t.partitioner.token(key) {
                Token::Murmur3(tok) => range_of(tok, n),
                _ => 0,
            };
        }
        self.partition_deletion = *deletion;
        self.open_range = DeletionTime::LIVE;
        self.open_bound = None;
        if !deletion.is_live() {
            self.tomb(Tomb {
                kind: "partition",
                start: None,
                end: None,
                column: None,
                deletion: *deletion,
            })?;
        }
        self.statics.clear();
        self.statics.resize(self.plan.statics.len(), None);
        self.regulars.clear();
        self.regulars.resize(self.plan.regulars.len(), None);
        self.times.clear();
        self.times
            .resize(self.plan.statics.len() + self.plan.regulars.len(), None);
        self.rows_in_partition = 0;
        Ok(())
    }

    fn static_row(&mut self, t: &Table<'_>, row: &Row<'_>, _position: u64) -> io::Result<()> {
        self.row_tombstones(t, row, true)?;
        // Range tombstones never cover the static row.
        self.live_values(row, self.partition_deletion, true);
        Ok(())
    }

    fn row(&mut self, t: &Table<'_>, row: &Row<'_>) -> io::Result<()> {
        self.row_tombstones(t, row, false)?;
        let covering = stronger(self.partition_deletion, self.open_range);
        self.clear_regulars();
        if self.live_values(row, covering, false) {
            self.emit(t, Some(&row.clustering))?;
        }
        Ok(())
    }

    fn marker(&mut self, t: &Table<'_>, m: &RangeTombstoneMarker<'_>) -> io::Result<()> {
        use sstkit_format::clustering::BoundKind as K;
        let bound = if self.tombs.is_some() {
            clustering_text(t, &m.bound)
        } else {
            String::new()
        };
        if let Some(d) = m.close_deletion() {
            self.open_range = DeletionTime::LIVE;
            let incl = matches!(m.kind(), K::InclEndBound | K::InclEndExclStartBoundary);
            if let Some((start, start_incl)) = self.open_bound.take() {
                self.tomb(Tomb {
                    kind: "range",
                    start: Some((&start, start_incl)),
                    end: Some((&bound, incl)),
                    column: None,
                    deletion: d,
                })?;
            }
        }
        if let Some(d) = m.open_deletion() {
            self.open_range = d;
            let incl = matches!(m.kind(), K::InclStartBound | K::ExclEndInclStartBoundary);
            self.open_bound = Some((bound, incl));
        }
        Ok(())
    }

    fn partition_end(&mut self, t: &Table<'_>) -> io::Result<()> {
        // Static content alone is a row when the partition has no live row (as cql.rs).
        if self.rows_in_partition == 0
            && self.plan.n_ck > 0
            && self.statics.iter().any(Option::is_some)
        {
            self.clear_regulars();
            self.emit(t, None)?;
        }
        Ok(())
    }

    fn abort_partition(&mut self, _t: &Table<'_>) -> io::Result<()> {
        Ok(())
    }

    fn last_partition_written(&self) -> bool {
        self.rows_in_partition > 0
    }
}

/// An export's inputs opened and its columns fixed: what is read, the
/// sstables as one table, the output columns and their Arrow schema.
struct Prepared {
    reads: DumpPlan,
    inputs: MergeInputs,
    plan: Plan,
    schema: SchemaRef,
    decimals: Decimals,
}

impl Prepared {
    /// Open the sstables of `reads` as one table and fix the columns.
    fn open(a: &ExportArgs, reads: DumpPlan, decimals: Decimals) -> CmdResult<Prepared> {
        // Opened as a merge in both modes: the sstables must be of one table, and
        // the union of their columns is the output's columns.
        let inputs = reads.inputs.open_merged()?;
        if !a.merge && inputs.ssts.len() > 1 {
            eprintln!(
                "sstkit: export of {} sstables without --merge: rows are written per sstable, \
                 not reconciled (the same row may appear several times, deleted data may show)",
                inputs.ssts.len()
            );
        }
        let names = inputs.ssts.first().and_then(|s| s.table_schema());
        let plan = Plan::new(&inputs.schema.header, names, a.with_metadata);
        let schema = plan.schema(decimals);
        Ok(Prepared {
            reads,
            inputs,
            plan,
            schema,
            decimals,
        })
    }

    /// The columns and schema of the `--tombstones` stream.
    fn tombstone_plan(&self) -> (Plan, SchemaRef) {
        let n_pk = key_types(&self.inputs.schema.header.partition_key_type).len();
        let tplan = Plan::tombstones(&self.plan, n_pk);
        let tschema = tplan.schema(self.decimals);
        (tplan, tschema)
    }

    /// A sink collecting the rows into `parts` (by token range when
    /// `ranges` is set) and the tombstones into `tombs`.
    fn sink<'a>(
        &self,
        parts: Vec<Part<'a>>,
        ranges: Option<u64>,
        tombs: Option<(Plan, SchemaRef, Part<'a>)>,
        batch_rows: usize,
    ) -> ExportSink<'a> {
        ExportSink {
            plan: self.plan.clone(),
            schema: self.schema.clone(),
            decimals: self.decimals,
            parts,
            ranges,
            cur: 0,
            now: self.reads.now_secs,
            key: Vec::new(),
            partition_deletion: DeletionTime::LIVE,
            open_range: DeletionTime::LIVE,
            statics: Vec::new(),
            regulars: Vec::new(),
            times: Vec::new(),
            rows_in_partition: 0,
            slots: None,
            scratch: Vec::new(),
            error: None,
            rows: 0,
            tombs,
            open_bound: None,
            batch_rows: batch_rows.max(1),
        }
    }

    /// Read the sstables into `sink` (merged or one after the other), then
    /// write what the sink still holds and close its outputs.
    fn drive(&self, merge: bool, sink: &mut ExportSink<'_>) -> CmdResult<()> {
        let (reads, inputs) = (&self.reads, &self.inputs);
        let now_secs = reads.now_secs;
        let r = if merge {
            let table = Table::new(&inputs.schema.header, inputs.partitioner.clone(), now_secs);
            let sel = select::resolve(&reads.select, &table)?;
            crate::drive::merged(reads, inputs, &table, &sel, sink)
        } else {
            let mut r = Ok(());
            for (sst, h) in inputs.ssts.iter().zip(&inputs.headers) {
                let table = Table::new(h, inputs.partitioner.clone(), now_secs);
                let sel = select::resolve(&reads.select, &table)?;
                r = crate::drive::sstable(reads, sst, &table, &sel, sink);
                if r.is_err() {
                    break;
                }
            }
            r
        };
        // A batch that failed to write is the error to report.
        if let Some(e) = sink.error.take() {
            return Err(e);
        }
        r?;
        for p in &mut sink.parts {
            p.flush_rows(&sink.plan, &sink.schema, self.decimals)?;
            p.finish()?;
        }
        if let Some((plan, schema, part)) = &mut sink.tombs {
            part.flush_rows(plan, schema, self.decimals)?;
            part.finish()?;
        }
        Ok(())
    }
}

/// Run the command.
pub fn run(a: &ExportArgs, out: &mut dyn Write) -> CmdResult<Outcome> {
    let decimals = Decimals::parse(&a.decimals).map_err(CmdError::Usage)?;
    let ranges = match &a.partition_by {
        None => None,
        Some(s) => match s.strip_prefix("token-range:").map(str::parse::<u64>) {
            Some(Ok(n)) if (1..=65536).contains(&n) => Some(n),
            _ => {
                return Err(CmdError::Usage(format!(
                    "--partition-by {s}: expected token-range:N with N in 1..=65536"
                )))
            }
        },
    };
    let stdout = a.output.as_os_str() == "-";
    if stdout && (ranges.is_some() || a.format == ExportFormat::Parquet) {
        return Err(CmdError::Usage(
            "--output-file -: only for -o arrow (an IPC stream) or csv, without --partition-by"
                .into(),
        ));
    }
    if ranges.is_some() && a.format != ExportFormat::Parquet {
        return Err(CmdError::Usage(
            "--partition-by: only with -o parquet".into(),
        ));
    }
    if a.row_group_rows == 0 {
        return Err(CmdError::Usage("--row-group-rows: at least 1".into()));
    }
    // What is read: the live rows, merged or not, in the token range.
    let p = Prepared::open(a, DumpPlan::export(a)?, decimals)?;
    let (plan, schema, inputs) = (&p.plan, &p.schema, &p.inputs);
    let settings = Settings {
        format: a.format,
        row_group_rows: a.row_group_rows,
        row_group_bytes: a.row_group_bytes,
        compression: a.compression,
    };
    let mut parts = Vec::new();
    if let Some(n) = ranges {
        if !matches!(
            inputs.partitioner,
            sstkit_format::token::Partitioner::Murmur3
        ) {
            return Err(CmdError::Usage(
                "--partition-by token-range: only for Murmur3Partitioner tables".into(),
            ));
        }
        std::fs::create_dir_all(&a.output).map_err(|e| {
            CmdError::Output(io::Error::new(
                e.kind(),
                format!("{}: {e}", a.output.display()),
            ))
        })?;
        for i in 0..n {
            let (s, e) = range_bounds(i, n);
            let path = a.output.join(format!("part-{i:05}-of-{n:05}.parquet"));
            let meta = vec![("sstkit.token_range".to_string(), format!("({s},{e}]"))];
            parts.push(Part::file(&path, schema, &settings, meta)?);
        }
    } else if stdout {
        let writer = match a.format {
            ExportFormat::Arrow => Writer::IpcStream(
                arrow_ipc::writer::StreamWriter::try_new(out, schema).map_err(arrow_err)?,
            ),
            _ => Writer::Csv(Box::new(out)),
        };
        parts.push(Part::new(writer, schema, None));
    } else {
        parts.push(Part::file(&a.output, schema, &settings, vec![])?);
    }
    let tombs = match &a.tombstones {
        Some(path) => {
            let (tplan, tschema) = p.tombstone_plan();
            let mut part = Part::file(path, &tschema, &settings, vec![])?;
            if let Some(Writer::Csv(w)) = &mut part.writer {
                w.write_all(csv_header(&tplan).as_bytes())?;
            }
            Some((tplan, tschema, part))
        }
        None => None,
    };
    if a.format == ExportFormat::Csv {
        let header = csv_header(plan);
        for p in &mut parts {
            if let Some(Writer::Csv(w)) = &mut p.writer {
                w.write_all(header.as_bytes())?;
            }
        }
    }
    let mut sink = p.sink(parts, ranges, tombs, BATCH_ROWS);
    p.drive(a.merge, &mut sink)?;
    p.reads.inputs.report_io(inputs);
    Ok(Outcome::default())
}

pub mod stream;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
