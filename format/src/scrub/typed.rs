//! The types scrub decodes Data.db with: the serialization header's, or,
//! with `--schema` on a row-format sstable, the CREATE TABLE's put in the
//! header's place, column by column. The header keeps its column list and
//! encoding bases (a CREATE TABLE has neither: columns added later are
//! absent from older sstables, and the bases are per sstable); only the
//! type names, the part a damaged byte most often makes unreadable, come
//! from the operator.

use crate::component::Component;
use crate::error::{Error, ErrorKind, Result};
use crate::schema::{TableSchema, HIDDEN_VALUE_COLUMN};
use crate::sstable::Sstable;
use crate::statistics::{MetadataKind, SerializationHeader, Statistics};
use crate::types::CqlType;
use crate::validate::ProblemClass;

/// Statistics.db as scrub reads it: checksum mismatches are findings, and
/// with a table schema attached to a row-format sstable, a serialization
/// header that does not decode is too (the schema stands in for it).
pub fn statistics(sst: &Sstable) -> Result<Statistics> {
    let bytes = sst.read_component(Component::Statistics)?;
    let f = sst.features();
    let at = |e: Error| e.in_file(&sst.path(Component::Statistics));
    match Statistics::parse_lenient(&bytes, f) {
        Err(e) if sst.table_schema().is_some() && !f.legacy_cells => {
            Statistics::parse_without_header(&bytes, f).map_err(|_| at(e))
        }
        r => r.map_err(at),
    }
}

/// The serialization header scrub decodes `sst`'s Data.db with, and a
/// salvage is written with: Statistics.db's (`st`), with the types of an
/// attached table schema when they check out (see this module).
pub fn header(sst: &Sstable, st: &Statistics) -> Result<SerializationHeader> {
    Ok(typed_header(sst, st)?.header)
}

/// ka/la: synthesized from the attached table schema (an error without);
/// later versions take only its types, and only when they check out.
pub(super) fn typed_header(sst: &Sstable, st: &Statistics) -> Result<Typed> {
    let schema = sst.table_schema().filter(|_| !sst.features().legacy_cells);
    if let (None, Some(schema)) = (&st.header, schema) {
        return Typed::lost(st, schema).map_err(|why| {
            Error::new(
                ErrorKind::Unsupported(format!(
                    "no serialization header in Statistics.db, and --schema cannot stand in \
                     for it: {why}"
                )),
                "serialization header",
            )
            .in_component(Component::Statistics)
            .in_file(&sst.path(Component::Statistics))
        });
    }
    Ok(Typed::new(st, sst.data_header(st)?, schema))
}

/// The header scrub decodes with, and what `--schema` changed or found.
pub(super) struct Typed {
    /// The header to decode Data.db with.
    pub header: SerializationHeader,
    /// Findings to report about the stored header and `--schema`.
    pub findings: Vec<(ProblemClass, String)>,
    /// The header with `--schema`'s types serializes to the bytes the
    /// stored checksum was computed over: a header component that fails
    /// its checksum is repaired exactly, not merely guessed at.
    pub reproduces_checksum: bool,
    /// Why the stored header and `--schema` cannot both describe this
    /// table: nothing decoded with the header can be trusted.
    pub foreign: Option<String>,
    /// Statistics.db holds no header, and this one is built from `--schema`
    /// and the ranges Statistics.db records (see [`Typed::lost`]).
    pub lost: bool,
}

