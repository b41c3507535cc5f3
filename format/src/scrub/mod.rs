//! The index-less scanner behind `sstkit scrub`: walks Data.db alone, from
//! its first byte, checks everything it decodes (the checks of
//! [`crate::validate::DataChecker`]), and on corruption resynchronises at the
//! next decodable partition.
//!
//! # Resynchronisation
//!
//! When the partition starting at `p` fails to decode, or decodes but cannot
//! be trusted, scrub looks for the next partition start:
//!
//! * **Through the index.** When Index.db (BIG) or Partitions.db (BTI) is
//!   present and intact (see the `starts` module), only its positions are tried, as
//!   Cassandra's scrub does: the next indexed partition that decodes is where
//!   the scan goes on. No byte is taken for a partition start on a guess.
//! * **Without it**, every later byte is a candidate, scanned forward from
//!   `p + 1` (from the end of an unreadable chunk: chunk boundaries are where
//!   decompression restarts). A candidate must look like a partition header
//!   (key length within the data and plausible for the key type, a
//!   plausible deletion time, a first unfiltered whose flags fit the table),
//!   its key must decode with the header's key type, sort after the last
//!   partition accepted, and be one the bloom filter (when present) may
//!   hold; it is then confirmed by decoding the whole partition, with every
//!   `prev_unfiltered_size` right. Positions of a damaged index are tried
//!   first, under the same checks.
//!
//! # Checksums
//!
//! Compressed chunks are checked as they are read. For an uncompressed
//! Data.db with CRC.db, the chunk checksums are checked before the scan. A
//! partition whose bytes overlap a chunk that failed its checksum is never
//! salvaged, even when it decodes: it is reported lost (`skip`), or written
//! to the damaged output (`segregate`), and the scan resynchronises after
//! the chunk. When every chunk passes but the whole-file digest fails
//! (chunks in the wrong place), scrub is *on guard*: with a trusted index,
//! only partitions that start, key and end where the index says are
//! salvaged.
//!
//! # Metadata that disagrees with the data
//!
//! A partition whose key does not decode as the header's key type, or with
//! a value its column's type rules out (the `fit` module), is not salvaged:
//! the serialization header does not describe this Data.db. A partition
//! that disagrees with a trusted index is not salvaged either when Data.db
//! holds the index's keys at the index's positions; only when it does not
//! is the index taken for another file's and no longer trusted. No
//! partition at all is salvaged with a serialization header that fails its
//! checksum, or from a Statistics.db written for another sstable (its
//! partition count or compression ratio is not this sstable's: the
//! `foreign` module): such a header shifts every timestamp and deletion
//! time, which no type check can see. Timestamps show it: a partition that
//! decodes to one outside the range Statistics.db records is not salvaged,
//! and when one in checked bytes does, or when every partition decoded and
//! the extremes are not the recorded ones, what was salvaged is withdrawn
//! at the end ([`Report::withdrawn`]).
//!
//! # Bounds
//!
//! Work is bounded by a linear budget: confirmation decodes read at most
//! twice the data length (plus 1 MiB), each attempt costing at least
//! [`MIN_ATTEMPT_COST`] bytes, and at most [`Options::max_attempts`]
//! confirmations per resynchronisation; each confirmation reads with a
//! window of [`Options::probe_window`] bytes. Past the budget only index
//! positions are tried. [`Report::probe_bytes`] says what the
//! confirmations cost.
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
//!   segregated output instead of being dropped, and partitions over a chunk
//!   that failed its checksum to the damaged output.
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
//! # Threads
//!
//! In mode `Validate`, with [`Options::threads`] above 1, Data.db is cut
//! into units at the positions the index's first pass reads, and each unit
//! is walked on a thread (the `parallel` module); a unit's walk stops at
//! the first partition whose verdict may depend on what came before it,
//! which the calling thread settles as one walk does. The report is the
//! one walk's. The modes that write read on one thread.
//!
//! Output goes to a [`SalvageSink`]; a partition is handed to the sink only
//! after it decoded completely (it is decoded a second time while the sink
//! pulls its fragments), so a sink never sees a partial partition.

use std::cmp::Ordering;
use std::collections::VecDeque;
use std::ops::Range;

