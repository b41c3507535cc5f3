//! `sstkit dump-filter SSTABLE... [--key K]... [--key-hex H]...`: Filter.db.
//!
//! ```text
//! sstkit dump-filter nb-1-big-Data.db
//! sstkit dump-filter nb-1-big-Data.db --key 42 --key-hex 0000002a
//! ```
//!
//! Reads: Filter.db (one read); Statistics.db when `--key` needs the key type.
//! JSON payload: `{"hash_count", "word_count", "bit_count", "bits_set",
//! "fill_ratio", "false_positive_estimate", "estimated_keys"?, "layout",
//! "hash_order", "keys"?: [{"key": {"token","raw","value"}, "may_contain"}]}`.
//! A missing Filter.db is reported (the engines then treat every key as
//! "maybe present"). Exit status is 0 whatever the answer: "absent" is an
//! answer, not a problem.
//!
//! Exit status: 0 ok; 2 usage; 3 unreadable input (a missing, damaged or
//! truncated component; a checksum mismatch in the dumped component).

use std::io::Write;

use serde_json::{json, Value};
use sstkit_format::filter::BloomFilter;
use sstkit_format::Component;

use crate::cli::{DumpFilterArgs, OutputFormat};
use crate::output::json_text_table;
use crate::plan::select::parse_hex;
use crate::plan::SstPlan;
use crate::render::{f64_json, KeyCtx};
use crate::{for_each_sstable, CmdError, CmdResult, Outcome};

/// Run the command.
pub fn run(a: &DumpFilterArgs, out: &mut dyn Write) -> CmdResult<Outcome> {
    let hex_keys: Vec<Vec<u8>> = a
        .key_hex
        .iter()
        .map(|h| parse_hex("--key-hex", h))
        .collect::<CmdResult<_>>()?;
    for_each_sstable(
        &SstPlan::resolve(&a.sst, OutputFormat::Json)?,
        false,
        out,
        |sst, emit| {
            let bytes = sst.read_component(Component::Filter)?;
            let f = BloomFilter::parse(&bytes, &sst.features())
                .map_err(|e| e.in_file(&sst.path(Component::Filter)))?;
            let mut v = json!({
                "hash_count": f.hash_count(),
                "word_count": f.word_count(),
                "bit_count": f.bit_count(),
                "bits_set": f.bits_set(),
                "fill_ratio": f64_json(f.fill_ratio()),
                "false_positive_estimate": f64_json(f.false_positive_estimate()),
                "layout": if f.old_format() { "big-endian words (< na, Scylla)" } else { "bytes (na+)" },
                "hash_order": if f.old_hash_order() { "h0, h1 (pre-3.0: jb..lb)" } else { "h1, h0 (ma+)" },
            });
            if let Some(n) = f.estimated_keys() {
                v["estimated_keys"] = f64_json(n.round());
            }
            if !a.key.is_empty() || !hex_keys.is_empty() {
                let ctx = KeyCtx::read(sst)?;
                let mut keys: Vec<Vec<u8>> = Vec::new();
                for k in &a.key {
                    keys.push(
                        ctx.parse_key(k)
                            .map_err(|e| CmdError::Usage(format!("--key {k:?}: {e}")))?,
                    );
                }
                keys.extend(hex_keys.iter().cloned());
                let answers: Vec<Value> = keys
                    .iter()
                    .map(|k| json!({"key": ctx.key_json(k), "may_contain": f.may_contain(k)}))
                    .collect();
                v["keys"] = Value::Array(answers);
            }
            if emit.fmt == OutputFormat::Text {
                emit.text(&json_text_table(&v).to_string())?;
            } else {
                emit.json.object(&v)?;
            }
            Ok(())
        },
    )
}
