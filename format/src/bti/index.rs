//! [`BtiIndex`]: partition lookup through Filter.db, Partitions.db and
//! Rows.db, and [`BtiRowIndex`]: a partition's row trie as a
//! [`RowIndex`] for [`crate::read::BoundedReader`].
//!
//! Expected IO of one lookup (every Partitions.db / Rows.db read is a point
//! read of whole `--io-unit` pages through the index cache):
//!
//! * Opening: Filter.db (one read), the Partitions.db footer (its last
//!   page, usually holding the first and last keys too) and, for the key
//!   checks in Data.db, CompressionInfo.db (one read, when compressed).
//! * A key the filter rules out, or outside the first..last key range:
//!   nothing more.
//! * Otherwise the trie pages on the key's path (usually one or two; none
//!   warm). No payload on the path, or another hash byte: absent, with no
//!   Data.db or Rows.db read.
//! * A payload pointing into Data.db: the key there is compared (one
//!   Data.db read of its unit or compressed chunk, which the read of the
//!   partition that follows mostly reuses); the next partition's position
//!   (the partition's end) comes from the trie (its Rows.db entry when the
//!   next partition has a row index).
//! * A payload pointing into Rows.db: the entry's page (key, Data.db
//!   position, partition deletion), then the whole row trie of the
//!   partition, decoded once and kept in the index cache.
//!
//! Row-index blocks are bounded by clustering bounds decoded from the
//! separators (`super::comparable::separator_bounds`), so a bounded read
//! reads no Data.db bytes to locate its blocks: warm, a read within one
//! block costs one Data.db read.

use std::rc::Rc;

use crate::clustering::{BoundKind, ClusteringPrefix};
use crate::component::Component;
use crate::data::{DataPos, DataSource};
use crate::deletion::DeletionTime;
use crate::error::{Error, ErrorKind, Result};
use crate::filter::BloomFilter;
use crate::io::{IoLayer, ReadKind};
use crate::lookup::{
    Absence, Ceiling, IndexBlock, OwnedClustering, PartitionHandle, PartitionIndex, RowIndex,
    TokenBound,
};
use crate::sstable::Sstable;
use crate::token::Partitioner;
use crate::types::CqlType;

use super::comparable::{
    clustering_bytes, hash_byte, partition_key_bytes, separator_bounds, token_prefix,
    NEXT_COMPONENT,
};
use super::node::TrieSource;
use super::partitions::{
    exact_candidate, Candidate, PartitionPayload, PartitionPosition, PartitionsFooter, FOOTER_LEN,
};
use super::rows::{row_trie_entries, row_trie_floor, Flavor, RowTrieEntry, RowsEntry};
use super::walk;

/// Cache namespace of decoded row tries (Rows.db, keyed by root position).
const NS_ROW_TRIE: u8 = 3;

/// Largest footer key area read (two keys of at most 64 KiB).
const MAX_FOOTER_KEYS: u64 = 2 * (65_535 + 2);

/// A trie file read through the sstable's IO layer, one window of bytes at
/// a time.
#[derive(Debug)]
pub struct IoSource<'s> {
    io: &'s IoLayer,
    comp: Component,
    len: u64,
    fetch: Fetch,
    off: u64,
    buf: Vec<u8>,
}

/// How an [`IoSource`] fetches a miss.
#[derive(Debug, Clone, Copy)]
enum Fetch {
    /// Whole `unit` pages through the index cache: lookups revisit the same
    /// top nodes.
    Cached,
    /// Windows of at least this many bytes past the cache, for one walk over
    /// the whole file (scrub) whose memory must stay one window.
    Window(u64),
}

