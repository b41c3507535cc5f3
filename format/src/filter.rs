//! Filter.db: the bloom filter over partition keys.
//!
//! `shared/docs/sstable-format.md` §9; C\* `o.a.c/utils/BloomFilterSerializer.java`,
//! `o.a.c/utils/BloomFilter.java` (`indexes`, `setIndexes`),
//! `o.a.c/utils/obs/OffHeapBitSet.java` (`serialize`, `serializeOldBfFormat`),
//! `o.a.c/utils/FBUtilities.abs`; Scylla `sstables/types.hh` (`filter`).
//!
//! | offset | field | type |
//! |---|---|---|
//! | 0 | hash_count | i32 |
//! | 4 | word_count | i32 |
//! | 8 | bits | 8 × word_count bytes; `m = 64 × word_count` bits |
//!
//! Bit `i` lives at (NOTE §9, two layouts):
//!
//! * `features.old_bf_format` (`< na`, every Scylla version): word `i / 64`
//!   read as a big-endian u64, bit `i % 64` (LSB = 0) — i.e. byte
//!   `8 × (i / 64) + 7 − (i % 64) / 8`, bit `i % 8`;
//! * `na`+: byte `i / 8`, bit `i % 8` (LSB = 0).
//!
//! Indexes of key `k` (the raw serialized partition key):
//!
//! ```text
//! (h1, h2) = murmur3_x64_128(k)                       §10.1, both as i64
//! base, inc = (h2, h1)    ma+      |   (h1, h2)  ka/la (features.old_bf_hash_order)
//! for j in 0..hash_count:  idx_j = |base % m| (Java signed remainder, then abs);  base += inc (wrapping)
//! ```
//!
//! A filter with `word_count = 0` (or a missing Filter.db) answers "maybe" for every key.

use crate::component::Component;
use crate::cur::Cur;
use crate::error::Result;
use crate::token::murmur3_x64_128;
use crate::version::Features;

/// The largest hash count accepted. Cassandra and Scylla choose at most
/// 20 (`BloomCalculations`); a count read from a corrupt file would
/// otherwise size [`BloomFilter::indexes`] and the probe loop.
pub const MAX_HASH_COUNT: u32 = 1024;

/// A decoded bloom filter.
#[derive(Debug, Clone)]
pub struct BloomFilter {
    hash_count: u32,
    bits: Vec<u8>,
    old_format: bool,
    old_hash_order: bool,
}

impl BloomFilter {
    /// Decode a whole Filter.db. The bit array must fill the rest of the file exactly.
    pub fn parse(bytes: &[u8], features: &Features) -> Result<BloomFilter> {
        let mut cur = Cur::new(bytes, Component::Filter, 0);
        let at = cur.clone();
        let hash_count = cur.i32("filter hash count")?;
        let hash_count = u32::try_from(hash_count).map_err(|_| {
            at.bad(
                "filter hash count",
                format!("negative hash count {hash_count}"),
            )
        })?;
        if hash_count > MAX_HASH_COUNT {
            return Err(at.bad(
                "filter hash count",
                format!("hash count {hash_count} out of range (at most {MAX_HASH_COUNT})"),
            ));
        }
        let at = cur.clone();
        let words = cur.i32("filter word count")?;
        let words = u64::try_from(words)
            .map_err(|_| at.bad("filter word count", format!("negative word count {words}")))?;
        let bits = cur.bytes_len(words * 8, "filter bits")?.to_vec();
        if !cur.is_empty() {
            return Err(cur.bad(
                "filter bits",
                format!("{} bytes after the {words}-word bit array", cur.remaining()),
            ));
        }
        Ok(BloomFilter {
            hash_count,
            bits,
            old_format: features.old_bf_format,
            old_hash_order: features.old_bf_hash_order,
        })
    }

    /// The same bits read with another layout and hash order.
    ///
    /// NOTE: a few real files do not follow their version's convention:
    /// C\* `test/data/bloom-filter/la` (corpus `bloom-filter-la`) uses the old
    /// word layout with the *new* hash order, and the pre-release-4.0
    /// `legacy_na_*_compact` files (§16) use the old word layout with the new
    /// hash order too. A filter is not self-describing, so a checker that finds
    /// real keys rejected can retry with this to diagnose such files.
    pub fn with_layout(mut self, old_format: bool, old_hash_order: bool) -> BloomFilter {
        self.old_format = old_format;
        self.old_hash_order = old_hash_order;
        self
    }

