//! [`BoundedReader`]: read a clustering slice of one partition, touching only
//! the Data.db blocks that can hold it.
//!
//! For a partition with a row index (promoted index):
//!
//! 1. Binary search of the blocks for the lower bound `L`: the first block
//!    whose last clustering is after `L` (O(log₂ blocks) block decodes,
//!    each through the index cache). Galloping from there for the upper
//!    bound `U`: the last block whose first clustering is before `U`. The
//!    range tombstone open when reading starts is the `end_open_marker` of
//!    the block before the first one read.
//! 2. The partition header and static row (`header_length` bytes at the
//!    partition start) — only when the table has static columns; otherwise
//!    the key and deletion come from the index. They are kept in the index
//!    cache (per partition, up to 64 KiB), and read together with the blocks
//!    when both fit in one `max_io` read with at most 16 KiB between them.
//! 3. The blocks' byte range, planned as one request (point reads, no
//!    read-ahead; compressed: the chunks overlapping it, each decompressed
//!    only when reached). Reading stops at the first row or marker past `U`,
//!    or at the end of the last block.
//!
//! A partition without row index (small by construction) is read from its
//! start to its end (the next partition's position) in one request and
//! filtered. [`ReadOptions::naive`] does that for any partition, with scan
//! reads (read-ahead): the baseline of the benchmark.
//!
//! # Clipping
//!
//! Rows and markers strictly inside the slice are passed through. A range
//! tombstone open at `L` is re-opened at `L` by a synthetic bound marker
//! (`INCL_START_BOUND` for `--from`, `EXCL_START_BOUND` for `--after`, with
//! the slice's values), and one open at `U` is closed there
//! (`INCL_END_BOUND` for `--to`, `EXCL_END_BOUND` for `--before`). Markers
//! at or before `L` only change what is open; markers at or after `U` are
//! not emitted. With a row limit, a range tombstone open after the last
//! row returned is closed at that row (`INCL_END_BOUND`, as C\*'s
//! `RTBoundCloser` does). The static row and the partition deletion are
//! always emitted. An empty slice (lower bound at or after the upper one,
//! [`Slice::is_empty`]) emits nothing else, not even a range tombstone.
//!
//! Expected IO of a read of a slice within one block, warm index cache: one
//! Data.db read of at most one block plus alignment (a compressed file: the
//! chunks overlapping it), nothing else.

use std::cmp::Ordering;
use std::rc::Rc;

use crate::clustering::ClusteringPrefix;
use crate::compare::compare_clustering;
use crate::component::Component;
use crate::data::{
    DataPos, Fragment, MarkerDeletion, PartitionReader, RangeTombstoneMarker, ReaderOptions, Row,
    ScanReader,
};
use crate::deletion::DeletionTime;
use crate::error::{Error, ErrorKind, Result};
use crate::io::ReadKind;
use crate::sstable::Sstable;
use crate::statistics::SerializationHeader;
use crate::types::CqlType;

use super::clip::{Clipper, Closes, Edge, Place};
use super::{PartitionHandle, RowIndex, Slice};

/// Cache namespace of partition headers + static rows (Data.db).
pub(super) const NS_HEADER: u8 = 2;

/// The header and the blocks are read together when at most this many
/// bytes lie between them.
pub(super) const COALESCE_GAP: u64 = 16 * 1024;

/// Headers + static rows larger than this are not cached.
pub(super) const MAX_CACHED_HEADER: u64 = 64 * 1024;

/// Options of one read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// At most this many rows (markers are not counted).
    pub limit: Option<u64>,
    /// Ignore the row index: scan the partition from its start with scan
    /// reads (read-ahead). The benchmark's baseline.
    pub naive: bool,
}

/// What a read did: the blocks and Data.db range it chose.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadPlan {
    /// Blocks in the partition's row index (0: none).
    pub blocks: usize,
    /// First and last block read (none when the slice falls between blocks
    /// or there is no row index).
    pub block_range: Option<(usize, usize)>,
    /// The Data.db range planned for the rows (uncompressed positions).
    pub data: Option<(DataPos, DataPos)>,
    /// The header and static row came from the index cache.
    pub header_cached: bool,
    /// Rows emitted.
    pub rows: u64,
    /// Range tombstone markers emitted (synthetic ones included).
    pub markers: u64,
}

