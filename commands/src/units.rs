//! Sizes as people read them.

/// Java's `FBUtilities.prettyPrintMemory(bytes, " ")`: `24 B`, `1.083 KiB`.
pub fn pretty_bytes(n: u64) -> String {
    let prefix = if n == 0 {
        0
    } else {
        (63 - n.leading_zeros()) / 10
    };
    if prefix == 0 {
        return format!("{n} B");
    }
    let unit = b" KMGTPE"[prefix as usize] as char;
    format!("{:.3} {unit}iB", n as f64 / (1u64 << (prefix * 10)) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_print_as_cassandra_prints_them() {
        assert_eq!(pretty_bytes(24), "24 B");
        assert_eq!(pretty_bytes(1023), "1023 B");
        assert_eq!(pretty_bytes(1109), "1.083 KiB");
        assert_eq!(pretty_bytes(3 << 20), "3.000 MiB");
    }
}
