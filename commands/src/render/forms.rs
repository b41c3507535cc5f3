//! The form renderer: Cassandra's text forms of values, reimplemented from
//! the JDK and Cassandra 5.0 sources. The one implementation behind
//! `sstkit dump-data` (straight from the serialized bytes, [`render`]) and
//! the text of a decoded [`Value`] ([`value_text`]): both walk the value
//! through the same `Source` / `write` code, over format's borrowed
//! [`View`].
//!
//! Four forms ([`Form`]):
//!
//! * [`Form::Json`] — `AbstractType.toJSONString` (sstabledump cell values and
//!   clusterings): strings quoted and JSON-escaped, numbers bare, NaN and
//!   ±Infinity as `null`, timestamps `"yyyy-MM-dd HH:mm:ss.SSSZ"`, blobs
//!   `"0x…"`, lists/sets/tuples/vectors as arrays, maps as objects with
//!   stringified keys, UDTs as objects (every declared field; absent ones
//!   `null`, as `UserType.toJSONString`).
//! * [`Form::Str`] — `AbstractType.getString` (sstabledump partition keys and
//!   cell paths, sstablemetadata keys): strings raw, blobs and
//!   collections/vectors as bare hex of their serialization
//!   (`CollectionType`/`VectorType.getString`), tuples and UDTs `:`-joined
//!   (`:` and `@` escaped, `@` for null), composites `a:b` with
//!   `AbstractCompositeType.escape` and `:_`/`:!` end-of-component marks,
//!   timestamps ISO-8601.
//! * [`Form::Cql`] — `toCQLString` (`sstabledump -d` clusterings, the `value`
//!   strings of `--output json`): `'quoted'` strings, `0x` blobs, `[…]`,
//!   `{…}`, `(…)`, `{field: …}` (present fields only).
//! * [`Form::Cqlsh`] — the literal cqlsh prints and
//!   [`parse_cql_literal`](sstkit_format::value::parse_cql_literal) reads back:
//!   `'2023-11-14 22:13:20.000000+0000'` timestamps, compressed IPv6, `0s`
//!   for a zero duration, counters as their total, invalid text as `0x…`.
//!
//! A zero-length value of a non-string type is "empty" (`""`, nothing, `''`).
//! Values that do not decode (wrong length, truncated collection) fall back
//! to hex (`0x…` in JSON/CQL form), never an error: a dump must go on.
//!

use std::fmt::Write as _;

use sstkit_format::types::{quote_ident, CqlType, Native};
use sstkit_format::value::view::{Item, Scalar, View};
use sstkit_format::value::Value;

use super::append::push_i64;
use super::escape::{json_escape_into, json_escape_text_into};
use super::ids::{hex_into, inet_into, uuid_into};
use super::numbers::{decimal_into, double_into, float_into, varint_into};
use super::time::{date_into, duration_into, time_into, timestamp_cqlsh_into, timestamp_into};

// ------------------------------------------------------------- renderer

/// Which text form to produce (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// `AbstractType.toJSONString`.
    Json,
    /// `AbstractType.getString`.
    Str,
    /// `AbstractType.toCQLString`.
    Cql,
    /// The CQL literal cqlsh prints (and `parse_cql_literal` reads).
    Cqlsh,
}

/// A value the renderer can walk: serialized bytes with their type
/// ([`render`]) or a decoded [`Value`].
pub(crate) trait Source<'a>: Copy {
    /// The value's node.
    fn node(self) -> View<'a, Self>;
    /// True for a null.
    fn is_null(self) -> bool;
    /// The serialized value as bare hex (collections' `getString`, and the
    /// fallback for values that do not decode).
    fn hex_into(self, out: &mut String);
    /// Write the value when a shortcut applies (for bytes: natives from
    /// their scalar view, lists, sets and maps walked in place); `false` to
    /// take the general path.
    #[inline]
    fn write_fast(self, _form: Form, _out: &mut String) -> bool {
        false
    }
}

