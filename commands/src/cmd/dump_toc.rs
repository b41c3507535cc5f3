//! `sstkit dump-toc SSTABLE...`: the components TOC.txt lists, whether each
//! file exists, and its size.
//!
//! ```text
//! sstkit dump-toc nb-1-big-Data.db
//! sstkit dump-toc --output text /var/lib/cassandra/data/ks/t-1234/
//! ```
//!
//! Reads: TOC.txt (one read) and the size of each listed file (no reads).
//! JSON payload per sstable: `{"components": [{"name", "component", "exists", "size"}],
//! "toc_present": bool}` (`toc_present` false when the TOC was reconstructed from
//! the files present).
//!
//! Exit status: 0 ok; 2 usage; 3 unreadable input (a missing, damaged or
//! truncated component; a checksum mismatch in the dumped component).

use std::io::Write;

use serde_json::json;

use crate::cli::{OutputFormat, SstArgs};
use crate::output::table;
use crate::plan::SstPlan;
use crate::{for_each_sstable, CmdResult, Outcome};

/// Run the command.
pub fn run(a: &SstArgs, out: &mut dyn Write) -> CmdResult<Outcome> {
    for_each_sstable(
        &SstPlan::resolve(a, OutputFormat::Json)?,
        false,
        out,
        |sst, emit| {
            let rows: Vec<(String, Option<&str>, Option<u64>)> = sst
                .toc_txt()?
                .entries
                .iter()
                .map(|e| {
                    let p = sst.desc.path_of(&e.name);
                    let size = sstkit_format::io::store::file_len(&p);
                    (e.name.clone(), e.component.map(|c| c.name()), size)
                })
                .collect();
            if emit.fmt == OutputFormat::Text {
                let mut t = table(&["component", "kind", "size"]);
                for (n, c, s) in &rows {
                    t.add_row(vec![
                        n.clone(),
                        c.unwrap_or("unknown").to_string(),
                        s.map_or("missing".to_string(), |s| s.to_string()),
                    ]);
                }
                let note = if sst.toc_from_file {
                    ""
                } else {
                    "(no TOC.txt: components found on disk)\n"
                };
                emit.text(&format!("{note}{t}"))?;
            } else {
                let comps: Vec<_> = rows
                .iter()
                .map(|(n, c, s)| json!({"name": n, "component": c, "exists": s.is_some(), "size": s}))
                .collect();
                emit.json
                    .object(&json!({"toc_present": sst.toc_from_file, "components": comps}))?;
            }
            Ok(())
        },
    )
}
