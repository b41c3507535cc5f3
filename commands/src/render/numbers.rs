//! Numbers as the JDK prints them: `Double.toString` / `Float.toString`
//! (the shortest decimal that rounds to the value, plain for
//! `1e-3 <= |x| < 1e7` with at least one fractional digit, else
//! `d.dddE±n`), `BigInteger.toString` and `BigDecimal.toString` (plain when
//! `scale >= 0` and the adjusted exponent `>= -6`, else `d.dddE+n` / `E-n`).

use std::fmt::{self, Write as _};

#[cfg(test)]
use super::append::string;
use super::append::{push_ascii, StackStr};

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

#[cfg(test)]
/// Java `Double.toString(double)`.
pub fn java_double_to_string(x: f64) -> String {
    string(|s| double_into(s, x))
}

#[cfg(test)]
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
/// integer (`new BigInteger(byte[])`); empty input is zero. Up to 128 bits
/// on the stack, else [`sstkit_format::value::varint_magnitude`].
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
    let (neg, s) = sstkit_format::value::varint_magnitude(b);
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

#[cfg(test)]
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

#[cfg(test)]
/// Java `BigDecimal.toString()` for `unscaled × 10^-scale`.
pub fn big_decimal_to_string(unscaled: &[u8], scale: i32) -> String {
    string(|s| decimal_into(s, scale, unscaled))
}
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
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
}
