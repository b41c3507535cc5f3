//! [`ReversedReader`]: a partition (or a clustering slice of it) in reverse
//! clustering order, in memory bounded by a few promoted-index blocks,
//! never by the partition.
//!
//! # Output
//!
//! The events of [`super::BoundedReader`], in the same order for the
//! partition header (`PartitionStart`, then the static row), then the rows
//! and range tombstone markers of the slice from the last to the first, then
//! `PartitionEnd`. Markers are *reversed* ([`RangeTombstoneMarker::reversed`]):
//! in the reversed stream a start kind still opens and an end kind still
//! closes, so a forward `INCL_START_BOUND` becomes an `INCL_END_BOUND` (and
//! the other way round, exclusive likewise), and a boundary swaps its kinds
//! and its two deletion times. The output is therefore exactly the forward
//! output of the same slice, reversed, with that transformation of its
//! markers — synthetic clipping markers included (the one re-opening at the
//! upper bound comes first). `--limit N` gives the *last* N rows of the
//! slice; a range tombstone open after the N-th is closed at its clustering
//! (`INCL_END_BOUND`, as in a forward read).
//!
//! # Walk
//!
//! For a partition with a row index (promoted index, or BTI row trie):
//!
//! 1. The blocks that can hold the slice, as a forward read finds them
//!    ([`super::bounded`]): `[i, j]`. An empty slice ([`Slice::is_empty`])
//!    reads nothing past the header.
//! 2. The header and static row (tables with static columns), from the
//!    index cache or one read — together with the blocks when the
//!    partition is read whole and fits in one `max_io` read (scans: in the
//!    read-ahead window).
//! 3. The blocks from `j` down to `i`, in *groups* of consecutive blocks of
//!    at most `max_io` bytes (one block when a single block is larger). A
//!    group is read in one request; its rows and markers are located with
//!    their size fields only ([`ScanReader::skip_fragment`]), then decoded
//!    from the last to the first. With a row limit the first group is block
//!    `j` alone and each next one twice as large, so a short read touches
//!    only the end of the slice. The range tombstone open above block `j` is
//!    its `end_open_marker`; below that, every marker passed tells what is
//!    open under it. The first blocks of the walk go through the index cache
//!    (a short read is warm the next time), the rest through the row
//!    index's own window ([`RowIndex::block_walk`]: a walk over a huge
//!    partition does not fill the cache).
//!
//! A partition without a row index is smaller than one block by
//! construction: it is read whole (one request) and reversed.
//!
//! In scan mode ([`ReversedReader::set_scan`], `dump-data --reverse`),
//! partitions come in Data.db order: small ones are read with read-ahead
//! and what a read loaded serves the next one, nothing goes to the index
//! cache.
//!
//! # IO
//!
//! Reads are aligned down to the compression chunk (compressed Data.db) or
//! the IO unit, and the bytes of a group below its first block (the start of
//! the next group down) are kept: every chunk is read and decompressed once,
//! every unit read once (the IO layer keeps the first unit of the previous
//! request, so requests that end inside it do not read it again). A whole
//! partition reversed therefore reads the Data.db bytes of the forward read
//! (plus at most the unit of the header), and the whole promoted index (one
//! `IndexInfo` per block, a few percent of the data).
//!
//! Memory: the current group (at most `max_io`, or one block) held twice (the
//! bytes and the decoder's window), the start offsets of its rows, the chunk
//! or unit kept for the next group, 16 KiB windows of the promoted index,
//! and one decoded row or marker.
//!
//! Reference: C\* `o.a.c/db/columniterator/SSTableReversedIterator.java`
//! (`ReverseIndexedReader`: blocks last to first, each read forward and
//! buffered), `o.a.c/db/rows/RangeTombstoneBoundMarker.java` (`isOpen(reversed)`).

use std::rc::Rc;

use crate::clustering::{BoundKind, ClusteringPrefix};
use crate::component::Component;
use crate::data::{
    DataPos, DataSource, Fragment, MarkerDeletion, RangeTombstoneMarker, ReaderOptions, ScanReader,
};
use crate::error::{Error, ErrorKind, Result};
use crate::io::ReadKind;
use crate::sstable::Sstable;
use crate::statistics::SerializationHeader;
use crate::types::CqlType;
use crate::version::Features;

use super::bounded::{
    bad, emit_header, indexed_start, shift, slice_blocks, Clip, Visitor, COALESCE_GAP,
    MAX_CACHED_HEADER, NS_HEADER,
};
use super::{PartitionHandle, ReadOptions, ReadPlan, RowIndex, Slice};

