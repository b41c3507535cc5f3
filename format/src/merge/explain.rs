//! Provenance of a merge (`--explain`): for every winning cell, row marker,
//! row deletion, complex deletion, range tombstone bound and partition
//! deletion, the source it came from, and the versions it shadowed with what
//! shadowed them.
//!
//! The [`Merger`](super::Merger) hands each [`Explained`] record to an
//! [`Explainer`] as soon as a row (or marker, or partition header) is
//! reconciled, so memory is one row's versions, never a partition. With no
//! explainer set, the merge allocates nothing for it.
//!
//! The records re-apply the rules of [`super::reconcile`] to the versions
//! before they are merged; the tests check that every winner named here is
//! what the merged stream holds.

use crate::deletion::DeletionTime;
use crate::read::OwnedClustering;

use super::reconcile::{self, deletes, liveness_supersedes, supersedes, Winner};
use super::{MCell, MColumnData, MRow};

/// Receives the records of a merge, in stream order.
pub trait Explainer {
    /// One explained item.
    fn record(&mut self, e: &Explained);
}

/// What a record explains.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// A partition header: its (reconciled) partition deletion. Comes before
    /// every other record of the partition.
    Partition {
        /// Serialized partition key.
        key: Vec<u8>,
    },
    /// A row as a whole (static or clustered): present when it holds a live
    /// marker or a live cell at `now`.
    Row {
        /// Per source holding a version of the row: the source and the
        /// highest timestamp in that version.
        sources: Vec<(usize, i64)>,
    },
    /// The row's liveness (INSERT) marker.
    RowMarker,
    /// The row deletion.
    RowDeletion,
    /// A cell of a simple column, or one element of a complex column.
    Cell {
        /// Index in the merged static or regular column set.
        column: usize,
        /// The column is static.
        is_static: bool,
        /// The element's cell path (complex columns).
        path: Option<Vec<u8>>,
    },
    /// A collection (complex column) deletion.
    ComplexDeletion {
        /// Index in the merged static or regular column set.
        column: usize,
        /// The column is static.
        is_static: bool,
    },
    /// Range tombstone markers of the sources at one clustering position.
    RangeTombstone {
        /// The range deletion open in the merged stream after this position,
        /// and the source that holds it.
        open: Option<Deleter>,
        /// The ranges of the sources that end here.
        closes: Vec<Version>,
    },
}

/// What kind of version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A live cell.
    Live,
    /// A cell tombstone.
    Tombstone,
    /// An expiring (TTL'd) cell or row marker.
    Expiring,
    /// A row marker without TTL.
    Marker,
    /// A deletion (partition, row, complex, range).
    Deletion,
    /// A counter cell.
    Counter,
}

/// One version of an item, from one source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    /// The source (sstable) index.
    pub source: usize,
    /// Write timestamp; for deletions the `markedForDeleteAt`.
    pub timestamp: i64,
    /// What it is.
    pub kind: Kind,
    /// Local deletion time (tombstones, deletions) or expiration time
    /// (expiring cells and markers), seconds.
    pub local_deletion_time: Option<i64>,
    /// TTL of expiring cells and markers.
    pub ttl: Option<i64>,
    /// Cell value (cells only).
    pub value: Option<Vec<u8>>,
}

/// Which deletion shadowed something.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeletionKind {
    /// The partition deletion.
    Partition,
    /// A range tombstone.
    Range,
    /// The row deletion.
    Row,
    /// A collection deletion.
    Complex,
}

/// A deletion and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deleter {
    /// Which deletion.
    pub kind: DeletionKind,
    /// Its source.
    pub source: usize,
    /// Its time.
    pub time: DeletionTime,
    /// Range tombstones: the bound that opened it in its source.
    pub bound: Option<OwnedClustering>,
}

