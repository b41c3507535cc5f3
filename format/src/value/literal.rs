//! From user text to serialized values: [`parse_cql_literal`] (CQL literal or
//! Cassandra `fromString` form of a value of a given type), and values of
//! several components ([`parse_key_arg`], [`parse_components`]): Cassandra's
//! `CompositeType.fromString` syntax (components separated by `:`, a literal
//! colon written `\:`), where a component may also hold unescaped colons
//! when only one split fits the types (so printed timestamps, times and IPv6
//! addresses read back) or be quoted, or a CQL tuple `(1, 'a')`.
//!
//! Accepted forms per type (a whole-value `'quoted'` string is unquoted first,
//! with `''` → `'`):
//!
//! | type | forms |
//! |---|---|
//! | text, ascii | anything |
//! | tinyint … bigint, counter | decimal integer (range-checked) |
//! | varint, decimal | arbitrary precision, `1.5E+3` exponents |
//! | float, double | decimal, `NaN`, `Infinity`, `-Infinity` |
//! | boolean | `true` / `false` (any case) |
//! | uuid, timeuuid | `8-4-4-4-12` hex (timeuuid must be version 1) |
//! | timestamp | integer ms, or `yyyy-mm-dd[(T| )HH:MM[:SS[.fff…]]][Z|±HH[:]MM]` (UTC when no zone) |
//! | date | `yyyy-mm-dd`, or an integer = the raw stored value (epoch at 2^31) |
//! | time | `HH:MM[:SS[.fffffffff]]`, or integer nanoseconds |
//! | duration | `1y2mo3w4d5h6m7s8ms9us10ns`, ISO `P1Y2M3DT4H5M6S`, `P2W`, `P0001-02-03T04:05:06`; leading `-` |
//! | inet | IPv4 / IPv6 |
//! | blob | `0x…` or bare hex |
//! | list, set, map, tuple, UDT, vector | `[a, b]`, `{a, b}`, `{k: v}`, `(a, b)`, `{field: v}`, `[a, b]` |
//!
//! Set elements and map keys are sorted (and set elements deduplicated) with
//! the element type's order, as Cassandra serializes them, so a frozen
//! collection key typed by a user matches the bytes on disk.

use std::cmp::Ordering;
use std::net::IpAddr;

use crate::error::{Error, ErrorKind, Result};
use crate::types::{CqlType, Native};
mod scalars;

pub use scalars::parse_epoch_seconds;
use scalars::{decimal_to_twos, parse_float, split_sign};
pub(crate) use scalars::{parse_date, parse_decimal, parse_duration, parse_time, parse_timestamp};

fn bad(msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::BadValue(msg.into()), "literal")
}

/// Decode hex (even length, no prefix).
pub fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Split a composite key argument on unescaped `:` and unescape each part
/// (`\:` → `:`, a trailing `!` removed), like Cassandra's
/// `AbstractCompositeType.split` + `unescape`. An empty input has no parts.
pub fn split_composite_key_arg(s: &str) -> Vec<String> {
    split_unescaped_colon(s)
        .into_iter()
        .map(|p| {
            if p.is_empty() {
                return p;
            }
            let r = p.replace("\\:", ":");
            match r.strip_suffix('!') {
                Some(x) => x.to_string(),
                None => r,
            }
        })
        .collect()
}

/// Serialize a partition key typed by a user: a `CompositeType` key is read
/// with [`parse_components`] and every component framed (`u16 len, bytes,
/// 0x00`); any other key is one value ([`parse_value_arg`]). Every printed
/// form of a key reads back as it is: the text output's `[sa:11]`, the
/// ndjson `value` `sa:11`, sstabledump's `["sa","11"]`.
pub fn parse_key_arg(key_type: &CqlType, s: &str) -> Result<Vec<u8>> {
    match key_type {
        CqlType::Composite(ts) => {
            let mut out = Vec::new();
            for b in parse_components(ts, s, false)? {
                let len = u16::try_from(b.len())
                    .map_err(|_| bad("key component longer than 65535 bytes"))?;
                out.extend_from_slice(&len.to_be_bytes());
                out.extend_from_slice(&b);
                out.push(0);
            }
            Ok(out)
        }
        t => parse_value_arg(t, s),
    }
}

