//! Checks of the decoded Data.db stream that need no other component:
//! partition order, clustering order, range tombstone pairing, deletion
//! times, counts. Shared by `validate` (index-driven) and `scrub`
//! (index-less).
//!
//! Feed it what a reader yields: [`DataChecker::partition_start`], then each
//! [`Fragment`] with [`DataChecker::fragment`], then
//! [`DataChecker::partition_end`] (or [`DataChecker::abort_partition`] when
//! the partition failed to decode). Findings go to a [`Problems`] list.

use std::cmp::Ordering;

use crate::compare::{ClusteringComparator, OwnedPrefix};
use crate::component::Component;
use crate::data::{ColumnData, Finding, FindingKind, Fragment, RangeTombstoneMarker, Row};
use crate::deletion::DeletionTime;
use crate::statistics::SerializationHeader;
use crate::token::{HashedToken, Partitioner};

use super::problem::{Problem, ProblemClass, Problems};

/// What the checker thinks of a fragment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Fine.
    Ok,
    /// Not after the previous unfiltered in clustering order (dropped by
    /// `scrub --mode skip`).
    OutOfOrder,
    /// A marker that closes nothing, or opens while open.
    BadMarker,
}

/// Rows, markers and static rows counted in (part of) one partition.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct BodyCounts {
    pub(crate) rows: u64,
    pub(crate) markers: u64,
    pub(crate) static_rows: u64,
    pub(crate) nonempty_static_rows: u64,
}

impl BodyCounts {
    pub(crate) fn add(&mut self, o: &BodyCounts) {
        self.rows += o.rows;
        self.markers += o.markers;
        self.static_rows += o.static_rows;
        self.nonempty_static_rows += o.nonempty_static_rows;
    }
}

/// Per-partition and cross-partition checks of decoded fragments.
#[derive(Debug)]
pub struct DataChecker {
    partitioner: Partitioner,
    cmp: ClusteringComparator,
    chunk_len: Option<u64>,
    /// Key of the previous partition (order check), with its token hashed
    /// once.
    last_key: Option<(Vec<u8>, HashedToken)>,
    key: Vec<u8>,
    start: u64,
    in_partition: bool,
    last: OwnedPrefix,
    has_last: bool,
    /// The open range tombstone: its deletion and where it was opened.
    open: Option<(DeletionTime, u64)>,
    /// Partitions started and completed.
    pub partitions: u64,
    /// Clustered rows.
    pub rows: u64,
    /// Static rows.
    pub static_rows: u64,
    /// Static rows with content (liveness, deletion or cells).
    pub nonempty_static_rows: u64,
    /// Range tombstone markers.
    pub markers: u64,
    /// First and last partition keys seen (in file order).
    pub first_key: Option<Vec<u8>>,
    /// Last partition key seen.
    pub last_seen_key: Option<Vec<u8>>,
}

impl DataChecker {
    /// A checker for a table. `chunk_len` (compressed Data.db) maps offsets to chunks.
    pub fn new(
        header: &SerializationHeader,
        partitioner: Partitioner,
        chunk_len: Option<u64>,
    ) -> DataChecker {
        DataChecker {
            partitioner,
            cmp: ClusteringComparator::new(header.clustering_types.clone()),
            chunk_len,
            last_key: None,
            key: Vec::new(),
            start: 0,
            in_partition: false,
            last: OwnedPrefix::default(),
            has_last: false,
            open: None,
            partitions: 0,
            rows: 0,
            static_rows: 0,
            nonempty_static_rows: 0,
            markers: 0,
            first_key: None,
            last_seen_key: None,
        }
    }

    /// The comparator in use.
    pub fn comparator(&self) -> &ClusteringComparator {
        &self.cmp
    }

    /// The partitioner in use.
    pub fn partitioner(&self) -> &Partitioner {
        &self.partitioner
    }

    /// The chunk of a Data.db offset (compressed files).
    pub fn chunk_of(&self, off: u64) -> Option<u64> {
        self.chunk_len.filter(|l| *l > 0).map(|l| off / l)
    }

    fn problem(&self, class: ProblemClass, off: u64, msg: String) -> Problem {
        Problem::new(class, Component::Data, off, msg)
            .chunk(self.chunk_of(off))
            .key(&self.key)
    }

    /// The decorated-key order of `key` relative to the last accepted key
    /// (`None` for the first partition). `Some(Less)` is in order.
    pub fn order_of(&self, key: &[u8]) -> Option<Ordering> {
        self.order_hashed(key, self.partitioner.hashed(key))
    }

    fn order_hashed(&self, key: &[u8], hashed: HashedToken) -> Option<Ordering> {
        self.last_key
            .as_ref()
            .map(|(p, ph)| self.partitioner.compare_hashed(p, *ph, key, hashed))
    }

