//! Index.db against itself and Summary.db: the pre-pass over every entry
//! (key order, increasing positions) and the summary's samples checked
//! against it; and the cuts of Data.db taken from the samples, so that the
//! walk need not wait for the pre-pass.

use super::*;
use crate::token::HashedToken;
use crate::version::Features;

/// What the index pre-pass learned.
pub(super) struct IndexScan {
    pub(super) entries: u64,
    pub(super) first: Option<Vec<u8>>,
    pub(super) last: Option<Vec<u8>>,
    /// Offsets of every `interval`-th entry (summary sampling check).
    pub(super) samples: Vec<u64>,
    /// True when Index.db decoded to its last byte.
    pub(super) complete: bool,
}

/// Walk Index.db: decode every entry, check key order and increasing positions.
pub(super) fn scan_index(
    bytes: &[u8],
    features: Features,
    partitioner: &Partitioner,
    interval: Option<u64>,
    mut cuts: Option<&mut Cuts>,
    out: &mut Problems,
) -> IndexScan {
    let mut r = IndexReader::new(bytes, features);
    let mut s = IndexScan {
        entries: 0,
        first: None,
        last: None,
        samples: Vec::new(),
        complete: false,
    };
    let mut prev_pos: Option<u64> = None;
    // The last key, borrowed from `bytes`, with its token hashed once.
    let mut last: Option<(&[u8], HashedToken)> = None;
    loop {
        match r.next() {
            Ok(Some(e)) => {
                if let Some(c) = cuts.as_deref_mut() {
                    c.partition(e.position, Some(e.offset));
                }
                if let Some(iv) = interval.filter(|i| *i > 0) {
                    if s.entries.is_multiple_of(iv) {
                        s.samples.push(e.offset);
                    }
                }
                let hashed = partitioner.hashed(e.key);
                if let Some((pk, ph)) = last {
                    match partitioner.compare_hashed(pk, ph, e.key, hashed) {
                        Ordering::Less => {}
                        o => out.push(
                            Problem::new(
                                ProblemClass::PartitionOrder,
                                Component::Index,
                                e.offset,
                                if o == Ordering::Equal {
                                    "duplicate key in Index.db".to_string()
                                } else {
                                    "Index.db entry out of partition order".to_string()
                                },
                            )
                            .key(e.key),
                        ),
                    }
                }
                if prev_pos.is_some_and(|p| e.position <= p) {
                    out.push(
                        Problem::new(
                            ProblemClass::IndexMismatch,
                            Component::Index,
                            e.offset,
                            format!(
                                "Data.db position {} does not follow the previous entry's {}",
                                e.position,
                                prev_pos.unwrap_or(0)
                            ),
                        )
                        .key(e.key),
                    );
                }
                prev_pos = Some(e.position);
                if s.first.is_none() {
                    s.first = Some(e.key.to_vec());
                }
                last = Some((e.key, hashed));
                s.entries += 1;
            }
            Ok(None) => {
                s.complete = r.is_done();
                break;
            }
            Err(e) => {
                out.push(Problem::from_error(&e, Component::Index, r.offset()));
                break;
            }
        }
    }
    s.last = last.map(|(k, _)| k.to_vec());
    s
}

