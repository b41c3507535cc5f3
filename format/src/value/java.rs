//! Cassandra's text forms of values, reimplemented from the JDK and Cassandra
//! 5.0 sources. The one implementation behind `sstkit dump-data` (straight
//! from the serialized bytes, [`render`]) and [`Value`](super::Value)'s
//! `to_json_string` / `to_plain_string` / `to_cql_literal` (from a decoded
//! tree): both walk the value through the same (crate-private) `Source` /
//! `write` code.
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
//!   [`parse_cql_literal`](super::parse_cql_literal) reads back:
//!   `'2023-11-14 22:13:20.000000+0000'` timestamps, compressed IPv6, `0s`
//!   for a zero duration, counters as their total, invalid text as `0x…`.
//!
//! A zero-length value of a non-string type is "empty" (`""`, nothing, `''`).
//! Values that do not decode (wrong length, truncated collection) fall back
//! to hex (`0x…` in JSON/CQL form), never an error: a dump must go on.
//!
//! The leaf formatters append to a `String` (`*_into`, allocation-free) and
//! reproduce the JDK (17, which the reference tools run on):
//!
//! * `Double.toString` / `Float.toString`: the shortest decimal that rounds to
//!   the value (Rust's shortest formatting gives the same digits), plain for
//!   `1e-3 <= |x| < 1e7` with at least one fractional digit (`100.0`), else
//!   `d.dddE±n` (`1.0E7`, `1.0E-4`).
//! * `BigInteger.toString`, `BigDecimal.toString` (plain when `scale >= 0`
//!   and the adjusted exponent `>= -6`, else `d.dddE+n` / `E-n`).
//! * `java.time`: timestamps (`yyyy` = year-of-era: years `<= 0` print as
//!   `1 - year`, above 9999 with `+`), `ISO_LOCAL_DATE`, `Instant.toString`,
//!   Cassandra's `TimeSerializer`, `Duration.toString`,
//!   `InetAddress.getHostAddress`, `UUID.toString`.

use std::fmt::{self, Write as _};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::types::{quote_ident, CqlType, Native};

// ------------------------------------------------------------- stack text

/// A short string built on the stack (float digits, small integers).
struct StackStr<const N: usize> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> StackStr<N> {
    fn new() -> Self {
        StackStr {
            buf: [0; N],
            len: 0,
        }
    }

    fn as_str(&self) -> &str {
        // Only whole `&str`s and ASCII are ever copied in.
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or_default()
    }

    /// The bytes written so far.
    fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// Append ASCII bytes (dropped when full; callers size `N` for the
    /// longest text they build).
    fn push_bytes(&mut self, b: &[u8]) {
        let end = self.len + b.len();
        if let Some(dst) = self.buf.get_mut(self.len..end) {
            dst.copy_from_slice(b);
            self.len = end;
        }
    }
}

impl<const N: usize> fmt::Write for StackStr<N> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        let dst = self.buf.get_mut(self.len..end).ok_or(fmt::Error)?;
        dst.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

// ------------------------------------------------- fast text primitives
//
// `sstkit dump-data` spends most of its time here (gigabytes of JSON for a
// few hundred MB of Data.db), so the leaf formatters avoid `core::fmt`
// (`write!` goes through a `dyn Write` and pads every integer): integers go
// through `itoa`, fixed-width fields are laid out in small stack arrays.

/// Append ASCII bytes (built by the formatters below) to `out`. Non-ASCII
/// input is a caller bug and is dropped.
#[inline]
fn push_ascii(out: &mut String, b: &[u8]) {
    // `str::from_utf8` costs more than building these few digits; the ASCII
    // check is a couple of word compares.
    if b.is_ascii() {
        // SAFETY: ASCII bytes are valid UTF-8 on their own, so appending them
        // keeps the `String` valid UTF-8.
        unsafe { out.as_mut_vec() }.extend_from_slice(b);
    }
}

pub use super::append::push_i64;

/// Append an ASCII array built by the formatters below in one fixed-size
/// copy ([`super::append::push_fixed`]).
#[inline(always)]
fn push_array<const N: usize>(out: &mut String, b: &[u8; N]) {
    super::append::push_fixed(out, b, N);
}

/// Write `v` as exactly `N` zero-padded decimal digits into `b` (`v` must
/// fit; higher digits are dropped).
#[inline]
fn digits<const N: usize>(b: &mut [u8], mut v: u64) {
    for d in b[..N].iter_mut().rev() {
        *d = b'0' + (v % 10) as u8;
        v /= 10;
    }
}

/// Append `v` zero-padded to `N` digits (more digits when it does not fit).
#[inline]
fn push_padded<const N: usize>(out: &mut String, v: u64) {
    let mut b = [0u8; N];
    if v < 10u64.pow(N as u32) {
        digits::<N>(&mut b, v);
        push_array(out, &b);
    } else {
        out.push_str(itoa::Buffer::new().format(v));
    }
}

/// Run an `_into` formatter into a new `String`.
fn string(f: impl FnOnce(&mut String)) -> String {
    let mut s = String::new();
    f(&mut s);
    s
}

// ---------------------------------------------------------------- floats

/// Java `Double.toString(double)`, appended to `out`.
pub fn double_into(out: &mut String, x: f64) {
    let bits = x.to_bits();
    let exp_field = ((bits >> 52) & 0x7ff) as i32;
    if exp_field != 0 && exp_field != 0x7ff {
        let fract = (bits & ((1 << 52) - 1)) | (1 << 52);
        if java_integer_into(out, x < 0.0, fract, exp_field - 1023, 53) {
            return;
        }
        let mut buf = zmij::Buffer::new();
        let text = buf.format_finite(x);
        if plain_as_java(x.abs(), text) {
            push_ascii(out, text.as_bytes());
            return;
        }
        if fast_fp_into(out, text) {
            return;
        }
    }
    let class = [x.is_nan(), x.is_infinite(), x == 0.0, x.is_sign_negative()];
    fp_into(out, x, class)
}

/// Whether `text`, zmij's shortest form of a double of magnitude `abs` (not
/// an integer), is already what `Double.toString` prints: Java uses plain
/// notation for `10^-3 <= abs < 10^7`, and when zmij did too (no exponent)
/// the digits and their layout agree, except when the shortest form has a
/// single significant digit (`0.005`; see [`fast_fp_into`]). Checked against
/// the layout of [`fast_fp_into`] by `tests::plain_doubles_as_laid_out`.
#[inline]
fn plain_as_java(abs: f64, text: &str) -> bool {
    if !(1e-3..1e7).contains(&abs) {
        return false;
    }
    let b = text.as_bytes();
    if b.contains(&b'e') {
        return false;
    }
    // Below 1: `0.` then zeros then the significant digits.
    let sig = match b.strip_prefix(b"-").unwrap_or(b).strip_prefix(b"0.") {
        Some(frac) => frac.iter().skip_while(|&&c| c == b'0').count(),
        None => 2, // an integer part and a fraction: two digits at least
    };
    sig >= 2
}

/// Java `Float.toString(float)`, appended to `out`.
pub fn float_into(out: &mut String, x: f32) {
    let bits = x.to_bits();
    let exp_field = ((bits >> 23) & 0xff) as i32;
    if exp_field != 0 && exp_field != 0xff {
        let fract = u64::from((bits & 0x7f_ffff) | 0x80_0000) << 29;
        if java_integer_into(out, x < 0.0, fract, exp_field - 127, 24)
            || fast_fp_into(out, zmij::Buffer::new().format_finite(x))
        {
            return;
        }
    }
    let class = [x.is_nan(), x.is_infinite(), x == 0.0, x.is_sign_negative()];
    fp_into(out, x, class)
}

