//! Partitions.db: the partition trie (`shared/docs/sstable-format.md` §12.2,
//! §12.4; C\* `o.a.c/io/sstable/format/bti/PartitionIndex.java`).
//!
//! ```text
//! trie nodes …                  (children before parents)
//! first_key: short-bytes        at first_key_pos
//! last_key:  short-bytes
//! first_key_pos: i64            file_len - 24
//! key_count:     i64            file_len - 16
//! root_pos:      i64            file_len - 8
//! ```
//!
//! A partition's payload: payload flags `pb >= 8`: `hash:u8` then a signed
//! big-endian integer of `pb - 7` bytes; `1 <= pb < 8`: no hash, `pb`
//! bytes. Position `p >= 0`: the partition's entry in Rows.db; `p < 0`: the
//! partition starts at `~p` in Data.db. The trie holds the shortest prefix
//! of each key's byte-comparable form that tells it from its neighbours, so
//! a lookup ends with a key comparison (Data.db or Rows.db).

use crate::component::Component;
use crate::cur::Cur;
use crate::error::{Error, ErrorKind, Result};

use super::node::{read_signed, Node, TrieSource};
use super::walk::{self, Order};

/// Bytes of the footer's three integers.
pub const FOOTER_LEN: u64 = 24;

/// The footer of Partitions.db.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionsFooter {
    /// Where the first key is stored.
    pub first_key_pos: u64,
    /// Number of partitions.
    pub key_count: u64,
    /// Position of the root node.
    pub root: u64,
    /// The first partition key (serialized).
    pub first_key: Vec<u8>,
    /// The last partition key (serialized).
    pub last_key: Vec<u8>,
}

impl PartitionsFooter {
    /// Decode the footer from the file's tail: `tail` holds bytes
    /// `[file_len - tail.len(), file_len)`; it must reach back to
    /// `first_key_pos` (see [`PartitionsFooter::first_key_pos_of`]).
    pub fn decode(tail: &[u8], file_len: u64) -> Result<PartitionsFooter> {
        let base = file_len.saturating_sub(tail.len() as u64);
        let pos = Self::first_key_pos_of(tail, file_len)?;
        let (first_key_pos, key_count, root) = pos;
        if first_key_pos < base {
            return Err(Error::at(
                ErrorKind::BadValue(format!(
                    "first key position {first_key_pos} is before the bytes read ({base})"
                )),
                Component::Partitions,
                file_len - FOOTER_LEN,
                "Partitions.db footer",
            ));
        }
        let off = (first_key_pos - base) as usize;
        let keys_end = tail.len() - FOOTER_LEN as usize;
        let mut cur = Cur::new(&tail[off..keys_end], Component::Partitions, first_key_pos);
        let first_key = cur.short_bytes("Partitions.db first key")?.to_vec();
        let last_key = cur.short_bytes("Partitions.db last key")?.to_vec();
        Ok(PartitionsFooter {
            first_key_pos,
            key_count,
            root,
            first_key,
            last_key,
        })
    }

    /// The three footer integers (first key position, key count, root),
    /// checked against the file length, from the last 24 bytes of `tail`.
    pub fn first_key_pos_of(tail: &[u8], file_len: u64) -> Result<(u64, u64, u64)> {
        if file_len < FOOTER_LEN || (tail.len() as u64) < FOOTER_LEN {
            return Err(Error::at(
                ErrorKind::UnexpectedEof {
                    need: FOOTER_LEN,
                    have: file_len.min(tail.len() as u64),
                },
                Component::Partitions,
                0,
                "Partitions.db footer",
            ));
        }
        let at = file_len - FOOTER_LEN;
        let mut cur = Cur::new(
            &tail[tail.len() - FOOTER_LEN as usize..],
            Component::Partitions,
            at,
        );
        let first = cur.i64("first key position")?;
        let count = cur.i64("key count")?;
        let root = cur.i64("root position")?;
        let bad = |m: String| {
            Error::at(
                ErrorKind::BadValue(m),
                Component::Partitions,
                at,
                "Partitions.db footer",
            )
        };
        if first < 0 || first as u64 > at {
            return Err(bad(format!(
                "first key position {first} outside the file (footer at {at})"
            )));
        }
        if count < 0 {
            return Err(bad(format!("negative key count {count}")));
        }
        if root < 0 || root as u64 >= at {
            return Err(bad(format!(
                "root position {root} outside the trie (footer at {at})"
            )));
        }
        Ok((first as u64, count as u64, root as u64))
    }
}