pub(super) fn check_summary(
    summary: &Summary,
    index: &[u8],
    scan: &IndexScan,
    f: Features,
    out: &mut Problems,
) {
    for (i, e) in summary.entries.iter().enumerate() {
        let at = e.index_position;
        let entry = usize::try_from(at)
            .ok()
            .and_then(|a| index.get(a..))
            .map(|b| IndexReader::at(b, at, f).next());
        let msg = match entry {
            None => Some(format!(
                "summary entry {i} points at Index.db offset {at}, past its end"
            )),
            Some(Err(_)) | Some(Ok(None)) => Some(format!(
                "summary entry {i} points at Index.db offset {at}, which is not an entry"
            )),
            Some(Ok(Some(ie))) if ie.key != e.key.as_slice() => Some(format!(
                "summary entry {i} key differs from the key of the Index.db entry at offset {at}"
            )),
            _ => None,
        };
        if let Some(m) = msg {
            out.push(
                Problem::new(
                    ProblemClass::SummaryMismatch,
                    Component::Summary,
                    24 + 4 * i as u64,
                    m,
                )
                .key(&e.key),
            );
        }
    }
    if scan.complete && !scan.samples.is_empty() {
        let got: Vec<u64> = summary.entries.iter().map(|e| e.index_position).collect();
        if got != scan.samples {
            out.push(Problem::new(
                ProblemClass::SummaryMismatch,
                Component::Summary,
                0,
                format!(
                    "summary has {} entries, but sampling every {} index entries gives {}",
                    got.len(),
                    summary.header.min_index_interval,
                    scan.samples.len()
                ),
            ));
        }
    }
    if let Some(first) = &scan.first {
        if *first != summary.first_key {
            out.push(
                Problem::new(
                    ProblemClass::SummaryMismatch,
                    Component::Summary,
                    0,
                    "summary first key differs from the first Index.db key",
                )
                .key(&summary.first_key),
            );
        }
    }
    if let (Some(last), true) = (&scan.last, scan.complete) {
        if *last != summary.last_key {
            out.push(
                Problem::new(
                    ProblemClass::SummaryMismatch,
                    Component::Summary,
                    0,
                    "summary last key differs from the last Index.db key",
                )
                .key(&summary.last_key),
            );
        }
    }
}

