//! What the checksum pass reports: one [`ChecksumFinding`] per problem, and
//! the digest algorithms and values they name.

use std::ops::Range;

use crate::component::Component;
use crate::digest::ChecksumAlgo;
use crate::error::Error;

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

/// One problem found by [`validate_checksums`](super::validate_checksums). Ranges are half-open byte
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
