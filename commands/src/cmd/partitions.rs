//! `sstkit partitions SSTABLE...`: the `sstablepartitions` of sstkit.
//!
//! ```text
//! sstkit partitions /var/lib/cassandra/data/ks/t-1234/          # every partition, summaries
//! sstkit partitions --min-size 20MiB --min-tombstones 1000 -r /var/lib/cassandra/data
//! sstkit partitions --top 10 --by tombstones -o text nb-1-big-Data.db
//! sstkit partitions -o csv --min-size 0 nb-1-big-Data.db    # = sstablepartitions --csv -t 0
//! sstkit partitions --partitions-only --io-stats nb-1-big-Data.db   # sizes from the index
//! ```
//!
//! Per partition: key (typed and hex), live (no partition deletion), Data.db
//! offset, size uncompressed and on disk, rows, cells, tombstones by kind,
//! TTL'd and expired rows and cells, min/max timestamp; the counting rules
//! are [`sstkit_format::analytics`]'s (those of `sstablepartitions`). Size on
//! disk of a compressed sstable is the partition's share of the compressed
//! chunks it spans (each chunk's stored length pro-rated by the bytes of it
//! the partition covers).
//!
//! Reads: Statistics.db, then Data.db sequentially (decoded); with
//! `--partitions-only`, Index.db (BIG) or Partitions.db and Rows.db (BTI)
//! instead, and of Data.db only the headers (key, partition deletion) of the
//! partitions the index does not describe: a BIG partition without a
//! promoted index, a BTI partition without a Rows.db entry.
//!
//! Memory is bounded: partitions stream to the output; `--top N` (and the
//! text view, [`TEXT_TOP`] unless told) keeps N of them in a heap; the
//! summaries are fixed-size histograms for the estimates and
//! [`sstkit_format::analytics::Quantiles`] for the exact percentiles (a count
//! per distinct value, up to a limit past which they are kept to 0.1%).
//!
//! Output: json `{"partitions": [...], "sstables": [...], "tables": [...]}`;
//! ndjson the same records one per line with `"type"`: `partition`,
//! `sstable`, `table` (with `--top`, the sstables after the partitions, as
//! their `listed` counts the partitions in the list); csv the columns of
//! `sstablepartitions --csv` (no summaries, as there); text a summary table
//! per sstable and table, then the largest partitions by `--by`, one line
//! each, fitted to the terminal. Schema: `docs/schemas/partitions.schema.json`.
//!
//! Exit status: 0 ok; 2 usage (a `--key` that does not parse); 3 an sstable
//! could not be read (the others still are).

use std::collections::BinaryHeap;
use std::io::Write;
use std::rc::Rc;

use serde_json::{json, Map, Value};
use sstkit_format::analytics::{PartitionStats, Summary, PERCENTILES};
use sstkit_format::descriptor::Location;
use sstkit_format::Sstable;

use crate::cli::{PartitionMetric, PartitionsArgs, PartitionsOutput};
use crate::output::hex_into;
use crate::plan::inputs::Inputs;
use crate::render::KeyCtx;
use crate::term::{self, Stream};
use crate::units::pretty_bytes;
use crate::{sstable_label, CmdError, CmdResult, Outcome};

mod read;

use read::{from_data, from_index, Emit, EmitFn, Keys, RenderFn, Sizes};

/// The header of `sstablepartitions --csv`.
pub const CSV_HEADER: &str = "key,keyBinary,live,offset,size,rowCount,cellCount,tombstoneCount,\
rowTombstoneCount,rangeTombstoneCount,complexTombstoneCount,cellTombstoneCount,rowTtlExpired,\
cellTtlExpired,directory,keyspace,table,index,snapshot,backup,generation,format,version";

