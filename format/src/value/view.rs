//! A borrowed view of a serialized value: one level decoded at a time,
//! children left as bytes with their type, every length read through
//! [`Cur`]. What the renderer walks: [`Item::view`] for any value,
//! [`Scalar::of`] for a native one, [`Item::elements`] for a list, set or
//! map walked in place.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::CounterView;
use crate::component::Component;
use crate::cur::Cur;
use crate::types::{CqlType, Native};

/// What the renderer sees of a value: a null, a decoded scalar, or the
/// children of a collection / tuple / UDT / composite.
#[derive(Debug)]
pub enum View<'a, S> {
    /// A null (collection element, tuple/UDT field).
    Null,
    /// A native value.
    Scalar(Scalar<'a>),
    /// `list`.
    List(Vec<S>),
    /// `set`.
    Set(Vec<S>),
    /// `map`: keys and values alternating.
    Map(Vec<S>),
    /// `vector`.
    Vector(Vec<S>),
    /// `tuple`: every declared field; those after `present` were absent.
    Tuple {
        /// Fields (absent ones null).
        fields: Vec<S>,
        /// How many fields the serialization holds.
        present: usize,
    },
    /// UDT: every declared field with its name.
    Udt {
        /// Fields (absent ones null).
        fields: Vec<(&'a str, S)>,
        /// How many fields the serialization holds.
        present: usize,
    },
    /// `CompositeType`: components with their end-of-component byte.
    Composite(Vec<(S, u8)>),
}

/// A native value decoded, borrowing its bytes (nothing to allocate or
/// drop: what a renderer matches on for most values of a dump).
#[derive(Debug, Clone, Copy)]
pub enum Scalar<'a> {
    /// A zero-length value of a type whose values are normally not empty.
    Empty,
    /// Bytes that do not decode as the type: rendered as hex.
    Invalid,
    /// `ascii` / `text`.
    Text(&'a str),
    /// `ascii` / `text` bytes that are not valid for the type.
    BadText(&'a [u8]),
    /// `blob` (and types handled as raw bytes).
    Blob(&'a [u8]),
    /// `bigint`, `int`, `smallint`, `tinyint`.
    Int(i64),
    /// `varint`: two's complement bytes.
    Varint(&'a [u8]),
    /// `decimal`.
    Decimal {
        /// Scale.
        scale: i32,
        /// Two's complement unscaled value.
        unscaled: &'a [u8],
    },
    /// `float`.
    Float(f32),
    /// `double`.
    Double(f64),
    /// `boolean`.
    Boolean(bool),
    /// `uuid` / `timeuuid`.
    Uuid(&'a [u8; 16]),
    /// `timestamp` (ms).
    Timestamp(i64),
    /// `date` (days, epoch at 2^31).
    Date(u32),
    /// `time` (ns of the day).
    Time(i64),
    /// `duration`.
    Duration {
        /// Months.
        months: i64,
        /// Days.
        days: i64,
        /// Nanoseconds.
        nanos: i64,
    },
    /// `inet`.
    Inet(IpAddr),
    /// `counter`: the first 8 bytes of the context as a long (what
    /// `CounterColumnType.toJSONString`/`getString` print), and the total.
    Counter {
        /// `ByteBufferUtil.toLong` of the context.
        first: Option<i64>,
        /// Sum of the shards.
        total: Option<i64>,
    },
}

/// Serialized bytes of a type (a value, or a child of one).
#[derive(Debug, Clone, Copy)]
pub struct Item<'a> {
    /// The type.
    pub ty: &'a CqlType,
    /// The bytes; `None` is a null element.
    pub b: Option<&'a [u8]>,
}

static BLOB: CqlType = CqlType::Native(Native::Blob);

impl<'a> Item<'a> {
    /// A value `b` of type `ty`.
    pub fn new(ty: &'a CqlType, b: &'a [u8]) -> Self {
        Item { ty, b: Some(b) }
    }

    /// The value one level down: a scalar, or its children.
    #[inline]
    pub fn view(self) -> View<'a, Item<'a>> {
        match self.b {
            Some(b) => raw_node(self.ty, b),
            None => View::Null,
        }
    }

    /// The elements of a list, set or map value in place (map keys and
    /// values alternating), for a walk that collects nothing; `None` for
    /// other types, a null, an empty value (whose [`view`](Item::view) is
    /// `Empty`) or one too short for its count. A walk that ends
    /// [`truncated`](Elements::truncated) was of a value whose view is
    /// `Invalid`.
    #[inline]
    pub fn elements(self) -> Option<Elements<'a>> {
        let b = self.b.filter(|b| !b.is_empty())?;
        match self.ty.bare() {
            CqlType::List(t) | CqlType::Set(t) => Elements::of(b, [t, t], 1),
            CqlType::Map(k, v) => Elements::of(b, [k, v], 2),
            _ => None,
        }
    }
}

impl<'a> Scalar<'a> {
    /// Value `b` of native type `n` (what [`Item::view`] gives for it,
    /// without the walk through the type).
    #[inline(always)]
    pub fn of(n: Native, b: &'a [u8]) -> Self {
        use Native::{Ascii, Blob, Text};
        if b.is_empty() && !matches!(n, Ascii | Text | Blob) {
            return Scalar::Empty;
        }
        native(n, b).unwrap_or(Scalar::Invalid)
    }
}

#[inline]
fn raw_node<'a>(ty: &'a CqlType, b: &'a [u8]) -> View<'a, Item<'a>> {
    use CqlType as T;
    let node = match ty.bare() {
        T::Native(n) => return View::Scalar(Scalar::of(*n, b)),
        T::Custom(_) | T::DynamicComposite(_) | T::ColumnToCollection(_) => {
            return View::Scalar(Scalar::Blob(b))
        }
        _ if b.is_empty() => return View::Scalar(Scalar::Empty),
        T::List(t) => collection(b, [t, t], 1).map(View::List),
        T::Set(t) => collection(b, [t, t], 1).map(View::Set),
        T::Map(k, v) => collection(b, [k, v], 2).map(View::Map),
        T::Vector(t, n) => vector(t, *n, b).map(View::Vector),
        T::Tuple(ts) => {
            let (fields, present) = tuple_fields(ts.iter(), b);
            Some(View::Tuple { fields, present })
        }
        T::Udt { fields: defs, .. } => {
            let (fields, present) = tuple_fields(defs.iter().map(|d| &d.1), b);
            let fields = defs.iter().map(|d| d.0.as_str()).zip(fields).collect();
            Some(View::Udt { fields, present })
        }
        T::Composite(ts) => {
            // Complete components only (a missing end-of-component byte ends
            // the value).
            let parts = CompositeParts::of(b)
                .map_while(|(v, eoc)| Some((v, eoc?)))
                .enumerate()
                .map(|(i, (v, eoc))| (Item::new(ts.get(i).unwrap_or(&BLOB), v), eoc))
                .collect();
            Some(View::Composite(parts))
        }
        // `bare()` took the wrappers off.
        T::Reversed(_) | T::Frozen(_) => None,
    };
    // Not `unwrap_or`: that builds (and drops) an `Invalid` for every value.
    let Some(node) = node else {
        return View::Scalar(Scalar::Invalid);
    };
    node
}

fn be<const N: usize>(b: &[u8]) -> Option<[u8; N]> {
    b.try_into().ok()
}

/// A native value; `None` when the bytes do not decode. Inlined: a
/// renderer's match on the scalar then folds into this one.
#[inline(always)]
fn native(n: Native, b: &[u8]) -> Option<Scalar<'_>> {
    use Native::*;
    match n {
        Ascii if b.is_ascii() => std::str::from_utf8(b).ok().map(Scalar::Text),
        Ascii => Some(Scalar::BadText(b)),
        Text => Some(match std::str::from_utf8(b) {
            Ok(s) => Scalar::Text(s),
            Err(_) => Scalar::BadText(b),
        }),
        Blob => Some(Scalar::Blob(b)),
        Empty => Some(Scalar::Empty),
        Bigint => be::<8>(b).map(|x| Scalar::Int(i64::from_be_bytes(x))),
        Int => be::<4>(b).map(|x| Scalar::Int(i32::from_be_bytes(x).into())),
        Smallint => be::<2>(b).map(|x| Scalar::Int(i16::from_be_bytes(x).into())),
        Tinyint => be::<1>(b).map(|x| Scalar::Int(i8::from_be_bytes(x).into())),
        Counter => Some(Scalar::Counter {
            first: b.get(..8).and_then(be::<8>).map(i64::from_be_bytes),
            total: CounterView::of(b).map(CounterView::total),
        }),
        Boolean => be::<1>(b).map(|x| Scalar::Boolean(x[0] != 0)),
        Float => be::<4>(b).map(|x| Scalar::Float(f32::from_be_bytes(x))),
        Double => be::<8>(b).map(|x| Scalar::Double(f64::from_be_bytes(x))),
        Varint => Some(Scalar::Varint(b)),
        Decimal => b.split_first_chunk::<4>().map(|(s, u)| Scalar::Decimal {
            scale: i32::from_be_bytes(*s),
            unscaled: u,
        }),
        Timestamp | LegacyDate => be::<8>(b).map(|x| Scalar::Timestamp(i64::from_be_bytes(x))),
        Date => be::<4>(b).map(|x| Scalar::Date(u32::from_be_bytes(x))),
        Time => be::<8>(b).map(|x| Scalar::Time(i64::from_be_bytes(x))),
        Uuid | Timeuuid | LexicalUuid => b.try_into().ok().map(Scalar::Uuid),
        Inet => match b.len() {
            4 => be::<4>(b).map(|x| Scalar::Inet(IpAddr::V4(Ipv4Addr::from(x)))),
            16 => be::<16>(b).map(|x| Scalar::Inet(IpAddr::V6(Ipv6Addr::from(x)))),
            _ => None,
        },
        Duration => duration(b).map(|(months, days, nanos)| Scalar::Duration {
            months,
            days,
            nanos,
        }),
    }
}

/// The elements of a frozen list, set or map body: `i32 count` (a
/// negative one reads as zero), then per element one `i32`-length-prefixed
/// value per type (a negative length is a null; map keys and values
/// alternate), bytes after the last element ignored. A truncated body ends
/// the walk early and sets [`Elements::truncated`].
#[derive(Debug, Clone)]
pub struct Elements<'a> {
    cur: Cur<'a>,
    /// The next value's type first (a list's or set's element type twice).
    tys: [&'a CqlType; 2],
    /// Values not yet read.
    left: usize,
    truncated: bool,
}

impl<'a> Elements<'a> {
    /// The elements of body `b`, `per` values each (1, or 2 for a map's
    /// key and value) of types `tys` alternating; `None` when the body has
    /// no count.
    #[inline(always)]
    fn of(b: &'a [u8], tys: [&'a CqlType; 2], per: usize) -> Option<Self> {
        let mut cur = cur(b);
        let n = cur.i32("collection size").ok()?;
        let left = usize::try_from(n).unwrap_or(0).saturating_mul(per);
        Some(Elements {
            cur,
            tys,
            left,
            truncated: false,
        })
    }

    /// True when the walk ended early at the end of a truncated body (the
    /// value then does not decode: its view is `Invalid`).
    pub fn truncated(&self) -> bool {
        self.truncated
    }
}

