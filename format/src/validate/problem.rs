//! Findings of `validate` and `scrub`: a [`Problem`] says what is wrong
//! ([`ProblemClass`], a stable string), where (component, byte offset,
//! compressed chunk), which partition, and a message.

use std::fmt;

use crate::checksums::ChecksumFinding;
use crate::component::Component;
use crate::error::{Error, ErrorKind};

/// The kind of a [`Problem`]. [`ProblemClass::as_str`] is stable: scripts
/// may match on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ProblemClass {
    /// Partitions not strictly increasing in (token, key) order (including
    /// duplicate keys).
    PartitionOrder,
    /// Rows / range tombstone markers not strictly increasing in clustering
    /// order within a partition (including duplicates).
    ClusteringOrder,
    /// A range tombstone opened and never closed (end of partition, or a
    /// second open while one is open).
    RtUnclosed,
    /// A range tombstone closed (or a boundary) while none is open.
    RtNotOpened,
    /// A range tombstone closed with a deletion other than the one it opened with.
    RtMismatch,
    /// A `prev_unfiltered_size` that is not the distance to the previous unfiltered.
    PrevSizeMismatch,
    /// A `row_size` / `marker_size` that does not match the body.
    RowSizeMismatch,
    /// A deletion time or expiration that cannot be valid (negative local
    /// deletion time, TTL overflow).
    InvalidDeletion,
    /// A static row where none can be, or a missing one.
    StaticRow,
    /// An Index.db entry that does not point at the partition with its key,
    /// or a partition without entry (or the reverse).
    IndexMismatch,
    /// A promoted index (row index) that disagrees with the data.
    PromotedIndexMismatch,
    /// Summary.db disagrees with Index.db.
    SummaryMismatch,
    /// Statistics.db (first/last key, partition and row counts) disagrees with the data.
    MetadataMismatch,
    /// A partition key the bloom filter says is absent.
    BloomFilterMiss,
    /// A checksum mismatch.
    Checksum,
    /// Bytes that do not decode.
    DecodeError,
    /// Data skipped by scrub (byte range, keys when known).
    DataLost,
    /// A chunk whose bytes do not match its stored checksum (the checksum
    /// pass, [`crate::checksums`]).
    BadChunk,
    /// A compressed chunk cut by the end of Data.db: not checked.
    TruncatedChunk,
    /// Compressed chunks that start at or past the end of Data.db.
    ChunksOutOfRange,
    /// Bytes of a compressed Data.db that no chunk covers.
    UncoveredBytes,
    /// CRC.db holds a number of checksums that does not match Data.db's length.
    CrcCountMismatch,
    /// The whole-file digest (Digest.crc32, .adler32, .sha1) does not match Data.db.
    DigestMismatch,
    /// A checksum component (CompressionInfo.db, CRC.db, Digest) that does not decode.
    CorruptMetadata,
    /// A component listed in TOC.txt whose file is missing.
    MissingComponent,
    /// Neither CompressionInfo.db nor CRC.db: chunks cannot be checked (a warning).
    MissingChecksums,
    /// No Digest component: no whole-file check (a warning).
    MissingDigest,
    /// A component file present next to the sstable that TOC.txt does not
    /// list (a note: readers that trust the TOC ignore it).
    UnlistedComponent,
}

/// How much a [`ProblemClass`] matters: only errors make an sstable invalid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    /// The sstable is not valid (exit 1).
    Error,
    /// Something could not be checked.
    Warning,
    /// Worth knowing, not a problem.
    Note,
}

impl Severity {
    /// The stable name: `error`, `warning`, `note`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        }
    }
}

impl ProblemClass {
    /// Every class.
    pub const ALL: [ProblemClass; 28] = [
        ProblemClass::PartitionOrder,
        ProblemClass::ClusteringOrder,
        ProblemClass::RtUnclosed,
        ProblemClass::RtNotOpened,
        ProblemClass::RtMismatch,
        ProblemClass::PrevSizeMismatch,
        ProblemClass::RowSizeMismatch,
        ProblemClass::InvalidDeletion,
        ProblemClass::StaticRow,
        ProblemClass::IndexMismatch,
        ProblemClass::PromotedIndexMismatch,
        ProblemClass::SummaryMismatch,
        ProblemClass::MetadataMismatch,
        ProblemClass::BloomFilterMiss,
        ProblemClass::Checksum,
        ProblemClass::DecodeError,
        ProblemClass::DataLost,
        ProblemClass::BadChunk,
        ProblemClass::TruncatedChunk,
        ProblemClass::ChunksOutOfRange,
        ProblemClass::UncoveredBytes,
        ProblemClass::CrcCountMismatch,
        ProblemClass::DigestMismatch,
        ProblemClass::CorruptMetadata,
        ProblemClass::MissingComponent,
        ProblemClass::MissingChecksums,
        ProblemClass::MissingDigest,
        ProblemClass::UnlistedComponent,
    ];

