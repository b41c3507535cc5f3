//! `sstkit export SSTABLE... -o parquet|arrow|csv --output-file FILE`: the
//! CQL row view of the data for engines that read Parquet, Arrow or CSV.
//!
//! ```text
//! sstkit export --merge -o parquet --output-file t.parquet /data/ks/t-1234/
//! sstkit export -o arrow --output-file - nb-1-big-Data.db | python -c 'import pyarrow as pa, sys; ...'
//! sstkit export -o csv --output-file t.csv --now 1700000000 nb-1-big-Data.db
//! sstkit export --merge -o parquet --partition-by token-range:8 --output-file out/ /data/ks/t-1234/
//! ```
//!
//! The rows are those `dump-data -o cql` prints ([`crate::dump::cql`]: what
//! `SELECT *` returns at `--now`), read through the same drivers (one
//! sstable's scan, or the merged stream of [`sstkit_format::engine::merged`]). Columns:
//! partition key, clustering, static, then regular columns by name (the
//! order of `SELECT *`). Types map as [`arrow_type`] says.
//!
//! Memory: rows are collected in batches of [`BATCH_ROWS`] and handed to the
//! writer, which holds at most one row group. Each output file is written
//! under a temporary name in its directory and renamed once complete.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::types::{Decimal128Type, Decimal256Type};
use arrow_array::{
    Array, ArrayRef, BinaryArray, BooleanArray, Date32Array, FixedSizeBinaryArray,
    FixedSizeListArray, Float32Array, Float64Array, Int16Array, Int32Array, Int64Array, Int8Array,
    ListArray, MapArray, PrimitiveArray, RecordBatch, StringArray, StructArray,
    Time64NanosecondArray, TimestampMillisecondArray,
};
use arrow_buffer::{i256, NullBuffer, OffsetBuffer};
use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef, TimeUnit};
use sstkit_format::clustering::ClusteringPrefix;
use sstkit_format::cur::Cur;
use sstkit_format::data::live::{live_row, stronger};
use sstkit_format::data::{ColumnData, RangeTombstoneMarker, Row};
use sstkit_format::deletion::DeletionTime;
use sstkit_format::statistics::SerializationHeader;
use sstkit_format::token::Token;
use sstkit_format::types::{CqlType, Native};
use sstkit_format::value::{decode, decode_counter, Value};
use sstkit_format::Component;

use crate::cli::{ExportArgs, ExportCompression, ExportFormat};
use crate::dump::cql::{key_components, key_types, live_value};
use crate::dump::select;
use crate::dump::{Sink, Table};
use crate::plan::DumpPlan;
use crate::render::{render, Form};
use crate::{CmdError, CmdResult, Outcome};

/// Rows per batch handed to a writer.
pub const BATCH_ROWS: usize = 8192;

/// How `decimal` and `varint` columns are written (`--decimals`), decided
/// for the whole output before the first row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decimals {
    /// Utf8: the exact Java `BigDecimal.toString` / `BigInteger` text.
    Text,
    /// Decimal128(38, scale); varint Decimal128(38, 0).
    D128(i8),
    /// Decimal256(76, scale); varint Decimal256(76, 0).
    D256(i8),
}

impl Decimals {
    /// Parse `text`, `decimal128:S` or `decimal256:S`.
    pub fn parse(s: &str) -> Result<Decimals, String> {
        let scale = |v: &str, max: i8| -> Result<i8, String> {
            let n: i8 = v
                .parse()
                .map_err(|_| format!("--decimals: '{v}' is not a scale"))?;
            if !(0..=max).contains(&n) {
                return Err(format!("--decimals: scale {n} is not in 0..={max}"));
            }
            Ok(n)
        };
        match s.split_once(':') {
            None if s == "text" => Ok(Decimals::Text),
            Some(("decimal128", v)) => Ok(Decimals::D128(scale(v, 38)?)),
            Some(("decimal256", v)) => Ok(Decimals::D256(scale(v, 76)?)),
            _ => Err(format!(
                "--decimals: '{s}': expected text, decimal128:S or decimal256:S"
            )),
        }
    }
}

/// The type without `ReversedType`/`FrozenType` wrappers.
fn base(ty: &CqlType) -> &CqlType {
    match ty {
        CqlType::Reversed(t) | CqlType::Frozen(t) => base(t),
        t => t,
    }
}

/// The Arrow field of a value of `ty` named `name` (nullable); `uuid` and
/// `timeuuid` carry the `arrow.uuid` extension name.
pub fn arrow_field(name: &str, ty: &CqlType, d: Decimals) -> Field {
    let f = Field::new(name, arrow_type(ty, d), true);
    match base(ty) {
        CqlType::Native(Native::Uuid | Native::Timeuuid | Native::LexicalUuid) => {
            f.with_metadata(std::collections::HashMap::from([(
                "ARROW:extension:name".to_string(),
                "arrow.uuid".to_string(),
            )]))
        }
        _ => f,
    }
}

/// The fields of a tuple or UDT's struct: UDT field names, tuple `0`, `1`...
fn struct_fields(ty: &CqlType, d: Decimals) -> Fields {
    match base(ty) {
        CqlType::Udt { fields, .. } => fields.iter().map(|(n, t)| arrow_field(n, t, d)).collect(),
        CqlType::Tuple(ts) => ts
            .iter()
            .enumerate()
            .map(|(i, t)| arrow_field(&i.to_string(), t, d))
            .collect(),
        _ => Fields::empty(),
    }
}

/// The entries field of a map (`key` not null, `value`).
fn map_entries(k: &CqlType, v: &CqlType, d: Decimals) -> Field {
    let key = arrow_field("key", k, d).with_nullable(false);
    let fields = Fields::from(vec![key, arrow_field("value", v, d)]);
    Field::new("entries", DataType::Struct(fields), false)
}

fn duration_fields() -> Fields {
    Fields::from(vec![
        Field::new("months", DataType::Int32, true),
        Field::new("days", DataType::Int32, true),
        Field::new("nanoseconds", DataType::Int64, true),
    ])
}

/// The Arrow type of CQL type `ty` (lossless):
///
/// | CQL | Arrow |
/// |---|---|
/// | tinyint, smallint, int, bigint, counter | Int8, Int16, Int32, Int64, Int64 |
/// | float, double, boolean | Float32, Float64, Boolean |
/// | text, ascii, inet | Utf8 |
/// | blob, custom types | Binary |
/// | decimal, varint | `--decimals`: Utf8, Decimal128(38, S), Decimal256(76, S) |
/// | timestamp | Timestamp(ms, UTC) |
/// | date | Date32 (days from 1970-01-01) |
/// | time | Time64(ns) |
/// | uuid, timeuuid | FixedSizeBinary(16), extension `arrow.uuid` |
/// | duration | Struct{months: Int32, days: Int32, nanoseconds: Int64} |
/// | list, set | List |
/// | map | Map |
/// | tuple, UDT | Struct (tuple fields `0`, `1`, ...) |
/// | vector<T, n> | FixedSizeList(n) |
pub fn arrow_type(ty: &CqlType, d: Decimals) -> DataType {
    let decimal = |scale: i8| match d {
        Decimals::Text => DataType::Utf8,
        Decimals::D128(s) => DataType::Decimal128(38, if scale == 0 { 0 } else { s }),
        Decimals::D256(s) => DataType::Decimal256(76, if scale == 0 { 0 } else { s }),
    };
    match base(ty) {
        CqlType::Native(n) => match n {
            Native::Tinyint => DataType::Int8,
            Native::Smallint => DataType::Int16,
            Native::Int => DataType::Int32,
            Native::Bigint | Native::Counter => DataType::Int64,
            Native::Float => DataType::Float32,
            Native::Double => DataType::Float64,
            Native::Boolean => DataType::Boolean,
            Native::Text | Native::Ascii | Native::Inet => DataType::Utf8,
            Native::Decimal => decimal(1),
            Native::Varint => decimal(0),
            Native::Timestamp | Native::LegacyDate => {
                DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into()))
            }
            Native::Date => DataType::Date32,
            Native::Time => DataType::Time64(TimeUnit::Nanosecond),
            Native::Uuid | Native::Timeuuid | Native::LexicalUuid => DataType::FixedSizeBinary(16),
            Native::Duration => DataType::Struct(duration_fields()),
            _ => DataType::Binary,
        },
        CqlType::List(t) | CqlType::Set(t) => DataType::List(Arc::new(arrow_field("item", t, d))),
        CqlType::Map(k, v) => DataType::Map(Arc::new(map_entries(k, v, d)), false),
        t @ (CqlType::Tuple(_) | CqlType::Udt { .. }) => DataType::Struct(struct_fields(t, d)),
        CqlType::Vector(t, n) => {
            DataType::FixedSizeList(Arc::new(arrow_field("item", t, d)), *n as i32)
        }
        _ => DataType::Binary,
    }
}

