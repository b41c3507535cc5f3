//! The sstables of one table read as one, reconciled by [`crate::merge`]:
//! what `dump-data --merge`, `read --merge`, `export --merge` and
//! `compact` read through.
//!
//! ```text
//! sstables, bound ─► MergeInputs::new (headers, union schema, partitioner,
//!                    max timestamps, covered clustering ranges)
//!   ─► a ScanSource per sstable (whole scan), or a SliceSource per sstable
//!      (one partition's slice, found through each sstable's partition
//!      index and row index, newest first with Cassandra's early stop)
//!   ─► Merger ─► Shape (slice, rows per partition, columns, reversed)
//!   ─► Sink
//! ```
//!
//! Reversed, one partition's slice is merged forward in windows cut at
//! the sstables' row-index blocks, from the last window to the first, and
//! one window is held ([`crate::merge::ReversedMerge`], called by
//! [`MergeInputs::emit_lookup`]); a merged scan holds a partition while it
//! is small and reads a larger one again by key that way.
//!
//! Sstables of different tables (key, clustering or column types differ,
//! or another partitioner) are an [`Error::Usage`] naming both files.

use std::io;

use super::sink::JoinSlices;
use super::{filter_columns, Bound, Error, Note, Notes, Selection, Shape, Sink, Table};
use crate::clustering::{BoundKind, OwnedClustering};
use crate::compare::ClusteringComparator;
use crate::data::{MarkerDeletion, ScanReader};
use crate::deletion::DeletionTime;
use crate::merge::{
    Blocks, HeldTail, MMarker, MRow, Merged, MergedSchema, MergedStart, Merger, ReversedMerge,
    RowOut, ScanSource, SliceSource, Unit, UnitSource, WindowPart,
};
use crate::read::clip::{Clipper, Closes, Edge, Place};
use crate::read::{Absence, PartitionHandle, Slice};
use crate::statistics::SerializationHeader;
use crate::token::Partitioner;
use crate::Sstable;

/// Results of a merged read: its errors are the engine's.
type Result<T, E = Error> = std::result::Result<T, E>;

/// The opened sstables of a merge and what they have in common.
pub struct MergeInputs {
    /// The sstables, in argument order.
    pub ssts: Vec<Sstable>,
    /// Their Data.db paths.
    pub labels: Vec<String>,
    /// Their serialization headers.
    pub headers: Vec<SerializationHeader>,
    /// The union schema.
    pub schema: MergedSchema,
    /// The partitioner (the same for all).
    pub partitioner: Partitioner,
    /// Per sstable, Statistics.db's max timestamp (`None`: not recorded).
    pub max_timestamps: Vec<Option<i64>>,
    /// Per sstable, the clustering range its rows and range tombstones
    /// cover (Statistics.db: [`crate::statistics::stats::Stats::covered_range`]), when known.
    pub covered: Vec<Option<(OwnedClustering, OwnedClustering)>>,
}

impl MergeInputs {
    /// The sstables of a merge, each opened and bound (its Statistics.db
    /// read), checked to be of one table; an error from `opened` is
    /// returned as it is.
    pub fn new<E: From<Error>>(
        opened: impl IntoIterator<Item = Result<(Sstable, Bound), E>>,
    ) -> Result<MergeInputs, E> {
        let mut ssts = Vec::new();
        let mut headers = Vec::new();
        let mut partitioner: Option<(Partitioner, String)> = None;
        let mut labels = Vec::new();
        let mut max_timestamps = Vec::new();
        let mut covered = Vec::new();
        for r in opened {
            let (
                sst,
                Bound {
                    header,
                    partitioner: p,
                    statistics: st,
                },
            ) = r?;
            let label = sst.data_path().display().to_string();
            match &partitioner {
                Some((q, first)) if q.name() != p.name() => {
                    return Err(E::from(Error::Usage(format!(
                        "{first} and {label} are not sstables of the same table: \
                         partitioner {} vs {}",
                        q.name(),
                        p.name()
                    ))))
                }
                Some(_) => {}
                None => partitioner = Some((p, label.clone())),
            }
            labels.push(label);
            max_timestamps.push(st.stats.as_ref().map(|s| s.max_timestamp));
            covered.push(
                st.stats
                    .as_ref()
                    .and_then(|s| s.covered_range(sst.features())),
            );
            headers.push(header);
            ssts.push(sst);
        }
        let Some((partitioner, _)) = partitioner else {
            return Err(E::from(Error::Usage("no sstable to merge".into())));
        };
        let features = ssts
            .first()
            .map(|s| s.features())
            .ok_or_else(|| E::from(Error::Usage("no sstable to merge".into())))?;
        let named: Vec<(&str, &SerializationHeader)> = labels
            .iter()
            .map(String::as_str)
            .zip(headers.iter())
            .collect();
        let schema = MergedSchema::union(&named, features)
            .map_err(|e| E::from(Error::Usage(e.kind.to_string())))?;
        Ok(MergeInputs {
            ssts,
            labels,
            headers,
            schema,
            partitioner,
            max_timestamps,
            covered,
        })
    }

