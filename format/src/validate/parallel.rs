//! The data walk on several threads: Data.db cut into units of whole
//! partitions at the entries of the index the validation reads anyway
//! (Summary.db's samples, Index.db's pre-pass, Partitions.db's walk), each
//! unit walked on a thread ([`crate::engine::parallel::ordered`]: results
//! in unit order, at most two units per thread ahead of the one joined
//! last).
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
//!
//! A partition of [`LARGE`] units or more is a unit of its own and, when
//! its row index cuts it ([`parts::plan`]: the promoted index of its
//! Index.db entry, or its Rows.db entry), its rows and markers are walked
//! in parts of about a unit on the threads ([`parts::walk_part`]) and
//! joined in order ([`PartsJoin`]). Once the last part is in, the calling
//! thread, standing where the partition starts, reads and checks its
//! header as one thread does ([`Walk::step_parts`]), and takes the parts'
//! counts and last clustering only when every part was clean and met the
//! one before it; otherwise it walks the whole partition itself. The
//! parts' results hold no row: memory stays that of a few units.

use crate::data::{DataPos, ScanReader};
use crate::engine::parallel::ordered;
use crate::sstable::Sstable;

use crate::engine::LARGE;

use super::parts::{self, PartDone, PartsJoin, Plan};
use super::problem::Problems;
use super::walk::{IndexAt, Joined, Shared, Walk};

/// Uncompressed bytes of a unit, about (the engine's unit size).
pub(crate) const UNIT_BYTES: u64 = 256 << 10;

/// Cut points gathered from the index in Data.db order: a partition start
/// at least a unit past the previous cut, with its Index.db entry's offset
/// (BIG), and whether the unit it starts is one large partition. Memory
/// grows with the units, not the partitions. Scrub cuts its walk with them
/// too, at the positions of its index's first pass.
pub(crate) struct Cuts {
    target: u64,
    points: Vec<(u64, Option<u64>, bool)>,
    /// The last partition start seen, with its entry.
    last: Option<(u64, Option<u64>)>,
    /// The positions went out of order (a damaged index): no more cuts,
    /// the rest is one unit that the walk reads as one thread does.
    broken: bool,
    /// A partition of [`LARGE`] units or more is a unit of its own,
    /// marked large (walked in parts).
    large: bool,
}

/// A unit of whole partitions: `[start, end)` of uncompressed Data.db, and
/// the index entry of its first partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Unit {
    pub(crate) start: u64,
    pub(crate) end: u64,
    pub(super) index_at: IndexAt,
    /// One partition of [`LARGE`] units or more ([`Cuts::with_large`]).
    pub(super) large: bool,
}

impl Cuts {
    pub(crate) fn new(target: u64) -> Cuts {
        Cuts {
            target: target.max(1),
            points: Vec::new(),
            last: None,
            broken: false,
            large: false,
        }
    }

    /// Cuts where a large partition is a unit of its own, so that its
    /// rows can be walked in parts.
    pub(crate) fn with_large(target: u64) -> Cuts {
        Cuts {
            large: true,
            ..Cuts::new(target)
        }
    }

    /// Bytes from one partition start to the next from which the partition
    /// is large.
    pub(crate) fn large_bytes(&self) -> u64 {
        self.target.saturating_mul(LARGE)
    }

    /// The index lists a partition at `pos` (its entry at Index.db offset `entry`).
    pub(crate) fn partition(&mut self, pos: u64, entry: Option<u64>) {
        if self.broken {
            return;
        }
        if let Some((last, last_entry)) = self.last {
            if pos <= last {
                self.broken = true;
                return;
            }
            if pos - last >= self.large_bytes() {
                self.large_at(last, last_entry);
            }
        }
        self.last = Some((pos, entry));
        match self.points.last() {
            Some(&(start, _, _)) if pos - start < self.target => {}
            _ => self.points.push((pos, entry, false)),
        }
    }

