//! Integration tests: run the `sstkit` binary on the project fixtures and on
//! the shared corpus (skipped with a message when absent).

mod util;

// A JSON Schema checker for the output contracts (docs/schemas).
mod schema_check;

// Every output record type against its schema in docs/schemas.
mod schemas;

// CLI definition sanity, man pages and completions drift.
mod cli;

// Metadata commands: snapshots on fixtures, corpus walk.
mod metadata;

// Statistics.db decoded as Cassandra's sstablemetadata prints it.
mod metadata_viewer;

// dump-data: every output format against the Cassandra fixtures.
mod dump_data;

// --threads: the same dump, byte for byte, on several threads.
mod threads;

// --token-range seeks through the index: the filtered whole dump, byte for byte, single and merged.
mod seek;

// export: Parquet / Arrow / CSV read back by DuckDB and pyarrow equal select.json; row groups, token ranges.
mod export;

// --output cql: the live CQL rows equal what a node returned (select.json); --now.
mod cql;

// read: bounded reads equal the filtered dump-data output; IO counts.
mod read;

// read's clustering bounds are values, as in CQL, on ASC and DESC columns.
mod value_bounds;

// --reverse: reversed dumps and reads equal the forward ones reversed; IO counts.
mod reversed;

// validate-checksums: fixtures and intact corpus valid; damaged copies report the damage.
mod validate_checksums;

// validate and scrub: fixtures valid, salvage = dump-data, corrupt corpus sets.
mod validate_scrub;

// validate checks everything: components, checksums, digest, pre-3.0 without schema; the finding schema.
mod validate_full;

// ka/la with --schema: multi-version differential dumps, exact contents, exit 3 without it.
mod legacy;

// jb (Cassandra 2.0): legacy Statistics/Summary, checksums, data vs the ka twins, corrupt set.
mod legacy_jb;

// The corruption suite: seeded damaged copies of the fixtures.
mod corruption;

// Regressions of the corruption campaigns, each made from the case that showed it.
mod regressions;

// Salvage campaign: damage in one chunk; scrub writes every intact partition, no phantom.
mod salvage;

// BTI (da): dump-trie, read and dump-data --key through the trie indexes.
mod bti;

// Typed keys and clusterings read back; schema and input discovery messages.
mod keys;

// Exit codes: damaged copies of the fixtures give 3 (dump/read) or 1 (scrub).
mod exit_codes;

// At a terminal: widths, colour, progress bars, dump-data's default, key-not-found notes.
mod terminal;

// --merge: sstables of one table read as one, against the rows a live node returned.
mod merge;

// --merge --reverse in windows equals the slice held whole.
mod merge_reverse;

// --merge --explain: provenance of each winner against the sstables' own dumps and select.json.
mod explain;

// partitions: csv and percentiles equal sstablepartitions; data-directory walks; index-only IO.
mod partitions;

// expired-blockers, timestamps, info and dump-statistics: against Cassandra's tools and Statistics.db.
mod table_reports;
// rewrite: every intact row-format sstable (fixtures, corpus) rewrites to the same data, valid.
mod rewrite;

// compact: the merged, purged output equals the merged read and the node's rows; metadata rules.
mod compact;

// write: dump -> write -> dump round trips on every fixture (file or pipe); token order enforced.
mod write_ndjson;

// Interrupted writers (SIGINT, SIGTERM) leave no file; a killed one's leftovers are named and removed.
mod interrupt;

// Object storage input (s3://) against a moto server: equal to local reads, errors.
mod s3;