/// Java's "easy case" of `FloatingDecimal.BinaryToASCIIBuffer.dtoa`
/// (JDK 8..18, what Cassandra 4/5 run on): a value that is an integer below
/// 2^63 is printed from its exact `long` value, with only
/// `insignificantDigitsForPow2` low digits rounded away, **not** as the
/// shortest decimal: `(double) 44686722812153832L` prints
/// `4.4686722812153832E16` (shortest: `4.468672281215383E16`), the float
/// `11871847400f` prints `1.18718474E10`. `fract` is the significand with
/// its hidden bit at bit 52, `bin_exp` the unbiased exponent,
/// `significant_bits` 53 (double) or 24 (float). False (nothing written)
/// when the value is not such an integer.
fn java_integer_into(
    out: &mut String,
    negative: bool,
    fract: u64,
    bin_exp: i32,
    significant_bits: i32,
) -> bool {
    /// `FloatingDecimal.insignificantDigitsNumber`.
    const INSIGNIFICANT: [u32; 64] = [
        0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 8, 8, 8,
        9, 9, 9, 9, 10, 10, 10, 11, 11, 11, 12, 12, 12, 12, 13, 13, 13, 14, 14, 14, 15, 15, 15, 15,
        16, 16, 16, 17, 17, 17, 18, 18, 18, 19,
    ];
    let fract_bits = 53 - fract.trailing_zeros() as i32;
    // An integer (no significant bit right of the point), binExp <= 62.
    if !(0..=62).contains(&bin_exp) || fract_bits > bin_exp + 1 {
        return false;
    }
    let mut value = if bin_exp >= 52 {
        fract << (bin_exp - 52)
    } else {
        fract >> (52 - bin_exp)
    };
    let p2 = bin_exp - significant_bits - 1;
    let insignificant = if bin_exp > significant_bits && p2 > 1 {
        INSIGNIFICANT.get(p2 as usize).copied().unwrap_or(0)
    } else {
        0
    };
    if insignificant > 0 {
        let pow10 = 10u64.pow(insignificant);
        let residue = value % pow10;
        value /= pow10;
        if residue >= pow10 / 2 {
            value += 1;
        }
    }
    let mut itoa_buf = itoa::Buffer::new();
    let text = itoa_buf.format(value).as_bytes();
    let mut e = ExpParts {
        negative,
        ..ExpParts::default()
    };
    let n = text.len().min(e.digits.len());
    e.digits[..n].copy_from_slice(&text[..n]);
    e.n = n;
    e.exp = n as i32 - 1 + insignificant as i32;
    e.layout_into(out);
    true
}

/// The common case of [`double_into`] and [`float_into`]: `text` is the
/// shortest round-trip decimal of a finite non-zero value from `zmij` (the
/// same digits as Rust's `{:e}`, ~5x faster than `core::fmt`), in whatever
/// notation it chose (`123.45`, `1e-7`, `1.5e+20`); its digits and exponent
/// are taken apart and laid out as Java does. False (nothing written) when
/// the shortest form has one digit (Java then prints the closest two-digit
/// decimal, see [`fp_into`]) or the text is not understood.
fn fast_fp_into(out: &mut String, text: &str) -> bool {
    let mut e = ExpParts::default();
    let b = text.as_bytes();
    let (mant, exp_part) = match b.iter().position(|&c| c == b'e' || c == b'E') {
        Some(i) => (&b[..i], Some(&b[i + 1..])),
        None => (b, None),
    };
    let mant = match mant.split_first() {
        Some((b'-', rest)) => {
            e.negative = true;
            rest
        }
        _ => mant,
    };
    // Digits before the point (`int_len`), leading zeros dropped.
    let mut int_len: i32 = 0;
    let mut seen_point = false;
    for &c in mant {
        match c {
            b'.' => seen_point = true,
            b'0'..=b'9' => {
                if e.n == 0 && c == b'0' {
                    if seen_point {
                        int_len -= 1;
                    }
                    continue;
                }
                let Some(d) = e.digits.get_mut(e.n) else {
                    return false;
                };
                *d = c;
                e.n += 1;
                if !seen_point {
                    int_len += 1;
                }
            }
            _ => return false,
        }
    }
    let mut exp10: i32 = 0;
    if let Some(x) = exp_part {
        let (neg, digits) = match x.split_first() {
            Some((b'-', r)) => (true, r),
            Some((b'+', r)) => (false, r),
            _ => (false, x),
        };
        if digits.is_empty() || digits.len() > 4 {
            return false;
        }
        for &c in digits {
            if !c.is_ascii_digit() {
                return false;
            }
            exp10 = exp10 * 10 + i32::from(c - b'0');
        }
        if neg {
            exp10 = -exp10;
        }
    }
    while e.n > 1 && e.digits[e.n - 1] == b'0' {
        e.n -= 1;
    }
    if e.n < 2 {
        return false;
    }
    let exp = int_len - 1 + exp10;
    e.exp_negative = exp < 0;
    e.exp = exp.abs();
    e.layout_into(out);
    true
}

/// `Double`/`Float.toString` of `x`, classified as `[nan, infinite, zero,
/// negative]`.
fn fp_into(out: &mut String, x: impl fmt::LowerExp, class: [bool; 4]) {
    out.push_str(match class {
        [true, ..] => "NaN",
        [_, true, _, false] => "Infinity",
        [_, true, _, true] => "-Infinity",
        [_, _, true, false] => "0.0",
        [_, _, true, true] => "-0.0",
        _ => {
            let mut e = ExpParts::default();
            let _ = write!(e, "{x:e}");
            if e.n == 1 {
                // Java picks, when the shortest decimal has one digit, the
                // two-digit decimal closest to the value (`Double.MIN_VALUE`
                // is `4.9E-324`, not `5.0E-324`); Rust's `{:.1e}` rounds
                // exactly.
                e = ExpParts::default();
                let _ = write!(e, "{x:.1e}");
            }
            return e.layout_into(out);
        }
    })
}

/// Java `Double.toString(double)`.
pub fn java_double_to_string(x: f64) -> String {
    string(|s| double_into(s, x))
}

/// Java `Float.toString(float)`.
pub fn java_float_to_string(x: f32) -> String {
    string(|s| float_into(s, x))
}

/// Rust's `{:e}` form of a finite non-zero value (`-1.2345e-7`), taken
/// apart as it is written: sign, significant digits, exponent. (Collecting
/// the parts directly saves writing the text and parsing it back.)
#[derive(Default)]
struct ExpParts {
    negative: bool,
    /// The significant digits (ASCII), `n` of them; at most 17 for shortest
    /// forms.
    digits: [u8; 24],
    n: usize,
    exp: i32,
    exp_negative: bool,
    in_exp: bool,
}

impl fmt::Write for ExpParts {
    // `core::fmt` writes the form in parts (`-`, `7`, `.`, `0616…`, `e-`,
    // `5`); a run of digits is taken whole.
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let mut b = s.as_bytes();
        while let Some((&c, rest)) = b.split_first() {
            if c.is_ascii_digit() {
                let run = b.iter().take_while(|c| c.is_ascii_digit()).count();
                let (digits, rest) = b.split_at(run);
                if self.in_exp {
                    for &d in digits {
                        self.exp = self.exp.saturating_mul(10) + i32::from(d - b'0');
                    }
                } else if let Some(dst) = self.digits.get_mut(self.n..self.n + run) {
                    dst.copy_from_slice(digits);
                    self.n += run;
                }
                b = rest;
                continue;
            }
            match c {
                b'e' | b'E' => self.in_exp = true,
                b'-' if self.in_exp => self.exp_negative = true,
                b'-' => self.negative = true,
                _ => {}
            }
            b = rest;
        }
        Ok(())
    }
}

impl ExpParts {
    /// Lay the value out the way `Double.toString` does, in one push (built
    /// on the stack: at most 1 + 7 + 1 + 17 bytes).
    fn layout_into(&self, out: &mut String) {
        let exp = if self.exp_negative {
            -self.exp
        } else {
            self.exp
        };
        let mut n = self.n.max(1);
        while n > 1 && self.digits[n - 1] == b'0' {
            n -= 1;
        }
        let d = &self.digits[..n];
        let mut o = StackStr::<48>::new();
        if self.negative {
            o.push_bytes(b"-");
        }
        if (-3..7).contains(&exp) {
            if exp >= 0 {
                let int_len = exp as usize + 1;
                if d.len() > int_len {
                    o.push_bytes(&d[..int_len]);
                    o.push_bytes(b".");
                    o.push_bytes(&d[int_len..]);
                } else {
                    o.push_bytes(d);
                    o.push_bytes(&b"000000"[..int_len - d.len()]);
                    o.push_bytes(b".0");
                }
            } else {
                o.push_bytes(b"0.");
                o.push_bytes(&b"00"[..(-exp - 1) as usize]);
                o.push_bytes(d);
            }
        } else {
            o.push_bytes(&d[..1]);
            o.push_bytes(b".");
            o.push_bytes(if d.len() > 1 { &d[1..] } else { b"0" });
            o.push_bytes(b"E");
            o.push_bytes(itoa::Buffer::new().format(exp).as_bytes());
        }
        push_ascii(out, o.bytes());
    }
}

// ------------------------------------------------------- big numbers

/// Decimal digits of a magnitude: on the stack up to 128 bits.
enum Digits {
    Small(StackStr<40>),
    Big(String),
}

impl Digits {
    fn as_str(&self) -> &str {
        match self {
            Digits::Small(s) => s.as_str(),
            Digits::Big(s) => s,
        }
    }
}