/// What every partition record of one sstable shares.
struct SstInfo {
    label: String,
    /// The folders, as `sstablepartitions --csv` names them.
    loc: Location,
    /// The record's identity fields ([`crate::output::sstable_ref`]).
    sref: serde_json::Map<String, Value>,
    /// `keyspace.table`, or the sstable's folder when the layout names no table.
    table: String,
    generation: String,
    format: &'static str,
    version: String,
    keys: KeyCtx,
    /// Its place among the sstables read.
    seq: usize,
    /// The end of its CSV lines, from the label on (the same on every line).
    csv_tail: String,
}

/// One partition, ready to print.
struct Record {
    stats: PartitionStats,
    key: Vec<u8>,
    disk_size: u64,
    sst: Rc<SstInfo>,
}

impl Record {
    fn fields(&self) -> Fields<'_> {
        Fields {
            stats: &self.stats,
            key: &self.key,
            disk_size: self.disk_size,
            sst: &self.sst,
        }
    }
}

/// A partition's fields as its record prints them, borrowed: what a
/// reading thread renders without building a [`Record`].
struct Fields<'a> {
    stats: &'a PartitionStats,
    key: &'a [u8],
    disk_size: u64,
    sst: &'a SstInfo,
}

/// Which partitions are listed.
struct Filter {
    min: [Option<u64>; 4],
    any: bool,
}

impl Filter {
    fn new(a: &PartitionsArgs) -> Filter {
        let min = [a.min_size, a.min_rows, a.min_cells, a.min_tombstones];
        Filter {
            min,
            any: min.iter().any(Option::is_some),
        }
    }

    /// Any one threshold reached lists the partition (sstablepartitions' rule).
    fn lists(&self, p: &PartitionStats) -> bool {
        if !self.any {
            return true;
        }
        metrics(p)
            .iter()
            .zip(self.min)
            .any(|(v, m)| m.is_some_and(|m| *v >= m))
    }
}

fn metrics(p: &PartitionStats) -> [u64; 4] {
    [p.size, p.rows, p.cells, p.tombstone_count()]
}

fn metric(p: &PartitionStats, by: PartitionMetric) -> u64 {
    match by {
        PartitionMetric::Size => p.size,
        PartitionMetric::Rows => p.rows,
        PartitionMetric::Cells => p.cells,
        PartitionMetric::Tombstones => p.tombstone_count(),
    }
}

/// An entry of the `--top` heap: the smallest on top, ties broken by input
/// order (an earlier partition wins).
struct Ranked {
    value: u64,
    seq: u64,
    rec: Record,
}

impl PartialEq for Ranked {
    fn eq(&self, o: &Self) -> bool {
        (self.value, self.seq) == (o.value, o.seq)
    }
}
impl Eq for Ranked {}
impl PartialOrd for Ranked {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Ranked {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        // Reversed: BinaryHeap is a max-heap and the weakest must be on top.
        o.value.cmp(&self.value).then(self.seq.cmp(&o.seq))
    }
}

/// Partitions the text view lists when `--top` is not given: it is sorted,
/// and sorting every partition of a table would hold them all in memory.
pub const TEXT_TOP: usize = 20;

/// An sstable's summary, waiting for the `--top` list to say how many of
/// its partitions are listed.
struct Held {
    info: Rc<SstInfo>,
    view: View,
    sizes: Sizes,
}