/// Build the Arrow array of values `vals` of type `ty` (`None`: null).
/// Errors: a value that does not fit the column's type (a decimal out of
/// its fixed scale or precision).
pub fn build_array(ty: &CqlType, vals: &[Option<&Value>], d: Decimals) -> Result<ArrayRef, String> {
    macro_rules! prim {
        ($arr:ty, $pat:pat => $e:expr) => {
            Arc::new(
                vals.iter()
                    .map(|v| match v {
                        Some($pat) => Some($e),
                        _ => None,
                    })
                    .collect::<$arr>(),
            ) as ArrayRef
        };
    }
    Ok(match base(ty) {
        CqlType::Native(n) => match n {
            Native::Tinyint => prim!(Int8Array, Value::Tinyint(x) => *x),
            Native::Smallint => prim!(Int16Array, Value::Smallint(x) => *x),
            Native::Int => prim!(Int32Array, Value::Int(x) => *x),
            Native::Bigint | Native::Counter => Arc::new(
                vals.iter()
                    .map(|v| match v {
                        Some(Value::Bigint(x)) => Some(*x),
                        Some(Value::Counter(c)) => Some(c.total),
                        _ => None,
                    })
                    .collect::<Int64Array>(),
            ),
            Native::Float => prim!(Float32Array, Value::Float(x) => *x),
            Native::Double => prim!(Float64Array, Value::Double(x) => *x),
            Native::Boolean => prim!(BooleanArray, Value::Boolean(x) => *x),
            Native::Text | Native::Ascii | Native::Inet => Arc::new(
                vals.iter()
                    .map(|v| match v {
                        Some(Value::Text(s) | Value::Ascii(s)) => Some(s.clone()),
                        Some(Value::BadText(b)) => Some(String::from_utf8_lossy(b).into_owned()),
                        // Java's text (`InetAddress.getHostAddress`), as SELECT JSON prints it.
                        Some(v @ Value::Inet(_)) => {
                            let mut s = String::new();
                            render(
                                &CqlType::Native(Native::Inet),
                                &v.to_bytes(),
                                Form::Str,
                                &mut s,
                            );
                            Some(s)
                        }
                        _ => None,
                    })
                    .collect::<StringArray>(),
            ),
            Native::Decimal | Native::Varint => decimal_array(*n, vals, d)?,
            Native::Timestamp | Native::LegacyDate => Arc::new(
                prim!(TimestampMillisecondArray, Value::Timestamp(x) => *x)
                    .as_any()
                    .downcast_ref::<TimestampMillisecondArray>()
                    .ok_or("timestamp array")?
                    .clone()
                    .with_timezone("UTC"),
            ),
            // Cassandra's date counts days with the epoch at 2^31.
            Native::Date => {
                prim!(Date32Array, Value::Date(x) => (i64::from(*x) - (1i64 << 31)) as i32)
            }
            Native::Time => prim!(Time64NanosecondArray, Value::Time(x) => *x),
            Native::Uuid | Native::Timeuuid | Native::LexicalUuid => Arc::new(
                FixedSizeBinaryArray::try_from_sparse_iter_with_size(
                    vals.iter().map(|v| match v {
                        Some(Value::Uuid(u) | Value::Timeuuid(u)) => Some(u.0),
                        _ => None,
                    }),
                    16,
                )
                .map_err(|e| e.to_string())?,
            ),
            Native::Duration => {
                let part = |i: usize| -> Vec<Option<i64>> {
                    vals.iter()
                        .map(|v| match v {
                            Some(Value::Duration {
                                months,
                                days,
                                nanos,
                            }) => Some([i64::from(*months), i64::from(*days), *nanos][i]),
                            _ => None,
                        })
                        .collect()
                };
                let months: Int32Array = part(0).into_iter().map(|x| x.map(|x| x as i32)).collect();
                let days: Int32Array = part(1).into_iter().map(|x| x.map(|x| x as i32)).collect();
                let nanos: Int64Array = part(2).into_iter().collect();
                let valid = NullBuffer::from(
                    vals.iter()
                        .map(|v| matches!(v, Some(Value::Duration { .. })))
                        .collect::<Vec<_>>(),
                );
                Arc::new(
                    StructArray::try_new(
                        duration_fields(),
                        vec![Arc::new(months), Arc::new(days), Arc::new(nanos)],
                        Some(valid),
                    )
                    .map_err(|e| e.to_string())?,
                )
            }
            _ => binary_array(ty, vals),
        },
        CqlType::List(t) | CqlType::Set(t) => {
            let mut offsets = vec![0i32];
            let mut items: Vec<Option<&Value>> = Vec::new();
            let mut valid = Vec::with_capacity(vals.len());
            for v in vals {
                match v {
                    Some(Value::List(xs) | Value::Set(xs)) => {
                        items.extend(xs.iter().map(some_value));
                        valid.push(true);
                    }
                    _ => valid.push(false),
                }
                offsets.push(i32::try_from(items.len()).map_err(|_| "list too long")?);
            }
            let child = build_array(t, &items, d)?;
            Arc::new(
                ListArray::try_new(
                    Arc::new(arrow_field("item", t, d)),
                    OffsetBuffer::new(offsets.into()),
                    child,
                    Some(NullBuffer::from(valid)),
                )
                .map_err(|e| e.to_string())?,
            )
        }
        CqlType::Map(kt, vt) => {
            let mut offsets = vec![0i32];
            let (mut ks, mut vs): (Vec<Option<&Value>>, Vec<Option<&Value>>) = (vec![], vec![]);
            let mut valid = Vec::with_capacity(vals.len());
            for v in vals {
                match v {
                    Some(Value::Map(kv)) => {
                        for (k, v) in kv {
                            ks.push(some_value(k));
                            vs.push(some_value(v));
                        }
                        valid.push(true);
                    }
                    _ => valid.push(false),
                }
                offsets.push(i32::try_from(ks.len()).map_err(|_| "map too long")?);
            }
            let DataType::Struct(fields) = map_entries(kt, vt, d).data_type().clone() else {
                return Err("map entries".into());
            };
            let entries = StructArray::try_new(
                fields,
                vec![build_array(kt, &ks, d)?, build_array(vt, &vs, d)?],
                None,
            )
            .map_err(|e| e.to_string())?;
            Arc::new(
                MapArray::try_new(
                    Arc::new(map_entries(kt, vt, d)),
                    OffsetBuffer::new(offsets.into()),
                    entries,
                    Some(NullBuffer::from(valid)),
                    false,
                )
                .map_err(|e| e.to_string())?,
            )
        }
        t @ (CqlType::Tuple(_) | CqlType::Udt { .. }) => {
            let types: Vec<&CqlType> = match t {
                CqlType::Udt { fields, .. } => fields.iter().map(|f| &f.1).collect(),
                CqlType::Tuple(ts) => ts.iter().collect(),
                _ => vec![],
            };
            let mut children = Vec::with_capacity(types.len());
            for (i, ft) in types.iter().enumerate() {
                let col: Vec<Option<&Value>> = vals
                    .iter()
                    .map(|v| match v {
                        Some(Value::Tuple { values, .. }) => values.get(i).and_then(some_value),
                        Some(Value::Udt { fields, .. }) => {
                            fields.get(i).and_then(|f| some_value(&f.1))
                        }
                        _ => None,
                    })
                    .collect();
                children.push(build_array(ft, &col, d)?);
            }
            let valid = vals
                .iter()
                .map(|v| matches!(v, Some(Value::Tuple { .. } | Value::Udt { .. })))
                .collect::<Vec<bool>>();
            if children.is_empty() {
                Arc::new(StructArray::new_empty_fields(
                    vals.len(),
                    Some(NullBuffer::from(valid)),
                ))
            } else {
                Arc::new(
                    StructArray::try_new(
                        struct_fields(t, d),
                        children,
                        Some(NullBuffer::from(valid)),
                    )
                    .map_err(|e| e.to_string())?,
                )
            }
        }
        CqlType::Vector(t, n) => {
            let mut items: Vec<Option<&Value>> = Vec::with_capacity(vals.len() * n);
            let mut valid = Vec::with_capacity(vals.len());
            for v in vals {
                match v {
                    Some(Value::Vector(xs)) if xs.len() == *n => {
                        items.extend(xs.iter().map(some_value));
                        valid.push(true);
                    }
                    _ => {
                        items.extend(std::iter::repeat_n(None, *n));
                        valid.push(false);
                    }
                }
            }
            let child = build_array(t, &items, d)?;
            Arc::new(
                FixedSizeListArray::try_new(
                    Arc::new(arrow_field("item", t, d)),
                    *n as i32,
                    child,
                    Some(NullBuffer::from(valid)),
                )
                .map_err(|e| e.to_string())?,
            )
        }
        _ => binary_array(ty, vals),
    })
}

