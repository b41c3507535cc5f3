//! Full structural validation of an sstable with its index: the engine of
//! `sstkit validate`.
//!
//! Checks (each finding is a [`Problem`] with a stable [`ProblemClass`]):
//!
//! | class | check |
//! |---|---|
//! | `partition_order` | partitions strictly increasing by (token, key bytes); in Data.db, and in Index.db |
//! | `clustering_order` | rows and markers strictly increasing under the table's clustering comparator ([`crate::compare`]) |
//! | `rt_unclosed`, `rt_not_opened`, `rt_mismatch` | range tombstone bounds open and close in pairs with the same deletion |
//! | `prev_size_mismatch` | every `prev_unfiltered_size` (reader finding) |
//! | `row_size_mismatch` | `row_size` / `marker_size` against the body (reader error) |
//! | `invalid_deletion` | negative local deletion times, TTL overflow |
//! | `index_mismatch` | each Index.db entry points at the partition with its key; one entry per partition |
//! | `promoted_index_mismatch` | header length, deletion, block offsets, first/last clustering, widths, open markers |
//! | `summary_mismatch` | Summary.db entries point at Index.db entries with their key; first/last key; sampling |
//! | `metadata_mismatch` | Statistics.db first/last key (`nc`+), partition count (partition size histogram), row count |
//! | `bloom_filter_miss` | every partition key passes Filter.db |
//! | `checksum` | compressed chunk checksums met while reading; Statistics.db checksums |
//! | `decode_error` | anything that does not decode |
//! | `missing_component`, `unlisted_component` (a note) | the files TOC.txt lists exist; files it does not list |
//! | `bad_chunk`, `digest_mismatch`, ... | the checksum pass of [`crate::checksums`] ([`Options::checksums`]) |
//!
//! Reading: Statistics.db and Filter.db whole (one read each), Index.db and
//! Summary.db whole through a read-only map ([`crate::io::IoLayer::map_all`]:
//! page cache, not a heap copy), Data.db once sequentially through
//! [`crate::data::ScanReader`] (with [`Options::threads`], in units of
//! whole partitions on threads of their own, a large partition in parts
//! at its row-index blocks, joined in order: `parallel`, `parts`; cut at
//! Summary.db's samples, the Index.db pre-pass runs beside the walk).
//! When a partition fails to decode, the walk
//! continues at the next partition the index names (without an index it
//! stops there: `scrub` resynchronises without one).
//!
//! Pre-3.0 (`jb`, `ka`, `la`, `lb`) Data.db is decoded with the table schema
//! attached by [`crate::sstable::Sstable::set_table_schema`] (`--schema`);
//! without one, the checks that need no decoding run (components,
//! checksums, Index.db, Summary.db, Filter.db against the Index.db keys,
//! the partition count) and the others are recorded as not done, with why
//! ([`Report::skipped`]).

mod bti;
pub mod data;
pub mod fuzz;
mod index;
mod parallel;
mod parts;
pub mod problem;
mod promoted;
mod walk;

pub use crate::compare::{compare_value, ClusteringComparator, OwnedPrefix, PrefixLike};
pub use data::{DataChecker, Verdict};
pub use problem::{Problem, ProblemClass, Problems, Severity};

use std::cmp::Ordering;
use std::collections::BTreeSet;

use crate::checksums::{validate_checksums_with, ChecksumFinding, ValidateOptions};
use crate::component::Component;
use crate::data::{ReaderOptions, ScanReader};
use crate::error::{Error, ErrorKind, Result};
use crate::filter::BloomFilter;
use crate::index::IndexReader;
use crate::sstable::Sstable;
use crate::statistics::Statistics;
use crate::summary::{Summary, SummaryHeader};
use crate::token::Partitioner;

use index::{check_summary, sampled_cuts, scan_index, IndexScan};
pub(crate) use parallel::{Cuts, Unit, UNIT_BYTES};
use promoted::PiCheck;
use walk::{BloomCheck, BloomFilters, Shared};

/// Validation options.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Keep at most this many problems (the rest are counted).
    pub max_problems: usize,
    /// Decoder options for Data.db.
    pub reader: ReaderOptions,
    /// Run the checksum pass ([`crate::checksums`]: every chunk checksum
    /// and the digest) with these options; `None` skips it (structure only).
    pub checksums: Option<ValidateOptions>,
    /// Threads decoding Data.db (1: one sequential walk). With more, it is
    /// cut into units of whole partitions at the index's entries (a large
    /// partition into parts at its row-index blocks), each walked on a
    /// thread, and the findings are those of one walk, in its order.
    pub threads: usize,
    /// Uncompressed Data.db bytes of a unit, about.
    pub unit_bytes: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_problems: 10_000,
            reader: ReaderOptions::default(),
            checksums: Some(ValidateOptions::default()),
            threads: 1,
            unit_bytes: parallel::UNIT_BYTES,
        }
    }
}

