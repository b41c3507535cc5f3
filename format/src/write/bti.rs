//! Writers of the BTI trie indexes of `da` sstables: Partitions.db and
//! Rows.db (`shared/docs/sstable-format.md` §12; C\*
//! `o.a.c/io/tries/IncrementalTrieWriterPageAware.java`, `TrieNode.java`,
//! `o.a.c/io/sstable/format/bti/PartitionIndexBuilder.java`,
//! `PartitionIndex.java`, `RowIndexWriter.java`, `RowIndexReader.java`,
//! `TrieIndexEntry.java`, `BtiTableWriter.java`).
//!
//! Both files are written the way Cassandra writes them, byte for byte:
//!
//! * keys arrive in order and go into an incremental trie: a node is
//!   *completed* when a later key leaves its branch; a completed branch stays
//!   in memory until it reaches a page (4 KiB), then its children are laid
//!   out, biggest first, packed into the pages of the file (`PageAware`);
//!   memory is the unfinished spine of the trie plus less than a page of
//!   completed nodes per spine level;
//! * children are written before their parents and pointers are backward
//!   deltas; each node takes the smallest node type its farthest child
//!   allows ([`crate::bti::node`] has the types);
//! * [`PartitionIndexWriter`] stores for each partition the shortest prefix
//!   of its byte-comparable key that tells it from both neighbours, with the
//!   key's filter hash byte and its Rows.db entry or Data.db position; the
//!   file ends with the first and last keys and the footer;
//! * [`RowIndexWriter`] writes, for each partition with more than one
//!   row-index block, a trie of separators between blocks followed by the
//!   partition's entry (key, Data.db position, root, block count, partition
//!   deletion).
//!
//! The writers take what the sstable writer knows while it streams Data.db
//! (keys, positions, the first and last clustering of each block) and never
//! read anything back.

use std::io::Write;

use crate::bti::comparable::{clustering_bytes, hash_byte, partition_key_bytes, supported};
use crate::bti::node::{signed_size, write_signed, NodeType};
use crate::bti::partitions::PartitionPosition;
use crate::clustering::ClusteringPrefix;
use crate::component::Component;
use crate::cur::write_uvint;
use crate::deletion::DeletionTime;
use crate::error::{Error, ErrorKind, Result};
use crate::token::Partitioner;
use crate::types::CqlType;

/// The page size tries are packed into (`PageAware.PAGE_SIZE`).
pub const PAGE_SIZE: u64 = 4096;

/// A sink that knows its position, for page-aware layout.
struct PagedOut<W> {
    w: W,
    pos: u64,
    comp: Component,
}

impl<W: Write> PagedOut<W> {
    fn new(w: W, comp: Component) -> Self {
        PagedOut { w, pos: 0, comp }
    }

    fn put(&mut self, b: &[u8]) -> Result<()> {
        self.w.write_all(b).map_err(|e| {
            Error::at(
                ErrorKind::Io(e.kind(), e.to_string()),
                self.comp,
                self.pos,
                "writing the trie index",
            )
        })?;
        self.pos += b.len() as u64;
        Ok(())
    }

    /// Bytes up to the next page boundary (a whole page at a boundary).
    fn left_in_page(&self) -> i64 {
        (PAGE_SIZE - self.pos % PAGE_SIZE) as i64
    }

    /// Zeros up to the next page boundary (`PageAware.pad`).
    fn pad(&mut self) -> Result<()> {
        let rem = self.pos % PAGE_SIZE;
        if rem != 0 {
            let zeros = [0u8; PAGE_SIZE as usize];
            self.put(&zeros[..(PAGE_SIZE - rem) as usize])?;
        }
        Ok(())
    }
}

/// What a trie stores with a key (the trie's `TrieSerializer`).
trait Payload {
    /// Bytes after the node.
    fn size(&self) -> usize;
    /// The node's low nibble (never 0).
    fn flags(&self) -> u8;
    /// Append the bytes.
    fn put(&self, out: &mut Vec<u8>);
}

/// A node of the trie being built.
struct Node<P> {
    transition: u8,
    payload: Option<P>,
    /// Completed children, transitions ascending (written ones keep only
    /// their position and sizes).
    children: Vec<Node<P>>,
    /// Where the node was written.
    pos: Option<u64>,
    /// Bytes of the unwritten part of the branch below the node.
    branch_size: i64,
    /// Bytes of the node with its payload.
    node_size: i64,
    /// A written node lies deeper than the children (sizes depend on where
    /// the branch goes).
    oop_in_branch: bool,
    /// A child is written (the node's size depends on where it goes).
    oop_children: bool,
}

