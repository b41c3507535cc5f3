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
//! whole file's: one pass costs the kernel's copy plus the checksum, and
//! parts run both on every core. SHA-1 digests and the payload-only
//! Adler-32 variant cannot be combined: one pass.
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
//! checksums) is accepted, as [`Digest::verify_compressed`](crate::digest::Digest::verify_compressed) does.

mod combine;
mod digest_text;
mod findings;
mod plan;
#[cfg(test)]
mod tests;
mod walker;

pub use combine::{adler32_combine, Crc32Combiner};
pub use findings::{ChecksumFinding, DigestAlgo, DigestValue};

use std::sync::atomic::{AtomicU64, Ordering};

use combine::Running;
use digest_text::parse_digest;
use plan::{part_count, Layout};
use walker::Walker;

use crate::component::Component;
use crate::compression::CompressionInfo;
use crate::crc::CrcFile;
use crate::digest::{ChecksumAlgo, DigestScope};
use crate::error::{Error, ErrorKind, Result};
use crate::sstable::Sstable;

/// Data.db bytes per request (256 KiB; a quarter of the IO layer's default
/// read-ahead window): small enough to stay in the CPU cache between the
/// read and the checksum, large enough that the per-request cost vanishes.
pub const DEFAULT_BLOCK: u64 = 256 << 10;

/// The smallest part of Data.db checked on a thread of its own (2 MiB:
/// far more copying and checksumming than starting a thread costs; small
/// parts matter because `validate` waits for this pass before its walk).
pub const DEFAULT_MIN_PART: u64 = 2 << 20;

/// A Digest file longer than this is not a digest (the longest legal one is
/// the pre-2.1 `"<sha1 hex>  <file name>"` form).
const MAX_DIGEST_LEN: u64 = 4096;

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
    let compressed = sst.data_compressed();
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