/// A value, or `None` for a null or empty one.
fn some_value(v: &Value) -> Option<&Value> {
    match v {
        Value::Null | Value::Empty => None,
        v => Some(v),
    }
}

/// Values of types kept as bytes (blob, custom and legacy types).
fn binary_array(_ty: &CqlType, vals: &[Option<&Value>]) -> ArrayRef {
    let bytes: Vec<Option<Vec<u8>>> = vals
        .iter()
        .map(|v| match v {
            Some(Value::Blob(b)) => Some(b.clone()),
            Some(v) => Some(v.to_bytes()),
            None => None,
        })
        .collect();
    Arc::new(BinaryArray::from_iter(bytes))
}

/// Two's complement big-endian bytes as an i256 (`None`: more than 32 bytes).
fn i256_of(b: &[u8]) -> Option<i256> {
    if b.len() > 32 {
        return None;
    }
    let neg = b.first().is_some_and(|x| x & 0x80 != 0);
    let mut a = [if neg { 0xff } else { 0 }; 32];
    a[32 - b.len()..].copy_from_slice(b);
    Some(i256::from_be_bytes(a))
}

/// `decimal`/`varint` values as `--decimals` says.
fn decimal_array(n: Native, vals: &[Option<&Value>], d: Decimals) -> Result<ArrayRef, String> {
    let ty = CqlType::Native(n);
    let text = |v: &Value| {
        let mut s = String::new();
        render(&ty, &v.to_bytes(), Form::Json, &mut s);
        s
    };
    // Unscaled value and scale of each value.
    let parts = |v: &Value| -> Option<(Vec<u8>, i32)> {
        match v {
            Value::Decimal { scale, unscaled } => Some((unscaled.clone(), *scale)),
            Value::Varint(b) => Some((b.clone(), 0)),
            _ => None,
        }
    };
    let rescaled = |v: &Value, target: i8, digits: u32| -> Result<i256, String> {
        let (b, scale) = parts(v).ok_or("not a decimal")?;
        let mut x = i256_of(&b).ok_or_else(|| format!("{} does not fit --decimals", text(v)))?;
        let target = i32::from(target);
        if scale > target {
            return Err(format!(
                "{} has scale {scale}, more than the --decimals scale {target}",
                text(v)
            ));
        }
        let ten = i256::from_i128(10);
        for _ in scale..target {
            x = x
                .checked_mul(ten)
                .ok_or_else(|| format!("{} does not fit --decimals", text(v)))?;
        }
        let max = ten.checked_pow(digits).ok_or("precision")?;
        if x >= max || x <= max.wrapping_neg() {
            return Err(format!(
                "{} does not fit {digits} digits at scale {target} (--decimals)",
                text(v)
            ));
        }
        Ok(x)
    };
    let scale_of = |s: i8| if n == Native::Varint { 0 } else { s };
    Ok(match d {
        Decimals::Text => Arc::new(vals.iter().map(|v| v.map(text)).collect::<StringArray>()),
        Decimals::D128(s) => {
            let s = scale_of(s);
            let mut out = Vec::with_capacity(vals.len());
            for v in vals {
                out.push(match v {
                    Some(v) => Some(rescaled(v, s, 38)?.as_i128()),
                    None => None,
                });
            }
            Arc::new(
                PrimitiveArray::<Decimal128Type>::from(out)
                    .with_precision_and_scale(38, s)
                    .map_err(|e| e.to_string())?,
            )
        }
        Decimals::D256(s) => {
            let s = scale_of(s);
            let mut out = Vec::with_capacity(vals.len());
            for v in vals {
                out.push(match v {
                    Some(v) => Some(rescaled(v, s, 76)?),
                    None => None,
                });
            }
            Arc::new(
                PrimitiveArray::<Decimal256Type>::from(out)
                    .with_precision_and_scale(76, s)
                    .map_err(|e| e.to_string())?,
            )
        }
    })
}

/// One output column.
#[derive(Debug, Clone)]
struct OutCol {
    name: String,
    /// The type its values decode as (counters: bigint, their total).
    ty: CqlType,
}

/// The output columns of a table, in `SELECT *` order.
struct Plan {
    cols: Vec<OutCol>,
    n_ck: usize,
    /// Names of the static columns (output order), then of the regulars.
    statics: Vec<String>,
    regulars: Vec<String>,
    /// `--with-metadata`: the static then regular slots (statics first,
    /// regulars after them) with `writetime(c)` and `ttl(c)` columns.
    meta: Vec<usize>,
}

impl Plan {
    /// The columns of the table whose (union) header is `h`, named after
    /// `schema` when it is this table's.
    fn new(
        h: &SerializationHeader,
        schema: Option<&sstkit_format::schema::TableSchema>,
        with_metadata: bool,
    ) -> Plan {
        let pk_types = key_types(&h.partition_key_type);
        let fits = schema.filter(|s| {
            s.clustering.len() == h.clustering_types.len()
                && s.partition_key.len() == pk_types.len()
        });
        let mut cols = Vec::new();
        for (i, t) in pk_types.iter().enumerate() {
            let name = fits
                .and_then(|s| s.partition_key.get(i))
                .map_or_else(|| format!("pk{i}"), |c| c.name.clone());
            cols.push(OutCol {
                name,
                ty: t.unreversed().clone(),
            });
        }
        for (i, t) in h.clustering_types.iter().enumerate() {
            let name = fits
                .and_then(|s| s.clustering.get(i))
                .map_or_else(|| format!("ck{i}"), |c| c.0.name.clone());
            cols.push(OutCol {
                name,
                ty: t.unreversed().clone(),
            });
        }
        let group = |cols: &mut Vec<OutCol>, defs: &[sstkit_format::statistics::ColumnDef]| {
            let mut v: Vec<OutCol> = defs
                .iter()
                .map(|c| OutCol {
                    name: c.name.clone(),
                    ty: if c.ty.is_counter() {
                        CqlType::Native(Native::Bigint)
                    } else {
                        c.ty.unreversed().clone()
                    },
                })
                .collect();
            v.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
            v.dedup_by(|a, b| a.name == b.name);
            let names = v.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
            cols.extend(v);
            names
        };
        let n_ck = h.clustering_types.len();
        let statics = group(&mut cols, &h.static_columns);
        let first_value = cols.len() - statics.len();
        let regulars = group(&mut cols, &h.regular_columns);
        let mut meta = Vec::new();
        if with_metadata {
            // CQL has writetime() and ttl() of simple (frozen included), non-counter columns.
            let simple: Vec<(usize, OutCol)> = cols[first_value..]
                .iter()
                .cloned()
                .enumerate()
                .filter(|(_, c)| {
                    let def = h
                        .static_columns
                        .iter()
                        .chain(&h.regular_columns)
                        .find(|d| d.name == c.name);
                    def.is_some_and(|d| !d.ty.is_multi_cell() && !d.ty.is_counter())
                })
                .collect();
            for (slot, c) in simple {
                meta.push(slot);
                cols.push(OutCol {
                    name: format!("writetime({})", c.name),
                    ty: CqlType::Native(Native::Bigint),
                });
                cols.push(OutCol {
                    name: format!("ttl({})", c.name),
                    ty: CqlType::Native(Native::Int),
                });
            }
        }
        Plan {
            cols,
            n_ck,
            statics,
            regulars,
            meta,
        }
    }