    /// The label of the merged output (json: the key of its one entry).
    pub fn label(&self) -> String {
        self.labels.join(" + ")
    }

    /// A source per sstable over its whole Data.db.
    pub fn scan_sources(&self) -> Result<Vec<ScanSource<'_>>> {
        let mut v = Vec::new();
        for (i, (sst, h)) in self.ssts.iter().zip(&self.headers).enumerate() {
            let r = ScanReader::new(sst, h)?;
            v.push(ScanSource::new(r, self.schema.column_map(h), i));
        }
        Ok(v)
    }

    /// A source per sstable over its Data.db from where `sel`'s token
    /// range starts in it, found through its partition index
    /// ([`Selection::scan_start`]); from the start without a range.
    pub fn scan_sources_for(&self, sel: &Selection) -> Result<Vec<ScanSource<'_>>> {
        let mut v = Vec::new();
        for (i, (sst, h)) in self.ssts.iter().zip(&self.headers).enumerate() {
            let mut r = ScanReader::new(sst, h)?;
            let t = Table::new(h, self.partitioner.clone(), 0);
            let from = sel.scan_start(sst, &t);
            if from.0 > 0 {
                r.seek_partition(from)?;
            }
            v.push(ScanSource::new(r, self.schema.column_map(h), i));
        }
        Ok(v)
    }

    /// The merger over `sources`.
    pub fn merger<'a, S: UnitSource + 'a>(&self, sources: Vec<S>) -> Merger<'a> {
        let boxed = sources
            .into_iter()
            .map(|s| Box::new(s) as Box<dyn UnitSource + 'a>)
            .collect();
        Merger::new(boxed, &self.schema, self.partitioner.clone())
    }
}

/// What a merged single-partition read did with one sstable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Visit {
    /// Read (the partition is there): with a row index, the blocks that
    /// can hold the slice (`(first, last)`, none when it falls between
    /// blocks) of how many.
    Read(Option<(Option<(usize, usize)>, usize)>),
    /// Only the partition header and static row were read: the slice is
    /// outside the clustering range Statistics.db records.
    HeaderOnly,
    /// Not read: the index (or its filter) says the key is absent.
    Absent(crate::read::Absence),
    /// Not read: a partition deletion already seen (at this timestamp) is
    /// newer than anything the sstable holds.
    Shadowed(i64),
}

impl Visit {
    /// A short description (`--io-stats`).
    pub fn describe(&self) -> String {
        match self {
            Visit::Read(None) => "read".into(),
            Visit::Read(Some((Some((i, j)), n))) if i == j => {
                format!("read: block {} of {n} (row index)", i + 1)
            }
            Visit::Read(Some((Some((i, j)), n))) => {
                format!("read: blocks {}-{} of {n} (row index)", i + 1, j + 1)
            }
            Visit::Read(Some((None, n))) => {
                format!("read: header only, no block of {n} can hold the slice (row index)")
            }
            Visit::HeaderOnly => {
                "partition header only (the slice is outside the sstable's clustering range)".into()
            }
            Visit::Absent(a) => format!("skipped: {}", a.describe()),
            Visit::Shadowed(t) => {
                format!("skipped: a partition deletion at {t} is newer than its max timestamp")
            }
        }
    }
}

/// The partition indexes of a merge's sstables, opened once.
pub struct Indexes<'s> {
    indexes: Vec<Box<dyn crate::read::PartitionIndex + 's>>,
    /// Sstables newest first (Statistics.db max timestamp).
    order: Vec<usize>,
}

