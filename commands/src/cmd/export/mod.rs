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
//! The rows are those `dump-data -o cql` prints ([`crate::sink::cql`]: what
//! `SELECT *` returns at `--now`), read through the same drivers (one
//! sstable's scan, or the merged stream of [`sstkit_format::engine::merged`]). Columns:
//! partition key, clustering, static, then regular columns by name (the
//! order of `SELECT *`). Types map as [`arrow_type`](crate::arrow::arrow_type) says.
//!
//! Memory: rows are collected in batches of [`BATCH_ROWS`] and handed to the
//! writer, which holds at most one row group. Each output file is written
//! under a temporary name in its directory and renamed once complete.

mod columns;
mod csv;
mod part;
mod sink;
mod threads;

use std::io::{self, Write};

use arrow_schema::SchemaRef;
use sstkit_format::engine::MergeInputs;

use crate::arrow::Decimals;
use crate::cli::{ExportArgs, ExportFormat};
use crate::plan::select;
use crate::plan::DumpPlan;
use crate::sink::cql::key_types;
use crate::sink::Table;
use crate::{CmdError, CmdResult, Outcome};

use columns::Plan;
use csv::csv_header;
use part::{arrow_err, ColBuf, Part, Settings, Writer};
pub use sink::{range_bounds, range_of};
use sink::{ExportSink, SinkSetup};

/// Rows per batch handed to a writer.
pub const BATCH_ROWS: usize = 8192;

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
        let setup = SinkSetup {
            plan: &self.plan,
            schema: &self.schema,
            decimals: self.decimals,
            now: self.reads.now_secs,
        };
        ExportSink::new(setup, parts, ranges, tombs, batch_rows)
    }

    /// Read the sstables into `sink` (merged or one after the other), then
    /// write what the sink still holds and close its outputs.
    fn drive(&self, merge: bool, sink: &mut ExportSink<'_>) -> CmdResult<()> {
        let (reads, inputs) = (&self.reads, &self.inputs);
        let now_secs = reads.now_secs;
        let r = if merge {
            let table = Table::new(&inputs.schema.header, inputs.partitioner.clone(), now_secs);
            let sel = select::resolve(&reads.select, &table)?;
            match threads::merged(reads, inputs, &table, &sel, sink) {
                Ok(Some(())) => Ok(()),
                Ok(None) => crate::plan::run::merged(reads, inputs, &table, &sel, sink),
                Err(e) => Err(e),
            }
        } else {
            let mut r = Ok(());
            for (sst, h) in inputs.ssts.iter().zip(&inputs.headers) {
                let table = Table::new(h, inputs.partitioner.clone(), now_secs);
                let sel = select::resolve(&reads.select, &table)?;
                r = match threads::sstable(reads, sst, &table, &sel, sink) {
                    Ok(Some(())) => Ok(()),
                    Ok(None) => crate::plan::run::sstable(reads, sst, &table, &sel, sink),
                    Err(e) => Err(e),
                };
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
