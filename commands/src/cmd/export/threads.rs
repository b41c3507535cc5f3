//! Export on several threads: one sstable's Data.db is cut into units of
//! whole partitions ([`crate::sink::pieces::tasks`]), a merged scan into token
//! ranges common to its sstables ([`MergeInputs::ranges`]); each thread
//! collects the rows (and tombstones) of a unit with an [`ExportSink`] of
//! its own, and this thread appends them in unit order to the outputs,
//! whose batches are then cut, built and written as one thread does, so
//! the files are the same bytes.
//!
//! A unit whose read fails or stops elsewhere than where its index says
//! it ends is read again here, from its start to the end of the data, as
//! one scan: the damage is met where a single thread meets it. A partition
//! too large for a unit is read here too, where it streams.

use std::sync::Mutex;

use arrow_schema::SchemaRef;
use sstkit_format::data::DataPos;
use sstkit_format::engine::Unit;
use sstkit_format::engine::{self, parallel, MergeInputs, MergeRange, RangeRan, Selection, Shape};
use sstkit_format::Sstable;

use super::columns::Plan;
use super::part::{ColBuf, Part};
use super::sink::{ExportSink, SinkSetup};
use crate::arrow::Decimals;
use crate::plan::select;
use crate::plan::DumpPlan;
use crate::sink::pieces::{self, Task, ThreadIo};
use crate::sink::Table;
use crate::CmdResult;

/// What a thread's sink is made of: the output columns, and how many
/// outputs it routes rows to.
struct Blank {
    plan: Plan,
    schema: SchemaRef,
    decimals: Decimals,
    now: i64,
    ranges: Option<u64>,
    outputs: usize,
    tombs: Option<(Plan, SchemaRef)>,
    /// Column buffers of units already appended, emptied, for the next
    /// units: fresh ones grow by copying and fault in new pages, for every
    /// unit.
    spare: Mutex<Vec<Vec<ColBuf>>>,
}

impl Blank {
    fn of(sink: &ExportSink<'_>) -> Blank {
        Blank {
            plan: sink.plan.clone(),
            schema: sink.schema.clone(),
            decimals: sink.decimals,
            now: sink.now,
            ranges: sink.ranges,
            outputs: sink.parts.len(),
            tombs: sink.tombs.as_ref().map(|(p, s, _)| (p.clone(), s.clone())),
            spare: Mutex::default(),
        }
    }

    /// Empty buffers for the output columns: kept ones when there are.
    fn cols(&self) -> Vec<ColBuf> {
        let kept = self.spare.lock().unwrap_or_else(|e| e.into_inner()).pop();
        kept.unwrap_or_else(|| {
            self.schema
                .fields()
                .iter()
                .map(|_| ColBuf::default())
                .collect()
        })
    }

    /// Keep the outputs' buffers of `rows`, appended, for the next units
    /// (a tombstone file's are few and not kept).
    fn recycle(&self, rows: Rows) {
        /// Buffer sets kept at most: the units in flight.
        const KEEP: usize = 8;
        let mut spare = self.spare.lock().unwrap_or_else(|e| e.into_inner());
        for (mut cols, _) in rows.parts {
            if spare.len() < KEEP {
                cols.iter_mut().for_each(ColBuf::clear);
                spare.push(cols);
            }
        }
    }

    /// A sink that holds every row it collects (it never writes a batch).
    fn sink(&self) -> ExportSink<'static> {
        let setup = SinkSetup {
            plan: &self.plan,
            schema: &self.schema,
            decimals: self.decimals,
            now: self.now,
        };
        let parts = (0..self.outputs).map(|_| Part::held(self.cols()));
        let tombs = (self.tombs.as_ref()).map(|(p, s)| {
            let cols = s.fields().iter().map(|_| ColBuf::default()).collect();
            (p.clone(), s.clone(), Part::held(cols))
        });
        ExportSink::new(setup, parts.collect(), self.ranges, tombs, usize::MAX)
    }
}

/// The rows a thread's sink collected, per output, and its tombstones.
struct Rows {
    parts: Vec<Held>,
    tombs: Option<Held>,
    total: u64,
}

