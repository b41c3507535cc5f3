//! Merged reads: the partitions of several sstables of one table, reconciled
//! the way Cassandra's read path and compaction do, as one stream.
//!
//! ```text
//! sstable 1 ─► UnitSource ─┐
//! sstable 2 ─► UnitSource ─┼─► Merger ─► PartitionStart, static row, rows and
//! sstable N ─► UnitSource ─┘             range tombstone markers, in order
//! ```
//!
//! * [`MergedSchema`]: the union of the sstables' serialization headers
//!   (columns added over time); sstables whose key or clustering types, or
//!   a column's type, differ are of different tables and refused.
//! * [`UnitSource`]: one sstable's partitions as units ([`ScanSource`] over
//!   a [`ScanReader`](crate::data::ScanReader), [`VecSource`] for tests), their columns mapped onto
//!   the merged schema. A [`ScanSource`] whose columns are the merged ones
//!   hands out clustered rows as [`Unit::Held`]: only the clustering is
//!   copied, and the row is decoded from the reader's window when needed.
//! * [`Merger`]: a k-way merge of partitions in token (decorated key) order
//!   and, within a partition, of rows and markers in clustering order (the
//!   table's comparator, so `DESC` columns are respected). Memory is the
//!   current unit of each source: a partition is never held whole. A row
//!   only one source has, under no deletion, can be passed through as
//!   stored ([`Merger::next_merged`]); the others are reconciled owned.
//!
//! Reconciliation ([`reconcile`]; C\* `UnfilteredRowIterators.merge`,
//! `Row.Merger`, `RangeTombstoneMarker.Merger`):
//!
//! * the partition deletion is the one that supersedes the others;
//! * range tombstone markers of all sources give, at each bound, the
//!   largest deletion open in any source; it is emitted as a bound or
//!   boundary marker whenever it changes (unless the partition deletion
//!   covers it), as compaction writes them;
//! * a row's liveness, deletion, cells and complex deletions are each
//!   reconciled, then whatever the active deletion (row, range or
//!   partition) shadows is dropped; a shadowable row deletion older than
//!   the row's liveness is dropped; an empty merged row is dropped;
//! * cells: [`reconcile::reconcile_cells`] (timestamp, then Cassandra 5.0's
//!   tie-breaks); counter contexts merge shard by shard.
//!
//! Tombstones are kept (as compaction keeps them before gc_grace) and
//! nothing is purged or converted at a clock: reconciliation does not
//! depend on the time (CASSANDRA-14592); expiry is evaluated by whoever
//! renders the stream, at `--now`.

pub mod explain;
pub mod reconcile;
mod rows;
mod schema;
mod seek;
mod sources;
mod units;
mod windows;

pub use schema::{ColumnMap, MergedSchema};
pub use seek::SliceSource;
pub use sources::{unit_of, ScanSource, UnitSource, VecSource};
pub use units::{HeldRow, MCell, MColumnData, MMarker, MRow, Unit};
pub use windows::{Blocks, HeldTail, ReversedMerge, WindowPart};

use rows::{merge_borrowed, merged_flags, pick, row_header};

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;

use std::cmp::Ordering;

use crate::clustering::BoundKind;
use crate::compare::{ClusteringComparator, OwnedPrefix, PrefixLike};
use crate::data::{reuse, DataPos, Fragment, LazyRow, MarkerDeletion, Row, Spare};
use crate::deletion::DeletionTime;
use crate::error::{Error, ErrorKind, Result};
use crate::read::OwnedClustering;
use crate::token::{Partitioner, Token};
use crate::types::CqlType;

use reconcile::{deletes, max_deletion, supersedes};

/// What [`Merger::next_merged`] yields.
#[derive(Debug)]
pub enum Merged {
    /// A merged row or marker, owned.
    Unit(Unit),
    /// A row only this source has, under no deletion: it is output as it
    /// is stored, borrowed from the source ([`Merger::passed_row`]).
    Passed(usize),
}

/// A row [`Merger::next_merged_with`] hands over.
// Matched where it is made, never stored: boxing the row would allocate per row.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum RowOut<'r, 'a> {
    /// A row only one source has, as stored (its columns not decoded yet).
    Stored(LazyRow<'a>),
    /// Versions of a row reconciled on their borrowed cells.
    Merged(&'r Row<'a>),
}

/// What [`Merger::merge_next`] found.
enum Outcome {
    Merged(Merged),
    /// Versions of a row, all held in their sources (`Merger::versions`), to
    /// be reconciled under this active deletion.
    Versions(DeletionTime),
}

