//! Index.db against itself and Summary.db: the pre-pass over every entry
//! (key order, increasing positions) and the summary's samples checked
//! against it.

use super::*;
use crate::token::HashedToken;

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
    sst: &Sstable,
    partitioner: &Partitioner,
    interval: Option<u64>,
    mut cuts: Option<&mut Cuts>,
    out: &mut Problems,
) -> IndexScan {
    let mut r = IndexReader::new(bytes, sst.features());
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
    sst: &Sstable,
    out: &mut Problems,
) {
    let f = sst.features();
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
