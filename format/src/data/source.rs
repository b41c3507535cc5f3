//! A streaming byte source over the *uncompressed* bytes of Data.db, with a
//! sliding window.
//!
//! ```text
//!            consumed          window (what the decoder sees)
//!   buf: [.............|==============================]
//!        ^buf_start    ^position                       ^buf_start + buf.len()
//!                                                        (next block / chunk loads here)
//! ```
//!
//! * Every byte is read through the sstable's [`IoLayer`] (so IO stats are
//!   right): uncompressed files in blocks of `block_size` bytes (64 KiB by
//!   default), compressed files one chunk at a time. Each chunk's CRC32 is
//!   verified before it is decompressed (`shared/docs/sstable-format.md` §7.2),
//!   and `chunks_decompressed`, `compressed_bytes` and `uncompressed_bytes`
//!   are counted in the Data.db stats.
//! * The decoder gets a [`Cur`] over the window ([`DataSource::cursor`]). When a
//!   decode runs out of bytes and the file has more, the caller asks for more
//!   with [`DataSource::fill`]: the consumed prefix is dropped and the next
//!   block / chunk appended. Memory is therefore bounded by the largest single
//!   unfiltered plus one block or chunk, never by a partition or the file
//!   (and never by more than `max_window`, so a corrupt size field cannot make
//!   the reader load the rest of a large file).
//! * [`DataSource::seek`] starts anywhere (e.g. at a partition position from the
//!   index): for a compressed file it loads the chunk holding the position.
//!
//! Positions are [`DataPos`] (uncompressed); file offsets only appear inside
//! the chunk loader. Errors carry the uncompressed offset; for compressed
//! files errors also carry the chunk index ([`Error::chunk`]) and
//! [`DataSource::chunk_of`] maps any position to it.
//!
//! Upstream equivalents: C\* `o.a.c/io/util/CompressedChunkReader.java`,
//! `RandomAccessReader`; Scylla `sstables/compress.cc` (`compressed_file_data_source`).

use std::path::PathBuf;

use crate::component::Component;
use crate::cur::Cur;
use crate::error::{Error, ErrorKind, Result};
use crate::io::{IoLayer, ReadKind};
use crate::sstable::Sstable;

use crate::chunk::ChunkDecompressor;
use crate::compression::CompressionInfo;

use super::DataPos;

/// Default read size for uncompressed Data.db.
pub const DEFAULT_BLOCK_SIZE: usize = 64 * 1024;

/// Default limit of the window (the largest unfiltered the reader accepts).
pub const DEFAULT_MAX_WINDOW: u64 = 256 * 1024 * 1024;

/// Lower bound of the window limit: a partition header (2-byte length,
/// key up to 64 KiB, 12-byte deletion) always fits.
pub const MIN_MAX_WINDOW: u64 = 65_535 + 2 + 12 + 1;

/// Largest single request made for a planned range ([`DataSource::plan`]).
pub const MAX_PLANNED_READ: u64 = 1024 * 1024;

enum Backend<'s> {
    /// Reads through the sstable's IO layer.
    Io { io: &'s IoLayer, file_len: u64 },
    /// An in-memory uncompressed Data.db (tests, fuzzing).
    Memory(&'s [u8]),
}

/// The chunk table and decompressor of a compressed Data.db.
struct Compressed {
    /// The sstable handle's table, shared: a reader per unit of Data.db
    /// costs no copy of it.
    info: std::rc::Rc<CompressionInfo>,
    dec: ChunkDecompressor,
    /// Compressed bytes of the chunks of a planned range, read in one
    /// request: `(file offset, bytes)`.
    prefetch: Option<(u64, Vec<u8>)>,
}

/// Windowed reader of uncompressed Data.db bytes (see the module docs).
pub struct DataSource<'s> {
    backend: Backend<'s>,
    compression: Option<Compressed>,
    path: Option<PathBuf>,
    data_len: u64,
    buf: Vec<u8>,
    buf_start: u64,
    pos: usize,
    block_size: usize,
    max_window: u64,
    /// How reads are made (scans read ahead, point reads do not).
    kind: ReadKind,
    /// End of a planned range: loads up to it are made in one request.
    plan_end: Option<u64>,
}

