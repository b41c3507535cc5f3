//! Byte-comparable (`ByteComparable.Version.OSS50`) forms of partition keys
//! and clusterings, the keys of the BTI tries (`shared/docs/sstable-format.md`
//! §12.3, §12.5; C\* `o.a.c/utils/bytecomparable/ByteSource.java`,
//! `ByteComparable.md`, `DecoratedKey.asComparableBytes`,
//! `ClusteringComparator.asByteComparable`; Scylla
//! `types/comparable_bytes.cc`).
//!
//! * Partition key: `0x40 token 0x40 escaped(key) 0x38`; Murmur3 token =
//!   8 bytes big-endian with the sign bit flipped; ByteOrdered /
//!   OrderPreserving token = the escaped key (text) bytes; Random token =
//!   the `IntegerType` (varint) form of the token.
//! * Clustering: per component `0x40` + the type's form (`0x3E` null,
//!   `0x3F` / `0x41` (reversed) for an empty value of a fixed-size type),
//!   then `0x38` (row), `0x20` (start-inclusive / end-exclusive bound),
//!   `0x60` (end-inclusive / start-exclusive bound) or `0x18` (static).
//!
//! Encoded component types: every type a key can have (C\* 5.0's
//! `asComparableBytes` of each `AbstractType`, `OSS50`): int, smallint,
//! tinyint, bigint (variable-length signed), timestamp, date, time, float,
//! double, boolean, uuid, timeuuid, text, ascii, blob, inet, duration
//! (escaped bytes), varint, decimal (base-100 exponent and mantissa),
//! tuples and UDTs, frozen lists, sets and maps, and `ReversedType` of any
//! of these. `fixtures/bti-index/comparable-oss50.tsv` holds Cassandra's
//! own encodings of generated values of each, which the tests compare.
//!
//! Decoded (for [`separator_bounds`]): the natives up to blob above and
//! timeuuid; decoding stops before any other type, which keeps the bounds
//! correct, only less tight.
//!
//! # Row-index separators as clustering bounds
//!
//! A row-index separator `s` (§12.5) satisfies `last(previous block) < s <=
//! first(block)` in byte order. [`separator_bounds`] turns `s` into two
//! clustering bounds without reading Data.db: a *floor* `F` with `X >= F`
//! for every clustering `X` whose encoding is `>= s` (so `F <= first(block)`)
//! and a *ceiling* `C` with `X <= C` for every `X` whose encoding is `<= s`
//! (so `C >= last(previous block)`). With `P` the components decodable from
//! `s`: `F = INCL_START(P)`; `C = EXCL_END(P)` when `s` ends right after
//! them, else `INCL_END(P)`. A trailing incomplete text/ascii/blob component
//! without zero bytes `t` tightens both: `F = INCL_START(P, t)`,
//! `C = EXCL_END(P, t)`.

use crate::clustering::{BoundKind, ClusteringPrefix};
use crate::lookup::OwnedClustering;
use crate::token::{murmur3_token, random_token, Partitioner, Token};
use crate::types::{CqlType, Native};

/// Escape introducer / end of an escaped component.
pub const ESCAPE: u8 = 0x00;
/// A zero inside a run of escaped zeros (or the end after a trailing zero).
pub const ESCAPED_0_CONT: u8 = 0xFE;
/// The end of a run of escaped zeros followed by more data.
pub const ESCAPED_0_DONE: u8 = 0xFF;
/// Before each component.
pub const NEXT_COMPONENT: u8 = 0x40;
/// An empty value of a type whose empty value has no encoding.
pub const NEXT_COMPONENT_EMPTY: u8 = 0x3F;
/// As [`NEXT_COMPONENT_EMPTY`], for a reversed type.
pub const NEXT_COMPONENT_EMPTY_REVERSED: u8 = 0x41;
/// A null component.
pub const NEXT_COMPONENT_NULL: u8 = 0x3E;
/// End of a sequence (a row clustering, a partition key).
pub const TERMINATOR: u8 = 0x38;
/// End of a bound sorting before what it prefixes.
pub const LT_NEXT_COMPONENT: u8 = 0x20;
/// End of a bound sorting after what it prefixes.
pub const GT_NEXT_COMPONENT: u8 = 0x60;
/// End of the static clustering.
pub const EXCLUDED: u8 = 0x18;