impl BoundKind {
    /// The kind a bound takes in a reversed stream: start and end bounds
    /// swap (same inclusiveness), the two boundary kinds swap; rows and the
    /// static clustering are unchanged.
    pub fn reversed(self) -> BoundKind {
        match self {
            BoundKind::InclStartBound => BoundKind::InclEndBound,
            BoundKind::InclEndBound => BoundKind::InclStartBound,
            BoundKind::ExclStartBound => BoundKind::ExclEndBound,
            BoundKind::ExclEndBound => BoundKind::ExclStartBound,
            BoundKind::ExclEndInclStartBoundary => BoundKind::InclEndExclStartBoundary,
            BoundKind::InclEndExclStartBoundary => BoundKind::ExclEndInclStartBoundary,
            k @ (BoundKind::Clustering | BoundKind::StaticClustering) => k,
        }
    }
}

impl<'a> RangeTombstoneMarker<'a> {
    /// This marker as a reversed stream carries it: kind
    /// [`BoundKind::reversed`], and for a boundary the two deletion times
    /// swapped (what it closed going forward it opens going backward).
    /// Position, sizes and values are kept.
    pub fn reversed(&self) -> RangeTombstoneMarker<'a> {
        RangeTombstoneMarker {
            bound: ClusteringPrefix {
                kind: self.bound.kind.reversed(),
                values: self.bound.values.clone(),
            },
            deletion: match self.deletion {
                MarkerDeletion::Bound(d) => MarkerDeletion::Bound(d),
                MarkerDeletion::Boundary { end, start } => MarkerDeletion::Boundary {
                    end: start,
                    start: end,
                },
            },
            ..self.clone()
        }
    }
}

/// Blocks of a walk read through the index cache before the row index's
/// walk window takes over ([`RowIndex::block_walk`]).
const CACHED_WALK: usize = 32;

/// Uncompressed Data.db bytes `[start, start + bytes.len())`.
#[derive(Debug, Default)]
struct Span {
    start: u64,
    bytes: Vec<u8>,
}

impl Span {
    fn end(&self) -> u64 {
        self.start + self.bytes.len() as u64
    }

    fn covers(&self, s: u64, e: u64) -> bool {
        !self.bytes.is_empty() && self.start <= s && e <= self.end()
    }

    fn slice(&self, s: u64, e: u64) -> &[u8] {
        &self.bytes[(s - self.start) as usize..(e - self.start) as usize]
    }
}

/// The Data.db side: a byte source read backward without reading a chunk or
/// unit twice (see the module docs).
struct Back<'s> {
    src: DataSource<'s>,
    /// Reads start on multiples of this: the chunk length (compressed) or
    /// the IO unit.
    align: u64,
    /// The last group read, from its aligned start: its bytes below the
    /// group are the top of the next group down.
    carry: Span,
    /// The bytes read with the partition header (aligned, up to the end of
    /// its unit or chunk; or the whole partition when read together).
    front: Span,
}

impl Back<'_> {
    fn align_down(&self, x: u64) -> u64 {
        x - x % self.align
    }

    fn align_up(&self, x: u64) -> u64 {
        x.div_ceil(self.align)
            .saturating_mul(self.align)
            .min(self.src.data_len())
    }

    /// Uncompressed `[s, e)` read in one request.
    fn read(&mut self, s: u64, e: u64) -> Result<Vec<u8>> {
        if s >= e {
            return Ok(Vec::new());
        }
        self.src.plan(Some(DataPos(e)));
        self.src.read_range(DataPos(s), (e - s) as usize)
    }

    /// Make the carry hold `[s, e)` (and everything down to the aligned
    /// start of `s`), reading only what neither the carry nor the front
    /// holds.
    fn load(&mut self, s: u64, e: u64) -> Result<()> {
        if self.carry.covers(s, e) {
            return Ok(());
        }
        let a = self.align_down(s);
        // Top: the part of the previous group above `a`.
        let c = &self.carry;
        let (hi, top_from) = if !c.bytes.is_empty() && a < c.start && c.start < e && e <= c.end() {
            (self.carry.start, Some(self.carry.start))
        } else {
            (e, None)
        };
        // Bottom: what the header read holds.
        let lo = if !self.front.bytes.is_empty() && self.front.start <= a && a < self.front.end() {
            self.front.end().min(hi)
        } else {
            a
        };
        let middle = self.read(lo, hi)?;
        let mut bytes = if lo > a {
            let mut b = Vec::with_capacity((e - a) as usize);
            b.extend_from_slice(self.front.slice(a, lo));
            b.extend_from_slice(&middle);
            b
        } else {
            middle
        };
        if let Some(t) = top_from {
            bytes.extend_from_slice(self.carry.slice(t, e));
        }
        self.carry = Span { start: a, bytes };
        Ok(())
    }
}

