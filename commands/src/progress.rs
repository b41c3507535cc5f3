//! The progress bar of long passes (dump-data to a file or pipe, validate,
//! validate-checksums, scrub): drawn on stderr only when stderr is a
//! terminal, one line that fits its width.
//!
//! Position and total are in the same unit: the pass reports both
//! ([`Progress::set`]), so a compressed Data.db is measured in uncompressed
//! bytes on both sides.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use crate::term::{self, Stream};

/// A byte progress bar on stderr (a no-op unless stderr is a terminal).
pub struct Progress {
    /// The label; `None` when nothing is shown.
    what: Option<String>,
    /// Drawn from the first known total on (never "0 B/0 B").
    bar: Option<indicatif::ProgressBar>,
    /// The total last set.
    total: u64,
    /// The bar is moved again from this position on (per-partition calls
    /// must stay cheap on hot scans).
    next: u64,
}

/// Bytes between two moves of the bar.
const STEP: u64 = 256 << 10;

/// Room the template takes besides the label and the bar: brackets,
/// `1023.99 MiB/1023.99 MiB`, ` ETA 00:59:59` and a spare column.
const FIXED: usize = 4 + 23 + 13 + 1;

/// The indicatif template for a label of `label_len` columns on a line of
/// `width` columns: the bar gets what is left, 10 to 40 columns.
pub fn template(label_len: usize, width: usize) -> String {
    let bar = width.saturating_sub(label_len + FIXED).clamp(10, 40);
    format!("{{msg}} [{{bar:{bar}}}] {{bytes}}/{{total_bytes}} ETA {{eta_precise}}")
}

impl Progress {
    /// A bar labelled `what` (drawn once a pass reports its total, with
    /// [`Progress::set`] or [`Progress::follow`]). Hidden unless stderr is
    /// a terminal.
    pub fn new(what: &str) -> Progress {
        let mut p = Progress::hidden();
        if Stream::Stderr.is_terminal() {
            p.what = Some(what.to_string());
        }
        p
    }

    /// No bar (a pass whose progress is not shown).
    pub fn hidden() -> Progress {
        Progress {
            what: None,
            bar: None,
            total: 0,
            next: 0,
        }
    }

    /// The bar, made on first use with a known total.
    fn bar(&mut self, total: u64) -> Option<&indicatif::ProgressBar> {
        let what = self.what.as_deref()?;
        if self.bar.is_none() {
            if total == 0 {
                return None;
            }
            let bar = indicatif::ProgressBar::with_draw_target(
                Some(total),
                indicatif::ProgressDrawTarget::stderr(),
            );
            let tpl = template(what.len(), term::width(Stream::Stderr));
            if let Ok(style) = indicatif::ProgressStyle::with_template(&tpl) {
                bar.set_style(style.progress_chars("=> "));
            }
            bar.set_message(what.to_string());
            self.total = total;
            self.bar = Some(bar);
        }
        if total != self.total {
            self.total = total;
            if let Some(b) = &self.bar {
                b.set_length(total);
            }
        }
        self.bar.as_ref()
    }

    /// `pos` bytes of `total` done.
    pub fn set(&mut self, pos: u64, total: u64) {
        if self.what.is_none() || (pos < self.next && total == self.total) {
            return;
        }
        self.next = pos.saturating_add(STEP);
        if let Some(b) = self.bar(total) {
            b.set_position(pos.min(total));
        }
    }

    /// Follow an engine run's notes: its progress moves the bar, the
    /// other notes are for the caller to read elsewhere.
    pub fn note(&mut self, n: sstkit_format::engine::Note) {
        if let sstkit_format::engine::Note::Progress { done, total } = n {
            self.set(done, total);
        }
    }

    /// Remove the bar (also done when dropped).
    pub fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }

    /// Run `pass` while a helper thread moves the bar to `counter` (bytes
    /// done of `total`) ten times a second: for passes that count in an
    /// atomic rather than call back (the threaded checksum pass).
    pub fn follow<T>(&mut self, counter: &AtomicU64, total: u64, pass: impl FnOnce() -> T) -> T {
        let Some(bar) = self.bar(total).cloned() else {
            return pass();
        };
        let done = AtomicBool::new(false);
        let r = std::thread::scope(|s| {
            s.spawn(|| {
                while !done.load(Ordering::Relaxed) {
                    bar.set_position(counter.load(Ordering::Relaxed).min(total));
                    std::thread::sleep(Duration::from_millis(100));
                }
            });
            let r = pass();
            done.store(true, Ordering::Relaxed);
            r
        });
        self.finish();
        r
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_widest_line_fits_80_columns() {
        // The longest label, the widest byte counts and ETA indicatif prints.
        let label = "validate-checksums";
        let tpl = template(label.len(), 80);
        let bar_len: usize = tpl
            .split("{bar:")
            .nth(1)
            .and_then(|r| r.split('}').next())
            .and_then(|n| n.parse().ok())
            .unwrap();
        let line = format!(
            "{label} [{}] 1023.99 MiB/1023.99 MiB ETA 00:59:59",
            "=".repeat(bar_len)
        );
        assert!(line.len() <= 80, "{} columns: {line}", line.len());
    }
}