/// Append `data` escaped (`ByteSource.AbstractEscaper`, OSS50): a zero is
/// `00`, a following zero `FE`, data after a zero run is preceded by `FF`,
/// and the end is `00` (or `FE` when the data ends with a zero).
pub fn escape(out: &mut Vec<u8>, data: &[u8]) {
    let mut escaped = false;
    for &b in data {
        if escaped {
            if b == 0 {
                out.push(ESCAPED_0_CONT);
                continue;
            }
            out.push(ESCAPED_0_DONE);
            escaped = false;
        }
        out.push(b);
        if b == 0 {
            escaped = true;
        }
    }
    out.push(if escaped { ESCAPED_0_CONT } else { ESCAPE });
}

/// Decode an escaped component at the start of `b`: the data and the bytes
/// consumed (the following separator is not consumed). `None` when `b`
/// ends before the component does.
pub fn unescape(b: &[u8]) -> Option<(Vec<u8>, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        let x = *b.get(i)?;
        if x != ESCAPE {
            out.push(x);
            i += 1;
            continue;
        }
        let mut j = i + 1;
        let mut zeros = 0;
        while b.get(j) == Some(&ESCAPED_0_CONT) {
            zeros += 1;
            j += 1;
        }
        match *b.get(j)? {
            ESCAPED_0_DONE => {
                out.resize(out.len() + zeros + 1, 0);
                i = j + 1;
            }
            _ => {
                out.resize(out.len() + zeros, 0);
                return Some((out, j));
            }
        }
    }
}

/// Append `v` in the variable-length signed form (`ByteSource.VariableLengthInteger`).
pub fn encode_varlen_signed(out: &mut Vec<u8>, value: i64) {
    let neg = value >> 63;
    let v = (value ^ neg) as u64;
    let bits = 64 - (v | 1).leading_zeros();
    let bytes = (bits / 7 + 1) as usize;
    if bytes >= 9 {
        out.push(if neg < 0 { 0x00 } else { 0xFF });
        let x = (v | (1 << 63)) ^ neg as u64;
        out.extend_from_slice(&x.to_be_bytes());
    } else {
        let mask = ((-0x100i64 >> bytes) & 0xFF) as u64;
        let x = (v | (mask << (bytes * 8 - 8))) ^ neg as u64;
        out.extend_from_slice(&x.to_be_bytes()[8 - bytes..]);
    }
}

/// Decode the variable-length signed form at the start of `b`: the value
/// and the bytes consumed (`None` when `b` is too short).
pub fn decode_varlen_signed(b: &[u8]) -> Option<(i64, usize)> {
    let first = *b.first()?;
    let negb: u8 = if first & 0x80 == 0 { 0xFF } else { 0 };
    let neg: u64 = if negb == 0xFF { u64::MAX } else { 0 };
    let ones = (first ^ negb).leading_ones() as usize;
    if ones == 8 && (*b.get(1)? ^ negb) & 0x80 != 0 {
        let x = u64::from_be_bytes(b.get(1..9)?.try_into().ok()?) ^ neg;
        let v = x & !(1 << 63);
        return Some(((v ^ neg) as i64, 9));
    }
    let total = ones.max(1);
    let raw = b.get(..total)?;
    let x = raw.iter().fold(0u64, |a, y| (a << 8) | *y as u64);
    let mask = ((-0x100i64 >> total) & 0xFF) as u64;
    let x = x ^ (neg & (u64::MAX >> (64 - 8 * total)));
    let v = x & !(mask << (8 * total - 8));
    Some(((v ^ neg) as i64, total))
}

/// Append an unsigned variable-length length (`encode_varint_length`),
/// inverted for negative numbers.
fn encode_varint_length(out: &mut Vec<u8>, length: u64, negative: bool) {
    let sign: u64 = if negative { u64::MAX } else { 0 };
    let bits_minus_one = 63 - (length | 1).leading_zeros() as usize;
    let bm = (bits_minus_one / 7).min(8);
    let mut buf = [0u8; 9];
    let mut l = length;
    if bm == 8 {
        buf[0] = if negative { 0 } else { 0xFF };
    } else {
        let mask = ((-0x100i64 >> bm) & 0xFF) as u64;
        l |= mask << (bm * 8);
    }
    buf[1..].copy_from_slice(&(l ^ sign).to_be_bytes());
    out.extend_from_slice(&buf[8 - bm..]);
}

