//! `sstkit validate SSTABLE...`: everything about an sstable, one report
//! and one exit code.
//!
//! ```text
//! sstkit validate nb-1-big-Data.db                 # JSON report, exit 1 when invalid
//! sstkit validate --skip-checksums -o text /data/ks/t-1234/   # structure only
//! sstkit validate -o ndjson nb-1-big-Data.db | jq 'select(.type == "finding") | .class'
//! ```
//!
//! Checks (see [`sstkit_format::validate`]): the components TOC.txt lists
//! exist (and those it does not list are noted); every chunk checksum and
//! the digest ([`sstkit_format::checksums`], the `validate-checksums` pass,
//! unless `--skip-checksums`); partition order (Data.db and Index.db),
//! clustering order under the table's comparator, range tombstone pairing,
//! every `prev_unfiltered_size` and `row_size`, deletion times, each Index.db
//! entry against its partition and its promoted index blocks against the
//! rows, Summary.db against Index.db, first/last key and counts against
//! Statistics.db, every key against Filter.db. Pre-3.0 sstables without
//! `--schema`: the checks that need no decoding of Data.db, the others
//! listed in `"skipped"`.
//!
//! Reads: TOC, Statistics.db, Summary.db, Index.db, Filter.db (one read each),
//! CompressionInfo.db or CRC.db and the Digest, Data.db twice sequentially
//! (the checksum pass, then the decoding walk; once with `--skip-checksums`).
//!
//! # JSON schema (`-o json`, the default)
//!
//! ```text
//! { "sstables": { "<Data.db path>": $REPORT, ... } }
//! $REPORT := { "valid": Bool, "errors": Int,          // as `scylla sstable validate`
//!              "partitions": Int, "rows": Int, "static_rows": Int,
//!              "range_tombstone_markers": Int, "data_bytes": Int,
//!              "index_entries": Int | null, "checksum_chunks": Int | null,
//!              "checks": { "<name>": { "done": Bool, "note"?: String } },
//!              "skipped": [ { "check": String, "reason": String } ],
//!              "counts": { "<class>": Int },
//!              "findings": [ $FINDING, ... ], "findings_dropped": Int }
//! ```
//!
//! `$FINDING` is the shared finding shape of `validate`, `validate-checksums`
//! and `scrub` (README "Findings", `docs/schemas/finding.schema.json`):
//! `class`, `severity`, `component`, `offset`, `chunk`, `partition_key`,
//! `message`, and optional detail. `errors` counts the findings of severity
//! `error`; `valid` is true when there is none.
//!
//! `-o ndjson`: one line per finding (`"type": "finding"`) then one summary
//! line (`"type": "summary"`, the report without `findings`), each with the
//! `"sstable"` path. `-o text`: a table of findings and a summary line; the
//! skipped checks also on stderr.
//!
//! Exit status: 1 when any sstable has an error finding, 3 when one cannot be read.

use std::io::Write;

use serde_json::{json, Map, Value};
use sstkit_format::checksums::ValidateOptions;
use sstkit_format::validate::{self, Problem, Problems};
use sstkit_format::Sstable;

use crate::cli::{OutputFormat, ValidateArgs};
use crate::cmd::validate_checksums::{checksum_detail, partitions_of, partitions_text, Partitions};
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
            let opts = validate::Options {
                checksums: (!a.skip_checksums).then(ValidateOptions::default),
                ..validate::Options::default()
            };
            let report = validate::validate(sst, &opts, &mut |p, len| bar.set(p, len))?;
            bar.finish();
            let mut summary = Map::new();
            summary.insert("valid".into(), json!(report.valid()));
            summary.insert("errors".into(), json!(report.problems.errors()));
            summary.insert("partitions".into(), json!(report.partitions));
            summary.insert("rows".into(), json!(report.rows));
            summary.insert("static_rows".into(), json!(report.static_rows));
            summary.insert("range_tombstone_markers".into(), json!(report.markers));
            summary.insert("data_bytes".into(), json!(report.data_len));
            summary.insert("index_entries".into(), json!(report.index_entries));
            summary.insert("checksum_chunks".into(), json!(report.checksum_chunks));
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
            let skipped: Vec<Value> = report
                .skipped()
                .map(|c| json!({"check": c.name, "reason": c.note.as_deref().unwrap_or("")}))
                .collect();
            if emit.fmt == OutputFormat::Text {
                for c in report.skipped() {
                    eprintln!(
                        "sstkit: {}: skipped {}: {}",
                        emit.label,
                        c.name,
                        c.note.as_deref().unwrap_or("")
                    );
                }
            }
            summary.insert("skipped".into(), Value::Array(skipped));
            emit_report(sst, emit, &ctx, summary, &report.problems)
        },
    )
}

