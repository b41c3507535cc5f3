//! A dump of one sstable on several threads: its Data.db is cut into work
//! units ([`engine::units`]), each thread renders units into pieces of
//! output, and the pieces are written in order ([`engine::parallel`]), so
//! the output is the one a single thread writes, byte for byte.
//!
//! A piece is rendered by a renderer of its own that continues the
//! document ([`Renderer::resume`]): its first partition is rendered as a
//! later one. That holds for every piece but one whose units before it
//! wrote nothing (a filter dropped all their partitions); such a piece is
//! read again on this thread, into the document's renderer. A partition
//! too large for a unit is read on this thread too, where it streams.

pub mod lookups;
pub mod merged;

use std::cell::RefCell;
use std::io::{self, Write};
use std::rc::Rc;
use std::sync::Mutex;

use sstkit_format::data::DataPos;
use sstkit_format::data::{LazyRow, RangeTombstoneMarker, Row};
use sstkit_format::deletion::DeletionTime;
use sstkit_format::engine::{self, parallel, RowPart, Selection, Shape, Unit};
use sstkit_format::io::IoStats;
use sstkit_format::schema::TableSchema;
use sstkit_format::Sstable;

use crate::cli::DataOutputFormat;
use crate::output::JsonOut;
use crate::plan::select;
use crate::plan::DumpPlan;
use crate::sink::renderer::{framing, RenderOptions, Renderer};
use crate::sink::{Sink, Table};
use crate::{CmdError, CmdResult};

/// Uncompressed Data.db bytes per unit: large enough that cutting costs
/// little (a unit boundary inside a compressed chunk decompresses it
/// twice), small enough that the pieces held stay a few MiB (rendered
/// JSON can be ten times the bytes it comes from).
const UNIT_BYTES: u64 = 256 << 10;

/// The unit size: `SSTKIT_UNIT_BYTES` when set (the tests cut the small
/// fixtures into many units with it), else `UNIT_BYTES`.
pub fn unit_bytes() -> u64 {
    env_size("SSTKIT_UNIT_BYTES", UNIT_BYTES)
}

/// A positive number from the environment variable `name` (the tests cut
/// the small fixtures with them), else `default`.
pub(crate) fn env_size(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(default)
}

/// Buffers of pieces already written, kept for the next pieces: a fresh
/// buffer grows by copying itself and faults in new pages, which cost a
/// dump in pieces more than the rendering the second thread takes over.
pub(crate) struct Buffers<T = u8>(Mutex<Vec<Vec<T>>>);

impl<T> Default for Buffers<T> {
    fn default() -> Self {
        Buffers(Mutex::new(Vec::new()))
    }
}

impl<T> Buffers<T> {
    /// Buffers kept at most (those beyond are freed).
    const KEEP: usize = 8;

    pub(crate) fn get(&self) -> Vec<T> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop()
            .unwrap_or_default()
    }

    pub(crate) fn put(&self, mut b: Vec<T>) {
        b.clear();
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if kept.len() < Self::KEEP {
            kept.push(b);
        }
    }
}

/// What a parallel dump needs besides the renderer.
pub struct Job<'a> {
    /// The plan (shape, output format, `--now`).
    pub plan: &'a DumpPlan,
    /// The sstable's label (Data.db path), for the JSON framing.
    pub label: &'a str,
    /// The renderers' options.
    pub options: RenderOptions,
    /// The sstables of a merge, read as one (json framing: no sstable ref).
    pub merged: bool,
}

impl Job<'_> {
    /// How the job's pieces are rendered.
    fn style(&self) -> Style<'_> {
        Style {
            format: self.plan.format,
            label: self.label,
            options: self.options,
            merged: self.merged,
        }
    }
}

/// How the pieces of a document are rendered: its format, its framing and
/// the renderers' options.
#[derive(Clone, Copy)]
pub struct Style<'a> {
    /// The output format.
    pub format: DataOutputFormat,
    /// The sstable's label (Data.db path), for the JSON framing.
    pub label: &'a str,
    /// The renderers' options.
    pub options: RenderOptions,
    /// The sstables of a merge, read as one (json framing: no sstable ref).
    pub merged: bool,
}

