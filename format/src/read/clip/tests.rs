//! The shared clipper against a model: random well-formed streams over one
//! `int` column, clipped forward and reversed, with and without a row limit.

use super::*;
use crate::read::ClusteringBound;
use crate::types::Native;
use proptest::prelude::*;

/// Width of the streams (clusterings `0..N`).
const N: usize = 12;

fn del(t: i64) -> DeletionTime {
    DeletionTime {
        marked_for_delete_at: t,
        local_deletion_time: 1,
    }
}

/// An element of a stream, forward kinds: a row at a clustering, or a
/// marker that closes `close` and opens `open`.
#[derive(Debug, Clone, Copy, PartialEq)]
enum El {
    Row(i32),
    Marker {
        kind: BoundKind,
        at: i32,
        open: Option<DeletionTime>,
        close: Option<DeletionTime>,
    },
}

/// An element as the output carries it: kinds in the reading direction.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Out {
    Row(i32),
    Marker {
        kind: BoundKind,
        at: i32,
        open: Option<DeletionTime>,
        close: Option<DeletionTime>,
        synthetic: bool,
    },
    /// The marker a row limit closes at the last row.
    Cut {
        at: i32,
        close: DeletionTime,
    },
}

/// The well-formed forward stream whose clustering `v` is deleted by
/// `cover[v]` (0: live) and has a row when `rows[v]`; a change of deletion
/// between `v - 1` and `v` is a marker after `v - 1` when `after[v]`.
fn stream(cover: &[u8], rows: &[bool], after: &[bool]) -> Vec<El> {
    let d = |c: u8| (c > 0).then(|| del(i64::from(c)));
    let mut out = Vec::new();
    let mut prev = None;
    for v in 0..N {
        let cur = d(cover[v]);
        if cur != prev {
            let before = !(after[v] && v > 0);
            let at = if before { v } else { v - 1 } as i32;
            let kind = match (prev.is_some(), cur.is_some(), before) {
                (false, _, true) => BoundKind::InclStartBound,
                (false, _, false) => BoundKind::ExclStartBound,
                (true, false, true) => BoundKind::ExclEndBound,
                (true, false, false) => BoundKind::InclEndBound,
                (true, true, true) => BoundKind::ExclEndInclStartBoundary,
                (true, true, false) => BoundKind::InclEndExclStartBoundary,
            };
            out.push(El::Marker {
                kind,
                at,
                open: cur,
                close: prev,
            });
        }
        if rows[v] {
            out.push(El::Row(v as i32));
        }
        prev = cur;
    }
    if prev.is_some() {
        out.push(El::Marker {
            kind: BoundKind::InclEndBound,
            at: N as i32 - 1,
            open: None,
            close: prev,
        });
    }
    out
}

/// A position on a line where clustering `a` is `4a` and a bound kind lies
/// just before (`4a - 1`) or just after (`4a + 1`) it; forward kinds.
fn pos(kind: BoundKind, at: i32) -> i32 {
    let side = match kind {
        BoundKind::Clustering | BoundKind::StaticClustering => 0,
        BoundKind::InclStartBound
        | BoundKind::ExclEndBound
        | BoundKind::ExclEndInclStartBoundary => -1,
        BoundKind::ExclStartBound
        | BoundKind::InclEndBound
        | BoundKind::InclEndExclStartBoundary => 1,
    };
    4 * at + side
}

fn bound(b: Option<(i32, bool)>) -> Option<ClusteringBound> {
    b.map(|(v, inclusive)| ClusteringBound {
        values: vec![Some(v.to_be_bytes().to_vec())],
        inclusive,
    })
}

fn int_of(values: &[Option<&[u8]>]) -> i32 {
    i32::from_be_bytes(values[0].unwrap().try_into().unwrap())
}

