//! [`BigIndex`]: partition lookup in BIG sstables (Filter.db, Summary.db,
//! Index.db), and [`BigRowIndex`]: a promoted index read block by block.
//!
//! Expected IO of one lookup (`shared/docs/sstable-format.md` §4, §5, §9):
//!
//! * Opening ([`BigIndex::open`]): Filter.db and Summary.db, one request each
//!   (kept for the life of the index).
//! * A key the filter rules out, or outside the sstable's first..last key:
//!   no read at all.
//! * Otherwise: the Index.db bytes from the summary sample's position up to
//!   the entry, page by page through the index cache (usually one page: the
//!   sampled interval holds 128 small entries; a promoted index of another
//!   partition in between is skipped, not read); then the entry's promoted
//!   index header (usually the same page). For a partition without promoted
//!   index, the next entry's position too (its end in Data.db; usually the
//!   same page).
//! * Each [`BigRowIndex::block`] not in the cache: the 4-byte offsets-array
//!   slot and the block, one page each at most (usually cached already by
//!   earlier probes). A binary search therefore reads O(log₂ blocks) pages
//!   cold, none warm.

use std::cmp::Ordering;
use std::rc::Rc;

use crate::component::Component;
use crate::cur::Cur;
use crate::data::DataPos;
use crate::deletion::DeletionTime;
use crate::error::{Error, ErrorKind, Result};
use crate::filter::BloomFilter;
use crate::index::{decode_index_info, IndexName};
use crate::io::IoLayer;
use crate::sstable::Sstable;
use crate::summary::Summary;
use crate::token::Partitioner;
use crate::version::Features;

use super::{
    Absence, Ceiling, IndexBlock, OwnedClustering, PartitionHandle, PartitionIndex, RowIndex,
    TokenBound,
};

/// Cache namespace of parsed promoted-index blocks.
const NS_PI_BLOCK: u8 = 1;

/// Index.db bytes read through the index cache, at least to the end of the
/// page holding the first byte asked for.
struct IndexBytes<'s> {
    io: &'s IoLayer,
    len: u64,
    unit: u64,
    off: u64,
    buf: Vec<u8>,
    /// Sequential reads ([`BigIndex::scan`]): scan reads of at least
    /// [`SCAN_READ`] bytes, not through the index cache.
    scan: bool,
}

/// Index.db bytes read at a time by [`BigIndex::scan`].
const SCAN_READ: u64 = 64 * 1024;

impl<'s> IndexBytes<'s> {
    fn new(io: &'s IoLayer, len: u64) -> Self {
        IndexBytes {
            io,
            len,
            unit: io.options().unit,
            off: 0,
            buf: Vec::new(),
            scan: false,
        }
    }

    /// Up to `n` bytes at `at` (fewer at the end of the file).
    fn get(&mut self, at: u64, n: u64) -> Result<&[u8]> {
        let end = at.saturating_add(n).min(self.len);
        if at > end {
            return Ok(&[]);
        }
        let have_end = self.off + self.buf.len() as u64;
        if !(at >= self.off && end <= have_end) {
            if self.scan {
                let fetch_end = end.max(at.saturating_add(SCAN_READ)).min(self.len);
                self.buf = self.io.read(
                    Component::Index,
                    at,
                    (fetch_end - at) as usize,
                    crate::io::ReadKind::Scan,
                )?;
            } else {
                let page_end = (at / self.unit + 1) * self.unit;
                let fetch_end = end.max(page_end).min(self.len);
                self.buf = self
                    .io
                    .read_cached(Component::Index, at, (fetch_end - at) as usize)?;
            }
            self.off = at;
        }
        let s = (at - self.off) as usize;
        Ok(&self.buf[s..s + (end - at) as usize])
    }
}

/// One Index.db entry's head: key, position and promoted index extent.
struct EntryHead {
    key: Vec<u8>,
    position: u64,
    /// Absolute offset of the promoted index (its first byte).
    pi_start: u64,
    /// Its size (0: none).
    pi_size: u64,
}

impl EntryHead {
    fn next(&self) -> u64 {
        self.pi_start + self.pi_size
    }
}

