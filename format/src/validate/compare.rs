//! The clustering comparator: Cassandra's `ClusteringComparator` over raw
//! serialized values, per type (C\* `o.a.c/db/ClusteringComparator.java`,
//! `o.a.c/db/ClusteringPrefix.java` `Kind`, the `compareCustom` of each
//! `o.a.c/db/marshal/*Type.java`).
//!
//! * ints (`int`, `bigint`, `smallint`, `tinyint`, `timestamp`, `time`) are
//!   signed big-endian; `float`/`double` compare as Java's `Float.compare`
//!   / `Double.compare`; `varint`/`decimal` numerically;
//! * `text`, `ascii`, `blob`, `inet`, `date`, legacy `DateType`, `boolean`
//!   and unknown types compare as unsigned bytes;
//! * `uuid`/`timeuuid` in Cassandra order (version, then timestamp, then
//!   the rest); `LexicalUUIDType` as Java `UUID.compareTo`;
//! * tuples, UDTs, frozen collections and composites component by component;
//! * `ReversedType(T)` inverts T; empty values sort first (under T);
//! * nulls sort before everything;
//! * prefixes and bounds: values first, then the kind (`ClusteringPrefix.Kind`
//!   comparison order), a shorter prefix by its kind's `comparedToClustering`.

use std::cmp::Ordering;

use crate::clustering::{BoundKind, ClusteringPrefix};
use crate::types::{CqlType, Native};

/// Compares clustering prefixes of one table.
#[derive(Debug, Clone)]
pub struct ClusteringComparator {
    types: Vec<CqlType>,
}

/// Anything that reads as a clustering prefix: a kind and values.
pub trait PrefixLike {
    /// The kind.
    fn kind(&self) -> BoundKind;
    /// Number of values.
    fn size(&self) -> usize;
    /// Value `i` (`None` = null or out of range).
    fn value(&self, i: usize) -> Option<&[u8]>;
}

impl PrefixLike for ClusteringPrefix<'_> {
    fn kind(&self) -> BoundKind {
        self.kind
    }
    fn size(&self) -> usize {
        self.values.len()
    }
    fn value(&self, i: usize) -> Option<&[u8]> {
        self.values.get(i).copied().flatten()
    }
}

/// An owned copy of a clustering prefix whose buffers are reused across
/// [`OwnedPrefix::set`] calls (no allocation per row once warm).
#[derive(Debug, Clone)]
pub struct OwnedPrefix {
    kind: BoundKind,
    values: Vec<(bool, Vec<u8>)>,
    len: usize,
}

impl Default for OwnedPrefix {
    fn default() -> Self {
        OwnedPrefix {
            kind: BoundKind::StaticClustering,
            values: Vec::new(),
            len: 0,
        }
    }
}

impl OwnedPrefix {
    /// A copy of `p`.
    pub fn of(p: &impl PrefixLike) -> OwnedPrefix {
        let mut o = OwnedPrefix::default();
        o.set(p);
        o
    }

    /// Overwrite with a copy of `p`.
    pub fn set(&mut self, p: &impl PrefixLike) {
        self.kind = p.kind();
        self.len = p.size();
        for i in 0..self.len {
            if self.values.len() <= i {
                self.values.push((false, Vec::new()));
            }
            let slot = &mut self.values[i];
            slot.1.clear();
            match p.value(i) {
                Some(v) => {
                    slot.0 = true;
                    slot.1.extend_from_slice(v);
                }
                None => slot.0 = false,
            }
        }
    }

    /// True when kind and values equal `p`'s.
    pub fn same_as(&self, p: &impl PrefixLike) -> bool {
        self.kind == p.kind()
            && self.len == p.size()
            && (0..self.len).all(|i| self.value(i) == p.value(i))
    }
}

impl PrefixLike for OwnedPrefix {
    fn kind(&self) -> BoundKind {
        self.kind
    }
    fn size(&self) -> usize {
        self.len
    }
    fn value(&self, i: usize) -> Option<&[u8]> {
        if i >= self.len {
            return None;
        }
        self.values
            .get(i)
            .and_then(|(present, v)| present.then_some(v.as_slice()))
    }
}

