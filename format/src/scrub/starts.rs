//! The partition starts the index knows (Index.db for BIG, Partitions.db
//! and Rows.db for BTI), for scrub's resynchronisation.
//!
//! An index that decodes to its end, with positions strictly increasing,
//! inside Data.db and starting at 0, and (BIG) keys in partitioner order, is
//! *trusted*: scrub then resynchronises only at its positions, as
//! Cassandra's scrub does, and never scans bytes for a partition start. An
//! index that fails any of this still supplies its positions as hints.
//!
//! # Memory
//!
//! Memory stays flat as the index grows. The index is read once at open, in
//! windows of [`WINDOW`] bytes (not through the IO layer's index cache, which
//! would fill to its size), to check it. When its positions strictly increase in
//! index order (every intact index), queries are answered from a forward
//! cursor over the index plus a sample of every [`SAMPLE_EVERY`]th entry
//! (its Data.db position and where to resume reading there): the scan
//! queries positions in increasing order, so the cursor mostly moves
//! forward (the entry it last stepped past is kept, so a query for the
//! partition just read after one for the next does not move it), and a
//! query further behind it resumes at the nearest sample. Keys are
//! read on demand (Index.db, Rows.db). Only an index whose positions are out
//! of order is kept as a list sorted by position (its hints are needed in
//! any order), of at most [`MAX_LISTED`] entries.

use std::cell::RefCell;
use std::cmp::Ordering;
use std::ops::Range;
use std::sync::Arc;

use crate::bti::index::flavor_of;
use crate::bti::node::{read_node, Node, TrieSource};
use crate::bti::partitions::{PartitionPayload, PartitionPosition};
use crate::bti::walk::MAX_DEPTH;
use crate::bti::{read_footer, Flavor, IoSource, RowsEntry};
use crate::component::Component;
use crate::error::{Error, ErrorKind, Result};
use crate::index::IndexReader;
use crate::sstable::Sstable;
use crate::token::Partitioner;
use crate::validate::Cuts;
use crate::version::Features;

/// Entries between two samples of a streamed index.
const SAMPLE_EVERY: u64 = 1024;

/// Most entries kept of an index whose positions are out of order (24 bytes
/// each); the rest give no hints.
pub(super) const MAX_LISTED: usize = 8 << 20;

/// Index bytes per read (each component read keeps one such window).
const WINDOW: u64 = 256 << 10;

/// The sizes above, smaller in tests to exercise every path on small files.
#[derive(Debug, Clone, Copy)]
struct Tuning {
    sample_every: u64,
    window: u64,
    max_listed: usize,
    /// Keep a list even for an index in order.
    force_list: bool,
}

const TUNING: Tuning = Tuning {
    sample_every: SAMPLE_EVERY,
    window: WINDOW,
    max_listed: MAX_LISTED,
    force_list: false,
};

/// What the index says identifies the partition at a position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeyRef {
    /// The Index.db entry at this offset holds the key.
    Index(u64),
    /// The Rows.db entry at this offset holds the key.
    Rows(u64),
    /// A BTI leaf without row index: only the key's filter hash byte.
    Hash(u8),
    /// Nothing to check the key against.
    None,
}

/// One partition the index knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    /// Its start in Data.db.
    pos: u64,
    key: KeyRef,
}

/// Where reading the index can resume: at an entry boundary of Index.db, or
/// at the payload node of a Partitions.db trie key.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Resume {
    Index(u64),
    Trie(Vec<u8>),
}

/// Known partition starts, in Data.db order.
pub(super) struct Starts<'s> {
    kind: Kind<'s>,
    /// Entries of an out-of-order index beyond [`MAX_LISTED`] that were
    /// dropped (0: none).
    pub(super) unlisted: u64,
    /// See the module docs.
    pub(super) trusted: bool,
}

enum Kind<'s> {
    /// Positions strictly increase in index order: read on demand.
    Stream(Stream<'s>),
    /// Positions out of order: kept, sorted (keys still read on demand).
    List {
        entries: Vec<Entry>,
        files: RefCell<Files<'s>>,
    },
}