/// Append the `IntegerType` (varint) form of the two's-complement
/// big-endian integer `v` (`IntegerType.asComparableBytes`): a
/// variable-length signed integer below 7 significant bytes, else the sign,
/// the length and the bytes.
pub fn encode_varint(out: &mut Vec<u8>, v: &[u8]) {
    let negative = v.first().is_some_and(|b| *b >= 0x80);
    let sign_byte = if negative { 0xFF } else { 0x00 };
    // Every leading sign-only byte goes (the sign is encoded apart).
    let lead = v.iter().take_while(|b| **b == sign_byte).count();
    let b = &v[lead.min(v.len().saturating_sub(1))..];
    if b.len() < 7 {
        let mut x: i64 = if negative { -1 } else { 0 };
        for &y in b {
            x = (x << 8) | y as i64;
        }
        encode_varlen_signed(out, x);
        return;
    }
    out.push(!sign_byte);
    encode_varint_length(out, b.len() as u64 - 7, negative);
    out.extend_from_slice(b);
}

/// The byte-comparable form of the token of `key` (`Token.asComparableBytes`);
/// `None` for partitioners whose order depends on a type sstkit does not know
/// (`LocalPartitioner`).
pub fn token_bytes(p: &Partitioner, key: &[u8], out: &mut Vec<u8>) -> Option<()> {
    match p {
        Partitioner::Murmur3 => {
            let t = murmur3_token(key) as u64 ^ (1 << 63);
            out.extend_from_slice(&t.to_be_bytes());
        }
        Partitioner::ByteOrdered | Partitioner::OrderPreserving => escape(out, key),
        Partitioner::Random => random_bytes(random_token(key), out),
        Partitioner::Local(_) => return None,
    }
    Some(())
}

/// The `IntegerType` form of a RandomPartitioner token (`None`: the
/// minimum token, `-1`).
fn random_bytes(t: Option<u128>, out: &mut Vec<u8>) {
    match t {
        None => encode_varlen_signed(out, -1),
        Some(t) => {
            let mut mag: Vec<u8> = t
                .to_be_bytes()
                .iter()
                .copied()
                .skip_while(|b| *b == 0)
                .collect();
            if mag.first().is_some_and(|b| *b >= 0x80) {
                mag.insert(0, 0);
            }
            encode_varint(out, &mag);
        }
    }
}

/// The byte-comparable prefix every partition key of token `t` starts
/// with (`0x40 token`), for a search by token alone; `None` for tokens
/// whose byte-comparable form is not the one [`token_bytes`] writes
/// (OrderPreserving, whose token is held as lossy text, and Local).
pub fn token_prefix(t: &Token) -> Option<Vec<u8>> {
    let mut out = vec![NEXT_COMPONENT];
    match t {
        Token::Murmur3(v) => out.extend_from_slice(&(*v as u64 ^ (1 << 63)).to_be_bytes()),
        Token::Random(v) => random_bytes(*v, &mut out),
        Token::ByteOrdered(k) => escape(&mut out, k),
        Token::OrderPreserving(_) | Token::Local(_) => return None,
    }
    Some(out)
}

/// The byte-comparable form of a decorated partition key (§12.3):
/// `0x40 token 0x40 escaped(key) 0x38`.
pub fn partition_key_bytes(p: &Partitioner, key: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(key.len() + 16);
    out.push(NEXT_COMPONENT);
    token_bytes(p, key, &mut out)?;
    out.push(NEXT_COMPONENT);
    escape(&mut out, key);
    out.push(TERMINATOR);
    Some(out)
}

/// The filter hash byte stored with each partition payload: the low byte of
/// the second half of the key's murmur3 (`filterHashLowerBits`).
pub fn hash_byte(key: &[u8]) -> u8 {
    crate::token::murmur3_x64_128(key).1 as u8
}

/// How a native type is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// Fixed length, first bit flipped.
    Signed(usize),
    /// Fixed length, as is.
    Unsigned(usize),
    /// Variable-length signed (bigint).
    VarLong,
    /// IEEE float of this size.
    Float(usize),
    /// 0 or 1.
    Boolean,
    /// UUID with the version first.
    Uuid,
    /// `TimeUUIDType`: the timestamp first, then the low half byte-signed.
    TimeUuid,
    /// Escaped bytes.
    Escaped,
    /// Escaped bytes of a type not decoded here (inet, duration).
    EscapedOpaque,
    /// `IntegerType`.
    Varint,
    /// `DecimalType`.
    Decimal,
}