use crate::analytics::PartitionStats;
use crate::component::Component;
use crate::data::{DataPos, DataSource, Fragment, ReaderOptions, ScanReader};
use crate::error::{Error, ErrorKind, Result};
use crate::filter::BloomFilter;
use crate::sstable::Sstable;
use crate::statistics::{SerializationHeader, Statistics};
use crate::types::CqlType;
use crate::validate::{
    chunk_length, partitioner_of, statistics_problems, Cuts, DataChecker, Problem, ProblemClass,
    Problems, Verdict, UNIT_BYTES,
};
use crate::version::Features;

mod chunks;
mod fit;
mod foreign;
mod parallel;
mod resync;
mod starts;
mod typed;
mod walk;

use chunks::{bad_chunks, rebuilt_problems, Chunks};
use foreign::{untrusted_header, Timestamps};
use resync::Scanner;
pub use resync::MIN_ATTEMPT_COST;
use starts::Starts;
use typed::typed_header;
pub use typed::{header, statistics};
use walk::{Ctx, Walk};

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
    /// Partitions that decoded but overlap a chunk that failed its
    /// checksum (segregate mode): their content cannot be trusted.
    Damaged,
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
    /// Resynchronise through the partition index (Index.db, Partitions.db)
    /// when it is readable.
    pub index_hints: bool,
    /// `Skip`: hand out-of-order partitions to the sink as
    /// [`Target::Segregated`] (counted in [`Report::segregated`]) instead
    /// of dropping them, for a sink that sorts them back in (the sstable
    /// writer's [`crate::write::salvage::SalvageWriter`]).
    pub keep_out_of_order: bool,
    /// The chunk length of a compressed Data.db whose CompressionInfo.db is
    /// lost, when the operator knows it (else it is learned from the chunks,
    /// see [`crate::chunk_walk::rebuild`]).
    pub chunk_length: Option<u32>,
    /// Threads decoding Data.db in mode `Validate` (1: one walk). With
    /// more, it is cut into units of whole partitions at the index's
    /// positions, each walked on a thread, and the report is the one walk's.
    /// The modes that write read on one thread.
    pub threads: usize,
    /// Uncompressed Data.db bytes of a unit, about.
    pub unit_bytes: u64,
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
            keep_out_of_order: false,
            chunk_length: None,
            threads: 1,
            unit_bytes: UNIT_BYTES,
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
    /// After the last partition. When `report.withdrawn` is not 0, every
    /// partition handed over is withdrawn: the sink's outputs hold none.
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
    /// Clustered rows of the salvaged partitions: written to the main
    /// output, or (nothing written) those it would hold.
    pub salvaged_rows: u64,
    /// Partitions the partition index lists (`None` without a readable one).
    pub index_partitions: Option<u64>,
    /// Partitions written to no output: those starting in a lost range (as
    /// the index counts them, else the one whose decoding failed), those
    /// past the end of Data.db, and those dropped as out of order. With an
    /// index and no out-of-order partition, `salvaged + segregated +
    /// lost_partitions` is `index_partitions`.
    pub lost_partitions: u64,
    /// The keys of the lost partitions that are known, at most
    /// [`MAX_LOST_KEYS`].
    pub lost_keys: Vec<Vec<u8>>,
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
    /// Partitions handed to the sink, then withdrawn when Statistics.db
    /// proved to be another sstable's at the end of the scan (they count as
    /// lost; a sink discards its output when this is not 0).
    pub withdrawn: u64,
    /// Partitions that decoded but overlap a chunk that failed its checksum:
    /// reported lost (skip) or written to the damaged output (segregate).
    pub damaged: u64,
    /// True when the partition index was intact and agreed with the data to
    /// the end: resynchronisation went through it alone.
    pub index_resync: bool,
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
    /// Bytes those confirmations decoded (each attempt counted as at least
    /// [`MIN_ATTEMPT_COST`]).
    pub probe_bytes: u64,
    /// Units of Data.db walked on other threads and joined to the walk
    /// ([`Options::threads`]; 0 when one walk read it all).
    pub threaded_units: u64,
}

impl Report {
    /// True when nothing was found.
    pub fn valid(&self) -> bool {
        self.problems.is_empty()
    }
}

/// The lost partition keys a [`Report`] lists at most.
pub const MAX_LOST_KEYS: usize = 1000;