impl<'s> Starts<'s> {
    /// Read the index of `sst`, or `None` when it has none or it cannot be
    /// read at all; `cuts`, when given, is told every position it lists,
    /// in index order (where several threads may cut Data.db).
    pub(super) fn read(
        sst: &'s Sstable,
        partitioner: &Partitioner,
        data_len: u64,
        cuts: Option<&mut Cuts>,
    ) -> Option<Starts<'s>> {
        Self::read_with(sst, partitioner, data_len, TUNING, cuts)
    }

    fn read_with(
        sst: &'s Sstable,
        partitioner: &Partitioner,
        data_len: u64,
        t: Tuning,
        mut cuts: Option<&mut Cuts>,
    ) -> Option<Starts<'s>> {
        let mut files = Files::open(sst, t.window)?;
        let mut check = Check::new(partitioner);
        let mut samples = Vec::new();
        let mut count = 0u64;
        let mut last_pos: Option<u64> = None;
        let mut increasing = true;
        let mut inside = true;
        let mut from_zero = true;
        loop {
            let e = match files.next(Some(&mut check)) {
                Ok(Some(e)) => e,
                Ok(None) => break,
                Err(_) => {
                    check.intact = false;
                    break;
                }
            };
            match last_pos {
                Some(l) => increasing &= l < e.pos,
                None => from_zero = e.pos == 0,
            }
            inside &= e.pos < data_len;
            if let Some(c) = cuts.as_deref_mut() {
                c.partition(e.pos, None);
            }
            if count.is_multiple_of(t.sample_every) && increasing {
                samples.push((e.pos, files.resume()));
            }
            last_pos = Some(e.pos);
            count += 1;
        }
        let trusted = check.intact && increasing && inside && from_zero && data_len > 0;
        if increasing && !t.force_list {
            samples.shrink_to_fit();
            return Some(Starts {
                kind: Kind::Stream(Stream {
                    samples: Arc::new(samples),
                    every: t.sample_every,
                    count,
                    window: t.window,
                    cursor: Stream::cursor(files),
                }),
                unlisted: 0,
                trusted,
            });
        }
        // Out of order: list the entries (the same ones, read again).
        files.restart().ok()?;
        let mut entries = Vec::new();
        while entries.len() < t.max_listed {
            match files.next(None) {
                Ok(Some(e)) => entries.push(e),
                _ => break,
            }
        }
        let unlisted = count.saturating_sub(entries.len() as u64);
        entries.sort_unstable_by_key(|e| e.pos);
        entries.dedup_by_key(|e| e.pos);
        entries.shrink_to_fit();
        Some(Starts {
            kind: Kind::List {
                entries,
                files: RefCell::new(files),
            },
            unlisted,
            trusted,
        })
    }

    /// What another thread opens this index with ([`Seed::open`]): `None`
    /// for an index kept as a list (positions out of order).
    pub(super) fn seed(&self) -> Option<Seed> {
        match &self.kind {
            Kind::Stream(s) => Some(Seed {
                samples: Arc::clone(&s.samples),
                every: s.every,
                count: s.count,
                window: s.window,
                trusted: self.trusted,
            }),
            Kind::List { .. } => None,
        }
    }

    /// The first known entry `>= from`.
    fn seek(&self, from: u64) -> Option<Entry> {
        match &self.kind {
            Kind::Stream(s) => s.seek(from),
            Kind::List { entries, .. } => {
                let i = entries.partition_point(|e| e.pos < from);
                entries.get(i).copied()
            }
        }
    }

    /// The first known start `>= from`.
    pub(super) fn next_at_or_after(&self, from: u64) -> Option<u64> {
        self.seek(from).map(|e| e.pos)
    }

    /// True when a partition is known to start at `pos`.
    pub(super) fn is_start(&self, pos: u64) -> bool {
        self.seek(pos).is_some_and(|e| e.pos == pos)
    }

    /// The key the index stores for entry `e`, when it stores one.
    fn key_of(&self, e: Entry) -> Option<Vec<u8>> {
        match &self.kind {
            Kind::Stream(s) => s.cursor.borrow_mut().files.key(e.key),
            Kind::List { files, .. } => files.borrow_mut().key(e.key),
        }
    }

    /// False when the index stores something about the partition at `pos`
    /// that `key` contradicts.
    pub(super) fn key_agrees(&self, pos: u64, key: &[u8]) -> bool {
        let Some(e) = self.seek(pos).filter(|e| e.pos == pos) else {
            return true;
        };
        match e.key {
            KeyRef::Hash(h) => crate::bti::comparable::hash_byte(key) == h,
            KeyRef::None => true,
            _ => self.key_of(e).is_none_or(|k| k == key),
        }
    }

    /// How many indexed partitions start in `range`.
    pub(super) fn count_in(&self, range: &Range<u64>) -> u64 {
        let mut n = 0;
        let mut from = range.start;
        while let Some(e) = self.seek(from).filter(|e| e.pos < range.end) {
            n += 1;
            from = e.pos + 1;
        }
        n
    }

    /// How many partitions the index lists.
    pub(super) fn count(&self) -> u64 {
        match &self.kind {
            Kind::Stream(s) => s.count,
            Kind::List { entries, .. } => entries.len() as u64 + self.unlisted,
        }
    }

    /// Keys of the indexed partitions starting in `range` (at most `max`).
    pub(super) fn keys_in(&self, range: &Range<u64>, max: usize) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let mut from = range.start;
        for _ in 0..max {
            let Some(e) = self.seek(from).filter(|e| e.pos < range.end) else {
                break;
            };
            out.extend(self.key_of(e));
            from = e.pos + 1;
        }
        out
    }
}

