//! One open component file and the physical read of each IO mode.

use std::fs::File;
use std::path::Path;

use super::IoMode;

/// Memory alignment of O_DIRECT buffers (at least any device's logical block).
const DIRECT_ALIGN: usize = 4096;

/// Where the bytes come from.
enum Source {
    Local(File),
    /// An object in object storage: every read is a ranged GET.
    #[cfg(feature = "object-store")]
    Remote(super::remote::Object),
}

/// One open component file.
pub(crate) struct OpenFile {
    src: Source,
    pub(crate) len: u64,
    mode: IoMode,
    map: Option<memmap2::Mmap>,
}

impl std::fmt::Debug for OpenFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenFile")
            .field("len", &self.len)
            .field("mode", &self.mode)
            .field("mapped", &self.map.is_some())
            .finish()
    }
}

impl OpenFile {
    /// Open `path` for reading in `mode`.
    pub(crate) fn open(path: &Path, mode: IoMode) -> std::io::Result<OpenFile> {
        if super::store::is_url(path) {
            return Self::open_remote(path, mode);
        }
        let file = match mode {
            IoMode::Direct => open_direct(path)?,
            _ => File::open(path)?,
        };
        let len = file.metadata()?.len();
        let map = if mode == IoMode::Mmap && len > 0 {
            // SAFETY: the map is read-only and sstables are immutable once
            // sealed; a file truncated by another process while mapped would
            // fault (SIGBUS), the documented risk of `--io-mode mmap`.
            Some(unsafe { memmap2::Mmap::map(&file)? })
        } else {
            None
        };
        Ok(OpenFile {
            src: Source::Local(file),
            len,
            mode,
            map,
        })
    }

    /// An object in object storage (never mapped; `direct` reads as `pread`
    /// does, its aligned lengths clipped at the end of the object).
    #[cfg(feature = "object-store")]
    fn open_remote(path: &Path, mode: IoMode) -> std::io::Result<OpenFile> {
        let obj = super::remote::Object::open(path)?;
        Ok(OpenFile {
            len: obj.len,
            src: Source::Remote(obj),
            mode,
            map: None,
        })
    }

    #[cfg(not(feature = "object-store"))]
    fn open_remote(path: &Path, _mode: IoMode) -> std::io::Result<OpenFile> {
        Err(super::store::unsupported(path))
    }