/// Partition lookup for BIG sstables (see the module docs for its IO).
#[derive(Debug)]
pub struct BigIndex<'s> {
    sst: &'s Sstable,
    partitioner: Partitioner,
    features: Features,
    filter: Option<BloomFilter>,
    summary: Option<Summary>,
    index_len: u64,
    fixed: Rc<[Option<usize>]>,
    last_absence: Option<Absence>,
}

impl<'s> BigIndex<'s> {
    /// Open the index of `sst`: reads Filter.db (when present) and
    /// Summary.db (when present; without it Index.db is scanned from its
    /// start). `clustering_fixed` has one entry per clustering column
    /// (`Some(len)` for fixed-length types; decodes promoted-index blocks).
    pub fn open(
        sst: &'s Sstable,
        partitioner: Partitioner,
        clustering_fixed: &[Option<usize>],
    ) -> Result<BigIndex<'s>> {
        Self::open_with(sst, partitioner, clustering_fixed, true)
    }

    /// [`BigIndex::open`] without Filter.db, for what never asks it: a
    /// search by token ([`BigIndex::ceiling`]), a walk in order
    /// ([`BigIndex::scan`]) such as the cutting of a parallel read.
    pub fn open_without_filter(
        sst: &'s Sstable,
        partitioner: Partitioner,
        clustering_fixed: &[Option<usize>],
    ) -> Result<BigIndex<'s>> {
        Self::open_with(sst, partitioner, clustering_fixed, false)
    }

    fn open_with(
        sst: &'s Sstable,
        partitioner: Partitioner,
        clustering_fixed: &[Option<usize>],
        with_filter: bool,
    ) -> Result<BigIndex<'s>> {
        sst.require(Component::Index)?;
        let features = sst.features();
        if features.trie_index {
            return Err(Error::new(
                ErrorKind::Unsupported(
                    "trie index lookups (Partitions.db / Rows.db) not implemented yet".into(),
                ),
                "partition index",
            )
            .in_file(&sst.data_path()));
        }
        let filter = if with_filter && sst.has(Component::Filter) {
            let b = sst.read_component(Component::Filter)?;
            Some(
                BloomFilter::parse(&b, &features)
                    .map_err(|e| e.in_file(&sst.path(Component::Filter)))?,
            )
        } else {
            None
        };
        let summary = if sst.has(Component::Summary) {
            let b = sst.read_component(Component::Summary)?;
            Some(
                Summary::parse(&b, &features)
                    .map_err(|e| e.in_file(&sst.path(Component::Summary)))?,
            )
        } else {
            None
        };
        // Filter.db's layout is not self-describing (a few real files use
        // another version's): it must hold the keys Summary.db knows are here.
        let filter = match (filter, &summary) {
            (Some(f), Some(s)) => f.fitted(&[&s.first_key, &s.last_key]),
            (f, _) => f,
        };
        let index_len = sst.io.len(Component::Index)?;
        Ok(BigIndex {
            sst,
            partitioner,
            features,
            filter,
            summary,
            index_len,
            fixed: Rc::from(clustering_fixed),
            last_absence: None,
        })
    }

    fn index_err(&self, e: Error) -> Error {
        e.in_file(&self.sst.path(Component::Index))
    }

    /// Decode the entry head at `at`.
    fn entry_head(&self, bytes: &mut IndexBytes<'_>, at: u64) -> Result<EntryHead> {
        let b = bytes.get(at, 2)?;
        if b.len() < 2 {
            return Err(Error::at(
                ErrorKind::UnexpectedEof {
                    need: 2,
                    have: b.len() as u64,
                },
                Component::Index,
                at,
                "index entry key",
            ));
        }
        let klen = u16::from_be_bytes([b[0], b[1]]) as u64;
        // Key, then two vints (modern) or i64 + i32 (ka/la).
        let b = bytes.get(at, 2 + klen + 18)?;
        let mut cur = Cur::new(b, Component::Index, at);
        let key = cur.short_bytes("index entry key")?.to_vec();
        let (position, pi_size) = if self.features.legacy_cells {
            let p = cur.i64("index entry position")?;
            let s = cur.i32("promoted index size")?;
            if p < 0 || s < 0 {
                return Err(cur.bad(
                    "index entry position",
                    format!("negative position {p} or promoted index size {s}"),
                ));
            }
            (p as u64, s as u64)
        } else {
            (
                cur.uvint("index entry position")?,
                cur.uvint("promoted index size")?,
            )
        };
        let pi_start = cur.abs_offset();
        if pi_start.saturating_add(pi_size) > self.index_len {
            return Err(cur.bad(
                "promoted index size",
                format!(
                    "promoted index of {pi_size} bytes runs past the end of Index.db ({} bytes)",
                    self.index_len
                ),
            ));
        }
        Ok(EntryHead {
            key,
            position,
            pi_start,
            pi_size,
        })
    }

    fn lookup(&mut self, key: &[u8]) -> Result<Option<PartitionHandle>> {
        self.last_absence = None;
        if let Some(f) = &self.filter {
            if !f.may_contain(key) {
                self.last_absence = Some(Absence::Filter);
                return Ok(None);
            }
        }
        let p = self.partitioner.clone();
        let (start, end) = match &self.summary {
            Some(s) if !s.is_empty() => {
                if p.compare_decorated(key, &s.first_key) == Ordering::Less
                    || p.compare_decorated(key, &s.last_key) == Ordering::Greater
                {
                    self.last_absence = Some(Absence::KeyRange);
                    return Ok(None);
                }
                let Some(i) = s.floor(|k| p.compare_decorated(k, key)) else {
                    self.last_absence = Some(Absence::KeyRange);
                    return Ok(None);
                };
                match s.index_range(i) {
                    Some((a, b)) => (a, b.unwrap_or(self.index_len).min(self.index_len)),
                    None => (0, self.index_len),
                }
            }
            _ => (0, self.index_len),
        };
        let mut bytes = IndexBytes::new(&self.sst.io, self.index_len);
        let mut at = start;
        while at < end {
            let e = self.entry_head(&mut bytes, at)?;
            match p.compare_decorated(&e.key, key) {
                Ordering::Less => at = e.next(),
                Ordering::Greater => break,
                Ordering::Equal => return self.handle(&mut bytes, e).map(Some),
            }
        }
        self.last_absence = Some(Absence::Index);
        Ok(None)
    }

    fn handle(&self, bytes: &mut IndexBytes<'_>, e: EntryHead) -> Result<PartitionHandle> {
        let mut row_index: Option<Box<dyn RowIndex>> = None;
        let mut end = None;
        if e.pi_size > 0 && !self.features.legacy_cells {
            let b = bytes.get(e.pi_start, e.pi_size.min(9 + 12 + 9))?;
            let mut cur = Cur::new(b, Component::Index, e.pi_start);
            let header_length = cur.uvint("promoted index header length")?;
            let deletion = DeletionTime::decode(&mut cur, &self.features)?;
            let n = cur.uvint("promoted index block count")?;
            let blocks_base = cur.abs_offset();
            let offsets_base = e.next().checked_sub(n.saturating_mul(4));
            let offsets_base = offsets_base
                .filter(|o| *o >= blocks_base.saturating_add(n.saturating_mul(5)))
                .ok_or_else(|| {
                    cur.bad(
                        "promoted index block count",
                        format!(
                            "{n} blocks do not fit in a promoted index of {} bytes",
                            e.pi_size
                        ),
                    )
                })?;
            // A scan has read a small promoted index already: keep it.
            let inline = if bytes.scan && e.pi_size <= SCAN_READ {
                Some(Rc::from(bytes.get(e.pi_start, e.pi_size)?))
            } else {
                None
            };
            row_index = Some(Box::new(BigRowIndex {
                pi_position: e.pi_start,
                blocks_base,
                offsets_base,
                block_count: n as usize,
                header_length,
                deletion,
                fixed: Rc::clone(&self.fixed),
                features: self.features,
                walk: Default::default(),
                inline,
            }));
        } else if e.next() < self.index_len {
            // A small partition: its end is the next partition's start.
            end = Some(DataPos(self.entry_head(bytes, e.next())?.position));
        }
        Ok(PartitionHandle {
            key: e.key,
            position: DataPos(e.position),
            end,
            row_index,
        })
    }
}