/// Why a version is shadowed, or why the winner is not in the output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cause {
    /// A version with a newer timestamp (from `source`).
    Newer {
        /// Source of the winner.
        source: usize,
        /// Its timestamp.
        timestamp: i64,
    },
    /// Equal timestamps: Cassandra's tie-break `rule` picked the version from
    /// `source`.
    TieBreak {
        /// Source of the winner.
        source: usize,
        /// The rule, in words.
        rule: &'static str,
    },
    /// Counter contexts merged shard by shard into the output cell.
    CounterMerged,
    /// Deleted by a partition, range, row or collection deletion.
    Deleted(Deleter),
    /// Expired at `--now` (expiration time in seconds).
    Expired {
        /// Local expiration time.
        at: i64,
    },
    /// The winner is a cell tombstone.
    CellTombstone,
    /// A shadowable row deletion undone by a newer row marker.
    Undone {
        /// Source of the marker.
        source: usize,
        /// Its timestamp.
        timestamp: i64,
    },
    /// The row has no live marker and no live cell.
    NoLiveData,
}

/// A shadowed version and what shadowed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shadowed {
    /// The version.
    pub version: Version,
    /// What shadowed it.
    pub cause: Cause,
}

/// One explained item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Explained {
    /// What is explained.
    pub item: Item,
    /// Its row's clustering (kind `StaticClustering` for the static row), or
    /// the markers' position; `None` for the partition.
    pub clustering: Option<OwnedClustering>,
    /// The winning version (`None`: none, e.g. a live partition, or a row).
    pub winner: Option<Version>,
    /// `None` when the item is in the output (live data, or a tombstone the
    /// merged stream keeps); else why it is absent or dead.
    pub absent: Option<Cause>,
    /// The versions it shadowed.
    pub shadowed: Vec<Shadowed>,
}

fn cell_version(c: &MCell, source: usize) -> Version {
    let kind = if c.is_deleted() {
        Kind::Tombstone
    } else if c.counter_column {
        Kind::Counter
    } else if c.is_expiring() {
        Kind::Expiring
    } else {
        Kind::Live
    };
    Version {
        source,
        timestamp: c.timestamp,
        kind,
        local_deletion_time: c.local_deletion_time,
        ttl: c.ttl,
        value: (!c.is_deleted()).then(|| c.value.clone()),
    }
}

fn deletion_version(d: DeletionTime, source: usize) -> Version {
    Version {
        source,
        timestamp: d.marked_for_delete_at,
        kind: Kind::Deletion,
        local_deletion_time: Some(d.local_deletion_time),
        ttl: None,
        value: None,
    }
}

/// Why the loser `l` lost to the winner `w` (both of one item).
fn lost_to(w: &Version, l_ts: i64, rule: &'static str) -> Cause {
    if w.timestamp > l_ts {
        Cause::Newer {
            source: w.source,
            timestamp: w.timestamp,
        }
    } else {
        Cause::TieBreak {
            source: w.source,
            rule,
        }
    }
}

/// The winner among `versions` (source, deletion) of one deletion, and the
/// shadowed ones.
pub(super) fn explain_deletions(
    versions: &[(usize, DeletionTime)],
) -> Option<(Version, Vec<Shadowed>)> {
    let mut best: Option<(usize, DeletionTime)> = None;
    for &(s, d) in versions {
        if best.is_none_or(|(_, b)| supersedes(&d, &b)) {
            best = Some((s, d));
        }
    }
    let (ws, wd) = best?;
    let w = deletion_version(wd, ws);
    let shadowed = versions
        .iter()
        .filter(|&&(s, _)| s != ws)
        .map(|&(s, d)| Shadowed {
            version: deletion_version(d, s),
            cause: lost_to(
                &w,
                d.marked_for_delete_at,
                if d == wd {
                    "the same deletion"
                } else {
                    "later local deletion time"
                },
            ),
        })
        .collect();
    Some((w, shadowed))
}

