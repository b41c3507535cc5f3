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
//! With `--threads` other than 1 both passes are cut into parts read on
//! threads of their own (the walk at the index's entries:
//! [`sstkit_format::validate`]'s `parallel` module); the report is the
//! one of a single thread.
//!
//! # JSON schema (`-o json`, the default when stdout is not a terminal)
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
//! and `scrub` (docs/output.md "Findings", `docs/schemas/finding.schema.json`):
//! `class`, `severity`, `component`, `offset`, `chunk`, `partition_key`,
//! `message`, and optional detail. `errors` counts the findings of severity
//! `error`; `valid` is true when there is none.
//!
//! `-o ndjson`: one line per finding (`"type": "finding"`) then one summary
//! line (`"type": "summary"`, the report without `findings`), each with the
//! `"sstable"` path. `-o text` (the default at a terminal): each finding as
//! a head line (class, the one offset, chunk, partition) over its wrapped
//! message, a verdict line per sstable, and after several sstables a line
//! counting the valid, damaged and incomplete ones; the skipped checks also
//! on stderr.
//!
//! Exit status: 1 when any sstable has an error finding, 3 when one cannot be read.

use std::io::Write;

use serde_json::{json, Map, Value};
use sstkit_format::checksums::ValidateOptions;
use sstkit_format::validate;

use crate::cli::{OutputFormat, ValidateArgs};
use crate::findings::{emit_report, Tally};
use crate::plan::SstPlan;
use crate::progress::Progress;
use crate::render::KeyCtx;
use crate::{for_each_sstable, CmdResult, Outcome};

/// Run the command.
pub fn run(a: &ValidateArgs, out: &mut dyn Write) -> CmdResult<Outcome> {
    let plan = SstPlan::text_at_terminal(&a.sst)?;
    let mut tally = Tally::default();
    let outcome = for_each_sstable(&plan, false, out, |sst, emit| {
        let ctx = KeyCtx::read(sst)?;
        let mut bar = Progress::new("validate");
        let opts = validate::Options {
            checksums: (!a.skip_checksums).then_some(ValidateOptions {
                threads: a.threads,
                ..ValidateOptions::default()
            }),
            threads: crate::plan::threads(a.threads),
            unit_bytes: crate::sink::pieces::unit_bytes(),
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
        emit_report(sst, emit, &ctx, summary, &report.problems)?;
        tally.record(&report.problems);
        Ok(())
    })?;
    if plan.fmt == OutputFormat::Text && plan.inputs.sstables.len() > 1 {
        write!(out, "\n{}", tally.line(plan.inputs.sstables.len()))?;
    }
    Ok(outcome)
}
