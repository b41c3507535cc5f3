//! `sstkit validate SSTABLE...`: full structural validation with the index.
//!
//! ```text
//! sstkit validate nb-1-big-Data.db                 # JSON report, exit 1 when invalid
//! sstkit validate -o text /data/ks/t-1234/         # a table of findings per sstable
//! sstkit validate -o ndjson nb-1-big-Data.db | jq 'select(.type == "finding") | .class'
//! ```
//!
//! Checks (see [`sstkit_format::validate`]): partition order (Data.db and
//! Index.db), clustering order under the table's comparator, range
//! tombstone pairing, every `prev_unfiltered_size` and `row_size`, deletion
//! times, each Index.db entry against its partition and its promoted index
//! blocks against the rows, Summary.db against Index.db, first/last key and
//! counts against Statistics.db, every key against Filter.db, and the
//! compressed chunk checksums met while reading. Whole-file checksums
//! (Digest, CRC.db) are `validate-checksums`' job.
//!
//! Reads: TOC, Statistics.db, Summary.db, Index.db, Filter.db (one read each),
//! CompressionInfo.db, and Data.db once sequentially.
//!
//! # JSON schema (`-o json`, the default)
//!
//! ```text
//! { "sstables": { "<Data.db path>": $REPORT, ... } }
//! $REPORT := { "valid": Bool, "errors": Int,          // as `scylla sstable validate`
//!              "partitions": Int, "rows": Int, "static_rows": Int,
//!              "range_tombstone_markers": Int, "data_bytes": Int,
//!              "index_entries": Int | null,
//!              "checks": { "<name>": { "done": Bool, "note"?: String } },
//!              "counts": { "<class>": Int },
//!              "findings": [ $FINDING, ... ], "findings_dropped": Int }
//! $FINDING := { "class": String,        // stable: partition_order, clustering_order, ...
//!               "component": String,    // "Data.db", "Index.db", ...
//!               "offset": Int,          // uncompressed offset for Data.db
//!               "chunk": Int | null,    // compressed chunk (compressed Data.db)
//!               "partition_key": { "token", "raw", "value" } | null,
//!               "message": String,
//!               "end"?: Int, "lost_keys"?: [ {"token","raw","value"} ] }   // scrub data_lost
//! ```
//!
//! `-o ndjson`: one line per finding (`"type": "finding"`) then one summary
//! line (`"type": "summary"`, the report without `findings`), each with the
//! `"sstable"` path. `-o text`: a table of findings and a summary line.
//!
//! Exit status: 1 when any sstable has findings, 3 when one cannot be read.

use std::io::Write;

use serde_json::{json, Map, Value};
use sstkit_format::validate::{self, Problem, Problems};
use sstkit_format::Sstable;

use crate::cli::{OutputFormat, ValidateArgs};
use crate::output::table;
use crate::progress::Progress;
use crate::render::KeyCtx;
use crate::term::{self, Stream, Style};
use crate::{for_each_sstable, CmdResult, Emit, Outcome};
use comfy_table::Cell;

/// Run the command.
pub fn run(a: &ValidateArgs, out: &mut dyn Write) -> CmdResult<Outcome> {
    for_each_sstable(
        &a.sst.sstables,
        &a.sst.common,
        OutputFormat::Json,
        false,
        out,
        |sst, emit| {
            let ctx = KeyCtx::read(sst)?;
            let mut bar = Progress::new("validate");
            let report = validate::validate(sst, &validate::Options::default(), &mut |p, len| {
                bar.set(p, len)
            })?;
            bar.finish();
            let mut summary = Map::new();
            summary.insert("valid".into(), json!(report.valid()));
            summary.insert("errors".into(), json!(report.problems.total()));
            summary.insert("partitions".into(), json!(report.partitions));
            summary.insert("rows".into(), json!(report.rows));
            summary.insert("static_rows".into(), json!(report.static_rows));
            summary.insert("range_tombstone_markers".into(), json!(report.markers));
            summary.insert("data_bytes".into(), json!(report.data_len));
            summary.insert("index_entries".into(), json!(report.index_entries));
            let mut checks = Map::new();
            for c in &report.checks {
                let mut m = Map::new();
                m.insert("done".into(), json!(c.done));
                if let Some(n) = &c.note {
                    m.insert("note".into(), json!(n));
                }
                checks.insert(c.name.into(), Value::Object(m));
            }
            summary.insert("checks".into(), Value::Object(checks));
            emit_report(sst, emit, &ctx, summary, &report.problems)
        },
    )
}

