//! `sstkit dump-scylla-metadata SSTABLE...`: Scylla.db.
//!
//! ```text
//! sstkit dump-scylla-metadata me-1-big-Data.db
//! ```
//!
//! Reads: Scylla.db (one read). The JSON payload follows
//! `scylla sstable dump-scylla-metadata`: one key per sub-component present
//! (`sharding`, `features`, `extension_attributes`, `run_identifier`,
//! `large_data_stats`, `sstable_origin`, `scylla_build_id`, `scylla_version`,
//! `ext_timestamp_stats`, `sstable_identifier`, `schema`,
//! `components_digests`, `large_data_records`, and `unknown_<tag>` as hex),
//! plus `digest` `{"stored", "computed", "valid"}` when the trailing digest
//! exists. A digest mismatch is reported on stderr and makes the input
//! unreadable (exit 3; the fields are still dumped); an sstable without Scylla.db (Cassandra-written) is an
//! unreadable-input error naming the missing component.
//!
//! Exit status: 0 ok; 2 usage; 3 unreadable input (a missing, damaged or
//! truncated component; a checksum mismatch in the dumped component).

use std::io::Write;

use serde_json::{json, Map, Value};
use sstkit_format::scylla::{
    component_type_name, ext_timestamp_type_name, large_data_type_name, ScyllaComponent,
    ScyllaMetadata, TokenBound,
};
use sstkit_format::{Component, Error, ErrorKind};

use crate::cli::{OutputFormat, SstArgs};
use crate::output::{hex, json_text_table};
use crate::plan::SstPlan;
use crate::{for_each_sstable, CmdResult, Outcome};

fn bound(b: &TokenBound) -> Value {
    let token = match b.murmur3() {
        Some(t) => t.to_string(),
        None => hex(&b.token),
    };
    json!({"exclusive": b.exclusive, "token": token})
}

fn text(b: &[u8]) -> Value {
    match std::str::from_utf8(b) {
        Ok(s) => Value::String(s.to_string()),
        Err(_) => Value::String(format!("0x{}", hex(b))),
    }
}

/// The JSON payload for one Scylla.db.
pub fn to_json(m: &ScyllaMetadata) -> Value {
    let mut o = Map::new();
    for c in &m.components {
        let (k, v) = match c {
            ScyllaComponent::Sharding(rs) => (
                "sharding".to_string(),
                Value::Array(
                    rs.iter().map(|r| json!({"left": bound(&r.left), "right": bound(&r.right)})).collect(),
                ),
            ),
            ScyllaComponent::Features(f) => {
                ("features".into(), json!({"mask": f.0, "features": f.names()}))
            }
            ScyllaComponent::ExtensionAttributes(kv) => {
                let mut m = Map::new();
                for (k, v) in kv {
                    m.insert(String::from_utf8_lossy(k).into_owned(), text(v));
                }
                ("extension_attributes".into(), Value::Object(m))
            }
            ScyllaComponent::RunIdentifier(u) => ("run_identifier".into(), json!(u.to_string())),
            ScyllaComponent::LargeDataStats(s) => {
                let mut m = Map::new();
                for e in s {
                    let name = large_data_type_name(e.kind)
                        .map_or_else(|| format!("type_{}", e.kind), str::to_string);
                    m.insert(
                        name,
                        json!({"max_value": e.max_value, "threshold": e.threshold, "above_threshold": e.above_threshold}),
                    );
                }
                ("large_data_stats".into(), Value::Object(m))
            }
            ScyllaComponent::SstableOrigin(s) => ("sstable_origin".into(), json!(s)),
            ScyllaComponent::ScyllaBuildId(s) => ("scylla_build_id".into(), json!(s)),
            ScyllaComponent::ScyllaVersion(s) => ("scylla_version".into(), json!(s)),
            ScyllaComponent::ExtTimestampStats(s) => {
                let mut m = Map::new();
                for (kind, v) in s {
                    let name = ext_timestamp_type_name(*kind)
                        .map_or_else(|| format!("type_{kind}"), str::to_string);
                    m.insert(name, json!(v));
                }
                ("ext_timestamp_stats".into(), Value::Object(m))
            }
            ScyllaComponent::SstableIdentifier(u) => ("sstable_identifier".into(), json!(u.to_string())),
            ScyllaComponent::Schema(s) => (
                "schema".into(),
                json!({
                    "id": s.table_id.to_string(),
                    "version": s.version.to_string(),
                    "keyspace_name": s.keyspace,
                    "table_name": s.table,
                    "columns": s.columns.iter().map(|c| json!({
                        "kind": c.kind_name().map_or_else(|| c.kind.to_string(), str::to_string),
                        "name": c.name,
                        "type": c.type_name,
                    })).collect::<Vec<_>>(),
                }),
            ),
            ScyllaComponent::ComponentsDigests(d) => {
                let mut m = Map::new();
                for (t, crc) in d {
                    let name = component_type_name(*t).map_or_else(|| format!("type_{t}"), str::to_string);
                    m.insert(name, json!(crc));
                }
                ("components_digests".into(), Value::Object(m))
            }
            ScyllaComponent::LargeDataRecords(rs) => (
                "large_data_records".into(),
                Value::Array(
                    rs.iter()
                        .map(|r| {
                            json!({
                                "type": large_data_type_name(r.kind).map_or_else(|| r.kind.to_string(), str::to_string),
                                "partition_key": hex(&r.partition_key),
                                "clustering_key": hex(&r.clustering_key),
                                "column_name": r.column_name,
                                "value": r.value,
                                "elements_count": r.elements_count,
                                "range_tombstones": r.range_tombstones,
                                "dead_rows": r.dead_rows,
                            })
                        })
                        .collect(),
                ),
            ),
            ScyllaComponent::Unknown { tag, bytes } => (format!("unknown_{tag}"), json!(hex(bytes))),
        };
        o.insert(k, v);
    }
    if let Some(d) = &m.digest {
        o.insert(
            "digest".into(),
            json!({"stored": d.stored, "computed": d.computed, "valid": d.stored == d.computed}),
        );
    }
    Value::Object(o)
}

/// Run the command.
pub fn run(a: &SstArgs, out: &mut dyn Write) -> CmdResult<Outcome> {
    for_each_sstable(
        &SstPlan::resolve(a, OutputFormat::Json)?,
        false,
        out,
        |sst, emit| {
            let bytes = sst.read_component(Component::Scylla)?;
            let m = ScyllaMetadata::parse_lenient(&bytes)
                .map_err(|e| e.in_file(&sst.path(Component::Scylla)))?;
            let v = to_json(&m);
            if emit.fmt == OutputFormat::Text {
                emit.text(&json_text_table(&v).to_string())?;
            } else {
                emit.json.object(&v)?;
            }
            // Dumped for inspection, but a digest mismatch makes Scylla.db
            // unreadable input (exit 3), as for Statistics.db.
            if let Some(d) = m.digest.filter(|d| d.stored != d.computed) {
                return Err(Error::at(
                    ErrorKind::ChecksumMismatch {
                        algo: "crc32",
                        expected: d.stored,
                        got: d.computed,
                    },
                    Component::Scylla,
                    // The digest is the file's last 4 bytes.
                    bytes.len().saturating_sub(4) as u64,
                    "Scylla.db trailing digest",
                )
                .in_file(&sst.path(Component::Scylla))
                .into());
            }
            Ok(())
        },
    )
}
