//! Typed values: decoding a serialized value of a [`CqlType`] into a [`Value`]
//! tree or a borrowed [`view`] of it, and the reverse direction for user-typed keys ([`parse_cql_literal`]).
//!
//! Value formats are the CQL native-protocol serializations
//! (`shared/docs/sstable-format.md` §3.12): big-endian two's complement
//! integers, UTF-8 text, frozen collections as `i32 count` + `i32`-length
//! elements, tuples/UDTs as `i32`-length fields (`-1` = null, trailing fields
//! may be absent), counters as counter contexts (§3.13), composites as
//! `u16 len + bytes + eoc` per component (§10.3). A zero-length value is
//! legal for most types (Cassandra allows an empty `int`) and decodes to
//! [`Value::Empty`], except for text, ascii and blob, where it is the empty
//! string / blob.
//!
//! Text forms of values (JSON, CQL literals, `getString`) are the
//! `commands` crate's renderer (`sstkit_commands::render`): it walks a
//! decoded [`Value`] ([`Value::view`]) or the bytes themselves
//! ([`view::Item`]) one level at a time.

pub mod literal;
pub mod view;

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

pub use literal::{
    days_from_civil, key_type_name, parse_components, parse_cql_literal, parse_epoch_seconds,
    parse_key_arg, parse_value_arg, split_composite_key_arg, COMPOSITE_SYNTAX,
};

use crate::component::Component;
use crate::cur::Cur;
use crate::error::{Error, ErrorKind, Result};
use crate::types::{CqlType, Native};
use view::View;

pub use crate::types::MAX_DEPTH;
pub use crate::varint::varint_magnitude;

/// A 16-byte UUID (big-endian: most significant long first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Uuid(pub [u8; 16]);

impl Uuid {
    /// The version nibble (1 for time-based UUIDs).
    pub fn version(&self) -> u8 {
        self.0[6] >> 4
    }

    /// For a version-1 UUID: the timestamp in 100 ns units since 1582-10-15.
    pub fn timestamp_100ns(&self) -> Option<u64> {
        if self.version() != 1 {
            return None;
        }
        let b = &self.0;
        let time_low = u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as u64;
        let time_mid = u16::from_be_bytes([b[4], b[5]]) as u64;
        let time_hi = (u16::from_be_bytes([b[6], b[7]]) & 0x0FFF) as u64;
        Some((time_hi << 48) | (time_mid << 32) | time_low)
    }

    /// Parse the canonical `8-4-4-4-12` hex form.
    pub fn parse(s: &str) -> Option<Uuid> {
        let b = s.as_bytes();
        if b.len() != 36 || b[8] != b'-' || b[13] != b'-' || b[18] != b'-' || b[23] != b'-' {
            return None;
        }
        let hexs: String = s.chars().filter(|&c| c != '-').collect();
        let v = literal::unhex(&hexs)?;
        let mut a = [0u8; 16];
        a.copy_from_slice(v.get(..16)?);
        Some(Uuid(a))
    }
}

impl fmt::Display for Uuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, x) in self.0.iter().enumerate() {
            if matches!(i, 4 | 6 | 8 | 10) {
                f.write_str("-")?;
            }
            write!(f, "{x:02x}")?;
        }
        Ok(())
    }
}

/// Kind of a counter shard (§3.13, `CounterContext`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardKind {
    /// Listed in the header with a non-negative index.
    Local,
    /// Listed in the header with a negative index (`idx + i16::MIN`).
    Global,
    /// Not listed in the header.
    Remote,
}

/// One counter shard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CounterShard {
    /// Local, global or remote.
    pub kind: ShardKind,
    /// Counter id (the host id of the writer).
    pub counter_id: Uuid,
    /// Logical clock.
    pub clock: i64,
    /// Count contributed by this shard.
    pub count: i64,
}

/// A decoded counter context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CounterContext {
    /// Shards in stored order.
    pub shards: Vec<CounterShard>,
    /// Sum of the shard counts (wrapping, like Java `long` arithmetic).
    pub total: i64,
}