/// Append the `form` text of value `b` of type `ty` to `out`, straight from
/// the bytes (no [`Value`] tree).
#[inline]
pub fn render(ty: &CqlType, b: &[u8], form: Form, out: &mut String) {
    match ty.bare() {
        CqlType::Native(n @ (Native::Text | Native::Ascii)) if form == Form::Json => {
            // Validate and escape in one pass (what `write` does in two).
            out.push('"');
            json_escape_text_into(out, b, *n == Native::Ascii);
            out.push('"');
        }
        CqlType::Native(n) => write_native(Item::new(ty, b), *n, b, form, out),
        _ => write(Item::new(ty, b), form, out),
    }
}

/// Append the `form` text of value `b` of type `ty` to `out` JSON-escaped
/// (the inside of a JSON string, [`json_escape_into`]): what `render` into
/// a temporary and an escape would give, without the temporary in the
/// common cases. Text is escaped straight from its bytes; other native types
/// never produce a character to escape outside [`Form::Json`] and are
/// rendered in place; the rest goes through `scratch` (a reusable buffer).
pub fn render_json(ty: &CqlType, b: &[u8], form: Form, out: &mut String, scratch: &mut String) {
    let t = ty.bare();
    if form != Form::Json {
        match t {
            CqlType::Native(n @ (Native::Text | Native::Ascii)) if form == Form::Str => {
                return json_escape_text_into(out, b, *n == Native::Ascii);
            }
            CqlType::Native(n) if !matches!(n, Native::Text | Native::Ascii) => {
                return write_native(Item::new(t, b), *n, b, form, out);
            }
            _ => {}
        }
    }
    scratch.clear();
    render(t, b, form, scratch);
    json_escape_into(out, scratch);
}

/// How [`render_json`] treats values of one type in one form,
/// decided once (per column) instead of per value: [`JsonStr::render`]
/// then skips the type walk, and types whose text never needs JSON
/// escaping are rendered straight into the output instead of through a
/// scratch string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonStr {
    /// `ascii` / `text` in `Str` form: escaped straight from the bytes.
    Text {
        /// `ascii` (non-ASCII bytes are rendered lossily).
        ascii: bool,
    },
    /// Text that never holds a character JSON escapes: numbers, booleans,
    /// uuids, dates and times, addresses, durations, hex blobs, and
    /// collections / tuples / vectors of those in `Cql` form.
    Plain,
    /// Anything else: rendered, then escaped.
    Escaped,
}

impl JsonStr {
    /// The treatment of values of `ty` rendered in `form` (not `Json`, whose
    /// strings carry their own quotes).
    pub fn of(ty: &CqlType, form: Form) -> JsonStr {
        let t = ty.bare();
        match t {
            CqlType::Native(n @ (Native::Text | Native::Ascii)) if form == Form::Str => {
                JsonStr::Text {
                    ascii: *n == Native::Ascii,
                }
            }
            _ if matches!(form, Form::Str | Form::Cql) && plain_text(t, form) => JsonStr::Plain,
            _ => JsonStr::Escaped,
        }
    }

    /// [`render_json`] of a value of the type this was made for.
    #[inline]
    pub fn render(
        self,
        ty: &CqlType,
        b: &[u8],
        form: Form,
        out: &mut String,
        scratch: &mut String,
    ) {
        match self {
            JsonStr::Text { ascii } => json_escape_text_into(out, b, ascii),
            JsonStr::Plain => match ty.bare() {
                CqlType::Native(n) => write_native(Item::new(ty, b), *n, b, form, out),
                t => write(Item::new(t, b), form, out),
            },
            JsonStr::Escaped => render_json(ty, b, form, out, scratch),
        }
    }
}