impl ReadPlan {
    /// Add the plan of another slice of the same partition: the rows and
    /// markers summed, the blocks and Data.db ranges spanned.
    pub fn add(&mut self, o: &ReadPlan) {
        self.blocks = self.blocks.max(o.blocks);
        self.block_range = match (self.block_range, o.block_range) {
            (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
            (x, y) => x.or(y),
        };
        self.data = match (self.data, o.data) {
            (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
            (x, y) => x.or(y),
        };
        self.header_cached |= o.header_cached;
        self.rows += o.rows;
        self.markers += o.markers;
    }
}

/// The consumer of what a read produces, in order: `PartitionStart` (with
/// `header_end`: where the header and static row end, sstabledump's
/// partition position), `StaticRow`?, (`Row` | `Marker`)*, `PartitionEnd`
/// (where reading stopped). Rows and markers are lent: a marker may be a
/// synthetic bound at the slice's edge.
pub type Visitor<'f, E> = dyn for<'x> FnMut(
        Fragment<'x, &'x Row<'x>, &'x RangeTombstoneMarker<'x>>,
    ) -> std::result::Result<(), E>
    + 'f;

/// What does not change between reads.
pub(crate) struct Ctx<'s> {
    sst: &'s Sstable,
    header: SerializationHeader,
    types: Vec<CqlType>,
    has_static: bool,
    max_io: u64,
    unit: u64,
}

/// Bounded reads of one sstable's partitions (see the module docs). One
/// reader serves any number of reads; its Data.db window is dropped at the
/// start of each.
pub struct BoundedReader<'s> {
    ctx: Ctx<'s>,
    reader: ScanReader<'s>,
}

impl std::fmt::Debug for BoundedReader<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoundedReader")
            .field("sstable", &self.ctx.sst.data_path())
            .finish()
    }
}

impl<'s> BoundedReader<'s> {
    /// A reader of `sst`'s Data.db, decoded with `header` (the serialization
    /// header). Reads CompressionInfo.db when the sstable is compressed.
    ///
    /// Pre-3.0 `ka`/`la` sstables (table schema attached to `sst`) are read
    /// whole from the partition start: their promoted index names cells,
    /// not rows, and the legacy decoder has no size fields to skip by.
    pub fn new(sst: &'s Sstable, header: &SerializationHeader) -> Result<BoundedReader<'s>> {
        Ok(BoundedReader {
            ctx: Ctx::new(sst, header),
            reader: point_reader(sst, header)?,
        })
    }

    /// Read `slice` of the partition `h` found by a
    /// [`super::PartitionIndex`], passing each event to `f`.
    pub fn read<E: From<Error>>(
        &mut self,
        h: &mut PartitionHandle,
        slice: &Slice,
        opts: &ReadOptions,
        f: &mut Visitor<'_, E>,
    ) -> std::result::Result<ReadPlan, E> {
        self.reader.reset_window();
        let limit = opts.limit.unwrap_or(u64::MAX);
        let mut clip = Clip::new(&self.ctx.types, slice, limit, false);
        let whole = opts.naive || self.reader.is_legacy();
        match (&mut h.row_index, whole) {
            (Some(ri), false) => {
                let ri: &mut dyn RowIndex = ri.as_mut();
                read_indexed(
                    &self.ctx,
                    &mut self.reader,
                    &h.key,
                    h.position,
                    h.end,
                    ri,
                    &mut clip,
                    f,
                )?;
            }
            (ri, naive) => {
                clip.plan.blocks = ri.as_ref().map_or(0, |r| r.block_count());
                read_whole(&mut self.reader, h, naive, &mut clip, f)?;
            }
        }
        Ok(clip.plan)
    }
}

impl<'s> Ctx<'s> {
    pub(crate) fn new(sst: &'s Sstable, header: &SerializationHeader) -> Ctx<'s> {
        Ctx {
            sst,
            header: header.clone(),
            types: header.clustering_types.clone(),
            has_static: !header.static_columns.is_empty(),
            max_io: sst.io.options().max_io,
            unit: sst.io.options().unit,
        }
    }
}

/// A reader of `sst`'s Data.db for bounded reads: point reads (no
/// read-ahead) of the IO unit outside a planned range.
pub(crate) fn point_reader<'s>(
    sst: &'s Sstable,
    header: &SerializationHeader,
) -> Result<ScanReader<'s>> {
    let opts = ReaderOptions {
        check_prev_sizes: false,
        block_size: sst.io.options().unit as usize,
        ..ReaderOptions::default()
    };
    let mut reader = ScanReader::with_options(sst, header, opts)?;
    reader.set_read_kind(ReadKind::Point);
    Ok(reader)
}