/// Whether a group of checks ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// Short name (`data`, `index`, `promoted_index`, `summary`, `filter`, `metadata`).
    pub name: &'static str,
    /// True when it ran (possibly partially: see `note`).
    pub done: bool,
    /// Why it was skipped or cut short.
    pub note: Option<String>,
}

/// The result of validating one sstable.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// What was found.
    pub problems: Problems,
    /// Partitions decoded (completely).
    pub partitions: u64,
    /// Clustered rows decoded.
    pub rows: u64,
    /// Static rows decoded.
    pub static_rows: u64,
    /// Range tombstone markers decoded.
    pub markers: u64,
    /// Uncompressed Data.db length.
    pub data_len: u64,
    /// Index.db entries decoded.
    pub index_entries: Option<u64>,
    /// Which checks ran.
    pub checks: Vec<Check>,
    /// Chunks whose checksum the checksum pass compared (None when it did not run).
    pub checksum_chunks: Option<u64>,
    /// Units of Data.db walked on other threads and joined to the walk
    /// ([`Options::threads`]; 0 when one walk read it all).
    pub threaded_units: u64,
    /// Parts of large partitions (their rows and markers, cut at their
    /// row-index blocks) walked on other threads and taken ([`Options::threads`];
    /// 0 with one thread, or when every large partition was walked whole).
    pub threaded_parts: u64,
}

impl Report {
    /// True when no finding is an error (warnings and notes allowed).
    pub fn valid(&self) -> bool {
        self.problems.errors() == 0
    }

    /// The checks that did not run, with why.
    pub fn skipped(&self) -> impl Iterator<Item = &Check> {
        self.checks.iter().filter(|c| !c.done)
    }

    fn check(&mut self, name: &'static str, done: bool, note: Option<String>) {
        self.checks.push(Check { name, done, note });
    }
}

/// The partitioner named in Statistics.db (Murmur3 when absent or unknown).
pub fn partitioner_of(st: &Statistics) -> Partitioner {
    st.validation
        .as_ref()
        .and_then(|v| Partitioner::parse(&v.partitioner).ok())
        .unwrap_or(Partitioner::Murmur3)
}

/// Statistics.db checksum findings as problems.
pub fn statistics_problems(st: &Statistics, out: &mut Problems) {
    for e in &st.problems {
        if matches!(e.kind, ErrorKind::ChecksumMismatch { .. }) {
            out.push(Problem::from_error(e, Component::Statistics, 0));
        }
    }
}

/// Chunk length of a compressed Data.db (None when uncompressed or unreadable).
pub fn chunk_length(sst: &Sstable) -> Option<u64> {
    sst.compression_info().ok().map(|c| c.chunk_length as u64)
}

fn read_optional(
    sst: &Sstable,
    c: Component,
    report: &mut Report,
    name: &'static str,
) -> Option<crate::io::Bytes> {
    if !sst.has(c) {
        report.check(name, false, Some(format!("no {}", c.suffix())));
        return None;
    }
    // Mapped, not copied: Index.db is kept whole for the pass.
    match sst.map_component(c) {
        Ok(b) => Some(b),
        Err(e) => {
            report.problems.push(Problem::from_error(&e, c, 0));
            report.check(name, false, Some(format!("{} unreadable", c.suffix())));
            None
        }
    }
}

/// What scrub can do about a lost CompressionInfo.db, found by walking
/// Data.db as scrub would (one read of Data.db, a chunk decompressed at a
/// time): rebuild it, and from how many chunks, or why not.
fn rebuild_note(sst: &Sstable) -> String {
    match crate::chunk_walk::rebuild(sst, None) {
        Ok(r) => {
            let ci = &r.info;
            let stop = match r.broken_at {
                Some(at) => format!(
                    "; the chain of chunks stops at byte {at} of {}, what follows is lost",
                    r.file_len
                ),
                None => String::new(),
            };
            let gaps = match r.gaps.len() {
                0 => String::new(),
                n => format!("; {n} damaged stretch(es) between chunks are lost"),
            };
            format!(
                "; scrub --mode skip --output-dir DIR rebuilds it from Data.db: walking the \
                 chunk checksums finds {} chunks, compressor {}, chunk length {}{gaps}{stop}",
                ci.chunk_count(),
                ci.compressor.name(),
                ci.chunk_length
            )
        }
        Err(e) => format!("; scrub cannot rebuild it from Data.db: {}", e.kind),
    }
}