impl MergeInputs {
    /// Open every sstable's partition index.
    pub fn indexes(&self) -> Result<Indexes<'_>> {
        let mut indexes = Vec::new();
        for (sst, h) in self.ssts.iter().zip(&self.headers) {
            indexes.push(crate::read::open_index(sst, self.partitioner.clone(), h)?);
        }
        let mut order: Vec<usize> = (0..self.ssts.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(self.max_timestamps[i].unwrap_or(i64::MAX)));
        Ok(Indexes { indexes, order })
    }

    /// True when sstable `i`'s clustering range (Statistics.db) cannot hold
    /// any of `slice`.
    fn slice_outside(&self, i: usize, slice: &Slice, cmp: &ClusteringComparator) -> bool {
        let Some((lo, hi)) = &self.covered[i] else {
            return false;
        };
        let below = slice
            .end_prefix()
            .is_some_and(|e| cmp.compare(&e, &lo.as_prefix()).is_lt());
        let above = slice
            .start_prefix()
            .is_some_and(|s| cmp.compare(&s, &hi.as_prefix()).is_gt());
        below || above
    }

    /// The sources of partition `key`, the way Cassandra's single-partition
    /// read picks them: newest sstable first; each index (and its filter)
    /// asked first; an sstable whose clustering range cannot hold `slice`
    /// gives only its header; once a partition deletion newer than an
    /// sstable's max timestamp has been seen, that sstable (and the older
    /// ones) are not read. Each source reads only the part of `slice` its
    /// sstable's row index points at ([`SliceSource`]), with point reads
    /// that end at the partition's end. Returns the sources and, per
    /// sstable, what was done.
    pub fn partition_sources<'a>(
        &'a self,
        idx: &mut Indexes<'_>,
        key: &[u8],
        slice: &'a Slice,
    ) -> Result<(Vec<SliceSource<'a>>, Vec<Option<Visit>>)> {
        let (sources, visits, _) = self.sources_of(idx, key, slice, true)?;
        Ok((sources, visits))
    }

    /// [`MergeInputs::partition_sources`]; without `rows` every source reads
    /// only the partition header and static row (the visits still say
    /// which sstables the slice needs). Also returns, per sstable, the
    /// partition its index found (for a reversed read's windows).
    #[allow(clippy::type_complexity)]
    fn sources_of<'a>(
        &'a self,
        idx: &mut Indexes<'_>,
        key: &[u8],
        slice: &'a Slice,
        rows: bool,
    ) -> Result<(
        Vec<SliceSource<'a>>,
        Vec<Option<Visit>>,
        Vec<Option<PartitionHandle>>,
    )> {
        let cmp = self.schema.comparator();
        let mut visits: Vec<Option<Visit>> = vec![None; self.ssts.len()];
        let mut handles: Vec<Option<PartitionHandle>> = Vec::new();
        handles.resize_with(self.ssts.len(), || None);
        let mut sources = Vec::new();
        let mut newest_deletion = i64::MIN;
        for &i in &idx.order {
            let sst = &self.ssts[i];
            sst.io.begin_operation();
            if self.max_timestamps[i].is_some_and(|m| m <= newest_deletion) {
                visits[i] = Some(Visit::Shadowed(newest_deletion));
                continue;
            }
            let Some(mut h) = idx.indexes[i].find(key)? else {
                let why = idx.indexes[i]
                    .last_absence()
                    .unwrap_or(crate::read::Absence::Index);
                visits[i] = Some(Visit::Absent(why));
                continue;
            };
            let header_only = self.slice_outside(i, slice, &cmp);
            let map = self.schema.column_map(&self.headers[i]);
            let mut src = SliceSource::open(
                sst,
                &self.headers[i],
                &mut h,
                slice,
                header_only || !rows,
                map,
                i,
            )?;
            visits[i] = Some(if header_only {
                Visit::HeaderOnly
            } else if !rows {
                Visit::Read(None)
            } else {
                let p = src.plan();
                Visit::Read((p.blocks > 0).then_some((p.block_range, p.blocks)))
            });
            if let Some(d) = src.peek_start()? {
                newest_deletion = newest_deletion.max(d.marked_for_delete_at);
            }
            sources.push(src);
            handles[i] = Some(h);
        }
        // Argument order, as in a whole scan: ties and positions come from
        // the same sstable either way.
        sources.sort_by_key(SliceSource::index);
        Ok((sources, visits, handles))
    }
}

impl Visit {
    /// This visit and the windows' reads of the same sstable, as one: the
    /// blocks of both.
    fn join(&mut self, window: Option<Blocks>) {
        let Some((range, n)) = window else {
            return;
        };
        let range = match self {
            Visit::Read(Some((Some((a, b)), _))) => Some(match range {
                Some((c, d)) => ((*a).min(c), (*b).max(d)),
                None => (*a, *b),
            }),
            _ => range,
        };
        *self = Visit::Read(Some((range, n)));
    }
}

