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
//! before it, and the tasks of a thread that could not open the sstables,
//! are looked up again on this thread.

use std::ops::Range;

use sstkit_format::engine::{parallel, Shape};
use sstkit_format::read::Absence;
use sstkit_format::schema::TableSchema;

use super::{render, Buffers, Piece, Style};
use crate::dump::{Sink, Table};
use crate::renderer::Renderer;
use crate::{CmdError, CmdResult};

/// Keys per task at most: a few lookups' worth of output held per piece,
/// and few enough tasks for a keys file of any length.
const MAX_KEYS_PER_TASK: usize = 64;

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
    let r = render(
        style,
        l.t,
        l.schema,
        &Shape::default(),
        later,
        false,
        buffers.get(),
        &mut |sink| {
            for k in keys.clone() {
                let found = look(k, sink);
                let failed = found.error.is_some();
                looked.push(found);
                if failed {
                    break;
                }
            }
            Ok(0)
        },
    );
    match r {
        Ok(p) => Done::Piece(p, looked),
        // Rendering into memory does not fail; should it, this thread reads the task.
        Err(_) => Done::Here,
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
