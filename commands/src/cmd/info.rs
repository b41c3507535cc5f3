//! `sstkit info SSTABLE...`: a one-screen summary of each sstable.
//!
//! ```text
//! sstkit info nb-1-big-Data.db
//! sstkit info --output json /var/lib/cassandra/data/ks/t-1234/
//! ```
//!
//! Reads: TOC.txt, Statistics.db, CompressionInfo.db (compressed sstables),
//! Summary.db (first/last key for versions that do not store them in
//! Statistics.db), Scylla.db (names, when present), and the size of every
//! component (no reads).
//!
//! JSON payload: `{"version", "format", "generation", "partitioner",
//! "components": {suffix: size}, "data_size", "compression"?: {"compressor",
//! "chunk_length", "uncompressed_size", "ratio"}, "estimated_partitions",
//! "estimated_partitions_hll"?, "rows"?, "min_timestamp", "max_timestamp",
//! "min_local_deletion_time"?, "max_local_deletion_time"?, "min_ttl"?,
//! "max_ttl"?, "first_key"?, "last_key"? ({"token","raw","value"}), "repaired_at",
//! "sstable_level", "schema"?}`. Timestamps are microseconds, local deletion
//! times seconds; the text form also shows them as UTC dates.
//!
//! Exit status: 0 ok; 2 usage; 3 unreadable input (a missing, damaged or
//! truncated component; a checksum mismatch in the dumped component).

use std::io::Write;

use crate::render::{format_micros_instant, format_seconds_instant};
use serde_json::{json, Map, Value};
use sstkit_format::compression::CompressionInfo;
use sstkit_format::statistics::stats::NO_DELETION_TIME;
use sstkit_format::statistics::Statistics;
use sstkit_format::summary::Summary;
use sstkit_format::{Component, Sstable};

use crate::cli::{InfoArgs, OutputFormat};
use crate::output::kv_table;
use crate::render::{f64_json, KeyCtx};
use crate::{for_each_sstable, CmdResult, Outcome};

fn collect(sst: &Sstable) -> CmdResult<Value> {
    // Salvage: a damaged histogram is reported, the other fields still shown.
    let path = sst.path(Component::Statistics);
    let st = Statistics::parse_salvage(&sst.read_component(Component::Statistics)?, sst.features())
        .map_err(|e| e.in_file(&path))?;
    let ctx = KeyCtx::from_statistics(&st);
    let mut o = Map::new();
    o.insert("version".into(), json!(sst.version().as_str()));
    o.insert("format".into(), json!(sst.desc.format.name()));
    o.insert("generation".into(), json!(sst.desc.generation.to_string()));
    o.insert(
        "partitioner".into(),
        json!(st.validation.as_ref().map(|v| v.partitioner.clone())),
    );
    let mut comps = Map::new();
    for e in &sst.toc.entries {
        let size = std::fs::metadata(sst.desc.path_of(&e.name))
            .ok()
            .map(|m| m.len());
        comps.insert(e.name.clone(), json!(size));
    }
    o.insert("components".into(), Value::Object(comps));
    let data_size = sst.io.len(Component::Data).ok();
    o.insert("data_size".into(), json!(data_size));
    if sst.has(Component::CompressionInfo) {
        let ci = CompressionInfo::parse(
            &sst.read_component(Component::CompressionInfo)?,
            &sst.features(),
        )
        .map_err(|e| e.in_file(&sst.path(Component::CompressionInfo)))?;
        let ratio = match (data_size, ci.data_length) {
            (Some(d), u) if u > 0 => f64_json(d as f64 / u as f64),
            _ => Value::Null,
        };
        o.insert(
            "compression".into(),
            json!({
                "compressor": ci.compressor_class,
                "chunk_length": ci.chunk_length,
                "uncompressed_size": ci.data_length,
                "ratio": ratio,
            }),
        );
    }
    if let Some(s) = &st.stats {
        if !s.damaged.is_empty() {
            let msgs: Vec<String> = s
                .damaged
                .iter()
                .map(|e| e.clone().in_file(&path).to_string())
                .collect();
            for m in &msgs {
                eprintln!("sstkit: warning: {m}; shown as damaged, the other fields are read");
            }
            o.insert("damaged".into(), json!(msgs));
        }
        let partitions: i64 = s.estimated_partition_size.pairs.iter().map(|p| p.1).sum();
        let histogram_damaged = s.damaged.iter().any(|e| e.what.contains("partition size"));
        o.insert(
            "estimated_partitions".into(),
            if histogram_damaged {
                Value::Null
            } else {
                json!(partitions)
            },
        );
        if let Some(c) = st.compaction.as_ref().and_then(|c| c.cardinality()) {
            o.insert("estimated_partitions_hll".into(), json!(c.estimate));
        }
        if let Some(r) = s.total_rows {
            o.insert("rows".into(), json!(r));
        }
        o.insert("min_timestamp".into(), json!(s.min_timestamp));
        o.insert("max_timestamp".into(), json!(s.max_timestamp));
        let ldt = |v: i64| {
            if v == NO_DELETION_TIME {
                Value::Null
            } else {
                json!(v)
            }
        };
        if let Some(v) = s.min_local_deletion_time {
            o.insert("min_local_deletion_time".into(), ldt(v));
        }
        o.insert(
            "max_local_deletion_time".into(),
            ldt(s.max_local_deletion_time),
        );
        if let Some(v) = s.min_ttl {
            o.insert("min_ttl".into(), json!(v));
        }
        if let Some(v) = s.max_ttl {
            o.insert("max_ttl".into(), json!(v));
        }
        if let Some(v) = s.repaired_at {
            o.insert("repaired_at".into(), json!(v));
        }
        o.insert("sstable_level".into(), json!(s.sstable_level));
        if let (Some(f), Some(l)) = (&s.first_key, &s.last_key) {
            o.insert("first_key".into(), ctx.key_json(f));
            o.insert("last_key".into(), ctx.key_json(l));
        }
    }
    if !o.contains_key("first_key") && sst.has(Component::Summary) {
        if let Ok(s) = Summary::parse(&sst.read_component(Component::Summary)?, &sst.features()) {
            o.insert("first_key".into(), ctx.key_json(&s.first_key));
            o.insert("last_key".into(), ctx.key_json(&s.last_key));
        }
    }
    if st.header.is_some() {
        if let Ok((schema, names)) = super::dump_schema::table_schema(sst) {
            let (ks, t) = names
                .or_else(|| super::dump_schema::names_from_path(sst))
                .unwrap_or_else(|| ("ks".into(), "tbl".into()));
            o.insert("schema".into(), json!(schema.to_create_table(&ks, &t)));
        }
    }
    Ok(Value::Object(o))
}