/// Serialize one value typed by a user as a key or a clustering bound: a
/// CQL literal, or the forms sstkit and sstabledump print it in, so a
/// printed value reads back as it is: `[5]` (the text output's brackets),
/// `["abc"]` or `[ 5 ]` (sstabledump's JSON array of one value). A text
/// value takes the documented `\:` for a colon; a text value that starts
/// with `[` and ends with `]` itself is written quoted, `'[abc]'`.
pub fn parse_value_arg(ty: &CqlType, s: &str) -> Result<Vec<u8>> {
    let t = ty.unreversed();
    if let Some(inner) = bracketed(s) {
        // A list, set, vector or tuple literal may itself start with '['.
        let literal_bracket = !matches!(t, CqlType::Native(_));
        if literal_bracket {
            if let Ok(v) = parse_cql_literal(t, s) {
                return Ok(v);
            }
        }
        match json_array(s) {
            Some(items) if items.len() == 1 => return value_item(t, &items[0]),
            _ => {}
        }
        return parse_value_arg(t, inner);
    }
    let st = s.trim();
    if matches!(t, CqlType::Native(Native::Text | Native::Ascii))
        && s.contains("\\:")
        && unquote_whole(st).is_none()
    {
        return parse_cql_literal(t, &s.replace("\\:", ":"));
    }
    parse_cql_literal(t, s)
}

/// The inside of `[...]` (the whole of `s`, spaces around allowed).
fn bracketed(s: &str) -> Option<&str> {
    s.trim().strip_prefix('[')?.strip_suffix(']')
}

/// One element of a printed JSON array: a JSON string holds the value's
/// text form, anything else (a number, `true`) is the value's text as is.
#[derive(Debug, Clone, PartialEq)]
enum Item {
    Str(String),
    Bare(String),
}

/// One value from a JSON array element.
fn value_item(t: &CqlType, item: &Item) -> Result<Vec<u8>> {
    match item {
        Item::Str(x) | Item::Bare(x) => parse_cql_literal(t, x),
    }
}

/// sstabledump's JSON array of a key or clustering (`[ "sa", "11" ]`,
/// `[ -479, "zulu5" ]`): its elements, or None when `s` is not a JSON array
/// of strings and bare scalars.
fn json_array(s: &str) -> Option<Vec<Item>> {
    let inner = bracketed(s)?.trim();
    let b = inner.as_bytes();
    let mut items = Vec::new();
    let mut i = 0;
    if b.is_empty() {
        return None;
    }
    loop {
        while b.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        if b.get(i) == Some(&b'"') {
            // A JSON string: \" \\ \/ \b \f \n \r \t \uXXXX.
            i += 1;
            let mut out = String::new();
            loop {
                let c = inner[i..].chars().next()?;
                i += c.len_utf8();
                match c {
                    '"' => break,
                    '\\' => {
                        let e = inner[i..].chars().next()?;
                        i += e.len_utf8();
                        out.push(match e {
                            '"' | '\\' | '/' => e,
                            'b' => '\u{8}',
                            'f' => '\u{c}',
                            'n' => '\n',
                            'r' => '\r',
                            't' => '\t',
                            'u' => {
                                let h = inner.get(i..i + 4)?;
                                i += 4;
                                char::from_u32(u32::from_str_radix(h, 16).ok()?)?
                            }
                            _ => return None,
                        });
                    }
                    c => out.push(c),
                }
            }
            items.push(Item::Str(out));
        } else {
            let end = inner[i..].find(',').map_or(inner.len(), |e| i + e);
            let tok = inner[i..end].trim();
            // Bare JSON scalars only: a number, true, false.
            let scalar = tok == "true"
                || tok == "false"
                || (!tok.is_empty()
                    && tok
                        .bytes()
                        .all(|c| c.is_ascii_digit() || b"+-.eE".contains(&c)));
            if !scalar {
                return None;
            }
            items.push(Item::Bare(tok.to_string()));
            i = end;
        }
        while b.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        match b.get(i) {
            None => break,
            Some(b',') => i += 1,
            Some(_) => return None,
        }
    }
    Some(items)
}

/// How to write a composite value; appended to every error about one.
pub const COMPOSITE_SYNTAX: &str = "components are separated by ':'; write a ':' inside a \
value as '\\:' or quote the value ('2024-01-02 03:04:05'), or give every component as a CQL \
tuple (1, 'a')";

/// A key type as users write it: `int`, or `(text, int)` for a composite key.
pub fn key_type_name(t: &CqlType) -> String {
    match t {
        CqlType::Composite(ts) => format!(
            "({})",
            ts.iter().map(|t| t.cql()).collect::<Vec<_>>().join(", ")
        ),
        t => t.cql(),
    }
}

/// Most `:`-separated pieces a composite argument may have (the grouping
/// search is quadratic in it).
const MAX_PIECES: usize = 256;