/// True when every text [`render`] gives values of `t` in `form` (`Str`
/// or `Cql`) is free of the characters JSON escapes (`"`, `\\`, control
/// characters), whatever the bytes: valid values, empty ones, invalid ones
/// (hex) and null elements alike.
fn plain_text(t: &CqlType, form: Form) -> bool {
    use Native::*;
    match t.bare() {
        CqlType::Native(n) => matches!(
            n,
            Bigint
                | Blob
                | Boolean
                | Counter
                | Date
                | Decimal
                | Double
                | Duration
                | Float
                | Inet
                | Int
                | Smallint
                | Time
                | Timestamp
                | LegacyDate
                | Timeuuid
                | Tinyint
                | Uuid
                | LexicalUuid
                | Varint
                | Empty
        ),
        // Collections, tuples and vectors are bracketed lists of their
        // elements' forms (`Cql` only: the `Str` form of a collection is
        // its JSON, whose strings are quoted with `"`).
        CqlType::List(e) | CqlType::Set(e) | CqlType::Vector(e, _) => {
            form == Form::Cql && plain_text(e, form)
        }
        CqlType::Map(k, v) => form == Form::Cql && plain_text(k, form) && plain_text(v, form),
        CqlType::Tuple(ts) => form == Form::Cql && ts.iter().all(|t| plain_text(t, form)),
        _ => false,
    }
}

/// Serialized bytes: format's borrowed view.
impl<'a> Source<'a> for Item<'a> {
    #[inline]
    fn node(self) -> View<'a, Self> {
        self.view()
    }

    fn is_null(self) -> bool {
        self.b.is_none()
    }

    fn hex_into(self, out: &mut String) {
        hex_into(out, self.b.unwrap_or_default())
    }

    #[inline]
    fn write_fast(self, form: Form, out: &mut String) -> bool {
        let Some(b) = self.b else { return false };
        let (brackets, map) = match self.ty.bare() {
            CqlType::Native(n) => {
                write_native(self, *n, b, form, out);
                return true;
            }
            // `getString` of a collection is its hex: the general path.
            _ if form == Form::Str => return false,
            CqlType::List(_) => (('[', ']'), false),
            CqlType::Set(_) if form == Form::Json => (('[', ']'), false),
            CqlType::Set(_) => (('{', '}'), false),
            CqlType::Map(..) => (('{', '}'), true),
            _ => return false,
        };
        // Empty values (and ones too short for a count): the general path.
        let Some(mut elements) = self.elements() else {
            return false;
        };
        let start = out.len();
        match self.ty.bare() {
            _ if map => map_into(form, &mut elements, out),
            CqlType::List(e) | CqlType::Set(e) => match e.bare() {
                // Elements of a native type (the common case): their scalar
                // views written here, without the per-element dispatch.
                CqlType::Native(n) => seq_by(brackets, &mut elements, out, |v, o| match v.b {
                    Some(b) => write_scalar(v, Scalar::of(*n, b), form, o),
                    None => o.push_str("null"),
                }),
                _ => seq(form, brackets, &mut elements, out),
            },
            _ => seq(form, brackets, &mut elements, out),
        }
        if elements.truncated() {
            // The general path writes it as hex.
            out.truncate(start);
            return false;
        }
        true
    }
}

/// A decoded value: the same walk over its view.
impl<'a> Source<'a> for &'a Value {
    fn node(self) -> View<'a, Self> {
        self.view()
    }

    fn is_null(self) -> bool {
        Value::is_null(self)
    }

    fn hex_into(self, out: &mut String) {
        match self {
            Value::Blob(b) | Value::BadText(b) => hex_into(out, b),
            v => hex_into(out, &v.to_bytes()),
        }
    }
}

/// The `form` text of a decoded value: the same text as [`render`] of its
/// serialization.
pub fn value_text(v: &Value, form: Form) -> String {
    let mut s = String::new();
    write(v, form, &mut s);
    s
}

/// Append the `form` text of `s` to `out`.
pub(crate) fn write<'a, S: Source<'a>>(s: S, form: Form, out: &mut String) {
    if s.write_fast(form, out) {
        return;
    }
    match s.node() {
        View::Null => out.push_str("null"),
        View::Scalar(v) => write_scalar(s, v, form, out),
        node => write_nested(s, node, form, out),
    }
}

