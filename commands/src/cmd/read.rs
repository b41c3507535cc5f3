//! `sstkit read SSTABLE... --key K [--from/--after CK] [--to/--before CK]`:
//! single-partition bounded reads, located through the index.
//!
//! ```text
//! sstkit read nb-1-big-Data.db -k 0 --from 5000 --to 5099         # 100 rows of partition 0
//! sstkit read nb-1-big-Data.db -k 0 --from 17:abc --limit 1       # composite clustering a:b
//! sstkit read nb-1-big-Data.db -k 0 --after 17 --before 18        # prefix bounds, exclusive
//! sstkit read nb-1-big-Data.db --keys-file keys.txt --io-stats=json -o ndjson
//! sstkit read nb-1-big-Data.db -k 0 --columns v1 -o text
//! ```
//!
//! For each sstable (in turn) and each key (in the order given: `--key`,
//! then `--key-hex`, then `--keys-file`), one lookup the way the database
//! does it ([`sstkit_format::read`]): bloom filter (a "no" costs nothing
//! more), Summary.db (read once per sstable), the Index.db page(s) between
//! two summary samples, the partition's promoted index binary-searched for
//! the bounds, then only the Data.db range that can hold the rows. Index.db
//! pages, parsed promoted-index blocks and the partition header + static row
//! stay in the index cache (`--index-cache-size`, `--no-index-cache`) across
//! the lookups of one process.
//!
//! Clustering bounds are typed values: `--from`/`--to` inclusive,
//! `--after`/`--before` exclusive; a prefix of the clustering columns is
//! allowed, several columns joined as `a:b` (`\:` for a literal colon).
//! The static row and the partition deletion are always printed; range
//! tombstones are clipped to the requested range (see
//! [`sstkit_format::read`] for the synthetic bound markers at its edges).
//! `--limit N`: at most N rows per partition. `--columns c1,c2`: only these
//! regular and static columns (row liveness and deletions are kept).
//!
//! Output formats are dump-data's ([`crate::sink`]): json / ndjson (the
//! scylla dump-data schema), sstabledump, sstabledump-lines, text, cql (the
//! live CQL rows; a partition's static content alone only when no clustering
//! bound is given, as Cassandra). A key
//! that is absent prints nothing.
//!
//! `--io-stats` prints, to stderr, one entry per operation: `open` (TOC,
//! Statistics.db, Filter.db, Summary.db, CompressionInfo.db), then one per
//! key lookup with the counters of that lookup only, its result (found, or
//! why absent), the blocks and Data.db range chosen, and its duration. JSON:
//! `{"sstable", "operation": "open"|"read", "key"?, "result"?, "plan"?,
//! "micros", "components": {...}, "total": {...}}`.
//!
//! Expected IO per lookup (default `--io-unit 4KiB`, `--max-io 128KiB`):
//! a key the bloom filter rules out, none; otherwise, cold, the Index.db
//! pages between the summary sample and the entry (usually one) plus about
//! log₂(blocks) pages of the promoted index, then one Data.db read for the
//! header and static row (tables with static columns) and one for the
//! blocks of the slice; warm (same partition, same region), one Data.db read
//! of at most the block(s) plus alignment (compressed: the chunks
//! overlapping them). A partition without promoted index: its entry's page
//! and one Data.db read of the whole partition. With `--limit`, the blocks
//! are read in windows that double, so a short read of a long range stops
//! early. The hidden `--naive` flag ignores the promoted index and scans the
//! partition from its start (the benchmark's baseline, `bench/bounded-read.sh`).
//!
//! `--reverse`: the rows and range tombstones of the slice in reverse
//! clustering order ([`sstkit_format::read::ReversedReader`]): the static
//! row and partition deletion first, then the promoted-index blocks from the
//! last one that can hold the slice down to the first, each group of blocks
//! read once and reversed in memory (bounded by `--max-io` or one block,
//! never by the partition). Range tombstone bounds are reversed (a start
//! bound becomes an end bound of the same inclusiveness and vice versa, a
//! boundary swaps its sides), so sstabledump shows `end` for a forward
//! `start`, and the scylla JSON changes sit where a reversed reader emits
//! them. `--limit N` gives the last N rows of the slice, reading only the
//! blocks at its end (one block, then twice as many each time). A whole
//! partition reversed reads the Data.db bytes of the forward read plus its
//! whole promoted index. Not with `--naive` (exit 2).
//!
//! `--merge`: each key's partition reconciled across the sstables (see
//! `run_merged` for the order and skipping of sstables); `--io-stats` then
//! prints one entry per sstable (read, header only, or skipped and why) and
//! a `total` one. With `--reverse` the slice is merged in windows, last
//! first ([`sstkit_format::engine::MergeInputs::emit_lookup`]); the total says how
//! many.
//!
//! BTI (`da`) sstables: the same lookups through Filter.db, Partitions.db
//! and Rows.db ([`sstkit_format::bti::BtiIndex`]); row-index blocks are
//! bounded by the trie's separators, so no Data.db byte is read to find them.
//!
//! `--threads N` (`-j`, default one per core): the keys are cut into runs
//! of consecutive keys, each looked up on a thread with its own handles on
//! the sstables and its own index cache (`--merge`: each key's merge), and
//! rendered into a piece that continues the document; the pieces are
//! written in key order ([`crate::sink::pieces::lookups`]), so the output is the
//! one a single thread writes, byte for byte, with the notes on absent keys
//! in key order and the first error where one thread meets it. A run whose
//! output would be large (a large partition) is read on the calling thread,
//! streaming. Read on one thread: a single key, `--io-stats` (its counts are per lookup, with the
//! cache the lookups before it warmed on the same thread) and `--explain`.
//!
//! Exit status: 0 ok (absent keys included); 2 usage (including a key that
//! does not fit the partition key type); 3 unreadable input (including a
//! Data.db shorter than its index).