/// Sign and decimal magnitude digits of a big-endian two's complement
/// integer (`new BigInteger(byte[])`); empty input is zero.
fn magnitude(b: &[u8]) -> (bool, Digits) {
    let neg = b.first().is_some_and(|x| x & 0x80 != 0);
    if b.len() <= 16 {
        let mut u: u128 = if neg { u128::MAX } else { 0 };
        for &x in b {
            u = (u << 8) | u128::from(x);
        }
        let mut s = StackStr::new();
        s.push_bytes(
            itoa::Buffer::new()
                .format((u as i128).unsigned_abs())
                .as_bytes(),
        );
        return (neg, Digits::Small(s));
    }
    let mut mag: Vec<u8> = if neg {
        // Two's complement negation: invert, add one.
        let mut m: Vec<u8> = b.iter().map(|x| !x).collect();
        for x in m.iter_mut().rev() {
            let (v, carry) = x.overflowing_add(1);
            *x = v;
            if !carry {
                break;
            }
        }
        m
    } else {
        b.to_vec()
    };
    let first = mag.iter().position(|&x| x != 0).unwrap_or(mag.len());
    mag.drain(..first);
    // Repeated division by 10^9 over base-256 digits.
    let mut limbs: Vec<u32> = Vec::new();
    while !mag.is_empty() {
        let mut rem: u64 = 0;
        let mut q = Vec::with_capacity(mag.len());
        for &x in &mag {
            let cur = (rem << 8) | u64::from(x);
            let d = cur / 1_000_000_000;
            rem = cur % 1_000_000_000;
            // d < 256: rem < 1e9 and cur < 256e9.
            if !(q.is_empty() && d == 0) {
                q.push(d as u8);
            }
        }
        limbs.push(rem as u32);
        mag = q;
    }
    let mut s = String::with_capacity(limbs.len() * 9);
    match limbs.split_last() {
        None => s.push('0'),
        Some((top, rest)) => {
            let _ = write!(s, "{top}");
            for l in rest.iter().rev() {
                let _ = write!(s, "{l:09}");
            }
        }
    }
    (neg, Digits::Big(s))
}

/// Java `BigInteger.toString()` of big-endian two's complement bytes,
/// appended to `out`.
pub fn varint_into(out: &mut String, b: &[u8]) {
    let (neg, d) = magnitude(b);
    if neg {
        out.push('-');
    }
    out.push_str(d.as_str());
}

/// Java `BigInteger.toString()` of big-endian two's complement bytes.
pub fn varint_to_string(b: &[u8]) -> String {
    string(|s| varint_into(s, b))
}

/// Java `BigDecimal.toString()` of `unscaled × 10^-scale` (unscaled as
/// big-endian two's complement bytes), appended to `out`.
pub fn decimal_into(out: &mut String, scale: i32, unscaled: &[u8]) {
    let (neg, d) = magnitude(unscaled);
    let coeff = d.as_str();
    if neg {
        out.push('-');
    }
    let adjusted = -i64::from(scale) + (coeff.len() as i64 - 1);
    if scale >= 0 && adjusted >= -6 {
        // Bounded: adjusted >= -6 means scale <= digits + 5.
        let sc = scale as usize;
        if sc == 0 {
            out.push_str(coeff);
        } else if coeff.len() > sc {
            out.push_str(&coeff[..coeff.len() - sc]);
            out.push('.');
            out.push_str(&coeff[coeff.len() - sc..]);
        } else {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', sc - coeff.len()));
            out.push_str(coeff);
        }
    } else {
        out.push_str(&coeff[..1]);
        if coeff.len() > 1 {
            out.push('.');
            out.push_str(&coeff[1..]);
        }
        if adjusted != 0 {
            out.push('E');
            if adjusted > 0 {
                out.push('+');
            }
            let _ = write!(out, "{adjusted}");
        }
    }
}

/// Java `BigDecimal.toString()` for `unscaled × 10^-scale`.
pub fn big_decimal_to_string(unscaled: &[u8], scale: i32) -> String {
    string(|s| decimal_into(s, scale, unscaled))
}

// ----------------------------------------------------------- calendar

/// Proleptic Gregorian (year, month, day) from days since 1970-01-01
/// (Howard Hinnant's `civil_from_days`).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (`days_from_civil`).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `ISO_LOCAL_DATE` / `Instant` year (`uuuu`): 4 digits zero-padded, `+`
/// above 9999, `-` below 0.
fn iso_year_into(out: &mut String, y: i64) {
    if y > 9999 {
        out.push('+');
    } else if y < 0 {
        out.push('-');
    }
    push_padded::<4>(out, y.unsigned_abs());
}

/// `yyyy` (year-of-era, `SignStyle.EXCEEDS_PAD`): years `<= 0` are `1 - y`.
fn year_of_era_into(out: &mut String, y: i64) {
    let yoe = if y >= 1 { y } else { 1 - y };
    if yoe > 9999 {
        out.push('+');
    }
    push_padded::<4>(out, yoe.unsigned_abs());
}

/// Append `-MM-DD` (`hms`: then `<sep>HH:MM:SS`) built on the stack.
#[inline]
fn push_month_day_time(out: &mut String, m: u32, d: u32, hms: Option<(u8, i64, i64, i64)>) {
    let mut b = *b"-MM-DD HH:MM:SS";
    digits::<2>(&mut b[1..], u64::from(m));
    digits::<2>(&mut b[4..], u64::from(d));
    match hms {
        None => super::append::push_fixed(out, &b, 6),
        Some((sep, h, mi, s)) => {
            b[6] = sep;
            digits::<2>(&mut b[7..], h as u64);
            digits::<2>(&mut b[10..], mi as u64);
            digits::<2>(&mut b[13..], s as u64);
            push_array(out, &b);
        }
    }
}

/// Milliseconds since the epoch → (days, hour, minute, second, milli).
fn split_ms(ms: i64) -> (i64, i64, i64, i64, i64) {
    let rem = ms.rem_euclid(86_400_000);
    (
        ms.div_euclid(86_400_000),
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000,
    )
}

/// Cassandra's timestamp text (`DateTimeFormatter` pattern
/// `yyyy-MM-dd<sep>HH:mm:ss.SSSX` in UTC), appended to `out`: `sep` is `T`
/// for `getString` / `toCQLString`, a space for `toJSONString`.
pub fn timestamp_into(out: &mut String, ms: i64, sep: char) {
    let (days, h, mi, s, milli) = split_ms(ms);
    let (y, mo, d) = civil_from_days(days);
    if (1..=9999).contains(&y) && sep.is_ascii() {
        // The common case in one fixed-size append.
        let mut b = *b"yyyy-MM-dd HH:mm:ss.SSSZ";
        digits::<4>(&mut b[..4], y as u64);
        digits::<2>(&mut b[5..], u64::from(mo));
        digits::<2>(&mut b[8..], u64::from(d));
        b[10] = sep as u8;
        digits::<2>(&mut b[11..], h as u64);
        digits::<2>(&mut b[14..], mi as u64);
        digits::<2>(&mut b[17..], s as u64);
        digits::<3>(&mut b[20..], milli as u64);
        super::append::push_fixed(out, &b, b.len());
        return;
    }
    year_of_era_into(out, y);
    // `sep` is `T` or a space (ASCII).
    push_month_day_time(out, mo, d, Some((sep as u8, h, mi, s)));
    let mut b = *b".000Z";
    digits::<3>(&mut b[1..], milli as u64);
    push_array(out, &b);
}

/// cqlsh's default display, `2023-11-14 22:13:20.000000+0000` (UTC),
/// appended to `out`.
pub fn timestamp_cqlsh_into(out: &mut String, ms: i64) {
    let (days, h, mi, s, milli) = split_ms(ms);
    let (y, mo, d) = civil_from_days(days);
    iso_year_into(out, y);
    push_month_day_time(out, mo, d, Some((b' ', h, mi, s)));
    let mut b = *b".000000+0000";
    digits::<3>(&mut b[1..], milli as u64);
    push_array(out, &b);
}

/// Cassandra `TimestampType.getString`: `2051-07-16T01:33:31.000Z`.
pub fn format_timestamp_iso(ms: i64) -> String {
    string(|s| timestamp_into(s, ms, 'T'))
}

/// Cassandra `TimestampType.toJSONString` (without the quotes):
/// `2239-06-15 15:11:37.276Z`.
pub fn format_timestamp_json(ms: i64) -> String {
    string(|s| timestamp_into(s, ms, ' '))
}

/// cqlsh's default display: `2023-11-14 22:13:20.000000+0000`.
pub fn format_timestamp_cqlsh(ms: i64) -> String {
    string(|s| timestamp_cqlsh_into(s, ms))
}

/// `Instant.ofEpochSecond(secs, nanos).toString()` (`nanos` in `0..1e9`),
/// appended to `out`: the fraction in groups of 3 digits, none when zero.
pub fn instant_into(out: &mut String, secs: i64, nanos: u32) {
    instant_seconds_into(out, secs);
    instant_fraction_into(out, nanos);
}

/// The `yyyy-MM-ddTHH:mm:ss` part of [`instant_into`].
fn instant_seconds_into(out: &mut String, secs: i64) {
    let sod = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    iso_year_into(out, y);
    push_month_day_time(out, m, d, Some((b'T', sod / 3600, sod / 60 % 60, sod % 60)));
}

