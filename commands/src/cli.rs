//! The command-line interface, defined once.
//!
//! The binary, the man-page and completion generator and the tests all use
//! [`Cli::command`], so help text, man pages and completions cannot drift
//! apart (a test renders the man pages and compares them with `man/`).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

mod values;
pub use values::{parse_chunk_length, parse_duration, parse_now, parse_size};
mod export;
pub use export::{ExportArgs, ExportCompression, ExportFormat};
mod writing;

pub use writing::{CompactArgs, RewriteArgs, SplitArgs, WriteArgs, WriteFrom, WriterArgs};

const INPUTS: &str = "\
SSTABLE arguments: a path to any component of an sstable (nb-1-big-Data.db, \
...-TOC.txt, ...-Index.db) stands for that sstable; a directory stands for every \
sealed sstable in it (those with a TOC.txt), in generation order. Both naming \
schemes are recognised: <ver>-<gen>-<format>-<Component> (numeric or UUID-based \
generations) and the legacy <ks>-<table>-<ver>-<gen>-<Component>.";

/// sstkit: read Apache Cassandra and ScyllaDB SSTables offline.
#[derive(Debug, Parser)]
#[command(
    name = "sstkit",
    version,
    about = "Read Apache Cassandra and ScyllaDB SSTables offline: dump, read, validate, scrub",
    long_about = "sstkit opens Apache Cassandra and ScyllaDB SSTables offline - no JVM, no running \
database. It dumps their data and every metadata component as JSON, NDJSON or text tables, \
reads single partitions through the index, and validates and salvages damaged sstables.\n\n\
Output goes to stdout; diagnostics and errors go to stderr, so stdout stays clean for pipelines.",
    long_version = crate::help::long_version(),
    after_long_help = crate::help::main_after_help(),
    mut_subcommands = crate::help::decorate,
    propagate_version = true
)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
    /// Colour text output: auto (at a terminal, unless NO_COLOR is set), always, never
    #[arg(
        long,
        global = true,
        value_enum,
        value_name = "WHEN",
        default_value = "auto"
    )]
    pub color: ColorWhen,
    /// Endpoint of an S3-compatible store for s3:// paths (e.g. http://127.0.0.1:9000; default: AWS_ENDPOINT_URL, else AWS)
    #[arg(long, global = true, value_name = "URL")]
    pub s3_endpoint: Option<String>,
}

/// `--color` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorWhen {
    /// Colour when the output is a terminal and NO_COLOR is unset or empty
    Auto,
    /// Always colour (also in pipes, and despite NO_COLOR)
    Always,
    /// Never colour
    Never,
}