use std::collections::HashSet;
use std::io::Write;
use std::time::Instant;

use serde_json::{json, Value};
use sstkit_format::engine::merged::Indexes;
use sstkit_format::engine::{self, Bound, Found, Lookup, MergeInputs, Shape};
use sstkit_format::io::IoStats;
use sstkit_format::read::{
    hull, value_slices, Absence, ClusteringBound, ReadOptions, ReadPlan, Slice,
};
use sstkit_format::statistics::SerializationHeader;
use sstkit_format::Sstable;

use crate::cli::{DataOutputFormat, IoStatsFormat, OutputFormat, ReadArgs};
use crate::output::{iostats, JsonOut};
use crate::plan::select::{note_key_absent, KeyArg};
use crate::plan::LookupPlan;
use crate::sink::pieces::lookups::{Look, Looked, Lookups, WithLookups};
use crate::sink::pieces::Style;
use crate::sink::renderer::{RenderOptions, Renderer};
use crate::sink::{type_warning, Sink, Table, TypeCheck};
use crate::{CmdError, CmdResult, Outcome};

/// Run the command.
pub fn run(a: &ReadArgs, out: &mut dyn Write) -> CmdResult<Outcome> {
    run_plan(&LookupPlan::resolve(a)?, out)
}

/// Run a resolved `read`.
fn run_plan(a: &LookupPlan, out: &mut dyn Write) -> CmdResult<Outcome> {
    let cql = a.output == DataOutputFormat::Cql;
    if a.merge {
        return run_merged(a, out);
    }
    let now_secs = a.now_secs;
    let scylla = matches!(a.output, DataOutputFormat::Json | DataOutputFormat::Ndjson);
    let json_fmt = match a.output {
        DataOutputFormat::Ndjson => OutputFormat::Ndjson,
        DataOutputFormat::Json => OutputFormat::Json,
        _ => OutputFormat::Text,
    };
    let mut json = JsonOut::new(out, json_fmt);
    let multi = a.inputs.sstables.len() > 1;
    let mut written = 0usize;
    // `read_one` reports the IO of each step itself.
    let outcome = a.inputs.each(|_, sst, label| {
        let mut begun = false;
        let mut begin = |json: &mut JsonOut<'_>| -> CmdResult<()> {
            begun = true;
            if scylla {
                json.begin_sstable(label)?;
            } else {
                let w = json.raw();
                if a.output == DataOutputFormat::Text {
                    if multi {
                        if written > 0 {
                            writeln!(w)?;
                        }
                        writeln!(w, "== {label}")?;
                    }
                } else if written > 0 && !cql {
                    w.write_all(b"\n")?;
                }
            }
            written += 1;
            Ok(())
        };
        let r = read_one(a, sst, label, now_secs, &mut json, &mut begin)
            .map_err(|e| e.in_sstable(label));
        if !begun {
            // A usage error: the command ends with no block begun.
            return r;
        }
        crate::end_sstable(&mut json, true, r)
    })?;
    // Text output has no framing: this only flushes it.
    json.finish()?;
    Ok(outcome)
}