    /// The local file, or the error of a remote object asked for a
    /// local-only operation.
    fn local(&self) -> std::io::Result<&File> {
        match &self.src {
            Source::Local(f) => Ok(f),
            #[cfg(feature = "object-store")]
            Source::Remote(_) => Err(std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "not a local file",
            )),
        }
    }

    /// Read up to `len` bytes at `off` and append them to `out`; fewer only
    /// at the end of the file. `off` (and, for O_DIRECT, `len`) must be
    /// aligned to the IO unit. Returns the number of bytes appended.
    pub(crate) fn read_into(
        &self,
        off: u64,
        len: usize,
        out: &mut Vec<u8>,
    ) -> std::io::Result<usize> {
        let avail = self.len.saturating_sub(off).min(len as u64) as usize;
        if avail == 0 {
            return Ok(0);
        }
        #[cfg(feature = "object-store")]
        if let Source::Remote(obj) = &self.src {
            obj.get_into(off..off + avail as u64, out)?;
            return Ok(avail);
        }
        match (&self.map, self.mode) {
            (Some(m), _) => {
                let s = off as usize;
                out.extend_from_slice(m.get(s..s + avail).unwrap_or(&[]));
                Ok(avail)
            }
            (None, IoMode::Direct) => self.read_direct(off, len, avail, out),
            _ => {
                let start = out.len();
                out.resize(start + avail, 0);
                read_exact_at(self.local()?, &mut out[start..], off)?;
                Ok(avail)
            }
        }
    }

    /// True when the file is memory-mapped (`--io-mode mmap`, non-empty).
    pub(crate) fn is_mapped(&self) -> bool {
        self.map.is_some()
    }

    /// The mapped bytes `[off, off + len)` when the file is mapped and the
    /// range lies inside it (no copy: the page cache itself).
    pub(crate) fn mapped(&self, off: u64, len: usize) -> Option<&[u8]> {
        let m = self.map.as_ref()?;
        let s = usize::try_from(off).ok()?;
        m.get(s..s.checked_add(len)?)
    }

    /// A read-only map of the whole file (any mode but direct), for
    /// components read whole and kept for a whole pass: the bytes stay page
    /// cache (reclaimable) instead of a heap copy the size of the file.
    pub(crate) fn map_whole(&self) -> std::io::Result<memmap2::Mmap> {
        // SAFETY: as for `open`'s map: read-only, sstables are immutable once
        // sealed; a concurrent truncation would fault (SIGBUS). Cassandra and
        // Scylla never truncate a sealed sstable (deleting it keeps the
        // mapping valid).
        unsafe { memmap2::Mmap::map(self.local()?) }
    }

    /// `pread` exactly `buf.len()` bytes at `off` into `buf` (modes pread
    /// and mmap; no zero-filling, no intermediate buffer).
    pub(crate) fn read_exact_into(&self, off: u64, buf: &mut [u8]) -> std::io::Result<()> {
        #[cfg(feature = "object-store")]
        if let Source::Remote(obj) = &self.src {
            let mut v = Vec::with_capacity(buf.len());
            obj.get_into(off..off + buf.len() as u64, &mut v)?;
            buf.copy_from_slice(&v);
            return Ok(());
        }
        read_exact_at(self.local()?, buf, off)
    }

    /// O_DIRECT: read `len` bytes (aligned) into an aligned buffer, keep the
    /// `avail` bytes that exist.
    fn read_direct(
        &self,
        off: u64,
        len: usize,
        avail: usize,
        out: &mut Vec<u8>,
    ) -> std::io::Result<usize> {
        let mut raw = vec![0u8; len + DIRECT_ALIGN];
        let skew = raw.as_ptr().align_offset(DIRECT_ALIGN);
        let buf = &mut raw[skew..skew + len];
        let mut got = 0usize;
        while got < avail {
            match pread(self.local()?, &mut buf[got..], off + got as u64) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.raw_os_error() == Some(EINVAL) => {
                    return Err(std::io::Error::new(
                        e.kind(),
                        "O_DIRECT read refused (EINVAL): the device needs a larger alignment; \
                         use a larger --io-unit (e.g. 4KiB) or --io-mode pread",
                    ))
                }
                Err(e) => return Err(e),
            }
        }
        if got < avail {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!("short O_DIRECT read: {got} of {avail} bytes"),
            ));
        }
        out.extend_from_slice(&buf[..avail]);
        Ok(avail)
    }
}

#[cfg(target_os = "linux")]
const EINVAL: i32 = libc::EINVAL;
#[cfg(not(target_os = "linux"))]
const EINVAL: i32 = 22;

#[cfg(target_os = "linux")]
fn open_direct(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::EINVAL) {
                std::io::Error::new(
                    e.kind(),
                    "the filesystem refused O_DIRECT (EINVAL); use --io-mode pread or mmap",
                )
            } else {
                e
            }
        })
}

#[cfg(not(target_os = "linux"))]
fn open_direct(_path: &Path) -> std::io::Result<File> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "--io-mode direct (O_DIRECT) is only supported on Linux; use pread or mmap",
    ))
}

#[cfg(unix)]
fn pread(f: &File, buf: &mut [u8], off: u64) -> std::io::Result<usize> {
    use std::os::unix::fs::FileExt;
    f.read_at(buf, off)
}

#[cfg(not(unix))]
fn pread(f: &File, buf: &mut [u8], off: u64) -> std::io::Result<usize> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = f.try_clone()?;
    f.seek(SeekFrom::Start(off))?;
    f.read(buf)
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