/// The fraction (groups of 3 digits, none when zero) and `Z` of
/// [`instant_into`].
#[inline]
fn instant_fraction_into(out: &mut String, nanos: u32) {
    // One fixed-size array per case: constant-length copies.
    let n = u64::from(nanos);
    if nanos == 0 {
        out.push('Z');
    } else if nanos.is_multiple_of(1_000_000) {
        let mut b = *b".000Z";
        digits::<3>(&mut b[1..], n / 1_000_000);
        push_array(out, &b);
    } else if nanos.is_multiple_of(1000) {
        let mut b = *b".000000Z";
        digits::<6>(&mut b[1..], n / 1000);
        push_array(out, &b);
    } else {
        let mut b = *b".000000000Z";
        digits::<9>(&mut b[1..], n);
        push_array(out, &b);
    }
}

/// `JsonTransformer.dateString(MICROSECONDS, t)` (sstabledump's timestamps),
/// appended to `out`: seconds truncated toward zero, nanos the `floorMod` of
/// the saturated nano value — reproduced as is, including its off-by-one
/// second for negative non-whole times (see [`format_micros_instant`] for
/// the exact instant).
pub fn date_string_micros_into(out: &mut String, t: i64) {
    let nanos = t.saturating_mul(1000).rem_euclid(1_000_000_000) as u32;
    instant_into(out, t / 1_000_000, nanos)
}

/// `JsonTransformer.dateString(SECONDS, t)` (sstabledump's local deletion
/// and expiration times), appended to `out`.
pub fn date_string_secs_into(out: &mut String, t: i64) {
    let nanos = t.saturating_mul(1_000_000_000).rem_euclid(1_000_000_000) as u32;
    instant_into(out, t, nanos)
}

/// [`date_string_micros_into`] and [`date_string_secs_into`] with the
/// `yyyy-MM-ddTHH:mm:ss` part of the last two seconds written kept for the
/// next calls: the timestamps of neighbouring rows mostly fall in the same
/// second, as do the deletion times of a bulk delete (two entries: rows
/// alternate write timestamps and deletion times), and laying out the
/// calendar date is most of the cost.
#[derive(Debug, Clone, Default)]
pub struct DateStrings {
    /// Seconds and their text; `[0]` is the most recent. Only 4-digit
    /// years are kept: their text has a fixed length (a constant-size copy).
    last: [Option<(i64, [u8; 19])>; 2],
}

impl DateStrings {
    /// [`date_string_micros_into`].
    pub fn micros_into(&mut self, out: &mut String, t: i64) {
        let nanos = t.saturating_mul(1000).rem_euclid(1_000_000_000) as u32;
        self.instant_into(out, t / 1_000_000, nanos)
    }

    /// [`date_string_secs_into`].
    pub fn secs_into(&mut self, out: &mut String, t: i64) {
        let nanos = t.saturating_mul(1_000_000_000).rem_euclid(1_000_000_000) as u32;
        self.instant_into(out, t, nanos)
    }

    fn instant_into(&mut self, out: &mut String, secs: i64, nanos: u32) {
        match &self.last {
            [Some((s, text)), _] | [_, Some((s, text))] if *s == secs => push_array(out, text),
            _ => {
                let start = out.len();
                instant_seconds_into(out, secs);
                if let Ok(text) = <[u8; 19]>::try_from(&out.as_bytes()[start..]) {
                    self.last[1] = self.last[0].take();
                    self.last[0] = Some((secs, text));
                }
            }
        }
        instant_fraction_into(out, nanos);
    }
}

/// A microsecond timestamp as the exact `Instant.toString`:
/// `2023-11-14T22:13:20.060757Z`.
pub fn format_micros_instant(us: i64) -> String {
    let nanos = (us.rem_euclid(1_000_000) * 1000) as u32;
    string(|s| instant_into(s, us.div_euclid(1_000_000), nanos))
}

/// Seconds since the epoch as `Instant.toString`: `2026-11-22T15:12:55Z`.
pub fn format_seconds_instant(secs: i64) -> String {
    string(|s| instant_into(s, secs, 0))
}

/// `LocalDate.ofEpochDay(days).toString()` (`ISO_LOCAL_DATE`), appended to
/// `out`.
pub fn local_date_into(out: &mut String, days: i64) {
    let (y, m, d) = civil_from_days(days);
    iso_year_into(out, y);
    push_month_day_time(out, m, d, None);
}

/// Cassandra `SimpleDateType` days (epoch at 2^31) as `ISO_LOCAL_DATE`,
/// appended to `out`.
pub fn date_into(out: &mut String, days: u32) {
    local_date_into(out, i64::from(days) - (1i64 << 31))
}

/// Cassandra `SimpleDateType` days (epoch at 2^31) as `ISO_LOCAL_DATE`.
pub fn format_date(days: u32) -> String {
    string(|s| date_into(s, days))
}

/// Cassandra `TimeSerializer.toString`: nanoseconds of the day as
/// `HH:mm:ss.nnnnnnnnn`, appended to `out`. Values outside one day cannot
/// be written through CQL (Cassandra's tools fail an assertion on them) and
/// are printed as the raw number.
pub fn time_into(out: &mut String, nanos: i64) {
    if (0..86_400_000_000_000).contains(&nanos) {
        let s = (nanos / 1_000_000_000) as u64;
        let mut b = *b"HH:MM:SS.000000000";
        digits::<2>(&mut b, s / 3600);
        digits::<2>(&mut b[3..], s / 60 % 60);
        digits::<2>(&mut b[6..], s % 60);
        digits::<9>(&mut b[9..], (nanos % 1_000_000_000) as u64);
        push_array(out, &b);
    } else {
        push_i64(out, nanos);
    }
}

/// Cassandra `TimeSerializer.toString` (see [`time_into`]).
pub fn format_time(nanos: i64) -> String {
    string(|s| time_into(s, nanos))
}

/// Cassandra `Duration.toString`, e.g. `1y2mo3d4h5m6s7ms8us9ns` (zero is
/// empty), appended to `out`.
pub fn duration_into(out: &mut String, months: i64, days: i64, nanos: i64) {
    fn unit(out: &mut String, dividend: u64, divisor: u64, unit: &str) -> u64 {
        if dividend == 0 || dividend < divisor {
            return dividend;
        }
        out.push_str(itoa::Buffer::new().format(dividend / divisor));
        out.push_str(unit);
        dividend % divisor
    }
    if months < 0 || days < 0 || nanos < 0 {
        out.push('-');
    }
    let r = unit(out, months.unsigned_abs(), 12, "y");
    unit(out, r, 1, "mo");
    unit(out, days.unsigned_abs(), 1, "d");
    if nanos != 0 {
        let r = unit(out, nanos.unsigned_abs(), 3_600_000_000_000, "h");
        let r = unit(out, r, 60_000_000_000, "m");
        let r = unit(out, r, 1_000_000_000, "s");
        let r = unit(out, r, 1_000_000, "ms");
        let r = unit(out, r, 1000, "us");
        unit(out, r, 1, "ns");
    }
}

/// Cassandra `Duration.toString` (see [`duration_into`]).
pub fn format_duration(months: i32, days: i32, nanos: i64) -> String {
    string(|s| duration_into(s, i64::from(months), i64::from(days), nanos))
}

// ------------------------------------------------- addresses, ids, hex

/// Java `InetAddress.getHostAddress()`, appended to `out`: dotted IPv4; IPv6
/// as eight lower-case hex groups without zero compression
/// (`fe80:0:0:0:0:0:0:32a4`). An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`)
/// is an `Inet4Address` in Java and prints dotted.
pub fn inet_into(out: &mut String, ip: &IpAddr) {
    let v4 = match ip {
        IpAddr::V4(v4) => *v4,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4,
            None => {
                const D: &[u8; 16] = b"0123456789abcdef";
                let mut o = StackStr::<40>::new();
                for (i, g) in v6.segments().iter().enumerate() {
                    if i > 0 {
                        o.push_bytes(b":");
                    }
                    // Lower-case hex without leading zeros (`Integer.toHexString`).
                    let mut h = [0u8; 4];
                    digits_hex(&mut h, *g, D);
                    let lead = h[..3].iter().take_while(|&&c| c == b'0').count();
                    o.push_bytes(&h[lead..]);
                }
                out.push_str(o.as_str());
                return;
            }
        },
    };
    for (i, x) in v4.octets().iter().enumerate() {
        if i > 0 {
            out.push('.');
        }
        out.push_str(itoa::Buffer::new().format(*x));
    }
}

/// The 4 hex digits of `v`.
fn digits_hex(b: &mut [u8; 4], v: u16, d: &[u8; 16]) {
    for (i, x) in b.iter_mut().enumerate() {
        *x = d[usize::from((v >> (12 - 4 * i)) & 15)];
    }
}