    /// The columns of the `--tombstones` stream: kind, the partition key
    /// columns, the clustering range (CQL text of each bound, and whether it
    /// is inclusive), the column of a cell or collection deletion, and the
    /// deletion time.
    fn tombstones(data: &Plan, n_pk: usize) -> Plan {
        let text = || CqlType::Native(Native::Text);
        let boolean = || CqlType::Native(Native::Boolean);
        let col = |name: &str, ty: CqlType| OutCol {
            name: name.into(),
            ty,
        };
        let mut cols = vec![col("kind", text())];
        cols.extend(data.cols[..n_pk].iter().cloned());
        cols.extend([
            col("start", text()),
            col("start_inclusive", boolean()),
            col("end", text()),
            col("end_inclusive", boolean()),
            col("column", text()),
            col("marked_for_delete_at", CqlType::Native(Native::Bigint)),
            col("local_deletion_time", CqlType::Native(Native::Timestamp)),
        ]);
        Plan {
            cols,
            n_ck: 0,
            statics: vec![],
            regulars: vec![],
            meta: vec![],
        }
    }

    fn schema(&self, d: Decimals) -> SchemaRef {
        Arc::new(Schema::new(
            self.cols
                .iter()
                .map(|c| arrow_field(&c.name, &c.ty, d))
                .collect::<Vec<_>>(),
        ))
    }
}

/// The values of one column of a batch: serialized values in one buffer.
#[derive(Default)]
struct ColBuf {
    data: Vec<u8>,
    spans: Vec<Option<(usize, usize)>>,
}

impl ColBuf {
    fn push(&mut self, v: Option<&[u8]>) {
        self.spans.push(v.map(|b| {
            self.data.extend_from_slice(b);
            (self.data.len() - b.len(), b.len())
        }));
    }
    fn get(&self, i: usize) -> Option<&[u8]> {
        self.spans[i].map(|(s, n)| &self.data[s..s + n])
    }
    fn clear(&mut self) {
        self.data.clear();
        self.spans.clear();
    }
}

/// Where batches go.
enum Writer<'a> {
    Parquet(parquet::arrow::ArrowWriter<BufWriter<File>>),
    IpcFile(arrow_ipc::writer::FileWriter<BufWriter<File>>),
    IpcStream(arrow_ipc::writer::StreamWriter<&'a mut dyn Write>),
    Csv(Box<dyn Write + 'a>),
}

fn arrow_err(e: impl std::fmt::Display) -> CmdError {
    CmdError::Output(io::Error::other(e.to_string()))
}

/// One output (a file or stdout) and the rows not yet written to it.
struct Part<'a> {
    writer: Option<Writer<'a>>,
    cols: Vec<ColBuf>,
    rows: usize,
    /// The temporary file and its final name (none for stdout).
    tmp: Option<(PathBuf, PathBuf)>,
}

/// Output settings.
struct Settings {
    format: ExportFormat,
    row_group_rows: usize,
    row_group_bytes: Option<u64>,
    compression: ExportCompression,
}

impl<'a> Part<'a> {
    /// A file output at `path`, written as `path`'s temporary sibling.
    fn file(
        path: &Path,
        schema: &SchemaRef,
        s: &Settings,
        meta: Vec<(String, String)>,
    ) -> CmdResult<Part<'a>> {
        let name = path.file_name().ok_or_else(|| {
            CmdError::Usage(format!("--output-file {}: not a file name", path.display()))
        })?;
        let tmp = path.with_file_name(format!(
            ".{}.tmp-{}",
            name.to_string_lossy(),
            std::process::id()
        ));
        let f = sstkit_format::write::pending::create(&tmp).map_err(|e| {
            CmdError::Output(io::Error::new(e.kind(), format!("{}: {e}", tmp.display())))
        })?;
        let w = BufWriter::with_capacity(1 << 20, f);
        let writer = match s.format {
            ExportFormat::Parquet => {
                use parquet::basic::{Compression, ZstdLevel};
                use parquet::file::metadata::KeyValue;
                use parquet::file::properties::{EnabledStatistics, WriterProperties};
                let c = match s.compression {
                    ExportCompression::Zstd => Compression::ZSTD(ZstdLevel::default()),
                    ExportCompression::Snappy => Compression::SNAPPY,
                    ExportCompression::Lz4 => Compression::LZ4_RAW,
                    ExportCompression::None => Compression::UNCOMPRESSED,
                };
                let props = WriterProperties::builder()
                    .set_compression(c)
                    .set_statistics_enabled(EnabledStatistics::Page)
                    .set_max_row_group_row_count(Some(s.row_group_rows.max(1)))
                    .set_max_row_group_bytes(
                        s.row_group_bytes
                            .map(|b| usize::try_from(b.max(1)).unwrap_or(usize::MAX)),
                    )
                    .set_created_by(format!("sstkit {}", env!("CARGO_PKG_VERSION")))
                    .set_key_value_metadata(Some(
                        meta.into_iter().map(|(k, v)| KeyValue::new(k, v)).collect(),
                    ))
                    .build();
                Writer::Parquet(
                    parquet::arrow::ArrowWriter::try_new(w, schema.clone(), Some(props))
                        .map_err(arrow_err)?,
                )
            }
            ExportFormat::Arrow => Writer::IpcFile(
                arrow_ipc::writer::FileWriter::try_new(w, schema).map_err(arrow_err)?,
            ),
            ExportFormat::Csv => Writer::Csv(Box::new(w)),
        };
        Ok(Part::new(writer, schema, Some((tmp, path.to_path_buf()))))
    }

    fn new(writer: Writer<'a>, schema: &SchemaRef, tmp: Option<(PathBuf, PathBuf)>) -> Part<'a> {
        Part {
            writer: Some(writer),
            cols: schema.fields().iter().map(|_| ColBuf::default()).collect(),
            rows: 0,
            tmp,
        }
    }

    /// Write the collected rows.
    fn flush_rows(&mut self, plan: &Plan, schema: &SchemaRef, d: Decimals) -> CmdResult<()> {
        if self.rows == 0 {
            return Ok(());
        }
        match self.writer.as_mut() {
            Some(Writer::Csv(w)) => write_csv_rows(w, plan, &self.cols, self.rows)?,
            Some(w) => {
                let batch = to_batch(plan, schema, &self.cols, self.rows, d)?;
                match w {
                    Writer::Parquet(pw) => pw.write(&batch).map_err(arrow_err)?,
                    Writer::IpcFile(fw) => fw.write(&batch).map_err(arrow_err)?,
                    Writer::IpcStream(sw) => sw.write(&batch).map_err(arrow_err)?,
                    Writer::Csv(_) => {}
                }
            }
            None => {}
        }
        for c in &mut self.cols {
            c.clear();
        }
        self.rows = 0;
        Ok(())
    }

    /// Close the writer and give the file its final name.
    fn finish(&mut self) -> CmdResult<()> {
        match self.writer.take() {
            Some(Writer::Parquet(w)) => {
                let mut inner = w.into_inner().map_err(arrow_err)?;
                inner.flush()?;
            }
            Some(Writer::IpcFile(mut w)) => {
                w.finish().map_err(arrow_err)?;
                w.into_inner().map_err(arrow_err)?.flush()?;
            }
            Some(Writer::IpcStream(mut w)) => {
                w.finish().map_err(arrow_err)?;
                w.get_mut().flush()?;
            }
            Some(Writer::Csv(mut w)) => w.flush()?,
            None => {}
        }
        if let Some((tmp, path)) = self.tmp.take() {
            use sstkit_format::write::pending;
            pending::rename(&tmp, &path).map_err(|e| {
                pending::remove(&tmp);
                CmdError::Output(io::Error::new(e.kind(), format!("{}: {e}", path.display())))
            })?;
            pending::keep(&path);
        }
        Ok(())
    }
}

