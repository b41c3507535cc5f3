//! Checking every checksum of Data.db in one sequential pass: the per-chunk
//! checksums (inline after each compressed chunk, or in CRC.db for an
//! uncompressed Data.db) and the whole-file `Digest.*`.
//!
//! `shared/docs/sstable-format.md` §7.1–7.2 (compressed chunks), §8 (CRC.db,
//! Digest); C\* `o.a.c/io/util/DataIntegrityMetadata.java`,
//! `o.a.c/io/compress/CompressedSequentialWriter.java`; Scylla
//! `sstables/sstables.cc` (`validate_checksums`).
//!
//! ```text
//! compressed:    Data.db := (payload_k checksum_k:u32 BE)*   chunk k at CompressionInfo offset k
//!                checksum_k = CRC32 (ma+) | Adler-32 (ka/la) of payload_k as stored
//! uncompressed:  Data.db := chunk_0 chunk_1 …                 chunk k = [k·size, (k+1)·size)
//!                CRC.db  := size:i32 (checksum_k:u32 BE)*
//! digest:        Digest.crc32 | Digest.adler32 | Digest.sha1 = checksum of the whole Data.db
//!                (decimal text; pre-2.1 Digest.sha1: "<40 hex>  <file name>", a real SHA-1)
//! ```
//!
//! ## Reading model
//!
//! [`validate_checksums`] reads Data.db front to back through the sstable's
//! [`crate::io::IoLayer`] with [`IoLayer::scan`](crate::io::IoLayer::scan),
//! in blocks of [`DEFAULT_BLOCK`] bytes, each made of physical reads of at
//! most `--max-io` bytes that `--io-stats` counts. The scan lends its buffer:
//! `pread` fills one reused block buffer, `mmap` lends slices of the mapping,
//! so no byte is copied after the kernel's copy (or, mapped, at all). Memory
//! is one block whatever the file or chunk sizes are: chunks are hashed
//! incrementally, so a chunk cut by a block boundary, or larger than a block,
//! needs no copy. A block of 256 KiB stays in the CPU cache between the read
//! and the checksum.
//!
//! The pass can be cut into parts ([`ValidateOptions::threads`], at least
//! [`ValidateOptions::min_part`] bytes each) that start where chunks start:
//! each part is read and checked on a thread of its own
//! ([`IoLayer::scan_parts`](crate::io::IoLayer::scan_parts)), its findings
//! kept until the parts before it are done, so the findings come in the same
//! order as from one pass, and the parts' digests are combined into the
//! whole file's. Measured (`bench/validate.sh`, 160 MB LZ4 Data.db in the
//! page cache, 2 cores): one pass is the kernel's copy plus the CRC, 70-79%
//! of `cat`'s speed depending on how fast this VM copies; two parts run both
//! on both cores. SHA-1 digests and the payload-only Adler-32 variant cannot
//! be combined: one pass.
//!
//! Each byte is hashed once: when the digest uses the chunks' algorithm
//! (every sstable sstkit knows but pre-2.1 SHA-1 digests), the digest is
//! extended by *combining* each chunk's checksum (as zlib's
//! `crc32_combine` / `adler32_combine`) rather than by hashing the bytes
//! again. Metadata components are read whole (one request each).
//!
//! ## Findings
//!
//! Problems do not stop the pass: each one is handed to the caller as a
//! [`ChecksumFinding`] when its part is done, in file order (metadata
//! findings first, the digest last). Unparseable CompressionInfo.db, CRC.db
//! or Digest files are findings too; nothing read from a file makes the
//! validator allocate more than the file's own size. Only an unreadable
//! Data.db (absent, I/O error) is an `Err`.
//!
//! NOTE (§7.1, §8): one trailing empty chunk / checksum is accepted, as the
//! parsers in [`crate::compression`] and [`crate::crc`] do; and for `ka`/`la`
//! compressed files a digest over the chunk payloads only (without their
//! checksums) is accepted, as [`Digest::verify_compressed`] does.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::component::Component;
use crate::compression::CompressionInfo;
use crate::crc::CrcFile;
use crate::digest::{ChecksumAlgo, Checksummer, Digest, DigestScope};
use crate::error::{Error, ErrorKind, Result};
use crate::sstable::Sstable;
use crate::validate::ProblemClass;

/// Data.db bytes per request (256 KiB; a quarter of the IO layer's default
/// read-ahead window). Measured on 512 MiB files in the page cache with the
/// default IO options: 128–512 KiB requests are fastest; 2–4 MiB ones are
/// 10–30% slower (each allocates and copies a window of its own size).
pub const DEFAULT_BLOCK: u64 = 256 << 10;

/// The smallest part of Data.db checked on a thread of its own (8 MiB:
/// about half a millisecond of reading from the page cache, against tens of
/// microseconds to start a thread).
pub const DEFAULT_MIN_PART: u64 = 8 << 20;

/// A Digest file longer than this is not a digest (the longest legal one is
/// the pre-2.1 `"<sha1 hex>  <file name>"` form).
const MAX_DIGEST_LEN: u64 = 4096;

/// The algorithm of a whole-file digest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DigestAlgo {
    /// A 32-bit checksum (`Digest.crc32`, `Digest.adler32`, 2.1+ `Digest.sha1`).
    Checksum(ChecksumAlgo),
    /// A real SHA-1 (pre-2.1 `Digest.sha1`: hex and the file name).
    Sha1,
}

impl DigestAlgo {
    /// Lower-case name: `crc32`, `adler32`, `sha1`.
    pub fn name(self) -> &'static str {
        match self {
            DigestAlgo::Checksum(a) => a.name(),
            DigestAlgo::Sha1 => "sha1",
        }
    }
}

/// A digest value, stored or computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DigestValue {
    /// CRC32 or Adler-32.
    Checksum(u32),
    /// SHA-1 bytes.
    Sha1([u8; 20]),
}

impl std::fmt::Display for DigestValue {
    /// `0x%08x` for 32-bit checksums, 40 lower-case hex digits for SHA-1.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DigestValue::Checksum(v) => write!(f, "{v:#010x}"),
            DigestValue::Sha1(b) => b.iter().try_for_each(|x| write!(f, "{x:02x}")),
        }
    }
}

/// One problem found by [`validate_checksums`]. Ranges are half-open byte
/// ranges; `file_range` is in Data.db as stored, `uncompressed_range` in the
/// uncompressed Data.db (the positions Index.db uses; equal to `file_range`
/// for uncompressed sstables).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ChecksumFinding {
    /// A chunk whose bytes do not match its stored checksum.
    BadChunk {
        /// Chunk index.
        index: u64,
        /// Where the checksummed bytes are in Data.db (compressed: payload
        /// and the 4-byte checksum).
        file_range: Range<u64>,
        /// The uncompressed bytes the chunk holds.
        uncompressed_range: Range<u64>,
        /// The checksum stored (inline, or in CRC.db).
        stored: u32,
        /// The checksum of the bytes.
        computed: u32,
        /// The algorithm.
        algo: ChecksumAlgo,
        /// Where the stored checksum comes from: Data.db (inline) or CRC.db.
        source: Component,
    },
    /// A compressed chunk that starts in Data.db but is cut by its end (or
    /// has no room for its checksum): it cannot be checked.
    TruncatedChunk {
        /// Chunk index.
        index: u64,
        /// The range the chunk table gives it (its end may be past the file).
        file_range: Range<u64>,
        /// Data.db length.
        file_len: u64,
        /// The uncompressed bytes the chunk holds.
        uncompressed_range: Range<u64>,
    },
    /// Compressed chunks whose offsets are at or past the end of Data.db
    /// (one finding for the whole run, which always reaches the last chunk).
    ChunksOutOfRange {
        /// First chunk of the run.
        first: u64,
        /// Number of chunks in the run.
        count: u64,
        /// From the first chunk's offset to the end the last chunk would
        /// need (at least its 4-byte checksum).
        file_range: Range<u64>,
        /// Data.db length.
        file_len: u64,
        /// The uncompressed bytes these chunks hold.
        uncompressed_range: Range<u64>,
    },
    /// Bytes of a compressed Data.db that no chunk covers (before the first
    /// chunk offset, or a non-empty file with an empty chunk table).
    UncoveredBytes {
        /// The bytes.
        file_range: Range<u64>,
    },
    /// CRC.db holds a number of checksums that does not match Data.db's
    /// length (Data.db truncated or extended, or CRC.db damaged). Chunks
    /// with no checksum are not checked.
    CrcCountMismatch {
        /// Checksums in CRC.db.
        stored: u64,
        /// Chunks in Data.db.
        expected: u64,
        /// CRC.db chunk size.
        chunk_size: u32,
        /// Data.db length.
        file_len: u64,
    },
    /// The whole-file digest does not match.
    DigestMismatch {
        /// The algorithm.
        algo: DigestAlgo,
        /// Value in the Digest file.
        stored: DigestValue,
        /// Value computed over Data.db.
        computed: DigestValue,
    },
    /// Neither CompressionInfo.db nor CRC.db: chunks cannot be checked (a warning).
    MissingChecksums,
    /// No Digest component (a warning).
    MissingDigest,
    /// The TOC lists a checksum component whose file is absent.
    MissingComponent {
        /// The component.
        component: Component,
    },
    /// A checksum component that cannot be decoded; what it guards is not
    /// checked (a corrupt Digest: no digest check; a corrupt CompressionInfo
    /// or CRC.db: no chunk checks).
    CorruptMetadata {
        /// The component.
        component: Component,
        /// Why (with file and offset).
        error: Error,
    },
}