/// Serialize the components of a composite value typed by a user (a
/// multi-column partition key, or the first clustering columns of a bound):
///
/// * a CQL tuple of the components, `(1, 'a')`, or the same without the
///   parentheses, `1, 'a'` (what `--output text` prints);
/// * Cassandra's `CompositeType.fromString` form `1:a`, a literal colon
///   written `\:`, each component in CQL literal form (a quoted string keeps
///   its colons). A piece may also contain unescaped colons when only one
///   way of joining the pieces gives values of the component types, which is
///   how the printed form of timestamps, times and IPv6 addresses reads back.
///
/// With `prefix`, fewer components than `types` are allowed (a clustering
/// bound), and the reading with the most components is taken.
pub fn parse_components(types: &[CqlType], s: &str, prefix: bool) -> Result<Vec<Vec<u8>>> {
    if s.is_empty() && prefix {
        return Ok(Vec::new());
    }
    // The printed forms: sstabledump's JSON array, the text output's `[a:b]`.
    if let Some(inner) = bracketed(s) {
        if let Some(items) = json_array(s) {
            let fits = items.len() == types.len() || (prefix && items.len() < types.len());
            if fits {
                let v: Result<Vec<Vec<u8>>> = types
                    .iter()
                    .zip(&items)
                    .map(|(t, x)| value_item(t, x))
                    .collect();
                if v.is_ok() {
                    return v;
                }
            }
        }
        if let Ok(v) = parse_components(types, inner, prefix) {
            return Ok(v);
        }
    }
    if s.trim_start().starts_with('(') {
        if let Some(v) = tuple_components(types, s.trim(), prefix) {
            return Ok(v);
        }
    }
    let colon = colon_components(types, s, prefix);
    if colon.is_err() && has_top_level_comma(s) {
        if let Some(v) = tuple_components(types, &format!("({})", s.trim()), prefix) {
            return Ok(v);
        }
    }
    colon
}

/// `(a, b, …)` as components, or None when `s` is not such a tuple of
/// values of the component types.
fn tuple_components(types: &[CqlType], s: &str, prefix: bool) -> Option<Vec<Vec<u8>>> {
    let mut p = LitParser {
        s: s.as_bytes(),
        i: 0,
        depth: 0,
    };
    let Ok(Lit::Tuple(items)) = p.lit() else {
        return None;
    };
    p.ws();
    if p.i != p.s.len() || items.is_empty() || items.len() > types.len() {
        return None;
    }
    if !prefix && items.len() != types.len() {
        return None;
    }
    types
        .iter()
        .zip(&items)
        .map(|(t, l)| serialize(t, l, 0).ok().flatten())
        .collect()
}

/// True when `s` has a `,` outside quotes and brackets.
fn has_top_level_comma(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\'' | b'"' | b'(' | b'[' | b'{' => match balanced_end(b, i) {
                Some(e) => i = e,
                None => return false,
            },
            b',' => return true,
            _ => i += 1,
        }
    }
    false
}

/// The end (exclusive) of the quoted string or bracketed literal starting
/// at `b[st]`, or None when it is not closed.
fn balanced_end(b: &[u8], st: usize) -> Option<usize> {
    let mut stack: Vec<u8> = Vec::new();
    let mut i = st;
    while i < b.len() {
        let c = b[i];
        if c == b'\'' || c == b'"' {
            // A quoted string; a doubled quote is an escaped one.
            i += 1;
            loop {
                match b.get(i) {
                    None => return None,
                    Some(&x) if x == c && b.get(i + 1) == Some(&c) => i += 2,
                    Some(&x) if x == c => break,
                    Some(_) => i += 1,
                }
            }
        } else if let Some(close) = match c {
            b'(' => Some(b')'),
            b'[' => Some(b']'),
            b'{' => Some(b'}'),
            _ => None,
        } {
            stack.push(close);
        } else if matches!(c, b')' | b']' | b'}') && stack.pop() != Some(c) {
            return None;
        }
        i += 1;
        if stack.is_empty() {
            return Some(i);
        }
        if stack.len() > super::MAX_DEPTH as usize {
            return None;
        }
    }
    None
}