impl MergeInputs {
    /// A merged single-partition read of `slice` of `key` to `sink`;
    /// `None` when no sstable has the partition. `visits` gets what was
    /// done with each sstable, also when the read fails.
    ///
    /// Reversed, the slice is merged forward in windows cut at row-index
    /// blocks, from the last window to the first, and one window is held
    /// ([`ReversedMerge`]); each sstable's partition is looked up once.
    /// Returns the windows read (0: not reversed, or held whole).
    #[allow(clippy::too_many_arguments)]
    pub fn emit_lookup(
        &self,
        idx: &mut Indexes<'_>,
        key: &[u8],
        slice: &Slice,
        t: &Table<'_>,
        shape: &Shape,
        sink: &mut dyn Sink,
        visits: &mut Vec<Option<Visit>>,
    ) -> Result<Option<usize>> {
        let windowed = shape.reverse && window_bytes() > 0;
        let (sources, v, mut handles) = self.sources_of(idx, key, slice, !windowed)?;
        *visits = v;
        if sources.is_empty() {
            return Ok(None);
        }
        let mut merger = self.merger(sources);
        let Some(start) = merger.next_partition()? else {
            return Ok(Some(0));
        };
        if !windowed {
            emit_partition(&mut merger, start, &self.schema, t, shape, sink)?;
            return Ok(Some(0));
        }
        drop(merger);
        start_partition(&start, &self.schema, t, shape, sink)?;
        // The sstables the slice needs (which give only their header), with
        // the partition their index found: the windows look nothing up again.
        let chosen: Vec<(usize, bool, PartitionHandle)> = visits
            .iter()
            .enumerate()
            .filter_map(|(i, v)| {
                let header_only = match v {
                    Some(Visit::Read(_)) => false,
                    Some(Visit::HeaderOnly) => true,
                    _ => return None,
                };
                Some((i, header_only, handles[i].take()?))
            })
            .collect();
        let n = self.emit_windows(chosen, slice, t, shape, sink, Some(visits))?;
        sink.partition_end(t)?;
        Ok(Some(n))
    }

    /// [`MergeInputs::emit_lookup`] of several slices of the partition
    /// (sorted and disjoint: [`crate::read::value_slices`]), one after the
    /// other (the last first when reversed), as one partition: the header
    /// once, [`Shape::row_limit`] counted over all of them. `shape.slice`
    /// is replaced by each slice.
    #[allow(clippy::too_many_arguments)]
    pub fn emit_lookup_slices(
        &self,
        idx: &mut Indexes<'_>,
        key: &[u8],
        slices: &[Slice],
        t: &Table<'_>,
        shape: &Shape,
        sink: &mut dyn Sink,
        visits: &mut Vec<Option<Visit>>,
    ) -> Result<Option<usize>> {
        let mut join = JoinSlices::new(sink);
        let mut windows = None;
        let order: Box<dyn Iterator<Item = &Slice>> = if shape.reverse {
            Box::new(slices.iter().rev())
        } else {
            Box::new(slices.iter())
        };
        for (n, s) in order.enumerate() {
            let left = shape.row_limit.map(|l| l.saturating_sub(join.rows));
            if n > 0 && left == Some(0) {
                break;
            }
            let one = Shape {
                slice: Some(s.clone()),
                row_limit: left,
                ..shape.clone()
            };
            join.next_call();
            match self.emit_lookup(idx, key, s, t, &one, &mut join, visits)? {
                // No sstable has the partition: no slice of it will.
                None => return Ok(None),
                Some(w) => windows = Some(windows.unwrap_or(0) + w),
            }
        }
        join.finish(t)?;
        Ok(windows)
    }

