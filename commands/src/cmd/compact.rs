//! `sstkit compact SSTABLE... --output-dir DIR`: offline compaction of
//! sstables of one table into one new sstable.
//!
//! ```text
//! sstkit compact --output-dir out /data/ks/t-1234/                        # merge every sstable of the table
//! sstkit compact --output-dir out --purge --gc-grace 1d --now 2026-11-01 a-Data.db b-Data.db
//! ```
//!
//! The inputs are read as one table through the `--merge` machinery
//! ([`sstkit_format::engine::merged`]): partitions in token order, each reconciled as a
//! read would (newer cells win, deletions shadow older data). What a
//! compaction adds is [`sstkit_format::write::purge`], a sink in front of
//! the writers' ([`PurgeSink`] into a [`WriterSink`]): expired TTL cells
//! become tombstones (local deletion time = creation time, as Cassandra's
//! `AbstractCell.purge`), and with `--purge` tombstones whose local deletion
//! time is older than `--now - --gc-grace` are dropped. Every input is in
//! the compaction and nothing else is known, so a tombstone is purgeable by
//! its age alone (Cassandra's purge evaluator with no overlapping sstable
//! left out): compact every sstable of the table (or of the token range)
//! together before purging.
//!
//! The output's metadata follows Cassandra's rules for a compaction's
//! output: repaired-at is the inputs' minimum (0, unrepaired, if any input
//! is), pending repair and transient kept only when every input has the
//! same, level 0 (an offline compaction has no leveled target), commit log
//! intervals of every input, the serialization header's delta bases the
//! minimum of the inputs' Statistics.db values (`SerializationHeader.make`).
//!
//! `--max-size N` starts a new output sstable between partitions once the
//! current Data.db holds N bytes on disk, as `split` does ([`BySize`]).
//!
//! Output (json default when stdout is not a terminal, text otherwise):
//! `output` (the first sstable's Data.db), `outputs` (per sstable: `output`,
//! `partitions`, `rows`, `data_bytes`, `data_file_bytes`, `bytes`), `files`,
//! `version`, `compression`, `inputs`, `now`, `gc_before`, `partitions_read`
//! (merged partitions), `partitions`, `rows`, `purged` (counts), `data_bytes`,
//! `data_file_bytes`, `bytes` (totals); schema
//! `docs/schemas/compact.schema.json`.
//!
//! Exit status: 0 written; 2 usage (bad flags, sstables of different tables,
//! an output directory that is an input's); 3 an input that cannot be read
//! or an output that cannot be written (the partial output is removed).

use std::io::Write;

use serde_json::json;
use sstkit_format::engine::{MergeInputs, Selection, Shape, Table};
use sstkit_format::statistics::SerializationHeader;
use sstkit_format::write::bloom::expected_keys;
use sstkit_format::write::copy::kept_metadata;
use sstkit_format::write::purge::{PurgeCounts, PurgeSink, Purger};
use sstkit_format::write::sink::WriterSink;
use sstkit_format::write::{KeptMetadata, SstableWriter};

use crate::cli::{CompactArgs, OutputFormat};
use crate::plan::inputs::Inputs;
use crate::progress::Progress;
use crate::writers::{create_error, output_json, BySize, Outputs, Writer};
use crate::{CmdError, CmdResult, Outcome};