fn form(t: &Native) -> Option<Form> {
    Some(match t {
        Native::Int => Form::Signed(4),
        Native::Smallint => Form::Signed(2),
        Native::Tinyint => Form::Signed(1),
        Native::Timestamp | Native::LegacyDate => Form::Signed(8),
        Native::Bigint => Form::VarLong,
        Native::Date => Form::Unsigned(4),
        Native::Time => Form::Unsigned(8),
        Native::Float => Form::Float(4),
        Native::Double => Form::Float(8),
        Native::Boolean => Form::Boolean,
        Native::Uuid => Form::Uuid,
        Native::Timeuuid => Form::TimeUuid,
        Native::Text | Native::Ascii | Native::Blob => Form::Escaped,
        Native::Inet | Native::Duration => Form::EscapedOpaque,
        Native::Varint => Form::Varint,
        Native::Decimal => Form::Decimal,
        _ => return None,
    })
}

/// The base type and whether it is reversed (`ReversedType`, `FrozenType`
/// wrappers removed).
fn base(t: &CqlType) -> (Option<Form>, bool) {
    let mut rev = false;
    let mut t = t;
    loop {
        match t {
            CqlType::Reversed(x) => {
                rev = !rev;
                t = x;
            }
            CqlType::Frozen(x) => t = x,
            CqlType::Native(n) => return (form(n), rev),
            _ => return (None, rev),
        }
    }
}

/// True when values of `t` can be encoded here.
pub fn supported(t: &CqlType) -> bool {
    match t {
        CqlType::Native(n) => form(n).is_some(),
        CqlType::Reversed(x) | CqlType::Frozen(x) | CqlType::List(x) | CqlType::Set(x) => {
            supported(x)
        }
        CqlType::Map(k, v) => supported(k) && supported(v),
        CqlType::Tuple(ts) => ts.iter().all(supported),
        CqlType::Udt { fields, .. } => fields.iter().all(|(_, t)| supported(t)),
        _ => false,
    }
}

fn uuid_msb_encode(hi: u64) -> u64 {
    let version = (hi >> 12) & 0xF;
    if version == 1 {
        (hi << 48) | ((hi << 16) & 0xFFFF_0000_0000) | (hi >> 32)
    } else {
        (version << 60) | ((hi >> 4) & 0x0FFF_FFFF_FFFF_F000) | (hi & 0xFFF)
    }
}

fn uuid_msb_decode(x: u64) -> u64 {
    let version = (x >> 60) & 0xF;
    if version == 1 {
        (x << 32) | ((x >> 16) & 0xFFFF_0000) | (x >> 48)
    } else {
        ((x << 4) & 0xFFFF_FFFF_FFFF_0000) | (version << 12) | (x & 0xFFF)
    }
}

/// Append the component encoding of `v` (a non-null value of `t`),
/// including its marker (`0x40`, or `0x3F`/`0x41` (reversed) for an empty
/// value the type encodes as nothing). `None` when the type is not
/// supported or the value is malformed.
pub fn encode_component(out: &mut Vec<u8>, t: &CqlType, v: &[u8]) -> Option<()> {
    let marker = out.len();
    out.push(NEXT_COMPONENT);
    if !encode_value(out, t, v)? {
        out[marker] = if base(t).1 {
            NEXT_COMPONENT_EMPTY_REVERSED
        } else {
            NEXT_COMPONENT_EMPTY
        };
    }
    Some(())
}

/// Append the byte-comparable form of `v`, a value of `t`
/// (`AbstractType.asComparableBytes`, OSS50). `Some(false)`: the type
/// encodes this (empty) value as no source at all, and nothing was
/// appended. `None`: unsupported type or malformed value.
pub fn encode_value(out: &mut Vec<u8>, t: &CqlType, v: &[u8]) -> Option<bool> {
    match t {
        CqlType::Reversed(x) => {
            let start = out.len();
            let some = encode_value(out, x, v)?;
            for b in &mut out[start..] {
                *b = !*b;
            }
            Some(some)
        }
        CqlType::Frozen(x) => encode_value(out, x, v),
        CqlType::Native(n) => encode_native(out, form(n)?, v),
        CqlType::Tuple(ts) => encode_tuple(out, ts.iter(), v),
        CqlType::Udt { fields, .. } => encode_tuple(out, fields.iter().map(|(_, t)| t), v),
        CqlType::List(e) | CqlType::Set(e) => encode_collection(out, v, &[e]),
        CqlType::Map(k, val) => encode_collection(out, v, &[k, val]),
        _ => None,
    }
}

/// One element of a sequence (`ByteSource.Multi`): `0x3E` for a null or a
/// value with no source, else `0x40` and the value.
fn encode_element(out: &mut Vec<u8>, t: &CqlType, v: Option<&[u8]>) -> Option<()> {
    let marker = out.len();
    out.push(NEXT_COMPONENT);
    let some = match v {
        Some(v) => encode_value(out, t, v)?,
        None => false,
    };
    if !some {
        out[marker] = NEXT_COMPONENT_NULL;
    }
    Some(())
}