impl ChecksumFinding {
    /// True for problems (the sstable is not valid); false for warnings
    /// ([`ChecksumFinding::MissingChecksums`], [`ChecksumFinding::MissingDigest`]).
    pub fn is_error(&self) -> bool {
        !matches!(
            self,
            ChecksumFinding::MissingChecksums | ChecksumFinding::MissingDigest
        )
    }

    /// The finding's class in the shared finding shape of `validate`,
    /// `validate-checksums` and `scrub`.
    pub fn problem_class(&self) -> ProblemClass {
        match self {
            ChecksumFinding::BadChunk { .. } => ProblemClass::BadChunk,
            ChecksumFinding::TruncatedChunk { .. } => ProblemClass::TruncatedChunk,
            ChecksumFinding::ChunksOutOfRange { .. } => ProblemClass::ChunksOutOfRange,
            ChecksumFinding::UncoveredBytes { .. } => ProblemClass::UncoveredBytes,
            ChecksumFinding::CrcCountMismatch { .. } => ProblemClass::CrcCountMismatch,
            ChecksumFinding::DigestMismatch { .. } => ProblemClass::DigestMismatch,
            ChecksumFinding::MissingChecksums => ProblemClass::MissingChecksums,
            ChecksumFinding::MissingDigest => ProblemClass::MissingDigest,
            ChecksumFinding::MissingComponent { .. } => ProblemClass::MissingComponent,
            ChecksumFinding::CorruptMetadata { .. } => ProblemClass::CorruptMetadata,
        }
    }

    /// Short snake-case name of the finding's class ([`ProblemClass::as_str`]).
    pub fn class(&self) -> &'static str {
        self.problem_class().as_str()
    }

    /// The component the finding is about (Data.db for chunk and digest findings).
    pub fn component(&self) -> Component {
        match self {
            ChecksumFinding::CrcCountMismatch { .. } | ChecksumFinding::MissingChecksums => {
                Component::Crc
            }
            ChecksumFinding::MissingDigest => Component::Digest,
            ChecksumFinding::MissingComponent { component }
            | ChecksumFinding::CorruptMetadata { component, .. } => *component,
            _ => Component::Data,
        }
    }

    /// The uncompressed Data.db range the finding covers, for mapping to
    /// partitions (chunk findings only).
    pub fn uncompressed_range(&self) -> Option<Range<u64>> {
        match self {
            ChecksumFinding::BadChunk {
                uncompressed_range, ..
            }
            | ChecksumFinding::TruncatedChunk {
                uncompressed_range, ..
            }
            | ChecksumFinding::ChunksOutOfRange {
                uncompressed_range, ..
            } => Some(uncompressed_range.clone()),
            _ => None,
        }
    }

    /// The Data.db range the finding covers, if any.
    pub fn file_range(&self) -> Option<Range<u64>> {
        match self {
            ChecksumFinding::BadChunk { file_range, .. }
            | ChecksumFinding::TruncatedChunk { file_range, .. }
            | ChecksumFinding::ChunksOutOfRange { file_range, .. }
            | ChecksumFinding::UncoveredBytes { file_range } => Some(file_range.clone()),
            _ => None,
        }
    }

    /// The chunk index, for findings about one chunk (or the first of a run).
    pub fn chunk(&self) -> Option<u64> {
        match self {
            ChecksumFinding::BadChunk { index, .. }
            | ChecksumFinding::TruncatedChunk { index, .. } => Some(*index),
            ChecksumFinding::ChunksOutOfRange { first, .. } => Some(*first),
            _ => None,
        }
    }
}

impl std::fmt::Display for ChecksumFinding {
    /// One line, located: `Data.db+0x…..0x…: chunk 3 …`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChecksumFinding::BadChunk {
                index,
                file_range: r,
                stored,
                computed,
                algo,
                source,
                ..
            } => {
                let from = if *source == Component::Crc {
                    " (checksum from CRC.db)"
                } else {
                    ""
                };
                write!(
                    f,
                    "Data.db+{:#x}..{:#x}: chunk {index}: {} checksum mismatch (stored {stored:#010x}, \
                     computed {computed:#010x}){from}",
                    r.start,
                    r.end,
                    algo.name()
                )
            }
            ChecksumFinding::TruncatedChunk {
                index,
                file_range: r,
                file_len,
                ..
            } => write!(
                f,
                "Data.db+{:#x}: chunk {index} spans {}..{} but Data.db has {file_len} bytes: \
                 truncated, not checked",
                r.start, r.start, r.end
            ),
            ChecksumFinding::ChunksOutOfRange {
                first,
                count,
                file_range: r,
                file_len,
                ..
            } => {
                write!(
                    f,
                    "Data.db+{:#x}: {count} chunk(s) from chunk {first} start at or past the end \
                     of the {file_len}-byte Data.db (truncated?)",
                    r.start
                )
            }
            ChecksumFinding::UncoveredBytes { file_range: r } => write!(
                f,
                "Data.db+{:#x}..{:#x}: {} bytes not covered by any compressed chunk",
                r.start,
                r.end,
                r.end - r.start
            ),
            ChecksumFinding::CrcCountMismatch {
                stored,
                expected,
                chunk_size,
                file_len,
            } => {
                write!(
                f,
                "CRC.db: {stored} checksums but Data.db ({file_len} bytes) has {expected} chunks \
                 of {chunk_size} bytes{}",
                if stored > expected { " (Data.db truncated?)" } else { "" }
            )
            }
            ChecksumFinding::DigestMismatch {
                algo,
                stored,
                computed,
            } => write!(
                f,
                "Data.db: whole-file {} digest mismatch (stored {stored}, computed {computed})",
                algo.name()
            ),
            ChecksumFinding::MissingChecksums => write!(
                f,
                "no CompressionInfo.db or CRC.db: chunk checksums cannot be checked"
            ),
            ChecksumFinding::MissingDigest => write!(f, "no Digest component: no whole-file check"),
            ChecksumFinding::MissingComponent { component } => {
                write!(f, "{component}: listed in TOC.txt but the file is missing")
            }
            ChecksumFinding::CorruptMetadata { error, .. } => write!(f, "{error}"),
        }
    }
}

/// What [`validate_checksums`] checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChecksumReport {
    /// CompressionInfo.db or CRC.db is present.
    pub has_checksums: bool,
    /// A Digest component is present.
    pub has_digest: bool,
    /// True for a compressed Data.db.
    pub compressed: bool,
    /// Chunk checksum algorithm (when chunks were checked).
    pub chunk_algo: Option<ChecksumAlgo>,
    /// Digest algorithm (when the digest was parsed).
    pub digest_algo: Option<DigestAlgo>,
    /// What the digest matched, when it matched.
    pub digest_scope: Option<DigestScope>,
    /// Chunks whose checksum was compared.
    pub chunks_checked: u64,
    /// Chunks whose checksum did not match.
    pub bad_chunks: u64,
    /// Data.db length.
    pub file_len: u64,
    /// Uncompressed Data.db length (from CompressionInfo.db; the file length
    /// when uncompressed).
    pub data_len: u64,
    /// Data.db bytes read.
    pub bytes_read: u64,
    /// Error findings.
    pub errors: u64,
    /// Warning findings.
    pub warnings: u64,
}

impl ChecksumReport {
    /// No error findings.
    pub fn valid(&self) -> bool {
        self.errors == 0
    }
}

/// Options of [`validate_checksums_with`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ValidateOptions {
    /// Data.db bytes per request (at least 1).
    pub block: u64,
    /// Threads the pass may use (0: one per available core). The file is
    /// cut at chunk boundaries into at most this many parts of at least
    /// `min_part` bytes, checked concurrently (see the module doc).
    pub threads: usize,
    /// Smallest part worth a thread of its own.
    pub min_part: u64,
}

impl Default for ValidateOptions {
    fn default() -> Self {
        ValidateOptions {
            block: DEFAULT_BLOCK,
            threads: 0,
            min_part: DEFAULT_MIN_PART,
        }
    }
}

/// Check every chunk checksum and the digest of `sst` in one pass over
/// Data.db (see the module doc), handing each problem to `on_finding`.
///
/// Order of findings: structural ones first (missing or undecodable
/// components, chunk table against the file length, CRC.db count), then bad
/// chunks in file order, then the digest.
///
/// IO: one request for each of CompressionInfo.db or CRC.db and the Digest
/// file, then a sequential scan of Data.db in requests of [`DEFAULT_BLOCK`]
/// bytes; every byte is read once.
pub fn validate_checksums(
    sst: &Sstable,
    on_finding: impl FnMut(ChecksumFinding),
) -> Result<ChecksumReport> {
    validate_checksums_with(sst, ValidateOptions::default(), on_finding)
}

/// [`validate_checksums`] with explicit options.
pub fn validate_checksums_with(
    sst: &Sstable,
    opts: ValidateOptions,
    on_finding: impl FnMut(ChecksumFinding),
) -> Result<ChecksumReport> {
    validate_checksums_counting(sst, opts, &AtomicU64::new(0), on_finding)
}

