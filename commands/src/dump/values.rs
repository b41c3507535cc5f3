//! Cassandra's three text forms of a serialized value, decoded straight from
//! the bytes and the column's [`CqlType`]:
//!
//! * [`Form::Json`] — `AbstractType.toJSONString` (sstabledump cell values and
//!   clusterings): strings quoted and JSON-escaped, numbers bare, NaN and
//!   ±Infinity as `null`, timestamps `"yyyy-MM-dd HH:mm:ss.SSSZ"`, blobs
//!   `"0x…"`, lists/sets/tuples/vectors as arrays, maps as objects with
//!   stringified keys, UDTs as objects.
//! * [`Form::Str`] — `AbstractType.getString` (sstabledump partition keys and
//!   cell paths; `-d` cell values): strings raw, blobs and non-frozen-UDT/
//!   collection values as bare hex, tuples and UDTs `:`-joined (with `:` and
//!   `@` escaped, `@` for null), timestamps ISO-8601.
//! * [`Form::Cql`] — `toCQLString` / CQL literal (`-d` clusterings, and the
//!   `value` strings of `--output json`): `'quoted'` strings, `0x` blobs,
//!   `[…]`, `{…}`, `(…)`, `{field: …}`.
//!
//! Values that do not decode (wrong length, truncated collection) fall back
//! to hex (`0x…` in JSON/CQL form), never an error: a dump must go on.

use std::fmt::Write as _;

use sstkit_format::types::{CqlType, Native};

use super::jackson::escape_into;
use super::javafmt as jf;

/// Which text form to produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// `toJSONString`.
    Json,
    /// `getString`.
    Str,
    /// `toCQLString`.
    Cql,
}

/// Append the `form` text of value `b` of type `ty` to `out`.
pub fn render(ty: &CqlType, b: &[u8], form: Form, out: &mut String) {
    match ty {
        CqlType::Reversed(t) | CqlType::Frozen(t) => render(t, b, form, out),
        CqlType::Native(n) => native(*n, b, form, out),
        CqlType::List(e) | CqlType::Set(e) => {
            let set = matches!(ty, CqlType::Set(_));
            if form == Form::Str {
                return hex_bare(b, out);
            }
            let Some(items) = collection(b, 1) else {
                return fallback(b, form, out);
            };
            let (open, close) = match (form, set) {
                (Form::Cql, true) => ('{', '}'),
                _ => ('[', ']'),
            };
            out.push(open);
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                element(e, v[0], form, out);
            }
            out.push(close);
        }
        CqlType::Map(k, v) => {
            if form == Form::Str {
                return hex_bare(b, out);
            }
            let Some(items) = collection(b, 2) else {
                return fallback(b, form, out);
            };
            out.push('{');
            for (i, kv) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                if form == Form::Json {
                    // Map keys must be JSON strings: quote non-string keys.
                    let mut key = String::new();
                    element(k, kv[0], form, &mut key);
                    if key.starts_with('"') {
                        out.push_str(&key);
                    } else {
                        out.push('"');
                        push_escaped(out, &key);
                        out.push('"');
                    }
                } else {
                    element(k, kv[0], form, out);
                }
                out.push_str(": ");
                element(v, kv[1], form, out);
            }
            out.push('}');
        }
        CqlType::Tuple(ts) => {
            let fields = tuple_fields(b);
            match form {
                Form::Str => joined(ts.iter(), &fields, out),
                Form::Json | Form::Cql => {
                    out.push(if form == Form::Json { '[' } else { '(' });
                    for (i, t) in ts.iter().enumerate() {
                        if i >= fields.len() {
                            break;
                        }
                        if i > 0 {
                            out.push_str(", ");
                        }
                        element(t, fields[i], form, out);
                    }
                    out.push(if form == Form::Json { ']' } else { ')' });
                }
            }
        }
        CqlType::Udt { fields: defs, .. } => {
            let fields = tuple_fields(b);
            match form {
                Form::Str => joined(defs.iter().map(|(_, t)| t), &fields, out),
                Form::Json | Form::Cql => {
                    out.push('{');
                    for (i, (name, t)) in defs.iter().enumerate() {
                        if i >= fields.len() {
                            break;
                        }
                        if i > 0 {
                            out.push_str(", ");
                        }
                        if form == Form::Json {
                            out.push('"');
                            if name.chars().any(|c| c.is_uppercase()) {
                                push_escaped(out, &format!("\"{name}\""));
                            } else {
                                push_escaped(out, name);
                            }
                            out.push_str("\": ");
                        } else {
                            out.push_str(&sstkit_format::types::quote_ident(name));
                            out.push_str(": ");
                        }
                        element(t, fields[i], form, out);
                    }
                    out.push('}');
                }
            }
        }
        CqlType::Vector(t, n) => {
            if form == Form::Str {
                return hex_bare(b, out);
            }
            let Some(items) = vector(t, *n, b) else {
                return fallback(b, form, out);
            };
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                render(t, v, form, out);
            }
            out.push(']');
        }
        CqlType::Composite(ts) => {
            // `a:b` with the component framing of CompositeType.
            let mut first = true;
            let mut rest = b;
            let mut i = 0;
            while rest.len() >= 2 {
                let len = u16::from_be_bytes([rest[0], rest[1]]) as usize;
                if rest.len() < 2 + len + 1 {
                    break;
                }
                if !first {
                    out.push(':');
                }
                first = false;
                let v = &rest[2..2 + len];
                let mut s = String::new();
                match ts.get(i) {
                    Some(t) => render(t, v, Form::Str, &mut s),
                    None => hex_bare(v, &mut s),
                }
                out.push_str(&s.replace(':', "\\:"));
                rest = &rest[3 + len..];
                i += 1;
            }
        }
        _ => fallback(b, form, out),
    }
}