    /// The partition at `pos` (up to the next one listed) is large: a unit
    /// of its own.
    fn large_at(&mut self, pos: u64, entry: Option<u64>) {
        if !self.large {
            return;
        }
        if self.points.last().map(|p| p.0) != Some(pos) {
            self.points.push((pos, entry, false));
        }
        if let Some(p) = self.points.last_mut() {
            p.2 = true;
        }
    }

    /// The units up to `data_len`; `None` when fewer than two and none
    /// large, or when the index does not start where Data.db does.
    pub(crate) fn units(mut self, data_len: u64) -> Option<Vec<Unit>> {
        if let (false, Some((last, entry))) = (self.broken, self.last) {
            if data_len > last && data_len - last >= self.large_bytes() {
                self.large_at(last, entry);
            }
        }
        if self.points.first().map(|p| p.0) != Some(0) {
            return None;
        }
        let points: Vec<_> = self.points.into_iter().filter(|p| p.0 < data_len).collect();
        let units: Vec<Unit> = points
            .iter()
            .enumerate()
            .map(|(i, &(start, entry, large))| Unit {
                start,
                end: points.get(i + 1).map_or(data_len, |p| p.0),
                index_at: entry.map_or(IndexAt::NoIndex, IndexAt::Next),
                large,
            })
            .collect();
        (units.len() > 1 || units.iter().any(|u| u.large)).then_some(units)
    }
}

/// What a thread walks.
enum Task {
    /// The unit at this index, whole.
    Unit(usize),
    /// Part `.1` of the large partition planned at index `.0`.
    Part(usize, usize),
}

/// What a thread made of a [`Task`].
enum Done<'a> {
    /// Boxed: a unit's walk is several times a part's.
    Unit(Option<Box<Joined<'a>>>),
    Part(Option<PartDone>),
}

/// The tasks of `units`: a large partition whose row index cuts it is
/// walked in parts (its plan, with the unit's index, kept), any other unit
/// whole.
fn tasks(
    sst: &Sstable,
    sh: &Shared<'_>,
    units: &[Unit],
    unit_bytes: u64,
) -> (Vec<Task>, Vec<(usize, Plan)>) {
    let (mut tasks, mut plans) = (Vec::with_capacity(units.len()), Vec::new());
    let mut bti = None;
    for (i, u) in units.iter().enumerate() {
        let plan = u
            .large
            .then(|| parts::plan(sst, sh, (u.start, u.end), u.index_at, unit_bytes, &mut bti))
            .flatten();
        match plan {
            Some(p) => {
                tasks.extend((0..p.parts.len()).map(|k| Task::Part(plans.len(), k)));
                plans.push((i, p));
            }
            None => tasks.push(Task::Unit(i)),
        }
    }
    (tasks, plans)
}

