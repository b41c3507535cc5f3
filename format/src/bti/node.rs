//! Trie nodes (`shared/docs/sstable-format.md` §12.1; C\*
//! `o.a.c/io/tries/TrieNode.java`, `o.a.c/io/util/SizedInts.java`).
//!
//! A node starts with one byte: the high nibble is the node type, the low
//! nibble the payload flags (0: no payload; the two `SINGLE_NOPAYLOAD` types
//! use it for pointer bits instead). Child pointers are *backward*
//! distances: `child = node − delta`, unsigned big-endian of the type's
//! width (12-bit arrays pack two entries in three bytes). The payload, when
//! there is one, starts right after the node; its layout belongs to the
//! trie's user (Partitions.db or Rows.db).
//!
//! | type | name | after the type byte | size |
//! |---|---|---|---|
//! | 0 | PAYLOAD_ONLY | – | 1 |
//! | 1 | SINGLE_NOPAYLOAD_4 | delta in the low nibble; `transition` | 2 |
//! | 2 | SINGLE_8 | `transition delta:u8` | 3 |
//! | 3 | SINGLE_NOPAYLOAD_12 | delta = low nibble << 8 \| `u8`; `transition` | 3 |
//! | 4 | SINGLE_16 | `transition delta:u16` | 4 |
//! | 5–9 | SPARSE_8/12/16/24/40 | `n transitions×n deltas×n` | 2 + n + ptr·n |
//! | 10–14 | DENSE_12/16/24/32/40 | `first len−1 deltas×len` (0 = no child) | 3 + ptr·len |
//! | 15 | LONG_DENSE | as DENSE with 8-byte deltas | 3 + 8·len |
//!
//! Decoding is checked: every field is bounds-checked, a pointer must point
//! strictly backwards (so every walk terminates), sparse transitions must be
//! strictly ascending and dense ranges must stay within one byte.

use crate::component::Component;
use crate::error::{Error, ErrorKind, Result};

/// Bytes of the largest possible node (LONG_DENSE over 256 transitions).
pub const MAX_NODE_BYTES: usize = 3 + 256 * 8;

/// The 16 node types, by on-disk nibble.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeType {
    /// 0: no children; payload at `pos + 1`.
    PayloadOnly,
    /// 1: one child, 4-bit delta, no payload.
    SingleNoPayload4,
    /// 2: one child, 8-bit delta.
    Single8,
    /// 3: one child, 12-bit delta, no payload.
    SingleNoPayload12,
    /// 4: one child, 16-bit delta.
    Single16,
    /// 5: sparse, 8-bit deltas.
    Sparse8,
    /// 6: sparse, 12-bit deltas.
    Sparse12,
    /// 7: sparse, 16-bit deltas.
    Sparse16,
    /// 8: sparse, 24-bit deltas.
    Sparse24,
    /// 9: sparse, 40-bit deltas.
    Sparse40,
    /// 10: dense, 12-bit deltas.
    Dense12,
    /// 11: dense, 16-bit deltas.
    Dense16,
    /// 12: dense, 24-bit deltas.
    Dense24,
    /// 13: dense, 32-bit deltas.
    Dense32,
    /// 14: dense, 40-bit deltas.
    Dense40,
    /// 15: dense, 64-bit deltas.
    LongDense,
}

impl NodeType {
    /// Every type, by nibble.
    pub const ALL: [NodeType; 16] = [
        NodeType::PayloadOnly,
        NodeType::SingleNoPayload4,
        NodeType::Single8,
        NodeType::SingleNoPayload12,
        NodeType::Single16,
        NodeType::Sparse8,
        NodeType::Sparse12,
        NodeType::Sparse16,
        NodeType::Sparse24,
        NodeType::Sparse40,
        NodeType::Dense12,
        NodeType::Dense16,
        NodeType::Dense24,
        NodeType::Dense32,
        NodeType::Dense40,
        NodeType::LongDense,
    ];

    /// The type of a node's first byte.
    pub fn of(first: u8) -> NodeType {
        Self::ALL[(first >> 4) as usize]
    }

    /// The on-disk nibble.
    pub fn nibble(self) -> u8 {
        self as u8
    }