impl<'s> BigIndex<'s> {
    /// The Index.db offsets of Summary.db's samples, in its order (none
    /// without a Summary.db).
    pub fn sample_offsets(&self) -> Vec<u64> {
        self.summary.as_ref().map_or_else(Vec::new, |s| {
            s.entries.iter().map(|e| e.index_position).collect()
        })
    }

    /// The size of Index.db.
    pub fn index_len(&self) -> u64 {
        self.index_len
    }

    /// The first partition at or after `bound` (`None`: every partition is
    /// before it). The summary samples are searched by token for the last
    /// one before the bound, and Index.db read forward from its entry;
    /// without Summary.db, from the start of Index.db.
    ///
    /// Expected IO: Index.db from the sample's entry to the partition's,
    /// page by page through the index cache (usually one page); without
    /// Summary.db, scan reads from the start of Index.db.
    pub fn ceiling(&self, bound: &TokenBound) -> Result<Option<Ceiling>> {
        self.ceiling_inner(bound).map_err(|e| self.index_err(e))
    }

    fn ceiling_inner(&self, bound: &TokenBound) -> Result<Option<Ceiling>> {
        let p = &self.partitioner;
        // A token of another partitioner counts as not before: the search
        // then stops early, never late.
        let before = |key: &[u8]| bound.is_before(&p.token(key)).unwrap_or(false);
        let mut bytes = IndexBytes::new(&self.sst.io, self.index_len);
        let sample = self.summary.as_ref().and_then(|s| {
            let n = s.entries.partition_point(|e| before(&e.key));
            s.entries.get(n.checked_sub(1)?)
        });
        let mut at = match sample {
            Some(e) if e.index_position < self.index_len => {
                // The sample's own entry must be where the summary says,
                // else the summary is not to be trusted: from the start.
                let head = self.entry_head(&mut bytes, e.index_position);
                match head {
                    Ok(h) if h.key == e.key => e.index_position,
                    _ => 0,
                }
            }
            _ => 0,
        };
        // From the start, Index.db is read in large sequential reads.
        bytes.scan = at == 0;
        while at < self.index_len {
            let e = self.entry_head(&mut bytes, at)?;
            if !before(&e.key) {
                return Ok(Some(Ceiling {
                    position: DataPos(e.position),
                    key: e.key,
                    in_data: false,
                }));
            }
            at = e.next();
        }
        Ok(None)
    }