    /// A partition of a merged scan (already started by `merger`, a merger
    /// of [`MergeInputs::scan_sources`]), reversed: held while it is smaller
    /// than a window, else read again by key, window by window (as
    /// [`MergeInputs::emit_lookup`] does, from the sstables the scan found
    /// it in: none is skipped, so rows keep the positions the scan gives
    /// them), through `idx` (opened on first use; each sstable's partition
    /// looked up once). True when the sink printed it.
    pub fn emit_scanned_reversed<'s>(
        &'s self,
        idx: &mut Option<Indexes<'s>>,
        merger: &mut Merger<'_>,
        start: MergedStart,
        t: &Table<'_>,
        shape: &Shape,
        sink: &mut dyn Sink,
    ) -> Result<bool> {
        start_partition(&start, &self.schema, t, shape, sink)?;
        let slice = shape.slice.clone().unwrap_or_default();
        let in_scan = start.sources.clone();
        let mut spill = |key: &[u8], sink: &mut dyn Sink| -> Result<(), Error> {
            let idx = match idx {
                Some(i) => i,
                None => idx.insert(self.indexes()?),
            };
            let mut chosen = Vec::with_capacity(in_scan.len());
            for &i in &in_scan {
                let Some(h) = idx.indexes[i].find(key)? else {
                    let e = crate::error::Error::new(
                        crate::error::ErrorKind::BadValue(
                            "the scan found the partition, but the index does not".into(),
                        ),
                        "reversed merge",
                    );
                    return Err(e.in_file(&self.ssts[i].data_path()).into());
                };
                chosen.push((i, false, h));
            }
            self.emit_windows(chosen, &slice, t, shape, sink, None)?;
            Ok(())
        };
        emit_held_reversed(
            merger,
            &start.key,
            &self.schema,
            t,
            shape,
            sink,
            Some(&mut spill),
        )
    }

    /// The rows and markers of `slice` of a partition, reversed, window by
    /// window (see [`MergeInputs::emit_lookup`]), from the sstables `chosen`
    /// (sstable, gives only its header, its partition as the index found
    /// it); `visits` gets the blocks read. Returns the windows read.
    fn emit_windows(
        &self,
        chosen: Vec<(usize, bool, PartitionHandle)>,
        slice: &Slice,
        t: &Table<'_>,
        shape: &Shape,
        sink: &mut dyn Sink,
        visits: Option<&mut [Option<Visit>]>,
    ) -> Result<usize> {
        let read: Vec<usize> = chosen.iter().filter(|c| !c.1).map(|c| c.0).collect();
        let parts = chosen
            .into_iter()
            .map(|(i, header_only, handle)| WindowPart {
                number: i,
                sst: &self.ssts[i],
                header: &self.headers[i],
                header_only,
                handle,
            })
            .collect();
        let mut merge = ReversedMerge::new(
            &self.schema,
            self.partitioner.clone(),
            slice,
            parts,
            window_bytes(),
        )?;
        let mut rev = Reversed::new(shape.row_limit.unwrap_or(u64::MAX));
        let r = (|| -> Result<(), Error> {
            while !rev.full() {
                let Some(u) = merge.next_unit()? else { break };
                rev.write(&u, &self.schema, t, shape, sink)?;
            }
            Ok(())
        })();
        if let Some(visits) = visits {
            for i in read {
                if let Some(v) = visits[i].as_mut() {
                    v.join(merge.blocks_read(i));
                }
            }
        }
        r?;
        rev.finish(t, sink)?;
        Ok(merge.windows_read())
    }
}

impl MergeInputs {
    /// The merged partitions `sel` selects, shaped, to `sink`;
    /// [`Shape::limit`] counts partitions the sink printed. Keys are looked
    /// up in every sstable's partition index; a key none holds is a
    /// [`Note::KeyAbsent`]; a scan notes its progress over all the
    /// sstables' bytes.
    pub fn dump(
        &self,
        t: &Table<'_>,
        sel: &Selection,
        shape: &Shape,
        sink: &mut dyn Sink,
        notes: &mut Notes<'_>,
    ) -> Result<(), Error> {
        let inputs = self;
        let limit = shape.limit;
        if limit == 0 {
            return Ok(());
        }
        let mut emitted = 0u64;
        if let (Some(keys), true) = (sel.keys(), shape.reverse && !shape.keys_only) {
            // Reversed point lookups: each key's partition in windows.
            let mut idx = inputs.indexes()?;
            let all = Slice::all();
            let mut visits = Vec::new();
            for key in keys {
                if !sel.wants(t, key) {
                    continue;
                }
                if inputs
                    .emit_lookup(&mut idx, key, &all, t, shape, sink, &mut visits)?
                    .is_none()
                {
                    notes(Note::KeyAbsent {
                        key,
                        absence: Absence::Index,
                    });
                    continue;
                }
                if sink.last_partition_written() {
                    emitted += 1;
                    if emitted >= limit {
                        break;
                    }
                }
            }
            return Ok(());
        }
        // Reversed scan: the indexes a partition too large to hold is read through.
        let mut rev_idx = None;
        // One merged partition to the sink: true once `limit` partitions are printed.
        let mut emit = |merger: &mut Merger<'_>, start: MergedStart| -> Result<bool, Error> {
            // A declined partition is skipped by the merger's next partition.
            if !sink.takes_partition(t, &start.key)? {
                return Ok(false);
            }
            let printed = if shape.keys_only {
                sink.key_only(t, &start.key)?;
                true
            } else if shape.reverse {
                inputs.emit_scanned_reversed(&mut rev_idx, merger, start, t, shape, sink)?
            } else {
                emit_partition(merger, start, &inputs.schema, t, shape, sink)?
            };
            if printed {
                emitted += 1;
            }
            Ok(emitted >= limit)
        };
        if let Some(keys) = sel.keys() {
            // Point lookups: each key through every sstable's partition index.
            let mut idx = inputs.indexes()?;
            let all = Slice::all();
            for key in keys {
                if !sel.wants(t, key) {
                    continue;
                }
                let (sources, _) = inputs.partition_sources(&mut idx, key, &all)?;
                if sources.is_empty() {
                    notes(Note::KeyAbsent {
                        key,
                        absence: Absence::Index,
                    });
                    continue;
                }
                let mut merger = inputs.merger(sources);
                let Some(start) = merger.next_partition()? else {
                    continue;
                };
                if emit(&mut merger, start)? {
                    break;
                }
            }
            return Ok(());
        }
        let mut merger = inputs.merger(inputs.scan_sources_for(sel)?);
        while let Some(start) = merger.next_partition()? {
            let (done, total) = merger.progress();
            notes(Note::Progress { done, total });
            if !sel.wants(t, &start.key) {
                if sel.past_end(t, &start.key) {
                    break;
                }
                continue;
            }
            if emit(&mut merger, start)? {
                break;
            }
        }
        Ok(())
    }
}

