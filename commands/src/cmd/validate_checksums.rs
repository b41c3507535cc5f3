//! `sstkit validate-checksums SSTABLE...`: every chunk checksum and the
//! whole-file digest of Data.db.
//!
//! ```text
//! sstkit validate-checksums nb-1-big-Data.db
//! sstkit validate-checksums --output ndjson /var/lib/scylla/data/ks/t-1234/ | jq 'select(.type=="finding")'
//! ```
//!
//! Reads: CompressionInfo.db or CRC.db and the Digest file (one read each),
//! then Data.db once in 256 KiB blocks (reads of at most `--max-io`), front
//! to back or, with `--threads` other than 1 and a Data.db of 4 MiB or
//! more, in parts cut at chunk boundaries, one thread each
//! ([`sstkit_format::checksums`]). Only when a chunk is bad: Statistics.db
//! (key type, partitioner) and Index.db (streamed in 1 MiB reads) to name the
//! partitions the bad chunks overlap.
//!
//! JSON payload (the `scylla sstable validate-checksums` shape, extended):
//! `{"has_checksums", "has_digest", "valid"?, "chunks", "bytes", "findings": [finding]}`.
//! `valid` is omitted when the sstable has no checksums (as Scylla does);
//! `chunks` counts the chunks whose checksum was compared, `bytes` the Data.db
//! bytes read. A finding has the shared shape of `validate`,
//! `validate-checksums` and `scrub` (docs/output.md "Findings",
//! `docs/schemas/finding.schema.json`): `{"class", "severity", "component",
//! "offset", "chunk", "partition_key", "message"}` plus, here,
//! `"chunk_count"?, "file_range"?: [start, end], "uncompressed_range"?: [start, end],
//! "stored"?, "computed"?, "algo"?, "checksums"?, "expected_chunks"?, "chunk_size"?,
//! "partitions"?: [{"token", "raw", "value", "pos"}], "partitions_omitted"?,
//! "partitions_unresolved"?: "why"`. `offset` is the chunk's uncompressed
//! offset; `partition_key` the partition when the chunk overlaps exactly one.
//! Ranges are half-open byte ranges: `file_range` in Data.db as stored,
//! `uncompressed_range` in the uncompressed Data.db (Index.db positions).
//! Checksums are hex strings (`0x%08x`; SHA-1 as 40 hex digits). Classes:
//! `bad_chunk`, `truncated_chunk`, `chunks_out_of_range`, `uncovered_bytes`,
//! `crc_count_mismatch`, `digest_mismatch`, `corrupt_metadata`,
//! `missing_component` (errors); `missing_checksums`, `missing_digest` (warnings).
//! A partition overlaps a chunk when its bytes `[pos_i, pos_{i+1})` meet the
//! chunk's uncompressed range; at most [`MAX_PARTITIONS`](crate::findings::MAX_PARTITIONS) are listed per finding.
//!
//! NDJSON: one line per finding (`{"sstable", "type": "finding", ...finding}`),
//! then one summary line per sstable (`{"sstable", "type": "summary",
//! "has_checksums", "has_digest", "valid"?, "chunks", "bytes", "findings": count}`).
//!
//! Exit status: 1 when any sstable has an error finding, 3 when one cannot be
//! read (Data.db missing or unreadable).

use std::io::Write;
use std::ops::Range;
use std::sync::atomic::AtomicU64;

use comfy_table::Cell;
use serde_json::{json, Map, Value};
use sstkit_format::checksums::{
    validate_checksums_counting, ChecksumFinding, ChecksumReport, ValidateOptions,
};
use sstkit_format::validate::{Problem, Severity};
use sstkit_format::{Component, Sstable};

use crate::cli::{OutputFormat, ValidateChecksumsArgs};
use crate::findings::{partitions_of, partitions_text, Partitions};
use crate::output::kv_table;
use crate::plan::SstPlan;
use crate::progress::Progress;
use crate::term::{self, Stream, Style};
use crate::{for_each_sstable, CmdResult, Outcome};

/// `has_checksums`, `has_digest`, `valid` (only with checksums), `chunks`, `bytes`.
fn summary_json(r: &ChecksumReport) -> Map<String, Value> {
    let mut o = Map::new();
    o.insert("has_checksums".into(), json!(r.has_checksums));
    o.insert("has_digest".into(), json!(r.has_digest));
    if r.has_checksums {
        o.insert("valid".into(), json!(r.valid()));
    }
    o.insert("chunks".into(), json!(r.chunks_checked));
    o.insert("bytes".into(), json!(r.bytes_read));
    o
}