/// The clipping of the bounded reads (see the module docs): the shared
/// [`Clipper`] with a row limit and the [`ReadPlan`]'s counts, emitting
/// borrowed fragments. Used by the forward reader and, walking down, the
/// reversed one ([`super::reversed`]); the markers passed in are in forward
/// order, what a reversed clip emits is reversed.
pub(crate) struct Clip<'b> {
    pub(crate) core: Clipper<'b, [CqlType]>,
    pub(super) limit: u64,
    /// The row limit was reached (or nothing is to be read past the header).
    pub(crate) limited: bool,
    pub(crate) plan: ReadPlan,
}

fn synthetic<'v>(e: Edge<'_, 'v>, position: DataPos) -> RangeTombstoneMarker<'v> {
    RangeTombstoneMarker {
        position,
        size: 0,
        flags: crate::data::model::flags::IS_MARKER,
        bound: ClusteringPrefix {
            kind: e.kind,
            values: e.values.to_vec(),
        },
        marker_size: 0,
        prev_unfiltered_size: 0,
        deletion: MarkerDeletion::Bound(e.deletion),
    }
}

impl<'b> Clip<'b> {
    /// A clip of `slice` for a read in the given direction.
    pub(crate) fn new(types: &'b [CqlType], slice: &'b Slice, limit: u64, reversed: bool) -> Self {
        Clip {
            core: Clipper::new(types, Some(slice), reversed, Closes::Input),
            limit,
            // An empty slice reads nothing past the header.
            limited: limit == 0 || slice.is_empty(types),
            plan: ReadPlan::default(),
        }
    }

    /// Emit a synthetic marker.
    fn emit<E>(
        plan: &mut ReadPlan,
        e: Edge<'_, '_>,
        position: DataPos,
        f: &mut Visitor<'_, E>,
    ) -> std::result::Result<(), E> {
        let m = synthetic(e, position);
        plan.markers += 1;
        f(Fragment::Marker(&m))
    }

    /// Before the first element inside the slice: re-open at the first edge
    /// what is open there.
    fn start<E>(
        &mut self,
        position: DataPos,
        f: &mut Visitor<'_, E>,
    ) -> std::result::Result<(), E> {
        match self.core.begin() {
            Some(e) => Self::emit(&mut self.plan, e, position, f),
            None => Ok(()),
        }
    }

    /// A row; `false`: stop reading.
    pub(crate) fn row<E>(
        &mut self,
        r: &Row<'_>,
        f: &mut Visitor<'_, E>,
    ) -> std::result::Result<bool, E> {
        if self.limited {
            return Ok(false);
        }
        match self.core.place(&r.clustering) {
            Place::Ahead => Ok(true),
            Place::Past => Ok(false),
            Place::Inside => {
                self.start(r.position, f)?;
                f(Fragment::Row(r))?;
                self.plan.rows += 1;
                if self.plan.rows >= self.limit {
                    self.limited = true;
                    if let Some(e) = self.core.cut(&r.clustering.values) {
                        Self::emit(&mut self.plan, e, r.position, f)?;
                    }
                    return Ok(false);
                }
                Ok(true)
            }
        }
    }

