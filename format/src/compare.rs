//! The clustering order: how Cassandra compares serialized values of each
//! type, and clustering prefixes (rows, range-tombstone bounds, promoted
//! index block names) with their kinds. The one comparator of the crate:
//! the bounded reader, `validate` and `scrub` all sort through it.
//!
//! C\* `o.a.c/db/ClusteringComparator.java` (`compare`, `compareComponent`),
//! `o.a.c/db/ClusteringPrefix.java` (`Kind`: `comparison`,
//! `comparedToClustering`), and each type's `compareCustom` (or byte order)
//! under `o.a.c/db/marshal/`:
//!
//! | type | order |
//! |---|---|
//! | int, bigint, smallint, timestamp, counter | first byte signed, then all bytes unsigned (`LongType.compareLongs`): numeric |
//! | tinyint | the first byte, signed (`ByteType`) |
//! | varint, decimal | numeric (arbitrary precision; `1.50 == 1.5`) |
//! | float, double | Java `Float.compare` / `Double.compare` (`-0.0 < 0.0`, NaN last) |
//! | boolean | false (0) < true (any other byte) |
//! | timeuuid | timestamp, then the low 8 bytes as *signed* bytes |
//! | uuid | version, then timestamp (v1) or the high long unsigned, then the low long unsigned |
//! | timeuuid, uuid of another length than 16 | before any 16-byte value |
//! | LexicalUUIDType | Java `UUID.compareTo` (signed longs) |
//! | date, time, legacy `DateType` | unsigned bytes (`BYTE_ORDER`; pre-1970 `DateType` values sort last) |
//! | text, ascii, blob, inet, duration, anything else | unsigned bytes |
//! | `EmptyType` | all values equal |
//! | frozen list / set / map | element by element (map: key then value), then count |
//! | tuple, UDT | field by field (null first); trailing null or empty fields ignored |
//! | CompositeType | static marker first, then component by component with the end-of-component byte (signed) |
//! | vector | element by element (fixed-length or vint-length-prefixed elements) |
//! | `ReversedType(T)` | T's order inverted (empty values included) |
//!
//! An empty value sorts before every non-empty one (before inversion by
//! `ReversedType`); a null clustering component sorts first. Malformed
//! values never panic: they fall back to unsigned byte order.

use std::cmp::Ordering;

use crate::clustering::{BoundKind, ClusteringPrefix};
use crate::cur::Cur;
use crate::types::{CqlType, Native, MAX_DEPTH};
use crate::Component;

// ------------------------------------------------------------- prefixes

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
#[derive(Debug, Clone, Eq)]
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

impl PartialEq for OwnedPrefix {
    /// Kind and values (the buffers past the length are not compared).
    fn eq(&self, other: &Self) -> bool {
        self.same_as(other)
    }
}