/// Run the command.
pub fn run(a: &PartitionsArgs, out: &mut dyn Write) -> CmdResult<Outcome> {
    if a.top == Some(0) {
        return Err(CmdError::Usage("--top needs at least 1".into()));
    }
    let inputs = Inputs::resolve(&a.input)?;
    let now = a.now.unwrap_or_else(crate::clock_secs);
    let fmt = a.format();
    let top_n = a
        .top
        .or((fmt == PartitionsOutput::Text).then_some(TEXT_TOP));
    // Partitions streamed to a terminal would be written under the bar.
    let bar = top_n.is_some() || !Stream::Stdout.is_terminal();
    let filter = Filter::new(a);
    let mut w = Writer::new(out, fmt, a.partitions_only);
    let mut tables: Vec<(String, Summary, u64)> = Vec::new();
    let mut held: Vec<Held> = Vec::new();
    let mut top: BinaryHeap<Ranked> = BinaryHeap::new();
    let mut seq = 0u64;
    let mut candidates = 0u64;
    w.begin()?;
    let outcome = inputs.each(|_, sst, _| {
        let info = Rc::new(sst_info(sst, held.len())?);
        let wanted = Keys::resolve(a, &info.keys).map_err(|e| e.in_sstable(&info.label))?;
        let mut summary = Summary::default();
        let mut listed = 0u64;
        // Streamed records are rendered by the threads that read them.
        let (sst_info, filter, po) = (&*info, &filter, a.partitions_only);
        let render =
            move |stats: &PartitionStats, key: &[u8], disk_size: u64, out: &mut Vec<u8>| {
                if !filter.lists(stats) {
                    return Ok(false);
                }
                if !out.is_empty() {
                    out.extend_from_slice(fmt.separator());
                }
                let r = Fields {
                    stats,
                    key,
                    disk_size,
                    sst: sst_info,
                };
                render_record(fmt, po, &r, out).map(|_| true)
            };
        let render = top_n.is_none().then_some(&render as &RenderFn<'_>);
        let mut emit = |e: Emit<'_>| -> CmdResult<()> {
            let (stats, key, disk_size) = match e {
                Emit::Partition(stats, key, disk_size) => (stats, key, disk_size),
                Emit::Rendered(records, n) => {
                    listed += n;
                    return w.rendered(records, n).map_err(CmdError::Output);
                }
            };
            if !filter.lists(&stats) {
                return Ok(());
            }
            listed += 1;
            let rec = Record {
                stats,
                key: key.to_vec(),
                disk_size,
                sst: info.clone(),
            };
            match top_n {
                Some(n) => {
                    seq += 1;
                    let value = metric(&rec.stats, a.by);
                    if top.len() < n {
                        top.push(Ranked { value, seq, rec });
                    } else if top.peek().is_some_and(|m| value > m.value) {
                        top.pop();
                        top.push(Ranked { value, seq, rec });
                    }
                    Ok(())
                }
                None => w.partition(&rec).map_err(CmdError::Output),
            }
        };
        // Every partition read is counted in the summary, listed or not.
        let counted = (&mut summary, &mut emit as &mut EmitFn<'_>);
        let r = if a.partitions_only {
            from_index(sst, &wanted, bar, counted)
        } else {
            let threads = crate::plan::threads(a.threads);
            from_data(sst, (&wanted, render), now, bar, threads, counted)
        };
        let sizes = match r {
            Ok(s) => s,
            Err(CmdError::Format(e)) => {
                w.error(&info.label, &e.to_string())?;
                return Err(CmdError::Format(e));
            }
            Err(e) => return Err(e),
        };
        candidates += listed;
        let view = View::of(&summary, a.partitions_only);
        match top_n {
            Some(_) => held.push(Held {
                info: info.clone(),
                view,
                sizes,
            }),
            None => w.sstable(&info, &view, listed, sizes)?,
        }
        match tables.iter_mut().find(|t| t.0 == info.table) {
            Some(t) => {
                t.1.merge(&summary);
                t.2 += 1;
            }
            None => tables.push((info.table.clone(), summary, 1)),
        }
        Ok(())
    })?;
    let mut best = top.into_vec();
    best.sort();
    // Each sstable's (and table's) partitions in the list.
    let mut listed = vec![0u64; held.len()];
    for r in &best {
        if let Some(n) = listed.get_mut(r.rec.sst.seq) {
            *n += 1;
        }
    }
    let table_listed = |name: &str| -> u64 {
        held.iter()
            .filter(|h| h.info.table == name)
            .map(|h| listed.get(h.info.seq).copied().unwrap_or(0))
            .sum()
    };
    if fmt != PartitionsOutput::Text {
        for r in &best {
            w.partition(&r.rec)?;
        }
    }
    for h in &held {
        let n = listed.get(h.info.seq).copied().unwrap_or(0);
        w.sstable(&h.info, &h.view, n, h.sizes)?;
    }
    for (name, s, n) in &tables {
        let view = View::of(s, a.partitions_only);
        let shown = if top_n.is_some() {
            table_listed(name)
        } else {
            0
        };
        w.table(name, &view, *n, top_n.map(|_| shown))?;
    }
    if fmt == PartitionsOutput::Text {
        w.list_header(best.len() as u64, candidates, filter.any, a.by)?;
        for r in &best {
            w.partition(&r.rec)?;
        }
    }
    w.finish()?;
    Ok(outcome)
}

/// The sstable's place, naming and key type.
fn sst_info(sst: &Sstable, seq: usize) -> CmdResult<SstInfo> {
    let loc = Location::of_dir(&sst.desc.dir);
    let table = crate::table_key(&sst.desc);
    let keys = KeyCtx::read(sst)?;
    let mut info = SstInfo {
        label: sstable_label(sst),
        loc,
        sref: crate::output::sstable_ref(&sst.desc),
        table,
        generation: sst.desc.generation.to_string(),
        format: match sst.desc.format {
            sstkit_format::version::FormatKind::Big => "big",
            sstkit_format::version::FormatKind::Bti => "bti",
        },
        version: sst.version().to_string(),
        keys,
        seq,
        csv_tail: String::new(),
    };
    let s = |o: &Option<String>| o.clone().unwrap_or_default();
    let l = &info.loc;
    info.csv_tail = format!(
        ",{},{},{},{},{},{},{},{},{}\n",
        info.label,
        s(&l.keyspace),
        s(&l.table),
        s(&l.index),
        s(&l.snapshot),
        s(&l.backup),
        info.generation,
        info.format,
        info.version
    );
    Ok(info)
}

/// The key as `sstablepartitions --csv` quotes it, onto `out`.
fn csv_key(text: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    if text.contains(' ') {
        out.push(b'"');
        for b in text.bytes() {
            if b == b'"' {
                out.push(b'"');
            }
            out.push(b);
        }
        out.push(b'"');
    } else {
        out.extend_from_slice(text.as_bytes());
    }
    out.push(b'"');
}

/// A partition record as JSON.
fn record_json(r: &Fields<'_>, partitions_only: bool) -> Value {
    let p = r.stats;
    let i = r.sst;
    let mut m = Map::new();
    m.insert("type".into(), json!("partition"));
    m.insert("sstable".into(), json!(i.label));
    m.insert("key".into(), i.keys.key_json(r.key));
    m.insert("live".into(), json!(p.live));
    m.insert("offset".into(), json!(p.offset));
    m.insert("size".into(), json!(p.size));
    m.insert("size_on_disk".into(), json!(r.disk_size));
    if !partitions_only {
        let t = &p.tombstones;
        m.insert("rows".into(), json!(p.rows));
        m.insert("cells".into(), json!(p.cells));
        m.insert(
            "tombstones".into(),
            json!({
                "total": p.tombstone_count(),
                "partition": t.partition,
                "row": t.row,
                "range": t.range,
                "complex": t.complex,
                "cell": t.cell,
            }),
        );
        m.insert(
            "ttl".into(),
            json!({
                "rows": p.ttl_rows,
                "cells": p.ttl_cells,
                "expired_rows": p.expired_rows,
                "expired_cells": p.expired_cells,
            }),
        );
        m.insert("min_timestamp".into(), json!(p.min_timestamp));
        m.insert("max_timestamp".into(), json!(p.max_timestamp));
    }
    Value::Object(m)
}

impl PartitionsOutput {
    /// What goes between two records [`render_record`] renders.
    fn separator(self) -> &'static [u8] {
        match self {
            PartitionsOutput::Json => b",",
            _ => b"",
        }
    }
}