/// [`validate_checksums_with`], adding the Data.db bytes checked to
/// `checked` as the pass goes (from every thread), for a progress display;
/// the total is the Data.db file length.
pub fn validate_checksums_counting(
    sst: &Sstable,
    opts: ValidateOptions,
    checked: &AtomicU64,
    mut on_finding: impl FnMut(ChecksumFinding),
) -> Result<ChecksumReport> {
    let mut report = ChecksumReport::default();
    let mut emit = |report: &mut ChecksumReport, f: ChecksumFinding| {
        if f.is_error() {
            report.errors += 1;
        } else {
            report.warnings += 1;
        }
        on_finding(f);
    };
    sst.require(Component::Data)?;
    let data_path = sst.path(Component::Data);
    let file_len = sst
        .io
        .len(Component::Data)
        .map_err(|e| e.in_file(&data_path))?;
    report.file_len = file_len;
    report.data_len = file_len;
    // Compressed chunks and CRC.db differ for `jb` (Adler-32 vs CRC32).
    let compressed = sst.toc.has(Component::CompressionInfo);
    let chunk_algo = if compressed {
        ChecksumAlgo::for_chunks(&sst.features())
    } else {
        ChecksumAlgo::for_crc_file(&sst.features())
    };

    // Chunk layout: CompressionInfo.db, else CRC.db, else nothing.
    let mut structural = Vec::new();
    let mut layout = Layout::Plain;
    if compressed {
        report.compressed = true;
        if let Some(b) = load(sst, Component::CompressionInfo, &mut structural) {
            report.has_checksums = true;
            match CompressionInfo::parse(&b, &sst.features()) {
                Ok(info) => {
                    report.data_len = info.data_length;
                    layout = Layout::compressed(info, file_len, &mut structural);
                }
                Err(e) => structural.push(corrupt(sst, Component::CompressionInfo, e)),
            }
        }
    } else if sst.toc.has(Component::Crc) {
        if let Some(b) = load(sst, Component::Crc, &mut structural) {
            report.has_checksums = true;
            match CrcFile::parse(&b) {
                Ok(crc) => layout = Layout::crc(crc, file_len, chunk_algo, &mut structural),
                Err(e) => structural.push(corrupt(sst, Component::Crc, e)),
            }
        }
    } else {
        structural.push(ChecksumFinding::MissingChecksums);
    }
    if !matches!(layout, Layout::Plain) {
        report.chunk_algo = Some(chunk_algo);
    }

    // The digest.
    let mut digest = None;
    if sst.toc.has(Component::Digest) {
        if let Some(b) = load(sst, Component::Digest, &mut structural) {
            report.has_digest = true;
            let name = sst.toc.name_of(Component::Digest).unwrap_or("Digest.crc32");
            match parse_digest(&b, name) {
                Ok(d) => {
                    report.digest_algo = Some(d.algo);
                    digest = Some(d);
                }
                Err(e) => structural.push(corrupt(sst, Component::Digest, e)),
            }
        }
    } else {
        structural.push(ChecksumFinding::MissingDigest);
    }
    for f in structural {
        emit(&mut report, f);
    }

    // The pass: the file cut at chunk boundaries into parts, one thread each.
    let digest_algo = digest.as_ref().map(|d| d.algo);
    let parts = layout.parts(
        file_len,
        part_count(&opts, file_len, chunk_algo, digest_algo),
    );
    let block = usize::try_from(opts.block.max(1)).unwrap_or(usize::MAX);
    let walkers = parts
        .into_iter()
        .map(|(range, chunk)| {
            let w = Walker::new(&layout, chunk_algo, digest_algo, file_len)
                .starting_at(range.start, chunk);
            (range, (w, Vec::new()))
        })
        .collect();
    let walked = sst
        .io
        .scan_parts(
            Component::Data,
            walkers,
            block,
            |(walker, found), pos, buf| {
                walker.bytes_read += buf.len() as u64;
                checked.fetch_add(buf.len() as u64, Ordering::Relaxed);
                walker.feed(pos, buf, &mut |f| found.push(f));
                Ok(())
            },
        )
        .map_err(|e| e.in_file(&data_path))?;
    let mut whole: Option<Walker> = None;
    for (mut walker, mut found) in walked {
        walker.finish(&mut |f| found.push(f));
        for f in found {
            emit(&mut report, f);
        }
        match &mut whole {
            None => whole = Some(walker),
            Some(w) => w.append(&walker),
        }
    }
    let Some(walker) = whole else {
        return Err(Error::at(
            ErrorKind::BadValue("no part to check".into()),
            Component::Data,
            0,
            "checksum pass",
        )
        .in_file(&data_path));
    };
    report.bytes_read = walker.bytes_read;
    report.chunks_checked = walker.chunks_checked;
    report.bad_chunks = walker.bad_chunks;

    if let Some(d) = &digest {
        let computed = walker
            .digest
            .as_ref()
            .map_or(DigestValue::Checksum(0), Running::value);
        let payloads = walker.payloads.as_ref().map(Running::value);
        if computed == d.value {
            report.digest_scope = Some(DigestScope::WholeFile);
        } else if payloads == Some(d.value) {
            report.digest_scope = Some(DigestScope::PayloadsOnly);
        } else {
            emit(
                &mut report,
                ChecksumFinding::DigestMismatch {
                    algo: d.algo,
                    stored: d.value,
                    computed,
                },
            );
        }
    }
    Ok(report)
}

/// Read a whole checksum component, or record why it cannot be: listed in
/// the TOC but absent, unreadable, or (a Digest) too long to be one.
fn load(sst: &Sstable, c: Component, out: &mut Vec<ChecksumFinding>) -> Option<Vec<u8>> {
    if !sst.io.exists(c) {
        out.push(ChecksumFinding::MissingComponent { component: c });
        return None;
    }
    let res = sst.io.len(c).and_then(|len| {
        if c == Component::Digest && len > MAX_DIGEST_LEN {
            return Err(Error::at(
                ErrorKind::BadValue(format!("a {len}-byte file is not a digest")),
                c,
                0,
                "digest text",
            ));
        }
        sst.io.read_all(c)
    });
    match res {
        Ok(b) => Some(b),
        Err(e) => {
            out.push(corrupt(sst, c, e));
            None
        }
    }
}

fn corrupt(sst: &Sstable, c: Component, e: Error) -> ChecksumFinding {
    ChecksumFinding::CorruptMetadata {
        component: c,
        error: e.in_component(c).in_file(&sst.path(c)),
    }
}

/// A parsed digest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ParsedDigest {
    algo: DigestAlgo,
    value: DigestValue,
}

/// Decode a Digest file: decimal 32-bit checksum ([`Digest::parse`]), or the
/// pre-2.1 `Digest.sha1` form `"<40 hex>[  <file name>]"` (sha1sum output).
fn parse_digest(bytes: &[u8], name: &str) -> Result<ParsedDigest> {
    if name.ends_with("Digest.sha1") {
        if let Some(v) = sha1_text(bytes) {
            return Ok(ParsedDigest {
                algo: DigestAlgo::Sha1,
                value: DigestValue::Sha1(v),
            });
        }
    }
    let d = Digest::parse(bytes, name)?;
    Ok(ParsedDigest {
        algo: DigestAlgo::Checksum(d.algo),
        value: DigestValue::Checksum(d.value),
    })
}

/// 40 hex digits at the start of `bytes`, followed by the end or whitespace.
fn sha1_text(bytes: &[u8]) -> Option<[u8; 20]> {
    let hex = bytes.get(..40)?;
    if bytes.get(40).is_some_and(|b| !b.is_ascii_whitespace()) {
        return None;
    }
    let mut out = [0u8; 20];
    for (o, pair) in out.iter_mut().zip(hex.chunks_exact(2)) {
        let s = std::str::from_utf8(pair).ok()?;
        *o = u8::from_str_radix(s, 16).ok()?;
    }
    Some(out)
}

/// How Data.db is cut into checked chunks.
enum Layout {
    /// No usable chunk table: the file is only digested.
    Plain,
    /// Compressed: chunk `k` is `[offsets[k], offsets[k+1])` (the last one to
    /// the end of the file), its checksum in its last 4 bytes.
    Compressed {
        info: CompressionInfo,
        /// Chunks that start inside the file.
        in_range: usize,
        /// Chunk `in_range - 1` is cut by the end of the file: not checked.
        last_truncated: bool,
    },
    /// Uncompressed with CRC.db: chunk `k` is `[k·size, (k+1)·size)`.
    Crc {
        crc: CrcFile,
        /// Chunks that have both bytes and a checksum (a prefix).
        checked: u64,
    },
}

impl Layout {
    /// The compressed layout, with the findings about chunks the file cannot hold.
    fn compressed(info: CompressionInfo, file_len: u64, out: &mut Vec<ChecksumFinding>) -> Layout {
        let offs = &info.chunk_offsets;
        let n = offs.len();
        // Offsets are strictly increasing (CompressionInfo::parse checks it).
        let in_range = offs.partition_point(|&o| o < file_len);
        let first = offs.first().map_or(file_len, |&o| o.min(file_len));
        if first > 0 {
            out.push(ChecksumFinding::UncoveredBytes {
                file_range: 0..first,
            });
        }
        let mut last_truncated = false;
        if let Some(k) = in_range.checked_sub(1) {
            let s = offs.get(k).copied().unwrap_or(0);
            // The last chunk runs to the end of the file but needs its 4-byte checksum.
            let end = offs
                .get(k + 1)
                .copied()
                .unwrap_or_else(|| file_len.max(s.saturating_add(4)));
            if end > file_len {
                last_truncated = true;
                out.push(ChecksumFinding::TruncatedChunk {
                    index: k as u64,
                    file_range: s..end,
                    file_len,
                    uncompressed_range: uncompressed(&info, k as u64, 1),
                });
            }
        }
        if in_range < n {
            let s = offs.get(in_range).copied().unwrap_or(file_len);
            let e = offs.last().map_or(s, |&l| l.saturating_add(4));
            let count = (n - in_range) as u64;
            out.push(ChecksumFinding::ChunksOutOfRange {
                first: in_range as u64,
                count,
                file_range: s..e,
                file_len,
                uncompressed_range: uncompressed(&info, in_range as u64, count),
            });
        }
        Layout::Compressed {
            info,
            in_range,
            last_truncated,
        }
    }