    /// The stable name (`partition_order`, `clustering_order`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ProblemClass::PartitionOrder => "partition_order",
            ProblemClass::ClusteringOrder => "clustering_order",
            ProblemClass::RtUnclosed => "rt_unclosed",
            ProblemClass::RtNotOpened => "rt_not_opened",
            ProblemClass::RtMismatch => "rt_mismatch",
            ProblemClass::PrevSizeMismatch => "prev_size_mismatch",
            ProblemClass::RowSizeMismatch => "row_size_mismatch",
            ProblemClass::InvalidDeletion => "invalid_deletion",
            ProblemClass::StaticRow => "static_row",
            ProblemClass::IndexMismatch => "index_mismatch",
            ProblemClass::PromotedIndexMismatch => "promoted_index_mismatch",
            ProblemClass::SummaryMismatch => "summary_mismatch",
            ProblemClass::MetadataMismatch => "metadata_mismatch",
            ProblemClass::BloomFilterMiss => "bloom_filter_miss",
            ProblemClass::Checksum => "checksum",
            ProblemClass::DecodeError => "decode_error",
            ProblemClass::DataLost => "data_lost",
            ProblemClass::BadChunk => "bad_chunk",
            ProblemClass::TruncatedChunk => "truncated_chunk",
            ProblemClass::ChunksOutOfRange => "chunks_out_of_range",
            ProblemClass::UncoveredBytes => "uncovered_bytes",
            ProblemClass::CrcCountMismatch => "crc_count_mismatch",
            ProblemClass::DigestMismatch => "digest_mismatch",
            ProblemClass::CorruptMetadata => "corrupt_metadata",
            ProblemClass::MissingComponent => "missing_component",
            ProblemClass::MissingChecksums => "missing_checksums",
            ProblemClass::MissingDigest => "missing_digest",
            ProblemClass::UnlistedComponent => "unlisted_component",
        }
    }

    /// Whether findings of this class make the sstable invalid.
    pub fn severity(self) -> Severity {
        match self {
            ProblemClass::MissingChecksums | ProblemClass::MissingDigest => Severity::Warning,
            ProblemClass::UnlistedComponent => Severity::Note,
            _ => Severity::Error,
        }
    }

    /// The class named `s`.
    pub fn parse(s: &str) -> Option<ProblemClass> {
        Self::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// The class of a decoding error: checksum, size mismatch, or decode error.
    pub fn of_error(e: &Error) -> ProblemClass {
        match &e.kind {
            ErrorKind::ChecksumMismatch { .. } => ProblemClass::Checksum,
            ErrorKind::BadValue(_) if matches!(e.what, "row body" | "marker body") => {
                ProblemClass::RowSizeMismatch
            }
            _ => ProblemClass::DecodeError,
        }
    }
}

impl fmt::Display for ProblemClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One finding.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    /// What is wrong.
    pub class: ProblemClass,
    /// The component concerned.
    pub component: Component,
    /// Byte offset: uncompressed Data.db offset for Data.db, otherwise the
    /// offset in the component.
    pub offset: u64,
    /// The compressed chunk holding `offset` (compressed Data.db only).
    pub chunk: Option<u64>,
    /// The partition key concerned, raw (render it typed and as hex).
    pub partition_key: Option<Vec<u8>>,
    /// What was found.
    pub message: String,
    /// For [`ProblemClass::DataLost`]: the end (exclusive) of the lost
    /// uncompressed byte range that starts at `offset`.
    pub end: Option<u64>,
    /// For [`ProblemClass::DataLost`]: other keys known to be lost (from the
    /// index), besides `partition_key`.
    pub lost_keys: Vec<Vec<u8>>,
    /// For findings of the checksum pass: the finding itself (ranges,
    /// stored and computed checksums), for renderers to add as detail.
    pub checksum: Option<Box<ChecksumFinding>>,
}

impl Problem {
    /// A problem with no chunk, key, range or lost keys.
    pub fn new(
        class: ProblemClass,
        component: Component,
        offset: u64,
        message: impl Into<String>,
    ) -> Problem {
        Problem {
            class,
            component,
            offset,
            chunk: None,
            partition_key: None,
            message: message.into(),
            end: None,
            lost_keys: Vec::new(),
            checksum: None,
        }
    }

    /// Attach a partition key.
    pub fn key(mut self, key: &[u8]) -> Problem {
        self.partition_key = Some(key.to_vec());
        self
    }

    /// Attach a chunk index.
    pub fn chunk(mut self, chunk: Option<u64>) -> Problem {
        self.chunk = chunk;
        self
    }

