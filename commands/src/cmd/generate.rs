//! `sstkit generate man DIR` / `sstkit generate completions SHELL`: man pages
//! and shell completions rendered from the clap definitions in [`crate::cli`]
//! (hidden command, for packaging; `man/` in the repository is produced by
//! `cargo run -- generate man man` and a test fails when it is stale).
//!
//! Exit status: 0 ok; 2 usage; 3 the output cannot be written.

use std::io::Write;
use std::path::Path;

use clap::CommandFactory;

use crate::cli::{Cli, GenerateArgs, GenerateWhat};
use crate::{CmdResult, Outcome};

/// Render every man page: `(file name, roff bytes)` for `sstkit.1` and one
/// `sstkit-<command>.1` per visible subcommand.
pub fn man_pages() -> std::io::Result<Vec<(String, Vec<u8>)>> {
    let cmd = Cli::command();
    let mut pages = Vec::new();
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd.clone()).render(&mut buf)?;
    pages.push(("sstkit.1".to_string(), buf));
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("sstkit-{}", sub.get_name());
        let sub = sub
            .clone()
            .name(name.clone())
            .version(env!("CARGO_PKG_VERSION"));
        let mut buf = Vec::new();
        clap_mangen::Man::new(sub).render(&mut buf)?;
        pages.push((format!("{name}.1"), buf));
    }
    Ok(pages)
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
