//! A merged partition's slice in reverse clustering order, with memory
//! bounded by a window rather than by the slice.
//!
//! ```text
//! sstables' row indexes ─► windows cut at block starts, last one first
//!                            (at most `budget` bytes of each sstable's blocks)
//!  per window: a SliceSource per sstable, from one block below the window
//!              ─► Merger ─► the units inside the window, held
//!                         ─► handed out last first
//! ```
//!
//! [`ReversedMerge`] merges the slice forward, window by window, from the
//! last window to the first, and holds one window. Each sstable's source of
//! a window starts one block below it, so a range tombstone bound at the
//! window's lower edge is merged from the stored bounds, as a read of the
//! whole slice merges it; what the merge gives outside the window (its
//! sources' synthetic bounds at their slice edges included) is dropped, so
//! the windows put end to end are the whole slice's units.
//!
//! [`HeldTail`] holds the end of a forward merged stream to read it
//! backwards (a partition small enough to hold, or the last rows a limit
//! keeps).

use std::collections::VecDeque;

use crate::clustering::{BoundKind, ClusteringPrefix};
use crate::compare::ClusteringComparator;
use crate::error::{Error, ErrorKind, Result};
use crate::lookup::{PartitionHandle, RowIndex};
use crate::read::{gallop_down, ClusteringBound, OwnedClustering, Slice};
use crate::sstable::Sstable;
use crate::statistics::SerializationHeader;
use crate::token::Partitioner;

use super::{MergedSchema, Merger, SliceSource, Unit, UnitSource};

/// One sstable of a [`ReversedMerge`].
pub struct WindowPart<'a> {
    /// The sstable's number in the merge (its units' `source`).
    pub number: usize,
    /// The sstable.
    pub sst: &'a Sstable,
    /// Its serialization header.
    pub header: &'a SerializationHeader,
    /// Read only its partition header and static row (the slice is
    /// outside what it holds, but its partition deletion counts).
    pub header_only: bool,
    /// The partition, as its index found it: looked up once, its row index
    /// serves every window.
    pub handle: PartitionHandle,
}

/// Blocks of a partition's row index a read chose: `(first, last)` (none
/// when the slice falls between blocks) of how many.
pub type Blocks = (Option<(usize, usize)>, usize);

/// The rows and markers of one partition's slice merged across sstables,
/// last first (see the module docs).
pub struct ReversedMerge<'a> {
    schema: &'a MergedSchema,
    partitioner: Partitioner,
    slice: &'a Slice,
    parts: Vec<WindowPart<'a>>,
    windows: Windows,
    /// The upper edge of the next window (`None`: the slice end).
    upper: Option<OwnedClustering>,
    /// The first window has been read.
    done: bool,
    /// The current window's units, in forward order.
    held: Vec<Unit>,
    read: usize,
    /// Per part, the blocks its windows read so far.
    blocks: Vec<Option<Blocks>>,
}

impl std::fmt::Debug for ReversedMerge<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReversedMerge")
            .field("windows_read", &self.read)
            .field("held", &self.held.len())
            .finish()
    }
}