/// The checks of the first pass that need the entries' keys.
struct Check<'p> {
    partitioner: &'p Partitioner,
    /// The previous key (BIG).
    last: Option<Vec<u8>>,
    /// Every entry decoded, BIG keys in order.
    intact: bool,
}

impl<'p> Check<'p> {
    fn new(partitioner: &'p Partitioner) -> Self {
        Check {
            partitioner,
            last: None,
            intact: true,
        }
    }

    fn key(&mut self, key: &[u8]) {
        if let Some(l) = &self.last {
            self.intact &= self.partitioner.compare_decorated(l, key) == Ordering::Less;
        }
        let l = self.last.get_or_insert_with(Vec::new);
        l.clear();
        l.extend_from_slice(key);
    }
}

/// A streamed index: a cursor, and samples to move it back (or far ahead).
struct Stream<'s> {
    /// Position and resume point of entries `0, every, 2 * every, …`
    /// (shared with the copies other threads open).
    samples: Arc<Vec<(u64, Resume)>>,
    every: u64,
    /// Entries the first pass read (the cursor reads no more).
    count: u64,
    /// Index bytes per read.
    window: u64,
    cursor: RefCell<Cursor<'s>>,
}

/// A streamed index as another thread opens it on its own handle of the
/// sstable: the samples of the first pass, shared, and a cursor of its own.
pub(super) struct Seed {
    samples: Arc<Vec<(u64, Resume)>>,
    every: u64,
    count: u64,
    window: u64,
    trusted: bool,
}

impl Seed {
    /// The index of `sst` (a handle on the sstable this seed was read from).
    pub(super) fn open<'t>(&self, sst: &'t Sstable) -> Option<Starts<'t>> {
        Some(Starts {
            kind: Kind::Stream(Stream {
                samples: Arc::clone(&self.samples),
                every: self.every,
                count: self.count,
                window: self.window,
                cursor: Stream::cursor(Files::open(sst, self.window)?),
            }),
            unlisted: 0,
            trusted: self.trusted,
        })
    }
}

struct Cursor<'s> {
    files: Files<'s>,
    /// Ordinal of `cur` (`count` at the end).
    at: u64,
    /// The entry at `at` (None at the end).
    cur: Option<Entry>,
    /// At least the position of the entry before `cur` (None: `cur` is the first).
    behind: Option<u64>,
    /// The entry before `cur`, when the cursor stepped past it, with what
    /// `behind` was then: the walk asks for the next partition's start and
    /// then for the one it just read, which must not send it back to a sample.
    prev: Option<(Entry, Option<u64>)>,
}

impl<'s> Stream<'s> {
    fn cursor(files: Files<'s>) -> RefCell<Cursor<'s>> {
        RefCell::new(Cursor {
            files,
            // Not positioned: the first query resumes at a sample.
            at: u64::MAX,
            cur: None,
            behind: Some(u64::MAX),
            prev: None,
        })
    }

    fn seek(&self, from: u64) -> Option<Entry> {
        let mut c = self.cursor.borrow_mut();
        let behind_ok = c.behind.is_none_or(|b| b < from);
        // Answered where the cursor stands (the walk's queries), without looking for a sample.
        let here = if behind_ok {
            c.cur.filter(|e| from <= e.pos)
        } else {
            c.prev
                .filter(|(e, before)| from <= e.pos && before.is_none_or(|b| b < from))
                .map(|(e, _)| e)
        };
        if here.is_some() {
            return here;
        }
        // The last sample at or before `from` (or the first).
        let s = self
            .samples
            .partition_point(|x| x.0 <= from)
            .saturating_sub(1);
        let sample_at = s as u64 * self.every;
        let far_ahead = c.at == u64::MAX || (c.at < sample_at && c.cur.is_some());
        if !behind_ok || far_ahead {
            let (pos, resume) = self.samples.get(s)?;
            if c.files.seek(resume).is_err() {
                c.at = self.count;
                c.cur = None;
                c.prev = None;
                return None;
            }
            c.at = sample_at;
            c.cur = None;
            c.behind = pos.checked_sub(1).filter(|_| s > 0);
            c.prev = None;
            self.read_cur(&mut c);
        }
        while let Some(e) = c.cur.filter(|e| e.pos < from) {
            c.prev = Some((e, c.behind));
            c.behind = Some(e.pos);
            c.at += 1;
            self.read_cur(&mut c);
        }
        c.cur
    }

    /// Read the entry at `c.at` into `c.cur`.
    fn read_cur(&self, c: &mut Cursor<'s>) {
        c.cur = if c.at < self.count {
            c.files.next(None).ok().flatten()
        } else {
            None
        };
        if c.cur.is_none() {
            c.at = self.count;
        }
    }
}

/// The index files, read in index order from a resume point, and keys on
/// demand.
enum Files<'s> {
    Big {
        win: IoSource<'s>,
        features: Features,
        /// Offset of the next entry.
        next: u64,
        /// Offset of the entry last returned.
        last: u64,
    },
    Bti {
        walk: TrieWalk<'s>,
        rows: Option<IoSource<'s>>,
        flavor: Flavor,
    },
}