impl Drop for Part<'_> {
    /// An output not finished (an error) leaves no file behind.
    fn drop(&mut self) {
        if let Some((tmp, _)) = self.tmp.take() {
            self.writer = None;
            sstkit_format::write::pending::remove(&tmp);
        }
    }
}

/// Decode one collected value of column `c`.
fn decode_col(c: &OutCol, b: &[u8]) -> CmdResult<Value> {
    decode(&c.ty, b).map_err(|e| {
        CmdError::from(sstkit_format::Error::new(
            sstkit_format::ErrorKind::BadValue(format!("column {}: {}", c.name, e.kind)),
            "export value",
        ))
    })
}

/// The collected rows as a record batch.
fn to_batch(
    plan: &Plan,
    schema: &SchemaRef,
    cols: &[ColBuf],
    rows: usize,
    d: Decimals,
) -> CmdResult<RecordBatch> {
    let mut arrays = Vec::with_capacity(cols.len());
    for (c, buf) in plan.cols.iter().zip(cols) {
        let mut vals = Vec::with_capacity(rows);
        for i in 0..rows {
            vals.push(match buf.get(i) {
                Some(b) => Some(decode_col(c, b)?),
                None => None,
            });
        }
        let refs: Vec<Option<&Value>> = vals
            .iter()
            .map(|v| v.as_ref().and_then(some_value))
            .collect();
        let a = build_array(&c.ty, &refs, d)
            .map_err(|e| CmdError::Usage(format!("export: column {}: {e}", c.name)))?;
        arrays.push(a);
    }
    RecordBatch::try_new(schema.clone(), arrays).map_err(arrow_err)
}

/// The CSV header line of `plan`'s columns (with its CRLF).
fn csv_header(plan: &Plan) -> String {
    let mut s = String::new();
    for (i, c) in plan.cols.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        csv_field(&mut s, &c.name);
    }
    s.push_str("\r\n");
    s
}

/// A clustering prefix as CQL text: its components as cqlsh prints them,
/// separated by `, ` (empty for an unbounded bound).
fn clustering_text(t: &Table<'_>, c: &ClusteringPrefix<'_>) -> String {
    let mut s = String::new();
    for (i, v) in c.values.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        match (v, t.header.clustering_types.get(i)) {
            (Some(b), Some(ty)) => render(ty.unreversed(), b, Form::Cqlsh, &mut s),
            _ => s.push_str("null"),
        }
    }
    s
}

/// One CSV field (RFC 4180: quoted when it holds a comma, quote or line break).
fn csv_field(out: &mut String, v: &str) {
    if v.contains([',', '"', '\n', '\r']) {
        out.push('"');
        out.push_str(&v.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(v);
    }
}

/// A value as `cqlsh COPY TO` writes it: the CQL literal cqlsh prints,
/// without the quotes around a top-level text, timestamp, date, time or inet.
fn cqlsh_text(ty: &CqlType, b: &[u8], out: &mut String) {
    let mut s = String::new();
    render(ty, b, Form::Cqlsh, &mut s);
    if matches!(base(ty), CqlType::Native(Native::Boolean)) {
        s = if s == "true" {
            "True".into()
        } else if s == "false" {
            "False".into()
        } else {
            s
        };
    }
    match s.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')) {
        Some(inner) if matches!(base(ty), CqlType::Native(_)) => {
            out.push_str(&inner.replace("''", "'"))
        }
        _ => out.push_str(&s),
    }
}

fn write_csv_rows(
    w: &mut Box<dyn Write + '_>,
    plan: &Plan,
    cols: &[ColBuf],
    rows: usize,
) -> CmdResult<()> {
    let mut line = String::new();
    let mut v = String::new();
    for i in 0..rows {
        line.clear();
        for (j, (c, buf)) in plan.cols.iter().zip(cols).enumerate() {
            if j > 0 {
                line.push(',');
            }
            if let Some(b) = buf.get(i) {
                v.clear();
                cqlsh_text(&c.ty, b, &mut v);
                csv_field(&mut line, &v);
            }
        }
        line.push_str("\r\n");
        w.write_all(line.as_bytes())?;
    }
    Ok(())
}

/// For one header (by address): the output slot of each static and each
/// regular column, by its index in data order.
type Slots = (usize, Vec<Option<usize>>, Vec<Option<usize>>);

/// The sink that collects live rows into the outputs.
struct ExportSink<'a> {
    plan: Plan,
    schema: SchemaRef,
    decimals: Decimals,
    parts: Vec<Part<'a>>,
    /// `--partition-by token-range:N`: N (outputs by Murmur3 token range).
    ranges: Option<u64>,
    /// The output of the current partition.
    cur: usize,
    now: i64,
    /// Values of the current partition key components.
    key: Vec<Vec<u8>>,
    partition_deletion: DeletionTime,
    open_range: DeletionTime,
    statics: Vec<Option<Vec<u8>>>,
    regulars: Vec<Option<Vec<u8>>>,
    /// Write time and remaining TTL of each static, then regular, slot.
    times: Vec<Option<(i64, Option<i32>)>>,
    rows_in_partition: u64,
    /// Per header (by address) the slot of each static / regular column in data order.
    slots: Option<Slots>,
    scratch: Vec<u8>,
    /// A failure while writing a batch (the Sink methods return io errors).
    error: Option<CmdError>,
    /// Rows written.
    rows: u64,
    /// `--tombstones`: the stream's columns, schema and output.
    tombs: Option<(Plan, SchemaRef, Part<'a>)>,
    /// The open range tombstone's start bound (CQL text, inclusive).
    open_bound: Option<(String, bool)>,
}

