//! Rows.db: per-partition row-index tries and their entries
//! (`shared/docs/sstable-format.md` §12.5, §13.3; C\*
//! `o.a.c/io/sstable/format/bti/TrieIndexEntry.java`, `RowIndexReader.java`,
//! `RowIndexWriter.java`).
//!
//! For each partition with a row index: its trie's nodes, then its entry:
//!
//! ```text
//! key:            short-bytes
//! data_position:  uvint        partition start in Data.db
//! root_delta:     vint         root = (position after the key) + root_delta
//! block_count:    uvint
//! deletion:       DeletionTime (0x80 = live, else mfda:i64 ldt:u32;
//!                 Scylla: 0xC0 + mfda:i64 ldt:u32 for a negative mfda)
//! ```
//!
//! A row-trie payload (flags `pb`): `pb & 7` bytes signed big-endian, the
//! block's offset from the partition start; `pb & 8`: the range-tombstone
//! deletion open at the block start follows (C\*: the `da` DeletionTime
//! serializer; Scylla `ms`/`mt`: always `mfda:i64 ldt:u32`). Block 0 is
//! under the empty key; each later block under a separator `s` with
//! `last(previous block) < s <= first(block)`; a last entry, just above
//! the last clustering, points at the END_OF_PARTITION byte.

use crate::component::Component;
use crate::cur::Cur;
use crate::deletion::DeletionTime;
use crate::error::{Error, ErrorKind, Result};

use super::node::{read_signed, Node, TrieSource};
use super::walk::{self, Order};

/// How deletion times are written (C\* `da` or Scylla `ms`/`mt`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Flavor {
    /// Cassandra 5.0 `da`.
    #[default]
    Cassandra,
    /// ScyllaDB `ms` / `mt`.
    Scylla,
}

/// Decode an entry's partition deletion.
fn entry_deletion(cur: &mut Cur<'_>, flavor: Flavor) -> Result<DeletionTime> {
    let first = cur.peek_u8("partition deletion")?;
    if flavor == Flavor::Scylla && first == 0xC0 {
        cur.skip(1, "partition deletion")?;
        let mfda = cur.i64("deletion time (marked for delete at)")?;
        let ldt = cur.u32("deletion time (local deletion time)")?;
        return Ok(DeletionTime {
            marked_for_delete_at: mfda,
            local_deletion_time: ldt as i64,
        });
    }
    DeletionTime::decode_oa(cur)
}

/// A partition's entry in Rows.db.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowsEntry {
    /// Position of the entry in Rows.db.
    pub offset: u64,
    /// The serialized partition key.
    pub key: Vec<u8>,
    /// The partition's start in Data.db.
    pub data_position: u64,
    /// Position of the row trie's root in Rows.db.
    pub root: u64,
    /// Number of row-index blocks.
    pub block_count: u64,
    /// The partition deletion.
    pub deletion: DeletionTime,
    /// Bytes of the entry.
    pub len: u64,
}

impl RowsEntry {
    /// Most bytes an entry takes besides its key.
    pub const MAX_TAIL: usize = 9 + 9 + 9 + 13;

    /// Decode the entry at the start of `b`, which sits at `offset`.
    pub fn decode(b: &[u8], offset: u64, flavor: Flavor) -> Result<RowsEntry> {
        let mut cur = Cur::new(b, Component::Rows, offset);
        let key = cur.short_bytes("Rows.db entry key")?.to_vec();
        let after_key = cur.abs_offset();
        let data_position = cur.uvint("Rows.db entry data position")?;
        let at = cur.abs_offset();
        let delta = cur.vint("Rows.db entry root delta")?;
        let root = after_key as i128 + delta as i128;
        if root < 0 || root >= offset as i128 {
            return Err(Error::at(
                ErrorKind::BadValue(format!(
                    "row trie root {root} (delta {delta}) is not before the entry at {offset}"
                )),
                Component::Rows,
                at,
                "Rows.db entry root delta",
            ));
        }
        let block_count = cur.uvint("Rows.db entry block count")?;
        let deletion = entry_deletion(&mut cur, flavor)?;
        Ok(RowsEntry {
            offset,
            key,
            data_position,
            root: root as u64,
            block_count,
            deletion,
            len: cur.abs_offset() - offset,
        })
    }