impl<P: Payload> Node<P> {
    fn new(transition: u8) -> Self {
        Node {
            transition,
            payload: None,
            children: Vec::new(),
            pos: None,
            branch_size: -1,
            node_size: -1,
            oop_in_branch: false,
            oop_children: true,
        }
    }

    fn total(&self) -> i64 {
        self.branch_size + self.node_size
    }

    /// The farthest (most negative) child delta this node must encode when
    /// placed at `pos` (`Node.maxPositionDelta`).
    fn max_delta(&self, pos: u64) -> i64 {
        if !self.oop_children {
            return -(self.branch_size - self.children[0].branch_size);
        }
        let (mut placed, mut unplaced) = (0i64, 1i64);
        for c in &self.children {
            match c.pos {
                Some(p) => placed = placed.min(p as i64 - pos as i64),
                None if unplaced > 0 => unplaced = -(self.branch_size - c.branch_size),
                None => {}
            }
        }
        placed.min(unplaced)
    }

    /// The node type for this node at `pos` (`TrieNode.typeFor`).
    fn node_type(&self, pos: u64) -> NodeType {
        use NodeType::*;
        const SINGLES: [NodeType; 8] = [
            SingleNoPayload4,
            Single8,
            SingleNoPayload12,
            Single16,
            Dense24,
            Dense32,
            Dense40,
            LongDense,
        ];
        const SPARSES: [NodeType; 8] = [
            Sparse8, Sparse8, Sparse12, Sparse16, Sparse24, Sparse40, Sparse40, LongDense,
        ];
        const DENSES: [NodeType; 8] = [
            Dense12, Dense12, Dense12, Dense16, Dense24, Dense32, Dense40, LongDense,
        ];
        let c = self.children.len();
        if c == 0 {
            return PayloadOnly;
        }
        let d = -self.max_delta(pos);
        let mut i = 0;
        while i < 7 && !fits(SINGLES[i], d) {
            i += 1;
        }
        if c == 1 {
            if self.payload.is_some() && SINGLES[i].never_has_payload() {
                i += 1;
            }
            return SINGLES[i];
        }
        let (sparse, dense) = (SPARSES[i], DENSES[i]);
        if self.type_size(sparse) < self.type_size(dense) {
            sparse
        } else {
            dense
        }
    }

    /// Bytes of the node as type `t`, without payload (`sizeofNode`).
    fn type_size(&self, t: NodeType) -> i64 {
        use NodeType::*;
        let c = self.children.len() as i64;
        let range = match (self.children.first(), self.children.last()) {
            (Some(l), Some(r)) => r.transition as i64 - l.transition as i64 + 1,
            _ => 0,
        };
        let bpp = t.pointer_bits() as i64 / 8;
        match t {
            PayloadOnly => 1,
            SingleNoPayload4 => 2,
            SingleNoPayload12 => 3,
            Single8 | Single16 => 2 + bpp,
            Sparse12 => 2 + (c * 5 + 1) / 2,
            Sparse8 | Sparse16 | Sparse24 | Sparse40 => 2 + c * (1 + bpp),
            Dense12 => 3 + (range * 3 + 1) / 2,
            Dense16 | Dense24 | Dense32 | Dense40 | LongDense => 3 + range * bpp,
        }
    }

    /// Bytes of the node and its payload at `pos`.
    fn size_at(&self, pos: u64) -> i64 {
        self.type_size(self.node_type(pos)) + self.payload.as_ref().map_or(0, |p| p.size() as i64)
    }

    /// The node's bytes at `pos` (`TrieNode.serialize` and the payload);
    /// every child must be written.
    fn serialize(&self, pos: u64, out: &mut Vec<u8>) {
        use NodeType::*;
        let t = self.node_type(pos);
        let flags = self.payload.as_ref().map_or(0, |p| p.flags() & 0x0F);
        let head = (t.nibble() << 4) | flags;
        let delta = |c: &Node<P>| pos - c.pos.unwrap_or(pos);
        let bpp = t.pointer_bits() as usize / 8;
        match t {
            PayloadOnly => out.push(head),
            SingleNoPayload4 => {
                let c = &self.children[0];
                out.push((t.nibble() << 4) | (delta(c) & 0x0F) as u8);
                out.push(c.transition);
            }
            SingleNoPayload12 => {
                let c = &self.children[0];
                let d = delta(c);
                out.push((t.nibble() << 4) | ((d >> 8) & 0x0F) as u8);
                out.push(d as u8);
                out.push(c.transition);
            }
            Single8 | Single16 => {
                let c = &self.children[0];
                out.push(head);
                out.push(c.transition);
                put_be(out, delta(c), bpp);
            }
            Sparse8 | Sparse12 | Sparse16 | Sparse24 | Sparse40 => {
                out.push(head);
                out.push(self.children.len() as u8);
                out.extend(self.children.iter().map(|c| c.transition));
                let deltas: Vec<u64> = self.children.iter().map(delta).collect();
                if t == Sparse12 {
                    put_12bit(out, &deltas);
                } else {
                    deltas.iter().for_each(|d| put_be(out, *d, bpp));
                }
            }
            Dense12 | Dense16 | Dense24 | Dense32 | Dense40 | LongDense => {
                let l = self.children[0].transition;
                let r = self.children[self.children.len() - 1].transition;
                out.push(head);
                out.push(l);
                out.push(r - l);
                // Dense: 0 stands for "no child".
                let mut slots = vec![0u64; (r - l) as usize + 1];
                for c in &self.children {
                    slots[(c.transition - l) as usize] = delta(c);
                }
                if t == Dense12 {
                    put_12bit(out, &slots);
                } else {
                    slots.iter().for_each(|d| put_be(out, *d, bpp));
                }
            }
        }
        if let Some(p) = &self.payload {
            p.put(out);
        }
    }

