//! Point reads: a request widened to whole units, read in pieces of at most
//! `max_io`, with the first and last units kept for the next request of the
//! operation (alignment and coalescing).

use super::file::OpenFile;
use super::{IoLayer, IoMode, ReadKind};
use crate::component::Component;
use crate::error::{Error, ErrorKind, Result};

impl IoLayer {
    /// Fail unless `[off, off + len)` lies within the file; reserve `len`.
    pub(super) fn check_range(
        &self,
        c: Component,
        of: &OpenFile,
        off: u64,
        len: usize,
    ) -> Result<Vec<u8>> {
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
    pub(super) fn issue(
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
            let t0 = std::time::Instant::now();
            let got = of
                .read_into(pos, req as usize, &mut out)
                .map_err(|e| self.locate(c, Error::from(e), Some(pos)))?;
            let mut st = self.stats.borrow_mut();
            st.record_read(c, got as u64, kind);
            st.record_latency(c, t0.elapsed());
            drop(st);
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
    pub(super) fn issue_reusing(
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
            let t0 = std::time::Instant::now();
            of.read_exact_into(at, &mut buf[q..q + piece])
                .map_err(|e| self.locate(c, Error::from(e), Some(at)))?;
            self.stats.borrow_mut().record_latency(c, t0.elapsed());
            q += piece;
        }
        Ok(())
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
}
