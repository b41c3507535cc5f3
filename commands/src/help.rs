//! Texts shared by `--help` and the man pages: for each command, examples
//! and what its exit status means; the section on pre-3.0 sstables and
//! `--schema`; the `--version` text.
//!
//! [`decorate`] attaches them to the clap definition in [`crate::cli`], so
//! `sstkit COMMAND --help` and `man sstkit-COMMAND` say the same thing; the
//! man-page generator ([`crate::cmd::generate`]) renders them as the
//! EXAMPLES and EXIT STATUS sections. The examples name sstables bundled in
//! the source tree (`fixtures/cassandra/`), and a test runs every one.

use sstkit_format::version::{FormatKind, VERSIONS};

/// One example: what it shows, and the command line.
#[derive(Debug, Clone, Copy)]
pub struct Example {
    /// What the command line does, one sentence.
    pub what: &'static str,
    /// The command line, starting with `sstkit`; words separated by single
    /// spaces, no quoting (the test splits it on spaces).
    pub line: &'static str,
    /// True when it runs as written from the source tree's top directory
    /// (its paths are bundled sstables); the test runs those and only
    /// parses the others.
    pub runs_on_fixtures: bool,
}

/// One exit code and what it means for a command.
pub type ExitCode = (u8, &'static str);

/// A command's examples and exit codes.
#[derive(Debug, Clone, Copy)]
pub struct CommandHelp {
    /// The subcommand name (`dump-toc`).
    pub name: &'static str,
    /// Examples, the most common use first.
    pub examples: &'static [Example],
    /// Every exit code the command can end with.
    pub exit: &'static [ExitCode],
}

const EXIT_USAGE: ExitCode = (
    2,
    "usage error: an unknown flag, a missing or malformed argument, or no sstable at a path",
);

/// Commands that read and print: any damage they cannot read past is an error.
const READ_EXIT: &[ExitCode] = &[
    (0, "every sstable was read and printed"),
    EXIT_USAGE,
    (
        3,
        "unreadable input: a missing file or component, an I/O error, or a component that \
         cannot be decoded (named on stderr with its file and offset; the other sstables are \
         still read)",
    ),
];

/// Commands that write sstables.
const EXPORT_EXIT: &[ExitCode] = &[
    (
        0,
        "every row was exported and the output renamed into place",
    ),
    (
        2,
        "usage error: an unknown flag, a malformed argument, no sstable at a path, sstables of \
         different tables, or a value that does not fit --decimals",
    ),
    (
        3,
        "an input could not be read, or the output could not be written; no output file is left",
    ),
];

const WRITE_EXIT: &[ExitCode] = &[
    (0, "every sstable was written"),
    (
        2,
        "usage error: an unknown flag, a malformed argument, no sstable at a path, an output \
         directory that is an input's, or a version or compression sstkit does not write",
    ),
    (
        3,
        "an sstable could not be read or written (named on stderr; its partial output is \
         removed, the other sstables are still written)",
    ),
];

/// Commands that look for damage: finding it is their normal result.
const CHECK_EXIT: &[ExitCode] = &[
    (0, "every sstable is valid"),
    (
        1,
        "problems were found: the report lists each one (warnings and notes alone do not \
         count)",
    ),
    EXIT_USAGE,
    (
        3,
        "an input cannot be opened: a missing file or component it needs to start, or an I/O \
         error",
    ),
];

const fn ex(what: &'static str, line: &'static str) -> Example {
    Example {
        what,
        line,
        runs_on_fixtures: true,
    }
}

/// An example whose paths stand for the user's own files.
const fn ex_elsewhere(what: &'static str, line: &'static str) -> Example {
    Example {
        what,
        line,
        runs_on_fixtures: false,
    }
}

/// The examples and exit codes of every visible command (a test checks that
/// each one has an entry).
pub const COMMANDS: &[CommandHelp] = &[
    CommandHelp {
        name: "dump-data",
        examples: &[
            ex(
                "Byte for byte what Cassandra's sstabledump prints",
                "sstkit dump-data -o sstabledump fixtures/cassandra/nb_deletes/",
            ),
            ex(
                "One partition, found through the index, as one JSON line",
                "sstkit dump-data --key 5 -o ndjson fixtures/cassandra/nb_wide/",
            ),
            ex(
                "The partition keys only",
                "sstkit dump-data --keys-only -o ndjson fixtures/cassandra/nb_wide/",
            ),
            ex(
                "A partition's rows in reverse clustering order, one per line",
                "sstkit dump-data --key 5 --reverse -o text fixtures/cassandra/nb_wide/",
            ),
            ex_elsewhere(
                "The sstables of a table read as one, reconciled as Cassandra does",
                "sstkit dump-data --merge -o text /data/ks/t-1234/",
            ),
            ex(
                "The live CQL rows as SELECT JSON * returns them, with TTLs judged at a given time",
                "sstkit dump-data -o cql --now 2026-11-22T15:30:00Z fixtures/cassandra/nb_deletes/",
            ),
        ],
        exit: READ_EXIT,
    },
    CommandHelp {
        name: "read",
        examples: &[
            ex(
                "The rows of partition 5 whose first clustering column is 10 or 11",
                "sstkit read --key 5 --from 10 --to 11 fixtures/cassandra/nb_wide/",
            ),
            ex(
                "Its first row, and the reads that cost (on stderr)",
                "sstkit read --key 5 --limit 1 fixtures/cassandra/nb_wide/ --io-stats",
            ),
            ex(
                "The last 3 rows of partition 5 of a BTI sstable, in reverse clustering order",
                "sstkit read --key 5 --reverse --limit 3 fixtures/cassandra/da_wide/",
            ),
            ex_elsewhere(
                "What the table returns for key 4, and what each sstable cost",
                "sstkit read --merge --io-stats --key 4 /data/ks/t-1234/",
            ),
            ex(
                "Partition 5 as the CQL rows SELECT JSON * ... WHERE pk = 5 returns",
                "sstkit read --key 5 -o cql fixtures/cassandra/nb_deletes/",
            ),
        ],
        exit: READ_EXIT,
    },
    CommandHelp {
        name: "info",
        examples: &[
            ex(
                "Summary of one sstable as a table",
                "sstkit info fixtures/cassandra/nb_clustering/",
            ),
            ex(
                "The same for a BTI sstable, as JSON",
                "sstkit info -o json fixtures/cassandra/da_wide/",
            ),
            ex(
                "One line per sstable, then table totals, with droppable tombstones at a 1-day gc_grace",
                "sstkit info --gc-grace 1d fixtures/cassandra/nb_deletes_merge_1/ fixtures/cassandra/nb_deletes_merge_2/",
            ),
            ex(
                "The histograms of Statistics.db as text bars",
                "sstkit info --histograms fixtures/cassandra/nb_deletes/",
            ),
        ],
        exit: READ_EXIT,
    },
    CommandHelp {
        name: "token",
        examples: &[
            ex(
                "Murmur3 tokens of three int keys",
                "sstkit token --type int 1 2 3",
            ),
            ex(
                "The token of key 5, typed by an sstable's header",
                "sstkit token --sstable fixtures/cassandra/nb_wide/nb-1-big-Data.db 5",
            ),
        ],
        exit: &[
            (0, "every token was computed"),
            (
                2,
                "usage error: an unknown flag or type, or a key that does not parse as its type",
            ),
            (3, "the sstable given with --sstable cannot be read"),
        ],
    },
    CommandHelp {
        name: "validate",
        examples: &[
            ex(
                "Check an sstable; the report as a table",
                "sstkit validate -o text fixtures/cassandra/nb_clustering/",
            ),
            ex(
                "Every sstable of a directory, one JSON line per finding and per sstable",
                "sstkit validate -o ndjson fixtures/cassandra/oa_deletes/",
            ),
        ],
        exit: CHECK_EXIT,
    },
    CommandHelp {
        name: "validate-checksums",
        examples: &[
            ex(
                "Every chunk checksum and the digest of Data.db",
                "sstkit validate-checksums fixtures/cassandra/nb_clustering_lz4_4k/",
            ),
            ex(
                "An uncompressed sstable (checksums in CRC.db), on one thread",
                "sstkit validate-checksums --threads 1 fixtures/cassandra/nb_wide_desc/",
            ),
        ],
        exit: CHECK_EXIT,
    },
    CommandHelp {
        name: "scrub",
        examples: &[
            ex(
                "Scan Data.db without its index and report what is damaged",
                "sstkit scrub --mode validate fixtures/cassandra/nb_clustering/",
            ),
            ex(
                "Salvage every readable partition into a new sstable in out/",
                "sstkit scrub --mode skip --output-dir out fixtures/cassandra/nb_wide/",
            ),
            ex(
                "The same as NDJSON in the dump-data schema, with a list of what was lost",
                "sstkit scrub --mode skip --salvage-format ndjson --output-dir out fixtures/cassandra/nb_wide/",
            ),
        ],
        exit: CHECK_EXIT,
    },
    CommandHelp {
        name: "rewrite",
        examples: &[
            ex(
                "Write an sstable again into out/, same version and compression",
                "sstkit rewrite --output-dir out fixtures/cassandra/nb_clustering/",
            ),
            ex(
                "Drop one partition (a poisoned or oversized one)",
                "sstkit rewrite --output-dir out --exclude-key 5 fixtures/cassandra/nb_wide/",
            ),
            ex(
                "Downgrade oa to nb, recompress with zstd level 5 in 64 KiB chunks",
                "sstkit rewrite --output-dir out --format-version nb --compression zstd:5 --chunk-length 64KiB fixtures/cassandra/oa_deletes/",
            ),
            ex(
                "Only the partitions of a token range",
                "sstkit rewrite --output-dir out --token-range 0,9223372036854775807 fixtures/cassandra/oa_clustering/",
            ),
            ex(
                "BIG to BTI: write a da sstable (Partitions.db and Rows.db instead of Index.db and Summary.db)",
                "sstkit rewrite --output-dir out --format-version da fixtures/cassandra/nb_clustering/",
            ),
        ],
        exit: WRITE_EXIT,
    },
    CommandHelp {
        name: "split",
        examples: &[
            ex(
                "Cut an sstable into sstables of about 64 KiB of Data.db each",
                "sstkit split --output-dir out --max-size 64KiB fixtures/cassandra/nb_clustering/",
            ),
            ex_elsewhere(
                "One sstable per token range of ranges.txt (lines START,END)",
                "sstkit split --output-dir out --token-ranges ranges.txt fixtures/cassandra/oa_deletes/",
            ),
        ],
        exit: WRITE_EXIT,
    },
    CommandHelp {
        name: "compact",
        examples: &[
            ex(
                "Compact the three sstables of a table into one",
                "sstkit compact --output-dir out fixtures/cassandra/nb_merge_range_1/ fixtures/cassandra/nb_merge_range_2/ fixtures/cassandra/nb_merge_range_3/",
            ),
            ex(
                "Also drop tombstones older than one day, judged at a given time",
                "sstkit compact --output-dir out --purge --gc-grace 1d --now 2030-01-01 fixtures/cassandra/nb_merge_range_1/ fixtures/cassandra/nb_merge_range_2/ fixtures/cassandra/nb_merge_range_3/",
            ),
            ex_elsewhere(
                "Every sstable of a table's data directory, written as BTI",
                "sstkit compact --output-dir /tmp/compacted --format-version da /var/lib/cassandra/data/ks/t-1234/",
            ),
        ],
        exit: &[
            (0, "the sstable was written"),
            (
                2,
                "usage error: an unknown flag, a malformed argument, no sstable at a path, sstables \
                 of different tables, an output directory that is an input's, or a version or \
                 compression sstkit does not write",
            ),
            (
                3,
                "an input could not be read or the output could not be written (the partial output \
                 is removed)",
            ),
        ],
    },
    CommandHelp {
        name: "write",
        examples: &[
            ex_elsewhere(
                "Dump, edit the records, write them back as an sstable of the same table",
                "sstkit write --from edited.ndjson --like nb-1-big-Data.db --output-dir out",
            ),
            ex_elsewhere(
                "Records from stdin, e.g. piped from `sstkit dump-data -o ndjson nb-1-big-Data.db`",
                "sstkit write --from - --like nb-1-big-Data.db --output-dir out",
            ),
            ex_elsewhere(
                "Generated records into a BTI sstable",
                "sstkit write --from rows.ndjson --schema schema.cql --output-dir out --format-version da",
            ),
        ],
        exit: &[
            (0, "the sstable was written"),
            (
                2,
                "usage error: an unknown flag, a schema that does not parse, a malformed line or a \
                 partition out of token order (named by its line number; nothing is written)",
            ),
            (
                3,
                "the input could not be read or the output could not be written (the partial \
                 output is removed)",
            ),
        ],
    },
    CommandHelp {
        name: "export",
        examples: &[
            ex_elsewhere(
                "The live rows of a table's sstables, reconciled, to one Parquet file",
                "sstkit export --merge -o parquet --output-file t.parquet /var/lib/cassandra/data/ks/t-1234/",
            ),
            ex(
                "CSV as cqlsh COPY TO writes it, on stdout",
                "sstkit export -o csv --output-file - fixtures/cassandra/nb_collections/",
            ),
            ex_elsewhere(
                "An Arrow IPC file, with decimals as Decimal128(38, 6)",
                "sstkit export -o arrow --decimals decimal128:6 --output-file t.arrow fixtures/cassandra/nb_all_types/",
            ),
            ex_elsewhere(
                "Eight Parquet files, one per token range, for eight workers",
                "sstkit export --merge -o parquet --partition-by token-range:8 --output-file out/ /var/lib/cassandra/data/ks/t-1234/",
            ),
        ],
        exit: EXPORT_EXIT,
    },
    CommandHelp {
        name: "partitions",
        examples: &[
            ex(
                "Every partition of a table with its size, rows, cells and tombstones, then percentiles",
                "sstkit partitions -o text fixtures/cassandra/nb_deletes/",
            ),
            ex(
                "The 5 partitions with the most tombstones, TTL expiry judged at a given time",
                "sstkit partitions --top 5 --by tombstones --now 1800000000 fixtures/cassandra/oa_deletes/",
            ),
            ex(
                "sstablepartitions --csv: partitions of 1 KiB or more, or with 31 rows or more",
                "sstkit partitions -o csv --min-size 1KiB --min-rows 31 fixtures/cassandra/da_deletes/",
            ),
            ex(
                "Sizes only, from the index, with the IO it cost",
                "sstkit partitions --partitions-only --io-stats fixtures/cassandra/nb_wide/",
            ),
            Example {
                what: "Large partitions anywhere in a node's data directory, snapshots included",
                line: "sstkit partitions -r --snapshots --min-size 100MiB /var/lib/cassandra/data",
                runs_on_fixtures: false,
            },
        ],
        exit: READ_EXIT,
    },
    CommandHelp {
        name: "expired-blockers",
        examples: &[
            ex(
                "Which sstables of a table keep its expired sstables on disk",
                "sstkit expired-blockers -o text fixtures/cassandra/nb_deletes_merge_1/ fixtures/cassandra/nb_deletes_merge_2/",
            ),
            ex(
                "The same judged at a later time with a 3-hour gc_grace, as JSON",
                "sstkit expired-blockers --now 1800000000 --gc-grace 3h -o json fixtures/cassandra/oa_deletes/",
            ),
            Example {
                what: "Every table of a node's data directory",
                line: "sstkit expired-blockers -r /var/lib/cassandra/data",
                runs_on_fixtures: false,
            },
        ],
        exit: READ_EXIT,
    },
    CommandHelp {
        name: "timestamps",
        examples: &[
            ex(
                "When the cells and tombstones of a table were written, by day",
                "sstkit timestamps -o text fixtures/cassandra/nb_deletes/",
            ),
            ex(
                "By hour, as CSV",
                "sstkit timestamps --bucket hour -o csv fixtures/cassandra/da_deletes/",
            ),
        ],
        exit: READ_EXIT,
    },
    CommandHelp {
        name: "dump-toc",
        examples: &[
            ex(
                "The components of an sstable and their sizes",
                "sstkit dump-toc -o text fixtures/cassandra/nb_wide/nb-1-big-TOC.txt",
            ),
            ex(
                "Every sstable of a directory, one JSON line each",
                "sstkit dump-toc -o ndjson fixtures/cassandra/oa_udt/",
            ),
        ],
        exit: READ_EXIT,
    },
    CommandHelp {
        name: "dump-statistics",
        examples: &[
            ex(
                "Every field of Statistics.db, as JSON",
                "sstkit dump-statistics fixtures/cassandra/nb_clustering/",
            ),
            ex(
                "The same as a table",
                "sstkit dump-statistics -o text fixtures/cassandra/da_clustering/",
            ),
        ],
        exit: READ_EXIT,
    },
    CommandHelp {
        name: "dump-summary",
        examples: &[ex(
            "The sampled keys of Summary.db and where they point in Index.db",
            "sstkit dump-summary -o text fixtures/cassandra/nb_clustering/",
        )],
        exit: READ_EXIT,
    },
    CommandHelp {
        name: "dump-index",
        examples: &[
            ex(
                "Every partition entry of Index.db",
                "sstkit dump-index -o ndjson fixtures/cassandra/nb_clustering/",
            ),
            ex(
                "With every promoted-index block of the wide partitions",
                "sstkit dump-index --promoted-index fixtures/cassandra/nb_wide/",
            ),
        ],
        exit: READ_EXIT,
    },
    CommandHelp {
        name: "dump-trie",
        examples: &[
            ex(
                "The partition trie of a BTI sstable (Partitions.db)",
                "sstkit dump-trie -o text fixtures/cassandra/da_clustering/",
            ),
            ex(
                "With every row index of Rows.db, one JSON line per entry",
                "sstkit dump-trie --rows -o ndjson fixtures/cassandra/da_wide/",
            ),
        ],
        exit: &[
            (0, "every sstable was read and printed"),
            EXIT_USAGE,
            (
                3,
                "unreadable input: a missing file or component, an I/O error, a component that \
                 cannot be decoded, or a BIG-format sstable (it has no tries; see dump-index)",
            ),
        ],
    },
    CommandHelp {
        name: "dump-compression-info",
        examples: &[ex(
            "Compressor, chunk length and every chunk offset",
            "sstkit dump-compression-info fixtures/cassandra/nb_clustering_zstd/",
        )],
        exit: READ_EXIT,
    },
    CommandHelp {
        name: "dump-filter",
        examples: &[
            ex(
                "The bloom filter's parameters and fill ratio",
                "sstkit dump-filter -o text fixtures/cassandra/nb_clustering/",
            ),
            ex(
                "May the partition with key (eu, 36) be in the sstable?",
                "sstkit dump-filter --key eu:36 fixtures/cassandra/nb_clustering/",
            ),
        ],
        exit: READ_EXIT,
    },
    CommandHelp {
        name: "dump-scylla-metadata",
        examples: &[ex_elsewhere(
            "Sharding, features, origin and schema of a ScyllaDB sstable",
            "sstkit dump-scylla-metadata /var/lib/scylla/data/ks/t-1234/",
        )],
        exit: READ_EXIT,
    },
    CommandHelp {
        name: "dump-schema",
        examples: &[
            ex(
                "The CREATE TYPE and CREATE TABLE statements of an sstable",
                "sstkit dump-schema fixtures/cassandra/nb_udt/",
            ),
            ex(
                "Under the keyspace and table names you choose",
                "sstkit dump-schema --keyspace ks --table t fixtures/cassandra/nb_wide/",
            ),
        ],
        exit: READ_EXIT,
    },
];

/// Examples of the top-level page: one per kind of job.
pub const TOUR: &[Example] = &[
    ex(
        "Summary of an sstable",
        "sstkit info fixtures/cassandra/nb_clustering/",
    ),
    ex(
        "Its data, as Cassandra's sstabledump prints it",
        "sstkit dump-data -o sstabledump fixtures/cassandra/nb_clustering/",
    ),
    ex(
        "One partition's slice, read through the index",
        "sstkit read --key 5 --from 10 --to 11 fixtures/cassandra/nb_wide/",
    ),
    ex(
        "Check everything",
        "sstkit validate -o text fixtures/cassandra/nb_clustering/",
    ),
];

/// The exit codes of the program as a whole.
pub const MAIN_EXIT: &[ExitCode] = &[
    (0, "success"),
    (
        1,
        "problems were found in the data (validate, validate-checksums, scrub)",
    ),
    (2, "usage error (bad flags or arguments)"),
    (
        3,
        "unreadable input: a missing file or component, an I/O error, or a component that \
         cannot be decoded",
    ),
];

/// Pre-3.0 sstables and `--schema FILE`, told once (`sstkit --help`, sstkit(1)).
pub const SCHEMA_SECTION: &[&str] = &[
    "Pre-3.0 sstables (jb, ka, la, lb) store no schema, so their Data.db can only be decoded \
     with the table's CREATE TABLE statement, given with --schema FILE (the first CREATE TABLE \
     in the file; CREATE TYPE statements it uses may come with it). dump-data, read, validate \
     and scrub need it for them and exit with code 3 without it; read then reads the partition \
     whole from its start, and --reverse is not available. The other commands use it to show \
     the partition keys of those sstables typed. Sstables of the row format (ma and later) \
     carry their own schema in Statistics.db, which is used instead (the file is then \
     ignored, but by scrub).",
    "scrub takes from the file the types of a row-format sstable's serialization header \
     whose type names are damaged, column by column; the header keeps its columns and \
     encoding bases, which a CREATE TABLE does not hold. Where the header has a checksum (na \
     and later) the file's types are used only when the header then passes it again; a \
     header that passes it wins over a file that disagrees (a finding). A header with \
     columns the file lacks is another table's, or the file is: nothing is salvaged. A \
     header that does not decode at all is stood in for by the file, with the smallest \
     timestamp and deletion time Statistics.db records as bases; the salvage is kept only \
     if all of Data.db decodes to exactly the recorded ranges (tables with TTLs are refused).",
    "Partition-key, clustering (with CLUSTERING ORDER BY ... DESC), static, collection and \
     counter columns and WITH COMPACT STORAGE are taken into account. A column the file does \
     not declare (e.g. a dropped column) is skipped in pre-3.0 data, and so is a cell whose \
     shape does not fit its column's type (a column dropped and re-added as another type). \
     Columns whose values do not decode with the declared type are printed as hex and named \
     once on stderr.",
    "Without --schema, a schema.cql next to the pre-3.0 sstables (Cassandra snapshots and \
     backups carry one) is used, and stderr says so.",
];

/// An example of `--schema` (not run by the tests: no pre-3.0 sstable is bundled).
pub const SCHEMA_EXAMPLE: Example = ex_elsewhere(
    "A Cassandra 2.1 sstable, decoded with its table's CREATE TABLE",
    "sstkit dump-data --schema table.cql -o ndjson legacy_ka_simple/",
);

/// The help of `command` (a subcommand name), if it has one.
pub fn command_help(command: &str) -> Option<&'static CommandHelp> {
    COMMANDS.iter().find(|c| c.name == command)
}