    /// Forget what a written node no longer needs (`finalizeWithPosition`).
    fn finalize(&mut self, pos: u64) {
        self.pos = Some(pos);
        self.branch_size = 0;
        self.node_size = 0;
        self.oop_in_branch = false;
        self.oop_children = false;
        self.children = Vec::new();
        self.payload = None;
    }
}

/// Whether a pointer delta `d` fits in the type's pointer width.
fn fits(t: NodeType, d: i64) -> bool {
    match t {
        NodeType::SingleNoPayload4 => (0..=0xF).contains(&d),
        NodeType::LongDense => true,
        _ => d >= 0 && (d as u64) < (1u64 << t.pointer_bits()),
    }
}

/// Append the low `n` bytes of `v`, big-endian.
fn put_be(out: &mut Vec<u8>, v: u64, n: usize) {
    out.extend_from_slice(&v.to_be_bytes()[8 - n..]);
}

/// Append 12-bit values packed two in three bytes (`write12Bits`).
fn put_12bit(out: &mut Vec<u8>, vals: &[u64]) {
    for pair in vals.chunks(2) {
        let a = pair[0] & 0xFFF;
        out.push((a >> 4) as u8);
        match pair.get(1) {
            Some(b) => {
                let b = b & 0xFFF;
                out.push(((a << 4) | (b >> 8)) as u8);
                out.push(b as u8);
            }
            None => out.push((a << 4) as u8),
        }
    }
}

/// Length of the common prefix of `a` and `b`.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// The page-aware incremental trie writer
/// (`IncrementalTrieWriterPageAware`): keys must be added in strictly
/// increasing byte order.
struct TrieWriter<P> {
    /// The unfinished spine: the root, then each node's last child.
    stack: Vec<Node<P>>,
    prev: Option<Vec<u8>>,
    count: u64,
}

impl<P: Payload> TrieWriter<P> {
    fn new() -> Self {
        TrieWriter {
            stack: vec![Node::new(0)],
            prev: None,
            count: 0,
        }
    }

    fn add<W: Write>(&mut self, out: &mut PagedOut<W>, key: &[u8], payload: P) -> Result<()> {
        let common = match &self.prev {
            None => 0,
            Some(prev) => {
                let common = common_prefix(prev, key);
                let ordered =
                    common < key.len() && prev.get(common).is_none_or(|p| *p < key[common]);
                if !ordered {
                    return Err(Error::at(
                        ErrorKind::BadValue(format!(
                            "trie keys out of order: {key:02x?} after {prev:02x?}"
                        )),
                        out.comp,
                        out.pos,
                        "trie index key",
                    ));
                }
                common
            }
        };
        while self.stack.len() > common + 1 {
            self.complete_last(out)?;
        }
        self.stack
            .extend(key[common..].iter().map(|b| Node::new(*b)));
        if let Some(top) = self.stack.last_mut() {
            top.payload = Some(payload);
        }
        self.prev = Some(key.to_vec());
        self.count += 1;
        Ok(())
    }

    /// Complete the deepest spine node and hand it to its parent.
    fn complete_last<W: Write>(&mut self, out: &mut PagedOut<W>) -> Result<Option<Node<P>>> {
        let Some(mut node) = self.stack.pop() else {
            return Ok(None);
        };
        complete(&mut node, out)?;
        match self.stack.last_mut() {
            Some(parent) => {
                parent.children.push(node);
                Ok(None)
            }
            None => Ok(Some(node)),
        }
    }

