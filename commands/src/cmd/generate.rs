//! `sstkit generate man DIR` / `sstkit generate completions SHELL`: man pages
//! and shell completions rendered from the clap definitions in [`crate::cli`]
//! (hidden command, for packaging; `man/` in the repository is produced by
//! `cargo run -- generate man man` and a test fails when it is stale).
//!
//! clap_mangen renders NAME, SYNOPSIS, DESCRIPTION, OPTIONS and VERSION;
//! the EXIT STATUS, EXAMPLES and the top page's own sections come from
//! [`crate::help`] and are rendered here as roff lists (clap_mangen would
//! print the `--help` text of those parts as one filled paragraph).
//!
//! Exit status: 0 ok; 2 usage; 3 the output cannot be written.

use std::io::{self, Write};
use std::path::Path;

use clap::CommandFactory;
use roff::{bold, roman, Roff};

use crate::cli::{Cli, GenerateArgs, GenerateWhat};
use crate::help::{self, Example, ExitCode};
use crate::{CmdResult, Outcome};

/// Render every man page: `(file name, roff bytes)` for `sstkit.1` and one
/// `sstkit-<command>.1` per visible subcommand.
pub fn man_pages() -> io::Result<Vec<(String, Vec<u8>)>> {
    let cmd = Cli::command();
    let mut pages = Vec::new();

    let mut top = Roff::new();
    top.control("SH", ["PRE-3.0 SSTABLES"]);
    for p in help::SCHEMA_SECTION {
        top.control("PP", []).text([roman(*p)]);
    }
    example(&mut top, &help::SCHEMA_EXAMPLE);
    top.control("SH", ["SSTABLE VERSIONS"]);
    let versions = help::long_version();
    let list = versions.lines().nth(1).unwrap_or_default();
    top.text([roman(list.trim_start_matches("sstable versions: "))]);
    exit_status(&mut top, help::MAIN_EXIT);
    examples(&mut top, help::TOUR);
    pages.push(("sstkit.1".to_string(), page(cmd.clone(), &top)?));

    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let h = help::command_help(sub.get_name()).ok_or_else(|| {
            io::Error::other(format!(
                "no examples or exit status for {} in help::COMMANDS",
                sub.get_name()
            ))
        })?;
        let name = format!("sstkit-{}", sub.get_name());
        let mut extra = Roff::new();
        exit_status(&mut extra, h.exit);
        examples(&mut extra, h.examples);
        extra
            .control("SH", ["SEE ALSO"])
            .text([bold("sstkit"), roman("(1)")]);
        let sub = sub
            .clone()
            .name(name.clone())
            .version(env!("CARGO_PKG_VERSION"));
        pages.push((format!("{name}.1"), page(sub, &extra)?));
    }
    Ok(pages)
}

/// clap_mangen's page for `cmd` without its after-help text (rendered in
/// `extra` instead), with `extra` before the VERSION section.
fn page(cmd: clap::Command, extra: &Roff) -> io::Result<Vec<u8>> {
    let cmd = cmd
        .after_long_help(None::<&str>)
        .after_help(None::<&str>)
        .long_version(None::<&str>);
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd).render(&mut buf)?;
    let page = String::from_utf8(buf).map_err(io::Error::other)?;
    // Both renderings start with the same preamble (the apostrophe string):
    // keep the page's, drop `extra`'s.
    let extra = extra.render();
    let preamble_end = extra.match_indices('\n').nth(1).map_or(0, |(i, _)| i + 1);
    let (preamble, body) = extra.split_at(preamble_end);
    let at = page.find("\n.SH VERSION\n").map_or(page.len(), |i| i + 1);
    if !page.starts_with(preamble) {
        return Err(io::Error::other("roff and clap_mangen preambles differ"));
    }
    let mut out = String::with_capacity(page.len() + body.len());
    out.push_str(&page[..at]);
    // No hyphenation from here on: exit codes and command lines read whole.
    out.push_str(".nh\n");
    out.push_str(body);
    out.push_str(&page[at..]);
    Ok(out.into_bytes())
}

fn exit_status(r: &mut Roff, codes: &[ExitCode]) {
    r.control("SH", ["EXIT STATUS"]);
    for (code, meaning) in codes {
        r.control("TP", [])
            .text([bold(code.to_string())])
            .text([roman(*meaning)]);
    }
}

fn examples(r: &mut Roff, list: &[Example]) {
    r.control("SH", ["EXAMPLES"]);
    if list.iter().any(|e| e.runs_on_fixtures) {
        r.text([roman(help::EXAMPLES_NOTE)]);
    }
    for e in list {
        example(r, e);
    }
}

fn example(r: &mut Roff, e: &Example) {
    r.control("PP", []).text([roman(e.what)]);
    r.control("RS", ["2"])
        .control("nf", [])
        .text([bold(e.line)])
        .control("fi", [])
        .control("RE", []);
}

/// Run the command.
pub fn run(a: &GenerateArgs, out: &mut dyn Write) -> CmdResult<Outcome> {
    match &a.what {
        GenerateWhat::Man { dir } => {
            std::fs::create_dir_all(dir)?;
            for (name, bytes) in man_pages()? {
                std::fs::write(Path::new(dir).join(&name), bytes)?;
                writeln!(out, "{}", Path::new(dir).join(&name).display())?;
            }
        }
        GenerateWhat::Completions { shell } => {
            let mut cmd = Cli::command();
            clap_complete::generate(*shell, &mut cmd, "sstkit", out);
        }
    }
    Ok(Outcome::default())
}
