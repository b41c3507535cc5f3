//! Work units: one sstable's Data.db cut at partition starts, so that
//! several threads can each read a part and the parts, put back in order,
//! are the whole ([`super::parallel::ordered`]).

use crate::data::DataPos;
use crate::read::BigIndex;
use crate::Sstable;

use super::Table;

/// A range of whole partitions of Data.db: `[start, end)` of the
/// uncompressed bytes, from one partition's start to another's (or to the
/// end of the data).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unit {
    /// The first partition's start.
    pub start: DataPos,
    /// Where the partition after the last one starts (or the end of the data).
    pub end: DataPos,
    /// One partition that is larger than a unit should be: the caller
    /// reads it where it streams (its output is not held in memory).
    pub large: bool,
}

/// A part of one large partition ([`Unit::large`]), cut at its row-index
/// blocks: read by [`run_rows`](super::run_rows).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowPart {
    /// The partition's start.
    pub partition: DataPos,
    /// Where the part's first block starts (`None`: the first part, from
    /// the partition's start).
    pub from: Option<DataPos>,
    /// Where the next part's first block starts (`None`: the last part).
    pub to: Option<DataPos>,
}

/// Cut the one partition of a large unit into parts of about `target`
/// bytes at its row-index blocks (whose starts the index records, so a
/// thread can start decoding at any of them). `None` when the partition
/// has no row index or too few blocks, when the index disagrees with
/// Data.db (the partition is then read in one piece, and the damage met as
/// a single thread meets it), or for the pre-3.0 cell format.
pub fn row_parts(
    sst: &Sstable,
    t: &Table<'_>,
    unit: &Unit,
    target: u64,
) -> crate::Result<Option<Vec<RowPart>>> {
    if sst.features().legacy_cells {
        return Ok(None);
    }
    let key = {
        let mut reader = crate::data::ScanReader::new(sst, t.header)?;
        // Only the key is read here: the parts read the partition.
        reader.set_read_kind(crate::io::ReadKind::Point);
        reader.seek_partition(unit.start)?;
        match reader.next_fragment()? {
            Some(crate::data::Fragment::PartitionStart { key, .. }) => key.to_vec(),
            _ => return Ok(None),
        }
    };
    let mut index = crate::read::open_index(sst, t.partitioner.clone(), t.header)?;
    let Some(mut h) = index.find(&key)? else {
        return Ok(None);
    };
    let Some(ri) = h.row_index.as_mut().filter(|_| h.position == unit.start) else {
        return Ok(None);
    };
    let target = target.max(1);
    let mut cuts: Vec<u64> = Vec::new();
    let (mut last_cut, mut prev) = (unit.start.0, unit.start.0);
    for i in 1..ri.block_count() {
        let at = unit.start.0.saturating_add(ri.block_walk(sst, i)?.offset);
        if at <= prev || at >= unit.end.0 {
            return Ok(None);
        }
        if at - last_cut >= target {
            cuts.push(at);
            last_cut = at;
        }
        prev = at;
    }
    if cuts.is_empty() {
        return Ok(None);
    }
    let mut parts = Vec::with_capacity(cuts.len() + 1);
    let mut from = None;
    for &c in &cuts {
        parts.push(RowPart {
            partition: unit.start,
            from,
            to: Some(DataPos(c)),
        });
        from = Some(DataPos(c));
    }
    parts.push(RowPart {
        partition: unit.start,
        from,
        to: None,
    });
    Ok(Some(parts))
}

/// A partition this many times the unit size is a unit of its own, marked
/// [`Unit::large`].
pub(crate) const LARGE: u64 = 4;

/// Cut `sst`'s Data.db into units of about `target` bytes, at the
/// partition starts its index lists (Index.db read in order, or a walk over
/// Partitions.db). `None` when the sstable has no index to cut by, or one
/// unit would come out, not large: it is then read in one piece.
///
/// Only the cut points are kept (memory grows with the number of units,
/// not of partitions).
pub fn units(sst: &Sstable, t: &Table<'_>, target: u64) -> crate::Result<Option<Vec<Unit>>> {
    let target = target.max(1);
    let data_len = crate::data::DataSource::open(sst)?.data_len();
    if data_len <= target {
        return Ok(None);
    }
    let mut cut = Cutter {
        target,
        units: Vec::new(),
        start: None,
        last: None,
        broken: false,
    };
    if sst.features().trie_index {
        if !sst.has(crate::component::Component::Partitions) {
            return Ok(None);
        }
        // The cut asks no key of Filter.db: it is not read.
        let index = crate::read::BtiIndex::open_without_filter(
            sst,
            t.partitioner.clone(),
            &t.header.clustering_types,
        )?;
        index.for_each_data_position(&mut |p| {
            cut.partition(p);
            Ok(true)
        })?;
    } else {
        if !sst.has(crate::component::Component::Index) {
            return Ok(None);
        }
        let index = BigIndex::open_without_filter(
            sst,
            t.partitioner.clone(),
            &t.header.clustering_fixed_lens(),
        )?;
        cut_big(&index, data_len, &mut cut)?;
    }
    let units = cut.finish(data_len);
    if units.first().is_some_and(|u| u.start.0 != 0) {
        // The index does not start where Data.db does: a single thread
        // reads it from its start.
        return Ok(None);
    }
    // One unit is worth cutting only when it is a large partition (into parts).
    Ok((units.len() > 1 || units.iter().any(|u| u.large)).then_some(units))
}

