//! The index cache: an LRU over Index.db pages and parsed promoted-index
//! blocks, bounded in bytes.
//!
//! Entries are either pages of a component (`unit` bytes, the last one
//! shorter) or parsed objects (e.g. promoted-index blocks keyed by the
//! promoted index's Index.db offset and the block number) whose size the
//! caller estimates. A capacity of 0 disables the cache: nothing is kept
//! across operations (the IO layer keeps pages and blocks for the duration of
//! one operation only, see [`super::IoLayer::begin_operation`]).

use std::any::Any;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

use crate::component::Component;

/// What a cache entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum CacheKey {
    /// Page `n` (bytes `n × unit ..`) of a component.
    Page(Component, u64),
    /// A parsed object: (component accounted, namespace, offset, number),
    /// e.g. a promoted-index block (Index.db, its promoted index's offset,
    /// the block number).
    Object(Component, u8, u64, u64),
}

impl CacheKey {
    /// The component whose counters account for this entry.
    pub(crate) fn component(&self) -> Component {
        match self {
            CacheKey::Page(c, _) => *c,
            CacheKey::Object(c, ..) => *c,
        }
    }
}

/// A cached value.
#[derive(Clone)]
pub(crate) enum CacheValue {
    /// Page bytes.
    Page(Rc<[u8]>),
    /// A parsed object.
    Object(Rc<dyn Any>),
}

struct Entry {
    value: CacheValue,
    size: u64,
    tick: u64,
}

/// Fixed per-entry overhead added to the size estimate (map and LRU nodes).
const ENTRY_OVERHEAD: u64 = 64;

/// A byte-bounded LRU map.
pub(crate) struct Lru {
    cap: u64,
    used: u64,
    tick: u64,
    map: HashMap<CacheKey, Entry>,
    order: BTreeMap<u64, CacheKey>,
}

impl std::fmt::Debug for Lru {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lru")
            .field("cap", &self.cap)
            .field("used", &self.used)
            .field("entries", &self.map.len())
            .finish()
    }
}

impl Lru {
    /// An LRU holding at most `cap` bytes (0: unbounded, used for the
    /// per-operation scratch when the cache is disabled).
    pub(crate) fn new(cap: u64) -> Lru {
        Lru {
            cap,
            used: 0,
            tick: 0,
            map: HashMap::new(),
            order: BTreeMap::new(),
        }
    }

    /// Look up and mark as most recently used.
    pub(crate) fn get(&mut self, k: &CacheKey) -> Option<CacheValue> {
        self.tick += 1;
        let tick = self.tick;
        let e = self.map.get_mut(k)?;
        self.order.remove(&e.tick);
        e.tick = tick;
        self.order.insert(tick, *k);
        Some(e.value.clone())
    }

    /// Insert (or replace); returns the keys evicted to make room. An entry
    /// larger than the whole capacity is not kept.
    pub(crate) fn put(&mut self, k: CacheKey, value: CacheValue, size: u64) -> Vec<CacheKey> {
        let size = size + ENTRY_OVERHEAD;
        if let Some(old) = self.map.remove(&k) {
            self.order.remove(&old.tick);
            self.used -= old.size;
        }
        let mut evicted = Vec::new();
        if self.cap > 0 && size > self.cap {
            return evicted;
        }
        while self.cap > 0 && self.used + size > self.cap {
            let Some((&t, &victim)) = self.order.iter().next() else {
                break;
            };
            self.order.remove(&t);
            if let Some(e) = self.map.remove(&victim) {
                self.used -= e.size;
            }
            evicted.push(victim);
        }
        self.tick += 1;
        self.order.insert(self.tick, k);
        self.map.insert(
            k,
            Entry {
                value,
                size,
                tick: self.tick,
            },
        );
        self.used += size;
        evicted
    }

    /// Drop everything.
    pub(crate) fn clear(&mut self) {
        self.map.clear();
        self.order.clear();
        self.used = 0;
    }

    /// Bytes accounted for.
    #[cfg(test)]
    pub(crate) fn used(&self) -> u64 {
        self.used
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn page(n: u64) -> CacheKey {
        CacheKey::Page(Component::Index, n)
    }

    fn val() -> CacheValue {
        CacheValue::Page(Rc::from(vec![0u8; 10]))
    }

    #[test]
    fn evicts_least_recently_used() {
        let mut l = Lru::new(3 * (100 + ENTRY_OVERHEAD));
        for n in 0..3 {
            assert!(l.put(page(n), val(), 100).is_empty());
        }
        // Touch 0: 1 is now the oldest.
        assert!(l.get(&page(0)).is_some());
        assert_eq!(l.put(page(3), val(), 100), vec![page(1)]);
        assert!(l.get(&page(1)).is_none());
        assert!(l.get(&page(0)).is_some());
        assert_eq!(l.used(), 3 * (100 + ENTRY_OVERHEAD));
        // Too large for the cache: not kept, nothing evicted.
        assert!(l.put(page(9), val(), 10_000).is_empty());
        assert!(l.get(&page(9)).is_none());
        // Replacing an entry does not double count.
        l.put(page(0), val(), 100);
        assert_eq!(l.used(), 3 * (100 + ENTRY_OVERHEAD));
        l.clear();
        assert_eq!(l.used(), 0);
    }

    #[test]
    fn unbounded_scratch() {
        let mut l = Lru::new(0);
        for n in 0..100 {
            assert!(l.put(page(n), val(), 1 << 20).is_empty());
        }
        assert!(l.get(&page(0)).is_some());
    }
}