fn read_i32(v: &[u8], at: usize) -> Option<i32> {
    Some(i32::from_be_bytes(v.get(at..at + 4)?.try_into().ok()?))
}

/// Tuples and UDTs (`TupleType.asComparableBytesNew`): the fields up to the
/// last non-null one, then `0x38`; an empty value has no source.
fn encode_tuple<'t>(
    out: &mut Vec<u8>,
    types: impl Iterator<Item = &'t CqlType>,
    v: &[u8],
) -> Option<bool> {
    if v.is_empty() {
        return Some(false);
    }
    let mut fields: Vec<(&CqlType, Option<&[u8]>)> = Vec::new();
    let mut pos = 0;
    for t in types {
        if pos == v.len() {
            break;
        }
        let len = read_i32(v, pos)?;
        pos += 4;
        if len < 0 {
            fields.push((t, None));
        } else {
            let f = v.get(pos..pos + len as usize)?;
            pos += len as usize;
            fields.push((t, Some(f)));
        }
    }
    if pos != v.len() {
        return None;
    }
    let keep = fields
        .iter()
        .rposition(|f| f.1.is_some())
        .map_or(0, |i| i + 1);
    for (t, f) in &fields[..keep] {
        encode_element(out, t, *f)?;
    }
    out.push(TERMINATOR);
    Some(true)
}

/// Frozen lists, sets and maps (`CollectionType.asComparableBytesListOrSet`,
/// `MapType.asComparableBytes`): every element (a map's keys and values
/// alternating: `types` is the element type, or the key and value types),
/// then `0x38`; an empty value has no source.
fn encode_collection(out: &mut Vec<u8>, v: &[u8], types: &[&CqlType]) -> Option<bool> {
    if v.is_empty() {
        return Some(false);
    }
    let n = read_i32(v, 0)?;
    let count = usize::try_from(n).ok()?.checked_mul(types.len())?;
    let mut pos = 4;
    for i in 0..count {
        let len = read_i32(v, pos)?;
        pos += 4;
        let len = usize::try_from(len).ok()?;
        let e = v.get(pos..pos + len)?;
        pos += len;
        encode_element(out, types[i % types.len()], Some(e))?;
    }
    out.push(TERMINATOR);
    Some(true)
}

fn encode_native(out: &mut Vec<u8>, f: Form, v: &[u8]) -> Option<bool> {
    let escaped = matches!(f, Form::Escaped | Form::EscapedOpaque);
    if v.is_empty() && !escaped {
        return Some(false);
    }
    let start = out.len();
    match f {
        Form::Signed(n) => {
            if v.len() != n {
                return None;
            }
            out.extend_from_slice(v);
            out[start] ^= 0x80;
        }
        Form::Unsigned(n) => {
            if v.len() != n {
                return None;
            }
            out.extend_from_slice(v);
        }
        Form::VarLong => {
            let x = i64::from_be_bytes(v.try_into().ok()?);
            encode_varlen_signed(out, x);
        }
        Form::Float(n) => {
            if v.len() != n {
                return None;
            }
            let neg = v[0] & 0x80 != 0;
            out.extend(v.iter().enumerate().map(|(i, b)| {
                if neg {
                    !b
                } else if i == 0 {
                    b ^ 0x80
                } else {
                    *b
                }
            }));
        }
        Form::Boolean => {
            if v.len() != 1 {
                return None;
            }
            out.push(u8::from(v[0] != 0));
        }
        Form::Uuid | Form::TimeUuid => {
            if v.len() != 16 {
                return None;
            }
            let hi = u64::from_be_bytes(v[..8].try_into().ok()?);
            if f == Form::Uuid {
                out.extend_from_slice(&uuid_msb_encode(hi).to_be_bytes());
                out.extend_from_slice(&v[8..]);
            } else {
                // The timestamp in order, then the low half compared as
                // signed bytes (`TimeUUIDType.compare`).
                out.extend_from_slice(&uuid_timestamp_first(hi).to_be_bytes());
                out.extend(v[8..].iter().map(|b| b ^ 0x80));
            }
        }
        Form::Escaped | Form::EscapedOpaque => escape(out, v),
        Form::Varint => encode_varint(out, v),
        Form::Decimal => encode_decimal(out, v)?,
    }
    Some(true)
}

/// `TimeUUIDType.reorderTimestampBytes`: version and high time, middle,
/// low.
fn uuid_timestamp_first(hi: u64) -> u64 {
    (hi << 48) | ((hi << 16) & 0xFFFF_0000_0000) | (hi >> 32)
}

