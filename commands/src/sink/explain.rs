//! `--explain` (with `--merge`): the provenance records of a merge
//! ([`sstkit_format::merge::explain`]) as NDJSON or text lines.
//!
//! The merger hands each record to an [`ExplainOut`] as it reconciles a
//! row, which writes it at once (memory is one row's versions). Records are
//! kept to the command's selection: wanted partitions, rows and markers
//! inside the slice, `--columns`, and `--limit` rows per partition.

use std::cell::RefCell;
use std::collections::HashSet;
use std::io::{self, Write};
use std::rc::Rc;

use serde_json::{json, Value as Json};
use sstkit_format::clustering::BoundKind;
use sstkit_format::compare::ClusteringComparator;
use sstkit_format::merge::explain::{
    Cause, Deleter, DeletionKind, Explained, Explainer, Item, Kind, Shadowed, Version,
};
use sstkit_format::merge::{MergedSchema, Merger};
use sstkit_format::read::{OwnedClustering, Slice};
use sstkit_format::types::CqlType;

use crate::render::{clustering_json, clustering_value_text};
use crate::sink::values::{render, Form};
use crate::CmdResult;

/// A test on a serialized partition key.
pub type KeyTest<'f> = Box<dyn Fn(&[u8]) -> bool + 'f>;

/// What the command selects, applied to the records.
#[derive(Default)]
pub struct Filter<'f> {
    /// Only partitions this says yes to.
    pub wants: Option<KeyTest<'f>>,
    /// Only rows and markers in these slices (sorted, disjoint).
    pub slices: Option<Vec<Slice>>,
    /// Only these columns' cells.
    pub columns: Option<HashSet<String>>,
    /// At most this many present rows per partition.
    pub row_limit: Option<u64>,
}

/// Writes the records of a merge.
pub struct ExplainOut<'w> {
    w: &'w mut dyn Write,
    ndjson: bool,
    /// Sstable labels (Data.db paths) by source index.
    labels: Vec<String>,
    /// Their short names (the file name without `-Data.db`), for text.
    short: Vec<String>,
    schema: MergedSchema,
    cmp: ClusteringComparator,
    filter: Filter<'w>,
    /// The current partition's key text, and whether it is wanted.
    key: String,
    wanted: bool,
    /// Present rows written in the current partition.
    rows: u64,
    /// Past the slice's end or the row limit: nothing more in this partition.
    done: bool,
    error: Option<io::Error>,
}

/// A shared handle: the merger owns one (as its [`Explainer`]), the command
/// another (to see whether the partition is done and to collect errors).
#[derive(Clone)]
pub struct Shared<'w>(Rc<RefCell<ExplainOut<'w>>>);

impl Explainer for Shared<'_> {
    fn record(&mut self, e: &Explained) {
        let mut o = self.0.borrow_mut();
        if let Err(err) = o.record(e) {
            o.error.get_or_insert(err);
        }
    }
}

impl<'w> Shared<'w> {
    /// Records to `w` (NDJSON, or text), sstables named by `labels`.
    pub fn new(
        w: &'w mut dyn Write,
        ndjson: bool,
        labels: &[String],
        schema: &MergedSchema,
        filter: Filter<'w>,
    ) -> Shared<'w> {
        let short = labels
            .iter()
            .map(|l| {
                let f = l.rsplit('/').next().unwrap_or(l);
                f.strip_suffix("-Data.db").unwrap_or(f).to_string()
            })
            .collect();
        Shared(Rc::new(RefCell::new(ExplainOut {
            w,
            ndjson,
            labels: labels.to_vec(),
            short,
            schema: schema.clone(),
            cmp: schema.comparator(),
            filter,
            key: String::new(),
            wanted: true,
            rows: 0,
            done: false,
            error: None,
        })))
    }

    /// Explain `merger`'s merge with expiry at `now_secs`.
    pub fn attach<'a>(&self, merger: &mut Merger<'a>, now_secs: i64)
    where
        'w: 'a,
    {
        merger.explain(Box::new(self.clone()), now_secs);
    }

    /// Read the current partition (started by `merger.next_partition`) to
    /// its end or to the end of what is wanted of it, its records written.
    pub fn drain_partition(&self, merger: &mut Merger<'_>) -> CmdResult<()> {
        while !self.0.borrow().done {
            if merger.next_unfiltered()?.is_none() {
                break;
            }
        }
        self.check()
    }

    /// The first write error, if any.
    pub fn check(&self) -> CmdResult<()> {
        match self.0.borrow_mut().error.take() {
            Some(e) => Err(crate::CmdError::Output(e)),
            None => Ok(()),
        }
    }

    /// Flush the output.
    pub fn flush(&self) -> io::Result<()> {
        self.0.borrow_mut().w.flush()
    }
}

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Live => "live",
        Kind::Tombstone => "tombstone",
        Kind::Expiring => "expiring",
        Kind::Marker => "marker",
        Kind::Deletion => "deletion",
        Kind::Counter => "counter",
    }
}