/// The start of a merged partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergedStart {
    /// Serialized key.
    pub key: Vec<u8>,
    /// The reconciled partition deletion.
    pub deletion: DeletionTime,
    /// The merged static row, if any is left.
    pub static_row: Option<MRow>,
    /// The sources that hold the partition.
    pub sources: Vec<usize>,
    /// Where the header and static row end in the first of them
    /// (sstabledump's partition position).
    pub header_end: DataPos,
}

/// The k-way merge (see the module docs).
pub struct Merger<'a> {
    sources: Vec<Box<dyn UnitSource + 'a>>,
    heads: Vec<Option<Unit>>,
    cmp: ClusteringComparator,
    partitioner: Partitioner,
    /// Sources taking part in the current partition.
    active: Vec<usize>,
    /// Active sources whose head is a row or marker, smallest head first.
    queue: Vec<usize>,
    /// Active sources whose head was taken: refilled and queued by the next
    /// [`Merger::next_merged`].
    stale: Vec<usize>,
    /// The head of `queue[0]` is known to sort strictly before the others.
    front_unique: bool,
    /// The regular columns have no collections and no counters: versions of
    /// a row held in their sources can be reconciled on borrowed cells.
    borrowable: bool,
    /// The sources of the row versions [`Outcome::Versions`] left held.
    versions: Vec<usize>,
    /// (column, version, cell) of the versions being reconciled.
    cells_buf: Vec<(usize, usize, usize)>,
    /// The lists [`Merger::reconcile_borrowed`] fills for every row, kept
    /// from row to row: the versions (empty), their allocations on their
    /// way back to their sources, and the merged row's cells.
    rows_buf: Vec<Row<'static>>,
    spares_buf: Vec<Spare>,
    spare: Spare,
    /// The versions of a row or marker being merged (kept from unit to unit).
    group: Vec<(usize, Unit)>,
    /// Per source: a clustering buffer for the next row
    /// [`Merger::next_merged_with`] holds (a source has one row in flight).
    keys: Vec<Option<OwnedPrefix>>,
    partition_deletion: DeletionTime,
    /// Per source: the range deletion open in it.
    open: Vec<DeletionTime>,
    /// The range deletion open in the merged stream.
    merged_open: DeletionTime,
    /// Complex path comparators per merged regular/static column.
    path_types: (Vec<Option<CqlType>>, Vec<Option<CqlType>>),
    /// `--explain`: where the records go, and what explains them.
    explain: Option<Explaining<'a>>,
}

/// The state of an explained merge (none of it exists when not explaining).
struct Explaining<'a> {
    out: Box<dyn explain::Explainer + 'a>,
    /// Expiry is judged at this time (seconds).
    now_secs: i64,
    /// The source of the partition deletion.
    partition_source: usize,
    /// Per source: the bound that opened its current range deletion.
    open_bound: Vec<Option<OwnedClustering>>,
}

impl std::fmt::Debug for Merger<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Merger")
            .field("sources", &self.sources.len())
            .field("active", &self.active)
            .finish()
    }
}

impl<'a> Merger<'a> {
    /// Data.db bytes read so far and in all, summed over the sources.
    pub fn progress(&self) -> (u64, u64) {
        self.sources.iter().fold((0, 0), |(d, t), s| {
            let (sd, st) = s.progress();
            (d + sd, t + st)
        })
    }

