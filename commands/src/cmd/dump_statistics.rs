//! `sstkit dump-statistics SSTABLE...`: Statistics.db, every field.
//!
//! ```text
//! sstkit dump-statistics nb-1-big-Data.db
//! sstkit dump-statistics --output text --histograms DIR
//! ```
//!
//! Text (the default at a terminal, json otherwise): the fields for people,
//! the histograms as percentiles, `--histograms` as bars.
//!
//! Reads: Statistics.db (one read of the whole file).
//!
//! JSON payload: the `scylla sstable dump-statistics` shape —
//! `{"offsets": {"validation"|"compaction"|"stats"|"serialization": offset},
//!   "validation": {"partitioner", "filter_chance"},
//!   "compaction": {"ancestors"?, "cardinality"?: [bytes], "cardinality_estimate"?},
//!   "stats": {"estimated_partition_size": [{"offset","value"}], "estimated_cells_count": [..],
//!             "position": {"id","pos"}, "min_timestamp", "max_timestamp",
//!             "min_local_deletion_time"?, "max_local_deletion_time", "min_ttl"?, "max_ttl"?,
//!             "compression_ratio", "estimated_tombstone_drop_time": {"<time>": count},
//!             "sstable_level", "repaired_at"?, "min_column_names", "max_column_names",
//!             "has_legacy_counter_shards"?, "columns_count"?, "rows_count"?,
//!             "commitlog_lower_bound"?, "commitlog_intervals"?: [{"start","end"}], ...},
//!   "serialization_header"?: {"min_timestamp_base", "min_local_deletion_time_base",
//!             "min_ttl_base", "pk_type_name", "clustering_key_types_names": [..],
//!             "static_columns": [{"name","type_name"}], "regular_columns": [..]}}`
//! — extended with the fields of Cassandra 4.0+ versions in `stats`:
//! `pending_repair`, `is_transient`, `originating_host_id`,
//! `has_partition_level_deletions`, `first_key`/`last_key` (`{"token","raw","value"}`),
//! `token_space_coverage`, `covered_clustering` (`{"types", "start", "end"}`), and
//! `checksums` (`na`+: per component stored/computed CRC). Histogram `offset` is
//! the bucket's stored offset, as in Scylla's output. A CRC mismatch is
//! reported on stderr and makes the input unreadable (exit 3); the fields
//! are still dumped.
//!
//! `jb` Statistics.db is one legacy blob: `offsets` is empty, and the fields
//! it does not store (`cardinality`, `repaired_at`, `has_legacy_counter_shards`,
//! `serialization_header`, ...) are left out.
//!
//! Exit status: 0 ok; 2 usage; 3 unreadable input (a missing, damaged or
//! truncated component; a checksum mismatch in the dumped component).

use std::io::Write;

use serde_json::{json, Map, Value};
use sstkit_format::statistics::stats::{ClusteringBound, Histogram, Stats, NO_DELETION_TIME};
use sstkit_format::statistics::{MetadataKind, SerializationHeader, Statistics};
use sstkit_format::types::CqlType;
use sstkit_format::Component;
use sstkit_format::{analytics, value};

use crate::cli::{DumpStatisticsArgs, OutputFormat};
use crate::output::{hex, kv_table};
use crate::plan::SstPlan;
use crate::render::{
    f64_json, format_micros_instant, format_seconds_instant, read_statistics, KeyCtx,
};
use crate::{for_each_sstable, CmdResult, Outcome};

fn histogram(h: &Histogram) -> Value {
    Value::Array(
        h.pairs
            .iter()
            .map(|(o, v)| json!({"offset": o, "value": v}))
            .collect(),
    )
}

fn position(p: &sstkit_format::statistics::stats::CommitLogPosition) -> Value {
    json!({"id": p.segment_id, "pos": p.position})
}

fn ldt(v: i64) -> Value {
    if v == NO_DELETION_TIME {
        json!(null)
    } else {
        json!(v)
    }
}

/// A clustering component: `{"raw", "value"}` (value absent when the type is
/// unknown or the bytes do not decode).
fn component(ty: Option<&CqlType>, bytes: &[u8]) -> Value {
    let mut v = json!({"raw": hex(bytes)});
    if let Some(t) = ty {
        if let Ok(x) = value::decode(t, bytes) {
            v["value"] = json!(crate::render::value_text(&x, crate::render::Form::Str));
        }
    }
    v
}

fn bound(b: &ClusteringBound, types: &[CqlType]) -> Value {
    let values: Vec<Value> = b
        .values
        .iter()
        .enumerate()
        .map(|(i, x)| match x {
            Some(bytes) => component(types.get(i), bytes),
            None => json!(null),
        })
        .collect();
    json!({"kind": b.kind, "inclusive": b.is_inclusive(), "start": b.is_start(), "values": values})
}

