//! Scalars from text: decimals, floats, dates, times, timestamps and
//! durations in the forms Cassandra's `fromString` and CQL accept.

use crate::error::Result;

use super::{bad, days_from_civil};

pub(super) fn split_sign(s: &str) -> (bool, &str) {
    if let Some(r) = s.strip_prefix('-') {
        (true, r)
    } else {
        (false, s.strip_prefix('+').unwrap_or(s))
    }
}

/// Minimal big-endian two's complement bytes of ±digits (`BigInteger.toByteArray`).
pub(super) fn decimal_to_twos(neg: bool, digits: &str) -> Vec<u8> {
    // Magnitude in base 256, little-endian.
    let mut mag: Vec<u8> = Vec::new();
    for d in digits.bytes() {
        let mut carry = (d - b'0') as u32;
        for b in mag.iter_mut() {
            let v = *b as u32 * 10 + carry;
            *b = v as u8;
            carry = v >> 8;
        }
        while carry > 0 {
            mag.push(carry as u8);
            carry >>= 8;
        }
    }
    while mag.last() == Some(&0) {
        mag.pop();
    }
    if mag.is_empty() {
        return vec![0];
    }
    mag.push(0); // room for the sign bit
    if neg {
        // two's complement negate
        let mut carry = 1u16;
        for b in mag.iter_mut() {
            let v = (!*b) as u16 + carry;
            *b = v as u8;
            carry = v >> 8;
        }
    }
    mag.reverse();
    // Strip redundant sign bytes.
    while mag.len() > 1 {
        let (a, b) = (mag[0], mag[1]);
        if (a == 0 && b & 0x80 == 0) || (a == 0xFF && b & 0x80 != 0) {
            mag.remove(0);
        } else {
            break;
        }
    }
    mag
}

/// Parse a decimal literal into (scale, unscaled two's complement bytes).
pub(crate) fn parse_decimal(s: &str) -> Result<(i32, Vec<u8>)> {
    let err = || bad(format!("not a valid decimal: {s:?}"));
    let (neg, rest) = split_sign(s);
    let (mant, exp) = match rest.find(['e', 'E']) {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    if (int.is_empty() && frac.is_empty())
        || !int.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(err());
    }
    let exp: i64 = match exp {
        Some(e) => e
            .strip_prefix('+')
            .unwrap_or(e)
            .parse()
            .map_err(|_| err())?,
        None => 0,
    };
    let scale = frac.len() as i64 - exp;
    let scale = i32::try_from(scale).map_err(|_| err())?;
    let digits = format!("{int}{frac}");
    Ok((scale, decimal_to_twos(neg, &digits)))
}

pub(super) fn parse_float(s: &str) -> Result<f64> {
    let t = s.trim();
    match t {
        "NaN" => return Ok(f64::NAN),
        "Infinity" | "+Infinity" => return Ok(f64::INFINITY),
        "-Infinity" => return Ok(f64::NEG_INFINITY),
        _ => {}
    }
    if t.chars()
        .any(|c| c.is_ascii_alphabetic() && c != 'e' && c != 'E')
    {
        return Err(bad(format!("not a valid number: {s:?}")));
    }
    t.parse::<f64>()
        .map_err(|_| bad(format!("not a valid number: {s:?}")))
}

/// A small ASCII scanner for dates and times.
pub(super) struct Scan<'a> {
    b: &'a [u8],
    i: usize,
}

impl Scan<'_> {
    fn digits(&mut self, min: usize, max: usize) -> Option<(u64, usize)> {
        let st = self.i;
        while self.i < self.b.len() && self.i - st < max && self.b[self.i].is_ascii_digit() {
            self.i += 1;
        }
        let n = self.i - st;
        if n < min {
            return None;
        }
        let v = std::str::from_utf8(&self.b[st..self.i])
            .ok()?
            .parse()
            .ok()?;
        Some((v, n))
    }
    fn eat(&mut self, c: u8) -> bool {
        if self.b.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn done(&self) -> bool {
        self.i == self.b.len()
    }
}

pub(super) fn scan_date(sc: &mut Scan<'_>) -> Option<i64> {
    let neg = sc.eat(b'-');
    if !neg {
        sc.eat(b'+');
    }
    let (y, _) = sc.digits(1, 9)?;
    let y = if neg { -(y as i64) } else { y as i64 };
    if !sc.eat(b'-') {
        return None;
    }
    let (m, _) = sc.digits(1, 2)?;
    if !sc.eat(b'-') {
        return None;
    }
    let (d, _) = sc.digits(1, 2)?;
    if !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m as u32) as u64 {
        return None;
    }
    Some(days_from_civil(y, m as u32, d as u32))
}

