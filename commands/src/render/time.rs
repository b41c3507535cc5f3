//! Dates and times as `java.time` and Cassandra print them: timestamps
//! (`yyyy` is the year-of-era: years `<= 0` print as `1 - year`, above 9999
//! with `+`), `ISO_LOCAL_DATE`, `Instant.toString`, Cassandra's
//! `TimeSerializer` and `Duration.toString`.

use super::append::{digits, push_array, push_fixed, push_i64, push_padded, string};

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
        // SAFETY: `b` holds ASCII digits and `-` only.
        None => unsafe { push_fixed(out, &b, 6) },
        Some((sep, h, mi, s)) => {
            b[6] = if sep.is_ascii() { sep } else { b'T' };
            digits::<2>(&mut b[7..], h as u64);
            digits::<2>(&mut b[10..], mi as u64);
            digits::<2>(&mut b[13..], s as u64);
            // SAFETY: `b` holds ASCII digits and ASCII literals only.
            unsafe { push_array(out, &b) };
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
        // SAFETY: `b` holds ASCII digits and literals, and `sep` is ASCII
        // (checked above).
        unsafe { push_fixed(out, &b, b.len()) };
        return;
    }
    year_of_era_into(out, y);
    // `sep` is `T` or a space (ASCII).
    push_month_day_time(out, mo, d, Some((sep as u8, h, mi, s)));
    let mut b = *b".000Z";
    digits::<3>(&mut b[1..], milli as u64);
    // SAFETY: `b` holds ASCII digits and ASCII literals only.
    unsafe { push_array(out, &b) };
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
    // SAFETY: `b` holds ASCII digits and ASCII literals only.
    unsafe { push_array(out, &b) };
}

#[cfg(test)]
/// Cassandra `TimestampType.getString`: `2051-07-16T01:33:31.000Z`.
pub fn format_timestamp_iso(ms: i64) -> String {
    string(|s| timestamp_into(s, ms, 'T'))
}

#[cfg(test)]
/// Cassandra `TimestampType.toJSONString` (without the quotes):
/// `2239-06-15 15:11:37.276Z`.
pub fn format_timestamp_json(ms: i64) -> String {
    string(|s| timestamp_into(s, ms, ' '))
}

#[cfg(test)]
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
        // SAFETY: `b` holds ASCII digits and ASCII literals only.
        unsafe { push_array(out, &b) };
    } else if nanos.is_multiple_of(1000) {
        let mut b = *b".000000Z";
        digits::<6>(&mut b[1..], n / 1000);
        // SAFETY: `b` holds ASCII digits and ASCII literals only.
        unsafe { push_array(out, &b) };
    } else {
        let mut b = *b".000000000Z";
        digits::<9>(&mut b[1..], n);
        // SAFETY: `b` holds ASCII digits and ASCII literals only.
        unsafe { push_array(out, &b) };
    }
}

#[cfg(test)]
/// `JsonTransformer.dateString(MICROSECONDS, t)` (sstabledump's timestamps),
/// appended to `out`: seconds truncated toward zero, nanos the `floorMod` of
/// the saturated nano value — reproduced as is, including its off-by-one
/// second for negative non-whole times (see [`format_micros_instant`] for
/// the exact instant).
pub fn date_string_micros_into(out: &mut String, t: i64) {
    let nanos = t.saturating_mul(1000).rem_euclid(1_000_000_000) as u32;
    instant_into(out, t / 1_000_000, nanos)
}

#[cfg(test)]
/// `JsonTransformer.dateString(SECONDS, t)` (sstabledump's local deletion
/// and expiration times), appended to `out`.
pub fn date_string_secs_into(out: &mut String, t: i64) {
    let nanos = t.saturating_mul(1_000_000_000).rem_euclid(1_000_000_000) as u32;
    instant_into(out, t, nanos)
}

/// `JsonTransformer.dateString` (sstabledump's times, `date_string_*_into`) with the
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
    /// `JsonTransformer.dateString(MICROSECONDS, t)`, appended to `out`.
    pub fn micros_into(&mut self, out: &mut String, t: i64) {
        let nanos = t.saturating_mul(1000).rem_euclid(1_000_000_000) as u32;
        self.instant_into(out, t / 1_000_000, nanos)
    }

    /// `JsonTransformer.dateString(SECONDS, t)`, appended to `out`.
    pub fn secs_into(&mut self, out: &mut String, t: i64) {
        let nanos = t.saturating_mul(1_000_000_000).rem_euclid(1_000_000_000) as u32;
        self.instant_into(out, t, nanos)
    }

    fn instant_into(&mut self, out: &mut String, secs: i64, nanos: u32) {
        match &self.last {
            [Some((s, text)), _] | [_, Some((s, text))] if *s == secs => {
                // SAFETY: `text` was copied from what `instant_seconds_into`
                // wrote: ASCII digits, signs and separators.
                unsafe { push_array(out, text) }
            }
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

#[cfg(test)]
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
        // SAFETY: `b` holds ASCII digits and ASCII literals only.
        unsafe { push_array(out, &b) };
    } else {
        push_i64(out, nanos);
    }
}

#[cfg(test)]
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

#[cfg(test)]
/// Cassandra `Duration.toString` (see [`duration_into`]).
pub fn format_duration(months: i32, days: i32, nanos: i64) -> String {
    string(|s| duration_into(s, i64::from(months), i64::from(days), nanos))
}
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use sstkit_format::value::days_from_civil;
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
}
