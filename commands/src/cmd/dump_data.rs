//! `sstkit dump-data SSTABLE...`: the partitions of Data.db, streamed.
//!
//! ```text
//! sstkit dump-data nb-1-big-Data.db                      # scylla dump-data JSON
//! sstkit dump-data -o ndjson --limit 10 /data/ks/t-1234/
//! sstkit dump-data -o sstabledump nb-1-big-Data.db       # = Cassandra 5.0 sstabledump
//! sstkit dump-data -o sstabledump-lines --raw-timestamps nb-1-big-Data.db   # sstabledump -l -t
//! sstkit dump-data -o sstabledump --keys-only nb-1-big-Data.db              # sstabledump -e
//! sstkit dump-data -o text -k 42 -k 43 nb-1-big-Data.db  # like sstabledump -d -k 42 -k 43
//! sstkit dump-data -o cql --now 1700000000 nb-1-big-Data.db   # live rows as SELECT JSON * prints them
//! sstkit dump-data --key 'a:1' --token-range=-100,100 --exclude-key 'b:2' ...
//! ```
//!
//! Output formats and their JSON schemas: see [`crate::sink`].
//!
//! Reads: TOC.txt, Statistics.db (serialization header, partitioner), then
//! Data.db sequentially (CompressionInfo.db for compressed sstables). With
//! `--key`/`--key-hex`/`--keys-file`, each key is located through the
//! sstable's partition index ([`sstkit_format::engine::Selection::positions`]: Filter.db,
//! skipped when it says "absent", then BIG Summary.db and Index.db, BTI
//! Partitions.db), and only that partition of Data.db is read; BIG sstables
//! without Summary.db are scanned and filtered instead. `--token-range`,
//! `--exclude-key` and `--limit` filter a scan (skipped partitions are not
//! decoded: `skip_partition` steps over them by their size fields).
//!
//! `--reverse`: each partition's rows and range tombstones in reverse
//! clustering order (partitions stay in Data.db order), in bounded memory
//! through each partition's row index: the promoted index of Index.db (BIG)
//! or Rows.db (BTI); see [`sstkit_format::engine::run`].
//!
//! `--merge`: the sstables read as one table ([`sstkit_format::engine::merged`]): one
//! output of the reconciled partitions. `--key` looks each key up in every
//! sstable's partition index (as `read --merge` does); the other selections
//! filter the merged stream; `--limit` counts printed partitions. With
//! `--reverse` a partition larger than a window is read again by key, in
//! windows ([`sstkit_format::engine::MergeInputs::emit_scanned_reversed`]).
//! With `--threads`, a forward merged scan is cut into token ranges common
//! to the sstables, each merged on a thread ([`crate::sink::pieces::merged`]).
//!
//! `--token-range` takes `(START,END]` in the partitioner's token syntax
//! (Murmur3: signed 64-bit; write `--token-range=-5,10` when START is
//! negative); START >= END wraps around the ring. `--tombstones-only` keeps
//! partition deletions, range tombstone markers, row deletions, complex
//! (collection) deletions and tombstone cells, drops liveness and live cells,
//! and omits partitions left with nothing; `--limit` counts printed
//! partitions.
//!
//! Errors name the file, component, offset and partition (stderr); the
//! sstable's output is closed so stdout stays parseable (json: an
//! `{"error": ...}` entry; ndjson: a `{"type": "error", "error": ...}`
//! record), and the command goes on with the next sstable
//! (exit 3 at the end). A key that does not parse is a usage error (exit 2).
//!
//! Exit status: 0 ok; 2 usage (a `--key` that does not parse for the key
//! type); 3 unreadable input (including a Data.db that ends inside a partition
//! or before the last partition its index lists).

use std::io::Write;

use sstkit_format::Sstable;

use crate::cli::{DataOutputFormat, DumpDataArgs};
use crate::output::JsonOut;
use crate::plan::select;
use crate::plan::DumpPlan;
use crate::sink::renderer::{framing, RenderOptions, Renderer};
use crate::sink::Table;
use crate::{CmdError, CmdResult, Outcome};

/// Run the command.
pub fn run(a: &DumpDataArgs, out: &mut dyn Write) -> CmdResult<Outcome> {
    run_plan(&DumpPlan::dump_data(a)?, out)
}

/// Run a resolved `dump-data`.
fn run_plan(a: &DumpPlan, out: &mut dyn Write) -> CmdResult<Outcome> {
    if a.merge {
        return run_merged(a, out);
    }
    let mut json = JsonOut::new(out, framing(a.format));
    let mut written = 0usize;
    let multi = a.inputs.sstables.len() > 1;
    let outcome = a.inputs.each(|_, sst, label| {
        dump_one(a, sst, label, &mut json, &mut written, multi).map_err(|e| e.in_sstable(label))
    })?;
    // Text output has no framing: this only flushes it.
    json.finish()?;
    Ok(outcome)
}