    /// Every partition, in Index.db (= Data.db) order: what
    /// [`PartitionIndex::find`] returns for each key, without lookups.
    /// Index.db is read sequentially (scan reads; promoted-index blocks are
    /// still read through the index cache when used).
    pub fn scan(&self) -> BigIndexScan<'_, 's> {
        let mut bytes = IndexBytes::new(&self.sst.io, self.index_len);
        bytes.scan = true;
        BigIndexScan {
            index: self,
            bytes,
            at: 0,
        }
    }
}

/// The partitions of a BIG sstable in order ([`BigIndex::scan`]).
pub struct BigIndexScan<'i, 's> {
    index: &'i BigIndex<'s>,
    bytes: IndexBytes<'s>,
    at: u64,
}

impl std::fmt::Debug for BigIndexScan<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BigIndexScan")
            .field("at", &self.at)
            .finish()
    }
}

impl BigIndexScan<'_, '_> {
    /// Where the next entry starts in Index.db.
    pub fn offset(&self) -> u64 {
        self.at
    }

    /// Continue with the entry that starts at `at` in Index.db (a summary
    /// sample's offset).
    pub fn jump(&mut self, at: u64) {
        self.at = at;
    }

    /// The next partition, `None` after the last.
    pub fn next_handle(&mut self) -> Result<Option<PartitionHandle>> {
        let ix = self.index;
        if self.at >= ix.index_len {
            return Ok(None);
        }
        let r = ix
            .entry_head(&mut self.bytes, self.at)
            .and_then(|e| {
                let next = e.next();
                ix.handle(&mut self.bytes, e).map(|h| (h, next))
            })
            .map_err(|e| ix.index_err(e))?;
        self.at = r.1;
        Ok(Some(r.0))
    }
}

impl PartitionIndex for BigIndex<'_> {
    fn find(&mut self, key: &[u8]) -> Result<Option<PartitionHandle>> {
        self.lookup(key).map_err(|e| self.index_err(e))
    }

    fn last_absence(&self) -> Option<Absence> {
        self.last_absence
    }
}

