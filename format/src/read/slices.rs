//! Clustering bounds as values, as CQL's `WHERE (c1, c2) >= (a, b)` means
//! them, turned into slices in clustering order; and one partition read
//! slice after slice.
//!
//! A bound over columns of one order is one slice (its side swapped when
//! the columns are descending). A bound over columns of both orders is
//! not: on `(c1 ASC, c2 DESC)`, `(c1, c2) >= (1, 5)` is `c1 > 1`, after
//! every `c1 = 1` row, together with `c1 = 1 AND c2 >= 5`, which comes
//! *first* within `c1 = 1`. Cassandra reads such a restriction as several
//! slices (`MultiColumnRestriction.SliceRestriction`); [`value_slices`]
//! gives the same rows: the disjoint slices, in clustering order, whose
//! union is the rows the values select.

use std::cmp::Ordering;

use super::{ClusteringBound, ReadPlan, Slice, Visitor};
use crate::compare::compare_clustering;
use crate::data::Fragment;
use crate::types::CqlType;

/// The slices, in clustering order and disjoint, that hold the rows whose
/// clustering is at or above `lower` and at or below `upper` as values
/// (a bound compares as CQL compares tuples: column by column, each by its
/// type's value order whatever the clustering order; on equal prefixes the
/// bound's inclusiveness decides). Empty when no row can match.
pub fn value_slices(
    types: &[CqlType],
    lower: Option<&ClusteringBound>,
    upper: Option<&ClusteringBound>,
) -> Vec<Slice> {
    let side = |b: Option<&ClusteringBound>, lower: bool| match b {
        Some(b) if !b.values.is_empty() => one_side(types, b, lower),
        _ => vec![Slice::all()],
    };
    intersect(types, &side(lower, true), &side(upper, false))
}

/// The slices of the rows on one side of `b` (`lower`: at or above it).
fn one_side(types: &[CqlType], b: &ClusteringBound, lower: bool) -> Vec<Slice> {
    let v = &b.values[..b.values.len().min(types.len())];
    let bound = |k: usize, inclusive| {
        Some(ClusteringBound {
            values: v[..k].to_vec(),
            inclusive,
        })
    };
    // The start (or end) of the rows with prefix v[..k]: the whole
    // partition's for the empty prefix.
    let whole = |k: usize| if k == 0 { None } else { bound(k, true) };
    let mut parts = Vec::with_capacity(v.len() + 1);
    for (i, ty) in types.iter().enumerate().take(v.len()) {
        // Within the rows of prefix v[..i], those whose column i is beyond
        // v[i] (above it for a lower bound): after the rows of v[..=i] in
        // clustering order, unless the column is descending.
        if lower != ty.is_reversed() {
            parts.push(Slice {
                start: bound(i + 1, false),
                end: whole(i),
            });
        } else {
            parts.push(Slice {
                start: whole(i),
                end: bound(i + 1, false),
            });
        }
    }
    if b.inclusive {
        parts.push(Slice {
            start: bound(v.len(), true),
            end: bound(v.len(), true),
        });
    }
    parts.sort_by(|x, y| cmp_starts(types, x, y));
    join_touching(types, parts)
}

/// Starts in clustering order (`None`: the partition's start).
fn cmp_starts(types: &[CqlType], a: &Slice, b: &Slice) -> Ordering {
    match (a.start_prefix(), b.start_prefix()) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(x), Some(y)) => compare_clustering(types, &x, &y),
    }
}

/// Ends in clustering order (`None`: the partition's end).
fn cmp_ends(types: &[CqlType], a: &Slice, b: &Slice) -> Ordering {
    match (a.end_prefix(), b.end_prefix()) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Greater,
        (Some(_), None) => Ordering::Less,
        (Some(x), Some(y)) => compare_clustering(types, &x, &y),
    }
}

/// True when `a` ends at or after where `b` starts: nothing lies between.
fn reaches(types: &[CqlType], a: &Slice, b: &Slice) -> bool {
    match (a.end_prefix(), b.start_prefix()) {
        (Some(e), Some(s)) => compare_clustering(types, &e, &s) != Ordering::Less,
        _ => true,
    }
}