/// Components: each one the TOC lists must exist (a `missing_component`
/// error); a component file next to the sstable that the TOC does not list
/// is an `unlisted_component` note. Fails when TOC.txt cannot be read.
fn check_components(sst: &Sstable, report: &mut Report) -> Result<()> {
    let toc = sst.toc_txt()?;
    for e in &toc.entries {
        let Some(c) = e.component else { continue };
        if c != Component::Toc && !crate::io::store::is_file(&sst.desc.path_of(&e.name)) {
            let rebuild = if c == Component::CompressionInfo {
                rebuild_note(sst)
            } else {
                String::new()
            };
            report.problems.push(Problem::new(
                ProblemClass::MissingComponent,
                c,
                0,
                format!(
                    "{}: listed in TOC.txt but the file is missing{rebuild}",
                    e.name
                ),
            ));
        }
    }
    if !sst.toc_from_file {
        report.check(
            "components",
            true,
            Some("no TOC.txt: the components are the files present".into()),
        );
        return Ok(());
    }
    match crate::sstable::present_components(&sst.desc) {
        Ok(files) => {
            for f in files {
                let listed = toc.entries.iter().any(|e| e.name == f.name);
                if let (false, Some(c)) = (listed, f.component) {
                    report.problems.push(Problem::new(
                        ProblemClass::UnlistedComponent,
                        c,
                        0,
                        format!("{}: present but not listed in TOC.txt (ignored)", f.name),
                    ));
                }
            }
            report.check("components", true, None);
        }
        Err(e) => report.check(
            "components",
            true,
            Some(format!(
                "directory not listed, unlisted files not looked for: {e}"
            )),
        ),
    }
    Ok(())
}

/// The checksum pass ([`validate_checksums_with`]): its findings as
/// problems. Returns the chunks it found bad, so that the data walk does
/// not report them a second time.
fn check_checksums(sst: &Sstable, opts: ValidateOptions, report: &mut Report) -> BTreeSet<u64> {
    let mut found = Vec::new();
    let mut bad = BTreeSet::new();
    match validate_checksums_with(sst, opts, |f| found.push(f)) {
        Ok(r) => {
            report.checksum_chunks = Some(r.chunks_checked);
            report.data_len = r.data_len;
            report.check(
                "chunk_checksums",
                r.has_checksums,
                (!r.has_checksums).then(|| "no CompressionInfo.db or CRC.db".to_string()),
            );
            report.check(
                "digest",
                r.has_digest,
                (!r.has_digest).then(|| "no Digest component".to_string()),
            );
        }
        Err(e) => {
            // A missing Data.db is the component check's finding.
            if sst.io.exists(Component::Data) {
                report
                    .problems
                    .push(Problem::from_error(&e, Component::Data, 0));
            }
            let note = format!("Data.db cannot be read: {e}");
            report.check("chunk_checksums", false, Some(note.clone()));
            report.check("digest", false, Some(note));
        }
    }
    for f in found {
        match &f {
            // The component check reports every missing component.
            ChecksumFinding::MissingComponent { .. } => continue,
            ChecksumFinding::BadChunk { index, .. } => {
                bad.insert(*index);
            }
            _ => {}
        }
        report.problems.push(f.into());
    }
    bad
}