fn text(v: &Value) -> String {
    let mut rows: Vec<(String, String)> = Vec::new();
    let s = |k: &str| {
        v.get(k).map_or("-".to_string(), |x| match x {
            Value::String(s) => s.clone(),
            Value::Null => "-".to_string(),
            x => x.to_string(),
        })
    };
    for k in ["version", "format", "generation", "partitioner"] {
        rows.push((k.replace('_', " "), s(k)));
    }
    if let Some(c) = v.get("compression") {
        rows.push((
            "compression".into(),
            format!(
                "{} chunk {} B, {} -> {} bytes (ratio {:.3})",
                c["compressor"].as_str().unwrap_or("?"),
                c["chunk_length"],
                c["uncompressed_size"],
                v["data_size"],
                c["ratio"].as_f64().unwrap_or(f64::NAN)
            ),
        ));
    } else {
        rows.push((
            "compression".into(),
            format!("none ({} bytes)", s("data_size")),
        ));
    }
    rows.push(("estimated partitions".into(), s("estimated_partitions")));
    if v.get("estimated_partitions_hll").is_some() {
        rows.push((
            "partitions (HLL estimate)".into(),
            s("estimated_partitions_hll"),
        ));
    }
    if v.get("rows").is_some() {
        rows.push(("rows".into(), s("rows")));
    }
    let ts = |k: &str| match v.get(k).and_then(Value::as_i64) {
        Some(x) => format!("{x} ({})", format_micros_instant(x)),
        None => "-".to_string(),
    };
    let secs = |k: &str| match v.get(k).and_then(Value::as_i64) {
        Some(x) => format!("{x} ({})", format_seconds_instant(x)),
        None => "none".to_string(),
    };
    rows.push(("min timestamp".into(), ts("min_timestamp")));
    rows.push(("max timestamp".into(), ts("max_timestamp")));
    rows.push((
        "min local deletion time".into(),
        secs("min_local_deletion_time"),
    ));
    rows.push((
        "max local deletion time".into(),
        secs("max_local_deletion_time"),
    ));
    rows.push(("min ttl".into(), s("min_ttl")));
    rows.push(("max ttl".into(), s("max_ttl")));
    rows.push(("repaired at".into(), s("repaired_at")));
    rows.push(("sstable level".into(), s("sstable_level")));
    for k in ["first_key", "last_key"] {
        if let Some(key) = v.get(k) {
            rows.push((
                k.replace('_', " "),
                format!(
                    "{} (token {}, 0x{})",
                    key["value"].as_str().unwrap_or(""),
                    key["token"].as_str().unwrap_or(""),
                    key["raw"].as_str().unwrap_or("")
                ),
            ));
        }
    }
    if let Some(Value::Object(c)) = v.get("components") {
        for (name, size) in c {
            rows.push((
                format!("  {name}"),
                size.as_u64()
                    .map_or("missing".into(), |x| format!("{x} bytes")),
            ));
        }
    }
    if let Some(Value::Array(d)) = v.get("damaged") {
        for m in d {
            rows.push(("damaged".into(), m.as_str().unwrap_or("").to_string()));
        }
    }
    let mut out = kv_table(&rows).to_string();
    if let Some(schema) = v.get("schema").and_then(Value::as_str) {
        out.push('\n');
        out.push_str(schema);
    }
    out
}

/// Run the command.
pub fn run(a: &InfoArgs, out: &mut dyn Write) -> CmdResult<Outcome> {
    for_each_sstable(
        &a.sst.sstables,
        &a.sst.common,
        OutputFormat::Text,
        false,
        out,
        |sst, emit| {
            let v = collect(sst)?;
            if emit.fmt == OutputFormat::Text {
                emit.text(&text(&v))?;
            } else {
                emit.json.object(&v)?;
            }
            Ok(())
        },
    )
}