impl Report {
    fn lose_keys(&mut self, keys: &[Vec<u8>]) {
        for k in keys {
            if self.lost_keys.len() >= MAX_LOST_KEYS {
                break;
            }
            if !self.lost_keys.contains(k) {
                self.lost_keys.push(k.clone());
            }
        }
    }
}

/// A partition that decoded.
struct Decoded {
    key: Vec<u8>,
    end: u64,
    /// Its clustered rows that are salvaged (not dropped as out of order).
    rows: u64,
    /// A fragment of the previous partition found after its end marker
    /// (legacy format, CASSANDRA-10791), not a partition.
    fragment: bool,
    /// Positions of fragments left out when salvaging (out of order).
    drop: Vec<u64>,
    /// The first value that does not fit its column's type: where, and why.
    misfit: Option<(u64, String)>,
    /// Its smallest and largest write or deletion timestamp stored as a
    /// delta from the serialization header's base (all but the partition
    /// deletion's).
    timestamps: Option<(i64, i64)>,
    /// Its partition deletion's timestamp (stored whole), when deleted.
    deleted_at: Option<i64>,
    /// Its smallest and largest local deletion or expiration time stored
    /// as a delta (all but the partition deletion's).
    deletion_times: Option<(i64, i64)>,
    /// Its partition deletion's local deletion time (stored whole).
    deleted_ldt: Option<i64>,
}

/// A partition that failed.
struct Failed {
    error: Box<Error>,
    key: Option<Vec<u8>>,
}

