//! Export's Arrow batches as the types Spark's Arrow reader takes (the
//! table in `sstkit/spark.py`): uuid as its 36-character text, time as
//! Int64 nanoseconds, timestamps in microseconds, vectors as lists, every
//! field nullable. Done here, on the reading thread, so that a Spark task's
//! Python worker neither converts nor holds a second copy of each batch.

use std::sync::Arc;

use arrow_array::types::{
    Int64Type, TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType,
};
use arrow_array::{
    Array, ArrayRef, ArrowPrimitiveType, FixedSizeBinaryArray, FixedSizeListArray, ListArray,
    MapArray, PrimitiveArray, RecordBatch, StringArray, StructArray, Time64NanosecondArray,
};
use arrow_buffer::{Buffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, FieldRef, Fields, Schema, SchemaRef, TimeUnit};

/// Why a value has no Spark form.
pub type Error = String;

fn is_uuid(f: &Field) -> bool {
    f.metadata().get("ARROW:extension:name").map(String::as_str) == Some("arrow.uuid")
}

/// The Spark-friendly field of an export field (always nullable, no extension).
fn spark_field(f: &Field) -> Field {
    Field::new(f.name(), spark_type(f), true)
}

fn spark_type(f: &Field) -> DataType {
    if is_uuid(f) {
        return DataType::Utf8;
    }
    match f.data_type() {
        DataType::Time64(_) => DataType::Int64,
        DataType::Timestamp(_, _) => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        DataType::List(c) | DataType::FixedSizeList(c, _) => {
            DataType::List(Arc::new(Field::new("element", spark_type(c), true)))
        }
        // Map keys stay non-null, as Arrow requires.
        DataType::Map(entries, sorted) => {
            let DataType::Struct(kv) = entries.data_type() else {
                return f.data_type().clone();
            };
            let [k, v] = &kv[..] else {
                return f.data_type().clone();
            };
            let key = Field::new(k.name(), spark_type(k), false);
            let value = spark_field(v);
            let entries = Field::new(
                entries.name(),
                DataType::Struct(Fields::from(vec![key, value])),
                false,
            );
            DataType::Map(Arc::new(entries), *sorted)
        }
        DataType::Struct(fs) => DataType::Struct(fs.iter().map(|c| spark_field(c)).collect()),
        t => t.clone(),
    }
}

/// The schema the converted batches have.
pub fn schema(s: &Schema) -> SchemaRef {
    Arc::new(Schema::new(
        s.fields()
            .iter()
            .map(|f| spark_field(f))
            .collect::<Vec<_>>(),
    ))
}

/// `b` converted to `target` (from [`schema`] of `b`'s schema).
pub fn batch(b: &RecordBatch, target: &SchemaRef) -> Result<RecordBatch, Error> {
    let cols = b
        .schema()
        .fields()
        .iter()
        .zip(b.columns())
        .zip(target.fields())
        .map(|((f, a), t)| convert(f, a, t.data_type()))
        .collect::<Result<Vec<_>, _>>()?;
    RecordBatch::try_new(target.clone(), cols).map_err(|e| e.to_string())
}

fn convert(f: &Field, a: &ArrayRef, target: &DataType) -> Result<ArrayRef, Error> {
    if a.data_type() == target && !is_uuid(f) {
        return Ok(a.clone());
    }
    if is_uuid(f) {
        return Ok(Arc::new(uuid_text(array::<FixedSizeBinaryArray>(f, a)?)));
    }
    let child = |t: &DataType| match t {
        DataType::List(c) => Ok(c.clone()),
        _ => Err(format!("column {}: no list type to convert to", f.name())),
    };
    match f.data_type() {
        DataType::Time64(TimeUnit::Nanosecond) => {
            let t = array::<Time64NanosecondArray>(f, a)?;
            Ok(Arc::new(t.reinterpret_cast::<Int64Type>()))
        }
        DataType::Timestamp(unit, _) => Ok(Arc::new(micros(f, a, unit)?)),
        DataType::List(c) => {
            let l = array::<ListArray>(f, a)?;
            let to = child(target)?;
            let values = convert(c, l.values(), to.data_type())?;
            let l = ListArray::try_new(to, l.offsets().clone(), values, l.nulls().cloned());
            Ok(Arc::new(l.map_err(|e| e.to_string())?))
        }
        DataType::FixedSizeList(c, n) => {
            let l = array::<FixedSizeListArray>(f, a)?;
            let to = child(target)?;
            let values = convert(c, l.values(), to.data_type())?;
            let n = *n as usize;
            let offsets = OffsetBuffer::from_lengths(std::iter::repeat_n(n, l.len()));
            let l = ListArray::try_new(to, offsets, values, l.nulls().cloned());
            Ok(Arc::new(l.map_err(|e| e.to_string())?))
        }
        DataType::Map(_, _) => {
            let m = array::<MapArray>(f, a)?;
            let DataType::Map(to, sorted) = target else {
                return Err(format!("column {}: no map type to convert to", f.name()));
            };
            let entries = struct_of(m.entries(), to.data_type())?;
            let m = MapArray::try_new(
                to.clone(),
                m.offsets().clone(),
                entries,
                m.nulls().cloned(),
                *sorted,
            );
            Ok(Arc::new(m.map_err(|e| e.to_string())?))
        }
        DataType::Struct(_) => {
            let s = array::<StructArray>(f, a)?;
            Ok(Arc::new(struct_of(s, target)?))
        }
        _ => Err(format!(
            "column {}: no Spark form of {} as {}",
            f.name(),
            a.data_type(),
            target
        )),
    }
}

