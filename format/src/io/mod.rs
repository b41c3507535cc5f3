//! The IO layer: every byte any command reads from an sstable goes through
//! [`IoLayer`], which checks the range against the file length before it
//! allocates, issues the physical reads, and counts them per component
//! ([`IoStats`]).
//!
//! # Physical reads
//!
//! [`IoOptions`] selects how (`--io-mode`, `--io-unit`, `--max-io`,
//! `--read-ahead`, `--index-cache-size`):
//!
//! * **Modes** ([`IoMode`]): `pread` (positioned reads, the default), `mmap`
//!   (the file is mapped; a "read" copies from the mapping) and `direct`
//!   (`O_DIRECT`: the page cache is bypassed, buffers are 4 KiB-aligned,
//!   offsets and lengths unit-aligned; a filesystem that refuses `O_DIRECT`
//!   gives a clear error). The counters are identical in every mode.
//! * **Alignment.** A request for `[off, off + len)` is widened to whole
//!   units, `[align_down(off), align_up(off + len))`, clipped at the end of
//!   the file.
//! * **Coalescing.** The units of one request are read as one physical read
//!   of up to `max_io` bytes (a longer request is split into `max_io` pieces).
//!   Within an operation, the last unit of the previous point read of a
//!   component is kept: a following request that starts inside it (the next
//!   compressed chunk, the rest of a row) does not read it again. So is its
//!   first unit: a following request that ends inside it (a backward walk,
//!   [`crate::read::ReversedReader`]) does not read it again either. A point
//!   read that lies inside the read-ahead window of a scan of the same
//!   component (a reversed dump: small partitions scanned, large ones
//!   walked backward) is served from the window.
//! * **Read-ahead** ([`ReadKind::Scan`] only): a sequential scan reads
//!   windows of `read_ahead` bytes (at least the request) and serves the
//!   following requests from the window. Point reads ([`ReadKind::Point`],
//!   [`ReadKind::Metadata`]) never read ahead.
//! * **Zero-copy scans** ([`IoLayer::scan`]): a whole-range pass that lends
//!   each block to a closure instead of returning an owned copy (`pread`
//!   into one reused buffer, `mmap` slices of the mapping); counted like a
//!   scan. Checksum validation uses it.
//!
//! # The index cache
//!
//! [`IoLayer::read_cached`] serves Index.db through an LRU of `unit`-sized
//! pages (plus parsed objects the readers in [`crate::read`] keep there:
//! promoted-index blocks, and the header + static row of partitions with a
//! promoted index, accounted on Data.db), bounded by `index_cache_bytes` and
//! kept across operations (lookups) for the life of the sstable. Each page (or block)
//! access counts a cache hit or miss, each eviction an eviction, on the
//! Index component; missing pages are read with the rules above. With
//! `index_cache_bytes == 0` (`--no-index-cache`) pages and blocks are kept
//! for one operation only (no hits or misses are counted).
//!
//! # Operations
//!
//! [`IoLayer::begin_operation`] starts an operation (a key lookup): it drops
//! the read-ahead windows, the kept last units and the per-operation
//! scratch, but not the index cache. Callers snapshot [`IoLayer::stats`]
//! before and after and report the difference ([`IoStats::since`]).
//!
//! # Expected IO
//!
//! * Metadata commands: one request per component they decode
//!   ([`IoLayer::read_all`]), i.e. `ceil(len / max_io)` reads
//!   (`dump-statistics`: one Statistics.db read of the whole file).
//! * A sequential scan of Data.db: `ceil(len / max_io)` reads in windows of
//!   `read_ahead` bytes; every byte read once.
//! * A point read of `n` bytes: `ceil((align_up(off + n) - align_down(off)) / max_io)`
//!   reads (one, for anything up to `max_io - unit` bytes).

mod cache;
mod file;
mod stats;

pub use stats::{ComponentIo, IoStats};

use std::any::Any;
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use cache::{CacheKey, CacheValue, Lru};
use file::OpenFile;

use crate::component::Component;
use crate::error::{Error, ErrorKind, Result};

/// A whole component's bytes from [`IoLayer::map_all`]: a read-only map of
/// the file, or a heap copy where it cannot be mapped.
pub struct Bytes(BytesInner);

enum BytesInner {
    Mapped(memmap2::Mmap),
    Heap(Vec<u8>),
}

impl std::ops::Deref for Bytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match &self.0 {
            BytesInner::Mapped(m) => m,
            BytesInner::Heap(v) => v,
        }
    }
}

impl std::fmt::Debug for Bytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match &self.0 {
            BytesInner::Mapped(_) => "mapped",
            BytesInner::Heap(_) => "heap",
        };
        write!(f, "Bytes({kind}, {} bytes)", self.len())
    }
}

/// Why a read is made; recorded in the stats (scan reads may use read-ahead,
/// point reads never do).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadKind {
    /// Loading a whole metadata component.
    Metadata,
    /// Sequential scan.
    Scan,
    /// Point lookup (bounded read).
    Point,
}

/// How files are read (`--io-mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IoMode {
    /// Positioned reads (`pread`).
    #[default]
    Pread,
    /// Memory-mapped files.
    Mmap,
    /// `O_DIRECT` reads into aligned buffers (Linux).
    Direct,
}

/// IO settings (the `--io-*` flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoOptions {
    /// How files are read.
    pub mode: IoMode,
    /// Read unit: reads are aligned to it and sized in multiples of it
    /// (a power of two, 512 B ..= 1 MiB).
    pub unit: u64,
    /// Largest single physical read (a multiple of `unit`).
    pub max_io: u64,
    /// Read-ahead window of sequential scans (0: none).
    pub read_ahead: u64,
    /// Capacity of the index cache in bytes (0: no cache across operations).
    pub index_cache_bytes: u64,
}

impl Default for IoOptions {
    fn default() -> Self {
        IoOptions {
            mode: IoMode::Pread,
            unit: 4096,
            max_io: 128 * 1024,
            read_ahead: 1024 * 1024,
            index_cache_bytes: 8 * 1024 * 1024,
        }
    }
}

impl IoOptions {
    /// Smallest accepted unit.
    pub const MIN_UNIT: u64 = 512;
    /// Largest accepted unit.
    pub const MAX_UNIT: u64 = 1 << 20;

    /// Check the settings: `unit` a power of two in 512 B ..= 1 MiB, `max_io`
    /// at least one unit (rounded down to a multiple of it). The message
    /// names the flag at fault.
    pub fn checked(mut self) -> std::result::Result<IoOptions, String> {
        if !self.unit.is_power_of_two() || !(Self::MIN_UNIT..=Self::MAX_UNIT).contains(&self.unit) {
            return Err(format!(
                "--io-unit {}: must be a power of two from 512 B to 1 MiB",
                self.unit
            ));
        }
        if self.max_io < self.unit {
            return Err(format!(
                "--max-io {}: must be at least the IO unit ({})",
                self.max_io, self.unit
            ));
        }
        self.max_io -= self.max_io % self.unit;
        Ok(self)
    }