/// Append the `form` text of native value `b` (of type `n`, `s` its item):
/// its scalar view, written. Both halves are inlined here, so that the
/// view's match on the type and the writer's on the scalar fold into one
/// (natives are most of a dump's values).
#[inline(never)]
fn write_native<'a>(s: Item<'a>, n: Native, b: &'a [u8], form: Form, out: &mut String) {
    write_scalar(s, Scalar::of(n, b), form, out)
}

/// Append the `form` text of scalar `v`, the view of `s`.
#[inline(always)]
fn write_scalar<'a, S: Source<'a>>(s: S, v: Scalar<'a>, form: Form, out: &mut String) {
    use Form::{Cql, Cqlsh, Json, Str};
    match v {
        Scalar::Empty => out.push_str(match form {
            Json => "\"\"",
            Str => "",
            Cql | Cqlsh => "''",
        }),
        Scalar::Invalid => hex_form(form, out, |o| s.hex_into(o)),
        Scalar::Blob(b) => hex_form(form, out, |o| hex_into(o, b)),
        Scalar::Text(t) => text_into(form, t, out),
        Scalar::BadText(b) if form == Cqlsh => hex_form(form, out, |o| hex_into(o, b)),
        Scalar::BadText(b) => text_into(form, &String::from_utf8_lossy(b), out),
        Scalar::Int(v) => push_i64(out, v),
        Scalar::Varint(b) => varint_into(out, b),
        Scalar::Decimal { scale, unscaled } => decimal_into(out, scale, unscaled),
        Scalar::Float(x) if form == Json && !x.is_finite() => out.push_str("null"),
        Scalar::Float(x) => float_into(out, x),
        Scalar::Double(x) if form == Json && !x.is_finite() => out.push_str("null"),
        Scalar::Double(x) => double_into(out, x),
        Scalar::Boolean(b) => out.push_str(if b { "true" } else { "false" }),
        Scalar::Uuid(u) => wrap(form == Json, '"', out, |o| uuid_into(o, u)),
        Scalar::Timestamp(ms) => match form {
            Json => wrap(true, '"', out, |o| timestamp_into(o, ms, ' ')),
            Str => timestamp_into(out, ms, 'T'),
            Cql => wrap(true, '\'', out, |o| timestamp_into(o, ms, 'T')),
            Cqlsh => wrap(true, '\'', out, |o| timestamp_cqlsh_into(o, ms)),
        },
        Scalar::Date(d) => wrap_opt(text_quote(form), out, |o| date_into(o, d)),
        Scalar::Time(t) => wrap_opt(text_quote(form), out, |o| time_into(o, t)),
        Scalar::Duration {
            months,
            days,
            nanos,
        } => wrap(form == Json, '"', out, |o| {
            let start = o.len();
            duration_into(o, months, days, nanos);
            if form == Cqlsh && o.len() == start {
                o.push_str("0s");
            }
        }),
        Scalar::Inet(ip) if form == Cqlsh => wrap(true, '\'', out, |o| {
            let _ = write!(o, "{ip}");
        }),
        Scalar::Inet(ip) => wrap_opt(text_quote(form), out, |o| inet_into(o, &ip)),
        Scalar::Counter { first, total } => match if form == Cqlsh { total } else { first } {
            Some(v) => push_i64(out, v),
            None => hex_form(form, out, |o| s.hex_into(o)),
        },
    }
}

