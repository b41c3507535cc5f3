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
//! Output formats and their JSON schemas: see [`crate::dump`].
//!
//! Reads: TOC.txt, Statistics.db (serialization header, partitioner), then
//! Data.db sequentially (CompressionInfo.db for compressed sstables). With
//! `--key`/`--key-hex`/`--keys-file`, each key is located through the
//! sstable's partition index ([`select::lookup_positions`]: Filter.db,
//! skipped when it says "absent", then BIG Summary.db and Index.db, BTI
//! Partitions.db), and only that partition of Data.db is read; BIG sstables
//! without Summary.db are scanned and filtered instead. `--token-range`,
//! `--exclude-key` and `--limit` filter a scan (skipped partitions are not
//! decoded: `skip_partition` steps over them by their size fields).
//!
//! `--reverse`: each partition's rows and range tombstones in reverse
//! clustering order (partitions stay in Data.db order), in bounded memory
//! through each partition's row index: the promoted index of Index.db (BIG)
//! or Rows.db (BTI); see [`super::read`].
//!
//! `--merge`: the sstables read as one table ([`crate::merged`]): one
//! output of the reconciled partitions. `--key` looks each key up in every
//! sstable's partition index (as `read --merge` does); the other selections
//! filter the merged stream; `--limit` counts printed partitions. With
//! `--reverse` a partition larger than a window is read again by key, in
//! windows ([`crate::merged::MergeInputs::emit_scanned_reversed`]).
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

use std::io::{self, Write};

use sstkit_format::component::Component;
use sstkit_format::data::{Fragment, ScanReader};
use sstkit_format::statistics::Statistics;
use sstkit_format::token::Partitioner;
use sstkit_format::Sstable;

use crate::cli::{DataOutputFormat, DumpDataArgs, OutputFormat};
use crate::dump::cql::CqlWriter;
use crate::dump::scylla::ScyllaWriter;
use crate::dump::select::{self, Selection};
use crate::dump::sstabledump::{KeysWriter, SstabledumpWriter};
use crate::dump::text::TextWriter;
use crate::dump::{type_warning, Sink, Table, TypeCheck};
use crate::output::JsonOut;
use crate::plan::DumpPlan;
use crate::progress::Progress;
use crate::term::Stream;
use crate::{sstable_label, CmdError, CmdResult, Outcome};

/// Run the command.
pub fn run(a: &DumpDataArgs, out: &mut dyn Write) -> CmdResult<Outcome> {
    run_plan(&DumpPlan::dump_data(a)?, out)
}

/// Run a resolved `dump-data`.
fn run_plan(a: &DumpPlan, out: &mut dyn Write) -> CmdResult<Outcome> {
    if a.merge {
        return run_merged(a, out);
    }
    let now_secs = a.now_secs;
    let json_fmt = match a.format {
        DataOutputFormat::Ndjson => OutputFormat::Ndjson,
        _ => OutputFormat::Json,
    };
    let scylla = matches!(a.format, DataOutputFormat::Json | DataOutputFormat::Ndjson);
    let mut json = JsonOut::new(out, if scylla { json_fmt } else { OutputFormat::Text });
    let mut written = 0usize;
    let multi = a.inputs.sstables.len() > 1;
    let outcome = a.inputs.each(|_, sst, label| {
        dump_one(a, sst, label, now_secs, &mut json, &mut written, multi)
            .map_err(|e| e.in_sstable(label))
    })?;
    // Text output has no framing: this only flushes it.
    json.finish()?;
    Ok(outcome)
}