/// A row-format promoted index, read block by block through its offsets
/// array (§4.1–4.2). Decoded blocks are kept in the index cache, keyed by
/// the promoted index's Index.db offset and the block number.
#[derive(Debug, Clone)]
pub struct BigRowIndex {
    /// Offset of the promoted index in Index.db (the cache key).
    pub pi_position: u64,
    /// Offset of IndexInfo 0.
    pub blocks_base: u64,
    /// Offset of the offsets array (the end of the blocks).
    pub offsets_base: u64,
    /// Number of blocks.
    pub block_count: usize,
    /// Partition key + deletion + static row length in Data.db.
    pub header_length: u64,
    /// The partition deletion.
    pub deletion: DeletionTime,
    fixed: Rc<[Option<usize>]>,
    features: Features,
    /// [`RowIndex::block_walk`]'s windows: the offsets array, the blocks.
    walk: (WalkWindow, WalkWindow),
    /// The whole promoted index, when a scan read it ([`BigIndex::scan`]):
    /// blocks are decoded from it, without IO or the index cache.
    inline: Option<Rc<[u8]>>,
}

/// Index.db bytes of a promoted index read in windows that follow the walk:
/// a walk from the last block to the first (a reversed read) or from the
/// first to the last (cutting a partition into parts) reads each byte about
/// once, without the index cache ([`RowIndex::block_walk`]).
#[derive(Debug, Clone, Default)]
struct WalkWindow {
    start: u64,
    bytes: Vec<u8>,
}

/// Size of a [`WalkWindow`] read.
const WALK_WINDOW: u64 = 16 * 1024;

impl WalkWindow {
    /// `n` bytes at `at`, reading never below `floor` nor above `ceiling`.
    fn get(
        &mut self,
        io: &IoLayer,
        (floor, ceiling): (u64, u64),
        at: u64,
        n: usize,
    ) -> Result<Vec<u8>> {
        let end = at + n as u64;
        let have = self.start + self.bytes.len() as u64;
        if self.bytes.is_empty() || at < self.start || end > have {
            let unit = io.options().unit;
            let (s, upto, keep) = if !self.bytes.is_empty() && at >= self.start {
                // Walking up: the window starts at the request, so the next
                // blocks up are in it too.
                let s = (at / unit * unit).max(floor).min(at);
                (s, (s + WALK_WINDOW).min(ceiling).max(end), false)
            } else {
                // Walking down, with unit-aligned starts: consecutive
                // windows share no unit.
                let s = (end.saturating_sub(WALK_WINDOW) / unit * unit)
                    .max(floor)
                    .min(at);
                // What the window holds of [s, end) is not read again.
                let keep =
                    !self.bytes.is_empty() && s < self.start && self.start < end && end <= have;
                (s, if keep { self.start } else { end }, keep)
            };
            let mut b = io.read(
                Component::Index,
                s,
                (upto - s) as usize,
                crate::io::ReadKind::Point,
            )?;
            if keep {
                b.extend_from_slice(&self.bytes[..(end - self.start) as usize]);
            }
            self.bytes = b;
            self.start = s;
        }
        let o = (at - self.start) as usize;
        Ok(self.bytes[o..o + n].to_vec())
    }
}

impl BigRowIndex {
    /// Block `i` decoded from the inline promoted index.
    fn decode_inline(&self, sst: &Sstable, i: usize) -> Option<Result<Rc<IndexBlock>>> {
        let b = self.inline.as_ref()?;
        let base = self.pi_position;
        let r = self.decode_from(i, &mut |at, n| {
            let s = at.checked_sub(base).map(|s| s as usize);
            match s.and_then(|s| b.get(s..s.checked_add(n)?)) {
                Some(x) => Ok(x.to_vec()),
                None => Err(Error::at(
                    ErrorKind::UnexpectedEof {
                        need: n as u64,
                        have: 0,
                    },
                    Component::Index,
                    at,
                    "promoted index",
                )),
            }
        });
        Some(
            r.map(Rc::new)
                .map_err(|e| e.in_file(&sst.path(Component::Index))),
        )
    }

