//! Being implemented (issue in progress).
use std::io::Write;
use crate::{cli::ScrubArgs, CmdError, CmdResult, Outcome};
/// Run the command.
pub fn run(_a: &ScrubArgs, _out: &mut dyn Write) -> CmdResult<Outcome> {
    Err(CmdError::Usage("not implemented yet".into()))
}