/// Decode the partition at `pos` with `reader`, checking it with `checker`;
/// with `fragment = Some((key, end))`, the atoms in `[pos, end)` as a
/// fragment of partition `key` (legacy format, [`ScanReader::seek_fragment`]).
/// `strict` (confirming a candidate) fails at the first size mismatch.
fn decode_partition(
    reader: &mut ScanReader<'_>,
    checker: &mut DataChecker,
    pos: u64,
    fragment: Option<(&[u8], u64)>,
    out: &mut Problems,
    budget: &mut u64,
    strict: bool,
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
    let (key, deleted) = match reader.next_fragment() {
        Ok(Some(Fragment::PartitionStart { key, deletion, .. })) => {
            let k = key.to_vec();
            checker.partition_start(&k, &deletion, pos, false, out);
            (k, (!deletion.is_live()).then_some(deletion))
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
    let mut stamps = PartitionStats::default();
    let mut drop = Vec::new();
    let mut rows = 0u64;
    let mut misfit = None;
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
                if misfit.is_none() {
                    misfit = fit::fragment_misfit(&f);
                }
                stamps.add(&f, 0);
                if checker.fragment(&f, out) != Verdict::Ok {
                    drop.push(at);
                } else if matches!(f, Fragment::Row(_)) {
                    rows += 1;
                }
                // A candidate whose sizes disagree is not a partition: stop
                // at once rather than decode the rest of the garbage.
                if strict && !reader.findings().is_empty() {
                    checker.abort_partition();
                    reader.take_findings();
                    *budget = budget.saturating_sub(reader.position().0.saturating_sub(pos));
                    return Err(fail(
                        Error::at(
                            ErrorKind::BadValue("previous unfiltered size mismatch".into()),
                            Component::Data,
                            at,
                            "candidate partition",
                        ),
                        Some(key),
                    ));
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
        rows,
        fragment: fragment.is_some(),
        drop,
        misfit,
        timestamps: stamps.min_timestamp.zip(stamps.max_timestamp),
        deleted_at: deleted.map(|d| d.marked_for_delete_at),
        deletion_times: stamps.deletion_times,
        deleted_ldt: deleted.map(|d| d.local_deletion_time),
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

/// Partitions decoded ahead before the order of the first is decided (see [`settle`]).
const LOOKAHEAD: usize = 8;

/// What happens to a partition out of order, for its finding's message.
fn action_on_disorder(opts: &Options) -> &'static str {
    match opts.mode {
        Mode::Skip if opts.keep_out_of_order => ": sorted back in",
        Mode::Skip => ": dropped",
        Mode::Segregate => ": written to the segregated output",
        _ => "",
    }
}

fn order_problem(
    pos: u64,
    key: &[u8],
    ord: Option<Ordering>,
    outlier: bool,
    opts: &Options,
    scanner: &Scanner<'_>,
) -> Problem {
    let action = action_on_disorder(opts);
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
fn fragment_problem(
    pos: u64,
    end: u64,
    key: &[u8],
    opts: &Options,
    scanner: &Scanner<'_>,
) -> Problem {
    let action = action_on_disorder(opts);
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
            .push(fragment_problem(pos, d.end, &d.key, opts, scanner));
        let target = match opts.mode {
            Mode::Segregate => Some(Target::Segregated),
            Mode::Skip if opts.keep_out_of_order => Some(Target::Segregated),
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
            .push(order_problem(pos, &d.key, ord, outlier, opts, scanner));
        target = match opts.mode {
            Mode::Segregate => Some(Target::Segregated),
            Mode::Skip if opts.keep_out_of_order => Some(Target::Segregated),
            _ => None,
        };
    } else {
        checker.set_last_key(&d.key);
    }
    match target {
        Some(Target::Main) => {
            report.salvaged += 1;
            report.salvaged_rows += d.rows;
        }
        Some(Target::Segregated | Target::Damaged) => report.segregated += 1,
        None => {
            report.dropped += 1;
            report.lost_partitions += 1;
            report.lose_keys(std::slice::from_ref(&d.key));
        }
    }
    if let (Some(s), Some(t)) = (sink.as_deref_mut(), target) {
        hand_over(reader, s, info, t, pos, &d)?;
    }
    Ok(())
}

/// Re-read the decoded partition `d` at `pos` and hand it to `sink`'s `target`.
fn hand_over(
    reader: &mut ScanReader<'_>,
    sink: &mut dyn SalvageSink,
    info: &ScrubInfo<'_>,
    target: Target,
    pos: u64,
    d: &Decoded,
) -> Result<()> {
    reader.seek_partition(DataPos(pos))?;
    let end_byte = d.end - reader.end_marker_len();
    let mut src = Salvaged {
        reader,
        drop: &d.drop,
        end_byte,
        done: false,
    };
    sink.partition(info, target, &mut src).map_err(Error::from)
}

/// Scrub `sst`: scan Data.db without the index, check, and (modes `Skip`
/// and `Segregate`) hand what decodes to `sink`. `progress(pos, len)` is
/// called with the uncompressed position as the scan advances.
///
/// Fails when Data.db cannot be opened at all: missing Data.db or
/// Statistics.db, a pre-3.0 `ka`/`la` sstable without an attached table
/// schema ([`Sstable::set_table_schema`]), or a compressed Data.db whose
/// CompressionInfo.db is lost and cannot be rebuilt
/// ([`Sstable::rebuild_compression_info`]: not even its first chunk is found).
pub fn scrub(
    sst: &Sstable,
    opts: &Options,
    mut sink: Option<&mut dyn SalvageSink>,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Report> {
    let features = sst.features();
    let st = statistics(sst)?;
    let typed = typed_header(sst, &st)?;
    let header = &typed.header;
    let partitioner = partitioner_of(&st);
    let mut report = Report {
        problems: Problems::with_max(opts.max_problems),
        ..Report::default()
    };
    statistics_problems(&st, &mut report.problems);
    for (class, m) in &typed.findings {
        (report.problems).push(Problem::new(*class, Component::Statistics, 0, m.clone()));
    }
    // A compressed Data.db is never read raw: a lost CompressionInfo.db is
    // rebuilt from the chunks' own checksums before anything reads it.
    if let Some(r) = sst.rebuild_compression_info(opts.chunk_length)? {
        rebuilt_problems(sst, &r, &mut report.problems);
    }
    // Before anything opens Data.db: walked chunk offsets may replace the stored ones.
    let Chunks {
        bad,
        verified,
        guard,
        intact,
        disowned,
        covered,
    } = bad_chunks(sst, &mut report.problems);
    let chunk_len = chunk_length(sst);
    let reader = ScanReader::with_options(sst, header, opts.reader)?;
    let data_len = reader.data_len();
    report.data_len = data_len;
    // Where several threads may cut Data.db, from the index's first pass.
    let threaded =
        opts.threads > 1 && opts.mode == Mode::Validate && sink.is_none() && !features.legacy_cells;
    let mut cuts = threaded.then(|| Cuts::new(opts.unit_bytes));
    let starts = if opts.index_hints {
        Starts::read(sst, &partitioner, data_len, cuts.as_mut())
    } else {
        None
    };
    let mut scanner = Scanner::open(
        sst,
        header,
        &partitioner,
        opts,
        chunk_len,
        starts,
        bad,
        guard,
    )?;
    if let Some(s) = scanner.starts.as_ref().filter(|s| s.unlisted > 0) {
        let component = if features.trie_index {
            Component::Partitions
        } else {
            Component::Index
        };
        report.problems.push(Problem::new(
            ProblemClass::IndexMismatch,
            component,
            0,
            format!(
                "the index's partition positions are out of order and it has more than {} \
                 entries: the other {} give no resynchronisation hints",
                starts::MAX_LISTED,
                s.unlisted
            ),
        ));
    }
    let untrusted = untrusted_header(sst, &st, &typed, &mut scanner, intact, disowned);
    let stamps = Timestamps::new(&st, features, covered, typed.lost);
    if let Some((class, m)) = &untrusted {
        report
            .problems
            .push(Problem::new(*class, Component::Statistics, 0, m.clone()));
    }
    let info = ScrubInfo {
        header,
        partitioner: &partitioner,
        data_len,
    };
    if let Some(s) = sink.as_deref_mut() {
        s.begin(&info).map_err(Error::from)?;
    }
    let cx = Ctx {
        header,
        partitioner: &partitioner,
        chunk_len,
        opts,
        info: &info,
        verified,
        untrusted: untrusted.is_some(),
        writing: matches!(opts.mode, Mode::Skip | Mode::Segregate),
    };
    // Every partition of an untrusted header is lost, on the calling thread.
    let units = cuts
        .filter(|_| untrusted.is_none())
        .and_then(|c| c.units(data_len));
    let mut w = Walk::new(&cx, reader, scanner, stamps, report, 0);
    match units {
        Some(units) => parallel::walk(sst, &cx, &mut w, &units, opts.threads, progress)?,
        None => w.run_until(&cx, &mut sink, data_len, progress)?,
    }
    w.drain(&cx, &mut sink)?;
    progress(w.pos.min(data_len), data_len);
    let Walk {
        scanner,
        checker,
        stamps,
        mut report,
        ..
    } = w;
    let complete = !report.aborted && report.lost_ranges.is_empty() && report.damaged == 0;
    if let Some(why) = stamps.verdict(complete).filter(|_| untrusted.is_none()) {
        withdraw(&mut report, &scanner, why);
    }
    if let Some(h) = &scanner.starts {
        report.index_partitions = Some(h.count());
        // Partitions the index places at or past the end of Data.db (a cut file).
        let past = data_len..u64::MAX;
        report.lost_partitions += h.count_in(&past);
        let keys = h.keys_in(&past, MAX_LOST_KEYS);
        report.lose_keys(&keys);
    }
    report.partitions = checker.partitions;
    report.rows = checker.rows;
    report.static_rows = checker.static_rows;
    report.markers = checker.markers;
    report.attempts = scanner.attempts;
    report.probe_bytes = scanner.probe_bytes;
    report.index_resync = scanner.trusted_index();
    if let Some(s) = sink {
        s.end(&report).map_err(Error::from)?;
    }
    Ok(report)
}

/// Statistics.db proved, once the scan was over, not to be this Data.db's
/// (see [`Timestamps`]): what was salvaged was decoded with its header, so
/// it is withdrawn (the sink discards it on [`SalvageSink::end`]) and every
/// partition counts as lost.
fn withdraw(report: &mut Report, scanner: &Scanner<'_>, why: String) {
    report.withdrawn = report.salvaged + report.segregated;
    let withdrawn = match report.withdrawn {
        0 => String::new(),
        n => format!(" ({n} withdrawn)"),
    };
    report.problems.push(Problem::new(
        ProblemClass::MetadataMismatch,
        Component::Statistics,
        0,
        format!(
            "Statistics.db was written for another sstable: {why}; no partition decoded with \
             its serialization header is salvaged{withdrawn}"
        ),
    ));
    if report.withdrawn == 0 {
        return;
    }
    report.lost_partitions += report.withdrawn;
    report.salvaged = 0;
    report.segregated = 0;
    report.salvaged_rows = 0;
    if let Some(h) = &scanner.starts {
        let keys = h.keys_in(&(0..report.data_len), MAX_LOST_KEYS);
        report.lose_keys(&keys);
    }
    report.lost_bytes = report.data_len;
    report.lost_ranges.clear();
    report.lost_ranges.push(0..report.data_len);
}

/// Why a partition that decoded is not salvaged.
enum Judged {
    /// It overlaps these bytes, whose chunk failed its checksum.
    Damaged(Range<u64>),
    /// It contradicts an intact index (and Data.db has no checksums to
    /// vouch for it).
    Mismatch(String),
}

/// Whether the partition `d` decoded at `pos` can be salvaged. A partition
/// decoded with an `untrusted` header (see the `foreign` module), whose
/// key or values do not fit the header's types (see the `fit` module), or
/// whose timestamps fall outside the range Statistics.db records
/// ([`Timestamps`], which it tells when the partition passes the other
/// checks), is not. `verified`:
/// every byte of Data.db is covered by a checksum that was checked, and the
/// whole-file digest (when there is one) matched.
///
/// A partition that disagrees with a trusted index (it starts where the
/// index knows no partition, its key differs, or it ends elsewhere than
/// where the index puts the next one) is not salvaged when Data.db's bytes
/// hold the index's keys at the index's positions: the index describes
/// this Data.db, so the partition was decoded wrong (a serialization
/// header that does not fit the data, chunks in the wrong place). When
/// they do not, and the bytes vouch for themselves (checksummed, or the
/// first partition), the index is another file's: it is no longer trusted.
fn judge(
    scanner: &mut Scanner<'_>,
    stamps: &mut Timestamps,
    verified: bool,
    pos: u64,
    d: &Decoded,
    header: &SerializationHeader,
    untrusted: bool,
) -> Option<Judged> {
    if let Some(b) = scanner.bad_overlap(&(pos..d.end)) {
        return Some(Judged::Damaged(b));
    }
    if untrusted {
        return Some(Judged::Mismatch(
            "decoded with a serialization header that cannot be trusted (see the Statistics.db \
             finding)"
                .into(),
        ));
    }
    let shifted = stamps.partition(
        (d.timestamps, d.deleted_at),
        (d.deletion_times, d.deleted_ldt),
    );
    let misfit = fit::key_misfit(header, &d.key)
        .or_else(|| d.misfit.as_ref().map(|(at, m)| format!("at {at:#x}: {m}")));
    if let Some(m) = misfit {
        return Some(Judged::Mismatch(m));
    }
    // Timestamps out of range in a partition that passes every other check
    // (on guard, one that agrees with the index) indict the header.
    let mut out_of_range = |vouched: bool| {
        let why = shifted.clone()?;
        stamps.indict(pos, &why, vouched);
        Some(Judged::Mismatch(why))
    };
    let data_len = scanner.scan.data_len();
    let Some(starts) = scanner.starts.as_ref().filter(|s| s.trusted) else {
        return out_of_range(!scanner.guard);
    };
    let next = starts.next_at_or_after(pos + 1).unwrap_or(data_len);
    // Legacy partitions may be followed by atoms of their own (CASSANDRA-10791).
    let legacy = scanner.plausible.legacy;
    let msg = if !starts.is_start(pos) {
        "the index knows no partition starting here".to_string()
    } else if !starts.key_agrees(pos, &d.key) {
        "the partition key differs from the index's".to_string()
    } else if d.end > next || (d.end < next && !legacy) {
        format!(
            "the partition ends at {:#x}, the index puts the next one at {next:#x}",
            d.end
        )
    } else {
        return out_of_range(true);
    };
    // On guard (the digest failed), the bytes vouch for nothing: the index decides.
    if (verified || pos == 0) && !scanner.guard && !scanner.index_holds_bytes(pos, next) {
        scanner.distrust_index();
        return out_of_range(true);
    }
    Some(Judged::Mismatch(msg))
}

/// The bloom filter, when Filter.db is present, decodes and may hold every
/// key of `known` (keys of the index) under some layout.
fn read_filter(sst: &Sstable, known: &[&[u8]]) -> Option<BloomFilter> {
    if !sst.has(Component::Filter) {
        return None;
    }
    let b = sst.read_component(Component::Filter).ok()?;
    BloomFilter::parse(&b, &sst.features()).ok()?.fitted(known)
}
