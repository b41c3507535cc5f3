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
//! to back or, with `--threads` other than 1 and a Data.db of 16 MiB or
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
//! `validate-checksums` and `scrub` (README "Findings",
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
//! chunk's uncompressed range; at most [`MAX_PARTITIONS`] are listed per finding.
//!
//! NDJSON: one line per finding (`{"sstable", "type": "finding", ...finding}`),
//! then one summary line per sstable (`{"sstable", "type": "summary",
//! "has_checksums", "has_digest", "valid"?, "chunks", "bytes", "findings": count}`).
//!
//! Exit status: 1 when any sstable has an error finding, 3 when one cannot be
//! read (Data.db missing or unreadable).
//!
//! Exit status: 0 all checksums match; 1 findings; 2 usage; 3 an sstable that
//! cannot be opened at all.

use std::io::Write;
use std::ops::Range;
use std::sync::atomic::AtomicU64;

use comfy_table::Cell;
use serde_json::{json, Map, Value};
use sstkit_format::checksums::{
    validate_checksums_counting, ChecksumFinding, ChecksumReport, ValidateOptions,
};
use sstkit_format::validate::{Problem, Severity};
use sstkit_format::{Component, Error, ErrorKind, Sstable};

use crate::cli::{OutputFormat, ValidateChecksumsArgs};
use crate::cmd::dump_index::for_each_entry;
use crate::output::kv_table;
use crate::progress::Progress;
use crate::render::KeyCtx;
use crate::term::{self, Stream, Style};
use crate::{for_each_sstable, CmdError, CmdResult, Outcome};

/// Partitions listed per finding at most.
pub const MAX_PARTITIONS: usize = 1000;

/// Partitions listed per finding in text output.
const TEXT_PARTITIONS: usize = 5;

/// The partitions a finding's uncompressed range overlaps.
#[derive(Debug, Clone, Default)]
pub(crate) struct Partitions {
    /// `{"token","raw","value","pos"}`, at most [`MAX_PARTITIONS`].
    pub(crate) list: Vec<Value>,
    /// Overlapping partitions not listed.
    pub(crate) omitted: u64,
    /// Why they could not be (fully) resolved.
    pub(crate) unresolved: Option<String>,
}

/// Map each range (findings' uncompressed ranges, by finding index) to the
/// partitions overlapping it, streaming Index.db once.
fn resolve_partitions(
    sst: &Sstable,
    ranges: &[(usize, Range<u64>)],
    data_len: u64,
) -> Vec<Partitions> {
    let n = ranges.iter().map(|r| r.0 + 1).max().unwrap_or(0);
    let mut out = vec![Partitions::default(); n];
    let unresolved = |out: &mut Vec<Partitions>, why: &str, from: u64| {
        for (i, r) in ranges {
            if r.end > from {
                if let Some(p) = out.get_mut(*i) {
                    p.unresolved = Some(why.to_string());
                }
            }
        }
    };
    if !sst.has(Component::Index) {
        let why = if sst.features().trie_index {
            "trie-indexed sstable (Partitions.db): partitions are not resolved".to_string()
        } else {
            "Index.db is missing".to_string()
        };
        unresolved(&mut out, &why, 0);
        return out;
    }
    let ctx = match KeyCtx::read(sst) {
        Ok(c) => c,
        Err(e) => {
            unresolved(&mut out, &format!("cannot read the key type: {e}"), 0);
            return out;
        }
    };
    let mut sorted: Vec<(usize, Range<u64>)> = ranges.to_vec();
    sorted.sort_by_key(|r| (r.1.start, r.1.end));
    // Partition [start, end) with key `key`: attach it to every range it meets.
    let mut next = 0usize;
    let mut attach = |out: &mut Vec<Partitions>, key: &[u8], start: u64, end: u64| {
        while sorted.get(next).is_some_and(|r| r.1.end <= start) {
            next += 1;
        }
        for (i, r) in sorted.iter().skip(next) {
            if r.start >= end {
                break;
            }
            if r.end > start && r.start < end {
                if let Some(p) = out.get_mut(*i) {
                    if p.list.len() < MAX_PARTITIONS {
                        let mut k = ctx.key_json(key);
                        k["pos"] = json!(start);
                        p.list.push(k);
                    } else {
                        p.omitted += 1;
                    }
                }
            }
        }
    };
    // The previous entry: its partition ends where the next one starts.
    let mut prev_key: Vec<u8> = Vec::new();
    let mut prev_pos: Option<u64> = None;
    let res = for_each_entry(sst, |e| {
        if let Some(p) = prev_pos {
            if e.position < p {
                return Err(Error::at(
                    ErrorKind::BadValue(format!(
                        "partition position {} is before the previous one ({p})",
                        e.position
                    )),
                    Component::Index,
                    e.offset,
                    "index entry position",
                )
                .into());
            }
            attach(&mut out, &prev_key, p, e.position);
        }
        prev_key.clear();
        prev_key.extend_from_slice(e.key);
        prev_pos = Some(e.position);
        Ok(())
    });
    match res {
        Ok(()) => {
            if let Some(p) = prev_pos {
                attach(&mut out, &prev_key, p, data_len.max(p));
            }
        }
        Err(e) => {
            // Ranges that end before the last good entry are fully resolved.
            let msg = match e {
                CmdError::Format(e) => format!("Index.db is not intact: {e}"),
                other => other.to_string(),
            };
            unresolved(&mut out, &msg, prev_pos.unwrap_or(0));
        }
    }
    out
}