/// `--merge`: the sstables as one table ([`crate::merged`]), one output.
fn run_merged(a: &DumpPlan, out: &mut dyn Write) -> CmdResult<Outcome> {
    let inputs = a.inputs.open_merged()?;
    let now_secs = a.now_secs;
    let table = Table {
        header: &inputs.schema.header,
        partitioner: inputs.partitioner.clone(),
        now_secs,
        raw_timestamps: a.raw_timestamps,
    };
    let sel = Selection::resolve(&a.select, &table)?;
    if a.explain {
        return crate::explain::dump_data(a, &inputs, &table, &sel, out);
    }
    let label = inputs.label();
    let scylla = matches!(a.format, DataOutputFormat::Json | DataOutputFormat::Ndjson);
    let json_fmt = match a.format {
        DataOutputFormat::Ndjson => OutputFormat::Ndjson,
        _ => OutputFormat::Json,
    };
    let mut json = JsonOut::new(out, if scylla { json_fmt } else { OutputFormat::Text });
    let shape = crate::merged::Shape {
        reverse: a.reverse,
        ..Default::default()
    };
    let mut outcome = Outcome::default();
    let r = if scylla {
        json.begin_merged(&label)?;
        let mut sink = ScyllaWriter::new(
            &mut json,
            a.format == DataOutputFormat::Ndjson,
            a.tombstones_only,
        );
        let mut r = drive_merged(a, &inputs, &table, &sel, &shape, &mut sink);
        if !matches!(r, Err(CmdError::Output(_))) {
            if let Err(e) = sink.flush() {
                r = Err(CmdError::Output(e));
            }
        }
        drop(sink);
        let msg = match &r {
            Err(CmdError::Output(_)) => return r.map(|_| outcome),
            Err(e) => Some(e.to_string()),
            Ok(()) => None,
        };
        json.end_sstable(true, msg.as_deref())?;
        r
    } else {
        let w = json.raw();
        match a.format {
            DataOutputFormat::Sstabledump | DataOutputFormat::SstabledumpLines if a.keys_only => {
                let mut sink = SdKeys {
                    w: KeysWriter::new(w),
                };
                sink.w.begin()?;
                let r = drive_merged(a, &inputs, &table, &sel, &shape, &mut sink);
                if !matches!(r, Err(CmdError::Output(_))) {
                    sink.w.finish()?;
                }
                r
            }
            DataOutputFormat::Sstabledump | DataOutputFormat::SstabledumpLines => {
                let lines = a.format == DataOutputFormat::SstabledumpLines;
                let mut sink = SdSink::new(SstabledumpWriter::new(w, lines), a.tombstones_only);
                sink.w.begin()?;
                let r = drive_merged(a, &inputs, &table, &sel, &shape, &mut sink);
                if !matches!(r, Err(CmdError::Output(_))) {
                    sink.w.finish()?;
                }
                r
            }
            DataOutputFormat::Cql => {
                let names = inputs.ssts.first().and_then(|s| s.table_schema());
                let mut sink = CqlWriter::new(w, &table, names, true);
                let r = drive_merged(a, &inputs, &table, &sel, &shape, &mut sink);
                if !matches!(r, Err(CmdError::Output(_))) {
                    sink.flush()?;
                }
                r
            }
            _ => {
                let mut sink = TextWriter::new(w, a.tombstones_only);
                drive_merged(a, &inputs, &table, &sel, &shape, &mut sink)
            }
        }
    };
    outcome.settle(r)?;
    a.inputs.report_io(&inputs);
    if scylla {
        json.finish()?;
    } else {
        json.raw().flush()?;
    }
    Ok(outcome)
}

/// The merged partitions `sel` wants, to `sink`; `--limit` counts printed
/// partitions.
pub(crate) fn drive_merged(
    a: &DumpPlan,
    inputs: &crate::merged::MergeInputs,
    t: &Table<'_>,
    sel: &Selection,
    shape: &crate::merged::Shape,
    sink: &mut dyn Sink,
) -> CmdResult<()> {
    let limit = a.limit;
    if limit == 0 {
        return Ok(());
    }
    let mut emitted = 0u64;
    if let (Some(keys), true) = (&sel.keys, shape.reverse && !a.keys_only) {
        // Reversed point lookups: each key's partition in windows.
        let mut idx = inputs.indexes()?;
        let all = sstkit_format::read::Slice::all();
        let mut visits = Vec::new();
        for key in keys {
            if !sel.wants(t, key) {
                continue;
            }
            if inputs
                .emit_lookup(&mut idx, key, &all, t, shape, sink, &mut visits)?
                .is_none()
            {
                crate::render::note_key_absent(
                    &inputs.label(),
                    &select::key_text(t, key),
                    sstkit_format::read::Absence::Index,
                );
                continue;
            }
            if sink.last_partition_written() {
                emitted += 1;
                if emitted >= limit {
                    break;
                }
            }
        }
        return Ok(());
    }
    // Reversed scan: the indexes a partition too large to hold is read through.
    let mut rev_idx = None;
    // One merged partition to the sink: true once `--limit` partitions are printed.
    let mut emit = |merger: &mut sstkit_format::merge::Merger<'_>,
                    start: sstkit_format::merge::MergedStart|
     -> CmdResult<bool> {
        let printed = if a.keys_only {
            sink.key_only(t, &start.key)?;
            true
        } else if shape.reverse {
            inputs.emit_scanned_reversed(&mut rev_idx, merger, start, t, shape, sink)?
        } else {
            crate::merged::emit_partition(merger, start, &inputs.schema, t, shape, sink)?
        };
        if printed {
            emitted += 1;
        }
        Ok(emitted >= limit)
    };
    if let Some(keys) = &sel.keys {
        // Point lookups: each key through every sstable's partition index.
        let mut idx = inputs.indexes()?;
        let all = sstkit_format::read::Slice::all();
        for key in keys {
            if !sel.wants(t, key) {
                continue;
            }
            let (sources, _) = inputs.partition_sources(&mut idx, key, &all)?;
            if sources.is_empty() {
                crate::render::note_key_absent(
                    &inputs.label(),
                    &select::key_text(t, key),
                    sstkit_format::read::Absence::Index,
                );
                continue;
            }
            let mut merger = inputs.merger(sources);
            let Some(start) = merger.next_partition()? else {
                continue;
            };
            if emit(&mut merger, start)? {
                break;
            }
        }
        return Ok(());
    }
    let mut merger = inputs.merger(inputs.scan_sources()?);
    // A merged scan to a file or pipe is a long pass too: the bar counts every sstable's bytes.
    let mut bar = if Stream::Stdout.is_terminal() {
        Progress::hidden()
    } else {
        Progress::new(a.command)
    };
    while let Some(start) = merger.next_partition()? {
        let (done, total) = merger.progress();
        bar.set(done, total);
        if !sel.wants(t, &start.key) {
            continue;
        }
        if emit(&mut merger, start)? {
            break;
        }
    }
    Ok(())
}

