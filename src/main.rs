//! The `sstkit` binary: parse the command line, run the command, map the
//! outcome to an exit code (0 ok, 1 problems found, 2 usage, 3 unreadable
//! input). Everything else lives in the `sstkit-commands` and `sstkit-format`
//! crates.

use std::io::{self, BufWriter, IsTerminal, Write};
use std::process::ExitCode;

use clap::Parser;
use sstkit_commands::cli::Cli;

fn main() -> ExitCode {
    // clap prints usage errors itself and exits with 2.
    let cli = Cli::parse();
    // Before any thread starts: a signal removes unfinished outputs and exits 128 + its number.
    sstkit_commands::interrupt::install();
    let stdout = io::stdout();
    let result = if stdout.is_terminal() {
        // Line-buffered (Stdout's own behaviour) so interactive output appears promptly.
        let mut lock = stdout.lock();
        sstkit_commands::run(cli, &mut lock)
    } else {
        let mut w = BufWriter::with_capacity(256 * 1024, raw_stdout(&stdout));
        let r = sstkit_commands::run(cli, &mut w);
        match (r, w.flush()) {
            (Ok(_), Err(e)) => Err(sstkit_commands::CmdError::Output(e)),
            (r, _) => r,
        }
    };
    match result {
        Ok(o) => ExitCode::from(o.exit_code()),
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sstkit: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

/// Standard output for a pipe or file, written with plain `write(2)`s:
/// `Stdout` is always line-buffered, which scans every block for its last
/// newline and copies the tail. On Unix a duplicate of the descriptor does
/// without; elsewhere the locked `Stdout`.
#[cfg(unix)]
fn raw_stdout(stdout: &io::Stdout) -> Box<dyn Write + '_> {
    use std::os::fd::AsFd;
    match stdout.as_fd().try_clone_to_owned() {
        Ok(fd) => Box::new(std::fs::File::from(fd)),
        Err(_) => Box::new(stdout.lock()),
    }
}

#[cfg(not(unix))]
fn raw_stdout(stdout: &io::Stdout) -> Box<dyn Write + '_> {
    Box::new(stdout.lock())
}
