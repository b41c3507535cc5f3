//! Rendering for people and scripts: values in Cassandra's text forms
//! ([`render`], [`render_json`], [`value_text`]; the form renderer is
//! `forms`, its leaf formatters are split by job: `numbers`, `time`,
//! `escape`, `ids` for addresses / UUIDs / hex, and `append` for the output
//! buffer, where the `unsafe` for speed lives; the writers reach the leaf
//! formatters only through [`fixed`]), and the helpers shared by commands:
//! partition keys (token, raw hex, typed value), clustering prefixes,
//! timestamps.

mod append;
mod escape;
mod forms;
mod ids;
mod numbers;
mod time;

#[cfg(test)]
mod tests;

pub use forms::{render, render_json, value_text, Form, JsonStr};
pub use time::{civil_from_days, format_micros_instant, format_seconds_instant};

/// The fixed-width helpers of the writers whose layout is fixed (scylla
/// JSON, sstabledump, Jackson's generator): texts rendered once and copied
/// whole, integers, JSON escapes, hex, UUIDs and dates appended to the
/// output buffer.
pub mod fixed {
    pub use super::append::{push_i64, Piece};
    pub use super::escape::json_escape_into;
    pub use super::ids::{hex_into, uuid_into};
    pub use super::time::{local_date_into, DateStrings};
}

use serde_json::{json, Value as Json};
use sstkit_format::statistics::Statistics;
use sstkit_format::token::Partitioner;
use sstkit_format::types::CqlType;
use sstkit_format::value;
use sstkit_format::{Result, Sstable};

pub use crate::output::hex;

/// What is needed to show a partition key: the partitioner (for tokens and
/// ordering) and the key type (for the typed value).
#[derive(Debug, Clone)]
pub struct KeyCtx {
    /// The partitioner from Statistics.db (Murmur3 when unknown).
    pub partitioner: Partitioner,
    /// The partition key type from the serialization header (absent for ka/la).
    pub key_type: Option<CqlType>,
}

impl KeyCtx {
    /// Build from decoded statistics.
    pub fn from_statistics(st: &Statistics) -> KeyCtx {
        let partitioner = st
            .validation
            .as_ref()
            .and_then(|v| Partitioner::parse(&v.partitioner).ok())
            .unwrap_or(Partitioner::Murmur3);
        KeyCtx {
            partitioner,
            key_type: st.header.as_ref().map(|h| h.partition_key_type.clone()),
        }
    }

    /// Read Statistics.db of `sst` (lenient about checksum mismatches) and build.
    pub fn read(sst: &Sstable) -> Result<KeyCtx> {
        Ok(KeyCtx::of(sst, &read_statistics(sst)?))
    }

    /// Build from `st`, the statistics of `sst`.
    pub fn of(sst: &Sstable, st: &Statistics) -> KeyCtx {
        let mut ctx = KeyCtx::from_statistics(st);
        // ka/la (or a header scrub could not decode): the key type comes from the --schema file.
        if ctx.key_type.is_none() {
            ctx.key_type = sst.table_schema().map(|s| s.partition_key_type());
        }
        ctx
    }

    /// The typed text form of a key (CQL literal per component, composite
    /// components joined with `:` like Cassandra's `CompositeType.getString`),
    /// or its hex when the type is unknown or the bytes do not decode.
    pub fn key_text(&self, key: &[u8]) -> String {
        match &self.key_type {
            Some(t) => match value::decode(t, key) {
                Ok(v) => value_text(&v, Form::Str),
                Err(_) => format!("0x{}", hex(key)),
            },
            None => format!("0x{}", hex(key)),
        }
    }

    /// `{"token", "raw", "value"}`.
    pub fn key_json(&self, key: &[u8]) -> Json {
        json!({
            "token": self.partitioner.token(key).to_string(),
            "raw": hex(key),
            "value": self.key_text(key),
        })
    }

    /// Parse a user-typed key (`--key`): CQL literal form, composite as `a:b`.
    pub fn parse_key(&self, text: &str) -> Result<Vec<u8>> {
        match &self.key_type {
            Some(t) => value::literal::parse_key_arg(t, text),
            None => Err(sstkit_format::Error::new(
                sstkit_format::ErrorKind::Unsupported(
                    "this sstable stores no key type (pre-3.0); give the key with --key-hex".into(),
                ),
                "partition key",
            )),
        }
    }
}

/// Read Statistics.db leniently (checksum mismatches become problems, not failures).
pub fn read_statistics(sst: &Sstable) -> Result<Statistics> {
    let bytes = sst.read_component(sstkit_format::Component::Statistics)?;
    Statistics::parse_lenient(&bytes, sst.features())
        .map_err(|e| e.in_file(&sst.path(sstkit_format::Component::Statistics)))
}

/// A finite float as JSON, or null for NaN/infinity (JSON has no such numbers).
pub fn f64_json(x: f64) -> Json {
    serde_json::Number::from_f64(x).map_or(Json::Null, Json::Number)
}

/// Text form of one clustering value: its typed plain string, `null`, or
/// hex when the type is unknown or the bytes do not decode.
pub fn clustering_value_text(ty: Option<&CqlType>, v: Option<&[u8]>) -> String {
    match (v, ty) {
        (None, _) => "null".to_string(),
        (Some(b), Some(t)) => match value::decode(t, b) {
            Ok(x) => value_text(&x, Form::Str),
            Err(_) => format!("0x{}", hex(b)),
        },
        (Some(b), None) => format!("0x{}", hex(b)),
    }
}

/// A clustering prefix as JSON: `{"kind", "raw": [hex|null], "value": "a:b"}`.
pub fn clustering_json(
    p: &sstkit_format::clustering::ClusteringPrefix<'_>,
    types: &[CqlType],
) -> Json {
    let raw: Vec<Json> = p
        .values
        .iter()
        .map(|v| v.map_or(Json::Null, |b| Json::String(hex(b))))
        .collect();
    let text: Vec<String> = p
        .values
        .iter()
        .enumerate()
        .map(|(i, v)| clustering_value_text(types.get(i), *v))
        .collect();
    json!({"kind": p.kind.name(), "raw": raw, "value": text.join(":")})
}