/// Split on `:` outside quoted strings and bracketed literals (which are
/// recognised where a piece starts) and not preceded by `\`; every piece
/// unescaped like [`split_composite_key_arg`].
fn split_pieces(s: &str) -> Vec<String> {
    let b = s.as_bytes();
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut i = 0;
    let mut at_start = true;
    while i < b.len() {
        let c = b[i];
        if at_start && c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if at_start && matches!(c, b'\'' | b'"' | b'(' | b'[' | b'{') {
            at_start = false;
            if let Some(e) = balanced_end(b, i) {
                i = e;
                continue;
            }
        }
        at_start = false;
        if c == b':' && !(i > 0 && b[i - 1] == b'\\') {
            pieces.push(&s[start..i]);
            start = i + 1;
            at_start = true;
        }
        i += 1;
    }
    pieces.push(&s[start..]);
    pieces
        .into_iter()
        .map(|p| {
            let r = p.replace("\\:", ":");
            match r.strip_suffix('!') {
                Some(x) => x.to_string(),
                None => r,
            }
        })
        .collect()
}

/// One component in CQL literal form; a value that starts with a quote
/// must be a whole quoted string (so `'a', 'b'` is not one text value).
fn component(t: &CqlType, text: &str) -> Result<Vec<u8>> {
    let st = text.trim();
    if st.starts_with('\'') && unquote_whole(st).is_none() {
        return Err(bad(format!("unterminated or malformed quoted string {st}")));
    }
    parse_cql_literal(t, text)
}

/// The colon form: group the pieces into components of the given types.
fn colon_components(types: &[CqlType], s: &str, prefix: bool) -> Result<Vec<Vec<u8>>> {
    let what = |n: usize| if n == 1 { "component" } else { "components" };
    let pieces = split_pieces(s);
    let m = pieces.len();
    if m > MAX_PIECES {
        return Err(bad(format!(
            "{m} ':'-separated pieces, at most {MAX_PIECES} are read; {COMPOSITE_SYNTAX}"
        )));
    }
    let n = types.len();
    // parsed[c][i][j]: pieces i..j joined, as a value of component c.
    let mut parsed: Vec<Vec<Vec<Option<Vec<u8>>>>> = vec![vec![Vec::new(); m]; n];
    for (c, t) in types.iter().enumerate() {
        for i in 0..m {
            for j in i + 1..=m {
                let text = pieces[i..j].join(":");
                parsed[c][i].push(component(t, &text).ok());
            }
        }
    }
    // ways[k][j]: readings of pieces 0..j as the first k components (capped at 2).
    let mut ways = vec![vec![0u8; m + 1]; n + 1];
    ways[0][0] = 1;
    for k in 0..n {
        for i in 0..m {
            if ways[k][i] == 0 {
                continue;
            }
            for j in i + 1..=m {
                if parsed[k][i][j - i - 1].is_some() {
                    ways[k + 1][j] = (ways[k + 1][j] + ways[k][i]).min(2);
                }
            }
        }
    }
    let lo = if prefix { 1 } else { n };
    let best = (lo..=n).rev().find(|&k| ways[k][m] > 0);
    let Some(k) = best else {
        // No reading: name the piece where the furthest partial reading
        // stops, or say how many components there are.
        let count = format!("{m} {} given, there are {n}", what(m));
        if m < n && !prefix {
            return Err(bad(format!("{count}; {COMPOSITE_SYNTAX}")));
        }
        let (c, i) = (0..n)
            .rev()
            .find_map(|c| (0..m).rev().find(|&i| ways[c][i] > 0).map(|i| (c, i)))
            .unwrap_or((0, 0));
        let err = match component(&types[c], &pieces[i]) {
            Err(e) => format!(
                "component {} ({}) '{}': {}",
                c + 1,
                types[c].cql(),
                pieces[i],
                e.kind
            ),
            Ok(_) => count,
        };
        return Err(bad(format!("{err}; {COMPOSITE_SYNTAX}")));
    };
    if ways[k][m] > 1 {
        return Err(bad(format!(
            "ambiguous: the pieces can be read as {k} {} in more than one way; \
             {COMPOSITE_SYNTAX}",
            what(k)
        )));
    }
    // Walk back the single reading.
    let mut out = vec![Vec::new(); k];
    let mut j = m;
    for c in (0..k).rev() {
        let i = (0..j)
            .find(|&i| ways[c][i] > 0 && parsed[c][i][j - i - 1].is_some())
            .ok_or_else(|| bad("internal: no reading to walk back"))?;
        out[c] = parsed[c][i][j - i - 1].take().unwrap_or_default();
        j = i;
    }
    Ok(out)
}