    /// Write everything left and return the root's position
    /// (`performCompletion`); the writer is empty again afterwards.
    fn complete<W: Write>(&mut self, out: &mut PagedOut<W>) -> Result<u64> {
        let mut root = loop {
            if let Some(root) = self.complete_last(out)? {
                break root;
            }
        };
        let mut actual = recalc(&mut root, out.pos);
        let mut left = out.left_in_page();
        if actual > left {
            if actual <= PAGE_SIZE as i64 {
                out.pad()?;
                left = PAGE_SIZE as i64;
                actual = recalc(&mut root, out.pos);
            }
            if actual > left {
                layout_children(&mut root, out)?;
                if root.node_size > out.left_in_page() {
                    out.pad()?;
                    recalc(&mut root, out.pos);
                }
            }
        }
        let pos = write(&mut root, out)?;
        self.stack = vec![Node::new(0)];
        self.prev = None;
        self.count = 0;
        Ok(pos)
    }
}

/// A node's last key has gone by: size it, and lay out its children when
/// the branch no longer fits in a page (`complete`).
fn complete<P: Payload, W: Write>(node: &mut Node<P>, out: &mut PagedOut<W>) -> Result<()> {
    node.branch_size = node.children.iter().map(|c| c.total()).sum();
    let size = node.size_at(out.pos);
    if size + node.branch_size < PAGE_SIZE as i64 {
        node.node_size = size;
        node.oop_children = false;
        node.oop_in_branch = false;
        for c in &node.children {
            if c.pos.is_some() {
                node.oop_children = true;
            } else if c.oop_children || c.oop_in_branch {
                node.oop_in_branch = true;
            }
        }
        return Ok(());
    }
    layout_children(node, out)
}

/// Write the unwritten children of `node`, each branch within one page
/// where it fits, biggest that fits the current page first
/// (`layoutChildren`).
fn layout_children<P: Payload, W: Write>(node: &mut Node<P>, out: &mut PagedOut<W>) -> Result<()> {
    let mut unplaced: Vec<usize> = (0..node.children.len())
        .filter(|&i| node.children[i].pos.is_none())
        .collect();
    let mut left = out.left_in_page();
    while !unplaced.is_empty() {
        let key = |i: &usize| (node.children[*i].total(), node.children[*i].transition);
        let fitting = unplaced
            .iter()
            .enumerate()
            .filter(|(_, i)| node.children[**i].total() <= left)
            .max_by_key(|(_, i)| key(i))
            .map(|(j, _)| j);
        let j = match fitting {
            Some(j) => j,
            None => {
                out.pad()?;
                left = PAGE_SIZE as i64;
                let biggest = unplaced.iter().enumerate().max_by_key(|(_, i)| key(i));
                biggest.map_or(0, |(j, _)| j)
            }
        };
        let i = unplaced.remove(j);
        let child = &mut node.children[i];
        if child.oop_children || child.oop_in_branch {
            // Its size depends on where it goes: now that is known.
            let actual = recalc(child, out.pos);
            if actual > left {
                if left == PAGE_SIZE as i64 {
                    // Not even a page holds it: lay out its own children.
                    layout_children(child, out)?;
                    left = out.left_in_page();
                }
                unplaced.push(i);
                continue;
            }
        }
        let pos = write(child, out)?;
        child.finalize(pos);
        left = out.left_in_page();
    }
    node.branch_size = 0;
    node.oop_children = true;
    node.oop_in_branch = false;
    node.node_size = node.size_at(out.pos);
    Ok(())
}

/// One level of an iterative walk over an unwritten branch: the node (taken
/// out of its parent while its children are visited), the next child to
/// look at, and the node's slot in its parent. Tries can be as deep as keys
/// are long, so the walks below keep their stack on the heap.
struct Frame<P> {
    node: Node<P>,
    next: usize,
    slot: usize,
    /// Where the node's branch starts.
    start: u64,
    /// Bytes of the children visited so far.
    size: i64,
}

impl<P: Payload> Frame<P> {
    fn new(node: Node<P>, slot: usize, start: u64) -> Self {
        Frame {
            node,
            next: 0,
            slot,
            start,
            size: 0,
        }
    }
}