/// Clip `input` (forward) to `slice` with a bounded read's loop: elements
/// in the reading direction, the first one past the slice stops it.
fn clip<O: Order + ?Sized>(
    order: &O,
    slice: &Slice,
    input: &[El],
    reversed: bool,
    closes: Closes,
    limit: usize,
) -> Vec<Out> {
    let mut c = Clipper::new(order, Some(slice), reversed, closes);
    let edge = |e: Edge<'_, '_>| {
        let opens = e.kind.is_start();
        Out::Marker {
            kind: e.kind,
            at: int_of(e.values),
            open: opens.then_some(e.deletion),
            close: (!opens).then_some(e.deletion),
            synthetic: true,
        }
    };
    let mut out = Vec::new();
    let mut rows = 0;
    let walk: Vec<El> = if reversed {
        input.iter().rev().copied().collect()
    } else {
        input.to_vec()
    };
    for el in walk {
        let (kind, at) = match el {
            El::Row(v) => (BoundKind::Clustering, v),
            El::Marker { kind, at, .. } => (kind, at),
        };
        let bytes = at.to_be_bytes();
        let p = ClusteringPrefix {
            kind,
            values: vec![Some(&bytes[..])],
        };
        let place = c.place(&p);
        if place == Place::Past {
            break;
        }
        if place == Place::Inside {
            out.extend(c.begin().map(edge));
        }
        match el {
            El::Row(v) if place == Place::Inside => {
                out.push(Out::Row(v));
                rows += 1;
                if rows >= limit {
                    if let Some(e) = c.cut(&p.values) {
                        out.push(Out::Cut {
                            at: int_of(e.values),
                            close: e.deletion,
                        });
                    }
                    return out;
                }
            }
            El::Row(_) => {}
            El::Marker { open, close, .. } => {
                let inside = place == Place::Inside;
                if inside {
                    let (kind, open, close) = if reversed {
                        (kind.reversed(), close, open)
                    } else {
                        (kind, open, close)
                    };
                    out.push(Out::Marker {
                        kind,
                        at,
                        open,
                        close,
                        synthetic: false,
                    });
                }
                c.marker(open, close, inside);
            }
        }
    }
    out.extend(c.end().into_iter().flatten().map(edge));
    out
}

/// Check `out`, the clip of the stream of `cover` and `rows` to the slice
/// `lower`..`upper`: nothing outside the slice, synthetic markers only at
/// its edges, the deletion open in the output after each element the
/// input's there (inside the slice; none outside), every range closed, and
/// the rows of the slice (the first `limit` in the reading direction).
#[allow(clippy::too_many_arguments)]
fn check(
    out: &[Out],
    input: &[El],
    cover: &[u8],
    rows: &[bool],
    lower: Option<(i32, bool)>,
    upper: Option<(i32, bool)>,
    reversed: bool,
    limit: usize,
) -> std::result::Result<(), TestCaseError> {
    let d = |c: u8| (c > 0).then(|| del(i64::from(c)));
    let lo = lower.map_or(i32::MIN, |(v, incl)| 4 * v + if incl { -1 } else { 1 });
    let hi = upper.map_or(i32::MAX, |(v, incl)| 4 * v + if incl { 1 } else { -1 });
    // The input's deletion just past position `p`, in the reading direction.
    let markers: Vec<(i32, Option<DeletionTime>, Option<DeletionTime>)> = input
        .iter()
        .filter_map(|e| match *e {
            El::Marker {
                kind,
                at,
                open,
                close,
            } => Some((pos(kind, at), open, close)),
            El::Row(_) => None,
        })
        .collect();
    let input_after = |p: i32| {
        if reversed {
            markers.iter().find(|m| m.0 >= p).and_then(|m| m.2)
        } else {
            markers.iter().rev().find(|m| m.0 <= p).and_then(|m| m.1)
        }
    };
    let beyond_inside = |p: i32| {
        if reversed {
            lo < p && p <= hi
        } else {
            lo <= p && p < hi
        }
    };
    let mut open: Option<DeletionTime> = None;
    let mut got_rows = Vec::new();
    for (i, o) in out.iter().enumerate() {
        match *o {
            Out::Row(v) => {
                let p = 4 * v;
                prop_assert!(lo < p && p < hi, "row {v} outside the slice: {out:?}");
                prop_assert_eq!(open, d(cover[v as usize]), "at row {}: {:?}", v, out);
                got_rows.push(v);
            }
            Out::Marker {
                kind,
                at,
                open: o_open,
                close,
                synthetic,
            } => {
                let fwd = if reversed { kind.reversed() } else { kind };
                let p = pos(fwd, at);
                if synthetic {
                    prop_assert!(p == lo || p == hi, "synthetic off the edges: {out:?}");
                } else {
                    prop_assert!(lo < p && p < hi, "marker outside the slice: {out:?}");
                }
                if let Some(c) = close {
                    prop_assert_eq!(Some(c), open, "closes what is not open: {:?}", out);
                }
                prop_assert!(close.is_some() || open.is_none(), "opens over {out:?}");
                open = o_open;
                let want = if beyond_inside(p) {
                    input_after(p)
                } else {
                    None
                };
                prop_assert_eq!(open, want, "after marker {}: {:?}", i, out);
            }
            Out::Cut { at, close } => {
                prop_assert_eq!(Some(close), open, "cut closes what is not open: {:?}", out);
                prop_assert_eq!(Some(at), got_rows.last().copied(), "cut off the last row");
                open = None;
            }
        }
    }
    prop_assert_eq!(open, None, "left open: {:?}", out);
    let mut want: Vec<i32> = (0..N as i32)
        .filter(|&v| rows[v as usize] && lo < 4 * v && 4 * v < hi)
        .collect();
    if reversed {
        want.reverse();
    }
    want.truncate(limit);
    prop_assert_eq!(got_rows, want);
    Ok(())
}

