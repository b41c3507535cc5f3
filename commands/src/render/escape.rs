//! JSON string escaping as Jackson's `JsonStringEncoder.quoteAsString`,
//! with word-at-a-time tests (SWAR, and SSE2 on x86-64) for the runs that
//! need none: dump output is mostly such runs.

use super::append::{push_ascii, push_str_short};

/// Jackson's escape of each ASCII byte (`CharTypes.sOutputEscapes128`):
/// 0 = written as is, `u` = `\u00XX`, else the character after the `\`.
static JSON_ESCAPES: [u8; 128] = {
    let mut t = [0u8; 128];
    let mut c = 0;
    while c < 0x20 {
        t[c] = b'u';
        c += 1;
    }
    t[0x08] = b'b';
    t[b'\t' as usize] = b't';
    t[b'\n' as usize] = b'n';
    t[0x0c] = b'f';
    t[b'\r' as usize] = b'r';
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t
};

/// True when one of the 8 bytes of `w` is a control character, `"` or `\`
/// (the bytes JSON escapes). Exact as a yes/no answer: the SWAR tests
/// (`hasless` / `haszero`) only report false positives above a true one.
#[inline]
fn word_needs_escape(w: u64) -> bool {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let control = w.wrapping_sub(LO * 0x20) & !w;
    let q = w ^ (LO * u64::from(b'"'));
    let quote = q.wrapping_sub(LO) & !q;
    let b = w ^ (LO * u64::from(b'\\'));
    let backslash = b.wrapping_sub(LO) & !b;
    (control | quote | backslash) & HI != 0
}

/// True when the 8 bytes of `w` are ASCII that JSON writes as is.
#[inline(always)]
fn clean_word(w: u64) -> bool {
    w & 0x8080_8080_8080_8080 == 0 && !word_needs_escape(w)
}

/// The first 8 bytes of `s` (at least 8) as a little-endian word.
#[inline(always)]
fn le_word(s: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&s[..8]);
    u64::from_le_bytes(a)
}

/// JSON string escaping as Jackson's `JsonStringEncoder.quoteAsString`
/// (Cassandra's `JsonUtils.quoteAsJsonString`), appended to `out`: `"` and
/// `\` escaped, control characters as `\b \t \n \f \r` or `\u00XX`
/// (upper-case hex); everything else, including `/`, DEL and non-ASCII,
/// as is.
///
/// Runs of plain bytes are found 8 at a time and copied with one push (most
/// strings have nothing to escape).
pub fn json_escape_into(out: &mut String, s: &str) {
    let b = s.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < b.len() {
        if let Some(w) = b.get(i..i + 8) {
            if !word_needs_escape(le_word(w)) {
                i += 8;
                continue;
            }
        }
        let c = b[i];
        let e = JSON_ESCAPES.get(usize::from(c)).copied().unwrap_or(0);
        if e == 0 {
            i += 1;
            continue;
        }
        // `i` is an ASCII byte, so both ends are char boundaries.
        out.push_str(&s[start..i]);
        json_escape_byte(out, c, e);
        i += 1;
        start = i;
    }
    out.push_str(&s[start..]);
}

/// [`json_escape_into`] straight from bytes that should be text: UTF-8, or
/// ASCII when `ascii_only` (Cassandra's `AsciiType`). The ASCII text most
/// values are is validated in the same pass as the escape scan; from the
/// first non-ASCII byte on, the rest is validated as UTF-8 and escaped as a
/// `str`. Invalid text is written as `String::from_utf8_lossy` would give
/// it (what [`render`](super::forms::render) does).
#[inline]
pub fn json_escape_text_into(out: &mut String, b: &[u8], ascii_only: bool) {
    // Most texts are short and have nothing to escape: tested whole, with
    // no loop over bytes and no call, then copied in one append.
    if clean_up_to_64(b) {
        push_ascii_run(out, b);
        return;
    }
    json_escape_text_slow(out, b, ascii_only);
}