/// What every step of one sstable's parallel read needs: the job, the
/// sstable (the document's, or a thread's own handle on it) and what is
/// read of it.
#[derive(Clone, Copy)]
struct Read<'r, 'a> {
    job: &'r Job<'a>,
    sst: &'r Sstable,
    t: &'r Table<'r>,
    sel: &'r Selection,
    shape: &'r Shape,
}

/// Whether a dump may be cut for threads at all: more than one thread, a
/// forward scan (not key lookups) that prints something.
pub(crate) fn worth_cutting(plan: &DumpPlan, sel: &Selection, shape: &Shape) -> bool {
    plan.threads > 1 && !shape.reverse && sel.keys().is_none() && shape.limit > 0
}

/// Dump the partitions `sel` selects from `sst` into `renderer` on
/// `plan.threads` threads. `Ok(None)` when the read is not cut (one thread,
/// key lookups, reversed, or too small to cut): the caller reads it as one.
pub fn sstable(
    job: &Job<'_>,
    sst: &Sstable,
    t: &Table<'_>,
    sel: &Selection,
    shape: &Shape,
    renderer: &mut Renderer<'_, '_>,
    progress: &mut dyn FnMut(u64, u64),
) -> CmdResult<Option<()>> {
    let a = job.plan;
    if !worth_cutting(job.plan, sel, shape) {
        return Ok(None);
    }
    let cx = Read {
        job,
        sst,
        t,
        sel,
        shape,
    };
    let rows = Renderer::splits_rows(a.format, job.options);
    let Some(mut tasks) = tasks(sst, t, rows) else {
        return Ok(None);
    };
    within(&mut tasks, sel.scan_start(sst, t), sel.scan_end(sst, t));
    let total = tasks.last().map_or(0, Task::end);
    let buffers = Buffers::default();
    let reopen = sst.reopener();
    // A thread that cannot open the sstable leaves its units to this one,
    // which reports what fails in order.
    let init = || -> Option<(Sstable, engine::Bound)> {
        let s = reopen.open().ok()?;
        let b = engine::bind(&s).ok()?;
        Some((s, b))
    };
    let work = |s: &mut Option<(Sstable, engine::Bound)>, i: usize| -> Done {
        let task = &tasks[i];
        let Some((sst, bound)) = s.as_ref().filter(|_| !matches!(task, Task::Here(_))) else {
            return Done::Here;
        };
        let t = Table::new(&bound.header, bound.partitioner.clone(), a.now_secs);
        let own = Read { sst, t: &t, ..cx };
        match render_piece(&own, task, i > 0, buffers.get()) {
            Ok(p) => Done::Piece(p),
            Err(e) => Done::Failed(e.into()),
        }
    };
    let mut doc = Document {
        written: 0,
        dropped: None,
    };
    let mut result: CmdResult<()> = Ok(());
    let mut take = |i: usize, d: Done| -> bool {
        let task = &tasks[i];
        let r = doc.take(&cx, renderer, task, d, i, &buffers);
        progress(task.end(), total);
        match r {
            Ok(go) => go && doc.written < shape.limit,
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

/// What the threads' own handles on the sstables read, summed, to count
/// as the sstables' reads once the threads are done (`--io-stats`).
pub struct ThreadIo(Mutex<Vec<IoStats>>);

impl ThreadIo {
    /// Sums for `n` sstables.
    pub fn new(n: usize) -> Self {
        ThreadIo(Mutex::new(vec![IoStats::default(); n]))
    }

    /// Add the counters of a thread's handles, in the sstables' order.
    pub fn add<'s>(&self, handles: impl IntoIterator<Item = &'s Sstable>) {
        let mut sums = self.0.lock().unwrap_or_else(|e| e.into_inner());
        for (sum, h) in sums.iter_mut().zip(handles) {
            *sum += &h.io.stats();
        }
    }

    /// Add the sums to the counters of `ssts`.
    pub fn settle(self, ssts: &[Sstable]) {
        let sums = self.0.into_inner().unwrap_or_else(|e| e.into_inner());
        for (sst, sum) in ssts.iter().zip(&sums) {
            *sst.io.stats_mut() += sum;
        }
    }
}

/// The tasks of a parallel read of `sst`: units of whole partitions, and
/// a large partition in parts at its row-index blocks when `rows` (one the
/// index cannot cut, or where reading the index fails, is a
/// [`Task::Here`]: read where a single thread meets the same error).
/// `None` when the sstable is not cut ([`engine::units`]), or its index
/// cannot be read: one thread reads Data.db, which needs no index.
pub fn tasks(sst: &Sstable, t: &Table<'_>, rows: bool) -> Option<Vec<Task>> {
    let target = unit_bytes();
    let units = engine::units(sst, t, target).ok().flatten()?;
    let mut tasks = Vec::with_capacity(units.len());
    for u in units {
        if !u.large {
            tasks.push(Task::Unit(u));
            continue;
        }
        match rows.then(|| engine::row_parts(sst, t, &u, target).ok().flatten()) {
            Some(Some(parts)) => tasks.extend(parts.into_iter().map(|p| Task::Part(u, p))),
            _ => tasks.push(Task::Here(u)),
        }
    }
    Some(tasks)
}

/// Keep the tasks whose partitions can start in `[from, to)` (a token
/// range's, as the index places it): the others hold no selected
/// partition, and their Data.db need not be read.
pub(crate) fn within(tasks: &mut Vec<Task>, from: DataPos, to: Option<DataPos>) {
    tasks.retain(|task| {
        let u = match task {
            Task::Unit(u) | Task::Here(u) | Task::Part(u, _) => u,
        };
        u.end > from && to.is_none_or(|to| u.start < to)
    });
}

/// The error of a thread that could not open its own handle on an sstable
/// (at `path`): the real one for the thread's first task, which stops the
/// read there, in order; a later task only says it could not.
pub fn not_reopened(first: &mut Option<CmdError>, path: &std::path::Path) -> CmdError {
    first.take().unwrap_or_else(|| {
        CmdError::Output(io::Error::other(format!(
            "{}: could not be opened again",
            path.display()
        )))
    })
}

/// What a thread reads.
pub enum Task {
    /// Whole partitions.
    Unit(Unit),
    /// A part of the large partition of a unit.
    Part(Unit, RowPart),
    /// A large partition read on the document's thread.
    Here(Unit),
}

impl Task {
    /// Where in Data.db the task ends (for the progress bar).
    pub fn end(&self) -> u64 {
        match self {
            Task::Unit(u) | Task::Here(u) => u.end.0,
            Task::Part(u, p) => p.to.unwrap_or(u.end).0,
        }
    }
}

/// What a thread made of a task.
enum Done {
    /// Its rendered output.
    Piece(Piece),
    /// Read it on the document's thread (a large partition, or a thread
    /// that could not open the sstable).
    Here,
    /// Rendering failed.
    Failed(CmdError),
}

/// A task's output, rendered as the continuation of a document.
struct Piece {
    /// The renderer's output: the piece's own from `skip` on.
    bytes: Vec<u8>,
    skip: usize,
    /// Partitions written.
    written: u64,
    /// Where each written partition ends in [`Piece::own`] (only under `--limit`).
    ends: Vec<usize>,
    /// Where the read stopped in Data.db (`None` after an error).
    end: Option<DataPos>,
    /// The error the read ended with, after `bytes`.
    error: Option<engine::Error>,
}

impl Piece {
    /// The piece's own output.
    fn own(&self) -> &[u8] {
        &self.bytes[self.skip.min(self.bytes.len())..]
    }
}

/// The document the pieces are written into.
struct Document {
    /// Partitions written.
    written: u64,
    /// A large partition read here instead of from its parts (its first
    /// part could not be used): the parts that follow are dropped.
    dropped: Option<DataPos>,
}

/// Data.db from `start` to its end: a unit for the rest of a read.
fn rest_from(start: DataPos) -> Unit {
    Unit {
        start,
        end: DataPos(u64::MAX),
        large: false,
    }
}

impl Document {
    /// Write task `i`'s output into the document: `Ok(false)` to stop.
    ///
    /// Every task starts where the one before it stopped, which the index
    /// said is a partition's (or a row's) start; a task that stopped
    /// elsewhere shows the index wrong there (damaged), and the rest is
    /// read on this thread from where the last good task stopped, as a
    /// single thread reads it.
    fn take(
        &mut self,
        cx: &Read<'_, '_>,
        renderer: &mut Renderer<'_, '_>,
        task: &Task,
        d: Done,
        i: usize,
        buffers: &Buffers,
    ) -> CmdResult<bool> {
        if let Task::Part(_, p) = task {
            if self.dropped == Some(p.partition) {
                return Ok(true);
            }
        }
        let left = cx.shape.limit - self.written;
        let p = match d {
            Done::Failed(e) => return Err(e),
            // Rendered as a later piece while nothing came before it: read again here.
            Done::Piece(p) if i > 0 && renderer.at_start() && !p.own().is_empty() => match task {
                Task::Part(_, part) if part.from.is_some() => Some(p),
                _ => None,
            },
            Done::Piece(p) => Some(p),
            Done::Here => None,
        };
        let Some(p) = p else {
            let unit = match task {
                Task::Unit(u) | Task::Here(u) => *u,
                Task::Part(u, part) => {
                    self.dropped = Some(part.partition);
                    *u
                }
            };
            let ran = self.here(cx, renderer, &unit)?;
            if ran.end != unit.end && self.written < cx.shape.limit {
                self.here(cx, renderer, &rest_from(ran.end))?;
                return Ok(false);
            }
            return Ok(true);
        };
        if p.written >= left {
            // `--limit` is reached in this piece: up to its partition.
            let end = p.ends[(left - 1) as usize];
            renderer.write_through(&p.own()[..end])?;
            if end > 0 {
                renderer.resume();
            }
            self.written += left;
            return Ok(false);
        }
        let stopped = p.end;
        let expected = match task {
            Task::Unit(u) | Task::Here(u) => u.end,
            Task::Part(u, part) => part.to.unwrap_or(u.end),
        };
        if let (Task::Unit(u), None, Some(at)) = (task, &p.error, stopped) {
            if at != expected {
                // The unit started right and ended wrong: all of it again, here.
                self.here(cx, renderer, &rest_from(u.start))?;
                return Ok(false);
            }
        }
        renderer.write_through(p.own())?;
        if !p.own().is_empty() {
            renderer.resume();
        }
        self.written += p.written;
        let Piece { bytes, error, .. } = p;
        buffers.put(bytes);
        if let Some(e) = error {
            return Err(select::located(cx.t, e));
        }
        let (Task::Part(u, part), Some(at)) = (task, stopped) else {
            return Ok(true);
        };
        if at == expected {
            return Ok(true);
        }
        // A part that stopped past its end (the row index is wrong there):
        // the rest of the partition from where it stopped, then of the data.
        self.dropped = Some(part.partition);
        let mut at = at;
        if part.to.is_some() {
            let rest = Task::Part(
                *u,
                RowPart {
                    from: Some(at),
                    to: None,
                    ..*part
                },
            );
            // Held whole: only a damaged row index leads here.
            let r = render_piece(cx, &rest, true, Vec::new())?;
            renderer.write_through(r.own())?;
            self.written += r.written;
            if let Some(e) = r.error {
                return Err(select::located(cx.t, e));
            }
            match r.end {
                Some(end) if end == u.end => return Ok(true),
                Some(end) => at = end,
                None => return Ok(false),
            }
        }
        self.here(cx, renderer, &rest_from(at))?;
        Ok(false)
    }

    /// Read `unit` on this thread, into the document's renderer.
    fn here(
        &mut self,
        cx: &Read<'_, '_>,
        renderer: &mut Renderer<'_, '_>,
        unit: &Unit,
    ) -> CmdResult<engine::Ran> {
        let shape = Shape {
            limit: cx.shape.limit - self.written,
            ..cx.shape.clone()
        };
        let ran = engine::run_unit(cx.sst, cx.t, cx.sel, &shape, unit, renderer.sink())
            .map_err(|e| select::located(cx.t, e))?;
        self.written += ran.written;
        Ok(ran)
    }
}

/// Render `task` into a piece, in `buffer`: as a later part of the
/// document when `later`, else as its beginning.
fn render_piece(cx: &Read<'_, '_>, task: &Task, later: bool, buffer: Vec<u8>) -> io::Result<Piece> {
    let Read {
        job,
        sst,
        t,
        sel,
        shape,
    } = *cx;
    // A later part of a partition: what its start renders is the first part's.
    let mid = matches!(task, Task::Part(_, p) if p.from.is_some());
    let mut end = None;
    let mut p = render(
        &job.style(),
        t,
        sst.table_schema(),
        shape,
        later,
        mid,
        buffer,
        &mut |sink| {
            let ran = match task {
                Task::Unit(u) | Task::Here(u) => engine::run_unit(sst, t, sel, shape, u, sink),
                Task::Part(_, p) => engine::run_rows(sst, t, sel, shape, p, sink),
            }?;
            end = Some(ran.end);
            Ok(ran.written)
        },
    )?;
    p.end = end;
    Ok(p)
}

/// Render into a piece, in `buffer`, what `run` feeds a renderer of
/// `style` (as a later part of the document when `later`; `mid`: from a
/// later part of a partition); `run` returns the partitions written.
#[allow(clippy::too_many_arguments)]
fn render(
    style: &Style<'_>,
    t: &Table<'_>,
    schema: Option<&TableSchema>,
    shape: &Shape,
    later: bool,
    mid: bool,
    buffer: Vec<u8>,
    run: &mut dyn FnMut(&mut dyn Sink) -> Result<u64, engine::Error>,
) -> io::Result<Piece> {
    // The formats whose renderer keeps its own buffer render into the
    // spare one; the others write into it through the tap.
    let hold = matches!(
        style.format,
        DataOutputFormat::Json | DataOutputFormat::Ndjson | DataOutputFormat::Sstabledump
    );
    let (buf, spare) = if hold {
        (Tap::default(), Some(buffer))
    } else {
        (Tap(Rc::new(RefCell::new(buffer))), None)
    };
    let mut w = buf.clone();
    let mut json = JsonOut::new(&mut w, framing(style.format));
    let scylla = matches!(
        style.format,
        DataOutputFormat::Json | DataOutputFormat::Ndjson
    );
    if scylla && style.merged {
        json.begin_merged(style.label)?;
    } else if scylla {
        json.begin_sstable(style.label)?;
    }
    let mut r = Renderer::new(style.format, &mut json, t, schema, style.options)?;
    // What the renderer wrote to begin its document is the document's, not the piece's.
    r.write_through(&[])?;
    if later {
        r.resume();
    }
    if let Some(b) = spare {
        r.hold_output(b);
    }
    // Pieces need each partition's end only to be cut at `--limit`.
    let cut = shape.limit != u64::MAX;
    let (res, skip, ends) = if cut || (mid && !hold) {
        let mut sink = Ends {
            r: &mut r,
            buf: &buf,
            skip: buf.len(),
            ends: cut.then(Vec::new),
        };
        let res = run(&mut sink);
        (res, sink.skip, sink.ends.take().unwrap_or_default())
    } else {
        // Nothing to note: the renderer is the sink (a wrapper costs a
        // second dispatch per row, which a single thread does not pay). A
        // held renderer writes into the tap only at `rows_resume`, so after
        // a later part of a partition the tap holds the framing and the
        // partition's start: all of it skipped.
        let before = buf.len();
        let res = run(r.sink());
        (res, if mid { buf.len() } else { before }, Vec::new())
    };
    let (written, error) = match res {
        Ok(written) => (written, None),
        // Writing to memory does not fail.
        Err(engine::Error::Output(e)) => return Err(e),
        // The partitions written before an error are known only under
        // `--limit`, the one place they are needed (the error stops the read).
        Err(e) => (ends.len() as u64, Some(e)),
    };
    let held = match r.take_buffered() {
        Some(b) => b,
        None => {
            r.write_through(&[])?;
            Vec::new()
        }
    };
    let at = buf.len();
    drop(r);
    drop(json);
    let mut tapped = buf.take();
    let (bytes, skip) = if at == skip && tapped.len() == at {
        // All the piece's own output is in the renderer's buffer: handed over.
        (held, 0)
    } else {
        let tail = tapped.split_off(at);
        tapped.extend_from_slice(&held);
        tapped.extend_from_slice(&tail);
        (tapped, skip)
    };
    Ok(Piece {
        written,
        ends: ends.into_iter().map(|e| e - skip).collect(),
        bytes,
        skip,
        end: None,
        error,
    })
}

/// A growing buffer that the renderer writes into while its length is
/// read (one thread: shared through an `Rc`).
#[derive(Clone, Default)]
struct Tap(Rc<RefCell<Vec<u8>>>);

impl Tap {
    fn len(&self) -> usize {
        self.0.borrow().len()
    }

    fn take(&self) -> Vec<u8> {
        std::mem::take(&mut *self.0.borrow_mut())
    }
}

impl Write for Tap {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(b);
        Ok(b.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The renderer as the engine's sink, noting where each written partition
/// ends in the piece (for `--limit`) and, in a later part of a partition,
/// where the part's own output starts.
struct Ends<'r, 'a, 'w> {
    r: &'r mut Renderer<'a, 'w>,
    buf: &'r Tap,
    /// Bytes before the piece's own.
    skip: usize,
    ends: Option<Vec<usize>>,
}

impl Ends<'_, '_, '_> {
    /// A partition ended; `counted` when the engine counts it as written.
    fn ended(&mut self, counted: bool) -> io::Result<()> {
        if self.ends.is_some() && counted {
            self.r.write_through(&[])?;
            let n = self.buf.len();
            if let Some(e) = &mut self.ends {
                e.push(n);
            }
        }
        Ok(())
    }
}

impl Sink for Ends<'_, '_, '_> {
    fn partition_start(
        &mut self,
        t: &Table<'_>,
        key: &[u8],
        deletion: &DeletionTime,
        header_end: u64,
    ) -> io::Result<()> {
        self.r.sink().partition_start(t, key, deletion, header_end)
    }
    fn static_row(&mut self, t: &Table<'_>, row: &Row<'_>, position: u64) -> io::Result<()> {
        self.r.sink().static_row(t, row, position)
    }
    fn rows_resume(&mut self) -> io::Result<()> {
        // The part's rows begin: what came before (written out by the
        // renderer's `rows_resume`) is skipped.
        self.r.sink().rows_resume()?;
        self.skip = self.buf.len();
        Ok(())
    }
    fn row(&mut self, t: &Table<'_>, row: &Row<'_>) -> io::Result<()> {
        self.r.sink().row(t, row)
    }
    fn takes_lazy_rows(&self) -> bool {
        self.r.sink_ref().takes_lazy_rows()
    }
    fn lazy_row(&mut self, t: &Table<'_>, row: LazyRow<'_>) -> Result<(), engine::Error> {
        self.r.sink().lazy_row(t, row)
    }
    fn marker(&mut self, t: &Table<'_>, m: &RangeTombstoneMarker<'_>) -> io::Result<()> {
        self.r.sink().marker(t, m)
    }
    fn partition_end(&mut self, t: &Table<'_>) -> io::Result<()> {
        self.r.sink().partition_end(t)?;
        let counted = self.r.sink_ref().last_partition_written();
        self.ended(counted)
    }
    fn abort_partition(&mut self, t: &Table<'_>) -> io::Result<()> {
        self.r.sink().abort_partition(t)
    }
    fn last_partition_written(&self) -> bool {
        self.r.sink_ref().last_partition_written()
    }
    fn key_only(&mut self, t: &Table<'_>, key: &[u8]) -> io::Result<()> {
        self.r.sink().key_only(t, key)?;
        // The engine counts every key.
        self.ended(true)
    }
}
