//! TODO(helper): being implemented.
use std::io::Write;
use crate::{cli::DumpDataArgs, CmdError, CmdResult, Outcome};
/// Run the command.
pub fn run(_a: &DumpDataArgs, _out: &mut dyn Write) -> CmdResult<Outcome> {
    Err(CmdError::Usage("not implemented yet".into()))
}
