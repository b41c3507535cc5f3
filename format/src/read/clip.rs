//! [`Clipper`]: the one clipping core of a partition's rows and range
//! tombstone markers to a clustering slice, shared by the single-sstable
//! reads ([`super::bounded`]'s `Clip`, forward and reversed) and the merged
//! reads (`engine::merged`).
//!
//! It says where an element lies relative to the slice ([`Place`]) and
//! keeps what is open in the input and in the output, so that a range
//! tombstone crossing an edge is re-opened at the first edge and closed at
//! the last one (or at the last row a row limit lets through) by a
//! synthetic bound ([`Edge`]). The callers hold the elements, emit them, and
//! build the synthetic markers from the edges, each of its own marker type.
//!
//! Bounds, positions and the deletions a marker opens and closes are in
//! forward order; reversed (walking down), the first edge is the upper
//! bound and the edges' kinds are those of the reversed stream.

use std::cmp::Ordering;

use crate::clustering::{BoundKind, ClusteringPrefix};
use crate::compare::{compare_clustering, ClusteringComparator};
use crate::deletion::DeletionTime;
use crate::types::CqlType;

use super::Slice;

/// How the caller compares clustering prefixes.
pub(crate) trait Order {
    /// `a` against `b` in clustering order.
    fn compare(&self, a: &ClusteringPrefix<'_>, b: &ClusteringPrefix<'_>) -> Ordering;
}

impl Order for [CqlType] {
    fn compare(&self, a: &ClusteringPrefix<'_>, b: &ClusteringPrefix<'_>) -> Ordering {
        compare_clustering(self, a, b)
    }
}

impl Order for ClusteringComparator {
    fn compare(&self, a: &ClusteringPrefix<'_>, b: &ClusteringPrefix<'_>) -> Ordering {
        ClusteringComparator::compare(self, a, b)
    }
}

/// Where a clustering lies relative to the slice, in the reading direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// Not reached yet: at or before the lower bound (forward), at or after
    /// the upper bound (reversed).
    Ahead,
    Inside,
    /// Past the slice: at or after the upper bound (forward), at or before
    /// the lower bound (reversed).
    Past,
}

/// What the last edge and a row limit close.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Closes {
    /// What is open in the input there (the bounded reads).
    Input,
    /// What the output has open (the merged reads). The two differ only on
    /// an input out of clustering order, or a deletion open before a slice
    /// without a first edge.
    Output,
}

/// A synthetic bound marker to emit: at `values`, of `kind` (in the reading
/// direction), for `deletion`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Edge<'e, 'v> {
    pub(crate) values: &'e [Option<&'v [u8]>],
    pub(crate) kind: BoundKind,
    pub(crate) deletion: DeletionTime,
}

/// The clipping state of one slice of one partition (see the module docs).
pub(crate) struct Clipper<'b, O: Order + ?Sized> {
    pub(crate) order: &'b O,
    /// Lower bound of the slice (forward kind).
    pub(crate) lower: Option<ClusteringPrefix<'b>>,
    /// Upper bound of the slice (forward kind).
    pub(crate) upper: Option<ClusteringPrefix<'b>>,
    reversed: bool,
    closes: Closes,
    /// The deletion open in the input at the current position (forward:
    /// after the last element passed; reversed: below it).
    pub(crate) open: Option<DeletionTime>,
    /// The deletion open in the output.
    emitted: Option<DeletionTime>,
    /// The first edge has been dealt with.
    started: bool,
    /// The last edge has been dealt with.
    ended: bool,
}

impl<'b, O: Order + ?Sized> Clipper<'b, O> {
    /// A clipper of `slice` (`None`: the whole partition) for a read in the
    /// given direction.
    pub(crate) fn new(
        order: &'b O,
        slice: Option<&'b Slice>,
        reversed: bool,
        closes: Closes,
    ) -> Self {
        Clipper {
            order,
            lower: slice.and_then(Slice::start_prefix),
            upper: slice.and_then(Slice::end_prefix),
            reversed,
            closes,
            open: None,
            emitted: None,
            started: false,
            ended: false,
        }
    }