/// Serialize `s`, a CQL literal (or Cassandra's string form) of a value of `ty`.
pub fn parse_cql_literal(ty: &CqlType, s: &str) -> Result<Vec<u8>> {
    let t = ty.unreversed();
    match t {
        CqlType::Frozen(inner) => parse_cql_literal(inner, s),
        CqlType::Native(n) => {
            let st = s.trim();
            let text = match unquote_whole(st) {
                Some(u) => u,
                None if matches!(n, Native::Text | Native::Ascii) => s.to_string(),
                None => st.to_string(),
            };
            native_from_string(*n, &text)
        }
        CqlType::Custom(_) | CqlType::DynamicComposite(_) | CqlType::ColumnToCollection(_) => {
            native_from_string(Native::Blob, s.trim())
        }
        CqlType::Composite(_) => parse_key_arg(t, s),
        CqlType::Tuple(_) | CqlType::Udt { .. } if !s.trim_start().starts_with(['(', '{', '[']) => {
            tuple_from_string(t, s)
        }
        _ => {
            let mut p = LitParser {
                s: s.as_bytes(),
                i: 0,
                depth: 0,
            };
            let lit = p.lit()?;
            p.ws();
            if p.i != p.s.len() {
                return Err(bad(format!(
                    "unexpected text after the literal at char {}",
                    p.i
                )));
            }
            match serialize(t, &lit, 0)? {
                Some(b) => Ok(b),
                None => Err(bad("null is not a value")),
            }
        }
    }
}

/// `TupleType.fromString`: fields separated by unescaped `:`, `@` = null,
/// `\:` and `\@` unescaped, each field in its type's string form (the form
/// `sstablemetadata` and `sstabledump` print tuple partition keys in).
fn tuple_from_string(ty: &CqlType, s: &str) -> Result<Vec<u8>> {
    let types: Vec<&CqlType> = match ty {
        CqlType::Tuple(ts) => ts.iter().collect(),
        CqlType::Udt { fields, .. } => fields.iter().map(|f| &f.1).collect(),
        _ => return Err(bad("not a tuple type")),
    };
    let parts = split_unescaped_colon(s);
    if parts.len() > types.len() {
        return Err(bad(format!(
            "tuple has {} fields, the type {}",
            parts.len(),
            types.len()
        )));
    }
    let mut out = Vec::new();
    for (t, p) in types.iter().zip(&parts) {
        if p == "@" {
            push_elem(&mut out, None);
        } else {
            let field = p.replace("\\:", ":").replace("\\@", "@");
            push_elem(&mut out, Some(parse_cql_literal(t, &field)?));
        }
    }
    Ok(out)
}

/// Split on `:` not preceded by `\` (`AbstractCompositeType.split`), without
/// unescaping.
fn split_unescaped_colon(s: &str) -> Vec<String> {
    if s.is_empty() {
        return Vec::new();
    }
    let chars: Vec<char> = s.chars().collect();
    let mut parts = Vec::new();
    let mut prev = 0;
    for i in 0..chars.len() {
        if chars[i] == ':' && !(i > 0 && chars[i - 1] == '\\') {
            parts.push(chars[prev..i].iter().collect());
            prev = i + 1;
        }
    }
    parts.push(chars[prev..].iter().collect());
    parts
}

/// `'…'` with `''` escapes, covering the whole string.
fn unquote_whole(s: &str) -> Option<String> {
    let inner = s.strip_prefix('\'')?.strip_suffix('\'')?;
    if s.len() < 2 {
        return None;
    }
    // Every remaining quote must be doubled.
    let mut out = String::new();
    let mut it = inner.chars().peekable();
    while let Some(c) = it.next() {
        if c == '\'' && it.next() != Some('\'') {
            return None;
        }
        out.push(c);
    }
    Some(out)
}

fn int_in(s: &str, min: i64, max: i64, what: &str) -> Result<i64> {
    let v: i64 = s
        .trim()
        .parse()
        .map_err(|_| bad(format!("not a valid {what}: {s:?}")))?;
    if v < min || v > max {
        return Err(bad(format!("{what} out of range: {v}")));
    }
    Ok(v)
}