fn range_json(r: &Range<u64>) -> Value {
    json!([r.start, r.end])
}

/// The detail fields of a checksum finding in the shared finding shape:
/// `chunk_count`, `file_range`, `uncompressed_range`, `stored`, `computed`,
/// `algo`, `checksums`, `expected_chunks`, `chunk_size`, and the partitions
/// it overlaps.
pub(crate) fn checksum_detail(
    f: &ChecksumFinding,
    p: Option<&Partitions>,
    o: &mut Map<String, Value>,
) {
    if let ChecksumFinding::ChunksOutOfRange { count, .. } = f {
        o.insert("chunk_count".into(), json!(count));
    }
    if let Some(r) = f.file_range() {
        o.insert("file_range".into(), range_json(&r));
    }
    if let Some(r) = f.uncompressed_range() {
        o.insert("uncompressed_range".into(), range_json(&r));
    }
    match f {
        ChecksumFinding::BadChunk {
            stored,
            computed,
            algo,
            ..
        } => {
            o.insert("stored".into(), json!(format!("{stored:#010x}")));
            o.insert("computed".into(), json!(format!("{computed:#010x}")));
            o.insert("algo".into(), json!(algo.name()));
        }
        ChecksumFinding::DigestMismatch {
            algo,
            stored,
            computed,
        } => {
            o.insert("stored".into(), json!(stored.to_string()));
            o.insert("computed".into(), json!(computed.to_string()));
            o.insert("algo".into(), json!(algo.name()));
        }
        ChecksumFinding::CrcCountMismatch {
            stored,
            expected,
            chunk_size,
            ..
        } => {
            o.insert("checksums".into(), json!(stored));
            o.insert("expected_chunks".into(), json!(expected));
            o.insert("chunk_size".into(), json!(chunk_size));
        }
        _ => {}
    }
    if let Some(p) = p {
        o.insert("partitions".into(), Value::Array(p.list.clone()));
        if p.omitted > 0 {
            o.insert("partitions_omitted".into(), json!(p.omitted));
        }
        if let Some(why) = &p.unresolved {
            o.insert("partitions_unresolved".into(), json!(why));
        }
    }
}

/// The partitions each problem's uncompressed range overlaps (chunk
/// findings of the checksum pass), by problem index; Index.db is streamed
/// only when there is such a finding.
pub(crate) fn partitions_of(
    sst: &Sstable,
    problems: &[Problem],
    data_len: u64,
) -> Vec<Option<Partitions>> {
    let ranges: Vec<(usize, Range<u64>)> = problems
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            p.checksum
                .as_ref()
                .and_then(|f| f.uncompressed_range())
                .map(|r| (i, r))
        })
        .collect();
    let mut parts = if ranges.is_empty() {
        Vec::new()
    } else {
        resolve_partitions(sst, &ranges, data_len)
    };
    problems
        .iter()
        .enumerate()
        .map(|(i, p)| {
            p.checksum
                .as_ref()
                .and_then(|f| f.uncompressed_range())
                .map(|_| parts.get_mut(i).map(std::mem::take).unwrap_or_default())
        })
        .collect()
}

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

/// The first partitions of a finding, for text output.
pub(crate) fn partitions_text(p: &Partitions) -> String {
    let mut names: Vec<String> = p
        .list
        .iter()
        .take(TEXT_PARTITIONS)
        .map(|k| k["value"].as_str().unwrap_or("?").to_string())
        .collect();
    let more = (p.list.len().saturating_sub(TEXT_PARTITIONS)) as u64 + p.omitted;
    if more > 0 {
        names.push(format!("+{more} more"));
    }
    if let Some(why) = &p.unresolved {
        names.push(format!("({why})"));
    }
    names.join(", ")
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
        &a.sst.sstables,
        &a.sst.common,
        OutputFormat::Json,
        false,
        out,
        |sst, emit| {
            let (report, findings, parts) = check(sst, a.threads)?;
            emit.problems += report.errors;
            let finding_json = |i: usize, f: &Problem| {
                crate::cmd::validate::problem_json(f, None, parts.get(i).and_then(Option::as_ref))
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
                    emit.json.item(&Value::Object(o))?;
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
