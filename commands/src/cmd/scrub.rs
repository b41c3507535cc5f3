//! `sstkit scrub SSTABLE --mode validate|abort|skip|segregate`: the
//! index-less scan of Data.db.
//!
//! ```text
//! sstkit scrub nb-1-big-Data.db                          # = --mode validate: report, write nothing
//! sstkit scrub --mode abort nb-1-big-Data.db             # stop at the first problem
//! sstkit scrub --mode skip --output-dir /tmp/salvage nb-1-big-Data.db
//! sstkit scrub --mode segregate --output-dir /tmp/salvage -o text /data/ks/t-1234/
//! ```
//!
//! Data.db is read from its first byte; Index.db (or Partitions.db) and
//! Summary.db may be missing or corrupt. When the partition index is intact,
//! scrub resynchronises at the next indexed partition after damage; without
//! it, it scans for a partition start and checks every candidate. Partitions
//! over a chunk whose checksum failed are never salvaged. Every decoded
//! partition gets the checks of `validate` that need no index (see
//! [`sstkit_format::scrub`] for the resynchronisation and its bounds).
//!
//! With `--output-dir DIR` (modes skip and segregate) the salvaged
//! partitions are written to `DIR/<sstable>-salvaged.ndjson` and the
//! out-of-order ones (segregate) to `DIR/<sstable>-segregated.ndjson` and
//! those over a chunk whose checksum failed (segregate) to
//! `DIR/<sstable>-damaged.ndjson`, one
//! partition per line in the `dump-data --output ndjson` schema (see
//! [`crate::sink`]), plus `DIR/<sstable>-lost.ndjson` listing the lost byte
//! ranges and keys. `<sstable>` is the Data.db file name without `-Data.db`.
//! DIR must not be the sstable's directory: the input is never written to.
//!
//! The report (stdout) has the `validate` shape (see
//! [`crate::cmd::validate`]; findings in the shared finding shape, without
//! `checks`, `skipped` and `checksum_chunks`) with `mode`, `salvaged`, `segregated`,
//! `dropped`, `withdrawn`, `damaged`, `lost_bytes`, `lost_ranges`, `index_resync`,
//! `resyncs`, `attempts`, `probe_bytes`, `data_len` (uncompressed),
//! `index_partitions`, `lost_partitions`, `lost_keys`, `rows_decoded` and
//! `outputs` added; `rows` counts the rows of the salvaged partitions (what
//! the output holds); lost data is reported as `data_lost` findings with
//! `offset`, `end` and the keys known to be lost. With an index and no
//! out-of-order partition, `salvaged + segregated + lost_partitions` is
//! `index_partitions`. `withdrawn` counts partitions written, then taken
//! back when Statistics.db proved at the end of the scan not to describe
//! Data.db (its timestamp range does not fit): the outputs are emptied and
//! they count as lost. `-o text` (the default at a terminal) ends with
//! where the salvaged partitions went, the lost keys (the first ten) and
//! what to do next.
//!
//! `--threads N` (`-j`, default one per core) reads `--mode validate` on N
//! threads: Data.db is cut at the partition index's positions into units
//! walked on threads of their own and joined in order
//! ([`sstkit_format::scrub::Options::threads`]); the report, stderr and
//! exit code are those of `-j 1`. The modes that write read on one thread
//! whatever `--threads` says (accepted, so scripts can pass it always).
//!
//! A progress bar (uncompressed bytes of Data.db) is drawn on stderr when
//! stderr is a terminal ([`crate::progress`]). Exit status 1 when anything
//! was found (including a Data.db that ends before the last partition its
//! index lists, or is empty while Statistics.db counts partitions: a
//! `data_lost` finding), 3 when Data.db cannot be opened (missing, pre-3.0
//! format without `--schema`, a compressed Data.db whose CompressionInfo.db
//! is lost and whose first chunk cannot be found).
//!
//! A lost CompressionInfo.db (missing, or not decoding) is rebuilt by
//! walking Data.db ([`sstkit_format::chunk_walk::rebuild`]; `--chunk-length`
//! when the operator knows it) before anything reads Data.db, with a
//! finding; the salvaged sstable gets its own CompressionInfo.db.
//!
//! Exit status: 0 nothing found; 1 findings; 2 usage; 3 an sstable that cannot
//! be opened at all.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};
use sstkit_format::data::Fragment;
use sstkit_format::scrub::{self, FragmentSource, Mode, SalvageSink, ScrubInfo, Target};
use sstkit_format::validate::{Problem, ProblemClass};
use sstkit_format::write::pending;
use sstkit_format::Component;