impl<'s> IoSource<'s> {
    /// A source over component `comp` of the layer, through its cache.
    pub fn new(io: &'s IoLayer, comp: Component) -> Result<IoSource<'s>> {
        Self::with(io, comp, Fetch::Cached)
    }

    /// A source over component `comp` that reads windows of at least
    /// `window` bytes without the cache.
    pub fn windowed(io: &'s IoLayer, comp: Component, window: u64) -> Result<IoSource<'s>> {
        Self::with(io, comp, Fetch::Window(window.max(1)))
    }

    fn with(io: &'s IoLayer, comp: Component, fetch: Fetch) -> Result<IoSource<'s>> {
        Ok(IoSource {
            io,
            comp,
            len: io.len(comp)?,
            fetch,
            off: 0,
            buf: Vec::new(),
        })
    }
}

impl TrieSource for IoSource<'_> {
    fn component(&self) -> Component {
        self.comp
    }

    fn len(&self) -> u64 {
        self.len
    }

    fn bytes(&mut self, off: u64, n: usize) -> Result<&[u8]> {
        if off >= self.len {
            return Ok(&[]);
        }
        let end = off.saturating_add(n as u64).min(self.len);
        let have_end = self.off + self.buf.len() as u64;
        if !(off >= self.off && end <= have_end) {
            match self.fetch {
                Fetch::Cached => {
                    let unit = self.io.options().unit.max(1);
                    let start = off - off % unit;
                    let fetch_end = end.max((off / unit + 1) * unit).min(self.len);
                    self.buf =
                        self.io
                            .read_cached(self.comp, start, (fetch_end - start) as usize)?;
                    self.off = start;
                }
                Fetch::Window(window) => {
                    // A trie walk reads a node's children (stored before it)
                    // after the node, then the node's next sibling (stored
                    // after it): a window holds mostly the bytes on the side
                    // of the miss, and a quarter on the other side.
                    let slack = window / 4;
                    let start = if off < self.off {
                        end.saturating_sub(window - slack)
                    } else {
                        off.saturating_sub(slack)
                    }
                    .min(off);
                    let stop = start.saturating_add(window).max(end).min(self.len);
                    // Free the old window before the new one is read.
                    self.buf = Vec::new();
                    self.buf =
                        self.io
                            .read(self.comp, start, (stop - start) as usize, ReadKind::Point)?;
                    self.off = start;
                }
            }
        }
        let s = (off - self.off) as usize;
        Ok(&self.buf[s..s + (end - off) as usize])
    }
}

/// Read the Partitions.db footer (and the first and last keys) of `sst`.
pub fn read_footer(io: &IoLayer) -> Result<PartitionsFooter> {
    let mut src = IoSource::new(io, Component::Partitions)?;
    let len = src.len();
    let tail_start = len.saturating_sub(FOOTER_LEN);
    let tail = src.bytes(tail_start, FOOTER_LEN as usize)?.to_vec();
    let (first_key_pos, _, _) = PartitionsFooter::first_key_pos_of(&tail, len)?;
    let from = first_key_pos.max(len.saturating_sub(MAX_FOOTER_KEYS + FOOTER_LEN));
    let all = src.bytes(from, (len - from) as usize)?.to_vec();
    PartitionsFooter::decode(&all, len)
}

/// Attach the file of the error's component.
fn locate(sst: &Sstable, e: Error) -> Error {
    match e.component {
        Some(c) => e.in_file(&sst.path(c)),
        None => e,
    }
}

/// The row-trie flavor of an sstable version.
pub fn flavor_of(sst: &Sstable) -> Flavor {
    if sst.version().is_scylla_only() {
        Flavor::Scylla
    } else {
        Flavor::Cassandra
    }
}

/// What a lookup found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// A partition without row index: its Data.db position, and the next
    /// partition's (its end) when there is one.
    Data {
        /// Partition start.
        position: u64,
        /// Next partition's start.
        next: Option<u64>,
    },
    /// A partition with a row index: its Rows.db entry.
    Rows(RowsEntry),
}

impl Found {
    /// The partition's start in Data.db.
    pub fn data_position(&self) -> u64 {
        match self {
            Found::Data { position, .. } => *position,
            Found::Rows(e) => e.data_position,
        }
    }
}

/// Partition lookup for BTI sstables (see the module docs for its IO).
pub struct BtiIndex<'s> {
    sst: &'s Sstable,
    partitioner: Partitioner,
    filter: Option<BloomFilter>,
    footer: PartitionsFooter,
    types: Rc<[CqlType]>,
    flavor: Flavor,
    data: DataSource<'s>,
    last_absence: Option<Absence>,
}

impl std::fmt::Debug for BtiIndex<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BtiIndex")
            .field("sstable", &self.sst.data_path())
            .field("footer", &self.footer)
            .finish()
    }
}