    /// C\* name (`SPARSE_12`, …).
    pub fn name(self) -> &'static str {
        match self {
            NodeType::PayloadOnly => "PAYLOAD_ONLY",
            NodeType::SingleNoPayload4 => "SINGLE_NOPAYLOAD_4",
            NodeType::Single8 => "SINGLE_8",
            NodeType::SingleNoPayload12 => "SINGLE_NOPAYLOAD_12",
            NodeType::Single16 => "SINGLE_16",
            NodeType::Sparse8 => "SPARSE_8",
            NodeType::Sparse12 => "SPARSE_12",
            NodeType::Sparse16 => "SPARSE_16",
            NodeType::Sparse24 => "SPARSE_24",
            NodeType::Sparse40 => "SPARSE_40",
            NodeType::Dense12 => "DENSE_12",
            NodeType::Dense16 => "DENSE_16",
            NodeType::Dense24 => "DENSE_24",
            NodeType::Dense32 => "DENSE_32",
            NodeType::Dense40 => "DENSE_40",
            NodeType::LongDense => "LONG_DENSE",
        }
    }

    /// Pointer width in bits (0 for PAYLOAD_ONLY).
    pub fn pointer_bits(self) -> u32 {
        match self {
            NodeType::PayloadOnly => 0,
            NodeType::SingleNoPayload4 => 4,
            NodeType::Single8 | NodeType::Sparse8 => 8,
            NodeType::SingleNoPayload12 | NodeType::Sparse12 | NodeType::Dense12 => 12,
            NodeType::Single16 | NodeType::Sparse16 | NodeType::Dense16 => 16,
            NodeType::Sparse24 | NodeType::Dense24 => 24,
            NodeType::Dense32 => 32,
            NodeType::Sparse40 | NodeType::Dense40 => 40,
            NodeType::LongDense => 64,
        }
    }

    /// True for the types whose low nibble is pointer bits (never a payload).
    pub fn never_has_payload(self) -> bool {
        matches!(
            self,
            NodeType::SingleNoPayload4 | NodeType::SingleNoPayload12
        )
    }

    fn is_sparse(self) -> bool {
        matches!(
            self,
            NodeType::Sparse8
                | NodeType::Sparse12
                | NodeType::Sparse16
                | NodeType::Sparse24
                | NodeType::Sparse40
        )
    }

    fn is_dense(self) -> bool {
        matches!(
            self,
            NodeType::Dense12
                | NodeType::Dense16
                | NodeType::Dense24
                | NodeType::Dense32
                | NodeType::Dense40
                | NodeType::LongDense
        )
    }

    /// Size of an array of `n` pointers of this type.
    fn array_bytes(self, n: usize) -> usize {
        match self.pointer_bits() {
            12 => (3 * n).div_ceil(2),
            b => n * (b as usize / 8),
        }
    }
}

/// How many bytes the node starting with `head` occupies (its payload not
/// included), from its first three bytes at most. `None` when `head` is too
/// short to tell.
pub fn node_size(head: &[u8]) -> Option<usize> {
    let t = NodeType::of(*head.first()?);
    Some(match t {
        NodeType::PayloadOnly => 1,
        NodeType::SingleNoPayload4 => 2,
        NodeType::Single8 | NodeType::SingleNoPayload12 => 3,
        NodeType::Single16 => 4,
        _ if t.is_sparse() => {
            let n = *head.get(1)? as usize;
            2 + n + t.array_bytes(n)
        }
        _ => {
            let len = *head.get(2)? as usize + 1;
            3 + t.array_bytes(len)
        }
    })
}

/// A decoded node: its type, payload flags and position, and its children.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// Position of the node in its file.
    pub pos: u64,
    /// The node type.
    pub node_type: NodeType,
    /// Payload flags (the low nibble; 0 = no payload, always 0 for the
    /// `SINGLE_NOPAYLOAD` types).
    pub payload_flags: u8,
    /// Where the payload starts (right after the node).
    pub payload_pos: u64,
    /// `(transition byte, child position)`, transitions ascending.
    children: Vec<(u8, u64)>,
}

