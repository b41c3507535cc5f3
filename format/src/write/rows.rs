//! Serialization of partitions in the row format (`ma`..`oa`, `da`): the
//! inverse of the Data.db decoder, with every timestamp, TTL and deletion
//! time written as a delta against the target serialization header.
//!
//! Flags are recomputed the way C\* `UnfilteredSerializer.serialize` and
//! `Cell.Serializer.serialize` compute them, so a row read from any source
//! is written as Cassandra would write it (`shared/docs/sstable-format.md`
//! §3.3–§3.11); a Scylla shadowable deletion as Scylla's `mx` writer
//! writes it (§13.2), in the versions the caller allows it.

use crate::clustering::{encode_values, BoundKind, ClusteringPrefix};
use crate::cur::{uvint_size, write_uvint};
use crate::data::model::{cell_flags, flags};
use crate::data::{Cell, ColumnData, DataSchema, DeltaBase, LivenessInfo, MarkerDeletion};
use crate::data::{RangeTombstoneMarker, Row};
use crate::deletion::DeletionTime;

/// Delta encoding against the target header's `EncodingStats` (§3.8).
#[derive(Debug, Clone, Copy)]
pub struct Deltas(pub DeltaBase);

impl Deltas {
    /// `SerializationHeader.writeTimestamp`.
    pub fn timestamp(&self, out: &mut Vec<u8>, ts: i64) {
        write_uvint(out, ts.wrapping_sub(self.0.min_timestamp) as u64);
    }

    /// `SerializationHeader.writeLocalDeletionTime`: a 32-bit delta, sign
    /// extended (`writeUnsignedVInt32`).
    pub fn local_deletion_time(&self, out: &mut Vec<u8>, ldt: i64) {
        let d = (ldt.wrapping_sub(self.0.min_local_deletion_time)) as i32;
        write_uvint(out, d as i64 as u64);
    }

    /// `SerializationHeader.writeTTL`.
    pub fn ttl(&self, out: &mut Vec<u8>, ttl: i64) {
        let d = (ttl.wrapping_sub(self.0.min_ttl)) as i32;
        write_uvint(out, d as i64 as u64);
    }

    /// `SerializationHeader.writeDeletionTime`: timestamp then local deletion
    /// time. LIVE is written with the "no deletion time" of the version.
    pub fn deletion(&self, out: &mut Vec<u8>, dt: &DeletionTime) {
        self.timestamp(out, dt.marked_for_delete_at);
        let ldt = if dt.is_live() {
            if self.0.uint_deletion_time {
                u32::MAX as i64
            } else {
                i32::MAX as i64
            }
        } else {
            dt.local_deletion_time
        };
        self.local_deletion_time(out, ldt);
    }
}

/// Reusable scratch buffers of the row encoder (no allocation per row once warm).
#[derive(Debug, Default)]
pub struct RowEncoder {
    body: Vec<u8>,
    values: Vec<usize>,
}

/// True when the liveness is empty (no row marker).
fn liveness_ttl(l: &LivenessInfo) -> Option<(i64, i64)> {
    match (l.ttl, l.local_expiration_time) {
        (Some(t), Some(e)) => Some((t, e)),
        _ => None,
    }
}