impl<'s> BtiIndex<'s> {
    /// Open the index of `sst`: reads Filter.db (when present) and the
    /// Partitions.db footer. `clustering_types` (from the serialization
    /// header) bound row-index blocks.
    pub fn open(
        sst: &'s Sstable,
        partitioner: Partitioner,
        clustering_types: &[CqlType],
    ) -> Result<BtiIndex<'s>> {
        Self::open_with(sst, partitioner, clustering_types, true)
    }

    /// [`BtiIndex::open`] without Filter.db, for what never asks it: a
    /// search by token ([`BtiIndex::ceiling`]), a walk over the data
    /// positions such as the cutting of a parallel read.
    pub fn open_without_filter(
        sst: &'s Sstable,
        partitioner: Partitioner,
        clustering_types: &[CqlType],
    ) -> Result<BtiIndex<'s>> {
        Self::open_with(sst, partitioner, clustering_types, false)
    }

    fn open_with(
        sst: &'s Sstable,
        partitioner: Partitioner,
        clustering_types: &[CqlType],
        with_filter: bool,
    ) -> Result<BtiIndex<'s>> {
        let features = sst.features();
        if !features.trie_index {
            return Err(Error::new(
                ErrorKind::Unsupported(format!(
                    "version {} is a BIG-format sstable: it has no trie indexes (Partitions.db, Rows.db)",
                    sst.version()
                )),
                "partition index",
            )
            .in_component(Component::Partitions)
            .in_file(&sst.path(Component::Partitions)));
        }
        sst.require(Component::Partitions)?;
        let filter = if with_filter && sst.has(Component::Filter) {
            let b = sst.read_component(Component::Filter)?;
            Some(
                BloomFilter::parse(&b, &features)
                    .map_err(|e| e.in_file(&sst.path(Component::Filter)))?,
            )
        } else {
            None
        };
        let footer = read_footer(&sst.io).map_err(|e| locate(sst, e))?;
        // Filter.db's layout is not self-describing (a few real files use
        // another version's): it must hold the first and last keys.
        let filter = filter.and_then(|f| f.fitted(&[&footer.first_key, &footer.last_key]));
        // Key checks in Data.db (CompressionInfo.db is read now, not by
        // the first lookup).
        let mut data = DataSource::open(sst)?;
        data.set_read_kind(ReadKind::Point);
        data.set_block_size(sst.io.options().unit as usize);
        Ok(BtiIndex {
            sst,
            partitioner,
            filter,
            footer,
            types: Rc::from(clustering_types),
            flavor: flavor_of(sst),
            data,
            last_absence: None,
        })
    }

    /// The Partitions.db footer.
    pub fn footer(&self) -> &PartitionsFooter {
        &self.footer
    }

    /// Look `key` up: where the partition is, or `None` (then
    /// [`PartitionIndex::last_absence`] says why).
    pub fn lookup(&mut self, key: &[u8]) -> Result<Option<Found>> {
        self.lookup_inner(key).map_err(|e| locate(self.sst, e))
    }

    /// The Data.db position of `key`'s partition (no row trie is read).
    pub fn position(&mut self, key: &[u8]) -> Result<Option<DataPos>> {
        Ok(self.lookup(key)?.map(|f| DataPos(f.data_position())))
    }

    fn absent(&mut self, why: Absence) -> Result<Option<Found>> {
        self.last_absence = Some(why);
        Ok(None)
    }

    fn lookup_inner(&mut self, key: &[u8]) -> Result<Option<Found>> {
        self.last_absence = None;
        if let Some(f) = &self.filter {
            if !f.may_contain(key) {
                return self.absent(Absence::Filter);
            }
        }
        let p = &self.partitioner;
        if p.has_known_order()
            && (p.compare_decorated(key, &self.footer.first_key).is_lt()
                || p.compare_decorated(key, &self.footer.last_key).is_gt())
        {
            return self.absent(Absence::KeyRange);
        }
        let bc = partition_key_bytes(p, key).ok_or_else(|| {
            Error::new(
                ErrorKind::Unsupported(format!(
                    "trie lookups with the {} (its key order depends on the key type)",
                    p.name()
                )),
                "partition key",
            )
        })?;
        let mut src = IoSource::new(&self.sst.io, Component::Partitions)?;
        let (payload, next) =
            match exact_candidate(&mut src, self.footer.root, &bc, hash_byte(key), true)? {
                Candidate::Found { payload, next, .. } => (payload, next),
                _ => return self.absent(Absence::Index),
            };
        match payload.position {
            PartitionPosition::Data(pos) => {
                if !self.data_key_is(pos, key)? {
                    return self.absent(Absence::Index);
                }
                let next = match next {
                    Some(n) => Some(self.data_position_of(&n)?),
                    None => None,
                };
                Ok(Some(Found::Data {
                    position: pos,
                    next,
                }))
            }
            PartitionPosition::Rows(off) => {
                let mut rows = IoSource::new(&self.sst.io, Component::Rows)?;
                let e = RowsEntry::read(&mut rows, off, self.flavor)?;
                if e.key != key {
                    return self.absent(Absence::Index);
                }
                Ok(Some(Found::Rows(e)))
            }
        }
    }

    /// The first partition at or after `bound` (`None`: every partition is
    /// before it): a ceiling search in the trie for the byte-comparable
    /// prefix of the token (every key of the token starts with it).
    ///
    /// The trie keeps only the shortest prefix that tells a key from its
    /// neighbours, so the walk can end on a partition whose prefix is a
    /// prefix of the token's: its key, read from Data.db or Rows.db, says
    /// whether it is before the bound (then its successor in the trie is
    /// the answer). Expected IO: the trie pages on the token's path and
    /// to the successor (usually one or two), and one key read (Data.db,
    /// or a Rows.db entry).
    pub fn ceiling(&mut self, bound: &TokenBound) -> Result<Option<Ceiling>> {
        self.ceiling_inner(bound).map_err(|e| locate(self.sst, e))
    }

    fn ceiling_inner(&mut self, bound: &TokenBound) -> Result<Option<Ceiling>> {
        let name = self.partitioner.name();
        let unsupported = || {
            Error::new(
                ErrorKind::Unsupported(format!(
                    "a trie search by token {} with the {name}",
                    bound.token
                )),
                "token bound",
            )
            .in_component(Component::Partitions)
        };
        let mut prefix = token_prefix(&bound.token).ok_or_else(unsupported)?;
        if bound.exclusive {
            // Above the separator that follows every token: past each key
            // of this token, below every key of a greater one.
            prefix.push(NEXT_COMPONENT + 1);
        }
        let mut src = IoSource::new(&self.sst.io, Component::Partitions)?;
        let f = walk::follow(&mut src, self.footer.root, &prefix)?;
        if let Some(p) = PartitionPayload::read(&mut src, &f.node)? {
            // The one partition whose stored prefix the path reached: it
            // may sort before the bound or after it.
            let c = self.payload_key(&p, f.node.pos)?;
            match bound.is_before(&self.partitioner.token(&c.key)) {
                Some(false) => return Ok(Some(c)),
                Some(true) => {}
                None => return Err(unsupported()),
            }
        }
        let Some((k, pos)) = f.greater else {
            return Ok(None);
        };
        let max = src.len();
        let Some((_, n)) = walk::first_payload(&mut src, pos, &k, walk::Order::Forward, max)?
        else {
            return Ok(None);
        };
        let Some(p) = PartitionPayload::read(&mut src, &n)? else {
            return Ok(None);
        };
        let c = self.payload_key(&p, n.pos)?;
        if bound.is_before(&self.partitioner.token(&c.key)) != Some(false) {
            return Err(Error::at(
                ErrorKind::BadValue(format!(
                    "the partition after token {} in the trie has a token before it",
                    bound.token
                )),
                Component::Partitions,
                n.pos,
                "token ceiling",
            ));
        }
        Ok(Some(c))
    }

    /// The Data.db position and key of a payload (the key from Data.db or
    /// Rows.db; `node` is the payload's trie node, for errors).
    fn payload_key(&mut self, p: &PartitionPayload, node: u64) -> Result<Ceiling> {
        match p.position {
            PartitionPosition::Data(pos) => {
                self.data.reset();
                let key = self.data.key_at(DataPos(pos))?.ok_or_else(|| {
                    Error::at(
                        ErrorKind::BadValue(format!(
                            "the trie places a partition at {pos}, past the end of Data.db"
                        )),
                        Component::Partitions,
                        node,
                        "partition payload",
                    )
                })?;
                Ok(Ceiling {
                    position: DataPos(pos),
                    key,
                    in_data: true,
                })
            }
            PartitionPosition::Rows(off) => {
                let mut rows = IoSource::new(&self.sst.io, Component::Rows)?;
                let e = RowsEntry::read(&mut rows, off, self.flavor)?;
                Ok(Ceiling {
                    position: DataPos(e.data_position),
                    key: e.key,
                    in_data: false,
                })
            }
        }
    }

    /// The Data.db position a payload stands for.
    fn data_position_of(&self, p: &PartitionPayload) -> Result<u64> {
        Ok(match p.position {
            PartitionPosition::Data(d) => d,
            PartitionPosition::Rows(off) => {
                let mut rows = IoSource::new(&self.sst.io, Component::Rows)?;
                RowsEntry::read(&mut rows, off, self.flavor)?.data_position
            }
        })
    }

    /// Visit every partition's start in Data.db, in order (`f` returns
    /// `false` to stop): a walk over Partitions.db, with one Rows.db entry
    /// read for each partition that has a row index.
    pub fn for_each_data_position(&self, f: &mut dyn FnMut(u64) -> Result<bool>) -> Result<()> {
        // A window, not the cache: one pass over the whole file.
        let mut src = IoSource::windowed(&self.sst.io, Component::Partitions, 1 << 16)
            .map_err(|e| locate(self.sst, e))?;
        let r = super::partitions::for_each_entry(&mut src, self.footer.root, &mut |e| {
            f(self.data_position_of(&e.payload)?)
        });
        r.map_err(|e| locate(self.sst, e))
    }

    /// True when the partition at `pos` in Data.db has key `key`.
    fn data_key_is(&mut self, pos: u64, key: &[u8]) -> Result<bool> {
        let d = &mut self.data;
        d.reset();
        let want = 2 + key.len();
        if pos.saturating_add(want as u64) > d.data_len() {
            return Ok(false);
        }
        d.plan(Some(DataPos(pos + want as u64)));
        let b = d.read_range(DataPos(pos), want)?;
        Ok(b[..2] == (key.len() as u16).to_be_bytes() && &b[2..] == key)
    }
}