fn deletion_kind_name(k: DeletionKind) -> &'static str {
    match k {
        DeletionKind::Partition => "partition-deletion",
        DeletionKind::Range => "range-tombstone",
        DeletionKind::Row => "row-deletion",
        DeletionKind::Complex => "complex-deletion",
    }
}

impl ExplainOut<'_> {
    fn label(&self, s: usize) -> &str {
        self.labels.get(s).map_or("?", String::as_str)
    }

    fn short(&self, s: usize) -> &str {
        self.short.get(s).map_or("?", String::as_str)
    }

    fn clustering_text(&self, c: &OwnedClustering) -> String {
        if c.kind == BoundKind::StaticClustering {
            return "static".into();
        }
        let types = &self.schema.header.clustering_types;
        let vals: Vec<String> = c
            .values
            .iter()
            .enumerate()
            .map(|(i, v)| clustering_value_text(types.get(i), v.as_deref()))
            .collect();
        let v = vals.join(", ");
        // A bound without values is the partition's edge: `[` alone would read as a typo.
        if vals.is_empty() {
            match c.kind {
                BoundKind::InclStartBound | BoundKind::ExclStartBound => {
                    return "the partition start".into()
                }
                BoundKind::InclEndBound | BoundKind::ExclEndBound => {
                    return "the partition end".into()
                }
                _ => {}
            }
        }
        match c.kind {
            BoundKind::Clustering => format!("({v})"),
            BoundKind::InclStartBound => format!("[{v}"),
            BoundKind::ExclStartBound => format!("({v}"),
            BoundKind::InclEndBound => format!("{v}]"),
            BoundKind::ExclEndBound => format!("{v})"),
            BoundKind::ExclEndInclStartBoundary => format!("{v})[{v}"),
            BoundKind::InclEndExclStartBoundary => format!("{v}]({v}"),
            _ => format!("({v})"),
        }
    }

    fn column_name(&self, is_static: bool, col: usize) -> String {
        self.schema
            .column(is_static, col)
            .map_or_else(|| format!("#{col}"), |c| c.name().to_string())
    }

    fn column_type(&self, is_static: bool, col: usize) -> Option<&CqlType> {
        self.schema.column(is_static, col).map(|c| c.ty())
    }

    fn path_text(&self, is_static: bool, col: usize, path: &[u8]) -> String {
        let mut s = String::new();
        match self
            .column_type(is_static, col)
            .and_then(CqlType::path_type)
        {
            Some(t) => render(&t, path, Form::Cql, &mut s),
            None => s = format!("0x{}", crate::output::hex(path)),
        }
        s
    }

    fn value_text(&self, item: &Item, v: &[u8]) -> String {
        let (is_static, col, path) = match item {
            Item::Cell {
                column,
                is_static,
                path,
            } => (*is_static, *column, path.as_deref()),
            _ => return String::new(),
        };
        let Some(ty) = self.column_type(is_static, col) else {
            return format!("0x{}", crate::output::hex(v));
        };
        let vt = match path {
            None => Some(ty.clone()),
            Some(p) => match ty.cell_value_type() {
                Some(t) => Some(t),
                // A UDT field: the path is the field index (a short).
                None => p
                    .try_into()
                    .ok()
                    .map(i16::from_be_bytes)
                    .and_then(|i| ty.udt_field(i as usize))
                    .map(|(_, t)| t.clone()),
            },
        };
        let mut s = String::new();
        match vt {
            Some(t) if !t.is_counter() => render(&t, v, Form::Cql, &mut s),
            _ => s = format!("0x{}", crate::output::hex(v)),
        }
        s
    }

    /// Whether a record at `c` is inside the slice (the static row and the
    /// partition always are).
    fn in_slice(&self, c: Option<&OwnedClustering>) -> (bool, bool) {
        let (Some(slices), Some(c)) = (&self.filter.slices, c) else {
            return (true, false);
        };
        if c.kind == BoundKind::StaticClustering {
            return (true, false);
        }
        let p = c.as_prefix();
        let after_start = |s: &Slice| {
            s.start_prefix()
                .is_none_or(|b| self.cmp.compare(&p, &b).is_gt())
        };
        let before_end = |s: &Slice| {
            s.end_prefix()
                .is_none_or(|e| self.cmp.compare(&p, &e).is_lt())
        };
        let inside = slices.iter().any(|s| after_start(s) && before_end(s));
        (inside, slices.last().is_some_and(|s| !before_end(s)))
    }

    fn record(&mut self, e: &Explained) -> io::Result<()> {
        if let Item::Partition { key } = &e.item {
            self.wanted = self.filter.wants.as_ref().is_none_or(|f| f(key));
            self.key = {
                let mut s = String::new();
                render(
                    &self.schema.header.partition_key_type,
                    key,
                    Form::Str,
                    &mut s,
                );
                s
            };
            self.rows = 0;
            self.done = !self.wanted;
        }
        if !self.wanted || self.done {
            return Ok(());
        }
        let (inside, past) = self.in_slice(e.clustering.as_ref());
        if past {
            self.done = true;
            return Ok(());
        }
        if !inside {
            return Ok(());
        }
        if let (
            Some(cols),
            Item::Cell {
                column, is_static, ..
            }
            | Item::ComplexDeletion { column, is_static },
        ) = (&self.filter.columns, &e.item)
        {
            if !cols.contains(&self.column_name(*is_static, *column)) {
                return Ok(());
            }
        }
        if self.ndjson {
            let v = self.json(e);
            serde_json::to_writer(&mut *self.w, &v)?;
            self.w.write_all(b"\n")?;
        } else {
            let line = self.text(e);
            writeln!(self.w, "{line}")?;
        }
        let is_row = matches!(&e.item, Item::Row { .. })
            && e.absent.is_none()
            && e.clustering
                .as_ref()
                .is_some_and(|c| c.kind != BoundKind::StaticClustering);
        if is_row {
            self.rows += 1;
            if self.filter.row_limit.is_some_and(|l| self.rows >= l) {
                self.done = true;
            }
        }
        Ok(())
    }

    // ------------------------------------------------------------ NDJSON

    fn version_json(&self, item: &Item, v: &Version) -> Json {
        json!({
            "sstable": self.label(v.source),
            "timestamp": v.timestamp,
            "kind": kind_name(v.kind),
            "local_deletion_time": v.local_deletion_time,
            "ttl": v.ttl,
            "value": v.value.as_deref().map(|b| self.value_text(item, b)),
        })
    }

    fn deleter_json(&self, d: &Deleter) -> Json {
        let types = &self.schema.header.clustering_types;
        json!({
            "reason": deletion_kind_name(d.kind),
            "sstable": self.label(d.source),
            "timestamp": d.time.marked_for_delete_at,
            "local_deletion_time": d.time.local_deletion_time,
            "bound": d.bound.as_ref().map(|b| clustering_json(&b.as_prefix(), types)),
        })
    }

    fn cause_json(&self, c: &Cause) -> Json {
        match c {
            Cause::Newer { source, timestamp } => json!({
                "reason": "newer-timestamp", "sstable": self.label(*source), "timestamp": timestamp,
            }),
            Cause::TieBreak { source, rule } => json!({
                "reason": "tie-break", "sstable": self.label(*source), "rule": rule,
            }),
            Cause::CounterMerged => json!({"reason": "counter-merged"}),
            Cause::Deleted(d) => self.deleter_json(d),
            Cause::Expired { at } => json!({"reason": "expired", "at": at}),
            Cause::CellTombstone => json!({"reason": "cell-tombstone"}),
            Cause::Undone { source, timestamp } => json!({
                "reason": "undone-by-row-marker", "sstable": self.label(*source), "timestamp": timestamp,
            }),
            Cause::NoLiveData => json!({"reason": "no-live-data"}),
        }
    }

    fn shadowed_json(&self, item: &Item, s: &Shadowed) -> Json {
        let mut v = self.version_json(item, &s.version);
        v["cause"] = self.cause_json(&s.cause);
        v
    }

    fn json(&self, e: &Explained) -> Json {
        let types = &self.schema.header.clustering_types;
        let (item, column, path) = match &e.item {
            Item::Partition { .. } => ("partition", None, None),
            Item::Row { .. } => ("row", None, None),
            Item::RowMarker => ("row-marker", None, None),
            Item::RowDeletion => ("row-deletion", None, None),
            Item::Cell {
                column,
                is_static,
                path,
            } => (
                "cell",
                Some(self.column_name(*is_static, *column)),
                path.as_deref()
                    .map(|p| self.path_text(*is_static, *column, p)),
            ),
            Item::ComplexDeletion { column, is_static } => (
                "complex-deletion",
                Some(self.column_name(*is_static, *column)),
                None,
            ),
            Item::RangeTombstone { .. } => ("range-tombstone", None, None),
        };
        let mut v = json!({
            "partition": self.key,
            "clustering": e.clustering.as_ref().map(|c| clustering_json(&c.as_prefix(), types)),
            "item": item,
            "column": column,
            "path": path,
            "result": if e.absent.is_some() { "absent" } else { "present" },
            "winner": e.winner.as_ref().map(|w| self.version_json(&e.item, w)),
            "absent": e.absent.as_ref().map(|c| self.cause_json(c)),
            "shadowed": e.shadowed.iter().map(|s| self.shadowed_json(&e.item, s)).collect::<Vec<_>>(),
        });
        match &e.item {
            Item::Row { sources } => {
                v["sources"] = sources
                    .iter()
                    .map(|(s, t)| json!({"sstable": self.label(*s), "timestamp": t}))
                    .collect();
            }
            Item::RangeTombstone { open, closes } => {
                v["open"] = open.as_ref().map_or(Json::Null, |d| self.deleter_json(d));
                v["closes"] = closes
                    .iter()
                    .map(|c| self.version_json(&e.item, c))
                    .collect();
            }
            _ => {}
        }
        v
    }

    // -------------------------------------------------------------- text

    fn deleter_text(&self, d: &Deleter) -> String {
        let at = d.time.marked_for_delete_at;
        let src = self.short(d.source);
        match d.kind {
            DeletionKind::Partition => format!("partition deletion @{at} in {src}"),
            DeletionKind::Row => format!("row deletion @{at} in {src}"),
            DeletionKind::Complex => format!("collection deletion @{at} in {src}"),
            DeletionKind::Range => match &d.bound {
                Some(b) if b.values.is_empty() => {
                    format!("range tombstone from the partition start @{at} in {src}")
                }
                Some(b) => format!(
                    "range tombstone {} .. @{at} in {src}",
                    self.clustering_text(b)
                ),
                None => format!("range tombstone @{at} in {src}"),
            },
        }
    }

    fn cause_text(&self, c: &Cause) -> String {
        match c {
            Cause::Newer { source, timestamp } => {
                format!("older than @{timestamp} in {}", self.short(*source))
            }
            Cause::TieBreak { source, rule } => {
                format!("same timestamp, {rule}: {} wins", self.short(*source))
            }
            Cause::CounterMerged => "counter shards merged".into(),
            Cause::Deleted(d) => format!("deleted by {}", self.deleter_text(d)),
            Cause::Expired { at } => {
                format!("expired at {}", crate::render::format_seconds_instant(*at))
            }
            Cause::CellTombstone => "the winner is a tombstone".into(),
            Cause::Undone { source, timestamp } => format!(
                "undone by a newer row marker @{timestamp} in {}",
                self.short(*source)
            ),
            Cause::NoLiveData => "no live marker or cell".into(),
        }
    }

    fn version_text(&self, item: &Item, v: &Version) -> String {
        let what = match (v.kind, &v.value) {
            (Kind::Tombstone, _) => "tombstone ".to_string(),
            (Kind::Deletion, _) | (Kind::Marker, _) => String::new(),
            (Kind::Expiring, Some(b)) => format!(
                "{} (ttl {}) ",
                self.value_text(item, b),
                v.ttl.unwrap_or_default()
            ),
            (Kind::Expiring, None) => format!("ttl {} ", v.ttl.unwrap_or_default()),
            (_, Some(b)) => format!("{} ", self.value_text(item, b)),
            (_, None) => String::new(),
        };
        format!("{what}@{} in {}", v.timestamp, self.short(v.source))
    }

    fn shadowed_text(&self, item: &Item, shadowed: &[Shadowed]) -> String {
        if shadowed.is_empty() {
            return String::new();
        }
        let parts: Vec<String> = shadowed
            .iter()
            .map(|s| {
                format!(
                    "{} ({})",
                    self.version_text(item, &s.version),
                    self.cause_text(&s.cause)
                )
            })
            .collect();
        format!("; shadows {}", parts.join(", "))
    }

    fn text(&self, e: &Explained) -> String {
        let at = e
            .clustering
            .as_ref()
            .map(|c| self.clustering_text(c))
            .unwrap_or_default();
        let sh = self.shadowed_text(&e.item, &e.shadowed);
        let win = |e: &Explained| {
            e.winner
                .as_ref()
                .map(|w| self.version_text(&e.item, w))
                .unwrap_or_default()
        };
        let outcome = |e: &Explained| match &e.absent {
            None => win(e),
            Some(Cause::CellTombstone) => format!("absent: {}", win(e)),
            Some(c) => format!("absent: {} ({})", self.cause_text(c), win(e)),
        };
        match &e.item {
            Item::Partition { .. } => match &e.winner {
                Some(_) => format!("partition '{}': deletion {}{sh}", self.key, win(e)),
                None => format!("partition '{}': no partition deletion", self.key),
            },
            Item::Row { sources } => {
                let list: Vec<String> = sources
                    .iter()
                    .map(|(s, t)| format!("{} (@{t})", self.short(*s)))
                    .collect();
                let what = if at == "static" {
                    "static row".to_string()
                } else {
                    format!("row {at}")
                };
                match &e.absent {
                    None => format!("{what} present: versions in {}", list.join(", ")),
                    Some(Cause::Deleted(d)) => format!(
                        "{what} absent: deleted by {}; its versions in {} are older",
                        self.deleter_text(d),
                        list.join(", ")
                    ),
                    Some(c) => format!(
                        "{what} absent: {}; versions in {}",
                        self.cause_text(c),
                        list.join(", ")
                    ),
                }
            }
            Item::RowMarker => format!("  {at} row marker {}{sh}", outcome(e)),
            Item::RowDeletion => format!("  {at} row deletion {}{sh}", outcome(e)),
            Item::Cell {
                column,
                is_static,
                path,
            } => {
                let name = self.column_name(*is_static, *column);
                let name = match path {
                    Some(p) => format!("{name}[{}]", self.path_text(*is_static, *column, p)),
                    None => name,
                };
                match &e.absent {
                    None => format!("  {at} {name} = {}{sh}", win(e)),
                    Some(_) => format!("  {at} {name} {}{sh}", outcome(e)),
                }
            }
            Item::ComplexDeletion { column, is_static } => format!(
                "  {at} {} collection deletion {}{sh}",
                self.column_name(*is_static, *column),
                outcome(e)
            ),
            Item::RangeTombstone { open, closes } => {
                let mut s = format!("range tombstone bound {at}:");
                // What stays open after a bound that closes ranges is a second clause.
                let sep = if closes.is_empty() { "" } else { ";" };
                if !closes.is_empty() {
                    let c: Vec<String> = closes
                        .iter()
                        .map(|v| self.version_text(&e.item, v))
                        .collect();
                    s.push_str(&format!(" ends {}", c.join(", ")));
                }
                match (open, &e.winner) {
                    (Some(_), Some(w)) => {
                        s.push_str(&format!(" opens {}", self.version_text(&e.item, w)))
                    }
                    (Some(d), None) => {
                        s.push_str(&format!("{sep} {} still open", self.deleter_text(d)))
                    }
                    (None, _) => s.push_str(&format!("{sep} nothing open after it")),
                }
                s.push_str(&sh);
                s
            }
        }
    }
}

