//! The engine sink of export: the live CQL rows of each partition (and
//! with `--tombstones` its deletions) collected into the outputs.

use std::io;

use arrow_schema::SchemaRef;
use sstkit_format::clustering::ClusteringPrefix;
use sstkit_format::cur::Cur;
use sstkit_format::data::live::{live_row, stronger, LiveColumn};
use sstkit_format::data::{ColumnData, RangeTombstoneMarker, Row};
use sstkit_format::deletion::DeletionTime;
use sstkit_format::statistics::SerializationHeader;
use sstkit_format::token::Token;
use sstkit_format::value::decode_counter;
use sstkit_format::Component;

use super::columns::Plan;
use super::part::Part;
use crate::arrow::Decimals;
use crate::render::{render, Form};
use crate::sink::cql::{key_components, live_value};
use crate::sink::{Sink, Table};
use crate::CmdError;

/// For one header (by address): the output slot of each static and each
/// regular column, by its index in data order.
pub(super) type Slots = (usize, Vec<Option<usize>>, Vec<Option<usize>>);

/// A clustering prefix as CQL text: its components as cqlsh prints them,
/// separated by `, ` (empty for an unbounded bound).
pub(super) fn clustering_text(t: &Table<'_>, c: &ClusteringPrefix<'_>) -> String {
    let mut s = String::new();
    for (i, v) in c.values.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        match (v, t.header.clustering_types.get(i)) {
            (Some(b), Some(ty)) => render(ty.unreversed(), b, Form::Cqlsh, &mut s),
            _ => s.push_str("null"),
        }
    }
    s
}

/// The sink that collects live rows into the outputs.
pub(super) struct ExportSink<'a> {
    pub(super) plan: Plan,
    pub(super) schema: SchemaRef,
    pub(super) decimals: Decimals,
    pub(super) parts: Vec<Part<'a>>,
    /// `--partition-by token-range:N`: N (outputs by Murmur3 token range).
    pub(super) ranges: Option<u64>,
    /// The output of the current partition.
    pub(super) cur: usize,
    pub(super) now: i64,
    /// Values of the current partition key components.
    pub(super) key: Vec<Vec<u8>>,
    pub(super) partition_deletion: DeletionTime,
    pub(super) open_range: DeletionTime,
    pub(super) statics: Vec<Option<Vec<u8>>>,
    pub(super) regulars: Vec<Option<Vec<u8>>>,
    /// Write time and remaining TTL of each static, then regular, slot.
    pub(super) times: Vec<Option<(i64, Option<i32>)>>,
    pub(super) rows_in_partition: u64,
    /// Per header (by address) the slot of each static / regular column in data order.
    pub(super) slots: Option<Slots>,
    pub(super) scratch: Vec<u8>,
    /// A failure while writing a batch (the Sink methods return io errors).
    pub(super) error: Option<CmdError>,
    /// Rows written.
    pub(super) rows: u64,
    /// `--tombstones`: the stream's columns, schema and output.
    pub(super) tombs: Option<(Plan, SchemaRef, Part<'a>)>,
    /// The open range tombstone's start bound (CQL text, inclusive).
    pub(super) open_bound: Option<(String, bool)>,
    /// Rows per batch handed to a writer.
    pub(super) batch_rows: usize,
}

/// One record of the `--tombstones` stream.
pub(super) struct Tomb<'t> {
    pub(super) kind: &'t str,
    pub(super) start: Option<(&'t str, bool)>,
    pub(super) end: Option<(&'t str, bool)>,
    pub(super) column: Option<&'t str>,
    pub(super) deletion: DeletionTime,
}

/// The output (of `n`) holding token `t`: `n` equal slices of the Murmur3
/// ring, the first starting after `i64::MIN`.
pub fn range_of(t: i64, n: u64) -> usize {
    // Range i is (MIN + floor(i * 2^64 / n), MIN + floor((i + 1) * 2^64 / n)]:
    // the largest i with i < off * n / 2^64.
    let off = (i128::from(t) - i128::from(i64::MIN)) as u128;
    let up = (off * u128::from(n) + (1u128 << 64) - 1) >> 64;
    up.saturating_sub(1) as usize
}

/// `(START,END]` of output `i` of `n` (Murmur3 tokens).
pub fn range_bounds(i: u64, n: u64) -> (i64, i64) {
    let at = |k: u64| -> i64 {
        if k >= n {
            return i64::MAX;
        }
        let off = ((u128::from(k) << 64) / u128::from(n)) as i128;
        (i128::from(i64::MIN) + off) as i64
    };
    (at(i), at(i + 1))
}

/// What an [`ExportSink`] is made of besides its outputs: the columns,
/// their Arrow schema, the decimals rule and `--now`.
pub(super) struct SinkSetup<'s> {
    pub(super) plan: &'s Plan,
    pub(super) schema: &'s SchemaRef,
    pub(super) decimals: Decimals,
    pub(super) now: i64,
}