impl PartitionIndex for BtiIndex<'_> {
    fn find(&mut self, key: &[u8]) -> Result<Option<PartitionHandle>> {
        Ok(match self.lookup(key)? {
            None => None,
            Some(Found::Data { position, next }) => Some(PartitionHandle {
                key: key.to_vec(),
                position: DataPos(position),
                end: next.map(DataPos),
                row_index: None,
            }),
            Some(Found::Rows(e)) => {
                let position = DataPos(e.data_position);
                let key = e.key.clone();
                let ri = BtiRowIndex::load(self.sst, e, Rc::clone(&self.types), self.flavor)
                    .map_err(|e| locate(self.sst, e))?;
                Some(PartitionHandle {
                    key,
                    position,
                    end: None,
                    row_index: Some(Box::new(ri)),
                })
            }
        })
    }

    fn last_absence(&self) -> Option<Absence> {
        self.last_absence
    }
}

/// A partition's row trie as a [`RowIndex`]: block `i` starts at entry
/// `i`'s offset and ends at entry `i + 1`'s; its first and last clusterings
/// are the bounds decoded from the two separators (module docs).
#[derive(Debug, Clone)]
pub struct BtiRowIndex {
    entry: RowsEntry,
    trie: Rc<Vec<RowTrieEntry>>,
    types: Rc<[CqlType]>,
    flavor: Flavor,
    blocks: Vec<Option<Rc<IndexBlock>>>,
}