    /// Merge `sources` (each in Data.db order, columns already mapped onto
    /// `schema`).
    pub fn new(
        sources: Vec<Box<dyn UnitSource + 'a>>,
        schema: &MergedSchema,
        partitioner: Partitioner,
    ) -> Merger<'a> {
        let n = sources.len();
        let paths = |s: &crate::data::ColumnSet| {
            s.columns()
                .iter()
                .map(|c| c.complex.then(|| c.ty().path_type()).flatten())
                .collect()
        };
        Merger {
            sources,
            heads: vec![None; n],
            cmp: schema.comparator(),
            partitioner,
            active: Vec::new(),
            queue: Vec::with_capacity(n),
            stale: Vec::with_capacity(n),
            front_unique: false,
            borrowable: schema
                .data
                .regular_columns
                .columns()
                .iter()
                .all(|c| !c.complex && !c.counter),
            versions: Vec::with_capacity(n),
            cells_buf: Vec::new(),
            rows_buf: Vec::new(),
            spares_buf: Vec::new(),
            spare: Spare::default(),
            group: Vec::new(),
            keys: vec![None; n],
            partition_deletion: DeletionTime::LIVE,
            open: vec![DeletionTime::LIVE; n],
            merged_open: DeletionTime::LIVE,
            path_types: (
                paths(&schema.data.static_columns),
                paths(&schema.data.regular_columns),
            ),
            explain: None,
        }
    }

    /// Explain the merge (`--explain`): every reconciled item is recorded
    /// to `out` as it is merged, with expiry judged at `now_secs`.
    pub fn explain(&mut self, out: Box<dyn explain::Explainer + 'a>, now_secs: i64) {
        self.explain = Some(Explaining {
            out,
            now_secs,
            partition_source: 0,
            open_bound: vec![None; self.sources.len()],
        });
    }

    /// The deletion that shadows rows at the current position (range, else
    /// partition), and its source (`--explain`).
    fn active_deleter(&self) -> Option<explain::Deleter> {
        let x = self.explain.as_ref()?;
        if self.merged_open.is_live() {
            return self.partition_deleter();
        }
        let source = self
            .active
            .iter()
            .copied()
            .find(|&i| self.open[i] == self.merged_open)?;
        Some(explain::Deleter {
            kind: explain::DeletionKind::Range,
            source,
            time: self.merged_open,
            bound: x.open_bound.get(source).cloned().flatten(),
        })
    }

    fn partition_deleter(&self) -> Option<explain::Deleter> {
        let x = self.explain.as_ref()?;
        (!self.partition_deletion.is_live()).then_some(explain::Deleter {
            kind: explain::DeletionKind::Partition,
            source: x.partition_source,
            time: self.partition_deletion,
            bound: None,
        })
    }

    /// Record the explanation of one row's versions.
    fn explain_row(&mut self, rows: &[MRow], active: Option<explain::Deleter>) {
        if let Some(x) = self.explain.as_mut() {
            explain::explain_row(rows, active, x.now_secs, x.out.as_mut());
        }
    }

    /// Load source `i`'s next unit into its head, if not there yet.
    fn fill(&mut self, i: usize) -> Result<()> {
        if self.heads[i].is_none() {
            self.heads[i] = self.sources[i].next_unit()?;
        }
        Ok(())
    }

    fn peek(&mut self, i: usize) -> Result<Option<&Unit>> {
        self.fill(i)?;
        Ok(self.heads[i].as_ref())
    }

    fn take(&mut self, i: usize) -> Option<Unit> {
        self.heads[i].take()
    }

    fn unexpected(what: &str) -> Error {
        Error::new(ErrorKind::BadValue(what.to_string()), "merge")
    }

    /// The next merged partition (its header and static row); then call
    /// [`Merger::next_unfiltered`] until it returns `None`. Partitions not
    /// read to their end are skipped.
    pub fn next_partition(&mut self) -> Result<Option<MergedStart>> {
        match self.next_key()? {
            Some(key) => self.start_partition(key).map(Some),
            None => Ok(None),
        }
    }

    /// [`Merger::next_partition`] when its token is at most `upto`; `None`
    /// (nothing taken: every source's head is its next partition's start,
    /// [`Merger::head_positions`]) when it is past it or there is none.
    pub fn next_partition_upto(&mut self, upto: &Token) -> Result<Option<MergedStart>> {
        let Some(key) = self.next_key()? else {
            return Ok(None);
        };
        if self.partitioner.token(&key).partial_cmp(upto) == Some(Ordering::Greater) {
            return Ok(None);
        }
        self.start_partition(key).map(Some)
    }

    /// Where each source's next partition starts (`None`: the source is at
    /// its end), once [`Merger::next_partition_upto`] stopped before it.
    pub fn head_positions(&self) -> Vec<Option<DataPos>> {
        self.heads
            .iter()
            .map(|h| match h {
                Some(Unit::Start { position, .. }) => Some(*position),
                _ => None,
            })
            .collect()
    }

    /// The key of the next merged partition (the current one skipped to its end).
    fn next_key(&mut self) -> Result<Option<Vec<u8>>> {
        while !self.active.is_empty() {
            if self.next_merged(true)?.is_none() {
                break;
            }
        }
        let mut min: Option<(usize, Vec<u8>)> = None;
        for i in 0..self.sources.len() {
            self.fill(i)?;
            match self.heads[i].as_ref() {
                None => {}
                Some(Unit::Start { key, .. }) => {
                    let better = match &min {
                        None => true,
                        Some((_, m)) => self.partitioner.compare_decorated(key, m).is_lt(),
                    };
                    if better {
                        min = Some((i, key.clone()));
                    }
                }
                Some(_) => return Err(Self::unexpected("expected a partition start")),
            }
        }
        Ok(min.map(|(_, key)| key))
    }

    /// Take the partition of `key` from the sources whose head it is.
    fn start_partition(&mut self, key: Vec<u8>) -> Result<MergedStart> {
        self.active.clear();
        let mut deletion = DeletionTime::LIVE;
        let mut header_end = None;
        let mut deletions: Vec<(usize, DeletionTime)> = Vec::new();
        for i in 0..self.sources.len() {
            if let Some(Unit::Start { key: k, .. }) = self.heads[i].as_ref() {
                if *k == key {
                    if let Some(Unit::Start {
                        deletion: d,
                        header_end: he,
                        ..
                    }) = self.take(i)
                    {
                        deletion = max_deletion(deletion, d);
                        header_end.get_or_insert(he);
                        if self.explain.is_some() && !d.is_live() {
                            deletions.push((i, d));
                        }
                    }
                    self.active.push(i);
                }
            }
        }
        self.partition_deletion = deletion;
        self.merged_open = DeletionTime::LIVE;
        for o in &mut self.open {
            *o = DeletionTime::LIVE;
        }
        if let Some(x) = self.explain.as_mut() {
            let won = explain::explain_deletions(&deletions);
            if let Some((w, _)) = &won {
                x.partition_source = w.source;
            }
            let (winner, shadowed) = won.map_or((None, Vec::new()), |(w, s)| (Some(w), s));
            x.out.record(&explain::Explained {
                item: explain::Item::Partition { key: key.clone() },
                clustering: None,
                winner,
                absent: None,
                shadowed,
            });
            x.open_bound.iter_mut().for_each(|b| *b = None);
        }
        let mut statics = Vec::new();
        for k in 0..self.active.len() {
            let i = self.active[k];
            if matches!(self.peek(i)?, Some(Unit::Static(_))) {
                if let Some(Unit::Static(r)) = self.take(i) {
                    statics.push(*r);
                }
            }
        }
        // An empty static row still ends the header where it is stored.
        let static_end = statics.first().map(|r| DataPos(r.position.0 + r.size));
        let static_row = if statics.is_empty() {
            None
        } else {
            if self.explain.is_some() {
                self.explain_row(&statics, self.partition_deleter());
            }
            self.merge_rows(statics, deletion, true)
        };
        let header_end = match static_end {
            Some(e) => e,
            None => header_end.unwrap_or_default(),
        };
        self.queue.clear();
        self.front_unique = false;
        self.stale.clear();
        self.stale.extend_from_slice(&self.active);
        Ok(MergedStart {
            key,
            deletion,
            static_row,
            sources: self.active.clone(),
            header_end,
        })
    }

    /// The next merged row or marker of the current partition; `None` at
    /// its end.
    pub fn next_unfiltered(&mut self) -> Result<Option<Unit>> {
        match self.next_merged(false)? {
            None => Ok(None),
            Some(Merged::Unit(u)) => Ok(Some(u)),
            Some(Merged::Passed(_)) => Err(Self::unexpected("a passed row was not asked for")),
        }
    }

    /// [`Merger::next_unfiltered`]; with `pass`, a row that only one source
    /// has, under no deletion, comes as [`Merged::Passed`]: read it with
    /// [`Merger::passed_row`] before the next call. Its decoding is then
    /// the caller's, and it is not copied. Never when explaining.
    pub fn next_merged(&mut self, pass: bool) -> Result<Option<Merged>> {
        Ok(match self.merge_next(pass, false)? {
            None => None,
            Some(Outcome::Merged(m)) => Some(m),
            Some(Outcome::Versions(_)) => return Err(Self::unexpected("versions not asked for")),
        })
    }

    /// [`Merger::next_merged`]; with `borrow`, the versions of a row that
    /// are all held in their sources are left there (in `versions`) for
    /// [`Merger::reconcile_borrowed`].
    fn merge_next(&mut self, pass: bool, borrow: bool) -> Result<Option<Outcome>> {
        let borrow = borrow && self.borrowable && self.explain.is_none();
        loop {
            if self.active.is_empty() {
                return Ok(None);
            }
            self.queue_stale(0)?;
            if self.queue.is_empty() {
                // Every source is at the partition end.
                for k in 0..self.active.len() {
                    let i = self.active[k];
                    self.take(i);
                }
                self.active.clear();
                return Ok(None);
            }
            // The smallest head, and every head equal to it.
            let m = self.queue.remove(0);
            let unique = std::mem::replace(&mut self.front_unique, false);
            self.stale.push(m);
            let Some(head) = self.take(m) else {
                continue;
            };
            let mut group = std::mem::take(&mut self.group);
            group.clear();
            while let Some(&i) = self.queue.first().filter(|_| !unique) {
                let eq = self.heads[i]
                    .as_ref()
                    .is_some_and(|a| self.compare(a, &head).is_eq());
                if !eq {
                    break;
                }
                self.queue.remove(0);
                self.stale.push(i);
                if let Some(u) = self.take(i) {
                    let u = if borrow { u } else { self.own(i, u)? };
                    group.push((i, u));
                }
            }
            let all_held = matches!(head, Unit::Held(_))
                && group.iter().all(|(_, u)| matches!(u, Unit::Held(_)));
            if borrow && all_held {
                let active = self.active_deletion();
                if let (true, Unit::Held(h)) = (group.is_empty(), &head) {
                    if pass && h.marked && active.is_live() {
                        if let Unit::Held(h) = head {
                            self.recycle_held(m, h);
                        }
                        self.group = group;
                        return Ok(Some(Outcome::Merged(Merged::Passed(m))));
                    }
                }
                self.versions.clear();
                for (i, u) in std::iter::once((m, head)).chain(group.drain(..)) {
                    if let Unit::Held(h) = u {
                        self.recycle_held(i, h);
                        self.versions.push(i);
                    }
                }
                self.group = group;
                // Source order: ties between versions go to the earlier source.
                self.versions.sort_unstable();
                return Ok(Some(Outcome::Versions(active)));
            }
            if borrow {
                for (i, u) in group.iter_mut() {
                    if matches!(u, Unit::Held(_)) {
                        let h = std::mem::replace(u, Unit::End);
                        *u = self.own(*i, h)?;
                    }
                }
            }
            if group.is_empty() && self.explain.is_none() {
                // One version: no copy when it can be output as stored.
                self.group = group;
                let active = self.active_deletion();
                match head {
                    Unit::Held(h) if pass && h.marked && active.is_live() => {
                        self.recycle_held(m, h);
                        return Ok(Some(Outcome::Merged(Merged::Passed(m))));
                    }
                    Unit::Held(h) => {
                        let row = self.sources[m].materialize(h)?;
                        if let Some(r) = self.merge_one(row, active) {
                            return Ok(Some(Outcome::Merged(Merged::Unit(Unit::Row(Box::new(r))))));
                        }
                        continue;
                    }
                    Unit::Row(row) => {
                        if let Some(r) = self.merge_one(*row, active) {
                            return Ok(Some(Outcome::Merged(Merged::Unit(Unit::Row(Box::new(r))))));
                        }
                        continue;
                    }
                    head => group = vec![(m, head)],
                }
            } else {
                let head = self.own(m, head)?;
                group.push((m, head));
            }
            // Source order: ties between versions go to the earlier source.
            group.sort_by_key(|(i, _)| *i);
            let out = if matches!(group.first(), Some((_, Unit::Marker(_)))) {
                self.merge_markers(group).map(|m| Unit::Marker(Box::new(m)))
            } else {
                let active = self.active_deletion();
                let rows: Vec<MRow> = group
                    .into_iter()
                    .filter_map(|(_, u)| match u {
                        Unit::Row(r) => Some(*r),
                        _ => None,
                    })
                    .collect();
                if self.explain.is_some() {
                    self.explain_row(&rows, self.active_deleter());
                }
                self.merge_rows(rows, active, false)
                    .map(|r| Unit::Row(Box::new(r)))
            };
            if let Some(u) = out {
                return Ok(Some(Outcome::Merged(Merged::Unit(u))));
            }
        }
    }

    /// [`Merger::next_merged`] with `pass`, rows handed to `out` instead
    /// of returned owned: a row only one source has, under no deletion, as
    /// stored; versions of a row that are all held in their sources (tables
    /// without collections or counters), reconciled on their borrowed cells.
    /// Each row given to `out` (none when every version is shadowed) is
    /// followed by [`Merged::Passed`]. When the previous result left only
    /// one source to read and its next row sorts before every other
    /// source's head, that row is decoded once and handed over at once.
    pub fn next_merged_with<E: From<Error>>(
        &mut self,
        out: &mut impl FnMut(RowOut<'_, '_>) -> std::result::Result<(), E>,
    ) -> std::result::Result<Option<Merged>, E> {
        if self.stale.len() > 1 && self.explain.is_none() && self.active_deletion().is_live() {
            // Queue all sources but one (the lowest-numbered), whose next row
            // may then be read whole and handed over at once.
            if let Some(k) = (0..self.stale.len()).min_by_key(|&k| self.stale[k]) {
                self.stale.swap(0, k);
            }
            self.queue_stale(1)?;
        }
        if let [m] = self.stale[..] {
            if self.heads[m].is_none() && self.explain.is_none() && self.active_deletion().is_live()
            {
                let mut spare = None;
                let mut head = None;
                let mut unit = None;
                match self.sources[m].next_row(&mut unit) {
                    Err(e) => return Err(e.into()),
                    Ok(Some(mut r)) => {
                        let marked = r.liveness.is_some() || r.deletion.is_some();
                        let first = self.queue.first().and_then(|&q| self.heads[q].as_ref());
                        let below = first
                            .and_then(Key::of)
                            .is_none_or(|k| self.cmp.compare_any(&r.clustering, &k).is_lt());
                        if marked && below {
                            out(RowOut::Stored(r))?;
                            return Ok(Some(Merged::Passed(m)));
                        }
                        // Held: its clustering copied into a reused buffer, and
                        // the decoded values' list given back to the reader.
                        let mut clustering = self.keys[m].take().unwrap_or_default();
                        clustering.set(&r.clustering);
                        head = Some(r.head());
                        let mut s = Spare::default();
                        s.keep_values(std::mem::take(&mut r.clustering.values));
                        spare = Some(s);
                        self.heads[m] = Some(Unit::Held(HeldRow { clustering, marked }));
                    }
                    Ok(None) => self.heads[m] = unit,
                }
                if let Some(s) = spare {
                    self.sources[m].recycle_spare(s);
                }
                if let Some(h) = head {
                    self.sources[m].keep_head(h);
                }
            }
        }
        loop {
            match self.merge_next(true, true)? {
                None => return Ok(None),
                Some(Outcome::Merged(Merged::Passed(m))) => {
                    out(RowOut::Stored(self.passed_row(m)?))?;
                    return Ok(Some(Merged::Passed(m)));
                }
                Some(Outcome::Merged(other)) => return Ok(Some(other)),
                Some(Outcome::Versions(active)) => {
                    if let Some(m) = self.reconcile_borrowed(active, out)? {
                        return Ok(Some(Merged::Passed(m)));
                    }
                }
            }
        }
    }

    /// `Row.Merger.merge` of the versions [`Outcome::Versions`] left held
    /// (simple, non-counter columns), on their borrowed cells: the merged
    /// row goes to `out`; its first source, or `None` when nothing is left.
    fn reconcile_borrowed<E: From<Error>>(
        &mut self,
        active: DeletionTime,
        out: &mut impl FnMut(RowOut<'_, '_>) -> std::result::Result<(), E>,
    ) -> std::result::Result<Option<usize>, E> {
        let mut rows: Vec<Row<'_>> = reuse(std::mem::take(&mut self.rows_buf));
        for &i in &self.versions {
            rows.push(self.sources[i].held_row()?.into_decoded()?);
        }
        let cells = self.spare.take_cells();
        let merged = merge_borrowed(&mut rows, active, cells, &mut self.cells_buf)?;
        let first = self.versions.first().copied();
        let written = match &merged {
            Some(r) => {
                out(RowOut::Merged(r))?;
                first
            }
            None => None,
        };
        if let Some(r) = merged {
            // Its clustering is the first version's (given back with it).
            self.spare.keep_cells(r.cells);
            if let Some(f) = rows.first_mut() {
                f.clustering = r.clustering;
            }
        }
        // The allocations go back to the readers they came from.
        self.spares_buf.clear();
        for r in rows.drain(..) {
            self.spares_buf.push(Fragment::Row(r).into_spare());
        }
        self.rows_buf = reuse(rows);
        for (k, spare) in self.spares_buf.drain(..).enumerate() {
            let i = self.versions[k];
            self.sources[i].recycle_spare(spare);
        }
        Ok(written)
    }

    /// The row of [`Merged::Passed`]`(source)`, as stored.
    pub fn passed_row(&self, source: usize) -> Result<LazyRow<'_>> {
        match self.sources.get(source) {
            Some(s) => s.held_row(),
            None => Err(Self::unexpected("no such source")),
        }
    }

    /// Queue the sources whose head was taken, in head order, but for the
    /// first `keep` of them.
    fn queue_stale(&mut self, keep: usize) -> Result<()> {
        while self.stale.len() > keep {
            let Some(i) = self.stale.pop() else {
                break;
            };
            self.fill(i)?;
            match self.heads[i].as_ref() {
                None => return Err(Self::unexpected("the data ends inside a partition")),
                Some(Unit::End) => {}
                Some(Unit::Start { .. }) | Some(Unit::Static(_)) => {
                    return Err(Self::unexpected(
                        "partition start or static row inside a partition",
                    ))
                }
                Some(u) => {
                    // Most often the source that moved is still first:
                    // one compare then, and none for the group below.
                    let first = self.queue.first().and_then(|&q| self.heads[q].as_ref());
                    if first.is_none_or(|h| self.compare(u, h).is_lt()) {
                        self.queue.insert(0, i);
                        self.front_unique = true;
                        continue;
                    }
                    let at = self
                        .queue
                        .partition_point(|&q| match self.heads[q].as_ref() {
                            Some(h) => self.compare(h, u).is_le(),
                            None => true,
                        });
                    self.queue.insert(at, i);
                    self.front_unique = false;
                }
            }
        }
        Ok(())
    }

    /// Take back held row `h` of source `i`: its clustering buffer goes to
    /// the source's slot for the rows [`Merger::next_merged_with`] holds,
    /// else back to the source (buffers stay with their source, so none
    /// runs out while another drops them).
    fn recycle_held(&mut self, i: usize, h: HeldRow) {
        match &mut self.keys[i] {
            slot @ None => *slot = Some(h.clustering),
            Some(_) => self.sources[i].recycle(h),
        }
    }

    /// `u` (just taken from source `i`) owned: a held row decoded.
    fn own(&mut self, i: usize, u: Unit) -> Result<Unit> {
        Ok(match u {
            Unit::Held(h) => Unit::Row(Box::new(self.sources[i].materialize(h)?)),
            u => u,
        })
    }

    /// [`Merger::merge_rows`] of a single version.
    fn merge_one(&self, row: MRow, active: DeletionTime) -> Option<MRow> {
        if active.is_live() {
            return Some(row).filter(|r| !r.is_empty());
        }
        self.merge_rows(vec![row], active, false)
    }

    fn compare(&self, a: &Unit, b: &Unit) -> Ordering {
        match (Key::of(a), Key::of(b)) {
            (Some(x), Some(y)) => self.cmp.compare_any(&x, &y),
            _ => Ordering::Equal,
        }
    }

    /// `RangeTombstoneMarker.Merger.activeDeletion`.
    fn active_deletion(&self) -> DeletionTime {
        if self.merged_open.is_live() {
            self.partition_deletion
        } else {
            self.merged_open
        }
    }

    /// `RangeTombstoneMarker.Merger.merge`: the markers at one position.
    fn merge_markers(&mut self, group: Vec<(usize, Unit)>) -> Option<MMarker> {
        let mut first: Option<MMarker> = None;
        let mut inputs = Vec::new();
        for (i, u) in group {
            if let Unit::Marker(m) = u {
                let opens = m.open();
                if let Some(x) = self.explain.as_mut() {
                    let closes = match m.deletion {
                        MarkerDeletion::Boundary { end, .. } => end,
                        MarkerDeletion::Bound(d) if !m.bound.kind.is_start() => d,
                        MarkerDeletion::Bound(_) => DeletionTime::LIVE,
                    };
                    inputs.push((i, opens, closes));
                    x.open_bound[i] = (!opens.is_live()).then(|| m.bound.clone());
                }
                self.open[i] = opens;
                if first.is_none() {
                    first = Some(*m);
                }
            }
        }
        let first = first?;
        let mut biggest = DeletionTime::LIVE;
        for &i in &self.active {
            biggest = max_deletion(biggest, self.open[i]);
        }
        // Only open in the merged stream when the partition deletion does not
        // cover it.
        let new = if supersedes(&self.partition_deletion, &biggest) {
            DeletionTime::LIVE
        } else {
            biggest
        };
        let prev = self.merged_open;
        self.merged_open = new;
        if self.explain.is_some() {
            let open = if new.is_live() {
                None
            } else {
                self.active_deleter()
            };
            let partition = self.partition_deleter();
            if let Some(x) = self.explain.as_mut() {
                explain::explain_markers(&first.bound, &inputs, open, partition, x.out.as_mut());
            }
        }
        if prev == new {
            return None;
        }
        let before = matches!(
            first.bound.kind,
            BoundKind::ExclEndBound
                | BoundKind::InclStartBound
                | BoundKind::ExclEndInclStartBoundary
        );
        let (kind, deletion) = if prev.is_live() {
            let k = if before {
                BoundKind::InclStartBound
            } else {
                BoundKind::ExclStartBound
            };
            (k, MarkerDeletion::Bound(new))
        } else if new.is_live() {
            let k = if before {
                BoundKind::ExclEndBound
            } else {
                BoundKind::InclEndBound
            };
            (k, MarkerDeletion::Bound(prev))
        } else {
            let k = if before {
                BoundKind::ExclEndInclStartBoundary
            } else {
                BoundKind::InclEndExclStartBoundary
            };
            (
                k,
                MarkerDeletion::Boundary {
                    end: prev,
                    start: new,
                },
            )
        };
        Some(MMarker {
            position: first.position,
            source: first.source,
            bound: OwnedClustering {
                kind,
                values: first.bound.values,
            },
            deletion,
        })
    }

    /// `Row.Merger.merge`: the versions of one row under `active`.
    fn merge_rows(
        &self,
        mut rows: Vec<MRow>,
        mut active: DeletionTime,
        is_static: bool,
    ) -> Option<MRow> {
        if rows.len() == 1 && active.is_live() {
            return rows.pop().filter(|r| !r.is_empty());
        }
        let (liveness, deletion, scylla) = row_header(
            rows.iter()
                .map(|r| (r.liveness, r.deletion, r.scylla_shadowable_deletion)),
            &mut active,
        );
        let mut it = rows.into_iter();
        let first = it.next()?;
        let (position, size, source, clustering) =
            (first.position, first.size, first.source, first.clustering);
        let mut columns: Vec<MColumnData> = first.cells;
        for r in it {
            columns.extend(r.cells);
        }
        // Stable: versions of one column stay in source order.
        columns.sort_by_key(MColumnData::column);
        let mut cells = Vec::new();
        let mut iter = columns.into_iter().peekable();
        while let Some(cd) = iter.next() {
            let col = cd.column();
            let mut versions = vec![cd];
            while iter.peek().is_some_and(|n| n.column() == col) {
                versions.extend(iter.next());
            }
            if let Some(m) = self.merge_column(versions, active, is_static) {
                cells.push(m);
            }
        }
        let row = MRow {
            position,
            size,
            source,
            clustering,
            liveness,
            deletion,
            scylla_shadowable_deletion: scylla,
            cells,
        };
        (!row.is_empty() || row.scylla_shadowable_deletion.is_some()).then_some(row)
    }

    fn merge_column(
        &self,
        versions: Vec<MColumnData>,
        active: DeletionTime,
        is_static: bool,
    ) -> Option<MColumnData> {
        let column = versions.first()?.column();
        if matches!(versions.first(), Some(MColumnData::Simple { .. })) {
            let mut best: Option<MCell> = None;
            for v in versions {
                let MColumnData::Simple { cell, .. } = v else {
                    continue;
                };
                best = Some(match best {
                    None => cell,
                    Some(b) => pick(b, cell),
                });
            }
            let cell = best.filter(|c| !deletes(&active, c.timestamp))?;
            return Some(MColumnData::Simple { column, cell });
        }
        let mut complex_deletion = DeletionTime::LIVE;
        let mut all: Vec<MCell> = Vec::new();
        for v in versions {
            if let MColumnData::Complex {
                deletion, cells, ..
            } = v
            {
                if let Some(d) = deletion {
                    complex_deletion = max_deletion(complex_deletion, d);
                }
                all.extend(cells);
            }
        }
        let cell_deletion = if supersedes(&complex_deletion, &active) {
            complex_deletion
        } else {
            complex_deletion = DeletionTime::LIVE;
            active
        };
        let types = if is_static {
            &self.path_types.0
        } else {
            &self.path_types.1
        };
        let pt = types.get(column).and_then(Option::as_ref);
        let cmp_path = |a: &MCell, b: &MCell| -> Ordering {
            let (pa, pb) = (
                a.path.as_deref().unwrap_or(&[]),
                b.path.as_deref().unwrap_or(&[]),
            );
            match pt {
                Some(t) => crate::compare::compare_value(t, pa, pb),
                None => pa.cmp(pb),
            }
        };
        all.sort_by(cmp_path);
        let mut cells: Vec<MCell> = Vec::with_capacity(all.len());
        for c in all {
            match cells.last_mut() {
                Some(last) if cmp_path(last, &c).is_eq() => {
                    let l = std::mem::replace(last, c.clone());
                    *last = pick(l, c);
                }
                _ => cells.push(c),
            }
        }
        cells.retain(|c| !deletes(&cell_deletion, c.timestamp));
        if cells.is_empty() && complex_deletion.is_live() {
            return None;
        }
        Some(MColumnData::Complex {
            column,
            deletion: (!complex_deletion.is_live()).then_some(complex_deletion),
            cells,
        })
    }
}

/// Where a unit sorts in its partition: a row's clustering or a marker's
/// bound, borrowed.
enum Key<'u> {
    Owned(&'u OwnedClustering),
    Held(&'u OwnedPrefix),
}

impl<'u> Key<'u> {
    fn of(u: &'u Unit) -> Option<Key<'u>> {
        match u {
            Unit::Row(r) => Some(Key::Owned(&r.clustering)),
            Unit::Marker(m) => Some(Key::Owned(&m.bound)),
            Unit::Held(h) => Some(Key::Held(&h.clustering)),
            _ => None,
        }
    }
}

impl PrefixLike for Key<'_> {
    fn kind(&self) -> BoundKind {
        match self {
            Key::Owned(c) => c.kind(),
            Key::Held(c) => c.kind(),
        }
    }
    fn size(&self) -> usize {
        match self {
            Key::Owned(c) => c.size(),
            Key::Held(c) => c.size(),
        }
    }
    fn value(&self, i: usize) -> Option<&[u8]> {
        match self {
            Key::Owned(c) => c.value(i),
            Key::Held(c) => c.value(i),
        }
    }
}