/// A partition's record in a streamed format (json without the comma
/// between records, ndjson and csv with their line end); the text view
/// lays its lines out itself.
fn render_record(
    fmt: PartitionsOutput,
    partitions_only: bool,
    r: &Fields<'_>,
    out: &mut Vec<u8>,
) -> std::io::Result<()> {
    match fmt {
        PartitionsOutput::Json => Ok(serde_json::to_writer(
            out,
            &record_json(r, partitions_only),
        )?),
        PartitionsOutput::Ndjson => {
            serde_json::to_writer(&mut *out, &record_json(r, partitions_only))?;
            out.push(b'\n');
            Ok(())
        }
        PartitionsOutput::Csv => csv_record(r, out),
        PartitionsOutput::Text => Ok(()),
    }
}

/// A partition's line of `sstablepartitions --csv`, written field by field:
/// it runs once per partition, where formatting machinery and a string per
/// field would cost more than decoding the partition.
fn csv_record(r: &Fields<'_>, out: &mut Vec<u8>) -> std::io::Result<()> {
    let p = r.stats;
    let t = &p.tombstones;
    csv_key(&r.sst.keys.key_text(r.key), out);
    out.push(b',');
    hex_into(r.key, out);
    out.extend_from_slice(if p.live { b",true" } else { b",false" });
    let mut n = itoa::Buffer::new();
    for v in [
        p.offset,
        p.size,
        p.rows,
        p.cells,
        p.tombstone_count(),
        t.row,
        t.range,
        t.complex,
        t.cell,
        p.expired_rows,
        p.expired_cells,
    ] {
        out.push(b',');
        out.extend_from_slice(n.format(v).as_bytes());
    }
    out.extend_from_slice(r.sst.csv_tail.as_bytes());
    Ok(())
}

