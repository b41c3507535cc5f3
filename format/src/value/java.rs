//! Java-compatible renderings used by Cassandra's tools (`AbstractType.getString`,
//! `toJSONString`, `sstabledump`, `sstablemetadata`), reimplemented from the
//! documented behaviour of the JDK classes:
//!
//! * `Double.toString` / `Float.toString`: the shortest decimal that rounds to
//!   the value (JDK 19+ semantics, Raffaello Giulietti's algorithm; Rust's
//!   shortest formatting gives the same digits), plain notation for
//!   `1e-3 <= |x| < 1e7` with at least one fractional digit (`100.0`), else
//!   computerized scientific notation `d.dddE±n` (`1.0E7`, `1.0E-4`).
//! * `BigDecimal.toString`: plain when `scale >= 0` and the adjusted exponent
//!   `>= -6`, else `d.dddE+n` / `E-n`.
//! * `java.time` formatting of timestamps (`yyyy` = year-of-era: years `<= 0`
//!   print as `1 - year`, years above 9999 get a `+`), dates
//!   (`ISO_LOCAL_DATE`), Cassandra's `TimeSerializer`, `Duration.toString`,
//!   `InetAddress.getHostAddress`.

use std::net::IpAddr;

/// Split Rust's shortest `{:e}` form into (negative, digits, decimal exponent
/// of the first digit).
fn shortest_parts(s: &str) -> (bool, String, i32) {
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let (mant, exp) = s.split_once('e').unwrap_or((s, "0"));
    let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    let digits = digits.trim_end_matches('0');
    let digits = if digits.is_empty() {
        "0".to_string()
    } else {
        digits.to_string()
    };
    (neg, digits, exp.parse().unwrap_or(0))
}

/// Render `digits` (no leading zeros) × 10^(exp - len + 1) the way
/// `Double.toString` does.
fn java_fp_layout(neg: bool, digits: &str, exp: i32) -> String {
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    if (-3..7).contains(&exp) {
        if exp >= 0 {
            let e = exp as usize;
            if digits.len() > e + 1 {
                out.push_str(&digits[..e + 1]);
                out.push('.');
                out.push_str(&digits[e + 1..]);
            } else {
                out.push_str(digits);
                out.extend(std::iter::repeat_n('0', e + 1 - digits.len()));
                out.push_str(".0");
            }
        } else {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-exp - 1) as usize));
            out.push_str(digits);
        }
    } else {
        out.push_str(&digits[..1]);
        out.push('.');
        if digits.len() > 1 {
            out.push_str(&digits[1..]);
        } else {
            out.push('0');
        }
        out.push('E');
        out.push_str(&exp.to_string());
    }
    out
}