/// The container half of [`write`] (kept out of line so the scalar path
/// stays small).
#[inline(never)]
fn write_nested<'a, S: Source<'a>>(s: S, node: View<'a, S>, form: Form, out: &mut String) {
    use Form::{Cql, Cqlsh, Json, Str};
    match node {
        View::List(_) | View::Set(_) | View::Map(_) | View::Vector(_) if form == Str => {
            s.hex_into(out)
        }
        View::List(items) | View::Vector(items) => seq(form, ('[', ']'), items, out),
        View::Set(items) if form == Json => seq(form, ('[', ']'), items, out),
        View::Set(items) => seq(form, ('{', '}'), items, out),
        View::Map(items) => map_into(form, items, out),
        View::Tuple { fields, present } => {
            let present = present.min(fields.len());
            match form {
                Str => joined(fields[..present].iter().copied(), out),
                Json => seq(form, ('[', ']'), fields, out),
                Cql => seq(form, ('(', ')'), fields.into_iter().take(present), out),
                Cqlsh => seq(form, ('(', ')'), fields, out),
            }
        }
        View::Udt { fields, present } => {
            let present = present.min(fields.len());
            if form == Str {
                return joined(fields[..present].iter().map(|f| f.1), out);
            }
            let shown = if form == Cql {
                &fields[..present]
            } else {
                &fields[..]
            };
            out.push('{');
            for (i, (name, v)) in shown.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                if form == Json {
                    // `UserType.toJSONString`: a name that is not lower case
                    // gets double quotes, JSON-escaped inside the key.
                    let lower = if name.is_ascii() {
                        !name.bytes().any(|c| c.is_ascii_uppercase())
                    } else {
                        name.to_lowercase() == *name
                    };
                    wrap(true, '"', out, |o| {
                        let q = if lower { "" } else { "\\\"" };
                        o.push_str(q);
                        json_escape_into(o, name);
                        o.push_str(q);
                    });
                } else {
                    out.push_str(&quote_ident(name));
                }
                out.push_str(": ");
                write(*v, form, out);
            }
            out.push('}');
        }
        View::Composite(parts) => {
            if form == Json {
                let mut s = String::new();
                composite_into(&parts, &mut s);
                wrap(true, '"', out, |o| json_escape_into(o, &s));
            } else {
                composite_into(&parts, out);
            }
        }
        // Scalars are written by `write` and never get here.
        _ => {}
    }
}

/// `f`'s text between two `q`s when `quoted`.
#[inline(always)]
fn wrap(quoted: bool, q: char, out: &mut String, f: impl FnOnce(&mut String)) {
    if quoted {
        out.push(q);
    }
    f(out);
    if quoted {
        out.push(q);
    }
}

fn wrap_opt(q: Option<char>, out: &mut String, f: impl FnOnce(&mut String)) {
    wrap(q.is_some(), q.unwrap_or('"'), out, f)
}

/// The quote around text-like scalars (dates, times, addresses).
fn text_quote(form: Form) -> Option<char> {
    match form {
        Form::Json => Some('"'),
        Form::Str => None,
        Form::Cql | Form::Cqlsh => Some('\''),
    }
}

/// A string in the form's quoting.
fn text_into(form: Form, s: &str, out: &mut String) {
    match form {
        Form::Json => wrap(true, '"', out, |o| json_escape_into(o, s)),
        Form::Str => out.push_str(s),
        Form::Cql | Form::Cqlsh => wrap(true, '\'', out, |o| {
            for (i, part) in s.split('\'').enumerate() {
                if i > 0 {
                    o.push_str("''");
                }
                o.push_str(part);
            }
        }),
    }
}

/// Hex in the form's blob notation: `"0x…"`, `…`, `0x…`.
#[inline(always)]
fn hex_form(form: Form, out: &mut String, hex: impl FnOnce(&mut String)) {
    match form {
        Form::Json => wrap(true, '"', out, |o| {
            o.push_str("0x");
            hex(o)
        }),
        Form::Str => hex(out),
        Form::Cql | Form::Cqlsh => {
            out.push_str("0x");
            hex(out)
        }
    }
}

/// Items joined by `, ` between `open` and `close`.
fn seq<'a, S: Source<'a>>(
    form: Form,
    brackets: (char, char),
    items: impl IntoIterator<Item = S>,
    out: &mut String,
) {
    seq_by(brackets, items, out, |v, o| write(v, form, o))
}

/// Items written by `f`, joined by `, ` between `open` and `close`.
#[inline(always)]
fn seq_by<S>(
    (open, close): (char, char),
    items: impl IntoIterator<Item = S>,
    out: &mut String,
    mut f: impl FnMut(S, &mut String),
) {
    out.push(open);
    for (i, v) in items.into_iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        f(v, out);
    }
    out.push(close);
}