/// One component of a `CompositeType` value.
#[derive(Debug, Clone, PartialEq)]
pub struct CompositeComponent {
    /// The component value.
    pub value: Value,
    /// End-of-component byte (0 normally; `0x01`/`0xFF` in range bounds).
    pub eoc: u8,
}

/// A decoded value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A null (tuple/UDT field or collection element of length -1).
    Null,
    /// A zero-length value of a type whose values are normally not empty.
    Empty,
    /// `ascii`.
    Ascii(String),
    /// `text` / `varchar`.
    Text(String),
    /// `ascii`/`text` bytes that are not valid for the type (kept raw).
    BadText(Vec<u8>),
    /// `bigint`.
    Bigint(i64),
    /// `int`.
    Int(i32),
    /// `smallint`.
    Smallint(i16),
    /// `tinyint`.
    Tinyint(i8),
    /// `varint`: big-endian two's complement bytes as stored.
    Varint(Vec<u8>),
    /// `decimal`: `unscaled × 10^-scale`; unscaled as two's complement bytes.
    Decimal {
        /// Scale.
        scale: i32,
        /// Unscaled value bytes.
        unscaled: Vec<u8>,
    },
    /// `float`.
    Float(f32),
    /// `double`.
    Double(f64),
    /// `boolean` (any non-zero byte is true).
    Boolean(bool),
    /// `uuid` (also the legacy `LexicalUUIDType`).
    Uuid(Uuid),
    /// `timeuuid`.
    Timeuuid(Uuid),
    /// `timestamp`: milliseconds since the epoch.
    Timestamp(i64),
    /// `date`: days with the epoch at 2^31.
    Date(u32),
    /// `time`: nanoseconds since midnight.
    Time(i64),
    /// `duration`.
    Duration {
        /// Months.
        months: i32,
        /// Days.
        days: i32,
        /// Nanoseconds.
        nanos: i64,
    },
    /// `inet`.
    Inet(IpAddr),
    /// `blob` (and any type decoded as raw bytes).
    Blob(Vec<u8>),
    /// `counter`: the counter context.
    Counter(CounterContext),
    /// `list` (frozen serialization).
    List(Vec<Value>),
    /// `set`.
    Set(Vec<Value>),
    /// `map`.
    Map(Vec<(Value, Value)>),
    /// `tuple`: one value per tuple type; fields after `present` were absent.
    Tuple {
        /// Field values (absent trailing fields are [`Value::Null`]).
        values: Vec<Value>,
        /// How many fields were present in the serialization.
        present: usize,
    },
    /// A (frozen) user-defined type value.
    Udt {
        /// Type name.
        name: String,
        /// Every declared field with its value (absent ones [`Value::Null`]).
        fields: Vec<(String, Value)>,
        /// How many fields were present in the serialization.
        present: usize,
    },
    /// `vector<T, n>`.
    Vector(Vec<Value>),
    /// `CompositeType` value (multi-column partition keys, legacy cell names).
    Composite {
        /// Leading `0xFFFF` static marker.
        is_static: bool,
        /// Components.
        components: Vec<CompositeComponent>,
    },
}

/// Decode `bytes` as a value of `ty`. Errors are located relative to the
/// start of `bytes` in [`Component::Data`]; use [`decode_at`] when the
/// position is known.
pub fn decode(ty: &CqlType, bytes: &[u8]) -> Result<Value> {
    decode_at(ty, bytes, Component::Data, 0)
}

/// Decode `bytes` (found at `base` in `comp`) as a value of `ty`.
pub fn decode_at(ty: &CqlType, bytes: &[u8], comp: Component, base: u64) -> Result<Value> {
    let mut cur = Cur::new(bytes, comp, base);
    decode_value(ty, &mut cur, 0)
}

fn exact<const N: usize>(cur: &mut Cur<'_>, what: &'static str) -> Result<[u8; N]> {
    if cur.remaining() != N {
        return Err(cur.bad(what, format!("expected {N} bytes, got {}", cur.remaining())));
    }
    let b = cur.bytes(N, what)?;
    let mut a = [0u8; N];
    a.copy_from_slice(b);
    Ok(a)
}