fn edge_bound() -> impl Strategy<Value = Option<(i32, bool)>> {
    proptest::option::of((-1..=N as i32, any::<bool>()))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn clipped_streams_hold_the_slice_and_its_deletions(
        cover in proptest::collection::vec(0u8..3, N),
        rows in proptest::collection::vec(any::<bool>(), N),
        after in proptest::collection::vec(any::<bool>(), N),
        lower in edge_bound(),
        upper in edge_bound(),
        reversed in any::<bool>(),
        output in any::<bool>(),
        limit in prop_oneof![Just(usize::MAX), 1usize..4],
    ) {
        let types = vec![CqlType::Native(Native::Int)];
        let slice = Slice { start: bound(lower), end: bound(upper) };
        prop_assume!(!slice.is_empty(&types));
        let input = stream(&cover, &rows, &after);
        let closes = if output { Closes::Output } else { Closes::Input };
        let by_types = clip(types.as_slice(), &slice, &input, reversed, closes, limit);
        check(&by_types, &input, &cover, &rows, lower, upper, reversed, limit)?;
        let cmp = ClusteringComparator::new(types.clone());
        let by_cmp = clip(&cmp, &slice, &input, reversed, closes, limit);
        prop_assert_eq!(by_cmp, by_types);
    }
}

#[test]
fn a_range_over_the_whole_slice_is_cut_at_both_edges() {
    let types = vec![CqlType::Native(Native::Int)];
    let slice = Slice {
        start: bound(Some((3, true))),
        end: bound(Some((5, false))),
    };
    let mut cover = [0u8; N];
    cover[1..9].fill(1);
    let input = stream(&cover, &[false; N], &[false; N]);
    for reversed in [false, true] {
        let out = clip(
            types.as_slice(),
            &slice,
            &input,
            reversed,
            Closes::Input,
            usize::MAX,
        );
        let (first, last) = if reversed { (5, 3) } else { (3, 5) };
        let (open_kind, close_kind) = if reversed {
            (BoundKind::ExclStartBound, BoundKind::InclEndBound)
        } else {
            (BoundKind::InclStartBound, BoundKind::ExclEndBound)
        };
        let m = |kind, at, open, close| Out::Marker {
            kind,
            at,
            open,
            close,
            synthetic: true,
        };
        assert_eq!(
            out,
            vec![
                m(open_kind, first, Some(del(1)), None),
                m(close_kind, last, None, Some(del(1))),
            ],
            "reversed {reversed}"
        );
    }
}