/// Walk Data.db from `reader` (at its start): on this thread alone when
/// `threads` is 1 or there are no units, else the units (and the parts of
/// large partitions, about `unit_bytes` each) on `threads` threads, joined
/// in order. `problems` are those found before the walk.
#[allow(clippy::too_many_arguments)]
pub(super) fn walk<'a, 's>(
    sst: &'s Sstable,
    sh: &Shared<'a>,
    units: Option<Vec<Unit>>,
    threads: usize,
    unit_bytes: u64,
    reader: ScanReader<'s>,
    problems: Problems,
    progress: &mut dyn FnMut(u64, u64),
) -> Walk<'a, 's> {
    let units = units.filter(|_| threads > 1);
    let planned = units.as_deref().map(|u| tasks(sst, sh, u, unit_bytes));
    let (Some(units), Some((tasks, plans))) = (units, planned.filter(|t| t.0.len() > 1)) else {
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
    let work = |s: &mut Option<Sstable>, i: usize| -> Done<'a> {
        let Some(sst) = s.as_ref() else {
            return match tasks[i] {
                Task::Unit(_) => Done::Unit(None),
                Task::Part(..) => Done::Part(None),
            };
        };
        match tasks[i] {
            Task::Unit(u) => Done::Unit(walk_unit(sst, sh, &units[u]).map(Box::new)),
            Task::Part(j, k) => Done::Part(parts::walk_part(sst, sh, &plans[j].1, k)),
        }
    };
    // The threads' reads count as the sstable's (`--io-stats`).
    let io = std::sync::Mutex::new(crate::io::IoStats::default());
    let done = |s: Option<Sstable>| {
        if let Some(s) = s {
            *io.lock().unwrap_or_else(|e| e.into_inner()) += &s.io.stats();
        }
    };
    let mut lost = false;
    let mut join = PartsJoin::new();
    let prev_sizes = sh.reader.check_prev_sizes;
    let mut take = |i: usize, r: Done<'a>| -> bool {
        let u = match (&tasks[i], r) {
            (&Task::Unit(u), Done::Unit(r)) => {
                let u = &units[u];
                match r {
                    Some(j) if w.continues_as(u.start, u.index_at, j.first_bad_chunk) => {
                        w.join(sh, *j);
                        progress(w.at, data_len);
                        return !w.stopped;
                    }
                    // Walked here as one thread walks it, from where the walk is.
                    _ => u,
                }
            }
            (&Task::Part(j, k), Done::Part(r)) => {
                let (u, plan) = (&units[plans[j].0], &plans[j].1);
                if k == 0 {
                    join = PartsJoin::new();
                }
                join.add(plan, k, r, w.checker.comparator(), prev_sizes);
                if k + 1 < plan.parts.len() {
                    if join.clean {
                        progress(join.end, data_len);
                    }
                    return true;
                }
                if join.clean
                    && w.continues_as(u.start, u.index_at, None)
                    && w.step_parts(sh, &join, plan.pi_position, progress).is_err()
                {
                    lost = true;
                    return false;
                }
                u
            }
            // A task's result is of its kind.
            _ => {
                lost = true;
                return false;
            }
        };
        if !w.stopped && w.at < u.end && w.run_until(sh, u.end, progress).is_err() {
            lost = true;
            return false;
        }
        progress(w.at, data_len);
        !w.stopped
    };
    ordered(tasks.len(), threads, &init, &work, &done, &mut take);
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