fn stats_json(s: &Stats, header: Option<&SerializationHeader>, ctx: &KeyCtx) -> Value {
    let ck_types: Vec<CqlType> = header
        .map(|h| h.clustering_types.clone())
        .unwrap_or_default();
    let legacy = |v: &Option<Vec<Vec<u8>>>| -> Value {
        match v {
            Some(vals) => Value::Array(
                vals.iter()
                    .enumerate()
                    .map(|(i, b)| component(ck_types.get(i), b))
                    .collect(),
            ),
            None => Value::Array(vec![]),
        }
    };
    let mut tomb = Map::new();
    for b in &s.tombstone_drop_time.bins {
        tomb.insert(b.time.to_string(), json!(b.count));
    }
    let mut o = Map::new();
    o.insert(
        "estimated_partition_size".into(),
        histogram(&s.estimated_partition_size),
    );
    o.insert(
        "estimated_cells_count".into(),
        histogram(&s.estimated_cells_count),
    );
    o.insert("position".into(), position(&s.commit_log_upper_bound));
    o.insert("min_timestamp".into(), json!(s.min_timestamp));
    o.insert("max_timestamp".into(), json!(s.max_timestamp));
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
    o.insert("compression_ratio".into(), f64_json(s.compression_ratio));
    o.insert("estimated_tombstone_drop_time".into(), Value::Object(tomb));
    if let Some(why) = &s.tombstone_drop_time.invalid {
        o.insert("estimated_tombstone_drop_time_invalid".into(), json!(why));
    }
    o.insert("sstable_level".into(), json!(s.sstable_level));
    if let Some(v) = s.repaired_at {
        o.insert("repaired_at".into(), json!(v));
    }
    o.insert("min_column_names".into(), legacy(&s.legacy_min_clustering));
    o.insert("max_column_names".into(), legacy(&s.legacy_max_clustering));
    if let Some(v) = s.has_legacy_counter_shards {
        o.insert("has_legacy_counter_shards".into(), json!(v));
    }
    if let Some(v) = s.total_columns_set {
        o.insert("columns_count".into(), json!(v));
    }
    if let Some(v) = s.total_rows {
        o.insert("rows_count".into(), json!(v));
    }
    if let Some(p) = &s.commit_log_lower_bound {
        o.insert("commitlog_lower_bound".into(), position(p));
    }
    if let Some(iv) = &s.commit_log_intervals {
        let v: Vec<Value> = iv
            .iter()
            .map(|(a, b)| json!({"start": position(a), "end": position(b)}))
            .collect();
        o.insert("commitlog_intervals".into(), Value::Array(v));
    }
    if let Some(p) = &s.pending_repair {
        o.insert("pending_repair".into(), json!(p.map(|u| u.to_string())));
    }
    if let Some(v) = s.is_transient {
        o.insert("is_transient".into(), json!(v));
    }
    if let Some(h) = &s.originating_host_id {
        o.insert(
            "originating_host_id".into(),
            json!(h.map(|u| u.to_string())),
        );
    }
    if let Some(v) = s.has_partition_level_deletions {
        o.insert("has_partition_level_deletions".into(), json!(v));
    }
    if let Some(cc) = &s.covered_clustering {
        o.insert(
            "covered_clustering".into(),
            json!({
                "types": cc.type_strings,
                "start": bound(&cc.start, &cc.types),
                "end": bound(&cc.end, &cc.types),
            }),
        );
    }
    if let Some(k) = &s.first_key {
        o.insert("first_key".into(), ctx.key_json(k));
    }
    if let Some(k) = &s.last_key {
        o.insert("last_key".into(), ctx.key_json(k));
    }
    if let Some(c) = s.token_space_coverage {
        o.insert("token_space_coverage".into(), f64_json(c));
    }
    Value::Object(o)
}

fn header_json(h: &SerializationHeader) -> Value {
    let cols = |cs: &[sstkit_format::statistics::ColumnDef]| -> Value {
        Value::Array(
            cs.iter()
                .map(|c| json!({"name": c.name, "type_name": c.type_string}))
                .collect(),
        )
    };
    json!({
        "min_timestamp_base": h.min_timestamp,
        "min_local_deletion_time_base": h.min_local_deletion_time,
        "min_ttl_base": h.min_ttl,
        "pk_type_name": h.partition_key_type_string,
        "clustering_key_types_names": h.clustering_type_strings,
        "static_columns": cols(&h.static_columns),
        "regular_columns": cols(&h.regular_columns),
    })
}

