//! The index-less scanner behind `sstkit scrub`: walks Data.db alone, from
//! its first byte, checks everything it decodes (the checks of
//! [`crate::validate::DataChecker`]), and on corruption resynchronises at the
//! next decodable partition.
//!
//! # Resynchronisation
//!
//! When the partition starting at `p` fails to decode, every later byte is
//! a candidate partition start, scanned forward from `p + 1` (for a
//! compressed file whose chunk `c` is unreadable, from the start of chunk
//! `c + 1`: chunk boundaries are where decompression restarts). A candidate
//! must look like a partition header — key length within the data and
//! plausible for the key type (fixed length, composite framing, decodable
//! value), a plausible deletion time (LIVE, or non-negative local deletion
//! time with a timestamp), and a first unfiltered whose flags fit the table
//! (static row iff the table has static columns) — and is then confirmed by
//! decoding the whole partition, with every `prev_unfiltered_size` right.
//! Index.db, when present and readable, supplies hints (the next indexed
//! positions are tried as they are reached) but is never required.
//!
//! Work is bounded: at most [`Options::max_attempts`] confirmations per
//! resynchronisation and, over the whole scan, confirmation decodes of at
//! most four times the data length (plus 64 MiB); each confirmation reads
//! with a window of [`Options::probe_window`] bytes. Past the budget only
//! index hints are tried.
//!
//! # Modes ([`Mode`])
//!
//! * `Validate`: report everything (resynchronising to go on), write nothing.
//! * `Abort`: stop at the first problem.
//! * `Skip`: salvage every partition that decodes; partitions out of order
//!   are dropped, rows out of clustering order are left out; report what was
//!   lost (byte range, keys when known). The order of a partition is decided
//!   with a look-ahead of eight decoded partitions: one whose key sorts
//!   after most of the partitions that follow it is the one out of order (a
//!   damaged key), not every partition after it.
//! * `Segregate`: like `Skip`, but out-of-order partitions go to the
//!   segregated output instead of being dropped.
//!
//! # Pre-3.0 sstables (`ka`/`la`)
//!
//! Read through the legacy decoder ([`crate::data::legacy`]); a candidate
//! partition start is an atom's name and mask (or the end marker) after the
//! header instead of row flags. As C\* 2.1's scrub does for CASSANDRA-10791
//! (range tombstones written after a partition's end marker), when Index.db
//! puts the next partition past the end of the one just decoded, the bytes
//! in between are read as atoms of that partition: a `partition_order`
//! finding, and the fragment is kept apart like an out-of-order partition
//! (segregated output, or dropped with `skip`).
//!
//! Output goes to a [`SalvageSink`]; a partition is handed to the sink only
//! after it decoded completely (it is decoded a second time while the sink
//! pulls its fragments), so a sink never sees a partial partition.

use std::cmp::Ordering;
use std::collections::VecDeque;
use std::ops::Range;

use crate::component::Component;
use crate::data::{DataPos, DataSource, Fragment, ReaderOptions, ScanReader};
use crate::error::{Error, ErrorKind, Result};
use crate::index::IndexReader;
use crate::sstable::Sstable;
use crate::statistics::{SerializationHeader, Statistics};
use crate::types::CqlType;
use crate::validate::{
    chunk_length, partitioner_of, statistics_problems, DataChecker, Problem, ProblemClass,
    Problems, Verdict,
};
use crate::version::Features;

/// What scrub does on corruption.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Report every problem, write nothing.
    Validate,
    /// Stop at the first problem.
    Abort,
    /// Salvage what decodes; drop what is out of order.
    Skip,
    /// Like `Skip`, out-of-order partitions go to the segregated output.
    Segregate,
}

/// Where a salvaged partition goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The main output: partitions in order.
    Main,
    /// The segregated output: partitions that broke the order.
    Segregated,
}

/// Scrub options.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// The mode.
    pub mode: Mode,
    /// Keep at most this many problems.
    pub max_problems: usize,
    /// Confirmation decodes per resynchronisation.
    pub max_attempts: u64,
    /// Largest unfiltered a confirmation decode accepts (bytes).
    pub probe_window: u64,
    /// Decoder options of the main scan.
    pub reader: ReaderOptions,
    /// Use Index.db positions as resynchronisation hints when readable.
    pub index_hints: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            mode: Mode::Validate,
            max_problems: 10_000,
            max_attempts: 100_000,
            probe_window: 16 << 20,
            reader: ReaderOptions::default(),
            index_hints: true,
        }
    }
}

