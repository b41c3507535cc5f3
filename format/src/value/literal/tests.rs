//! Literal parsing tests.

use super::*;
use crate::value::Value;

fn t(s: &str) -> CqlType {
    CqlType::parse(s).unwrap()
}

#[test]
fn natives() {
    assert_eq!(
        parse_cql_literal(&t("Int32Type"), "42").unwrap(),
        42i32.to_be_bytes()
    );
    assert_eq!(
        parse_cql_literal(&t("Int32Type"), "'-7'").unwrap(),
        (-7i32).to_be_bytes()
    );
    assert!(parse_cql_literal(&t("ShortType"), "40000").is_err());
    assert_eq!(
        parse_cql_literal(&t("UTF8Type"), "'it''s'").unwrap(),
        b"it's"
    );
    assert_eq!(parse_cql_literal(&t("UTF8Type"), "a:b ").unwrap(), b"a:b ");
    assert_eq!(
        parse_cql_literal(&t("BytesType"), "0xCAFE").unwrap(),
        vec![0xCA, 0xFE]
    );
    assert_eq!(
        parse_cql_literal(&t("IntegerType"), "-129").unwrap(),
        vec![0xFF, 0x7F]
    );
    assert_eq!(
        parse_cql_literal(&t("IntegerType"), "128").unwrap(),
        vec![0x00, 0x80]
    );
    assert_eq!(
        parse_cql_literal(&t("IntegerType"), "0").unwrap(),
        vec![0x00]
    );
    let d = parse_cql_literal(&t("DecimalType"), "-1.50E+3").unwrap();
    assert_eq!(d, [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x6A].to_vec()); // scale -1, unscaled -150
    let ts = parse_cql_literal(&t("TimestampType"), "'2023-11-14 22:13:20.000000+0000'").unwrap();
    assert_eq!(ts, 1_700_000_000_000i64.to_be_bytes());
    let ts = parse_cql_literal(&t("TimestampType"), "2023-11-14T23:13:20.5+01:00").unwrap();
    assert_eq!(ts, 1_700_000_000_500i64.to_be_bytes());
    assert_eq!(
        parse_cql_literal(&t("SimpleDateType"), "1970-01-02").unwrap(),
        ((1u32 << 31) + 1).to_be_bytes()
    );
    assert_eq!(
        parse_cql_literal(&t("TimeType"), "'00:00:01.5'").unwrap(),
        1_500_000_000i64.to_be_bytes()
    );
    let hour = 3_600_000_000_000;
    let du = parse_cql_literal(&t("DurationType"), "1mo2d3h").unwrap();
    assert_eq!(
        super::super::decode(&t("DurationType"), &du).unwrap(),
        Value::Duration {
            months: 1,
            days: 2,
            nanos: 3 * hour
        }
    );
    let du = parse_cql_literal(&t("DurationType"), "P1Y2M3DT4H").unwrap();
    assert_eq!(
        super::super::decode(&t("DurationType"), &du).unwrap(),
        Value::Duration {
            months: 14,
            days: 3,
            nanos: 4 * hour
        }
    );
    assert_eq!(
        parse_cql_literal(&t("InetAddressType"), "'::1'")
            .unwrap()
            .len(),
        16
    );
    assert!(parse_cql_literal(&t("TimeUUIDType"), "920730fc-d583-4933-83b2-3370160b1bf2").is_err());
    assert_eq!(
        parse_cql_literal(&t("BooleanType"), "TRUE").unwrap(),
        vec![1]
    );
    assert_eq!(
        parse_cql_literal(&t("DoubleType"), "NaN").unwrap(),
        f64::NAN.to_be_bytes()
    );
}

#[test]
fn collections_sorted() {
    let st = t("FrozenType(SetType(Int32Type))");
    let b = parse_cql_literal(&st, "{3, 1, 2, 1}").unwrap();
    assert_eq!(
        super::super::decode(&st, &b).unwrap(),
        Value::Set(vec![Value::Int(1), Value::Int(2), Value::Int(3)])
    );
    let mt = t("FrozenType(MapType(UTF8Type,Int32Type))");
    let b = parse_cql_literal(&mt, "{'b': 2, 'a': null}").unwrap();
    assert_eq!(
        super::super::decode(&mt, &b).unwrap(),
        Value::Map(vec![
            (Value::Text("a".into()), Value::Null),
            (Value::Text("b".into()), Value::Int(2))
        ])
    );
    let tt = t("TupleType(Int32Type,UTF8Type)");
    let b = parse_cql_literal(&tt, "(1, 'x')").unwrap();
    assert_eq!(
        super::super::decode(&tt, &b).unwrap(),
        Value::Tuple {
            values: vec![Value::Int(1), Value::Text("x".into())],
            present: 2
        }
    );
    let ut = t("FrozenType(UserType(ks,61,78:Int32Type,4e616d65:UTF8Type))");
    let b = parse_cql_literal(&ut, "{\"Name\": 'n', x: 5}").unwrap();
    // Fields in declared order, whatever the literal's order.
    assert_eq!(b, parse_cql_literal(&ut, "{x: 5, \"Name\": 'n'}").unwrap());
    assert_eq!(
        b,
        [&[0, 0, 0, 4, 0, 0, 0, 5, 0, 0, 0, 1][..], b"n"].concat()
    );
    assert!(parse_cql_literal(&ut, "{y: 1}").is_err());
    let vt = t("VectorType(FloatType,2)");
    assert_eq!(parse_cql_literal(&vt, "[1.5, 2]").unwrap().len(), 8);
    assert!(parse_cql_literal(&vt, "[1.5]").is_err());
}