impl<'a> Iterator for Elements<'a> {
    type Item = Item<'a>;

    #[inline(always)]
    fn next(&mut self) -> Option<Item<'a>> {
        if self.left == 0 {
            return None;
        }
        let ty = self.tys[0];
        self.tys.swap(0, 1);
        let Ok(b) = self.cur.nullable_int_bytes("collection element") else {
            self.truncated = true;
            self.left = 0;
            return None;
        };
        self.left -= 1;
        Some(Item { ty, b })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.left))
    }
}

/// All the elements of a complete body ([`Elements`]); `None` when it is
/// truncated.
fn collection<'a>(b: &'a [u8], tys: [&'a CqlType; 2], per: usize) -> Option<Vec<Item<'a>>> {
    let mut e = Elements::of(b, tys, per)?;
    // Each value takes 4 bytes at least: the count cannot make this large.
    let mut all = Vec::with_capacity(e.left.min(b.len() / 4));
    all.extend(e.by_ref());
    (!e.truncated).then_some(all)
}

/// Tuple/UDT body: `i32`-length-prefixed fields (a negative length is a
/// null, one past the end is cut short) until the bytes run out. Every
/// declared field (absent ones null) and how many were present.
fn tuple_fields<'a>(
    types: impl Iterator<Item = &'a CqlType>,
    b: &'a [u8],
) -> (Vec<Item<'a>>, usize) {
    let mut c = cur(b);
    let mut present = 0;
    let fields = types
        .map(|ty| {
            let Ok(len) = c.i32("field length") else {
                return Item { ty, b: None };
            };
            present += 1;
            let b = usize::try_from(len)
                .ok()
                .and_then(|len| c.bytes(len.min(c.remaining()), "field").ok());
            Item { ty, b }
        })
        .collect();
    (fields, present)
}