    /// This filter read with the first layout (its version's own first)
    /// under which every key of `keys`, known to be in the sstable, may be
    /// present; `None` when no layout holds them all (a damaged filter, or
    /// another sstable's). A reader that rejects keys with the filter checks
    /// it against known keys first: read with the wrong layout it rejects
    /// keys that are there (see [`BloomFilter::with_layout`]).
    pub fn fitted(self, keys: &[&[u8]]) -> Option<BloomFilter> {
        let holds = |f: &BloomFilter| keys.iter().all(|k| f.may_contain(k));
        if holds(&self) {
            return Some(self);
        }
        let (of, oh) = (self.old_format, self.old_hash_order);
        let mut f = self;
        for (a, b) in [(!of, oh), (of, !oh), (!of, !oh)] {
            f = f.with_layout(a, b);
            if holds(&f) {
                return Some(f);
            }
        }
        None
    }

    /// True when bits are read as big-endian u64 words (`< na`, Scylla).
    pub fn old_format(&self) -> bool {
        self.old_format
    }

    /// True when the `ka`/`la` hash order (base = h1, inc = h2) is used.
    pub fn old_hash_order(&self) -> bool {
        self.old_hash_order
    }

    /// Number of hash functions.
    pub fn hash_count(&self) -> u32 {
        self.hash_count
    }

    /// Number of 64-bit words.
    pub fn word_count(&self) -> u64 {
        self.bits.len() as u64 / 8
    }

    /// Number of bits, `64 × word_count`.
    pub fn bit_count(&self) -> u64 {
        self.bits.len() as u64 * 8
    }

    /// Number of bits set.
    pub fn bits_set(&self) -> u64 {
        self.bits.iter().map(|b| b.count_ones() as u64).sum()
    }

    /// Fraction of bits set (0 for an empty filter).
    pub fn fill_ratio(&self) -> f64 {
        match self.bit_count() {
            0 => 0.0,
            m => self.bits_set() as f64 / m as f64,
        }
    }

    /// Estimated false-positive probability for an absent key:
    /// `fill_ratio ^ hash_count` (1 for an empty filter, which always says maybe).
    pub fn false_positive_estimate(&self) -> f64 {
        if self.bit_count() == 0 {
            return 1.0;
        }
        self.fill_ratio()
            .powi(self.hash_count.min(i32::MAX as u32) as i32)
    }

    /// Estimated number of distinct keys inserted (Swamidass & Baldi):
    /// `−m / k × ln(1 − X / m)`; `None` when empty or saturated.
    pub fn estimated_keys(&self) -> Option<f64> {
        let (m, x, k) = (
            self.bit_count() as f64,
            self.bits_set() as f64,
            self.hash_count as f64,
        );
        if m == 0.0 || k == 0.0 || x >= m {
            return None;
        }
        Some(-m / k * (1.0 - x / m).ln())
    }

    /// The bit indexes probed for `key`, in probe order.
    pub fn indexes(&self, key: &[u8]) -> Vec<u64> {
        let mut out = Vec::with_capacity(self.hash_count as usize);
        self.probe(key, |i| out.push(i));
        out
    }

    /// Whether bit `i` is set (false past the end).
    pub fn get(&self, i: u64) -> bool {
        usize::try_from(bit_byte(i, self.old_format))
            .ok()
            .and_then(|b| self.bits.get(b))
            .is_some_and(|b| b & (1 << (i % 8)) != 0)
    }

    /// False only when `key` is certainly absent.
    pub fn may_contain(&self, key: &[u8]) -> bool {
        if self.bits.is_empty() {
            return true;
        }
        // Probed in place: no vector of indexes per key (validate asks for every key).
        let mut all = true;
        self.probe(key, |i| all &= self.get(i));
        all
    }

    fn probe(&self, key: &[u8], f: impl FnMut(u64)) {
        probe(
            key,
            self.hash_count,
            self.bit_count(),
            self.old_hash_order,
            f,
        );
    }
}

