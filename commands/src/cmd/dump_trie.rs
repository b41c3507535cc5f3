//! `sstkit dump-trie SSTABLE... [--rows]`: the trie indexes of BTI sstables
//! (Cassandra 5.0 `da`; ScyllaDB `ms`/`mt`): Partitions.db, and with
//! `--rows` the row index of every partition that has one in Rows.db.
//!
//! ```text
//! sstkit dump-trie da-1-bti-Data.db
//! sstkit dump-trie --rows -o ndjson da-1-bti-Data.db | jq 'select(.type == "rows")'
//! sstkit dump-trie -o text /var/lib/cassandra/data/ks/t-1234/
//! ```
//!
//! Reads: Statistics.db (key type, partitioner), the Partitions.db footer,
//! then every trie node of Partitions.db in key order (point reads of whole
//! pages through the index cache); for each partition payload pointing into
//! Data.db its key there (one read of its unit or compressed chunk, shared
//! by neighbouring partitions), for each one pointing into Rows.db its
//! entry there; with `--rows` each row trie.
//!
//! JSON payload: `{"partitions": {"root", "key_count", "first_key",
//! "last_key", "entries": [{"key"?: {"token","raw","value"}, "prefix_hex",
//! "hash", "position": {"data": n} | {"rows": n}}]}, "rows"?: [{"key",
//! "position", "data_position", "root", "blocks", "deletion"?: {"timestamp",
//! "deletion_time"}, "entries": [{"separator_hex", "offset",
//! "open_marker"?}]}]}`. `prefix_hex` is the byte-comparable key prefix the
//! trie stores, `hash` the stored filter-hash byte (null when absent),
//! `position.data` the partition's offset in uncompressed Data.db,
//! `position.rows` its entry's offset in Rows.db. Row entries: `blocks` is the
//! entry's block count, `entries` the trie's payloads in order (block
//! starts relative to the partition start, the last one the
//! END_OF_PARTITION byte), `open_marker` the range tombstone open at the
//! block start.
//!
//! NDJSON: one object per line, `"type"`: `"footer"` (root, key_count,
//! first_key, last_key), then one `"partition"` line per partition entry,
//! then (`--rows`) one `"rows"` line per row index. Text: the footer, a
//! table of partitions, and (`--rows`) a table of row-index entries.
//!
//! BIG sstables have no tries: exit 3, naming Partitions.db. A damaged or
//! truncated Partitions.db, Rows.db or Data.db (a node, entry or key that
//! cannot be read) is unreadable input: exit 3, the error on stderr.
//!
//! Exit status: 0 ok; 2 usage; 3 unreadable input (a missing, damaged or
//! truncated component; a checksum mismatch in the dumped component).

use std::io::Write;

use serde_json::{json, Map, Value};
use sstkit_format::bti::partitions::{for_each_entry, PartitionPosition};
use sstkit_format::bti::rows::row_trie_entries;
use sstkit_format::bti::{read_footer, IoSource, RowsEntry};
use sstkit_format::data::{DataPos, DataSource};
use sstkit_format::deletion::DeletionTime;
use sstkit_format::io::ReadKind;
use sstkit_format::{Component, Error, ErrorKind, Sstable};

use crate::cli::{DumpTrieArgs, OutputFormat};
use crate::output::{hex, kv_table, table};
use crate::plan::SstPlan;
use crate::render::{read_statistics, KeyCtx};
use crate::{for_each_sstable, CmdResult, Outcome};

fn deletion_json(d: &DeletionTime) -> Value {
    json!({"timestamp": d.marked_for_delete_at, "deletion_time": d.local_deletion_time})
}

fn no_trie(sst: &Sstable) -> Error {
    Error::new(
        ErrorKind::Unsupported(format!(
            "version {} is a BIG-format sstable: it has no trie indexes (use dump-index)",
            sst.version()
        )),
        "partition trie",
    )
    .in_component(Component::Partitions)
    .in_file(&sst.path(Component::Partitions))
}

/// Reads partition keys back from Data.db.
struct Keys<'s> {
    src: Option<DataSource<'s>>,
    sst: &'s Sstable,
}