/// Statistics.db: header and partitioner.
fn table_of(
    sst: &Sstable,
    reverse: bool,
) -> CmdResult<(sstkit_format::statistics::SerializationHeader, Partitioner)> {
    let bytes = sst.read_component(Component::Statistics)?;
    let st = Statistics::parse_lenient(&bytes, sst.features())
        .map_err(|e| e.in_file(&sst.path(Component::Statistics)))?;
    // ka/la: synthesized from --schema (an error naming the file without it).
    let header = sst.data_header(&st)?;
    let partitioner = crate::render::partitioner_of(sst, &st)?;
    // A Data.db cut at a partition boundary reads as a shorter table. The
    // reversed dump of a BIG sstable walks Index.db and fails at the first
    // partition past the end itself, without this extra index read.
    if !reverse || sst.features().trie_index {
        if let Some(e) = crate::truncation::data_shorter_than_index(sst, &st) {
            return Err(e.into());
        }
    }
    Ok((header, partitioner))
}

#[allow(clippy::too_many_arguments)]
fn dump_one(
    a: &DumpPlan,
    sst: &Sstable,
    label: &str,
    now_secs: i64,
    json: &mut JsonOut<'_>,
    written: &mut usize,
    multi: bool,
) -> CmdResult<()> {
    let scylla = matches!(a.format, DataOutputFormat::Json | DataOutputFormat::Ndjson);
    if scylla {
        // The sstable gets its entry even when it cannot be read: the error
        // is written in its place (JsonOut::end_sstable) and on stderr.
        let (header, partitioner) = match table_of(sst, a.reverse && !a.keys_only) {
            Ok(x) => x,
            Err(e) => {
                json.begin_sstable(label)?;
                json.end_sstable(true, Some(&e.to_string()))?;
                return Err(e);
            }
        };
        let table = Table {
            header: &header,
            partitioner,
            now_secs,
            raw_timestamps: a.raw_timestamps,
        };
        // A key that does not parse is a usage error: nothing written for it.
        let sel = Selection::resolve(&a.select, &table)?;
        json.begin_sstable(label)?;
        let mut sink = ScyllaWriter::new(
            json,
            a.format == DataOutputFormat::Ndjson,
            a.tombstones_only,
        );
        let mut r = drive(a, sst, &table, &sel, &mut sink);
        // What the writer buffers goes out before the payload is closed.
        if !matches!(r, Err(CmdError::Output(_))) {
            if let Err(e) = sink.flush() {
                r = Err(CmdError::Output(e));
            }
        }
        drop(sink);
        let msg = match &r {
            Err(CmdError::Output(_)) => return r,
            Err(e) => Some(e.to_string()),
            Ok(()) => None,
        };
        json.end_sstable(true, msg.as_deref())?;
        return r;
    }
    let (header, partitioner) = table_of(sst, a.reverse && !a.keys_only)?;
    let table = Table {
        header: &header,
        partitioner,
        now_secs,
        raw_timestamps: a.raw_timestamps,
    };
    let sel = Selection::resolve(&a.select, &table)?;
    // sstabledump and text documents follow one another (see crate::dump).
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
    *written += 1;
    // After an output error (e.g. a closed pipe) nothing more is written.
    let output_failed = |r: &CmdResult<()>| matches!(r, Err(CmdError::Output(_)));
    match a.format {
        DataOutputFormat::Sstabledump | DataOutputFormat::SstabledumpLines if a.keys_only => {
            let mut sink = SdKeys {
                w: KeysWriter::new(w),
            };
            sink.w.begin()?;
            let r = drive(a, sst, &table, &sel, &mut sink);
            if !output_failed(&r) {
                sink.w.finish()?;
            }
            r
        }
        DataOutputFormat::Sstabledump | DataOutputFormat::SstabledumpLines => {
            let lines = a.format == DataOutputFormat::SstabledumpLines;
            let mut sink = SdSink::new(SstabledumpWriter::new(w, lines), a.tombstones_only);
            sink.w.begin()?;
            let r = drive(a, sst, &table, &sel, &mut sink);
            if !output_failed(&r) {
                sink.w.finish()?;
            }
            r
        }
        DataOutputFormat::Cql => {
            // Static content alone is a row only for unbounded reads, which a dump is.
            let mut sink = CqlWriter::new(w, &table, sst.table_schema(), true);
            let r = drive(a, sst, &table, &sel, &mut sink);
            if !output_failed(&r) {
                sink.flush()?;
            }
            r
        }
        _ => {
            let mut sink = TextWriter::new(w, a.tombstones_only);
            drive(a, sst, &table, &sel, &mut sink)
        }
    }
}