/// Cuts of Data.db from Summary.db's samples instead of from every Index.db
/// entry, so the walk can start while the pre-pass runs beside it. Each
/// sample leads to its Index.db entry; the entries between two samples are
/// read only where the samples lie far enough apart to hold a large
/// partition, and those after the last sample always are. `None` when a
/// sample does not lead to an entry with its key, in increasing order, or
/// an entry read does not decode: the pre-pass cuts then, as one thread
/// would read the index anyway.
pub(super) fn sampled_cuts(
    summary: &Summary,
    index: &[u8],
    f: Features,
    unit_bytes: u64,
) -> Option<Cuts> {
    // The entries of `index[from..to]`, each fed to `cuts`.
    let feed = |cuts: &mut Cuts, from: u64, to: usize| -> Option<()> {
        let bytes = index.get(usize::try_from(from).ok()?..to)?;
        let mut r = IndexReader::at(bytes, from, f);
        while let Some(e) = r.next().ok()? {
            cuts.partition(e.position, Some(e.offset));
        }
        r.is_done().then_some(())
    };
    let mut cuts = Cuts::with_large(unit_bytes);
    let large = cuts.large_bytes();
    let mut prev: Option<(u64, u64)> = None; // (position, end of its entry)
    for s in &summary.entries {
        let at = usize::try_from(s.index_position).ok()?;
        let e = IndexReader::at(index.get(at..)?, s.index_position, f)
            .next()
            .ok()??;
        if e.key != s.key.as_slice() {
            return None;
        }
        match prev {
            None if e.offset != 0 => return None,
            Some((pos, end)) if e.offset < end || e.position <= pos => return None,
            Some((pos, end)) if e.position - pos >= large => feed(&mut cuts, end, at)?,
            _ => {}
        }
        cuts.partition(e.position, Some(e.offset));
        prev = Some((e.position, e.offset + e.len));
    }
    let (_, end) = prev?;
    feed(&mut cuts, end, index.len())?;
    Some(cuts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::SummaryEntry;
    use crate::validate::walk::IndexAt;
    use crate::validate::Unit;

    fn open(case: &str) -> (Sstable, crate::io::Bytes, Summary) {
        let data = crate::test_support::fixture_data(case).unwrap();
        let sst = Sstable::open_path(&data).unwrap();
        let index = sst.map_component(Component::Index).unwrap();
        let b = sst.read_component(Component::Summary).unwrap();
        let summary = Summary::parse(&b, &sst.features()).unwrap();
        (sst, index, summary)
    }

    /// The units cut from every `step`-th Index.db entry as samples.
    fn sampled(
        sst: &Sstable,
        index: &[u8],
        summary: &Summary,
        step: usize,
        unit: u64,
    ) -> Option<Vec<Unit>> {
        let entries: Vec<_> = IndexReader::new(index, sst.features())
            .entries()
            .map(|e| e.unwrap())
            .collect();
        let summary = Summary {
            entries: entries
                .iter()
                .step_by(step)
                .map(|e| SummaryEntry {
                    key: e.key.to_vec(),
                    index_position: e.offset,
                })
                .collect(),
            ..summary.clone()
        };
        let data_len = crate::data::ScanReader::new(sst, &crate::engine::bind(sst).unwrap().header)
            .unwrap()
            .data_len();
        sampled_cuts(&summary, index, sst.features(), unit)?.units(data_len)
    }

    /// However sparse the samples, every unit starts at a partition with
    /// its Index.db entry, and the large partitions are those the pre-pass
    /// over every entry finds.
    #[test]
    fn sampled_units_start_at_entries_and_find_every_large_partition() {
        for (case, unit) in [
            ("nb_clustering", 64),
            ("nb_wide", 4096),
            ("nb_wide_desc", 2048),
        ] {
            let (sst, index, summary) = open(case);
            let f = sst.features();
            let mut all = Cuts::with_large(unit);
            let entries: Vec<(u64, u64)> = IndexReader::new(&index, f)
                .entries()
                .map(|e| e.map(|e| (e.position, e.offset)).unwrap())
                .collect();
            for &(pos, off) in &entries {
                all.partition(pos, Some(off));
            }
            let data_len =
                crate::data::ScanReader::new(&sst, &crate::engine::bind(&sst).unwrap().header)
                    .unwrap()
                    .data_len();
            let full = all.units(data_len).unwrap();
            let large = |u: &[Unit]| -> Vec<u64> {
                u.iter().filter(|u| u.large).map(|u| u.start).collect()
            };
            for step in [1, 2, 3, 7, 1000] {
                let units = sampled(&sst, &index, &summary, step, unit).unwrap();
                assert_eq!(large(&units), large(&full), "{case}, every {step}");
                assert_eq!(units.last().map(|u| u.end), Some(data_len), "{case}");
                for u in &units {
                    let IndexAt::Next(off) = u.index_at else {
                        panic!("{case}: {u:?}")
                    };
                    assert!(
                        entries.contains(&(u.start, off)),
                        "{case}, every {step}: {u:?}"
                    );
                }
            }
            assert_eq!(
                sampled(&sst, &index, &summary, 1, unit),
                Some(full),
                "{case}"
            );
        }
    }

    /// A sample that does not lead to its entry cuts nothing: the pre-pass cuts.
    #[test]
    fn samples_not_at_their_entries_cut_nothing() {
        let (sst, index, summary) = open("nb_clustering");
        let f = sst.features();
        let second = IndexReader::new(&index, f)
            .entries()
            .nth(1)
            .unwrap()
            .unwrap();
        let with = |entries: Vec<SummaryEntry>| Summary {
            entries,
            ..summary.clone()
        };
        let first = summary.entries[0].clone();
        let at = |key: &[u8], index_position| SummaryEntry {
            key: key.to_vec(),
            index_position,
        };
        for bad in [
            // Another entry's key.
            vec![first.clone(), at(first.key.as_slice(), second.offset)],
            // Inside an entry.
            vec![first.clone(), at(second.key, second.offset + 1)],
            // Past the end.
            vec![first.clone(), at(second.key, index.len() as u64 + 10)],
            // Not from the first entry.
            vec![at(second.key, second.offset)],
            // Out of order.
            vec![at(second.key, second.offset), first.clone()],
        ] {
            assert!(
                sampled_cuts(&with(bad.clone()), &index, f, 64).is_none(),
                "{bad:?}"
            );
        }
        assert!(sampled_cuts(
            &with(vec![first, at(second.key, second.offset)]),
            &index,
            f,
            64
        )
        .is_some());
    }
}