/// A map from its keys and values alternating: `{k: v, …}`, keys quoted in
/// JSON form.
fn map_into<'a, S: Source<'a>>(form: Form, items: impl IntoIterator<Item = S>, out: &mut String) {
    out.push('{');
    let mut items = items.into_iter();
    let mut first = true;
    while let (Some(k), Some(v)) = (items.next(), items.next()) {
        if !first {
            out.push_str(", ");
        }
        first = false;
        let start = out.len();
        write(k, form, out);
        if form == Form::Json && !out[start..].starts_with('"') {
            // JSON object keys are strings: quote non-string keys.
            let key = out.split_off(start);
            wrap(true, '"', out, |o| json_escape_into(o, &key));
        }
        out.push_str(": ");
        write(v, form, out);
    }
    out.push('}');
}

/// `TupleType.getString`: fields joined by `:`, `:` and `@` escaped, `@` for
/// null.
fn joined<'a, S: Source<'a>>(fields: impl Iterator<Item = S>, out: &mut String) {
    let mut s = String::new();
    for (i, f) in fields.enumerate() {
        if i > 0 {
            out.push(':');
        }
        if f.is_null() {
            out.push('@');
            continue;
        }
        s.clear();
        write(f, Form::Str, &mut s);
        for c in s.chars() {
            if c == ':' || c == '@' {
                out.push('\\');
            }
            out.push(c);
        }
    }
}