/// A lending source of the fragments of one partition.
pub trait FragmentSource {
    /// The next fragment: `PartitionStart`, rows and markers, `PartitionEnd`,
    /// then `None`.
    fn next_fragment(&mut self) -> Result<Option<Fragment<'_>>>;
}

/// Facts about the sstable being scrubbed, for a sink's header.
#[derive(Debug)]
pub struct ScrubInfo<'a> {
    /// The serialization header (types).
    pub header: &'a SerializationHeader,
    /// The partitioner.
    pub partitioner: &'a crate::token::Partitioner,
    /// Uncompressed Data.db length.
    pub data_len: u64,
}

/// Where salvaged data goes. `commands` implements it as NDJSON in the
/// dump-data schema; an sstable writer can implement it to write a new
/// sstable (one for [`Target::Main`], one for [`Target::Segregated`]).
pub trait SalvageSink {
    /// Before the first partition.
    fn begin(&mut self, info: &ScrubInfo<'_>) -> std::io::Result<()>;
    /// A partition that decoded completely: pull its fragments from `src`.
    fn partition(
        &mut self,
        info: &ScrubInfo<'_>,
        target: Target,
        src: &mut dyn FragmentSource,
    ) -> std::io::Result<()>;
    /// Uncompressed bytes `range` of Data.db were skipped; `keys` are the
    /// partition keys known to be lost.
    fn lost(&mut self, range: Range<u64>, keys: &[Vec<u8>]) -> std::io::Result<()>;
    /// After the last partition.
    fn end(&mut self, report: &Report) -> std::io::Result<()>;
}

/// The result of a scrub.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// What was found.
    pub problems: Problems,
    /// Partitions that decoded completely.
    pub partitions: u64,
    /// Clustered rows decoded (in complete partitions and partial ones).
    pub rows: u64,
    /// Static rows decoded.
    pub static_rows: u64,
    /// Range tombstone markers decoded.
    pub markers: u64,
    /// Partitions written to the main output.
    pub salvaged: u64,
    /// Partitions written to the segregated output.
    pub segregated: u64,
    /// Partitions dropped because out of order (skip mode).
    pub dropped: u64,
    /// Uncompressed bytes lost (not part of any decoded partition).
    pub lost_bytes: u64,
    /// Lost byte ranges.
    pub lost_ranges: Vec<Range<u64>>,
    /// Uncompressed Data.db length.
    pub data_len: u64,
    /// True when `Abort` stopped the scan at a problem.
    pub aborted: bool,
    /// Resynchronisations, and candidate headers tried while resynchronising.
    pub resyncs: u64,
    /// Candidate partition starts decoded to confirm them.
    pub attempts: u64,
}

impl Report {
    /// True when nothing was found.
    pub fn valid(&self) -> bool {
        self.problems.is_empty()
    }
}

/// A partition that decoded.
struct Decoded {
    key: Vec<u8>,
    end: u64,
    /// A fragment of the previous partition found after its end marker
    /// (legacy format, CASSANDRA-10791), not a partition.
    fragment: bool,
    /// Positions of fragments left out when salvaging (out of order).
    drop: Vec<u64>,
}

/// A partition that failed.
struct Failed {
    error: Box<Error>,
    key: Option<Vec<u8>>,
}