/// Java `InetAddress.getHostAddress()` (see [`inet_into`]).
pub fn format_inet_java(ip: &IpAddr) -> String {
    string(|s| inet_into(s, ip))
}

/// `UUID.toString()` (`8-4-4-4-12` lower-case hex), appended to `out`.
pub fn uuid_into(out: &mut String, u: &[u8; 16]) {
    // Where each byte's two digits go in `8-4-4-4-12`.
    const AT: [usize; 16] = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];
    let mut b = [b'-'; 36];
    for (x, &o) in u.iter().zip(&AT) {
        b[o..o + 2].copy_from_slice(&HEX_PAIRS[usize::from(*x)]);
    }
    push_array(out, &b);
}

const HEX_LOWER: &[u8; 16] = b"0123456789abcdef";

/// Lower-case hex without prefix, appended to `out` (built in stack blocks
/// of 64 input bytes: one `push_str` per block, not one per digit).
pub fn hex_into(out: &mut String, b: &[u8]) {
    out.reserve(b.len() * 2);
    let mut buf = [0u8; 64];
    for chunk in b.chunks(32) {
        for (x, o) in chunk.iter().zip(buf.chunks_exact_mut(2)) {
            o.copy_from_slice(&HEX_PAIRS[usize::from(*x)]);
        }
        super::append::push_fixed(out, &buf, chunk.len() * 2);
    }
}

/// The two lower-case hex digits of every byte.
static HEX_PAIRS: [[u8; 2]; 256] = {
    let mut t = [[0u8; 2]; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = [HEX_LOWER[i >> 4], HEX_LOWER[i & 15]];
        i += 1;
    }
    t
};

/// Lower-case hex without prefix.
pub fn hex(b: &[u8]) -> String {
    string(|s| hex_into(s, b))
}

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
/// it (what [`render`] does).
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
    super::append::push_str_short(out, run);
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
/// `i16 header count`, `header count × i16`, then shards of
/// `16-byte counter id, i64 clock, i64 count`.
pub fn counter_total(b: &[u8]) -> Option<i64> {
    let h = i16::from_be_bytes(b.get(..2)?.try_into().ok()?);
    let shards = b.get(2 + 2 * usize::from(h.unsigned_abs())..)?;
    if shards.len() % 32 != 0 {
        return None;
    }
    let mut total: i64 = 0;
    for s in shards.chunks_exact(32) {
        total = total.wrapping_add(i64::from_be_bytes(s[24..32].try_into().ok()?));
    }
    Some(total)
}

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

/// What the renderer sees of a value: a decoded scalar, or the children of
/// a collection / tuple / UDT / composite.
pub(crate) enum Node<'a, S> {
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

/// A value the renderer can walk: serialized bytes with their type
/// ([`render`]) or a decoded [`Value`](super::Value).
pub(crate) trait Source<'a>: Copy {
    /// The value's node.
    fn node(self) -> Node<'a, Self>;
    /// True for a null.
    fn is_null(self) -> bool;
    /// The serialized value as bare hex (collections' `getString`, and the
    /// fallback for values that do not decode).
    fn hex_into(self, out: &mut String);
    /// Write the value when a shortcut applies (see [`native_fast`]);
    /// `false` to take the general path.
    #[inline]
    fn write_fast(self, _form: Form, _out: &mut String) -> bool {
        false
    }
}

/// Append the `form` text of value `b` of type `ty` to `out`, straight from
/// the bytes (no [`Value`](super::Value) tree).
#[inline]
pub fn render(ty: &CqlType, b: &[u8], form: Form, out: &mut String) {
    if form == Form::Json {
        let t = unwrap_frozen(ty);
        if let CqlType::Native(n @ (Native::Text | Native::Ascii)) = t {
            // Validate and escape in one pass (what `write` does in two).
            out.push('"');
            json_escape_text_into(out, b, *n == Native::Ascii);
            out.push('"');
            return;
        }
    }
    write(Raw { ty, b: Some(b) }, form, out)
}

/// Append the `form` text of value `b` of type `ty` to `out` JSON-escaped
/// (the inside of a JSON string, [`json_escape_into`]): what `render` into
/// a temporary and an escape would give, without the temporary in the
/// common cases. Text is escaped straight from its bytes; other native types
/// never produce a character to escape outside [`Form::Json`] and are
/// rendered in place; the rest goes through `scratch` (a reusable buffer).
pub fn render_json_escaped(
    ty: &CqlType,
    b: &[u8],
    form: Form,
    out: &mut String,
    scratch: &mut String,
) {
    let t = unwrap_frozen(ty);
    if form != Form::Json {
        match t {
            CqlType::Native(n @ (Native::Text | Native::Ascii)) if form == Form::Str => {
                return json_escape_text_into(out, b, *n == Native::Ascii);
            }
            CqlType::Native(n) if !matches!(n, Native::Text | Native::Ascii) => {
                if !native_fast(*n, b, form, out) {
                    write(Raw { ty: t, b: Some(b) }, form, out);
                }
                return;
            }
            _ => {}
        }
    }
    scratch.clear();
    render(t, b, form, scratch);
    json_escape_into(out, scratch);
}

/// How [`render_json_escaped`] treats values of one type in one form,
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
        let t = unwrap_frozen(ty);
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

    /// [`render_json_escaped`] of a value of the type this was made for.
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
            JsonStr::Plain => {
                let t = unwrap_frozen(ty);
                let fast = match t {
                    CqlType::Native(n) => native_fast(*n, b, form, out),
                    _ => false,
                };
                if !fast {
                    write(Raw { ty: t, b: Some(b) }, form, out);
                }
            }
            JsonStr::Escaped => render_json_escaped(ty, b, form, out, scratch),
        }
    }
}

/// `ty` without `Reversed` / `Frozen` wrappers.
#[inline]
fn unwrap_frozen(ty: &CqlType) -> &CqlType {
    let mut t = ty;
    while let CqlType::Reversed(i) | CqlType::Frozen(i) = t {
        t = i;
    }
    t
}

/// True when every text [`render`] gives values of `t` in `form` (`Str`
/// or `Cql`) is free of the characters JSON escapes (`"`, `\\`, control
/// characters), whatever the bytes: valid values, empty ones, invalid ones
/// (hex) and null elements alike.
fn plain_text(t: &CqlType, form: Form) -> bool {
    use Native::*;
    match unwrap_frozen(t) {
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

/// Serialized bytes of a type; `None` is a null element.
#[derive(Clone, Copy)]
struct Raw<'a> {
    ty: &'a CqlType,
    b: Option<&'a [u8]>,
}

static BLOB: CqlType = CqlType::Native(Native::Blob);

impl<'a> Source<'a> for Raw<'a> {
    #[inline]
    fn node(self) -> Node<'a, Self> {
        match self.b {
            Some(b) => raw_node(self.ty, b),
            None => Node::Null,
        }
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
        match unwrap_frozen(self.ty) {
            CqlType::Native(n) => native_fast(*n, b, form, out),
            // An empty value is `Empty`, and `getString` of a collection is
            // its hex: the general path.
            _ if b.is_empty() || form == Form::Str => false,
            CqlType::List(e) => seq_fast(e, b, form, ('[', ']'), out),
            CqlType::Set(e) if form == Form::Json => seq_fast(e, b, form, ('[', ']'), out),
            CqlType::Set(e) => seq_fast(e, b, form, ('{', '}'), out),
            _ => false,
        }
    }
}

/// The most common native values (valid fixed-size numbers, booleans,
/// UUIDs, timestamps, blobs) written straight from the bytes, as [`write`]
/// writes their [`Node`] but without building one (the dump hot path);
/// `false`, writing nothing, for everything else.
#[inline]
fn native_fast(n: Native, b: &[u8], form: Form, out: &mut String) -> bool {
    use Native::*;
    match (n, b.len()) {
        (Int, 4) => push_i64(out, i32::from_be_bytes([b[0], b[1], b[2], b[3]]).into()),
        (Bigint, 8) => push_i64(out, i64::from_be_bytes(be::<8>(b).unwrap_or_default())),
        (Smallint, 2) => push_i64(out, i16::from_be_bytes([b[0], b[1]]).into()),
        (Tinyint, 1) => push_i64(out, i8::from_be_bytes([b[0]]).into()),
        (Boolean, 1) => out.push_str(if b[0] != 0 { "true" } else { "false" }),
        (Double, 8) => {
            let x = f64::from_be_bytes(be::<8>(b).unwrap_or_default());
            if form == Form::Json && !x.is_finite() {
                out.push_str("null");
            } else {
                double_into(out, x);
            }
        }
        (Uuid | Timeuuid | LexicalUuid, 16) => {
            let u: [u8; 16] = be::<16>(b).unwrap_or_default();
            wrap(form == Form::Json, '"', out, |o| uuid_into(o, &u));
        }
        (Timestamp | LegacyDate, 8) if matches!(form, Form::Json | Form::Str) => {
            let ms = i64::from_be_bytes(be::<8>(b).unwrap_or_default());
            if form == Form::Json {
                wrap(true, '"', out, |o| timestamp_into(o, ms, ' '));
            } else {
                timestamp_into(out, ms, 'T');
            }
        }
        (Blob, _) => hex_form(form, out, |o| hex_into(o, b)),
        _ => return false,
    }
    true
}