// ------------------------------------------------------------ commands

/// NDJSON for `--output json|ndjson`, text for `--output text`; other
/// outputs are refused (exit 2).
fn ndjson_of(f: crate::cli::DataOutputFormat) -> CmdResult<bool> {
    use crate::cli::DataOutputFormat as F;
    match f {
        F::Json | F::Ndjson => Ok(true),
        F::Text => Ok(false),
        other => Err(crate::CmdError::Usage(format!(
            "--explain writes text or ndjson, not {}",
            clap::ValueEnum::to_possible_value(&other)
                .map_or_else(|| format!("{other:?}"), |v| v.get_name().to_string())
        ))),
    }
}

/// A format error inside the merge is reported like the data commands do
/// (exit 3); the others end the command.
fn outcome_of(r: CmdResult<()>) -> CmdResult<crate::Outcome> {
    let mut outcome = crate::Outcome::default();
    match r {
        Ok(()) => {}
        Err(crate::CmdError::Format(e)) => {
            eprintln!("sstkit: {e}");
            outcome.unreadable += 1;
        }
        Err(e) => return Err(e),
    }
    Ok(outcome)
}

/// `dump-data --merge --explain`: every selected partition's records.
pub fn dump_data(
    a: &crate::plan::DumpPlan,
    inputs: &sstkit_format::engine::MergeInputs,
    t: &crate::sink::Table<'_>,
    sel: &sstkit_format::engine::Selection,
    out: &mut dyn Write,
) -> CmdResult<crate::Outcome> {
    let ndjson = ndjson_of(a.format)?;
    let filter = Filter {
        wants: Some(Box::new(|k: &[u8]| sel.wants(t, k))),
        ..Default::default()
    };
    let shared = Shared::new(out, ndjson, &inputs.labels, &inputs.schema, filter);
    let limit = a.limit;
    let r = (|| -> CmdResult<()> {
        let mut emitted = 0u64;
        let mut one = |merger: &mut Merger<'_>| -> CmdResult<bool> {
            let Some(start) = merger.next_partition()? else {
                return Ok(false);
            };
            shared.drain_partition(merger)?;
            if sel.wants(t, &start.key) {
                emitted += 1;
            }
            Ok(emitted < limit)
        };
        if limit == 0 {
            return Ok(());
        }
        if let Some(keys) = sel.keys() {
            let mut idx = inputs.indexes()?;
            let all = Slice::all();
            for key in keys {
                let (sources, _) = inputs.partition_sources(&mut idx, key, &all)?;
                if sources.is_empty() {
                    continue;
                }
                let mut merger = inputs.merger(sources);
                shared.attach(&mut merger, t.now_secs);
                if !one(&mut merger)? {
                    break;
                }
            }
            return Ok(());
        }
        let mut merger = inputs.merger(inputs.scan_sources()?);
        shared.attach(&mut merger, t.now_secs);
        while one(&mut merger)? {}
        Ok(())
    })();
    shared.check()?;
    shared.flush().map_err(crate::CmdError::Output)?;
    outcome_of(r)
}