use crate::cli::{OutputFormat, SalvageFormat, ScrubArgs, ScrubMode};
use crate::output::JsonOut;
use crate::plan::SstPlan;
use crate::progress::Progress;
use crate::render::KeyCtx;
use crate::sink::scylla::ScyllaWriter;
use crate::sink::{Sink, Table};
use crate::{for_each_sstable, CmdError, CmdResult, Outcome};

fn mode_of(m: ScrubMode) -> Mode {
    match m {
        ScrubMode::Validate => Mode::Validate,
        ScrubMode::Abort => Mode::Abort,
        ScrubMode::Skip => Mode::Skip,
        ScrubMode::Segregate => Mode::Segregate,
    }
}

fn mode_name(m: ScrubMode) -> &'static str {
    match m {
        ScrubMode::Validate => "validate",
        ScrubMode::Abort => "abort",
        ScrubMode::Skip => "skip",
        ScrubMode::Segregate => "segregate",
    }
}

/// The sstable writer scrub salvages into: the source's version when sstkit
/// writes it (else `oa`), its compression, Cassandra's default index block.
fn salvage_writer(
    sst: &sstkit_format::Sstable,
    dir: &Path,
    mode: ScrubMode,
) -> CmdResult<sstkit_format::write::salvage::SalvageWriter> {
    use sstkit_format::write::copy::{kept_metadata, source_compression};
    use sstkit_format::write::{salvage::SalvageWriter, Compression, WriterOptions};
    // With --schema, scrub may decode with other types than Statistics.db's.
    let st = scrub::statistics(sst)?;
    let header = scrub::header(sst, &st)?;
    let partitioner = sst.partitioner(&st)?;
    let f = sst.features();
    let version = if f.legacy_cells || sst.version().is_scylla_only() {
        sstkit_format::Version::parse("oa")?
    } else {
        sst.version()
    };
    let mut opts = WriterOptions::new(version);
    if let Ok(Some((c, chunk))) = source_compression(sst) {
        opts.compression = c;
        opts.chunk_length = chunk;
    } else {
        opts.compression = Compression::Lz4;
    }
    if let Some(v) = &st.validation {
        opts.bloom_filter_fp_chance = v.bloom_filter_fp_chance;
    }
    Ok(SalvageWriter::new(
        dir,
        &header,
        kept_metadata(&st),
        opts,
        partitioner,
        mode == ScrubMode::Segregate,
        sstkit_format::write::bloom::expected_keys(sst, &st),
    )?)
}