/// `ClusteringPrefix.Kind.comparisonOrder` and `comparedToClustering`.
fn kind_order(k: BoundKind) -> (i32, i32) {
    match k {
        BoundKind::ExclEndBound => (0, -1),
        BoundKind::InclStartBound => (0, -1),
        BoundKind::ExclEndInclStartBoundary => (0, -1),
        BoundKind::StaticClustering => (-1, -1),
        BoundKind::Clustering => (1, 0),
        BoundKind::InclEndExclStartBoundary => (2, 1),
        BoundKind::InclEndBound => (2, 1),
        BoundKind::ExclStartBound => (2, 1),
    }
}

impl ClusteringComparator {
    /// A comparator for the clustering types (from the serialization header).
    pub fn new(types: Vec<CqlType>) -> ClusteringComparator {
        ClusteringComparator { types }
    }

    /// The clustering types.
    pub fn types(&self) -> &[CqlType] {
        &self.types
    }

    /// Compare two prefixes (rows, bounds, boundaries).
    pub fn compare(&self, a: &ClusteringPrefix<'_>, b: &ClusteringPrefix<'_>) -> Ordering {
        self.compare_any(a, b)
    }

    /// Compare any two prefix-like values (borrowed or [`OwnedPrefix`]).
    pub fn compare_any(&self, a: &impl PrefixLike, b: &impl PrefixLike) -> Ordering {
        let (s1, s2) = (a.size(), b.size());
        for i in 0..s1.min(s2) {
            let c = self.compare_component(i, a.value(i), b.value(i));
            if c != Ordering::Equal {
                return c;
            }
        }
        if s1 == s2 {
            return kind_order(a.kind()).0.cmp(&kind_order(b.kind()).0);
        }
        if s1 < s2 {
            kind_order(a.kind()).1.cmp(&0)
        } else {
            0.cmp(&kind_order(b.kind()).1)
        }
    }

    /// Compare the values of clustering column `i` (`None` = null).
    pub fn compare_component(&self, i: usize, a: Option<&[u8]>, b: Option<&[u8]>) -> Ordering {
        match (a, b) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (Some(x), Some(y)) => match self.types.get(i) {
                Some(t) => compare_values(t, x, y),
                None => x.cmp(y),
            },
        }
    }
}

/// Compare two serialized values of type `t` (Cassandra's `AbstractType.compare`).
pub fn compare_values(t: &CqlType, a: &[u8], b: &[u8]) -> Ordering {
    match t {
        CqlType::Reversed(inner) => compare_values(inner, b, a),
        _ => {
            // Empty values sort first for every type (`compareCustom` guards).
            match (a.is_empty(), b.is_empty()) {
                (true, true) => return Ordering::Equal,
                (true, false) => return Ordering::Less,
                (false, true) => return Ordering::Greater,
                _ => {}
            }
            compare_non_empty(t, a, b)
        }
    }
}

fn compare_non_empty(t: &CqlType, a: &[u8], b: &[u8]) -> Ordering {
    match t {
        CqlType::Native(n) => compare_native(*n, a, b),
        CqlType::Reversed(inner) => compare_values(inner, b, a),
        CqlType::Frozen(inner) => compare_non_empty(inner, a, b),
        CqlType::Tuple(ts) => compare_fields(ts.iter(), a, b),
        CqlType::Udt { fields, .. } => compare_fields(fields.iter().map(|(_, t)| t), a, b),
        CqlType::List(e) | CqlType::Set(e) => compare_collection(&[e.as_ref()], a, b),
        CqlType::Map(k, v) => compare_collection(&[k.as_ref(), v.as_ref()], a, b),
        CqlType::Composite(ts) => compare_composite(ts, a, b),
        CqlType::Vector(e, n) => compare_vector(e, *n, a, b),
        _ => a.cmp(b),
    }
}