/// What a summary prints of one metric.
struct MetricView {
    /// Exact percentiles ([`PERCENTILES`]), None without partitions.
    exact: Vec<Option<u64>>,
    /// False once too many distinct values made them approximate.
    is_exact: bool,
    /// sstablepartitions' estimates (None when a value overflowed its histogram).
    estimated: Vec<Option<u64>>,
    min: Option<u64>,
    max: Option<u64>,
}

/// A summary's printed figures: size (and rows, cells, tombstones without
/// `--partitions-only`), and the partitions counted.
struct View {
    count: u64,
    metrics: Vec<MetricView>,
}

/// The metrics' names, in the order of [`Summary::exact`].
const METRICS: [&str; 4] = ["size", "rows", "cells", "tombstones"];

impl View {
    fn of(s: &Summary, partitions_only: bool) -> View {
        let hists = [&s.size, &s.rows, &s.cells, &s.tombstones];
        let n = if partitions_only { 1 } else { 4 };
        let qs: Vec<f64> = PERCENTILES.iter().map(|p| p.1).collect();
        let metrics = (0..n)
            .map(|i| {
                let e = s.extremes.map(|e| e[i]);
                MetricView {
                    exact: s.exact[i].percentiles(&qs),
                    is_exact: s.exact[i].exact(),
                    estimated: qs.iter().map(|&q| hists[i].percentile(q)).collect(),
                    min: e.map(|e| e.0),
                    max: e.map(|e| e.1),
                }
            })
            .collect();
        View {
            count: s.count,
            metrics,
        }
    }

    /// `{"count", "stats": {metric: {"p50".., "min", "max", "exact", "estimated": {"p50"..}}}}`.
    fn json(&self) -> Value {
        let mut m = Map::new();
        for (name, v) in METRICS.iter().zip(&self.metrics) {
            let mut x = Map::new();
            let mut est = Map::new();
            for (i, (p, _)) in PERCENTILES.iter().enumerate() {
                x.insert((*p).into(), json!(v.exact[i]));
                est.insert((*p).into(), json!(v.estimated[i]));
            }
            x.insert("min".into(), json!(v.min));
            x.insert("max".into(), json!(v.max));
            x.insert("exact".into(), json!(v.is_exact));
            x.insert("estimated".into(), Value::Object(est));
            m.insert((*name).into(), Value::Object(x));
        }
        json!({"count": self.count, "stats": m})
    }
}