/// Recompute the sizes of a branch that goes at `pos` (`recalcTotalSize`):
/// only below nodes whose size depends on where written nodes are.
fn recalc<P: Payload>(node: &mut Node<P>, pos: u64) -> i64 {
    let resize = |n: &mut Node<P>, pos: u64| {
        if n.oop_children || n.oop_in_branch {
            n.node_size = n.size_at((pos as i64 + n.branch_size) as u64);
        }
    };
    if !node.oop_in_branch {
        resize(node, pos);
        return node.total();
    }
    let root = std::mem::replace(node, Node::new(0));
    let mut stack = vec![Frame::new(root, 0, pos)];
    loop {
        let Some(top) = stack.last_mut() else {
            return node.total();
        };
        if let Some(c) = top.node.children.get_mut(top.next) {
            let (slot, at) = (top.next, (top.start as i64 + top.size) as u64);
            top.next += 1;
            if c.oop_in_branch {
                let child = std::mem::replace(c, Node::new(0));
                stack.push(Frame::new(child, slot, at));
            } else {
                resize(c, at);
                top.size += c.total();
            }
            continue;
        }
        let Some(mut f) = stack.pop() else {
            return node.total();
        };
        f.node.branch_size = f.size;
        resize(&mut f.node, f.start);
        match stack.last_mut() {
            Some(parent) => {
                parent.size += f.node.total();
                parent.node.children[f.slot] = f.node;
            }
            None => *node = f.node,
        }
    }
}

/// Write the unwritten branch below `node`, then `node`; its position.
/// Children go before their parent, in transition order.
fn write<P: Payload, W: Write>(node: &mut Node<P>, out: &mut PagedOut<W>) -> Result<u64> {
    let root = std::mem::replace(node, Node::new(0));
    let mut stack = vec![Frame::new(root, 0, out.pos)];
    let mut buf = Vec::with_capacity(64);
    loop {
        let Some(top) = stack.last_mut() else {
            return Ok(node.pos.unwrap_or(0));
        };
        let unwritten = top.node.children[top.next..]
            .iter()
            .position(|c| c.pos.is_none());
        if let Some(k) = unwritten {
            let slot = top.next + k;
            top.next = slot + 1;
            let child = std::mem::replace(&mut top.node.children[slot], Node::new(0));
            stack.push(Frame::new(child, slot, out.pos));
            continue;
        }
        let Some(mut f) = stack.pop() else {
            return Ok(node.pos.unwrap_or(0));
        };
        let pos = (f.start as i64 + f.node.branch_size) as u64;
        if out.pos != pos {
            let e = Error::at(
                ErrorKind::BadValue(format!(
                    "trie layout: node expected at {pos}, branch ended at {}",
                    out.pos
                )),
                out.comp,
                out.pos,
                "trie node",
            );
            *node = f.node;
            return Err(e);
        }
        buf.clear();
        f.node.serialize(pos, &mut buf);
        out.put(&buf)?;
        // The parent needs only the position and sizes of a written node.
        f.node.children = Vec::new();
        f.node.payload = None;
        f.node.pos = Some(pos);
        match stack.last_mut() {
            Some(parent) => parent.node.children[f.slot] = f.node,
            None => {
                *node = f.node;
                return Ok(pos);
            }
        }
    }
}

/// A partition's payload: filter hash byte and position
/// (`PartitionIndex.PartitionIndexSerializer`).
struct PartitionPayload {
    hash: u8,
    /// Rows.db entry (`>= 0`) or `~` Data.db position.
    pos: i64,
}

impl Payload for PartitionPayload {
    fn size(&self) -> usize {
        1 + signed_size(self.pos)
    }
    fn flags(&self) -> u8 {
        // Always with a hash byte (8), then the position's size - 1.
        8 + signed_size(self.pos) as u8 - 1
    }
    fn put(&self, out: &mut Vec<u8>) {
        out.push(self.hash);
        write_signed(out, self.pos, signed_size(self.pos));
    }
}

/// Builds Partitions.db (`PartitionIndexBuilder`).
///
/// Add every partition in order with [`PartitionIndexWriter::add`], then
/// [`PartitionIndexWriter::finish`]. Memory: the trie's unfinished spine,
/// less than a page of completed nodes per spine level, and two keys.
///
/// ```
/// use sstkit_format::bti::PartitionPosition;
/// use sstkit_format::token::Partitioner;
/// use sstkit_format::write::bti::PartitionIndexWriter;
///
/// let mut w = PartitionIndexWriter::new(Vec::new(), Partitioner::Murmur3);
/// // Keys in token order; positions from Data.db (or Rows.db entries).
/// let mut keys: Vec<&[u8]> = vec![b"a", b"b", b"c"];
/// keys.sort_by(|a, b| Partitioner::Murmur3.compare_decorated(a, b));
/// for (i, k) in keys.iter().enumerate() {
///     w.add(k, PartitionPosition::Data(i as u64 * 100))?;
/// }
/// let partitions_db: Vec<u8> = w.finish()?;
/// assert!(partitions_db.len() > 24);
/// # Ok::<(), sstkit_format::Error>(())
/// ```
pub struct PartitionIndexWriter<W> {
    out: PagedOut<W>,
    trie: TrieWriter<PartitionPayload>,
    partitioner: Partitioner,
    first_key: Option<Vec<u8>>,
    /// The previous partition: key, byte-comparable key, payload, and how
    /// many bytes told it from the one before.
    last: Option<(Vec<u8>, Vec<u8>, PartitionPayload)>,
    last_diff: usize,
}

