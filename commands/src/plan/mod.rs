//! The arguments of a data command resolved once into a plan (parse, then
//! resolve, as ripgrep's LowArgs → HiArgs), so that the data path takes
//! the plan and no clap struct: sstables → a reader per sstable → merge
//! (optional) → filters → sink. The plan's [`Inputs`] open the sstables.
//!
//! `dump-data` and `export` resolve into a [`DumpPlan`], `read` into a
//! [`LookupPlan`], the commands that only take sstables into an
//! [`SstPlan`]; usage errors found while resolving (a key or a `--now`
//! that does not parse, no sstables) exit 2 with the messages they always
//! had.
//!
//! The stages after the plan live here too: [`inputs`] finds and opens the
//! sstables, [`bind`] binds each one, [`select`] resolves the key
//! selection against its key type and partitioner, and [`run`] runs the
//! engine into the command's sink ([`crate::sink`]).

pub mod bind;
pub mod inputs;
pub mod run;
pub mod select;

use crate::cli::{
    DataOutputFormat, DumpDataArgs, ExportArgs, IoStatsFormat, KeySelectArgs, OutputFormat,
    ReadArgs, SstArgs,
};
use crate::plan::inputs::Inputs;
use crate::{CmdError, CmdResult};
use select::KeyArg;

/// A per-sstable command's arguments ([`SstArgs`]), resolved: for
/// [`crate::for_each_sstable`].
#[derive(Debug, Clone)]
pub struct SstPlan {
    /// The sstables, their IO options and `--schema`.
    pub inputs: Inputs,
    /// `--output`, or the command's default.
    pub fmt: OutputFormat,
}

impl SstPlan {
    /// The plan of a command that only takes sstables; its output form is
    /// `--output`, else `default_fmt`.
    pub fn resolve(a: &SstArgs, default_fmt: OutputFormat) -> CmdResult<SstPlan> {
        Ok(SstPlan {
            inputs: Inputs::resolve(&a.input)?,
            fmt: a.output.unwrap_or(default_fmt),
        })
    }

    /// [`SstPlan::resolve`] with text as the default at a terminal and json
    /// elsewhere (in pipes).
    pub fn text_at_terminal(a: &SstArgs) -> CmdResult<SstPlan> {
        let default = crate::cli::text_at_terminal(None, OutputFormat::Text, OutputFormat::Json);
        SstPlan::resolve(a, default)
    }
}

/// A whole-table read (`dump-data`, and what `export` reads), resolved.
#[derive(Debug, Clone)]
pub struct DumpPlan {
    /// The command, as the progress bar names it.
    pub command: &'static str,
    /// The sstables, their IO options, `--io-stats` and `--schema`.
    pub inputs: Inputs,
    /// Which partitions (`--key`, `--keys-file`, `--exclude-key`, `--token-range`).
    pub select: select::Spec,
    /// The output form (`--output`, or text at a terminal and json elsewhere).
    pub format: DataOutputFormat,
    /// `--limit`: partitions printed per sstable (merged: in all); `u64::MAX` when unlimited.
    pub limit: u64,
    /// `--keys-only`.
    pub keys_only: bool,
    /// `--tombstones-only`.
    pub tombstones_only: bool,
    /// `--raw-timestamps`.
    pub raw_timestamps: bool,
    /// `--now`, in seconds since the epoch.
    pub now_secs: i64,
    /// `--reverse`.
    pub reverse: bool,
    /// `--merge`.
    pub merge: bool,
    /// `--explain`.
    pub explain: bool,
    /// `--threads`, resolved: how many threads read one sstable (1: one
    /// pass on this thread).
    pub threads: usize,
}

impl DumpPlan {
    /// The plan of `dump-data`.
    pub fn dump_data(a: &DumpDataArgs) -> CmdResult<DumpPlan> {
        if let Some(flag) = a.slice_flag() {
            return Err(CmdError::Usage(format!(
                "dump-data prints whole partitions and takes no clustering bounds: \
                 for a slice of a partition use `sstkit read -k KEY {flag} CK` \
                 (`read --merge` across sstables)"
            )));
        }
        let format = a.format();
        if format == DataOutputFormat::Cql && (a.keys_only || a.tombstones_only) {
            return Err(CmdError::Usage(
                "--output cql prints live rows: not with --keys-only or --tombstones-only".into(),
            ));
        }
        let select = select::Spec::from_args(&a.select)?;
        Ok(DumpPlan {
            command: "dump-data",
            inputs: Inputs::resolve(&a.input)?.names(format == DataOutputFormat::Cql),
            select,
            now_secs: a.now.unwrap_or_else(crate::clock_secs),
            format,
            limit: a.limit.unwrap_or(u64::MAX),
            keys_only: a.keys_only,
            tombstones_only: a.tombstones_only,
            raw_timestamps: a.raw_timestamps,
            reverse: a.reverse,
            merge: a.merge,
            explain: a.explain,
            threads: threads(a.threads),
        })
    }

