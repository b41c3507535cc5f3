//! Index.db with promoted indexes, and Summary.db (`shared/docs/sstable-format.md`
//! §4, §5; C\* `o.a.c/io/sstable/format/SortedTablePartitionWriter.java`,
//! `.../big/RowIndexEntry.java`, `o.a.c/io/sstable/IndexInfo.java`,
//! `o.a.c/io/sstable/indexsummary/IndexSummaryBuilder.java`).

use crate::clustering::ClusteringPrefix;
use crate::cur::{uvint_size, write_uvint};
use crate::deletion::DeletionTime;
use crate::Features;

use super::rows::encode_prefix;

/// Builds one partition's promoted index while its unfiltereds are written:
/// a block closes once it spans `column_index_size` bytes. Only the encoded
/// IndexInfos are kept (one per block), never the rows.
#[derive(Debug, Default)]
pub struct PromotedIndex {
    column_index_size: u64,
    fixed: Vec<Option<usize>>,
    first: Vec<u8>,
    last: Vec<u8>,
    /// A block is open (`firstClustering != null`).
    open: bool,
    start: u64,
    open_marker: Option<DeletionTime>,
    written: u64,
    infos: Vec<u8>,
    offsets: Vec<u32>,
    /// Partition header length (key, deletion, static row).
    pub header_length: u64,
}

impl PromotedIndex {
    /// A builder for a table with these clustering fixed lengths.
    pub fn new(column_index_size: u64, fixed: Vec<Option<usize>>) -> PromotedIndex {
        PromotedIndex {
            column_index_size,
            fixed,
            ..Default::default()
        }
    }

    /// Start a new partition whose header (and static row) took `header_length` bytes.
    pub fn reset(&mut self, header_length: u64) {
        self.open = false;
        self.open_marker = None;
        self.written = 0;
        self.infos.clear();
        self.offsets.clear();
        self.header_length = header_length;
    }

    /// An unfiltered with this clustering was written at partition-relative
    /// `pos`, ending at `end`; `open_after` is the range deletion open after it.
    pub fn add(
        &mut self,
        clustering: &ClusteringPrefix<'_>,
        pos: u64,
        end: u64,
        open_after: Option<DeletionTime>,
        features: &Features,
    ) {
        if !self.open {
            self.first.clear();
            encode_prefix(&mut self.first, &self.fixed, clustering);
            self.start = pos;
            self.open = true;
        }
        self.last.clear();
        encode_prefix(&mut self.last, &self.fixed, clustering);
        self.written += 1;
        self.open_marker = open_after;
        if end - self.start >= self.column_index_size {
            self.add_block(end, features);
        }
    }

    fn add_block(&mut self, end: u64, features: &Features) {
        self.offsets.push(self.infos.len() as u32);
        let b = &mut self.infos;
        b.extend_from_slice(&self.first);
        b.extend_from_slice(&self.last);
        write_uvint(b, self.start);
        let width = (end - self.start) as i64 - 65536;
        write_uvint(b, ((width << 1) ^ (width >> 63)) as u64);
        match &self.open_marker {
            Some(d) => {
                b.push(1);
                d.encode(features, b);
            }
            None => b.push(0),
        }
        self.open = false;
    }

    /// The partition ended at relative `end` (after END_OF_PARTITION).
    /// Appends the Index.db entry for `key` at Data.db `position`.
    pub fn finish_entry(
        &mut self,
        out: &mut Vec<u8>,
        key: &[u8],
        position: u64,
        deletion: &DeletionTime,
        end: u64,
        features: &Features,
    ) {
        if self.written > 0 && self.open {
            self.add_block(end, features);
        }
        out.extend_from_slice(&(key.len() as u16).to_be_bytes());
        out.extend_from_slice(key);
        write_uvint(out, position);
        let blocks = self.offsets.len();
        if blocks <= 1 {
            write_uvint(out, 0);
            return;
        }
        let size = uvint_size(self.header_length)
            + deletion.serialized_size(features)
            + uvint_size(blocks as u64)
            + self.infos.len()
            + 4 * blocks;
        write_uvint(out, size as u64);
        write_uvint(out, self.header_length);
        deletion.encode(features, out);
        write_uvint(out, blocks as u64);
        out.extend_from_slice(&self.infos);
        for o in &self.offsets {
            out.extend_from_slice(&o.to_be_bytes());
        }
    }
}

/// Summary.db: every `min_index_interval`-th Index.db entry (sampling level
/// 128, i.e. full sampling).
#[derive(Debug)]
pub struct SummaryBuilder {
    min_index_interval: u32,
    keys: u64,
    entries: Vec<(Vec<u8>, u64)>,
    first: Option<Vec<u8>>,
    last: Vec<u8>,
}

impl SummaryBuilder {
    /// A builder sampling every `min_index_interval` keys (C\* default 128).
    pub fn new(min_index_interval: u32) -> SummaryBuilder {
        SummaryBuilder {
            min_index_interval: min_index_interval.max(1),
            keys: 0,
            entries: Vec::new(),
            first: None,
            last: Vec::new(),
        }
    }

    /// The Index.db entry of `key` starts at `index_position`.
    pub fn add(&mut self, key: &[u8], index_position: u64) {
        if self.keys.is_multiple_of(self.min_index_interval as u64) {
            self.entries.push((key.to_vec(), index_position));
        }
        if self.first.is_none() {
            self.first = Some(key.to_vec());
        }
        self.last.clear();
        self.last.extend_from_slice(key);
        self.keys += 1;
    }

    /// `IndexSummarySerializer.serialize`.
    pub fn serialize(&self) -> Vec<u8> {
        let n = self.entries.len();
        let offsets_len = 4 * n;
        let entries_len: usize = self.entries.iter().map(|(k, _)| k.len() + 8).sum();
        let full = self.keys.div_ceil(self.min_index_interval as u64);
        let mut out = Vec::with_capacity(24 + offsets_len + entries_len + 64);
        out.extend_from_slice(&(self.min_index_interval as i32).to_be_bytes());
        out.extend_from_slice(&(n as i32).to_be_bytes());
        out.extend_from_slice(&((offsets_len + entries_len) as i64).to_be_bytes());
        out.extend_from_slice(&128i32.to_be_bytes());
        out.extend_from_slice(&(full as i32).to_be_bytes());
        let mut off = offsets_len;
        for (k, _) in &self.entries {
            out.extend_from_slice(&(off as u32).to_le_bytes());
            off += k.len() + 8;
        }
        for (k, p) in &self.entries {
            out.extend_from_slice(k);
            out.extend_from_slice(&p.to_le_bytes());
        }
        for k in [self.first.as_deref().unwrap_or(&[]), &self.last] {
            out.extend_from_slice(&(k.len() as i32).to_be_bytes());
            out.extend_from_slice(k);
        }
        out
    }
}