/// Checks that need no Data.db decoding, for a pre-3.0 sstable without its
/// schema: every Index.db key against the bloom filter, and the partition
/// count of Statistics.db against the index. Records what is skipped.
fn check_without_data(
    sst: &Sstable,
    index: Option<&[u8]>,
    scan: Option<&IndexScan>,
    filter: Option<&BloomFilters>,
    st: &Statistics,
    why: &str,
    report: &mut Report,
) {
    report.check(
        "data",
        false,
        Some(format!(
            "{why} (not checked: partition and clustering order, row sizes, range tombstones, \
             deletion times, index entries against partitions)"
        )),
    );
    report.check("promoted_index", false, Some(why.to_string()));
    match (index, filter) {
        (Some(b), filters) => {
            let mut bloom = filters.map(BloomCheck::new);
            // The keys come from Index.db (its errors are the pre-pass's findings).
            let mut r = IndexReader::new(b, sst.features());
            while let Ok(Some(e)) = r.next() {
                if let Some(f) = bloom.as_mut() {
                    f.key(e.key, e.position);
                }
            }
            if let Some(f) = bloom {
                f.finish(None, report);
            }
            report.check(
                "index",
                true,
                Some("order and positions only: entries not compared with Data.db".into()),
            );
        }
        (None, Some(_)) => report.check(
            "filter",
            false,
            Some("no Index.db to take the keys from".into()),
        ),
        (None, None) => {}
    }
    let hist = st.stats.as_ref().map(|s| {
        s.estimated_partition_size
            .pairs
            .iter()
            .map(|p| p.1)
            .fold(0i64, |a, b| a.saturating_add(b))
    });
    if let (Some(hist), Some(sc)) = (hist, scan.filter(|s| s.complete)) {
        if hist >= 0 && hist as u64 != sc.entries {
            report.problems.push(Problem::new(
                ProblemClass::MetadataMismatch,
                Component::Statistics,
                0,
                format!(
                    "Statistics.db partition size histogram counts {hist} partitions, Index.db has {} entries",
                    sc.entries
                ),
            ));
        }
    }
    let compared = if scan.is_some_and(|s| s.complete) {
        "partition count compared with Index.db; "
    } else {
        ""
    };
    report.check(
        "metadata",
        true,
        Some(format!(
            "{compared}row counts and first/last keys need Data.db decoded"
        )),
    );
}

/// Validate `sst`. `progress(pos, len)` is called after each partition with
/// the uncompressed Data.db position. Fails only when the sstable cannot be
/// opened at all (no Statistics.db or TOC); everything else is a [`Problem`].
pub fn validate(
    sst: &Sstable,
    opts: &Options,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Report> {
    let mut report = Report {
        problems: Problems::with_max(opts.max_problems),
        ..Report::default()
    };
    let features = sst.features();
    check_components(sst, &mut report)?;
    let bad_chunks = match opts.checksums {
        Some(co) => check_checksums(sst, co, &mut report),
        None => {
            let note = Some("skipped: --skip-checksums".to_string());
            report.check("chunk_checksums", false, note.clone());
            report.check("digest", false, note);
            BTreeSet::new()
        }
    };
    let st_bytes = sst.read_component(Component::Statistics)?;
    let st = Statistics::parse_lenient(&st_bytes, features)
        .map_err(|e| e.in_file(&sst.path(Component::Statistics)))?;
    statistics_problems(&st, &mut report.problems);
    let partitioner = partitioner_of(&st);

    // Index.db: pre-pass, then Summary.db against it.
    let summary_bytes = if features.trie_index {
        None
    } else {
        read_optional(sst, Component::Summary, &mut report, "summary")
    };
    let summary = summary_bytes.and_then(|b| match Summary::parse(&b, &features) {
        Ok(s) => {
            // The summary proper is usable without its trailer, which only
            // shows the file was cut short.
            if let Err(e) = s.check_trailer(&b) {
                report
                    .problems
                    .push(Problem::from_error(&e, Component::Summary, 0));
            }
            Some(s)
        }
        Err(e) => {
            report
                .problems
                .push(Problem::from_error(&e, Component::Summary, 0));
            report.check("summary", false, Some("Summary.db does not decode".into()));
            None
        }
    });
    // Where several threads may cut Data.db, from the index read anyway.
    let mut cuts =
        (opts.threads > 1 && !features.legacy_cells).then(|| Cuts::with_large(opts.unit_bytes));
    let index = if features.trie_index {
        bti::check(sst, &mut report, cuts.as_mut());
        None
    } else {
        read_optional(sst, Component::Index, &mut report, "index")
    };
    let interval = summary
        .as_ref()
        .filter(|s| s.header.level() == SummaryHeader::BASE_SAMPLING_LEVEL)
        .map(|s| s.header.min_index_interval as u64);
    // Cut from the summary's samples, the walk need not wait for the
    // pre-pass: it runs on a thread of its own.
    let sampled = match (&cuts, &summary, index.as_deref()) {
        (Some(_), Some(sm), Some(ix)) => sampled_cuts(sm, ix, features, opts.unit_bytes),
        _ => None,
    };
    let index_checks = |cuts: Option<&mut Cuts>, out: &mut Problems| {
        let ix = index.as_deref()?;
        let scan = scan_index(ix, features, &partitioner, interval, cuts, out);
        if let Some(sm) = &summary {
            check_summary(sm, ix, &scan, features, out);
        }
        Some(scan)
    };
    std::thread::scope(|scope| {
        let (scan, beside) = match sampled {
            Some(c) => {
                cuts = Some(c);
                let max = opts.max_problems;
                let pre = scope.spawn(move || {
                    let mut out = Problems::with_max(max);
                    (index_checks(None, &mut out), out)
                });
                // The findings so far, and where the pre-pass's go after them.
                let before = std::mem::replace(&mut report.problems, Problems::with_max(max));
                (None, Some((pre, before, report.checks.len())))
            }
            None => (index_checks(cuts.as_mut(), &mut report.problems), None),
        };
        index_done(scan.as_ref(), summary.is_some(), &mut report, None);
        let read = Read {
            st: &st,
            partitioner: &partitioner,
            summary: summary.as_ref(),
            index: index.as_deref(),
            scan: scan.as_ref(),
            bad_chunks: &bad_chunks,
        };
        check_data(sst, opts, &read, cuts, &mut report, progress);
        if let Some((pre, before, checks_at)) = beside {
            let (scan, found) = pre.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
            let after = std::mem::replace(&mut report.problems, before);
            report.problems.append(found);
            report.problems.append(after);
            index_done(
                scan.as_ref(),
                summary.is_some(),
                &mut report,
                Some(checks_at),
            );
        }
    });
    Ok(report)
}

/// Record the pre-pass's entry count and that the summary was checked
/// against it (its check inserted at `checks_at`, where one thread puts it).
fn index_done(
    scan: Option<&IndexScan>,
    summary: bool,
    report: &mut Report,
    checks_at: Option<usize>,
) {
    let Some(s) = scan else { return };
    report.index_entries = Some(s.entries);
    if summary {
        let at = checks_at.unwrap_or(report.checks.len());
        report.checks.insert(
            at.min(report.checks.len()),
            Check {
                name: "summary",
                done: true,
                note: None,
            },
        );
    }
}

/// What the data walk reads besides Data.db.
struct Read<'a> {
    st: &'a Statistics,
    partitioner: &'a Partitioner,
    summary: Option<&'a Summary>,
    index: Option<&'a [u8]>,
    /// The pre-pass, when it ran before the walk.
    scan: Option<&'a IndexScan>,
    bad_chunks: &'a BTreeSet<u64>,
}

