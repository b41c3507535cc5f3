//! A merged scan cut at tokens common to all its sstables, so that several
//! threads can each merge one token range and the ranges, put back in
//! order, are the whole merge ([`super::parallel::ordered`]).
//!
//! The cut tokens are the keys at the work units' starts of every sstable
//! ([`super::units`]), thinned so that a range holds about a unit's bytes
//! summed over the sstables; each sstable's index then places every cut
//! in its Data.db ([`super::seek::ceiling`]). A range's read checks what
//! the index said: its partitions' tokens are in the range and each
//! sstable stops where the next range starts in it. A read that finds
//! otherwise says so ([`RangeRan::whole`]), and the caller reads from the
//! range's start to the end as one scan, meeting the damage where a single
//! thread meets it.

use std::cmp::Ordering;

use super::merged::emit_partition;
use super::{Error, MergeInputs, Selection, Shape, Sink, Table};
use crate::data::{DataPos, DataSource, ScanReader};
use crate::merge::ScanSource;
use crate::read::TokenBound;
use crate::token::Token;

/// One token range of a merged scan: `(after, upto]`.
#[derive(Debug, Clone, PartialEq)]
pub struct MergeRange {
    /// The range's partitions have tokens after this one (`None`: from the
    /// ring's start).
    pub after: Option<Token>,
    /// ... and up to this one (`None`: to the end).
    pub upto: Option<Token>,
    /// Per sstable, where its first partition of the range starts (the
    /// end of its data when it has none).
    pub starts: Vec<DataPos>,
    /// Per sstable, where the next range's first partition starts (`None`:
    /// the sstable has no partition after this range); `None` for the last
    /// range.
    pub ends: Option<Vec<Option<DataPos>>>,
    /// Data.db bytes before the range's end and in all, summed over the
    /// sstables (for a progress bar).
    pub progress: (u64, u64),
}

impl MergeRange {
    /// The merged scan from this range's start to the end of the data.
    pub fn to_the_end(&self) -> MergeRange {
        MergeRange {
            after: None,
            upto: None,
            starts: self.starts.clone(),
            ends: None,
            progress: (self.progress.1, self.progress.1),
        }
    }
}

/// What reading a range did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RangeRan {
    /// Partitions the sink printed.
    pub written: u64,
    /// A partition past the end of the selection's token range was met:
    /// no later range holds a selected one.
    pub past_end: bool,
    /// The read stopped at the range's end where the index said it is,
    /// and met no partition before its start (false: the index disagrees
    /// with Data.db). Not checked when the read stopped early (`--limit`,
    /// [`RangeRan::past_end`]).
    pub whole: bool,
}

