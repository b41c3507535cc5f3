//! The walker: consumes Data.db region by region as the reads arrive,
//! checking each chunk and extending the digest.

use super::combine::Running;
use super::plan::{uncompressed, Layout};
use std::ops::Range;

use super::{ChecksumFinding, DigestAlgo};
use crate::component::Component;
use crate::digest::{ChecksumAlgo, Checksummer};

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
pub(super) struct Walker<'a> {
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
    pub(super) digest: Option<Running>,
    /// Combine chunk checksums into the digest instead of hashing twice.
    combine: bool,
    /// `ka`/`la` compressed with an Adler-32 digest: the payload-only variant.
    pub(super) payloads: Option<Running>,
    pub(super) chunks_checked: u64,
    pub(super) bad_chunks: u64,
    /// Bytes fed.
    pub(super) bytes_read: u64,
}

impl<'a> Walker<'a> {
    pub(super) fn new(
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
    pub(super) fn starting_at(mut self, pos: u64, chunk: u64) -> Self {
        self.pos = pos;
        self.next_chunk = chunk;
        self
    }

    /// Take in the walker of the part that follows this one's: counters
    /// added, digests combined.
    pub(super) fn append(&mut self, next: &Walker) {
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
    pub(super) fn feed(&mut self, off: u64, buf: &[u8], emit: &mut dyn FnMut(ChecksumFinding)) {
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
    pub(super) fn finish(&mut self, emit: &mut dyn FnMut(ChecksumFinding)) {
        if let Some(r) = self.region.take() {
            if r.end <= self.pos {
                self.close(r, emit);
            }
        }
    }
}