/// Decode the partition at `pos` with `reader`, checking it with `checker`;
/// with `fragment = Some((key, end))`, the atoms in `[pos, end)` as a
/// fragment of partition `key` (legacy format, [`ScanReader::seek_fragment`]).
fn decode_partition(
    reader: &mut ScanReader<'_>,
    checker: &mut DataChecker,
    pos: u64,
    fragment: Option<(&[u8], u64)>,
    out: &mut Problems,
    budget: &mut u64,
) -> std::result::Result<Decoded, Failed> {
    let fail = |error: Error, key: Option<Vec<u8>>| Failed {
        error: Box::new(error),
        key,
    };
    let seek = match fragment {
        Some((k, end)) => reader.seek_fragment(k, DataPos(pos), DataPos(end)),
        None => reader.seek_partition(DataPos(pos)),
    };
    if let Err(e) = seek {
        return Err(fail(e, None));
    }
    let key = match reader.next_fragment() {
        Ok(Some(Fragment::PartitionStart { key, deletion, .. })) => {
            let k = key.to_vec();
            checker.partition_start(&k, &deletion, pos, false, out);
            k
        }
        Ok(Some(f)) => {
            let at = f.position().0;
            return Err(fail(
                Error::at(
                    ErrorKind::BadValue("expected a partition start".into()),
                    Component::Data,
                    at,
                    "partition",
                ),
                None,
            ));
        }
        Ok(None) => {
            return Err(fail(
                Error::at(
                    ErrorKind::UnexpectedEof { need: 1, have: 0 },
                    Component::Data,
                    pos,
                    "partition",
                ),
                None,
            ))
        }
        Err(e) => return Err(fail(e, None)),
    };
    let mut drop = Vec::new();
    let end_len = reader.end_marker_len();
    let end = loop {
        match reader.next_fragment() {
            Ok(Some(Fragment::PartitionEnd { position })) => {
                checker.partition_end(position.0, out);
                break match fragment {
                    Some((_, end)) => end,
                    None => position.0 + end_len,
                };
            }
            Ok(Some(f)) => {
                let at = f.position().0;
                if checker.fragment(&f, out) != Verdict::Ok {
                    drop.push(at);
                }
            }
            Ok(None) => {
                checker.abort_partition();
                return Err(fail(
                    Error::at(
                        ErrorKind::UnexpectedEof { need: 1, have: 0 },
                        Component::Data,
                        reader.position().0,
                        "end of partition",
                    ),
                    Some(key),
                ));
            }
            Err(e) => {
                checker.abort_partition();
                let (fs, _) = reader.take_findings();
                checker.findings(&fs, Some(&key), out);
                *budget = budget.saturating_sub(reader.position().0.saturating_sub(pos));
                return Err(fail(e, Some(key)));
            }
        }
    };
    let (fs, _) = reader.take_findings();
    checker.findings(&fs, Some(&key), out);
    *budget = budget.saturating_sub(end - pos);
    Ok(Decoded {
        key,
        end,
        fragment: fragment.is_some(),
        drop,
    })
}

/// The fragments of one decoded partition, re-read for the sink.
struct Salvaged<'r, 's> {
    reader: &'r mut ScanReader<'s>,
    drop: &'r [u64],
    end_byte: u64,
    done: bool,
}

impl FragmentSource for Salvaged<'_, '_> {
    fn next_fragment(&mut self) -> Result<Option<Fragment<'_>>> {
        if self.done {
            return Ok(None);
        }
        loop {
            let pos = self.reader.next_position().0;
            if self.drop.binary_search(&pos).is_ok() {
                self.reader.next_fragment()?;
                continue;
            }
            if pos >= self.end_byte {
                self.done = true;
            }
            return self.reader.next_fragment();
        }
    }
}

/// The cheap test of a candidate partition start (see the module docs).
struct Plausible {
    features: Features,
    key_type: CqlType,
    key_fixed: Option<usize>,
    has_static: bool,
    /// Pre-3.0 cell format (`ka`/`la`): atoms follow the header.
    legacy: bool,
}