/// Attach each subcommand's examples and exit codes to its long help
/// (`--help`); the top-level long help is [`main_after_help`].
pub fn decorate(cmd: clap::Command) -> clap::Command {
    match command_help(cmd.get_name()) {
        Some(h) => {
            let text = format!("{}\n\n{}", examples_text(h.examples), exit_text(h.exit));
            cmd.after_long_help(text)
        }
        None => cmd,
    }
}

/// The end of `sstkit --help`: pre-3.0 sstables, examples, exit status.
pub fn main_after_help() -> String {
    let mut s = String::from("Pre-3.0 sstables and --schema FILE:\n");
    for p in SCHEMA_SECTION {
        s.push_str(&wrap(p, 2, 2));
        s.push('\n');
    }
    s.push_str(&wrap(&format!("{}:", SCHEMA_EXAMPLE.what), 2, 2));
    s.push_str(&format!("    {}\n\n", SCHEMA_EXAMPLE.line));
    s.push_str(&examples_text(TOUR));
    s.push_str("\n\n");
    s.push_str(&exit_text(MAIN_EXIT));
    s
}

/// `--version`: the version and every sstable version read, from the
/// format crate's table.
pub fn long_version() -> String {
    let names = |pick: &dyn Fn(&sstkit_format::version::KnownVersion) -> bool| {
        VERSIONS
            .iter()
            .filter(|v| pick(v))
            .map(|v| v.name)
            .collect::<Vec<_>>()
            .join(" ")
    };
    let untested = names(&|v| v.scylla && !v.tested);
    format!(
        "{}\nsstable versions: Cassandra {} (BIG), {} (BTI); ScyllaDB {}{}",
        env!("CARGO_PKG_VERSION"),
        names(&|v| v.cassandra && v.kind == FormatKind::Big),
        names(&|v| v.cassandra && v.kind == FormatKind::Bti),
        names(&|v| v.scylla && v.tested),
        if untested.is_empty() {
            String::new()
        } else {
            format!(", {untested} (untested: no sample sstables)")
        }
    )
}