/// Sorted slices, with those that overlap or touch made one.
fn join_touching(types: &[CqlType], parts: Vec<Slice>) -> Vec<Slice> {
    let mut out: Vec<Slice> = Vec::with_capacity(parts.len());
    for s in parts {
        if s.is_empty(types) {
            continue;
        }
        match out.last_mut() {
            Some(last) if reaches(types, last, &s) => {
                if cmp_ends(types, &s, last) == Ordering::Greater {
                    last.end = s.end;
                }
            }
            _ => out.push(s),
        }
    }
    out
}

/// The slices both sorted, disjoint lists cover.
fn intersect(types: &[CqlType], a: &[Slice], b: &[Slice]) -> Vec<Slice> {
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < a.len() && j < b.len() {
        let (x, y) = (&a[i], &b[j]);
        let start = match cmp_starts(types, x, y) {
            Ordering::Less => y.start.clone(),
            _ => x.start.clone(),
        };
        let x_first = cmp_ends(types, x, y) != Ordering::Greater;
        let end = if x_first {
            x.end.clone()
        } else {
            y.end.clone()
        };
        let s = Slice { start, end };
        if !s.is_empty(types) {
            out.push(s);
        }
        if x_first {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// The one slice from the first slice's start to the last one's end: what
/// a merged read asks of each sstable's metadata and index.
pub fn hull(slices: &[Slice]) -> Slice {
    Slice {
        start: slices.first().and_then(|s| s.start.clone()),
        end: slices.last().and_then(|s| s.end.clone()),
    }
}

/// One read of one slice of a partition, given the rows still allowed.
pub type ReadOne<'r, E> =
    dyn FnMut(&Slice, Option<u64>, &mut Visitor<'_, E>) -> Result<ReadPlan, E> + 'r;

/// Read one partition as `slices` (sorted, disjoint; the last one first
/// when `reverse`), one [`BoundedReader`](super::BoundedReader) or
/// [`ReversedReader`](super::ReversedReader) read each through `read`
/// (given the slice, the rows still allowed and the visitor), as one
/// partition: its header and static row once, then each slice's rows and
/// markers (each clipped to its slice), then its end. `limit` counts the
/// rows of all slices. The plans are summed.
pub fn read_slices<E>(
    slices: &[Slice],
    reverse: bool,
    limit: Option<u64>,
    f: &mut Visitor<'_, E>,
    read: &mut ReadOne<'_, E>,
) -> Result<ReadPlan, E> {
    let mut total = ReadPlan::default();
    let mut end = None;
    let order: Box<dyn Iterator<Item = &Slice>> = if reverse {
        Box::new(slices.iter().rev())
    } else {
        Box::new(slices.iter())
    };
    for (n, s) in order.enumerate() {
        let left = limit.map(|l| l.saturating_sub(total.rows));
        if n > 0 && left == Some(0) {
            break;
        }
        let inner: &mut Visitor<'_, E> = &mut |ev| match ev {
            Fragment::PartitionStart { .. } | Fragment::StaticRow(_) if n > 0 => Ok(()),
            Fragment::PartitionEnd { position } => {
                end = Some(position);
                Ok(())
            }
            ev => f(ev),
        };
        let plan = read(s, left, inner)?;
        total.add(&plan);
    }
    if let Some(position) = end {
        f(Fragment::PartitionEnd { position })?;
    }
    Ok(total)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::types::Native;
    use proptest::prelude::*;

    fn int(v: i32) -> Option<Vec<u8>> {
        Some(v.to_be_bytes().to_vec())
    }

    fn types(desc: &[bool]) -> Vec<CqlType> {
        desc.iter()
            .map(|&d| {
                if d {
                    CqlType::Reversed(Box::new(CqlType::Native(Native::Int)))
                } else {
                    CqlType::Native(Native::Int)
                }
            })
            .collect()
    }

    /// Whether `row` is in `slice`, by the clustering comparator.
    fn in_slice(types: &[CqlType], s: &Slice, row: &[i32]) -> bool {
        let vals: Vec<Vec<u8>> = row.iter().map(|v| v.to_be_bytes().to_vec()).collect();
        let p = crate::clustering::ClusteringPrefix {
            kind: crate::clustering::BoundKind::Clustering,
            values: vals.iter().map(|v| Some(v.as_slice())).collect(),
        };
        s.start_prefix()
            .is_none_or(|b| compare_clustering(types, &b, &p) == Ordering::Less)
            && s.end_prefix()
                .is_none_or(|b| compare_clustering(types, &p, &b) == Ordering::Less)
    }

    /// CQL's tuple comparison of a row with a bound's values (a prefix).
    fn cmp_values(row: &[i32], b: &[i32]) -> Ordering {
        row[..b.len()].cmp(b)
    }

    fn wanted(
        row: &[i32],
        lower: &Option<(Vec<i32>, bool)>,
        upper: &Option<(Vec<i32>, bool)>,
    ) -> bool {
        let lo = lower
            .as_ref()
            .is_none_or(|(b, incl)| match cmp_values(row, b) {
                Ordering::Greater => true,
                Ordering::Equal => *incl,
                Ordering::Less => false,
            });
        let hi = upper
            .as_ref()
            .is_none_or(|(b, incl)| match cmp_values(row, b) {
                Ordering::Less => true,
                Ordering::Equal => *incl,
                Ordering::Greater => false,
            });
        lo && hi
    }

    fn bound(b: &Option<(Vec<i32>, bool)>) -> Option<ClusteringBound> {
        b.as_ref().map(|(v, incl)| ClusteringBound {
            values: v.iter().map(|&x| int(x)).collect(),
            inclusive: *incl,
        })
    }

    #[test]
    fn mixed_orders_give_two_slices_in_clustering_order() {
        // (c1 ASC, c2 DESC), (c1, c2) >= (1, 5): c1 = 1 with c2 >= 5 (first
        // within c1 = 1), then c1 > 1.
        let t = types(&[false, true]);
        let lo = bound(&Some((vec![1, 5], true)));
        let s = value_slices(&t, lo.as_ref(), None);
        assert_eq!(s.len(), 2, "{s:?}");
        assert_eq!(s[0].start, bound(&Some((vec![1], true))));
        assert_eq!(s[0].end, bound(&Some((vec![1, 5], true))));
        assert_eq!(s[1].start, bound(&Some((vec![1], false))));
        assert_eq!(s[1].end, None);
    }

    #[test]
    fn one_order_gives_the_swapped_single_slice() {
        let t = types(&[true, true]);
        let lo = bound(&Some((vec![1, 5], false)));
        let hi = bound(&Some((vec![3], true)));
        let s = value_slices(&t, lo.as_ref(), hi.as_ref());
        assert_eq!(
            s,
            vec![Slice {
                start: hi.clone(),
                end: lo.clone()
            }]
        );
    }

    #[test]
    fn inverted_bounds_give_nothing() {
        let t = types(&[false, true]);
        let lo = bound(&Some((vec![2, 1], true)));
        let hi = bound(&Some((vec![1, 9], true)));
        assert!(value_slices(&t, lo.as_ref(), hi.as_ref()).is_empty());
    }

    fn a_bound() -> impl Strategy<Value = Option<(Vec<i32>, bool)>> {
        proptest::option::of((proptest::collection::vec(0..4i32, 1..=3), any::<bool>()))
    }

    proptest! {
        /// Every row of a small grid is in one of the slices exactly when
        /// CQL's tuple comparison selects it, the slices are disjoint and
        /// in clustering order, and none is empty.
        #[test]
        fn slices_hold_exactly_the_rows_the_values_select(
            desc in proptest::collection::vec(any::<bool>(), 3),
            lower in a_bound(),
            upper in a_bound(),
        ) {
            let t = types(&desc);
            let s = value_slices(&t, bound(&lower).as_ref(), bound(&upper).as_ref());
            for w in s.windows(2) {
                prop_assert!(!reaches(&t, &w[0], &w[1]), "{:?} touches {:?}", w[0], w[1]);
            }
            for x in &s {
                prop_assert!(!x.is_empty(&t));
            }
            for a in -1..5 {
                for b in -1..5 {
                    for c in -1..5 {
                        let row = [a, b, c];
                        let n = s.iter().filter(|x| in_slice(&t, x, &row)).count();
                        prop_assert_eq!(
                            n,
                            usize::from(wanted(&row, &lower, &upper)),
                            "row {:?} in {:?}", row, s
                        );
                    }
                }
            }
        }
    }
}