/// An element nested in a collection/tuple/UDT: `None` is a null.
fn element(ty: &CqlType, v: Option<&[u8]>, form: Form, out: &mut String) {
    match v {
        Some(v) => render(ty, v, form, out),
        None => out.push_str("null"),
    }
}

fn fallback(b: &[u8], form: Form, out: &mut String) {
    match form {
        Form::Json => {
            out.push_str("\"0x");
            hex_bare(b, out);
            out.push('"');
        }
        Form::Cql => {
            out.push_str("0x");
            hex_bare(b, out);
        }
        Form::Str => hex_bare(b, out),
    }
}

fn hex_bare(b: &[u8], out: &mut String) {
    const D: &[u8; 16] = b"0123456789abcdef";
    out.reserve(b.len() * 2);
    for x in b {
        out.push(D[(x >> 4) as usize] as char);
        out.push(D[(x & 15) as usize] as char);
    }
}

fn push_escaped(out: &mut String, s: &str) {
    escape_into(out, s);
}

fn quoted_json(out: &mut String, s: &str) {
    out.push('"');
    push_escaped(out, s);
    out.push('"');
}

fn quoted_cql(out: &mut String, s: &str) {
    out.push('\'');
    out.push_str(&s.replace('\'', "''"));
    out.push('\'');
}

/// Write a string in the form's quoting.
fn text(form: Form, s: &str, out: &mut String) {
    match form {
        Form::Json => quoted_json(out, s),
        Form::Str => out.push_str(s),
        Form::Cql => quoted_cql(out, s),
    }
}

/// Frozen collection body: `i32 count`, then `width` `i32`-length-prefixed
/// values per element (negative length = null).
#[allow(clippy::type_complexity)]
fn collection(b: &[u8], width: usize) -> Option<Vec<Vec<Option<&[u8]>>>> {
    if b.is_empty() {
        return Some(Vec::new());
    }
    let n = i32::from_be_bytes(b.get(..4)?.try_into().ok()?);
    let mut rest = &b[4..];
    let mut items = Vec::with_capacity(n.clamp(0, 1024) as usize);
    for _ in 0..n.max(0) {
        let mut e = Vec::with_capacity(width);
        for _ in 0..width {
            let len = i32::from_be_bytes(rest.get(..4)?.try_into().ok()?);
            rest = &rest[4..];
            if len < 0 {
                e.push(None);
            } else {
                let len = len as usize;
                e.push(Some(rest.get(..len)?));
                rest = &rest[len..];
            }
        }
        items.push(e);
    }
    Some(items)
}

/// Tuple/UDT body: `i32`-length-prefixed fields until the bytes run out.
fn tuple_fields(b: &[u8]) -> Vec<Option<&[u8]>> {
    let mut out = Vec::new();
    let mut rest = b;
    while rest.len() >= 4 {
        let len = i32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]);
        rest = &rest[4..];
        if len < 0 {
            out.push(None);
        } else {
            let len = (len as usize).min(rest.len());
            out.push(Some(&rest[..len]));
            rest = &rest[len..];
        }
    }
    out
}