/// The note that the examples' paths are bundled sstables.
pub const EXAMPLES_NOTE: &str = "Paths under fixtures/ are sstables bundled in the source tree: \
run the examples from its top directory, or give your own paths.";

fn examples_text(examples: &[Example]) -> String {
    let mut s = String::from("Examples:\n");
    s.push_str(&wrap(EXAMPLES_NOTE, 2, 2));
    for e in examples {
        s.push('\n');
        s.push_str(&wrap(&format!("# {}", e.what), 2, 4));
        s.push_str(&format!("  {}\n", e.line));
    }
    s.truncate(s.trim_end().len());
    s
}

fn exit_text(codes: &[ExitCode]) -> String {
    let mut s = String::from("Exit status:\n");
    for (code, meaning) in codes {
        // "  0  meaning...": the code sits in the first line's indent.
        let text = wrap(meaning, 5, 5);
        s.push_str(&format!("  {code}  {}", &text[5..]));
    }
    s.truncate(s.trim_end().len());
    s
}

/// Width of the help texts built here (clap wraps its own parts to the terminal).
const WIDTH: usize = 80;

/// `text` wrapped at word boundaries to [`WIDTH`] columns, the first line
/// indented by `first` spaces and the others by `rest`, ending in a newline.
fn wrap(text: &str, first: usize, rest: usize) -> String {
    let mut out = String::new();
    let mut line = " ".repeat(first);
    let mut empty = true;
    for word in text.split_whitespace() {
        if !empty && line.len() + 1 + word.len() > WIDTH {
            out.push_str(&line);
            out.push('\n');
            line = " ".repeat(rest);
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    out.push_str(&line);
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_keeps_words_and_width() {
        let text = "one two three four five six seven eight nine ten ".repeat(8);
        let w = wrap(&text, 2, 5);
        assert!(w.lines().all(|l| l.chars().count() <= WIDTH), "{w}");
        assert!(w.starts_with("  one") && w.lines().nth(1).unwrap().starts_with("     "));
        let words: Vec<&str> = w.split_whitespace().collect();
        assert_eq!(words, text.split_whitespace().collect::<Vec<_>>());
    }

    #[test]
    fn long_version_lists_every_version_once() {
        let v = long_version();
        assert!(v.starts_with(env!("CARGO_PKG_VERSION")), "{v}");
        for k in VERSIONS {
            let n = v.matches(&format!(" {}", k.name)).count();
            let expected = usize::from(k.cassandra) + usize::from(k.scylla);
            assert_eq!(n, expected, "{} in {v}", k.name);
        }
    }
}
