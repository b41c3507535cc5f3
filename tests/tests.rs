//! Integration tests: run the `sstkit` binary on the project fixtures and on
//! the shared corpus (skipped with a message when absent).

mod util;

// CLI definition sanity, man pages and completions drift.
mod cli;