/// One record of the `--tombstones` stream.
struct Tomb<'t> {
    kind: &'t str,
    start: Option<(&'t str, bool)>,
    end: Option<(&'t str, bool)>,
    column: Option<&'t str>,
    deletion: DeletionTime,
}

/// The output (of `n`) holding token `t`: `n` equal slices of the Murmur3
/// ring, the first starting after `i64::MIN`.
pub fn range_of(t: i64, n: u64) -> usize {
    // Range i is (MIN + floor(i * 2^64 / n), MIN + floor((i + 1) * 2^64 / n)]:
    // the largest i with i < off * n / 2^64.
    let off = (i128::from(t) - i128::from(i64::MIN)) as u128;
    let up = (off * u128::from(n) + (1u128 << 64) - 1) >> 64;
    up.saturating_sub(1) as usize
}

/// `(START,END]` of output `i` of `n` (Murmur3 tokens).
pub fn range_bounds(i: u64, n: u64) -> (i64, i64) {
    let at = |k: u64| -> i64 {
        if k >= n {
            return i64::MAX;
        }
        let off = ((u128::from(k) << 64) / u128::from(n)) as i128;
        (i128::from(i64::MIN) + off) as i64
    };
    (at(i), at(i + 1))
}

impl ExportSink<'_> {
    /// Add a record to the `--tombstones` stream.
    fn tomb(&mut self, t: Tomb<'_>) -> io::Result<()> {
        let Some((plan, schema, part)) = &mut self.tombs else {
            return Ok(());
        };
        let mut c = part.cols.iter_mut();
        let mut put = |v: Option<&[u8]>| {
            if let Some(b) = c.next() {
                b.push(v);
            }
        };
        put(Some(t.kind.as_bytes()));
        for k in &self.key {
            put(Some(k));
        }
        for b in [t.start, t.end] {
            put(b.map(|b| b.0.as_bytes()));
            put(b.map(|b| if b.1 { &[1u8][..] } else { &[0u8][..] }));
        }
        put(t.column.map(str::as_bytes));
        put(Some(&t.deletion.marked_for_delete_at.to_be_bytes()));
        put(Some(
            &(t.deletion.local_deletion_time.saturating_mul(1000)).to_be_bytes(),
        ));
        part.rows += 1;
        if part.rows >= BATCH_ROWS {
            if let Err(e) = part.flush_rows(plan, schema, self.decimals) {
                let msg = e.to_string();
                self.error = Some(e);
                return Err(io::Error::other(msg));
            }
        }
        Ok(())
    }

    /// The deletions inside `row` (its own, its collections', its tombstone cells).
    fn row_tombstones(&mut self, t: &Table<'_>, row: &Row<'_>, is_static: bool) -> io::Result<()> {
        if self.tombs.is_none() {
            return Ok(());
        }
        let ck = if is_static {
            None
        } else {
            Some(clustering_text(t, &row.clustering))
        };
        let at = ck.as_deref().map(|c| (c, true));
        if let Some(d) = row.deletion {
            self.tomb(Tomb {
                kind: "row",
                start: at,
                end: at,
                column: None,
                deletion: d.time,
            })?;
        }
        for cd in &row.cells {
            let (column, complex, cells) = match cd {
                ColumnData::Simple { column, cell } => (column, None, std::slice::from_ref(cell)),
                ColumnData::Complex {
                    column,
                    complex_deletion,
                    cells,
                } => (column, *complex_deletion, &cells[..]),
            };
            let name = column.def.name.as_str();
            if let Some(d) = complex {
                self.tomb(Tomb {
                    kind: "collection",
                    start: at,
                    end: at,
                    column: Some(name),
                    deletion: d,
                })?;
            }
            for c in cells.iter().filter(|c| c.is_deleted()) {
                self.tomb(Tomb {
                    kind: "cell",
                    start: at,
                    end: at,
                    column: Some(name),
                    deletion: DeletionTime {
                        marked_for_delete_at: c.timestamp,
                        local_deletion_time: c.local_deletion_time.unwrap_or(i64::MAX),
                    },
                })?;
            }
        }
        Ok(())
    }

    /// Forget the regular values (and their times) of the last row.
    fn clear_regulars(&mut self) {
        for v in &mut self.regulars {
            *v = None;
        }
        let ns = self.plan.statics.len();
        for t in self.times.iter_mut().skip(ns) {
            *t = None;
        }
    }

    fn slots_for(&mut self, h: &SerializationHeader) {
        let id = h as *const SerializationHeader as usize;
        if self.slots.as_ref().is_some_and(|s| s.0 == id) {
            return;
        }
        let slot = |names: &[String], defs: &[sstkit_format::statistics::ColumnDef]| {
            SerializationHeader::data_order(defs)
                .iter()
                .map(|c| names.iter().position(|n| *n == c.name))
                .collect::<Vec<_>>()
        };
        let s = slot(&self.plan.statics, &h.static_columns);
        let r = slot(&self.plan.regulars, &h.regular_columns);
        self.slots = Some((id, s, r));
    }

    /// Collect the live values of `row`; false when nothing of it is live.
    fn live_values(&mut self, row: &Row<'_>, covering: DeletionTime, is_static: bool) -> bool {
        let Some(live) = live_row(row, covering, self.now) else {
            return false;
        };
        let Some((_, sslot, rslot)) = &self.slots else {
            return false;
        };
        let (slot_of, out, base) = if is_static {
            (sslot, &mut self.statics, 0)
        } else {
            (rslot, &mut self.regulars, self.plan.statics.len())
        };
        for data in &live.columns {
            let col = data.column();
            let Some(&Some(slot)) = slot_of.get(col.index) else {
                continue;
            };
            if col.counter {
                if let LiveColumn::Simple { cell, .. } = data {
                    let mut cur = Cur::new(cell.value, Component::Data, 0);
                    if let Ok(c) = decode_counter(&mut cur) {
                        out[slot] = Some(c.total.to_be_bytes().to_vec());
                    }
                }
                continue;
            }
            let b = live_value(&mut self.scratch, col.def.ty.unreversed(), data);
            out[slot] = Some(b.to_vec());
            if let LiveColumn::Simple { cell, .. } = data {
                // ttl() is what remains at `now` (`localDeletionTime - nowInSec`).
                let ttl = cell
                    .is_expiring()
                    .then(|| cell.local_deletion_time.map(|l| (l - self.now) as i32))
                    .flatten();
                if let Some(t) = self.times.get_mut(base + slot) {
                    *t = Some((cell.timestamp, ttl));
                }
            }
        }
        true
    }

    fn emit(&mut self, t: &Table<'_>, clustering: Option<&ClusteringPrefix<'_>>) -> io::Result<()> {
        let part = &mut self.parts[self.cur];
        let mut c = part.cols.iter_mut();
        for k in &self.key {
            if let Some(b) = c.next() {
                b.push(Some(k));
            }
        }
        for i in 0..self.plan.n_ck {
            let v = clustering.and_then(|c| c.values.get(i).copied().flatten());
            if let Some(b) = c.next() {
                b.push(v);
            }
        }
        let _ = t;
        for v in self.statics.iter().chain(&self.regulars) {
            if let Some(b) = c.next() {
                b.push(v.as_deref());
            }
        }
        for &slot in &self.plan.meta {
            let t = self.times.get(slot).copied().flatten();
            if let Some(b) = c.next() {
                b.push(t.map(|t| t.0.to_be_bytes()).as_ref().map(|b| &b[..]));
            }
            if let Some(b) = c.next() {
                b.push(
                    t.and_then(|t| t.1)
                        .map(i32::to_be_bytes)
                        .as_ref()
                        .map(|b| &b[..]),
                );
            }
        }
        part.rows += 1;
        self.rows += 1;
        self.rows_in_partition += 1;
        if part.rows >= BATCH_ROWS {
            if let Err(e) = part.flush_rows(&self.plan, &self.schema, self.decimals) {
                let msg = e.to_string();
                self.error = Some(e);
                return Err(io::Error::other(msg));
            }
        }
        Ok(())
    }
}

use sstkit_format::data::live::LiveColumn;

