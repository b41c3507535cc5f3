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

use std::cell::RefCell;
use std::io::{self, Write};
use std::rc::Rc;

use sstkit_format::data::{LazyRow, RangeTombstoneMarker, Row};
use sstkit_format::deletion::DeletionTime;
use sstkit_format::engine::{self, parallel, Selection, Shape, Unit};
use sstkit_format::Sstable;

use crate::cli::{DataOutputFormat, OutputFormat};
use crate::dump::{select, Sink, Table};
use crate::output::JsonOut;
use crate::plan::DumpPlan;
use crate::renderer::{RenderOptions, Renderer};
use crate::{CmdError, CmdResult};

/// Uncompressed Data.db bytes per unit: large enough that cutting costs
/// little (a unit boundary inside a compressed chunk decompresses it
/// twice), small enough that the pieces held stay a few MiB.
const UNIT_BYTES: u64 = 1 << 20;

/// The unit size: `SSTKIT_UNIT_BYTES` when set (the tests cut the small
/// fixtures into many units with it), else [`UNIT_BYTES`].
fn unit_bytes() -> u64 {
    std::env::var("SSTKIT_UNIT_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(UNIT_BYTES)
}

/// What a parallel dump needs besides the renderer.
pub struct Job<'a> {
    /// The plan (shape, output format, `--now`).
    pub plan: &'a DumpPlan,
    /// The sstable's label (Data.db path), for the JSON framing.
    pub label: &'a str,
    /// The renderers' options.
    pub options: RenderOptions,
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
    if a.threads <= 1 || shape.reverse || sel.keys().is_some() || shape.limit == 0 {
        return Ok(None);
    }
    let Some(units) =
        engine::units(sst, t, unit_bytes()).map_err(|e| select::located(t, e.into()))?
    else {
        return Ok(None);
    };
    let total = units.last().map_or(0, |u| u.end.0);
    let reopen = sst.reopener();
    // A thread that cannot open the sstable leaves its units to this one,
    // which reports what fails in order.
    let init = || -> Option<(Sstable, engine::Bound)> {
        let s = reopen.open().ok()?;
        let b = engine::bind(&s).ok()?;
        Some((s, b))
    };
    // Pieces need each partition's end only to be cut at `--limit`.
    let limited = shape.limit != u64::MAX;
    let work = |s: &mut Option<(Sstable, engine::Bound)>, i: usize| -> Done {
        let u = &units[i];
        let Some((sst, bound)) = s.as_ref().filter(|_| !u.large) else {
            return Done::Here;
        };
        let t = Table::new(&bound.header, bound.partitioner.clone(), a.now_secs);
        match render_piece(job, sst, &t, sel, shape, u, i > 0, limited) {
            Ok(p) => Done::Piece(p),
            Err(e) => Done::Failed(e.into()),
        }
    };
    let mut written: u64 = 0;
    let mut result: CmdResult<()> = Ok(());
    let mut take = |i: usize, d: Done| -> bool {
        let u = &units[i];
        let r = take_piece(sst, t, sel, shape, renderer, u, d, i, &mut written);
        progress(u.end.0, total);
        match r {
            Ok(go) => go && written < shape.limit,
            Err(e) => {
                result = Err(e);
                false
            }
        }
    };
    parallel::ordered(units.len(), a.threads, &init, &work, &|_| {}, &mut take);
    result.map(Some)
}

/// What a thread made of a unit.
enum Done {
    /// Its rendered output.
    Piece(Piece),
    /// A large partition (or a thread that could not open the sstable):
    /// read it on the document's thread.
    Here,
    /// Rendering failed.
    Failed(CmdError),
}

/// A unit's output, rendered as the continuation of a document.
struct Piece {
    bytes: Vec<u8>,
    /// Partitions written.
    written: u64,
    /// Where each written partition ends in `bytes` (only under `--limit`).
    ends: Vec<usize>,
    /// The error the unit's read ended with, after `bytes`.
    error: Option<engine::Error>,
}