    /// The plan of what `export` reads: every live row (the CQL row view),
    /// optionally merged and limited to a token range.
    pub fn export(a: &ExportArgs) -> CmdResult<DumpPlan> {
        let select = KeySelectArgs {
            token_range: a.token_range.clone(),
            ..Default::default()
        };
        DumpPlan::export_with(a, &select)
    }

    /// [`DumpPlan::export`] of the partitions `select` selects (keys,
    /// excluded keys, a token range) instead of export's `--token-range`.
    pub fn export_with(a: &ExportArgs, select: &KeySelectArgs) -> CmdResult<DumpPlan> {
        let select = select::Spec::from_args(select)?;
        Ok(DumpPlan {
            command: "export",
            // The column names of the CQL row view.
            inputs: Inputs::resolve(&a.input)?.names(true),
            select,
            now_secs: a.now.unwrap_or_else(crate::clock_secs),
            format: DataOutputFormat::Cql,
            limit: u64::MAX,
            keys_only: false,
            tombstones_only: false,
            raw_timestamps: false,
            reverse: false,
            merge: a.merge,
            explain: false,
            threads: threads(a.threads),
        })
    }
}

/// `--key`, `--key-hex` and `--keys-file`, in that order.
fn key_args(a: &ReadArgs) -> CmdResult<Vec<KeyArg>> {
    let spec = select::Spec::new(&a.key, &a.key_hex, a.keys_file.as_ref(), &[], None)?;
    let keys = spec.keys.unwrap_or_default();
    if keys.is_empty() {
        return Err(CmdError::Usage(
            "read needs a partition key: --key, --key-hex or --keys-file".into(),
        ));
    }
    Ok(keys)
}

/// A single-partition bounded read (`read`), resolved. The clustering
/// bounds and `--columns` stay text: their types come from each sstable.
#[derive(Debug, Clone)]
pub struct LookupPlan {
    /// The sstables, their IO options and `--schema`.
    pub inputs: Inputs,
    /// `--io-stats`: `read` reports each lookup's IO itself, not each sstable's.
    pub io_stats: Option<IoStatsFormat>,
    /// The keys to look up, in the order given.
    pub keys: Vec<KeyArg>,
    /// `--from` (inclusive lower clustering bound).
    pub from: Option<String>,
    /// `--after` (exclusive lower clustering bound).
    pub after: Option<String>,
    /// `--to` (inclusive upper clustering bound).
    pub to: Option<String>,
    /// `--before` (exclusive upper clustering bound).
    pub before: Option<String>,
    /// `--clustering-order`: the bounds are in clustering order, not values.
    pub clustering_order: bool,
    /// `--limit`: rows per partition.
    pub limit: Option<u64>,
    /// `--columns`.
    pub columns: Vec<String>,
    /// `--reverse`.
    pub reverse: bool,
    /// `--merge`.
    pub merge: bool,
    /// `--explain`.
    pub explain: bool,
    /// `--output`.
    pub output: DataOutputFormat,
    /// `--raw-timestamps`.
    pub raw_timestamps: bool,
    /// `--now`, in seconds since the epoch.
    pub now_secs: i64,
    /// The hidden `--naive` benchmark baseline.
    pub naive: bool,
    /// `--threads`, resolved: how many threads look the keys up.
    pub threads: usize,
}

impl LookupPlan {
    /// The plan of `read`.
    pub fn resolve(a: &ReadArgs) -> CmdResult<LookupPlan> {
        let keys = key_args(a)?;
        if a.output == DataOutputFormat::Cql && !a.columns.is_empty() {
            return Err(CmdError::Usage(
                "--output cql prints every column of the live rows: not with --columns".into(),
            ));
        }
        let mut inputs = Inputs::resolve(&a.input)?.names(a.output == DataOutputFormat::Cql);
        let io_stats = inputs.io_stats.take();
        Ok(LookupPlan {
            inputs,
            now_secs: a.now.unwrap_or_else(crate::clock_secs),
            io_stats,
            keys,
            from: a.from.clone(),
            after: a.after.clone(),
            to: a.to.clone(),
            before: a.before.clone(),
            clustering_order: a.clustering_order,
            limit: a.limit,
            columns: a.columns.clone(),
            reverse: a.reverse,
            merge: a.merge,
            explain: a.explain,
            output: a.output,
            raw_timestamps: a.raw_timestamps,
            naive: a.naive,
            threads: threads(a.threads),
        })
    }
}

/// A `--threads` value: 0 is one thread per core.
pub fn threads(n: usize) -> usize {
    match n {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
}
