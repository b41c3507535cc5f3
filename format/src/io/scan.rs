//! Zero-copy scans: a whole-range pass that lends each block to a closure
//! instead of returning an owned copy.

use super::file::OpenFile;
use super::{IoLayer, IoMode, ReadKind};
use crate::component::Component;
use crate::error::{Error, ErrorKind, Result};

impl IoLayer {
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
            let t0 = std::time::Instant::now();
            let got = of
                .read_into(a0, want, &mut buf)
                .map_err(|e| self.locate(c, Error::from(e), Some(a0)))?;
            self.stats.borrow_mut().record_latency(c, t0.elapsed());
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

    /// The error of a scan of `[start, end)` that the file cannot hold.
    pub(super) fn check_scan_range(
        &self,
        c: Component,
        of: &OpenFile,
        start: u64,
        end: u64,
    ) -> Result<()> {
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
    pub(super) fn count_scan_reads(&self, c: Component, n: usize) {
        self.count_reads(c, n as u64, ReadKind::Scan);
    }

    /// The `pread` path of [`IoLayer::scan`] from `pos`: each block is read
    /// into one reused buffer (zero-filled once) and handed to `f`, so the
    /// block is still in the CPU cache when `f` reads it (the alternatives
    /// measured are in bench/README.md, `validate.sh`).
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
            let took = read_in_pieces(of, pos, &mut buf[..n], max_io)
                .map_err(|(e, at)| self.locate(c, Error::from(e), Some(at)))?;
            self.stats.borrow_mut().record_latency(c, took);
            f(pos, &buf[..n])?;
            pos += n as u64;
        }
        Ok(())
    }
}
/// Fill `buf` from `pos` with reads of at most `max_io` bytes (what a scan
/// block is made of); an error comes with the offset of the failed read.
/// Returns the time the reads took.
pub(super) fn read_in_pieces(
    file: &OpenFile,
    pos: u64,
    buf: &mut [u8],
    max_io: usize,
) -> std::result::Result<std::time::Duration, (std::io::Error, u64)> {
    let t0 = std::time::Instant::now();
    for (i, piece) in buf.chunks_mut(max_io.max(1)).enumerate() {
        let at = pos + (i * max_io.max(1)) as u64;
        file.read_exact_into(at, piece).map_err(|e| (e, at))?;
    }
    Ok(t0.elapsed())
}