/// Every command.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Dump the partitions of Data.db (JSON, NDJSON, sstabledump-compatible JSON, or text)
    #[command(
        long_about = "Dump the partitions of Data.db as a stream: every partition with its key, \
deletion, static row, rows, cells and range tombstones.\n\n\
--output json writes the `scylla sstable dump-data` schema, ndjson one partition per \
line in the same schema, sstabledump (and sstabledump-lines) byte-for-byte what Cassandra's \
sstabledump (and sstabledump -l) prints, text one row per line like sstabledump -d, cql the live CQL rows one \
JSON object per line as SELECT JSON * prints them (what is live at --now). Without \
--output: json when stdout is a file or pipe, text when it is a terminal (a readable page, not \
one long line of JSON). Writing to a file or pipe, a progress bar is shown on stderr when it is \
a terminal.\n\n\
Single keys (--key, --key-hex, --keys-file) are located through the bloom filter, Summary.db and \
Index.db, not by scanning."
    )]
    DumpData(DumpDataArgs),
    /// Read one partition, or a clustering range of it, located through the index
    #[command(
        long_about = "Read one partition, or a clustering range of it, the way the database does: \
bloom filter (a 'no' ends the lookup without touching Data.db), Summary.db, the Index.db page \
between two summary entries, the partition's promoted index binary-searched for the bounds, \
then only the Data.db range that can hold the answer. --io-stats shows what that cost.\n\n\
Clustering bounds are typed values (prefixes allowed; several columns as a:b, a CQL tuple \
(1, 'a') or quoted components; a printed clustering reads back as is): --from/--to are \
inclusive, --after/--before exclusive. They are values, as in CQL's WHERE (ck, ck2) >= (5, 'a'), \
whatever the clustering order; over columns of both orders (ck ASC, ck2 DESC) a range is read \
as several slices, as Cassandra reads it. The static row and the partition deletion are always \
included; range tombstones are clipped to each slice."
    )]
    Read(ReadArgs),
    /// Summary of each sstable: version, sizes, compression, counts, time ranges, keys, schema
    #[command(
        long_about = "Summary of each sstable: format version, partitioner, size of each component, \
compression and ratio, estimated partitions, min/max timestamps, local deletion times and TTLs, \
first and last partition key with their tokens, and the schema from the serialization header.\n\n\
Reads TOC.txt, Statistics.db, CompressionInfo.db (if compressed), Summary.db (first/last key for \
versions without them in Statistics.db) and the sizes of every component. Defaults to --output text."
    )]
    Info(InfoArgs),
    /// Compute the token of a partition key
    #[command(
        long_about = "Compute the token of partition keys, given in CQL literal form or in hex \
with --hex. Composite keys are written a:b (\\: escapes a colon; a timestamp, time or IPv6 \
component needs no escaping when only one split fits the types), with quoted components \
('a:b':5), or as a CQL tuple (1, 'a'). Negative numbers are keys, not flags (token --type int -5). The key type comes from the \
sstable's serialization header, or from --type (a CQL type such as int, or a Cassandra marshal \
type string). The partitioner comes from the sstable's Statistics.db, or --partitioner \
(murmur3 by default when no sstable is given)."
    )]
    Token(TokenArgs),
    /// Check everything: structure, chunk checksums, digest, components
    #[command(
        long_about = "Check everything about an sstable, with one report and one exit code:\n\n\
* components: every component TOC.txt lists exists (missing_component); a component file the \
TOC does not list is a note (unlisted_component);\n\
* chunk checksums and digest: the validate-checksums pass (every compressed chunk's checksum, or \
CRC.db's for an uncompressed Data.db, and the whole-file Digest);\n\
* structure: partition order (Data.db and Index.db), clustering order, range tombstone pairing, \
row and marker sizes, deletion times, each Index.db entry and its promoted index against the \
data, Summary.db against Index.db, Statistics.db first/last key and counts against the data and \
its checksums, every partition key against Filter.db.\n\n\
--skip-checksums is the fast structural pass (no chunk checksums, no digest). Pre-3.0 sstables \
(jb, ka, la, lb) without --schema: the checks that need no schema run (components, checksums, \
digest, Statistics.db, Index.db order, Summary.db, Filter.db against the Index.db keys) and the \
report lists the skipped ones with why (\"skipped\"; on stderr with -o text).\n\n\
Findings have the shape validate-checksums and scrub use: class, severity, component, offset, \
chunk, partition_key, message. Exits 1 when a finding is an error (warnings such as \
missing_digest and notes do not count).\n\nWith --threads other than 1 (default: one per core), Data.db is cut at the index's entries into units of whole partitions, each decoded and checked on a thread, and the checksum pass is cut at chunk boundaries; the report, its findings and their order are those of one thread. Pre-3.0 sstables, sstables without an index and a single partition are checked on one thread."
    )]
    Validate(ValidateArgs),
    /// Check every chunk checksum and the whole-file digest of Data.db
    #[command(
        long_about = "Check every checksum of Data.db in one sequential pass: the CRC32 (Adler-32 \
for jb to lb) of each compressed chunk, or of each CRC.db chunk (Adler-32 for ka to lb) for an \
uncompressed Data.db, and the \
whole-file Digest (Digest.crc32, Digest.adler32, Digest.sha1 including the pre-2.1 SHA-1 form).\n\n\
Checking goes on past failures: every bad chunk is reported with its index, its byte range in \
Data.db, its uncompressed range and the partitions that overlap it (read from Index.db when it is \
intact). Truncated files, chunk offsets past the end of Data.db and undecodable CompressionInfo.db, \
CRC.db or Digest files are reported as findings too.\n\n\
--output json (default) writes the `scylla sstable validate-checksums` shape (has_checksums, \
has_digest, valid) extended with chunks, bytes and findings; ndjson one line per finding and a \
summary line per sstable; text a table. Exits 1 when any sstable is invalid.\n\n\
A Data.db of 4 MiB or more is cut at chunk boundaries into parts of 2 MiB or more, checked on one thread \
each (--threads, default one per core); the findings and the report are the same as on one \
thread, in the same order."
    )]
    ValidateChecksums(ValidateChecksumsArgs),
    /// Scan Data.db from its first byte: validate, or salvage what is intact around corruption
    #[command(
        long_about = "Scan Data.db from its first byte, check every partition, and on corruption \
resynchronise at the next partition: through Index.db or Partitions.db when it is intact (as \
Cassandra's scrub does), otherwise by scanning for a partition start that follows an \
end-of-partition marker, has a key of the table's key type sorting after the last partition, \
passes the bloom filter and decodes to its end. Chunk checksums (compressed chunks, CRC.db) \
are checked: a partition over a chunk that failed its checksum is never salvaged. A compressed \
Data.db whose CompressionInfo.db is missing or does not decode is never read as raw bytes: \
CompressionInfo.db is rebuilt by walking Data.db's chunks and their checksums (see \
--chunk-length), a finding says so, and scrub goes on as with the real one. The work is \
bounded by a small constant times one pass over the file.\n\nWith --mode validate and --threads \
other than 1 (default: one per core), Data.db is cut at the index's positions into units of \
whole partitions, each decoded and checked on a thread; the report, its findings and their \
order are those of one thread (a unit after damage is read again on one thread). Modes abort, \
skip and segregate read on one thread whatever --threads says; so do pre-3.0 sstables, \
sstables without an index, and those whose serialization header cannot be trusted."
    )]
    Scrub(ScrubArgs),
    /// Write sstables again: filter partitions, change version, compression, index block size
    #[command(
        long_about = "Read each sstable and write its partitions to a new sstable in --output-dir: \
Data.db, Index.db with promoted indexes and Summary.db (BIG) or Partitions.db and Rows.db (BTI da), \
Statistics.db, CompressionInfo.db (or CRC.db), Digest.crc32, Filter.db and TOC.txt, under \
temporary names renamed into place once complete (TOC.txt last); any error removes every file \
written. The input directory is never written to.\n\n\
Filters (--key, --key-hex, --keys-file, --exclude-key, --token-range) drop partitions, e.g. a \
poisoned or oversized one. --format-version writes another row-format version: BIG ma..oa or \
BTI da, either way; --compression, --chunk-length and --column-index-size change how Data.db and \
the row index are laid out. Without them the source's version and compression are kept and \
row-index blocks are 64 KiB (BIG) or 16 KiB (BTI), Cassandra's defaults. Rows are written as \
Cassandra writes them, with the source's serialization header: a rewrite with the settings \
Cassandra used gives its Data.db and index files byte for byte.\n\n\
Statistics.db is recomputed from the data (timestamps, deletion times, TTLs, histograms, \
clustering bounds, key range, row and column counts, cardinality); repaired-at, pending repair, \
level, originating host and commit log intervals are kept from the source.\n\n\
Prints what it wrote per sstable (paths, partitions read and written, bytes); a progress bar \
on stderr when it is a terminal."
    )]
    Rewrite(RewriteArgs),
    /// Split an sstable into several: by size, or by token ranges
    #[command(
        long_about = "Split each sstable into several new ones in --output-dir, written like \
`rewrite` writes (same version and compression unless told otherwise).\n\n\
--max-size N: a new sstable starts once the current one's Data.db holds N bytes on disk \
(checked between partitions: a partition is never cut, and one larger than N gets an sstable \
of its own). --token-ranges FILE: one sstable per line START,END of FILE, holding the \
partitions whose token is in (START, END] (Cassandra's convention; a range with START >= END \
wraps); partitions in no range are left out and counted, a partition in several ranges goes \
to the first."
    )]
    Split(SplitArgs),
    /// Compact sstables of one table into one: merge, expire TTLs, purge old tombstones
    #[command(
        long_about = "Read the sstables as one table (as --merge reads them: partitions in token \
order, each reconciled the way a read reconciles it) and write the result to one new sstable in \
--output-dir, written like `rewrite` writes (the first input's version and compression unless \
told otherwise).\n\n\
As a node's compaction does, expired TTL cells become tombstones (their local deletion time is \
the cell's creation time, as Cassandra's AbstractCell.purge writes it). With --purge, \
tombstones whose local deletion time is older than --now minus --gc-grace are dropped (cell, \
row, collection, range and partition tombstones, expired row markers), and so are rows and \
partitions left empty. Every input is in the compaction and nothing else is known, so a \
tombstone is purged by its age alone: compact every sstable of the table (or of its token \
range) together, or a purged tombstone may let older data in a left-out sstable reappear.\n\n\
--max-size N starts a new output sstable between partitions once the current Data.db holds N \
bytes on disk. The output's repaired-at is the inputs' minimum, pending repair and transient \
are kept when every input agrees, the level is 0 and commit log intervals are those of every \
input. Prints \
what it wrote; a progress bar on stderr when it is a terminal."
    )]
    Compact(CompactArgs),
    /// Write an sstable from dump-data NDJSON records and the table's schema
    #[command(
        long_about = "Write one sstable in --output-dir from --from FILE (`-`: stdin), sstkit's own \
`dump-data -o ndjson` records (one partition a line, docs/schemas/dump-data.schema.json), so \
`sstkit dump-data -o ndjson SSTABLE | sstkit write --from - --like SSTABLE --output-dir DIR` round \
trips. The table's types come from --schema (CREATE TYPE and CREATE TABLE statements) or from \
the serialization header of an sstable of the table (--like, which also gives the partitioner, \
version and compression unless flags say otherwise). Keys and clusterings are read from their \
raw hex, cell values as their type's literal, timestamps, TTLs, expiry and deletion times as \
printed.\n\n\
Partitions must come in token order, as dump-data prints them: a partition out of order is \
refused with its line number and nothing is written (sort the input first). Counter cells are \
refused. Stdin is first copied to a temporary file in --output-dir (the filter is sized from the \
number of partitions), removed at the end.\n\n\
Prints what it wrote (paths, partitions, rows, bytes); a progress bar on stderr when it is a \
terminal."
    )]
    Write(WriteArgs),
    /// Export the live CQL rows to Parquet, Arrow IPC or CSV
    #[command(
        long_about = "Export the CQL row view of the sstables (the rows SELECT * returns at --now: \
partition key, clustering and regular columns as columns) to Parquet, Arrow IPC or CSV, for \
DuckDB, Polars, Spark or Trino.\n\n\
Without --merge each sstable's rows are written as they are in it (not reconciled with the \
other sstables; a note on stderr says so when there are several). CQL types map to Arrow types \
without loss (docs/arrow-types.md); decimal and varint columns are text unless --decimals says \
otherwise. Rows are written in batches; memory is bounded by one row group. A file output is \
written under a temporary name and renamed at the end (a device or pipe is written as it \
is): a failed export leaves no file, and \
the temporary file of a killed one is removed by the next export of the same name."
    )]
    Export(ExportArgs),
    /// Partition sizes, rows, cells, tombstones and TTLs: find large and tombstone-heavy partitions
    #[command(
        long_about = "The sstablepartitions of sstkit: every partition's key (typed and hex), \
whether it is live (no partition deletion), its offset in Data.db, its size uncompressed and on \
disk, its rows and cells, its tombstones by kind (partition, row, range, complex, cell), its TTL'd \
rows and cells and those already expired at --now, and its min/max write timestamp.\n\n\
Thresholds list only partitions reaching one of them (--min-size, --min-rows, --min-cells, \
--min-tombstones; any one is enough, as in sstablepartitions); --top N keeps the N largest by \
--by. Without a threshold or --top, json, ndjson and csv list every partition in token order; \
text lists the 20 largest by --by, largest first, after a summary per sstable and per table \
whose headers count the partitions and those listed.\n\n\
Percentiles (p50 to p999 of size, rows, cells and tombstones, per sstable and per table, with \
min, max and count) are exact in text and json: the nearest-rank value among every partition \
summarised, so never above the max. Each distinct value is counted; past 262,144 distinct \
values of one metric they are kept to 11 significant bits (within 0.1%), json says \
\"exact\": false and text marks them ~. json's \"estimated\" holds the figures \
sstablepartitions prints (Cassandra's EstimatedHistogram bucket bounds), for comparison; the \
csv output, sstablepartitions --csv's columns, has the partitions only.\n\n\
Tombstones are counted as sstablepartitions counts them: row, range (each marker), complex and \
cell tombstones plus expired TTL'd rows and cells; the partition deletion makes the partition \
not live and is shown apart. Rows and cells are those of clustered rows (not the static row).\n\n\
--partitions-only reads sizes from the index (Index.db positions, or the BTI trie) without \
decoding Data.db: only partition headers not described by the index are read (--io-stats shows \
the reads). --output csv writes the columns of sstablepartitions --csv, in its order."
    )]
    Partitions(PartitionsArgs),
    /// Sstables that keep fully expired sstables of their table from being dropped
    #[command(
        long_about = "The sstableexpiredblockers of sstkit. Compaction drops an sstable whose \
every cell and tombstone is past gc_grace (its max local deletion time before --now minus \
--gc-grace) - unless another sstable of the same table has data at least as old as its newest \
timestamp and is not itself expired: that one blocks it. For each table in the input, every \
blocker is listed with its min/max timestamps and max local deletion time, and the expired \
sstables it blocks.\n\n\
Reads Statistics.db only. Sstables of different tables (by their keyspace/table-id/ folders, \
or their directory) are never compared."
    )]
    ExpiredBlockers(ExpiredBlockersArgs),
    /// Write-time histogram of cells and tombstones, by hour, day or month
    #[command(
        long_about = "A histogram of write timestamps (Scylla's writetime-histogram.lua): every \
cell and every tombstone (partition, row, range, complex, cell) of Data.db counted in the \
--bucket (hour, day or month, UTC) its timestamp falls in, one histogram per table. Text draws \
bars fitted to the terminal; json, ndjson and csv give the counts."
    )]
    Timestamps(TimestampsArgs),
    /// List the components named by TOC.txt, with their sizes
    DumpToc(SstArgs),
    /// Decode Statistics.db: validation, compaction, stats and serialization header
    #[command(
        long_about = "Decode Statistics.db: its table of contents and all four components \
(validation, compaction, stats, serialization header), every field of the sstable's version. \
The JSON shape follows `scylla sstable dump-statistics`, with extra fields for Cassandra 4.0+ \
versions.\n\n\
Text (the default at a terminal; json otherwise) shows the fields for people: times as dates, \
the partition size and cell count histograms as percentiles (computed as sstablepartitions and \
sstablemetadata do), the tombstone drop times summarised, the columns of the serialization \
header; --histograms draws the histograms as bars."
    )]
    DumpStatistics(DumpStatisticsArgs),
    /// Decode Summary.db: header, sampled index entries, first and last key
    DumpSummary(SstArgs),
    /// Decode Index.db: every partition entry, optionally with its promoted index blocks
    #[command(
        long_about = "Decode Index.db: every partition entry (key, Data.db position) and, for \
partitions with a promoted index, its header length, partition deletion and block count. With \
--promoted-index every IndexInfo block is listed too: first and last clustering (decoded with the \
serialization header's clustering types), offset, width and open range tombstone marker."
    )]
    DumpIndex(DumpIndexArgs),
    /// Dump the trie indexes of BTI sstables: Partitions.db, and Rows.db with --rows
    #[command(
        long_about = "Dump the trie indexes of BTI-format sstables (Cassandra 5.0 `da`, ScyllaDB \
`ms`/`mt`), which no other tool prints.\n\n\
Partitions.db: the footer (root node, key count, first and last key) and every partition entry \
in key order: the byte-comparable key prefix the trie stores, the filter hash byte, and where it \
points - the partition's offset in Data.db, or its entry in Rows.db - with the key read back \
from there. With --rows, every row index of Rows.db: the partition's key, Data.db position, \
deletion and block count, then each block's separator (hex), offset from the partition start \
and open range tombstone; the last entry points at the end-of-partition byte.\n\n\
--output json (default) writes one object per sstable, ndjson one line per entry (with a \
\"type\": footer, partition, rows), text tables. BIG-format sstables have no tries: exit 3."
    )]
    DumpTrie(DumpTrieArgs),
    /// Decode CompressionInfo.db: compressor, options, chunk length and chunk offsets
    DumpCompressionInfo(SstArgs),
    /// Decode Filter.db (bloom filter); with --key, test whether a key may be present
    DumpFilter(DumpFilterArgs),
    /// Decode Scylla.db (ScyllaDB metadata): sharding, features, origin, version, schema, ...
    DumpScyllaMetadata(SstArgs),
    /// Print the table as a CQL CREATE TABLE rebuilt from the serialization header
    #[command(
        long_about = "Print the table as CQL (CREATE TYPE for user types, then CREATE TABLE), \
rebuilt from the sstable's own serialization header. Key column names are not stored in \
Statistics.db: they are taken from Scylla.db when present, otherwise generated (pk0, pk1, ... \
for the partition key and ck0, ck1, ... for clustering columns). Defaults to --output text.\n\n\
--keyspace and --table name the keyspace and table of the statements (they do not filter); \
to keep only the sstables of a keyspace or table of a data directory, use --only-keyspace \
and --only-table."
    )]
    DumpSchema(DumpSchemaArgs),
    /// Generate man pages or shell completions (for packaging)
    #[command(hide = true)]
    Generate(GenerateArgs),
}