/// One output's collected rows: each column's values, and how many rows.
type Held = (Vec<ColBuf>, usize);

impl Rows {
    /// What `sink` (a [`Blank::sink`]) collected.
    fn of(mut sink: ExportSink<'_>) -> Rows {
        Rows {
            parts: sink.parts.iter_mut().map(Part::take_rows).collect(),
            tombs: sink.tombs.as_mut().map(|(_, _, p)| p.take_rows()),
            total: sink.rows,
        }
    }

    /// Append the rows to the outputs of `to`, in order.
    fn append_to(&self, to: &mut ExportSink<'_>) -> CmdResult<()> {
        let batch = to.batch_rows;
        for (out, held) in to.parts.iter_mut().zip(&self.parts) {
            out.append(held, &to.plan, &to.schema, to.decimals, batch)?;
        }
        if let (Some((plan, schema, out)), Some(held)) = (&mut to.tombs, &self.tombs) {
            out.append(held, plan, schema, to.decimals, batch)?;
        }
        to.rows += self.total;
        Ok(())
    }
}

/// What a thread made of a unit or range.
enum Done<R> {
    /// The rows it collected, and what the read found.
    Held(Rows, R),
    /// Read it on this thread (from its start to the end of the data when
    /// the thread's read failed or found the index wrong).
    Here,
}

/// Read the partitions `sel` selects from `sst` into `sink` on the plan's
/// threads. `Ok(None)` when the read is not cut (one thread, key lookups,
/// pre-3.0 cells, or too small to cut): the caller reads it as one.
pub(super) fn sstable(
    a: &DumpPlan,
    sst: &Sstable,
    t: &Table<'_>,
    sel: &Selection,
    sink: &mut ExportSink<'_>,
) -> CmdResult<Option<()>> {
    let shape = Shape::default();
    if !pieces::worth_cutting(a, sel, &shape) || sst.features().legacy_cells {
        return Ok(None);
    }
    // A partition too large for a unit is read here, where it streams.
    let Some(mut tasks) = pieces::tasks(sst, t, false) else {
        return Ok(None);
    };
    pieces::within(&mut tasks, sel.scan_start(sst, t), sel.scan_end(sst, t));
    let total = tasks.last().map_or(0, Task::end);
    let blank = Blank::of(sink);
    let reopen = sst.reopener();
    // A thread that cannot open the sstable leaves its units to this one,
    // which reports what fails in order.
    let init = || -> Option<(Sstable, engine::Bound)> {
        let s = reopen.open().ok()?;
        let b = engine::bind(&s).ok()?;
        Some((s, b))
    };
    let work = |s: &mut Option<(Sstable, engine::Bound)>, i: usize| -> Done<DataPos> {
        let (Some((sst, bound)), Task::Unit(u)) = (s.as_ref(), &tasks[i]) else {
            return Done::Here;
        };
        let t = Table::new(&bound.header, bound.partitioner.clone(), a.now_secs);
        let mut held = blank.sink();
        match engine::run_unit(sst, &t, sel, &shape, u, &mut held) {
            Ok(ran) if ran.end == u.end && held.error.is_none() => {
                Done::Held(Rows::of(held), ran.end)
            }
            _ => Done::Here,
        }
    };
    let mut bar = crate::plan::run::bar(a);
    let mut result: CmdResult<()> = Ok(());
    let mut take = |i: usize, d: Done<DataPos>| -> bool {
        let task = &tasks[i];
        bar.set(task.end(), total);
        let r = match (d, task) {
            (Done::Held(held, _), _) => held.append_to(sink).map(|()| {
                blank.recycle(held);
                true
            }),
            // A large partition: read here, then on from where it stopped
            // when that is not where the next unit starts.
            (Done::Here, Task::Here(u)) => here(sst, t, sel, sink, u).and_then(|end| {
                if end == u.end {
                    return Ok(true);
                }
                here(sst, t, sel, sink, &rest_from(end)).map(|_| false)
            }),
            (Done::Here, Task::Unit(u) | Task::Part(u, _)) => {
                here(sst, t, sel, sink, &rest_from(u.start)).map(|_| false)
            }
        };
        match r {
            Ok(go) => go && sink.error.is_none(),
            Err(e) => {
                result = Err(e);
                false
            }
        }
    };
    let io = ThreadIo::new(1);
    let done = |s: Option<(Sstable, engine::Bound)>| io.add(s.iter().map(|(s, _)| s));
    parallel::ordered(tasks.len(), a.threads, &init, &work, &done, &mut take);
    io.settle(std::slice::from_ref(sst));
    result.map(Some)
}

