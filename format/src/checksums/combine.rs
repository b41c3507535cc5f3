//! Running whole-file digests, extended by combining chunk checksums rather
//! than hashing the bytes twice.

use super::{DigestAlgo, DigestValue};
use crate::digest::ChecksumAlgo;

/// A running whole-file digest.
#[derive(Clone)]
pub(super) enum Running {
    /// The CRC32 so far, and how to append to it by combination.
    Crc32(u32, Box<Crc32Combiner>),
    Adler32(u32),
    Sha1(Box<sha1_smol::Sha1>),
}

impl Running {
    pub(super) fn new(algo: DigestAlgo) -> Running {
        match algo {
            DigestAlgo::Checksum(ChecksumAlgo::Crc32) => Running::Crc32(0, Box::default()),
            DigestAlgo::Checksum(ChecksumAlgo::Adler32) => Running::Adler32(1),
            DigestAlgo::Sha1 => Running::Sha1(Box::default()),
        }
    }

    pub(super) fn update(&mut self, b: &[u8]) {
        match self {
            Running::Crc32(v, _) => {
                let mut h = crc32fast::Hasher::new_with_initial(*v);
                h.update(b);
                *v = h.finalize();
            }
            Running::Adler32(v) => {
                let mut a = adler::Adler32::from_checksum(*v);
                a.write_slice(b);
                *v = a.checksum();
            }
            Running::Sha1(s) => s.update(b),
        }
    }

    /// Extend by `len` bytes whose checksum (same algorithm) is `sum`. Only
    /// used when the algorithms agree, so never for SHA-1.
    pub(super) fn append(&mut self, sum: u32, len: u64) {
        match self {
            Running::Crc32(v, c) => *v = c.combine(*v, sum, len),
            Running::Adler32(v) => *v = adler32_combine(*v, sum, len),
            Running::Sha1(_) => {}
        }
    }

    /// The checksum so far (None for SHA-1).
    pub(super) fn checksum(&self) -> Option<u32> {
        match self {
            Running::Crc32(v, _) | Running::Adler32(v) => Some(*v),
            Running::Sha1(_) => None,
        }
    }

    pub(super) fn value(&self) -> DigestValue {
        match self {
            Running::Crc32(v, _) => DigestValue::Checksum(*v),
            Running::Adler32(v) => DigestValue::Checksum(*v),
            Running::Sha1(s) => DigestValue::Sha1(s.digest().bytes()),
        }
    }
}

/// Combining CRC32s (zlib's `crc32_combine`): over GF(2), with reflected
/// polynomials, `crc(A ‖ B) = crc(A) · x^(8·len(B)) mod P ⊕ crc(B)`.
///
/// NOTE: `crc32fast::Hasher::combine` does the same but recomputes
/// `x^(8·len)` (one multiplication per set bit of `len`) on every call; chunk
/// payload lengths repeat, so the powers are cached here by length, making an
/// append one multiplication.
#[derive(Clone)]
pub struct Crc32Combiner {
    /// `x^(8·2^i) mod P`.
    pow2: [u32; 64],
    /// `x^(8·len) mod P` by `len`, filled on first use (0: not yet; no power is 0).
    cache: Vec<u32>,
}

impl Default for Crc32Combiner {
    fn default() -> Self {
        Self::new()
    }
}

impl Crc32Combiner {
    /// Lengths below this are cached (512 KiB of cache at most).
    const CACHED: usize = 1 << 17;
    /// The reflected CRC32 polynomial.
    const POLY: u32 = 0xedb8_8320;

    /// A combiner with an empty cache.
    pub fn new() -> Self {
        let mut pow2 = [0u32; 64];
        let mut p = 0x0080_0000; // x^8, reflected
        for x in pow2.iter_mut() {
            *x = p;
            p = Self::multiply(p, p);
        }
        Crc32Combiner {
            pow2,
            cache: Vec::new(),
        }
    }

    /// `a · b mod P`, reflected.
    fn multiply(a: u32, mut b: u32) -> u32 {
        let mut p = 0u32;
        for i in 0..32 {
            p ^= b & ((a >> (31 - i)) & 1).wrapping_neg();
            b = (b >> 1) ^ ((b & 1).wrapping_neg() & Self::POLY);
        }
        p
    }

    /// `x^(8·len) mod P`, reflected.
    fn x8n(&mut self, len: u64) -> u32 {
        let slot = usize::try_from(len).ok().filter(|&l| l < Self::CACHED);
        if let Some(l) = slot {
            if let Some(&v) = self.cache.get(l).filter(|&&v| v != 0) {
                return v;
            }
        }
        let mut p = 0x8000_0000; // x^0, reflected
        for (i, &x) in self.pow2.iter().enumerate() {
            if len >> i & 1 != 0 {
                p = Self::multiply(x, p);
            }
        }
        if let Some(l) = slot {
            if self.cache.len() <= l {
                self.cache
                    .resize((l + 1).next_power_of_two().min(Self::CACHED), 0);
            }
            if let Some(c) = self.cache.get_mut(l) {
                *c = p;
            }
        }
        p
    }

    /// The CRC32 of `A ‖ B` from `crc1 = crc32(A)`, `crc2 = crc32(B)` and `len2 = len(B)`.
    pub fn combine(&mut self, crc1: u32, crc2: u32, len2: u64) -> u32 {
        if len2 == 0 {
            return crc1;
        }
        Self::multiply(self.x8n(len2), crc1) ^ crc2
    }
}

/// zlib's `adler32_combine`: the Adler-32 of `A ‖ B` from `adler32(A)`,
/// `adler32(B)` and `len(B)`.
pub fn adler32_combine(adler1: u32, adler2: u32, len2: u64) -> u32 {
    const BASE: u64 = 65521;
    let rem = len2 % BASE;
    let (a1, b1) = ((adler1 & 0xffff) as u64, (adler1 >> 16) as u64);
    let (a2, b2) = ((adler2 & 0xffff) as u64, (adler2 >> 16) as u64);
    let sum1 = (a1 + a2 + BASE - 1) % BASE;
    let sum2 = (rem * a1 % BASE + b1 + b2 + BASE - rem) % BASE;
    (sum1 | (sum2 << 16)) as u32
}
