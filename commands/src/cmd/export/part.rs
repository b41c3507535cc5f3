//! One export output (a file or stdout): its writer, the rows collected
//! for its next batch, and the batch built of them.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use sstkit_format::value::{decode, Value};

use super::columns::{OutCol, Plan};
use super::csv::write_csv_rows;
use crate::arrow::{build_array, some_value, Decimals};
use crate::cli::{ExportCompression, ExportFormat};
use crate::{CmdError, CmdResult};

/// The values of one column of a batch: serialized values in one buffer.
#[derive(Default)]
pub(super) struct ColBuf {
    pub(super) data: Vec<u8>,
    pub(super) spans: Vec<Option<(usize, usize)>>,
}

impl ColBuf {
    pub(super) fn push(&mut self, v: Option<&[u8]>) {
        self.spans.push(v.map(|b| {
            self.data.extend_from_slice(b);
            (self.data.len() - b.len(), b.len())
        }));
    }
    /// Append rows `r` of `from` (a buffer of the same column) as pushing
    /// each value in turn would: their values lie side by side in
    /// `from.data`, so they are copied at once.
    pub(super) fn extend_rows(&mut self, from: &ColBuf, r: std::ops::Range<usize>) {
        let spans = &from.spans[r];
        let Some(lo) = spans.iter().find_map(|s| s.map(|(s, _)| s)) else {
            self.spans.extend_from_slice(spans);
            return;
        };
        let hi = spans
            .iter()
            .rev()
            .find_map(|s| s.map(|(s, n)| s + n))
            .unwrap_or(lo);
        let base = self.data.len();
        self.data.extend_from_slice(&from.data[lo..hi]);
        self.spans
            .extend(spans.iter().map(|s| s.map(|(s, n)| (s - lo + base, n))));
    }
    pub(super) fn get(&self, i: usize) -> Option<&[u8]> {
        self.spans[i].map(|(s, n)| &self.data[s..s + n])
    }
    pub(super) fn clear(&mut self) {
        self.data.clear();
        self.spans.clear();
    }
}

/// Where batches go.
pub(super) enum Writer<'a> {
    Parquet(parquet::arrow::ArrowWriter<BufWriter<File>>),
    IpcFile(arrow_ipc::writer::FileWriter<BufWriter<File>>),
    IpcStream(arrow_ipc::writer::StreamWriter<&'a mut dyn Write>),
    Csv(Box<dyn Write + 'a>),
    /// Each batch to a caller ([`stream`]).
    Batches(&'a mut dyn FnMut(RecordBatch) -> CmdResult<()>),
}

pub(super) fn arrow_err(e: impl std::fmt::Display) -> CmdError {
    CmdError::Output(io::Error::other(e.to_string()))
}

/// One output (a file or stdout) and the rows not yet written to it.
pub(super) struct Part<'a> {
    pub(super) writer: Option<Writer<'a>>,
    pub(super) cols: Vec<ColBuf>,
    pub(super) rows: usize,
    /// The temporary file and its final name (none for stdout).
    pub(super) tmp: Option<(PathBuf, PathBuf)>,
    /// The columns written (by position) and their schema, when not all.
    pub(super) proj: Option<(Vec<usize>, SchemaRef)>,
}

/// Output settings.
pub(super) struct Settings {
    pub(super) format: ExportFormat,
    pub(super) row_group_rows: usize,
    pub(super) row_group_bytes: Option<u64>,
    pub(super) compression: ExportCompression,
}

impl<'a> Part<'a> {
    /// A file output at `path`, written as `path`'s temporary sibling.
    /// A path that is not a regular file (`/dev/null`, a named pipe) is
    /// written as it is: renaming the temporary file over it would replace
    /// the device or pipe with a file.
    pub(super) fn file(
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

    pub(super) fn new(
        writer: Writer<'a>,
        schema: &SchemaRef,
        tmp: Option<(PathBuf, PathBuf)>,
    ) -> Part<'a> {
        Part {
            writer: Some(writer),
            cols: schema.fields().iter().map(|_| ColBuf::default()).collect(),
            rows: 0,
            tmp,
            proj: None,
        }
    }

    /// An output that only collects rows (a thread's, see [`super::threads`])
    /// into `cols`, empty buffers of its columns (kept from an earlier one).
    pub(super) fn held(cols: Vec<ColBuf>) -> Part<'a> {
        Part {
            writer: None,
            cols,
            rows: 0,
            tmp: None,
            proj: None,
        }
    }

    /// The collected rows, handed over.
    pub(super) fn take_rows(&mut self) -> (Vec<ColBuf>, usize) {
        let empty = self.cols.iter().map(|_| ColBuf::default()).collect();
        (
            std::mem::replace(&mut self.cols, empty),
            std::mem::take(&mut self.rows),
        )
    }

    /// Collect the rows `held` (another output's, of the same columns)
    /// after those collected, writing a batch each time `batch_rows` are
    /// collected, as if they were collected here.
    pub(super) fn append(
        &mut self,
        held: &(Vec<ColBuf>, usize),
        plan: &Plan,
        schema: &SchemaRef,
        d: Decimals,
        batch_rows: usize,
    ) -> CmdResult<()> {
        let (cols, rows) = held;
        let mut i = 0;
        while i < *rows {
            // As many rows as the batch has room for (at least one, as
            // collecting them one by one would).
            let n = batch_rows.saturating_sub(self.rows).clamp(1, rows - i);
            for (to, from) in self.cols.iter_mut().zip(cols) {
                to.extend_rows(from, i..i + n);
            }
            self.rows += n;
            i += n;
            if self.rows >= batch_rows {
                self.flush_rows(plan, schema, d)?;
            }
        }
        Ok(())
    }

    /// Write the collected rows.
    pub(super) fn flush_rows(
        &mut self,
        plan: &Plan,
        schema: &SchemaRef,
        d: Decimals,
    ) -> CmdResult<()> {
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
    pub(super) fn finish(&mut self) -> CmdResult<()> {
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
pub(super) fn decode_col(c: &OutCol, b: &[u8]) -> CmdResult<Value> {
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
