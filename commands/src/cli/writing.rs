//! The flags of the commands that write sstables: `rewrite`, `compact`,
//! `write`, `split`, and the writing flags they share.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::{
    parse_duration, parse_now, parse_size, IoStatsFormat, KeySelectArgs, OutputFormat, SstArgs,
    NOW_HELP,
};

/// `rewrite` arguments.
#[derive(Debug, Clone, Args)]
pub struct RewriteArgs {
    #[command(flatten)]
    pub sst: SstArgs,
    /// Directory the new sstables are written to (created if missing); never an input's directory
    #[arg(long, value_name = "DIR", required = true)]
    pub output_dir: PathBuf,
    #[command(flatten)]
    pub select: KeySelectArgs,
    #[command(flatten)]
    pub writer: WriterArgs,
}

/// `compact` arguments.
#[derive(Debug, Clone, Args)]
pub struct CompactArgs {
    #[command(flatten)]
    pub sst: SstArgs,
    /// Directory the new sstable is written to (created if missing); never an input's directory
    #[arg(long, value_name = "DIR", required = true)]
    pub output_dir: PathBuf,
    /// Drop tombstones older than --gc-grace (judged at --now)
    #[arg(long)]
    pub purge: bool,
    /// Start a new output sstable once the current Data.db holds this many bytes on disk (between partitions)
    #[arg(long, value_name = "BYTES", value_parser = parse_size)]
    pub max_size: Option<u64>,
    /// The table's gc_grace_seconds: seconds, or 10d, 3h, 30m
    #[arg(long, value_name = "DURATION", default_value = "10d", value_parser = parse_duration)]
    pub gc_grace: i64,
    /// Time TTL expiry and tombstone age are judged at: seconds since the epoch or a timestamp (default: now)
    #[arg(long, value_name = "TIME", long_help = NOW_HELP, allow_hyphen_values = true, value_parser = parse_now)]
    pub now: Option<i64>,
    #[command(flatten)]
    pub writer: WriterArgs,
}

/// How the writing commands (rewrite, split, compact, write) lay out what
/// they write; each flag unset keeps the source's (compact: the first
/// input's; write: --like's, else oa and lz4).
#[derive(Debug, Clone, Args)]
pub struct WriterArgs {
    /// Version to write: ma, mb, mc, md, me, na, nb, nc, oa (BIG) or da (BTI); default: the source's
    #[arg(long, value_name = "VERSION")]
    pub format_version: Option<String>,
    /// Data.db compression: none, lz4, snappy, deflate, zstd or zstd:LEVEL; default: the source's
    #[arg(long, value_name = "ALGO")]
    pub compression: Option<String>,
    /// Uncompressed bytes per compressed chunk (power of two); default: the source's, else 16KiB
    #[arg(long, value_name = "BYTES", value_parser = parse_size)]
    pub chunk_length: Option<u64>,
    /// Row-index block size (Cassandra's column_index_size); default: 64KiB (BIG), 16KiB (BTI)
    #[arg(long, value_name = "BYTES", value_parser = parse_size)]
    pub column_index_size: Option<u64>,
}

/// `write --input-format` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WriteFrom {
    /// `dump-data -o ndjson` records
    Ndjson,
}

/// Long help of `write --schema`: the statements accepted are those of `--schema` (sstkit --help).
const WRITE_SCHEMA_HELP: &str = "CQL file with the table's CREATE TABLE (and CREATE TYPE) \
statements: the types of the records' keys and values. Accepted statements: sstkit --help, or \
man sstkit.";

/// `write` arguments.
#[derive(Debug, Clone, Args)]
#[command(group(clap::ArgGroup::new("table_types").required(true).args(["schema", "like"])))]
pub struct WriteArgs {
    /// The records, one partition per line; `-` reads stdin
    #[arg(long, value_name = "FILE", required = true)]
    pub from: PathBuf,
    /// Format of the records
    #[arg(long, value_enum, value_name = "FORMAT", default_value = "ndjson")]
    pub input_format: WriteFrom,
    /// CQL file with the table's CREATE TABLE (and CREATE TYPE) statements
    #[arg(long, value_name = "FILE", long_help = WRITE_SCHEMA_HELP)]
    pub schema: Option<PathBuf>,
    /// An sstable of the table: its serialization header gives the types, and its partitioner,
    /// version and compression are the defaults
    #[arg(long, value_name = "SSTABLE")]
    pub like: Option<PathBuf>,
    /// Directory the new sstable is written to (created if missing)
    #[arg(long, value_name = "DIR", required = true)]
    pub output_dir: PathBuf,
    /// Partitioner class of the table; default: --like's, else Murmur3Partitioner
    #[arg(long, value_name = "CLASS")]
    pub partitioner: Option<String>,
    #[command(flatten)]
    pub writer: WriterArgs,
    /// Output format of the report (default: json; text when stdout is a terminal)
    #[arg(long, short = 'o', value_enum)]
    pub output: Option<OutputFormat>,
    /// Print the IO counters of the --like sstable to stderr: a table, or JSON lines with --io-stats=json; --schema reads no sstable
    #[arg(long, value_name = "FORMAT", num_args = 0..=1, require_equals = true, default_missing_value = "table")]
    pub io_stats: Option<IoStatsFormat>,
}

/// `split` arguments.
#[derive(Debug, Clone, Args)]
pub struct SplitArgs {
    #[command(flatten)]
    pub sst: SstArgs,
    /// Directory the new sstables are written to (created if missing); never an input's directory
    #[arg(long, value_name = "DIR", required = true)]
    pub output_dir: PathBuf,
    /// Start a new sstable once Data.db holds this many bytes on disk
    #[arg(long, value_name = "BYTES", value_parser = parse_size, required_unless_present = "token_ranges", conflicts_with = "token_ranges")]
    pub max_size: Option<u64>,
    /// One sstable per line START,END of FILE: the partitions with a token in (START, END]
    #[arg(long, value_name = "FILE")]
    pub token_ranges: Option<PathBuf>,
    #[command(flatten)]
    pub writer: WriterArgs,
}