impl MergeInputs {
    /// Cut a merged scan of the partitions `sel` selects into token ranges
    /// of about `target` Data.db bytes summed over the sstables. `None`
    /// when it is not cut: fewer than two ranges, an sstable without an
    /// index to place a cut in, pre-3.0 cells, or an index that cannot be
    /// read (one thread then meets what is wrong).
    pub fn ranges(&self, sel: &Selection, target: u64) -> Option<Vec<MergeRange>> {
        let target = target.max(1);
        if self.ssts.iter().any(|s| s.features().legacy_cells) {
            return None;
        }
        let tables: Vec<Table<'_>> = self
            .headers
            .iter()
            .map(|h| Table::new(h, self.partitioner.clone(), 0))
            .collect();
        // (key at a unit's start, the unit's bytes), over all the sstables.
        let mut samples: Vec<(Vec<u8>, u64)> = Vec::new();
        let mut before = 0u64;
        let mut lens = Vec::with_capacity(self.ssts.len());
        for (sst, t) in self.ssts.iter().zip(&tables) {
            let mut data = DataSource::open(sst).ok()?;
            lens.push(data.data_len());
            let Some(units) = super::units(sst, t, target).ok()? else {
                // Too small to cut: it counts where it starts.
                before += data.data_len();
                continue;
            };
            for u in units {
                let bytes = u.end.0.saturating_sub(u.start.0);
                if u.start.0 == 0 {
                    before += bytes;
                    continue;
                }
                samples.push((data.key_at(u.start).ok()??, bytes));
            }
        }
        let p = &self.partitioner;
        samples.sort_by(|a, b| p.compare_decorated(&a.0, &b.0));
        let mut cuts: Vec<Token> = Vec::new();
        let mut held = before;
        for (key, bytes) in samples {
            if held >= target {
                let tok = p.token(&key);
                if cuts
                    .last()
                    .is_none_or(|c| c.partial_cmp(&tok) == Some(Ordering::Less))
                {
                    cuts.push(tok);
                    held = 0;
                }
            }
            held += bytes;
        }
        if cuts.is_empty() {
            return None;
        }
        // Where a scan of the selection starts in each sstable.
        let from: Vec<DataPos> = self
            .ssts
            .iter()
            .zip(&tables)
            .map(|(s, t)| sel.scan_start(s, t))
            .collect();
        // Per cut, per sstable: where its first partition after the cut starts.
        let mut placed: Vec<Vec<DataPos>> = Vec::with_capacity(cuts.len());
        for c in &cuts {
            let bound = TokenBound {
                token: c.clone(),
                exclusive: true,
            };
            let mut row = Vec::with_capacity(self.ssts.len());
            for (i, (sst, t)) in self.ssts.iter().zip(&tables).enumerate() {
                let at = super::seek::ceiling(sst, t, &bound).ok()??;
                let at = at.max(from[i]);
                if placed.last().is_some_and(|prev| prev[i] > at) {
                    return None;
                }
                row.push(at);
            }
            placed.push(row);
        }
        let mut ranges = Vec::with_capacity(cuts.len() + 1);
        for k in 0..=cuts.len() {
            let after = k.checked_sub(1).map(|j| cuts[j].clone());
            let upto = cuts.get(k).cloned();
            if !sel.may_hold(after.as_ref(), upto.as_ref()) {
                continue;
            }
            let starts = k
                .checked_sub(1)
                .map_or_else(|| from.clone(), |j| placed[j].clone());
            let ends = placed.get(k).map(|row| {
                row.iter()
                    .zip(&lens)
                    .map(|(&at, &len)| (at.0 < len).then_some(at))
                    .collect()
            });
            let total: u64 = lens.iter().sum();
            let done = placed
                .get(k)
                .map_or(total, |row| row.iter().map(|p| p.0).sum());
            ranges.push(MergeRange {
                after,
                upto,
                starts,
                ends,
                progress: (done, total),
            });
        }
        // A last range after every partition (its cut at the last one) holds nothing.
        while ranges.len() > 1
            && ranges
                .last()
                .is_some_and(|r| r.starts.iter().zip(&lens).all(|(s, &len)| s.0 >= len))
        {
            ranges.pop();
            if let Some(r) = ranges.last_mut() {
                r.upto = None;
                r.ends = None;
            }
        }
        (ranges.len() > 1).then_some(ranges)
    }

