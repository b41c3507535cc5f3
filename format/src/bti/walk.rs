//! Walking a trie: exact-prefix follow, ordered enumeration of payloads,
//! floor search (C\* `o.a.c/io/tries/Walker.java`, `ValueIterator.java`;
//! `shared/docs/sstable-format.md` §12.4, §12.5).
//!
//! Every walk is iterative and bounded: a child always lies strictly before
//! its parent, so a path visits at most as many nodes as the file has
//! bytes; an enumeration stops with an error after visiting more nodes than
//! the file could hold (a hostile file can share subtrees, turning the tree
//! into a DAG with exponentially many paths), and a key prefix longer than
//! [`MAX_DEPTH`] is rejected.

use crate::error::{Error, ErrorKind, Result};

use super::node::{read_node, Node, TrieSource};

/// Longest key prefix a walk follows (a partition key is at most 64 KiB,
/// so its byte-comparable form is at most about 128 KiB).
pub const MAX_DEPTH: usize = 256 * 1024;

fn too_deep<S: TrieSource + ?Sized>(src: &S, pos: u64) -> Error {
    Error::at(
        ErrorKind::BadValue(format!(
            "trie deeper than {MAX_DEPTH} transitions (not a valid trie)"
        )),
        src.component(),
        pos,
        "trie walk",
    )
}

/// Where [`follow`] stopped.
#[derive(Debug, Clone)]
pub struct Follow {
    /// The last node reached.
    pub node: Node,
    /// Key bytes matched by transitions.
    pub matched: usize,
    /// The closest subtree after the key's path (the deepest "greater
    /// branch"): its smallest payload is the key's successor, unless the
    /// stop node's own children come first (they are included here).
    pub greater: Option<(Vec<u8>, u64)>,
}

impl Follow {
    /// True when every key byte was matched.
    pub fn exhausted(&self, key: &[u8]) -> bool {
        self.matched == key.len()
    }
}

/// Follow `key` from `root` while transitions match (`Walker.follow` /
/// `followWithGreater`).
pub fn follow<S: TrieSource + ?Sized>(src: &mut S, root: u64, key: &[u8]) -> Result<Follow> {
    let mut node = read_node(src, root)?;
    // (depth, transition, position): the prefix is built once, at the end.
    let mut greater: Option<(usize, u8, u64)> = None;
    let mut i = 0;
    loop {
        let b = key.get(i).copied();
        if let Some((t, pos)) = node.greater_child(b) {
            greater = Some((i, t, pos));
        }
        let Some(b) = b else { break };
        let Some(child) = node.child(b) else { break };
        node = read_node(src, child)?;
        i += 1;
    }
    Ok(Follow {
        node,
        matched: i,
        greater: greater.map(|(d, t, pos)| {
            let mut p = key[..d].to_vec();
            p.push(t);
            (p, pos)
        }),
    })
}

/// The visitor of [`for_each_payload`]: the source, a node's full key and
/// the node; `false` stops the walk.
pub type Visit<'f, S> = dyn FnMut(&mut S, &[u8], &Node) -> Result<bool> + 'f;

/// Order of an enumeration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Ascending: a node's payload, then its children by ascending transition.
    Forward,
    /// Descending: children by descending transition, then the payload.
    Reverse,
}

