//! The clustering order: how Cassandra compares serialized values of each
//! type, and clustering prefixes (rows, range-tombstone bounds, promoted
//! index block names) with their kinds.
//!
//! C\* `o.a.c/db/ClusteringComparator.java` (`compare`, `compareComponent`),
//! `o.a.c/db/ClusteringPrefix.java` (`Kind`: `comparison`,
//! `comparedToClustering`), and each type's `compareCustom` under
//! `o.a.c/db/marshal/`:
//!
//! | type | order |
//! |---|---|
//! | int, bigint, smallint, tinyint, counter, timestamp, time | signed numeric |
//! | varint, decimal | numeric (arbitrary precision) |
//! | float, double | Java `Float.compare` / `Double.compare` (`-0.0 < 0.0`, NaN last) |
//! | boolean | false < true |
//! | timeuuid | timestamp, then the low 8 bytes as *signed* bytes |
//! | uuid | version, then timestamp (v1) or the high long unsigned, then the low long unsigned |
//! | LexicalUUIDType | Java `UUID.compareTo` (signed longs) |
//! | date | unsigned (the epoch is at 2^31) |
//! | text, ascii, blob, inet, duration, anything else | unsigned bytes |
//! | frozen list / set / map | element by element (map: key then value), then size |
//! | tuple, UDT | field by field (null first), trailing nulls ignored |
//! | vector | element by element |
//! | `ReversedType(T)` | T's order inverted (empty values included) |
//!
//! An empty value sorts before every non-empty one (before inversion by
//! `ReversedType`); a null clustering component sorts first.

use std::cmp::Ordering;

use crate::clustering::{BoundKind, ClusteringPrefix};
use crate::types::{CqlType, Native};

/// `ClusteringPrefix.Kind.comparison`.
fn kind_rank(k: BoundKind) -> i8 {
    match k {
        BoundKind::ExclEndBound
        | BoundKind::InclStartBound
        | BoundKind::ExclEndInclStartBoundary => 0,
        BoundKind::StaticClustering => 1,
        BoundKind::Clustering => 2,
        BoundKind::InclEndExclStartBoundary
        | BoundKind::InclEndBound
        | BoundKind::ExclStartBound => 3,
    }
}

/// `ClusteringPrefix.Kind.comparedToClustering`: where a prefix of this kind
/// sorts relative to the clusterings it is a prefix of.
fn compared_to_clustering(k: BoundKind) -> Ordering {
    match kind_rank(k) {
        0 | 1 => Ordering::Less,
        2 => Ordering::Equal,
        _ => Ordering::Greater,
    }
}

/// Compare two clustering prefixes of a table with clustering types `types`
/// (`ClusteringComparator.compare`): values component by component, then —
/// when one is a prefix of the other — by kind (a start bound sorts before
/// the rows it prefixes, an end bound after).
pub fn compare_clustering(
    types: &[CqlType],
    a: &ClusteringPrefix<'_>,
    b: &ClusteringPrefix<'_>,
) -> Ordering {
    let n = a.values.len().min(b.values.len());
    for i in 0..n {
        let c = compare_component(types.get(i), a.values[i], b.values[i]);
        if c != Ordering::Equal {
            return c;
        }
    }
    match a.values.len().cmp(&b.values.len()) {
        Ordering::Equal => kind_rank(a.kind).cmp(&kind_rank(b.kind)),
        Ordering::Less => compared_to_clustering(a.kind),
        Ordering::Greater => compared_to_clustering(b.kind).reverse(),
    }
}

/// `ClusteringComparator.compareComponent`: null sorts first.
fn compare_component(ty: Option<&CqlType>, a: Option<&[u8]>, b: Option<&[u8]>) -> Ordering {
    match (a, b) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(a), Some(b)) => match ty {
            Some(t) => compare_value(t, a, b),
            None => a.cmp(b),
        },
    }
}