    /// The last key accepted for the order check.
    pub fn last_key(&self) -> Option<&[u8]> {
        self.last_key.as_ref().map(|(k, _)| k.as_slice())
    }

    /// Make `key` the reference for the next order check.
    pub fn set_last_key(&mut self, key: &[u8]) {
        self.set_last_hashed(key, self.partitioner.hashed(key));
    }

    fn set_last_hashed(&mut self, key: &[u8], hashed: HashedToken) {
        let (k, h) = self.last_key.get_or_insert_with(|| (Vec::new(), hashed));
        k.clear();
        k.extend_from_slice(key);
        *h = hashed;
    }

    /// The open range tombstone deletion, if any.
    pub fn open_marker(&self) -> Option<DeletionTime> {
        self.open.map(|o| o.0)
    }

    /// The clustering of the last row or marker of the partition, if any.
    pub fn last_clustering(&self) -> Option<&OwnedPrefix> {
        self.has_last.then_some(&self.last)
    }

    /// A partition starts at `pos`. With `check_order`, reports keys out of
    /// order and makes this key the reference (validate); scrub checks the
    /// order itself ([`DataChecker::order_of`]). Returns the order relative
    /// to the previous key.
    pub fn partition_start(
        &mut self,
        key: &[u8],
        deletion: &DeletionTime,
        pos: u64,
        check_order: bool,
        out: &mut Problems,
    ) -> Option<Ordering> {
        self.key.clear();
        self.key.extend_from_slice(key);
        self.start = pos;
        self.in_partition = true;
        self.has_last = false;
        self.open = None;
        if self.first_key.is_none() {
            self.first_key = Some(key.to_vec());
        }
        // The key's token is hashed once for the check and the next one.
        let hashed = self.partitioner.hashed(key);
        let ord = self.order_hashed(key, hashed);
        if check_order {
            if let Some(p) = self.problem_of_order(key, pos, ord) {
                out.push(p);
            }
            self.set_last_hashed(key, hashed);
        }
        if key.is_empty() {
            out.push(self.problem(ProblemClass::DecodeError, pos, "empty partition key".into()));
        }
        self.check_deletion(deletion, pos, "partition deletion", out);
        ord
    }

    /// The `partition_order` problem of partition `key` at `pos` coming
    /// after the last key accepted (none when in order, or the first).
    pub fn order_problem(&self, key: &[u8], pos: u64) -> Option<Problem> {
        self.problem_of_order(key, pos, self.order_of(key))
    }

    fn problem_of_order(&self, key: &[u8], pos: u64, ord: Option<Ordering>) -> Option<Problem> {
        let msg = match ord? {
            Ordering::Less => return None,
            Ordering::Equal => {
                "duplicate partition key (same key as the previous partition)".into()
            }
            Ordering::Greater => format!(
                "partition out of order: token {} is not after the previous partition's \
                 (token {})",
                self.partitioner.token(key),
                self.last_key()
                    .map(|k| self.partitioner.token(k).to_string())
                    .unwrap_or_default()
            ),
        };
        Some(
            Problem::new(ProblemClass::PartitionOrder, Component::Data, pos, msg)
                .chunk(self.chunk_of(pos))
                .key(key),
        )
    }

    /// Go on from `later`, a checker that read the partitions after this
    /// one's (a later unit of Data.db): its counts added, its keys taken.
    pub(crate) fn follow(&mut self, later: &DataChecker) {
        self.partitions += later.partitions;
        self.rows += later.rows;
        self.static_rows += later.static_rows;
        self.nonempty_static_rows += later.nonempty_static_rows;
        self.markers += later.markers;
        if self.first_key.is_none() {
            self.first_key.clone_from(&later.first_key);
        }
        if later.last_seen_key.is_some() {
            self.last_seen_key.clone_from(&later.last_seen_key);
        }
        if later.last_key.is_some() {
            self.last_key.clone_from(&later.last_key);
        }
        self.in_partition = false;
        self.open = None;
        self.has_last = false;
    }

    /// Continue inside partition `key` (started at `start`) at a row-index
    /// block (Data.db offset `at`), with the range tombstone the index
    /// says is open there and no previous clustering: the state a part of
    /// a partition walked on its own thread starts from.
    pub(crate) fn resume_partition(
        &mut self,
        key: &[u8],
        start: u64,
        open: Option<DeletionTime>,
        at: u64,
    ) {
        self.key.clear();
        self.key.extend_from_slice(key);
        self.start = start;
        self.in_partition = true;
        self.has_last = false;
        self.open = open.map(|d| (d, at));
    }