/// Call `f` with each bit index probed for `key` in a filter of `m` bits
/// and `hash_count` hashes, in probe order (`BloomFilter.indexes`); none
/// when `m = 0`.
pub(crate) fn probe(
    key: &[u8],
    hash_count: u32,
    m: u64,
    old_hash_order: bool,
    mut f: impl FnMut(u64),
) {
    let m = m.min(i64::MAX as u64) as i64;
    if m == 0 {
        return;
    }
    let (h1, h2) = murmur3_x64_128(key);
    // NOTE: the hash order changed in 3.0 (§9).
    let (mut base, inc) = if old_hash_order { (h1, h2) } else { (h2, h1) };
    for _ in 0..hash_count {
        // Java `%` is a signed remainder; FBUtilities.abs then flips the sign.
        f((base % m).unsigned_abs());
        base = base.wrapping_add(inc);
    }
}

/// The byte of the bit array holding bit `i` (bit `i % 8` of it) in the old
/// word layout or the `na`+ byte layout.
pub(crate) fn bit_byte(i: u64, old_format: bool) -> u64 {
    if old_format {
        (i / 64) * 8 + 7 - (i % 64) / 8
    } else {
        i / 8
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::index::IndexReader;
    use crate::test_support as corpus;
    use crate::version::Version;
    use proptest::prelude::*;

    fn feats(v: &str) -> Features {
        Version::parse(v).unwrap().features()
    }

    /// Build a filter the way C* does, in the layout `v` implies.
    fn build(keys: &[&[u8]], words: usize, hashes: u32, v: &str) -> Vec<u8> {
        let f = feats(v);
        let empty = BloomFilter {
            hash_count: hashes,
            bits: vec![0; words * 8],
            old_format: f.old_bf_format,
            old_hash_order: f.old_bf_hash_order,
        };
        let mut bits = vec![0u8; words * 8];
        for k in keys {
            for i in empty.indexes(k) {
                let byte = if f.old_bf_format {
                    (i / 64) * 8 + 7 - (i % 64) / 8
                } else {
                    i / 8
                };
                bits[byte as usize] |= 1 << (i % 8);
            }
        }
        let mut out = Vec::new();
        out.extend_from_slice(&(hashes as i32).to_be_bytes());
        out.extend_from_slice(&(words as i32).to_be_bytes());
        out.extend_from_slice(&bits);
        out
    }

    #[test]
    fn roundtrip_all_layouts() {
        let keys: Vec<Vec<u8>> = (0..50u32).map(|i| i.to_be_bytes().to_vec()).collect();
        let refs: Vec<&[u8]> = keys.iter().map(|k| k.as_slice()).collect();
        for v in ["ka", "mc", "nb", "oa"] {
            let b = BloomFilter::parse(&build(&refs, 16, 5, v), &feats(v)).unwrap();
            assert!(refs.iter().all(|k| b.may_contain(k)), "{v}");
            assert_eq!(b.bit_count(), 1024);
            assert!(b.bits_set() > 0 && b.bits_set() <= 250);
            let est = b.estimated_keys().unwrap();
            assert!((35.0..70.0).contains(&est), "{v}: {est}");
            let absent = (1000..1200u32)
                .filter(|i| b.may_contain(&i.to_be_bytes()))
                .count();
            assert!(absent < 20, "{v}: {absent} false positives");
            // The same bits read in the wrong layout reject some real keys.
            let other = if feats(v).old_bf_format { "nb" } else { "mc" };
            let wrong = BloomFilter::parse(&build(&refs, 16, 5, v), &feats(other)).unwrap();
            assert!(refs.iter().any(|k| !wrong.may_contain(k)), "{v}");
        }
    }

    #[test]
    fn java_remainder_and_abs() {
        let b = BloomFilter {
            hash_count: 3,
            bits: vec![0; 8],
            old_format: true,
            old_hash_order: false,
        };
        // All indexes fall in 0..64 whatever the sign of the hash.
        for k in 0..100u32 {
            assert!(b.indexes(&k.to_be_bytes()).iter().all(|&i| i < 64));
        }
    }

    #[test]
    fn empty_and_malformed() {
        let b = BloomFilter::parse(&[0, 0, 0, 5, 0, 0, 0, 0], &feats("nb")).unwrap();
        assert!(b.may_contain(b"anything"));
        assert_eq!(b.word_count(), 0);
        assert_eq!(b.false_positive_estimate(), 1.0);
        assert!(BloomFilter::parse(&[0, 0, 0, 5, 0, 0, 0, 2, 0], &feats("nb")).is_err());
        assert!(BloomFilter::parse(&[0xff, 0, 0, 5, 0, 0, 0, 0], &feats("nb")).is_err());
        assert!(BloomFilter::parse(&[0, 0, 0, 5, 0, 0, 0, 0, 1], &feats("nb")).is_err());
        assert!(BloomFilter::parse(&[0, 0, 0], &feats("nb")).is_err());
        // A huge hash count (found by cargo-fuzz): rejected, located.
        let mut b = vec![0x2a, 0, 0, 5, 0, 0, 0, 1];
        b.extend_from_slice(&[0x20; 8]);
        let e = BloomFilter::parse(&b, &feats("nb")).unwrap_err();
        assert_eq!((e.component, e.offset), (Some(Component::Filter), Some(0)));
        assert!(e.to_string().contains("hash count 704643077"), "{e}");
    }

    proptest! {
        #[test]
        fn random_input_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..100),
                                     key in proptest::collection::vec(any::<u8>(), 0..40)) {
            for v in ["ka", "nb"] {
                if let Ok(b) = BloomFilter::parse(&bytes, &feats(v)) {
                    let _ = b.may_contain(&key);
                    let _ = (b.estimated_keys(), b.false_positive_estimate());
                }
            }
        }
    }

    /// Every Filter.db in the corpus decodes, and every partition key of its
    /// Index.db is "may contain"; absent keys are mostly rejected.
    #[test]
    fn corpus_filter_files() {
        let files = corpus::files(|c| c == "Filter.db");
        if files.is_empty() {
            return;
        }
        let (mut row, mut other, mut keys_checked, mut corrupt_err) = (0, 0, 0u64, 0);
        let (mut probes, mut false_pos, mut quirks) = (0u64, 0u64, 0);
        let mut failures = Vec::new();
        let mut failed = std::collections::BTreeSet::new();
        for f in &files {
            let feats = f.features();
            let b = match BloomFilter::parse(&f.read(), &feats) {
                Ok(b) => b,
                Err(e) if f.is_corrupt() => {
                    eprintln!("expected error in corrupt set: {}: {e}", f.path.display());
                    corrupt_err += 1;
                    failed.insert(corpus::short_name(f));
                    continue;
                }
                Err(e) => {
                    failures.push(format!("{}: {e}", f.path.display()));
                    continue;
                }
            };
            if f.is_row_big() {
                row += 1;
            } else {
                other += 1;
            }
            let Some(index) = f.read_sibling("Index.db") else {
                continue;
            };
            let keys: Vec<&[u8]> = IndexReader::new(&index, feats)
                .entries()
                .map_while(|e| e.ok())
                .map(|e| e.key)
                .collect();
            keys_checked += keys.len() as u64;
            if let Some(k) = keys.iter().find(|k| !b.may_contain(k)) {
                // Known files written against their version's convention
                // (see `with_layout`): they must match the alternative layout.
                let name = f.set.rsplit('/').next().unwrap_or("");
                let quirky = name == "bloom-filter-la"
                    || (name.starts_with("legacy_na_") && name.ends_with("_compact"));
                let alt = b.clone().with_layout(true, false);
                if quirky && keys.iter().all(|k| alt.may_contain(k)) {
                    quirks += 1;
                } else {
                    failures.push(format!("{}: key {k:02x?} rejected", f.path.display()));
                }
            }
            if b.bit_count() >= 64 * 4 {
                for i in 0..200u32 {
                    probes += 1;
                    let k = format!("absent-key-{i}");
                    false_pos += b.may_contain(k.as_bytes()) as u64;
                }
            }
        }
        eprintln!(
            "Filter.db: {row} ma..oa + {other} other (ka/la, da) decoded, {corrupt_err} \
             corrupt-set errors, {keys_checked} index keys all present ({quirks} files only \
             with the old-layout/new-order quirk), {false_pos} of {probes} absent keys passed"
        );
        if quirks > 0 {
            assert_eq!(
                quirks, 5,
                "expected bloom-filter-la and four legacy_na_*_compact"
            );
        }
        assert!(failures.is_empty(), "{failures:#?}");
        // The files MANIFEST.md marks corrupt that this check must reject.
        corpus::check_failures("Filter.db", &files, &failed, &[]);
        assert!(false_pos * 2 < probes, "filters accept most absent keys");
    }
}