/// Read the selected partitions and feed them to `sink`.
pub(crate) fn drive(
    a: &DumpPlan,
    sst: &Sstable,
    t: &Table<'_>,
    sel: &Selection,
    sink: &mut dyn Sink,
) -> CmdResult<()> {
    // Pre-3.0 data decoded with a user's schema: say which columns' types
    // did not fit (their values are printed as hex).
    if sst.features().legacy_cells && sst.table_schema().is_some() && !a.keys_only {
        let mut check = TypeCheck::new(sink);
        let r = drive_all(a, sst, t, sel, &mut check);
        if let Some(w) = type_warning(&sstable_label(sst), &check.failed) {
            eprintln!("{w}");
        }
        return r;
    }
    drive_all(a, sst, t, sel, sink)
}

/// [`drive`] without the type check.
fn drive_all(
    a: &DumpPlan,
    sst: &Sstable,
    t: &Table<'_>,
    sel: &Selection,
    sink: &mut dyn Sink,
) -> CmdResult<()> {
    if a.reverse && !a.keys_only {
        // Each partition in reverse clustering order, through the index.
        return super::read::dump_reversed(a, sst, t, sel, sink);
    }
    let mut reader = ScanReader::new(sst, t.header)?;
    let mut emitted: u64 = 0;
    let limit = a.limit;
    if limit == 0 {
        return Ok(());
    }
    // BIG: Filter/Summary/Index.db; BTI: Filter/Partitions/Rows.db.
    let positions = select::lookup_positions(sst, t, sel)?;
    if let Some(positions) = positions {
        // Point lookups: each key's partition, in Data.db order.
        for pos in positions {
            reader.seek_partition(pos)?;
            let found = one_partition(a, &mut reader, t, sel, sink).map_err(|s| match s {
                Stop::Err(e) => e,
                // The index points past the end of Data.db: damaged input.
                Stop::End => CmdError::from(
                    sstkit_format::Error::at(
                        sstkit_format::ErrorKind::BadValue(format!(
                            "the index lists a partition at {}, but Data.db ends before it",
                            pos.0
                        )),
                        Component::Data,
                        pos.0,
                        "partition",
                    )
                    .in_file(&sst.data_path()),
                ),
            })?;
            if found.1 {
                emitted += 1;
                if emitted >= limit {
                    break;
                }
            }
        }
        return Ok(());
    }
    // A whole scan to a file or pipe can be long: show how far it got.
    let mut bar = if Stream::Stdout.is_terminal() {
        Progress::hidden()
    } else {
        Progress::new(a.command)
    };
    // Keys asked for but not met in a whole scan are reported, as the index path does.
    let mut missing: Option<std::collections::HashSet<Vec<u8>>> =
        sel.keys.as_ref().map(|ks| ks.iter().cloned().collect());
    loop {
        bar.set(reader.position().0, reader.data_len());
        match one_partition(a, &mut reader, t, sel, sink) {
            Ok((key, written)) => {
                if let Some(m) = &mut missing {
                    m.remove(&key);
                }
                if written {
                    emitted += 1;
                    if emitted >= limit {
                        // Stopped early: the keys not yet met were not looked for.
                        missing = None;
                        break;
                    }
                }
            }
            Err(Stop::End) => break,
            Err(Stop::Err(e)) => return Err(e),
        }
    }
    if let (Some(missing), Some(keys)) = (missing, &sel.keys) {
        let label = crate::sstable_label(sst);
        // In the order asked (Data.db order), skipping keys the selection excludes.
        for key in keys
            .iter()
            .filter(|k| missing.contains(*k) && sel.wants(t, k))
        {
            crate::render::note_key_absent(
                &label,
                &select::key_text(t, key),
                sstkit_format::read::Absence::Data,
            );
        }
    }
    Ok(())
}