    /// The rows and markers of the partition started last were checked
    /// elsewhere (its parts, on threads), with nothing found: take their
    /// counts and the last clustering, as if they had been fed here.
    pub(crate) fn body_checked(&mut self, counts: &BodyCounts, last: Option<&OwnedPrefix>) {
        self.rows += counts.rows;
        self.markers += counts.markers;
        self.static_rows += counts.static_rows;
        self.nonempty_static_rows += counts.nonempty_static_rows;
        if let Some(l) = last {
            self.last.clone_from(l);
            self.has_last = true;
        }
        self.open = None;
    }

    /// What this checker counted (a part's: in its part alone).
    pub(crate) fn counts(&self) -> BodyCounts {
        BodyCounts {
            rows: self.rows,
            markers: self.markers,
            static_rows: self.static_rows,
            nonempty_static_rows: self.nonempty_static_rows,
        }
    }

    fn check_deletion(&self, d: &DeletionTime, pos: u64, what: &str, out: &mut Problems) {
        if d.is_live() {
            return;
        }
        if d.local_deletion_time < 0 {
            out.push(self.problem(
                ProblemClass::InvalidDeletion,
                pos,
                format!(
                    "{what} has a negative local deletion time {} (timestamp {})",
                    d.local_deletion_time, d.marked_for_delete_at
                ),
            ));
        } else if d.marked_for_delete_at == i64::MIN {
            out.push(self.problem(
                ProblemClass::InvalidDeletion,
                pos,
                format!(
                    "{what} has no timestamp but a local deletion time {}",
                    d.local_deletion_time
                ),
            ));
        }
    }

    fn check_row_times(&self, r: &Row<'_>, out: &mut Problems) {
        let pos = r.position.0;
        if let Some(l) = &r.liveness {
            if l.local_expiration_time.is_some_and(|t| t < 0) || l.ttl.is_some_and(|t| t < 0) {
                out.push(self.problem(
                    ProblemClass::InvalidDeletion,
                    pos,
                    format!(
                        "row liveness has a negative TTL or expiration time (ttl {}, expires \
                         {}): TTL overflow",
                        opt(l.ttl),
                        opt(l.local_expiration_time)
                    ),
                ));
            }
        }
        if let Some(d) = &r.deletion {
            self.check_deletion(&d.time, pos, "row deletion", out);
        }
        for cd in &r.cells {
            let (cells, cdel) = match cd {
                ColumnData::Simple { cell, .. } => (std::slice::from_ref(cell), None),
                ColumnData::Complex {
                    cells,
                    complex_deletion,
                    ..
                } => (cells.as_slice(), complex_deletion.as_ref()),
            };
            if let Some(d) = cdel {
                self.check_deletion(d, pos, "collection deletion", out);
            }
            for c in cells {
                let bad_ldt = (c.is_deleted() || c.is_expiring())
                    && c.local_deletion_time.is_some_and(|t| t < 0);
                if bad_ldt || c.ttl.is_some_and(|t| t < 0) {
                    out.push(self.problem(
                        ProblemClass::InvalidDeletion,
                        pos,
                        format!(
                            "cell of column {} has a negative {} ({}, ttl {}){}",
                            cd.column().name(),
                            if c.is_deleted() {
                                "local deletion time"
                            } else {
                                "expiration time"
                            },
                            opt(c.local_deletion_time),
                            opt(c.ttl),
                            if c.is_expiring() {
                                ": TTL overflow"
                            } else {
                                ""
                            }
                        ),
                    ));
                    return;
                }
            }
        }
    }

    /// Check one fragment of the partition started last.
    pub fn fragment(&mut self, f: &Fragment<'_>, out: &mut Problems) -> Verdict {
        match f {
            Fragment::PartitionStart { .. } | Fragment::PartitionEnd { .. } => Verdict::Ok,
            Fragment::StaticRow(r) => {
                self.static_rows += 1;
                if r.liveness.is_some() || r.deletion.is_some() || !r.cells.is_empty() {
                    self.nonempty_static_rows += 1;
                }
                self.check_row_times(r, out);
                Verdict::Ok
            }
            Fragment::Row(r) => {
                self.rows += 1;
                self.check_row_times(r, out);
                let v = self.order(&r.clustering, r.position.0, "row", out);
                if v == Verdict::Ok {
                    self.last.set(&r.clustering);
                    self.has_last = true;
                }
                v
            }
            Fragment::Marker(m) => {
                self.markers += 1;
                let v = self.order(&m.bound, m.position.0, "range tombstone marker", out);
                if v != Verdict::Ok {
                    return v;
                }
                self.last.set(&m.bound);
                self.has_last = true;
                self.marker(m, out)
            }
        }
    }

