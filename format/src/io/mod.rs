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
//! # Object storage
//!
//! A component path that is a URL (`s3://bucket/key`, `http(s)://…`; see
//! [`store`], and [`remote`] with the `object-store` feature) is read with
//! ranged GETs instead of `pread`: every rule above applies unchanged (one
//! physical read is one GET, `mmap` and `direct` read as `pread` does), so
//! the counters of a remote read equal those of the same read of a local
//! copy with the same options. The options differ by default, though:
//! [`IoOptions::remote`] gives remote reads larger units, reads and
//! read-ahead windows (a GET costs a round trip) unless the user set them.
//! Object lengths come from listings or one HEAD, cached.
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
mod options;
mod parts;
mod point;
mod readahead;
#[cfg(feature = "object-store")]
pub mod remote;
mod scan;
mod stats;
pub mod store;
#[cfg(test)]
mod tests;

pub use options::{IoMode, IoOptions, ReadKind, RemoteIo};
pub use stats::{ComponentIo, IoStats};

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use cache::Lru;
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
    /// clamped to something usable), or with
    /// [`IoOptions::for_object_storage`] when the files are URLs.
    pub fn with_options(paths: HashMap<Component, PathBuf>, opts: IoOptions) -> Self {
        let opts = if paths.values().any(|p| store::is_url(p)) {
            opts.for_object_storage()
        } else {
            opts
        };
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
        self.paths.get(&c).is_some_and(|p| store::is_file(p))
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

    /// A snapshot of the counters.
    pub fn stats(&self) -> IoStats {
        self.stats.borrow().clone()
    }

    /// Mutable access to the counters (for layers above: caches, decompression).
    pub fn stats_mut(&self) -> std::cell::RefMut<'_, IoStats> {
        self.stats.borrow_mut()
    }
}