    fn decode(&self, sst: &Sstable, i: usize) -> Result<IndexBlock> {
        let io = &sst.io;
        self.decode_from(i, &mut |at, n| io.read_cached(Component::Index, at, n))
    }

    /// Decode block `i` with `get(offset, len)` reading Index.db.
    fn decode_from(
        &self,
        i: usize,
        get: &mut dyn FnMut(u64, usize) -> Result<Vec<u8>>,
    ) -> Result<IndexBlock> {
        let slot = self.offsets_base + 4 * i as u64;
        let b = get(slot, 4)?;
        let o = u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as u64;
        let at = self.blocks_base + o;
        if at >= self.offsets_base {
            return Err(Error::at(
                ErrorKind::BadValue(format!(
                    "offsets[{i}] = {o} is past the promoted index blocks"
                )),
                Component::Index,
                slot,
                "promoted index offsets",
            ));
        }
        let avail = self.offsets_base - at;
        let mut n = avail.min(256);
        loop {
            let bytes = get(at, n as usize)?;
            let mut cur = Cur::new(&bytes, Component::Index, at);
            match decode_index_info(&mut cur, &self.fixed, &self.features) {
                Ok(info) => {
                    let name = |x: &IndexName<'_>| match x {
                        IndexName::Prefix(p) => OwnedClustering::of(p),
                        IndexName::Legacy(_) => OwnedClustering {
                            kind: crate::clustering::BoundKind::Clustering,
                            values: Vec::new(),
                        },
                    };
                    return Ok(IndexBlock {
                        first: name(&info.first_name),
                        last: name(&info.last_name),
                        offset: info.offset,
                        width: info.width,
                        end_open_marker: info.end_open_marker,
                    });
                }
                Err(e)
                    if n < avail
                        && matches!(
                            e.kind,
                            ErrorKind::UnexpectedEof { .. } | ErrorKind::LengthOutOfRange { .. }
                        ) =>
                {
                    n = (n * 4).min(avail);
                }
                Err(e) => return Err(e),
            }
        }
    }
}

impl RowIndex for BigRowIndex {
    fn block_count(&self) -> usize {
        self.block_count
    }

    fn block(&mut self, sst: &Sstable, i: usize) -> Result<Rc<IndexBlock>> {
        if i >= self.block_count {
            return Err(Error::at(
                ErrorKind::BadValue(format!(
                    "promoted index block {i} out of range ({} blocks)",
                    self.block_count
                )),
                Component::Index,
                self.pi_position,
                "promoted index block",
            ));
        }
        if let Some(r) = self.decode_inline(sst, i) {
            return r;
        }
        let io = &sst.io;
        if let Some(b) = io.cached_object::<IndexBlock>(
            Component::Index,
            NS_PI_BLOCK,
            self.pi_position,
            i as u64,
        ) {
            return Ok(b);
        }
        let b = Rc::new(
            self.decode(sst, i)
                .map_err(|e| e.in_file(&sst.path(Component::Index)))?,
        );
        let size = 64 + b.first.byte_len() + b.last.byte_len();
        io.cache_object(
            Component::Index,
            NS_PI_BLOCK,
            self.pi_position,
            i as u64,
            Rc::clone(&b),
            size as u64,
        );
        Ok(b)
    }

    fn block_walk(&mut self, sst: &Sstable, i: usize) -> Result<Rc<IndexBlock>> {
        if i >= self.block_count || self.inline.is_some() {
            return self.block(sst, i);
        }
        let io = &sst.io;
        let (mut offsets, mut blocks) = std::mem::take(&mut self.walk);
        let (ob, bb) = (self.offsets_base, self.blocks_base);
        let oe = ob.saturating_add(4 * self.block_count as u64);
        let r = self.decode_from(i, &mut |at, n| {
            if at >= ob {
                offsets.get(io, (ob, oe), at, n)
            } else {
                blocks.get(io, (bb, ob), at, n)
            }
        });
        self.walk = (offsets, blocks);
        r.map(Rc::new)
            .map_err(|e| e.in_file(&sst.path(Component::Index)))
    }

    fn location(&self) -> (Component, u64) {
        (Component::Index, self.pi_position)
    }

    fn header_length(&self) -> u64 {
        self.header_length
    }

    fn deletion(&self) -> DeletionTime {
        self.deletion
    }
}