impl Plausible {
    /// True when `w` (bytes from the candidate on) starts like a partition.
    fn check(&self, w: &[u8]) -> bool {
        if w.len() < 4 {
            return false;
        }
        let klen = u16::from_be_bytes([w[0], w[1]]) as usize;
        if klen == 0 || self.key_fixed.is_some_and(|n| n != klen) {
            return false;
        }
        let d = 2 + klen;
        let Some(&first) = w.get(d) else {
            return false;
        };
        let dlen = if self.features.uint_deletion_time {
            if first == 0x80 {
                1
            } else if first & 0x80 != 0 {
                return false;
            } else {
                12
            }
        } else {
            12
        };
        let Some(del) = w.get(d..d + dlen) else {
            return false;
        };
        if !self.features.uint_deletion_time {
            let ldt = i32::from_be_bytes([del[0], del[1], del[2], del[3]]);
            let mfda = i64::from_be_bytes([
                del[4], del[5], del[6], del[7], del[8], del[9], del[10], del[11],
            ]);
            let live = ldt == i32::MAX && mfda == i64::MIN;
            if !live && (ldt < 0 || ldt == i32::MAX || mfda == i64::MIN) {
                return false;
            }
        }
        let f = d + dlen;
        if self.legacy {
            // First atom: a cell name and a known mask, or the end marker
            // of a partition that has a deletion (§11).
            let Some(n) = w.get(f..f + 2) else {
                return false;
            };
            let n = u16::from_be_bytes([n[0], n[1]]) as usize;
            let ok = if n == 0 {
                !(ldt_live(&w[d..]))
            } else {
                w.get(f + 2 + n).is_some_and(|m| *m & !0x57 == 0)
            };
            let key = &w[2..2 + klen];
            return ok && crate::value::decode(&self.key_type, key).is_ok();
        }
        let Some(&flags) = w.get(f) else {
            return false;
        };
        let ok_flags = if flags == 0x01 {
            true
        } else if flags & 0x01 != 0 {
            false
        } else if self.has_static {
            flags & 0x80 != 0 && flags & 0x02 == 0 && w.get(f + 1) == Some(&0x01)
        } else if flags & 0x02 != 0 {
            flags == 0x02
                && w.get(f + 1)
                    .is_some_and(|k| matches!(k, 0 | 1 | 2 | 5 | 6 | 7))
        } else if flags & 0x80 != 0 {
            w.get(f + 1).is_some_and(|e| e & 0x01 == 0 && e & 0x7c == 0)
        } else {
            true
        };
        if !ok_flags {
            return false;
        }
        let key = &w[2..2 + klen];
        crate::value::decode(&self.key_type, key).is_ok()
    }
}

/// True when the 12 bytes at the start of `d` are the legacy LIVE deletion.
fn ldt_live(d: &[u8]) -> bool {
    d.get(..12).is_some_and(|b| {
        b[..4] == [0x7f, 0xff, 0xff, 0xff] && b[4..] == [0x80, 0, 0, 0, 0, 0, 0, 0]
    })
}

/// Partition positions (and the Index.db offsets of their entries) from Index.db.
struct Hints {
    index: Vec<u8>,
    /// (Data.db position, Index.db entry offset), sorted by position.
    entries: Vec<(u64, u64)>,
    features: Features,
}

impl Hints {
    fn read(sst: &Sstable) -> Option<Hints> {
        if sst.features().trie_index || !sst.has(Component::Index) {
            return None;
        }
        let index = sst.read_component(Component::Index).ok()?;
        let mut entries = Vec::new();
        let mut r = IndexReader::new(&index, sst.features());
        while let Ok(Some(e)) = r.next() {
            entries.push((e.position, e.offset));
        }
        entries.sort_unstable();
        entries.dedup_by_key(|e| e.0);
        Some(Hints {
            index,
            entries,
            features: sst.features(),
        })
    }

    /// The first indexed position `>= from`.
    fn next_at_or_after(&self, from: u64) -> Option<u64> {
        let i = self.entries.partition_point(|e| e.0 < from);
        self.entries.get(i).map(|e| e.0)
    }

    /// Keys of the indexed partitions starting in `range`.
    fn keys_in(&self, range: &Range<u64>, max: usize) -> Vec<Vec<u8>> {
        let i = self.entries.partition_point(|e| e.0 < range.start);
        self.entries[i..]
            .iter()
            .take_while(|e| e.0 < range.end)
            .take(max)
            .filter_map(|&(_, off)| {
                let b = self.index.get(usize::try_from(off).ok()?..)?;
                IndexReader::at(b, off, self.features)
                    .next()
                    .ok()
                    .flatten()
                    .map(|e| e.key.to_vec())
            })
            .collect()
    }
}

const SEGMENT: u64 = 256 << 10;
const PEEK: u64 = 65_535 + 2 + 13 + 3;