/// `TupleType.getString`: fields joined by `:`, `:` and `@` escaped, `@` for null.
fn joined<'t>(
    types: impl Iterator<Item = &'t CqlType>,
    fields: &[Option<&[u8]>],
    out: &mut String,
) {
    for (i, t) in types.enumerate() {
        let Some(f) = fields.get(i) else { break };
        if i > 0 {
            out.push(':');
        }
        match f {
            None => out.push('@'),
            Some(v) => {
                let mut s = String::new();
                render(t, v, Form::Str, &mut s);
                out.push_str(&s.replace(':', "\\:").replace('@', "\\@"));
            }
        }
    }
}

/// Unsigned vint (Cassandra `VIntCoding`): leading one bits of the first byte
/// count the extra bytes.
fn uvint(b: &[u8]) -> Option<(u64, usize)> {
    let first = *b.first()?;
    let extra = first.leading_ones() as usize;
    if extra == 0 {
        return Some((first as u64, 1));
    }
    let mut v = if extra >= 8 {
        0
    } else {
        (first & (0xff >> extra)) as u64
    };
    for i in 0..extra {
        v = (v << 8) | *b.get(1 + i)? as u64;
    }
    Some((v, 1 + extra))
}

fn svint(b: &[u8]) -> Option<(i64, usize)> {
    let (v, n) = uvint(b)?;
    Some((((v >> 1) as i64) ^ -((v & 1) as i64), n))
}

fn vector<'a>(t: &CqlType, n: usize, b: &'a [u8]) -> Option<Vec<&'a [u8]>> {
    let mut out = Vec::with_capacity(n.min(4096));
    let mut rest = b;
    match t.fixed_len() {
        Some(l) => {
            if b.len() != l.checked_mul(n)? {
                return None;
            }
            for i in 0..n {
                out.push(&b[i * l..(i + 1) * l]);
            }
        }
        None => {
            for _ in 0..n {
                let (len, k) = uvint(rest)?;
                rest = &rest[k..];
                let len = usize::try_from(len).ok()?;
                out.push(rest.get(..len)?);
                rest = &rest[len..];
            }
        }
    }
    Some(out)
}

fn be<const N: usize>(b: &[u8]) -> Option<[u8; N]> {
    b.try_into().ok()
}

fn native(n: Native, b: &[u8], form: Form, out: &mut String) {
    use Native::*;
    if b.is_empty() && !matches!(n, Ascii | Text | Blob | Empty | Varint) {
        // Empty value of a fixed-size type (allowed in keys / legacy data).
        match form {
            Form::Json => out.push_str("\"\""),
            Form::Str => {}
            Form::Cql => out.push_str("''"),
        }
        return;
    }
    let ok = match n {
        Ascii | Text => {
            text(form, &String::from_utf8_lossy(b), out);
            true
        }
        Bigint => be::<8>(b)
            .map(|x| write!(out, "{}", i64::from_be_bytes(x)))
            .is_some(),
        Counter => {
            // toJSONString/getString read the first 8 bytes of the counter
            // context as a long (what Cassandra 5.0 prints).
            b.get(..8)
                .and_then(be::<8>)
                .map(|x| write!(out, "{}", i64::from_be_bytes(x)))
                .is_some()
        }
        Int => be::<4>(b)
            .map(|x| write!(out, "{}", i32::from_be_bytes(x)))
            .is_some(),
        Smallint => be::<2>(b)
            .map(|x| write!(out, "{}", i16::from_be_bytes(x)))
            .is_some(),
        Tinyint => be::<1>(b).map(|x| write!(out, "{}", x[0] as i8)).is_some(),
        Boolean => be::<1>(b)
            .map(|x| out.push_str(if x[0] != 0 { "true" } else { "false" }))
            .is_some(),
        Float => be::<4>(b)
            .map(|x| {
                let f = f32::from_be_bytes(x);
                if form == Form::Json && !f.is_finite() {
                    out.push_str("null")
                } else {
                    out.push_str(&jf::float(f))
                }
            })
            .is_some(),
        Double => be::<8>(b)
            .map(|x| {
                let f = f64::from_be_bytes(x);
                if form == Form::Json && !f.is_finite() {
                    out.push_str("null")
                } else {
                    out.push_str(&jf::double(f))
                }
            })
            .is_some(),
        Varint => {
            out.push_str(&jf::bigint(b));
            true
        }
        Decimal => {
            if b.len() < 4 {
                false
            } else {
                let scale = i32::from_be_bytes([b[0], b[1], b[2], b[3]]);
                out.push_str(&jf::bigdecimal(scale, &b[4..]));
                true
            }
        }
        Blob => {
            match form {
                Form::Json => {
                    out.push_str("\"0x");
                    hex_bare(b, out);
                    out.push('"');
                }
                Form::Str => hex_bare(b, out),
                Form::Cql => {
                    out.push_str("0x");
                    hex_bare(b, out);
                }
            }
            true
        }
        Empty => {
            text(form, "", out);
            true
        }
        Timestamp | LegacyDate => be::<8>(b)
            .map(|x| {
                let ms = i64::from_be_bytes(x);
                match form {
                    Form::Json => quoted_json(out, &jf::timestamp_millis(ms, ' ')),
                    Form::Str => out.push_str(&jf::timestamp_millis(ms, 'T')),
                    Form::Cql => quoted_cql(out, &jf::timestamp_millis(ms, 'T')),
                }
            })
            .is_some(),
        Date => be::<4>(b)
            .map(|x| {
                let days = u32::from_be_bytes(x) as i64 - (1i64 << 31);
                text(form, &jf::local_date(days), out)
            })
            .is_some(),
        Time => be::<8>(b)
            .map(|x| text(form, &jf::time_of_day(i64::from_be_bytes(x)), out))
            .is_some(),
        Uuid | Timeuuid | LexicalUuid => match jf::uuid(b) {
            Some(s) => {
                if form == Form::Json {
                    quoted_json(out, &s)
                } else {
                    out.push_str(&s)
                }
                true
            }
            None => false,
        },
        Inet => match jf::inet(b) {
            Some(s) => {
                text(form, &s, out);
                true
            }
            None => false,
        },
        Duration => match duration(b) {
            Some((m, d, ns)) => {
                let s = jf::duration(m, d, ns);
                if form == Form::Cql {
                    out.push_str(&s)
                } else {
                    text(form, &s, out)
                }
                true
            }
            None => false,
        },
    };
    if !ok {
        fallback(b, form, out);
    }
}