/// Run the command.
pub fn run(a: &ScrubArgs, out: &mut dyn Write) -> CmdResult<Outcome> {
    if a.output_dir.is_some() && !matches!(a.mode, ScrubMode::Skip | ScrubMode::Segregate) {
        return Err(CmdError::Usage(
            "--output-dir needs --mode skip or --mode segregate".into(),
        ));
    }
    let plan = SstPlan::text_at_terminal(&a.sst)?;
    if let Some(dir) = &a.output_dir {
        crate::prepare_output_dir(dir, &plan.inputs.sstables)?;
    }
    let now_secs = crate::clock_secs();
    let mut tally = crate::findings::Tally::default();
    let outcome = for_each_sstable(&plan, false, out, |sst, emit| {
        // A header that does not decode does not stop scrub when --schema stands in for it.
        let ctx = KeyCtx::of(sst, &scrub::statistics(sst)?);
        // Before the salvage writer takes the source's compression: a lost
        // CompressionInfo.db is rebuilt from Data.db first.
        sst.rebuild_compression_info(a.chunk_length)?;
        let as_sstables = a.salvage_format == SalvageFormat::Sstable;
        let opts = scrub::Options {
            mode: mode_of(a.mode),
            keep_out_of_order: as_sstables && a.output_dir.is_some(),
            chunk_length: a.chunk_length,
            threads: crate::plan::threads(a.threads),
            unit_bytes: crate::sink::pieces::unit_bytes(),
            ..scrub::Options::default()
        };
        let label = crate::sstable_label(sst);
        let mut sink = match &a.output_dir {
            Some(dir) if !as_sstables => {
                Some(NdjsonSink::create(dir, &sst.data_path(), &label, now_secs)?)
            }
            _ => None,
        };
        let mut writer = match &a.output_dir {
            Some(dir) if as_sstables => Some(salvage_writer(sst, dir, a.mode)?),
            _ => None,
        };
        let target: Option<&mut dyn SalvageSink> = match (sink.as_mut(), writer.as_mut()) {
            (Some(s), _) => Some(s),
            (None, Some(w)) => Some(w),
            _ => None,
        };
        let mut bar = Progress::new("scrub");
        let r = scrub::scrub(sst, &opts, target, &mut |p, len| bar.set(p, len));
        bar.finish();
        if let Some(e) = writer.as_mut().and_then(|w| w.error.take()) {
            return Err(e.into());
        }
        let mut report = r?;
        // Data.db read alone cannot tell a file cut at a partition
        // boundary (or to nothing) from a whole one; the index can.
        let cut = crate::render::read_statistics(sst)
            .ok()
            .and_then(|st| crate::truncation::data_shorter_than_index(sst, &st));
        if let Some(e) = cut {
            report.problems.push(Problem::new(
                ProblemClass::DataLost,
                Component::Data,
                e.offset.unwrap_or(0),
                e.kind.to_string(),
            ));
        }
        let mut summary = Map::new();
        summary.insert("valid".into(), json!(report.valid()));
        summary.insert("errors".into(), json!(report.problems.total()));
        summary.insert("mode".into(), json!(mode_name(a.mode)));
        summary.insert("partitions".into(), json!(report.partitions));
        summary.insert("rows".into(), json!(report.salvaged_rows));
        summary.insert("rows_decoded".into(), json!(report.rows));
        summary.insert("static_rows".into(), json!(report.static_rows));
        summary.insert("range_tombstone_markers".into(), json!(report.markers));
        summary.insert("data_bytes".into(), json!(report.data_len));
        summary.insert("salvaged".into(), json!(report.salvaged));
        summary.insert("segregated".into(), json!(report.segregated));
        summary.insert("dropped".into(), json!(report.dropped));
        summary.insert("withdrawn".into(), json!(report.withdrawn));
        summary.insert("damaged".into(), json!(report.damaged));
        summary.insert("index_partitions".into(), json!(report.index_partitions));
        summary.insert("lost_partitions".into(), json!(report.lost_partitions));
        summary.insert(
            "lost_keys".into(),
            Value::Array(report.lost_keys.iter().map(|k| ctx.key_json(k)).collect()),
        );
        summary.insert("index_resync".into(), json!(report.index_resync));
        summary.insert("lost_bytes".into(), json!(report.lost_bytes));
        summary.insert(
            "lost_ranges".into(),
            Value::Array(
                report
                    .lost_ranges
                    .iter()
                    .map(|r| json!([r.start, r.end]))
                    .collect(),
            ),
        );
        summary.insert("aborted".into(), json!(report.aborted));
        summary.insert("resyncs".into(), json!(report.resyncs));
        summary.insert("attempts".into(), json!(report.attempts));
        summary.insert("probe_bytes".into(), json!(report.probe_bytes));
        summary.insert("data_len".into(), json!(report.data_len));
        if let Some(w) = &writer {
            let path = |o: &Option<sstkit_format::write::Written>| {
                o.as_ref().map(|w| w.data_path.display().to_string())
            };
            summary.insert(
                "outputs".into(),
                json!({
                    "salvaged": path(&w.outputs.main),
                    "segregated": path(&w.outputs.segregated),
                    "damaged": path(&w.outputs.damaged),
                    "duplicates": w.outputs.duplicates,
                }),
            );
        }
        if let Some(s) = &sink {
            summary.insert(
                "outputs".into(),
                json!({
                    "salvaged": s.main_path.display().to_string(),
                    "segregated": s.seg_path.display().to_string(),
                    "damaged": s.damaged_path.display().to_string(),
                    "lost": s.lost_path.display().to_string(),
                }),
            );
        }
        let tail = if emit.fmt == OutputFormat::Text {
            let outputs = Outputs {
                salvaged: writer
                    .as_ref()
                    .and_then(|w| w.outputs.main.as_ref().map(|o| o.data_path.clone()))
                    .or_else(|| sink.as_ref().map(|s| s.main_path.clone())),
                segregated: writer
                    .as_ref()
                    .and_then(|w| w.outputs.segregated.as_ref().map(|o| o.data_path.clone())),
                writing: a.output_dir.is_some(),
            };
            text_tail(&report, &ctx, &outputs, &sst.data_path(), a.mode)
        } else {
            String::new()
        };
        crate::findings::emit_report_with(sst, emit, &ctx, summary, &report.problems, &tail)?;
        tally.record(&report.problems);
        Ok(())
    })?;
    if plan.fmt == OutputFormat::Text && plan.inputs.sstables.len() > 1 {
        write!(out, "\n{}", tally.line(plan.inputs.sstables.len()))?;
    }
    Ok(outcome)
}