    /// A range tombstone marker (forward kind); `false`: stop reading.
    pub(crate) fn marker<E>(
        &mut self,
        m: &RangeTombstoneMarker<'_>,
        f: &mut Visitor<'_, E>,
    ) -> std::result::Result<bool, E> {
        if self.limited {
            return Ok(false);
        }
        let place = self.core.place(&m.bound);
        if place == Place::Past {
            return Ok(false);
        }
        let inside = place == Place::Inside;
        if inside {
            self.start(m.position, f)?;
            if self.core.reversed() {
                f(Fragment::Marker(&m.reversed()))?;
            } else {
                f(Fragment::Marker(m))?;
            }
            self.plan.markers += 1;
        }
        self.core
            .marker(m.open_deletion(), m.close_deletion(), inside);
        Ok(true)
    }

    /// After the last element: the first edge if not yet dealt with, and
    /// close at the last edge what is still open.
    pub(crate) fn finish<E>(
        &mut self,
        position: DataPos,
        f: &mut Visitor<'_, E>,
    ) -> std::result::Result<(), E> {
        if self.limited {
            return Ok(());
        }
        let [reopen, close] = self.core.end();
        for e in [reopen, close].into_iter().flatten() {
            Self::emit(&mut self.plan, e, position, f)?;
        }
        Ok(())
    }
}

pub(crate) fn bad(what: &'static str, msg: String, at: DataPos) -> Error {
    Error::at(ErrorKind::BadValue(msg), Component::Data, at.0, what)
}

/// The partition deletion of `f`, the first fragment read where the index
/// places partition `key` (`at`); an error at `at` unless `f` is that
/// partition's header (`missing` names what is absent when it is no header).
pub(crate) fn indexed_start<R, M>(
    f: Option<&Fragment<'_, R, M>>,
    key: &[u8],
    at: DataPos,
    missing: &str,
) -> Result<DeletionTime> {
    match f {
        Some(Fragment::PartitionStart {
            key: k, deletion, ..
        }) if *k == key => Ok(*deletion),
        Some(Fragment::PartitionStart { .. }) => Err(bad(
            "partition header",
            "the index points at another partition".into(),
            at,
        )),
        _ => Err(bad(
            "partition header",
            format!("no {missing} at the indexed position"),
            at,
        )),
    }
}

/// First `k` in `[lo, hi)` for which `pred` is false (`pred` is true on a
/// prefix of the range).
pub(crate) fn search(
    mut lo: usize,
    mut hi: usize,
    pred: &mut dyn FnMut(usize) -> Result<bool>,
) -> Result<usize> {
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid)? {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    Ok(lo)
}

/// [`search`] probing `lo, lo + 2, lo + 6, ...` first: cheap when the
/// answer is close to `lo` (the upper bound of a short slice).
fn gallop(lo: usize, hi: usize, pred: &mut dyn FnMut(usize) -> Result<bool>) -> Result<usize> {
    let mut a = lo;
    let mut step = 1usize;
    loop {
        let probe = a + step - 1;
        if probe >= hi {
            return search(a, hi, pred);
        }
        if pred(probe)? {
            a = probe + 1;
            step = step.saturating_mul(2);
        } else {
            return search(a, probe, pred);
        }
    }
}

/// [`search`] probing `hi - 1, hi - 2, hi - 4, ...` first: cheap when the
/// answer is close to `hi` (a reversed window's edge, just below the last
/// one), and the blocks it reads lie together.
pub(crate) fn gallop_down(
    lo: usize,
    hi: usize,
    pred: &mut dyn FnMut(usize) -> Result<bool>,
) -> Result<usize> {
    let mut b = hi;
    let mut step = 1usize;
    loop {
        let Some(probe) = b.checked_sub(step).filter(|p| *p >= lo) else {
            return search(lo, b, pred);
        };
        if pred(probe)? {
            return search(probe + 1, b, pred);
        }
        b = probe;
        step = step.saturating_mul(2);
    }
}