/// The renderer options of a dump.
fn options(a: &DumpPlan) -> RenderOptions {
    RenderOptions {
        keys_only: a.keys_only,
        tombstones_only: a.tombstones_only,
        raw_timestamps: a.raw_timestamps,
        // Static content alone is a row only for unbounded reads, which a dump is.
        static_alone: true,
    }
}

/// Render into `renderer` what `drive` feeds it, then end its document
/// (not after an output error: the writer may be mid-token).
fn render(
    mut renderer: Renderer<'_, '_>,
    drive: impl FnOnce(&mut Renderer<'_, '_>) -> CmdResult<()>,
) -> CmdResult<()> {
    let r = drive(&mut renderer);
    if matches!(r, Err(CmdError::Output(_))) {
        return r;
    }
    match renderer.finish() {
        Err(e) => Err(CmdError::Output(e)),
        Ok(()) => r,
    }
}

/// `--merge`: the sstables as one table ([`sstkit_format::engine::merged`]), one output.
fn run_merged(a: &DumpPlan, out: &mut dyn Write) -> CmdResult<Outcome> {
    let inputs = a.inputs.open_merged()?;
    let table = Table::new(
        &inputs.schema.header,
        inputs.partitioner.clone(),
        a.now_secs,
    );
    let sel = select::resolve(&a.select, &table)?;
    if a.explain {
        return crate::sink::explain::dump_data(a, &inputs, &table, &sel, out);
    }
    let label = inputs.label();
    let scylla = matches!(a.format, DataOutputFormat::Json | DataOutputFormat::Ndjson);
    let mut json = JsonOut::new(out, framing(a.format));
    if scylla {
        json.begin_merged(&label)?;
    }
    let schema = inputs.ssts.first().and_then(|s| s.table_schema());
    let renderer = Renderer::new(a.format, &mut json, &table, schema, options(a))?;
    let job = crate::sink::pieces::Job {
        plan: a,
        label: &label,
        options: options(a),
        merged: true,
    };
    let r = render(renderer, |r| {
        crate::plan::run::merged_rendered(&job, &inputs, &table, &sel, r)
    });
    if scylla {
        let msg = match &r {
            Err(CmdError::Output(_)) => return r.map(|_| Outcome::default()),
            Err(e) => Some(e.to_string()),
            Ok(()) => None,
        };
        json.end_sstable(true, msg.as_deref())?;
    }
    let mut outcome = Outcome::default();
    outcome.settle(r)?;
    a.inputs.report_io(&inputs);
    if scylla {
        json.finish()?;
    } else {
        json.raw().flush()?;
    }
    Ok(outcome)
}

fn dump_one(
    a: &DumpPlan,
    sst: &Sstable,
    label: &str,
    json: &mut JsonOut<'_>,
    written: &mut usize,
    multi: bool,
) -> CmdResult<()> {
    let scylla = matches!(a.format, DataOutputFormat::Json | DataOutputFormat::Ndjson);
    let bound = match crate::plan::bind::sstable(sst, a.reverse && !a.keys_only) {
        Ok(b) => b,
        Err(e) => {
            // The sstable gets its entry even when it cannot be read: the
            // error is written in its place (JsonOut::end_sstable) and on stderr.
            if scylla {
                json.begin_sstable(label)?;
                json.end_sstable(true, Some(&e.to_string()))?;
            }
            return Err(e);
        }
    };
    let table = Table::new(&bound.header, bound.partitioner.clone(), a.now_secs);
    // A key that does not parse is a usage error: nothing written for it.
    let sel = select::resolve(&a.select, &table)?;
    if scylla {
        json.begin_sstable(label)?;
    } else {
        // sstabledump and text documents follow one another (see crate::sink).
        let w = json.raw();
        if a.format == DataOutputFormat::Text {
            // Text: a heading per sstable when there are several (as Emit::text).
            if multi {
                if *written > 0 {
                    writeln!(w)?;
                }
                writeln!(w, "== {label}")?;
            }
        } else if *written > 0 && a.format != DataOutputFormat::Cql {
            w.write_all(b"\n")?;
        }
    }
    *written += 1;
    let renderer = Renderer::new(a.format, json, &table, sst.table_schema(), options(a))?;
    let job = crate::sink::pieces::Job {
        plan: a,
        label,
        options: options(a),
        merged: false,
    };
    let r = render(renderer, |r| {
        crate::plan::run::rendered(&job, sst, &table, &sel, r)
    });
    if scylla {
        let msg = match &r {
            Err(CmdError::Output(_)) => return r,
            Err(e) => Some(e.to_string()),
            Ok(()) => None,
        };
        json.end_sstable(true, msg.as_deref())?;
    }
    r
}