/// `read --merge`: each key's partition, reconciled across the sstables
/// ([`sstkit_format::engine::merged`]). Like Cassandra's single-partition read: each
/// sstable's filter and index are asked first (a "no" costs no Data.db
/// read); sstables whose clustering range (Statistics.db) cannot hold the
/// slice give only their partition header; sstables are visited newest
/// first (max timestamp) and the visit stops once a partition deletion
/// newer than every remaining sstable's max timestamp has been seen.
fn run_merged(a: &LookupPlan, out: &mut dyn Write) -> CmdResult<Outcome> {
    let inputs = a.inputs.open_merged()?;
    let keys = &a.keys;
    let header = &inputs.schema.header;
    let slices = slices_of(a, header)?;
    let cols = columns_of(a, header)?;
    let now_secs = a.now_secs;
    let table = Table::new(header, inputs.partitioner.clone(), now_secs);
    let parsed = keys
        .iter()
        .map(|k| k.bytes(&header.partition_key_type))
        .collect::<CmdResult<Vec<_>>>()?;
    if a.explain {
        return crate::sink::explain::read(a, &inputs, &parsed, &slices, cols, now_secs, out);
    }
    let indexes = inputs.indexes()?;
    let scylla = matches!(a.output, DataOutputFormat::Json | DataOutputFormat::Ndjson);
    let json_fmt = match a.output {
        DataOutputFormat::Ndjson => OutputFormat::Ndjson,
        DataOutputFormat::Json => OutputFormat::Json,
        _ => OutputFormat::Text,
    };
    let mut json = JsonOut::new(out, json_fmt);
    let label = inputs.label();
    if scylla {
        json.begin_merged(&label)?;
    }
    let mut renderer = Renderer::new(
        a.output,
        &mut json,
        &table,
        inputs.ssts.first().and_then(|s| s.table_schema()),
        render_options(a, &slices),
    )?;
    let shape = Shape {
        slice: Some(hull(&slices)),
        row_limit: a.limit,
        columns: cols,
        reverse: a.reverse,
        ..Shape::default()
    };
    let mut merged = MergedKeys {
        inputs: &inputs,
        indexes,
        t: &table,
        shape: &shape,
        keys,
        parsed: &parsed,
        slices: &slices,
    };
    let result = if on_threads(a) {
        merged_threads(a, &inputs, &label, &mut merged, &mut renderer)
    } else {
        merged_keys(a, &inputs, &label, &mut merged, &mut renderer)
    };

    let fin = renderer.finish();
    let mut outcome = Outcome::default();
    outcome.settle(crate::end_sstable(&mut json, true, result))?;
    fin?;
    if scylla {
        json.finish()?;
    } else {
        json.raw().flush()?;
    }
    Ok(outcome)
}

/// `read --merge`'s keys in turn on this thread, reporting each merge's
/// IO (`--io-stats`).
fn merged_keys(
    a: &LookupPlan,
    inputs: &MergeInputs,
    label: &str,
    merged: &mut MergedKeys<'_, '_>,
    renderer: &mut Renderer<'_, '_>,
) -> CmdResult<()> {
    use sstkit_format::engine::merged::Visit;
    for (i, k) in a.keys.iter().enumerate() {
        let t = Instant::now();
        let before: Vec<IoStats> = inputs.ssts.iter().map(|s| s.io.stats()).collect();
        let mut visits: Vec<Option<Visit>> = vec![None; inputs.ssts.len()];
        let mut windows = None;
        let r = merged.read(i, renderer.sink(), &mut visits).map(|w| {
            windows = w;
            if windows.is_none() {
                note_key_absent(label, &k.label(), Absence::Index);
            }
        });
        let mut total = IoStats::default();
        for (i, v) in visits.iter().enumerate() {
            let delta = inputs.ssts[i].io.stats().since(&before[i]);
            total += &delta;
            let what = v
                .as_ref()
                .map_or_else(|| "not visited".into(), Visit::describe);
            report(
                a.io_stats,
                &inputs.labels[i],
                &delta,
                json!({"operation": "read", "key": k.label(), "result": what}),
            );
        }
        report(
            a.io_stats,
            "total",
            &total,
            json!({"operation": "read", "key": k.label(), "result": match windows {
                       Some(1) => "merged, reversed in 1 window".into(),
                       Some(n) if n > 1 => format!("merged, reversed in {n} windows"),
                       _ => "merged".into(),
                   },
                   "micros": t.elapsed().as_micros() as u64}),
        );
        r?;
    }
    Ok(())
}

