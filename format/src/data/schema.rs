//! What the row decoder needs to know about the table, derived once from the
//! serialization header (Statistics.db component 3) and the version features.
//!
//! * **Column sets in data order.** Each row encodes its columns against a
//!   superset: the header's static columns for the static row, its regular
//!   columns for every other row. The superset order is C\*'s canonical
//!   `Columns` order — simple columns first, then complex ones — which
//!   [`SerializationHeader::data_order`] reproduces (`shared/docs/sstable-format.md`
//!   §3.6; C\* `o.a.c/db/Columns.java`, Scylla `column_translation::state::build`).
//!   A column's index in that order is what the missing-columns encoding and
//!   [`Column::index`] refer to.
//! * **Fixed value lengths** per clustering and regular column
//!   (`AbstractType.valueLengthIfFixed`, §3.12): fixed-length values carry no
//!   length prefix.
//! * **Delta bases** ([`DeltaBase`]): every timestamp, TTL and local deletion
//!   time inside an unfiltered is an unsigned vint delta against the header's
//!   `EncodingStats` (§3.8; C\* `SerializationHeader.readTimestamp` /
//!   `readTTL` / `readLocalDeletionTime`).

use crate::statistics::{ColumnDef, SerializationHeader};
use crate::types::CqlType;
use crate::version::Features;

/// One column of a row's superset, in data order.
#[derive(Clone, PartialEq)]
pub struct Column {
    /// Index of the column in its set's data order (what the missing-columns
    /// bitmap and the cell order refer to).
    pub index: usize,
    /// The header's definition: name and type.
    pub def: ColumnDef,
    /// True for a complex column (non-frozen collection or UDT): one cell per
    /// element, each with a path.
    pub complex: bool,
    /// True for a `counter` column.
    pub counter: bool,
    /// Fixed serialized value length of the column type, if any (§3.12). For
    /// complex columns this is the collection type's, i.e. always `None`:
    /// element values are length-prefixed (C\* `Cell.Serializer` writes values
    /// with `header.getType(column).writeValue`).
    pub fixed_len: Option<usize>,
}

impl std::fmt::Debug for Column {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Compact: rows print one of these per cell.
        write!(
            f,
            "Column({} {:?}: {})",
            self.index, self.def.name, self.def.type_string
        )
    }
}

impl Column {
    /// Column name (lossily decoded UTF-8).
    pub fn name(&self) -> &str {
        &self.def.name
    }

    /// Column type.
    pub fn ty(&self) -> &CqlType {
        &self.def.ty
    }
}

/// A superset of columns (static or regular) in data order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ColumnSet {
    columns: Vec<Column>,
}

impl ColumnSet {
    /// Build from header columns (any order): stable-partitioned into simple
    /// then complex columns with [`SerializationHeader::data_order`].
    pub fn new(header_columns: &[ColumnDef]) -> ColumnSet {
        let columns = SerializationHeader::data_order(header_columns)
            .into_iter()
            .enumerate()
            .map(|(index, def)| Column {
                index,
                complex: def.ty.is_multi_cell(),
                counter: def.ty.is_counter(),
                fixed_len: def.ty.fixed_len(),
                def,
            })
            .collect();
        ColumnSet { columns }
    }

    /// The columns, in data order.
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// Number of columns.
    pub fn len(&self) -> usize {
        self.columns.len()
    }

    /// True when the set has no column.
    pub fn is_empty(&self) -> bool {
        self.columns.is_empty()
    }

    /// Column `i` in data order.
    pub fn get(&self, i: usize) -> Option<&Column> {
        self.columns.get(i)
    }

    /// The column named `name`, if any.
    pub fn by_name(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.def.name == name)
    }
}

/// The delta bases of one sstable (the header's `EncodingStats`) and the
/// arithmetic that turns stored deltas back into values (§3.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeltaBase {
    /// Base for timestamps (µs).
    pub min_timestamp: i64,
    /// Base for local deletion / expiration times (s), an i32 widened.
    pub min_local_deletion_time: i64,
    /// Base for TTLs (s).
    pub min_ttl: i64,
    /// `oa`+ (`hasUIntDeletionTime`): local deletion times are unsigned 32-bit.
    pub uint_deletion_time: bool,
}

impl DeltaBase {
    /// Timestamp from its stored delta: `min_timestamp + delta`, wrapping i64
    /// (negative deltas are 9-byte vints of a two's-complement value).
    #[inline]
    pub fn timestamp(&self, delta: u64) -> i64 {
        self.min_timestamp.wrapping_add(delta as i64)
    }