fn signed_be(b: &[u8]) -> Option<i128> {
    if b.is_empty() || b.len() > 16 {
        return None;
    }
    let neg = b[0] & 0x80 != 0;
    let mut v: i128 = if neg { -1 } else { 0 };
    for &x in b {
        v = (v << 8) | x as i128;
    }
    Some(v)
}

fn compare_native(n: Native, a: &[u8], b: &[u8]) -> Ordering {
    match n {
        Native::Int
        | Native::Bigint
        | Native::Smallint
        | Native::Tinyint
        | Native::Timestamp
        | Native::Time
        | Native::Counter => match (signed_be(a), signed_be(b)) {
            (Some(x), Some(y)) if a.len() == b.len() => x.cmp(&y),
            _ => a.cmp(b),
        },
        Native::Float if a.len() == 4 && b.len() == 4 => {
            let x = f32::from_be_bytes([a[0], a[1], a[2], a[3]]);
            let y = f32::from_be_bytes([b[0], b[1], b[2], b[3]]);
            java_float_cmp(x as f64, y as f64)
        }
        Native::Double if a.len() == 8 && b.len() == 8 => {
            let x = f64::from_be_bytes(arr8(a));
            let y = f64::from_be_bytes(arr8(b));
            java_float_cmp(x, y)
        }
        Native::Varint => compare_varint(a, b),
        Native::Decimal => compare_decimal(a, b),
        Native::Uuid => compare_uuid(a, b),
        Native::Timeuuid => compare_timeuuid(a, b),
        Native::LexicalUuid if a.len() == 16 && b.len() == 16 => {
            let (am, al) = (
                i64::from_be_bytes(arr8(a)),
                i64::from_be_bytes(arr8(&a[8..])),
            );
            let (bm, bl) = (
                i64::from_be_bytes(arr8(b)),
                i64::from_be_bytes(arr8(&b[8..])),
            );
            am.cmp(&bm).then(al.cmp(&bl))
        }
        _ => a.cmp(b),
    }
}

fn arr8(b: &[u8]) -> [u8; 8] {
    let mut o = [0u8; 8];
    for (d, s) in o.iter_mut().zip(b) {
        *d = *s;
    }
    o
}

/// Java `Double.compare`: -0.0 < 0.0, NaN greater than everything, NaN == NaN.
fn java_float_cmp(x: f64, y: f64) -> Ordering {
    if x.is_nan() || y.is_nan() {
        return x.is_nan().cmp(&y.is_nan());
    }
    match x.partial_cmp(&y) {
        Some(Ordering::Equal) => y.is_sign_negative().cmp(&x.is_sign_negative()),
        Some(o) => o,
        None => Ordering::Equal,
    }
}

/// Strip redundant sign-extension bytes of a two's complement integer.
fn trim_varint(b: &[u8]) -> &[u8] {
    let mut s = b;
    while s.len() > 1 && ((s[0] == 0 && s[1] & 0x80 == 0) || (s[0] == 0xff && s[1] & 0x80 != 0)) {
        s = &s[1..];
    }
    s
}

fn compare_varint(a: &[u8], b: &[u8]) -> Ordering {
    let (a, b) = (trim_varint(a), trim_varint(b));
    let (an, bn) = (a[0] & 0x80 != 0, b[0] & 0x80 != 0);
    if an != bn {
        return bn.cmp(&an);
    }
    // Same sign: longer magnitude is larger (positive) or smaller (negative);
    // same length: two's complement bytes compare as unsigned after the sign.
    match a.len().cmp(&b.len()) {
        Ordering::Equal => a.cmp(b),
        o if an => o.reverse(),
        o => o,
    }
}

/// Decimal digits of a two's complement integer, and its sign.
fn magnitude_digits(b: &[u8]) -> (bool, Vec<u8>) {
    let neg = b.first().is_some_and(|x| x & 0x80 != 0);
    // Magnitude as big-endian bytes.
    let mut mag: Vec<u8> = if neg {
        let mut v: Vec<u8> = b.iter().map(|x| !x).collect();
        for x in v.iter_mut().rev() {
            let (s, c) = x.overflowing_add(1);
            *x = s;
            if !c {
                break;
            }
        }
        v
    } else {
        b.to_vec()
    };
    let mut digits = Vec::new();
    while mag.iter().any(|&x| x != 0) {
        let mut rem = 0u32;
        for x in mag.iter_mut() {
            let cur = (rem << 8) | *x as u32;
            *x = (cur / 10) as u8;
            rem = cur % 10;
        }
        digits.push(rem as u8);
    }
    digits.reverse();
    (neg, digits)
}