/// Data.db from `start` to its end: a unit for the rest of a read.
fn rest_from(start: DataPos) -> Unit {
    Unit {
        start,
        end: DataPos(u64::MAX),
        large: false,
    }
}

/// Read `unit` on this thread into `sink`; where the read stopped.
fn here(
    sst: &Sstable,
    t: &Table<'_>,
    sel: &Selection,
    sink: &mut ExportSink<'_>,
    unit: &Unit,
) -> CmdResult<DataPos> {
    let ran = engine::run_unit(sst, t, sel, &Shape::default(), unit, sink)
        .map_err(|e| select::located(t, e))?;
    Ok(ran.end)
}

/// Read the merged partitions `sel` selects from `inputs` into `sink` on
/// the plan's threads. `Ok(None)` when the read is not cut (one thread,
/// key lookups, pre-3.0 cells, an sstable without an index, or too small
/// to cut): the caller reads it as one.
pub(super) fn merged(
    a: &DumpPlan,
    inputs: &MergeInputs,
    t: &Table<'_>,
    sel: &Selection,
    sink: &mut ExportSink<'_>,
) -> CmdResult<Option<()>> {
    let shape = Shape::default();
    if !pieces::worth_cutting(a, sel, &shape) {
        return Ok(None);
    }
    let Some(ranges) = inputs.ranges(sel, pieces::unit_bytes()) else {
        return Ok(None);
    };
    let blank = Blank::of(sink);
    let reopen: Vec<_> = inputs.ssts.iter().map(|s| s.reopener()).collect();
    // A thread that cannot open the sstables leaves the rest to this one,
    // which reports what fails in order.
    let init = || -> Option<MergeInputs> {
        MergeInputs::new(reopen.iter().map(|r| -> Result<_, engine::Error> {
            let s = r.open()?;
            let b = engine::bind(&s)?;
            Ok((s, b))
        }))
        .ok()
    };
    let work = |s: &mut Option<MergeInputs>, i: usize| -> Done<RangeRan> {
        let Some(own) = s.as_ref() else {
            return Done::Here;
        };
        let t = Table::new(&own.schema.header, own.partitioner.clone(), a.now_secs);
        let mut held = blank.sink();
        match own.dump_range(&t, sel, &shape, &ranges[i], &mut held) {
            Ok(r) if (r.whole || r.past_end) && held.error.is_none() => {
                Done::Held(Rows::of(held), r)
            }
            _ => Done::Here,
        }
    };
    let mut bar = crate::plan::run::bar(a);
    let mut result: CmdResult<()> = Ok(());
    let mut take = |i: usize, d: Done<RangeRan>| -> bool {
        let range: &MergeRange = &ranges[i];
        let (done, total) = range.progress;
        bar.set(done, total);
        let r = match d {
            Done::Held(held, ran) => held.append_to(sink).map(|()| {
                blank.recycle(held);
                !ran.past_end
            }),
            Done::Here => inputs
                .dump_range(t, sel, &shape, &range.to_the_end(), sink)
                .map(|_| false)
                .map_err(|e| select::located(t, e)),
        };
        match r {
            Ok(go) => go && sink.error.is_none(),
            Err(e) => {
                result = Err(e);
                false
            }
        }
    };
    let io = ThreadIo::new(inputs.ssts.len());
    let done = |s: Option<MergeInputs>| io.add(s.iter().flat_map(|s| &s.ssts));
    parallel::ordered(ranges.len(), a.threads, &init, &work, &done, &mut take);
    io.settle(&inputs.ssts);
    result.map(Some)
}
