//! The shared finding shape of `validate`, `validate-checksums` and `scrub`
//! (docs/output.md "Findings", `docs/schemas/finding.schema.json`): one finding as
//! JSON, the partitions a chunk finding overlaps, and the report writer the
//! three commands share, so that no command module depends on another's.

use std::ops::Range;

use serde_json::{json, Map, Value};
use sstkit_format::checksums::ChecksumFinding;
use sstkit_format::index::for_each_entry;
use sstkit_format::validate::{Problem, Problems};
use sstkit_format::{Component, Error, ErrorKind, Sstable};

use crate::cli::OutputFormat;
use crate::render::KeyCtx;
use crate::term::{self, Stream, Style};
use crate::{CmdError, CmdResult, Emit};

/// Partitions listed per finding at most.
pub const MAX_PARTITIONS: usize = 1000;

/// Partitions listed per finding in text output.
const TEXT_PARTITIONS: usize = 5;

/// How the sstables of a `validate` or `scrub` run came out, for the text
/// summary line after several.
#[derive(Debug, Default)]
pub struct Tally {
    /// Sstables reported (the others could not be read).
    pub reported: u64,
    /// Without error findings.
    pub valid: u64,
    /// With error findings, none of them a missing component.
    pub damaged: u64,
    /// With a missing component.
    pub missing_parts: u64,
}

impl Tally {
    /// Count one reported sstable.
    pub fn record(&mut self, problems: &Problems) {
        use sstkit_format::validate::ProblemClass;
        self.reported += 1;
        if problems.errors() == 0 {
            self.valid += 1;
        } else if problems
            .counts
            .get(&ProblemClass::MissingComponent)
            .is_some_and(|n| *n > 0)
        {
            self.missing_parts += 1;
        } else {
            self.damaged += 1;
        }
    }

    /// `N sstables checked: V valid, D damaged, I incomplete`, where the
    /// incomplete ones miss a component or could not be read at all.
    pub fn line(&self, checked: usize) -> String {
        let unreadable = (checked as u64).saturating_sub(self.reported);
        format!(
            "{checked} sstables checked: {} valid, {} damaged, {} incomplete\n",
            self.valid,
            self.damaged,
            self.missing_parts + unreadable
        )
    }
}

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
    let res = for_each_entry::<CmdError>(sst, |e| {
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

/// One finding in the shared finding shape of `validate`,
/// `validate-checksums` and `scrub` (docs/output.md "Findings";
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

/// One finding as text: a head line (the class, where, the chunk, the
/// partition) and the message under it, both wrapped to `width` with the
/// class never cut; the one offset is the finding's, so a location the
/// message starts with (the checksum pass's on-disk range) is left out.
fn finding_text(p: &Problem, key: Option<&str>, colour: bool, width: usize) -> String {
    let class = p.class.as_str();
    let mut head = format!("{class}: {}+{:#x}", p.component.label(), p.offset);
    if let Some(e) = p.end {
        head.push_str(&format!("..{e:#x}"));
    }
    if let Some(c) = p.chunk {
        head.push_str(&format!(", chunk {c}"));
    }
    if let Some(k) = key {
        head.push_str(&format!(", partition {k}"));
    }
    let head = term::wrap(&head, "", "    ", width);
    // Coloured after wrapping: escape codes take no columns.
    let head = head.replacen(class, &term::paint(colour, Style::Bad, class), 1);
    let mut msg = p.message.as_str();
    let label = p.component.label();
    if let Some(rest) = msg.strip_prefix(label) {
        if let Some(i) = rest.find(": ").filter(|_| rest.starts_with(['+', ':'])) {
            msg = &rest[i + 2..];
        }
    }
    if let Some(c) = p.chunk {
        msg = msg.strip_prefix(&format!("chunk {c}: ")).unwrap_or(msg);
    }
    format!("{head}\n{}\n", term::wrap(msg, "  ", "  ", width))
}

/// Write a report: `summary` fields plus the findings, in the chosen format.
/// Counts the findings as problems (exit 1).
pub fn emit_report(
    sst: &Sstable,
    emit: &mut Emit<'_, '_>,
    ctx: &KeyCtx,
    summary: Map<String, Value>,
    problems: &Problems,
) -> CmdResult<()> {
    emit_report_with(sst, emit, ctx, summary, problems, "")
}

/// [`emit_report`], with `tail` (lines ending in a newline) after the text
/// report's summary line.
pub fn emit_report_with(
    sst: &Sstable,
    emit: &mut Emit<'_, '_>,
    ctx: &KeyCtx,
    mut summary: Map<String, Value>,
    problems: &Problems,
    tail: &str,
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
            emit.json.summary_item(&Value::Object(v))?;
        }
        OutputFormat::Text => {
            let colour = term::color(Stream::Stdout);
            let width = term::width(Stream::Stdout);
            let mut s = String::new();
            for (i, p) in problems.list.iter().enumerate() {
                let key = match (p.partition_key.as_deref(), part(i)) {
                    (Some(k), _) => {
                        Some(format!("{} (0x{})", ctx.key_text(k), crate::output::hex(k)))
                    }
                    (None, Some(ps)) if !ps.list.is_empty() || ps.unresolved.is_some() => {
                        Some(partitions_text(ps))
                    }
                    _ => None,
                };
                s.push_str(&finding_text(p, key.as_deref(), colour, width));
            }
            if problems.dropped > 0 {
                s.push_str(&format!("... and {} more findings\n", problems.dropped));
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
            if !s.ends_with('\n') {
                s.push('\n');
            }
            s.push_str(tail);
            emit.text(&s)?;
        }
    }
    Ok(())
}