/// `a` as the array type its field declares.
fn array<'a, T: 'static>(f: &Field, a: &'a ArrayRef) -> Result<&'a T, Error> {
    a.as_any().downcast_ref::<T>().ok_or_else(|| {
        format!(
            "column {}: an array that is not of its type {}",
            f.name(),
            f.data_type()
        )
    })
}

fn struct_of(s: &StructArray, target: &DataType) -> Result<StructArray, Error> {
    let DataType::Struct(to) = target else {
        return Err("no struct type to convert to".into());
    };
    let DataType::Struct(from) = s.data_type() else {
        return Err("struct column".into());
    };
    let kids = from
        .iter()
        .zip(s.columns())
        .zip(to.iter())
        .map(|((f, a), t): ((&FieldRef, &ArrayRef), &FieldRef)| convert(f, a, t.data_type()))
        .collect::<Result<Vec<_>, _>>()?;
    StructArray::try_new(to.clone(), kids, s.nulls().cloned()).map_err(|e| e.to_string())
}

/// Timestamps in microseconds; a value whose microseconds do not fit 64 bits
/// (beyond year 294,247) is an error, as pyarrow's safe cast makes it.
fn micros(
    f: &Field,
    a: &ArrayRef,
    unit: &TimeUnit,
) -> Result<PrimitiveArray<TimestampMicrosecondType>, Error> {
    fn scale<T: ArrowPrimitiveType<Native = i64>>(
        f: &Field,
        a: &ArrayRef,
        by: i64,
    ) -> Result<PrimitiveArray<TimestampMicrosecondType>, Error> {
        // try_unary skips null slots, whatever they hold.
        array::<PrimitiveArray<T>>(f, a)?
            .try_unary(|v| v.checked_mul(by).ok_or(v))
            .map_err(|v| {
                format!(
                    "column {}: timestamp {v} ({}) is beyond what Spark's microsecond timestamps hold",
                    f.name(),
                    f.data_type()
                )
            })
    }
    let out = match unit {
        TimeUnit::Second => scale::<TimestampSecondType>(f, a, 1_000_000)?,
        TimeUnit::Millisecond => scale::<TimestampMillisecondType>(f, a, 1_000)?,
        TimeUnit::Microsecond => scale::<TimestampMicrosecondType>(f, a, 1)?,
        TimeUnit::Nanosecond => {
            array::<PrimitiveArray<TimestampNanosecondType>>(f, a)?.unary(|v| v.div_euclid(1_000))
        }
    };
    Ok(out.with_timezone("UTC"))
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// The 36-character texts of 16-byte uuids (null slots are empty).
fn uuid_text(a: &FixedSizeBinaryArray) -> StringArray {
    let mut text = Vec::with_capacity(a.len() * 36);
    let mut offsets = Vec::with_capacity(a.len() + 1);
    offsets.push(0i32);
    for i in 0..a.len() {
        if a.is_valid(i) {
            for (j, b) in a.value(i).iter().enumerate() {
                if matches!(j, 4 | 6 | 8 | 10) {
                    text.push(b'-');
                }
                text.push(HEX[usize::from(b >> 4)]);
                text.push(HEX[usize::from(b & 15)]);
            }
        }
        offsets.push(text.len() as i32);
    }
    let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
    StringArray::new(offsets, Buffer::from(text), a.nulls().cloned())
}
