//! `read` of many keys on several threads: the keys are cut into tasks of
//! consecutive keys, each thread looks a task's keys up with its own
//! handles on the sstables and renders them into a piece of output that
//! continues the document ([`super`]), and the pieces are written in key
//! order ([`parallel::ordered_scoped`]), so the output is the one a single
//! thread writes.
//!
//! What a lookup finds besides its output (an absent key's note, the
//! columns whose type did not fit, an error) travels with the piece and is
//! reported when the piece is written, in key order. A task after an error
//! is not written. A piece rendered as a later one while nothing came
//! before it, a task whose rows would make its piece large (a large
//! partition: memory stays bounded), and the tasks of a thread that could
//! not open the sstables, are looked up again on this thread.

use std::io;
use std::ops::Range;

use sstkit_format::data::{LazyRow, RangeTombstoneMarker, Row};
use sstkit_format::deletion::DeletionTime;
use sstkit_format::engine::{self, parallel, Shape};
use sstkit_format::read::Absence;
use sstkit_format::schema::TableSchema;

use super::{render, Buffers, Piece, Style};
use crate::sink::renderer::Renderer;
use crate::sink::{Sink, Table};
use crate::{CmdError, CmdResult};

/// Keys per task at most: a few lookups' worth of output held per piece,
/// and few enough tasks for a keys file of any length.
const MAX_KEYS_PER_TASK: usize = 64;

/// Rows and markers a piece holds at most: a task that reaches it (a large
/// partition) is left to this thread, which streams it.
const PIECE_ROWS: u64 = 20_000;

/// The piece size in rows: `SSTKIT_PIECE_ROWS` when set (the tests make
/// the fixtures' partitions reach it), else `PIECE_ROWS`.
fn piece_rows() -> u64 {
    super::env_size("SSTKIT_PIECE_ROWS", PIECE_ROWS)
}

/// What one key's lookup found, besides what it rendered.
#[derive(Default)]
pub struct Looked {
    /// The key is absent, and which component said so.
    pub absent: Option<Absence>,
    /// Columns whose type did not fit (pre-3.0 data read with a schema).
    pub failed: Vec<String>,
    /// The lookup failed: the keys after it are not looked up.
    pub error: Option<CmdError>,
}

/// Look key `k` up into a sink.
pub type Look<'a> = dyn FnMut(usize, &mut dyn Sink) -> Looked + 'a;

/// A thread's key lookups, on its own handles on the sstables.
pub struct Lookups<'a, 't> {
    /// The table the lookups decode with.
    pub t: &'a Table<'t>,
    /// The table schema given by the user, for the renderers.
    pub schema: Option<&'a TableSchema>,
    /// The lookups.
    pub look: &'a mut Look<'a>,
}

/// What a thread hands its [`Lookups`] to (`None`: it could not open the
/// sstables): it looks keys up until there are none left for the thread.
pub type WithLookups<'a> = dyn FnMut(Option<Lookups<'_, '_>>) + 'a;

/// The tasks for `count` keys on `threads` threads: runs of consecutive
/// keys, several per thread so that a slow key does not hold the others.
fn tasks(count: usize, threads: usize) -> Vec<Range<usize>> {
    let per = count.div_ceil(threads * 4).clamp(1, MAX_KEYS_PER_TASK);
    (0..count)
        .step_by(per)
        .map(|s| s..(s + per).min(count))
        .collect()
}

/// What a thread made of a task.
enum Done {
    /// Its rendered output, and what each key's lookup found, in order.
    Piece(Piece, Vec<Looked>),
    /// Look the task's keys up on the document's thread (the thread could
    /// not open the sstables).
    Here,
}

/// Look keys `0..count` up on `threads` threads into `renderer`, the way
/// `doc` looks them up on this thread. Each thread runs `thread`, which
/// opens its own [`Lookups`] and calls the function it is given with them
/// (or with `None` when it could not). `noted` gets what each key's lookup
/// found, in key order, and returns its error to stop there.
pub fn lookups(
    style: &Style<'_>,
    count: usize,
    threads: usize,
    thread: &(dyn Fn(&mut WithLookups<'_>) + Sync),
    doc: &mut Look<'_>,
    renderer: &mut Renderer<'_, '_>,
    noted: &mut dyn FnMut(usize, Looked) -> CmdResult<()>,
) -> CmdResult<()> {
    let tasks = tasks(count, threads);
    let buffers = Buffers::default();
    let run = |units: &mut parallel::Units<'_, Done>| {
        thread(&mut |looker| match looker {
            Some(mut l) => units(&mut |i| piece(style, &mut l, tasks[i].clone(), i > 0, &buffers)),
            None => units(&mut |_| Done::Here),
        })
    };
    let mut result = Ok(());
    let mut take = |i: usize, d: Done| -> bool {
        let r = match d {
            // Rendered as a later piece while nothing came before it: again here.
            Done::Piece(p, _) if i > 0 && renderer.at_start() && !p.own().is_empty() => {
                here(doc, renderer, tasks[i].clone(), noted)
            }
            Done::Piece(p, looked) => write(renderer, p, &tasks[i], looked, &buffers, noted),
            Done::Here => here(doc, renderer, tasks[i].clone(), noted),
        };
        match r {
            Ok(()) => true,
            Err(e) => {
                result = Err(e);
                false
            }
        }
    };
    parallel::ordered_scoped(tasks.len(), threads, &run, &mut take);
    result
}

/// Render the lookups of `keys` into a piece (as a later part of the
/// document when `later`), up to the first that fails.
fn piece(
    style: &Style<'_>,
    l: &mut Lookups<'_, '_>,
    keys: Range<usize>,
    later: bool,
    buffers: &Buffers,
) -> Done {
    let mut looked = Vec::with_capacity(keys.len());
    let look = &mut *l.look;
    let mut full = false;
    let r = render(
        style,
        l.t,
        l.schema,
        &Shape::default(),
        later,
        false,
        buffers.get(),
        &mut |sink| {
            let mut capped = Capped {
                inner: sink,
                left: piece_rows(),
                full: false,
            };
            for k in keys.clone() {
                let found = look(k, &mut capped);
                let failed = found.error.is_some();
                looked.push(found);
                if failed || capped.full {
                    break;
                }
            }
            full = capped.full;
            Ok(0)
        },
    );
    match r {
        // Memory stays bounded: the task is read again on the document's thread, streaming.
        Ok(_) if full => Done::Here,
        Ok(p) => Done::Piece(p, looked),
        // Rendering into memory does not fail; should it, this thread reads the task.
        Err(_) => Done::Here,
    }
}

/// A sink that refuses more than `left` rows and markers (and says so in
/// `full`), so that a piece stays small.
struct Capped<'s> {
    inner: &'s mut dyn Sink,
    left: u64,
    full: bool,
}