/// Read an unsigned big-endian integer of `n` bytes (0..=8).
fn be(b: &[u8]) -> u64 {
    b.iter().fold(0u64, |a, x| (a << 8) | *x as u64)
}

/// Entry `j` of a 12-bit array starting at `base` (`TrieNode.read12Bits`).
fn read12(b: &[u8], base: usize, j: usize) -> Option<u64> {
    let at = base + (3 * j) / 2;
    let w = u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]);
    let w = if j.is_multiple_of(2) { w >> 4 } else { w };
    Some((w & 0xFFF) as u64)
}

impl Node {
    /// Decode the node whose bytes start `b` (at least the whole node; any
    /// payload after it is ignored). `pos` is its position in `comp`.
    pub fn decode(b: &[u8], pos: u64, comp: Component) -> Result<Node> {
        let eof = |need: usize| {
            Error::at(
                ErrorKind::UnexpectedEof {
                    need: need as u64,
                    have: b.len() as u64,
                },
                comp,
                pos,
                "trie node",
            )
        };
        let bad = |m: String| Error::at(ErrorKind::BadValue(m), comp, pos, "trie node");
        let size = node_size(b).ok_or_else(|| eof(3))?;
        if b.len() < size {
            return Err(eof(size));
        }
        let first = b[0];
        let t = NodeType::of(first);
        let flags = if t.never_has_payload() {
            0
        } else {
            first & 0x0F
        };
        let mut deltas: Vec<(u8, u64)> = Vec::new();
        match t {
            NodeType::PayloadOnly => {}
            NodeType::SingleNoPayload4 => deltas.push((b[1], (first & 0x0F) as u64)),
            NodeType::Single8 => deltas.push((b[1], b[2] as u64)),
            NodeType::SingleNoPayload12 => {
                deltas.push((b[2], (((first & 0x0F) as u64) << 8) | b[1] as u64))
            }
            NodeType::Single16 => deltas.push((b[1], be(&b[2..4]))),
            _ if t.is_sparse() => {
                let n = b[1] as usize;
                let trans = &b[2..2 + n];
                let base = 2 + n;
                deltas.reserve(n);
                for (j, &tr) in trans.iter().enumerate() {
                    let d = match t.pointer_bits() {
                        12 => read12(b, base, j).ok_or_else(|| eof(size))?,
                        bits => {
                            let w = bits as usize / 8;
                            be(&b[base + w * j..base + w * (j + 1)])
                        }
                    };
                    if let Some(&(prev, _)) = deltas.last() {
                        if tr <= prev {
                            return Err(bad(format!(
                                "{} transitions not ascending ({prev:#04x} then {tr:#04x})",
                                t.name()
                            )));
                        }
                    }
                    deltas.push((tr, d));
                }
            }
            _ => {
                debug_assert!(t.is_dense());
                let start = b[1] as usize;
                let len = b[2] as usize + 1;
                if start + len > 256 {
                    return Err(bad(format!(
                        "{} range {start:#04x} + {len} runs past 0xff",
                        t.name()
                    )));
                }
                for j in 0..len {
                    let d = match t.pointer_bits() {
                        12 => read12(b, 3, j).ok_or_else(|| eof(size))?,
                        bits => {
                            let w = bits as usize / 8;
                            be(&b[3 + w * j..3 + w * (j + 1)])
                        }
                    };
                    // Dense: delta 0 means "no child".
                    if d != 0 {
                        deltas.push(((start + j) as u8, d));
                    }
                }
            }
        }
        let mut children = Vec::with_capacity(deltas.len());
        for (tr, d) in deltas {
            if d == 0 || d > pos {
                return Err(bad(format!(
                    "{} child {tr:#04x}: pointer delta {d} does not point backwards into the file",
                    t.name()
                )));
            }
            children.push((tr, pos - d));
        }
        Ok(Node {
            pos,
            node_type: t,
            payload_flags: flags,
            payload_pos: pos + size as u64,
            children,
        })
    }

    /// `(transition, child position)`, ascending.
    pub fn children(&self) -> &[(u8, u64)] {
        &self.children
    }

    /// True when the node carries a payload.
    pub fn has_payload(&self) -> bool {
        self.payload_flags != 0
    }

    /// True when the node has children.
    pub fn has_children(&self) -> bool {
        !self.children.is_empty()
    }