/// Run the command.
pub fn run(a: &CompactArgs, out: &mut dyn Write) -> CmdResult<Outcome> {
    let w = Writer::parse(&a.writer)?;
    if a.gc_grace < 0 {
        return Err(CmdError::Usage("--gc-grace must not be negative".into()));
    }
    let now = a.now.unwrap_or_else(crate::clock_secs);
    let plan = Inputs::resolve(&a.sst.input)?;
    crate::prepare_output_dir(&a.output_dir, &plan.sstables)?;
    let inputs = plan.open_merged()?;
    let stats = inputs
        .ssts
        .iter()
        .map(crate::render::read_statistics)
        .collect::<Result<Vec<_>, _>>()?;
    let (Some(first), Some(first_st)) = (inputs.ssts.first(), stats.first()) else {
        return Err(CmdError::Usage("no sstable to compact".into()));
    };
    let opts = w.options(first, first_st)?;
    let header = merged_header(&inputs.schema.header, &stats);
    let kept = compaction_metadata(&stats);
    let keys: u64 = inputs
        .ssts
        .iter()
        .zip(&stats)
        .map(|(sst, st)| expected_keys(sst, st))
        .sum();
    if a.max_size == Some(0) {
        return Err(CmdError::Usage("--max-size must be > 0".into()));
    }
    let mut outputs = Outputs {
        dir: &a.output_dir,
        header: &header,
        kept,
        opts: opts.clone(),
        keys,
        writers: Vec::new(),
    };
    outputs.open().map_err(create_error)?;
    let gc_before = a.purge.then(|| now - a.gc_grace);
    let purger = Purger::new(now, gc_before);
    let mut bar = Progress::new("compact");
    let copied = copy_merged(&inputs, outputs, a.max_size, purger, &mut bar);
    bar.finish();
    let (read, c, writers) = copied?;
    let mut written = Vec::new();
    for w in writers {
        written.push(w.finish()?);
    }
    plan.report_io(&inputs);
    let files: Vec<String> = written
        .iter()
        .flat_map(|w| w.files.iter().map(|p| p.display().to_string()))
        .collect();
    let sum = |f: fn(&sstkit_format::write::Written) -> u64| written.iter().map(f).sum::<u64>();
    let (partitions, rows) = (sum(|w| w.partitions), sum(|w| w.rows));
    let (data_bytes, data_file_bytes, bytes) = (
        sum(|w| w.data_length),
        sum(|w| w.data_file_length),
        sum(|w| w.total_bytes),
    );
    let first_output = written
        .first()
        .map(|w| w.data_path.display().to_string())
        .unwrap_or_default();
    let fmt = crate::cli::text_at_terminal(a.sst.output, OutputFormat::Text, OutputFormat::Json);
    if fmt == OutputFormat::Text {
        writeln!(
            out,
            "compacted {} sstables into {} ({} {}{}): {} partitions read, {} written, {} rows; \
             {} expired cells became tombstones; purged {} cell tombstones, {} row tombstones \
             or expired markers, {} range tombstone markers, {} partition deletions; \
             {} bytes of data ({} on disk), {} bytes in {} files",
            inputs.ssts.len(),
            first_output,
            opts.version,
            opts.compression.name(),
            if written.len() > 1 {
                format!(", and {} more sstables", written.len() - 1)
            } else {
                String::new()
            },
            read,
            partitions,
            rows,
            c.expired_to_tombstones,
            c.cells,
            c.rows,
            c.markers,
            c.partitions,
            data_bytes,
            data_file_bytes,
            bytes,
            files.len()
        )?;
    } else {
        let each: Vec<serde_json::Value> = written.iter().map(output_json).collect();
        let v = json!({
            "output": first_output,
            "outputs": each,
            "files": files,
            "version": opts.version.as_str(),
            "compression": opts.compression.name(),
            "inputs": inputs.labels,
            "now": now,
            "gc_before": gc_before,
            "partitions_read": read,
            "partitions": partitions,
            "rows": rows,
            "purged": {
                "expired_to_tombstones": c.expired_to_tombstones,
                "cells": c.cells,
                "rows": c.rows,
                "markers": c.markers,
                "partitions": c.partitions,
            },
            "data_bytes": data_bytes,
            "data_file_bytes": data_file_bytes,
            "bytes": bytes,
        });
        let text = if fmt == OutputFormat::Ndjson {
            serde_json::to_string(&v)
        } else {
            serde_json::to_string_pretty(&v)
        }
        .map_err(|e| CmdError::Output(std::io::Error::other(e)))?;
        writeln!(out, "{text}")?;
    }
    Ok(Outcome::default())
}