/// Reads partitions in reverse clustering order (see the module docs). One
/// reader serves any number of reads.
pub struct ReversedReader<'s> {
    sst: &'s Sstable,
    header: SerializationHeader,
    types: Vec<CqlType>,
    features: Features,
    has_static: bool,
    max_io: u64,
    read_ahead: u64,
    back: Back<'s>,
    /// Partitions are read in Data.db order (dump-data): the reads of small
    /// partitions read ahead and share what they loaded.
    scan: bool,
}

impl std::fmt::Debug for ReversedReader<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReversedReader")
            .field("sstable", &self.sst.data_path())
            .finish()
    }
}

/// The chunk length of a compressed source (the smallest position in chunk 1).
fn chunk_length(src: &DataSource<'_>) -> Option<u64> {
    src.chunk_of(1)?;
    let (mut lo, mut hi) = (1u64, 1u64 << 40);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if src.chunk_of(mid).unwrap_or(0) >= 1 {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Some(lo)
}

impl<'s> ReversedReader<'s> {
    /// A reader of `sst`'s Data.db, decoded with `header` (the serialization
    /// header). Reads CompressionInfo.db when the sstable is compressed.
    pub fn new(sst: &'s Sstable, header: &SerializationHeader) -> Result<ReversedReader<'s>> {
        if sst.features().legacy_cells {
            return Err(Error::new(
                ErrorKind::Unsupported(format!(
                    "version {} uses the pre-3.0 cell format, not the row format",
                    sst.version()
                )),
                "Data.db format",
            )
            .in_file(&sst.data_path()));
        }
        let mut src = DataSource::open(sst)?;
        src.set_read_kind(ReadKind::Point);
        let opts = sst.io.options();
        let align = chunk_length(&src).unwrap_or(opts.unit).max(1);
        Ok(ReversedReader {
            sst,
            header: header.clone(),
            types: header.clustering_types.clone(),
            features: sst.features(),
            has_static: !header.static_columns.is_empty(),
            max_io: opts.max_io,
            read_ahead: opts.read_ahead,
            back: Back {
                src,
                align,
                carry: Span::default(),
                front: Span::default(),
            },
            scan: false,
        })
    }

    /// Partitions will be read in Data.db order (a whole-sstable dump):
    /// partitions without a row index are read with read-ahead, and what a
    /// read loaded is kept for the next one.
    pub fn set_scan(&mut self, on: bool) {
        self.scan = on;
    }

    /// The key of the partition starting at `pos` (Data.db order walks
    /// without a sequential index: the key is looked up, the partition
    /// read, and the next one starts at [`PartitionHandle::data_end`]);
    /// `None` at the end of the data. The bytes stay loaded for the read
    /// that follows when the reader is in scan mode.
    pub fn partition_key(&mut self, pos: DataPos) -> Result<Option<Vec<u8>>> {
        let len = self.back.src.data_len();
        if pos.0 >= len {
            return Ok(None);
        }
        self.back.src.set_read_kind(if self.scan {
            ReadKind::Scan
        } else {
            ReadKind::Point
        });
        let located = |e: Error| e.in_file(&self.sst.data_path());
        let b = self
            .back
            .read(pos.0, (pos.0 + 2).min(len))
            .map_err(located)?;
        if b.len() < 2 {
            return Err(Error::at(
                ErrorKind::UnexpectedEof {
                    need: 2,
                    have: b.len() as u64,
                },
                Component::Data,
                pos.0,
                "partition key length",
            )
            .in_file(&self.sst.data_path()));
        }
        let n = u16::from_be_bytes([b[0], b[1]]) as u64;
        if pos.0 + 2 + n > len {
            return Err(Error::at(
                ErrorKind::UnexpectedEof {
                    need: n,
                    have: len - pos.0 - 2,
                },
                Component::Data,
                pos.0 + 2,
                "partition key",
            )
            .in_file(&self.sst.data_path()));
        }
        self.back
            .read(pos.0 + 2, pos.0 + 2 + n)
            .map(Some)
            .map_err(located)
    }

    /// Read `slice` of the partition `h` in reverse clustering order,
    /// passing each event to `f`. `opts.naive` is ignored.
    pub fn read<E: From<Error>>(
        &mut self,
        h: &mut PartitionHandle,
        slice: &Slice,
        opts: &ReadOptions,
        f: &mut Visitor<'_, E>,
    ) -> std::result::Result<ReadPlan, E> {
        if !self.scan {
            self.back.src.reset();
        }
        self.back.carry = Span::default();
        self.back.front = Span::default();
        let limit = opts.limit.unwrap_or(u64::MAX);
        let mut clip = Clip::new(&self.types, slice, limit, true);
        let ctx = Ctx {
            sst: self.sst,
            header: &self.header,
            features: self.features,
            has_static: self.has_static,
            max_io: self.max_io,
            whole_max: if self.scan {
                self.max_io.max(self.read_ahead)
            } else {
                self.max_io
            },
            scan: self.scan,
        };
        let r = match &mut h.row_index {
            Some(ri) => {
                clip.plan.blocks = ri.block_count();
                read_indexed(&ctx, &mut self.back, h, &mut clip, f)
            }
            None => read_whole(&ctx, &mut self.back, h, &mut clip, f),
        };
        // Memory: nothing of this partition is kept.
        self.back.carry = Span::default();
        self.back.front = Span::default();
        r.map(|()| clip.plan)
    }
}

impl PartitionHandle {
    /// Where the partition ends in Data.db (the next one starts): its
    /// `end` when the index gave it, otherwise the end of the last row-index
    /// block (which includes the end-of-partition byte); `None` when
    /// neither is known.
    pub fn data_end(&mut self, sst: &Sstable) -> Result<Option<DataPos>> {
        if let Some(e) = self.end {
            return Ok(Some(e));
        }
        let pos = self.position.0;
        match self.row_index.as_mut() {
            Some(ri) if ri.block_count() > 0 => {
                let b = ri.block(sst, ri.block_count() - 1)?;
                Ok(Some(DataPos(pos + b.offset + b.width)))
            }
            _ => Ok(None),
        }
    }
}

/// What does not change between reads.
struct Ctx<'a, 's> {
    sst: &'s Sstable,
    header: &'a SerializationHeader,
    features: Features,
    has_static: bool,
    max_io: u64,
    /// Largest partition read whole in one request.
    whole_max: u64,
    scan: bool,
}

impl Ctx<'_, '_> {
    fn located(&self, e: Error, base: u64) -> Error {
        shift(e, DataPos(base)).in_file(&self.sst.data_path())
    }

    /// A decoder over `bytes` (uncompressed Data.db from `base`), the window
    /// loaded once (seeks inside it are free).
    fn decoder<'b>(&self, bytes: &'b [u8]) -> ScanReader<'b> {
        let opts = ReaderOptions {
            check_prev_sizes: false,
            block_size: bytes.len().max(1),
            ..ReaderOptions::default()
        };
        ScanReader::from_bytes(bytes, self.header, self.features, opts)
    }
}

