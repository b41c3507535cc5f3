//! The output buffer: appending short ASCII runs to a `String` without a `memcpy` call per
//! piece (and integers, through `itoa`).
//!
//! `sstkit dump-data` writes gigabytes of JSON made of short pieces: a
//! cell's head up to its timestamp (~50 bytes), a 16-digit timestamp, a
//! `"value":` literal. `String::push_str` of a piece whose length is not a
//! constant ends in a call to `memcpy`, which costs more than the copy of
//! so few bytes. Here a piece is kept in a fixed-size array ([`Padded`]) and
//! copied as the whole array — a few vector moves the compiler inlines —
//! with the string's length then advanced by the piece's real length; the
//! bytes past it are overwritten by the next append or never become part
//! of the string.
//!
//! The `unsafe` is confined to `push_fixed` and `push_str_short`: they
//! write into capacity that was reserved first and only ever expose ASCII
//! bytes (or, for `push_str_short`, a whole `str`).

use std::fmt;

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

    /// Append the piece to `out`.
    #[inline(always)]
    pub fn push_to(&self, out: &mut String) {
        // SAFETY: `Padded::new` only keeps ASCII text.
        unsafe { push_fixed(out, &self.bytes, usize::from(self.len)) };
    }
}

/// A piece of text appended often: `Padded` when it is short ASCII, a
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
/// bytes into its spare capacity.
///
/// # Safety
///
/// `bytes[..len]` must be ASCII (only checked in debug builds): [`Padded`]
/// checks it when built, the formatters build their arrays from digits and
/// ASCII literals.
#[inline(always)]
pub(super) unsafe fn push_fixed<const N: usize>(out: &mut String, bytes: &[u8; N], len: usize) {
    debug_assert!(len <= N && bytes[..len].is_ascii());
    let len = len.min(N);
    out.reserve(N);
    // SAFETY: `reserve(N)` makes room for `N` more bytes after the current
    // length, so the `N`-byte copy stays inside the allocation (the source is
    // a whole `[u8; N]`). Only `len <= N` of them become part of the string,
    // and they are ASCII (the caller's promise), so the `String` stays valid
    // UTF-8. The bytes
    // between the new length and `N` are left in the spare capacity, which
    // may hold anything.
    unsafe {
        let v = out.as_mut_vec();
        let end = v.len();
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), v.as_mut_ptr().add(end), N);
        v.set_len(end + len);
    }
}

/// Append `s` like `push_str`, without a `memcpy` call when it is at most
/// 64 bytes long: two overlapping copies of a power-of-two size cover it
/// (what `memcpy` does inside, here inlined). Integers, short texts and
/// ASCII runs of the dump writers are mostly this short.
#[inline(always)]
pub fn push_str_short(out: &mut String, s: &str) {
    let n = s.len();
    if n > 64 {
        out.push_str(s);
        return;
    }
    out.reserve(64);
    // SAFETY: `reserve(64)` leaves at least 64 bytes of capacity after the
    // length, and every copy below writes inside `[len, len + n)` with
    // n <= 64, reading inside `s` (each pair of copies is of a size k with
    // k <= n <= 2k, at offsets 0 and n - k). So exactly the bytes of `s`
    // are appended, and a `str` appended whole keeps the `String` UTF-8.
    unsafe {
        let v = out.as_mut_vec();
        let len = v.len();
        let dst = v.as_mut_ptr().add(len);
        let src = s.as_ptr();
        #[inline(always)]
        unsafe fn two<const K: usize>(src: *const u8, dst: *mut u8, n: usize) {
            std::ptr::copy_nonoverlapping(src, dst, K);
            std::ptr::copy_nonoverlapping(src.add(n - K), dst.add(n - K), K);
        }
        if n >= 16 {
            if n >= 32 {
                two::<32>(src, dst, n);
            } else {
                two::<16>(src, dst, n);
            }
        } else if n >= 8 {
            two::<8>(src, dst, n);
        } else if n >= 4 {
            two::<4>(src, dst, n);
        } else if n > 0 {
            // 1 to 3 bytes: first, middle and last.
            *dst = *src;
            *dst.add(n / 2) = *src.add(n / 2);
            *dst.add(n - 1) = *src.add(n - 1);
        }
        v.set_len(len + n);
    }
}

/// Append the decimal form of `v` (`Long.toString`), with `itoa`: measured
/// faster here than laying the digits out into a fixed-size array (SWAR or
/// table-driven) and appending that, than computing eight digits at a time
/// in a word and storing the words straight into the string (8% slower on
/// the mixed bench table), and than writing the digit pairs in place from
/// the last, after `ilog10` (7% slower).
#[inline]
pub fn push_i64(out: &mut String, v: i64) {
    push_str_short(out, itoa::Buffer::new().format(v));
}

// ------------------------------------------------------------- stack text

