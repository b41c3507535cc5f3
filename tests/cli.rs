//! The CLI is defined once (`sstkit_commands::cli`); help, man pages and
//! completions derive from it.

use clap::CommandFactory;
use sstkit_commands::cli::Cli;

use crate::util::{repo, sstkit};

#[test]
fn cli_definition_is_consistent() {
    Cli::command().debug_assert();
}

#[test]
fn man_pages_are_current() {
    let pages = sstkit_commands::cmd::generate::man_pages().expect("render man pages");
    assert!(pages.len() > 5, "one page per command");
    let mut stale = Vec::new();
    for (name, bytes) in &pages {
        let on_disk = std::fs::read(repo().join("man").join(name)).unwrap_or_default();
        if on_disk != *bytes {
            stale.push(name.clone());
        }
    }
    assert!(
        stale.is_empty(),
        "stale man pages {stale:?}: run `cargo run -- generate man man`"
    );
}

#[test]
fn usage_errors_exit_2_and_missing_input_exits_3() {
    let r = sstkit(["dump-toc", "--no-such-flag", "x"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let r = sstkit(["dump-toc", "/definitely/not/here-Data.db"]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(
        r.stderr.contains("/definitely/not/here"),
        "error names the file: {}",
        r.stderr
    );
    assert!(r.stdout.is_empty() || r.stdout.starts_with("{\"sstables\""));
}

#[test]
fn help_never_touches_the_filesystem_and_lists_exit_codes() {
    let r = sstkit(["dump-index", "--help"]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("Exit status"));
}

#[test]
fn completions_generate() {
    let r = sstkit(["generate", "completions", "bash"]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("dump-statistics"));
}
