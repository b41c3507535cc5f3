//! `sstkit dump-summary SSTABLE...`: Summary.db.
//!
//! ```text
//! sstkit dump-summary nb-1-big-Data.db
//! ```
//!
//! Reads: Summary.db (one read), Statistics.db (key type and partitioner).
//! JSON payload (the `scylla sstable dump-summary` shape):
//! `{"header": {"min_index_interval", "size", "memory_size", "sampling_level",
//! "size_at_full_sampling", "effective_interval"}, "positions": [..],
//! "entries": [{"key": {"token","raw","value"}, "position"}],
//! "first_key": {..}, "last_key": {..}}`. `positions` are the entries'
//! offsets in the summary's offsets table; `position` of an entry is its
//! offset in Index.db. NDJSON: one line per entry (`"entry": i`), then
//! first/last keys on a final line. `jb` summaries store no sampling fields:
//! their header has no `sampling_level` or `size_at_full_sampling`.
//!
//! A Summary.db cut short or damaged is unreadable input (exit 3), the error
//! naming the file and offset; for `ka`/`la`/`jb` that includes the
//! segment-boundary trailer after the last key
//! ([`Summary::check_trailer`](sstkit_format::summary::Summary::check_trailer)).
//!
//! Exit status: 0 ok; 2 usage; 3 unreadable input (a missing, damaged or
//! truncated component; a checksum mismatch in the dumped component).

use std::io::Write;

use serde_json::{json, Value};
use sstkit_format::summary::Summary;
use sstkit_format::Component;

use crate::cli::{OutputFormat, SstArgs};
use crate::output::{json_text_table, table};
use crate::plan::SstPlan;
use crate::render::KeyCtx;
use crate::{for_each_sstable, CmdResult, Outcome};

/// Run the command.
pub fn run(a: &SstArgs, out: &mut dyn Write) -> CmdResult<Outcome> {
    for_each_sstable(
        &SstPlan::resolve(a, OutputFormat::Json)?,
        false,
        out,
        |sst, emit| {
            let bytes = sst.read_component(Component::Summary)?;
            let s = Summary::parse(&bytes, &sst.features())
                .and_then(|s| s.check_trailer(&bytes).map(|()| s))
                .map_err(|e| e.in_file(&sst.path(Component::Summary)))?;
            let ctx = KeyCtx::read(sst)?;
            let h = &s.header;
            // The offsets table: entry i starts offsets[i] bytes after the table start.
            let mut positions = Vec::with_capacity(s.entries.len());
            let mut off = 4 * s.entries.len() as u64;
            for e in &s.entries {
                positions.push(off);
                off += e.key.len() as u64 + 8;
            }
            let mut header = json!({
                "min_index_interval": h.min_index_interval,
                "size": h.offset_count,
                "memory_size": h.entries_size,
                "sampling_level": h.sampling_level,
                "size_at_full_sampling": h.size_at_full_sampling,
                "effective_interval": h.effective_interval(),
            });
            // `jb` summaries store no sampling fields: leave them out.
            if let Value::Object(m) = &mut header {
                m.retain(|_, v| !v.is_null());
            }
            match emit.fmt {
                OutputFormat::Text => {
                    let mut t = table(&["#", "token", "key", "index position"]);
                    for (i, e) in s.entries.iter().enumerate() {
                        t.add_row(vec![
                            i.to_string(),
                            ctx.partitioner.token(&e.key).to_string(),
                            ctx.key_text(&e.key),
                            e.index_position.to_string(),
                        ]);
                    }
                    let keys = json!({
                        "first_key": ctx.key_json(&s.first_key),
                        "last_key": ctx.key_json(&s.last_key),
                    });
                    emit.text(&format!(
                        "{}\n{t}\n{}",
                        json_text_table(&header),
                        json_text_table(&keys)
                    ))?;
                }
                OutputFormat::Ndjson => {
                    for (i, e) in s.entries.iter().enumerate() {
                        emit.json.item(&json!({
                            "entry": i,
                            "key": ctx.key_json(&e.key),
                            "position": e.index_position,
                        }))?;
                    }
                    emit.json.item(&json!({
                        "header": header,
                        "first_key": ctx.key_json(&s.first_key),
                        "last_key": ctx.key_json(&s.last_key),
                    }))?;
                }
                OutputFormat::Json => {
                    let entries: Vec<Value> = s
                        .entries
                        .iter()
                        .map(|e| json!({"key": ctx.key_json(&e.key), "position": e.index_position}))
                        .collect();
                    emit.json.object(&json!({
                        "header": header,
                        "positions": positions,
                        "entries": entries,
                        "first_key": ctx.key_json(&s.first_key),
                        "last_key": ctx.key_json(&s.last_key),
                    }))?;
                }
            }
            Ok(())
        },
    )
}