impl RowEncoder {
    /// Append a row (static or clustered) to `out`. `prev_size` is the
    /// distance from the previous unfiltered's start (0 for the static row).
    pub fn row(
        &mut self,
        out: &mut Vec<u8>,
        schema: &DataSchema,
        d: &Deltas,
        row: &Row<'_>,
        prev_size: u64,
    ) {
        let is_static = row.is_static();
        let superset = if is_static {
            &schema.static_columns
        } else {
            &schema.regular_columns
        };
        let liveness = row.liveness;
        let deletion = row.deletion;
        let has_complex_deletion = row.cells.iter().any(|c| {
            matches!(
                c,
                ColumnData::Complex {
                    complex_deletion: Some(_),
                    ..
                }
            )
        });
        let all_columns = row.cells.len() == superset.len();
        let mut f = 0u8;
        let mut ext = 0u8;
        if is_static {
            ext |= flags::EXT_IS_STATIC;
        }
        if let Some(dl) = &deletion {
            f |= flags::HAS_DELETION;
            if dl.shadowable {
                ext |= flags::EXT_HAS_SHADOWABLE_DELETION;
            }
        }
        // Scylla's writer (`sstables/mx/writer.cc`, `write_clustered`) flags
        // its shadowable deletion in the extended byte, not in HAS_DELETION.
        if row.scylla_shadowable_deletion.is_some() {
            ext |= flags::EXT_HAS_SCYLLA_SHADOWABLE_DELETION;
        }
        if let Some(l) = &liveness {
            f |= flags::HAS_TIMESTAMP;
            if liveness_ttl(l).is_some() {
                f |= flags::HAS_TTL;
            }
        }
        if all_columns {
            f |= flags::HAS_ALL_COLUMNS;
        }
        if has_complex_deletion {
            f |= flags::HAS_COMPLEX_DELETION;
        }
        if ext != 0 {
            f |= flags::EXTENSION_FLAG;
        }
        out.push(f);
        if ext != 0 {
            out.push(ext);
        }
        if !is_static {
            encode_values(out, &schema.clustering_fixed_lens, &row.clustering.values);
        }

        let body = &mut self.body;
        body.clear();
        if let Some(l) = &liveness {
            d.timestamp(body, l.timestamp);
            if let Some((ttl, exp)) = liveness_ttl(l) {
                d.ttl(body, ttl);
                d.local_deletion_time(body, exp);
            }
        }
        if let Some(dl) = &deletion {
            d.deletion(body, &dl.time);
        }
        // Scylla writes the shadowable deletion right after the regular one.
        if let Some(sd) = &row.scylla_shadowable_deletion {
            d.deletion(body, sd);
        }
        if !all_columns {
            self.values.clear();
            self.values
                .extend(row.cells.iter().map(|c| c.column().index));
            encode_subset(body, &self.values, superset.len());
        }
        for cd in &row.cells {
            match cd {
                ColumnData::Simple { column, cell } => {
                    encode_cell(body, d, cell, liveness.as_ref(), column.fixed_len, false)
                }
                ColumnData::Complex {
                    complex_deletion,
                    cells,
                    ..
                } => {
                    if has_complex_deletion {
                        d.deletion(body, &complex_deletion.unwrap_or(DeletionTime::LIVE));
                    }
                    write_uvint(body, cells.len() as u64);
                    for c in cells {
                        encode_cell(body, d, c, liveness.as_ref(), None, true);
                    }
                }
            }
        }
        write_uvint(out, (body.len() + uvint_size(prev_size)) as u64);
        write_uvint(out, prev_size);
        out.extend_from_slice(body);
    }

    /// Append a range tombstone marker to `out`.
    pub fn marker(
        &mut self,
        out: &mut Vec<u8>,
        schema: &DataSchema,
        d: &Deltas,
        m: &RangeTombstoneMarker<'_>,
        prev_size: u64,
    ) {
        out.push(flags::IS_MARKER);
        encode_bound(out, &schema.clustering_fixed_lens, &m.bound);
        let body = &mut self.body;
        body.clear();
        match m.deletion {
            MarkerDeletion::Bound(t) => d.deletion(body, &t),
            MarkerDeletion::Boundary { end, start } => {
                d.deletion(body, &end);
                d.deletion(body, &start);
            }
        }
        write_uvint(out, (body.len() + uvint_size(prev_size)) as u64);
        write_uvint(out, prev_size);
        out.extend_from_slice(body);
    }
}

