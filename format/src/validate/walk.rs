//! The decoding walk over Data.db: each partition against the checks of
//! [`DataChecker`], its Index.db entry and promoted index, and Filter.db.
//!
//! One [`Walk`] reads the whole file on one thread; with several threads
//! ([`super::parallel`]) each unit of partitions gets a walk of its own,
//! and their results are joined in order into the walk of the calling
//! thread ([`Walk::join`]).

use std::collections::BTreeSet;
use std::sync::OnceLock;

use crate::data::{DataPos, Fragment, ReaderOptions, ScanReader};
use crate::error::Error;
use crate::filter::BloomFilter;
use crate::index::{IndexEntry, IndexReader};
use crate::statistics::SerializationHeader;
use crate::token::Partitioner;
use crate::Features;

use super::parts::PartsJoin;
use super::*;

/// Filter.db with the other bit layouts and hash orders (§9 quirks),
/// shared by the walks of every thread.
pub(super) struct BloomFilters {
    filter: BloomFilter,
    /// Made at the first key the filter rejects: three copies of the
    /// filter cost time before the walk and memory, and a sound filter
    /// rejects no key.
    alts: OnceLock<Vec<BloomFilter>>,
}

/// The other layouts: [`BloomFilters::alts`] in this order.
const ALTS: usize = 3;

impl BloomFilters {
    pub(super) fn new(filter: BloomFilter) -> BloomFilters {
        BloomFilters {
            filter,
            alts: OnceLock::new(),
        }
    }

    fn alts(&self) -> &[BloomFilter] {
        self.alts.get_or_init(|| {
            let f = &self.filter;
            let (of, oh) = (f.old_format(), f.old_hash_order());
            let layouts: [(bool, bool); ALTS] = [(!of, oh), (of, !oh), (!of, !oh)];
            layouts
                .into_iter()
                .map(|(a, b)| f.clone().with_layout(a, b))
                .collect()
        })
    }
}

/// Bloom filter checking with the fallback layouts (§9 quirks).
pub(super) struct BloomCheck<'f> {
    filters: &'f BloomFilters,
    alt_pass: Vec<u64>,
    misses: Vec<(Vec<u8>, u64)>,
    miss_count: u64,
    checked: u64,
}

/// Keys rejected by Filter.db that are kept to be reported.
const MISSES_KEPT: usize = 1000;

impl<'f> BloomCheck<'f> {
    pub(super) fn new(filters: &'f BloomFilters) -> BloomCheck<'f> {
        BloomCheck {
            alt_pass: vec![0; ALTS],
            filters,
            misses: Vec::new(),
            miss_count: 0,
            checked: 0,
        }
    }

    pub(super) fn key(&mut self, key: &[u8], pos: u64) {
        self.checked += 1;
        if self.filters.filter.may_contain(key) {
            return;
        }
        self.miss_count += 1;
        for (i, a) in self.filters.alts().iter().enumerate() {
            if a.may_contain(key) {
                self.alt_pass[i] += 1;
            }
        }
        if self.misses.len() < MISSES_KEPT {
            self.misses.push((key.to_vec(), pos));
        }
    }

    /// Add the keys `later` checked after these (a later unit's).
    fn join(&mut self, later: BloomCheck<'_>) {
        self.checked += later.checked;
        self.miss_count += later.miss_count;
        for (a, b) in self.alt_pass.iter_mut().zip(later.alt_pass) {
            *a += b;
        }
        let room = MISSES_KEPT.saturating_sub(self.misses.len());
        self.misses.extend(later.misses.into_iter().take(room));
    }

    pub(super) fn finish(self, chunk_len: Option<u64>, report: &mut Report) {
        if self.miss_count == 0 {
            report.check("filter", true, None);
            return;
        }
        // Most keys rejected by the version's layout (the rest its false
        // positives), every rejected one accepted by another: the file uses
        // a non-standard layout (§9), not a bloom filter miss. (Cassandra's
        // bloom-filter-la test file: 9 of 10 keys rejected by the la order.)
        if 2 * self.miss_count > self.checked {
            if let Some(i) = self.alt_pass.iter().position(|n| *n == self.miss_count) {
                let a = &self.filters.alts()[i];
                report.check(
                    "filter",
                    true,
                    Some(format!(
                        "Filter.db uses the {} bit layout with the {} hash order (not its version's)",
                        if a.old_format() { "old" } else { "new" },
                        if a.old_hash_order() { "old" } else { "new" }
                    )),
                );
                return;
            }
        }
        for (k, pos) in &self.misses {
            report.problems.push(
                Problem::new(
                    ProblemClass::BloomFilterMiss,
                    Component::Filter,
                    *pos,
                    format!(
                        "bloom filter says the partition key at Data.db offset {pos:#x} is absent"
                    ),
                )
                .chunk(None)
                .key(k),
            );
        }
        let _ = chunk_len;
        report.check(
            "filter",
            true,
            Some(format!(
                "{} of {} keys rejected",
                self.miss_count, self.checked
            )),
        );
    }
}

/// The next index entry (a pending one first).
fn next_entry<'a>(
    idx: &mut Option<IndexReader<'a>>,
    pending: &mut Option<IndexEntry<'a>>,
    failed: &mut bool,
) -> Option<IndexEntry<'a>> {
    if let Some(e) = pending.take() {
        return Some(e);
    }
    let r = idx.as_mut()?;
    if *failed {
        return None;
    }
    match r.next() {
        Ok(e) => e,
        Err(_) => {
            // Already reported by the pre-pass.
            *failed = true;
            None
        }
    }
}

