//! Appending short ASCII runs and integers to a `String` without a `memcpy`
//! call per piece.
//!
//! `sstkit dump-data` writes gigabytes of JSON made of short pieces: a
//! cell's head up to its timestamp (~50 bytes), a 16-digit timestamp, a
//! `"value":` literal. `String::push_str` of a piece whose length is not a
//! constant ends in a call to `memcpy`, which costs more than the copy of
//! so few bytes. Here a piece is kept in a fixed-size array ([`Padded`]) and
//! copied as the whole array — a few vector moves the compiler inlines —
//! with the string's length then advanced by the piece's real length; the
//! bytes past it are overwritten by the next append or never become part
//! of the string. Integers are laid out eight digits at a time with SWAR
//! arithmetic straight into the string's spare capacity.
//!
//! The `unsafe` is confined to [`push_fixed`]: it writes into capacity that
//! was reserved first and only ever exposes ASCII bytes.

/// An ASCII piece of at most `N` bytes stored in an `N`-byte array, for
/// [`Padded::push_to`].
#[derive(Clone, Copy)]
pub struct Padded<const N: usize> {
    bytes: [u8; N],
    len: u8,
}

impl<const N: usize> Padded<N> {
    /// `s` as a padded piece, or `None` when it is longer than `N` bytes or
    /// not ASCII.
    pub fn new(s: &str) -> Option<Self> {
        const { assert!(N <= 255) };
        if s.len() > N || !s.is_ascii() {
            return None;
        }
        let mut bytes = [0u8; N];
        bytes[..s.len()].copy_from_slice(s.as_bytes());
        Some(Padded {
            bytes,
            len: s.len() as u8,
        })
    }

    /// The piece.
    pub fn as_str(&self) -> &str {
        // The bytes were checked to be ASCII in `new`.
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or_default()
    }

    /// Append the piece to `out`.
    #[inline(always)]
    pub fn push_to(&self, out: &mut String) {
        push_fixed(out, &self.bytes, usize::from(self.len));
    }
}

/// A piece of text appended often: [`Padded`] when it is short ASCII, a
/// plain string otherwise.
#[derive(Clone)]
pub enum Piece<const N: usize> {
    /// At most `N` ASCII bytes.
    Short(Padded<N>),
    /// Anything else.
    Long(String),
}

impl<const N: usize> Piece<N> {
    /// The piece of `s`.
    pub fn new(s: &str) -> Self {
        match Padded::new(s) {
            Some(p) => Piece::Short(p),
            None => Piece::Long(s.to_owned()),
        }
    }

    /// The piece.
    pub fn as_str(&self) -> &str {
        match self {
            Piece::Short(p) => p.as_str(),
            Piece::Long(s) => s,
        }
    }

    /// Append the piece to `out`.
    #[inline(always)]
    pub fn push_to(&self, out: &mut String) {
        match self {
            Piece::Short(p) => p.push_to(out),
            Piece::Long(s) => out.push_str(s),
        }
    }
}

/// Append the first `len` bytes of `bytes` to `out` by copying all `N`
/// bytes into its spare capacity. `bytes[..len]` must be ASCII (checked in
/// debug builds; the callers build them from ASCII only).
#[inline(always)]
pub fn push_fixed<const N: usize>(out: &mut String, bytes: &[u8; N], len: usize) {
    debug_assert!(len <= N && bytes[..len].is_ascii());
    let len = len.min(N);
    out.reserve(N);
    // SAFETY: `reserve(N)` makes room for `N` more bytes after the current
    // length, so the `N`-byte copy stays inside the allocation (the source is
    // a whole `[u8; N]`). Only `len <= N` of them become part of the string,
    // and they are ASCII, so the `String` stays valid UTF-8. The bytes
    // between the new length and `N` are left in the spare capacity, which
    // may hold anything.
    unsafe {
        let v = out.as_mut_vec();
        let end = v.len();
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), v.as_mut_ptr().add(end), N);
        v.set_len(end + len);
    }
}

