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

use serde_json::json;

use crate::cli::{DumpSchemaArgs, OutputFormat};
use crate::plan::SstPlan;
use crate::tables::{names_from_path, table_schema};
use crate::{for_each_sstable, CmdResult, Outcome};

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