/// Filter.db, then Data.db walked against the index and the filter, then
/// the metadata against what the walk counted.
fn check_data(
    sst: &Sstable,
    opts: &Options,
    read: &Read<'_>,
    cuts: Option<Cuts>,
    report: &mut Report,
    progress: &mut dyn FnMut(u64, u64),
) {
    let features = sst.features();
    let Read {
        st,
        partitioner,
        summary,
        index,
        scan,
        bad_chunks,
    } = *read;
    let filter = if sst.has(Component::Filter) {
        match sst
            .read_component(Component::Filter)
            .and_then(|b| BloomFilter::parse(&b, &features))
        {
            Ok(f) => Some(BloomFilters::new(f)),
            Err(e) => {
                report
                    .problems
                    .push(Problem::from_error(&e, Component::Filter, 0));
                report.check("filter", false, Some("Filter.db does not decode".into()));
                None
            }
        }
    } else {
        report.check("filter", false, Some("no Filter.db".into()));
        None
    };

    // ka/la: synthesized from the attached table schema (--schema).
    let header = &match sst.data_header(st) {
        Ok(h) => h,
        // Without the schema a pre-3.0 Data.db cannot be decoded: the
        // checks that need no decoding still run.
        Err(_) if features.legacy_cells => {
            let why = format!(
                "version {} stores no schema; pass the table's CREATE TABLE with --schema FILE \
                 to decode Data.db",
                sst.version()
            );
            check_without_data(sst, index, scan, filter.as_ref(), st, &why, report);
            return;
        }
        Err(e) => {
            report.check("data", false, Some(e.to_string()));
            return;
        }
    };
    let chunk_len = chunk_length(sst);
    let reader = match ScanReader::with_options(sst, header, opts.reader) {
        Ok(r) => r,
        Err(e) => {
            let c = e.component.unwrap_or(Component::Data);
            report.problems.push(Problem::from_error(&e, c, 0));
            report.check("data", false, Some(format!("Data.db cannot be read: {e}")));
            return;
        }
    };
    report.data_len = reader.data_len();
    let sh = Shared {
        header,
        partitioner,
        chunk_len,
        fixed: header.clustering_fixed_lens(),
        index,
        features,
        bad_chunks,
        bloom: filter.as_ref(),
        reader: opts.reader,
        max_problems: opts.max_problems,
    };
    let problems = std::mem::take(&mut report.problems);
    let units = cuts.and_then(|c| c.units(report.data_len));
    let mut w = parallel::walk(
        sst,
        &sh,
        units,
        opts.threads,
        opts.unit_bytes,
        reader,
        problems,
        progress,
    );
    progress(report.data_len, report.data_len);
    // Index entries left over.
    w.leftover_entries();
    if let Some(note) = w.stop_note.take() {
        report.check("data", true, Some(note));
    }
    if w.has_index() {
        report.check("index", true, None);
        report.check("promoted_index", true, None);
    }
    if !report.checks.iter().any(|c| c.name == "data") {
        report.check("data", true, None);
    }
    report.problems = std::mem::take(&mut w.problems);
    report.threaded_units = w.joined;
    report.threaded_parts = w.parts;
    report.partitions = w.checker.partitions;
    report.rows = w.checker.rows;
    report.static_rows = w.checker.static_rows;
    report.markers = w.checker.markers;
    if let Some(b) = w.bloom.take() {
        b.finish(chunk_len, report);
    }
    check_metadata(
        st,
        &w.checker,
        summary,
        w.data_complete && w.all_decoded,
        report,
    );
}