impl Capped<'_> {
    /// Count one row or marker: an error once the piece is full.
    fn one(&mut self) -> io::Result<()> {
        if self.left == 0 {
            self.full = true;
            return Err(io::Error::other("piece full"));
        }
        self.left -= 1;
        Ok(())
    }
}

impl Sink for Capped<'_> {
    fn partition_start(
        &mut self,
        t: &Table<'_>,
        key: &[u8],
        deletion: &DeletionTime,
        header_end: u64,
    ) -> io::Result<()> {
        self.inner.partition_start(t, key, deletion, header_end)
    }
    fn static_row(&mut self, t: &Table<'_>, row: &Row<'_>, position: u64) -> io::Result<()> {
        self.inner.static_row(t, row, position)
    }
    fn rows_resume(&mut self) -> io::Result<()> {
        self.inner.rows_resume()
    }
    fn row(&mut self, t: &Table<'_>, row: &Row<'_>) -> io::Result<()> {
        self.one()?;
        self.inner.row(t, row)
    }
    fn takes_lazy_rows(&self) -> bool {
        self.inner.takes_lazy_rows()
    }
    fn lazy_row(&mut self, t: &Table<'_>, row: LazyRow<'_>) -> Result<(), engine::Error> {
        self.one()?;
        self.inner.lazy_row(t, row)
    }
    fn marker(&mut self, t: &Table<'_>, m: &RangeTombstoneMarker<'_>) -> io::Result<()> {
        self.one()?;
        self.inner.marker(t, m)
    }
    fn partition_end(&mut self, t: &Table<'_>) -> io::Result<()> {
        self.inner.partition_end(t)
    }
    fn abort_partition(&mut self, t: &Table<'_>) -> io::Result<()> {
        self.inner.abort_partition(t)
    }
    fn last_partition_written(&self) -> bool {
        self.inner.last_partition_written()
    }
    fn key_only(&mut self, t: &Table<'_>, key: &[u8]) -> io::Result<()> {
        self.inner.key_only(t, key)
    }
}

/// Write a thread's piece into the document and report its keys' findings
/// in order (the first error ends the document there).
fn write(
    renderer: &mut Renderer<'_, '_>,
    p: Piece,
    keys: &Range<usize>,
    looked: Vec<Looked>,
    buffers: &Buffers,
    noted: &mut dyn FnMut(usize, Looked) -> CmdResult<()>,
) -> CmdResult<()> {
    renderer.write_through(p.own())?;
    if !p.own().is_empty() {
        renderer.resume();
    }
    buffers.put(p.bytes);
    for (k, l) in keys.clone().zip(looked) {
        noted(k, l)?;
    }
    Ok(())
}

/// Look `keys` up on this thread, into the document's renderer.
fn here(
    doc: &mut Look<'_>,
    renderer: &mut Renderer<'_, '_>,
    keys: Range<usize>,
    noted: &mut dyn FnMut(usize, Looked) -> CmdResult<()>,
) -> CmdResult<()> {
    for k in keys {
        let l = doc(k, renderer.sink());
        noted(k, l)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::tasks;

    #[test]
    fn tasks_cover_the_keys_in_order_in_bounded_runs() {
        for (count, threads) in [(0, 2), (1, 4), (7, 2), (100, 3), (100_000, 2)] {
            let t = tasks(count, threads);
            let flat: Vec<usize> = t.iter().flat_map(|r| r.clone()).collect();
            assert_eq!(flat, (0..count).collect::<Vec<_>>());
            assert!(t.iter().all(|r| !r.is_empty() && r.len() <= 64));
        }
        // Several tasks per thread when there are keys enough.
        assert!(tasks(16, 2).len() >= 8);
    }
}