impl std::fmt::Debug for DataSource<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DataSource")
            .field("path", &self.path)
            .field("compressed", &self.compression.is_some())
            .field("data_len", &self.data_len)
            .field("position", &self.position())
            .field("window", &self.window().len())
            .finish()
    }
}

impl<'s> DataSource<'s> {
    /// Open the Data.db of `sst`. Reads and parses CompressionInfo.db when the
    /// sstable has one (one read, by the first opener:
    /// [`Sstable::compression_info`]); Data.db itself is read lazily.
    pub fn open(sst: &'s Sstable) -> Result<DataSource<'s>> {
        sst.require(Component::Data)?;
        let path = sst.path(Component::Data);
        let file_len = sst.io.len(Component::Data).map_err(|e| e.in_file(&path))?;
        let compression = if sst.data_compressed() {
            let info = sst.compression_info()?;
            let dec = ChunkDecompressor::new(&info, &sst.features());
            Some(Compressed {
                info,
                dec,
                prefetch: None,
            })
        } else {
            None
        };
        let data_len = compression
            .as_ref()
            .map_or(file_len, |c| c.info.data_length);
        Ok(DataSource {
            backend: Backend::Io {
                io: &sst.io,
                file_len,
            },
            compression,
            path: Some(path),
            data_len,
            buf: Vec::new(),
            buf_start: 0,
            pos: 0,
            block_size: DEFAULT_BLOCK_SIZE,
            max_window: DEFAULT_MAX_WINDOW,
            kind: ReadKind::Scan,
            plan_end: None,
        })
    }

    /// A source over an in-memory, uncompressed Data.db (no IO, no stats).
    /// Meant for tests and fuzzing.
    pub fn from_bytes(bytes: &'s [u8]) -> DataSource<'s> {
        DataSource {
            backend: Backend::Memory(bytes),
            compression: None,
            path: None,
            data_len: bytes.len() as u64,
            buf: Vec::new(),
            buf_start: 0,
            pos: 0,
            block_size: DEFAULT_BLOCK_SIZE,
            max_window: DEFAULT_MAX_WINDOW,
            kind: ReadKind::Scan,
            plan_end: None,
        }
    }

    /// How the following loads are read: [`ReadKind::Scan`] (the default;
    /// the IO layer reads ahead) or [`ReadKind::Point`] (bounded reads).
    pub fn set_read_kind(&mut self, kind: ReadKind) {
        self.kind = kind;
    }

    /// Plan a bounded range: until the loaded data reaches `end`, each load
    /// reads everything up to `end` (at most [`MAX_PLANNED_READ`] bytes) in
    /// one request — for compressed files, the compressed bytes of every
    /// chunk up to `end`'s in one request, each chunk still decompressed
    /// only when the window reaches it. Past `end` (or with `None`) loads
    /// are back to one block or chunk. Call before [`DataSource::seek`].
    pub fn plan(&mut self, end: Option<DataPos>) {
        self.plan_end = end.map(|e| e.0.min(self.data_len));
    }

    /// Drop the window and any prefetched bytes (the start of an operation:
    /// nothing read for a previous one is reused).
    pub fn reset(&mut self) {
        self.buf.clear();
        self.pos = 0;
        self.buf_start = 0;
        self.plan_end = None;
        if let Some(c) = &mut self.compression {
            c.prefetch = None;
        }
    }

    /// The `len` bytes at `pos` (uncompressed), through the window: a seek
    /// and a fill (so a plan set before applies), then a copy. The position
    /// is left at `pos`.
    pub fn read_range(&mut self, pos: DataPos, len: usize) -> Result<Vec<u8>> {
        self.seek(pos)?;
        if !self.fill(len as u64)? {
            return Err(self.err(
                ErrorKind::UnexpectedEof {
                    need: len as u64,
                    have: self.window().len() as u64,
                },
                "data range",
            ));
        }
        Ok(self.window()[..len].to_vec())
    }

    /// The serialized key of the partition that starts at `pos` (its
    /// 2-byte length and the key); `None` when Data.db ends before the key
    /// does. The position is left at `pos`.
    pub fn key_at(&mut self, pos: DataPos) -> Result<Option<Vec<u8>>> {
        if pos.0.saturating_add(2) > self.data_len {
            return Ok(None);
        }
        let head = self.read_range(pos, 2)?;
        let len = u16::from_be_bytes([head[0], head[1]]) as usize;
        if pos.0 + 2 + len as u64 > self.data_len {
            return Ok(None);
        }
        let b = self.read_range(pos, 2 + len)?;
        Ok(Some(b[2..].to_vec()))
    }

    /// Set the read size for uncompressed files (at least 1 byte).
    pub fn set_block_size(&mut self, n: usize) {
        self.block_size = n.max(1);
    }

    /// Set the window limit: the largest unfiltered that can be decoded. Never
    /// below [`MIN_MAX_WINDOW`], so that any partition header fits.
    pub fn set_max_window(&mut self, n: u64) {
        self.max_window = n.max(MIN_MAX_WINDOW);
    }

    /// The Data.db path (None for in-memory sources).
    pub fn path(&self) -> Option<&std::path::Path> {
        self.path.as_deref()
    }

    /// Total uncompressed length of Data.db.
    pub fn data_len(&self) -> u64 {
        self.data_len
    }

    /// True when Data.db is compressed.
    pub fn is_compressed(&self) -> bool {
        self.compression.is_some()
    }

    /// The compressed chunk holding uncompressed position `pos` (None when
    /// the file is not compressed).
    pub fn chunk_of(&self, pos: u64) -> Option<u64> {
        self.compression
            .as_ref()
            .map(|c| pos / c.info.chunk_length as u64)
    }

    /// The current position (first byte of the window).
    pub fn position(&self) -> DataPos {
        DataPos(self.buf_start + self.pos as u64)
    }

    /// End of the loaded window (the next load starts here).
    pub fn loaded_end(&self) -> DataPos {
        DataPos(self.buf_start + self.buf.len() as u64)
    }

    /// Bytes between the position and the end of the data.
    pub fn remaining(&self) -> u64 {
        self.data_len.saturating_sub(self.position().0)
    }

    /// True at the end of the data.
    pub fn at_end(&self) -> bool {
        self.remaining() == 0
    }

    /// The loaded bytes from the position on.
    pub fn window(&self) -> &[u8] {
        self.buf.get(self.pos..).unwrap_or(&[])
    }

    /// The `len` bytes just before the position (what the last
    /// [`DataSource::advance`] within the window stepped over), as long as no
    /// block was loaded since. Empty when they are no longer in the buffer.
    pub(crate) fn behind(&self, len: usize) -> &[u8] {
        self.pos
            .checked_sub(len)
            .and_then(|s| self.buf.get(s..self.pos))
            .unwrap_or(&[])
    }

    /// A cursor over the window, located at the position.
    pub fn cursor(&self) -> Cur<'_> {
        Cur::new(self.window(), Component::Data, self.position().0)
    }

    /// Move the position `n` bytes forward. Within the window this is free;
    /// past it the source seeks (skipping whole chunks without reading them).
    pub fn advance(&mut self, n: u64) -> Result<()> {
        let w = self.window().len() as u64;
        if n <= w {
            self.pos += n as usize;
            return Ok(());
        }
        let to = self.position().0.checked_add(n).ok_or_else(|| {
            self.err(
                ErrorKind::LengthOutOfRange {
                    len: n,
                    remaining: self.remaining(),
                },
                "advance",
            )
        })?;
        self.seek(DataPos(to))
    }

    /// Position the source at `pos` (at most the data length). Keeps the
    /// window when `pos` lies in it; otherwise drops it (the next
    /// [`DataSource::fill`] loads the block or chunk holding `pos`).
    pub fn seek(&mut self, pos: DataPos) -> Result<()> {
        if pos.0 > self.data_len {
            return Err(self.err(
                ErrorKind::LengthOutOfRange {
                    len: pos.0,
                    remaining: self.data_len,
                },
                "seek position",
            ));
        }
        let end = self.buf_start + self.buf.len() as u64;
        if pos.0 >= self.buf_start && pos.0 <= end {
            self.pos = (pos.0 - self.buf_start) as usize;
            return Ok(());
        }
        self.buf.clear();
        self.pos = 0;
        self.buf_start = match &self.compression {
            // Start at the chunk boundary; the position is inside the chunk.
            Some(c) => pos.0 - pos.0 % c.info.chunk_length as u64,
            None => pos.0,
        };
        if self.buf_start < pos.0 {
            // Load the chunk now so the position lies inside the buffer.
            self.load_next()?;
            let off = (pos.0 - self.buf_start) as usize;
            if off > self.buf.len() {
                return Err(self.err(
                    ErrorKind::UnexpectedEof {
                        need: off as u64,
                        have: self.buf.len() as u64,
                    },
                    "seek position",
                ));
            }
            self.pos = off;
        }
        Ok(())
    }

    /// Make the window at least `n` bytes long, loading blocks / chunks as
    /// needed. Returns `false` (loading what exists) when the data ends
    /// first; fails when `n` exceeds the window limit.
    pub fn fill(&mut self, n: u64) -> Result<bool> {
        if (self.window().len() as u64) >= n {
            return Ok(true);
        }
        if n > self.max_window {
            return Err(self.err(
                ErrorKind::LengthOutOfRange {
                    len: n,
                    remaining: self.max_window,
                },
                "unfiltered larger than the reader's window limit",
            ));
        }
        while (self.window().len() as u64) < n {
            if !self.load_next()? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Drop the consumed prefix of the buffer.
    fn compact(&mut self) {
        if self.pos > 0 {
            self.buf.drain(..self.pos);
            self.buf_start += self.pos as u64;
            self.pos = 0;
        }
    }

    fn err(&self, kind: ErrorKind, what: &'static str) -> Error {
        ctx(
            &self.path,
            Error::at(kind, Component::Data, self.position().0, what),
        )
    }

    /// Append the next block or chunk. `Ok(false)` at the end of the data.
    fn load_next(&mut self) -> Result<bool> {
        let end = self.buf_start + self.buf.len() as u64;
        if end >= self.data_len {
            return Ok(false);
        }
        self.compact();
        match (&self.backend, &mut self.compression) {
            (Backend::Memory(bytes), _) => {
                let n = (self.data_len - end).min(self.block_size as u64) as usize;
                let s = end as usize;
                self.buf
                    .extend_from_slice(bytes.get(s..s + n).unwrap_or(&[]));
            }
            (Backend::Io { io, .. }, None) => {
                let want = match self.plan_end {
                    Some(pe) if pe > end => (pe - end).min(MAX_PLANNED_READ),
                    _ => self.block_size as u64,
                };
                let n = (self.data_len - end).min(want) as usize;
                let buf = &mut self.buf;
                io.read_with(Component::Data, end, n, self.kind, |b| {
                    buf.extend_from_slice(b)
                })
                .map_err(|e| ctx(&self.path, e))?;
            }
            (Backend::Io { io, file_len }, Some(c)) => {
                // `end` is chunk-aligned: buffers start at chunk boundaries
                // (seek) and grow by whole chunks.
                let chunk = end / c.info.chunk_length as u64;
                let i = usize::try_from(chunk).unwrap_or(usize::MAX);
                let loc = |e: Error| chunk_err(&self.path, chunk, end, e.kind);
                let range = c.info.chunk_range(i, *file_len).map_err(loc)?;
                let expect = c.info.uncompressed_len(i).map_err(loc)?;
                let raw_len = usize::try_from(range.end - range.start).unwrap_or(usize::MAX);
                let in_prefetch = |p: &Option<(u64, Vec<u8>)>| {
                    p.as_ref()
                        .is_some_and(|(s, b)| *s <= range.start && range.end <= s + b.len() as u64)
                };
                if !in_prefetch(&c.prefetch) {
                    c.prefetch = None;
                    if let Some(pe) = self.plan_end.filter(|pe| *pe > end) {
                        // Every chunk up to the plan's end, in one request.
                        let last = ((pe - 1) / c.info.chunk_length as u64) as usize;
                        let mut to = range.end;
                        for k in i + 1..=last {
                            let Ok(r) = c.info.chunk_range(k, *file_len) else {
                                break;
                            };
                            if r.end - range.start > MAX_PLANNED_READ {
                                break;
                            }
                            to = r.end;
                        }
                        if to > range.end {
                            let bytes = io
                                .read(
                                    Component::Data,
                                    range.start,
                                    (to - range.start) as usize,
                                    self.kind,
                                )
                                .map_err(|e| ctx(&self.path, e))?;
                            c.prefetch = Some((range.start, bytes));
                        }
                    }
                }
                // Straight into the window (no scratch buffer), from the
                // prefetched bytes or the IO layer's read-ahead window (no
                // copy of the compressed bytes either).
                let (dec, buf) = (&mut c.dec, &mut self.buf);
                let mut decompress =
                    |raw: &[u8]| dec.decompress_append(i, range.start, raw, expect, buf);
                match &c.prefetch {
                    Some((s, b)) if in_prefetch(&c.prefetch) => {
                        let o = (range.start - s) as usize;
                        decompress(&b[o..o + raw_len])
                    }
                    _ => io
                        .read_with(Component::Data, range.start, raw_len, self.kind, decompress)
                        .map_err(|e| ctx(&self.path, e))?,
                }
                .map_err(loc)?;
                let mut stats = io.stats_mut();
                let s = stats.get_mut(Component::Data);
                s.chunks_decompressed += 1;
                s.compressed_bytes += raw_len as u64;
                s.uncompressed_bytes += expect as u64;
            }
        }
        Ok(self.buf_start + (self.buf.len() as u64) > end)
    }
}

fn ctx(path: &Option<PathBuf>, e: Error) -> Error {
    match path {
        Some(p) => e.in_file(p),
        None => e,
    }
}

/// An error about compressed chunk `chunk`, re-located at the chunk's
/// uncompressed start `at` (errors report uncompressed positions; the chunk
/// decoder locates them at the file offset), with the chunk index attached.
fn chunk_err(path: &Option<PathBuf>, chunk: u64, at: u64, kind: ErrorKind) -> Error {
    ctx(
        path,
        Error::at(kind, Component::Data, at, "compressed chunk").in_chunk(chunk),
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn window_grows_and_drops_consumed_prefix() {
        let data: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
        let mut s = DataSource::from_bytes(&data);
        s.set_block_size(100);
        assert!(s.window().is_empty());
        assert!(s.fill(1).unwrap());
        assert_eq!(s.window().len(), 100);
        s.advance(90).unwrap();
        assert_eq!(s.position(), DataPos(90));
        assert!(s.fill(50).unwrap());
        // The consumed 90 bytes were dropped before the next block was added.
        assert_eq!(s.window().len(), 110);
        assert_eq!(s.window()[0], 90);
        assert_eq!(s.cursor().abs_offset(), 90);
        // Past the window: a seek.
        s.advance(500).unwrap();
        assert_eq!(s.position(), DataPos(590));
        assert!(s.fill(10).unwrap());
        assert_eq!(s.window()[0], (590 % 256) as u8);
        assert!(!s.fill(1000).unwrap());
        assert_eq!(s.window().len(), 410);
        s.advance(410).unwrap();
        assert!(s.at_end());
        assert!(s.seek(DataPos(1001)).is_err());
        s.seek(DataPos(3)).unwrap();
        assert!(s.fill(2).unwrap());
        assert_eq!(&s.window()[..2], &[3, 4]);
    }

    #[test]
    fn window_limit() {
        let data = vec![0u8; 1000];
        let mut s = DataSource::from_bytes(&data);
        s.set_block_size(64);
        s.set_max_window(1);
        assert!(!s.fill(MIN_MAX_WINDOW).unwrap());
        assert!(s.fill(MIN_MAX_WINDOW + 1).is_err());
    }
}