/// Whether to go on after a group.
enum Walk {
    More,
    Stop(DataPos),
}

/// Decode the rows and markers of `bytes` (Data.db from `base`, whole
/// unfiltereds, possibly ending with the end-of-partition byte) forward to
/// find where each starts, then pass them to `clip` from the last to the
/// first. `to_end`: `bytes` run to the end of the partition, so they must
/// hold its end-of-partition byte (a Data.db cut at a row boundary fails
/// where the forward read fails, instead of losing the rows after the cut).
#[allow(clippy::too_many_arguments)]
fn reverse_group<E: From<Error>>(
    ctx: &Ctx<'_, '_>,
    bytes: &[u8],
    base: u64,
    key: &[u8],
    first: usize,
    to_end: bool,
    clip: &mut Clip<'_>,
    f: &mut Visitor<'_, E>,
) -> std::result::Result<Walk, E> {
    let mut r = ctx.decoder(bytes);
    let err = |e: Error| E::from(ctx.located(e, base));
    let mut starts: Vec<u32> = Vec::new();
    r.seek_to(DataPos(0), key, DataPos(first as u64))
        .map_err(err)?;
    // Where each row or marker starts: size fields only.
    let mut ended = false;
    while (r.position().0 as usize) < bytes.len() {
        let at = r.position().0;
        match r.skip_fragment().map_err(err)? {
            Some((_, false)) => starts.push(at as u32),
            Some((_, true)) => {
                ended = true;
                break;
            }
            None => {
                return Err(E::from(Error::at(
                    ErrorKind::UnexpectedEof { need: 1, have: 0 },
                    Component::Data,
                    base + at,
                    "end of partition",
                )))
            }
        }
    }
    if to_end && !ended {
        // The forward reader's error, at the same offset.
        return Err(err(Error::at(
            ErrorKind::UnexpectedEof { need: 1, have: 0 },
            Component::Data,
            r.position().0,
            "unfiltered flags (Data.db ends inside a partition)",
        )));
    }
    for &at in starts.iter().rev() {
        r.seek_to(DataPos(0), key, DataPos(at as u64))
            .map_err(err)?;
        let (go, spare) = match r.next_fragment().map_err(err)? {
            Some(Fragment::Row(mut row)) => {
                row.position = DataPos(row.position.0 + base);
                let go = clip.row(&row, f)?;
                (go, Fragment::Row(row).into_spare())
            }
            Some(Fragment::Marker(mut m)) => {
                m.position = DataPos(m.position.0 + base);
                let go = clip.marker(&m, f)?;
                (go, Fragment::Marker(m).into_spare())
            }
            other => {
                let what = if other.is_some() {
                    "partition start or static row inside a partition"
                } else {
                    "end of partition before the end of the block"
                };
                return Err(E::from(bad(
                    "unfiltered",
                    what.into(),
                    DataPos(base + at as u64),
                )));
            }
        };
        r.recycle(spare);
        if !go {
            return Ok(Walk::Stop(DataPos(base + at as u64)));
        }
    }
    Ok(Walk::More)
}