/// `duration`: three zig-zag vints (months, days, nanoseconds), nothing
/// after them.
fn duration(b: &[u8]) -> Option<(i64, i64, i64)> {
    let mut c = cur(b);
    let m = c.vint("duration months").ok()?;
    let d = c.vint("duration days").ok()?;
    let ns = c.vint("duration nanoseconds").ok()?;
    c.is_empty().then_some((m, d, ns))
}

/// A cursor over the bytes of one value (offsets relative to it: the view
/// never reports them, a value that does not decode renders as hex).
fn cur(b: &[u8]) -> Cur<'_> {
    Cur::new(b, Component::Data, 0)
}

/// `vector<t, n>`: fixed-size elements back to back, or vint-length-prefixed.
fn vector<'a>(t: &'a CqlType, n: usize, b: &'a [u8]) -> Option<Vec<Item<'a>>> {
    let mut out = Vec::with_capacity(n.min(4096));
    match t.fixed_len() {
        Some(0) => return None,
        Some(l) => {
            if b.len() != l.checked_mul(n)? {
                return None;
            }
            out.extend(b.chunks_exact(l).map(|v| Item { ty: t, b: Some(v) }));
        }
        None => {
            let mut c = cur(b);
            for _ in 0..n {
                let len = c.uvint("vector element length").ok()?;
                out.push(Item {
                    ty: t,
                    b: Some(c.bytes_len(len, "vector element").ok()?),
                });
            }
        }
    }
    Some(out)
}