/// Feed the partition starts of a BIG index to `cut`. Between two of
/// Summary.db's samples less than a unit apart only the first is fed (the
/// cut falls on a sample); the entries of a wider stretch are all read,
/// where a large partition or a finer cut may be. So a table of small
/// partitions costs one entry per sample, not one per partition, and the
/// units are known before the threads start. Without a usable summary
/// every entry is read.
fn cut_big(index: &BigIndex<'_>, data_len: u64, cut: &mut Cutter) -> crate::Result<()> {
    let index_len = index.index_len();
    let mut marks = index.sample_offsets();
    let usable = marks.first() == Some(&0)
        && marks.windows(2).all(|w| w[0] < w[1])
        && marks.last().is_some_and(|&l| l < index_len);
    let mut scan = index.scan();
    if !usable {
        while let Some(h) = scan.next_handle()? {
            cut.partition(h.position.0);
        }
        return Ok(());
    }
    marks.push(index_len);
    // The data position of the entry at each mark (Data.db's end for the last).
    let at = |offset: u64, scan: &mut crate::read::BigIndexScan<'_, '_>| -> crate::Result<u64> {
        if offset >= index_len {
            return Ok(data_len);
        }
        scan.jump(offset);
        Ok(scan.next_handle()?.map_or(data_len, |h| h.position.0))
    };
    let mut here = at(marks[0], &mut scan)?;
    for w in marks.windows(2) {
        let next = at(w[1], &mut scan)?;
        if next.saturating_sub(here) < cut.target {
            cut.partition(here);
        } else {
            scan.jump(w[0]);
            while scan.offset() < w[1] {
                match scan.next_handle()? {
                    Some(h) => cut.partition(h.position.0),
                    None => break,
                }
            }
        }
        here = next;
    }
    Ok(())
}

/// Builds the units from the partition starts, in order.
struct Cutter {
    target: u64,
    units: Vec<Unit>,
    /// Start of the unit being built.
    start: Option<u64>,
    /// Start of the last partition seen.
    last: Option<u64>,
    /// The starts went out of order: no more cuts.
    broken: bool,
}

impl Cutter {
    fn partition(&mut self, p: u64) {
        let (Some(start), Some(last)) = (self.start, self.last) else {
            self.start = Some(p);
            self.last = Some(p);
            return;
        };
        if self.broken || p <= last {
            // Out of order (a damaged index): one unit to the end, so the
            // reader meets the damage as a single thread would.
            self.broken = true;
            return;
        }
        if p - last >= self.target * LARGE {
            // The partition just ended is large: a unit of its own.
            if last > start {
                self.push(start, last, false);
            }
            self.push(last, p, true);
            self.start = Some(p);
        } else if p - start >= self.target {
            self.push(start, p, false);
            self.start = Some(p);
        }
        self.last = Some(p);
    }

    fn push(&mut self, start: u64, end: u64, large: bool) {
        self.units.push(Unit {
            start: DataPos(start),
            end: DataPos(end),
            large,
        });
    }