/// Walk unit `u` on this thread (with `sst`, this thread's handle).
fn walk_unit<'a>(sst: &Sstable, sh: &Shared<'a>, u: &Unit) -> Option<Joined<'a>> {
    let mut reader = ScanReader::with_options(sst, sh.header, sh.reader).ok()?;
    // The unit's bytes in one planned read (object storage: one request).
    reader.plan_unit(Some(DataPos(u.end)));
    reader.seek_partition(DataPos(u.start)).ok()?;
    let mut uw = Walk::new(sh, reader, Problems::with_max(sh.max_problems));
    uw.set_index_at(sh, u.index_at);
    uw.run_until(sh, u.end, &mut |_, _| {}).ok()?;
    Some(uw.finish_unit())
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

    /// A wide partition is walked in parts at its row-index blocks (BIG
    /// and BTI, ascending and descending clusterings, range tombstones
    /// open across blocks), and the report is the one walk's.
    #[test]
    fn parts_of_wide_partitions_give_the_one_walk_report() {
        // Every part of a clean partition is taken: as many as its blocks
        // (about 4 KiB each) make (the range tombstone fixtures have no
        // row index, their partitions are walked whole).
        for (case, unit, parts) in [
            ("nb_wide", 4096, 228),
            ("da_wide", 4096, 228),
            ("oa_wide", 4096, 228),
            ("nb_wide_desc", 2048, 104),
            ("da_wide_desc", 2048, 104),
            ("nb_range_tombstones", 256, 0),
            ("da_range_tombstones", 256, 0),
        ] {
            let sst = fixture(case);
            let opts = |threads| Options {
                threads,
                unit_bytes: unit,
                ..Options::default()
            };
            let one = validate(&sst, &opts(1), &mut |_, _| {}).unwrap();
            assert_eq!((one.threaded_units, one.threaded_parts), (0, 0), "{case}");
            assert!(one.problems.is_empty(), "{case}: {:?}", one.problems);
            for threads in [2, 3] {
                let many = validate(&sst, &opts(threads), &mut |_, _| {}).unwrap();
                assert_eq!(said(&one), said(&many), "{case}: {threads} threads");
                assert_eq!(many.threaded_parts, parts, "{case}: {threads} threads");
            }
        }
    }

    /// Index.db damage the pre-pass finds (keys out of order, positions
    /// not increasing), as the walk does (entries not at their partitions):
    /// with the pre-pass beside the walk, its findings still come first,
    /// in one thread's order, and the cap on kept problems falls where one
    /// thread's does.
    #[test]
    fn index_damage_found_beside_the_walk_is_reported_in_one_walk_order() {
        let data = crate::test_support::fixture_data("nb_clustering").unwrap();
        let index_name = data
            .file_name()
            .unwrap()
            .to_string_lossy()
            .replace("Data.db", "Index.db");
        let sst = Sstable::open_path(&data).unwrap();
        let index = sst
            .map_component(crate::component::Component::Index)
            .unwrap();
        let entries: Vec<(u64, usize)> = crate::index::IndexReader::new(&index, sst.features())
            .entries()
            .map(|e| e.map(|e| (e.offset, e.key.len())).unwrap())
            .collect();
        assert!(entries.len() > 8);
        let mut beside = 0;
        // The last byte of a key (order), the low byte of a position.
        for (i, last) in [(3, true), (5, false), (entries.len() - 2, true)] {
            let (off, klen) = entries[i];
            let at = (off + 2 + klen as u64 - u64::from(last)) as usize;
            let tmp = crate::test_support::scratch("index-damage");
            for e in std::fs::read_dir(data.parent().unwrap()).unwrap().flatten() {
                std::fs::copy(e.path(), tmp.path().join(e.file_name())).unwrap();
            }
            let copy = tmp.path().join(&index_name);
            let mut bytes = std::fs::read(&copy).unwrap();
            bytes[at] ^= 0x07;
            std::fs::write(&copy, &bytes).unwrap();
            let sst = Sstable::open_path(&tmp.path().join(data.file_name().unwrap())).unwrap();
            for max_problems in [10_000, 1, 2] {
                let opts = |threads| Options {
                    threads,
                    unit_bytes: 64,
                    max_problems,
                    ..Options::default()
                };
                let one = validate(&sst, &opts(1), &mut |_, _| {}).unwrap();
                let index_found = one
                    .problems
                    .list
                    .iter()
                    .any(|p| p.component == crate::component::Component::Index);
                assert!(
                    index_found || max_problems < 10_000,
                    "{i}: {:?}",
                    one.problems
                );
                for threads in [2, 3] {
                    let many = validate(&sst, &opts(threads), &mut |_, _| {}).unwrap();
                    assert_eq!(
                        said(&one),
                        said(&many),
                        "entry {i}, cap {max_problems}: {threads} threads"
                    );
                    beside += u64::from(many.threaded_units > 1);
                }
            }
        }
        assert!(beside > 0);
    }

    /// Where damage to `sst` tells its parts from one walk: the starts
    /// of the row-index blocks after the first of each partition (where
    /// parts start), and the bytes of each range tombstone marker that
    /// opens a range still open at one of them.
    fn boundaries(sst: &Sstable) -> (Vec<u64>, Vec<(u64, u64)>) {
        use crate::data::Fragment;
        let b = crate::engine::bind(sst).unwrap();
        let mut index = crate::read::open_index(sst, b.partitioner.clone(), &b.header).unwrap();
        let mut reader = ScanReader::new(sst, &b.header).unwrap();
        let (mut starts, mut across) = (Vec::new(), Vec::new());
        let mut opened = None;
        while let Some(f) = reader.next_fragment().unwrap() {
            match f {
                Fragment::PartitionStart { key, position, .. } => {
                    let h = index.find(key).unwrap();
                    if let Some(mut ri) = h.and_then(|h| h.row_index) {
                        for i in 1..ri.block_count() {
                            starts.push(position.0 + ri.block(sst, i).unwrap().offset);
                        }
                    }
                }
                Fragment::Marker(m) => {
                    let at = m.position.0;
                    if let Some((from, to)) = opened.take() {
                        if starts.iter().any(|s| (from..=at).contains(s)) {
                            across.push((from, to));
                        }
                    }
                    if m.kind().is_start() {
                        opened = Some((at, at + m.size));
                    }
                }
                _ => {}
            }
        }
        (starts, across)
    }

    /// Bytes changed where parts start in a copy of an uncompressed wide
    /// fixture (the first row's flags, clustering and sizes; the end of
    /// the row before), and in markers of range tombstones open across a
    /// part's start: what a part cannot see alone (its first row against
    /// the part before's last, the size of the row before it, the range
    /// tombstone open where it starts) is found where one thread finds it,
    /// and the report is the one walk's.
    #[test]
    fn damage_where_parts_meet_gives_the_one_walk_report() {
        let mut classes = std::collections::BTreeSet::new();
        // BIG (whose promoted index checks each block's first clustering
        // too) and BTI (whose walk checks nothing against the row index).
        for case in ["nb_wide_desc", "da_wide_desc"] {
            let data = crate::test_support::fixture_data(case).unwrap();
            let (starts, across) = boundaries(&Sstable::open_path(&data).unwrap());
            assert!(
                starts.len() > 20 && across.len() > 2,
                "{case}: {starts:?} {across:?}"
            );
            let mut flips: Vec<(u64, u8)> = Vec::new();
            for &s in starts.iter().step_by(25) {
                flips.extend((s - 2..s + 24).map(|at| (at, 0x01)));
                flips.extend([(s, 0x5a), (s + 5, 0x5a)]);
            }
            for &(from, to) in across.iter().take(6) {
                flips.extend([(to - 1, 0x01), (to - 2, 0x01), (from + 3, 0x01)]);
            }
            let name = data.file_name().unwrap();
            let mut split = 0;
            for (at, with) in flips {
                let tmp = crate::test_support::scratch("parts-damage");
                for e in std::fs::read_dir(data.parent().unwrap()).unwrap().flatten() {
                    std::fs::copy(e.path(), tmp.path().join(e.file_name())).unwrap();
                }
                let copy = tmp.path().join(name);
                let mut bytes = std::fs::read(&copy).unwrap();
                bytes[at as usize] ^= with;
                std::fs::write(&copy, &bytes).unwrap();
                let sst = Sstable::open_path(&copy).unwrap();
                let opts = |threads| Options {
                    threads,
                    unit_bytes: 1024,
                    checksums: None,
                    ..Options::default()
                };
                let one = validate(&sst, &opts(1), &mut |_, _| {}).unwrap();
                classes.extend(one.problems.list.iter().map(|p| p.class));
                for threads in [2, 3] {
                    let many = validate(&sst, &opts(threads), &mut |_, _| {}).unwrap();
                    let what = format!("{case} {at} ^ {with:#x}: {threads} threads");
                    assert_eq!(said(&one), said(&many), "{what}");
                    split += many.threaded_parts;
                }
            }
            // The other partitions are still walked in parts.
            assert!(split > 0, "{case}");
        }
        use crate::validate::ProblemClass;
        for c in [
            ProblemClass::ClusteringOrder,
            ProblemClass::PrevSizeMismatch,
            ProblemClass::RtMismatch,
        ] {
            assert!(classes.contains(&c), "{c:?} never found: {classes:?}");
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