/// Validate one sstable: the report, its findings (as problems) and the
/// partitions of each.
fn check(
    sst: &Sstable,
    threads: usize,
) -> CmdResult<(ChecksumReport, Vec<Problem>, Vec<Option<Partitions>>)> {
    let mut findings: Vec<Problem> = Vec::new();
    let opts = ValidateOptions {
        threads,
        ..ValidateOptions::default()
    };
    let total = sst.io.len(Component::Data).unwrap_or(0);
    let checked = AtomicU64::new(0);
    let report = Progress::new("validate-checksums").follow(&checked, total, || {
        validate_checksums_counting(sst, opts, &checked, |f| findings.push(f.into()))
    })?;
    let parts = partitions_of(sst, &findings, report.data_len);
    Ok((report, findings, parts))
}

fn text(r: &ChecksumReport, findings: &[Problem], parts: &[Option<Partitions>]) -> String {
    let rows = vec![
        ("has_checksums".to_string(), r.has_checksums.to_string()),
        ("has_digest".to_string(), r.has_digest.to_string()),
    ];
    let mut t = kv_table(&rows);
    if r.has_checksums {
        let (style, word) = if r.valid() {
            (Style::Good, "true")
        } else {
            (Style::Bad, "false")
        };
        t.add_row(vec![
            term::cell("valid", Style::Key),
            term::cell(word, style),
        ]);
    }
    for (k, v) in [("chunks", r.chunks_checked), ("bytes", r.bytes_read)] {
        t.add_row(vec![term::cell(k, Style::Key), Cell::new(v)]);
    }
    let mut s = t.to_string();
    if findings.is_empty() {
        return s;
    }
    // One block per finding (a six-column table does not fit 80 columns):
    // the class and where, then the partitions and the message, wrapped.
    let width = term::width(Stream::Stdout);
    let colour = term::color(Stream::Stdout);
    let range =
        |r: Option<Range<u64>>| r.map_or("-".to_string(), |r| format!("{}..{}", r.start, r.end));
    for (i, f) in findings.iter().enumerate() {
        s.push('\n');
        let class = f.class.as_str();
        let detail = f.checksum.as_deref();
        let mut head = class.to_string();
        if let Some(c) = f.chunk {
            head.push_str(&format!(" chunk {c}"));
        }
        if let Some(r) = detail.and_then(ChecksumFinding::file_range) {
            head.push_str(&format!(", file {}", range(Some(r))));
        }
        if let Some(r) = detail.and_then(ChecksumFinding::uncompressed_range) {
            head.push_str(&format!(", uncompressed {}", range(Some(r))));
        }
        let line = term::wrap(&head, "", "    ", width);
        let style = if f.class.severity() == Severity::Error {
            Style::Bad
        } else {
            Style::Warn
        };
        s.push_str(&line.replacen(class, &term::paint(colour, style, class), 1));
        s.push('\n');
        if let Some(p) = parts.get(i).and_then(Option::as_ref) {
            s.push_str(&term::wrap(
                &partitions_text(p),
                "  partitions: ",
                "    ",
                width,
            ));
            s.push('\n');
        }
        s.push_str(&term::wrap(&f.message, "  ", "    ", width));
        s.push('\n');
    }
    s
}

/// Run the command.
pub fn run(a: &ValidateChecksumsArgs, out: &mut dyn Write) -> CmdResult<Outcome> {
    for_each_sstable(
        &SstPlan::resolve(&a.sst, OutputFormat::Json)?,
        false,
        out,
        |sst, emit| {
            let (report, findings, parts) = check(sst, a.threads)?;
            emit.problems += report.errors;
            let finding_json = |i: usize, f: &Problem| {
                crate::findings::problem_json(f, None, parts.get(i).and_then(Option::as_ref))
            };
            match emit.fmt {
                OutputFormat::Text => emit.text(&text(&report, &findings, &parts))?,
                OutputFormat::Ndjson => {
                    for (i, f) in findings.iter().enumerate() {
                        let mut o = Map::new();
                        o.insert("type".into(), json!("finding"));
                        if let Value::Object(fo) = finding_json(i, f) {
                            o.extend(fo);
                        }
                        emit.json.item(&Value::Object(o))?;
                    }
                    let mut o = Map::new();
                    o.insert("type".into(), json!("summary"));
                    o.extend(summary_json(&report));
                    o.insert("findings".into(), json!(findings.len()));
                    emit.json.summary_item(&Value::Object(o))?;
                }
                OutputFormat::Json => {
                    let mut o = summary_json(&report);
                    let list: Vec<Value> = findings
                        .iter()
                        .enumerate()
                        .map(|(i, f)| finding_json(i, f))
                        .collect();
                    o.insert("findings".into(), Value::Array(list));
                    emit.json.object(&Value::Object(o))?;
                }
            }
            Ok(())
        },
    )
}