fn compare_decimal(a: &[u8], b: &[u8]) -> Ordering {
    if a.len() < 4 || b.len() < 4 || a.len() > 4096 || b.len() > 4096 {
        return a.cmp(b);
    }
    let sa = i32::from_be_bytes([a[0], a[1], a[2], a[3]]) as i64;
    let sb = i32::from_be_bytes([b[0], b[1], b[2], b[3]]) as i64;
    let (na, mut da) = magnitude_digits(&a[4..]);
    let (nb, mut db) = magnitude_digits(&b[4..]);
    let (za, zb) = (da.is_empty(), db.is_empty());
    // Sign: -1, 0, 1.
    let sign = |neg: bool, zero: bool| {
        if zero {
            0
        } else if neg {
            -1
        } else {
            1
        }
    };
    let (ga, gb) = (sign(na, za), sign(nb, zb));
    if ga != gb || ga == 0 {
        return ga.cmp(&gb);
    }
    // value = 0.d1d2... x 10^(len - scale)
    let ea = da.len() as i64 - sa;
    let eb = db.len() as i64 - sb;
    while da.last() == Some(&0) {
        da.pop();
    }
    while db.last() == Some(&0) {
        db.pop();
    }
    let mag = ea.cmp(&eb).then_with(|| da.cmp(&db));
    if ga < 0 {
        mag.reverse()
    } else {
        mag
    }
}

fn uuid_version(a: &[u8]) -> u8 {
    a[6] >> 4
}

/// `TimeUUIDType.reorderTimestampBytes` of the most significant half.
fn reorder_ts(msb: u64) -> u64 {
    (msb << 48) | ((msb << 16) & 0xFFFF_0000_0000) | (msb >> 32)
}

fn signed_bytes_lsb(b: &[u8]) -> i64 {
    (u64::from_be_bytes(arr8(b)) ^ 0x0080_8080_8080_8080) as i64
}

fn compare_timeuuid(a: &[u8], b: &[u8]) -> Ordering {
    if a.len() != 16 || b.len() != 16 {
        return a.len().cmp(&b.len()).then_with(|| a.cmp(b));
    }
    let (am, bm) = (
        reorder_ts(u64::from_be_bytes(arr8(a))),
        reorder_ts(u64::from_be_bytes(arr8(b))),
    );
    (am as i64)
        .cmp(&(bm as i64))
        .then_with(|| signed_bytes_lsb(&a[8..]).cmp(&signed_bytes_lsb(&b[8..])))
}

fn compare_uuid(a: &[u8], b: &[u8]) -> Ordering {
    if a.len() != 16 || b.len() != 16 {
        return a.len().cmp(&b.len()).then_with(|| a.cmp(b));
    }
    let (va, vb) = (uuid_version(a), uuid_version(b));
    if va != vb {
        return va.cmp(&vb);
    }
    if va == 1 {
        return compare_timeuuid(a, b);
    }
    a.cmp(b)
}

/// Split `i32 len + bytes` fields (`-1` = null); None when malformed.
fn int_fields(mut b: &[u8]) -> Option<Vec<Option<&[u8]>>> {
    let mut out = Vec::new();
    while !b.is_empty() {
        if b.len() < 4 || out.len() > 65_536 {
            return None;
        }
        let n = i32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        b = &b[4..];
        if n < 0 {
            out.push(None);
            continue;
        }
        let n = n as usize;
        if n > b.len() {
            return None;
        }
        out.push(Some(&b[..n]));
        b = &b[n..];
    }
    Some(out)
}

