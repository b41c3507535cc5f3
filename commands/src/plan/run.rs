//! The engine run as the data commands call it (`dump-data`, `export`),
//! over one sstable or the sstables of a merge: the plan's shape, absent
//! keys said on stderr, a progress bar for long scans, and errors that
//! name the partition in the form keys are printed in.

use sstkit_format::engine::{self, MergeInputs, Note, Selection, Shape};
use sstkit_format::Sstable;

use crate::plan::select;
use crate::plan::DumpPlan;
use crate::progress::Progress;
use crate::sink::{type_warning, Sink, Table, TypeCheck};
use crate::term::Stream;
use crate::{sstable_label, CmdResult};

/// Read the partitions `sel` selects from `sst` into `sink`, shaped by the plan.
pub fn sstable(
    a: &DumpPlan,
    sst: &Sstable,
    t: &Table<'_>,
    sel: &Selection,
    sink: &mut dyn Sink,
) -> CmdResult<()> {
    // Pre-3.0 data decoded with a user's schema: say which columns' types
    // did not fit (their values are printed as hex).
    if sst.features().legacy_cells && sst.table_schema().is_some() && !a.keys_only {
        let mut check = TypeCheck::new(sink);
        let r = run(a, sst, t, sel, &mut check);
        if let Some(w) = type_warning(&sstable_label(sst), &check.failed) {
            eprintln!("{w}");
        }
        return r;
    }
    run(a, sst, t, sel, sink)
}

/// [`sstable`] into a renderer, on the plan's threads when the read can be
/// cut ([`crate::sink::pieces`]); the output is the same as on one thread.
pub fn rendered(
    job: &crate::sink::pieces::Job<'_>,
    sst: &Sstable,
    t: &Table<'_>,
    sel: &Selection,
    renderer: &mut crate::sink::renderer::Renderer<'_, '_>,
) -> CmdResult<()> {
    let a = job.plan;
    let typed = sst.features().legacy_cells && sst.table_schema().is_some() && !a.keys_only;
    if a.threads > 1 && !typed {
        let label = sstable_label(sst);
        let mut notes = Notes::new(a, &label, t);
        let shape = shape(a);
        let mut progress = |done, total| notes.bar.set(done, total);
        if crate::sink::pieces::sstable(job, sst, t, sel, &shape, renderer, &mut progress)?
            .is_some()
        {
            return Ok(());
        }
    }
    self::sstable(a, sst, t, sel, renderer.sink())
}

/// [`sstable`] without the type check.
fn run(
    a: &DumpPlan,
    sst: &Sstable,
    t: &Table<'_>,
    sel: &Selection,
    sink: &mut dyn Sink,
) -> CmdResult<()> {
    let label = sstable_label(sst);
    let mut notes = Notes::new(a, &label, t);
    let r = engine::run(sst, t, sel, &shape(a), sink, &mut notes.each());
    r.map_err(|e| select::located(t, e))
}

/// The merged partitions `sel` selects from `inputs` into `sink`, shaped
/// by the plan (`--reverse`: see [`Shape::reverse`]).
pub fn merged(
    a: &DumpPlan,
    inputs: &MergeInputs,
    t: &Table<'_>,
    sel: &Selection,
    sink: &mut dyn Sink,
) -> CmdResult<()> {
    let label = inputs.label();
    // The bar of a merged scan counts every sstable's bytes.
    let mut notes = Notes::new(a, &label, t);
    let r = inputs.dump(t, sel, &shape(a), sink, &mut notes.each());
    r.map_err(|e| select::located(t, e))
}

/// [`merged`] into a renderer, on the plan's threads when the scan can be
/// cut ([`crate::sink::pieces::merged`]); the output is the same as on one thread.
pub fn merged_rendered(
    job: &crate::sink::pieces::Job<'_>,
    inputs: &MergeInputs,
    t: &Table<'_>,
    sel: &Selection,
    renderer: &mut crate::sink::renderer::Renderer<'_, '_>,
) -> CmdResult<()> {
    let a = job.plan;
    if a.threads > 1 {
        let label = inputs.label();
        let mut notes = Notes::new(a, &label, t);
        let shape = shape(a);
        let mut progress = |done, total| notes.bar.set(done, total);
        let cut = crate::sink::pieces::merged::merged(
            job,
            inputs,
            t,
            sel,
            &shape,
            renderer,
            &mut progress,
        )?;
        if cut.is_some() {
            return Ok(());
        }
    }
    merged(a, inputs, t, sel, renderer.sink())
}

/// The engine's shape of a dump plan.
fn shape(a: &DumpPlan) -> Shape {
    Shape {
        limit: a.limit,
        keys_only: a.keys_only,
        reverse: a.reverse,
        ..Shape::default()
    }
}

/// The progress bar of a whole scan: shown when stdout is a file or pipe.
pub fn bar(a: &DumpPlan) -> Progress {
    if Stream::Stdout.is_terminal() {
        Progress::hidden()
    } else {
        Progress::new(a.command)
    }
}

/// What the engine notices, for people: absent keys on stderr (named
/// after `label`), and a progress bar for a whole scan to a file or pipe,
/// which can be long.
struct Notes<'a, 't> {
    label: &'a str,
    table: &'a Table<'t>,
    bar: Progress,
}

impl<'a, 't> Notes<'a, 't> {
    fn new(a: &DumpPlan, label: &'a str, table: &'a Table<'t>) -> Self {
        Notes {
            label,
            table,
            bar: bar(a),
        }
    }

    /// The engine's callback.
    fn each(&mut self) -> impl FnMut(Note<'_>) + '_ {
        |n| match n {
            Note::KeyAbsent { key, absence } => {
                select::note_absent(self.label, self.table, key, absence)
            }
            Note::Progress { done, total } => self.bar.set(done, total),
        }
    }
}