/// Cassandra `fromString` of a native type.
fn native_from_string(n: Native, s: &str) -> Result<Vec<u8>> {
    Ok(match n {
        Native::Text => s.as_bytes().to_vec(),
        Native::Ascii => {
            if !s.is_ascii() {
                return Err(bad("non-ASCII character in an ascii value"));
            }
            s.as_bytes().to_vec()
        }
        Native::Empty => {
            if !s.is_empty() {
                return Err(bad("EmptyType values must be empty"));
            }
            Vec::new()
        }
        _ if s.is_empty() => Vec::new(),
        Native::Tinyint => (int_in(s, i8::MIN as i64, i8::MAX as i64, "tinyint")? as i8)
            .to_be_bytes()
            .to_vec(),
        Native::Smallint => (int_in(s, i16::MIN as i64, i16::MAX as i64, "smallint")? as i16)
            .to_be_bytes()
            .to_vec(),
        Native::Int => (int_in(s, i32::MIN as i64, i32::MAX as i64, "int")? as i32)
            .to_be_bytes()
            .to_vec(),
        Native::Bigint | Native::Counter => int_in(s, i64::MIN, i64::MAX, "bigint")?
            .to_be_bytes()
            .to_vec(),
        Native::Varint => {
            let (neg, digits) = split_sign(s.trim());
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad(format!("not a valid varint: {s:?}")));
            }
            decimal_to_twos(neg, digits)
        }
        Native::Decimal => {
            let (scale, unscaled) = parse_decimal(s.trim())?;
            let mut out = scale.to_be_bytes().to_vec();
            out.extend_from_slice(&unscaled);
            out
        }
        Native::Float => (parse_float(s)? as f32).to_be_bytes().to_vec(),
        Native::Double => parse_float(s)?.to_be_bytes().to_vec(),
        Native::Boolean => match s.trim().to_ascii_lowercase().as_str() {
            "true" => vec![1],
            "false" => vec![0],
            _ => return Err(bad(format!("not a valid boolean: {s:?}"))),
        },
        Native::Uuid | Native::LexicalUuid | Native::Timeuuid => {
            let u = super::Uuid::parse(s.trim())
                .ok_or_else(|| bad(format!("not a valid uuid: {s:?}")))?;
            if n == Native::Timeuuid && u.version() != 1 {
                return Err(bad(format!("not a time-based (version 1) uuid: {s}")));
            }
            u.0.to_vec()
        }
        Native::Timestamp | Native::LegacyDate => parse_timestamp(s.trim())?.to_be_bytes().to_vec(),
        Native::Date => parse_date(s.trim())?.to_be_bytes().to_vec(),
        Native::Time => parse_time(s.trim())?.to_be_bytes().to_vec(),
        Native::Duration => {
            let (m, d, ns) = parse_duration(s.trim())?;
            let mut out = Vec::new();
            for v in [m as i64, d as i64, ns] {
                crate::cur::write_uvint(&mut out, ((v << 1) ^ (v >> 63)) as u64);
            }
            out
        }
        Native::Inet => match s.trim().parse::<IpAddr>() {
            Ok(IpAddr::V4(a)) => a.octets().to_vec(),
            Ok(IpAddr::V6(a)) => a.octets().to_vec(),
            Err(_) => return Err(bad(format!("not a valid inet address: {s:?}"))),
        },
        Native::Blob => {
            let t = s.trim();
            let h = t
                .strip_prefix("0x")
                .or_else(|| t.strip_prefix("0X"))
                .unwrap_or(t);
            unhex(h).ok_or_else(|| bad(format!("not valid hex: {s:?}")))?
        }
    })
}
/// A parsed literal, before typing.
#[derive(Debug, Clone, PartialEq)]
enum Lit {
    Null,
    Str(String),
    Ident(String),
    Atom(String),
    List(Vec<Lit>),
    Brace(Vec<(Lit, Option<Lit>)>),
    Tuple(Vec<Lit>),
}

/// The literal as CQL text (for messages).
impl std::fmt::Display for Lit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let list = |f: &mut std::fmt::Formatter<'_>, items: &[Lit]| {
            for (i, l) in items.iter().enumerate() {
                if i > 0 {
                    write!(f, ", ")?;
                }
                write!(f, "{l}")?;
            }
            Ok(())
        };
        match self {
            Lit::Null => write!(f, "null"),
            Lit::Str(s) => write!(f, "'{}'", s.replace('\'', "''")),
            Lit::Ident(s) => write!(f, "\"{}\"", s.replace('"', "\"\"")),
            Lit::Atom(s) => write!(f, "{s}"),
            Lit::List(v) => {
                write!(f, "[")?;
                list(f, v)?;
                write!(f, "]")
            }
            Lit::Tuple(v) => {
                write!(f, "(")?;
                list(f, v)?;
                write!(f, ")")
            }
            Lit::Brace(v) => {
                write!(f, "{{")?;
                for (i, (k, val)) in v.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    match val {
                        Some(x) => write!(f, "{k}: {x}")?,
                        None => write!(f, "{k}")?,
                    }
                }
                write!(f, "}}")
            }
        }
    }
}

