//! `sstkit expired-blockers SSTABLE...`: the `sstableexpiredblockers` of sstkit.
//!
//! ```text
//! sstkit expired-blockers /var/lib/cassandra/data/ks/t-1234/
//! sstkit expired-blockers -r --keyspace ks --gc-grace 3h /var/lib/cassandra/data
//! sstkit expired-blockers --now 1800000000 -o json fixtures/cassandra/nb_deletes_merge_1/
//! ```
//!
//! Reads Statistics.db of each sstable (min/max timestamp, max local deletion
//! time) and applies [`sstkit_format::analytics::expired_blockers`] per table
//! with `gc_before = --now - --gc-grace`. Sstables are grouped by table: the
//! `keyspace/table-id/` folders when they are there, else their directory.
//!
//! Output: json `{"gc_before", "tables": [{"table", "sstables", "expired":
//! [sstable...], "blockers": [{sstable..., "blocks": [sstable...]}]}]}`
//! where an sstable is `{"sstable", "min_timestamp", "max_timestamp",
//! "max_local_deletion_time", "data_size"}`; ndjson one `{"type": "blocker"}`
//! line per blocker; text Cassandra's sentence per blocker, with the times as
//! dates and the Data.db sizes, wrapped to the terminal.
//!
//! Exit status: 0 ok (blockers or not); 2 usage; 3 an sstable's
//! Statistics.db could not be read (the others are still judged).

use std::io::Write;

use serde_json::{json, Value};
use sstkit_format::analytics::{expired_blockers, Lifetimes};

use crate::cli::{ExpiredBlockersArgs, OutputFormat};
use crate::plan::inputs::Inputs;
use crate::render::{format_micros_instant, format_seconds_instant, read_statistics};
use crate::term::{self, Stream};
use crate::{CmdResult, Outcome};

struct Entry {
    label: String,
    sref: serde_json::Map<String, Value>,
    times: Lifetimes,
    /// Data.db bytes as stored (None when its length could not be read).
    data_size: Option<u64>,
}

fn entry_json(e: &Entry) -> Value {
    json!({
        "sstable": e.label,
        "sstable_ref": e.sref,
        "min_timestamp": e.times.min_timestamp,
        "max_timestamp": e.times.max_timestamp,
        "max_local_deletion_time": e.times.max_local_deletion_time,
        "data_size": e.data_size,
    })
}

/// A local deletion time as a date; Cassandra's "never" values (no
/// expiring data: `Long.MAX_VALUE`, or `Integer.MAX_VALUE` before 5.0) as
/// `never`.
fn ldt_text(ldt: i64) -> String {
    if ldt >= i32::MAX as i64 {
        "never".into()
    } else {
        format_seconds_instant(ldt)
    }
}

/// One sstable for people: its name, Data.db size, the write time range
/// and when its data is all expired (Cassandra's `formatForExpiryTracing`
/// gives the same facts as raw numbers).
fn entry_text(e: &Entry) -> String {
    let size = e
        .data_size
        .map_or("size unknown".to_string(), crate::units::pretty_bytes);
    format!(
        "[{} ({size}, written {} .. {}, expires {})]",
        e.label,
        format_micros_instant(e.times.min_timestamp),
        format_micros_instant(e.times.max_timestamp),
        ldt_text(e.times.max_local_deletion_time)
    )
}

/// Run the command.
pub fn run(a: &ExpiredBlockersArgs, out: &mut dyn Write) -> CmdResult<Outcome> {
    let inputs = Inputs::resolve(&a.input)?.metadata_only();
    let now = a.now.unwrap_or_else(crate::clock_secs);
    let gc_before = now.saturating_sub(a.gc_grace);
    let fmt = crate::cli::text_at_terminal(a.output, OutputFormat::Text, OutputFormat::Json);
    // (table, its sstables) in input order.
    let mut tables: Vec<(String, Vec<Entry>)> = Vec::new();
    let outcome = inputs.each(|_, sst, label| {
        let st = read_statistics(sst)?;
        let stats = st.stats.ok_or_else(|| {
            sstkit_format::Error::new(
                sstkit_format::ErrorKind::BadValue("no stats metadata".into()),
                "stats metadata",
            )
            .in_file(&sst.path(sstkit_format::Component::Statistics))
        })?;
        let table = crate::table_key(&sst.desc);
        let e = Entry {
            label: label.to_string(),
            sref: crate::output::sstable_ref(&sst.desc),
            times: Lifetimes {
                min_timestamp: stats.min_timestamp,
                max_timestamp: stats.max_timestamp,
                max_local_deletion_time: stats.max_local_deletion_time,
            },
            data_size: sst.io.len(sstkit_format::Component::Data).ok(),
        };
        match tables.iter_mut().find(|t| t.0 == table) {
            Some(t) => t.1.push(e),
            None => tables.push((table, vec![e])),
        }
        Ok(())
    })?;
    let mut json_tables = Vec::new();
    let mut text = String::new();
    // One line per blocker in a file or pipe: paths stay whole for grep.
    let width = if Stream::Stdout.is_terminal() {
        term::width(Stream::Stdout)
    } else {
        usize::MAX
    };
    for (table, entries) in &tables {
        let times: Vec<Lifetimes> = entries.iter().map(|e| e.times).collect();
        let blockers = expired_blockers(&times, gc_before);
        let expired: Vec<Value> = entries
            .iter()
            .filter(|e| e.times.max_local_deletion_time < gc_before)
            .map(entry_json)
            .collect();
        let mut list = Vec::new();
        if fmt == OutputFormat::Text && !blockers.is_empty() {
            text.push_str(&format!(
                "{table}: {} blockers (gc before {}):\n",
                blockers.len(),
                format_seconds_instant(gc_before)
            ));
        }
        for (b, blocked) in &blockers {
            let mut v = entry_json(&entries[*b]);
            v["blocks"] = blocked.iter().map(|i| entry_json(&entries[*i])).collect();
            match fmt {
                OutputFormat::Ndjson => {
                    v["type"] = json!("blocker");
                    v["table"] = json!(table);
                    serde_json::to_writer(&mut *out, &v).map_err(std::io::Error::from)?;
                    out.write_all(b"\n")?;
                }
                OutputFormat::Text => {
                    let blocked_text: Vec<String> =
                        blocked.iter().map(|i| entry_text(&entries[*i])).collect();
                    let line = format!(
                        "{} blocks {} expired sstables from getting dropped: {}",
                        entry_text(&entries[*b]),
                        blocked.len(),
                        blocked_text.join(", ")
                    );
                    text.push_str(&term::wrap(&line, "  ", "    ", width));
                    if !text.ends_with('\n') {
                        text.push('\n');
                    }
                }
                OutputFormat::Json => list.push(v),
            }
        }
        if fmt == OutputFormat::Text && blockers.is_empty() {
            text.push_str(&format!(
                "{table}: no blockers ({} sstables, {} expired)\n",
                entries.len(),
                expired.len()
            ));
        }
        json_tables.push(json!({
            "table": table,
            "sstables": entries.len(),
            "expired": expired,
            "blockers": list,
        }));
    }
    match fmt {
        OutputFormat::Json => {
            let doc = json!({"now": now, "gc_before": gc_before, "tables": json_tables});
            serde_json::to_writer(&mut *out, &doc).map_err(std::io::Error::from)?;
            out.write_all(b"\n")?;
        }
        OutputFormat::Text => out.write_all(text.as_bytes())?,
        OutputFormat::Ndjson => {}
    }
    out.flush()?;
    Ok(outcome)
}
