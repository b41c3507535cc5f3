//! `sstkit dump-compression-info SSTABLE...`: CompressionInfo.db.
//!
//! ```text
//! sstkit dump-compression-info nb-1-big-Data.db
//! ```
//!
//! Reads: CompressionInfo.db (one read) and the size of Data.db.
//! JSON payload (the `scylla sstable dump-compression-info` shape, extended):
//! `{"name", "options": {k: v}, "chunk_len", "data_len", "offsets": [..],
//!   "max_compressed_length"?, "chunk_count", "compressed_len", "ratio"}`.
//! Option values that are not UTF-8 (Scylla dictionaries) are shown as hex.
//! NDJSON: one line per sstable with the same fields.
//!
//! Exit status: 0 ok; 2 usage; 3 unreadable input (a missing, damaged or
//! truncated component; a checksum mismatch in the dumped component).

use std::io::Write;

use serde_json::{json, Map, Value};
use sstkit_format::compression::CompressionInfo;
use sstkit_format::Component;

use crate::cli::{OutputFormat, SstArgs};
use crate::output::{hex, json_text_table};
use crate::plan::SstPlan;
use crate::render::f64_json;
use crate::{for_each_sstable, CmdResult, Outcome};

/// The JSON payload for one sstable.
pub fn to_json(ci: &CompressionInfo, data_file_len: Option<u64>) -> Value {
    let mut opts = Map::new();
    for o in &ci.options {
        let v = match std::str::from_utf8(&o.value) {
            Ok(s) if !s.contains('\0') => s.to_string(),
            _ => format!("0x{}", hex(&o.value)),
        };
        opts.insert(o.key.clone(), Value::String(v));
    }
    let mut v = json!({
        "name": ci.compressor_class,
        "options": opts,
        "chunk_len": ci.chunk_length,
        "data_len": ci.data_length,
        "offsets": ci.chunk_offsets,
        "chunk_count": ci.chunk_offsets.len(),
    });
    if let Some(m) = ci.max_compressed_length {
        v["max_compressed_length"] = json!(m);
    }
    if let Some(len) = data_file_len {
        v["compressed_len"] = json!(len);
        if ci.data_length > 0 {
            v["ratio"] = f64_json(len as f64 / ci.data_length as f64);
        }
    }
    v
}

/// Run the command.
pub fn run(a: &SstArgs, out: &mut dyn Write) -> CmdResult<Outcome> {
    for_each_sstable(
        &SstPlan::resolve(a, OutputFormat::Json)?,
        false,
        out,
        |sst, emit| {
            let bytes = sst.read_component(Component::CompressionInfo)?;
            let ci = CompressionInfo::parse(&bytes, &sst.features())
                .map_err(|e| e.in_file(&sst.path(Component::CompressionInfo)))?;
            let data_len = sst.io.len(Component::Data).ok();
            let v = to_json(&ci, data_len);
            if emit.fmt == OutputFormat::Text {
                let mut summary = v.clone();
                if let Some(o) = summary.as_object_mut() {
                    o.remove("offsets");
                }
                let mut t = crate::output::table(&["chunk", "offset", "stored length"]);
                for (i, off) in ci.chunk_offsets.iter().enumerate() {
                    let len = ci
                        .chunk_range(i, data_len.unwrap_or(0))
                        .map(|r| (r.end - r.start).to_string())
                        .unwrap_or_else(|e| format!("({e})"));
                    t.add_row(vec![i.to_string(), off.to_string(), len]);
                }
                emit.text(&format!("{}\n{t}", json_text_table(&summary)))?;
            } else {
                emit.json.object(&v)?;
            }
            Ok(())
        },
    )
}