/// `read --merge --explain`: the records of each key's partition, within
/// the slice, `--columns` and `--limit` rows.
#[allow(clippy::too_many_arguments)]
pub fn read(
    a: &crate::plan::LookupPlan,
    inputs: &sstkit_format::engine::MergeInputs,
    keys: &[Vec<u8>],
    slices: &[Slice],
    columns: Option<HashSet<String>>,
    now_secs: i64,
    out: &mut dyn Write,
) -> CmdResult<crate::Outcome> {
    let ndjson = ndjson_of(a.output)?;
    let slice = sstkit_format::read::hull(slices);
    let filter = Filter {
        wants: None,
        slices: Some(slices.to_vec()),
        columns,
        row_limit: a.limit,
    };
    let shared = Shared::new(out, ndjson, &inputs.labels, &inputs.schema, filter);
    let r = (|| -> CmdResult<()> {
        let mut idx = inputs.indexes()?;
        for key in keys {
            let (sources, _) = inputs.partition_sources(&mut idx, key, &slice)?;
            if sources.is_empty() {
                continue;
            }
            let mut merger = inputs.merger(sources);
            shared.attach(&mut merger, now_secs);
            if merger.next_partition()?.is_some() {
                shared.drain_partition(&mut merger)?;
            }
        }
        Ok(())
    })();
    shared.check()?;
    shared.flush().map_err(crate::CmdError::Output)?;
    outcome_of(r)
}