/// The components of a `CompositeType` value as they are stored: an
/// optional `0xFFFF` static marker, then `u16 length, bytes,
/// end-of-component byte` per component, up to the first non-zero
/// end-of-component. Each item is a component's bytes and its
/// end-of-component byte (`None` when the value ends before it, the last
/// item); a truncated component ends the iteration.
#[derive(Debug, Clone)]
pub struct CompositeParts<'a> {
    cur: Cur<'a>,
    done: bool,
}

impl<'a> CompositeParts<'a> {
    /// The components of composite value `b`.
    pub fn of(b: &'a [u8]) -> Self {
        CompositeParts {
            cur: cur(b.strip_prefix(&[0xff, 0xff]).unwrap_or(b)),
            done: false,
        }
    }
}

impl<'a> CompositeParts<'a> {
    /// The components of a value that frames exactly as `n` complete
    /// components, nothing after the last (how a partition key splits into
    /// its columns); `None` otherwise.
    pub fn exactly(b: &'a [u8], n: usize) -> Option<Vec<&'a [u8]>> {
        let mut parts = CompositeParts::of(b);
        let all = parts
            .by_ref()
            .map(|(v, eoc)| eoc.map(|_| v))
            .collect::<Option<Vec<_>>>()?;
        (all.len() == n && parts.cur.is_empty()).then_some(all)
    }
}

impl<'a> Iterator for CompositeParts<'a> {
    type Item = (&'a [u8], Option<u8>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let Ok(v) = self.cur.short_bytes("composite component") else {
            self.done = true;
            return None;
        };
        let eoc = self.cur.u8("composite end-of-component").ok();
        self.done = eoc != Some(0);
        Some((v, eoc))
    }
}