/// True when `e` is about the same unreadable chunk as the last one
/// reported (remembers `e`'s chunk otherwise).
fn same_bad_chunk(e: &Error, last: &mut Option<u32>) -> bool {
    let Some(c) = e.chunk else { return false };
    if *last == Some(c) {
        return true;
    }
    *last = Some(c);
    false
}

/// Position `reader` at the first indexed partition after `start` that it
/// can seek to. False when there is none.
fn resume<'a>(
    reader: &mut ScanReader<'_>,
    start: u64,
    idx: &mut Option<IndexReader<'a>>,
    pending: &mut Option<IndexEntry<'a>>,
    failed: &mut bool,
) -> bool {
    while let Some(e) = next_entry(idx, pending, failed) {
        if e.position <= start {
            continue;
        }
        let p = e.position;
        if reader.seek_partition(DataPos(p)).is_ok() {
            *pending = Some(e);
            return true;
        }
    }
    false
}

/// What every walk over one sstable's Data.db reads with.
pub(super) struct Shared<'a> {
    pub(super) header: &'a SerializationHeader,
    pub(super) partitioner: &'a Partitioner,
    pub(super) chunk_len: Option<u64>,
    pub(super) fixed: Vec<Option<usize>>,
    /// Index.db, mapped (BIG format).
    pub(super) index: Option<&'a [u8]>,
    pub(super) features: Features,
    /// Chunks the checksum pass found bad (not reported again).
    pub(super) bad_chunks: &'a BTreeSet<u64>,
    pub(super) bloom: Option<&'a BloomFilters>,
    pub(super) reader: ReaderOptions,
    pub(super) max_problems: usize,
}

impl Shared<'_> {
    /// A chunk the checksum pass reported bad: not reported again when
    /// the data walk meets it.
    fn known_bad(&self, e: &Error) -> bool {
        matches!(e.kind, ErrorKind::ChecksumMismatch { .. })
            && e.chunk
                .is_some_and(|c| self.bad_chunks.contains(&u64::from(c)))
    }
}

/// Where a walk is in Index.db: the entry it takes next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum IndexAt {
    /// No Index.db (BTI, or none to read).
    NoIndex,
    /// The entry at this Index.db offset (the end: no more entries).
    Next(u64),
    /// An entry did not decode: no more entries.
    Failed,
}

/// A partition whose header [`Walk::head`] read.
pub(super) struct Started {
    key: Vec<u8>,
    start: u64,
    pi: Option<PiCheck>,
}

