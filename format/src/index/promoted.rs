//! The promoted index of one Index.db entry: the partition's row-index blocks.
//!
//! Row format (`ma`+), `shared/docs/sstable-format.md` §4.1–4.2; C\*
//! `o.a.c/io/sstable/format/big/RowIndexEntry.java` (`IndexedEntry.serialize`),
//! `o.a.c/io/sstable/IndexInfo.java` (`Serializer`):
//!
//! ```text
//! promoted := header_length:uvint        key + deletion + static row length in Data.db
//!             deletion:DeletionTime      version serializer (12 B; 1/12 B in oa)
//!             block_count:uvint
//!             IndexInfo × block_count
//!             offsets: u32 × block_count  position of IndexInfo i relative to IndexInfo 0
//! IndexInfo := first_name:prefix  last_name:prefix     kind-tagged clustering prefixes (§3.5)
//!              offset:uvint                             block start, relative to partition start
//!              width:vint                               block length − 65536 (WIDTH_BASE)
//!              has_end_open_marker:u8  [end_open_marker:DeletionTime]
//! ```
//!
//! Legacy `ka`/`la` (§4.3; Scylla `sstables/index_reader.hh`,
//! `promoted_index_blocks_reader.hh`):
//!
//! ```text
//! promoted := deletion:DeletionTime(12 B)  block_count:i32
//!             ( first_name:short-bytes  last_name:short-bytes  offset:i64  width:i64 ) × block_count
//! ```
//!
//! Legacy names are full 2.x cell names (composites, §11), kept raw; there is
//! no header length and no offsets array.
//!
//! Blocks are decoded lazily: decoding needs the clustering columns' fixed
//! lengths (from the SerializationHeader), which a plain key/position scan of
//! Index.db does not.

use crate::clustering::{decode_prefix, ClusteringPrefix};
use crate::component::Component;
use crate::cur::Cur;
use crate::deletion::DeletionTime;
use crate::error::{Error, ErrorKind, Result};
use crate::version::Features;

/// `IndexInfo.WIDTH_BASE`: widths are stored as a signed delta from 64 KiB.
pub const WIDTH_BASE: i64 = 65536;

/// The first or last clustering of a block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexName<'a> {
    /// Row format: a kind-tagged clustering prefix.
    Prefix(ClusteringPrefix<'a>),
    /// `ka`/`la`: a raw 2.x cell name (composite, §11).
    Legacy(&'a [u8]),
}

impl<'a> IndexName<'a> {
    /// The prefix, for row-format names.
    pub fn as_prefix(&self) -> Option<&ClusteringPrefix<'a>> {
        match self {
            IndexName::Prefix(p) => Some(p),
            IndexName::Legacy(_) => None,
        }
    }

    /// The raw cell name, for legacy names.
    pub fn as_legacy(&self) -> Option<&'a [u8]> {
        match self {
            IndexName::Prefix(_) => None,
            IndexName::Legacy(b) => Some(b),
        }
    }
}

/// One row-index block (`IndexInfo`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexInfo<'a> {
    /// First clustering in the block.
    pub first_name: IndexName<'a>,
    /// Last clustering in the block.
    pub last_name: IndexName<'a>,
    /// Block start, relative to the partition start in (uncompressed) Data.db.
    pub offset: u64,
    /// Block length in bytes. Only a hint for the last block: C\* includes the
    /// end-of-partition byte, Scylla (CorrectLastPiBlockWidth) does not (§4.2).
    pub width: u64,
    /// The range tombstone open at the end of this block, if any (row format only).
    pub end_open_marker: Option<DeletionTime>,
    /// Absolute offset of this IndexInfo in Index.db.
    pub position: u64,
}

/// Decode one row-format `IndexInfo` at the cursor (§4.2). `fixed` has one
/// entry per clustering column (`Some(len)` for fixed-length types).
pub fn decode_index_info<'a>(
    cur: &mut Cur<'a>,
    fixed: &[Option<usize>],
    features: &Features,
) -> Result<IndexInfo<'a>> {
    let position = cur.abs_offset();
    let first = decode_prefix(cur, fixed)?;
    let last = decode_prefix(cur, fixed)?;
    let offset = cur.uvint("index block offset")?;
    let at = cur.clone();
    let delta = cur.vint("index block width")?;
    let width = delta
        .checked_add(WIDTH_BASE)
        .filter(|w| *w >= 0)
        .ok_or_else(|| {
            at.bad(
                "index block width",
                format!("negative width (delta {delta})"),
            )
        })?;
    let end_open_marker = if cur.bool("index block end-open-marker flag")? {
        Some(DeletionTime::decode(cur, features)?)
    } else {
        None
    };
    Ok(IndexInfo {
        first_name: IndexName::Prefix(first),
        last_name: IndexName::Prefix(last),
        offset,
        width: width as u64,
        end_open_marker,
        position,
    })
}