#[inline]
fn raw_node<'a>(ty: &'a CqlType, b: &'a [u8]) -> Node<'a, Raw<'a>> {
    use CqlType as T;
    let raw = |ty, b| Raw { ty, b };
    match ty {
        T::Reversed(t) | T::Frozen(t) => return raw_node(t, b),
        T::Native(Native::Ascii | Native::Text | Native::Blob)
        | T::Custom(_)
        | T::DynamicComposite(_)
        | T::ColumnToCollection(_) => {}
        _ if b.is_empty() => return Node::Empty,
        _ => {}
    }
    let node = match ty {
        T::Native(n) => native_node(*n, b),
        T::List(t) => collection(b, &[t]).map(Node::List),
        T::Set(t) => collection(b, &[t]).map(Node::Set),
        T::Map(k, v) => collection(b, &[k, v]).map(Node::Map),
        T::Vector(t, n) => vector(t, *n, b).map(Node::Vector),
        T::Tuple(ts) => {
            let (fields, present) = tuple_fields(ts.iter(), b);
            Some(Node::Tuple { fields, present })
        }
        T::Udt { fields: defs, .. } => {
            let (fields, present) = tuple_fields(defs.iter().map(|d| &d.1), b);
            let fields = defs.iter().map(|d| d.0.as_str()).zip(fields).collect();
            Some(Node::Udt { fields, present })
        }
        T::Composite(ts) => {
            let mut rest = b.strip_prefix(&[0xff, 0xff]).unwrap_or(b);
            let mut parts = Vec::new();
            // `u16 length, bytes, end-of-component byte` per component,
            // up to the first non-zero end-of-component.
            while let Some(len) = rest.get(..2) {
                let len = usize::from(u16::from_be_bytes([len[0], len[1]]));
                let (Some(v), Some(&eoc)) = (rest.get(2..2 + len), rest.get(2 + len)) else {
                    break;
                };
                parts.push((raw(ts.get(parts.len()).unwrap_or(&BLOB), Some(v)), eoc));
                rest = &rest[3 + len..];
                if eoc != 0 {
                    break;
                }
            }
            Some(Node::Composite(parts))
        }
        T::Reversed(_)
        | T::Frozen(_)
        | T::Custom(_)
        | T::DynamicComposite(_)
        | T::ColumnToCollection(_) => Some(Node::Blob(b)),
    };
    // Not `unwrap_or`: that builds (and drops) an `Invalid` for every value.
    let Some(node) = node else {
        return Node::Invalid;
    };
    node
}

fn be<const N: usize>(b: &[u8]) -> Option<[u8; N]> {
    b.try_into().ok()
}

/// A native value's node; `None` when the bytes do not decode.
#[inline]
fn native_node<S>(n: Native, b: &[u8]) -> Option<Node<'_, S>> {
    use Native::*;
    match n {
        Ascii if b.is_ascii() => std::str::from_utf8(b).ok().map(Node::Text),
        Ascii => Some(Node::BadText(b)),
        Text => Some(match std::str::from_utf8(b) {
            Ok(s) => Node::Text(s),
            Err(_) => Node::BadText(b),
        }),
        Blob => Some(Node::Blob(b)),
        Empty => Some(Node::Empty),
        Bigint => be::<8>(b).map(|x| Node::Int(i64::from_be_bytes(x))),
        Int => be::<4>(b).map(|x| Node::Int(i32::from_be_bytes(x).into())),
        Smallint => be::<2>(b).map(|x| Node::Int(i16::from_be_bytes(x).into())),
        Tinyint => be::<1>(b).map(|x| Node::Int(i8::from_be_bytes(x).into())),
        Counter => Some(Node::Counter {
            first: b.get(..8).and_then(be::<8>).map(i64::from_be_bytes),
            total: counter_total(b),
        }),
        Boolean => be::<1>(b).map(|x| Node::Boolean(x[0] != 0)),
        Float => be::<4>(b).map(|x| Node::Float(f32::from_be_bytes(x))),
        Double => be::<8>(b).map(|x| Node::Double(f64::from_be_bytes(x))),
        Varint => Some(Node::Varint(b)),
        Decimal => b.split_first_chunk::<4>().map(|(s, u)| Node::Decimal {
            scale: i32::from_be_bytes(*s),
            unscaled: u,
        }),
        Timestamp | LegacyDate => be::<8>(b).map(|x| Node::Timestamp(i64::from_be_bytes(x))),
        Date => be::<4>(b).map(|x| Node::Date(u32::from_be_bytes(x))),
        Time => be::<8>(b).map(|x| Node::Time(i64::from_be_bytes(x))),
        Uuid | Timeuuid | LexicalUuid => b.try_into().ok().map(Node::Uuid),
        Inet => match b.len() {
            4 => be::<4>(b).map(|x| Node::Inet(IpAddr::V4(Ipv4Addr::from(x)))),
            16 => be::<16>(b).map(|x| Node::Inet(IpAddr::V6(Ipv6Addr::from(x)))),
            _ => None,
        },
        Duration => duration(b).map(|(months, days, nanos)| Node::Duration {
            months,
            days,
            nanos,
        }),
    }
}

/// Frozen collection body: `i32 count`, then per element one `i32`-length
/// prefixed value per type in `tys` (negative length = null); elements
/// flattened. `None` when truncated.
fn collection<'a>(b: &'a [u8], tys: &[&'a CqlType]) -> Option<Vec<Raw<'a>>> {
    let n = b
        .first_chunk::<4>()
        .map_or(0, |n| usize::try_from(i32::from_be_bytes(*n)).unwrap_or(0));
    let mut items = Vec::with_capacity(n.min(b.len() / 4) * tys.len());
    walk_collection(b, tys, |r| items.push(r)).then_some(items)
}

/// Call `f` with each element of a frozen collection body ([`collection`])
/// in order; `false` when the body is truncated (`f` has then seen a prefix).
fn walk_collection<'a>(b: &'a [u8], tys: &[&'a CqlType], mut f: impl FnMut(Raw<'a>)) -> bool {
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
            f(Raw { ty, b });
        }
    }
    true
}

/// A list or set written as [`write_nested`] does, without collecting its
/// elements first (frozen lists and sets are common cell values); `false`
/// when the body does not decode (the general path then writes the hex).
fn seq_fast(
    elem: &CqlType,
    b: &[u8],
    form: Form,
    (open, close): (char, char),
    out: &mut String,
) -> bool {
    if !walk_collection(b, &[elem], |_| {}) {
        return false;
    }
    // `int` elements (the commonest) are printed here, without the
    // general dispatch: a 4-byte value is its decimal in every form.
    let ints = matches!(elem.unreversed(), CqlType::Native(Native::Int));
    out.push(open);
    let mut first = true;
    walk_collection(b, &[elem], |r| {
        if !first {
            out.push_str(", ");
        }
        first = false;
        match r.b.and_then(be::<4>) {
            Some(v) if ints => push_i64(out, i32::from_be_bytes(v).into()),
            _ => write(r, form, out),
        }
    });
    out.push(close);
    true
}

/// Tuple/UDT body: `i32`-length-prefixed fields until the bytes run out.
/// Every declared field (absent ones null) and how many were present.
fn tuple_fields<'a>(
    types: impl Iterator<Item = &'a CqlType>,
    b: &'a [u8],
) -> (Vec<Raw<'a>>, usize) {
    let mut rest = b;
    let mut present = 0;
    let fields = types
        .map(|ty| {
            let Some((len, r)) = rest.split_first_chunk::<4>() else {
                return Raw { ty, b: None };
            };
            present += 1;
            rest = r;
            let b = usize::try_from(i32::from_be_bytes(*len)).ok().map(|len| {
                let (v, r) = rest.split_at(len.min(rest.len()));
                rest = r;
                v
            });
            Raw { ty, b }
        })
        .collect();
    (fields, present)
}

/// Unsigned vint (Cassandra `VIntCoding`): leading one bits of the first byte
/// count the extra bytes.
fn uvint(b: &[u8]) -> Option<(u64, usize)> {
    let first = *b.first()?;
    let extra = first.leading_ones() as usize;
    let mut v = if extra >= 8 {
        0
    } else {
        u64::from(first & (0xff >> extra))
    };
    for i in 0..extra {
        v = (v << 8) | u64::from(*b.get(1 + i)?);
    }
    Some((v, 1 + extra))
}