pub(super) fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ => {
            if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 {
                29
            } else {
                28
            }
        }
    }
}

/// `HH:MM[:SS[.f{1,9}]]` → nanoseconds of day.
pub(super) fn scan_time(sc: &mut Scan<'_>) -> Option<i64> {
    let (h, _) = sc.digits(1, 2)?;
    if !sc.eat(b':') {
        return None;
    }
    let (mi, _) = sc.digits(2, 2)?;
    let mut s = 0;
    let mut ns = 0;
    if sc.eat(b':') {
        s = sc.digits(2, 2)?.0;
        if sc.eat(b'.') {
            let (f, n) = sc.digits(1, 9)?;
            ns = f * 10u64.pow(9 - n as u32);
        }
    }
    if h > 23 || mi > 59 || s > 59 {
        return None;
    }
    Some(((h * 3600 + mi * 60 + s) * 1_000_000_000 + ns) as i64)
}

/// Timestamp literal → ms since the epoch.
pub(crate) fn parse_timestamp(s: &str) -> Result<i64> {
    let err = || bad(format!("not a valid timestamp: {s:?}"));
    if let Ok(v) = s.parse::<i64>() {
        return Ok(v);
    }
    let mut sc = Scan {
        b: s.as_bytes(),
        i: 0,
    };
    let days = scan_date(&mut sc).ok_or_else(err)?;
    let mut nanos = 0i64;
    if sc.eat(b'T') || sc.eat(b' ') {
        nanos = scan_time(&mut sc).ok_or_else(err)?;
    }
    let mut offset_min = 0i64;
    if sc.eat(b'Z') || sc.eat(b'z') {
    } else if !sc.done() {
        let sign = if sc.eat(b'+') {
            1
        } else if sc.eat(b'-') {
            -1
        } else {
            return Err(err());
        };
        let (hh, _) = sc.digits(2, 2).ok_or_else(err)?;
        sc.eat(b':');
        let mm = if sc.done() {
            0
        } else {
            sc.digits(2, 2).ok_or_else(err)?.0
        };
        offset_min = sign * (hh as i64 * 60 + mm as i64);
    }
    if !sc.done() {
        return Err(err());
    }
    days.checked_mul(86_400_000)
        .and_then(|d| d.checked_add(nanos / 1_000_000))
        .and_then(|v| v.checked_sub(offset_min * 60_000))
        .ok_or_else(err)
}

/// A point in time given by a user (`--now`) → seconds since the epoch:
/// an integer is seconds; otherwise a timestamp literal (ISO-8601 / CQL,
/// `2023-11-14T22:13:20Z`, `2023-11-14 22:13:20+0100`; UTC when no zone),
/// whose milliseconds are dropped (expiry is judged in whole seconds).
pub fn parse_epoch_seconds(s: &str) -> Result<i64> {
    let t = s.trim();
    if let Ok(v) = t.parse::<i64>() {
        return Ok(v);
    }
    parse_timestamp(t)
        .map(|ms| ms.div_euclid(1000))
        .map_err(|_| {
            bad(format!(
                "not a valid time: {s:?} (seconds since the epoch, or a timestamp such as \
                 2023-11-14T22:13:20Z)"
            ))
        })
}

/// Date literal → the stored u32 (epoch at 2^31).
pub(crate) fn parse_date(s: &str) -> Result<u32> {
    let err = || bad(format!("not a valid date: {s:?}"));
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        let v: u64 = s.parse().map_err(|_| err())?;
        return u32::try_from(v).map_err(|_| err());
    }
    let mut sc = Scan {
        b: s.as_bytes(),
        i: 0,
    };
    let days = scan_date(&mut sc).ok_or_else(err)?;
    if !sc.done() {
        return Err(err());
    }
    u32::try_from(days + (1i64 << 31)).map_err(|_| err())
}

/// Time literal → nanoseconds of day.
pub(crate) fn parse_time(s: &str) -> Result<i64> {
    let err = || bad(format!("not a valid time: {s:?}"));
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        let v: i64 = s.parse().map_err(|_| err())?;
        if !(0..86_400_000_000_000).contains(&v) {
            return Err(err());
        }
        return Ok(v);
    }
    let mut sc = Scan {
        b: s.as_bytes(),
        i: 0,
    };
    let v = scan_time(&mut sc).ok_or_else(err)?;
    if !sc.done() {
        return Err(err());
    }
    Ok(v)
}