/// Visit every node with a payload under `start` (whose key is `prefix`),
/// in `order`. `f` gets the source, the node's full key and the node; it returns
/// `false` to stop. At most `max_nodes` nodes are visited (error beyond).
pub fn for_each_payload<S: TrieSource + ?Sized>(
    src: &mut S,
    start: u64,
    prefix: &[u8],
    order: Order,
    max_nodes: u64,
    f: &mut Visit<'_, S>,
) -> Result<()> {
    struct Frame {
        node: Node,
        /// Children visited so far.
        next: usize,
        /// The payload was visited (Reverse: after the children).
        done_payload: bool,
    }
    let mut key = prefix.to_vec();
    let mut stack: Vec<Frame> = Vec::new();
    let mut visited = 1u64;
    let root = read_node(src, start)?;
    if order == Order::Forward && root.has_payload() && !f(src, &key, &root)? {
        return Ok(());
    }
    stack.push(Frame {
        done_payload: order == Order::Forward,
        node: root,
        next: 0,
    });
    while let Some(top) = stack.last_mut() {
        let n = top.node.children().len();
        if top.next < n {
            let idx = match order {
                Order::Forward => top.next,
                Order::Reverse => n - 1 - top.next,
            };
            top.next += 1;
            let (t, pos) = top.node.children()[idx];
            visited += 1;
            if visited > max_nodes {
                return Err(Error::at(
                    ErrorKind::BadValue(format!(
                        "trie enumeration visited more than {max_nodes} nodes: \
                         subtrees are shared (not a tree)"
                    )),
                    src.component(),
                    pos,
                    "trie walk",
                ));
            }
            if stack.len() >= MAX_DEPTH {
                return Err(too_deep(src, pos));
            }
            let child = read_node(src, pos)?;
            key.push(t);
            if order == Order::Forward && child.has_payload() && !f(src, &key, &child)? {
                return Ok(());
            }
            stack.push(Frame {
                done_payload: order == Order::Forward,
                node: child,
                next: 0,
            });
            continue;
        }
        if !top.done_payload {
            top.done_payload = true;
            if top.node.has_payload() {
                let node = top.node.clone();
                if !f(src, &key, &node)? {
                    return Ok(());
                }
            }
        }
        stack.pop();
        if !stack.is_empty() {
            key.pop();
        }
    }
    Ok(())
}

/// The first payload node under `start` in `order` (its key and node).
pub fn first_payload<S: TrieSource + ?Sized>(
    src: &mut S,
    start: u64,
    prefix: &[u8],
    order: Order,
    max_nodes: u64,
) -> Result<Option<(Vec<u8>, Node)>> {
    let mut found = None;
    for_each_payload(src, start, prefix, order, max_nodes, &mut |_, k, n| {
        found = Some((k.to_vec(), n.clone()));
        Ok(false)
    })?;
    Ok(found)
}

/// The greatest payload whose key is `<= key` (`RowIndexReader.separatorFloor`,
/// with the candidate kept along the path as §12.5 describes): its key and
/// node, or `None` when every payload is greater.
pub fn floor<S: TrieSource + ?Sized>(
    src: &mut S,
    root: u64,
    key: &[u8],
    max_nodes: u64,
) -> Result<Option<(Vec<u8>, Node)>> {
    enum Cand {
        /// A node on the path (its own payload): depth and position.
        Node(usize, u64),
        /// A subtree left of the path (depth, transition, position): its
        /// greatest payload.
        Lesser(usize, u8, u64),
    }
    let mut cands: Vec<Cand> = Vec::new();
    let mut node = read_node(src, root)?;
    let mut i = 0;
    loop {
        if node.has_payload() {
            cands.push(Cand::Node(i, node.pos));
        }
        let b = key.get(i).copied();
        if let Some((t, pos)) = node.lesser_child(b) {
            cands.push(Cand::Lesser(i, t, pos));
        }
        let Some(b) = b else { break };
        let Some(child) = node.child(b) else { break };
        if i >= MAX_DEPTH {
            return Err(too_deep(src, child));
        }
        node = read_node(src, child)?;
        i += 1;
    }
    // The latest candidate is the closest; a subtree without payload (only
    // in a malformed file) falls back to the one before.
    while let Some(c) = cands.pop() {
        match c {
            Cand::Node(d, pos) => return Ok(Some((key[..d].to_vec(), read_node(src, pos)?))),
            Cand::Lesser(d, t, pos) => {
                let mut k = key[..d].to_vec();
                k.push(t);
                if let Some(found) = first_payload(src, pos, &k, Order::Reverse, max_nodes)? {
                    return Ok(Some(found));
                }
            }
        }
    }
    Ok(None)
}

/// Every payload node of the trie at `root`, in order (key and node).
pub fn payloads<S: TrieSource + ?Sized>(
    src: &mut S,
    root: u64,
    max_nodes: u64,
) -> Result<Vec<(Vec<u8>, Node)>> {
    let mut v = Vec::new();
    for_each_payload(src, root, &[], Order::Forward, max_nodes, &mut |_, k, n| {
        v.push((k.to_vec(), n.clone()));
        Ok(true)
    })?;
    Ok(v)
}