/// [`json_escape_text_into`] of what the fast test did not pass: longer
/// texts, escapes, non-ASCII.
#[inline(never)]
fn json_escape_text_slow(out: &mut String, b: &[u8], ascii_only: bool) {
    let n = json_escape_ascii_prefix(out, b);
    let rest = &b[n..];
    if rest.is_empty() {
        return;
    }
    match std::str::from_utf8(rest) {
        Ok(s) if !ascii_only => json_escape_into(out, s),
        // The prefix written is ASCII, so the lossy form of the whole is the
        // prefix followed by the lossy form of the rest.
        _ => json_escape_into(out, &String::from_utf8_lossy(rest)),
    }
}

/// True when `b` is at most 64 bytes of ASCII that JSON writes as is:
/// [`short_clean`] up to 16 bytes, else 16-byte blocks ([`clean16`]), the
/// last one overlapping the one before. False for longer input.
#[inline(always)]
fn clean_up_to_64(b: &[u8]) -> bool {
    let n = b.len();
    if n <= 16 {
        return short_clean(b);
    }
    if n > 64 {
        return false;
    }
    let mut i = 0;
    while i + 16 < n {
        if !clean16(&b[i..]) {
            return false;
        }
        i += 16;
    }
    clean16(&b[n - 16..])
}

/// True when `b` is at most 16 bytes of ASCII that JSON writes as is,
/// tested in one go: two overlapping 8- or 4-byte loads (or three single
/// bytes) cover it, and the words they make are tested like [`clean16`]'s.
/// False for longer input (the caller's loop handles it).
#[inline(always)]
fn short_clean(b: &[u8]) -> bool {
    let n = b.len();
    let load4 = |s: &[u8]| {
        let mut a = [0u8; 4];
        a.copy_from_slice(s);
        u64::from(u32::from_le_bytes(a))
    };
    match n {
        8..=16 => clean_word(le_word(b)) && clean_word(le_word(&b[n - 8..])),
        4..=7 => clean_word(load4(&b[..4]) | load4(&b[n - 4..]) << 32),
        // The upper five bytes are spaces: clean.
        1..=3 => clean_word(
            u64::from(b[0])
                | u64::from(b[n / 2]) << 8
                | u64::from(b[n - 1]) << 16
                | 0x2020_2020_2000_0000,
        ),
        0 => true,
        _ => false,
    }
}

/// Escape the leading run of ASCII bytes of `b` into `out`; returns its
/// length (the index of the first non-ASCII byte, or `b.len()`).
fn json_escape_ascii_prefix(out: &mut String, b: &[u8]) -> usize {
    let mut start = 0;
    let mut i = 0;
    let clean = |w: &[u8]| clean_word(le_word(w));
    loop {
        while let Some(w) = b.get(i..i + 16) {
            if !clean16(w) {
                break;
            }
            i += 16;
        }
        // Fewer than 16 bytes left: test the last 16 (overlapping what was
        // checked) in one go.
        if b.len() - i < 16 && b.len() >= 16 && clean16(&b[b.len() - 16..]) {
            i = b.len();
        }
        while let Some(w) = b.get(i..i + 8) {
            if !clean(w) {
                break;
            }
            i += 8;
        }
        // Fewer than 8 bytes left: test the last 8 (overlapping what was
        // checked) in one go rather than byte by byte.
        if b.len() - i < 8 && b.len() >= 8 && clean(&b[b.len() - 8..]) {
            i = b.len();
        }
        let Some(&c) = b.get(i) else { break };
        if c >= 0x80 {
            break;
        }
        let e = JSON_ESCAPES[usize::from(c)];
        if e != 0 {
            push_ascii_run(out, &b[start..i]);
            json_escape_byte(out, c, e);
            start = i + 1;
        }
        i += 1;
    }
    push_ascii_run(out, &b[start..i]);
    i
}