/// The state of the loop over Data.db's partitions.
pub(super) struct Walk<'a, 's> {
    pub(super) reader: ScanReader<'s>,
    pub(super) checker: DataChecker,
    idx: Option<IndexReader<'a>>,
    pending: Option<IndexEntry<'a>>,
    index_failed: bool,
    last_bad_chunk: Option<u32>,
    /// The chunk of the first chunk error this walk met: a unit's walk
    /// started without knowing the chunk the walk before it met last.
    pub(super) first_bad_chunk: Option<u32>,
    pub(super) bloom: Option<BloomCheck<'a>>,
    pub(super) problems: Problems,
    /// Decoding went to the end of Data.db (not stopped by damage).
    pub(super) data_complete: bool,
    /// Every partition decoded.
    pub(super) all_decoded: bool,
    /// Why decoding stopped (the `data` check's note).
    pub(super) stop_note: Option<String>,
    /// The first partition started: its key, offset, and how many
    /// problems were found before it (where its order problem goes).
    pub(super) first_start: Option<(Vec<u8>, u64, u64)>,
    /// The loop is over (the end of the data, or damage it cannot pass).
    pub(super) stopped: bool,
    /// Where the next partition starts.
    pub(super) at: u64,
    /// The reader is at `at` (not so after a unit's walk was joined).
    synced: bool,
    /// Units' walks joined to this one.
    pub(super) joined: u64,
    /// Parts of large partitions walked on other threads and taken.
    pub(super) parts: u64,
}

impl<'a, 's> Walk<'a, 's> {
    /// A walk with `reader` at a partition start, taking Index.db from its start.
    pub(super) fn new(sh: &Shared<'a>, reader: ScanReader<'s>, problems: Problems) -> Self {
        Walk {
            reader,
            checker: DataChecker::new(sh.header, sh.partitioner.clone(), sh.chunk_len),
            idx: sh.index.map(|b| IndexReader::new(b, sh.features)),
            pending: None,
            index_failed: false,
            last_bad_chunk: None,
            first_bad_chunk: None,
            bloom: sh.bloom.map(BloomCheck::new),
            problems,
            data_complete: true,
            all_decoded: true,
            stop_note: None,
            first_start: None,
            stopped: false,
            at: 0,
            synced: true,
            joined: 0,
            parts: 0,
        }
        .positioned()
    }

    fn positioned(mut self) -> Self {
        self.at = self.reader.position().0;
        self
    }

    /// The next Index.db entry this walk takes.
    pub(super) fn index_at(&self) -> IndexAt {
        match (&self.idx, &self.pending) {
            (None, _) => IndexAt::NoIndex,
            _ if self.index_failed => IndexAt::Failed,
            (Some(_), Some(e)) => IndexAt::Next(e.offset),
            (Some(r), None) => IndexAt::Next(r.offset()),
        }
    }

    /// Take the Index.db entries from `at` on.
    pub(super) fn set_index_at(&mut self, sh: &Shared<'a>, at: IndexAt) {
        self.pending = None;
        self.index_failed = at == IndexAt::Failed;
        self.idx = match (sh.index, at) {
            (Some(b), IndexAt::Next(off)) => {
                let rest = usize::try_from(off).ok().and_then(|o| b.get(o..));
                Some(IndexReader::at(rest.unwrap_or_default(), off, sh.features))
            }
            (Some(b), IndexAt::Failed) => Some(IndexReader::new(b, sh.features)),
            _ => None,
        };
    }

    /// True when `e` is about the same unreadable chunk as the last one
    /// reported (remembers `e`'s chunk otherwise).
    fn same_bad_chunk(&mut self, e: &Error) -> bool {
        if self.first_bad_chunk.is_none() {
            self.first_bad_chunk = e.chunk;
        }
        same_bad_chunk(e, &mut self.last_bad_chunk)
    }

    /// Walk partitions while they start before `end`. Fails only when the
    /// reader cannot be put back where a joined unit's walk stopped.
    pub(super) fn run_until(
        &mut self,
        sh: &Shared<'a>,
        end: u64,
        progress: &mut dyn FnMut(u64, u64),
    ) -> crate::Result<()> {
        if self.stopped {
            return Ok(());
        }
        self.sync()?;
        while !self.stopped && self.reader.position().0 < end {
            self.step(sh, progress);
        }
        self.at = self.reader.position().0;
        Ok(())
    }

    /// Put the reader where the walk is (after a joined unit's walk).
    fn sync(&mut self) -> crate::Result<()> {
        if !self.synced {
            self.reader.seek_partition(DataPos(self.at))?;
            self.synced = true;
        }
        Ok(())
    }

