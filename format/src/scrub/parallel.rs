//! Scrub's walk on several threads (mode `validate`): Data.db cut into
//! units of whole partitions at the positions the index's first pass reads
//! anyway ([`crate::validate::Cuts`]), each unit walked on a thread
//! ([`crate::engine::parallel::ordered`]: results in unit order, at most
//! two units per thread ahead of the one joined last).
//!
//! A unit's walk starts knowing nothing of the partitions before it, and
//! settles only the partitions whose verdict does not depend on them (see
//! the `walk` module): the order of its first partition is checked when it
//! is joined, its timestamps are added to the range seen, and it stops at
//! the first partition it cannot settle alone. It is joined to the walk of
//! the calling thread ([`Walk::join`]) only when that walk is where the
//! unit starts; the calling thread then settles the partition the unit
//! stopped at (resynchronising after it as one thread does) and walks the
//! rest of the unit itself. Otherwise (damage: a resynchronisation past
//! the unit's start) the calling thread walks the unit itself. So the
//! findings, their order and the counts are those of one walk.

use std::sync::Mutex;

use super::starts::Seed;
use super::walk::{Ctx, Joined, Walk};
use super::*;
use crate::engine::parallel::ordered;
use crate::validate::Unit;

/// Walk `units` of Data.db on `threads` threads into `w` (at the start of
/// Data.db), joined in order; then the rest of Data.db on this thread.
pub(super) fn walk(
    sst: &Sstable,
    cx: &Ctx<'_>,
    w: &mut Walk<'_>,
    units: &[Unit],
    threads: usize,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<()> {
    let data_len = w.reader.data_len();
    // A unit's walk checks partitions against the index as the scanner
    // trusted it at the start: the calling thread's may only stop trusting it.
    // (An untrusted index is not read by judging: a unit's walk goes without.)
    let starts: Option<Seed> = match w.scanner.starts.as_ref().filter(|s| s.trusted) {
        Some(s) => match s.seed() {
            Some(seed) => Some(seed),
            None => return w.run_until(cx, &mut None, data_len, progress),
        },
        None => None,
    };
    let (bad, guard) = (w.scanner.bad.clone(), w.scanner.guard);
    let stamps = w.stamps.fresh();
    let reopen = sst.reopener();
    let init = || reopen.open().ok();
    let work = |s: &mut Option<Sstable>, i: usize| -> Option<Joined> {
        let sst = s.as_ref()?;
        let u = &units[i];
        let starts = match &starts {
            Some(seed) => Some(seed.open(sst)?),
            None => None,
        };
        let scanner = Scanner::open(
            sst,
            cx.header,
            cx.partitioner,
            cx.opts,
            cx.chunk_len,
            starts,
            bad.clone(),
            guard,
        )
        .ok()?;
        let mut reader = ScanReader::with_options(sst, cx.header, cx.opts.reader).ok()?;
        // The unit's bytes in one planned read (object storage: one request).
        reader.plan_unit(Some(DataPos(u.end)));
        let report = Report {
            problems: Problems::with_max(cx.opts.max_problems),
            ..Report::default()
        };
        let mut uw = Walk::new(cx, reader, scanner, stamps.clone(), report, u.start).for_unit();
        uw.run_until(cx, &mut None, u.end, &mut |_, _| {}).ok()?;
        uw.finish_unit()
    };
    // The threads' reads count as the sstable's (`--io-stats`).
    let io = Mutex::new(crate::io::IoStats::default());
    let done = |s: Option<Sstable>| {
        if let Some(s) = s {
            *io.lock().unwrap_or_else(|e| e.into_inner()) += &s.io.stats();
        }
    };
    let mut failed = None;
    let mut take = |i: usize, r: Option<Joined>| -> bool {
        let u = &units[i];
        let walked = match r {
            Some(j) if w.continues_at(u.start) => w
                .join(cx, j)
                .and_then(|()| w.run_until(cx, &mut None, u.end, progress)),
            // Walked here as one thread walks it, from where the walk is.
            _ => w.run_until(cx, &mut None, u.end, progress),
        };
        if let Err(e) = walked {
            failed = Some(e);
            return false;
        }
        progress(w.pos.min(data_len), data_len);
        !w.stopped
    };
    ordered(units.len(), threads, &init, &work, &done, &mut take);
    *sst.io.stats_mut() += &io.into_inner().unwrap_or_else(|e| e.into_inner());
    if let Some(e) = failed {
        return Err(e);
    }
    w.run_until(cx, &mut None, data_len, progress)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(case: &str) -> Sstable {
        let data = crate::test_support::fixture_data(case).unwrap();
        Sstable::open_path(&data).unwrap()
    }

    /// Everything the report says, but how many units were joined.
    fn said(r: &Report) -> String {
        format!(
            "{:?}",
            Report {
                threaded_units: 0,
                ..r.clone()
            }
        )
    }

    /// The units' walks are joined (BIG and BTI, compressed or not), and
    /// the report is the one walk's.
    #[test]
    fn units_walked_on_threads_give_the_one_walk_report() {
        for case in [
            "nb_clustering",
            "da_clustering",
            "nb_clustering_nocompress",
            "oa_deletes",
            "nb_wide",
        ] {
            let sst = fixture(case);
            let opts = |threads| Options {
                threads,
                unit_bytes: 64,
                ..Options::default()
            };
            let one = scrub(&sst, &opts(1), None, &mut |_, _| {}).unwrap();
            assert_eq!(one.threaded_units, 0, "{case}");
            assert!(one.partitions > 1, "{case}");
            for threads in [2, 3] {
                let many = scrub(&sst, &opts(threads), None, &mut |_, _| {}).unwrap();
                assert!(many.threaded_units > 1, "{case}: {}", many.threaded_units);
                assert_eq!(said(&one), said(&many), "{case}: {threads} threads");
            }
        }
    }
}