    fn align_down(&self, x: u64) -> u64 {
        x - x % self.unit
    }

    fn align_up(&self, x: u64) -> u64 {
        x.div_ceil(self.unit).saturating_mul(self.unit)
    }
}

/// Per-component buffers that live for one operation.
#[derive(Debug, Default)]
struct Buffers {
    /// The last unit of the last point read: `(offset, bytes)`.
    tail: Option<(u64, Vec<u8>)>,
    /// The first unit of the last point read: `(offset, bytes)`.
    head: Option<(u64, Vec<u8>)>,
    /// The read-ahead window of scans: `(offset, bytes)`.
    ra: Option<(u64, Vec<u8>)>,
}

/// Owns the open component files of one sstable, issues and counts reads,
/// and holds the index cache.
#[derive(Debug)]
pub struct IoLayer {
    paths: HashMap<Component, PathBuf>,
    opts: IoOptions,
    files: RefCell<HashMap<Component, Rc<OpenFile>>>,
    stats: RefCell<IoStats>,
    bufs: RefCell<HashMap<Component, Buffers>>,
    /// The index cache (capacity `index_cache_bytes`).
    cache: RefCell<Lru>,
    /// Pages and objects of the current operation when the cache is off.
    scratch: RefCell<Lru>,
}

impl IoLayer {
    /// A layer over the given component paths with default options (files
    /// are opened lazily).
    pub fn new(paths: HashMap<Component, PathBuf>) -> Self {
        Self::with_options(paths, IoOptions::default())
    }

    /// A layer with `opts` (see [`IoOptions::checked`]; unchecked values are
    /// clamped to something usable).
    pub fn with_options(paths: HashMap<Component, PathBuf>, opts: IoOptions) -> Self {
        let opts = opts.checked().unwrap_or_else(|_| {
            let unit = opts
                .unit
                .clamp(IoOptions::MIN_UNIT, IoOptions::MAX_UNIT)
                .next_power_of_two();
            IoOptions {
                unit,
                max_io: opts.max_io.max(unit) / unit * unit,
                ..opts
            }
        });
        IoLayer {
            paths,
            opts,
            files: RefCell::new(HashMap::new()),
            stats: RefCell::new(IoStats::default()),
            bufs: RefCell::new(HashMap::new()),
            cache: RefCell::new(Lru::new(opts.index_cache_bytes)),
            scratch: RefCell::new(Lru::new(0)),
        }
    }

    /// The options in effect.
    pub fn options(&self) -> &IoOptions {
        &self.opts
    }

    /// Path of a component, if the sstable has it.
    pub fn path(&self, c: Component) -> Option<&Path> {
        self.paths.get(&c).map(PathBuf::as_path)
    }

    /// True when the component's file exists on disk.
    pub fn exists(&self, c: Component) -> bool {
        self.paths.get(&c).is_some_and(|p| p.is_file())
    }

    fn missing(&self, c: Component) -> Error {
        let e = Error::new(ErrorKind::MissingComponent, "").in_component(c);
        match self.paths.get(&c) {
            Some(p) => e.in_file(p),
            None => e,
        }
    }

    fn locate(&self, c: Component, e: Error, off: Option<u64>) -> Error {
        let e = e.in_component(c);
        let e = match off {
            Some(o) if e.offset.is_none() => Error {
                offset: Some(o),
                ..e
            },
            _ => e,
        };
        match self.paths.get(&c) {
            Some(p) => e.in_file(p),
            None => e,
        }
    }