/// One finding as JSON.
pub fn problem_json(p: &Problem, ctx: &KeyCtx) -> Value {
    let mut m = Map::new();
    m.insert("class".into(), json!(p.class.as_str()));
    m.insert("component".into(), json!(p.component.suffix()));
    m.insert("offset".into(), json!(p.offset));
    m.insert("chunk".into(), json!(p.chunk));
    m.insert(
        "partition_key".into(),
        p.partition_key
            .as_deref()
            .map_or(Value::Null, |k| ctx.key_json(k)),
    );
    m.insert("message".into(), json!(p.message));
    if let Some(e) = p.end {
        m.insert("end".into(), json!(e));
    }
    if !p.lost_keys.is_empty() {
        m.insert(
            "lost_keys".into(),
            Value::Array(p.lost_keys.iter().map(|k| ctx.key_json(k)).collect()),
        );
    }
    Value::Object(m)
}

/// Write a report: `summary` fields plus the findings, in the chosen format.
/// Counts the findings as problems (exit 1).
pub fn emit_report(
    sst: &Sstable,
    emit: &mut Emit<'_, '_>,
    ctx: &KeyCtx,
    mut summary: Map<String, Value>,
    problems: &Problems,
) -> CmdResult<()> {
    let _ = sst;
    emit.problems += problems.total();
    let counts: Map<String, Value> = problems
        .counts
        .iter()
        .map(|(c, n)| (c.as_str().to_string(), json!(n)))
        .collect();
    summary.insert("counts".into(), Value::Object(counts));
    summary.insert("findings_dropped".into(), json!(problems.dropped));
    match emit.fmt {
        OutputFormat::Json => {
            let findings: Vec<Value> = problems.list.iter().map(|p| problem_json(p, ctx)).collect();
            summary.insert("findings".into(), Value::Array(findings));
            emit.json.object(&Value::Object(summary))?;
        }
        OutputFormat::Ndjson => {
            for p in &problems.list {
                let mut v = Map::new();
                v.insert("type".into(), json!("finding"));
                if let Value::Object(o) = problem_json(p, ctx) {
                    v.extend(o);
                }
                emit.json.item(&Value::Object(v))?;
            }
            let mut v = Map::new();
            v.insert("type".into(), json!("summary"));
            v.extend(summary);
            emit.json.item(&Value::Object(v))?;
        }
        OutputFormat::Text => {
            let colour = term::color(Stream::Stdout);
            let mut s = String::new();
            if !problems.list.is_empty() {
                let mut t = table(&[
                    "class",
                    "component",
                    "offset",
                    "chunk",
                    "partition key",
                    "message",
                ]);
                for p in &problems.list {
                    let key = p.partition_key.as_deref().map_or(String::new(), |k| {
                        format!("{} (0x{})", ctx.key_text(k), crate::output::hex(k))
                    });
                    let mut msg = p.message.clone();
                    if let Some(e) = p.end {
                        msg.push_str(&format!(" [lost {:#x}..{e:#x}]", p.offset));
                    }
                    t.add_row(vec![
                        term::cell(p.class.as_str(), Style::Bad),
                        Cell::new(p.component.suffix()),
                        Cell::new(format!("{:#x}", p.offset)),
                        Cell::new(p.chunk.map_or(String::new(), |c| c.to_string())),
                        term::cell(key, Style::Key),
                        Cell::new(msg),
                    ]);
                }
                s.push_str(&t.to_string());
                s.push('\n');
                if problems.dropped > 0 {
                    s.push_str(&format!("... and {} more findings\n", problems.dropped));
                }
            }
            let get = |k: &str| summary.get(k).map(|v| v.to_string()).unwrap_or_default();
            let width = term::width(Stream::Stdout);
            let verdict = if problems.is_empty() {
                "valid"
            } else {
                "INVALID"
            };
            let line = term::wrap(
                &format!(
                    "{verdict}: {} finding(s); {} partitions, {} rows, {} range tombstone markers",
                    problems.total(),
                    get("partitions"),
                    get("rows"),
                    get("range_tombstone_markers"),
                ),
                "",
                "  ",
                width,
            );
            // Coloured after wrapping: escape codes take no columns.
            let style = if problems.is_empty() {
                Style::Good
            } else {
                Style::Bad
            };
            s.push_str(&line.replacen(verdict, &term::paint(colour, style, verdict), 1));
            if let Some(Value::Object(checks)) = summary.get("checks") {
                let notes: Vec<String> = checks
                    .iter()
                    .filter_map(|(k, v)| {
                        v.get("note")
                            .and_then(Value::as_str)
                            .map(|n| format!("{k}: {n}"))
                    })
                    .collect();
                for n in notes {
                    s.push('\n');
                    s.push_str(&term::wrap(&n, "  note: ", "        ", width));
                }
            }
            emit.text(&s)?;
        }
    }
    Ok(())
}