/// Emit `PartitionStart` and the static row decoded from the partition's
/// header bytes (`bytes` = Data.db `[pos, pos + header_length)`).
pub(super) fn emit_header<E: From<Error>>(
    sst: &Sstable,
    header: &SerializationHeader,
    bytes: &[u8],
    key: &[u8],
    pos: DataPos,
    f: &mut Visitor<'_, E>,
) -> std::result::Result<(), E> {
    let opts = ReaderOptions {
        check_prev_sizes: false,
        ..ReaderOptions::default()
    };
    let mut r = PartitionReader::from_bytes(bytes, header, sst.features(), DataPos(0), opts)
        .map_err(|e| shift(e, pos))?;
    let first = r.next_fragment().map_err(|e| shift(e, pos))?;
    let deletion = indexed_start(first.as_ref(), key, pos, "partition header")?;
    let header_end = DataPos(pos.0 + bytes.len() as u64);
    f(Fragment::PartitionStart {
        key,
        deletion,
        position: pos,
        header_end: Some(header_end),
    })?;
    match r.next_fragment().map_err(|e| shift(e, pos))? {
        Some(Fragment::StaticRow(row)) => {
            let mut row = row.clone();
            row.position = DataPos(row.position.0 + pos.0);
            f(Fragment::StaticRow(&row))
        }
        _ => Err(E::from(bad(
            "static row",
            "no static row in the partition header".into(),
            pos,
        ))),
    }
}

/// Errors of the in-memory header decoder carry offsets relative to the
/// partition start.
pub(super) fn shift(mut e: Error, pos: DataPos) -> Error {
    if e.component == Some(Component::Data) {
        e.offset = e.offset.map(|o| o + pos.0);
    }
    e
}

/// A planned range read in growing windows (row limits: the rows needed
/// may end long before the range).
struct Grow {
    /// End of the current window.
    plan_end: DataPos,
    /// End of the whole range.
    data_end: DataPos,
    /// Size of the last window; each next one is twice as large.
    window: u64,
    /// The IO unit: windows end on unit boundaries (the physical reads
    /// cover whole units anyway).
    unit: u64,
}

impl Grow {
    fn end_at(&self, x: u64) -> DataPos {
        DataPos(x.div_ceil(self.unit).saturating_mul(self.unit)).min(self.data_end)
    }
}

/// Read rows and markers from the reader's position until the slice or the
/// partition ends, or (`stop_at`) the end of the last planned block.
/// Returns where reading stopped.
fn drive<E: From<Error>>(
    reader: &mut ScanReader<'_>,
    clip: &mut Clip<'_>,
    stop_at: Option<DataPos>,
    mut grow: Option<Grow>,
    f: &mut Visitor<'_, E>,
) -> std::result::Result<DataPos, E> {
    loop {
        if stop_at.is_some_and(|e| reader.position() >= e) {
            return Ok(reader.position());
        }
        if let Some(g) = grow.as_mut() {
            // The window reached the plan's end: plan the next, twice as large.
            let loaded = reader.loaded_end();
            if loaded >= g.plan_end && g.plan_end < g.data_end {
                g.window = g.window.saturating_mul(2);
                g.plan_end = g.end_at(loaded.0.saturating_add(g.window));
                reader.plan_read(Some(g.plan_end));
            }
        }
        let at = reader.position();
        // Rows and markers hand their allocations back (no allocation per row).
        let spare = match reader.next_fragment()? {
            Some(Fragment::Row(r)) => {
                if !clip.row(&r, f)? {
                    return Ok(r.position);
                }
                Fragment::Row(r).into_spare()
            }
            Some(Fragment::Marker(m)) => {
                if !clip.marker(&m, f)? {
                    return Ok(m.position);
                }
                Fragment::Marker(m).into_spare()
            }
            Some(Fragment::PartitionEnd { position }) => return Ok(position),
            Some(other) => {
                return Err(E::from(bad(
                    "unfiltered",
                    "partition start or static row inside a partition".into(),
                    other.position(),
                )))
            }
            None => {
                return Err(E::from(Error::at(
                    ErrorKind::UnexpectedEof { need: 1, have: 0 },
                    Component::Data,
                    at.0,
                    "end of partition",
                )))
            }
        };
        reader.recycle(spare);
    }
}