    fn file(&self, c: Component) -> Result<Rc<OpenFile>> {
        if let Some(f) = self.files.borrow().get(&c) {
            return Ok(Rc::clone(f));
        }
        let path = self.paths.get(&c).ok_or_else(|| self.missing(c))?;
        let f = OpenFile::open(path, self.opts.mode).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                self.missing(c)
            } else {
                Error::from(e).in_file(path).in_component(c)
            }
        })?;
        let f = Rc::new(f);
        self.files.borrow_mut().insert(c, Rc::clone(&f));
        Ok(f)
    }

    /// Length of a component file in bytes.
    pub fn len(&self, c: Component) -> Result<u64> {
        Ok(self.file(c)?.len)
    }

    /// Start an operation: drop the read-ahead windows, the kept last units
    /// and the per-operation scratch (the index cache stays).
    pub fn begin_operation(&self) {
        self.bufs.borrow_mut().clear();
        self.scratch.borrow_mut().clear();
    }

    /// Fail unless `[off, off + len)` lies within the file; reserve `len`.
    fn check_range(&self, c: Component, of: &OpenFile, off: u64, len: usize) -> Result<Vec<u8>> {
        let end = off.checked_add(len as u64);
        if end.is_none_or(|e| e > of.len) {
            let remaining = of.len.saturating_sub(off);
            let e = Error::at(
                ErrorKind::UnexpectedEof {
                    need: len as u64,
                    have: remaining,
                },
                c,
                off,
                "component read",
            );
            return Err(self.locate(c, e, None));
        }
        let mut buf = Vec::new();
        buf.try_reserve_exact(len).map_err(|_| {
            Error::at(
                ErrorKind::LengthOutOfRange {
                    len: len as u64,
                    remaining: of.len,
                },
                c,
                off,
                "component read",
            )
        })?;
        Ok(buf)
    }

    /// Issue the physical reads of `[start, end)` (`start` unit-aligned,
    /// `end` aligned or the end of the file): pieces of at most `max_io`,
    /// each counted.
    fn issue(
        &self,
        c: Component,
        of: &OpenFile,
        start: u64,
        end: u64,
        kind: ReadKind,
    ) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        out.try_reserve_exact(end.saturating_sub(start) as usize)
            .map_err(|_| {
                Error::at(
                    ErrorKind::LengthOutOfRange {
                        len: end - start,
                        remaining: of.len,
                    },
                    c,
                    start,
                    "component read",
                )
            })?;
        let mut pos = start;
        while pos < end {
            let n = (end - pos).min(self.opts.max_io);
            let req = match self.opts.mode {
                IoMode::Direct => self.opts.align_up(n),
                _ => n,
            };
            let got = of
                .read_into(pos, req as usize, &mut out)
                .map_err(|e| self.locate(c, Error::from(e), Some(pos)))?;
            self.stats.borrow_mut().record_read(c, got as u64, kind);
            if got == 0 {
                break;
            }
            pos += n;
        }
        if (out.len() as u64) < end - start {
            let e = Error::at(
                ErrorKind::UnexpectedEof {
                    need: end - start,
                    have: out.len() as u64,
                },
                c,
                start,
                "component read (file shrank)",
            );
            return Err(self.locate(c, e, None));
        }
        Ok(out)
    }

    /// [`IoLayer::issue`] into `buf`, reusing its allocation: `buf` ends up
    /// holding exactly `[start, end)`. With `pread` the bytes already in
    /// `buf` are overwritten in place (no zero-filling of a fresh buffer per
    /// read-ahead window); the other modes read as `issue` does.
    fn issue_reusing(
        &self,
        c: Component,
        of: &OpenFile,
        start: u64,
        end: u64,
        kind: ReadKind,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        if of.is_mapped() || self.opts.mode == IoMode::Direct {
            *buf = self.issue(c, of, start, end, kind)?;
            return Ok(());
        }
        let n = end.saturating_sub(start) as usize;
        if buf.len() < n {
            buf.try_reserve_exact(n - buf.len()).map_err(|_| {
                Error::at(
                    ErrorKind::LengthOutOfRange {
                        len: n as u64,
                        remaining: of.len,
                    },
                    c,
                    start,
                    "component read",
                )
            })?;
            buf.resize(n, 0);
        }
        buf.truncate(n);
        let mut q = 0usize;
        while q < n {
            let piece = (n - q).min(self.opts.max_io as usize);
            let at = start + q as u64;
            self.stats.borrow_mut().record_read(c, piece as u64, kind);
            of.read_exact_into(at, &mut buf[q..q + piece])
                .map_err(|e| self.locate(c, Error::from(e), Some(at)))?;
            q += piece;
        }
        Ok(())
    }

    /// [`IoLayer::read`], handing the bytes to `f` rather than returning
    /// them: a [`ReadKind::Scan`] read that falls inside the current
    /// read-ahead window is served by lending the window's bytes, without
    /// the copy `read` makes (what is issued and counted is the same). `f`
    /// must not use this `IoLayer` (the window is borrowed while it runs).
    pub fn read_with<T>(
        &self,
        c: Component,
        off: u64,
        len: usize,
        kind: ReadKind,
        f: impl FnOnce(&[u8]) -> T,
    ) -> Result<T> {
        if kind == ReadKind::Scan && self.opts.read_ahead > 0 {
            let bufs = self.bufs.borrow();
            if let Some((rs, rb)) = bufs.get(&c).and_then(|b| b.ra.as_ref()) {
                let end = off.checked_add(len as u64);
                if *rs <= off && end.is_some_and(|e| e <= rs + rb.len() as u64) {
                    let s = (off - rs) as usize;
                    return Ok(f(&rb[s..s + len]));
                }
            }
        }
        let bytes = self.read(c, off, len, kind)?;
        Ok(f(&bytes))
    }

    /// Read `len` bytes at `off` of component `c`. The range is checked
    /// against the file length before any allocation. See the module docs
    /// for alignment, coalescing and read-ahead.
    pub fn read(&self, c: Component, off: u64, len: usize, kind: ReadKind) -> Result<Vec<u8>> {
        let of = self.file(c)?;
        let mut out = self.check_range(c, &of, off, len)?;
        if len == 0 {
            return Ok(out);
        }
        match kind {
            ReadKind::Scan if self.opts.read_ahead > 0 => {
                self.read_scan(c, &of, off, len, &mut out)?
            }
            _ => self.read_point(c, &of, off, len, kind, &mut out)?,
        }
        Ok(out)
    }

    fn read_point(
        &self,
        c: Component,
        of: &OpenFile,
        off: u64,
        len: usize,
        kind: ReadKind,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        {
            // Inside the read-ahead window of a scan: served from it.
            let bufs = self.bufs.borrow();
            if let Some((rs, rb)) = bufs.get(&c).and_then(|b| b.ra.as_ref()) {
                if *rs <= off && off + len as u64 <= rs + rb.len() as u64 {
                    let s = (off - rs) as usize;
                    out.extend_from_slice(&rb[s..s + len]);
                    return Ok(());
                }
            }
        }
        let a0 = self.opts.align_down(off);
        let a1 = self.opts.align_up(off + len as u64).min(of.len);
        let mut have = Vec::new();
        // The end of the request read from the kept first unit (`q..a1`).
        let mut q = a1;
        {
            let bufs = self.bufs.borrow();
            let kept = bufs.get(&c);
            let units = kept.into_iter().flat_map(|b| [&b.tail, &b.head]).flatten();
            for (ts, tb) in units {
                let te = ts + tb.len() as u64;
                if have.is_empty() && *ts <= a0 && a0 < te {
                    let s = (a0 - ts) as usize;
                    let e = (te.min(a1) - ts) as usize;
                    have.extend_from_slice(&tb[s..e]);
                }
            }
            if let Some((hs, hb)) = kept.and_then(|b| b.head.as_ref()) {
                let p = a0 + have.len() as u64;
                if p < *hs && *hs < a1 && a1 <= hs + hb.len() as u64 {
                    q = *hs;
                }
            }
        }
        let p = a0 + have.len() as u64;
        if p < q {
            let more = self.issue(c, of, p, q, kind)?;
            if have.is_empty() {
                have = more;
            } else {
                have.extend_from_slice(&more);
            }
        }
        if q < a1 {
            let bufs = self.bufs.borrow();
            if let Some((hs, hb)) = bufs.get(&c).and_then(|b| b.head.as_ref()) {
                have.extend_from_slice(&hb[..(a1 - hs) as usize]);
            }
        }
        let s = (off - a0) as usize;
        out.extend_from_slice(&have[s..s + len]);
        // Keep the first and last units for the next request of this operation.
        let last = self.opts.align_down(a1 - 1).max(a0);
        let tail = have[(last - a0) as usize..].to_vec();
        let first_end = (a0 + self.opts.unit).min(a1);
        let head = have[..(first_end - a0) as usize].to_vec();
        let mut bufs = self.bufs.borrow_mut();
        let b = bufs.entry(c).or_default();
        b.tail = Some((last, tail));
        b.head = Some((a0, head));
        Ok(())
    }

    fn read_scan(
        &self,
        c: Component,
        of: &OpenFile,
        off: u64,
        len: usize,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let end = off + len as u64;
        let old = self.bufs.borrow_mut().entry(c).or_default().ra.take();
        let (start, head, mut win) = match old {
            Some((rs, rb)) => {
                let re = rs + rb.len() as u64;
                if rs <= off && end <= re {
                    let s = (off - rs) as usize;
                    out.extend_from_slice(&rb[s..s + len]);
                    self.bufs.borrow_mut().entry(c).or_default().ra = Some((rs, rb));
                    return Ok(());
                }
                if rs <= off && off < re {
                    // Keep what the window has; the next one starts at its end.
                    (re, rb[(off - rs) as usize..].to_vec(), rb)
                } else {
                    (self.opts.align_down(off), Vec::new(), rb)
                }
            }
            None => (self.opts.align_down(off), Vec::new(), Vec::new()),
        };
        let wend = (start + self.opts.read_ahead)
            .max(self.opts.align_up(end))
            .min(of.len);
        // The old window's allocation is reused for the new one.
        self.issue_reusing(c, of, start, wend, ReadKind::Scan, &mut win)?;
        if head.is_empty() {
            let s = (off - start) as usize;
            out.extend_from_slice(&win[s..s + len]);
        } else {
            out.extend_from_slice(&head);
            out.extend_from_slice(&win[..(end - start) as usize]);
        }
        self.bufs.borrow_mut().entry(c).or_default().ra = Some((start, win));
        Ok(())
    }

    /// Stream `[start, end)` of component `c` through `f`, in order, in
    /// blocks of at most `block` bytes (`f(offset, bytes)`), **without
    /// copying** the bytes out of the IO layer: `pread` fills one reused
    /// buffer (never zero-filled again after the first block), `mmap` hands
    /// out slices of the mapping itself, `direct` reads into an aligned
    /// buffer. The reads issued and counted are those of a
    /// [`ReadKind::Scan`] (pieces of at most `max_io`, every byte once); the
    /// read-ahead windows of [`IoLayer::read`] are not involved. An error
    /// from `f` stops the scan and is returned.
    ///
    /// This is the path of whole-file passes that look at every byte once
    /// (checksum validation), where a copy per byte would cost as much as
    /// the computation.
    pub fn scan(
        &self,
        c: Component,
        start: u64,
        end: u64,
        block: usize,
        mut f: impl FnMut(u64, &[u8]) -> Result<()>,
    ) -> Result<()> {
        let of = self.file(c)?;
        self.check_scan_range(c, &of, start, end)?;
        let block = block.max(1);
        if !of.is_mapped() && self.opts.mode != IoMode::Direct {
            return self.scan_pread(c, &of, start, end, block, f);
        }
        let mut buf: Vec<u8> = Vec::new();
        let mut pos = start;
        while pos < end {
            let n = (block as u64).min(end - pos) as usize;
            self.count_scan_reads(c, n);
            if let Some(m) = of.mapped(pos, n) {
                f(pos, m)?;
                pos += n as u64;
                continue;
            }
            // O_DIRECT: aligned reads into an aligned buffer.
            buf.clear();
            let a0 = self.opts.align_down(pos);
            let want = self.opts.align_up(pos + n as u64 - a0) as usize;
            let got = of
                .read_into(a0, want, &mut buf)
                .map_err(|e| self.locate(c, Error::from(e), Some(a0)))?;
            let s = (pos - a0) as usize;
            if got < s + n {
                let e = Error::at(
                    ErrorKind::UnexpectedEof {
                        need: n as u64,
                        have: got.saturating_sub(s) as u64,
                    },
                    c,
                    pos,
                    "component scan (file shrank)",
                );
                return Err(self.locate(c, e, None));
            }
            f(pos, &buf[s..s + n])?;
            pos += n as u64;
        }
        Ok(())
    }

    /// [`IoLayer::scan`] over several disjoint ranges of component `c` at
    /// once: the first on this thread, each other one on a scoped thread of
    /// its own (modes `pread` and `mmap`; with
    /// `direct`, or a single range, the ranges are scanned one after the
    /// other on this thread). Each range comes with its own state `S`;
    /// `f(state, offset, bytes)` sees that range's blocks in order, like
    /// `scan`'s callback. The states come back in the order of `parts`.
    ///
    /// Each thread reads into a buffer of its own (one block; `mmap` lends
    /// slices of the mapping) through the shared file handle, so memory is
    /// one block per range. The reads are counted on this thread after the
    /// join, as `scan` counts them: blocks of at most `block` bytes from
    /// each range's start, each made of pieces of at most `max_io`, up to
    /// where the range's scan stopped. The first error in range order is
    /// returned (an I/O error located at its offset, an error of `f` as is);
    /// the other ranges are then still scanned to their end or their own
    /// error, as they run concurrently. A range past the end of the file is
    /// an error before any read.
    ///
    /// This is the path of whole-file checks that can be split at chunk
    /// boundaries: the kernel's copy out of the page cache costs about as
    /// much as the checksum, and both run on as many cores as there are
    /// ranges.
    pub fn scan_parts<S: Send>(
        &self,
        c: Component,
        parts: Vec<(std::ops::Range<u64>, S)>,
        block: usize,
        f: impl Fn(&mut S, u64, &[u8]) -> Result<()> + Sync,
    ) -> Result<Vec<S>> {
        let of = self.file(c)?;
        for (r, _) in &parts {
            self.check_scan_range(c, &of, r.start, r.end)?;
        }
        if parts.len() <= 1 || self.opts.mode == IoMode::Direct {
            let mut out = Vec::with_capacity(parts.len());
            for (r, mut s) in parts {
                self.scan(c, r.start, r.end, block, |pos, b| f(&mut s, pos, b))?;
                out.push(s);
            }
            return Ok(out);
        }
        let block = block.max(1);
        let max_io = usize::try_from(self.opts.max_io.max(1)).unwrap_or(usize::MAX);
        let file: &OpenFile = &of;
        let f = &f;
        // Per range: (start, where the scan stopped, state, error and its
        // offset when it was an I/O error).
        type Done<S> = (u64, u64, S, Option<(Error, Option<u64>)>);
        // Scan one range (on whichever thread).
        let work = |r: std::ops::Range<u64>, mut s: S| -> Done<S> {
            let mut buf: Vec<u8> = Vec::new();
            let mut pos = r.start;
            while pos < r.end {
                let n = (block as u64).min(r.end - pos) as usize;
                let bytes = match file.mapped(pos, n) {
                    Some(m) => m,
                    None => {
                        if buf.len() < n {
                            buf.resize(n, 0);
                        }
                        if let Err((e, at)) = read_in_pieces(file, pos, &mut buf[..n], max_io) {
                            return (r.start, pos + n as u64, s, Some((e.into(), Some(at))));
                        }
                        &buf[..n]
                    }
                };
                if let Err(e) = f(&mut s, pos, bytes) {
                    return (r.start, pos + n as u64, s, Some((e, None)));
                }
                pos += n as u64;
            }
            (r.start, pos, s, None)
        };
        let work = &work;
        // The first range on this thread, the others on threads of their own.
        let done: Vec<std::io::Result<Done<S>>> = std::thread::scope(|scope| {
            let mut parts = parts.into_iter();
            let first = parts.next();
            let handles: Vec<_> = parts
                .map(|(r, s)| {
                    std::thread::Builder::new()
                        .name("sstkit-scan".into())
                        .spawn_scoped(scope, move || work(r, s))
                })
                .collect();
            let mut done = Vec::with_capacity(handles.len() + 1);
            if let Some((r, s)) = first {
                done.push(Ok(work(r, s)));
            }
            for h in handles {
                done.push(h.map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))));
            }
            done
        });
        let mut out = Vec::with_capacity(done.len());
        let mut first_err = None;
        for d in done {
            let (start, reached, s, err) = match d {
                Ok(d) => d,
                // The OS refused a thread: the range was not scanned.
                Err(e) => {
                    if first_err.is_none() {
                        let kind = ErrorKind::Io(
                            e.kind(),
                            format!("cannot start a scan thread ({e}); try --threads 1"),
                        );
                        first_err = Some(self.locate(c, Error::new(kind, "component scan"), None));
                    }
                    continue;
                }
            };
            let mut pos = start;
            while pos < reached {
                let n = (block as u64).min(reached - pos) as usize;
                self.count_scan_reads(c, n);
                pos += n as u64;
            }
            if let (None, Some((e, at))) = (&first_err, err) {
                first_err = Some(match at {
                    Some(_) => self.locate(c, e, at),
                    None => e,
                });
            }
            out.push(s);
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }

    /// The error of a scan of `[start, end)` that the file cannot hold.
    fn check_scan_range(&self, c: Component, of: &OpenFile, start: u64, end: u64) -> Result<()> {
        if start <= end && end <= of.len {
            return Ok(());
        }
        let e = Error::at(
            ErrorKind::UnexpectedEof {
                need: end.saturating_sub(start),
                have: of.len.saturating_sub(start),
            },
            c,
            start,
            "component scan",
        );
        Err(self.locate(c, e, None))
    }

    /// Count the physical reads of an `n`-byte scan block: pieces of at
    /// most `max_io`.
    fn count_scan_reads(&self, c: Component, n: usize) {
        self.count_reads(c, n as u64, ReadKind::Scan);
    }

    /// The `pread` path of [`IoLayer::scan`] from `pos`: each block is read
    /// into one reused buffer (zero-filled once) and handed to `f`.
    ///
    /// Measured (269 MB uncompressed Data.db with CRC.db, and a 160 MB LZ4
    /// one, page cache warm, `bench/validate.sh`): the page cache is copied
    /// at ~20 GB/s here (`cat`), CRC32 runs at ~58 GB/s over bytes in the
    /// CPU cache, so copy + checksum lands at 75-80% of `cat` (best of 15,
    /// process start included). Tried and dropped, as no better on this
    /// machine in interleaved runs: reads of 128 KiB to 1 MiB; a reader
    /// thread overlapping the copy with `f` (56-82% across block sizes and
    /// runs, worse when the other core is busy); reading in place through
    /// pre-faulted 4 MiB map windows (66-79%: the page-table work costs
    /// about what the copy does).
    fn scan_pread(
        &self,
        c: Component,
        of: &OpenFile,
        mut pos: u64,
        end: u64,
        block: usize,
        mut f: impl FnMut(u64, &[u8]) -> Result<()>,
    ) -> Result<()> {
        let max_io = self.opts.max_io as usize;
        let mut buf: Vec<u8> = Vec::new();
        while pos < end {
            let n = (block as u64).min(end - pos) as usize;
            if buf.len() < n {
                buf.try_reserve_exact(n - buf.len()).map_err(|_| {
                    let e = Error::at(
                        ErrorKind::LengthOutOfRange {
                            len: n as u64,
                            remaining: of.len,
                        },
                        c,
                        pos,
                        "component scan buffer",
                    );
                    self.locate(c, e, None)
                })?;
                buf.resize(n, 0);
            }
            self.count_scan_reads(c, n);
            read_in_pieces(of, pos, &mut buf[..n], max_io)
                .map_err(|(e, at)| self.locate(c, Error::from(e), Some(at)))?;
            f(pos, &buf[..n])?;
            pos += n as u64;
        }
        Ok(())
    }

    /// A whole component as bytes that are **not** copied onto the heap
    /// when the file can be mapped (read-only map; `direct` mode and
    /// unmappable files are read as [`IoLayer::read_all`] does). Counted as
    /// the reads of [`IoLayer::read_all`] (one [`ReadKind::Metadata`]
    /// request). For large components that a pass keeps whole, such as
    /// Index.db under `validate`: memory then stays flat as the file grows.
    pub fn map_all(&self, c: Component) -> Result<Bytes> {
        let of = self.file(c)?;
        if self.opts.mode != IoMode::Direct && of.len > 0 {
            if let Ok(m) = of.map_whole() {
                if m.len() as u64 == of.len {
                    self.count_reads(c, of.len, ReadKind::Metadata);
                    return Ok(Bytes(BytesInner::Mapped(m)));
                }
            }
        }
        self.read_all(c).map(|v| Bytes(BytesInner::Heap(v)))
    }

    /// Count the physical reads of an `n`-byte request: pieces of at most
    /// `max_io`.
    fn count_reads(&self, c: Component, n: u64, kind: ReadKind) {
        let mut st = self.stats.borrow_mut();
        let mut left = n;
        while left > 0 {
            let piece = left.min(self.opts.max_io);
            st.record_read(c, piece, kind);
            left -= piece;
        }
    }

    /// Read a whole component.
    pub fn read_all(&self, c: Component) -> Result<Vec<u8>> {
        let len = self.len(c)?;
        let len = usize::try_from(len).map_err(|_| {
            Error::at(
                ErrorKind::LengthOutOfRange {
                    len,
                    remaining: len,
                },
                c,
                0,
                "component size",
            )
        })?;
        self.read(c, 0, len, ReadKind::Metadata)
    }

    /// True when the index cache keeps pages across operations.
    pub fn cache_enabled(&self) -> bool {
        self.opts.index_cache_bytes > 0
    }

    fn cache_get(&self, k: &CacheKey) -> Option<CacheValue> {
        if self.cache_enabled() {
            let v = self.cache.borrow_mut().get(k);
            let mut st = self.stats.borrow_mut();
            let s = st.get_mut(k.component());
            if v.is_some() {
                s.cache_hits += 1;
            } else {
                s.cache_misses += 1;
            }
            v
        } else {
            self.scratch.borrow_mut().get(k)
        }
    }

    fn cache_put(&self, k: CacheKey, v: CacheValue, size: u64) {
        if self.cache_enabled() {
            let evicted = self.cache.borrow_mut().put(k, v, size);
            let mut st = self.stats.borrow_mut();
            for e in evicted {
                st.get_mut(e.component()).cache_evictions += 1;
            }
        } else {
            self.scratch.borrow_mut().put(k, v, size);
        }
    }

    /// Read `len` bytes at `off` of `c` through the index cache: pages of
    /// `unit` bytes, each a hit or a miss; runs of missing pages are read
    /// together (aligned, split at `max_io`) and cached.
    pub fn read_cached(&self, c: Component, off: u64, len: usize) -> Result<Vec<u8>> {
        let of = self.file(c)?;
        let mut out = self.check_range(c, &of, off, len)?;
        if len == 0 {
            return Ok(out);
        }
        let u = self.opts.unit;
        let (p0, p1) = (off / u, (off + len as u64 - 1) / u);
        let n = (p1 - p0 + 1) as usize;
        let mut pages: Vec<Option<Rc<[u8]>>> = Vec::with_capacity(n);
        for p in p0..=p1 {
            pages.push(match self.cache_get(&CacheKey::Page(c, p)) {
                Some(CacheValue::Page(b)) => Some(b),
                _ => None,
            });
        }
        let mut i = 0;
        while i < n {
            if pages[i].is_some() {
                i += 1;
                continue;
            }
            let mut j = i;
            while j < n && pages[j].is_none() {
                j += 1;
            }
            let start = (p0 + i as u64) * u;
            let end = ((p0 + j as u64) * u).min(of.len);
            let bytes = self.issue(c, &of, start, end, ReadKind::Point)?;
            for (k, chunk) in bytes.chunks(u as usize).enumerate() {
                let page: Rc<[u8]> = Rc::from(chunk);
                let key = CacheKey::Page(c, p0 + (i + k) as u64);
                self.cache_put(key, CacheValue::Page(Rc::clone(&page)), chunk.len() as u64);
                pages[i + k] = Some(page);
            }
            i = j;
        }
        let end = off + len as u64;
        for (k, page) in pages.iter().enumerate() {
            let ps = (p0 + k as u64) * u;
            let page = page.as_deref().unwrap_or(&[]);
            let s = off.max(ps) - ps;
            let e = (end.min(ps + page.len() as u64)).saturating_sub(ps);
            if s < e {
                out.extend_from_slice(&page[s as usize..e as usize]);
            }
        }
        if out.len() != len {
            let e = Error::at(
                ErrorKind::UnexpectedEof {
                    need: len as u64,
                    have: out.len() as u64,
                },
                c,
                off,
                "cached component read",
            );
            return Err(self.locate(c, e, None));
        }
        Ok(out)
    }

    /// A parsed object kept in the index cache under `(ns, a, b)` (e.g. a
    /// promoted-index block: its promoted index's Index.db offset and
    /// number). Counts a hit or a miss on component `c`.
    pub(crate) fn cached_object<T: Any>(
        &self,
        c: Component,
        ns: u8,
        a: u64,
        b: u64,
    ) -> Option<Rc<T>> {
        match self.cache_get(&CacheKey::Object(c, ns, a, b)) {
            Some(CacheValue::Object(o)) => o.downcast::<T>().ok(),
            _ => None,
        }
    }

    /// Keep a parsed object of about `size` bytes in the index cache
    /// (accounted on component `c`).
    pub(crate) fn cache_object<T: Any>(
        &self,
        c: Component,
        ns: u8,
        a: u64,
        b: u64,
        v: Rc<T>,
        size: u64,
    ) {
        self.cache_put(CacheKey::Object(c, ns, a, b), CacheValue::Object(v), size);
    }

    /// A snapshot of the counters.
    pub fn stats(&self) -> IoStats {
        self.stats.borrow().clone()
    }

    /// Mutable access to the counters (for layers above: caches, decompression).
    pub fn stats_mut(&self) -> std::cell::RefMut<'_, IoStats> {
        self.stats.borrow_mut()
    }
}

