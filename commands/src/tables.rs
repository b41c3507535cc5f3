//! The table an sstable belongs to: its schema rebuilt from the
//! serialization header (with Scylla.db's names when present), and the
//! keyspace and table names its data directory implies.

use std::path::Path;

use sstkit_format::schema::TableSchema;
use sstkit_format::scylla::ScyllaMetadata;
use sstkit_format::{Component, Error, ErrorKind, Sstable};

use crate::render::read_statistics;
use crate::CmdResult;

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