    /// The CRC.db layout, with a finding when the checksum count is wrong.
    fn crc(
        crc: CrcFile,
        file_len: u64,
        algo: ChecksumAlgo,
        out: &mut Vec<ChecksumFinding>,
    ) -> Layout {
        let want = crc.chunk_count_for(file_len);
        let have = crc.checksums.len() as u64;
        if crc.check_len(file_len, algo).is_err() {
            out.push(ChecksumFinding::CrcCountMismatch {
                stored: have,
                expected: want,
                chunk_size: crc.chunk_size,
                file_len,
            });
        }
        Layout::Crc {
            checked: want.min(have),
            crc,
        }
    }
}

/// How many parts the pass over a `file_len`-byte Data.db is cut into: one
/// per thread allowed, each at least `min_part` bytes; a single part when
/// the digest cannot be put together from the parts' digests (SHA-1, and
/// the payload-only Adler-32 variant of `ka`/`la`).
fn part_count(
    opts: &ValidateOptions,
    file_len: u64,
    chunk_algo: ChecksumAlgo,
    digest: Option<DigestAlgo>,
) -> usize {
    let combinable = match digest {
        None => true,
        Some(DigestAlgo::Sha1) => false,
        // The payload-only variant is followed next to the whole-file one.
        Some(DigestAlgo::Checksum(ChecksumAlgo::Adler32)) => chunk_algo != ChecksumAlgo::Adler32,
        Some(DigestAlgo::Checksum(_)) => true,
    };
    if !combinable {
        return 1;
    }
    let threads = match opts.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    let by_size = file_len / opts.min_part.max(1);
    threads
        .min(usize::try_from(by_size).unwrap_or(usize::MAX))
        .max(1)
}

impl Layout {
    /// Cut `[0, file_len)` into at most `n` parts of about equal length, each
    /// starting where a chunk starts: `(byte range, index of its first
    /// chunk)`. A walker started there ([`Walker::starting_at`]) sees whole
    /// chunks only, so the parts can be checked independently.
    fn parts(&self, file_len: u64, n: usize) -> Vec<(Range<u64>, u64)> {
        let mut starts: Vec<(u64, u64)> = vec![(0, 0)];
        for i in 1..n as u64 {
            let target = (u128::from(file_len) * u128::from(i) / n as u128) as u64;
            let split = match self {
                // Page-aligned; any byte will do.
                Layout::Plain => Some((target & !4095, 0)),
                Layout::Compressed { info, in_range, .. } => {
                    let offs = &info.chunk_offsets;
                    let k = offs
                        .partition_point(|&o| o < target)
                        .clamp(1, (*in_range).max(1));
                    (k < *in_range)
                        .then(|| offs.get(k).map(|&o| (o, k as u64)))
                        .flatten()
                }
                Layout::Crc { crc, checked } => {
                    let size = u64::from(crc.chunk_size).max(1);
                    let k = (target / size).max(1);
                    (k < *checked).then_some((k * size, k))
                }
            };
            if let Some((at, k)) = split {
                if starts.last().is_some_and(|&(prev, _)| at > prev) && at < file_len {
                    starts.push((at, k));
                }
            }
        }
        let ends = starts.iter().skip(1).map(|&(at, _)| at).chain([file_len]);
        starts
            .iter()
            .zip(ends)
            .map(|(&(at, k), end)| (at..end, k))
            .collect()
    }
}

/// Uncompressed range of `count` compressed chunks from `first`.
fn uncompressed(info: &CompressionInfo, first: u64, count: u64) -> Range<u64> {
    let cl = info.chunk_length as u64;
    let s = first.saturating_mul(cl).min(info.data_length);
    let e = first
        .saturating_add(count)
        .saturating_mul(cl)
        .min(info.data_length);
    s..e
}

/// A running whole-file digest.
#[derive(Clone)]
enum Running {
    /// The CRC32 so far, and how to append to it by combination.
    Crc32(u32, Box<Crc32Combiner>),
    Adler32(u32),
    Sha1(Box<sha1_smol::Sha1>),
}

impl Running {
    fn new(algo: DigestAlgo) -> Running {
        match algo {
            DigestAlgo::Checksum(ChecksumAlgo::Crc32) => Running::Crc32(0, Box::default()),
            DigestAlgo::Checksum(ChecksumAlgo::Adler32) => Running::Adler32(1),
            DigestAlgo::Sha1 => Running::Sha1(Box::default()),
        }
    }

    fn update(&mut self, b: &[u8]) {
        match self {
            Running::Crc32(v, _) => {
                let mut h = crc32fast::Hasher::new_with_initial(*v);
                h.update(b);
                *v = h.finalize();
            }
            Running::Adler32(v) => {
                let mut a = adler::Adler32::from_checksum(*v);
                a.write_slice(b);
                *v = a.checksum();
            }
            Running::Sha1(s) => s.update(b),
        }
    }

    /// Extend by `len` bytes whose checksum (same algorithm) is `sum`. Only
    /// used when the algorithms agree, so never for SHA-1.
    fn append(&mut self, sum: u32, len: u64) {
        match self {
            Running::Crc32(v, c) => *v = c.combine(*v, sum, len),
            Running::Adler32(v) => *v = adler32_combine(*v, sum, len),
            Running::Sha1(_) => {}
        }
    }

    /// The checksum so far (None for SHA-1).
    fn checksum(&self) -> Option<u32> {
        match self {
            Running::Crc32(v, _) | Running::Adler32(v) => Some(*v),
            Running::Sha1(_) => None,
        }
    }

    fn value(&self) -> DigestValue {
        match self {
            Running::Crc32(v, _) => DigestValue::Checksum(*v),
            Running::Adler32(v) => DigestValue::Checksum(*v),
            Running::Sha1(s) => DigestValue::Sha1(s.digest().bytes()),
        }
    }
}

/// Combining CRC32s (zlib's `crc32_combine`): over GF(2), with reflected
/// polynomials, `crc(A ‖ B) = crc(A) · x^(8·len(B)) mod P ⊕ crc(B)`.
///
/// NOTE: `crc32fast::Hasher::combine` does the same but recomputes
/// `x^(8·len)` (one multiplication per set bit of `len`) on every call; chunk
/// payload lengths repeat, so the powers are cached here by length, making an
/// append one multiplication (measured: the combine went from ~10% of a
/// compressed-file pass to ~2%).
#[derive(Clone)]
pub struct Crc32Combiner {
    /// `x^(8·2^i) mod P`.
    pow2: [u32; 64],
    /// `x^(8·len) mod P` by `len`, filled on first use (0: not yet; no power is 0).
    cache: Vec<u32>,
}

impl Default for Crc32Combiner {
    fn default() -> Self {
        Self::new()
    }
}

impl Crc32Combiner {
    /// Lengths below this are cached (512 KiB of cache at most).
    const CACHED: usize = 1 << 17;
    /// The reflected CRC32 polynomial.
    const POLY: u32 = 0xedb8_8320;

    /// A combiner with an empty cache.
    pub fn new() -> Self {
        let mut pow2 = [0u32; 64];
        let mut p = 0x0080_0000; // x^8, reflected
        for x in pow2.iter_mut() {
            *x = p;
            p = Self::multiply(p, p);
        }
        Crc32Combiner {
            pow2,
            cache: Vec::new(),
        }
    }

    /// `a · b mod P`, reflected.
    fn multiply(a: u32, mut b: u32) -> u32 {
        let mut p = 0u32;
        for i in 0..32 {
            p ^= b & ((a >> (31 - i)) & 1).wrapping_neg();
            b = (b >> 1) ^ ((b & 1).wrapping_neg() & Self::POLY);
        }
        p
    }

    /// `x^(8·len) mod P`, reflected.
    fn x8n(&mut self, len: u64) -> u32 {
        let slot = usize::try_from(len).ok().filter(|&l| l < Self::CACHED);
        if let Some(l) = slot {
            if let Some(&v) = self.cache.get(l).filter(|&&v| v != 0) {
                return v;
            }
        }
        let mut p = 0x8000_0000; // x^0, reflected
        for (i, &x) in self.pow2.iter().enumerate() {
            if len >> i & 1 != 0 {
                p = Self::multiply(x, p);
            }
        }
        if let Some(l) = slot {
            if self.cache.len() <= l {
                self.cache
                    .resize((l + 1).next_power_of_two().min(Self::CACHED), 0);
            }
            if let Some(c) = self.cache.get_mut(l) {
                *c = p;
            }
        }
        p
    }

    /// The CRC32 of `A ‖ B` from `crc1 = crc32(A)`, `crc2 = crc32(B)` and `len2 = len(B)`.
    pub fn combine(&mut self, crc1: u32, crc2: u32, len2: u64) -> u32 {
        if len2 == 0 {
            return crc1;
        }
        Self::multiply(self.x8n(len2), crc1) ^ crc2
    }
}

/// zlib's `adler32_combine`: the Adler-32 of `A ‖ B` from `adler32(A)`,
/// `adler32(B)` and `len(B)`.
pub fn adler32_combine(adler1: u32, adler2: u32, len2: u64) -> u32 {
    const BASE: u64 = 65521;
    let rem = len2 % BASE;
    let (a1, b1) = ((adler1 & 0xffff) as u64, (adler1 >> 16) as u64);
    let (a2, b2) = ((adler2 & 0xffff) as u64, (adler2 >> 16) as u64);
    let sum1 = (a1 + a2 + BASE - 1) % BASE;
    let sum2 = (rem * a1 % BASE + b1 + b2 + BASE - rem) % BASE;
    (sum1 | (sum2 << 16)) as u32
}