impl<'s> Files<'s> {
    fn open(sst: &'s Sstable, window: u64) -> Option<Files<'s>> {
        if sst.features().trie_index {
            if !sst.has(Component::Partitions) {
                return None;
            }
            let footer = read_footer(&sst.io).ok()?;
            let src = IoSource::windowed(&sst.io, Component::Partitions, window).ok()?;
            let rows = if sst.has(Component::Rows) {
                IoSource::windowed(&sst.io, Component::Rows, window).ok()
            } else {
                None
            };
            Some(Files::Bti {
                walk: TrieWalk::new(src, footer.root),
                rows,
                flavor: flavor_of(sst),
            })
        } else {
            if !sst.has(Component::Index) {
                return None;
            }
            Some(Files::Big {
                win: IoSource::windowed(&sst.io, Component::Index, window).ok()?,
                features: sst.features(),
                next: 0,
                last: 0,
            })
        }
    }

    /// Back to the first entry.
    fn restart(&mut self) -> Result<()> {
        match self {
            Files::Big { .. } => self.seek(&Resume::Index(0)),
            Files::Bti { .. } => self.seek(&Resume::Trie(Vec::new())),
        }
    }

    /// The next entry in index order. A BTI payload whose Rows.db entry
    /// cannot be read is skipped (and `check`, when given, told).
    fn next(&mut self, mut check: Option<&mut Check<'_>>) -> Result<Option<Entry>> {
        match self {
            Files::Big {
                win,
                features,
                next,
                last,
            } => {
                let at = *next;
                let Some((pos, end)) = decode_index(win, *features, at, |e| {
                    if let Some(c) = check.as_deref_mut() {
                        c.key(e.key);
                    }
                    (e.position, e.offset + e.len)
                })?
                else {
                    return Ok(None);
                };
                *last = at;
                *next = end;
                Ok(Some(Entry {
                    pos,
                    key: KeyRef::Index(at),
                }))
            }
            Files::Bti { walk, rows, flavor } => loop {
                let Some(p) = walk.next()? else {
                    return Ok(None);
                };
                match p.position {
                    PartitionPosition::Data(pos) => {
                        let key = p.hash.map_or(KeyRef::None, KeyRef::Hash);
                        return Ok(Some(Entry { pos, key }));
                    }
                    PartitionPosition::Rows(off) => {
                        match rows
                            .as_mut()
                            .and_then(|r| RowsEntry::read(r, off, *flavor).ok())
                        {
                            Some(re) => {
                                return Ok(Some(Entry {
                                    pos: re.data_position,
                                    key: KeyRef::Rows(off),
                                }))
                            }
                            None => {
                                if let Some(c) = check.as_deref_mut() {
                                    c.intact = false;
                                }
                            }
                        }
                    }
                }
            },
        }
    }

    /// Where reading resumes at the entry last returned by [`Files::next`].
    fn resume(&self) -> Resume {
        match self {
            Files::Big { last, .. } => Resume::Index(*last),
            Files::Bti { walk, .. } => Resume::Trie(walk.key.clone()),
        }
    }

    /// Resume so that [`Files::next`] returns the entry `r` was taken at.
    fn seek(&mut self, r: &Resume) -> Result<()> {
        match (self, r) {
            (Files::Big { next, .. }, Resume::Index(off)) => {
                *next = *off;
                Ok(())
            }
            (Files::Bti { walk, .. }, Resume::Trie(key)) => walk.resume(key),
            _ => Ok(()),
        }
    }

    /// The key `k` refers to, when the index stores one.
    fn key(&mut self, k: KeyRef) -> Option<Vec<u8>> {
        match (self, k) {
            (Files::Big { win, features, .. }, KeyRef::Index(off)) => {
                decode_index(win, *features, off, |e| e.key.to_vec())
                    .ok()
                    .flatten()
            }
            (Files::Bti { rows, flavor, .. }, KeyRef::Rows(off)) => rows
                .as_mut()
                .and_then(|r| RowsEntry::read(r, off, *flavor).ok())
                .map(|re| re.key),
            _ => None,
        }
    }
}

/// Bytes first asked for an Index.db entry (doubled while it does not fit).
const ENTRY_GUESS: usize = 256;

/// Decode the Index.db entry at `off` and pass it to `f`; `None` at the
/// end of the file.
fn decode_index<T>(
    win: &mut IoSource<'_>,
    features: Features,
    off: u64,
    f: impl FnOnce(&crate::index::IndexEntry<'_>) -> T,
) -> Result<Option<T>> {
    let len = win.len();
    let mut want = ENTRY_GUESS;
    let mut f = Some(f);
    loop {
        let b = win.bytes(off, want)?;
        let at_end = off + b.len() as u64 == len;
        let have = b.len();
        let r = match IndexReader::at(b, off, features).next() {
            Ok(Some(e)) => Ok(f.take().map(|f| f(&e))),
            Ok(None) => Ok(None),
            Err(e) => Err(e),
        };
        match r {
            // The entry goes on past these bytes: ask for more.
            Err(e) if !at_end && crate::index::is_truncation(&e.kind) => {
                want = have.saturating_mul(2).max(want);
            }
            r => return r,
        }
    }
}

/// A forward walk of the payloads of the Partitions.db trie, as
/// [`crate::bti::partitions::for_each_entry`] does, that can resume at a
/// payload's key.
struct TrieWalk<'s> {
    src: IoSource<'s>,
    root: u64,
    /// The path from the root: each node and the index of its next child.
    stack: Vec<(Node, usize)>,
    /// The key of the top of the stack.
    key: Vec<u8>,
    /// The top of the stack's payload is still to be returned.
    pending: bool,
    /// Nodes read since the walk (re)started.
    visited: u64,
}

impl<'s> TrieWalk<'s> {
    fn new(src: IoSource<'s>, root: u64) -> Self {
        TrieWalk {
            src,
            root,
            stack: Vec::new(),
            key: Vec::new(),
            pending: false,
            // Not started: the first call to `next` starts at the root.
            visited: u64::MAX,
        }
    }

