//! The data walk on several threads: Data.db cut into units of whole
//! partitions at the entries of the index the validation reads anyway
//! (Index.db's pre-pass, Partitions.db's walk), each unit walked on a
//! thread ([`crate::engine::parallel::ordered`]: results in unit order,
//! at most two units per thread ahead of the one joined last).
//!
//! A unit's walk starts knowing nothing of the partitions before it: the
//! previous key, the Index.db entry the walk before it stopped at, the bad
//! chunk it met last. It is joined to the walk of the calling thread
//! ([`Walk::join`]) only when that walk stopped where the unit starts,
//! with the index at the unit's first entry and no bad chunk the unit
//! would have taken for a new one; the order of its first partition is
//! checked then. Otherwise (damage: a partition that does not end where
//! the index says the next one starts, a resumption past the unit) the
//! calling thread walks the unit itself, going on from where the walk
//! stopped, as one thread does. So the findings, their order and the
//! counts are those of one walk.

use crate::data::{DataPos, ScanReader};
use crate::engine::parallel::ordered;
use crate::sstable::Sstable;

use super::problem::Problems;
use super::walk::{IndexAt, Joined, Shared, Walk};

/// Uncompressed bytes of a unit, about (the engine's unit size).
pub(crate) const UNIT_BYTES: u64 = 256 << 10;

/// Cut points gathered from the index in Data.db order: a partition start
/// at least a unit past the previous cut, with its Index.db entry's offset
/// (BIG). Memory grows with the units, not the partitions. Scrub cuts its
/// walk with them too, at the positions of its index's first pass.
pub(crate) struct Cuts {
    target: u64,
    points: Vec<(u64, Option<u64>)>,
    last: Option<u64>,
    /// The positions went out of order (a damaged index): no more cuts,
    /// the rest is one unit that the walk reads as one thread does.
    broken: bool,
}

/// A unit of whole partitions: `[start, end)` of uncompressed Data.db, and
/// the index entry of its first partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Unit {
    pub(crate) start: u64,
    pub(crate) end: u64,
    index_at: IndexAt,
}

impl Cuts {
    pub(crate) fn new(target: u64) -> Cuts {
        Cuts {
            target: target.max(1),
            points: Vec::new(),
            last: None,
            broken: false,
        }
    }

    /// The index lists a partition at `pos` (its entry at Index.db offset `entry`).
    pub(crate) fn partition(&mut self, pos: u64, entry: Option<u64>) {
        if self.broken {
            return;
        }
        if self.last.is_some_and(|l| pos <= l) {
            self.broken = true;
            return;
        }
        self.last = Some(pos);
        match self.points.last() {
            Some(&(start, _)) if pos - start < self.target => {}
            _ => self.points.push((pos, entry)),
        }
    }

    /// The units up to `data_len`; `None` when fewer than two, or when the
    /// index does not start where Data.db does.
    pub(crate) fn units(self, data_len: u64) -> Option<Vec<Unit>> {
        if self.points.first().map(|p| p.0) != Some(0) {
            return None;
        }
        let points: Vec<_> = self.points.into_iter().filter(|p| p.0 < data_len).collect();
        let units: Vec<Unit> = points
            .iter()
            .enumerate()
            .map(|(i, &(start, entry))| Unit {
                start,
                end: points.get(i + 1).map_or(data_len, |p| p.0),
                index_at: entry.map_or(IndexAt::NoIndex, IndexAt::Next),
            })
            .collect();
        (units.len() > 1).then_some(units)
    }
}