/// Why [`one_partition`] did not return a partition.
enum Stop {
    /// No partition left.
    End,
    /// An error.
    Err(CmdError),
}

impl From<sstkit_format::Error> for Stop {
    fn from(e: sstkit_format::Error) -> Self {
        Stop::Err(CmdError::from(e))
    }
}

impl From<io::Error> for Stop {
    fn from(e: io::Error) -> Self {
        Stop::Err(CmdError::Output(e))
    }
}

/// Read the next partition: its key, and whether it was selected and written.
fn one_partition(
    a: &DumpPlan,
    reader: &mut ScanReader<'_>,
    t: &Table<'_>,
    sel: &Selection,
    sink: &mut dyn Sink,
) -> Result<(Vec<u8>, bool), Stop> {
    let (key, deletion) = match reader.next_fragment()? {
        None => return Err(Stop::End),
        Some(Fragment::PartitionStart { key, deletion, .. }) => (key.to_vec(), deletion),
        Some(other) => {
            return Err(Stop::Err(CmdError::from(sstkit_format::Error::at(
                sstkit_format::ErrorKind::BadValue("expected a partition start".into()),
                Component::Data,
                other.position().0,
                "partition",
            ))))
        }
    };
    if !sel.wants(t, &key) {
        reader.skip_partition()?;
        return Ok((key, false));
    }
    if a.keys_only {
        reader.skip_partition()?;
        sink.key_only(t, &key)?;
        return Ok((key, true));
    }
    let mut started = false;
    let lazy = sink.takes_lazy_rows();
    let r = (|| -> Result<(), Stop> {
        loop {
            let next = if lazy {
                match reader.next_lazy()? {
                    // Clustered rows go to the sink undecoded.
                    Some(Fragment::Row(r)) => {
                        if !started {
                            sink.partition_start(t, &key, &deletion, r.position.0)?;
                            started = true;
                        }
                        sink.lazy_row(t, r).map_err(Stop::Err)?;
                        continue;
                    }
                    Some(other) => Some(other.into_decoded()?),
                    None => None,
                }
            } else {
                reader.next_fragment()?
            };
            let Some(f) = next else {
                return Err(Stop::Err(CmdError::from(sstkit_format::Error::new(
                    sstkit_format::ErrorKind::UnexpectedEof { need: 1, have: 0 },
                    "end of partition",
                ))));
            };
            let mut first_static = false;
            if !started {
                let header_end = match &f {
                    Fragment::StaticRow(r) => r.position.0 + r.size,
                    other => other.position().0,
                };
                sink.partition_start(t, &key, &deletion, header_end)?;
                started = true;
                if let Fragment::StaticRow(r) = &f {
                    sink.static_row(t, r, header_end)?;
                    first_static = true;
                }
            }
            let mut end = false;
            match &f {
                _ if first_static => {}
                Fragment::StaticRow(r) => sink.static_row(t, r, r.position.0)?,
                Fragment::Row(r) => sink.row(t, r)?,
                Fragment::Marker(m) => sink.marker(t, m)?,
                Fragment::PartitionEnd { .. } => {
                    sink.partition_end(t)?;
                    end = true;
                }
                Fragment::PartitionStart { position, .. } => {
                    return Err(Stop::Err(CmdError::from(sstkit_format::Error::at(
                        sstkit_format::ErrorKind::BadValue(
                            "partition start inside a partition".into(),
                        ),
                        Component::Data,
                        position.0,
                        "partition",
                    ))))
                }
            }
            // The next rows reuse this one's allocations.
            let spare = f.into_spare();
            reader.recycle(spare);
            if end {
                return Ok(());
            }
        }
    })();
    match r {
        Ok(()) => Ok((key, sink.last_partition_written())),
        Err(e) => {
            // Close what was opened so the output stays well-formed (not
            // after an output error: the writer may be mid-token).
            if started && !matches!(e, Stop::Err(CmdError::Output(_))) {
                let _ = sink.abort_partition(t);
            }
            Err(match e {
                Stop::Err(e) => Stop::Err(select::in_partition(t, &key, e)),
                e => e,
            })
        }
    }
}