struct LitParser<'a> {
    s: &'a [u8],
    i: usize,
    depth: u32,
}

impl LitParser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.s.get(self.i).copied()
    }

    fn quoted(&mut self, q: u8) -> Result<String> {
        self.i += 1;
        let mut out = Vec::new();
        loop {
            match self.s.get(self.i) {
                None => return Err(bad("unterminated quoted literal")),
                Some(&c) if c == q => {
                    if self.s.get(self.i + 1) == Some(&q) {
                        out.push(q);
                        self.i += 2;
                    } else {
                        self.i += 1;
                        break;
                    }
                }
                Some(&c) => {
                    out.push(c);
                    self.i += 1;
                }
            }
        }
        String::from_utf8(out).map_err(|_| bad("invalid UTF-8 in literal"))
    }

    fn seq(&mut self, close: u8) -> Result<Vec<Lit>> {
        self.i += 1;
        let mut v = Vec::new();
        if self.peek() == Some(close) {
            self.i += 1;
            return Ok(v);
        }
        loop {
            v.push(self.lit()?);
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(c) if c == close => {
                    self.i += 1;
                    return Ok(v);
                }
                _ => {
                    return Err(bad(format!(
                        "expected ',' or '{}' at char {}",
                        close as char, self.i
                    )))
                }
            }
        }
    }

    fn lit(&mut self) -> Result<Lit> {
        self.depth += 1;
        if self.depth > super::MAX_DEPTH {
            return Err(bad("literal nested too deeply"));
        }
        let r = self.lit_inner();
        self.depth -= 1;
        r
    }

    fn lit_inner(&mut self) -> Result<Lit> {
        match self.peek() {
            None => Err(bad("missing literal")),
            Some(b'\'') => Ok(Lit::Str(self.quoted(b'\'')?)),
            Some(b'"') => Ok(Lit::Ident(self.quoted(b'"')?)),
            Some(b'[') => Ok(Lit::List(self.seq(b']')?)),
            Some(b'(') => Ok(Lit::Tuple(self.seq(b')')?)),
            Some(b'{') => {
                self.i += 1;
                let mut v = Vec::new();
                if self.peek() == Some(b'}') {
                    self.i += 1;
                    return Ok(Lit::Brace(v));
                }
                loop {
                    let k = self.lit()?;
                    let val = if self.peek() == Some(b':') {
                        self.i += 1;
                        Some(self.lit()?)
                    } else {
                        None
                    };
                    v.push((k, val));
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            return Ok(Lit::Brace(v));
                        }
                        _ => return Err(bad(format!("expected ',' or '}}' at char {}", self.i))),
                    }
                }
            }
            Some(_) => {
                let st = self.i;
                while self.i < self.s.len() && !b" \t\r\n[]{}(),:'\"".contains(&self.s[self.i]) {
                    self.i += 1;
                }
                if st == self.i {
                    return Err(bad(format!("unexpected character at char {}", self.i)));
                }
                let a = String::from_utf8_lossy(&self.s[st..self.i]).into_owned();
                if a.eq_ignore_ascii_case("null") {
                    Ok(Lit::Null)
                } else {
                    Ok(Lit::Atom(a))
                }
            }
        }
    }
}