/// Fill `buf` from `pos` with reads of at most `max_io` bytes (what a scan
/// block is made of); an error comes with the offset of the failed read.
fn read_in_pieces(
    file: &OpenFile,
    pos: u64,
    buf: &mut [u8],
    max_io: usize,
) -> std::result::Result<(), (std::io::Error, u64)> {
    for (i, piece) in buf.chunks_mut(max_io.max(1)).enumerate() {
        let at = pos + (i * max_io.max(1)) as u64;
        file.read_exact_into(at, piece).map_err(|e| (e, at))?;
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    /// A temporary file of `n` bytes (byte i = i mod 251) and a layer over it
    /// as Data.db and Index.db.
    fn layer(n: usize, opts: IoOptions) -> (IoLayer, PathBuf, Vec<u8>) {
        let dir = std::env::temp_dir().join(format!(
            "sstkit-io-{}-{:?}-{}",
            std::process::id(),
            std::thread::current().id(),
            n
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(format!("f-{:?}-{}", opts.mode, opts.unit));
        let bytes: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
        std::fs::write(&p, &bytes).unwrap();
        let mut paths = HashMap::new();
        paths.insert(Component::Data, p.clone());
        paths.insert(Component::Index, p.clone());
        (IoLayer::with_options(paths, opts), p, bytes)
    }

    fn data(l: &IoLayer) -> ComponentIo {
        *l.stats().get(Component::Data)
    }

    /// The reads a scan of `len` bytes issues: blocks of at most `block`
    /// bytes, each read in pieces of at most `max_io`.
    fn scan_pieces(len: usize, block: usize, max_io: u64) -> u64 {
        (0..len)
            .step_by(block)
            .map(|o| ((len - o).min(block) as u64).div_ceil(max_io))
            .sum()
    }

    #[test]
    fn point_reads_are_aligned_and_coalesced() {
        for mode in [IoMode::Pread, IoMode::Mmap, IoMode::Direct] {
            let opts = IoOptions {
                mode,
                max_io: 16 * 1024,
                ..IoOptions::default()
            };
            let (l, p, bytes) = layer(100_000, opts);
            let r = match l.read(Component::Data, 5000, 100, ReadKind::Point) {
                Err(e) if mode == IoMode::Direct => {
                    eprintln!("O_DIRECT not available here: {e}");
                    continue;
                }
                r => r.unwrap(),
            };
            assert_eq!(r, &bytes[5000..5100]);
            assert_eq!((data(&l).reads, data(&l).bytes), (1, 4096), "{mode:?}");
            // Straddling a unit boundary: two units, one read.
            l.begin_operation();
            let r = l.read(Component::Data, 8000, 200, ReadKind::Point).unwrap();
            assert_eq!(r, &bytes[8000..8200]);
            assert_eq!((data(&l).reads, data(&l).bytes), (2, 4096 + 8192));
            // 40 000 bytes from 4096: 10 units = 40 960 bytes in 16 KiB pieces.
            l.begin_operation();
            let before = data(&l);
            l.read(Component::Data, 4096, 40_000, ReadKind::Point)
                .unwrap();
            let d = data(&l);
            assert_eq!(
                (d.reads - before.reads, d.bytes - before.bytes),
                (3, 40_960)
            );
            // The next request starting in the kept last unit reads only what follows.
            let before = data(&l);
            let r = l
                .read(Component::Data, 44_000, 2000, ReadKind::Point)
                .unwrap();
            assert_eq!(r, &bytes[44_000..46_000]);
            let d = data(&l);
            assert_eq!((d.reads - before.reads, d.bytes - before.bytes), (1, 4096));
            // ... within one operation only.
            l.begin_operation();
            let before = data(&l);
            l.read(Component::Data, 44_000, 10, ReadKind::Point)
                .unwrap();
            assert_eq!(data(&l).reads - before.reads, 1);
            // The end of the file: clipped, not past it.
            let before = data(&l);
            let r = l
                .read(Component::Data, 99_990, 10, ReadKind::Point)
                .unwrap();
            assert_eq!(r, &bytes[99_990..]);
            assert_eq!(data(&l).bytes - before.bytes, 100_000 - 98_304);
            assert!(l
                .read(Component::Data, 99_990, 11, ReadKind::Point)
                .is_err());
            let _ = std::fs::remove_file(p);
        }
    }

    #[test]
    fn backward_point_reads_keep_the_first_unit() {
        let (l, p, bytes) = layer(100_000, IoOptions::default());
        // [50 000, 60 000): units 12..=14 (12 288 bytes).
        let r = l
            .read(Component::Data, 50_000, 10_000, ReadKind::Point)
            .unwrap();
        assert_eq!(r, &bytes[50_000..60_000]);
        assert_eq!(data(&l).bytes, 12_288);
        // The range just below, ending inside the kept first unit (49 152..):
        // only the units before it are read.
        let before = data(&l);
        let r = l
            .read(Component::Data, 41_000, 9_000, ReadKind::Point)
            .unwrap();
        assert_eq!(r, &bytes[41_000..50_000]);
        let d = data(&l);
        assert_eq!((d.reads - before.reads, d.bytes - before.bytes), (1, 8192));
        // Entirely inside the kept first unit (40 960..45 056): nothing read.
        let before = data(&l);
        let r = l
            .read(Component::Data, 41_500, 100, ReadKind::Point)
            .unwrap();
        assert_eq!(r, &bytes[41_500..41_600]);
        assert_eq!(data(&l).reads, before.reads);
        // Not across operations.
        l.begin_operation();
        let before = data(&l);
        l.read(Component::Data, 40_000, 1_000, ReadKind::Point)
            .unwrap();
        assert_eq!(data(&l).bytes - before.bytes, 8192);
        let _ = std::fs::remove_file(p);
    }

    #[test]
    fn point_reads_inside_the_read_ahead_window_are_free() {
        let opts = IoOptions {
            read_ahead: 64 * 1024,
            ..IoOptions::default()
        };
        let (l, p, bytes) = layer(200_000, opts);
        l.read(Component::Data, 1000, 10, ReadKind::Scan).unwrap();
        let before = data(&l);
        let r = l
            .read(Component::Data, 30_000, 5_000, ReadKind::Point)
            .unwrap();
        assert_eq!(r, &bytes[30_000..35_000]);
        assert_eq!(data(&l), before);
        // Past the window: a point read.
        l.read(Component::Data, 70_000, 10, ReadKind::Point)
            .unwrap();
        assert_eq!(data(&l).reads, before.reads + 1);
        let _ = std::fs::remove_file(p);
    }

    #[test]
    fn scans_read_ahead() {
        let opts = IoOptions {
            read_ahead: 256 * 1024,
            ..IoOptions::default()
        };
        let (l, p, bytes) = layer(600_000, opts);
        let mut got = Vec::new();
        let mut off = 0;
        while off < bytes.len() {
            let n = (bytes.len() - off).min(10_000);
            got.extend(
                l.read(Component::Data, off as u64, n, ReadKind::Scan)
                    .unwrap(),
            );
            off += n;
        }
        assert_eq!(got, bytes);
        // Windows of 256 KiB: [0,256K) [256K,512K) [512K,600000), 128 KiB reads.
        let d = data(&l);
        assert_eq!((d.reads, d.bytes), (2 + 2 + 1, 600_000));
        // Point reads never read ahead.
        l.begin_operation();
        l.read(Component::Data, 0, 10, ReadKind::Point).unwrap();
        assert_eq!(data(&l).bytes, 600_000 + 4096);
        let _ = std::fs::remove_file(p);
    }

    #[test]
    fn zero_copy_scans_lend_every_byte_once_in_every_mode() {
        for mode in [IoMode::Pread, IoMode::Mmap, IoMode::Direct] {
            let opts = IoOptions {
                mode,
                max_io: 64 * 1024,
                ..IoOptions::default()
            };
            let (l, p, bytes) = layer(600_001, opts);
            for (start, block) in [(0u64, 256 * 1024usize), (4096, 100_000), (0, 1 << 20)] {
                l.begin_operation();
                let before = data(&l);
                let mut got = Vec::new();
                let mut offsets = Vec::new();
                let r = l.scan(
                    Component::Data,
                    start,
                    bytes.len() as u64,
                    block,
                    |at, b| {
                        offsets.push(at);
                        assert!(b.len() <= block);
                        got.extend_from_slice(b);
                        Ok(())
                    },
                );
                match r {
                    Err(e) if mode == IoMode::Direct => {
                        eprintln!("O_DIRECT not available here: {e}");
                        break;
                    }
                    r => r.unwrap(),
                }
                assert_eq!(got, &bytes[start as usize..], "{mode:?} {start} {block}");
                let expected: Vec<u64> = (start..bytes.len() as u64).step_by(block).collect();
                assert_eq!(offsets, expected);
                // Reads of at most max_io, each block whole pieces; every byte once.
                let d = data(&l);
                let len = bytes.len() - start as usize;
                let pieces = scan_pieces(len, block, 64 * 1024);
                assert_eq!(
                    (d.reads - before.reads, d.bytes - before.bytes),
                    (pieces, len as u64),
                    "{mode:?} {start} {block}"
                );
            }
            // Past the end: an error before any read; an error from `f` stops the scan.
            let before = data(&l);
            assert!(l
                .scan(Component::Data, 0, bytes.len() as u64 + 1, 4096, |_, _| Ok(
                    ()
                ))
                .is_err());
            assert_eq!(data(&l), before);
            let mut calls = 0;
            let stop = l.scan(Component::Data, 0, bytes.len() as u64, 4096, |at, _| {
                calls += 1;
                if at >= 8192 {
                    Err(Error::new(ErrorKind::Unsupported("stop".into()), "test"))
                } else {
                    Ok(())
                }
            });
            if mode != IoMode::Direct || stop.is_err() {
                assert!(stop.is_err(), "{mode:?}");
                assert_eq!(calls, 3, "{mode:?}");
            }
            let _ = std::fs::remove_file(p);
        }
    }

    #[test]
    fn parts_scans_lend_each_range_in_order_and_count_like_scans() {
        for mode in [IoMode::Pread, IoMode::Mmap, IoMode::Direct] {
            let opts = IoOptions {
                mode,
                max_io: 64 * 1024,
                ..IoOptions::default()
            };
            let (l, p, bytes) = layer(600_001, opts);
            let len = bytes.len() as u64;
            let block = 100_000usize;
            let cuts = [0u64, 4096, 250_000, 250_001, len];
            let parts: Vec<_> = cuts
                .windows(2)
                .map(|w| (w[0]..w[1], (Vec::new(), Vec::new())))
                .collect();
            l.begin_operation();
            let before = data(&l);
            let r = l.scan_parts(Component::Data, parts, block, |(got, at), pos, b| {
                assert!(b.len() <= block);
                at.push(pos);
                got.extend_from_slice(b);
                Ok(())
            });
            let done = match r {
                Err(e) if mode == IoMode::Direct => {
                    eprintln!("O_DIRECT not available here: {e}");
                    continue;
                }
                r => r.unwrap(),
            };
            assert_eq!(done.len(), 4);
            let mut pieces = 0u64;
            for (w, (got, at)) in cuts.windows(2).zip(&done) {
                let (s, e) = (w[0] as usize, w[1] as usize);
                assert_eq!(got, &bytes[s..e], "{mode:?} {s}..{e}");
                assert_eq!(at, &(w[0]..w[1]).step_by(block).collect::<Vec<_>>());
                pieces += scan_pieces(e - s, block, 64 * 1024);
            }
            let d = data(&l);
            assert_eq!(
                (d.reads - before.reads, d.bytes - before.bytes),
                (pieces, len),
                "{mode:?}"
            );
            // Past the end: an error before any read. An error from `f`
            // comes back, the first in range order.
            let before = data(&l);
            let bad = vec![(0..10, ()), (10..len + 1, ())];
            assert!(l
                .scan_parts(Component::Data, bad, 4096, |_, _, _| Ok(()))
                .is_err());
            assert_eq!(data(&l), before);
            let two = vec![(0..8192, ()), (8192..len, ())];
            let stop = l.scan_parts(Component::Data, two, 4096, |_, at, _| {
                if at == 4096 || at == 16384 {
                    Err(Error::new(
                        ErrorKind::Unsupported(format!("stop {at}")),
                        "test",
                    ))
                } else {
                    Ok(())
                }
            });
            let e = stop.unwrap_err().to_string();
            assert!(e.contains("stop 4096"), "{mode:?}: {e}");
            let _ = std::fs::remove_file(p);
        }
    }

    #[test]
    fn mapped_whole_components_equal_and_count_like_read_all() {
        for mode in [IoMode::Pread, IoMode::Mmap, IoMode::Direct] {
            let opts = IoOptions {
                mode,
                ..IoOptions::default()
            };
            let (l, p, bytes) = layer(300_001, opts);
            let read = match l.read_all(Component::Data) {
                Err(e) if mode == IoMode::Direct => {
                    eprintln!("O_DIRECT not available here: {e}");
                    continue;
                }
                r => r.unwrap(),
            };
            let after_read = data(&l);
            l.begin_operation();
            let mapped = l.map_all(Component::Data).unwrap();
            assert_eq!(&mapped[..], &bytes[..], "{mode:?}");
            assert_eq!(read, bytes);
            let d = data(&l);
            assert_eq!(
                (d.reads - after_read.reads, d.bytes - after_read.bytes),
                (after_read.reads, after_read.bytes),
                "{mode:?}"
            );
            let _ = std::fs::remove_file(p);
        }
    }

    #[test]
    fn index_cache_hits_misses_evictions() {
        let opts = IoOptions {
            index_cache_bytes: 3 * (4096 + 64),
            ..IoOptions::default()
        };
        let (l, p, bytes) = layer(50_000, opts);
        let idx = |l: &IoLayer| *l.stats().get(Component::Index);
        // Two pages, one read.
        assert_eq!(
            l.read_cached(Component::Index, 4000, 200).unwrap(),
            &bytes[4000..4200]
        );
        let s = idx(&l);
        assert_eq!(
            (s.reads, s.bytes, s.cache_misses, s.cache_hits),
            (1, 8192, 2, 0)
        );
        // Warm: no read.
        l.begin_operation();
        assert_eq!(
            l.read_cached(Component::Index, 4100, 10).unwrap(),
            &bytes[4100..4110]
        );
        let s = idx(&l);
        assert_eq!((s.reads, s.cache_hits), (1, 1));
        // Two more pages: one eviction (capacity 3 pages).
        l.read_cached(Component::Index, 24_000, 1000).unwrap();
        let s = idx(&l);
        assert_eq!((s.reads, s.cache_misses, s.cache_evictions), (2, 4, 1));
        // Objects share the cache.
        assert!(l.cached_object::<u32>(Component::Index, 1, 7, 0).is_none());
        l.cache_object(Component::Index, 1, 7, 0, Rc::new(5u32), 8);
        assert_eq!(
            *l.cached_object::<u32>(Component::Index, 1, 7, 0).unwrap(),
            5
        );
        let _ = std::fs::remove_file(p);

        // Disabled: nothing kept across operations, nothing counted.
        let (l, p, _) = layer(
            50_000,
            IoOptions {
                index_cache_bytes: 0,
                ..IoOptions::default()
            },
        );
        l.read_cached(Component::Index, 0, 10).unwrap();
        l.read_cached(Component::Index, 20, 10).unwrap();
        assert_eq!(idx(&l).reads, 1);
        l.begin_operation();
        l.read_cached(Component::Index, 20, 10).unwrap();
        let s = idx(&l);
        assert_eq!((s.reads, s.cache_hits, s.cache_misses), (2, 0, 0));
        let _ = std::fs::remove_file(p);
    }

    #[test]
    fn option_checks() {
        assert!(IoOptions::default().checked().is_ok());
        let bad = IoOptions {
            unit: 1000,
            ..IoOptions::default()
        };
        assert!(bad.checked().unwrap_err().contains("--io-unit"));
        let bad = IoOptions {
            unit: 256,
            ..IoOptions::default()
        };
        assert!(bad.checked().is_err());
        let bad = IoOptions {
            max_io: 100,
            ..IoOptions::default()
        };
        assert!(bad.checked().unwrap_err().contains("--max-io"));
        let o = IoOptions {
            max_io: 10_000,
            ..IoOptions::default()
        }
        .checked()
        .unwrap();
        assert_eq!(o.max_io, 8192);
    }
}
