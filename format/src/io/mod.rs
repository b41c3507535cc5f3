//! The IO layer: every byte any command reads from an sstable goes through
//! [`IoLayer`], which checks the range against the file length before it
//! allocates, and counts reads and bytes per component ([`IoStats`]).
//!
//! Expected IO of the metadata commands: one read of each component they
//! decode (`dump-statistics`: one Statistics.db read of the whole file).

mod stats;

pub use stats::{ComponentIo, IoStats};

use std::cell::RefCell;
use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use crate::component::Component;
use crate::error::{Error, ErrorKind, Result};

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

/// One open component file.
#[derive(Debug)]
struct OpenFile {
    file: File,
    len: u64,
}

/// Owns the open component files of one sstable and counts what is read.
#[derive(Debug)]
pub struct IoLayer {
    paths: HashMap<Component, PathBuf>,
    files: RefCell<HashMap<Component, OpenFile>>,
    stats: RefCell<IoStats>,
}

impl IoLayer {
    /// A layer over the given component paths (files are opened lazily).
    pub fn new(paths: HashMap<Component, PathBuf>) -> Self {
        IoLayer {
            paths,
            files: RefCell::new(HashMap::new()),
            stats: RefCell::new(IoStats::default()),
        }
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

    fn with_file<T>(&self, c: Component, f: impl FnOnce(&OpenFile) -> Result<T>) -> Result<T> {
        let mut files = self.files.borrow_mut();
        if let std::collections::hash_map::Entry::Vacant(slot) = files.entry(c) {
            let path = self.paths.get(&c).ok_or_else(|| self.missing(c))?;
            let file = File::open(path).map_err(|e| {
                if e.kind() == std::io::ErrorKind::NotFound {
                    self.missing(c)
                } else {
                    Error::from(e).in_file(path).in_component(c)
                }
            })?;
            let len = file
                .metadata()
                .map_err(|e| Error::from(e).in_file(path))?
                .len();
            slot.insert(OpenFile { file, len });
        }
        match files.get(&c) {
            Some(of) => f(of),
            None => Err(self.missing(c)),
        }
    }

    /// Length of a component file in bytes.
    pub fn len(&self, c: Component) -> Result<u64> {
        self.with_file(c, |f| Ok(f.len))
    }

    /// Read `len` bytes at `off` of component `c`. The range is checked
    /// against the file length before any allocation.
    pub fn read(&self, c: Component, off: u64, len: usize, kind: ReadKind) -> Result<Vec<u8>> {
        let path = self.paths.get(&c).cloned();
        self.with_file(c, |of| {
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
                return Err(match &path {
                    Some(p) => e.in_file(p),
                    None => e,
                });
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
            buf.resize(len, 0);
            read_exact_at(&of.file, &mut buf, off).map_err(|e| {
                let e = Error::from(e).in_component(c);
                let e = Error {
                    offset: Some(off),
                    ..e
                };
                match &path {
                    Some(p) => e.in_file(p),
                    None => e,
                }
            })?;
            self.stats.borrow_mut().record_read(c, len as u64, kind);
            Ok(buf)
        })
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

#[cfg(unix)]
fn read_exact_at(f: &File, buf: &mut [u8], off: u64) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    f.read_exact_at(buf, off)
}

#[cfg(not(unix))]
fn read_exact_at(f: &File, buf: &mut [u8], off: u64) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = f.try_clone()?;
    f.seek(SeekFrom::Start(off))?;
    f.read_exact(buf)
}