fn compare_fields<'t>(types: impl Iterator<Item = &'t CqlType>, a: &[u8], b: &[u8]) -> Ordering {
    let (Some(fa), Some(fb)) = (int_fields(a), int_fields(b)) else {
        return a.cmp(b);
    };
    let types: Vec<&CqlType> = types.collect();
    for (i, (x, y)) in fa.iter().zip(fb.iter()).enumerate() {
        let c = match (x, y) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (Some(x), Some(y)) => match types.get(i) {
                Some(t) => compare_values(t, x, y),
                None => x.cmp(y),
            },
        };
        if c != Ordering::Equal {
            return c;
        }
    }
    fa.len().cmp(&fb.len())
}

/// Frozen list/set (one element type) or map (key and value types):
/// `i32 count` then `i32 len + bytes` per element.
fn compare_collection(types: &[&CqlType], a: &[u8], b: &[u8]) -> Ordering {
    fn split(x: &[u8]) -> Option<Vec<Option<&[u8]>>> {
        if x.len() < 4 {
            return None;
        }
        int_fields(&x[4..])
    }
    let (Some(fa), Some(fb)) = (split(a), split(b)) else {
        return a.cmp(b);
    };
    for (i, (x, y)) in fa.iter().zip(fb.iter()).enumerate() {
        let t = types[i % types.len()];
        let c = match (x, y) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (Some(x), Some(y)) => compare_values(t, x, y),
        };
        if c != Ordering::Equal {
            return c;
        }
    }
    fa.len().cmp(&fb.len())
}

/// `CompositeType`: per component `u16 len, bytes, end-of-component byte`.
fn compare_composite(types: &[CqlType], a: &[u8], b: &[u8]) -> Ordering {
    fn split(mut b: &[u8]) -> Option<Vec<(&[u8], u8)>> {
        let mut out = Vec::new();
        while !b.is_empty() {
            if b.len() < 3 {
                return None;
            }
            let n = u16::from_be_bytes([b[0], b[1]]) as usize;
            if b.len() < 3 + n {
                return None;
            }
            out.push((&b[2..2 + n], b[2 + n]));
            b = &b[3 + n..];
        }
        Some(out)
    }
    let (Some(ca), Some(cb)) = (split(a), split(b)) else {
        return a.cmp(b);
    };
    for (i, (x, y)) in ca.iter().zip(cb.iter()).enumerate() {
        let c = match types.get(i) {
            Some(t) => compare_values(t, x.0, y.0),
            None => x.0.cmp(y.0),
        };
        if c != Ordering::Equal {
            return c;
        }
        let e = (x.1 as i8).cmp(&(y.1 as i8));
        if e != Ordering::Equal {
            return e;
        }
    }
    ca.len().cmp(&cb.len())
}