/// The blocks of `ri` that can hold the slice `(lower, upper)`: the first
/// block whose last clustering is after `lower` (binary search), and the
/// range up to the last block whose first clustering is before `upper`
/// (galloping from there); `None` when the slice falls between blocks.
pub(super) fn slice_blocks(
    sst: &Sstable,
    types: &[CqlType],
    ri: &mut dyn RowIndex,
    lower: Option<&ClusteringPrefix<'_>>,
    upper: Option<&ClusteringPrefix<'_>>,
) -> Result<(usize, Option<(usize, usize)>)> {
    let n = ri.block_count();
    let i = match lower {
        None => 0,
        Some(l) => search(0, n, &mut |k| {
            let b = ri.block(sst, k)?;
            Ok(compare_clustering(types, &b.last.as_prefix(), l) != Ordering::Greater)
        })?,
    };
    let q = match upper {
        None => n,
        Some(u) => gallop(i.saturating_sub(1), n, &mut |k| {
            let b = ri.block(sst, k)?;
            Ok(compare_clustering(types, &b.first.as_prefix(), u) == Ordering::Less)
        })?,
    };
    let range = q
        .checked_sub(1)
        .filter(|j| i < n && *j >= i)
        .map(|j| (i, j));
    Ok((i, range))
}

/// Where the rows of an indexed read lie (see [`seek_indexed`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct RowRange {
    /// Start of the first block read.
    pub(crate) start: DataPos,
    /// End of the last block read (or the partition's end).
    pub(crate) stop: DataPos,
    /// The last block read is the partition's last: read to its end.
    pub(crate) last: bool,
    /// End of the first block read.
    pub(crate) first_end: DataPos,
}

/// Steps 1 and 2 of an indexed read: the blocks of `ri` that can hold the
/// clip's slice (the range tombstone open before them goes to `clip.core.open`;
/// none with `rows` false), then `PartitionStart` and the static row to
/// `f`. Returns where the rows to read lie, or `None` (nothing to read);
/// the reader is left unpositioned.
#[allow(clippy::too_many_arguments)]
pub(crate) fn seek_indexed<E: From<Error>>(
    ctx: &Ctx<'_>,
    reader: &mut ScanReader<'_>,
    key: &[u8],
    pos: DataPos,
    end: Option<DataPos>,
    ri: &mut dyn RowIndex,
    clip: &mut Clip<'_>,
    rows: bool,
    f: &mut Visitor<'_, E>,
) -> std::result::Result<Option<RowRange>, E> {
    let sst = ctx.sst;
    let types = ctx.types.as_slice();
    let n = ri.block_count();
    reader.set_read_kind(ReadKind::Point);
    clip.plan.blocks = n;
    // 1. The blocks: [i, j].
    let data = if rows {
        let (i, range) = slice_blocks(
            sst,
            types,
            ri,
            clip.core.lower.as_ref(),
            clip.core.upper.as_ref(),
        )?;
        clip.core.open = if i > 0 {
            ri.block(sst, i - 1)?.end_open_marker
        } else {
            None
        };
        clip.plan.block_range = range;
        match range {
            Some((i, j)) => {
                let (bi, bj) = (ri.block(sst, i)?, ri.block(sst, j)?);
                let start = DataPos(pos.0 + bi.offset);
                let mut stop = DataPos(pos.0 + bj.offset + bj.width);
                if let Some(e) = end {
                    stop = stop.min(e);
                }
                let stop = stop.max(start);
                let first_end = DataPos(start.0 + bi.width).min(stop);
                Some(RowRange {
                    start,
                    stop,
                    last: j + 1 == n,
                    first_end,
                })
            }
            None => None,
        }
    } else {
        None
    };
    clip.plan.data = data.map(|d| (d.start, d.stop));

    // 2. Header and static row.
    let header_end = DataPos(pos.0 + ri.header_length());
    if ctx.has_static {
        let io = &sst.io;
        let cached = io.cached_object::<Vec<u8>>(Component::Data, NS_HEADER, pos.0, 0);
        clip.plan.header_cached = cached.is_some();
        let bytes = match cached {
            Some(b) => b,
            None => {
                // One read for both when the blocks follow the header
                // closely and everything fits in one `max_io` read.
                let plan_end = match data {
                    Some(d)
                        if d.start >= header_end
                            && d.start.0 - header_end.0 <= COALESCE_GAP
                            && d.stop.0 - pos.0 <= ctx.max_io =>
                    {
                        d.stop
                    }
                    _ => header_end,
                };
                reader.plan_read(Some(plan_end));
                let b = Rc::new(reader.read_bytes(pos, ri.header_length() as usize)?);
                if ri.header_length() <= MAX_CACHED_HEADER {
                    io.cache_object(
                        Component::Data,
                        NS_HEADER,
                        pos.0,
                        0,
                        Rc::clone(&b),
                        ri.header_length(),
                    );
                }
                b
            }
        };
        emit_header(sst, &ctx.header, &bytes, key, pos, f)?;
    } else {
        f(Fragment::PartitionStart {
            key,
            deletion: ri.deletion(),
            position: pos,
            header_end: Some(header_end),
        })?;
    }
    Ok(data)
}