impl<'a> ReversedMerge<'a> {
    /// `slice` of the partition `parts` hold, merged onto `schema`, in
    /// windows of at most `budget` Data.db bytes of each sstable's
    /// row-index blocks (at least one block). The partition header and
    /// static row are not given: the caller has them from a merge of the
    /// headers.
    pub fn new(
        schema: &'a MergedSchema,
        partitioner: Partitioner,
        slice: &'a Slice,
        mut parts: Vec<WindowPart<'a>>,
        budget: u64,
    ) -> Result<ReversedMerge<'a>> {
        let mut windows = Windows {
            cmp: schema.comparator(),
            budget: budget.max(1),
            indexes: Vec::new(),
        };
        for (part, p) in parts.iter().enumerate() {
            // Pre-3.0 row indexes name cells, not rows: they set no edge.
            if p.header_only || p.sst.features().legacy_cells {
                continue;
            }
            if let Some(ri) = &p.handle.row_index {
                windows.indexes.push(WindowIndex {
                    part,
                    below: ri.block_count(),
                });
            }
        }
        let end = slice.end_prefix().as_ref().map(OwnedClustering::of);
        windows.move_to(&mut parts, end.as_ref())?;
        let n = parts.len();
        Ok(ReversedMerge {
            schema,
            partitioner,
            slice,
            parts,
            windows,
            upper: None,
            done: false,
            held: Vec::new(),
            read: 0,
            blocks: vec![None; n],
        })
    }

    /// The next unit (a row or a marker, in reverse clustering order, as the
    /// forward stream holds it); `None` after the slice start.
    pub fn next_unit(&mut self) -> Result<Option<Unit>> {
        loop {
            if let Some(u) = self.held.pop() {
                return Ok(Some(u));
            }
            if self.done {
                return Ok(None);
            }
            self.read_window()?;
        }
    }

    /// How many windows were read.
    pub fn windows_read(&self) -> usize {
        self.read
    }

    /// The row-index blocks sstable `number`'s sources read, over all the
    /// windows so far (`None`: none, or it is not in the merge).
    pub fn blocks_read(&self, number: usize) -> Option<Blocks> {
        let k = self.parts.iter().position(|p| p.number == number)?;
        self.blocks[k]
    }

    /// Merge the window below the last one read into `held`.
    fn read_window(&mut self) -> Result<()> {
        let cmp = self.windows.cmp.clone();
        let start = self.slice.start_prefix();
        let end = self.slice.end_prefix();
        let (lower, setter) = match self.windows.lower(&mut self.parts, start.as_ref())? {
            Some((l, part)) => (Some(l), Some(part)),
            None => (None, None),
        };
        // Row-index blocks out of clustering order could set the same edge
        // again: an error rather than a read that never ends.
        if let (Some(l), Some(u), Some(part)) = (&lower, &self.upper, setter) {
            if cmp.compare(&l.as_prefix(), &u.as_prefix()).is_ge() {
                let (sst, ri) = row_index(&mut self.parts, part)?;
                let (component, at) = ri.location();
                return Err(Error::at(
                    ErrorKind::BadValue(
                        "row index blocks are not in clustering order (a reversed window \
                         would not move down)"
                            .into(),
                    ),
                    component,
                    at,
                    "reversed merge window",
                )
                .in_file(&sst.path(component)));
            }
        }
        self.windows.move_to(&mut self.parts, lower.as_ref())?;
        // Each sstable's slice: from a block below the window (or the slice
        // start) to the window's end.
        let mut slices = Vec::with_capacity(self.parts.len());
        for k in 0..self.parts.len() {
            let from = match &lower {
                None => self.slice.start.clone(),
                Some(_) => match self.windows.margin(&mut self.parts, k)? {
                    Some(m)
                        if start
                            .as_ref()
                            .is_none_or(|s| cmp.compare(&m.as_prefix(), s).is_gt()) =>
                    {
                        Some(bound_of(&m, true))
                    }
                    _ => self.slice.start.clone(),
                },
            };
            let to = match &self.upper {
                None => self.slice.end.clone(),
                Some(u) => Some(bound_of(u, false)),
            };
            slices.push(Slice {
                start: from,
                end: to,
            });
        }
        let mut sources = Vec::with_capacity(self.parts.len());
        for ((p, s), blocks) in self.parts.iter_mut().zip(&slices).zip(&mut self.blocks) {
            let map = self.schema.column_map(p.header);
            let src = SliceSource::open(
                p.sst,
                p.header,
                &mut p.handle,
                s,
                p.header_only,
                map,
                p.number,
            )?;
            if !p.header_only {
                let plan = src.plan();
                if plan.blocks > 0 {
                    *blocks = Some(join(*blocks, (plan.block_range, plan.blocks)));
                }
            }
            sources.push(Box::new(src) as Box<dyn UnitSource + '_>);
        }
        let mut merger = Merger::new(sources, self.schema, self.partitioner.clone());
        if merger.next_partition()?.is_some() {
            while let Some(mut u) = merger.next_unfiltered()? {
                let pos = match &u {
                    Unit::Row(r) => r.clustering.as_prefix(),
                    Unit::Marker(m) => m.bound.as_prefix(),
                    _ => continue,
                };
                if lower
                    .as_ref()
                    .is_some_and(|l| cmp.compare(&pos, &l.as_prefix()).is_lt())
                {
                    continue;
                }
                if self
                    .upper
                    .as_ref()
                    .is_some_and(|e| cmp.compare(&pos, &e.as_prefix()).is_ge())
                {
                    break;
                }
                // The bounds the slice edges give carry no position or
                // source, as a clipped forward read gives them.
                let at_edge = [&start, &end]
                    .into_iter()
                    .flatten()
                    .any(|e| cmp.compare(&pos, e).is_eq());
                if let (Unit::Marker(m), true) = (&mut u, at_edge) {
                    m.position = Default::default();
                    m.source = 0;
                }
                self.held.push(u);
            }
        }
        drop(merger);
        self.read += 1;
        match lower {
            Some(l) => self.upper = Some(l),
            None => self.done = true,
        }
        Ok(())
    }
}