const NOW_HELP: &str = "\
The time at which TTLs are judged: what has expired by then is dead (--output cql leaves it \
out) and sstabledump's \"expired\" flags say true. Seconds since the epoch (1700000000) or a \
timestamp (2023-11-14T22:13:20Z, 2023-11-14 22:13:20+0100; UTC when no zone is given). \
Default: the current time. Give the time of an earlier query to compare with its results.";

const EXPLAIN_HELP: &str = "\
With --merge: instead of the data, the provenance of the merged result. For every partition \
deletion, range tombstone bound, row, row marker, row deletion, collection deletion and cell: the \
sstable its winning version came from, and the versions it shadowed, each with its sstable and \
what shadowed it (a newer timestamp; Cassandra's tie-break rule for equal timestamps; a cell, \
row, collection, range or partition deletion; expiry at --now). A row is absent when it holds \
no live marker and no live cell. Items come in clustering order, also with --reverse (--limit \
then counts the first rows). --output text (one line per item) or ndjson/json (one JSON \
object per item, docs/schemas/explain.schema.json); other formats are refused.";
/// `dump-data --threads`, in full.
const DUMP_THREADS_HELP: &str = "\
Threads reading (0: one per core; 1: one thread, which reads as it always has). \
The output is the same, byte for byte, whatever the number.