impl<W: Write> PartitionIndexWriter<W> {
    /// A writer of Partitions.db into `w` (which starts at position 0) for
    /// keys of `partitioner`.
    pub fn new(w: W, partitioner: Partitioner) -> Self {
        PartitionIndexWriter {
            out: PagedOut::new(w, Component::Partitions),
            trie: TrieWriter::new(),
            partitioner,
            first_key: None,
            last: None,
            last_diff: 0,
        }
    }

    /// Bytes written so far.
    pub fn position(&self) -> u64 {
        self.out.pos
    }

    /// Add the next partition (in token order): its serialized key and where
    /// it is — [`PartitionPosition::Rows`] for a partition with a row index
    /// (the position [`RowIndexWriter::finish_partition`] returned),
    /// [`PartitionPosition::Data`] (its start in uncompressed Data.db)
    /// otherwise. The trie takes each key when its successor is known, so a
    /// key out of order is reported by the next call or by
    /// [`PartitionIndexWriter::finish`].
    pub fn add(&mut self, key: &[u8], position: PartitionPosition) -> Result<()> {
        let bc = partition_key_bytes(&self.partitioner, key).ok_or_else(|| {
            Error::at(
                ErrorKind::Unsupported(format!(
                    "byte-comparable keys of partitioner {}",
                    self.partitioner.name()
                )),
                Component::Partitions,
                self.out.pos,
                "partition key",
            )
        })?;
        let pos = match position {
            PartitionPosition::Rows(p) => p as i64,
            PartitionPosition::Data(p) => !(p as i64),
        };
        let payload = PartitionPayload {
            hash: hash_byte(key),
            pos,
        };
        match self.last.take() {
            None => {
                self.first_key = Some(key.to_vec());
                self.last_diff = 0;
            }
            Some((_, last_bc, last_payload)) => {
                // `ByteComparable.diffPoint`: bytes up to and including the
                // first that differs.
                let diff = common_prefix(&last_bc, &bc) + 1;
                let cut = diff.max(self.last_diff).min(last_bc.len());
                self.trie
                    .add(&mut self.out, &last_bc[..cut], last_payload)
                    .map_err(|e| e.in_partition(hex(key)))?;
                self.last_diff = diff;
            }
        }
        self.last = Some((key.to_vec(), bc, payload));
        Ok(())
    }

    /// Write the rest of the trie, the first and last keys and the footer;
    /// the sink back.
    pub fn finish(mut self) -> Result<W> {
        let mut last_key = Vec::new();
        if let Some((key, bc, payload)) = self.last.take() {
            let cut = self.last_diff.min(bc.len());
            self.trie.add(&mut self.out, &bc[..cut], payload)?;
            last_key = key;
        }
        let count = self.trie.count;
        let root = self.trie.complete(&mut self.out)?;
        let first_key_pos = self.out.pos;
        let first_key = self.first_key.take().unwrap_or_default();
        let mut tail = Vec::with_capacity(first_key.len() + last_key.len() + 28);
        for k in [&first_key, &last_key] {
            let len = u16::try_from(k.len()).map_err(|_| {
                Error::at(
                    ErrorKind::BadValue(format!("partition key of {} bytes", k.len())),
                    Component::Partitions,
                    first_key_pos,
                    "Partitions.db first/last key",
                )
            })?;
            tail.extend_from_slice(&len.to_be_bytes());
            tail.extend_from_slice(k);
        }
        for v in [first_key_pos, count, root] {
            tail.extend_from_slice(&(v as i64).to_be_bytes());
        }
        self.out.put(&tail)?;
        Ok(self.out.w)
    }
}

/// A row-index block's payload: its offset from the partition start and the
/// deletion open there (`RowIndexReader.getSerializer`).
struct RowPayload {
    offset: i64,
    open: DeletionTime,
}

impl Payload for RowPayload {
    fn size(&self) -> usize {
        signed_size(self.offset)
            + if self.open.is_live() {
                0
            } else {
                DeletionTime::LEGACY_SIZE
            }
    }
    fn flags(&self) -> u8 {
        signed_size(self.offset) as u8 | if self.open.is_live() { 0 } else { 8 }
    }
    fn put(&self, out: &mut Vec<u8>) {
        write_signed(out, self.offset, signed_size(self.offset));
        if !self.open.is_live() {
            self.open.encode_oa(out);
        }
    }
}