    /// The partition where this walk is, whose rows and markers `join`
    /// checked in parts on other threads (every part clean, every boundary
    /// agreeing), against the promoted index at `pi_position`: its header
    /// is read and checked here, then the parts' counts and last
    /// clustering are taken and the partition ends. When this walk's own
    /// check of the partition would use another promoted index (or none
    /// decodes from its entry), the body is walked here instead, as one
    /// thread walks it. Fails only when the reader cannot be put where the
    /// walk is.
    pub(super) fn step_parts(
        &mut self,
        sh: &Shared<'a>,
        join: &PartsJoin,
        pi_position: Option<u64>,
        progress: &mut dyn FnMut(u64, u64),
    ) -> crate::Result<()> {
        if self.stopped {
            return Ok(());
        }
        self.sync()?;
        if let Some(p) = self.head(sh, progress) {
            if p.pi
                .as_ref()
                .is_some_and(|pi| Some(pi.position()) != pi_position)
            {
                self.body(sh, p);
            } else {
                let last = join.last.as_ref().map(|l| &l.1);
                self.checker.body_checked(&join.counts, last);
                // The END_OF_PARTITION byte is the partition's last.
                let end = join.end.saturating_sub(1);
                self.checker.partition_end(end, &mut self.problems);
                let (fs, _) = self.reader.take_findings();
                self.checker.findings(&fs, Some(&p.key), &mut self.problems);
                self.parts += join.parts;
                self.at = join.end;
                self.synced = false;
                return Ok(());
            }
        }
        self.at = self.reader.position().0;
        Ok(())
    }

    /// One partition (or one that does not decode and the resumption after it).
    fn step(&mut self, sh: &Shared<'a>, progress: &mut dyn FnMut(u64, u64)) {
        if let Some(p) = self.head(sh, progress) {
            self.body(sh, p);
        }
    }

    /// The header of the next partition and everything checked before its
    /// rows: the key's order and the bloom filter, its Index.db entry, the
    /// promoted index's deletion. None when there is no partition to read
    /// (the end, or one that does not decode: then handled here).
    fn head(&mut self, sh: &Shared<'a>, progress: &mut dyn FnMut(u64, u64)) -> Option<Started> {
        let data_len = self.reader.data_len();
        let start = self.reader.position().0;
        progress(start, data_len);
        let (key, deletion) = match self.reader.next_fragment() {
            Ok(None) => {
                self.stopped = true;
                return None;
            }
            Ok(Some(Fragment::PartitionStart { key, deletion, .. })) => (key.to_vec(), deletion),
            Ok(Some(f)) => {
                self.problems.push(Problem::new(
                    ProblemClass::DecodeError,
                    Component::Data,
                    f.position().0,
                    "expected a partition start",
                ));
                self.data_complete = false;
                self.stopped = true;
                return None;
            }
            Err(e) => {
                self.all_decoded = false;
                if !self.same_bad_chunk(&e) && !sh.known_bad(&e) {
                    self.problems.push(
                        Problem::from_error(&e, Component::Data, start).chunk(
                            e.chunk
                                .map(u64::from)
                                .or(self.checker.chunk_of(e.offset.unwrap_or(start))),
                        ),
                    );
                }
                // Resume at the next indexed partition after this one.
                if !self.resume(start) {
                    self.data_complete = false;
                    self.stop_note = Some(format!(
                        "decoding stopped at Data.db offset {start:#x} ({} bytes not checked); \
                         `scrub --mode skip` resynchronises without the index",
                        data_len.saturating_sub(start)
                    ));
                    self.stopped = true;
                }
                return None;
            }
        };
        if self.first_start.is_none() {
            self.first_start = Some((key.clone(), start, self.problems.total()));
        }
        let problems = &mut self.problems;
        let checker = &mut self.checker;
        checker.partition_start(&key, &deletion, start, true, problems);
        if let Some(b) = self.bloom.as_mut() {
            b.key(&key, start);
        }
        // Index entry for this partition.
        let mut pi: Option<PiCheck> = None;
        if self.idx.is_some() {
            loop {
                match next_entry(&mut self.idx, &mut self.pending, &mut self.index_failed) {
                    None => {
                        if !self.index_failed {
                            problems.push(
                                Problem::new(
                                    ProblemClass::IndexMismatch,
                                    Component::Data,
                                    start,
                                    "partition has no Index.db entry (the index ends before it)",
                                )
                                .chunk(checker.chunk_of(start))
                                .key(&key),
                            );
                        }
                        break;
                    }
                    Some(e) if e.position < start => {
                        problems.push(
                            Problem::new(
                                ProblemClass::IndexMismatch,
                                Component::Index,
                                e.offset,
                                format!(
                                    "Index.db entry points at Data.db offset {} where no partition starts",
                                    e.position
                                ),
                            )
                            .key(e.key),
                        );
                    }
                    Some(e) if e.position > start => {
                        problems.push(
                            Problem::new(
                                ProblemClass::IndexMismatch,
                                Component::Data,
                                start,
                                "partition has no Index.db entry",
                            )
                            .chunk(checker.chunk_of(start))
                            .key(&key),
                        );
                        self.pending = Some(e);
                        break;
                    }
                    Some(e) => {
                        if e.key != key.as_slice() {
                            problems.push(
                                Problem::new(
                                    ProblemClass::IndexMismatch,
                                    Component::Index,
                                    e.offset,
                                    format!(
                                        "Index.db entry for Data.db offset {start} has key 0x{}, \
                                         the partition there has another key",
                                        crate::validate::hex(e.key)
                                    ),
                                )
                                .key(&key),
                            );
                        } else {
                            pi = PiCheck::from_entry(&e, &sh.fixed, problems);
                        }
                        break;
                    }
                }
            }
        }
        if let Some(p) = &pi {
            p.partition_start(&deletion, problems);
        }
        Some(Started { key, start, pi })
    }