impl<'s> Keys<'s> {
    fn key_at(&mut self, pos: u64) -> sstkit_format::Result<Vec<u8>> {
        if self.src.is_none() {
            let mut d = DataSource::open(self.sst)?;
            d.set_read_kind(ReadKind::Scan);
            self.src = Some(d);
        }
        let Some(d) = self.src.as_mut() else {
            return Ok(Vec::new());
        };
        let b = d.read_range(DataPos(pos), 2)?;
        let n = u16::from_be_bytes([b[0], b[1]]) as usize;
        let b = d.read_range(DataPos(pos), 2 + n)?;
        Ok(b[2..].to_vec())
    }
}

/// One partition entry as JSON (with `"type"` for NDJSON).
fn partition_json(
    ctx: &KeyCtx,
    keys: &mut Keys<'_>,
    rows: &mut IoSource<'_>,
    flavor: sstkit_format::bti::Flavor,
    e: &sstkit_format::bti::PartitionEntry,
) -> sstkit_format::Result<(Value, Option<RowsEntry>)> {
    let mut v = Map::new();
    let mut entry = None;
    let key = match e.payload.position {
        PartitionPosition::Data(p) => keys.key_at(p),
        PartitionPosition::Rows(off) => RowsEntry::read(rows, off, flavor).map(|r| {
            let k = r.key.clone();
            entry = Some(r);
            k
        }),
    };
    // A key that cannot be read back means a damaged Data.db or Rows.db
    // (or a trie pointing nowhere): unreadable input, not a field of the dump.
    v.insert("key".into(), ctx.key_json(&key?));
    v.insert("prefix_hex".into(), Value::String(hex(&e.prefix)));
    v.insert(
        "hash".into(),
        e.payload.hash.map_or(Value::Null, Value::from),
    );
    v.insert(
        "position".into(),
        match e.payload.position {
            PartitionPosition::Data(p) => json!({"data": p}),
            PartitionPosition::Rows(p) => json!({"rows": p}),
        },
    );
    Ok((Value::Object(v), entry))
}

/// One row index as JSON.
fn rows_json(
    ctx: &KeyCtx,
    rows: &mut IoSource<'_>,
    flavor: sstkit_format::bti::Flavor,
    r: &RowsEntry,
) -> sstkit_format::Result<Value> {
    let t = row_trie_entries(rows, r.root, flavor)?;
    let entries: Vec<Value> = t
        .iter()
        .map(|x| {
            let mut e = json!({"separator_hex": hex(&x.separator), "offset": x.payload.offset});
            if let Some(d) = &x.payload.open {
                e["open_marker"] = deletion_json(d);
            }
            e
        })
        .collect();
    let mut v = json!({
        "key": ctx.key_json(&r.key),
        "position": r.offset,
        "data_position": r.data_position,
        "root": r.root,
        "blocks": r.block_count,
    });
    if !r.deletion.is_live() {
        v["deletion"] = deletion_json(&r.deletion);
    }
    v["entries"] = Value::Array(entries);
    Ok(v)
}