/// `read --merge`'s keys on `a.threads` threads, each with its own handles
/// on the sstables: the output, notes and first error of [`merged_keys`].
fn merged_threads(
    a: &LookupPlan,
    inputs: &MergeInputs,
    label: &str,
    merged: &mut MergedKeys<'_, '_>,
    renderer: &mut Renderer<'_, '_>,
) -> CmdResult<()> {
    let reopen: Vec<_> = inputs.ssts.iter().map(|s| s.reopener()).collect();
    let (parsed, slices, shape) = (merged.parsed, merged.slices, merged.shape);
    let now_secs = a.now_secs;
    let thread = |with: &mut WithLookups<'_>| {
        let own = MergeInputs::new(reopen.iter().map(|r| -> Result<_, engine::Error> {
            let s = r.open()?;
            let b = engine::bind(&s)?;
            Ok((s, b))
        }));
        let Ok(own) = own else {
            return with(None);
        };
        let Ok(indexes) = own.indexes() else {
            return with(None);
        };
        let t = Table::new(&own.schema.header, own.partitioner.clone(), now_secs);
        let mut mine = MergedKeys {
            inputs: &own,
            indexes,
            t: &t,
            shape,
            keys: &a.keys,
            parsed,
            slices,
        };
        let mut look = |k: usize, sink: &mut dyn Sink| mine.looked(k, sink);
        with(Some(Lookups {
            t: &t,
            schema: own.ssts.first().and_then(|s| s.table_schema()),
            look: &mut look,
        }));
    };
    let mut doc = |k: usize, sink: &mut dyn Sink| merged.looked(k, sink);
    let style = style(a, label, slices, true);
    lookups(a, &style, &thread, &mut doc, renderer, &mut Vec::new())
}

/// The [`Style`] of `read`'s pieces.
fn style<'a>(a: &LookupPlan, label: &'a str, slices: &[Slice], merged: bool) -> Style<'a> {
    Style {
        format: a.output,
        label,
        options: render_options(a, slices),
        merged,
    }
}