One sstable is cut at its index's entries into units of whole partitions (a large \
partition into parts at its row-index blocks); each thread renders units, and the \
pieces are written in order. With --merge, the merged scan is cut at tokens common \
to all the sstables, placed in each through its index; each thread merges one token \
range at a time.

Read on one thread: --reverse, key lookups (--key, --key-hex, --keys-file), \
--explain, pre-3.0 sstables (ka, la) with --merge or with a CQL schema, sstables \
without an index to cut by (with --merge: when any of them has none), and reads too \
small to cut. Where an index disagrees with Data.db, the read goes on from there on \
one thread, and meets the damage as one thread does.";

/// `read --threads`, in full.
const READ_THREADS_HELP: &str = "\
Threads reading (0: one per core; 1: one thread, which reads as it always has). \
The output is the same, byte for byte, whatever the number.

The keys (--key, --key-hex, --keys-file) are cut into runs of consecutive keys; each \
thread looks a run's keys up with its own handles on the sstables (its own index \
cache) and renders them, and the runs are written in key order, with the notes on \
absent keys and the first error where one thread gives them. With --merge, each \
key's merge is done on a thread. A run whose output would be large (a large \
partition) is read on the calling thread, streaming.

Read on one thread: a single key (however large its partition), --io-stats (its \
counts are per lookup, with the cache one thread warms) and --explain.";

/// `dump-data` arguments.
#[derive(Debug, Clone, Args)]
pub struct DumpDataArgs {
    /// Output format (default: json; text when stdout is a terminal)
    #[arg(long, short = 'o', value_enum)]
    pub output: Option<DataOutputFormat>,
    #[command(flatten)]
    pub select: KeySelectArgs,
    /// Stop after N partitions (per sstable)
    #[arg(long, value_name = "N")]
    pub limit: Option<u64>,
    /// List partition keys only (like sstabledump -e)
    #[arg(long, conflicts_with = "tombstones_only")]
    pub keys_only: bool,
    /// Keep only deletions: partition, row, range and cell tombstones (like sstabledump -o)
    #[arg(long)]
    pub tombstones_only: bool,
    /// Print timestamps as raw numbers (like sstabledump -t)
    #[arg(long)]
    pub raw_timestamps: bool,
    /// Time for TTL expiry and the `expired` flags: seconds since the epoch or a timestamp (default: now)
    #[arg(long, value_name = "TIME", long_help = NOW_HELP, allow_hyphen_values = true, value_parser = parse_now)]
    pub now: Option<i64>,
    /// Rows and range tombstones in reverse clustering order (bounded memory)
    #[arg(long)]
    pub reverse: bool,
    /// Threads reading each sstable (0: one per core; 1: one thread); the output is the same whatever the number
    #[arg(long, short = 'j', value_name = "N", default_value_t = 0, long_help = DUMP_THREADS_HELP)]
    pub threads: usize,
    /// Read the sstables as one table: partitions and rows reconciled as Cassandra does
    #[arg(long)]
    pub merge: bool,
    /// With --merge: say where each winning cell, marker and tombstone came from and what it shadowed
    #[arg(long, requires = "merge", conflicts_with_all = ["keys_only", "tombstones_only"], long_help = EXPLAIN_HELP)]
    pub explain: bool,
    /// `read`'s clustering bounds, given to `dump-data` by mistake: hidden,
    /// they are refused with a pointer to `read` (clap's own error would
    /// suggest `-- --from`, which is wrong advice here).
    #[arg(
        long = "from",
        value_name = "CK",
        hide = true,
        allow_hyphen_values = true
    )]
    pub slice_from: Option<String>,
    #[arg(
        long = "to",
        value_name = "CK",
        hide = true,
        allow_hyphen_values = true
    )]
    pub slice_to: Option<String>,
    #[arg(
        long = "after",
        value_name = "CK",
        hide = true,
        allow_hyphen_values = true
    )]
    pub slice_after: Option<String>,
    #[arg(
        long = "before",
        value_name = "CK",
        hide = true,
        allow_hyphen_values = true
    )]
    pub slice_before: Option<String>,
    #[command(flatten)]
    pub input: InputArgs,
}

