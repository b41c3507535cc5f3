//! TODO(lead): being implemented.
use std::io::Write;
use crate::{cli::DumpIndexArgs, CmdError, CmdResult, Outcome};
/// Run the command.
pub fn run(_a: &DumpIndexArgs, _out: &mut dyn Write) -> CmdResult<Outcome> {
    Err(CmdError::Usage("not implemented yet".into()))
}