/// The scanner state.
struct Scanner<'s> {
    sst: &'s Sstable,
    header: &'s SerializationHeader,
    partitioner: crate::token::Partitioner,
    opts: Options,
    probe: ScanReader<'s>,
    scan: DataSource<'s>,
    plausible: Plausible,
    chunk_len: Option<u64>,
    hints: Option<Hints>,
    /// Bytes confirmation decodes may still read.
    budget: u64,
    attempts: u64,
}

impl<'s> Scanner<'s> {
    fn chunk_of(&self, pos: u64) -> Option<u64> {
        self.chunk_len.filter(|l| *l > 0).map(|l| pos / l)
    }

    fn next_chunk_start(&self, pos: u64) -> Option<u64> {
        self.chunk_len.filter(|l| *l > 0).map(|l| (pos / l + 1) * l)
    }

    /// Decode the candidate at `cand` completely, without reporting.
    fn confirm(&mut self, cand: u64) -> bool {
        self.attempts += 1;
        let mut scratch = Problems::with_max(16);
        let mut checker = DataChecker::new(self.header, self.partitioner.clone(), self.chunk_len);
        match decode_partition(
            &mut self.probe,
            &mut checker,
            cand,
            None,
            &mut scratch,
            &mut self.budget,
        ) {
            Ok(_) => {
                scratch.count(ProblemClass::PrevSizeMismatch) == 0
                    && scratch.count(ProblemClass::DecodeError) == 0
            }
            Err(_) => false,
        }
    }

    /// The next position after a failure at `pos` where a partition decodes.
    fn resync(&mut self, pos: u64, failure: &Error) -> Option<u64> {
        let data_len = self.scan.data_len();
        let mut q = pos + 1;
        // An unreadable chunk: nothing in it can be decoded.
        if matches!(
            failure.kind,
            ErrorKind::ChecksumMismatch { .. } | ErrorKind::Decompress(_)
        ) || failure.chunk.is_some()
        {
            if let (Some(c), Some(l)) = (failure.chunk, self.chunk_len) {
                q = q.max((c as u64 + 1) * l);
            }
        }
        let mut attempts = 0u64;
        let mut next_hint = self.hints.as_ref().and_then(|h| h.next_at_or_after(q));
        while q < data_len {
            let out_of_budget = self.budget == 0 || attempts >= self.opts.max_attempts;
            if out_of_budget {
                // Only index hints from here on.
                while let Some(h) = next_hint {
                    if self.confirm(h) {
                        return Some(h);
                    }
                    next_hint = self.hints.as_ref().and_then(|x| x.next_at_or_after(h + 1));
                }
                return None;
            }
            if let Err(e) = self.scan.seek(DataPos(q)) {
                match self.next_chunk_start(q) {
                    Some(n) if e.chunk.is_some() || self.chunk_len.is_some() => {
                        q = n;
                        continue;
                    }
                    _ => return None,
                }
            }
            let want = (SEGMENT + PEEK).min(data_len - q);
            let filled = self.scan.fill(want);
            let w = self.scan.window();
            if w.is_empty() {
                // The chunk at q is unreadable: go to the next one.
                match (filled, self.next_chunk_start(q)) {
                    (Err(_), Some(n)) => {
                        q = n;
                        continue;
                    }
                    _ => return None,
                }
            }
            let wl = w.len() as u64;
            let seg_len = if filled.is_ok() {
                wl.clamp(1, SEGMENT)
            } else {
                wl
            };
            // Candidates q..q+seg_len; copy the window (the probe reader and
            // the scan source are independent, but `confirm` needs &mut self).
            let window: Vec<u8> = w.to_vec();
            let mut found = None;
            for i in 0..seg_len {
                let cand = q + i;
                while let Some(h) = next_hint {
                    if h > cand {
                        break;
                    }
                    if h == cand && self.confirm(h) {
                        return Some(h);
                    }
                    next_hint = self.hints.as_ref().and_then(|x| x.next_at_or_after(h + 1));
                    if h == cand {
                        break;
                    }
                }
                if self.plausible.check(&window[i as usize..]) {
                    attempts += 1;
                    if self.confirm(cand) {
                        found = Some(cand);
                        break;
                    }
                    if self.budget == 0 || attempts >= self.opts.max_attempts {
                        break;
                    }
                }
            }
            if found.is_some() {
                return found;
            }
            q += seg_len;
        }
        None
    }
}