/// Builds Rows.db (`RowIndexWriter` and the entries `BtiTableWriter`
/// appends), one partition after another.
///
/// For each partition: [`RowIndexWriter::add_block`] for every row-index
/// block, in clustering order, then [`RowIndexWriter::finish_partition`].
/// A partition with fewer than two blocks leaves no trace in Rows.db (its
/// Partitions.db payload points into Data.db). Clusterings are given in
/// their byte-comparable form ([`crate::bti::comparable::clustering_bytes`]).
/// Memory: the trie's unfinished spine, less than a page of completed nodes
/// per spine level, and the last block's bounds.
///
/// ```
/// use sstkit_format::bti::PartitionPosition;
/// use sstkit_format::deletion::DeletionTime;
/// use sstkit_format::write::bti::RowIndexWriter;
///
/// let mut rows = RowIndexWriter::new(Vec::new());
/// // Two blocks: rows 0x40..0x41 at offset 2, rows 0x50..0x51 at offset 900.
/// rows.add_block(&[0x40, 0x80, 0x38], &[0x41, 0x80, 0x38], 2, DeletionTime::LIVE)?;
/// rows.add_block(&[0x50, 0x80, 0x38], &[0x51, 0x80, 0x38], 900, DeletionTime::LIVE)?;
/// let at = rows.finish_partition(b"key", 0, 1800, DeletionTime::LIVE)?;
/// let position = at.map_or(PartitionPosition::Data(0), PartitionPosition::Rows);
/// assert!(matches!(position, PartitionPosition::Rows(_)));
/// let rows_db: Vec<u8> = rows.finish()?;
/// assert!(!rows_db.is_empty());
/// # Ok::<(), sstkit_format::Error>(())
/// ```
pub struct RowIndexWriter<W> {
    out: PagedOut<W>,
    trie: TrieWriter<RowPayload>,
    /// The last clustering of the previous block.
    prev_max: Option<Vec<u8>>,
    /// The separator the previous block went in under.
    prev_sep: Vec<u8>,
    blocks: u64,
}

impl<W: Write> RowIndexWriter<W> {
    /// A writer of Rows.db into `w` (which starts at position 0).
    pub fn new(w: W) -> Self {
        RowIndexWriter {
            out: PagedOut::new(w, Component::Rows),
            trie: TrieWriter::new(),
            prev_max: None,
            prev_sep: Vec::new(),
            blocks: 0,
        }
    }

    /// Bytes written so far.
    pub fn position(&self) -> u64 {
        self.out.pos
    }

    /// Blocks added to the current partition.
    pub fn block_count(&self) -> u64 {
        self.blocks
    }

    /// Add the next block of the current partition: the byte-comparable
    /// forms of its first and last clustering (rows or range-tombstone
    /// bounds), its offset from the partition start in Data.db, and the
    /// range deletion open at its start ([`DeletionTime::LIVE`] for none).
    pub fn add_block(
        &mut self,
        first: &[u8],
        last: &[u8],
        offset: u64,
        open: DeletionTime,
    ) -> Result<()> {
        let sep = match &self.prev_max {
            None => Vec::new(),
            Some(prev) => separator_gt(prev, first).ok_or_else(|| {
                Error::at(
                    ErrorKind::BadValue(format!(
                        "row index block starting at {first:02x?} is not after the previous \
                         block's end {prev:02x?}"
                    )),
                    Component::Rows,
                    self.out.pos,
                    "row index block",
                )
            })?,
        };
        let payload = RowPayload {
            offset: offset as i64,
            open,
        };
        self.trie.add(&mut self.out, &sep, payload)?;
        self.prev_sep = sep;
        self.prev_max = Some(last.to_vec());
        self.blocks += 1;
        Ok(())
    }