impl<'a> ExportSink<'a> {
    /// A sink writing to `parts` (`ranges` of them by token with
    /// `--partition-by`) and `tombs`, in batches of `batch_rows` rows.
    pub(super) fn new(
        setup: SinkSetup<'_>,
        parts: Vec<Part<'a>>,
        ranges: Option<u64>,
        tombs: Option<(Plan, SchemaRef, Part<'a>)>,
        batch_rows: usize,
    ) -> ExportSink<'a> {
        ExportSink {
            plan: setup.plan.clone(),
            schema: setup.schema.clone(),
            decimals: setup.decimals,
            parts,
            ranges,
            cur: 0,
            now: setup.now,
            key: Vec::new(),
            partition_deletion: DeletionTime::LIVE,
            open_range: DeletionTime::LIVE,
            statics: Vec::new(),
            regulars: Vec::new(),
            times: Vec::new(),
            rows_in_partition: 0,
            slots: None,
            scratch: Vec::new(),
            error: None,
            rows: 0,
            tombs,
            open_bound: None,
            batch_rows: batch_rows.max(1),
        }
    }
}

impl ExportSink<'_> {
    /// Add a record to the `--tombstones` stream.
    pub(super) fn tomb(&mut self, t: Tomb<'_>) -> io::Result<()> {
        let Some((plan, schema, part)) = &mut self.tombs else {
            return Ok(());
        };
        let mut c = part.cols.iter_mut();
        let mut put = |v: Option<&[u8]>| {
            if let Some(b) = c.next() {
                b.push(v);
            }
        };
        put(Some(t.kind.as_bytes()));
        for k in &self.key {
            put(Some(k));
        }
        for b in [t.start, t.end] {
            put(b.map(|b| b.0.as_bytes()));
            put(b.map(|b| if b.1 { &[1u8][..] } else { &[0u8][..] }));
        }
        put(t.column.map(str::as_bytes));
        put(Some(&t.deletion.marked_for_delete_at.to_be_bytes()));
        put(Some(
            &(t.deletion.local_deletion_time.saturating_mul(1000)).to_be_bytes(),
        ));
        part.rows += 1;
        if part.rows >= self.batch_rows {
            if let Err(e) = part.flush_rows(plan, schema, self.decimals) {
                let msg = e.to_string();
                self.error = Some(e);
                return Err(io::Error::other(msg));
            }
        }
        Ok(())
    }

    /// The deletions inside `row` (its own, its collections', its tombstone cells).
    pub(super) fn row_tombstones(
        &mut self,
        t: &Table<'_>,
        row: &Row<'_>,
        is_static: bool,
    ) -> io::Result<()> {
        if self.tombs.is_none() {
            return Ok(());
        }
        let ck = if is_static {
            None
        } else {
            Some(clustering_text(t, &row.clustering))
        };
        let at = ck.as_deref().map(|c| (c, true));
        if let Some(d) = row.deletion {
            self.tomb(Tomb {
                kind: "row",
                start: at,
                end: at,
                column: None,
                deletion: d.time,
            })?;
        }
        for cd in &row.cells {
            let (column, complex, cells) = match cd {
                ColumnData::Simple { column, cell } => (column, None, std::slice::from_ref(cell)),
                ColumnData::Complex {
                    column,
                    complex_deletion,
                    cells,
                } => (column, *complex_deletion, &cells[..]),
            };
            let name = column.def.name.as_str();
            if let Some(d) = complex {
                self.tomb(Tomb {
                    kind: "collection",
                    start: at,
                    end: at,
                    column: Some(name),
                    deletion: d,
                })?;
            }
            for c in cells.iter().filter(|c| c.is_deleted()) {
                self.tomb(Tomb {
                    kind: "cell",
                    start: at,
                    end: at,
                    column: Some(name),
                    deletion: DeletionTime {
                        marked_for_delete_at: c.timestamp,
                        local_deletion_time: c.local_deletion_time.unwrap_or(i64::MAX),
                    },
                })?;
            }
        }
        Ok(())
    }

    /// Forget the regular values (and their times) of the last row.
    pub(super) fn clear_regulars(&mut self) {
        for v in &mut self.regulars {
            *v = None;
        }
        let ns = self.plan.statics.len();
        for t in self.times.iter_mut().skip(ns) {
            *t = None;
        }
    }

    pub(super) fn slots_for(&mut self, h: &SerializationHeader) {
        let id = h as *const SerializationHeader as usize;
        if self.slots.as_ref().is_some_and(|s| s.0 == id) {
            return;
        }
        let slot = |names: &[String], defs: &[sstkit_format::statistics::ColumnDef]| {
            SerializationHeader::data_order(defs)
                .iter()
                .map(|c| names.iter().position(|n| *n == c.name))
                .collect::<Vec<_>>()
        };
        let s = slot(&self.plan.statics, &h.static_columns);
        let r = slot(&self.plan.regulars, &h.regular_columns);
        self.slots = Some((id, s, r));
    }

    /// Collect the live values of `row`; false when nothing of it is live.
    pub(super) fn live_values(
        &mut self,
        row: &Row<'_>,
        covering: DeletionTime,
        is_static: bool,
    ) -> bool {
        let Some(live) = live_row(row, covering, self.now) else {
            return false;
        };
        let Some((_, sslot, rslot)) = &self.slots else {
            return false;
        };
        let (slot_of, out, base) = if is_static {
            (sslot, &mut self.statics, 0)
        } else {
            (rslot, &mut self.regulars, self.plan.statics.len())
        };
        for data in &live.columns {
            let col = data.column();
            let Some(&Some(slot)) = slot_of.get(col.index) else {
                continue;
            };
            if col.counter {
                if let LiveColumn::Simple { cell, .. } = data {
                    let mut cur = Cur::new(cell.value, Component::Data, 0);
                    if let Ok(c) = decode_counter(&mut cur) {
                        out[slot] = Some(c.total.to_be_bytes().to_vec());
                    }
                }
                continue;
            }
            let b = live_value(&mut self.scratch, col.def.ty.unreversed(), data);
            out[slot] = Some(b.to_vec());
            if let LiveColumn::Simple { cell, .. } = data {
                // ttl() is what remains at `now` (`localDeletionTime - nowInSec`).
                let ttl = cell
                    .is_expiring()
                    .then(|| cell.local_deletion_time.map(|l| (l - self.now) as i32))
                    .flatten();
                if let Some(t) = self.times.get_mut(base + slot) {
                    *t = Some((cell.timestamp, ttl));
                }
            }
        }
        true
    }

    pub(super) fn emit(
        &mut self,
        t: &Table<'_>,
        clustering: Option<&ClusteringPrefix<'_>>,
    ) -> io::Result<()> {
        let part = &mut self.parts[self.cur];
        let mut c = part.cols.iter_mut();
        for k in &self.key {
            if let Some(b) = c.next() {
                b.push(Some(k));
            }
        }
        for i in 0..self.plan.n_ck {
            let v = clustering.and_then(|c| c.values.get(i).copied().flatten());
            if let Some(b) = c.next() {
                b.push(v);
            }
        }
        let _ = t;
        for v in self.statics.iter().chain(&self.regulars) {
            if let Some(b) = c.next() {
                b.push(v.as_deref());
            }
        }
        for &slot in &self.plan.meta {
            let t = self.times.get(slot).copied().flatten();
            if let Some(b) = c.next() {
                b.push(t.map(|t| t.0.to_be_bytes()).as_ref().map(|b| &b[..]));
            }
            if let Some(b) = c.next() {
                b.push(
                    t.and_then(|t| t.1)
                        .map(i32::to_be_bytes)
                        .as_ref()
                        .map(|b| &b[..]),
                );
            }
        }
        part.rows += 1;
        self.rows += 1;
        self.rows_in_partition += 1;
        if part.rows >= self.batch_rows {
            if let Err(e) = part.flush_rows(&self.plan, &self.schema, self.decimals) {
                let msg = e.to_string();
                self.error = Some(e);
                return Err(io::Error::other(msg));
            }
        }
        Ok(())
    }
}