/// The eight decimal digits of `x < 10^8` as the bytes of a little-endian
/// `u64` (the most significant digit first in memory), and the number of
/// leading zero digits (8 for `x == 0`).
#[inline(always)]
fn eight_digits(x: u32) -> (u64, u32) {
    debug_assert!(x < 100_000_000);
    // Two 4-digit halves in the two 32-bit lanes (high half first in memory),
    // then 2-digit pairs in 16-bit lanes, then digits in bytes; the
    // divisions by 100 and 10 are multiply-shifts exact in these ranges.
    let merged = u64::from(x / 10_000) | (u64::from(x % 10_000) << 32);
    let hundreds = ((merged * 10_486) >> 20) & 0x0000_007F_0000_007F;
    let pairs = ((merged - 100 * hundreds) << 16) | hundreds;
    let tens = ((pairs * 103) >> 10) & 0x000F_000F_000F_000F;
    let digits = ((pairs - 10 * tens) << 8) | tens;
    let leading = if digits == 0 {
        8
    } else {
        digits.trailing_zeros() / 8
    };
    (digits | 0x3030_3030_3030_3030, leading)
}

/// Append the decimal form of `v`.
#[inline]
pub fn push_u64(out: &mut String, v: u64) {
    // Groups of eight digits, the first shifted down past its leading
    // zeros and the next ones shifted in right after it, appended whole.
    if v < 100_000_000 {
        let (d, lead) = eight_digits(v as u32);
        let lead = lead.min(7); // 0 is written as "0"
        push_fixed(out, &(d >> (8 * lead)).to_le_bytes(), 8 - lead as usize);
    } else if v < 10_000_000_000_000_000 {
        let (hi, lead) = eight_digits((v / 100_000_000) as u32);
        let (lo, _) = eight_digits((v % 100_000_000) as u32);
        push_fixed(out, &join(hi, lead, lo).to_le_bytes(), 16 - lead as usize);
    } else {
        let low = v % 10_000_000_000_000_000;
        let (top, lead) = eight_digits((v / 10_000_000_000_000_000) as u32); // <= 1844
        let (hi, _) = eight_digits((low / 100_000_000) as u32);
        let (lo, _) = eight_digits((low % 100_000_000) as u32);
        let mut b = [0u8; 24];
        b[..16].copy_from_slice(&join(top, lead, hi).to_le_bytes());
        let at = 16 - lead as usize;
        b[at..at + 8].copy_from_slice(&lo.to_le_bytes());
        push_fixed(out, &b, 24 - lead as usize);
    }
}

/// The digits of group `first` without its `lead < 8` leading zeros, then
/// the eight of `next`, as the bytes of a little-endian `u128`.
#[inline(always)]
fn join(first: u64, lead: u32, next: u64) -> u128 {
    (u128::from(first) >> (8 * lead)) | (u128::from(next) << (64 - 8 * lead))
}

/// Append the decimal form of `v` (`Long.toString`).
#[inline]
pub fn push_i64(out: &mut String, v: i64) {
    if v < 0 {
        out.push('-');
    }
    push_u64(out, v.unsigned_abs());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(v: u64) -> String {
        let mut s = String::from("x");
        push_u64(&mut s, v);
        s
    }

    #[test]
    fn integers_match_the_standard_library() {
        let mut cases: Vec<u64> = vec![0, 1, 9, 10, 99, 100, u64::MAX, u64::MAX - 1];
        for p in 0..20u32 {
            let t = 10u64.pow(p);
            cases.extend([t - 1, t, t + 1, t.saturating_mul(7) / 3]);
        }
        // A deterministic spread over all magnitudes (xorshift).
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            cases.push(x >> (x % 64));
        }
        for v in cases {
            assert_eq!(u(v), format!("x{v}"), "{v}");
            let i = v as i64;
            let mut s = String::new();
            push_i64(&mut s, i);
            assert_eq!(s, i.to_string());
        }
        let mut s = String::new();
        push_i64(&mut s, i64::MIN);
        assert_eq!(s, i64::MIN.to_string());
    }

    #[test]
    fn padded_pieces_append_only_their_length() {
        let p = Padded::<16>::new("\"t\":{").unwrap();
        assert_eq!(p.as_str(), "\"t\":{");
        let mut s = String::from("ab");
        for _ in 0..100 {
            p.push_to(&mut s);
        }
        assert_eq!(s, format!("ab{}", "\"t\":{".repeat(100)));
        assert!(Padded::<4>::new("12345").is_none());
        assert!(Padded::<8>::new("é").is_none());
        let long = Piece::<4>::new("12345");
        assert!(matches!(long, Piece::Long(_)));
        let mut s = String::new();
        long.push_to(&mut s);
        Piece::<4>::new("ab").push_to(&mut s);
        assert_eq!(s, "12345ab");
        let full = Padded::<4>::new("1234").unwrap();
        let mut s = String::new();
        full.push_to(&mut s);
        full.push_to(&mut s);
        assert_eq!(s, "12341234");
    }
}
