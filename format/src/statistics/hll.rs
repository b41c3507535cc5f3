//! The cardinality estimator in COMPACTION: a HyperLogLog++ sketch as
//! serialized by stream-lib's `HyperLogLogPlus.getBytes` (`ICardinality`).
//!
//! ```text
//! current:  version:i32 (negative, -2)  p:varint  sp:varint  format:varint
//!           format 0 (normal): size:varint  size bytes = size/4 big-endian i32 words
//!           format 1 (sparse): n:varint  n × delta:varint   (sorted sparse set, delta-coded)
//! legacy:   p:i32  sp:i32  format:i32
//!           format 0: size:i32  size bytes of words
//!           format 1: (len:i32 > 0, len bytes)* terminated by len <= 0
//! ```
//!
//! `varint` here is stream-lib's `Varint` (LEB128: 7 bits per byte, low group
//! first, high bit = more), *not* Cassandra's vint. Normal-mode registers are
//! 5 bits wide, six per 32-bit word (`RegisterSet`).
//!
//! Estimates: sparse mode is linear counting over `2^sp` (exact port of
//! `cardinality()`); normal mode is exact except where stream-lib applies its
//! empirical bias correction (raw estimate ≤ 5m and above the linear-counting
//! threshold), which needs tables we do not carry: there the uncorrected raw
//! estimate is returned and [`Cardinality::exact`] is false.
//!
//! NOTE: Scylla writes its own sketch in this slot (e.g. `p = 4`, one byte per
//! register; corpus `scylladb/bad_tombstone_histogram`), which Cassandra would
//! misread; we decode it the stream-lib way too (the estimate is then only
//! indicative), §6.3.

use crate::cur::Cur;
use crate::error::Result;

/// Decoded sketch representation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HllRepr {
    /// Normal (dense) mode: the 32-bit register words.
    Normal(Vec<u32>),
    /// Sparse mode: the sorted sparse set (encoded indexes).
    Sparse(Vec<u32>),
}

/// A decoded HyperLogLog++ sketch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HyperLogLogPlus {
    /// True for the legacy (pre-version-field) encoding.
    pub legacy_encoding: bool,
    /// Normal-mode precision (`m = 2^p` registers).
    pub p: u32,
    /// Sparse precision.
    pub sp: u32,
    /// Registers or sparse set.
    pub repr: HllRepr,
}

/// A cardinality estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cardinality {
    /// The estimate (`ICardinality.cardinality()`).
    pub estimate: u64,
    /// False when stream-lib would have applied a bias correction we skip.
    pub exact: bool,
}

fn varint(cur: &mut Cur<'_>, what: &'static str) -> Result<u32> {
    let mut v: u64 = 0;
    for i in 0..5 {
        let b = cur.u8(what)?;
        v |= ((b & 0x7F) as u64) << (7 * i);
        if b & 0x80 == 0 {
            return Ok(v as u32);
        }
    }
    Err(cur.bad(what, "varint longer than 5 bytes"))
}

impl HyperLogLogPlus {
    /// Decode from the cardinality bytes.
    pub fn parse(cur: &mut Cur<'_>) -> Result<HyperLogLogPlus> {
        let first = cur.i32("hll version")?;
        let legacy = first >= 0;
        let (p, sp, format) = if legacy {
            let sp = cur.i32("hll sp")?;
            let fmt = cur.i32("hll format")?;
            (first as u32, sp as u32, fmt as u32)
        } else {
            (
                varint(cur, "hll p")?,
                varint(cur, "hll sp")?,
                varint(cur, "hll format")?,
            )
        };
        if !(4..=30).contains(&p) || sp > 32 || (sp != 0 && p > sp) {
            return Err(cur.bad("hll precision", format!("p={p} sp={sp} out of range")));
        }
        let repr = match format {
            0 => {
                let size = if legacy {
                    cur.i32("hll size")?.max(0) as u32
                } else {
                    varint(cur, "hll size")?
                };
                let b = cur.bytes_len(size as u64, "hll registers")?;
                // `RegisterSet`: 6 registers per word; too few words for
                // 2^p registers means a corrupt sketch (and would make the
                // estimate loop over registers that are not there).
                if (b.len() / 4) < (1usize << p) / 6 {
                    return Err(cur.bad(
                        "hll registers",
                        format!("{} bytes for 2^{p} registers", b.len()),
                    ));
                }
                HllRepr::Normal(
                    b.chunks(4)
                        .map(|c| c.iter().fold(0u32, |a, &x| (a << 8) | x as u32))
                        .collect(),
                )
            }
            1 if legacy => {
                // Legacy sparse: delta byte chunks, each a varint stream.
                let mut set = Vec::new();
                let mut prev: u32 = 0;
                loop {
                    if cur.is_empty() {
                        break;
                    }
                    let l = cur.i32("hll sparse chunk length")?;
                    if l <= 0 {
                        break;
                    }
                    let mut chunk = cur.split(l as u64, "hll sparse chunk")?;
                    while !chunk.is_empty() {
                        prev = prev.wrapping_add(varint(&mut chunk, "hll sparse delta")?);
                        set.push(prev);
                    }
                }
                HllRepr::Sparse(set)
            }
            1 => {
                let n = varint(cur, "hll sparse count")?;
                let n = cur.count(n as u64, 1, "hll sparse count")?;
                let mut set = Vec::with_capacity(n);
                let mut prev: u32 = 0;
                for _ in 0..n {
                    prev = prev.wrapping_add(varint(cur, "hll sparse delta")?);
                    set.push(prev);
                }
                HllRepr::Sparse(set)
            }
            f => return Err(cur.bad("hll format", format!("unknown format {f}"))),
        };
        Ok(HyperLogLogPlus {
            legacy_encoding: legacy,
            p,
            sp,
            repr,
        })
    }

