//! `sstkit dump-index SSTABLE... [--promoted-index]`: Index.db.
//!
//! ```text
//! sstkit dump-index nb-1-big-Data.db
//! sstkit dump-index --promoted-index --output ndjson nb-1-big-Data.db | jq .
//! ```
//!
//! Reads: Index.db sequentially in 1 MiB reads (memory stays bounded by the
//! read size plus the largest entry), and Statistics.db (key and clustering
//! types, partitioner).
//!
//! JSON payload: an array of entries (the `scylla sstable dump-index` shape,
//! extended): `{"key": {"token","raw","value"}, "pos", "index_offset",
//! "promoted_index"?: {"header_length", "deletion"?: {"timestamp","deletion_time"},
//! "blocks": count, "offsets_valid", "entries"?: [{"first": clustering, "last":
//! clustering, "offset", "width", "end_open_marker"?}]}}`. `pos` is the
//! partition's offset in uncompressed Data.db; `index_offset` the entry's offset
//! in Index.db. Block `entries` are listed with `--promoted-index`; a clustering
//! is `{"kind", "raw": [hex], "value": "a:b"}`. NDJSON: one entry per line.
//!
//! An empty Index.db, an entry that does not decode, or (with
//! `--promoted-index`) blocks that do not decode are unreadable input: exit 3,
//! the error on stderr.
//!
//! Exit status: 0 ok; 2 usage; 3 unreadable input (a missing, damaged or
//! truncated component; a checksum mismatch in the dumped component).

use std::io::Write;

use serde_json::{json, Value};
use sstkit_format::clustering::ClusteringPrefix;
use sstkit_format::deletion::DeletionTime;
use sstkit_format::index::IndexName;
use sstkit_format::index::{for_each_entry, IndexEntry};
use sstkit_format::types::CqlType;
use sstkit_format::{Component, ErrorKind};

use crate::cli::{DumpIndexArgs, OutputFormat};
use crate::output::{hex, table};
use crate::plan::SstPlan;
use crate::render::{clustering_json, read_statistics, KeyCtx};
use crate::{for_each_sstable, CmdError, CmdResult, Outcome};

fn deletion_json(d: &DeletionTime) -> Value {
    json!({"timestamp": d.marked_for_delete_at, "deletion_time": d.local_deletion_time})
}

fn name_json(n: &IndexName<'_>, types: &[CqlType]) -> Value {
    match n {
        IndexName::Prefix(p) => clustering_json(p, types),
        IndexName::Legacy(b) => json!({"raw": hex(b)}),
    }
}

fn entry_json(
    e: &IndexEntry<'_>,
    ctx: &KeyCtx,
    types: &[CqlType],
    fixed: &[Option<usize>],
    blocks: bool,
) -> sstkit_format::Result<Value> {
    let e_key = e.key;
    let mut v = json!({"key": ctx.key_json(e.key), "pos": e.position, "index_offset": e.offset});
    if let Some(pi) = &e.promoted {
        let mut p = json!({
            "header_length": pi.header_length,
            "blocks": pi.block_count,
            "offsets_valid": pi.blocks(fixed).is_ok(),
        });
        if !pi.deletion.is_live() {
            p["deletion"] = deletion_json(&pi.deletion);
        }
        if blocks {
            let list: Vec<Value> = match pi.blocks(fixed) {
                Ok(bs) => bs
                    .iter()
                    .map(|b| {
                        let mut x = json!({
                            "first": name_json(&b.first_name, types),
                            "last": name_json(&b.last_name, types),
                            "offset": b.offset,
                            "width": b.width,
                        });
                        if let Some(m) = &b.end_open_marker {
                            x["end_open_marker"] = deletion_json(m);
                        }
                        x
                    })
                    .collect(),
                Err(e) => return Err(e.in_partition(ctx.key_text(e_key))),
            };
            p["entries"] = Value::Array(list);
        }
        v["promoted_index"] = p;
    }
    Ok(v)
}

/// Run the command.
pub fn run(a: &DumpIndexArgs, out: &mut dyn Write) -> CmdResult<Outcome> {
    for_each_sstable(
        &SstPlan::resolve(&a.sst, OutputFormat::Json)?,
        true,
        out,
        |sst, emit| {
            if sst.features().trie_index {
                // BTI sstables have Partitions.db/Rows.db tries, not Index.db.
                return Err(sstkit_format::Error::new(
                    ErrorKind::Unsupported(format!(
                        "version {} is a BTI-format sstable: it has no Index.db; its partition \
                         and row indexes are tries (use dump-trie, with --rows for Rows.db)",
                        sst.version()
                    )),
                    "partition index",
                )
                .in_component(Component::Index)
                .in_file(&sst.path(Component::Index))
                .into());
            }
            let st = read_statistics(sst)?;
            let ctx = KeyCtx::from_statistics(&st);
            let types: Vec<CqlType> = st
                .header
                .as_ref()
                .map(|h| h.clustering_types.clone())
                .unwrap_or_default();
            let fixed: Vec<Option<usize>> = types.iter().map(CqlType::fixed_len).collect();
            if emit.fmt == OutputFormat::Text {
                let mut t = table(&["token", "key", "position", "promoted index"]);
                let mut bt = table(&[
                    "key",
                    "block",
                    "first",
                    "last",
                    "offset",
                    "width",
                    "open marker",
                ]);
                for_each_entry::<CmdError>(sst, |e| {
                    let pi = e
                        .promoted
                        .as_ref()
                        .map_or("-".to_string(), |p| format!("{} blocks", p.block_count));
                    t.add_row(vec![
                        ctx.partitioner.token(e.key).to_string(),
                        ctx.key_text(e.key),
                        e.position.to_string(),
                        pi,
                    ]);
                    if let (true, Some(p)) = (a.promoted_index, &e.promoted) {
                        let name = |n: &IndexName<'_>| match n.as_prefix() {
                            Some(p) => prefix_text(p, &types),
                            None => format!("0x{}", hex(n.as_legacy().unwrap_or(&[]))),
                        };
                        match p.blocks(&fixed) {
                            Ok(bs) => {
                                for (i, b) in bs.iter().enumerate() {
                                    bt.add_row(vec![
                                        ctx.key_text(e.key),
                                        i.to_string(),
                                        name(&b.first_name),
                                        name(&b.last_name),
                                        b.offset.to_string(),
                                        b.width.to_string(),
                                        b.end_open_marker.map_or("-".into(), |m| {
                                            m.marked_for_delete_at.to_string()
                                        }),
                                    ]);
                                }
                            }
                            Err(err) => {
                                return Err(err
                                    .in_partition(ctx.key_text(e.key))
                                    .in_file(&sst.path(Component::Index))
                                    .into());
                            }
                        }
                    }
                    Ok(())
                })?;
                let mut s = t.to_string();
                if a.promoted_index {
                    s = format!("{s}\n{bt}");
                }
                emit.text(&s)?;
            } else {
                for_each_entry::<CmdError>(sst, |e| {
                    let v = entry_json(e, &ctx, &types, &fixed, a.promoted_index)
                        .map_err(|err| err.in_file(&sst.path(Component::Index)))?;
                    emit.json.item(&v)?;
                    Ok(())
                })?;
            }
            Ok(())
        },
    )
}

fn prefix_text(p: &ClusteringPrefix<'_>, types: &[CqlType]) -> String {
    let text: Vec<String> = p
        .values
        .iter()
        .enumerate()
        .map(|(i, v)| crate::render::clustering_value_text(types.get(i), *v))
        .collect();
    format!("{}({})", p.kind.name(), text.join(":"))
}