/// Writes records in the chosen format.
struct Writer<'w> {
    w: &'w mut dyn Write,
    fmt: PartitionsOutput,
    partitions_only: bool,
    /// JSON: partitions written so far (comma placement).
    items: u64,
    /// JSON: the sstable and table records, written after the partitions.
    later: Vec<Value>,
    /// Text: the terminal width.
    width: usize,
    /// Text: keys are cut to the width (at a terminal only).
    cut_keys: bool,
    /// The record being rendered, its buffer kept for the next.
    line: Vec<u8>,
}

impl<'w> Writer<'w> {
    fn new(w: &'w mut dyn Write, fmt: PartitionsOutput, partitions_only: bool) -> Self {
        Writer {
            w,
            fmt,
            partitions_only,
            items: 0,
            later: Vec::new(),
            width: term::width(Stream::Stdout),
            cut_keys: Stream::Stdout.is_terminal(),
            line: Vec::new(),
        }
    }

    fn begin(&mut self) -> std::io::Result<()> {
        match self.fmt {
            PartitionsOutput::Json => self.w.write_all(b"{\"partitions\":["),
            PartitionsOutput::Csv => writeln!(self.w, "{CSV_HEADER}"),
            _ => Ok(()),
        }
    }

    fn partition(&mut self, r: &Record) -> std::io::Result<()> {
        if self.fmt == PartitionsOutput::Text {
            return self.text_line(r);
        }
        let mut line = std::mem::take(&mut self.line);
        line.clear();
        render_record(self.fmt, self.partitions_only, &r.fields(), &mut line)?;
        let done = self.rendered(&line, 1);
        self.line = line;
        done
    }

    /// `count` records [`render_record`] rendered, one after another with
    /// the format's separator between them.
    fn rendered(&mut self, records: &[u8], count: u64) -> std::io::Result<()> {
        if count == 0 {
            return Ok(());
        }
        if self.items > 0 {
            self.w.write_all(self.fmt.separator())?;
        }
        self.items += count;
        self.w.write_all(records)
    }