    /// Register `j` of a normal-mode sketch (5-bit, six per word).
    pub fn register(words: &[u32], j: usize) -> u32 {
        let w = j / 6;
        let shift = 5 * (j - w * 6);
        words.get(w).map(|x| (x >> shift) & 0x1F).unwrap_or(0)
    }

    /// The estimate, following stream-lib's `cardinality()`.
    pub fn cardinality(&self) -> Cardinality {
        let linear = |m: f64, v: f64| m * (m / v).ln();
        match &self.repr {
            HllRepr::Sparse(set) => {
                let sm = if self.sp > 30 {
                    i32::MAX as f64
                } else {
                    (1u64 << self.sp) as f64
                };
                let v = sm - set.len() as f64;
                let est = if v <= 0.0 {
                    f64::INFINITY
                } else {
                    linear(sm, v)
                };
                Cardinality {
                    estimate: java_round(est),
                    exact: true,
                }
            }
            HllRepr::Normal(words) => {
                let m = 1usize << self.p;
                let mut sum = 0.0f64;
                let mut zeros = 0.0f64;
                for j in 0..m {
                    let r = Self::register(words, j);
                    sum += 2f64.powi(-(r as i32));
                    if r == 0 {
                        zeros += 1.0;
                    }
                }
                let mf = m as f64;
                let alpha_mm = match self.p {
                    4 => 0.673 * mf * mf,
                    5 => 0.697 * mf * mf,
                    6 => 0.709 * mf * mf,
                    _ => (0.7213 / (1.0 + 1.079 / mf)) * mf * mf,
                };
                let estimate = alpha_mm * (1.0 / sum);
                let biased = estimate <= 5.0 * mf && self.p <= 18;
                let h = if zeros > 0.0 {
                    linear(mf, zeros)
                } else {
                    estimate
                };
                const THRESHOLD: [f64; 15] = [
                    10.0, 20.0, 40.0, 80.0, 220.0, 400.0, 900.0, 1800.0, 3100.0, 6500.0, 11500.0,
                    20000.0, 50000.0, 120000.0, 350000.0,
                ];
                let use_h = if self.p <= 18 {
                    h < THRESHOLD[(self.p - 4) as usize]
                } else {
                    estimate <= 5.0 * mf
                };
                if use_h {
                    // With zeros present `h` is linear counting (no bias);
                    // without, it is the bias-corrected estimate.
                    Cardinality {
                        estimate: java_round(h),
                        exact: zeros > 0.0 || !biased,
                    }
                } else {
                    Cardinality {
                        estimate: java_round(estimate),
                        exact: !biased,
                    }
                }
            }
        }
    }
}

/// Java `Math.round(double)`: floor(x + 0.5), saturating, NaN → 0.
fn java_round(x: f64) -> u64 {
    if x.is_nan() {
        return 0;
    }
    let r = (x + 0.5).floor();
    if r <= 0.0 {
        0
    } else {
        r as i64 as u64
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::component::Component;

    #[test]
    fn sparse_linear_counting() {
        // version -2, p=13, sp=25, sparse, 3 entries deltas 5,1,1
        let b = [0xFF, 0xFF, 0xFF, 0xFE, 13, 25, 1, 3, 5, 1, 1];
        let mut c = Cur::new(&b, Component::Statistics, 0);
        let h = HyperLogLogPlus::parse(&mut c).unwrap();
        assert!(c.is_empty());
        assert_eq!(h.repr, HllRepr::Sparse(vec![5, 6, 7]));
        assert_eq!(
            h.cardinality(),
            Cardinality {
                estimate: 3,
                exact: true
            }
        );
    }

    #[test]
    fn normal_empty_is_zero() {
        let mut b = vec![0xFF, 0xFF, 0xFF, 0xFE, 4, 0, 0, 12];
        b.extend_from_slice(&[0u8; 12]);
        let mut c = Cur::new(&b, Component::Statistics, 0);
        let h = HyperLogLogPlus::parse(&mut c).unwrap();
        assert_eq!(h.cardinality().estimate, 0);
        assert!(HyperLogLogPlus::parse(&mut Cur::new(
            &[0xFF, 0xFF, 0xFF, 0xFE, 40],
            Component::Statistics,
            0
        ))
        .is_err());
    }
}