/// Decode the whole remaining input of `cur` as a value of `ty`.
fn decode_value(ty: &CqlType, cur: &mut Cur<'_>, depth: u32) -> Result<Value> {
    if depth > MAX_DEPTH {
        return Err(cur.bad("value", "value nested too deeply"));
    }
    if cur.is_empty() {
        return Ok(match ty.unreversed() {
            CqlType::Native(Native::Text) => Value::Text(String::new()),
            CqlType::Native(Native::Ascii) => Value::Ascii(String::new()),
            CqlType::Native(Native::Blob) | CqlType::Custom(_) => Value::Blob(Vec::new()),
            CqlType::Frozen(t) => return decode_value(t, cur, depth + 1),
            _ => Value::Empty,
        });
    }
    Ok(match ty {
        CqlType::Reversed(t) | CqlType::Frozen(t) => decode_value(t, cur, depth + 1)?,
        CqlType::Native(n) => decode_native(*n, cur)?,
        CqlType::List(t) => Value::List(elements(t, cur, depth)?),
        CqlType::Set(t) => Value::Set(elements(t, cur, depth)?),
        CqlType::Map(k, v) => {
            let n = collection_count(cur)?;
            let mut m = Vec::with_capacity(n);
            for _ in 0..n {
                let key = element(k, cur, depth)?;
                let val = element(v, cur, depth)?;
                m.push((key, val));
            }
            trailing(cur, "map")?;
            Value::Map(m)
        }
        CqlType::Tuple(ts) => {
            let (values, present) = fields(ts.iter(), cur, depth)?;
            Value::Tuple { values, present }
        }
        CqlType::Udt {
            name, fields: fs, ..
        } => {
            let (values, present) = fields(fs.iter().map(|f| &f.1), cur, depth)?;
            Value::Udt {
                name: name.clone(),
                fields: fs.iter().map(|f| f.0.clone()).zip(values).collect(),
                present,
            }
        }
        CqlType::Vector(t, n) => {
            let mut v = Vec::with_capacity((*n).min(cur.remaining()));
            match t.fixed_len() {
                Some(0) => return Err(cur.bad("vector", "vector of zero-length elements")),
                Some(len) => {
                    let want = len.saturating_mul(*n);
                    if cur.remaining() != want {
                        return Err(cur.bad(
                            "vector",
                            format!("expected {want} bytes, got {}", cur.remaining()),
                        ));
                    }
                    for _ in 0..*n {
                        let mut sub = cur.split(len as u64, "vector element")?;
                        v.push(decode_value(t, &mut sub, depth + 1)?);
                    }
                }
                None => {
                    for _ in 0..*n {
                        let len = cur.uvint("vector element length")?;
                        let mut sub = cur.split(len, "vector element")?;
                        v.push(decode_value(t, &mut sub, depth + 1)?);
                    }
                    trailing(cur, "vector")?;
                }
            }
            Value::Vector(v)
        }
        CqlType::Composite(ts) => decode_composite(ts, cur, depth)?,
        CqlType::DynamicComposite(_) | CqlType::ColumnToCollection(_) | CqlType::Custom(_) => {
            Value::Blob(cur.bytes(cur.remaining(), "value")?.to_vec())
        }
    })
}

fn trailing(cur: &Cur<'_>, what: &'static str) -> Result<()> {
    if cur.is_empty() {
        Ok(())
    } else {
        Err(cur.bad(
            what,
            format!("{} bytes after the end of the value", cur.remaining()),
        ))
    }
}