/// The JSON payload for one Statistics.db.
pub fn to_json(st: &Statistics) -> Value {
    let ctx = KeyCtx::from_statistics(st);
    let mut offsets = Map::new();
    let mut checksums = Vec::new();
    for c in &st.components {
        let name = match c.kind {
            Some(MetadataKind::Validation) => "validation".to_string(),
            Some(MetadataKind::Compaction) => "compaction".to_string(),
            Some(MetadataKind::Stats) => "stats".to_string(),
            Some(MetadataKind::Header) => "serialization".to_string(),
            None => format!("type_{}", c.ordinal),
        };
        offsets.insert(name.clone(), json!(c.offset));
        if let (Some(s), Some(k)) = (c.stored_crc, c.computed_crc) {
            checksums.push(json!({"component": name, "stored": s, "computed": k, "valid": s == k}));
        }
    }
    let mut o = Map::new();
    o.insert("offsets".into(), Value::Object(offsets));
    if let Some(v) = &st.validation {
        o.insert(
            "validation".into(),
            json!({"partitioner": v.partitioner, "filter_chance": f64_json(v.bloom_filter_fp_chance)}),
        );
    }
    if let Some(c) = &st.compaction {
        let mut m = Map::new();
        if let Some(a) = &c.ancestors {
            m.insert("ancestors".into(), json!(a));
        }
        if let Some(b) = &c.cardinality_bytes {
            m.insert("cardinality".into(), json!(b));
        }
        if let Some(card) = c.cardinality() {
            m.insert("cardinality_estimate".into(), json!(card.estimate));
        }
        o.insert("compaction".into(), Value::Object(m));
    }
    if let Some(s) = &st.stats {
        o.insert("stats".into(), stats_json(s, st.header.as_ref(), &ctx));
    }
    if let Some(h) = &st.header {
        o.insert("serialization_header".into(), header_json(h));
    }
    if !checksums.is_empty() {
        o.insert("checksums".into(), Value::Array(checksums));
    }
    Value::Object(o)
}

/// The percentiles of a stored histogram as Cassandra's tools estimate them,
/// then its largest bucket bound: `p50 1.2 KiB, ..., max 3.1 KiB`.
fn percentile_line(h: &Histogram, bytes: bool) -> String {
    let f = |x: Option<i64>| match x {
        Some(x) if bytes => crate::units::pretty_bytes(x.max(0) as u64),
        Some(x) => x.to_string(),
        None => "overflow".into(),
    };
    let mut parts: Vec<String> = analytics::PERCENTILES
        .iter()
        .map(|(name, p)| {
            format!(
                "{name} {}",
                f(analytics::stored_histogram_percentile(h, *p))
            )
        })
        .collect();
    let max = h.buckets().iter().rev().find(|b| b.1 > 0).map(|b| b.0);
    parts.push(format!("max {}", f(max.or(Some(0)))));
    parts.join(", ")
}

