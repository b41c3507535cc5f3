//! Filter.db writer: the bloom filter over partition keys, sized and laid
//! out as Cassandra does (`shared/docs/sstable-format.md` §9; C\*
//! `o.a.c/utils/FilterFactory.java` (`getFilter`, `createFilter`),
//! `o.a.c/utils/BloomCalculations.java`, `o.a.c/utils/obs/OffHeapBitSet.java`,
//! `o.a.c/utils/BloomFilterSerializer.java`).
//!
//! Sizing from the expected key count `n` and the false-positive chance `p`:
//!
//! ```text
//! max_buckets = min(20, (i64::MAX - 20) / max(1, n))        maxBucketsPerElement
//! (k, buckets) = the fewest buckets per key whose best hash count
//!                reaches p in the table, then the fewest hashes still
//!                reaching it                                  computeBloomSpec
//! bits = n × buckets + 20;  words = ⌈bits / 64⌉               createFilter
//! ```
//!
//! `p >= 1` means no filter at all (C\* writes no Filter.db). The layout and
//! hash order follow the target version ([`crate::filter`]): `na`+ bytes in
//! order, older versions big-endian words; `ka`/`la` the old hash order.

use std::io::Write;

use crate::component::Component;
use crate::error::{Error, ErrorKind, Result};
use crate::filter::{bit_byte, probe};
use crate::version::Features;

/// False-positive rates by buckets per key (row) and hash count (column)
/// (`BloomCalculations.probs`); column 0 and rows 0–1 are placeholders.
const PROBS: [&[f64]; 21] = [
    &[1.0],
    &[1.0, 1.0],
    &[1.0, 0.393, 0.400],
    &[1.0, 0.283, 0.237, 0.253],
    &[1.0, 0.221, 0.155, 0.147, 0.160],
    &[1.0, 0.181, 0.109, 0.092, 0.092, 0.101],
    &[1.0, 0.154, 0.0804, 0.0609, 0.0561, 0.0578, 0.0638],
    &[1.0, 0.133, 0.0618, 0.0423, 0.0359, 0.0347, 0.0364],
    &[1.0, 0.118, 0.0489, 0.0306, 0.024, 0.0217, 0.0216, 0.0229],
    &[
        1.0, 0.105, 0.0397, 0.0228, 0.0166, 0.0141, 0.0133, 0.0135, 0.0145,
    ],
    &[
        1.0, 0.0952, 0.0329, 0.0174, 0.0118, 0.00943, 0.00844, 0.00819, 0.00846,
    ],
    &[
        1.0, 0.0869, 0.0276, 0.0136, 0.00864, 0.0065, 0.00552, 0.00513, 0.00509,
    ],
    &[
        1.0, 0.08, 0.0236, 0.0108, 0.00646, 0.00459, 0.00371, 0.00329, 0.00314,
    ],
    &[
        1.0, 0.074, 0.0203, 0.00875, 0.00492, 0.00332, 0.00255, 0.00217, 0.00199, 0.00194,
    ],
    &[
        1.0, 0.0689, 0.0177, 0.00718, 0.00381, 0.00244, 0.00179, 0.00146, 0.00129, 0.00121, 0.0012,
    ],
    &[
        1.0, 0.0645, 0.0156, 0.00596, 0.003, 0.00183, 0.00128, 0.001, 0.000852, 0.000775, 0.000744,
    ],
    &[
        1.0, 0.0606, 0.0138, 0.005, 0.00239, 0.00139, 0.000935, 0.000702, 0.000574, 0.000505,
        0.00047, 0.000459,
    ],
    &[
        1.0, 0.0571, 0.0123, 0.00423, 0.00193, 0.00107, 0.000692, 0.000499, 0.000394, 0.000335,
        0.000302, 0.000287, 0.000284,
    ],
    &[
        1.0, 0.054, 0.0111, 0.00362, 0.00158, 0.000839, 0.000519, 0.00036, 0.000275, 0.000226,
        0.000198, 0.000183, 0.000176,
    ],
    &[
        1.0, 0.0513, 0.00998, 0.00312, 0.0013, 0.000663, 0.000394, 0.000264, 0.000194, 0.000155,
        0.000132, 0.000118, 0.000111, 0.000109,
    ],
    &[
        1.0, 0.0488, 0.00906, 0.0027, 0.00108, 0.00053, 0.000303, 0.000196, 0.00014, 0.000108,
        8.89e-05, 7.77e-05, 7.12e-05, 6.79e-05, 6.71e-05,
    ],
];

/// Bits added to every filter (`FilterFactory.BITSET_EXCESS`).
const EXCESS: u64 = 20;

/// The hash count with the lowest rate for `buckets` per key (the first
/// one on ties, at least 1: `optKPerBuckets`).
fn opt_k(buckets: usize) -> usize {
    let row = PROBS[buckets];
    let mut best = (f64::MAX, 1);
    for (j, &p) in row.iter().enumerate() {
        if p < best.0 {
            best = (p, j.max(1));
        }
    }
    best.1
}

