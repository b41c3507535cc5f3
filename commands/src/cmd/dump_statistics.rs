//! `sstkit dump-statistics SSTABLE...`: Statistics.db, every field.
//!
//! ```text
//! sstkit dump-statistics nb-1-big-Data.db
//! sstkit dump-statistics --output text DIR
//! ```
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
use sstkit_format::value;
use sstkit_format::Component;

use crate::cli::{OutputFormat, SstArgs};
use crate::output::{hex, json_text_table};
use crate::render::{f64_json, read_statistics, KeyCtx};
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

/// Run the command.
pub fn run(a: &SstArgs, out: &mut dyn Write) -> CmdResult<Outcome> {
    for_each_sstable(
        &a.sstables,
        &a.common,
        OutputFormat::Json,
        false,
        out,
        |sst, emit| {
            let st = read_statistics(sst)?;
            let v = to_json(&st);
            if emit.fmt == OutputFormat::Text {
                emit.text(&json_text_table(&v).to_string())?;
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
