//! A tiny byte builder for hand-made Data.db bytes, and header helpers.

use crate::cur::write_uvint;
use crate::statistics::header::{DELETION_TIME_EPOCH, TIMESTAMP_EPOCH};
use crate::statistics::{ColumnDef, SerializationHeader};
use crate::types::CqlType;

/// Builder: each method appends and returns the builder.
#[derive(Debug, Default, Clone)]
pub(crate) struct B(pub(crate) Vec<u8>);

#[allow(dead_code)]
impl B {
    pub(crate) fn new() -> B {
        B(Vec::new())
    }
    pub(crate) fn u8(mut self, v: u8) -> B {
        self.0.push(v);
        self
    }
    pub(crate) fn u16(mut self, v: u16) -> B {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    pub(crate) fn i32(mut self, v: i32) -> B {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    pub(crate) fn i64(mut self, v: i64) -> B {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    /// Unsigned vint.
    pub(crate) fn uv(mut self, v: u64) -> B {
        write_uvint(&mut self.0, v);
        self
    }
    pub(crate) fn raw(mut self, b: &[u8]) -> B {
        self.0.extend_from_slice(b);
        self
    }
    /// `u16 length + bytes`.
    pub(crate) fn short_bytes(self, b: &[u8]) -> B {
        self.u16(b.len() as u16).raw(b)
    }
    /// `uvint length + bytes`.
    pub(crate) fn vbytes(self, b: &[u8]) -> B {
        self.uv(b.len() as u64).raw(b)
    }
    /// `uvint(len(body)) + body`: a row_size / marker_size field and its body.
    pub(crate) fn sized(self, f: impl FnOnce(B) -> B) -> B {
        let body = f(B::new()).0;
        self.uv(body.len() as u64).raw(&body)
    }
    /// Legacy LIVE partition deletion.
    pub(crate) fn live(self) -> B {
        self.i32(i32::MAX).i64(i64::MIN)
    }
    /// Partition header with a legacy LIVE deletion.
    pub(crate) fn partition(self, key: &[u8]) -> B {
        self.short_bytes(key).live()
    }
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }
    pub(crate) fn build(self) -> Vec<u8> {
        self.0
    }
}

fn def(name: &str, ty: &str) -> ColumnDef {
    ColumnDef {
        name: name.to_string(),
        name_bytes: name.as_bytes().to_vec(),
        ty: CqlType::parse(ty).unwrap_or(CqlType::Custom(ty.to_string())),
        type_string: ty.to_string(),
    }
}

/// A serialization header with epoch bases (all deltas relative to the
/// epochs) and the given types (marshal class names, short form allowed).
pub(crate) fn header(
    clustering: &[&str],
    statics: &[(&str, &str)],
    regulars: &[(&str, &str)],
) -> SerializationHeader {
    SerializationHeader {
        min_timestamp: TIMESTAMP_EPOCH,
        min_local_deletion_time: DELETION_TIME_EPOCH,
        min_ttl: 0,
        raw_deltas: (0, 0, 0),
        partition_key_type: CqlType::parse("Int32Type").unwrap_or(CqlType::Custom(String::new())),
        partition_key_type_string: "org.apache.cassandra.db.marshal.Int32Type".into(),
        clustering_types: clustering.iter().map(|t| def("", t).ty).collect(),
        clustering_type_strings: clustering.iter().map(|t| t.to_string()).collect(),
        static_columns: statics.iter().map(|(n, t)| def(n, t)).collect(),
        regular_columns: regulars.iter().map(|(n, t)| def(n, t)).collect(),
    }
}