/// True when the 16 bytes of `w` are ASCII that JSON writes as is (no
/// control character, `"` or `\\`): one SSE2 compare per class.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn clean16(w: &[u8]) -> bool {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    if w.len() < 16 {
        return false;
    }
    // SAFETY: SSE2 is part of the x86_64 baseline, and the unaligned load
    // reads the first 16 bytes of `w`, which has at least 16.
    unsafe {
        let v = _mm_loadu_si128(w.as_ptr().cast());
        // Signed: bytes >= 0x80 are negative, so below 0x20 too.
        let low = _mm_cmplt_epi8(v, _mm_set1_epi8(0x20));
        let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
        let backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
        _mm_movemask_epi8(_mm_or_si128(low, _mm_or_si128(quote, backslash))) == 0
    }
}

/// [`clean16`] elsewhere: two words.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn clean16(w: &[u8]) -> bool {
    w.len() >= 16 && w[..16].chunks_exact(8).all(|c| clean_word(le_word(c)))
}

/// Append a run the escape scan found to be ASCII.
#[inline]
fn push_ascii_run(out: &mut String, run: &[u8]) {
    debug_assert!(run.is_ascii());
    // SAFETY: `json_escape_ascii_prefix` only passes bytes it checked are
    // below 0x80 (whole words without a high bit, or single bytes), and
    // ASCII is valid UTF-8 on its own.
    let run = unsafe { std::str::from_utf8_unchecked(run) };
    push_str_short(out, run);
}

/// The escape of ASCII byte `c` whose [`JSON_ESCAPES`] entry is `e`.
#[inline]
fn json_escape_byte(out: &mut String, c: u8, e: u8) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    if e == b'u' {
        push_ascii(
            out,
            &[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(c >> 4)],
                HEX[usize::from(c & 15)],
            ],
        );
    } else {
        push_ascii(out, &[b'\\', e]);
    }
}