/// The winner of one cell's versions (in source order) and the losers.
fn explain_cells(versions: &[(usize, &MCell)]) -> Option<(Version, Option<MCell>, Vec<Shadowed>)> {
    let (&(s0, c0), rest) = versions.split_first()?;
    let mut best = (s0, c0.clone());
    let mut merged = false;
    for &(s, c) in rest {
        match reconcile::reconcile_cells(&best.1, c) {
            Winner::Left => {}
            Winner::Right => best = (s, c.clone()),
            Winner::Merged { value, timestamp } => {
                merged = true;
                let mut m = best.1.clone();
                m.value = value;
                m.timestamp = timestamp;
                best.1 = m;
            }
        }
    }
    let (ws, wc) = best;
    let w = cell_version(&wc, ws);
    let shadowed = versions
        .iter()
        .filter(|&&(s, _)| s != ws || merged)
        .map(|&(s, c)| Shadowed {
            version: cell_version(c, s),
            cause: if merged {
                Cause::CounterMerged
            } else {
                lost_to(&w, c.timestamp, reconcile::tie_break_rule(&wc, c))
            },
        })
        .collect();
    Some((w, Some(wc), shadowed))
}

/// Whether `deleter` shadows data written at `timestamp`.
fn shadows(deleter: &Option<Deleter>, timestamp: i64) -> Option<Cause> {
    deleter
        .as_ref()
        .filter(|d| deletes(&d.time, timestamp))
        .map(|d| Cause::Deleted(d.clone()))
}