/// `ClusteringBoundOrBoundary.Serializer`: kind, size, values.
pub fn encode_bound(out: &mut Vec<u8>, fixed: &[Option<usize>], p: &ClusteringPrefix<'_>) {
    out.push(p.kind.ordinal());
    out.extend_from_slice(&(p.values.len() as u16).to_be_bytes());
    if !p.values.is_empty() {
        encode_values(out, fixed, &p.values);
    }
}

/// `ClusteringPrefix.Serializer` (IndexInfo names, §4.2): kind, then the row
/// form for a clustering, the bound form otherwise.
pub fn encode_prefix(out: &mut Vec<u8>, fixed: &[Option<usize>], p: &ClusteringPrefix<'_>) {
    if p.kind == BoundKind::Clustering {
        out.push(p.kind.ordinal());
        encode_values(out, fixed, &p.values);
    } else {
        encode_bound(out, fixed, p);
    }
}

/// `Columns.Serializer.serializeSubset` for the present column indexes
/// `present` (ascending) of a superset of `n` columns (§3.6).
pub fn encode_subset(out: &mut Vec<u8>, present: &[usize], n: usize) {
    if n < 64 {
        let mut mask: u64 = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
        for &i in present {
            mask &= !(1u64 << i);
        }
        write_uvint(out, mask);
        return;
    }
    let count = present.len();
    write_uvint(out, (n - count) as u64);
    if count < n / 2 {
        for &i in present {
            write_uvint(out, i as u64);
        }
    } else {
        let mut p = present.iter().peekable();
        for i in 0..n {
            if p.peek() == Some(&&i) {
                p.next();
            } else {
                write_uvint(out, i as u64);
            }
        }
    }
}

/// `Cell.Serializer.serialize` (§3.10).
fn encode_cell(
    out: &mut Vec<u8>,
    d: &Deltas,
    c: &Cell<'_>,
    row: Option<&LivenessInfo>,
    fixed_len: Option<usize>,
    complex: bool,
) {
    let deleted = c.is_deleted();
    let expiring = !deleted && c.is_expiring();
    let has_value = !c.value.is_empty();
    let use_row_ts = row.is_some_and(|l| l.timestamp == c.timestamp);
    let use_row_ttl = expiring
        && row.is_some_and(|l| match liveness_ttl(l) {
            Some((ttl, exp)) => Some(ttl) == c.ttl && Some(exp) == c.local_deletion_time,
            None => false,
        });
    let mut f = 0u8;
    if deleted {
        f |= cell_flags::IS_DELETED;
    } else if expiring {
        f |= cell_flags::IS_EXPIRING;
    }
    if !has_value {
        f |= cell_flags::HAS_EMPTY_VALUE;
    }
    if use_row_ts {
        f |= cell_flags::USE_ROW_TIMESTAMP;
    }
    if use_row_ttl {
        f |= cell_flags::USE_ROW_TTL;
    }
    out.push(f);
    if !use_row_ts {
        d.timestamp(out, c.timestamp);
    }
    if (deleted || expiring) && !use_row_ttl {
        d.local_deletion_time(out, c.local_deletion_time.unwrap_or(0));
    }
    if expiring && !use_row_ttl {
        d.ttl(out, c.ttl.unwrap_or(0));
    }
    if complex {
        let p = c.path.unwrap_or(&[]);
        write_uvint(out, p.len() as u64);
        out.extend_from_slice(p);
    }
    if has_value {
        if fixed_len.is_none() {
            write_uvint(out, c.value.len() as u64);
        }
        out.extend_from_slice(c.value);
    }
}

/// The partition header: key (u16 length), then the partition deletion in
/// the version's serializer.
pub fn encode_partition_header(
    out: &mut Vec<u8>,
    schema: &DataSchema,
    key: &[u8],
    deletion: &DeletionTime,
) {
    out.extend_from_slice(&(key.len() as u16).to_be_bytes());
    out.extend_from_slice(key);
    deletion.encode(&schema.features, out);
}