/// Clips a forward stream of merged units to a slice (synthetic bounds at
/// its edges for range tombstones that cross them): the shared [`Clipper`]
/// over owned units.
struct Clip<'c> {
    core: Clipper<'c, ClusteringComparator>,
}

/// A synthetic bound marker of a merged stream.
fn synthetic(e: Edge<'_, '_>) -> MMarker {
    MMarker {
        position: Default::default(),
        source: 0,
        bound: OwnedClustering {
            kind: e.kind,
            values: e.values.iter().map(|v| v.map(<[u8]>::to_vec)).collect(),
        },
        deletion: MarkerDeletion::Bound(e.deletion),
    }
}

fn synthetic_unit(e: Edge<'_, '_>) -> Unit {
    Unit::Marker(Box::new(synthetic(e)))
}

impl<'c> Clip<'c> {
    fn new(cmp: &'c ClusteringComparator, slice: Option<&'c Slice>) -> Self {
        Clip {
            core: Clipper::new(cmp, slice, false, Closes::Output),
        }
    }

    /// Past the end of the slice.
    fn done(&self) -> bool {
        self.core.ended()
    }

    /// The units to output for `u` (in order); ends the clip past the end.
    fn feed(&mut self, u: Unit, out: &mut Vec<Unit>) {
        if self.done() {
            return;
        }
        let pos = match &u {
            Unit::Row(r) => r.clustering.as_prefix(),
            Unit::Marker(m) => m.bound.as_prefix(),
            _ => return,
        };
        let place = self.core.place(&pos);
        // A bound with a live deletion opens nothing here.
        let opens = match &u {
            Unit::Marker(m) => Some(
                match m.deletion {
                    MarkerDeletion::Boundary { start, .. } => Some(start),
                    MarkerDeletion::Bound(d) if m.bound.kind.is_start() => Some(d),
                    MarkerDeletion::Bound(_) => None,
                }
                .filter(|d| !d.is_live()),
            ),
            _ => None,
        };
        match place {
            Place::Past => out.extend(self.core.end().into_iter().flatten().map(synthetic_unit)),
            Place::Ahead => {
                if let Some(o) = opens {
                    self.core.marker(o, None, false);
                }
            }
            Place::Inside => {
                out.extend(self.core.begin().map(synthetic_unit));
                if let Some(o) = opens {
                    self.core.marker(o, None, true);
                }
                out.push(u);
            }
        }
    }

    /// Partition end: close what the output left open (a slice cut by a
    /// row limit).
    fn close_at(&mut self, last_row: Option<&OwnedClustering>, out: &mut Vec<Unit>) {
        let row = last_row.map(OwnedClustering::as_prefix);
        let values = row.as_ref().map_or(&[][..], |r| &r.values[..]);
        if let (Some(e), true) = (self.core.cut(values), row.is_some()) {
            out.push(synthetic_unit(e));
        }
    }
}