/// The text form: one row per field, times with their dates, histograms as
/// percentiles, the serialization header's columns.
fn text(st: &Statistics, v: &Value) -> String {
    let mut rows: Vec<(String, String)> = Vec::new();
    let plain = |x: &Value| match x {
        Value::String(s) => s.clone(),
        Value::Null => "none".to_string(),
        x => x.to_string(),
    };
    if let Some(val) = v.get("validation") {
        rows.push(("partitioner".into(), plain(&val["partitioner"])));
        rows.push((
            "bloom filter fp chance".into(),
            plain(&val["filter_chance"]),
        ));
    }
    if let Some(c) = v.get("compaction") {
        if let Some(a) = c.get("ancestors") {
            rows.push(("ancestors".into(), plain(a)));
        }
        if let Some(e) = c.get("cardinality_estimate") {
            rows.push(("partitions (HLL estimate)".into(), plain(e)));
        }
    }
    if let (Some(s), Some(sv)) = (&st.stats, v.get("stats").and_then(Value::as_object)) {
        let micros = |x: &Value| match x.as_i64() {
            Some(t) => format!("{t} ({})", format_micros_instant(t)),
            None => plain(x),
        };
        let secs = |x: &Value| match x.as_i64() {
            Some(t) => format!("{t} ({})", format_seconds_instant(t)),
            None => "none".to_string(),
        };
        // Fields shown with a better form, or as percentiles below.
        let skip = [
            "estimated_partition_size",
            "estimated_cells_count",
            "estimated_tombstone_drop_time",
            "first_key",
            "last_key",
        ];
        for (k, x) in sv {
            // Pre-3.0 fields, always empty since: nothing to read.
            let empty = x.as_array().is_some_and(Vec::is_empty);
            if skip.contains(&k.as_str()) || empty {
                continue;
            }
            let shown = match k.as_str() {
                "min_timestamp" | "max_timestamp" => micros(x),
                "min_local_deletion_time" | "max_local_deletion_time" => secs(x),
                "repaired_at" if x.as_i64() == Some(0) => "0 (unrepaired)".into(),
                "repaired_at" => match x.as_i64() {
                    Some(t) => format!("{t} ({})", format_micros_instant(t.saturating_mul(1000))),
                    None => plain(x),
                },
                "commitlog_intervals" => x.as_array().map_or(plain(x), |a| {
                    a.iter()
                        .map(|i| {
                            format!(
                                "{}:{} - {}:{}",
                                i["start"]["id"],
                                i["start"]["pos"],
                                i["end"]["id"],
                                i["end"]["pos"]
                            )
                        })
                        .collect::<Vec<_>>()
                        .join(", ")
                }),
                "position" | "commitlog_lower_bound" => format!("{}:{}", x["id"], x["pos"]),
                "covered_clustering" => {
                    let bound = |b: &Value| {
                        let vals: Vec<String> = b["values"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .map(|v| plain(v.get("value").unwrap_or(&v["raw"])))
                            .collect();
                        format!("({})", vals.join(", "))
                    };
                    format!("{} .. {}", bound(&x["start"]), bound(&x["end"]))
                }
                _ => plain(x),
            };
            let name = match k.as_str() {
                "position" => "commitlog upper bound".to_string(),
                k => k.replace('_', " "),
            };
            rows.push((name, shown));
        }
        rows.push((
            "partition size".into(),
            percentile_line(&s.estimated_partition_size, true),
        ));
        rows.push((
            "cells per partition".into(),
            percentile_line(&s.estimated_cells_count, false),
        ));
        let bins = &s.tombstone_drop_time.bins;
        let total: i64 = bins.iter().map(|b| b.count).sum();
        rows.push((
            "tombstone drop times".into(),
            match (
                bins.iter().map(|b| b.time).min(),
                bins.iter().map(|b| b.time).max(),
            ) {
                (Some(lo), Some(hi)) => format!(
                    "{total} in {} bins, {} .. {}",
                    bins.len(),
                    format_seconds_instant(lo),
                    format_seconds_instant(hi)
                ),
                _ => "none".into(),
            },
        ));
        for k in ["first_key", "last_key"] {
            if let Some(key) = sv.get(k) {
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
    }
    if let Some(h) = &st.header {
        // A composite key: its columns' types, as the clustering types are shown.
        let key = match &h.partition_key_type {
            CqlType::Composite(parts) => parts
                .iter()
                .map(CqlType::cql)
                .collect::<Vec<_>>()
                .join(", "),
            t => t.cql(),
        };
        rows.push(("partition key type".into(), key));
        let types: Vec<String> = h.clustering_types.iter().map(CqlType::cql).collect();
        rows.push((
            "clustering types".into(),
            if types.is_empty() {
                "none".into()
            } else {
                types.join(", ")
            },
        ));
        let cols = |c: &[sstkit_format::statistics::ColumnDef]| {
            if c.is_empty() {
                "none".to_string()
            } else {
                c.iter()
                    .map(|c| format!("{} {}", c.name, c.ty.cql()))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        };
        rows.push(("static columns".into(), cols(&h.static_columns)));
        rows.push(("regular columns".into(), cols(&h.regular_columns)));
    }
    for c in v["checksums"].as_array().into_iter().flatten() {
        rows.push((
            format!("checksum of {}", plain(&c["component"])),
            if c["valid"] == true {
                "ok".to_string()
            } else {
                format!(
                    "MISMATCH (stored {}, computed {})",
                    c["stored"], c["computed"]
                )
            },
        ));
    }
    kv_table(&rows).to_string()
}

/// Run the command.
pub fn run(a: &DumpStatisticsArgs, out: &mut dyn Write) -> CmdResult<Outcome> {
    let width = crate::term::width(crate::term::Stream::Stdout);
    for_each_sstable(
        &SstPlan::text_at_terminal(&a.sst)?,
        false,
        out,
        |sst, emit| {
            let st = read_statistics(sst)?;
            let v = to_json(&st);
            if emit.fmt == OutputFormat::Text {
                let mut body = text(&st, &v);
                if a.histograms {
                    if let Some(s) = &st.stats {
                        body.push_str(&crate::output::histogram::stats_histogram_bars(s, width));
                    }
                }
                emit.text(&body)?;
            } else {
                emit.json.object(&v)?;
            }
            // The fields are dumped for inspection, but a checksum mismatch
            // makes the component unreadable input (exit 3): every mismatch
            // on stderr but the last, which goes out as the sstable's error.
            let mut mismatches = st
                .problems
                .iter()
                .map(|p| p.clone().in_file(&sst.path(Component::Statistics)));
            let last = mismatches.next_back();
            for p in mismatches {
                eprintln!("sstkit: {p}");
            }
            match last {
                Some(e) => Err(e.into()),
                None => Ok(()),
            }
        },
    )
}
