//! Addresses, UUIDs and hex: `InetAddress.getHostAddress`,
//! `UUID.toString`, lower-case hex.

use std::net::IpAddr;

use super::append::{push_array, push_fixed, StackStr};

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

#[cfg(test)]
/// Java `InetAddress.getHostAddress()` (see [`inet_into`]).
pub fn format_inet_java(ip: &IpAddr) -> String {
    super::append::string(|s| inet_into(s, ip))
}

/// `UUID.toString()` (`8-4-4-4-12` lower-case hex), appended to `out`.
pub fn uuid_into(out: &mut String, u: &[u8; 16]) {
    // Where each byte's two digits go in `8-4-4-4-12`.
    const AT: [usize; 16] = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];
    let mut b = [b'-'; 36];
    for (x, &o) in u.iter().zip(&AT) {
        b[o..o + 2].copy_from_slice(&HEX_PAIRS[usize::from(*x)]);
    }
    // SAFETY: `b` holds hex digits and `-` only.
    unsafe { push_array(out, &b) };
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
        // SAFETY: the first `2 * chunk.len()` bytes of `buf` are hex digits.
        unsafe { push_fixed(out, &buf, chunk.len() * 2) };
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

#[cfg(test)]
/// Lower-case hex without prefix.
pub fn hex(b: &[u8]) -> String {
    super::append::string(|s| hex_into(s, b))
}
#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
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
}