/// Partitions decoded ahead before the order of the first is decided (see [`settle`]).
const LOOKAHEAD: usize = 8;

fn order_problem(
    pos: u64,
    key: &[u8],
    ord: Option<Ordering>,
    outlier: bool,
    mode: Mode,
    scanner: &Scanner<'_>,
) -> Problem {
    let action = match mode {
        Mode::Skip => ": dropped",
        Mode::Segregate => ": written to the segregated output",
        _ => "",
    };
    let what = if outlier {
        "partition key sorts after the partitions that follow it (damaged key?)"
    } else if ord == Some(Ordering::Equal) {
        "duplicate partition key"
    } else {
        "partition out of order (token/key not after the previous partition's)"
    };
    Problem::new(
        ProblemClass::PartitionOrder,
        Component::Data,
        pos,
        format!("{what}{action}"),
    )
    .chunk(scanner.chunk_of(pos))
    .key(key)
}

/// The finding for atoms found between a partition's end marker and the
/// next partition (legacy format; CASSANDRA-10791: 2.1 wrote range
/// tombstones after the end marker).
fn fragment_problem(pos: u64, end: u64, key: &[u8], mode: Mode, scanner: &Scanner<'_>) -> Problem {
    let action = match mode {
        Mode::Skip => ": dropped",
        Mode::Segregate => ": written to the segregated output",
        _ => "",
    };
    Problem::new(
        ProblemClass::PartitionOrder,
        Component::Data,
        pos,
        format!(
            "row fragment detected after END_OF_ROW ({} bytes of atoms of the previous \
             partition, CASSANDRA-10791){action}",
            end - pos
        ),
    )
    .chunk(scanner.chunk_of(pos))
    .key(key)
}

/// Decide the first queued partition: in order (main output), or out of
/// order — below the last accepted key, or an outlier above most of the
/// partitions queued after it (a damaged key that sorts too high would
/// otherwise make every later partition look out of order) — dropped
/// (skip) or segregated; then hand it to the sink.
#[allow(clippy::too_many_arguments)]
fn settle(
    queue: &mut VecDeque<(u64, Decoded)>,
    checker: &mut DataChecker,
    reader: &mut ScanReader<'_>,
    sink: &mut Option<&mut dyn SalvageSink>,
    info: &ScrubInfo<'_>,
    opts: &Options,
    scanner: &Scanner<'_>,
    report: &mut Report,
) -> Result<()> {
    let Some((pos, d)) = queue.pop_front() else {
        return Ok(());
    };
    if d.fragment {
        // Not a partition: kept apart like an out-of-order one (C\* writes
        // these to its out-of-order sstable).
        report
            .problems
            .push(fragment_problem(pos, d.end, &d.key, opts.mode, scanner));
        let target = match opts.mode {
            Mode::Segregate => Some(Target::Segregated),
            _ => None,
        };
        match target {
            Some(_) => report.segregated += 1,
            None => report.dropped += 1,
        }
        if let (Some(s), Some(t)) = (sink.as_deref_mut(), target) {
            reader.seek_fragment(&d.key, DataPos(pos), DataPos(d.end))?;
            let mut src = Salvaged {
                reader,
                drop: &d.drop,
                end_byte: d.end,
                done: false,
            };
            s.partition(info, t, &mut src).map_err(Error::from)?;
        }
        return Ok(());
    }
    let part = checker.partitioner().clone();
    let ord = checker.order_of(&d.key);
    let above_last = |k: &[u8]| {
        checker
            .last_key()
            .is_none_or(|l| part.compare_decorated(l, k) == Ordering::Less)
    };
    let mut target = Some(Target::Main);
    let mut outlier = false;
    if matches!(ord, None | Some(Ordering::Less)) {
        let followers: Vec<&Decoded> = queue
            .iter()
            .map(|q| &q.1)
            .filter(|q| !q.fragment && above_last(&q.key))
            .collect();
        let below = followers
            .iter()
            .filter(|q| part.compare_decorated(&q.key, &d.key) != Ordering::Greater)
            .count();
        if !followers.is_empty() && 2 * below > followers.len() {
            outlier = true;
        }
    }
    if outlier || !matches!(ord, None | Some(Ordering::Less)) {
        report
            .problems
            .push(order_problem(pos, &d.key, ord, outlier, opts.mode, scanner));
        target = match opts.mode {
            Mode::Segregate => Some(Target::Segregated),
            _ => None,
        };
    } else {
        checker.set_last_key(&d.key);
    }
    match target {
        Some(Target::Main) => report.salvaged += 1,
        Some(Target::Segregated) => report.segregated += 1,
        None => report.dropped += 1,
    }
    if let (Some(s), Some(t)) = (sink.as_deref_mut(), target) {
        reader.seek_partition(DataPos(pos))?;
        let end_byte = d.end - reader.end_marker_len();
        let mut src = Salvaged {
            reader,
            drop: &d.drop,
            end_byte,
            done: false,
        };
        s.partition(info, t, &mut src).map_err(Error::from)?;
    }
    Ok(())
}