/// What the bytes of a region are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Checked bytes of chunk `index`; `stored` is its CRC.db checksum, or
    /// None when the checksum follows inline (a [`Kind::Sum`] region).
    Payload { index: u64, stored: Option<u32> },
    /// The 4-byte inline checksum of chunk `index`.
    Sum { index: u64 },
    /// Bytes that are only digested.
    Raw,
}

/// A run of Data.db bytes `[start, end)` of one kind.
#[derive(Debug, Clone, Copy)]
struct Region {
    start: u64,
    end: u64,
    kind: Kind,
}

/// Walks Data.db region by region as reads arrive, hashing each chunk and
/// the digest(s). Regions may span reads.
struct Walker<'a> {
    layout: &'a Layout,
    algo: ChecksumAlgo,
    file_len: u64,
    /// Next byte to consume.
    pos: u64,
    /// The region being consumed (None: the next one is not started yet).
    region: Option<Region>,
    /// Next chunk to start.
    next_chunk: u64,
    hasher: Checksummer,
    /// A compressed payload was closed: (chunk, payload start, its checksum);
    /// its inline checksum comes next.
    pending: Option<(u64, u64, u32)>,
    sum: [u8; 4],
    digest: Option<Running>,
    /// Combine chunk checksums into the digest instead of hashing twice.
    combine: bool,
    /// `ka`/`la` compressed with an Adler-32 digest: the payload-only variant.
    payloads: Option<Running>,
    chunks_checked: u64,
    bad_chunks: u64,
    /// Bytes fed.
    bytes_read: u64,
}

impl<'a> Walker<'a> {
    fn new(
        layout: &'a Layout,
        algo: ChecksumAlgo,
        digest: Option<DigestAlgo>,
        file_len: u64,
    ) -> Self {
        let adler = DigestAlgo::Checksum(ChecksumAlgo::Adler32);
        let payloads = (matches!(layout, Layout::Compressed { .. })
            && digest == Some(adler)
            && algo == ChecksumAlgo::Adler32)
            .then(|| Running::new(adler));
        Walker {
            layout,
            algo,
            file_len,
            pos: 0,
            region: None,
            next_chunk: 0,
            hasher: algo.hasher(),
            pending: None,
            sum: [0; 4],
            digest: digest.map(Running::new),
            combine: digest == Some(DigestAlgo::Checksum(algo)),
            payloads,
            chunks_checked: 0,
            bad_chunks: 0,
            bytes_read: 0,
        }
    }

    /// Start at byte `pos`, where chunk `chunk` starts (a part of the file
    /// from [`Layout::parts`]); the digests then cover the part only.
    fn starting_at(mut self, pos: u64, chunk: u64) -> Self {
        self.pos = pos;
        self.next_chunk = chunk;
        self
    }

    /// Take in the walker of the part that follows this one's: counters
    /// added, digests combined.
    fn append(&mut self, next: &Walker) {
        let len = next.pos.saturating_sub(self.pos);
        if let (Some(d), Some(sum)) = (
            &mut self.digest,
            next.digest.as_ref().and_then(Running::checksum),
        ) {
            d.append(sum, len);
        }
        self.pos = next.pos;
        self.chunks_checked += next.chunks_checked;
        self.bad_chunks += next.bad_chunks;
        self.bytes_read += next.bytes_read;
    }

    /// The region starting at `self.pos < self.file_len`; never empty,
    /// except a compressed payload of 0 bytes (its checksum follows).
    fn next_region(&mut self) -> Region {
        let pos = self.pos;
        let raw_to = |end: u64| Region {
            start: pos,
            end,
            kind: Kind::Raw,
        };
        if let Some((index, _, _)) = self.pending {
            return Region {
                start: pos,
                end: pos + 4,
                kind: Kind::Sum { index },
            };
        }
        match self.layout {
            Layout::Plain => raw_to(self.file_len),
            Layout::Compressed {
                info,
                in_range,
                last_truncated,
            } => {
                let k = self.next_chunk as usize;
                let offs = &info.chunk_offsets;
                match offs.get(k) {
                    Some(&s) if k < *in_range => {
                        if pos < s {
                            return raw_to(s);
                        }
                        self.next_chunk += 1;
                        let end = offs
                            .get(k + 1)
                            .map_or(self.file_len, |&e| e.min(self.file_len));
                        if *last_truncated && k + 1 == *in_range {
                            return raw_to(end);
                        }
                        // Not truncated: end - s >= 4 (checked by Layout::compressed
                        // for the last chunk, by CompressionInfo::parse for the others).
                        Region {
                            start: s,
                            end: end.saturating_sub(4).max(s),
                            kind: Kind::Payload {
                                index: k as u64,
                                stored: None,
                            },
                        }
                    }
                    _ => raw_to(self.file_len),
                }
            }
            Layout::Crc { crc, checked } => {
                let k = self.next_chunk;
                if k >= *checked {
                    return raw_to(self.file_len);
                }
                self.next_chunk += 1;
                let r = crc.chunk_range(k as usize, self.file_len);
                match crc.checksums.get(k as usize) {
                    Some(&stored) => Region {
                        start: r.start,
                        end: r.end,
                        kind: Kind::Payload {
                            index: k,
                            stored: Some(stored),
                        },
                    },
                    None => raw_to(self.file_len),
                }
            }
        }
    }

    /// Consume `buf`, the Data.db bytes at `off` (the walker's position).
    fn feed(&mut self, off: u64, buf: &[u8], emit: &mut dyn FnMut(ChecksumFinding)) {
        let end = off + buf.len() as u64;
        loop {
            let r = match self.region {
                Some(r) if r.end <= self.pos => {
                    self.close(r, emit);
                    self.region = None;
                    continue;
                }
                Some(r) => r,
                None if self.pos < end => {
                    let r = self.next_region();
                    self.region = Some(r);
                    continue;
                }
                None => break,
            };
            if self.pos >= end {
                break;
            }
            let take_end = r.end.min(end);
            let (lo, hi) = ((self.pos - off) as usize, (take_end - off) as usize);
            let Some(bytes) = buf.get(lo..hi) else { break };
            match r.kind {
                Kind::Payload { .. } => {
                    self.hasher.update(bytes);
                    if !self.combine {
                        if let Some(d) = &mut self.digest {
                            d.update(bytes);
                        }
                    }
                }
                Kind::Sum { .. } => {
                    let at = (self.pos - r.start) as usize;
                    if let Some(dst) = self.sum.get_mut(at..at + bytes.len()) {
                        dst.copy_from_slice(bytes);
                    }
                    if let Some(d) = &mut self.digest {
                        d.update(bytes);
                    }
                }
                Kind::Raw => {
                    if let Some(d) = &mut self.digest {
                        d.update(bytes);
                    }
                    if let Some(p) = &mut self.payloads {
                        p.update(bytes);
                    }
                }
            }
            self.pos = take_end;
        }
    }

    /// Close a consumed region: compare checksums, extend the digests.
    fn close(&mut self, r: Region, emit: &mut dyn FnMut(ChecksumFinding)) {
        match r.kind {
            Kind::Payload { index, stored } => {
                let computed = std::mem::replace(&mut self.hasher, self.algo.hasher()).finish();
                let len = r.end - r.start;
                if self.combine {
                    if let Some(d) = &mut self.digest {
                        d.append(computed, len);
                    }
                }
                if let Some(p) = &mut self.payloads {
                    p.append(computed, len);
                }
                match stored {
                    Some(stored) => self.check(index, r.start..r.end, stored, computed, emit),
                    None => self.pending = Some((index, r.start, computed)),
                }
            }
            Kind::Sum { .. } => {
                if let Some((index, start, computed)) = self.pending.take() {
                    let stored = u32::from_be_bytes(self.sum);
                    self.check(index, start..r.end, stored, computed, emit);
                }
            }
            Kind::Raw => {}
        }
    }

    fn check(
        &mut self,
        index: u64,
        file_range: Range<u64>,
        stored: u32,
        computed: u32,
        emit: &mut dyn FnMut(ChecksumFinding),
    ) {
        self.chunks_checked += 1;
        if stored == computed {
            return;
        }
        self.bad_chunks += 1;
        let (uncompressed_range, source) = match self.layout {
            Layout::Compressed { info, .. } => (uncompressed(info, index, 1), Component::Data),
            _ => (file_range.clone(), Component::Crc),
        };
        emit(ChecksumFinding::BadChunk {
            index,
            file_range,
            uncompressed_range,
            stored,
            computed,
            algo: self.algo,
            source,
        });
    }