    /// Read and decode the entry at `offset` of `src` (Rows.db).
    pub fn read<S: TrieSource + ?Sized>(src: &mut S, offset: u64, flavor: Flavor) -> Result<Self> {
        let b = src.bytes(offset, 2)?;
        if b.len() < 2 {
            return Err(Error::at(
                ErrorKind::UnexpectedEof {
                    need: 2,
                    have: b.len() as u64,
                },
                Component::Rows,
                offset,
                "Rows.db entry key",
            ));
        }
        let klen = u16::from_be_bytes([b[0], b[1]]) as usize;
        let b = src.bytes(offset, 2 + klen + Self::MAX_TAIL)?;
        RowsEntry::decode(b, offset, flavor)
    }
}

/// A row-trie payload: where a block starts and what is open there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowPayload {
    /// Offset of the block from the partition start.
    pub offset: u64,
    /// The range tombstone open at the block start.
    pub open: Option<DeletionTime>,
}

impl RowPayload {
    /// Decode the payload of `node` (`RowIndexReader.readPayload`); `None`
    /// for a node without payload.
    pub fn read<S: TrieSource + ?Sized>(
        src: &mut S,
        node: &Node,
        flavor: Flavor,
    ) -> Result<Option<Self>> {
        let pb = node.payload_flags;
        if pb == 0 {
            return Ok(None);
        }
        let n = (pb & 7) as usize;
        let open = pb & 8 != 0;
        let at = node.payload_pos;
        let b = src.bytes(at, n + if open { 12 } else { 0 })?;
        let mut cur = Cur::new(b, Component::Rows, at);
        let off = read_signed(cur.bytes(n, "row index block offset")?);
        if off < 0 {
            return Err(Error::at(
                ErrorKind::BadValue(format!("negative row index block offset {off}")),
                Component::Rows,
                at,
                "row index block offset",
            ));
        }
        let open = if open {
            Some(match flavor {
                Flavor::Cassandra => DeletionTime::decode_oa(&mut cur)?,
                Flavor::Scylla => {
                    let mfda = cur.i64("open marker (marked for delete at)")?;
                    let ldt = cur.u32("open marker (local deletion time)")?;
                    DeletionTime {
                        marked_for_delete_at: mfda,
                        local_deletion_time: ldt as i64,
                    }
                }
            })
        } else {
            None
        };
        let open = open.filter(|d| !d.is_live());
        Ok(Some(RowPayload {
            offset: off as u64,
            open,
        }))
    }
}

/// One entry of a row trie, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowTrieEntry {
    /// The separator (byte-comparable clustering prefix; empty for block 0).
    pub separator: Vec<u8>,
    /// The payload.
    pub payload: RowPayload,
}

/// Every entry of the row trie at `root`, in order: the blocks' starts,
/// then the END_OF_PARTITION entry (§12.5).
pub fn row_trie_entries<S: TrieSource + ?Sized>(
    src: &mut S,
    root: u64,
    flavor: Flavor,
) -> Result<Vec<RowTrieEntry>> {
    let max = src.len();
    let mut v = Vec::new();
    walk::for_each_payload(src, root, &[], Order::Forward, max, &mut |src, k, n| {
        if let Some(payload) = RowPayload::read(src, n, flavor)? {
            v.push(RowTrieEntry {
                separator: k.to_vec(),
                payload,
            });
        }
        Ok(true)
    })?;
    Ok(v)
}

/// The entry whose separator is the greatest `<= key` (a byte-comparable
/// clustering): the block that may hold `key` (`RowIndexReader.separatorFloor`).
pub fn row_trie_floor<S: TrieSource + ?Sized>(
    src: &mut S,
    root: u64,
    key: &[u8],
    flavor: Flavor,
) -> Result<Option<RowTrieEntry>> {
    let max = src.len();
    match walk::floor(src, root, key, max)? {
        Some((sep, node)) => {
            Ok(
                RowPayload::read(src, &node, flavor)?.map(|payload| RowTrieEntry {
                    separator: sep,
                    payload,
                }),
            )
        }
        None => Ok(None),
    }
}