/// Run the command.
pub fn run(a: &DumpTrieArgs, out: &mut dyn Write) -> CmdResult<Outcome> {
    for_each_sstable(
        &SstPlan::resolve(&a.sst, OutputFormat::Json)?,
        false,
        out,
        |sst, emit| {
            if !sst.features().trie_index {
                return Err(no_trie(sst).into());
            }
            sst.require(Component::Partitions)?;
            let st = read_statistics(sst)?;
            let ctx = KeyCtx::from_statistics(&st);
            let flavor = sstkit_format::bti::index::flavor_of(sst);
            let locate = |e: Error| match e.component {
                Some(c) => e.in_file(&sst.path(c)),
                None => e,
            };
            let footer = read_footer(&sst.io).map_err(locate)?;
            let mut src = IoSource::new(&sst.io, Component::Partitions)?;
            let mut rows = IoSource::new(&sst.io, Component::Rows)?;
            let mut keys = Keys { src: None, sst };
            let ndjson = emit.fmt == OutputFormat::Ndjson;
            let text = emit.fmt == OutputFormat::Text;
            let head = json!({
                "root": footer.root,
                "key_count": footer.key_count,
                "first_key": ctx.key_json(&footer.first_key),
                "last_key": ctx.key_json(&footer.last_key),
            });
            if ndjson {
                let mut h = json!({"type": "footer"});
                for (k, x) in head.as_object().into_iter().flatten() {
                    h[k] = x.clone();
                }
                emit.json.item(&h)?;
            }
            let mut entries = Vec::new();
            let mut row_entries = Vec::new();
            let mut io_err = None;
            for_each_entry(&mut src, footer.root, &mut |e| {
                let (v, r) = partition_json(&ctx, &mut keys, &mut rows, flavor, &e)?;
                if ndjson {
                    let mut line = json!({"type": "partition"});
                    for (k, x) in v.as_object().into_iter().flatten() {
                        line[k] = x.clone();
                    }
                    if let Err(err) = emit.json.item(&line) {
                        io_err = Some(err);
                        return Ok(false);
                    }
                } else {
                    entries.push(v);
                }
                if a.rows {
                    if let Some(r) = r {
                        row_entries.push(r);
                    }
                }
                Ok(true)
            })
            .map_err(locate)?;
            if let Some(e) = io_err {
                return Err(e.into());
            }
            let mut rows_out = Vec::new();
            for r in &row_entries {
                let v = rows_json(&ctx, &mut rows, flavor, r).map_err(locate)?;
                if ndjson {
                    let mut line = json!({"type": "rows"});
                    for (k, x) in v.as_object().into_iter().flatten() {
                        line[k] = x.clone();
                    }
                    emit.json.item(&line)?;
                } else {
                    rows_out.push(v);
                }
            }
            if ndjson {
                return Ok(());
            }
            if text {
                let mut s = String::new();
                let rowsf = |k: &str| head[k].to_string();
                let kv = vec![
                    ("root".to_string(), rowsf("root")),
                    ("key_count".to_string(), rowsf("key_count")),
                    (
                        "first_key".to_string(),
                        head["first_key"]["value"]
                            .as_str()
                            .unwrap_or("")
                            .to_string(),
                    ),
                    (
                        "last_key".to_string(),
                        head["last_key"]["value"].as_str().unwrap_or("").to_string(),
                    ),
                ];
                s.push_str(&kv_table(&kv).to_string());
                s.push('\n');
                let mut t = table(&["prefix", "hash", "position", "token", "key"]);
                for e in &entries {
                    let pos = &e["position"];
                    let pos = match (pos["data"].as_u64(), pos["rows"].as_u64()) {
                        (Some(d), _) => format!("Data.db {d}"),
                        (_, Some(r)) => format!("Rows.db {r}"),
                        _ => "-".into(),
                    };
                    t.add_row(vec![
                        e["prefix_hex"].as_str().unwrap_or("").to_string(),
                        e["hash"]
                            .as_u64()
                            .map_or("-".into(), |h| format!("{h:02x}")),
                        pos,
                        e["key"]["token"].as_str().unwrap_or("-").to_string(),
                        e["key"]["value"].as_str().unwrap_or("").to_string(),
                    ]);
                }
                s.push_str(&t.to_string());
                if a.rows {
                    let mut t = table(&["key", "block", "separator", "offset", "open marker"]);
                    for r in &rows_out {
                        let k = r["key"]["value"].as_str().unwrap_or("").to_string();
                        for (i, x) in r["entries"].as_array().into_iter().flatten().enumerate() {
                            t.add_row(vec![
                                k.clone(),
                                i.to_string(),
                                x["separator_hex"].as_str().unwrap_or("").to_string(),
                                x["offset"].to_string(),
                                x["open_marker"]["timestamp"]
                                    .as_i64()
                                    .map_or("-".into(), |m| m.to_string()),
                            ]);
                        }
                    }
                    s.push('\n');
                    s.push_str(&t.to_string());
                }
                emit.text(&s)?;
                return Ok(());
            }
            let mut p = head;
            p["entries"] = Value::Array(entries);
            let mut v = json!({ "partitions": p });
            if a.rows {
                v["rows"] = Value::Array(rows_out);
            }
            emit.json.object(&v)?;
            Ok(())
        },
    )
}