#[test]
fn composite_args() {
    assert_eq!(split_composite_key_arg("a:b"), vec!["a", "b"]);
    assert_eq!(split_composite_key_arg("a\\:b:c"), vec!["a:b", "c"]);
    assert_eq!(split_composite_key_arg("x\\!:y"), vec!["x\\", "y"]);
    assert!(split_composite_key_arg("").is_empty());
    let kt = t("CompositeType(UTF8Type,Int32Type)");
    let b = parse_key_arg(&kt, "sa:11").unwrap();
    assert_eq!(b, vec![0, 2, b's', b'a', 0, 0, 4, 0, 0, 0, 11, 0]);
    assert!(parse_key_arg(&kt, "sa").is_err());
}

#[test]
fn epoch_seconds_or_timestamps() {
    assert_eq!(parse_epoch_seconds("1700000000").unwrap(), 1_700_000_000);
    assert_eq!(parse_epoch_seconds("-5").unwrap(), -5);
    assert_eq!(
        parse_epoch_seconds("2023-11-14T22:13:20Z").unwrap(),
        1_700_000_000
    );
    assert_eq!(
        parse_epoch_seconds("2023-11-14 23:13:20.999+0100").unwrap(),
        1_700_000_000
    );
    assert_eq!(parse_epoch_seconds("2023-11-14").unwrap(), 1_699_920_000);
    assert!(parse_epoch_seconds("yesterday").is_err());
    assert!(parse_epoch_seconds("99999999999999999999").is_err());
}

#[test]
fn composite_printed_forms() {
    let ts = t("CompositeType(TimestampType,InetAddressType,TimeType)");
    let want = parse_key_arg(
        &ts,
        "2042-05-16T13\\:28\\:02.000Z:fe80\\:\\:94fe:10\\:30\\:00",
    )
    .unwrap();
    // The printed form (read back from the renderer's output in
    // `commands`' render tests) (colons unescaped), a tuple, and the comma list;
    // a time as bare nanoseconds would make the short IPv6 form ambiguous.
    for arg in [
        "2042-05-16T13:28:02.000Z:fe80:0:0:0:0:0:0:94fe:10:30:00.000000000",
        "2042-05-16T13:28:02.000Z:fe80::94fe:10:30:00.000000000",
        "('2042-05-16 13:28:02Z', 'fe80::94fe', '10:30:00')",
        "'2042-05-16T13:28:02.000Z', 'fe80::94fe', '10:30:00'",
        "'2042-05-16T13:28:02.000Z':'fe80::94fe':'10:30:00'",
    ] {
        assert_eq!(parse_key_arg(&ts, arg).unwrap(), want, "{arg}");
    }
    let tt = t("CompositeType(UTF8Type,UTF8Type)");
    let e = parse_key_arg(&tt, "a:b:c").unwrap_err().to_string();
    assert!(e.contains("ambiguous") && e.contains("'\\:'"), "{e}");
    assert_eq!(
        parse_components(&[t("UTF8Type"), t("UTF8Type")], "a\\:b:c", false).unwrap(),
        vec![b"a:b".to_vec(), b"c".to_vec()]
    );
    let it = [t("Int32Type"), t("Int32Type"), t("Int32Type")];
    let e = parse_components(&it, "1:x", true).unwrap_err().to_string();
    assert!(
        e.contains("component 2 (int) 'x'") && e.contains("'\\:'"),
        "{e}"
    );
    assert_eq!(parse_components(&it, "(1, 2)", true).unwrap().len(), 2);
    assert!(parse_components(&it, "1:2", false).is_err());
    assert!(parse_components(&it, "1:2:3:4", true).is_err());
    // A text component keeps a colon it was given quoted.
    let mixed = [t("UTF8Type"), t("Int32Type")];
    assert_eq!(
        parse_components(&mixed, "'a:b':5", false).unwrap(),
        vec![b"a:b".to_vec(), 5i32.to_be_bytes().to_vec()]
    );
    // Many pieces are refused, not searched.
    let long = vec!["1"; 300].join(":");
    assert!(parse_components(&it, &long, true).is_err());
}