/// The records of one row's versions (`rows`, in source order) merged under
/// `active` (range or partition deletion), sent to `out`.
pub(super) fn explain_row(
    rows: &[MRow],
    active: Option<Deleter>,
    now_secs: i64,
    sink: &mut dyn Explainer,
) {
    // The row's own record goes first, but depends on its parts: they are
    // held (one row's worth) and sent after it.
    let mut parts: Vec<Explained> = Vec::new();
    let out = &mut parts;
    let Some(first) = rows.first() else {
        return;
    };
    let clustering = Some(first.clustering.clone());
    let is_static = first.is_static();
    let emit = |out: &mut Vec<Explained>, item, winner, absent, shadowed| {
        out.push(Explained {
            item,
            clustering: clustering.clone(),
            winner,
            absent,
            shadowed,
        })
    };
    let mut live = false;

    // Row deletion.
    let dels: Vec<(usize, DeletionTime)> = rows
        .iter()
        .filter_map(|r| r.deletion.map(|d| (r.source, d.time)))
        .collect();
    let marker_best = rows
        .iter()
        .filter_map(|r| r.liveness.map(|l| (r.source, l)))
        .fold(
            None,
            |b: Option<(usize, crate::data::LivenessInfo)>, (s, l)| match b {
                Some((_, cur)) if !liveness_supersedes(&l, &cur) => b,
                _ => Some((s, l)),
            },
        );
    let mut deleter = active.clone();
    if let Some((w, shadowed)) = explain_deletions(&dels) {
        let wd = DeletionTime {
            marked_for_delete_at: w.timestamp,
            local_deletion_time: w.local_deletion_time.unwrap_or_default(),
        };
        let shadowable = rows
            .iter()
            .any(|r| r.source == w.source && r.deletion.is_some_and(|d| d.shadowable));
        let absent = match marker_best {
            Some((ms, l)) if shadowable && l.timestamp > wd.marked_for_delete_at => {
                Some(Cause::Undone {
                    source: ms,
                    timestamp: l.timestamp,
                })
            }
            _ => match &active {
                Some(a) if !supersedes(&wd, &a.time) => Some(Cause::Deleted(a.clone())),
                _ => None,
            },
        };
        if absent.is_none() {
            deleter = Some(Deleter {
                kind: DeletionKind::Row,
                source: w.source,
                time: wd,
                bound: None,
            });
        }
        emit(out, Item::RowDeletion, Some(w), absent, shadowed);
    }

    // Row marker.
    let markers: Vec<(usize, crate::data::LivenessInfo)> = rows
        .iter()
        .filter_map(|r| r.liveness.map(|l| (r.source, l)))
        .collect();
    if let Some((ws, wl)) = marker_best {
        let version = |s: usize, l: &crate::data::LivenessInfo| Version {
            source: s,
            timestamp: l.timestamp,
            kind: if l.ttl.is_some() || l.expired {
                Kind::Expiring
            } else {
                Kind::Marker
            },
            local_deletion_time: l.local_expiration_time,
            ttl: l.ttl,
            value: None,
        };
        let w = version(ws, &wl);
        let shadowed = markers
            .iter()
            .filter(|(s, _)| *s != ws)
            .map(|(s, l)| Shadowed {
                version: version(*s, l),
                cause: lost_to(&w, l.timestamp, reconcile::marker_tie_break_rule(&wl, l)),
            })
            .collect();
        let expired_at = l_expired(&wl, now_secs);
        let absent =
            shadows(&deleter, wl.timestamp).or_else(|| expired_at.map(|at| Cause::Expired { at }));
        live |= absent.is_none();
        emit(out, Item::RowMarker, Some(w), absent, shadowed);
    }

    // Cells, column by column (each row's cells are in column order).
    let mut columns: Vec<(usize, &MColumnData)> = rows
        .iter()
        .flat_map(|r| r.cells.iter().map(move |c| (r.source, c)))
        .collect();
    columns.sort_by_key(|(_, c)| c.column());
    let mut i = 0;
    while i < columns.len() {
        let col = columns[i].1.column();
        let mut j = i;
        while j < columns.len() && columns[j].1.column() == col {
            j += 1;
        }
        let group = &columns[i..j];
        i = j;
        if matches!(group[0].1, MColumnData::Simple { .. }) {
            let versions: Vec<(usize, &MCell)> = group
                .iter()
                .filter_map(|(s, c)| match c {
                    MColumnData::Simple { cell, .. } => Some((*s, cell)),
                    MColumnData::Complex { .. } => None,
                })
                .collect();
            live |= explain_one_cell(
                &versions,
                col,
                is_static,
                None,
                &deleter,
                now_secs,
                &clustering,
                out,
            );
            continue;
        }
        // Complex: its deletion, then each element.
        let cdels: Vec<(usize, DeletionTime)> = group
            .iter()
            .filter_map(|(s, c)| match c {
                MColumnData::Complex {
                    deletion: Some(d), ..
                } => Some((*s, *d)),
                _ => None,
            })
            .collect();
        let mut cell_deleter = deleter.clone();
        if let Some((w, shadowed)) = explain_deletions(&cdels) {
            let wd = DeletionTime {
                marked_for_delete_at: w.timestamp,
                local_deletion_time: w.local_deletion_time.unwrap_or_default(),
            };
            let absent = match &deleter {
                Some(a) if !supersedes(&wd, &a.time) => Some(Cause::Deleted(a.clone())),
                _ => None,
            };
            if absent.is_none() {
                cell_deleter = Some(Deleter {
                    kind: DeletionKind::Complex,
                    source: w.source,
                    time: wd,
                    bound: None,
                });
            }
            emit(
                out,
                Item::ComplexDeletion {
                    column: col,
                    is_static,
                },
                Some(w),
                absent,
                shadowed,
            );
        }
        let mut elems: Vec<(usize, &MCell)> = group
            .iter()
            .flat_map(|(s, c)| match c {
                MColumnData::Complex { cells, .. } => cells.iter().map(|e| (*s, e)).collect(),
                MColumnData::Simple { .. } => Vec::new(),
            })
            .collect();
        // Byte order of paths groups equal paths; the merged stream orders
        // them by type, which only matters for the order of the records.
        elems.sort_by(|a, b| a.1.path.cmp(&b.1.path).then(a.0.cmp(&b.0)));
        let mut k = 0;
        while k < elems.len() {
            let mut m = k;
            while m < elems.len() && elems[m].1.path == elems[k].1.path {
                m += 1;
            }
            let path = elems[k].1.path.clone();
            live |= explain_one_cell(
                &elems[k..m],
                col,
                is_static,
                path,
                &cell_deleter,
                now_secs,
                &clustering,
                out,
            );
            k = m;
        }
    }

    // The row as a whole.
    // An empty static row (a header with nothing in it) is no version.
    let sources: Vec<(usize, i64)> = rows
        .iter()
        .map(|r| (r.source, max_ts(r)))
        .filter(|&(_, t)| t != i64::MIN)
        .collect();
    let absent = (!live).then(|| match &deleter {
        Some(d) if sources.iter().all(|&(_, t)| deletes(&d.time, t)) => Cause::Deleted(d.clone()),
        _ => Cause::NoLiveData,
    });
    sink.record(&Explained {
        item: Item::Row { sources },
        clustering,
        winner: None,
        absent,
        shadowed: Vec::new(),
    });
    for p in &parts {
        sink.record(p);
    }
}

