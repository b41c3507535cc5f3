//! IO counters, per component.

use crate::component::Component;
use crate::io::ReadKind;

/// Counters for one component.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ComponentIo {
    /// Read calls issued to the OS (or mapped-memory accesses).
    pub reads: u64,
    /// Bytes read from the file.
    pub bytes: u64,
    /// Compressed chunks decompressed (Data.db).
    pub chunks_decompressed: u64,
    /// Compressed bytes fed to the decompressor.
    pub compressed_bytes: u64,
    /// Uncompressed bytes produced.
    pub uncompressed_bytes: u64,
    /// Cache hits.
    pub cache_hits: u64,
    /// Cache misses.
    pub cache_misses: u64,
    /// Cache evictions.
    pub cache_evictions: u64,
    /// Time spent in the physical reads (microseconds, wall clock; for
    /// object storage the GETs' latency).
    pub latency_us: u64,
}

impl std::ops::AddAssign for ComponentIo {
    fn add_assign(&mut self, o: Self) {
        self.reads += o.reads;
        self.bytes += o.bytes;
        self.chunks_decompressed += o.chunks_decompressed;
        self.compressed_bytes += o.compressed_bytes;
        self.uncompressed_bytes += o.uncompressed_bytes;
        self.cache_hits += o.cache_hits;
        self.cache_misses += o.cache_misses;
        self.cache_evictions += o.cache_evictions;
        self.latency_us += o.latency_us;
    }
}

/// Counters for every component of one sstable (or summed over several).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IoStats {
    per: [ComponentIo; Component::ALL.len()],
}

impl IoStats {
    /// Record one read.
    pub fn record_read(&mut self, c: Component, bytes: u64, _kind: ReadKind) {
        let s = &mut self.per[c.ordinal()];
        s.reads += 1;
        s.bytes += bytes;
    }

    /// Add the wall time of physical reads of `c`.
    pub fn record_latency(&mut self, c: Component, d: std::time::Duration) {
        let us = u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        let s = &mut self.per[c.ordinal()];
        s.latency_us = s.latency_us.saturating_add(us);
    }

    /// Counters of one component.
    pub fn get(&self, c: Component) -> &ComponentIo {
        &self.per[c.ordinal()]
    }

    /// Mutable counters of one component.
    pub fn get_mut(&mut self, c: Component) -> &mut ComponentIo {
        &mut self.per[c.ordinal()]
    }

    /// Components with any activity, in [`Component::ALL`] order.
    pub fn active(&self) -> impl Iterator<Item = (Component, &ComponentIo)> {
        Component::ALL
            .iter()
            .map(|c| (*c, &self.per[c.ordinal()]))
            .filter(|(_, s)| **s != ComponentIo::default())
    }

    /// Sum over all components.
    pub fn total(&self) -> ComponentIo {
        let mut t = ComponentIo::default();
        for s in &self.per {
            t += *s;
        }
        t
    }
}

impl std::ops::AddAssign<&IoStats> for IoStats {
    fn add_assign(&mut self, o: &IoStats) {
        for (a, b) in self.per.iter_mut().zip(o.per.iter()) {
            *a += *b;
        }
    }
}

impl ComponentIo {
    /// `self - before`, counter by counter (saturating).
    pub fn since(&self, before: &ComponentIo) -> ComponentIo {
        ComponentIo {
            reads: self.reads.saturating_sub(before.reads),
            bytes: self.bytes.saturating_sub(before.bytes),
            chunks_decompressed: self
                .chunks_decompressed
                .saturating_sub(before.chunks_decompressed),
            compressed_bytes: self
                .compressed_bytes
                .saturating_sub(before.compressed_bytes),
            uncompressed_bytes: self
                .uncompressed_bytes
                .saturating_sub(before.uncompressed_bytes),
            cache_hits: self.cache_hits.saturating_sub(before.cache_hits),
            cache_misses: self.cache_misses.saturating_sub(before.cache_misses),
            cache_evictions: self.cache_evictions.saturating_sub(before.cache_evictions),
            latency_us: self.latency_us.saturating_sub(before.latency_us),
        }
    }
}

impl IoStats {
    /// What happened since the snapshot `before` (per-operation stats).
    pub fn since(&self, before: &IoStats) -> IoStats {
        let mut out = IoStats::default();
        for (i, (a, b)) in self.per.iter().zip(before.per.iter()).enumerate() {
            out.per[i] = a.since(b);
        }
        out
    }
}