/// Blocks read so far and a window's, as one range.
fn join(so_far: Option<Blocks>, window: Blocks) -> Blocks {
    let (range, n) = window;
    let range = match so_far {
        Some((Some((a, b)), _)) => Some(match range {
            Some((c, d)) => (a.min(c), b.max(d)),
            None => (a, b),
        }),
        _ => range,
    };
    (range, n)
}

/// The windows of a [`ReversedMerge`], from the slice end down: each covers
/// at most `budget` bytes of every sstable's row-index blocks (at least
/// one), and starts at the first clustering of a block, as an inclusive
/// start bound.
struct Windows {
    cmp: ClusteringComparator,
    budget: u64,
    /// The sstables with a row index.
    indexes: Vec<WindowIndex>,
}

/// One sstable's row index in [`Windows`].
struct WindowIndex {
    /// Its part of the [`ReversedMerge`].
    part: usize,
    /// How many of its blocks start below the current edge.
    below: usize,
}

/// The sstable and row index of `part`.
fn row_index<'p>(
    parts: &'p mut [WindowPart<'_>],
    part: usize,
) -> Result<(&'p Sstable, &'p mut dyn RowIndex)> {
    let p = parts.get_mut(part).ok_or_else(lost)?;
    let ri = p.handle.row_index.as_deref_mut().ok_or_else(lost)?;
    Ok((p.sst, ri))
}

fn lost() -> Error {
    Error::new(
        ErrorKind::BadValue("a window's row index is gone".into()),
        "reversed merge window",
    )
}