impl PrefixLike for crate::clustering::OwnedClustering {
    fn kind(&self) -> BoundKind {
        self.kind
    }
    fn size(&self) -> usize {
        self.values.len()
    }
    fn value(&self, i: usize) -> Option<&[u8]> {
        self.values.get(i).and_then(|v| v.as_deref())
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
    match k {
        BoundKind::Clustering => Ordering::Equal,
        BoundKind::InclEndExclStartBoundary
        | BoundKind::InclEndBound
        | BoundKind::ExclStartBound => Ordering::Greater,
        _ => Ordering::Less,
    }
}

/// Compares clustering prefixes of one table (`ClusteringComparator`).
#[derive(Debug, Clone)]
pub struct ClusteringComparator {
    types: Vec<CqlType>,
    /// Every column is an ascending signed integer (`int`, `bigint`,
    /// `smallint`, `timestamp`): values of one length compare as numbers,
    /// without walking the type.
    all_ints: bool,
}

impl ClusteringComparator {
    /// A comparator for the clustering types (from the serialization header).
    pub fn new(types: Vec<CqlType>) -> ClusteringComparator {
        let all_ints = types.iter().all(|t| {
            matches!(
                t,
                CqlType::Native(
                    Native::Int | Native::Bigint | Native::Smallint | Native::Timestamp
                )
            )
        });
        ClusteringComparator { types, all_ints }
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
    #[inline]
    pub fn compare_any(&self, a: &impl PrefixLike, b: &impl PrefixLike) -> Ordering {
        if self.all_ints {
            return compare_prefixes_by(a, b, |i, x, y| match (x, y) {
                (Some(x), Some(y)) if x.len() == y.len() && (1..=8).contains(&x.len()) => {
                    signed_be(x).cmp(&signed_be(y))
                }
                _ => compare_component(self.types.get(i), x, y),
            });
        }
        compare_prefixes(&self.types, a, b)
    }

    /// Compare the values of clustering column `i` (`None` = null).
    pub fn compare_component(&self, i: usize, a: Option<&[u8]>, b: Option<&[u8]>) -> Ordering {
        compare_component(self.types.get(i), a, b)
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
    compare_prefixes(types, a, b)
}

fn compare_prefixes(types: &[CqlType], a: &impl PrefixLike, b: &impl PrefixLike) -> Ordering {
    compare_prefixes_by(a, b, |i, x, y| compare_component(types.get(i), x, y))
}

/// [`compare_prefixes`] with the values of column `i` compared by `component`.
#[inline]
fn compare_prefixes_by(
    a: &impl PrefixLike,
    b: &impl PrefixLike,
    component: impl Fn(usize, Option<&[u8]>, Option<&[u8]>) -> Ordering,
) -> Ordering {
    let (sa, sb) = (a.size(), b.size());
    for i in 0..sa.min(sb) {
        let c = component(i, a.value(i), b.value(i));
        if c != Ordering::Equal {
            return c;
        }
    }
    match sa.cmp(&sb) {
        Ordering::Equal => kind_rank(a.kind()).cmp(&kind_rank(b.kind())),
        Ordering::Less => compared_to_clustering(a.kind()),
        Ordering::Greater => compared_to_clustering(b.kind()).reverse(),
    }
}

/// `ClusteringComparator.compareComponent`: null sorts first; a column
/// without a type compares as unsigned bytes.
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

// --------------------------------------------------------------- values

/// Compare two serialized values of type `ty` in Cassandra's order
/// (`AbstractType.compare`; see the module docs). Malformed values fall back
/// to unsigned byte order.
pub fn compare_value(ty: &CqlType, a: &[u8], b: &[u8]) -> Ordering {
    compare_depth(ty, a, b, 0)
}

fn compare_depth(ty: &CqlType, a: &[u8], b: &[u8], depth: u32) -> Ordering {
    if depth > MAX_DEPTH {
        return a.cmp(b);
    }
    match ty {
        CqlType::Reversed(t) => return compare_depth(t, b, a, depth + 1),
        CqlType::Frozen(t) => return compare_depth(t, a, b, depth + 1),
        // EmptyType.compareCustom: always 0, even for (invalid) bytes.
        CqlType::Native(Native::Empty) => return Ordering::Equal,
        _ => {}
    }
    // The empty guard of every compareCustom (and of byte order).
    if a.is_empty() || b.is_empty() {
        return (!a.is_empty()).cmp(&!b.is_empty());
    }
    let structured = match ty {
        CqlType::Native(n) => return compare_native(*n, a, b),
        CqlType::List(e) | CqlType::Set(e) => compare_collection(&[e.as_ref()], a, b, depth),
        CqlType::Map(k, v) => compare_collection(&[k.as_ref(), v.as_ref()], a, b, depth),
        CqlType::Tuple(ts) => compare_fields(ts.iter(), a, b, depth),
        CqlType::Udt { fields, .. } => compare_fields(fields.iter().map(|(_, t)| t), a, b, depth),
        CqlType::Composite(ts) => compare_composite(ts, a, b, depth),
        CqlType::Vector(t, n) => compare_vector(t, *n, a, b, depth),
        // DynamicCompositeType, ColumnToCollectionType, custom classes.
        _ => None,
    };
    structured.unwrap_or_else(|| a.cmp(b))
}

fn be_u64(x: &[u8], at: usize) -> u64 {
    x.get(at..at + 8)
        .and_then(|s| s.try_into().ok())
        .map_or(0, u64::from_be_bytes)
}

/// `TimeUUIDType.reorderTimestampBytes`: the v1 timestamp (version nibble
/// on top) as a long.
fn reorder_timestamp(msb: u64) -> i64 {
    ((msb << 48) | ((msb << 16) & 0xFFFF_0000_0000) | (msb >> 32)) as i64
}

/// `TimeUUIDType.signedBytesToNativeLong`: a long whose order is that of its
/// 8 big-endian bytes compared as signed bytes.
fn signed_bytes_order(x: u64) -> i64 {
    (x ^ 0x0080_8080_8080_8080) as i64
}

/// `x` (1 to 8 bytes) as a big-endian number with its first byte signed,
/// shifted to the top of an `i64`; values of one length order as the numbers.
#[inline]
fn signed_be(x: &[u8]) -> i64 {
    // The common widths without a variable-length copy (a call to memcpy).
    if let Ok(b) = <[u8; 4]>::try_from(x) {
        return i64::from(i32::from_be_bytes(b)) << 32;
    }
    if let Ok(b) = <[u8; 8]>::try_from(x) {
        return i64::from_be_bytes(b);
    }
    let mut b = [0u8; 8];
    b[..x.len()].copy_from_slice(x);
    i64::from_be_bytes(b)
}

/// Values of both `a` and `b` are non-empty.
fn compare_native(n: Native, a: &[u8], b: &[u8]) -> Ordering {
    match n {
        // LongType.compareLongs (also Int32Type, ShortType, TimestampType,
        // CounterColumnType): the first byte signed, then unsigned bytes.
        Native::Int | Native::Bigint | Native::Smallint | Native::Timestamp | Native::Counter => {
            if a.len() == b.len() && a.len() <= 8 {
                // The same order as one signed big-endian number each.
                return signed_be(a).cmp(&signed_be(b));
            }
            (a[0] as i8).cmp(&(b[0] as i8)).then_with(|| a.cmp(b))
        }
        Native::Tinyint => (a[0] as i8).cmp(&(b[0] as i8)),
        Native::Boolean => (a[0] != 0).cmp(&(b[0] != 0)),
        Native::Varint => compare_varint(a, b),
        Native::Decimal => compare_decimal(a, b).unwrap_or_else(|| a.cmp(b)),
        Native::Float if a.len() == 4 && b.len() == 4 => {
            let f = |x: &[u8]| f32::from_be_bytes([x[0], x[1], x[2], x[3]]) as f64;
            java_double_compare(f(a), f(b))
        }
        Native::Double if a.len() == 8 && b.len() == 8 => {
            let f = |x: &[u8]| f64::from_bits(be_u64(x, 0));
            java_double_compare(f(a), f(b))
        }
        // TimeUUIDType / UUIDType: a 16-byte value after any other length.
        Native::Timeuuid | Native::Uuid if a.len() != 16 || b.len() != 16 => {
            match (a.len() == 16, b.len() == 16) {
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                _ => a.cmp(b),
            }
        }
        Native::Timeuuid => reorder_timestamp(be_u64(a, 0))
            .cmp(&reorder_timestamp(be_u64(b, 0)))
            .then_with(|| signed_bytes_order(be_u64(a, 8)).cmp(&signed_bytes_order(be_u64(b, 8)))),
        Native::Uuid => {
            let (ma, mb) = (be_u64(a, 0), be_u64(b, 0));
            let (va, vb) = ((ma >> 12) & 0xf, (mb >> 12) & 0xf);
            let hi = if va != vb {
                va.cmp(&vb)
            } else if va == 1 {
                reorder_timestamp(ma).cmp(&reorder_timestamp(mb))
            } else {
                ma.cmp(&mb)
            };
            // Unsigned, unlike TimeUUIDType (CASSANDRA-8730).
            hi.then_with(|| be_u64(a, 8).cmp(&be_u64(b, 8)))
        }
        Native::LexicalUuid if a.len() == 16 && b.len() == 16 => {
            let s = |x: &[u8], at| be_u64(x, at) as i64;
            s(a, 0).cmp(&s(b, 0)).then_with(|| s(a, 8).cmp(&s(b, 8)))
        }
        // BYTE_ORDER: date (epoch at 2^31), time, legacy DateType, text,
        // ascii, blob, inet, duration.
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

/// Drop redundant sign-extension bytes of a two's complement integer.
fn trim_varint(x: &[u8]) -> &[u8] {
    let mut s = x;
    while s.len() > 1 && ((s[0] == 0 && s[1] & 0x80 == 0) || (s[0] == 0xff && s[1] & 0x80 != 0)) {
        s = &s[1..];
    }
    s
}

/// Two's complement big-endian integers of any length, numerically
/// (`IntegerType.compareIntegers`). Both non-empty.
fn compare_varint(a: &[u8], b: &[u8]) -> Ordering {
    let (a, b) = (trim_varint(a), trim_varint(b));
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

/// -1, 0 or 1: the sign of a two's complement integer (empty = 0).
fn varint_sign(x: &[u8]) -> i8 {
    match x.first() {
        Some(f) if f & 0x80 != 0 => -1,
        _ if x.iter().all(|&c| c == 0) => 0,
        _ => 1,
    }
}

/// `decimal`: `scale:i32` + unscaled varint, compared numerically
/// (`BigDecimal.compareTo`). None when shorter than the scale.
fn compare_decimal(a: &[u8], b: &[u8]) -> Option<Ordering> {
    fn split(x: &[u8]) -> Option<(i64, &[u8])> {
        let scale = i32::from_be_bytes(x.get(..4)?.try_into().ok()?);
        Some((i64::from(scale), trim_varint(&x[4..])))
    }
    let ((sa, ua), (sb, ub)) = (split(a)?, split(b)?);
    let (ga, gb) = (varint_sign(ua), varint_sign(ub));
    if ga != gb || ga == 0 {
        return Some(ga.cmp(&gb));
    }
    if sa == sb {
        return Some(compare_varint(ua, ub));
    }
    let mag = magnitude_bounds(ua, sa, ub, sb).unwrap_or_else(|| {
        let (da, ea) = decimal_digits(ua, sa);
        let (db, eb) = decimal_digits(ub, sb);
        // Orders of the leading digits, then the digits, zero-padded.
        let n = da.len().max(db.len());
        let pa = da.bytes().chain(std::iter::repeat(b'0')).take(n);
        let pb = db.bytes().chain(std::iter::repeat(b'0')).take(n);
        (da.len() as i64 + ea)
            .cmp(&(db.len() as i64 + eb))
            .then_with(|| pa.cmp(pb))
    });
    Some(if ga < 0 { mag.reverse() } else { mag })
}

/// Order of `|ua| × 10^-sa` and `|ub| × 10^-sb` (both non-zero, trimmed)
/// when their decimal orders of magnitude are apart, from byte lengths
/// alone: an `n`-byte trimmed integer has `2^(8n-9) <= |x| <= 2^(8n-1)`.
fn magnitude_bounds(ua: &[u8], sa: i64, ub: &[u8], sb: i64) -> Option<Ordering> {
    let log10 = |u: &[u8], s: i64| {
        let bits = 8.0 * u.len() as f64;
        let lo = (bits - 9.0).max(0.0) * std::f64::consts::LOG10_2 - s as f64;
        let hi = (bits - 1.0) * std::f64::consts::LOG10_2 - s as f64;
        (lo, hi)
    };
    let ((la, ha), (lb, hb)) = (log10(ua, sa), log10(ub, sb));
    if ha + 0.01 < lb {
        Some(Ordering::Less)
    } else if hb + 0.01 < la {
        Some(Ordering::Greater)
    } else {
        None
    }
}

/// Significant decimal digits of `|unscaled|` (no leading or trailing
/// zeros) and the power of ten of the last one.
fn decimal_digits(unscaled: &[u8], scale: i64) -> (String, i64) {
    let (_, s) = crate::varint::varint_magnitude(unscaled);
    let d = s.trim_start_matches('0');
    let t = d.trim_end_matches('0');
    (t.to_string(), -scale + (d.len() - t.len()) as i64)
}

/// `i32`-length elements (negative = null), as in frozen collections and
/// tuples.
struct Elements<'a> {
    cur: Cur<'a>,
}

impl<'a> Elements<'a> {
    /// The elements of `b` from byte `at` on.
    fn new(b: &'a [u8], at: usize) -> Self {
        Elements {
            cur: Cur::new(b.get(at..).unwrap_or_default(), Component::Data, 0),
        }
    }

    fn next(&mut self) -> Option<Option<&'a [u8]>> {
        self.cur.nullable_int_bytes("element").ok()
    }

    fn at_end(&self) -> bool {
        self.cur.is_empty()
    }
}

/// Nested values, nulls first.
fn compare_nested(t: &CqlType, a: Option<&[u8]>, b: Option<&[u8]>, depth: u32) -> Ordering {
    match (a, b) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(a), Some(b)) => compare_depth(t, a, b, depth + 1),
    }
}

/// `CollectionType.compareListOrSet` / `MapType.compareMaps`: `i32` count,
/// then element by element (`types` cycles: [elem] or [key, value]), then
/// by count.
fn compare_collection(types: &[&CqlType], a: &[u8], b: &[u8], depth: u32) -> Option<Ordering> {
    let count =
        |x: &[u8]| -> Option<i32> { Some(i32::from_be_bytes(x.get(..4)?.try_into().ok()?)) };
    let (ca, cb) = (count(a)?, count(b)?);
    let (mut ea, mut eb) = (Elements::new(a, 4), Elements::new(b, 4));
    for _ in 0..ca.min(cb) {
        for t in types {
            let c = compare_nested(t, ea.next()?, eb.next()?, depth);
            if c != Ordering::Equal {
                return Some(c);
            }
        }
    }
    Some(ca.cmp(&cb))
}

/// `TupleType.compareCustom` (UDTs too): field by field while both have
/// fields, then any trailing field that is neither null nor empty makes a
/// value larger (a value written before fields were added equals one with
/// those fields null).
fn compare_fields<'t>(
    types: impl IntoIterator<Item = &'t CqlType>,
    a: &[u8],
    b: &[u8],
    depth: u32,
) -> Option<Ordering> {
    let (mut ea, mut eb) = (Elements::new(a, 0), Elements::new(b, 0));
    let mut types = types.into_iter();
    while !ea.at_end() && !eb.at_end() {
        let Some(t) = types.next() else { break };
        let c = compare_nested(t, ea.next()?, eb.next()?, depth);
        if c != Ordering::Equal {
            return Some(c);
        }
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

/// `AbstractCompositeType.compareCustom`: a static name (`0xFFFF` header)
/// first; then per component `u16 len, bytes, end-of-component byte`,
/// compared by value then by the end-of-component byte (signed); a value
/// that runs out first is smaller.
fn compare_composite(types: &[CqlType], a: &[u8], b: &[u8], depth: u32) -> Option<Ordering> {
    /// Whether static, and each component's value and end-of-component byte.
    type Split<'a> = (bool, Vec<(&'a [u8], u8)>);
    fn split(x: &[u8]) -> Option<Split<'_>> {
        let is_static = x.starts_with(&[0xff, 0xff]);
        let mut cur = Cur::new(if is_static { &x[2..] } else { x }, Component::Data, 0);
        let mut out = Vec::new();
        while !cur.is_empty() {
            let v = cur.short_bytes("composite component").ok()?;
            out.push((v, cur.u8("composite end-of-component").ok()?));
        }
        Some((is_static, out))
    }
    let ((sa, ca), (sb, cb)) = (split(a)?, split(b)?);
    if sa != sb {
        return Some(sb.cmp(&sa));
    }
    for (i, (x, y)) in ca.iter().zip(&cb).enumerate() {
        let c = match types.get(i) {
            Some(t) => compare_depth(t, x.0, y.0, depth + 1),
            None => x.0.cmp(y.0),
        };
        let c = c.then_with(|| (x.1 as i8).cmp(&(y.1 as i8)));
        if c != Ordering::Equal {
            return Some(c);
        }
    }
    Some(ca.len().cmp(&cb.len()))
}