/// Statistics.db and Summary.db first/last key and counts against the data.
fn check_metadata(
    st: &Statistics,
    checker: &DataChecker,
    summary: Option<&Summary>,
    complete: bool,
    report: &mut Report,
) {
    let mut push = |c: Component, msg: String, key: Option<&[u8]>| {
        let mut p = Problem::new(ProblemClass::MetadataMismatch, c, 0, msg);
        if let Some(k) = key {
            p = p.key(k);
        }
        report.problems.push(p);
    };
    let first = checker.first_key.as_deref();
    let last = checker.last_seen_key.as_deref();
    if let Some(stats) = &st.stats {
        if let (Some(want), Some(got)) = (stats.first_key.as_deref(), first) {
            if want != got {
                push(
                    Component::Statistics,
                    "Statistics.db first key differs from the first partition's".into(),
                    Some(want),
                );
            }
        }
        if complete {
            if let (Some(want), Some(got)) = (stats.last_key.as_deref(), last) {
                if want != got {
                    push(
                        Component::Statistics,
                        "Statistics.db last key differs from the last partition's".into(),
                        Some(want),
                    );
                }
            }
            let hist: i64 = stats
                .estimated_partition_size
                .pairs
                .iter()
                .map(|p| p.1)
                .fold(0i64, |a, b| a.saturating_add(b));
            if hist >= 0 && hist as u64 != checker.partitions {
                push(
                    Component::Statistics,
                    format!(
                        "Statistics.db partition size histogram counts {hist} partitions, Data.db has {}",
                        checker.partitions
                    ),
                    None,
                );
            }
            if let Some(tr) = stats.total_rows {
                let rows = checker.rows as i64;
                let with_static = rows + checker.static_rows as i64;
                let with_nonempty = rows + checker.nonempty_static_rows as i64;
                if tr != rows && tr != with_static && tr != with_nonempty {
                    push(
                        Component::Statistics,
                        format!("Statistics.db total rows {tr}, Data.db has {rows} rows"),
                        None,
                    );
                }
            }
        }
    }
    if let Some(s) = summary {
        if let Some(got) = first {
            if s.first_key != got {
                push(
                    Component::Summary,
                    "Summary.db first key differs from the first partition's".into(),
                    Some(&s.first_key),
                );
            }
        }
        if let (Some(got), true) = (last, complete) {
            if s.last_key != got {
                push(
                    Component::Summary,
                    "Summary.db last key differs from the last partition's".into(),
                    Some(&s.last_key),
                );
            }
        }
    }
    report.check(
        "metadata",
        true,
        (!complete)
            .then(|| "counts not compared: not every partition of Data.db decoded".to_string()),
    );
}

/// Lowercase hex.
pub(crate) fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// An error for "nothing to validate" cases.
pub fn unsupported(msg: &str) -> Error {
    Error::new(ErrorKind::Unsupported(msg.into()), "validate")
}