fn decode_native(n: Native, cur: &mut Cur<'_>) -> Result<Value> {
    Ok(match n {
        Native::Ascii => {
            let b = cur.bytes(cur.remaining(), "ascii")?;
            if b.is_ascii() {
                Value::Ascii(String::from_utf8_lossy(b).into_owned())
            } else {
                Value::BadText(b.to_vec())
            }
        }
        Native::Text => {
            let b = cur.bytes(cur.remaining(), "text")?;
            match std::str::from_utf8(b) {
                Ok(s) => Value::Text(s.to_string()),
                Err(_) => Value::BadText(b.to_vec()),
            }
        }
        Native::Bigint => Value::Bigint(i64::from_be_bytes(exact(cur, "bigint")?)),
        Native::Int => Value::Int(i32::from_be_bytes(exact(cur, "int")?)),
        Native::Smallint => Value::Smallint(i16::from_be_bytes(exact(cur, "smallint")?)),
        Native::Tinyint => Value::Tinyint(i8::from_be_bytes(exact(cur, "tinyint")?)),
        Native::Varint => Value::Varint(cur.bytes(cur.remaining(), "varint")?.to_vec()),
        Native::Decimal => {
            let scale = cur.i32("decimal scale")?;
            Value::Decimal {
                scale,
                unscaled: cur.bytes(cur.remaining(), "decimal unscaled")?.to_vec(),
            }
        }
        Native::Float => Value::Float(f32::from_be_bytes(exact(cur, "float")?)),
        Native::Double => Value::Double(f64::from_be_bytes(exact(cur, "double")?)),
        Native::Boolean => Value::Boolean(exact::<1>(cur, "boolean")?[0] != 0),
        Native::Uuid | Native::LexicalUuid => Value::Uuid(Uuid(exact(cur, "uuid")?)),
        Native::Timeuuid => Value::Timeuuid(Uuid(exact(cur, "timeuuid")?)),
        Native::Timestamp | Native::LegacyDate => {
            Value::Timestamp(i64::from_be_bytes(exact(cur, "timestamp")?))
        }
        Native::Date => Value::Date(u32::from_be_bytes(exact(cur, "date")?)),
        Native::Time => Value::Time(i64::from_be_bytes(exact(cur, "time")?)),
        Native::Duration => {
            let months = cur.vint("duration months")?;
            let days = cur.vint("duration days")?;
            let nanos = cur.vint("duration nanoseconds")?;
            trailing(cur, "duration")?;
            let months = i32::try_from(months)
                .map_err(|_| cur.bad("duration months", "not a 32-bit integer"))?;
            let days = i32::try_from(days)
                .map_err(|_| cur.bad("duration days", "not a 32-bit integer"))?;
            Value::Duration {
                months,
                days,
                nanos,
            }
        }
        Native::Inet => {
            let b = cur.bytes(cur.remaining(), "inet")?;
            match b.len() {
                4 => Value::Inet(IpAddr::V4(Ipv4Addr::new(b[0], b[1], b[2], b[3]))),
                16 => {
                    let mut a = [0u8; 16];
                    a.copy_from_slice(b);
                    Value::Inet(IpAddr::V6(Ipv6Addr::from(a)))
                }
                n => return Err(cur.bad("inet", format!("expected 4 or 16 bytes, got {n}"))),
            }
        }
        Native::Blob => Value::Blob(cur.bytes(cur.remaining(), "blob")?.to_vec()),
        Native::Counter => Value::Counter(decode_counter(cur)?),
        Native::Empty => return Err(cur.bad("empty type value", "non-empty value for EmptyType")),
    })
}

/// A counter context (§3.13) borrowed from its bytes, checked whole: `i16
/// header count`, that many `i16` header entries, then 32-byte shards of
/// `16-byte counter id, i64 clock, i64 count`.
#[derive(Debug, Clone, Copy)]
pub struct CounterView<'a> {
    header: &'a [u8],
    shards: &'a [u8],
}

impl<'a> CounterView<'a> {
    /// Read the whole remaining input of `cur` as a counter context.
    pub fn parse(cur: &mut Cur<'a>) -> Result<Self> {
        let hc = cur.u16("counter header count")? as i16;
        let n = cur.count(hc.unsigned_abs() as u64, 2, "counter header count")?;
        let header = cur.bytes(2 * n, "counter header")?;
        if !cur.remaining().is_multiple_of(32) {
            return Err(cur.bad(
                "counter shards",
                format!("{} bytes is not a whole number of shards", cur.remaining()),
            ));
        }
        let shards = cur.bytes(cur.remaining(), "counter shards")?;
        Ok(CounterView { header, shards })
    }

