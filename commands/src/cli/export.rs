//! The flags of `export`: its formats, Parquet settings and threads.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::{parse_now, parse_size, InputArgs, NOW_HELP};

/// `export` output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum ExportFormat {
    /// Apache Parquet file
    #[default]
    Parquet,
    /// Arrow IPC file (a stream with --output-file -)
    Arrow,
    /// CSV (RFC 4180, header line; values as cqlsh COPY TO writes them)
    Csv,
}

/// Parquet compression codec of `export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportCompression {
    /// zstd (level 3)
    Zstd,
    /// snappy
    Snappy,
    /// lz4 (LZ4_RAW)
    Lz4,
    /// no compression
    None,
}

/// `export` arguments.
#[derive(Debug, Clone, Args)]
pub struct ExportArgs {
    /// Output format: parquet, arrow or csv (default: from the --output-file extension)
    #[arg(long = "output", short = 'o', value_name = "FORMAT")]
    pub output_arg: Option<String>,
    /// Output file ('-': stdout, for arrow (IPC stream) and csv); a directory with --partition-by
    #[arg(long, value_name = "FILE_OR_DIR")]
    pub output_file: Option<PathBuf>,
    /// The output format, as -o gives it (kept for a release)
    #[arg(long = "format", short = 'f', value_enum, hide = true)]
    pub format_arg: Option<ExportFormat>,
    /// The format, resolved by [`ExportArgs::resolve`].
    #[arg(skip)]
    pub format: ExportFormat,
    /// The output file, resolved by [`ExportArgs::resolve`].
    #[arg(skip)]
    pub output: PathBuf,
    /// Read the sstables as one table: rows reconciled across them
    #[arg(long)]
    pub merge: bool,
    #[arg(long, value_name = "TIME", long_help = NOW_HELP, allow_hyphen_values = true, value_parser = parse_now)]
    /// What is live: TTLs are judged at this time (default: now)
    pub now: Option<i64>,
    /// Only partitions whose token is in (START,END]
    #[arg(long, value_name = "START,END", allow_hyphen_values = true)]
    pub token_range: Option<String>,
    /// Add writetime(c) (Int64, microseconds) and ttl(c) (Int32, seconds left at --now) columns for every simple static and regular column
    #[arg(long)]
    pub with_metadata: bool,
    /// Also write the tombstones to FILE, in the same format: kind (partition, range, row, collection, cell), key, clustering range, column, deletion time
    #[arg(long, value_name = "FILE")]
    pub tombstones: Option<PathBuf>,
    /// decimal and varint columns: text (exact Java BigDecimal / BigInteger text), or decimal128:S / decimal256:S (fixed scale S; a value that does not fit is an error)
    #[arg(long, value_name = "RULE", default_value = "text")]
    pub decimals: String,
    /// Parquet: rows per row group
    #[arg(long, value_name = "N", default_value = "1048576")]
    pub row_group_rows: usize,
    /// Parquet: a row group ends once its data reaches about this many bytes (in memory)
    #[arg(long, value_name = "BYTES", value_parser = parse_size)]
    pub row_group_bytes: Option<u64>,
    /// Parquet compression
    #[arg(long, value_enum, default_value = "zstd")]
    pub compression: ExportCompression,
    /// Parquet: write N files into the --output-file directory, one per token range (part-00000-of-N.parquet ...)
    #[arg(long, value_name = "token-range:N")]
    pub partition_by: Option<String>,
    /// Threads reading (0: one per core; 1: one thread); the output is the same whatever the number
    #[arg(long, short = 'j', value_name = "N", default_value_t = 0, long_help = EXPORT_THREADS_HELP)]
    pub threads: usize,
    #[command(flatten)]
    pub input: InputArgs,
}

/// `export --threads`, in full.
const EXPORT_THREADS_HELP: &str = "\
Threads reading (0, the default: one per core; 1: one thread). The output files are \
the same, byte for byte, whatever the number.

One sstable is cut at its index's entries into units of whole partitions; each thread \
collects the rows of units, and they are written in order, in batches cut as on one \
thread, by one writer. With --merge, the merged scan is cut at tokens common to all \
the sstables, placed in each through its index; each thread merges one token range at \
a time.

Read on one thread: a partition larger than a unit, pre-3.0 sstables (ka, la), \
sstables without an index to cut by (with --merge: when any of them has none), and \
reads too small to cut. Where an index disagrees with Data.db, the read goes on from \
there on one thread, and meets the damage as one thread does.";