/// Scrub `sst`: scan Data.db without the index, check, and (modes `Skip`
/// and `Segregate`) hand what decodes to `sink`. `progress(pos, len)` is
/// called with the uncompressed position as the scan advances.
///
/// Fails when Data.db cannot be opened at all: missing Data.db or
/// Statistics.db, a pre-3.0 `ka`/`la` sstable without an attached table
/// schema ([`Sstable::set_table_schema`]), or an unreadable
/// CompressionInfo.db.
pub fn scrub(
    sst: &Sstable,
    opts: &Options,
    mut sink: Option<&mut dyn SalvageSink>,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Report> {
    let features = sst.features();
    let st_bytes = sst.read_component(Component::Statistics)?;
    let st = Statistics::parse_lenient(&st_bytes, features)
        .map_err(|e| e.in_file(&sst.path(Component::Statistics)))?;
    // ka/la: synthesized from the attached table schema (an error without).
    let header = &sst.data_header(&st)?;
    let partitioner = partitioner_of(&st);
    let mut report = Report {
        problems: Problems::with_max(opts.max_problems),
        ..Report::default()
    };
    statistics_problems(&st, &mut report.problems);
    let chunk_len = chunk_length(sst);
    let mut reader = ScanReader::with_options(sst, header, opts.reader)?;
    let probe_opts = ReaderOptions {
        max_unfiltered_size: opts.probe_window,
        ..opts.reader
    };
    let data_len = reader.data_len();
    report.data_len = data_len;
    let mut scanner = Scanner {
        sst,
        header,
        partitioner: partitioner.clone(),
        opts: *opts,
        probe: ScanReader::with_options(sst, header, probe_opts)?,
        scan: DataSource::open(sst)?,
        plausible: Plausible {
            features,
            key_type: header.partition_key_type.clone(),
            key_fixed: header.partition_key_type.fixed_len(),
            has_static: !header.static_columns.is_empty(),
            legacy: features.legacy_cells,
        },
        chunk_len,
        hints: if opts.index_hints {
            Hints::read(sst)
        } else {
            None
        },
        budget: data_len.saturating_mul(4).saturating_add(64 << 20),
        attempts: 0,
    };
    let _ = scanner.sst;
    let info = ScrubInfo {
        header,
        partitioner: &partitioner,
        data_len,
    };
    let writing = matches!(opts.mode, Mode::Skip | Mode::Segregate);
    if let Some(s) = sink.as_deref_mut() {
        s.begin(&info).map_err(Error::from)?;
    }
    let mut checker = DataChecker::new(header, partitioner.clone(), chunk_len);
    let mut pos = 0u64;
    let mut main_budget = u64::MAX;
    let mut queue: VecDeque<(u64, Decoded)> = VecDeque::new();
    while pos < data_len {
        progress(pos, data_len);
        let before = report.problems.total();
        match decode_partition(
            &mut reader,
            &mut checker,
            pos,
            None,
            &mut report.problems,
            &mut main_budget,
        ) {
            Ok(d) => {
                let next = d.end;
                let key = reader.is_legacy().then(|| d.key.clone());
                if writing {
                    queue.push_back((pos, d));
                    while queue.len() > LOOKAHEAD {
                        settle(
                            &mut queue,
                            &mut checker,
                            &mut reader,
                            &mut sink,
                            &info,
                            opts,
                            &scanner,
                            &mut report,
                        )?;
                    }
                } else {
                    let ord = checker.order_of(&d.key);
                    if !matches!(ord, None | Some(Ordering::Less)) {
                        report
                            .problems
                            .push(order_problem(pos, &d.key, ord, false, opts.mode, &scanner));
                    }
                    checker.set_last_key(&d.key);
                    report.salvaged += 1;
                }
                pos = next;
                // CASSANDRA-10791: atoms between this partition's end marker
                // and the next indexed partition belong to this partition
                // (C\* 2.1 `Scrubber`; needs Index.db, as there).
                let frag_end = match (&key, &scanner.hints) {
                    (Some(_), Some(h)) => Some(h.next_at_or_after(pos).unwrap_or(data_len)),
                    _ => None,
                };
                if let (Some(k), Some(fend)) = (key, frag_end.filter(|e| *e > pos)) {
                    let mut scratch = Problems::with_max(16);
                    let mut fchecker = DataChecker::new(header, partitioner.clone(), chunk_len);
                    if let Ok(fd) = decode_partition(
                        &mut reader,
                        &mut fchecker,
                        pos,
                        Some((&k, fend)),
                        &mut scratch,
                        &mut main_budget,
                    ) {
                        if writing {
                            queue.push_back((pos, fd));
                        } else {
                            report
                                .problems
                                .push(fragment_problem(pos, fend, &k, opts.mode, &scanner));
                        }
                        pos = fend;
                    }
                }
            }
            Err(f) => {
                let off = f.error.offset.unwrap_or(pos);
                let mut p = Problem::from_error(&f.error, Component::Data, off);
                if p.chunk.is_none() {
                    p.chunk = scanner.chunk_of(off);
                }
                if let Some(k) = &f.key {
                    p = p.key(k);
                }
                report.problems.push(p);
                if opts.mode == Mode::Abort {
                    report.aborted = true;
                    break;
                }
                report.resyncs += 1;
                let next = scanner.resync(pos, &f.error);
                let end = next.unwrap_or(data_len);
                let range = pos..end;
                let mut keys: Vec<Vec<u8>> = f.key.iter().cloned().collect();
                if let Some(h) = &scanner.hints {
                    for k in h.keys_in(&range, 1000) {
                        if !keys.contains(&k) {
                            keys.push(k);
                        }
                    }
                }
                let mut lost = Problem::new(
                    ProblemClass::DataLost,
                    Component::Data,
                    pos,
                    format!(
                        "{} bytes of Data.db {} ({} partition key(s) known){}",
                        end - pos,
                        if writing { "skipped" } else { "cannot be read" },
                        keys.len(),
                        if next.is_some() {
                            format!("; resynchronised at {end:#x}")
                        } else {
                            "; no decodable partition after it".into()
                        }
                    ),
                )
                .chunk(scanner.chunk_of(pos));
                lost.end = Some(end);
                if let Some(k) = keys.first() {
                    lost.partition_key = Some(k.clone());
                }
                lost.lost_keys = keys.iter().skip(1).cloned().collect();
                report.problems.push(lost);
                report.lost_bytes += end - pos;
                report.lost_ranges.push(range.clone());
                if let Some(s) = sink.as_deref_mut() {
                    s.lost(range, &keys).map_err(Error::from)?;
                }
                match next {
                    Some(n) => pos = n,
                    None => break,
                }
            }
        }
        if opts.mode == Mode::Abort && report.problems.total() > before {
            report.aborted = true;
            break;
        }
    }
    while !queue.is_empty() {
        settle(
            &mut queue,
            &mut checker,
            &mut reader,
            &mut sink,
            &info,
            opts,
            &scanner,
            &mut report,
        )?;
    }
    progress(pos.min(data_len), data_len);
    report.partitions = checker.partitions;
    report.rows = checker.rows;
    report.static_rows = checker.static_rows;
    report.markers = checker.markers;
    report.attempts = scanner.attempts;
    if let Some(s) = sink {
        s.end(&report).map_err(Error::from)?;
    }
    Ok(report)
}