/// The promoted index of a partition.
#[derive(Debug, Clone)]
pub struct PromotedIndex<'a> {
    /// Length of partition key + deletion + static row in Data.db (row
    /// format); `None` for `ka`/`la`, which do not store it.
    pub header_length: Option<u64>,
    /// The partition-level deletion.
    pub deletion: DeletionTime,
    /// Number of IndexInfo blocks.
    pub block_count: usize,
    /// Offsets array as stored: position of IndexInfo `i` relative to
    /// IndexInfo 0 (row format; empty for `ka`/`la`).
    pub offsets: Vec<u32>,
    /// Absolute offset of the promoted index (its first byte) in Index.db.
    pub position: u64,
    /// The serialized IndexInfo blocks (without the offsets array).
    blocks_raw: &'a [u8],
    /// Absolute offset of `blocks_raw` in Index.db.
    blocks_base: u64,
    legacy: bool,
    features: Features,
}

impl<'a> PromotedIndex<'a> {
    /// Decode a row-format promoted index; `cur` spans exactly its `promoted_size` bytes.
    pub(crate) fn parse(mut cur: Cur<'a>, features: Features) -> Result<PromotedIndex<'a>> {
        let position = cur.abs_offset();
        let header_length = cur.uvint("promoted index header length")?;
        let deletion = DeletionTime::decode(&mut cur, &features)?;
        let n = cur.uvint("promoted index block count")?;
        // Each block takes 4 bytes of offsets plus at least 5 of IndexInfo
        // (two kind bytes, offset, width, flag).
        let block_count = cur.count(n, 4 + 5, "promoted index block count")?;
        let blocks_len = cur.remaining() - block_count * 4;
        let blocks_base = cur.abs_offset();
        let blocks_raw = cur.bytes(blocks_len, "promoted index blocks")?;
        let mut offsets = Vec::with_capacity(block_count);
        for _ in 0..block_count {
            offsets.push(cur.u32("promoted index offsets")?);
        }
        let pi = PromotedIndex {
            header_length: Some(header_length),
            deletion,
            block_count,
            offsets,
            position,
            blocks_raw,
            blocks_base,
            legacy: false,
            features,
        };
        // Validate the offsets array up front: cheap, and what binary search trusts.
        pi.check_offsets_array()?;
        Ok(pi)
    }

    /// Decode a `ka`/`la` promoted index; `cur` spans exactly its bytes.
    pub(crate) fn parse_legacy(mut cur: Cur<'a>, features: Features) -> Result<PromotedIndex<'a>> {
        let position = cur.abs_offset();
        let deletion = DeletionTime::decode_legacy(&mut cur)?;
        let at = cur.clone();
        let n = cur.i32("promoted index block count")?;
        if n < 0 {
            return Err(at.bad("promoted index block count", format!("negative count {n}")));
        }
        // Two short lengths and two i64 per block at least.
        let block_count = cur.count(n as u64, 20, "promoted index block count")?;
        let blocks_base = cur.abs_offset();
        let blocks_raw = cur.rest();
        Ok(PromotedIndex {
            header_length: None,
            deletion,
            block_count,
            offsets: Vec::new(),
            position,
            blocks_raw,
            blocks_base,
            legacy: true,
            features,
        })
    }

    /// True for a `ka`/`la` promoted index (raw names, no offsets array).
    pub fn is_legacy(&self) -> bool {
        self.legacy
    }

    fn check_offsets_array(&self) -> Result<()> {
        let at = |i: usize| self.blocks_base + self.blocks_raw.len() as u64 + 4 * i as u64;
        let mut prev: Option<u32> = None;
        for (i, &o) in self.offsets.iter().enumerate() {
            let bad = |msg: String| {
                Error::at(
                    ErrorKind::BadValue(msg),
                    Component::Index,
                    at(i),
                    "promoted index offsets",
                )
            };
            if i == 0 && o != 0 {
                return Err(bad(format!("offsets[0] is {o}, expected 0")));
            }
            if prev.is_some_and(|p| o <= p) {
                return Err(bad(format!("offsets[{i}] = {o} does not increase")));
            }
            if o as usize >= self.blocks_raw.len() {
                return Err(bad(format!(
                    "offsets[{i}] = {o} is past the {} bytes of blocks",
                    self.blocks_raw.len()
                )));
            }
            prev = Some(o);
        }
        Ok(())
    }

    fn decode_one(&self, cur: &mut Cur<'a>, fixed: &[Option<usize>]) -> Result<IndexInfo<'a>> {
        let position = cur.abs_offset();
        if self.legacy {
            let first = cur.short_bytes("index block first name")?;
            let last = cur.short_bytes("index block last name")?;
            let at = cur.clone();
            let offset = cur.i64("index block offset")?;
            let width = cur.i64("index block width")?;
            if offset < 0 || width < 0 {
                return Err(at.bad(
                    "index block offset",
                    format!("negative block offset {offset} or width {width}"),
                ));
            }
            return Ok(IndexInfo {
                first_name: IndexName::Legacy(first),
                last_name: IndexName::Legacy(last),
                offset: offset as u64,
                width: width as u64,
                end_open_marker: None,
                position,
            });
        }
        decode_index_info(cur, fixed, &self.features)
    }

    /// Decode every block in order. `fixed` has one entry per clustering
    /// column: `Some(len)` for fixed-length types (ignored for `ka`/`la`).
    ///
    /// Checks, as errors: each block starts where `offsets[i]` says, and the
    /// blocks end exactly where the offsets array starts (row format).
    pub fn blocks(&self, fixed: &[Option<usize>]) -> Result<Vec<IndexInfo<'a>>> {
        let mut cur = Cur::new(self.blocks_raw, Component::Index, self.blocks_base);
        let mut out = Vec::with_capacity(self.block_count);
        for i in 0..self.block_count {
            if let Some(&o) = self.offsets.get(i) {
                if cur.pos() as u64 != o as u64 {
                    return Err(cur.bad(
                        "promoted index offsets",
                        format!(
                            "IndexInfo {i} starts at relative offset {} but offsets[{i}] = {o}",
                            cur.pos()
                        ),
                    ));
                }
            }
            out.push(self.decode_one(&mut cur, fixed)?);
        }
        if !cur.is_empty() {
            return Err(cur.bad(
                "promoted index blocks",
                format!(
                    "{} bytes left after {} blocks",
                    cur.remaining(),
                    self.block_count
                ),
            ));
        }
        Ok(out)
    }

    /// Decode block `i` alone: via the offsets array in the row format (no
    /// other block is read), by scanning in `ka`/`la`.
    pub fn block(&self, i: usize, fixed: &[Option<usize>]) -> Result<IndexInfo<'a>> {
        let mut cur = Cur::new(self.blocks_raw, Component::Index, self.blocks_base);
        if i >= self.block_count {
            return Err(cur.bad(
                "promoted index block",
                format!("block {i} out of range ({} blocks)", self.block_count),
            ));
        }
        if self.legacy {
            for _ in 0..i {
                self.decode_one(&mut cur, fixed)?;
            }
        } else {
            let o = self.offsets.get(i).copied().unwrap_or(0);
            cur.seek(o as usize, "promoted index offsets")?;
        }
        self.decode_one(&mut cur, fixed)
    }

    /// Binary search over the blocks for the last one whose first name is
    /// `<=` the target, as judged by `cmp(first_name)` (the ordering of the
    /// block's first name relative to the target). `None` when every block
    /// starts after the target. Decodes O(log n) blocks in the row format.
    pub fn floor_block(
        &self,
        fixed: &[Option<usize>],
        mut cmp: impl FnMut(&IndexName<'a>) -> std::cmp::Ordering,
    ) -> Result<Option<usize>> {
        let (mut lo, mut hi) = (0usize, self.block_count);
        // Invariant: blocks < lo are <= target; blocks >= hi are > target.
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let b = self.block(mid, fixed)?;
            if cmp(&b.first_name) == std::cmp::Ordering::Greater {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        Ok(lo.checked_sub(1))
    }
}