impl Typed {
    /// The header of `st` (`stored`), retyped from `schema` when one is given.
    pub(super) fn new(
        st: &Statistics,
        stored: SerializationHeader,
        schema: Option<&TableSchema>,
    ) -> Typed {
        let mut typed = Typed {
            header: stored,
            findings: Vec::new(),
            reproduces_checksum: false,
            foreign: None,
            lost: false,
        };
        let Some(schema) = schema else {
            return typed;
        };
        let retyped = match retyped(&typed.header, schema) {
            Ok(h) => h,
            Err(missing) => {
                typed.foreign = Some(format!(
                    "the serialization header has {missing}, which the CREATE TABLE of --schema \
                     lacks: Statistics.db is another table's, or --schema is; no partition \
                     decoded with the header is salvaged"
                ));
                return typed;
            }
        };
        let changed = differences(&typed.header, &retyped);
        if changed.is_empty() {
            return typed;
        }
        let crc = (st.components.iter())
            .find(|c| c.kind == Some(MetadataKind::Header))
            .and_then(|c| Some((c.stored_crc?, c.crc_ok())));
        match crc {
            // The stored header is the one written: --schema is not this table's.
            Some((_, true)) => typed.findings.push((
                ProblemClass::MetadataMismatch,
                format!(
                    "--schema gives other types than the serialization header, which passes its \
                     checksum ({changed}): --schema is not this table's; decoded with the header's"
                ),
            )),
            Some((stored_crc, false)) => {
                let mut bytes = Vec::new();
                crate::write::stats::serialize_header(&mut bytes, &retyped);
                typed.reproduces_checksum = crc32fast::hash(&bytes) == stored_crc;
                let how = if typed.reproduces_checksum {
                    "with --schema's it passes its checksum: decoded with them"
                } else {
                    "with --schema's it still fails its checksum: the damage is not only in \
                     type names"
                };
                typed.findings.push((
                    ProblemClass::CorruptMetadata,
                    format!("the serialization header's types differ from --schema's ({changed}); {how}"),
                ));
                if typed.reproduces_checksum {
                    typed.header = retyped;
                }
            }
            // No checksum (`ma`..`me`): the operator's types, which the
            // checks against the data (key fit, index, timestamps) still guard.
            None => {
                typed.findings.push((
                    ProblemClass::CorruptMetadata,
                    format!(
                        "the serialization header's types differ from --schema's ({changed}); \
                         decoded with --schema's"
                    ),
                ));
                typed.header = retyped;
            }
        }
        typed
    }
}

impl Typed {
    /// A header for a Statistics.db that holds none that decodes: the
    /// columns and types of `schema`, and as encoding bases the smallest
    /// timestamp and local deletion time Statistics.db records, which is
    /// what Cassandra's flushes write. Scrub keeps what it salvages only if
    /// the whole of Data.db then decodes to exactly the recorded ranges
    /// (`Timestamps`), which a wrong base cannot. `Err`: why no base can
    /// be had: no trusted range, or TTLs, whose base (the smallest TTL
    /// written) no component records.
    pub(super) fn lost(
        st: &Statistics,
        schema: &TableSchema,
    ) -> std::result::Result<Typed, String> {
        use crate::statistics::header::{DELETION_TIME_EPOCH, TIMESTAMP_EPOCH};
        use crate::statistics::stats::NO_DELETION_TIME;
        let damaged = (st.components.iter())
            .any(|c| c.kind == Some(MetadataKind::Stats) && c.stored_crc.is_some() && !c.crc_ok());
        let stats = (st.stats.as_ref())
            .filter(|_| !damaged)
            .ok_or("Statistics.db's ranges are damaged or missing")?;
        let (min, max) = (stats.min_timestamp, stats.max_timestamp);
        if min > max || min == i64::MIN || max == i64::MAX {
            return Err("Statistics.db records no timestamp range".into());
        }
        if let Some(ttl) = stats.max_ttl.filter(|&t| t > 0) {
            return Err(format!(
                "Statistics.db records TTLs (up to {ttl} s), whose base no component holds"
            ));
        }
        let ldt = match stats.min_local_deletion_time {
            Some(t) if t != NO_DELETION_TIME => t,
            _ => DELETION_TIME_EPOCH,
        };
        let mut header = crate::schema::legacy_header(schema);
        // Cassandra's order (`ColumnMetadata.compareTo`): simple columns,
        // then complex ones, each by name; a row's column bitmap follows it.
        for cols in [&mut header.static_columns, &mut header.regular_columns] {
            cols.sort_by(|a, b| {
                (a.ty.is_multi_cell(), &a.name_bytes).cmp(&(b.ty.is_multi_cell(), &b.name_bytes))
            });
        }
        header.min_timestamp = min;
        header.min_local_deletion_time = ldt;
        header.min_ttl = 0;
        header.raw_deltas = (
            min.wrapping_sub(TIMESTAMP_EPOCH) as u64,
            ldt.wrapping_sub(DELETION_TIME_EPOCH) as u64,
            0,
        );
        // Why the header did not decode (`Statistics::parse_without_header`).
        let why = (st.problems.iter())
            .find(|e| !matches!(e.kind, ErrorKind::ChecksumMismatch { .. }))
            .map_or(String::new(), |e| format!(" ({e})"));
        Ok(Typed {
            header,
            findings: vec![(
                ProblemClass::CorruptMetadata,
                format!(
                    "Statistics.db holds no serialization header that decodes{why}: decoded \
                     with the columns and types of --schema and the encoding bases of the \
                     ranges Statistics.db records; what is salvaged is kept only if all of \
                     Data.db decodes to exactly those ranges"
                ),
            )],
            reproduces_checksum: false,
            foreign: None,
            lost: true,
        })
    }
}