/// Where a partition payload points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PartitionPosition {
    /// The partition starts here in (uncompressed) Data.db.
    Data(u64),
    /// The partition's entry (and row index) is here in Rows.db.
    Rows(u64),
}

/// A partition payload: the key's filter hash byte and its position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartitionPayload {
    /// The stored hash byte (when the flags say there is one).
    pub hash: Option<u8>,
    /// Where the partition is.
    pub position: PartitionPosition,
}

impl PartitionPayload {
    /// Decode the payload of `node` (`PartitionIndex.getIndexPos`); `None`
    /// for a node without payload.
    pub fn read<S: TrieSource + ?Sized>(src: &mut S, node: &Node) -> Result<Option<Self>> {
        let pb = node.payload_flags;
        if pb == 0 {
            return Ok(None);
        }
        let (hashed, n) = if pb >= 8 {
            (true, (pb - 7) as usize)
        } else {
            (false, pb as usize)
        };
        let need = n + usize::from(hashed);
        let at = node.payload_pos;
        let b = src.bytes(at, need)?;
        if b.len() < need {
            return Err(Error::at(
                ErrorKind::UnexpectedEof {
                    need: need as u64,
                    have: b.len() as u64,
                },
                src.component(),
                at,
                "partition payload",
            ));
        }
        let (hash, num) = if hashed {
            (Some(b[0]), &b[1..need])
        } else {
            (None, &b[..need])
        };
        let p = read_signed(num);
        Ok(Some(PartitionPayload {
            hash,
            position: if p >= 0 {
                PartitionPosition::Rows(p as u64)
            } else {
                PartitionPosition::Data(!p as u64)
            },
        }))
    }
}

/// What the trie says about a key (before the key itself is compared).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Candidate {
    /// No payload matches the key's prefix: the key is absent.
    NoPrefix,
    /// A payload matches the prefix but its hash byte differs: absent.
    HashMismatch {
        /// The stored hash byte.
        stored: u8,
    },
    /// The partition the key must be, if it is present.
    Found {
        /// The payload.
        payload: PartitionPayload,
        /// The key prefix stored in the trie.
        prefix: Vec<u8>,
        /// The next partition's payload (its successor in the trie), if any.
        next: Option<PartitionPayload>,
    },
}

/// Exact lookup (`PartitionIndex.Reader.exactCandidate`): follow the
/// byte-comparable key `bc`; stopping on a node with children before the key
/// ends means absent; a node without payload, or with another hash byte,
/// means absent. `want_next` also finds the successor payload.
pub fn exact_candidate<S: TrieSource + ?Sized>(
    src: &mut S,
    root: u64,
    bc: &[u8],
    hash: u8,
    want_next: bool,
) -> Result<Candidate> {
    let f = walk::follow(src, root, bc)?;
    if !f.exhausted(bc) && f.node.has_children() {
        return Ok(Candidate::NoPrefix);
    }
    let Some(payload) = PartitionPayload::read(src, &f.node)? else {
        return Ok(Candidate::NoPrefix);
    };
    if let Some(h) = payload.hash {
        if h != hash {
            return Ok(Candidate::HashMismatch { stored: h });
        }
    }
    let next = match (&f.greater, want_next) {
        (Some((k, pos)), true) => {
            let max = src.len();
            match walk::first_payload(src, *pos, k, Order::Forward, max)? {
                Some((_, n)) => PartitionPayload::read(src, &n)?,
                None => None,
            }
        }
        _ => None,
    };
    Ok(Candidate::Found {
        payload,
        prefix: bc[..f.matched].to_vec(),
        next,
    })
}

/// One leaf of the partition trie, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionEntry {
    /// The stored key prefix (byte-comparable).
    pub prefix: Vec<u8>,
    /// Position of its node.
    pub node: u64,
    /// The payload.
    pub payload: PartitionPayload,
}

/// Visit every partition payload in key order (`f` returns `false` to stop).
pub fn for_each_entry<S: TrieSource + ?Sized>(
    src: &mut S,
    root: u64,
    f: &mut dyn FnMut(PartitionEntry) -> Result<bool>,
) -> Result<()> {
    let max = src.len();
    walk::for_each_payload(src, root, &[], Order::Forward, max, &mut |src, k, n| {
        match PartitionPayload::read(src, n)? {
            Some(payload) => f(PartitionEntry {
                prefix: k.to_vec(),
                node: n.pos,
                payload,
            }),
            None => Ok(true),
        }
    })?;
    Ok(())
}
