//! Integration tests: run the `sstkit` binary on the project fixtures and on
//! the shared corpus (skipped with a message when absent).

mod util;

// CLI definition sanity, man pages and completions drift.
mod cli;

// Metadata commands: snapshots on fixtures, corpus walk.
mod metadata;

// dump-data: every output format against the Cassandra fixtures.
mod dump_data;
