//! Java's text forms of numbers, times and addresses, as Cassandra's tools
//! print them (JDK 17, which the reference `sstabledump` runs on).
//!
//! * [`double`] / [`float`]: `Double.toString` / `Float.toString` layout
//!   (plain between 10^-3 and 10^7, else `d.dddE±n`) over the shortest
//!   round-trip digits.
//! * [`instant`]: `java.time.Instant.toString` (ISO-8601, fraction in groups
//!   of 3 digits, dropped when zero).
//! * [`local_date`], [`civil`]: proleptic Gregorian calendar maths.
//! * [`bigint`], [`bigdecimal`]: `BigInteger.toString`, `BigDecimal.toString`.
//! * [`inet`], [`uuid`], [`duration`], [`time_of_day`].

use std::fmt::Write as _;

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian.
pub fn civil(days: i64) -> (i64, u32, u32) {
    // Howard Hinnant's days_from_civil inverse.
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

/// `LocalDate.toString` year: 4 digits zero-padded, `+` above 9999, `-` below 0.
fn push_year(s: &mut String, y: i64) {
    if y > 9999 {
        let _ = write!(s, "+{y}");
    } else if y < 0 {
        let _ = write!(s, "-{:04}", -y);
    } else {
        let _ = write!(s, "{y:04}");
    }
}

/// `LocalDate.ofEpochDay(days).toString()`.
pub fn local_date(days: i64) -> String {
    let (y, m, d) = civil(days);
    let mut s = String::with_capacity(10);
    push_year(&mut s, y);
    let _ = write!(s, "-{m:02}-{d:02}");
    s
}

/// `Instant.ofEpochSecond(secs, nanos).toString()` (`nanos` in `0..1e9`).
pub fn instant(secs: i64, nanos: u32) -> String {
    let mut s = String::with_capacity(30);
    instant_into(&mut s, secs, nanos);
    s
}

/// [`instant`], appended to `s`.
pub fn instant_into(s: &mut String, secs: i64, nanos: u32) {
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let (y, m, d) = civil(days);
    push_year(s, y);
    let _ = write!(
        s,
        "-{m:02}-{d:02}T{:02}:{:02}:{:02}",
        sod / 3600,
        sod / 60 % 60,
        sod % 60
    );
    if nanos > 0 {
        if nanos % 1_000_000 == 0 {
            let _ = write!(s, ".{:03}", nanos / 1_000_000);
        } else if nanos % 1000 == 0 {
            let _ = write!(s, ".{:06}", nanos / 1000);
        } else {
            let _ = write!(s, ".{nanos:09}");
        }
    }
    s.push('Z');
}

/// `JsonTransformer.dateString(MICROSECONDS, t)`: seconds truncated toward
/// zero, nanos `floorMod` of the saturated nano value (reproduced as is,
/// including its off-by-one second for negative non-whole times).
pub fn instant_micros(t: i64) -> String {
    let mut s = String::with_capacity(30);
    instant_micros_into(&mut s, t);
    s
}

/// [`instant_micros`], appended to `s`.
pub fn instant_micros_into(s: &mut String, t: i64) {
    let secs = t / 1_000_000;
    let nanos = t.saturating_mul(1000).rem_euclid(1_000_000_000) as u32;
    instant_into(s, secs, nanos)
}

/// `JsonTransformer.dateString(SECONDS, t)`.
pub fn instant_secs(t: i64) -> String {
    let mut s = String::with_capacity(24);
    instant_secs_into(&mut s, t);
    s
}

/// [`instant_secs`], appended to `s`.
pub fn instant_secs_into(s: &mut String, t: i64) {
    let nanos = t.saturating_mul(1_000_000_000).rem_euclid(1_000_000_000) as u32;
    instant_into(s, t, nanos)
}

/// Timestamp (ms since epoch) as `yyyy-MM-dd<sep>HH:mm:ss.SSS` + `Z`
/// (`DateTimeFormatter` with pattern `yyyy-MM-dd HH:mm:ss.SSSX` in UTC;
/// `yyyy` is the year of era, `+`-prefixed above 9999).
pub fn timestamp_millis(ms: i64, sep: char) -> String {
    let secs = ms.div_euclid(1000);
    let milli = ms.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let (y, m, d) = civil(days);
    let yoe = if y <= 0 { 1 - y } else { y };
    let mut s = String::with_capacity(26);
    if yoe > 9999 {
        let _ = write!(s, "+{yoe}");
    } else {
        let _ = write!(s, "{yoe:04}");
    }
    let _ = write!(
        s,
        "-{m:02}-{d:02}{sep}{:02}:{:02}:{:02}.{milli:03}Z",
        sod / 3600,
        sod / 60 % 60,
        sod % 60
    );
    s
}

/// `TimeSerializer.toString`: nanoseconds of the day as `HH:mm:ss.nnnnnnnnn`.
pub fn time_of_day(nanos: i64) -> String {
    let n = nanos.rem_euclid(1_000_000_000);
    let secs = nanos.div_euclid(1_000_000_000);
    format!(
        "{:02}:{:02}:{:02}.{n:09}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// Java's `Double.toString`.
pub fn double(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    let e = format!("{x:e}");
    // Java prints at least two significant digits: when the shortest form
    // has one, it takes the two-digit decimal closest to the value
    // (Double.MIN_VALUE is 4.9E-324, not 5.0E-324).
    let e = if one_digit(&e) { format!("{x:.1e}") } else { e };
    java_layout(&e, x == 0.0, x.is_sign_negative())
}

fn one_digit(e: &str) -> bool {
    e.split('e')
        .next()
        .is_some_and(|m| m.bytes().filter(u8::is_ascii_digit).count() == 1)
}

/// Java's `Float.toString`.
pub fn float(x: f32) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    let e = format!("{x:e}");
    let e = if one_digit(&e) { format!("{x:.1e}") } else { e };
    java_layout(&e, x == 0.0, x.is_sign_negative())
}

/// Lay out Rust's shortest `{:e}` digits (`-1.2345e-7`) the way Java does.
fn java_layout(e: &str, zero: bool, neg: bool) -> String {
    if zero {
        return if neg { "-0.0".into() } else { "0.0".into() };
    }
    let (mant, exp) = e.split_once('e').unwrap_or((e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let mant = mant.trim_start_matches('-');
    let mut digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    while digits.len() > 1 && digits.ends_with('0') {
        digits.pop();
    }
    let mut s = String::with_capacity(digits.len() + 8);
    if neg {
        s.push('-');
    }
    if (-3..7).contains(&exp) {
        if exp < 0 {
            s.push_str("0.");
            for _ in 0..(-exp - 1) {
                s.push('0');
            }
            s.push_str(&digits);
        } else {
            let int_len = exp as usize + 1;
            if digits.len() <= int_len {
                s.push_str(&digits);
                for _ in digits.len()..int_len {
                    s.push('0');
                }
                s.push_str(".0");
            } else {
                s.push_str(&digits[..int_len]);
                s.push('.');
                s.push_str(&digits[int_len..]);
            }
        }
    } else {
        s.push_str(&digits[..1]);
        s.push('.');
        if digits.len() > 1 {
            s.push_str(&digits[1..]);
        } else {
            s.push('0');
        }
        let _ = write!(s, "E{exp}");
    }
    s
}

/// Magnitude digits of a big-endian two's-complement integer, and its sign.
fn bigint_parts(b: &[u8]) -> (bool, String) {
    if b.is_empty() {
        return (false, "0".into());
    }
    let neg = b[0] & 0x80 != 0;
    let mut mag: Vec<u8> = b.to_vec();
    if neg {
        // Two's complement negate.
        let mut carry = true;
        for x in mag.iter_mut().rev() {
            *x = !*x;
            if carry {
                let (v, c) = x.overflowing_add(1);
                *x = v;
                carry = c;
            }
        }
    }
    // Repeated division by 10^9 over base-256 digits.
    let mut limbs: Vec<u32> = Vec::new();
    let mut cur: Vec<u8> = mag.into_iter().skip_while(|&x| x == 0).collect();
    while !cur.is_empty() {
        let mut rem: u64 = 0;
        let mut next = Vec::with_capacity(cur.len());
        for &x in &cur {
            let v = (rem << 8) | x as u64;
            let q = v / 1_000_000_000;
            rem = v % 1_000_000_000;
            if !next.is_empty() || q != 0 {
                next.push(q as u8);
            }
        }
        // q fits in a byte because rem < 1e9 and v < 256e9.
        limbs.push(rem as u32);
        cur = next;
    }
    if limbs.is_empty() {
        return (false, "0".into());
    }
    let mut s = String::new();
    let _ = write!(s, "{}", limbs[limbs.len() - 1]);
    for l in limbs.iter().rev().skip(1) {
        let _ = write!(s, "{l:09}");
    }
    (neg, s)
}

/// `BigInteger.toString()` of big-endian two's-complement bytes.
pub fn bigint(b: &[u8]) -> String {
    let (neg, d) = bigint_parts(b);
    if neg {
        format!("-{d}")
    } else {
        d
    }
}

/// `BigDecimal.toString()` of `scale` and the unscaled two's-complement bytes.
pub fn bigdecimal(scale: i32, unscaled: &[u8]) -> String {
    let (neg, coeff) = bigint_parts(unscaled);
    let mut s = String::with_capacity(coeff.len() + 8);
    if neg {
        s.push('-');
    }
    let adjusted = -(scale as i64) + (coeff.len() as i64 - 1);
    if scale == 0 {
        s.push_str(&coeff);
    } else if scale > 0 && adjusted >= -6 {
        let scale = scale as usize;
        if coeff.len() > scale {
            let p = coeff.len() - scale;
            s.push_str(&coeff[..p]);
            s.push('.');
            s.push_str(&coeff[p..]);
        } else {
            s.push_str("0.");
            for _ in 0..(scale - coeff.len()) {
                s.push('0');
            }
            s.push_str(&coeff);
        }
    } else {
        s.push_str(&coeff[..1]);
        if coeff.len() > 1 {
            s.push('.');
            s.push_str(&coeff[1..]);
        }
        if adjusted != 0 {
            s.push('E');
            if adjusted > 0 {
                s.push('+');
            }
            let _ = write!(s, "{adjusted}");
        }
    }
    s
}

/// `InetAddress.getHostAddress()`: dotted IPv4 (also for IPv4-mapped IPv6,
/// which `InetAddress.getByAddress` turns into an `Inet4Address`), else eight
/// hex groups without zero compression. `None` for other lengths.
pub fn inet(b: &[u8]) -> Option<String> {
    match b.len() {
        4 => Some(format!("{}.{}.{}.{}", b[0], b[1], b[2], b[3])),
        16 => {
            if b[..10].iter().all(|&x| x == 0) && b[10] == 0xff && b[11] == 0xff {
                return Some(format!("{}.{}.{}.{}", b[12], b[13], b[14], b[15]));
            }
            let mut s = String::with_capacity(39);
            for i in 0..8 {
                if i > 0 {
                    s.push(':');
                }
                let _ = write!(s, "{:x}", u16::from_be_bytes([b[2 * i], b[2 * i + 1]]));
            }
            Some(s)
        }
        _ => None,
    }
}

/// `UUID.toString()`; `None` unless 16 bytes.
pub fn uuid(b: &[u8]) -> Option<String> {
    if b.len() != 16 {
        return None;
    }
    let h = crate::output::hex(b);
    Some(format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    ))
}

/// `Duration.toString()` (Cassandra's CQL duration): `[-]NyNmoNdNhNmNsNmsNusNns`.
pub fn duration(months: i64, days: i64, nanos: i64) -> String {
    fn app(s: &mut String, dividend: u64, divisor: u64, unit: &str) -> u64 {
        if dividend == 0 || dividend < divisor {
            return dividend;
        }
        let _ = write!(s, "{}{unit}", dividend / divisor);
        dividend % divisor
    }
    let mut s = String::new();
    if months < 0 || days < 0 || nanos < 0 {
        s.push('-');
    }
    let r = app(&mut s, months.unsigned_abs(), 12, "y");
    app(&mut s, r, 1, "mo");
    app(&mut s, days.unsigned_abs(), 1, "d");
    if nanos != 0 {
        let r = app(&mut s, nanos.unsigned_abs(), 3_600_000_000_000, "h");
        let r = app(&mut s, r, 60_000_000_000, "m");
        let r = app(&mut s, r, 1_000_000_000, "s");
        let r = app(&mut s, r, 1_000_000, "ms");
        let r = app(&mut s, r, 1000, "us");
        app(&mut s, r, 1, "ns");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_and_floats() {
        assert_eq!(double(-3.3040857331561196e299), "-3.3040857331561196E299");
        assert_eq!(double(100.0), "100.0");
        assert_eq!(double(0.001), "0.001");
        assert_eq!(double(0.0001), "1.0E-4");
        assert_eq!(double(1e7), "1.0E7");
        assert_eq!(double(1234567.5), "1234567.5");
        assert_eq!(double(-0.0), "-0.0");
        assert_eq!(float(3.4028235e38), "3.4028235E38");
        assert_eq!(float(1.4e-45), "1.4E-45");
        assert_eq!(double(5e-324), "4.9E-324");
        assert_eq!(double(1e23), "1.0E23");
        assert_eq!(double(0.5), "0.5");
        assert_eq!(float(2.0), "2.0");
        assert_eq!(float(-0.010826139), "-0.010826139");
    }

    #[test]
    fn big_numbers() {
        assert_eq!(bigint(&[0xff]), "-1");
        assert_eq!(bigint(&[0x00, 0xff]), "255");
        assert_eq!(bigint(&[0x80]), "-128");
        assert_eq!(bigint(&[]), "0");
        assert_eq!(bigint(&(1u64 << 40).to_be_bytes()), "1099511627776");
        assert_eq!(bigdecimal(18, &[0xff]), "-1E-18");
        assert_eq!(bigdecimal(3, &[0x00, 0x03, 0x0c, 0xd4]), "199.892");
        assert_eq!(bigdecimal(-3, &[0x05]), "5E+3");
        assert_eq!(bigdecimal(2, &[0]), "0.00");
        assert_eq!(bigdecimal(7, &[1]), "1E-7");
        assert_eq!(bigdecimal(6, &[1]), "0.000001");
    }

    #[test]
    fn times() {
        assert_eq!(
            instant_micros(1_700_000_001_698_705),
            "2023-11-14T22:13:21.698705Z"
        );
        assert_eq!(
            instant_micros(1_700_000_001_698_000),
            "2023-11-14T22:13:21.698Z"
        );
        assert_eq!(instant_secs(1_795_360_375), "2026-11-22T15:12:55Z");
        assert_eq!(local_date(-719_162), "0001-01-01");
        assert_eq!(local_date((1i64 << 31) - 1), "+5881580-07-11");
        assert_eq!(local_date(-(1i64 << 31)), "-5877641-06-23");
        assert_eq!(
            timestamp_millis(-62_135_596_800_000, ' '),
            "0001-01-01 00:00:00.000Z"
        );
        assert_eq!(time_of_day(83_680_281_338_000), "23:14:40.281338000");
        assert_eq!(duration(-1, -2, -3), "-1mo2d3ns");
        assert_eq!(duration(0, 0, 0), "");
    }

    #[test]
    fn addresses() {
        let mut v6 = [0u8; 16];
        v6[0] = 0xfe;
        v6[1] = 0x80;
        v6[14] = 0x94;
        v6[15] = 0xfe;
        assert_eq!(inet(&v6).unwrap(), "fe80:0:0:0:0:0:0:94fe");
        assert_eq!(inet(&[10, 0, 0, 1]).unwrap(), "10.0.0.1");
    }
}
