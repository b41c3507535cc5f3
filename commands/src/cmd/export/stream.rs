//! Export's records handed to a caller as Arrow record batches, for
//! programs that read the CQL row view without a file in between (the
//! Python package): the columns, Arrow types and rows of `sstkit export`,
//! read through the same run and sink.

use arrow_array::RecordBatch;
use arrow_schema::{Schema, SchemaRef};

use super::{ColBuf, Part, Prepared, Writer};
use crate::arrow::Decimals;
use crate::cli::{ExportArgs, KeySelectArgs};
use crate::plan::DumpPlan;
use crate::{CmdError, CmdResult};

/// Which records [`batches`] yields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Records {
    /// The live CQL rows (export's output).
    Rows,
    /// The deletions (export's `--tombstones` output).
    Tombstones,
}

/// What [`batches`] reads, beyond export's flags.
#[derive(Debug, Clone)]
pub struct Options {
    /// Rows or tombstones.
    pub records: Records,
    /// Which partitions: keys, excluded keys, a token range (export's
    /// `--token-range` is not read).
    pub select: KeySelectArgs,
    /// The row columns to keep, in this order (`None`: all). Not for tombstones.
    pub columns: Option<Vec<String>>,
    /// Rows per batch (at least 1).
    pub batch_rows: usize,
}

/// Read what `a` and `o` select and hand the records to `batch`, one
/// record batch at a time; `schema` gets their schema before the first
/// batch (also when there is none). An error from either callback stops
/// the read and is returned.
pub fn batches(
    a: &ExportArgs,
    o: &Options,
    schema: &mut dyn FnMut(SchemaRef) -> CmdResult<()>,
    batch: &mut dyn FnMut(RecordBatch) -> CmdResult<()>,
) -> CmdResult<()> {
    let decimals = Decimals::parse(&a.decimals).map_err(CmdError::Usage)?;
    let reads = DumpPlan::export_with(a, &o.select)?;
    let p = Prepared::open(a, reads, decimals)?;
    match o.records {
        Records::Rows => {
            let mut part = Part::new(Writer::Batches(batch), &p.schema, None);
            match &o.columns {
                Some(names) => {
                    let proj = project(&p.schema, names)?;
                    schema(proj.1.clone())?;
                    part.proj = Some(proj);
                }
                None => schema(p.schema.clone())?,
            }
            let mut sink = p.sink(vec![part], None, None, o.batch_rows);
            p.drive(a.merge, &mut sink)
        }
        Records::Tombstones => {
            if o.columns.is_some() {
                return Err(CmdError::Usage(
                    "columns: only for rows, not tombstones".into(),
                ));
            }
            let (tplan, tschema) = p.tombstone_plan();
            schema(tschema.clone())?;
            let tombs = Part::new(Writer::Batches(batch), &tschema, None);
            // The rows are collected and dropped: no batch is built of them.
            let rows = Part {
                writer: None,
                cols: p
                    .schema
                    .fields()
                    .iter()
                    .map(|_| ColBuf::default())
                    .collect(),
                rows: 0,
                tmp: None,
                proj: None,
            };
            let mut sink = p.sink(
                vec![rows],
                None,
                Some((tplan, tschema, tombs)),
                o.batch_rows,
            );
            p.drive(a.merge, &mut sink)
        }
    }
}

/// The positions of the columns `names` in `schema`, and their schema; a
/// usage error names a column that is not there.
fn project(schema: &SchemaRef, names: &[String]) -> CmdResult<(Vec<usize>, SchemaRef)> {
    let mut keep = Vec::with_capacity(names.len());
    for n in names {
        let i = schema.index_of(n).map_err(|_| {
            let have: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
            CmdError::Usage(format!(
                "columns: no column {n:?} (the columns: {})",
                have.join(", ")
            ))
        })?;
        keep.push(i);
    }
    let fields: Vec<_> = keep.iter().map(|&i| schema.field(i).clone()).collect();
    Ok((keep, std::sync::Arc::new(Schema::new(fields))))
}
