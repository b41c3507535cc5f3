//! `sstkit dump-schema SSTABLE...`: the table as CQL, rebuilt from the
//! serialization header.
//!
//! ```text
//! sstkit dump-schema nb-1-big-Data.db
//! sstkit dump-schema --keyspace app --table events DIR
//! ```
//!
//! Reads: Statistics.db (one read) and Scylla.db when present (key column
//! names and keyspace/table). Key column names are not stored by Cassandra;
//! they are generated as `pk0, pk1, …` and `ck0, ck1, …`. Keyspace and table
//! default to the Scylla.db schema, else the data directory layout
//! (`<keyspace>/<table>-<table id>/`), else `ks` and `tbl`.
//!
//! Text output is the CQL itself. JSON payload: `{"keyspace", "table", "cql"}`.
//!
//! Exit status: 0 ok; 2 usage; 3 unreadable input (a missing, damaged or
//! truncated component; a checksum mismatch in the dumped component).

use std::io::Write;
use std::path::Path;

use serde_json::json;
use sstkit_format::schema::TableSchema;
use sstkit_format::scylla::ScyllaMetadata;
use sstkit_format::{Component, Error, ErrorKind, Sstable};

use crate::cli::{DumpSchemaArgs, OutputFormat};
use crate::plan::SstPlan;
use crate::render::read_statistics;
use crate::{for_each_sstable, CmdResult, Outcome};

/// Keyspace and table names implied by a Cassandra data directory
/// `<keyspace>/<table>-<32 hex id>/` (or the legacy file-name scheme).
pub fn names_from_path(sst: &Sstable) -> Option<(String, String)> {
    if let Some((ks, t)) = &sst.desc.ks_table {
        return Some((ks.clone(), t.clone()));
    }
    // A URL names its folders as given (there is nothing to resolve).
    let dir = if sstkit_format::io::store::is_url(&sst.desc.dir) {
        sst.desc.dir.clone()
    } else {
        std::fs::canonicalize(&sst.desc.dir).ok()?
    };
    let table_dir = dir.file_name()?.to_str()?;
    let (table, id) = table_dir.rsplit_once('-')?;
    if id.len() != 32 || !id.bytes().all(|b| b.is_ascii_hexdigit()) || table.is_empty() {
        return None;
    }
    let ks = dir
        .parent()
        .and_then(Path::file_name)?
        .to_str()?
        .to_string();
    Some((ks, table.to_string()))
}

/// The schema of an sstable: header plus Scylla.db names when present.
pub fn table_schema(sst: &Sstable) -> CmdResult<(TableSchema, Option<(String, String)>)> {
    let st = read_statistics(sst)?;
    let header = st.header.as_ref().ok_or_else(|| {
        Error::new(
            ErrorKind::Unsupported(format!(
                "version {} has no serialization header; the schema is not stored in the sstable",
                sst.version()
            )),
            "",
        )
        .in_file(&sst.path(Component::Statistics))
    })?;
    let scylla = if sst.has(Component::Scylla) {
        sst.read_component(Component::Scylla)
            .ok()
            .and_then(|b| ScyllaMetadata::parse_lenient(&b).ok())
    } else {
        None
    };
    let sschema = scylla.as_ref().and_then(|m| m.schema().cloned());
    let names = sschema
        .as_ref()
        .map(|s| (s.keyspace.clone(), s.table.clone()));
    Ok((
        TableSchema::from_header_with_scylla(header, sschema.as_ref()),
        names,
    ))
}

/// Run the command.
pub fn run(a: &DumpSchemaArgs, out: &mut dyn Write) -> CmdResult<Outcome> {
    for_each_sstable(
        &SstPlan::resolve(&a.sst, OutputFormat::Text)?,
        false,
        out,
        |sst, emit| {
            let (schema, scylla_names) = table_schema(sst)?;
            let (ks, tbl) = scylla_names
                .or_else(|| names_from_path(sst))
                .unwrap_or_else(|| ("ks".to_string(), "tbl".to_string()));
            let ks = a.keyspace.clone().unwrap_or(ks);
            let tbl = a.table.clone().unwrap_or(tbl);
            let cql = schema.to_create_table(&ks, &tbl);
            if emit.fmt == OutputFormat::Text {
                emit.text(&cql)?;
            } else {
                emit.json
                    .object(&json!({"keyspace": ks, "table": tbl, "cql": cql}))?;
            }
            Ok(())
        },
    )
}