/// sstabledump `-e` as a sink.
struct SdKeys<'w> {
    w: KeysWriter<&'w mut dyn Write>,
}

impl Sink for SdKeys<'_> {
    fn key_only(&mut self, t: &Table<'_>, key: &[u8]) -> io::Result<()> {
        self.w.key(t, key)
    }
}

/// sstabledump JSON as a sink, with the `--tombstones-only` filter.
struct SdSink<'w> {
    w: SstabledumpWriter<&'w mut dyn Write>,
    tombstones_only: bool,
    /// Partition header not yet written (tombstones-only: written lazily).
    pending: Option<(Vec<u8>, sstkit_format::deletion::DeletionTime, u64)>,
    open: bool,
    written: bool,
}

impl<'w> SdSink<'w> {
    fn new(w: SstabledumpWriter<&'w mut dyn Write>, tombstones_only: bool) -> Self {
        SdSink {
            w,
            tombstones_only,
            pending: None,
            open: false,
            written: false,
        }
    }

    fn ensure_open(&mut self, t: &Table<'_>) -> io::Result<()> {
        if let Some((k, d, p)) = self.pending.take() {
            self.w.partition_start(t, &k, &d, p)?;
            self.open = true;
        }
        Ok(())
    }
}

impl Sink for SdSink<'_> {
    fn partition_start(
        &mut self,
        t: &Table<'_>,
        key: &[u8],
        deletion: &sstkit_format::deletion::DeletionTime,
        header_end: u64,
    ) -> io::Result<()> {
        self.pending = Some((key.to_vec(), *deletion, header_end));
        if !self.tombstones_only || !deletion.is_live() {
            self.ensure_open(t)?;
        }
        Ok(())
    }

    fn static_row(
        &mut self,
        t: &Table<'_>,
        row: &sstkit_format::data::Row<'_>,
        position: u64,
    ) -> io::Result<()> {
        if self.tombstones_only {
            let Some(r) = crate::dump::tombstones_of(row) else {
                return Ok(());
            };
            self.ensure_open(t)?;
            return self.w.row(t, &r, position);
        }
        if crate::dump::row_is_empty(row) {
            return Ok(());
        }
        self.w.row(t, row, position)
    }

    fn row(&mut self, t: &Table<'_>, row: &sstkit_format::data::Row<'_>) -> io::Result<()> {
        if self.tombstones_only {
            let Some(r) = crate::dump::tombstones_of(row) else {
                return Ok(());
            };
            self.ensure_open(t)?;
            return self.w.row(t, &r, r.position.0);
        }
        self.w.row(t, row, row.position.0)
    }

    fn takes_lazy_rows(&self) -> bool {
        !self.tombstones_only
    }

    fn lazy_row(
        &mut self,
        t: &Table<'_>,
        row: sstkit_format::data::LazyRow<'_>,
    ) -> Result<(), CmdError> {
        self.w.lazy_row(t, row)
    }

    fn marker(
        &mut self,
        t: &Table<'_>,
        m: &sstkit_format::data::RangeTombstoneMarker<'_>,
    ) -> io::Result<()> {
        self.ensure_open(t)?;
        self.w.marker(t, m)
    }

    fn partition_end(&mut self, _t: &Table<'_>) -> io::Result<()> {
        self.pending = None;
        self.written = self.open;
        if self.open {
            self.open = false;
            self.w.partition_end()?;
        }
        Ok(())
    }

    fn last_partition_written(&self) -> bool {
        self.written
    }

    fn abort_partition(&mut self, t: &Table<'_>) -> io::Result<()> {
        self.partition_end(t)
    }
}