/// Write unit `i`'s output into the document: `Ok(false)` to stop.
#[allow(clippy::too_many_arguments)]
fn take_piece(
    sst: &Sstable,
    t: &Table<'_>,
    sel: &Selection,
    shape: &Shape,
    renderer: &mut Renderer<'_, '_>,
    u: &Unit,
    d: Done,
    i: usize,
    written: &mut u64,
) -> CmdResult<bool> {
    let left = shape.limit - *written;
    let p = match d {
        Done::Failed(e) => return Err(e),
        // Rendered as a later piece while nothing came before it: read again here.
        Done::Piece(p) if i > 0 && renderer.at_start() && !p.bytes.is_empty() => None,
        Done::Piece(p) => Some(p),
        Done::Here => None,
    };
    let Some(p) = p else {
        let shape = Shape {
            limit: left,
            ..shape.clone()
        };
        let r = engine::run_unit(sst, t, sel, &shape, u, renderer.sink());
        *written += r.as_ref().copied().unwrap_or(0);
        return r.map(|_| true).map_err(|e| select::located(t, e));
    };
    if p.written >= left {
        // `--limit` is reached in this piece: up to its partition.
        let end = p.ends[(left - 1) as usize];
        renderer.write_through(&p.bytes[..end])?;
        if end > 0 {
            renderer.resume();
        }
        *written += left;
        return Ok(false);
    }
    renderer.write_through(&p.bytes)?;
    if !p.bytes.is_empty() {
        renderer.resume();
    }
    *written += p.written;
    match p.error {
        Some(e) => Err(select::located(t, e)),
        None => Ok(true),
    }
}

/// Render unit `u` into a piece: as a later part of the document when
/// `later`, else as its beginning.
#[allow(clippy::too_many_arguments)]
fn render_piece(
    job: &Job<'_>,
    sst: &Sstable,
    t: &Table<'_>,
    sel: &Selection,
    shape: &Shape,
    u: &Unit,
    later: bool,
    limited: bool,
) -> io::Result<Piece> {
    let a = job.plan;
    let buf = Tap::default();
    let mut w = buf.clone();
    let mut json = JsonOut::new(&mut w, framing(a.format));
    let scylla = matches!(a.format, DataOutputFormat::Json | DataOutputFormat::Ndjson);
    if scylla {
        json.begin_sstable(job.label)?;
    }
    let mut r = Renderer::new(a.format, &mut json, t, sst.table_schema(), job.options)?;
    // What the renderer wrote to begin its document is the document's, not the piece's.
    r.write_through(&[])?;
    let skip = buf.len();
    if later {
        r.resume();
    }
    let mut sink = Ends {
        r: &mut r,
        buf: &buf,
        ends: limited.then(Vec::new),
    };
    let res = engine::run_unit(sst, t, sel, shape, u, &mut sink);
    let ends = sink.ends.take().unwrap_or_default();
    let (written, error) = match res {
        Ok(n) => (n, None),
        // Writing to memory does not fail.
        Err(engine::Error::Output(e)) => return Err(e),
        Err(e) => (ends.len() as u64, Some(e)),
    };
    r.write_through(&[])?;
    drop(r);
    drop(json);
    let mut bytes = buf.take();
    bytes.drain(..skip);
    Ok(Piece {
        written,
        ends: ends.into_iter().map(|e| e - skip).collect(),
        bytes,
        error,
    })
}

/// The JSON framing of an output format (none for the others).
fn framing(format: DataOutputFormat) -> OutputFormat {
    match format {
        DataOutputFormat::Ndjson => OutputFormat::Ndjson,
        DataOutputFormat::Json => OutputFormat::Json,
        _ => OutputFormat::Text,
    }
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
/// ends in the piece (for `--limit`).
struct Ends<'r, 'a, 'w> {
    r: &'r mut Renderer<'a, 'w>,
    buf: &'r Tap,
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