    /// At the end of the file: close the last region.
    fn finish(&mut self, emit: &mut dyn FnMut(ChecksumFinding)) {
        if let Some(r) = self.region.take() {
            if r.end <= self.pos {
                self.close(r, emit);
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::descriptor::Descriptor;
    use crate::index::corpus;
    use proptest::prelude::*;
    use std::path::{Path, PathBuf};
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A temporary directory, removed on drop.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new() -> TempDir {
            static N: AtomicUsize = AtomicUsize::new(0);
            let p = std::env::temp_dir().join(format!(
                "sstkit-checksums-{}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            ));
            std::fs::create_dir_all(&p).unwrap();
            TempDir(p)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// An sstable on disk: `files` are (suffix, bytes); TOC.txt lists them.
    fn write_sst(dir: &Path, version: &str, files: &[(&str, Vec<u8>)]) -> Sstable {
        let mut toc = String::new();
        for (suffix, bytes) in files {
            std::fs::write(dir.join(format!("{version}-1-big-{suffix}")), bytes).unwrap();
            toc.push_str(suffix);
            toc.push('\n');
        }
        toc.push_str("TOC.txt\n");
        std::fs::write(dir.join(format!("{version}-1-big-TOC.txt")), toc).unwrap();
        let (d, _) = Descriptor::from_path(&dir.join(format!("{version}-1-big-Data.db"))).unwrap();
        Sstable::open(d).unwrap()
    }

    fn sample(n: usize, seed: u32) -> Vec<u8> {
        let mut x = seed.wrapping_mul(2654435761).wrapping_add(1);
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as u8
            })
            .collect()
    }

    /// A compressed Data.db (payloads are arbitrary bytes: nothing is
    /// decompressed) and its CompressionInfo.db.
    struct Compressed {
        data: Vec<u8>,
        info: Vec<u8>,
        offsets: Vec<u64>,
        payloads: Vec<Vec<u8>>,
    }

    fn compressed(version: &str, chunk_len: u32, data_len: u64, sizes: &[usize]) -> Compressed {
        let algo = ChecksumAlgo::for_chunks(&crate::Version::parse(version).unwrap().features());
        let mut data = Vec::new();
        let mut offsets = Vec::new();
        let mut payloads = Vec::new();
        for (i, &n) in sizes.iter().enumerate() {
            offsets.push(data.len() as u64);
            let p = sample(n, i as u32 + 7);
            data.extend_from_slice(&p);
            data.extend_from_slice(&algo.checksum(&p).to_be_bytes());
            payloads.push(p);
        }
        let mut info = Vec::new();
        let class = b"LZ4Compressor";
        info.extend_from_slice(&(class.len() as u16).to_be_bytes());
        info.extend_from_slice(class);
        info.extend_from_slice(&0i32.to_be_bytes());
        info.extend_from_slice(&chunk_len.to_be_bytes());
        if crate::Version::parse(version)
            .unwrap()
            .features()
            .max_compressed_length
        {
            info.extend_from_slice(&i32::MAX.to_be_bytes());
        }
        info.extend_from_slice(&data_len.to_be_bytes());
        info.extend_from_slice(&(offsets.len() as i32).to_be_bytes());
        for o in &offsets {
            info.extend_from_slice(&o.to_be_bytes());
        }
        Compressed {
            data,
            info,
            offsets,
            payloads,
        }
    }

    fn crc_db(chunk: u32, data: &[u8], algo: ChecksumAlgo) -> Vec<u8> {
        let mut b = (chunk as i32).to_be_bytes().to_vec();
        for c in data.chunks(chunk as usize) {
            b.extend_from_slice(&algo.checksum(c).to_be_bytes());
        }
        b
    }

    fn run_with(
        sst: &Sstable,
        block: u64,
        threads: usize,
        min_part: u64,
    ) -> (ChecksumReport, Vec<ChecksumFinding>) {
        let mut v = Vec::new();
        let opts = ValidateOptions {
            block,
            threads,
            min_part,
        };
        let r = validate_checksums_with(sst, opts, |f| v.push(f)).unwrap();
        (r, v)
    }

    /// The pass on one thread; and, cut into parts as small as the chunks
    /// allow, on 2, 3 and 7 threads, which must give the same report and
    /// findings in the same order.
    fn run(sst: &Sstable, block: u64) -> (ChecksumReport, Vec<ChecksumFinding>) {
        let serial = run_with(sst, block, 1, DEFAULT_MIN_PART);
        for threads in [2, 3, 7] {
            let split = run_with(sst, block, threads, 1);
            assert_eq!(split, serial, "{threads} threads, block {block}");
        }
        serial
    }

    /// Parts start where chunks start, cover the file in order, and there
    /// are as many as asked when there are enough chunks.
    #[test]
    fn parts_start_at_chunks() {
        let t = TempDir::new();
        let (sst, c) = nb_compressed(&t.0);
        let info = CompressionInfo::parse(&c.info, &sst.features()).unwrap();
        let len = c.data.len() as u64;
        let layout = Layout::compressed(info, len, &mut Vec::new());
        for n in 1..10 {
            let parts = layout.parts(len, n);
            assert!(!parts.is_empty() && parts.len() <= n);
            assert_eq!(parts[0], (0..parts[0].0.end, 0));
            assert_eq!(parts.last().unwrap().0.end, len);
            for w in parts.windows(2) {
                assert_eq!(w[0].0.end, w[1].0.start);
                assert_eq!(c.offsets[w[1].1 as usize], w[1].0.start, "{parts:?}");
            }
            // Six chunks of varied sizes cut at equal byte targets: at
            // most six parts, and as many as asked up to three.
            assert!(
                parts.len() >= n.min(3) && parts.len() <= n.min(6),
                "{n}: {parts:?}"
            );
        }
        let crc = Layout::Crc {
            crc: CrcFile::parse(&crc_db(1000, &[7u8; 5500], ChecksumAlgo::Crc32)).unwrap(),
            checked: 6,
        };
        assert_eq!(
            crc.parts(5500, 3),
            vec![(0..1000, 0), (1000..3000, 1), (3000..5500, 3)]
        );
        assert_eq!(
            Layout::Plain.parts(3 << 12, 3),
            vec![(0..4096, 0), (4096..8192, 0), (8192..12288, 0)]
        );
    }

    const BLOCKS: &[u64] = &[1, 3, 4, 5, 7, 100, 1000, 1003, 4096, DEFAULT_BLOCK];

    /// Six chunks of 1000 uncompressed bytes, payloads of varied sizes (one empty).
    fn nb_compressed(dir: &Path) -> (Sstable, Compressed) {
        let c = compressed("nb", 1024, 5500, &[700, 1100, 0, 998, 300, 1]);
        let digest = ChecksumAlgo::Crc32
            .checksum(&c.data)
            .to_string()
            .into_bytes();
        let sst = write_sst(
            dir,
            "nb",
            &[
                ("Data.db", c.data.clone()),
                ("CompressionInfo.db", c.info.clone()),
                ("Digest.crc32", digest),
            ],
        );
        (sst, c)
    }

    #[test]
    fn compressed_valid_at_every_read_size() {
        let t = TempDir::new();
        let (sst, c) = nb_compressed(&t.0);
        for &b in BLOCKS {
            let (r, f) = run(&sst, b);
            assert!(f.is_empty(), "block {b}: {f:?}");
            assert!(r.valid() && r.has_checksums && r.has_digest && r.compressed);
            assert_eq!(r.chunks_checked, 6);
            assert_eq!(r.digest_scope, Some(DigestScope::WholeFile));
            assert_eq!(r.file_len, c.data.len() as u64);
            assert_eq!(r.data_len, 5500);
        }
        // Every byte goes through the IO layer, once.
        sst.io.begin_operation();
        let before = sst.io.stats().get(Component::Data).bytes;
        let r = validate_checksums(&sst, |_| {}).unwrap();
        let io = sst.io.stats();
        assert_eq!(io.get(Component::Data).bytes - before, c.data.len() as u64);
        assert_eq!(r.bytes_read, c.data.len() as u64);
    }

    #[test]
    fn compressed_flipped_bytes_name_the_chunk() {
        let t = TempDir::new();
        let (_, c) = nb_compressed(&t.0);
        for k in [0usize, 1, 3, 5] {
            // A payload byte, then a checksum byte.
            let start = c.offsets[k] as usize;
            let end = c.offsets.get(k + 1).map_or(c.data.len(), |&o| o as usize);
            for at in [start, end - 1] {
                let mut data = c.data.clone();
                data[at] ^= 0x10;
                let stored_digest = ChecksumAlgo::Crc32.checksum(&c.data);
                let t2 = TempDir::new();
                let sst = write_sst(
                    &t2.0,
                    "nb",
                    &[
                        ("Data.db", data.clone()),
                        ("CompressionInfo.db", c.info.clone()),
                        ("Digest.crc32", stored_digest.to_string().into_bytes()),
                    ],
                );
                for &b in BLOCKS {
                    let (r, f) = run(&sst, b);
                    assert_eq!(f.len(), 2, "chunk {k} byte {at} block {b}: {f:?}");
                    match &f[0] {
                        ChecksumFinding::BadChunk {
                            index,
                            file_range,
                            uncompressed_range,
                            source,
                            ..
                        } => {
                            assert_eq!(*index, k as u64);
                            assert_eq!(*file_range, start as u64..end as u64);
                            assert_eq!(
                                *uncompressed_range,
                                k as u64 * 1024..((k as u64 + 1) * 1024).min(5500)
                            );
                            assert_eq!(*source, Component::Data);
                        }
                        other => panic!("{other:?}"),
                    }
                    assert_eq!(
                        f[1],
                        ChecksumFinding::DigestMismatch {
                            algo: DigestAlgo::Checksum(ChecksumAlgo::Crc32),
                            stored: DigestValue::Checksum(stored_digest),
                            computed: DigestValue::Checksum(ChecksumAlgo::Crc32.checksum(&data)),
                        }
                    );
                    assert!(!r.valid());
                    assert_eq!((r.bad_chunks, r.chunks_checked, r.errors), (1, 6, 2));
                }
            }
        }
    }

    #[test]
    fn truncated_compressed_data_is_a_finding() {
        let t = TempDir::new();
        let (_, c) = nb_compressed(&t.0);
        let digest = ChecksumAlgo::Crc32
            .checksum(&c.data)
            .to_string()
            .into_bytes();
        for len in 0..c.data.len() {
            let t2 = TempDir::new();
            let sst = write_sst(
                &t2.0,
                "nb",
                &[
                    ("Data.db", c.data[..len].to_vec()),
                    ("CompressionInfo.db", c.info.clone()),
                    ("Digest.crc32", digest.clone()),
                ],
            );
            let (r, f) = run(&sst, 333);
            assert!(!r.valid(), "len {len}");
            assert!(
                matches!(f.last(), Some(ChecksumFinding::DigestMismatch { .. })),
                "len {len}: {f:?}"
            );
            // The chunk holding the cut is truncated, the ones after it out of range.
            let cut = c.offsets.partition_point(|&o| o < len as u64);
            let truncated = f
                .iter()
                .any(|x| matches!(x, ChecksumFinding::TruncatedChunk { .. }));
            let oor = f.iter().find_map(|x| match x {
                ChecksumFinding::ChunksOutOfRange { first, count, .. } => Some((*first, *count)),
                _ => None,
            });
            assert_eq!(
                oor.map(|o| o.0 + o.1),
                (cut < 6).then_some(6),
                "len {len}: {f:?}"
            );
            assert_eq!(oor.map(|o| o.0), (cut < 6).then_some(cut as u64));
            // Cutting exactly at a chunk start leaves no partial chunk. The
            // last chunk runs to the end of the file: cut, it is truncated
            // only without room for its checksum, else it mismatches.
            let at_boundary = c.offsets.contains(&(len as u64)) || len == 0;
            let last = c.offsets[5] as usize;
            let bad_last = len >= last + 4;
            assert_eq!(truncated, !at_boundary && !bad_last, "len {len}: {f:?}");
            let bad: Vec<u64> = f
                .iter()
                .filter_map(|x| match x {
                    ChecksumFinding::BadChunk { index, .. } => Some(*index),
                    _ => None,
                })
                .collect();
            assert_eq!(
                bad,
                if bad_last { vec![5] } else { vec![] },
                "len {len}: {f:?}"
            );
            assert_eq!(r.chunks_checked, cut as u64 - u64::from(truncated));
        }
    }

    #[test]
    fn crc_db_valid_bad_and_truncated() {
        let data = sample(10_000, 3);
        for (v, algo, digest_name) in [
            ("nb", ChecksumAlgo::Crc32, "Digest.crc32"),
            ("la", ChecksumAlgo::Adler32, "Digest.adler32"),
            ("ka", ChecksumAlgo::Adler32, "Digest.sha1"),
        ] {
            let digest = algo.checksum(&data).to_string().into_bytes();
            let t = TempDir::new();
            let crc = crc_db(1024, &data, algo);
            let sst = write_sst(
                &t.0,
                v,
                &[
                    ("Data.db", data.clone()),
                    ("CRC.db", crc.clone()),
                    (digest_name, digest.clone()),
                ],
            );
            for &b in BLOCKS {
                let (r, f) = run(&sst, b);
                assert!(f.is_empty() && r.valid(), "{v} block {b}: {f:?}");
                assert_eq!((r.chunks_checked, r.compressed), (10, false));
                assert_eq!(r.chunk_algo, Some(algo));
            }
            // A flipped byte in chunk 4.
            let mut bad = data.clone();
            bad[4 * 1024 + 17] ^= 1;
            let t = TempDir::new();
            let sst = write_sst(
                &t.0,
                v,
                &[
                    ("Data.db", bad.clone()),
                    ("CRC.db", crc.clone()),
                    (digest_name, digest.clone()),
                ],
            );
            for &b in BLOCKS {
                let (_, f) = run(&sst, b);
                assert_eq!(f.len(), 2, "{f:?}");
                assert!(matches!(
                    &f[0],
                    ChecksumFinding::BadChunk { index: 4, file_range, uncompressed_range, source: Component::Crc, .. }
                        if *file_range == (4096..5120) && *uncompressed_range == (4096..5120)
                ));
                assert!(matches!(f[1], ChecksumFinding::DigestMismatch { .. }));
            }
            // Truncated mid-chunk: the partial chunk mismatches, the count is wrong.
            let t = TempDir::new();
            let sst = write_sst(
                &t.0,
                v,
                &[
                    ("Data.db", data[..5000].to_vec()),
                    ("CRC.db", crc.clone()),
                    (digest_name, digest),
                ],
            );
            let (r, f) = run(&sst, 4096);
            assert!(!r.valid());
            assert!(matches!(
                f[0],
                ChecksumFinding::CrcCountMismatch {
                    stored: 10,
                    expected: 5,
                    chunk_size: 1024,
                    file_len: 5000
                }
            ));
            assert!(
                matches!(f[1], ChecksumFinding::BadChunk { index: 4, .. }),
                "{f:?}"
            );
            assert!(matches!(f[2], ChecksumFinding::DigestMismatch { .. }));
        }
    }

    #[test]
    fn legacy_payload_only_digest_and_sha1_digests() {
        // ka/la compressed: a digest over the payloads only is accepted.
        let c = compressed("la", 1024, 3000, &[500, 600, 700]);
        let payloads: Vec<u8> = c.payloads.concat();
        let t = TempDir::new();
        let sst = write_sst(
            &t.0,
            "la",
            &[
                ("Data.db", c.data.clone()),
                ("CompressionInfo.db", c.info.clone()),
                (
                    "Digest.adler32",
                    ChecksumAlgo::Adler32
                        .checksum(&payloads)
                        .to_string()
                        .into_bytes(),
                ),
            ],
        );
        for &b in BLOCKS {
            let (r, f) = run(&sst, b);
            assert!(f.is_empty(), "{f:?}");
            assert_eq!(r.digest_scope, Some(DigestScope::PayloadsOnly));
            assert_eq!(r.chunk_algo, Some(ChecksumAlgo::Adler32));
        }
        // Pre-2.1 Digest.sha1: sha1sum output.
        let data = sample(5000, 9);
        let hex = sha1_smol::Sha1::from(&data).digest().to_string();
        for (text, ok) in [
            (format!("{hex}  nb-1-big-Data.db"), true),
            (hex.clone(), true),
            (format!("{}0  x", &hex[..39]), false),
        ] {
            let t = TempDir::new();
            let sst = write_sst(
                &t.0,
                "nb",
                &[
                    ("Data.db", data.clone()),
                    ("CRC.db", crc_db(4096, &data, ChecksumAlgo::Crc32)),
                    ("Digest.sha1", text.into_bytes()),
                ],
            );
            let (r, f) = run(&sst, 1000);
            assert_eq!(r.digest_algo, Some(DigestAlgo::Sha1));
            assert_eq!(r.valid(), ok, "{f:?}");
            if !ok {
                assert!(matches!(
                    &f[..],
                    [ChecksumFinding::DigestMismatch { algo: DigestAlgo::Sha1, computed, .. }]
                        if computed.to_string() == hex
                ));
            }
        }
    }

    #[test]
    fn missing_and_corrupt_metadata() {
        let data = sample(3000, 1);
        let crc = crc_db(1024, &data, ChecksumAlgo::Crc32);
        let digest = ChecksumAlgo::Crc32.checksum(&data).to_string().into_bytes();
        // No checksums, no digest: warnings only.
        let t = TempDir::new();
        let sst = write_sst(&t.0, "nb", &[("Data.db", data.clone())]);
        let (r, f) = run(&sst, 100);
        assert_eq!(
            f,
            vec![
                ChecksumFinding::MissingChecksums,
                ChecksumFinding::MissingDigest
            ]
        );
        assert!(r.valid() && !r.has_checksums && !r.has_digest);
        assert_eq!((r.warnings, r.errors), (2, 0));
        // Undecodable CRC.db and CompressionInfo.db: findings; the digest is still checked.
        for (name, bytes) in [
            ("CRC.db", vec![0, 0, 4]),
            ("CRC.db", vec![0x80, 0, 0, 0]),
            ("CompressionInfo.db", vec![0, 0xff, b'x']),
            // A chunk count far beyond the file: no allocation by it.
            ("CompressionInfo.db", {
                let mut c = compressed("nb", 1024, 3000, &[10]).info;
                let n = c.len();
                c[n - 12..n - 8].copy_from_slice(&i32::MAX.to_be_bytes());
                c
            }),
        ] {
            let t = TempDir::new();
            let sst = write_sst(
                &t.0,
                "nb",
                &[
                    ("Data.db", data.clone()),
                    (name, bytes),
                    ("Digest.crc32", digest.clone()),
                ],
            );
            let (r, f) = run(&sst, 100);
            assert!(!r.valid() && r.has_checksums && r.has_digest);
            assert!(
                matches!(&f[..], [ChecksumFinding::CorruptMetadata { component, error }]
                    if component.suffix() == name && error.file.is_some()),
                "{name}: {f:?}"
            );
            assert_eq!(r.digest_scope, Some(DigestScope::WholeFile));
        }
        // Corrupt digest text; digest listed but absent.
        let t = TempDir::new();
        let sst = write_sst(
            &t.0,
            "nb",
            &[
                ("Data.db", data.clone()),
                ("CRC.db", crc.clone()),
                ("Digest.crc32", b"12x".to_vec()),
            ],
        );
        let (r, f) = run(&sst, 100);
        assert!(matches!(
            &f[..],
            [ChecksumFinding::CorruptMetadata {
                component: Component::Digest,
                ..
            }]
        ));
        assert_eq!(r.chunks_checked, 3);
        std::fs::remove_file(t.0.join("nb-1-big-Digest.crc32")).unwrap();
        let (r, f) = run(&sst, 100);
        assert_eq!(
            f,
            vec![ChecksumFinding::MissingComponent {
                component: Component::Digest
            }]
        );
        assert!(!r.valid() && !r.has_digest);
        // Data.db absent: an error, not a finding.
        std::fs::remove_file(t.0.join("nb-1-big-Data.db")).unwrap();
        let e = validate_checksums(&sst, |_| {}).unwrap_err();
        assert!(e.is_io(), "{e}");
    }

    #[test]
    fn uncovered_bytes_and_empty_files() {
        // Chunk table starting at offset 10.
        let c = compressed("nb", 1024, 100, &[50]);
        let mut data = vec![0u8; 10];
        data.extend_from_slice(&c.data);
        let mut info = c.info.clone();
        let n = info.len();
        info[n - 8..].copy_from_slice(&10u64.to_be_bytes());
        let t = TempDir::new();
        let sst = write_sst(
            &t.0,
            "nb",
            &[("Data.db", data.clone()), ("CompressionInfo.db", info)],
        );
        let (r, f) = run(&sst, 7);
        assert_eq!(
            f,
            vec![
                ChecksumFinding::UncoveredBytes { file_range: 0..10 },
                ChecksumFinding::MissingDigest
            ]
        );
        assert_eq!(r.chunks_checked, 1);
        // Empty Data.db, empty chunk table.
        let c = compressed("nb", 1024, 0, &[]);
        let t = TempDir::new();
        let sst = write_sst(
            &t.0,
            "nb",
            &[
                ("Data.db", vec![]),
                ("CompressionInfo.db", c.info),
                ("Digest.crc32", b"0".to_vec()),
            ],
        );
        let (r, f) = run(&sst, 7);
        assert!(f.is_empty() && r.valid(), "{f:?}");
    }

    #[test]
    fn display_names_location() {
        let f = ChecksumFinding::BadChunk {
            index: 3,
            file_range: 0x100..0x200,
            uncompressed_range: 0..1,
            stored: 1,
            computed: 2,
            algo: ChecksumAlgo::Crc32,
            source: Component::Crc,
        };
        assert_eq!(
            f.to_string(),
            "Data.db+0x100..0x200: chunk 3: crc32 checksum mismatch (stored 0x00000001, computed \
             0x00000002) (checksum from CRC.db)"
        );
        assert_eq!(f.class(), "bad_chunk");
        assert!(f.is_error() && !ChecksumFinding::MissingDigest.is_error());
        assert_eq!(DigestValue::Sha1([0xab; 20]).to_string(), "ab".repeat(20));
    }

    proptest! {
        // Each case writes sstables to disk: fewer cases than the default.
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn adler32_combine_matches_direct(a in proptest::collection::vec(any::<u8>(), 0..300),
                                          b in proptest::collection::vec(any::<u8>(), 0..70000)) {
            let whole: Vec<u8> = a.iter().chain(b.iter()).copied().collect();
            let (x, y) = (ChecksumAlgo::Adler32.checksum(&a), ChecksumAlgo::Adler32.checksum(&b));
            prop_assert_eq!(adler32_combine(x, y, b.len() as u64), ChecksumAlgo::Adler32.checksum(&whole));
        }

        #[test]
        fn crc32_combine_matches_direct(a in proptest::collection::vec(any::<u8>(), 0..300),
                                        b in proptest::collection::vec(any::<u8>(), 0..70000)) {
            let whole: Vec<u8> = a.iter().chain(b.iter()).copied().collect();
            let (x, y) = (ChecksumAlgo::Crc32.checksum(&a), ChecksumAlgo::Crc32.checksum(&b));
            let mut c = Crc32Combiner::new();
            for _ in 0..2 {
                prop_assert_eq!(c.combine(x, y, b.len() as u64), ChecksumAlgo::Crc32.checksum(&whole));
            }
        }

        #[test]
        fn damaged_metadata_and_data_never_panic(info in proptest::collection::vec(any::<u8>(), 0..80),
                                                 crc in proptest::collection::vec(any::<u8>(), 0..40),
                                                 cut in 0usize..3000, flip in 0usize..3000) {
            let c = compressed("nb", 1024, 2500, &[900, 1000, 400]);
            let mut data = c.data.clone();
            if let Some(x) = data.get_mut(flip) { *x ^= 0x55; }
            data.truncate(cut);
            let mut mutated = c.info.clone();
            for (i, b) in info.iter().enumerate().take(8) {
                let at = (*b as usize * 7 + i) % mutated.len();
                mutated[at] ^= *b;
            }
            let t = TempDir::new();
            for (name, bytes) in [("CompressionInfo.db", info.clone()), ("CompressionInfo.db", mutated), ("CRC.db", crc.clone())] {
                let sst = write_sst(&t.0, "nb", &[("Data.db", data.clone()), (name, bytes), ("Digest.crc32", b"1".to_vec())]);
                let (r, found) = run_with(&sst, 512, 1, DEFAULT_MIN_PART);
                prop_assert!(r.bytes_read == data.len() as u64);
                prop_assert_eq!(run_with(&sst, 512, 3, 1), (r, found));
                let _ = std::fs::remove_file(t.0.join(format!("nb-1-big-{name}")));
            }
        }
    }

    /// Throughput against plain reads of the same file (page cache warm):
    /// `SSTKIT_BENCH_DATA=/path/nb-1-big-Data.db cargo test --release -p
    /// sstkit-format --lib checksums::tests::throughput -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn throughput() {
        use std::io::Read;
        use std::time::Instant;
        let Ok(p) = std::env::var("SSTKIT_BENCH_DATA") else {
            eprintln!("set SSTKIT_BENCH_DATA to a Data.db");
            return;
        };
        let open = || Sstable::open_path(Path::new(&p)).unwrap();
        let mbps = |len: u64, t: std::time::Duration| len as f64 / t.as_secs_f64() / 1e6;
        for _ in 0..5 {
            // read(2) into one reused 1 MiB buffer, like cat.
            let t = Instant::now();
            let mut f = std::fs::File::open(&p).unwrap();
            let mut buf = vec![0u8; 1 << 20];
            let mut len = 0u64;
            loop {
                let n = f.read(&mut buf).unwrap();
                if n == 0 {
                    break;
                }
                len += n as u64;
            }
            let raw = t.elapsed();
            // The same scan through the IO layer, nothing computed.
            let sst = open();
            let t = Instant::now();
            let mut seen = 0u64;
            sst.io
                .scan(Component::Data, 0, len, DEFAULT_BLOCK as usize, |_, b| {
                    seen += b.len() as u64;
                    Ok(())
                })
                .unwrap();
            assert_eq!(seen, len);
            let layer = t.elapsed();
            // The CRC alone, over bytes already in memory (1 MiB buffer).
            let t = Instant::now();
            let mut h = crc32fast::Hasher::new();
            let mut left = len;
            while left > 0 {
                let n = left.min(buf.len() as u64);
                h.update(&buf[..n as usize]);
                left -= n;
            }
            std::hint::black_box(h.finalize());
            let crc = t.elapsed();
            let sst = open();
            let t = Instant::now();
            let r = validate_checksums(&sst, |_| {}).unwrap();
            let vc = t.elapsed();
            assert_eq!(r.bytes_read, len);
            eprintln!(
                "{len} bytes: read(2) {:.0} MB/s, IO layer scan {:.0} MB/s, CRC alone {:.0} MB/s, \
                 validate {:.0} MB/s ({:.0}% of read(2), {:.0}% of the IO layer scan)",
                mbps(len, raw),
                mbps(len, layer),
                mbps(len, crc),
                mbps(len, vc),
                100.0 * raw.as_secs_f64() / vc.as_secs_f64(),
                100.0 * layer.as_secs_f64() / vc.as_secs_f64()
            );
        }
    }

    /// Every corpus sstable sstkit can open: valid, except in the sets that
    /// are corrupt on purpose; the integrity_check sets fail as described.
    #[test]
    fn corpus_sstables() {
        let files = corpus::files(|c| c == "Data.db");
        if files.is_empty() {
            return;
        }
        let (mut valid, mut corrupt_invalid, mut chunks) = (0, 0, 0);
        let mut scopes = std::collections::BTreeMap::new();
        let mut failures = Vec::new();
        for f in &files {
            let Ok(sst) = Sstable::open(f.desc.clone()) else {
                continue;
            };
            let mut found = Vec::new();
            let r = match validate_checksums(&sst, |x| found.push(x)) {
                Ok(r) => r,
                // bigsummary: Data.db is not in the TOC.
                Err(e) if f.is_corrupt() => {
                    eprintln!("corrupt set {}: {e}", f.path.display());
                    continue;
                }
                Err(e) => {
                    failures.push(format!("{}: {e}", f.path.display()));
                    continue;
                }
            };
            chunks += r.chunks_checked;
            *scopes.entry(format!("{:?}", r.digest_scope)).or_insert(0) += 1;
            let classes: Vec<&str> = found
                .iter()
                .filter(|x| x.is_error())
                .map(|x| x.class())
                .collect();
            let set = f.set.rsplit('/').next().unwrap_or("");
            if set.ends_with("invalid_checksums") {
                assert!(classes.contains(&"bad_chunk"), "{set}: {classes:?}");
            }
            if set.ends_with("invalid_digest") {
                assert_eq!(classes, ["digest_mismatch"], "{set}");
            }
            if r.valid() {
                valid += 1;
            } else if f.is_corrupt() {
                eprintln!("corrupt set {}: {classes:?}", f.path.display());
                corrupt_invalid += 1;
            } else {
                failures.push(format!("{}: {found:?}", f.path.display()));
            }
        }
        eprintln!(
            "validate_checksums: {valid} valid ({chunks} chunks), {corrupt_invalid} invalid in \
             corrupt sets, of {}; digest scopes {scopes:?}",
            files.len()
        );
        assert!(failures.is_empty(), "{failures:#?}");
    }
}
