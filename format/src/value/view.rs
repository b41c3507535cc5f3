//! A borrowed view of a serialized value: one level decoded at a time,
//! children left as bytes with their type. What the renderer walks.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::CounterView;
use crate::component::Component;
use crate::cur::Cur;
use crate::types::{CqlType, Native};

/// What the renderer sees of a value: a decoded scalar, or the children of
/// a collection / tuple / UDT / composite.
#[derive(Debug)]
pub enum View<'a, S> {
    /// A null (collection element, tuple/UDT field).
    Null,
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
}

#[inline]
fn raw_node<'a>(ty: &'a CqlType, b: &'a [u8]) -> View<'a, Item<'a>> {
    use CqlType as T;
    let raw = |ty, b| Item { ty, b };
    match ty {
        T::Reversed(t) | T::Frozen(t) => return raw_node(t, b),
        T::Native(Native::Ascii | Native::Text | Native::Blob)
        | T::Custom(_)
        | T::DynamicComposite(_)
        | T::ColumnToCollection(_) => {}
        _ if b.is_empty() => return View::Empty,
        _ => {}
    }
    let node = match ty {
        T::Native(n) => native_node(*n, b),
        T::List(t) => collection(b, &[t]).map(View::List),
        T::Set(t) => collection(b, &[t]).map(View::Set),
        T::Map(k, v) => collection(b, &[k, v]).map(View::Map),
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
                .map(|(i, (v, eoc))| (raw(ts.get(i).unwrap_or(&BLOB), Some(v)), eoc))
                .collect();
            Some(View::Composite(parts))
        }
        T::Reversed(_)
        | T::Frozen(_)
        | T::Custom(_)
        | T::DynamicComposite(_)
        | T::ColumnToCollection(_) => Some(View::Blob(b)),
    };
    // Not `unwrap_or`: that builds (and drops) an `Invalid` for every value.
    let Some(node) = node else {
        return View::Invalid;
    };
    node
}

fn be<const N: usize>(b: &[u8]) -> Option<[u8; N]> {
    b.try_into().ok()
}

/// A native value's node; `None` when the bytes do not decode.
#[inline]
fn native_node<S>(n: Native, b: &[u8]) -> Option<View<'_, S>> {
    use Native::*;
    match n {
        Ascii if b.is_ascii() => std::str::from_utf8(b).ok().map(View::Text),
        Ascii => Some(View::BadText(b)),
        Text => Some(match std::str::from_utf8(b) {
            Ok(s) => View::Text(s),
            Err(_) => View::BadText(b),
        }),
        Blob => Some(View::Blob(b)),
        Empty => Some(View::Empty),
        Bigint => be::<8>(b).map(|x| View::Int(i64::from_be_bytes(x))),
        Int => be::<4>(b).map(|x| View::Int(i32::from_be_bytes(x).into())),
        Smallint => be::<2>(b).map(|x| View::Int(i16::from_be_bytes(x).into())),
        Tinyint => be::<1>(b).map(|x| View::Int(i8::from_be_bytes(x).into())),
        Counter => Some(View::Counter {
            first: b.get(..8).and_then(be::<8>).map(i64::from_be_bytes),
            total: CounterView::of(b).map(CounterView::total),
        }),
        Boolean => be::<1>(b).map(|x| View::Boolean(x[0] != 0)),
        Float => be::<4>(b).map(|x| View::Float(f32::from_be_bytes(x))),
        Double => be::<8>(b).map(|x| View::Double(f64::from_be_bytes(x))),
        Varint => Some(View::Varint(b)),
        Decimal => b.split_first_chunk::<4>().map(|(s, u)| View::Decimal {
            scale: i32::from_be_bytes(*s),
            unscaled: u,
        }),
        Timestamp | LegacyDate => be::<8>(b).map(|x| View::Timestamp(i64::from_be_bytes(x))),
        Date => be::<4>(b).map(|x| View::Date(u32::from_be_bytes(x))),
        Time => be::<8>(b).map(|x| View::Time(i64::from_be_bytes(x))),
        Uuid | Timeuuid | LexicalUuid => b.try_into().ok().map(View::Uuid),
        Inet => match b.len() {
            4 => be::<4>(b).map(|x| View::Inet(IpAddr::V4(Ipv4Addr::from(x)))),
            16 => be::<16>(b).map(|x| View::Inet(IpAddr::V6(Ipv6Addr::from(x)))),
            _ => None,
        },
        Duration => duration(b).map(|(months, days, nanos)| View::Duration {
            months,
            days,
            nanos,
        }),
    }
}

/// Frozen collection body: `i32 count`, then per element one `i32`-length
/// prefixed value per type in `tys` (negative length = null); elements
/// flattened. `None` when truncated.
fn collection<'a>(b: &'a [u8], tys: &[&'a CqlType]) -> Option<Vec<Item<'a>>> {
    let n = b
        .first_chunk::<4>()
        .map_or(0, |n| usize::try_from(i32::from_be_bytes(*n)).unwrap_or(0));
    let mut items = Vec::with_capacity(n.min(b.len() / 4) * tys.len());
    walk_collection(b, tys, |r| items.push(r)).then_some(items)
}

/// Call `f` with each element of a frozen collection body (`collection`)
/// in order; `false` when the body is truncated (`f` has then seen a prefix).
pub fn walk_collection<'a>(b: &'a [u8], tys: &[&'a CqlType], mut f: impl FnMut(Item<'a>)) -> bool {
    let Some((n, mut rest)) = b.split_first_chunk::<4>() else {
        return false;
    };
    let n = usize::try_from(i32::from_be_bytes(*n)).unwrap_or(0);
    for _ in 0..n {
        for &ty in tys {
            let Some((len, r)) = rest.split_first_chunk::<4>() else {
                return false;
            };
            let len = i32::from_be_bytes(*len);
            rest = r;
            let b = match usize::try_from(len) {
                Ok(len) => {
                    let Some(v) = rest.get(..len) else {
                        return false;
                    };
                    rest = &rest[len..];
                    Some(v)
                }
                Err(_) => None,
            };
            f(Item { ty, b });
        }
    }
    true
}
/// Tuple/UDT body: `i32`-length-prefixed fields until the bytes run out.
/// Every declared field (absent ones null) and how many were present.
fn tuple_fields<'a>(
    types: impl Iterator<Item = &'a CqlType>,
    b: &'a [u8],
) -> (Vec<Item<'a>>, usize) {
    let mut rest = b;
    let mut present = 0;
    let fields = types
        .map(|ty| {
            let Some((len, r)) = rest.split_first_chunk::<4>() else {
                return Item { ty, b: None };
            };
            present += 1;
            rest = r;
            let b = usize::try_from(i32::from_be_bytes(*len)).ok().map(|len| {
                let (v, r) = rest.split_at(len.min(rest.len()));
                rest = r;
                v
            });
            Item { ty, b }
        })
        .collect();
    (fields, present)
}

/// Unsigned vint (Cassandra `VIntCoding`): leading one bits of the first byte
/// count the extra bytes.
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

impl<'a> Iterator for CompositeParts<'a> {
    type Item = (&'a [u8], Option<u8>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let part = self
            .cur
            .u16("composite component length")
            .and_then(|len| self.cur.bytes(usize::from(len), "composite component"));
        let Ok(v) = part else {
            self.done = true;
            return None;
        };
        let eoc = self.cur.u8("composite end-of-component").ok();
        self.done = eoc != Some(0);
        Some((v, eoc))
    }
}