    fn finish(mut self, data_len: u64) -> Vec<Unit> {
        let (Some(start), Some(last)) = (self.start, self.last) else {
            return self.units;
        };
        if !self.broken && data_len > last && data_len - last >= self.target * LARGE {
            if last > start {
                self.push(start, last, false);
            }
            self.push(last, data_len, true);
        } else {
            self.push(start, data_len.max(last + 1), false);
        }
        self.units
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(target: u64, starts: &[u64], len: u64) -> Vec<(u64, u64, bool)> {
        let mut c = Cutter {
            target,
            units: Vec::new(),
            start: None,
            last: None,
            broken: false,
        };
        for &p in starts {
            c.partition(p);
        }
        c.finish(len)
            .into_iter()
            .map(|u| (u.start.0, u.end.0, u.large))
            .collect()
    }

    #[test]
    fn units_cover_the_data_at_partition_starts() {
        assert_eq!(
            cut(10, &[0, 4, 8, 12, 20, 25], 30),
            vec![(0, 12, false), (12, 25, false), (25, 30, false)]
        );
    }

    #[test]
    fn a_large_partition_is_a_unit_of_its_own() {
        assert_eq!(
            cut(10, &[0, 3, 6, 60, 65], 70),
            vec![(0, 6, false), (6, 60, true), (60, 70, false)]
        );
        // The last partition is the large one.
        assert_eq!(cut(10, &[0, 5], 100), vec![(0, 5, false), (5, 100, true)]);
    }

    /// A bundled fixture's sstable, bound.
    fn fixture(case: &str) -> (Sstable, super::super::Bound) {
        let data = crate::test_support::fixture_data(case).unwrap();
        let sst = Sstable::open_path(&data).unwrap();
        let b = super::super::bind(&sst).unwrap();
        (sst, b)
    }

    /// On real sstables (BIG and BTI, compressed or not): the units cover
    /// Data.db and each starts where a partition does.
    #[test]
    fn units_of_fixtures_start_at_partitions() {
        use crate::data::{Fragment, ScanReader};
        for case in [
            "nb_clustering",
            "da_clustering",
            "nb_clustering_nocompress",
            "da_wide",
        ] {
            let (sst, b) = fixture(case);
            let t = Table::new(&b.header, b.partitioner.clone(), 0);
            let mut starts = std::collections::BTreeSet::new();
            let mut r = ScanReader::new(&sst, &b.header).unwrap();
            loop {
                let at = r.next_position();
                match r.next_fragment().unwrap() {
                    None => break,
                    Some(Fragment::PartitionStart { .. }) => {
                        starts.insert(at.0);
                        r.skip_partition().unwrap();
                    }
                    Some(_) => panic!("{case}: not a partition start at {at}"),
                }
            }
            let len = r.data_len();
            let units = units(&sst, &t, 64).unwrap().expect(case);
            assert!(units.len() > 1, "{case}");
            assert_eq!(units[0].start.0, 0, "{case}");
            assert_eq!(units.last().unwrap().end.0, len, "{case}");
            for w in units.windows(2) {
                assert_eq!(w[0].end, w[1].start, "{case}");
            }
            for u in &units {
                assert!(starts.contains(&u.start.0), "{case}: {u:?}");
            }
        }
    }

    /// Records where each row and marker starts, and the partition ends.
    #[derive(Default)]
    struct Positions {
        at: Vec<u64>,
        ends: usize,
    }

    impl super::super::Sink for Positions {
        fn row(&mut self, _t: &Table<'_>, row: &crate::data::Row<'_>) -> std::io::Result<()> {
            self.at.push(row.position.0);
            Ok(())
        }
        fn marker(
            &mut self,
            _t: &Table<'_>,
            m: &crate::data::RangeTombstoneMarker<'_>,
        ) -> std::io::Result<()> {
            self.at.push(m.position.0);
            Ok(())
        }
        fn partition_end(&mut self, _t: &Table<'_>) -> std::io::Result<()> {
            self.ends += 1;
            Ok(())
        }
    }

    /// A large partition read in parts at its row-index blocks gives the
    /// rows and markers of the partition read whole, each once, in order.
    #[test]
    fn row_parts_read_the_partition_once() {
        use super::super::{run_rows, run_unit, Selection, Shape};
        for case in ["nb_wide", "da_wide"] {
            let (sst, b) = fixture(case);
            let t = Table::new(&b.header, b.partitioner.clone(), 0);
            let (sel, shape) = (Selection::all(), Shape::default());
            let mut split = 0;
            for u in units(&sst, &t, 512).unwrap().expect(case) {
                let Some(parts) = row_parts(&sst, &t, &u, 512).unwrap() else {
                    continue;
                };
                split += 1;
                assert!(parts.len() > 1, "{case}");
                let mut whole = Positions::default();
                assert_eq!(
                    run_unit(&sst, &t, &sel, &shape, &u, &mut whole)
                        .unwrap()
                        .end,
                    u.end
                );
                let mut joined = Positions::default();
                let mut written = 0;
                for p in &parts {
                    let ran = run_rows(&sst, &t, &sel, &shape, p, &mut joined).unwrap();
                    // Each part stops where the next one starts.
                    assert_eq!(ran.end, p.to.unwrap_or(u.end), "{case}: {p:?}");
                    written += ran.written;
                }
                assert_eq!(whole.at, joined.at, "{case}: {u:?}");
                assert_eq!((whole.ends, joined.ends, written), (1, 1, 1), "{case}");
            }
            assert!(split > 0, "{case}: no partition was cut at its blocks");
        }
    }

    #[test]
    fn out_of_order_starts_end_the_cutting() {
        assert_eq!(
            cut(4, &[0, 5, 3, 10, 20], 25),
            vec![(0, 5, false), (5, 25, false)]
        );
    }
}