impl Sink for ExportSink<'_> {
    fn partition_start(
        &mut self,
        t: &Table<'_>,
        key: &[u8],
        deletion: &DeletionTime,
        _header_end: u64,
    ) -> io::Result<()> {
        self.slots_for(t.header);
        self.key = match key_components(&t.header.partition_key_type, key) {
            Some(c) => c.into_iter().map(<[u8]>::to_vec).collect(),
            None => {
                return Err(io::Error::other(format!(
                    "partition key 0x{} does not frame as its type",
                    crate::output::hex(key)
                )))
            }
        };
        if let Some(n) = self.ranges {
            self.cur = match t.partitioner.token(key) {
                Token::Murmur3(tok) => range_of(tok, n),
                _ => 0,
            };
        }
        self.partition_deletion = *deletion;
        self.open_range = DeletionTime::LIVE;
        self.open_bound = None;
        if !deletion.is_live() {
            self.tomb(Tomb {
                kind: "partition",
                start: None,
                end: None,
                column: None,
                deletion: *deletion,
            })?;
        }
        self.statics.clear();
        self.statics.resize(self.plan.statics.len(), None);
        self.regulars.clear();
        self.regulars.resize(self.plan.regulars.len(), None);
        self.times.clear();
        self.times
            .resize(self.plan.statics.len() + self.plan.regulars.len(), None);
        self.rows_in_partition = 0;
        Ok(())
    }

    fn static_row(&mut self, t: &Table<'_>, row: &Row<'_>, _position: u64) -> io::Result<()> {
        self.row_tombstones(t, row, true)?;
        // Range tombstones never cover the static row.
        self.live_values(row, self.partition_deletion, true);
        Ok(())
    }

    fn row(&mut self, t: &Table<'_>, row: &Row<'_>) -> io::Result<()> {
        self.row_tombstones(t, row, false)?;
        let covering = stronger(self.partition_deletion, self.open_range);
        self.clear_regulars();
        if self.live_values(row, covering, false) {
            self.emit(t, Some(&row.clustering))?;
        }
        Ok(())
    }

    fn marker(&mut self, t: &Table<'_>, m: &RangeTombstoneMarker<'_>) -> io::Result<()> {
        use sstkit_format::clustering::BoundKind as K;
        let bound = if self.tombs.is_some() {
            clustering_text(t, &m.bound)
        } else {
            String::new()
        };
        if let Some(d) = m.close_deletion() {
            self.open_range = DeletionTime::LIVE;
            let incl = matches!(m.kind(), K::InclEndBound | K::InclEndExclStartBoundary);
            if let Some((start, start_incl)) = self.open_bound.take() {
                self.tomb(Tomb {
                    kind: "range",
                    start: Some((&start, start_incl)),
                    end: Some((&bound, incl)),
                    column: None,
                    deletion: d,
                })?;
            }
        }
        if let Some(d) = m.open_deletion() {
            self.open_range = d;
            let incl = matches!(m.kind(), K::InclStartBound | K::ExclEndInclStartBoundary);
            self.open_bound = Some((bound, incl));
        }
        Ok(())
    }

    fn partition_end(&mut self, t: &Table<'_>) -> io::Result<()> {
        // Static content alone is a row when the partition has no live row (as cql.rs).
        if self.rows_in_partition == 0
            && self.plan.n_ck > 0
            && self.statics.iter().any(Option::is_some)
        {
            self.clear_regulars();
            self.emit(t, None)?;
        }
        Ok(())
    }

    fn abort_partition(&mut self, _t: &Table<'_>) -> io::Result<()> {
        Ok(())
    }

    fn last_partition_written(&self) -> bool {
        self.rows_in_partition > 0
    }
}