#[allow(clippy::too_many_arguments)]
fn read_indexed<E: From<Error>>(
    ctx: &Ctx<'_>,
    reader: &mut ScanReader<'_>,
    key: &[u8],
    pos: DataPos,
    end: Option<DataPos>,
    ri: &mut dyn RowIndex,
    clip: &mut Clip<'_>,
    f: &mut Visitor<'_, E>,
) -> std::result::Result<(), E> {
    let data = seek_indexed(ctx, reader, key, pos, end, ri, clip, true, f)?;
    // 3. The rows.
    let stop = match data {
        Some(d) if !clip.limited => {
            // With a row limit the rows may end long before the range: read
            // the first block, then windows twice as large each time.
            let grow = (clip.limit != u64::MAX && d.first_end < d.stop).then(|| {
                let g = Grow {
                    plan_end: d.first_end,
                    data_end: d.stop,
                    window: (d.first_end.0 - d.start.0).max(1),
                    unit: ctx.unit,
                };
                Grow {
                    plan_end: g.end_at(d.first_end.0),
                    ..g
                }
            });
            reader.plan_read(Some(grow.as_ref().map_or(d.stop, |g| g.plan_end)));
            reader.seek_to(pos, key, d.start)?;
            let stop_at = if d.last { None } else { Some(d.stop) };
            drive(reader, clip, stop_at, grow, f)?
        }
        Some(d) => d.start,
        None => DataPos(pos.0 + ri.header_length()),
    };
    clip.finish(stop, f)?;
    f(Fragment::PartitionEnd { position: stop })
}

