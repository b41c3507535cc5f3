//! Planning the pass: how Data.db is cut into checked chunks, and into
//! parts that threads check independently.

use std::ops::Range;

use super::{ChecksumFinding, DigestAlgo, ValidateOptions};
use crate::compression::CompressionInfo;
use crate::crc::CrcFile;
use crate::digest::ChecksumAlgo;

/// How Data.db is cut into checked chunks.
pub(super) enum Layout {
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
    pub(super) fn compressed(
        info: CompressionInfo,
        file_len: u64,
        out: &mut Vec<ChecksumFinding>,
    ) -> Layout {
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
    pub(super) fn crc(
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
pub(super) fn part_count(
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
    pub(super) fn parts(&self, file_len: u64, n: usize) -> Vec<(Range<u64>, u64)> {
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
pub(super) fn uncompressed(info: &CompressionInfo, first: u64, count: u64) -> Range<u64> {
    let cl = info.chunk_length as u64;
    let s = first.saturating_mul(cl).min(info.data_length);
    let e = first
        .saturating_add(count)
        .saturating_mul(cl)
        .min(info.data_length);
    s..e
}