    /// [`RowIndexWriter::add_block`] with the clusterings themselves, encoded
    /// for `types` (the table's clustering types); an error names a type the
    /// byte-comparable encoding does not support
    /// ([`crate::bti::comparable::supported`]).
    pub fn add_block_clusterings(
        &mut self,
        types: &[CqlType],
        first: &ClusteringPrefix<'_>,
        last: &ClusteringPrefix<'_>,
        offset: u64,
        open: DeletionTime,
    ) -> Result<()> {
        let enc = |c: &ClusteringPrefix<'_>| {
            clustering_bytes(types, c).ok_or_else(|| {
                let unsupported = types.iter().find(|t| !supported(t));
                Error::at(
                    ErrorKind::Unsupported(format!(
                        "byte-comparable clustering of type {}",
                        unsupported.map_or_else(|| "?".to_string(), |t| t.cql())
                    )),
                    Component::Rows,
                    self.out.pos,
                    "row index block",
                )
            })
        };
        let (first, last) = (enc(first)?, enc(last)?);
        self.add_block(&first, &last, offset, open)
    }

    /// End the current partition: `key` (serialized), its start in Data.db,
    /// the offset of its END_OF_PARTITION byte from that start, and its
    /// partition-level deletion. With two blocks or more, writes the rest of
    /// the trie and the entry and returns the entry's position (for
    /// [`PartitionPosition::Rows`]); otherwise writes nothing and returns
    /// `None`.
    pub fn finish_partition(
        &mut self,
        key: &[u8],
        data_position: u64,
        end_offset: u64,
        deletion: DeletionTime,
    ) -> Result<Option<u64>> {
        let blocks = self.blocks;
        let prev_max = self.prev_max.take();
        let prev_sep = std::mem::take(&mut self.prev_sep);
        self.blocks = 0;
        let (Some(max), true) = (prev_max, blocks > 1) else {
            self.trie = TrieWriter::new();
            return Ok(None);
        };
        let result = self.finish_indexed(
            key,
            data_position,
            end_offset,
            deletion,
            blocks,
            &max,
            &prev_sep,
        );
        result.map(Some).map_err(|e| e.in_partition(hex(key)))
    }

    #[allow(clippy::too_many_arguments)]
    fn finish_indexed(
        &mut self,
        key: &[u8],
        data_position: u64,
        end_offset: u64,
        deletion: DeletionTime,
        blocks: u64,
        max: &[u8],
        sep: &[u8],
    ) -> Result<u64> {
        // A last entry just above the last clustering, as long as the last
        // separator, rejects greater keys without reading Data.db.
        let at = common_prefix(max, sep);
        if at == max.len() {
            return Err(Error::at(
                ErrorKind::BadValue(format!(
                    "last clustering {max:02x?} is not after the last separator {sep:02x?}"
                )),
                Component::Rows,
                self.out.pos,
                "row index",
            ));
        }
        let end = RowPayload {
            offset: end_offset as i64,
            open: DeletionTime::LIVE,
        };
        self.trie.add(&mut self.out, &nudge(max, at), end)?;
        let root = self.trie.complete(&mut self.out)?;
        let entry = self.out.pos;
        let len = u16::try_from(key.len()).map_err(|_| {
            Error::at(
                ErrorKind::BadValue(format!("partition key of {} bytes", key.len())),
                Component::Rows,
                entry,
                "Rows.db entry key",
            )
        })?;
        let mut b = Vec::with_capacity(key.len() + 40);
        b.extend_from_slice(&len.to_be_bytes());
        b.extend_from_slice(key);
        let after_key = entry + b.len() as u64;
        write_uvint(&mut b, data_position);
        let delta = root as i64 - after_key as i64;
        write_uvint(&mut b, ((delta << 1) ^ (delta >> 63)) as u64);
        write_uvint(&mut b, blocks);
        deletion.encode_oa(&mut b);
        self.out.put(&b)?;
        Ok(entry)
    }

    /// The sink back (call after the last partition).
    pub fn finish(self) -> Result<W> {
        Ok(self.out.w)
    }
}

/// The shortest separator `s` with `prev < s <= curr`, made of their common
/// prefix and the next byte of `prev` plus one (`ByteSource.separatorGt`);
/// `None` unless `prev < curr`.
pub fn separator_gt(prev: &[u8], curr: &[u8]) -> Option<Vec<u8>> {
    let i = common_prefix(prev, curr);
    let c = *curr.get(i)?;
    let p = prev.get(i).map_or(-1, |b| *b as i32);
    if p >= c as i32 {
        return None;
    }
    let mut s = curr[..i].to_vec();
    s.push((p + 1) as u8);
    Some(s)
}

/// A value just above `v`, at least `at + 1` bytes long: `v[at]` plus one,
/// skipping `0xFF` bytes (a `0x00` appended past the end) (`RowIndexWriter.nudge`).
fn nudge(v: &[u8], at: usize) -> Vec<u8> {
    let mut out = v[..at.min(v.len())].to_vec();
    let mut j = at;
    loop {
        match v.get(j) {
            None => {
                out.push(0);
                break;
            }
            Some(0xFF) => {
                out.push(0xFF);
                j += 1;
            }
            Some(b) => {
                out.push(b + 1);
                break;
            }
        }
    }
    out
}

fn hex(key: &[u8]) -> String {
    key.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
