//! `sstkit token KEY... [--sstable S | --type T] [--hex] [--partitioner P]`:
//! the token of partition keys.
//!
//! ```text
//! sstkit token --type int 1 2 3
//! sstkit token --type text:int 'sa:11'          # composite key (text, int)
//! sstkit token --sstable nb-1-big-Data.db 42
//! sstkit token --hex 0000002a
//! ```
//!
//! Reads: Statistics.db of `--sstable` (key type and partitioner), nothing
//! otherwise. JSON payload: an array of `{"input", "token", "raw", "value"}`;
//! the wrapper key is the sstable path, or `"anonymous"` without `--sstable`
//! (as `scylla sstable` does for merged input).
//!
//! Exit status: 0 ok; 2 usage (a key that does not parse, no type given); 3 an
//! unreadable `--sstable`.

use std::io::Write;

use serde_json::json;
use sstkit_format::schema::TableSchema;
use sstkit_format::token::Partitioner;
use sstkit_format::types::CqlType;

use crate::cli::{OutputFormat, PartitionerArg, TokenArgs};
use crate::output::{table, JsonOut};
use crate::plan::select::{parse_hex, parse_key};
use crate::render::KeyCtx;
use crate::{sstable_label, CmdError, CmdResult, Outcome};

/// Parse one CQL type name (`int`, `frozen<list<text>>`) or marshal class string.
pub fn parse_type_arg(s: &str) -> Result<CqlType, String> {
    let s = s.trim();
    if s.contains("marshal.") || s.starts_with(|c: char| c.is_ascii_uppercase()) {
        return CqlType::parse(s).map_err(|e| e.to_string());
    }
    let ddl = format!("CREATE TABLE sstkit_t (k {s} PRIMARY KEY)");
    let t = TableSchema::from_cql(&ddl).map_err(|e| format!("bad type {s:?}: {e}"))?;
    Ok(t.partition_key_type())
}

/// Parse `--type`: one type, or several joined with ':' for a composite key.
pub fn parse_key_type(s: &str) -> Result<CqlType, String> {
    let parts: Vec<&str> = if s.contains("marshal.") {
        vec![s]
    } else {
        s.split(':').collect()
    };
    let types: Vec<CqlType> = parts
        .iter()
        .map(|p| parse_type_arg(p))
        .collect::<Result<_, _>>()?;
    Ok(if types.len() == 1 {
        types
            .into_iter()
            .next()
            .unwrap_or(CqlType::Custom(String::new()))
    } else {
        CqlType::Composite(types)
    })
}

/// Run the command.
pub fn run(a: &TokenArgs, out: &mut dyn Write) -> CmdResult<Outcome> {
    let (ctx, label) = match &a.sstable {
        Some(p) => {
            let sst = crate::plan::inputs::open_one("--sstable", p)?;
            let mut ctx = KeyCtx::read(&sst)?;
            if let Some(t) = &a.key_type {
                ctx.key_type = Some(parse_key_type(t).map_err(CmdError::Usage)?);
            }
            (ctx, sstable_label(&sst))
        }
        None => {
            let partitioner = match a.partitioner {
                PartitionerArg::Murmur3 => Partitioner::Murmur3,
                PartitionerArg::Random => Partitioner::Random,
                PartitionerArg::ByteOrdered => Partitioner::ByteOrdered,
            };
            let key_type = match &a.key_type {
                Some(t) => Some(parse_key_type(t).map_err(CmdError::Usage)?),
                None if a.hex => None,
                None => return Err(CmdError::Usage("give --type, --sstable or --hex".into())),
            };
            (
                KeyCtx {
                    partitioner,
                    key_type,
                },
                "anonymous".to_string(),
            )
        }
    };
    let mut rows = Vec::new();
    for k in &a.keys {
        let bytes = if a.hex {
            parse_hex("--hex", k)?
        } else if let Some(kt) = &ctx.key_type {
            parse_key(kt, k)?
        } else {
            ctx.parse_key(k)
                .map_err(|e| CmdError::Usage(format!("key {k:?}: {e}")))?
        };
        let mut v = ctx.key_json(&bytes);
        v["input"] = json!(k);
        rows.push(v);
    }
    let fmt = a.output.unwrap_or(OutputFormat::Json);
    if fmt == OutputFormat::Text {
        let mut t = table(&["input", "token", "raw", "value"]);
        for r in &rows {
            let s = |k: &str| r[k].as_str().unwrap_or("").to_string();
            t.add_row(vec![s("input"), s("token"), s("raw"), s("value")]);
        }
        writeln!(out, "{t}")?;
    } else {
        let mut j = JsonOut::new(out, fmt);
        j.begin_sstable(&label)?;
        for r in &rows {
            j.item(r)?;
        }
        j.end_sstable(true, None)?;
        j.finish()?;
    }
    Ok(Outcome::default())
}