/// Explain one cell (simple, or a complex element); true when it is live.
#[allow(clippy::too_many_arguments)]
fn explain_one_cell(
    versions: &[(usize, &MCell)],
    column: usize,
    is_static: bool,
    path: Option<Vec<u8>>,
    deleter: &Option<Deleter>,
    now_secs: i64,
    clustering: &Option<OwnedClustering>,
    out: &mut Vec<Explained>,
) -> bool {
    let Some((w, wc, shadowed)) = explain_cells(versions) else {
        return false;
    };
    let wc = wc.unwrap_or_else(|| versions[0].1.clone());
    let absent = shadows(deleter, wc.timestamp).or_else(|| {
        if wc.is_deleted() {
            Some(Cause::CellTombstone)
        } else if !wc.is_live(now_secs) {
            Some(Cause::Expired {
                at: wc.local_deletion_time.unwrap_or_default(),
            })
        } else {
            None
        }
    });
    let live = absent.is_none();
    out.push(Explained {
        item: Item::Cell {
            column,
            is_static,
            path,
        },
        clustering: clustering.clone(),
        winner: Some(w),
        absent,
        shadowed,
    });
    live
}

fn l_expired(l: &crate::data::LivenessInfo, now_secs: i64) -> Option<i64> {
    if l.expired {
        return Some(l.local_expiration_time.unwrap_or_default());
    }
    l.local_expiration_time
        .filter(|&t| l.ttl.is_some() && t <= now_secs)
}

/// The highest timestamp a row version holds (marker, deletion, cells).
fn max_ts(r: &MRow) -> i64 {
    let mut m = i64::MIN;
    if let Some(l) = r.liveness {
        m = m.max(l.timestamp);
    }
    if let Some(d) = r.deletion {
        m = m.max(d.time.marked_for_delete_at);
    }
    for c in &r.cells {
        match c {
            MColumnData::Simple { cell, .. } => m = m.max(cell.timestamp),
            MColumnData::Complex {
                deletion, cells, ..
            } => {
                if let Some(d) = deletion {
                    m = m.max(d.marked_for_delete_at);
                }
                for e in cells {
                    m = m.max(e.timestamp);
                }
            }
        }
    }
    m
}

/// The record of the range tombstone markers of several sources at one
/// position: `inputs` are (source, the deletion it opens here, the deletion
/// it closes here), either LIVE; `open` is the range deletion open in the
/// merged stream after the position; `partition` the partition deletion.
pub(super) fn explain_markers(
    bound: &OwnedClustering,
    inputs: &[(usize, DeletionTime, DeletionTime)],
    open: Option<Deleter>,
    partition: Option<Deleter>,
    out: &mut dyn Explainer,
) {
    let mut winner = None;
    let mut shadowed = Vec::new();
    let mut closes = Vec::new();
    for &(s, opens, ends) in inputs {
        if !ends.is_live() {
            closes.push(deletion_version(ends, s));
        }
        if opens.is_live() {
            continue;
        }
        let v = deletion_version(opens, s);
        let cause = match (&open, &partition) {
            (Some(o), _) if o.source == s && o.time == opens && winner.is_none() => {
                winner = Some(v);
                continue;
            }
            (_, Some(p)) if !supersedes(&opens, &p.time) => Cause::Deleted(p.clone()),
            (Some(o), _) => Cause::Deleted(o.clone()),
            (None, _) => Cause::NoLiveData,
        };
        shadowed.push(Shadowed { version: v, cause });
    }
    out.record(&Explained {
        item: Item::RangeTombstone { open, closes },
        clustering: Some(bound.clone()),
        winner,
        absent: None,
        shadowed,
    });
}