    /// TTL from its stored delta: 32-bit wrapping add (`readUnsignedVInt32`
    /// truncates the vint to 32 bits).
    #[inline]
    pub fn ttl(&self, delta: u64) -> i64 {
        (self.min_ttl as i32).wrapping_add(delta as u32 as i32) as i64
    }

    /// Local deletion (or expiration) time from its stored delta.
    ///
    /// `< oa`: i32 wrapping arithmetic, the value is a signed i32 (what the
    /// writer's `int` subtraction inverts). `oa`+: the truncated delta is added
    /// as i64 (C\* 5.0 `readLocalDeletionTime` returns `long`); a negative
    /// result is an overflowed unsigned value and is read back as its low 32
    /// bits, unsigned (C\* `Cell.decodeLocalDeletionTime`).
    #[inline]
    pub fn local_deletion_time(&self, delta: u64) -> i64 {
        let d = delta as u32 as i32;
        if self.uint_deletion_time {
            let v = self.min_local_deletion_time + d as i64;
            if v < 0 {
                v as u32 as i64
            } else {
                v
            }
        } else {
            (self.min_local_deletion_time as i32).wrapping_add(d) as i64
        }
    }
}

/// Everything the Data.db decoder needs about the table, in decode-ready form.
#[derive(Debug, Clone, PartialEq)]
pub struct DataSchema {
    /// Clustering column types, in clustering order.
    pub clustering_types: Vec<CqlType>,
    /// Fixed lengths of the clustering columns (`None` = vint length prefix).
    pub clustering_fixed_lens: Vec<Option<usize>>,
    /// Static columns (superset of the static row), data order.
    pub static_columns: ColumnSet,
    /// Regular columns (superset of every other row), data order.
    pub regular_columns: ColumnSet,
    /// Delta bases for timestamps, TTLs and deletion times.
    pub deltas: DeltaBase,
    /// Version features (DeletionTime serializer, ...).
    pub features: Features,
}

impl DataSchema {
    /// Derive the decoder's view of the table from the serialization header.
    pub fn new(header: &SerializationHeader, features: Features) -> DataSchema {
        DataSchema {
            clustering_types: header.clustering_types.clone(),
            clustering_fixed_lens: header.clustering_fixed_lens(),
            static_columns: ColumnSet::new(&header.static_columns),
            regular_columns: ColumnSet::new(&header.regular_columns),
            deltas: DeltaBase {
                min_timestamp: header.min_timestamp,
                min_local_deletion_time: header.min_local_deletion_time,
                min_ttl: header.min_ttl,
                uint_deletion_time: features.uint_deletion_time,
            },
            features,
        }
    }

    /// True when every partition starts with a static row (§3.1: present iff
    /// the header lists a static column, even when empty).
    pub fn has_static_row(&self) -> bool {
        !self.static_columns.is_empty()
    }

    /// Number of clustering columns.
    pub fn clustering_len(&self) -> usize {
        self.clustering_fixed_lens.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base(uint: bool) -> DeltaBase {
        DeltaBase {
            min_timestamp: 1_000,
            min_local_deletion_time: 1_500_000_000,
            min_ttl: 10,
            uint_deletion_time: uint,
        }
    }

    #[test]
    fn delta_arithmetic() {
        let b = base(false);
        assert_eq!(b.timestamp(5), 1_005);
        // A negative delta is a 9-byte vint of the two's complement.
        assert_eq!(b.timestamp((-7i64) as u64), 993);
        assert_eq!(b.ttl(0), 10);
        assert_eq!(b.ttl((-3i64) as u64), 7);
        assert_eq!(b.local_deletion_time(100), 1_500_000_100);
        // Legacy: i32 wrap-around.
        assert_eq!(
            b.local_deletion_time(700_000_000),
            (1_500_000_000i32).wrapping_add(700_000_000) as i64
        );
        assert!(b.local_deletion_time(700_000_000) < 0);
        // oa: the same delta reads as an unsigned 32-bit time past 2038.
        let b = base(true);
        assert_eq!(b.local_deletion_time(700_000_000), 2_200_000_000);
        // oa: a delta that overflows i32 wraps to the unsigned value.
        let want: i64 = 4_000_000_000;
        let delta = (want - 1_500_000_000) as u64; // 2.5e9: > i32::MAX
        assert_eq!(b.local_deletion_time(delta), want);
    }
}