impl BtiRowIndex {
    /// The row index of the partition with Rows.db entry `entry`: its trie
    /// decoded (or taken from the index cache).
    pub fn load(
        sst: &Sstable,
        entry: RowsEntry,
        types: Rc<[CqlType]>,
        flavor: Flavor,
    ) -> Result<BtiRowIndex> {
        let io = &sst.io;
        let trie = match io.cached_object::<Vec<RowTrieEntry>>(
            Component::Rows,
            NS_ROW_TRIE,
            entry.root,
            0,
        ) {
            Some(t) => t,
            None => {
                let mut src = IoSource::new(io, Component::Rows)?;
                let t = row_trie_entries(&mut src, entry.root, flavor)?;
                check_trie(&t, &entry)?;
                let size: usize = t.iter().map(|e| e.separator.len() + 48).sum();
                let t = Rc::new(t);
                io.cache_object(
                    Component::Rows,
                    NS_ROW_TRIE,
                    entry.root,
                    0,
                    Rc::clone(&t),
                    size as u64,
                );
                t
            }
        };
        let n = trie.len().saturating_sub(1).max(1);
        Ok(BtiRowIndex {
            entry,
            trie,
            types,
            flavor,
            blocks: vec![None; n],
        })
    }

    /// The partition's Rows.db entry.
    pub fn entry(&self) -> &RowsEntry {
        &self.entry
    }