/// Compare two serialized values of type `ty` in Cassandra's order (see the
/// module docs). Malformed values fall back to unsigned byte order.
pub fn compare_value(ty: &CqlType, a: &[u8], b: &[u8]) -> Ordering {
    compare_depth(ty, a, b, 0)
}

const MAX_DEPTH: u32 = crate::value::MAX_DEPTH;

fn compare_depth(ty: &CqlType, a: &[u8], b: &[u8], depth: u32) -> Ordering {
    if depth > MAX_DEPTH {
        return a.cmp(b);
    }
    match ty {
        CqlType::Reversed(t) => return compare_depth(t, b, a, depth + 1),
        CqlType::Frozen(t) => return compare_depth(t, a, b, depth + 1),
        _ => {}
    }
    // AbstractType.compareCustom: empty values first.
    if a.is_empty() || b.is_empty() {
        return (!a.is_empty()).cmp(&!b.is_empty());
    }
    match ty {
        CqlType::Native(n) => compare_native(*n, a, b),
        CqlType::List(e) | CqlType::Set(e) => {
            compare_collection(&[e.as_ref()], a, b, depth).unwrap_or_else(|| a.cmp(b))
        }
        CqlType::Map(k, v) => {
            compare_collection(&[k.as_ref(), v.as_ref()], a, b, depth).unwrap_or_else(|| a.cmp(b))
        }
        CqlType::Tuple(ts) => {
            let refs: Vec<&CqlType> = ts.iter().collect();
            compare_fields(&refs, a, b, depth).unwrap_or_else(|| a.cmp(b))
        }
        CqlType::Udt { fields, .. } => {
            let refs: Vec<&CqlType> = fields.iter().map(|(_, t)| t).collect();
            compare_fields(&refs, a, b, depth).unwrap_or_else(|| a.cmp(b))
        }
        CqlType::Vector(t, n) => compare_vector(t, *n, a, b, depth).unwrap_or_else(|| a.cmp(b)),
        _ => a.cmp(b),
    }
}

fn signed(x: &[u8]) -> Option<i64> {
    if x.is_empty() || x.len() > 8 {
        return None;
    }
    let mut v: i64 = if x[0] & 0x80 != 0 { -1 } else { 0 };
    for &c in x {
        v = (v << 8) | c as i64;
    }
    Some(v)
}

fn be_u64(x: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_be_bytes(x.get(at..at + 8)?.try_into().ok()?))
}

/// `TimeUUIDType.reorderTimestampBytes`.
fn reorder_timestamp(msb: u64) -> i64 {
    ((msb << 48) | ((msb << 16) & 0xFFFF_0000_0000) | (msb >> 32)) as i64
}