    /// Walking down (a reversed read).
    pub(crate) fn reversed(&self) -> bool {
        self.reversed
    }

    /// The last edge has been dealt with ([`Clipper::end`]).
    pub(crate) fn ended(&self) -> bool {
        self.ended
    }

    /// Where `at` lies.
    pub(crate) fn place(&self, at: &ClusteringPrefix<'_>) -> Place {
        let below = || {
            self.lower
                .as_ref()
                .is_some_and(|l| self.order.compare(at, l) != Ordering::Greater)
        };
        let above = || {
            self.upper
                .as_ref()
                .is_some_and(|u| self.order.compare(at, u) != Ordering::Less)
        };
        // Past is tested first: only a clustering of an empty slice is both,
        // and the bounded reads never place one (they read nothing of it).
        let past = if self.reversed { below() } else { above() };
        if past {
            return Place::Past;
        }
        let ahead = if self.reversed { above() } else { below() };
        if ahead {
            Place::Ahead
        } else {
            Place::Inside
        }
    }

    /// A marker that opens `open` and closes `close` (forward kinds) was
    /// passed, emitted when `inside`.
    pub(crate) fn marker(
        &mut self,
        open: Option<DeletionTime>,
        close: Option<DeletionTime>,
        inside: bool,
    ) {
        let d = if self.reversed { close } else { open };
        self.open = d;
        if inside {
            self.emitted = d;
        }
    }

    /// Before the first element inside the slice: the first edge,
    /// re-opening what is open in the input there.
    pub(crate) fn begin(&mut self) -> Option<Edge<'_, 'b>> {
        let d = self.begin_deletion()?;
        self.edge(true, d)
    }

    fn begin_deletion(&mut self) -> Option<DeletionTime> {
        if self.started {
            return None;
        }
        self.started = true;
        self.bound(true)?;
        let d = self.open?;
        self.emitted = Some(d);
        Some(d)
    }

    /// After the last element inside the slice (at the first one past it,
    /// or where reading stopped): the first edge if it was not dealt with,
    /// then the last edge, closing what is open.
    pub(crate) fn end(&mut self) -> [Option<Edge<'_, 'b>>; 2] {
        self.ended = true;
        let reopen = self.begin_deletion();
        let close = self.take_closing();
        [
            reopen.and_then(|d| self.edge(true, d)),
            close.and_then(|d| self.edge(false, d)),
        ]
    }

    /// A row limit stopped the output at the row at `values`: what is open
    /// is closed there (`INCL_END_BOUND`, as C\*'s `RTBoundCloser` does).
    pub(crate) fn cut<'e, 'v>(&mut self, values: &'e [Option<&'v [u8]>]) -> Option<Edge<'e, 'v>> {
        let deletion = self.take_closing()?;
        Some(Edge {
            values,
            kind: BoundKind::InclEndBound,
            deletion,
        })
    }

    fn take_closing(&mut self) -> Option<DeletionTime> {
        match self.closes {
            Closes::Input => self.open.take(),
            Closes::Output => self.emitted.take(),
        }
    }

    /// The bound of the first or the last edge.
    fn bound(&self, first: bool) -> Option<&ClusteringPrefix<'b>> {
        if first != self.reversed {
            self.lower.as_ref()
        } else {
            self.upper.as_ref()
        }
    }

    /// The first (re-opening) or last (closing) edge for `deletion`, with
    /// the kind to emit; `None` without that bound.
    fn edge(&self, first: bool, deletion: DeletionTime) -> Option<Edge<'_, 'b>> {
        let bound = self.bound(first)?;
        let kind = if self.reversed {
            bound.kind.reversed()
        } else {
            bound.kind
        };
        Some(Edge {
            values: &bound.values,
            kind,
            deletion,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests;
