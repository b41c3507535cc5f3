//! The serialization header (Statistics.db component 3, `ma`+): the encoding
//! stats that every delta in Data.db is relative to, and the table's column
//! types.
//!
//! | field | encoding |
//! |---|---|
//! | min_timestamp | uvint, + `TIMESTAMP_EPOCH` (1442880000000000 µs) |
//! | min_local_deletion_time | uvint, + `DELETION_TIME_EPOCH` (1442880000 s), 32-bit |
//! | min_ttl | uvint |
//! | partition key type | vint-bytes type string |
//! | clustering types | uvint count + vint-bytes × count |
//! | static columns | uvint count + (name vint-bytes, type vint-bytes) × count |
//! | regular columns | uvint count + (name vint-bytes, type vint-bytes) × count |
//!
//! Source: Cassandra `o.a.c/db/SerializationHeader.java` (`Serializer`),
//! `o.a.c/db/rows/EncodingStats.java`; `shared/docs/sstable-format.md` §6.5.
//!
//! NOTE: the header may list columns in another order than Data.db uses.
//! Data.db orders each column set simple-first, then complex, each group in
//! the header's order (Cassandra rebuilds `Columns` sorted by name bytes; the
//! stable partition of the header list gives the same order for files
//! Cassandra wrote, and Scylla does exactly this — §3.6). Use
//! [`SerializationHeader::data_order`] for decoding.

use crate::cur::Cur;
use crate::error::Result;
use crate::types::CqlType;

/// `EncodingStats.TIMESTAMP_EPOCH`: 2015-09-22T00:00:00Z in microseconds.
pub const TIMESTAMP_EPOCH: i64 = 1_442_880_000_000_000;
/// `EncodingStats.DELETION_TIME_EPOCH`: 2015-09-22T00:00:00Z in seconds.
pub const DELETION_TIME_EPOCH: i64 = 1_442_880_000;

/// One column of the header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnDef {
    /// Column name (UTF-8 bytes in the file; lossily decoded).
    pub name: String,
    /// Raw name bytes as stored.
    pub name_bytes: Vec<u8>,
    /// Parsed type.
    pub ty: CqlType,
    /// The type string as stored.
    pub type_string: String,
}

/// The decoded serialization header.
#[derive(Debug, Clone, PartialEq)]
pub struct SerializationHeader {
    /// Base for timestamp deltas (µs).
    pub min_timestamp: i64,
    /// Base for local-deletion-time deltas (s), as a 32-bit value widened.
    pub min_local_deletion_time: i64,
    /// Base for TTL deltas (s).
    pub min_ttl: i64,
    /// The stored (epoch-relative) deltas, for display: timestamp, ldt, ttl.
    pub raw_deltas: (u64, u64, u64),
    /// Partition key type (a `CompositeType` for multi-column keys).
    pub partition_key_type: CqlType,
    /// Partition key type string as stored.
    pub partition_key_type_string: String,
    /// Clustering column types, in clustering order.
    pub clustering_types: Vec<CqlType>,
    /// Clustering type strings as stored.
    pub clustering_type_strings: Vec<String>,
    /// Static columns in header order.
    pub static_columns: Vec<ColumnDef>,
    /// Regular columns in header order.
    pub regular_columns: Vec<ColumnDef>,
}

fn columns(cur: &mut Cur<'_>, what: &'static str) -> Result<Vec<ColumnDef>> {
    let n = cur.uvint(what)?;
    // Each column takes at least two bytes (two empty vint-bytes).
    let n = cur.count(n, 2, what)?;
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        let name_bytes = cur.vint_bytes("column name")?.to_vec();
        let at = cur.abs_offset();
        let ts = String::from_utf8_lossy(cur.vint_bytes("column type")?).into_owned();
        let ty = CqlType::parse(&ts).map_err(|e| crate::Error {
            offset: Some(at),
            component: Some(cur.component()),
            ..e
        })?;
        v.push(ColumnDef {
            name: String::from_utf8_lossy(&name_bytes).into_owned(),
            name_bytes,
            ty,
            type_string: ts,
        });
    }
    Ok(v)
}