    /// `b` as a counter context, or `None` when it is not one.
    pub fn of(b: &'a [u8]) -> Option<Self> {
        Self::parse(&mut Cur::new(b, Component::Data, 0)).ok()
    }

    /// The shards in stored order.
    pub fn shards(self) -> impl Iterator<Item = CounterShard> + 'a {
        let header = self.header;
        let is = move |i: usize, global: bool| {
            header.chunks_exact(2).any(|h| {
                let h = i16::from_be_bytes([h[0], h[1]]);
                if global {
                    h < 0 && (h as i32 - i16::MIN as i32) as usize == i
                } else {
                    h >= 0 && h as usize == i
                }
            })
        };
        self.shards.chunks_exact(32).enumerate().map(move |(i, s)| {
            let long = |at: usize| {
                let mut a = [0u8; 8];
                a.copy_from_slice(&s[at..at + 8]);
                i64::from_be_bytes(a)
            };
            let mut id = [0u8; 16];
            id.copy_from_slice(&s[..16]);
            let kind = if is(i, false) {
                ShardKind::Local
            } else if is(i, true) {
                ShardKind::Global
            } else {
                ShardKind::Remote
            };
            CounterShard {
                kind,
                counter_id: Uuid(id),
                clock: long(16),
                count: long(24),
            }
        })
    }

    /// Sum of the shard counts (wrapping, like Java `long` arithmetic).
    pub fn total(self) -> i64 {
        self.shards().fold(0i64, |t, s| t.wrapping_add(s.count))
    }
}

/// Decode a counter context (§3.13).
pub fn decode_counter(cur: &mut Cur<'_>) -> Result<CounterContext> {
    let c = CounterView::parse(cur)?;
    Ok(CounterContext {
        shards: c.shards().collect(),
        total: c.total(),
    })
}

fn collection_count(cur: &mut Cur<'_>) -> Result<usize> {
    let at = cur.abs_offset();
    let n = cur.i32("collection size")?;
    if n < 0 {
        return Err(Error::at(
            ErrorKind::BadValue(format!("negative collection size {n}")),
            cur.component(),
            at,
            "collection size",
        ));
    }
    cur.count(n as u64, 4, "collection size")
}

fn element(ty: &CqlType, cur: &mut Cur<'_>, depth: u32) -> Result<Value> {
    let at = cur.abs_offset();
    let len = cur.i32("element length")?;
    if len == -1 {
        return Ok(Value::Null);
    }
    if len < 0 {
        return Err(Error::at(
            ErrorKind::BadValue(format!("negative element length {len}")),
            cur.component(),
            at,
            "element length",
        ));
    }
    let mut sub = cur.split(len as u64, "element")?;
    decode_value(ty, &mut sub, depth + 1)
}

fn elements(ty: &CqlType, cur: &mut Cur<'_>, depth: u32) -> Result<Vec<Value>> {
    let n = collection_count(cur)?;
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        v.push(element(ty, cur, depth)?);
    }
    trailing(cur, "collection")?;
    Ok(v)
}

fn fields<'t>(
    types: impl Iterator<Item = &'t CqlType>,
    cur: &mut Cur<'_>,
    depth: u32,
) -> Result<(Vec<Value>, usize)> {
    let mut v = Vec::new();
    let mut present = 0;
    for t in types {
        if cur.is_empty() {
            v.push(Value::Null);
            continue;
        }
        v.push(element(t, cur, depth)?);
        present += 1;
    }
    trailing(cur, "tuple")?;
    Ok((v, present))
}

fn decode_composite(ts: &[CqlType], cur: &mut Cur<'_>, depth: u32) -> Result<Value> {
    let mut is_static = false;
    if cur.remaining() >= 2 && cur.rest()[0] == 0xFF && cur.rest()[1] == 0xFF {
        is_static = true;
        cur.skip(2, "composite static marker")?;
    }
    let mut components = Vec::new();
    let blob = CqlType::Native(Native::Blob);
    while !cur.is_empty() {
        let len = cur.u16("composite component length")?;
        let mut sub = cur.split(len as u64, "composite component")?;
        let t = ts.get(components.len()).unwrap_or(&blob);
        let value = decode_value(t, &mut sub, depth + 1)?;
        let eoc = cur.u8("composite end-of-component")?;
        components.push(CompositeComponent { value, eoc });
    }
    Ok(Value::Composite {
        is_static,
        components,
    })
}