/// One finding in the shared finding shape of `validate`,
/// `validate-checksums` and `scrub` (README "Findings";
/// `docs/schemas/finding.schema.json`). `parts`: the partitions a chunk
/// finding overlaps; the one partition key when there is exactly one.
pub(crate) fn problem_json(p: &Problem, ctx: Option<&KeyCtx>, parts: Option<&Partitions>) -> Value {
    let mut m = Map::new();
    m.insert("class".into(), json!(p.class.as_str()));
    m.insert("severity".into(), json!(p.class.severity().as_str()));
    m.insert("component".into(), json!(p.component.label()));
    m.insert("offset".into(), json!(p.offset));
    m.insert("chunk".into(), json!(p.chunk));
    let key = match (p.partition_key.as_deref(), ctx, parts) {
        (Some(k), Some(c), _) => c.key_json(k),
        (None, _, Some(ps)) if ps.list.len() == 1 && ps.omitted == 0 => {
            let mut k = ps.list[0].clone();
            if let Some(o) = k.as_object_mut() {
                o.remove("pos");
            }
            k
        }
        _ => Value::Null,
    };
    m.insert("partition_key".into(), key);
    m.insert("message".into(), json!(p.message));
    if let Some(e) = p.end {
        m.insert("end".into(), json!(e));
    }
    if let (false, Some(c)) = (p.lost_keys.is_empty(), ctx) {
        m.insert(
            "lost_keys".into(),
            Value::Array(p.lost_keys.iter().map(|k| c.key_json(k)).collect()),
        );
    }
    if let Some(f) = &p.checksum {
        checksum_detail(f, parts, &mut m);
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
    emit.problems += problems.errors();
    let data_len = summary
        .get("data_bytes")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let parts = partitions_of(sst, &problems.list, data_len);
    let part = |i: usize| parts.get(i).and_then(Option::as_ref);
    let counts: Map<String, Value> = problems
        .counts
        .iter()
        .map(|(c, n)| (c.as_str().to_string(), json!(n)))
        .collect();
    summary.insert("counts".into(), Value::Object(counts));
    summary.insert("findings_dropped".into(), json!(problems.dropped));
    match emit.fmt {
        OutputFormat::Json => {
            let findings: Vec<Value> = problems
                .list
                .iter()
                .enumerate()
                .map(|(i, p)| problem_json(p, Some(ctx), part(i)))
                .collect();
            summary.insert("findings".into(), Value::Array(findings));
            emit.json.object(&Value::Object(summary))?;
        }
        OutputFormat::Ndjson => {
            for (i, p) in problems.list.iter().enumerate() {
                let mut v = Map::new();
                v.insert("type".into(), json!("finding"));
                if let Value::Object(o) = problem_json(p, Some(ctx), part(i)) {
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
                for (i, p) in problems.list.iter().enumerate() {
                    let key = match (p.partition_key.as_deref(), part(i)) {
                        (Some(k), _) => {
                            format!("{} (0x{})", ctx.key_text(k), crate::output::hex(k))
                        }
                        (None, Some(ps)) => partitions_text(ps),
                        (None, None) => String::new(),
                    };
                    let mut msg = p.message.clone();
                    if let Some(e) = p.end {
                        msg.push_str(&format!(" [lost {:#x}..{e:#x}]", p.offset));
                    }
                    t.add_row(vec![
                        term::cell(p.class.as_str(), Style::Bad),
                        Cell::new(p.component.label()),
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
            let valid = problems.errors() == 0;
            let verdict = if valid { "valid" } else { "INVALID" };
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
            let style = if valid { Style::Good } else { Style::Bad };
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