fn read_whole<E: From<Error>>(
    reader: &mut ScanReader<'_>,
    h: &PartitionHandle,
    naive: bool,
    clip: &mut Clip<'_>,
    f: &mut Visitor<'_, E>,
) -> std::result::Result<(), E> {
    reader.set_read_kind(if naive {
        ReadKind::Scan
    } else {
        ReadKind::Point
    });
    reader.plan_read(if naive { None } else { h.end });
    reader.seek_partition(h.position)?;
    let deletion = indexed_start(
        reader.next_fragment()?.as_ref(),
        &h.key,
        h.position,
        "partition",
    )?;
    // The first fragment after the header tells where the header ends; the
    // partition stops there when the first fragment is already past the slice.
    let stop = {
        let at = reader.position();
        let Some(first) = reader.next_fragment()? else {
            return Err(E::from(Error::at(
                ErrorKind::UnexpectedEof { need: 1, have: 0 },
                Component::Data,
                at.0,
                "end of partition",
            )));
        };
        let header_end = match &first {
            Fragment::StaticRow(r) => DataPos(r.position.0 + r.size),
            other => other.position(),
        };
        f(Fragment::PartitionStart {
            key: &h.key,
            deletion,
            position: h.position,
            header_end: Some(header_end),
        })?;
        match first {
            Fragment::StaticRow(r) => {
                f(Fragment::StaticRow(&r))?;
                None
            }
            Fragment::Row(r) => {
                if clip.row(&r, f)? {
                    None
                } else {
                    Some(r.position)
                }
            }
            Fragment::Marker(m) => {
                if clip.marker(&m, f)? {
                    None
                } else {
                    Some(m.position)
                }
            }
            Fragment::PartitionEnd { position } => Some(position),
            Fragment::PartitionStart { position, .. } => {
                return Err(E::from(bad(
                    "unfiltered",
                    "partition start inside a partition".into(),
                    position,
                )))
            }
        }
    };
    let stop = match stop {
        Some(s) => s,
        None => drive(reader, clip, None, None, f)?,
    };
    clip.finish(stop, f)?;
    f(Fragment::PartitionEnd { position: stop })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn search_and_gallop_find_the_first_false() {
        for n in 0..40usize {
            for t in 0..=n {
                for lo in 0..=t {
                    let mut probes = 0;
                    let mut pred = |k: usize| {
                        probes += 1;
                        Ok(k < t)
                    };
                    assert_eq!(search(lo, n, &mut pred).unwrap(), t);
                    assert_eq!(gallop(lo, n, &mut pred).unwrap(), t, "n {n} t {t} lo {lo}");
                    assert_eq!(
                        gallop_down(lo, n, &mut pred).unwrap(),
                        t,
                        "n {n} t {t} lo {lo}"
                    );
                }
            }
        }
        // Galloping from the answer costs O(1) probes.
        let mut probes = 0;
        let mut pred = |k: usize| {
            probes += 1;
            Ok(k < 501)
        };
        assert_eq!(gallop(500, 1_000_000, &mut pred).unwrap(), 501);
        assert!(probes <= 3, "{probes}");
        let mut probes = 0;
        let mut pred = |k: usize| {
            probes += 1;
            Ok(k < 999_998)
        };
        assert_eq!(gallop_down(0, 1_000_000, &mut pred).unwrap(), 999_998);
        assert!(probes <= 4, "{probes}");
        // Errors propagate.
        let mut bad = |_k: usize| -> Result<bool> {
            Err(Error::new(ErrorKind::BadValue("x".into()), "test"))
        };
        assert!(search(0, 10, &mut bad).is_err());
        assert!(gallop_down(0, 10, &mut bad).is_err());
    }

    #[test]
    fn indexed_start_names_another_partition_and_a_missing_header() {
        let d = DeletionTime {
            marked_for_delete_at: 7,
            local_deletion_time: 9,
        };
        let start = |key| -> Fragment<'_> {
            Fragment::PartitionStart {
                key,
                deletion: d,
                position: DataPos(0),
                header_end: None,
            }
        };
        let at = DataPos(42);
        let ok = start(b"k");
        assert_eq!(indexed_start(Some(&ok), b"k", at, "partition").unwrap(), d);
        let other = start(b"j");
        let e = indexed_start(Some(&other), b"k", at, "partition").unwrap_err();
        assert_eq!(
            e.kind.to_string(),
            ErrorKind::BadValue("the index points at another partition".into()).to_string()
        );
        assert_eq!((e.component, e.offset), (Some(Component::Data), Some(42)));
        let end: Fragment<'_> = Fragment::PartitionEnd { position: at };
        for (f, missing, text) in [
            (None, "partition", "no partition at the indexed position"),
            (
                Some(&end),
                "partition header",
                "no partition header at the indexed position",
            ),
        ] {
            let e = indexed_start(f, b"k", at, missing).unwrap_err();
            assert_eq!(
                e.kind.to_string(),
                ErrorKind::BadValue(text.into()).to_string()
            );
            assert_eq!(e.offset, Some(42));
        }
    }
}
