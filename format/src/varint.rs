//! Arbitrary-precision integers as Cassandra stores them (`varint`, and the
//! unscaled part of `decimal`): big-endian two's complement bytes. Here so
//! that the comparator ([`crate::compare`]) and the value decoder
//! ([`crate::value`]) share one conversion without depending on each other.

/// Sign and decimal digits of the magnitude of a big-endian two's complement
/// integer (`new BigInteger(byte[])`); empty input is zero.
pub fn varint_magnitude(b: &[u8]) -> (bool, String) {
    use std::fmt::Write as _;
    let neg = b.first().is_some_and(|x| x & 0x80 != 0);
    if b.len() <= 16 {
        let mut u: u128 = if neg { u128::MAX } else { 0 };
        for &x in b {
            u = (u << 8) | u128::from(x);
        }
        return (neg, (u as i128).unsigned_abs().to_string());
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
    (neg, s)
}