fn compare_native(n: Native, a: &[u8], b: &[u8]) -> Ordering {
    match n {
        Native::Int
        | Native::Bigint
        | Native::Smallint
        | Native::Tinyint
        | Native::Counter
        | Native::Timestamp
        | Native::LegacyDate
        | Native::Time => match (signed(a), signed(b)) {
            (Some(x), Some(y)) => x.cmp(&y),
            _ => a.cmp(b),
        },
        Native::Varint => compare_varint(a, b),
        Native::Decimal => compare_decimal(a, b).unwrap_or_else(|| a.cmp(b)),
        Native::Float if a.len() == 4 && b.len() == 4 => {
            let f = |x: &[u8]| f32::from_be_bytes([x[0], x[1], x[2], x[3]]) as f64;
            java_double_compare(f(a), f(b))
        }
        Native::Double if a.len() == 8 && b.len() == 8 => {
            let f = |x: &[u8]| f64::from_bits(be_u64(x, 0).unwrap_or(0));
            java_double_compare(f(a), f(b))
        }
        Native::Boolean => (a[0] != 0).cmp(&(b[0] != 0)),
        Native::Timeuuid if a.len() == 16 && b.len() == 16 => {
            let (ma, mb) = (be_u64(a, 0).unwrap_or(0), be_u64(b, 0).unwrap_or(0));
            reorder_timestamp(ma)
                .cmp(&reorder_timestamp(mb))
                .then_with(|| {
                    // Signed per-byte comparison of the low long.
                    a[8..]
                        .iter()
                        .map(|&c| c as i8)
                        .cmp(b[8..].iter().map(|&c| c as i8))
                })
        }
        Native::Uuid if a.len() == 16 && b.len() == 16 => {
            let (ma, mb) = (be_u64(a, 0).unwrap_or(0), be_u64(b, 0).unwrap_or(0));
            let (va, vb) = ((ma >> 12) & 0xf, (mb >> 12) & 0xf);
            if va != vb {
                return va.cmp(&vb);
            }
            let hi = if va == 1 {
                reorder_timestamp(ma).cmp(&reorder_timestamp(mb))
            } else {
                ma.cmp(&mb)
            };
            hi.then_with(|| be_u64(a, 8).cmp(&be_u64(b, 8)))
        }
        Native::LexicalUuid if a.len() == 16 && b.len() == 16 => {
            let s = |x: &[u8], at| be_u64(x, at).unwrap_or(0) as i64;
            s(a, 0).cmp(&s(b, 0)).then_with(|| s(a, 8).cmp(&s(b, 8)))
        }
        // date (unsigned, epoch at 2^31), text, ascii, blob, inet, duration, ...
        _ => a.cmp(b),
    }
}

/// Java `Double.compare`: `-0.0 < 0.0`, NaN after everything, NaNs equal.
fn java_double_compare(x: f64, y: f64) -> Ordering {
    match (x.is_nan(), y.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => x.total_cmp(&y),
    }
}

/// Two's complement big-endian integers of any length, numerically.
fn compare_varint(a: &[u8], b: &[u8]) -> Ordering {
    fn strip(x: &[u8]) -> &[u8] {
        // Drop redundant sign-extension bytes.
        let mut s = x;
        while s.len() > 1 && ((s[0] == 0 && s[1] & 0x80 == 0) || (s[0] == 0xff && s[1] & 0x80 != 0))
        {
            s = &s[1..];
        }
        s
    }
    let (a, b) = (strip(a), strip(b));
    let (na, nb) = (a[0] & 0x80 != 0, b[0] & 0x80 != 0);
    match (na, nb) {
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        // Same sign: a longer magnitude is larger (positive) or smaller
        // (negative); same length: bytes compare as unsigned either way.
        (false, false) => a.len().cmp(&b.len()).then_with(|| a.cmp(b)),
        (true, true) => b.len().cmp(&a.len()).then_with(|| a.cmp(b)),
    }
}

/// `decimal`: `scale:i32` + unscaled varint; compared numerically.
fn compare_decimal(a: &[u8], b: &[u8]) -> Option<Ordering> {
    // (negative, digits without leading zeros, exponent of the last digit)
    fn parts(x: &[u8]) -> Option<(bool, String, i64)> {
        let scale = i32::from_be_bytes(x.get(..4)?.try_into().ok()?);
        let unscaled = x.get(4..)?;
        if unscaled.is_empty() {
            return Some((false, String::new(), 0));
        }
        let s = crate::value::varint_to_string(unscaled);
        let (neg, d) = match s.strip_prefix('-') {
            Some(d) => (true, d),
            None => (false, s.as_str()),
        };
        let d = d.trim_start_matches('0');
        // Trailing zeros do not change the value: normalise them away.
        let t = d.trim_end_matches('0');
        let exp = -(scale as i64) + (d.len() - t.len()) as i64;
        Some((neg && !t.is_empty(), t.to_string(), exp))
    }
    let (na, da, ea) = parts(a)?;
    let (nb, db, eb) = parts(b)?;
    let sign = |neg: bool, d: &str| -> i8 {
        if d.is_empty() {
            0
        } else if neg {
            -1
        } else {
            1
        }
    };
    let (sa, sb) = (sign(na, &da), sign(nb, &db));
    if sa != sb || sa == 0 {
        return Some(sa.cmp(&sb));
    }
    // Same sign, both non-zero: compare magnitudes. The magnitude's order of
    // the leading digit is digits.len() - 1 + exp.
    let ma = da.len() as i64 + ea;
    let mb = db.len() as i64 + eb;
    let mag = ma.cmp(&mb).then_with(|| {
        // Same leading order: compare digit strings, padded with zeros.
        let n = da.len().max(db.len());
        let pa = da.bytes().chain(std::iter::repeat(b'0')).take(n);
        let pb = db.bytes().chain(std::iter::repeat(b'0')).take(n);
        pa.cmp(pb)
    });
    Some(if sa < 0 { mag.reverse() } else { mag })
}

