//! TODO(lead): being implemented.
use std::io::Write;
use crate::{cli::DumpFilterArgs, CmdError, CmdResult, Outcome};
/// Run the command.
pub fn run(_a: &DumpFilterArgs, _out: &mut dyn Write) -> CmdResult<Outcome> {
    Err(CmdError::Usage("not implemented yet".into()))
}