fn svint(b: &[u8]) -> Option<(i64, usize)> {
    let (v, n) = uvint(b)?;
    Some((((v >> 1) as i64) ^ -((v & 1) as i64), n))
}

/// `duration`: three zig-zag vints (months, days, nanoseconds).
fn duration(b: &[u8]) -> Option<(i64, i64, i64)> {
    let (m, k1) = svint(b)?;
    let (d, k2) = svint(&b[k1..])?;
    let (ns, k3) = svint(&b[k1 + k2..])?;
    (k1 + k2 + k3 == b.len()).then_some((m, d, ns))
}

/// `vector<t, n>`: fixed-size elements back to back, or vint-length-prefixed.
fn vector<'a>(t: &'a CqlType, n: usize, b: &'a [u8]) -> Option<Vec<Raw<'a>>> {
    let mut out = Vec::with_capacity(n.min(4096));
    match t.fixed_len() {
        Some(0) => return None,
        Some(l) => {
            if b.len() != l.checked_mul(n)? {
                return None;
            }
            out.extend(b.chunks_exact(l).map(|v| Raw { ty: t, b: Some(v) }));
        }
        None => {
            let mut rest = b;
            for _ in 0..n {
                let (len, k) = uvint(rest)?;
                rest = &rest[k..];
                let len = usize::try_from(len).ok()?;
                out.push(Raw {
                    ty: t,
                    b: Some(rest.get(..len)?),
                });
                rest = &rest[len..];
            }
        }
    }
    Some(out)
}