/// Lost keys named in the text report at most.
const TEXT_LOST_KEYS: usize = 10;

/// Where scrub wrote, for the text report.
struct Outputs {
    salvaged: Option<PathBuf>,
    segregated: Option<PathBuf>,
    writing: bool,
}

/// The text report's last lines: what was salvaged and where, the lost
/// keys, and what to do next.
fn text_tail(
    r: &scrub::Report,
    ctx: &KeyCtx,
    out: &Outputs,
    input: &Path,
    mode: ScrubMode,
) -> String {
    let width = crate::term::width(crate::term::Stream::Stdout);
    let wrap = |t: &str| crate::term::wrap(t, "", "  ", width) + "\n";
    let plural = |n: u64, one: &str| format!("{n} {one}{}", if n == 1 { "" } else { "s" });
    let mut s = String::new();
    let of = r
        .index_partitions
        .map(|n| format!(" of {n} the index lists"))
        .unwrap_or_default();
    let rows = plural(r.salvaged_rows, "row");
    match (&out.salvaged, out.writing) {
        (Some(p), _) => s.push_str(&wrap(&format!(
            "salvaged {}{of} ({rows}) into {}",
            plural(r.salvaged, "partition"),
            p.display()
        ))),
        (None, true) => s.push_str(&wrap(&format!(
            "salvaged {}{of}: no output written",
            plural(r.salvaged, "partition")
        ))),
        (None, false) => s.push_str(&wrap(&format!(
            "salvageable: {}{of} ({rows}); nothing written without --output-dir",
            plural(r.salvaged, "partition")
        ))),
    }
    if let Some(p) = &out.segregated {
        s.push_str(&wrap(&format!(
            "segregated {} (out of order) into {}",
            plural(r.segregated, "partition"),
            p.display()
        )));
    }
    if r.lost_partitions > 0 {
        let mut keys: Vec<String> = r
            .lost_keys
            .iter()
            .take(TEXT_LOST_KEYS)
            .map(|k| ctx.key_text(k))
            .collect();
        let more = r.lost_partitions.saturating_sub(keys.len() as u64);
        if more > 0 {
            keys.push(format!("+{more} more (all in -o json)"));
        }
        s.push_str(&wrap(&format!(
            "lost {}: {}",
            plural(r.lost_partitions, "partition"),
            if keys.is_empty() {
                "keys unknown (no readable index)".to_string()
            } else {
                keys.join(", ")
            }
        )));
    }
    if r.valid() {
        return s;
    }
    let next = match &out.salvaged {
        Some(p) => format!(
            "next: check the output (sstkit validate {}); with the node stopped, replace \
             the damaged sstable with it; then repair the table so the replicas restore \
             the lost partitions",
            p.display()
        ),
        None => format!(
            "next: sstkit scrub --mode {} --output-dir DIR {} writes what can be salvaged \
             to a new sstable in DIR",
            if mode == ScrubMode::Segregate {
                "segregate"
            } else {
                "skip"
            },
            input.display()
        ),
    };
    s.push_str(&wrap(&next));
    s
}

/// The NDJSON salvage sink: dump-data NDJSON lines (through the dump-data
/// renderer, [`ScyllaWriter`]) per target file, and a `-lost.ndjson` file.
struct NdjsonSink {
    label: String,
    now_secs: i64,
    main: BufWriter<File>,
    seg: Option<BufWriter<File>>,
    /// Partitions over a chunk that failed its checksum (segregate mode).
    damaged: Option<BufWriter<File>>,
    lost: BufWriter<File>,
    main_path: PathBuf,
    seg_path: PathBuf,
    damaged_path: PathBuf,
    lost_path: PathBuf,
    partitioner_key: Option<sstkit_format::types::CqlType>,
    buf: Vec<u8>,
}