fn read_indexed<E: From<Error>>(
    ctx: &Ctx<'_, '_>,
    back: &mut Back<'_>,
    h: &mut PartitionHandle,
    clip: &mut Clip<'_>,
    f: &mut Visitor<'_, E>,
) -> std::result::Result<(), E> {
    let sst = ctx.sst;
    let pos = h.position;
    let key = h.key.as_slice();
    let Some(ri) = h.row_index.as_mut() else {
        return Ok(());
    };
    let ri: &mut dyn RowIndex = ri.as_mut();
    back.src.set_read_kind(ReadKind::Point);
    // 1. The blocks: [i, j].
    let (_, range) = slice_blocks(
        sst,
        clip.core.order,
        ri,
        clip.core.lower.as_ref(),
        clip.core.upper.as_ref(),
    )?;
    // Blocks through the index cache (a short read, e.g. with a limit, is
    // warm the next time), except in scans and past the first blocks of a
    // long walk: through the row index's own window (not filling the cache).
    let scan = ctx.scan;
    let block = |ri: &mut dyn RowIndex, k: usize, from_top: usize| {
        if scan || from_top >= CACHED_WALK {
            ri.block_walk(sst, k)
        } else {
            ri.block(sst, k)
        }
    };
    let data = match range {
        Some((i, j)) => {
            let (bj, bi) = (block(ri, j, 0)?, block(ri, i, 0)?);
            let start = pos.0 + bi.offset;
            let stop = (pos.0 + bj.offset + bj.width).max(start);
            Some((start, stop))
        }
        None => None,
    };
    clip.plan.block_range = range;
    clip.plan.data = data.map(|(s, e)| (DataPos(s), DataPos(e)));

    // 2. Header and static row. The whole partition in one read when it is
    // read whole and fits (`max_io`; scans: the read-ahead window, which
    // the read is served from); otherwise the header (static row) up to the
    // end of its unit or chunk. Kept as the front: the last group needs it.
    let header_end = pos.0 + ri.header_length();
    let whole = match data {
        Some((s, e))
            if clip.limit == u64::MAX
                && s >= header_end
                && s - header_end <= COALESCE_GAP
                && e - pos.0 <= ctx.whole_max =>
        {
            Some(e)
        }
        _ => None,
    };
    let cached = if ctx.has_static && !scan {
        sst.io
            .cached_object::<Vec<u8>>(Component::Data, NS_HEADER, pos.0, 0)
    } else {
        None
    };
    clip.plan.header_cached = cached.is_some();
    if cached.is_none() && (ctx.has_static || (scan && whole.is_some())) {
        let to = whole.unwrap_or(header_end);
        let from = back.align_down(pos.0);
        let to = back.align_up(to).max(header_end);
        back.src.set_read_kind(if scan {
            ReadKind::Scan
        } else {
            ReadKind::Point
        });
        back.front = Span {
            start: from,
            bytes: back.read(from, to)?,
        };
        back.src.set_read_kind(ReadKind::Point);
    }
    if ctx.has_static {
        let bytes = match cached {
            Some(b) => b,
            None => {
                let b = Rc::new(back.front.slice(pos.0, header_end).to_vec());
                if !scan && ri.header_length() <= MAX_CACHED_HEADER {
                    sst.io.cache_object(
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
        emit_header(sst, ctx.header, &bytes, key, pos, f)?;
    } else {
        f(Fragment::PartitionStart {
            key,
            deletion: ri.deletion(),
            position: pos,
            header_end: Some(DataPos(header_end)),
        })?;
    }

    // 3. The blocks, last to first, in groups.
    let mut stop = DataPos(data.map_or(header_end, |(s, _)| s));
    if let (Some((i, j)), false) = (range, clip.limited) {
        clip.core.open = block(ri, j, 0)?.end_open_marker;
        let max_group = ctx.max_io.max(1);
        let mut target = if clip.limit == u64::MAX { max_group } else { 0 };
        let mut top = j;
        loop {
            let b = block(ri, top, j - top)?;
            let e = pos.0 + b.offset + b.width;
            let mut s = pos.0 + b.offset;
            let mut lo = top;
            while lo > i {
                let p = block(ri, lo - 1, j - (lo - 1))?;
                let ps = pos.0 + p.offset;
                if ps + p.width != s || e - ps > target {
                    break;
                }
                lo -= 1;
                s = ps;
            }
            if e < s || e > back.src.data_len() {
                return Err(E::from(bad(
                    "promoted index block",
                    format!("block {lo}..={top} at [{s}, {e}) lies outside Data.db"),
                    DataPos(s),
                )));
            }
            back.load(s, e)?;
            let a = back.carry.start;
            let bytes = back.carry.slice(a, e);
            match reverse_group(ctx, bytes, a, key, (s - a) as usize, false, clip, f)? {
                Walk::Stop(at) => {
                    stop = at;
                    break;
                }
                Walk::More => stop = DataPos(s),
            }
            if lo == i {
                break;
            }
            target = target.max(e - s).saturating_mul(2).min(max_group);
            top = lo - 1;
        }
    }
    clip.finish(stop, f)?;
    f(Fragment::PartitionEnd { position: stop })
}

/// A partition without row index: read whole, reversed.
fn read_whole<E: From<Error>>(
    ctx: &Ctx<'_, '_>,
    back: &mut Back<'_>,
    h: &PartitionHandle,
    clip: &mut Clip<'_>,
    f: &mut Visitor<'_, E>,
) -> std::result::Result<(), E> {
    let pos = h.position.0;
    let data_len = back.src.data_len();
    let end = h.end.map_or(data_len, |e| e.0).min(data_len);
    if end <= pos {
        let msg = if pos >= data_len {
            format!(
                "Data.db ends at {data_len}, but the index lists a partition at {pos}: \
                 the file is truncated"
            )
        } else {
            format!("the partition at {pos} ends at {end}")
        };
        return Err(E::from(
            bad("partition", msg, h.position).in_file(&ctx.sst.data_path()),
        ));
    }
    back.src.set_read_kind(if ctx.scan {
        ReadKind::Scan
    } else {
        ReadKind::Point
    });
    let bytes = back.read(pos, end)?;
    let err = |e: Error| E::from(ctx.located(e, pos));
    let mut r = ctx.decoder(&bytes);
    r.seek_partition(DataPos(0)).map_err(err)?;
    let deletion = indexed_start(
        r.next_fragment().map_err(err)?.as_ref(),
        &h.key,
        h.position,
        "partition",
    )?;
    let first = r.position().0 as usize;
    // The static row, if any, and where the rows start.
    let (header_end, rows_from) = {
        let first_fragment = r.next_fragment().map_err(err)?;
        match first_fragment {
            Some(Fragment::StaticRow(mut row)) => {
                row.position = DataPos(row.position.0 + pos);
                let he = DataPos(row.position.0 + row.size);
                f(Fragment::PartitionStart {
                    key: &h.key,
                    deletion,
                    position: h.position,
                    header_end: Some(he),
                })?;
                f(Fragment::StaticRow(&row))?;
                (he, (he.0 - pos) as usize)
            }
            Some(_) => {
                let he = DataPos(pos + first as u64);
                f(Fragment::PartitionStart {
                    key: &h.key,
                    deletion,
                    position: h.position,
                    header_end: Some(he),
                })?;
                (he, first)
            }
            None => {
                return Err(E::from(Error::at(
                    ErrorKind::UnexpectedEof { need: 1, have: 0 },
                    Component::Data,
                    pos + first as u64,
                    "end of partition",
                )))
            }
        }
    };
    drop(r);
    clip.plan.data = Some((header_end, DataPos(end)));
    let stop = if clip.limited {
        header_end
    } else {
        match reverse_group(ctx, &bytes, pos, &h.key, rows_from, true, clip, f)? {
            Walk::Stop(at) => at,
            Walk::More => header_end,
        }
    };
    clip.finish(stop, f)?;
    f(Fragment::PartitionEnd { position: stop })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::data::Row;
    use crate::deletion::DeletionTime;
    use crate::io::IoOptions;
    use crate::read::{BigIndex, BoundedReader, ClusteringBound, PartitionIndex};
    use crate::statistics::Statistics;
    use crate::token::Partitioner;

    #[test]
    fn kinds_and_markers_reverse_twice_to_themselves() {
        for o in 0..8u8 {
            let k = BoundKind::from_ordinal(o).unwrap();
            assert_eq!(k.reversed().reversed(), k);
            assert_eq!(k.reversed().is_boundary(), k.is_boundary());
            if !k.is_boundary() {
                assert_eq!(k.reversed().is_start(), k.is_end());
            }
        }
        let d = |t| DeletionTime {
            marked_for_delete_at: t,
            local_deletion_time: 7,
        };
        let m = RangeTombstoneMarker {
            position: DataPos(10),
            size: 9,
            flags: crate::data::model::flags::IS_MARKER,
            bound: ClusteringPrefix {
                kind: BoundKind::ExclEndInclStartBoundary,
                values: vec![Some(b"a".as_slice())],
            },
            marker_size: 5,
            prev_unfiltered_size: 3,
            deletion: MarkerDeletion::Boundary {
                end: d(1),
                start: d(2),
            },
        };
        let r = m.reversed();
        assert_eq!(r.kind(), BoundKind::InclEndExclStartBoundary);
        assert_eq!(r.close_deletion(), Some(d(2)));
        assert_eq!(r.open_deletion(), Some(d(1)));
        assert_eq!(r.reversed(), m);
    }

    fn fixture(case: &str) -> Option<PathBuf> {
        crate::test_support::fixture_data(case)
    }

    /// An event as text, without the positions of synthetic markers (they
    /// differ between directions).
    fn text(e: &Fragment<'_, &Row<'_>, &RangeTombstoneMarker<'_>>) -> String {
        match e {
            Fragment::Row(r) => format!("row {:?} {:?}", r.position, r.clustering),
            Fragment::Marker(m) => format!("marker {:?} {:?}", m.bound, m.deletion),
            Fragment::StaticRow(r) => format!("static {:?}", r.cells),
            Fragment::PartitionStart {
                key,
                deletion,
                header_end,
                ..
            } => format!("start {key:?} {deletion:?} {header_end:?}"),
            Fragment::PartitionEnd { .. } => "end".into(),
        }
    }

    /// The forward events of a read, reversed (markers reversed).
    fn reversed_forward(events: Vec<(String, Option<String>)>) -> Vec<String> {
        let (head, body): (Vec<_>, Vec<_>) = events
            .into_iter()
            .partition(|(t, _)| t.starts_with("start") || t.starts_with("static"));
        let mut out: Vec<String> = head.into_iter().map(|e| e.0).collect();
        out.extend(
            body.into_iter()
                .rev()
                .filter(|(t, _)| t != "end")
                .map(|(t, r)| r.unwrap_or(t)),
        );
        out.push("end".into());
        out
    }

    /// Reversed reads equal forward reads reversed, for whole partitions
    /// and slices, with IO settings that make many small groups (every
    /// alignment case of the kept chunk or unit), on compressed and
    /// uncompressed, ascending and descending fixtures.
    #[test]
    fn reversed_reads_equal_forward_reads_reversed() {
        for case in ["nb_wide", "oa_wide", "nb_wide_desc"] {
            let Some(p) = fixture(case) else { continue };
            for opts in [
                IoOptions::default(),
                IoOptions {
                    unit: 512,
                    max_io: 2048,
                    ..IoOptions::default()
                },
                IoOptions {
                    unit: 4096,
                    max_io: 4096,
                    index_cache_bytes: 0,
                    ..IoOptions::default()
                },
            ] {
                let sst = Sstable::open_path_with(&p, opts).unwrap();
                let b = sst.read_component(Component::Statistics).unwrap();
                let st = Statistics::parse_lenient(&b, sst.features()).unwrap();
                let part = Partitioner::parse(&st.validation.unwrap().partitioner).unwrap();
                let header = st.header.unwrap();
                let mut idx = BigIndex::open(&sst, part, &header.clustering_fixed_lens()).unwrap();
                let mut fwd = BoundedReader::new(&sst, &header).unwrap();
                let mut rev = ReversedReader::new(&sst, &header).unwrap();
                let keys: Vec<Vec<u8>> = {
                    let mut scan = idx.scan();
                    let mut v = Vec::new();
                    while let Some(h) = scan.next_handle().unwrap() {
                        v.push(h.key);
                    }
                    v
                };
                assert!(keys.len() > 3, "{case}");
                for key in &keys {
                    // The rows' clusterings, for slices.
                    let mut h = idx.find(key).unwrap().unwrap();
                    let mut rows: Vec<Vec<Option<Vec<u8>>>> = Vec::new();
                    let mut all = Vec::new();
                    let mut visit =
                        |e: Fragment<'_, &Row<'_>, &RangeTombstoneMarker<'_>>| -> Result<()> {
                            if let Fragment::Row(r) = &e {
                                rows.push(
                                    r.clustering
                                        .values
                                        .iter()
                                        .map(|v| v.map(<[u8]>::to_vec))
                                        .collect(),
                                );
                            }
                            let r = match &e {
                                Fragment::Marker(m) => Some(text(&Fragment::Marker(&m.reversed()))),
                                _ => None,
                            };
                            all.push((text(&e), r));
                            Ok(())
                        };
                    fwd.read(&mut h, &Slice::all(), &ReadOptions::default(), &mut visit)
                        .unwrap();
                    let mut slices = vec![Slice::all()];
                    let n = rows.len();
                    if n > 2 {
                        for (a, b, ia, ib) in [
                            (0, n / 2, true, true),
                            (n / 3, n / 3 + n / 5, false, true),
                            (n / 2, n - 1, true, false),
                            (n / 4, n / 4, true, true),
                            (n / 4, n / 4 + 1, false, false),
                        ] {
                            let bound = |i: usize, inclusive| ClusteringBound {
                                values: rows[i][..1].to_vec(),
                                inclusive,
                            };
                            slices.push(Slice {
                                start: Some(bound(a, ia)),
                                end: Some(bound(b, ib)),
                            });
                            slices.push(Slice {
                                start: None,
                                end: Some(bound(b, ib)),
                            });
                            slices.push(Slice {
                                start: Some(bound(a, ia)),
                                end: None,
                            });
                        }
                    }
                    for slice in &slices {
                        let mut h = idx.find(key).unwrap().unwrap();
                        let mut f = Vec::new();
                        let mut visit =
                            |e: Fragment<'_, &Row<'_>, &RangeTombstoneMarker<'_>>| -> Result<()> {
                                let r = match &e {
                                    Fragment::Marker(m) => {
                                        Some(text(&Fragment::Marker(&m.reversed())))
                                    }
                                    _ => None,
                                };
                                f.push((text(&e), r));
                                Ok(())
                            };
                        let fp = fwd
                            .read(&mut h, slice, &ReadOptions::default(), &mut visit)
                            .unwrap();
                        let mut h = idx.find(key).unwrap().unwrap();
                        let mut r = Vec::new();
                        let mut visit =
                            |e: Fragment<'_, &Row<'_>, &RangeTombstoneMarker<'_>>| -> Result<()> {
                                r.push(text(&e));
                                Ok(())
                            };
                        let rp = rev
                            .read(&mut h, slice, &ReadOptions::default(), &mut visit)
                            .unwrap();
                        assert_eq!(r, reversed_forward(f), "{case} {opts:?} {slice:?}");
                        assert_eq!((rp.rows, rp.markers), (fp.rows, fp.markers));
                        assert_eq!(rp.block_range, fp.block_range);
                    }
                }
            }
        }
    }
}
