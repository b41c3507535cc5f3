//! Read-ahead: a sequential scan reads windows of `read_ahead` bytes and
//! serves the following requests from the window.

use super::file::OpenFile;
use super::{IoLayer, ReadKind};
use crate::component::Component;
use crate::error::Result;

impl IoLayer {
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

    pub(super) fn read_scan(
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
}