/// `i32` count, then `i32`-length elements (`-1` = null).
struct Elements<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Elements<'a> {
    fn next(&mut self) -> Option<Option<&'a [u8]>> {
        let len = i32::from_be_bytes(self.b.get(self.i..self.i + 4)?.try_into().ok()?);
        self.i += 4;
        if len < 0 {
            return Some(None);
        }
        let v = self.b.get(self.i..self.i + len as usize)?;
        self.i += len as usize;
        Some(Some(v))
    }

    fn at_end(&self) -> bool {
        self.i >= self.b.len()
    }
}

/// `CollectionType.compareListOrSet` / `MapType.compareMaps`: element by
/// element (`types` cycles: [elem] or [key, value]), then by size.
fn compare_collection(types: &[&CqlType], a: &[u8], b: &[u8], depth: u32) -> Option<Ordering> {
    let count =
        |x: &[u8]| -> Option<i32> { Some(i32::from_be_bytes(x.get(..4)?.try_into().ok()?)) };
    let (ca, cb) = (count(a)?, count(b)?);
    let (mut ea, mut eb) = (Elements { b: a, i: 4 }, Elements { b, i: 4 });
    for _ in 0..ca.min(cb) {
        for t in types {
            let c = compare_component_value(t, ea.next()?, eb.next()?, depth);
            if c != Ordering::Equal {
                return Some(c);
            }
        }
    }
    Some(ca.cmp(&cb))
}

fn compare_component_value(
    t: &CqlType,
    a: Option<&[u8]>,
    b: Option<&[u8]>,
    depth: u32,
) -> Ordering {
    match (a, b) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(a), Some(b)) => compare_depth(t, a, b, depth + 1),
    }
}

/// `TupleType.compareCustom`: field by field, then trailing non-null fields
/// make a value larger.
fn compare_fields(types: &[&CqlType], a: &[u8], b: &[u8], depth: u32) -> Option<Ordering> {
    let (mut ea, mut eb) = (Elements { b: a, i: 0 }, Elements { b, i: 0 });
    let mut i = 0;
    while !ea.at_end() && !eb.at_end() && i < types.len() {
        let c = compare_component_value(types[i], ea.next()?, eb.next()?, depth);
        if c != Ordering::Equal {
            return Some(c);
        }
        i += 1;
    }
    while !ea.at_end() {
        if ea.next()?.is_some_and(|v| !v.is_empty()) {
            return Some(Ordering::Greater);
        }
    }
    while !eb.at_end() {
        if eb.next()?.is_some_and(|v| !v.is_empty()) {
            return Some(Ordering::Less);
        }
    }
    Some(Ordering::Equal)
}