    /// A problem from a decoding error (class from [`ProblemClass::of_error`];
    /// component, offset and chunk from the error; `default_component` and
    /// `default_offset` when the error has none).
    pub fn from_error(e: &Error, default_component: Component, default_offset: u64) -> Problem {
        let mut msg = e.kind.to_string();
        if !e.what.is_empty() {
            msg.push_str(&format!(" (reading {})", e.what));
        }
        Problem {
            chunk: e.chunk.map(u64::from),
            ..Problem::new(
                ProblemClass::of_error(e),
                e.component.unwrap_or(default_component),
                e.offset.unwrap_or(default_offset),
                msg,
            )
        }
    }
}

/// The checksum pass's findings in the classes of the shared finding shape
/// (kept here, with the classes, so that the pass does not depend on them).
impl ChecksumFinding {
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
}

impl From<ChecksumFinding> for Problem {
    /// Class from the finding's kind; offset: the uncompressed Data.db
    /// offset of a chunk finding, where the stored bytes start for
    /// uncovered bytes, the error's offset for corrupt metadata, else 0.
    fn from(f: ChecksumFinding) -> Problem {
        let class = f.problem_class();
        let offset = match &f {
            ChecksumFinding::CorruptMetadata { error, .. } => error.offset.unwrap_or(0),
            _ => f
                .uncompressed_range()
                .or(f.file_range())
                .map_or(0, |r| r.start),
        };
        Problem {
            chunk: f.chunk(),
            checksum: Some(Box::new(f.clone())),
            ..Problem::new(class, f.component(), offset, f.to_string())
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {}+{:#x}",
            self.class,
            self.component.label(),
            self.offset
        )?;
        if let Some(c) = self.chunk {
            write!(f, " (chunk {c})")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// A list of problems with a cap: past `max` problems are only counted
/// (memory stays bounded on files with millions of problems).
#[derive(Debug, Clone, Default)]
pub struct Problems {
    /// The kept problems, in discovery order.
    pub list: Vec<Problem>,
    /// Problems found past the cap (not kept).
    pub dropped: u64,
    /// Count per class, including dropped ones.
    pub counts: std::collections::BTreeMap<ProblemClass, u64>,
    max: usize,
}

impl Problems {
    /// An empty list keeping at most `max` problems.
    pub fn with_max(max: usize) -> Problems {
        Problems {
            max,
            ..Problems::default()
        }
    }

    /// Record a problem.
    pub fn push(&mut self, p: Problem) {
        *self.counts.entry(p.class).or_insert(0) += 1;
        if self.list.len() < self.max {
            self.list.push(p);
        } else {
            self.dropped += 1;
        }
    }

    /// Record `later`'s problems after these, as if each had been pushed
    /// here (those it dropped are past this list's cap too: counted).
    pub fn append(&mut self, later: Problems) {
        let mut dropped = later.counts;
        for p in &later.list {
            if let Some(n) = dropped.get_mut(&p.class) {
                *n = n.saturating_sub(1);
            }
        }
        for p in later.list {
            self.push(p);
        }
        for (class, n) in dropped.into_iter().filter(|(_, n)| *n > 0) {
            *self.counts.entry(class).or_insert(0) += n;
            self.dropped += n;
        }
    }

    /// Total number of problems found (kept and dropped).
    pub fn total(&self) -> u64 {
        self.list.len() as u64 + self.dropped
    }

    /// True when nothing was found.
    pub fn is_empty(&self) -> bool {
        self.total() == 0
    }

    /// Number of problems that make the sstable invalid (kept and
    /// dropped; warnings and notes excluded).
    pub fn errors(&self) -> u64 {
        self.counts
            .iter()
            .filter(|(c, _)| c.severity() == Severity::Error)
            .map(|(_, n)| n)
            .sum()
    }

    /// Number of problems of `class`.
    pub fn count(&self, class: ProblemClass) -> u64 {
        self.counts.get(&class).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Problems appended list by list are those pushed one by one: the
    /// same kept list, dropped count and counts per class.
    #[test]
    fn appended_lists_are_pushed_lists() {
        let classes = [
            ProblemClass::DecodeError,
            ProblemClass::PartitionOrder,
            ProblemClass::IndexMismatch,
        ];
        let all: Vec<Problem> = (0..11)
            .map(|i| Problem::new(classes[i % 3], Component::Data, i as u64, format!("p{i}")))
            .collect();
        for max in [0, 2, 4, 20] {
            let mut one = Problems::with_max(max);
            for p in &all {
                one.push(p.clone());
            }
            for split in [0, 1, 3, 7, 11] {
                let (a, b) = all.split_at(split);
                let mut joined = Problems::with_max(max);
                for p in a {
                    joined.push(p.clone());
                }
                let mut later = Problems::with_max(max);
                for p in b {
                    later.push(p.clone());
                }
                joined.append(later);
                assert_eq!(
                    format!("{one:?}"),
                    format!("{joined:?}"),
                    "max {max}, split {split}"
                );
            }
        }
    }
}
