//! The arguments of a data command resolved once into a plan (parse, then
//! resolve, as ripgrep's LowArgs → HiArgs), so that the data path takes
//! the plan and no clap struct: sstables → a reader per sstable → merge
//! (optional) → filters → sink.
//!
//! `dump-data` and `export` resolve into a [`DumpPlan`], `read` into a
//! [`LookupPlan`]; usage errors found
//! while resolving (a key or a `--now` that does not parse, no sstables)
//! exit 2 with the messages they always had.

use std::path::PathBuf;

use sstkit_format::descriptor::Descriptor;
use sstkit_format::io::IoOptions;

use sstkit_format::value::literal::unhex;
use sstkit_format::Error;

use crate::cli::{
    DataOutputFormat, DumpDataArgs, ExportArgs, IoStatsFormat, KeySelectArgs, ReadArgs,
};
use crate::dump::select;
use crate::{CmdError, CmdResult};

/// A whole-table read (`dump-data`, and what `export` reads), resolved.
#[derive(Debug, Clone)]
pub struct DumpPlan {
    /// The command, as the progress bar names it.
    pub command: &'static str,
    /// The selected sstables (directories expanded, `--walk` applied).
    pub sstables: Vec<Descriptor>,
    /// `--schema`: the CQL file of pre-3.0 sstables, or of the column names.
    pub schema: Option<PathBuf>,
    /// The IO layer's options (`--io-*`).
    pub io: IoOptions,
    /// `--io-stats`.
    pub io_stats: Option<IoStatsFormat>,
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
}

impl DumpPlan {
    /// The plan of `dump-data`.
    pub fn dump_data(a: &DumpDataArgs) -> CmdResult<DumpPlan> {
        let format = a.format();
        if format == DataOutputFormat::Cql && (a.keys_only || a.tombstones_only) {
            return Err(CmdError::Usage(
                "--output cql prints live rows: not with --keys-only or --tombstones-only".into(),
            ));
        }
        Ok(DumpPlan {
            command: "dump-data",
            sstables: crate::resolve_sstables_walk(&a.sstables, &a.walk)?,
            select: select::Spec::from_args(&a.select)?,
            now_secs: crate::now_secs(a.now.as_deref())?,
            io: crate::io_options(&a.io)?,
            schema: a.schema.clone(),
            io_stats: a.io_stats,
            format,
            limit: a.limit.unwrap_or(u64::MAX),
            keys_only: a.keys_only,
            tombstones_only: a.tombstones_only,
            raw_timestamps: a.raw_timestamps,
            reverse: a.reverse,
            merge: a.merge,
            explain: a.explain,
        })
    }

    /// The plan of what `export` reads: every live row (the CQL row view),
    /// optionally merged and limited to a token range.
    pub fn export(a: &ExportArgs) -> CmdResult<DumpPlan> {
        let select = KeySelectArgs {
            token_range: a.token_range.clone(),
            ..Default::default()
        };
        Ok(DumpPlan {
            command: "export",
            sstables: crate::resolve_sstables_walk(&a.sstables, &a.walk)?,
            select: select::Spec::from_args(&select)?,
            now_secs: crate::now_secs(a.now.as_deref())?,
            io: crate::io_options(&a.io)?,
            schema: a.schema.clone(),
            io_stats: None,
            format: DataOutputFormat::Cql,
            limit: u64::MAX,
            keys_only: false,
            tombstones_only: false,
            raw_timestamps: false,
            reverse: false,
            merge: a.merge,
            explain: false,
        })
    }
}

/// A partition key of `read`, as given (its type comes from each sstable).
#[derive(Debug, Clone)]
pub enum KeyArg {
    /// CQL literal form (`--key`, a line of `--keys-file`).
    Literal(String),
    /// Serialized bytes (`--key-hex`, a `0x` line of `--keys-file`).
    Hex(Vec<u8>),
}

impl KeyArg {
    /// The key as the user wrote it.
    pub fn label(&self) -> String {
        match self {
            KeyArg::Literal(s) => s.clone(),
            KeyArg::Hex(b) => format!("0x{}", crate::output::hex(b)),
        }
    }
}

fn parse_hex(h: &str) -> CmdResult<Vec<u8>> {
    let t = h.trim();
    let t = t
        .strip_prefix("0x")
        .or_else(|| t.strip_prefix("0X"))
        .unwrap_or(t);
    unhex(t).ok_or_else(|| CmdError::Usage(format!("key {h:?}: not an even-length hex string")))
}

/// `--key`, `--key-hex` and `--keys-file`, in that order.
fn key_args(a: &ReadArgs) -> CmdResult<Vec<KeyArg>> {
    let mut keys: Vec<KeyArg> = a.key.iter().map(|k| KeyArg::Literal(k.clone())).collect();
    for h in &a.key_hex {
        keys.push(KeyArg::Hex(parse_hex(h)?));
    }
    if let Some(f) = &a.keys_file {
        let text =
            std::fs::read_to_string(f).map_err(|e| CmdError::from(Error::from(e).in_file(f)))?;
        for line in text.lines() {
            let l = line.trim_end_matches('\r');
            if l.trim().is_empty() {
                continue;
            }
            match l.trim().strip_prefix("0x") {
                Some(h) => keys.push(KeyArg::Hex(parse_hex(h)?)),
                None => keys.push(KeyArg::Literal(l.to_string())),
            }
        }
    }
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
    /// The selected sstables (directories expanded, `--walk` applied).
    pub sstables: Vec<Descriptor>,
    /// `--schema`.
    pub schema: Option<PathBuf>,
    /// The IO layer's options (`--io-*`).
    pub io: IoOptions,
    /// `--io-stats`.
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
}

impl LookupPlan {
    /// The plan of `read`.
    pub fn resolve(a: &ReadArgs) -> CmdResult<LookupPlan> {
        let io = crate::io_options(&a.io)?;
        let keys = key_args(a)?;
        if a.output == DataOutputFormat::Cql && !a.columns.is_empty() {
            return Err(CmdError::Usage(
                "--output cql prints every column of the live rows: not with --columns".into(),
            ));
        }
        Ok(LookupPlan {
            sstables: crate::resolve_sstables_walk(&a.sstables, &a.walk)?,
            now_secs: crate::now_secs(a.now.as_deref())?,
            schema: a.schema.clone(),
            io,
            io_stats: a.io_stats,
            keys,
            from: a.from.clone(),
            after: a.after.clone(),
            to: a.to.clone(),
            before: a.before.clone(),
            limit: a.limit,
            columns: a.columns.clone(),
            reverse: a.reverse,
            merge: a.merge,
            explain: a.explain,
            output: a.output,
            raw_timestamps: a.raw_timestamps,
            naive: a.naive,
        })
    }
}