/// `h` with the types of `schema`: the partition key and clustering types,
/// and each static and regular column's by name. `Err` names the columns
/// of `h` that `schema` lacks (or a key or clustering of another shape).
fn retyped(
    h: &SerializationHeader,
    schema: &TableSchema,
) -> std::result::Result<SerializationHeader, String> {
    let mut out = h.clone();
    let ck = schema.clustering_types();
    if ck.len() != h.clustering_types.len() {
        return Err(format!(
            "{} clustering columns where it declares {}",
            h.clustering_types.len(),
            ck.len()
        ));
    }
    let pk = schema.partition_key_type();
    if pk.components().len() != h.partition_key_type.components().len() {
        return Err(format!(
            "a partition key of {} columns where it declares {}",
            h.partition_key_type.components().len(),
            pk.components().len()
        ));
    }
    out.partition_key_type_string = pk.class_string();
    out.partition_key_type = pk;
    out.clustering_type_strings = ck.iter().map(CqlType::class_string).collect();
    out.clustering_types = ck;
    let mut missing = Vec::new();
    for (cols, declared) in [
        (&mut out.static_columns, &schema.static_columns),
        (&mut out.regular_columns, &schema.regular_columns),
    ] {
        for c in cols.iter_mut() {
            match declared.iter().find(|d| d.name.as_bytes() == c.name_bytes) {
                Some(d) => {
                    c.type_string = d.ty.class_string();
                    c.ty = d.ty.clone();
                }
                // A compact table's hidden value column is not declared.
                None if schema.compact_storage
                    && (c.name_bytes.is_empty() || c.name == HIDDEN_VALUE_COLUMN) => {}
                None => missing.push(format!("column {:?}", c.name)),
            }
        }
    }
    if missing.is_empty() {
        Ok(out)
    } else {
        Err(missing.join(", "))
    }
}

/// Which types of `a` and `b` differ, for a message ("" when none).
fn differences(a: &SerializationHeader, b: &SerializationHeader) -> String {
    let mut d = Vec::new();
    if a.partition_key_type_string != b.partition_key_type_string {
        d.push(format!(
            "partition key {} against {}",
            a.partition_key_type_string, b.partition_key_type_string
        ));
    }
    for (i, (x, y)) in (a.clustering_type_strings.iter())
        .zip(&b.clustering_type_strings)
        .enumerate()
    {
        if x != y {
            d.push(format!("clustering {i} {x} against {y}"));
        }
    }
    let cols = |h: &SerializationHeader| {
        (h.static_columns.iter().chain(&h.regular_columns))
            .map(|c| (c.name.clone(), c.type_string.clone()))
            .collect::<Vec<_>>()
    };
    for ((name, x), (_, y)) in cols(a).into_iter().zip(cols(b)) {
        if x != y {
            d.push(format!("column {name:?} {x} against {y}"));
        }
    }
    d.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On every fixture that Cassandra wrote with its CREATE TABLE beside it,
    /// the header retyped from that statement is the stored header, byte for
    /// byte: what lets a damaged header be repaired exactly from `--schema`.
    #[test]
    fn cassandra_headers_are_their_create_table() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/cassandra");
        let Ok(rd) = std::fs::read_dir(&root) else {
            eprintln!("skipping: no fixtures");
            return;
        };
        let mut checked = 0;
        for dir in rd.flatten().map(|e| e.path()) {
            let Ok(cql) = std::fs::read_to_string(dir.join("schema.cql")) else {
                continue;
            };
            let schema = TableSchema::from_cql(&cql).unwrap();
            for stats in std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()) {
                if !stats.to_string_lossy().ends_with("-Statistics.db") {
                    continue;
                }
                let v = crate::descriptor::Descriptor::from_path(&stats)
                    .unwrap()
                    .0
                    .version;
                let bytes = std::fs::read(&stats).unwrap();
                let h = Statistics::parse(&bytes, v.features())
                    .unwrap()
                    .header
                    .unwrap();
                let r = retyped(&h, &schema).unwrap_or_else(|e| panic!("{dir:?}: {e}"));
                assert_eq!(differences(&h, &r), "", "{dir:?}");
                let (mut a, mut b) = (Vec::new(), Vec::new());
                crate::write::stats::serialize_header(&mut a, &h);
                crate::write::stats::serialize_header(&mut b, &r);
                assert_eq!(a, b, "{dir:?}");
                checked += 1;
            }
        }
        assert!(checked >= 20, "only {checked} fixtures with a schema.cql");
    }
}
