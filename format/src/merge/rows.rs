//! The pieces of a merged row: its cells, flags and header, and the
//! reconciliation of row versions on their borrowed cells.

use crate::data::model::{cell_flags, flags};
use crate::data::{Cell, ColumnData, LivenessInfo, Row, RowDeletion, RowFlags};
use crate::deletion::DeletionTime;
use crate::error::Result;

use super::reconcile::{deletes, liveness_supersedes, max_deletion, supersedes, Winner};

use super::{MCell, Merger};

/// The reconciled cell of `a` and `b` (`a` from an earlier source).
pub(super) fn pick(a: MCell, b: MCell) -> MCell {
    match super::reconcile::reconcile_cells(&a, &b) {
        Winner::Left => a,
        Winner::Right => b,
        Winner::Merged { value, timestamp } => MCell {
            flags: a.flags
                & !(cell_flags::IS_EXPIRING | cell_flags::IS_DELETED)
                & !cell_flags::HAS_EMPTY_VALUE,
            timestamp,
            local_deletion_time: None,
            ttl: None,
            path: a.path,
            value,
            counter_column: true,
        },
    }
}

// ------------------------------------------------------------------- views

/// The flags of a merged row, rebuilt from what it holds.
pub(super) fn merged_flags(
    is_static: bool,
    liveness: Option<LivenessInfo>,
    deletion: Option<RowDeletion>,
    scylla: Option<DeletionTime>,
    complex_deletion: bool,
) -> RowFlags {
    let mut f = 0u8;
    let mut ext = 0u8;
    if is_static {
        ext |= flags::EXT_IS_STATIC;
    }
    if let Some(l) = liveness {
        f |= flags::HAS_TIMESTAMP;
        if l.ttl.is_some() {
            f |= flags::HAS_TTL;
        }
    }
    if let Some(d) = deletion {
        f |= flags::HAS_DELETION;
        if d.shadowable {
            ext |= flags::EXT_HAS_SHADOWABLE_DELETION;
        }
    }
    if scylla.is_some() {
        ext |= flags::EXT_HAS_SCYLLA_SHADOWABLE_DELETION;
    }
    if complex_deletion {
        f |= flags::HAS_COMPLEX_DELETION;
    }
    if ext != 0 {
        f |= flags::EXTENSION_FLAG;
    }
    RowFlags { flags: f, ext }
}

/// The row marker, row deletion and Scylla shadowable deletion that win
/// among a row's versions (each given as `(liveness, deletion, scylla)`),
/// as `Row.Merger` picks them; `active` becomes the row deletion when that
/// is newer, and a marker it deletes is dropped.
pub(super) fn row_header(
    versions: impl Iterator<
        Item = (
            Option<LivenessInfo>,
            Option<RowDeletion>,
            Option<DeletionTime>,
        ),
    >,
    active: &mut DeletionTime,
) -> (
    Option<LivenessInfo>,
    Option<RowDeletion>,
    Option<DeletionTime>,
) {
    let mut liveness: Option<LivenessInfo> = None;
    let mut deletion: Option<RowDeletion> = None;
    let mut scylla: Option<DeletionTime> = None;
    for (l, d, sd) in versions {
        if let Some(l) = l {
            if liveness.is_none_or(|cur| liveness_supersedes(&l, &cur)) {
                liveness = Some(l);
            }
        }
        if let Some(d) = d {
            if deletion.is_none_or(|cur| supersedes(&d.time, &cur.time)) {
                deletion = Some(d);
            }
        }
        if let Some(d) = sd {
            scylla = Some(scylla.map_or(d, |cur| max_deletion(cur, d)));
        }
    }
    // A shadowable deletion is undone by a newer row marker.
    if let (Some(d), Some(l)) = (deletion, liveness) {
        if d.shadowable && l.timestamp > d.time.marked_for_delete_at {
            deletion = None;
        }
    }
    match deletion {
        Some(d) if supersedes(&d.time, active) => *active = d.time,
        _ => deletion = None,
    }
    if liveness.is_some_and(|l| deletes(active, l.timestamp)) {
        liveness = None;
    }
    (liveness, deletion, scylla)
}

/// [`Merger::merge_rows`] of the versions of a clustered row decoded from
/// their sources (`rows`, in source order; simple, non-counter columns), on
/// their borrowed cells. The merged row takes the first version's clustering.
pub(super) fn merge_borrowed<'a>(
    rows: &mut [Row<'a>],
    mut active: DeletionTime,
    mut cells: Vec<ColumnData<'a>>,
    buf: &mut Vec<(usize, usize, usize)>,
) -> Result<Option<Row<'a>>> {
    // The row-relative flags no longer apply: every field is explicit.
    let plain = |c: &Cell<'a>| Cell {
        flags: c.flags & !(cell_flags::USE_ROW_TIMESTAMP | cell_flags::USE_ROW_TTL),
        ..*c
    };
    let simple = |cd: &ColumnData<'a>| match cd {
        ColumnData::Simple { column, cell } => Ok((*column, *cell)),
        ColumnData::Complex { .. } => Err(Merger::unexpected(
            "a complex column in a row reconciled on borrowed cells",
        )),
    };
    cells.clear();
    let (liveness, deletion, scylla) = if let ([r], true) = (&*rows, active.is_live()) {
        // One version, nothing to shadow it: as it is, unless empty.
        for cd in &r.cells {
            let (column, cell) = simple(cd)?;
            cells.push(ColumnData::Simple {
                column,
                cell: plain(&cell),
            });
        }
        if r.liveness.is_none() && r.deletion.is_none() && cells.is_empty() {
            return Ok(None);
        }
        (r.liveness, r.deletion, r.scylla_shadowable_deletion)
    } else {
        let (liveness, deletion, scylla) = row_header(
            rows.iter()
                .map(|r| (r.liveness, r.deletion, r.scylla_shadowable_deletion)),
            &mut active,
        );
        // Every version's cells by column; a column's versions stay in source order.
        buf.clear();
        for (v, r) in rows.iter().enumerate() {
            for (k, cd) in r.cells.iter().enumerate() {
                buf.push((cd.column().index, v, k));
            }
        }
        buf.sort_by_key(|e| e.0);
        let mut at = 0;
        while let Some(&(col, v, k)) = buf.get(at) {
            let (column, mut best) = simple(&rows[v].cells[k])?;
            at += 1;
            while let Some(&(_, v, k)) = buf.get(at).filter(|e| e.0 == col) {
                let (_, cell) = simple(&rows[v].cells[k])?;
                if !super::reconcile::regular_left_wins(
                    &super::reconcile::Version::of(&best),
                    &super::reconcile::Version::of(&cell),
                ) {
                    best = cell;
                }
                at += 1;
            }
            if !deletes(&active, best.timestamp) {
                cells.push(ColumnData::Simple {
                    column,
                    cell: plain(&best),
                });
            }
        }
        let empty = liveness.is_none() && deletion.is_none() && cells.is_empty();
        if empty && scylla.is_none() {
            return Ok(None);
        }
        (liveness, deletion, scylla)
    };
    let Some(first) = rows.first_mut() else {
        return Ok(None);
    };
    let kind = first.clustering.kind;
    let clustering = std::mem::replace(
        &mut first.clustering,
        crate::clustering::ClusteringPrefix {
            kind,
            values: Vec::new(),
        },
    );
    Ok(Some(Row {
        position: first.position,
        size: first.size,
        clustering,
        flags: merged_flags(false, liveness, deletion, scylla, false),
        row_size: 0,
        prev_unfiltered_size: 0,
        liveness,
        deletion,
        scylla_shadowable_deletion: scylla,
        cells,
    }))
}