impl DumpDataArgs {
    /// The first clustering-bound flag given (`read`'s, not this command's).
    pub fn slice_flag(&self) -> Option<&'static str> {
        [
            ("--from", &self.slice_from),
            ("--to", &self.slice_to),
            ("--after", &self.slice_after),
            ("--before", &self.slice_before),
        ]
        .into_iter()
        .find(|(_, v)| v.is_some())
        .map(|(f, _)| f)
    }

    /// The output format: `--output`, else text when stdout is a terminal
    /// (a person reads it) and json otherwise (a program does).
    pub fn format(&self) -> DataOutputFormat {
        text_at_terminal(self.output, DataOutputFormat::Text, DataOutputFormat::Json)
    }
}

/// The partition selection flags of `dump-data` and `rewrite`.
#[derive(Debug, Clone, Default, Args)]
pub struct KeySelectArgs {
    /// Only this partition key (CQL literal form, composite as a:b); repeatable
    #[arg(long, short = 'k', value_name = "KEY", allow_hyphen_values = true)]
    pub key: Vec<String>,
    /// Only this partition key, as hex of its serialized bytes; repeatable
    #[arg(long, value_name = "HEX")]
    pub key_hex: Vec<String>,
    /// Only the keys listed in FILE, one per line (CQL literal form; `0x` prefix for hex)
    #[arg(long, value_name = "FILE")]
    pub keys_file: Option<PathBuf>,
    /// Skip this partition key (CQL literal form); repeatable
    #[arg(long, short = 'x', value_name = "KEY", allow_hyphen_values = true)]
    pub exclude_key: Vec<String>,
    /// Only partitions whose token is in (START, END] (Cassandra's token range convention)
    #[arg(long, value_name = "START,END", allow_hyphen_values = true)]
    pub token_range: Option<String>,
}

/// `read` arguments: a single-partition bounded read.
#[derive(Debug, Clone, Args)]
pub struct ReadArgs {
    /// Partition key (CQL literal form, composite as a:b); repeatable
    #[arg(long, short = 'k', value_name = "KEY", allow_hyphen_values = true)]
    pub key: Vec<String>,
    /// Partition key as hex of its serialized bytes; repeatable
    #[arg(long, value_name = "HEX")]
    pub key_hex: Vec<String>,
    /// Keys to look up, one per line (CQL literal form; `0x` prefix for hex)
    #[arg(long, value_name = "FILE")]
    pub keys_file: Option<PathBuf>,
    /// Lower clustering bound, inclusive (prefix allowed; composite as a:b)
    #[arg(
        long,
        value_name = "CK",
        conflicts_with = "after",
        allow_hyphen_values = true
    )]
    pub from: Option<String>,
    /// Lower clustering bound, exclusive
    #[arg(long, value_name = "CK", allow_hyphen_values = true)]
    pub after: Option<String>,
    /// Upper clustering bound, inclusive
    #[arg(
        long,
        value_name = "CK",
        conflicts_with = "before",
        allow_hyphen_values = true
    )]
    pub to: Option<String>,
    /// Upper clustering bound, exclusive
    #[arg(long, value_name = "CK", allow_hyphen_values = true)]
    pub before: Option<String>,
    /// Take the clustering bounds in the table's clustering order, as stored (DESC columns descending), not as values
    #[arg(long)]
    pub clustering_order: bool,
    /// At most N rows per partition (with --reverse: the last N of the range)
    #[arg(long, value_name = "N")]
    pub limit: Option<u64>,
    /// Only these regular/static columns (comma-separated)
    #[arg(long, value_name = "C1,C2", value_delimiter = ',')]
    pub columns: Vec<String>,
    /// Rows in reverse clustering order
    #[arg(long)]
    pub reverse: bool,
    /// Read the sstables as one table: the partition reconciled as Cassandra does
    #[arg(long)]
    pub merge: bool,
    /// With --merge: say where each winning cell, marker and tombstone came from and what it shadowed
    #[arg(long, requires = "merge", long_help = EXPLAIN_HELP)]
    pub explain: bool,
    /// Output format
    #[arg(long, short = 'o', value_enum, default_value = "json")]
    pub output: DataOutputFormat,
    /// Print timestamps as raw numbers (sstabledump output)
    #[arg(long)]
    pub raw_timestamps: bool,
    /// Time for TTL expiry and the `expired` flags: seconds since the epoch or a timestamp (default: now)
    #[arg(long, value_name = "TIME", long_help = NOW_HELP, allow_hyphen_values = true, value_parser = parse_now)]
    pub now: Option<i64>,
    /// Threads looking the keys up (0: one per core; 1: one thread); the output is the same whatever the number
    #[arg(long, short = 'j', value_name = "N", default_value_t = 0, long_help = READ_THREADS_HELP)]
    pub threads: usize,
    /// Benchmark baseline: ignore the promoted index and scan the partition
    /// from its start (scan reads, with read-ahead)
    #[arg(long, hide = true, conflicts_with = "reverse")]
    pub naive: bool,
    #[command(flatten)]
    pub input: InputArgs,
}

/// `validate` arguments.
#[derive(Debug, Clone, Args)]
pub struct ValidateArgs {
    #[command(flatten)]
    pub sst: SstArgs,
    /// Skip the chunk checksums and the digest: the fast structural pass
    #[arg(long)]
    pub skip_checksums: bool,
    /// Threads checking each sstable (0: one per core; 1: one thread); the report is the same whatever the number
    #[arg(long, short = 'j', value_name = "N", default_value_t = 0)]
    pub threads: usize,
}

