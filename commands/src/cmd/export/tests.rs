//! Export's tests: the Arrow types and arrays of CQL values, token ranges,
//! the decimals rule.

use arrow_array::types::Decimal128Type;
use arrow_array::{Array, Date32Array, PrimitiveArray, StringArray};
use arrow_schema::{DataType, Field, TimeUnit};
use sstkit_format::value::Uuid;

use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::Schema;

use sstkit_format::types::CqlType;
use sstkit_format::value::Value;

use super::*;
use crate::arrow::arrow_type;
use crate::arrow::{arrow_field, build_array};

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
    let mut w = parquet::arrow::ArrowWriter::try_new(f.try_clone().unwrap(), schema, None).unwrap();
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

#[test]
fn rows_appended_at_once_equal_rows_pushed_one_by_one() {
    // Values, nulls and empty values, in runs that start and end with any of them.
    let values: Vec<Option<Vec<u8>>> = (0..40u8)
        .map(|i| match i % 5 {
            0 => None,
            1 => Some(Vec::new()),
            _ => Some(vec![i; usize::from(i % 7)]),
        })
        .collect();
    let mut from = part::ColBuf::default();
    for v in &values {
        from.push(v.as_deref());
    }
    let mut nulls = part::ColBuf::default();
    nulls.push(None);
    nulls.push(None);
    for lo in 0..values.len() {
        for hi in lo..=values.len() {
            // Appended after rows already there, as a batch fills.
            let (mut at_once, mut one_by_one) = (part::ColBuf::default(), part::ColBuf::default());
            for b in [&mut at_once, &mut one_by_one] {
                b.push(Some(b"before"));
                b.push(None);
            }
            at_once.extend_rows(&from, lo..hi);
            for i in lo..hi {
                one_by_one.push(from.get(i));
            }
            assert_eq!(at_once.data, one_by_one.data, "{lo}..{hi}");
            assert_eq!(at_once.spans, one_by_one.spans, "{lo}..{hi}");
        }
    }
    let mut b = part::ColBuf::default();
    b.extend_rows(&nulls, 0..2);
    assert_eq!(b.spans, vec![None, None]);
    assert!(b.data.is_empty());
}