impl Sink for ExportSink<'_> {
    fn partition_start(
        &mut self,
        t: &Table<'_>,
        key: &[u8],
        deletion: &DeletionTime,
        _header_end: u64,
    ) -> io::Result<()> {
        self.slots_for(t.header);
        self.key = match key_components(&t.header.partition_key_type, key) {
            Some(c) => c.into_iter().map(<[u8]>::to_vec).collect(),
            None => {
                return Err(io::Error::other(format!(
                    "partition key 0x{} does not frame as its type",
                    crate::output::hex(key)
                )))
            }
        };
        if let Some(n) = self.ranges {
            self.cur = match t.partitioner.token(key) {
                Token::Murmur3(tok) => range_of(tok, n),
                _ => 0,
            };
        }
        self.partition_deletion = *deletion;
        self.open_range = DeletionTime::LIVE;
        self.open_bound = None;
        if !deletion.is_live() {
            self.tomb(Tomb {
                kind: "partition",
                start: None,
                end: None,
                column: None,
                deletion: *deletion,
            })?;
        }
        self.statics.clear();
        self.statics.resize(self.plan.statics.len(), None);
        self.regulars.clear();
        self.regulars.resize(self.plan.regulars.len(), None);
        self.times.clear();
        self.times
            .resize(self.plan.statics.len() + self.plan.regulars.len(), None);
        self.rows_in_partition = 0;
        Ok(())
    }

    fn static_row(&mut self, t: &Table<'_>, row: &Row<'_>, _position: u64) -> io::Result<()> {
        self.row_tombstones(t, row, true)?;
        // Range tombstones never cover the static row.
        self.live_values(row, self.partition_deletion, true);
        Ok(())
    }

    fn row(&mut self, t: &Table<'_>, row: &Row<'_>) -> io::Result<()> {
        self.row_tombstones(t, row, false)?;
        let covering = stronger(self.partition_deletion, self.open_range);
        self.clear_regulars();
        if self.live_values(row, covering, false) {
            self.emit(t, Some(&row.clustering))?;
        }
        Ok(())
    }

    fn marker(&mut self, t: &Table<'_>, m: &RangeTombstoneMarker<'_>) -> io::Result<()> {
        use sstkit_format::clustering::BoundKind as K;
        let bound = if self.tombs.is_some() {
            clustering_text(t, &m.bound)
        } else {
            String::new()
        };
        if let Some(d) = m.close_deletion() {
            self.open_range = DeletionTime::LIVE;
            let incl = matches!(m.kind(), K::InclEndBound | K::InclEndExclStartBoundary);
            if let Some((start, start_incl)) = self.open_bound.take() {
                self.tomb(Tomb {
                    kind: "range",
                    start: Some((&start, start_incl)),
                    end: Some((&bound, incl)),
                    column: None,
                    deletion: d,
                })?;
            }
        }
        if let Some(d) = m.open_deletion() {
            self.open_range = d;
            let incl = matches!(m.kind(), K::InclStartBound | K::ExclEndInclStartBoundary);
            self.open_bound = Some((bound, incl));
        }
        Ok(())
    }

    fn partition_end(&mut self, t: &Table<'_>) -> io::Result<()> {
        // Static content alone is a row when the partition has no live row (as cql.rs).
        if self.rows_in_partition == 0
            && self.plan.n_ck > 0
            && self.statics.iter().any(Option::is_some)
        {
            self.clear_regulars();
            self.emit(t, None)?;
        }
        Ok(())
    }

    fn abort_partition(&mut self, _t: &Table<'_>) -> io::Result<()> {
        Ok(())
    }

    fn last_partition_written(&self) -> bool {
        self.rows_in_partition > 0
    }
}