/// The decimal digits of the magnitude of the two's-complement big-endian
/// integer `v`, most significant first, without leading zeros (empty for
/// zero), and whether it is negative.
fn decimal_digits(v: &[u8]) -> (Vec<u8>, bool) {
    let negative = v.first().is_some_and(|b| *b >= 0x80);
    // Magnitude bytes: two's complement negated for a negative number.
    let mut mag = v.to_vec();
    if negative {
        let mut carry = true;
        for b in mag.iter_mut().rev() {
            *b = !*b;
            if carry {
                let (x, c) = b.overflowing_add(1);
                *b = x;
                carry = c;
            }
        }
    }
    // Base 10^9 limbs, least significant first.
    const BASE: u64 = 1_000_000_000;
    let mut limbs: Vec<u32> = Vec::new();
    for &b in &mag {
        let mut carry = b as u64;
        for l in limbs.iter_mut() {
            let x = (*l as u64) * 256 + carry;
            *l = (x % BASE) as u32;
            carry = x / BASE;
        }
        while carry > 0 {
            limbs.push((carry % BASE) as u32);
            carry /= BASE;
        }
    }
    let mut digits = Vec::with_capacity(limbs.len() * 9);
    for (i, l) in limbs.iter().rev().enumerate() {
        let s = if i == 0 {
            l.to_string()
        } else {
            format!("{l:09}")
        };
        digits.extend(s.bytes().map(|c| c - b'0'));
    }
    (digits, negative)
}

/// `DecimalType.asComparableBytes`: `0x80` for zero; else a header byte
/// (sign, and sign and length of the base-100 exponent, negated for a
/// negative number), the exponent bytes, the base-100 mantissa digits
/// (`0x80 +` each, the first rounded towards -inf for a negative number so
/// that the rest are positive) and `0x00`.
fn encode_decimal(out: &mut Vec<u8>, v: &[u8]) -> Option<()> {
    let scale = read_i32(v, 0)? as i64;
    let unscaled = &v[4..];
    if unscaled.is_empty() {
        return None;
    }
    let (mut digits, negative) = decimal_digits(unscaled);
    if digits.is_empty() {
        out.push(0x80);
        return Some(());
    }
    let precision = digits.len() as i64;
    // Base-10 exponent rounded down to even, so the mantissa is 0.xx...
    // with an even count of digits before its first non-zero pair.
    let even = (scale - precision) & !1;
    let exponent = i32::try_from(-even >> 1).ok()?;
    let modulated = if negative { -exponent } else { exponent };
    if precision - scale + even == -1 {
        digits.insert(0, 0);
    }
    while digits.last() == Some(&0) {
        digits.pop();
    }
    if digits.len() % 2 == 1 {
        digits.push(0);
    }
    let len = 4 - (modulated.unsigned_abs().leading_zeros() / 8) as i32;
    let header = 0x40 + if modulated < 0 { -len } else { len } + if negative { 0 } else { 0x80 };
    out.push(header as u8);
    for i in (0..len).rev() {
        out.push((modulated >> (i * 8)) as u8);
    }
    let pairs: Vec<u8> = digits.chunks(2).map(|c| c[0] * 10 + c[1]).collect();
    if negative {
        // -0.P = -1 + 0.Q with Q = 100^k - P: the first digit is Q1 - 100.
        let k = pairs.len();
        for (i, p) in pairs.iter().enumerate() {
            let q = if i + 1 == k { 100 - p } else { 99 - p };
            out.push(if i == 0 { 0x80 + q - 100 } else { 0x80 + q });
        }
    } else {
        out.extend(pairs.iter().map(|p| 0x80 + p));
    }
    out.push(0x00);
    Some(())
}

/// Result of decoding one component's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decoded {
    /// The value and the encoded bytes it took.
    Complete(Vec<u8>, usize),
    /// The input ends inside the component.
    Truncated,
    /// The type is not supported, or the bytes are not a valid encoding.
    Unknown,
}

/// Decode the component bytes at the start of `b` (after the `0x40`
/// marker) as a value of `t`. Only canonical encodings are accepted (the
/// value re-encodes to exactly the bytes consumed), so a separator cut
/// inside a component never passes for a value it does not bound.
pub fn decode_component(t: &CqlType, b: &[u8]) -> Decoded {
    match decode_raw(t, b) {
        Decoded::Complete(v, n) => {
            let mut re = Vec::with_capacity(n + 1);
            match encode_component(&mut re, t, &v) {
                Some(()) if re.first() == Some(&NEXT_COMPONENT) && re[1..] == b[..n] => {
                    Decoded::Complete(v, n)
                }
                _ => Decoded::Unknown,
            }
        }
        d => d,
    }
}

