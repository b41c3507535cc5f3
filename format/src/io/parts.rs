//! Scans of several disjoint ranges of one component at once, one thread
//! per range, counted as if scanned one after the other.

use super::file::OpenFile;
use super::scan::read_in_pieces;
use super::{IoLayer, IoMode};
use crate::component::Component;
use crate::error::{Error, ErrorKind, Result};

impl IoLayer {
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
        // offset when it was an I/O error, time spent reading).
        type Done<S> = (
            u64,
            u64,
            S,
            Option<(Error, Option<u64>)>,
            std::time::Duration,
        );
        // Scan one range (on whichever thread).
        let work = |r: std::ops::Range<u64>, mut s: S| -> Done<S> {
            let mut buf: Vec<u8> = Vec::new();
            let mut pos = r.start;
            let mut took = std::time::Duration::ZERO;
            while pos < r.end {
                let n = (block as u64).min(r.end - pos) as usize;
                let bytes = match file.mapped(pos, n) {
                    Some(m) => m,
                    None => {
                        if buf.len() < n {
                            buf.resize(n, 0);
                        }
                        match read_in_pieces(file, pos, &mut buf[..n], max_io) {
                            Ok(t) => took += t,
                            Err((e, at)) => {
                                let err = Some((e.into(), Some(at)));
                                return (r.start, pos + n as u64, s, err, took);
                            }
                        }
                        &buf[..n]
                    }
                };
                if let Err(e) = f(&mut s, pos, bytes) {
                    return (r.start, pos + n as u64, s, Some((e, None)), took);
                }
                pos += n as u64;
            }
            (r.start, pos, s, None, took)
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
            let (start, reached, s, err, took) = match d {
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
            self.stats.borrow_mut().record_latency(c, took);
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
}