    /// The merged partitions of `range` that `sel` selects, shaped, to
    /// `sink` ([`MergeInputs::dump`]'s scan over one range; neither
    /// reversed nor by key).
    pub fn dump_range(
        &self,
        t: &Table<'_>,
        sel: &Selection,
        shape: &Shape,
        range: &MergeRange,
        sink: &mut dyn Sink,
    ) -> Result<RangeRan, Error> {
        let mut ran = RangeRan {
            whole: true,
            ..RangeRan::default()
        };
        if shape.limit == 0 {
            return Ok(ran);
        }
        let mut sources = Vec::with_capacity(self.ssts.len());
        for (i, (sst, h)) in self.ssts.iter().zip(&self.headers).enumerate() {
            let mut r = ScanReader::new(sst, h)?;
            if let Some(Some(end)) = range.ends.as_ref().map(|e| e[i]) {
                // The range's bytes in one planned read (object storage: one request).
                r.plan_unit(Some(end));
            }
            let from = range.starts[i];
            if from.0 > 0 {
                r.seek_partition(from)?;
            }
            sources.push(ScanSource::new(r, self.schema.column_map(h), i));
        }
        let mut merger = self.merger(sources);
        let p = &self.partitioner;
        loop {
            let start = match &range.upto {
                Some(upto) => merger.next_partition_upto(upto)?,
                None => merger.next_partition()?,
            };
            let Some(start) = start else { break };
            if let Some(after) = &range.after {
                if p.token(&start.key).partial_cmp(after) != Some(Ordering::Greater) {
                    ran.whole = false;
                    return Ok(ran);
                }
            }
            if !sel.wants(t, &start.key) {
                if sel.past_end(t, &start.key) {
                    ran.past_end = true;
                    return Ok(ran);
                }
                continue;
            }
            let printed = if shape.keys_only {
                sink.key_only(t, &start.key)?;
                true
            } else {
                emit_partition(&mut merger, start, &self.schema, t, shape, sink)?
            };
            if printed {
                ran.written += 1;
                if ran.written >= shape.limit {
                    return Ok(ran);
                }
            }
        }
        if let Some(ends) = &range.ends {
            ran.whole = merger.head_positions() == *ends;
        }
        Ok(ran)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The keys a sink is given (a keys-only read).
    #[derive(Default)]
    struct Keys(Vec<Vec<u8>>);

    impl Sink for Keys {
        fn key_only(&mut self, _t: &Table<'_>, key: &[u8]) -> std::io::Result<()> {
            self.0.push(key.to_vec());
            Ok(())
        }
    }

    /// The bundled merge fixtures `{set}_1`, `{set}_2`, ... as one merge.
    fn inputs(set: &str) -> MergeInputs {
        let opened = (1..=3)
            .map(|n| format!("{set}_{n}"))
            .filter_map(|case| crate::test_support::fixture_data(&case))
            .map(|data| -> Result<_, Error> {
                let sst = crate::Sstable::open_path(&data)?;
                let b = super::super::bind(&sst)?;
                Ok((sst, b))
            });
        MergeInputs::new(opened).unwrap()
    }

    const SETS: [&str; 4] = [
        "nb_merge_overwrite",
        "oa_merge_range",
        "da_merge_collections",
        "nb_merge_partition_delete",
    ];

    fn shape() -> Shape {
        Shape {
            keys_only: true,
            ..Shape::default()
        }
    }

    /// The ranges, each read whole, give the partitions of the whole
    /// merged scan, each once, in order.
    #[test]
    fn ranges_read_the_merge_once() {
        for set in SETS {
            let m = inputs(set);
            let t = Table::new(&m.schema.header, m.partitioner.clone(), 0);
            let sel = Selection::all();
            let mut whole = Keys::default();
            m.dump(&t, &sel, &shape(), &mut whole, &mut |_| {}).unwrap();
            let ranges = m.ranges(&sel, 64).expect(set);
            assert!(ranges.len() > 2, "{set}: {} ranges", ranges.len());
            let mut joined = Keys::default();
            for r in &ranges {
                let ran = m.dump_range(&t, &sel, &shape(), r, &mut joined).unwrap();
                assert!(ran.whole, "{set}: {r:?}");
            }
            assert_eq!(whole.0, joined.0, "{set}");
            let lens: Vec<u64> = m
                .ssts
                .iter()
                .map(|s| DataSource::open(s).unwrap().data_len())
                .collect();
            for w in ranges.windows(2) {
                assert_eq!(w[0].upto, w[1].after, "{set}");
                let next = w[1].starts.iter().zip(&lens);
                let next: Vec<_> = next.map(|(&s, &len)| (s.0 < len).then_some(s)).collect();
                assert_eq!(w[0].ends.clone().unwrap(), next, "{set}");
            }
            assert!(ranges.last().unwrap().ends.is_none(), "{set}");
        }
    }

    /// A range placed wrong in the sstables (overlapping the one before
    /// it, or stopping short of the next) is found not whole.
    #[test]
    fn a_misplaced_range_is_not_whole() {
        for set in SETS {
            let m = inputs(set);
            let t = Table::new(&m.schema.header, m.partitioner.clone(), 0);
            let sel = Selection::all();
            let ranges = m.ranges(&sel, 64).expect(set);
            let mut overlaps = 0;
            let mut short = 0;
            for w in ranges.windows(2) {
                let mut overlap = w[1].clone();
                overlap.starts = w[0].starts.clone();
                if overlap.starts != w[1].starts {
                    overlaps += 1;
                    let ran = m
                        .dump_range(&t, &sel, &shape(), &overlap, &mut Keys::default())
                        .unwrap();
                    assert!(!ran.whole, "{set}: {overlap:?}");
                }
                let mut cut = w[0].clone();
                cut.upto = w[0].after.clone();
                if cut.after.is_some() {
                    short += 1;
                    let ran = m
                        .dump_range(&t, &sel, &shape(), &cut, &mut Keys::default())
                        .unwrap();
                    assert!(!ran.whole, "{set}: {cut:?}");
                }
            }
            assert!(overlaps > 0 && short > 0, "{set}");
        }
    }

    /// A token range of the selection leaves out the cut ranges wholly
    /// outside it.
    #[test]
    fn a_token_range_keeps_the_ranges_it_overlaps() {
        let m = inputs("nb_merge_overwrite");
        let t = Table::new(&m.schema.header, m.partitioner.clone(), 0);
        let all = m.ranges(&Selection::all(), 64).unwrap();
        let (a, b) = (all[1].after.clone().unwrap(), all[2].upto.clone().unwrap());
        let sel = Selection::new(&t, None, Vec::new(), Some((a, b)));
        let some = m.ranges(&sel, 64).unwrap();
        assert_eq!(some.len(), 2);
        assert_eq!(
            (&some[0].after, &some[1].upto),
            (&all[1].after, &all[2].upto)
        );
    }
}