/// Write one merged partition (already started by `merger`) to `sink`;
/// true when the sink printed it.
pub fn emit_partition(
    merger: &mut Merger<'_>,
    start: MergedStart,
    schema: &MergedSchema,
    t: &Table<'_>,
    shape: &Shape,
    sink: &mut dyn Sink,
) -> Result<bool> {
    start_partition(&start, schema, t, shape, sink)?;
    if shape.reverse {
        return emit_held_reversed(merger, &start.key, schema, t, shape, sink, None);
    }
    let cmp = schema.comparator();
    let mut clip = Clip::new(&cmp, shape.slice.as_ref());
    let limit = shape.row_limit.unwrap_or(u64::MAX);
    let mut rows = 0u64;
    let mut buf: Vec<Unit> = Vec::new();
    let mut last_row: Option<OwnedClustering> = None;
    let clipping = shape.slice.is_some();
    // Rows one sstable alone has go to the sink as they are stored, unless
    // they are clipped (the merger renders them through `out`, so each is
    // counted here after it is written).
    let pass = !clipping && limit > 0;
    loop {
        let next = if pass {
            let mut out = |row: RowOut<'_, '_>| -> Result<(), Error> {
                match row {
                    RowOut::Stored(r) => match &shape.columns {
                        Some(c) => sink.row(t, &filter_columns(r.into_decoded()?, c))?,
                        None if sink.takes_lazy_rows() => sink.lazy_row(t, r)?,
                        None => sink.row(t, &r.into_decoded()?)?,
                    },
                    RowOut::Merged(r) => match &shape.columns {
                        Some(c) => sink.row(t, &filter_columns(r.clone(), c))?,
                        None => sink.row(t, r)?,
                    },
                }
                Ok(())
            };
            merger.next_merged_with(&mut out)?
        } else {
            merger.next_merged(false)?
        };
        let Some(m) = next else { break };
        let u = match m {
            Merged::Unit(u) => u,
            Merged::Passed(_) => {
                rows += 1;
                if rows >= limit {
                    break;
                }
                continue;
            }
        };
        buf.clear();
        if clipping {
            clip.feed(u, &mut buf);
        } else {
            buf.push(u);
        }
        for u in buf.drain(..) {
            if rows >= limit {
                break;
            }
            if let Unit::Row(r) = &u {
                rows += 1;
                last_row = Some(r.clustering.clone());
            }
            write_unit(&u, schema, t, shape, sink)?;
        }
        if clip.done() || rows >= limit {
            break;
        }
    }
    buf.clear();
    clip.close_at(last_row.as_ref(), &mut buf);
    for u in buf.drain(..) {
        write_unit(&u, schema, t, shape, sink)?;
    }
    sink.partition_end(t)?;
    Ok(sink.last_partition_written())
}

/// The partition header and static row of `start` to `sink`.
fn start_partition(
    start: &MergedStart,
    schema: &MergedSchema,
    t: &Table<'_>,
    shape: &Shape,
    sink: &mut dyn Sink,
) -> io::Result<()> {
    sink.partition_start(t, &start.key, &start.deletion, start.header_end.0)?;
    if let Some(r) = &start.static_row {
        let v = r.view(schema);
        let v = match &shape.columns {
            Some(c) => filter_columns(v, c),
            None => v,
        };
        sink.static_row(t, &v, start.header_end.0)?;
    }
    Ok(())
}

/// Writes the rows and markers of a reversed read (the forward stream read
/// backwards), the rows up to `limit`, and closes at the last row written
/// a range still open there.
struct Reversed {
    limit: u64,
    rows: u64,
    /// The deletion open in the output.
    open: DeletionTime,
    last_row: Option<OwnedClustering>,
}

impl Reversed {
    fn new(limit: u64) -> Reversed {
        Reversed {
            limit,
            rows: 0,
            open: DeletionTime::LIVE,
            last_row: None,
        }
    }

    /// `limit` rows are written.
    fn full(&self) -> bool {
        self.rows >= self.limit
    }

