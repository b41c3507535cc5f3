//! CQL values as Arrow: each CQL type's Arrow type and field, and the
//! arrays of decoded values (`export`'s Arrow, Parquet and CSV outputs).

use std::sync::Arc;

use arrow_array::types::{Decimal128Type, Decimal256Type};
use arrow_array::{
    Array, ArrayRef, BinaryArray, BooleanArray, Date32Array, FixedSizeBinaryArray,
    FixedSizeListArray, Float32Array, Float64Array, Int16Array, Int32Array, Int64Array, Int8Array,
    ListArray, MapArray, PrimitiveArray, StringArray, StructArray, Time64NanosecondArray,
    TimestampMillisecondArray,
};
use arrow_buffer::{i256, NullBuffer, OffsetBuffer};
use arrow_schema::{DataType, Field, Fields, TimeUnit};
use sstkit_format::types::{CqlType, Native};
use sstkit_format::value::Value;

use crate::render::{render, Form};

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
pub(crate) fn base(ty: &CqlType) -> &CqlType {
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
pub(crate) fn some_value(v: &Value) -> Option<&Value> {
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