/// Java `Double.toString(double)`.
pub fn java_double_to_string(x: f64) -> String {
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
    if x == 0.0 {
        return if x.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    let (neg, mut digits, mut exp) = shortest_parts(&format!("{x:e}"));
    if digits.len() == 1 {
        // NOTE: Java picks, when the shortest decimal has one digit, the
        // two-digit decimal closest to the value (`Double.MIN_VALUE` is
        // `4.9E-324`, not `5.0E-324`); Rust's `{:.1e}` rounds exactly.
        (_, digits, exp) = shortest_parts(&format!("{x:.1e}"));
    }
    java_fp_layout(neg, &digits, exp)
}

/// Java `Float.toString(float)`.
pub fn java_float_to_string(x: f32) -> String {
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
    if x == 0.0 {
        return if x.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    let (neg, mut digits, mut exp) = shortest_parts(&format!("{x:e}"));
    if digits.len() == 1 {
        (_, digits, exp) = shortest_parts(&format!("{x:.1e}"));
    }
    java_fp_layout(neg, &digits, exp)
}

/// Sign and decimal magnitude digits of a big-endian two's complement
/// integer (`BigInteger(byte[])`); empty input is zero.
pub fn twos_complement_to_decimal(bytes: &[u8]) -> (bool, String) {
    let neg = bytes.first().is_some_and(|b| b & 0x80 != 0);
    let mut mag: Vec<u8> = if neg {
        // Magnitude = two's complement negation.
        let mut m: Vec<u8> = bytes.iter().map(|b| !b).collect();
        for b in m.iter_mut().rev() {
            let (v, carry) = b.overflowing_add(1);
            *b = v;
            if !carry {
                break;
            }
        }
        m
    } else {
        bytes.to_vec()
    };
    // Strip leading zeros.
    let first = mag.iter().position(|&b| b != 0).unwrap_or(mag.len());
    mag.drain(..first);
    if mag.is_empty() {
        // -2^(8n) edge: negation overflowed back to zero only when all bits
        // were 1000…; that case is handled by the carry above (mag = 1000…).
        return (false, "0".into());
    }
    // Repeated division by 10^9 over base-256 digits.
    let mut chunks: Vec<u32> = Vec::new();
    let mut num = mag;
    while !num.is_empty() {
        let mut rem: u64 = 0;
        let mut q = Vec::with_capacity(num.len());
        for &b in &num {
            let cur = (rem << 8) | b as u64;
            let d = cur / 1_000_000_000;
            rem = cur % 1_000_000_000;
            if !(q.is_empty() && d == 0) {
                q.push(d as u8);
            }
        }
        chunks.push(rem as u32);
        num = q;
    }
    let mut s = chunks.last().map(|c| c.to_string()).unwrap_or_default();
    for c in chunks.iter().rev().skip(1) {
        s.push_str(&format!("{c:09}"));
    }
    (neg, s)
}

/// Java `BigInteger.toString()` of big-endian two's complement bytes.
pub fn varint_to_string(bytes: &[u8]) -> String {
    let (neg, d) = twos_complement_to_decimal(bytes);
    if neg {
        format!("-{d}")
    } else {
        d
    }
}

/// Java `BigDecimal.toString()` for `unscaled × 10^-scale` (unscaled as
/// big-endian two's complement bytes).
pub fn big_decimal_to_string(unscaled: &[u8], scale: i32) -> String {
    let (neg, digits) = twos_complement_to_decimal(unscaled);
    let len = digits.len() as i64;
    let adjusted = -(scale as i64) + (len - 1);
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    if scale >= 0 && adjusted >= -6 {
        let sc = scale as usize;
        if sc == 0 {
            out.push_str(&digits);
        } else if digits.len() > sc {
            out.push_str(&digits[..digits.len() - sc]);
            out.push('.');
            out.push_str(&digits[digits.len() - sc..]);
        } else {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', sc - digits.len()));
            out.push_str(&digits);
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('E');
        if adjusted >= 0 {
            out.push('+');
        }
        out.push_str(&adjusted.to_string());
    }
    out
}

/// Proleptic Gregorian (year, month, day) from days since 1970-01-01
/// (Howard Hinnant's `civil_from_days`).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
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
    let m = m as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `yyyy` (year-of-era, `SignStyle.EXCEEDS_PAD`) as `java.time` prints it.
fn year_of_era(y: i64) -> String {
    let yoe = if y >= 1 { y } else { 1 - y };
    if yoe > 9999 {
        format!("+{yoe}")
    } else {
        format!("{yoe:04}")
    }
}

/// `ISO_LOCAL_DATE` year (`uuuu`): sign for negative years, `+` above 9999.
fn iso_year(y: i64) -> String {
    if y > 9999 {
        format!("+{y}")
    } else if y < 0 {
        format!("-{:04}", -y)
    } else {
        format!("{y:04}")
    }
}

fn split_ms(ms: i64) -> (i64, u32, u32, u32, u32) {
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    let h = (rem / 3_600_000) as u32;
    let mi = (rem / 60_000 % 60) as u32;
    let s = (rem / 1000 % 60) as u32;
    let milli = (rem % 1000) as u32;
    (days, h, mi, s, milli)
}

/// Cassandra `TimestampType.getString`: `yyyy-MM-dd'T'HH:mm:ss.SSSX` in UTC,
/// e.g. `2051-07-16T01:33:31.000Z`.
pub fn format_timestamp_iso(ms: i64) -> String {
    let (days, h, mi, s, milli) = split_ms(ms);
    let (y, mo, d) = civil_from_days(days);
    format!(
        "{}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{milli:03}Z",
        year_of_era(y)
    )
}

/// Cassandra `TimestampType.toJSONString` (without the quotes):
/// `yyyy-MM-dd HH:mm:ss.SSSX` in UTC, e.g. `2239-06-15 15:11:37.276Z`.
pub fn format_timestamp_json(ms: i64) -> String {
    let (days, h, mi, s, milli) = split_ms(ms);
    let (y, mo, d) = civil_from_days(days);
    format!(
        "{}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}.{milli:03}Z",
        year_of_era(y)
    )
}

/// cqlsh's default display: `2023-11-14 22:13:20.000000+0000` (UTC).
pub fn format_timestamp_cqlsh(ms: i64) -> String {
    let (days, h, mi, s, milli) = split_ms(ms);
    let (y, mo, d) = civil_from_days(days);
    format!(
        "{}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}.{:06}+0000",
        iso_year(y),
        milli * 1000
    )
}

/// A microsecond timestamp as `sstabledump` prints liveness/deletion times:
/// `2023-11-14T22:13:20.060757Z` (`Instant.toString`: fraction of 0, 3, 6 or
/// 9 digits, as few as possible; years above 9999 get `+`, negative `-`).
pub fn format_micros_instant(us: i64) -> String {
    let secs = us.div_euclid(1_000_000);
    let micros = us.rem_euclid(1_000_000) as u32;
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, mo, d) = civil_from_days(days);
    let mut s = format!(
        "{}-{mo:02}-{d:02}T{:02}:{:02}:{:02}",
        iso_year(y),
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    );
    if micros != 0 {
        if micros % 1000 == 0 {
            s.push_str(&format!(".{:03}", micros / 1000));
        } else {
            s.push_str(&format!(".{micros:06}"));
        }
    }
    s.push('Z');
    s
}

/// Seconds since the epoch as `Instant.toString` prints them
/// (`2026-11-22T15:12:55Z`), for local deletion times.
pub fn format_seconds_instant(secs: i64) -> String {
    format_micros_instant(secs.saturating_mul(1_000_000))
}

/// Cassandra `SimpleDateType` days (epoch at 2^31) as `ISO_LOCAL_DATE`.
pub fn format_date(days: u32) -> String {
    let (y, m, d) = civil_from_days(days as i64 - (1i64 << 31));
    format!("{}-{m:02}-{d:02}", iso_year(y))
}

/// Cassandra `TimeSerializer.toString`: `HH:mm:ss.nnnnnnnnn`. Values outside
/// one day (invalid) are printed as the raw number.
pub fn format_time(nanos: i64) -> String {
    if !(0..86_400_000_000_000).contains(&nanos) {
        return nanos.to_string();
    }
    let ns = nanos % 1_000_000_000;
    let s = nanos / 1_000_000_000;
    format!("{:02}:{:02}:{:02}.{ns:09}", s / 3600, s / 60 % 60, s % 60)
}

/// Cassandra `Duration.toString`, e.g. `1y2mo3d4h5m6s7ms8us9ns`; zero is "".
pub fn format_duration(months: i32, days: i32, nanos: i64) -> String {
    fn append(out: &mut String, dividend: u64, divisor: u64, unit: &str) -> u64 {
        if dividend == 0 || dividend < divisor {
            return dividend;
        }
        out.push_str(&(dividend / divisor).to_string());
        out.push_str(unit);
        dividend % divisor
    }
    let mut out = String::new();
    if months < 0 || days < 0 || nanos < 0 {
        out.push('-');
    }
    let rem = append(&mut out, months.unsigned_abs() as u64, 12, "y");
    append(&mut out, rem, 1, "mo");
    append(&mut out, days.unsigned_abs() as u64, 1, "d");
    if nanos != 0 {
        let mut r = append(&mut out, nanos.unsigned_abs(), 3_600_000_000_000, "h");
        r = append(&mut out, r, 60_000_000_000, "m");
        r = append(&mut out, r, 1_000_000_000, "s");
        r = append(&mut out, r, 1_000_000, "ms");
        r = append(&mut out, r, 1000, "us");
        append(&mut out, r, 1, "ns");
    }
    out
}

/// Java `InetAddress.getHostAddress()`: dotted IPv4; IPv6 as eight
/// lower-case hex groups without zero compression (`fe80:0:0:0:0:0:0:32a4`).
/// An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) is an `Inet4Address` in
/// Java and prints dotted.
pub fn format_inet_java(ip: &IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return v4.to_string();
            }
            v6.segments()
                .iter()
                .map(|s| format!("{s:x}"))
                .collect::<Vec<_>>()
                .join(":")
        }
    }
}