/// True when the value's type has a fixed serialized length (used to frame
/// vector elements when re-serializing).
fn fixed_variant(v: &Value) -> bool {
    matches!(
        v,
        Value::Boolean(_)
            | Value::Int(_)
            | Value::Float(_)
            | Value::Bigint(_)
            | Value::Double(_)
            | Value::Timestamp(_)
            | Value::Uuid(_)
            | Value::Timeuuid(_)
    )
}

impl Value {
    /// True for [`Value::Null`].
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// Re-serialize the value (the inverse of [`decode`] for values it
    /// produced; booleans become `0`/`1`).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_bytes(&mut out);
        out
    }

    fn write_bytes(&self, out: &mut Vec<u8>) {
        fn elem(out: &mut Vec<u8>, v: &Value) {
            if v.is_null() {
                out.extend_from_slice(&(-1i32).to_be_bytes());
            } else {
                let b = v.to_bytes();
                out.extend_from_slice(&(b.len() as i32).to_be_bytes());
                out.extend_from_slice(&b);
            }
        }
        match self {
            Value::Null | Value::Empty => {}
            Value::Ascii(s) | Value::Text(s) => out.extend_from_slice(s.as_bytes()),
            Value::BadText(b) | Value::Blob(b) | Value::Varint(b) => out.extend_from_slice(b),
            Value::Bigint(v) => out.extend_from_slice(&v.to_be_bytes()),
            Value::Int(v) => out.extend_from_slice(&v.to_be_bytes()),
            Value::Smallint(v) => out.extend_from_slice(&v.to_be_bytes()),
            Value::Tinyint(v) => out.extend_from_slice(&v.to_be_bytes()),
            Value::Decimal { scale, unscaled } => {
                out.extend_from_slice(&scale.to_be_bytes());
                out.extend_from_slice(unscaled);
            }
            Value::Float(v) => out.extend_from_slice(&v.to_be_bytes()),
            Value::Double(v) => out.extend_from_slice(&v.to_be_bytes()),
            Value::Boolean(b) => out.push(*b as u8),
            Value::Uuid(u) | Value::Timeuuid(u) => out.extend_from_slice(&u.0),
            Value::Timestamp(v) => out.extend_from_slice(&v.to_be_bytes()),
            Value::Date(v) => out.extend_from_slice(&v.to_be_bytes()),
            Value::Time(v) => out.extend_from_slice(&v.to_be_bytes()),
            Value::Duration {
                months,
                days,
                nanos,
            } => {
                for v in [*months as i64, *days as i64, *nanos] {
                    crate::cur::write_uvint(out, ((v << 1) ^ (v >> 63)) as u64);
                }
            }
            Value::Inet(IpAddr::V4(a)) => out.extend_from_slice(&a.octets()),
            Value::Inet(IpAddr::V6(a)) => out.extend_from_slice(&a.octets()),
            Value::Counter(c) => {
                let locals: Vec<i16> = c
                    .shards
                    .iter()
                    .enumerate()
                    .filter_map(|(i, s)| match s.kind {
                        ShardKind::Local => Some(i as i16),
                        ShardKind::Global => Some((i as i32 + i16::MIN as i32) as i16),
                        ShardKind::Remote => None,
                    })
                    .collect();
                out.extend_from_slice(&(locals.len() as i16).to_be_bytes());
                for h in locals {
                    out.extend_from_slice(&h.to_be_bytes());
                }
                for s in &c.shards {
                    out.extend_from_slice(&s.counter_id.0);
                    out.extend_from_slice(&s.clock.to_be_bytes());
                    out.extend_from_slice(&s.count.to_be_bytes());
                }
            }
            Value::List(v) | Value::Set(v) => {
                out.extend_from_slice(&(v.len() as i32).to_be_bytes());
                for e in v {
                    elem(out, e);
                }
            }
            Value::Map(m) => {
                out.extend_from_slice(&(m.len() as i32).to_be_bytes());
                for (k, v) in m {
                    elem(out, k);
                    elem(out, v);
                }
            }
            Value::Tuple { values, present } => {
                for v in values.iter().take(*present) {
                    elem(out, v);
                }
            }
            Value::Udt {
                fields, present, ..
            } => {
                for (_, v) in fields.iter().take(*present) {
                    elem(out, v);
                }
            }
            Value::Vector(v) => {
                for e in v {
                    let b = e.to_bytes();
                    if !fixed_variant(e) {
                        crate::cur::write_uvint(out, b.len() as u64);
                    }
                    out.extend_from_slice(&b);
                }
            }
            Value::Composite {
                is_static,
                components,
            } => {
                if *is_static {
                    out.extend_from_slice(&[0xFF, 0xFF]);
                }
                for c in components {
                    let b = c.value.to_bytes();
                    out.extend_from_slice(&(b.len() as u16).to_be_bytes());
                    out.extend_from_slice(&b);
                    out.push(c.eoc);
                }
            }
        }
    }
}