const NS_H: i64 = 3_600_000_000_000;
const NS_M: i64 = 60_000_000_000;
const NS_S: i64 = 1_000_000_000;

/// Duration literal → (months, days, nanoseconds) (Cassandra `Duration.from`).
pub(crate) fn parse_duration(s: &str) -> Result<(i32, i32, i64)> {
    let err = || bad(format!("not a valid duration: {s:?}"));
    let (neg, body) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let (mut months, mut days, mut nanos) = (0i64, 0i64, 0i64);
    let add = |acc: &mut i64, v: i64, mul: i64| -> Result<()> {
        *acc = v
            .checked_mul(mul)
            .and_then(|x| acc.checked_add(x))
            .ok_or_else(err)?;
        Ok(())
    };
    if let Some(p) = body.strip_prefix('P').or_else(|| body.strip_prefix('p')) {
        if p.contains('-') {
            // P0001-02-03T04:05:06
            let mut sc = Scan {
                b: p.as_bytes(),
                i: 0,
            };
            let (y, _) = sc.digits(4, 4).ok_or_else(err)?;
            let ok = sc.eat(b'-');
            let (m, _) = sc.digits(2, 2).ok_or_else(err)?;
            let ok = ok && sc.eat(b'-');
            let (d, _) = sc.digits(2, 2).ok_or_else(err)?;
            let ok = ok && sc.eat(b'T');
            let (h, _) = sc.digits(2, 2).ok_or_else(err)?;
            let ok = ok && sc.eat(b':');
            let (mi, _) = sc.digits(2, 2).ok_or_else(err)?;
            let ok = ok && sc.eat(b':');
            let (se, _) = sc.digits(2, 2).ok_or_else(err)?;
            if !ok || !sc.done() {
                return Err(err());
            }
            months = y as i64 * 12 + m as i64;
            days = d as i64;
            nanos = h as i64 * NS_H + mi as i64 * NS_M + se as i64 * NS_S;
        } else {
            let mut time = false;
            let mut num = String::new();
            let mut any = false;
            for c in p.chars() {
                match c.to_ascii_uppercase() {
                    'T' if num.is_empty() && !time => time = true,
                    d if d.is_ascii_digit() => num.push(d),
                    u => {
                        let v: i64 = num.parse().map_err(|_| err())?;
                        num.clear();
                        any = true;
                        match (u, time) {
                            ('Y', false) => add(&mut months, v, 12)?,
                            ('M', false) => add(&mut months, v, 1)?,
                            ('W', false) => add(&mut days, v, 7)?,
                            ('D', false) => add(&mut days, v, 1)?,
                            ('H', true) => add(&mut nanos, v, NS_H)?,
                            ('M', true) => add(&mut nanos, v, NS_M)?,
                            ('S', true) => add(&mut nanos, v, NS_S)?,
                            _ => return Err(err()),
                        }
                    }
                }
            }
            if !num.is_empty() || !any {
                return Err(err());
            }
        }
    } else {
        let lower = body.to_lowercase();
        let b = lower.as_str();
        let mut i = 0;
        let bytes = b.as_bytes();
        if bytes.is_empty() {
            return Err(err());
        }
        while i < bytes.len() {
            let st = i;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            if st == i {
                return Err(err());
            }
            let v: i64 = b[st..i].parse().map_err(|_| err())?;
            let rest = &b[i..];
            let (unit, len) = ["mo", "ms", "us", "µs", "ns", "y", "w", "d", "h", "m", "s"]
                .iter()
                .find(|u| rest.starts_with(**u))
                .map(|u| (*u, u.len()))
                .ok_or_else(err)?;
            i += len;
            match unit {
                "y" => add(&mut months, v, 12)?,
                "mo" => add(&mut months, v, 1)?,
                "w" => add(&mut days, v, 7)?,
                "d" => add(&mut days, v, 1)?,
                "h" => add(&mut nanos, v, NS_H)?,
                "m" => add(&mut nanos, v, NS_M)?,
                "s" => add(&mut nanos, v, NS_S)?,
                "ms" => add(&mut nanos, v, 1_000_000)?,
                "us" | "µs" => add(&mut nanos, v, 1000)?,
                _ => add(&mut nanos, v, 1)?,
            }
        }
    }
    let months = i32::try_from(months).map_err(|_| err())?;
    let days = i32::try_from(days).map_err(|_| err())?;
    Ok(if neg {
        (-months, -days, -nanos)
    } else {
        (months, days, nanos)
    })
}