/// Sum of the shard counts of a counter context (`CounterContext.total`):
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::super::append::string;
    use super::super::forms::{render, Form, JsonStr};
    use super::*;
    use sstkit_format::types::CqlType;

    fn t(s: &str) -> CqlType {
        CqlType::parse(s).unwrap()
    }
    /// The byte-at-a-time escape the fast paths must match.
    fn escape_reference(s: &str) -> String {
        let mut out = String::new();
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\u{8}' => out.push_str("\\b"),
                '\t' => out.push_str("\\t"),
                '\n' => out.push_str("\\n"),
                '\u{c}' => out.push_str("\\f"),
                '\r' => out.push_str("\\r"),
                c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04X}", c as u32)),
                c => out.push(c),
            }
        }
        out
    }

    #[test]
    fn fast_clean_tests_test_every_byte() {
        // Every byte value at every position of texts of 0..=66 bytes.
        let plain = |c: u8| (0x20..0x80).contains(&c) && c != b'"' && c != b'\\';
        let base = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ/~+-".as_bytes();
        for len in 0..=66usize {
            for at in 0..len.max(1) {
                for c in 0..=255u8 {
                    let mut b = base[..len].to_vec();
                    if let Some(x) = b.get_mut(at) {
                        *x = c;
                    }
                    let clean = b.iter().all(|&x| plain(x));
                    assert_eq!(short_clean(&b), len <= 16 && clean, "{b:?}");
                    assert_eq!(clean_up_to_64(&b), len <= 64 && clean, "{b:?}");
                }
            }
        }
    }

    #[test]
    fn escapes_match_the_reference() {
        // Every position of every special byte, in strings of 0..80 bytes
        // (16- and 8-byte runs, the overlapping tails, appends of up to 64
        // bytes and longer), ASCII and not.
        let specials = ["\"", "\\", "\n", "\u{1}", "\u{1f}", "é", "€", "\u{7f}", "/"];
        let base = "abcdefghijklmnopqrstuvwxyz0123456789ABCD".repeat(2);
        for len in 0..80 {
            for sp in specials {
                for at in 0..=len {
                    let mut s: String = base[..len].into();
                    s.insert_str(at, sp);
                    let want = escape_reference(&s);
                    let mut a = String::new();
                    json_escape_into(&mut a, &s);
                    assert_eq!(a, want, "{s:?}");
                    let mut b = String::new();
                    json_escape_text_into(&mut b, s.as_bytes(), false);
                    assert_eq!(b, want, "{s:?}");
                }
            }
        }
        // Invalid UTF-8 and non-ASCII `ascii`: lossy, as `render`.
        for bytes in [
            &b"abcdefghij\xff\"xyz"[..],
            b"\xc3",
            b"0123456789abcdef\xe2\x82",
        ] {
            let want = escape_reference(&String::from_utf8_lossy(bytes));
            let mut a = String::new();
            json_escape_text_into(&mut a, bytes, false);
            assert_eq!(a, want);
        }
        // `ascii` with non-ASCII bytes is the lossy UTF-8 form (`BadText`).
        let mut a = String::new();
        json_escape_text_into(&mut a, "naïve\"".as_bytes(), true);
        assert_eq!(a, "naïve\\\"");
        assert_eq!(
            string(|s| render(&t("AsciiType"), "naïve\"".as_bytes(), Form::Json, s)),
            "\"naïve\\\"\""
        );
    }

    /// `JsonStr::render` gives what `super::super::forms::render_json` gives, for every
    /// type it renders unescaped (`Plain`), on valid, empty, short, long
    /// and random values, collections included.
    #[test]
    fn plain_json_strings_need_no_escaping() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let scalars = [
            "LongType",
            "BytesType",
            "BooleanType",
            "CounterColumnType",
            "SimpleDateType",
            "DecimalType",
            "DoubleType",
            "DurationType",
            "FloatType",
            "InetAddressType",
            "Int32Type",
            "ShortType",
            "TimeType",
            "TimestampType",
            "DateType",
            "TimeUUIDType",
            "ByteType",
            "UUIDType",
            "LexicalUUIDType",
            "IntegerType",
        ];
        let mut types: Vec<String> = scalars.iter().map(|s| s.to_string()).collect();
        for s in ["Int32Type", "DoubleType", "TimestampType", "UUIDType"] {
            types.push(format!("FrozenType(ListType({s}))"));
            types.push(format!("FrozenType(SetType({s}))"));
            types.push(format!("FrozenType(MapType({s},LongType))"));
            types.push(format!("TupleType({s},Int32Type)"));
        }
        let mut plain = 0;
        for name in &types {
            let ty = t(name);
            for form in [Form::Str, Form::Cql] {
                let kind = JsonStr::of(&ty, form);
                if matches!(ty, CqlType::Native(_)) || form == Form::Cql {
                    assert_eq!(kind, JsonStr::Plain, "{name} {form:?}");
                }
                if kind != JsonStr::Plain {
                    continue;
                }
                plain += 1;
                for i in 0..400 {
                    let len = [0, 1, 2, 4, 8, 16, 3, 12][i % 8]
                        + if i > 200 { rnd() as usize % 40 } else { 0 };
                    let mut b: Vec<u8> = (0..len).map(|_| rnd() as u8).collect();
                    if i % 3 == 0 && !matches!(ty, CqlType::Native(_)) {
                        // A well-formed collection / tuple body of 0..4 elements.
                        let n = rnd() % 5;
                        b = (n as i32).to_be_bytes().to_vec();
                        for _ in 0..n * 2 {
                            let el = [4usize, 8, 16][rnd() as usize % 3];
                            b.extend((el as i32).to_be_bytes());
                            b.extend((0..el).map(|_| rnd() as u8));
                        }
                    }
                    let (mut a, mut scratch) = (String::new(), String::new());
                    kind.render(&ty, &b, form, &mut a, &mut scratch);
                    let mut want = String::new();
                    super::super::forms::render_json(&ty, &b, form, &mut want, &mut scratch);
                    assert_eq!(a, want, "{name} {form:?} {b:02x?}");
                }
            }
        }
        assert!(plain >= scalars.len() * 2);
        // Text is escaped from the bytes; UDTs and text collections are not plain.
        assert_eq!(
            JsonStr::of(&t("UTF8Type"), Form::Str),
            JsonStr::Text { ascii: false }
        );
        assert_eq!(
            JsonStr::of(&t("FrozenType(ListType(UTF8Type))"), Form::Cql),
            JsonStr::Escaped
        );
        assert_eq!(JsonStr::of(&t("Int32Type"), Form::Json), JsonStr::Escaped);
    }
}
