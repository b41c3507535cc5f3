//! The parsers of flag values that are more than a number or a name.

/// Parse `--chunk-length`: a byte size that is a power of two, at most 16 MiB.
pub fn parse_chunk_length(s: &str) -> Result<u32, String> {
    let n = parse_size(s)?;
    let max = sstkit_format::chunk_walk::MAX_CHUNK_LENGTH;
    match u32::try_from(n) {
        Ok(v) if v.is_power_of_two() && v <= max => Ok(v),
        _ => Err(format!(
            "chunk length {n} is not a power of two between 1 and {max} bytes"
        )),
    }
}

/// Parse a byte size: `4096`, `4k`, `4KiB`, `1M`, `1MiB`, `2g` (binary units).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num.parse().map_err(|_| format!("not a size: {s:?}"))?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => return Err(format!("unknown size unit in {s:?} (use B, KiB, MiB, GiB)")),
    };
    n.checked_mul(mult)
        .ok_or_else(|| format!("size too large: {s:?}"))
}

/// `--now TIME`: seconds since the epoch or a timestamp, as the data commands take it.
pub fn parse_now(s: &str) -> Result<i64, String> {
    sstkit_format::value::parse_epoch_seconds(s).map_err(|e| e.kind.to_string())
}

/// Parse a duration: seconds, or a number with s, m, h or d (`864000`, `10d`, `3h`).
pub fn parse_duration(s: &str) -> Result<i64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: i64 = num.parse().map_err(|_| format!("not a duration: {s:?}"))?;
    let mult = match unit {
        "" | "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86400,
        _ => return Err(format!("unknown duration unit in {s:?} (use s, m, h, d)")),
    };
    n.checked_mul(mult)
        .ok_or_else(|| format!("duration too large: {s:?}"))
}