    /// Restart at the node of `key` (the root for an empty key): its
    /// payload is the next one returned.
    fn resume(&mut self, key: &[u8]) -> Result<()> {
        self.stack.clear();
        self.key.clear();
        let mut node = read_node(&mut self.src, self.root)?;
        for &b in key {
            let found = node.children().iter().position(|c| c.0 == b);
            let Some(i) = found else {
                return Err(Error::at(
                    ErrorKind::BadValue("trie key no longer found".into()),
                    Component::Partitions,
                    node.pos,
                    "trie walk",
                ));
            };
            let child = node.children()[i].1;
            self.stack.push((node, i + 1));
            self.key.push(b);
            node = read_node(&mut self.src, child)?;
        }
        self.visited = self.stack.len() as u64 + 1;
        self.pending = node.has_payload();
        self.stack.push((node, 0));
        Ok(())
    }

    /// The next payload in key order (`self.key` is its key).
    fn next(&mut self) -> Result<Option<PartitionPayload>> {
        if self.visited == u64::MAX {
            self.resume(&[])?;
        }
        let max = self.src.len();
        loop {
            if std::mem::take(&mut self.pending) {
                if let Some((node, _)) = self.stack.last() {
                    if let Some(p) = PartitionPayload::read(&mut self.src, node)? {
                        return Ok(Some(p));
                    }
                }
            }
            let depth = self.stack.len();
            let Some((node, next)) = self.stack.last_mut() else {
                return Ok(None);
            };
            let Some(&(t, pos)) = node.children().get(*next) else {
                self.stack.pop();
                if !self.stack.is_empty() {
                    self.key.pop();
                }
                continue;
            };
            *next += 1;
            self.visited += 1;
            if self.visited > max || depth >= MAX_DEPTH {
                return Err(Error::at(
                    ErrorKind::BadValue(
                        "trie enumeration too long: subtrees are shared (not a tree)".into(),
                    ),
                    Component::Partitions,
                    pos,
                    "trie walk",
                ));
            }
            let child = read_node(&mut self.src, pos)?;
            self.key.push(t);
            self.pending = child.has_payload();
            self.stack.push((child, 0));
        }
    }
}

#[cfg(test)]
mod tests;