    /// Write `u` (a forward unit, taken last first); false once `limit`
    /// rows are written (`u` is then dropped).
    fn write(
        &mut self,
        u: &Unit,
        schema: &MergedSchema,
        t: &Table<'_>,
        shape: &Shape,
        sink: &mut dyn Sink,
    ) -> io::Result<bool> {
        if self.full() {
            return Ok(false);
        }
        match u {
            Unit::Row(r) => {
                self.rows += 1;
                self.last_row = Some(r.clustering.clone());
                write_row(r, schema, t, shape, sink)?;
            }
            Unit::Marker(m) => {
                let rm = m.reversed();
                self.open = rm.view().open_deletion().unwrap_or(DeletionTime::LIVE);
                sink.marker(t, &rm.view())?;
            }
            _ => {}
        }
        Ok(true)
    }

    /// The end: a range open after the last row written (cut by the limit)
    /// is closed at it.
    fn finish(self, t: &Table<'_>, sink: &mut dyn Sink) -> io::Result<()> {
        if let (false, Some(r)) = (self.open.is_live(), &self.last_row) {
            let r = r.as_prefix();
            let close = synthetic(Edge {
                values: &r.values,
                kind: BoundKind::InclEndBound,
                deletion: self.open,
            });
            sink.marker(t, &close.view())?;
        }
        Ok(())
    }
}

/// Data.db bytes per sstable that one window of a reversed merged read
/// covers (whole row-index blocks, at least one), and the bytes a merged
/// scan holds of one partition before it reads it that way.
const WINDOW_BYTES: u64 = 1 << 20;

/// [`WINDOW_BYTES`], unless `SSTKIT_MERGE_REVERSE_WINDOW` gives another
/// (tests cut small sstables into many windows; 0 holds the whole slice,
/// the reference the windows are checked against).
fn window_bytes() -> u64 {
    std::env::var("SSTKIT_MERGE_REVERSE_WINDOW")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(WINDOW_BYTES)
}

/// Writes the rows and markers of a partition whose header is out,
/// reversed (a scan's partition that outgrew memory: [`MergeInputs::emit_lookup`]'s
/// windows).
type Spill<'s> = dyn FnMut(&[u8], &mut dyn Sink) -> Result<(), Error> + 's;

/// The rest of a merged partition reversed, held in memory: the last
/// `row_limit` rows of the slice (and the markers between them), or all of
/// it. With `spill`, once the partition has given [`window_bytes`] what is
/// held is dropped and `spill` writes the partition's rows instead; the
/// merger skips the rest at its next partition.
fn emit_held_reversed(
    merger: &mut Merger<'_>,
    key: &[u8],
    schema: &MergedSchema,
    t: &Table<'_>,
    shape: &Shape,
    sink: &mut dyn Sink,
    mut spill: Option<&mut Spill<'_>>,
) -> Result<bool> {
    let cmp = schema.comparator();
    let mut clip = Clip::new(&cmp, shape.slice.as_ref());
    let clipping = shape.slice.is_some();
    let limit = shape.row_limit.unwrap_or(u64::MAX);
    let budget = match spill {
        Some(_) => window_bytes(),
        None => 0,
    };
    let mut tail = HeldTail::new(limit);
    let mut buf: Vec<Unit> = Vec::new();
    while let Some(u) = merger.next_unfiltered()? {
        buf.clear();
        if clipping {
            clip.feed(u, &mut buf);
        } else {
            buf.push(u);
        }
        for u in buf.drain(..) {
            tail.push(u);
        }
        if let Some(s) = spill
            .as_mut()
            .filter(|_| budget > 0 && tail.bytes_seen() > budget)
        {
            drop(tail);
            s(key, sink)?;
            sink.partition_end(t)?;
            return Ok(sink.last_partition_written());
        }
        if clip.done() {
            break;
        }
    }
    let mut rev = Reversed::new(limit);
    while let Some(u) = tail.pop_back() {
        if !rev.write(&u, schema, t, shape, sink)? {
            break;
        }
    }
    rev.finish(t, sink)?;
    sink.partition_end(t)?;
    Ok(sink.last_partition_written())
}

fn write_unit(
    u: &Unit,
    schema: &MergedSchema,
    t: &Table<'_>,
    shape: &Shape,
    sink: &mut dyn Sink,
) -> io::Result<()> {
    match u {
        Unit::Row(r) => write_row(r, schema, t, shape, sink),
        Unit::Marker(m) => sink.marker(t, &m.view()),
        _ => Ok(()),
    }
}

fn write_row(
    r: &MRow,
    schema: &MergedSchema,
    t: &Table<'_>,
    shape: &Shape,
    sink: &mut dyn Sink,
) -> io::Result<()> {
    let v = r.view(schema);
    match &shape.columns {
        Some(c) => sink.row(t, &filter_columns(v, c)),
        None => sink.row(t, &v),
    }
}