/// Run the command.
pub fn run(a: &ExportArgs, out: &mut dyn Write) -> CmdResult<Outcome> {
    let decimals = Decimals::parse(&a.decimals).map_err(CmdError::Usage)?;
    let ranges = match &a.partition_by {
        None => None,
        Some(s) => match s.strip_prefix("token-range:").map(str::parse::<u64>) {
            Some(Ok(n)) if (1..=65536).contains(&n) => Some(n),
            _ => {
                return Err(CmdError::Usage(format!(
                    "--partition-by {s}: expected token-range:N with N in 1..=65536"
                )))
            }
        },
    };
    let stdout = a.output.as_os_str() == "-";
    if stdout && (ranges.is_some() || a.format == ExportFormat::Parquet) {
        return Err(CmdError::Usage(
            "--output-file -: only for -o arrow (an IPC stream) or csv, without --partition-by"
                .into(),
        ));
    }
    if ranges.is_some() && a.format != ExportFormat::Parquet {
        return Err(CmdError::Usage(
            "--partition-by: only with -o parquet".into(),
        ));
    }
    if a.row_group_rows == 0 {
        return Err(CmdError::Usage("--row-group-rows: at least 1".into()));
    }
    // What is read: the live rows, merged or not, in the token range.
    let reads = DumpPlan::export(a)?;
    let now_secs = reads.now_secs;
    // Opened as a merge in both modes: the sstables must be of one table, and
    // the union of their columns is the output's columns.
    let inputs = reads.inputs.open_merged()?;
    if !a.merge && inputs.ssts.len() > 1 {
        eprintln!(
            "sstkit: export of {} sstables without --merge: rows are written per sstable, \
             not reconciled (the same row may appear several times, deleted data may show)",
            inputs.ssts.len()
        );
    }
    let names = inputs.ssts.first().and_then(|s| s.table_schema());
    let plan = Plan::new(&inputs.schema.header, names, a.with_metadata);
    let schema = plan.schema(decimals);
    let settings = Settings {
        format: a.format,
        row_group_rows: a.row_group_rows,
        row_group_bytes: a.row_group_bytes,
        compression: a.compression,
    };
    let mut parts = Vec::new();
    if let Some(n) = ranges {
        if !matches!(
            inputs.partitioner,
            sstkit_format::token::Partitioner::Murmur3
        ) {
            return Err(CmdError::Usage(
                "--partition-by token-range: only for Murmur3Partitioner tables".into(),
            ));
        }
        std::fs::create_dir_all(&a.output).map_err(|e| {
            CmdError::Output(io::Error::new(
                e.kind(),
                format!("{}: {e}", a.output.display()),
            ))
        })?;
        for i in 0..n {
            let (s, e) = range_bounds(i, n);
            let path = a.output.join(format!("part-{i:05}-of-{n:05}.parquet"));
            let meta = vec![("sstkit.token_range".to_string(), format!("({s},{e}]"))];
            parts.push(Part::file(&path, &schema, &settings, meta)?);
        }
    } else if stdout {
        let writer = match a.format {
            ExportFormat::Arrow => Writer::IpcStream(
                arrow_ipc::writer::StreamWriter::try_new(out, &schema).map_err(arrow_err)?,
            ),
            _ => Writer::Csv(Box::new(out)),
        };
        parts.push(Part::new(writer, &schema, None));
    } else {
        parts.push(Part::file(&a.output, &schema, &settings, vec![])?);
    }
    let tombs = match &a.tombstones {
        Some(path) => {
            let n_pk = key_types(&inputs.schema.header.partition_key_type).len();
            let tplan = Plan::tombstones(&plan, n_pk);
            let tschema = tplan.schema(decimals);
            let mut part = Part::file(path, &tschema, &settings, vec![])?;
            if let Some(Writer::Csv(w)) = &mut part.writer {
                w.write_all(csv_header(&tplan).as_bytes())?;
            }
            Some((tplan, tschema, part))
        }
        None => None,
    };
    if a.format == ExportFormat::Csv {
        let header = csv_header(&plan);
        for p in &mut parts {
            if let Some(Writer::Csv(w)) = &mut p.writer {
                w.write_all(header.as_bytes())?;
            }
        }
    }
    let mut sink = ExportSink {
        plan,
        schema: schema.clone(),
        decimals,
        parts,
        ranges,
        cur: 0,
        now: now_secs,
        key: Vec::new(),
        partition_deletion: DeletionTime::LIVE,
        open_range: DeletionTime::LIVE,
        statics: Vec::new(),
        regulars: Vec::new(),
        times: Vec::new(),
        rows_in_partition: 0,
        slots: None,
        scratch: Vec::new(),
        error: None,
        rows: 0,
        tombs,
        open_bound: None,
    };
    let r = if a.merge {
        let table = Table::new(&inputs.schema.header, inputs.partitioner.clone(), now_secs);
        let sel = select::resolve(&reads.select, &table)?;
        crate::drive::merged(&reads, &inputs, &table, &sel, &mut sink)
    } else {
        let mut r = Ok(());
        for (sst, h) in inputs.ssts.iter().zip(&inputs.headers) {
            let table = Table::new(h, inputs.partitioner.clone(), now_secs);
            let sel = select::resolve(&reads.select, &table)?;
            r = crate::drive::sstable(&reads, sst, &table, &sel, &mut sink);
            if r.is_err() {
                break;
            }
        }
        r
    };
    // A batch that failed to write is the error to report.
    if let Some(e) = sink.error.take() {
        return Err(e);
    }
    r?;
    for p in &mut sink.parts {
        p.flush_rows(&sink.plan, &sink.schema, decimals)?;
        p.finish()?;
    }
    if let Some((plan, schema, part)) = &mut sink.tombs {
        part.flush_rows(plan, schema, decimals)?;
        part.finish()?;
    }
    reads.inputs.report_io(&inputs);
    Ok(Outcome::default())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use sstkit_format::value::Uuid;

    fn t(s: &str) -> CqlType {
        CqlType::parse(&format!("org.apache.cassandra.db.marshal.{s}")).unwrap()
    }

    #[test]
    fn types_map_by_width_and_kind() {
        let d = Decimals::Text;
        assert_eq!(arrow_type(&t("ByteType"), d), DataType::Int8);
        assert_eq!(arrow_type(&t("ShortType"), d), DataType::Int16);
        assert_eq!(arrow_type(&t("LongType"), d), DataType::Int64);
        assert_eq!(arrow_type(&t("CounterColumnType"), d), DataType::Int64);
        assert_eq!(arrow_type(&t("FloatType"), d), DataType::Float32);
        assert_eq!(
            arrow_type(&t("TimestampType"), d),
            DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into()))
        );
        assert_eq!(arrow_type(&t("SimpleDateType"), d), DataType::Date32);
        assert_eq!(
            arrow_type(&t("TimeType"), d),
            DataType::Time64(TimeUnit::Nanosecond)
        );
        assert_eq!(arrow_type(&t("DecimalType"), d), DataType::Utf8);
        assert_eq!(
            arrow_type(&t("DecimalType"), Decimals::D128(4)),
            DataType::Decimal128(38, 4)
        );
        assert_eq!(
            arrow_type(&t("IntegerType"), Decimals::D256(4)),
            DataType::Decimal256(76, 0)
        );
        // uuid: 16 bytes, with the canonical extension name.
        let f = arrow_field("u", &t("TimeUUIDType"), d);
        assert_eq!(f.data_type(), &DataType::FixedSizeBinary(16));
        assert_eq!(
            f.metadata().get("ARROW:extension:name").map(String::as_str),
            Some("arrow.uuid")
        );
        // Nested at any depth, frozen or not.
        let nested = t("MapType(org.apache.cassandra.db.marshal.UTF8Type,org.apache.cassandra.db.marshal.FrozenType(org.apache.cassandra.db.marshal.ListType(org.apache.cassandra.db.marshal.SetType(org.apache.cassandra.db.marshal.Int32Type))))");
        let DataType::Map(entries, false) = arrow_type(&nested, d) else {
            panic!("not a map");
        };
        let DataType::Struct(kv) = entries.data_type() else {
            panic!("entries");
        };
        assert!(!kv[0].is_nullable());
        let DataType::List(l) = kv[1].data_type() else {
            panic!("value");
        };
        assert!(matches!(l.data_type(), DataType::List(_)));
        assert_eq!(
            arrow_type(
                &t("VectorType(org.apache.cassandra.db.marshal.FloatType,3)"),
                d
            ),
            DataType::FixedSizeList(Arc::new(Field::new("item", DataType::Float32, true)), 3)
        );
    }

    #[test]
    fn dates_count_from_the_unix_epoch() {
        let vals = [Value::Date(1 << 31), Value::Date(0), Value::Date(u32::MAX)];
        let refs: Vec<Option<&Value>> = vals.iter().map(Some).collect();
        let a = build_array(&t("SimpleDateType"), &refs, Decimals::Text).unwrap();
        let a = a.as_any().downcast_ref::<Date32Array>().unwrap();
        assert_eq!(a.values().to_vec(), vec![0, i32::MIN, i32::MAX]);
    }

    #[test]
    fn decimals_rescale_exactly_or_fail() {
        let dec = |unscaled: i64, scale: i32| Value::Decimal {
            scale,
            unscaled: unscaled.to_be_bytes().to_vec(),
        };
        let vals = [dec(15, 1), dec(-7, 0)];
        let refs: Vec<Option<&Value>> = vals.iter().map(Some).chain([None]).collect();
        let ty = t("DecimalType");
        let a = build_array(&ty, &refs, Decimals::D128(2)).unwrap();
        let a = a
            .as_any()
            .downcast_ref::<PrimitiveArray<Decimal128Type>>()
            .unwrap();
        assert_eq!(a.value(0), 150);
        assert_eq!(a.value(1), -700);
        assert!(a.is_null(2));
        // Text: exactly what SELECT JSON prints.
        let a = build_array(&ty, &refs, Decimals::Text).unwrap();
        let a = a.as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!((a.value(0), a.value(1)), ("1.5", "-7"));
        // A finer scale than the column's is not rounded: an error.
        let fine = [dec(1, 3)];
        let e = build_array(&ty, &[Some(&fine[0])], Decimals::D128(2)).unwrap_err();
        assert!(e.contains("scale 3"), "{e}");
        // 40 digits do not fit Decimal128(38) but fit Decimal256(76).
        let big = Value::Varint({
            let mut b = vec![0x1d];
            b.extend([0xffu8; 16]);
            b
        });
        let vi = t("IntegerType");
        assert!(build_array(&vi, &[Some(&big)], Decimals::D128(0)).is_err());
        assert!(build_array(&vi, &[Some(&big)], Decimals::D256(0)).is_ok());
    }

    #[test]
    fn nested_values_round_trip_through_parquet() {
        use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
        let ty = t("ListType(org.apache.cassandra.db.marshal.TupleType(org.apache.cassandra.db.marshal.UUIDType,org.apache.cassandra.db.marshal.DurationType))");
        let u = Uuid([7; 16]);
        let v = Value::List(vec![
            Value::Tuple {
                values: vec![
                    Value::Uuid(u),
                    Value::Duration {
                        months: 1,
                        days: -2,
                        nanos: 3,
                    },
                ],
                present: 2,
            },
            Value::Null,
        ]);
        let a = build_array(&ty, &[Some(&v), None], Decimals::Text).unwrap();
        let schema = Arc::new(Schema::new(vec![arrow_field("c", &ty, Decimals::Text)]));
        let batch = RecordBatch::try_new(schema.clone(), vec![a]).unwrap();
        // An unnamed file: nothing is left in the temp dir even if the test panics.
        let f = tempfile::tempfile().unwrap();
        let mut w =
            parquet::arrow::ArrowWriter::try_new(f.try_clone().unwrap(), schema, None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        let r = ParquetRecordBatchReaderBuilder::try_new(f)
            .unwrap()
            .build()
            .unwrap();
        let back: Vec<RecordBatch> = r.map(Result::unwrap).collect();
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].column(0).as_ref(), batch.column(0).as_ref());
    }

    #[test]
    fn token_ranges_split_the_ring_evenly() {
        for n in [1u64, 2, 3, 8, 1000] {
            let mut prev = i64::MIN;
            for i in 0..n {
                let (s, e) = range_bounds(i, n);
                assert_eq!(s, prev);
                assert!(e > s);
                assert_eq!(range_of(s.saturating_add(1), n), i as usize, "n={n} i={i}");
                assert_eq!(range_of(e, n), i as usize, "n={n} i={i}");
                prev = e;
            }
            assert_eq!(prev, i64::MAX);
            assert_eq!(range_of(i64::MIN, n), 0);
        }
    }

    #[test]
    fn decimals_rule_parses() {
        assert_eq!(Decimals::parse("text"), Ok(Decimals::Text));
        assert_eq!(Decimals::parse("decimal128:6"), Ok(Decimals::D128(6)));
        assert_eq!(Decimals::parse("decimal256:70"), Ok(Decimals::D256(70)));
        assert!(Decimals::parse("decimal128:39").is_err());
        assert!(Decimals::parse("float").is_err());
    }
}