/// `AbstractCompositeType.getString`: components joined by `:`, each escaped
/// (`:` → `\:`, a trailing `\` or `!` gets a `!`), ended by `:_` / `:!` at a
/// negative / positive end-of-component byte.
fn composite_into<'a, S: Source<'a>>(parts: &[(S, u8)], out: &mut String) {
    let mut s = String::new();
    for (i, &(c, eoc)) in parts.iter().enumerate() {
        if i > 0 {
            out.push(':');
        }
        s.clear();
        write(c, Form::Str, &mut s);
        for ch in s.chars() {
            if ch == ':' {
                out.push('\\');
            }
            out.push(ch);
        }
        if s.ends_with('\\') || s.ends_with('!') {
            out.push('!');
        }
        if eoc != 0 {
            out.push_str(if (eoc as i8) < 0 { ":_" } else { ":!" });
            break;
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::super::append::string;
    use super::super::ids::{format_inet_java, hex};
    use super::super::time::format_duration;
    use super::*;
    use sstkit_format::value::CounterView;
    use std::net::IpAddr;

    fn t(s: &str) -> CqlType {
        CqlType::parse(s).unwrap()
    }

    fn r(ty: &str, b: &[u8], form: Form) -> String {
        string(|s| render(&t(ty), b, form, s))
    }

    #[test]
    fn durations_addresses_ids() {
        assert_eq!(
            format_duration(11, 56, 93_914_556_989_508),
            "11mo56d26h5m14s556ms989us508ns"
        );
        assert_eq!(format_duration(39, 4, 0), "3y3mo4d");
        assert_eq!(format_duration(0, 0, 0), "");
        assert_eq!(format_duration(-1, -2, -3), "-1mo2d3ns");
        let ip: IpAddr = "fe80::32a4".parse().unwrap();
        assert_eq!(format_inet_java(&ip), "fe80:0:0:0:0:0:0:32a4");
        let ip: IpAddr = "::ffff:1.2.3.4".parse().unwrap();
        assert_eq!(format_inet_java(&ip), "1.2.3.4");
        let ip: IpAddr = "10.0.0.1".parse().unwrap();
        assert_eq!(format_inet_java(&ip), "10.0.0.1");
        let u = [
            0x92, 0x07, 0x30, 0xfc, 0xd5, 0x83, 0x49, 0x33, 0x83, 0xb2, 0x33, 0x70, 0x16, 0x0b,
            0x1b, 0xf2,
        ];
        assert_eq!(
            string(|s| uuid_into(s, &u)),
            "920730fc-d583-4933-83b2-3370160b1bf2"
        );
        assert_eq!(hex(&[0, 0xab, 0x10]), "00ab10");
        assert_eq!(
            string(|s| json_escape_into(s, "a\"\\\u{8}\t\n\u{c}\r\u{1}é")),
            "a\\\"\\\\\\b\\t\\n\\f\\r\\u0001é"
        );
        let mut c = vec![0, 1, 0, 0];
        c.extend_from_slice(&[0x11; 16]);
        c.extend_from_slice(&5i64.to_be_bytes());
        c.extend_from_slice(&3i64.to_be_bytes());
        assert_eq!(CounterView::of(&c).map(CounterView::total), Some(3));
        assert!(CounterView::of(&c[..30]).is_none());
    }

    #[test]
    fn rendered_forms() {
        use Form::*;
        let list = [
            0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 4, 0xff, 0xff, 0xff, 0xff,
        ];
        assert_eq!(r("ListType(Int32Type)", &list, Json), "[1, -1]");
        assert_eq!(r("SetType(Int32Type)", &list, Json), "[1, -1]");
        assert_eq!(r("SetType(Int32Type)", &list, Cql), "{1, -1}");
        assert_eq!(r("ListType(Int32Type)", &list, Str), hex(&list));
        // Truncated: hex fallback.
        assert_eq!(
            r("ListType(Int32Type)", &list[..9], Json),
            "\"0x000000020000000400\""
        );
        // Cut after a whole element, or inside a map entry: what was written
        // of the walk is taken back, and the hex written instead.
        for form in [Json, Cql, Cqlsh] {
            let cut = &list[..14];
            let want = string(|s| hex_form(form, s, |o| hex_into(o, cut)));
            assert_eq!(r("ListType(Int32Type)", cut, form), want);
            assert_eq!(r("SetType(Int32Type)", cut, form), want);
        }
        let map_cut = [
            0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 6, 0, 0, 0, 1, b'x', 0, 0, 0, 4, 0, 0,
        ];
        assert_eq!(
            r("MapType(Int32Type,UTF8Type)", &map_cut, Json),
            "\"0x0000000200000004000000060000000178000000040000\""
        );
        let map = [0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 6, 0, 0, 0, 1, b'x'];
        assert_eq!(
            r("MapType(Int32Type,UTF8Type)", &map, Json),
            "{\"6\": \"x\"}"
        );
        assert_eq!(r("MapType(Int32Type,UTF8Type)", &map, Cql), "{6: 'x'}");
        let tup = [0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 2, b'a', b':'];
        let tt = "TupleType(Int32Type,UTF8Type)";
        assert_eq!(r(tt, &tup, Str), "1:a\\:");
        assert_eq!(r(tt, &tup, Json), "[1, \"a:\"]");
        assert_eq!(r(tt, &tup, Cql), "(1, 'a:')");
        assert_eq!(r("UTF8Type", b"a\"b", Json), "\"a\\\"b\"");
        assert_eq!(r("UTF8Type", b"it's", Cql), "'it''s'");
        assert_eq!(r("UTF8Type", &[0xff], Json), "\"\u{fffd}\"");
        assert_eq!(r("UTF8Type", &[0xff], Cqlsh), "0xff");
        assert_eq!(r("BytesType", &[1, 0xab], Json), "\"0x01ab\"");
        assert_eq!(r("BytesType", &[1, 0xab], Str), "01ab");
        assert_eq!(r("DoubleType", &f64::NAN.to_be_bytes(), Json), "null");
        assert_eq!(r("DoubleType", &f64::NAN.to_be_bytes(), Str), "NaN");
        assert_eq!(r("Int32Type", &[1, 2, 3], Json), "\"0x010203\"");
        let ts = 1_700_000_000_000i64.to_be_bytes();
        assert_eq!(
            r("TimestampType", &ts, Json),
            "\"2023-11-14 22:13:20.000Z\""
        );
        assert_eq!(r("TimestampType", &ts, Str), "2023-11-14T22:13:20.000Z");
        assert_eq!(r("TimestampType", &ts, Cql), "'2023-11-14T22:13:20.000Z'");
        assert_eq!(
            r("TimestampType", &ts, Cqlsh),
            "'2023-11-14 22:13:20.000000+0000'"
        );
        assert_eq!(r("DurationType", &[0, 0, 0], Cql), "");
        assert_eq!(r("DurationType", &[0, 0, 0], Cqlsh), "0s");
        assert_eq!(r("DurationType", &[2, 4, 6], Json), "\"1mo2d3ns\"");
        let mut v6 = [0u8; 16];
        v6[0] = 0xfe;
        v6[1] = 0x80;
        v6[15] = 1;
        assert_eq!(r("InetAddressType", &v6, Json), "\"fe80:0:0:0:0:0:0:1\"");
        assert_eq!(r("InetAddressType", &v6, Cqlsh), "'fe80::1'");
        // vector<float, 2>: getString is the hex (VectorType.getString).
        let mut vb = 1.5f32.to_be_bytes().to_vec();
        vb.extend_from_slice(&(-2.0f32).to_be_bytes());
        assert_eq!(r("VectorType(FloatType,2)", &vb, Json), "[1.5, -2.0]");
        assert_eq!(r("VectorType(FloatType,2)", &vb, Str), hex(&vb));
    }

    #[test]
    fn empties_udts_counters_composites() {
        use Form::*;
        // Zero-length values of non-string types (IntegerType included:
        // its toJSONString prints `""` for the null BigInteger).
        for ty in [
            "Int32Type",
            "IntegerType",
            "TimestampType",
            "ListType(Int32Type)",
        ] {
            assert_eq!(r(ty, &[], Json), "\"\"", "{ty}");
            assert_eq!(r(ty, &[], Str), "", "{ty}");
            assert_eq!(r(ty, &[], Cql), "''", "{ty}");
        }
        assert_eq!(r("UTF8Type", &[], Json), "\"\"");
        assert_eq!(r("BytesType", &[], Json), "\"0x\"");
        // UDT with a trailing field absent (added by ALTER TYPE): JSON lists
        // every declared field (UserType.toJSONString), CQL the present ones.
        let ut = "UserType(ks,61646472657373,737472656574:UTF8Type,5a6970:Int32Type)";
        let ub = [0, 0, 0, 2, b's', b't'];
        assert_eq!(
            r(ut, &ub, Json),
            "{\"street\": \"st\", \"\\\"Zip\\\"\": null}"
        );
        assert_eq!(r(ut, &ub, Cql), "{street: 'st'}");
        assert_eq!(r(ut, &ub, Cqlsh), "{street: 'st', \"Zip\": null}");
        assert_eq!(r(ut, &ub, Str), "st");
        // Counters: toJSONString reads the context's first 8 bytes as a long.
        let mut c = vec![0, 1, 0, 0];
        c.extend_from_slice(&[0x11; 16]);
        c.extend_from_slice(&5i64.to_be_bytes());
        c.extend_from_slice(&3i64.to_be_bytes());
        let first = i64::from_be_bytes(c[..8].try_into().unwrap()).to_string();
        assert_eq!(r("CounterColumnType", &c, Json), first);
        assert_eq!(r("CounterColumnType", &c, Cqlsh), "3");
        // CompositeType getString: escapes and end-of-component marks.
        let ct = "CompositeType(UTF8Type,Int32Type)";
        let kb = [0, 2, b's', b'a', 0, 0, 4, 0, 0, 0, 11, 0];
        assert_eq!(r(ct, &kb, Str), "sa:11");
        assert_eq!(r(ct, &kb, Json), "\"sa:11\"");
        assert_eq!(r(ct, &[0, 3, b'a', b':', b'!', 0xFF], Str), "a\\:!!:_");
        assert_eq!(r(ct, &[0xff, 0xff, 0, 1, b'x', 1], Str), "x:!");
    }
}