    /// The static row, rows and markers of the partition `head` started,
    /// to its end (or to damage, and the resumption after it).
    fn body(&mut self, sh: &Shared<'a>, p: Started) {
        let Started { key, start, mut pi } = p;
        let data_len = self.reader.data_len();
        // The partition's fragments.
        let mut failed = false;
        loop {
            // Matched in place: moving the fragment out costs a copy of it
            // per fragment, made before the reader's stores have landed.
            let next = self.reader.next_fragment();
            let f = match next {
                Ok(Some(ref f)) => f,
                Ok(None) => {
                    self.problems.push(
                        Problem::new(
                            ProblemClass::DecodeError,
                            Component::Data,
                            data_len,
                            "Data.db ends inside a partition",
                        )
                        .key(&key),
                    );
                    failed = true;
                    break;
                }
                Err(e) => {
                    if self.same_bad_chunk(&e) {
                        failed = true;
                        break;
                    }
                    let off = e.offset.unwrap_or(start);
                    if !sh.known_bad(&e) {
                        self.problems.push(
                            Problem::from_error(&e, Component::Data, off)
                                .chunk(e.chunk.map(u64::from).or(self.checker.chunk_of(off)))
                                .key(&key),
                        );
                    }
                    failed = true;
                    break;
                }
            };
            let (problems, checker) = (&mut self.problems, &mut self.checker);
            let unf = match &f {
                Fragment::Row(r) => Some((r.position.0, &r.clustering)),
                Fragment::Marker(m) => Some((m.position.0, &m.bound)),
                _ => None,
            };
            if let (Some(p), Some((pos, c))) = (pi.as_mut(), unf) {
                p.unfiltered(
                    pos - start,
                    c,
                    checker.last_clustering(),
                    checker.open_marker(),
                    problems,
                );
            }
            if let Fragment::PartitionEnd { position } = *f {
                if let Some(p) = pi.as_mut() {
                    p.end(
                        position.0 - start,
                        checker.last_clustering(),
                        checker.open_marker(),
                        problems,
                    );
                }
                checker.partition_end(position.0, problems);
                break;
            }
            checker.fragment(f, problems);
        }
        let (fs, _) = self.reader.take_findings();
        self.checker.findings(&fs, Some(&key), &mut self.problems);
        if failed {
            self.all_decoded = false;
            self.checker.abort_partition();
            if !self.resume(start) {
                self.data_complete = false;
                let at = self.reader.position().0;
                self.stop_note = Some(format!(
                    "decoding stopped in the partition at Data.db offset {start:#x}; \
                     `scrub --mode skip` resynchronises without the index (stopped near {at:#x})"
                ));
                self.stopped = true;
            }
        }
    }