/// `scrub` arguments.
#[derive(Debug, Clone, Args)]
pub struct ScrubArgs {
    #[command(flatten)]
    pub sst: SstArgs,
    /// What to do on corruption
    #[arg(long, value_enum, default_value = "validate")]
    pub mode: ScrubMode,
    /// Write salvaged partitions here (sstables, or NDJSON with --salvage-format ndjson); never the input directory
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
    /// What --output-dir receives: sstables (loadable by Cassandra) or NDJSON in the dump-data schema
    #[arg(long, value_enum, value_name = "FORMAT", default_value = "sstable")]
    pub salvage_format: SalvageFormat,
    /// Chunk length of a compressed Data.db whose CompressionInfo.db is lost (power of two, up to 16MiB); default: what the chunks decompress to
    #[arg(long, value_name = "BYTES", value_parser = parse_chunk_length, long_help = CHUNK_LENGTH_HELP)]
    pub chunk_length: Option<u32>,
    /// Threads checking each sstable with --mode validate (0: one per core; 1: one thread); the report is the same whatever the number. The modes that write read on one thread
    #[arg(long, short = 'j', value_name = "N", default_value_t = 0)]
    pub threads: usize,
}

const CHUNK_LENGTH_HELP: &str = "\
Chunk length of a compressed Data.db whose CompressionInfo.db is missing or does not decode \
(the table's chunk_length_in_kb, in bytes: 16KiB, 64KiB...).

Scrub then rebuilds CompressionInfo.db by walking Data.db: each compressed chunk is followed by \
the checksum of its bytes, and its compressor (LZ4, Snappy, Deflate or Zstd) is the one that \
decompresses the first chunk. Without this option the chunk length is what every full chunk \
decompresses to (with a single chunk: 16KiB from na, 64KiB before). With it, a chunk that \
decompresses to another length is an error. Ignored when CompressionInfo.db is readable.";

/// `scrub --salvage-format` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SalvageFormat {
    /// New sstables: salvaged partitions in order in one (skip sorts out-of-order ones back in), segregated and damaged ones in their own
    Sstable,
    /// NDJSON files in the dump-data schema, plus a list of what was lost
    Ndjson,
}

/// `scrub --mode` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScrubMode {
    /// Report every problem and exit
    Validate,
    /// Stop at the first problem
    Abort,
    /// Skip damaged data, resynchronise at the next decodable partition, report what was lost
    Skip,
    /// Like skip; out-of-order partitions, and those over a chunk whose checksum failed, go to separate outputs
    Segregate,
}

/// `dump-data` output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DataOutputFormat {
    /// One JSON document in the `scylla sstable dump-data` schema
    Json,
    /// One partition per line, same schema, plus the sstable path
    Ndjson,
    /// Exactly what Cassandra's sstabledump prints
    Sstabledump,
    /// Exactly what Cassandra's sstabledump -l prints (one partition per line)
    SstabledumpLines,
    /// One row per line, like sstabledump -d
    Text,
    /// The live CQL rows, one JSON object per line, as SELECT JSON * prints them
    Cql,
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// One JSON document: {"sstables": {"<path>": ...}}
    Json,
    /// One JSON record per line, each carrying its sstable path
    Ndjson,
    /// Human-readable tables
    Text,
}

/// What every command that reads sstables takes: the sstables, how they are
/// read, and `--schema` for those that store none. Defined once, flattened
/// into each command's arguments, and resolved by [`crate::plan::inputs::Inputs::resolve`].
#[derive(Debug, Clone, Args)]
pub struct InputArgs {
    /// Sstables: a path to any component, or a directory (a data directory with --recursive)
    #[arg(value_name = "SSTABLE", required = true, long_help = INPUTS)]
    pub sstables: Vec<PathBuf>,
    /// Print IO counters per sstable to stderr: a table, or JSON lines with --io-stats=json
    #[arg(long, value_name = "FORMAT", num_args = 0..=1, require_equals = true, default_missing_value = "table")]
    pub io_stats: Option<IoStatsFormat>,
    /// CQL file with the table's CREATE TABLE: the schema of pre-3.0 (jb, ka, la, lb) sstables, which store none
    #[arg(long, value_name = "FILE", long_help = SCHEMA_HELP)]
    pub schema: Option<PathBuf>,
    #[command(flatten)]
    pub io: IoArgs,
    #[command(flatten)]
    pub walk: WalkArgs,
}

/// Long help of `--schema`: the details are in `sstkit --help` once, not in every command's.
const SCHEMA_HELP: &str = "CQL file with the table's CREATE TABLE: the schema of pre-3.0 (jb, \
ka, la, lb) sstables, which store none; for later ones, scrub takes from it the types of a \
damaged header, other commands ignore it. Details: sstkit --help, or man sstkit.";

/// IO layer settings, shared by every command that reads sstables.
#[derive(Debug, Clone, Args)]
pub struct IoArgs {
    /// How files are read: pread (default), mmap, or direct (O_DIRECT, aligned buffers)
    #[arg(long, value_enum, default_value = "pread", help_heading = "IO")]
    pub io_mode: IoModeArg,
    /// Read unit: reads are aligned to and sized in multiples of it (512 B .. 1 MiB, power of two) [default: 4KiB; object storage: 1MiB unless --max-io is given]
    #[arg(long, value_name = "BYTES", value_parser = parse_size, help_heading = "IO")]
    pub io_unit: Option<u64>,
    /// Largest single read after coalescing adjacent units [default: 128KiB; object storage: 8MiB unless --io-unit is given]
    #[arg(long, value_name = "BYTES", value_parser = parse_size, help_heading = "IO")]
    pub max_io: Option<u64>,
    /// Read-ahead for sequential scans (bounded reads never use it) [default: 1MiB; object storage: 8MiB]
    #[arg(long, value_name = "BYTES", value_parser = parse_size, help_heading = "IO")]
    pub read_ahead: Option<u64>,
    /// Size of the index page cache (Index.db pages and parsed promoted-index blocks)
    #[arg(long, value_name = "BYTES", default_value = "8MiB", value_parser = parse_size, help_heading = "IO")]
    pub index_cache_size: u64,
    /// Bypass the index page cache
    #[arg(long, help_heading = "IO", conflicts_with = "index_cache_size")]
    pub no_index_cache: bool,
}

/// `--io-mode` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum IoModeArg {
    /// Positioned reads (pread)
    Pread,
    /// Memory-mapped files
    Mmap,
    /// O_DIRECT reads with aligned buffers (bypasses the page cache)
    Direct,
}

/// How `--io-stats` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum IoStatsFormat {
    /// A table on stderr
    Table,
    /// One JSON object per sstable on stderr
    Json,
}