    fn order(
        &self,
        c: &crate::clustering::ClusteringPrefix<'_>,
        pos: u64,
        what: &str,
        out: &mut Problems,
    ) -> Verdict {
        if !self.has_last {
            return Verdict::Ok;
        }
        match self.cmp.compare_any(&self.last, c) {
            Ordering::Less => Verdict::Ok,
            o => {
                out.push(self.problem(
                    ProblemClass::ClusteringOrder,
                    pos,
                    format!(
                        "{what} {} the previous one in clustering order{}",
                        if o == Ordering::Equal {
                            "has the same clustering as"
                        } else {
                            "sorts before"
                        },
                        if o == Ordering::Equal {
                            " (duplicate)"
                        } else {
                            ""
                        }
                    ),
                ));
                Verdict::OutOfOrder
            }
        }
    }

    fn marker(&mut self, m: &RangeTombstoneMarker<'_>, out: &mut Problems) -> Verdict {
        let pos = m.position.0;
        let kind = m.bound.kind;
        let (close, open) = (m.close_deletion(), m.open_deletion());
        if let Some(d) = close {
            self.check_deletion(&d, pos, "range tombstone", out);
        }
        if let Some(d) = open.filter(|d| Some(*d) != close) {
            self.check_deletion(&d, pos, "range tombstone", out);
        }
        let mut verdict = Verdict::Ok;
        if kind.is_end() {
            match self.open {
                None => {
                    out.push(self.problem(
                        ProblemClass::RtNotOpened,
                        pos,
                        format!("range tombstone {kind} closes a range that was not opened"),
                    ));
                    verdict = Verdict::BadMarker;
                }
                Some((open, at)) => {
                    if Some(open) != m.close_deletion() {
                        out.push(self.problem(
                            ProblemClass::RtMismatch,
                            pos,
                            format!(
                                "range tombstone {kind} closes with deletion {} but the range \
                                 opened at {at:#x} has {}",
                                fmt_del(m.close_deletion()),
                                fmt_del(Some(open))
                            ),
                        ));
                    }
                    self.open = None;
                }
            }
        }
        if kind.is_start() {
            if !kind.is_boundary() {
                if let Some((_, at)) = self.open {
                    out.push(self.problem(
                        ProblemClass::RtUnclosed,
                        pos,
                        format!(
                            "range tombstone {kind} opens a range while the one opened at \
                             {at:#x} is still open (ranges must be disjoint)"
                        ),
                    ));
                    verdict = Verdict::BadMarker;
                }
            }
            if let Some(d) = m.open_deletion() {
                self.open = Some((d, pos));
            }
        }
        verdict
    }

    /// The partition ends (its END_OF_PARTITION byte is at `pos`).
    pub fn partition_end(&mut self, pos: u64, out: &mut Problems) {
        if let Some((_, at)) = self.open.take() {
            out.push(self.problem(
                ProblemClass::RtUnclosed,
                pos,
                format!(
                    "range tombstone opened at {at:#x} is not closed by the end of the partition"
                ),
            ));
        }
        self.partitions += 1;
        self.in_partition = false;
        let k = self.last_seen_key.get_or_insert_with(Vec::new);
        k.clear();
        k.extend_from_slice(&self.key);
    }

    /// The partition failed to decode: forget its state.
    pub fn abort_partition(&mut self) {
        self.in_partition = false;
        self.open = None;
        self.has_last = false;
    }

    /// Turn reader findings (`prev_unfiltered_size` mismatches) into problems.
    pub fn findings(&self, fs: &[Finding], key: Option<&[u8]>, out: &mut Problems) {
        for f in fs {
            #[allow(irrefutable_let_patterns)]
            if let FindingKind::PrevUnfilteredSize { stored, expected } = &f.kind {
                {
                    let mut p = Problem::new(
                        ProblemClass::PrevSizeMismatch,
                        Component::Data,
                        f.position.0,
                        format!(
                            "previous unfiltered size is {stored}, but the previous unfiltered \
                             (or partition header) is {expected} bytes before"
                        ),
                    )
                    .chunk(self.chunk_of(f.position.0));
                    if let Some(k) = key {
                        p = p.key(k);
                    }
                    out.push(p);
                }
            }
        }
    }
}

fn fmt_del(d: Option<DeletionTime>) -> String {
    match d {
        None => "none".into(),
        Some(d) if d.is_live() => "LIVE".into(),
        Some(d) => format!(
            "(timestamp {}, local deletion time {})",
            d.marked_for_delete_at, d.local_deletion_time
        ),
    }
}

/// An optional number for messages: the number, or `none`.
fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or_else(|| "none".to_string(), |x| x.to_string())
}