fn decode_raw(t: &CqlType, b: &[u8]) -> Decoded {
    let (Some(f), rev) = base(t) else {
        return Decoded::Unknown;
    };
    let owned: Vec<u8>;
    let b = if rev {
        owned = b.iter().map(|x| !x).collect();
        &owned[..]
    } else {
        b
    };
    let fixed = |n: usize| -> Option<&[u8]> { b.get(..n) };
    match f {
        Form::Signed(n) => match fixed(n) {
            Some(x) => {
                let mut v = x.to_vec();
                v[0] ^= 0x80;
                Decoded::Complete(v, n)
            }
            None => Decoded::Truncated,
        },
        Form::Unsigned(n) => match fixed(n) {
            Some(x) => Decoded::Complete(x.to_vec(), n),
            None => Decoded::Truncated,
        },
        Form::VarLong => match decode_varlen_signed(b) {
            Some((x, n)) => Decoded::Complete(x.to_be_bytes().to_vec(), n),
            None => Decoded::Truncated,
        },
        Form::Float(n) => match fixed(n) {
            Some(x) => {
                let pos = x[0] & 0x80 != 0;
                let v = x
                    .iter()
                    .enumerate()
                    .map(|(i, y)| {
                        if !pos {
                            !y
                        } else if i == 0 {
                            y ^ 0x80
                        } else {
                            *y
                        }
                    })
                    .collect();
                Decoded::Complete(v, n)
            }
            None => Decoded::Truncated,
        },
        Form::Boolean => match b.first() {
            Some(0) => Decoded::Complete(vec![0], 1),
            Some(1) => Decoded::Complete(vec![1], 1),
            Some(_) => Decoded::Unknown,
            None => Decoded::Truncated,
        },
        Form::Uuid => match fixed(16) {
            Some(x) => {
                let hi = u64::from_be_bytes([x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]]);
                let mut v = uuid_msb_decode(hi).to_be_bytes().to_vec();
                v.extend_from_slice(&x[8..16]);
                Decoded::Complete(v, 16)
            }
            None => Decoded::Truncated,
        },
        Form::TimeUuid => match fixed(16) {
            Some(x) => {
                let t = u64::from_be_bytes([x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]]);
                // The inverse of `uuid_timestamp_first`.
                let hi = (t << 32) | ((t >> 16) & 0xFFFF_0000) | (t >> 48);
                let mut v = hi.to_be_bytes().to_vec();
                v.extend(x[8..16].iter().map(|b| b ^ 0x80));
                Decoded::Complete(v, 16)
            }
            None => Decoded::Truncated,
        },
        Form::Escaped => match unescape(b) {
            Some((v, n)) => Decoded::Complete(v, n),
            None => Decoded::Truncated,
        },
        Form::EscapedOpaque | Form::Varint | Form::Decimal => Decoded::Unknown,
    }
}

/// The terminator of a clustering prefix of kind `k`
/// (`ClusteringPrefix.Kind.asByteComparableValue`, OSS50).
pub fn kind_terminator(k: BoundKind) -> u8 {
    match k {
        BoundKind::ExclEndBound
        | BoundKind::InclStartBound
        | BoundKind::ExclEndInclStartBoundary => LT_NEXT_COMPONENT,
        BoundKind::StaticClustering => EXCLUDED,
        BoundKind::Clustering => TERMINATOR,
        BoundKind::InclEndExclStartBoundary
        | BoundKind::InclEndBound
        | BoundKind::ExclStartBound => GT_NEXT_COMPONENT,
    }
}

/// The byte-comparable form of a clustering prefix
/// (`ClusteringComparator.asByteComparable`); `None` when a component's
/// type is not supported.
pub fn clustering_bytes(types: &[CqlType], p: &ClusteringPrefix<'_>) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    for (i, v) in p.values.iter().enumerate() {
        match v {
            None => out.push(NEXT_COMPONENT_NULL),
            Some(v) => encode_component(&mut out, types.get(i)?, v)?,
        }
    }
    out.push(kind_terminator(p.kind));
    Some(out)
}