/// Walk Data.db from `reader` (at its start): on this thread alone when
/// `threads` is 1 or there are no units, else the units on `threads`
/// threads joined in order. `problems` are those found before the walk.
pub(super) fn walk<'a, 's>(
    sst: &'s Sstable,
    sh: &Shared<'a>,
    units: Option<Vec<Unit>>,
    threads: usize,
    reader: ScanReader<'s>,
    problems: Problems,
    progress: &mut dyn FnMut(u64, u64),
) -> Walk<'a, 's> {
    let units = units.filter(|_| threads > 1);
    let Some(units) = units else {
        let mut w = Walk::new(sh, reader, problems);
        // A reader that has not moved needs no seek: this cannot fail.
        let _ = w.run_until(sh, u64::MAX, progress);
        return w;
    };
    let before = problems.clone();
    let data_len = reader.data_len();
    let mut w = Walk::new(sh, reader, problems);
    let reopen = sst.reopener();
    let init = || reopen.open().ok();
    let work = |s: &mut Option<Sstable>, i: usize| -> Option<Joined<'a>> {
        let sst = s.as_ref()?;
        let u = &units[i];
        let mut reader = ScanReader::with_options(sst, sh.header, sh.reader).ok()?;
        // The unit's bytes in one planned read (object storage: one request).
        reader.plan_unit(Some(DataPos(u.end)));
        reader.seek_partition(DataPos(u.start)).ok()?;
        let mut uw = Walk::new(sh, reader, Problems::with_max(sh.max_problems));
        uw.set_index_at(sh, u.index_at);
        uw.run_until(sh, u.end, &mut |_, _| {}).ok()?;
        Some(uw.finish_unit())
    };
    // The threads' reads count as the sstable's (`--io-stats`).
    let io = std::sync::Mutex::new(crate::io::IoStats::default());
    let done = |s: Option<Sstable>| {
        if let Some(s) = s {
            *io.lock().unwrap_or_else(|e| e.into_inner()) += &s.io.stats();
        }
    };
    let mut lost = false;
    let mut take = |i: usize, r: Option<Joined<'a>>| -> bool {
        let u = &units[i];
        match r {
            Some(j) if w.continues_as(u.start, u.index_at, j.first_bad_chunk) => w.join(sh, j),
            // Walked here as one thread walks it, from where the walk is.
            _ => {
                if w.run_until(sh, u.end, progress).is_err() {
                    lost = true;
                    return false;
                }
            }
        }
        progress(w.at, data_len);
        !w.stopped
    };
    ordered(units.len(), threads, &init, &work, &done, &mut take);
    *sst.io.stats_mut() += &io.into_inner().unwrap_or_else(|e| e.into_inner());
    if !lost && w.run_until(sh, u64::MAX, progress).is_ok() {
        return w;
    }
    // The reader could not be put where a unit's walk stopped (it read
    // there, so this is not expected): the whole walk again, on this thread.
    let mut reader = w.reader;
    let _ = reader.seek_partition(DataPos(0));
    let mut w = Walk::new(sh, reader, before);
    let _ = w.run_until(sh, u64::MAX, progress);
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::{validate, Options, Report};

    fn fixture(case: &str) -> Sstable {
        let data = crate::test_support::fixture_data(case).unwrap();
        Sstable::open_path(&data).unwrap()
    }

    /// Everything the report says, but how many units were joined.
    fn said(r: &Report) -> String {
        format!(
            "{:?} {} {} {} {} {} {:?} {:?} {:?}",
            r.problems,
            r.partitions,
            r.rows,
            r.static_rows,
            r.markers,
            r.data_len,
            r.index_entries,
            r.checks,
            r.checksum_chunks
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
            let one = validate(&sst, &opts(1), &mut |_, _| {}).unwrap();
            assert_eq!(one.threaded_units, 0, "{case}");
            assert!(one.partitions > 1, "{case}");
            for threads in [2, 3] {
                let many = validate(&sst, &opts(threads), &mut |_, _| {}).unwrap();
                assert!(many.threaded_units > 1, "{case}: {}", many.threaded_units);
                assert_eq!(said(&one), said(&many), "{case}: {threads} threads");
            }
        }
    }

    #[test]
    fn cuts_start_at_zero_and_stop_at_disorder() {
        let mut c = Cuts::new(10);
        for (p, e) in [
            (0, 0),
            (4, 7),
            (12, 14),
            (15, 20),
            (30, 25),
            (20, 30),
            (50, 35),
        ] {
            c.partition(p, Some(e));
        }
        let units = c.units(60).unwrap();
        let got: Vec<_> = units.iter().map(|u| (u.start, u.end, u.index_at)).collect();
        // 20 after 30: the rest is one unit, from the last cut to the end.
        assert_eq!(
            got,
            vec![
                (0, 12, IndexAt::Next(0)),
                (12, 30, IndexAt::Next(14)),
                (30, 60, IndexAt::Next(25))
            ]
        );
        let mut late = Cuts::new(10);
        late.partition(5, None);
        late.partition(50, None);
        assert!(late.units(60).is_none(), "the index does not start at 0");
        let mut one = Cuts::new(100);
        one.partition(0, None);
        one.partition(50, None);
        assert!(one.units(60).is_none(), "a single unit");
    }
}