impl Windows {
    /// How many of the first `below` blocks of index `k` start before `edge`.
    fn count_before(
        &self,
        parts: &mut [WindowPart<'_>],
        k: usize,
        below: usize,
        edge: &ClusteringPrefix<'_>,
    ) -> Result<usize> {
        let (sst, ri) = row_index(parts, self.indexes[k].part)?;
        // The edge moves down by about a window: found near `below`.
        gallop_down(0, below, &mut |i| {
            let b = ri.block(sst, i)?;
            Ok(self.cmp.compare(&b.first.as_prefix(), edge).is_lt())
        })
    }

    /// Move every index to `edge` (`None`: the partition end).
    fn move_to(
        &mut self,
        parts: &mut [WindowPart<'_>],
        edge: Option<&OwnedClustering>,
    ) -> Result<()> {
        for k in 0..self.indexes.len() {
            let n = self.indexes[k].below;
            let n = match edge {
                Some(e) => self.count_before(parts, k, n, &e.as_prefix())?,
                None => n,
            };
            self.indexes[k].below = n;
        }
        Ok(())
    }

    /// The lower edge of the window that ends at the current edge, and the
    /// part whose row index set it; `None` when that window reaches `start`
    /// (the slice's start).
    fn lower(
        &self,
        parts: &mut [WindowPart<'_>],
        start: Option<&ClusteringPrefix<'_>>,
    ) -> Result<Option<(OwnedClustering, usize)>> {
        let mut lower: Option<(OwnedClustering, usize)> = None;
        for x in &self.indexes {
            let Some(last) = x.below.checked_sub(1) else {
                continue;
            };
            let k = self.first_in_budget(parts, x.part, last)?;
            if k == 0 {
                // All of this sstable's part fits: it sets no edge.
                continue;
            }
            let (sst, ri) = row_index(parts, x.part)?;
            let first = ri.block(sst, k)?;
            let edge = OwnedClustering {
                kind: BoundKind::InclStartBound,
                values: first.first.values.clone(),
            };
            if lower
                .as_ref()
                .is_none_or(|(l, _)| self.cmp.compare(&edge.as_prefix(), &l.as_prefix()).is_gt())
            {
                lower = Some((edge, x.part));
            }
        }
        Ok(
            lower
                .filter(|(l, _)| start.is_none_or(|s| self.cmp.compare(&l.as_prefix(), s).is_gt())),
        )
    }

    /// The first of the blocks that end a window at block `last` of
    /// `part`: the lowest block whose data starts at most `budget` bytes
    /// below the end of `last` (`last` itself when that one alone is
    /// larger). Block offsets ascend, so a search over them decodes
    /// O(log n) blocks rather than every block below `last`, and galloping
    /// down from `last` keeps them in a few Index.db units.
    fn first_in_budget(
        &self,
        parts: &mut [WindowPart<'_>],
        part: usize,
        last: usize,
    ) -> Result<usize> {
        let (sst, ri) = row_index(parts, part)?;
        let top = ri.block(sst, last)?;
        let floor = top
            .offset
            .saturating_add(top.width)
            .saturating_sub(self.budget);
        gallop_down(0, last, &mut |i| Ok(ri.block(sst, i)?.offset < floor))
    }

    /// Where `part`'s source of the window above the current edge starts:
    /// the first clustering of its last block that starts before the edge,
    /// so that a range tombstone bound at the edge is read as it is stored
    /// (`None`: no such block).
    fn margin(&self, parts: &mut [WindowPart<'_>], part: usize) -> Result<Option<OwnedClustering>> {
        let Some(x) = self.indexes.iter().find(|x| x.part == part) else {
            return Ok(None);
        };
        let Some(b) = x.below.checked_sub(1) else {
            return Ok(None);
        };
        let (sst, ri) = row_index(parts, part)?;
        let first = ri.block(sst, b)?;
        Ok(Some(OwnedClustering {
            kind: BoundKind::InclStartBound,
            values: first.first.values.clone(),
        }))
    }
}

fn bound_of(c: &OwnedClustering, inclusive: bool) -> ClusteringBound {
    ClusteringBound {
        values: c.values.clone(),
        inclusive,
    }
}

/// The end of a forward stream of merged units, held to be handed out last
/// first: the last `limit` rows and the markers after the first of them.
/// What comes before the `limit`th row from the end is never output, so it
/// is dropped as rows arrive, and memory holds `limit` rows rather than
/// the stream.
#[derive(Debug)]
pub struct HeldTail {
    units: VecDeque<Unit>,
    rows: u64,
    limit: u64,
    /// Bytes of every unit pushed (dropped ones included), roughly.
    seen: u64,
}

impl HeldTail {
    /// An empty tail that keeps at most `limit` rows.
    pub fn new(limit: u64) -> HeldTail {
        HeldTail {
            units: VecDeque::new(),
            rows: 0,
            limit,
            seen: 0,
        }
    }

    /// Hold `u` (the next forward unit).
    pub fn push(&mut self, u: Unit) {
        self.seen += match &u {
            Unit::Row(r) => r.size + 64,
            _ => 64,
        };
        if self.limit == 0 {
            return;
        }
        if matches!(u, Unit::Row(_)) {
            if self.rows == self.limit {
                // The oldest row, the markers before it and those up to the next row.
                while let Some(f) = self.units.pop_front() {
                    if matches!(f, Unit::Row(_)) {
                        break;
                    }
                }
                while self
                    .units
                    .front()
                    .is_some_and(|f| !matches!(f, Unit::Row(_)))
                {
                    self.units.pop_front();
                }
                self.rows -= 1;
            }
            self.rows += 1;
        }
        self.units.push_back(u);
    }

    /// Roughly the bytes of all the units pushed so far.
    pub fn bytes_seen(&self) -> u64 {
        self.seen
    }

    /// The last unit held (the next one of the reversed stream).
    pub fn pop_back(&mut self) -> Option<Unit> {
        self.units.pop_back()
    }
}