    /// Bytes of the node (without payload).
    pub fn size(&self) -> u64 {
        self.payload_pos - self.pos
    }

    fn search(&self, b: u8) -> std::result::Result<usize, usize> {
        self.children.binary_search_by(|(t, _)| t.cmp(&b))
    }

    /// The child for transition `b`.
    pub fn child(&self, b: u8) -> Option<u64> {
        self.search(b).ok().map(|i| self.children[i].1)
    }

    /// The child with the greatest transition below `b` (`None` for
    /// `b = None`, the end of a key, which is below every transition).
    pub fn lesser_child(&self, b: Option<u8>) -> Option<(u8, u64)> {
        let b = b?;
        let i = match self.search(b) {
            Ok(i) | Err(i) => i,
        };
        i.checked_sub(1).map(|k| self.children[k])
    }

    /// The child with the smallest transition above `b` (every child for
    /// `b = None`).
    pub fn greater_child(&self, b: Option<u8>) -> Option<(u8, u64)> {
        let i = match b {
            None => 0,
            Some(b) => match self.search(b) {
                Ok(i) => i + 1,
                Err(i) => i,
            },
        };
        self.children.get(i).copied()
    }
}

/// Random access to the bytes of a trie file.
pub trait TrieSource {
    /// The component (for errors).
    fn component(&self) -> Component;
    /// Length of the file.
    fn len(&self) -> u64;
    /// True for an empty file.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Up to `n` bytes at `off` (fewer only at the end of the file; empty
    /// at or past it).
    fn bytes(&mut self, off: u64, n: usize) -> Result<&[u8]>;
}

/// A trie file held in memory.
#[derive(Debug, Clone, Copy)]
pub struct SliceSource<'a> {
    buf: &'a [u8],
    comp: Component,
}

impl<'a> SliceSource<'a> {
    /// The bytes of `comp`.
    pub fn new(buf: &'a [u8], comp: Component) -> Self {
        SliceSource { buf, comp }
    }
}

impl TrieSource for SliceSource<'_> {
    fn component(&self) -> Component {
        self.comp
    }
    fn len(&self) -> u64 {
        self.buf.len() as u64
    }
    fn bytes(&mut self, off: u64, n: usize) -> Result<&[u8]> {
        let s = usize::try_from(off)
            .unwrap_or(usize::MAX)
            .min(self.buf.len());
        let e = s.saturating_add(n).min(self.buf.len());
        Ok(&self.buf[s..e])
    }
}

/// Read and decode the node at `pos`.
pub fn read_node<S: TrieSource + ?Sized>(src: &mut S, pos: u64) -> Result<Node> {
    let comp = src.component();
    if pos >= src.len() {
        return Err(Error::at(
            ErrorKind::BadValue(format!(
                "trie node position {pos} is past the end of the file ({} bytes)",
                src.len()
            )),
            comp,
            pos,
            "trie node",
        ));
    }
    let head = src.bytes(pos, 3)?;
    let size = node_size(head).unwrap_or(3);
    let b = src.bytes(pos, size)?;
    Node::decode(b, pos, comp)
}

/// Read a signed big-endian integer of `n` bytes (`SizedInts.read`).
pub fn read_signed(b: &[u8]) -> i64 {
    if b.is_empty() {
        return 0;
    }
    let v = be(b);
    let bits = 8 * b.len() as u32;
    if bits >= 64 {
        v as i64
    } else {
        // Sign-extend.
        ((v << (64 - bits)) as i64) >> (64 - bits)
    }
}

/// Minimal number of bytes of the signed value `v` (`SizedInts.nonZeroSize`).
pub fn signed_size(v: i64) -> usize {
    let x = if v < 0 { !v } else { v } as u64;
    // Bits needed, plus the sign bit.
    let bits = 64 - x.leading_zeros() + 1;
    (bits as usize).div_ceil(8).max(1)
}

/// Append `v` as a signed big-endian integer of `n` bytes.
pub fn write_signed(out: &mut Vec<u8>, v: i64, n: usize) {
    let b = v.to_be_bytes();
    out.extend_from_slice(&b[8 - n.min(8)..]);
}