    /// Position the reader at the first indexed partition after `start`
    /// that it can seek to. False when there is none.
    fn resume(&mut self, start: u64) -> bool {
        resume(
            &mut self.reader,
            start,
            &mut self.idx,
            &mut self.pending,
            &mut self.index_failed,
        )
    }

    /// The Index.db entries left after the last partition (when decoding
    /// went to the end of Data.db).
    pub(super) fn leftover_entries(&mut self) {
        if self.idx.is_none() || !self.data_complete {
            return;
        }
        while let Some(e) = next_entry(&mut self.idx, &mut self.pending, &mut self.index_failed) {
            self.problems.push(
                Problem::new(
                    ProblemClass::IndexMismatch,
                    Component::Index,
                    e.offset,
                    format!(
                        "Index.db entry points at Data.db offset {} past the last partition",
                        e.position
                    ),
                )
                .key(e.key),
            );
        }
    }

    /// True when the walk reads an index in step with Data.db.
    pub(super) fn has_index(&self) -> bool {
        self.idx.is_some()
    }

    /// Continue with what `later` (the walk of the next unit, started
    /// where this one is) found: its problems after this walk's, with the
    /// order of its first partition after this walk's last checked here,
    /// and its counts, keys, index position and bad chunk.
    pub(super) fn join(&mut self, sh: &Shared<'a>, later: Joined<'a>) {
        let mut list = later.problems;
        if let Some((key, pos, at)) = &later.first_start {
            if let Some(p) = self.checker.order_problem(key, *pos) {
                let at = usize::try_from(*at)
                    .unwrap_or(usize::MAX)
                    .min(list.list.len());
                list.list.insert(at, p);
                *list.counts.entry(ProblemClass::PartitionOrder).or_insert(0) += 1;
            }
        }
        self.problems.append(list);
        self.checker.follow(&later.checker);
        if let (Some(b), Some(l)) = (self.bloom.as_mut(), later.bloom) {
            b.join(l);
        }
        self.set_index_at(sh, later.index_at);
        if later.first_bad_chunk.is_some() {
            self.last_bad_chunk = later.last_bad_chunk;
            if self.first_bad_chunk.is_none() {
                self.first_bad_chunk = later.first_bad_chunk;
            }
        }
        self.data_complete &= later.data_complete;
        self.all_decoded &= later.all_decoded;
        if later.stop_note.is_some() {
            self.stop_note = later.stop_note;
        }
        self.stopped |= later.stopped;
        self.at = later.end;
        self.synced = false;
        self.joined += 1;
    }

    /// What this walk found, without its reader (a unit's walk, handed to
    /// the calling thread).
    pub(super) fn finish_unit(self) -> Joined<'a> {
        let index_at = self.index_at();
        Joined {
            end: self.at,
            checker: self.checker,
            index_at,
            last_bad_chunk: self.last_bad_chunk,
            first_bad_chunk: self.first_bad_chunk,
            bloom: self.bloom,
            problems: self.problems,
            data_complete: self.data_complete,
            all_decoded: self.all_decoded,
            stop_note: self.stop_note,
            first_start: self.first_start,
            stopped: self.stopped,
        }
    }

    /// Whether the walk of a unit that started at this walk's position
    /// with no bad chunk met before, the index at `at`, and first met bad
    /// chunk `first_bad`, found what this walk would find going on.
    pub(super) fn continues_as(&self, start: u64, at: IndexAt, first_bad: Option<u32>) -> bool {
        !self.stopped
            && self.at == start
            && self.index_at() == at
            && (first_bad.is_none() || first_bad != self.last_bad_chunk)
    }
}

/// A unit's walk, as joined to the walk before it ([`Walk::join`]).
pub(super) struct Joined<'a> {
    /// Where its reader stopped.
    pub(super) end: u64,
    pub(super) checker: DataChecker,
    pub(super) index_at: IndexAt,
    pub(super) last_bad_chunk: Option<u32>,
    pub(super) first_bad_chunk: Option<u32>,
    pub(super) bloom: Option<BloomCheck<'a>>,
    pub(super) problems: Problems,
    pub(super) data_complete: bool,
    pub(super) all_decoded: bool,
    pub(super) stop_note: Option<String>,
    pub(super) first_start: Option<(Vec<u8>, u64, u64)>,
    pub(super) stopped: bool,
}