/// `(hash count, buckets per key)` for `expected_keys` keys and the chance
/// `fp` (`maxBucketsPerElement` then `computeBloomSpec`); `None` when the
/// table cannot reach `fp`.
pub fn bloom_spec(expected_keys: u64, fp: f64) -> Option<(u32, u32)> {
    let n = expected_keys.clamp(1, i64::MAX as u64);
    let v = (i64::MAX - EXCESS as i64) as f64 / n as f64;
    let max_buckets = if v < 1.0 {
        return None;
    } else {
        (PROBS.len() - 1).min(v as usize)
    };
    // C*'s trivial case, arguments as it passes them: K = 2 and
    // optKPerBuckets[2] buckets.
    if fp >= PROBS[2][1] {
        return Some((2, opt_k(2) as u32));
    }
    let max_k = PROBS[max_buckets].len() - 1;
    if max_buckets < 2 || fp < PROBS[max_buckets][max_k] {
        return None;
    }
    let mut buckets = 2;
    let mut k = opt_k(2);
    while PROBS[buckets][k] > fp {
        buckets += 1;
        if buckets > max_buckets {
            return None;
        }
        k = opt_k(buckets);
    }
    while k > 1 && PROBS[buckets][k - 1] <= fp {
        k -= 1;
    }
    Some((k as u32, buckets as u32))
}

/// Builds Filter.db incrementally: sized up front from the expected key
/// count, then one [`FilterBuilder::add`] per partition key. Memory is the
/// bit array (`(expected_keys × buckets + 20) / 8` bytes, about 1.2 bytes a
/// key at the default chance 0.01).
///
/// ```
/// use sstkit_format::filter::BloomFilter;
/// use sstkit_format::version::Version;
/// use sstkit_format::write::filter::FilterBuilder;
///
/// let features = Version::parse("da").unwrap().features();
/// let mut f = FilterBuilder::new(2, 0.01, &features)?;
/// f.add(b"key1");
/// f.add(b"key2");
/// let mut filter_db = Vec::new();
/// f.write_to(&mut filter_db)?;
/// let read = BloomFilter::parse(&filter_db, &features)?;
/// assert!(read.may_contain(b"key1") && read.may_contain(b"key2"));
/// # Ok::<(), sstkit_format::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct FilterBuilder {
    hash_count: u32,
    /// The bit array in the target layout; empty when no filter is written.
    bits: Vec<u8>,
    old_format: bool,
    old_hash_order: bool,
    enabled: bool,
}

impl FilterBuilder {
    /// A filter for about `expected_keys` keys with false-positive chance
    /// `fp_chance` (C\*'s default is 0.01), in the layout and hash order of
    /// the version whose `features` are given. `fp_chance >= 1` builds no
    /// filter ([`FilterBuilder::writes_file`] is false). Errors when the
    /// chance is out of range or cannot be reached, or the filter would
    /// exceed C\*'s limit of `i32::MAX` words.
    pub fn new(expected_keys: u64, fp_chance: f64, features: &Features) -> Result<FilterBuilder> {
        let bad =
            |m: String| Error::at(ErrorKind::BadValue(m), Component::Filter, 0, "bloom filter");
        let mut b = FilterBuilder {
            hash_count: 0,
            bits: Vec::new(),
            old_format: features.old_bf_format,
            old_hash_order: features.old_bf_hash_order,
            enabled: false,
        };
        if fp_chance.is_nan() || fp_chance <= 0.0 {
            return Err(bad(format!(
                "false-positive chance {fp_chance} out of range"
            )));
        }
        if fp_chance >= 1.0 {
            return Ok(b);
        }
        let (k, buckets) = bloom_spec(expected_keys, fp_chance).ok_or_else(|| {
            bad(format!(
                "false-positive chance {fp_chance} cannot be reached for {expected_keys} keys"
            ))
        })?;
        let bits = expected_keys
            .checked_mul(buckets as u64)
            .and_then(|x| x.checked_add(EXCESS))
            .ok_or_else(|| bad(format!("{expected_keys} keys overflow the bit count")))?;
        let words = (bits - 1) / 64 + 1;
        if words > i32::MAX as u64 {
            return Err(bad(format!(
                "{expected_keys} keys need {words} words, more than a filter holds"
            )));
        }
        b.hash_count = k;
        b.bits = vec![0; words as usize * 8];
        b.enabled = true;
        Ok(b)
    }

    /// False when no Filter.db is written (`fp_chance >= 1`).
    pub fn writes_file(&self) -> bool {
        self.enabled
    }

    /// Number of hash functions.
    pub fn hash_count(&self) -> u32 {
        self.hash_count
    }

    /// Number of 64-bit words of the bit array.
    pub fn word_count(&self) -> u64 {
        self.bits.len() as u64 / 8
    }

    /// Add a partition key (serialized).
    pub fn add(&mut self, key: &[u8]) {
        let m = self.bits.len() as u64 * 8;
        let (bits, old) = (&mut self.bits, self.old_format);
        probe(key, self.hash_count, m, self.old_hash_order, |i| {
            if let Some(b) = bits.get_mut(bit_byte(i, old) as usize) {
                *b |= 1 << (i % 8);
            }
        });
    }

    /// Serialized size of Filter.db (0 when none is written).
    pub fn serialized_size(&self) -> u64 {
        if self.enabled {
            8 + self.bits.len() as u64
        } else {
            0
        }
    }

    /// Write Filter.db (`hash_count:i32 word_count:i32 bits`); nothing when
    /// [`FilterBuilder::writes_file`] is false.
    pub fn write_to<W: Write>(&self, mut w: W) -> Result<()> {
        if !self.enabled {
            return Ok(());
        }
        let io = |e: std::io::Error| {
            Error::at(
                ErrorKind::Io(e.kind(), e.to_string()),
                Component::Filter,
                0,
                "writing the bloom filter",
            )
        };
        w.write_all(&(self.hash_count as i32).to_be_bytes())
            .map_err(io)?;
        w.write_all(&(self.word_count() as i32).to_be_bytes())
            .map_err(io)?;
        w.write_all(&self.bits).map_err(io)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