impl NdjsonSink {
    fn create(dir: &Path, data_path: &Path, label: &str, now_secs: i64) -> CmdResult<NdjsonSink> {
        let name = data_path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "sstable".into());
        let stem = name.strip_suffix("-Data.db").unwrap_or(&name).to_string();
        let main_path = dir.join(format!("{stem}-salvaged.ndjson"));
        let seg_path = dir.join(format!("{stem}-segregated.ndjson"));
        let damaged_path = dir.join(format!("{stem}-damaged.ndjson"));
        let lost_path = dir.join(format!("{stem}-lost.ndjson"));
        let open = |p: &Path| -> CmdResult<BufWriter<File>> {
            pending::create(p)
                .map(BufWriter::new)
                .map_err(|e| CmdError::Usage(format!("cannot create {}: {e}", p.display())))
        };
        Ok(NdjsonSink {
            label: label.to_string(),
            now_secs,
            main: open(&main_path)?,
            seg: None,
            damaged: None,
            lost: open(&lost_path)?,
            main_path,
            seg_path,
            damaged_path,
            lost_path,
            partitioner_key: None,
            buf: Vec::new(),
        })
    }
}

/// Feed one partition's fragments to a dump-data sink.
fn render_partition(
    t: &Table<'_>,
    src: &mut dyn FragmentSource,
    sink: &mut dyn Sink,
) -> io::Result<()> {
    let to_io = |e: sstkit_format::Error| io::Error::other(e.to_string());
    let mut started = false;
    while let Some(f) = src.next_fragment().map_err(to_io)? {
        match &f {
            Fragment::PartitionStart { key, deletion, .. } => {
                // The header end is only used by sstabledump; 0 here.
                sink.partition_start(t, key, deletion, 0)?;
                started = true;
            }
            Fragment::StaticRow(r) => sink.static_row(t, r, r.position.0)?,
            Fragment::Row(r) => sink.row(t, r)?,
            Fragment::Marker(m) => sink.marker(t, m)?,
            Fragment::PartitionEnd { .. } => {
                sink.partition_end(t)?;
                started = false;
            }
        }
    }
    if started {
        sink.abort_partition(t)?;
    }
    Ok(())
}

impl SalvageSink for NdjsonSink {
    fn begin(&mut self, info: &ScrubInfo<'_>) -> io::Result<()> {
        self.partitioner_key = Some(info.header.partition_key_type.clone());
        Ok(())
    }

    fn partition(
        &mut self,
        info: &ScrubInfo<'_>,
        target: Target,
        src: &mut dyn FragmentSource,
    ) -> io::Result<()> {
        let t = Table::new(info.header, info.partitioner.clone(), self.now_secs);
        self.buf.clear();
        {
            let mut w: &mut Vec<u8> = &mut self.buf;
            let mut json = JsonOut::new(&mut w, OutputFormat::Ndjson);
            json.begin_sstable(&self.label)?;
            let mut sw = ScyllaWriter::new(&mut json, true, false);
            render_partition(&t, src, &mut sw)?;
        }
        let out = match target {
            Target::Main => &mut self.main,
            Target::Segregated => {
                if self.seg.is_none() {
                    self.seg = Some(BufWriter::new(pending::create(&self.seg_path)?));
                }
                match self.seg.as_mut() {
                    Some(s) => s,
                    None => return Ok(()),
                }
            }
            Target::Damaged => {
                if self.damaged.is_none() {
                    self.damaged = Some(BufWriter::new(pending::create(&self.damaged_path)?));
                }
                match self.damaged.as_mut() {
                    Some(s) => s,
                    None => return Ok(()),
                }
            }
        };
        out.write_all(&self.buf)
    }

    fn lost(&mut self, range: Range<u64>, keys: &[Vec<u8>]) -> io::Result<()> {
        let keys: Vec<String> = keys.iter().map(|k| crate::output::hex(k)).collect();
        let v = json!({
            "sstable": self.label,
            "lost": {"start": range.start, "end": range.end},
            "keys": keys,
        });
        serde_json::to_writer(&mut self.lost, &v)?;
        self.lost.write_all(b"\n")
    }

    fn end(&mut self, report: &scrub::Report) -> io::Result<()> {
        for s in [
            Some(&mut self.main),
            self.seg.as_mut(),
            self.damaged.as_mut(),
        ]
        .into_iter()
        .flatten()
        {
            s.flush()?;
            // Withdrawn: decoded with a Statistics.db of another sstable.
            if report.withdrawn > 0 {
                s.get_mut().set_len(0)?;
            }
        }
        if report.withdrawn > 0 {
            self.lost(0..report.data_len, &[])?;
        }
        self.lost.flush()?;
        // Complete: no longer removed if a signal comes now.
        for p in [
            &self.main_path,
            &self.seg_path,
            &self.damaged_path,
            &self.lost_path,
        ] {
            pending::keep(p);
        }
        Ok(())
    }
}