/// Arguments of commands that only take sstables.
#[derive(Debug, Clone, Args)]
pub struct SstArgs {
    /// Output format (default: text for info and dump-schema, and for dump-statistics, validate and scrub at a terminal; json otherwise)
    #[arg(long, short = 'o', value_enum)]
    pub output: Option<OutputFormat>,
    #[command(flatten)]
    pub input: InputArgs,
}

/// `info` arguments.
#[derive(Debug, Clone, Args)]
pub struct InfoArgs {
    #[command(flatten)]
    pub sst: SstArgs,
    /// gc_grace_seconds for the droppable-tombstone ratio: seconds, or 10d, 3h, 30m
    #[arg(long, value_name = "DURATION", default_value = "10d", value_parser = parse_duration)]
    pub gc_grace: i64,
    /// Judge droppable tombstones at this time: seconds since the epoch or a timestamp (default: now)
    #[arg(long, value_name = "TIME", long_help = NOW_HELP, allow_hyphen_values = true, value_parser = parse_now)]
    pub now: Option<i64>,
    /// Text: draw the partition size, cell count and tombstone drop time histograms as bars
    #[arg(long)]
    pub histograms: bool,
}

/// `dump-statistics` arguments.
#[derive(Debug, Clone, Args)]
pub struct DumpStatisticsArgs {
    #[command(flatten)]
    pub sst: SstArgs,
    /// Text: draw the partition size, cell count and tombstone drop time histograms as bars
    #[arg(long)]
    pub histograms: bool,
}

/// `validate-checksums` arguments.
#[derive(Debug, Clone, Args)]
pub struct ValidateChecksumsArgs {
    #[command(flatten)]
    pub sst: SstArgs,
    /// Threads checking Data.db (0: one per core; 1: one sequential pass)
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub threads: usize,
}

/// `dump-index` arguments.
#[derive(Debug, Clone, Args)]
pub struct DumpIndexArgs {
    #[command(flatten)]
    pub sst: SstArgs,
    /// List every promoted index block of each partition
    #[arg(long)]
    pub promoted_index: bool,
}

/// `dump-trie` arguments.
#[derive(Debug, Clone, Args)]
pub struct DumpTrieArgs {
    #[command(flatten)]
    pub sst: SstArgs,
    /// Also dump every row index of Rows.db (block separators, offsets, open markers)
    #[arg(long)]
    pub rows: bool,
}

/// `dump-filter` arguments.
#[derive(Debug, Clone, Args)]
pub struct DumpFilterArgs {
    #[command(flatten)]
    pub sst: SstArgs,
    /// Test whether this partition key (CQL literal form; composite as a:b) may be present
    #[arg(long, value_name = "KEY", allow_hyphen_values = true)]
    pub key: Vec<String>,
    /// Test whether this partition key, given as hex of its serialized bytes, may be present
    #[arg(long, value_name = "HEX")]
    pub key_hex: Vec<String>,
}

/// `dump-schema` arguments. Its --keyspace/--table name the CREATE
/// statements (as before the filters existed), so the filters are spelled
/// --only-keyspace/--only-table here.
#[derive(Debug, Clone, Args)]
#[command(
    mut_arg("only_keyspace", |a| a.long("only-keyspace")),
    mut_arg("only_table", |a| a.long("only-table"))
)]
pub struct DumpSchemaArgs {
    #[command(flatten)]
    pub sst: SstArgs,
    /// Keyspace name to use in the CREATE statements (default: from the path, or "ks")
    #[arg(long)]
    pub keyspace: Option<String>,
    /// Table name to use (default: from the path, or "tbl")
    #[arg(long)]
    pub table: Option<String>,
}

/// `token` arguments.
#[derive(Debug, Clone, Args)]
pub struct TokenArgs {
    /// Partition keys (CQL literal form, composite as a:b or (a, b)), or hex with --hex;
    /// negative numbers are keys too (`sstkit token --type int -5`); put a composite key
    /// that starts with `-` after `--`, or write it as a tuple `(-5, 'a')`
    #[arg(value_name = "KEY", required = true, allow_negative_numbers = true)]
    pub keys: Vec<String>,
    /// Take the key type and partitioner from this sstable
    #[arg(long, value_name = "SSTABLE")]
    pub sstable: Option<PathBuf>,
    /// Key type: a CQL type (int, text, frozen<list<int>>, ...) or a marshal type string;
    /// several comma-free types joined with ':' for composite keys (e.g. int:text)
    #[arg(long = "type", value_name = "TYPE")]
    pub key_type: Option<String>,
    /// Keys are hex of their serialized bytes
    #[arg(long)]
    pub hex: bool,
    /// Partitioner when no sstable is given
    #[arg(
        long,
        value_enum,
        default_value = "murmur3",
        conflicts_with = "sstable"
    )]
    pub partitioner: PartitionerArg,
    /// Output format (default: json)
    #[arg(long, short = 'o', value_enum)]
    pub output: Option<OutputFormat>,
}

/// Partitioner choice for `token`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PartitionerArg {
    /// Murmur3Partitioner
    Murmur3,
    /// RandomPartitioner (MD5)
    Random,
    /// ByteOrderedPartitioner (the key bytes)
    ByteOrdered,
}

/// `generate` arguments.
#[derive(Debug, Clone, Args)]
pub struct GenerateArgs {
    /// What to generate
    #[command(subcommand)]
    pub what: GenerateWhat,
}

/// What `generate` produces.
#[derive(Debug, Clone, Subcommand)]
pub enum GenerateWhat {
    /// Man pages (sstkit.1 and one per command) into DIR
    Man {
        /// Output directory
        dir: PathBuf,
    },
    /// Shell completions to stdout
    Completions {
        /// Shell
        shell: clap_complete::Shell,
    },
}

/// Data directory walking and the keyspace/table filters: every command that
/// takes SSTABLE arguments. (dump-schema spells the filters --only-keyspace
/// and --only-table: its --keyspace/--table name the CREATE statements.)
#[derive(Debug, Clone, Args)]
pub struct WalkArgs {
    /// Walk directories recursively (a data directory's keyspace/table-id/ tree)
    #[arg(long, short = 'r', help_heading = "Data directory")]
    pub recursive: bool,
    /// Include sstables in snapshots/ folders (with --recursive)
    #[arg(long, help_heading = "Data directory")]
    pub snapshots: bool,
    /// Include sstables in backups/ folders (with --recursive)
    #[arg(long, help_heading = "Data directory")]
    pub backups: bool,
    /// Only sstables of this keyspace (from the keyspace/table-id/ folders, or a legacy file name)
    #[arg(
        long = "keyspace",
        value_name = "NAME",
        help_heading = "Data directory",
        long_help = KEYSPACE_FILTER_HELP
    )]
    pub only_keyspace: Option<String>,
    /// Only sstables of this table (from the keyspace/table-id/ folders, or a legacy file name)
    #[arg(
        long = "table",
        value_name = "NAME",
        help_heading = "Data directory",
        long_help = TABLE_FILTER_HELP
    )]
    pub only_table: Option<String>,
}