/// A short string built on the stack (float digits, small integers).
pub(super) struct StackStr<const N: usize> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> StackStr<N> {
    pub(super) fn new() -> Self {
        StackStr {
            buf: [0; N],
            len: 0,
        }
    }

    pub(super) fn as_str(&self) -> &str {
        // Only whole `&str`s and ASCII are ever copied in.
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or_default()
    }

    /// The bytes written so far.
    pub(super) fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// Append ASCII bytes (dropped when full; callers size `N` for the
    /// longest text they build).
    pub(super) fn push_bytes(&mut self, b: &[u8]) {
        let end = self.len + b.len();
        if let Some(dst) = self.buf.get_mut(self.len..end) {
            dst.copy_from_slice(b);
            self.len = end;
        }
    }
}

impl<const N: usize> fmt::Write for StackStr<N> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        let dst = self.buf.get_mut(self.len..end).ok_or(fmt::Error)?;
        dst.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

// ------------------------------------------------- fast text primitives
//
// `sstkit dump-data` spends most of its time here (gigabytes of JSON for a
// few hundred MB of Data.db), so the leaf formatters avoid `core::fmt`
// (`write!` goes through a `dyn Write` and pads every integer): integers go
// through `itoa`, fixed-width fields are laid out in small stack arrays.

/// Append ASCII bytes (built by the formatters below) to `out`. Non-ASCII
/// input is a caller bug and is dropped.
#[inline]
pub(super) fn push_ascii(out: &mut String, b: &[u8]) {
    // `str::from_utf8` costs more than building these few digits; the ASCII
    // check is a couple of word compares.
    if b.is_ascii() {
        // SAFETY: ASCII bytes are valid UTF-8 on their own, so appending them
        // keeps the `String` valid UTF-8.
        unsafe { out.as_mut_vec() }.extend_from_slice(b);
    }
}

/// Append an ASCII array built by the formatters in one fixed-size copy
/// ([`push_fixed`]).
///
/// # Safety
///
/// `b` must be ASCII (only checked in debug builds).
#[inline(always)]
pub(super) unsafe fn push_array<const N: usize>(out: &mut String, b: &[u8; N]) {
    // SAFETY: the caller's promise, passed on.
    unsafe { push_fixed(out, b, N) };
}

/// Write `v` as exactly `N` zero-padded decimal digits into `b` (`v` must
/// fit; higher digits are dropped).
#[inline]
pub(super) fn digits<const N: usize>(b: &mut [u8], mut v: u64) {
    for d in b[..N].iter_mut().rev() {
        *d = b'0' + (v % 10) as u8;
        v /= 10;
    }
}

/// Append `v` zero-padded to `N` digits (more digits when it does not fit).
#[inline]
pub(super) fn push_padded<const N: usize>(out: &mut String, v: u64) {
    let mut b = [0u8; N];
    if v < 10u64.pow(N as u32) {
        digits::<N>(&mut b, v);
        // SAFETY: `b` holds ASCII digits and ASCII literals only.
        unsafe { push_array(out, &b) };
    } else {
        out.push_str(itoa::Buffer::new().format(v));
    }
}

/// Run an `_into` formatter into a new `String`.
pub(super) fn string(f: impl FnOnce(&mut String)) -> String {
    let mut s = String::new();
    f(&mut s);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn short_strings_append_exactly() {
        let text: String = (0..200u32)
            .map(|i| char::from_u32(0x20 + (i * 7919) % 0x250).unwrap_or('x'))
            .collect();
        for start in 0..8 {
            for n in 0..=text.len().min(100) {
                let Some(piece) = text.get(start..(start + n).min(text.len())) else {
                    continue;
                };
                let mut a = String::from("head:");
                let mut b = a.clone();
                push_str_short(&mut a, piece);
                b.push_str(piece);
                assert_eq!(a, b, "start {start} len {n}");
                // The spare capacity is not part of the string.
                push_str_short(&mut a, "|");
                b.push('|');
                assert_eq!(a, b);
            }
        }
    }

    #[test]
    fn padded_pieces_append_only_their_length() {
        let p = Padded::<16>::new("\"t\":{").unwrap();
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

    #[test]
    fn padded_pieces_of_every_length_keep_their_text() {
        fn check<const N: usize>() {
            let text: String = (0..N).map(|i| char::from(b'!' + (i % 90) as u8)).collect();
            for len in 0..=N {
                let p = Padded::<N>::new(&text[..len]).unwrap();
                let mut s = String::from("x");
                p.push_to(&mut s);
                p.push_to(&mut s);
                assert_eq!(s, format!("x{0}{0}", &text[..len]), "N {N} len {len}");
            }
        }
        check::<1>();
        check::<3>();
        check::<8>();
        check::<20>();
        check::<32>();
        check::<48>();
        check::<96>();
    }
}
