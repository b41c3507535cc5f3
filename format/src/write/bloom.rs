//! The bloom filter of written sstables: [`super::filter::FilterBuilder`]
//! (C\*'s `BloomCalculations` sizing, the version's layout and hash order)
//! behind the writer's [`KeyFilter`], sized for the source's partitions.

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
/// chance `fp`; none when `fp >= 1` (as C\*) or the chance is out of range.
pub fn filter_for(keys: u64, fp: f64, features: &Features) -> Option<Box<dyn KeyFilter>> {
    FilterBuilder::new(keys, fp, features)
        .ok()
        .filter(|b| b.writes_file())
        .map(|b| Box::new(b) as Box<dyn KeyFilter>)
}