/// [`crate::sink::pieces::lookups`] of every key, noting the absent ones and the
/// columns whose type did not fit (added to `failed`) as a single thread would.
fn lookups(
    a: &LookupPlan,
    style: &Style<'_>,
    thread: &(dyn Fn(&mut WithLookups<'_>) + Sync),
    doc: &mut Look<'_>,
    renderer: &mut Renderer<'_, '_>,
    failed: &mut Vec<String>,
) -> CmdResult<()> {
    let mut noted = |k: usize, l: Looked| -> CmdResult<()> {
        add_failed(failed, l.failed);
        if let Some(why) = l.absent {
            note_key_absent(style.label, &a.keys[k].label(), why);
        }
        l.error.map_or(Ok(()), Err)
    };
    crate::sink::pieces::lookups::lookups(
        style,
        a.keys.len(),
        a.threads,
        thread,
        doc,
        renderer,
        &mut noted,
    )
}

/// The merged lookups of the keys in a set of sstables, into any sink.
struct MergedKeys<'a, 't> {
    inputs: &'a MergeInputs,
    indexes: Indexes<'a>,
    t: &'a Table<'t>,
    shape: &'a Shape,
    keys: &'a [KeyArg],
    parsed: &'a [Vec<u8>],
    slices: &'a [Slice],
}

impl MergedKeys<'_, '_> {
    /// Merge key `k`'s partition into `sink`, noting which sstables were
    /// visited and how: the windows of a reversed merge (`None`: absent);
    /// its error names the partition.
    fn read(
        &mut self,
        k: usize,
        sink: &mut dyn Sink,
        visits: &mut Vec<Option<sstkit_format::engine::merged::Visit>>,
    ) -> CmdResult<Option<usize>> {
        let key = &self.parsed[k];
        self.inputs
            .emit_lookup_slices(
                &mut self.indexes,
                key,
                self.slices,
                self.t,
                self.shape,
                sink,
                visits,
            )
            .map_err(|e| match CmdError::from(e) {
                CmdError::Format(e) => {
                    CmdError::from(e.in_partition(partition(&self.keys[k], key)))
                }
                e => e,
            })
    }

    /// [`MergedKeys::read`], as a thread reports it.
    fn looked(&mut self, k: usize, sink: &mut dyn Sink) -> Looked {
        let mut visits = vec![None; self.inputs.ssts.len()];
        match self.read(k, sink, &mut visits) {
            Ok(Some(_)) => Looked::default(),
            Ok(None) => Looked {
                absent: Some(Absence::Index),
                ..Looked::default()
            },
            Err(e) => Looked {
                error: Some(e),
                ..Looked::default()
            },
        }
    }
}

/// The slices of `--from/--after/--to/--before`, typed with the sstable's
/// clustering types, in clustering order.
///
/// The bounds are values, as in CQL's `WHERE ck >= 5 AND ck <= 10`: on a
/// descending column the lower value is where the slice ends in clustering
/// order, so the bounds over descending columns swap sides. A bound over
/// columns of both orders is several slices, as Cassandra reads it
/// ([`value_slices`]). A range whose lower bound is above its upper one is
/// a usage error. `--clustering-order` takes the bounds as the slice's
/// start and end in clustering order, as stored.
fn slices_of(a: &LookupPlan, header: &SerializationHeader) -> CmdResult<Vec<Slice>> {
    let types = &header.clustering_types;
    let parse = |flag: &'static str,
                 text: &Option<String>,
                 inclusive: bool|
     -> CmdResult<Option<(ClusteringBound, &'static str, String)>> {
        match text {
            None => Ok(None),
            Some(t) => ClusteringBound::parse(types, t, inclusive)
                .map(|b| Some((b, flag, t.clone())))
                .map_err(|e| CmdError::Usage(format!("--{flag} {t:?}: {}", e.kind))),
        }
    };
    let lower = match (
        parse("from", &a.from, true)?,
        parse("after", &a.after, false)?,
    ) {
        (Some(_), Some(_)) => {
            return Err(CmdError::Usage("--from and --after are exclusive".into()))
        }
        (s, None) | (None, s) => s,
    };
    let upper = match (
        parse("to", &a.to, true)?,
        parse("before", &a.before, false)?,
    ) {
        (Some(_), Some(_)) => {
            return Err(CmdError::Usage("--to and --before are exclusive".into()))
        }
        (e, None) | (None, e) => e,
    };
    // One clustering (or prefix) from and to itself is the same range in
    // either order, whatever the columns' orders: a printed clustering
    // pasted back.
    let point = matches!((&lower, &upper), (Some(l), Some(u)) if l.0 == u.0 && l.0.inclusive);
    if a.clustering_order || point {
        return Ok(vec![Slice {
            start: lower.map(|b| b.0),
            end: upper.map(|b| b.0),
        }]);
    }
    let shown = |b: &Option<(ClusteringBound, &str, String)>| {
        b.as_ref().map(|(_, f, t)| format!("--{f} {t}"))
    };
    let (lower_text, upper_text) = (shown(&lower), shown(&upper));
    let inverted = |l: &str, u: &str| {
        CmdError::Usage(format!(
            "{l} is above {u}: the range is empty (the bounds are values, as in CQL)"
        ))
    };
    // Whether a bound's columns are all descending, or of both orders.
    let orders = |b: &(ClusteringBound, &str, String)| {
        let cols = &types[..b.0.values.len().min(types.len())];
        let desc = cols.first().is_some_and(|t| t.is_reversed());
        (desc, cols.iter().any(|t| t.is_reversed() != desc))
    };
    if lower.iter().chain(&upper).any(|b| orders(b).1) {
        let (lo, hi) = (lower.map(|b| b.0), upper.map(|b| b.0));
        let closed = |b: &Option<ClusteringBound>| {
            b.clone().map(|b| ClusteringBound {
                inclusive: true,
                ..b
            })
        };
        if let (Some(l), Some(u)) = (&lower_text, &upper_text) {
            if value_slices(types, closed(&lo).as_ref(), closed(&hi).as_ref()).is_empty() {
                return Err(inverted(l, u));
            }
        }
        let slices = value_slices(types, lo.as_ref(), hi.as_ref());
        if slices.is_empty() {
            // Equal bounds, one exclusive: the header and static row only.
            let none = lo.or(hi).map(|b| ClusteringBound {
                inclusive: false,
                ..b
            });
            return Ok(vec![Slice {
                start: none.clone(),
                end: none,
            }]);
        }
        return Ok(slices);
    }
    let descending = |b: &(ClusteringBound, &str, String)| orders(b).0;
    let mut slice = Slice::default();
    if let Some(l) = lower {
        if descending(&l) {
            slice.end = Some(l.0);
        } else {
            slice.start = Some(l.0);
        }
    }
    if let Some(u) = upper {
        if descending(&u) {
            slice.start = Some(u.0);
        } else {
            slice.end = Some(u.0);
        }
    }
    // Inverted bounds (not only an exclusive bound on an equal value): exit 2.
    let closed = Slice {
        start: slice.start.clone().map(|b| ClusteringBound {
            inclusive: true,
            ..b
        }),
        end: slice.end.clone().map(|b| ClusteringBound {
            inclusive: true,
            ..b
        }),
    };
    if let (Some(l), Some(u)) = (&lower_text, &upper_text) {
        if closed.is_empty(types) {
            return Err(inverted(l, u));
        }
    }
    Ok(vec![slice])
}

/// The `--columns` set, checked against the header's regular and static columns.
fn columns_of(a: &LookupPlan, header: &SerializationHeader) -> CmdResult<Option<HashSet<String>>> {
    if a.columns.is_empty() {
        return Ok(None);
    }
    let known: HashSet<&str> = header
        .regular_columns
        .iter()
        .chain(&header.static_columns)
        .map(|c| c.name.as_str())
        .collect();
    let mut set = HashSet::new();
    for c in &a.columns {
        let c = c.trim();
        if !known.contains(c) {
            let mut names: Vec<&str> = known.iter().copied().collect();
            names.sort_unstable();
            return Err(CmdError::Usage(format!(
                "--columns: no regular or static column {c:?} (columns: {})",
                names.join(", ")
            )));
        }
        set.insert(c.to_string());
    }
    Ok(Some(set))
}

fn plan_json(p: &ReadPlan) -> Value {
    json!({
        "blocks": p.blocks,
        "block_range": p.block_range.map(|(i, j)| json!([i, j])),
        "data": p.data.map(|(s, e)| json!([s.0, e.0])),
        "header_cached": p.header_cached,
        "rows": p.rows,
        "markers": p.markers,
    })
}

/// Print one operation's counters (`--io-stats`).
fn report(fmt: Option<IoStatsFormat>, label: &str, delta: &IoStats, mut extra: Value) {
    let Some(fmt) = fmt else { return };
    match fmt {
        IoStatsFormat::Json => {
            let mut v = iostats::to_json(label, delta);
            if let (Some(o), Some(x)) = (v.as_object_mut(), extra.as_object_mut()) {
                // "sstable" first, then the operation, then the counters.
                let mut m = serde_json::Map::new();
                m.insert("sstable".into(), Value::String(label.to_string()));
                for (k, val) in std::mem::take(x) {
                    m.insert(k, val);
                }
                for (k, val) in std::mem::take(o) {
                    m.entry(k).or_insert(val);
                }
                v = Value::Object(m);
            }
            eprintln!("{v}");
        }
        IoStatsFormat::Table => {
            let op = extra["operation"].as_str().unwrap_or("").to_string();
            let mut what = op;
            if let Some(k) = extra["key"].as_str() {
                what.push_str(&format!(" key={k}"));
            }
            if let Some(r) = extra["result"].as_str() {
                what.push_str(&format!(" ({r})"));
            }
            if let Some((i, j)) = extra["plan"]["block_range"]
                .as_array()
                .and_then(|a| Some((a.first()?.as_u64()?, a.get(1)?.as_u64()?)))
            {
                what.push_str(&format!(
                    ", blocks {i}..={j} of {}",
                    extra["plan"]["blocks"].as_u64().unwrap_or(0)
                ));
            }
            if let Some(us) = extra["micros"].as_u64() {
                what.push_str(&format!(", {us} µs"));
            }
            iostats::print(fmt, &format!("{label}: {what}"), delta);
        }
    }
}

/// Read the keys from one sstable into its block of output, which `begin`
/// starts: after the keys, bounds and columns are checked against the
/// sstable's types, so that a usage error leaves no block half written.
fn read_one(
    a: &LookupPlan,
    sst: &Sstable,
    label: &str,
    now_secs: i64,
    json: &mut JsonOut<'_>,
    begin: &mut dyn FnMut(&mut JsonOut<'_>) -> CmdResult<()>,
) -> CmdResult<()> {
    let t0 = Instant::now();
    let bound = crate::plan::bind::sstable(sst, false);
    let typed = bound.and_then(|b| {
        let slices = slices_of(a, &b.header)?;
        let cols = columns_of(a, &b.header)?;
        let parsed = a
            .keys
            .iter()
            .map(|k| k.bytes(&b.header.partition_key_type))
            .collect::<CmdResult<Vec<_>>>()?;
        Ok((b, slices, cols, parsed))
    });
    let (
        Bound {
            header,
            partitioner,
            ..
        },
        slices,
        cols,
        parsed,
    ) = match typed {
        Err(e @ CmdError::Usage(_)) => return Err(e),
        Err(e) => {
            begin(json)?;
            return Err(e);
        }
        Ok(t) => {
            begin(json)?;
            t
        }
    };
    let table = Table::new(&header, partitioner, now_secs);
    let lookup = Lookup::open(sst, &table, a.reverse)?;
    report(
        a.io_stats,
        label,
        &sst.io.stats(),
        json!({"operation": "open", "micros": t0.elapsed().as_micros() as u64}),
    );

    let mut renderer = Renderer::new(
        a.output,
        json,
        &table,
        sst.table_schema(),
        render_options(a, &slices),
    )?;
    // Pre-3.0 data decoded with a user's schema: note columns whose type did not fit.
    let check = sst.features().legacy_cells && sst.table_schema().is_some();
    let mut failed: Vec<String> = Vec::new();
    let mut keys = Keys {
        t: &table,
        lookup,
        keys: &a.keys,
        parsed: &parsed,
        slices: &slices,
        cols: cols.as_ref(),
        opts: ReadOptions {
            limit: a.limit,
            naive: a.naive,
        },
        check,
    };
    let result = if on_threads(a) {
        read_threads(a, sst, label, &mut keys, &mut renderer, &mut failed)
    } else {
        read_keys(a, sst, label, &mut keys, &mut renderer, &mut failed)
    };
    let fin = renderer.finish();
    if let Some(w) = type_warning(label, &failed) {
        eprintln!("{w}");
    }
    result?;
    fin?;
    Ok(())
}

/// Look the keys up in turn on this thread, reporting each lookup's IO
/// (`--io-stats`).
fn read_keys(
    a: &LookupPlan,
    sst: &Sstable,
    label: &str,
    keys: &mut Keys<'_, '_>,
    renderer: &mut Renderer<'_, '_>,
    failed: &mut Vec<String>,
) -> CmdResult<()> {
    for (k, key) in a.keys.iter().enumerate() {
        sst.io.begin_operation();
        let before = sst.io.stats();
        let t = Instant::now();
        let mut extra = json!({"operation": "read", "key": key.label()});
        let (r, f) = keys.read(k, renderer.sink());
        add_failed(failed, f);
        match r? {
            Found::Absent(why) => {
                extra["result"] = json!(why.map_or("absent", |x| x.describe()));
                note_key_absent(label, &key.label(), why.unwrap_or(Absence::Index));
            }
            Found::Read(plan) => {
                extra["result"] = json!("found");
                extra["plan"] = plan_json(&plan);
            }
        }
        extra["micros"] = json!(t.elapsed().as_micros() as u64);
        report(a.io_stats, label, &sst.io.stats().since(&before), extra);
    }
    Ok(())
}

/// Whether the keys are looked up on several threads: more than one key
/// and one thread, and no `--io-stats` (whose counts are per lookup, with
/// the cache the lookups before it warmed on the same thread).
fn on_threads(a: &LookupPlan) -> bool {
    a.threads > 1 && a.keys.len() > 1 && a.io_stats.is_none()
}

/// Look the keys up on `a.threads` threads, each with its own handle on
/// `sst` ([`crate::sink::pieces::lookups`]): the output, notes and first error
/// of [`read_keys`].
fn read_threads(
    a: &LookupPlan,
    sst: &Sstable,
    label: &str,
    keys: &mut Keys<'_, '_>,
    renderer: &mut Renderer<'_, '_>,
    failed: &mut Vec<String>,
) -> CmdResult<()> {
    let reopen = sst.reopener();
    let (parsed, slices, cols, opts, check) =
        (keys.parsed, keys.slices, keys.cols, keys.opts, keys.check);
    let (now_secs, reverse) = (a.now_secs, a.reverse);
    let thread = |with: &mut WithLookups<'_>| {
        let Some((own, bound)) = reopen.open().ok().and_then(|s| {
            let b = sstkit_format::engine::bind(&s).ok()?;
            Some((s, b))
        }) else {
            return with(None);
        };
        let t = Table::new(&bound.header, bound.partitioner.clone(), now_secs);
        let Ok(lookup) = Lookup::open(&own, &t, reverse) else {
            return with(None);
        };
        let mut mine = Keys {
            t: &t,
            lookup,
            keys: &a.keys,
            parsed,
            slices,
            cols,
            opts,
            check,
        };
        let mut look = |k: usize, sink: &mut dyn Sink| mine.looked(k, sink);
        with(Some(Lookups {
            t: &t,
            schema: own.table_schema(),
            look: &mut look,
        }));
    };
    let mut doc = |k: usize, sink: &mut dyn Sink| keys.looked(k, sink);
    let style = style(a, label, slices, false);
    lookups(a, &style, &thread, &mut doc, renderer, failed)
}

/// Add the columns whose type did not fit in a lookup to those of the
/// lookups before it (first-seen order).
fn add_failed(failed: &mut Vec<String>, more: Vec<String>) {
    for f in more {
        if !failed.contains(&f) {
            failed.push(f);
        }
    }
}

/// The lookups of the keys in one sstable, into any sink.
struct Keys<'a, 't> {
    t: &'a Table<'t>,
    lookup: Lookup<'a>,
    keys: &'a [KeyArg],
    parsed: &'a [Vec<u8>],
    slices: &'a [Slice],
    cols: Option<&'a HashSet<String>>,
    opts: ReadOptions,
    /// Note the columns whose type did not fit (pre-3.0 data decoded with a user's schema).
    check: bool,
}

impl Keys<'_, '_> {
    /// Look key `k` up into `sink`: what it found (its error names the
    /// partition), and the columns whose type did not fit.
    fn read(&mut self, k: usize, sink: &mut dyn Sink) -> (CmdResult<Found>, Vec<String>) {
        let mut tc: Option<TypeCheck<'_>> = None;
        let sink: &mut dyn Sink = if self.check {
            tc.insert(TypeCheck::new(sink))
        } else {
            sink
        };
        let key = &self.parsed[k];
        let r = self
            .lookup
            .read(self.t, key, self.slices, &self.opts, self.cols, sink);
        let failed = tc.map(|t| t.failed).unwrap_or_default();
        let r = r.map_err(|e| match e {
            sstkit_format::engine::Error::Read {
                error,
                key: Some(_),
            } => CmdError::from(error.in_partition(partition(&self.keys[k], key))),
            e => CmdError::from(e),
        });
        (r, failed)
    }

    /// [`Keys::read`], as a thread reports it.
    fn looked(&mut self, k: usize, sink: &mut dyn Sink) -> Looked {
        let (r, failed) = self.read(k, sink);
        let (absent, error) = match r {
            Ok(Found::Absent(why)) => (Some(why.unwrap_or(Absence::Index)), None),
            Ok(Found::Read(_)) => (None, None),
            Err(e) => (None, Some(e)),
        };
        Looked {
            absent,
            failed,
            error,
        }
    }
}

/// How an error names the partition of `key` (`parsed`, its bytes).
fn partition(key: &KeyArg, parsed: &[u8]) -> String {
    format!("{} (0x{})", key.label(), crate::output::hex(parsed))
}

/// The renderer options of `read`: static content alone is a CQL row only
/// when the clustering is not bounded, as in Cassandra.
fn render_options(a: &LookupPlan, slices: &[Slice]) -> RenderOptions {
    RenderOptions {
        raw_timestamps: a.raw_timestamps,
        static_alone: slices == [Slice::all()],
        ..RenderOptions::default()
    }
}
