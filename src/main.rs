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
    let stdout = io::stdout();
    let result = if stdout.is_terminal() {
        // Line-buffered (Stdout's own behaviour) so interactive output appears promptly.
        let mut lock = stdout.lock();
        sstkit_commands::run(cli, &mut lock)
    } else {
        let mut w = BufWriter::with_capacity(256 * 1024, stdout.lock());
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