/// What the leading components of a byte-comparable clustering (or a
/// separator cut anywhere) decode to.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DecodedPrefix {
    /// The complete components (`None` = null).
    pub values: Vec<Option<Vec<u8>>>,
    /// The input ends right after them.
    pub exact_end: bool,
    /// The bytes of an incomplete text/ascii/blob component that follows,
    /// when they hold no zero byte (a lower bound of that value).
    pub partial: Option<Vec<u8>>,
    /// The byte after the components when it is a terminator
    /// (`0x38`, `0x20`, `0x60`, `0x18`).
    pub terminator: Option<u8>,
}

/// Decode as many complete components of `b` as possible (at most
/// `types.len()`).
pub fn decode_prefix(types: &[CqlType], b: &[u8]) -> DecodedPrefix {
    let mut d = DecodedPrefix::default();
    let mut pos = 0;
    while pos < b.len() && d.values.len() < types.len() {
        let t = &types[d.values.len()];
        match b[pos] {
            NEXT_COMPONENT => match decode_component(t, &b[pos + 1..]) {
                Decoded::Complete(v, n) => {
                    d.values.push(Some(v));
                    pos += 1 + n;
                }
                Decoded::Truncated => {
                    let rest = &b[pos + 1..];
                    let (f, rev) = base(t);
                    if f == Some(Form::Escaped) && !rev && !rest.is_empty() && !rest.contains(&0) {
                        d.partial = Some(rest.to_vec());
                    }
                    return d;
                }
                Decoded::Unknown => return d,
            },
            NEXT_COMPONENT_NULL => {
                d.values.push(None);
                pos += 1;
            }
            m @ (NEXT_COMPONENT_EMPTY | NEXT_COMPONENT_EMPTY_REVERSED) => {
                // Only a fixed-size type has these markers (0x41 when
                // reversed); anywhere else the byte is a separator's
                // incremented 0x40 and bounds nothing here.
                let (f, rev) = base(t);
                let valid = f.is_some_and(|f| !matches!(f, Form::Escaped | Form::EscapedOpaque))
                    && rev == (m == NEXT_COMPONENT_EMPTY_REVERSED);
                if !valid {
                    return d;
                }
                d.values.push(Some(Vec::new()));
                pos += 1;
            }
            _ => break,
        }
    }
    d.exact_end = pos == b.len();
    if let Some(&x) = b.get(pos) {
        if matches!(
            x,
            TERMINATOR | LT_NEXT_COMPONENT | GT_NEXT_COMPONENT | EXCLUDED
        ) {
            d.terminator = Some(x);
        }
    }
    d
}

/// True when `b` is a `float` / `double` NaN of type `t`.
fn is_nan(t: &CqlType, b: &[u8]) -> bool {
    match (base(t).0, b.len()) {
        (Some(Form::Float(4)), 4) => f32::from_be_bytes([b[0], b[1], b[2], b[3]]).is_nan(),
        (Some(Form::Float(8)), 8) => {
            let mut a = [0u8; 8];
            a.copy_from_slice(b);
            f64::from_be_bytes(a).is_nan()
        }
        _ => false,
    }
}

/// The floor and ceiling clustering bounds of a row-index separator (see
/// the module docs): every clustering encoded `>= sep` is `>= floor`, every
/// one encoded `<= sep` is `<= ceiling`.
pub fn separator_bounds(types: &[CqlType], sep: &[u8]) -> (OwnedClustering, OwnedClustering) {
    let d = decode_prefix(types, sep);
    let mut values = d.values;
    // NOTE: row clusterings are never null, so a real separator holds no null
    // component; a hostile one might. The comparator does not order nulls
    // the way the byte-comparable form does, so bound only by the components
    // before the first null (looser, never wrong). The same goes for a float
    // NaN: the byte-comparable form puts a NaN with the sign bit set below
    // every negative number, `Float.compare` puts every NaN last.
    let unordered = |(v, t): (&Option<Vec<u8>>, &CqlType)| match v {
        None => true,
        Some(b) => is_nan(t, b),
    };
    if let Some(i) = values.iter().zip(types).position(unordered) {
        values.truncate(i);
        return (
            OwnedClustering {
                kind: BoundKind::InclStartBound,
                values: values.clone(),
            },
            OwnedClustering {
                kind: BoundKind::InclEndBound,
                values,
            },
        );
    }
    let ceiling_kind = if let Some(t) = d.partial {
        values.push(Some(t));
        BoundKind::ExclEndBound
    } else if d.exact_end && !values.is_empty() {
        BoundKind::ExclEndBound
    } else {
        BoundKind::InclEndBound
    };
    (
        OwnedClustering {
            kind: BoundKind::InclStartBound,
            values: values.clone(),
        },
        OwnedClustering {
            kind: ceiling_kind,
            values,
        },
    )
}