fn compare_vector(e: &CqlType, n: usize, a: &[u8], b: &[u8]) -> Ordering {
    match e.fixed_len() {
        Some(l) if l > 0 && a.len() == l * n && b.len() == l * n => {
            for (x, y) in a.chunks(l).zip(b.chunks(l)) {
                let c = compare_values(e, x, y);
                if c != Ordering::Equal {
                    return c;
                }
            }
            Ordering::Equal
        }
        _ => a.cmp(b),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn t(s: &str) -> CqlType {
        CqlType::parse(s).unwrap()
    }

    #[test]
    fn ints_signed_and_reversed() {
        let int = t("Int32Type");
        let m1 = (-1i32).to_be_bytes();
        let p1 = 1i32.to_be_bytes();
        assert_eq!(compare_values(&int, &m1, &p1), Ordering::Less);
        let rev = t("ReversedType(Int32Type)");
        assert_eq!(compare_values(&rev, &m1, &p1), Ordering::Greater);
        assert_eq!(compare_values(&int, &[], &p1), Ordering::Less);
        let text = t("UTF8Type");
        assert_eq!(compare_values(&text, b"a", b"b"), Ordering::Less);
        assert_eq!(compare_values(&text, b"\xc3", b"b"), Ordering::Greater);
    }

    #[test]
    fn varint_and_decimal() {
        let v = t("IntegerType");
        assert_eq!(compare_values(&v, &[0xff], &[0x00, 0x80]), Ordering::Less);
        assert_eq!(
            compare_values(&v, &[0x01, 0x00], &[0x7f]),
            Ordering::Greater
        );
        assert_eq!(compare_values(&v, &[0xff, 0x00], &[0xff]), Ordering::Less);
        let d = t("DecimalType");
        // 1.5 (15, scale 1) vs 1.50 (150, scale 2): equal; vs 2 (2, scale 0): less.
        let d15 = [0, 0, 0, 1, 15];
        let d150 = [0, 0, 0, 2, 0, 150];
        let d2 = [0, 0, 0, 0, 2];
        let dm = [0, 0, 0, 0, 0xfe];
        assert_eq!(compare_values(&d, &d15, &d150), Ordering::Equal);
        assert_eq!(compare_values(&d, &d15, &d2), Ordering::Less);
        assert_eq!(compare_values(&d, &dm, &d15), Ordering::Less);
    }

    #[test]
    fn timeuuid_by_timestamp() {
        let tu = t("TimeUUIDType");
        // time_low differs but time_hi decides.
        let a = [0xff, 0, 0, 0, 0, 0, 0x10, 0x01, 0, 0, 0, 0, 0, 0, 0, 0];
        let b = [0x00, 0, 0, 0, 0, 0, 0x10, 0x02, 0, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(compare_values(&tu, &a, &b), Ordering::Less);
    }

    #[test]
    fn prefixes_and_bounds() {
        let c = ClusteringComparator::new(vec![t("Int32Type"), t("Int32Type")]);
        let one = 1i32.to_be_bytes();
        let two = 2i32.to_be_bytes();
        let row = |a: &'static [u8], b: &'static [u8]| ClusteringPrefix {
            kind: BoundKind::Clustering,
            values: vec![Some(a), Some(b)],
        };
        let bound = |k, v: Vec<Option<&'static [u8]>>| ClusteringPrefix { kind: k, values: v };
        let one: &'static [u8] = Box::leak(Box::new(one));
        let two: &'static [u8] = Box::leak(Box::new(two));
        let r11 = row(one, one);
        let r12 = row(one, two);
        assert_eq!(c.compare(&r11, &r12), Ordering::Less);
        let start1 = bound(BoundKind::InclStartBound, vec![Some(one)]);
        let end1 = bound(BoundKind::InclEndBound, vec![Some(one)]);
        assert_eq!(c.compare(&start1, &r11), Ordering::Less);
        assert_eq!(c.compare(&end1, &r12), Ordering::Greater);
        assert_eq!(c.compare(&start1, &end1), Ordering::Less);
        let excl_end1 = bound(BoundKind::ExclEndBound, vec![Some(one)]);
        assert_eq!(c.compare(&excl_end1, &r11), Ordering::Less);
        let top = bound(BoundKind::InclEndBound, vec![]);
        assert_eq!(c.compare(&r12, &top), Ordering::Less);
    }

    proptest! {
        #[test]
        fn ints_match_numeric_order(a: i64, b: i64) {
            let ty = t("LongType");
            prop_assert_eq!(compare_values(&ty, &a.to_be_bytes(), &b.to_be_bytes()), a.cmp(&b));
        }

        #[test]
        fn varint_matches_numeric_order(a: i64, b: i64) {
            let ty = t("IntegerType");
            prop_assert_eq!(compare_values(&ty, &a.to_be_bytes(), &b.to_be_bytes()), a.cmp(&b));
        }

        #[test]
        fn never_panics(a in proptest::collection::vec(any::<u8>(), 0..40),
                        b in proptest::collection::vec(any::<u8>(), 0..40)) {
            for s in ["DecimalType", "UUIDType", "TimeUUIDType", "FloatType",
                      "TupleType(Int32Type,UTF8Type)", "FrozenType(MapType(Int32Type,UTF8Type))",
                      "CompositeType(Int32Type,UTF8Type)", "ReversedType(DoubleType)"] {
                let ty = t(s);
                let _ = compare_values(&ty, &a, &b);
            }
        }
    }
}