    /// The trie's entries in order (block starts, then END_OF_PARTITION).
    pub fn entries(&self) -> &[RowTrieEntry] {
        &self.trie
    }

    /// The block that may hold clustering `c` (the floor of its
    /// byte-comparable form, walked in the trie); `None` when a clustering
    /// type has no byte-comparable encoding here.
    pub fn floor_block(&self, sst: &Sstable, c: &ClusteringPrefix<'_>) -> Result<Option<usize>> {
        let Some(bc) = clustering_bytes(&self.types, c) else {
            return Ok(None);
        };
        let mut src = IoSource::new(&sst.io, Component::Rows)?;
        let Some(e) = row_trie_floor(&mut src, self.entry.root, &bc, self.flavor)? else {
            return Ok(Some(0));
        };
        Ok(Some(
            self.trie
                .iter()
                .position(|x| x.payload.offset == e.payload.offset)
                .unwrap_or(0)
                .min(self.block_count().saturating_sub(1)),
        ))
    }

    fn make_block(&self, i: usize) -> IndexBlock {
        let t = &self.trie;
        let cur = &t[i];
        let first = separator_bounds(&self.types, &cur.separator).0;
        let (last, width, end_open_marker) = match t.get(i + 1) {
            Some(next) => {
                let last = separator_bounds(&self.types, &next.separator).1;
                // The last block includes the END_OF_PARTITION byte.
                let eop = u64::from(i + 2 == t.len());
                (
                    last,
                    next.payload.offset.saturating_sub(cur.payload.offset) + eop,
                    next.payload.open,
                )
            }
            None => (
                OwnedClustering {
                    kind: BoundKind::InclEndBound,
                    values: Vec::new(),
                },
                1,
                None,
            ),
        };
        IndexBlock {
            first,
            last,
            offset: cur.payload.offset,
            width,
            end_open_marker,
        }
    }
}

/// Offsets ascending, at least one entry.
fn check_trie(t: &[RowTrieEntry], e: &RowsEntry) -> Result<()> {
    let bad = |m: String| Error::at(ErrorKind::BadValue(m), Component::Rows, e.root, "row trie");
    if t.is_empty() {
        return Err(bad("row trie without any payload".into()));
    }
    for w in t.windows(2) {
        if w[1].payload.offset <= w[0].payload.offset {
            return Err(bad(format!(
                "row index block offsets not ascending ({} then {})",
                w[0].payload.offset, w[1].payload.offset
            )));
        }
    }
    Ok(())
}

impl RowIndex for BtiRowIndex {
    fn block_count(&self) -> usize {
        self.blocks.len()
    }

    fn block(&mut self, _sst: &Sstable, i: usize) -> Result<Rc<IndexBlock>> {
        let Some(slot) = self.blocks.get(i) else {
            return Err(Error::at(
                ErrorKind::BadValue(format!(
                    "row index block {i} out of range ({} blocks)",
                    self.blocks.len()
                )),
                Component::Rows,
                self.entry.root,
                "row index block",
            ));
        };
        if let Some(b) = slot {
            return Ok(Rc::clone(b));
        }
        let b = Rc::new(self.make_block(i));
        self.blocks[i] = Some(Rc::clone(&b));
        Ok(b)
    }

    fn location(&self) -> (Component, u64) {
        (Component::Rows, self.entry.root)
    }

    fn header_length(&self) -> u64 {
        self.trie.first().map_or(0, |e| e.payload.offset)
    }

    fn deletion(&self) -> DeletionTime {
        self.entry.deletion
    }
}