/// Append the `form` text of `s` to `out`.
pub(crate) fn write<'a, S: Source<'a>>(s: S, form: Form, out: &mut String) {
    use Form::{Cql, Cqlsh, Json, Str};
    if s.write_fast(form, out) {
        return;
    }
    match s.node() {
        Node::Null => out.push_str("null"),
        Node::Empty => out.push_str(match form {
            Json => "\"\"",
            Str => "",
            Cql | Cqlsh => "''",
        }),
        Node::Invalid => hex_form(form, out, |o| s.hex_into(o)),
        Node::Blob(b) => hex_form(form, out, |o| hex_into(o, b)),
        Node::Text(t) => text_into(form, t, out),
        Node::BadText(b) if form == Cqlsh => hex_form(form, out, |o| hex_into(o, b)),
        Node::BadText(b) => text_into(form, &String::from_utf8_lossy(b), out),
        Node::Int(v) => push_i64(out, v),
        Node::Varint(b) => varint_into(out, b),
        Node::Decimal { scale, unscaled } => decimal_into(out, scale, unscaled),
        Node::Float(x) if form == Json && !x.is_finite() => out.push_str("null"),
        Node::Float(x) => float_into(out, x),
        Node::Double(x) if form == Json && !x.is_finite() => out.push_str("null"),
        Node::Double(x) => double_into(out, x),
        Node::Boolean(b) => out.push_str(if b { "true" } else { "false" }),
        Node::Uuid(u) => wrap(form == Json, '"', out, |o| uuid_into(o, u)),
        Node::Timestamp(ms) => match form {
            Json => wrap(true, '"', out, |o| timestamp_into(o, ms, ' ')),
            Str => timestamp_into(out, ms, 'T'),
            Cql => wrap(true, '\'', out, |o| timestamp_into(o, ms, 'T')),
            Cqlsh => wrap(true, '\'', out, |o| timestamp_cqlsh_into(o, ms)),
        },
        Node::Date(d) => wrap_opt(text_quote(form), out, |o| date_into(o, d)),
        Node::Time(t) => wrap_opt(text_quote(form), out, |o| time_into(o, t)),
        Node::Duration {
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
        Node::Inet(ip) if form == Cqlsh => wrap(true, '\'', out, |o| {
            let _ = write!(o, "{ip}");
        }),
        Node::Inet(ip) => wrap_opt(text_quote(form), out, |o| inet_into(o, &ip)),
        Node::Counter { first, total } => match if form == Cqlsh { total } else { first } {
            Some(v) => push_i64(out, v),
            None => hex_form(form, out, |o| s.hex_into(o)),
        },
        node => write_nested(s, node, form, out),
    }
}

/// The container half of [`write`] (kept out of line so the scalar path
/// stays small).
#[inline(never)]
fn write_nested<'a, S: Source<'a>>(s: S, node: Node<'a, S>, form: Form, out: &mut String) {
    use Form::{Cql, Cqlsh, Json, Str};
    match node {
        Node::List(_) | Node::Set(_) | Node::Map(_) | Node::Vector(_) if form == Str => {
            s.hex_into(out)
        }
        Node::List(items) | Node::Vector(items) => seq(form, ('[', ']'), &items, out),
        Node::Set(items) if form == Json => seq(form, ('[', ']'), &items, out),
        Node::Set(items) => seq(form, ('{', '}'), &items, out),
        Node::Map(items) => {
            out.push('{');
            for (i, kv) in items.chunks_exact(2).enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                let start = out.len();
                write(kv[0], form, out);
                if form == Json && !out[start..].starts_with('"') {
                    // JSON object keys are strings: quote non-string keys.
                    let key = out.split_off(start);
                    wrap(true, '"', out, |o| json_escape_into(o, &key));
                }
                out.push_str(": ");
                write(kv[1], form, out);
            }
            out.push('}');
        }
        Node::Tuple { fields, present } => {
            let present = present.min(fields.len());
            match form {
                Str => joined(fields[..present].iter().copied(), out),
                Json => seq(form, ('[', ']'), &fields, out),
                Cql => seq(form, ('(', ')'), &fields[..present], out),
                Cqlsh => seq(form, ('(', ')'), &fields, out),
            }
        }
        Node::Udt { fields, present } => {
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
        Node::Composite(parts) => {
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
fn seq<'a, S: Source<'a>>(form: Form, (open, close): (char, char), items: &[S], out: &mut String) {
    out.push(open);
    for (i, v) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write(*v, form, out);
    }
    out.push(close);
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
    use super::*;

    fn t(s: &str) -> CqlType {
        CqlType::parse(s).unwrap()
    }

    fn r(ty: &str, b: &[u8], form: Form) -> String {
        string(|s| render(&t(ty), b, form, s))
    }

    #[test]
    fn doubles_like_java() {
        let cases: &[(f64, &str)] = &[
            (1.0, "1.0"),
            (100.0, "100.0"),
            (0.001, "0.001"),
            (0.0001, "1.0E-4"),
            (1e7, "1.0E7"),
            (9999999.0, "9999999.0"),
            (1234567.5, "1234567.5"),
            (123456789.0, "1.23456789E8"),
            (-3.3040857331561196e299, "-3.3040857331561196E299"),
            (0.1, "0.1"),
            (0.5, "0.5"),
            (-0.0, "-0.0"),
            (f64::MIN_POSITIVE, "2.2250738585072014E-308"),
            (f64::MAX, "1.7976931348623157E308"),
            (4.9e-324, "4.9E-324"),
            (1e23, "1.0E23"),
            (2e-323, "2.0E-323"),
            (1.5e-3, "0.0015"),
            (f64::NAN, "NaN"),
            (f64::NEG_INFINITY, "-Infinity"),
        ];
        for (x, s) in cases {
            assert_eq!(java_double_to_string(*x), *s, "{x}");
        }
        let cases: &[(f32, &str)] = &[
            (-1.2588742e29, "-1.2588742E29"),
            (0.1, "0.1"),
            (2.0, "2.0"),
            (-9.045085, "-9.045085"),
            (-0.010826139, "-0.010826139"),
            (f32::NAN, "NaN"),
            (f32::NEG_INFINITY, "-Infinity"),
            (3.4028235e38, "3.4028235E38"),
            (1.4e-45, "1.4E-45"),
        ];
        for (x, s) in cases {
            assert_eq!(java_float_to_string(*x), *s, "{x}");
        }
    }

    /// Against the JDK itself (testdata/java_floats.txt, written by JDK
    /// 17.0.15): integers below 2^63 keep their exact digits (Java's "easy
    /// case"), ties round to even. Known gap, not in the file: Java's general
    /// path picks a different last digit for ~1 in 100,000 random doubles
    /// and ~1 in 4,000 random floats, all above 10^19 (measured on 800,000
    /// random values: 3 doubles, 96 floats).
    #[test]
    fn floats_like_the_jdk() {
        let text = include_str!("testdata/java_floats.txt");
        let mut n = 0;
        for l in text.lines().filter(|l| !l.starts_with('#')) {
            let mut it = l.split(' ');
            let (kind, bits, want) = (it.next().unwrap(), it.next().unwrap(), it.next().unwrap());
            let bits = u64::from_str_radix(bits, 16).unwrap();
            let got = match kind {
                "d" => java_double_to_string(f64::from_bits(bits)),
                _ => java_float_to_string(f32::from_bits(bits as u32)),
            };
            assert_eq!(got, want, "{l}");
            n += 1;
        }
        assert_eq!(n, 400);
    }

    /// The plain fast path of [`double_into`] gives what the general
    /// layout ([`fast_fp_into`], else [`fp_into`]) gives, over random
    /// doubles of every magnitude around Java's plain range and short
    /// decimals (`0.005`, `123.25`).
    #[test]
    fn plain_doubles_as_laid_out() {
        let general = |x: f64| {
            let mut s = String::new();
            let text = zmij::Buffer::new().format_finite(x).to_owned();
            if !fast_fp_into(&mut s, &text) {
                s.clear();
                fp_into(&mut s, x, [false, false, x == 0.0, x.is_sign_negative()]);
            }
            s
        };
        let mut seed = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut checked = 0;
        for i in 0..400_000u32 {
            let r = next();
            let x = match i % 4 {
                // Uniform in [10^-4, 10^8) on a log scale.
                0 | 1 => 10f64.powf((r >> 11) as f64 / (1u64 << 53) as f64 * 12.0 - 4.0),
                // Few decimal digits: k / 10^j.
                2 => (r % 100_000) as f64 / 10f64.powi((r >> 40) as i32 % 9),
                // Random bits with an exponent near the range.
                _ => f64::from_bits((r & ((1 << 52) - 1)) | ((1003 + (r >> 58) % 40) << 52)),
            };
            let x = if r >> 63 == 1 { -x } else { x };
            let text = zmij::Buffer::new().format_finite(x).to_owned();
            if x.fract() == 0.0 || !plain_as_java(x.abs(), &text) {
                continue;
            }
            let mut fast = String::new();
            double_into(&mut fast, x);
            assert_eq!(fast, general(x), "{x:e} ({:016x})", x.to_bits());
            checked += 1;
        }
        assert!(checked > 200_000, "{checked}");
    }

    #[test]
    fn varints_and_decimals() {
        assert_eq!(varint_to_string(&[]), "0");
        assert_eq!(varint_to_string(&[0xFF]), "-1");
        assert_eq!(varint_to_string(&[0x80]), "-128");
        assert_eq!(varint_to_string(&[0x00, 0x80]), "128");
        assert_eq!(varint_to_string(&[0x00, 0xff]), "255");
        assert_eq!(
            varint_to_string(&[0x80, 0, 0, 0, 0, 0, 0, 0]),
            "-9223372036854775808"
        );
        assert_eq!(
            varint_to_string(&[0x01, 0, 0, 0, 0, 0, 0, 0, 0]),
            "18446744073709551616"
        );
        assert_eq!(
            varint_to_string(&i128::MIN.to_be_bytes()),
            i128::MIN.to_string()
        );
        // Beyond 128 bits: the long division path.
        let mut big = vec![0x80];
        big.extend_from_slice(&[0; 16]);
        assert_eq!(
            varint_to_string(&big),
            "-43556142965880123323311949751266331066368"
        );
        let mut big = vec![0x7f];
        big.extend_from_slice(&[0xff; 16]);
        assert_eq!(
            varint_to_string(&big),
            "43556142965880123323311949751266331066367"
        );
        let mut big = vec![0xff];
        big.extend_from_slice(&[0xff; 16]);
        assert_eq!(varint_to_string(&big), "-1");
        assert_eq!(varint_to_string(&[0; 20]), "0");
        let v = 1_000_000_000_000_000_000_000i128;
        assert_eq!(varint_to_string(&v.to_be_bytes()), v.to_string());
        assert_eq!(varint_to_string(&(-v).to_be_bytes()), (-v).to_string());
        // BigDecimal.toString examples from the Javadoc.
        let d = |u: i64, s: i32| big_decimal_to_string(&u.to_be_bytes(), s);
        assert_eq!(d(123, 0), "123");
        assert_eq!(d(-123, 0), "-123");
        assert_eq!(d(123, -1), "1.23E+3");
        assert_eq!(d(123, -3), "1.23E+5");
        assert_eq!(d(123, 1), "12.3");
        assert_eq!(d(123, 5), "0.00123");
        assert_eq!(d(123, 10), "1.23E-8");
        assert_eq!(d(-123, 12), "-1.23E-10");
        assert_eq!(d(0, 2), "0.00");
        assert_eq!(d(0, -2), "0E+2");
        assert_eq!(d(1, 7), "1E-7");
        assert_eq!(d(1, 6), "0.000001");
        assert_eq!(d(-747635, 1), "-74763.5");
        assert_eq!(d(5, -3), "5E+3");
        assert_eq!(big_decimal_to_string(&[0xff], 18), "-1E-18");
        assert_eq!(big_decimal_to_string(&[0, 3, 0x0c, 0xd4], 3), "199.892");
    }

    #[test]
    fn dates_and_times() {
        assert_eq!(format_timestamp_iso(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            format_timestamp_json(1_700_000_000_276),
            "2023-11-14 22:13:20.276Z"
        );
        assert_eq!(
            format_timestamp_cqlsh(1_700_000_000_000),
            "2023-11-14 22:13:20.000000+0000"
        );
        assert_eq!(format_timestamp_iso(-1), "1969-12-31T23:59:59.999Z");
        assert_eq!(
            format_timestamp_json(-62_135_596_800_000),
            "0001-01-01 00:00:00.000Z"
        );
        // Year 0 is year-of-era 1 (BCE); year -1 is 2.
        let ms = days_from_civil(0, 1, 1) * 86_400_000;
        assert_eq!(format_timestamp_iso(ms), "0001-01-01T00:00:00.000Z");
        let ms = days_from_civil(12345, 1, 1) * 86_400_000;
        assert_eq!(format_timestamp_iso(ms), "+12345-01-01T00:00:00.000Z");
        assert_eq!(format_date(1 << 31), "1970-01-01");
        assert_eq!(format_date((1 << 31) - 719_162), "0001-01-01");
        assert_eq!(format_date(0), "-5877641-06-23");
        assert_eq!(format_date(u32::MAX), "+5881580-07-11");
        assert_eq!(format_time(83_680_281_338_000), "23:14:40.281338000");
        assert_eq!(format_time(86_400_000_000_000), "86400000000000");
        assert_eq!(format_time(-1), "-1");
        for d in [-800_000i64, -1, 0, 1, 59, 60, 365, 10_000, 2_932_896] {
            let (y, m, dd) = civil_from_days(d);
            assert_eq!(days_from_civil(y, m, dd), d);
        }
    }

    #[test]
    fn instants() {
        let ds = |t| string(|s| date_string_micros_into(s, t));
        assert_eq!(ds(1_700_000_001_698_705), "2023-11-14T22:13:21.698705Z");
        assert_eq!(ds(1_700_000_001_698_000), "2023-11-14T22:13:21.698Z");
        assert_eq!(ds(1_700_000_000_000_000), "2023-11-14T22:13:20Z");
        // dateString truncates the seconds toward zero but floors the nanos.
        assert_eq!(ds(-1), "1970-01-01T00:00:00.999999Z");
        assert_eq!(format_micros_instant(-1), "1969-12-31T23:59:59.999999Z");
        // Saturated nanos (Long.MAX_VALUE % 1e9) beyond year 2262.
        assert_eq!(ds(i64::MAX), "+294247-01-10T04:00:54.854775807Z");
        assert_eq!(
            string(|s| date_string_secs_into(s, 1_795_360_375)),
            "2026-11-22T15:12:55Z"
        );
        assert_eq!(
            format_micros_instant(1_700_000_000_060_757),
            "2023-11-14T22:13:20.060757Z"
        );
        assert_eq!(
            format_micros_instant(1_700_000_000_000_000),
            "2023-11-14T22:13:20Z"
        );
        assert_eq!(
            format_seconds_instant(1_795_360_375),
            "2026-11-22T15:12:55Z"
        );
        assert_eq!(string(|s| local_date_into(s, -719_162)), "0001-01-01");
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
    fn hex_matches_the_standard_library() {
        // Every byte value at every position of 0..=40 bytes (whole words
        // and every remainder length).
        for len in 0..=40usize {
            for at in 0..len.max(1) {
                for c in 0..=255u8 {
                    let mut b: Vec<u8> = (0..len as u8).map(|i| i.wrapping_mul(37)).collect();
                    if let Some(x) = b.get_mut(at) {
                        *x = c;
                    }
                    let want: String = b.iter().map(|x| format!("{x:02x}")).collect();
                    let mut s = String::from("0x");
                    hex_into(&mut s, &b);
                    assert_eq!(s, format!("0x{want}"), "{b:?}");
                }
            }
        }
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

    /// `JsonStr::render` gives what `render_json_escaped` gives, for every
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
                    render_json_escaped(&ty, &b, form, &mut want, &mut scratch);
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
        assert_eq!(counter_total(&c), Some(3));
        assert_eq!(counter_total(&c[..30]), None);
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