/// Lower-case hex without prefix.
pub fn hex(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len() * 2);
    for x in b {
        s.push_str(&format!("{x:02x}"));
    }
    s
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
            (123456789.0, "1.23456789E8"),
            (-3.3040857331561196e299, "-3.3040857331561196E299"),
            (0.1, "0.1"),
            (-0.0, "-0.0"),
            (f64::MIN_POSITIVE, "2.2250738585072014E-308"),
            (f64::MAX, "1.7976931348623157E308"),
            (4.9e-324, "4.9E-324"),
            (1e23, "1.0E23"),
            (2e-323, "2.0E-323"),
            (1.5e-3, "0.0015"),
        ];
        for (x, s) in cases {
            assert_eq!(java_double_to_string(*x), *s, "{x}");
        }
        assert_eq!(java_float_to_string(-1.2588742e29), "-1.2588742E29");
        assert_eq!(java_float_to_string(0.1), "0.1");
        assert_eq!(java_float_to_string(-9.045085), "-9.045085");
        assert_eq!(java_float_to_string(f32::NAN), "NaN");
        assert_eq!(java_float_to_string(f32::NEG_INFINITY), "-Infinity");
        assert_eq!(java_float_to_string(3.4028235e38), "3.4028235E38");
        assert_eq!(java_float_to_string(1.4e-45), "1.4E-45");
    }

    #[test]
    fn varints_and_decimals() {
        assert_eq!(varint_to_string(&[]), "0");
        assert_eq!(varint_to_string(&[0xFF]), "-1");
        assert_eq!(varint_to_string(&[0x80]), "-128");
        assert_eq!(varint_to_string(&[0x00, 0x80]), "128");
        assert_eq!(
            varint_to_string(&[0x80, 0, 0, 0, 0, 0, 0, 0]),
            "-9223372036854775808"
        );
        assert_eq!(
            varint_to_string(&[0x01, 0, 0, 0, 0, 0, 0, 0, 0]),
            "18446744073709551616"
        );
        let v = 1_000_000_000_000_000_000_000i128;
        let b = v.to_be_bytes();
        assert_eq!(varint_to_string(&b), v.to_string());
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
        assert_eq!(d(-747635, 1), "-74763.5");
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
        // Year 0 is year-of-era 1 (BCE); year -1 is 2.
        let ms = days_from_civil(0, 1, 1) * 86_400_000;
        assert_eq!(format_timestamp_iso(ms), "0001-01-01T00:00:00.000Z");
        let ms = days_from_civil(12345, 1, 1) * 86_400_000;
        assert_eq!(format_timestamp_iso(ms), "+12345-01-01T00:00:00.000Z");
        assert_eq!(format_date(1 << 31), "1970-01-01");
        assert_eq!(format_date(0), "-5877641-06-23");
        assert_eq!(format_date(u32::MAX), "+5881580-07-11");
        assert_eq!(format_time(83_680_281_338_000), "23:14:40.281338000");
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
        for d in [-800_000i64, -1, 0, 1, 59, 60, 365, 10_000, 2_932_896] {
            let (y, m, dd) = civil_from_days(d);
            assert_eq!(days_from_civil(y, m, dd), d);
        }
    }

    #[test]
    fn durations_and_inets() {
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
    }
}
