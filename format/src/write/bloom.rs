//! A minimal bloom filter writer (Filter.db, §9): sized from the expected
//! key count and the false-positive chance, laid out and hashed as the
//! target version reads it. Every key added is found again; the sizing is
//! the textbook optimum, not C\*'s `BloomCalculations` table, so the bits
//! differ from Cassandra's (the fp chance is met or bettered).

use crate::filter::BloomFilter;
use crate::Features;

use super::KeyFilter;

/// Extra bits C\* adds to every filter (`FilterFactory.EXCESS`).
const EXCESS: u64 = 20;

/// Filter.db under construction.
#[derive(Debug, Clone)]
pub struct Bloom {
    probe: BloomFilter,
    hash_count: u32,
    bits: Vec<u8>,
    old_format: bool,
}

impl Bloom {
    /// A filter for about `keys` keys at false-positive chance `fp`; `None`
    /// when no filter is to be written (`fp >= 1`, as C\*) or `fp` is out of range.
    pub fn new(keys: u64, fp: f64, f: &Features) -> Option<Bloom> {
        if !(fp > 0.0 && fp < 1.0) {
            return None;
        }
        let ln2 = std::f64::consts::LN_2;
        let buckets = (-fp.ln() / (ln2 * ln2)).ceil().max(1.0);
        let hash_count = ((buckets * ln2).round() as u32).clamp(1, 20);
        let bits = keys
            .max(1)
            .saturating_mul(buckets as u64)
            .saturating_add(EXCESS);
        let words = bits.div_ceil(64).min(i32::MAX as u64 / 8);
        let mut header = Vec::with_capacity(8 + 8 * words as usize);
        header.extend_from_slice(&(hash_count as i32).to_be_bytes());
        header.extend_from_slice(&(words as i32).to_be_bytes());
        header.resize(8 + 8 * words as usize, 0);
        // The reader's probe order for this version, over an empty array.
        let probe = BloomFilter::parse(&header, f).ok()?;
        Some(Bloom {
            probe,
            hash_count,
            bits: vec![0; 8 * words as usize],
            old_format: f.old_bf_format,
        })
    }
}

impl KeyFilter for Bloom {
    fn add(&mut self, key: &[u8]) {
        for i in self.probe.indexes(key) {
            // `< na`: big-endian 64-bit words; `na`+: the raw byte array.
            let byte = if self.old_format {
                (i / 64) * 8 + 7 - (i % 64) / 8
            } else {
                i / 8
            };
            if let Some(b) = self.bits.get_mut(byte as usize) {
                *b |= 1 << (i % 8);
            }
        }
    }

    fn serialize(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(8 + self.bits.len());
        v.extend_from_slice(&(self.hash_count as i32).to_be_bytes());
        v.extend_from_slice(&((self.bits.len() / 8) as i32).to_be_bytes());
        v.extend_from_slice(&self.bits);
        v
    }
}

/// The number of partitions Statistics.db counts (the partition-size
/// histogram's total), what a filter for a rewrite of it is sized for.
pub fn expected_keys(st: &crate::statistics::Statistics) -> u64 {
    st.stats
        .as_ref()
        .map(|s| {
            s.estimated_partition_size
                .pairs
                .iter()
                .map(|p| p.1.max(0) as u64)
                .sum()
        })
        .unwrap_or(0)
}

/// The filter a new sstable of `features` gets: sized for `keys` keys at
/// chance `fp` (none when `fp >= 1`).
pub fn filter_for(keys: u64, fp: f64, features: &Features) -> Option<Box<dyn KeyFilter>> {
    Bloom::new(keys, fp, features).map(|b| Box::new(b) as Box<dyn KeyFilter>)
}
