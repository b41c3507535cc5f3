//! `dump-data --merge` on several threads: the merged scan is cut into
//! token ranges common to all the sstables ([`MergeInputs::ranges`]), each
//! thread merges ranges into pieces of output with its own handles on the
//! sstables, and the pieces are written in order, as for one sstable
//! ([`super`]), so the output is the one a single thread writes.
//!
//! A range whose read finds its index wrong ([`RangeRan::whole`]), or that
//! fails, is read again on this thread from its start to the end of the
//! data, as one scan: the damage is met where a single thread meets it.

use sstkit_format::engine::{self, parallel, MergeInputs, MergeRange, RangeRan, Selection, Shape};

use super::{render, unit_bytes, Buffers, Job, Piece};
use crate::plan::select;
use crate::sink::renderer::Renderer;
use crate::sink::Table;
use crate::{CmdError, CmdResult};

/// What a thread made of a range.
enum Done {
    /// Its rendered output, and what the read found.
    Piece(Piece, RangeRan),
    /// Read from the range's start to the end on the document's thread
    /// (the index disagrees with Data.db, the read failed, or the thread
    /// could not open the sstables).
    Rest,
    /// Rendering failed.
    Failed(CmdError),
}

/// Dump the merged partitions `sel` selects from `inputs` into `renderer`
/// on `plan.threads` threads. `Ok(None)` when the read is not cut (one
/// thread, key lookups, reversed, pre-3.0 cells, an sstable without an
/// index, or too small to cut): the caller reads it as one.
pub fn merged(
    job: &Job<'_>,
    inputs: &MergeInputs,
    t: &Table<'_>,
    sel: &Selection,
    shape: &Shape,
    renderer: &mut Renderer<'_, '_>,
    progress: &mut dyn FnMut(u64, u64),
) -> CmdResult<Option<()>> {
    let a = job.plan;
    if !super::worth_cutting(job.plan, sel, shape) {
        return Ok(None);
    }
    let Some(ranges) = inputs.ranges(sel, unit_bytes()) else {
        return Ok(None);
    };
    let buffers = Buffers::default();
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
    let work = |s: &mut Option<MergeInputs>, i: usize| -> Done {
        let Some(own) = s.as_ref() else {
            return Done::Rest;
        };
        let t = Table::new(&own.schema.header, own.partitioner.clone(), a.now_secs);
        let schema = own.ssts.first().and_then(|s| s.table_schema());
        let mut ran = None;
        let piece = render(
            &job.style(),
            &t,
            schema,
            shape,
            i > 0,
            false,
            buffers.get(),
            &mut |sink| {
                let r = own.dump_range(&t, sel, shape, &ranges[i], sink)?;
                ran = Some(r);
                Ok(r.written)
            },
        );
        match (piece, ran) {
            (Ok(p), Some(r)) if p.error.is_none() && (r.whole || r.past_end) => Done::Piece(p, r),
            (Err(e), _) => Done::Failed(e.into()),
            _ => Done::Rest,
        }
    };
    let mut doc = Document {
        inputs,
        t,
        sel,
        shape,
        written: 0,
    };
    let mut result: CmdResult<()> = Ok(());
    let mut take = |i: usize, d: Done| -> bool {
        let r = doc.take(renderer, &ranges[i], d, i, &buffers);
        let (done, total) = ranges[i].progress;
        progress(done, total);
        match r {
            Ok(go) => go && doc.written < shape.limit,
            Err(e) => {
                result = Err(e);
                false
            }
        }
    };
    let io = super::ThreadIo::new(inputs.ssts.len());
    let done = |s: Option<MergeInputs>| io.add(s.iter().flat_map(|s| &s.ssts));
    parallel::ordered(ranges.len(), a.threads, &init, &work, &done, &mut take);
    io.settle(&inputs.ssts);
    result.map(Some)
}

/// The merged document the pieces are written into.
struct Document<'r, 't> {
    inputs: &'r MergeInputs,
    t: &'r Table<'t>,
    sel: &'r Selection,
    shape: &'r Shape,
    /// Partitions written.
    written: u64,
}

impl Document<'_, '_> {
    /// Write range `i`'s output into the document: `Ok(false)` to stop.
    fn take(
        &mut self,
        renderer: &mut Renderer<'_, '_>,
        range: &MergeRange,
        d: Done,
        i: usize,
        buffers: &Buffers,
    ) -> CmdResult<bool> {
        let (p, ran) = match d {
            Done::Failed(e) => return Err(e),
            Done::Rest => {
                self.here(renderer, &range.to_the_end())?;
                return Ok(false);
            }
            Done::Piece(p, ran) => (p, ran),
        };
        if i > 0 && renderer.at_start() && !p.own().is_empty() {
            // Rendered as a later piece while nothing came before it: read
            // again here (the thread's read found the range whole).
            let again = self.here(renderer, range)?;
            return Ok(!again.past_end);
        }
        let left = self.shape.limit - self.written;
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
        renderer.write_through(p.own())?;
        if !p.own().is_empty() {
            renderer.resume();
        }
        self.written += p.written;
        buffers.put(p.bytes);
        Ok(!ran.past_end)
    }

    /// Read `range` on this thread, into the document's renderer.
    fn here(&mut self, renderer: &mut Renderer<'_, '_>, range: &MergeRange) -> CmdResult<RangeRan> {
        let shape = Shape {
            limit: self.shape.limit - self.written,
            ..self.shape.clone()
        };
        let ran = self
            .inputs
            .dump_range(self.t, self.sel, &shape, range, renderer.sink())
            .map_err(|e| select::located(self.t, e))?;
        self.written += ran.written;
        Ok(ran)
    }
}