impl Value {
    /// The value one level down, as [`view::Item::view`] gives it for its
    /// serialization: the renderer walks decoded values and bytes alike.
    pub fn view(&self) -> View<'_, &Value> {
        use view::Scalar as Sc;
        use View as N;
        N::Scalar(match self {
            Value::Null => return N::Null,
            Value::Empty => Sc::Empty,
            Value::Ascii(s) | Value::Text(s) => Sc::Text(s),
            Value::BadText(b) => Sc::BadText(b),
            Value::Blob(b) => Sc::Blob(b),
            Value::Bigint(v) => Sc::Int(*v),
            Value::Int(v) => Sc::Int((*v).into()),
            Value::Smallint(v) => Sc::Int((*v).into()),
            Value::Tinyint(v) => Sc::Int((*v).into()),
            Value::Varint(b) => Sc::Varint(b),
            Value::Decimal { scale, unscaled } => Sc::Decimal {
                scale: *scale,
                unscaled,
            },
            Value::Float(v) => Sc::Float(*v),
            Value::Double(v) => Sc::Double(*v),
            Value::Boolean(b) => Sc::Boolean(*b),
            Value::Uuid(u) | Value::Timeuuid(u) => Sc::Uuid(&u.0),
            Value::Timestamp(ms) => Sc::Timestamp(*ms),
            Value::Date(d) => Sc::Date(*d),
            Value::Time(t) => Sc::Time(*t),
            Value::Duration {
                months,
                days,
                nanos,
            } => Sc::Duration {
                months: (*months).into(),
                days: (*days).into(),
                nanos: *nanos,
            },
            Value::Inet(ip) => Sc::Inet(*ip),
            Value::Counter(c) => Sc::Counter {
                first: self
                    .to_bytes()
                    .get(..8)
                    .and_then(|b| b.try_into().ok())
                    .map(i64::from_be_bytes),
                total: Some(c.total),
            },
            Value::List(v) => return N::List(v.iter().collect()),
            Value::Set(v) => return N::Set(v.iter().collect()),
            Value::Map(m) => return N::Map(m.iter().flat_map(|(k, v)| [k, v]).collect()),
            Value::Vector(v) => return N::Vector(v.iter().collect()),
            Value::Tuple { values, present } => {
                return N::Tuple {
                    fields: values.iter().collect(),
                    present: *present,
                }
            }
            Value::Udt {
                fields, present, ..
            } => {
                return N::Udt {
                    fields: fields.iter().map(|(n, v)| (n.as_str(), v)).collect(),
                    present: *present,
                }
            }
            Value::Composite { components, .. } => {
                return N::Composite(components.iter().map(|c| (&c.value, c.eoc)).collect())
            }
        })
    }
}

#[cfg(test)]
mod tests;
