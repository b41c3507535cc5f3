//! The bloom filter of written sstables: [`super::filter::FilterBuilder`]
//! (C\*'s `BloomCalculations` sizing, the version's layout and hash order)
//! behind the writer's [`KeyFilter`], sized for the source's partitions.

use crate::component::Component;
use crate::sstable::Sstable;
use crate::statistics::Statistics;
use crate::Features;

use super::filter::FilterBuilder;
use super::KeyFilter;

impl KeyFilter for FilterBuilder {
    fn add(&mut self, key: &[u8]) {
        FilterBuilder::add(self, key)
    }

    fn serialize(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.serialized_size() as usize);
        // Writing into a Vec cannot fail.
        let _ = self.write_to(&mut v);
        v
    }
}

/// The number of partitions Statistics.db counts (the partition-size
/// histogram's total), capped by [`partition_bound`]: what a filter for a
/// rewrite of `sst` is sized for, so a damaged histogram cannot size it.
pub fn expected_keys(sst: &Sstable, st: &Statistics) -> u64 {
    counted_keys(st).min(partition_bound(sst))
}

/// The partition-size histogram's total.
fn counted_keys(st: &Statistics) -> u64 {
    st.stats
        .as_ref()
        .map(|s| {
            s.estimated_partition_size
                .pairs
                .iter()
                .fold(0u64, |n, p| n.saturating_add(p.1.max(0) as u64))
        })
        .unwrap_or(0)
}

/// The fewest bytes a partition takes in Data.db (a 2-byte key length, a
/// 1-byte `oa` live deletion time, the 1-byte end of partition) and in a
/// BIG Index.db entry (the key length and two 1-byte vints).
const MIN_PARTITION_BYTES: u64 = 4;

/// The most partitions `sst`'s files can hold: its uncompressed Data.db
/// length over the fewest bytes a partition takes (4), and no more than its partition index
/// has room for (a BTI trie spends at least a byte per key).
pub fn partition_bound(sst: &Sstable) -> u64 {
    let len = |c: Component| sst.io.len(c).ok();
    let data = match sst.compression_info() {
        Ok(ci) => ci
            .data_length
            .min(ci.chunk_count() as u64 * u64::from(ci.chunk_length)),
        Err(_) => len(Component::Data).unwrap_or(0),
    };
    let mut bound = data / MIN_PARTITION_BYTES;
    if let Some(n) = len(Component::Index) {
        bound = bound.min(n / MIN_PARTITION_BYTES);
    }
    if let Some(n) = len(Component::Partitions) {
        bound = bound.min(n);
    }
    bound
}

/// The filter a new sstable of `features` gets: sized for `keys` keys at
/// chance `fp`; none when `fp >= 1` (as C\*) or the chance is out of range.
pub fn filter_for(keys: u64, fp: f64, features: &Features) -> Option<Box<dyn KeyFilter>> {
    FilterBuilder::new(keys, fp, features)
        .ok()
        .filter(|b| b.writes_file())
        .map(|b| Box::new(b) as Box<dyn KeyFilter>)
}