/// `VectorType`: `n` elements, fixed-length or vint-length-prefixed.
fn compare_vector(t: &CqlType, n: usize, a: &[u8], b: &[u8], depth: u32) -> Option<Ordering> {
    fn split<'a>(t: &CqlType, n: usize, x: &'a [u8]) -> Option<Vec<&'a [u8]>> {
        let mut out = Vec::with_capacity(n.min(x.len()));
        let mut cur = crate::cur::Cur::new(x, crate::Component::Data, 0);
        for _ in 0..n {
            out.push(match t.fixed_len() {
                Some(l) => cur.bytes(l, "vector element").ok()?,
                None => cur.vint_bytes("vector element").ok()?,
            });
        }
        Some(out)
    }
    let (va, vb) = (split(t, n, a)?, split(t, n, b)?);
    for (x, y) in va.iter().zip(&vb) {
        let c = compare_depth(t, x, y, depth + 1);
        if c != Ordering::Equal {
            return Some(c);
        }
    }
    Some(Ordering::Equal)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::value::parse_cql_literal;

    fn t(s: &str) -> CqlType {
        CqlType::parse(s).unwrap()
    }

    fn cmp(ty: &str, a: &str, b: &str) -> Ordering {
        let ty = t(ty);
        let (x, y) = (
            parse_cql_literal(&ty, a).unwrap(),
            parse_cql_literal(&ty, b).unwrap(),
        );
        compare_value(&ty, &x, &y)
    }

    #[test]
    fn natives() {
        use Ordering::*;
        assert_eq!(cmp("Int32Type", "-1", "1"), Less);
        assert_eq!(cmp("LongType", "-5", "-6"), Greater);
        assert_eq!(cmp("ShortType", "-300", "2"), Less);
        assert_eq!(cmp("ByteType", "-1", "0"), Less);
        assert_eq!(cmp("IntegerType", "-129", "-128"), Less);
        assert_eq!(cmp("IntegerType", "128", "127"), Greater);
        assert_eq!(cmp("IntegerType", "-1", "100000000000000000000"), Less);
        assert_eq!(cmp("IntegerType", "-100000000000000000000", "-1"), Less);
        assert_eq!(cmp("DecimalType", "1.50", "1.5"), Equal);
        assert_eq!(cmp("DecimalType", "-1.5", "1"), Less);
        assert_eq!(cmp("DecimalType", "10", "9.99"), Greater);
        assert_eq!(cmp("DecimalType", "-10", "-9.99"), Less);
        assert_eq!(cmp("DecimalType", "0.001", "0"), Greater);
        assert_eq!(cmp("DecimalType", "1E+3", "999"), Greater);
        assert_eq!(cmp("DoubleType", "-0.0", "0.0"), Less);
        assert_eq!(cmp("DoubleType", "NaN", "Infinity"), Greater);
        assert_eq!(cmp("FloatType", "-1.5", "-1"), Less);
        assert_eq!(cmp("BooleanType", "false", "true"), Less);
        assert_eq!(cmp("UTF8Type", "a", "b"), Less);
        assert_eq!(cmp("UTF8Type", "é", "z"), Greater);
        assert_eq!(cmp("BytesType", "0x80", "0x7f"), Greater);
        assert_eq!(cmp("TimestampType", "-1", "1"), Less);
        assert_eq!(cmp("SimpleDateType", "1969-12-31", "1970-01-01"), Less);
        // Version 1 UUIDs by time, not by bytes.
        let early = "00000000-0000-1000-8000-000000000000";
        let late = "ffffffff-0000-1000-8000-000000000000";
        let later = "00000000-0001-1000-8000-000000000000";
        assert_eq!(cmp("TimeUUIDType", early, late), Less);
        assert_eq!(cmp("TimeUUIDType", late, later), Less);
        // Low long as signed bytes.
        assert_eq!(
            cmp(
                "TimeUUIDType",
                "00000000-0000-1000-8000-000000000000",
                "00000000-0000-1000-7f00-000000000000"
            ),
            Less
        );
        // uuid: version first, then unsigned.
        assert_eq!(
            cmp(
                "UUIDType",
                "ffffffff-ffff-1fff-bfff-ffffffffffff",
                "00000000-0000-4000-8000-000000000000"
            ),
            Less
        );
        assert_eq!(
            cmp(
                "UUIDType",
                "10000000-0000-4000-8000-000000000000",
                "f0000000-0000-4000-8000-000000000000"
            ),
            Less
        );
        // Empty sorts first; reversed inverts.
        let i = t("Int32Type");
        assert_eq!(compare_value(&i, &[], &[0, 0, 0, 0]), Less);
        let r = t("ReversedType(Int32Type)");
        assert_eq!(compare_value(&r, &[0, 0, 0, 1], &[0, 0, 0, 2]), Greater);
        assert_eq!(compare_value(&r, &[], &[0, 0, 0, 0]), Greater);
    }

    #[test]
    fn collections_and_tuples() {
        use Ordering::*;
        let l = "FrozenType(ListType(Int32Type))";
        assert_eq!(cmp(l, "[1, 2]", "[1, 3]"), Less);
        assert_eq!(cmp(l, "[1, 2]", "[1]"), Greater);
        assert_eq!(cmp(l, "[-1, 5]", "[1]"), Less);
        let m = "FrozenType(MapType(Int32Type,UTF8Type))";
        assert_eq!(cmp(m, "{1: 'b'}", "{1: 'a', 2: 'a'}"), Greater);
        let tt = "TupleType(Int32Type,UTF8Type)";
        assert_eq!(cmp(tt, "(1, 'a')", "(1, 'b')"), Less);
        assert_eq!(cmp(tt, "(-1, 'z')", "(1, 'a')"), Less);
        assert_eq!(cmp(tt, "(1, null)", "(1, 'a')"), Less);
    }

    fn prefix(kind: BoundKind, vals: &[&'static [u8]]) -> ClusteringPrefix<'static> {
        ClusteringPrefix {
            kind,
            values: vals.iter().map(|v| Some(*v)).collect(),
        }
    }

    #[test]
    fn prefixes_and_kinds() {
        use BoundKind::*;
        use Ordering::*;
        let types = [t("Int32Type"), t("UTF8Type")];
        let one: &[u8] = &[0, 0, 0, 1];
        let two: &[u8] = &[0, 0, 0, 2];
        let row = prefix(Clustering, &[one, b"m"]);
        // Start bound on a prefix sorts before the rows it prefixes, end after.
        assert_eq!(
            compare_clustering(&types, &prefix(InclStartBound, &[one]), &row),
            Less
        );
        assert_eq!(
            compare_clustering(&types, &prefix(ExclEndBound, &[one]), &row),
            Less
        );
        assert_eq!(
            compare_clustering(&types, &prefix(InclEndBound, &[one]), &row),
            Greater
        );
        assert_eq!(
            compare_clustering(&types, &prefix(ExclStartBound, &[one]), &row),
            Greater
        );
        assert_eq!(
            compare_clustering(&types, &row, &prefix(ExclStartBound, &[one])),
            Less
        );
        assert_eq!(
            compare_clustering(
                &types,
                &prefix(InclEndBound, &[one]),
                &prefix(InclStartBound, &[two])
            ),
            Less
        );
        // Same values: by kind.
        let full = |k| prefix(k, &[one, b"m"]);
        assert_eq!(
            compare_clustering(&types, &full(InclStartBound), &row),
            Less
        );
        assert_eq!(
            compare_clustering(&types, &full(InclEndBound), &row),
            Greater
        );
        assert_eq!(
            compare_clustering(
                &types,
                &full(ExclEndInclStartBoundary),
                &full(InclStartBound)
            ),
            Equal
        );
        assert_eq!(compare_clustering(&types, &row, &row), Equal);
        // Empty prefix bounds: the whole partition.
        assert_eq!(
            compare_clustering(&types, &prefix(InclStartBound, &[]), &row),
            Less
        );
        assert_eq!(
            compare_clustering(&types, &prefix(InclEndBound, &[]), &row),
            Greater
        );
        // Null component first.
        let null = ClusteringPrefix {
            kind: Clustering,
            values: vec![None, Some(&b"m"[..])],
        };
        assert_eq!(compare_clustering(&types, &null, &row), Less);
    }
}