impl SerializationHeader {
    /// Decode the header from a cursor positioned at its first byte.
    ///
    /// The local-deletion-time base is computed the `< oa` way (32-bit
    /// wrapping); use [`SerializationHeader::parse_versioned`] when the
    /// version is known.
    pub fn parse(cur: &mut Cur<'_>) -> Result<SerializationHeader> {
        Self::parse_versioned(cur, false)
    }

    /// Decode the header; `uint_deletion_time` is
    /// [`crate::Features::uint_deletion_time`].
    ///
    /// NOTE: the local-deletion-time base differs by version (§3.8): `< oa`
    /// writers (C\* 3.x/4.x `EncodingStats`) use `int` arithmetic, so
    /// `epoch + delta` wraps at 32 bits; C\* 5.0 (`oa`+) reads
    /// `(long) readUnsignedVInt32() + DELETION_TIME_EPOCH`: the truncated delta
    /// sign-extended, then added as i64 (no wrap; deletion times up to 2106).
    pub fn parse_versioned(
        cur: &mut Cur<'_>,
        uint_deletion_time: bool,
    ) -> Result<SerializationHeader> {
        let ts = cur.uvint("min timestamp delta")?;
        let ldt = cur.uvint("min local deletion time delta")?;
        let ttl = cur.uvint("min ttl delta")?;
        let at = cur.abs_offset();
        let pk = String::from_utf8_lossy(cur.vint_bytes("partition key type")?).into_owned();
        let pk_ty = CqlType::parse(&pk).map_err(|e| crate::Error {
            offset: Some(at),
            component: Some(cur.component()),
            ..e
        })?;
        let n = cur.uvint("clustering count")?;
        let n = cur.count(n, 1, "clustering count")?;
        let mut ck = Vec::with_capacity(n);
        let mut ck_s = Vec::with_capacity(n);
        for _ in 0..n {
            let at = cur.abs_offset();
            let s = String::from_utf8_lossy(cur.vint_bytes("clustering type")?).into_owned();
            ck.push(CqlType::parse(&s).map_err(|e| crate::Error {
                offset: Some(at),
                component: Some(cur.component()),
                ..e
            })?);
            ck_s.push(s);
        }
        let static_columns = columns(cur, "static column count")?;
        let regular_columns = columns(cur, "regular column count")?;
        Ok(SerializationHeader {
            // NOTE: wrapping arithmetic: the deltas are unsigned vints of
            // (value - epoch), so negative values appear as huge u64s (§3.8).
            min_timestamp: TIMESTAMP_EPOCH.wrapping_add(ts as i64),
            min_local_deletion_time: if uint_deletion_time {
                DELETION_TIME_EPOCH + ldt as u32 as i32 as i64
            } else {
                (DELETION_TIME_EPOCH as i32).wrapping_add(ldt as i32) as i64
            },
            min_ttl: ttl as i32 as i64,
            raw_deltas: (ts, ldt, ttl),
            partition_key_type: pk_ty,
            partition_key_type_string: pk,
            clustering_types: ck,
            clustering_type_strings: ck_s,
            static_columns,
            regular_columns,
        })
    }

    /// Columns in the order Data.db uses: simple (non-multi-cell) columns
    /// first, then complex ones, each group in header order (§3.6).
    pub fn data_order(cols: &[ColumnDef]) -> Vec<ColumnDef> {
        let mut v: Vec<ColumnDef> = cols
            .iter()
            .filter(|c| !c.ty.is_multi_cell())
            .cloned()
            .collect();
        v.extend(cols.iter().filter(|c| c.ty.is_multi_cell()).cloned());
        v
    }

    /// Fixed lengths of the clustering columns (for the clustering decoder).
    pub fn clustering_fixed_lens(&self) -> Vec<Option<usize>> {
        self.clustering_types
            .iter()
            .map(CqlType::fixed_len)
            .collect()
    }
}