/// The merged stream of `inputs` through the engine, purged by `purger`,
/// into `outputs` (a new one once the current Data.db holds `max_size`
/// bytes, between partitions): the partitions read, the purge counts and
/// the outputs' writers.
fn copy_merged(
    inputs: &MergeInputs,
    outputs: Outputs<'_>,
    max_size: Option<u64>,
    purger: Purger,
    bar: &mut Progress,
) -> CmdResult<(u64, PurgeCounts, Vec<SstableWriter>)> {
    let t = Table::new(
        &inputs.schema.header,
        inputs.partitioner.clone(),
        purger.now,
    );
    let route = BySize {
        out: outputs,
        max: max_size,
    };
    let mut sink = PurgeSink::new(WriterSink::new(route), purger);
    let ran = inputs.dump(
        &t,
        &Selection::all(),
        &Shape::default(),
        &mut sink,
        &mut |n| bar.note(n),
    );
    // The inputs' errors name their file; a writer's is the writer's own.
    ran.map_err(|e| sink.inner_mut().error(e))?;
    let purged = sink.counts();
    let writer = sink.into_inner();
    Ok((
        writer.counts().read,
        purged,
        writer.into_route().out.writers,
    ))
}

/// The union header with the delta bases Cassandra gives a compaction's
/// output (`SerializationHeader.make`): the minimum timestamp, local
/// deletion time and TTL of the inputs' Statistics.db, not of their headers
/// (flush headers can be less precise), so the output's deltas, and so its
/// bytes, are the node's.
fn merged_header(
    union: &SerializationHeader,
    stats: &[sstkit_format::statistics::Statistics],
) -> SerializationHeader {
    use sstkit_format::statistics::header::{DELETION_TIME_EPOCH, TIMESTAMP_EPOCH};
    use sstkit_format::statistics::NO_DELETION_TIME;
    let mut h = union.clone();
    // An input without STATS (none sstkit can compact) keeps the union header.
    let Some(stats) = stats
        .iter()
        .map(|s| s.stats.as_ref())
        .collect::<Option<Vec<_>>>()
    else {
        return h;
    };
    let Some(ts) = stats.iter().map(|s| s.min_timestamp).min() else {
        return h;
    };
    // EncodingStats maps "none" (NO_TIMESTAMP, NO_DELETION_TIME) to its epochs.
    h.min_timestamp = if ts == i64::MIN { TIMESTAMP_EPOCH } else { ts };
    let ldt = stats
        .iter()
        .map(|s| s.min_local_deletion_time.unwrap_or(NO_DELETION_TIME))
        .min()
        .unwrap_or(NO_DELETION_TIME);
    h.min_local_deletion_time = if ldt == NO_DELETION_TIME {
        DELETION_TIME_EPOCH
    } else {
        ldt
    };
    h.min_ttl = stats
        .iter()
        .map(|s| s.min_ttl.unwrap_or(0))
        .min()
        .unwrap_or(0) as i64;
    // As EncodingStats.Serializer writes them: the timestamp delta as a
    // 64-bit vint, the other two as 32-bit ones.
    h.raw_deltas = (
        h.min_timestamp.wrapping_sub(TIMESTAMP_EPOCH) as u64,
        (h.min_local_deletion_time - DELETION_TIME_EPOCH) as i32 as u32 as u64,
        h.min_ttl as i32 as u32 as u64,
    );
    h
}

/// The metadata of a compaction's output (see the module docs).
fn compaction_metadata(stats: &[sstkit_format::statistics::Statistics]) -> KeptMetadata {
    let each: Vec<KeptMetadata> = stats.iter().map(kept_metadata).collect();
    let mut k = each.first().cloned().unwrap_or_default();
    k.repaired_at = each.iter().map(|m| m.repaired_at).min().unwrap_or(0);
    if each.iter().any(|m| m.pending_repair != k.pending_repair) {
        k.pending_repair = None;
    }
    k.is_transient = each.iter().all(|m| m.is_transient);
    k.level = 0;
    k.originating_host_id = None;
    let mut intervals: Vec<_> = each
        .iter()
        .flat_map(|m| m.commit_log_intervals.iter().copied())
        .collect();
    intervals.sort();
    let mut merged: Vec<(_, _)> = Vec::new();
    for (lo, hi) in intervals {
        match merged.last_mut() {
            Some((_, last_hi)) if lo <= *last_hi => *last_hi = (*last_hi).max(hi),
            _ => merged.push((lo, hi)),
        }
    }
    k.commit_log_intervals = merged;
    k.token_space_coverage = each
        .iter()
        .map(|m| m.token_space_coverage)
        .filter(|c| !c.is_nan())
        .fold(f64::NAN, f64::max);
    k
}