fn duration(b: &[u8]) -> Option<(i64, i64, i64)> {
    let (m, k1) = svint(b)?;
    let (d, k2) = svint(&b[k1..])?;
    let (ns, k3) = svint(&b[k1 + k2..])?;
    (k1 + k2 + k3 == b.len()).then_some((m, d, ns))
}

/// Convenience: the rendering as a new `String`.
pub fn to_string(ty: &CqlType, b: &[u8], form: Form) -> String {
    let mut s = String::new();
    render(ty, b, form, &mut s);
    s
}

/// Sum of the shard counts of a counter context (`CounterContext.total`):
/// `i16 header count`, `header count × i16`, then shards of
/// `16-byte counter id, i64 clock, i64 count`.
pub fn counter_total(b: &[u8]) -> Option<i64> {
    let h = i16::from_be_bytes(be::<2>(b.get(..2)?)?);
    let start = 2 + 2 * (h.unsigned_abs() as usize);
    let shards = b.get(start..)?;
    if shards.len() % 32 != 0 {
        return None;
    }
    let mut total: i64 = 0;
    for s in shards.chunks_exact(32) {
        total = total.wrapping_add(i64::from_be_bytes(be::<8>(&s[24..32])?));
    }
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> CqlType {
        CqlType::parse(s).unwrap()
    }

    #[test]
    fn json_forms() {
        let list = [
            0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 4, 0xff, 0xff, 0xff, 0xff,
        ];
        assert_eq!(
            to_string(&t("ListType(Int32Type)"), &list, Form::Json),
            "[1, -1]"
        );
        assert_eq!(
            to_string(&t("SetType(Int32Type)"), &list, Form::Cql),
            "{1, -1}"
        );
        assert_eq!(
            to_string(&t("ListType(Int32Type)"), &list, Form::Str),
            crate::output::hex(&list)
        );
        let map = [0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 6, 0, 0, 0, 1, b'x'];
        assert_eq!(
            to_string(&t("MapType(Int32Type,UTF8Type)"), &map, Form::Json),
            "{\"6\": \"x\"}"
        );
        let tup = [0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 2, b'a', b':'];
        assert_eq!(
            to_string(&t("TupleType(Int32Type,UTF8Type)"), &tup, Form::Str),
            "1:a\\:"
        );
        assert_eq!(
            to_string(&t("TupleType(Int32Type,UTF8Type)"), &tup, Form::Json),
            "[1, \"a:\"]"
        );
        assert_eq!(to_string(&t("UTF8Type"), b"a\"b", Form::Json), "\"a\\\"b\"");
        assert_eq!(
            to_string(&t("BytesType"), &[1, 0xab], Form::Json),
            "\"0x01ab\""
        );
        assert_eq!(
            to_string(&t("DoubleType"), &f64::NAN.to_be_bytes(), Form::Json),
            "null"
        );
    }
}