/// `VectorType`: `n` elements, fixed-length or unsigned-vint-length-prefixed.
fn compare_vector(t: &CqlType, n: usize, a: &[u8], b: &[u8], depth: u32) -> Option<Ordering> {
    fn split<'a>(t: &CqlType, n: usize, x: &'a [u8]) -> Option<Vec<&'a [u8]>> {
        let mut out = Vec::with_capacity(n.min(x.len()));
        let mut cur = Cur::new(x, Component::Data, 0);
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
    use proptest::prelude::*;
    use Ordering::*;

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

    fn raw(ty: &str, a: &[u8], b: &[u8]) -> Ordering {
        compare_value(&t(ty), a, b)
    }

    /// Fixed-width integers of one length compare as numbers; other lengths
    /// (malformed) keep the first-byte-signed, then unsigned-bytes order.
    #[test]
    fn integers_compare_as_numbers() {
        let ints: [i64; 9] = [i64::MIN, -70_000, -256, -1, 0, 1, 255, 65_536, i64::MAX];
        for &x in &ints {
            for &y in &ints {
                assert_eq!(
                    raw("LongType", &x.to_be_bytes(), &y.to_be_bytes()),
                    x.cmp(&y)
                );
                let (a, b) = (x as i32, y as i32);
                assert_eq!(
                    raw("Int32Type", &a.to_be_bytes(), &b.to_be_bytes()),
                    a.cmp(&b)
                );
                let (a, b) = (x as i16, y as i16);
                assert_eq!(
                    raw("ShortType", &a.to_be_bytes(), &b.to_be_bytes()),
                    a.cmp(&b)
                );
            }
        }
        assert_eq!(raw("Int32Type", &[0x80, 0, 0], &[0x7f, 0, 0, 0]), Less);
        assert_eq!(raw("Int32Type", &[0x01, 0, 0, 0], &[0x01, 0, 0]), Greater);
    }

    #[test]
    fn natives() {
        assert_eq!(cmp("Int32Type", "-1", "1"), Less);
        assert_eq!(cmp("LongType", "-5", "-6"), Greater);
        assert_eq!(cmp("ShortType", "-300", "2"), Less);
        assert_eq!(cmp("ByteType", "-1", "0"), Less);
        assert_eq!(cmp("IntegerType", "-129", "-128"), Less);
        assert_eq!(cmp("IntegerType", "128", "127"), Greater);
        assert_eq!(cmp("IntegerType", "-1", "100000000000000000000"), Less);
        assert_eq!(cmp("IntegerType", "-100000000000000000000", "-1"), Less);
        assert_eq!(raw("IntegerType", &[0xff], &[0x00, 0x80]), Less);
        assert_eq!(raw("IntegerType", &[0x01, 0x00], &[0x7f]), Greater);
        assert_eq!(raw("IntegerType", &[0xff, 0x00], &[0xff]), Less);
        assert_eq!(cmp("DecimalType", "1.50", "1.5"), Equal);
        assert_eq!(cmp("DecimalType", "-1.5", "1"), Less);
        assert_eq!(cmp("DecimalType", "10", "9.99"), Greater);
        assert_eq!(cmp("DecimalType", "-10", "-9.99"), Less);
        assert_eq!(cmp("DecimalType", "0.001", "0"), Greater);
        assert_eq!(cmp("DecimalType", "1E+3", "999"), Greater);
        assert_eq!(cmp("DecimalType", "1E+3", "1000.000"), Equal);
        assert_eq!(cmp("DecimalType", "-0.5", "-0.50001"), Greater);
        assert_eq!(cmp("DoubleType", "-0.0", "0.0"), Less);
        assert_eq!(cmp("DoubleType", "NaN", "Infinity"), Greater);
        assert_eq!(cmp("FloatType", "-1.5", "-1"), Less);
        assert_eq!(cmp("BooleanType", "false", "true"), Less);
        assert_eq!(cmp("UTF8Type", "a", "b"), Less);
        assert_eq!(cmp("UTF8Type", "é", "z"), Greater);
        assert_eq!(cmp("BytesType", "0x80", "0x7f"), Greater);
        assert_eq!(cmp("TimestampType", "-1", "1"), Less);
        assert_eq!(cmp("SimpleDateType", "1969-12-31", "1970-01-01"), Less);
        assert_eq!(cmp("TimeType", "'00:00:01'", "'23:59:59'"), Less);
        // Version 1 UUIDs by time, not by bytes.
        let early = "00000000-0000-1000-8000-000000000000";
        let late = "ffffffff-0000-1000-8000-000000000000";
        let later = "00000000-0001-1000-8000-000000000000";
        assert_eq!(cmp("TimeUUIDType", early, late), Less);
        assert_eq!(cmp("TimeUUIDType", late, later), Less);
        // timeuuid: the low long as signed bytes.
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
        assert_eq!(raw("Int32Type", &[], &[0, 0, 0, 0]), Less);
        assert_eq!(
            raw("ReversedType(Int32Type)", &[0, 0, 0, 1], &[0, 0, 0, 2]),
            Greater
        );
        assert_eq!(raw("ReversedType(Int32Type)", &[], &[0, 0, 0, 0]), Greater);
        assert_eq!(raw("UTF8Type", b"\xc3", b"b"), Greater);
    }

    #[test]
    fn collections_and_tuples() {
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

    // ---- Where the two former comparators (this module and
    // ---- `validate/compare.rs`) disagreed; each checked against C*.

    /// `ClusteringPrefix.Kind`: STATIC_CLUSTERING has comparison 1 (after
    /// start bounds, before rows); validate's copy put it before bounds.
    #[test]
    fn static_kind_sorts_after_bottom() {
        let c = ClusteringComparator::new(vec![t("Int32Type")]);
        let stat = ClusteringPrefix {
            kind: BoundKind::StaticClustering,
            values: vec![],
        };
        let bottom = ClusteringPrefix {
            kind: BoundKind::InclStartBound,
            values: vec![],
        };
        let top = ClusteringPrefix {
            kind: BoundKind::InclEndBound,
            values: vec![],
        };
        assert_eq!(c.compare(&bottom, &stat), Less);
        assert_eq!(c.compare(&stat, &bottom), Greater);
        assert_eq!(c.compare(&stat, &top), Less);
        let row = ClusteringPrefix {
            kind: BoundKind::Clustering,
            values: vec![Some(&[0u8, 0, 0, 1][..])],
        };
        assert_eq!(c.compare(&stat, &row), Less);
    }

    /// `UUIDType`: the low long of version 1 UUIDs is unsigned (unlike
    /// `TimeUUIDType`, CASSANDRA-8730); validate's copy compared it signed.
    #[test]
    fn uuid_v1_low_long_unsigned() {
        let hi = "00000000-0000-1000-8000-000000000000";
        let lo = "00000000-0000-1000-7f00-000000000000";
        assert_eq!(cmp("UUIDType", hi, lo), Greater);
        assert_eq!(cmp("TimeUUIDType", hi, lo), Less);
    }

    /// `BooleanType`: any non-zero byte is true; validate's copy compared
    /// bytes (1 < 2).
    #[test]
    fn boolean_nonzero_bytes_equal() {
        assert_eq!(raw("BooleanType", &[1], &[2]), Equal);
        assert_eq!(raw("BooleanType", &[0], &[0xff]), Less);
    }

    /// Legacy `DateType` is BYTE_ORDER (pre-1970 values sort after
    /// post-1970 ones); this module's copy compared it signed.
    #[test]
    fn legacy_date_type_unsigned() {
        let before = (-1i64).to_be_bytes();
        let after = 1i64.to_be_bytes();
        assert_eq!(raw("DateType", &before, &after), Greater);
        assert_eq!(raw("TimestampType", &before, &after), Less);
    }

    /// `TupleType.compareCustom`: trailing null (or empty) fields are
    /// ignored, so a tuple/UDT value written before a field was added equals
    /// the same value with that field null; validate's copy made the longer
    /// one larger.
    #[test]
    fn tuple_trailing_nulls_ignored() {
        let one = [0, 0, 0, 4, 0, 0, 0, 1];
        let one_null = [0, 0, 0, 4, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff];
        let one_empty = [0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 0];
        let one_two = [0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 1, b'x'];
        let tt = "TupleType(Int32Type,UTF8Type)";
        assert_eq!(raw(tt, &one, &one_null), Equal);
        assert_eq!(raw(tt, &one_null, &one), Equal);
        assert_eq!(raw(tt, &one, &one_empty), Equal);
        assert_eq!(raw(tt, &one, &one_two), Less);
        let udt = "UserType(ks,75,61:Int32Type,62:UTF8Type)";
        assert_eq!(raw(udt, &one_null, &one), Equal);
    }

    /// `CompositeType` component by component; this module's copy compared
    /// raw bytes (so -1 sorted after 1). A static name sorts first.
    #[test]
    fn composite_by_component() {
        let comp = |v: &[&[u8]], eoc: u8| {
            let mut o = Vec::new();
            for x in v {
                o.extend_from_slice(&(x.len() as u16).to_be_bytes());
                o.extend_from_slice(x);
                o.push(0);
            }
            if let Some(l) = o.last_mut() {
                *l = eoc;
            }
            o
        };
        let ty = "CompositeType(Int32Type,UTF8Type)";
        let m1 = (-1i32).to_be_bytes();
        let p1 = 1i32.to_be_bytes();
        assert_eq!(
            raw(ty, &comp(&[&m1, b"a"], 0), &comp(&[&p1, b"a"], 0)),
            Less
        );
        assert_eq!(
            raw(ty, &comp(&[&p1, b"a"], 0), &comp(&[&p1, b"b"], 0)),
            Less
        );
        // End-of-component: -1 (start) < 0 < 1 (end); a prefix is smaller.
        assert_eq!(raw(ty, &comp(&[&p1], 0xff), &comp(&[&p1], 0)), Less);
        assert_eq!(raw(ty, &comp(&[&p1], 1), &comp(&[&p1, b"z"], 0)), Greater);
        assert_eq!(raw(ty, &comp(&[&p1], 0), &comp(&[&p1, b"z"], 0)), Less);
        let mut stat = vec![0xff, 0xff];
        stat.extend(comp(&[&p1], 0));
        assert_eq!(raw(ty, &stat, &comp(&[&m1], 0)), Less);
    }

    /// Vectors of variable-length elements (vint-prefixed); validate's copy
    /// fell back to bytes.
    #[test]
    fn vector_variable_length_elements() {
        let ty = "VectorType(IntegerType,2)";
        // [-1, 5] vs [1, 0]: bytes say 0x01 0xff.. > 0x01 0x01..
        let a = [1, 0xff, 1, 5];
        let b = [1, 1, 1, 0];
        assert_eq!(raw(ty, &a, &b), Less);
        // [1, 300] vs [1, 5]
        let c = [1, 1, 2, 0x01, 0x2c];
        let d = [1, 1, 1, 5];
        assert_eq!(raw(ty, &c, &d), Greater);
    }

    /// Int types (`LongType.compareLongs`): first byte signed, then unsigned
    /// bytes, whatever the lengths; this module's copy compared malformed
    /// lengths numerically.
    #[test]
    fn int_mixed_lengths_like_compare_longs() {
        assert_eq!(raw("Int32Type", &[1], &[0, 0, 0, 2]), Greater);
        assert_eq!(raw("Int32Type", &[0xff], &[0, 0, 0, 2]), Less);
        assert_eq!(raw("ByteType", &[1, 0xff], &[1, 0]), Equal);
    }

    /// Large decimals compare exactly; validate's copy fell back to bytes
    /// past 4096 bytes.
    #[test]
    fn decimal_large_and_scaled() {
        let dec = |scale: i32, unscaled: &[u8]| {
            let mut o = scale.to_be_bytes().to_vec();
            o.extend_from_slice(unscaled);
            o
        };
        let d = |x: &[u8], y: &[u8]| raw("DecimalType", x, y);
        let mut big = vec![0x01];
        big.extend(std::iter::repeat_n(0u8, 5000));
        // 2^40000 × 10^-5 vs 2 × 10^0: far apart.
        assert_eq!(d(&dec(5, &big), &dec(0, &[2])), Greater);
        // -(2^40000) vs -2.
        let mut neg = vec![0xff];
        neg.extend(std::iter::repeat_n(0u8, 5000));
        assert_eq!(d(&dec(5, &neg), &dec(0, &[0xfe])), Less);
        // Same magnitude, different scales: exact digits. 256 vs 2560e-1,
        // 256 vs 2561e-1.
        assert_eq!(d(&dec(0, &[0x01, 0x00]), &dec(1, &[0x0a, 0x00])), Equal);
        assert_eq!(d(&dec(0, &[0x01, 0x00]), &dec(1, &[0x0a, 0x01])), Less);
    }

    /// Shared deviations of both former copies: `TimeType` is BYTE_ORDER
    /// (they compared it signed) and `EmptyType` values are all equal.
    #[test]
    fn time_unsigned_and_empty_type_equal() {
        let neg = (-1i64).to_be_bytes();
        let pos = 1i64.to_be_bytes();
        assert_eq!(raw("TimeType", &neg, &pos), Greater);
        assert_eq!(raw("EmptyType", &[], &[1]), Equal);
        assert_eq!(raw("EmptyType", &[1], &[2]), Equal);
    }

    /// Non-16-byte UUIDs sort before 16-byte ones (`UUIDType` /
    /// `TimeUUIDType` length guard).
    #[test]
    fn uuid_bad_length_first() {
        let u = [0x10u8; 16];
        assert_eq!(raw("TimeUUIDType", &[0xff; 17], &u), Less);
        assert_eq!(raw("UUIDType", &u, &[0xff; 3]), Greater);
    }

    // ---------------------------------------------------------- prefixes

    fn prefix(kind: BoundKind, vals: &[&'static [u8]]) -> ClusteringPrefix<'static> {
        ClusteringPrefix {
            kind,
            values: vals.iter().map(|v| Some(*v)).collect(),
        }
    }

    #[test]
    fn prefixes_and_kinds() {
        use BoundKind::*;
        let types = [t("Int32Type"), t("UTF8Type")];
        let one: &[u8] = &[0, 0, 0, 1];
        let two: &[u8] = &[0, 0, 0, 2];
        let row = prefix(Clustering, &[one, b"m"]);
        let c =
            |a: &ClusteringPrefix<'_>, b: &ClusteringPrefix<'_>| compare_clustering(&types, a, b);
        // Start bound on a prefix sorts before the rows it prefixes, end after.
        assert_eq!(c(&prefix(InclStartBound, &[one]), &row), Less);
        assert_eq!(c(&prefix(ExclEndBound, &[one]), &row), Less);
        assert_eq!(c(&prefix(InclEndBound, &[one]), &row), Greater);
        assert_eq!(c(&prefix(ExclStartBound, &[one]), &row), Greater);
        assert_eq!(c(&row, &prefix(ExclStartBound, &[one])), Less);
        assert_eq!(
            c(
                &prefix(InclEndBound, &[one]),
                &prefix(InclStartBound, &[two])
            ),
            Less
        );
        // Same values: by kind.
        let full = |k| prefix(k, &[one, b"m"]);
        assert_eq!(c(&full(InclStartBound), &row), Less);
        assert_eq!(c(&full(InclEndBound), &row), Greater);
        assert_eq!(
            c(&full(ExclEndInclStartBoundary), &full(InclStartBound)),
            Equal
        );
        assert_eq!(c(&row, &row), Equal);
        // Empty prefix bounds: the whole partition.
        assert_eq!(c(&prefix(InclStartBound, &[]), &row), Less);
        assert_eq!(c(&prefix(InclEndBound, &[]), &row), Greater);
        // Null component first.
        let null = ClusteringPrefix {
            kind: Clustering,
            values: vec![None, Some(&b"m"[..])],
        };
        assert_eq!(c(&null, &row), Less);
    }

    #[test]
    fn comparator_and_owned_prefix() {
        let c = ClusteringComparator::new(vec![t("Int32Type"), t("Int32Type")]);
        let one: &[u8] = &[0, 0, 0, 1];
        let two: &[u8] = &[0, 0, 0, 2];
        let r11 = prefix(BoundKind::Clustering, &[one, one]);
        let r12 = prefix(BoundKind::Clustering, &[one, two]);
        assert_eq!(c.compare(&r11, &r12), Less);
        let start1 = prefix(BoundKind::InclStartBound, &[one]);
        let end1 = prefix(BoundKind::InclEndBound, &[one]);
        assert_eq!(c.compare(&start1, &r11), Less);
        assert_eq!(c.compare(&end1, &r12), Greater);
        assert_eq!(c.compare(&start1, &end1), Less);
        assert_eq!(c.compare(&r12, &prefix(BoundKind::InclEndBound, &[])), Less);
        // Owned copies compare like the borrowed prefix and reuse buffers.
        let mut o = OwnedPrefix::of(&r12);
        assert!(o.same_as(&r12));
        assert_eq!(c.compare_any(&o, &r11), Greater);
        o.set(&start1);
        assert!(o.same_as(&start1) && !o.same_as(&r11));
        assert_eq!(o.size(), 1);
        assert_eq!(o.value(1), None);
        assert_eq!(c.compare_any(&o, &r11), Less);
        assert_eq!(c.compare_component(0, None, Some(one)), Less);
        assert_eq!(c.compare_component(5, Some(two), Some(one)), Greater);
    }

    proptest! {
        #[test]
        fn ints_match_numeric_order(a: i64, b: i64) {
            let ty = t("LongType");
            prop_assert_eq!(compare_value(&ty, &a.to_be_bytes(), &b.to_be_bytes()), a.cmp(&b));
        }

        #[test]
        fn varint_matches_numeric_order(a: i64, b: i64) {
            let ty = t("IntegerType");
            prop_assert_eq!(compare_value(&ty, &a.to_be_bytes(), &b.to_be_bytes()), a.cmp(&b));
        }

        #[test]
        fn decimal_matches_numeric_order(a: i32, sa in -12i32..12, b: i32, sb in -12i32..12) {
            // a × 10^-sa vs b × 10^-sb, exactly, in i128 at a common scale.
            let ty = t("DecimalType");
            let enc = |u: i32, s: i32| {
                let mut o = s.to_be_bytes().to_vec();
                o.extend_from_slice(&u.to_be_bytes());
                o
            };
            let m = sa.max(sb);
            let want = (a as i128 * 10i128.pow((m - sa) as u32))
                .cmp(&(b as i128 * 10i128.pow((m - sb) as u32)));
            prop_assert_eq!(compare_value(&ty, &enc(a, sa), &enc(b, sb)), want);
        }

        /// The integer comparator's shortcut orders prefixes as the type walk
        /// does: any bytes (malformed lengths, empty and null values), any
        /// sizes and kinds.
        #[test]
        fn int_shortcut_matches_type_walk(
            a in proptest::collection::vec(proptest::option::of(proptest::collection::vec(any::<u8>(), 0..10)), 0..3),
            b in proptest::collection::vec(proptest::option::of(proptest::collection::vec(any::<u8>(), 0..10)), 0..3),
            ka in 0usize..8, kb in 0usize..8,
        ) {
            let types = vec![t("Int32Type"), t("LongType")];
            let c = ClusteringComparator::new(types.clone());
            prop_assert!(c.all_ints);
            let kind = |k: usize| BoundKind::from_ordinal(k as u8).unwrap_or(BoundKind::Clustering);
            let pa = crate::clustering::OwnedClustering { kind: kind(ka), values: a };
            let pb = crate::clustering::OwnedClustering { kind: kind(kb), values: b };
            prop_assert_eq!(c.compare_any(&pa, &pb), compare_prefixes(&types, &pa, &pb));
        }

        #[test]
        fn never_panics(a in proptest::collection::vec(any::<u8>(), 0..40),
                        b in proptest::collection::vec(any::<u8>(), 0..40)) {
            for s in ["DecimalType", "UUIDType", "TimeUUIDType", "FloatType", "BooleanType",
                      "TupleType(Int32Type,UTF8Type)", "FrozenType(MapType(Int32Type,UTF8Type))",
                      "CompositeType(Int32Type,UTF8Type)", "ReversedType(DoubleType)",
                      "VectorType(IntegerType,3)", "VectorType(Int32Type,2)"] {
                let ty = t(s);
                let _ = compare_value(&ty, &a, &b);
            }
        }
    }
}
