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

use super::{IoLayer, ReadKind};
use crate::component::Component;
use crate::error::{Error, ErrorKind, Result};

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

impl IoLayer {
    /// True when the index cache keeps pages across operations.
    pub fn cache_enabled(&self) -> bool {
        self.opts.index_cache_bytes > 0
    }

    fn cache_get(&self, k: &CacheKey) -> Option<CacheValue> {
        if self.cache_enabled() {
            let v = self.cache.borrow_mut().get(k);
            let mut st = self.stats.borrow_mut();
            let s = st.get_mut(k.component());
            if v.is_some() {
                s.cache_hits += 1;
            } else {
                s.cache_misses += 1;
            }
            v
        } else {
            self.scratch.borrow_mut().get(k)
        }
    }

    fn cache_put(&self, k: CacheKey, v: CacheValue, size: u64) {
        if self.cache_enabled() {
            let evicted = self.cache.borrow_mut().put(k, v, size);
            let mut st = self.stats.borrow_mut();
            for e in evicted {
                st.get_mut(e.component()).cache_evictions += 1;
            }
        } else {
            self.scratch.borrow_mut().put(k, v, size);
        }
    }

    /// Read `len` bytes at `off` of `c` through the index cache: pages of
    /// `unit` bytes, each a hit or a miss; runs of missing pages are read
    /// together (aligned, split at `max_io`) and cached.
    pub fn read_cached(&self, c: Component, off: u64, len: usize) -> Result<Vec<u8>> {
        let of = self.file(c)?;
        let mut out = self.check_range(c, &of, off, len)?;
        if len == 0 {
            return Ok(out);
        }
        let u = self.opts.unit;
        let (p0, p1) = (off / u, (off + len as u64 - 1) / u);
        let n = (p1 - p0 + 1) as usize;
        let mut pages: Vec<Option<Rc<[u8]>>> = Vec::with_capacity(n);
        for p in p0..=p1 {
            pages.push(match self.cache_get(&CacheKey::Page(c, p)) {
                Some(CacheValue::Page(b)) => Some(b),
                _ => None,
            });
        }
        let mut i = 0;
        while i < n {
            if pages[i].is_some() {
                i += 1;
                continue;
            }
            let mut j = i;
            while j < n && pages[j].is_none() {
                j += 1;
            }
            let start = (p0 + i as u64) * u;
            let end = ((p0 + j as u64) * u).min(of.len);
            let bytes = self.issue(c, &of, start, end, ReadKind::Point)?;
            for (k, chunk) in bytes.chunks(u as usize).enumerate() {
                let page: Rc<[u8]> = Rc::from(chunk);
                let key = CacheKey::Page(c, p0 + (i + k) as u64);
                self.cache_put(key, CacheValue::Page(Rc::clone(&page)), chunk.len() as u64);
                pages[i + k] = Some(page);
            }
            i = j;
        }
        let end = off + len as u64;
        for (k, page) in pages.iter().enumerate() {
            let ps = (p0 + k as u64) * u;
            let page = page.as_deref().unwrap_or(&[]);
            let s = off.max(ps) - ps;
            let e = (end.min(ps + page.len() as u64)).saturating_sub(ps);
            if s < e {
                out.extend_from_slice(&page[s as usize..e as usize]);
            }
        }
        if out.len() != len {
            let e = Error::at(
                ErrorKind::UnexpectedEof {
                    need: len as u64,
                    have: out.len() as u64,
                },
                c,
                off,
                "cached component read",
            );
            return Err(self.locate(c, e, None));
        }
        Ok(out)
    }

    /// A parsed object kept in the index cache under `(ns, a, b)` (e.g. a
    /// promoted-index block: its promoted index's Index.db offset and
    /// number). Counts a hit or a miss on component `c`.
    pub(crate) fn cached_object<T: Any>(
        &self,
        c: Component,
        ns: u8,
        a: u64,
        b: u64,
    ) -> Option<Rc<T>> {
        match self.cache_get(&CacheKey::Object(c, ns, a, b)) {
            Some(CacheValue::Object(o)) => o.downcast::<T>().ok(),
            _ => None,
        }
    }

    /// Keep a parsed object of about `size` bytes in the index cache
    /// (accounted on component `c`).
    pub(crate) fn cache_object<T: Any>(
        &self,
        c: Component,
        ns: u8,
        a: u64,
        b: u64,
        v: Rc<T>,
        size: u64,
    ) {
        self.cache_put(CacheKey::Object(c, ns, a, b), CacheValue::Object(v), size);
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