/// Serialize a literal as a value of `ty`; `None` for null.
fn serialize(ty: &CqlType, lit: &Lit, depth: u32) -> Result<Option<Vec<u8>>> {
    if depth > super::MAX_DEPTH {
        return Err(bad("literal nested too deeply"));
    }
    if *lit == Lit::Null {
        return Ok(None);
    }
    let elem_list = |out: &mut Vec<u8>, items: Vec<Option<Vec<u8>>>| {
        out.extend_from_slice(&(items.len() as i32).to_be_bytes());
        for it in items {
            push_elem(out, it);
        }
    };
    Ok(Some(match (ty.unreversed(), lit) {
        (CqlType::Frozen(t), l) => return serialize(t, l, depth + 1),
        (CqlType::Native(n), Lit::Str(s) | Lit::Atom(s) | Lit::Ident(s)) => {
            native_from_string(*n, s)?
        }
        (CqlType::Custom(_), Lit::Str(s) | Lit::Atom(s)) => native_from_string(Native::Blob, s)?,
        (CqlType::List(t), Lit::List(items)) => {
            let v = items
                .iter()
                .map(|l| serialize(t, l, depth + 1))
                .collect::<Result<Vec<_>>>()?;
            let mut out = Vec::new();
            elem_list(&mut out, v);
            out
        }
        (CqlType::Set(t), l @ (Lit::Brace(_) | Lit::List(_))) if set_items(l).is_some() => {
            let lits = set_items(l).unwrap_or_default();
            let mut v = Vec::with_capacity(lits.len());
            for l in lits {
                v.push(serialize(t, l, depth + 1)?.ok_or_else(|| bad("null in a set"))?);
            }
            v.sort_by(|a, b| compare_serialized(t, a, b));
            v.dedup();
            let mut out = Vec::new();
            elem_list(&mut out, v.into_iter().map(Some).collect());
            out
        }
        (CqlType::Map(kt, vt), Lit::Brace(items)) => {
            let mut pairs = Vec::with_capacity(items.len());
            for (k, v) in items {
                let v = v.as_ref().ok_or_else(|| bad("map entry without ':'"))?;
                let kb = serialize(kt, k, depth + 1)?.ok_or_else(|| bad("null map key"))?;
                pairs.push((kb, serialize(vt, v, depth + 1)?));
            }
            pairs.sort_by(|a, b| compare_serialized(kt, &a.0, &b.0));
            pairs.dedup_by(|a, b| a.0 == b.0);
            let mut out = (pairs.len() as i32).to_be_bytes().to_vec();
            for (k, v) in pairs {
                push_elem(&mut out, Some(k));
                push_elem(&mut out, v);
            }
            out
        }
        (CqlType::Tuple(ts), Lit::Tuple(items) | Lit::List(items)) => {
            if items.len() > ts.len() {
                return Err(bad(format!(
                    "tuple has {} fields, the type {}",
                    items.len(),
                    ts.len()
                )));
            }
            let mut out = Vec::new();
            for (t, l) in ts.iter().zip(items) {
                push_elem(&mut out, serialize(t, l, depth + 1)?);
            }
            out
        }
        (CqlType::Udt { fields, .. }, Lit::Brace(items)) => {
            let mut vals: Vec<Option<Vec<u8>>> = vec![None; fields.len()];
            for (k, v) in items {
                let name = match k {
                    Lit::Ident(s) => s.clone(),
                    Lit::Atom(s) => s.to_lowercase(),
                    _ => return Err(bad("UDT field name expected")),
                };
                let i = fields
                    .iter()
                    .position(|f| f.0 == name)
                    .ok_or_else(|| bad(format!("unknown UDT field {name}")))?;
                let v = v.as_ref().ok_or_else(|| bad("UDT field without ':'"))?;
                vals[i] = serialize(&fields[i].1, v, depth + 1)?;
            }
            let mut out = Vec::new();
            for v in vals {
                push_elem(&mut out, v);
            }
            out
        }
        (CqlType::Vector(t, n), Lit::List(items)) => {
            if items.len() != *n {
                return Err(bad(format!(
                    "vector of {} elements, the type has {n}",
                    items.len()
                )));
            }
            let fixed = t.fixed_len().is_some();
            let mut out = Vec::new();
            for l in items {
                let b = serialize(t, l, depth + 1)?.ok_or_else(|| bad("null in a vector"))?;
                if !fixed {
                    crate::cur::write_uvint(&mut out, b.len() as u64);
                }
                out.extend_from_slice(&b);
            }
            out
        }
        (t, l) => return Err(bad(format!("literal {l} does not fit type {}", t.cql()))),
    }))
}

/// Set literal elements: `{a, b}` (no ':' entries) or, leniently, `[a, b]`.
fn set_items(l: &Lit) -> Option<Vec<&Lit>> {
    match l {
        Lit::Brace(items) => {
            if items.iter().any(|(_, v)| v.is_some()) {
                None
            } else {
                Some(items.iter().map(|(k, _)| k).collect())
            }
        }
        Lit::List(items) => Some(items.iter().collect()),
        _ => None,
    }
}

fn push_elem(out: &mut Vec<u8>, v: Option<Vec<u8>>) {
    match v {
        None => out.extend_from_slice(&(-1i32).to_be_bytes()),
        Some(b) => {
            out.extend_from_slice(&(b.len() as i32).to_be_bytes());
            out.extend_from_slice(&b);
        }
    }
}

/// Order of serialized values of `ty` as Cassandra sorts set elements and
/// map keys (numeric types numerically, time UUIDs by time, text and blobs by
/// unsigned bytes; anything else by unsigned bytes).
pub(crate) fn compare_serialized(ty: &CqlType, a: &[u8], b: &[u8]) -> Ordering {
    // One comparator for the whole crate: Cassandra's order per type.
    crate::compare::compare_value(ty.unreversed(), a, b)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// `days_from_civil`).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