const KEYSPACE_FILTER_HELP: &str = "Only sstables of this keyspace: the folder above the \
table's <table>-<id> folder, or the keyspace of a legacy file name (ks-cf-ka-1-Data.db). An \
sstable whose keyspace is unknown (no such folders) is left out.";

const TABLE_FILTER_HELP: &str = "Only sstables of this table: the <table>-<id> folder's name \
without its id, or the table of a legacy file name. An sstable whose table is unknown (no \
such folders) is left out.";

impl WalkArgs {
    /// The walk and filters these flags ask for.
    pub fn discovery(&self) -> sstkit_format::descriptor::Discovery {
        sstkit_format::descriptor::Discovery {
            recursive: self.recursive,
            snapshots: self.snapshots,
            backups: self.backups,
            keyspace: self.only_keyspace.clone(),
            table: self.only_table.clone(),
        }
    }
}

/// `partitions` output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PartitionsOutput {
    /// One JSON document: partitions, then per-sstable and per-table summaries
    Json,
    /// One JSON record per line, with a "type": partition, sstable, table
    Ndjson,
    /// Exactly the columns of sstablepartitions --csv (partitions only)
    Csv,
    /// Lines that fit the terminal, and summary tables
    Text,
}

/// What `partitions --top` ranks by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PartitionMetric {
    /// Uncompressed size
    Size,
    /// Rows
    Rows,
    /// Cells
    Cells,
    /// Tombstones (as sstablepartitions counts them)
    Tombstones,
}

/// `partitions` arguments.
#[derive(Debug, Clone, Args)]
pub struct PartitionsArgs {
    /// Output format (default: text at a terminal, json otherwise)
    #[arg(long, short = 'o', value_enum)]
    pub output: Option<PartitionsOutput>,
    /// List partitions of at least this size (uncompressed): bytes, or 10KiB, 20MiB, 1GiB
    #[arg(long, short = 't', value_name = "BYTES", value_parser = parse_size)]
    pub min_size: Option<u64>,
    /// List partitions with at least this many rows
    #[arg(long, short = 'w', value_name = "N")]
    pub min_rows: Option<u64>,
    /// List partitions with at least this many cells
    #[arg(long, short = 'c', value_name = "N")]
    pub min_cells: Option<u64>,
    /// List partitions with at least this many tombstones
    #[arg(long, value_name = "N")]
    pub min_tombstones: Option<u64>,
    /// List only the N largest partitions by --by (after the thresholds); text lists 20 unless told
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
    /// What --top ranks by, and the order of the text list (largest first)
    #[arg(long, value_enum, default_value = "size")]
    pub by: PartitionMetric,
    /// Only this partition key (CQL literal form, composite as a:b); repeatable
    #[arg(
        long,
        short = 'k',
        visible_alias = "keys",
        value_name = "KEY",
        allow_hyphen_values = true
    )]
    pub key: Vec<String>,
    /// Leave this partition key out, of the list and of the summaries; repeatable
    #[arg(
        long,
        short = 'x',
        visible_alias = "exclude-keys",
        value_name = "KEY",
        allow_hyphen_values = true
    )]
    pub exclude_key: Vec<String>,
    /// Sizes only, from the index: no rows, cells or tombstones, Data.db not decoded
    #[arg(long, short = 'y')]
    pub partitions_only: bool,
    /// Judge TTL expiry at this time: seconds since the epoch or a timestamp (default: the current time)
    #[arg(long, value_name = "TIME", long_help = NOW_HELP, allow_hyphen_values = true, value_parser = parse_now)]
    pub now: Option<i64>,
    /// Threads decoding each sstable (0: one per core; 1: one thread); the output is the same whatever the number
    #[arg(long, short = 'j', value_name = "N", default_value_t = 0)]
    pub threads: usize,
    #[command(flatten)]
    pub input: InputArgs,
}

impl PartitionsArgs {
    /// The output format: `--output`, else text at a terminal and json otherwise.
    pub fn format(&self) -> PartitionsOutput {
        text_at_terminal(self.output, PartitionsOutput::Text, PartitionsOutput::Json)
    }
}

/// `--output` when given; else `text` when stdout is a terminal (a person
/// reads it) and `other` when it is not (a program does).
pub fn text_at_terminal<T>(output: Option<T>, text: T, other: T) -> T {
    output.unwrap_or_else(|| {
        if crate::term::Stream::Stdout.is_terminal() {
            text
        } else {
            other
        }
    })
}

/// `expired-blockers` arguments.
#[derive(Debug, Clone, Args)]
pub struct ExpiredBlockersArgs {
    /// Output format (default: text at a terminal, json otherwise)
    #[arg(long, short = 'o', value_enum)]
    pub output: Option<OutputFormat>,
    /// The table's gc_grace_seconds: seconds, or 10d, 3h, 30m
    #[arg(long, value_name = "DURATION", default_value = "10d", value_parser = parse_duration)]
    pub gc_grace: i64,
    /// Judge expiry at this time: seconds since the epoch or a timestamp (default: the current time)
    #[arg(long, value_name = "TIME", long_help = NOW_HELP, allow_hyphen_values = true, value_parser = parse_now)]
    pub now: Option<i64>,
    #[command(flatten)]
    pub input: InputArgs,
}

/// `timestamps --bucket` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TimeBucket {
    /// One bucket per hour (UTC)
    Hour,
    /// One bucket per day (UTC)
    Day,
    /// One bucket per calendar month (UTC)
    Month,
}

/// `timestamps` output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TimestampsOutput {
    /// One JSON document: a histogram per table
    Json,
    /// One line per bucket, with its table
    Ndjson,
    /// table,bucket,start,cells,tombstones
    Csv,
    /// Bars fitted to the terminal
    Text,
}

/// `timestamps` arguments.
#[derive(Debug, Clone, Args)]
pub struct TimestampsArgs {
    /// Output format (default: text at a terminal, json otherwise)
    #[arg(long, short = 'o', value_enum)]
    pub output: Option<TimestampsOutput>,
    /// Bucket width
    #[arg(long, value_enum, default_value = "day")]
    pub bucket: TimeBucket,
    /// Threads decoding each sstable (0: one per core; 1: one thread); the counts are the same whatever the number
    #[arg(long, short = 'j', value_name = "N", default_value_t = 0)]
    pub threads: usize,
    #[command(flatten)]
    pub input: InputArgs,
}