    /// Column widths of a text line besides the key.
    const COLS: [(&'static str, usize); 5] = [
        ("size", 11),
        ("rows", 9),
        ("cells", 10),
        ("tombst.", 9),
        ("", 8),
    ];

    fn key_width(&self) -> usize {
        let rest: usize = Self::COLS.iter().map(|c| c.1 + 1).sum();
        self.width.saturating_sub(rest + 1).max(12)
    }

    fn text_head(&mut self) -> std::io::Result<()> {
        let kw = self.key_width();
        let mut h = format!("{:<kw$}", "partition key");
        for (name, w) in Self::COLS {
            h.push_str(&format!(" {name:>w$}"));
        }
        writeln!(self.w, "{}", h.trim_end())
    }

    fn text_line(&mut self, r: &Record) -> std::io::Result<()> {
        let kw = self.key_width();
        let color = term::color(Stream::Stdout);
        let p = &r.stats;
        // Whole in a file or pipe, where a key is copied to --key.
        let key = r.sst.keys.key_text(&r.key);
        let key = if self.cut_keys { fit(&key, kw) } else { key };
        let (rows, cells, tombs) = if self.partitions_only {
            ("-".to_string(), "-".to_string(), "-".to_string())
        } else {
            (
                p.rows.to_string(),
                p.cells.to_string(),
                p.tombstone_count().to_string(),
            )
        };
        let state = if p.live { "" } else { "deleted" };
        let line = format!(
            "{} {:>11} {:>9} {:>10} {:>9} {:>8}",
            term::paint(color, term::Style::Key, &format!("{key:<kw$}")),
            pretty_bytes(p.size),
            rows,
            cells,
            tombs,
            state
        );
        writeln!(self.w, "{}", line.trim_end())
    }

    fn summary_text(&mut self, title: &str, s: &View) -> std::io::Result<()> {
        writeln!(self.w, "{title}")?;
        let mut head = "       ".to_string();
        for name in METRICS.iter().take(s.metrics.len()) {
            head.push_str(&format!(" {name:>12}"));
        }
        writeln!(self.w, "{head}")?;
        let cell = |i: usize, v: Option<u64>, exact: bool| {
            let t = match v {
                None => "-".to_string(),
                Some(v) if i == 0 => pretty_bytes(v),
                Some(v) => v.to_string(),
            };
            // Approximate past the distinct values kept (see `--help`).
            if exact {
                t
            } else {
                format!("~{t}")
            }
        };
        for (k, (p, _)) in PERCENTILES.iter().enumerate() {
            let mut l = format!("  {p:<5}");
            for (i, m) in s.metrics.iter().enumerate() {
                l.push_str(&format!(" {:>12}", cell(i, m.exact[k], m.is_exact)));
            }
            writeln!(self.w, "{l}")?;
        }
        for (label, pick) in [("min", 0), ("max", 1)] {
            if s.count == 0 {
                break;
            }
            let mut l = format!("  {label:<5}");
            for (i, m) in s.metrics.iter().enumerate() {
                let v = if pick == 0 { m.min } else { m.max };
                l.push_str(&format!(" {:>12}", cell(i, v, true)));
            }
            writeln!(self.w, "{l}")?;
        }
        writeln!(self.w, "  count {:>12}", s.count)
    }

    /// Text: a blank line between two blocks.
    fn gap(&mut self) -> std::io::Result<()> {
        if self.items > 0 {
            writeln!(self.w)?;
        }
        self.items += 1;
        Ok(())
    }

    fn sstable(&mut self, i: &SstInfo, s: &View, listed: u64, sizes: Sizes) -> std::io::Result<()> {
        // The identity fields flat, as this record had them before sstable_ref existed.
        let mut m = serde_json::Map::new();
        m.insert("type".into(), json!("sstable"));
        m.insert("sstable".into(), json!(i.label));
        m.extend(i.sref.clone());
        m.insert("size".into(), json!(sizes.0));
        m.insert("size_on_disk".into(), json!(sizes.1));
        m.insert("listed".into(), json!(listed));
        if let Value::Object(x) = s.json() {
            m.extend(x);
        }
        let v = Value::Object(m);
        match self.fmt {
            PartitionsOutput::Json => {
                self.later.push(v);
                Ok(())
            }
            PartitionsOutput::Ndjson => {
                serde_json::to_writer(&mut *self.w, &v)?;
                self.w.write_all(b"\n")
            }
            PartitionsOutput::Csv => Ok(()),
            PartitionsOutput::Text => {
                let title = format!(
                    "{} ({}-{}, {} uncompressed, {} on disk): {} partitions, {} listed",
                    i.label,
                    i.format,
                    i.version,
                    pretty_bytes(sizes.0),
                    pretty_bytes(sizes.1),
                    s.count,
                    listed
                );
                let title = term::wrap(&title, "", "  ", self.width);
                self.gap()?;
                self.summary_text(title.trim_end(), s)
            }
        }
    }

    fn table(
        &mut self,
        name: &str,
        s: &View,
        sstables: u64,
        listed: Option<u64>,
    ) -> std::io::Result<()> {
        let mut v = json!({"type": "table", "table": name, "sstables": sstables});
        if let (Value::Object(m), Value::Object(x)) = (&mut v, s.json()) {
            m.extend(x);
        }
        match self.fmt {
            PartitionsOutput::Json => {
                self.later.push(v);
                Ok(())
            }
            PartitionsOutput::Ndjson => {
                serde_json::to_writer(&mut *self.w, &v)?;
                self.w.write_all(b"\n")
            }
            PartitionsOutput::Csv => Ok(()),
            // One sstable's table totals repeat its summary.
            PartitionsOutput::Text if sstables < 2 => Ok(()),
            PartitionsOutput::Text => {
                let mut title =
                    format!("table {name}: {sstables} sstables, {} partitions", s.count);
                if let Some(n) = listed {
                    title.push_str(&format!(", {n} listed"));
                }
                let title = term::wrap(&title, "", "  ", self.width);
                self.gap()?;
                self.summary_text(title.trim_end(), s)
            }
        }
    }

    /// Text: what the list below holds, then its column header.
    fn list_header(
        &mut self,
        shown: u64,
        of: u64,
        thresholds: bool,
        by: PartitionMetric,
    ) -> std::io::Result<()> {
        let by = match by {
            PartitionMetric::Size => "size",
            PartitionMetric::Rows => "rows",
            PartitionMetric::Cells => "cells",
            PartitionMetric::Tombstones => "tombstones",
        };
        let line = format!(
            "{shown} listed of {of} partitions{}, by {by}, largest first{}:",
            if thresholds {
                " over the thresholds"
            } else {
                ""
            },
            if shown < of {
                " (--top N for more)"
            } else {
                ""
            }
        );
        self.gap()?;
        writeln!(
            self.w,
            "{}",
            term::wrap(&line, "", "  ", self.width).trim_end()
        )?;
        if shown > 0 {
            self.text_head()?;
        }
        Ok(())
    }

    /// An sstable that could not be read: ndjson gets a typed record (the
    /// message is on stderr in every format).
    fn error(&mut self, label: &str, msg: &str) -> std::io::Result<()> {
        let v = json!({"type": "error", "sstable": label, "error": msg});
        match self.fmt {
            PartitionsOutput::Ndjson => {
                serde_json::to_writer(&mut *self.w, &v)?;
                self.w.write_all(b"\n")
            }
            PartitionsOutput::Json => {
                self.later.push(v);
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn finish(&mut self) -> std::io::Result<()> {
        if self.fmt == PartitionsOutput::Json {
            let (mut ssts, mut tables, mut errors) = (Vec::new(), Vec::new(), Vec::new());
            for v in self.later.drain(..) {
                match v["type"].as_str() {
                    Some("sstable") => ssts.push(v),
                    Some("table") => tables.push(v),
                    _ => errors.push(v),
                }
            }
            self.w.write_all(b"],\"sstables\":")?;
            serde_json::to_writer(&mut *self.w, &ssts)?;
            self.w.write_all(b",\"tables\":")?;
            serde_json::to_writer(&mut *self.w, &tables)?;
            if !errors.is_empty() {
                self.w.write_all(b",\"errors\":")?;
                serde_json::to_writer(&mut *self.w, &errors)?;
            }
            self.w.write_all(b"}\n")?;
        }
        self.w.flush()
    }
}

/// `s` cut to `w` columns with an ellipsis.
fn fit(s: &str, w: usize) -> String {
    if s.chars().count() <= w {
        return s.to_string();
    }
    let mut t: String = s.chars().take(w.saturating_sub(1)).collect();
    t.push('…');
    t
}

#[cfg(test)]
mod tests {
    #[test]
    fn csv_keys_are_quoted_as_sstablepartitions_quotes_them() {
        let csv_key = |t: &str| {
            let mut out = Vec::new();
            super::csv_key(t, &mut out);
            String::from_utf8(out).unwrap()
        };
        assert_eq!(csv_key("23"), "\"23\"");
        assert_eq!(csv_key("a b"), "\"\"a b\"\"");
        assert_eq!(csv_key("a \"b\""), "\"\"a \"\"b\"\"\"\"");
    }
}
